"""Fixed costs of the distributed path: fit and embed a small graph, again and again.

On a graph of tens of nodes the work is nothing and every second is Spark's per-query
and per-task cost, so this is the benchmark for those costs (what the tests and a
cluster user with a small graph pay). One ``local[2]`` session; the distributed path is
forced (``oneTaskNodes=0``); each repetition fits a model and embeds every node, and
prints the two times. The first repetition warms the JVM and the Python workers.
``--pyspark-daemon`` starts the Python workers as Spark does by default
(``pyspark.daemon``) instead of through :mod:`sepne_spark.daemon`, for comparison;
``--tasks N`` then also times a query of N Python tasks that do nothing (a
``mapInPandas`` over N one-row partitions), three times: the per-task cost alone.

``--spectral`` adds the steps after the solve by row blocks (two averaging steps, one
refinement round by the log-ratio matrix, a propagation of order 2, two row blocks) and
the anchor, on the graph plus two small islands that hold no landmark, and also times a
count of the embedding once it has been computed: the per-query cost of the plans the
steps leave behind.

    python benchmarks/small_distributed.py --reps 4
    python benchmarks/small_distributed.py --reps 4 --pyspark-daemon
    python benchmarks/small_distributed.py --reps 3 --spectral
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def edge_rows(nodes: int, edges: int, seed: int) -> list[tuple[str, str, float]]:
    """``edges`` distinct weighted edges among ``nodes`` nodes with string ids."""
    rng = np.random.default_rng(seed)
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < edges:
        a, b = (int(x) for x in rng.integers(0, nodes, 2))
        if a != b:
            pairs.add((a, b))
    return [(f"n{a}", f"n{b}", float(rng.integers(1, 4))) for a, b in sorted(pairs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--nodes", type=int, default=60)
    parser.add_argument("--edges", type=int, default=220)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--tasks", type=int, default=0, help="also time a query of this many empty Python tasks")
    parser.add_argument("--spectral", action="store_true",
                        help="the steps after the solve by row blocks and the anchor, on the graph plus two islands")
    parser.add_argument("--pyspark-daemon", action="store_true",
                        help="Python workers through pyspark.daemon (Spark's default), not sepne_spark.daemon")
    args = parser.parse_args()

    from sepne_spark import SepNE
    from sepne_spark.session import get_spark

    spark = get_spark("sepne-small-bench", master=args.master,
                      conf={"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false",
                            "spark.sql.codegen.wholeStage": "false",
                            **({"spark.python.daemon.module": "pyspark.daemon"} if args.pyspark_daemon else {})})
    print("python daemon:", spark.conf.get("spark.python.daemon.module", "pyspark.daemon"), flush=True)
    rows = edge_rows(args.nodes, args.edges, 7)
    extra = {}
    if args.spectral:
        rows += [("x1", "x2", 1.0), ("y1", "y2", 1.0), ("y2", "y3", 2.0)]  # no landmark reaches them
        extra = dict(averageSteps=2, refineSteps=1, refineOperator="pmi", propagation=2, propagationBlocks=2,
                     propagationDtype="float64", unreached="anchor")
    edges = spark.createDataFrame(rows, "src string, dst string, weight double")
    for rep in range(args.reps):
        start = time.perf_counter()
        model = SepNE(dim=4, landmarks=8, landmarkStrategy="DD", metric="I+A", partition="RP", setSize=18,
                      lam=0.4, eta=0.1, iters=5, directed=True, seed=3, oneTaskNodes=0, **extra).fit(edges)
        fitted = time.perf_counter()
        out = model.transform(edges)
        n = len(out.collect())
        done = time.perf_counter()
        line = f"rep {rep}: fit {fitted - start:.2f} s, embed {done - fitted:.2f} s ({n} rows)"
        if args.spectral:
            counted = time.perf_counter()
            out.count()
            line += (f", of which the anchor's stage {model.timings.get('unreached', 0.0):.2f} s; "
                     f"a count of the embedding afterwards {time.perf_counter() - counted:.2f} s")
            model.release()
        print(line, flush=True)
    if args.tasks:
        empty = spark.range(args.tasks).repartition(args.tasks).mapInPandas(lambda batches: batches, "id long")
        for rep in range(3):
            start = time.perf_counter()
            rows = len(empty.collect())
            print(f"{args.tasks} empty tasks: {time.perf_counter() - start:.2f} s ({rows} rows)", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
