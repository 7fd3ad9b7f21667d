"""A real Spark standalone cluster on 127.0.0.1: a master and two one-core workers.

The cluster is started with the launch classes of the installed PySpark
(``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``), the
package is built as a wheel (``pip wheel --no-deps``) and ``jobs/embed.py`` is
submitted to the master with the wheel on ``--py-files`` and the GraphFrames JARs on
``--jars``, from a folder outside the checkout, as from a cluster's edge node. The
executors are separate JVMs with their own Python workers, so the job's data really
moves between processes through Spark's shuffle and block transfer.

* The embeddings equal those of a local-mode run of the same job (ids, sets and
  vectors to 1e-9).
* A second submission loses a worker (its Worker JVM, its executor and the executor's
  Python workers, killed together) in the middle of the solve stage, once the
  executor log shows that a set was solved there; the job still finishes on the other
  worker with the same output.

Marked ``deploy`` (``make test-deploy``, not ``make test``). Every process the test
starts is killed when it ends.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from jobs import embed
from tests import gf_support
from tests.spark_conf import CLUSTER_CONF, JAVA_OPTIONS, spark_flags

pytestmark = [pytest.mark.deploy, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SPARK_CLASS, SPARK_SUBMIT = BIN / "spark-class", BIN / "spark-submit"
HOST = "127.0.0.1"
# A generated SBM graph (no input files), LP sets (GraphFrames label propagation on the
# executors), and enough sets and rounds that the solve stage lasts a while on one core.
# The distributed stages (--one-task-nodes 0): a graph this small would otherwise be
# solved in one task, on one executor.
JOB_ARGS = [
    "--profile", "document", "--gen-nodes", "2400", "--gen-communities", "6", "--gen-avg-degree", "10",
    "--landmarks", "24", "--dim", "8", "--iters", "40", "--set-size", "60", "--partition", "LP",
    "--lp-max-iter", "5", "--seed", "3", "--one-task-nodes", "0",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _clean_env() -> dict[str, str]:
    """The environment of cluster processes: nothing from the checkout or a parent Spark."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")}
    env.update(SPARK_LOCAL_IP=HOST, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_DAEMON_MEMORY="256m", SPARK_DAEMON_JAVA_OPTS=JAVA_OPTIONS)
    return env


def _json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


class Cluster:
    """A standalone master and workers, each in its own process group."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port, self.webui = _free_port(), _free_port()
        self.url = f"spark://{HOST}:{self.port}"
        self.master: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.work_dirs: list[Path] = []

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.base / f"{name}.log", "w")
        try:
            return subprocess.Popen([str(SPARK_CLASS), *args], env=_clean_env(), stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()

    def start(self, workers: int = 2) -> None:
        self.master = self._spawn("master", [
            "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(self.port),
            "--webui-port", str(self.webui)])
        for i in range(workers):
            work = self.base / f"worker-{i}"
            work.mkdir()
            self.work_dirs.append(work)
            self.workers.append(self._spawn(f"worker-{i}", [
                "org.apache.spark.deploy.worker.Worker", "--host", HOST, "--cores", "1", "--memory", "1g",
                "--webui-port", str(_free_port()), "--work-dir", str(work), self.url]))
        deadline = time.time() + 240
        while time.time() < deadline:
            try:
                state = _json(f"http://{HOST}:{self.webui}/json")
                if state.get("aliveworkers", 0) == workers:
                    return
            except OSError:
                pass
            assert self.master.poll() is None, (self.base / "master.log").read_text()[-3000:]
            time.sleep(1)
        raise AssertionError("the workers did not register: " + (self.base / "worker-0.log").read_text()[-3000:])

    def alive_workers(self) -> int:
        return _json(f"http://{HOST}:{self.webui}/json").get("aliveworkers", 0)

    def kill_worker(self, i: int) -> None:
        """SIGKILL the worker's process group: the Worker JVM, its executor and Python workers."""
        os.killpg(self.workers[i].pid, signal.SIGKILL)
        self.workers[i].wait(timeout=60)

    def stop(self) -> None:
        for proc in [*self.workers, self.master]:
            if proc is None:
                continue
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=60)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not (SPARK_CLASS.exists() and SPARK_SUBMIT.exists()):
        pytest.fail(f"spark-class / spark-submit are installed with pyspark, not found in {BIN}")
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def local_output(spark, tmp_path_factory) -> dict:
    """The same job in local mode (the test session, ``local[2]``)."""
    out = tmp_path_factory.mktemp("local") / "emb"
    assert embed.main(spark, JOB_ARGS + ["--output", str(out)]) == 0
    return _read(spark, out)


def _read(spark, path: Path) -> dict:
    return {r["id"]: (np.asarray(r["embedding"]), r["set_id"], r["is_landmark"])
            for r in spark.read.parquet(str(path)).collect()}


