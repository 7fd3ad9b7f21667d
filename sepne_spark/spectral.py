"""Spectral propagation of embeddings (ProNE's Chebyshev-Gaussian filter), NumPy/SciPy only.

ProNE (Zhang et al., IJCAI 2019) improves a base embedding ``E`` (n x d) by filtering it
with a band-pass graph filter. This module holds that filter's arithmetic in a form a
distributed implementation can follow one step at a time: every step is either a
product of the sparse n x n operator ``T`` with a dense n x d block, or an elementwise
linear combination of n x d blocks (row-local, no communication), or a d x d
computation on the driver.

The operator
------------
Given the weighted adjacency ``A`` (n x n, no self-loops needed; an undirected graph
holds both directions), ProNE uses

* ``T = D^-1 (I + A)``: the row-normalised transition matrix of ``I + A`` (every node
  gets a self-loop of weight 1, so no row is zero and ``T`` is defined for isolated
  nodes too; ``D = diag(1 + s(u))`` with ``s(u)`` the weighted out-degree),
* ``L = I - T`` (random-walk Laplacian of ``I + A``) and the shifted ``M = L - mu I =
  (1 - mu) I - T``,
* the matrix variable ``X = M^2 / 2 - I`` and the Gaussian filter ``exp(-theta X)``,
  truncated to its Chebyshev expansion ``sum_i c_i T_i(X)`` with ``c_0 = I_0(theta)``,
  ``c_i = 2 (-1)^i I_i(theta)`` (``I_i`` the modified Bessel function of the first
  kind, :func:`chebyshev_coefficients`; the generating function
  ``exp(z x) = I_0(z) + 2 sum_i I_i(z) T_i(x)`` at ``z = -theta``), so that
  ``conv = sum_{i < order} c_i T_i(X) E`` by the recurrence
  ``T_0 E = E``, ``T_1 E = X E``, ``T_{i+1} E = 2 X T_i E - T_{i-1} E``,
* and the output ``Y = (I + A)(E - conv) = D T (E - conv)``: one more product with ``T``
  followed by the row scaling ``1 + s(u)``.

Applying ``M`` to a block is one sparse product (``T E``) and one combination
(``(1 - mu) E - T E``); applying ``X`` costs two. One call of :func:`propagate` with
``order >= 2`` therefore costs exactly ``2 (order - 1) + 1 = 2 order - 1`` sparse
products of ``T`` with an n x d block (:func:`sparse_products`): 19 for ProNE's
order 10, 9 for order 5, 5 for order 3, 3 for order 2. ``order = 1`` returns ``E``
unchanged (as the reference does) and costs nothing.

Re-orthogonalisation
--------------------
ProNE finishes with a dense SVD of ``Y = U S V^T`` and returns ``U S^1/2`` (rows then
L2-normalised). A distributed job cannot take the SVD of an n x d matrix, but it does
not need to: with the d x d Gram matrix ``G = Y^T Y = V S^2 V^T`` (a sum over row blocks
of ``Y_b^T Y_b``), ``U S^1/2 = Y V S^-1/2``. :func:`gram_transform` turns ``G`` into that
d x d right factor ``V S^-1/2`` on the driver, and every row block is then multiplied by
it independently (:func:`reorthogonalize` does both on one machine). The result equals
ProNE's ``U S^1/2`` up to the sign of each column (exactly the same span and column
scaling; identical after any rotation-invariant use such as row normalisation followed
by a linear classifier).

Neighbourhood averaging
-----------------------
A low-pass step that keeps every vector's own direction: :func:`average` returns
``e + T e + T^2 e + ... + T^S e`` for the L2-normalised rows ``e`` of ``E`` (``S`` sparse
products; no re-orthogonalisation). A node's vector then leans towards its neighbours'
(a linear classifier sees labels that agree across an edge), without the filter's
band-pass and without the refinement's pull towards the graph's dominant eigenvectors,
both of which lowered the document graphs' validation scores at 10% labels
(benchmarks/LARGE_GRAPH_STUDY.md, findings 8 and 14) where the averaging raised them
(BENCHMARKS.md, the validation study, item 10). It comes last, after the refinement and
the filter when they run too: there it smooths their output, whose leading directions
hold the graph's communities, over each node's neighbourhood (finding 17 of the study;
before them, the refinement's rounds undid most of it, finding 15).

Refinement by subspace iteration
--------------------------------
The filter spreads what its input holds; it cannot find what the input lacks. On a large
graph with few landmarks per node (a uniform graph of 10^6 nodes and 2,000 landmarks)
the per-set solve's vectors hold too little of the graph's community structure, and
filtering them keeps them there. :func:`refine` first runs ``steps`` rounds of subspace
iteration from them: ``Q <- orthonormal basis of T Q`` with the same ``T = D^-1 (I + A)``,
which draws the span of the n x d block towards the dominant eigenvectors of ``T`` (the
graph's community structure) while the start keeps what the solve found. This is the
power iteration of ProNE's randomised SVD, started from SepNE's vectors instead of
random ones. Each round is one sparse product and one d x d Gram matrix (the
orthonormal basis is ``Y V S^-1`` for ``Y^T Y = V S^2 V^T``: :func:`orthonormalizer`), so
a distributed job runs it as it runs the filter.

The rounds can use another operator (``operator="pmi"``): the one-hop log-ratio matrix
``P`` of :func:`log_ratio_matrix`, ``P[u, v] = log(max(vol w(u, v) / (s_out(u) s_in(v)),
1))`` (the shifted PMI of one-step walks, NetMF's matrix for a window of 1; it has the
graph's edges as entries and nothing more). Its dominant eigenvectors are what a
truncated SVD of that matrix (ProNE's base, with its own log ratio) finds, so the rounds
draw SepNE's vectors towards that factorisation. Filtered, it held the communities of
graphs with hubs in fewer leading directions than the transition rounds did, and scored
higher at few labels (benchmarks/LARGE_GRAPH_STUDY.md, finding 16); it takes more
rounds to get there (64 against 8).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp
from scipy.special import iv

from sepne_spark.errors import SettingError
from sepne_spark.sparse import sparse_proximity

__all__ = [
    "l2_normalize",
    "chebyshev_coefficients",
    "transition_with_self_loops",
    "propagate",
    "sparse_products",
    "gram_matrix",
    "gram_transform",
    "reorthogonalize",
    "orthonormalizer",
    "refine",
    "average",
    "smooth",
]


def l2_normalize(X: np.ndarray) -> np.ndarray:
    """Scale every row of ``X`` to unit Euclidean norm; zero rows stay zero.

    Parameters
    ----------
    X : numpy.ndarray
        Matrix of shape (n, d).

    Returns
    -------
    numpy.ndarray
        A new float64 array of the same shape.
    """
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    out = np.zeros_like(X)
    np.divide(X, norms, out=out, where=norms > 0)
    return out


def chebyshev_coefficients(order: int, theta: float) -> np.ndarray:
    """The signed Bessel coefficients of ProNE's Chebyshev-Gaussian filter.

    Parameters
    ----------
    order : int
        Number of Chebyshev terms (ProNE's ``step``, default 10), ``>= 1``.
    theta : float
        Filter parameter (ProNE's ``theta``, default 0.5).

    Returns
    -------
    numpy.ndarray
        ``c`` of length ``order``: ``c[0] = I_0(theta)`` and ``c[i] = 2 (-1)^i I_i(theta)``
        for ``i >= 1``, ``I_i`` the modified Bessel function of the first kind.
    """
    order = int(order)
    if order < 1:
        raise SettingError(f"order must be >= 1, got {order}")
    i = np.arange(order)
    c = 2.0 * iv(i, float(theta)) * np.where(i % 2 == 0, 1.0, -1.0)
    c[0] = iv(0, float(theta))
    return c


def transition_with_self_loops(A: sp.spmatrix | sp.sparray) -> tuple[sp.csr_matrix, np.ndarray]:
    """``T = D^-1 (I + A)`` (CSR) and the diagonal ``D = 1 + s`` (row sums of ``A`` plus one).

    ``A`` is the weighted adjacency as the pipeline holds it (n x n, non-negative); its
    diagonal, if any, is added to the unit self-loop.
    """
    A = sp.csr_matrix(A, dtype=np.float64)
    n, m = A.shape
    if n != m:
        raise ValueError(f"A must be square, got {A.shape}")
    if A.nnz and A.data.min() < 0:
        raise ValueError("A must have non-negative weights")
    IA = sp.csr_matrix(sp.identity(n, format="csr") + A)
    D = np.asarray(IA.sum(axis=1)).ravel()
    T = sp.csr_matrix(sp.diags(1.0 / D) @ IA)
    return T, D


def sparse_products(order: int) -> int:
    """Sparse ``T @ block`` products one :func:`propagate` call performs: ``2 order - 1``
    (``0`` for ``order = 1``)."""
    order = int(order)
    if order < 1:
        raise SettingError(f"order must be >= 1, got {order}")
    return 0 if order == 1 else 2 * order - 1


def propagate(
    A: sp.spmatrix | sp.sparray,
    E: np.ndarray,
    order: int = 10,
    mu: float = 0.2,
    theta: float = 0.5,
) -> np.ndarray:
    """ProNE's spectral propagation of ``E`` over the graph ``A`` (before the final SVD).

    The sequence of steps, each ``T @ (n x d block)`` being one sparse product
    (``T = D^-1 (I + A)``, see the module docstring); ``mx(Z) = (1 - mu) Z - T Z`` is
    ``M Z`` and ``c = chebyshev_coefficients(order, theta)``::

        Lx0  = E
        Lx1  = 0.5 * mx(mx(E)) - E                      # X E           (2 products)
        conv = c[0] * Lx0 + c[1] * Lx1
        for i in 2 .. order-1:                          # 2 products each
            Lx2  = mx(mx(Lx1)) - 2 * Lx1 - Lx0          # = 2 X Lx1 - Lx0
            conv = conv + c[i] * Lx2
            Lx0, Lx1 = Lx1, Lx2
        Y = D * (T @ (E - conv))                        # (I + A)(E - conv), 1 product

    Parameters
    ----------
    A : scipy.sparse matrix
        Weighted adjacency (n x n, non-negative; both directions for an undirected graph).
    E : numpy.ndarray
        Base embedding (n x d); rows may be zero.
    order : int, default 10
        Chebyshev terms (ProNE's ``step``); ``1`` returns ``E`` unchanged.
    mu : float, default 0.2
        Spectral shift of ``M = L - mu I``.
    theta : float, default 0.5
        Filter parameter of the Bessel coefficients.

    Returns
    -------
    numpy.ndarray
        ``Y`` (n x d), float64. ProNE's embedding is ``reorthogonalize(Y)`` (then rows
        L2-normalised). Costs :func:`sparse_products` ``(order)`` sparse products.
    """
    E = np.asarray(E, dtype=np.float64)
    if E.ndim != 2 or E.shape[0] != A.shape[0]:
        raise ValueError(f"E must be (n, d) with n = {A.shape[0]}, got {E.shape}")
    c = chebyshev_coefficients(order, theta)
    if order == 1:
        return E.copy()
    T, D = transition_with_self_loops(A)
    shift = 1.0 - float(mu)

    def mx(Z: np.ndarray) -> np.ndarray:  # M Z = (1 - mu) Z - T Z: one sparse product
        return shift * Z - T @ Z

    Lx0 = E
    Lx1 = 0.5 * mx(mx(E)) - E
    conv = c[0] * Lx0 + c[1] * Lx1
    for i in range(2, order):
        Lx2 = mx(mx(Lx1)) - 2.0 * Lx1 - Lx0
        conv += c[i] * Lx2
        Lx0, Lx1 = Lx1, Lx2
    return D[:, None] * (T @ (E - conv))


def gram_matrix(Y: np.ndarray) -> np.ndarray:
    """``Y^T Y`` (d x d); the distributed form sums ``Y_b^T Y_b`` over row blocks."""
    Y = np.asarray(Y, dtype=np.float64)
    return Y.T @ Y


def gram_transform(G: np.ndarray, rcond: float = 1e-6) -> np.ndarray:
    """The d x d right factor ``R = V S^-1/2`` with ``Y R = U S^1/2`` for ``Y = U S V^T``.

    ``G = Y^T Y = V S^2 V^T`` is eigendecomposed (``s = sqrt(eigenvalues)``); columns are
    ordered by decreasing ``s`` (the SVD's order) and signed so that the largest-magnitude
    entry of each column of ``V`` is positive (deterministic). Directions with
    ``s <= rcond * s_max`` (a rank-deficient ``Y``) get a zero column, as ``U S^1/2``
    has (almost) no component there either. The Gram matrix squares the condition
    number, so singular values below about ``sqrt(machine epsilon) * s_max`` are
    rounding noise: hence the default ``rcond = 1e-6``.
    """
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"G must be square, got {G.shape}")
    lam, V = np.linalg.eigh((G + G.T) / 2.0)
    lam, V = lam[::-1], V[:, ::-1]
    lam = np.maximum(lam, 0.0)
    s = np.sqrt(lam)
    flip = np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])])
    flip[flip == 0] = 1.0
    V = V * flip
    scale = np.zeros_like(s)
    ok = s > rcond * (s[0] if s.size else 0.0)
    scale[ok] = s[ok] ** -0.5
    return V * scale


def reorthogonalize(Y: np.ndarray) -> np.ndarray:
    """``U S^1/2`` of ``Y = U S V^T`` through the Gram matrix: ``Y @ gram_transform(Y^T Y)``."""
    Y = np.asarray(Y, dtype=np.float64)
    return Y @ gram_transform(gram_matrix(Y))


def orthonormalizer(G: np.ndarray, rcond: float = 1e-6) -> np.ndarray:
    """The d x d right factor ``R = V S^-1`` with ``Y R = U`` (orthonormal columns) for
    ``Y = U S V^T``, from ``G = Y^T Y``: :func:`gram_transform` with ``S^-1`` in place of
    ``S^-1/2`` (same column order and signs; directions below ``rcond`` get a zero column)."""
    R = gram_transform(G, rcond)
    scale = np.linalg.norm(R, axis=0)  # s^-1/2 per column, 0 for dropped ones
    return R * scale


#: Operators of :func:`refine`: ``T = D^-1 (I + A)`` or the one-hop log-ratio matrix.
REFINE_OPERATORS = ("transition", "pmi")


def log_ratio_matrix(A: sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    """The one-hop log-ratio (shifted PMI) matrix of the weighted adjacency ``A``::

        P[u, v] = log(max(vol * A[u, v] / (s_out(u) * s_in(v)), 1))

    with ``s_out``, ``s_in`` the row and column sums of ``A`` and ``vol`` their total:
    the ``scaling="log"`` transform of the transition matrix ``D^-1 A`` with a window of
    1, as :func:`sepne_spark.sparse.sparse_proximity` builds it. It is symmetric for an undirected graph and has no entry outside ``A``'s (entries
    that the ``max`` makes 0 are dropped).
    """
    A = sp.coo_matrix(A, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square, got {A.shape}")
    if A.nnz and A.data.min() < 0:
        raise ValueError("A must have non-negative weights")
    return sparse_proximity(A.shape[0], A.row, A.col, A.data, "A+A2", window=1, scaling="log")


def refine(A: sp.spmatrix | sp.sparray, E: np.ndarray, steps: int, operator: str = "transition") -> np.ndarray:
    """``steps`` rounds of subspace iteration with ``T = D^-1 (I + A)`` (or with the
    one-hop log-ratio matrix ``P``, ``operator="pmi"``) started from the L2-normalised
    rows of ``E`` (see the module docstring)::

        Q = l2_normalize(E)
        for each step:
            Y = T @ Q          (or P @ Q)               # 1 sparse product
            Q = Y @ orthonormalizer(Y^T Y)              # d x d Gram matrix

    Parameters
    ----------
    A : scipy.sparse matrix
        Weighted adjacency (n x n, non-negative; both directions for an undirected graph).
    E : numpy.ndarray
        Start (n x d); rows may be zero.
    steps : int
        Rounds, ``>= 0``; ``0`` returns ``l2_normalize(E)``.
    operator : {"transition", "pmi"}
        ``T`` or :func:`log_ratio_matrix` of ``A``.

    Returns
    -------
    numpy.ndarray
        ``Q`` (n x d) with orthonormal columns (zero columns for directions the start
        lacks), float64.
    """
    if operator not in REFINE_OPERATORS:
        raise SettingError(f"operator must be one of {', '.join(REFINE_OPERATORS)}; got {operator!r}")
    Q, T, steps = _walk_start(A, E, steps)
    if steps and operator == "pmi":
        T = log_ratio_matrix(A)
    for _ in range(steps):
        Y = T @ Q
        Q = Y @ orthonormalizer(gram_matrix(Y))
    return Q


def _walk_start(A: sp.spmatrix | sp.sparray, E: np.ndarray, steps: int) -> tuple[np.ndarray, sp.csr_matrix | None, int]:
    """The checked start of :func:`refine` and :func:`average`: ``l2_normalize(E)``, the
    operator ``T`` (None when ``steps`` is 0) and ``steps`` as an int."""
    steps = int(steps)
    if steps < 0:
        raise SettingError(f"steps must be >= 0, got {steps}")
    X = l2_normalize(E)
    if steps == 0:
        return X, None, 0
    if X.shape[0] != A.shape[0]:
        raise ValueError(f"E must be (n, d) with n = {A.shape[0]}, got {X.shape}")
    return X, transition_with_self_loops(A)[0], steps


def average(A: sp.spmatrix | sp.sparray, E: np.ndarray, steps: int) -> np.ndarray:
    """Neighbourhood averaging (see the module docstring)::

        e = l2_normalize(E);  out = e
        for each step:
            e = T @ e                                   # 1 sparse product
            out = out + e

    that is ``(I + T + ... + T^steps) l2_normalize(E)`` with ``T = D^-1 (I + A)``.

    Parameters
    ----------
    A : scipy.sparse matrix
        Weighted adjacency (n x n, non-negative; both directions for an undirected graph).
    E : numpy.ndarray
        The vectors (n x d); rows may be zero (they stay zero only if every node within
        ``steps`` hops has a zero row).
    steps : int
        Sparse products, ``>= 0``; ``0`` returns ``l2_normalize(E)``.

    Returns
    -------
    numpy.ndarray
        n x d, float64.
    """
    e, T, steps = _walk_start(A, E, steps)
    out = e.copy()
    for _ in range(steps):
        e = T @ e
        out += e
    return out


def smooth(A: sp.spmatrix | sp.sparray, E: np.ndarray, order: int, mu: float, theta: float,
           refine_steps: int = 0, average_steps: int = 0, refine_operator: str = "transition",
           report: Callable[[str], None] | None = None) -> np.ndarray:
    """The whole spectral stage on one machine (what
    :func:`sepne_spark.propagation.propagate_embeddings` computes in Spark):
    ``refine_steps`` rounds of :func:`refine` (with ``refine_operator``) when asked, then
    L2-normalise the rows, :func:`propagate` them over ``A`` and :func:`reorthogonalize`
    the result, then ``average_steps`` steps of :func:`average` when asked. With
    ``order = 1`` the filter is left out: the refined basis, its rows normalised, is
    re-orthogonalised; with ``order = 1`` and no refinement nothing is re-orthogonalised,
    and the vectors (averaged, when asked) are returned as they are, as the Spark stage
    returns them.

    ``report(step)``, when given, is called as each step that runs ends, with its name
    (``"refinement: 64 rounds (pmi)"``, ``"filter: order 3"``, ``"averaging: 3
    steps"``): the one-task stages time them and print them to the executor log
    (:class:`sepne_spark.progress.TaskProgress`)."""
    done = report or (lambda step: None)
    X = np.asarray(E, dtype=np.float64)
    if order > 1 or refine_steps:
        if refine_steps:
            X = refine(A, X, refine_steps, refine_operator)
            done(f"refinement: {refine_steps} round{'s' * (refine_steps != 1)} ({refine_operator})")
        X = reorthogonalize(propagate(A, l2_normalize(X), order=order, mu=mu, theta=theta))
        done(f"filter: order {order}" if order > 1 else "normalising and re-orthogonalising")
    if average_steps:
        X = average(A, X, average_steps)
        done(f"averaging: {average_steps} step{'s' * (average_steps != 1)}")
    return X
