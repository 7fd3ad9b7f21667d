"""The embed job's default against ProNE on multi-label graphs of overlapping communities.

    .venv/bin/python benchmarks/multilabel.py --nodes 10000 --avg-degree 60 --communities 39

The planted-community graphs of ``scale_quality.py`` give each node one label. The
social networks that embedding papers score on (BlogCatalog, Flickr, YouTube, PPI) give
a node several, of very unequal frequencies, and their communities overlap. This
benchmark generates such a graph with NumPy (:func:`overlapping_graph`) and writes it
as an edge list (TSV) and a labels file (one line per node and label), then in one
process and one Spark session:

* runs the embed job as a user would, ``main(spark, ["--input", EDGES, "--output",
  OUT] + --args)`` (no ``--profile`` unless ``--args`` gives one: the ``auto`` choice);
* runs ProNE (``benchmarks/prone.py``) on the same edges;
* scores both with the reporting protocol of node classification
  (:func:`sepne_spark.evaluation.node_classification`, multi-label: a test node gets
  as many top-scoring labels as it has): micro- and macro-F1 at 10%, 50% and 90%
  training, ``--splits`` random splits each, on every labelled node.

With ``--validation`` the scores read no test node (for choosing settings): only the
training part of each outer split, cut into three folds (:func:`validation_scores`).

A Markdown row per method goes to stdout, with the ratio sepne-spark / ProNE of each
cell; the records go to ``--out`` (JSON; ``sepne`` is a list, one record per ``--args``).

The generator (degree-corrected, overlapping): node ``i`` has a weight ``theta_i`` from
a power law of exponent ``--exponent`` (hubs and many nodes of degree 1 or 2) and
belongs to ``1 + Poisson(--extra-memberships)`` communities (at most 4), drawn with
Zipf-like popularities so that some labels are common and many rare. Each edge picks an
end ``u`` by ``theta``; with probability ``1 - mixing`` its other end is drawn by
``theta`` among the members of one of ``u``'s communities, otherwise among all nodes.
A node's labels are its communities. Self-loops and repeated pairs are dropped.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT), str(ROOT / "benchmarks")):
    if p not in sys.path:
        sys.path.insert(0, p)

log = logging.getLogger("sepne_spark.benchmarks.multilabel")


def overlapping_graph(
    nodes: int, communities: int, avg_degree: float, mixing: float, seed: int,
    exponent: float = 2.5, extra_memberships: float = 0.5, popularity: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Edges ``(src, dst)`` (each undirected pair once, ``src < dst``) and each node's
    communities, of the degree-corrected overlapping model in the module's docstring."""
    rng = np.random.default_rng(seed)
    theta = (1.0 - rng.random(nodes)) ** (-1.0 / (exponent - 1.0))  # Pareto, minimum 1
    theta = np.minimum(theta, np.sqrt(nodes) * 4)  # no node joined to most of the graph
    pop = 1.0 / np.arange(1, communities + 1) ** popularity
    pop /= pop.sum()
    count = np.minimum(1 + rng.poisson(extra_memberships, nodes), min(4, communities))
    member = [sorted(rng.choice(communities, size=c, replace=False, p=pop).tolist()) for c in count]
    members = [[] for _ in range(communities)]
    for i, cs in enumerate(member):
        for c in cs:
            members[c].append(i)
    members = [np.array(m, dtype=np.int64) for m in members]
    cum = [np.cumsum(theta[m]) for m in members]
    all_cum = np.cumsum(theta)
    m_edges = int(round(nodes * avg_degree / 2))
    u = np.searchsorted(all_cum, rng.random(m_edges) * all_cum[-1])
    v = np.empty(m_edges, dtype=np.int64)
    inside = rng.random(m_edges) >= mixing
    # One of u's communities, uniformly
    pick = np.array([member[x][int(r * len(member[x]))] for x, r in zip(u, rng.random(m_edges))])
    for c in range(communities):
        sel = np.flatnonzero(inside & (pick == c))
        if len(sel):
            v[sel] = members[c][np.searchsorted(cum[c], rng.random(len(sel)) * cum[c][-1])]
    out = np.flatnonzero(~inside)
    v[out] = np.searchsorted(all_cum, rng.random(len(out)) * all_cum[-1])
    a, b = np.minimum(u, v), np.maximum(u, v)
    keep = a != b
    pairs = np.unique(np.stack([a[keep], b[keep]], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1], member


def write_graph(workdir: str, args: argparse.Namespace) -> dict[str, Any]:
    """Generate the graph into ``WORKDIR/NAME/`` (edges.tsv, labels.tsv) unless it is there."""
    name = (f"overlap-n{args.nodes}-c{args.communities}-deg{args.avg_degree:g}-m{args.mixing:g}"
            f"-x{args.extra_memberships:g}-s{args.seed}")
    root = Path(workdir).resolve() / name
    info_path = root / "graph.json"
    if info_path.exists():
        return json.loads(info_path.read_text())
    t = time.time()
    src, dst, member = overlapping_graph(args.nodes, args.communities, args.avg_degree, args.mixing, args.seed,
                                         args.exponent, args.extra_memberships)
    root.mkdir(parents=True, exist_ok=True)
    np.savetxt(root / "edges.tsv", np.stack([src, dst], axis=1), fmt="%d", delimiter="\t")
    has_edge = np.zeros(args.nodes, dtype=bool)
    has_edge[src] = has_edge[dst] = True
    with open(root / "labels.tsv", "w") as fh:
        for i in np.flatnonzero(has_edge):
            fh.writelines(f"{i}\t{c}\n" for c in member[i])
    sizes = np.bincount([c for i in np.flatnonzero(has_edge) for c in member[i]], minlength=args.communities)
    info = {"name": name, "nodes_with_edge": int(has_edge.sum()), "edges": int(len(src)),
            "labels_per_node": round(float(np.mean([len(member[i]) for i in np.flatnonzero(has_edge)])), 3),
            "largest_label": int(sizes.max()), "smallest_label": int(sizes.min()),
            "root": str(root), "generate_s": round(time.time() - t, 1)}
    info_path.write_text(json.dumps(info, indent=2))
    return info


def read_labels(path: Path) -> dict[int, list[int]]:
    labels: dict[int, list[int]] = {}
    with open(path) as fh:
        for line in fh:
            node, label = line.split()
            labels.setdefault(int(node), []).append(int(label))
    return labels


def scores(ids: np.ndarray, X: np.ndarray, labels: dict[int, list[int]], args: argparse.Namespace) -> dict[str, Any]:
    from sepne_spark.evaluation import node_classification

    index = {int(v): i for i, v in enumerate(ids)}
    nodes = sorted(labels)
    rows = [index[v] for v in nodes if v in index]
    missing = len(nodes) - len(rows)
    zero = int((~X.any(axis=1)).sum())
    if args.validation:
        return {"missing": missing, "zero_rows": zero,
                **validation_scores(ids, X, labels, args.ratios, args.splits, seed=args.seed)}
    res = node_classification(X[rows], [labels[v] for v in nodes if v in index], train_ratios=tuple(args.ratios),
                              n_splits=args.splits, seed=args.seed)
    out = {"mode": res["mode"], "nodes": res["n_nodes"], "missing": missing, "zero_rows": zero,
           "protocol": f"test: {args.splits} splits"}
    for r, v in res["results"].items():
        out[f"micro_{r:g}"] = round(v["micro_f1_mean"], 4)
        out[f"macro_{r:g}"] = round(v["macro_f1_mean"], 4)
    return out


def validation_scores(ids: np.ndarray, X: np.ndarray, labels: dict[int, list[int]], ratios: Sequence[float],
                      outer: int, folds: int = 3, seed: int = 0) -> dict[str, Any]:
    """Scores that read no test node, for choosing settings: for each of ``outer`` splits
    of the reporting protocol, only its training part (``ratio`` of the labelled nodes)
    is used, cut into ``folds`` folds; the micro- and macro-F1 of the protocol's
    classifier (top-k rule) trained on the other folds, averaged."""
    from sepne_spark.evaluation.classification import (OneVsRestLogisticRegression, _binarize,
                                                       _predict_labels, f1_scores)
    from sepne_spark.spectral import l2_normalize

    index = {int(v): i for i, v in enumerate(ids)}
    nodes = [v for v in sorted(labels) if v in index]
    Xl = l2_normalize(X[[index[v] for v in nodes]])
    Y, _ = _binarize([labels[v] for v in nodes])
    n = len(nodes)
    out: dict[str, Any] = {"protocol": f"validation: {outer} outer splits, {folds} inner folds"}
    for r in ratios:
        micro, macro = [], []
        for s in range(outer):
            train = np.random.default_rng([seed, s]).permutation(n)[: int(r * n + 1e-9)]
            cut = np.array_split(np.random.default_rng([seed, s, 99]).permutation(train), folds)
            for k in range(folds):
                fit = np.concatenate([cut[j] for j in range(folds) if j != k])
                clf = OneVsRestLogisticRegression().fit(Xl[fit], Y[fit])
                pred = _predict_labels(clf.decision_function(Xl[cut[k]]), Y[cut[k]].sum(axis=1))
                a, b = f1_scores(Y[cut[k]], pred)
                micro.append(a)
                macro.append(b)
        out[f"micro_{r:g}"] = round(float(np.mean(micro)), 4)
        out[f"macro_{r:g}"] = round(float(np.mean(macro)), 4)
    return out


def run_sepne(spark, graph: dict[str, Any], extra: Sequence[str], output: str) -> tuple[dict, np.ndarray, np.ndarray]:
    from ladder import run_embed

    argv = ["--input", os.path.join(graph["root"], "edges.tsv"), "--output", output, "--overwrite", *extra]
    run = run_embed(spark, argv, output)
    if run["status"] != "ok":
        raise SystemExit(f"the embed job failed: {run.get('error')}")
    pdf = spark.read.parquet(output).select("id", "embedding").toPandas()
    return run, pdf["id"].to_numpy().astype(np.int64), np.vstack(pdf["embedding"].to_numpy())


def run_prone(graph: dict[str, Any], d: int) -> tuple[dict, np.ndarray, np.ndarray]:
    from prone import prone, undirected_adjacency

    t = time.time()
    e = np.loadtxt(os.path.join(graph["root"], "edges.tsv"), dtype=np.int64, ndmin=2)
    ids, A = undirected_adjacency(e[:, 0], e[:, 1])
    _, emb, _ = prone(A, d=d)
    return {"total_s": round(time.time() - t, 2)}, ids, emb


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--communities", type=int, default=39)
    ap.add_argument("--avg-degree", type=float, default=60.0)
    ap.add_argument("--mixing", type=float, default=0.6, help="share of edges drawn outside u's communities")
    ap.add_argument("--extra-memberships", type=float, default=0.5,
                    help="mean of the Poisson number of communities beyond the first")
    ap.add_argument("--exponent", type=float, default=2.5, help="power-law exponent of the degree weights")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--splits", type=int, default=5, help="random splits per training ratio")
    ap.add_argument("--validation", action="store_true",
                    help="score on validation folds of the training parts only (for choosing settings), "
                         "--splits outer splits")
    ap.add_argument("--ratios", type=float, nargs="+", default=[0.1, 0.5, 0.9], help="training ratios")
    ap.add_argument("--args", action="append", default=None,
                    help="extra embed job flags, one string (e.g. \"--profile social\"); repeat it to run the "
                         "job once per string on the same graph (default: one run, no flags)")
    ap.add_argument("--no-prone", action="store_true")
    ap.add_argument("--workdir", default="/tmp/sepne-multilabel")
    ap.add_argument("--out", default=None, help="JSON records (default WORKDIR/results.json)")
    ap.add_argument("--driver-memory", default="4g")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    from ladder import machine_info, start_session

    graph = write_graph(args.workdir, args)
    labels = read_labels(Path(graph["root"]) / "labels.tsv")
    print(f"graph {graph['name']}: {graph['nodes_with_edge']:,} nodes with an edge, {graph['edges']:,} edges, "
          f"{graph['labels_per_node']} labels per node, label sizes {graph['smallest_label']} to "
          f"{graph['largest_label']}", file=sys.stderr)
    spark = start_session("local[2]", args.driver_memory)
    records: dict[str, Any] = {"machine": machine_info(), "graph": graph, "argv": list(argv or sys.argv[1:])}
    records["sepne"] = []
    for flags in args.args or [""]:
        extra = flags.split()
        run, ids, X = run_sepne(spark, graph, extra, os.path.join(args.workdir, "out", graph["name"]))
        records["sepne"].append({"total_s": round(run["total_s"], 2), "args": extra,
                                 **scores(ids, X, labels, args)})
        print(f"sepne {flags or '(no flags)'}: {records['sepne'][-1]}", file=sys.stderr, flush=True)
    if not args.no_prone:
        info, ids, X = run_prone(graph, X.shape[1])
        records["prone"] = {**info, **scores(ids, X, labels, args)}
    cells = [f"{k}_{r:g}" for r in args.ratios for k in ("micro", "macro")]
    print("| method | total s | zero rows | " + " | ".join(c.replace("_", " ") for c in cells) + " |")
    print("|---|---|---|" + "---|" * len(cells))
    for name, r in [("sepne", r) for r in records["sepne"]] + [("prone", records.get("prone"))]:
        if r is not None:
            print(f"| {name} {' '.join(r.get('args', []))} | {r['total_s']} | {r['zero_rows']} | "
                  + " | ".join(f"{r[c]:.4f}" for c in cells) + " |")
            if name == "sepne" and "prone" in records:
                print("| sepne / ProNE | | | " + " | ".join(f"{r[c] / records['prone'][c]:.3f}" for c in cells) + " |")
    out = args.out or os.path.join(args.workdir, "results.json")
    with open(out, "w") as fh:
        json.dump(records, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
