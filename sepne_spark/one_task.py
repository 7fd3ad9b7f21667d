"""Graphs that fit one task: the proximity, summaries and per-set solves in SciPy.

The distributed stages build M and every set's blocks as DataFrame joins, one Spark
row per entry or walk; that scales past one machine but costs minutes on a graph of
10^4 nodes that SciPy handles in seconds. Up to ``one_task_nodes`` nodes (a setting,
100,000 by default) and :data:`MAX_ENTRIES` entries of M, :func:`pipeline.fit
<sepne_spark.pipeline.fit>` and the whole-graph :func:`pipeline.embed
<sepne_spark.pipeline.embed>` instead gather the graph into one ``applyInPandas``
task (one shuffle of its edge rows) and run :mod:`sepne_spark.sparse` there:

* :func:`summaries`: M00, S_A, S_B (k x k), and those of the two-step walks for
  ``landmarkFactors="walks"``: the only values collected to the driver;
* :func:`embed_graph`: every node's embedding and context vector from the landmark
  factors (shipped with the function, O(k^2 + k d)), the sets solved one after the
  other with the library's per-set solve, then the spectral propagation when asked
  for. The result is a lazy DataFrame with the schema of the distributed path.

Landmarks and sets are chosen by the same Spark stages as on the distributed path, so
the two paths agree to floating-point tolerance: ``tests/test_sparse.py`` holds the
SciPy arithmetic against the dense oracle, and the oracle grid of ``tests/test_core.py``
and ``tests/test_pipeline.py`` run both paths.
"""
from __future__ import annotations

import sys
import warnings
from typing import Any, Mapping

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, DataType, IntegerType, StructField, StructType

from sepne_spark.errors import InputError
from sepne_spark.graph import EDGE_ROW, NODE_ROW, NO_EDGES, edge_and_node_rows
from sepne_spark.progress import TaskProgress
from sepne_spark.set_stage import output_schema
from sepne_spark.solver import RepairedFactorisation, SetConstants
from sepne_spark.sparse import embed_all, landmark_summaries, sparse_proximity, walk_summaries
from sepne_spark.spectral import smooth
from sepne_spark.unreached import anchor_unreached

#: Largest number of entries of M (bounded from the degree table by
#: :func:`sepne_spark.sparse.proximity_entries_bound`) built in one task: about 0.4 GB
#: in CSR form, a few times that at the peak of the products.
MAX_ENTRIES = 30_000_000
#: Largest number of products (sum over v of c(v)^2, c(v) the landmarks two steps from
#: v) of the two-step-walk Gram matrices formed in one task for ``landmarkFactors="walks"``
#: (:func:`sepne_spark.sparse.walk_summaries`): 1.75 x 10^10 took about 50 s (10^5
#: nodes with hubs, k = 2,000). Above it the fit uses M00's own subspaces.
MAX_ONE_TASK_WALK_PRODUCTS = 50_000_000_000


def _gathered(edges: DataFrame, vertices: DataFrame, landmarks: DataFrame, assign: DataFrame | None) -> DataFrame:
    """Edge rows ``(kind 0, a=src, b=dst, w)`` and node rows ``(kind 1, a=b=id, l, s)``, ``l``
    the landmark index and ``s`` the set (null when none), in one DataFrame
    (:func:`~sepne_spark.graph.edge_and_node_rows`)."""
    nodes = vertices.select("id").join(landmarks.select("id", "l"), "id", "left")
    if assign is not None:
        nodes = nodes.join(assign.select("id", F.col("set_id").cast("long").alias("s")), "id", "left")
    else:
        nodes = nodes.withColumn("s", F.lit(None).cast("long"))
    return edge_and_node_rows(
        edges, nodes,
        {"w": F.col("weight").cast("double"), "l": F.lit(None).cast("int"), "s": F.lit(None).cast("long")},
        {"w": F.lit(None).cast("double"), "l": F.col("l").cast("int"), "s": F.col("s")},
    )


