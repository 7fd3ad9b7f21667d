"""Spectral propagation (sepne_spark.spectral): NumPy/SciPy only, no Spark."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import iv

from sepne_spark.spectral import (
    average,
    chebyshev_coefficients,
    gram_matrix,
    gram_transform,
    log_ratio_matrix,
    orthonormalizer,
    propagate,
    refine,
    reorthogonalize,
    smooth,
    sparse_products,
    transition_with_self_loops,
)


def l2_normalize(X: np.ndarray) -> np.ndarray:
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _graph(n: int = 60, seed: int = 0) -> sp.csr_matrix:
    """A small weighted undirected graph with an isolated node and a degree-1 node."""
    rng = np.random.default_rng(seed)
    m = 3 * n
    src, dst = rng.integers(0, n - 2, m), rng.integers(0, n - 2, m)
    keep = src != dst
    w = rng.uniform(0.5, 2.0, keep.sum())
    W = sp.coo_matrix((w, (src[keep], dst[keep])), shape=(n, n)).tocsr()
    W = W + W.T
    W = sp.lil_matrix(W)
    W[n - 1, 0] = W[0, n - 1] = 1.0  # node n-1 has degree 1; node n-2 is isolated
    return sp.csr_matrix(W)


def _directed_graph(n: int = 60, seed: int = 0) -> sp.csr_matrix:
    """A small weighted directed graph with kept self-loops (weights on the diagonal) and
    a node with out-edges only, so that its row sums differ from its column sums."""
    rng = np.random.default_rng(seed)
    m = 3 * n
    src, dst = rng.integers(0, n - 1, m), rng.integers(0, n - 1, m)
    keep = src != dst
    W = sp.coo_matrix((rng.uniform(0.5, 2.0, keep.sum()), (src[keep], dst[keep])), shape=(n, n)).tocsr()
    W = sp.lil_matrix(W)
    for i in range(5):
        W[i, i] = 0.5 + i  # kept self-loops
    W[n - 1, 0] = W[n - 1, 1] = 1.0  # out-edges only
    return sp.csr_matrix(W)


def _dense_polynomial(A: np.ndarray, E: np.ndarray, order: int, mu: float, theta: float) -> np.ndarray:
    """(I + A)(E - sum_i c_i T_i(X) E) with X = M^2/2 - I, built from dense matrices."""
    n = A.shape[0]
    IA = np.eye(n) + A
    T = IA / IA.sum(axis=1, keepdims=True)
    M = (1 - mu) * np.eye(n) - T
    X = M @ M / 2 - np.eye(n)
    c = chebyshev_coefficients(order, theta)
    Tk = [np.eye(n), X]
    for _ in range(2, order):
        Tk.append(2 * X @ Tk[-1] - Tk[-2])
    P = sum(c[i] * Tk[i] for i in range(order))
    return IA @ (E - P @ E)


def test_coefficients_are_signed_bessel_values():
    for order, theta in [(1, 0.5), (2, 0.5), (10, 0.5), (7, 1.3)]:
        c = chebyshev_coefficients(order, theta)
        assert c.shape == (order,)
        assert c[0] == pytest.approx(iv(0, theta), rel=1e-14)
        for i in range(1, order):
            assert c[i] == pytest.approx(2 * (-1) ** i * iv(i, theta), rel=1e-14)
    with pytest.raises(ValueError, match="order"):
        chebyshev_coefficients(0, 0.5)


def test_chebyshev_sum_approximates_the_gaussian_filter():
    # sum_i c_i T_i(x) -> exp(-theta x) on [-1, 1]: the filter the coefficients stand for
    x = np.linspace(-1, 1, 41)
    c = chebyshev_coefficients(12, 0.5)
    approx = np.polynomial.chebyshev.chebval(x, c)
    np.testing.assert_allclose(approx, np.exp(-0.5 * x), atol=1e-12)


@pytest.mark.parametrize("order,mu,theta", [(10, 0.2, 0.5), (5, 0.2, 0.5), (3, 0.1, 1.0), (2, 0.2, 0.5)])
def test_propagate_matches_dense_polynomial(order, mu, theta):
    A = _graph()
    E = np.random.default_rng(1).standard_normal((A.shape[0], 8))
    E[5] = 0.0  # a zero row is filled from its neighbours
    got = propagate(A, E, order, mu, theta)
    want = _dense_polynomial(A.toarray(), E, order, mu, theta)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())
    assert np.abs(got[5]).sum() > 0


def test_propagate_order_one_is_identity_and_product_count():
    A = _graph()
    E = np.random.default_rng(2).standard_normal((A.shape[0], 4))
    np.testing.assert_array_equal(propagate(A, E, 1), E)
    assert [sparse_products(o) for o in (1, 2, 3, 5, 10)] == [0, 3, 5, 9, 19]


def test_propagate_counts_its_sparse_products(monkeypatch):
    """The documented number of T @ block products is what the code performs."""
    import sepne_spark.spectral as spectral

    calls = []

    class Counting(sp.csr_matrix):
        def __matmul__(self, other):
            calls.append(other.shape)
            return sp.csr_matrix(self).__matmul__(other)

    real = spectral.transition_with_self_loops

    def counting(A):
        T, D = real(A)
        return Counting(T), D

    monkeypatch.setattr(spectral, "transition_with_self_loops", counting)
    A = _graph()
    E = np.ones((A.shape[0], 3))
    for order in (2, 3, 10):
        calls.clear()
        spectral.propagate(A, E, order)
        assert len(calls) == sparse_products(order)
        assert all(s == E.shape for s in calls)


def test_transition_with_self_loops():
    A = _graph()
    T, D = transition_with_self_loops(A)
    np.testing.assert_allclose(np.asarray(T.sum(axis=1)).ravel(), 1.0)
    np.testing.assert_allclose(D, 1.0 + np.asarray(A.sum(axis=1)).ravel())
    assert T[A.shape[0] - 2, A.shape[0] - 2] == 1.0  # the isolated node keeps its own row
    with pytest.raises(ValueError, match="non-negative"):
        transition_with_self_loops(-A)


def test_spectral_steps_of_a_directed_graph_with_self_loops():
    """A directed graph with kept self-loops: T = D^-1 (I + A) with D one plus the row
    sums (the out-weights, not the in-weights) and each loop added to the unit one on
    the diagonal; the filter at two shifts and Bessel parameters, the refinement and the
    averaging equal their dense definitions over that T."""
    A = _directed_graph()
    n = A.shape[0]
    dense = A.toarray()
    assert np.diagonal(dense).any() and not np.allclose(dense.sum(axis=0), dense.sum(axis=1))
    Td = (np.eye(n) + dense) / (1.0 + dense.sum(axis=1, keepdims=True))
    T, D = transition_with_self_loops(A)
    np.testing.assert_allclose(T.toarray(), Td, atol=1e-15)
    np.testing.assert_allclose(D, 1.0 + dense.sum(axis=1), atol=1e-15)
    E = np.random.default_rng(4).standard_normal((n, 5))
    E[::9] = 0.0
    for order, mu, theta in ((3, 0.35, 1.0), (5, 0.1, 0.5)):
        np.testing.assert_allclose(propagate(A, E, order, mu, theta), _dense_polynomial(dense, E, order, mu, theta),
                                   atol=1e-10)
    X = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-300)
    np.testing.assert_allclose(average(A, E, 3), sum(np.linalg.matrix_power(Td, s) @ X for s in range(4)), atol=1e-12)
    Q = refine(A, E, 3)
    U, _, _ = np.linalg.svd(np.linalg.matrix_power(Td, 3) @ X, full_matrices=False)
    np.testing.assert_allclose(Q @ Q.T, U @ U.T, atol=1e-8)


def test_gram_route_equals_svd_route():
    A = _graph()
    E = np.random.default_rng(3).standard_normal((A.shape[0], 10))
    Y = propagate(A, E, 10, 0.2, 0.5)
    # ProNE: dense SVD, U * sqrt(S)
    U, s, _ = np.linalg.svd(Y, full_matrices=False)
    ref = U * np.sqrt(s)
    assert s.min() > 1e-6 * s.max()  # full rank: no row of the test is a zero row
    # Gram route, with G summed over row blocks as a distributed job would
    G = sum(gram_matrix(Y[b]) for b in np.array_split(np.arange(Y.shape[0]), 4))
    R = gram_transform(G)
    got = np.vstack([Y[b] @ R for b in np.array_split(np.arange(Y.shape[0]), 4)])
    np.testing.assert_allclose(got, reorthogonalize(Y), atol=1e-12)
    # equal up to the sign of each column
    signs = np.sign(np.sum(got * ref, axis=0))
    np.testing.assert_allclose(got, ref * signs, atol=1e-8 * np.abs(ref).max())
    # hence identical rows after L2 normalisation up to those signs, and the same Gram
    np.testing.assert_allclose(got.T @ got, np.diag(s), atol=1e-8 * s.max())
    np.testing.assert_allclose(l2_normalize(got) @ l2_normalize(got).T,
                               l2_normalize(ref) @ l2_normalize(ref).T, atol=1e-8)


def test_gram_transform_rank_deficient():
    rng = np.random.default_rng(4)
    Y = rng.standard_normal((50, 3)) @ rng.standard_normal((3, 6))  # rank 3 of 6 columns
    Z = reorthogonalize(Y)
    assert np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z[:, 3:], 0.0, atol=1e-12)
    U, s, _ = np.linalg.svd(Y, full_matrices=False)
    ref = U[:, :3] * np.sqrt(s[:3])
    np.testing.assert_allclose(np.abs(Z[:, :3]), np.abs(ref), atol=1e-6)


def test_orthonormalizer_gives_the_left_singular_vectors():
    rng = np.random.default_rng(5)
    Y = rng.standard_normal((80, 6)) * np.array([10.0, 5.0, 2.0, 1.0, 0.5, 0.1])
    Q = Y @ orthonormalizer(gram_matrix(Y))
    np.testing.assert_allclose(Q.T @ Q, np.eye(6), atol=1e-10)
    U, _, _ = np.linalg.svd(Y, full_matrices=False)
    np.testing.assert_allclose(np.abs(Q), np.abs(U), atol=1e-8)
    # a rank-deficient Y: zero columns where it has no direction, as gram_transform
    Z = (rng.standard_normal((80, 2)) @ rng.standard_normal((2, 5)))
    R = orthonormalizer(gram_matrix(Z))
    np.testing.assert_allclose((Z @ R)[:, 2:], 0.0, atol=1e-12)
    np.testing.assert_allclose((Z @ R)[:, :2].T @ (Z @ R)[:, :2], np.eye(2), atol=1e-8)


@pytest.mark.parametrize("steps", [1, 3, 8])
def test_refine_is_subspace_iteration_of_the_transition(steps):
    A = _graph()
    n = A.shape[0]
    E = np.random.default_rng(6).standard_normal((n, 5))
    E[::9] = 0.0  # nodes without a start vector
    Q = refine(A, E, steps)
    np.testing.assert_allclose(Q.T @ Q, np.eye(5), atol=1e-9)
    # the dense oracle: the span of T^steps X for X the normalised start
    dense = A.toarray()
    T = (np.eye(n) + dense) / (1.0 + dense.sum(axis=1, keepdims=True))
    X = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-300)
    Y = np.linalg.matrix_power(T, steps) @ X
    U, _, _ = np.linalg.svd(Y, full_matrices=False)
    np.testing.assert_allclose(Q @ Q.T, U @ U.T, atol=1e-8)
    np.testing.assert_allclose(refine(A, E, 0), X, atol=1e-15)
    with pytest.raises(ValueError, match="steps"):
        refine(A, E, -1)


def _dense_log_ratio(W: np.ndarray) -> np.ndarray:
    s_out, s_in = W.sum(axis=1), W.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        R = W.sum() * W / np.outer(s_out, s_in)
    return np.where(W > 0, np.log(np.maximum(np.nan_to_num(R), 1.0)), 0.0)


def test_log_ratio_matrix_is_the_dense_definition():
    """log(max(vol w(u,v) / (s_out(u) s_in(v)), 1)) on edges only: symmetric for an
    undirected graph; on a directed one with a repeated pair, the pair's weights added."""
    A = _graph()
    P = log_ratio_matrix(A)
    np.testing.assert_allclose(P.toarray(), _dense_log_ratio(A.toarray()), atol=1e-13)
    np.testing.assert_allclose(P.toarray(), P.toarray().T, atol=1e-13)
    assert P.nnz <= A.nnz and P.data.min() > 0  # no entry outside A's; zeros dropped
    src, dst, w = np.array([0, 0, 1, 2, 2, 3]), np.array([1, 1, 2, 0, 3, 0]), np.array([1.0, 2.0, 1.0, 0.5, 4.0, 1.0])
    D = sp.coo_matrix((w, (src, dst)), shape=(4, 4))
    want = _dense_log_ratio(D.toarray())
    np.testing.assert_allclose(log_ratio_matrix(D).toarray(), want, atol=1e-13)
    assert want[0, 1] == pytest.approx(np.log(9.5 * 3.0 / (3.0 * 3.0)))  # 0 -> 1 twice: weight 3
    with pytest.raises(ValueError, match="non-negative"):
        log_ratio_matrix(sp.csr_matrix(-np.eye(3)))


