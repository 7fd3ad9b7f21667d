"""The main path under Spark Connect gives the classic session's result (requested ids and
LP sets in one task; RP sets on the distributed path, with the spectral steps by row
blocks and the anchor), and GraphFrames runs through the server's GraphFrames Connect
plugin.

One Spark Connect server (tests/connect/server.py) serves the module: with the
GraphFrames core, GraphX and Connect plugin JARs on its ``spark.jars`` and GraphFrames'
relation extension registered, as a Databricks or self-managed Connect server would be
set up. The client (tests/connect/run_connect.py) runs in its own process.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from sepne_spark.model import SepNE
from sepne_spark.partition import label_propagation
from sepne_spark.session import connect_plugin_jars, local_jars
from tests import gf_support
from tests.helpers import random_graph

pytest.importorskip("grpc", reason="Spark Connect client needs pyspark[connect]")


def server_jars() -> list[str]:
    """The Spark Connect server's own JAR where PySpark does not bring it (Spark 3.5:
    ``org.apache.spark:spark-connect_2.12``, named by ``$SEPNE_CONNECT_JAR``, which
    ``make test-spark-version`` sets); none on Spark 4, which has it built in."""
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:
        return []
    jar = os.environ.get("SEPNE_CONNECT_JAR", "")
    if not os.path.isfile(jar):
        pytest.skip(f"the Spark Connect server JAR of Spark {pyspark.__version__} (SEPNE_CONNECT_JAR) is not here")
    return [jar]

GRAPH = dict(n=50, m=180, seed=4)
#: Two small components that hold no landmark (ids after the random graph's): the
#: spectral case gives their five nodes the anchor (GraphFrames' connected components
#: through the server's plugin, or the DataFrame ones).
ISLANDS = [("x1", "x2", 1.0), ("y1", "y2", 1.0), ("y2", "y3", 2.0)]


#: The embed job's settings when it runs through the server (SPARK_REMOTE), on the module's graph.
JOB = ["--profile", "default", "--landmarks", "8", "--dim", "4", "--iters", "2", "--set-size", "20"]


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """Start the server (with the GraphFrames JARs when they are here), run the client
    and the embed job with ``SPARK_REMOTE`` set, return the client's result, whether the
    server had the GraphFrames plugin, and the job's completed process and output."""
    g = random_graph(**GRAPH)
    g.rows.extend(ISLANDS)
    here = Path(__file__).parent / "connect"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent), SPARK_LOCAL_IP="127.0.0.1")
    jars = server_jars() + local_jars() + connect_plugin_jars()
    plugin = bool(connect_plugin_jars()) and len(local_jars()) >= 2
    with socket.socket() as s:  # a free port for the server
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(here / "server.py"), str(port), *jars], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert server.stdout.readline().strip() == "READY", "the Spark Connect server did not start"
        proc = subprocess.run(
            [sys.executable, str(here / "run_connect.py"), f"sc://127.0.0.1:{port}", json.dumps(g.rows)],
            capture_output=True, text=True, timeout=900, env=env,
        )
        folder = tmp_path_factory.mktemp("connect-job")
        out, edges = folder / "emb", folder / "edges.tsv"
        edges.write_text("".join(f"{a}\t{b}\t{w}\n" for a, b, w in g.rows), encoding="utf-8")
        job = subprocess.run(
            [sys.executable, str(here.parent.parent / "jobs" / "embed.py"), *JOB, "--input", str(edges),
             "--output", str(out)],
            capture_output=True, text=True, timeout=600, env=dict(env, SPARK_REMOTE=f"sc://127.0.0.1:{port}"),
        )
        # The evaluate job's tasks that collect vectors to the driver, on that output
        evaluated = {}
        if job.returncode == 0:
            labels = folder / "labels.tsv"
            nodes = sorted(graph_nodes(g))
            labels.write_text("".join(f"{v}\tc{i % 3}\n" for i, v in enumerate(nodes)), encoding="utf-8")
            for task, args in evaluations(labels, edges):
                result = folder / f"{task}.json"
                run = subprocess.run(
                    [sys.executable, str(here.parent.parent / "jobs" / "evaluate.py"), task, "--embeddings",
                     str(out), *args, "--json", str(result)],
                    capture_output=True, text=True, timeout=600, env=dict(env, SPARK_REMOTE=f"sc://127.0.0.1:{port}"),
                )
                evaluated[task] = (run, json.loads(result.read_text()) if run.returncode == 0 else None)
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return g, json.loads(lines[0][len("RESULT "):]), plugin, (job, out), evaluated


def graph_nodes(g) -> set[str]:
    """The nodes of the module's graph, its islands' too."""
    return {a for a, _, _ in g.rows} | {b for _, b, _ in g.rows}


def evaluations(labels: Path, edges: Path) -> list[tuple[str, list[str]]]:
    """The evaluate job's tasks run through the server on the embed job's output."""
    return [("classify", ["--labels", str(labels), "--ratios", "0.5", "--splits", "2"]),
            ("reconstruct", ["--edges", str(edges), "--method", "driver"])]


