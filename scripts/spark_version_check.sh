#!/usr/bin/env bash
# The unit and spark test tiers on another PySpark than the one `make setup` installs:
#   make test-spark-version SPARK=3.5.9
# in a virtualenv of its own (.venv-spark-<version>). Spark 3.x gets the oldest NumPy,
# pandas, PyArrow and SciPy the package allows, as an older cluster has them. The
# GraphFrames JARs in jars/ are built for Spark 4: on Spark 3.x the session leaves them
# off and degrees and label propagation take their DataFrame path (the GraphFrames
# tests skip). On Spark 3.x the Spark Connect client's packages are installed too and
# the server's JAR (org.apache.spark:spark-connect_2.12, which PySpark 3 does not bring)
# is fetched with Maven, and tests/test_connect.py runs after the two tiers (its
# tests skip when the JAR cannot be fetched).
set -euo pipefail
cd "$(dirname "$0")/.."

SPARK=${SPARK:?give the PySpark version, e.g. SPARK=3.5.9}
PY=${PYTHON:-python3}
VENV=.venv-spark-$SPARK
case "$SPARK" in
  3.*) OLDEST=("numpy==1.26.4" "pandas==1.5.3" "pyarrow==15.0.2" "scipy==1.13.1" "scikit-learn<1.6"
              "grpcio==1.62.2" "grpcio-status==1.62.2" "googleapis-common-protos>=1.56.4" "protobuf<5") ;;
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
case "$SPARK" in
  3.*) ;;
  *) exec "$VENV/bin/python" -m pytest -q -n 2 -m "unit or spark" tests "$@" ;;
esac
JAR="$HOME/.m2/repository/org/apache/spark/spark-connect_2.12/$SPARK/spark-connect_2.12-$SPARK.jar"
if [ ! -f "$JAR" ]; then
  mvn -q dependency:get -Dartifact="org.apache.spark:spark-connect_2.12:$SPARK" -Dtransitive=false >/dev/null 2>&1 \
    || echo "[spark $SPARK] could not fetch spark-connect_2.12-$SPARK.jar with Maven: the Spark Connect tests skip" >&2
fi
export SEPNE_CONNECT_JAR="$JAR"
status=0
"$VENV/bin/python" -m pytest -q -n 2 -m "unit or spark" tests "$@" || status=$?
"$VENV/bin/python" -m pytest -q tests/test_connect.py "$@" || status=$?
exit $status
