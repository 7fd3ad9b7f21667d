"""The whole graph's rows of M = A + A^2 as sparse products by block of rows, against
the dense oracle and the joins they replace."""
from __future__ import annotations

import numpy as np
import pytest

from sepne_spark import dense
from sepne_spark.proximity import Proximity, transition, two_step_rows
from tests.helpers import random_graph


def _entries(df) -> dict:
    return {(r["src"], r["dst"]): r["m"] for r in df.collect()}


@pytest.mark.parametrize("string_ids", [True, False])
def test_two_step_rows_are_the_dense_a_plus_a2_whatever_the_blocks(spark, string_ids):
    """Every entry of A + A^2 (A the row-normalised transition matrix of the merged,
    directed edges), and no other, to 1e-15; the same bits with 1, 3 or 7 blocks (an
    entry's products are added in ascending neighbour id in any block); equal to the
    joins' entries to rounding."""
    g = random_graph(n=70, m=300, seed=5, string_ids=string_ids)
    edges = spark.createDataFrame(g.rows, f"src {'string' if string_ids else 'long'}, dst "
                                          f"{'string' if string_ids else 'long'}, weight double")
    A = transition(edges.where("src != dst"))
    W = dense.weight_matrix(len(g.ids), g.src, g.dst, g.weight, directed=True)
    out = W.sum(axis=1, keepdims=True)
    Ad = np.divide(W, out, out=np.zeros_like(W), where=out > 0)
    M = Ad + Ad @ Ad
    pos = {v: i for i, v in enumerate(g.ids)}
    by_blocks = [_entries(two_step_rows(A, blocks=b)) for b in (1, 3, 7)]
    got = by_blocks[0]
    assert {(pos[u], pos[v]) for u, v in got} == set(zip(*np.nonzero(M)))
    assert max(abs(m - M[pos[u], pos[v]]) for (u, v), m in got.items()) < 1e-15
    assert by_blocks[1] == got and by_blocks[2] == got
    joins = _entries(Proximity(A, None, "A+A2", by_block=False).rows(None))
    assert joins.keys() == got.keys()
    assert max(abs(m - joins[k]) / joins[k] for k, m in got.items()) < 1e-14
    # Proximity.rows() of the whole graph takes them (the log scaling after, as before)
    scaled = Proximity(A, None, "A+A2", "log", edges.where("src != dst"))
    assert "FlatMapGroupsInPandas" in scaled.rows(None)._jdf.queryExecution().executedPlan().toString()


def test_walks_restricted_to_some_ends_only_for_the_rows_of_a_plus_a2_with_the_window_of_2(spark):
    """Entries kept only in some columns (the walks' Gram sums over a sample of the
    nodes) are the window of 2's: longer windows, I + A and every row refuse them."""
    A = spark.createDataFrame([("a", "b", 1.0), ("b", "a", 1.0)], "src string, dst string, a double")
    nodes = spark.createDataFrame([("a",)], "id string")
    vertices = spark.createDataFrame([("a",), ("b",)], "id string")
    with pytest.raises(ValueError, match="window of 2"):
        Proximity(A, vertices, "A+A2", window=3).rows(nodes, ends=nodes)
    with pytest.raises(ValueError, match="rows of some nodes"):
        Proximity(A, vertices, "I+A").rows(nodes, ends=nodes)
    with pytest.raises(ValueError, match="columns of some nodes"):
        Proximity(A, vertices, "A+A2").cols(None, ends=nodes)


@pytest.mark.parametrize("window", [3, 5])
def test_longer_windows_are_the_dense_sum_of_powers(spark, window):
    """M = A + A^2 + ... + A^T built by joins, whole rows, some rows and some columns,
    against the dense powers of the directed transition matrix: every entry and no
    other, to 1e-15 (the fixed-point sums round each term to 2^-58; an entry is at most
    T), so a coarser rounding, a lost power or a column taken for a row fails it."""
    g = random_graph(n=70, m=300, seed=5)
    edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
    vertices = spark.createDataFrame([(v,) for v in g.ids], "id string")
    A = transition(edges.where("src != dst"))
    W = dense.weight_matrix(len(g.ids), g.src, g.dst, g.weight, directed=True)
    out = W.sum(axis=1, keepdims=True)
    Ad = np.divide(W, out, out=np.zeros_like(W), where=out > 0)
    M, power = np.zeros_like(Ad), np.eye(len(g.ids))
    for _ in range(window):
        power = power @ Ad
        M += power
    pos = {v: i for i, v in enumerate(g.ids)}
    prox = Proximity(A, vertices, "A+A2", window=window)
    some = g.ids[::7]
    nodes = spark.createDataFrame([(v,) for v in some], "id string")
    for got, rows, cols in ((_entries(prox.rows(None)), range(len(g.ids)), range(len(g.ids))),
                            (_entries(prox.rows(nodes)), [pos[v] for v in some], range(len(g.ids))),
                            (_entries(prox.cols(nodes)), range(len(g.ids)), [pos[v] for v in some])):
        want = {(i, j) for i, j in zip(*np.nonzero(M)) if i in rows and j in cols}
        assert {(pos[u], pos[v]) for u, v in got} == want
        assert max(abs(m - M[pos[u], pos[v]]) for (u, v), m in got.items()) < 1e-15
