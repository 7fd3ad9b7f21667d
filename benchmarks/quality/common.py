"""Shared helpers of the quality study (NumPy only, no Spark session).

Builds the proximity matrix of a benchmark graph, chooses landmarks and sets the way the
job does (DD / DP / UF / GDS landmarks, RP / LP sets), runs the per-set SepNE solve of
:mod:`sepne_spark.solver` on dense/sparse blocks, and evaluates embeddings with the
paper's node-classification protocol (:func:`sepne_spark.evaluation.node_classification`)
or with a validation score computed inside the training part of each split only.

Single-process by design: BLAS is limited to one thread before NumPy is imported.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sepne_spark.evaluation import (  # noqa: E402
    OneVsRestLogisticRegression,
    _binarize,
    _predict_labels,
    f1_scores,
    l2_normalize,
    node_classification,
)
from sepne_spark.solver import LandmarkFactors, landmark_factors, solve_set  # noqa: E402

DATA_DIR = Path(os.environ.get("SEPNE_DATA_DIR", "/work/shared/datasets"))
RESULTS_DIR = ROOT / "benchmarks" / "results"
DATASETS = ("wiki", "cora", "citeseer")

PAPER = {
    "SepNE (paper)": {"wiki": (0.5764, 0.6867), "cora": (0.7365, 0.8220), "citeseer": (0.5157, 0.6072)},
    "DeepWalk (paper)": {"wiki": (0.5737, 0.6893), "cora": (0.7509, 0.8187), "citeseer": (0.5086, 0.5813)},
}


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


@dataclass
class Graph:
    name: str
    ids: list[str]
    src: np.ndarray  # edge list over 0..n-1 after self-loop removal (duplicates kept)
    dst: np.ndarray
    labels: list[str]  # one label per node, "" for nodes without a label

    @property
    def n(self) -> int:
        return len(self.ids)


def load_graph(name: str, self_loops: str = "drop") -> Graph:
    """Edges and labels of a benchmark; labelled nodes without edges become isolated nodes."""
    folder = DATA_DIR / name
    e_src, e_dst = [], []
    with open(folder / "edges.tsv") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                e_src.append(parts[0])
                e_dst.append(parts[1])
    lab: dict[str, str] = {}
    with open(folder / "labels.tsv") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                lab[parts[0]] = parts[1]
    ids = sorted(set(e_src) | set(e_dst) | set(lab))
    index = {v: i for i, v in enumerate(ids)}
    src = np.array([index[v] for v in e_src], dtype=np.int64)
    dst = np.array([index[v] for v in e_dst], dtype=np.int64)
    if self_loops == "drop":
        keep = src != dst
        src, dst = src[keep], dst[keep]
    return Graph(name, ids, src, dst, [lab.get(v, "") for v in ids])


def adjacency(g: Graph, directed: bool, dups: str = "sum") -> sp.csr_matrix:
    """Weighted adjacency (undirected edges in both directions). Duplicate edges (and, when
    undirected, the two directions of a pair given both ways) are summed (``dups="sum"``)
    or kept once with weight 1 (``dups="max"``), as the job's ``duplicates`` setting."""
    n = g.n
    W = sp.coo_matrix((np.ones(len(g.src)), (g.src, g.dst)), shape=(n, n)).tocsr()
    if not directed:
        W = W + W.T - sp.diags(W.diagonal())  # a kept self-loop appears once, as in the job
    W.sum_duplicates()
    W = W.tocsr()
    if dups == "max":
        W.data[:] = 1.0
    elif dups != "sum":
        raise ValueError(dups)
    return W


def _rownorm(W: sp.csr_matrix) -> sp.csr_matrix:
    s = np.asarray(W.sum(axis=1)).ravel()
    inv = np.where(s > 0, 1.0 / np.where(s > 0, s, 1.0), 0.0)
    return sp.diags(inv) @ W


