"""The spectral propagation stage on Spark: ProNE's filter applied to SepNE's output.

SepNE embeds a node from its proximity to the landmarks. With M = I + A on a large
sparse graph most nodes have no landmark within two hops, so the solve alone leaves
them with zero (or near-zero) vectors. This stage smooths every vector over the graph
with the band-pass filter of ProNE (Zhang et al., IJCAI 2019), which reaches
``2 order - 1`` hops, and re-orthogonalises the result: every node with an edge then has
a vector made from its neighbourhood's. Before the filter, ``refine_steps`` rounds of
subspace iteration (:func:`sepne_spark.spectral.refine`) can draw the vectors towards
the graph's dominant eigenvectors where the landmarks found too little: each round is
one product whose tasks also sum the d x d Gram matrix of their result
(:meth:`~sepne_spark.blocks.BlockGraph.product_with_gram`); the orthonormalising d x d
factor made from it is applied inside the next product (or the pass that normalises the
rows after the last). Last, ``average_steps`` steps of neighbourhood averaging
(:func:`sepne_spark.spectral.average`, one product each) can lean every vector towards
its neighbours'.

The arithmetic is :func:`sepne_spark.spectral.smooth` (:func:`~sepne_spark.spectral.propagate`
followed by :func:`~sepne_spark.spectral.reorthogonalize`), step for step: each sparse product is one
:meth:`sepne_spark.blocks.BlockGraph.product` (partial products by pair of blocks, then
one task per row chunk that adds them), each combination runs inside that per-chunk task,
and where a d x d Gram matrix is needed those tasks form their chunks' parts of it,
which a one-row stage adds and collects (d x d: nothing of size n reaches the driver);
the factor made from it is applied by the next stage's tasks, the last one as the
returned rows are read. With ``blocks > 1`` the products run
when this function is called (each is checkpointed as it is built, see
:mod:`sepne_spark.blocks`) and the returned DataFrame reads their result; with
``blocks == 1`` the whole filter runs in one task at the first action.

Cost: ``average_steps + refine_steps + 2 order - 1`` products, each moving about ``2 x blocks x n x d`` values on a
graph without locality (the shipped column blocks, then the partial sums) plus the four
n x d matrices of the recurrence; ``blocks`` trades memory per task (a task holds one
block's rows of one n x d matrix) against that volume.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from sepne_spark.blocks import BlockGraph, gram
from sepne_spark.errors import SettingError
from sepne_spark.graph import EDGE_ROW, NODE_ROW, edge_and_node_rows
from sepne_spark.progress import StepProgress, TaskProgress
from sepne_spark.proximity import log_ratio
from sepne_spark.spectral import (
    REFINE_OPERATORS,
    chebyshev_coefficients,
    gram_transform,
    l2_normalize,
    orthonormalizer,
    smooth,
)

#: Bytes of the shipped n x d matrix per row block when the number of blocks is chosen
#: from the graph's size. A product's task holds one column block's rows of the shipped
#: matrix (a few copies while decoding, one of them in float64) and an update's task one
#: row chunk, so this bounds memory per task; more blocks ship the matrix more times.
#: 500,000 nodes at d = 128 in float64, 10^6 in float32.
BLOCK_BYTES = 512_000_000
#: Up to this many nodes the whole propagation runs in one task (one block).
ONE_TASK_NODES = 100_000


def default_blocks(nodes: int, minimum: int = 2, dim: int = 128, dtype: str = "float32") -> int:
    """Row blocks for a graph of ``nodes`` nodes: 1 up to :data:`ONE_TASK_NODES` nodes
    (one task runs the whole filter in SciPy, after a single shuffle), else
    ``max(minimum, ceil(nodes * dim * itemsize / BLOCK_BYTES))``: one block per 512 MB
    of the n x ``dim`` matrix stored in ``dtype`` (10^6 nodes at d = 128 in float32)."""
    if int(nodes) <= ONE_TASK_NODES:
        return 1
    size = int(nodes) * int(dim) * np.dtype(dtype).itemsize
    return max(int(minimum), math.ceil(size / BLOCK_BYTES))


def propagate_embeddings(
    vertices: DataFrame,
    edges: DataFrame,
    embeddings: DataFrame,
    order: int = 10,
    mu: float = 0.2,
    theta: float = 0.5,
    blocks: int = 2,
    seed: int = 0,
    dtype: str = "float32",
    column: str = "embedding",
    refine_steps: int = 0,
    average_steps: int = 0,
    refine_operator: str = "transition",
) -> DataFrame:
    """ProNE's spectral propagation and re-orthogonalisation of ``embeddings``, after
    ``refine_steps`` rounds of subspace iteration and followed by ``average_steps`` steps
    of neighbourhood averaging when asked.

    The vectors are L2-normalised first (all-zero ones stay zero), so that the filter
    weighs every node's base vector alike, whatever its norm.

    Parameters
    ----------
    vertices : DataFrame
        ``id`` of every node; each must have a row in ``embeddings``.
    edges : DataFrame
        ``src, dst, weight``: the weighted adjacency A as the graph holds it (an
        undirected graph has both directions).
    embeddings : DataFrame
        ``id`` and ``column`` (array of d doubles).
    order, mu, theta :
        The filter of :func:`sepne_spark.spectral.propagate`: ``order`` Chebyshev terms
        (``2 order - 1`` sparse products; ``order = 1`` returns ``embeddings``' vectors
        unchanged), shift ``mu``, Bessel parameter ``theta``.
    blocks : int
        Row blocks of the products (:class:`~sepne_spark.blocks.BlockGraph`).
    seed : int
        Seed of the hash that assigns nodes to blocks.
    dtype : str
        Type the n x d matrices are stored and shipped in between steps (the
        ``propagation_dtype`` setting: float32 by default, or float64).
    column : str
        Name of the vector column, in and out.
    refine_steps : int
        Rounds of :func:`~sepne_spark.spectral.refine` before the filter (one sparse
        product and one d x d Gram matrix each); 0: none.
    average_steps : int
        Steps of :func:`~sepne_spark.spectral.average` last, on the rows normalised (one
        sparse product each); 0: none.
    refine_operator : {"transition", "pmi"}
        The refinement's operator: ``T = D^-1 (I + A)`` or the one-hop log-ratio matrix
        (:func:`sepne_spark.proximity.log_ratio`, stored by block once more under the same
        index).

    Returns
    -------
    DataFrame
        ``(id, column)``: ``U S^1/2`` of ``Y = propagate(A, E)`` (column signs fixed by
        :func:`~sepne_spark.spectral.gram_transform`) with ``E`` the normalised
        vectors (of the refined basis with ``refine_steps``), averaged with
        ``average_steps``: what :func:`sepne_spark.spectral.smooth` returns; lazy.
    """
    refine_steps, average_steps = int(refine_steps), int(average_steps)
    if refine_operator not in REFINE_OPERATORS:
        raise SettingError(f"refine_operator must be one of {', '.join(REFINE_OPERATORS)}; got {refine_operator!r}")
    if order <= 1 and refine_steps == 0 and average_steps == 0:
        return embeddings.select("id", column)
    if blocks == 1:
        return _in_one_task(vertices, edges, embeddings, order, mu, theta, column, refine_steps, average_steps,
                            refine_operator)
    bg = BlockGraph.build(vertices, edges.select("src", "dst", F.col("weight").alias("value")),
                          blocks=blocks, seed=seed, dtype=dtype)
    done = StepProgress("SepNE propagation: product",
                        average_steps + refine_steps + (2 * order - 1 if order > 1 else 0),
                        first_note="with its input vectors")
    c = [float(x) for x in chebyshev_coefficients(order, theta)]
    shift = 1.0 - float(mu)
    state = bg.to_chunks(embeddings, column, "x0").unionByName(bg.row_sums("s"))
    state = bg.map_blocks(state, lambda o: {"x0": l2_normalize(o["x0"]), "s": o["s"]})

    def t_of(Y: np.ndarray, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
        return (Z + Y) / (1.0 + s)  # T Z = D^-1 (I + A) Z, with Y = A Z

    def averaged(state: DataFrame) -> DataFrame:
        """out = e + T e + ... + T^S e of the state's "x0" (rows normalised): each product
        ships the last power, "z", and adds it to the running sum, "acc", in the same
        task; the last one's sum is the result."""

        def step(Y: np.ndarray, o: Mapping[str, np.ndarray], ship: str, last: bool) -> dict[str, np.ndarray]:
            z = t_of(Y, o[ship], o["s"])
            acc = o.get("acc", o[ship]) + z
            return {"acc": acc} if last else {"z": z, "acc": acc, "s": o["s"]}

        for r in range(1, average_steps + 1):
            ship = "x0" if r == 1 else "z"
            state = bg.product(state, ship, lambda Y, o, ship=ship, last=r == average_steps: step(Y, o, ship, last))
            done(f"averaging step {r} of {average_steps}")
        return bg.from_chunks(state, "acc", column)

    def finished(state: DataFrame, name: str, right: np.ndarray) -> DataFrame:
        """The result: matrix ``name`` times the d x d ``right`` as its rows are read, or,
        with averaging, those rows normalised and averaged."""
        if not average_steps:
            return bg.from_chunks(state, name, column, right=right)
        return averaged(bg.map_blocks(state, lambda o: {"x0": l2_normalize(o[name] @ right), "s": o["s"]}))

    if refine_steps:
        # Q <- orthonormal basis of T Q (or P Q). Each round's orthonormalising factor R
        # (d x d, from the Gram matrix of Y = T Q) is applied inside the next product, row
        # by row: T (Y R) = (T Y) R, so a round is one product, whose tasks also form the
        # Gram matrix of their chunks of Y.
        if refine_operator == "pmi":
            op = bg.reweighted(log_ratio(edges))

            def apply(Y: np.ndarray, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
                return Y  # P Z is the product itself
        else:
            op, apply = bg, t_of
        state, G = op.product_with_gram(state, "x0", lambda Y, o: {"y": apply(Y, o["x0"], o["s"]), "s": o["s"]}, "y")
        done(f"refinement round 1 of {refine_steps}")
        for r in range(2, refine_steps + 1):
            R = orthonormalizer(G)
            state, G = op.product_with_gram(
                state, "y", lambda Y, o, R=R: {"y": apply(Y, o["y"], o["s"]) @ R, "s": o["s"]}, "y")
            done(f"refinement round {r} of {refine_steps}")
        R = orthonormalizer(G)
        state = bg.map_blocks(state, lambda o, R=R: {"x0": l2_normalize(o["y"] @ R), "s": o["s"]})
    if order <= 1 and refine_steps == 0:  # the averaging alone
        return averaged(state)
    if order <= 1:  # the refined basis, re-orthogonalised as it is (then averaged)
        return finished(state, "x0", gram_transform(gram(state, "x0")))

    last = order - 1  # index of the last Chebyshev term

    def keep(own: Mapping[str, np.ndarray], **new: np.ndarray) -> dict[str, np.ndarray]:
        out = {k: v for k, v in own.items() if k != "t"}
        out.update(new)
        return out

    # X E: two products with M = (1 - mu) I - T.
    state = bg.product(state, "x0", lambda Y, o: keep(o, t=shift * o["x0"] - t_of(Y, o["x0"], o["s"])))
    done("filter")

    def first(Y: np.ndarray, o: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        E = o["x0"]
        x1 = 0.5 * (shift * o["t"] - t_of(Y, o["t"], o["s"])) - E
        u = E - (c[0] * E + c[1] * x1)  # u = E - conv
        return keep(o, x1=x1, u=u) if last > 1 else {"s": o["s"], "u": u}

    state = bg.product(state, "t", first)
    done("filter")
    for i in range(2, order):
        state = bg.product(state, "x1", lambda Y, o: keep(o, t=shift * o["x1"] - t_of(Y, o["x1"], o["s"])))
        done("filter")

        def step(Y: np.ndarray, o: Mapping[str, np.ndarray], ci: float = c[i], final: bool = i == last):
            x2 = (shift * o["t"] - t_of(Y, o["t"], o["s"])) - 2.0 * o["x1"] - o["x0"]
            u = o["u"] - ci * x2
            return {"s": o["s"], "u": u} if final else keep(o, x0=o["x1"], x1=x2, u=u)

        state = bg.product(state, "t", step)
        done("filter")
    # Y = (I + A) u = D T u; then U S^1/2 = Y V S^-1/2 from the Gram matrix of Y.
    state, G = bg.product_with_gram(state, "u", lambda Y, o: {"y": o["u"] + Y, "s": o["s"]}, "y")
    done("filter, last")
    return finished(state, "y", gram_transform(G))


def _in_one_task(
    vertices: DataFrame, edges: DataFrame, embeddings: DataFrame, order: int, mu: float, theta: float, column: str,
    refine_steps: int = 0, average_steps: int = 0, refine_operator: str = "transition",
) -> DataFrame:
    """The whole filter in one ``applyInPandas`` task: :func:`~sepne_spark.spectral.propagate`
    and :func:`~sepne_spark.spectral.reorthogonalize` themselves, on the graph gathered
    by one shuffle. For graphs small enough for one worker's memory; it saves the
    ``2 order`` shuffles of the block products."""
    id_type = vertices.schema["id"].dataType
    vec = embeddings.schema[column].dataType
    parts = edge_and_node_rows(
        edges, vertices.select("id").join(embeddings.select("id", column), "id", "left"),
        {"w": F.col("weight").cast("double"), "x": F.lit(None).cast(vec)},
        {"w": F.lit(None).cast("double"), "x": F.col(column)},
    )
    schema = StructType([StructField("id", id_type, False), StructField(column, vec, False)])

    def run(pdf: pd.DataFrame) -> pd.DataFrame:
        nodes = pdf[pdf["kind"] == NODE_ROW]
        index = pd.Index(nodes["a"]).sort_values()
        if index.has_duplicates:
            raise ValueError("propagation: a node has more than one embedding row")
        missing = nodes["x"].isna().to_numpy()
        if missing.any():
            raise ValueError(f"propagation: {int(missing.sum())} nodes have no embedding, e.g. "
                             f"{nodes['a'][missing].head(3).tolist()}")
        E = np.vstack(nodes.set_index("a").loc[index, "x"].to_numpy()).astype(np.float64)
        ed = pdf[pdf["kind"] == EDGE_ROW]
        n = len(index)
        A = sp.csr_matrix((ed["w"].to_numpy(np.float64), (index.get_indexer(ed["a"]), index.get_indexer(ed["b"]))),
                          shape=(n, n))
        progress = TaskProgress("propagate")
        Z = smooth(A, E, order, mu, theta, refine_steps, average_steps, refine_operator, report=progress.step)
        return pd.DataFrame({"id": index.to_numpy(), column: list(Z)})

    return parts.groupBy(F.lit(0).alias("one")).applyInPandas(run, schema=schema)


__all__ = ["BLOCK_BYTES", "ONE_TASK_NODES", "default_blocks", "l2_normalize", "propagate_embeddings"]