#: The spectral steps by row blocks (the path of graphs over 100,000 nodes): checkpointed
#: block products and d x d Gram matrices, all through DataFrames; the refinement by the
#: log-ratio matrix, whose entries are built and stored by block once more; then the
#: anchor of the nodes no landmark reaches.
SPECTRAL = dict(averageSteps=2, refineSteps=1, refineOperator="pmi", propagation=2, propagationBlocks=2,
                propagationDtype="float64", oneTaskNodes=0, unreached="anchor")


#: The cases the client runs (tests/connect/run_connect.py). RP sets in one task are left
#: out: the one task is met with LP sets, the RP assignment on the distributed path.
CASES = ("IO", "LP", "RP-spectral")


def test_rp_io_and_lp_under_spark_connect(spark, remote):
    g, result, _, _, _ = remote
    assert set(result) - {"graphframes", "lp_labels", "auto", "saved_equal", "auc", "text_cached",
                          "own_text_cached", "checkpoint_files", "released", "checkpoints_left",
                          "deep_checkpoint", "checkpoint_views", "linkpred_count_types"} == set(CASES)
    edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
    for partition in CASES:
        extra = SPECTRAL if partition == "RP-spectral" else {}
        model = SepNE(dim=4, landmarks=8, metric="A+A2", setSize=20, iters=5, partition=partition[:2],
                      **extra).fit(edges)
        if partition == "IO":
            out = model.transform(spark.createDataFrame([(r[0],) for r in g.rows[:15]], "id string"))
        else:
            out = model.transform(edges)
        local = {r["id"]: (np.asarray(r["embedding"]), r["set_id"]) for r in out.collect()}
        if extra:  # the distributed solve, then the steps by row blocks, as a stage of their own
            assert "solve_propagation" in model.timings and not model.plan.get("one_task")
            assert (model.plan["average_steps"], model.plan["refine_steps"], model.plan["propagation"]) == (2, 1, 2)
            assert model.plan["unreached"] == 5 and not np.any(local["y3"][0] == 0)
        got = result[partition]
        assert got["landmarks"] == model.landmark_ids
        assert sorted(got["rows"]) == sorted(local)
        for node, (vec, set_id) in local.items():
            assert got["rows"][node][1] == set_id
            np.testing.assert_allclose(got["rows"][node][0], vec, rtol=1e-9, atol=1e-12)


def test_label_propagation_under_spark_connect_goes_through_graphframes(spark, remote):
    g, result, plugin, _, _ = remote
    if not plugin:
        gf_support.connect_jars()  # skips, or fails under CI
    assert result["graphframes"] is True, "GraphFrames did not work through the Connect server's plugin"
    # The labels GraphFrames computed on the server are those of the DataFrame implementation here.
    edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
    vertices = edges.select("src").union(edges.select("dst")).distinct().withColumnRenamed("src", "id")
    here = label_propagation(spark, vertices, edges, 5, use_graphframes=False)
    assert result["lp_labels"] == {r["id"]: r["label"] for r in here.collect()}
    assert 1 < len(set(result["lp_labels"].values())) < len(result["lp_labels"])
    # The LP fit under Connect: every non-landmark node in exactly one set of at most
    # setSize (20) nodes, at most one set under half of it (where packing ends).
    lp = result["LP"]
    assert sorted(lp["rows"]) == sorted(result["lp_labels"])  # every node exactly once
    sets = Counter(set_id for node, (_, set_id) in lp["rows"].items() if node not in lp["landmarks"])
    assert all(lp["rows"][node][1] == -1 for node in lp["landmarks"])
    assert -1 not in sets and max(sets.values()) <= 20
    assert sum(1 for size in sets.values() if size < 10) <= 1, sorted(sets.values())
    assert sum(sets.values()) == len(lp["rows"]) - len(lp["landmarks"])


def test_profile_auto_model_files_and_auc_under_spark_connect(spark, remote):
    """``SepNE.fromProfile("auto", edges)`` chooses as in a classic session, a model's
    files (raw float64 parts) save and load, and the AUC by score ranges is exact."""
    from sepne_spark.evaluation import auc

    g, result, _, _, _ = remote
    edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
    assert result["auto"] == SepNE.fromProfile("auto", edges).settings()
    assert result["saved_equal"] is True
    scores = np.array([float(i % 7) / 7 for i in range(300)])
    labels = np.array([i % 3 == 0 for i in range(300)])
    assert result["auc"] == pytest.approx(auc(scores[labels], scores[~labels]), abs=1e-12)


def test_a_persisted_graph_read_from_text_is_found_by_the_queries_built_on_it(remote):
    """Under Spark Connect every query is analysed anew on the server; Spark 3.5 tells
    two analyses of one text read apart, so without the reader's view
    (:func:`sepne_spark.reading.text_lines`) a cached edge table was read again by each."""
    assert remote[1]["text_cached"] is True


def test_a_persisted_graph_of_the_users_own_text_parsing_is_found_by_the_queries_built_on_it(remote):
    """The same for an edge DataFrame parsed from ``spark.read.text`` by the caller's own
    code, as passed to ``SepNE.fit``: :func:`sepne_spark.graph.prepare_graph` makes the
    input one view (:func:`sepne_spark.session.pinned`) before it builds the graph."""
    assert remote[1]["own_text_cached"] is True


