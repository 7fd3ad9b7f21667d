"""Baselines the SepNE paper compares against.

* :func:`svd_embedding`: the full SVD of the proximity matrix (the optimum of the
  matrix-factorisation objective SepNE approximates; dense, small graphs only).
* :func:`nystrom_embedding`: the Nystrom method with the same landmarks as SepNE. The
  landmarks are embedded by the SVD of their block ``M00``, exactly as SepNE does, and
  every other node from its own landmark row and column only. It equals SepNE's
  landmark-only solution (no local or global terms) in the limit ``eta -> 0``.
* :func:`random_walk_embeddings`: DeepWalk-style embeddings from GraphFrames'
  ``RandomWalkEmbeddings`` (random walks with restart, then Word2Vec or Hash2Vec),
  which needs the GraphFrames JAR on the session.
"""
from __future__ import annotations

import os
import tempfile
import uuid
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sepne_spark.errors import UserError
from sepne_spark.session import graphframes_available
from sepne_spark.solver import landmark_factors

__all__ = ["svd_embedding", "nystrom_embedding", "random_walk_embeddings"]


def svd_embedding(M: np.ndarray | sp.spmatrix | sp.sparray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank-``d`` factorisation of ``M`` by its full SVD.

    ``M = U S V^T``; ``W = U_d S_d^1/2`` and ``C = V_d S_d^1/2``, so that ``W C^T`` is the
    best rank-``d`` approximation of ``M`` in Frobenius norm.

    Parameters
    ----------
    M : numpy.ndarray or scipy sparse matrix
        Proximity matrix (n x n); made dense.
    d : int
        Dimension (at most n; larger values are clipped).

    Returns
    -------
    W, C : numpy.ndarray
        Embeddings and context vectors, each n x d.
    """
    M = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=np.float64)
    U, s, Vt = np.linalg.svd(M)
    d = min(int(d), len(s))
    root = np.sqrt(s[:d])
    return U[:, :d] * root, Vt[:d].T * root


def nystrom_embedding(
    M: np.ndarray | sp.spmatrix | sp.sparray,
    landmarks: Sequence[int],
    d: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The Nystrom method with the given landmarks.

    The landmark block ``M00 = U S V^T`` gives ``Phi = (U_d S_d^1/2)^T`` and
    ``Psi = (V_d S_d^1/2)^T`` (d x k, :func:`sepne_spark.solver.landmark_factors`, the
    solver's own, with its deterministic signs), which
    are the landmark rows of ``W`` and ``C``. Every other node ``u`` is embedded from its
    landmark columns/rows only, by least squares:

    * ``W_u`` minimises ``||M_u0 - W_u^T Psi||``, i.e. ``W_u = S_d^-1 Psi M_u0^T``;
    * ``C_u`` minimises ``||M_0u - Phi^T C_u||``, i.e. ``C_u = S_d^-1 Phi M_0u``

    (``Psi Psi^T = Phi Phi^T = S_d``). Components of zero singular value are set to 0
    (the minimum-norm solution).

    Parameters
    ----------
    M : numpy.ndarray or scipy sparse matrix
        Proximity matrix (n x n); only its landmark rows and columns are read.
    landmarks : sequence of int
        Indices of the k landmarks, in landmark order.
    d : int
        Dimension (at most k).

    Returns
    -------
    W, C : numpy.ndarray
        Embeddings and context vectors, each n x d' with ``d' = min(d, k)``.
    """
    V0 = np.asarray(landmarks, dtype=np.int64)
    if V0.size == 0 or len(np.unique(V0)) != V0.size:
        raise ValueError("landmarks must be a non-empty list of distinct indices")
    n = M.shape[0]
    if sp.issparse(M):
        Mc = sp.csc_matrix(M, dtype=np.float64)
        cols = np.asarray(Mc[:, V0].toarray())  # n x k: M[u, landmarks]
        rows = np.asarray(sp.csr_matrix(M, dtype=np.float64)[V0].toarray())  # k x n
    else:
        M = np.asarray(M, dtype=np.float64)
        cols, rows = M[:, V0], M[V0]
    M00 = rows[:, V0]
    factors = landmark_factors(M00, d)
    Phi, Psi = factors.Phi, factors.Psi
    s = np.einsum("ij,ij->i", Phi, Phi)  # the kept singular values S_d
    tol = (s.max() if s.size else 0.0) * max(M00.shape) * np.finfo(float).eps
    inv = np.where(s > tol, 1.0 / np.where(s > tol, s, 1.0), 0.0)
    W = (cols @ Psi.T) * inv  # row u: (S^-1 Psi M_u0^T)^T
    C = (rows.T @ Phi.T) * inv  # row u: (S^-1 Phi M_0u)^T
    W[V0] = Phi.T
    C[V0] = Psi.T
    assert W.shape[0] == n
    return W, C


def random_walk_embeddings(
    spark: SparkSession,
    edges_df: DataFrame,
    dim: int = 128,
    mode: str = "word2vec",
    seed: int = 0,
    directed: bool = False,
    walks_per_node: int = 5,
    num_batches: int = 5,
    walks_per_batch: int = 10,
    restart_probability: float = 0.1,
    max_neighbors: int = 50,
    window_size: int = 5,
    word2vec_iter: int = 1,
    word2vec_partitions: int = 1,
    hash2vec_norm_channel: bool = True,
    aggregate_neighbors: bool = False,
    temporary_prefix: str | None = None,
) -> DataFrame:
    """DeepWalk-style embeddings with GraphFrames' ``RandomWalkEmbeddings``.

    Random walks with restart are generated by GraphFrames and turned into vectors by
    Spark ML's Word2Vec (``mode="word2vec"``, skip-gram as in DeepWalk) or by
    GraphFrames' Hash2Vec (``mode="hash2vec"``, a hashing variant without training).

    Parameters
    ----------
    spark : SparkSession
        Session with the GraphFrames JAR (classic) or Connect plugin.
    edges_df : DataFrame
        Edges ``(src, dst, ...)``; the vertices are their endpoints.
    dim : int
        Embedding dimension.
    mode : {"word2vec", "hash2vec"}
        Sequence model.
    seed : int
        Seed of the walks and of the sequence model.
    directed : bool
        Walk along edge directions only.
    walks_per_node, num_batches, walks_per_batch, restart_probability, max_neighbors
        Random-walk settings (GraphFrames' ``set_rw_model``).
    window_size, word2vec_iter
        Context window (both modes) and Word2Vec epochs (``mode="word2vec"``); the
        Word2Vec minimum count is 0 so that every walked vertex gets a vector.
    word2vec_partitions : int
        Spark ML Word2Vec ``numPartitions`` (1, its default, trains on one core; more
        trains in parallel at some cost in quality). When it ends, Word2Vec collects
        every partition's vectors to the driver: at 10^6 vertices, d = 128 and two
        partitions that was 1,031 MiB, over Spark's default ``spark.driver.maxResultSize``
        of 1 GiB, and the call failed after its training; raise that setting when the
        session is built (it cannot be changed on a running session). The driver then
        holds those vectors and the model built from them: at that size a 6 GB heap ran
        out, a 12 GB one peaked at 13.5 GB of resident memory (BENCHMARKS.md).
    hash2vec_norm_channel : bool
        Hash2Vec L2-normalises every vector; with this (GraphFrames' default) the
        magnitude lost is kept as one extra channel, ``log(norm + 1) / sqrt(dim)``, so
        the vectors have ``dim + 1`` components. Without it they have ``dim``.
    aggregate_neighbors : bool
        Concatenate each vector with the mean of sampled neighbours' vectors
        (GraphFrames' option; doubles the dimension). Off by default.
    temporary_prefix : str, optional
        Folder for the walks; by default a fresh folder under ``spark.checkpoint.dir``
        (or the local temporary directory). On a cluster it must be shared storage.

    Returns
    -------
    DataFrame
        ``(id, embedding)``, ``embedding`` an ``array<double>`` (length ``dim``; ``dim + 1``
        for Hash2Vec with ``hash2vec_norm_channel``; twice that with
        ``aggregate_neighbors``); ``id`` has the type of the edges' ``src`` column.
        One row per vertex that appears in an edge.

    Raises
    ------
    UserError
        When GraphFrames cannot be used from ``spark`` (its JAR is missing), or for an
        unknown ``mode``.
    """
    if mode not in ("word2vec", "hash2vec"):
        raise UserError(f"unknown random-walk embedding mode {mode!r}; expected 'word2vec' or 'hash2vec'")
    if not graphframes_available(spark):
        raise UserError(
            "random-walk embeddings need the GraphFrames JVM library: put the GraphFrames JARs "
            "(graphframes and graphframes-graphx) on the session, e.g. in jars/ or $SEPNE_SPARK_JARS "
            "for local sessions, or with --packages io.graphframes:graphframes-spark4_2.13 / spark.jars "
            "on a cluster (under Spark Connect the server needs the graphframes-connect plugin)"
        )
    from graphframes import GraphFrame
    from graphframes.graphframe import RandomWalkEmbeddings

    id_type = edges_df.schema["src"].dataType
    vertices = (
        edges_df.select(F.col("src").alias("id"))
        .unionByName(edges_df.select(F.col("dst").alias("id")))
        .distinct()
    )
    graph = GraphFrame(vertices, edges_df.select("src", "dst"))
    if temporary_prefix is None:
        base = spark.conf.get("spark.checkpoint.dir", None) or tempfile.gettempdir()
        temporary_prefix = os.path.join(base, f"sepne-walks-{uuid.uuid4().hex}")
    rwe = RandomWalkEmbeddings(graph)
    rwe.set_rw_model(
        temporary_prefix=temporary_prefix,
        use_edge_direction=directed,
        max_neighbors_per_vertex=max_neighbors,
        num_walks_per_node=walks_per_node,
        num_batches=num_batches,
        walks_per_batch=walks_per_batch,
        restart_probability=restart_probability,
        seed=seed,
    )
    if mode == "word2vec":
        rwe.set_word2vec(
            max_iter=word2vec_iter,
            embeddings_dim=dim,
            window_size=window_size,
            num_partitions=word2vec_partitions,
            min_count=0,
            seed=seed,
        )
    else:
        rwe.set_hash2vec(
            embeddings_dim=dim,
            context_size=window_size,
            hashing_seed=seed,
            sign_seed=seed + 1,
            l2_norm=True,
            save_norm=hash2vec_norm_channel,
        )
    if aggregate_neighbors:
        rwe.set_neighbors_aggregation(max_neighbors=max_neighbors, seed=seed)
    else:
        rwe.unset_neighbors_aggregation()
    rwe.set_clean_up_after_run(True)
    out = rwe.run()
    emb = out.schema["embedding"].dataType
    if type(emb).__name__ == "VectorUDT":
        from pyspark.ml.functions import vector_to_array

        vec = vector_to_array(F.col("embedding"))
    else:
        vec = F.col("embedding").cast("array<double>")
    return out.select(F.col("id").cast(id_type).alias("id"), vec.alias("embedding"))