def proximity(
    g: Graph, directed: bool, transform: str = "rw", metric: str = "A+A2", dups: str = "sum"
) -> sp.csr_matrix:
    """Proximity matrix M.

    transform:
      ``rw``   A = D^-1 W (the paper's row-normalised transition matrix), M = A + A^2;
      ``sym``  A = D^-1/2 W D^-1/2 (symmetric normalisation, out-degrees for directed graphs
               on both sides: D_out^-1/2 W D_in^-1/2), M = A + A^2;
      ``logN`` M = log(max(n/2 * (A + A^2) D^-1 vol ..., 1)): a shifted PPMI-like transform of the
               rw matrix, log(max(vol/(2) * M_uv / d_v, 1)) (NetMF-style, window 2, b = 1).
      ``logN:b`` the same with the shift of b negative samples: log(max(vol/(2 b) * M_uv / d_v, 1)).
      ``logNa:alpha`` the same with negative samples drawn by degree ** alpha (word2vec's 0.75):
               d_v ** alpha in place of d_v and their sum in place of vol.

    metric: ``A+A2``, ``I+A``, or ``winT`` (A + A^2 + ... + A^T; with ``logN`` the constant
    is vol/(T b), the NetMF window-T matrix).

    dups: duplicate edges summed or kept once (:func:`adjacency`).
    """
    W = adjacency(g, directed, dups)
    n = g.n
    shift, alpha = 1.0, 1.0
    if transform.startswith("logN:"):
        transform, shift = "logN", float(transform.split(":", 1)[1])
    elif transform.startswith("logNa:"):  # negative samples drawn by degree ** alpha
        transform, alpha = "logN", float(transform.split(":", 1)[1])
    if transform in ("rw", "logN"):
        A = _rownorm(W)
    elif transform == "sym":
        so = np.asarray(W.sum(axis=1)).ravel()
        si = np.asarray(W.sum(axis=0)).ravel()
        io = np.where(so > 0, 1.0 / np.sqrt(np.where(so > 0, so, 1.0)), 0.0)
        ii = np.where(si > 0, 1.0 / np.sqrt(np.where(si > 0, si, 1.0)), 0.0)
        A = sp.diags(io) @ W @ sp.diags(ii)
    else:
        raise ValueError(transform)
    A = sp.csr_matrix(A)
    window = 2
    if metric == "A+A2":
        M = A + A @ A
    elif metric.startswith("win"):  # winT: A + A^2 + ... + A^T
        window = int(metric[3:])
        M, P = A.copy(), A
        for _ in range(window - 1):
            P = P @ A
            M = M + P
    elif metric == "I+A":
        M = sp.identity(n, format="csr") + A
    else:
        raise ValueError(metric)
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


def degrees(g: Graph, directed: bool) -> np.ndarray:
    """Total degree (in + out entries of the directed edge list, both directions if undirected)."""
    W = adjacency(g, directed)
    B = (W > 0).astype(np.float64)
    return np.asarray(B.sum(axis=1)).ravel() + np.asarray(B.sum(axis=0)).ravel()


# ---------------------------------------------------------------------------
# Landmarks and sets
# ---------------------------------------------------------------------------


def select_landmarks(g: Graph, directed: bool, k: int, strategy: str = "DD", seed: int = 0) -> np.ndarray:
    deg = degrees(g, directed)
    n = g.n
    order_dd = np.lexsort((np.array(g.ids), -deg))  # degree desc, id asc
    if strategy == "DD":
        return order_dd[:k]
    rng = np.random.default_rng([seed, 17])
    if strategy == "UF":
        return rng.choice(n, size=k, replace=False)
    if strategy == "DP":
        p = deg / deg.sum()
        nz = np.flatnonzero(p > 0)
        return rng.choice(nz, size=k, replace=False, p=p[nz] / p[nz].sum())
    if strategy == "GDS":
        W = adjacency(g, directed)
        U = ((W + W.T) > 0).tocsr()
        blocked = np.zeros(n, dtype=bool)
        chosen: list[int] = []
        for v in order_dd:
            if len(chosen) == k:
                break
            if blocked[v]:
                continue
            chosen.append(int(v))
            blocked[v] = True
            blocked[U.indices[U.indptr[v]:U.indptr[v + 1]]] = True
        if len(chosen) < k:  # dominated: fill by degree
            rest = [int(v) for v in order_dd if v not in set(chosen)]
            chosen += rest[: k - len(chosen)]
        return np.array(chosen, dtype=np.int64)
    raise ValueError(strategy)