@pytest.mark.parametrize("steps", [1, 4])
def test_refine_by_the_log_ratio_matrix_is_subspace_iteration_of_it(steps):
    A = _graph()
    n = A.shape[0]
    E = np.random.default_rng(11).standard_normal((n, 5))
    E[::9] = 0.0
    Q = refine(A, E, steps, "pmi")
    np.testing.assert_allclose(Q.T @ Q, np.eye(5), atol=1e-9)
    X = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-300)
    Y = np.linalg.matrix_power(_dense_log_ratio(A.toarray()), steps) @ X
    U, _, _ = np.linalg.svd(Y, full_matrices=False)
    np.testing.assert_allclose(Q @ Q.T, U @ U.T, atol=1e-8)
    assert not np.allclose(Q @ Q.T, refine(A, E, steps) @ refine(A, E, steps).T, atol=1e-3)  # not T's rounds
    np.testing.assert_allclose(refine(A, E, 0, "pmi"), X, atol=1e-15)
    with pytest.raises(ValueError, match="operator"):
        refine(A, E, 2, "laplacian")
    assert np.abs(Q[A.shape[0] - 2]).max() == 0  # the isolated node: no row in P
    rows = Q / np.maximum(np.linalg.norm(Q, axis=1, keepdims=True), 1e-300)
    want = reorthogonalize(propagate(A, rows, 3, 0.2, 0.5))
    np.testing.assert_allclose(smooth(A, E, 3, 0.2, 0.5, refine_steps=steps, refine_operator="pmi"), want,
                               atol=1e-12)


