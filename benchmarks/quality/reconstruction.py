"""Matrix reconstruction R^2 against the number of landmarks k (the paper's figure).

    python benchmarks/quality/reconstruction.py [--dataset wiki] [--ks 200 400 600 800 1000]

For each k: SepNE (the document settings: A+A2, DD, RP sets of 500, lambda 0.4,
eta 0.1, 100 iterations, d = 128), the Nystrom method with the same landmarks, and the
rank-d truncated SVD of the same M (independent of k); r_all and r_nz of ``W C^T``
against M (:func:`sepne_spark.evaluation.reconstruction_r2`, exact). Then r_all of
SepNE for each landmark strategy (DD, DP, UF, GDS). The graph is read undirected, M
row-normalised, as everywhere in this folder.

SepNE is computed with the library's per-set solver (:func:`sepne_spark.solver.solve_set`)
on blocks cut from the dense M, the same equations the Spark job runs (the two agree to
1e-6, ``tests/test_core.py``), so the whole sweep takes minutes on one core.

Writes the numbers to ``benchmarks/results/reconstruction_<dataset>`` (JSON) and two
PNG plots, ``benchmarks/figures/reconstruction_<dataset>_methods.png`` and
``..._strategies.png``; ``--plot-only`` redraws the plots from the JSON.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402  (limits BLAS to one thread before NumPy loads)

from sepne_spark.baselines import svd_embedding  # noqa: E402
from sepne_spark.evaluation import reconstruction_r2  # noqa: E402
from sepne_spark.landmarks import STRATEGIES  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="wiki")
    p.add_argument("--ks", type=int, nargs="+", default=[200, 400, 600, 800, 1000])
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--plot-only", action="store_true", help="redraw the plots from the saved JSON")
    args = p.parse_args()
    figures = common.ROOT / "benchmarks" / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    if args.plot_only:
        import json

        plot(json.loads((common.RESULTS_DIR / f"reconstruction_{args.dataset}").read_text()),
             figures / f"reconstruction_{args.dataset}")
        return

    g = common.load_graph(args.dataset)
    cfg = replace(common.AS_WRITTEN, d=args.dim)
    M = common.proximity(g, cfg.directed, cfg.transform, cfg.metric)
    t = time.time()
    W, C = svd_embedding(M.toarray(), args.dim)
    svd = reconstruction_r2(M, W, C)
    print(f"{args.dataset}: n={g.n}, nnz(M)={M.nnz}; SVD d={args.dim}: r_all {svd['r2_all']:.4f} "
          f"r_nz {svd['r2_nonzero']:.4f} ({time.time() - t:.1f} s)", flush=True)
    rows = []
    for k in args.ks:
        for strategy in STRATEGIES:
            c = replace(cfg, k=k, strategy=strategy)
            t = time.time()
            sep = reconstruction_r2(M, *common.sepne(g, c, M))
            row = {"k": k, "strategy": strategy, "sepne_r_all": sep["r2_all"], "sepne_r_nz": sep["r2_nonzero"],
                   "sepne_s": time.time() - t}
            if strategy == "DD":
                ny = reconstruction_r2(M, *common.nystrom(g, c, M))
                row.update(nystrom_r_all=ny["r2_all"], nystrom_r_nz=ny["r2_nonzero"])
            rows.append(row)
            print(" ".join(f"{key}={val:.4f}" if isinstance(val, float) else f"{key}={val}" for key, val in row.items()),
                  flush=True)
    result = {"dataset": args.dataset, "n": g.n, "nnz": int(M.nnz), "d": args.dim, "config": cfg.tag(),
              "svd": {"r_all": svd["r2_all"], "r_nz": svd["r2_nonzero"]}, "rows": rows}
    path = common.save_json(f"reconstruction_{args.dataset}", result)
    plot(result, figures / f"reconstruction_{args.dataset}")
    print(f"wrote {path}")


def _setting_text(result: dict) -> str:
    """d, the metric and the number of runs, for the figures' titles."""
    cfg = dict(part.split("=", 1) for part in result.get("config", "").split(",") if "=" in part)
    metric = {"A+A2": "M = A + A^2", "I+A": "M = I + A"}.get(cfg.get("metric", "A+A2"), cfg.get("metric"))
    way = "directed" if cfg.get("directed") == "True" else "undirected"
    return (f"d = {result['d']}, {metric} (A row-normalised, {way}), exact R^2 of W C^T; "
            f"one run per point (seed {cfg.get('seed', 0)})")


def plot(result: dict, stem: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    what = _setting_text(result)
    dd = [r for r in rows if r["strategy"] == "DD"]
    ks = [r["k"] for r in dd]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, title in ((axes[0], "r_all", "r_all (all entries)"), (axes[1], "r_nz", "r_nz (non-zero entries)")):
        ax.plot(ks, [r[f"sepne_{key}"] for r in dd], "o-", label="SepNE (DD, RP)")
        ax.plot(ks, [r[f"nystrom_{key}"] for r in dd], "s--", label="Nystrom (same landmarks)")
        ax.axhline(result["svd"][key], color="k", linestyle=":", label=f"SVD, d={result['d']}")
        ax.set_xlabel("landmarks k")
        ax.set_ylabel("R^2")
        ax.set_title(f"{result['dataset']}: {title}")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(what, fontsize=9)
    fig.tight_layout()
    fig.savefig(f"{stem}_methods.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    for strategy in STRATEGIES:
        mine = [r for r in rows if r["strategy"] == strategy]
        ax.plot([r["k"] for r in mine], [r["sepne_r_all"] for r in mine], "o-", label=strategy)
    ax.set_xlabel("landmarks k")
    ax.set_ylabel("r_all")
    ax.set_title(f"{result['dataset']}: SepNE r_all by landmark strategy\n" + what.replace(", exact", ",\nexact"),
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{stem}_strategies.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
