"""The link-prediction AUC by score ranges against one window over every score.

:func:`sepne_spark.evaluation.auc_spark` cuts the scores into ranges at approximate
quantiles and ranks each range in its own pandas frame. Its peer here is the way it was
computed before: one window ordered by score over all distinct scores, which Spark runs
in one task ("No Partition Defined for Window operation"). Both run, alternately, on
the same checkpointed table of ``--rows`` seeded scores (half positives, shifted by 0.3),
and must give the same AUC::

    .venv/bin/python benchmarks/auc.py --rows 16000000 --repeats 2

On one machine both use its cores; the single task of the peer is what keeps it from
using a cluster's.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql import DataFrame, Window  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from sepne_spark.evaluation import auc_spark  # noqa: E402
from sepne_spark.session import checkpoint, get_spark  # noqa: E402


def one_window_auc(scored: DataFrame, score_col: str = "score", label_col: str = "label") -> float:
    """The AUC by one window over every distinct score (the earlier ``auc_spark``)."""
    g = scored.where(F.col(score_col).isNotNull()).groupBy(F.col(score_col).alias("_s")).agg(
        F.sum(F.when(F.col(label_col) == 1, 1).otherwise(0)).cast("double").alias("_p"),
        F.sum(F.when(F.col(label_col) == 1, 0).otherwise(1)).cast("double").alias("_q"))
    w = Window.orderBy("_s").rowsBetween(Window.unboundedPreceding, -1)
    g = g.withColumn("_below", F.coalesce(F.sum("_q").over(w), F.lit(0.0)))
    r = g.agg(F.sum(F.col("_p") * (F.col("_below") + 0.5 * F.col("_q"))).alias("u"),
              F.sum("_p").alias("p"), F.sum("_q").alias("q")).first()
    return float(r["u"] / (r["p"] * r["q"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", help="JSON file for the timings")
    ns = ap.parse_args(argv)
    spark = get_spark()
    scores = spark.range(ns.rows).select((F.col("id") % 2).cast("int").alias("label"), F.rand(1).alias("r"))
    scored = checkpoint(scores.select("label", (F.col("r") + 0.3 * F.col("label")).alias("score")))
    scored.count()
    runs = []
    for i in range(ns.repeats):
        for name, fn in (("ranges", auc_spark), ("one window", one_window_auc)):
            t = time.time()
            value = fn(scored)
            runs.append({"method": name, "repeat": i, "seconds": round(time.time() - t, 2), "auc": value})
            print(f"{name:10s} repeat {i}: {runs[-1]['seconds']:6.1f} s  AUC {value:.12f}", flush=True)
    if len({r["auc"] for r in runs}) != 1:
        print("the two AUCs differ", file=sys.stderr)
        return 1
    if ns.out:
        Path(ns.out).write_text(json.dumps({"rows": ns.rows, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
