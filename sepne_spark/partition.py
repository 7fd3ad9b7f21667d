"""Splitting the non-landmark nodes into sets: ``RP``, ``LP`` and ``IO``.

Every function returns a DataFrame ``(id, set_id)`` with ``set_id`` a long; nothing of
size n reaches the driver (only counts).
"""
from __future__ import annotations

import logging
import math
from functools import partial

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import IntegralType

from sepne_spark.session import checkpoint, resolve_graphframes

log = logging.getLogger(__name__)

SETUPS = ("RP", "LP", "IO")
LP_HASH_SEED = 1_000_003  # keys of non-integral ids in label propagation


def hash_seed(seed: int, offset: int) -> int:
    """``seed + offset`` as the signed 64-bit seed of ``xxhash64``, wrapped modulo 2^64:
    the sum itself for every seed but the largest ones, which would overflow Spark's long."""
    return (int(seed) + int(offset) + 2**63) % 2**64 - 2**63


def _hash_sets(nodes: DataFrame, set_size: int, seed: int) -> DataFrame:
    """``(id, set_id)``: each node to one of ceil(n / set_size) sets by a seeded hash.

    The node count n is joined in as a one-row aggregate, so no job runs until the
    sets are used.
    """
    count = nodes.agg(F.count(F.lit(1)).alias("_n"))
    num_sets = F.greatest(F.lit(1), F.ceil(F.col("_n") / F.lit(int(set_size))))
    key = F.xxhash64(F.col("id").cast("string"), F.lit(hash_seed(seed, 7919)))
    return nodes.crossJoin(F.broadcast(count)).select("id", F.pmod(key, num_sets).cast("long").alias("set_id"))


def random_partition(nodes: DataFrame, set_size: int, seed: int = 0) -> DataFrame:
    """``RP``: each node to one of ceil(n / set_size) sets by a seeded hash of its id."""
    return _hash_sets(nodes, set_size, seed)


def requested_partition(requested: DataFrame, set_size: int, seed: int = 0) -> DataFrame:
    """``IO``: only the requested nodes, hashed into sets of about ``set_size``."""
    return _hash_sets(requested.select("id").distinct(), set_size, seed)


def _vertex_key(col: Column, integral: bool, salt: int) -> Column:
    """The long key label propagation runs on: the id itself for integral ids, else a
    seeded 63-bit hash of it (so that ties break the same way whatever the partitioning)."""
    if integral:
        return col.cast("long")
    return F.shiftright(F.xxhash64(col, F.lit(LP_HASH_SEED + salt)), 1)


