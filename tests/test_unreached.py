"""Nodes no landmark reaches (``unreached="anchor"``): the NumPy form against its
definition written out densely, the Spark form (GraphFrames' components and the
DataFrame ones) against the NumPy form, and the estimator's one-task and distributed
paths against the NumPy form applied to the same solve left at zero."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse as sp

from sepne_spark import dense
from sepne_spark.graph import prepare_graph
from sepne_spark.model import SepNE
from sepne_spark.unreached import anchor_basis, anchor_frame, anchor_unreached, component_offset, offset_dims
from tests import gf_support
from tests.helpers import WIDE_IDS, outermost_join, physical_plan, random_graph, runs_the_solve

#: Small components that hold no landmark, added to a random graph: a pair, a triangle,
#: a chain of four (ids sort after the random graph's ``v...``).
ISLANDS = [("x1", "x2"), ("y2", "y1"), ("y2", "y3"), ("y3", "y1"), ("z4", "z3"), ("z3", "z2"), ("z2", "z1")]


def _dense_anchor(W: np.ndarray, X: np.ndarray, ids: list, length: float, seed: int) -> np.ndarray:
    """The definition, written out: the eigenvectors of the reached rows' normalised
    Gram matrix by ascending eigenvalue, each with its largest entry positive; the first
    times ``length``, plus for each component (a breadth-first walk over the dense
    matrix) of the zero rows of nodes with an edge the unit vector of the next
    max(1, d // 4) eigenvectors times the Gaussian numbers of its smallest id."""
    n, d = X.shape
    S = (W != 0) | (W.T != 0)
    zero = np.all(X == 0, axis=1)
    reached = X[~zero] / np.linalg.norm(X[~zero], axis=1, keepdims=True)
    vals, vecs = np.linalg.eigh(reached.T @ reached)
    vecs = vecs[:, np.argsort(vals)]
    for j in range(d):
        if vecs[np.argmax(np.abs(vecs[:, j])), j] < 0:
            vecs[:, j] *= -1
    u, basis = vecs[:, 0], vecs[:, 1:1 + max(1, d // 4)]
    out = X.astype(float).copy()
    todo = {i for i in range(n) if zero[i] and S[i].any()}
    while todo:
        comp, frontier = set(), [min(todo)]
        while frontier:
            i = frontier.pop()
            if i in comp:
                continue
            comp.add(i)
            frontier += [j for j in np.flatnonzero(S[i]) if j in todo and j not in comp]
        first = min(ids[i] for i in comp)
        g = basis @ np.random.default_rng([seed, _hash(first)]).standard_normal(basis.shape[1])
        for i in comp:
            out[i] = length * u + g / np.linalg.norm(g)
        todo -= comp
    return out


def _hash(key) -> int:
    import hashlib

    return int.from_bytes(hashlib.blake2b(str(key).encode(), digest_size=8).digest(), "little")


def _case(seed: int = 0):
    """A graph of 9 nodes with a 4-node reached component, a pair linked both ways and a
    pair linked one way left at zero, and an isolated node; its vectors (d = 3)."""
    ids = [f"n{i}" for i in range(9)]
    W = np.zeros((9, 9))
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5)]:
        W[a, b] = W[b, a] = 1.0
    W[7, 6] = 2.0  # one direction only: weakly connected
    rng = np.random.default_rng(seed)
    X = np.zeros((9, 3))
    X[:4] = rng.standard_normal((4, 3))
    return ids, W, X  # n8 has no edge


def test_anchor_unreached_is_its_definition():
    ids, W, X = _case()
    out, filled = anchor_unreached(sp.csr_matrix(W), X, ids, length=1.5, seed=3)
    assert filled == 4  # n4, n5 (a pair) and n6, n7 (weakly linked); not the isolated n8
    np.testing.assert_allclose(out, _dense_anchor(W, X, ids, 1.5, 3), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out[:4], X[:4])  # reached rows unchanged
    np.testing.assert_array_equal(out[8], 0.0)  # no edge: stays zero
    np.testing.assert_array_equal(out[4], out[5])  # one component, one vector
    np.testing.assert_array_equal(out[6], out[7])
    assert not np.allclose(out[4], out[6])  # two components, two vectors
    # A seed changes the components' directions, not the anchor; length 0 is the offset alone.
    other, _ = anchor_unreached(sp.csr_matrix(W), X, ids, length=1.5, seed=4)
    assert not np.allclose(other[4], out[4])
    bare, _ = anchor_unreached(sp.csr_matrix(W), X, ids, length=0.0, seed=3)
    np.testing.assert_allclose(np.linalg.norm(bare[4:8], axis=1), 1.0, rtol=1e-12)
    # Nothing unreached: the input comes back as it is.
    same, none = anchor_unreached(sp.csr_matrix(W[:4, :4]), X[:4], ids[:4])
    assert none == 0
    np.testing.assert_array_equal(same, X[:4])


def _components_case(d: int = 8, seed: int = 0):
    """A reached 12-cycle (r00..r11, random vectors in d dimensions: the Gram matrix of
    its rows has d distinct eigenvalues) and four components left at zero, each of
    several ids: a pair linked both ways (a1, a2), a pair linked one way (b2 -> b1), a
    chain linked one way (c1 -> c2 -> c3: weakly one component, strongly three) and a
    triangle (t1, t2, t3); and the isolated z. Weights as a dense matrix, ids, vectors."""
    ids = [f"r{i:02d}" for i in range(12)] + ["a1", "a2", "b1", "b2", "c1", "c2", "c3", "t1", "t2", "t3", "z"]
    at = {v: i for i, v in enumerate(ids)}
    W = np.zeros((len(ids), len(ids)))
    for i in range(12):
        W[i, (i + 1) % 12] = W[(i + 1) % 12, i] = 1.0
    for a, b in [("a1", "a2"), ("a2", "a1"), ("b2", "b1"), ("c1", "c2"), ("c2", "c3"), ("t1", "t2"), ("t2", "t3"),
                 ("t3", "t1")]:
        W[at[a], at[b]] = 1.0
    X = np.zeros((len(ids), d))
    X[:12] = np.random.default_rng(seed).standard_normal((12, d))
    return ids, W, X


def test_anchor_unreached_gives_every_weak_component_its_own_vector():
    """In d = 8 the components' offsets are Gaussian combinations of two directions, so
    that two components almost never share a vector (in d = 3 or 4 an offset has one
    direction, up to sign, and two components coincide one time in two: strong
    components, or a component keyed by its largest id, passed the definition test
    there). Against the definition written out; each weakly connected component's nodes
    alike, every two components apart; edges of weight 0 stored in the sparse matrix
    connect nothing."""
    ids, W, X = _components_case()
    out, filled = anchor_unreached(sp.csr_matrix(W), X, ids, length=1.5, seed=3)
    assert filled == 10  # every node of the four components, not the isolated z
    np.testing.assert_allclose(out, _dense_anchor(W, X, ids, 1.5, 3), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out[:12], X[:12])
    np.testing.assert_array_equal(out[ids.index("z")], 0.0)
    vectors = []
    for members in (["a1", "a2"], ["b1", "b2"], ["c1", "c2", "c3"], ["t1", "t2", "t3"]):
        rows = out[[ids.index(v) for v in members]]
        np.testing.assert_array_equal(rows, np.broadcast_to(rows[0], rows.shape))  # one vector per component
        vectors.append(rows[0])
    for i in range(len(vectors)):
        for j in range(i):
            assert not np.allclose(vectors[i], vectors[j], rtol=0, atol=1e-6), (i, j)
    # Stored zeros (edges of weight 0) between b2 and c1, and at z: no component joined,
    # z still without an edge.
    at = {v: i for i, v in enumerate(ids)}
    r, c = np.nonzero(W)
    r = np.concatenate([r, [at["b2"], at["z"]]])
    c = np.concatenate([c, [at["c1"], at["a1"]]])
    A = sp.csr_matrix((np.concatenate([W[np.nonzero(W)], [0.0, 0.0]]), (r, c)), shape=W.shape)
    assert A.nnz == np.count_nonzero(W) + 2  # the zeros are stored
    zeros, filled = anchor_unreached(A, X, ids, length=1.5, seed=3)
    assert filled == 10
    np.testing.assert_array_equal(zeros, out)


def test_anchor_basis_and_offsets():
    u, basis = anchor_basis(np.diag([3.0, 0.5, 2.0, 4.0]))
    np.testing.assert_array_equal(u, [0.0, 1.0, 0.0, 0.0])  # the least-used direction
    np.testing.assert_array_equal(basis, [[0.0], [0.0], [1.0], [0.0]])  # the next d // 4 of them
    u, _ = anchor_basis(np.array([[3.0, 1.0], [1.0, 3.0]]))  # eigenvalue 2: (1, -1) / sqrt(2), signed
    np.testing.assert_allclose(u, np.array([1.0, -1.0]) / np.sqrt(2), rtol=1e-12)
    u, basis = anchor_basis(np.zeros((3, 3)))  # nothing reached
    np.testing.assert_array_equal(u, [1.0, 0.0, 0.0])
    assert [offset_dims(d) for d in (1, 2, 3, 8, 128)] == [1, 1, 1, 2, 32]
    _, basis = anchor_basis(np.diag(np.arange(1.0, 17.0)))
    a = component_offset("x1", 0, basis)
    np.testing.assert_allclose(np.linalg.norm(a), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(a[[0] + list(range(5, 16))], 0.0)  # within the basis' span
    np.testing.assert_array_equal(a, component_offset("x1", 0, basis))  # the same in every call
    assert not np.allclose(a, component_offset("x1", 1, basis))
    assert not np.allclose(a, component_offset("x2", 0, basis))
    np.testing.assert_array_equal(component_offset(11, 0, basis), component_offset("11", 0, basis))  # the id as text


@pytest.mark.parametrize("use_graphframes", [None, True, False])
def test_anchor_frame_equals_numpy(spark, use_graphframes):
    """Components in one task (None: this few unreached nodes), by GraphFrames and by
    DataFrame joins: the same rows as the NumPy form. Edges of weight 0, which the
    graph keeps (prepare_graph refuses negative weights, not zero ones) and A leaves
    out, connect nothing: one between the two unreached pairs joins no components, and
    the isolated n8's only edge, of weight 0, does not make it a node with an edge."""
    if use_graphframes:
        gf_support.require(spark)
    ids, W, X = _case(seed=1)
    rows = [(ids[a], ids[b], float(W[a, b])) for a, b in zip(*np.nonzero(W))]
    rows += [("n5", "n7", 0.0), ("n8", "n4", 0.0)]
    edges = spark.createDataFrame(rows, "src string, dst string, weight double")
    assert prepare_graph(edges, False).edges.where("weight = 0").count() == 4  # what the estimator passes
    out = spark.createDataFrame([(v, [float(x) for x in X[i]], i) for i, v in enumerate(ids)],
                                "id string, embedding array<double>, other int")
    cached: list = []
    got, filled = anchor_frame(out.repartition(3), edges, 1.5, 3, 3, use_graphframes=use_graphframes,
                               cached=cached)
    assert filled == 4 and got.columns == out.columns
    rows = {r["id"]: (np.array(r["embedding"]), r["other"]) for r in got.collect()}
    want, _ = anchor_unreached(sp.csr_matrix(W), X, ids, 1.5, 3)
    np.testing.assert_allclose(np.array([rows[v][0] for v in ids]), want, rtol=1e-12, atol=1e-13)
    assert not np.allclose(want[4], want[6])  # two components (joined, they would share a vector)
    np.testing.assert_array_equal(rows["n8"][0], 0.0)
    assert [rows[v][1] for v in ids] == list(range(9))
    # The few held ids meet the edge ends as they are read, and the new vectors meet the
    # output, by broadcast joins: neither the edges nor the output is shuffled for them.
    assert outermost_join(got) == outermost_join(cached[1]) == "BroadcastHashJoin", physical_plan(got)
    # Zero rows of nodes without an edge only (n8): nothing to anchor, the output as it was.
    reached = out.where(~out.id.isin("n4", "n5", "n6", "n7"))
    same, none = anchor_frame(reached, edges, 1.5, 3, 3, use_graphframes=use_graphframes, cached=cached)
    assert none == 0 and same is reached
    for df in cached:
        df.unpersist()


@pytest.mark.parametrize("use_graphframes", [None, False])
def test_anchor_frame_of_ids_past_a_doubles_precision(spark, use_graphframes):
    """64-bit ids one apart near 2^62, in one task and by DataFrame joins: the
    components of the graph as given (a double holds all nine ids as one number)."""
    names, W, X = _case(seed=2)
    ids = [WIDE_IDS + i for i in range(len(names))]
    rows = [(ids[a], ids[b], float(W[a, b])) for a, b in zip(*np.nonzero(W))]
    edges = spark.createDataFrame(rows, "src long, dst long, weight double")
    out = spark.createDataFrame([(v, [float(x) for x in X[i]]) for i, v in enumerate(ids)],
                                "id long, embedding array<double>")
    got, filled = anchor_frame(out, edges, 1.5, 3, 3, use_graphframes=use_graphframes, cached=[])
    assert filled == 4
    rows = {r["id"]: np.array(r["embedding"]) for r in got.collect()}
    want, _ = anchor_unreached(sp.csr_matrix(W), X, ids, 1.5, 3)
    np.testing.assert_allclose(np.array([rows[v] for v in ids]), want, rtol=1e-12, atol=1e-13)
    assert not np.allclose(want[4], want[6])  # two pairs: two components


def _island_graph(spark):
    g = random_graph(n=60, m=220, seed=8)
    rows = g.rows + [(a, b, 1.0) for a, b in ISLANDS]
    edges = spark.createDataFrame(rows, "src string, dst string, weight double")
    ids = sorted({r[0] for r in rows} | {r[1] for r in rows})
    pos = {v: i for i, v in enumerate(ids)}
    keep = [(pos[a], pos[b], w) for a, b, w in rows if a != b]
    src, dst, w = (np.array(c) for c in zip(*keep))
    return edges, ids, sp.csr_matrix(dense.weight_matrix(len(ids), src, dst, w, directed=False))


def test_estimator_anchors_the_solve_it_leaves_at_zero(spark, caplog):
    """In one task (alone and after three averaging steps) and on the distributed path,
    the output with unreached="anchor" is anchor_unreached of the output with "zero";
    requested ids keep the solve's zero rows, and a warning says so."""
    edges, ids, W = _island_graph(spark)
    kw = dict(dim=4, landmarks=10, iters=4, setSize=25, metric="A+A2", scaling="log", lam=2.0, eta=1.0,
              unreachedLength=2.0, seed=5)

    def vectors(df):
        got = {r["id"]: np.array(r["embedding"]) for r in df.collect()}
        return np.array([got[v] for v in ids])

    model = SepNE(**kw, oneTaskNodes=100_000).fit(edges)
    base = {}
    for steps in (0, 3):
        model.setAverageSteps(steps).setUnreached("zero")
        base[steps] = vectors(model.transform(edges))
        assert np.all(base[steps][[ids.index(v) for v in ("x1", "y2", "z4")]] == 0)  # islands: no landmark
        model.setUnreached("anchor")
        want, filled = anchor_unreached(W, base[steps], ids, 2.0, 5)
        assert filled == 9
        np.testing.assert_allclose(vectors(model.transform(edges)), want, rtol=1e-9, atol=1e-12)
    model.setAverageSteps(0)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        asked = {r["id"]: np.array(r["embedding"])
                 for r in model.embed(spark.createDataFrame([("x1",)], "id string"), edges).collect()}
    np.testing.assert_array_equal(asked["x1"], 0.0)  # requested ids: the solve's row
    assert "requested ids keep the solve's vectors: one that no landmark reaches keeps the zero vector" in caplog.text
    model.release()
    model = SepNE(**kw, oneTaskNodes=0, unreached="anchor").fit(edges)
    result = model.transform(edges)
    got = vectors(result)
    assert model.plan["unreached"] == 9 and "unreached" in model.timings
    assert "solve_propagation" in model.timings  # the solve is computed in its own stage, not the anchor's
    assert not runs_the_solve(result)  # the output was checkpointed before the anchor's passes
    np.testing.assert_allclose(got, anchor_unreached(W, base[0], ids, 2.0, 5)[0], rtol=1e-8, atol=1e-10)
    model.release()
