"""Evaluating embeddings: node classification, reconstruction and link prediction.

Node classification follows the protocol of the SepNE paper (and of DeepWalk and
OpenNE): the embeddings of the labelled nodes are L2-normalised, a random fraction of
them trains a one-vs-rest L2-regularised logistic regression (``C = 1``, unpenalised
intercept), and micro- and macro-F1 on the remaining nodes are averaged over several
random splits. With one label per node the prediction is the best-scoring class; with
several labels per node each test node gets as many top-scoring labels as it has.

Reconstruction measures how well ``W C^T`` reproduces the proximity matrix ``M``:
``R^2 = 1 - SS_res / SS_tot`` over all entries and over the non-zero entries, exactly
(dense or sparse ``M``) or from a sample of entries (:func:`reconstruction_r2_sampled`,
:func:`reconstruction_r2_spark`).

Link prediction holds out edges with :func:`split_edges`, samples as many non-edges with
:func:`sample_non_edges`, embeds the training graph and reports the AUC of dot-product
scores (:func:`link_prediction`). These helpers are Spark DataFrame code and collect
nothing of the size of the graph.

The classification and the NumPy reconstruction functions work on arrays held by the
driver; :func:`node_classification` is meant for the labelled nodes only (thousands to
a few hundred thousand rows).
"""
from __future__ import annotations

import logging
import math
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import rankdata

from sepne_spark.jobs_common import UserError
from sepne_spark.spectral import l2_normalize

log = logging.getLogger(__name__)

try:  # Spark is a dependency of the package, but the NumPy half works without it
    from pyspark.sql import Column, DataFrame, SparkSession, Window
    from pyspark.sql import functions as F
except ImportError:  # pragma: no cover
    Column = DataFrame = SparkSession = Window = F = None  # type: ignore[assignment,misc]

__all__ = [
    "l2_normalize",
    "OneVsRestLogisticRegression",
    "f1_scores",
    "node_classification",
    "reconstruction_r2",
    "reconstruction_r2_sampled",
    "r2_from_sums",
    "sample_zero_entries",
    "reconstruction_r2_spark",
    "split_edges",
    "sample_non_edges",
    "auc",
    "auc_spark",
    "dot_column",
    "score_pairs",
    "link_prediction",
]


# ---------------------------------------------------------------------------
# Logistic regression and node classification (NumPy / SciPy)
# ---------------------------------------------------------------------------


class OneVsRestLogisticRegression:
    """One-vs-rest binary logistic regressions with an L2 penalty, fitted jointly.

    Each class ``c`` gets weights ``w_c`` and an intercept ``b_c`` minimising

        C * sum_i log(1 + exp(-y_ic (x_i . w_c + b_c))) + 1/2 ||w_c||^2,

    with ``y_ic = +1`` when node ``i`` has class ``c`` and ``-1`` otherwise; the
    intercept is not penalised. This is scikit-learn's ``LogisticRegression(C=C)``
    (L-BFGS solver) inside ``OneVsRestClassifier``. The problems of all classes are
    independent, so their sum is minimised at once by one L-BFGS run over all the
    weights (vectorised over classes). A class without positive (or without negative)
    training examples gets a constant score of ``-inf`` (``+inf``), as
    scikit-learn's constant predictor would.

    Parameters
    ----------
    C : float
        Inverse regularisation strength (scikit-learn's default 1.0).
    max_iter : int
        L-BFGS iteration limit.
    tol : float
        L-BFGS gradient tolerance on the objective divided by the number of samples.
    """

    def __init__(self, C: float = 1.0, max_iter: int = 1000, tol: float = 1e-8) -> None:
        if C <= 0:
            raise ValueError(f"C must be > 0, got {C}")
        self.C = float(C)
        self.max_iter = int(max_iter)
        self.tol = float(tol)
        self.coef_: np.ndarray | None = None
        self.intercept_: np.ndarray | None = None
        self.constant_: np.ndarray | None = None
        self.n_iter_: int = 0

    def fit(self, X: np.ndarray, Y: np.ndarray) -> "OneVsRestLogisticRegression":
        """Fit on features ``X`` (n x d) and a 0/1 indicator matrix ``Y`` (n x L).

        Returns
        -------
        OneVsRestLogisticRegression
            ``self``, with ``coef_`` (L x d) and ``intercept_`` (L,) set.
        """
        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(Y).astype(bool)
        if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
            raise ValueError("Y must be an (n_samples, n_classes) indicator matrix")
        n, d = X.shape
        L = Y.shape[1]
        pos = Y.sum(axis=0)
        constant = np.zeros(L)
        constant[pos == 0] = -np.inf
        constant[pos == n] = np.inf
        active = np.flatnonzero((pos > 0) & (pos < n))
        coef = np.zeros((L, d))
        intercept = np.zeros(L)
        if active.size:
            S = np.where(Y[:, active], 1.0, -1.0)  # n x La signs
            La = active.size
            # The objective divided by n*C: mean log-loss plus ||w||^2 / (2 n C).
            reg = 1.0 / (n * self.C)

            def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
                Wt = theta[: d * La].reshape(d, La)
                b = theta[d * La:]
                Z = X @ Wt + b
                margin = S * Z
                loss = np.logaddexp(0.0, -margin).sum() / n + 0.5 * reg * np.sum(Wt * Wt)
                G = (-S * expit(-margin)) / n
                gW = X.T @ G + reg * Wt
                gb = G.sum(axis=0)
                return loss, np.concatenate([gW.ravel(), gb])

            res = minimize(
                fun,
                np.zeros(d * La + La),
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 64 * np.finfo(float).eps},
            )
            theta = res.x
            coef[active] = theta[: d * La].reshape(d, La).T
            intercept[active] = theta[d * La:]
            self.n_iter_ = int(res.nit)
        self.coef_, self.intercept_, self.constant_ = coef, intercept, constant
        self._active = active
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Scores ``x . w_c + b_c`` (n x L); constant classes score ``-inf``/``+inf``."""
        if self.coef_ is None:
            raise RuntimeError("fit the model first")
        X = np.asarray(X, dtype=np.float64)
        scores = np.tile(self.constant_, (X.shape[0], 1))
        a = self._active
        if a.size:
            scores[:, a] = X @ self.coef_[a].T + self.intercept_[a]
        return scores

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Per-class sigmoid probabilities (n x L), not normalised across classes."""
        return expit(self.decision_function(X))


