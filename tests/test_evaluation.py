"""Tests of the evaluation helpers, the baselines and the evaluate job."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from sepne_spark import dense
from sepne_spark.baselines import nystrom_embedding, svd_embedding
from sepne_spark.evaluation import (
    OneVsRestLogisticRegression,
    _predict_labels,
    auc,
    auc_spark,
    f1_scores,
    l2_normalize,
    link_prediction,
    node_classification,
    reconstruction_r2,
    reconstruction_r2_sampled,
    reconstruction_r2_spark,
    sample_non_edges,
    split_edges,
)
from sepne_spark.errors import InputError, SettingError, UserError
from sepne_spark.jobs import evaluate as evaluate_job
from sepne_spark.solver import landmark_factors

ROOT = Path(__file__).resolve().parent.parent


def _job():
    return evaluate_job


def _random_graph(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    keep = src != dst
    return src[keep], dst[keep]


def _proximity(n: int, src: np.ndarray, dst: np.ndarray, directed: bool = False) -> np.ndarray:
    A = dense.transition_matrix(n, src, dst, directed=directed)
    return dense.proximity_from_transition(A, "A+A2")


# ---------------------------------------------------------------------------
# logistic regression and classification
# ---------------------------------------------------------------------------


def test_l2_normalize_keeps_zero_rows():
    X = np.array([[3.0, 4.0], [0.0, 0.0], [-2.0, 0.0]])
    out = l2_normalize(X)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]])


def test_separable_problem_reaches_f1_one(caplog):
    rng = np.random.default_rng(0)
    centers = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    y = np.repeat(np.arange(3), 40)
    X = centers[y] * 5 + rng.normal(scale=0.3, size=(120, 3))
    with caplog.at_level("INFO", logger="sepne_spark"):
        res = node_classification(X, [[c] for c in y], train_ratios=(0.3, 0.8), n_splits=3, seed=1)
    # a line per split says how far a long run is
    progress = [r.getMessage() for r in caplog.records if r.getMessage().startswith("classification: split")]
    assert [m.split(" done")[0] for m in progress] == [f"classification: split {i} of 3" for i in (1, 2, 3)]
    assert progress[-1].endswith(f"micro-F1 {res['results'][0.3]['micro_f1'][-1]:.4f} at 0.3, "
                                 f"{res['results'][0.8]['micro_f1'][-1]:.4f} at 0.8")
    # a ratio whose product with n is whole in decimals but not in floating point
    # (0.57 x 100 = 56.99999...) trains on that whole number of nodes
    assert node_classification(X[:100], list(y[:100]), train_ratios=(0.57,), n_splits=1)["results"][0.57][
        "n_train"] == 57
    # one label per node as a bare value (an integer, a NumPy integer) is the same
    for bare in (list(y), y):
        same = node_classification(X, bare, train_ratios=(0.3, 0.8), n_splits=3, seed=1)
        assert same["results"] == res["results"] and same["n_classes"] == 3
    for missing in (None, float("nan"), pd.NA):  # not a class of its own
        with pytest.raises(ValueError, match=r"labels\[4\] is missing \(None or NaN\)"):
            node_classification(X, list(y[:4]) + [missing] + list(y[5:]), train_ratios=(0.3,), n_splits=1)
    assert res["mode"] == "single-label"
    assert res["n_classes"] == 3 and res["n_nodes"] == 120
    # Vectors that are no matrix of finite numbers are refused, saying why: a NaN or
    # infinite row would count as a zero vector, or make every score NaN.
    for value in (np.nan, np.inf):
        bad = X.copy()
        bad[[3, 70], 1] = value
        with pytest.raises(InputError, match=r"X holds NaN or infinite values in 2 row\(s\), e.g. row\(s\) 3, 70"):
            node_classification(bad, list(y), n_splits=1)
    with pytest.raises(InputError, match=r"X must be a matrix, .* an array of shape \(120,\) was given"):
        node_classification(X[:, 0], list(y), n_splits=1)
    with pytest.raises(InputError, match="X must be a matrix of numbers, .* a list was given"):
        node_classification([[1.0, 2.0]] * 119 + [[1.0]], list(y), n_splits=1)
    for v in res["results"].values():
        assert v["micro_f1_mean"] == 1.0 and v["macro_f1_mean"] == 1.0
        assert v["micro_f1_std"] == 0.0 and len(v["micro_f1"]) == 3


def _ovr_gradient(X, Y, coef, intercept, C=1.0):
    """Gradient of C * sum log-loss + ||w||^2 / 2 per class, written independently."""
    S = np.where(Y, 1.0, -1.0)
    Z = X @ coef.T + intercept
    G = -S / (1.0 + np.exp(S * Z)) * C
    return X.T @ G + coef.T, G.sum(axis=0)


def test_logistic_regression_is_at_the_optimum_of_each_class():
    rng = np.random.default_rng(3)
    X = l2_normalize(rng.normal(size=(150, 6)))
    y = rng.integers(0, 3, 150)
    Y = np.eye(3, dtype=bool)[y]
    clf = OneVsRestLogisticRegression(C=1.0).fit(X, Y)
    gW, gb = _ovr_gradient(X, Y, clf.coef_, clf.intercept_)
    assert np.abs(gW).max() < 1e-4 and np.abs(gb).max() < 1e-4


def test_classes_fitted_at_once_each_on_one_core_give_the_same_classifier(monkeypatch):
    from threadpoolctl import threadpool_info

    from sepne_spark.evaluation import classification

    rng = np.random.default_rng(5)
    X = l2_normalize(rng.normal(size=(400, 8)))
    Y = np.eye(6, dtype=bool)[rng.integers(0, 6, 400)]
    one = OneVsRestLogisticRegression(threads=1).fit(X, Y)
    before = [i["num_threads"] for i in threadpool_info()]  # with every library the fit loads
    seen = []
    LogisticRegression = classification._logistic_regression()

    class Watched(LogisticRegression):
        def fit(self, *args, **kwargs):
            import threading
            blas = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
            seen.append((threading.current_thread().name, blas))
            return super().fit(*args, **kwargs)

    monkeypatch.setattr(classification, "_logistic_regression", lambda: Watched)
    three = OneVsRestLogisticRegression(threads=3).fit(X, Y)
    assert len(seen) == 6 and {name.rsplit("_", 1)[0] for name, _ in seen} == {"sepne-classify"}
    assert all(blas == {1} for _, blas in seen), seen  # no BLAS threads beyond the cores
    np.testing.assert_allclose(three.coef_, one.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(three.intercept_, one.intercept_, rtol=0, atol=1e-12)
    assert [i["num_threads"] for i in threadpool_info()] == before  # the process's limits are back
    res = node_classification(X, list(Y.argmax(axis=1)), train_ratios=(0.5,), n_splits=2, threads=2)
    assert res["results"] == node_classification(X, list(Y.argmax(axis=1)), train_ratios=(0.5,), n_splits=2,
                                                 threads=1)["results"]
    for bad in (0, -1, True, 2.5, "2"):
        with pytest.raises(SettingError, match="threads must be a whole number of at least 1"):
            OneVsRestLogisticRegression(threads=bad)
        with pytest.raises(SettingError, match="threads must be a whole number of at least 1"):
            node_classification(X, list(Y.argmax(axis=1)), train_ratios=(0.5,), n_splits=1, threads=bad)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_the_cores_a_process_may_use_follow_its_cpu_affinity():
    """A process bound to one core (``taskset``, a container's cpuset) fits one class at a
    time, whatever the machine has."""
    import subprocess
    import sys

    code = ("import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
            "from sepne_spark.evaluation.classification import available_cores; print(available_cores())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "1"
    from sepne_spark.evaluation.classification import available_cores

    assert 1 <= available_cores() <= len(os.sched_getaffinity(0))


def test_class_without_training_examples_scores_minus_infinity():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1]])
    Y = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0]], dtype=bool)
    scores = OneVsRestLogisticRegression().fit(X, Y).decision_function(X)
    assert np.all(scores[:, 2] == -np.inf)
    assert np.all(np.isfinite(scores[:, :2]))


def test_agrees_with_scikit_learn():
    # scikit-learn is in the "test" extra: this cross-check must run, never skip.
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.multiclass import OneVsRestClassifier

    rng = np.random.default_rng(7)
    X = l2_normalize(rng.normal(size=(300, 12)) + 0.5 * rng.integers(0, 2, (300, 1)))
    y = rng.integers(0, 5, 300)
    tr, te = np.arange(200), np.arange(200, 300)
    ours = OneVsRestLogisticRegression(C=1.0).fit(X[tr], np.eye(5, dtype=bool)[y[tr]])
    ref = OneVsRestClassifier(LogisticRegression(C=1.0, max_iter=10_000, tol=1e-10)).fit(X[tr], y[tr])
    np.testing.assert_allclose(ours.decision_function(X[te]), ref.decision_function(X[te]), atol=1e-4)
    pred = ours.decision_function(X[te]).argmax(axis=1)
    assert np.array_equal(pred, ref.predict(X[te]))
    micro, macro = f1_scores(np.eye(5, dtype=bool)[y[te]], np.eye(5, dtype=bool)[pred])
    assert micro == pytest.approx(f1_score(y[te], pred, average="micro"))
    assert macro == pytest.approx(f1_score(y[te], pred, average="macro", labels=range(5)))


def test_f1_scores_by_hand():
    T = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [1, 0, 0]], dtype=bool)
    P = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=bool)
    micro, macro = f1_scores(T, P)
    # class 0: tp 1 fp 1 fn 1 -> 0.5; class 1: tp 1 fn 1 -> 2/3; class 2: fp 1 -> 0
    assert macro == pytest.approx((0.5 + 2 / 3 + 0.0) / 3)
    assert micro == pytest.approx(2 * 2 / (2 * 2 + 2 + 2))  # = accuracy 0.5


def test_multilabel_protocol_predicts_as_many_labels_as_the_node_has():
    scores = np.array([[0.9, 0.8, 0.1], [0.2, 0.3, 0.4], [0.5, -1.0, 0.6]])
    pred = _predict_labels(scores, np.array([2, 1, 3]))
    assert pred.tolist() == [[True, True, False], [False, False, True], [True, True, True]]
    # a multi-label problem that the scores separate perfectly
    rng = np.random.default_rng(2)
    labels, rows = [], []
    for i in range(90):
        s = {i % 3} | ({(i + 1) % 3} if i % 2 else set())
        v = np.zeros(3)
        v[list(s)] = 4.0
        rows.append(v + rng.normal(scale=0.2, size=3))
        labels.append(s)
    res = node_classification(np.array(rows), labels, train_ratios=(0.5,), n_splits=2, seed=0)
    assert res["mode"] == "multi-label"
    assert res["results"][0.5]["micro_f1_mean"] == 1.0


# ---------------------------------------------------------------------------
# reconstruction
# ---------------------------------------------------------------------------


def test_reconstruction_exact_cases():
    rng = np.random.default_rng(0)
    W, C = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    M = W @ C.T
    M[np.abs(M) < 0.5] = 0.0  # give M zero entries; reconstruct it exactly
    W2, C2 = svd_embedding(M, 30)
    res = reconstruction_r2(M, W2, C2)
    assert res["r2_all"] == pytest.approx(1.0, abs=1e-12)
    assert res["r2_nonzero"] == pytest.approx(1.0, abs=1e-12)
    # M = [[1, 0], [0, 3]], W C^T = all ones: all entries mean 1, SS_tot 6, SS_res 6 -> 0;
    # non-zero entries 1, 3: mean 2, SS_tot 2, SS_res 4 -> -1
    M = np.array([[1.0, 0.0], [0.0, 3.0]])
    ones = np.ones((2, 1))
    for m in (M, sp.csr_matrix(M)):
        res = reconstruction_r2(m, ones, ones)
        assert res["r2_all"] == pytest.approx(0.0, abs=1e-12)
        assert res["r2_nonzero"] == pytest.approx(-1.0, abs=1e-12)
        assert res["n_nonzero"] == 2 and res["n_entries"] == 4


def test_reconstruction_dense_sparse_and_sampled_agree():
    n = 80
    src, dst = _random_graph(n, 200, seed=4)
    M = _proximity(n, src, dst)
    W, C = svd_embedding(M, 8)
    exact = reconstruction_r2(M, W, C, block_rows=7)
    sparse = reconstruction_r2(sp.csr_matrix(M), W, C)
    assert sparse["r2_all"] == pytest.approx(exact["r2_all"], abs=1e-10)
    assert sparse["r2_nonzero"] == pytest.approx(exact["r2_nonzero"], abs=1e-12)
    assert 0.0 < exact["r2_all"] < 1.0
    r, c = np.nonzero(M)
    est = reconstruction_r2_sampled(r, c, M[r, c], W, C, n_zero_samples=20_000, seed=1)
    assert est["sample_zero"] == 20_000 and est["sample_nonzero"] == len(r)
    assert est["r2_nonzero"] == pytest.approx(exact["r2_nonzero"], abs=1e-12)
    assert abs(est["r2_all"] - exact["r2_all"]) < max(4 * est["r2_all_stderr"], 1e-3)
    # every zero entry exactly once: the estimate is exact
    zr, zc = np.nonzero(M == 0)
    full = reconstruction_r2_sampled(r, c, M[r, c], W, C, zero_rows=zr, zero_cols=zc)
    assert full["r2_all"] == pytest.approx(exact["r2_all"], abs=1e-10)


# ---------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------


def test_svd_embedding_is_the_truncated_svd():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(12, 12))
    W, C = svd_embedding(M, 3)
    U, s, Vt = np.linalg.svd(M)
    np.testing.assert_allclose(W @ C.T, (U[:, :3] * s[:3]) @ Vt[:3], atol=1e-12)


def test_nystrom_equals_sepne_landmark_only_solution():
    n = 50
    src, dst = _random_graph(n, 220, seed=5)
    M = _proximity(n, src, dst, directed=True)
    landmarks = [3, 7, 11, 19, 23, 31, 40, 41, 45, 48]
    others = [i for i in range(n) if i not in landmarks]
    W, C = nystrom_embedding(M, landmarks, 4)
    # SepNE with no iterations, no global term and a vanishing regulariser (the dense
    # oracle's factors have the SVD's own signs, the solver's fixed ones: a column of
    # W and the same column of C may both be flipped)
    Ws, Cs = dense.sepne_dense(M, landmarks, [others], d=4, lam=0.0, eta=1e-10, iters=0)
    flip = np.sign(np.einsum("ij,ij->j", W, Ws))
    assert np.all(flip != 0)
    np.testing.assert_allclose(W * flip, Ws, atol=1e-6)
    np.testing.assert_allclose(C * flip, Cs, atol=1e-6)
    factors = landmark_factors(M[np.ix_(landmarks, landmarks)], 4)
    Phi, Psi = factors.Phi, factors.Psi
    np.testing.assert_allclose(W[landmarks], Phi.T)
    np.testing.assert_allclose(C[landmarks], Psi.T)
    # least squares: the residual is orthogonal to the landmark factors
    u = others[0]
    assert np.abs((M[u, landmarks] - W[u] @ Psi) @ Psi.T).max() < 1e-10
    Wsp, Csp = nystrom_embedding(sp.csr_matrix(M), landmarks, 4)
    np.testing.assert_allclose(Wsp, W, atol=1e-12)
    np.testing.assert_allclose(Csp, C, atol=1e-12)


# ---------------------------------------------------------------------------
# link prediction and Spark helpers
# ---------------------------------------------------------------------------


def test_auc_by_hand():
    # pairs (pos, neg): 0.1 loses twice, 0.5 ties 0.5 and beats 0.2, 0.9 wins twice
    assert auc([0.1, 0.5, 0.9], [0.5, 0.2]) == pytest.approx(3.5 / 6)
    assert auc([1.0, 2.0], [0.0]) == 1.0
    assert auc([0.0], [1.0, 2.0]) == 0.0
    assert auc([1.0, 1.0], [1.0]) == 0.5
    with pytest.raises(InputError, match=r"neg_scores holds 1 NaN score\(s\), e.g. at 1: a NaN has no rank"):
        auc([0.1, 0.5], [0.2, np.nan])


def test_the_vectors_reach_the_driver_in_slices_and_are_the_same(spark, monkeypatch):
    """Slices bounded by the numbers they hold (so that the driver's JVM holds one at a
    time): the same keys, vectors, null vectors and lengths as one query."""
    rows = [(f"n{i}", [float(i), -float(i), 0.5]) for i in range(50)] + [("nul", None), ("two", [1.0, 2.0])]
    emb = spark.createDataFrame(rows, "key string, e array<double>")
    keys = sorted([r[0] for r in rows] + ["absent"])

    def as_dict(got):
        present = got.present["e"]
        return {k: (None if not present[i] else (int(got.lengths["e"][i]), got.matrix("e", np.array([i]))[0].tolist()))
                for i, k in enumerate(got.keys)}

    whole = evaluate_job._Vectors(spark, emb, keys, ["e"])
    monkeypatch.setattr(evaluate_job, "COLLECT_NUMBERS", 30)  # 10 vectors of 3 numbers a slice
    sliced = evaluate_job._Vectors(spark, emb, keys, ["e"])
    assert (whole.slices, sliced.slices) == (1, 6)
    assert as_dict(sliced) == as_dict(whole) and len(whole) == 52 and "absent" not in whole.keys
    assert as_dict(whole)["nul"] is None and as_dict(whole)["two"] == (2, [1.0, 2.0])
    monkeypatch.setattr(evaluate_job, "COLLECT_NUMBERS", 10**9)
    monkeypatch.setattr(evaluate_job, "COLLECT_KEYS", 20)  # and by the keys: 53 keys, 3 slices
    by_keys = evaluate_job._Vectors(spark, emb, keys, ["e"])
    assert by_keys.slices == 3 and as_dict(by_keys) == as_dict(whole)


def test_node_classification_says_it_takes_the_vectors_on_the_driver(spark):
    vectors = spark.createDataFrame([([1.0, 0.0],), ([0.0, 1.0],)], "embedding array<double>")
    with pytest.raises(InputError, match=r"X is a Spark DataFrame: give the labelled nodes' vectors as a NumPy array"):
        node_classification(vectors, ["a", "b"], n_splits=1)


def test_auc_spark_matches_numpy(spark):
    rows = [(0.1, 1), (0.5, 1), (0.9, 1), (0.5, 0), (0.2, 0), (None, 1)]
    df = spark.createDataFrame(rows, "score double, label int")
    assert auc_spark(df) == pytest.approx(3.5 / 6)


def test_auc_spark_by_score_ranges_is_exact_with_ties(spark):
    # Scores on a coarse grid: many ties, also across the ranges' cuts.
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 3000)
    scores = np.round(rng.normal(size=labels.size) + 0.7 * labels, 1)
    df = spark.createDataFrame([(float(x), int(y)) for x, y in zip(scores, labels)], "score double, label int")
    want = auc(scores[labels == 1], scores[labels == 0])
    for buckets in (None, 17):
        assert auc_spark(df, buckets=buckets) == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="one positive and one negative"):
        auc_spark(df.where("label = 1"))
    # A score shared by most rows (the 0 of zero vectors) is counted apart, exactly.
    zeros = spark.createDataFrame([(0.0, int(i % 3 == 0)) for i in range(9000)], "score double, label int")
    both = df.unionByName(zeros)
    s_all = np.concatenate([scores, np.zeros(9000)])
    l_all = np.concatenate([labels, (np.arange(9000) % 3 == 0).astype(int)])
    want_both = auc(s_all[l_all == 1], s_all[l_all == 0])
    assert auc_spark(both, buckets=7) == pytest.approx(want_both, abs=1e-12)
    # NaN scores are left out, as null ones are, and said so; booleans are labels too.
    more = spark.createDataFrame([(float("nan"), 1), (float("nan"), 0), (None, 0)], "score double, label int")
    assert auc_spark(df.unionByName(more), buckets=5) == pytest.approx(want, abs=1e-12)
    flags = df.selectExpr("score", "label = 1 AS label")
    assert auc_spark(flags, buckets=5) == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="51 of the 3000 scored rows have a label other than 0 and 1"):
        auc_spark(df.selectExpr("score", "CASE WHEN label = 1 AND score > 2.5 THEN 2 ELSE label END AS label"))


def _two_communities(n_half: int = 12, p: float = 0.5, seed: int = 0) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    edges = []
    for base in (0, n_half):
        for i in range(n_half):
            for j in range(i + 1, n_half):
                if rng.random() < p:
                    edges.append((base + i, base + j))
    edges.append((0, n_half))
    return edges


def test_split_edges_deterministic_and_covers_nodes(spark):
    pairs = _two_communities()
    # both directions and a duplicate of some edges, as an undirected edge list may hold
    rows = [(u, v, 1.0) for u, v in pairs] + [(v, u, 1.0) for u, v in pairs[:10]] + [(pairs[0][0], pairs[0][1], 2.0)]
    edges = spark.createDataFrame(rows, "src long, dst long, weight double")
    train, test = split_edges(edges, 0.3, seed=5, directed=False)
    test_rows = sorted((r.src, r.dst) for r in test.collect())
    train_rows = [(r.src, r.dst) for r in train.collect()]
    # same split on another partitioning
    train2, test2 = split_edges(edges.repartition(3), 0.3, seed=5, directed=False)
    assert sorted((r.src, r.dst) for r in test2.collect()) == test_rows
    assert test_rows and all(u < v for u, v in test_rows)
    held = set(test_rows)
    train_pairs = {(min(u, v), max(u, v)) for u, v in train_rows}
    assert not held & train_pairs  # both directions and duplicates go to the same side
    assert len(train_rows) + sum(1 for r in rows if (min(r[0], r[1]), max(r[0], r[1])) in held) == len(rows)
    nodes = {x for p in pairs for x in p}
    assert {x for p in train_pairs for x in p} == nodes  # no node loses its last edge
    assert 0.15 < len(held) / len(pairs) < 0.45


def test_sample_non_edges(spark):
    pairs = _two_communities()
    edges = spark.createDataFrame(pairs, "src long, dst long")
    neg = sample_non_edges(edges, 40, seed=2, directed=False)
    got = [(r.src, r.dst) for r in neg.collect()]
    assert len(got) == 40 and len(set(got)) == 40
    E = {(min(u, v), max(u, v)) for u, v in pairs}
    assert all(u < v and (u, v) not in E for u, v in got)
    again = [(r.src, r.dst) for r in sample_non_edges(edges, 40, seed=2, directed=False).collect()]
    assert sorted(again) == sorted(got)
    with pytest.raises(ValueError, match="n must be at least 0; got -5"):
        sample_non_edges(edges, -5)


def test_link_prediction_scores_community_structure(spark, caplog):
    n = 24
    pairs = _two_communities(n // 2, p=0.8)
    # Both directions of each pair and a self-loop: the pairs are counted once, the rows apart
    edges = spark.createDataFrame(pairs + [(v, u) for u, v in pairs] + [(3, 3)], "src long, dst long")
    seen = {}

    def fit_embed(train):
        seen["train"] = train.count()
        # community indicators: every intra-community pair scores 1, every other 0
        rows = [(i, [1.0 * (i < n // 2), 1.0 * (i >= n // 2)], [2.0 * (i < n // 2), 2.0 * (i >= n // 2)])
                for i in range(n)]
        return spark.createDataFrame(rows, "id long, embedding array<double>, context array<double>")

    with caplog.at_level("WARNING", logger="sepne_spark"):
        res = link_prediction(spark, edges, fit_embed, fraction=0.2, seed=0, directed=False)
    assert res["n_test_edges"] > 0 and res["n_negative"] == res["n_test_edges"]
    # So few pairs: the spread of a chance AUC on them is said
    from sepne_spark.evaluation.link_prediction import chance_auc_spread

    assert f"the AUC rests on {res['n_test_edges']} held-out edges" in caplog.text
    assert f"+/- {chance_auc_spread(res['n_test_edges']):.2f}" in caplog.text
    assert chance_auc_spread(4) == pytest.approx(0.2165, abs=1e-4)
    assert res["n_train_rows"] == seen["train"] == 2 * res["n_train_edges"] + 1
    with pytest.raises(SettingError, match=r"fraction must be in \(0, 1\), got 0"):
        link_prediction(spark, edges, fit_embed, fraction=0)
    assert res["n_train_edges"] + res["n_test_edges"] == len(pairs)
    assert res["n_test_missing"] == 0 and res["n_negative_missing"] == 0
    assert res["auc_embedding_embedding"] > 0.8
    assert res["auc_embedding_context"] == pytest.approx(res["auc_embedding_embedding"])


def test_reconstruction_spark_matches_exact(spark):
    n = 16
    src, dst = _random_graph(n, 30, seed=8)
    M = _proximity(n, src, dst)
    W, C = svd_embedding(M, 3)
    r, c = np.nonzero(M)
    entries = spark.createDataFrame([(int(a), int(b), float(M[a, b])) for a, b in zip(r, c)],
                                    "src long, dst long, value double")
    emb = spark.createDataFrame([(i, W[i].tolist(), C[i].tolist()) for i in range(n)],
                                "id long, embedding array<double>, context array<double>")
    exact = reconstruction_r2(M, W, C)
    for blocks in (None, 3):  # one node block, and three (the blocks' sums added)
        res = reconstruction_r2_spark(entries, emb, blocks=blocks)
        assert res["exact"] and res["n_nonzero"] == len(r) and res["n_entries"] == n * n
        assert res["r2_all"] == pytest.approx(exact["r2_all"], abs=1e-9)
        assert res["r2_nonzero"] == pytest.approx(exact["r2_nonzero"], abs=1e-9)
    # a node without a vector predicts 0, as a zero row of W and C does
    W0, C0 = W.copy(), C.copy()
    W0[5] = C0[5] = 0.0
    res = reconstruction_r2_spark(entries, emb.where("id != 5"),
                                  nodes=spark.range(n).select("id"))
    assert res["r2_all"] == pytest.approx(reconstruction_r2(M, W0, C0)["r2_all"], abs=1e-9)
    assert (res["n_nodes"], res["n_missing_embedding"], res["n_zero_embedding"]) == (n, 1, 0)
    from sepne_spark.errors import InputError

    with pytest.raises(InputError, match=r"1 more vectors than ids of the graph.*given more than once: 3"):
        reconstruction_r2_spark(entries, emb.unionByName(emb.where("id = 3")))


# ---------------------------------------------------------------------------
# the evaluate job
# ---------------------------------------------------------------------------


def test_job_help_without_spark(capsys):
    job = _job()
    with pytest.raises(SystemExit) as exc:
        job.main(None, ["--help"])
    assert exc.value.code == 0
    with pytest.raises(SystemExit):
        job.main(None, ["--task", "classify", "--help"])
    assert "--embeddings" in capsys.readouterr().out


@pytest.mark.e2e
def test_job_classify_end_to_end(spark, tmp_path, capsys, caplog):
    rng = np.random.default_rng(0)
    n = 60
    y = np.arange(n) % 3
    E = np.eye(3)[y] * 3 + rng.normal(scale=0.2, size=(n, 3))
    # nodes 58 and 59 are labelled but have no embedding row
    pd.DataFrame({
        "id": np.arange(n - 2, dtype=np.int64),
        "embedding": [row.tolist() for row in E[: n - 2]],
        "context": [(-row).tolist() for row in E[: n - 2]],
    }).to_parquet(tmp_path / "emb.parquet")
    (tmp_path / "labels.tsv").write_text("".join(f"{i}\tc{y[i]}\n" for i in range(n)))
    out = tmp_path / "res.json"
    job = _job()
    with caplog.at_level("INFO", logger="sepne_spark"):
        rc = job.main(spark, ["--task", "classify", "--embeddings", str(tmp_path / "emb.parquet"),
                              "--labels", str(tmp_path / "labels.tsv"), "--ratios", "0.5",
                              "--splits", "2", "--json", str(out), "--use-context", "--threads", "3"])
    assert rc == 0
    assert any(r.getMessage().endswith("58 nodes, classes fitted 3 at a time ...") for r in caplog.records), \
        [r.getMessage() for r in caplog.records]
    text = capsys.readouterr().out
    assert "2 of 60 labelled nodes have no embedding" in text
    assert "micro-F1" in text
    res = json.loads(out.read_text())
    assert res["n_missing_embedding"] == 2 and res["n_nodes"] == 58
    assert res["vectors"] == "concat" and res["dim"] == 6
    assert res["results"]["0.5"]["micro_f1_mean"] == 1.0


def test_job_classify_missing_zero_scores_every_labelled_node_on_the_same_splits(spark, tmp_path, capsys):
    """--missing zero: a method without rows for some labelled nodes is scored as one
    that wrote them zero vectors, on the same nodes and the same splits (the default
    leaves them out, which changes the permutations)."""
    rng = np.random.default_rng(4)
    n = 60
    y = np.arange(n) % 3
    E = np.eye(3)[y] * 2 + rng.normal(scale=0.8, size=(n, 3))
    E[[5, 17, 40]] = 0.0
    frame = pd.DataFrame({"id": np.arange(n, dtype=np.int64), "embedding": [r.tolist() for r in E]})
    frame.to_parquet(tmp_path / "zeros.parquet")
    frame.drop(index=[5, 17, 40]).to_parquet(tmp_path / "without.parquet")
    (tmp_path / "labels.tsv").write_text("".join(f"{i}\tc{y[i]}\n" for i in range(n)))
    job = _job()
    results = {}
    for name, extra in (("zeros", []), ("without", ["--missing", "zero"]), ("dropped", [])):
        out = tmp_path / f"{name}.json"
        emb = tmp_path / ("without.parquet" if name != "zeros" else "zeros.parquet")
        assert job.main(spark, ["classify", "--embeddings", str(emb), "--labels", str(tmp_path / "labels.tsv"),
                                "--ratios", "0.2,0.8", "--splits", "3", "--json", str(out), *extra]) == 0
        results[name] = json.loads(out.read_text())
        results[name]["text"] = capsys.readouterr().out
    assert results["without"]["results"] == results["zeros"]["results"]
    assert results["without"]["n_nodes"] == 60 and results["without"]["missing"] == "zero"
    assert "3 of 60 labelled nodes have no embedding and were scored as zero vectors" in results["without"]["text"]
    assert results["dropped"]["n_nodes"] == 57 and results["dropped"]["missing"] == "drop"
    assert "were excluded (--missing zero scores them as zero vectors)" in results["dropped"]["text"]
    assert results["dropped"]["results"] != results["zeros"]["results"]


def test_job_classify_reports_zero_vectors_and_refuses_an_edge_list(spark, tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 60
    y = np.arange(n) % 3
    E = np.eye(3)[y] * 3 + rng.normal(scale=0.2, size=(n, 3))
    E[:4] = 0.0  # four nodes that no landmark reached
    pd.DataFrame({"id": np.arange(n, dtype=np.int64), "embedding": [r.tolist() for r in E]}
                 ).to_parquet(tmp_path / "emb.parquet")
    (tmp_path / "labels.tsv").write_text("".join(f"{i}\tc{y[i]}\n" for i in range(n)))
    job = _job()
    out = tmp_path / "res.json"
    args = ["classify", "--embeddings", str(tmp_path / "emb.parquet"), "--ratios", "0.5", "--splits", "2"]
    assert job.main(spark, args + ["--labels", str(tmp_path / "labels.tsv"), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "0 of 60 labelled nodes without an embedding" in text
    assert "4 of 60 evaluated nodes have an all-zero embedding" in text
    res = json.loads(out.read_text())
    assert res["n_zero_embedding"] == 4 and res["zero_examples"] == ["0", "1", "2", "3"]

    # An edge list given as labels: its first column is node ids, its "classes" too.
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{i}\t{(i * 7 + 1) % n}\n" for i in range(n)))
    with pytest.raises(UserError, match=r"edges\.tsv: .* classes for 60 labelled nodes.*looks like an edge list"):
        job.main(spark, args + ["--labels", str(edges)])
    # ... also when its destinations are nodes that are no source (citing papers -> cited)
    big = 300
    E = rng.normal(size=(2 * big, 3))
    pd.DataFrame({"id": np.arange(2 * big, dtype=np.int64), "embedding": [r.tolist() for r in E]}
                 ).to_parquet(tmp_path / "big.parquet")
    cites = tmp_path / "cites.tsv"
    cites.write_text("".join(f"{i}\t{big + (i * 7) % big}\n" for i in range(big)))
    many = ["classify", "--embeddings", str(tmp_path / "big.parquet"), "--ratios", "0.5", "--splits", "2"]
    with pytest.raises(UserError, match=rf"cites\.tsv: {big} classes for {big} labelled nodes, and {big} of the "
                                        "classes are node ids: this looks like an edge list"):
        job.main(spark, many + ["--labels", str(cites)])
    # A dated output's root: one partition per run, the same ids in each
    root = tmp_path / "dated"
    for day in ("dt=2026-12-01", "dt=2026-12-02"):
        (root / day).mkdir(parents=True)
        pd.read_parquet(tmp_path / "emb.parquet").to_parquet(root / day / "part-00000.parquet")
    dated = ["classify", "--embeddings", str(root), "--labels", str(tmp_path / "labels.tsv")]
    with pytest.raises(UserError, match=r"holds 2 partitions \(dt=2026-12-01, dt=2026-12-02\), one per run; give "
                                        r"one of them, e.g. --embeddings .*dated/dt=2026-12-02"):
        job.main(spark, dated)
    # Labels of another graph: most ids are not embedded nodes.
    other = tmp_path / "other.tsv"
    other.write_text("".join(f"x{i}\tc{i % 3}\n" for i in range(n)) + "1\tc1\n")
    with pytest.raises(UserError, match=r"other\.tsv: only 1 of its 61 labelled ids are nodes of"):
        job.main(spark, args + ["--labels", str(other)])


def test_check_labels_warns_about_nearly_one_class_per_node(caplog):
    from sepne_spark.evaluation import check_labels

    # Few classes named by small numbers, in a graph whose ids are numbers too: not an
    # edge list (a warning about the many classes only)
    numbered = {str(100 + i): [str(1 + i % 8)] for i in range(12)}
    assert len(check_labels(numbered, sorted(numbered), "labels.tsv", nodes_among=len)) == 1

    labels = {str(i): {f"c{i // 2}"} for i in range(40)}  # 20 classes of two nodes
    with caplog.at_level("WARNING", logger="sepne_spark.evaluation"):
        warnings = check_labels(labels, labels, "labels.tsv")
    assert len(warnings) == 1 and "20 classes for 40 labelled nodes" in warnings[0]
    assert "20 classes for 40 labelled nodes" in caplog.text
    plain = {str(i): {f"c{i % 4}"} for i in range(40)}
    assert check_labels(plain, plain, "labels.tsv") == []


@pytest.mark.e2e
def test_job_reconstruct(spark, tmp_path, capsys, caplog):
    n = 20
    src, dst = _random_graph(n, 45, seed=9)
    src, dst = np.concatenate([src, np.arange(n)]), np.concatenate([dst, (np.arange(n) + 1) % n])
    (tmp_path / "edges.tsv").write_text("src\tdst\n" + "".join(f"n{a}\tn{b}\n" for a, b in zip(src, dst)))
    # the job indexes nodes by their sorted string ids
    names = sorted(f"n{i}" for i in range(n))
    order = [int(s[1:]) for s in names]
    M = _proximity(n, src, dst)[np.ix_(order, order)]
    W, C = svd_embedding(M, 4)
    pd.DataFrame({"id": names, "embedding": [w.tolist() for w in W], "context": [c.tolist() for c in C]}
                 ).to_parquet(tmp_path / "emb.parquet")
    job = _job()
    out = tmp_path / "r.json"
    args = ["reconstruct", "--edges", str(tmp_path / "edges.tsv"), "--embeddings", str(tmp_path / "emb.parquet"),
            "--json", str(out)]
    with caplog.at_level("WARNING", logger="sepne_spark"):
        assert job.main(spark, args) == 0
    # No manifest beside these embeddings: M is the built-in defaults', which is said
    assert "emb.parquet has no _manifest.json (written by sepne-embed): M is built from the built-in defaults" \
        in caplog.text
    res = json.loads(out.read_text())
    exact = reconstruction_r2(M, W, C)
    assert res["exact"] and res["r2_all"] == pytest.approx(exact["r2_all"], abs=1e-12)
    assert res["scored"] == "W C^T"  # the context column was there
    assert res["r2_nonzero"] == pytest.approx(exact["r2_nonzero"], abs=1e-12)
    # --method driver on a graph above --driver-max-nodes: refused before its edges are read
    with pytest.raises(UserError, match=r"--method driver: the graph has 20 nodes, more than "
                                        r"--driver-max-nodes \(19\)"):
        job.main(spark, args[:-2] + ["--method", "driver", "--driver-max-nodes", "19"])
    # with Spark: the same exact R^2
    assert job.main(spark, args[:-2] + ["--method", "spark", "--json", str(out)]) == 0
    on_spark = json.loads(out.read_text())
    assert on_spark["method"] == "spark" and on_spark["exact"] and on_spark["n_nonzero"] == exact["n_nonzero"]
    assert on_spark["r2_all"] == pytest.approx(exact["r2_all"], abs=1e-12)
    assert on_spark["r2_nonzero"] == pytest.approx(exact["r2_nonzero"], abs=1e-12)
    assert "exact, with Spark" in capsys.readouterr().out
    # auto: above --driver-max-nodes nodes the Spark path; --json -: the results as the
    # last line of stdout, as the file holds them
    assert job.main(spark, args[:-2] + ["--driver-max-nodes", "19", "--json", "-"]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["method"] == "spark" and last["r2_all"] == on_spark["r2_all"]
    assert not (tmp_path / "-").exists()


@pytest.mark.e2e
def test_job_reconstruct_on_spark_equals_the_driver(spark, tmp_path):
    """The Spark path builds M as the embed job does (here A + A^2 + A^3 with the log
    scaling, self-loops dropped, repeated edges summed), counts the graph's nodes
    without a vector and with an all-zero one as the driver path does, and its exact
    R^2 is the driver's to rounding."""
    from tests.helpers import random_graph

    g = random_graph(n=40, m=150, seed=5)
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in g.rows), encoding="utf-8")
    W, C = svd_embedding(g.proximity("A+A2", directed=False, scaling="log", window=3), 6)
    W[3] = C[3] = 0.0
    keep = [i for i in range(len(g.ids)) if i != 7]  # one node without a row
    out = tmp_path / "emb.parquet"
    pd.DataFrame({"id": [g.ids[i] for i in keep], "embedding": [W[i].tolist() for i in keep],
                  "context": [C[i].tolist() for i in keep]}).to_parquet(out)
    job = _job()
    base = ["reconstruct", "--edges", str(edges), "--embeddings", str(out), "--window", "3", "--scaling", "log"]
    results = {}
    for method in ("driver", "spark"):
        res_json = tmp_path / f"{method}.json"
        assert job.main(spark, base + ["--method", method, "--json", str(res_json)]) == 0
        results[method] = json.loads(res_json.read_text())
    on_driver, on_spark = results["driver"], results["spark"]
    assert on_spark["exact"] and on_spark["method"] == "spark"
    for key in ("n_nodes", "n_missing_embedding", "n_zero_embedding", "n_nonzero", "n_entries"):
        assert on_spark[key] == on_driver[key], key
    assert (on_spark["n_missing_embedding"], on_spark["n_zero_embedding"]) == (1, 1)
    assert on_spark["r2_all"] == pytest.approx(on_driver["r2_all"], abs=1e-10)
    assert on_spark["r2_nonzero"] == pytest.approx(on_driver["r2_nonzero"], abs=1e-10)

    # A dated output's root (--run-date): one run's manifest gives M (window 3, log
    # scaling: the R^2 above, no flags); two runs hold each node twice, which is refused
    # naming the runs to choose from, on either path.
    root = tmp_path / "dated"
    manifest = {"settings": {"metric": "A+A2", "window": 3, "scaling": "log"}}
    for day in ("2026-01-01", "2026-01-02"):
        run = root / f"dt={day}"
        run.mkdir(parents=True)
        (run / "part-0.parquet").write_bytes(out.read_bytes())
        (run / "_manifest.json").write_text(json.dumps(manifest))
        runs = ["reconstruct", "--edges", str(edges), "--embeddings", str(root), "--method", "driver"]
        if day == "2026-01-01":
            assert job.main(spark, runs + ["--json", str(tmp_path / "one.json")]) == 0
            one = json.loads((tmp_path / "one.json").read_text())
            assert one["r2_all"] == pytest.approx(on_driver["r2_all"], abs=1e-12)
    for method in ("driver", "spark"):
        with pytest.raises(UserError, match=r"more vectors than ids .*holds 2 partitions \(dt=2026-01-01, "
                                            r"dt=2026-01-02\), one per run; give one of them"):
            job.main(spark, runs[:-1] + [method])