class _Local:
    """The gathered rows of one task as arrays: node index, M, landmark indices, sets."""

    def __init__(self, pdf: pd.DataFrame, params: Mapping[str, Any]) -> None:
        kind = pdf["kind"].to_numpy()
        nodes = pdf[kind == NODE_ROW]
        self.index = pd.Index(nodes["a"])
        order = np.argsort(self.index.to_numpy(), kind="stable")
        self.index = self.index[order]
        if self.index.has_duplicates:
            raise ValueError("one-task stage: a node id occurs twice in the vertex table")
        n = len(self.index)
        lcol = nodes["l"].to_numpy()[order]
        has_l = ~pd.isna(lcol)
        self.landmarks = np.empty(int(has_l.sum()), dtype=np.int64)
        self.landmarks[lcol[has_l].astype(np.int64)] = np.flatnonzero(has_l)
        scol = nodes["s"].to_numpy()[order]
        self.sets = np.where(pd.isna(scol), -1, scol).astype(np.int64)
        self.sets[self.landmarks] = -1
        ed = pdf[kind == EDGE_ROW]
        self.src = self.index.get_indexer(ed["a"])
        self.dst = self.index.get_indexer(ed["b"])
        self.w = ed["w"].to_numpy(np.float64)
        if (self.src < 0).any() or (self.dst < 0).any():
            raise ValueError("one-task stage: an edge ends at a node missing from the vertex table")
        self.M = sparse_proximity(n, self.src, self.dst, self.w, params["metric"], int(params["window"]),
                                  params["scaling"])


def summaries(edges: DataFrame, vertices: DataFrame, landmarks: DataFrame, k: int,
              params: Mapping[str, Any], walks: bool = False) -> tuple[np.ndarray, ...]:
    """M00, S_A and S_B (k x k) of the graph, computed in one task; O(k^2) values collected.

    Parameters
    ----------
    edges, vertices : DataFrame
        The graph's ``src, dst, weight`` rows (both directions when undirected) and ``id``.
    landmarks : DataFrame
        ``(id, l)``, k rows.
    params : mapping
        ``metric``, ``window`` and ``scaling`` by Param name.
    walks : bool
        Also return the same three of the log-scaled A + A^2
        (:func:`sepne_spark.sparse.walk_summaries`), for ``landmarkFactors="walks"``,
        unless they take more than :data:`MAX_ONE_TASK_WALK_PRODUCTS` products (then
        three).

    Raises
    ------
    InputError
        When ``edges`` has no row of positive weight (the nodes' only edges were dropped
        self-loops, or every weight is 0).
    """
    settings = {key: params[key] for key in ("metric", "window", "scaling")}
    # One row per row of each k x k matrix, its values as little-endian float64 bytes:
    # 3k rows to collect instead of up to 3k^2.
    schema = StructType([StructField("t", IntegerType(), False), StructField("i", IntegerType(), False),
                         StructField("data", BinaryType(), False)])

    def run(pdf: pd.DataFrame) -> pd.DataFrame:
        local = _Local(pdf, settings)
        parts = landmark_summaries(local.M, local.landmarks)
        if walks:
            parts += walk_summaries(len(local.index), local.src, local.dst, local.w, local.landmarks,
                                    MAX_ONE_TASK_WALK_PRODUCTS) or ()
        parts = np.stack(parts).astype("<f8")
        t, i = np.divmod(np.arange(len(parts) * k), k)
        # Row t = -1: the number of edges of positive weight (the rows of A, as the
        # distributed path counts them).
        return pd.DataFrame({"t": np.append(t, -1).astype(np.int32), "i": np.append(i, 0).astype(np.int32),
                             "data": [parts[a, b].tobytes() for a, b in zip(t, i)]
                             + [np.array([np.count_nonzero(local.w > 0)], "<f8").tobytes()]})

    rows = (_gathered(edges, vertices, landmarks, None).groupBy(F.lit(0).alias("one"))
            .applyInPandas(run, schema=schema).collect())
    (edge_rows,) = [np.frombuffer(r["data"], dtype="<f8")[0] for r in rows if r["t"] == -1]
    if not edge_rows:
        raise InputError(NO_EDGES)
    out = np.zeros((1 + max(r["t"] for r in rows), k, k))
    for r in rows:
        if r["t"] >= 0:
            out[r["t"], r["i"]] = np.frombuffer(r["data"], dtype="<f8")
    return tuple(out)


