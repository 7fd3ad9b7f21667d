"""Research: stages after the chosen solve, scored on validation folds only.

The chosen ``document-quality`` solve (the library's, without its filter and averaging) is computed
once per graph; each variant then applies, in the library's order, the refinement, the
spectral filter and the averaging of :func:`sepne_spark.spectral.smooth` (the library's
own NumPy stage), and optionally reshapes the spectrum of the vectors before or after
them (research only: ``pre`` / ``post`` = p replaces the singular values s of the
L2-normalised vectors by s ** p; p = 0 whitens them, p > 1 sharpens them). Every score
that chooses is :func:`common.validation_scores` (``--folds`` inner folds, three by
default); no test label is read unless ``--test`` asks for the reporting protocol's test
scores too, to report a variant once a choice is made.

    .venv/bin/python benchmarks/quality/post_solve.py '{"average": 3}' '{"order": 10, "average": 3}'
    .venv/bin/python benchmarks/quality/post_solve.py --base '{"k": 600}' '{"order": 10, "average": 3}'

A variant is a JSON object with any of ``order``, ``mu``, ``theta`` (the filter),
``refine`` and ``op`` (refinement rounds and operator), ``average`` (steps), ``pre`` and
``post`` (spectrum powers), ``floor`` = f (after everything: singular values below f
times the largest are raised to it, the leading ones kept) and ``center`` (after
everything: the mean of the L2-normalised vectors is subtracted from each). Rows are
appended to ``benchmarks/results/post_solve_log.jsonl`` (or ``--log``); ``--render``
prints a log as the Markdown tables of ``VALIDATION_LOG.md`` ("After the solve" and
after; ``--first`` numbers the rows).

``--datasets`` also takes generated graphs (``sbm:2500:10:5:0.3:7``: model, nodes,
communities, mean degree, mixing, seed), scored at 10% and 50% training on their planted
communities, with the walk window the job's ``auto`` profile takes for them.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from common import (AS_WRITTEN, DATASETS, RESULTS_DIR, Graph, adjacency, any_graph, library_params, library_run,
                    test_scores, validation_scores)
from sepne_spark.settings import AUTO_SMALL, auto_needs_walks, auto_profile
from sepne_spark.spectral import l2_normalize, smooth

LOG = RESULTS_DIR / "post_solve_log.jsonl"
#: The chosen document-quality solve (VALIDATION_LOG.md, row 118) without its filter and averaging.
CHOSEN = dict(transform="logN", metric="win5", k=250, strategy="GDS", eta=1000.0, average=0)
KEYS = {"order", "mu", "theta", "refine", "op", "average", "pre", "post", "floor", "center"}


def _respectrum(X: np.ndarray, new) -> np.ndarray:
    """``X`` with its singular values ``s`` replaced by ``new(s)`` (directions whose
    value is below 1e-10 of the largest are dropped)."""
    U, S, Vt = np.linalg.svd(X, full_matrices=False)
    keep = S > S[0] * 1e-10
    return (U[:, keep] * new(S[keep])) @ Vt[keep]


def spectrum_power(X: np.ndarray, p: float) -> np.ndarray:
    """``X`` with its singular values ``s`` replaced by ``s ** p``."""
    return _respectrum(X, lambda S: S**p)


def spectrum_floor(X: np.ndarray, f: float) -> np.ndarray:
    """``X`` with its singular values ``s`` raised to at least ``f`` times the largest."""
    return _respectrum(X, lambda S: np.maximum(S, f * S[0]))


def apply(A: Any, W: np.ndarray, v: dict[str, Any]) -> np.ndarray:
    """The vectors of variant ``v`` from the solve's ``W`` over the adjacency ``A``."""
    unknown = set(v) - KEYS
    if unknown:
        raise ValueError(f"unknown variant keys {sorted(unknown)}; known: {sorted(KEYS)}")
    E = spectrum_power(l2_normalize(W), v["pre"]) if "pre" in v else W
    X = smooth(A, E, int(v.get("order", 1)), float(v.get("mu", 0.2)), float(v.get("theta", 0.5)),
               int(v.get("refine", 0)), int(v.get("average", 0)), v.get("op", "transition"))
    X = spectrum_power(l2_normalize(X), v["post"]) if "post" in v else X
    if "floor" in v:
        X = spectrum_floor(l2_normalize(X), float(v["floor"]))
    if v.get("center"):
        X = l2_normalize(X)
        X = X - X.mean(axis=0)
    return X


