"""The partition-wise stage: gather each set's blocks and run the NumPy solve.

One ``groupBy(set_id).applyInPandas`` call receives, for a set V_i, every entry it
needs as rows ``(set_id, kind, u, v, val, val_t, packed)``: its nodes, its rows and
columns of M, and its neighbours' landmark entries (packed, one row per neighbour),
from which it forms M_ii, M_i0, M_0i and the two-hop sums with sparse products. The
k x k and k x d summaries and the k landmark ids travel with the function
(O(k^2 + k d)).
"""
from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import scipy.sparse as sp
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StructField,
    StructType,
)

from sepne_spark.progress import SolveProgress
from sepne_spark.proximity import LandmarkBlocks
from sepne_spark.solver import LandmarkFactors, RepairedFactorisation, set_constants, solve_set

NODE, M_ROW, M_COL, LANDMARK = 0, 1, 2, 3


def output_schema(id_type: DataType) -> StructType:
    """Schema of embedding rows: ``id, embedding, context, is_landmark, set_id``."""
    return StructType(
        [
            StructField("id", id_type, False),
            StructField("embedding", ArrayType(DoubleType(), False), False),
            StructField("context", ArrayType(DoubleType(), False), False),
            StructField("is_landmark", BooleanType(), False),
            StructField("set_id", LongType(), False),
        ]
    )


#: One landmark entry of a neighbour in a packed record: the landmark's index ``l``,
#: M[l, v] and M[v, l] (little-endian int32, float64, float64: 20 bytes).
ENTRY = np.dtype([("l", "<i4"), ("val", "<f8"), ("val_t", "<f8")])


def _packed_schema(v_type: DataType) -> StructType:
    return StructType([StructField("v", v_type, False), StructField("packed", BinaryType(), False)])


def _concat_batches(first: pa.RecordBatch, second: pa.RecordBatch) -> pa.RecordBatch:
    """The rows of two record batches of one schema as one batch (``pa.concat_batches``
    where PyArrow has it, 19 on)."""
    if hasattr(pa, "concat_batches"):
        return pa.concat_batches([first, second])
    table = pa.Table.from_batches([first, second]).combine_chunks()
    return table.to_batches()[0] if table.num_rows else first.slice(0, 0)


def pack_landmark_entries(entries: DataFrame) -> DataFrame:
    """``(v, packed)``: each node's landmark entries (``v, l, val, val_t``) as one binary
    value, :data:`ENTRY` records in ascending ``l``.

    One shuffle by ``v`` and a sort within each partition; the records of each Arrow
    batch are packed by one NumPy call into one buffer, and each node's value is a
    slice of it, given by offsets (no Python object per node). A node whose entries
    span two batches is carried to the next one."""

    def pack(batches):
        carry = None
        for batch in batches:
            if carry is not None:
                batch = _concat_batches(carry, batch)
                carry = None
            if batch.num_rows == 0:
                continue
            v = batch.column("v").to_numpy(zero_copy_only=False)
            starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]])
            last = int(starts[-1])
            carry = batch.slice(last)  # the last node may go on in the next batch
            if last:
                yield _packed(batch.slice(0, last), starts[:-1])
        if carry is not None and carry.num_rows:
            yield _packed(carry, np.array([0]))

    return (
        entries.repartition("v").sortWithinPartitions("v", "l")
        .mapInArrow(pack, schema=_packed_schema(entries.schema["v"].dataType))
    )


def _packed(batch: pa.RecordBatch, starts: np.ndarray) -> pa.RecordBatch:
    """The ``(v, packed)`` rows of ``batch`` (sorted by v, then l), whose node runs begin
    at ``starts``: the records in one buffer, each node's value a slice of it."""
    rec = np.empty(batch.num_rows, dtype=ENTRY)
    for name in ENTRY.names:
        rec[name] = batch.column(name).to_numpy(zero_copy_only=False)
    offsets = (np.r_[starts, batch.num_rows] * ENTRY.itemsize).astype(np.int32)
    packed = pa.BinaryArray.from_buffers(pa.binary(), len(starts),
                                         [None, pa.py_buffer(offsets), pa.py_buffer(rec.tobytes())])
    return pa.RecordBatch.from_arrays([batch.column("v").take(pa.array(starts)), packed], names=["v", "packed"])


