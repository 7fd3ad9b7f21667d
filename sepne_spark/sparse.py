"""SepNE on a SciPy sparse proximity matrix: the equations for a graph that fits one task.

The distributed stages (:mod:`.proximity`, :mod:`.set_stage`) build M, its landmark
summaries and each set's blocks as DataFrame joins, which is what a graph too big for
one machine needs. A graph of up to about 10^5 nodes fits one worker's memory, and there
the same quantities are a handful of sparse products. This module computes them, pure
NumPy/SciPy and free of Spark, for :mod:`.one_task` (which runs them inside one
``applyInPandas`` task) and for the benchmarks:

* :func:`sparse_proximity`: M = I + A or A + ... + A^T, optionally log-scaled;
* :func:`landmark_summaries`: M00, S_A and S_B (k x k);
* :func:`walk_summaries`: the same three of the log-scaled A + A^2, from its landmark
  rows and columns only (``landmarkFactors="walks"``);
* :func:`solve_sets`: every set's blocks M_ii, M_i0, M_0i, Rhat_A and Rhat_B, and the
  library's per-set solve :func:`sepne_spark.solver.solve_set` on them.

The results equal the dense oracle (:mod:`sepne_spark.dense`) and the distributed
stages to floating-point tolerance; only the order of additions differs.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import scipy.sparse as sp

from sepne_spark.solver import SetConstants, solve_set


def sparse_proximity(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    weight: np.ndarray,
    metric: str,
    window: int = 2,
    scaling: str = "none",
) -> sp.csr_matrix:
    """M as a SciPy CSR matrix: I + A (``"I+A"``) or A + A^2 + ... + A^window (``"A+A2"``),
    A the row-normalised transition matrix; with ``scaling="log"`` every entry m at
    column v becomes log(max(vol m / (T s_in(v)), 1)) (vol the total weight, s_in(v)
    the weight into v, T the window) and columns without in-weight are dropped.

    ``src, dst, weight`` is a directed edge list over 0..n-1 (an undirected graph gives
    both directions); parallel edges are summed, edges of weight 0 or less are dropped
    (as :func:`sepne_spark.proximity.transition` does). Explicit zeros are removed.
    """
    W, A = _weights_and_transition(n, src, dst, weight)
    if metric == "I+A":
        M = sp.identity(n, format="csr") + A
    elif metric == "A+A2":
        M, power = A.copy(), A
        for _ in range(window - 1):
            power = power @ A
            M = M + power
    else:
        raise ValueError(f"unknown metric {metric!r}; expected 'I+A' or 'A+A2'")
    M = sp.csr_matrix(M)
    if scaling == "log":
        M = _log_scaled(M, W, window)
    elif scaling != "none":
        raise ValueError(f"unknown scaling {scaling!r}; expected 'none' or 'log'")
    M.eliminate_zeros()
    return M


def _weights_and_transition(n: int, src: np.ndarray, dst: np.ndarray,
                            weight: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The weight matrix W (positive weights, parallel edges summed) and A = D^-1 W."""
    weight = np.asarray(weight, dtype=np.float64)
    keep = weight > 0
    W = sp.coo_matrix((weight[keep], (np.asarray(src)[keep], np.asarray(dst)[keep])), shape=(n, n)).tocsr()
    s = np.asarray(W.sum(axis=1)).ravel()
    inv = np.zeros(n)
    inv[s > 0] = 1.0 / s[s > 0]
    return W, sp.csr_matrix(sp.diags(inv) @ W)


def _log_scaled(M: sp.spmatrix, W: sp.csr_matrix, window: int, columns: np.ndarray | None = None) -> sp.csr_matrix:
    """log(max(vol m / (T s_in(v)), 1)) of every entry m of M at column v; ``columns``
    maps M's column indices to nodes when M holds only some columns."""
    vol = float(W.sum())
    s_in = np.asarray(W.sum(axis=0)).ravel()
    M = M.tocoo()
    node = M.col if columns is None else np.asarray(columns)[M.col]
    denom = float(window) * s_in[node]
    ok = denom > 0
    val = np.zeros_like(M.data)
    val[ok] = np.log(np.maximum(vol * M.data[ok] / denom[ok], 1.0))
    out = sp.csr_matrix((val, (M.row, M.col)), shape=M.shape)
    out.eliminate_zeros()
    return out


