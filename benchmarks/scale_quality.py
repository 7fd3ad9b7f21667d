"""Scale and quality of the embed job against ProNE, on planted-community graphs.

    .venv/bin/python benchmarks/scale_quality.py --sizes 1e4 1e5 --models sbm dcsbm

For every graph model (``sbm``: uniform stochastic block model; ``dcsbm``: degree-
corrected, power-law degrees with hubs and many degree-1 nodes; ``lfr``: the LFR
benchmark of Lancichinetti, Fortunato and Radicchi, power-law degrees and power-law
community sizes, drawn by NetworkX, which only this model needs) and size, it generates
the graph once into ``--workdir`` (Parquet, :mod:`sepne_spark.generators`), then in one
process and one Spark session:

* runs the embed job as a user would, ``main(spark, ["--input", EDGES, "--output", OUT]
  + --args)`` (by default no ``--profile``: the ``auto`` choice), with the job's stage
  timings, the wall time of the call and the peak resident memory of the driver JVM and
  the Python workers (:class:`benchmarks.memory.PeakRSSSampler`);
* runs ProNE (``benchmarks/prone.py``: tSVD of the log-ratio matrix, order-10
  Chebyshev propagation, dense SVD; NumPy/SciPy on one machine) on the same edges, read
  from the same Parquet, with its wall time (reading included) and this process's peak
  memory growth;
* scores both the same way: the fraction of all-zero rows among the nodes (every node
  of these graphs has an edge), and micro-F1 of one-vs-rest logistic regression on the
  planted community at 10% and 50% training (3 splits) on the same seeded sample of at
  most ``--f1-max-nodes`` nodes (:func:`benchmarks.ladder.planted_f1`).

A Markdown row per method and graph goes to stdout, with the ratios sepne-spark / ProNE
of time and of micro-F1; the records are merged into ``--out`` (JSON).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT), str(ROOT / "benchmarks")):
    if p not in sys.path:
        sys.path.insert(0, p)

from benchmarks.ladder import _size, machine_info, planted_f1, run_embed, shuffle_partitions, start_session  # noqa: E402

log = logging.getLogger("sepne_spark.benchmarks.scale_quality")


def ensure_graph(spark, workdir: str, model: str, nodes: int, communities: int, avg_degree: float, mixing: float,
                 seed: int) -> dict[str, Any]:
    """Generate ``model`` (sbm or dcsbm) into ``WORKDIR/graphs/NAME`` unless it is there."""
    from sepne_spark.generators import dcsbm_graph, sbm_graph, write_edges, write_labels

    name = f"{model}-n{nodes}-c{communities}-deg{avg_degree:g}-m{mixing:g}-s{seed}"
    root = os.path.join(os.path.abspath(workdir), "graphs", name)
    info_path = os.path.join(root, "graph.json")
    if os.path.exists(info_path):
        with open(info_path) as fh:
            return json.load(fh)
    t = time.time()
    if model == "lfr":
        edges, labels = lfr_graph(spark, nodes, communities, avg_degree, mixing, seed)
    else:
        gen = {"sbm": sbm_graph, "dcsbm": dcsbm_graph}[model]
        edges, labels = gen(spark, nodes, communities, avg_degree, mixing, seed, partitions=shuffle_partitions(nodes))
    write_edges(edges, os.path.join(root, "edges"), "parquet", overwrite=True)
    # Only nodes with an edge are nodes of the graph the job reads.
    written = spark.read.parquet(os.path.join(root, "edges"))
    write_labels(labels, os.path.join(root, "labels"), "parquet", overwrite=True)
    info = {"name": name, "model": model, "nodes": nodes, "communities": communities, "avg_degree": avg_degree,
            "mixing": mixing, "seed": seed, "edges": written.count(), "root": root,
            "edges_path": os.path.join(root, "edges"), "labels_path": os.path.join(root, "labels"),
            "generate_s": round(time.time() - t, 1)}
    with open(info_path, "w") as fh:
        json.dump(info, fh, indent=2)
    return info


def lfr_graph(spark, nodes: int, communities: int, avg_degree: float, mixing: float, seed: int):
    """An LFR graph (:func:`lfr.lfr_edges_numpy`) as ``src, dst`` and ``node, label`` DataFrames."""
    import numpy as np
    import pandas as pd

    from lfr import lfr_edges_numpy

    src, dst, label = lfr_edges_numpy(nodes, communities, avg_degree, mixing, seed)
    edges = spark.createDataFrame(pd.DataFrame({"src": src, "dst": dst}))
    labels = spark.createDataFrame(pd.DataFrame({"node": np.arange(nodes, dtype=np.int64), "label": label}))
    return edges, labels


def zero_fraction(spark, output: str) -> tuple[int, float]:
    from pyspark.sql import functions as F

    row = spark.read.parquet(output).agg(
        F.count(F.lit(1)).alias("n"), F.sum(F.forall("embedding", lambda x: x == 0).cast("long")).alias("z")
    ).first()
    return int(row["n"]), (int(row["z"] or 0) / max(int(row["n"]), 1))


def run_prone(spark, graph: dict[str, Any], output: str, d: int) -> dict[str, Any]:
    """ProNE on the graph's Parquet edges; its embedding written to ``output`` for scoring."""
    os.makedirs(os.path.dirname(output), exist_ok=True)  # also when the job's run failed
    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq

    from prone import prone, undirected_adjacency

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.time()
    table = pq.read_table(graph["edges_path"], columns=["src", "dst"])
    src = table.column("src").to_numpy()
    dst = table.column("dst").to_numpy()
    ids, A = undirected_adjacency(src, dst)
    _, emb, seconds = prone(A, d=d)
    total = time.time() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pd.DataFrame({"id": ids.astype(np.int64), "embedding": list(emb)}).to_parquet(output)
    return {"status": "ok", "total_s": round(total, 2), "stages": {k: round(v, 2) for k, v in seconds.items()},
            "peak_rss_mb": round(max(peak, before), 1), "rss_growth_mb": round(peak - before, 1)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="+", type=_size, default=[10_000, 100_000])
    p.add_argument("--models", nargs="+", choices=["sbm", "dcsbm", "lfr"], default=["sbm", "dcsbm"])
    p.add_argument("--communities", type=int, default=50)
    p.add_argument("--avg-degree", type=float, default=15.0)
    p.add_argument("--mixing", type=float, default=0.6)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--args", default="", help="extra embed job arguments, one string (e.g. '--profile social')")
    p.add_argument("--no-prone", action="store_true", help="skip the ProNE peer")
    p.add_argument("--no-sepne", action="store_true",
                   help="run only the ProNE peer: the two in separate processes, one after the other, on a graph "
                        "too large for both in one process's memory (--out merges the records)")
    p.add_argument("--prone-first", action="store_true",
                   help="run ProNE before the embed job: on a graph where ProNE's arrays and the driver JVM, "
                        "grown by the job, would not fit in memory together")
    p.add_argument("--f1-max-nodes", type=int, default=20_000)
    p.add_argument("--workdir", default="benchmarks/results/scale_quality")
    p.add_argument("--out", default="benchmarks/results/scale_quality.json")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="8g")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    ns = parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    spark = start_session(ns.master, ns.driver_memory)
    records: list[dict[str, Any]] = []
    print("| graph | nodes | edges | method | total s | stages s | peak MB | zero rows | F1 10% | F1 50% | time / ProNE | F1 10% / ProNE | F1 50% / ProNE |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model in ns.models:
        for size in ns.sizes:
            g = ensure_graph(spark, ns.workdir, model, size, ns.communities, ns.avg_degree, ns.mixing, ns.seed)
            out = os.path.join(os.path.abspath(ns.workdir), "out", g["name"])
            runs: dict[str, dict[str, Any]] = {}

            def sepne() -> None:
                argv_job = ["--input", g["edges_path"], "--output", out + "-sepne", "--overwrite"] + ns.args.split()
                spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(size)))
                r = run_embed(spark, argv_job, out + "-sepne")
                rec = {"method": "sepne-spark", "graph": g, "args": ns.args, **r}
                if r["status"] == "ok":
                    m = r["manifest"] or {}
                    rec["stages"] = m.get("timings_s", {})
                    rec["profile"] = m.get("profile")
                    mem = r["memory"]
                    rec["peak_mb"] = round((mem.get("driver_jvm_peak_mb") or 0)
                                           + (mem.get("python_workers_sum_peak_mb") or 0)
                                           + (mem.get("driver_python_peak_mb") or 0), 1)
                    rec["rows"], rec["zero_frac"] = zero_fraction(spark, out + "-sepne")
                    rec["f1"] = planted_f1(spark, out + "-sepne", g["labels_path"], ns.f1_max_nodes, ns.seed)
                runs["sepne-spark"] = rec

            def peer_run() -> None:
                p = run_prone(spark, g, out + "-prone.parquet", 128)
                prec = {"method": "prone", "graph": g, **p, "peak_mb": p["peak_rss_mb"]}
                prec["rows"], prec["zero_frac"] = zero_fraction(spark, out + "-prone.parquet")
                prec["f1"] = planted_f1(spark, out + "-prone.parquet", g["labels_path"], ns.f1_max_nodes, ns.seed)
                runs["prone"] = prec

            order = [] if ns.no_prone else [peer_run]
            mine = [] if ns.no_sepne else [sepne]
            order = order + mine if ns.prone_first else mine + order
            for step in order:
                step()
            runs = {k: runs[k] for k in ("sepne-spark", "prone") if k in runs}  # the table's order
            peer = runs.get("prone")
            for name, rec in runs.items():
                rec["load"] = os.getloadavg()
                records.append(rec)
                if rec.get("status") != "ok":
                    print(f"| {g['name']} | {size} | {g['edges']} | {name} | failed: {rec.get('error')} |")
                    continue
                f1 = rec["f1"]["micro_f1"]
                ratios = ["", "", ""]
                if peer and name != "prone":
                    pf = peer["f1"]["micro_f1"]
                    ratios = [f"{rec['total_s'] / peer['total_s']:.2f}", f"{f1['0.1'] / pf['0.1']:.3f}",
                              f"{f1['0.5'] / pf['0.5']:.3f}"]
                stages = ", ".join(f"{k} {v:.0f}" for k, v in (rec.get("stages") or {}).items()
                                   if isinstance(v, (int, float)))
                print(f"| {g['name']} | {size:,} | {g['edges']:,} | {name} | {rec['total_s']:.1f} | {stages} | "
                      f"{rec.get('peak_mb', 0):.0f} | {rec['zero_frac']:.4%} | {f1['0.1']:.4f} | {f1['0.5']:.4f} | "
                      + " | ".join(ratios) + " |", flush=True)
    old = {}
    if os.path.exists(ns.out):
        with open(ns.out) as fh:
            old = json.load(fh)
    old.setdefault("runs", []).extend(records)
    old["machine"] = machine_info()
    os.makedirs(os.path.dirname(os.path.abspath(ns.out)), exist_ok=True)
    with open(ns.out, "w") as fh:
        json.dump(old, fh, indent=2, default=str)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
