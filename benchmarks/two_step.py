"""The whole graph's rows of M = A + A^2 with the log scaling (what the distributed
fit and embedding read, and what ``auto`` takes for graphs over 100,000 nodes whose
two-step walks stay under 3 x 10^7): sparse products by block of rows
(:func:`sepne_spark.proximity.two_step_rows`) against one joined Spark row per
two-step walk (the joins they replace), timed in one session.

    .venv/bin/python benchmarks/two_step.py --nodes 200000 --avg-degree 8

An SBM graph of ``--nodes`` nodes (``sepne_spark.generators.sbm_graph``, undirected,
each edge both ways) is merged and cached; then, ``--repeat`` times and alternating
the two ways, its entries of M are computed and counted, in a ``local[2]`` session with
4 GiB of driver memory and ``--shuffle-partitions`` (the blocks' number, at least
``TWO_STEP_MIN_BLOCKS``, unless ``--blocks`` gives it). Each run's seconds and entry
count are printed; the two ways must give the same count.
"""
from __future__ import annotations

import argparse
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sepne_spark.generators import sbm_graph
from sepne_spark.graph import prepare_graph
from sepne_spark.proximity import TWO_STEP_MIN_BLOCKS, Proximity, transition, two_step_rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=200_000)
    p.add_argument("--avg-degree", type=float, default=8.0)
    p.add_argument("--communities", type=int, default=20)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--shuffle-partitions", type=int, default=8)
    p.add_argument("--blocks", type=int, default=None, help="blocks of the products (default: the library's)")
    ns = p.parse_args()
    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", str(ns.shuffle_partitions)).getOrCreate())
    edges, _ = sbm_graph(spark, ns.nodes, ns.communities, ns.avg_degree, 0.3, seed=0)
    graph = prepare_graph(edges.select("src", "dst", F.lit(1.0).alias("weight")), False, check=False)
    graph.edges.cache()
    rows = graph.edges.count()
    walks = graph.edges.groupBy("src").count().agg(F.sum(F.col("count") * F.col("count"))).first()[0]
    blocks = ns.blocks or max(ns.shuffle_partitions, TWO_STEP_MIN_BLOCKS)
    print(f"{ns.nodes} nodes, {rows} edge rows, {walks} two-step walks, {ns.shuffle_partitions} shuffle partitions, "
          f"{blocks} blocks")
    A = transition(graph.edges).cache()
    A.count()
    counts = {}
    for r in range(ns.repeat):
        for way in (("blocks", "joins") if r % 2 == 0 else ("joins", "blocks")):
            prox = Proximity(A, graph.vertices, "A+A2", "log", graph.edges, by_block=way == "blocks")
            start = time.time()
            entries = prox._scaled(two_step_rows(A, ns.blocks)) if way == "blocks" and ns.blocks else prox.rows(None)
            n = entries.count()
            print(f"run {r + 1} {way}: {time.time() - start:.1f} s, {n} entries", flush=True)
            prox.release()
            counts.setdefault(way, set()).add(n)
    assert counts["blocks"] == counts["joins"] and len(counts["blocks"]) == 1, counts


if __name__ == "__main__":
    main()
