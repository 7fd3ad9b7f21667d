"""Spark helpers of the evaluations: seeded hashing, dot products of array columns,
node indexing and uniform sampling of node pairs."""
from __future__ import annotations

import logging
import math

from sepne_spark.errors import InputError

log = logging.getLogger(__name__)

try:  # Spark is a dependency of the package, but the NumPy half works without it
    from pyspark.sql import Column, DataFrame, SparkSession, Window
    from pyspark.sql import functions as F
except ImportError:  # pragma: no cover
    Column = DataFrame = SparkSession = Window = F = None  # type: ignore[assignment,misc]


# ---------------------------------------------------------------------------
# Spark helpers: hashing, dot products, pair sampling
# ---------------------------------------------------------------------------

_UNIT = float(1 << 53)


def _uniform(seed: int, salt: int, *cols: Column) -> Column:
    """Seeded uniform in [0, 1) from ``cols`` (cast to string), independent of layout."""
    h = F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(int(salt)).cast("int"), *[c.cast("string") for c in cols])
    return F.pmod(h, F.lit(1 << 53)).cast("double") / _UNIT


def dot_column(a: str | Column, b: str | Column) -> Column:
    """Dot product of two array columns of equal length (null when either is null)."""
    a = F.col(a) if isinstance(a, str) else a
    b = F.col(b) if isinstance(b, str) else b
    return F.aggregate(
        F.zip_with(a, b, lambda x, y: x.cast("double") * y.cast("double")),
        F.lit(0.0).cast("double"),
        lambda acc, x: acc + x,
    )


def _as_array(df: DataFrame, name: str) -> Column:
    """Column ``name`` of ``df`` as ``array<double>`` (ML vectors are converted)."""
    dtype = df.schema[name].dataType
    if type(dtype).__name__ == "VectorUDT":
        from pyspark.ml.functions import vector_to_array

        return vector_to_array(F.col(name))
    return F.col(name).cast("array<double>")


def _index_nodes(
    nodes: DataFrame, seed: int, buckets: int = 64, count_also: DataFrame | None = None
) -> tuple[DataFrame, int, int]:
    """Give each node a dense index 0..n-1 in a seeded order, without a global sort.

    Nodes are hashed into ``buckets`` buckets, numbered within each bucket by a window
    and offset by the sizes of the buckets before (``buckets`` numbers reach the driver).
    The rows of ``count_also`` are counted in the same Spark job (0 when not given).

    Returns
    -------
    indexed, n, counted
        ``(id, idx)`` rows, the number of nodes and the row count of ``count_also``.
    """
    h = F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(7).cast("int"), F.col("id").cast("string"))
    keyed = nodes.select("id").distinct().withColumn("_h", h).withColumn("_bk", F.pmod(F.col("_h"), F.lit(buckets)))
    sizes_df = keyed.groupBy("_bk").count()
    if count_also is not None:
        sizes_df = sizes_df.unionByName(count_also.groupBy(F.lit(-1).cast("long").alias("_bk")).count())
    sizes = {r["_bk"]: r["count"] for r in sizes_df.collect()}
    counted = int(sizes.pop(-1, 0))
    offsets, acc = [], 0
    for b in range(buckets):
        offsets.append((b, acc))
        acc += int(sizes.get(b, 0))
    spark = nodes.sparkSession
    off = spark.createDataFrame(offsets, "_bk long, _off long")
    w = Window.partitionBy("_bk").orderBy("_h", F.col("id").cast("string"))
    indexed = (
        keyed.join(F.broadcast(off), "_bk")
        .withColumn("idx", F.col("_off") + F.row_number().over(w) - 1)
        .select("id", "idx")
    )
    return indexed, acc, counted


def _sample_pairs(
    nodes: DataFrame,
    exclude: DataFrame,
    n: int,
    seed: int,
    directed: bool,
    allow_self: bool,
    n_excluded_hint: int | None = None,
    indexed_nodes: tuple[DataFrame, int] | None = None,
) -> DataFrame:
    """Sample ``n`` distinct node pairs (src, dst) not in ``exclude``, uniformly.

    ``exclude`` has columns (src, dst); for undirected sampling both it and the result
    are in canonical orientation (src <= dst as compared by Spark). Candidates are drawn
    with seeded hashes of a ``range``, rejected, de-duplicated, and the ``n`` with the
    smallest hash kept, so the result depends on the data and the seed only.
    """
    spark = nodes.sparkSession
    excl = exclude.select("src", "dst").distinct()
    if indexed_nodes is not None and n_excluded_hint is not None:
        (indexed, N), counted = indexed_nodes, n_excluded_hint
    else:
        indexed, N, counted = _index_nodes(nodes, seed, count_also=excl if n_excluded_hint is None else None)
    if N == 0 or n <= 0:
        return spark.createDataFrame([], exclude.select("src", "dst").schema)
    total_pairs = N * N if allow_self else N * (N - 1)
    if not directed:
        total_pairs = (N * (N + 1)) // 2 if allow_self else (N * (N - 1)) // 2
    n_excl = counted if n_excluded_hint is None else n_excluded_hint
    available = total_pairs - n_excl
    if available < n:
        short = InputError(f"asked for {n} pairs but only {max(available, 0)} are available")
        short.available = max(available, 0)  # type: ignore[attr-defined]
        raise short
    accept = max(available / total_pairs, 1e-3)
    idx_u = indexed.select(F.col("idx").alias("_iu"), F.col("id").alias("src"))
    idx_v = indexed.select(F.col("idx").alias("_iv"), F.col("id").alias("dst"))
    found: DataFrame | None = None
    have = 0
    draws = 0
    factor = 1.3
    for attempt in range(12):
        # Candidates needed so that ~n survive rejection and de-duplication.
        want = int(math.ceil((n - have) * factor / accept)) + 64
        cand = spark.range(draws, draws + want).select(
            F.pmod(F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(1).cast("int"), "id"), F.lit(N)).alias("_iu"),
            F.pmod(F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(2).cast("int"), "id"), F.lit(N)).alias("_iv"),
        )
        draws += want
        pairs = cand.join(idx_u, "_iu").join(idx_v, "_iv").select("src", "dst")
        if not allow_self:
            pairs = pairs.where(F.col("src") != F.col("dst"))
        if not directed:
            pairs = pairs.select(F.least("src", "dst").alias("src"), F.greatest("src", "dst").alias("dst"))
        pairs = pairs.join(excl, ["src", "dst"], "left_anti")
        found = pairs if found is None else found.unionByName(pairs)
        found = found.distinct()
        have = int(found.count())
        if have >= n:
            break
        factor *= 2.0
    else:
        raise InputError(f"could only sample {have} of {n} pairs")
    assert found is not None
    s_src, s_dst = F.col("src").cast("string"), F.col("dst").cast("string")
    key = F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(3).cast("int"), s_src, s_dst)
    return found.withColumn("_k", key).orderBy("_k", s_src, s_dst).limit(n).drop("_k")
