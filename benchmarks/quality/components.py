"""Zero rows and a landmark in every component: is it worth it?

Nodes of a connected component that holds no landmark have no proximity to any
landmark under any window, so the per-set solve leaves them at zero (the spectral
propagation cannot reach them either). This scores the chosen defaults
(:data:`final.CHOSEN`) against the same with one more landmark in every uncovered
component of two or more nodes (:func:`variants.component_landmarks`), on validation
folds only (:func:`common.validation_scores`), with the count of all-zero rows among the
nodes that have an edge.

Usage::

    python benchmarks/quality/components.py [--datasets cora,citeseer,wiki]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import common
import final
import variants


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="cora,citeseer,wiki")
    args = ap.parse_args()
    rows = []
    for nm in args.datasets.split(","):
        g = common.load_graph(nm)
        cfg = final.CHOSEN
        M = common.proximity(g, cfg.directed, cfg.transform, cfg.metric, cfg.dups)
        with_edge = np.zeros(g.n, dtype=bool)
        with_edge[g.src] = with_edge[g.dst] = True
        for per_component in (False, True):
            t = time.time()
            W, _ = variants.sepne(g, cfg, M, per_component=per_component)
            W = common.averaged(g, cfg, W)  # the chosen defaults' averaging after the solve
            zero = int(((np.abs(W).sum(axis=1) == 0) & with_edge).sum())
            v10, v90 = common.validation_scores(g, W)
            extra = len(variants.component_landmarks(g, cfg, variants.library_layout(g, cfg).landmarks)) \
                if per_component else 0
            rows.append((nm, per_component, cfg.k + extra, zero, int(with_edge.sum()), v10, v90))
            print(f"{nm} {'per component' if per_component else 'chosen'}: {cfg.k + extra} landmarks, "
                  f"{zero} of {int(with_edge.sum())} nodes with an edge at zero; validation micro-F1 "
                  f"{v10:.4f} / {v90:.4f} ({time.time() - t:.0f} s)", flush=True)
    print("\n| graph | landmarks | zero rows (nodes with an edge) | validation 10% | validation 90% |")
    print("|---|---|---|---|---|")
    for nm, pc, k, zero, ne, v10, v90 in rows:
        print(f"| {nm}{' + one per component' if pc else ''} | {k} | {zero} of {ne} ({100 * zero / ne:.2f}%) | "
              f"{v10:.4f} | {v90:.4f} |")


if __name__ == "__main__":
    main()
