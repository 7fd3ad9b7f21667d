"""Dense NumPy reference of SepNE (small graphs only).

This module implements the equations of the method literally, with dense n x n
matrices and direct k x k solves, so that it can serve as an oracle for the distributed
code path: for the same landmarks and the same partition the two must agree to
floating-point tolerance. It also gives the full-SVD and Nystrom baselines their
proximity matrix; :mod:`sepne_spark.sparse` holds the same M in SciPy form.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def weight_matrix(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    weight: np.ndarray | None = None,
    directed: bool = True,
) -> np.ndarray:
    """Weighted adjacency W (n x n) of an edge list over nodes 0..n-1.

    Parallel edges are summed; an undirected edge counts in both directions, and an
    undirected self-loop ``(u, u)`` once (it is its own reverse), as
    :func:`sepne_spark.graph.prepare_graph` keeps it.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    w = np.ones(len(src)) if weight is None else np.asarray(weight, dtype=np.float64)
    W = np.zeros((n, n))
    np.add.at(W, (src, dst), w)
    if not directed:
        Wt = np.zeros((n, n))
        np.add.at(Wt, (dst, src), w)
        W = W + Wt - np.diag(np.diagonal(W))
    return W


def transition_matrix(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    weight: np.ndarray | None = None,
    directed: bool = True,
) -> np.ndarray:
    """Row-normalised transition matrix A (n x n) of an edge list over nodes 0..n-1.

    Parallel edges are summed; an undirected edge counts in both directions; a node
    without out-edges has a zero row.
    """
    W = weight_matrix(n, src, dst, weight, directed)
    s = W.sum(axis=1)
    out = np.zeros_like(W)
    nz = s > 0
    out[nz] = W[nz] / s[nz, None]
    return out


def proximity_from_transition(A: np.ndarray, metric: str, window: int = 2) -> np.ndarray:
    """M = I + A (``"I+A"``) or M = A + A·A + ... + A^window (``"A+A2"``)."""
    if metric == "I+A":
        return np.eye(A.shape[0]) + A
    if metric == "A+A2":
        M, power = A.copy(), A
        for _ in range(window - 1):
            power = power @ A
            M = M + power
        return M
    raise ValueError(f"unknown metric {metric!r}; expected 'I+A' or 'A+A2'")


def log_scaled(M: np.ndarray, W: np.ndarray, window: int = 2) -> np.ndarray:
    """The ``log`` proximity scaling: log(max(vol * M[u, v] / (T s_in(v)), 1)), T the window.

    ``vol`` is the sum of all weights of W and ``s_in(v)`` the weight into v (column sum
    of W); a column with s_in(v) = 0 becomes zero. Zeros of M stay zero.
    """
    vol = W.sum()
    s_in = W.sum(axis=0)
    out = np.zeros_like(M)
    nz = s_in > 0
    out[:, nz] = np.log(np.maximum(vol * M[:, nz] / (float(window) * s_in[nz]), 1.0))
    return out


def landmark_factors(M00: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SVD of the landmark block: Phi, Psi (d x k) and P = Phi^T Psi (k x k)."""
    U, s, Vt = np.linalg.svd(M00)
    d = min(d, len(s))
    root = np.sqrt(s[:d])
    Phi = (U[:, :d] * root).T
    Psi = (Vt[:d].T * root).T
    return Phi, Psi, Phi.T @ Psi


def landmark_summaries(M: np.ndarray, landmarks: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M00 = M[V0, V0], S_A = sum_v M_0v M_0v^T and S_B = sum_v M_v0^T M_v0 over the
    nodes v outside V0, literally."""
    V0 = np.asarray(landmarks, dtype=np.int64)
    nl = np.setdiff1d(np.arange(M.shape[0]), V0)
    return M[np.ix_(V0, V0)], M[np.ix_(V0, nl)] @ M[np.ix_(V0, nl)].T, M[np.ix_(nl, V0)].T @ M[np.ix_(nl, V0)]


def sepne_dense(
    M: np.ndarray,
    landmarks: Sequence[int],
    sets: Sequence[Sequence[int]],
    d: int,
    lam: float,
    eta: float,
    iters: int,
    factors: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Embed every node of ``sets`` (and the landmarks) with the literal equations.

    Parameters
    ----------
    M: dense proximity matrix (n x n).
    landmarks: indices of the k landmark nodes, in landmark order.
    sets: the partition of the non-landmark nodes that are embedded; nodes outside
        every set and outside the landmarks still count in the global terms.
    d, lam, eta, iters: dimension, global weight, regulariser, alternating rounds.
    factors: Phi, Psi and P of the landmarks when they do not come from M00's SVD
        (the ``rows`` and ``walks`` landmark subspaces); the solve is the same.

    Returns
    -------
    W, C: (n x d) embeddings and context vectors; rows of nodes in no set are NaN.
    """
    n = M.shape[0]
    V0 = np.asarray(landmarks, dtype=np.int64)
    k = len(V0)
    Phi, Psi, P = landmark_factors(M[np.ix_(V0, V0)], d) if factors is None else factors
    dd = Phi.shape[0]
    W = np.full((n, dd), np.nan)
    C = np.full((n, dd), np.nan)
    W[V0] = Phi.T
    C[V0] = Psi.T
    non_landmark = np.setdiff1d(np.arange(n), V0)
    I = np.eye(k)
    for members in sets:
        Vi = np.asarray(sorted(members), dtype=np.int64)
        ibar = np.setdiff1d(non_landmark, Vi)
        Mii = M[np.ix_(Vi, Vi)]
        Mi0 = M[np.ix_(Vi, V0)]
        M0i = M[np.ix_(V0, Vi)]
        M0b = M[np.ix_(V0, ibar)]
        Mib = M[np.ix_(Vi, ibar)]
        Mbi = M[np.ix_(ibar, Vi)]
        Mb0 = M[np.ix_(ibar, V0)]
        GA, RA = M0b @ M0b.T, M0b @ Mib.T
        GB, RB = Mb0.T @ Mb0, Mb0.T @ Mbi
        B = np.linalg.solve(P.T @ P + eta * I, P.T @ M0i)
        A = None
        for _ in range(iters):
            X = P @ B
            A = np.linalg.solve(
                X @ X.T + P @ P.T + lam * GA + eta * I, X @ Mii.T + P @ Mi0.T + lam * RA
            )
            Y = P.T @ A
            B = np.linalg.solve(
                Y @ Y.T + P.T @ P + lam * GB + eta * I, Y @ Mii + P.T @ M0i + lam * RB
            )
        if A is None:  # zero iterations: landmark-only solution for A as well
            A = np.linalg.solve(P @ P.T + eta * I, P @ Mi0.T)
        W[Vi] = (Phi @ A).T
        C[Vi] = (Psi @ B).T
    return W, C

