"""The SepNE pipeline in two functions: :func:`fit` and :func:`embed`.

The estimator (:mod:`sepne_spark.model`) and the jobs both call these; every stage of
the dataflow lives in its own module and is only put in order here:

=====================  ===========================================  ======================
stage                  what                                         module
=====================  ===========================================  ======================
read                   edges -> canonical ``Graph``                 :mod:`.reading`
landmarks              k landmark ids (DD, DP, UF, GDS)             :mod:`.landmarks`
proximity              entries of M, landmark rows/columns          :mod:`.proximity`
summaries, SVD         M00, S_A, S_B; Phi, Psi, P                   :mod:`.proximity`, :mod:`.solver`
partition              sets of nodes (RP, LP, IO)                   :mod:`.partition`
per-set solve          one ``applyInPandas`` over the sets          :mod:`.set_stage`, :mod:`.solver`
averaging,             neighbourhood averaging, subspace            :mod:`.propagation`, :mod:`.blocks`, :mod:`.spectral`
refinement,            iteration, then the spectral filter over
propagation            the graph (each optional)
unreached              the anchor of nodes no landmark reaches      :mod:`.unreached`
                       (optional, last)
one task               proximity, summaries, solve and propagation  :mod:`.one_task`, :mod:`.sparse`
                       in SciPy, for a graph that fits one task
write                  Parquet, atomically, with a manifest         :mod:`.storage`
=====================  ===========================================  ======================

:func:`fit` runs eagerly: its k x k results are needed on the driver. :func:`embed`
only builds the plan: the returned DataFrame is lazy (the requested-ids check of the
``IO`` setup, label propagation's rounds and, on the distributed path with
``unreached="anchor"``, that stage's counts and Gram matrix excepted) and the solve
runs once, at the first action; later actions reuse its checkpointed output. All caching of the graph's
intermediate tables is done here: the fit's is released by :meth:`FittedGraph.release`,
the embedding's tables are handed to the caller (``cached=``) and released by
:meth:`~sepne_spark.model.SepNEModel.release`.
"""
from __future__ import annotations

import logging
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, IntegerType, IntegralType, StructField, StructType

from sepne_spark import one_task
from sepne_spark.errors import InputError, SettingError
from sepne_spark.graph import (
    NO_EDGES,
    Graph,
    check_requested_id_type,
    incident_ends,
    requested_ids,
    rows_of,
    try_cast,
)
from sepne_spark.landmarks import select_landmarks
from sepne_spark.partition import lp_partition, random_partition, requested_partition
from sepne_spark.progress import stage
from sepne_spark.propagation import default_blocks, propagate_embeddings
from sepne_spark.proximity import (
    LandmarkBlocks,
    Proximity,
    landmark_blocks,
    landmark_summaries,
    metric_text,
    transition,
)
from sepne_spark.session import checkpoint, release
from sepne_spark.set_stage import embed_sets, output_schema, set_records
from sepne_spark.solver import LandmarkFactors, landmark_factors, row_space_factors, set_constants
from sepne_spark.sparse import proximity_entries_bound
from sepne_spark.spectral import sparse_products
from sepne_spark.unreached import anchor_frame

log = logging.getLogger(__name__)

#: Largest number of node ids a neighbourhood filter is broadcast with (a few MB); above
#: it the filters are ordinary joins. A bound on the broadcast, not a function of n.
BROADCAST_IDS_MAX = 1_000_000


@dataclass
class Fit:
    """What :func:`fit` computes: O(k^2 + k d) values, all on the driver."""

    landmark_ids: list
    factors: LandmarkFactors
    S_A: np.ndarray
    S_B: np.ndarray
    id_type: DataType
    #: What the fit did that its parameters do not say (:func:`fit_notes`).
    notes: dict[str, Any] = field(default_factory=dict)


def fit_notes(params: Mapping[str, Any], walks: bool, share: float = 1.0) -> dict[str, Any]:
    """What a fit did that its parameters do not say, for the model and the job's manifest:
    ``landmark_subspaces``, where the landmark subspaces came from (``"M00"``, ``"rows"``
    or ``"walks"``: ``"M00"`` also when ``landmarkFactors="walks"`` and the walks' Gram
    sums were over the limit, :func:`walk_summaries`), and ``walk_sample``, the share of the
    nodes those sums ran over when it was a sample (absent when every node)."""
    subspaces = "walks" if walks else "rows" if params["landmarkFactors"] == "rows" else "M00"
    return {"landmark_subspaces": subspaces, **({"walk_sample": share} if walks and share < 1 else {})}


@dataclass
class FittedGraph:
    """The graph a model was fitted on and the cached tables embedding it reuses."""

    graph: Graph
    A: DataFrame | None
    blocks: LandmarkBlocks | None
    nodes: int
    cached: list[DataFrame] = field(default_factory=list)

    @property
    def one_task(self) -> bool:
        """The graph was fitted in one task (:mod:`.one_task`), which builds neither
        ``A`` nor ``blocks``; embedding all of it takes that path too."""
        return self.A is None

    def release(self) -> None:
        """Unpersist every table cached for this graph (the graph's own included),
        skipping those of a session stopped since."""
        held, self.cached = list(self.cached), []
        release(held)


def check_id_type(graph: Graph, id_type: DataType) -> None:
    """Refuse a graph whose node ids are of another type than the model's (string
    against integer ids), before a Spark job fails on casting one to the other; integer
    types of other widths match."""
    found = graph.vertices.schema["id"].dataType
    if found == id_type or (isinstance(found, IntegralType) and isinstance(id_type, IntegralType)):
        return
    raise InputError(f"the graph's node ids are {found.simpleString()} but the model was fitted on "
                     f"{id_type.simpleString()} ids (its landmarks are such ids): read the edges with "
                     f"{id_type.simpleString()} src and dst")


