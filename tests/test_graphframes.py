"""GraphFrames for real: degrees, label propagation and random-walk embeddings.

With the GraphFrames JARs on the session (``jars/``), degrees and label propagation go
through GraphFrames; the DataFrame implementations used without them are called
explicitly (``use_graphframes=False``) and must give the same degrees and the same
labels, which a plain-Python oracle of GraphX's label propagation also gives. A
session started without the JARs (in its own process) falls back by itself and says
what is missing when GraphFrames is demanded. Every test here needs the JARs: it is
skipped without them, and fails under CI (``tests/gf_support.py``).
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from chispa import assert_df_equality

from sepne_spark.baselines import random_walk_embeddings
from sepne_spark.generators import sbm_graph
from sepne_spark.landmarks import degrees, select_landmarks
from sepne_spark.partition import _keyed, label_propagation, lp_partition
from sepne_spark.session import graphframes_available, resolve_graphframes
from tests import gf_support
from tests.helpers import random_graph

ROOT = Path(__file__).resolve().parent.parent
MAX_ITER = 5
#: The session comes through the ``gf`` fixture (after the JAR check), which the tier
#: rule of conftest.py cannot see: every test here is of the Spark tier.
pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def gf(request):
    """The test session, which must have GraphFrames (skip / CI failure without the JARs,
    decided before a session is started)."""
    gf_support.core_jars()
    spark = request.getfixturevalue("spark")
    gf_support.require(spark)
    return spark


def _graph(spark, string_ids: bool, seed: int = 3):
    """A random graph with communities, repeated edges and self-loops, plus two isolated
    vertices (in ``vertices`` only)."""
    g = random_graph(n=70, m=260, seed=seed, string_ids=string_ids)
    kind = "string" if string_ids else "long"
    lonely = ["zz-isolated-1", "zz-isolated-2"] if string_ids else [10_001, 10_011]
    ids = sorted({r[0] for r in g.rows} | {r[1] for r in g.rows} | set(lonely))
    vertices = spark.createDataFrame([(i,) for i in ids], f"id {kind}")
    edges = spark.createDataFrame([r[:2] for r in g.rows], f"src {kind}, dst {kind}")
    return g, ids, vertices, edges


def lp_oracle(keys: dict, rows: list, max_iter: int) -> dict:
    """GraphX's static label propagation in plain Python, on the vertices' long keys.

    Each edge sends each end's label to the other end; a vertex takes the most frequent
    label received, the smallest on ties; one that receives none keeps its own.
    """
    label = {v: k for v, k in keys.items()}
    for _ in range(max_iter):
        received: dict = {}
        for s, d in rows:
            received.setdefault(d, Counter())[label[s]] += 1
            received.setdefault(s, Counter())[label[d]] += 1
        new = {}
        for v in label:
            if v in received:
                top = max(received[v].values())
                new[v] = min(lab for lab, c in received[v].items() if c == top)
            else:
                new[v] = label[v]
        label = new
    return label


def test_graphframes_is_used_when_its_jars_are_on_the_session(gf, caplog):
    assert graphframes_available(gf)
    assert resolve_graphframes(gf, None, "x") and resolve_graphframes(gf, True, "x")
    assert not resolve_graphframes(gf, False, "x")
    _, _, vertices, edges = _graph(gf, string_ids=False)
    with caplog.at_level(logging.DEBUG, logger="sepne_spark"):
        label_propagation(gf, vertices, edges, 2).count()
        degrees(gf, vertices, edges).count()
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("label propagation: GraphFrames") for m in messages), messages
    assert "degrees: GraphFrames" in messages, messages
    assert not any("DataFrame" in m for m in messages), messages


def test_degrees_graphframes_equal_dataframes(gf):
    g, ids, vertices, edges = _graph(gf, string_ids=True)
    via_gf = degrees(gf, vertices, edges, use_graphframes=True)
    via_df = degrees(gf, vertices, edges, use_graphframes=False)
    assert_df_equality(via_gf, via_df, ignore_row_order=True, ignore_nullable=True)
    expected = Counter([r[0] for r in g.rows] + [r[1] for r in g.rows])
    assert {r["id"]: r["degree"] for r in via_gf.collect()} == {i: expected.get(i, 0) for i in ids}
    # Landmark selection on top of either gives the same landmarks.
    for strategy in ("DD", "DP", "GDS"):
        assert select_landmarks(gf, vertices, edges, 6, strategy, 1, use_graphframes=True) == select_landmarks(
            gf, vertices, edges, 6, strategy, 1, use_graphframes=False
        )


@pytest.mark.parametrize("string_ids", [False, True], ids=["long-ids", "string-ids"])
def test_label_propagation_graphframes_equals_dataframes_and_oracle(gf, string_ids):
    g, ids, vertices, edges = _graph(gf, string_ids=string_ids)
    via_gf = label_propagation(gf, vertices, edges, MAX_ITER, use_graphframes=True)
    via_df = label_propagation(gf, vertices, edges, MAX_ITER, use_graphframes=False)
    assert_df_equality(via_gf, via_df, ignore_row_order=True, ignore_nullable=True)

    keys = {r["id"]: r["key"] for r in _keyed(vertices, edges)[0].collect()}
    if not string_ids:
        assert keys == {i: i for i in ids}  # integral ids are their own keys
    assert len(set(keys.values())) == len(ids)
    expected = lp_oracle(keys, [r[:2] for r in g.rows], MAX_ITER)
    got = {r["id"]: r["label"] for r in via_gf.collect()}
    assert got == expected
    # Not a trivial result: several communities, and the isolated vertices alone.
    assert 1 < len(set(got.values())) < len(ids) / 3
    lonely = ids[-2:] if string_ids else [10_001, 10_011]
    assert all(got[v] == keys[v] for v in lonely)


def _check_sets(assign, nodes: set, set_size: int) -> list[int]:
    """Every node to embed exactly once, and the sizes pack_communities promises: at most
    ``set_size``; below ``set_size / 2`` only where packing the small communities ends
    (at most one set)."""
    rows = assign.collect()
    got = [r["id"] for r in rows]
    assert len(got) == len(set(got)) == len(nodes) and set(got) == nodes
    sizes = Counter(r["set_id"] for r in rows)
    assert max(sizes.values()) <= set_size
    assert sum(1 for s in sizes.values() if s < set_size // 2) <= 1, sorted(sizes.values())
    return sorted(sizes.values())


@pytest.mark.parametrize("set_size", [7, 16])
def test_lp_partition_both_paths_give_valid_sets(gf, set_size):
    g, ids, vertices, edges = _graph(gf, string_ids=True, seed=11)
    landmarks = set(ids[::9])
    nodes_df = gf.createDataFrame([(i,) for i in ids if i not in landmarks], "id string")
    nodes = {i for i in ids if i not in landmarks}
    results = {}
    for use in (True, False):
        assign = lp_partition(gf, vertices, edges, nodes_df, set_size, MAX_ITER, seed=2, use_graphframes=use)
        results[use] = _check_sets(assign, nodes, set_size)
        results[use, "rows"] = sorted((r["id"], r["set_id"]) for r in assign.collect())
    assert results[True] == results[False]
    assert results[True, "rows"] == results[False, "rows"]
    assert len(results[True]) >= len(nodes) // set_size  # split, not one set


@pytest.mark.parametrize("mode", ["word2vec", "hash2vec"])
def test_random_walk_embeddings_separate_planted_communities(gf, tmp_path, mode):
    edges, labels = sbm_graph(gf, nodes=60, communities=2, avg_degree=8, mixing=0.05, seed=5)
    out = random_walk_embeddings(
        gf, edges, dim=16, mode=mode, seed=3, num_batches=2, walks_per_batch=10,
        temporary_prefix=str(tmp_path / "walks"),
    )
    rows = {r["id"]: np.asarray(r["embedding"]) for r in out.collect()}
    truth = {r["node"]: r["label"] for r in labels.collect()}
    walked = {r["src"] for r in edges.collect()} | {r["dst"] for r in edges.collect()}
    assert set(rows) == walked
    assert {len(v) for v in rows.values()} == {17 if mode == "hash2vec" else 16}
    ids = sorted(rows)
    X = np.array([rows[i] for i in ids])
    assert np.isfinite(X).all()
    # Leave-one-out nearest neighbour by cosine finds the planted community, and vectors
    # of one community are closer than those of two. GraphFrames' walks are not
    # reproducible under a fixed seed (seed 3 twice gave two results), and Hash2Vec is
    # the weaker mode: over 7 runs of this graph (seeds 3, 3, 1, 2, 4, 5, 6) its accuracy
    # ranged 0.70 to 0.90 and its gap 0.07 to 0.14; over 5 runs Word2Vec's accuracy
    # ranged 0.98 to 1.00 and its gap 1.17 to 1.34 (chance: 0.5, and a gap of 0).
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    cos = X @ X.T
    np.fill_diagonal(cos, -np.inf)
    y = np.array([truth[i] for i in ids])
    accuracy = float(np.mean(y[cos.argmax(axis=1)] == y))
    same = y[:, None] == y[None, :]
    np.fill_diagonal(same, False)
    different = y[:, None] != y[None, :]
    gap = float(cos[same].mean() - cos[different].mean())
    assert accuracy >= (0.9 if mode == "word2vec" else 0.6), accuracy
    assert gap >= (0.3 if mode == "word2vec" else 0.03), gap
    assert not list(tmp_path.glob("walks*/**/*.parquet")), "the walks were not cleaned up"


@pytest.mark.deploy  # 40 s: a session of its own, without the JARs, in a subprocess
def test_session_without_graphframes_falls_back_with_same_results(gf, tmp_path):
    g, ids, vertices, edges = _graph(gf, string_ids=True)
    empty = tmp_path / "no-jars"
    empty.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), SEPNE_SPARK_JARS=str(empty))
    env.pop("PYSPARK_GATEWAY_PORT", None)
    spec = {"rows": [r[:2] for r in g.rows], "ids": ids, "max_iter": MAX_ITER}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "faults" / "no_graphframes.py"), json.dumps(spec)],
        capture_output=True, text=True, timeout=600, env=env,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    result = json.loads(lines[0][len("RESULT "):])
    assert result["available"] is False
    for what, message in result["errors"].items():
        assert message and "GraphFrames" in message and "graphframes-graphx" in message, (what, message)
    # The fallbacks of a session without GraphFrames equal GraphFrames in this one.
    assert result["degrees"] == {r["id"]: r["degree"] for r in degrees(gf, vertices, edges).collect()}
    assert result["labels"] == {
        r["id"]: r["label"] for r in label_propagation(gf, vertices, edges, MAX_ITER, use_graphframes=True).collect()
    }

