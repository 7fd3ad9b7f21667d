"""Scheduled-run hygiene of the embed job, and the progress it reports."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from pathlib import Path

import pytest

from sepne_spark.errors import UserError
from sepne_spark.jobs import embed
from sepne_spark.model import SepNEModel, saved_metadata
from sepne_spark.progress import DESCRIPTION_KEY, SolveProgress, is_connect, stage
from sepne_spark.session import local_jars
from tests.helpers import jvm_log, nothing_cached

SMALL = ["--profile", "default", "--gen-nodes", "200", "--landmarks", "12", "--dim", "4", "--iters", "2", "--set-size", "60"]


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.e2e
def test_generated_graph_is_scored_on_a_bounded_sample(spark, tmp_path, capsys, monkeypatch):
    # The planted communities of the built-in graph are scored on at most SCORED_NODES
    # nodes (a seeded sample), never by collecting every vector.
    monkeypatch.setattr(embed, "SCORED_NODES", 50)
    spark.catalog.clearCache()
    # main(spark, args) as a notebook calls it, Spark's readers at their WARN level: the
    # check of the written files logs neither a hidden folder's warning nor a pattern's
    # Java stack trace.
    with jvm_log(spark, "org.apache.spark.sql.execution.streaming.sinks.FileStreamSink",
                 "org.apache.spark.sql.execution.datasources.DataSource") as logged:
        assert embed.main(spark, SMALL + ["--output", str(tmp_path / "out"), "--json", "-"]) == 0
        jvm_lines = logged()
    assert "Assume no metadata directory" not in jvm_lines and "All paths were ignored" not in jvm_lines
    assert nothing_cached(spark)  # the job leaves a long-lived session's cache as it found it
    printed = capsys.readouterr().out.splitlines()
    lines = [line for line in printed if "planted communities" in line]
    assert [line.split(":")[0].strip() for line in lines] == ["planted communities, 10% training",
                                                              "planted communities, 50% training"]
    assert all(line.endswith("(logistic regression, 3 splits, 50 nodes)") for line in lines), lines
    # --json -: the summary on one line, the last of stdout; the manifest's fields and the scores.
    summary = json.loads(printed[-1])
    manifest = json.loads((tmp_path / "out" / "_manifest.json").read_text())
    assert {k: v for k, v in summary.items() if k not in ("planted_communities", "timings_s", "duration_s")} == \
        {k: v for k, v in manifest.items() if k not in ("timings_s", "duration_s")}
    assert summary["counts"]["output_rows"] == 200 and summary["output"] == str(tmp_path / "out")
    scores = summary["planted_communities"]
    assert (scores["nodes_scored"], scores["splits"], sorted(scores["micro_f1"])) == (50, 3, ["0.1", "0.5"])
    assert all(f"micro-F1 {scores['micro_f1'][r]:.4f} " in line for r, line in zip(("0.1", "0.5"), lines))


@pytest.mark.spark
def test_a_stop_after_the_outputs_are_written_says_they_are_complete(spark, capsys):
    """SIGTERM after the job's outputs are in place (while its summary is printed, its
    checkpoints removed) ends the run with 143 and says the outputs are complete; before
    that, that the write in progress was undone."""
    import signal
    import threading

    from sepne_spark.jobs.common import mark_written, run_job

    assert threading.current_thread() is threading.main_thread()  # the handler is set in the main thread only

    def stopped(after_write: bool):
        def main(session, argv):
            if after_write:
                mark_written(["/data/emb", "/data/model"])
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # the handler raises here
            return 0
        return main

    assert run_job(stopped(True), "sepne-test", []) == 143
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("sepne-test: stopped by SIGTERM after ") and err.endswith(
        "s; its output was already written in full: /data/emb, /data/model (only what follows the write did not "
        "run)"), err
    assert run_job(stopped(False), "sepne-test", []) == 143  # a new run forgets the last one's outputs
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("s; the write in progress was undone (an output is replaced whole or not at all)"), err


@pytest.mark.spark
def test_a_session_shut_down_under_the_job_is_said_to_be_a_stop_or_a_failure(spark, capsys, caplog):
    """spark-submit's JVM stops the session on its SIGTERM, and the job's running Spark
    call fails with Spark's "cancelled because SparkContext was shut down": one line that
    says the session was shut down (a stop, or a failure Spark's log names), with Spark's
    words in the log, not a trace."""
    from sepne_spark.jobs.common import run_job

    def main(session, argv):
        raise RuntimeError("An error occurred while calling o598.parquet.\n: org.apache.spark.SparkException: "
                           "Job 42 cancelled because SparkContext was shut down")

    with caplog.at_level("WARNING", logger="sepne_spark"):
        assert run_job(main, "sepne-test", []) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert re.fullmatch(r"sepne-test: failed: the Spark session was shut down while the job ran, after [0-9.]+ s: a "
                        r"stop \(a SIGTERM to spark-submit, the application killed\) or a failure that Spark's log "
                        r"names; no output was replaced \(an output is replaced whole or not at all\)", err[-1]), err[-3:]
    assert "the job's Spark call ended with: RuntimeError: An error occurred while calling o598.parquet." \
        in caplog.text
    assert not any("Traceback" in r.getMessage() or r.exc_info for r in caplog.records if r.levelno >= 30)


@pytest.mark.spark
def test_json_to_stdout_is_the_last_line_of_the_jobs_output(spark):
    """--json -: after the job's closing log line on stderr too (a scheduler that keeps
    stdout and stderr together, as Airflow's BashOperator does, keeps the JSON); called
    outside a job (a notebook), it is printed at once."""
    import contextlib
    import io

    from sepne_spark.jobs.common import emit_json, run_job

    def main(session, argv):
        emit_json(session, "-", {"job": "test", "rows": 3})
        logging.getLogger("sepne_spark.test").warning("a line after the summary")
        return 0

    both = io.StringIO()
    handler = logging.StreamHandler(both)
    logger = logging.getLogger("sepne_spark")
    logger.addHandler(handler)
    try:
        with contextlib.redirect_stdout(both):
            assert run_job(main, "sepne-test", []) == 0
            emit_json(spark, "-", {"job": "outside"})
    finally:
        logger.removeHandler(handler)
    lines = both.getvalue().splitlines()
    assert [json.loads(line) for line in lines[-2:]] == [{"job": "test", "rows": 3}, {"job": "outside"}]
    assert any(line.startswith("sepne-test finished in ") for line in lines[:-2]), lines


@pytest.mark.e2e
def test_generated_graph_without_scikit_learn_is_embedded_and_not_scored(spark, tmp_path, capsys, monkeypatch):
    # scikit-learn is an extra (eval): without it the job still succeeds and says why
    # the planted communities were not scored.
    import sys

    monkeypatch.setitem(sys.modules, "sklearn", None)
    assert embed.main(spark, SMALL + ["--output", str(tmp_path / "out"), "--json", str(tmp_path / "run.json")]) == 0
    printed = capsys.readouterr().out.splitlines()
    lines = [line.strip() for line in printed if "planted communities" in line]
    assert lines == ['planted communities: not scored (node classification needs scikit-learn: '
                     'pip install "sepne-spark[eval]")'], lines
    assert (tmp_path / "out" / "_manifest.json").exists()
    # --json FILE: the summary written whole, without scores where none were computed.
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["job"] == "embed" and "planted_communities" not in summary
    assert printed[-1] == f"results written to {tmp_path / 'run.json'}"


@pytest.mark.e2e
def test_generated_graph_with_requested_ids_is_not_scored(spark, tmp_path, capsys):
    # The score is of a whole generated graph: three requested nodes are not one.
    assert embed.main(spark, SMALL + ["--nodes", "1,2,3", "--output", str(tmp_path / "out")]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if "planted communities" in line]
    assert lines == ["planted communities: not scored (--nodes embedded only the requested nodes; the score is "
                     "of a whole generated graph)"], lines
    assert spark.read.parquet(str(tmp_path / "out")).count() == 3


@pytest.mark.spark
def test_a_run_date_replaces_only_the_model_its_own_date_saved(spark, tmp_path):
    """The check before the fit (read with Spark's text reader, so a compressed metadata
    file is read as well): the same date's model is replaced, another date's, one without
    a date or a folder of something else only with --overwrite."""
    import argparse
    import gzip

    model = tmp_path / "model"
    (model / "metadata").mkdir(parents=True)

    def check(date, overwrite=False, path=model):
        """Read with Spark, and as the check before Spark starts reads a local folder."""
        given = argparse.Namespace(run_date=date, save_model=str(path), overwrite=overwrite)
        results = []
        for session in (spark, None):
            try:
                embed.check_model_of_run_date(given, session, str(path))
                results.append(None)
            except UserError as exc:
                results.append(str(exc))
        assert results[0] == results[1], results
        if results[0]:
            raise UserError(results[0])

    (model / "metadata" / "part-00000").write_text('{"runDate": "2026-12-02"}\n', encoding="utf-8")
    check("2026-12-02")
    with pytest.raises(UserError, match=r"--save-model path .* holds the model of --run-date 2026-12-02; a --run-date "
                                        r"run replaces only the model its own date saved: pass --overwrite"):
        check("2026-12-01")
    check("2026-12-01", overwrite=True)
    check("2026-12-01", path=tmp_path / "new")  # nothing there yet
    (model / "metadata" / "part-00000").write_text("{}\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"holds a model without a recorded run date \(saved without --run-date"):
        check("2026-12-02")
    # Written by a session that compresses its text output: read as Spark reads it
    (model / "metadata" / "part-00000").unlink()
    (model / "metadata" / "part-00000.gz").write_bytes(gzip.compress(b'{"runDate": "2026-12-02"}\n'))
    check("2026-12-02")
    (model / "metadata" / "part-00000.gz").unlink()
    (model / "metadata" / "part-00000").write_bytes(b"\x89PNG\r\n")  # not a model's metadata: no trace
    with pytest.raises(UserError, match="holds something other than a saved model"):
        check("2026-12-02")
    (tmp_path / "stuff").mkdir()
    with pytest.raises(UserError, match="holds something other than a saved model"):
        check("2026-12-02", path=tmp_path / "stuff")
    # Spark 4's name for a text part; a codec Python does not read is left to Spark's reader
    from sepne_spark.model import local_saved_metadata

    (model / "metadata" / "part-00000").unlink()
    (model / "metadata" / "part-00000-0e1f-c000.txt").write_text('{"runDate": "2026-12-02"}\n', encoding="utf-8")
    assert local_saved_metadata(str(model)) == {"runDate": "2026-12-02"}
    (model / "metadata" / "part-00000-0e1f-c000.txt").rename(model / "metadata" / "part-00000.snappy")
    with pytest.raises(LookupError):
        local_saved_metadata(str(model))


@pytest.mark.e2e
def test_run_date_rerun_replaces_only_its_partition(spark, tmp_path, caplog, monkeypatch):
    out = tmp_path / "embeddings"
    caplog.set_level(logging.INFO, logger="sepne_spark")
    model = tmp_path / "model"
    assert embed.main(spark, SMALL + ["--output", str(out), "--run-date", "2026-11-24"]) == 0
    assert embed.main(spark, SMALL + ["--output", str(out), "--run-date", "2026-11-25", "--save-model", str(model)]) == 0
    before_24 = _digest(out / "dt=2026-11-24")
    before_25 = _digest(out / "dt=2026-11-25")
    saved = SepNEModel.load(str(model)).landmark_ids
    assert saved_metadata(str(model), spark)["runDate"] == "2026-11-25"

    # The same date again, with another seed: that partition is replaced, nothing else,
    # and so is the model that date saved.
    assert embed.main(spark, SMALL + ["--output", str(out), "--run-date", "2026-11-25", "--seed", "7",
                                      "--save-model", str(model)]) == 0
    assert _digest(out / "dt=2026-11-24") == before_24
    after_25 = _digest(out / "dt=2026-11-25")
    assert after_25 != before_25
    assert sorted(p.name for p in out.iterdir()) == ["dt=2026-11-24", "dt=2026-11-25"]  # no temporary left
    assert SepNEModel.load(str(model)).landmark_ids != saved
    # Another date's run does not replace it (a backfill would silently swap the model).
    with pytest.raises(UserError, match="holds the model of --run-date 2026-11-25"):
        embed.main(spark, SMALL + ["--output", str(out), "--run-date", "2026-11-24", "--save-model", str(model)])
    # The model and the output replace their old versions together: a rerun that fails
    # after the model was written (here at the output's last step) leaves both as they were.
    from sepne_spark import storage

    pair = (_digest(out / "dt=2026-11-25"), _digest(model))

    def full(directory, manifest):
        raise OSError("No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(storage, "write_manifest", full)
        with pytest.raises(OSError, match="No space"):
            embed.main(spark, SMALL + ["--output", str(out), "--run-date", "2026-11-25", "--seed", "8",
                                      "--save-model", str(model)])
    assert (_digest(out / "dt=2026-11-25"), _digest(model)) == pair
    assert sorted(p.name for p in tmp_path.iterdir()) == ["embeddings", "model"]  # no temporary left
    assert sorted(p.name for p in out.iterdir()) == ["dt=2026-11-24", "dt=2026-11-25"]

    manifest = json.loads((out / "dt=2026-11-25" / "_manifest.json").read_text())
    assert manifest["settings"]["seed"] == 7
    assert manifest["counts"]["output_rows"] == manifest["counts"]["input_nodes"] == 200
    assert manifest["spark_version"] == spark.version and manifest["version"]
    # What an audit needs: the arguments, the date, the master, the versions, the profile's file.
    assert manifest["run_date"] == "2026-11-25" and manifest["arguments"][-4:-2] == ["--seed", "7"]
    assert manifest["spark_master"] == spark.conf.get("spark.master")
    assert set(manifest["versions"]) == {"python", "numpy", "scipy", "pyarrow"}
    assert manifest["profile"] == "default" and manifest["profile_file"].endswith("/conf/default.yaml")
    assert os.path.isabs(manifest["profile_file"])
    assert {"read", "fit", "landmarks", "summaries_svd", "solve_write", "total"} <= set(
        manifest["timings_s"]
    )
    assert manifest["sets"]["setup"] == "RP" and manifest["sets"]["sets"] >= 2
    assert manifest["sets"]["nodes"] == 200 - 12

    # Readers of OUTPUT see both dates as a partition column.
    both = spark.read.parquet(str(out))
    assert sorted(r["dt"].isoformat() for r in both.select("dt").distinct().collect()) == ["2026-11-24", "2026-11-25"]

    # Each stage logged what it did, with counts and time.
    done = [r.getMessage() for r in caplog.records if r.name == "sepne_spark.progress" and " done in " in r.getMessage()]
    assert any(m.startswith("SepNE landmarks done in") and "landmarks 12" in m for m in done), done
    assert any(m.startswith("SepNE solve_write done in") and "rows 200" in m and "sets 4" in m for m in done), done


def test_stage_sets_and_restores_description_and_tags_only_connect(spark):
    spark.conf.unset(DESCRIPTION_KEY)
    timings: dict[str, float] = {}
    with stage(spark, "solve", "12 sets, 340 nodes", timings) as st:
        assert spark.conf.get(DESCRIPTION_KEY) == "SepNE solve: 12 sets, 340 nodes"
        assert not is_connect(spark) and not _tags(spark)  # a classic session gets no tag
        st.count(sets=12)
        spark.range(3).count()
    assert spark.conf.get(DESCRIPTION_KEY, None) is None
    assert timings["solve"] >= 0

    spark.conf.set(DESCRIPTION_KEY, "nightly embeddings")
    with pytest.raises(RuntimeError):
        with stage(spark, "partition"):
            raise RuntimeError("boom")
    assert spark.conf.get(DESCRIPTION_KEY) == "nightly embeddings"  # a caller's description survives
    spark.conf.unset(DESCRIPTION_KEY)


def _tags(spark) -> set[str]:
    """The session's job tags (PySpark 3.5 keeps none on a classic session)."""
    try:
        return spark.getTags()
    except RuntimeError:
        return set()


#: A fit, then pyspark.ml's training summary, in a session of its own (the test session
#: has run the jobs' observed writes, which break these summaries in PySpark 4.1 too);
#: then the session is stopped and started again, as a notebook's restart does.
FIT_THEN_SUMMARY = """
import sys
import tempfile

from pyspark.ml.classification import LogisticRegression
from pyspark.ml.functions import array_to_vector
from pyspark.sql import functions as F
from sepne_spark import InputError, SepNE, SepNEModel, SettingError, get_spark
from tests.helpers import random_graph

spark = get_spark(master="local[2]")
g = random_graph(n=30, m=90, seed=3)
edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
model = SepNE(dim=4, landmarks=8, setSize=10, iters=3).fit(edges)
out = model.transform(edges)
data = out.select(array_to_vector("embedding").alias("features"), (F.hash("id") % 2 == 0).cast("double").alias("label"))
print("accuracy", LogisticRegression(maxIter=5).fit(data).summary.accuracy)
before = {r["id"]: r["embedding"] for r in out.collect()}

spark.stop()
try:  # a DataFrame of the stopped session: said so, not an empty AssertionError of Spark's
    SepNE(dim=4, landmarks=8).fit(edges)
except InputError as exc:
    print("stale", "belongs to a Spark session that was stopped" in str(exc))
spark = get_spark(master="local[2]")
edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
after = {r["id"]: r["embedding"] for r in model.setOneTaskNodes(0).transform(edges).collect()}
print("same", after.keys() == before.keys() and all(max(abs(a - b) for a, b in zip(after[k], before[k])) < 1e-9
                                                    for k in before))
held = len(spark.sparkContext._jsc.getPersistentRDDs())
model.release()
model.release()
print("released", held > 0 and len(spark.sparkContext._jsc.getPersistentRDDs()) == 0)
path = tempfile.mkdtemp() + "/model"
model.save(path)  # in the running session
print("saved", SepNEModel.load(path).landmark_ids == model.landmark_ids)
try:  # the fitted graph's session is gone: the model holds no graph
    model.transform(spark.createDataFrame([(g.rows[0][0],)], "id string"))
except SettingError as exc:
    print("refused", "holds no graph" in str(exc))
"""


@pytest.mark.e2e
@pytest.mark.deploy  # a minute: sessions started and stopped in a process of its own
def test_a_fit_leaves_pyspark_ml_training_summaries_working_and_the_model_outlives_its_session():
    """A classic session that has had a job tag fails pyspark.ml's training summaries
    (PySpark 4.1: the session's tag state is not serializable): the stages tag none.
    A fit of the stopped session's DataFrame is refused, saying so. After the session is
    stopped and another started, the fitted model's transform(edges)
    gives the vectors it gave before, release() unpersists what that transform cached,
    the model saves in the new session and transform(ids) says it holds no graph."""
    import os
    import shlex
    import subprocess
    import sys

    from tests.spark_conf import spark_flags

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_SUBMIT_ARGS=shlex.join(spark_flags("--conf") + ["pyspark-shell"]))
    proc = subprocess.run([sys.executable, "-c", FIT_THEN_SUMMARY], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"^accuracy [01]\.\d*", proc.stdout, re.M), proc.stdout
    assert re.findall(r"^(stale|saved|refused|same|released) (\w+)$", proc.stdout, re.M) == [
        ("stale", "True"), ("same", "True"), ("released", "True"), ("saved", "True"), ("refused", "True")], \
        proc.stdout + proc.stderr[-3000:]