def _predict_labels(scores: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
    """Indicator matrix of predictions: argmax, or the top ``counts[i]`` of each row."""
    n, L = scores.shape
    pred = np.zeros((n, L), dtype=bool)
    if counts is None:
        pred[np.arange(n), np.argmax(scores, axis=1)] = True
        return pred
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    ranks[np.arange(n)[:, None], order] = np.arange(L)[None, :]
    return ranks < np.asarray(counts)[:, None]


def f1_scores(Y_true: np.ndarray, Y_pred: np.ndarray) -> tuple[float, float]:
    """Micro- and macro-F1 of two indicator matrices (n x L).

    Macro-F1 averages the per-class F1 over all L classes; a class with no true and
    no predicted example counts as 0 (scikit-learn's ``zero_division`` default).
    Micro-F1 pools the counts of all classes; with exactly one true and one predicted
    label per row it equals the accuracy.
    """
    T = np.asarray(Y_true, dtype=bool)
    P = np.asarray(Y_pred, dtype=bool)
    tp = (T & P).sum(axis=0).astype(np.float64)
    fp = (~T & P).sum(axis=0).astype(np.float64)
    fn = (T & ~P).sum(axis=0).astype(np.float64)
    denom = 2 * tp + fp + fn
    per = np.zeros_like(tp)
    np.divide(2 * tp, denom, out=per, where=denom > 0)
    total = denom.sum()
    micro = float(2 * tp.sum() / total) if total > 0 else 0.0
    return micro, float(per.mean()) if per.size else 0.0


class LabelsError(UserError, ValueError):
    """A label file that cannot be what it claims (an edge list, labels of another graph)."""


#: Below this fraction of labelled ids that are embedded nodes, the labels are refused.
MIN_LABELLED_FOUND = 0.5
#: From this many classes per labelled node on, the labels are reported as implausible.
MAX_CLASSES_PER_NODE = 0.5


def check_labels(
    labels: Mapping[str, Iterable[str]], found: Iterable[str], path: str, embeddings: str = "the embeddings"
) -> list[str]:
    """Check that ``labels`` (node -> labels, as read from ``path``) fit the embedded nodes.

    Parameters
    ----------
    labels : mapping of str to iterable of str
        The label file's content, node id -> its labels.
    found : iterable of str
        The labelled ids that are nodes of the embeddings.
    path, embeddings : str
        The label file and the embeddings, as named in messages.

    Returns
    -------
    list of str
        Warnings (also logged): about as many classes as labelled nodes, or most
        classes with a single node, which leaves nothing to learn.

    Raises
    ------
    LabelsError
        When fewer than half of the labelled ids are embedded nodes (labels of another
        graph, or ids written differently), or when the "labels" are themselves mostly
        node ids and about as many as the nodes: an edge list given as labels.
    """
    found = set(found)
    n = len(labels)
    if n and len(found) < MIN_LABELLED_FOUND * n:
        missing = sorted(k for k in labels if k not in found)[:3]
        raise LabelsError(
            f"{path}: only {len(found)} of its {n} labelled ids are nodes of {embeddings} "
            f"(e.g. {', '.join(repr(m) for m in missing)} are not); is it the label file of this graph, "
            "with lines node<TAB>label?"
        )
    classes = {lab for k in found for lab in labels[k]}
    members: dict[str, int] = {}
    for k in found:
        for lab in labels[k]:
            members[lab] = members.get(lab, 0) + 1
    many = len(found) >= 10 and len(classes) >= MAX_CLASSES_PER_NODE * len(found)
    ids_as_labels = sum(1 for c in classes if c in labels or c in found)
    if many and ids_as_labels >= 0.5 * len(classes):
        raise LabelsError(
            f"{path}: {len(classes)} classes for {len(found)} labelled nodes, and {ids_as_labels} of the "
            "classes are node ids: this looks like an edge list, not node<TAB>label lines"
        )
    warnings = []
    if many:
        warnings.append(f"{path}: {len(classes)} classes for {len(found)} labelled nodes: nearly one class "
                        "per node, so the scores say little; is this the right label file?")
    singletons = sum(1 for c in members.values() if c == 1)
    if len(classes) >= 10 and singletons > 0.5 * len(classes):
        warnings.append(f"{path}: {singletons} of {len(classes)} classes have a single labelled node, "
                        "which no split can both train on and test")
    for w in warnings:
        log.warning("%s", w)
    return warnings


def _binarize(labels: Sequence[Iterable[Hashable]]) -> tuple[np.ndarray, list[Hashable]]:
    """Indicator matrix of label sets, with the classes in a deterministic order."""
    sets = [set(x) if not isinstance(x, (str, bytes)) else {x} for x in labels]
    classes = sorted({c for s in sets for c in s}, key=lambda c: (str(type(c)), str(c)))
    index = {c: j for j, c in enumerate(classes)}
    Y = np.zeros((len(sets), len(classes)), dtype=bool)
    for i, s in enumerate(sets):
        for c in s:
            Y[i, index[c]] = True
    return Y, classes


def node_classification(
    X: np.ndarray,
    labels: Sequence[Iterable[Hashable]],
    train_ratios: Sequence[float] = (0.1, 0.9),
    n_splits: int = 10,
    seed: int = 0,
    C: float = 1.0,
    normalize: bool = True,
) -> dict[str, Any]:
    """Micro-/macro-F1 of one-vs-rest logistic regression over random splits.

    Parameters
    ----------
    X : numpy.ndarray
        Embeddings of the labelled nodes (n x d), row ``i`` for ``labels[i]``. These are
        the labelled nodes' vectors only, held by the driver.
    labels : sequence of sets or lists
        The labels of each node (a single label may be given as a bare string). Nodes
        with an empty label set are left out and counted in ``n_unlabelled``.
    train_ratios : sequence of float
        Fractions of the nodes used for training, each in (0, 1).
    n_splits : int
        Random splits per ratio.
    seed : int
        Seed of the splits. Split ``s`` shuffles the nodes with
        ``numpy.random.default_rng([seed, s])`` and trains on the first
        ``max(1, int(ratio * n))`` of them, so splits of different ratios are nested.
    C : float
        Inverse regularisation strength of the logistic regression.
    normalize : bool
        L2-normalise the rows of ``X`` first (the paper's protocol).

    Returns
    -------
    dict
        ``mode`` ("single-label" when every node has exactly one label, otherwise
        "multi-label"), ``n_nodes``, ``n_classes``, ``n_unlabelled``, ``n_splits``,
        ``seed`` and ``results``: for each ratio (a float key) a dict with
        ``micro_f1_mean``, ``micro_f1_std``, ``macro_f1_mean``, ``macro_f1_std``
        (population standard deviation over the splits), ``n_train``, ``n_test`` and
        the per-split lists ``micro_f1`` and ``macro_f1``.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != len(labels):
        raise ValueError(f"X has {X.shape[0] if X.ndim else 0} rows but {len(labels)} label sets were given")
    Y_all, classes = _binarize(labels)
    keep = Y_all.any(axis=1)
    X, Y = X[keep], Y_all[keep]
    n = X.shape[0]
    if n < 2 or not classes:
        raise ValueError("need at least two labelled nodes")
    counts = Y.sum(axis=1)
    single = bool(np.all(counts == 1))
    if normalize:
        X = l2_normalize(X)
    ratios = [float(r) for r in train_ratios]
    for r in ratios:
        if not 0.0 < r < 1.0:
            raise ValueError(f"train ratio must be in (0, 1), got {r}")
    per: dict[float, dict[str, list[float]]] = {r: {"micro_f1": [], "macro_f1": []} for r in ratios}
    sizes: dict[float, tuple[int, int]] = {}
    for s in range(int(n_splits)):
        perm = np.random.default_rng([int(seed), s]).permutation(n)
        for r in ratios:
            n_train = min(max(1, int(r * n)), n - 1)
            sizes[r] = (n_train, n - n_train)
            tr, te = perm[:n_train], perm[n_train:]
            clf = OneVsRestLogisticRegression(C=C).fit(X[tr], Y[tr])
            scores = clf.decision_function(X[te])
            pred = _predict_labels(scores, None if single else counts[te])
            micro, macro = f1_scores(Y[te], pred)
            per[r]["micro_f1"].append(micro)
            per[r]["macro_f1"].append(macro)
    results: dict[float, dict[str, Any]] = {}
    for r in ratios:
        mi, ma = np.array(per[r]["micro_f1"]), np.array(per[r]["macro_f1"])
        results[r] = {
            "micro_f1_mean": float(mi.mean()) if mi.size else float("nan"),
            "micro_f1_std": float(mi.std()) if mi.size else float("nan"),
            "macro_f1_mean": float(ma.mean()) if ma.size else float("nan"),
            "macro_f1_std": float(ma.std()) if ma.size else float("nan"),
            "n_train": sizes.get(r, (0, 0))[0],
            "n_test": sizes.get(r, (0, 0))[1],
            "micro_f1": [float(v) for v in mi],
            "macro_f1": [float(v) for v in ma],
        }
    return {
        "mode": "single-label" if single else "multi-label",
        "n_nodes": int(n),
        "n_classes": len(classes),
        "n_unlabelled": int((~keep).sum()),
        "n_splits": int(n_splits),
        "seed": int(seed),
        "results": results,
    }


# ---------------------------------------------------------------------------
# Reconstruction R^2 (NumPy / SciPy)
# ---------------------------------------------------------------------------


def _r2(ss_res: float, ss_tot: float) -> float:
    if ss_tot > 0:
        return float(1.0 - ss_res / ss_tot)
    return 1.0 if ss_res == 0 else float("-inf")


def _pair_dots(W: np.ndarray, C: np.ndarray, rows: np.ndarray, cols: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """``W[rows[t]] . C[cols[t]]`` for every t, in chunks to bound memory."""
    out = np.empty(len(rows))
    for s in range(0, len(rows), chunk):
        r, c = rows[s:s + chunk], cols[s:s + chunk]
        out[s:s + chunk] = np.einsum("ij,ij->i", W[r], C[c])
    return out


def reconstruction_r2(
    M: np.ndarray | sp.spmatrix | sp.sparray,
    W: np.ndarray,
    C: np.ndarray,
    block_rows: int = 1024,
) -> dict[str, Any]:
    """Exact R^2 of ``W C^T`` against ``M``, over all entries and over non-zero entries.

    ``R^2 = 1 - SS_res / SS_tot`` with ``SS_tot`` taken about the mean of the entries
    considered: ``r2_all`` over all n_rows x n_cols entries, ``r2_nonzero`` over the
    entries where ``M != 0``.

    Parameters
    ----------
    M : numpy.ndarray or scipy sparse matrix
        Proximity matrix (n_rows x n_cols). A dense ``M`` is processed in blocks of
        ``block_rows`` rows; for a sparse ``M`` the zero entries are never formed:
        ``sum over zeros of (W C^T)^2 = ||W C^T||_F^2 - sum over non-zeros``, and
        ``||W C^T||_F^2 = sum((W^T W) * (C^T C))`` costs O(n d^2).
    W, C : numpy.ndarray
        Embeddings (n_rows x d) and context vectors (n_cols x d).

    Returns
    -------
    dict
        ``r2_all``, ``r2_nonzero``, ``n_entries``, ``n_nonzero`` and ``exact: True``.
    """
    W = np.asarray(W, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    n_rows, n_cols = M.shape
    if W.shape[0] != n_rows or C.shape[0] != n_cols or W.shape[1] != C.shape[1]:
        raise ValueError(f"shapes do not match: M {M.shape}, W {W.shape}, C {C.shape}")
    N = n_rows * n_cols
    if sp.issparse(M):
        Mc = sp.coo_matrix(M, dtype=np.float64)
        Mc.sum_duplicates()
        nzmask = Mc.data != 0
        r, c, m = Mc.row[nzmask], Mc.col[nzmask], Mc.data[nzmask]
        nnz = len(m)
        p = _pair_dots(W, C, r, c)
        ss_res_nz = float(np.sum((m - p) ** 2))
        frob = float(np.sum((W.T @ W) * (C.T @ C)))
        ss_res_all = ss_res_nz + max(frob - float(np.sum(p * p)), 0.0)
        mu = float(m.sum()) / N
        ss_tot_all = float(np.sum((m - mu) ** 2)) + (N - nnz) * mu * mu
        ss_tot_nz = float(np.sum((m - m.mean()) ** 2)) if nnz else 0.0
    else:
        M = np.asarray(M, dtype=np.float64)
        total = 0.0
        nnz = 0
        nz_sum = 0.0
        for s in range(0, n_rows, block_rows):
            B = M[s:s + block_rows]
            total += float(B.sum())
            nz = B != 0
            nnz += int(nz.sum())
            nz_sum += float(B[nz].sum())
        mu = total / N if N else 0.0
        mu_nz = nz_sum / nnz if nnz else 0.0
        ss_tot_all = ss_res_all = ss_tot_nz = ss_res_nz = 0.0
        for s in range(0, n_rows, block_rows):
            B = M[s:s + block_rows]
            R = B - W[s:s + block_rows] @ C.T
            nz = B != 0
            ss_tot_all += float(np.sum((B - mu) ** 2))
            ss_res_all += float(np.sum(R * R))
            ss_tot_nz += float(np.sum((B[nz] - mu_nz) ** 2))
            ss_res_nz += float(np.sum(R[nz] ** 2))
    return {
        "r2_all": _r2(ss_res_all, ss_tot_all),
        "r2_nonzero": _r2(ss_res_nz, ss_tot_nz) if nnz else float("nan"),
        "n_entries": int(N),
        "n_nonzero": int(nnz),
        "exact": True,
    }


def r2_from_sums(
    n_entries: int,
    n_nonzero: int,
    nz_count: int,
    nz_sum_m: float,
    nz_sum_m2: float,
    nz_sum_res2: float,
    nz_sum_res4: float,
    zero_count: int,
    zero_sum_p2: float,
    zero_sum_p4: float,
) -> dict[str, Any]:
    """Estimate the reconstruction R^2 from sums over sampled entries.

    The non-zero entries are all of them or a uniform sample of ``nz_count`` out of
    ``n_nonzero``; the zero entries are a uniform sample of ``zero_count`` out of
    ``n_entries - n_nonzero``. Each sum is scaled by its population over its sample
    size (a Horvitz-Thompson estimate): ``SS_res_all = a * sum_nz (m - p)^2 + b *
    sum_zero p^2`` with ``a = n_nonzero / nz_count`` and ``b = (n_entries - n_nonzero) /
    zero_count``; ``SS_tot_all`` only involves the non-zero values (zeros contribute
    ``mu^2`` each), so it is exact when every non-zero entry is given. ``r2_nonzero`` is
    the plain R^2 over the given non-zero entries.

    Parameters
    ----------
    n_entries, n_nonzero : int
        Number of entries of M (n_rows * n_cols) and of its non-zero entries.
    nz_count, nz_sum_m, nz_sum_m2, nz_sum_res2, nz_sum_res4 : int, float
        Over the sampled non-zero entries: their number and the sums of ``m``, ``m^2``,
        ``(m - p)^2`` and ``(m - p)^4``.
    zero_count, zero_sum_p2, zero_sum_p4 : int, float
        Over the sampled zero entries: their number and the sums of ``p^2`` and ``p^4``.

    Returns
    -------
    dict
        ``r2_all``, ``r2_nonzero``, ``r2_all_stderr`` (approximate standard error of
        ``r2_all`` from the sampling variance of ``SS_res``, as for sampling with
        replacement and treating ``SS_tot`` as fixed),
        ``n_entries``, ``n_nonzero``, ``sample_nonzero``, ``sample_zero`` (the sample
        sizes) and ``exact: False``.
    """
    n_zero = n_entries - n_nonzero
    if nz_count <= 0 and n_nonzero > 0:
        raise ValueError("no non-zero entries were given")
    if zero_count <= 0 and n_zero > 0:
        raise ValueError("no zero entries were sampled although M has zero entries")
    a = n_nonzero / nz_count if nz_count else 0.0
    b = n_zero / zero_count if zero_count else 0.0
    sum_m, sum_m2 = a * nz_sum_m, a * nz_sum_m2
    mu = sum_m / n_entries
    ss_tot_all = max(sum_m2 - n_entries * mu * mu, 0.0)
    ss_res_all = a * nz_sum_res2 + b * zero_sum_p2
    var = 0.0
    if zero_count > 1:
        mean_p2 = zero_sum_p2 / zero_count
        var_p2 = max(zero_sum_p4 / zero_count - mean_p2 ** 2, 0.0) * zero_count / (zero_count - 1)
        var += n_zero ** 2 * var_p2 / zero_count
    if 1 < nz_count < n_nonzero:
        mean_r2 = nz_sum_res2 / nz_count
        var_r2 = max(nz_sum_res4 / nz_count - mean_r2 ** 2, 0.0) * nz_count / (nz_count - 1)
        var += n_nonzero ** 2 * var_r2 / nz_count
    mean_nz = nz_sum_m / nz_count if nz_count else 0.0
    ss_tot_nz = max(nz_sum_m2 - nz_count * mean_nz * mean_nz, 0.0)
    return {
        "r2_all": _r2(ss_res_all, ss_tot_all),
        "r2_nonzero": _r2(nz_sum_res2, ss_tot_nz) if nz_count else float("nan"),
        "r2_all_stderr": float(math.sqrt(max(var, 0.0)) / ss_tot_all) if ss_tot_all > 0 else float("nan"),
        "n_entries": int(n_entries),
        "n_nonzero": int(n_nonzero),
        "sample_nonzero": int(nz_count),
        "sample_zero": int(zero_count),
        "exact": False,
    }


def sample_zero_entries(
    n_rows: int,
    n_cols: int,
    nz_rows: np.ndarray,
    nz_cols: np.ndarray,
    size: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``size`` entries uniformly (with replacement) among the zero entries of M.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of M.
    nz_rows, nz_cols : numpy.ndarray
        Positions of every non-zero entry of M (the complete pattern: candidates that
        hit it are rejected).
    size : int
        Number of entries to draw.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    rows, cols : numpy.ndarray
        Positions of the sampled zero entries (empty when M has no zero entry).
    """
    N = int(n_rows) * int(n_cols)
    nz_keys = np.unique(np.asarray(nz_rows, dtype=np.int64) * n_cols + np.asarray(nz_cols, dtype=np.int64))
    n_zero = N - len(nz_keys)
    if n_zero <= 0 or size <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    if n_zero <= 4 * size or len(nz_keys) > N // 2:
        if N > 50_000_000:
            raise ValueError("M is too dense to sample its zero entries by rejection")
        zeros = np.setdiff1d(np.arange(N, dtype=np.int64), nz_keys, assume_unique=True)
        keys = zeros[rng.integers(0, len(zeros), size)]
    else:
        got: list[np.ndarray] = []
        need = int(size)
        while need > 0:
            cand = rng.integers(0, N, int(need * N / n_zero * 1.1) + 16, dtype=np.int64)
            pos = np.searchsorted(nz_keys, cand)
            hit = (pos < len(nz_keys)) & (nz_keys[np.minimum(pos, len(nz_keys) - 1)] == cand)
            cand = cand[~hit][:need]
            got.append(cand)
            need -= len(cand)
        keys = np.concatenate(got)
    return keys // n_cols, keys % n_cols


def reconstruction_r2_sampled(
    nz_rows: np.ndarray,
    nz_cols: np.ndarray,
    nz_values: np.ndarray,
    W: np.ndarray,
    C: np.ndarray,
    n_zero_samples: int = 100_000,
    seed: int = 0,
    zero_rows: np.ndarray | None = None,
    zero_cols: np.ndarray | None = None,
    n_nonzero: int | None = None,
) -> dict[str, Any]:
    """Estimate the reconstruction R^2 from the non-zero entries and sampled zeros.

    Parameters
    ----------
    nz_rows, nz_cols, nz_values : numpy.ndarray
        The non-zero entries ``(i, j, m_ij)`` of M: all of them (the usual case: they are
        the edge list of M), or a uniform sample when ``n_nonzero`` is given.
    W, C : numpy.ndarray
        Embeddings (n_rows x d) and context vectors (n_cols x d).
    n_zero_samples : int
        Zero entries to sample uniformly when ``zero_rows``/``zero_cols`` are not given
        (needs the complete non-zero pattern).
    seed : int
        Seed of the zero-entry sample.
    zero_rows, zero_cols : numpy.ndarray, optional
        A uniform sample of zero entries drawn by the caller.
    n_nonzero : int, optional
        Total number of non-zero entries when ``nz_*`` is only a sample of them.

    Returns
    -------
    dict
        As :func:`r2_from_sums`, with the sample sizes ``sample_nonzero`` and
        ``sample_zero``.
    """
    W = np.asarray(W, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    rows = np.asarray(nz_rows, dtype=np.int64)
    cols = np.asarray(nz_cols, dtype=np.int64)
    m = np.asarray(nz_values, dtype=np.float64)
    keep = m != 0
    rows, cols, m = rows[keep], cols[keep], m[keep]
    if n_nonzero is None:
        keys = rows * C.shape[0] + cols
        if len(np.unique(keys)) != len(keys):
            raise ValueError("duplicate (i, j) positions among the non-zero entries")
        n_nonzero = len(m)
    if zero_rows is None or zero_cols is None:
        if n_nonzero != len(m):
            raise ValueError("pass zero_rows/zero_cols when the non-zero entries are a sample")
        zero_rows, zero_cols = sample_zero_entries(W.shape[0], C.shape[0], rows, cols, n_zero_samples, seed)
    zr = np.asarray(zero_rows, dtype=np.int64)
    zc = np.asarray(zero_cols, dtype=np.int64)
    p = _pair_dots(W, C, rows, cols)
    pz = _pair_dots(W, C, zr, zc)
    res2 = (m - p) ** 2
    return r2_from_sums(
        n_entries=W.shape[0] * C.shape[0],
        n_nonzero=int(n_nonzero),
        nz_count=len(m),
        nz_sum_m=float(m.sum()),
        nz_sum_m2=float(np.sum(m * m)),
        nz_sum_res2=float(res2.sum()),
        nz_sum_res4=float(np.sum(res2 * res2)),
        zero_count=len(pz),
        zero_sum_p2=float(np.sum(pz * pz)),
        zero_sum_p4=float(np.sum(pz ** 4)),
    )


# ---------------------------------------------------------------------------
# Spark helpers: hashing, dot products, pair sampling
# ---------------------------------------------------------------------------

_UNIT = float(1 << 53)


def _uniform(seed: int, salt: int, *cols: Column) -> Column:
    """Seeded uniform in [0, 1) from ``cols`` (cast to string), independent of layout."""
    h = F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(int(salt)).cast("int"), *[c.cast("string") for c in cols])
    return F.pmod(h, F.lit(1 << 53)).cast("double") / _UNIT


def dot_column(a: str | Column, b: str | Column) -> Column:
    """Dot product of two array columns of equal length (null when either is null)."""
    a = F.col(a) if isinstance(a, str) else a
    b = F.col(b) if isinstance(b, str) else b
    return F.aggregate(
        F.zip_with(a, b, lambda x, y: x.cast("double") * y.cast("double")),
        F.lit(0.0).cast("double"),
        lambda acc, x: acc + x,
    )


def _as_array(df: DataFrame, name: str) -> Column:
    """Column ``name`` of ``df`` as ``array<double>`` (ML vectors are converted)."""
    dtype = df.schema[name].dataType
    if type(dtype).__name__ == "VectorUDT":
        from pyspark.ml.functions import vector_to_array

        return vector_to_array(F.col(name))
    return F.col(name).cast("array<double>")


def _index_nodes(
    nodes: DataFrame, seed: int, buckets: int = 64, count_also: DataFrame | None = None
) -> tuple[DataFrame, int, int]:
    """Give each node a dense index 0..n-1 in a seeded order, without a global sort.

    Nodes are hashed into ``buckets`` buckets, numbered within each bucket by a window
    and offset by the sizes of the buckets before (``buckets`` numbers reach the driver).
    The rows of ``count_also`` are counted in the same Spark job (0 when not given).

    Returns
    -------
    indexed, n, counted
        ``(id, idx)`` rows, the number of nodes and the row count of ``count_also``.
    """
    h = F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(7).cast("int"), F.col("id").cast("string"))
    keyed = nodes.select("id").distinct().withColumn("_h", h).withColumn("_bk", F.pmod(F.col("_h"), F.lit(buckets)))
    sizes_df = keyed.groupBy("_bk").count()
    if count_also is not None:
        sizes_df = sizes_df.unionByName(count_also.groupBy(F.lit(-1).cast("long").alias("_bk")).count())
    sizes = {r["_bk"]: r["count"] for r in sizes_df.collect()}
    counted = int(sizes.pop(-1, 0))
    offsets, acc = [], 0
    for b in range(buckets):
        offsets.append((b, acc))
        acc += int(sizes.get(b, 0))
    spark = nodes.sparkSession
    off = spark.createDataFrame(offsets, "_bk long, _off long")
    w = Window.partitionBy("_bk").orderBy("_h", F.col("id").cast("string"))
    indexed = (
        keyed.join(F.broadcast(off), "_bk")
        .withColumn("idx", F.col("_off") + F.row_number().over(w) - 1)
        .select("id", "idx")
    )
    return indexed, acc, counted


