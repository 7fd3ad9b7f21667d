"""Research-only variants of the quality study: what the library does not ship.

Everything the library has (M with ``scaling`` none or log and any window, the four
landmark strategies, RP and LP sets, both landmark factorisations, the solve) runs
through the library itself (:func:`common.library_run`). The variants here change one
thing and take the rest from the library:

* transforms of W that the library does not have (:func:`proximity`): ``sym``
  (D^-1/2 W D^-1/2), ``logN:b`` (the log scaling with a shift of b negative samples),
  ``logNa:alpha`` (negatives drawn by degree ** alpha);
* ``partition="ALL"`` (one set holding every node: no separation, a reference);
* ``spow`` (output coordinates scaled by a power of M00's singular values);
* ``method="svd"`` (rank-d truncated SVD of M) and ``method="nystrom"``;
* ``component_landmarks`` (:func:`component_landmarks`): one more landmark in every
  component of two or more nodes that holds none (its highest-degree node), so that
  no node with an edge is out of every landmark's reach (``components.py`` scores it).

The landmarks and the sets are always the library's own, from a fit with the same
layout settings (:func:`common.layout_params`), and the per-set solve is the library's
(:func:`sepne_spark.sparse.embed_all` with :func:`sepne_spark.sparse.landmark_summaries`),
run here on the variant's M.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

import common
from sepne_spark.solver import landmark_factors, row_space_factors, set_constants
from sepne_spark.sparse import embed_all, landmark_summaries

if TYPE_CHECKING:  # pragma: no cover
    from common import Config, Graph


def _rownorm(W: sp.csr_matrix) -> sp.csr_matrix:
    s = np.asarray(W.sum(axis=1)).ravel()
    inv = np.where(s > 0, 1.0 / np.where(s > 0, s, 1.0), 0.0)
    return sp.diags(inv) @ W


def proximity(g: "Graph", directed: bool, transform: str, metric: str = "A+A2", dups: str = "sum") -> sp.csr_matrix:
    """M of a research transform.

    ``sym``: A = D^-1/2 W D^-1/2 (out-degrees on the left, in-degrees on the right for
    directed graphs), M = A + A^2 + ... + A^T. ``logN:b``: the library's log scaling of
    the row-normalised M with the constant vol / (T b) in place of vol / T. ``logNa:alpha``:
    the same with d_v ** alpha in place of the in-weight d_v and their sum in place of vol.
    """
    W = common.adjacency(g, directed, dups)
    n = g.n
    shift, alpha = 1.0, 1.0
    if transform.startswith("logN:"):
        transform, shift = "logN", float(transform.split(":", 1)[1])
    elif transform.startswith("logNa:"):
        transform, alpha = "logN", float(transform.split(":", 1)[1])
    if transform == "logN":
        A = _rownorm(W)
    elif transform == "sym":
        so = np.asarray(W.sum(axis=1)).ravel()
        si = np.asarray(W.sum(axis=0)).ravel()
        io = np.where(so > 0, 1.0 / np.sqrt(np.where(so > 0, so, 1.0)), 0.0)
        ii = np.where(si > 0, 1.0 / np.sqrt(np.where(si > 0, si, 1.0)), 0.0)
        A = sp.diags(io) @ W @ sp.diags(ii)
    else:
        raise ValueError(f"not a research transform: {transform!r}")
    A = sp.csr_matrix(A)
    lib_metric, window = common.library_metric(metric)
    if lib_metric == "I+A":
        M = sp.identity(n, format="csr") + A
    else:
        M, P = A.copy(), A
        for _ in range(window - 1):
            P = P @ A
            M = M + P
    M = sp.csr_matrix(M)
    if transform == "logN":
        deg_in = np.asarray(W.sum(axis=0)).ravel() ** alpha
        vol = float(deg_in.sum())
        M = M.tocoo()
        dv = deg_in[M.col]
        val = np.where(dv > 0, vol / (window * shift) * M.data / np.where(dv > 0, dv, 1.0), 0.0)
        val = np.log(np.maximum(val, 1.0))
        M = sp.csr_matrix((val, (M.row, M.col)), shape=(n, n))
    M.eliminate_zeros()
    return M


def library_layout(g: "Graph", cfg: "Config") -> common.LibraryRun:
    """The library's landmarks and sets for ``cfg`` (a fit with its layout settings and
    the paper's M; neither depends on M)."""
    base = replace(cfg, transform="rw", method="sepne", spow=0.0,
                   partition="RP" if cfg.partition == "ALL" else cfg.partition)
    params = dict(common.layout_params(base), metric=common.library_metric(base.metric)[0], iters=0)
    return common.library_run(g, params)


