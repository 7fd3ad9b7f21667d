"""The distributed SepNE against the dense NumPy oracle of the same equations."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from sepne_spark import dense
from sepne_spark.model import SepNE, SepNEModel
from sepne_spark.graph import Graph, prepare_graph
from sepne_spark.solver import row_space_factors, solve_set
from tests.helpers import D, ETA, ITERS, K, LAM, SET, WIDE_IDS, collect, nothing_cached, oracle_compare, random_graph

# Every metric x direction x weighting, with each landmark strategy and each
# partition setup appearing in the grid.
# The last field is ``oneTaskNodes``: 0 takes the distributed stages, the default takes
# the one-task SciPy path (these graphs are small); both paths meet each metric,
# direction and setup.
GRID = [
    ("I+A", True, True, "DD", "RP", 0),
    ("I+A", True, False, "DP", "LP", 100_000),
    ("I+A", False, True, "UF", "IO", 0),
    ("I+A", False, False, "GDS", "RP", 100_000),
    ("A+A2", True, True, "GDS", "LP", 0),
    ("A+A2", True, False, "UF", "RP", 100_000),
    ("A+A2", False, True, "DP", "IO", 100_000),
    ("A+A2", False, False, "DD", "LP", 100_000),
    ("A+A2", False, False, "DD", "RP", 0),
]


def edges_df(spark, g, weighted):
    if weighted:
        return spark.createDataFrame(g.rows, "src string, dst string, weight double")
    return spark.createDataFrame([r[:2] for r in g.rows], "src string, dst string")


def dense_dd(g, directed, k):
    deg = np.bincount(g.src, minlength=len(g.ids)) + np.bincount(g.dst, minlength=len(g.ids))
    pairs = set()
    for a, b in zip(g.src, g.dst):
        pairs.add((a, b) if directed else (min(a, b), max(a, b)))
    deg = np.zeros(len(g.ids), dtype=int)
    for a, b in pairs:
        deg[a] += 1
        deg[b] += 1
    if not directed:
        deg = deg * 2
    order = sorted(range(len(g.ids)), key=lambda i: (-deg[i], g.ids[i]))
    return order, deg, pairs


def test_transform_of_requested_ids_keeps_their_other_columns(spark):
    """pyspark.ml's contract for transform: the input's rows and columns, the output's
    appended; the rows are those of the ids alone, an id that is no node is left out."""
    from sepne_spark.errors import InputError, RequestedIdsError, SettingError

    g = random_graph(seed=4)
    model = SepNE(dim=D, landmarks=K, metric="I+A", partition="IO", setSize=SET, lam=LAM, eta=ETA, iters=ITERS,
                  seed=3).fit(edges_df(spark, g, True))
    rows = [(g.ids[0], "a", 1), (g.ids[0], "b", 2), (g.ids[5], "c", 3), ("no-such-node", "d", 4)]
    asked = spark.createDataFrame(rows, "id string, name string, n int")
    out = model.transform(asked)
    assert out.columns == ["id", "name", "n", "embedding", "context", "is_landmark", "set_id"]
    alone = {r["id"]: r for r in model.transform(asked.select("id")).collect()}
    rows = sorted(out.collect(), key=lambda r: r["n"])
    assert [(r["id"], r["name"], r["n"]) for r in rows] == [(g.ids[0], "a", 1), (g.ids[0], "b", 2), (g.ids[5], "c", 3)]
    for r in rows:
        assert r.asDict() == {**alone[r["id"]].asDict(), "name": r["name"], "n": r["n"]}
    with pytest.raises(RequestedIdsError, match=r"columns \[.embedding.\] would be replaced"):
        model.transform(asked.withColumn("embedding", F.lit(1)))
    # Spark resolves names without regard to case: Embedding clashes too
    with pytest.raises(RequestedIdsError, match=r"columns \[.Embedding.\] would be replaced"):
        model.transform(asked.withColumn("Embedding", F.lit(1.0)))
    # Ids of a type that is no id (true would be read as node 1) are refused at the call
    with pytest.raises(RequestedIdsError, match="the requested ids' column id is boolean: node ids are strings"):
        model.transform(spark.createDataFrame([(True, "t")], "id boolean, tag string"))
    with pytest.raises(InputError, match=r"or a DataFrame of requested ids \(a column named id, in lower case.*"
                                         r"the DataFrame has 'ID': rename it, df.withColumnRenamed\('ID', 'id'\)"):
        model.transform(spark.createDataFrame([(1,)], "ID long"))
    # IO embeds requested ids only: a whole graph is refused (it ran RP sets unasked).
    with pytest.raises(SettingError, match="partition IO embeds only requested ids"):
        model.transform(edges_df(spark, g, True))
    # After release() the model holds no graph, as a loaded one.
    model.release()
    with pytest.raises(SettingError, match="holds no graph"):
        model.transform(asked)


@pytest.mark.parametrize("metric,directed,weighted,strategy,setup,one_task", GRID)
def test_matches_dense_oracle(spark, metric, directed, weighted, strategy, setup, one_task):
    g = random_graph(seed=len(metric) + 2 * directed + 4 * weighted)
    edges = edges_df(spark, g, weighted)
    est = SepNE(dim=D, landmarks=K, landmarkStrategy=strategy, metric=metric, partition=setup,
                setSize=SET, lam=LAM, eta=ETA, iters=ITERS, directed=directed, seed=3, oneTaskNodes=one_task)
    model = est.fit(edges)
    assert len(set(model.landmark_ids)) == K
    if setup == "IO":
        wanted = g.ids[::3] + [model.landmark_ids[0]]
        ids = spark.createDataFrame([(i,) for i in wanted], "id string")
        out = collect(model.transform(ids))
        assert sorted(out) == sorted(set(wanted))
    else:
        out = collect(model.transform(edges))
        assert sorted(out) == g.ids  # every node exactly once
        assert model.plan.get("one_task", False) == bool(one_task)
    sets = oracle_compare(g, out, model, metric, directed, weighted)
    if setup == "LP":
        sizes = sorted(len(s) for s in sets.values())
        assert max(sizes) <= SET and all(s >= SET // 2 for s in sizes[1:])
    if setup == "RP":
        assert len(sets) == int(np.ceil((len(g.ids) - K) / SET))
    # Landmark choice against a dense re-implementation.
    order, deg, pairs = dense_dd(g, directed, K)
    pos = g.index()
    if strategy == "DD":
        assert model.landmark_ids == [g.ids[i] for i in order[:K]]
    elif strategy == "GDS":
        adj = {i: set() for i in range(len(g.ids))}
        for a, b in pairs:
            adj[a].add(b)
            adj[b].add(a)
        chosen = []
        for i in order:
            if not adj[i] & set(chosen):
                chosen.append(i)
            if len(chosen) == K:
                break
        assert model.landmark_ids == [g.ids[i] for i in chosen]
    elif strategy == "DP":
        assert all(deg[pos[i]] > 0 for i in model.landmark_ids)
        again = est.fit(edges).landmark_ids
        assert again == model.landmark_ids  # seeded


@pytest.mark.parametrize("metric,directed,setup,window,one_task", [
    ("A+A2", False, "RP", 2, 0), ("A+A2", False, "RP", 2, 100_000), ("I+A", True, "IO", 2, 0),
    ("A+A2", True, "IO", 3, 0), ("A+A2", True, "RP", 3, 100_000),
])
def test_log_scaling_matches_dense_oracle(spark, metric, directed, setup, window, one_task):
    """The log scaling, and with it M = A + A^2 + A^3 (rows and, through IO of a directed
    graph, columns of the powers), against the dense oracle."""
    g = random_graph(seed=11 + directed)
    edges = edges_df(spark, g, True)
    model = SepNE(dim=D, landmarks=K, landmarkStrategy="GDS", metric=metric, scaling="log", partition=setup,
                  setSize=SET, lam=LAM, eta=ETA, iters=ITERS, directed=directed, seed=3, window=window,
                  oneTaskNodes=one_task).fit(edges)
    if setup == "IO":
        ids = spark.createDataFrame([(i,) for i in g.ids[::2]], "id string")
        out = collect(model.transform(ids))
    else:
        out = collect(model.transform(edges))
        assert sorted(out) == g.ids
    oracle_compare(g, out, model, metric, directed, True, scaling="log", window=window)
    # The scaling and the window change M (a test that passed without them would prove nothing).
    plain = g.proximity(metric, directed, True)
    assert not np.allclose(g.proximity(metric, directed, True, "log", window), plain)
    if window > 2:
        assert not np.allclose(g.proximity(metric, directed, True, "log", window), g.proximity(metric, directed, True, "log"))


@pytest.mark.parametrize("directed,setup,one_task", [(True, "RP", 0), (False, "IO", 100_000)])
def test_walk_factors_match_dense_oracle(spark, directed, setup, one_task):
    """``landmarkFactors="walks"``: the landmark subspaces of the log-scaled A + A^2
    (from its landmark rows and columns only, distributed or in one task) with
    M = I + A, against the literal dense equations; the per-set solve is unchanged.
    The second case fits in one task and embeds requested ids (IO) from the saved factors."""
    g = random_graph(seed=21 + directed)
    edges = edges_df(spark, g, True)
    spark.catalog.clearCache()  # what earlier tests' models hold: this test counts its own tables
    model = SepNE(dim=D, landmarks=K, metric="I+A", landmarkFactors="walks", partition=setup, setSize=SET,
                  lam=LAM, eta=ETA, iters=ITERS, directed=directed, seed=3, oneTaskNodes=one_task).fit(edges)
    pos = g.index()
    L = [pos[i] for i in model.landmark_ids]
    A = dense.transition_matrix(len(g.ids), g.src, g.dst, g.weight, directed=directed)
    W = dense.weight_matrix(len(g.ids), g.src, g.dst, g.weight, directed=directed)
    M00, S_A, S_B = dense.landmark_summaries(g.proximity("I+A", directed, True), L)
    W00, W_A, W_B = dense.landmark_summaries(dense.log_scaled(dense.proximity_from_transition(A, "A+A2"), W), L)
    want = row_space_factors(M00, S_A, S_B, D, subspaces=(W_A + W00 @ W00.T, W_B + W00.T @ W00))
    f = model.factors
    for got, ref in ((f.Phi, want.Phi), (f.Psi, want.Psi), (f.P, want.P)):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    # Not the subspaces of M's own rows (a test that passed without the walks would prove nothing).
    rows = row_space_factors(M00, S_A, S_B, D)
    assert not np.allclose(np.abs(rows.Phi), np.abs(want.Phi), atol=1e-3)
    if setup == "IO":
        out = collect(model.transform(spark.createDataFrame([(i,) for i in g.ids[::2]], "id string")))
    else:
        out = collect(model.transform(edges))
        assert sorted(out) == g.ids
    oracle_compare(g, out, model, "I+A", directed, True, factors=(want.Phi, want.Psi, want.P))
    model.release()
    assert nothing_cached(spark)  # the walks' tables, persisted for the summaries, are released too


def test_walk_factors_fall_back_to_m00_when_the_landmarks_are_hubs(spark, monkeypatch, caplog):
    """The distributed fit bounds the walks' Gram products first (one job of joins over the
    edges): the bound against NumPy, and M00's own subspaces above the limit."""
    from sepne_spark import pipeline

    g = random_graph(seed=23)
    edges = edges_df(spark, g, True)
    kw = dict(dim=D, landmarks=K, metric="I+A", partition="RP", setSize=SET, lam=LAM, eta=ETA, iters=ITERS,
              directed=True, seed=3, oneTaskNodes=0)
    model = SepNE(landmarkFactors="M00", **kw).fit(edges)
    pos = g.index()
    L = np.array([pos[i] for i in model.landmark_ids])
    # Walks of two steps between each node and a landmark, with multiplicity, each direction.
    B = np.zeros((len(g.ids), len(g.ids)))
    B[g.src, g.dst] = 1.0  # the transition's pattern (parallel edges merged)
    into = B[L].sum(axis=0)  # landmarks -> u
    out_of = B[:, L].sum(axis=1)  # u -> landmarks
    want = int(((into @ B) ** 2).sum() + ((B @ out_of) ** 2).sum())
    A = spark.createDataFrame([(g.ids[a], g.ids[b], 1.0) for a, b in zip(*np.nonzero(B))], "src string, dst string, a double")
    lm = spark.createDataFrame([(i, j) for j, i in enumerate(model.landmark_ids)], "id string, l int")
    assert pipeline.walk_products(A, lm) == want
    # A sample of the nodes below MIN_WALK_SAMPLE: M00's subspaces (a sample of 2.5%).
    monkeypatch.setattr(pipeline, "MAX_DISTRIBUTED_WALK_PRODUCTS", int(want * pipeline.MIN_WALK_SAMPLE * 0.8))
    with caplog.at_level("WARNING", logger="sepne_spark.pipeline"):
        fallback = SepNE(landmarkFactors="walks", **kw).fit(edges)
    assert "landmark subspaces are M00's own" in caplog.text
    np.testing.assert_array_equal(fallback.factors.Phi, model.factors.Phi)
    assert fallback.fit_notes == {"landmark_subspaces": "M00"}  # what the model and the manifest record