@pytest.mark.e2e
def test_job_reconstruct_refuses_ids_given_twice_and_vectors_of_two_lengths(spark, tmp_path):
    """Both paths: an id with two rows, or context vectors of another length than the
    embeddings', is a one-line error (no worker traceback, no silent last row)."""
    from sepne_spark.jobs.common import UserError

    edges = tmp_path / "edges.tsv"
    edges.write_text("a\tb\nb\tc\nc\ta\nc\td\n", encoding="utf-8")
    twice = tmp_path / "twice.parquet"
    pd.DataFrame({"id": ["a", "a", "b", "c", "d"], "embedding": [[1.0, 0.0]] * 5}).to_parquet(twice)
    lengths = tmp_path / "lengths.parquet"
    pd.DataFrame({"id": ["a", "b", "c", "d"], "embedding": [[1.0, 0.0]] * 4,
                  "context": [[1.0, 0.0, 0.0]] * 4}).to_parquet(lengths)
    job = _job()
    for method in ("driver", "spark"):
        base = ["reconstruct", "--edges", str(edges), "--method", method, "--embeddings"]
        # The same words by either method: the path, the count, the ids
        with pytest.raises(UserError, match=r"twice.parquet: 1 more vectors than ids of the graph: one row per id "
                                            r"\(given more than once: 'a'\)"):
            job.main(spark, base + [str(twice)])
        with pytest.raises(UserError, match=r"lengths.parquet: embedding and context vectors have different "
                                            r"lengths: \[2, 3\], e.g. of 'a'"):
            job.main(spark, base + [str(lengths)])
    # A NaN, infinite or null number in a vector: named, not scored as zero (classify) or
    # as an R^2 of NaN (reconstruct)
    nan = tmp_path / "nan.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "c", "d"], "embedding": pa.array(
        [[1.0, 0.0], [np.nan, 0.0], [1.0, None], [np.inf, 1.0]], pa.list_(pa.float64()))}), nan)
    (tmp_path / "labels.tsv").write_text("a\tx\nb\ty\nc\tx\nd\ty\n", encoding="utf-8")
    for args in (["reconstruct", "--edges", str(edges), "--method", "driver"],
                 ["reconstruct", "--edges", str(edges), "--method", "spark"],
                 ["classify", "--labels", str(tmp_path / "labels.tsv"), "--ratios", "0.5"]):
        with pytest.raises(UserError, match=rf"{nan}: 3 vector\(s\) hold NaN, infinite or null values, "
                                            r"e.g. 'b', 'c', 'd'"):
            job.main(spark, args + ["--embeddings", str(nan)])
    # A null vector, first in the file, is a node without an embedding on either path
    null = tmp_path / "null.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "c", "d"], "embedding": pa.array(
        [None, [1.0, 0.0], [0.5, 0.5], [0.0, 1.0]], pa.list_(pa.float64()))}), null)
    for method in ("driver", "spark"):
        out = tmp_path / f"null-{method}.json"
        assert job.main(spark, ["reconstruct", "--edges", str(edges), "--method", method, "--embeddings", str(null),
                                "--json", str(out)]) == 0
        assert json.loads(out.read_text())["n_missing_embedding"] == 1


