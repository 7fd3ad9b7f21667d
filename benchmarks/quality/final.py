"""The final classification table of the document profile (reported once, on test splits).

Rows, each as micro-F1 mean of 10 random splits at 10% and 90% training
(:func:`sepne_spark.evaluation.node_classification`, seed 0):

* the paper's SepNE and DeepWalk numbers (copied from the paper's table);
* SepNE as written (paper settings: A+A2, d=128, k=200 DD, lambda 0.4, eta 0.1,
  100 rounds, random sets of 500, embedding W), undirected and directed;
* SepNE with the chosen defaults (:data:`CHOSEN`, selected on validation scores only,
  see ``study.py`` and ``VALIDATION_LOG.md``), undirected (the documented default) and
  directed, and the previously chosen defaults (:data:`PREVIOUS_NOFILTER`, without the
  filter and with three averaging steps; :data:`PREVIOUS_AVG0`, without the
  averaging either; :data:`PREVIOUS_WIN5`, 200 landmarks;
  :data:`PREVIOUS_LOG`, the log scaling of A + A^2; :data:`PREVIOUS`, symmetric
  normalisation without the log scaling) for comparison;
* full SVD of the same M (d = 128, :func:`sepne_spark.baselines.svd_embedding`) and
  Nystrom with the same landmarks (:func:`sepne_spark.baselines.nystrom_embedding`),
  both with the chosen defaults' M and output rule, and with the plain embedding W.

Usage::

    python benchmarks/quality/final.py [--datasets wiki,cora,citeseer] [--skip-svd]

Prints the table and writes ``benchmarks/results/quality_final.json``.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, replace

import numpy as np

from common import (
    AS_WRITTEN,
    DATASETS,
    PAPER,
    RESULTS_DIR,
    Config,
    combine,
    load_graph,
    nystrom,
    proximity,
    save_json,
    sepne,
    test_scores,
)

#: The defaults chosen on validation scores (best validation mean in VALIDATION_LOG.md):
#: 250 GDS landmarks and the log scaling of the row-normalised A + A^2 + ... + A^5
#: (``scaling: log``, ``window: 5`` in the Spark job).
#: Then three steps of neighbourhood averaging of W (``average_steps: 3``).
CHOSEN = Config(k=250, strategy="GDS", partition="RP", eta=1000.0, transform="logN", metric="win5", average=6,
                propagation=3)
#: The choice before generated graphs joined the validation (VALIDATION_LOG.md, rows G1-G4):
#: three averaging steps and no filter.
PREVIOUS_NOFILTER = replace(CHOSEN, average=3, propagation=1)
#: The same without the averaging (the choice before it was tried).
PREVIOUS_AVG0 = replace(CHOSEN, average=0, propagation=1)
#: The same with 200 landmarks (the choice before k was scored on ten validation splits).
PREVIOUS_WIN5 = replace(PREVIOUS_AVG0, k=200)
#: The defaults chosen before longer windows were tried (log scaling of A + A^2, LP sets).
PREVIOUS_LOG = replace(PREVIOUS_AVG0, k=200, metric="A+A2", partition="LP")
#: The defaults chosen before the log scaling was tried (symmetric normalisation).
PREVIOUS = Config(strategy="GDS", partition="LP", eta=0.5, transform="sym")
#: The previous defaults with the paper's row-normalised M.
PREVIOUS_RW = replace(PREVIOUS, transform="rw")


def svd_full(M, d: int) -> tuple[np.ndarray, np.ndarray]:
    from sepne_spark.baselines import svd_embedding

    return svd_embedding(M, d)


def print_table(rows: dict, names: list[str]) -> None:
    print()
    print(f"{'method':48s}" + "".join(f"{nm + ' 10%':>14s}{nm + ' 90%':>14s}" for nm in names))
    for label, cells in rows.items():
        line = f"{label:48s}"
        for nm in names:
            a, b = cells.get(nm, (float("nan"), float("nan")))
            line += f"{a:14.4f}{b:14.4f}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--skip-svd", action="store_true", help="leave out the (slow) dense full SVD")
    ap.add_argument("--only-chosen", action="store_true",
                    help="recompute only the rows of the chosen defaults, keeping the other rows of "
                         "the earlier run's JSON (they do not depend on the chosen set-up)")
    ap.add_argument("--merge", action="store_true",
                    help="only print the table of earlier per-dataset runs (quality_final_<name>.json)")
    args = ap.parse_args()
    names = args.datasets.split(",")
    if args.merge:
        merged: dict[str, dict] = {}
        for nm in names:
            part = json.loads((RESULTS_DIR / f"quality_final_{nm}.json").read_text())
            for label, cells in part["rows"].items():
                merged.setdefault(label, {}).update({k: tuple(v) for k, v in cells.items() if k == nm or label in PAPER})
        print_table(merged, names)
        path = save_json("quality_final.json", {"rows": merged, "chosen": asdict(CHOSEN), "as_written": asdict(AS_WRITTEN)})
        print(f"\nwritten {path}")
        return
    rows: dict[str, dict[str, tuple[float, float]]] = {k: dict(v) for k, v in PAPER.items()}
    configs = {
        "SepNE chosen defaults, undirected": CHOSEN,
        "SepNE as written, undirected": AS_WRITTEN,
        "Nystrom, same landmarks, same M (W)": None,
        "full SVD of the same M (W)": None,
        "SepNE as written, directed": replace(AS_WRITTEN, directed=True),
        "SepNE chosen defaults, directed": replace(CHOSEN, directed=True),
        "SepNE previous defaults (no filter, 3 averaging steps), undirected": PREVIOUS_NOFILTER,
        "SepNE previous defaults (no averaging), undirected": PREVIOUS_AVG0,
        "SepNE previous defaults (k=200, window 5), undirected": PREVIOUS_WIN5,
        "SepNE previous defaults (log, window 2), undirected": PREVIOUS_LOG,
        "Nystrom, previous landmarks and M (W)": None,
        "full SVD of the previous M (W)": None,
        "SepNE previous defaults (sym), undirected": PREVIOUS,
        "SepNE previous defaults, row-normalised M, undirected": PREVIOUS_RW,
        "Nystrom, as-written landmarks and M (W)": None,
        "full SVD of the row-normalised M (W)": None,
    }
    timing: dict[str, float] = {}
    out_name = "quality_final.json" if len(names) == len(DATASETS) else f"quality_final_{'_'.join(names)}.json"
    if args.only_chosen:
        earlier = json.loads((RESULTS_DIR / out_name).read_text())
        rows.update({k: {nm: tuple(v) for nm, v in cells.items()} for k, cells in earlier["rows"].items()})
        timing.update(earlier.get("seconds", {}))
        configs = {k: v for k, v in configs.items() if k.startswith("SepNE chosen")}

    def dump() -> None:
        save_json(out_name, {
            "protocol": "micro-F1 mean of 10 splits (seed 0), one-vs-rest logistic regression on "
                        "L2-normalised rows, 10% and 90% training",
            "as_written": asdict(AS_WRITTEN),
            "chosen": asdict(CHOSEN),
            "rows": {k: {nm: list(v) for nm, v in cells.items()} for k, cells in rows.items()},
            "seconds": timing,
        })

    for nm in names:
        g = load_graph(nm)
        Ms: dict = {}

        def getM(cfg: Config):
            key = (cfg.directed, cfg.transform, cfg.metric)
            if key not in Ms:
                Ms[key] = proximity(g, *key)
            return Ms[key]

        for label, cfg in configs.items():
            if label.startswith("full SVD") and args.skip_svd:
                continue
            t = time.time()
            if cfg is not None:
                W, C = sepne(g, cfg, getM(cfg))
                X = combine(W, C, cfg.output)
            elif label.startswith("Nystrom, same"):
                X = nystrom(g, CHOSEN, getM(CHOSEN))[0]
            elif label.startswith("Nystrom, previous"):
                X = nystrom(g, PREVIOUS_LOG, getM(PREVIOUS_LOG))[0]
            elif label == "full SVD of the previous M (W)":
                X = svd_full(getM(PREVIOUS_LOG), CHOSEN.d)[0]
            elif label.startswith("Nystrom, as-written"):
                X = nystrom(g, AS_WRITTEN, getM(AS_WRITTEN))[0]
            elif label == "full SVD of the same M (W)":
                X = svd_full(getM(CHOSEN), CHOSEN.d)[0]
            else:
                X = svd_full(getM(AS_WRITTEN), CHOSEN.d)[0]
            rows.setdefault(label, {})[nm] = test_scores(g, X)
            timing[f"{label} / {nm}"] = round(time.time() - t, 1)
            print(f"{nm:9s} {label:48s} {rows[label][nm][0]:.4f} {rows[label][nm][1]:.4f}", flush=True)
            dump()
    print_table(rows, names)
    dump()
    path = RESULTS_DIR / out_name
    print(f"\nwritten {path}")


if __name__ == "__main__":
    main()
