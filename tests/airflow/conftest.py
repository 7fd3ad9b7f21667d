"""Tests of the Airflow example DAG. They need Apache Airflow, which the main virtualenv
does not have: ``scripts/airflow_check.sh`` (``make test-airflow``) runs them in a
virtualenv of their own, and elsewhere test_dag.py skips itself."""
from __future__ import annotations

import atexit
import importlib.metadata
import os
import shutil
import tempfile


def airflow_installed() -> bool:
    # Ask for the distribution, not the module: with tests/ on sys.path, this folder
    # itself would pass for a namespace package named "airflow".
    try:
        importlib.metadata.version("apache-airflow")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


# Airflow reads (and on first import writes) its configuration under AIRFLOW_HOME: keep it
# out of ~/airflow when pytest is run directly rather than through the script.
if airflow_installed() and "AIRFLOW_HOME" not in os.environ:
    _home = tempfile.mkdtemp(prefix="sepne-airflow-home-")
    atexit.register(shutil.rmtree, _home, ignore_errors=True)
    os.environ["AIRFLOW_HOME"] = _home
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
