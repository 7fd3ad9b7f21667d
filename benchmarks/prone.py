"""ProNE (Zhang, Tang, Ding, Zhou and Xu, IJCAI 2019) as a single-machine benchmark peer.

Written from the paper and its reference implementation (THUDM/ProNE, ``proNE.py``):

1. Sparse matrix factorisation. ``C1`` is the L1-row-normalised adjacency; the negative
   sampling distribution is ``neg_v = (column sum of C1)_v ^ 0.75``, normalised to sum 1;
   on the adjacency's pattern the matrix ``F`` has entries ``log(C1_uv) - log(neg_v)``
   (entries ``<= 0`` set to 1 before the log, as the reference does). ``F`` is factored
   by a randomized truncated SVD (``d`` components, 5 power iterations), the embedding is
   ``U sqrt(S)`` with rows L2-normalised.
2. Spectral propagation: the Chebyshev-Gaussian filter of :func:`sepne_spark.spectral.propagate`
   (order 10, mu 0.2, theta 0.5 by default), then a dense SVD ``U sqrt(S)`` of the
   n x d result, rows L2-normalised.

The randomized SVD is the Halko-Martinsson-Tropp range finder that scikit-learn's
``randomized_svd`` implements (10 oversamples, QR-normalised power iterations), in
NumPy so that the benchmark needs nothing beyond NumPy/SciPy; its seed is fixed.

Usage (times each stage; graph from a benchmark folder or a generated SBM)::

    PYTHONPATH=. python benchmarks/prone.py --dataset cora
    PYTHONPATH=. python benchmarks/prone.py --dcsbm 100000 --communities 50 --degree 15 --mixing 0.6
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sepne_spark.evaluation import l2_normalize  # noqa: E402
from sepne_spark.spectral import propagate, sparse_products  # noqa: E402


def randomized_svd(
    X: sp.spmatrix, k: int, n_iter: int = 5, oversamples: int = 10, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-``k`` SVD of a sparse matrix by a randomized range finder (Halko et al. 2011)."""
    n, m = X.shape
    p = min(k + oversamples, min(n, m))
    rng = np.random.default_rng(seed)
    Q = X @ rng.standard_normal((m, p))
    Q, _ = np.linalg.qr(Q)
    Xt = X.T.tocsr()
    for _ in range(n_iter):
        Q, _ = np.linalg.qr(Xt @ Q)
        Q, _ = np.linalg.qr(X @ Q)
    B = np.asarray((Xt @ Q).T)  # p x m  (= Q^T X)
    Ub, s, Vt = np.linalg.svd(B, full_matrices=False)
    U = Q @ Ub
    return U[:, :k], s[:k], Vt[:k]


def prone_matrix(A: sp.spmatrix, alpha: float = 0.75) -> sp.csr_matrix:
    """ProNE's sparse log-ratio matrix ``F`` on the pattern of the adjacency ``A``."""
    A = sp.csr_matrix(A, dtype=np.float64)
    s = np.asarray(A.sum(axis=1)).ravel()
    inv = np.zeros_like(s)
    inv[s > 0] = 1.0 / s[s > 0]
    C1 = sp.csr_matrix(sp.diags(inv) @ A)
    neg = np.asarray(C1.sum(axis=0)).ravel() ** alpha
    neg = neg / neg.sum()
    N = sp.csr_matrix(A @ sp.diags(neg))  # neg_v on A's pattern (the reference's mask)
    C1.data[C1.data <= 0] = 1.0
    N.data[N.data <= 0] = 1.0
    C1.data = np.log(C1.data)
    N.data = np.log(N.data)
    return sp.csr_matrix(C1 - N)


def prone_base(A: sp.spmatrix, d: int = 128, n_iter: int = 5, seed: int = 0, normalize: bool = True) -> np.ndarray:
    """ProNE's first stage: randomized tSVD of :func:`prone_matrix`, ``U sqrt(S)``, rows
    L2-normalised (``normalize=False``: as they come out of the SVD)."""
    F = prone_matrix(A)
    U, s, _ = randomized_svd(F, d, n_iter=n_iter, seed=seed)
    return l2_normalize(U * np.sqrt(s)) if normalize else U * np.sqrt(s)


def dense_svd_embedding(Y: np.ndarray, d: int) -> np.ndarray:
    """ProNE's final step: ``U sqrt(S)`` of the dense SVD of ``Y``, top ``d``, rows L2-normalised."""
    U, s, _ = np.linalg.svd(Y, full_matrices=False)
    return l2_normalize(U[:, :d] * np.sqrt(s[:d]))


def undirected_adjacency(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
    """``(ids, A)``: the sorted node ids of an edge list and its undirected 0/1 adjacency
    over them (both directions, a repeated pair once), as ProNE reads a graph."""
    ids, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    s, t = inv[: len(src)], inv[len(src):]
    A = sp.csr_matrix((np.ones(2 * len(s)), (np.concatenate([s, t]), np.concatenate([t, s]))),
                      shape=(len(ids), len(ids)))
    A.data[:] = 1.0
    return ids, A


def prone(
    A: sp.spmatrix, d: int = 128, order: int = 10, mu: float = 0.2, theta: float = 0.5, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """ProNE: ``(base, enhanced, seconds)`` for the undirected adjacency ``A``."""
    t0 = time.perf_counter()
    base = prone_base(A, d, seed=seed)
    t1 = time.perf_counter()
    Y = propagate(A, base, order, mu, theta)
    enhanced = dense_svd_embedding(Y, d)
    t2 = time.perf_counter()
    return base, enhanced, {"factorise_s": t1 - t0, "propagate_s": t2 - t1, "total_s": t2 - t0}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--dataset", help="folder name under /work/shared/datasets (wiki, cora, citeseer)")
    g.add_argument("--sbm", type=int, metavar="NODES")
    g.add_argument("--dcsbm", type=int, metavar="NODES")
    ap.add_argument("--communities", type=int, default=50)
    ap.add_argument("--degree", type=float, default=15.0)
    ap.add_argument("--mixing", type=float, default=0.6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--order", type=int, default=10)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from large_graph_study import load_dataset, generated

    if args.dataset:
        G = load_dataset(args.dataset)
    else:
        kind = "sbm" if args.sbm else "dcsbm"
        G = generated(kind, args.sbm or args.dcsbm, args.communities, args.degree, args.mixing, args.seed)
    _, _, t = prone(G.A, order=args.order)
    print(json.dumps({"graph": G.name, "n": G.n, "edges": int(G.A.nnz // 2),
                      "sparse_products": sparse_products(args.order), **t}))


if __name__ == "__main__":
    main()
