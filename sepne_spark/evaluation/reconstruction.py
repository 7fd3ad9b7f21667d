"""Reconstruction: how well ``W C^T`` reproduces the proximity matrix ``M`` (R^2 over all
entries and over the non-zero ones), exactly or from sampled entries, in NumPy or on Spark."""
from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from sepne_spark.errors import DuplicateIdsError, InputError
from sepne_spark.evaluation.pairs import _as_array

log = logging.getLogger(__name__)

try:  # Spark is a dependency of the package, but the NumPy half works without it
    from pyspark.sql import Column, DataFrame, SparkSession, Window
    from pyspark.sql import functions as F
except ImportError:  # pragma: no cover
    Column = DataFrame = SparkSession = Window = F = None  # type: ignore[assignment,misc]


# ---------------------------------------------------------------------------
# Reconstruction R^2 (NumPy / SciPy)
# ---------------------------------------------------------------------------


def _r2(ss_res: float, ss_tot: float) -> float:
    if ss_tot > 0:
        return float(1.0 - ss_res / ss_tot)
    return 1.0 if ss_res == 0 else float("nan")  # every entry equal: R^2 is undefined


def _pair_dots(W: np.ndarray, C: np.ndarray, rows: np.ndarray, cols: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """``W[rows[t]] . C[cols[t]]`` for every t, in chunks to bound memory."""
    out = np.empty(len(rows))
    for s in range(0, len(rows), chunk):
        r, c = rows[s:s + chunk], cols[s:s + chunk]
        out[s:s + chunk] = np.einsum("ij,ij->i", W[r], C[c])
    return out


def reconstruction_r2(
    M: np.ndarray | sp.spmatrix | sp.sparray,
    W: np.ndarray,
    C: np.ndarray,
    block_rows: int = 1024,
) -> dict[str, Any]:
    """Exact R^2 of ``W C^T`` against ``M``, over all entries and over non-zero entries.

    ``R^2 = 1 - SS_res / SS_tot`` with ``SS_tot`` taken about the mean of the entries
    considered: ``r2_all`` over all n_rows x n_cols entries, ``r2_nonzero`` over the
    entries where ``M != 0``.

    Parameters
    ----------
    M : numpy.ndarray or scipy sparse matrix
        Proximity matrix (n_rows x n_cols). A dense ``M`` is processed in blocks of
        ``block_rows`` rows; for a sparse ``M`` the zero entries are never formed:
        ``sum over zeros of (W C^T)^2 = ||W C^T||_F^2 - sum over non-zeros``, and
        ``||W C^T||_F^2 = sum((W^T W) * (C^T C))`` costs O(n d^2).
    W, C : numpy.ndarray
        Embeddings (n_rows x d) and context vectors (n_cols x d).

    Returns
    -------
    dict
        ``r2_all``, ``r2_nonzero``, ``n_entries``, ``n_nonzero`` and ``exact: True``.
    """
    W = np.asarray(W, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    n_rows, n_cols = M.shape
    if W.shape[0] != n_rows or C.shape[0] != n_cols or W.shape[1] != C.shape[1]:
        raise ValueError(f"shapes do not match: M {M.shape}, W {W.shape}, C {C.shape}")
    N = n_rows * n_cols
    if sp.issparse(M):
        Mc = sp.coo_matrix(M, dtype=np.float64)
        Mc.sum_duplicates()
        nzmask = Mc.data != 0
        r, c, m = Mc.row[nzmask], Mc.col[nzmask], Mc.data[nzmask]
        nnz = len(m)
        p = _pair_dots(W, C, r, c)
        ss_res_nz = float(np.sum((m - p) ** 2))
        frob = float(np.sum((W.T @ W) * (C.T @ C)))
        ss_res_all = ss_res_nz + max(frob - float(np.sum(p * p)), 0.0)
        mu = float(m.sum()) / N
        ss_tot_all = float(np.sum((m - mu) ** 2)) + (N - nnz) * mu * mu
        ss_tot_nz = float(np.sum((m - m.mean()) ** 2)) if nnz else 0.0
    else:
        M = np.asarray(M, dtype=np.float64)
        total = 0.0
        nnz = 0
        nz_sum = 0.0
        for s in range(0, n_rows, block_rows):
            B = M[s:s + block_rows]
            total += float(B.sum())
            nz = B != 0
            nnz += int(nz.sum())
            nz_sum += float(B[nz].sum())
        mu = total / N if N else 0.0
        mu_nz = nz_sum / nnz if nnz else 0.0
        ss_tot_all = ss_res_all = ss_tot_nz = ss_res_nz = 0.0
        for s in range(0, n_rows, block_rows):
            B = M[s:s + block_rows]
            R = B - W[s:s + block_rows] @ C.T
            nz = B != 0
            ss_tot_all += float(np.sum((B - mu) ** 2))
            ss_res_all += float(np.sum(R * R))
            ss_tot_nz += float(np.sum((B[nz] - mu_nz) ** 2))
            ss_res_nz += float(np.sum(R[nz] ** 2))
    return {
        "r2_all": _r2(ss_res_all, ss_tot_all),
        "r2_nonzero": _r2(ss_res_nz, ss_tot_nz) if nnz else float("nan"),
        "n_entries": int(N),
        "n_nonzero": int(nnz),
        "exact": True,
    }


def r2_from_sums(
    n_entries: int,
    n_nonzero: int,
    nz_count: int,
    nz_sum_m: float,
    nz_sum_m2: float,
    nz_sum_res2: float,
    nz_sum_res4: float,
    zero_count: int,
    zero_sum_p2: float,
    zero_sum_p4: float,
) -> dict[str, Any]:
    """Estimate the reconstruction R^2 from sums over sampled entries.

    The non-zero entries are all of them or a uniform sample of ``nz_count`` out of
    ``n_nonzero``; the zero entries are a uniform sample of ``zero_count`` out of
    ``n_entries - n_nonzero``. Each sum is scaled by its population over its sample
    size (a Horvitz-Thompson estimate): ``SS_res_all = a * sum_nz (m - p)^2 + b *
    sum_zero p^2`` with ``a = n_nonzero / nz_count`` and ``b = (n_entries - n_nonzero) /
    zero_count``; ``SS_tot_all`` only involves the non-zero values (zeros contribute
    ``mu^2`` each), so it is exact when every non-zero entry is given. ``r2_nonzero`` is
    the plain R^2 over the given non-zero entries.

    Parameters
    ----------
    n_entries, n_nonzero : int
        Number of entries of M (n_rows * n_cols) and of its non-zero entries.
    nz_count, nz_sum_m, nz_sum_m2, nz_sum_res2, nz_sum_res4 : int, float
        Over the sampled non-zero entries: their number and the sums of ``m``, ``m^2``,
        ``(m - p)^2`` and ``(m - p)^4``.
    zero_count, zero_sum_p2, zero_sum_p4 : int, float
        Over the sampled zero entries: their number and the sums of ``p^2`` and ``p^4``.

    Returns
    -------
    dict
        ``r2_all``, ``r2_nonzero``, ``r2_all_stderr`` (approximate standard error of
        ``r2_all`` from the sampling variance of ``SS_res``, as for sampling with
        replacement and treating ``SS_tot`` as fixed),
        ``n_entries``, ``n_nonzero``, ``sample_nonzero``, ``sample_zero`` (the sample
        sizes) and ``exact: False``.
    """
    n_zero = n_entries - n_nonzero
    if nz_count <= 0 and n_nonzero > 0:
        raise ValueError("no non-zero entries were given")
    if zero_count <= 0 and n_zero > 0:
        raise ValueError("no zero entries were sampled although M has zero entries")
    a = n_nonzero / nz_count if nz_count else 0.0
    b = n_zero / zero_count if zero_count else 0.0
    sum_m, sum_m2 = a * nz_sum_m, a * nz_sum_m2
    mu = sum_m / n_entries
    ss_tot_all = max(sum_m2 - n_entries * mu * mu, 0.0)
    ss_res_all = a * nz_sum_res2 + b * zero_sum_p2
    var = 0.0
    if zero_count > 1:
        mean_p2 = zero_sum_p2 / zero_count
        var_p2 = max(zero_sum_p4 / zero_count - mean_p2 ** 2, 0.0) * zero_count / (zero_count - 1)
        var += n_zero ** 2 * var_p2 / zero_count
    if 1 < nz_count < n_nonzero:
        mean_r2 = nz_sum_res2 / nz_count
        var_r2 = max(nz_sum_res4 / nz_count - mean_r2 ** 2, 0.0) * nz_count / (nz_count - 1)
        var += n_nonzero ** 2 * var_r2 / nz_count
    mean_nz = nz_sum_m / nz_count if nz_count else 0.0
    ss_tot_nz = max(nz_sum_m2 - nz_count * mean_nz * mean_nz, 0.0)
    return {
        "r2_all": _r2(ss_res_all, ss_tot_all),
        "r2_nonzero": _r2(nz_sum_res2, ss_tot_nz) if nz_count else float("nan"),
        "r2_all_stderr": float(math.sqrt(max(var, 0.0)) / ss_tot_all) if ss_tot_all > 0 else float("nan"),
        "n_entries": int(n_entries),
        "n_nonzero": int(n_nonzero),
        "sample_nonzero": int(nz_count),
        "sample_zero": int(zero_count),
        "exact": False,
    }


def sample_zero_entries(
    n_rows: int,
    n_cols: int,
    nz_rows: np.ndarray,
    nz_cols: np.ndarray,
    size: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``size`` entries uniformly (with replacement) among the zero entries of M.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of M.
    nz_rows, nz_cols : numpy.ndarray
        Positions of every non-zero entry of M (the complete pattern: candidates that
        hit it are rejected).
    size : int
        Number of entries to draw.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    rows, cols : numpy.ndarray
        Positions of the sampled zero entries (empty when M has no zero entry).
    """
    N = int(n_rows) * int(n_cols)
    nz_keys = np.unique(np.asarray(nz_rows, dtype=np.int64) * n_cols + np.asarray(nz_cols, dtype=np.int64))
    n_zero = N - len(nz_keys)
    if n_zero <= 0 or size <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    if n_zero <= 4 * size or len(nz_keys) > N // 2:
        if N > 50_000_000:
            raise ValueError("M is too dense to sample its zero entries by rejection")
        zeros = np.setdiff1d(np.arange(N, dtype=np.int64), nz_keys, assume_unique=True)
        keys = zeros[rng.integers(0, len(zeros), size)]
    else:
        got: list[np.ndarray] = []
        need = int(size)
        while need > 0:
            cand = rng.integers(0, N, int(need * N / n_zero * 1.1) + 16, dtype=np.int64)
            pos = np.searchsorted(nz_keys, cand)
            hit = (pos < len(nz_keys)) & (nz_keys[np.minimum(pos, len(nz_keys) - 1)] == cand)
            cand = cand[~hit][:need]
            got.append(cand)
            need -= len(cand)
        keys = np.concatenate(got)
    return keys // n_cols, keys % n_cols


def reconstruction_r2_sampled(
    nz_rows: np.ndarray,
    nz_cols: np.ndarray,
    nz_values: np.ndarray,
    W: np.ndarray,
    C: np.ndarray,
    n_zero_samples: int = 100_000,
    seed: int = 0,
    zero_rows: np.ndarray | None = None,
    zero_cols: np.ndarray | None = None,
    n_nonzero: int | None = None,
) -> dict[str, Any]:
    """Estimate the reconstruction R^2 from the non-zero entries and sampled zeros.

    Parameters
    ----------
    nz_rows, nz_cols, nz_values : numpy.ndarray
        The non-zero entries ``(i, j, m_ij)`` of M: all of them (the usual case: they are
        the edge list of M), or a uniform sample when ``n_nonzero`` is given.
    W, C : numpy.ndarray
        Embeddings (n_rows x d) and context vectors (n_cols x d).
    n_zero_samples : int
        Zero entries to sample uniformly when ``zero_rows``/``zero_cols`` are not given
        (needs the complete non-zero pattern).
    seed : int
        Seed of the zero-entry sample.
    zero_rows, zero_cols : numpy.ndarray, optional
        A uniform sample of zero entries drawn by the caller.
    n_nonzero : int, optional
        Total number of non-zero entries when ``nz_*`` is only a sample of them.

    Returns
    -------
    dict
        As :func:`r2_from_sums`, with the sample sizes ``sample_nonzero`` and
        ``sample_zero``.
    """
    W = np.asarray(W, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    rows = np.asarray(nz_rows, dtype=np.int64)
    cols = np.asarray(nz_cols, dtype=np.int64)
    m = np.asarray(nz_values, dtype=np.float64)
    keep = m != 0
    rows, cols, m = rows[keep], cols[keep], m[keep]
    if n_nonzero is None:
        keys = rows * C.shape[0] + cols
        if len(np.unique(keys)) != len(keys):
            raise ValueError("duplicate (i, j) positions among the non-zero entries")
        n_nonzero = len(m)
    if zero_rows is None or zero_cols is None:
        if n_nonzero != len(m):
            raise ValueError("pass zero_rows/zero_cols when the non-zero entries are a sample")
        zero_rows, zero_cols = sample_zero_entries(W.shape[0], C.shape[0], rows, cols, n_zero_samples, seed)
    zr = np.asarray(zero_rows, dtype=np.int64)
    zc = np.asarray(zero_cols, dtype=np.int64)
    p = _pair_dots(W, C, rows, cols)
    pz = _pair_dots(W, C, zr, zc)
    res2 = (m - p) ** 2
    return r2_from_sums(
        n_entries=W.shape[0] * C.shape[0],
        n_nonzero=int(n_nonzero),
        nz_count=len(m),
        nz_sum_m=float(m.sum()),
        nz_sum_m2=float(np.sum(m * m)),
        nz_sum_res2=float(res2.sum()),
        nz_sum_res4=float(np.sum(res2 * res2)),
        zero_count=len(pz),
        zero_sum_p2=float(np.sum(pz * pz)),
        zero_sum_p4=float(np.sum(pz ** 4)),
    )


# ---------------------------------------------------------------------------
# Reconstruction R^2 on Spark
# ---------------------------------------------------------------------------


#: Entries of M one task of :func:`reconstruction_r2_spark` holds at most (a pair of node
#: blocks' packed entries: 16 bytes each, 128 MB).
ENTRIES_PER_TASK = 8_000_000


def reconstruction_r2_spark(
    entries: DataFrame,
    embeddings: DataFrame,
    *,
    nodes: DataFrame | None = None,
    embedding_col: str = "embedding",
    context_col: str = "context",
    blocks: int | None = None,
    seed: int = 0,
    name: str = "embeddings",
) -> dict[str, Any]:
    """Exact R^2 of ``W C^T`` against M with Spark, from M's non-zero entries.

    As :func:`reconstruction_r2` for a sparse M: ``W C^T`` is formed at M's non-zero
    entries only, and the zero entries enter through ``||W C^T||_F^2 = sum((W^T W) *
    (C^T C))`` less the non-zero entries' share. The scores are block products, not
    one Spark row per entry: W and C are stored as row chunks of node blocks and M's
    entries packed by pair of blocks (:class:`sepne_spark.blocks.BlockGraph`); each
    pair of blocks forms ``w_i . c_j`` at its entries in NumPy and adds up five sums,
    and those sums and the two d x d Gram matrices are all that reaches the driver.

    Parameters
    ----------
    entries : DataFrame
        Non-zero entries of M, columns ``(src, dst, value)``; the values of a position
        given more than once are added.
    embeddings : DataFrame
        ``(id, embedding[, context])`` rows, one per id; without a context column the
        embedding is used as the context vector. A node without a row (or with a null
        vector) predicts 0.
    nodes : DataFrame, optional
        ``id`` of every node of the graph (M is ``n x n`` over them); by default the ids
        in ``embeddings`` and in ``entries``. Entries outside them are not counted.
    blocks : int, optional
        Node blocks of the products. By default enough that a pair of blocks holds at
        most :data:`ENTRIES_PER_TASK` of M's entries (one task each), and one per 512 MB
        of the n x d matrix in float64, at least 2 above 100,000 nodes
        (:func:`sepne_spark.propagation.default_blocks`).
    seed : int
        Seed of the nodes' assignment to blocks (the result does not depend on it,
        beyond rounding).
    name : str
        What the errors call the embeddings (the job: their path).

    Returns
    -------
    dict
        As :func:`reconstruction_r2`: ``r2_all``, ``r2_nonzero``, ``n_entries``,
        ``n_nonzero`` and ``exact: True``; and ``n_nodes``, ``n_missing_embedding``
        and ``n_zero_embedding`` (the nodes without a vector, and with an all-zero one).

    Raises
    ------
    InputError
        When no node has a vector, an id has more than one, a vector holds NaN, infinite
        or null values, or the vectors (and the context vectors) differ in length;
        checked in one pass before the products.
    """
    from sepne_spark.blocks import BlockGraph, gram
    from sepne_spark.propagation import default_blocks

    ent = entries.select("src", "dst", F.col("value").cast("double").alias("value")).where(F.col("value") != 0)
    if nodes is None:
        nodes = (
            embeddings.select("id")
            .unionByName(ent.select(F.col("src").alias("id")))
            .unionByName(ent.select(F.col("dst").alias("id")))
        )
    nodes = nodes.select("id").distinct()
    has_ctx = context_col in embeddings.columns
    vectors = embeddings.select(
        "id", _as_array(embeddings, embedding_col).alias("_w"),
        F.coalesce(_as_array(embeddings, context_col if has_ctx else embedding_col),
                   _as_array(embeddings, embedding_col)).alias("_c"),
    ).where(F.col("_w").isNotNull() & F.col("id").isNotNull())
    joined = nodes.join(vectors, "id", "left")  # the graph's nodes, with their vectors where they have one

    def bad(column: str):  # a value that is null, NaN or infinite
        return F.exists(column, lambda x: x.isNull() | F.isnan(x) | (F.abs(x) == F.lit(float("inf"))))

    def size(column: str):  # null for a node without a vector (Spark 3.5's size(null) is -1)
        return F.when(F.col(column).isNotNull(), F.size(column))

    nonfinite = bad("_w") | bad("_c")
    row = (
        joined.agg(
            F.countDistinct("id").alias("n"), F.count("_w").alias("rows"),
            F.sum(F.when(nonfinite, 1).otherwise(0)).alias("nonfinite"),
            F.countDistinct(F.when(F.col("_w").isNotNull(), F.col("id"))).alias("found"),
            F.sum(F.when(F.forall("_w", lambda x: x == 0), 1).otherwise(0)).alias("zero"),
            F.min(size("_w")).alias("d_min"), F.max(size("_w")).alias("d"),
            F.min(size("_c")).alias("c_min"), F.max(size("_c")).alias("c_max"))
        .crossJoin(ent.agg(F.count(F.lit(1)).alias("nnz")))
        .first()
    )
    n_nodes, found, d, nnz = int(row["n"]), int(row["found"]), int(row["d"] or 0), int(row["nnz"])
    if not found:
        raise InputError("no node of the graph has an embedding (are the ids the same?)")
    if int(row["rows"]) > found:
        twice = [r["id"] for r in joined.groupBy("id").agg(F.count("_w").alias("k")).where("k > 1").limit(3).collect()]
        raise DuplicateIdsError(f"{name}: {int(row['rows']) - found} more vectors than ids of the graph: one "
                                f"row per id (given more than once: {', '.join(map(repr, twice))})")
    if row["nonfinite"]:
        shown = [r["id"] for r in joined.where(nonfinite).select("id").orderBy("id").limit(3).collect()]
        raise InputError(f"{name}: {int(row['nonfinite'])} vector(s) hold NaN, infinite or null values, e.g. "
                         f"{', '.join(map(repr, shown))}")
    sizes = sorted({row["d_min"], row["d"], row["c_min"], row["c_max"]} - {None})
    if len(sizes) > 1:
        odd = joined.where((size("_w") != F.lit(row["d"])) | (size("_c") != F.lit(row["d"])))
        shown = [r["id"] for r in odd.select("id").orderBy("id").limit(3).collect()]
        raise InputError(f"{name}: embedding{' and context' if has_ctx else ''} vectors have different lengths: "
                         f"{sizes}, e.g. of {', '.join(map(repr, shown))}")
    if blocks is None:
        blocks = max(default_blocks(n_nodes, minimum=2, dim=max(d, 1), dtype="float64"),
                     math.ceil(math.sqrt(nnz / ENTRIES_PER_TASK)))
    zero = F.array_repeat(F.lit(0.0), d)
    dense = joined.select("id", F.coalesce("_w", zero).alias("_w"), F.coalesce("_c", zero).alias("_c"))
    bg = BlockGraph.build(nodes, ent, blocks=int(blocks), seed=seed, dtype="float64")
    state = bg.to_chunks(dense, "_w", "w").unionByName(bg.to_chunks(dense, "_c", "c"))

    def sums(m: np.ndarray, p: np.ndarray) -> np.ndarray:
        return np.array([len(m), m.sum(), (m * m).sum(), ((m - p) ** 2).sum(), (p * p).sum()])

    nz = bg.entry_sums(state, "w", "c", sums)
    count, sum_m, sum_m2, ss_res_nz, sum_p2 = (float(x) for x in nz) if len(nz) else (0.0,) * 5
    frob = float(np.sum(gram(state, "w") * gram(state, "c"))) if d else 0.0
    nnz, N = int(count), n_nodes * n_nodes
    mu = sum_m / N if N else 0.0
    mean_nz = sum_m / nnz if nnz else 0.0
    return {
        "r2_all": _r2(ss_res_nz + max(frob - sum_p2, 0.0), max(sum_m2 - N * mu * mu, 0.0)),
        "r2_nonzero": _r2(ss_res_nz, max(sum_m2 - nnz * mean_nz * mean_nz, 0.0)) if nnz else float("nan"),
        "n_entries": int(N),
        "n_nonzero": nnz,
        "exact": True,
        "n_nodes": n_nodes,
        "n_missing_embedding": n_nodes - found,
        "n_zero_embedding": int(row["zero"] or 0),
    }
