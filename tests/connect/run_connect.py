"""Run the main SepNE path under Spark Connect and print the results as JSON.

Used by tests/test_connect.py in a separate process: ``SparkSession.builder.remote``
with a ``local`` master starts a local Spark Connect server, and everything below talks
to it over gRPC, as a Databricks shared cluster or serverless notebook would.
"""
import json
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

spark = (
    SparkSession.builder.remote("local[2]")
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
assert spark.is_remote() if hasattr(spark, "is_remote") else True
from pyspark.sql.connect.session import SparkSession as ConnectSession  # noqa: E402

assert isinstance(spark, ConnectSession), type(spark)

from sepne_spark.model import SepNE  # noqa: E402

rows = json.loads(sys.argv[1])
edges = spark.createDataFrame(rows, "src string, dst string, weight double")
result = {}
for partition in ("RP", "IO"):
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
