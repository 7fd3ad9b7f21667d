"""A local Spark Connect server for the tests: ``python server.py PORT``.

Starts a classic local session with the Spark Connect plugin listening on PORT (as
``sbin/start-connect-server.sh`` would), prints ``READY`` and serves until its
standard input is closed.
"""
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

from tests.spark_conf import SUBPROCESS_CONF  # noqa: E402

port = sys.argv[1]
spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
    .config("spark.connect.grpc.binding.port", port)
    .config(map=SUBPROCESS_CONF)
    .getOrCreate()
)
print("READY", flush=True)
sys.stdin.read()  # until the test closes our stdin
spark.stop()
