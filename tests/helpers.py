"""Helpers shared by the tests: small random graphs and their dense matrices, the
oracle comparison of embeddings. Test modules import helpers from here, never from
each other."""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

import numpy as np

from sepne_spark import dense

#: Size of the oracle tests' models: landmarks, dimension, rounds, lambda, eta, set size.
K, D, ITERS, LAM, ETA, SET = 8, 4, 5, 0.4, 0.1, 18
#: A base for 64-bit integer ids past a double's 53 bits: doubles near 2^62 are 1,024
#: apart, so ids a few apart round to one number (pandas holds an integer column with
#: nulls as doubles).
WIDE_IDS = 1 << 62


@dataclass
class SmallGraph:
    rows: list  # (src, dst, weight) as given to Spark
    ids: list  # node ids, sorted
    src: np.ndarray  # indices into ids, self-loops removed (unless kept)
    dst: np.ndarray
    weight: np.ndarray

    def index(self) -> dict:
        return {v: i for i, v in enumerate(self.ids)}

    def proximity(
        self, metric: str, directed: bool, weighted: bool = True, scaling: str = "none", window: int = 2
    ) -> np.ndarray:
        w = self.weight if weighted else np.ones(len(self.src))
        A = dense.transition_matrix(len(self.ids), self.src, self.dst, w, directed=directed)
        M = dense.proximity_from_transition(A, metric, window)
        if scaling == "log":
            W = dense.weight_matrix(len(self.ids), self.src, self.dst, w, directed=directed)
            M = dense.log_scaled(M, W, window)
        return M


def random_graph(n: int = 60, m: int = 220, seed: int = 0, string_ids: bool = True, communities: int = 3,
                 id_base: int = 0, self_loops: str = "drop") -> SmallGraph:
    """A random graph with some community structure, a few duplicates and self-loops.

    Integer ids (``string_ids=False``) are ``id_base + 10 i + 1``; :data:`WIDE_IDS` as
    ``id_base`` gives ids that a double cannot hold. The oracle's edges (``src``,
    ``dst``) leave the self-loops out, as the library does by default, unless
    ``self_loops="keep"``."""
    rng = np.random.default_rng(seed)
    comm = rng.integers(0, communities, n)
    src = rng.integers(0, n, m)
    dst = np.where(rng.random(m) < 0.7, -1, rng.integers(0, n, m))
    for e in np.where(dst < 0)[0]:
        same = np.where(comm == comm[src[e]])[0]
        dst[e] = rng.choice(same)
    weight = np.round(rng.random(m) * 2 + 0.25, 3)
    name = (lambda i: f"v{i:03d}") if string_ids else (lambda i: id_base + int(i) * 10 + 1)
    rows = [(name(a), name(b), float(w)) for a, b, w in zip(src, dst, weight)]
    keep = (src != dst) | (self_loops == "keep")
    ids = sorted({name(i) for i in range(n)} & ({r[0] for r in rows} | {r[1] for r in rows}))
    pos = {v: i for i, v in enumerate(ids)}
    return SmallGraph(
        rows=rows,
        ids=ids,
        src=np.array([pos[name(a)] for a in src[keep]]),
        dst=np.array([pos[name(b)] for b in dst[keep]]),
        weight=weight[keep],
    )


def nothing_cached(spark) -> bool:
    """Whether the session's cache holds no table (persisted or waiting to be filled)."""
    return bool(spark._jsparkSession.sharedState().cacheManager().isEmpty())


@contextlib.contextmanager
def jvm_log(spark, *warn_loggers: str):
    """Capture the JVM's log lines (log4j) while the block runs, with the loggers
    ``warn_loggers`` at WARN (a job run earlier in the same session may have quieted
    them); yields a callable returning the text captured so far."""
    jvm = spark._jvm
    ctx = jvm.org.apache.logging.log4j.LogManager.getContext(False)
    config = ctx.getConfiguration()
    for name in warn_loggers:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, jvm.org.apache.logging.log4j.Level.WARN)
    writer = jvm.java.io.StringWriter()
    layout = jvm.org.apache.logging.log4j.core.layout.PatternLayout.createDefaultLayout()
    appender = jvm.org.apache.logging.log4j.core.appender.WriterAppender.createAppender(
        layout, None, writer, "sepne-test-capture", False, True)
    appender.start()
    config.addAppender(appender)
    config.getRootLogger().addAppender(appender, None, None)
    ctx.updateLoggers()
    try:
        yield lambda: str(writer.toString())
    finally:
        config.getRootLogger().removeAppender("sepne-test-capture")
        ctx.updateLoggers()
        appender.stop()


def physical_plan(df) -> str:
    """The physical plan Spark runs for ``df`` (a classic session's), with the plans of
    the tables it reads from the cache."""
    return df._jdf.queryExecution().executedPlan().toString()


def runs_the_solve(df) -> bool:
    """Whether ``df``'s physical plan (cached tables' plans included) holds the per-set
    solve (``groupBy("set_id").applyInPandas``): False for an output read from a
    checkpoint, whose lineage is cut."""
    return re.search(r"FlatMapGroupsInPandas \[set_id", physical_plan(df)) is not None


def outermost_join(df) -> str | None:
    """The strategy of the join nearest the top of ``df``'s physical plan (of a cached
    table, its own), e.g. ``BroadcastHashJoin``; None without a join."""
    found = re.search(r"\b(\w+Join|CartesianProduct)\b", physical_plan(df))
    return found.group(1) if found else None


def collect(df):
    pdf = df.toPandas()
    return {r.id: r for r in pdf.itertuples()}


def oracle_compare(g, out, model, metric, directed, weighted, scaling="none", window=2, factors=None):
    """Compare every embedded node with the dense oracle for the same landmarks and sets
    (and the landmark factors ``(Phi, Psi, P)`` when they are not M00's SVD), to 1e-10 of
    the largest entry: the Spark paths agree with NumPy to about 1e-14, so a step taken
    in float32, or entries of M rounded on the way, fail it."""
    M = g.proximity(metric, directed, weighted, scaling, window)
    pos = g.index()
    L = [pos[i] for i in model.landmark_ids]
    sets: dict = {}
    for r in out.values():
        if not r.is_landmark:
            sets.setdefault(r.set_id, []).append(pos[r.id])
    W, C = dense.sepne_dense(M, L, list(sets.values()), D, LAM, ETA, ITERS, factors=factors)
    # The SVD fixes each dimension only up to sign: align on the landmark rows.
    Phi = np.array([out[i].embedding for i in model.landmark_ids if i in out]) if all(
        i in out for i in model.landmark_ids
    ) else model.factors.Phi.T
    sign = np.sign(np.sum(Phi * W[L], axis=0))
    assert np.all(sign != 0)
    scale_w = np.nanmax(np.abs(W))
    scale_c = np.nanmax(np.abs(C))
    for node, r in out.items():
        i = pos[node]
        np.testing.assert_allclose(np.asarray(r.embedding) * sign, W[i], rtol=0, atol=1e-10 * scale_w)
        np.testing.assert_allclose(np.asarray(r.context) * sign, C[i], rtol=0, atol=1e-10 * scale_c)
    return sets
