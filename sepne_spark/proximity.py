"""Proximity entries (DataFrame joins, and sparse products by block of rows) and the
landmarks' k x k summaries.

M is never materialised densely: it is a DataFrame of its non-zero entries
``(src, dst, m)``. For the ``IO`` setup only the rows and columns of the requested
nodes are built, so the work follows their neighbourhoods instead of the graph.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

METRICS = ("I+A", "A+A2")
SCALINGS = ("none", "log")
_VOLUME_BUCKETS = 1024  # partial sums of the total weight, added up on the driver
MAX_WINDOW = 10
_FIXED_POINT_SCALE = 2.0**58  # walk sums of windows above 2 are in multiples of 2^-58


def check_window(metric: str, window: int) -> None:
    """Raise ``ValueError`` unless ``window`` fits ``metric``.

    The window T is the number of powers of A in ``A+A2`` (M = A + ... + A^T, 2 to
    :data:`MAX_WINDOW`); ``I+A`` has none, so its window must stay 2 (the default).
    """
    if metric == "I+A" and window != 2:
        raise ValueError(f"window={window} applies to metric A+A2 only (M = A + ... + A^window); "
                         "metric I+A has no window")
    if not 2 <= window <= MAX_WINDOW:
        raise ValueError(f"window must be between 2 and {MAX_WINDOW}; got {window}")


def metric_text(metric: str, window: int = 2) -> str:
    """``metric`` as written in logs and summaries, in the words of its settings
    (``--metric``, ``--window``): ``A+A2, window 3`` for M = A + A^2 + A^3."""
    if metric == "A+A2" and window > 2:
        return f"A+A2, window {window}"
    return metric


def ordered_sum(col: Column | str) -> Column:
    """Sum of a double column per group, added up in ascending order of the values.

    ``F.sum`` adds partial sums in the order the shuffle delivers them, which varies
    from run to run and with the partitioning, so the last bits of every sum (and of
    the embeddings built on them) would too. Sorting the terms first makes each sum,
    and so the whole output, the same bit for bit across runs, core counts and input
    splits. The terms of one group are held together, which every sum here affords:
    a node's edges, the paths between two nodes.
    """
    terms = F.array_sort(F.collect_list(col))
    return F.aggregate(terms, F.lit(0.0).cast("double"), lambda acc, x: acc + x)


def transition(edges: DataFrame) -> DataFrame:
    """Row-normalised transition entries ``(src, dst, a)``, a = w(u,v) / s(u).

    Edges of zero weight are dropped; a node whose out-weights sum to zero has no row.
    The out-weight s(u) is a window sum over u's edges in ascending order of weight:
    the additions of :func:`ordered_sum` in the same order (the same bits on every run),
    in one shuffle and without a join back.
    """
    pos = edges.where(F.col("weight") > 0)
    row = Window.partitionBy("src").orderBy("weight", "dst").rowsBetween(
        Window.unboundedPreceding, Window.unboundedFollowing
    )
    return pos.select("src", "dst", (F.col("weight") / F.sum("weight").over(row)).alias("a"))


def _semi(df: DataFrame, nodes: DataFrame | None, col: str) -> DataFrame:
    if nodes is None:
        return df
    return df.join(nodes.select(F.col("id").alias(col)).distinct(), col, "left_semi")


def total_weight(strengths: DataFrame, col: str = "s_in") -> DataFrame:
    """One row, one column ``vol``: the sum of the per-node weights ``col`` of
    ``(dst, col)`` (the total edge weight when they are the in-weights), the same to
    the last bit on every run. Lazy: it is computed where it is joined.

    The weights are summed in order within 1,024 buckets of a hash of the node, and the
    bucket sums in order in one small task (1,024 values).
    """
    parts = strengths.groupBy(F.pmod(F.xxhash64("dst"), F.lit(_VOLUME_BUCKETS)).alias("b")).agg(
        ordered_sum(col).alias("w")
    )
    return parts.agg(ordered_sum("w").alias("vol"))


def _log_scaled(entries: DataFrame, s_in: DataFrame, volume: DataFrame, window: int) -> DataFrame:
    """Entries ``(src, dst, m)`` of a walk matrix as ``log(max(vol * m / (T s_in(dst)),
    1))``, those that become 0 dropped: the ``"log"`` scaling, given the in-weights
    ``(dst, s_in)`` and the one-row total weight ``(vol)``."""
    ratio = F.col("vol") / F.lit(float(window)) * F.col("m") / F.col("s_in")
    return (
        entries.join(s_in, "dst")
        .crossJoin(F.broadcast(volume))
        .select("src", "dst", F.log(F.greatest(ratio, F.lit(1.0))).alias("m"))
        .where(F.col("m") > 0)
    )


def log_ratio(edges: DataFrame) -> DataFrame:
    """The one-hop log-ratio (shifted PMI) matrix as entries ``(src, dst, value)``:
    ``log(max(vol * w(u, v) / (s_out(u) * s_in(v)), 1))`` for every pair with an edge of
    positive weight (repeated pairs added), entries that are 0 dropped: the ``"log"``
    scaling of the transition matrix with a window of 1, the Spark form of
    :func:`sepne_spark.spectral.log_ratio_matrix`. Lazy.
    """
    merged = edges.where(F.col("weight") > 0).groupBy("src", "dst").agg(ordered_sum("weight").alias("weight"))
    s_in = merged.groupBy("dst").agg(ordered_sum("weight").alias("s_in"))
    walks = transition(merged).withColumnRenamed("a", "m")
    return _log_scaled(walks, s_in, total_weight(s_in), 1).withColumnRenamed("m", "value")


@dataclass
class Proximity:
    """Builds entries of M = I + A or M = A + A·A (+ ... + A^window) from the transition entries.

    Parameters
    ----------
    A: transition entries ``(src, dst, a)``.
    vertices: every node ``(id)`` (the identity part of ``I+A`` covers them all).
    metric: ``"I+A"`` or ``"A+A2"``.
    scaling: ``"none"`` or ``"log"``: every entry m of M at column v becomes
        log(max(vol * m / (T s_in(v)), 1)), with vol the total edge weight, s_in(v)
        the weight into v and T the window (a shifted pointwise-mutual-information
        transform, as in NetMF with a window of T). Entries that become 0, and columns of
        nodes without in-edges, are dropped, so M stays sparse.
    edges: the weighted edges ``(src, dst, weight)``; needed for ``"log"``.
    window: T, the number of powers of A in ``"A+A2"``: M = A + A^2 + ... + A^T (the
        default 2 is the paper's A + A^2). Each power is one more join; the entries
        grow roughly as the average degree to the power T, so keep T small on large graphs.
    """

    A: DataFrame
    vertices: DataFrame
    metric: str
    scaling: str = "none"
    edges: DataFrame | None = None
    window: int = 2
    #: Whether the whole graph's rows of A + A^2 are sparse products by block of rows
    #: (:func:`two_step_rows`) rather than one joined Spark row per two-step walk.
    by_block: bool = True

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"unknown metric {self.metric!r}; expected one of {METRICS}")
        check_window(self.metric, self.window)
        if self.scaling not in SCALINGS:
            raise ValueError(f"unknown scaling {self.scaling!r}; expected one of {SCALINGS}")
        if self.scaling == "log" and self.edges is None:
            raise ValueError("scaling 'log' needs the edges (their total weight and in-weights)")
        self._s_in: DataFrame | None = None
        self._volume: DataFrame | None = None

    def _scaled(self, entries: DataFrame) -> DataFrame:
        """Apply the scaling to entries ``(src, dst, m)``.

        The in-weights are aggregated once per :class:`Proximity` (one pass over the
        edges, cached) and the total weight is their sum, joined in as a one-row table
        so that building the entries runs no job.
        """
        if self.scaling == "none":
            return entries
        if self._s_in is None:
            self._s_in = (
                self.edges.where(F.col("weight") > 0)
                .groupBy("dst")
                .agg(ordered_sum("weight").alias("s_in"))
                .persist()
            )
            self._volume = total_weight(self._s_in)
        return _log_scaled(entries, self._s_in, self._volume, self.window)

    @property
    def cached(self) -> list[DataFrame]:
        """The tables this object has persisted (the log scaling's in-weights)."""
        return [] if self._s_in is None else [self._s_in]

    def release(self) -> None:
        """Unpersist the in-weights cached for the log scaling (once the entries that
        need them are computed or cached)."""
        if self._s_in is not None:
            self._s_in.unpersist()
            self._s_in = self._volume = None

    def _identity(self, nodes: DataFrame | None) -> DataFrame:
        base = self.vertices if nodes is None else nodes
        return base.select(F.col("id").alias("src"), F.col("id").alias("dst"), F.lit(1.0).alias("m"))

    def _walks(self, start: DataFrame, forward: bool, ends: DataFrame | None = None) -> DataFrame:
        """Summed entries ``(src, dst, m)`` of A + A^2 + ... + A^window from ``start``.

        ``forward``: ``start`` holds rows of A and each step multiplies by A on the
        right (rows of the powers); otherwise ``start`` holds columns of A and each step
        multiplies by A on the left (columns of the powers).

        ``ends`` (``id``; the window of 2 only): only the entries whose other end (the
        column of a row, the row of a column) is one of these nodes, with the walks'
        last step joined to those nodes' edges alone, so that the joins cost in
        proportion to them. The entries kept are those of the whole rows, unchanged.

        With the window of 2 each entry is an :func:`ordered_sum` of its walks. Longer
        windows have far more walks per entry (a path count of about n d^T for average
        degree d), too many to sort, so each power's entries are added up before the
        next join, and in fixed point: every term is rounded to a multiple of
        2^-58 (about 3.5e-18) and the terms are summed as 64-bit
        integers. Integer addition does not depend on order, so the entries are still
        the same bits on every run, and it aggregates partially before the shuffle.
        Entries of powers of the row-normalised A are at most 1 and of M at most the
        window, so the integers cannot overflow.
        """
        if ends is not None and self.window != 2:
            raise ValueError("the walks' far ends can be restricted with the window of 2 only")
        far_end = "dst" if forward else "src"
        first = start.select("src", "dst", F.col("a").alias("m"))
        last = _semi(self.A, ends, far_end)

        def step(cur: DataFrame) -> DataFrame:
            if forward:
                x, y = cur.alias("x"), last.alias("y")
                value = F.col("x.m") * F.col("y.a")
            else:
                x, y = last.alias("x"), cur.alias("y")
                value = F.col("x.a") * F.col("y.m")
            return x.join(y, F.col("x.dst") == F.col("y.src")).select(
                F.col("x.src").alias("src"), F.col("y.dst").alias("dst"), value.alias("m")
            )

        if self.window == 2:
            parts = _semi(first, ends, far_end).unionByName(step(first))
            return parts.groupBy("src", "dst").agg(ordered_sum("m").alias("m"))

        def fixed(df: DataFrame) -> DataFrame:
            q = F.rint(F.col("m") * F.lit(_FIXED_POINT_SCALE)).cast("long")
            return df.select("src", "dst", q.alias("q"))

        def summed(df: DataFrame) -> DataFrame:
            return df.groupBy("src", "dst").agg(F.sum("q").alias("q"))

        def to_double(df: DataFrame) -> DataFrame:
            return df.select("src", "dst", (F.col("q") / F.lit(_FIXED_POINT_SCALE)).alias("m"))

        # The first power is added up with the others at the end: no sum of its own.
        terms, cur = [fixed(first)], first
        for _ in range(2, self.window + 1):
            terms.append(summed(fixed(step(cur))))
            cur = to_double(terms[-1])
        parts = terms[0]
        for t in terms[1:]:
            parts = parts.unionByName(t)
        return to_double(summed(parts))

    def rows(self, nodes: DataFrame | None = None, ends: DataFrame | None = None) -> DataFrame:
        """Entries ``(src, dst, m)`` of the rows of M for ``nodes`` (all rows if None).

        Every row of A + A^2 (the window of 2) is built by block of rows, as sparse
        products (:func:`two_step_rows`); the rows of some nodes (the landmarks', the
        requested ids'), and longer windows, by joins (:meth:`_walks`). ``ends``
        (``id``): only the entries in these nodes' columns, for the rows of ``nodes``
        of A + A^2 (:meth:`_walks`)."""
        if ends is not None and (self.metric == "I+A" or nodes is None):
            raise ValueError("entries restricted to some columns are for the rows of some nodes of A + A^2")
        if self.metric != "I+A" and nodes is None and self.window == 2 and self.by_block:
            return self._scaled(two_step_rows(self.A))
        Ar = _semi(self.A, nodes, "src")
        if self.metric != "I+A":
            return self._scaled(self._walks(Ar, forward=True, ends=ends))
        parts = Ar.select("src", "dst", F.col("a").alias("m")).unionByName(self._identity(nodes))
        return self._scaled(parts.groupBy("src", "dst").agg(ordered_sum("m").alias("m")))

    def cols(self, nodes: DataFrame | None = None, ends: DataFrame | None = None) -> DataFrame:
        """Entries ``(src, dst, m)`` of the columns of M for ``nodes`` (all if None);
        ``ends``: only those in these nodes' rows, as :meth:`rows`."""
        if ends is not None and (self.metric == "I+A" or nodes is None):
            raise ValueError("entries restricted to some rows are for the columns of some nodes of A + A^2")
        if nodes is None:
            return self.rows(None)
        Ac = _semi(self.A, nodes, "dst")
        if self.metric != "I+A":
            return self._scaled(self._walks(Ac, forward=False, ends=ends))
        parts = Ac.select("src", "dst", F.col("a").alias("m")).unionByName(self._identity(nodes))
        return self._scaled(parts.groupBy("src", "dst").agg(ordered_sum("m").alias("m")))


#: The fewest blocks of :func:`two_step_rows` (a local session has as many shuffle
#: partitions as cores): 64 blocks of a graph of 1.6 x 10^6 edge rows took 25.6 s, 8
#: took 28.5 s (BENCHMARKS.md, "The rows of A + A^2 by block"), and a block's entries
#: are fewer in a Python worker's memory.
TWO_STEP_MIN_BLOCKS = 64


def two_step_rows(A: DataFrame, blocks: int | None = None) -> DataFrame:
    """Entries ``(src, dst, m)`` of A + A^2 for every row of A, as sparse products by
    block of rows: one Spark row per entry, none per two-step walk.

    The rows of A are cut into blocks by a hash of the source; each block receives its
    rows and, once per block, the row of every distinct out-neighbour of its rows (one
    join of the neighbours with A, after a distinct per block), and its task forms
    R + R N with ``scipy.sparse`` (R its rows, N its neighbours' rows), the products of
    an entry added in ascending neighbour id, as the one-task path's A + A A does (so
    the entries do not depend on the blocks or on the order rows arrive in).

    ``blocks``: the number of blocks; by default the session's shuffle partitions, at
    least :data:`TWO_STEP_MIN_BLOCKS` (no job runs to count the rows: the entries stay
    lazy, as a transform's are). A block's task holds its rows, at most one row of A per
    neighbour, and its entries, about 1 / blocks of them all.
    """
    import pandas as pd
    import scipy.sparse as sp
    from pyspark.sql.types import DoubleType, StructField, StructType

    id_type = A.schema["src"].dataType
    if blocks is None:
        try:
            blocks = max(int(A.sparkSession.conf.get("spark.sql.shuffle.partitions")), TWO_STEP_MIN_BLOCKS)
        except (TypeError, ValueError):
            blocks = 200  # Spark's default
    block = F.pmod(F.xxhash64(F.col("src").cast("string"), F.lit(0x5E9E)), F.lit(int(blocks)))
    own = A.select(block.alias("b"), F.lit(0).alias("kind"), "src", "dst", F.col("a").cast("double").alias("a"))
    mids = own.select("b", F.col("dst").alias("mid")).distinct()
    theirs = mids.join(A.withColumnRenamed("src", "mid"), "mid").select(
        "b", F.lit(1).alias("kind"), F.col("mid").alias("src"), "dst", F.col("a").cast("double").alias("a"))
    out_schema = StructType([StructField("src", id_type, False), StructField("dst", id_type, False),
                             StructField("m", DoubleType(), False)])

    def product(pdf: pd.DataFrame) -> pd.DataFrame:
        mine, nb = pdf[pdf["kind"] == 0], pdf[pdf["kind"] == 1]
        rows = np.unique(mine["src"].to_numpy())
        mid = np.unique(mine["dst"].to_numpy())
        cols = np.unique(np.concatenate([mine["dst"].to_numpy(), nb["dst"].to_numpy()]))
        r = np.searchsorted(rows, mine["src"].to_numpy())
        a = mine["a"].to_numpy(dtype=np.float64)
        R = sp.csr_matrix((a, (r, np.searchsorted(cols, mine["dst"].to_numpy()))), shape=(len(rows), len(cols)))
        R_mid = sp.csr_matrix((a, (r, np.searchsorted(mid, mine["dst"].to_numpy()))), shape=(len(rows), len(mid)))
        N = sp.csr_matrix((nb["a"].to_numpy(dtype=np.float64),  # every shipped row is one of mid's
                           (np.searchsorted(mid, nb["src"].to_numpy()), np.searchsorted(cols, nb["dst"].to_numpy()))),
                          shape=(len(mid), len(cols)))
        for m in (R, R_mid, N):
            m.sort_indices()
        P = (R + R_mid @ N).tocoo()
        nz = P.data != 0
        return pd.DataFrame({"src": rows[P.row[nz]], "dst": cols[P.col[nz]], "m": P.data[nz]})

    return own.unionByName(theirs).groupBy("b").applyInPandas(product, schema=out_schema)


@dataclass
class LandmarkBlocks:
    """The landmark rows and columns of M, keyed by landmark index ``l``.

    ``row``: ``(l, v, m)`` = M[landmark l, v]; ``col``: ``(v, l, m)`` = M[v, landmark l].
    ``row_nl``/``col_nl`` keep only non-landmark v (what the global sums run over).
    """

    row: DataFrame
    col: DataFrame
    row_nl: DataFrame
    col_nl: DataFrame


def landmark_blocks(
    M_rows_of_landmarks: DataFrame, M_cols_of_landmarks: DataFrame, landmarks: DataFrame
) -> LandmarkBlocks:
    """Key the landmark rows/columns of M by landmark index.

    ``landmarks`` is ``(id, l)`` with k rows; it is broadcast in the joins.
    """
    lm = F.broadcast(landmarks)
    row = M_rows_of_landmarks.join(lm.withColumnRenamed("id", "src"), "src").select(
        "l", F.col("dst").alias("v"), "m"
    )
    col = M_cols_of_landmarks.join(lm.withColumnRenamed("id", "dst"), "dst").select(
        F.col("src").alias("v"), "l", "m"
    )
    ids = lm.select(F.col("id").alias("v"))
    return LandmarkBlocks(
        row=row,
        col=col,
        row_nl=row.join(ids, "v", "left_anti"),
        col_nl=col.join(ids, "v", "left_anti"),
    )


def _to_dense(rows: list, k: int, i: str, j: str) -> np.ndarray:
    out = np.zeros((k, k))
    if rows:
        ii = np.fromiter((r[i] for r in rows), dtype=np.int64, count=len(rows))
        jj = np.fromiter((r[j] for r in rows), dtype=np.int64, count=len(rows))
        vv = np.fromiter((r["m"] for r in rows), dtype=np.float64, count=len(rows))
        np.add.at(out, (ii, jj), vv)
    return out


#: The fixed number of node buckets the landmark Gram sums S_A and S_B are split into.
#: Each bucket's partial sum is a dense k x k matrix (its upper triangle is shuffled:
#: about 16 x k^2 / 2 values a sum), and the same buckets on every cluster keep the
#: sums the same bit for bit.
GRAM_BUCKETS = 16


def _grams(parts: dict[int, DataFrame], k: int) -> dict[int, np.ndarray]:
    """``{tag: sum over v of x_v x_v^T}`` (k x k), x_v the sparse k-vector of the entries
    ``(v, l, m)`` of ``parts[tag]``.

    Nodes go to :data:`GRAM_BUCKETS` buckets by a hash of their id. Each bucket is one
    task of a partition-wise stage: its entries, in ascending (v, l), make a sparse
    k x p matrix X and the task forms X X^T with SciPy (one upper-triangle row per
    landmark). A second stage adds each row's bucket parts in bucket order. Only the
    k x k results are collected; no Spark row is made per product.
    """
    import pandas as pd  # here, not at the top: the jobs' argument checks import this module
    import scipy.sparse as sp

    entries = None
    for tag, df in parts.items():
        tagged = df.select(F.lit(tag).alias("t"), F.pmod(F.xxhash64("v"), F.lit(GRAM_BUCKETS)).cast("int").alias("b"),
                           "v", F.col("l").cast("int").alias("l"), F.col("m").cast("double").alias("m"))
        entries = tagged if entries is None else entries.unionByName(tagged)

    def partial(pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values(["v", "l"], kind="stable")
        nodes, distinct = pd.factorize(pdf["v"], sort=True)
        X = sp.csr_matrix((pdf["m"].to_numpy(np.float64), (pdf["l"].to_numpy(np.int64), nodes)),
                          shape=(k, len(distinct)))
        G = (X @ X.T).toarray()
        rows = np.flatnonzero(G.any(axis=1))
        return pd.DataFrame({"t": np.full(len(rows), int(pdf["t"].iloc[0]), np.int32),
                             "i": rows.astype(np.int32), "b": np.full(len(rows), int(pdf["b"].iloc[0]), np.int32),
                             "g": [G[i, i:].astype("<f8").tobytes() for i in rows]})

    def total(pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values("b")
        out = np.zeros(k - int(pdf["i"].iloc[0]))
        for g in pdf["g"]:
            out += np.frombuffer(g, dtype="<f8")
        return pd.DataFrame({"t": [int(pdf["t"].iloc[0])], "i": [int(pdf["i"].iloc[0])],
                             "g": [out.astype("<f8").tobytes()]})

    rows = (entries.groupBy("t", "b").applyInPandas(partial, "t int, i int, b int, g binary")
            .groupBy("t", "i").applyInPandas(total, "t int, i int, g binary").collect())
    out = {tag: np.zeros((k, k)) for tag in parts}
    for r in rows:
        out[r["t"]][r["i"], r["i"]:] = np.frombuffer(r["g"], dtype="<f8")
    for G in out.values():
        upper = np.triu(G)
        G[:] = upper + np.triu(upper, 1).T
    return out


def landmark_summaries(blocks: LandmarkBlocks, landmarks: DataFrame, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M00, S_A and S_B (each k x k); only O(k^2) values are collected.

    M00 = M[V0, V0]; S_A = sum_v M_0v M_0v^T and S_B = sum_v M_v0^T M_v0 over the
    non-landmark nodes v, sparse products per bucket of nodes (:func:`_grams`).
    """
    lm = F.broadcast(landmarks.select(F.col("id").alias("v"), F.col("l").alias("j")))
    M00 = _to_dense(blocks.row.join(lm, "v").select(F.col("l").alias("i"), "j", "m").collect(), k, "i", "j")
    grams = _grams({1: blocks.row_nl, 2: blocks.col_nl}, k)
    return M00, grams[1], grams[2]
