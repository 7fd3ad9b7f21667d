"""Synthetic graphs for tests and benchmarks: stochastic block models and R-MAT.

Every random choice is a function of the edge index, the seed and a stream number (a
splitmix64-style hash), so a graph depends only on its parameters and its seed: not on
the number of partitions, the executors or the order in which tasks run (``F.rand``
would not do, its stream depends on the partitioning). The edges are computed with
NumPy inside :meth:`DataFrame.mapInArrow` over a small :meth:`SparkSession.range` of
chunk numbers, each chunk producing a contiguous block of edge indices in vectorised
form; nothing is collected to the driver. (Built from column expressions instead, the
repeated hashing of an R-MAT draw or of a Feistel round makes Catalyst inline ever
larger expression trees when it pushes filters down, so the arithmetic lives in NumPy,
where 64-bit multiplication wraps as the hash needs.)

The same edges are available without Spark from :func:`sbm_edges_numpy` and
:func:`dcsbm_edges_numpy` (plain NumPy over all edge indices, for benchmarks and
single-machine oracles): both paths call the same per-edge draw.

Edges come back as ``src long, dst long`` without self-loops or repeated edges. An
undirected edge is stored once, as ``src < dst``; a directed graph keeps ``(u, v)`` and
``(v, u)`` as two edges. The executors need this package, NumPy and PyArrow.

The writers (:func:`write_edges`, :func:`write_labels`, :func:`write_table`) write TSV
(Spark's CSV writer, tab-separated, no header) or Parquet into a hidden temporary sibling
of the target and rename it into place only once the write has succeeded, so an
interrupted run never leaves a half-written table at the final path; they use the
storage layer of the embed job (:mod:`sepne_spark.storage`: the same path rules and the
same recovery after a killed run).
"""
from __future__ import annotations

import math
import posixpath
import re
from typing import Callable, Iterator, Literal

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sepne_spark import storage
from sepne_spark.errors import SettingError

__all__ = [
    "sbm_graph",
    "sbm_edges_numpy",
    "dcsbm_graph",
    "dcsbm_edges_numpy",
    "dcsbm_expected_degrees",
    "rmat_graph",
    "sbm_edge_count",
    "output_exists",
    "write_table",
    "write_edges",
    "write_labels",
]

Format = Literal["tsv", "parquet"]

EDGE_SCHEMA = "src long, dst long"

# Uniform numbers are the top 53 bits of a 64-bit hash, compared against integer
# thresholds: exact, and the same on every platform.
_UNIT_BITS = 53
_UNIT = 1 << _UNIT_BITS
_MAX_SCALE = 62  # node ids of an R-MAT graph must fit a non-negative long
_FEISTEL_ROUNDS = 4
_CHUNK_ROWS = 1 << 18  # edge indices per generated Arrow batch

# Hash streams: each random decision of an edge reads its own stream.
_S_SRC, _S_CHOICE, _S_DST = 0, 1, 2
_S_WEIGHT = 3  # per-node degree weights of the degree-corrected SBM (hash of the node id)
_S_RMAT_LEVEL = 16  # levels use streams 16 .. 16 + scale - 1
_S_PERMUTE = 1024  # Feistel rounds use streams 1024 .. 1024 + rounds - 1

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


def _mix64_int(z: int) -> int:
    """The splitmix64 finaliser on a Python int (a bijection of 64-bit words)."""
    z &= _M64
    z = ((z ^ (z >> 30)) * _MIX1) & _M64
    z = ((z ^ (z >> 27)) * _MIX2) & _M64
    return z ^ (z >> 31)


def _stream_key(seed: int, stream: int) -> np.uint64:
    """The 64-bit key of hash stream ``stream`` under ``seed``."""
    return np.uint64(_mix64_int(_mix64_int(seed & _M64) ^ ((stream * _GOLDEN) & _M64)))


