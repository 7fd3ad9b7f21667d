"""Visible progress: what each SepNE stage did, how long it took, and where it shows.

:func:`stage` wraps one stage of the pipeline. While it runs, every Spark job started
from it carries the job description ``SepNE <stage>: <detail>`` and the job tag
``sepne-<stage>``, so the Spark UI's job list says which SepNE stage a job belongs to
and how much work it holds (the solve stage's description gives the number of sets,
and its task progress bar counts them down). Both are set through the session
(``spark.conf`` and ``SparkSession.addTag``), which works for classic sessions and for
Spark Connect alike. When the stage ends it logs its counts and the time taken.

Inside the solve stage each Python worker reports finished sets on its stderr (the
executor log) at most every :data:`REPORT_EVERY_S` seconds; see :class:`SolveProgress`.
"""
from __future__ import annotations

import logging
import os
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

log = logging.getLogger("sepne_spark.progress")

DESCRIPTION_KEY = "spark.job.description"
REPORT_EVERY_S = 10.0


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
    name: short stage name (``landmarks``, ``summaries``, ``partition``, ``solve`` ...).
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
    tag = "sepne-" + "".join(c if c.isalnum() else "-" for c in name.lower())
    _tag(spark, True, tag)
    log.info("%s ...", text)
    try:
        yield current
    finally:
        current.elapsed = time.time() - current.started
        _tag(spark, False, tag)
        _set_description(spark, previous)
        if timings is not None:
            timings[name] = current.elapsed
        shown = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in current.counts.items())
        log.info("SepNE %s done in %.1f s%s", name, current.elapsed, f" ({shown})" if shown else "")


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
        self.sets += 1
        self.nodes += nodes
        now = time.time()
        if self.sets == 1 or now - self.last_report >= self.every:
            self.last_report = now
            print(
                f"sepne solve [worker {os.getpid()}]: {self.sets} sets ({self.nodes} nodes) done in this task; "
                f"set {set_id}: {nodes} nodes in {seconds:.2f} s",
                file=sys.stderr, flush=True,
            )