def _sample_pairs(
    nodes: DataFrame,
    exclude: DataFrame,
    n: int,
    seed: int,
    directed: bool,
    allow_self: bool,
    n_excluded_hint: int | None = None,
    indexed_nodes: tuple[DataFrame, int] | None = None,
) -> DataFrame:
    """Sample ``n`` distinct node pairs (src, dst) not in ``exclude``, uniformly.

    ``exclude`` has columns (src, dst); for undirected sampling both it and the result
    are in canonical orientation (src <= dst as compared by Spark). Candidates are drawn
    with seeded hashes of a ``range``, rejected, de-duplicated, and the ``n`` with the
    smallest hash kept, so the result depends on the data and the seed only.
    """
    spark = nodes.sparkSession
    excl = exclude.select("src", "dst").distinct()
    if indexed_nodes is not None and n_excluded_hint is not None:
        (indexed, N), counted = indexed_nodes, n_excluded_hint
    else:
        indexed, N, counted = _index_nodes(nodes, seed, count_also=excl if n_excluded_hint is None else None)
    if N == 0 or n <= 0:
        return spark.createDataFrame([], exclude.select("src", "dst").schema)
    total_pairs = N * N if allow_self else N * (N - 1)
    if not directed:
        total_pairs = (N * (N + 1)) // 2 if allow_self else (N * (N - 1)) // 2
    n_excl = counted if n_excluded_hint is None else n_excluded_hint
    available = total_pairs - n_excl
    if available < n:
        raise ValueError(f"asked for {n} pairs but only {max(available, 0)} are available")
    accept = max(available / total_pairs, 1e-3)
    idx_u = indexed.select(F.col("idx").alias("_iu"), F.col("id").alias("src"))
    idx_v = indexed.select(F.col("idx").alias("_iv"), F.col("id").alias("dst"))
    found: DataFrame | None = None
    have = 0
    draws = 0
    factor = 1.3
    for attempt in range(12):
        # Candidates needed so that ~n survive rejection and de-duplication.
        want = int(math.ceil((n - have) * factor / accept)) + 64
        cand = spark.range(draws, draws + want).select(
            F.pmod(F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(1).cast("int"), "id"), F.lit(N)).alias("_iu"),
            F.pmod(F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(2).cast("int"), "id"), F.lit(N)).alias("_iv"),
        )
        draws += want
        pairs = cand.join(idx_u, "_iu").join(idx_v, "_iv").select("src", "dst")
        if not allow_self:
            pairs = pairs.where(F.col("src") != F.col("dst"))
        if not directed:
            pairs = pairs.select(F.least("src", "dst").alias("src"), F.greatest("src", "dst").alias("dst"))
        pairs = pairs.join(excl, ["src", "dst"], "left_anti")
        found = pairs if found is None else found.unionByName(pairs)
        found = found.distinct()
        have = found.count()
        if have >= n:
            break
        factor *= 2.0
    else:
        raise ValueError(f"could only sample {have} of {n} pairs")
    assert found is not None
    s_src, s_dst = F.col("src").cast("string"), F.col("dst").cast("string")
    key = F.xxhash64(F.lit(int(seed)).cast("long"), F.lit(3).cast("int"), s_src, s_dst)
    return found.withColumn("_k", key).orderBy("_k", s_src, s_dst).limit(n).drop("_k")


