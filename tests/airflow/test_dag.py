"""The example Airflow DAG (examples/airflow/): it loads without errors, runs the embed job
with spark-submit in YARN cluster mode, and hands the job the run's date.

No database and no scheduler: the DAG is read with a ``DagBag``, its templates are rendered
with a context built here, and the task is executed against a stand-in ``spark-submit``
that records its command line. ``SEPNE_AIRFLOW_DAGS`` points the tests at another folder.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import os
import sys
from pathlib import Path

import pytest

try:  # the distribution, not the module: tests/airflow/ would pass for a package "airflow"
    importlib.metadata.version("apache-airflow")
except importlib.metadata.PackageNotFoundError:
    pytest.skip(
        "Apache Airflow is not installed here; scripts/airflow_check.sh runs these tests",
        allow_module_level=True,
    )

import pendulum  # noqa: E402
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator  # noqa: E402

try:  # Airflow >= 3.1
    from airflow.dag_processing.dagbag import DagBag
except ImportError:
    from airflow.models.dagbag import DagBag
try:  # Airflow 3
    from airflow.sdk.execution_time.context import VariableAccessor
except ImportError:
    from airflow.utils.context import VariableAccessor

ROOT = Path(__file__).resolve().parents[2]
DAG_FOLDER = Path(os.environ.get("SEPNE_AIRFLOW_DAGS", ROOT / "examples" / "airflow"))
DAG_ID = "sepne_daily_embeddings"
WHEEL = "sepne_spark-0.1.0-py3-none-any.whl"
GRAPHFRAMES = "io.graphframes:graphframes-spark4_2.13:0.11.0"
RUN_DATE = "2026-11-25"


@pytest.fixture()
def bag() -> DagBag:
    # A fresh parse for each test: rendering templates changes the task in place.
    kwargs = {"dag_folder": str(DAG_FOLDER)}
    if "include_examples" in inspect.signature(DagBag).parameters:  # gone in Airflow 3.3
        kwargs["include_examples"] = False
    return DagBag(**kwargs)


def _no_import_errors(bag: DagBag) -> None:
    assert bag.import_errors == {}, "DAG import errors:\n" + "\n".join(
        f"{path}:\n{error}" for path, error in bag.import_errors.items()
    )


@pytest.fixture()
def dag(bag):
    _no_import_errors(bag)
    assert DAG_ID in bag.dags, f"DAG {DAG_ID} not found in {DAG_FOLDER}: {sorted(bag.dags)}"
    return bag.dags[DAG_ID]  # not bag.get_dag(), which asks the database


@pytest.fixture()
def embed(dag) -> SparkSubmitOperator:
    ops = [t for t in dag.tasks if isinstance(t, SparkSubmitOperator)]
    assert [t.task_id for t in ops] == ["embed"]
    return ops[0]


def _context(dag, task, ds: str) -> dict:
    logical_date = pendulum.parse(ds, tz="UTC")
    return {
        "dag": dag,
        "task": task,
        "ds": ds,
        "ds_nodash": ds.replace("-", ""),
        "logical_date": logical_date,
        "data_interval_start": logical_date,
        "data_interval_end": logical_date,
        "run_id": f"scheduled__{logical_date.isoformat()}",
        "params": {},
        "var": {"value": VariableAccessor(deserialize_json=False), "json": VariableAccessor(deserialize_json=True)},
    }


def _rendered(dag, task, ds: str = RUN_DATE) -> SparkSubmitOperator:
    task.render_template_fields(_context(dag, task, ds))
    return task


def _option(args: list[str], flag: str) -> str:
    """The value after ``flag`` in an argument list (which must hold it exactly once)."""
    assert args.count(flag) == 1, f"{flag} appears {args.count(flag)} times in {args}"
    return args[args.index(flag) + 1]


def test_dag_folder_loads_without_errors(bag):
    _no_import_errors(bag)
    assert DAG_ID in bag.dags


def test_daily_schedule_no_catchup_and_retries(dag, embed):
    assert (getattr(dag, "schedule", None) or getattr(dag, "schedule_interval", None)) == "@daily"
    assert dag.catchup is False
    assert embed.retries >= 1
    assert embed.retry_delay.total_seconds() > 0


def test_run_date_is_templated_into_the_job_arguments(dag, embed):
    args = _rendered(dag, embed).application_args
    assert _option(args, "--run-date") == RUN_DATE
    assert _option(args, "--profile") == "yarn"
    assert _option(args, "--input") and "{{" not in _option(args, "--input")
    assert _option(args, "--output") and "{{" not in _option(args, "--output")
    assert RUN_DATE in embed.name


def test_another_date_gives_another_partition(dag, embed):
    args = _rendered(dag, embed, "2027-01-02").application_args
    assert _option(args, "--run-date") == "2027-01-02"


def test_paths_come_from_airflow_variables(dag, embed, monkeypatch):
    monkeypatch.setenv("AIRFLOW_VAR_SEPNE_INPUT", "hdfs:///graphs/edges")
    monkeypatch.setenv("AIRFLOW_VAR_SEPNE_OUTPUT", "hdfs:///emb")
    monkeypatch.setenv("AIRFLOW_VAR_SEPNE_JOBS_DIR", "/srv/sepne/jobs")
    monkeypatch.setenv("AIRFLOW_VAR_SEPNE_WHEEL", f"/srv/sepne/{WHEEL}")
    monkeypatch.setenv("AIRFLOW_VAR_SEPNE_ENV_ARCHIVE", "hdfs:///apps/env.tar.gz")
    task = _rendered(dag, embed)
    assert _option(task.application_args, "--input") == "hdfs:///graphs/edges"
    assert _option(task.application_args, "--output") == "hdfs:///emb"
    assert task.application == "/srv/sepne/jobs/embed.py"
    assert task.py_files == f"/srv/sepne/{WHEEL}"
    assert task.conf["spark.yarn.dist.archives"] == "hdfs:///apps/env.tar.gz#environment"


def test_a_dated_input_is_read_for_the_runs_date(dag, embed, monkeypatch):
    """{ds} in the input Variable is the run's date: a rerun of an earlier date reads that date's graph."""
    monkeypatch.setenv("AIRFLOW_VAR_SEPNE_INPUT", "hdfs:///graphs/dt={ds}/edges")
    args = _rendered(dag, embed, "2027-01-02").application_args
    assert _option(args, "--input") == "hdfs:///graphs/dt=2027-01-02/edges"
    assert _option(args, "--run-date") == "2027-01-02"


def test_templates_only_in_templated_fields(embed):
    """A Jinja expression in a field the operator does not render would reach spark-submit as is."""
    templated = set(type(embed).template_fields)
    for attr, value in vars(embed).items():
        if attr.lstrip("_") not in templated and isinstance(value, str) and "{{" in value:
            pytest.fail(f"{attr} = {value!r} holds a template but is not a templated field")


def test_spark_submit_command(dag, embed, tmp_path, monkeypatch):
    """Run the task against a stand-in spark-submit and check the command it receives."""
    argv_file = tmp_path / "argv"
    fake = tmp_path / "bin" / "spark-submit"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"$@\" > '{argv_file}'\n"
        "echo 'INFO Client: Submitted application application_1764000000000_0001'\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", '{"conn_type": "spark", "host": "yarn"}')

    context = _context(dag, embed, RUN_DATE)
    embed.render_template_fields(context)
    embed.execute(context)

    argv = argv_file.read_text().splitlines()
    assert _option(argv, "--master") == "yarn"
    assert _option(argv, "--deploy-mode") == "cluster"
    assert _option(argv, "--name") == f"sepne-embed-{RUN_DATE}"
    assert _option(argv, "--packages") == GRAPHFRAMES
    assert _option(argv, "--py-files").endswith("/" + WHEEL)
    confs = [argv[i + 1] for i, a in enumerate(argv) if a == "--conf"]
    assert "spark.yarn.appMasterEnv.PYSPARK_PYTHON=./environment/bin/python" in confs
    assert "spark.executorEnv.PYSPARK_PYTHON=./environment/bin/python" in confs
    assert "spark.checkpoint.dir=hdfs:///tmp/sepne-checkpoints" in confs
    assert _option(argv, "--driver-memory") == "8g"
    archives = [c for c in confs if c.startswith("spark.yarn.dist.archives=")]
    assert len(archives) == 1 and archives[0].endswith("/pyspark_env.tar.gz#environment")
    app = next(a for a in argv if a.endswith(".py"))
    assert app.endswith("/jobs/embed.py")
    job_args = argv[argv.index(app) + 1:]
    assert _option(job_args, "--run-date") == RUN_DATE
    assert "{{" not in " ".join(argv)


def test_embed_job_accepts_the_arguments(dag, embed):
    """The rendered arguments parse with jobs/embed.py's own parser, and the profile exists."""
    sys.path.insert(0, str(ROOT))
    try:
        spec = importlib.util.spec_from_file_location("sepne_embed_job", ROOT / "jobs" / "embed.py")
        job = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(job)
        ns = job.build_parser().parse_args(_rendered(dag, embed).application_args)
        from sepne_spark import settings

        settings.load_profile(ns.profile)
    finally:
        sys.path.remove(str(ROOT))
    assert ns.run_date == RUN_DATE
