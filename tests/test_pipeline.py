"""The estimator over sepne_spark.pipeline: a lazy transform, and propagation end to end."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sepne_spark import dense, pipeline
from sepne_spark.errors import InputError, RequestedIdsError, SettingError
from sepne_spark.model import SepNE
from sepne_spark.propagation import l2_normalize
from sepne_spark.spectral import average, propagate, refine, reorthogonalize
from tests.helpers import nothing_cached, random_graph, runs_the_solve


def _edges(spark, g):
    return spark.createDataFrame(g.rows, "src string, dst string, weight double")


def _jobs(spark, group: str) -> list[int]:
    return list(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def test_transform_is_lazy_and_runs_once(spark):
    g = random_graph(n=50, m=180, seed=2)
    edges = _edges(spark, g)
    spark.catalog.clearCache()
    model = SepNE(dim=4, landmarks=8, iters=3, setSize=20, scaling="log", propagation=2).fit(edges)
    sc = spark.sparkContext
    sc.setJobGroup("sepne-lazy-transform", "transform only")
    try:
        out = model.transform(edges)  # the fitted graph: its cached tables are reused
        assert _jobs(spark, "sepne-lazy-transform") == []  # no Spark job before an action
        # A new graph: with a step after the solve it is counted at the call (a bounded
        # count of its rows, its nodes and the landmarks among them: a small graph takes
        # the one-task path), and its solve waits for an action.
        sc.setJobGroup("sepne-new-graph", "transform of a new graph")
        other = model.transform(_edges(spark, random_graph(n=50, m=180, seed=3)))
        counted = _jobs(spark, "sepne-new-graph")
        assert model.plan.get("one_task") is True
        assert 3 <= len(counted) <= 6, counted  # the three counts (and their shuffles' stages, under AQE)
        sc.setJobGroup("sepne-first-action", "first action")
        first = {r["id"]: r["embedding"] for r in out.collect()}
        sc.setJobGroup("sepne-second-action", "second action")
        again = {r["id"]: r["embedding"] for r in out.collect()}
        assert first == again
        # The second action reads the checkpointed output: fewer jobs than the first.
        assert len(_jobs(spark, "sepne-second-action")) < len(_jobs(spark, "sepne-first-action"))
        assert other.count() == len(set(r[0] for r in random_graph(n=50, m=180, seed=3).rows)
                                    | set(r[1] for r in random_graph(n=50, m=180, seed=3).rows))
        # Everything the fit and both embeddings cached is released by the model.
        assert not nothing_cached(spark)
        model.release()
        assert nothing_cached(spark)
        # An embedding that fails at the call keeps none of its tables; a with block
        # releases the model's at its end.
        model.setPropagation(1)  # requested ids: no step after the solve
        with pytest.raises(RequestedIdsError, match="is not a node of the graph"):
            model.embed(spark.createDataFrame([("no-such-id",)], "id string"), edges)
        assert nothing_cached(spark)
        with model:  # the transform persists its tables at the call; they fill at an action
            model.transform(edges)
            assert not nothing_cached(spark)
        assert nothing_cached(spark)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


def _merged_weights(g, ids) -> sp.csr_matrix:
    """The oracle's graph: the merged, symmetric, self-loop-free weights the library
    holds for ``g`` (nodes in the order of ``ids``, which must be the graph's)."""
    assert list(ids) == g.ids
    return sp.csr_matrix(dense.weight_matrix(len(g.ids), g.src, g.dst, g.weight, directed=False))


#: The settings of the spectral steps' pipeline tests (the log-scaled two-hop M).
_LOG_A2 = dict(dim=4, landmarks=10, iters=4, setSize=25, metric="A+A2", scaling="log", lam=2.0, eta=1.0)


def _solve_only(spark, seed: int):
    """A small graph's edges, its ids in order, its merged weight matrix in that order and
    the per-set solve's vectors (no spectral step) in that order."""
    g = random_graph(n=60, m=220, seed=seed)
    edges = _edges(spark, g)
    E = {r["id"]: np.array(r["embedding"]) for r in SepNE(**_LOG_A2).fit(edges).transform(edges).collect()}
    ids = sorted(E)
    return edges, ids, _merged_weights(g, ids), np.array([E[v] for v in ids])


def test_a_connect_client_before_spark_4_fits_its_input_through_one_temporary_view(spark, monkeypatch):
    """Under a Spark Connect 3.5 client ``prepare_graph`` makes the caller's edge
    DataFrame one temporary view (``session.pinned``), so that the server analyses it
    once and the tables cached from it are found by later queries (checked on such a
    server by tests/test_connect.py); exercised here on the classic session, as that
    client would: one view, and the same vectors as without it."""
    from sepne_spark import session

    g = random_graph(n=50, m=180, seed=4)
    estimator = SepNE(dim=4, landmarks=8, iters=3, setSize=20)

    def vectors() -> dict:
        model = estimator.fit(_edges(spark, g))
        try:
            return {r["id"]: list(r["embedding"]) for r in model.transform(model._fit_input).collect()}
        finally:
            model.release()

    plain = vectors()
    monkeypatch.setattr(session, "connect_before_4", lambda s: True)
    through_view = vectors()
    views = [r["viewName"] for r in spark.sql("SHOW VIEWS LIKE 'sepne_edges_*'").collect()]
    for view in views:
        spark.catalog.dropTempView(view)
    assert len(views) == 1 and views[0].startswith("sepne_edges_"), views
    assert through_view == plain


def test_averaged_transform_is_the_average_of_the_unaveraged_one(spark):
    """averageSteps alone: in the one-task solve and by row blocks, the output is
    sepne_spark.spectral.average of the solve's vectors (to 1e-9; by row blocks in
    float64), and requested ids are refused. (The steps in one task after the
    distributed solve are the filter's test's second run, below.)"""
    edges, ids, W, start = _solve_only(spark, seed=6)
    want = average(W, start, 2)
    for one_task, blocks in ((100_000, 0), (0, 2)):
        model = SepNE(**_LOG_A2, averageSteps=2, oneTaskNodes=one_task, propagationBlocks=blocks,
                      propagationDtype="float64").fit(edges)
        result = model.transform(edges)
        out = {r["id"]: np.array(r["embedding"]) for r in result.collect()}
        assert model.plan["average_steps"] == 2 and "propagation" not in model.plan
        # By row blocks the output is computed at the call and checkpointed: a query over
        # it plans a scan of the checkpoint, not the solve and the steps again.
        assert runs_the_solve(result) == (not one_task and not blocks)
        assert model.plan.get("one_task", False) == bool(one_task)
        np.testing.assert_allclose(np.array([out[v] for v in ids]), want, rtol=1e-9, atol=1e-10)
        with pytest.raises(ValueError, match="averageSteps=0"):
            model.transform(spark.createDataFrame([(ids[0],)], "id string"))
        model.release()


def test_steps_after_the_solve_of_a_directed_graph_with_kept_self_loops(spark):
    """directed=True and selfLoops="keep", with a filter of its own shift and Bessel
    parameter: in the one-task solve, in one task after the distributed solve and by row
    blocks after it, the refinement, the filter and the averaging of the solve's
    vectors are the oracle's over the directed weights with the loops on the diagonal
    (T = D^-1 (I + A), D the out-weights plus one), to 1e-8 (by row blocks in float64)."""
    g = random_graph(n=60, m=220, seed=11, self_loops="keep")
    assert any(a == b for a, b in zip(g.src, g.dst))
    edges = _edges(spark, g)
    kw = dict(_LOG_A2, directed=True, selfLoops="keep")
    E = {r["id"]: np.array(r["embedding"]) for r in SepNE(**kw).fit(edges).transform(edges).collect()}
    ids = sorted(E)
    assert ids == g.ids
    W = sp.csr_matrix(dense.weight_matrix(len(ids), g.src, g.dst, g.weight, directed=True))
    start = np.array([E[v] for v in ids])
    Q = refine(W, start, 2)
    want = average(W, reorthogonalize(propagate(W, l2_normalize(Q), 3, 0.35, 1.0)), 2)
    for one_task, blocks in ((100_000, 0), (0, 0), (0, 2)):
        model = SepNE(**kw, propagation=3, propagationMu=0.35, propagationTheta=1.0, refineSteps=2, averageSteps=2,
                      oneTaskNodes=one_task, propagationBlocks=blocks, propagationDtype="float64").fit(edges)
        out = {r["id"]: np.array(r["embedding"]) for r in model.transform(edges).collect()}
        assert model.plan.get("one_task", False) == bool(one_task)
        np.testing.assert_allclose(np.array([out[v] for v in ids]), want, rtol=1e-8, atol=1e-9)
        model.release()


def test_log_ratio_refinement_is_the_oracle_of_the_solve(spark):
    """refineOperator="pmi": in the one-task solve and by row blocks after the distributed
    solve, the output is the oracle's rounds by the log-ratio matrix, then the filter, of
    the solve's vectors (to 1e-8; by row blocks in float64)."""
    edges, ids, W, start = _solve_only(spark, seed=7)
    want = reorthogonalize(propagate(W, l2_normalize(refine(W, start, 3, "pmi")), 3, 0.2, 0.5))
    for one_task, blocks in ((100_000, 0), (0, 2)):
        model = SepNE(**_LOG_A2, propagation=3, refineSteps=3, refineOperator="pmi", oneTaskNodes=one_task,
                      propagationBlocks=blocks, propagationDtype="float64").fit(edges)
        out = {r["id"]: np.array(r["embedding"]) for r in model.transform(edges).collect()}
        assert model.plan["refine_operator"] == "pmi" and model.plan["refine_steps"] == 3
        np.testing.assert_allclose(np.array([out[v] for v in ids]), want, rtol=1e-8, atol=1e-9)
        model.release()


def test_propagated_transform_is_the_filter_of_the_unpropagated_one(spark):
    g = random_graph(n=60, m=220, seed=5)
    edges = _edges(spark, g)
    kw = dict(dim=4, landmarks=10, iters=4, setSize=25, metric="I+A", lam=2.0, eta=1.0)
    base = SepNE(**kw).fit(edges)
    E = {r["id"]: np.array(r["embedding"]) for r in base.transform(edges).collect()}
    # Propagated inside the one-task solve, and by the propagation stage after the
    # distributed solve: both are the filter of the unpropagated vectors (refined first,
    # where refineSteps asks for it).
    # And by row blocks (the path of graphs over 100,000 nodes), which runs as a stage of
    # its own when transform is called.
    # By row blocks the n x d matrices are kept in propagationDtype between products
    # (float32 by default): equal to the oracle to float32's precision, or to float64's.
    # The storage type is read when transform runs: the float32 run reuses the fit of the
    # float64 one by row blocks.
    runs = {}
    model = None
    for one_task, blocks, steps, dtype in ((100_000, 0, 2, "float64"), (0, 0, 0, "float64"), (0, 2, 2, "float64"),
                                           (0, 2, 2, "float32")):
        if dtype == "float32":
            model.setPropagationDtype(dtype)
        else:
            model = SepNE(**kw, propagation=3, propagationTheta=0.7, oneTaskNodes=one_task,
                          propagationBlocks=blocks, refineSteps=steps, propagationDtype=dtype).fit(edges)
        runs[steps, one_task, blocks, dtype] = {r["id"]: np.array(r["embedding"])
                                                for r in model.transform(edges).collect()}
        assert model.plan.get("one_task", False) == bool(one_task) and model.plan["propagation"] == 3
        assert model.plan.get("refine_steps", 0) == steps
        assert ("solve_propagation" in model.timings) == (blocks == 2)
    ids = sorted(E)
    W = _merged_weights(g, ids)
    start = np.array([E[v] for v in ids])
    for (steps, _, blocks, dtype), out in runs.items():
        want = reorthogonalize(propagate(W, l2_normalize(refine(W, start, steps)), 3, 0.2, 0.7))
        got = np.array([out[v] for v in ids])
        if dtype == "float64":
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-9)
        else:  # stored in float32 between the 2 + 5 products: about 1e-7 relative each
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
            assert not np.allclose(got, want, rtol=1e-12, atol=0)  # float32 storage did apply