def test_refine_draws_the_start_towards_the_dominant_eigenvectors():
    """Two dense communities joined by a few edges: from a random start, the refined
    basis of width 2 spans T's two dominant eigenvectors (the constant and the split)."""
    rng = np.random.default_rng(7)
    n = 40
    side = np.arange(n) < n // 2
    P = np.where(side[:, None] == side[None, :], 0.5, 0.02)
    U = np.triu(rng.random((n, n)) < P, 1)
    A = sp.csr_matrix((U | U.T).astype(float))
    Q = refine(A, rng.standard_normal((n, 2)), 60)
    dense = A.toarray()
    T = (np.eye(n) + dense) / (1.0 + dense.sum(axis=1, keepdims=True))
    lam, V = np.linalg.eig(T)
    top = np.real(V[:, np.argsort(-np.real(lam))[:2]])
    top, _ = np.linalg.qr(top)
    np.testing.assert_allclose(Q @ Q.T, top @ top.T, atol=1e-6)
    # and the second direction separates the communities
    split = Q @ (Q.T @ (side - side.mean()))
    assert np.all(np.sign(split[side]) == np.sign(split[side][0])) and np.all(np.sign(split[~side]) != np.sign(split[side][0]))


def test_smooth_refines_then_filters():
    A = _graph()
    E = np.random.default_rng(8).standard_normal((A.shape[0], 4))
    Q = refine(A, E, 3)
    want = reorthogonalize(propagate(A, Q / np.linalg.norm(Q, axis=1, keepdims=True), 3, 0.2, 0.5))
    np.testing.assert_allclose(smooth(A, E, 3, 0.2, 0.5, refine_steps=3), want, atol=1e-12)
    np.testing.assert_allclose(smooth(A, E, 1, 0.2, 0.5, refine_steps=3),
                               reorthogonalize(Q / np.linalg.norm(Q, axis=1, keepdims=True)), atol=1e-12)


