"""Bad input of every kind: a clear error naming what is at fault, and no data lost.

Bad lines of an edge list (field counts, weights that are not numbers, NaN, infinite or
negative, empty or null ids, empty files, missing paths) are tested in
``test_reading.py``; this file adds the cases around them: formats mixed in one
directory, unreadable paths, empty Parquet input, requested ids that are not in the
graph, parameters out of range, outputs that would overwrite data or the input, unsafe
YAML and ids made of shell metacharacters.
"""
from __future__ import annotations

import ast
import logging
import os
import re
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from tests.helpers import random_graph
from sepne_spark import settings as schema
from sepne_spark.errors import UserError
from sepne_spark.jobs import embed as embed_module
from sepne_spark.jobs.common import run_job
from sepne_spark.model import RequestedIdsError, SepNE, SepNEModel, requested_ids
from sepne_spark.reading import InputError, read_edges

ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(dim=4, landmarks=8, setSize=20, iters=3)
SMALL_FLAGS = ["--profile", "default", "--dim", "4", "--landmarks", "8", "--set-size", "20", "--iters", "3"]

#: Node ids that a shell, SQL or a format string would treat as code.
WEIRD_IDS = [
    "a;rm -rf x",
    "$(touch y)",
    "'\"",
    "`touch z`",
    "a|b && c > d",
    "' OR 1=1 --",
    "%s %n {0}",
    "back\\slash",
    "ünïcødé 节点 😀",
    "-rf",
]


embed_job = embed_module


def run_embed(argv: list[str]) -> int:
    """Run the embed job as ``spark-submit`` does; the logging set-up is left as it was."""
    logger = logging.getLogger("sepne_spark")
    handlers, level = list(logger.handlers), logger.level
    try:
        return run_job(embed_job.main, "sepne-embed", argv, session_conf=embed_job.session_conf)
    finally:
        for handler in logger.handlers[:]:
            if handler not in handlers:
                logger.removeHandler(handler)
        logger.setLevel(level)