# ---------------------------------------------------------------------------
# Reconstruction R^2 on Spark
# ---------------------------------------------------------------------------


def reconstruction_r2_spark(
    entries: DataFrame,
    embeddings: DataFrame,
    n_zero_samples: int = 1_000_000,
    seed: int = 0,
    nodes: DataFrame | None = None,
    embedding_col: str = "embedding",
    context_col: str = "context",
) -> dict[str, Any]:
    """Estimate the reconstruction R^2 with Spark from M's non-zero entries.

    Every non-zero entry is scored by a join with the embeddings; a uniform sample of
    zero entries (pairs of nodes that are not in ``entries``) is drawn as in
    :func:`sample_non_edges` (without replacement; when ``n_zero_samples`` is at least
    the number of zero entries they are all enumerated and the result is exact); the
    sums of :func:`r2_from_sums` are aggregated by Spark and only a handful of numbers
    reach the driver.

    Parameters
    ----------
    entries : DataFrame
        Non-zero entries of M, columns ``(src, dst, value)``, one row per position.
    embeddings : DataFrame
        ``(id, embedding[, context])`` rows; without a context column the embedding
        is used as the context vector. A node without a row predicts 0.
    n_zero_samples : int
        Zero entries to sample (fewer when M has fewer zero entries).
    seed : int
        Seed of the zero-entry sample.
    nodes : DataFrame, optional
        ``id`` of every node of the graph (M is ``n x n`` over them); by default the ids
        in ``embeddings`` and in ``entries``.

    Returns
    -------
    dict
        As :func:`r2_from_sums`.
    """
    ent = entries.select("src", "dst", F.col("value").cast("double").alias("m")).where(F.col("m") != 0)
    if nodes is None:
        nodes = (
            embeddings.select("id")
            .unionByName(ent.select(F.col("src").alias("id")))
            .unionByName(ent.select(F.col("dst").alias("id")))
            .distinct()
        )
    has_ctx = context_col in embeddings.columns
    emb = embeddings.select(F.col("id").alias("src"), _as_array(embeddings, embedding_col).alias("_w"))
    ctx = embeddings.select(
        F.col("id").alias("dst"), _as_array(embeddings, context_col if has_ctx else embedding_col).alias("_c")
    )

    def predict(pairs: DataFrame) -> DataFrame:
        out = pairs.join(emb, "src", "left").join(ctx, "dst", "left")
        return out.withColumn("p", F.coalesce(dot_column("_w", "_c"), F.lit(0.0)))

    nz = predict(ent).withColumn("r2", (F.col("m") - F.col("p")) ** 2)
    s = nz.agg(
        F.count(F.lit(1)).alias("c"),
        F.sum("m").alias("m"),
        F.sum(F.col("m") * F.col("m")).alias("m2"),
        F.sum("r2").alias("r2"),
        F.sum(F.col("r2") * F.col("r2")).alias("r4"),
    ).first()
    n_nonzero = int(s["c"])
    indexed, n_nodes, _ = _index_nodes(nodes, seed)
    N = n_nodes * n_nodes
    n_zero = N - n_nonzero
    size = int(min(n_zero_samples, n_zero))
    zc, zp2, zp4 = 0, 0.0, 0.0
    if size > 0 and size >= n_zero:
        # every zero entry was asked for: enumerate them (at most n_zero_samples rows)
        ids = indexed.select("id")
        zeros = (
            ids.select(F.col("id").alias("src"))
            .crossJoin(ids.select(F.col("id").alias("dst")))
            .join(ent.select("src", "dst"), ["src", "dst"], "left_anti")
        )
    elif size > 0:
        zeros = _sample_pairs(nodes, ent.select("src", "dst"), size, seed, directed=True, allow_self=True,
                              n_excluded_hint=n_nonzero, indexed_nodes=(indexed, n_nodes))
    if size > 0:
        z = predict(zeros).agg(
            F.count(F.lit(1)).alias("c"), F.sum(F.col("p") ** 2).alias("p2"), F.sum(F.col("p") ** 4).alias("p4")
        ).first()
        zc, zp2, zp4 = int(z["c"]), float(z["p2"] or 0.0), float(z["p4"] or 0.0)
    return r2_from_sums(
        n_entries=N,
        n_nonzero=n_nonzero,
        nz_count=n_nonzero,
        nz_sum_m=float(s["m"] or 0.0),
        nz_sum_m2=float(s["m2"] or 0.0),
        nz_sum_res2=float(s["r2"] or 0.0),
        nz_sum_res4=float(s["r4"] or 0.0),
        zero_count=zc,
        zero_sum_p2=zp2,
        zero_sum_p4=zp4,
    )