def test_solve_progress_reports_first_set_then_throttles(capsys):
    progress = SolveProgress(every=3600)
    progress.finished(4, 120, 0.5)
    progress.finished(5, 80, 0.25)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and re.fullmatch(r"\d\d:\d\d:\d\d sepne solve \[worker \d+\]: 1 sets \(120 nodes\) done "
                                            r"in this task; set 4: 120 nodes in 0\.50 s", lines[0]), lines
    progress.every = 0
    progress.finished(6, 10, 0.1)
    assert "3 sets (210 nodes)" in capsys.readouterr().err


@pytest.mark.e2e
@pytest.mark.deploy  # about 50 s; the library's IO against the full run stays in make test (test_core)
def test_saved_model_io_reads_only_the_neighbourhood(spark, tmp_path, capsys, caplog):
    """--model with --nodes and M = I + A: the input is never merged as a whole, and the
    vectors equal those of the path that merges it."""
    import numpy as np

    from sepne_spark.errors import SettingError
    from sepne_spark.graph import Graph, load_graph
    from tests.helpers import random_graph

    g = random_graph(n=80, m=320, seed=4)
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in g.rows), encoding="utf-8")
    flags = ["--input", str(edges), "--profile", "default", "--metric", "I+A", "--landmarks", "10", "--dim", "4", "--iters", "3",
             "--set-size", "15"]
    model_path = tmp_path / "model"
    # Saved with the refinement and the filter, which embed whole graphs only: requested
    # ids are embedded without them.
    assert embed.main(spark, flags + ["--output", str(tmp_path / "all"), "--save-model", str(model_path),
                                      "--refine-steps", "2", "--propagation", "3", "--average-steps", "2"]) == 0
    saved = json.loads((tmp_path / "all" / "_manifest.json").read_text())
    assert saved["saved_model"] == str(model_path) and "save_model" in saved["timings_s"]
    asked = g.ids[::7] + ["not-a-node"]
    # with a byte-order mark, as some editors save, and a header line (skipped): no part of the first id
    (tmp_path / "nodes.txt").write_text("ID\n" + "\n".join(asked) + "\n", encoding="utf-8-sig")
    out = tmp_path / "some"
    capsys.readouterr()
    # Flags that disagree with the saved model do not change it: the graph is read the
    # model's way (undirected), and the summary and the manifest say what was used.
    other = [w for pair in zip(flags[::2], flags[1::2]) if pair[0] not in ("--landmarks", "--dim") for w in pair]
    assert embed.main(spark, other + ["--output", str(out), "--model", str(model_path), "--directed",
                                      "--nodes", f"@{tmp_path / 'nodes.txt'}", "--landmarks", "20", "--dim", "8"]) == 0
    printed = capsys.readouterr().out
    assert "k=10 (DD), d=4, metric I+A, partition IO" in printed
    assert "time: load_model " in printed and ", read " in printed  # the model's loading is not the input's
    manifest = json.loads((out / "_manifest.json").read_text())
    assert {"load_model", "read"} <= set(manifest["timings_s"])
    used = manifest["settings"]
    assert (used["landmarks"], used["dim"], used["directed"], used["metric"]) == (10, 4, False, "I+A")
    assert (used["refine_steps"], used["propagation"], used["average_steps"]) == (0, 1, 0)
    assert (used["partition"], used["unreached"]) == ("IO", "zero")
    assert manifest["profile"] == f"none: the parameters of the saved model {model_path}"
    counts = manifest["counts"]
    assert "input_nodes" not in counts and 0 < counts["rows_of_A_read"] < len(g.ids)
    assert counts["output_rows"] == len(asked) - 1 and manifest["sets"]["setup"] == "IO"
    assert (counts["requested"], counts["requested_missing"]) == (len(asked), 1)  # "not-a-node"
    got = {r["id"]: r["embedding"] for r in spark.read.parquet(str(out)).collect()}
    # --max-missing: a share of missing ids over it fails the run before anything is written.
    from sepne_spark.errors import UserError

    share = 1 / len(asked)
    refused = (f"1 of the {len(asked)} requested ids [(]{share:.1%}[)] are not nodes of the graph, more than "
               "--max-missing 0 allows; nothing was written")
    with pytest.raises(UserError, match=refused):
        embed.main(spark, flags + ["--output", str(tmp_path / "strict"), "--model", str(model_path),
                                   "--nodes", f"@{tmp_path / 'nodes.txt'}", "--max-missing", "0"])
    assert not (tmp_path / "strict").exists()
    assert embed.main(spark, flags + ["--output", str(tmp_path / "strict"), "--model", str(model_path),
                                      "--nodes", f"@{tmp_path / 'nodes.txt'}", "--max-missing", f"{share}"]) == 0

    model = SepNEModel.load(str(model_path))
    merged = load_graph(spark, str(edges), directed=False)
    assert (model.getRefineSteps(), model.getPropagation(), model.getAverageSteps()) == (2, 3, 2)
    with pytest.raises(SettingError, match="whole graphs only"):
        model.embed(spark.createDataFrame([(g.ids[0],)], "id string"), merged)
    model.setRefineSteps(0).setPropagation(1)
    with pytest.raises(SettingError, match="whole graphs only"):  # the averaging alone too
        model.embed(spark.createDataFrame([(g.ids[0],)], "id string"), merged)
    model.setAverageSteps(0)
    bare = Graph(edges=merged.edges, vertices=merged.vertices, directed=False)
    ids = spark.createDataFrame([(i,) for i in asked], "id string")
    ref = {r["id"]: r["embedding"] for r in model.embed(ids, bare).collect()}
    assert sorted(got) == sorted(ref)
    with pytest.raises(ValueError, match=r"directed=True \(the model has False\): read it with the model.s settings"):
        model.embed(ids, load_graph(spark, str(edges), directed=True))
    scale = max(np.abs(v).max() for v in ref.values())
    for node, vec in ref.items():
        np.testing.assert_allclose(got[node], vec, rtol=0, atol=1e-9 * scale)
    # Embeddings given as the model: the user's mistake, one line and exit status 2.
    with pytest.raises(UserError, match=f"--model: no SepNE model at {out}"):
        embed.main(spark, flags + ["--output", str(tmp_path / "again"), "--model", str(out), "--nodes", "x"])
    # A model saved from a run of requested ids (partition IO) embeds a whole graph with
    # the sets the command line names (here the profile's RP), and says so.
    io_model = tmp_path / "io-model"
    assert embed.main(spark, flags + ["--output", str(tmp_path / "io"), "--partition", "IO", "--nodes",
                                      f"@file://{tmp_path / 'nodes.txt'}", "--save-model", str(io_model)]) == 0  # a file: URI
    assert SepNEModel.load(str(io_model)).getPartition() == "IO"
    with pytest.raises(UserError, match=refused):  # fitting: refused before the fit
        embed.main(spark, flags + ["--output", str(tmp_path / "io2"), "--partition", "IO", "--nodes",
                                   f"@{tmp_path / 'nodes.txt'}", "--max-missing", "0", "--save-model",
                                   str(tmp_path / "io2-model")])
    assert not (tmp_path / "io2").exists() and not (tmp_path / "io2-model").exists()
    fitted_io = json.loads((tmp_path / "io" / "_manifest.json").read_text())
    assert (fitted_io["counts"]["requested"], fitted_io["counts"]["requested_missing"]) == (len(asked), 1)
    assert "requested_ids" in fitted_io["timings_s"]  # the job's own check, a stage of its own
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        assert embed.main(spark, flags + ["--output", str(tmp_path / "whole"), "--model", str(io_model)]) == 0
    assert "saved with partition IO (requested ids); the whole graph is embedded with partition RP" in caplog.text
    whole = json.loads((tmp_path / "whole" / "_manifest.json").read_text())
    assert whole["counts"]["output_rows"] == len(g.ids) and whole["sets"]["setup"] == "RP"