def random_sets(nodes: np.ndarray, set_size: int, seed: int = 0) -> list[np.ndarray]:
    """RP: each node to one of ceil(n / set_size) sets uniformly at random (seeded)."""
    s = max(1, math.ceil(len(nodes) / set_size))
    a = np.random.default_rng([seed, 7919]).integers(0, s, size=len(nodes))
    return [np.sort(nodes[a == j]) for j in range(s) if np.any(a == j)]


def label_propagation(g: Graph, max_iter: int = 10, seed: int = 0) -> np.ndarray:
    """Asynchronous label propagation (random node order each round, ties broken at random)."""
    W = adjacency(g, directed=True)
    U = ((W + W.T) > 0).astype(np.float64).tocsr()
    U.setdiag(0)
    U.eliminate_zeros()
    n = g.n
    lab = np.arange(n)
    rng = np.random.default_rng([seed, 31])
    for _ in range(max_iter):
        changed = 0
        for v in rng.permutation(n):
            nb = U.indices[U.indptr[v]:U.indptr[v + 1]]
            if nb.size == 0:
                continue
            vals, cnt = np.unique(lab[nb], return_counts=True)
            best = vals[cnt == cnt.max()]
            if lab[v] in best:
                continue
            lab[v] = best[rng.integers(best.size)]
            changed += 1
        if changed == 0:
            break
    return lab


def community_sets(labels: np.ndarray, nodes: np.ndarray, set_size: int, seed: int = 0) -> list[np.ndarray]:
    """LP packing as in the job: big communities split evenly, small ones laid end to end
    in decreasing size order and cut every ``set_size`` nodes."""
    rng = np.random.default_rng([seed, 41])
    lab = labels[nodes]
    comms: dict[int, list[int]] = {}
    for v, c in zip(nodes, lab):
        comms.setdefault(int(c), []).append(int(v))
    big = [np.array(m) for m in comms.values() if len(m) > set_size]
    small = sorted((m for m in comms.values() if len(m) <= set_size), key=lambda m: (-len(m), min(m)))
    sets: list[np.ndarray] = []
    for m in big:
        m = rng.permutation(m)
        c = math.ceil(len(m) / set_size)
        sets += [np.sort(m[j::c]) for j in range(c)]
    flat = [v for m in small for v in m]
    for j in range(0, len(flat), set_size):
        sets.append(np.sort(np.array(flat[j:j + set_size])))
    return sets


# ---------------------------------------------------------------------------
# SepNE
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    directed: bool = False
    transform: str = "rw"
    metric: str = "A+A2"
    d: int = 128
    k: int = 200
    strategy: str = "DD"
    partition: str = "RP"
    set_size: int = 500
    lam: float = 0.4
    eta: float = 0.1
    iters: int = 100
    output: str = "W"  # W, C, W+C (sum), avg (mean of the L2-normalised W and C), concat (2d)
    seed: int = 0
    method: str = "sepne"  # sepne, svd (rank-d truncated SVD of M), nystrom (same landmarks)
    self_loops: str = "drop"  # "keep": self-loops stay in the adjacency (once)
    spow: float = 0.0  # output coordinate j scaled by s_j ** spow (s: singular values of M00)
    dups: str = "sum"  # "max": duplicate edges kept once (the job's duplicates: max)
    factor: str = "M00"  # "rows": landmark subspaces from all landmark rows / columns

    def tag(self) -> str:
        return ",".join(f"{k}={v}" for k, v in asdict(self).items())


AS_WRITTEN = Config()