def test_walk_factors_over_the_limit_sum_a_sample_of_the_nodes(spark, monkeypatch, caplog):
    """Over the limit of products, S_A and S_B of the walks are sums over a seeded sample
    of the nodes scaled by 1 / p (the landmarks' entries all kept for M00): against the
    dense equations over the same nodes, and not the sums over every node."""
    from sepne_spark import pipeline

    g = random_graph(seed=23)
    edges = edges_df(spark, g, True)
    kw = dict(dim=D, landmarks=K, metric="I+A", partition="RP", setSize=SET, lam=LAM, eta=ETA, iters=ITERS,
              directed=True, seed=3, oneTaskNodes=0, landmarkFactors="walks")
    full = SepNE(**kw).fit(edges)
    pos = g.index()
    L = np.array([pos[i] for i in full.landmark_ids])
    B = np.zeros((len(g.ids), len(g.ids)))
    B[g.src, g.dst] = 1.0
    products = int(((B[L].sum(axis=0) @ B) ** 2).sum() + ((B @ B[:, L].sum(axis=1)) ** 2).sum())
    monkeypatch.setattr(pipeline, "MAX_DISTRIBUTED_WALK_PRODUCTS", products // 3)
    with caplog.at_level("INFO", logger="sepne_spark.pipeline"):
        model = SepNE(**kw).fit(edges)
    assert "summed over a sample of 33.3% of the nodes" in caplog.text
    # The nodes drawn: the hash of (id, seed) in the first p of its range.
    vertices = spark.createDataFrame([(i,) for i in g.ids], "id string")
    lm = spark.createDataFrame([(i, j) for j, i in enumerate(model.landmark_ids)], "id string, l int")
    nodes, p = pipeline.walk_sample(SimpleNamespace(vertices=vertices), lm, products, 3)
    drawn = np.array(sorted(pos[r["id"]] for r in nodes.collect()))
    others = np.setdiff1d(drawn, L)
    assert 0.15 * len(g.ids) < len(others) < 0.5 * len(g.ids)
    assert 0 <= (products // 3) / products - p < 2 ** -20
    assert model.fit_notes == {"landmark_subspaces": "walks", "walk_sample": p}
    assert full.fit_notes == {"landmark_subspaces": "walks"}
    A = dense.transition_matrix(len(g.ids), g.src, g.dst, g.weight, directed=True)
    W = dense.weight_matrix(len(g.ids), g.src, g.dst, g.weight, directed=True)
    walks = dense.log_scaled(dense.proximity_from_transition(A, "A+A2"), W)
    scale = np.zeros(len(g.ids))
    scale[others] = 1 / np.sqrt(p)
    scale[L] = 1.0
    W00, W_A, W_B = dense.landmark_summaries(scale[:, None] * walks * scale[None, :], L)
    M00, S_A, S_B = dense.landmark_summaries(g.proximity("I+A", True, True), L)
    want = row_space_factors(M00, S_A, S_B, D, subspaces=(W_A + W00 @ W00.T, W_B + W00.T @ W00))
    for got, ref in ((model.factors.Phi, want.Phi), (model.factors.Psi, want.Psi), (model.factors.P, want.P)):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    assert not np.allclose(np.abs(model.factors.Phi), np.abs(full.factors.Phi), atol=1e-3)
    model.release()
    full.release()


@pytest.mark.parametrize("string_ids", [True, False])
def test_landmark_grams_equal_numpy_bit_for_bit_on_any_partitioning(spark, string_ids):
    """S_A and S_B are summed per bucket of nodes with SciPy, the buckets in a fixed
    order: equal to X X^T, exactly symmetric, and the same bits however the entries
    are partitioned."""
    from sepne_spark.proximity import _grams

    rng = np.random.default_rng(4)
    k, n = 9, 300
    X = np.where(rng.random((k, n)) < 0.15, rng.random((k, n)), 0.0)
    Y = np.where(rng.random((k, n)) < 0.3, rng.random((k, n)) * 5, 0.0)
    name = (lambda j: f"v{j:04d}") if string_ids else (lambda j: int(j) * 7 + 3)
    schema = f"v {'string' if string_ids else 'long'}, l int, m double"

    def entries(Z, parts):
        rows = [(name(j), int(i), float(Z[i, j])) for i, j in zip(*np.nonzero(Z))]
        return spark.createDataFrame(rows[::-1] if parts > 1 else rows, schema).repartition(parts)

    first = _grams({1: entries(X, 1), 2: entries(Y, 1)}, k)
    for tag, Z in ((1, X), (2, Y)):
        np.testing.assert_allclose(first[tag], Z @ Z.T, rtol=1e-13, atol=0)
        assert np.array_equal(first[tag], first[tag].T)
    again = _grams({1: entries(X, 5), 2: entries(Y, 3)}, k)
    assert np.array_equal(again[1], first[1]) and np.array_equal(again[2], first[2])


@pytest.mark.parametrize("metric,directed,scaling,one_task", [
    ("I+A", False, "none", 0), ("A+A2", False, "log", 100_000), ("A+A2", True, "none", 0),
    ("I+A", True, "log", 100_000),
])
def test_kept_self_loops_match_the_dense_oracle(spark, metric, directed, scaling, one_task):
    """selfLoops="keep": a loop (u, u) is one entry of W, of its own weight, on both
    paths, directed or not; the oracle holds it so."""
    g = random_graph(seed=9, self_loops="keep")
    loops = int(np.sum(g.src == g.dst))
    assert loops >= 3
    edges = edges_df(spark, g, True)
    model = SepNE(dim=D, landmarks=K, metric=metric, scaling=scaling, partition="RP", setSize=SET, lam=LAM, eta=ETA,
                  iters=ITERS, directed=directed, seed=3, selfLoops="keep", oneTaskNodes=one_task).fit(edges)
    out = collect(model.transform(edges))
    assert sorted(out) == g.ids and model.plan.get("one_task", False) == bool(one_task)
    oracle_compare(g, out, model, metric, directed, True, scaling=scaling)
    # The loops change M: an oracle without them is another matrix.
    keep = g.src != g.dst
    dropped = dataclasses.replace(g, src=g.src[keep], dst=g.dst[keep], weight=g.weight[keep])
    assert not np.allclose(dropped.proximity(metric, directed, True, scaling), g.proximity(metric, directed, True,
                                                                                             scaling))


@pytest.mark.parametrize("one_task", [100_000, 0])
def test_integer_ids_past_a_doubles_precision_match_the_dense_oracle(spark, one_task):
    """64-bit ids a few apart near 2^62, which one double cannot tell apart, on both
    paths: every node embedded under its own id, as the oracle embeds it."""
    g = random_graph(seed=5, string_ids=False, id_base=WIDE_IDS)
    assert len({float(i) for i in g.ids}) < len(g.ids)
    edges = spark.createDataFrame(g.rows, "src long, dst long, weight double")
    model = SepNE(dim=D, landmarks=K, metric="A+A2", partition="LP", setSize=SET, lam=LAM, eta=ETA, iters=ITERS,
                  seed=3, oneTaskNodes=one_task).fit(edges)
    out = collect(model.transform(edges))
    assert sorted(out) == g.ids and model.plan.get("one_task", False) == bool(one_task)
    oracle_compare(g, out, model, "A+A2", False, True)
    order, _, _ = dense_dd(g, False, K)
    assert model.landmark_ids == [g.ids[i] for i in order[:K]]


def test_window_needs_a_plus_a2(spark):
    edges = spark.createDataFrame([("a", "b", 1.0)], "src string, dst string, weight double")
    with pytest.raises(ValueError, match="window=3 applies to metric A\\+A2 only"):
        SepNE(metric="I+A", window=3).fit(edges)


def test_separability_io_equals_full_and_partition_count(spark):
    g = random_graph(n=70, m=260, seed=11)
    edges = edges_df(spark, g, True)
    model = SepNE(dim=D, landmarks=K, metric="A+A2", setSize=20, iters=ITERS, lam=LAM, eta=ETA).fit(edges)
    full = model.transform(edges).cache()
    # One whole set of the full run, embedded alone through IO: same vectors.
    one_set = full.where("not is_landmark").groupBy("set_id").count().orderBy("set_id").first()["set_id"]
    members = full.where(F.col("set_id") == one_set).select("id")
    io = SepNE(dim=D, landmarks=K, metric="A+A2", setSize=100, iters=ITERS, lam=LAM, eta=ETA).fit(edges)
    assert io.landmark_ids == model.landmark_ids
    # Requested ids: one query before an action, the check that they are nodes (whose
    # error or warning comes at the call); its broadcast join may take a job of its own.
    sc = spark.sparkContext
    sc.setJobGroup("sepne-lazy-io", "transform of requested ids")
    try:
        lazy = io.transform(members)
        assert len(sc.statusTracker().getJobIdsForGroup("sepne-lazy-io")) <= 2
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    got = collect(lazy)
    ref = collect(full.where(F.col("set_id") == one_set))
    assert sorted(got) == sorted(ref)
    for node in ref:
        np.testing.assert_allclose(got[node].embedding, ref[node].embedding, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got[node].context, ref[node].context, rtol=1e-9, atol=1e-12)
    # Any number of partitions / any order of the sets: the same result.
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        spark.conf.set("spark.sql.shuffle.partitions", "2")
        two = collect(model.transform(edges.orderBy(F.desc("src"))))
        spark.conf.set("spark.sql.shuffle.partitions", "7")
        seven = collect(model.transform(edges.repartition(5)))
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    base = collect(full)
    for node, r in base.items():
        assert two[node].set_id == r.set_id == seven[node].set_id
        np.testing.assert_allclose(two[node].embedding, r.embedding, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(seven[node].embedding, r.embedding, rtol=1e-9, atol=1e-12)
    assignment = full.select("id", "set_id")
    assert_df_equality(
        assignment, model.transform(edges).select("id", "set_id"), ignore_row_order=True
    )


def test_requested_ids_above_the_broadcast_bound_are_joined_not_broadcast(spark, monkeypatch):
    """M = I + A with more requested ids than ``BROADCAST_IDS_MAX`` (here 9): the
    neighbourhood path is off and no table of more rows than the bound is broadcast
    (the ids' in-neighbour filter was, whatever their number)."""
    from sepne_spark import pipeline

    g = random_graph(n=60, m=220, seed=3)
    edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
    model = SepNE(dim=4, landmarks=8, metric="I+A", setSize=20, iters=3).fit(edges)
    ids = spark.createDataFrame([(r,) for r in sorted({row[0] for row in g.rows})[:10]], "id string")
    broadcast, rows = pipeline.F.broadcast, []
    monkeypatch.setattr(pipeline, "BROADCAST_IDS_MAX", 9)
    monkeypatch.setattr(pipeline.F, "broadcast", lambda df: rows.append(df.count()) or broadcast(df))
    out = model.embed(ids, edges)
    assert model.plan["requested"] == 10 and rows and max(rows) <= 9
    assert out.count() == 10


@pytest.mark.parametrize("directed", [pytest.param(True, marks=pytest.mark.deploy), False])  # 28 s each
def test_model_save_load_and_growing_graph(spark, tmp_path, directed):
    g = random_graph(n=50, m=180, seed=5, string_ids=False)
    edges = spark.createDataFrame(g.rows, "src long, dst long, weight double")
    model = SepNE(dim=D, landmarks=K, metric="I+A", setSize=15, iters=ITERS, lam=LAM, eta=ETA, directed=directed).fit(edges)
    path = str(tmp_path / "model")
    model.save(path)
    loaded = SepNEModel.load(path)
    assert loaded.landmark_ids == model.landmark_ids
    assert loaded.getOrDefault("metric") == "I+A" and loaded.getOrDefault("directed") is directed
    for a, b in [(loaded.factors.Phi, model.factors.Phi), (loaded.S_A, model.S_A), (loaded.S_B, model.S_B)]:
        np.testing.assert_array_equal(a, b)
    with pytest.raises(FileExistsError):
        model.save(path)
    # The graph grows: new nodes 9001.. with edges to old ones, plus a new edge between old nodes.
    extra = [(9001, g.rows[0][0], 1.0), (g.rows[3][1], 9001, 2.0), (9002, 9001, 1.0), (g.rows[5][0], g.rows[7][1], 1.5)]
    grown = spark.createDataFrame(g.rows + extra, "src long, dst long, weight double")
    new_ids = spark.createDataFrame([(9001,), (9002,), (g.rows[5][0],)], "id long")
    # Read locally: only the requested nodes' neighbourhood of the input is merged.
    assert loaded.embeds_locally(grown, new_ids)
    got = collect(loaded.embed(new_ids, grown))
    assert loaded.plan["rows_read"] < 52 and loaded.plan["rows_from"] == "input edges"
    # A Graph without its input edges takes the other path (rows filtered from the
    # merged edge list): the same vectors.
    merged = prepare_graph(grown, directed)
    bare = Graph(edges=merged.edges, vertices=merged.vertices, directed=directed)
    assert not loaded.embeds_locally(bare)
    other = collect(loaded.embed(new_ids, bare))
    assert loaded.plan["rows_from"] == "merged edges" and sorted(other) == sorted(got)
    # Expected: the solve on the grown graph's blocks with the model's own summaries.
    ids = sorted(set(g.ids) | {9001, 9002})
    pos = {v: i for i, v in enumerate(ids)}
    s = np.array([pos[a] for a, b, _ in g.rows + extra if a != b])
    t = np.array([pos[b] for a, b, _ in g.rows + extra if a != b])
    w = np.array([c for a, b, c in g.rows + extra if a != b])
    M = dense.proximity_from_transition(dense.transition_matrix(len(ids), s, t, w, directed=directed), "I+A")
    L = [pos[i] for i in model.landmark_ids]
    nl = [i for i in range(len(ids)) if i not in set(L)]
    Vi = sorted(pos[i] for i in got)
    Rhat_A = np.array([[sum(M[u, v] * M[l, v] for v in nl) for u in Vi] for l in L])
    Rhat_B = np.array([[sum(M[v, u] * M[v, l] for v in nl) for u in Vi] for l in L])
    W, C = solve_set(loaded.factors, loaded.S_A, loaded.S_B, M[np.ix_(Vi, Vi)], M[np.ix_(Vi, L)],
                     M[np.ix_(L, Vi)], Rhat_A, Rhat_B, LAM, ETA, ITERS)
    for j, i in enumerate(Vi):
        for res in (got, other):
            np.testing.assert_allclose(res[ids[i]].embedding, W[:, j], rtol=0, atol=1e-9 * np.abs(W).max())
            np.testing.assert_allclose(res[ids[i]].context, C[:, j], rtol=0, atol=1e-9 * np.abs(C).max())


def test_a_graph_without_some_landmarks_gets_one_row_per_node(spark):
    """A model embeds a graph that lost a landmark (transform's distributed path, and the
    one-task path's check): one row per node of that graph, none for the lost landmark."""
    rows = [(i, (i + 1) % 30) for i in range(30)] + [(i, (i + 7) % 30) for i in range(30)]
    edges = spark.createDataFrame(rows, "src long, dst long")
    model = SepNE(dim=4, landmarks=6, iters=3).fit(edges)
    lost = model.landmark_ids[0]
    pruned = edges.where((F.col("src") != lost) & (F.col("dst") != lost))
    for out in (model.transform(pruned), model.embed(None, pruned)):
        ids = [r["id"] for r in out.select("id").collect()]
        assert sorted(ids) == sorted(set(range(30)) - {lost})
        assert out.where("is_landmark").count() == 5


def test_loaded_model_transform_with_whole_graph_steps_takes_the_one_task_path(spark, tmp_path):
    """With the steps after the solve and the anchor (as the default profiles have), the
    distributed path runs jobs at transform's call anyway: transform of a small graph
    with a loaded model counts it and takes the one-task path, as embed does, with the
    same vectors as embed's."""
    g = random_graph(n=50, m=180, seed=7, string_ids=False)
    edges = spark.createDataFrame(g.rows, "src long, dst long, weight double")
    model = SepNE(dim=D, landmarks=K, metric="A+A2", setSize=15, iters=ITERS, lam=LAM, eta=ETA, directed=False,
                  propagation=3, averageSteps=2, unreached="anchor").fit(edges)
    path = str(tmp_path / "model")
    model.save(path)
    loaded = SepNEModel.load(path)
    transformed = collect(loaded.transform(edges))
    assert loaded.plan.get("one_task") is True
    embedded = collect(loaded.embed(None, edges))
    assert loaded.plan.get("one_task") is True and sorted(transformed) == sorted(embedded)
    for node, r in embedded.items():
        np.testing.assert_allclose(transformed[node].embedding, r.embedding, rtol=1e-9, atol=1e-12)


@pytest.mark.deploy  # 50 s: a loaded model on both paths
def test_loaded_model_embeds_a_small_graph_of_known_size_in_one_task(spark, tmp_path):
    """A loaded model told the graph's size (as the embed job does), or given an input of
    at most oneTaskNodes / 2 edge rows, embeds a small graph in one task, with the
    vectors of the distributed path; a larger input, or one that lacks a landmark,
    takes the distributed path."""
    g = random_graph(n=50, m=180, seed=7, string_ids=False)
    edges = spark.createDataFrame(g.rows, "src long, dst long, weight double")
    model = SepNE(dim=D, landmarks=K, metric="A+A2", setSize=15, iters=ITERS, lam=LAM, eta=ETA,
                  directed=False).fit(edges)
    path = str(tmp_path / "model")
    model.save(path)
    loaded = SepNEModel.load(path)
    n = len(set(g.ids))
    wanted = spark.createDataFrame([(i,) for i in sorted(set(g.ids))[::4]], "id long")
    default = loaded.getOneTaskNodes()
    for ids in (None, wanted):
        # transform decides without a Spark job, so it takes the distributed path, as
        # embed does with oneTaskNodes = 0.
        distributed = collect(loaded.transform(edges) if ids is None else loaded.setOneTaskNodes(0).embed(ids, edges))
        assert "one_task" not in loaded.plan
        one = collect(loaded.setOneTaskNodes(default).embed(ids, edges, nodes=n))
        assert loaded.plan.get("one_task") is True
        assert sorted(one) == sorted(distributed)
        for node, r in distributed.items():
            assert one[node].set_id == r.set_id
            np.testing.assert_allclose(one[node].embedding, r.embedding, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(one[node].context, r.context, rtol=1e-9, atol=1e-12)
        # Without nodes=: the edge DataFrame has at most oneTaskNodes / 2 rows, so the
        # nodes are counted and the one task embeds them.
        counted = collect(loaded.embed(ids, edges))
        assert loaded.plan.get("one_task") is True and sorted(counted) == sorted(one)
        for node, r in one.items():
            np.testing.assert_allclose(counted[node].embedding, r.embedding, rtol=1e-9, atol=1e-12)
    # One row more than oneTaskNodes / 2 (the bound of an input's nodes, not their
    # number): the distributed path, unless the nodes are given. embed records the path
    # it takes when it is called (the vectors of both paths are compared above).
    loaded.setOneTaskNodes(2 * (len(g.rows) - 1))
    loaded.embed(None, edges)
    assert "one_task" not in loaded.plan
    loaded.embed(None, edges, nodes=n)
    assert loaded.plan.get("one_task") is True
    loaded.setOneTaskNodes(default)
    # A graph read by load_graph from few lines: its nodes are counted, no nodes= needed.
    from sepne_spark.graph import load_graph

    edges.write.parquet(str(tmp_path / "edges.parquet"))
    read = load_graph(spark, str(tmp_path / "edges.parquet"), directed=False)
    assert read.input_rows == len(g.rows)
    counted = collect(loaded.embed(wanted, read))
    assert loaded.plan.get("one_task") is True and sorted(counted) == sorted(one)
    for node, r in one.items():
        np.testing.assert_allclose(counted[node].embedding, r.embedding, rtol=1e-9, atol=1e-12)
    # Without one of the landmarks the graph cannot be embedded in one task.
    gone = model.landmark_ids[0]
    rest = edges.where((edges.src != gone) & (edges.dst != gone))
    loaded.embed(None, rest, nodes=n - 1)
    assert "one_task" not in loaded.plan


def _witnessed_ids(g, landmarks, want: int) -> tuple[list, dict]:
    """Up to ``want`` non-landmark ids u of the directed ``g``, each with a witness: an
    in-neighbour v (v -> u) that is no out-neighbour of u nor of any other id chosen, no
    landmark, not chosen itself, and has an edge to a landmark (so that v's row enters
    u's two-hop sum Rhat_B = sum_v M[v, u] M[v, l] and M's column of u)."""
    out_nbrs: dict = {}
    in_nbrs: dict = {}
    for a, b in zip(g.src, g.dst):
        out_nbrs.setdefault(a, set()).add(b)
        in_nbrs.setdefault(b, set()).add(a)
    pos = g.index()
    L = {pos[i] for i in landmarks}
    chosen: list = []
    witness: dict = {}
    for u in range(len(g.ids)):
        if u in L or u in witness.values():
            continue
        reach_out = set().union(*(out_nbrs.get(c, set()) for c in chosen + [u]))
        for v in sorted(in_nbrs.get(u, set())):
            if v in L or v in chosen or v == u or v in reach_out or not (out_nbrs.get(v, set()) & L):
                continue
            if any(w in out_nbrs.get(u, set()) for w in witness.values()):
                continue  # u would read an earlier witness' row as its out-neighbour
            chosen.append(u)
            witness[u] = v
            break
        if len(chosen) == want:
            break
    return [g.ids[u] for u in chosen], {g.ids[u]: g.ids[v] for u, v in witness.items()}


def test_requested_ids_of_a_directed_graph_read_their_in_neighbours_rows(spark):
    """Directed M = I + A, requested ids of a graph the model was not fitted on (the
    neighbourhood path, rows from the input edges; and a Graph without them, rows
    filtered from the merged edges). A requested node u's column of M holds
    A[v, u] = w(v, u) / s(v) of its in-neighbours v, so their complete rows must be read
    (``_needed_rows``). The ids are chosen with an in-neighbour that is no
    out-neighbour, no landmark and not requested, with an edge to a landmark: reading
    the out-neighbours' rows instead would leave its terms out. The vectors equal the
    dense oracle's, and the two paths' each other's to 1e-9. (Only the deploy tier's
    growing-graph test took this path on a directed graph.)"""
    g = random_graph(seed=4)
    edges = edges_df(spark, g, True)
    model = SepNE(dim=D, landmarks=K, metric="I+A", partition="RP", setSize=SET, lam=LAM, eta=ETA, iters=ITERS,
                  directed=True, seed=3).fit(edges)
    wanted, witness = _witnessed_ids(g, model.landmark_ids, 4)
    assert len(wanted) == 4, witness
    ids = spark.createDataFrame([(i,) for i in wanted], "id string")
    # A DataFrame of the same rows: a graph this model did not fit, read locally.
    again = edges_df(spark, g, True)
    assert model.embeds_locally(again, ids)
    local = collect(model.embed(ids, again))
    assert model.plan["rows_from"] == "input edges" and "one_task" not in model.plan
    assert sorted(local) == sorted(wanted)
    # The model's own factors: M00 = I + A00 of these landmarks has the singular value 1
    # twice (two landmarks without an edge to the others), where the SVD's directions
    # are arbitrary and the oracle's own need not be the model's.
    factors = (model.factors.Phi, model.factors.Psi, model.factors.P)
    oracle_compare(g, local, model, "I+A", True, True, factors=factors)
    merged = prepare_graph(again, True)
    bare = Graph(edges=merged.edges, vertices=merged.vertices, directed=True)
    filtered = collect(model.embed(ids, bare))
    assert model.plan["rows_from"] == "merged edges" and sorted(filtered) == sorted(wanted)
    oracle_compare(g, filtered, model, "I+A", True, True, factors=factors)
    scale = max(np.abs(r.embedding).max() for r in local.values())
    for node, r in local.items():
        np.testing.assert_allclose(filtered[node].embedding, r.embedding, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(filtered[node].context, r.context, rtol=0, atol=1e-9 * scale)
    model.release()


@pytest.mark.parametrize("metric,directed,one_task", [("A+A2", True, 0), ("I+A", False, 100_000)])
def test_row_space_factors_match_dense_oracle(spark, metric, directed, one_task):
    """``landmarkFactors="rows"`` (auto's choice for mid-size graphs), distributed with
    RP sets and in one task: the factors are those of the landmark rows' and columns'
    Gram matrices, ``row_space_factors`` of the literal dense summaries (M00, S_A, S_B),
    not M00's own SVD; the vectors are the dense oracle's with those factors."""
    g = random_graph(seed=31 + directed)
    edges = edges_df(spark, g, True)
    model = SepNE(dim=D, landmarks=K, metric=metric, landmarkFactors="rows", partition="RP", setSize=SET, lam=LAM,
                  eta=ETA, iters=ITERS, directed=directed, seed=3, oneTaskNodes=one_task).fit(edges)
    assert model.fit_notes == {"landmark_subspaces": "rows"}
    pos = g.index()
    L = [pos[i] for i in model.landmark_ids]
    M = g.proximity(metric, directed, True)
    want = row_space_factors(*dense.landmark_summaries(M, L), D)
    f = model.factors
    for got, ref in ((f.Phi, want.Phi), (f.Psi, want.Psi), (f.P, want.P)):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    # Not M00's own subspaces (a test that passed with them would prove nothing).
    own, _, _ = dense.landmark_factors(M[np.ix_(L, L)], D)
    assert not np.allclose(np.abs(own), np.abs(want.Phi), atol=1e-3)
    out = collect(model.transform(edges))
    assert sorted(out) == g.ids and model.plan.get("one_task", False) == bool(one_task)
    oracle_compare(g, out, model, metric, directed, True, factors=(want.Phi, want.Psi, want.P))
    model.release()


@pytest.mark.parametrize("directed", [False, True])
def test_uniform_and_degree_proportional_landmarks_follow_their_keys(spark, directed):
    """``UF`` and ``DP`` against their definitions, with u = hash_uniform(id, seed)
    computed by a Spark select: UF takes the k largest u (ties by id), DP the k largest
    Efraimidis-Spirakis keys log(u) / degree (the degree counted here from the edge
    list: distinct edges, both directions for an undirected graph). The estimator's
    landmarks are select_landmarks', and another seed draws other UF landmarks."""
    from sepne_spark.landmarks import hash_uniform, select_landmarks

    g = random_graph(seed=13)
    edges = edges_df(spark, g, True)
    graph = prepare_graph(edges, directed)
    _, deg, _ = dense_dd(g, directed, K)
    pos = g.index()

    def u_of(seed):
        rows = graph.vertices.select("id", hash_uniform(F.col("id"), seed).alias("u")).collect()
        return {r["id"]: r["u"] for r in rows}

    def dp_key(u, i):
        d = deg[pos[i]]
        return np.log(u[i]) / d if d > 0 else -np.inf

    chosen = {}
    for seed in (3, 4):
        u = u_of(seed)
        assert sorted(u) == g.ids and all(0 < x < 1 for x in u.values())
        uf = sorted(g.ids, key=lambda i: (-u[i], i))[:K]
        dp = sorted(g.ids, key=lambda i: (-dp_key(u, i), i))[:K]
        assert uf != dp  # the degrees weigh in
        assert select_landmarks(spark, graph.vertices, graph.edges, K, "UF", seed) == uf
        assert select_landmarks(spark, graph.vertices, graph.edges, K, "DP", seed) == dp
        chosen[seed] = uf
    assert chosen[3] != chosen[4]
    model = SepNE(dim=D, landmarks=K, landmarkStrategy="UF", metric="I+A", directed=directed, seed=4,
                  iters=ITERS).fit(edges)
    assert model.landmark_ids == chosen[4]
    model.release()


def test_float32_rounds_on_both_paths_are_close_to_float64_and_not_equal(spark):
    """``dtype="float32"`` runs the per-set rounds in float32, in one task and on the
    distributed path: the vectors are within 1e-5 of float64's (relative to the largest
    entry; about 1e-7 here), and not equal to them bit for bit (a setting that did
    nothing would be)."""
    g = random_graph(seed=6)
    edges = edges_df(spark, g, True)
    for one_task in (100_000, 0):
        model = SepNE(dim=D, landmarks=K, metric="A+A2", partition="RP", setSize=SET, lam=LAM, eta=ETA, iters=ITERS,
                      seed=3, oneTaskNodes=one_task).fit(edges)
        wide = collect(model.transform(edges))
        narrow = collect(model.setDtype("float32").transform(edges))
        assert model.plan.get("one_task", False) == bool(one_task) and sorted(narrow) == sorted(wide) == g.ids
        got = np.array([narrow[i].embedding for i in g.ids] + [narrow[i].context for i in g.ids])
        want = np.array([wide[i].embedding for i in g.ids] + [wide[i].context for i in g.ids])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())
        assert not np.array_equal(got, want)
        model.release()


def test_lp_max_iter_bounds_the_label_propagation_of_the_sets(spark):
    """``lpMaxIter``: the LP sets are pack_communities of label_propagation with that
    many rounds (over the non-landmark nodes), for two numbers of rounds that give
    different labels."""
    from sepne_spark.partition import label_propagation, pack_communities

    g = random_graph(seed=7)
    edges = edges_df(spark, g, True)
    model = SepNE(dim=D, landmarks=K, metric="I+A", partition="LP", setSize=SET, lam=LAM, eta=ETA, iters=2,
                  seed=3).fit(edges)
    graph = prepare_graph(edges, False)
    non_lm = graph.vertices.where(~F.col("id").isin(model.landmark_ids))
    labels, sets = {}, {}
    for rounds in (1, 2):
        found = label_propagation(spark, graph.vertices, graph.edges, rounds)
        labels[rounds] = {r["id"]: r["label"] for r in found.collect()}
        want = pack_communities(found.join(non_lm, "id", "left_semi"), SET, 3)
        sets[rounds] = {r["id"]: r["set_id"] for r in want.collect()}
        out = model.setLpMaxIter(rounds).transform(edges)
        got = {r["id"]: r["set_id"] for r in out.where("not is_landmark").collect()}
        assert got == sets[rounds]
    assert labels[1] != labels[2] and sets[1] != sets[2]
    model.release()
