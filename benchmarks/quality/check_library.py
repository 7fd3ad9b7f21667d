"""Checks that the study measures the library: the chosen defaults through the library,
and the research path on the same settings against it.

For each graph: the library's run of :data:`final.CHOSEN` (``document-quality``:
:func:`common.library_run`), the research path on the same settings
(:func:`variants.sepne`: the library's landmarks, sets and solver on the study's M),
their largest difference relative to the largest entry (W and C), and the library run's
test scores (:func:`common.test_scores`, the reporting protocol).

Usage::

    python benchmarks/quality/check_library.py [--datasets cora,wiki]
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
    ap.add_argument("--datasets", default="cora,wiki")
    args = ap.parse_args()
    for nm in args.datasets.split(","):
        g = common.load_graph(nm)
        t = time.time()
        run = common.library_run(g, common.library_params(final.CHOSEN))
        t_lib = time.time() - t
        t = time.time()
        W, C = variants.sepne(g, final.CHOSEN)
        W = common.averaged(g, final.CHOSEN, W)  # the filter and averaging after the solve, by the NumPy oracle
        t_var = time.time() - t
        dW = np.abs(run.W - W).max() / np.abs(run.W).max()
        dC = np.abs(run.C - C).max() / np.abs(run.C).max()
        zero = int((np.abs(run.W).sum(axis=1) == 0).sum())
        f10, f90 = common.test_scores(g, run.W)
        print(f"{nm}: library {t_lib:.1f} s, research path {t_var:.1f} s; relative difference W {dW:.1e}, "
              f"C {dC:.1e}; {len(run.landmarks)} landmarks, {zero} zero rows; test micro-F1 {f10:.4f} / {f90:.4f}",
              flush=True)


if __name__ == "__main__":
    main()