def sepne(g: Graph, cfg: Config, M: sp.csr_matrix | None = None) -> tuple[np.ndarray, np.ndarray]:
    """W, C (n x d) for every node; landmarks get Phi^T, Psi^T."""
    if M is None:
        M = proximity(g, cfg.directed, cfg.transform, cfg.metric, cfg.dups)
    M = sp.csr_matrix(M)
    n = g.n
    V0 = select_landmarks(g, cfg.directed, cfg.k, cfg.strategy, cfg.seed)
    is_l = np.zeros(n, dtype=bool)
    is_l[V0] = True
    nl = np.flatnonzero(~is_l)
    Mc = M.tocsc()
    Mrow0 = M[V0].toarray()  # k x n: M[l, v]
    Mcol0 = Mc[:, V0].toarray()  # n x k: M[v, l]
    if cfg.factor == "M00":
        F = landmark_factors(Mrow0[:, V0], cfg.d)
    elif cfg.factor == "rows":
        F = row_space_factors(Mrow0, Mcol0, V0, cfg.d)
    else:
        raise ValueError(cfg.factor)
    M0nl = Mrow0[:, nl]  # k x nnl
    Mnl0 = Mcol0[nl]  # nnl x k
    S_A = M0nl @ M0nl.T
    S_B = Mnl0.T @ Mnl0
    Rhat_A = (M[:, nl] @ M0nl.T).T  # k x n: sum_v M[u,v] M_0v
    Rhat_B = (Mc[nl, :].T @ Mnl0).T  # k x n: sum_v M[v,u] M_v0
    Rhat_A = np.asarray(Rhat_A)
    Rhat_B = np.asarray(Rhat_B)
    if cfg.partition == "RP":
        sets = random_sets(nl, cfg.set_size, cfg.seed)
    elif cfg.partition == "LP":
        sets = community_sets(label_propagation(g, seed=cfg.seed), nl, cfg.set_size, cfg.seed)
    elif cfg.partition == "ALL":
        sets = [nl]
    else:
        raise ValueError(cfg.partition)
    d = F.Phi.shape[0]
    W = np.zeros((n, d))
    C = np.zeros((n, d))
    W[V0] = F.Phi.T
    C[V0] = F.Psi.T
    for Vi in sets:
        Mii = M[Vi][:, Vi]
        Wi, Ci = solve_set(
            F, S_A, S_B, Mii, Mcol0[Vi], Mrow0[:, Vi], Rhat_A[:, Vi], Rhat_B[:, Vi],
            cfg.lam, cfg.eta, cfg.iters,
        )
        W[Vi] = Wi.T
        C[Vi] = Ci.T
    if cfg.spow:
        scale = F.singular_values[:d] ** cfg.spow
        W, C = W * scale, C * scale
    return W, C


def row_space_factors(Mrow0: np.ndarray, Mcol0: np.ndarray, V0: np.ndarray, d: int) -> LandmarkFactors:
    """Phi, Psi spanning the top-d left singular subspace of the landmark rows M_0: (k x n)
    and the right one of the landmark columns M_:0 (n x k), in place of M00's own; P is
    M00 projected on the two subspaces (Phi^T Psi = U_L U_L^T M00 V_R V_R^T)."""
    M00 = Mrow0[:, V0]
    _, UL = np.linalg.eigh(Mrow0 @ Mrow0.T)  # eigenvalues ascending
    _, VR = np.linalg.eigh(Mcol0.T @ Mcol0)
    UL, VR = UL[:, ::-1][:, :d], VR[:, ::-1][:, :d]
    X, sig, Yt = np.linalg.svd(UL.T @ M00 @ VR)
    root = np.sqrt(sig)
    Phi = ((UL @ X) * root).T.copy()
    Psi = ((VR @ Yt.T) * root).T.copy()
    return LandmarkFactors(Phi=Phi, Psi=Psi, P=Phi.T @ Psi, singular_values=sig)


def combine(W: np.ndarray, C: np.ndarray, output: str) -> np.ndarray:
    if output == "W":
        return W
    if output == "C":
        return C
    if output == "W+C":
        return W + C
    if output == "avg":
        return 0.5 * (l2_normalize(W) + l2_normalize(C))
    if output == "concat":
        return np.hstack([W, C])
    raise ValueError(output)


