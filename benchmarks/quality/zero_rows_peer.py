"""The zero rows of the chosen defaults: does the best whole-graph peer know more there?

The chosen defaults (:data:`final.CHOSEN`, the job's ``document-quality``) leave the
nodes of components without a landmark at an all-zero vector. ProNE (the large-graph
peer, ``benchmarks/prone.py``) factorises the whole graph and so gives every node a
vector. This compares the two on exactly those nodes: over the reporting protocol's
splits (10 at 10% and at 90% training, the permutations of
:func:`sepne_spark.evaluation.node_classification`), a classifier trained on all
training nodes of each embedding is scored on the test nodes that the defaults leave at
zero, next to the score of always predicting the training part's most common class.

It also reports the norm of those nodes' rows in ProNE's factorisation before its rows
are L2-normalised, as a fraction of the median of the others' rows: a row near zero
there becomes a full-length direction after the normalisation, which is why ProNE has
no all-zero row.

The labels of test nodes are read only to report these numbers, after the defaults
were chosen; nothing here chooses a setting.

Usage::

    python benchmarks/quality/zero_rows_peer.py [--datasets cora,citeseer,wiki] [--splits 10]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import common
import final

sys.path.insert(0, str(common.ROOT / "benchmarks"))

from prone import prone, prone_base  # noqa: E402

from sepne_spark.evaluation import (  # noqa: E402
    OneVsRestLogisticRegression,
    _binarize,
    _predict_labels,
    l2_normalize,
)


def scores_on(X: np.ndarray, Y: np.ndarray, tr: np.ndarray, te: np.ndarray) -> np.ndarray:
    """Whether each test node's predicted class is its class (single-label graphs)."""
    Xn = l2_normalize(X)
    clf = OneVsRestLogisticRegression().fit(Xn[tr], Y[tr])
    pred = _predict_labels(clf.decision_function(Xn[te]), None)
    return (pred & Y[te]).any(axis=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="cora,citeseer,wiki")
    ap.add_argument("--splits", type=int, default=10)
    args = ap.parse_args()
    rows = []
    for name in args.datasets.split(","):
        t = time.time()
        g = common.load_graph(name)
        A = common.adjacency(g, False).tocsr()
        has_edge = np.diff(A.indptr) > 0
        X = common.embed(g, final.CHOSEN)
        zero = (np.abs(X).sum(axis=1) == 0) & has_edge
        _, P = prone(A)[:2]
        B = prone_base(A, 128, normalize=False)
        norms = np.linalg.norm(B, axis=1)
        relative = float(np.median(norms[zero]) / np.median(norms[has_edge & ~zero])) if zero.any() else float("nan")
        keep = np.array([i for i, lab in enumerate(g.labels) if lab != ""])
        Y, _ = _binarize([g.labels[i] for i in keep])
        zero_l = zero[keep]
        for ratio in (0.1, 0.9):
            hits = {"chosen defaults": [], "ProNE": [], "most common class": []}
            tested = 0
            for s in range(args.splits):
                perm = np.random.default_rng([0, s]).permutation(len(keep))
                cut = min(max(1, int(ratio * len(keep))), len(keep) - 1)
                tr, te = perm[:cut], perm[cut:]
                te_zero = te[zero_l[te]]
                if te_zero.size == 0:
                    continue
                tested += te_zero.size
                hits["chosen defaults"].append(scores_on(X[keep], Y, tr, te)[zero_l[te]])
                hits["ProNE"].append(scores_on(P[keep], Y, tr, te)[zero_l[te]])
                common_class = np.argmax(Y[tr].sum(axis=0))
                hits["most common class"].append(Y[te_zero, common_class])
            acc = {k: float(np.concatenate(v).mean()) if v else float("nan") for k, v in hits.items()}
            rows.append((name, int(zero.sum()), int(has_edge.sum()), ratio, tested, acc, relative))
            print(f"{name} {ratio:.0%}: {tested} test predictions on zero rows; "
                  + ", ".join(f"{k} {v:.4f}" for k, v in acc.items())
                  + f"; ProNE base norm there {relative:.2e} of the others' ({time.time() - t:.0f} s)", flush=True)
    print("\n| graph | zero rows (of nodes with an edge) | training | test predictions on them | "
          "chosen defaults (zero) | ProNE | most common class | ProNE's row norm before normalising, of the others' |")
    print("|---|---|---|---|---|---|---|---|")
    for name, z, e, ratio, tested, acc, relative in rows:
        print(f"| {name} | {z} of {e} | {ratio:.0%} | {tested} | {acc['chosen defaults']:.4f} | {acc['ProNE']:.4f} | "
              f"{acc['most common class']:.4f} | {relative:.1e} |")


if __name__ == "__main__":
    main()