# ---------------------------------------------------------------------------
# Link prediction
# ---------------------------------------------------------------------------


def _pair_cols(directed: bool, src: str = "src", dst: str = "dst") -> tuple[Column, Column]:
    if directed:
        return F.col(src), F.col(dst)
    return F.least(src, dst), F.greatest(src, dst)


def split_edges(
    edges_df: DataFrame,
    fraction: float,
    seed: int = 0,
    directed: bool = False,
) -> tuple[DataFrame, DataFrame]:
    """Hold out a seeded random fraction of the edges, keeping every node in training.

    Edges are grouped into pairs: ``(src, dst)`` for a directed graph, the unordered
    ``{src, dst}`` for an undirected one (so both directions and duplicates of an edge
    go to the same side). Each node protects one incident pair, the one with the
    smallest seeded hash: protected pairs always stay in the training graph, so every
    node with an edge (other than a self-loop) keeps one, and its last edge is never
    held out. Each other pair is held out independently with probability ``q``, chosen
    so that ``fraction`` of all pairs is held out in expectation (fewer when too many
    pairs are protected, e.g. in a tree). Self-loops stay in training.

    The hashes depend only on the seed and the node ids (as strings), so the split is
    the same on every partitioning and every run.

    Parameters
    ----------
    edges_df : DataFrame
        Edges with columns ``src``, ``dst`` (and any others, e.g. ``weight``).
    fraction : float
        Fraction of pairs to hold out, in [0, 1).
    seed : int
        Seed of the split.
    directed : bool
        Whether ``(u, v)`` and ``(v, u)`` are different edges.

    Returns
    -------
    train, test : DataFrame
        ``train``: the rows of ``edges_df`` whose pair is kept (all columns);
        ``test``: the held-out pairs, one row each, columns ``(src, dst)`` (for an
        undirected graph ``src <= dst`` as compared by Spark).
    """
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"fraction must be in [0, 1), got {fraction}")
    a, b = _pair_cols(directed)
    keyed = edges_df.withColumn("_a", a).withColumn("_b", b)
    pairs = (
        keyed.where(F.col("_a") != F.col("_b"))
        .select("_a", "_b")
        .distinct()
        .withColumn("_u", _uniform(seed, 11, F.col("_a"), F.col("_b")))
    )
    ends = pairs.select(F.col("_a").alias("_node"), "_u", "_a", "_b").unionByName(
        pairs.select(F.col("_b").alias("_node"), "_u", "_a", "_b")
    )
    protected = (
        ends.groupBy("_node")
        .agg(
            F.min(
                F.struct(
                    "_u",
                    F.col("_a").cast("string").alias("_sa"),  # ties broken by the ids
                    F.col("_b").cast("string").alias("_sb"),
                    "_a",
                    "_b",
                )
            ).alias("_k")
        )
        .select(F.col("_k._a").alias("_a"), F.col("_k._b").alias("_b"))
        .distinct()
    )
    marked = pairs.join(protected.withColumn("_p", F.lit(True)), ["_a", "_b"], "left")
    counts = marked.agg(
        F.count(F.lit(1)).alias("n"), F.count_if(F.col("_p").isNull()).alias("c")
    ).first()
    n_pairs, n_cand = int(counts["n"]), int(counts["c"] or 0)
    candidates = marked.where(F.col("_p").isNull())
    q = min(1.0, fraction * n_pairs / n_cand) if n_cand else 0.0
    if n_cand < fraction * n_pairs:
        log.warning(
            "split_edges: only %d of %d pairs can be held out without isolating a node; "
            "holding out fewer than %.1f%%", n_cand, n_pairs, 100 * fraction,
        )
    held = candidates.where(_uniform(seed, 12, F.col("_a"), F.col("_b")) < F.lit(q)).select("_a", "_b")
    train = keyed.join(held, ["_a", "_b"], "left_anti").drop("_a", "_b")
    test = held.select(F.col("_a").alias("src"), F.col("_b").alias("dst"))
    return train, test