@dataclass
class AutoChoice:
    """What ``--profile auto`` (:func:`choose_profile`) chose for a graph."""

    profile: str
    """The shipped profile taken: ``document-quality`` or ``social``."""
    changed: dict[str, Any]
    """The settings ``auto`` changes from that profile (by setting name)."""
    nodes: int
    edge_rows: int
    two_step_walks: int | None
    """Walks of two steps (sum over the nodes of in-degree x out-degree; of the squared
    degrees on an undirected graph), counted only when the choice needs them."""

    def describe(self, changed: Mapping[str, Any] | None = None) -> str:
        """``document-quality for 2,708 nodes (landmarks 250, ...)``: the choice in words,
        with ``changed`` (default: :attr:`changed`) as the settings shown."""
        from sepne_spark.settings import redacted

        changed = self.changed if changed is None else changed
        shown = ", ".join(f"{k} {redacted(v) if k == 'spark' else v}" for k, v in changed.items())
        walks = f", {self.two_step_walks:,} two-step walks" if self.two_step_walks is not None else ""
        return f"{self.profile} for {self.nodes:,} nodes{walks}" + (f" ({shown})" if shown else "")


def choose_profile(graph: Graph, nodes: int | None = None, edge_rows: int | None = None,
                   timings: dict[str, float] | None = None) -> AutoChoice:
    """The settings of ``--profile auto`` (the embed job's default) for a graph, chosen
    from its size (:func:`sepne_spark.settings.auto_profile`).

    Parameters
    ----------
    graph : Graph
        The canonical graph, read as it will be fitted.
    nodes, edge_rows : int, optional
        Its node and edge-row counts when the caller has them (the embed job counts
        them as it reads). Without both, they are counted here in one Spark action with
        the two-step walks (a single read of the input).
    timings : dict, optional
        Stage timings, to which the ``auto_profile`` stage is added when counting runs
        here (the sizes, or the two-step walks the choice needs).

    Returns
    -------
    AutoChoice
    """
    from sepne_spark import settings as schema

    walks = squares = None
    if nodes is None or edge_rows is None:
        with stage(graph.edges.sparkSession, "auto_profile", "nodes, edge rows and two-step walks", timings):
            counted = _sizes(graph, with_nodes=True)
        nodes = counted["nodes"] if nodes is None else nodes
        edge_rows = counted["rows"] if edge_rows is None else edge_rows
        if schema.auto_needs_walks(nodes, edge_rows):
            walks, squares = counted["walks"], counted["squares"]
    elif schema.auto_needs_walks(nodes, edge_rows):
        with stage(graph.edges.sparkSession, "auto_profile", "two-step walks, the size of A^2 at most", timings):
            counted = _sizes(graph, with_nodes=False)
            walks, squares = counted["walks"], counted["squares"]
    name, changed = schema.auto_profile(nodes, edge_rows, walks, squares)
    return AutoChoice(name, changed, nodes, edge_rows, walks)


def _degree_counts(edges: DataFrame, directed: bool) -> DataFrame:
    """One row of ``edges``' (directed edge rows') sizes: ``rows``; ``walks``, the walks
    of two steps (sum over the nodes of in-degree x out-degree, the entries of A^2 at
    most); ``squares``, the sum of the squared out-degrees. On an undirected graph the
    two are one, counted with one aggregation; a directed one joins its in-degrees."""
    out_deg = edges.groupBy(F.col("src").alias("id")).agg(F.count(F.lit(1)).alias("o"))
    o = F.col("o")
    if directed:
        in_deg = edges.groupBy(F.col("dst").alias("id")).agg(F.count(F.lit(1)).alias("i"))
        degrees = out_deg.join(in_deg, "id", "full").select(F.coalesce(o, F.lit(0)).alias("o"),
                                                            F.coalesce(F.col("i"), F.lit(0)).alias("i"))
        walks = F.sum(o * F.col("i"))
    else:
        degrees, walks = out_deg, F.sum(o * o)
    return degrees.agg(*(F.coalesce(c, F.lit(0)).cast("long").alias(name) for c, name in (
        (F.sum(o), "rows"), (walks, "walks"), (F.sum(o * o), "squares"))))


def _sizes(graph: Graph, with_nodes: bool) -> dict[str, int]:
    """:func:`_degree_counts` of ``graph``'s edges of positive weight (those of A), and
    ``nodes`` if ``with_nodes``, in one Spark action; the degree counts are kept on the
    graph (:attr:`Graph.counted`), so that ``auto``'s choice and the one-task bound that
    follows it count them once."""
    degrees = graph.counted.get("degrees")
    out = None if degrees else _degree_counts(graph.edges.where(F.col("weight") > 0), graph.directed)
    if with_nodes:
        nodes = graph.vertices.agg(F.count(F.lit(1)).alias("nodes"))
        out = nodes if out is None else out.crossJoin(nodes)
    row = {} if out is None else {k: int(v) for k, v in out.first().asDict().items()}
    if not degrees:
        degrees = graph.counted["degrees"] = {k: row[k] for k in ("rows", "walks", "squares")}
    return {**degrees, **({"nodes": row["nodes"]} if with_nodes else {})}


def _persist_graph(graph: Graph) -> list[DataFrame]:
    """Persist ``graph``'s edges and nodes, each unless its plan is cached already (by
    any object, or the catalog: such a table is the caller's to keep, and a classic
    DataFrame's ``is_cached`` says only whether that object persisted it); returns what
    it persisted, for the model's release."""
    return [frame.persist() for frame in (graph.edges, graph.vertices) if frame.storageLevel == StorageLevel.NONE]