def write_tsv(path: Path, rows: list[tuple]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{s}\t{d}\t{w}\n" for s, d, w in rows), encoding="utf-8")
    return str(path)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def weird(spark: SparkSession, tmp_path_factory) -> dict:
    """A 30-node graph whose first ids are :data:`WEIRD_IDS`, as a TSV file and fitted.

    Returns a dict with ``rows``, ``ids``, ``path`` (the TSV file), ``edges`` (read back
    with :func:`read_edges`) and ``model`` (fitted on ``edges``).
    """
    g = random_graph(30, 90, seed=3)
    rename = dict(zip(g.ids, WEIRD_IDS))
    rows = [(rename.get(s, s), rename.get(d, d), w) for s, d, w in g.rows]
    path = write_tsv(tmp_path_factory.mktemp("weird") / "edges.tsv", rows)
    edges, bad = read_edges(spark, path)
    assert bad == 0
    model = SepNE(**SMALL).fit(edges)
    return {"rows": rows, "ids": sorted(rename.get(i, i) for i in g.ids), "path": path, "edges": edges, "model": model}


# ------------------------------------------------------------- 1. reading bad input


def test_directory_mixing_parquet_and_text_names_both_files(spark, tmp_path):
    folder = tmp_path / "mixed"
    write_tsv(folder / "a.tsv", [("a", "b", 1.0)])
    pq.write_table(pa.table({"src": ["x"], "dst": ["y"]}), str(folder / "b.parquet"))
    for given in (str(folder), [str(folder / "a.tsv"), str(folder / "b.parquet")]):
        with pytest.raises(InputError) as info:
            read_edges(spark, given)
        msg = str(info.value)
        assert "mixes Parquet and text files" in msg and "a.tsv" in msg and "b.parquet" in msg


def test_unreadable_or_missing_path(spark, tmp_path):
    path = tmp_path / "locked.tsv"
    if os.geteuid() == 0:  # root reads a chmod 000 file: test a path that does not exist
        path = tmp_path / "no-such-dir" / "edges.tsv"
    else:
        write_tsv(path, [("a", "b", 1.0)])
        path.chmod(0)
    try:
        with pytest.raises(InputError) as info:
            read_edges(spark, str(path))
    finally:
        if path.exists():
            path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    msg = str(info.value)
    assert msg.startswith("cannot read ") and str(path) in msg


def test_parquet_with_two_columns_named_alike_but_for_case_names_the_file(spark, tmp_path):
    path = tmp_path / "edges.parquet"
    pq.write_table(pa.table({"src": ["a"], "dst": ["b"], "weight": [1.0], "Weight": [2.0]}), str(path))
    with pytest.raises(InputError, match=re.escape(f"{path} has two columns named 'weight' but for case")):
        read_edges(spark, str(path))


@pytest.mark.parametrize("kind", ["parquet without rows", "empty directory"])
def test_empty_parquet_or_directory(spark, tmp_path, kind):
    if kind == "parquet without rows":
        path = tmp_path / "empty.parquet"
        schema = pa.schema([("src", pa.string()), ("dst", pa.string()), ("weight", pa.float64())])
        pq.write_table(schema.empty_table(), str(path))
    else:
        path = tmp_path / "nothing"
        path.mkdir()
    with pytest.raises(InputError) as info:
        read_edges(spark, str(path))
    assert "no edges in" in str(info.value) and str(path) in str(info.value)


# ---------------------------------------------------------- 2. ids not in the graph


def test_missing_requested_ids_warn_and_the_rest_are_embedded(spark, weird, caplog):
    model: SepNEModel = weird["model"]
    landmark = model.landmark_ids[0]
    others = [i for i in weird["ids"] if i not in model.landmark_ids][:2]
    missing = [f"not-a-node-{i}" for i in range(7)]
    ids = spark.createDataFrame([(i,) for i in [landmark, *others, *missing, others[0]]], "id string")
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        rows = model.transform(ids).collect()
    assert sorted(r["id"] for r in rows) == sorted([landmark, *others])
    assert {r["id"]: r["is_landmark"] for r in rows}[landmark] is True
    records = [r for r in caplog.records if "requested ids" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    warnings = [records[0].getMessage()]
    assert "7 of the 10 requested ids are not nodes of the graph" in warnings[0]
    quoted = [m for m in missing if repr(m) in warnings[0]]
    assert quoted == missing[:5]  # up to five examples, the first in order


@pytest.mark.parametrize(
    "asked, words",
    [
        (["x1", "x2", "x3"], "none of the 3 requested ids is a node of the graph, e.g. ["),
        (["x1"], "the requested id 'x1' is not a node of the graph"),
        ([None], "the requested id is null"),
        (["x1", None], "none of the 2 requested ids is a node of the graph, e.g. ['x1'] and a null id"),
        ([], "no ids requested"),
    ],
)
def test_no_requested_id_in_graph_is_an_error(spark, weird, asked, words):
    ids = spark.createDataFrame([(i,) for i in asked], "id string")
    with pytest.raises(ValueError) as info:
        weird["model"].embed(ids, weird["model"]._graph)
    assert isinstance(info.value, RequestedIdsError) and isinstance(info.value, UserError)
    assert words in str(info.value)
    for i in asked:
        assert repr(i) in str(info.value) or i is None


def test_requested_ids_that_do_not_convert_count_as_missing(spark, caplog):
    vertices = spark.createDataFrame([(1,), (2,), (3,)], "id long")
    ids = spark.createDataFrame([("1",), ("abc",), ("999",), ("1",)], "id string")
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        found = requested_ids(ids, vertices, T.LongType()).collect()
    assert [r["id"] for r in found] == [1]
    msg = " ".join(r.getMessage() for r in caplog.records)
    assert "2 of the 3 requested ids" in msg and "'abc'" in msg and "'999'" in msg
    # a number with a fraction names no integer id (a cast would drop it: 2.5 -> 2)
    caplog.clear()
    numbers = spark.createDataFrame([(2.5,), (3.0,)], "id double")
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        found = requested_ids(numbers, vertices, T.LongType()).collect()
    assert [r["id"] for r in found] == [3]
    assert "1 of the 2 requested ids" in " ".join(r.getMessage() for r in caplog.records)


@pytest.mark.e2e
def test_job_nodes_partly_missing_warns_and_writes_the_rest(spark, weird, tmp_path, caplog):
    model_path = str(tmp_path / "model")
    weird["model"].save(model_path)  # the job embeds with it: no second fit
    landmark = weird["model"].landmark_ids[1]
    asked = [landmark, "missing;id", "$(missing)", "no'\"de"]
    nodes = tmp_path / "nodes.txt"
    nodes.write_text("\n".join(asked) + "\n", encoding="utf-8")
    out = tmp_path / "emb"
    argv = ["--input", weird["path"], "--output", str(out), "--nodes", f"@{nodes}", "--model", model_path]
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        assert embed_job.main(spark, argv + SMALL_FLAGS) == 0
    got = [(r["id"], r["is_landmark"]) for r in spark.read.parquet(str(out)).collect()]
    assert got == [(landmark, True)]  # only a landmark found: its landmark row
    msg = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "3 of the 4 requested ids" in msg and "'missing;id'" in msg and "'$(missing)'" in msg


@pytest.mark.e2e
def test_job_nodes_none_in_graph_exits_2(spark, weird, tmp_path, capsys):
    out = tmp_path / "emb"
    argv = ["--input", weird["path"], "--output", str(out), "--nodes", "ghost1,ghost2", *SMALL_FLAGS]
    with pytest.raises(UserError, match="none of the 2 requested ids is a node of the graph"):
        embed_job.main(spark, argv)
    assert run_embed(argv) == 2
    assert "sepne-embed: error: none of the 2 requested ids" in capsys.readouterr().err
    assert not out.exists()


# ---------------------------------------------------------- 3. parameters out of range


@pytest.mark.parametrize(
    "params, words",
    [
        (dict(landmarks=50), "landmarks=50 is more than the 30 nodes of the graph"),
        (dict(dim=16, landmarks=8), "dim=16 is more than landmarks=8"),
        (dict(setSize=0), "setSize: must be an integer >= 1, got 0"),
        (dict(lam=-0.5), "lam: must be a number >= 0, got -0.5"),
        (dict(eta=0.0), "eta: must be a number > 0, got 0.0"),
        (dict(eta=-1.0), "eta: must be a number > 0, got -1.0"),
    ],
)
def test_parameter_out_of_range_python_api(weird, params, words):
    with pytest.raises(ValueError) as info:
        SepNE(**{**SMALL, **params}).fit(weird["edges"])
    assert words in str(info.value)


def test_parameter_out_of_range_in_a_fit_param_map(weird):
    est = SepNE(**SMALL)
    with pytest.raises(ValueError, match="lam: must be a number >= 0, got -2.0"):
        est.fit(weird["edges"], {est.lam: -2.0})
    with pytest.raises(ValueError, match="dim=9 is more than landmarks=8"):
        est.fit(weird["edges"], {est.dim: 9})


def test_a_bad_row_raised_inside_a_spark_plan_becomes_an_input_error():
    # How Spark reports the check's raise_error: on one line of a longer text, with its
    # error class before it and its SQLSTATE after it (classic sessions and Spark Connect).
    from sepne_spark.errors import InputError
    from sepne_spark.model import _bad_rows_as_input_errors

    java = ("An error occurred while calling o2798.collectToPython.\n: java.util.concurrent.ExecutionException: "
            "org.apache.spark.SparkRuntimeException: [USER_RAISED_EXCEPTION] the edge list DataFrame has a bad "
            "row: weight -5.0 is negative (src 2, dst 3) SQLSTATE: P0001\n\tat java.base/java.util...")
    with pytest.raises(InputError) as info, _bad_rows_as_input_errors():
        raise RuntimeError(java)
    assert str(info.value) == "the edge list DataFrame has a bad row: weight -5.0 is negative (src 2, dst 3)"
    with pytest.raises(InputError, match=r"^the edge list DataFrame has a bad row: null weight \(src 1, dst 2\)$"):
        with _bad_rows_as_input_errors():
            raise RuntimeError("the edge list DataFrame has a bad row: null weight (src 1, dst 2)")
    other = RuntimeError("[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012")
    with pytest.raises(RuntimeError) as info, _bad_rows_as_input_errors():
        raise other
    assert info.value is other


def test_an_edge_dataframe_is_checked_as_a_file_is(spark):
    """``fit`` of a DataFrame: the wrong object or columns at the call, a weight that is
    not a number at the call, null ids and bad weights at the fit's first query, each
    named in an ``InputError``; ``transform`` of such a DataFrame fails at its first action."""
    from sepne_spark.errors import InputError

    est = SepNE(dim=2, landmarks=3, iters=2)
    rows = [(1, 2, 1.0), (2, 3, 1.0), (3, 4, 1.0), (4, 1, 1.0), (1, 3, 1.0)]
    with pytest.raises(TypeError, match="got the string '/data/edges.tsv': read a file with sepne_spark.load_graph"):
        est.fit("/data/edges.tsv")
    with pytest.raises(InputError, match=r"the DataFrame has columns \['a', 'b'\]"):
        est.fit(spark.createDataFrame([(1, 2)], "a long, b long"))
    # A name in another case is named, not taken (src) or silently left out (a weight).
    with pytest.raises(InputError, match=re.escape("it has 'Weight' for weight; rename them: "
                                                   "df.withColumnRenamed('Weight', 'weight')")):
        est.fit(spark.createDataFrame([(1, 2, 5.0)], "src long, dst long, Weight double"))
    # Two names that differ only in case are one to Spark: named at the call
    with pytest.raises(InputError, match=re.escape("columns whose names differ only in case ('weight' and "
                                                   "'Weight'), which Spark does not tell apart")):
        est.fit(spark.createDataFrame([(1, 2, 5.0, 1.0)], "src long, dst long, weight double, Weight double"))
    with pytest.raises(InputError, match=re.escape("it has 'SRC' for src; rename them")):
        est.fit(spark.createDataFrame([(1, 2)], "SRC long, dst long"))
    with pytest.raises(InputError, match="weight column is string: weights must be numbers"):
        est.fit(spark.createDataFrame([(1, 2, "abc")], "src long, dst long, weight string"))
    for ids, value, shown in (("array<long>", [1], "array<bigint>"), ("double", 1.5, "double"),
                              ("struct<a: long>", (1,), "struct<a:bigint>")):
        with pytest.raises(InputError, match=f"dst column is {shown}: node ids must be strings or integers"):
            est.fit(spark.createDataFrame([(1, value)], f"src long, dst {ids}"))
    from decimal import Decimal

    decimal_ids = spark.createDataFrame([(Decimal(s), Decimal(d), w) for s, d, w in rows],
                                        "src decimal(20,0), dst decimal(20,0), weight double")
    assert est.fit(decimal_ids).transform(decimal_ids).count() == 4  # whole numbers as decimals, as before
    with pytest.raises(InputError, match="the graph has no edges: the edge list is empty"):
        est.fit(spark.createDataFrame([], "src long, dst long"))
    loops = spark.createDataFrame([(1, 1), (2, 2), (3, 3)], "src long, dst long")  # only dropped self-loops
    with pytest.raises(InputError, match=r"the graph has no edges: .*holds only dropped self-loops and edges of weight 0"):
        SepNE(dim=1, landmarks=1, iters=2).fit(loops)
    with pytest.raises(InputError, match=r"the graph has no edges: .*only dropped self-loops"):
        SepNE.fromProfile("auto", loops)
    with pytest.raises(InputError, match=r"the graph has no edges: .*holds only dropped self-loops and edges of weight 0"):
        SepNE(dim=1, landmarks=1, iters=2, oneTaskNodes=0).fit(loops)  # the distributed path
    zero = spark.createDataFrame([(1, 2, 0.0), (2, 3, 0.0)], "src long, dst long, weight double")
    for one_task in (100_000, 0):  # weights of 0 are no edges, on either path
        with pytest.raises(InputError, match=r"the graph has no edges: .*edges of weight 0"):
            SepNE(dim=1, landmarks=1, iters=2, oneTaskNodes=one_task).fit(zero)
    bad = {
        "the edge list DataFrame has a bad row: null or empty node id (src null, dst 7)": rows + [(None, 7, 1.0)],
        "the edge list DataFrame has a bad row: weight -5.0 is negative (src 2, dst 3)":
            [(1, 2, 1.0), (2, 3, -5.0), (3, 4, 1.0), (4, 1, 1.0)],
        "has a bad row: weight NaN is NaN or infinite (src 1, dst 2)":
            [(1, 2, float("nan")), (2, 3, 1.0), (3, 4, 1.0), (4, 1, 1.0)],
        "has a bad row: null weight (src 1, dst 2)": [(1, 2, None), (2, 3, 1.0), (3, 4, 1.0), (4, 1, 1.0)],
    }
    from sepne_spark.graph import prepare_graph

    for words, data in bad.items():
        df = spark.createDataFrame(data, "src long, dst long, weight double")
        # the DataFrame, and the Graph that prepare_graph builds of it, alike
        for given in (df, prepare_graph(df, directed=False)):
            with pytest.raises(InputError) as info:  # Spark's error from inside the plan, as the library's
                est.fit(given)
            assert words in str(info.value) and str(info.value).endswith(")"), str(info.value)
            assert "SQLSTATE" not in str(info.value) and "USER_RAISED_EXCEPTION" not in str(info.value)
    huge = spark.createDataFrame([(1, 2, 1.0), (2, 3, 1e308), (3, 4, 1.0), (4, 1, 1.0)], "src long, dst long, weight double")
    with pytest.raises(InputError, match=re.escape("has a bad row: weight 1.0E308 is over 1e+100, where sums of "
                                                   "weights may overflow: divide every weight by one factor (src 2, dst 3)")):
        est.fit(huge)
    with pytest.raises(InputError, match="src column is double: node ids must be strings or integers"):
        prepare_graph(spark.createDataFrame([(1.5, 2)], "src double, dst long"), directed=True)
    # transform stays lazy: Spark's error at the first action, with the same words
    model = est.fit(spark.createDataFrame(rows, "src long, dst long, weight double"))
    bad_edges = spark.createDataFrame(bad["has a bad row: null weight (src 1, dst 2)"], "src long, dst long, weight double")
    out = model.transform(bad_edges)
    with pytest.raises(Exception, match=re.escape("has a bad row: null weight (src 1, dst 2)")):
        out.collect()  # a PySparkException, or py4j's error when it comes through a broadcast
    with pytest.raises(InputError, match=r"src \(bigint\) and dst \(string\) must have the same type"):
        est.fit(spark.createDataFrame([(1, "2")], "src long, dst string"))
    # integer ids of two widths are the same ids: read as bigint
    mixed = prepare_graph(spark.createDataFrame([(1, 2), (2, 3)], "src int, dst long"), directed=False)
    assert mixed.edges.schema["src"].dataType.simpleString() == mixed.edges.schema["dst"].dataType.simpleString() == "bigint"
    # Ids of another type than the model's: refused at the call, not by a cast in a Spark job.
    named = spark.createDataFrame([(str(s), str(d), w) for s, d, w in rows], "src string, dst string, weight double")
    words = "the graph's node ids are string but the model was fitted on bigint ids"
    with pytest.raises(InputError, match=words):
        model.transform(named)
    with pytest.raises(InputError, match=words):
        model.embed(spark.createDataFrame([("1",)], "id string"), named)
    narrow = spark.createDataFrame(rows, "src int, dst int, weight double")  # integers of another width match
    assert model.transform(narrow).count() == 4


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--landmarks", "50"], "landmarks 50 (from --landmarks) is more than the 30 nodes of the graph: give "
                                "--landmarks with at most 30"),
        (["--dim", "16"], "dim 16 (from --dim) is larger than landmarks 8 (from --landmarks)"),
        (["--set-size", "0"], "argument --set-size: must be an integer >= 1, got '0'"),
        (["--lam", "-1"], "argument --lam: must be a number >= 0, got '-1'"),
        (["--eta", "0"], "argument --eta: must be a number > 0, got '0'"),
        (["--eta", "-0.1"], "argument --eta: must be a number > 0, got '-0.1'"),
    ],
)
@pytest.mark.e2e
def test_parameter_out_of_range_job(spark, weird, tmp_path, capsys, flags, words):
    out = tmp_path / "emb"
    given = set(flags[::2])  # a flag of the case in place of SMALL_FLAGS' own (an option is given once)
    small = [w for pair in zip(SMALL_FLAGS[::2], SMALL_FLAGS[1::2]) if pair[0] not in given for w in pair]
    argv = ["--input", weird["path"], "--output", str(out), *small, *flags]
    # main() raises a UserError, or argparse exits with status 2 for a bad flag value
    with pytest.raises((UserError, SystemExit)) as info:
        embed_job.main(spark, argv)
    err = capsys.readouterr().err
    if isinstance(info.value, SystemExit):
        assert info.value.code == 2 and words in err
    else:
        assert words in str(info.value)
    assert run_embed(argv) == 2
    assert words in capsys.readouterr().err
    assert not out.exists()


