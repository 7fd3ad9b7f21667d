"""Skewed graphs: a million-leaf hub and one giant community, with memory and time.

    .venv/bin/python benchmarks/skew.py                      # full size
    .venv/bin/python benchmarks/skew.py --leaves 20000 --nodes 5000   # small, a few minutes

Two cases, each run through ``jobs/embed.py``'s ``main`` in one Spark session (driver
memory 8g, ``--master``, ``local[2]`` by default):

``star``
    A hub joined to ``--leaves`` (1,000,000) leaves, plus a ring over the leaves (leaf
    ``i`` to leaf ``i + 1``), so every leaf has degree 3 and the hub degree ``leaves``.
    Profile ``social`` with I+A, k=200, d=32, 5 rounds, lambda 50, eta 1: the model is
    fitted on the whole graph, then the hub and ``--io-leaves`` (1,000) leaves chosen
    with a seeded generator are embedded (``--partition IO``). The hub's row of ``M``
    has ``leaves`` entries; what matters is that neither the fit nor a set's solve
    holds more than its set and the landmarks.
``giant``
    A block-model-like graph of ``--nodes`` (200,000) nodes, ``--giant-share`` (90%) of
    them in one community and the rest in communities of ``--small-community`` (100)
    nodes; mean degree ``--avg-degree`` (20), ``--mixing`` (10%) of the edges placed at
    random, the others inside the source's community. Same settings as ``star`` with
    ``--partition LP`` and 2,000 nodes per set: label propagation finds the giant
    community, which must be cut into sets of at most the set size.

For each case it reports the wall time of every stage (from the job's manifest) and of
the whole call, peak resident memory of the driver JVM and of the PySpark Python workers
(sum and largest; :class:`benchmarks.memory.PeakRSSSampler`, every 0.5 s), the number of
sets and the largest, and checks:

* every output embedding is finite (no NaN, no infinity);
* ``star``: one row for the hub and for every requested leaf;
* ``giant``: every node has a row and the largest set has at most ``--set-size`` nodes.

A Markdown table row is printed per case and the results are merged into ``--out``
(JSON; a case replaces an earlier result of the same case, size and master). The exit
status is 1 when a run failed or a check did not hold. Generated graphs are kept in
``--workdir`` and reused. Linux only (memory is read from ``/proc``).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.ladder import (  # noqa: E402
    machine_info,
    merge_results,
    non_finite_count,
    release,
    run_embed,
    set_statistics,
    shuffle_partitions,
    start_session,
)

log = logging.getLogger("sepne_spark.benchmarks.skew")

__all__ = ["star_graph", "giant_community_graph", "run_star", "run_giant", "main"]

DESCRIPTION = ("Skewed graphs (benchmarks/skew.py): a hub with many leaves embedded with IO, and one "
               "giant community partitioned with LP; stage times (s), peak RSS (MiB), set sizes, checks.")


def _write_info(root: str, info: dict[str, Any]) -> None:
    with open(os.path.join(root, "graph.json"), "w") as fh:
        json.dump(info, fh, indent=2)


def _read_info(root: str) -> dict[str, Any] | None:
    path = os.path.join(root, "graph.json")
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def star_graph(spark: SparkSession, workdir: str, leaves: int) -> tuple[str, dict[str, Any]]:
    """Write (once) the star-plus-ring graph: hub ``0``, leaves ``1 .. leaves``.

    Parameters
    ----------
    spark : SparkSession
        Session to generate with.
    workdir : str
        Benchmark work directory; the graph goes to ``WORKDIR/graphs/star-L<leaves>``.
    leaves : int
        Number of leaves, at least 3 (so the ring has no repeated edge).

    Returns
    -------
    (str, dict)
        The Parquet edge directory and the graph's description (nodes, edges).
    """
    from pyspark.sql import functions as F

    from sepne_spark.generators import write_edges

    if leaves < 3:
        raise ValueError(f"--leaves must be at least 3, got {leaves}")
    root = os.path.join(os.path.abspath(workdir), "graphs", f"star-L{leaves}")
    edges_path = os.path.join(root, "edges")
    info = _read_info(root)
    if info is not None:
        return edges_path, info
    os.makedirs(root, exist_ok=True)
    t = time.time()
    ids = spark.range(1, leaves + 1, 1, shuffle_partitions(leaves))
    star = ids.select(F.lit(0).cast("long").alias("src"), F.col("id").alias("dst"))
    ring = ids.select(F.col("id").alias("src"), (F.pmod(F.col("id"), F.lit(leaves)) + 1).alias("dst"))
    write_edges(star.unionByName(ring), edges_path, "parquet", overwrite=True)
    info = {"case": "star", "hub": 0, "leaves": leaves, "nodes": leaves + 1, "edges": 2 * leaves,
            "generate_s": round(time.time() - t, 2)}
    _write_info(root, info)
    return edges_path, info


def giant_community_graph(spark: SparkSession, workdir: str, nodes: int, giant_share: float, small: int,
                          avg_degree: float, mixing: float, seed: int) -> tuple[str, str, dict[str, Any]]:
    """Write (once) a block-model graph with one giant community and many small ones.

    Nodes ``0 .. G-1`` (``G = round(giant_share * nodes)``) form community 0; the others
    are cut into consecutive communities of ``small`` nodes (the last may be smaller).
    Edge ``e`` of ``nodes * avg_degree / 2`` picks its source uniformly; with probability
    ``1 - mixing`` its destination is uniform within the source's community, otherwise
    uniform over all nodes. The draws are seeded hashes of the edge index (independent
    of the partitioning); self-loops and repeated edges are dropped.

    Parameters
    ----------
    spark : SparkSession
        Session to generate with.
    workdir : str
        Benchmark work directory.
    nodes : int
        Number of nodes.
    giant_share : float
        Share of the nodes in the giant community, in (0, 1].
    small : int
        Size of the other communities.
    avg_degree : float
        Target mean degree.
    mixing : float
        Share of edges whose destination ignores the communities.
    seed : int
        Seed of the hashes.

    Returns
    -------
    (str, str, dict)
        Parquet edges, Parquet labels (``node, label``) and the graph's description.
    """
    from pyspark.sql import functions as F

    from sepne_spark.generators import write_edges, write_labels

    giant = int(round(giant_share * nodes))
    if not 1 <= giant <= nodes:
        raise ValueError(f"--giant-share {giant_share} leaves no giant community of {nodes} nodes")
    name = f"giant-n{nodes}-g{giant_share:g}-c{small}-deg{avg_degree:g}-m{mixing:g}-s{seed}"
    root = os.path.join(os.path.abspath(workdir), "graphs", name)
    edges_path, labels_path = os.path.join(root, "edges"), os.path.join(root, "labels")
    info = _read_info(root)
    if info is not None:
        return edges_path, labels_path, info
    os.makedirs(root, exist_ok=True)
    t = time.time()
    parts = shuffle_partitions(nodes)
    m = int(round(nodes * avg_degree / 2))

    def uniform(stream: int, n: Any) -> Any:
        return F.pmod(F.xxhash64(F.col("id"), F.lit(seed), F.lit(stream)), F.lit(n).cast("long"))

    def community(node: Any) -> Any:
        return F.when(node < giant, F.lit(0)).otherwise(F.floor((node - giant) / small) + 1).cast("long")

    src = uniform(0, nodes)
    intra = uniform(1, 1 << 30) < int((1.0 - mixing) * (1 << 30))
    c = community(src)
    start = F.when(c == 0, F.lit(0)).otherwise(giant + (c - 1) * small)
    size = F.when(c == 0, F.lit(giant)).otherwise(F.least(F.lit(small), nodes - start))
    h = F.xxhash64(F.col("id"), F.lit(seed), F.lit(2))
    dst = F.when(intra, start + F.pmod(h, size.cast("long"))).otherwise(F.pmod(h, F.lit(nodes).cast("long")))
    draws = spark.range(0, m, 1, parts).select(src.alias("s"), dst.alias("d")).where(F.col("s") != F.col("d"))
    edges = draws.select(F.least("s", "d").alias("src"), F.greatest("s", "d").alias("dst")).dropDuplicates()
    write_edges(edges, edges_path, "parquet", overwrite=True)
    labels = spark.range(0, nodes, 1, parts).select(F.col("id").alias("node"),
                                                    community(F.col("id")).cast("int").alias("label"))
    write_labels(labels, labels_path, "parquet", overwrite=True)
    written = spark.read.parquet(edges_path)
    info = {"case": "giant", "nodes": nodes, "giant_nodes": giant, "small_community": small,
            "communities": 1 + -(-(nodes - giant) // small), "avg_degree": avg_degree, "mixing": mixing,
            "seed": seed, "edges": written.count(), "generate_s": round(time.time() - t, 2)}
    _write_info(root, info)
    return edges_path, labels_path, info


def _embed_flags(ns: argparse.Namespace) -> list[str]:
    return ["--profile", "social", "--metric", "I+A", "--landmarks", str(ns.landmarks), "--dim", str(ns.dim),
            "--iters", str(ns.iters), "--lam", "50", "--eta", "1", "--set-size", str(ns.set_size),
            "--seed", str(ns.seed)]


def _base_record(case: str, size: int, ns: argparse.Namespace, graph: dict[str, Any]) -> dict[str, Any]:
    rec = {"case": case, "size": size, "master": ns.master, "graph": graph,
           "settings": {"metric": "I+A", "landmarks": ns.landmarks, "dim": ns.dim, "iters": ns.iters,
                        "lam": 50.0, "eta": 1.0, "set_size": ns.set_size},
           "measured_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    rec["key"] = f"{case}/size={size}/{ns.master}"
    return rec


def _finish(spark: SparkSession, rec: dict[str, Any], res: dict[str, Any], output: str, ns: argparse.Namespace) -> bool:
    """Copy a run's results into ``rec`` and run the common checks; True when it succeeded."""
    rec.update({k: res[k] for k in ("status", "argv", "total_s", "memory")})
    if res["status"] != "ok":
        rec.update(error=res["error"], traceback=res["traceback"], checks={"run succeeded": False})
        return False
    man = res["manifest"] or {}
    rec.update(timings_s={k: round(v, 3) for k, v in man.get("timings_s", {}).items()},
               counts=man.get("counts"), sets=man.get("sets"))
    rec["set_stats"] = set_statistics(spark, output, None, ns.landmarks, ns.dim, ns.iters, None)
    rec["non_finite_rows"] = non_finite_count(spark, output)
    rec["checks"] = {"run succeeded": True, "embeddings finite": rec["non_finite_rows"] == 0}
    return True


