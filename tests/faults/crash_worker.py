"""Kill a Python worker in the middle of the solve stage and check Spark's retry.

Run by tests/test_failures.py in its own process, because the session needs a master
that allows task retries (``local[2,4]``: two cores, four attempts per task; the test
session's ``local[2]`` gives every task a single attempt, as Spark's local mode does).

The per-set solve is wrapped so that the first call in any worker finds the file MARKER
missing, creates it and ends its process with ``os._exit``, as an out-of-memory kill
would; later calls solve normally.
Spark then re-runs the task. The script prints the embeddings of a clean run and of
the run with the crash as JSON.
"""
import json
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

import sepne_spark.set_stage as set_stage  # noqa: E402
from sepne_spark.model import SepNE  # noqa: E402
from tests.spark_conf import SUBPROCESS_CONF  # noqa: E402

marker, rows = sys.argv[1], json.loads(sys.argv[2])
spark = SparkSession.builder.master("local[2,4]").config(map=SUBPROCESS_CONF).getOrCreate()
edges = spark.createDataFrame(rows, "src string, dst string, weight double")
# The distributed per-set stage (the one whose worker is killed), not the one-task path.
model = SepNE(dim=4, landmarks=8, setSize=12, iters=5, metric="A+A2", oneTaskNodes=0).fit(edges)


def snapshot(df):
    return {r["id"]: [list(r["embedding"]), r["set_id"]] for r in df.collect()}


clean = snapshot(model.transform(edges))
real = set_stage.make_set_solver


def crashing_solver(*args, **kwargs):
    solve = real(*args, **kwargs)

    def solve_or_die(pdf):
        if not os.path.exists(marker):
            with open(marker, "w") as fh:
                fh.write(f"worker {os.getpid()} killed while solving set {int(pdf['set_id'].iloc[0])}\n")
            os._exit(137)
        return solve(pdf)

    return solve_or_die


set_stage.make_set_solver = crashing_solver
crashed = snapshot(model.transform(edges))
print("RESULT " + json.dumps({"clean": clean, "crashed": crashed}))
spark.stop()
