"""The per-set SepNE solve: pure NumPy/SciPy functions on arrays (no Spark).

For a set V_i the alternating least-squares steps of SepNE (Li, Zhang and Song, AAAI 2019) are

    (X X^T + C_A) A = X M_ii^T + r_A,   X = P B,   C_A = P P^T + lam G_A + eta I
    (Y Y^T + C_B) B = Y M_ii   + r_B,   Y = P^T A, C_B = P^T P + lam G_B + eta I

with r_A = P M_i0^T + lam R_A and r_B = P^T M_0i + lam R_B. Only W = Phi A and
C = Psi B are ever needed, and P = Phi^T Psi has rank d, so both steps can be carried
out entirely in the d-dimensional space:

* X X^T = Phi^T K Phi with K = Z Z^T and Z = Psi B (d x n_i);
* by the push-through form of the Woodbury identity,
  Phi (C_A + Phi^T K Phi)^-1 = (I_d + G_A K)^-1 Phi C_A^-1 with G_A = Phi C_A^-1 Phi^T;
* hence W = Phi A = (I_d + G_A K)^-1 (G_A Z M_ii^T + h_A) with h_A = Phi C_A^-1 r_A.

I_d + G_A K is similar to I + G_A^1/2 K G_A^1/2, whose eigenvalues are >= 1, so it is
invertible even when K is singular (fewer than d nodes in a set, a zero start).
C_A, G_A and h_A are the same in every iteration, so each set costs one k x k Cholesky
factorisation per step kind and then O(d^2 n_i + d nnz(M_ii)) per iteration.
A k x k system that rounding has made indefinite is repaired, with a warning, by
:func:`spd_solve`; NaN or infinite input raises ``FloatingPointError`` instead.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

Matrix = np.ndarray | sp.spmatrix | sp.sparray


@dataclass(frozen=True)
class LandmarkFactors:
    """Landmark embedding: Phi, Psi (d x k), P = Phi^T Psi (k x k), singular values."""

    Phi: np.ndarray
    Psi: np.ndarray
    P: np.ndarray
    singular_values: np.ndarray


def landmark_factors(M00: np.ndarray, d: int) -> LandmarkFactors:
    """Factorise the landmark block M00 = U S V^T and keep the top ``d`` components.

    Phi = (U_d S_d^1/2)^T and Psi = (V_d S_d^1/2)^T, both d x k. Signs are made
    deterministic by making the largest-magnitude entry of each row of Phi positive.
    """
    M00 = np.asarray(M00, dtype=np.float64)
    U, s, Vt = np.linalg.svd(M00)
    d = min(d, len(s))
    U, s, Vt = U[:, :d], s[:d], Vt[:d]
    flip = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(d)])
    flip[flip == 0] = 1.0
    U, Vt = U * flip, Vt * flip[:, None]
    root = np.sqrt(s)
    Phi = (U * root).T.copy()
    Psi = (Vt.T * root).T.copy()
    return LandmarkFactors(Phi=Phi, Psi=Psi, P=Phi.T @ Psi, singular_values=s)


def row_space_factors(M00: np.ndarray, S_A: np.ndarray, S_B: np.ndarray, d: int,
                      subspaces: tuple[np.ndarray, np.ndarray] | None = None) -> LandmarkFactors:
    """Landmark factors whose subspaces come from all of the landmark rows and columns.

    A node is embedded as a combination of landmark rows (and columns), so the d
    directions worth keeping are those where the landmark rows carry most of M: the
    top-d eigenvectors ``U_L`` of ``M_0: M_0:^T = S_A + M00 M00^T`` (the landmark rows
    over every node) and ``V_R`` of ``M_:0^T M_:0 = S_B + M00^T M00``. P is M00 projected
    on them: with ``U_L^T M00 V_R = X S Y^T``, Phi = ((U_L X) S^1/2)^T and
    Psi = ((V_R Y) S^1/2)^T. With M = I + A, M00 is nearly the identity and its own
    singular vectors are arbitrary directions among the landmarks; these are not. Only
    the k x k summaries that the fit computes anyway are needed. Signs as in
    :func:`landmark_factors`.
    """
    M00 = np.asarray(M00, dtype=np.float64)
    left, right = subspaces if subspaces is not None else (S_A + M00 @ M00.T, S_B + M00.T @ M00)
    _, UL = np.linalg.eigh(left)
    _, VR = np.linalg.eigh(right)
    d = min(d, M00.shape[0])
    UL, VR = UL[:, ::-1][:, :d], VR[:, ::-1][:, :d]
    X, s, Yt = np.linalg.svd(UL.T @ M00 @ VR)
    U, V = UL @ X, VR @ Yt.T
    flip = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(d)])
    flip[flip == 0] = 1.0
    U, V = U * flip, V * flip
    root = np.sqrt(s)
    Phi = (U * root).T.copy()
    Psi = (V * root).T.copy()
    return LandmarkFactors(Phi=Phi, Psi=Psi, P=Phi.T @ Psi, singular_values=s)


class RepairedFactorisation(RuntimeWarning):
    """A k x k system was not numerically positive definite and was repaired."""


def spd_solve(C: np.ndarray, B: np.ndarray, floor: float, what: str = "C") -> np.ndarray:
    """Solve C X = B for a matrix C that is symmetric positive definite in exact arithmetic.

    Every k x k system of the solve has the form P P^T + lam (S - M M^T) + eta I, where
    S - M M^T sums the outer products of the other nodes' rows: positive semi-definite,
    so C's eigenvalues are at least ``floor`` = eta. Rounding (weights spanning many
    orders of magnitude, huge lam) can still break that, and the Cholesky factorisation
    then fails. In that case, and only then, C is replaced by the nearest symmetric
    matrix whose eigenvalues are at least ``floor`` (an eigendecomposition with the
    eigenvalues clipped), and a :class:`RepairedFactorisation` warning is issued.
    Non-finite input is never repaired: it raises ``FloatingPointError``.
    """
    if not (np.isfinite(C).all() and np.isfinite(B).all()):
        raise FloatingPointError(f"{what} holds NaN or infinite values (check the input weights)")
    try:
        return sla.cho_solve(sla.cho_factor(C, lower=True, check_finite=False), B, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    w, V = np.linalg.eigh((C + C.T) / 2)
    clipped = int(np.sum(w < floor))
    warnings.warn(
        f"{what} ({C.shape[0]} x {C.shape[0]}) was not numerically positive definite (smallest eigenvalue "
        f"{w[0]:.3g}); {clipped} eigenvalues raised to {floor:g} before solving",
        RepairedFactorisation,
        stacklevel=2,
    )
    w = np.maximum(w, floor)
    return V @ ((V.T @ B) / w[:, None])


def _mul(M: Matrix, X: np.ndarray) -> np.ndarray:
    """M @ X for dense or sparse M, always returning a dense array."""
    out = M @ X
    return np.asarray(out.toarray() if sp.issparse(out) else out)


def _rmul(X: np.ndarray, M: Matrix) -> np.ndarray:
    """X @ M for dense X and dense or sparse M, always returning a dense array."""
    return np.asarray((M.T @ X.T).T) if sp.issparse(M) else X @ M


def _outer(M: Matrix) -> np.ndarray:
    """M M^T, dense: a sparse product for sparse M (its cost follows the entries, not
    k^2 n_i), BLAS syrk for dense M."""
    return (M @ M.T).toarray() if sp.issparse(M) else M @ M.T


@dataclass(frozen=True)
class SetConstants:
    """The parts of every set's k x k systems that do not depend on the set.

    ``base_A = P P^T + lam S_A + eta I`` and ``base_B = P^T P + lam S_B + eta I`` (k x k);
    a set's systems are ``C_A = base_A - lam M_0i M_0i^T`` and ``C_B = base_B - lam
    M_i0^T M_i0``. ``H0 = Psi (P^T P + eta I)^-1 Psi^T`` and ``H1 = Phi (P P^T + eta I)^-1
    Phi^T`` (d x d) give the landmark-only start ``Z = H0 Phi M_0i`` and the landmark-only
    embedding ``W = H1 Psi M_i0^T`` of a set without rounds, because P = Phi^T Psi.
    Computed once per model by :func:`set_constants` (O(k^3)) instead of once per set.
    """

    factors: LandmarkFactors
    base_A: np.ndarray
    base_B: np.ndarray
    H0: np.ndarray
    H1: np.ndarray
    lam: float
    eta: float


def set_constants(factors: LandmarkFactors, S_A: np.ndarray, S_B: np.ndarray, lam: float, eta: float) -> SetConstants:
    """Precompute :class:`SetConstants` from the landmark factors and the global summaries.

    Raises ``ValueError`` unless ``eta > 0``.
    """
    if eta <= 0:
        raise ValueError(f"eta must be > 0, got {eta}")
    Phi, Psi, P = factors.Phi, factors.Psi, factors.P
    k = P.shape[0]
    PPt, PtP = P @ P.T, P.T @ P
    base_A = PPt + lam * np.asarray(S_A, dtype=np.float64)
    base_B = PtP + lam * np.asarray(S_B, dtype=np.float64)
    base_A[np.diag_indices(k)] += eta
    base_B[np.diag_indices(k)] += eta
    PtP[np.diag_indices(k)] += eta
    PPt[np.diag_indices(k)] += eta
    H0 = Psi @ spd_solve(PtP, Psi.T, eta, "P^T P + eta I")
    H1 = Phi @ spd_solve(PPt, Phi.T, eta, "P P^T + eta I")
    return SetConstants(factors, base_A, base_B, (H0 + H0.T) / 2, (H1 + H1.T) / 2, float(lam), float(eta))


def solve_set(
    factors: LandmarkFactors,
    S_A: np.ndarray | None,
    S_B: np.ndarray | None,
    M_ii: Matrix,
    M_i0: np.ndarray,
    M_0i: np.ndarray,
    Rhat_A: np.ndarray,
    Rhat_B: np.ndarray,
    lam: float,
    eta: float,
    iters: int,
    dtype: np.dtype | type = np.float64,
    constants: SetConstants | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Embed one set of n_i non-landmark nodes.

    Parameters
    ----------
    factors: landmark factors from :func:`landmark_factors`.
    S_A, S_B: k x k global summaries (sums over every non-landmark node); may be None
        when ``constants`` is given.
    M_ii: n_i x n_i proximity block of the set (dense or SciPy sparse).
    M_i0: n_i x k rows of the set restricted to the landmark columns.
    M_0i: k x n_i landmark rows restricted to the set's columns. Dense, or both as
        SciPy sparse when either is (a set has few landmark entries: the k x k products
        then cost what its entries do, not k^2 n_i).
    Rhat_A, Rhat_B: k x n_i two-hop sums of the set's nodes.
    lam, eta, iters: global weight, regulariser (> 0), alternating rounds.
    dtype: float64 or float32 for the iterations (the k x k factorisations are
        always done in float64).
    constants: :func:`set_constants` of the same factors, S_A, S_B, lam and eta,
        computed once and shared by many sets; computed here when None.

    Returns
    -------
    W, C: d x n_i embeddings (Phi A) and context vectors (Psi B).
    """
    if eta <= 0:
        raise ValueError(f"eta must be > 0, got {eta}")
    if constants is None:
        constants = set_constants(factors, S_A, S_B, lam, eta)
    elif constants.factors is not factors or (constants.lam, constants.eta) != (float(lam), float(eta)):
        raise ValueError("constants were computed for other landmark factors, lam or eta")
    Phi, Psi = factors.Phi, factors.Psi
    n_i = M_i0.shape[0]
    d = Phi.shape[0]
    if n_i == 0:
        return np.zeros((d, 0)), np.zeros((d, 0))
    if sp.issparse(M_i0) or sp.issparse(M_0i):  # a set's few landmark entries, as given
        M_i0, M_0i = sp.csr_matrix(M_i0, dtype=np.float64), sp.csr_matrix(M_0i, dtype=np.float64)
    else:
        M_i0 = np.ascontiguousarray(M_i0, dtype=np.float64)
        M_0i = np.ascontiguousarray(M_0i, dtype=np.float64)

    # A-step constants: C_A = P P^T + lam (S_A - M_0i M_0i^T) + eta I.
    C_A = _outer(M_0i)  # symmetric rank-n_i product
    C_A *= -lam
    C_A += constants.base_A
    F_A = spd_solve(C_A, Phi.T, eta, "C_A")  # k x d
    G_A = Phi @ F_A  # d x d, symmetric
    # h_A = F_A^T (P M_i0^T + lam (Rhat_A - M_0i M_ii^T)); F_A^T P = G_A Psi as P = Phi^T Psi
    FtM0i = _rmul(F_A.T, M_0i)  # d x n_i
    h_A = _rmul(G_A @ Psi, M_i0.T) + lam * (F_A.T @ Rhat_A) - lam * _mul(M_ii, FtM0i.T).T

    # B-step constants: C_B = P^T P + lam (S_B - M_i0^T M_i0) + eta I.
    C_B = _outer(M_i0.T)
    C_B *= -lam
    C_B += constants.base_B
    F_B = spd_solve(C_B, Psi.T, eta, "C_B")  # k x d
    G_B = Psi @ F_B
    # h_B = F_B^T (P^T M_0i + lam (Rhat_B - M_i0^T M_ii)); F_B^T P^T = G_B Phi
    FtMi0 = _rmul(F_B.T, M_i0.T)  # d x n_i
    h_B = _rmul(G_B @ Phi, M_0i) + lam * (F_B.T @ Rhat_B) - lam * _mul(M_ii.T, FtMi0.T).T

    # Start: B = (P^T P + eta I)^-1 P^T M_0i, so Z = Psi B = H0 Phi M_0i.
    Z = constants.H0 @ _rmul(Phi, M_0i)

    dt = np.dtype(dtype)
    G_A, G_B, h_A, h_B, Z = (x.astype(dt, copy=False) for x in (G_A, G_B, h_A, h_B, Z))
    M_ii_t = M_ii.astype(dt) if sp.issparse(M_ii) else np.asarray(M_ii, dtype=dt)
    I_d = np.eye(d, dtype=dt)
    W = None
    for _ in range(iters):
        # A-step: W = (I + G_A K)^-1 (G_A Z M_ii^T + h_A), K = Z Z^T
        Y = _mul(M_ii_t, Z.T).T  # Z M_ii^T
        W = np.linalg.solve(I_d + G_A @ (Z @ Z.T), G_A @ Y + h_A)
        # B-step: Z = (I + G_B K)^-1 (G_B W M_ii + h_B), K = W W^T
        Yb = _mul(M_ii_t.T, W.T).T  # W M_ii
        Z = np.linalg.solve(I_d + G_B @ (W @ W.T), G_B @ Yb + h_B)
    if W is None:
        # No iterations: the landmark-only A = (P P^T + eta I)^-1 P M_i0^T, W = Phi A.
        W = constants.H1 @ _rmul(Psi, M_i0.T)
    return np.asarray(W, dtype=np.float64), np.asarray(Z, dtype=np.float64)