def _keyed(vertices: DataFrame, edges: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """``(id, key)`` for every vertex, the vertices ``(id=key)`` and edges ``(src, dst)`` in keys.

    Integral ids are their own keys. Other ids are hashed; the number of distinct keys is
    checked against the number of vertices (a collision, about 1 in 10^7 at 10^6 nodes,
    moves to the next salt).
    """
    integral = isinstance(vertices.schema["id"].dataType, IntegralType)
    for salt in range(8):
        key = partial(_vertex_key, integral=integral, salt=salt)
        ids = vertices.select("id", key(F.col("id")).alias("key"))
        if not integral:
            c = ids.agg(F.count(F.lit(1)).alias("n"), F.count_distinct("key").alias("k")).first()
            if c["n"] != c["k"]:
                log.info("label propagation: %d hash collisions among %d ids; rehashing", c["n"] - c["k"], c["n"])
                continue
        kv = ids.select(F.col("key").alias("id"))
        ke = edges.select(key(F.col("src")).alias("src"), key(F.col("dst")).alias("dst"))
        return ids, kv, ke
    raise RuntimeError("label propagation: vertex id hashes collide for every salt")  # pragma: no cover


def _lp_dataframes(vertices: DataFrame, edges: DataFrame, max_iter: int) -> DataFrame:
    """GraphFrames' (GraphX) label propagation written with DataFrame joins.

    Every edge sends each end's label to the other end (so an undirected neighbour
    counts once per edge in either direction, a self-loop twice to itself); a vertex
    takes the most frequent label it receives, the smallest on ties, and a vertex that
    receives nothing keeps its label. ``max_iter`` synchronous rounds, the lineage cut
    by a checkpoint each round (:func:`sepne_spark.session.checkpoint`).
    """
    # Each edge in both directions, once: a round is then one join with the labels.
    sends = checkpoint(edges.select("src", "dst").unionByName(
        edges.select(F.col("dst").alias("src"), F.col("src").alias("dst"))))
    start = checkpoint(vertices.select("id", F.col("id").alias("label")))
    labels = start
    for _ in range(max_iter):
        best = (
            sends.join(labels.withColumnRenamed("id", "src"), "src").select(F.col("dst").alias("id"), "label")
            .groupBy("id", "label")
            .agg(F.count(F.lit(1)).alias("c"))
            .groupBy("id")
            # the largest count, then the smallest label (bitwise NOT reverses the order
            # of longs without overflow)
            .agg(F.max(F.struct("c", F.bitwise_not(F.col("label")).alias("nl"))).alias("b"))
            .select("id", F.bitwise_not(F.col("b.nl")).alias("new"))
        )
        # A vertex that receives nothing is in no edge, so its label is still its own:
        # the round reads the labels of the round before once.
        labels = checkpoint(
            start.join(best, "id", "left").select("id", F.coalesce(F.col("new"), F.col("label")).alias("label"))
        )
    return labels


def label_propagation(
    spark: SparkSession,
    vertices: DataFrame,
    edges: DataFrame,
    max_iter: int = 10,
    use_graphframes: bool | None = None,
) -> DataFrame:
    """Community labels ``(id, label)`` by synchronous label propagation.

    Runs GraphFrames' ``labelPropagation`` (its GraphX implementation) when GraphFrames
    is on the session, otherwise the same algorithm with DataFrame joins
    (:func:`_lp_dataframes`); both give the same labels. The algorithm runs on long
    keys: integral ids themselves, other ids a seeded hash of them, so that its
    tie-breaking (smallest label) and hence the result do not depend on how Spark
    partitions or numbers the vertices.

    Parameters
    ----------
    spark : SparkSession
        Session (classic or Spark Connect).
    vertices : DataFrame
        ``(id, ...)``, one row per vertex.
    edges : DataFrame
        ``(src, dst, ...)``; direction is ignored, duplicates count as often as they occur.
    max_iter : int
        Rounds of label propagation.
    use_graphframes : bool, optional
        ``None`` (default): GraphFrames when it is available. ``True``: GraphFrames, an
        error when it is not. ``False``: the DataFrame implementation.

    Returns
    -------
    DataFrame
        ``(id, label)``, ``label`` a long (the key of the vertex the label started at),
        materialised (:func:`sepne_spark.session.checkpoint`).
    """
    if max_iter < 1:
        raise ValueError(f"label propagation needs at least one round, got max_iter={max_iter}")
    via_gf = resolve_graphframes(spark, use_graphframes, "label propagation")
    ids, kv, ke = _keyed(vertices, edges)
    if via_gf:
        from graphframes import GraphFrame

        log.info("label propagation: GraphFrames labelPropagation (graphx), %d rounds", max_iter)
        out = GraphFrame(kv, ke).labelPropagation(maxIter=max_iter, algorithm="graphx")
        keyed = checkpoint(out.select("id", F.col("label").cast("long").alias("label")))
        out.unpersist()  # GraphFrames returns its result persisted; the checkpoint holds it now
    else:
        log.info("label propagation: DataFrame implementation, %d rounds", max_iter)
        keyed = _lp_dataframes(kv, ke, max_iter)
    return ids.join(keyed.withColumnRenamed("id", "key"), "key").select("id", "label")


#: Buckets of the small communities' offsets (:func:`pack_communities`): each bucket's
#: communities are ordered in a task of their own, and one row per bucket reaches the driver.
PACK_BUCKETS = 1024
#: Most large communities (more nodes than a set holds) whose set offsets
#: :func:`pack_communities` broadcasts: 24 bytes each, 2.4 MB at most.
BROADCAST_LARGE_COMMUNITIES = 100_000


def pack_communities(labels: DataFrame, set_size: int, seed: int = 0) -> DataFrame:
    """Turn community labels into sets of at most ``set_size`` nodes.

    Communities larger than ``set_size`` are split into ceil(size / set_size) nearly
    equal parts (each between set_size/2 and set_size). Smaller communities are laid
    end to end and cut every ``set_size`` nodes, so each such set is full (except the
    last) and a community is split only where it straddles a cut (first-fit decreasing,
    which keeps each small community whole, would need every community's size in one
    place: O(communities) rows on the driver or in one task). They are spread over
    :data:`PACK_BUCKETS` buckets by a hash of the label, and laid bucket after bucket,
    in decreasing size order within a bucket. The large communities' sets follow the
    small ones', numbered bucket after bucket (the same buckets), in the order of the
    label within a bucket. Every ordering window runs over one bucket's communities,
    never over all of them in one task, and a large community's nodes are ranked in
    ranges of about ``set_size`` nodes, never all in one task; the driver receives one
    row per bucket. The large communities' offsets reach the nodes by a broadcast join
    while there are at most :data:`BROADCAST_LARGE_COMMUNITIES` of them, otherwise by a
    shuffled join (a community's nodes then meet its one offset row in one task; Spark's
    adaptive execution splits such a task where the community is large).
    """
    bucket = F.pmod(F.xxhash64(F.col("label").cast("string"), F.lit(hash_seed(seed, 7919))), F.lit(PACK_BUCKETS))
    chunks = F.ceil(F.col("size") / F.lit(int(set_size))).cast("long")
    sizes = labels.groupBy("label").agg(F.count(F.lit(1)).alias("size")).select(
        "label", "size", bucket.cast("int").alias("bucket"),
        F.when(F.col("size") > set_size, chunks).otherwise(F.lit(0).cast("long")).alias("chunks"))
    small, big = sizes.where(F.col("chunks") == 0), sizes.where(F.col("chunks") > 0)
    # Per bucket: the small communities' nodes, the large ones' sets and their number.
    totals = sorted(
        (int(r["bucket"]), int(r["nodes"]), int(r["sets"]), int(r["large"]))
        for r in sizes.groupBy("bucket").agg(
            F.sum(F.when(F.col("chunks") == 0, F.col("size")).otherwise(0)).alias("nodes"),
            F.sum("chunks").alias("sets"),
            F.count(F.when(F.col("chunks") > 0, 1)).alias("large"),
        ).collect()
    )
    small_running = sum(t[1] for t in totals)
    num_small_sets = math.ceil(small_running / set_size)
    bases, node_base, set_base = [], 0, num_small_sets
    for b, nodes, sets, _ in totals:
        bases.append((b, node_base, set_base))
        node_base += nodes
        set_base += sets
    spark = labels.sparkSession
    base = F.broadcast(spark.createDataFrame(bases or [(0, 0, 0)], "bucket int, base long, set_base long"))
    within = Window.partitionBy("bucket").orderBy(F.col("size").desc(), F.col("label")).rowsBetween(
        Window.unboundedPreceding, Window.currentRow)
    small_off = small.join(base, "bucket").select(
        "label", "size", (F.col("base") + F.sum("size").over(within) - F.col("size")).alias("offset")
    )
    order_big = Window.partitionBy("bucket").orderBy(F.col("label")).rowsBetween(
        Window.unboundedPreceding, Window.currentRow)
    big_off = big.join(base, "bucket").select(
        "label", "chunks", (F.col("set_base") + F.sum("chunks").over(order_big) - F.col("chunks")).alias("set_offset")
    )
    if sum(t[3] for t in totals) <= BROADCAST_LARGE_COMMUNITIES:
        big_off = F.broadcast(big_off)
    # A community's nodes are ranked by a seeded hash of the id (then the id).
    hashed = labels.withColumn("h", F.xxhash64(F.col("id").cast("string"), F.lit(seed)))
    ranked_within = Window.partitionBy("label").orderBy("h", "id")  # a small community: at most set_size rows
    small_sets = hashed.join(small_off, "label").select(
        "id", F.floor((F.col("offset") + F.row_number().over(ranked_within) - 1) / set_size).cast("long")
        .alias("set_id")
    )
    # A large community is ranked in `chunks` ranges of the hash, each about set_size
    # nodes, so that no task sorts the whole community: a range's rank plus the sizes of
    # the ranges before it is the rank in the whole community (the hash's ranges keep
    # its order), and the sets are the same as with one ranking.
    big_nodes = hashed.join(big_off, "label").withColumn("range", F.least(
        F.floor((F.col("h").cast("double") + 2.0 ** 63) / 2.0 ** 64 * F.col("chunks")).cast("long"),
        F.col("chunks") - 1,
    ))
    ranges = big_nodes.groupBy("label", "range").agg(F.count(F.lit(1)).alias("in_range"))
    before = Window.partitionBy("label").orderBy("range")  # a community's ranges: chunks rows
    ranges = ranges.select("label", "range", (F.sum("in_range").over(before) - F.col("in_range")).alias("start"))
    in_range = Window.partitionBy("label", "range").orderBy("h", "id")
    rank = F.col("start") + F.row_number().over(in_range) - 1
    big_sets = big_nodes.join(ranges, ["label", "range"]).select(
        "id",
        (F.col("set_offset") + F.pmod(rank, F.col("chunks"))).cast("long").alias("set_id"),
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
    use_graphframes: bool | None = None,
) -> DataFrame:
    """``LP``: label propagation over the whole graph, then :func:`pack_communities`
    over ``nodes`` (the non-landmark nodes to embed).

    ``use_graphframes`` is passed to :func:`label_propagation` (``None``: GraphFrames
    when available)."""
    labels = label_propagation(spark, vertices, edges, max_iter, use_graphframes=use_graphframes)
    mine = labels.join(nodes.select("id"), "id", "left_semi")
    return pack_communities(mine, set_size, seed)