@pytest.mark.e2e
def test_embeddings_of_another_type_or_without_rows_are_refused_naming_the_file(spark, tmp_path):
    """The vectors' column must be an array of numbers (or an ML vector), and the table
    must have rows: a one-line error naming the file, not Spark's cast error or a
    complaint about the labels."""
    strings = tmp_path / "strings.parquet"
    pd.DataFrame({"id": ["a", "b"], "embedding": ["1,0", "0,1"]}).to_parquet(strings)
    with pytest.raises(UserError, match=rf"{strings}: column embedding is string; expected an array of numbers"):
        evaluate_job.read_embeddings(spark, str(strings), need_context=False)
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"id": pa.array([], pa.string()), "embedding": pa.array([], pa.list_(pa.float64()))}),
                   empty)
    with pytest.raises(UserError, match=rf"{empty}: the embeddings have no rows"):
        evaluate_job.read_embeddings(spark, str(empty), need_context=False)
    # ML vectors, one of them null: read as arrays, the null one as no embedding
    from pyspark.ml.linalg import Vectors, VectorUDT
    from pyspark.sql.types import StringType, StructField, StructType

    ml = tmp_path / "ml.parquet"
    spark.createDataFrame([("a", Vectors.dense([1.0, 2.0])), ("b", None)], StructType(
        [StructField("id", StringType()), StructField("embedding", VectorUDT())])).write.parquet(str(ml))
    read = evaluate_job.read_embeddings(spark, str(ml), need_context=False)
    assert sorted((r["key"], r["e"]) for r in read.collect()) == [("a", [1.0, 2.0]), ("b", None)]