def landmark_frame(spark: SparkSession, ids: list, id_type: DataType) -> DataFrame:
    """``(id, l)``: the landmarks and their index, k rows.

    A table made from a driver-side list is re-made by Python worker tasks each time a
    query reads it (two tasks, each a fixed cost of 0.1 to 0.3 s of a worker's CPU), and
    most queries of a fit and an embedding read this one: :func:`fit` and :func:`embed`
    persist it (``benchmarks/small_distributed.py``: a warm fit of a 60-node graph took
    2.3 to 3.3 s instead of 3.5 to 4.5 s)."""
    schema = StructType([StructField("id", id_type, False), StructField("l", IntegerType(), False)])
    return spark.createDataFrame([(i, j) for j, i in enumerate(ids)], schema)


def describe_metric(params: Mapping[str, Any]) -> str:
    """The proximity as written in logs and summaries: ``A+A2, window 3, log scaling``."""
    text = metric_text(params["metric"], params["window"])
    return text + (f", {params['scaling']} scaling" if params["scaling"] != "none" else "")


def fit(graph: Graph, params: Mapping[str, Any], timings: dict[str, float] | None = None) -> tuple[Fit, FittedGraph]:
    """Landmarks, the landmark SVD and the k x k summaries of ``graph``.

    ``params`` holds the estimator's parameters by Param name (``landmarks``,
    ``landmarkStrategy``, ``metric``, ``window``, ``scaling``, ``dim``, ``seed``).
    """
    # The graph's tables are cached here unless the caller (the embed job) already has.
    cached = _persist_graph(graph)
    try:
        return _fit(graph, params, timings, cached)
    except BaseException:  # a failed fit leaves nothing cached
        for df in cached:
            df.unpersist()
        raise


def _fit(graph: Graph, params: Mapping[str, Any], timings: dict[str, float] | None,
         cached: list[DataFrame]) -> tuple[Fit, FittedGraph]:
    """The body of :func:`fit`; every table it persists is appended to ``cached``."""
    spark = graph.edges.sparkSession
    n_nodes = int(graph.vertices.count())  # fills the cache that the landmark choice reads
    k = params["landmarks"]
    if n_nodes == 0:
        raise InputError(NO_EDGES)
    if k > n_nodes:
        raise SettingError(f"landmarks={k} is more than the {n_nodes} nodes of the graph")
    small = fits_one_task(graph, params, int(n_nodes))
    A: DataFrame | None = None
    blocks: LandmarkBlocks | None = None
    with stage(spark, "landmarks", f"{k} by {params['landmarkStrategy']}", timings) as st:
        if not small:
            A = transition(graph.edges).persist()
            cached.append(A)
        ids = select_landmarks(spark, graph.vertices, graph.edges, k, params["landmarkStrategy"], params["seed"])
        st.count(landmarks=len(ids))
    where = "in one task" if small else "distributed"
    walks = params["landmarkFactors"] == "walks"
    walked_text = " and of the two-step walks" if walks else ""
    with stage(spark, "summaries_svd", f"M00, S_A, S_B of {len(ids)} landmarks, {describe_metric(params)}"
               f"{walked_text}, {where}", timings) as st:
        id_type = graph.vertices.schema["id"].dataType
        lm = landmark_frame(spark, ids, id_type).persist()
        cached.append(lm)
        share = 1.0  # of the nodes the walks' Gram sums ran over
        if small:
            M00, S_A, S_B, *walked = one_task.summaries(graph.edges, graph.vertices, lm, len(ids), params, walks)
        else:
            prox = _proximity(A, graph, params)
            try:
                rows, cols = prox.rows(lm).persist(), prox.cols(lm).persist()
                cached += [rows, cols]
                blocks = landmark_blocks(rows, cols, lm)
                M00, S_A, S_B = landmark_summaries(blocks, lm, len(ids))
            finally:
                prox.release()  # the cached rows and columns hold the scaled entries now
            sums = walk_summaries(A, graph, lm, len(ids), params["seed"]) if walks else None
            walked, share = (list(sums[:3]), sums[3]) if sums else ([], 1.0)
            # Nodes whose only edge was a dropped self-loop are nodes: an edge list of
            # nothing else (or of weights 0, which A leaves out) has nodes and no edge
            # (the one task tells it as it sums).
            if A.isEmpty():  # read by the summaries: its first cached partition
                raise InputError(NO_EDGES)
        if walks and not walked:
            log.warning("landmarkFactors=walks: the Gram matrices of the two-step walks from %d landmarks would "
                        "take too many products (landmarks that are hubs); the landmark subspaces are M00's own",
                        len(ids))
            st.count(walks="skipped")
            walks = False
        if walks:
            W00, W_A, W_B = walked
            factors = row_space_factors(M00, S_A, S_B, params["dim"],
                                        subspaces=(W_A + W00 @ W00.T, W_B + W00.T @ W00))
        elif params["landmarkFactors"] == "rows":
            factors = row_space_factors(M00, S_A, S_B, params["dim"])
        else:
            factors = landmark_factors(M00, params["dim"])
        st.count(k=len(ids), d=int(factors.Phi.shape[0]))
    return (Fit(ids, factors, S_A, S_B, id_type, fit_notes(params, walks, share)),
            FittedGraph(graph, A, blocks, int(n_nodes), cached))


