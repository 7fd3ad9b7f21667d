"""README's Python API example runs as written, in a fresh virtualenv, not activated.

The snippet is read from README.md (the first ``python`` block of the "Python API"
section), so the two cannot drift apart. It runs in a virtualenv made for the test
(``python -m venv``) with the package's built wheel installed in it, called by the full
path of its interpreter, with no virtualenv folder on ``PATH`` and no ``PYSPARK_PYTHON``
set, as a user runs ``env/bin/python script.py`` without activating it: the Python
workers that ``transform`` starts must still find numpy, pandas and sepne_spark. The
new virtualenv takes the dependencies (PySpark, NumPy, ...) from the test
interpreter's site-packages through a ``.pth`` line, which saves downloading them
again, and sepne_spark from the wheel alone. The input is a small generated graph
written as ``edges.tsv`` where the snippet reads it.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.spark_conf import spark_flags

ROOT = Path(__file__).resolve().parent.parent


def api_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Python API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_snippet_uses_the_session_helper():
    code = api_snippet()
    assert "get_spark" in code and "builder" not in code


def fresh_venv(folder: Path, wheel: Path) -> Path:
    """A new virtualenv in ``folder`` with ``wheel`` installed; its interpreter's path.

    The dependencies come from this interpreter's site-packages, named in a ``.pth``
    file as a plain path (so that its own ``.pth`` files, among them an editable
    install of this checkout, are not read)."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "-q", "--target", str(site),
                    str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    return python


@pytest.mark.deploy  # a minute: the wheel installed apart, the snippet in an interpreter of its own
def test_readme_api_example_runs_without_an_activated_venv(tmp_path, wheel):
    rng = np.random.default_rng(5)
    n = 300
    community = np.arange(n) % 4
    rows = set()
    while len(rows) < 1500:
        u = int(rng.integers(n))
        same = rng.random() < 0.8
        v = int(rng.choice(np.where(community == community[u])[0])) if same else int(rng.integers(n))
        if u != v:
            rows.add((min(u, v), max(u, v)))
    (tmp_path / "edges.tsv").write_text("".join(f"{u}\t{v}\n" for u, v in sorted(rows)), encoding="utf-8")
    (tmp_path / "example.py").write_text(api_snippet(), encoding="utf-8")

    python = fresh_venv(tmp_path / "env", wheel)
    venv_bins = {str(Path(sys.executable).parent), str(python.parent)}
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYSPARK_GATEWAY_PORT",
                        "PYSPARK_GATEWAY_SECRET", "SPARK_HOME", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p not in venv_bins)
    env["SEPNE_SPARK_MASTER"] = "local[2]"
    where = subprocess.run([str(python), "-c", "import sepne_spark; print(sepne_spark.__file__)"], cwd=tmp_path,
                           env=env, check=True, capture_output=True, text=True).stdout.strip()
    assert where.startswith(str(tmp_path / "env")), where  # the wheel's, not this checkout's
    # The test suite's settings for short-lived JVMs (tests/spark_conf.py), passed the way
    # PySpark reads launch options: the example itself stays as the README shows it.
    env["PYSPARK_SUBMIT_ARGS"] = shlex.join(spark_flags("--conf") + ["pyspark-shell"])
    proc = subprocess.run([str(python), "example.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert "ModuleNotFoundError" not in proc.stderr
    # The library's stage lines are visible without any logging set-up.
    assert re.search(r"INFO sepne_spark.progress: SepNE landmarks: .* \.\.\.", proc.stderr), proc.stderr[-3000:]
    assert "INFO sepne_spark.progress: SepNE landmarks done in" in proc.stderr, proc.stderr[-3000:]
    table = pq.read_table(tmp_path / "embeddings")
    assert table.num_rows == n
    assert len(table.column("embedding")[0].as_py()) == 64
    assert re.search(r"\|\s*42\s*\|", proc.stdout), proc.stdout[-2000:]
    assert (tmp_path / "sepne-model").is_dir()


def test_the_wheel_leaves_pyspark_to_the_cluster(wheel):
    """The wheel does not pull PySpark in (a cluster brings its own, and a pip-installed
    one would shadow it): only its extras name it."""
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(name).decode("utf-8")
    wants = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: pyspark")]
    assert wants and all("extra ==" in line for line in wants), wants
    assert any('extra == "spark"' in line and ">=3.5" in line for line in wants), wants