def walk_summaries(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, landmarks: np.ndarray,
                   max_products: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """M00, S_A and S_B (as :func:`landmark_summaries`) of the log-scaled A + A^2,
    whatever the model's own metric: what ``landmarkFactors="walks"`` takes the
    landmark subspaces from.

    Only the k landmark rows and columns of A + A^2 are formed, from the landmark rows
    and columns of A (about k d^2 entries for mean degree d), never A^2 itself. Their
    Gram matrices cost sum over v of c(v)^2 products, c(v) the landmarks two steps from
    v: small without hubs, but hundreds of landmarks per node when the landmarks are
    hubs. Above ``max_products`` they are not formed and None is returned.
    """
    V0 = np.asarray(landmarks, dtype=np.int64)
    W, A = _weights_and_transition(n, src, dst, weight)
    rows = A[V0]
    cols = sp.csr_matrix(A[:, V0])
    rows = _log_scaled(rows + rows @ A, W, 2)
    cols = _log_scaled(cols + A @ cols, W, 2, columns=V0)
    return _summaries(rows, cols, V0, max_products)


def proximity_entries_bound(nodes: int, edge_rows: int, walk_pairs: int, metric: str, window: int) -> int:
    """An upper bound on the non-zero entries of M, from the graph's degree table.

    ``edge_rows``: directed edge rows (an undirected edge counts twice); ``walk_pairs``:
    the two-step walks, sum over v of in-degree(v) x out-degree(v). I + A has at most
    ``edge_rows + nodes`` entries, A + A^2 at most ``edge_rows + walk_pairs``; longer
    windows are bounded by ``nodes^2`` only here (:func:`window_entries_bound` does
    better from the edges).
    """
    if metric == "I+A":
        return int(edge_rows) + int(nodes)
    if window == 2:
        return int(edge_rows) + int(walk_pairs)
    return int(nodes) ** 2


def window_entries_bound(nodes: int, src: np.ndarray, dst: np.ndarray, window: int) -> int:
    """An upper bound on the non-zero entries of A + A^2 + ... + A^T (T = ``window``),
    from the edge rows ``src -> dst`` (duplicates only loosen it).

    Row u of A^t is the sum of the rows v of A^(t-1) over u's out-neighbours, so it has at
    most ``c_t(u) = min(n, sum over the edges u -> v of c_(t-1)(v))`` entries, ``c_1`` the
    out-degree; row u of M has at most ``min(n, c_1(u) + ... + c_T(u))``. T passes over
    the edges, where :func:`proximity_entries_bound` has only ``n^2`` for T > 2; the
    distributed form is :func:`sepne_spark.pipeline.window_entries_bound_frame`.
    """
    n = int(nodes)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    c = np.minimum(np.bincount(src, minlength=n).astype(np.float64), n)
    total = c.copy()
    for _ in range(int(window) - 1):
        c = np.minimum(np.bincount(src, weights=c[dst], minlength=n), n)
        total += c
    return int(np.minimum(total, n).sum())


def _non_landmark(n: int, landmarks: np.ndarray) -> sp.dia_matrix:
    keep = np.ones(n)
    keep[landmarks] = 0.0
    return sp.diags(keep)


def landmark_summaries(M: sp.csr_matrix, landmarks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M00 = M[V0, V0], S_A = sum_v M_0v M_0v^T and S_B = sum_v M_v0^T M_v0 over the
    non-landmark nodes v (each k x k, dense), ``landmarks`` the indices of V0 in
    landmark order."""
    V0 = np.asarray(landmarks, dtype=np.int64)
    return _summaries(M[V0], sp.csr_matrix(M[:, V0]), V0)


def _summaries(rows: sp.csr_matrix, cols: sp.csr_matrix, V0: np.ndarray,
               max_products: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """M00, S_A and S_B from the k landmark rows (k x n) and columns (n x k) of M; None
    when the Gram matrices take more than ``max_products`` products (sum over the
    non-landmark v of the non-zeros in column v of the rows and in row v of the columns,
    squared)."""
    Dn = _non_landmark(rows.shape[1], V0)
    R0 = sp.csr_matrix(rows @ Dn)
    C0 = sp.csr_matrix(Dn @ cols)
    if max_products is not None:
        per_row = np.bincount(R0.indices, minlength=R0.shape[1]).astype(np.int64)
        per_col = np.diff(C0.indptr).astype(np.int64)
        if int((per_row ** 2).sum() + (per_col ** 2).sum()) > max_products:
            return None
    return (rows[:, V0].toarray(), np.asarray((R0 @ R0.T).toarray()), np.asarray((C0.T @ C0).toarray()))


class SetBlocks:
    """Builds the blocks :func:`~sepne_spark.solver.solve_set` takes for any set of M.

    The landmark rows and columns of M, with the landmark entries dropped (what the
    two-hop sums run over), are sliced once here; each set then costs products with
    its own rows and columns only.
    """

    def __init__(self, M: sp.csr_matrix, landmarks: np.ndarray) -> None:
        self.M = sp.csr_matrix(M)
        self.Mt = sp.csr_matrix(self.M.T)  # the columns of M as rows
        self.V0 = np.asarray(landmarks, dtype=np.int64)
        Dn = _non_landmark(self.M.shape[0], self.V0)
        self.rows0 = sp.csr_matrix(self.M[self.V0] @ Dn)  # k x n: M[V0, v], v non-landmark
        self.cols0 = sp.csr_matrix(self.Mt[self.V0] @ Dn)  # k x n: M[v, V0]^T, v non-landmark

    def __call__(self, members: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``M_ii`` (sparse), ``M_i0`` (n_i x k), ``M_0i`` (k x n_i) and the two-hop sums
        ``Rhat_A[l, u] = sum_v M[u, v] M[l, v]`` and ``Rhat_B[l, u] = sum_v M[v, u] M[v, l]``
        over the non-landmark v (k x n_i) of the set ``members``."""
        Vi = np.asarray(members, dtype=np.int64)
        rows_i = self.M[Vi]  # n_i x n: the set's rows
        cols_i = self.Mt[Vi]  # n_i x n: the set's columns, transposed
        M_ii = sp.csr_matrix(rows_i[:, Vi])
        M_i0 = rows_i[:, self.V0].toarray()
        M_0i = cols_i[:, self.V0].toarray().T
        Rhat_A = np.asarray((self.rows0 @ rows_i.T).toarray())
        Rhat_B = np.asarray((self.cols0 @ cols_i.T).toarray())
        return M_ii, M_i0, M_0i, Rhat_A, Rhat_B


def solve_sets(
    M: sp.csr_matrix,
    landmarks: np.ndarray,
    sets: np.ndarray,
    constants: SetConstants,
    iters: int,
    dtype: str = "float64",
) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Solve every set: yields ``(set_id, members, W_i, C_i)`` per set, W_i and C_i
    d x n_i, in ascending order of ``set_id``.

    ``sets[u]`` is node u's set (``-1``: not embedded, e.g. a landmark).
    """
    blocks = SetBlocks(M, landmarks)
    order = np.argsort(sets, kind="stable")
    ordered = sets[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else np.array([], int)
    bounds = np.r_[starts, len(order)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        sid = int(ordered[a])
        if sid < 0:
            continue
        members = np.sort(order[a:b])
        M_ii, M_i0, M_0i, Rhat_A, Rhat_B = blocks(members)
        W, C = solve_set(constants.factors, None, None, M_ii, M_i0, M_0i, Rhat_A, Rhat_B,
                         constants.lam, constants.eta, iters, dtype=dtype, constants=constants)
        yield sid, members, W, C


def embed_all(
    M: sp.csr_matrix,
    landmarks: np.ndarray,
    sets: np.ndarray,
    constants: SetConstants,
    iters: int,
    dtype: str = "float64",
) -> tuple[np.ndarray, np.ndarray]:
    """W and C (n x d) of every node: Phi^T and Psi^T for the landmarks, the per-set
    solve (:func:`solve_sets`) for the nodes in a set, zero for the others."""
    Phi, Psi = constants.factors.Phi, constants.factors.Psi
    n, d = M.shape[0], Phi.shape[0]
    W, C = np.zeros((n, d)), np.zeros((n, d))
    V0 = np.asarray(landmarks, dtype=np.int64)
    W[V0], C[V0] = Phi.T, Psi.T
    for _, members, Wi, Ci in solve_sets(M, V0, sets, constants, iters, dtype):
        W[members], C[members] = Wi.T, Ci.T
    return W, C