def sample_non_edges(
    edges_df: DataFrame,
    n: int,
    seed: int = 0,
    directed: bool = False,
    nodes_df: DataFrame | None = None,
) -> DataFrame:
    """Sample ``n`` distinct node pairs that are not edges of the graph (seeded).

    Pairs ``(u, v)`` with ``u != v`` are drawn uniformly over the nodes, rejected when
    they are an edge (either direction for an undirected graph), de-duplicated, and the
    ``n`` with the smallest seeded hash are returned: the result is uniform over the
    non-edges, without replacement, and depends only on the data and the seed.

    Parameters
    ----------
    edges_df : DataFrame
        Edges ``(src, dst, ...)`` of the full graph.
    n : int
        Number of non-edges to return.
    seed : int
        Seed of the sample.
    directed : bool
        Whether ``(u, v)`` and ``(v, u)`` are different pairs; for an undirected graph
        the pairs are returned with ``src <= dst`` (as compared by Spark).
    nodes_df : DataFrame, optional
        ``id`` column of the nodes to draw from; by default the edges' endpoints.

    Returns
    -------
    DataFrame
        ``(src, dst)``, ``n`` rows.
    """
    if nodes_df is None:
        nodes_df = edges_df.select(F.col("src").alias("id")).unionByName(edges_df.select(F.col("dst").alias("id")))
    a, b = _pair_cols(directed)
    excl = edges_df.select(a.alias("src"), b.alias("dst")).where(F.col("src") != F.col("dst")).distinct()
    return _sample_pairs(nodes_df.select("id"), excl, int(n), seed, directed=directed, allow_self=False)