def set_records(
    assign: DataFrame, M_rows: DataFrame, M_cols: DataFrame, blocks: LandmarkBlocks
) -> DataFrame:
    """All rows the per-set solve needs, keyed by ``set_id``.

    A set V_i receives its nodes, every entry of its rows and of its columns of M (of
    which M_ii, M_i0 and M_0i are parts), and the landmark entries of each distinct
    non-landmark neighbour v of the set: M[l, v] for the out-neighbours (rows) and
    M[v, l] for the in-neighbours (columns). The two-hop sums Rhat_A and Rhat_B are then
    two sparse products inside the set's task (:func:`set_blocks`): a neighbour shared
    by many of the set's nodes is shipped once per set, not once per edge, and no Spark
    row is made per product.

    A neighbour's landmark entries travel as one row per (set, neighbour): ``packed``
    holds all of them (:func:`pack_landmark_entries`, both values of each). Which of
    the two a set uses (M[l, v] of an out-neighbour, M[v, l] of an in-neighbour)
    follows from its own rows and columns of M, so it is not shipped: an entry of a
    neighbour on the other side meets no entry of the set in :func:`set_blocks`. These
    rows are most of what the stage moves; as one row per entry they were 14 times as
    many on a power-law graph of 400,000 nodes (BENCHMARKS.md, "The set stage's
    landmark entries packed").
    On the other rows ``packed`` is null.

    Parameters
    ----------
    assign: ``(id, set_id)`` of the non-landmark nodes to embed.
    M_rows: entries ``(src, dst, m)`` including every row of M for those nodes.
    M_cols: entries ``(src, dst, m)`` including every column of M for those nodes.
    blocks: the landmark rows and columns of M.
    """
    def rec(df: DataFrame, kind: int, u: str, v: str, val: str | None, val_t: str | None = None,
            packed: str | None = None) -> DataFrame:
        # The id columns are never null: a null would turn integer ids into floats in
        # pandas. Rows of one node (its own, a neighbour's landmark entries) name it twice.
        return df.select(
            F.col("set_id").cast("long").alias("set_id"),
            F.lit(kind).cast("int").alias("kind"),
            F.col(u).alias("u"),
            F.col(v).alias("v"),
            (F.col(val) if val else F.lit(0.0)).cast("double").alias("val"),
            (F.col(val_t) if val_t else F.lit(0.0)).cast("double").alias("val_t"),
            (F.col(packed) if packed else F.lit(None).cast("binary")).alias("packed"),
        )

    MR = M_rows.join(assign.withColumnRenamed("id", "src"), "src")  # the set's rows: src, dst, m, set_id
    MC = M_cols.join(assign.withColumnRenamed("id", "dst"), "dst")  # the set's columns
    nbrs = (  # each distinct neighbour of a set, out or in
        MR.select("set_id", F.col("dst").alias("v")).unionByName(MC.select("set_id", F.col("src").alias("v")))
        .distinct()
    )
    entries = blocks.row_nl.select("v", "l", F.col("m").alias("val")).join(
        blocks.col_nl.select("v", "l", F.col("m").alias("val_t")), ["v", "l"], "full"
    ).fillna(0.0, ["val", "val_t"])  # v, l, M[l, v], M[v, l]
    landmark_entries = nbrs.join(pack_landmark_entries(entries), "v")
    return (
        rec(assign, NODE, "id", "id", None)
        .unionByName(rec(MR, M_ROW, "src", "dst", "m"))
        .unionByName(rec(MC, M_COL, "dst", "src", "m"))
        .unionByName(rec(landmark_entries, LANDMARK, "v", "v", None, packed="packed"))
    )


@dataclass
class SetBlocks:
    """One set's inputs to :func:`solve_set`, from its records."""

    nodes: pd.Index
    M_ii: sp.csr_matrix
    M_i0: sp.csr_matrix
    M_0i: sp.csr_matrix
    Rhat_A: np.ndarray
    Rhat_B: np.ndarray


def _sparse(data: np.ndarray, i: np.ndarray, j: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """CSR matrix of the entries whose indices are both found (>= 0), each row's
    entries in ascending column order, so every product below adds its terms in an
    order that depends on the graph only, not on how Spark delivered the rows."""
    keep = (i >= 0) & (j >= 0)
    i, j, data = i[keep], j[keep], data[keep]
    order = np.lexsort((j, i))
    return sp.csr_matrix((data[order], (i[order], j[order])), shape=shape)


def _unpacked(pdf: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The landmark entries of a set's LANDMARK rows: for each entry its neighbour v, the
    landmark's index l, M[l, v] and M[v, l]."""
    blobs = pdf["packed"].tolist()
    counts = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs)) // ENTRY.itemsize
    rec = np.frombuffer(b"".join(blobs), dtype=ENTRY)
    return np.repeat(pdf["v"].to_numpy(), counts), rec["l"].astype(np.int64), rec["val"], rec["val_t"]


