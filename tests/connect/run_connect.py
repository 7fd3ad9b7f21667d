"""Run the main SepNE path (RP, IO and LP sets) under Spark Connect; print the results as JSON.

Used by tests/test_connect.py in a separate process: ``python run_connect.py URL ROWS``
connects to the Spark Connect server at URL (``sc://localhost:PORT``, started by the
test with server.py) and everything below talks to it over gRPC, as a Databricks
shared cluster or serverless notebook would.
"""
import json
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
assert spark.is_remote() if hasattr(spark, "is_remote") else True
from pyspark.sql.connect.session import SparkSession as ConnectSession  # noqa: E402

assert isinstance(spark, ConnectSession), type(spark)

from sepne_spark.model import SepNE  # noqa: E402

rows = json.loads(sys.argv[2])
edges = spark.createDataFrame(rows, "src string, dst string, weight double")
result = {}
for partition in ("RP", "IO", "LP"):
    model = SepNE(dim=4, landmarks=8, metric="A+A2", setSize=20, iters=5, partition=partition).fit(edges)
    if partition == "IO":
        ids = spark.createDataFrame([(r[0],) for r in rows[:15]], "id string")
        out = model.transform(ids)
    else:
        out = model.transform(edges)
    result[partition] = {
        "landmarks": model.landmark_ids,
        "rows": {r["id"]: [list(r["embedding"]), r["set_id"]] for r in out.collect()},
    }
print("RESULT " + json.dumps(result))
spark.stop()