def walk_products(A: DataFrame, landmarks: DataFrame) -> int:
    """An upper bound on the products of the two-step-walk Gram matrices: sum over v of
    c(v)^2, c(v) the walks of two steps between v and a landmark (each direction). Each
    direction joins the edge rows with the k landmarks (broadcast), counts them per
    node, and joins the edge rows with those counts; one job, nothing of size n
    collected."""
    lm = F.broadcast(landmarks.select("id"))
    into = A.join(lm.withColumnRenamed("id", "src"), "src").groupBy(F.col("dst").alias("u")).count()
    out_of = A.join(lm.withColumnRenamed("id", "dst"), "dst").groupBy(F.col("src").alias("u")).count()
    rows = A.join(into.withColumnRenamed("u", "src"), "src").groupBy("dst").agg(F.sum("count").alias("c"))
    cols = A.join(out_of.withColumnRenamed("u", "dst"), "dst").groupBy("src").agg(F.sum("count").alias("c"))
    total = rows.select("c").unionByName(cols.select("c")).agg(F.sum(F.col("c") * F.col("c")).alias("p")).first()
    return int(total["p"] or 0)


#: Largest :func:`walk_products` for which the distributed fit forms the two-step-walk
#: Gram matrices over every node (sparse products per bucket of nodes,
#: :func:`landmark_summaries`; above it, over a sample: :data:`MIN_WALK_SAMPLE`):
#: 7 x 10^6 for the 10^6-node SBM of BENCHMARKS.md; 5 x 10^12 when the landmarks are
#: the hubs of its power-law DC-SBM (1.8 x 10^11 products without repeats). It was 10^8
#: when each product was a joined row; with the sparse products, an LFR graph of 300,000
#: nodes whose bound is 2.3 x 10^9 took 81 s for these summaries (28 s for M00's own),
#: and the walks' subspaces took its F1 from 0.941 to 1.114 of ProNE's at 10% labels;
#: on a denser one of the same size, 8.2 x 10^9 products, they took 124 s and the whole
#: job peaked at 10.5 GB on 2 cores (BENCHMARKS.md, "LFR graphs").
MAX_DISTRIBUTED_WALK_PRODUCTS = 10_000_000_000

#: Above :data:`MAX_DISTRIBUTED_WALK_PRODUCTS` the Gram matrices S_A and S_B of the walks
#: are sums over a seeded sample of the nodes (each in it with probability p =
#: MAX_DISTRIBUTED_WALK_PRODUCTS / products, and scaled by 1 / p: the same sums in
#: expectation, at the cost of the limit), while p is at least this; below it the fit
#: keeps M00's own subspaces. On an LFR graph of 100,000 nodes, the walks' Gram sums from
#: 30% / 10% / 3% of the nodes scored 0.460 / 0.464 / 0.434 of validation micro-F1 at 10%
#: labels, against 0.475 from every node and 0.373 from M00's subspaces; on a DC-SBM of
#: that size whose landmarks are hubs, 10% / 5% / 2% scored 0.213 / 0.194 / 0.167
#: against 0.210 and 0.187: small samples of sums that a few nodes dominate are worse
#: than none (benchmarks/LARGE_GRAPH_STUDY.md, finding 31). The graphs of 10^6 nodes
#: and more measured with hubs for landmarks (5 x 10^12 products and more, p <= 0.002)
#: stay with M00's.
MIN_WALK_SAMPLE = 0.05
#: The sample is drawn by a hash of the node id and the seed, in steps of 2^-20.
_SAMPLE_STEPS = 1 << 20