def test_a_long_window_runs_in_one_task_when_its_walks_bound_m(spark, monkeypatch):
    """Walks of more than two steps: up to n^2 entries of M the graph is taken in one task
    as before; beyond, the bound from the edges (window_entries_bound_frame, equal to the
    NumPy one) decides, so a sparse graph whose n^2 is over the limit still is."""
    from sepne_spark import one_task, sparse
    from sepne_spark.graph import prepare_graph

    g = random_graph(n=400, m=500, seed=31)
    graph = prepare_graph(_edges(spark, g), directed=False)
    ids = {v: i for i, v in enumerate(g.ids)}
    rows = graph.edges.select("src", "dst").collect()
    src = np.array([ids[r["src"]] for r in rows])
    dst = np.array([ids[r["dst"]] for r in rows])
    n = len(g.ids)
    for window in (3, 5):
        want = sparse.window_entries_bound(n, src, dst, window)
        assert pipeline.window_entries_bound_frame(graph.edges, n, window) == want
        assert want < n * n
        params = {"oneTaskNodes": 100_000, "metric": "A+A2", "window": window}
        monkeypatch.setattr(one_task, "MAX_ENTRIES", n * n)
        assert pipeline.fits_one_task(graph, params, n)  # n^2 within the limit: no job
        monkeypatch.setattr(one_task, "MAX_ENTRIES", want)
        assert pipeline.fits_one_task(graph, params, n)
        monkeypatch.setattr(one_task, "MAX_ENTRIES", want - 1)
        assert not pipeline.fits_one_task(graph, params, n)


