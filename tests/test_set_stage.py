"""The per-set blocks formed in a set's task, against the dense matrices: from records made here
(no Spark) and from `set_records` through Spark."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pyspark.sql import functions as F

from sepne_spark.proximity import landmark_blocks
from sepne_spark.set_stage import ENTRY, LANDMARK, M_COL, M_ROW, NODE, set_blocks, set_records
from tests.helpers import random_graph


def packed(M: np.ndarray, L: list, v: int) -> bytes:
    """Node v's landmark entries (l, M[l, v], M[v, l]) packed as ``set_records`` ships them."""
    ls = [l for l in range(len(L)) if M[L[l], v] != 0 or M[v, L[l]] != 0]
    rec = np.array([(l, M[L[l], v], M[v, L[l]]) for l in ls], dtype=ENTRY)
    return rec.tobytes()


def records(M: np.ndarray, ids: list, L: list, Vi: np.ndarray) -> pd.DataFrame:
    """The rows ``set_records`` gives set ``Vi`` (set 7), made from the dense M."""
    lm = set(L)
    rows = [(NODE, ids[u], ids[u], 0.0, 0.0, None) for u in Vi]
    out_nbrs, in_nbrs = set(), set()
    for u in Vi:
        for v in np.flatnonzero(M[u]):
            rows.append((M_ROW, ids[u], ids[v], M[u, v], 0.0, None))
            out_nbrs.add(v)
        for v in np.flatnonzero(M[:, u]):
            rows.append((M_COL, ids[u], ids[v], M[v, u], 0.0, None))
            in_nbrs.add(v)
    for v in sorted((out_nbrs | in_nbrs) - lm):  # one row per neighbour with a landmark entry
        data = packed(M, L, v)
        if data:
            rows.append((LANDMARK, ids[v], ids[v], 0.0, 0.0, data))
    pdf = pd.DataFrame(rows, columns=["kind", "u", "v", "val", "val_t", "packed"])
    pdf.insert(0, "set_id", 7)
    return pdf


def assert_dense_blocks(b, M: np.ndarray, L: list, Vi: np.ndarray) -> dict:
    """Check a set's blocks against the dense M, to 1e-14; returns the dense blocks."""
    nl = np.setdiff1d(np.arange(M.shape[0]), L)
    expected = dict(
        M_ii=M[np.ix_(Vi, Vi)], M_i0=M[np.ix_(Vi, L)], M_0i=M[np.ix_(L, Vi)],
        Rhat_A=M[np.ix_(L, nl)] @ M[np.ix_(Vi, nl)].T, Rhat_B=M[np.ix_(nl, L)].T @ M[np.ix_(nl, Vi)],
    )
    for name, want in expected.items():
        got = getattr(b, name)
        got = got.toarray() if hasattr(got, "toarray") else got
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14 * max(1.0, np.abs(want).max()), err_msg=name)
    return expected


@pytest.mark.parametrize("metric", ["I+A", "A+A2"])
@pytest.mark.parametrize("string_ids", [True, False])
def test_set_blocks_equal_the_dense_blocks_in_any_row_order(metric, string_ids):
    g = random_graph(n=70, m=300, seed=5, string_ids=string_ids)
    M = g.proximity(metric, directed=True)
    n = M.shape[0]
    L = list(range(0, n, 7))
    nl = np.setdiff1d(np.arange(n), L)
    Vi = nl[5:25]
    pdf = records(M, g.ids, L, Vi)
    assert pdf["packed"].isna().any()  # as from Arrow: null on rows other than LANDMARK
    b = set_blocks(pdf, pd.Index([g.ids[l] for l in L]))

    assert list(b.nodes) == [g.ids[u] for u in Vi]
    expected = assert_dense_blocks(b, M, L, Vi)
    assert np.abs(b.Rhat_A).sum() > 0 and np.abs(b.Rhat_B).sum() > 0

    # Spark delivers a set's rows in an order that varies between runs: the blocks do not.
    for seed in range(3):
        shuffled = set_blocks(pdf.sample(frac=1, random_state=seed), pd.Index([g.ids[l] for l in L]))
        for name in expected:
            a, c = getattr(b, name), getattr(shuffled, name)
            a, c = (a.toarray(), c.toarray()) if hasattr(a, "toarray") else (a, c)
            assert np.array_equal(a, c), name


@pytest.mark.parametrize("directed", [False, True])
def test_set_records_give_each_set_its_dense_blocks_and_each_neighbour_once(spark, directed):
    """Through Spark: every set's blocks from ``set_records`` equal the dense ones, and a
    neighbour's landmark entries travel once per set, packed in one row with both values
    of each entry (l, M[l, v], M[v, l]) in ascending l: one row per (set, non-landmark
    neighbour with a landmark entry), not one per entry."""
    g = random_graph(n=80, m=360, seed=3, string_ids=False)
    M = g.proximity("I+A", directed=directed)
    n = M.shape[0]
    L = list(range(0, n, 7))
    nl = np.setdiff1d(np.arange(n), L)
    sets = {s: nl[s::3] for s in range(3)}
    ids = np.array(g.ids)
    r, c = np.nonzero(M)
    entries = spark.createDataFrame(
        pd.DataFrame({"src": ids[r], "dst": ids[c], "m": M[r, c]})
    )
    lm = spark.createDataFrame(pd.DataFrame({"id": ids[L], "l": np.arange(len(L), dtype=np.int32)}))
    assign = spark.createDataFrame(
        pd.DataFrame({"id": np.concatenate([ids[v] for v in sets.values()]),
                      "set_id": np.concatenate([np.full(len(v), s) for s, v in sets.items()])})
    )
    lm_ids = lm.select(F.col("id").alias("src"))
    blocks = landmark_blocks(entries.join(lm_ids, "src", "left_semi"),
                             entries.join(lm_ids.withColumnRenamed("src", "dst"), "dst", "left_semi"), lm)
    # Few rows per Arrow batch, so that nodes' entries span batches when they are packed.
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "7")
    try:
        pdf = set_records(assign, entries, entries, blocks).toPandas()
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")

    landmarks = pd.Index(ids[L])
    for s, Vi in sets.items():
        mine = pdf[pdf["set_id"] == s]
        b = set_blocks(mine, landmarks)
        assert list(b.nodes) == list(ids[Vi])
        assert_dense_blocks(b, M, L, Vi)
        out_nbrs = set(np.flatnonzero(M[Vi].any(axis=0))) - set(L)
        in_nbrs = set(np.flatnonzero(M[:, Vi].any(axis=1))) - set(L)
        if not directed:
            assert out_nbrs == in_nbrs
        shipped = mine[mine["kind"] == LANDMARK]
        want = {ids[v]: packed(M, L, v) for v in out_nbrs | in_nbrs if packed(M, L, v)}
        assert len(shipped) == len(want)  # each neighbour once
        assert dict(zip(shipped["v"], shipped["packed"])) == want