def svd_factors(M: sp.csr_matrix, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank-d truncated SVD (W = U S^1/2, C = V S^1/2) by ARPACK; the final table uses
    the dense full SVD of :func:`sepne_spark.baselines.svd_embedding` instead."""
    from scipy.sparse.linalg import svds

    U, s, Vt = svds(sp.csr_matrix(M), k=d, random_state=0)
    o = np.argsort(-s)
    root = np.sqrt(s[o])
    return U[:, o] * root, Vt[o].T * root


def nystrom(g: Graph, cfg: Config, M: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    from sepne_spark.baselines import nystrom_embedding

    V0 = select_landmarks(g, cfg.directed, cfg.k, cfg.strategy, cfg.seed)
    return nystrom_embedding(M, V0, cfg.d)


def embed(g: Graph, cfg: Config, M: sp.csr_matrix | None = None) -> np.ndarray:
    if M is None:
        M = proximity(g, cfg.directed, cfg.transform, cfg.metric, cfg.dups)
    if cfg.method == "svd":
        W, C = svd_factors(M, cfg.d)
    elif cfg.method == "nystrom":
        W, C = nystrom(g, cfg, M)
    else:
        W, C = sepne(g, cfg, M)
    return combine(W, C, cfg.output)


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


def labelled(g: Graph, X: np.ndarray) -> tuple[np.ndarray, list[str]]:
    keep = [i for i, l in enumerate(g.labels) if l != ""]
    return X[keep], [g.labels[i] for i in keep]


def test_scores(g: Graph, X: np.ndarray, n_splits: int = 10, seed: int = 0) -> tuple[float, float]:
    """The reported numbers: micro-F1 mean of 10 splits at 10% and 90% training."""
    Xl, y = labelled(g, X)
    r = node_classification(Xl, y, (0.1, 0.9), n_splits=n_splits, seed=seed)["results"]
    return r[0.1]["micro_f1_mean"], r[0.9]["micro_f1_mean"]


def validation_scores(
    g: Graph, X: np.ndarray, n_outer: int = 5, folds: int = 3, seed: int = 0
) -> tuple[float, float]:
    """Model-selection score that never looks at a test node.

    For each of the first ``n_outer`` splits of the reporting protocol (the same
    permutations as :func:`node_classification`), only the training part (first 10% or
    90% of the permutation) is used: it is cut into ``folds`` folds, a classifier trained
    on the other folds predicts each fold, and the micro-F1 over the training part is
    averaged over the outer splits.
    """
    Xl, y = labelled(g, X)
    Y, _ = _binarize(y)
    Xl = l2_normalize(Xl)
    n = Xl.shape[0]
    out = []
    for r in (0.1, 0.9):
        vals = []
        for s in range(n_outer):
            perm = np.random.default_rng([int(seed), s]).permutation(n)
            tr = perm[: min(max(1, int(r * n)), n - 1)]
            inner = np.random.default_rng([int(seed), s, 999]).permutation(tr)
            parts = np.array_split(inner, folds)
            T = np.zeros((0, Y.shape[1]), dtype=bool)
            P = np.zeros((0, Y.shape[1]), dtype=bool)
            for j in range(folds):
                va = parts[j]
                fit = np.concatenate([parts[i] for i in range(folds) if i != j])
                clf = OneVsRestLogisticRegression().fit(Xl[fit], Y[fit])
                pred = _predict_labels(clf.decision_function(Xl[va]), None)
                T = np.vstack([T, Y[va]])
                P = np.vstack([P, pred])
            vals.append(f1_scores(T, P)[0])
        out.append(float(np.mean(vals)))
    return out[0], out[1]


def save_json(name: str, obj: Any) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    path.write_text(json.dumps(obj, indent=2, default=str))
    return path


__all__ = [n for n in dir() if not n.startswith("__")]
