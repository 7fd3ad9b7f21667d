"""Peak resident memory of a local Spark application, sampled from ``/proc``.

Used by ``benchmarks/ladder.py`` and ``benchmarks/skew.py``; Linux only::

    from benchmarks.memory import PeakRSSSampler

    with PeakRSSSampler() as mem:
        ...  # Spark work in this process's session
    print(mem.result())

A background thread reads ``/proc`` every ``interval`` seconds (0.5 by default) and
keeps, over the sampled window:

* ``driver_jvm_peak_mb``: the resident set of the driver JVM, the ``java`` process whose
  parent is this Python process (how PySpark launches it; in ``local[N]`` mode it also
  runs the executor);
* ``python_workers_sum_peak_mb``: the largest sum, at one sample, over the PySpark Python
  workers, the processes whose command line contains ``pyspark.daemon`` or
  ``pyspark.worker`` and that descend from that JVM (workers of other Spark applications
  on the same machine are not counted);
* ``python_workers_max_peak_mb``: the largest resident set of one worker;
* ``python_workers_max_count``: the most workers alive at one sample;
* ``driver_python_peak_mb``: the resident set of this Python process.

Resident sets count shared pages in full: forked workers share the daemon's pages
(copy-on-write), so the sum over workers is an upper bound of the memory they use
together. Peaks shorter than the sampling interval can be missed.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

__all__ = ["PeakRSSSampler", "process_table", "rss_mb", "driver_jvm_pids"]

_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4096 / 2**20
_WORKER_MARKERS = (b"pyspark.daemon", b"pyspark.worker")


def process_table() -> dict[int, tuple[int, str, bytes]]:
    """Every process visible in ``/proc``: ``pid -> (parent pid, name, command line)``.

    Returns
    -------
    dict
        The name is the ``comm`` field of ``/proc/PID/stat``; the command line keeps its
        NUL separators. Processes that end while being read are left out.
    """
    table: dict[int, tuple[int, str, bytes]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        close = stat.rfind(b")")
        name = stat[stat.find(b"(") + 1:close].decode(errors="replace")
        fields = stat[close + 2:].split()
        table[pid] = (int(fields[1]), name, cmdline)
    return table


def rss_mb(pid: int) -> float | None:
    """Current resident set size of ``pid`` in MiB (``None`` when it has ended).

    Parameters
    ----------
    pid : int
        Process id.
    """
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE_MB
    except (OSError, IndexError, ValueError):
        return None


def driver_jvm_pids(table: dict[int, tuple[int, str, bytes]], parent: int | None = None) -> list[int]:
    """The ``java`` processes whose parent is ``parent`` (default: this process).

    Parameters
    ----------
    table : dict
        As returned by :func:`process_table`.
    parent : int, optional
        Parent process id; ``os.getpid()`` when omitted.
    """
    parent = os.getpid() if parent is None else parent
    return [pid for pid, (ppid, name, cmd) in table.items()
            if ppid == parent and (name == "java" or cmd.split(b"\0", 1)[0].endswith(b"/java"))]


def _descendants(table: dict[int, tuple[int, str, bytes]], roots: list[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        for child in children.get(pid, ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


class PeakRSSSampler:
    """Sample the driver JVM's and the Python workers' resident memory in a thread.

    Parameters
    ----------
    interval : float, default 0.5
        Seconds between samples.

    Notes
    -----
    Use it as a context manager, or call :meth:`start` and :meth:`stop`; :meth:`result`
    gives the peaks (MiB) over the window sampled. The JVM must already be running
    (a SparkSession created) when sampling starts, or be started within the window.
    """

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = float(interval)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._peaks: dict[str, float] = {}
        self.samples = 0
        self.started: float | None = None
        self.elapsed: float | None = None

    def _bump(self, key: str, value: float) -> None:
        if value > self._peaks.get(key, 0.0):
            self._peaks[key] = value

    def sample(self) -> None:
        """Take one sample now (the thread calls this every ``interval`` seconds)."""
        table = process_table()
        jvms = driver_jvm_pids(table)
        jvm_rss = sum(r for r in (rss_mb(p) for p in jvms) if r is not None)
        workers = [pid for pid in _descendants(table, jvms)
                   if any(m in table[pid][2] for m in _WORKER_MARKERS)]
        worker_rss = [r for r in (rss_mb(p) for p in workers) if r is not None]
        me = rss_mb(os.getpid()) or 0.0
        with self._lock:
            self.samples += 1
            self._bump("driver_jvm_peak_mb", jvm_rss)
            self._bump("python_workers_sum_peak_mb", sum(worker_rss))
            self._bump("python_workers_max_peak_mb", max(worker_rss, default=0.0))
            self._bump("python_workers_max_count", float(len(worker_rss)))
            self._bump("driver_python_peak_mb", me)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.sample()
            except Exception:  # noqa: BLE001 - a racing /proc read must not end sampling
                pass
            self._stop.wait(self.interval)

    def start(self) -> "PeakRSSSampler":
        """Start sampling in a daemon thread; returns ``self``."""
        self._stop.clear()
        self.started = time.time()
        self._thread = threading.Thread(target=self._run, name="peak-rss-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> dict[str, Any]:
        """Take a last sample, stop the thread and return :meth:`result`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        try:
            self.sample()
        except Exception:  # noqa: BLE001
            pass
        if self.started is not None:
            self.elapsed = time.time() - self.started
        return self.result()

    def result(self) -> dict[str, Any]:
        """Peaks so far: MiB values rounded to 0.1, the worker count and the sample count.

        Returns
        -------
        dict
            ``driver_jvm_peak_mb``, ``python_workers_sum_peak_mb``,
            ``python_workers_max_peak_mb``, ``python_workers_max_count``,
            ``driver_python_peak_mb``, ``samples`` and ``interval_s``.
        """
        with self._lock:
            keys = ("driver_jvm_peak_mb", "python_workers_sum_peak_mb", "python_workers_max_peak_mb",
                    "driver_python_peak_mb")
            out: dict[str, Any] = {k: round(self._peaks.get(k, 0.0), 1) for k in keys}
            out["python_workers_max_count"] = int(self._peaks.get("python_workers_max_count", 0))
            out["samples"] = self.samples
            out["interval_s"] = self.interval
        return out

    def __enter__(self) -> "PeakRSSSampler":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
