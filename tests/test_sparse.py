"""The SciPy form of SepNE (:mod:`sepne_spark.sparse`) against the dense oracle."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sepne_spark import dense, sparse
from sepne_spark.solver import landmark_factors, row_space_factors, set_constants
from tests.helpers import random_graph

CASES = [("I+A", 2, "none", True), ("A+A2", 2, "none", False), ("A+A2", 2, "log", True), ("A+A2", 3, "log", False)]


def _graph(directed: bool):
    g = random_graph(n=70, m=260, seed=21 + directed)
    s, t, w = g.src, g.dst, g.weight
    if not directed:
        s, t, w = np.concatenate([s, t]), np.concatenate([t, s]), np.concatenate([w, w])
    return len(g.ids), s, t, w


def _dense_m(n, s, t, w, metric, window, scaling):
    M = dense.proximity_from_transition(dense.transition_matrix(n, s, t, w), metric, window)
    if scaling == "log":
        M = dense.log_scaled(M, dense.weight_matrix(n, s, t, w), window)
    return M


@pytest.mark.parametrize("metric, window, scaling, directed", CASES + [("A+A2", 4, "log", False)])
def test_sparse_proximity_equals_the_dense_one(metric, window, scaling, directed):
    n, s, t, w = _graph(directed)
    M = _dense_m(n, s, t, w, metric, window, scaling)
    got = sparse.sparse_proximity(n, s, t, w, metric, window, scaling)
    np.testing.assert_allclose(got.toarray(), M, rtol=1e-12, atol=1e-12)
    assert got.nnz == np.count_nonzero(M)


@pytest.mark.parametrize("directed", [True, False])
def test_walk_summaries_equal_the_dense_ones_of_log_scaled_a_plus_a2(directed):
    n, s, t, w = _graph(directed)
    V0 = np.array([5, 0, 33, 12, 60, 7])
    want = dense.landmark_summaries(_dense_m(n, s, t, w, "A+A2", 2, "log"), V0)
    got = sparse.walk_summaries(n, s, t, w, V0)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    assert np.abs(want[1]).max() > 0 and np.abs(want[2]).max() > 0
    # The Gram matrices' products: sum over non-landmark v of c(v)^2, each direction.
    M2 = _dense_m(n, s, t, w, "A+A2", 2, "log")
    nl = np.setdiff1d(np.arange(n), V0)
    products = int(((M2[np.ix_(V0, nl)] != 0).sum(axis=0) ** 2).sum() + ((M2[np.ix_(nl, V0)] != 0).sum(axis=1) ** 2).sum())
    assert sparse.walk_summaries(n, s, t, w, V0, max_products=products) is not None
    assert sparse.walk_summaries(n, s, t, w, V0, max_products=products - 1) is None


def test_sparse_proximity_drops_edges_without_weight():
    n, s, t, w = _graph(True)
    w = w.copy()
    w[::5] = 0.0
    w[1::7] = -1.0
    keep = w > 0
    got = sparse.sparse_proximity(n, s, t, w, "A+A2", 2, "log")
    np.testing.assert_allclose(got.toarray(), _dense_m(n, s[keep], t[keep], w[keep], "A+A2", 2, "log"), atol=1e-12)


def test_entries_bound_holds():
    n, s, t, w = _graph(False)
    out_deg = np.bincount(s, minlength=n)
    in_deg = np.bincount(t, minlength=n)
    pairs = sp.coo_matrix((np.ones(len(s)), (s, t)), shape=(n, n)).tocsr()
    edge_rows = pairs.nnz  # merged rows, as the graph holds them
    walks = int(np.sum(np.bincount(pairs.tocoo().row, minlength=n) * np.bincount(pairs.tocoo().col, minlength=n)))
    assert walks <= int(np.sum(out_deg * in_deg))
    for metric, window in (("I+A", 2), ("A+A2", 2), ("A+A2", 3)):
        M = sparse.sparse_proximity(n, s, t, w, metric, window)
        assert M.nnz <= sparse.proximity_entries_bound(n, edge_rows, walks, metric, window)


@pytest.mark.parametrize("directed", [True, False])
def test_window_entries_bound_holds_and_is_tighter_than_n_squared(directed):
    n, s, t, w = _graph(directed)
    keep = w > 0
    # Sparse enough that walks of 3 to 5 steps leave rows of M incomplete.
    g = random_graph(n=400, m=500, seed=31 + directed)
    s2, t2 = g.src, g.dst
    if not directed:
        s2, t2 = np.concatenate([g.src, g.dst]), np.concatenate([g.dst, g.src])
    for nodes, src, dst, weight in ((n, s[keep], t[keep], w[keep]), (len(g.ids), s2, t2, np.ones(len(s2)))):
        for window in (2, 3, 4, 5):
            M = sparse.sparse_proximity(nodes, src, dst, weight, "A+A2", window)
            bound = sparse.window_entries_bound(nodes, src, dst, window)
            assert M.nnz <= bound <= nodes**2
    # On the sparse graph the bound is far below n^2 (what proximity_entries_bound gives for T > 2).
    assert sparse.window_entries_bound(len(g.ids), s2, t2, 3) < len(g.ids) ** 2 / 4
    # Rows are capped at n: on a complete graph (no self-loop) walks of 2 steps already
    # reach every node, and the bound is M's n^2 entries exactly.
    k5 = np.array([(i, j) for i in range(5) for j in range(5) if i != j])
    M = sparse.sparse_proximity(5, k5[:, 0], k5[:, 1], np.ones(len(k5)), "A+A2", 3)
    assert M.nnz == sparse.window_entries_bound(5, k5[:, 0], k5[:, 1], 3) == 25
    # Duplicate edge rows only loosen it.
    assert sparse.window_entries_bound(len(g.ids), np.r_[s2, s2], np.r_[t2, t2], 3) >= \
        sparse.window_entries_bound(len(g.ids), s2, t2, 3)


@pytest.mark.parametrize("metric, window, scaling, directed", CASES)
def test_summaries_blocks_and_sets_equal_the_dense_oracle(metric, window, scaling, directed):
    n, s, t, w = _graph(directed)
    Md = _dense_m(n, s, t, w, metric, window, scaling)
    M = sparse.sparse_proximity(n, s, t, w, metric, window, scaling)
    rng = np.random.default_rng(5)
    V0 = rng.choice(n, 9, replace=False)
    nl = np.setdiff1d(np.arange(n), V0)
    M00, S_A, S_B = sparse.landmark_summaries(M, V0)
    np.testing.assert_allclose(M00, Md[np.ix_(V0, V0)], atol=1e-12)
    np.testing.assert_allclose(S_A, Md[np.ix_(V0, nl)] @ Md[np.ix_(V0, nl)].T, atol=1e-12)
    np.testing.assert_allclose(S_B, Md[np.ix_(nl, V0)].T @ Md[np.ix_(nl, V0)], atol=1e-12)

    Vi = nl[::4]
    M_ii, M_i0, M_0i, Rhat_A, Rhat_B = sparse.SetBlocks(M, V0)(Vi)
    np.testing.assert_allclose(M_ii.toarray(), Md[np.ix_(Vi, Vi)], atol=1e-12)
    np.testing.assert_allclose(M_i0, Md[np.ix_(Vi, V0)], atol=1e-12)
    np.testing.assert_allclose(M_0i, Md[np.ix_(V0, Vi)], atol=1e-12)
    np.testing.assert_allclose(Rhat_A, Md[np.ix_(V0, nl)] @ Md[np.ix_(Vi, nl)].T, atol=1e-12)
    np.testing.assert_allclose(Rhat_B, Md[np.ix_(nl, V0)].T @ Md[np.ix_(nl, Vi)], atol=1e-12)

    d, lam, eta, iters = 5, 0.7, 0.3, 4
    sets = np.full(n, -1)
    sets[nl] = rng.integers(0, 4, len(nl))
    members = [np.flatnonzero(sets == j) for j in range(4)]
    W, C = dense.sepne_dense(Md, V0, members, d, lam, eta, iters)
    f = landmark_factors(M00, d)
    seen, Ws, Cs = [], np.full_like(W, np.nan), np.full_like(C, np.nan)
    for sid, mem, Wi, Ci in sparse.solve_sets(M, V0, sets, set_constants(f, S_A, S_B, lam, eta), iters):
        seen.append(sid)
        np.testing.assert_array_equal(mem, members[sid])
        Ws[mem], Cs[mem] = Wi.T, Ci.T
    assert seen == [0, 1, 2, 3]
    # M00 of an undirected graph is symmetric, so singular values can pair up and the
    # factors are then fixed up to a rotation within them: compare the node Gram
    # matrices W W^T and C C^T, which every orthogonal change of the factors keeps.
    for got, ref in ((Ws[nl], W[nl]), (Cs[nl], C[nl])):
        np.testing.assert_allclose(got @ got.T, ref @ ref.T, rtol=0, atol=1e-9 * np.abs(ref @ ref.T).max())
    # The landmark-row factors go through the same solve (its own oracle is in test_solver).
    rows = row_space_factors(M00, S_A, S_B, d)
    got = list(sparse.solve_sets(M, V0, sets, set_constants(rows, S_A, S_B, lam, eta), iters))
    assert all(np.isfinite(Wi).all() for _, _, Wi, _ in got)