def test_link_prediction_on_a_graph_without_an_edge_to_hold_out_is_a_user_error(spark):
    """A star (every edge the last one of a leaf): nothing can be held out, said in one line."""
    from sepne_spark.evaluation import link_prediction

    star = spark.createDataFrame([("0", str(i)) for i in range(1, 8)], "src string, dst string")
    with pytest.raises(UserError, match="no edge could be held out: every edge is the last one of one of its nodes"):
        link_prediction(spark, star, lambda train: None, fraction=0.3, seed=1, directed=False)
    # A complete graph has no non-edge at all: no --fraction helps, and the message says so
    k6 = spark.createDataFrame([(i, j) for i in range(6) for j in range(i + 1, 6)], "src long, dst long")
    with pytest.raises(UserError, match=r"the graph has no non-edge \(every pair of its nodes is joined\)"):
        link_prediction(spark, k6, lambda train: None, fraction=0.3, seed=1, directed=False)


@pytest.mark.e2e
def test_job_reconstruct_takes_m_from_the_manifest(spark, tmp_path, capsys, caplog):
    """The manifest next to the embeddings says which M they are of (here a window of 3
    with the log scaling, as the embed job writes it); flags override it."""
    from tests.helpers import random_graph

    g = random_graph(n=40, m=150, seed=5)  # with self-loops (dropped) and repeated edges (summed)
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in g.rows), encoding="utf-8")
    W, C = svd_embedding(g.proximity("A+A2", directed=False, scaling="log", window=3), 6)
    out = tmp_path / "emb"
    out.mkdir()
    pd.DataFrame({"id": g.ids, "embedding": [w.tolist() for w in W], "context": [c.tolist() for c in C]}
                 ).to_parquet(out / "part-0.parquet")
    settings = {"metric": "A+A2", "window": 3, "scaling": "log", "directed": False, "duplicates": "sum",
                "self_loops": "drop", "landmarks": 12}
    other = tmp_path / "other.tsv"
    other.write_text("a\tb\n")
    from sepne_spark.jobs.common import input_fingerprint

    made_from = {"job": "embed", "settings": settings, "input_files": input_fingerprint(spark, [str(other)])}
    (out / "_manifest.json").write_text(json.dumps(made_from))
    job = _job()
    res_json = tmp_path / "r.json"
    with caplog.at_level("WARNING", logger="sepne_spark"):
        assert job.main(spark, ["reconstruct", "--edges", str(edges), "--embeddings", str(out)]) == 0
    assert f"may not be the input the embeddings were made from ({other}: 1 file(s), 4 bytes" in caplog.text
    made_from["input_files"] = input_fingerprint(spark, [str(edges)])
    (out / "_manifest.json").write_text(json.dumps(made_from))
    caplog.clear()
    r2 = []
    for extra, (window, scaling) in (([], (3, "log")), (["--window", "2", "--scaling", "none"], (2, "none"))):
        capsys.readouterr()
        assert job.main(spark, ["reconstruct", "--edges", str(edges), "--embeddings", str(out),
                                "--json", str(res_json)] + extra) == 0
        res = json.loads(res_json.read_text())
        exact = reconstruction_r2(g.proximity("A+A2", directed=False, scaling=scaling, window=window), W, C)
        assert (res["window"], res["scaling"], res["self_loops"]) == (window, scaling, "drop")
        assert res["r2_all"] == pytest.approx(exact["r2_all"], abs=1e-10)
        assert res["r2_nonzero"] == pytest.approx(exact["r2_nonzero"], abs=1e-10)
        assert "from the embeddings' manifest" in capsys.readouterr().out
        r2.append(res["r2_all"])
    assert "may not be the input" not in caplog.text  # the manifest's own input: no warning
    assert res["input_mismatch"] is None and res["steps_after_solve"] is None
    made_from["settings"] = {**settings, "propagation": 3, "average_steps": 6}
    (out / "_manifest.json").write_text(json.dumps(made_from))
    assert job.main(spark, ["reconstruct", "--edges", str(edges), "--embeddings", str(out),
                            "--json", str(res_json)]) == 0
    assert json.loads(res_json.read_text())["steps_after_solve"] == "propagation of 3 terms (5 products), 6 averaging steps"
    assert "went through propagation of 3 terms (5 products), 6 averaging steps after the solve" in caplog.text
    assert "(embed with --propagation 1 --refine-steps 0 --average-steps 0 to measure it)" in caplog.text
    # The anchor of the nodes no landmark reaches changes rows after the solve too.
    made_from["settings"] = {**settings, "unreached": "anchor"}
    (out / "_manifest.json").write_text(json.dumps(made_from))
    caplog.clear()
    assert job.main(spark, ["reconstruct", "--edges", str(edges), "--embeddings", str(out),
                            "--json", str(res_json)]) == 0
    assert json.loads(res_json.read_text())["steps_after_solve"] == "the anchor of the nodes no landmark reaches"
    assert "(embed with --unreached zero to measure it)" in caplog.text
    made_from["sets"] = {"unreached": 0}  # the distributed path's count: the anchor filled no node
    (out / "_manifest.json").write_text(json.dumps(made_from))
    assert job.main(spark, ["reconstruct", "--edges", str(edges), "--embeddings", str(out),
                            "--json", str(res_json)]) == 0
    assert json.loads(res_json.read_text())["steps_after_solve"] is None
    assert r2[0] > r2[1]  # the vectors are the truncated SVD of the manifest's M, not of the other


