"""Research: is the trade-off between few and many labels SepNE's, or the matrix's?

Replaces the solve by the exact rank-128 factorisation of the library's own M (dense
SVD of :func:`common.proximity` with the log scaling and a window of T, so NetMF's
matrix for that window) and scores ``U_d diag(s_d ** p)`` for several powers p, with and
without the library's averaging after it (:func:`sepne_spark.spectral.average`, as the
default does), on validation folds only (:func:`common.validation_scores`). If no power
keeps the few-label cells and lifts the many-label ones, no reshaping of a solve that
approximates this M can either.

    .venv/bin/python benchmarks/quality/svd_spectrum.py --windows 5 10 --powers 0.5 1 1.5 2 --average 0 3

Rows are appended to ``benchmarks/results/svd_spectrum_log.jsonl`` and printed.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from common import DATASETS, RESULTS_DIR, adjacency, load_graph, proximity, validation_scores
from sepne_spark.spectral import average

LOG = RESULTS_DIR / "svd_spectrum_log.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", type=int, nargs="+", default=[10])
    ap.add_argument("--powers", type=float, nargs="+", default=[0.5, 1.0, 1.5, 2.0])
    ap.add_argument("--average", type=int, nargs="+", default=[0, 3], help="averaging steps after it")
    ap.add_argument("--dim", type=int, default=128)
    args = ap.parse_args()
    graphs = {nm: load_graph(nm) for nm in DATASETS}
    adj = {nm: adjacency(g, False) for nm, g in graphs.items()}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    for window in args.windows:
        factors = {}
        for nm, g in graphs.items():
            M = proximity(g, False, "logN", f"win{window}").toarray()
            U, s, _ = np.linalg.svd(M)
            factors[nm] = (U[:, : args.dim], s[: args.dim])
        for p in args.powers:
            for steps in args.average:
                t0 = time.time()
                val = {}
                for nm, g in graphs.items():
                    U, s = factors[nm]
                    X = U * s**p
                    if steps:
                        X = average(adj[nm], X, steps)
                    val[nm] = validation_scores(g, X)
                mean = float(np.mean([x for pair in val.values() for x in pair]))
                row = dict(window=window, power=p, average=steps, dim=args.dim, val=val, val_mean=mean,
                           seconds=round(time.time() - t0, 1))
                with open(LOG, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
                cells = " | ".join(f"{a:.4f} | {b:.4f}" for a, b in val.values())
                print(f"| window {window}, p = {p:g}, average {steps} | {mean:.4f} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