@pytest.mark.e2e
def test_a_saved_model_refuses_a_graph_that_holds_none_of_its_landmarks(spark, tmp_path, caplog):
    """Every vector comes from the proximity to the landmarks: a graph without them (ids
    written another way) is refused before anything is written, one with fewer than
    half of them is warned about, and the manifest says how many it holds."""
    from tests.helpers import random_graph

    g = random_graph(n=60, m=240, seed=6)
    flags = ["--profile", "default", "--landmarks", "6", "--dim", "4", "--iters", "2", "--set-size", "20"]

    def edge_file(name, rows):
        path = tmp_path / name
        path.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in rows), encoding="utf-8")
        return str(path)

    model_path = tmp_path / "model"
    assert embed.main(spark, flags + ["--input", edge_file("edges.tsv", g.rows), "--output", str(tmp_path / "all"),
                                      "--save-model", str(model_path)]) == 0
    landmarks = SepNEModel.load(str(model_path)).landmark_ids
    renamed = edge_file("renamed.tsv", [(f"n-{s}", f"n-{d}", w) for s, d, w in g.rows])
    with pytest.raises(UserError, match=re.escape(f"--model: none of the model's 6 landmarks (e.g. {landmarks[0]!r}, "
                                                  f"{landmarks[1]!r}, {landmarks[2]!r}) is a node of {renamed}")):
        embed.main(spark, flags + ["--input", renamed, "--output", str(tmp_path / "renamed"), "--model",
                                   str(model_path)])
    assert not (tmp_path / "renamed").exists()
    # A generated graph's integer ids against the model's strings: refused before Spark starts.
    with pytest.raises(UserError, match=re.escape(f"--model {model_path} was fitted on string node ids, and a "
                                                  "generated graph's ids are integers")):
        embed._checked(["--generated", "--output", str(tmp_path / "gen"), "--model", str(model_path)])
    lost = set(landmarks[:4])
    fewer = edge_file("fewer.tsv", [r for r in g.rows if r[0] not in lost and r[1] not in lost])
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        assert embed.main(spark, flags + ["--input", fewer, "--output", str(tmp_path / "fewer"), "--model",
                                          str(model_path)]) == 0
    assert "--model: only 2 of the model's 6 landmarks are nodes of this graph" in caplog.text
    assert json.loads((tmp_path / "fewer" / "_manifest.json").read_text())["counts"]["model_landmarks_present"] == 2


