"""The anchor's stage alone (``unreached="anchor"``) and the write after it, at scale.

    .venv/bin/python benchmarks/anchor_stage.py --edges EDGES --embeddings EMB --zero 300 \
        --result /tmp/anchor/result

Reads an edge list (Parquet: ``src``, ``dst`` and optionally ``weight``) as the embed job
does (:func:`sepne_spark.graph.prepare_graph`, undirected unless ``--directed``) and an
embedding table (Parquet: ``id``, ``embedding`` and any other columns, e.g. the embed
job's output), sets the vectors of about ``--zero`` nodes to zero (those whose 64-bit
hash of the id falls in one residue class: a fixed choice), and holds both tables in
memory, counted, as the pipeline holds them when the stage starts. Then it times
:func:`anchor_frame` (its jobs run in the call) and the write of its result to
``--result`` (Parquet, overwritten), and prints one JSON record.

``--implementation FILE`` takes ``anchor_frame`` from another copy of
``sepne_spark/unreached.py`` (e.g. ``git show REV:sepne_spark/unreached.py``), to compare
two versions of the stage on the same input; ``--compare PATH`` then checks that this
run's result equals the other's written result (same ids, vectors to 1e-12).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT), str(ROOT / "benchmarks")):
    if p not in sys.path:
        sys.path.insert(0, p)

from benchmarks.ladder import machine_info, start_session  # noqa: E402


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--edges", required=True, help="edge list, Parquet (src, dst[, weight])")
    p.add_argument("--embeddings", required=True, help="embedding table, Parquet (id, embedding, ...)")
    p.add_argument("--zero", type=int, default=300, help="about how many vectors to set to zero (default 300)")
    p.add_argument("--result", required=True, help="where the result is written (Parquet, overwritten)")
    p.add_argument("--directed", action="store_true", help="read the edges as directed")
    p.add_argument("--implementation", default=None, help="a file holding another anchor_frame")
    p.add_argument("--compare", default=None, help="another run's --result, to compare with")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="10g")
    return p.parse_args(argv)


def _anchor_frame(path: str | None) -> Any:
    if path is None:
        from sepne_spark.unreached import anchor_frame

        return anchor_frame
    spec = importlib.util.spec_from_file_location("anchor_implementation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.anchor_frame


def main(argv: Sequence[str] | None = None) -> int:
    ns = parse_args(argv)
    from pyspark.sql import functions as F

    from sepne_spark.graph import prepare_graph

    anchor_frame = _anchor_frame(ns.implementation)
    spark = start_session(ns.master, ns.driver_memory)
    record: dict[str, Any] = {"machine": machine_info(), "implementation": ns.implementation or "sepne_spark"}
    t = time.time()
    raw = spark.read.parquet(ns.edges)
    if "weight" not in raw.columns:
        raw = raw.withColumn("weight", F.lit(1.0))
    graph = prepare_graph(raw.select("src", "dst", "weight"), ns.directed)
    edges = graph.edges.persist()
    record["edge_rows"] = edges.count()
    emb = spark.read.parquet(ns.embeddings)
    rows = emb.count()
    every = max(1, rows // max(1, ns.zero))
    dim = len(emb.select("embedding").first()[0])
    picked = F.pmod(F.xxhash64("id"), F.lit(every)) == 0
    out = emb.withColumn("embedding", F.when(picked, F.array_repeat(F.lit(0.0), dim)).otherwise(F.col("embedding")))
    out = out.persist()
    record.update(rows=out.count(), zeroed=out.where(picked).count(), dim=dim, setup_s=round(time.time() - t, 1))
    cached: list = []
    t = time.time()
    result, filled = anchor_frame(out, edges, 1.0, 0, dim, cached=cached)
    record.update(filled=filled, anchor_s=round(time.time() - t, 1))
    t = time.time()
    result.write.mode("overwrite").parquet(ns.result)
    record["write_s"] = round(time.time() - t, 1)
    record["anchor_and_write_s"] = round(record["anchor_s"] + record["write_s"], 1)
    for df in cached:
        df.unpersist()
    if ns.compare:
        a = spark.read.parquet(ns.result).select("id", F.col("embedding").alias("a"))
        b = spark.read.parquet(ns.compare).select("id", F.col("embedding").alias("b"))
        joined = a.join(b, "id", "full_outer")
        diff = F.aggregate(F.zip_with("a", "b", lambda x, y: F.abs(x - y)), F.lit(0.0), lambda acc, x: F.greatest(acc, x))
        stats = joined.agg(F.sum(F.when(F.col("a").isNull() | F.col("b").isNull(), 1).otherwise(0)).alias("missing"),
                           F.max(diff).alias("max_abs_diff")).first()
        record.update(compare=ns.compare, missing=int(stats["missing"]), max_abs_diff=float(stats["max_abs_diff"] or 0.0))
        if stats["missing"] or (stats["max_abs_diff"] or 0.0) > 1e-12:
            print(json.dumps(record, indent=1))
            print("results differ", file=sys.stderr)
            return 1
    print(json.dumps(record, indent=1))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