def _expected_auto(n_nodes: int, edge_rows: int, walks: int | None, **params) -> dict:
    from sepne_spark import settings

    name, changed = settings.auto_profile(n_nodes, edge_rows, walks)
    resolved = settings.resolve(None, {**settings.load_profile(name), **changed})
    return {**settings.model_params(resolved), **params}


def test_from_profile_auto_chooses_from_the_graphs_size_as_the_job_does(spark, caplog, tmp_path):
    from sepne_spark.graph import prepare_graph

    # A tiny graph: document-quality, with at most half its nodes as landmarks.
    g = random_graph(n=60, m=220, seed=4)
    pairs = {tuple(sorted((g.ids[a], g.ids[b]))) for a, b in zip(g.src, g.dst)}
    nodes = len({v for p in pairs for v in p})
    with caplog.at_level("INFO", logger="sepne_spark"):
        est = SepNE.fromProfile("auto", _edges(spark, g), iters=7)
    assert est.settings() == _expected_auto(nodes, 2 * len(pairs), None, iters=7)
    assert est.getLandmarks() == nodes // 2 and est.getMetric() == "A+A2" and est.getUnreached() == "anchor"
    assert f"profile auto: document-quality for {nodes:,} nodes" in caplog.text
    assert "so its vectors have" in caplog.text  # dim narrowed to the landmarks, and said so
    # A Graph is fitted as it was read: its direction is taken unless given, with any profile.
    directed = prepare_graph(_edges(spark, g), directed=True)
    assert SepNE.fromProfile("auto", directed).getDirected() is True
    assert SepNE.fromProfile("social", directed).getDirected() is True
    assert SepNE.fromProfile("auto", directed, directed=False).getDirected() is False
    # The edges alone mean auto, in any case; landmarks given on a tiny graph bound dim.
    assert SepNE.fromProfile(_edges(spark, g), iters=7).settings() == est.settings()
    assert SepNE.fromProfile("AUTO", _edges(spark, g), iters=7).settings() == est.settings()
    caplog.clear()
    with caplog.at_level("INFO", logger="sepne_spark"):
        few = SepNE.fromProfile("auto", _edges(spark, g), landmarks=12)
    assert (few.getLandmarks(), few.getDim()) == (12, 12)
    assert "landmarks=12 gives vectors of 12 dimensions" in caplog.text
    # The log names auto's changes that were kept (dim, bounded by the landmarks given).
    assert f"profile auto: document-quality for {nodes:,} nodes (dim 12)" in caplog.text
    few.fit(_edges(spark, g)).release()
    # A profile that extends auto chooses as auto does, with its own entries over the choice.
    assert SepNE.fromProfile("yarn", _edges(spark, g), iters=7).settings() == est.settings()
    mine = tmp_path / "mine.yaml"
    mine.write_text("extends: auto\nlam: 3\nlandmarks: 12\nspark:\n  spark.sql.shuffle.partitions: '7'\n")
    caplog.clear()
    with caplog.at_level("INFO", logger="sepne_spark"):
        assert SepNE.fromProfile(str(mine), _edges(spark, g)).settings() == {**few.settings(), "lam": 3.0}
    assert f"profile {mine}: document-quality for {nodes:,} nodes (" in caplog.text
    # Its own dim is no narrowing of auto's (no warning), and its own reading is the
    # graph's the choice counts: 3,000 nodes with 6 out-edges each take walks of 4 steps
    # read as directed, of 3 read as undirected (twice the edge rows).
    mine.write_text("extends: auto\ndim: 8\ndirected: true\n")
    rng = np.random.default_rng(8)
    pairs = {(int(a), int(b)) for a, b in zip(np.repeat(np.arange(3000), 6), rng.integers(0, 3000, 18000)) if a != b}
    wide = spark.createDataFrame([(str(a), str(b), 1.0) for a, b in pairs], "src string, dst string, weight double")
    caplog.clear()
    with caplog.at_level("INFO", logger="sepne_spark"):
        narrow = SepNE.fromProfile(str(mine), wide)
    assert "so its vectors have" not in caplog.text and narrow.getDim() == 8 and narrow.getDirected() is True
    assert narrow.settings() == SepNE.fromProfile("auto", wide, directed=True, dim=8).settings()
    assert narrow.getWindow() != SepNE.fromProfile("auto", wide, dim=8).getWindow()
    with pytest.raises(SettingError, match=r"profile yarn, which extends auto, is chosen from the graph's size"):
        SepNE.fromProfile("yarn")
    with pytest.raises(InputError, match="the graph has no edges"):
        SepNE.fromProfile("auto", spark.createDataFrame([], "src string, dst string"))

    # Above 5,000 nodes the choice needs the two-step walks: counted by Spark, here
    # against NumPy's sum of squared degrees.
    rng = np.random.default_rng(5)
    n = 6000
    src = np.repeat(np.arange(n), 3)
    dst = rng.integers(0, n, src.size)
    keep = src != dst
    rows = [(int(a), int(b)) for a, b in zip(src[keep], dst[keep])]
    undirected = {tuple(sorted(r)) for r in rows}
    degree = np.bincount(np.array(list(undirected)).ravel(), minlength=n)
    walks = int((degree.astype(np.int64) ** 2).sum())
    big = SepNE.fromProfile("auto", spark.createDataFrame(rows, "src long, dst long"), seed=3)
    assert big.settings() == _expected_auto(int((degree > 0).sum()), 2 * len(undirected), walks, seed=3)
    assert big.getLandmarks() == 1000 and big.getScaling() == "log"  # social, two-hop
    # The degree counts of a Graph are taken once: the one-task bound after the choice
    # (M = A + A^2) runs no Spark job of its own.
    from sepne_spark.graph import prepare_graph

    graph = prepare_graph(spark.createDataFrame(rows, "src long, dst long"), directed=False)
    pipeline.choose_profile(graph)
    assert graph.counted["degrees"]["walks"] == walks
    spark.sparkContext.setJobGroup("sepne-one-task-bound", "the bound after the choice")
    try:
        assert pipeline.fits_one_task(graph, big.settings(), int((degree > 0).sum()))
        assert _jobs(spark, "sepne-one-task-bound") == []
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)


