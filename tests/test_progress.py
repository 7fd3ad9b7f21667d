"""The library's progress lines: shown without logging set-up, quiet on request, a
heartbeat inside long stages."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from sepne_spark.progress import TaskProgress, stage

ROOT = Path(__file__).resolve().parent.parent

STAGE_LINES = """
import time
from pyspark.sql import SparkSession
{setup}
from sepne_spark.progress import stage
with stage(None, "solve_write", "2 sets") as st:
    st.count(rows=7)
"""


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "SEPNE_LOG_LEVEL"}
    environ.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=120)


def test_stage_lines_show_without_any_logging_setup():
    proc = _python(STAGE_LINES.format(setup=""))
    assert proc.returncode == 0, proc.stderr
    assert "SepNE solve_write: 2 sets ..." in proc.stderr
    assert "SepNE solve_write done in" in proc.stderr and "(rows 7)" in proc.stderr


def test_a_failing_stage_says_so_and_its_error_stands(caplog):
    import logging

    import pytest

    caplog.set_level(logging.INFO, logger="sepne_spark")
    timings: dict = {}
    with pytest.raises(ValueError, match="bad line"):
        with stage(None, "read", "edges.tsv", timings):
            raise ValueError("bad line")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "SepNE read: edges.tsv ..." and lines[-1].startswith("SepNE read failed after ")
    assert not any(" done in " in ln for ln in lines) and "read" in timings
    assert caplog.records[-1].levelname == "WARNING"
    # Stopped (Ctrl-C, or SIGTERM in a job): said so, at INFO, and the stop goes on.
    from sepne_spark.errors import JobStopped

    caplog.clear()
    with pytest.raises(JobStopped):
        with stage(None, "fit", "", timings):
            raise JobStopped(15)
    assert caplog.records[-1].getMessage().startswith("SepNE fit stopped after ")
    assert caplog.records[-1].levelname == "INFO"


def test_an_applications_logging_setup_takes_over():
    # basicConfig at WARNING: the application wants warnings only, in its own format.
    proc = _python(STAGE_LINES.format(setup="import logging; logging.basicConfig(level=logging.WARNING)"))
    assert proc.returncode == 0, proc.stderr
    assert "SepNE" not in proc.stderr
    # ... also when it does so after importing the library: not even the first line.
    proc = _python(STAGE_LINES.format(setup="import logging, sepne_spark; logging.basicConfig(level=logging.WARNING)"))
    assert proc.returncode == 0, proc.stderr
    assert "SepNE" not in proc.stderr, proc.stderr
    # basicConfig at INFO: the lines come once, through the application's handler.
    proc = _python(STAGE_LINES.format(setup="import logging; logging.basicConfig(level=logging.INFO, format='APP %(message)s')"))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "SepNE solve_write done" in ln]
    assert len(lines) == 1 and lines[0].startswith("APP "), proc.stderr


def test_verbosity_by_function_and_environment():
    proc = _python(STAGE_LINES.format(setup="import sepne_spark; sepne_spark.set_verbosity('WARNING')"))
    assert proc.returncode == 0 and "SepNE" not in proc.stderr, proc.stderr
    # ... and it stays when the application configures logging after it
    proc = _python(STAGE_LINES.format(setup="import logging, sepne_spark; sepne_spark.set_verbosity('WARNING'); "
                                            "logging.basicConfig(level=logging.INFO, format='APP %(message)s')"))
    assert proc.returncode == 0 and "SepNE" not in proc.stderr, proc.stderr
    proc = _python(STAGE_LINES.format(setup=""), SEPNE_LOG_LEVEL="WARNING")
    assert proc.returncode == 0 and "SepNE" not in proc.stderr, proc.stderr


def test_heartbeat_inside_a_long_stage(spark, caplog, monkeypatch):
    monkeypatch.setenv("SEPNE_HEARTBEAT_S", "0.2")
    with caplog.at_level("INFO", logger="sepne_spark.progress"):
        with stage(spark, "summaries_svd", "M00 of 8 landmarks"):
            time.sleep(0.9)
        after = len(caplog.messages)
        time.sleep(0.5)
    beats = [m for m in caplog.messages if "still running" in m]
    assert len(beats) >= 2, caplog.messages
    assert re.fullmatch(r"SepNE summaries_svd: still running, \d+ s", beats[0]), beats
    assert len(caplog.messages) == after, "the heartbeat went on after the stage ended"


def test_a_one_task_stage_prints_a_line_per_step_to_the_workers_stderr(capsys, monkeypatch):
    clock = iter([100.0, 112.345, 112.5])  # made, then two steps: each timed from the one before
    monkeypatch.setattr("sepne_spark.progress.time.perf_counter", lambda: next(clock))
    progress = TaskProgress("solve_write")
    progress.step("refinement: 64 rounds (pmi)")
    progress.step("filter: order 3")
    err = capsys.readouterr().err.splitlines()
    assert re.fullmatch(r"\d\d:\d\d:\d\d sepne solve_write \[worker \d+\]: refinement: 64 rounds \(pmi\) in 12\.3 s",
                        err[0]), err
    assert err[1].endswith(": filter: order 3 in 0.2 s"), err