def walk_sample(graph: Graph, landmarks: DataFrame, products: int, seed: int) -> tuple[DataFrame | None, float]:
    """The nodes the walks' Gram sums run over, and the probability p that a node is
    one of them: (None, 1.0) for every node, when ``products`` is within
    :data:`MAX_DISTRIBUTED_WALK_PRODUCTS`; otherwise the nodes whose hash of (id, seed)
    falls in the first p of its range, and the landmarks (M00 needs their entries), or
    (None, 0.0) when p would be under :data:`MIN_WALK_SAMPLE`."""
    if products <= MAX_DISTRIBUTED_WALK_PRODUCTS:
        return None, 1.0
    steps = int(_SAMPLE_STEPS * MAX_DISTRIBUTED_WALK_PRODUCTS // products)
    p = steps / _SAMPLE_STEPS
    if p < MIN_WALK_SAMPLE:
        return None, 0.0
    drawn = F.pmod(F.xxhash64(F.col("id"), F.lit(int(seed))), F.lit(_SAMPLE_STEPS)) < F.lit(steps)
    nodes = graph.vertices.where(drawn).select("id").unionByName(landmarks.select("id"))
    return nodes, p


def walk_summaries(A: DataFrame, graph: Graph, landmarks: DataFrame, k: int,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """M00, S_A and S_B of the log-scaled A + A^2 from its k landmark rows and columns
    (about k d^2 entries for mean degree d), whatever the model's metric:
    ``landmarkFactors="walks"`` takes the landmark subspaces from them. The distributed
    form of :func:`sepne_spark.sparse.walk_summaries`. When their Gram matrices would
    take more than :data:`MAX_DISTRIBUTED_WALK_PRODUCTS` products (:func:`walk_products`), S_A and
    S_B are sums over a sample of the nodes scaled to the whole (:func:`walk_sample`:
    the walks are joined for those nodes only), or None when the sample would be under
    :data:`MIN_WALK_SAMPLE` (the one-task fit has its own bound,
    :data:`sepne_spark.one_task.MAX_ONE_TASK_WALK_PRODUCTS`). The fourth value is the
    share of the nodes the sums ran over (1.0 for every node), which the model records
    (:func:`fit_notes`)."""
    products = walk_products(A, landmarks)
    ends, share = walk_sample(graph, landmarks, products, seed)
    if share < 1:  # over the limit: a sample, or none
        log.info("two-step walks from the landmarks: up to %s Gram products, over the limit of %s: %s",
                 f"{products:,}", f"{MAX_DISTRIBUTED_WALK_PRODUCTS:,}",
                 f"summed over a sample of {100 * share:.1f}% of the nodes" if share else
                 f"a sample of the nodes would be under {100 * MIN_WALK_SAMPLE:g}% of them")
        if not share:
            return None
    walks = Proximity(A, graph.vertices, "A+A2", "log", graph.edges, 2)
    # Persisted, as the fit's own rows and columns: M00 and the Gram sums are two
    # queries over them, and each would run the two-step joins again.
    held = []
    try:
        rows, cols = (df.persist() for df in (walks.rows(landmarks, ends), walks.cols(landmarks, ends)))
        held += [rows, cols]
        W00, W_A, W_B = landmark_summaries(landmark_blocks(rows, cols, landmarks), landmarks, k)
        return W00, W_A / share, W_B / share, share
    finally:
        for df in held:
            df.unpersist()
        walks.release()


def window_entries_bound_frame(edges: DataFrame, nodes: int, window: int) -> int:
    """:func:`sepne_spark.sparse.window_entries_bound` of the edge rows ``edges``
    (``src``, ``dst``): ``window`` aggregations over the edges, one job."""
    n = F.lit(float(nodes))
    e = edges.select("src", "dst")
    c = e.groupBy("src").agg(F.least(F.count(F.lit(1)).cast("double"), n).alias("c"))
    total = c
    for _ in range(int(window) - 1):
        c = (e.join(c.select(F.col("src").alias("dst"), "c"), "dst")
             .groupBy("src").agg(F.least(F.sum("c"), n).alias("c")))
        total = total.unionByName(c)
    row = total.groupBy("src").agg(F.least(F.sum("c"), n).alias("c")).agg(F.sum("c").alias("bound")).first()
    return int(row["bound"] or 0)


def fits_one_task(graph: Graph, params: Mapping[str, Any], nodes: int) -> bool:
    """Whether ``graph`` (of ``nodes`` nodes) is fitted and embedded in one task
    (:mod:`.one_task`): at most ``oneTaskNodes`` nodes and an M of at most
    :data:`sepne_spark.one_task.MAX_ENTRIES` entries, bounded from the degree table
    (one small job when M = A + A^2, and when a longer window's ``nodes^2`` is over
    the limit, :func:`window_entries_bound_frame`'s one job)."""
    if nodes > int(params["oneTaskNodes"]):
        return False
    metric, window = params["metric"], int(params["window"])
    edges = graph.edges.where(F.col("weight") > 0)
    if metric == "A+A2" and window > 2:
        if proximity_entries_bound(nodes, 0, 0, metric, window) <= one_task.MAX_ENTRIES:
            return True
        return window_entries_bound_frame(edges, nodes, window) <= one_task.MAX_ENTRIES
    if metric == "I+A":
        return proximity_entries_bound(nodes, edges.count(), 0, metric, window) <= one_task.MAX_ENTRIES
    row = _sizes(graph, with_nodes=False)  # the edges of an undirected graph hold both ways
    bound = proximity_entries_bound(nodes, row["rows"], row["walks"], metric, window)
    return bound <= one_task.MAX_ENTRIES


def _proximity(A: DataFrame, graph: Graph, params: Mapping[str, Any]) -> Proximity:
    return Proximity(A, graph.vertices, params["metric"], params["scaling"], graph.edges, params["window"])


def embeds_locally(params: Mapping[str, Any], graph: Any, ids: DataFrame | None = None) -> bool:
    """Whether :func:`embed` of requested ids reads only their neighbourhood.

    True for M = I + A without scaling, averaging, propagation or refinement, a :class:`Graph` that keeps its
    input edges (``raw``), and at most :data:`BROADCAST_IDS_MAX` requested ids (counted
    when ``ids`` is given).
    """
    if params["metric"] != "I+A" or params["scaling"] != "none" or _whole_graph_only(params):
        return False
    if isinstance(graph, Graph) and graph.raw is None:
        return False
    return ids is None or ids.count() <= BROADCAST_IDS_MAX


def _propagation_order(params: Mapping[str, Any]) -> int:
    return int(params["propagation"])


def _refine_steps(params: Mapping[str, Any]) -> int:
    return int(params["refineSteps"])


def _average_steps(params: Mapping[str, Any]) -> int:
    return int(params["averageSteps"])


def _refine_operator(params: Mapping[str, Any]) -> str:
    return str(params["refineOperator"])


def _anchors(params: Mapping[str, Any], ids: DataFrame | None) -> bool:
    """Whether the unreached nodes get the anchor (``unreached="anchor"``, whole graphs)."""
    from sepne_spark.settings import setting

    return ids is None and str(params.get("unreached", setting("unreached").default)) == "anchor"


def _whole_graph_only(params: Mapping[str, Any]) -> bool:
    """Whether the spectral stage runs (averaging, refinement or propagation): it reads the
    whole graph."""
    return _propagation_order(params) > 1 or _refine_steps(params) > 0 or _average_steps(params) > 0


def spectral_steps(params: Mapping[str, Any]) -> list[str]:
    """The steps that run over the whole graph after the per-set solve, in words and in
    their order (empty when none does): for the stage's description and the job's
    summary."""
    order, steps, averaging = _propagation_order(params), _refine_steps(params), _average_steps(params)
    return (([f"{steps} refinement round{'s' * (steps != 1)}"
              + (" by the log-ratio matrix" if _refine_operator(params) == "pmi" else "")] if steps else [])
            + ([f"propagation of {order} terms ({sparse_products(order)} products)"] if order > 1 else [])
            + ([f"{averaging} averaging step{'s' * (averaging != 1)}"] if averaging else []))


def _spectral_plan(params: Mapping[str, Any], plan: dict[str, Any]) -> None:
    """Record in ``plan`` the spectral steps that run."""
    for key, value, on in (("refine_steps", _refine_steps(params), _refine_steps(params) > 0),
                           ("refine_operator", _refine_operator(params), _refine_steps(params) > 0),
                           ("propagation", _propagation_order(params), _propagation_order(params) > 1),
                           ("average_steps", _average_steps(params), _average_steps(params) > 0)):
        if on:
            plan[key] = value


def embed(
    model: Fit,
    params: Mapping[str, Any],
    graph: Graph,
    ids: DataFrame | None = None,
    fitted: FittedGraph | None = None,
    plan: dict[str, Any] | None = None,
    timings: dict[str, float] | None = None,
    nodes: int | None = None,
    count_small: bool = True,
    cached: list[DataFrame] | None = None,
) -> DataFrame:
    """Embed ``ids`` (a DataFrame with column ``id``; None: every node) of ``graph``.

    Parameters
    ----------
    model : Fit
        Landmarks, factors and summaries (from :func:`fit` or a saved model).
    params : mapping
        The model's parameters by Param name.
    graph : Graph
        The graph to embed; may hold nodes and edges added after fitting.
    ids : DataFrame, optional
        Requested ids (``IO``); checked against the graph first (one small job), see
        :func:`sepne_spark.graph.requested_ids`.
    fitted : FittedGraph, optional
        The fit's cached tables, when ``graph`` is the graph the model was fitted on.
    plan : dict, optional
        Receives what was set up: ``setup`` (RP, LP, IO); for requested ids
        ``requested`` and ``requested_missing`` (the distinct ids asked for, and those
        that are no node); for their neighbourhood (:func:`embeds_locally`)
        ``rows_read`` and ``rows_from``.
    timings : dict, optional
        Receives the seconds of the stages that run here rather than at the first
        action: ``partition`` for label-propagation sets, ``solve_propagation`` when the
        propagation takes row blocks.
    nodes : int, optional
        The number of nodes of ``graph``, when the caller has counted them. A graph that
        ``fitted`` does not hold (a loaded model's) is then embedded in one task when
        :func:`fits_one_task` says so, as a fitted one is. Without it they are counted
        (one small job) when the input has at most ``oneTaskNodes / 2`` edge rows (the
        reader's count, :attr:`Graph.input_rows`, or a bounded count of the input edge
        DataFrame, :func:`_small_graph_nodes`), unless requested ids take the
        neighbourhood path (:func:`embeds_locally`).
    count_small : bool, default True
        Whether those jobs may run here; ``transform`` passes False, so that it starts
        no Spark job and a graph of unknown size takes the distributed path. With steps
        after the solve (``propagation`` > 1, ``refineSteps``, ``averageSteps``) or the
        anchor (``unreached="anchor"``) on a whole graph, the distributed path would
        start jobs at the call anyway (a count of the nodes to choose one task or row
        blocks, the anchor's passes): the small graph is then counted either way, and
        embedded in one task.
    cached : list of DataFrame, optional
        Receives every table persisted here (the result among them), for the caller to
        unpersist once the result has been used (:meth:`SepNEModel.release`).

    Returns
    -------
    DataFrame
        ``id, embedding, context, is_landmark, set_id``, lazy.
    """
    if ids is not None:
        check_requested_id_type(ids)
    if ids is None and params["partition"] == "IO":
        raise SettingError("partition IO embeds only requested ids: transform a DataFrame of ids (column id), "
                           "or set partition RP or LP to embed the whole graph")
    if ids is not None and _whole_graph_only(params):
        raise SettingError(
            "spectral propagation reads every node's vector within 2 * propagation - 1 hops, averaging "
            "(averageSteps) within averageSteps hops and refinement (refineSteps) every node's, so they embed "
            "whole graphs only: embed every node, or set propagation=1, averageSteps=0 and refineSteps=0 for "
            "requested ids"
        )
    if ids is not None and params["unreached"] == "anchor":
        log.warning("requested ids keep the solve's vectors: one that no landmark reaches keeps the zero vector "
                    "(unreached='anchor' fills whole graphs only: its anchor comes from every node's vector)")
    check_id_type(graph, model.id_type)
    plan = {} if plan is None else plan
    held = [] if cached is None else cached

    def keep(df: DataFrame) -> DataFrame:
        held.append(df.persist())
        return df

    spark = graph.edges.sparkSession
    same = fitted is not None and fitted.graph is graph
    tables = same and not fitted.one_task  # the fit's distributed tables can be reused
    if ids is None and not same:
        # A whole graph that no fit of this session holds (a loaded model's, a transform
        # of other edges): the counts, the proximity, the sets and the steps after the
        # solve all read its edges and nodes, and each read would otherwise read and
        # check the input again (a loaded model's transform read a text file four times,
        # now twice: benchmarks/input_scans.py), as the fit persists its own. Requested
        # ids do not: they may read only their neighbourhood.
        held.extend(_persist_graph(graph))
    lm = keep(landmark_frame(spark, model.landmark_ids, model.id_type))
    # Whole-graph steps after the solve, and the anchor, start Spark jobs at the call on
    # the distributed path (a count, or the products and a checkpoint): with them a small
    # graph is counted even for transform, and then takes the one-task path, lazy from there.
    at_call = ids is None and bool(_propagation_order(params) > 1 or _refine_steps(params)
                                   or _average_steps(params) or _anchors(params, ids))
    if nodes is None and not same and (count_small or at_call) and (ids is None or not embeds_locally(params, graph)):
        # A graph no fit of this session holds (a loaded model's): when its input has at
        # most oneTaskNodes / 2 rows (so at most oneTaskNodes nodes), one small job counts
        # the nodes. Requested ids that the neighbourhood path can embed keep that path:
        # it reads only their rows.
        nodes = _small_graph_nodes(graph, int(params["oneTaskNodes"]) // 2)
    # The graph the fit took in one task is embedded in one task; so is a small graph of
    # known size that no fit of this session holds (a loaded model's), when it holds
    # every landmark (the one-task stage places the k landmark rows).
    in_one_task = fitted.one_task if same else (
        nodes is not None and fits_one_task(graph, params, int(nodes))
        and graph.vertices.join(F.broadcast(lm), "id", "left_semi").count() == len(model.landmark_ids)
    )
    local = ids is not None and not tables and not in_one_task and embeds_locally(params, graph, ids)
    setup = "IO" if ids is not None else params["partition"]
    plan.clear()
    plan["setup"] = setup
    if local:
        # The requested nodes' edge ends, straight from the input: which ids are nodes,
        # and their in-neighbours, without the graph's vertex list.
        asked = ids.select(try_cast("id", model.id_type).alias("id")).where(F.col("id").isNotNull())
        ends = keep(incident_ends(graph, asked))  # filled by the ids check's job
        wanted = requested_ids(ids, ends.select(F.col("k").alias("id")).distinct(), model.id_type, counts=plan)
    elif ids is not None:
        wanted = requested_ids(ids, graph.vertices, model.id_type, counts=plan)
    # The plan stays lazy: persisted tables fill at the first action. Only the ids check
    # (one query, and one more for examples when some are missing) runs here and, for
    # M = I + A on a graph not fitted here, the counts of the requested ids
    # (embeds_locally) and of the rows of A they read.
    if ids is not None:
        targets = wanted.join(lm.select("id"), "id", "left_anti")
        assign = requested_partition(targets, params["setSize"], params["seed"])
    else:
        non_lm = graph.vertices.select("id").join(lm.select("id"), "id", "left_anti")
        if params["partition"] == "LP":
            # Label propagation is a loop over the whole graph: it runs here, as a stage.
            with stage(spark, "partition", f"label propagation, at most {params['lpMaxIter']} rounds, "
                       f"communities packed into sets of about {params['setSize']} nodes", timings):
                assign = lp_partition(spark, graph.vertices, graph.edges, non_lm, params["setSize"],
                                      params["lpMaxIter"], params["seed"])
        else:
            assign = random_partition(non_lm, params["setSize"], params["seed"])
    assign = keep(assign)
    if in_one_task:
        plan["one_task"] = True
        constants = set_constants(model.factors, model.S_A, model.S_B, params["lam"], params["eta"])
        out = one_task.embed_graph(graph.edges, graph.vertices, lm, assign, constants, params, model.id_type,
                                   unreached="anchor" if _anchors(params, ids) else "zero")
        if ids is not None:  # the sets hold the requested nodes; of the landmarks, the requested ones
            out = out.join(wanted.select("id"), "id", "left_semi")
        _spectral_plan(params, plan)
        return keep(out)
    if tables:
        A = fitted.A
    elif ids is not None and params["metric"] == "I+A":
        # Complete rows of A for the requested nodes, their in-neighbours and the
        # landmarks only (see _needed_rows); from the input edges when local.
        if local:
            in_nbrs = ends.where(F.col("into") | F.lit(not graph.directed)).select(F.col("o").alias("id"))
        else:
            to_wanted = wanted.select(F.col("id").alias("dst"))
            if plan["requested"] - plan["requested_missing"] <= BROADCAST_IDS_MAX:  # counted by requested_ids
                to_wanted = F.broadcast(to_wanted)
            in_nbrs = graph.edges.join(to_wanted, "dst", "left_semi").select(F.col("src").alias("id"))
        needed = keep(_needed_rows(in_nbrs, wanted, lm))
        n_needed = int(needed.count())
        plan.update(rows_read=n_needed, rows_from="input edges" if graph.raw is not None else "merged edges")
        # Persisted: the set rows, the set columns and the landmark blocks all read these
        # rows, and each read would otherwise scan the input edges again.
        A = keep(transition(rows_of(graph, needed, broadcast=n_needed <= BROADCAST_IDS_MAX)))
    else:
        # Persisted: the landmark blocks' rows and columns and the sets' rows all read A,
        # and each read would otherwise normalise every edge again (the fit keeps its
        # own; a saved model's run at 10^5 nodes took 89 Spark stages instead of 94).
        A = keep(transition(graph.edges))
    prox = _proximity(A, graph, params)
    blocks = fitted.blocks if tables else landmark_blocks(prox.rows(lm), prox.cols(lm), lm)
    if ids is not None:
        M_rows = keep(prox.rows(assign))
        M_cols = keep(prox.cols(assign))
        lm_out = landmark_rows(spark, model).join(wanted, "id", "left_semi")
    else:
        M_rows = M_cols = keep(prox.rows(None))
        lm_out = landmark_rows(spark, model)
        if not same:  # a graph the fit did not see may lack landmarks: those get no row
            present = graph.vertices.join(F.broadcast(lm.select("id")), "id", "left_semi")
            lm_out = lm_out.join(present, "id", "left_semi")
    held.extend(prox.cached)  # the log scaling's in-weights, read when the result is computed
    records = set_records(assign, M_rows, M_cols, blocks)
    out = embed_sets(records, model.factors, model.S_A, model.S_B, params["lam"], params["eta"], params["iters"],
                     model.id_type, model.landmark_ids, params["dtype"]).unionByName(lm_out)
    order, steps, averaging = _propagation_order(params), _refine_steps(params), _average_steps(params)
    # Whether the output has been computed and checkpointed (cut from its lineage). The
    # plan of the output holds the whole history of the solve and of the spectral steps,
    # and every table persisted over it nests that history again: the anchor's held
    # tables over the uncut output made Spark Connect's server run out of heap on a
    # 55-node graph. Where the output is computed here anyway (steps by row blocks,
    # the anchor), it is checkpointed once (benchmarks/small_distributed.py --spectral:
    # embedding 12.5 to 14.0 s against 16.0 to 16.4 s, BENCHMARKS.md).
    cut = False
    if order > 1 or steps or averaging:
        base = keep(out)
        known = fitted.nodes if same else nodes
        if not int(params["propagationBlocks"]) and known is None:
            # A graph of unknown size (a loaded model's, or a transform's): its nodes are
            # counted, so that a large one takes row blocks, not one task.
            known = int(graph.vertices.count())
        blocks_n = int(params["propagationBlocks"]) or default_blocks(
            known, dim=int(params["dim"]), dtype=params["propagationDtype"])
        # In one task the filter is lazy (it runs at the first action). By row blocks
        # every product is computed as it is built (sepne_spark.blocks): the solve, the
        # products and their join with the solve's other columns run here, as a stage of
        # their own, and the output is checkpointed (see `cut` below).
        by_blocks = stage(spark, "solve_propagation", f"the per-set solve, then {', '.join(spectral_steps(params))}, "
                          f"by {blocks_n} row blocks", timings) if blocks_n > 1 else nullcontext()
        with by_blocks:
            smooth = propagate_embeddings(
                graph.vertices, graph.edges, base.select("id", "embedding"), order=order,
                mu=float(params["propagationMu"]), theta=float(params["propagationTheta"]),
                blocks=blocks_n, seed=params["seed"], dtype=params["propagationDtype"], refine_steps=steps,
                average_steps=averaging, refine_operator=_refine_operator(params),
            )
            out = base.drop("embedding").join(smooth, "id").select(*output_schema(model.id_type).fieldNames())
            if blocks_n > 1:
                out, cut = checkpoint(out), True
        _spectral_plan(params, plan)
    if _anchors(params, ids):
        if not cut:  # the anchor's first pass reads every row: the solve and its steps run here, once
            steps_run = ", ".join(spectral_steps(params))
            with stage(spark, "solve_propagation", "the per-set solve" + (f", then {steps_run}, in one task"
                       if steps_run else "") + ", before the anchor", timings):
                out, cut = checkpoint(out), True
        with stage(spark, "unreached", f"nodes no landmark reaches: the anchor (length {params['unreachedLength']:g}) "
                   "and one direction per component", timings) as st:
            out, filled = anchor_frame(out, graph.edges, float(params["unreachedLength"]), int(params["seed"]),
                                       int(params["dim"]), cached=held)
            st.count(unreached=filled)
        plan["unreached"] = filled
    return keep(out)


def _small_graph_nodes(graph: Graph, max_rows: int) -> int | None:
    """The nodes of ``graph`` when its input has at most ``max_rows`` edge rows, else None.

    The row count is the reader's (:attr:`Graph.input_rows`, from
    :func:`~sepne_spark.graph.load_graph`) or, for an edge DataFrame, that of a bounded
    job: ``limit(max_rows + 1).count()`` stops reading each partition after
    ``max_rows + 1`` rows, so a large input is not scanned to the end.
    """
    if max_rows <= 0:
        return None
    rows = graph.input_rows
    if rows is None and graph.raw is not None:
        rows = int(graph.raw.limit(max_rows + 1).count())
    if rows is None or rows > max_rows:
        return None
    return int(graph.vertices.count())


def landmark_rows(spark: SparkSession, model: Fit) -> DataFrame:
    """Rows of the landmarks: embedding Phi, context Psi (k rows).

    A ``mapInPandas`` over :func:`landmark_frame` rather than a local list of the rows,
    so the k x 2d values travel with the function (which PySpark sends as a broadcast
    above ``spark.broadcast.UDFCompressionThreshold``, 1 MiB) instead of inside every
    task of the plans that read them."""
    Phi, Psi = model.factors.Phi, model.factors.Psi

    def rows(batches):
        for pdf in batches:
            j = pdf["l"].to_numpy(np.int64)
            yield pd.DataFrame({
                "id": pdf["id"],
                "embedding": list(np.asarray(Phi[:, j].T, dtype=np.float64)),
                "context": list(np.asarray(Psi[:, j].T, dtype=np.float64)),
                "is_landmark": np.ones(len(j), dtype=bool),
                "set_id": np.full(len(j), -1, dtype=np.int64),
            })

    lm = landmark_frame(spark, model.landmark_ids, model.id_type)
    return lm.mapInPandas(rows, schema=output_schema(model.id_type))


def _needed_rows(in_neighbours: DataFrame, ids: DataFrame, landmarks: DataFrame) -> DataFrame:
    """The nodes whose rows of A embedding ``ids`` with M = I + A reads (column ``id``):
    the requested nodes, their in-neighbours and the landmarks.

    Rows of M for a requested node u are its own row of A; its column needs the rows of
    its in-neighbours (A[v, u] = w(v, u) / s(v)), which also give M[v, l] for the two-hop
    sum Rhat_B; M[l, v] for M_0i and Rhat_A are rows of the landmarks. Every row kept
    (:func:`~sepne_spark.graph.rows_of`) is complete, so its out-weight s and its
    entries are exact, and the work follows the requested nodes' neighbourhoods instead
    of the graph.
    """
    return (
        in_neighbours.select("id")
        .unionByName(ids.select("id"))
        .unionByName(landmarks.select("id"))
        .distinct()
    )
