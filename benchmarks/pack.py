"""The LP sets' packing (:func:`sepne_spark.partition.pack_communities`) of many small
communities, timed.

    .venv/bin/python benchmarks/pack.py --nodes 2000000 --communities 1000000

``--nodes`` node ids (``spark.range``) get one of ``--communities`` labels by a hash of
the id (sizes Poisson-like: many singletons, as label propagation leaves on a sparse
graph), or with ``--giant F`` a share F of them one community (label propagation's
giant component), and are packed into sets of ``--set-size`` nodes; the packing is computed
``--repeat`` times (``write.format("noop")``) in a ``local[2]`` session with 4 GiB of
driver memory, and the seconds of each run are printed, with the largest set.
"""
from __future__ import annotations

import argparse
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sepne_spark.partition import pack_communities


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=2_000_000)
    p.add_argument("--communities", type=int, default=1_000_000)
    p.add_argument("--set-size", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--giant", type=float, default=0.0, help="share of the nodes in one community")
    ns = p.parse_args()
    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "8")
             .getOrCreate())
    label = F.pmod(F.xxhash64("id"), F.lit(ns.communities))
    if ns.giant > 0:
        label = F.when(F.col("id") < int(ns.giant * ns.nodes), F.lit(-1)).otherwise(label)
    labels = spark.range(ns.nodes).select(F.col("id"), label.alias("label")).cache()
    labels.count()
    for r in range(ns.repeat):
        start = time.time()
        pack_communities(labels, ns.set_size, seed=1).write.format("noop").mode("overwrite").save()
        print(f"run {r + 1}: {time.time() - start:.1f} s")
    sets = pack_communities(labels, ns.set_size, seed=1).groupBy("set_id").count()
    print("sets", sets.count(), "largest", sets.agg(F.max("count")).first()[0])


if __name__ == "__main__":
    main()