def auc(pos_scores: Sequence[float] | np.ndarray, neg_scores: Sequence[float] | np.ndarray) -> float:
    """Area under the ROC curve: the Mann-Whitney statistic, ties counting one half.

    ``AUC = P(s_pos > s_neg) + 1/2 P(s_pos == s_neg)`` over all positive/negative pairs.
    """
    pos = np.asarray(pos_scores, dtype=np.float64).ravel()
    neg = np.asarray(neg_scores, dtype=np.float64).ravel()
    if pos.size == 0 or neg.size == 0:
        raise ValueError("need at least one positive and one negative score")
    ranks = rankdata(np.concatenate([pos, neg]), method="average")
    u = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0
    return float(u / (pos.size * neg.size))


def auc_spark(scored: DataFrame, score_col: str = "score", label_col: str = "label") -> float:
    """Mann-Whitney AUC of a DataFrame of scores and 0/1 labels, computed by Spark.

    Scores are grouped by value (ties count one half) and the negatives below each
    value are summed by a window over the distinct scores; rows with a null score are
    ignored.
    """
    g = (
        scored.where(F.col(score_col).isNotNull())
        .groupBy(F.col(score_col).alias("_s"))
        .agg(
            F.sum(F.when(F.col(label_col) == 1, 1).otherwise(0)).cast("double").alias("_p"),
            F.sum(F.when(F.col(label_col) == 1, 0).otherwise(1)).cast("double").alias("_q"),
        )
    )
    w = Window.orderBy("_s").rowsBetween(Window.unboundedPreceding, -1)
    g = g.withColumn("_below", F.coalesce(F.sum("_q").over(w), F.lit(0.0)))
    r = g.agg(
        F.sum(F.col("_p") * (F.col("_below") + 0.5 * F.col("_q"))).alias("u"),
        F.sum("_p").alias("p"),
        F.sum("_q").alias("q"),
    ).first()
    if not r["p"] or not r["q"]:
        raise ValueError("need at least one positive and one negative score")
    return float(r["u"] / (r["p"] * r["q"]))


