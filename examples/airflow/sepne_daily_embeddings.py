"""Airflow DAG: embed the day's graph with SepNE on YARN, once a day.

One task, ``embed``, runs ``jobs/embed.py`` with ``spark-submit`` in YARN cluster mode
(the recipe of the README's "Running on a cluster") and writes the run's embeddings to
``OUTPUT/dt=YYYY-MM-DD/``, where the date is the run's logical date (``{{ ds }}``: with
Airflow 3's ``@daily``, the day the run starts; Airflow 2 dated a run by the day before).
A rerun or a retry of a date replaces that partition only, so retrying is safe.

Written for Airflow 3.3 with ``apache-airflow-providers-apache-spark`` 6.3 (the versions
``scripts/airflow_check.sh`` tests it with).

Install
-------
1. On the Airflow workers: the provider, and ``spark-submit`` (Spark 4.1) on the PATH,
   with ``HADOOP_CONF_DIR`` / ``YARN_CONF_DIR`` pointing at the cluster's configuration::

       pip install apache-airflow-providers-apache-spark==6.3.4

2. The connection ``spark_default``, pointing at YARN::

       airflow connections add spark_default --conn-type spark --conn-host yarn \\
           --conn-extra '{"queue": "default"}'

3. Build the wheel and a packed Python environment for the cluster (venv-pack keeps a
   link to the interpreter, so the cluster nodes need the same Python at the same path;
   conda-pack packs the interpreter too), and put the job scripts where the workers can
   read them::

       make wheel                          # dist/sepne_spark-0.1.0-py3-none-any.whl
       python -m venv pyspark_env && pyspark_env/bin/pip install venv-pack \\
           dist/sepne_spark-0.1.0-py3-none-any.whl
       pyspark_env/bin/venv-pack -o pyspark_env.tar.gz
       hdfs dfs -mkdir -p hdfs:///apps/sepne
       hdfs dfs -put -f pyspark_env.tar.gz hdfs:///apps/sepne/
       cp -r jobs dist /opt/sepne-spark/   # on every Airflow worker

4. Set the Airflow Variables whose defaults do not fit (``airflow variables set
   sepne_input hdfs:///graphs/edges``, ...):

   * ``sepne_input``: the edge list (default ``hdfs:///data/sepne/edges``); ``{ds}`` in
     it is replaced by the run's date, for a graph kept per day
     (``hdfs:///graphs/dt={ds}/edges``): without it every run, a rerun or backfill of an
     earlier date too, reads the graph as it is when the run starts
   * ``sepne_output``: the output root (default ``hdfs:///data/sepne/embeddings``)
   * ``sepne_jobs_dir``: the ``jobs/`` folder on the workers (default
     ``/opt/sepne-spark/jobs``)
   * ``sepne_wheel``: the wheel (default
     ``/opt/sepne-spark/dist/sepne_spark-0.1.0-py3-none-any.whl``)
   * ``sepne_env_archive``: the packed Python environment (default
     ``hdfs:///apps/sepne/pyspark_env.tar.gz``)
   * ``sepne_checkpoint_dir``: a folder every executor reaches, for the checkpoints
     (default ``hdfs:///tmp/sepne-checkpoints``)

5. Copy this file into the DAGs folder (``$AIRFLOW_HOME/dags``); the DAG
   ``sepne_daily_embeddings`` appears on the next parse.

The Variables are read in Jinja templates, so when a run starts, not each time the
scheduler parses the file. Only fields the operator templates carry them: ``application``,
``py_files``, ``conf``, ``name`` and ``application_args``. ``archives`` is not a templated
field, so the environment archive goes through ``conf`` as
``spark.yarn.dist.archives``, which is what ``spark-submit --archives`` sets on YARN.
"""
from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

try:  # Airflow 3
    from airflow.sdk import DAG
except ImportError:  # Airflow 2
    from airflow import DAG


def _var(name: str, default: str) -> str:
    """A Jinja expression for an Airflow Variable, read when the task runs."""
    return "{{ var.value.get('%s', '%s') }}" % (name, default)


# "{ds}" in the input becomes the run's date: a graph kept per day is read for the date
# a run (a rerun, a backfill) is of, not as it is now.
INPUT = "{{ var.value.get('sepne_input', 'hdfs:///data/sepne/edges') | replace('{ds}', ds) }}"
OUTPUT = _var("sepne_output", "hdfs:///data/sepne/embeddings")
JOBS_DIR = _var("sepne_jobs_dir", "/opt/sepne-spark/jobs")
WHEEL = _var("sepne_wheel", "/opt/sepne-spark/dist/sepne_spark-0.1.0-py3-none-any.whl")
ENV_ARCHIVE = _var("sepne_env_archive", "hdfs:///apps/sepne/pyspark_env.tar.gz")
# A folder every executor reaches: label propagation's and the propagation's checkpoints
# then survive a lost executor (README, "Checkpoints").
CHECKPOINTS = _var("sepne_checkpoint_dir", "hdfs:///tmp/sepne-checkpoints")

with DAG(
    dag_id="sepne_daily_embeddings",
    description="SepNE node embeddings of the day's graph, written to OUTPUT/dt=YYYY-MM-DD/",
    schedule="@daily",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args={
        "owner": "sepne",
        # A bad input or setting (the job's exit status 2) is retried like any failure:
        # in YARN cluster mode spark-submit reports only that the application failed
        # (its own exit status 1), not the driver's status. The retries then fail the
        # same way, within seconds of the driver's start; the task's log shows YARN's
        # diagnostics ("User application exited with status 2") and `yarn logs` the
        # job's one-line error.
        "retries": 2,
        "retry_delay": timedelta(minutes=15),
    },
    tags=["sepne", "spark"],
) as dag:
    embed = SparkSubmitOperator(
        task_id="embed",
        conn_id="spark_default",
        deploy_mode="cluster",
        application=f"{JOBS_DIR}/embed.py",
        py_files=WHEEL,
        packages="io.graphframes:graphframes-spark4_2.13:0.11.0",
        # The driver's size is fixed when YARN starts it: the profile's spark.driver.memory
        # cannot change it any more, so it is given here.
        driver_memory="8g",
        conf={
            # = --archives ENV_ARCHIVE#environment (the archives argument is not templated)
            "spark.yarn.dist.archives": f"{ENV_ARCHIVE}#environment",
            "spark.yarn.appMasterEnv.PYSPARK_PYTHON": "./environment/bin/python",
            "spark.executorEnv.PYSPARK_PYTHON": "./environment/bin/python",
            "spark.checkpoint.dir": CHECKPOINTS,
        },
        name="sepne-embed-{{ ds }}",
        application_args=[
            "--profile", "yarn",
            "--input", INPUT,
            "--output", OUTPUT,
            "--run-date", "{{ ds }}",
        ],
        # spark-submit waits for the YARN application to finish, and a retry submits the
        # job again (it replaces only its own dt= partition). Durable submits in YARN
        # cluster mode would instead need yarn_track_via_rm_api=True and the
        # ResourceManager's address in the connection.
        durable=False,
    )
