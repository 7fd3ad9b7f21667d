#!/usr/bin/env bash
# Check the example Airflow DAG (examples/airflow/) with a real Airflow: a virtualenv of
# its own (.venv-airflow, so the main .venv and its pyspark stay untouched) with pinned
# Airflow and Spark provider versions, then tests/airflow/ with that virtualenv's pytest.
# No database server: the tests read the DAG with a DagBag and never touch a database;
# AIRFLOW_HOME is a temporary folder, removed afterwards.
# Idempotent: a second run only checks what is already there. Extra arguments go to pytest;
# --install-only (make airflow-setup) installs and stops there.
set -euo pipefail
cd "$(dirname "$0")/.."
INSTALL_ONLY=0
if [ "${1:-}" = "--install-only" ]; then INSTALL_ONLY=1; shift; fi

PY=${PYTHON:-python3}
VENV=${AIRFLOW_VENV:-.venv-airflow}
AIRFLOW_VERSION=3.3.2
SPARK_PROVIDER_VERSION=6.3.4
PYTEST_VERSION=9.2.0
REQUIREMENTS=(
  "apache-airflow==${AIRFLOW_VERSION}"
  "apache-airflow-providers-apache-spark==${SPARK_PROVIDER_VERSION}"
  "pytest==${PYTEST_VERSION}"
)

stamp="$VENV/.sepne-airflow-installed"
want="${REQUIREMENTS[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  start=$(date +%s)
  if [ ! -x "$VENV/bin/python" ]; then
    echo "[airflow] creating virtualenv $VENV"
    "$PY" -m venv "$VENV"
  fi
  echo "[airflow] installing ${want}"
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null
  if ! "$VENV/bin/pip" install -q "${REQUIREMENTS[@]}"; then
    echo "[airflow] ERROR: could not install ${want}" >&2
    exit 1
  fi
  "$VENV/bin/pip" check
  echo "$want" > "$stamp"
  echo "[airflow] installed in $(( $(date +%s) - start ))s"
fi
if [ "$INSTALL_ONLY" = 1 ]; then exit 0; fi
AIRFLOW_HOME=$(mktemp -d)
trap 'rm -rf "$AIRFLOW_HOME"' EXIT
export AIRFLOW_HOME
export AIRFLOW__CORE__LOAD_EXAMPLES=False
"$VENV/bin/python" - <<'PY'
from importlib.metadata import version

import airflow.providers.apache.spark.operators.spark_submit  # noqa: F401  (fails loudly if broken)
print("[airflow] apache-airflow", version("apache-airflow"),
      "| apache-airflow-providers-apache-spark", version("apache-airflow-providers-apache-spark"),
      "| pytest", version("pytest"))
PY

"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/airflow "$@"