@pytest.mark.parametrize("path", [
    [],
    # the distributed path and LP sets: in the deploy checks, to keep make test under ten minutes
    pytest.param(["--partition", "LP", "--one-task-nodes", "0"], marks=pytest.mark.deploy),
], ids=["one-task", "LP-distributed"])
def test_manifest_and_summary_a_person_can_trust(spark, tmp_path, capfd, caplog, path):
    """The manifest names the profile, the Spark application, the input files (count,
    size, modification time), start, end and duration, and whether GraphFrames ran; the
    printed time line has fit's parts in brackets and a total; the metric names the
    scaling. No Spark warning about re-cached data or ignored paths. Reading and the
    label propagation of LP sets are stages of their own, with their lines and times."""
    from tests.helpers import random_graph

    g = random_graph(80, 400, seed=11)
    edges = tmp_path / "in" / "edges.tsv"
    edges.parent.mkdir()
    lines = [*g.rows, (g.rows[0][0], g.rows[0][0], 1.0), g.rows[1]]  # a self-loop and a repeated line
    edges.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in lines), encoding="utf-8")
    out = tmp_path / "emb"
    capfd.readouterr()
    argv = ["--input", str(edges), "--output", str(out), "--profile", "document", "--landmarks", "12",
            "--dim", "4", "--iters", "2", "--set-size", "30", "--scaling", "log", "--average-steps", "2", *path]
    caplog.set_level(logging.INFO, logger="sepne_spark")
    spark.catalog.clearCache()
    assert embed.main(spark, argv) == 0
    assert nothing_cached(spark)
    printed, err = capfd.readouterr()  # the JVM's log too: it writes to the same stderr
    manifest = json.loads((out / "_manifest.json").read_text())

    assert manifest["profile"] == "document"
    assert manifest["fit"] == {"landmark_subspaces": "M00"}  # the document profile's M00 factors
    pairs = {(min(s, d), max(s, d)) for s, d, _ in lines if s != d}
    loops = sum(s == d for s, d, _ in lines)
    counts = manifest["counts"]
    assert (counts["input_lines"], counts["self_loops_dropped"], counts["edges"]) == (len(lines), loops, len(pairs))
    repeats = len(lines) - loops - len(pairs)
    assert counts["repeats_merged"] == repeats >= 1
    assert (f"edge rows (an undirected edge counts twice) from {len(lines)} lines ({loops} self-loops dropped, "
            f"{repeats} repeat{'s' * (repeats != 1)} merged)") in printed
    assert (f"{len(lines)} edge lines: {loops} self-loops dropped, {repeats} repeat{'s' * (repeats != 1)} merged "
            "(--self-loops keep keeps self-loops; a repeat is an edge read again in either direction, merged by "
            f"--duplicates sum); {len(pairs)} edges left") in caplog.text
    assert manifest["spark_app_id"] == spark.conf.get("spark.app.id")
    (fingerprint,) = manifest["input_files"]
    stat = edges.stat()
    assert fingerprint["path"] == str(edges) and fingerprint["files"] == 1 and fingerprint["bytes"] == stat.st_size
    assert fingerprint["absolute"] == str(edges.resolve())
    assert fingerprint["modified_utc"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stat.st_mtime))
    assert manifest["started_utc"] <= manifest["finished_utc"]
    assert 0 < manifest["duration_s"] == pytest.approx(manifest["timings_s"]["total"], abs=1e-3)
    assert isinstance(manifest["graphframes_used"], bool)
    assert manifest["graphframes_used"] == bool(getattr(spark, "_sepne_graphframes", False))

    time_line = next(ln for ln in printed.splitlines() if ln.strip().startswith("time:"))
    assert "fit " in time_line and "(landmarks " in time_line and "summaries_svd " in time_line
    assert time_line.rstrip().split(", ")[-1].startswith("total ")
    top = re.findall(r"(?:^|, )(read|fit|partition|proximity_rows|solve_write) ([\d.]+)s", time_line.split(":", 1)[1])
    total = float(re.search(r"total ([\d.]+)s", time_line).group(1))
    assert sum(float(v) for _, v in top) <= total + 0.2  # the stages add up to at most the total
    assert "log scaling" in printed
    assert "set size 30; then 2 averaging steps\n" in printed  # what ran after the solve
    assert manifest["sets"]["average_steps"] == 2
    done = [r.getMessage() for r in caplog.records if " done in " in r.getMessage()]
    assert any(m.startswith("SepNE read done in ") and "(nodes 80, edge_rows " in m for m in done), done
    if path:
        assert any(m.startswith("SepNE partition done in ") for m in done), done
        assert "partition " in time_line and "partition" in manifest["timings_s"]
        # The test session has the GraphFrames JARs where they are built for its Spark.
        assert manifest["graphframes_used"] is bool(local_jars())

    noisy = [ln for ln in err.splitlines() if "already cached" in ln or "ignored" in ln]
    assert not noisy, noisy