def window_config(cfg: Any, g: Graph) -> Any:
    """``cfg`` with the walk window that the job's ``auto`` profile takes for a generated
    graph (the document graphs keep the chosen window of 5, which ``auto`` takes for all
    three); a graph ``auto`` would not give ``document-quality`` is refused."""
    if ":" not in g.name:
        return cfg
    rows = 2 * int(np.count_nonzero(g.src != g.dst))
    if auto_needs_walks(g.n, rows):
        raise SystemExit(f"{g.name}: the auto profile does not give it {AUTO_SMALL} (too large or too dense)")
    _, over = auto_profile(g.n, rows)
    return replace(cfg, metric=f"win{over['window']}") if "window" in over else cfg


def _cell_names(r: dict[str, Any]) -> list[str]:
    names = []
    for nm in r["val"]:
        lo, hi = r.get("ratios", {}).get(nm, (0.1, 0.9))
        names += [f"{nm} {lo:.0%}", f"{nm} {hi:.0%}"]
    return names


def render(path: Path = LOG, first: int = 1) -> str:
    """The log as a Markdown table: base, variant, validation mean and the cells of its
    graphs (those of its first row); rows numbered from ``first`` (a log begun after the
    rows already in VALIDATION_LOG.md)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    names = _cell_names(rows[0]) if rows else [f"{nm} {p}%" for nm in DATASETS for p in (10, 90)]
    graphs = list(rows[0]["val"]) if rows else list(DATASETS)
    lines = ["| row | base | variant | mean | " + " | ".join(names) + " |", "|---" * (4 + len(names)) + "|"]
    for i, r in enumerate(rows, first):
        base = ", ".join(f"{k}={v}" for k, v in r["base"].items()) or "chosen"
        if r.get("folds", 3) != 3:
            base += f" ({r['folds']} folds)"
        var = ", ".join(f"{k}={v}" for k, v in r["variant"].items()) or "none"
        cells = " | ".join(f"{x:.4f}" for nm in graphs for x in r["val"][nm])
        lines.append(f"| P{i} | {base} | {var} | {r['val_mean']:.4f} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="*", default=["{}"])
    ap.add_argument("--base", default="{}", help="study Config fields changed from the chosen solve (JSON)")
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help="comma-separated document graphs (folder names) and generated graphs "
                         "(MODEL:NODES:COMMUNITIES:DEGREE:MIXING:SEED, MODEL sbm or dcsbm; scored at 10%% and 50%%)")
    ap.add_argument("--outer", type=int, default=5, help="outer splits of the validation score (default: %(default)s)")
    ap.add_argument("--folds", type=int, default=3, help="inner folds of the validation score (default: %(default)s)")
    ap.add_argument("--test", action="store_true",
                    help="also score the reporting protocol's test splits (to report a variant, never to choose one)")
    ap.add_argument("--render", action="store_true", help="print the log as a Markdown table and exit")
    ap.add_argument("--log", type=Path, default=LOG, help="the log to append to and render (default: %(default)s)")
    ap.add_argument("--first", type=int, default=1, help="number of the log's first row in --render")
    args = ap.parse_args()
    if args.render:
        print(render(args.log, first=args.first))
        return
    over = json.loads(args.base)
    cfg = replace(AS_WRITTEN, **{**CHOSEN, **over})
    graphs = {nm: any_graph(nm, cfg.self_loops) for nm in args.datasets.split(",")}
    solves, adj = {}, {}
    for nm, g in graphs.items():
        t0 = time.time()
        solves[nm] = library_run(g, library_params(window_config(cfg, g))).W
        adj[nm] = adjacency(g, cfg.directed, cfg.dups)
        print(f"{nm}: solve {time.time() - t0:.1f} s", flush=True)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    for spec in args.variants:
        v = json.loads(spec)
        t0 = time.time()
        X = {nm: apply(adj[nm], solves[nm], v) for nm in graphs}
        val = {nm: validation_scores(g, X[nm], n_outer=args.outer, folds=args.folds) for nm, g in graphs.items()}
        mean = float(np.mean([x for pair in val.values() for x in pair]))
        if args.test:
            test = {nm: test_scores(g, X[nm]) for nm, g in graphs.items()}
            print("test " + "  ".join(f"{nm} {a:.4f}/{b:.4f}" for nm, (a, b) in test.items()), flush=True)
        row = {"base": over, "config": asdict(cfg), "variant": v, "outer": args.outer, "folds": args.folds,
               "ratios": {nm: g.ratios for nm, g in graphs.items()}, "val": val, "val_mean": mean, **({"test": test} if args.test else {}),
               "seconds": round(time.time() - t0, 1)}
        with open(args.log, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        cells = "  ".join(f"{nm} {a:.4f}/{b:.4f}" for nm, (a, b) in val.items())
        print(f"{mean:.4f}  {cells}  {spec} base={args.base}", flush=True)


if __name__ == "__main__":
    main()