def _mix64(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser on a ``uint64`` array (wrapping arithmetic)."""
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(_MIX1)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(_MIX2)
    return z ^ (z >> np.uint64(31))


def _hash(x: np.ndarray, key: np.uint64) -> np.ndarray:
    """64-bit hash of the ``uint64`` values ``x`` under a stream key (a bijection of x)."""
    return _mix64(x * np.uint64(_GOLDEN) + key)


def _unit_bits(h: np.ndarray) -> np.ndarray:
    """The top 53 bits of hashes ``h``: uniform on ``[0, 2**53)``."""
    return h >> np.uint64(64 - _UNIT_BITS)


def _threshold(p: float) -> np.uint64:
    """Integer threshold ``t`` with ``P(unit_bits < t) == p`` (to 2**-53)."""
    return np.uint64(int(round(min(max(p, 0.0), 1.0) * _UNIT)))


def _check_seed(seed: int) -> int:
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 63):
        raise SettingError(f"seed must fit a signed 64-bit integer, got {seed}")
    return seed


def _check_partitions(partitions: int | None) -> int | None:
    if partitions is None:
        return None
    partitions = int(partitions)
    if partitions < 1:
        raise SettingError(f"partitions must be positive, got {partitions}")
    return partitions


def _canonical(src: np.ndarray, dst: np.ndarray, directed: bool) -> pa.RecordBatch:
    """Drop self-loops, order undirected pairs as ``src < dst``; an Arrow batch."""
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    return pa.RecordBatch.from_arrays(
        [pa.array(src.astype(np.int64)), pa.array(dst.astype(np.int64))], names=["src", "dst"]
    )


def _generate(
    spark: SparkSession,
    count: int,
    draw: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    directed: bool,
    partitions: int | None,
) -> DataFrame:
    """Edges ``draw(indices)`` for the edge indices ``0 .. count - 1``, de-duplicated.

    ``draw`` maps a ``uint64`` array of edge indices to ``(src, dst)`` ``uint64`` arrays
    and must depend on nothing else. The indices are cut into chunks of at most
    ``_CHUNK_ROWS`` (fewer when ``partitions`` asks for more parallelism); the chunking
    does not change the result.
    """
    chunk = _CHUNK_ROWS
    if partitions is not None and count > 0:
        chunk = max(1, min(chunk, -(-count // partitions)))
    chunks = -(-count // chunk) if count > 0 else 0
    if partitions is None:
        ids = spark.range(0, chunks, 1)
    else:
        ids = spark.range(0, chunks, 1, max(1, min(partitions, chunks)))

    def edges_of_chunks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for k in batch.column(0).to_numpy():
                lo = int(k) * chunk
                hi = min(lo + chunk, count)
                src, dst = draw(np.arange(lo, hi, dtype=np.uint64))
                yield _canonical(src, dst, directed)

    pairs = ids.mapInArrow(edges_of_chunks, EDGE_SCHEMA)
    # Shuffle the raw pairs by both columns and de-duplicate after the shuffle: nearly
    # all pairs are distinct, so a map-side partial aggregation would only cost memory.
    # The hash-partitioning satisfies the aggregation, which adds no second shuffle.
    if partitions is None:
        pairs = pairs.repartition("src", "dst")
    else:
        pairs = pairs.repartition(partitions, "src", "dst")
    return pairs.dropDuplicates(["src", "dst"])


def _edges_numpy(
    count: int, draw: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], directed: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The edges :func:`_generate` produces, computed with NumPy alone.

    Returns ``(src, dst)`` ``int64`` arrays without self-loops or repeated edges
    (``src < dst`` when undirected), sorted by ``(src, dst)``.
    """
    srcs, dsts = [], []
    for lo in range(0, count, _CHUNK_ROWS):
        hi = min(lo + _CHUNK_ROWS, count)
        src, dst = draw(np.arange(lo, hi, dtype=np.uint64))
        keep = src != dst
        src, dst = src[keep].astype(np.int64), dst[keep].astype(np.int64)
        if not directed:
            src, dst = np.minimum(src, dst), np.maximum(src, dst)
        srcs.append(src)
        dsts.append(dst)
    if not srcs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pairs = np.unique(np.stack([np.concatenate(srcs), np.concatenate(dsts)], axis=1), axis=0)
    return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])


def _check_sbm(nodes: int, communities: int, avg_degree: float, mixing: float,
               directed: bool = False) -> tuple[int, int]:
    nodes, communities = int(nodes), int(communities)
    if nodes < 1:
        raise SettingError(f"nodes must be positive, got {nodes}")
    if nodes >= 1 << 63:
        raise SettingError(f"nodes must be below 2^63 (ids are 64-bit integers), got {nodes}")
    if not 1 <= communities <= nodes:
        raise SettingError(f"communities must be in [1, nodes={nodes}], got {communities}")
    if not avg_degree > 0:
        raise SettingError(f"avg_degree must be positive (0 draws no edge), got {avg_degree}")
    if nodes * avg_degree / (1.0 if directed else 2.0) >= 2.0 ** 63:
        raise SettingError(f"nodes x avg_degree{'' if directed else ' / 2'} (the count of drawn edges) must be "
                           f"below 2^63, got {nodes} x {avg_degree:g}{'' if directed else ' / 2'}")
    if not 0.0 <= mixing <= 1.0:
        raise SettingError(f"mixing must be in [0, 1], got {mixing}")
    return nodes, communities


