"""The document graphs' classification table with the best-known peers, measured here.

The paper's table gives SepNE and DeepWalk numbers from its own runs. This script runs
the peers on this machine, on the same graphs and with exactly the protocol of the
other tables (:func:`common.test_scores`: micro-F1 mean of 10 splits at 10% and 90%
training, one-vs-rest logistic regression, C = 1, on L2-normalised rows; the labelled
nodes without an edge kept as zero rows), next to the library's default:

* ``sepne``: the embed job's default on these graphs (``auto`` takes
  ``document-quality``: :data:`final.CHOSEN` with ``unreached: anchor``), through the
  library (:func:`common.library_run`);
* ``prone``: ProNE (``benchmarks/prone.py``: randomized tSVD of the sparse log-ratio
  matrix, then the Chebyshev filter, 10 terms, mu 0.2, theta 0.5) and ``prone-base``, its
  factorisation alone;
* ``netmf-1``, ``netmf-10``: NetMF (Qiu et al., WSDM 2018) computed exactly (dense, these
  graphs have at most 3,312 nodes): ``U_d sqrt(S_d)`` of the SVD of
  ``log max(vol / (b T) (P + ... + P^T) D^-1, 1)``, b = 1, for windows of 1 and 10,
  which is the library's log-scaled M for that window (:func:`common.proximity`);
* ``deepwalk``: DeepWalk (Perozzi et al., KDD 2014) with its paper's settings: 80
  uniform walks of 40 nodes from every node, skip-gram with hierarchical softmax,
  window 10, one pass (``gensim``, a benchmark dependency: ``pip install -e ".[bench]"``).

Every row also gets the validation score the study chooses with
(:func:`common.validation_scores`, inside the training parts only), so the peers can be
read on the scale of ``VALIDATION_LOG.md``. Nothing here chooses a setting.

Usage::

    python benchmarks/quality/peers.py [--methods sepne,prone,...] [--datasets wiki,cora,citeseer]

Prints the table and writes ``benchmarks/results/quality_peers.json``.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from typing import Callable

import numpy as np
import scipy.sparse as sp

import common
import final

sys.path.insert(0, str(common.ROOT / "benchmarks"))

from prone import prone  # noqa: E402

METHODS = ("sepne", "prone", "prone-base", "netmf-1", "netmf-10", "deepwalk")


def netmf(g: common.Graph, window: int, d: int = 128) -> np.ndarray:
    """Exact NetMF embedding ``U_d sqrt(S_d)``, b = 1: the dense SVD of the library's own
    log-scaled M for walks of up to ``window`` steps (:func:`common.proximity`, equal to
    NetMF's ``log max(vol / (b T) (P + ... + P^T) D^-1, 1)`` to 1e-15 on these graphs),
    by :func:`sepne_spark.baselines.svd_embedding`."""
    from sepne_spark.baselines import svd_embedding

    return svd_embedding(common.proximity(g, False, "logN", f"win{window}"), d)[0]


def deepwalk(A: sp.spmatrix, d: int = 128, walks: int = 80, length: int = 40, window: int = 10,
             seed: int = 0, workers: int = 2) -> np.ndarray:
    """DeepWalk: uniform walks over the graph's edges (weights ignored), skip-gram with
    hierarchical softmax; nodes without an edge keep a zero row."""
    try:
        from gensim.models import Word2Vec
    except ImportError as exc:  # a benchmark dependency only
        raise SystemExit('deepwalk needs gensim: pip install -e ".[bench]" (or pip install gensim)') from exc
    A = sp.csr_matrix(A)
    n = A.shape[0]
    deg = np.diff(A.indptr)
    start = np.flatnonzero(deg > 0)
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(walks):
        cur = rng.permutation(start)
        path = [cur]
        for _ in range(length - 1):
            pick = A.indptr[cur] + (rng.random(cur.size) * deg[cur]).astype(np.int64)
            cur = A.indices[pick]
            path.append(cur)
        sentences.extend(np.stack(path, axis=1).astype(str).tolist())
    model = Word2Vec(sentences, vector_size=d, window=window, min_count=0, sg=1, hs=1, negative=0,
                     workers=workers, epochs=1, seed=seed)
    X = np.zeros((n, d))
    for i in start:
        X[i] = model.wv[str(i)]
    return X


def embedder(method: str) -> Callable[[common.Graph, sp.csr_matrix], np.ndarray]:
    if method == "sepne":
        params = dict(common.library_params(final.CHOSEN), unreached="anchor")
        return lambda g, A: common.library_run(g, params).W
    if method == "prone":
        return lambda g, A: prone(A)[1]
    if method == "prone-base":
        return lambda g, A: prone(A)[0]
    if method.startswith("netmf-"):
        window = int(method.split("-")[1])
        return lambda g, A: netmf(g, window)
    if method == "deepwalk":
        return lambda g, A: deepwalk(A)
    raise SystemExit(f"unknown method {method!r}; known: {', '.join(METHODS)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--datasets", default=",".join(common.DATASETS))
    ap.add_argument("--out", default="quality_peers.json",
                    help="results file under benchmarks/results (default: %(default)s)")
    args = ap.parse_args()
    methods = args.methods.split(",")
    for m in methods:
        embedder(m)
    rows = []
    for name in args.datasets.split(","):
        g = common.load_graph(name)
        A = common.adjacency(g, False)
        for m in methods:
            t0 = time.perf_counter()
            X = embedder(m)(g, A)
            seconds = time.perf_counter() - t0
            test = common.test_scores(g, X)
            val = common.validation_scores(g, X)
            rows.append(dict(dataset=name, method=m, seconds=round(seconds, 1), test=test, val=val))
            print(f"{name} {m}: test {test[0]:.4f} / {test[1]:.4f}, validation {val[0]:.4f} / {val[1]:.4f}, "
                  f"{seconds:.1f} s", flush=True)
    common.save_json(args.out, dict(chosen=asdict(final.CHOSEN), rows=rows))
    print("\n| dataset | method | embed s | test micro-F1 10% | test 90% | validation 10% | validation 90% | "
          "paper SepNE 10% / 90% | paper DeepWalk 10% / 90% |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        sep, dw = common.PAPER["SepNE (paper)"][r["dataset"]], common.PAPER["DeepWalk (paper)"][r["dataset"]]
        print(f"| {r['dataset']} | {r['method']} | {r['seconds']} | {r['test'][0]:.4f} | {r['test'][1]:.4f} | "
              f"{r['val'][0]:.4f} | {r['val'][1]:.4f} | {sep[0]} / {sep[1]} | {dw[0]} / {dw[1]} |")


if __name__ == "__main__":
    main()
