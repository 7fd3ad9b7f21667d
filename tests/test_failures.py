"""Failures in the middle of a run, and determinism across runs and set-ups.

* A Python worker that dies while solving is retried by Spark; the result is the
  same as a clean run's.
* A job killed while writing leaves the previous output intact and readable; a
  restarted job with the same arguments completes and gives the same embeddings as
  the first run, bit for bit, although it runs with three shuffle partitions where the
  first ran with the test session's one, and reads the same edges split over five files where the first
  read one (every sum is taken in a fixed order: see ``proximity.ordered_sum``). The
  killed run is a process of its own (``local[1]``, killed with its JVM); the first run
  and the restart run in the test session.

Marked ``deploy`` (``make test-deploy``, not ``make test``): minutes each.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sepne_spark.jobs import embed
from tests.helpers import random_graph
from tests.spark_conf import spark_flags

pytestmark = [pytest.mark.deploy, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parent.parent


def test_worker_killed_during_solve_is_retried_with_identical_result(tmp_path):
    g = random_graph(n=60, m=220, seed=8)
    marker = tmp_path / "killed"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "faults" / "crash_worker.py"), str(marker), json.dumps(g.rows)],
        capture_output=True, text=True, timeout=900, env=env,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    assert marker.exists(), "no worker was killed"
    assert "Python worker exited unexpectedly" in proc.stderr or "crashed" in proc.stderr, proc.stderr[-3000:]
    result = json.loads(lines[0][len("RESULT "):])
    assert result["crashed"] == result["clean"]  # bit for bit, every node, same sets


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _embeddings(spark, path: Path) -> dict:
    return {r["id"]: (np.asarray(r["embedding"]), r["set_id"], r["is_landmark"])
            for r in spark.read.parquet(str(path)).collect()}


def test_killed_write_keeps_old_output_and_restart_reproduces_it(spark, tmp_path):
    g = random_graph(n=120, m=500, seed=9)
    one_file = tmp_path / "edges-one"
    one_file.mkdir()
    (one_file / "part-0.tsv").write_text("".join(f"{a}\t{b}\t{w}\n" for a, b, w in g.rows))
    five_files = tmp_path / "edges-five"
    five_files.mkdir()
    for i in range(5):
        (five_files / f"part-{i}.tsv").write_text("".join(f"{a}\t{b}\t{w}\n" for a, b, w in g.rows[i::5]))
    params = ["--profile", "default", "--landmarks", "10", "--dim", "6", "--iters", "20", "--set-size", "25", "--metric", "A+A2",
              "--seed", "3"]
    out = tmp_path / "emb"

    # The first run: the test session (one shuffle partition), one input file.
    assert embed.main(spark, ["--input", str(one_file), "--output", str(out)] + params) == 0
    first = _embeddings(spark, out)
    before = _digest(out)

    # A second run over the same output is killed (SIGKILL: driver and JVM) while writing.
    job_args = ["--input", str(five_files), "--output", str(out), "--overwrite"] + params
    args = ([sys.executable, str(ROOT / "jobs" / "embed.py")] + job_args
            + spark_flags(**{"spark.sql.shuffle.partitions": "3"}))
    env = dict(os.environ, SEPNE_SPARK_MASTER="local[1]", PYTHONPATH=str(ROOT))
    job = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 600
    writing = None
    while time.time() < deadline and job.poll() is None and writing is None:
        writing = next((p for p in tmp_path.glob(".emb.tmp-*") if any(p.rglob("*"))), None)
        time.sleep(0.1)
    assert writing is not None, f"the job ended (rc {job.returncode}) before it started writing"
    os.killpg(job.pid, signal.SIGKILL)
    job.wait(timeout=60)
    job.stderr.close()
    assert job.returncode == -signal.SIGKILL
    dead = writing  # left by the killed run, removed by the next write to the output

    assert _digest(out) == before  # untouched, and still readable
    assert _embeddings(spark, out).keys() == first.keys()

    # Stopped by SIGTERM (a scheduler's kill, to the process group: Python and its JVM
    # alike) while writing: one line and exit 143, no trace; the write unwinds and the
    # output is again untouched.
    job = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    deadline = time.time() + 600
    writing = None
    while time.time() < deadline and job.poll() is None and writing is None:
        writing = next((p for p in tmp_path.glob(".emb.tmp-*") if p.name != dead.name and any(p.rglob("*"))), None)
        time.sleep(0.1)
    assert writing is not None, f"the job ended (rc {job.returncode}) before it started writing"
    os.killpg(job.pid, signal.SIGTERM)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal.SIGTERM, err[-3000:]
    # The one line (the JVM, signalled too, may still log its own shutdown after it).
    said = [line for line in err.splitlines() if line.startswith("sepne-embed: ")]
    assert len(said) == 1 and said[0].startswith("sepne-embed: stopped by SIGTERM after "), err[-3000:]
    assert "Traceback" not in err and "SepNE solve_write stopped after" in err, err[-3000:]
    assert _digest(out) == before

    # Restarted with the same arguments (three shuffle partitions, five input files):
    # completes, removes the killed run's temporary folder, same result.
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "3")
    try:
        assert embed.main(spark, job_args) == 0
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
    assert not list(tmp_path.glob(".emb.*")), "temporary folders were left behind"
    second = _embeddings(spark, out)
    assert second.keys() == first.keys()
    for node, (vec, set_id, is_landmark) in first.items():
        assert second[node][1:] == (set_id, is_landmark)
        np.testing.assert_array_equal(second[node][0], vec)  # bit for bit
