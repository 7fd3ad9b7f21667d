"""The GraphFrames peer on the paper's document networks, through the repository's protocol.

    python benchmarks/peer_documents.py --datasets cora citeseer wiki \\
        --methods sepne graphframes-word2vec graphframes-hash2vec --out /tmp/peer-docs.json

For each dataset (``--data``/NAME/edges.tsv and labels.tsv) and method, in one Spark
session (``local[2]``):

* ``sepne``: ``jobs/embed.py --profile PROFILE --input edges.tsv`` (``document-quality``
  by default), as in BENCHMARKS.md;
* ``graphframes-word2vec`` / ``graphframes-hash2vec``: the edge list read as the embed
  job reads it (:func:`sepne_spark.graph.load_graph`, undirected, duplicates summed,
  self-loops dropped), then :func:`sepne_spark.baselines.random_walk_embeddings` with
  d = 128 and GraphFrames' walk settings (5 walks per node of 5 x 10 steps, restart
  probability 0.1, window 5; Word2Vec one epoch on ``--word2vec-partitions``
  partitions; Hash2Vec with its norm channel, 129 components), written as Parquet
  ``id, embedding`` with a row for every node of the graph (a zero vector for a node
  whose only edges are self-loops, as sepne-spark writes it).

Every embedding is then scored by ``jobs/evaluate.py classify`` (one-vs-rest logistic
regression on L2-normalised vectors, micro-F1, 10 splits, 10% and 90% training, seed 0).
The wall time of each embedding (read + embed + write) is measured around the call.
A Markdown table row is printed per run; ``--out`` collects the results as JSON.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PEERS = {"graphframes-word2vec": "word2vec", "graphframes-hash2vec": "hash2vec"}


def _job(name: str):
    spec = importlib.util.spec_from_file_location(f"sepne_jobs_{name}", ROOT / "jobs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def embed_peer(spark, edges_path: str, output: str, mode: str, dim: int, seed: int, partitions: int) -> None:
    from sepne_spark.baselines import random_walk_embeddings
    from sepne_spark.graph import load_graph

    from pyspark.sql import functions as F

    graph = load_graph(spark, edges_path, directed=False)
    emb = random_walk_embeddings(spark, graph.edges.select("src", "dst"), dim=dim, mode=mode, seed=seed,
                                 word2vec_partitions=partitions, temporary_prefix=output + "-walks")
    # A row for every node of the graph, as sepne-spark writes: a node no walk visits (its
    # only edges self-loops, which the reading drops) gets a zero vector, so that both
    # are scored on the same labelled nodes and the same splits.
    width = int(emb.select(F.size("embedding")).first()[0])
    rows = graph.vertices.select("id").join(emb, "id", "left").select(
        "id", F.coalesce(F.col("embedding"), F.array_repeat(F.lit(0.0), width)).alias("embedding"))
    rows.write.mode("overwrite").parquet(output)
    emb.unpersist()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    p.add_argument("--datasets", nargs="+", default=["cora", "citeseer", "wiki"])
    p.add_argument("--methods", nargs="+", default=["sepne", *PEERS], choices=["sepne", *PEERS])
    p.add_argument("--profile", default="document-quality", help="SepNE profile")
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--word2vec-partitions", type=int, default=1)
    p.add_argument("--workdir", default="/tmp/sepne-peer-docs")
    p.add_argument("--out", default=None, help="JSON results")
    p.add_argument("--master", default="local[2]")
    ns = p.parse_args(argv)

    from sepne_spark.jobs.common import setup_logging
    from sepne_spark.session import get_spark

    setup_logging()
    spark = get_spark("sepne-peer-documents", master=ns.master, conf={"spark.driver.memory": "4g"})
    spark.sparkContext.setLogLevel("WARN")
    embed, evaluate = _job("embed"), _job("evaluate")
    results = []
    print("| dataset | method | embed wall s | micro-F1 10% | micro-F1 90% | dim | nodes evaluated |")
    print("|---|---|---|---|---|---|---|", flush=True)
    for name in ns.datasets:
        edges = os.path.join(ns.data, name, "edges.tsv")
        labels = os.path.join(ns.data, name, "labels.tsv")
        for method in ns.methods:
            out = os.path.join(ns.workdir, f"{name}-{method}")
            t = time.time()
            with contextlib.redirect_stdout(sys.stderr):
                if method == "sepne":
                    rc = embed.main(spark, ["--input", edges, "--profile", ns.profile, "--output", out,
                                            "--overwrite", "--seed", str(ns.seed)])
                    assert rc == 0, rc
                else:
                    embed_peer(spark, edges, out, PEERS[method], ns.dim, ns.seed, ns.word2vec_partitions)
            wall = time.time() - t
            js = out + "-classify.json"
            with contextlib.redirect_stdout(sys.stderr):
                evaluate.main(spark, ["classify", "--embeddings", out, "--labels", labels, "--splits", "10",
                                      "--ratios", "0.1,0.9", "--seed", "0", "--json", js])
            with open(js) as fh:
                res = json.load(fh)
            f1 = {f"{float(r):g}": v for r, v in res["results"].items()}
            rec = {"dataset": name, "method": method, "embed_wall_s": round(wall, 1),
                   "micro_f1": {r: round(v["micro_f1_mean"], 4) for r, v in f1.items()},
                   "micro_f1_std": {r: round(v.get("micro_f1_std", 0.0), 4) for r, v in f1.items()},
                   "dim": res["dim"], "nodes": res["n_nodes"], "missing": res["n_missing_embedding"],
                   "profile": ns.profile if method == "sepne" else None,
                   "word2vec_partitions": ns.word2vec_partitions if method == "graphframes-word2vec" else None}
            results.append(rec)
            print(f"| {name} | {method} | {wall:.0f} | {rec['micro_f1']['0.1']:.4f} ± {rec['micro_f1_std']['0.1']:.3f}"
                  f" | {rec['micro_f1']['0.9']:.4f} ± {rec['micro_f1_std']['0.9']:.3f} | {rec['dim']} | "
                  f"{rec['nodes']} ({rec['missing']} without embedding) |", flush=True)
            if ns.out:
                with open(ns.out, "w") as fh:
                    json.dump(results, fh, indent=2)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
