"""Nodes that no landmark reaches: one shared direction, and one per component.

SepNE writes every node as a combination of the landmarks' factors. A node with an
edge whose component holds no landmark (a pair of papers citing only each other, a
small island of a social graph) has no proximity to any landmark, and every term of
its per-set solve is zero: its vector is all zeros, and so is every spectral step's
output for it (each step is linear in the vectors of its component). What the graph
does say about such a node is which nodes it shares a component with.

``unreached="anchor"`` (the shipped profiles' choice) gives each of those nodes

    a * u + g_c

* ``u``, the *anchor*: the unit direction that the reached nodes use least, the
  eigenvector of the smallest eigenvalue of the d x d Gram matrix of their
  L2-normalised rows. All unreached nodes share it, apart from the reached ones, so a
  classifier learns their own label mix from it instead of the prior of the whole
  graph;
* ``g_c``: one unit vector per connected component of the subgraph that the unreached
  nodes induce, a Gaussian combination of the next ``max(1, d // 4)`` least-used
  directions (:func:`anchor_basis`), drawn from a generator seeded by ``seed`` and a
  64-bit hash of the component's smallest node id (:func:`component_offset`), so that
  a node's vector depends on its component alone, not on how Spark partitions or
  numbers the rows: the nodes of one component are alike, apart from other components,
  and out of the directions that carry the reached nodes' structure;
* ``a``: ``unreached_length`` (1 by default; chosen on validation folds,
  BENCHMARKS.md, "Nodes no landmark reaches").

Nodes without any edge keep their zero vector: the graph says nothing about them.
``unreached="zero"`` (the estimator's default, the paper's equations) leaves every
such row at zero.

:func:`anchor_unreached` is the NumPy form (the oracle of the tests, and what the
one-task path runs); :func:`anchor_frame` is the distributed form: one pass over the
output that counts its zero rows and sums the reached rows' d x d Gram matrix, then
(when there are zero rows) those of them with an edge, the edges between them, their
components (SciPy in one task up to :data:`ONE_TASK_COMPONENTS` of them, else
GraphFrames' ``connectedComponents`` or the same by DataFrame joins) and one
partition-wise stage. What reaches the driver is two counts and the d x d Gram matrix.
Whole graphs only: a requested node's component and the reached nodes' Gram matrix are
not in its neighbourhood, so embeddings of requested ids keep the solve's rows.
"""
from __future__ import annotations

import hashlib
import logging
from typing import Any, Sequence

import numpy as np

log = logging.getLogger(__name__)

#: What becomes of the rows of nodes that no landmark reaches (the ``unreached``
#: setting): ``zero`` leaves them at zero (the paper's equations), ``anchor`` gives them
#: the shared anchor direction plus one direction per component.
UNREACHED = ("zero", "anchor")


def component_offset(key: Any, seed: int, basis: np.ndarray) -> np.ndarray:
    """The unit vector of the component whose smallest node id is ``key``: ``basis``
    (d x m, orthonormal columns) times m standard normal numbers drawn by NumPy's default
    generator from ``seed`` and the first 8 bytes of the BLAKE2b hash of ``str(key)``,
    so that it is the same in every process."""
    h = int.from_bytes(hashlib.blake2b(str(key).encode("utf-8"), digest_size=8).digest(), "little")
    g = basis @ np.random.default_rng([int(seed), h]).standard_normal(basis.shape[1])
    return g / np.linalg.norm(g)