def embed_graph(
    edges: DataFrame,
    vertices: DataFrame,
    landmarks: DataFrame,
    assign: DataFrame,
    constants: SetConstants,
    params: Mapping[str, Any],
    id_type: DataType,
    unreached: str = "zero",
) -> DataFrame:
    """The rows ``id, embedding, context, is_landmark, set_id`` of the landmarks and of the
    nodes in ``assign``, made in one task.

    ``assign`` is ``(id, set_id)`` of the non-landmark nodes to embed (all of them, or
    the requested ones: a node in no set gets no row); the landmarks get Phi and Psi
    of ``constants.factors`` (set -1). With ``averageSteps > 0``, ``propagation > 1`` or
    ``refineSteps > 0`` the embeddings are then averaged, refined (by ``refineOperator``)
    and propagated as
    :func:`sepne_spark.propagation.propagate_embeddings` does (the context vectors are
    not). With ``unreached="anchor"`` (whole graphs: the caller passes it only then), the
    rows that are still zero, of nodes with an edge, get the anchor and their component's
    direction last (:func:`sepne_spark.unreached.anchor_unreached`, ``unreachedLength``
    and ``seed``). Lazy: the task runs at the first action.
    """
    settings = {key: params[key] for key in ("metric", "window", "scaling", "iters", "dtype", "propagation",
                                             "propagationMu", "propagationTheta", "refineSteps",
                                             "averageSteps", "refineOperator", "unreachedLength", "seed")}

    def run(pdf: pd.DataFrame) -> pd.DataFrame:
        progress = TaskProgress("solve_write")
        local = _Local(pdf, settings)
        n = len(local.index)
        progress.step(f"proximity of {n:,} nodes and {len(local.w):,} edge rows")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RepairedFactorisation)
            W, C = embed_all(local.M, local.landmarks, local.sets, constants, int(settings["iters"]),
                             settings["dtype"])
        solved = local.sets[local.sets >= 0]
        progress.step(f"solve of {len(solved):,} nodes in {len(np.unique(solved)):,} sets")
        for w in caught:  # to the executor log, as the distributed solve does
            print(f"sepne solve WARNING: {w.message}", file=sys.stderr, flush=True)
        if not (np.isfinite(W).all() and np.isfinite(C).all()):
            raise FloatingPointError("the solve produced NaN or infinite values (check eta > 0 and the input "
                                     "weights)")
        order, steps = int(settings["propagation"]), int(settings["refineSteps"])
        averaging = int(settings["averageSteps"])
        if order > 1 or steps or averaging or unreached == "anchor":
            import scipy.sparse as sp

            A = sp.csr_matrix((local.w, (local.src, local.dst)), shape=(n, n))
        if order > 1 or steps or averaging:
            W = smooth(A, W, order, float(settings["propagationMu"]), float(settings["propagationTheta"]), steps,
                       averaging, str(settings["refineOperator"]), report=progress.step)
        if unreached == "anchor":
            W, _ = anchor_unreached(A, W, local.index.to_numpy(), float(settings["unreachedLength"]),
                                    int(settings["seed"]))
            progress.step("anchoring of the rows still zero")
        is_landmark = np.zeros(n, dtype=bool)
        is_landmark[local.landmarks] = True
        embedded = is_landmark | (local.sets >= 0)
        return pd.DataFrame({
            "id": local.index.to_numpy()[embedded],
            "embedding": list(W[embedded]),
            "context": list(C[embedded]),
            "is_landmark": is_landmark[embedded],
            "set_id": np.where(is_landmark, -1, local.sets)[embedded],
        })

    return (_gathered(edges, vertices, landmarks, assign).groupBy(F.lit(0).alias("one"))
            .applyInPandas(run, schema=output_schema(id_type)))
