"""Numerically hard graphs: finite embeddings, equal to the dense oracle, warnings when degraded.

One graph holds every hard case at once: a hub joined to most nodes, two "twin" nodes
with identical neighbourhoods (both become landmarks, so the landmark block has two
equal rows and is rank-deficient), weights from 1e-6 to 1e6, several components, and
a small component that no landmark reaches (its nodes can only get zero vectors).
"""
from __future__ import annotations

import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from sepne_spark.jobs import embed
from sepne_spark.model import SepNE
from tests.helpers import D, ETA, ITERS, K, LAM, SET, SmallGraph, collect, oracle_compare, random_graph


def hard_graph() -> SmallGraph:
    base = random_graph(n=50, m=170, seed=11)
    rng = np.random.default_rng(5)
    rows = [(a, b, w * float(10.0 ** rng.integers(-6, 7))) for a, b, w in base.rows]  # 12 orders of magnitude
    nodes = sorted({r[0] for r in base.rows} | {r[1] for r in base.rows})
    rows += [("hub", v, 1.0) for v in nodes[:45]]
    rows += [(t, v, 1.0) for t in ("twin-a", "twin-b") for v in nodes[5:35]]
    rows += [("island-1", "island-2", 2.0), ("island-2", "island-3", 1.0), ("island-3", "island-4", 1e-3)]
    rows += [("pair-1", "pair-2", 1.0), ("pair-2", "v000", 1.0)]  # a thin bridge to the rest
    ids = sorted({r[0] for r in rows} | {r[1] for r in rows})
    pos = {v: i for i, v in enumerate(ids)}
    keep = [r for r in rows if r[0] != r[1]]
    return SmallGraph(
        rows=rows, ids=ids,
        src=np.array([pos[r[0]] for r in keep]), dst=np.array([pos[r[1]] for r in keep]),
        weight=np.array([r[2] for r in keep]),
    )


@pytest.mark.e2e
def test_hard_graph_job_matches_oracle_and_warns_about_unreached_nodes(spark, tmp_path, caplog, capsys):
    g = hard_graph()
    path = tmp_path / "edges.tsv"
    path.write_text("".join(f"{a}\t{b}\t{w!r}\n" for a, b, w in g.rows))
    out = tmp_path / "emb"
    caplog.set_level(logging.INFO, logger="sepne_spark")
    rc = embed.main(spark, [
        "--input", str(path), "--output", str(out), "--profile", "default", "--context", "--metric", "A+A2",
        "--landmarks", str(K), "--dim", str(D), "--iters", str(ITERS), "--lam", str(LAM), "--eta", str(ETA),
        "--set-size", str(SET), "--landmark-strategy", "DD", "--partition", "RP",
    ])
    assert rc == 0
    df = spark.read.parquet(str(out))
    rows = collect(df)
    assert len(rows) == len(g.ids)
    emb = np.vstack(pd.Series({k: v.embedding for k, v in rows.items()}))
    assert np.isfinite(emb).all()

    lm = [r.id for r in rows.values() if r.is_landmark]
    assert {"hub", "twin-a", "twin-b"} <= set(lm)  # the degenerate landmark block is in play
    oracle_compare(g, rows, SimpleNamespace(landmark_ids=lm), "A+A2", False, True)

    island = [rows[f"island-{i}"].embedding for i in range(1, 5)]
    assert np.all(np.asarray(island) == 0)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "all-zero" in r.getMessage()]
    assert warned and warned[0].startswith("4 of ")
    # and the summary counts them too
    assert f"  all-zero vectors: 4 of {len(g.ids)} nodes (the warning in the log says why, and what to change)" in \
        capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("strategy,metric", [("GDS", "I+A")])
def test_hard_graph_gds_identity_metric_matches_oracle(spark, strategy, metric):
    g = hard_graph()
    edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
    model = SepNE(dim=D, landmarks=K, landmarkStrategy=strategy, metric=metric, lam=LAM, eta=ETA, iters=ITERS,
                  setSize=SET).fit(edges)
    out = collect(model.transform(edges))
    assert len(out) == len(g.ids)
    assert np.isfinite(np.vstack([r.embedding for r in out.values()])).all()
    oracle_compare(g, out, model, metric, False, True)
