"""Scale ladder: time, memory, quality and solve throughput of the embedding job by graph size.

    .venv/bin/python benchmarks/ladder.py --sizes 1e4 1e5 1e6 --models sbm rmat \\
        --configs social-k200 social-k1000 --partitions RP LP IO --master 'local[2]'

For every graph size, graph model, configuration and partition setup it runs
``jobs/embed.py``'s ``main`` in one Spark session kept for the whole ladder (driver memory
8g; ``spark.sql.shuffle.partitions`` set per run to ``max(8, nodes / 25000)``), and
records, per run:

* the wall time of each stage from the job's ``_manifest.json`` (``read``, ``fit`` =
  ``landmarks`` + ``summaries_svd``, ``partition``, ``proximity_rows``, ``solve_write``)
  and the wall time of the whole call (``total_s``);
* the counts of the manifest and the sets (number, nodes, smallest and largest set);
* peak resident memory of the driver JVM and of the PySpark Python workers (sum and
  largest), sampled every 0.5 s by :class:`benchmarks.memory.PeakRSSSampler` (the JVM
  rarely returns heap to the system, so a run's figure includes what earlier runs of
  the same session made it grow to);
* for block-model graphs, micro-F1 of one-vs-rest logistic regression predicting the
  planted community from the embedding at 10% and 50% training (3 splits), on at most
  ``--f1-max-nodes`` (20,000) embedded nodes chosen by a seeded hash;
* the solve stage's achieved GFLOP/s: the sum over sets of
  :func:`sepne_spark.solver.solve_flops` ``(k, d, n_i, nnz_ii, iters)`` divided by the
  ``solve_write`` seconds. ``n_i`` is the set's size in the output and ``nnz_ii`` the
  exact number of non-zeros of its block of ``M = I + A``: ``n_i`` (the identity) plus
  twice the undirected input edges with both ends in the set (both directions of ``A``),
  counted with Spark after the run (for the ``A + A^2`` metric only the set sizes are
  given). ``solve_write`` also writes the Parquet output and reads it back for two
  counts, so this is a lower bound of the solver's own rate;
* next to it, the machine's NumPy float64 GEMM rate, measured once per invocation in the
  driver (:func:`benchmarks.solver_bench.gemm_rate`, 2000 x 2000) with as many BLAS
  threads as each Spark task gets (``spark.executorEnv.OPENBLAS_NUM_THREADS``, 1 by
  default), times the number of task slots (``defaultParallelism``, 2 for ``local[2]``).

Graphs are generated once into ``--workdir`` (Parquet, by
:mod:`sepne_spark.generators`) and reused by later runs and invocations:

* ``sbm``: ``nodes`` nodes, ``--communities`` planted communities (node ``i`` in
  community ``i mod C``), mean degree ``--avg-degree``, ``--mixing``;
* ``rmat``: ``2**ceil(log2(nodes))`` node ids, ``2**scale * avg_degree / 2`` edges drawn
  (Graph500 quadrant probabilities); nodes without edges are absent, so a graph has fewer
  nodes, of higher mean degree, than its size says (the manifest's counts say how many).

``IO`` runs fit on the whole graph and embed ``--io-nodes`` (10,000) requested nodes,
a seeded sample of the graph's ids written one per line to a file passed as
``--nodes @FILE``. ``IOM`` embeds the same nodes with a model fitted once beforehand:
an untimed ``IO`` run saves it (``--save-model``) and the timed run loads it
(``--model``), so it measures what a later request for those nodes costs. A configuration ``PROFILE-kK`` (optionally ``-dD``) runs profile
``PROFILE`` with ``--landmarks K`` (and ``--dim D``); ``social`` is I+A, d=128, lambda 50,
eta 1, 5 rounds, 2000 nodes per set.

The Spark-native peer runs in the same session, on the same graphs: configurations
``graphframes-word2vec`` and ``graphframes-hash2vec`` (optionally ``-dD``, default d =
128) embed the graph with GraphFrames' ``RandomWalkEmbeddings``
(:func:`sepne_spark.baselines.random_walk_embeddings`: random walks with restart, 5
per node of 5 x 10 steps, then Spark ML Word2Vec, window 5, one epoch, on
``--peer-word2vec-partitions`` partitions, or GraphFrames' Hash2Vec) and write
``id, embedding`` to Parquet. They run once per graph (partition ``-``) and report the
whole call's wall time, peak memory and micro-F1 like the SepNE runs; after them the
ratio of each peer's time to each SepNE run's on the same graph is printed. A run that
takes longer than ``--run-timeout`` seconds is cancelled (all its Spark jobs) and
recorded as failed with how far it got (for the peer: the walk batches written).

A Markdown table row is printed per run, then the ratio of total times between
consecutive sizes of each (model, configuration, partition), e.g. ``time(10^6) /
time(10^5)``; for ``IO`` also that of the embedding stages alone (``partition`` +
``proximity_rows`` + ``solve_write``, which should not grow with the graph). Results are
merged into ``--out`` (JSON; a run replaces the earlier result with the same model, size,
degree, configuration, partition and master). A failed run is recorded with its error and
the ladder goes on; the exit status is then 1. The job's own report and log go to
stderr, the table to stdout. Linux only (memory is read from ``/proc``).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.memory import PeakRSSSampler  # noqa: E402
from benchmarks.solver_bench import gemm_rate  # noqa: E402

log = logging.getLogger("sepne_spark.benchmarks.ladder")

__all__ = [
    "Config",
    "GraphPaths",
    "parse_config",
    "shuffle_partitions",
    "start_session",
    "measure_gemm",
    "ensure_graph",
    "ensure_io_nodes",
    "run_embed",
    "set_statistics",
    "planted_f1",
    "non_finite_count",
    "merge_results",
    "run_peer",
    "peer_ratios",
    "main",
]

PEERS = {"graphframes-word2vec": "word2vec", "graphframes-hash2vec": "hash2vec"}
STAGES = ("read", "fit", "landmarks", "summaries_svd", "partition", "proximity_rows", "solve_write")
EMBED_STAGES = ("partition", "proximity_rows", "solve_write")


# --------------------------------------------------------------------------- helpers


def _size(text: str) -> int:
    """A node count written as ``10000``, ``1e4`` or ``1_000_000``."""
    value = float(text.replace("_", ""))
    if value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"not a positive whole number of nodes: {text!r}")
    return int(value)


@dataclass(frozen=True)
class Config:
    """One embedding configuration: a profile with optional landmark/dimension overrides.

    Attributes
    ----------
    name : str
        As given on the command line (``social-k200``).
    profile : str
        Profile name or path passed to ``--profile``.
    landmarks : int or None
        ``--landmarks``, when given.
    dim : int or None
        ``--dim``, when given.
    """

    name: str
    profile: str
    landmarks: int | None = None
    dim: int | None = None

    def flags(self) -> list[str]:
        """The ``embed.py`` flags of this configuration."""
        out = ["--profile", self.profile]
        if self.landmarks is not None:
            out += ["--landmarks", str(self.landmarks)]
        if self.dim is not None:
            out += ["--dim", str(self.dim)]
        return out


def is_peer(cfg: Config) -> bool:
    """Whether ``cfg`` is the GraphFrames peer rather than a SepNE profile."""
    return cfg.profile in PEERS


_CONFIG = re.compile(r"^(?P<profile>.+?)(?:-k(?P<k>\d+))?(?:-d(?P<d>\d+))?$")


def parse_config(text: str) -> Config:
    """Parse ``PROFILE[-kK][-dD]`` (e.g. ``social-k1000``) into a :class:`Config`.

    Parameters
    ----------
    text : str
        The configuration name.

    Returns
    -------
    Config
    """
    m = _CONFIG.match(text)
    if not m:  # pragma: no cover - the pattern matches any non-empty string
        raise argparse.ArgumentTypeError(f"bad configuration {text!r}")
    k, d = m.group("k"), m.group("d")
    return Config(text, m.group("profile"), int(k) if k else None, int(d) if d else None)


def shuffle_partitions(nodes: int) -> int:
    """``spark.sql.shuffle.partitions`` for a graph of ``nodes`` nodes: ``max(8, nodes / 25000)``."""
    return max(8, int(nodes) // 25_000)


def start_session(master: str, driver_memory: str = "8g", conf: dict[str, str] | None = None) -> SparkSession:
    """The SparkSession for a whole benchmark (built once; an active one is reused).

    Parameters
    ----------
    master : str
        Master URL, e.g. ``local[2]``.
    driver_memory : str, default "8g"
        ``spark.driver.memory`` (only effective when the JVM is started here).
    conf : dict, optional
        Further Spark settings.

    Returns
    -------
    SparkSession
    """
    from sepne_spark.session import get_spark

    settings = {"spark.driver.memory": driver_memory, "spark.sql.shuffle.partitions": "8"}
    settings.update(conf or {})
    spark = get_spark("sepne-benchmark", master=master, conf=settings)
    spark.sparkContext.setLogLevel("WARN")
    return spark


def measure_gemm(spark: SparkSession) -> dict[str, Any]:
    """NumPy float64 GEMM rate of one Spark task and of all task slots together.

    The driver's BLAS is limited (with :mod:`threadpoolctl`) to the thread count the
    executors get from ``spark.executorEnv.OPENBLAS_NUM_THREADS`` (1 when unset), the
    rate is measured with :func:`benchmarks.solver_bench.gemm_rate` and multiplied by
    ``defaultParallelism``.

    Parameters
    ----------
    spark : SparkSession
        The session whose task slots are counted.

    Returns
    -------
    dict
        ``blas_threads_per_task``, ``task_slots``, ``gemm_gflops_per_task`` and
        ``gemm_gflops`` (all slots).
    """
    import numpy as np
    from threadpoolctl import threadpool_limits

    conf = spark.sparkContext.getConf()
    threads = int(conf.get("spark.executorEnv.OPENBLAS_NUM_THREADS", "1") or 1)
    slots = int(spark.sparkContext.defaultParallelism)
    with threadpool_limits(limits=threads, user_api="blas"):
        per_task = gemm_rate(2000, np.float64, 3)
    return {
        "blas_threads_per_task": threads,
        "task_slots": slots,
        "gemm_gflops_per_task": round(per_task, 2),
        "gemm_gflops": round(per_task * slots, 2),
    }


def machine_info() -> dict[str, Any]:
    """CPU model, logical CPUs, memory, Python and the checkout's commit (when known)."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gb = None
    try:
        with open("/proc/meminfo") as fh:
            mem_gb = round(int(fh.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "memory_gb": mem_gb,
            "python": platform.python_version(), "commit": commit}


# --------------------------------------------------------------------------- graphs


@dataclass(frozen=True)
class GraphPaths:
    """Where a generated graph lives.

    Attributes
    ----------
    name : str
        ``sbm-n10000-deg12-s0`` and the like.
    root : str
        Its folder in the work directory.
    edges : str
        Parquet edges ``src long, dst long`` (undirected, ``src < dst``).
    labels : str or None
        Parquet ``node long, label int`` (block model only).
    info : dict
        Generation parameters, edge rows, node count and seconds taken.
    """

    name: str
    root: str
    edges: str
    labels: str | None
    info: dict


def ensure_graph(spark: SparkSession, workdir: str, model: str, nodes: int, avg_degree: float, seed: int,
                 communities: int = 10, mixing: float = 0.1) -> GraphPaths:
    """Generate a graph into ``workdir`` unless it is already there; return its paths.

    Parameters
    ----------
    spark : SparkSession
        Session to generate with.
    workdir : str
        Benchmark work directory; the graph goes to ``WORKDIR/graphs/NAME``.
    model : {"sbm", "rmat"}
        Graph model.
    nodes : int
        Nodes (``sbm``) or the lower bound of ``2**scale`` (``rmat``).
    avg_degree : float
        Mean degree (``sbm``); ``rmat`` draws ``2**scale * avg_degree / 2`` edges.
    seed : int
        Generator seed.
    communities : int, default 10
        Planted communities (``sbm``).
    mixing : float, default 0.1
        Share of edges placed at random (``sbm``).

    Returns
    -------
    GraphPaths
    """
    from pyspark.sql import functions as F

    from sepne_spark.generators import rmat_graph, sbm_graph, write_edges, write_labels

    deg = f"{avg_degree:g}"
    name = f"{model}-n{nodes}-deg{deg}-s{seed}" + (f"-c{communities}-m{mixing:g}" if model == "sbm" else "")
    root = os.path.join(os.path.abspath(workdir), "graphs", name)
    edges_path, labels_path = os.path.join(root, "edges"), os.path.join(root, "labels")
    info_path = os.path.join(root, "graph.json")
    if os.path.exists(info_path):
        with open(info_path) as fh:
            info = json.load(fh)
        return GraphPaths(name, root, edges_path, labels_path if model == "sbm" else None, info)
    os.makedirs(root, exist_ok=True)
    parts = shuffle_partitions(nodes)
    t = time.time()
    if model == "sbm":
        edges, labels = sbm_graph(spark, nodes, communities, avg_degree, mixing, seed, partitions=parts)
        write_labels(labels, labels_path, "parquet", overwrite=True)
        params = {"model": "sbm", "nodes": nodes, "communities": communities, "avg_degree": avg_degree,
                  "mixing": mixing, "seed": seed}
    elif model == "rmat":
        scale = max(1, math.ceil(math.log2(nodes)))
        drawn = int(round((1 << scale) * avg_degree / 2))
        edges = rmat_graph(spark, scale, drawn, seed=seed, partitions=parts)
        labels_path = None
        params = {"model": "rmat", "scale": scale, "edges_drawn": drawn, "avg_degree": avg_degree, "seed": seed}
    else:
        raise ValueError(f"unknown graph model {model!r}")
    write_edges(edges, edges_path, "parquet", overwrite=True)
    written = spark.read.parquet(edges_path)
    edge_rows = written.count()
    present = (written.select(F.col("src").alias("id"))
               .unionByName(written.select(F.col("dst").alias("id"))).distinct().count())
    info = {**params, "edges": edge_rows, "nodes_with_edges": present,
            "mean_degree": round(2 * edge_rows / max(present, 1), 3),
            "generate_s": round(time.time() - t, 2)}
    with open(info_path, "w") as fh:
        json.dump(info, fh, indent=2)
    log.info("generated %s: %d nodes with edges, %d edges (%.1f s)", name, present, edge_rows, info["generate_s"])
    return GraphPaths(name, root, edges_path, labels_path, info)


def ensure_io_nodes(spark: SparkSession, graph: GraphPaths, count: int, seed: int) -> tuple[str, int]:
    """A file of ``count`` node ids of ``graph`` (one per line), chosen by a seeded hash.

    Parameters
    ----------
    spark : SparkSession
        Session to read the edges with.
    graph : GraphPaths
        The graph.
    count : int
        Ids wanted (all nodes when the graph has fewer).
    seed : int
        Seed of the hash that orders the ids.

    Returns
    -------
    (str, int)
        The file's path and the number of ids in it.
    """
    from pyspark.sql import functions as F

    path = os.path.join(graph.root, f"io-nodes-{count}-s{seed}.txt")
    if os.path.exists(path):
        with open(path) as fh:
            return path, sum(1 for line in fh if line.strip())
    e = spark.read.parquet(graph.edges)
    ids = e.select(F.col("src").alias("id")).unionByName(e.select(F.col("dst").alias("id"))).distinct()
    rows = ids.orderBy(F.xxhash64("id", F.lit(seed)), "id").limit(count).collect()
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.writelines(f"{r['id']}\n" for r in rows)
    os.replace(tmp, path)
    return path, len(rows)


# --------------------------------------------------------------------------- one run


def load_embed_job() -> ModuleType:
    """``jobs/embed.py`` of this checkout, imported as a module."""
    spec = importlib.util.spec_from_file_location("sepne_jobs_embed", ROOT / "jobs" / "embed.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def run_embed(spark: SparkSession, argv: Sequence[str], output: str, interval: float = 0.5) -> dict[str, Any]:
    """Run ``jobs/embed.py``'s ``main(spark, argv)`` with memory sampling; never raises.

    Parameters
    ----------
    spark : SparkSession
        The benchmark's session.
    argv : sequence of str
        Arguments of the job; must write to ``output``.
    output : str
        The job's ``--output``; its ``_manifest.json`` is read afterwards.
    interval : float, default 0.5
        Memory sampling interval in seconds.

    Returns
    -------
    dict
        ``status`` (``ok`` or ``failed``), ``total_s`` (wall time of the call),
        ``memory`` (:meth:`PeakRSSSampler.result`), ``manifest`` (or None) and, for a
        failure, ``error`` and ``traceback`` (its last lines).
    """
    from sepne_spark.errors import UserError

    job = load_embed_job()
    sampler = PeakRSSSampler(interval).start()
    t = time.time()
    out: dict[str, Any] = {"status": "ok", "argv": list(argv)}
    try:
        with contextlib.redirect_stdout(sys.stderr):  # keep stdout for the results table
            rc = job.main(spark, list(argv))
        if rc:
            raise RuntimeError(f"embed job returned exit status {rc}")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - record and go on
        out["status"] = "failed"
        kind = "UserError" if isinstance(exc, UserError) else type(exc).__name__
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        out["error"] = f"{kind}: {first}"[:500]
        out["traceback"] = traceback.format_exc().splitlines()[-12:]
    finally:
        out["total_s"] = round(time.time() - t, 3)
        out["memory"] = sampler.stop()
    manifest = os.path.join(output, "_manifest.json")
    out["manifest"] = None
    if out["status"] == "ok" and os.path.exists(manifest):
        with open(manifest) as fh:
            out["manifest"] = json.load(fh)
    return out


class RunTimeout:
    """Cancel every Spark job of the session when a run exceeds ``seconds`` (0: never)."""

    def __init__(self, spark: SparkSession, seconds: float) -> None:
        self.spark, self.seconds, self.fired = spark, seconds, False
        self._timer: Any = None

    def __enter__(self) -> "RunTimeout":
        import threading

        if self.seconds > 0:
            self._timer = threading.Timer(self.seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _fire(self) -> None:
        self.fired = True
        log.warning("run exceeded %.0f s: cancelling its Spark jobs", self.seconds)
        try:
            self.spark.sparkContext.cancelAllJobs()
        except Exception:  # noqa: BLE001 - best effort
            log.exception("could not cancel the jobs")

    def __exit__(self, *exc: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()


class WalkBatchWatcher:
    """Record the walk batch folders GraphFrames writes while a run goes on.

    GraphFrames 0.11 writes batch i of the walks to ``PREFIX/<run id>_batch_<i>``
    (``RandomWalkBase``) and, with clean-up after the run, deletes them once the walks
    are merged and materialised, before the sequence model trains: a look at the folder
    after a failure cannot tell "no batch yet" from "walks complete", a watcher can.
    """

    def __init__(self, prefix: str, interval: float = 1.0) -> None:
        import threading

        self.prefix, self.interval, self.seen = prefix, interval, set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.look()
            self._stop.wait(self.interval)

    def look(self) -> set[str]:
        """The batch folders present now, also added to :attr:`seen`."""
        now: set[str] = set()
        with contextlib.suppress(OSError):
            now = {p.name for p in Path(self.prefix).glob("*_batch_*") if p.is_dir()}
        self.seen |= now
        return now

    def start(self) -> "WalkBatchWatcher":
        self._thread.start()
        return self

    def stop(self) -> str:
        """Stop watching; a line saying which batches were written and which are left."""
        self._stop.set()
        self._thread.join()
        now = self.look()
        batches = sorted(n.rsplit("_batch_", 1)[1] for n in self.seen)
        return (f"{len(self.seen)} walk batch folders written during the run (batches {', '.join(batches) or 'none'}), "
                f"{len(now)} still there (GraphFrames removes them once the walks are materialised)")


def run_peer(spark: SparkSession, mode: str, edges_path: str, output: str, dim: int, seed: int,
             word2vec_partitions: int, timeout_s: float = 0.0, interval: float = 0.5) -> dict[str, Any]:
    """Embed with GraphFrames' ``RandomWalkEmbeddings`` and write ``id, embedding``; never raises.

    Parameters
    ----------
    spark : SparkSession
        The benchmark's session (the GraphFrames JARs must be on it).
    mode : {"word2vec", "hash2vec"}
        Sequence model.
    edges_path : str
        Parquet edges ``src, dst`` (undirected, each edge once; walks ignore direction).
    output : str
        Where the embeddings go (Parquet, overwritten).
    dim : int
        Embedding dimension (Hash2Vec adds GraphFrames' norm channel: ``dim + 1``).
    seed : int
        Seed of the walks and the sequence model.
    word2vec_partitions : int
        Spark ML Word2Vec ``numPartitions``.
    timeout_s : float, default 0
        Cancel the run's Spark jobs after this many seconds (0: no limit).
    interval : float, default 0.5
        Memory sampling interval in seconds.

    Returns
    -------
    dict
        As :func:`run_embed`, without a manifest; ``timings_s`` has ``total`` and, for a
        failure, ``progress`` says how many walk batches were written.
    """
    from sepne_spark.baselines import random_walk_embeddings

    walks = output + "-walks"
    shutil.rmtree(walks, ignore_errors=True)
    sampler = PeakRSSSampler(interval).start()
    watcher = WalkBatchWatcher(walks).start()
    t = time.time()
    out: dict[str, Any] = {"status": "ok", "argv": [f"random_walk_embeddings(mode={mode!r}, dim={dim}, seed={seed}, "
                                                    f"word2vec_partitions={word2vec_partitions})"]}
    emb = None
    guard = RunTimeout(spark, timeout_s)
    try:
        with guard:
            edges = spark.read.parquet(edges_path).select("src", "dst")
            emb = random_walk_embeddings(spark, edges, dim=dim, mode=mode, seed=seed,
                                         word2vec_partitions=word2vec_partitions, temporary_prefix=walks)
            emb.write.mode("overwrite").parquet(output)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - record and go on
        out["status"] = "failed"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        out["error"] = (f"cancelled after {timeout_s:.0f} s (--run-timeout); " if guard.fired else "") + \
            f"{type(exc).__name__}: {first}"[:400]
        out["traceback"] = traceback.format_exc().splitlines()[-12:]
    finally:
        out["total_s"] = round(time.time() - t, 3)
        progress = watcher.stop()
        if out["status"] == "failed":
            out["progress"] = progress
        out["memory"] = sampler.stop()
        if emb is not None:
            emb.unpersist()
        shutil.rmtree(walks, ignore_errors=True)
    return out


def set_statistics(spark: SparkSession, output: str, edges_path: str | None, k: int, d: int, iters: int,
                   solve_seconds: float | None, directed: bool = False) -> dict[str, Any]:
    """Set sizes of an embedding output and, with the edges, the solve's flop count.

    Parameters
    ----------
    spark : SparkSession
        Session to read with.
    output : str
        Embedding output (Parquet with ``id`` and ``set_id``; ``-1`` marks landmarks).
    edges_path : str or None
        Parquet input edges ``src, dst`` for the exact within-set non-zeros; without it
        only the set sizes are given.
    k, d, iters : int
        Landmarks, dimension and rounds of the run.
    solve_seconds : float or None
        Seconds of the ``solve_write`` stage, for the achieved rate.
    directed : bool, default False
        Whether the graph was embedded as directed (each edge row one non-zero of ``A``);
        undirected edges give two.

    Returns
    -------
    dict
        ``sets``, ``set_nodes``, ``set_size_min``, ``set_size_max``, ``set_size_mean``
        and with ``edges_path``: ``nnz_ii`` (summed), ``avg_nnz_per_row_within_set``,
        ``nnz_ii_method``, ``flops`` and ``gflops``.
    """
    from pyspark.sql import functions as F

    from sepne_spark.solver import solve_flops

    assign = spark.read.parquet(output).where(F.col("set_id") >= 0).select("id", "set_id")
    sizes = {r["set_id"]: r["count"] for r in assign.groupBy("set_id").count().collect()}
    if not sizes:
        return {"sets": 0, "set_nodes": 0}
    n = list(sizes.values())
    stats: dict[str, Any] = {"sets": len(n), "set_nodes": sum(n), "set_size_min": min(n),
                             "set_size_max": max(n), "set_size_mean": round(sum(n) / len(n), 1)}
    if edges_path is None:
        return stats
    edges = spark.read.parquet(edges_path).select("src", "dst").where(F.col("src") != F.col("dst"))
    a = assign.select(F.col("id").alias("src"), F.col("set_id").alias("s1"))
    b = assign.select(F.col("id").alias("dst"), F.col("set_id").alias("s2"))
    within = {r["s1"]: r["count"] for r in
              edges.join(a, "src").join(b, "dst").where(F.col("s1") == F.col("s2")).groupBy("s1").count().collect()}
    per_edge = 1 if directed else 2
    nnz = {s: n_i + per_edge * within.get(s, 0) for s, n_i in sizes.items()}
    flops = sum(solve_flops(k, d, sizes[s], nnz[s], iters) for s in sizes)
    stats.update({
        "nnz_ii": sum(nnz.values()),
        "avg_nnz_per_row_within_set": round(sum(nnz.values()) / stats["set_nodes"], 3),
        "nnz_ii_method": f"exact: n_i + {per_edge} x input edges inside the set (M = I + A)",
        "flops": flops,
        "gflops": round(flops / solve_seconds / 1e9, 3) if solve_seconds else None,
    })
    return stats


def planted_f1(spark: SparkSession, output: str, labels_path: str, max_nodes: int, seed: int,
               ratios: Sequence[float] = (0.1, 0.5), n_splits: int = 3) -> dict[str, Any]:
    """Micro-F1 of predicting planted labels from embeddings, on a seeded sample of nodes.

    Parameters
    ----------
    spark : SparkSession
        Session to read with.
    output : str
        Embedding output (Parquet ``id, embedding``).
    labels_path : str
        Parquet ``node, label``.
    max_nodes : int
        At most this many embedded nodes (the first by a seeded hash of the id).
    seed : int
        Seed of the sample and of the splits.
    ratios : sequence of float, default (0.1, 0.5)
        Training fractions.
    n_splits : int, default 3
        Random splits per fraction.

    Returns
    -------
    dict
        ``nodes`` used, ``seconds`` taken and ``micro_f1`` / ``macro_f1`` per ratio
        (keys ``"0.1"`` ...).
    """
    import numpy as np
    from pyspark.sql import functions as F

    from sepne_spark.evaluation import node_classification

    t = time.time()
    emb = spark.read.parquet(output).select("id", "embedding")
    emb = emb.orderBy(F.xxhash64("id", F.lit(seed)), "id").limit(max_nodes)
    lab = spark.read.parquet(labels_path).select(F.col("node").alias("id"), "label")
    pdf = emb.join(lab, "id").toPandas()
    X = np.vstack(pdf["embedding"].to_numpy()) if len(pdf) else np.zeros((0, 1))
    res = node_classification(X, [[v] for v in pdf["label"]], train_ratios=tuple(ratios),
                              n_splits=n_splits, seed=seed)
    return {
        "nodes": int(len(pdf)),
        "n_splits": n_splits,
        "micro_f1": {f"{r:g}": round(v["micro_f1_mean"], 4) for r, v in sorted(res["results"].items())},
        "macro_f1": {f"{r:g}": round(v["macro_f1_mean"], 4) for r, v in sorted(res["results"].items())},
        "seconds": round(time.time() - t, 2),
    }


def non_finite_count(spark: SparkSession, output: str) -> int:
    """Number of output rows whose embedding holds a NaN or an infinity."""
    from pyspark.sql import functions as F

    inf = float("inf")
    bad = F.exists("embedding", lambda x: F.isnan(x) | (x == F.lit(inf)) | (x == F.lit(-inf)) | x.isNull())
    return spark.read.parquet(output).where(bad).count()


def release(spark: SparkSession) -> None:
    """Drop cached and checkpointed data of the finished run (unpersist everything)."""
    try:
        spark.catalog.clearCache()
        spark.sparkContext._jvm.System.gc()  # frees local checkpoints no longer referenced
    except Exception:  # noqa: BLE001 - best effort
        pass


# --------------------------------------------------------------------------- results


def run_key(rec: dict[str, Any]) -> str:
    """Identity of a run in the results file (model, size, degree, configuration, partition, master)."""
    return (f"{rec['model']}/n={rec['nodes_requested']}/deg={rec['avg_degree']:g}/"
            f"{rec['config']}/{rec['partition']}/{rec['master']}")


def merge_results(path: str, records: Iterable[dict[str, Any]], description: str) -> dict[str, Any]:
    """Merge ``records`` into the JSON results file at ``path`` (replacing equal keys).

    Parameters
    ----------
    path : str
        JSON file ``{"description": ..., "runs": [...]}``; created when missing.
    records : iterable of dict
        Runs, each with a ``key``.
    description : str
        What the file holds.

    Returns
    -------
    dict
        The merged document, as written.
    """
    doc: dict[str, Any] = {"description": description, "runs": []}
    if os.path.exists(path):
        with open(path) as fh:
            doc = json.load(fh)
    runs = {r["key"]: r for r in doc.get("runs", [])}
    for rec in records:
        runs[rec["key"]] = rec
    doc["description"] = description
    doc["runs"] = list(runs.values())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=2, default=str)
        fh.write("\n")
    os.replace(tmp, path)
    return doc


COLUMNS = ("model", "nodes", "edge rows", "config", "part", "sets", "max set", "read", "fit",
           "landmarks", "svd", "partition", "prox rows", "solve+write", "total s", "JVM MB",
           "py sum MB", "py max MB", "F1@10%", "F1@50%", "solve GF/s", "GEMM GF/s")


def markdown_header() -> str:
    """The header and rule of the Markdown results table."""
    return "| " + " | ".join(COLUMNS) + " |\n|" + "|".join("---" for _ in COLUMNS) + "|"


def _f(value: Any, fmt: str = "{:.1f}") -> str:
    return "" if value is None else fmt.format(value)


def markdown_row(rec: dict[str, Any]) -> str:
    """One run as a row of the Markdown table (a failed run shows its error)."""
    counts = rec.get("counts") or {}
    head = [rec["model"], str(counts.get("input_nodes", rec["nodes_requested"])),
            str(counts.get("input_edge_rows", "")), rec["config"], rec["partition"]]
    if rec["status"] != "ok":
        progress = f" ({rec['progress'][:200]})" if rec.get("progress") else ""
        return "| " + " | ".join(head) + f" | FAILED after {rec.get('total_s', 0):.0f} s: " \
            f"{rec.get('error', '')[:160].replace('|', '/')}{progress.replace('|', '/')} |"
    t = rec.get("timings_s") or {}
    mem = rec.get("memory") or {}
    st = rec.get("set_stats") or {}
    f1 = (rec.get("f1") or {}).get("micro_f1", {})
    cells = head + [
        str((rec.get("sets") or {}).get("sets", "")), str(st.get("set_size_max", "")),
        *[_f(t.get(s)) for s in STAGES], _f(rec.get("total_s")),
        _f(mem.get("driver_jvm_peak_mb"), "{:.0f}"), _f(mem.get("python_workers_sum_peak_mb"), "{:.0f}"),
        _f(mem.get("python_workers_max_peak_mb"), "{:.0f}"),
        _f(f1.get("0.1"), "{:.3f}"), _f(f1.get("0.5"), "{:.3f}"),
        _f(st.get("gflops"), "{:.2f}"), _f((rec.get("gemm") or {}).get("gemm_gflops"), "{:.1f}"),
    ]
    return "| " + " | ".join(cells) + " |"


def _n(nodes: int) -> str:
    """``10^6`` for a power of ten, the number otherwise."""
    e = round(math.log10(nodes)) if nodes > 0 else 0
    return f"10^{e}" if 10**e == nodes else str(nodes)


def scaling_ratios(records: Iterable[dict[str, Any]]) -> list[str]:
    """Lines ``time(b) / time(a)`` between consecutive sizes of each (model, config, partition).

    ``IO`` lines also give the ratio of the embedding stages alone
    (``partition + proximity_rows + solve_write``).
    """
    groups: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = {}
    for r in records:
        if r.get("status") == "ok":
            groups.setdefault((r["model"], r["config"], r["partition"]), {})[r["nodes_requested"]] = r
    lines = []
    for (model, config, part), by_size in sorted(groups.items()):
        sizes = sorted(by_size)
        for a, b in zip(sizes, sizes[1:]):
            ra, rb = by_size[a], by_size[b]
            line = (f"{model} {config} {part}: time({_n(b)}) / time({_n(a)}) = "
                    f"{rb['total_s'] / ra['total_s']:.2f} (nodes x{b / a:g})")
            if part in ("IO", "IOM"):
                ea = sum((ra.get("timings_s") or {}).get(s, 0.0) for s in EMBED_STAGES)
                eb = sum((rb.get("timings_s") or {}).get(s, 0.0) for s in EMBED_STAGES)
                if ea > 0:
                    line += f"; embedding stages only: {eb / ea:.2f}"
            lines.append(line)
    return lines


# --------------------------------------------------------------------------- main


DESCRIPTION = ("Scale ladder of jobs/embed.py (benchmarks/ladder.py): stage times (s), peak RSS (MiB), "
               "planted-community micro-F1 and solve GFLOP/s next to the NumPy GEMM rate, per graph size, "
               "model, configuration and partition.")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``--help`` lists the options and their defaults)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=_size, default=[10_000, 100_000, 1_000_000],
                   help="graph sizes (nodes), e.g. 1e4 1e5 1e6")
    p.add_argument("--models", nargs="+", choices=("sbm", "rmat"), default=["sbm", "rmat"])
    p.add_argument("--avg-degree", type=float, default=12.0, help="mean degree of the generated graphs")
    p.add_argument("--communities", type=int, default=10, help="planted communities of sbm graphs")
    p.add_argument("--mixing", type=float, default=0.1, help="share of sbm edges placed at random")
    p.add_argument("--configs", nargs="+", type=parse_config,
                   default=["social-k200", "social-k1000"],
                   help="PROFILE[-kK][-dD]: embed.py --profile PROFILE [--landmarks K] [--dim D]")
    p.add_argument("--partitions", nargs="+", choices=("RP", "LP", "IO", "IOM"), default=["RP", "LP", "IO"])
    p.add_argument("--io-nodes", type=int, default=10_000, help="requested nodes of IO runs")
    p.add_argument("--workdir", default="/tmp/sepne-bench", help="generated graphs and run outputs")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ladder.json"),
                   help="JSON results file (merged into)")
    p.add_argument("--master", default="local[2]", help="Spark master")
    p.add_argument("--driver-memory", default="8g", help="spark.driver.memory")
    p.add_argument("--seed", type=int, default=0, help="seed of the graphs, IO samples, F1 splits and the job")
    p.add_argument("--f1-max-nodes", type=int, default=20_000, help="embedded nodes used for micro-F1")
    p.add_argument("--no-f1", action="store_true", help="skip the micro-F1 measurement")
    p.add_argument("--keep-outputs", action="store_true", help="keep each run's embeddings in the workdir")
    p.add_argument("--quiet", action="store_true", help="only warnings from the job's log")
    p.add_argument("--peer-word2vec-partitions", type=int, default=2,
                   help="Spark ML Word2Vec numPartitions of the graphframes-word2vec peer")
    p.add_argument("--run-timeout", type=float, default=0.0,
                   help="cancel a run's Spark jobs after this many seconds and record it as failed (0: no limit)")
    ns = p.parse_args(None if argv is None else list(argv))
    ns.configs = [c if isinstance(c, Config) else parse_config(c) for c in ns.configs]
    return ns