def offset_dims(dim: int) -> int:
    """How many directions the components' offsets span: ``max(1, d // 4)``, at most
    ``d - 1`` (all of the d when d = 1)."""
    return 1 if dim <= 1 else min(dim - 1, max(1, dim // 4))


def anchor_basis(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The anchor ``u`` and the components' basis (d x :func:`offset_dims`) of the
    reached rows' Gram matrix ``gram`` (d x d, symmetric): its eigenvectors by ascending
    eigenvalue, the first for ``u`` and the next ones for the basis, each signed so that
    its entry of largest magnitude (the first such) is positive. With ``gram`` zero (no
    reached node) they are the first unit vectors."""
    gram = np.asarray(gram, dtype=np.float64)
    d = gram.shape[0]
    if np.any(gram):
        _, vecs = np.linalg.eigh((gram + gram.T) / 2)
    else:
        vecs = np.eye(d)
    picks = np.abs(vecs).argmax(axis=0)
    vecs = vecs * np.where(vecs[picks, np.arange(d)] > 0, 1.0, -1.0)
    m = offset_dims(d)
    return vecs[:, 0], (vecs[:, 1:1 + m] if d > 1 else vecs[:, :1])


def zero_rows(X: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of ``X`` that are all zero."""
    return ~np.any(np.asarray(X) != 0, axis=1)


def normalised_gram(X: np.ndarray) -> np.ndarray:
    """The d x d Gram matrix of the L2-normalised rows of ``X`` (zero rows add nothing)."""
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1)
    Y = X[norms > 0] / norms[norms > 0, None]
    return Y.T @ Y


def component_firsts(A: Any, ids: Sequence[Any]) -> np.ndarray:
    """For each node of the square sparse ``A``, the smallest id (of ``ids``, in ``A``'s
    order) of its weakly connected component: SciPy's components, then one grouped
    minimum (no Python loop over the nodes)."""
    import pandas as pd
    from scipy.sparse.csgraph import connected_components

    _, comp = connected_components(A, directed=True, connection="weak")
    return pd.Series(np.asarray(ids, dtype=object)).groupby(comp).transform("min").to_numpy()


def anchor_vectors(firsts: Sequence[Any], u: np.ndarray, basis: np.ndarray, length: float,
                   seed: int) -> np.ndarray:
    """``length * u + component_offset(first, seed, basis)`` for each component's smallest
    id ``first`` (``u`` and ``basis`` from :func:`anchor_basis`)."""
    out = np.empty((len(firsts), len(u)))
    cache: dict[str, np.ndarray] = {}
    for i, first in enumerate(firsts):
        key = str(first)
        if key not in cache:
            cache[key] = float(length) * u + component_offset(key, seed, basis)
        out[i] = cache[key]
    return out


def anchor_unreached(A: Any, X: np.ndarray, ids: Sequence[Any], length: float = 1.0,
                     seed: int = 0) -> tuple[np.ndarray, int]:
    """``X`` with the rows of unreached nodes replaced; and how many were.

    Parameters
    ----------
    A : scipy.sparse matrix
        The graph's weighted adjacency (n x n, any direction: components are weak).
    X : numpy.ndarray
        Every node's vector (n x d), in the order of ``A`` and ``ids``.
    ids : sequence
        Node ids (n), of one orderable type: a component's key is its smallest id.
    length : float
        The anchor's length ``a``.
    seed : int
        Seed of the per-component directions.

    Returns
    -------
    (numpy.ndarray, int)
        The new n x d float64 matrix (the reached rows unchanged) and the number of rows
        filled: the all-zero rows of nodes with at least one edge of non-zero weight.
    """
    import scipy.sparse as sp

    X = np.array(X, dtype=np.float64)
    A = sp.csr_matrix(A, copy=True)
    A.eliminate_zeros()  # edges of zero weight connect nothing
    linked = (np.diff(A.indptr) > 0) | (np.diff(A.tocsc().indptr) > 0)
    zero = zero_rows(X)
    idx = np.flatnonzero(zero & linked)
    if not len(idx):
        return X, 0
    firsts = component_firsts(A[idx][:, idx], np.asarray(ids, dtype=object)[idx])
    u, basis = anchor_basis(normalised_gram(X[~zero]))
    X[idx] = anchor_vectors(list(firsts), u, basis, length, seed)
    return X, len(idx)


# ---------------------------------------------------------------------------
# Spark
# ---------------------------------------------------------------------------


def _components_dataframes(vertices: Any, edges: Any, max_rounds: int = 10_000) -> Any:
    """``(id, component)`` of long keys by smallest-label propagation with DataFrame joins,
    both directions, until no label changes (each round one job, its lineage cut)."""
    from pyspark.sql import functions as F

    from sepne_spark.session import checkpoint

    both = checkpoint(edges.select("src", "dst").unionByName(edges.select(F.col("dst").alias("src"),
                                                                           F.col("src").alias("dst"))))
    labels = checkpoint(vertices.select("id", F.col("id").alias("component")))
    for _ in range(max_rounds):
        best = (both.join(labels.withColumnRenamed("id", "src"), "src")
                .groupBy(F.col("dst").alias("id")).agg(F.min("component").alias("new")))
        joined = labels.join(best, "id", "left")
        new = checkpoint(joined.select("id", F.least("component", F.coalesce("new", "component"))
                                       .alias("component"), (F.col("new") < F.col("component")).alias("moved")))
        if new.where(F.col("moved")).limit(1).count() == 0:
            return new.select("id", "component")
        labels = new.select("id", "component")
    raise RuntimeError(f"connected components: labels still moving after {max_rounds} rounds")  # pragma: no cover


#: Largest number of unreached nodes whose components are found in one task (their
#: edges gathered by one shuffle, SciPy's ``connected_components`` there): a few hundred
#: MB of one Python worker at the largest. Above it GraphFrames (or DataFrame joins).
#: Islands without a landmark are usually a small fraction of a graph: 148 of 188,811
#: nodes at 200,000 (BENCHMARKS.md), where GraphFrames' Pregel rounds and their jobs
#: cost tens of seconds for a handful of nodes.
ONE_TASK_COMPONENTS = 5_000_000


def _components_in_one_task(vertices: Any, edges: Any) -> Any:
    """``(id, first)`` of ``vertices`` (``id``) and ``edges`` (``src, dst``) by SciPy in one
    ``applyInPandas`` task: one shuffle of their rows, nothing collected."""
    import pandas as pd
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType

    from sepne_spark.graph import EDGE_ROW, NODE_ROW, edge_and_node_rows

    id_type = vertices.schema["id"].dataType
    rows = edge_and_node_rows(edges, vertices)
    schema = StructType([StructField("id", id_type, False), StructField("first", id_type, False)])

    def run(pdf: pd.DataFrame) -> pd.DataFrame:
        import scipy.sparse as sp

        kind = pdf["kind"].to_numpy()
        index = pd.Index(pdf["a"][kind == NODE_ROW])
        src = index.get_indexer(pdf["a"][kind == EDGE_ROW])
        dst = index.get_indexer(pdf["b"][kind == EDGE_ROW])
        keep = (src >= 0) & (dst >= 0)
        n = len(index)
        A = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
        return pd.DataFrame({"id": index.to_numpy(), "first": component_firsts(A, index.to_numpy())})

    return rows.groupBy(F.lit(0).alias("one")).applyInPandas(run, schema=schema)


def connected_components(spark: Any, vertices: Any, edges: Any, use_graphframes: bool | None = None,
                         nodes: int | None = None) -> Any:
    """``(id, first)``: each vertex and the smallest id of its (weakly) connected
    component. Up to :data:`ONE_TASK_COMPONENTS` vertices (``nodes``, when known) in one
    task with SciPy; otherwise by GraphFrames' ``connectedComponents`` (GraphX) when
    GraphFrames is on the session, else by DataFrame joins. ``use_graphframes=True`` or
    ``False`` picks one of the last two whatever the size. All three agree (a
    component's label is its smallest id)."""
    from pyspark.sql import functions as F

    from sepne_spark.partition import _keyed
    from sepne_spark.session import checkpoint, resolve_graphframes

    if use_graphframes is None and nodes is not None and nodes <= ONE_TASK_COMPONENTS:
        log.info("unreached nodes: connected components of %d nodes in one task", nodes)
        return _components_in_one_task(vertices, edges)
    via_gf = resolve_graphframes(spark, use_graphframes, "connected components")
    ids, kv, ke = _keyed(vertices, edges)
    if via_gf:
        from graphframes import GraphFrame

        log.info("unreached nodes: GraphFrames connectedComponents (graphx)")
        out = GraphFrame(kv, ke).connectedComponents(algorithm="graphx")
        keyed = checkpoint(out.select("id", F.col("component").cast("long").alias("component")))
        out.unpersist()
    else:
        log.info("unreached nodes: connected components by DataFrame joins")
        keyed = _components_dataframes(kv, ke)
    comps = ids.join(keyed.withColumnRenamed("id", "key"), "key").select("id", "component")
    firsts = comps.groupBy("component").agg(F.min("id").alias("first"))
    return comps.join(firsts, "component").select("id", "first")


def _gram_and_zeros(out: Any, column: str, dim: int) -> tuple[np.ndarray, int]:
    """In one job over ``out`` alone: the d x d Gram matrix of its L2-normalised non-zero
    rows and the number of its all-zero rows. Summed per partition in a partition-wise
    stage, then as :func:`sepne_spark.blocks.gram` (a few small tasks, an order of the
    partial matrices' own values); a few d x d rows collected."""
    import pandas as pd
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    from sepne_spark.blocks import _gram_total

    schema = StructType([StructField("data", BinaryType(), False), StructField("rows", IntegerType(), False),
                         StructField("zeros", LongType(), False)])

    def partial(batches):
        total, zeros = np.zeros((dim, dim)), 0
        for pdf in batches:
            if not len(pdf):
                continue
            Y = np.stack(pdf[column].to_numpy()).astype(np.float64)
            norms = np.linalg.norm(Y, axis=1)
            zeros += int((norms == 0).sum())
            Z = Y[norms > 0] / norms[norms > 0, None]
            total += Z.T @ Z
        yield pd.DataFrame({"data": [total.astype("<f8").tobytes()], "rows": [dim], "zeros": [zeros]})

    try:
        return _gram_total(out.select(column).mapInPandas(partial, schema=schema), column, count="zeros")
    except ValueError:  # no partition at all
        return np.zeros((dim, dim)), 0


def anchor_frame(out: Any, edges: Any, length: float, seed: int, dim: int, column: str = "embedding",
                 use_graphframes: bool | None = None, cached: list | None = None) -> tuple[Any, int]:
    """The distributed :func:`anchor_unreached`: ``out`` (``id``, ``column`` and any other
    columns) with the ``column`` of every unreached node replaced; and their count.

    Runs now: one job over ``out`` alone counts its zero rows and sums the reached rows'
    Gram matrix (d x d, the one matrix collected); nothing more runs when there are none.
    Otherwise the zero rows' ids are held, those of them whose node has an edge are
    counted (the edges' ends filtered against the held ids as they are read: neither
    the vectors nor the edges are shuffled while the ids are under Spark's broadcast
    threshold), and their components and new vectors are computed and held. Held tables
    report their real size to Spark's planner, so the returned DataFrame, which is lazy,
    joins the new vectors to ``out`` without a shuffle of ``out`` while they are under the
    same threshold (``spark.sql.autoBroadcastJoinThreshold``: Spark's choice, bounded by
    its setting, never a broadcast of the library's). The tables persisted are appended
    to ``cached`` for the caller to release.
    """
    import pandas as pd
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, DoubleType, StructField, StructType

    held = [] if cached is None else cached
    spark = out.sparkSession
    gram, zeros = _gram_and_zeros(out, column, dim)
    if zeros == 0:
        return out, 0
    live = edges.where(F.col("weight") != 0)
    ends = live.select(F.col("src").alias("id")).unionByName(live.select(F.col("dst").alias("id")))
    zero = F.forall(F.col(column), lambda x: x == 0)
    # The zero rows' ids, held and counted first so that the plans below know their true
    # size: the edge ends are then filtered against them where they are read (a broadcast
    # hash join while they are under spark.sql.autoBroadcastJoinThreshold) instead of
    # every end being shuffled to meet a few ids.
    zero_ids = out.where(zero).select("id").persist()
    held.append(zero_ids)
    zero_ids.count()
    unreached = ends.join(zero_ids, "id", "left_semi").distinct().persist()
    held.append(unreached)
    count = int(unreached.count())
    if count == 0:  # the zero rows are nodes without an edge: they stay zero
        return out, 0
    u, basis = anchor_basis(gram)
    inner = (live.join(unreached.select(F.col("id").alias("src")), "src", "left_semi")
             .join(unreached.select(F.col("id").alias("dst")), "dst", "left_semi").select("src", "dst"))
    firsts = connected_components(spark, unreached, inner, use_graphframes, nodes=count)
    id_type = out.schema["id"].dataType
    schema = StructType([StructField("id", id_type, False), StructField("~anchor", ArrayType(DoubleType()), False)])

    def vectors(batches):
        for pdf in batches:
            V = anchor_vectors(list(pdf["first"]), u, basis, length, seed)
            yield pd.DataFrame({"id": pdf["id"], "~anchor": list(V)})

    filled = firsts.mapInPandas(vectors, schema=schema).persist()
    held.append(filled)
    filled.count()  # filled now, so that the join below sees their size, as above
    cols = out.columns
    result = out.join(filled, "id", "left").select(
        *[F.coalesce(F.col("~anchor"), F.col(c)).alias(c) if c == column else F.col(c) for c in cols])
    return result, count


__all__ = ["ONE_TASK_COMPONENTS", "UNREACHED", "anchor_basis", "anchor_frame", "anchor_unreached", "anchor_vectors",
           "component_firsts", "component_offset", "connected_components", "normalised_gram", "offset_dims", "zero_rows"]