@pytest.mark.deploy  # 35 s: the row-block path chosen by a count
def test_steps_after_the_solve_on_a_graph_of_unknown_size_take_row_blocks_by_its_count(spark, monkeypatch):
    """A graph no fit holds (a loaded model's, or another DataFrame of the edges) has its
    nodes counted before the steps after the solve, so that a large one takes row blocks
    (here: more than 20 nodes) instead of one task; the vectors are the fitted graph's."""
    from sepne_spark import propagation

    monkeypatch.setattr(propagation, "ONE_TASK_NODES", 20)
    g = random_graph(n=60, m=220, seed=4)
    model = SepNE(dim=4, landmarks=8, metric="A+A2", setSize=20, iters=5, propagation=2, oneTaskNodes=0,
                  seed=1).fit(_edges(spark, g))
    fitted = {r["id"]: np.asarray(r["embedding"]) for r in model.transform(model._fit_input).collect()}
    assert "solve_propagation" in model.timings
    model.timings.clear()
    other = {r["id"]: np.asarray(r["embedding"]) for r in model.transform(_edges(spark, g)).collect()}
    assert "solve_propagation" in model.timings  # by row blocks, not in one task
    assert other.keys() == fitted.keys()
    for node, vec in fitted.items():
        np.testing.assert_allclose(other[node], vec, rtol=1e-5, atol=1e-6)
    model.release()