def test_reconstruct_reads_the_edges_laid_out_as_the_embed_job_read_them(spark, tmp_path):
    """The embed job records its layout flags (--sep, --header, the columns) in the
    manifest, and reconstruct reads the same file with them: columns named in the header
    and in another order (weight, destination, source) give the R^2 of the plain file."""
    from sepne_spark.jobs import embed
    from tests.helpers import random_graph

    g = random_graph(n=40, m=150, seed=6)
    laid_out = tmp_path / "edges.csv"
    laid_out.write_text("w;to;from\n" + "".join(f"{w};{d};{s}\n" for s, d, w in g.rows), encoding="utf-8")
    plain = tmp_path / "edges.tsv"
    plain.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in g.rows), encoding="utf-8")
    out = tmp_path / "emb"
    layout = ["--sep", ";", "--header", "yes", "--src-col", "from", "--dst-col", "to", "--weight-col", "w"]
    assert embed.main(spark, ["--input", str(laid_out), "--output", str(out), "--profile", "default",
                              "--landmarks", "8", "--dim", "4", "--iters", "3", "--set-size", "20"] + layout) == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["read"] == {"sep": ";", "header": "yes", "src_col": "from", "dst_col": "to", "weight_col": "w"}
    results = []
    for edges in (laid_out, plain):
        res_json = tmp_path / f"r-{edges.suffix[1:]}.json"
        args = ["reconstruct", "--edges", str(edges), "--embeddings", str(out), "--json", str(res_json)]
        if edges is plain:  # the manifest's layout is the laid-out file's: the plain file's flags override it
            args += ["--sep", "\t", "--header", "no", "--src-col", "0", "--dst-col", "1", "--weight-col", "2"]
        assert _job().main(spark, args) == 0
        results.append(json.loads(res_json.read_text()))
    assert results[0]["n_nodes"] == len(g.ids) == results[1]["n_nodes"]
    assert results[0]["r2_all"] == pytest.approx(results[1]["r2_all"], abs=1e-12)
    assert results[0]["r2_nonzero"] == pytest.approx(results[1]["r2_nonzero"], abs=1e-12)


