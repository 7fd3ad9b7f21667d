"""Where the block products' time goes: the JVM (shuffles, sorts, Arrow, checkpoints)
or the Python workers (unpacking, ``scipy.sparse`` products, updates).

Runs the propagation stage (:func:`sepne_spark.propagation.propagate_embeddings`) on a
graph that ``benchmarks/scale_quality.py`` generated (its ``edges`` Parquet, undirected
pairs stored once), with ``--rounds`` refinement rounds and nothing else, so that every
step after the set-up is one product by row blocks and one d x d Gram matrix. The start
vectors are seeded uniform random numbers (their values do not change a product's cost).
Each progress message of the stage records, from ``/proc``, the CPU seconds used so far
by the driver JVM (which runs the executor under a local master) and by the rest of the
machine less this driver process: on a quiet machine, the Python workers. Per product
(from one message to the next: the first product also holds the stage's set-up), the
wall time and both CPU times are printed, as a Markdown table::

    .venv/bin/python benchmarks/products.py --edges /tmp/sq6/graphs/sbm-n1000000-c50-deg15-m0.6-s1/edges \\
        --rounds 4 --driver-memory 8g --out /tmp/products.json

Linux only (``/proc``). Use a quiet machine: other processes' CPU time is counted as the
workers'.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.memory import driver_jvm_pids, process_table  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """CPU seconds of ``pid`` (user + system)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return 0.0
    fields = stat[stat.rfind(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _busy() -> float:
    """CPU seconds the whole machine has spent busy (``/proc/stat``: user to steal, less
    idle and iowait; guest time is already counted in user)."""
    with open("/proc/stat", "rb") as fh:
        fields = [int(x) for x in fh.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / _TICK


class CpuMarks(logging.Handler):
    """Records ``(seconds since start, message, JVM CPU s, other CPU s)`` at each
    progress message: the driver JVM's own CPU time, and the machine's busy time less
    that and less this driver process's, which on a quiet machine is the Python workers'
    (workers end and are forked again, so their own counters cannot be summed)."""

    def __init__(self) -> None:
        super().__init__()
        self.t0 = time.time()
        self.marks: list[tuple[float, str, float, float]] = []

    @staticmethod
    def snapshot() -> tuple[float, float]:
        jvms = driver_jvm_pids(process_table())
        jvm = _cpu(jvms[0]) if jvms else 0.0
        return jvm, _busy() - jvm - _cpu(os.getpid())

    def emit(self, record: logging.LogRecord) -> None:
        jvm, other = self.snapshot()
        self.marks.append((time.time() - self.t0, record.getMessage(), jvm, other))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", required=True, help="a generated graph's edges (Parquet: src, dst)")
    ap.add_argument("--rounds", type=int, default=4, help="refinement rounds: one product each")
    ap.add_argument("--blocks", type=int, default=0, help="row blocks (default: the library's choice)")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting (repeatable)")
    ap.add_argument("--out", help="write the marks and the table as JSON here")
    args = ap.parse_args()

    from pyspark.sql import functions as F

    from sepne_spark.propagation import default_blocks, propagate_embeddings
    from sepne_spark.session import get_spark

    conf = {"spark.driver.memory": args.driver_memory, "spark.ui.enabled": "false"}
    conf.update(kv.split("=", 1) for kv in args.conf)
    spark = get_spark("sepne-products", conf=conf)
    marks = CpuMarks()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("sepne_spark.progress").addHandler(marks)

    pairs = spark.read.parquet(args.edges).select("src", "dst")
    edges = (pairs.unionByName(pairs.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
             .withColumn("weight", F.lit(1.0)))
    vertices = edges.select(F.col("src").alias("id")).distinct()
    nodes = vertices.count()
    blocks = args.blocks or default_blocks(nodes, dim=args.dim, dtype=args.dtype)
    vec = F.array(*[F.rand(1000 + j) for j in range(args.dim)])
    embeddings = vertices.select("id", vec.alias("embedding"))
    t0 = time.time()
    out = propagate_embeddings(vertices, edges, embeddings, order=1, blocks=blocks, dtype=args.dtype,
                               refine_steps=args.rounds)
    out.write.format("noop").mode("overwrite").save()
    total = time.time() - t0
    marks.emit(logging.LogRecord("products", logging.INFO, "", 0, "end", None, None))

    rows = []
    for (t_a, _, j_a, p_a), (t_b, msg, j_b, p_b) in zip(marks.marks, marks.marks[1:]):
        rows.append({"step": msg, "wall_s": round(t_b - t_a, 1), "jvm_cpu_s": round(j_b - j_a, 1),
                     "workers_cpu_s": round(p_b - p_a, 1)})
    print(f"\n{nodes:,} nodes, {blocks} blocks, {args.dtype}, d = {args.dim}, {args.rounds} rounds: {total:.1f} s")
    print("| from the previous message to | wall s | JVM CPU s | Python workers' CPU s |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['step'][:90]} | {r['wall_s']} | {r['jvm_cpu_s']} | {r['workers_cpu_s']} |")
    if args.out:
        Path(args.out).write_text(json.dumps(dict(nodes=nodes, blocks=blocks, dtype=args.dtype, dim=args.dim, conf=args.conf,
                                                  rounds=args.rounds, total_s=total, rows=rows,
                                                  marks=marks.marks), indent=2))


if __name__ == "__main__":
    main()