@pytest.mark.e2e
def test_the_summary_and_manifest_say_when_the_walks_were_a_sample(spark, tmp_path, capfd, monkeypatch):
    """landmarkFactors walks over the limit of products: the job's summary, its manifest
    and the saved model say over which share of the nodes the walks' sums ran; under
    MIN_WALK_SAMPLE, that the landmark subspaces are M00's own."""
    from sepne_spark import pipeline
    from tests.helpers import random_graph

    g = random_graph(n=80, m=400, seed=11)
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in g.rows), encoding="utf-8")
    base = ["--input", str(edges), "--profile", "social", "--landmarks", "10", "--dim", "4", "--set-size", "30",
            "--one-task-nodes", "0", "--propagation", "1", "--refine-steps", "0", "--overwrite"]
    monkeypatch.setattr(pipeline, "walk_products", lambda A, landmarks: 4_000_000)  # the bound, as if
    monkeypatch.setattr(pipeline, "MAX_DISTRIBUTED_WALK_PRODUCTS", 1_000_000)  # a quarter of it
    capfd.readouterr()
    assert embed.main(spark, [*base, "--output", str(tmp_path / "a"), "--save-model", str(tmp_path / "m")]) == 0
    assert "; landmark subspaces from the walks over 25.0% of the nodes" in capfd.readouterr().out
    manifest = json.loads((tmp_path / "a" / "_manifest.json").read_text())
    assert manifest["fit"] == {"landmark_subspaces": "walks", "walk_sample": 0.25}
    assert SepNEModel.load(str(tmp_path / "m")).fit_notes == manifest["fit"]
    monkeypatch.setattr(pipeline, "MIN_WALK_SAMPLE", 0.3)
    assert embed.main(spark, [*base, "--output", str(tmp_path / "b")]) == 0
    assert "; landmark subspaces: M00's own (the walks were over the limit of products)" in capfd.readouterr().out
    assert json.loads((tmp_path / "b" / "_manifest.json").read_text())["fit"] == {"landmark_subspaces": "M00"}


