"""Zero rows filled after the solve: is it worth it?

Nodes left at zero by the chosen defaults (:data:`final.CHOSEN`: nodes of components
without a landmark, and nodes too far from every landmark) carry no information for a
classifier. This scores, on validation folds only (:func:`common.validation_scores`),
the defaults against the same embedding with every zero row of a node with an edge
replaced by a vector made from the subgraph those zero rows induce:

* ``smooth T``: a Gaussian vector per node, then T steps of the row-normalised
  ``I + A`` of that subgraph (nearby zero nodes get similar vectors);
* ``component s``: one Gaussian vector per connected component of that subgraph
  (seed ``s``), shared by all its nodes, so that a classifier can carry a label across
  the component;
* ``centroid s``: the mean direction of the other nodes' L2-normalised rows (a node
  about which the graph says nothing placed at the centre of the others), plus
  :data:`CENTROID_OFFSET` times one unit Gaussian vector per component of that subgraph
  (seed ``s``), so that the nodes of one small component stay alike and apart from
  other components;
* ``library a``: what the library's ``unreached="anchor"`` gives
  (:func:`sepne_spark.unreached.anchor_unreached`, ``unreached_length`` a): ``anchorsub a``;
* ``anchorsub a``: ``anchor a`` with each component's unit vector drawn within the span
  of the next 32 least-used directions instead of all d;
* ``anchor a``: one shared direction ``u``, the one the other nodes' L2-normalised rows
  use least (their Gram matrix's last eigenvector), times ``a``, plus one unit Gaussian
  vector per component of that subgraph: the nodes no landmark reaches are placed
  together, apart from the others, the nodes of one component alike. A classifier
  learns the label mix of those nodes from ``u`` and carries a label across a
  component through its offset.

Every other row is left as it is. Several seeds are scored because a handful of random
directions is all the fill adds, and the validation score moves with the draw.

Usage::

    python benchmarks/quality/fill.py [--datasets cora,citeseer,wiki] [--seeds 0,1,2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import common
import final
from sepne_spark.spectral import l2_normalize  # noqa: E402 - after common puts the repository on the path


#: Length of the per-component offset of the ``centroid`` fill, against the unit centroid
#: direction (0.3 and 1.0 scored alike in a first trial on one seed; 0 was lower).
CENTROID_OFFSET = 0.3


def fill(g: common.Graph, X: np.ndarray, how: str, steps: int = 0, seed: int = 0) -> tuple[np.ndarray, int]:
    """``X`` with its zero rows (of nodes with an edge) filled; the number filled."""
    A = common.adjacency(g, False).tocsr()
    zero = (np.abs(X).sum(axis=1) == 0) & (np.diff(A.indptr) > 0)
    idx = np.flatnonzero(zero)
    out = X.copy()
    if not len(idx):
        return out, 0
    Az = A[idx][:, idx]
    rng = np.random.default_rng(seed)
    if how == "component":
        _, comp = connected_components(Az, directed=False)
        F = rng.standard_normal((comp.max() + 1, X.shape[1]))[comp]
    elif how == "centroid":
        _, comp = connected_components(Az, directed=False)
        rest = np.flatnonzero(~zero & (np.diff(A.indptr) > 0))
        c = l2_normalize(X[rest]).mean(axis=0)
        G = l2_normalize(rng.standard_normal((comp.max() + 1, X.shape[1])))[comp]
        F = c / np.linalg.norm(c) + CENTROID_OFFSET * G
    elif how == "anchor":
        _, comp = connected_components(Az, directed=False)
        rest = np.flatnonzero(~zero & (np.diff(A.indptr) > 0))
        Xr = l2_normalize(X[rest])
        _, vecs = np.linalg.eigh(Xr.T @ Xr)
        u = vecs[:, 0]
        G = l2_normalize(rng.standard_normal((comp.max() + 1, X.shape[1])))[comp]
        F = steps * u + G
    elif how == "anchorsub":
        # the anchor, and per-component offsets within the span of the next 32 least-used directions
        _, comp = connected_components(Az, directed=False)
        rest = np.flatnonzero(~zero & (np.diff(A.indptr) > 0))
        Xr = l2_normalize(X[rest])
        _, vecs = np.linalg.eigh(Xr.T @ Xr)
        u, low = vecs[:, 0], vecs[:, 1:33]
        G = l2_normalize(rng.standard_normal((comp.max() + 1, low.shape[1])) @ low.T)[comp]
        F = steps * u + G
    elif how == "library":  # what unreached="anchor" runs, with unreached_length = steps
        from sepne_spark.unreached import anchor_unreached

        out, _ = anchor_unreached(A, X, g.ids, float(steps), seed)
        return out, len(idx)
    elif how == "smooth":
        B = (Az + sp.identity(len(idx))).tocsr()
        P = sp.diags(1.0 / np.asarray(B.sum(axis=1)).ravel()) @ B
        F = rng.standard_normal((len(idx), X.shape[1]))
        for _ in range(int(steps)):
            F = P @ F
    else:
        raise ValueError(how)
    out[idx] = F
    return out, len(idx)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="cora,citeseer,wiki")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--fills", default="smooth:2,smooth:8,component:0,centroid:0",
                    help="comma-separated how:steps (for anchor, steps is its length a)")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    for nm in args.datasets.split(","):
        g = common.load_graph(nm)
        cfg = final.CHOSEN
        X = common.embed(g, cfg)
        v10, v90 = common.validation_scores(g, X)
        rows.append((nm, "chosen (zero rows kept)", 0, v10, v90))
        fills = [(f.split(":")[0], float(f.split(":")[1])) for f in args.fills.split(",")]
        for how, steps in fills:
            for seed in seeds:
                t = time.time()
                Y, filled = fill(g, X, how, steps, seed)
                v10, v90 = common.validation_scores(g, Y)
                label = f"{how} {steps:g}, seed {seed}" if how in ("smooth", "anchor", "anchorsub", "library") else f"{how}, seed {seed}"
                rows.append((nm, label, filled, v10, v90))
                print(f"{nm} {label}: {filled} rows filled; validation micro-F1 {v10:.4f} / {v90:.4f} "
                      f"({time.time() - t:.0f} s)", flush=True)
    print("\n| graph | zero rows | filled | validation 10% | validation 90% |")
    print("|---|---|---|---|---|")
    for nm, label, filled, v10, v90 in rows:
        print(f"| {nm} | {label} | {filled} | {v10:.4f} | {v90:.4f} |")


if __name__ == "__main__":
    main()
