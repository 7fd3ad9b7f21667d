"""The propagation stage on Spark against its NumPy oracle (sepne_spark.spectral)."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse as sp

from sepne_spark.propagation import default_blocks, l2_normalize, propagate_embeddings
from sepne_spark.spectral import average, propagate, refine, reorthogonalize
from tests.helpers import WIDE_IDS


def _case(n: int = 40, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, 3 * n)
    dst = rng.integers(0, n, 3 * n)
    keep = src != dst
    W = sp.coo_matrix((rng.random(keep.sum()) + 0.5, (src[keep], dst[keep])), shape=(n, n)).tocsr()
    W = (W + W.T).tocsr()  # undirected: both directions, repeated pairs merged
    W.sum_duplicates()
    E = rng.standard_normal((n, d))
    E[::7] = 0.0  # nodes without a base vector
    return W, E


def _spark_propagated(spark, W, E, wide_ids: bool = False, **kwargs) -> np.ndarray:
    """propagate_embeddings of E over W on Spark, string ids (not row numbers) or 64-bit
    ones that a double cannot hold (``wide_ids``), rows in W's order."""
    kwargs.setdefault("dtype", "float64")  # the oracle's precision
    n = W.shape[0]
    ids, kind = ([WIDE_IDS + 3 * i for i in range(n)], "long") if wide_ids else ([f"n{i}" for i in range(n)], "string")
    coo = W.tocoo()
    edges = spark.createDataFrame(
        [(ids[i], ids[j], float(v)) for i, j, v in zip(coo.row, coo.col, coo.data)], f"src {kind}, dst {kind}, weight double")
    vertices = spark.createDataFrame([(i,) for i in ids], f"id {kind}")
    emb = spark.createDataFrame([(ids[i], [float(x) for x in E[i]]) for i in range(n)], f"id {kind}, embedding array<double>")
    got = {r["id"]: r["embedding"] for r in propagate_embeddings(vertices, edges, emb, **kwargs).collect()}
    return np.array([got[i] for i in ids])


@pytest.mark.parametrize("order,blocks,mu,theta", [(3, 3, 0.2, 0.5), (4, 1, 0.2, 0.5), (3, 3, 0.1, 1.0),
                                                   (4, 1, 0.35, 0.5)])
def test_propagation_matches_numpy_oracle(spark, order, blocks, mu, theta):
    W, E = _case(40, 3)
    G = _spark_propagated(spark, W, E, order=order, mu=mu, theta=theta, blocks=blocks)
    want = reorthogonalize(propagate(W, l2_normalize(E), order=order, mu=mu, theta=theta))
    np.testing.assert_allclose(G, want, rtol=1e-9, atol=1e-10)
    assert np.count_nonzero(np.abs(G).sum(axis=1) == 0) == 0  # every node reached