@pytest.mark.e2e
def test_auto_with_requested_ids_leaves_out_the_whole_graph_steps(spark, tmp_path, caplog, monkeypatch):
    """Without --profile, requested ids on a small graph: auto takes document-quality,
    whose averaging embeds whole graphs only, and turns it off (as it turns off the
    filter and the refinement of the large-graph tiers); a flag asking for it is refused.
    The graph is too small for the profile's 128 dimensions: a warning says so."""
    from sepne_spark.errors import UserError
    from tests.helpers import random_graph

    g = random_graph(n=60, m=200, seed=8)
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in g.rows), encoding="utf-8")
    out = tmp_path / "some"
    caplog.set_level(logging.INFO, logger="sepne_spark")
    assert embed.main(spark, ["--input", str(edges), "--output", str(out), "--nodes", ",".join(g.ids[:5])]) == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["profile"].startswith("auto")
    used = manifest["settings"]
    assert (used["average_steps"], used["propagation"], used["refine_steps"], used["window"]) == (0, 1, 0, 5)
    assert (used["partition"], used["unreached"]) == ("IO", "zero")  # their own sets, no anchor: as run
    assert "keeps the zero vector" not in caplog.text  # auto left the anchor out: nothing to warn of
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "dimensions" in r.getMessage()]
    assert warned == [f"a graph of {len(g.ids)} nodes takes at most {used['landmarks']} landmarks (half its nodes), "
                      f"so its vectors have {used['dim']} dimensions, not 128; give --dim and --landmarks to choose"]
    with pytest.raises(UserError, match="--average-steps 2 averages every vector.*give --average-steps 0"):
        embed.main(spark, ["--input", str(edges), "--output", str(tmp_path / "other"), "--nodes", g.ids[0],
                           "--average-steps", "2"])
    # yarn extends auto: the same choice, with the cluster's session settings over it.
    assert embed.main(spark, ["--input", str(edges), "--output", str(tmp_path / "yarn"), "--nodes",
                              ",".join(g.ids[:5]), "--profile", "yarn"]) == 0
    on_yarn = json.loads((tmp_path / "yarn" / "_manifest.json").read_text())
    assert on_yarn["profile"] == manifest["profile"].replace("auto: ", "yarn (auto: ") + ")"
    assert {k: v for k, v in on_yarn["settings"].items() if k != "spark"} == \
        {k: v for k, v in used.items() if k != "spark"}
    assert on_yarn["settings"]["spark"]["spark.sql.shuffle.partitions"] == "800"
    assert on_yarn["profile_file"].endswith("/conf/yarn.yaml")  # the file given, not auto's choice
    # A whole-graph step that a profile over auto sets is its own, not auto's: --nodes
    # refuses it, naming the profile, before Spark starts.
    steps = tmp_path / "steps.yaml"
    steps.write_text("extends: auto\naverage_steps: 2\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"average_steps 2 \(from --profile {re.escape(str(steps))}\) averages "
                                        r"every vector.*drop --nodes, or give --average-steps 0"):
        embed._checked(["--input", str(edges), "--output", str(tmp_path / "other"), "--nodes", g.ids[0],
                        "--profile", str(steps)])
    # landmarks that a profile over auto sets: an error names that profile's file
    mine = tmp_path / "mine.yaml"
    mine.write_text("extends: yarn\nlandmarks: 500\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"landmarks 500 \(from the profile {re.escape(str(mine))}\) is more than "
                                        rf"the {len(g.ids)} nodes"):
        embed.main(spark, ["--input", str(edges), "--output", str(tmp_path / "other"), "--profile", str(mine)])
    # A flag against the settings auto chose: the error says they are auto's, and its choice.
    with pytest.raises(UserError, match=r"dim 300 \(from --dim\) is larger than landmarks \d+ \(from the profile "
                                        r"auto, which chose document-quality for this graph\)"):
        embed.main(spark, ["--input", str(edges), "--output", str(tmp_path / "other"), "--dim", "300"])
    # More missing ids than --max-missing allows: refused before the fit, nothing written.
    with pytest.raises(UserError, match=r"1 of the 6 requested ids \(16.7%\) are not nodes of the graph, more than "
                                        r"--max-missing 0.1 allows"):
        embed.main(spark, ["--input", str(edges), "--output", str(tmp_path / "strict"), "--max-missing", "0.1",
                           "--nodes", ",".join([*g.ids[:5], "not-a-node"])])
    assert not (tmp_path / "strict").exists()
    # A site's default profile reads the graph as directed: auto fits it as read.
    site = tmp_path / "site"
    site.mkdir()
    (site / "default.yaml").write_text("directed: true\nbad_lines: skip\ndim: 6\n")
    with open(edges, "a", encoding="utf-8") as fh:
        fh.write("not an edge\n")
    monkeypatch.setenv("SEPNE_CONF_DIR", str(site))
    caplog.clear()
    out = tmp_path / "site-run"
    assert embed.main(spark, ["--input", str(edges), "--output", str(out), "--nodes", ",".join(g.ids[:5]),
                              "--landmarks", "10", "--dim", "8"]) == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    used = manifest["settings"]
    assert (used["directed"], used["landmarks"], used["dim"]) == (True, 10, 8)
    # the default profile's reading and job settings apply under auto, as the manifest says
    assert used["bad_lines"] == "skip" and manifest["counts"]["bad_lines"] == 1
    # --landmarks under auto narrows dim as SepNE.fromProfile("auto", ...) does
    caplog.clear()
    out = tmp_path / "landmarks-run"
    assert embed.main(spark, ["--input", str(edges), "--output", str(out), "--nodes", ",".join(g.ids[:5]),
                              "--landmarks", "12", "--spark", "spark.executor.memory=9g"]) == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["spark_not_applied"] == {"spark.executor.memory": "9g"}  # the session ran already
    used = manifest["settings"]
    from sepne_spark.graph import load_graph
    from sepne_spark.model import SepNE

    est = SepNE.fromProfile("auto", load_graph(spark, str(edges), directed=True, bad_lines="skip"), landmarks=12)
    assert (used["landmarks"], used["dim"]) == (est.getLandmarks(), est.getDim()) == (12, 12)
    assert "--landmarks 12 gives vectors of 12 dimensions (at most the landmarks), not 128" in caplog.text