def score_pairs(
    pairs: DataFrame,
    embeddings: DataFrame,
    directed: bool = True,
    embedding_col: str = "embedding",
    context_col: str = "context",
) -> DataFrame:
    """Dot-product scores of node pairs.

    Adds ``score_ec`` = ``embedding_u . context_v`` (null without a context column) and
    ``score_ee`` = ``embedding_u . embedding_v``. For an undirected graph ``score_ec``
    is symmetrised: ``(embedding_u . context_v + embedding_v . context_u) / 2``. A pair
    with a node that has no embedding row gets null scores.

    Parameters
    ----------
    pairs : DataFrame
        ``(src, dst, ...)``.
    embeddings : DataFrame
        ``(id, embedding[, context])``.
    directed : bool
        Whether the graph is directed.

    Returns
    -------
    DataFrame
        ``pairs`` with the two score columns.
    """
    has_ctx = context_col in embeddings.columns
    cols = [F.col("id"), _as_array(embeddings, embedding_col).alias("e")]
    if has_ctx:
        cols.append(_as_array(embeddings, context_col).alias("c"))
    emb = embeddings.select(*cols)
    u = emb.select(*[F.col(c).alias(f"_u{c}") for c in emb.columns])
    v = emb.select(*[F.col(c).alias(f"_v{c}") for c in emb.columns])
    out = pairs.join(u, pairs["src"] == u["_uid"], "left").join(v, pairs["dst"] == v["_vid"], "left")
    out = out.withColumn("score_ee", dot_column("_ue", "_ve"))
    if has_ctx:
        ec = dot_column("_ue", "_vc")
        if not directed:
            ec = (ec + dot_column("_ve", "_uc")) / 2.0
        out = out.withColumn("score_ec", ec)
    else:
        out = out.withColumn("score_ec", F.lit(None).cast("double"))
    return out.drop(*[c for c in out.columns if c.startswith("_u") or c.startswith("_v")])


def link_prediction(
    spark: SparkSession,
    edges_df: DataFrame,
    fit_embed: Callable[[DataFrame], DataFrame],
    fraction: float = 0.1,
    seed: int = 0,
    directed: bool = False,
) -> dict[str, Any]:
    """Link-prediction AUC of an embedding method.

    Holds out ``fraction`` of the edges (:func:`split_edges`), embeds the training
    graph with ``fit_embed``, samples as many non-edges of the full graph as there are
    held-out edges (:func:`sample_non_edges`), scores both sets with
    :func:`score_pairs` and reports the AUC of each score (:func:`auc_spark`). Pairs
    with a node that ``fit_embed`` did not embed are left out of the AUC and counted.

    Parameters
    ----------
    spark : SparkSession
        The session (used for the empty-result checks and kept for symmetry with jobs).
    edges_df : DataFrame
        The full graph ``(src, dst[, weight])``.
    fit_embed : callable
        ``fit_embed(train_edges_df) -> DataFrame(id, embedding[, context])``.
    fraction : float
        Fraction of the edges held out.
    seed : int
        Seed of the split and of the negative sample.
    directed : bool
        Whether the graph is directed.

    Returns
    -------
    dict
        ``auc_embedding_context`` (``embedding_u . context_v``; None without context
        vectors), ``auc_embedding_embedding`` (``embedding_u . embedding_v``),
        ``n_train_edges``, ``n_test_edges``, ``n_negative``, ``n_test_missing`` and
        ``n_negative_missing`` (pairs left out for lack of an embedding), ``fraction``,
        ``seed``, ``directed``.
    """
    del spark  # everything runs on the DataFrames' own session
    train, test = split_edges(edges_df, fraction, seed=seed, directed=directed)
    n_test = test.count()
    if n_test == 0:
        raise ValueError("no edge could be held out")
    negatives = sample_non_edges(edges_df, n_test, seed=seed + 1, directed=directed)
    embeddings = fit_embed(train)
    n_train = train.count()
    pairs = test.select("src", "dst", F.lit(1).alias("label")).unionByName(
        negatives.select("src", "dst", F.lit(0).alias("label"))
    )
    scored = score_pairs(pairs, embeddings, directed=directed)
    scored = scored.localCheckpoint()
    miss = scored.where(F.col("score_ee").isNull()).groupBy("label").count().collect()
    missing = {int(r["label"]): int(r["count"]) for r in miss}
    has_ctx = "context" in embeddings.columns
    result: dict[str, Any] = {
        "auc_embedding_context": auc_spark(scored, "score_ec") if has_ctx else None,
        "auc_embedding_embedding": auc_spark(scored, "score_ee"),
        "n_train_edges": int(n_train),
        "n_test_edges": int(n_test),
        "n_negative": int(n_test),
        "n_test_missing": missing.get(1, 0),
        "n_negative_missing": missing.get(0, 0),
        "fraction": float(fraction),
        "seed": int(seed),
        "directed": bool(directed),
    }
    if missing:
        log.warning("link prediction: %d held-out and %d negative pairs have a node without an embedding "
                    "and are left out", result["n_test_missing"], result["n_negative_missing"])
    return result
