"""The cluster path for real: ``spark-submit`` with the built wheel on ``--py-files``.

The job script and the wheel are copied to a folder outside the checkout and run from
there, as on a cluster edge node, so nothing is imported from the source tree: the job
logs where ``sepne_spark`` came from and the test checks it is the wheel.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark_conf import spark_flags

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
SPARK_SUBMIT = Path(sys.executable).with_name("spark-submit")


def _submit(workdir: Path, wheel: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_GATEWAY_PORT")}
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    (workdir / "no-jars").mkdir(exist_ok=True)  # a folder without JARs: none on spark.jars
    env["SEPNE_SPARK_JARS"] = str(workdir / "no-jars")  # the cluster supplies JARs by --packages
    cmd = [
        str(SPARK_SUBMIT), "--master", "local[2]", *spark_flags("--conf"),
        "--py-files", str(wheel), "embed.py", *args,
    ]
    return subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.deploy
@pytest.mark.skipif(not SPARK_SUBMIT.exists(), reason="spark-submit is installed with pyspark")
def test_spark_submit_with_wheel_outside_checkout(wheel, tmp_path):
    workdir = tmp_path / "edge-node"
    workdir.mkdir()
    shutil.copy(ROOT / "jobs" / "embed.py", workdir / "embed.py")
    shutil.copy(wheel, workdir / wheel.name)
    whl = workdir / wheel.name
    out = workdir / "embeddings"

    proc = _submit(
        workdir, whl, "--profile", "document", "--gen-nodes", "300", "--landmarks", "16", "--dim", "8",
        "--iters", "3", "--set-size", "100", "--output", str(out), "--run-date", "2026-11-25",
        "--spark", "spark.sql.shuffle.partitions=2",  # the submission's --conf says 1
        "--spark", "spark.driver.memory=3g",  # the driver runs already
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    # The job's setting replaced the submitted one, and the log says so; the driver's
    # memory cannot change, and the log says that instead.
    (replaced,) = [line for line in proc.stdout.splitlines() if "submitted value(s)" in line]
    assert "spark.sql.shuffle.partitions=2 (submitted: 1)" in replaced and "spark.driver.memory" not in replaced
    assert "spark.driver.memory=3g: the driver spark-submit started is already running" in proc.stdout
    # spark-submit merges the Python driver's stderr into its own stdout.
    origin = [line for line in proc.stdout.splitlines() if "sepne-embed: sepne-spark" in line]
    assert origin and f"{whl.name}/sepne_spark" in origin[0], origin or proc.stderr[-3000:]
    assert "SepNE embedded 300 nodes" in proc.stdout
    part = out / "dt=2026-11-25"
    manifest = json.loads((part / "_manifest.json").read_text())
    # Profile values the document profile sets and the flags did not override.
    assert manifest["settings"]["metric"] == "A+A2" and manifest["settings"]["lam"] == pytest.approx(0.4)
    assert manifest["counts"]["output_rows"] == 300
    assert list(part.glob("*.parquet"))
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "temporary folders left behind"

    # A user error exits non-zero with one line naming it.
    bad = _submit(workdir, whl, "--profile", "no-such-profile", "--output", str(workdir / "x"))
    assert bad.returncode == 2, bad.stderr[-2000:]
    errors = [line for line in bad.stdout.splitlines() if line.startswith("sepne-embed: error:")]
    assert len(errors) == 1 and "no-such-profile" in errors[0] and "document" in errors[0]
    assert not (workdir / "x").exists()


def test_wheel_holds_exactly_the_packages_modules_and_profiles(wheel):
    import zipfile

    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
    modules = {n for n in names if n.startswith("sepne_spark/") and n.endswith(".py")}
    source = {str(p.relative_to(ROOT)) for p in (ROOT / "sepne_spark").rglob("*.py")}
    assert modules == source
    profiles = {n.rsplit("/", 1)[1] for n in names if n.startswith("sepne_spark/profiles/")}
    assert profiles == {p.name for p in (ROOT / "conf").glob("*.yaml")}
