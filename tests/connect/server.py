"""A local Spark Connect server for the tests: ``python server.py PORT [JAR ...]``.

Starts a classic local session with the Spark Connect plugin listening on PORT (as
``sbin/start-connect-server.sh`` would), prints ``READY`` and serves until its
standard input is closed. The JARs given (GraphFrames core, its GraphX copy and the
GraphFrames Connect plugin; on Spark 3.5 the Spark Connect server's own) go on
``spark.jars``, and with the plugin among them the server registers GraphFrames'
relation extension, so that graphframes-py's Connect client runs GraphFrames
algorithms on the server. ``spark.checkpoint.dir`` is a temporary folder, removed when
the server stops.
"""
import os
import shutil
import sys
import tempfile

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

from sepne_spark.session import GRAPHFRAMES_CONNECT_CLASS  # noqa: E402
from tests.spark_conf import SUBPROCESS_CONF  # noqa: E402

port, jars = sys.argv[1], sys.argv[2:]
checkpoints = tempfile.mkdtemp(prefix="sepne-connect-checkpoints-")
builder = (
    SparkSession.builder.master("local[2]")
    .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
    .config("spark.connect.grpc.binding.address", "127.0.0.1")
    .config("spark.connect.grpc.binding.port", port)
    .config(map=SUBPROCESS_CONF)
    # A Spark Connect client before 4.0 writes its checkpoints here (sepne_spark.session.checkpoint).
    .config("spark.checkpoint.dir", checkpoints)
)
if jars:
    builder = builder.config("spark.jars", ",".join(jars))
    if any("graphframes-connect" in os.path.basename(j) for j in jars):
        builder = builder.config("spark.connect.extensions.relation.classes", GRAPHFRAMES_CONNECT_CLASS)
spark = builder.getOrCreate()
print("READY", flush=True)
sys.stdin.read()  # until the test closes our stdin
spark.stop()
shutil.rmtree(checkpoints, ignore_errors=True)