def test_auto_counts_nodes_rows_and_walks_together(spark):
    """The sizes ``auto`` chooses from, counted together: every endpoint is a node (3
    and 4 are only targets, 5 only in a dropped self-loop), every kept row an edge row,
    the two-step walks those of A (in-degree x out-degree; squared degrees undirected)
    and the squared out-degrees."""
    from sepne_spark.graph import prepare_graph

    rows = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 4), (2, 0), (5, 5)]
    graph = prepare_graph(spark.createDataFrame(rows, "src long, dst long"), directed=True)
    A = np.zeros((6, 6))
    for a, b in rows[:-1]:
        A[a, b] = 1
    walks = int((A @ A).sum())
    assert walks == 1 * 3 + 1 * 2 + 2 * 1  # 0: in 1, out 3; 1: in 1, out 2; 2: in 2, out 1
    assert pipeline._sizes(graph, with_nodes=True) == {"rows": 6, "walks": walks, "squares": 3 ** 2 + 2 ** 2 + 1 ** 2,
                                                       "nodes": 6}
    assert pipeline._sizes(graph, with_nodes=False) == {"rows": 6, "walks": walks, "squares": 14}
    chosen = pipeline.choose_profile(graph)
    assert (chosen.nodes, chosen.edge_rows) == (graph.vertices.count(), graph.edges.count()) == (6, 6)
    assert chosen.two_step_walks is None  # a tiny graph's choice does not need them
    undirected = prepare_graph(spark.createDataFrame(rows, "src long, dst long"), directed=False)
    degree = np.array([3, 3, 2, 1, 1])  # each pair once, both ways (2 -> 0 merged into 0 - 2)
    assert pipeline._sizes(undirected, with_nodes=True) == {"rows": 10, "walks": int((degree ** 2).sum()),
                                                            "squares": int((degree ** 2).sum()), "nodes": 6}


