#!/usr/bin/env bash
# The unit and spark test tiers on another PySpark than the one `make setup` installs:
#   make test-spark-version SPARK=3.5.9
# in a virtualenv of its own (.venv-spark-<version>). Spark 3.x gets the oldest NumPy,
# pandas, PyArrow and SciPy the package allows, as an older cluster has them. The
# GraphFrames JARs in jars/ are built for Spark 4: on Spark 3.x the session leaves them
# off and degrees and label propagation take their DataFrame path (the GraphFrames
# tests skip). Spark Connect is not installed, so its tests skip too.
set -euo pipefail
cd "$(dirname "$0")/.."

SPARK=${SPARK:?give the PySpark version, e.g. SPARK=3.5.9}
PY=${PYTHON:-python3}
VENV=.venv-spark-$SPARK
case "$SPARK" in
  3.*) OLDEST=("numpy==1.26.4" "pandas==1.5.3" "pyarrow==15.0.2" "scipy==1.13.1" "scikit-learn<1.6") ;;
  *) OLDEST=() ;;
esac
if [ ! -f "$VENV/.sepne-installed" ] || [ setup.py -nt "$VENV/.sepne-installed" ]; then
  echo "[spark $SPARK] creating $VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null
  "$VENV/bin/pip" install -q "pyspark==$SPARK" -e . pytest pytest-xdist chispa scikit-learn ${OLDEST[@]+"${OLDEST[@]}"} \
    >"$VENV/install.log" 2>&1 || { cat "$VENV/install.log" >&2; exit 1; }
  touch "$VENV/.sepne-installed"
fi
"$VENV/bin/python" -c "import pyspark, numpy, pandas, pyarrow; print(f'[spark $SPARK] PySpark {pyspark.__version__}, NumPy {numpy.__version__}, pandas {pandas.__version__}, PyArrow {pyarrow.__version__}')"
export PYSPARK_PYTHON="$PWD/$VENV/bin/python" SPARK_LOCAL_IP=${SPARK_LOCAL_IP:-127.0.0.1}
exec "$VENV/bin/python" -m pytest -q -n 2 -m "unit or spark" tests "$@"
