"""Visible progress: what each SepNE stage did, how long it took, and where it shows.

:func:`stage` wraps one stage of the pipeline. While it runs, every Spark job started
from it carries the job description ``SepNE <stage>: <detail>`` (through ``spark.conf``,
in classic sessions and under Spark Connect alike), so the Spark UI's job list says
which SepNE stage a job belongs to and what it works on (the solve stage's description
gives how the nodes were split into sets and their size; its task count follows the
shuffle partitions, not the sets). Under Spark Connect the stage's operations also
carry the tag ``sepne-<stage>`` (the stage name as it is, e.g. ``sepne-solve_write``;
``spark.interruptTag("sepne-solve_write")`` cancels them). Classic sessions get no tag:
in PySpark 4.1 a session that has ever had a tag added leaves pyspark.ml's later
training summaries unable to run (``NotSerializableException`` of the session's
tag state), so tagging the user's session would break their next model. A stage logs one
line when it starts and one when it ends (its counts and the time taken), and while it
runs one line every :data:`HEARTBEAT_S` seconds saying how long it has been running.

The lines go to the ``sepne_spark`` logger. So that they are seen without any logging
set-up, a handler to stderr at INFO is added to that logger while the root logger has
none (see :func:`ensure_default_handler`); it steps aside as soon as the application
configures logging itself. :func:`set_verbosity` (or ``$SEPNE_LOG_LEVEL``) changes the
level: ``set_verbosity("WARNING")`` keeps only warnings.

Inside the solve stage each Python worker reports finished sets on its stderr (the
executor log) at most every :data:`REPORT_EVERY_S` seconds; see :class:`SolveProgress`.
A stage that runs in one task (a graph of up to 100,000 nodes: solve, refinement,
filter and averaging in one worker) reports each of its steps there as it ends; see
:class:`TaskProgress`.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

from sepne_spark.errors import JobStopped, SettingError

log = logging.getLogger("sepne_spark.progress")

DESCRIPTION_KEY = "spark.job.description"
REPORT_EVERY_S = 10.0
#: Seconds between the "still running" lines of a long stage (``$SEPNE_HEARTBEAT_S``;
#: 0 turns them off).
HEARTBEAT_S = 30.0
LEVEL_ENV = "SEPNE_LOG_LEVEL"

_LIBRARY = "sepne_spark"


def level_from_env(default: int = logging.INFO) -> int:
    """The level named by ``$SEPNE_LOG_LEVEL`` (a name such as ``DEBUG`` or a number), else ``default``."""
    text = os.environ.get(LEVEL_ENV, "").strip()
    if not text:
        return default
    if text.isdigit():
        return int(text)
    level = logging.getLevelName(text.upper())
    return level if isinstance(level, int) else default


class _DefaultHandler(logging.StreamHandler):
    """stderr at INFO for the ``sepne_spark`` logger while the application configured no
    logging; it removes itself once the root logger has a handler (the records then go
    there, as the application set up)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:
            remove_default_handler()
            return
        self.stream = sys.stderr  # follow a replaced sys.stderr (notebooks, capture)
        super().emit(record)


def ensure_default_handler() -> None:
    """Add the default stderr handler to the ``sepne_spark`` logger if nobody configured
    logging: the root logger and the ``sepne_spark`` logger have no handler and the
    latter no level of its own. Called on import of the package and by every stage.

    Once the application has configured logging, it removes the default handler and its
    level here, before the stage's first line: removed only when a record reaches it,
    that record would also pass the default's level to the application's handlers.
    """
    logger = logging.getLogger(_LIBRARY)
    if logging.getLogger().handlers:
        remove_default_handler()
        return
    if logger.handlers or logger.level != logging.NOTSET:
        return
    logger.addHandler(_DefaultHandler())
    logger.setLevel(level_from_env())
    logger._sepne_default_level = logger.level  # type: ignore[attr-defined]


def remove_default_handler() -> None:
    """Remove the default handler (and the level it set, unless changed since)."""
    logger = logging.getLogger(_LIBRARY)
    for handler in [h for h in logger.handlers if isinstance(h, _DefaultHandler)]:
        logger.removeHandler(handler)
        if getattr(logger, "_sepne_default_level", None) == logger.level:
            logger.setLevel(logging.NOTSET)
        logger._sepne_default_level = None  # type: ignore[attr-defined]


def set_verbosity(level: int | str) -> None:
    """Set the level of the library's messages: ``"INFO"`` (stage start and end lines,
    the default), ``"DEBUG"``, ``"WARNING"`` (warnings only) or a :mod:`logging` level.

    Also makes sure they are shown when the application has not configured logging.
    The level is the caller's choice: it stays when the application configures logging
    later (which removes the default handler and, otherwise, the default level).
    """
    if isinstance(level, str):
        value = logging.getLevelName(level.upper())
        if not isinstance(value, int):
            raise SettingError(f"unknown logging level {level!r}")
        level = value
    ensure_default_handler()
    logger = logging.getLogger(_LIBRARY)
    logger.setLevel(level)
    logger._sepne_default_level = None  # type: ignore[attr-defined]


def _heartbeat_interval() -> float:
    try:
        return float(os.environ.get("SEPNE_HEARTBEAT_S", HEARTBEAT_S))
    except ValueError:
        return HEARTBEAT_S


class _Heartbeat(threading.Thread):
    """Logs "still running" every ``every`` seconds until stopped (elapsed time only:
    library code asks Spark nothing, so it works on any session)."""

    def __init__(self, text: str, started: float, every: float) -> None:
        super().__init__(name=f"sepne-heartbeat {text}", daemon=True)
        self.text, self.started, self.every = text, started, every
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.every):
            log.info("%s: still running, %.0f s", self.text, time.time() - self.started)