def test_the_built_in_defaults_on_a_larger_graph_point_to_from_profile(spark, caplog, monkeypatch):
    from sepne_spark import settings

    monkeypatch.setattr(settings, "AUTO_SMALL_NODES", 100)  # this graph counts as large
    edges = _edges(spark, random_graph(n=260, m=900, seed=6))
    with caplog.at_level("WARNING", logger="sepne_spark"):
        SepNE().fit(edges).release()
    assert "SepNE() runs the paper's document-network setting" in caplog.text
    assert 'SepNE.fromProfile("auto", edges) chooses the settings' in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="sepne_spark"):
        SepNE(landmarks=200, iters=5).fit(edges).release()  # settings the user chose: no advice
    assert "document-network setting" not in caplog.text


def test_tables_the_caller_cached_stay_cached_after_release(spark):
    """Graphs whose tables the caller cached through the catalog (another object of the
    same plan): the fit and the transform of another graph see them cached, persist
    nothing of theirs, and the model's release leaves them cached."""
    from sepne_spark.graph import prepare_graph

    views = []
    graphs = []
    for seed in (12, 13):
        graph = prepare_graph(_edges(spark, random_graph(n=50, m=180, seed=seed)), directed=False)
        for name, frame in (("edges", graph.edges), ("vertices", graph.vertices)):
            view = f"sepne_test_callers_{name}_{seed}"
            frame.createOrReplaceTempView(view)
            spark.catalog.cacheTable(view)
            views.append(view)
        graphs.append(graph)
    try:
        assert not graphs[0].edges.is_cached  # this object persisted nothing: the catalog did
        model = SepNE(dim=4, landmarks=8, iters=2, setSize=20).fit(graphs[0])
        assert model.transform(graphs[1]).count() == graphs[1].vertices.count()
        model.release()
        assert [v for v in views if not spark.catalog.isCached(v)] == []
    finally:
        for view in views:
            spark.catalog.uncacheTable(view)
            spark.catalog.dropTempView(view)
