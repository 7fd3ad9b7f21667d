"""Run the main SepNE path under Spark Connect: requested ids (IO) and LP sets in one task,
and RP sets on the distributed path followed by the averaging, the refinement (by the
log-ratio matrix) and the propagation by row blocks and the anchor; print the results as
JSON.

Used by tests/test_connect.py in a separate process: ``python run_connect.py URL ROWS``
connects to the Spark Connect server at URL (``sc://127.0.0.1:PORT``, started by the
test with server.py) and everything below talks to it over gRPC, as a Databricks
shared cluster or serverless notebook would. Besides the embeddings it reports whether
GraphFrames works through the server (its Connect plugin) and, if so, the labels of
GraphFrames' label propagation computed there.
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
from sepne_spark.partition import label_propagation  # noqa: E402
from sepne_spark.session import graphframes_available  # noqa: E402

rows = json.loads(sys.argv[2])
edges = spark.createDataFrame(rows, "src string, dst string, weight double")
result = {"graphframes": graphframes_available(spark)}
SPECTRAL = dict(averageSteps=2, refineSteps=1, refineOperator="pmi", propagation=2, propagationBlocks=2,
                propagationDtype="float64", oneTaskNodes=0, unreached="anchor")
for partition in ("IO", "LP", "RP-spectral"):  # tests/test_connect.py: CASES
    extra = SPECTRAL if partition == "RP-spectral" else {}
    model = SepNE(dim=4, landmarks=8, metric="A+A2", setSize=20, iters=5, partition=partition[:2],
                  **extra).fit(edges)
    if partition == "IO":
        ids = spark.createDataFrame([(r[0],) for r in rows[:15]], "id string")
        out = model.transform(ids)
    else:
        out = model.transform(edges)
    result[partition] = {
        "landmarks": model.landmark_ids,
        "rows": {r["id"]: [list(r["embedding"]), r["set_id"]] for r in out.collect()},
    }
    # Releasing a model unpersists its tables and removes the files that a client before
    # Spark 4.0 wrote in place of checkpoints (LP's, the spectral case's; in the server's
    # folder, here).
    try:
        model.release()
        result.setdefault("released", "ok")
    except Exception as exc:  # noqa: BLE001 - reported
        result["released"] = f"{partition}: {str(exc).splitlines()[0]}"
folder = spark.conf.get("spark.checkpoint.dir", None)
result["checkpoints_left"] = sorted(  # the library's (Spark's own folder of checkpoints is a UUID)
    name for name in (os.listdir(folder) if folder and os.path.isdir(folder) else []) if name.startswith("sepne-"))
# The estimator of --profile auto, the saved model's files and the link-prediction AUC.
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

from sepne_spark.evaluation import auc_spark  # noqa: E402
from sepne_spark.model import SepNEModel  # noqa: E402

result["auto"] = SepNE.fromProfile("auto", edges).settings()
with tempfile.TemporaryDirectory() as folder:
    model.save(folder + "/model")
    loaded = SepNEModel.load(folder + "/model")
    result["saved_equal"] = bool(np.array_equal(loaded.S_A, model.S_A) and np.array_equal(loaded.factors.Phi,
                                                                                         model.factors.Phi))
scores = [(float(i % 7) / 7, i % 3 == 0) for i in range(300)] + [(float("nan"), True), (None, False)]
result["auc"] = auc_spark(spark.createDataFrame(scores, "score double, label boolean"), buckets=4)
# Link prediction's counts are Python integers (a Connect 3.5 client counts in NumPy's,
# which the JSON summary wrote as strings).
from sepne_spark.evaluation.link_prediction import link_prediction  # noqa: E402

lp = link_prediction(spark, edges, lambda train: SepNE(dim=4, landmarks=8, iters=2, setSize=20).fit(train)
                     .transform(train), fraction=0.1, seed=0, directed=False)
result["linkpred_count_types"] = sorted({type(v).__name__ for k, v in lp.items() if k.startswith("n_")})
# A graph read from a text file and persisted is found again by the queries built on it
# (on a Spark Connect 3.5 server it was read and parsed again by every one of them).
import contextlib  # noqa: E402
import io  # noqa: E402

from pyspark.sql import functions as F  # noqa: E402

from sepne_spark.graph import load_graph, prepare_graph  # noqa: E402

with tempfile.TemporaryDirectory() as folder:
    with open(folder + "/edges.tsv", "w", encoding="utf-8") as f:
        f.writelines(f"{a}\t{b}\t{w}\n" for a, b, w in rows)
    # Read by the library's reader, and parsed from spark.read.text by the user's own code.
    parts = F.split("value", "\t")
    own = spark.read.text(folder + "/edges.tsv").select(
        parts[0].alias("src"), parts[1].alias("dst"), parts[2].cast("double").alias("weight"))
    for key, graph in (("text_cached", load_graph(spark, folder + "/edges.tsv", directed=False)),
                       ("own_text_cached", prepare_graph(own, directed=False))):
        graph.edges.persist().count()
        plan = io.StringIO()
        with contextlib.redirect_stdout(plan):
            graph.edges.groupBy("src").count().explain()
        result[key] = "InMemoryTableScan" in plan.getvalue()
        graph.edges.unpersist()
# A table written in place of a checkpoint (Spark Connect before 4.0) is uncompressed.
from sepne_spark import session  # noqa: E402

held: list = []
with session.holding_checkpoints(held):
    result["checkpoint_files"] = [str(f) for f in session.checkpoint(spark.range(10)).inputFiles()] \
        if session.connect_before_4(spark) else []
    # A plan of 60 nested operations (the distributed solve's, with the steps after it, has
    # about 50): PySpark 4's client parses a checkpoint's plan again, with protobuf's
    # nesting limit of 100 levels.
    deep = spark.range(5)
    for _ in range(60):
        deep = deep.select((F.col("id") + 1).alias("id"))
    try:
        result["deep_checkpoint"] = sorted(r["id"] for r in session.checkpoint(deep).collect())
    except Exception as exc:  # noqa: BLE001 - reported
        result["deep_checkpoint"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    result["checkpoint_views"] = [r["viewName"] for r in spark.sql("SHOW VIEWS LIKE 'sepne_*'").collect()
                                  if not r["viewName"].startswith(("sepne_text_", "sepne_edges_"))]
session.release(held)
if result["graphframes"]:
    vertices = edges.select("src").union(edges.select("dst")).distinct().withColumnRenamed("src", "id")
    labels = label_propagation(spark, vertices, edges, 5, use_graphframes=True)
    result["lp_labels"] = {r["id"]: r["label"] for r in labels.collect()}
print("RESULT " + json.dumps(result))
spark.stop()