def _submit(cluster: Cluster, wheel: Path, workdir: Path, out: Path) -> subprocess.Popen:
    workdir.mkdir()
    shutil.copy(ROOT / "jobs" / "embed.py", workdir / "embed.py")
    whl = workdir / wheel.name
    shutil.copy(wheel, whl)
    env = _clean_env()
    (workdir / "no-jars").mkdir(exist_ok=True)  # a folder without JARs: none on spark.jars
    env["SEPNE_SPARK_JARS"] = str(workdir / "no-jars")  # the JARs come with --jars
    jars = ",".join(gf_support.core_jars())
    cmd = [
        str(SPARK_SUBMIT), "--master", cluster.url, "--deploy-mode", "client",
        *spark_flags("--conf", CLUSTER_CONF, **{
            "spark.executor.memory": "640m", "spark.executor.cores": "1", "spark.cores.max": "2",
            "spark.driver.host": HOST, "spark.driver.bindAddress": HOST, "spark.pyspark.python": sys.executable,
            "spark.checkpoint.dir": str(workdir / "checkpoints"),
        }),
        "--jars", jars, "--py-files", str(whl), "embed.py", *JOB_ARGS, "--output", str(out),
    ]
    log = open(workdir / "driver.log", "w")
    try:
        return subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    finally:
        log.close()


def _finish(job: subprocess.Popen, workdir: Path, timeout: float = 1200) -> str:
    try:
        job.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
        raise AssertionError("the job did not finish: " + (workdir / "driver.log").read_text()[-4000:])
    text = (workdir / "driver.log").read_text()
    assert job.returncode == 0, text[-5000:]
    return text


def _assert_same(got: dict, expected: dict) -> None:
    assert sorted(got) == sorted(expected)
    for node, (vec, set_id, is_landmark) in expected.items():
        assert got[node][1:] == (set_id, is_landmark), node
        np.testing.assert_allclose(got[node][0], vec, rtol=0, atol=1e-9)


def _solving_executor(cluster: Cluster) -> int | None:
    """The worker whose executor has logged a solved set (``sepne solve [worker ...]``)."""
    for i, work in enumerate(cluster.work_dirs):
        for err in work.glob("*/*/stderr"):
            if "sepne solve [worker" in err.read_text(errors="replace"):
                return i
    return None


def test_cluster_job_survives_a_lost_worker_and_matches_local_mode(spark, cluster, wheel, local_output, tmp_path):
    """One job on two workers (wheel on --py-files, GraphFrames from --jars): one worker is
    killed once its executor has solved a set, the other finishes the job, and the output
    equals local mode's, row for row."""
    gf_support.require(spark)
    out = tmp_path / "emb"
    workdir = tmp_path / "edge-node"
    job = _submit(cluster, wheel, workdir, out)
    victim = None
    deadline = time.time() + 1200
    while victim is None and job.poll() is None and time.time() < deadline:
        victim = _solving_executor(cluster)
        time.sleep(0.2)
    if victim is None:
        job.poll() is None and os.killpg(job.pid, signal.SIGKILL)
        raise AssertionError("no executor reached the solve stage: "
                             + (workdir / "driver.log").read_text()[-3000:])
    cluster.kill_worker(victim)
    assert job.poll() is None, "the job ended before the worker was killed: the solve stage was too short"
    text = _finish(job, workdir)
    assert "SepNE embedded 2,400 nodes" in text
    origin = [line for line in text.splitlines() if "sepne-embed: sepne-spark" in line]
    assert origin and ".whl/sepne_spark" in origin[0], origin
    assert "label propagation: GraphFrames" in text, "LP did not go through GraphFrames on the cluster"
    assert cluster.alive_workers() == 1
    assert "Lost executor" in text or "ExecutorLostFailure" in text or "Removed executor" in text, text[-4000:]
    # Both executors solved sets: the victim before it was killed, the survivor after.
    assert all(any("sepne solve [worker" in e.read_text(errors="replace") for e in w.glob("*/*/stderr"))
               for w in cluster.work_dirs)
    _assert_same(_read(spark, out), local_output)
    # The label propagation's tables were written under the submission's
    # spark.checkpoint.dir, in a folder of the run's own (a lost executor takes a local
    # checkpoint's blocks with it), and the job removed that folder when it ended.
    removed = re.search(r"removed this run's checkpoints, (\S+) \((\d+) files\)", text)
    assert removed and removed.group(1).startswith(str(workdir / "checkpoints") + "/sepne-embed-"), text[-4000:]
    assert int(removed.group(2)) > 0, "no reliable checkpoint was written"
    assert (workdir / "checkpoints").is_dir() and not any((workdir / "checkpoints").rglob("*"))
