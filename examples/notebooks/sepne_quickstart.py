# Databricks notebook source
# MAGIC %md
# MAGIC # SepNE node embeddings in a notebook
# MAGIC
# MAGIC Install, fit, embed every node, embed only the nodes you ask for, save and load
# MAGIC the model. Works on a classic cluster and on shared clusters and serverless
# MAGIC (Spark Connect): the library only uses the notebook's `spark` session and
# MAGIC DataFrame operations. Import this file into a workspace (File > Import) or run
# MAGIC it as a plain script (`get_spark()` then starts a local session). On a shared
# MAGIC cluster of Databricks Runtime 14 to 16 (Spark 3.5) set `spark.checkpoint.dir` in
# MAGIC the cluster's Spark configuration (a volume or `dbfs:/tmp/...`): its Spark Connect
# MAGIC client has no checkpoints, and the library writes those tables there instead.

# COMMAND ----------

# MAGIC %pip install /Volumes/main/default/libs/sepne_spark-0.1.0-py3-none-any.whl graphframes-py==0.11.0

# COMMAND ----------

# MAGIC %md
# MAGIC Where results go: a Unity Catalog volume or any path the cluster can write.
# MAGIC The GraphFrames JAR (`io.graphframes:graphframes-spark4_2.13:0.11.0`, as a cluster
# MAGIC library) is optional: without it degrees and label propagation run as plain
# MAGIC DataFrame code.

# COMMAND ----------

import os

import numpy as np

from sepne_spark.evaluation import node_classification
from sepne_spark.generators import sbm_graph
from sepne_spark.model import SepNE, SepNEModel
from sepne_spark.session import get_spark

# The notebook's session; run as a plain script, a local one set up for SepNE.
spark = get_spark()

OUTPUT = os.environ.get("SEPNE_EXAMPLE_OUTPUT", "/Volumes/main/default/sepne/quickstart")
NODES = int(os.environ.get("SEPNE_EXAMPLE_NODES", "5000"))

# COMMAND ----------

# MAGIC %md
# MAGIC ## An edge list
# MAGIC A generated graph with planted communities; in practice
# MAGIC `spark.table("catalog.schema.edges")` with columns `src`, `dst` (string or integer
# MAGIC ids) and an optional `weight`.

# COMMAND ----------

edges, labels = sbm_graph(spark, NODES, communities=5, avg_degree=12.0, mixing=0.3, seed=1)
edges = edges.select("src", "dst")
print(f"{edges.count()} edges")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Fit and embed every node
# MAGIC `SepNE.fromProfile("auto", edges)` takes the settings the embed job runs by
# MAGIC default, chosen from the graph's size (`SepNE()` alone is the paper's setting);
# MAGIC any Param given wins. `fit` chooses the landmarks and factorises their block;
# MAGIC `transform(edges)` embeds every other node, set by set, in parallel, then runs the
# MAGIC steps over the whole graph that follow the solve.

# COMMAND ----------

sepne = SepNE.fromProfile("auto", edges, dim=32, seed=1)
model = sepne.fit(edges)
embeddings = model.transform(edges)
embeddings.select("id", "embedding", "is_landmark", "set_id").show(5, truncate=60)

# COMMAND ----------

# MAGIC %md
# MAGIC ## How good are they?
# MAGIC One-vs-rest logistic regression on the planted communities (collecting is fine
# MAGIC for a few thousand nodes; use `jobs/evaluate.py` for large graphs).

# COMMAND ----------

pdf = embeddings.join(labels.withColumnRenamed("node", "id"), "id").select("embedding", "label").toPandas()
scores = node_classification(np.vstack(pdf["embedding"].to_numpy()), [[x] for x in pdf["label"]],
                             train_ratios=(0.1, 0.5), n_splits=3, seed=0)
for ratio, result in sorted(scores["results"].items()):
    print(f"{ratio:.0%} training: micro-F1 {result['micro_f1_mean']:.3f}")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Save, load, and embed only the nodes you need
# MAGIC The saved model is small (O(k^2 + k d)). How much of the graph embedding a few
# MAGIC nodes reads depends on M: with `metric="I+A"` (and no log scaling) only the
# MAGIC requested nodes' neighbourhood is merged and normalised, after one scan of the
# MAGIC input, so the cost follows those neighbourhoods; with `A+A2`, as here, the whole
# MAGIC graph's transition matrix is built first, so the cost grows with the graph.
# MAGIC `loaded.embeds_locally(edges, wanted)` says which case a call is. Requested
# MAGIC nodes get the solve alone: the propagation, refinement and averaging work on the
# MAGIC whole graph, so they are turned off first. A `with` block releases the tables the
# MAGIC loaded model caches when it ends (a model is not released when it is garbage-collected).

# COMMAND ----------

model.save(f"{OUTPUT}/model", overwrite=True)
wanted = edges.select(edges.src.alias("id")).distinct().limit(10)
with SepNEModel.load(f"{OUTPUT}/model").setPropagation(1).setRefineSteps(0).setAverageSteps(0) as loaded:
    print("reads only the neighbourhood:", loaded.embeds_locally(edges, wanted))
    loaded.embed(wanted, edges).select("id", "embedding").show(3, truncate=60)

# COMMAND ----------

embeddings.write.mode("overwrite").parquet(f"{OUTPUT}/embeddings")
# or: embeddings.write.mode("overwrite").saveAsTable("main.default.sepne_embeddings")
print(spark.read.parquet(f"{OUTPUT}/embeddings").count(), "rows written")
model.release()  # the tables transform(edges) cached: rerunning the cells would add more