def _record_run(spark: SparkSession, ns: argparse.Namespace, graph: GraphPaths, model: str, nodes: int, cfg: Config,
                part: str, gemm: dict[str, Any], machine: dict[str, Any]) -> dict[str, Any]:
    """Run one rung of the ladder and build its result record."""
    rec: dict[str, Any] = {
        "model": model, "nodes_requested": nodes, "avg_degree": ns.avg_degree, "config": cfg.name,
        "partition": part, "master": ns.master, "graph": graph.name, "graph_info": graph.info,
        "shuffle_partitions": shuffle_partitions(nodes), "gemm": gemm, "machine": machine,
        "measured_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    rec["key"] = run_key(rec)
    output = os.path.join(os.path.abspath(ns.workdir), "runs", f"{graph.name}-{cfg.name}-{part}")
    if is_peer(cfg):
        return _record_peer(spark, ns, graph, cfg, rec, output)
    argv = ["--input", graph.edges, "--output", output, "--overwrite", *cfg.flags(),
            "--seed", str(ns.seed)]
    if part in ("IO", "IOM"):
        path, count = ensure_io_nodes(spark, graph, ns.io_nodes, ns.seed)
        # Requested ids only: the whole-graph refinement and propagation of a profile are off.
        argv += ["--partition", "IO", "--nodes", "@" + path, "--propagation", "1", "--refine-steps", "0"]
        rec["io_nodes"] = count
    spark.conf.set("spark.sql.shuffle.partitions", str(rec["shuffle_partitions"]))
    if part == "IOM":
        model_path = output + "-model"
        fitted = run_embed(spark, argv + ["--save-model", model_path], output)  # untimed
        if fitted["status"] != "ok":
            rec.update(status=fitted["status"], error=fitted["error"], traceback=fitted["traceback"])
            release(spark)
            return rec
        release(spark)
        argv += ["--model", model_path]
    if part not in ("IO", "IOM"):
        argv += ["--partition", part]
    guard = RunTimeout(spark, ns.run_timeout)
    with guard:
        res = run_embed(spark, argv, output)
    if guard.fired and res["status"] != "ok":
        res["error"] = f"cancelled after {ns.run_timeout:.0f} s (--run-timeout); " + res["error"]
    rec.update({k: res[k] for k in ("status", "argv", "total_s", "memory")})
    if res["status"] != "ok":
        rec.update(error=res["error"], traceback=res["traceback"])
        release(spark)
        return rec
    man = res["manifest"] or {}
    settings = man.get("settings", {})
    rec.update(timings_s={k: round(v, 3) for k, v in man.get("timings_s", {}).items()},
               counts=man.get("counts"), sets=man.get("sets"),
               settings={k: settings.get(k) for k in ("metric", "landmarks", "dim", "lam", "eta", "iters",
                                                     "set_size", "landmark_strategy", "dtype")})
    t = time.time()
    try:
        rec["set_stats"] = set_statistics(
            spark, output, graph.edges if settings.get("metric") == "I+A" else None,
            int(settings.get("landmarks", 0)), int(settings.get("dim", 0)), int(settings.get("iters", 0)),
            rec["timings_s"].get("solve_write"), bool(settings.get("directed", False)))
        st = rec["set_stats"]
        if st.get("gflops") and gemm.get("gemm_gflops"):
            st["fraction_of_gemm"] = round(st["gflops"] / gemm["gemm_gflops"], 4)
        if graph.labels and not ns.no_f1:
            rec["f1"] = planted_f1(spark, output, graph.labels, ns.f1_max_nodes, ns.seed)
    except Exception as exc:  # noqa: BLE001 - the run itself succeeded: keep its timings
        rec["post_error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    rec["post_s"] = round(time.time() - t, 2)
    if not ns.keep_outputs:
        shutil.rmtree(output, ignore_errors=True)
        shutil.rmtree(output + "-model", ignore_errors=True)
    release(spark)
    return rec


def _record_peer(spark: SparkSession, ns: argparse.Namespace, graph: GraphPaths, cfg: Config,
                 rec: dict[str, Any], output: str) -> dict[str, Any]:
    """The GraphFrames peer's run on ``graph``: time, memory, micro-F1."""
    spark.conf.set("spark.sql.shuffle.partitions", str(rec["shuffle_partitions"]))
    dim = cfg.dim or 128
    res = run_peer(spark, PEERS[cfg.profile], graph.edges, output, dim, ns.seed, ns.peer_word2vec_partitions,
                   ns.run_timeout)
    rec.update({k: res[k] for k in ("status", "argv", "total_s", "memory")})
    rec["settings"] = {"mode": PEERS[cfg.profile], "dim": dim, "walks_per_node": 5, "walk_steps": 50,
                       "restart_probability": 0.1, "window": 5,
                       "word2vec_partitions": ns.peer_word2vec_partitions}
    rec["counts"] = {"input_nodes": graph.info.get("nodes_with_edges"), "input_edge_rows": graph.info.get("edges")}
    if res["status"] != "ok":
        rec.update(error=res["error"], traceback=res["traceback"], progress=res.get("progress"))
        release(spark)
        return rec
    rec["timings_s"] = {"total": rec["total_s"]}
    t = time.time()
    try:
        if graph.labels and not ns.no_f1:
            rec["f1"] = planted_f1(spark, output, graph.labels, ns.f1_max_nodes, ns.seed)
        rec["non_finite"] = non_finite_count(spark, output)
    except Exception as exc:  # noqa: BLE001
        rec["post_error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    rec["post_s"] = round(time.time() - t, 2)
    if not ns.keep_outputs:
        shutil.rmtree(output, ignore_errors=True)
    release(spark)
    return rec


def peer_ratios(records: Iterable[dict[str, Any]]) -> list[str]:
    """Lines ``peer time / SepNE time`` and both micro-F1 per graph, for runs of the same graph."""
    by_graph: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in records:
        by_graph.setdefault((r["model"], r["nodes_requested"]), []).append(r)
    lines = []
    for (model, nodes), runs in sorted(by_graph.items()):
        peers = [r for r in runs if r["config"].split("-d")[0] in PEERS]
        ours = [r for r in runs if r not in peers and r["partition"] not in ("IO", "IOM")]
        for p in peers:
            for o in ours:
                pf = ((p.get("f1") or {}).get("micro_f1") or {}).get("0.5")
                of = ((o.get("f1") or {}).get("micro_f1") or {}).get("0.5")
                if p["status"] == "ok" and o["status"] == "ok":
                    lines.append(f"{model} {_n(nodes)}: {p['config']} {p['total_s']:.1f} s / {o['config']} "
                                 f"{o['partition']} {o['total_s']:.1f} s = {p['total_s'] / o['total_s']:.2f}x; "
                                 f"micro-F1@50% {pf} (peer) vs {of}")
                else:
                    lines.append(f"{model} {_n(nodes)}: {p['config']} {p['status']} "
                                 f"({p.get('total_s', 0):.0f} s), {o['config']} {o['partition']} {o['status']} "
                                 f"({o.get('total_s', 0):.0f} s)")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ladder; returns 0 when every run succeeded, 1 otherwise."""
    ns = parse_args(argv)
    from sepne_spark.jobs.common import setup_logging

    setup_logging(logging.WARNING if ns.quiet else logging.INFO)
    started = time.time()
    conf = {}
    if any(PEERS.get(c.profile) == "word2vec" for c in ns.configs):
        # Spark ML's Word2Vec collects every partition's vectors to the driver when it
        # ends: at 10^6 nodes and d = 128 two partitions sent 1,031 MiB, over the
        # default limit of 1 GiB, and the run failed after 75 minutes of training.
        conf["spark.driver.maxResultSize"] = "4g"
    spark = start_session(ns.master, ns.driver_memory, conf)
    machine = machine_info()
    gemm = measure_gemm(spark)
    print(f"NumPy float64 GEMM: {gemm['gemm_gflops_per_task']:.1f} GFLOP/s per task "
          f"({gemm['blas_threads_per_task']} BLAS thread) x {gemm['task_slots']} task slots "
          f"= {gemm['gemm_gflops']:.1f} GFLOP/s; {machine['cpu']}, Spark {spark.version}, {ns.master}", flush=True)
    print(markdown_header(), flush=True)
    records: list[dict[str, Any]] = []
    for nodes in ns.sizes:
        for model in ns.models:
            spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(nodes)))
            try:
                graph = ensure_graph(spark, ns.workdir, model, nodes, ns.avg_degree, ns.seed,
                                     ns.communities, ns.mixing)
            except Exception as exc:  # noqa: BLE001 - record every run of this graph as failed
                err = f"graph generation: {type(exc).__name__}: {str(exc).strip()[:300]}"
                for cfg in ns.configs:
                    for part in ns.partitions:
                        rec = {"model": model, "nodes_requested": nodes, "avg_degree": ns.avg_degree,
                               "config": cfg.name, "partition": part, "master": ns.master,
                               "status": "failed", "error": err, "total_s": 0.0}
                        rec["key"] = run_key(rec)
                        records.append(rec)
                        print(markdown_row(rec), flush=True)
                continue
            for cfg in ns.configs:
                for part in (["-"] if is_peer(cfg) else ns.partitions):
                    try:
                        rec = _record_run(spark, ns, graph, model, nodes, cfg, part, gemm, machine)
                    except Exception as exc:  # noqa: BLE001 - e.g. the IO sample: record, go on
                        rec = {"model": model, "nodes_requested": nodes, "avg_degree": ns.avg_degree,
                               "config": cfg.name, "partition": part, "master": ns.master,
                               "status": "failed", "total_s": 0.0,
                               "error": f"{type(exc).__name__}: {str(exc).strip()[:300]}",
                               "traceback": traceback.format_exc().splitlines()[-12:]}
                        rec["key"] = run_key(rec)
                    records.append(rec)
                    print(markdown_row(rec), flush=True)
                    merge_results(ns.out, [rec], DESCRIPTION)  # saved as it goes
    for line in scaling_ratios(records):
        print(line)
    for line in peer_ratios(records):
        print(line)
    failed = sum(r["status"] != "ok" for r in records)
    print(f"{len(records)} runs ({failed} failed) in {time.time() - started:.0f} s; results in {ns.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
