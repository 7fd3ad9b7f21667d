"""Shared fixtures (one local SparkSession for the whole test session) and test tiers.

Every test belongs to one tier (see pytest.ini): ``unit``, ``spark`` or ``e2e``. A test
marked by hand keeps its mark; any other test is ``spark`` when it uses the ``spark``
fixture (directly or through another fixture) and ``unit`` otherwise. A ``unit`` test
that starts a SparkContext fails.
"""
from __future__ import annotations

import os
import sys

import pytest

from tests.spark_conf import TEST_CONF

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
# Every JVM the tests start (this process's session, the jobs in subprocesses, their
# Python workers' daemons) listens on the loopback interface only; Spark's default is
# the address the host name resolves to, or the first interface's.
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

TIERS = ("unit", "spark", "e2e")
#: Modules whose every test is end-to-end, marked here rather than in the module.
_E2E_MODULES = ("test_connect.py", "test_readme.py", "test_cli.py")
#: Folders whose tests are end-to-end (run in a virtualenv of their own).
_E2E_FOLDERS = ("airflow",)


#: The modules that take longest, longest first (``--durations=0`` on a 2-core machine,
#: summed per module): collected before the others, so that ``make test``'s three
#: processes (pytest-xdist, ``--dist loadfile --no-loadscope-reorder``) start them first
#: and the run does not end on one of them while the other processes idle. (Without
#: ``--no-loadscope-reorder`` xdist would hand out the modules with the most tests
#: first, and the standalone-cluster module, one test of two minutes, last.)
_LONGEST_FIRST = ("test_core.py", "test_jobs.py", "test_pipeline.py", "test_connect.py", "test_graphframes.py",
                  "test_evaluation.py", "test_reading.py", "test_bad_input.py", "test_readme.py",
                  "test_propagation.py", "test_unreached.py", "test_cluster.py", "test_failures.py",
                  "test_submit.py")


def _module_rank(item: pytest.Item) -> int:
    name = item.path.name
    return _LONGEST_FIRST.index(name) if name in _LONGEST_FIRST else len(_LONGEST_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The deploy checks run only when the marker expression names them (make test-deploy:
    # -m deploy), whatever else it selects: ``make test ARGS="-m e2e"`` leaves them out.
    if "deploy" not in (config.option.markexpr or ""):
        deploy = [item for item in items if item.get_closest_marker("deploy") is not None]
        if deploy:
            config.hook.pytest_deselected(items=deploy)
            items[:] = [item for item in items if item.get_closest_marker("deploy") is None]
    items.sort(key=_module_rank)  # stable: a module's tests keep their order
    for item in items:
        tiers = {m.name for m in item.iter_markers() if m.name in TIERS}
        if len(tiers) > 1:
            raise pytest.UsageError(f"{item.nodeid} is marked {sorted(tiers)}: a test has one tier")
        uses_spark = "spark" in getattr(item, "fixturenames", ())
        if tiers == {"unit"} and uses_spark:
            raise pytest.UsageError(f"{item.nodeid} is marked unit but uses the spark fixture")
        if tiers:
            continue
        path = item.path
        if path.name in _E2E_MODULES or any(part in _E2E_FOLDERS for part in path.parts[-3:-1]):
            item.add_marker(pytest.mark.e2e)
        elif uses_spark:
            item.add_marker(pytest.mark.spark)
        else:
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True)
def _unit_tests_start_no_spark(request: pytest.FixtureRequest):
    """Fail a ``unit`` test that starts a SparkContext (it belongs to another tier)."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    before = _active_context()
    yield
    if before is None and _active_context() is not None:
        pytest.fail("a unit test started a SparkContext: mark it spark or e2e", pytrace=False)


def _active_context():
    pyspark = sys.modules.get("pyspark")
    if pyspark is None:
        return None
    return pyspark.SparkContext._active_spark_context


@pytest.fixture(scope="session")
def spark():
    from sepne_spark.session import get_spark

    session = get_spark(
        "sepne-tests",
        master="local[2]",
        conf={**TEST_CONF, "spark.sql.adaptive.enabled": "false", "spark.driver.memory": "2g"},
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory):
    """The package built as a wheel (``pip wheel --no-deps``), once per test process."""
    import subprocess
    from pathlib import Path

    import shutil

    root = Path(__file__).resolve().parent.parent
    # From a copy of the checkout's own files (tracked, or new and not ignored): a build/
    # folder left in the checkout by an earlier build would put modules that no longer
    # exist into the wheel, and two test processes building in one tree would race.
    source = tmp_path_factory.mktemp("source")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root,
                            capture_output=True, text=True)
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.split("\0")):
            if (root / name).is_file():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / name, source / name)
    else:  # not a git checkout (an unpacked sdist)
        shutil.copytree(root, source, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", ".venv*", "__pycache__"))
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(source)],
        check=True, capture_output=True, text=True, cwd=tmp_path_factory.mktemp("build"), timeout=300,
    )
    (found,) = dist.glob("sepne_spark-*.whl")
    return found
