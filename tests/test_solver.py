"""The NumPy solver against the literal dense equations (no Spark)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sepne_spark import dense
from sepne_spark.solver import landmark_factors, set_constants, solve_flops, solve_set
from tests.helpers import random_graph


def blocks(M, L, Vi):
    n = M.shape[0]
    nl = np.setdiff1d(np.arange(n), L)
    M0nl, Mnl0 = M[np.ix_(L, nl)], M[np.ix_(nl, L)]
    return dict(
        S_A=M0nl @ M0nl.T,
        S_B=Mnl0.T @ Mnl0,
        M_ii=M[np.ix_(Vi, Vi)],
        M_i0=M[np.ix_(Vi, L)],
        M_0i=M[np.ix_(L, Vi)],
        Rhat_A=M0nl @ M[np.ix_(Vi, nl)].T,
        Rhat_B=Mnl0.T @ M[np.ix_(nl, Vi)],
    )


@pytest.mark.parametrize("metric", ["I+A", "A+A2"])
@pytest.mark.parametrize("directed", [True, False])
def test_solver_equals_literal_equations(metric, directed):
    g = random_graph(n=90, m=400, seed=3)
    M = g.proximity(metric, directed)
    L = list(range(0, 90, 9))
    nl = np.setdiff1d(np.arange(90), L)
    sets = [nl[:30], nl[30:33], nl[33:]]  # one set smaller than d
    d, lam, eta, iters = 6, 0.7, 0.2, 9
    W, C = dense.sepne_dense(M, L, sets, d, lam, eta, iters)
    f = landmark_factors(M[np.ix_(L, L)], d)
    ref = dense.landmark_factors(M[np.ix_(L, L)], d)[0]
    sign = np.sign(np.sum(f.Phi * ref, axis=1))
    b0 = blocks(M, L, sets[0])
    shared = set_constants(f, b0["S_A"], b0["S_B"], lam, eta)
    for Vi in sets:
        b = blocks(M, L, Vi)
        for Mii in (b["M_ii"], sp.csr_matrix(b["M_ii"])):
            Ws, Cs = solve_set(f, b["S_A"], b["S_B"], Mii, b["M_i0"], b["M_0i"], b["Rhat_A"], b["Rhat_B"], lam, eta, iters)
            np.testing.assert_allclose(Ws.T * sign, W[Vi], rtol=0, atol=1e-10 * np.abs(W[Vi]).max())
            np.testing.assert_allclose(Cs.T * sign, C[Vi], rtol=0, atol=1e-10 * np.abs(C[Vi]).max())
            # The set-independent parts computed once and shared give the same result.
            Wc, Cc = solve_set(f, None, None, Mii, b["M_i0"], b["M_0i"], b["Rhat_A"], b["Rhat_B"], lam, eta, iters,
                               constants=shared)
            np.testing.assert_allclose(Wc, Ws, rtol=0, atol=1e-12 * np.abs(Ws).max())
            with pytest.raises(ValueError, match="constants"):
                solve_set(f, None, None, Mii, b["M_i0"], b["M_0i"], b["Rhat_A"], b["Rhat_B"], lam, 2 * eta, iters,
                          constants=shared)
            np.testing.assert_allclose(Cc, Cs, rtol=0, atol=1e-12 * np.abs(Cs).max())
            # The landmark blocks as SciPy sparse (as the set stage gives them): the same.
            Wsp, Csp = solve_set(f, None, None, Mii, sp.csr_matrix(b["M_i0"]), sp.csr_matrix(b["M_0i"]),
                                 b["Rhat_A"], b["Rhat_B"], lam, eta, iters, constants=shared)
            np.testing.assert_allclose(Wsp, Ws, rtol=0, atol=1e-12 * np.abs(Ws).max())
            np.testing.assert_allclose(Csp, Cs, rtol=0, atol=1e-12 * np.abs(Cs).max())


def test_objective_decreases_and_float32_close():
    g = random_graph(n=80, m=420, seed=9)
    M = g.proximity("A+A2", False)
    L = list(range(10))
    Vi = np.arange(10, 80)
    f = landmark_factors(M[np.ix_(L, L)], 8)
    b = blocks(M, L, Vi)
    args = (f, b["S_A"], b["S_B"], b["M_ii"], b["M_i0"], b["M_0i"], b["Rhat_A"], b["Rhat_B"], 0.4, 0.1)
    W64, C64 = solve_set(*args, 30)
    W32, C32 = solve_set(*args, 30, dtype=np.float32)
    assert np.abs(W32 - W64).max() <= 1e-4 * np.abs(W64).max()
    # Zero iterations is the landmark-only solution: A = (P P^T + eta I)^-1 P M_i0^T and
    # the start B = (P^T P + eta I)^-1 P^T M_0i, as written.
    W0, C0 = solve_set(*args, 0)
    P, eye = f.P, np.eye(f.P.shape[0])
    A_ref = np.linalg.solve(P @ P.T + 0.1 * eye, P @ b["M_i0"].T)
    B_ref = np.linalg.solve(P.T @ P + 0.1 * eye, P.T @ b["M_0i"])
    np.testing.assert_allclose(W0, f.Phi @ A_ref, rtol=0, atol=1e-10 * np.abs(f.Phi @ A_ref).max())
    np.testing.assert_allclose(C0, f.Psi @ B_ref, rtol=0, atol=1e-10 * np.abs(f.Psi @ B_ref).max())


def test_rejects_non_positive_eta_and_counts_flops():
    f = landmark_factors(np.eye(3) + 0.1, 2)
    z = np.zeros((3, 1))
    with pytest.raises(ValueError, match="eta"):
        solve_set(f, np.eye(3), np.eye(3), np.zeros((1, 1)), z.T, z, z, z, 0.4, 0.0, 1)
    assert solve_flops(1000, 128, 1000, 10_000, 5) > 2 * 1000**3 / 3


def test_indefinite_system_is_repaired_with_a_warning_never_nan():
    from sepne_spark.solver import RepairedFactorisation, spd_solve

    g = random_graph(n=40, m=150, seed=3)
    M = g.proximity("I+A", False)
    L, Vi = list(range(6)), list(range(6, 20))
    b = blocks(M, L, Vi)
    f = landmark_factors(M[np.ix_(L, L)], 4)
    # S_A far too small for the set's own rows: S_A - M_0i M_0i^T is negative definite,
    # as rounding can make it, and with a large lam no Cholesky factorisation exists.
    b["S_A"] = np.zeros_like(b["S_A"])
    with pytest.warns(RepairedFactorisation, match="C_A .* not numerically positive definite"):
        W, C = solve_set(f, lam=50.0, eta=0.1, iters=5, **b)
    assert np.isfinite(W).all() and np.isfinite(C).all()

    # The repair is the eigenvalue-clipped matrix: it solves exactly that system.
    C_bad = np.diag([2.0, -1.0, 0.5])
    with pytest.warns(RepairedFactorisation, match="1 eigenvalues raised to 0.5"):
        X = spd_solve(C_bad, np.eye(3), 0.5)
    np.testing.assert_allclose(X, np.diag([0.5, 2.0, 2.0]))
    # A well-posed system takes the Cholesky path, silently.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(spd_solve(np.diag([2.0, 4.0]), np.ones(2), 0.1), [0.5, 0.25])
    with pytest.raises(FloatingPointError, match="NaN or infinite"):
        spd_solve(np.array([[np.inf]]), np.ones(1), 0.1)


def test_row_space_factors_project_M00_on_the_landmark_rows_subspaces():
    from sepne_spark.solver import row_space_factors

    rng = np.random.default_rng(11)
    k, n, d = 12, 80, 4
    M0 = rng.random((k, n)) * (rng.random((k, n)) < 0.3)  # landmark rows over every node
    Mc = rng.random((n, k)) * (rng.random((n, k)) < 0.3)  # landmark columns
    M00 = M0[:, :k].copy()
    Mc[:k] = M00
    S_A, S_B = M0[:, k:] @ M0[:, k:].T, Mc[k:].T @ Mc[k:]
    f = row_space_factors(M00, S_A, S_B, d)
    _, UL = np.linalg.eigh(M0 @ M0.T)
    _, VR = np.linalg.eigh(Mc.T @ Mc)
    UL, VR = UL[:, ::-1][:, :d], VR[:, ::-1][:, :d]
    np.testing.assert_allclose(f.P, UL @ UL.T @ M00 @ VR @ VR.T, atol=1e-10)  # M00 projected
    np.testing.assert_allclose(f.Phi.T @ f.Psi, f.P, atol=1e-12)
    # Phi spans the top-d eigenvectors of M_0: M_0:^T, Psi those of M_:0^T M_:0.
    np.testing.assert_allclose(UL @ UL.T @ f.Phi.T, f.Phi.T, atol=1e-10)
    np.testing.assert_allclose(VR @ VR.T @ f.Psi.T, f.Psi.T, atol=1e-10)
    assert f.Phi.shape == (d, k) and np.all(np.diff(f.singular_values) <= 1e-12)


def test_the_oracles_rounds_descend_the_papers_objective():
    """The dense oracle's rounds against the objective they minimise, written out: for a
    set V_i with coefficients A (W_i = Phi A) and B (C_i = Psi B), P = Phi^T Psi,

        ||M_ii - A^T P B||^2 + ||M_i0 - A^T P||^2 + ||M_0i - P B||^2
        + lambda (||M_ib - A^T M_0b||^2 + ||M_bi - M_b0 B||^2) + eta (||A||^2 + ||B||^2)

    (b: the non-landmark nodes outside V_i). Each half round (A given B, then B given A)
    never raises it, the oracle's W_i after t rounds is Phi A_t, and after many rounds a
    step in any direction of A or of B raises it (a block minimum: the objective is
    convex in each)."""
    g = random_graph(n=80, m=420, seed=9)
    M = g.proximity("A+A2", True)
    L = list(range(0, 80, 8))
    nl = np.setdiff1d(np.arange(80), L)
    Vi, ib = nl[:40], nl[40:]
    d, lam, eta = 6, 0.7, 0.2
    Phi, Psi, P = dense.landmark_factors(M[np.ix_(L, L)], d)
    Mii, Mi0, M0i = M[np.ix_(Vi, Vi)], M[np.ix_(Vi, L)], M[np.ix_(L, Vi)]
    Mib, M0b, Mbi, Mb0 = M[np.ix_(Vi, ib)], M[np.ix_(L, ib)], M[np.ix_(ib, Vi)], M[np.ix_(ib, L)]

    def objective(A, B):
        return (np.sum((Mii - A.T @ P @ B) ** 2) + np.sum((Mi0 - A.T @ P) ** 2) + np.sum((M0i - P @ B) ** 2)
                + lam * (np.sum((Mib - A.T @ M0b) ** 2) + np.sum((Mbi - Mb0 @ B) ** 2))
                + eta * (np.sum(A ** 2) + np.sum(B ** 2)))

    k, eye = len(L), np.eye(len(L))
    B = np.linalg.solve(P.T @ P + eta * eye, P.T @ M0i)
    values = []
    for t in range(1, 201):
        X = P @ B
        A = np.linalg.solve(X @ X.T + P @ P.T + lam * M0b @ M0b.T + eta * eye,
                            X @ Mii.T + P @ Mi0.T + lam * M0b @ Mib.T)
        values.append(objective(A, B))
        Y = P.T @ A
        B = np.linalg.solve(Y @ Y.T + P.T @ P + lam * Mb0.T @ Mb0 + eta * eye,
                            Y @ Mii + P.T @ M0i + lam * Mb0.T @ Mbi)
        values.append(objective(A, B))
        if t in (1, 4, 9):
            W, C = dense.sepne_dense(M, L, [Vi], d, lam, eta, t)
            np.testing.assert_allclose(W[Vi], (Phi @ A).T, atol=1e-10)
            np.testing.assert_allclose(C[Vi], (Psi @ B).T, atol=1e-10)
    assert all(b <= a * (1 + 1e-12) for a, b in zip(values, values[1:])), "a half round raised the objective"
    assert values[-1] < values[0]
    rng = np.random.default_rng(1)
    base = objective(A, B)
    for _ in range(5):
        D = rng.standard_normal((k, len(Vi)))
        for eps in (1e-3, -1e-3):
            assert objective(A + eps * D, B) > base and objective(A, B + eps * D) > base