def test_auto_checks_the_flags_against_the_profile_it_chooses(tmp_path):
    """Without --profile the profile is chosen from the graph: at the start only the
    flags' own combinations are checked (a --dim above the default profile's 200
    landmarks is for auto's choice to accept or refuse), and --nodes refuses only the
    whole-graph steps the flags ask for."""
    from sepne_spark.errors import UserError

    edges = tmp_path / "edges.tsv"
    edges.write_text("a\tb\n", encoding="utf-8")
    out = str(tmp_path / "o")
    ns, settings, _ = embed._checked(["--input", str(edges), "--output", out, "--dim", "240"])
    assert settings.dim == 240
    with pytest.raises(UserError, match=r"dim 240 \(from --dim\) is larger than landmarks 200 \(from the profile "
                                        r"/\S+/conf/default\.yaml\)"):  # the file it came from
        embed._checked(["--input", str(edges), "--output", out, "--dim", "240", "--profile", "default"])
    with pytest.raises(UserError, match=r"dim 240 \(from --dim\) is larger than landmarks 230 \(from --landmarks\)"):
        embed._checked(["--input", str(edges), "--output", out, "--dim", "240", "--landmarks", "230"])
    embed._checked(["--input", str(edges), "--output", out, "--nodes", "a"])
    with pytest.raises(UserError, match="--propagation 3 smooths"):
        embed._checked(["--input", str(edges), "--output", out, "--nodes", "a", "--propagation", "3"])
    assert embed._checked(["--input", str(edges), "--output", out, "--profile", "AUTO"])[0].profile == "auto"