def component_landmarks(g: "Graph", cfg: "Config", landmarks: np.ndarray) -> np.ndarray:
    """The highest-degree node (the first by index on ties) of every connected
    component of two or more nodes that holds none of ``landmarks``, largest
    components first (undirected connectivity)."""
    from scipy.sparse.csgraph import connected_components

    W = common.adjacency(g, cfg.directed, cfg.dups)
    A = sp.csr_matrix(((W + W.T) > 0).astype(np.float64))
    _, comp = connected_components(A, directed=False)
    degree = np.asarray(A.sum(axis=1)).ravel()
    sizes = np.bincount(comp)
    covered = set(comp[np.asarray(landmarks, dtype=np.int64)].tolist())
    extra = []
    for c in np.argsort(-sizes, kind="stable"):
        if sizes[c] >= 2 and int(c) not in covered:
            members = np.flatnonzero(comp == c)
            extra.append(int(members[np.argmax(degree[members])]))
    return np.array(extra, dtype=np.int64)


def sepne(g: "Graph", cfg: "Config", M: sp.csr_matrix | None = None,
          per_component: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """W, C (n x d) of a research variant: the library's landmarks, sets and solver on
    the variant's M (``M`` when given); with ``per_component``, the library's
    landmarks and :func:`component_landmarks` (taken out of their sets)."""
    if M is None:
        M = common.proximity(g, cfg.directed, cfg.transform, cfg.metric, cfg.dups)
    M = sp.csr_matrix(M)
    layout = library_layout(g, cfg)
    V0 = layout.landmarks
    sets = layout.sets.copy()
    if per_component:
        extra = component_landmarks(g, cfg, V0)
        V0 = np.concatenate([V0, extra])
        sets[extra] = -1
    if cfg.partition == "ALL":
        sets[sets >= 0] = 0
    M00, S_A, S_B = landmark_summaries(M, V0)
    if cfg.factor == "M00":
        F = landmark_factors(M00, cfg.d)
    elif cfg.factor == "rows":
        F = row_space_factors(M00, S_A, S_B, cfg.d)
    else:
        raise ValueError(cfg.factor)
    W, C = embed_all(M, V0, sets, set_constants(F, S_A, S_B, cfg.lam, cfg.eta), cfg.iters)
    if cfg.spow:
        scale = F.singular_values[:W.shape[1]] ** cfg.spow
        W, C = W * scale, C * scale
    return W, C


def svd_factors(M: sp.csr_matrix, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank-d truncated SVD (W = U S^1/2, C = V S^1/2) by ARPACK; the final table uses
    the dense full SVD of :func:`sepne_spark.baselines.svd_embedding` instead."""
    from scipy.sparse.linalg import svds

    U, s, Vt = svds(sp.csr_matrix(M), k=d, random_state=0)
    o = np.argsort(-s)
    root = np.sqrt(s[o])
    return U[:, o] * root, Vt[o].T * root


def nystrom(g: "Graph", cfg: "Config", M: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Nystrom with the library's landmarks of ``cfg``."""
    from sepne_spark.baselines import nystrom_embedding

    return nystrom_embedding(M, library_layout(g, cfg).landmarks, cfg.d)
