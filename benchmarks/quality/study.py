"""Model selection for the document profile, on validation scores only.

Every configuration is embedded on each dataset and scored with
:func:`common.validation_scores` (cross-validation inside the training part of the
reporting splits; no test node is ever scored). Each result is appended to
``benchmarks/results/quality_validation_log.jsonl``.

Usage::

    python benchmarks/quality/study.py '{"eta": 0.01}' '{"lam": 1.0, "eta": 0.01}' \
        [--datasets wiki,cora,citeseer] [--base '{"directed": true}']

Each positional argument is a JSON object of :class:`common.Config` fields that
override the base configuration (the as-written paper settings unless ``--base``).
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, replace

from common import AS_WRITTEN, DATASETS, RESULTS_DIR, embed, load_graph, proximity, validation_scores

LOG = RESULTS_DIR / "quality_validation_log.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("configs", nargs="*", default=["{}"])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--base", default="{}")
    ap.add_argument("--note", default="")
    ap.add_argument("--outer", type=int, default=5,
                    help="outer splits of the validation score (default: %(default)s)")
    args = ap.parse_args()
    base = replace(AS_WRITTEN, **json.loads(args.base))
    names = args.datasets.split(",")
    graphs: dict = {}
    cache: dict = {}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    for spec in args.configs:
        cfg = replace(base, **json.loads(spec))
        row = {"config": asdict(cfg), "override": json.loads(spec), "note": args.note, "outer": args.outer, "val": {}}
        t0 = time.time()
        for nm in names:
            if (nm, cfg.self_loops) not in graphs:
                graphs[nm, cfg.self_loops] = load_graph(nm, cfg.self_loops)
            g = graphs[nm, cfg.self_loops]
            key = (nm, cfg.self_loops, cfg.directed, cfg.transform, cfg.metric, cfg.dups)
            if key not in cache:
                cache[key] = proximity(g, cfg.directed, cfg.transform, cfg.metric, cfg.dups)
            X = embed(g, cfg, cache[key])
            row["val"][nm] = validation_scores(g, X, n_outer=args.outer)
        vals = [v for pair in row["val"].values() for v in pair]
        row["val_mean"] = sum(vals) / len(vals)
        row["seconds"] = round(time.time() - t0, 1)
        with open(LOG, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        cells = "  ".join(f"{nm} {a:.4f}/{b:.4f}" for nm, (a, b) in row["val"].items())
        print(f"{row['val_mean']:.4f}  {cells}  {json.dumps(row['override'])} base={args.base} ({row['seconds']}s)",
              flush=True)


if __name__ == "__main__":
    main()