def test_average_is_the_sum_of_powers_of_the_dense_transition():
    """Neighbourhood averaging against its dense definition: (I + T + ... + T^S) e with
    T = D^-1 (I + A) dense and e the L2-normalised rows; zero rows stay zero only where
    every node within S hops has one (here: the isolated node)."""
    A = _graph()
    n = A.shape[0]
    E = np.random.default_rng(9).standard_normal((n, 5))
    E[3] = 0.0  # a node without a base vector, with neighbours that have one
    dense = A.toarray()
    T = (np.eye(n) + dense) / (1.0 + dense.sum(axis=1, keepdims=True))
    e = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-300)
    for steps in (0, 1, 2, 5):
        want = sum(np.linalg.matrix_power(T, s) @ e for s in range(steps + 1))
        np.testing.assert_allclose(average(A, E, steps), want, atol=1e-12)
    assert np.abs(average(A, E, 2)[3]).sum() > 0  # filled from its neighbours
    assert dense[3].sum() > 0
    with pytest.raises(ValueError, match="steps"):
        average(A, E, -1)


def test_smooth_averages_last():
    """Averaging alone returns its result as it is; with refinement or the filter it
    averages their output."""
    A = _graph()
    E = np.random.default_rng(10).standard_normal((A.shape[0], 4))
    np.testing.assert_allclose(smooth(A, E, 1, 0.2, 0.5, average_steps=2), average(A, E, 2), atol=1e-15)
    np.testing.assert_array_equal(smooth(A, E, 1, 0.2, 0.5), E)  # no step asked: the vectors as they are
    filtered = reorthogonalize(propagate(A, E / np.linalg.norm(E, axis=1, keepdims=True), 3, 0.2, 0.5))
    np.testing.assert_allclose(smooth(A, E, 3, 0.2, 0.5, average_steps=2), average(A, filtered, 2), atol=1e-12)
    Q = refine(A, E, 2, "pmi")
    refined = reorthogonalize(propagate(A, Q / np.maximum(np.linalg.norm(Q, axis=1, keepdims=True), 1e-300),
                                        3, 0.2, 0.5))
    np.testing.assert_allclose(smooth(A, E, 3, 0.2, 0.5, refine_steps=2, average_steps=2, refine_operator="pmi"),
                               average(A, refined, 2), atol=1e-12)
    basis = reorthogonalize(refine(A, E, 2) / np.linalg.norm(refine(A, E, 2), axis=1, keepdims=True))
    np.testing.assert_allclose(smooth(A, E, 1, 0.2, 0.5, refine_steps=2, average_steps=3), average(A, basis, 3),
                               atol=1e-12)


def test_smooth_reports_each_step_it_runs_and_nothing_else():
    """``report`` hears of each step that runs, in order, and does not change the result;
    the one-task stages time these steps and print them to the executor log (TaskProgress)."""
    A = _graph()
    E = np.random.default_rng(11).standard_normal((A.shape[0], 4))
    heard: list[str] = []
    got = smooth(A, E, 3, 0.2, 0.5, refine_steps=2, average_steps=3, refine_operator="pmi", report=heard.append)
    np.testing.assert_array_equal(got, smooth(A, E, 3, 0.2, 0.5, refine_steps=2, average_steps=3,
                                              refine_operator="pmi"))
    assert heard == ["refinement: 2 rounds (pmi)", "filter: order 3", "averaging: 3 steps"]
    heard.clear()
    smooth(A, E, 1, 0.2, 0.5, report=heard.append)
    assert heard == []  # nothing asked, nothing run
    smooth(A, E, 1, 0.2, 0.5, refine_steps=1, report=heard.append)
    assert heard == ["refinement: 1 round (transition)", "normalising and re-orthogonalising"]