@pytest.mark.e2e
def test_job_linkpred_with_a_profile(spark, tmp_path):
    n = 40
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{a}\t{b}\n" for a, b in _two_communities(n // 2, p=0.5)), encoding="utf-8")
    out = tmp_path / "lp.json"
    args = ["linkpred", "--edges", str(edges), "--profile", "document-quality", "--landmarks", "8", "--dim", "4",
            "--window", "2", "--scaling", "none", "--landmark-strategy", "DD", "--iters", "5", "--set-size", "10",
            "--fraction", "0.2", "--json", str(out)]
    assert _job().main(spark, args) == 0
    res = json.loads(out.read_text())
    used = res["settings"]
    # the profile's settings, with the flags over them
    assert (used["eta"], used["lam"]) == (1000.0, 0.4)
    assert (used["landmarks"], used["dim"], used["window"], used["scaling"], used["landmark_strategy"]) == (
        8, 4, 2, "none", "DD")
    assert res["n_test_edges"] > 0 and res["auc_embedding_embedding"] > 0.6
    with pytest.raises(UserError, match="partition IO"):
        _job().main(spark, args[:-2] + ["--partition", "IO"])


@pytest.mark.e2e
def test_job_linkpred_runs_auto_on_the_training_graph(spark, tmp_path, capsys):
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{a}\t{b}\n" for a, b in _two_communities(20, p=0.5)), encoding="utf-8")
    out = tmp_path / "lp.json"
    args = ["linkpred", "--edges", str(edges), "--landmarks", "8", "--dim", "4", "--iters", "5",
            "--fraction", "0.2", "--json", str(out)]
    assert _job().main(spark, args) == 0
    res = json.loads(out.read_text())
    # auto's choice for a small sparse graph, as the embed job makes it, with the flags over it
    assert res["profile"] == "auto: document-quality"
    used = res["settings"]
    assert (used["landmarks"], used["dim"], used["eta"], used["propagation"]) == (8, 4, 1000.0, 3)
    assert res["auc_embedding_embedding"] > 0.6
    # The steps after the solve changed the embeddings, not the context vectors: said
    assert res["auc_embedding_context"] is not None
    assert res["context_note"].startswith("the embeddings went through propagation of 3 terms")
    # embedding.embedding, the score to read, comes first; the training graph counted in pairs and rows
    printed = [line for line in capsys.readouterr().out.splitlines() if "AUC" in line or "training edges" in line]
    assert printed[0].endswith(f"{res['n_train_edges']} training edges ({res['n_train_rows']} edge-list rows)")
    assert [line.split(":")[0].strip() for line in printed[1:]] == ["AUC embedding.embedding", "AUC embedding.context"]


def test_embeddings_that_are_not_parquet_are_named_with_sparks_reason(spark, tmp_path):
    text = tmp_path / "emb.tsv"
    text.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"cannot read embeddings Parquet {text}: \[(FAILED_READ_FILE\.)?CANNOT_READ_FILE_FOOTER\] .*Could not read footer"):
        # Spark's error class and words (3.5 names the class alone)
        evaluate_job.read_embeddings(spark, str(text), need_context=False)


def test_a_ratio_given_twice_is_evaluated_once():
    assert evaluate_job._ratios("0.1,0.5,0.1") == [0.1, 0.5]