@pytest.mark.parametrize("blocks", [1, 3])
def test_steps_of_a_directed_graph_with_self_loops(spark, blocks):
    """A directed graph (one direction of most edges, some pairs both ways with other
    weights) with self-loops, in one task and by row blocks: refinement, the filter and
    averaging over T = D^-1 (I + A), D the out-weights plus one and each loop on the
    diagonal, equal to the NumPy steps over the same matrix, to 1e-9."""
    W, E = _case(40, 3, seed=4)
    coo = sp.triu(W, format="coo")  # one direction of every edge
    back = coo.row[::4], coo.col[::4]  # a quarter of them both ways, with other weights
    loops = np.arange(0, 40, 6)
    directed = sp.coo_matrix((np.concatenate([coo.data, 0.3 + coo.data[::4], 0.5 + loops / 10]),
                              (np.concatenate([coo.row, back[1], loops]), np.concatenate([coo.col, back[0], loops]))),
                             shape=W.shape).tocsr()
    dense = directed.toarray()
    assert np.diagonal(dense).any() and not np.allclose(dense.sum(axis=0), dense.sum(axis=1))
    G = _spark_propagated(spark, directed, E, order=3, mu=0.35, theta=1.0, blocks=blocks, refine_steps=2,
                          average_steps=2)
    Q = refine(directed, E, 2, "transition")
    want = average(directed, reorthogonalize(propagate(directed, l2_normalize(Q), order=3, mu=0.35, theta=1.0)), 2)
    np.testing.assert_allclose(G, want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("blocks", [1, 3])
def test_propagation_of_ids_past_a_doubles_precision(spark, blocks):
    """64-bit ids three apart near 2^62, in one task and by row blocks: the NumPy
    filter of the graph as given, not of one whose ids a double has merged."""
    W, E = _case(40, 3, seed=2)
    G = _spark_propagated(spark, W, E, wide_ids=True, order=3, mu=0.2, theta=0.5, blocks=blocks, refine_steps=1)
    want = reorthogonalize(propagate(W, l2_normalize(refine(W, E, 1, "transition")), order=3, mu=0.2, theta=0.5))
    np.testing.assert_allclose(G, want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("order,blocks,steps,operator", [(3, 3, 2, "transition"), (1, 2, 3, "transition"),
                                                          (3, 3, 2, "pmi"), (3, 1, 3, "pmi")])
def test_refinement_matches_numpy_oracle(spark, order, blocks, steps, operator, caplog):
    """Subspace iteration before the filter, by row blocks and in one task, with either
    operator: the NumPy refinement (sepne_spark.spectral.refine), then the filter, to
    1e-9. By row blocks every product logs a progress line as it ends."""
    W, E = _case(40, 3, seed=1)
    with caplog.at_level(logging.INFO, logger="sepne_spark.progress"):
        G = _spark_propagated(spark, W, E, order=order, mu=0.2, theta=0.5, blocks=blocks, refine_steps=steps,
                              refine_operator=operator)
    lines = [r.getMessage() for r in caplog.records if "SepNE propagation: product" in r.getMessage()]
    if blocks > 1:
        total = steps + (2 * order - 1 if order > 1 else 0)
        assert [ln.split(" done")[0] for ln in lines] == [f"SepNE propagation: product {i} of {total}"
                                                          for i in range(1, total + 1)]
        assert f"refinement round {steps} of {steps}" in lines[steps - 1]
        assert "(with its input vectors)" in lines[0] and all("input" not in ln for ln in lines[1:])
    else:
        assert lines == []
    Q = refine(W, E, steps, operator)
    want = reorthogonalize(propagate(W, l2_normalize(Q), order=order, mu=0.2, theta=0.5))
    np.testing.assert_allclose(G, want, rtol=1e-9, atol=1e-10)
    unrefined = reorthogonalize(propagate(W, l2_normalize(E), order=order, mu=0.2, theta=0.5))
    assert not np.allclose(np.abs(G), np.abs(unrefined), atol=1e-3)  # the rounds did something


def test_log_ratio_refinement_of_a_directed_graph_by_row_blocks(spark):
    """The log-ratio operator of a directed graph (out-weights of the rows, in-weights of
    the columns) by two row blocks, with a pair given twice: equal to the oracle."""
    W, E = _case(40, 3, seed=3)
    coo = sp.triu(W, format="coo")  # one direction of every edge
    row, col = np.append(coo.row, coo.row[0]), np.append(coo.col, coo.col[0])  # the first pair twice
    directed = sp.coo_matrix((np.append(coo.data, 0.7), (row, col)), shape=W.shape)  # tocoo() keeps both rows
    G = _spark_propagated(spark, directed, E, order=1, blocks=2, refine_steps=2, refine_operator="pmi")
    Q = refine(directed.tocsr(), E, 2, "pmi")
    np.testing.assert_allclose(G, reorthogonalize(l2_normalize(Q)), rtol=1e-9, atol=1e-10)


def test_refine_operator_is_checked(spark):
    W, E = _case(10, 2)
    with pytest.raises(ValueError, match="refine_operator"):
        _spark_propagated(spark, W, E, order=3, blocks=2, refine_steps=1, refine_operator="laplacian")


@pytest.mark.parametrize("order,blocks,steps,refine_steps", [(1, 3, 2, 0), (3, 2, 2, 2), (1, 2, 2, 2), (3, 1, 3, 2)])
def test_averaging_matches_numpy_oracle(spark, order, blocks, steps, refine_steps, caplog):
    """Neighbourhood averaging by row blocks and in one task against
    sepne_spark.spectral.average (alone, and after the refinement and the filter), to
    1e-9; by row blocks each step logs its progress line, after the others'."""
    W, E = _case(40, 3, seed=2)
    with caplog.at_level(logging.INFO, logger="sepne_spark.progress"):
        G = _spark_propagated(spark, W, E, order=order, mu=0.2, theta=0.5, blocks=blocks,
                              refine_steps=refine_steps, average_steps=steps)
    X = E
    if order > 1 or refine_steps:
        Q = refine(W, E, refine_steps) if refine_steps else E
        X = reorthogonalize(propagate(W, l2_normalize(Q), order=order, mu=0.2, theta=0.5))
    np.testing.assert_allclose(G, average(W, X, steps), rtol=1e-9, atol=1e-10)
    lines = [r.getMessage() for r in caplog.records if "SepNE propagation: product" in r.getMessage()]
    if blocks > 1:
        assert len(lines) == steps + refine_steps + (2 * order - 1 if order > 1 else 0)
        assert [f"averaging step {i} of {steps}" in ln for i, ln in enumerate(lines[-steps:], 1)] == [True] * steps
    assert np.count_nonzero(np.abs(G).sum(axis=1) == 0) == 0  # the zero base rows got their neighbours'


def test_order_one_is_identity(spark):
    emb = spark.createDataFrame([("a", [1.0, 2.0])], "id string, embedding array<double>")
    out = propagate_embeddings(emb.select("id"), spark.createDataFrame([], "src string, dst string, weight double"), emb, order=1)
    assert out.collect()[0]["embedding"] == [1.0, 2.0]


def test_l2_normalize_keeps_zero_rows():
    X = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(l2_normalize(X), [[0.6, 0.8], [0.0, 0.0]])


def test_default_blocks():
    assert default_blocks(10, dtype="float64") == 1
    assert default_blocks(100_001, dtype="float64") == 2
    assert default_blocks(400_000, dtype="float64") == 2
    # One block per 512 MB of the n x d matrix: 500,000 nodes at d = 128 in float64,
    # 10^6 in float32.
    assert default_blocks(1_000_000, dtype="float64") == 2
    assert default_blocks(1_700_000, dtype="float64") == 4
    assert default_blocks(10_000_001, dtype="float64") == 21
    assert default_blocks(1_715_256, dtype="float32") == 2
    assert default_blocks(4_000_000, dtype="float32") == 4
    assert default_blocks(1_000_000, dim=512, dtype="float32") == 4