def run_star(spark: SparkSession, ns: argparse.Namespace) -> dict[str, Any]:
    """Case ``star``: fit on the hub-and-ring graph, embed the hub and ``--io-leaves`` leaves.

    Parameters
    ----------
    spark : SparkSession
        The benchmark's session.
    ns : argparse.Namespace
        Parsed command line.

    Returns
    -------
    dict
        The case's result record.
    """
    import numpy as np
    from pyspark.sql import functions as F

    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(ns.leaves)))
    edges, info = star_graph(spark, ns.workdir, ns.leaves)
    rec = _base_record("star", ns.leaves, ns, info)
    picked = np.random.default_rng(ns.seed).choice(ns.leaves, size=min(ns.io_leaves, ns.leaves), replace=False) + 1
    nodes_file = os.path.join(os.path.dirname(edges), f"io-hub-{len(picked)}-s{ns.seed}.txt")
    with open(nodes_file, "w") as fh:
        fh.write("0\n")
        fh.writelines(f"{int(i)}\n" for i in sorted(picked))
    rec["requested"] = 1 + len(picked)
    output = os.path.join(os.path.abspath(ns.workdir), "runs", f"skew-star-L{ns.leaves}")
    argv = ["--input", edges, "--output", output, "--overwrite", *_embed_flags(ns),
            "--partition", "IO", "--nodes", "@" + nodes_file, "--propagation", "1", "--refine-steps", "0"]
    res = run_embed(spark, argv, output)
    if _finish(spark, rec, res, output, ns):
        out = spark.read.parquet(output)
        hub = out.where(F.col("id") == 0).select("is_landmark").collect()
        rec["hub_is_landmark"] = bool(hub[0]["is_landmark"]) if hub else None
        rec["checks"]["one row per requested node"] = (rec["counts"] or {}).get("output_rows") == rec["requested"]
        rec["checks"]["hub embedded"] = len(hub) == 1
    if not ns.keep_outputs:
        shutil.rmtree(output, ignore_errors=True)
    release(spark)
    return rec