class Stage:
    """A running stage: add counts with :meth:`count`; ``elapsed`` when it ended."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: dict[str, Any] = {}
        self.started = time.time()
        self.elapsed: float | None = None

    def count(self, **counts: Any) -> None:
        """Record counts (rows, nodes, sets ...) to log when the stage ends."""
        self.counts.update(counts)


def _set_description(spark: Any, text: str | None) -> None:
    try:
        if text is None:
            spark.conf.unset(DESCRIPTION_KEY)
        else:
            spark.conf.set(DESCRIPTION_KEY, text)
    except Exception:  # noqa: BLE001 - a session that forbids it still runs the stage
        log.debug("could not set the Spark job description", exc_info=True)


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _tag(spark: Any, add: bool, tag: str) -> None:
    try:
        (spark.addTag if add else spark.removeTag)(tag)
    except Exception:  # noqa: BLE001 - job tags are a convenience
        log.debug("could not %s Spark job tag %s", "add" if add else "remove", tag, exc_info=True)


@contextmanager
def stage(spark: Any, name: str, detail: str = "", timings: dict[str, float] | None = None) -> Iterator[Stage]:
    """Run a block as the SepNE stage ``name``.

    Parameters
    ----------
    spark: the session the stage's jobs run in (classic or Spark Connect).
    name: short stage name (``landmarks``, ``summaries_svd``, ``partition``, ``solve_write`` ...).
    detail: what the stage works on, shown in the Spark UI's job description.
    timings: if given, ``timings[name]`` receives the seconds taken.
    """
    current = Stage(name)
    try:
        previous = spark.conf.get(DESCRIPTION_KEY, None)
    except Exception:  # noqa: BLE001
        previous = None
    text = f"SepNE {name}" + (f": {detail}" if detail else "")
    _set_description(spark, text)
    tag = "sepne-" + "".join(c if c.isalnum() or c in "_-" else "-" for c in name) if is_connect(spark) else None
    if tag:
        _tag(spark, True, tag)
    ensure_default_handler()
    log.info("%s ...", text)
    every = _heartbeat_interval()
    beat = _Heartbeat(f"SepNE {name}", current.started, every) if every > 0 else None
    if beat is not None:
        beat.start()
    ended = "failed"
    try:
        yield current
        ended = ""
    except (KeyboardInterrupt, JobStopped):
        ended = "stopped"
        raise
    finally:
        if beat is not None:
            beat.done.set()
            beat.join(timeout=5.0)  # no "still running" line after the stage's end
        current.elapsed = time.time() - current.started
        if tag:
            _tag(spark, False, tag)
        _set_description(spark, previous)
        if timings is not None:
            timings[name] = current.elapsed
        shown = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in current.counts.items())
        if ended:
            (log.warning if ended == "failed" else log.info)("SepNE %s %s after %.1f s", name, ended, current.elapsed)
        else:
            log.info("SepNE %s done in %.1f s%s", name, current.elapsed, f" ({shown})" if shown else "")


class StepProgress:
    """One progress line per step of a driver-side sequence of Spark jobs, as each ends:
    ``"{what} 3 of 13 done, {label}, 412 s"``, the seconds counted from the counter's
    creation. ``first_note`` is added to the first line (whose time includes computing
    the sequence's input, which Spark does lazily)."""

    def __init__(self, what: str, total: int, first_note: str = "") -> None:
        self.what, self.total, self.first_note = what, total, first_note
        self.count, self.started = 0, time.time()

    def __call__(self, label: str) -> None:
        self.count += 1
        note = f" ({self.first_note})" if self.count == 1 and self.first_note else ""
        log.info("%s %d of %d done, %s%s, %.0f s", self.what, self.count, self.total, label, note,
                 time.time() - self.started)


def _worker_line(text: str) -> None:
    """``text`` on the worker's stderr, after the time of day as the driver's log lines
    give it (``HH:MM:SS``), so that the executor log and the driver's can be read side
    by side."""
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


class TaskProgress:
    """Progress of a stage that runs in one task, inside its Python worker process.

    Prints to the worker's stderr (the executor log, or the console in local mode) one
    line per step as it ends, ``HH:MM:SS sepne <stage> [worker PID]: <step> in <seconds> s``,
    the seconds since the previous step ended (or since the counter was made): the
    driver's heartbeat says only that the stage still runs, this says how far it is.
    """

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.last = time.perf_counter()

    def step(self, what: str) -> None:
        """Report the step ``what``, which has just ended."""
        now = time.perf_counter()
        _worker_line(f"sepne {self.stage} [worker {os.getpid()}]: {what} in {now - self.last:.1f} s")
        self.last = now


class SolveProgress:
    """Progress of the per-set solve inside one Python worker process.

    Prints to the worker's stderr (the executor log, or the console in local mode)
    the first finished set and then at most one line every ``every`` seconds, with the
    sets and nodes the current task has finished so far (the solve function, and this
    counter with it, is sent anew with every task).
    """

    def __init__(self, every: float = REPORT_EVERY_S) -> None:
        self.every = every
        self.sets = 0
        self.nodes = 0
        self.last_report = 0.0

    def finished(self, set_id: int, nodes: int, seconds: float) -> None:
        """Count set ``set_id`` of ``nodes`` nodes, solved in ``seconds``; log the first
        set and then at most one line per interval."""
        self.sets += 1
        self.nodes += nodes
        now = time.time()
        if self.sets == 1 or now - self.last_report >= self.every:
            self.last_report = now
            _worker_line(f"sepne solve [worker {os.getpid()}]: {self.sets} sets ({self.nodes} nodes) done in this "
                         f"task; set {set_id}: {nodes} nodes in {seconds:.2f} s")