# ------------------------------------------------------------- 4. output paths


@pytest.mark.e2e
def test_existing_output_is_kept_without_overwrite(spark, weird, tmp_path, capsys):
    out = tmp_path / "emb"
    (out / "dt=2020-01-01").mkdir(parents=True)
    (out / "part-00000.parquet").write_bytes(b"PAR1 old embeddings PAR1")
    (out / "_manifest.json").write_text('{"job": "embed", "old": true}')
    (out / "dt=2020-01-01" / "part-0.parquet").write_bytes(os.urandom(64))
    before = snapshot(out)
    argv = ["--input", weird["path"], "--output", str(out), *SMALL_FLAGS]
    with pytest.raises(UserError) as info:
        embed_job.main(spark, argv)
    # (--overwrite would not replace it either: a dated run beside an undated output)
    said = f"the output path {out} holds other data than an earlier output (dt=2020-01-01/)"
    assert said in str(info.value)
    assert run_embed(argv) == 2
    assert said in capsys.readouterr().err
    (out / "dt=2020-01-01" / "part-0.parquet").unlink()
    (out / "dt=2020-01-01").rmdir()
    before = snapshot(out)
    with pytest.raises(UserError, match=f"output path {out} already holds data; pass --overwrite"):
        embed_job.main(spark, argv)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emb"]  # no temporary left behind