def set_blocks(pdf: pd.DataFrame, landmarks: pd.Index) -> SetBlocks:
    """Build a set's blocks from its records (:func:`set_records`).

    ``landmarks`` holds the k landmark ids in the order of their index ``l``.
    Rhat_A = L_row R^T and Rhat_B = L_col^T C, with R (n_i x p) the set's rows over
    its non-landmark out-neighbours, L_row (k x p) their landmark entries M[l, v], and
    C, L_col the same for the columns and in-neighbours.
    """
    k = len(landmarks)
    kind = pdf["kind"].to_numpy()
    nodes = pd.Index(pdf["u"][kind == NODE].unique()).sort_values()
    n = len(nodes)

    def part(code: int) -> tuple[pd.Series, pd.Series, np.ndarray]:
        sel = kind == code
        return pdf["u"][sel], pdf["v"][sel], pdf["val"][sel].to_numpy(np.float64)

    lm_nbr, lm_l, lm_val, lm_val_t = _unpacked(pdf[kind == LANDMARK])

    def two_hop(ui: np.ndarray, v: pd.Series, m: np.ndarray, ml: np.ndarray) -> np.ndarray:
        stored = ml != 0  # ml: M[l, w] or M[w, l]; w on the other side has no column in near
        w, l, ml = lm_nbr[stored], lm_l[stored], ml[stored]  # w: a neighbour, l: a landmark
        nbrs = pd.Index(pd.unique(w)).sort_values()  # ascending id: the products' order of terms
        near = _sparse(m, ui, nbrs.get_indexer(v), (n, len(nbrs)))  # the set's entries to its neighbours
        far = _sparse(ml, l, nbrs.get_indexer(w), (k, len(nbrs)))
        return (far @ near.T).toarray()

    u, v, m = part(M_ROW)  # m = M[u, v], u in the set
    ui = nodes.get_indexer(u)
    Rhat_A = two_hop(ui, v, m, lm_val)
    M_ii = _sparse(m, ui, nodes.get_indexer(v), (n, n))
    M_i0 = _sparse(m, ui, landmarks.get_indexer(v), (n, k))
    u, v, m = part(M_COL)  # m = M[v, u], u in the set
    ui = nodes.get_indexer(u)
    Rhat_B = two_hop(ui, v, m, lm_val_t)
    M_0i = _sparse(m, landmarks.get_indexer(v), ui, (k, n))
    return SetBlocks(nodes, M_ii, M_i0, M_0i, Rhat_A, Rhat_B)


def make_set_solver(
    factors: LandmarkFactors,
    S_A: np.ndarray,
    S_B: np.ndarray,
    lam: float,
    eta: float,
    iters: int,
    landmark_ids: list,
    dtype: str = "float64",
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The pandas function run once per set by ``applyInPandas``.

    The set-independent k x k parts of the systems are computed here, once, and travel
    with the function (O(k^2 + k d)) in place of S_A and S_B, with the k landmark ids.
    """
    constants = set_constants(factors, S_A, S_B, lam, eta)
    landmarks = pd.Index(landmark_ids)
    progress = SolveProgress()

    def solve(pdf: pd.DataFrame) -> pd.DataFrame:
        started = time.time()
        set_id = int(pdf["set_id"].iloc[0])
        b = set_blocks(pdf, landmarks)
        n = len(b.nodes)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RepairedFactorisation)
            W, C = solve_set(constants.factors, None, None, b.M_ii, b.M_i0, b.M_0i, b.Rhat_A, b.Rhat_B, lam, eta,
                             iters, dtype=dtype, constants=constants)
        for w in caught:  # to the executor log, naming the set
            print(f"sepne solve WARNING: set {set_id} ({n} nodes): {w.message}", file=sys.stderr, flush=True)
        if not (np.isfinite(W).all() and np.isfinite(C).all()):
            raise FloatingPointError(
                f"set {set_id}: the solve produced NaN or infinite values for {n} nodes "
                f"(check eta > 0 and the input weights)"
            )
        progress.finished(set_id, n, time.time() - started)
        return pd.DataFrame(
            {
                "id": b.nodes.to_numpy(),
                "embedding": list(W.T),
                "context": list(C.T),
                "is_landmark": np.zeros(n, dtype=bool),
                "set_id": np.full(n, set_id, dtype=np.int64),
            }
        )

    return solve


def embed_sets(
    records: DataFrame,
    factors: LandmarkFactors,
    S_A: np.ndarray,
    S_B: np.ndarray,
    lam: float,
    eta: float,
    iters: int,
    id_type: DataType,
    landmark_ids: list,
    dtype: str = "float64",
) -> DataFrame:
    """Run the per-set solve over ``records`` (from :func:`set_records`)."""
    fn = make_set_solver(factors, S_A, S_B, lam, eta, iters, landmark_ids, dtype)
    return records.groupBy("set_id").applyInPandas(fn, schema=output_schema(id_type))