def run_giant(spark: SparkSession, ns: argparse.Namespace) -> dict[str, Any]:
    """Case ``giant``: LP partition of a graph with one giant community; sets stay bounded.

    Parameters
    ----------
    spark : SparkSession
        The benchmark's session.
    ns : argparse.Namespace
        Parsed command line.

    Returns
    -------
    dict
        The case's result record.
    """
    from pyspark.sql import functions as F

    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(ns.nodes)))
    edges, labels, info = giant_community_graph(spark, ns.workdir, ns.nodes, ns.giant_share, ns.small_community,
                                                ns.avg_degree, ns.mixing, ns.seed)
    rec = _base_record("giant", ns.nodes, ns, info)
    output = os.path.join(os.path.abspath(ns.workdir), "runs", f"skew-giant-n{ns.nodes}")
    argv = ["--input", edges, "--output", output, "--overwrite", *_embed_flags(ns), "--partition", "LP"]
    res = run_embed(spark, argv, output)
    if _finish(spark, rec, res, output, ns):
        st = rec["set_stats"]
        out = spark.read.parquet(output)
        rec["giant_sets"] = (out.where((F.col("id") < info["giant_nodes"]) & (F.col("set_id") >= 0))
                             .select("set_id").distinct().count())
        rec["checks"]["one row per node"] = (rec["counts"] or {}).get("output_rows") == \
            (rec["counts"] or {}).get("input_nodes")
        rec["checks"]["largest set <= set size"] = st.get("set_size_max", 0) <= ns.set_size
    if not ns.keep_outputs:
        shutil.rmtree(output, ignore_errors=True)
    release(spark)
    return rec


