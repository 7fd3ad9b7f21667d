"""Degrees and landmark selection (``DD``, ``DP``, ``UF``, ``GDS``).

Degrees come from GraphFrames when its JAR is on the session, otherwise from the
equivalent DataFrame aggregation (GraphFrames' own ``degrees`` is the same
``groupBy``). Only the k chosen landmark ids reach the driver.
"""
from __future__ import annotations

import logging

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sepne_spark.errors import SettingError
from sepne_spark.session import resolve_graphframes

log = logging.getLogger(__name__)

STRATEGIES = ("DD", "DP", "UF", "GDS")


def hash_uniform(col: Column, seed: int) -> Column:
    """A seeded uniform number in (0, 1) from a column, independent of partitioning."""
    h = F.xxhash64(col.cast("string"), F.lit(int(seed)))
    return (F.pmod(h, F.lit(1 << 53)).cast("double") + 0.5) / float(1 << 53)


def degrees(
    spark: SparkSession,
    vertices: DataFrame,
    edges: DataFrame,
    use_graphframes: bool | None = None,
) -> DataFrame:
    """Total degree (in + out edge count of the directed edge list) of every vertex.

    Parameters
    ----------
    spark : SparkSession
        Session (classic or Spark Connect).
    vertices : DataFrame
        ``(id, ...)``.
    edges : DataFrame
        ``(src, dst, ...)``.
    use_graphframes : bool, optional
        ``None`` (default): GraphFrames' ``degrees`` when GraphFrames is on the session,
        else the equivalent DataFrame aggregation. ``True``: GraphFrames, an error when
        it is not available. ``False``: the DataFrame aggregation.

    Returns
    -------
    DataFrame
        ``(id, degree)`` covering all of ``vertices``, ``degree`` a long (0 for
        isolated nodes).
    """
    if resolve_graphframes(spark, use_graphframes, "degrees"):
        from graphframes import GraphFrame

        log.debug("degrees: GraphFrames")
        deg = GraphFrame(vertices.select("id"), edges.select("src", "dst")).degrees
    else:
        log.debug("degrees: DataFrame aggregation")
        deg = (
            edges.select(F.col("src").alias("id"))
            .unionByName(edges.select(F.col("dst").alias("id")))
            .groupBy("id")
            .agg(F.count(F.lit(1)).alias("degree"))
        )
    return vertices.select("id").join(deg, "id", "left").select(
        "id", F.coalesce(F.col("degree"), F.lit(0)).cast("long").alias("degree")
    )


def select_landmarks(
    spark: SparkSession,
    vertices: DataFrame,
    edges: DataFrame,
    k: int,
    strategy: str = "DD",
    seed: int = 0,
    use_graphframes: bool | None = None,
) -> list:
    """Choose k landmark ids, in landmark order.

    ``DD``: the k highest-degree nodes, ties broken by id. ``DP``: k nodes sampled
    without replacement with probability proportional to degree (Efraimidis-Spirakis
    keys from a seeded hash, so the sample does not depend on partitioning). ``UF``:
    k nodes sampled uniformly. ``GDS``: greedy dominating set in descending degree
    order, a node being skipped when it is adjacent to a chosen landmark.
    """
    if strategy not in STRATEGIES:
        raise SettingError(f"unknown landmark strategy {strategy!r}; expected one of {STRATEGIES}")
    if k < 1:
        raise SettingError(f"the number of landmarks must be >= 1, got {k}")
    deg = degrees(spark, vertices, edges, use_graphframes=use_graphframes)
    if strategy == "DD":
        rows = deg.orderBy(F.col("degree").desc(), F.col("id").asc()).limit(k).collect()
    elif strategy == "UF":
        rows = (
            deg.withColumn("key", hash_uniform(F.col("id"), seed))
            .orderBy(F.col("key").desc(), F.col("id").asc())
            .limit(k)
            .collect()
        )
    elif strategy == "DP":
        keyed = deg.withColumn(
            "key",
            F.when(F.col("degree") > 0, F.log(hash_uniform(F.col("id"), seed)) / F.col("degree")).otherwise(
                F.lit(None)
            ),
        )
        rows = keyed.orderBy(F.col("key").desc_nulls_last(), F.col("id").asc()).limit(k).collect()
    else:
        return _greedy_dominating(spark, deg, edges, k)
    ids = [r["id"] for r in rows]
    if len(ids) < k:
        raise SettingError(f"the graph has {len(ids)} nodes, fewer than the {k} landmarks requested")
    return ids


def _greedy_dominating(spark: SparkSession, deg: DataFrame, edges: DataFrame, k: int) -> list:
    """Greedy dominating set in rounds of at most k candidates.

    Each round takes the highest-degree nodes that are neither chosen nor adjacent to a
    chosen node (an anti-join on the cluster), brings those at most k candidates and
    the edges among them to the driver (O(k^2)), and runs the sequential greedy rule on
    them. Every round adds at least one landmark.
    """
    adj = edges.select("src", "dst").unionByName(
        edges.select(F.col("dst").alias("src"), F.col("src").alias("dst"))
    ).distinct().persist()
    deg = deg.persist()  # both are read once per round
    try:
        return _greedy_rounds(spark, deg, adj, k)
    finally:
        adj.unpersist()
        deg.unpersist()


def _greedy_rounds(spark: SparkSession, deg: DataFrame, adj: DataFrame, k: int) -> list:
    chosen: list = []
    id_type = deg.schema["id"].dataType
    while len(chosen) < k:
        need = k - len(chosen)
        if chosen:
            ch = spark.createDataFrame([(c,) for c in chosen], f"id {id_type.simpleString()}")
            blocked = adj.join(F.broadcast(ch.withColumnRenamed("id", "src")), "src").select(
                F.col("dst").alias("id")
            ).unionByName(ch)
            cand_df = deg.join(blocked, "id", "left_anti")
        else:
            cand_df = deg
        cand = [
            r["id"]
            for r in cand_df.orderBy(F.col("degree").desc(), F.col("id").asc()).limit(need).collect()
        ]
        if not cand:
            # The usual end on a small or dense graph (nothing to act on): said, not warned.
            log.info("GDS: %d landmarks dominate the graph; the other %d are the highest-degree nodes left",
                     len(chosen), need)
            rest = deg
            if chosen:
                rest = deg.join(ch, "id", "left_anti")
            cand = [
                r["id"] for r in rest.orderBy(F.col("degree").desc(), F.col("id").asc()).limit(need).collect()
            ]
            if not cand:
                raise SettingError(f"the graph has {len(chosen)} nodes, fewer than the {k} landmarks requested")
            chosen.extend(cand)
            break
        cdf = spark.createDataFrame([(c,) for c in cand], f"id {id_type.simpleString()}")
        inner = (
            adj.join(F.broadcast(cdf.withColumnRenamed("id", "src")), "src")
            .join(F.broadcast(cdf.withColumnRenamed("id", "dst")), "dst")
            .collect()
        )
        nbrs: dict = {}
        for r in inner:
            nbrs.setdefault(r["src"], set()).add(r["dst"])
        taken: set = set()
        for c in cand:  # candidates arrive in descending degree order
            if nbrs.get(c, set()) & taken:
                continue
            taken.add(c)
            chosen.append(c)
    return chosen[:k]
