"""Block matrices on Spark against their NumPy / scipy.sparse oracle."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sepne_spark import blocks as B


def _graph(n: int, nnz: int, seed: int):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, nnz)
    dst = rng.integers(0, n, nnz)
    val = rng.random(nnz) + 0.1
    S = sp.csr_matrix((val, (src, dst)), shape=(n, n))  # repeated pairs add up
    return S, list(zip(src.tolist(), dst.tolist(), val.tolist()))


def _frame(spark, ids, X):
    return spark.createDataFrame([(int(i), [float(v) for v in X[j]]) for j, i in enumerate(ids)],
                                 "id long, embedding array<double>")


def _dense(spark, bg, chunks, name, ids, right=None):
    got = {r["id"]: r["embedding"] for r in bg.from_chunks(chunks, name, right=right).collect()}
    return np.array([got[int(i)] for i in ids])


@pytest.mark.parametrize("blocks", [3])
def test_product_update_gram_match_numpy(spark, blocks):
    n, d = 60, 4
    S, triples = _graph(n, 240, seed=blocks)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((n, d))
    Z = rng.standard_normal((n, d))
    ids = np.arange(n) * 3 + 1  # ids are not row numbers
    nodes = spark.createDataFrame([(int(i),) for i in ids], "id long")
    entries = spark.createDataFrame([(int(ids[s]), int(ids[t]), v) for s, t, v in triples], "src long, dst long, value double")
    bg = B.BlockGraph.build(nodes, entries, blocks=blocks, seed=3, chunk_rows=7)  # several chunks a block
    state = bg.to_chunks(_frame(spark, ids, X), "embedding", "x").unionByName(
        bg.to_chunks(_frame(spark, ids, Z), "embedding", "z"))

    out = bg.product(state, "x", lambda Y, own: {"y": Y + 2 * own["z"], "x": own["x"]})
    np.testing.assert_allclose(_dense(spark, bg, out, "y", ids), S @ X + 2 * Z, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_dense(spark, bg, out, "x", ids), X, rtol=0, atol=0)

    twice = bg.product(out, "y", lambda Y, own: {"w": Y})
    np.testing.assert_allclose(_dense(spark, bg, twice, "w", ids), S @ (S @ X + 2 * Z), rtol=1e-12, atol=1e-12)

    sums = bg.row_sums("s")
    np.testing.assert_allclose(_dense(spark, bg, sums, "s", ids)[:, 0], np.asarray(S.sum(axis=1)).ravel(), atol=1e-12)

    np.testing.assert_allclose(B.gram(out, "x"), X.T @ X, rtol=1e-12)
    # The same bits whatever partitions hold the chunks (one part per chunk, summed in a fixed order).
    assert np.array_equal(B.gram(out.repartition(1), "x"), B.gram(out.repartition(5, "c"), "x"))
    T = np.arange(d * 2, dtype=float).reshape(d, 2)
    np.testing.assert_allclose(_dense(spark, bg, out, "x", ids, right=T), X @ T, atol=1e-12)

    mapped = bg.map_blocks(state, lambda own: {"s": own["x"] - own["z"]})
    np.testing.assert_allclose(_dense(spark, bg, mapped, "s", ids), X - Z, atol=0)

    # The Gram matrix formed by the product's own tasks: that of a separate pass over
    # the result, and the state it returns holds the product's matrices only.
    fused, G = bg.product_with_gram(out, "y", lambda Y, own: {"w": Y, "x": own["x"]}, "w")
    W = S @ (S @ X + 2 * Z)
    np.testing.assert_allclose(G, W.T @ W, rtol=1e-12)
    assert np.array_equal(G, B.gram(fused, "w"))  # the same parts, added in the same order
    assert sorted(r["name"] for r in fused.select("name").distinct().collect()) == ["w", "x"]
    again = bg.product(fused, "w", lambda Y, own: dict(own))
    assert sorted(r["name"] for r in again.select("name").distinct().collect()) == ["w", "x"]
    with pytest.raises(Exception, match="no matrix 'v'"):
        bg.product_with_gram(out, "y", lambda Y, own: {"w": Y}, "v")


def test_fused_gram_is_that_of_the_stored_float32_values(spark):
    n, d = 40, 3
    S, triples = _graph(n, 160, seed=11)
    X = np.random.default_rng(2).standard_normal((n, d)) / 3.0
    ids = np.arange(n) + 100
    nodes = spark.createDataFrame([(int(i),) for i in ids], "id long")
    entries = spark.createDataFrame([(int(ids[s]), int(ids[t]), v) for s, t, v in triples], "src long, dst long, value double")
    bg = B.BlockGraph.build(nodes, entries, blocks=2, seed=1, dtype="float32", chunk_rows=8)
    state = bg.to_chunks(_frame(spark, ids, X), "embedding", "x")
    out, G = bg.product_with_gram(state, "x", lambda Y, own: {"y": Y}, "y")
    Y = _dense(spark, bg, out, "y", ids)  # the stored values, float32-rounded
    np.testing.assert_array_equal(Y, Y.astype(np.float32).astype(np.float64))
    np.testing.assert_allclose(G, Y.T @ Y, rtol=1e-12)
    np.testing.assert_allclose(G, B.gram(out, "y"), rtol=1e-12)


def test_to_chunks_needs_every_node(spark):
    nodes = spark.createDataFrame([(1,), (2,), (3,)], "id long")
    entries = spark.createDataFrame([(1, 2, 1.0)], "src long, dst long, value double")
    bg = B.BlockGraph.build(nodes, entries, blocks=1)
    for given in ([1, 3], [2, 3], [1, 2]):  # a node missing in the middle, at the start, at the end
        part = spark.createDataFrame([(i, [float(i)]) for i in given], "id long, embedding array<double>")
        with pytest.raises(Exception, match=r"missing rows \(1 of 3 nodes have none, e.g. node "
                                            f"{({1, 2, 3} - set(given)).pop()}\\)"):
            bg.to_chunks(part, "embedding", "x").collect()
    twice = spark.createDataFrame([(i, [float(i)]) for i in (1, 2, 2, 3)], "id long, embedding array<double>")
    with pytest.raises(Exception, match="repeated rows"):
        bg.to_chunks(twice, "embedding", "x").collect()


def test_entry_sums_are_those_of_w_c_at_the_pattern(spark):
    """The sums over S's entries of functions of their values and of W C^T there,
    block by block, equal the NumPy oracle's (several blocks and chunks; a pair given
    twice is one entry, its values added, as in S)."""
    n, d = 50, 5
    S, triples = _graph(n, 200, seed=11)
    rng = np.random.default_rng(6)
    W = rng.standard_normal((n, d))
    C = rng.standard_normal((n, d))
    ids = np.arange(n) * 5 + 2
    nodes = spark.createDataFrame([(int(i),) for i in ids], "id long")
    entries = spark.createDataFrame([(int(ids[s]), int(ids[t]), v) for s, t, v in triples], "src long, dst long, value double")
    bg = B.BlockGraph.build(nodes, entries, blocks=3, seed=2, chunk_rows=6)
    state = bg.to_chunks(_frame(spark, ids, W), "embedding", "w").unionByName(
        bg.to_chunks(_frame(spark, ids, C), "embedding", "c"))
    got = bg.entry_sums(state, "w", "c", lambda v, p: np.array([len(v), v.sum(), ((v - p) ** 2).sum(), (p ** 4).sum()]))
    coo = S.tocoo()
    assert coo.nnz < len(triples)  # some pairs are given twice
    val = coo.data
    p = np.einsum("ij,ij->i", W[coo.row], C[coo.col])
    want = np.array([len(val), val.sum(), ((val - p) ** 2).sum(), (p ** 4).sum()])
    np.testing.assert_allclose(got, want, rtol=1e-12)