COLUMNS = ("case", "nodes", "edge rows", "k", "d", "part", "sets", "max set", "output rows", "non-finite",
           "zero emb", "read", "fit", "partition", "prox rows", "solve+write", "total s", "JVM MB",
           "py sum MB", "py max MB", "checks")


def markdown_header() -> str:
    """The header and rule of the Markdown results table."""
    return "| " + " | ".join(COLUMNS) + " |\n|" + "|".join("---" for _ in COLUMNS) + "|"


def markdown_row(rec: dict[str, Any]) -> str:
    """One case as a row of the Markdown table."""
    counts, t, mem = rec.get("counts") or {}, rec.get("timings_s") or {}, rec.get("memory") or {}
    st, sets = rec.get("set_stats") or {}, rec.get("sets") or {}
    failed = [name for name, ok in (rec.get("checks") or {}).items() if not ok]
    checks = "all pass" if not failed else "FAILED: " + ", ".join(failed)
    if rec.get("status") != "ok":
        checks = f"FAILED: {rec.get('error', '')[:160]}".replace("|", "/")

    def f(v: Any, fmt: str = "{:.1f}") -> str:
        return "" if v is None else fmt.format(v)

    cells = [rec["case"], str(counts.get("input_nodes", rec["graph"].get("nodes", ""))),
             str(counts.get("input_edge_rows", "")), str(rec["settings"]["landmarks"]), str(rec["settings"]["dim"]),
             str(sets.get("setup", "")), str(sets.get("sets", "")), str(st.get("set_size_max", "")),
             str(counts.get("output_rows", "")), str(rec.get("non_finite_rows", "")),
             str(counts.get("zero_embeddings", "")),
             *[f(t.get(s)) for s in ("read", "fit", "partition", "proximity_rows", "solve_write")],
             f(rec.get("total_s")), f(mem.get("driver_jvm_peak_mb"), "{:.0f}"),
             f(mem.get("python_workers_sum_peak_mb"), "{:.0f}"), f(mem.get("python_workers_max_peak_mb"), "{:.0f}"),
             checks]
    return "| " + " | ".join(cells) + " |"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``--help`` lists the options and their defaults)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--cases", nargs="+", choices=("star", "giant"), default=["star", "giant"])
    p.add_argument("--leaves", type=int, default=1_000_000, help="star: leaves of the hub")
    p.add_argument("--io-leaves", type=int, default=1_000, help="star: leaves embedded with the hub")
    p.add_argument("--nodes", type=int, default=200_000, help="giant: nodes of the graph")
    p.add_argument("--giant-share", type=float, default=0.9, help="giant: share of nodes in the giant community")
    p.add_argument("--small-community", type=int, default=100, help="giant: size of the other communities")
    p.add_argument("--avg-degree", type=float, default=20.0, help="giant: mean degree")
    p.add_argument("--mixing", type=float, default=0.1, help="giant: share of edges placed at random")
    p.add_argument("--landmarks", type=int, default=200, help="landmarks k")
    p.add_argument("--dim", type=int, default=32, help="embedding dimension d")
    p.add_argument("--iters", type=int, default=5, help="rounds per set")
    p.add_argument("--set-size", type=int, default=2000, help="nodes per set")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workdir", default="/tmp/sepne-bench", help="generated graphs and run outputs")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "skew.json"),
                   help="JSON results file (merged into)")
    p.add_argument("--master", default="local[2]", help="Spark master")
    p.add_argument("--driver-memory", default="8g", help="spark.driver.memory")
    p.add_argument("--keep-outputs", action="store_true", help="keep the embeddings in the workdir")
    p.add_argument("--quiet", action="store_true", help="only warnings from the job's log")
    return p.parse_args(None if argv is None else list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cases; returns 0 when every run succeeded and every check held, else 1."""
    ns = parse_args(argv)
    from sepne_spark.jobs.common import setup_logging

    setup_logging(logging.WARNING if ns.quiet else logging.INFO)
    started = time.time()
    spark = start_session(ns.master, ns.driver_memory)
    machine = machine_info()
    print(f"{machine['cpu']}, Spark {spark.version}, {ns.master}", flush=True)
    print(markdown_header(), flush=True)
    runners = {"star": run_star, "giant": run_giant}
    records = []
    for case in ns.cases:
        try:
            rec = runners[case](spark, ns)
        except Exception as exc:  # noqa: BLE001 - graph generation or a check's query failed
            rec = {"case": case, "size": ns.leaves if case == "star" else ns.nodes, "master": ns.master,
                   "graph": {}, "settings": {"landmarks": ns.landmarks, "dim": ns.dim}, "status": "failed",
                   "error": f"{type(exc).__name__}: {str(exc).strip()[:300]}", "checks": {"run succeeded": False}}
            rec["key"] = f"{case}/size={rec['size']}/{ns.master}"
        rec["machine"] = machine
        records.append(rec)
        print(markdown_row(rec), flush=True)
        merge_results(ns.out, [rec], DESCRIPTION)
    bad = [r["case"] for r in records if r.get("status") != "ok" or not all((r.get("checks") or {}).values())]
    print(f"{len(records)} cases in {time.time() - started:.0f} s; "
          f"{'all checks pass' if not bad else 'FAILED: ' + ', '.join(bad)}; results in {ns.out}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
