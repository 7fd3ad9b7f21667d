"""Splitting the non-landmark nodes into sets: ``RP``, ``LP`` and ``IO``.

Every function returns a DataFrame ``(id, set_id)`` with ``set_id`` a long; nothing of
size n reaches the driver (only counts).
"""
from __future__ import annotations

import logging
import math

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from sepne_spark.session import graphframes_available

log = logging.getLogger(__name__)

SETUPS = ("RP", "LP", "IO")


def _hash_sets(nodes: DataFrame, set_size: int, seed: int) -> DataFrame:
    """``(id, set_id)``: each node to one of ceil(n / set_size) sets by a seeded hash.

    The node count n is joined in as a one-row aggregate, so no job runs until the
    sets are used.
    """
    count = nodes.agg(F.count(F.lit(1)).alias("_n"))
    num_sets = F.greatest(F.lit(1), F.ceil(F.col("_n") / F.lit(int(set_size))))
    key = F.xxhash64(F.col("id").cast("string"), F.lit(int(seed) + 7919))
    return nodes.crossJoin(F.broadcast(count)).select("id", F.pmod(key, num_sets).cast("long").alias("set_id"))


def random_partition(nodes: DataFrame, set_size: int, seed: int = 0) -> DataFrame:
    """``RP``: each node to one of ceil(n / set_size) sets by a seeded hash of its id."""
    return _hash_sets(nodes, set_size, seed)


def requested_partition(requested: DataFrame, set_size: int, seed: int = 0) -> DataFrame:
    """``IO``: only the requested nodes, hashed into sets of about ``set_size``."""
    return _hash_sets(requested.select("id").distinct(), set_size, seed)


def label_propagation(
    spark: SparkSession, vertices: DataFrame, edges: DataFrame, max_iter: int = 10
) -> DataFrame:
    """Community labels ``(id, label)`` by synchronous label propagation.

    Uses GraphFrames' ``labelPropagation`` when its JAR is available. Otherwise runs the
    same algorithm with DataFrame joins: every node takes the label carried by most of
    its neighbours (edges counted in both directions; ties go to the largest label),
    for ``max_iter`` rounds, with the lineage cut by a local checkpoint each round.
    """
    if graphframes_available(spark):
        from graphframes import GraphFrame

        out = GraphFrame(vertices.select("id"), edges.select("src", "dst")).labelPropagation(maxIter=max_iter)
        return out.select("id", F.col("label").cast("string").alias("label"))
    und = (
        edges.select("src", "dst")
        .unionByName(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
        .where(F.col("src") != F.col("dst"))
        .distinct()
    )
    und = und.localCheckpoint()
    labels = vertices.select("id", F.col("id").cast("string").alias("label")).localCheckpoint()
    for it in range(max_iter):
        msgs = und.join(labels.withColumnRenamed("id", "src"), "src").select(F.col("dst").alias("id"), "label")
        best = (
            msgs.groupBy("id", "label")
            .agg(F.count(F.lit(1)).alias("c"))
            .groupBy("id")
            .agg(F.max(F.struct("c", "label")).alias("b"))
            .select("id", F.col("b.label").alias("new"))
        )
        labels = (
            labels.join(best, "id", "left")
            .select("id", F.coalesce(F.col("new"), F.col("label")).alias("label"))
            .localCheckpoint()
        )
    return labels


def pack_communities(labels: DataFrame, set_size: int, seed: int = 0) -> DataFrame:
    """Turn community labels into sets of at most ``set_size`` nodes.

    Communities larger than ``set_size`` are split into ceil(size / set_size) nearly
    equal parts (each between set_size/2 and set_size). Smaller communities are laid
    end to end in decreasing size order and cut every ``set_size`` nodes, so each such
    set is full (except the last) and a community is split only where it straddles a
    cut. The ordering windows run over communities, not nodes, on the cluster.
    """
    sizes = labels.groupBy("label").agg(F.count(F.lit(1)).alias("size"))
    big = sizes.where(F.col("size") > set_size)
    small = sizes.where(F.col("size") <= set_size)
    order_small = Window.orderBy(F.col("size").desc(), F.col("label"))
    small_off = small.select(
        "label", "size", (F.sum("size").over(order_small) - F.col("size")).alias("offset")
    )
    num_small_nodes = small_off.agg(F.sum("size")).first()[0] or 0
    num_small_sets = math.ceil(num_small_nodes / set_size)
    big_chunks = big.select("label", "size", F.ceil(F.col("size") / set_size).cast("long").alias("chunks"))
    order_big = Window.orderBy(F.col("label"))
    big_off = big_chunks.select(
        "label", "chunks", (F.sum("chunks").over(order_big) - F.col("chunks")).alias("chunk_offset")
    )
    within = Window.partitionBy("label").orderBy(F.xxhash64(F.col("id").cast("string"), F.lit(seed)), F.col("id"))
    ranked = labels.withColumn("rank", F.row_number().over(within) - 1)
    small_sets = ranked.join(small_off, "label").select(
        "id", F.floor((F.col("offset") + F.col("rank")) / set_size).cast("long").alias("set_id")
    )
    big_sets = ranked.join(big_off, "label").select(
        "id",
        (F.lit(num_small_sets) + F.col("chunk_offset") + F.pmod(F.col("rank"), F.col("chunks"))).cast("long").alias(
            "set_id"
        ),
    )
    return small_sets.unionByName(big_sets)


def lp_partition(
    spark: SparkSession,
    vertices: DataFrame,
    edges: DataFrame,
    nodes: DataFrame,
    set_size: int,
    max_iter: int = 10,
    seed: int = 0,
) -> DataFrame:
    """``LP``: label propagation over the whole graph, then :func:`pack_communities`
    over ``nodes`` (the non-landmark nodes to embed)."""
    labels = label_propagation(spark, vertices, edges, max_iter)
    mine = labels.join(nodes.select("id"), "id", "left_semi")
    return pack_communities(mine, set_size, seed)