@pytest.mark.parametrize(
    "layout, words",
    [
        ("equal", "is the input"),
        ("inside", "is inside the input"),
        ("inside-slash", "is inside the input"),
        ("file", "is the input"),
        ("glob", "is inside the input"),
        ("save-model", "--save-model path"),
        ("overwrite-input-inside", "replacing it would delete the input"),
        ("run-date-input-inside", "replacing it would delete the input"),
    ],
)
def test_output_and_input_overlap_is_refused_before_any_spark_work(tmp_path, layout, words):
    data = tmp_path / "data" / "edges"
    write_tsv(data / "part-0.tsv", [("a", "b", 1.0), ("b", "c", 1.0)])
    write_tsv(tmp_path / "data" / "dt=2024-05-01" / "e.tsv", [("a", "b", 1.0)])
    flags = {
        "equal": ["--input", str(data), "--output", str(data)],
        "inside": ["--input", str(data), "--output", str(data / "emb")],
        "inside-slash": ["--input", f"{data}/", "--output", f"{tmp_path}/data/./edges/emb/"],
        "file": ["--input", str(data / "part-0.tsv"), "--output", str(data / "part-0.tsv")],
        "glob": ["--input", f"{data}/*", "--output", str(data / "emb")],
        "save-model": ["--input", str(data), "--output", str(tmp_path / "emb"), "--save-model", str(data / "m")],
        "overwrite-input-inside": ["--input", str(data), "--output", str(tmp_path / "data"), "--overwrite"],
        "run-date-input-inside": ["--input", str(tmp_path / "data" / "dt=2024-05-01" / "e.tsv"),
                                  "--output", str(tmp_path / "data"), "--run-date", "2024-05-01"],
    }[layout]
    before = snapshot(tmp_path)
    with pytest.raises(UserError) as info:
        embed_job.main(None, flags + SMALL_FLAGS)  # no session: the check comes first
    msg = str(info.value)
    assert words in msg
    given_in, given_out = flags[1], flags[flags.index("--save-model" if "--save-model" in flags else "--output") + 1]
    assert given_in in msg and given_out.rstrip("/") in msg
    assert snapshot(tmp_path) == before