def solve_flops(k: int, d: int, n_i: int, nnz_ii: int, iters: int) -> float:
    """Floating-point operations :func:`solve_set` performs for one set.

    Counted as dense BLAS/LAPACK work, the way it is done: a symmetric product
    X X^T of a k x n matrix (BLAS syrk) is k^2 n, a general product of m x p and p x q
    is 2 m p q, a Cholesky factorisation k^3 / 3, two triangular solves with q
    right-hand sides 2 k^2 q, an LU solve of d x d with q right-hand sides
    2/3 d^3 + 2 d^2 q, a sparse product 2 nnz per column. The set-independent parts
    (:func:`set_constants`) are not included.
    """
    per_step_setup = (
        k * k * n_i  # M_0i M_0i^T (syrk)
        + k**3 / 3  # Cholesky of C_A
        + 2 * k * k * d  # F_A = C_A^-1 Phi^T
        + 2 * d * d * k  # G_A = Phi F_A
        + 2 * d * d * k  # G_A Psi
        + 3 * 2 * d * k * n_i  # (G_A Psi) M_i0^T, F_A^T Rhat_A, F_A^T M_0i
        + 2 * d * nnz_ii  # M_ii (F_A^T M_0i)^T
    )
    start = 2 * d * k * n_i + 2 * d * d * n_i  # H0 (Phi M_0i)
    per_step = (
        2 * d * nnz_ii  # Z M_ii^T
        + d * d * n_i  # K = Z Z^T (syrk)
        + 2 * d**3  # G K
        + 2 * d * d * n_i  # G Y
        + 2 * d**3 / 3 + 2 * d * d * n_i  # LU solve
    )
    return float(2 * per_step_setup + start + iters * 2 * per_step)