def test_releasing_a_model_unpersists_its_tables_and_removes_the_files_written_for_checkpoints(remote):
    """The spectral case's model (row blocks, the anchor: checkpoints, written as Parquet
    by a client before Spark 4.0). Its tables are unpersisted before those files go: a
    Spark Connect ``unpersist`` analyses the table's plan again, which failed with
    ``PATH_NOT_FOUND`` once a file it read was removed, and stopped the release there."""
    assert remote[1]["released"] == "ok"
    assert remote[1]["checkpoints_left"] == []


def test_link_predictions_counts_are_python_integers(remote):
    """A Spark Connect 3.5 client's ``count()`` is a NumPy integer, which the evaluate
    job's JSON summary wrote as a string (``"n_train_rows": "10696"``)."""
    assert remote[1]["linkpred_count_types"] == ["int"]


def test_a_table_of_a_deep_plan_is_checkpointed(remote):
    """PySpark 4's Spark Connect client builds a checkpoint's request from the plan in a
    way that parses it again with protobuf's limit of 100 nested messages: a plan of
    more than about 50 nested operations failed with ``DecodeError`` in the client (the
    distributed path's checkpoint before the anchor, on a 3,000-node graph with the
    default's steps after the solve). ``checkpoint`` sends the plan as a temporary view
    and checkpoints a read of it, then drops the view."""
    assert remote[1]["deep_checkpoint"] == list(range(60, 65))
    assert remote[1]["checkpoint_views"] == []


def test_a_connect_client_before_spark_4_writes_its_checkpoint_files_uncompressed(remote):
    """Spark 3.5 reads Snappy pages of MiB-sized values very slowly, and a Spark Connect
    3.5 client's ``parquet()`` sets the compression option again unless given to it
    (:func:`sepne_spark.session.checkpoint` writes files there; Spark 4 has checkpoints)."""
    import pyspark

    files = remote[1]["checkpoint_files"]
    assert bool(files) == (int(pyspark.__version__.split(".")[0]) < 4)
    assert not any(".snappy." in f for f in files), files


def test_the_embed_job_runs_through_spark_remote(spark, remote):
    """``SPARK_REMOTE`` set (PySpark's own way to name a Connect server): the job connects
    to that server instead of starting a local Spark, and writes every node's row."""
    g, job, out = remote[0], *remote[3]
    nodes = len(graph_nodes(g))  # the islands' too
    assert job.returncode == 0, job.stderr[-3000:]
    assert "connecting to the Spark Connect server at sc://127.0.0.1:" in job.stderr
    assert "could not release" not in job.stderr
    assert f"SepNE embedded {nodes:,} nodes" in job.stdout
    assert spark.read.parquet(str(out)).count() == nodes


def test_the_evaluate_jobs_vectors_reach_the_driver_as_in_a_classic_session(spark, remote, tmp_path):
    """classify and reconstruct --method driver collect vectors as Arrow data
    (``toArrow`` on Spark 4, ``toPandas`` before): through the server, the same results
    as a classic session's run of the same task on the same files."""
    from sepne_spark.jobs import evaluate

    g, (job, out), evaluated = remote[0], remote[3], remote[4]
    assert job.returncode == 0, job.stderr[-3000:]
    labels, edges = out.parent / "labels.tsv", out.parent / "edges.tsv"
    for task, args in evaluations(labels, edges):
        run, got = evaluated[task]
        assert run.returncode == 0, run.stderr[-3000:]
        assert evaluate.main(spark, [task, "--embeddings", str(out), *args, "--json", str(tmp_path / "c.json")]) == 0
        classic = json.loads((tmp_path / "c.json").read_text())
        if task == "classify":  # the same vectors, the same splits: the same scores
            keys = ("results", "n_nodes", "n_missing_embedding", "n_zero_embedding")
            assert {k: got[k] for k in keys} == {k: classic[k] for k in keys}
        else:
            keys = ("r2_all", "r2_nonzero", "n_nodes", "n_missing_embedding", "n_zero_embedding")
            assert {k: got[k] for k in keys} == pytest.approx({k: classic[k] for k in keys}, abs=1e-12)
    assert evaluated["classify"][1]["n_nodes"] == len(graph_nodes(g))


def test_spark_remote_and_a_master_together_are_refused_in_one_line(tmp_path):
    """PySpark refuses a master with SPARK_REMOTE; the job says so before starting anything."""
    env = dict(os.environ, SPARK_REMOTE="sc://127.0.0.1:1", SEPNE_SPARK_MASTER="local[1]",
               PYTHONPATH=str(Path(__file__).parent.parent))
    proc = subprocess.run([sys.executable, str(Path(__file__).parent.parent / "jobs" / "embed.py"), *JOB,
                           "--gen-nodes", "60", "--output", str(tmp_path / "emb")], capture_output=True, text=True,
                          timeout=120, env=env)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and lines[-1].startswith("sepne-embed: error: SPARK_REMOTE (sc://127.0.0.1:1) and a "
                                                         "master (local[1]"), proc.stderr[-2000:]