def test_bad_run_date_names_the_flag(tmp_path):
    with pytest.raises(UserError, match="--run-date '2024-13-01' is not a date YYYY-MM-DD"):
        embed_job.main(None, ["--input", "x.tsv", "--output", str(tmp_path / "o"), "--run-date", "2024-13-01"])


# ------------------------------------------------------------------- 5. safety


@pytest.mark.parametrize(
    "tag",
    ["!!python/object/apply:os.system", "!!python/object/new:os.system", "!!python/name:os.system"],
)
def test_yaml_profile_cannot_run_code(tmp_path, tag):
    marker = tmp_path / "created"
    profile = tmp_path / "evil.yaml"
    profile.write_text(f'dim: 16\nlandmarks: {tag} ["touch {marker}"]\n', encoding="utf-8")
    with pytest.raises(UserError) as info:
        schema.load_profile(str(profile))
    msg = str(info.value)
    assert str(profile) in msg and f"YAML tag {tag} at line 2" in msg and "not allowed" in msg
    with pytest.raises(UserError, match="not allowed"):
        embed_job.main(None, ["--profile", str(profile), "--output", str(tmp_path / "o")])
    assert not marker.exists()
    assert issubclass(schema._ProfileLoader, yaml.SafeLoader)


def _unsafe_uses(node: ast.AST) -> list[str]:
    """What in one syntax node could run a shell, a subprocess or code built from data."""
    banned_modules = {"subprocess", "pickle", "marshal", "shelve", "pty", "commands"}
    banned_builtins = {"eval", "exec", "compile", "__import__"}
    banned_os = {"system", "popen", "startfile", "spawnl", "spawnv", "spawnve", "execl", "execv", "execve", "execvp"}
    if isinstance(node, ast.Import):
        return [f"import {a.name}" for a in node.names if a.name.split(".")[0] in banned_modules]
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return [f"from {module} import"] if module.split(".")[0] in banned_modules else []
    if not isinstance(node, ast.Call):
        return []
    f = node.func
    owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
    out = [f"{f.id}()"] if isinstance(f, ast.Name) and f.id in banned_builtins else []
    if owner == "os" and f.attr in banned_os:
        out.append(f"os.{f.attr}()")
    out += ["shell=" for k in node.keywords if k.arg == "shell"]
    if owner == "yaml" and f.attr in ("load", "load_all") and not any(k.arg == "Loader" for k in node.keywords):
        out.append("yaml.load without a safe Loader")
    return out


def test_package_has_no_shell_or_code_execution():
    """No module of the package or its jobs runs a shell, a subprocess or evaluated code."""
    found = []
    for path in sorted([*ROOT.joinpath("sepne_spark").rglob("*.py"), *ROOT.joinpath("jobs").glob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {use}" for use in _unsafe_uses(node)]
    assert found == []


def test_shell_metacharacter_ids_are_plain_data(spark, weird, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a shell would create y or z here
    read = sorted({r[0] for r in weird["edges"].select("src").union(weird["edges"].select("dst")).collect()})
    assert set(WEIRD_IDS) <= set(read)
    assert read == sorted({s for s, _, _ in weird["rows"]} | {d for _, d, _ in weird["rows"]})
    got = [r["id"] for r in weird["model"].transform(weird["edges"]).select("id").collect()]
    assert sorted(got) == weird["ids"]  # every node exactly once
    assert len(got) == len(set(got)) == 30
    assert sorted(p.name for p in tmp_path.iterdir()) == []
