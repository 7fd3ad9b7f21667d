"""Node classification: the one-vs-rest logistic regression, F1 scores, the label-file
check and the protocol of the SepNE paper (:func:`node_classification`)."""
from __future__ import annotations

import logging
import os
import time
from collections import abc
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np
from scipy.special import expit

from sepne_spark.errors import InputError, LabelsError, MissingExtraError, SettingError
from sepne_spark.spectral import l2_normalize

log = logging.getLogger(__name__)

try:  # Spark is a dependency of the package, but the NumPy half works without it
    from pyspark.sql import Column, DataFrame, SparkSession, Window
    from pyspark.sql import functions as F
except ImportError:  # pragma: no cover
    Column = DataFrame = SparkSession = Window = F = None  # type: ignore[assignment,misc]


# ---------------------------------------------------------------------------
# Logistic regression and node classification (NumPy / SciPy)
# ---------------------------------------------------------------------------


class OneVsRestLogisticRegression:
    """One-vs-rest binary logistic regressions with an L2 penalty: scikit-learn's
    ``LogisticRegression`` (L-BFGS), one per class.

    Each class ``c`` gets weights ``w_c`` and an intercept ``b_c`` minimising

        C * sum_i log(1 + exp(-y_ic (x_i . w_c + b_c))) + 1/2 ||w_c||^2,

    with ``y_ic = +1`` when node ``i`` has class ``c`` and ``-1`` otherwise; the
    intercept is not penalised. A class without positive (or without negative) training
    examples gets a constant score of ``-inf`` (``+inf``), so that it is never among a
    node's top-ranked classes (scikit-learn's ``OneVsRestClassifier`` scores such a
    class a constant 0, which outranks negative scores in the paper's top-k protocol).
    scikit-learn is the ``eval`` extra (``pip install "sepne-spark[eval]"``).

    The classes' fits are independent: ``threads`` of them run at once, each with one
    BLAS thread when there are at least as many classes as threads (a single fit's
    matrix-vector products are too small for several; with fewer classes the fits share
    the threads out), and the coefficients are the same whatever the number of threads.

    Parameters
    ----------
    C : float
        Inverse regularisation strength (scikit-learn's default 1.0).
    max_iter : int
        L-BFGS iteration limit per class.
    tol : float
        L-BFGS tolerance (scikit-learn's ``tol``).
    threads : int, optional
        Classes fitted at once. The default is the number of cores this process may use
        (:func:`available_cores`); 1 fits them one after another.
    """

    def __init__(self, C: float = 1.0, max_iter: int = 1000, tol: float = 1e-8, threads: int | None = None) -> None:
        if C <= 0:
            raise SettingError(f"C must be > 0, got {C}")
        self.threads = _check_threads(threads)
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
        LogisticRegression = _logistic_regression()
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

        def fit_class(c: int) -> Any:
            return LogisticRegression(C=self.C, tol=self.tol, max_iter=self.max_iter).fit(X, Y[:, c])

        cores = self.threads or available_cores()
        workers = max(1, min(cores, active.size))
        from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

        # The cores are shared out between the fits running at once and their BLAS and
        # OpenMP threads (one each when there are as many classes as cores). The limit
        # holds for the whole process while it lasts.
        with threadpool_limits(limits=max(1, cores // workers)):
            if workers == 1:
                fitted = [fit_class(c) for c in active]
            else:
                with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sepne-classify") as pool:
                    fitted = list(pool.map(fit_class, active))
        for c, clf in zip(active, fitted):
            coef[c] = clf.coef_[0]
            intercept[c] = clf.intercept_[0]
        self.n_iter_ = max((int(np.max(clf.n_iter_)) for clf in fitted), default=0)
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


def available_cores() -> int:
    """The number of cores this process may use: its CPU affinity (a container's
    cpuset, ``taskset``) and a container's CPU quota (cgroups v1 and v2, as a Kubernetes
    pod's CPU limit sets it), as joblib counts them; joblib comes with scikit-learn.
    Without it, the affinity where the system reports one, else every core."""
    try:
        from joblib import cpu_count
    except ImportError:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):  # macOS and Windows have no affinity call
            return max(1, os.cpu_count() or 1)
    return max(1, int(cpu_count()))


def _check_threads(threads: int | None) -> int | None:
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise SettingError(f"threads must be a whole number of at least 1, or None for every core, got {threads!r}")
    return int(threads)


#: What to install for node classification (scikit-learn's logistic regression).
CLASSIFIER_EXTRA = 'pip install "sepne-spark[eval]"'


def classifier_available() -> bool:
    """Whether scikit-learn, which node classification needs, is installed."""
    try:
        import sklearn.linear_model  # noqa: F401
    except ImportError:
        return False
    return True


def require_classifier() -> None:
    """Raise :class:`~sepne_spark.errors.MissingExtraError` unless scikit-learn is installed."""
    if not classifier_available():
        raise MissingExtraError(f"node classification needs scikit-learn: {CLASSIFIER_EXTRA}")


def _logistic_regression():
    """scikit-learn's ``LogisticRegression``, or a clear error naming the extra."""
    require_classifier()
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression


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


#: Below this fraction of labelled ids that are embedded nodes, the labels are refused.
MIN_LABELLED_FOUND = 0.5
#: From this many classes per labelled node on, the labels are reported as implausible.
MAX_CLASSES_PER_NODE = 0.5


def check_labels(
    labels: Mapping[str, Iterable[str]], found: Iterable[str], path: str, embeddings: str = "the embeddings",
    nodes_among: Callable[[list[str]], int] | None = None,
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
    nodes_among : callable, optional
        How many of the ids it is given are nodes of the embeddings (a query of the
        caller's); asked only when there are about as many classes as labelled nodes,
        to tell an edge list from labels when its destinations are not labelled nodes.

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
    # Asked of the embeddings only for many classes: class names that are small numbers
    # are node ids too in a graph of integer ids, without being an edge list.
    if many and len(classes) >= 100 and ids_as_labels < 0.5 * len(classes) and nodes_among is not None:
        ids_as_labels = max(ids_as_labels, int(nodes_among(sorted(str(c) for c in classes))))
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


def _missing(label: Any) -> bool:
    """Whether a label is a missing value (None, NaN, pandas' NA and NaT)."""
    import pandas as pd

    try:
        return bool(pd.isna(label))
    except (TypeError, ValueError):  # not a scalar
        return False


def _binarize(labels: Sequence[Iterable[Hashable]]) -> tuple[np.ndarray, list[Hashable]]:
    """Indicator matrix of label sets, with the classes in a deterministic order. A
    node's labels are a collection of labels, or one label (a string, a number, any
    value that is not a collection)."""
    sets = [{x} if isinstance(x, (str, bytes)) or not isinstance(x, abc.Iterable) else set(x) for x in labels]
    for i, s in enumerate(sets):
        if any(_missing(c) for c in s):
            raise LabelsError(f"labels[{i}] is missing (None or NaN): give every node a label, or leave the node out")
    classes = sorted({c for s in sets for c in s}, key=lambda c: (str(type(c)), str(c)))
    index = {c: j for j, c in enumerate(classes)}
    Y = np.zeros((len(sets), len(classes)), dtype=bool)
    for i, s in enumerate(sets):
        for c in s:
            Y[i, index[c]] = True
    return Y, classes


def _vector_matrix(X: Any) -> np.ndarray:
    """``X`` as an n x d float64 array of finite numbers, or an :class:`InputError` that
    says what is wrong with it: not numbers, not a matrix, NaN or infinite entries (the
    normalisation would make such a row a zero vector, or every score NaN)."""
    if type(X).__name__ == "DataFrame" and type(X).__module__.startswith("pyspark."):  # classic or Connect
        raise InputError("X is a Spark DataFrame: give the labelled nodes' vectors as a NumPy array, one "
                         "row per node (e.g. np.array(df.select('embedding').toPandas()['embedding'].tolist()))")
    try:
        M = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"X must be a matrix of numbers, one row of d numbers per labelled node; a "
                         f"{type(X).__name__} was given ({exc})") from None
    if M.ndim != 2:
        raise InputError(f"X must be a matrix, one row of d numbers per labelled node; an array of shape "
                         f"{M.shape} was given")
    bad = np.flatnonzero(~np.isfinite(M).all(axis=1))
    if bad.size:
        raise InputError(f"X holds NaN or infinite values in {bad.size} row(s), e.g. row(s) "
                         f"{', '.join(map(str, bad[:3]))}: leave those nodes out or give them finite vectors")
    return M


def node_classification(
    X: np.ndarray,
    labels: Sequence[Iterable[Hashable]],
    train_ratios: Sequence[float] = (0.1, 0.9),
    n_splits: int = 10,
    seed: int = 0,
    C: float = 1.0,
    normalize: bool = True,
    threads: int | None = None,
) -> dict[str, Any]:
    """Micro-/macro-F1 of one-vs-rest logistic regression over random splits.

    Parameters
    ----------
    X : numpy.ndarray
        Embeddings of the labelled nodes (n x d), row ``i`` for ``labels[i]``. These are
        the labelled nodes' vectors only, held by the driver; finite numbers (a NaN or
        infinite entry is an :class:`~sepne_spark.errors.InputError`).
    labels : sequence of sets or lists
        The labels of each node; a single label may be given bare (a string, a
        number). Nodes with an empty label set are left out and counted in
        ``n_unlabelled``; a missing label (None, NaN) is an error.
    train_ratios : sequence of float
        Fractions of the nodes used for training, each in (0, 1).
    n_splits : int
        Random splits per ratio.
    seed : int
        Seed of the splits. Split ``s`` shuffles the nodes with
        ``numpy.random.default_rng([seed, s])`` and trains on the first
        ``max(1, int(ratio * n))`` of them (a product such as 0.57 x 2500, 1424.99... in
        floating point, counts as the whole number it is), so splits of different ratios
        are nested.
    C : float
        Inverse regularisation strength of the logistic regression.
    normalize : bool
        L2-normalise the rows of ``X`` first (the paper's protocol).
    threads : int, optional
        Classes fitted at once (see :class:`OneVsRestLogisticRegression`); the default is
        every core this process may use. The scores do not depend on it.

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
    threads = _check_threads(threads)
    X = _vector_matrix(X)
    if X.shape[0] != len(labels):
        raise LabelsError(f"X has {X.shape[0]} rows but {len(labels)} label sets were given")
    Y_all, classes = _binarize(labels)
    keep = Y_all.any(axis=1)
    X, Y = X[keep], Y_all[keep]
    n = X.shape[0]
    if n < 2 or not classes:
        raise LabelsError("need at least two labelled nodes")
    counts = Y.sum(axis=1)
    single = bool(np.all(counts == 1))
    if normalize:
        X = l2_normalize(X)
    ratios = [float(r) for r in train_ratios]
    for r in ratios:
        if not 0.0 < r < 1.0:
            raise SettingError(f"train ratio must be in (0, 1), got {r}")
    per: dict[float, dict[str, list[float]]] = {r: {"micro_f1": [], "macro_f1": []} for r in ratios}
    sizes: dict[float, tuple[int, int]] = {}
    started = time.monotonic()
    for s in range(int(n_splits)):
        perm = np.random.default_rng([int(seed), s]).permutation(n)
        for r in ratios:
            n_train = min(max(1, int(r * n + 1e-9)), n - 1)  # 0.57 * 2500 is 1424.99...: 1425
            sizes[r] = (n_train, n - n_train)
            tr, te = perm[:n_train], perm[n_train:]
            clf = OneVsRestLogisticRegression(C=C, threads=threads).fit(X[tr], Y[tr])
            scores = clf.decision_function(X[te])
            pred = _predict_labels(scores, None if single else counts[te])
            micro, macro = f1_scores(Y[te], pred)
            per[r]["micro_f1"].append(micro)
            per[r]["macro_f1"].append(macro)
        # One line per split: a long run (many labels, many nodes) shows how far it is.
        elapsed = time.monotonic() - started
        log.info("classification: split %d of %d done, %.1f s (about %.0f s to go): micro-F1 %s", s + 1,
                 int(n_splits), elapsed, elapsed / (s + 1) * (int(n_splits) - s - 1),
                 ", ".join(f"{per[r]['micro_f1'][-1]:.4f} at {r:g}" for r in ratios))
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
