"""The partition-wise stage: gather each set's blocks and run the NumPy solve.

One ``groupBy(set_id).applyInPandas`` call receives, for a set V_i, every entry it
needs as rows ``(set_id, kind, u, v, l, val)``: its nodes, M_ii, M_i0, M_0i and the
two-hop sums. The k x k and k x d summaries travel with the function (O(k^2 + k d)).
"""
from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StructField,
    StructType,
)

from sepne_spark.progress import SolveProgress
from sepne_spark.proximity import LandmarkBlocks, ordered_sum
from sepne_spark.solver import LandmarkFactors, RepairedFactorisation, set_constants, solve_set

NODE, M_II, R_A, R_B, M_I0, M_0I = 0, 1, 2, 3, 4, 5


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


def set_records(
    assign: DataFrame, M_rows: DataFrame, M_cols: DataFrame, blocks: LandmarkBlocks
) -> DataFrame:
    """All rows the per-set solve needs, keyed by ``set_id``.

    Parameters
    ----------
    assign: ``(id, set_id)`` of the non-landmark nodes to embed.
    M_rows: entries ``(src, dst, m)`` including every row of M for those nodes.
    M_cols: entries ``(src, dst, m)`` including every column of M for those nodes.
    blocks: the landmark rows and columns of M.
    """
    def rec(df: DataFrame, kind: int, u: str, v: str | None, l: str | None, val: str) -> DataFrame:
        id_type = assign.schema["id"].dataType
        return df.select(
            F.col("set_id").cast("long").alias("set_id"),
            F.lit(kind).cast("int").alias("kind"),
            F.col(u).alias("u"),
            (F.col(v) if v else F.lit(None).cast(id_type)).alias("v"),
            (F.col(l) if l else F.lit(None).cast("int")).alias("l"),
            (F.col(val) if val else F.lit(0.0)).cast("double").alias("val"),
        )

    a_src = assign.withColumnRenamed("id", "src")
    a_dst = assign.withColumnRenamed("id", "dst")
    MR = M_rows.join(a_src, "src")  # rows of the set's nodes: src, dst, m, set_id
    MC = M_cols.join(a_dst, "dst")  # columns of the set's nodes
    ii = MR.join(a_dst, ["dst", "set_id"])
    ra = (
        MR.join(blocks.row_nl.select(F.col("v").alias("dst"), "l", F.col("m").alias("ml")), "dst")
        .groupBy("set_id", "src", "l")
        .agg(ordered_sum(F.col("m") * F.col("ml")).alias("r"))
    )
    rb = (
        MC.join(blocks.col_nl.select(F.col("v").alias("src"), "l", F.col("m").alias("ml")), "src")
        .groupBy("set_id", "dst", "l")
        .agg(ordered_sum(F.col("m") * F.col("ml")).alias("r"))
    )
    mi0 = blocks.col.join(assign.withColumnRenamed("id", "v"), "v")
    m0i = blocks.row.join(assign.withColumnRenamed("id", "v"), "v")
    return (
        rec(assign, NODE, "id", None, None, "")
        .unionByName(rec(ii, M_II, "src", "dst", None, "m"))
        .unionByName(rec(ra, R_A, "src", None, "l", "r"))
        .unionByName(rec(rb, R_B, "dst", None, "l", "r"))
        .unionByName(rec(mi0, M_I0, "v", None, "l", "m"))
        .unionByName(rec(m0i, M_0I, "v", None, "l", "m"))
    )


def make_set_solver(
    factors: LandmarkFactors,
    S_A: np.ndarray,
    S_B: np.ndarray,
    lam: float,
    eta: float,
    iters: int,
    dtype: str = "float64",
):
    """The pandas function run once per set by ``applyInPandas``.

    The set-independent k x k parts of the systems are computed here, once, and travel
    with the function (O(k^2 + k d)) in place of S_A and S_B.
    """
    k = factors.P.shape[0]
    constants = set_constants(factors, S_A, S_B, lam, eta)
    progress = SolveProgress()

    def solve(pdf: pd.DataFrame) -> pd.DataFrame:
        started = time.time()
        set_id = int(pdf["set_id"].iloc[0])
        kind = pdf["kind"].to_numpy()
        nodes = pd.Index(pdf["u"][kind == NODE].unique()).sort_values()
        n = len(nodes)

        def part(code: int):
            sel = kind == code
            return pdf["u"][sel], pdf["v"][sel], pdf["l"][sel], pdf["val"][sel].to_numpy(np.float64)

        u, v, _, val = part(M_II)
        M_ii = sp.csr_matrix((val, (nodes.get_indexer(u), nodes.get_indexer(v))), shape=(n, n))

        def dense_kn(code: int) -> np.ndarray:
            u, _, l, val = part(code)
            out = np.zeros((k, n))
            np.add.at(out, (l.to_numpy(np.int64), nodes.get_indexer(u)), val)
            return out

        Rhat_A, Rhat_B = dense_kn(R_A), dense_kn(R_B)
        M_i0, M_0i = dense_kn(M_I0).T, dense_kn(M_0I)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RepairedFactorisation)
            W, C = solve_set(constants.factors, None, None, M_ii, M_i0, M_0i, Rhat_A, Rhat_B, lam, eta, iters,
                             dtype=dtype, constants=constants)
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
                "id": nodes.to_numpy(),
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
    dtype: str = "float64",
) -> DataFrame:
    """Run the per-set solve over ``records`` (from :func:`set_records`)."""
    fn = make_set_solver(factors, S_A, S_B, lam, eta, iters, dtype)
    return records.groupBy("set_id").applyInPandas(fn, schema=output_schema(id_type))