def _check_rmat(scale: int, edges: int, a: float, b: float, c: float) -> tuple[int, int]:
    scale, edges = int(scale), int(edges)
    if not 1 <= scale <= _MAX_SCALE:
        raise SettingError(f"scale must be in [1, {_MAX_SCALE}], got {scale}")
    if edges < 0:
        raise SettingError(f"edges must be non-negative, got {edges}")
    if edges >= 1 << 63:
        raise SettingError(f"edges must be below 2^63, got {edges}")
    if any(not p >= 0.0 for p in (a, b, c)) or a + b + c > 1.0 + 1e-12:
        raise SettingError(f"need a, b, c >= 0 and a + b + c <= 1, got a={a}, b={b}, c={c}")
    return scale, edges


def sbm_edge_count(nodes: int, avg_degree: float, directed: bool = False) -> int:
    """Number of edges :func:`sbm_graph` draws before removing self-loops and repeats.

    ``nodes * avg_degree / 2`` for an undirected graph (each edge adds to two degrees),
    ``nodes * avg_degree`` for a directed one (``avg_degree`` is then the mean
    out-degree), rounded to the nearest integer.
    """
    return int(round(nodes * avg_degree / (1.0 if directed else 2.0)))


def _sbm_draw(
    nodes: int, communities: int, mixing: float, seed: int
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The per-edge draw of :func:`sbm_graph` as a vectorised function of edge indices."""
    n = np.uint64(nodes)
    c = np.uint64(communities)
    base, extra = divmod(nodes, communities)
    base_u, extra_u = np.uint64(base), np.uint64(extra)
    k_src, k_choice, k_dst = (_stream_key(seed, s) for s in (_S_SRC, _S_CHOICE, _S_DST))
    t_intra = _threshold(1.0 - mixing)

    def draw(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        src = _hash(idx, k_src) % n
        h = _hash(idx, k_dst)
        intra = _unit_bits(_hash(idx, k_choice)) < t_intra
        community = src % c
        size = base_u + (community < extra_u).astype(np.uint64)
        inside = community + c * (h % size)
        dst = np.where(intra, inside, h % n)
        return src, dst

    return draw


def sbm_graph(
    spark: SparkSession,
    nodes: int,
    communities: int,
    avg_degree: float,
    mixing: float,
    seed: int,
    directed: bool = False,
    partitions: int | None = None,
) -> tuple[DataFrame, DataFrame]:
    """Stochastic block model graph with planted, balanced communities.

    Node ``i`` belongs to community ``i mod communities`` (community sizes differ by at
    most one). Edge number ``e`` picks its source uniformly among all nodes; with
    probability ``1 - mixing`` its destination is uniform within the source's
    community, otherwise uniform over all nodes. The expected fraction of
    intra-community edges is therefore ``1 - mixing + mixing / communities`` (before
    self-loops are dropped).

    Parameters
    ----------
    spark : SparkSession
        Session to build the DataFrames in.
    nodes : int
        Number of nodes, ids ``0 .. nodes - 1``.
    communities : int
        Number of planted communities, ``1 <= communities <= nodes``.
    avg_degree : float
        Target mean degree (mean out-degree when ``directed``). The generator draws
        :func:`sbm_edge_count` edges; dropping self-loops and repeated edges leaves
        slightly fewer (a fraction of about ``communities / nodes`` for sparse graphs).
    mixing : float
        Probability in ``[0, 1]`` that an edge's destination ignores the communities.
    seed : int
        Seed (signed 64-bit). The same seed and parameters give the same graph whatever
        the number of partitions.
    directed : bool, default False
        Keep edges as drawn (directed) instead of as unordered pairs ``src < dst``.
    partitions : int, optional
        Partitions of the returned edges (and at least as many generating tasks when
        there are enough edges); the session's defaults when omitted.

    Returns
    -------
    edges : DataFrame
        ``src long, dst long``; no self-loops, no repeated edges; ``src < dst`` when
        undirected.
    labels : DataFrame
        ``node long, label int``: the planted community of every node.

    Raises
    ------
    SettingError
        If a parameter is out of range (a ``ValueError``).
    """
    nodes, communities = _check_sbm(nodes, communities, avg_degree, mixing, directed)
    seed = _check_seed(seed)
    partitions = _check_partitions(partitions)
    m = sbm_edge_count(nodes, avg_degree, directed)

    draw = _sbm_draw(nodes, communities, float(mixing), seed)
    edges = _generate(spark, m, draw, directed, partitions)
    return edges, _community_labels(spark, nodes, communities, partitions)


def _community_labels(spark: SparkSession, nodes: int, communities: int, partitions: int | None) -> DataFrame:
    """``node long, label int``: node ``i`` in community ``i mod communities``."""
    node_ids = (
        spark.range(0, nodes, 1) if partitions is None else spark.range(0, nodes, 1, partitions)
    )
    return node_ids.select(
        F.col("id").alias("node"),
        F.pmod(F.col("id"), F.lit(communities).cast("long")).cast("int").alias("label"),
    )


def sbm_edges_numpy(
    nodes: int,
    communities: int,
    avg_degree: float,
    mixing: float,
    seed: int,
    directed: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph of :func:`sbm_graph` with the same parameters, computed with NumPy alone.

    Returns
    -------
    src, dst : numpy.ndarray
        ``int64`` edges, exactly the rows of :func:`sbm_graph`'s edge DataFrame, sorted
        by ``(src, dst)``.
    labels : numpy.ndarray
        ``int64`` planted community of each node (``arange(nodes) % communities``).
    """
    nodes, communities = _check_sbm(nodes, communities, avg_degree, mixing)
    seed = _check_seed(seed)
    draw = _sbm_draw(nodes, communities, float(mixing), seed)
    src, dst = _edges_numpy(sbm_edge_count(nodes, avg_degree, directed), draw, directed)
    return src, dst, np.arange(nodes, dtype=np.int64) % communities


class _DcsbmDraw:
    """The per-edge draw of :func:`dcsbm_graph` (a picklable callable).

    Node ``i``'s weight is ``w_i = min_degree + slope * (theta_i - 1)``, ``theta_i`` a
    capped Pareto draw from the hash of ``i`` (:meth:`weights`); an edge's source is
    drawn with probability proportional to ``w``, its destination proportional to ``w``
    within the source's community (probability ``1 - mixing``) or over all nodes. The
    O(nodes) tables (weights, cumulative sums) are built on first use in the process
    that draws, not shipped with the task.
    """

    def __init__(
        self, nodes: int, communities: int, mixing: float, seed: int, exponent: float,
        cap: float, min_degree: float, slope: float,
    ) -> None:
        self.nodes, self.communities, self.mixing, self.seed = nodes, communities, mixing, seed
        self.exponent, self.cap, self.min_degree, self.slope = exponent, cap, min_degree, slope
        self._tables: tuple | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_tables"] = None
        return state

    def theta(self) -> np.ndarray:
        """``theta`` (nodes,): ``u^(-1 / (exponent - 1))`` capped at ``cap``, ``u`` uniform
        in ``(0, 1]`` from the hash of the node id: a Pareto law with minimum 1 and tail
        ``P(theta > x) = x^-(exponent - 1)`` (a degree power law of exponent ``exponent``)."""
        key = _stream_key(self.seed, _S_WEIGHT)
        bits = _unit_bits(_hash(np.arange(self.nodes, dtype=np.uint64), key))
        u = (bits.astype(np.float64) + 1.0) / float(_UNIT)  # (0, 1]
        return np.minimum(u ** (-1.0 / (self.exponent - 1.0)), self.cap)

    def weights(self) -> np.ndarray:
        """Expected degrees ``min_degree + slope * (theta - 1)`` (before repeats are dropped)."""
        return self.min_degree + self.slope * (self.theta() - 1.0)

    def _build(self) -> tuple:
        w = self.weights()
        cum_all = np.cumsum(w)
        # Nodes ordered by community (community c holds c, c + C, c + 2C, ...), with the
        # cumulative weights in that order and each community's first and last position.
        c = self.communities
        label = np.arange(self.nodes) % c
        order = np.argsort(label, kind="stable")
        cum_comm = np.cumsum(w[order])
        sizes = np.bincount(label, minlength=c)
        end = np.cumsum(sizes)  # exclusive end position of each community
        start = end - sizes
        below = np.where(start > 0, cum_comm[np.maximum(start - 1, 0)], 0.0)
        total_c = cum_comm[end - 1] - below
        self._tables = (cum_all, order, cum_comm, start, end, below, total_c)
        return self._tables

    def __call__(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cum_all, order, cum_comm, start, end, below, total_c = self._tables or self._build()
        n = self.nodes
        u_src = _unit_bits(_hash(idx, _stream_key(self.seed, _S_SRC))).astype(np.float64) / _UNIT
        u_dst = _unit_bits(_hash(idx, _stream_key(self.seed, _S_DST))).astype(np.float64) / _UNIT
        intra = _unit_bits(_hash(idx, _stream_key(self.seed, _S_CHOICE))) < _threshold(1.0 - self.mixing)
        src = np.minimum(np.searchsorted(cum_all, u_src * cum_all[-1], side="right"), n - 1)
        community = src % self.communities
        pos = np.searchsorted(cum_comm, below[community] + u_dst * total_c[community], side="right")
        pos = np.clip(pos, start[community], end[community] - 1)
        inside = order[pos]
        anywhere = np.minimum(np.searchsorted(cum_all, u_dst * cum_all[-1], side="right"), n - 1)
        dst = np.where(intra, inside, anywhere)
        return src.astype(np.uint64), dst.astype(np.uint64)


def _dcsbm_draw(
    nodes: int, communities: int, avg_degree: float, mixing: float, seed: int,
    exponent: float, min_degree: float, max_degree: float | None,
) -> _DcsbmDraw:
    """Validate the degree-corrected SBM's parameters and build its draw.

    The weights are ``w = min_degree + slope * (theta - 1)`` with ``theta`` capped at
    ``cap``; ``slope`` and ``cap`` solve ``mean(w) = avg_degree`` and
    ``max(w) <= max_degree`` (a fixed point: the mean of the capped ``theta`` depends
    on the cap).
    """
    nodes, communities = _check_sbm(nodes, communities, avg_degree, mixing)
    seed = _check_seed(seed)
    avg_degree, min_degree = float(avg_degree), float(min_degree)
    if not exponent > 2.0:
        raise SettingError(f"exponent must be > 2 (finite mean degree), got {exponent}")
    if not 0.0 < min_degree <= avg_degree:
        raise SettingError(f"min_degree must be in (0, avg_degree={avg_degree}], got {min_degree}")
    if max_degree is None:
        max_degree = max(avg_degree, math.sqrt(avg_degree * nodes))
    max_degree = float(max_degree)
    if not max_degree >= avg_degree:
        raise SettingError(f"max_degree must be >= avg_degree={avg_degree}, got {max_degree}")
    raw = _DcsbmDraw(nodes, communities, float(mixing), seed, float(exponent), math.inf, 1.0, 1.0).theta()
    cap, slope = math.inf, 0.0
    for _ in range(200):
        excess = float(np.minimum(raw, cap).mean()) - 1.0
        slope = (avg_degree - min_degree) / excess if excess > 0 else 0.0
        new_cap = 1.0 + (max_degree - min_degree) / slope if slope > 0 else math.inf
        if new_cap == cap or (math.isfinite(cap) and abs(new_cap - cap) <= 1e-12 * cap):
            break
        cap = new_cap
    return _DcsbmDraw(nodes, communities, float(mixing), seed, float(exponent), cap, min_degree, slope)


def dcsbm_expected_degrees(
    nodes: int,
    communities: int,
    avg_degree: float,
    mixing: float,
    seed: int,
    exponent: float = 2.5,
    min_degree: float = 1.0,
    max_degree: float | None = None,
) -> np.ndarray:
    """Expected degree of every node of :func:`dcsbm_graph` (before repeated edges and
    self-loops are dropped); their mean is ``avg_degree``."""
    return _dcsbm_draw(nodes, communities, avg_degree, mixing, seed, exponent, min_degree, max_degree).weights()


def dcsbm_edges_numpy(
    nodes: int,
    communities: int,
    avg_degree: float,
    mixing: float,
    seed: int,
    exponent: float = 2.5,
    min_degree: float = 1.0,
    max_degree: float | None = None,
    directed: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph of :func:`dcsbm_graph` with the same parameters, with NumPy alone.

    Returns ``src, dst`` (``int64``, sorted by ``(src, dst)``, exactly the rows of
    :func:`dcsbm_graph`'s edge DataFrame) and ``labels`` (``arange(nodes) % communities``).
    """
    draw = _dcsbm_draw(nodes, communities, avg_degree, mixing, seed, exponent, min_degree, max_degree)
    src, dst = _edges_numpy(sbm_edge_count(nodes, avg_degree, directed), draw, directed)
    return src, dst, np.arange(int(nodes), dtype=np.int64) % int(communities)


def dcsbm_graph(
    spark: SparkSession,
    nodes: int,
    communities: int,
    avg_degree: float,
    mixing: float,
    seed: int,
    exponent: float = 2.5,
    min_degree: float = 1.0,
    max_degree: float | None = None,
    directed: bool = False,
    partitions: int | None = None,
) -> tuple[DataFrame, DataFrame]:
    """Degree-corrected stochastic block model with power-law degrees (Chung-Lu weights).

    Node ``i`` belongs to community ``i mod communities`` and has an expected degree
    ``w_i = min_degree + slope * (theta_i - 1)``, where ``theta_i >= 1`` is a Pareto draw
    (``P(theta > x) = x^-(exponent - 1)``) from the hash of ``i``, capped so that no
    ``w_i`` exceeds ``max_degree``, and ``slope`` makes the mean of ``w`` equal to
    ``avg_degree`` (:func:`dcsbm_expected_degrees`). The tail of the degrees is a power
    law of exponent ``exponent``: a few hubs, and many nodes of degree 1 or 2 (and some
    of degree 0, since a degree is a sum of rare events). Each of the
    :func:`sbm_edge_count` edges picks its source with probability proportional to
    ``w``; with probability ``1 - mixing`` its destination is drawn proportional to ``w``
    among the source's community, otherwise among all nodes. Repeated edges (mostly
    between hubs) and self-loops are dropped, which trims the hubs' degrees a little.

    Parameters
    ----------
    spark : SparkSession
        Session to build the DataFrames in.
    nodes, communities, avg_degree, mixing, seed, directed, partitions
        As in :func:`sbm_graph`.
    exponent : float, default 2.5
        Power-law exponent of the degree distribution, ``> 2``.
    min_degree : float, default 1.0
        Smallest expected degree, in ``(0, avg_degree]``.
    max_degree : float, optional
        Largest expected degree; by default ``sqrt(avg_degree * nodes)`` (the natural
        cut-off of a Chung-Lu graph), at least ``avg_degree``.

    Returns
    -------
    edges, labels : DataFrame
        As in :func:`sbm_graph`. :func:`dcsbm_edges_numpy` gives the same edges without
        Spark.

    Raises
    ------
    SettingError
        If a parameter is out of range (a ``ValueError``).
    """
    draw = _dcsbm_draw(nodes, communities, avg_degree, mixing, seed, exponent, min_degree, max_degree)
    partitions = _check_partitions(partitions)
    m = sbm_edge_count(draw.nodes, avg_degree, directed)
    edges = _generate(spark, m, draw, directed, partitions)
    return edges, _community_labels(spark, draw.nodes, draw.communities, partitions)


def _feistel_permute(x: np.ndarray, bits: int, keys: list[np.uint64]) -> np.ndarray:
    """A seeded bijection of ``[0, 2**bits)`` built from an unbalanced Feistel network.

    Each round splits ``x`` into its low ``b = bits // 2`` bits ``lo`` and high
    ``bits - b`` bits ``hi`` and returns ``lo << (bits - b) | ((hi ^ F(lo)) mod
    2**(bits - b))``, which is invertible whatever ``F`` is; ``F`` is the seeded hash of
    the round.
    """
    low_bits = bits // 2
    high_bits = bits - low_bits
    low_mask = np.uint64((1 << low_bits) - 1)
    high_mask = np.uint64((1 << high_bits) - 1)
    shift_lo, shift_hi = np.uint64(low_bits), np.uint64(high_bits)
    for key in keys:
        lo = x & low_mask
        hi = x >> shift_lo
        x = (lo << shift_hi) | ((hi ^ _hash(lo, key)) & high_mask)
    return x


def _rmat_draw(
    scale: int, a: float, b: float, c: float, seed: int, permute: bool
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The per-edge draw of :func:`rmat_graph` as a vectorised function of edge indices."""
    level_keys = [_stream_key(seed, _S_RMAT_LEVEL + k) for k in range(scale)]
    perm_keys = [_stream_key(seed, _S_PERMUTE + r) for r in range(_FEISTEL_ROUNDS)]
    t_a, t_ab, t_abc = _threshold(a), _threshold(a + b), _threshold(a + b + c)
    one = np.uint64(1)

    def draw(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        src = np.zeros(len(idx), dtype=np.uint64)
        dst = np.zeros(len(idx), dtype=np.uint64)
        for key in level_keys:  # one quadrant choice per level, most significant first
            u = _unit_bits(_hash(idx, key))
            # quadrants: [0, a) top-left, [a, a+b) top-right, [a+b, a+b+c) bottom-left
            src_bit = u >= t_ab
            dst_bit = ((u >= t_a) & (u < t_ab)) | (u >= t_abc)
            src = (src << one) | src_bit.astype(np.uint64)
            dst = (dst << one) | dst_bit.astype(np.uint64)
        if permute:
            src = _feistel_permute(src, scale, perm_keys)
            dst = _feistel_permute(dst, scale, perm_keys)
        return src, dst

    return draw


def rmat_graph(
    spark: SparkSession,
    scale: int,
    edges: int,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    directed: bool = False,
    permute: bool = True,
    partitions: int | None = None,
) -> DataFrame:
    """R-MAT (recursive matrix / Kronecker) graph, as in Graph500 and the Wiki-Gen series.

    The adjacency matrix of ``2**scale`` nodes is split recursively into four quadrants
    chosen with probabilities ``a`` (top-left), ``b`` (top-right), ``c`` (bottom-left)
    and ``d = 1 - a - b - c`` (bottom-right); each of the ``edges`` draws makes ``scale``
    such choices, one bit of ``src`` and ``dst`` per level. With ``a > d`` this gives the
    heavy-tailed degree distribution of real networks. The levels are computed for a
    whole block of edges at a time from seeded hashes of the edge index.

    Parameters
    ----------
    spark : SparkSession
        Session to build the DataFrame in.
    scale : int
        Base-2 logarithm of the number of nodes, ``1 <= scale <= 62``; node ids are in
        ``[0, 2**scale)`` (nodes without edges do not appear).
    edges : int
        Number of edges drawn; self-loops and repeated edges are then dropped, which
        removes a sizeable share of the draws for skewed parameters.
    a, b, c : float, default 0.57, 0.19, 0.19
        Quadrant probabilities (the Graph500 values); non-negative with
        ``a + b + c <= 1``.
    seed : int, default 0
        Seed (signed 64-bit); the result does not depend on the partitioning.
    directed : bool, default False
        Keep edges as drawn instead of as unordered pairs ``src < dst``.
    permute : bool, default True
        Relabel nodes with a seeded bijection of ``[0, 2**scale)`` (a Feistel network)
        so that degree does not correlate with the node id (unpermuted, the hub is
        node 0 when ``a`` is the largest probability).
    partitions : int, optional
        Partitions of the returned edges (and at least as many generating tasks when
        there are enough edges); the session's defaults when omitted.

    Returns
    -------
    DataFrame
        ``src long, dst long``; no self-loops, no repeated edges; ``src < dst`` when
        undirected.

    Raises
    ------
    SettingError
        If a parameter is out of range (a ``ValueError``).
    """
    scale, edges = _check_rmat(scale, edges, a, b, c)
    seed = _check_seed(seed)
    partitions = _check_partitions(partitions)
    draw = _rmat_draw(scale, float(a), float(b), float(c), seed, permute)
    return _generate(spark, edges, draw, directed, partitions)


# ----------------------------------------------------------------------------- writers


def output_exists(spark: SparkSession, path: str) -> bool:
    """Whether something exists at ``path`` (resolved as :func:`write_table` does)."""
    return storage.exists(storage.resolve_output(spark, path))


#: The extension of Spark's CSV part files, before a compression suffix if any.
_CSV_PART = re.compile(r"\.csv((?:\.[A-Za-z0-9]+)?)$")


def write_table(
    df: DataFrame,
    path: str,
    fmt: Format = "tsv",
    *,
    single_file: bool = False,
    overwrite: bool = False,
) -> str:
    """Write ``df`` as TSV or Parquet to ``path``, all at once or not at all.

    The data are written to a hidden sibling ``.<name>.tmp-<id>`` of ``path`` and moved
    into place once Spark has finished, so readers never see a partial table at
    ``path``; a run killed midway leaves only the hidden sibling behind, which the next
    write to ``path`` removes (:func:`sepne_spark.storage.atomic_write`).

    Parameters
    ----------
    df : DataFrame
        Table to write; TSV holds its columns in order, tab-separated, no header.
    path : str
        Target: a local path, or a URI (``file://``, ``hdfs://``, ``s3://`` ...) that
        both Spark and :func:`pyarrow.fs.FileSystem.from_uri` understand.
    fmt : {"tsv", "parquet"}, default "tsv"
        Output format.
    single_file : bool, default False
        Write one file at ``path`` (the data pass through a single task) instead of a
        directory of part files.
    overwrite : bool, default False
        Replace what is at ``path``; otherwise an existing ``path`` is an error.

    Returns
    -------
    str
        The path written (a local path made absolute, or the URI).

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is false.
    SettingError
        For an unknown format or an unusable path (a ``ValueError``).
    """
    write, target = table_write(df, path, fmt, single_file=single_file)
    storage.atomic_write(write, target, overwrite=overwrite)
    return target


def table_write(
    df: DataFrame, path: str, fmt: Format = "tsv", *, single_file: bool = False
) -> tuple[Callable[[str], None], str]:
    """The write of :func:`write_table` and its final location (``path`` resolved), for
    :func:`sepne_spark.storage.atomic_writes` with other tables: a graph's edges and
    labels replace an earlier pair together."""
    if fmt not in ("tsv", "parquet"):
        raise SettingError(f"format must be 'tsv' or 'parquet', got {fmt!r}")
    target = storage.resolve_output(df.sparkSession, path)
    out = df.coalesce(1) if single_file else df

    def spark_write(where: str) -> None:
        writer = out.write.mode("error")  # "errorifexists" too, which a Spark Connect 3.5 client refuses
        if fmt == "parquet":
            writer.parquet(where)
            return
        writer.option("sep", "\t").option("header", "false").csv(where)
        # Spark's CSV writer names its part files *.csv: named *.tsv, a part file given
        # on its own is read as tab-separated (``input_format: auto`` goes by the name).
        for file in storage.data_files(where):
            folder, name = posixpath.split(file)
            tsv = _CSV_PART.sub(r".tsv\1", name)  # part-....csv, or part-....csv.gz when compressed
            if tsv != name:
                storage.move(file, f"{folder}/{tsv}")
                storage.remove(f"{folder}/.{name}.crc")  # the local file system's checksum

    def write(tmp: str) -> None:
        if not single_file:
            spark_write(tmp)
            return
        parts = tmp + ".parts"  # a hidden sibling too: recovery removes it with tmp
        try:
            spark_write(parts)
            files = storage.data_files(parts)
            if len(files) > 1:
                raise RuntimeError(f"expected one data file in {parts}, found {len(files)}")
            if not files:  # an empty DataFrame may produce no part file at all
                raise RuntimeError(f"Spark wrote no data file to {parts}")
            storage.move(files[0], tmp)
        finally:
            storage.remove(parts)

    return write, target


def write_edges(
    edges: DataFrame,
    path: str,
    fmt: Format = "tsv",
    *,
    single_file: bool = False,
    overwrite: bool = False,
) -> str:
    """Write an edge list (``src<TAB>dst`` lines for TSV); see :func:`write_table`."""
    return write_table(edge_columns(edges), path, fmt, single_file=single_file, overwrite=overwrite)


def edge_columns(edges: DataFrame) -> DataFrame:
    """The columns an edge list is written with: ``src``, ``dst`` as longs."""
    return edges.select(F.col("src").cast("long").alias("src"), F.col("dst").cast("long").alias("dst"))


def label_columns(labels: DataFrame) -> DataFrame:
    """The columns node labels are written with: ``node`` (long), ``label`` (int)."""
    return labels.select(F.col("node").cast("long").alias("node"), F.col("label").cast("int").alias("label"))


def write_labels(
    labels: DataFrame,
    path: str,
    fmt: Format = "tsv",
    *,
    single_file: bool = False,
    overwrite: bool = False,
) -> str:
    """Write node labels (``node<TAB>label`` lines for TSV); see :func:`write_table`."""
    return write_table(label_columns(labels), path, fmt, single_file=single_file, overwrite=overwrite)