def test_the_steps_after_the_solve_in_words():
    from sepne_spark.pipeline import spectral_steps

    none = {"averageSteps": 0, "refineSteps": 0, "refineOperator": "transition", "propagation": 1}
    assert spectral_steps(none) == []
    assert spectral_steps({**none, "averageSteps": 3}) == ["3 averaging steps"]
    assert spectral_steps({**none, "refineSteps": 8, "propagation": 3}) == \
        ["8 refinement rounds", "propagation of 3 terms (5 products)"]
    assert spectral_steps({**none, "refineSteps": 48, "refineOperator": "pmi", "propagation": 3}) == \
        ["48 refinement rounds by the log-ratio matrix", "propagation of 3 terms (5 products)"]
    assert spectral_steps({**none, "refineOperator": "pmi"}) == []  # no rounds: the operator is moot
    assert spectral_steps({**none, "refineSteps": 1, "averageSteps": 1}) == ["1 refinement round", "1 averaging step"]
    assert spectral_steps({**none, "refineSteps": 64, "refineOperator": "pmi", "propagation": 3,
                           "averageSteps": 3}) == ["64 refinement rounds by the log-ratio matrix",
                                                   "propagation of 3 terms (5 products)", "3 averaging steps"]


def test_zero_embedding_advice_follows_the_settings():
    base = {"landmarkStrategy": "DD", "landmarks": 200, "metric": "A+A2", "window": 2}
    advice = embed.zero_advice(base, 2708)
    assert "GDS" in advice and "more --landmarks" in advice and "--window" in advice
    gds = embed.zero_advice({**base, "landmarkStrategy": "GDS", "window": 5}, 2708)
    assert "GDS" not in gds and "more --landmarks" in gds and "--window" not in gds
    assert "A+A2" in embed.zero_advice({**base, "metric": "I+A"}, 2708)
    assert "more --landmarks" not in embed.zero_advice({**base, "landmarks": 50}, 50)
    assert "--propagation 3" in advice
    assert "--propagation" not in embed.zero_advice({**base, "propagation": 3}, 2708)
    assert "of their set" in embed.zero_reason(base, "A+A2") and "out-edges" not in embed.zero_reason(base, "A+A2")
    assert "a node without out-edges has an empty row of M" in embed.zero_reason({**base, "directed": True}, "I+A")
    with_filter = embed.zero_reason({**base, "propagation": 3}, "I+A")
    assert "spectral filter" in with_filter and "component that holds no landmark" in with_filter
    assert "of their set" not in with_filter and "(I+A)" in with_filter
    averaged = embed.zero_reason({**base, "averageSteps": 3}, "A+A2")
    assert "the averaging (3 hops)" in averaged and "component that holds no landmark" in averaged
    assert "--unreached anchor" in advice  # the paper's zero rows: the anchor is the first tip
    anchored = {**base, "unreached": "anchor"}
    assert "no edge" in embed.zero_reason(anchored, "A+A2")
    assert "--unreached" not in embed.zero_advice(anchored, 2708) and "isolated" in embed.zero_advice(anchored, 2708)


def test_a_running_session_takes_the_jobs_spark_settings_for_the_run(spark, caplog):
    """main() in a session that runs already (a notebook's): the --spark values it can
    change hold for the run and are put back after it; the others are named in a warning."""
    from sepne_spark.jobs.common import session_settings

    before = spark.conf.get("spark.sql.shuffle.partitions")
    unset_before = spark.conf.get("spark.sql.files.maxPartitionNum")  # an optional setting without a value
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        with session_settings(spark, {"spark.sql.shuffle.partitions": "13", "spark.executor.memory": "9g",
                                      "spark.sql.files.maxPartitionNum": "7"}) as not_applied:
            assert not_applied == {"spark.executor.memory": "9g"}
            assert spark.conf.get("spark.sql.shuffle.partitions") == "13"
            assert spark.conf.get("spark.sql.files.maxPartitionNum") == "7"
    assert spark.conf.get("spark.sql.shuffle.partitions") == before
    assert spark.conf.get("spark.sql.files.maxPartitionNum") == unset_before  # no value again
    assert "spark.executor.memory=9g: the session runs already, so this changes nothing" in caplog.text
    # a value the session refuses: named, not applied, and what was set before it is put back
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        with session_settings(spark, {"spark.sql.shuffle.partitions": "3", "spark.sql.adaptive.enabled": "maybe"}) \
                as not_applied:
            assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
            assert not_applied == {"spark.sql.adaptive.enabled": "maybe"}
    assert spark.conf.get("spark.sql.shuffle.partitions") == before
    assert ("Spark setting spark.sql.adaptive.enabled=maybe (--spark or a profile's spark: block): the session "
            "refuses it") in caplog.text
    assert "runs already" not in caplog.text
    # A credential's value is neither logged nor recorded.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        with session_settings(spark, {"spark.hadoop.fs.s3a.secret.key": "SUPERSECRET"}) as not_applied:
            assert not_applied == {"spark.hadoop.fs.s3a.secret.key": "*********"}
        # An Azure account key, and a key of the site's own pattern (spark.redaction.regex)
        azure = "spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net"
        with session_settings(spark, {azure: "AZUREKEY", "spark.redaction.regex": "(?i)secret|corp[.]pem",
                                      "spark.hadoop.corp.pem": "PEMDATA"}) as not_applied:
            assert not_applied[azure] == not_applied["spark.hadoop.corp.pem"] == "*********"
    assert "spark.hadoop.fs.s3a.secret.key=*********: the session runs already" in caplog.text
    assert "SUPERSECRET" not in caplog.text and "AZUREKEY" not in caplog.text and "PEMDATA" not in caplog.text
    from sepne_spark.pipeline import AutoChoice

    choice = AutoChoice("social", {"spark": {"spark.hadoop.fs.s3a.access.key": "AKIA1", "spark.x": "1"}}, 10, 20, None)
    assert "AKIA1" not in choice.describe() and "'spark.x': '1'" in choice.describe()
