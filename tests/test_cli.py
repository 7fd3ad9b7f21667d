"""The command-line entry points report argument errors at once, before any JVM starts.

Each case runs a job in a subprocess whose ``JAVA_HOME`` and ``SPARK_HOME`` point at
an empty folder: had the job tried to start Spark, it would fail with a Java launch
error and exit 1. An exit status of 2 with the one promised line shows that the
arguments were checked first.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(tmp_path: Path, how: list[str], *args: str) -> subprocess.CompletedProcess:
    nowhere = tmp_path / "no-java"
    nowhere.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")}
    env.update(JAVA_HOME=str(nowhere), SPARK_HOME=str(nowhere), PYTHONPATH=str(ROOT), COLUMNS="400")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if "java" not in p.lower())
    return subprocess.run([sys.executable, *how, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


EMBED_FILE = [str(ROOT / "jobs" / "embed.py")]
EMBED_MODULE = ["-m", "sepne_spark.jobs.embed"]


@pytest.mark.parametrize(
    "how, args, words",
    [
        (EMBED_FILE, ["--inputs", "edges.tsv"], ["unrecognized arguments: --inputs", "did you mean --input?"]),
        (EMBED_MODULE, ["--dimension", "64"], ["unrecognized arguments: --dimension", "did you mean --dim?"]),
        # An abbreviation is refused (a later option sharing its prefix would change it).
        (EMBED_FILE, ["--out", "o"], ["unrecognized arguments: --out", "did you mean --output?"]),
        (EMBED_FILE, ["--gen-nodes", "-5", "--output", "o"], ["the generated graph's --gen-nodes must be positive, got -5"]),
        (EMBED_FILE, ["--gen-mixing", "2", "--output", "o"], ["the generated graph's --gen-mixing must be in [0, 1], got 2.0"]),
        (EMBED_FILE, ["--run-date", "2026-13-01", "--output", "o"], ["--run-date '2026-13-01' is not a date YYYY-MM-DD"]),
        # An empty date (a scheduler's template that gave nothing) is not "no date".
        (EMBED_FILE, ["--generated", "--run-date", "", "--output", "o"], ["--run-date '' is not a date YYYY-MM-DD"]),
        (EMBED_FILE, ["--generated", "--run-date", "2026-11-25", "--output", "out/dt=2026-11-25"],
         ["out/dt=2026-11-25 is a dt= partition already, and --run-date adds its own: give the dated output's root, "
          "--output "]),
        # Neither an input nor --generated, or no output: refused, never a generated graph
        # or a default folder by accident.
        (EMBED_FILE, ["--output", "o"], ["give the edge list to embed with --input (or --generated"]),
        (EMBED_FILE, ["--generated"], ["give the output folder with --output"]),
        (EMBED_FILE, ["--input", "e.tsv", "--generated", "--output", "o"],
         ["--generated describes the generated graph, which --input replaces"]),
        (EMBED_FILE, ["--generated", "--sep", ",", "--bad-lines=skip", "--output", "o"],
         ["--bad-lines, --sep tell how an --input file is read; the generated graph (--generated) is read from "
          "none: drop them"]),
        (EMBED_FILE, ["--input", "missing/edges.tsv", "--output", "o"], ["--input missing/edges.tsv does not exist"]),
        (EMBED_FILE, ["--input", "missing/*.tsv", "--output", "o"], ["--input missing/*.tsv: no file matches"]),
        (EMBED_FILE, ["--dim", "abc"], ["argument --dim", "expected an integer"]),
        (EMBED_FILE, ["--profile", "no-such-profile", "--output", "o"], ["profile 'no-such-profile' not found", "document-quality"]),
        (EMBED_FILE, ["--generated", "--nodes", "@missing.txt", "--output", "o"], ["--nodes file missing.txt does not exist"]),
        (EMBED_FILE, ["--header", "no", "--src-col", "paper", "--output", "o"],
         ["src_col (--src-col) 'paper' names a column, which needs a header line", "drop --header no"]),
        (EMBED_FILE, ["--src-col", "1", "--dst-col", "1", "--output", "o"],
         ["src_col and dst_col (--src-col, --dst-col) name the same column (1)"]),
        (EMBED_FILE, ["--nodes", "1,2", "--propagation", "3", "--output", "o"], ["--propagation 3", "embeds whole graphs only"]),
        (EMBED_FILE, ["--nodes", "1,2", "--profile", "social", "--output", "o"],
         ["propagation 3 (from --profile social) smooths", "refine_steps 8 (from --profile social) refines",
          "give --propagation 1 and --refine-steps 0"]),
        (EMBED_FILE, ["--nodes", "1,2", "--profile", "document-quality", "--output", "o"],
         ["propagation 3 (from --profile document-quality) smooths",
          "average_steps 6 (from --profile document-quality) averages every vector over its 6-hop neighbourhood",
          "give --propagation 1 and --average-steps 0"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["classify", "--embeddings", "emb", "--labels", "l.tsv"],
         ["sepne-evaluate: error:", "--embeddings emb does not exist"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["clasify"], ["sepne-evaluate: error:", "invalid choice: 'clasify'",
                                                            "(did you mean classify?)"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["classify", "--task", "linkpred", "--edges", "e.tsv"],
         ["the task is given twice, as classify and as --task linkpred: give one"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["classify", "--task", "linkpred", "--help"],
         ["the task is given twice, as classify and as --task linkpred: give one"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["--tas", "linkpred"], ["did you mean --task?"]),
        # A mistyped option of a task is named, not reported as the required one missing.
        ([str(ROOT / "jobs" / "evaluate.py")], ["classify", "--embedings", "emb", "--labels", "l.tsv"],
         ["unrecognized arguments: --embedings", "did you mean --embeddings?"]),
        # The embed job's --input names the edge list here too (not --input-format, of which
        # it is a prefix), and the message says the flag as written.
        ([str(ROOT / "jobs" / "evaluate.py")], ["linkpred", "--input", "missing.tsv"],
         ["--input missing.tsv does not exist"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["linkpred", "--edges", "missing.tsv"],
         ["--edges missing.tsv does not exist"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["classify", "--embeddings", "emb", "--labels", "l.tsv", "--threads", "0"],
         ["argument --threads: must be a whole number >= 1, got '0'"]),
        # Options before the task: the task comes first.
        ([str(ROOT / "jobs" / "evaluate.py")], ["--embeddings", "emb", "--labels", "l.tsv"],
         ["invalid choice: 'emb'", "the task comes first: sepne-evaluate {classify,reconstruct,linkpred}"]),
        ([str(ROOT / "jobs" / "generate.py")], ["--output", "g", "--model", "rmat", "--scale", "99"],
         ["sepne-generate: error:", "scale must be in [1, 62], got"]),
        # The jobs' own numbers are refused in the settings' words, NaN too.
        ([str(ROOT / "jobs" / "generate.py")], ["--output", "g", "--nodes", "1e5"],
         ["argument --nodes: expected an integer, got '1e5'"]),
        ([str(ROOT / "jobs" / "generate.py")], ["--output", "g", "--mixing", "nan"],
         ["argument --mixing: must be a finite number, got 'nan'"]),
        (EMBED_FILE, ["--generated", "--output", "out", "--gen-nodes", "abc"],
         ["argument --gen-nodes: expected an integer, got 'abc'"]),
        (EMBED_FILE, ["--generated", "--output", "out", "--gen-avg-degree", "x"],
         ["argument --gen-avg-degree: expected a number, got 'x'"]),
        # An option of one value given twice: argparse would keep the last without a word.
        (EMBED_FILE, ["--generated", "--output", "out", "--output=out2"],
         ["--output is given twice: give it once (only the last would count)"]),
        (EMBED_FILE, ["--generated", "--output", "out", "--spark", "spark.executor.memory=lots"],
         ["argument --spark: spark.executor.memory='lots' is not a size Spark reads"]),
        (EMBED_FILE, ["--generated", "--output", "out", "--spark", "spark.driver.memory=4096"],
         ["argument --spark: spark.driver.memory='4096' is not a heap size the driver's JVM takes"]),
        (EMBED_FILE, ["--generated", "--output", "out", "--spark", "spark.a=1", "--spark", "spark.a=2"],
         ["argument --spark: spark.a is given twice, as '1' and '2': give it once"]),
        (EMBED_FILE, ["--input", "README.md", "--input", "README.md", "--output", "out"],
         ["--input README.md is given twice: give each edge list once"]),
        (EMBED_FILE, ["--generated", "--generated", "--output", "out", "--overwrite", "--overwrite", "--gen-nodes",
                      "-1"], ["the generated graph's --gen-nodes must be positive"]),  # a switch twice says it once
        (EMBED_FILE, ["--generated", "--output", "out", "--directed", "--undirected"],
         ["--directed and --undirected are given together: give one of them"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["linkpred", "--edges", "a.tsv", "--input", "b.tsv"],
         ["--edges and --input are given together: give one of them"]),
        ([str(ROOT / "jobs" / "evaluate.py")], ["classify", "--embeddings", "e", "--labels", "a", "--labels", "b"],
         ["--labels is given twice"]),
    ],
)
def test_argument_errors_exit_2_in_one_line_before_spark(tmp_path, how, args, words):
    proc = _run(tmp_path, how, *args)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert len(lines) == 1, proc.stderr[-3000:]
    name = "sepne-" + how[-1].rsplit(".", 1)[-1] if how[0] == "-m" else "sepne-" + Path(how[-1]).stem
    assert lines[0].startswith(f"{name}: error: "), lines
    for word in words:
        assert word in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_classify_without_scikit_learn_says_which_extra_before_spark(tmp_path):
    """Node classification needs the ``eval`` extra; without it, one line naming it, at once."""
    (tmp_path / "emb").mkdir()
    (tmp_path / "l.tsv").write_text("a\tx\n")
    hide = ("import sys; sys.modules['sklearn'] = None; "
            "from sepne_spark.jobs.evaluate import cli; raise SystemExit(cli())")
    proc = _run(tmp_path, ["-c", hide], "classify", "--embeddings", "emb", "--labels", "l.tsv")
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-3000:]
    assert lines[0] == ('sepne-evaluate: error: node classification needs scikit-learn: '
                        'pip install "sepne-spark[eval]"'), lines


def test_help_lists_every_profile_and_the_default_profiles_values(tmp_path):
    from sepne_spark import settings as schema

    proc = _run(tmp_path, EMBED_FILE, "--help")
    assert proc.returncode == 0, proc.stderr[-3000:]
    profile_line = next(ln for ln in proc.stdout.splitlines() if ln.lstrip().startswith("--profile"))
    for name in sorted(p.stem for p in (ROOT / "conf").glob("*.yaml")):
        assert name in profile_line, name
    # The default profile's value (what --help shows and SepNE() uses), not only the built-in one.
    set_size = next(ln for ln in proc.stdout.splitlines() if ln.lstrip().startswith("--set-size"))
    expected = schema.resolve({}, schema.load_profile(None)).set_size
    assert f"default: {expected}" in set_size, set_size


def test_help_says_when_the_default_profile_cannot_be_read(tmp_path, monkeypatch):
    """A site's broken ``default.yaml`` is not hidden by ``--help``: it shows the built-in
    defaults and ends with the error a run would stop with."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "default.yaml").write_text("k: [\n")
    monkeypatch.setenv("SEPNE_CONF_DIR", str(site))
    proc = _run(tmp_path, EMBED_FILE, "--help")
    assert proc.returncode == 0, proc.stderr[-3000:]
    tail = " ".join(proc.stdout.split())
    assert "The default profile cannot be read, so the defaults above are the built-in ones" in tail, tail
    assert f"{site / 'default.yaml'}: not valid YAML" in tail, tail


def test_overwrite_refuses_a_folder_holding_other_data(tmp_path):
    """``--overwrite`` replaces an earlier output (part files, hidden files), not a folder
    that holds other datasets or files: those are named, before Spark starts."""
    proj = tmp_path / "proj"
    (proj / "emb_a").mkdir(parents=True)
    (proj / "notes.txt").write_text("mine")
    proc = _run(tmp_path, EMBED_FILE, "--generated", "--output", "proj", "--overwrite")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip() == ("sepne-embed: error: the output path proj holds other data than an earlier output "
                                   "(emb_a/, notes.txt): replacing it would delete that with the folder; give a "
                                   "folder of its own, or remove those first"), proc.stderr
    # Without --overwrite: named the same way, not with a hint to pass --overwrite, which
    # would be refused in turn; and so is an input inside the output.
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed

    with pytest.raises(UserError, match=r"proj holds other data than an earlier output \(emb_a/, notes.txt\)"):
        embed._checked(["--generated", "--output", str(proj)])
    (proj / "edges.tsv").write_text("1\t2\n")
    with pytest.raises(UserError, match=r"the input \S*edges.tsv is inside the output path \S*proj: replacing it "
                                        r"would delete the input; choose another location"):
        embed._checked(["--input", str(proj / "edges.tsv"), "--output", str(proj)])
    (proj / "edges.tsv").unlink()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "thesis.tex").write_text("mine")
    with pytest.raises(UserError, match=r"the --save-model path \S*other holds no saved model \(thesis.tex\)"):
        embed._checked(["--generated", "--output", str(tmp_path / "new"), "--save-model", str(tmp_path / "other")])
    # A file in the output's place, and a --save-model path that holds no model.
    (tmp_path / "notes.txt").write_text("mine")
    proc = _run(tmp_path, EMBED_FILE, "--generated", "--output", "notes.txt", "--overwrite")
    assert proc.returncode == 2 and "the output path notes.txt is a file" in proc.stderr, proc.stderr[-3000:]
    (tmp_path / "mymodel").mkdir()
    (tmp_path / "mymodel" / "thesis.tex").write_text("mine")
    proc = _run(tmp_path, EMBED_FILE, "--generated", "--output", "emb", "--save-model", "mymodel", "--overwrite")
    assert proc.returncode == 2 and "the --save-model path mymodel holds no saved model (thesis.tex)" in proc.stderr, \
        proc.stderr[-3000:]
    # An earlier output's own files do not stop it (the run then gets to Spark, absent here).
    for extra in ("emb_a", "notes.txt"):
        (proj / extra).rmdir() if extra == "emb_a" else (proj / extra).unlink()
    for name in ("part-00000-1f.snappy.parquet", "_SUCCESS", "_manifest.json", ".part-00000-1f.snappy.parquet.crc"):
        (proj / name).write_text("")
    proc = _run(tmp_path, EMBED_FILE, "--generated", "--output", "proj", "--overwrite")
    assert proc.returncode == 1 and "sepne-embed: failed:" in proc.stderr, proc.stderr[-3000:]
    # Part files of text (sepne-generate's tables, another tool's CSV): not an embedding output.
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "part-00000-2a-c000.csv").write_text("1\t0\n")
    with pytest.raises(UserError, match=r"the output path \S*labels holds a dataset of another format "
                                        r"\(part-00000-2a-c000.csv; an earlier output's part files end in \.parquet\)"):
        embed._checked(["--generated", "--output", str(labels), "--overwrite"])


def test_classify_reads_the_labels_before_spark(tmp_path):
    """The labels are read on the driver: a bad line is reported before Spark starts."""
    pytest.importorskip("sklearn")
    (tmp_path / "emb").mkdir()
    (tmp_path / "labels.tsv").write_text("1\ta\n2\tb\n3\tc\td\n")
    proc = _run(tmp_path, [str(ROOT / "jobs" / "evaluate.py")], "classify", "--embeddings", "emb",
                "--labels", "labels.tsv")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1] == (
        "sepne-evaluate: error: labels.tsv:3: expected node<TAB>label, found 3 fields: '3\\tc\\td'"), proc.stderr


@pytest.mark.parametrize("columns, args, words", [
    (("id", "embedding"), ["--vectors", "context"], "emb: has no context column (needed by the chosen vectors; "
                                                    "embed with --context)"),
    (("id", "embedding"), ["--use-context"], "emb: has no context column"),
    (("node", "embedding"), [], "emb: embeddings need columns id and embedding; missing id"),
    (None, [], "emb: part-00000.tsv is not a Parquet file; --embeddings takes the Parquet output of sepne-embed"),
])
def test_embeddings_without_the_columns_a_task_reads_are_refused_before_spark(tmp_path, columns, args, words):
    """A local Parquet's schema is read before Spark starts: an embedding without the
    columns classify reads (a context vector for --vectors context) is one line, exit 2."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "emb").mkdir()
    if columns is None:  # an edge list's folder given for the embeddings
        (tmp_path / "emb" / "part-00000.tsv").write_text("1\t2\n")
    else:
        pq.write_table(pa.table({columns[0]: ["1", "2"], columns[1]: [[0.1, 0.2], [0.3, 0.4]]}),
                       tmp_path / "emb" / "part-00000.parquet")
    (tmp_path / "labels.tsv").write_text("1\ta\n2\tb\n")
    proc = _run(tmp_path, [str(ROOT / "jobs" / "evaluate.py")], "classify", "--embeddings", "emb",
                "--labels", "labels.tsv", *args)
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sepne-evaluate: error: {words}"), proc.stderr


def test_a_graph_folder_given_for_its_edges_is_refused_before_spark(tmp_path, caplog):
    """The folder sepne-generate writes (edges/, labels/) given as the edge list: named,
    with the folder meant; a folder of dt= partitions is an edge list Spark reads."""
    for table in ("edges", "labels"):
        (tmp_path / "graph" / table).mkdir(parents=True)
        (tmp_path / "graph" / table / "part-00000.tsv").write_text("1\t2\n")
    for how, flag in ((EMBED_FILE, "--input"), ([str(ROOT / "jobs" / "evaluate.py"), "linkpred"], "--edges")):
        proc = _run(tmp_path, how, flag, "graph", "--output" if flag == "--input" else "--fraction",
                    "out" if flag == "--input" else "0.1")
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert proc.stderr.strip().splitlines()[-1].endswith(
            f"error: {flag} graph holds folders (edges/, labels/) and no data file: give the edge list's own folder, "
            "e.g. graph/edges"), proc.stderr
    from sepne_spark.errors import UserError
    from sepne_spark.jobs.common import check_edge_folders

    (tmp_path / "dated" / "dt=2026-12-01").mkdir(parents=True)
    check_edge_folders([str(tmp_path / "dated"), str(tmp_path / "graph" / "edges")], "--input")
    # Several partitions are read as one edge list: said, with one partition to give.
    (tmp_path / "dated" / "dt=2026-12-02").mkdir()
    with caplog.at_level("WARNING", logger="sepne_spark"):
        check_edge_folders([str(tmp_path / "dated")], "--input")
    assert re.search(r"--input \S*dated holds 2 partitions \(dt=2026-12-01, dt=2026-12-02\): all of them are read, "
                     r"as one edge list; give one partition's folder to read one, e.g. \S*dated/dt=2026-12-02",
                     caplog.text), caplog.text
    caplog.clear()
    for kind in ("type=a", "type=b"):  # partitions of another key: an edge list meant whole, no warning
        (tmp_path / "kinds" / kind).mkdir(parents=True)
    with caplog.at_level("WARNING", logger="sepne_spark"):
        check_edge_folders([str(tmp_path / "kinds")], "--input")
    assert "partitions" not in caplog.text
    # A file that is no edge list beside the part files (Spark would read its lines as
    # edges, and its first line could be taken for the header): named. Hidden files are not.
    (tmp_path / "graph" / "edges" / "README.md").write_text("this is a readme about edges\n")
    (tmp_path / "graph" / "edges" / "_schema.json").write_text("{}")
    with pytest.raises(UserError, match=r"--input \S*edges holds files that are no edge list \(README.md\), which "
                                        r"Spark would read as edges: move them out of the folder, or give the edge "
                                        r"files themselves \(a glob such as \S*edges/\*.tsv\)"):
        check_edge_folders([str(tmp_path / "graph" / "edges")], "--input")
    # A dataset's folder (an edge list and its labels, as the paper's document graphs
    # come): named with the file to give. Chunks of one edge list are not.
    cora = tmp_path / "cora"
    cora.mkdir()
    for name in ("edges.tsv", "labels.tsv"):
        (cora / name).write_text("1\t2\n")
    with pytest.raises(UserError, match=r"--input \S*cora holds edges.tsv and other files \(labels.tsv\), which "
                                        r"Spark would read as edges too: give the edge list itself, e.g. \S*cora/edges.tsv"):
        check_edge_folders([str(cora)], "--input")
    (cora / "labels.tsv").rename(cora / "edges-2.tsv")
    (cora / "more.tsv").write_text("3\t4\n")
    check_edge_folders([str(cora)], "--input")


def test_an_input_folder_with_a_file_that_cannot_be_read_is_refused_before_spark(tmp_path):
    """Spark's listing of a folder leaves out a link to a file that is gone (and the job
    would embed the rest of the graph): the file is named, before Spark starts; the
    files Spark skips (_SUCCESS, hidden ones) are not looked at."""
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed

    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "part-00000.tsv").write_text("1\t2\n")
    (parts / "_SUCCESS").symlink_to(tmp_path / "gone-too")
    embed._checked(["--input", str(parts), "--output", str(tmp_path / "o")])
    (parts / "part-00001.tsv").symlink_to(tmp_path / "gone.tsv")
    for flags in (["--input", "parts"], ["--input", "parts/*.tsv"]):
        proc = _run(tmp_path, EMBED_FILE, *flags, "--output", "o")
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert proc.stderr.strip() == (f"sepne-embed: error: --input {flags[1]}: {Path('parts') / 'part-00001.tsv'} "
                                       f"cannot be read: it links to {tmp_path / 'gone.tsv'}, which does not exist")
    proc = _run(tmp_path, [str(ROOT / "jobs" / "evaluate.py"), "linkpred"], "--edges", "parts", "--fraction", "0.1")
    assert proc.returncode == 2 and "--edges parts: parts/part-00001.tsv cannot be read" in proc.stderr, proc.stderr
    # Empty files only, over all the paths given: nothing for Spark to read.
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(UserError, match=r"--input \S*empty.tsv is empty \(0 bytes\)"):
        embed._checked(["--input", str(tmp_path / "empty.tsv"), "--output", str(tmp_path / "o")])
    (tmp_path / "none").mkdir()
    for name in ("part-00000.tsv", "part-00001.tsv", "_SUCCESS"):
        (tmp_path / "none" / name).write_text("")
    for given in ([str(tmp_path / "none")], [str(tmp_path / "none" / "part-*")],
                  [str(tmp_path / "empty.tsv"), str(tmp_path / "none" / "part-00000.tsv")]):
        with pytest.raises(UserError, match=r"every file is empty \(2 of 0 bytes: \S*(empty|part-00000).tsv, "):
            embed._checked(["--input", *given, "--output", str(tmp_path / "o")])
    # One file with lines among them is enough; _SUCCESS (0 bytes), matched by a glob, is no data file.
    (tmp_path / "none" / "part-00001.tsv").write_text("1\t2\n")
    for given in ([str(tmp_path / "none" / "*")], [str(tmp_path / "empty.tsv"), str(tmp_path / "none")],
                  [str(tmp_path / "none" / "part-0000{0,1}.tsv")]):  # Hadoop's {a,b} alternatives
        embed._checked(["--input", *given, "--output", str(tmp_path / "o")])
    with pytest.raises(UserError, match=r"part-0000\{7,8\}.tsv: no file matches$"):
        embed._checked(["--input", str(tmp_path / "none" / "part-0000{7,8}.tsv"), "--output", str(tmp_path / "o")])
    (tmp_path / "e[1].tsv").write_text("1\t2\n")  # a name Spark reads as a pattern
    with pytest.raises(UserError, match=r"e\[1\].tsv: no file matches; a file of that very name exists, but Spark "
                                        r"reads \*, \?, \[ \] and \{ \} in a path as a pattern"):
        embed._checked(["--input", str(tmp_path / "e[1].tsv"), "--output", str(tmp_path / "o")])
    # A linked folder is read through, as Hadoop lists it (and a link back up the tree once).
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "notes.tsv").write_text("")
    (tmp_path / "linked" / "sub").symlink_to(tmp_path / "none")
    (tmp_path / "none" / "loop").symlink_to(tmp_path / "linked")
    embed._checked(["--input", str(tmp_path / "linked"), "--output", str(tmp_path / "o")])


def test_an_input_of_another_format_than_the_one_given_is_refused_before_spark(tmp_path):
    """--input-format parquet on a text file, or a text format on a Parquet file: named
    before Spark starts (Spark would fail in a task, its stack trace in the log first)."""
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed

    (tmp_path / "good.tsv").write_text("1\t2\n")
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "part-0.parquet").write_bytes(b"PAR1" + b"\0" * 8 + b"PAR1")
    proc = _run(tmp_path, EMBED_FILE, "--input", "good.tsv", "--input-format", "parquet", "--output", "o")
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "sepne-embed: error: --input good.tsv: good.tsv is not a Parquet file (it does not start with PAR1): give "
        "--input-format with the files' format, or auto, which tells them apart"), proc.stderr
    with pytest.raises(UserError, match=r"part-0.parquet is a Parquet file, not tsv text"):
        embed._checked(["--input", str(tmp_path / "parts"), "--input-format", "tsv", "--output", str(tmp_path / "o")])
    embed._checked(["--input", str(tmp_path / "parts"), "--input-format", "parquet", "--output", str(tmp_path / "o")])
    embed._checked(["--input", str(tmp_path / "good.tsv"), "--input-format", "tsv", "--output", str(tmp_path / "o")])
    # Text of another separator than the format's: its first line says so, before Spark too.
    with pytest.raises(UserError, match=r"good.tsv:1: expected 2 or 3 fields, found 1 .*split at ','"):
        embed._checked(["--input", str(tmp_path / "good.tsv"), "--input-format", "csv", "--output", str(tmp_path / "o")])


def test_a_run_date_run_over_another_dates_model_is_refused_before_spark(tmp_path):
    """--run-date with a local --save-model that holds another date's model: refused at
    once (the check with Spark stays for remote paths and for main() in a notebook)."""
    (tmp_path / "model" / "metadata").mkdir(parents=True)
    (tmp_path / "model" / "metadata" / "part-00000").write_text('{"runDate": "2026-12-02"}\n', encoding="utf-8")
    proc = _run(tmp_path, EMBED_FILE, "--generated", "--output", "emb", "--run-date", "2026-12-03", "--save-model", "model")
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "sepne-embed: error: --save-model path model holds the model of --run-date 2026-12-02"), proc.stderr


def test_a_valid_command_line_does_get_to_spark(tmp_path):
    """The counter-check: with arguments that pass, the same set-up does try to start
    Java (and fails for want of one), so the cases above really stopped before it."""
    proc = _run(tmp_path, EMBED_FILE, "--gen-nodes", "50", "--output", str(tmp_path / "out"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "sepne-embed: failed:" in proc.stderr


def test_the_check_before_spark_holds_back_warnings_the_job_gives_once(tmp_path, caplog):
    """``session_conf`` checks the settings before Spark starts and ``main`` checks them
    again: a settings warning is logged by the second check only."""
    import logging

    from sepne_spark.jobs import embed, evaluate

    edges = tmp_path / "edges.tsv"
    edges.write_text("a\tb\n")
    # a combination the settings warn about (under a named profile: auto checks it once chosen)
    odd = ["--landmark-strategy", "GDS", "--metric", "I+A", "--profile", "default"]
    checks = [
        (embed.session_conf, lambda: embed._checked(["--input", str(edges), "--output", str(tmp_path / "o"), *odd]),
         ["--input", str(edges), "--output", str(tmp_path / "o"), *odd]),
        (evaluate.session_conf, None, ["linkpred", "--edges", str(edges), *odd]),
    ]
    for session_conf, again, argv in checks:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="sepne_spark.settings"):
            session_conf(argv)
            assert not [r for r in caplog.records if r.name == "sepne_spark.settings"], argv
            if again:
                again()
                warned = [r for r in caplog.records if r.name == "sepne_spark.settings"]
                assert len(warned) == 1 and "nearly diagonal" in warned[0].getMessage()


@pytest.mark.unit
def test_a_saved_model_overrides_defaults_quietly_and_given_values_with_a_warning(caplog):
    """--model: a setting the command line gave (a flag, or a --profile named) that the
    model overrides is named in a warning; the defaults (built-in, auto's) give way quietly."""
    import logging

    from sepne_spark import settings as schema
    from sepne_spark.jobs import embed

    saved = {param: getattr(schema.resolve({}, {"dim": 8, "landmarks": 10}), name)
             for param, name in schema.MODEL_PARAMS.items()}
    for argv, warned in ((["--nodes", "1,2"], set()),
                         (["--nodes", "1,2", "--landmarks", "200"], {"landmarks"}),
                         (["--nodes", "1,2", "--profile", "document"], {"dim", "landmarks"})):
        ns = embed.build_parser().parse_args(["--output", "out"] + argv)
        settings = schema.resolve(ns, schema.load_profile(ns.profile))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="sepne_spark"):
            used = embed._with_model_params(settings, saved, ns)
        assert (used.dim, used.landmarks) == (8, 10)
        named = {m.split()[1] for m in caplog.messages if m.startswith("--model: ")}
        assert warned <= named and not named - warned - set(schema.load_profile("document")), (argv, caplog.messages)
        if not warned:
            assert not named, caplog.messages
    # k and d given as flags are left out of the settings with --model (_checked): a flag
    # that differs from the model is named even where the rest agrees with it.
    ns = embed.build_parser().parse_args(["--output", "out", "--nodes", "1,2", "--dim", "64", "--landmarks", "10"])
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        used = embed._with_model_params(schema.resolve({}, {"dim": 8, "landmarks": 10}), saved, ns)
    assert (used.dim, used.landmarks) == (8, 10)
    assert [m for m in caplog.messages if m.startswith("--model: ")] == ["--model: dim is the model's 8, not 64"]


@pytest.mark.unit
def test_input_given_several_times_reads_every_file_named(tmp_path):
    from sepne_spark.jobs import embed

    for name in ("a.tsv", "b.tsv", "c.tsv"):
        (tmp_path / name).write_text("1\t2\n")
    files = [str(tmp_path / n) for n in ("a.tsv", "b.tsv", "c.tsv")]
    ns = embed.build_parser().parse_args(["--input", files[0], "--input", *files[1:], "--output", "o",
                                          "--spark", "spark.a=1", "--spark", "spark.b=2"])
    assert ns.input == files


@pytest.mark.unit
def test_an_empty_nodes_list_is_refused(tmp_path):
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed

    for empty in ("", " , ", "@"):
        with pytest.raises(UserError, match="names no id"):
            embed._checked(["--generated", "--nodes", empty, "--output", str(tmp_path / "out")])
    ids = tmp_path / "ids.txt"
    for text in ("", "\n  \n# a comment\n", "\ufeff\n", "# ids\nID\n"):  # a header alone: no id either
        ids.write_text(text, encoding="utf-8")
        with pytest.raises(UserError, match=f"--nodes file {ids} holds no id"):
            embed._checked(["--generated", "--nodes", f"@{ids}", "--output", str(tmp_path / "out")])
    ids.write_text("# wanted\n7\n", encoding="utf-8")
    embed._checked(["--generated", "--nodes", f"@{ids}", "--output", str(tmp_path / "out")])
    # --max-missing: a fraction, and only beside --nodes (refused before Spark starts)
    for bad in ("1.5", "-0.1", "nan"):
        with pytest.raises(UserError, match=f"--max-missing {bad}: give a fraction from 0 to 1"):
            embed._checked(["--generated", "--nodes", "7", "--max-missing", bad, "--output", str(tmp_path / "out")])
    with pytest.raises(UserError, match="--max-missing is the share of the requested ids [(]--nodes[)]"):
        embed._checked(["--generated", "--max-missing", "0", "--output", str(tmp_path / "out")])
    embed._checked(["--generated", "--nodes", "7", "--max-missing", "0", "--output", str(tmp_path / "out")])
    # An edge list given as ids (a file, or a folder's gzip'd file): several fields on a line
    import gzip

    edges = tmp_path / "edges"
    edges.mkdir()
    (edges / "a.tsv").write_text("# ids\nnode\n", encoding="utf-8")
    with gzip.open(edges / "b.tsv.gz", "wt") as f:
        f.write("# edges\n1\t2\n2\t3\n")
    (tmp_path / "e.csv").write_text("src,dst\n1,2\n", encoding="utf-8")
    for given, where, line in ((edges, "b.tsv.gz", 2), (tmp_path / "e.csv", tmp_path / "e.csv", 1)):
        with pytest.raises(UserError, match=f"--nodes file {where}, line {line}: .* holds several fields; --nodes "
                                            "@FILE takes one id per line"):
            embed._checked(["--generated", "--nodes", f"@{given}", "--output", str(tmp_path / "out")])


@pytest.mark.unit
def test_run_date_into_an_unpartitioned_output_is_refused(tmp_path):
    """--run-date adds out/dt=DATE: beside the part files of an undated run it would
    hide them from readers of out, so it is refused before Spark starts."""
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed

    out = tmp_path / "emb"
    (out / "dt=2026-12-01").mkdir(parents=True)
    for name in ("_SUCCESS", "_manifest.json", ".part-0.parquet.crc"):
        (out / name).write_text("", encoding="utf-8")
    embed._checked(["--generated", "--output", str(out), "--run-date", "2026-12-02"])  # a partitioned root: fine
    (out / "part-00000-x.snappy.parquet").write_text("", encoding="utf-8")
    for extra in ([], ["--overwrite"]):
        with pytest.raises(UserError, match="holds an unpartitioned dataset .part-00000-x.snappy.parquet at its top"):
            embed._checked(["--generated", "--output", str(out), "--run-date", "2026-12-02", *extra])


@pytest.mark.unit
def test_overwrite_without_run_date_keeps_the_dated_runs_and_a_rerun_replaces_its_model(tmp_path):
    """--overwrite of a dated output's root without --run-date would replace every run
    with one undated output: refused before Spark, naming the runs. A --run-date rerun
    (a scheduler's retry) replaces the model its first run saved, as it does its partition."""
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed

    out = tmp_path / "emb"
    for day in ("2026-12-01", "2026-12-02"):
        (out / f"dt={day}").mkdir(parents=True)
        (out / f"dt={day}" / "part-00000-0.snappy.parquet").write_text("", encoding="utf-8")
    with pytest.raises(UserError, match=r"holds 2 dated run\(s\) \(dt=2026-12-01, dt=2026-12-02\): --overwrite "
                                        r"without --run-date would replace every one of them"):
        embed._checked(["--generated", "--output", str(out), "--overwrite"])
    notes = tmp_path / "notes"  # a folder named dt=... that is no date: no run, but other data
    (notes / "dt=notes").mkdir(parents=True)
    with pytest.raises(UserError, match=r"holds other data than an earlier output \(dt=notes/\): replacing it"):
        embed._checked(["--generated", "--output", str(notes), "--overwrite"])
    model = tmp_path / "model"
    (model / "metadata").mkdir(parents=True)
    (model / "metadata" / "part-00000").write_text('{"runDate": "2026-12-02"}\n', encoding="utf-8")
    embed._checked(["--generated", "--output", str(out), "--run-date", "2026-12-02", "--save-model", str(model)])
    with pytest.raises(UserError, match="--save-model path .* already holds data"):
        embed._checked(["--generated", "--output", str(tmp_path / "undated"), "--save-model", str(model)])
    # Among the dated runs, a model would make OUTPUT unreadable as one dataset.
    with pytest.raises(UserError, match="the --save-model path .* and the output folder of the dated runs .* overlap"):
        embed._checked(["--generated", "--output", str(out), "--run-date", "2026-12-02", "--save-model", str(out / "model")])


@pytest.mark.unit
def test_labels_read_from_a_folder_of_parts_a_parquet_folder_or_a_file_uri(tmp_path):
    """classify's --labels takes what sepne-generate writes (a folder of part files,
    text or Parquet) and file: URIs, as --input does."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sepne_spark.jobs.evaluate import read_labels

    text = tmp_path / "labels"
    text.mkdir()
    (text / "part-00000-a.csv").write_text("1\ta\n2\tb\n", encoding="utf-8")
    (text / "part-00001-a.csv").write_text("3\ta\n", encoding="utf-8")
    (text / "_SUCCESS").write_text("", encoding="utf-8")
    assert read_labels(str(text)) == {"1": {"a"}, "2": {"b"}, "3": {"a"}}
    assert read_labels(f"file://{text / 'part-00000-a.csv'}") == {"1": {"a"}, "2": {"b"}}
    parquet = tmp_path / "labels-parquet"
    parquet.mkdir()
    pq.write_table(pa.table({"node": [1, 2], "label": [0, 1]}), parquet / "part-00000-b.parquet")
    assert read_labels(str(parquet)) == {"1": {"0"}, "2": {"1"}}
    # Columns named the other way round are read by their names; a Parquet file without
    # its extension is still Parquet; a text header label<TAB>node swaps the columns.
    pq.write_table(pa.table({"label": ["x", "y"], "extra": [0, 0], "id": [7, 8]}), tmp_path / "swapped.pq")
    assert read_labels(str(tmp_path / "swapped.pq")) == {"7": {"x"}, "8": {"y"}}
    (tmp_path / "swapped.tsv").write_text("label\tnode\nx\t7\ny\t8\n", encoding="utf-8")
    assert read_labels(str(tmp_path / "swapped.tsv")) == {"7": {"x"}, "8": {"y"}}


@pytest.mark.unit
def test_use_context_and_another_vectors_choice_are_refused_together():
    from sepne_spark.errors import UserError
    from sepne_spark.jobs.evaluate import parse_args

    base = ["classify", "--embeddings", "emb", "--labels", "l.tsv"]
    with pytest.raises(UserError, match="--use-context is --vectors concat, and --vectors sum is given too"):
        parse_args([*base, "--vectors", "sum", "--use-context"])
    assert parse_args([*base, "--use-context"]).vectors == "concat"
    assert parse_args([*base, "--vectors", "concat", "--use-context"]).vectors == "concat"


@pytest.mark.unit
@pytest.mark.parametrize("argv, words", [
    # In the words of the flags, not of the generators' parameters
    (["--nodes", "-5"], "^--nodes must be positive, got -5"),
    (["--mixing", "2"], r"^--mixing must be in \[0, 1\], got 2.0"),
    (["--partitions", "0"], "^--partitions must be positive, got 0"),
    (["--communities", "20", "--nodes", "10"], r"^--communities must be in \[1, --nodes=10\], got 20"),
    (["--avg-degree", "0"], r"^--avg-degree must be positive \(0 draws no edge\)"),
    (["--model", "rmat", "--nodes", "100"], "--nodes applies to --model sbm only; this is --model rmat"),
    (["--rmat-a", "0.9"], "--rmat-a applies to --model rmat only; this is --model sbm"),
    (["--model", "rmat", "--rmat-a", "0.9", "--rmat-b", "0.3"],
     r"^need --rmat-a, --rmat-b, --rmat-c >= 0 and a \+ b \+ c <= 1, got --rmat-a=0.9"),
    (["--model", "rmat", "--scale", "70"], r"^--scale must be in \[1, 62\], got 70"),
    (["--nodes", "100", "--avg-degree", "200"], "^--avg-degree 200 is more than a graph of --nodes 100 can have"),
    (["--model", "rmat", "--edges", "0"], r"^--edges must be positive \(0 draws no edge\), got 0"),
    (["--model", "rmat", "--edges", "-3"], r"^--edges must be positive \(0 draws no edge\), got -3"),
    (["--model", "rmat", "--edges", str(1 << 64)], r"^--edges must be below 2\^63, got"),
    (["--nodes", str(1 << 63)], r"^--nodes must be below 2\^63 \(ids are 64-bit integers\), got"),
    (["--nodes", str(1 << 62), "--avg-degree", "8"],
     r"^--nodes x --avg-degree / 2 \(the count of drawn edges\) must be below 2\^63"),
    (["--nodes", str(1 << 62), "--avg-degree", "3", "--directed"],
     r"^--nodes x --avg-degree \(the count of drawn edges\) must be below 2\^63"),
])
def test_generate_checks_its_arguments_before_spark_starts(tmp_path, argv, words):
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import generate

    with pytest.raises(UserError, match=words):
        generate.session_conf(["--output", str(tmp_path / "g"), *argv])


@pytest.mark.unit
def test_generate_and_embed_refuse_flags_that_would_do_nothing(tmp_path):
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed, generate

    (tmp_path / "g" / "labels").mkdir(parents=True)
    with pytest.raises(UserError, match=r"output path .*labels already holds data; pass --overwrite"):
        generate.session_conf(["--output", str(tmp_path / "g")])
    generate.session_conf(["--output", str(tmp_path / "g"), "--overwrite"])
    edges = tmp_path / "edges.tsv"
    edges.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(UserError, match="--gen-mixing, --gen-nodes describe the generated graph, which --input replaces"):
        embed._checked(["--input", str(edges), "--gen-nodes", "10", "--gen-mixing=0.2", "--output", str(tmp_path / "o")])


@pytest.mark.unit
def test_outputs_that_would_replace_an_input_or_each_other_are_refused_before_spark(tmp_path):
    """Data a run reads or writes is never replaced by another of its outputs: a saved
    model given as --model, the output and --save-model, a --json on an input or a folder;
    an output set aside by a stopped run counts as existing; --run-date is canonical."""
    from sepne_spark import storage
    from sepne_spark.errors import OutputExistsError, UserError
    from sepne_spark.jobs import embed, evaluate

    model, out, edges = tmp_path / "model", tmp_path / "emb", tmp_path / "edges.tsv"
    (model / "metadata").mkdir(parents=True)
    edges.write_text("1\t2\n", encoding="utf-8")
    base = ["--input", str(edges)]
    with pytest.raises(UserError, match="is the input .*model"):
        embed._checked([*base, "--model", str(model), "--output", str(model), "--overwrite"])
    with pytest.raises(UserError, match="is inside the input"):
        embed._checked([*base, "--model", str(model), "--output", str(model / "emb")])
    # --json beside the dated runs or on the saved model, not among or inside them
    for extra, words in ((["--run-date", "2026-12-01", "--json", str(out / "run.json")], "output folder of the dated"),
                         (["--save-model", str(model.parent / "m2"), "--json", str(model.parent / "m2")],
                          "--save-model path")):
        with pytest.raises(UserError, match=f"the --json path .* and the {words}"):
            embed._checked([*base, "--output", str(out), *extra])
    # --model: its own k, d, metric and window are used, so the flags' rules do not apply
    embed._checked([*base, "--model", str(model), "--output", str(out), "--dim", "64", "--landmarks", "10",
                    "--metric", "I+A", "--window", "3"])
    with pytest.raises(UserError, match="dim 64 \\(from --dim\\) is larger than landmarks 10"):
        embed._checked([*base, "--output", str(out), "--dim", "64", "--landmarks", "10"])
    for saved in (out, out / "model"):
        with pytest.raises(UserError, match="--save-model path .* and the output path .* overlap"):
            embed._checked([*base, "--output", str(out), "--save-model", str(saved)])
    with pytest.raises(UserError, match="is not written YYYY-MM-DD: give 2026-01-05"):
        embed._checked([*base, "--output", str(out), "--run-date", "2026-1-5"])
    # A run stopped between its two moves left the old output aside: it is still there.
    (tmp_path / ".emb.old-0123456789ab").mkdir()
    with pytest.raises(OutputExistsError, match="left the previous output aside"):
        embed._checked([*base, "--output", str(out)])
    embed._checked([*base, "--output", str(out), "--overwrite"])

    emb, labels = tmp_path / "vectors", tmp_path / "labels.tsv"
    emb.mkdir()
    labels.write_text("1\ta\n", encoding="utf-8")
    task = ["classify", "--embeddings", str(emb), "--labels", str(labels)]
    for json_path, words in ((emb, "is the input"), (labels, "is the input"), (emb / "s.json", "is inside the input"),
                             (tmp_path / "folder", "is a folder")):
        (tmp_path / "folder").mkdir(exist_ok=True)
        with pytest.raises(UserError, match=words):
            evaluate.session_conf([*task, "--json", str(json_path)])
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked").chmod(0o500)
    try:
        if not os.access(tmp_path / "locked", os.W_OK):  # root writes anywhere
            with pytest.raises(UserError, match="cannot be written"):
                evaluate.session_conf([*task, "--json", str(tmp_path / "locked" / "s.json")])
    finally:
        (tmp_path / "locked").chmod(0o700)
    (tmp_path / "scores.json").write_text("{}", encoding="utf-8")
    evaluate.session_conf([*task, "--json", str(tmp_path / "scores.json")])  # an earlier result: replaced
    # Inside another dataset's folder its readers would take the file for one of its parts
    # (a label folder read by classify); a hidden name is one they skip.
    (tmp_path / "graph" / "labels").mkdir(parents=True)
    (tmp_path / "graph" / "labels" / "part-00000.tsv").write_text("1\ta\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"--json path .*x.json is inside .*labels, which holds a dataset"):
        evaluate.session_conf([*task, "--json", str(tmp_path / "graph" / "labels" / "x.json")])
    evaluate.session_conf([*task, "--json", str(tmp_path / "graph" / "labels" / "_x.json")])
    with pytest.raises(UserError, match="is a folder"):
        storage.write_json(str(tmp_path / "folder"), {"f1": 1.0})
    assert (tmp_path / "folder").is_dir()


@pytest.mark.unit
def test_a_jvm_failure_is_named_by_its_cause_not_by_py4j():
    """The job's one failure line gives the Java error's informative line, not Py4J's
    'An error occurred while calling o598.collectToPython.'"""
    from sepne_spark.jobs.common import _reason

    class Py4JJavaError(Exception):  # as py4j's prints: its call, then the Java trace
        def __str__(self) -> str:
            return ("An error occurred while calling o598.collectToPython.\n: org.apache.spark.SparkException: "
                    "Python worker exited unexpectedly (crashed)\n\tat org.apache.spark.api.python.X.y(X.scala:1)")

    assert _reason(Py4JJavaError()) == ("Py4JJavaError: org.apache.spark.SparkException: Python worker exited "
                                        "unexpectedly (crashed)")
    assert _reason(ValueError("bad\nmore")) == "ValueError: bad"


#: PySpark's text of an error raised in a Spark task's Python code: its first line is empty.
_WORKER_TRACE = ("\n  An exception was thrown from the Python worker. Please see the stack trace below.\n"
                 "Traceback (most recent call last):\n  File \"/x/solver.py\", line 113, in check\n"
                 "    raise {kind}(\"{message}\")\n{kind}: {message}\n")


@pytest.mark.unit
def test_an_error_raised_in_a_spark_task_is_named_by_its_own_line():
    """A task's Python error reaches the driver as a PythonException whose text starts
    with an empty line: the job's one line gives the task's error instead of nothing,
    and bad input found in a task (a UserError) is an ``error:`` line with status 2."""
    from sepne_spark.jobs.common import _reason, _user_error_in_task

    class PythonException(Exception):
        pass

    solve = PythonException(_WORKER_TRACE.format(kind="FloatingPointError", message="C_B holds NaN or infinite "
                                                 "values (check the input weights)"))
    assert _reason(solve) == ("PythonException: FloatingPointError: C_B holds NaN or infinite values (check the "
                              "input weights)")
    assert _user_error_in_task(solve) is None
    bad = PythonException(_WORKER_TRACE.format(kind="sepne_spark.errors.InputError", message="the graph has no edges"))
    assert _user_error_in_task(bad) == "the graph has no edges"
    assert _user_error_in_task(ValueError("the graph has no edges")) is None


@pytest.mark.unit
def test_reconstruct_takes_the_bad_lines_flag_its_errors_advise():
    """A bad edge line's error says "--bad-lines skip"; reconstruct accepts it, over the
    manifest's value."""
    from sepne_spark.jobs import evaluate

    ns = evaluate.parse_args(["reconstruct", "--edges", "e.tsv", "--embeddings", "emb", "--bad-lines", "skip"])
    settings, source = evaluate.matrix_settings(ns, {"settings": {"bad_lines": "fail", "metric": "I+A"}})
    assert settings["bad_lines"] == "skip" and settings["metric"] == "I+A" and "--bad-lines" in source


@pytest.mark.unit
def test_reconstruct_on_a_dated_output_takes_its_runs_manifest(tmp_path):
    """``--embeddings OUTPUT`` of a ``--run-date`` output: M's settings come from its
    runs' manifests (the newest run's, when they agree), not the built-in defaults; runs
    made with different M are refused before Spark, naming them."""
    import json

    from sepne_spark.errors import UserError
    from sepne_spark.jobs import evaluate

    out = tmp_path / "emb"
    for day, window in (("2026-01-01", 5), ("2026-01-02", 5)):
        (out / f"dt={day}").mkdir(parents=True)
        (out / f"dt={day}" / "_manifest.json").write_text(json.dumps(
            {"settings": {"metric": "A+A2", "window": window, "scaling": "log"}}))
    ns = evaluate.parse_args(["reconstruct", "--edges", "e.tsv", "--embeddings", str(out)])
    manifest, run = evaluate.embeddings_manifest(ns)
    assert run == "dt=2026-01-02"
    settings, source = evaluate.matrix_settings(ns, manifest, run)
    assert (settings["window"], settings["scaling"]) == (5, "log")
    assert source == "the manifest of the run dt=2026-01-02"
    edges = tmp_path / "e.tsv"
    edges.write_text("1\t2\n", encoding="utf-8")
    assert evaluate.session_conf(["reconstruct", "--edges", str(edges), "--embeddings", str(out)]) == {}

    # A killed write's hidden folders are no runs; settings of reading alone do not count.
    (out / ".dt=2026-01-02.old-abc123").mkdir()
    (out / ".dt=2026-01-02.old-abc123" / "_manifest.json").write_text(json.dumps({"settings": {"window": 2}}))
    (out / "dt=2026-01-01" / "_manifest.json").write_text(json.dumps(
        {"settings": {"metric": "A+A2", "window": 5, "scaling": "log", "input_format": "tsv", "bad_lines": "skip"}}))
    assert evaluate.embeddings_manifest(ns)[1] == "dt=2026-01-02"
    # Edges read with another layout are another M.
    (out / "dt=2026-01-01" / "_manifest.json").write_text(json.dumps(
        {"settings": {"metric": "A+A2", "window": 5, "scaling": "log"}, "read": {"sep": ","}}))
    with pytest.raises(UserError, match=r"differ in layout\)"):
        evaluate.embeddings_manifest(ns)
    (out / "dt=2026-01-01" / "_manifest.json").write_text(json.dumps({"settings": {"metric": "A+A2", "window": 3}}))
    with pytest.raises(UserError, match=r"different settings of M or read their edges otherwise \(dt=2026-01-01 "
                                        r"and dt=2026-01-02 differ in window, scaling\): give one run, e\.g\. "
                                        r"--embeddings .*/emb/dt=2026-01-02$"):
        evaluate.embeddings_manifest(ns)
    with pytest.raises(UserError, match="differ in window"):  # before Spark starts
        evaluate.session_conf(["reconstruct", "--edges", str(edges), "--embeddings", str(out)])
    # One run's folder, or an output of its own, reads its own manifest.
    one = evaluate.parse_args(["reconstruct", "--edges", "e.tsv", "--embeddings", str(out / "dt=2026-01-01")])
    assert evaluate.embeddings_manifest(one) == ({"settings": {"metric": "A+A2", "window": 3}}, "")


@pytest.mark.unit
def test_labels_lines_that_are_not_node_tab_label_are_named_by_file_and_line(tmp_path):
    """No labels line is dropped in silence: each that is not two non-empty fields is an
    error at its file and line; a first line of column names is a header; a file without
    tabs splits at whitespace."""
    import gzip

    from sepne_spark.errors import LabelsError
    from sepne_spark.jobs.evaluate import read_labels

    good = tmp_path / "good.tsv"
    good.write_text("node\tlabel\n# a comment\n\n1\ta\n1\tb\n2\ta\n", encoding="utf-8")
    assert read_labels(str(good)) == {"1": {"a", "b"}, "2": {"a"}}
    spaced = tmp_path / "spaced.TXT.GZ"
    spaced.write_bytes(gzip.compress(b"1 a\n2  b\n"))
    assert read_labels(str(spaced)) == {"1": {"a"}, "2": {"b"}}
    bom = tmp_path / "bom.tsv"
    bom.write_bytes(b"\xef\xbb\xbfnode\tlabel\r\n1\ta\r\n")
    assert read_labels(str(bom)) == {"1": {"a"}}
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"node": ["1", None], "label": ["a", "b"]}), tmp_path / "nulls.parquet")
    with pytest.raises(LabelsError, match="nulls.parquet: column 'node' has 1 null value"):
        read_labels(str(tmp_path / "nulls.parquet"))
    for text, line, words in (("1\ta\noops\n", 2, "found 1 field: 'oops'"),
                              ("1\ta\n\t3\n", 2, "found an empty node"),
                              ("1\ta\n12\t\n", 2, "found an empty label"),
                              ("1\ta\n2\tb\tc\n", 2, "found 3 fields"),
                              ("1,a\n", 1, "comma-separated file")):
        bad = tmp_path / "bad.tsv"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(LabelsError, match=f"bad.tsv:{line}: expected node<TAB>label, .*{words}"):
            read_labels(str(bad))


@pytest.mark.unit
def test_an_output_inside_a_dataset_is_refused_before_spark(tmp_path):
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed, generate

    dataset = tmp_path / "gen" / "edges"
    dataset.mkdir(parents=True)
    (dataset / "part-00000.parquet").write_bytes(b"")
    # Files that only look alike are no dataset: a note, a stray _SUCCESS.
    (tmp_path / "part-time-notes.txt").write_text("", encoding="utf-8")
    (tmp_path / "gen" / "_SUCCESS").write_text("", encoding="utf-8")
    for check in (lambda out: generate.session_conf(["--output", out]),
                  lambda out: embed._checked(["--generated", "--output", out])):
        with pytest.raises(UserError, match="is inside .*edges, which holds a dataset .part-00000.parquet"):
            check(str(dataset / "sub"))
    # generate's --output is the folder of its edges/ and labels/: a dataset folder itself
    with pytest.raises(UserError, match="is inside .*edges, which holds a dataset .part-00000.parquet"):
        generate.session_conf(["--output", str(dataset)])
    generate.session_conf(["--output", str(tmp_path / "gen" / "other")])  # beside it: fine


@pytest.mark.unit
def test_an_empty_or_root_output_is_refused_before_spark(tmp_path):
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed, generate

    for output in ("", " "):
        with pytest.raises(UserError, match="the --output folder is empty"):
            generate.session_conf(["--output", output])
        with pytest.raises(UserError, match="the output path is empty"):
            embed._checked(["--generated", "--output", output])
    for output in ("/", "//", "/.", "file:/", "file:///", "file:", "hdfs:///", "hdfs://nn:8020/", "s3a://bucket"):
        with pytest.raises(UserError, match=f"the --output folder {re.escape(output)} is the root of its file system"):
            generate.session_conf(["--output", output])
        with pytest.raises(UserError, match=f"the output path {re.escape(output)} is the root of its file system"):
            embed._checked(["--generated", "--output", output])


def test_layout_flags_that_do_not_fit_a_local_input_exit_2_before_spark(tmp_path):
    """A column named in a file without a header, or a separator its lines lack: one line,
    exit 2, from the file's first lines (no Java here: the job stopped before Spark)."""
    (tmp_path / "edges.tsv").write_text("163\t402\n402\t7\n")
    for flags, said in ((["--src-col", "src", "--dst-col", "dst"], "no column 'src' in the header ['163', '402']"),
                        (["--sep", ","], "edges.tsv:1: expected 2 or 3 fields, found 1")):
        proc = _run(tmp_path, EMBED_FILE, "--input", "edges.tsv", "--output", "o", *flags)
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert proc.returncode == 2 and len(lines) == 1 and said in lines[0], proc.stderr[-3000:]


@pytest.mark.unit
def test_evaluate_checks_the_edge_lists_layout_before_spark(tmp_path):
    """sepne-evaluate's --edges gets the embed job's early check of its first lines: for
    linkpred with the flags, for reconstruct with the layout of the embeddings' manifest."""
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import evaluate

    (tmp_path / "edges.tsv").write_text("163\t402\n402\t7\n")
    edges = str(tmp_path / "edges.tsv")
    with pytest.raises(UserError, match=r"edges.tsv:1: expected 2 or 3 fields, found 1"):
        evaluate.session_conf(["linkpred", "--edges", edges, "--sep", ","])
    with pytest.raises(UserError, match=r"no column 'src' in the header \['163', '402'\]"):
        evaluate.session_conf(["linkpred", "--edges", edges, "--src-col", "src", "--dst-col", "dst"])
    emb = tmp_path / "emb"
    emb.mkdir()
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    pq.write_table(pa.table({"id": ["163"], "embedding": [[1.0, 0.0]]}), emb / "part-00000.parquet")
    (emb / "_manifest.json").write_text(json.dumps({"settings": {}, "read": {"sep": ","}}))
    with pytest.raises(UserError, match=r"edges.tsv:1: expected 2 or 3 fields, found 1"):
        evaluate.session_conf(["reconstruct", "--embeddings", str(emb), "--edges", edges])
    assert evaluate.session_conf(["reconstruct", "--embeddings", str(emb), "--edges", edges, "--sep", "\t"]) == {}
    # Embeddings elsewhere: their manifest is read once Spark runs, and may give the layout.
    (tmp_path / "commas.txt").write_text("163,402\n402,7\n")
    assert evaluate.session_conf(["reconstruct", "--embeddings", "hdfs://nn/emb", "--edges",
                                  str(tmp_path / "commas.txt")]) == {}
    with pytest.raises(UserError, match=r"commas.txt:1: expected 2 or 3 fields, found 1"):
        evaluate.session_conf(["reconstruct", "--embeddings", "hdfs://nn/emb", "--edges", str(tmp_path / "commas.txt"),
                               "--sep", "\t"])
    assert isinstance(evaluate.session_conf(["linkpred", "--edges", edges]), dict)  # passes, with a good layout


@pytest.mark.unit
def test_a_model_folder_without_a_model_and_linkpred_io_are_refused_before_spark(tmp_path):
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed, evaluate

    (tmp_path / "notamodel").mkdir()
    with pytest.raises(UserError, match="--model: no SepNE model at .*notamodel: it holds neither metadata"):
        embed._checked(["--generated", "--model", str(tmp_path / "notamodel"), "--output", str(tmp_path / "o")])
    edges = tmp_path / "e.tsv"
    edges.write_text("1\t2\n", encoding="utf-8")
    with pytest.raises(UserError, match="link prediction needs every node"):
        evaluate.session_conf(["linkpred", "--edges", str(edges), "--partition", "IO"])


@pytest.mark.unit
def test_a_partition_given_with_requested_ids_is_said_not_to_be_used(tmp_path, monkeypatch, caplog):
    from sepne_spark.jobs import embed

    monkeypatch.setattr(embed, "_run", lambda *a: 0)  # what the warning comes before
    argv = ["--generated", "--output", str(tmp_path / "o"), "--nodes", "1,2", "--profile", "document"]
    with caplog.at_level("WARNING", logger="sepne_spark"):
        assert embed.main(None, [*argv, "--partition", "LP"]) == 0
        assert "--partition LP is not used" in caplog.text
        caplog.clear()
        assert embed.main(None, argv) == 0
    assert "is not used" not in caplog.text


@pytest.mark.unit
def test_the_manifests_arguments_hide_credentials():
    from sepne_spark.jobs.embed import _shown_arguments

    assert _shown_arguments(["--spark", "spark.hadoop.fs.s3a.secret.key=X", "--spark=spark.a.token=Y",
                             "--spark=spark.sql.x.password=Z", "--spark", "spark.x=1", "--input=edges.tsv"]) == [
        "--spark", "spark.hadoop.fs.s3a.secret.key=*********", "--spark=spark.a.token=*********",
        "--spark=spark.sql.x.password=*********", "--spark", "spark.x=1", "--input=edges.tsv"]
    # The site's spark.redaction.regex: by key, and by value (a JDBC URL with a password)
    site = "(?i)secret|corp[.]pem|password"
    assert _shown_arguments(["--spark", "spark.hadoop.corp.pem=PEM", "--spark",
                             "spark.hadoop.javax.jdo.option.ConnectionURL=jdbc:x;password=pw", "--spark", "spark.x=1"],
                            site) == [
        "--spark", "spark.hadoop.corp.pem=*********", "--spark",
        "spark.hadoop.javax.jdo.option.ConnectionURL=*********", "--spark", "spark.x=1"]


@pytest.mark.unit
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, which no user can write to")
def test_an_output_that_cannot_be_written_is_refused_before_spark():
    """Found before the read and the fit, not when the write starts."""
    from sepne_spark.errors import UserError
    from sepne_spark.jobs import embed

    with pytest.raises(UserError, match="output path /proc/sepne/emb cannot be written: /proc is not a folder"):
        embed._checked(["--generated", "--output", "/proc/sepne/emb"])


@pytest.mark.unit
@pytest.mark.parametrize("name, value, words", [
    ("SEPNE_LOG_LEVEL", "verbose", "$SEPNE_LOG_LEVEL='verbose' is not a log level"),
    ("SEPNE_HEARTBEAT_S", "abc", "$SEPNE_HEARTBEAT_S='abc' is not a number of seconds"),
    ("SEPNE_HEARTBEAT_S", "-5", "$SEPNE_HEARTBEAT_S='-5' is not a number of seconds"),
    ("SEPNE_HEARTBEAT_S", "inf", "$SEPNE_HEARTBEAT_S='inf' is not a number of seconds"),
    ("SEPNE_DRIVER_MEMORY", "4x", "$SEPNE_DRIVER_MEMORY='4x': spark.driver.memory='4x' is not a heap size the "
                                  "driver's JVM takes: a whole number and a unit k, m, g or t, such as 4g or 512m"),
    # -Xmx2048 is 2048 bytes, and -Xmx4gb no size the JVM reads: each ended the JVM at its start
    ("SEPNE_DRIVER_MEMORY", "2048", "$SEPNE_DRIVER_MEMORY='2048': spark.driver.memory='2048' is not a heap size"),
    ("SEPNE_DRIVER_MEMORY", "4gb", "$SEPNE_DRIVER_MEMORY='4gb': spark.driver.memory='4gb' is not a heap size"),
    ("SEPNE_DRIVER_MEMORY", "100m", "$SEPNE_DRIVER_MEMORY='100m': spark.driver.memory=100m is less than Spark "
                                    "starts with (450m)"),
    ("SEPNE_CONF_DIR", "/nonexistent/site-conf", "$SEPNE_CONF_DIR names /nonexistent/site-conf, which is not a folder"),
    ("SEPNE_SPARK_JARS", "/nonexistent/jars", "$SEPNE_SPARK_JARS names /nonexistent/jars, which is not a folder"),
    ("SEPNE_SPARK_MASTER", "local[two]", "$SEPNE_SPARK_MASTER='local[two]' is not a local master Spark reads"),
    ("SEPNE_SPARK_MASTER", "local[0]", "$SEPNE_SPARK_MASTER='local[0]' is not a local master Spark reads"),
])
def test_an_unusable_environment_variable_is_refused_before_spark(tmp_path, monkeypatch, capsys, name, value, words):
    """The library's environment variables are checked before Spark starts (one line,
    exit 2), not ignored or left to the JVM's start to fail on."""
    from sepne_spark.jobs import embed
    from sepne_spark.jobs.common import check_environment

    for good in ("SEPNE_LOG_LEVEL", "SEPNE_HEARTBEAT_S", "SEPNE_DRIVER_MEMORY", "SEPNE_CONF_DIR", "SEPNE_SPARK_MASTER"):
        monkeypatch.delenv(good, raising=False)
    check_environment()
    monkeypatch.setenv(name, value)
    assert embed.cli(["--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"sepne-embed: error: {words}") and "\n" not in err, err
    for fine in ("DEBUG", "10") if name == "SEPNE_LOG_LEVEL" else ("0", "2.5") if name == "SEPNE_HEARTBEAT_S" \
            else ("512m", "4G", "1t") if name == "SEPNE_DRIVER_MEMORY" \
            else ("local", "local[2]", "local[*, 3]", "local-cluster[2, 1, 1024]", "yarn", "spark://h:7077") \
            if name == "SEPNE_SPARK_MASTER" else (str(tmp_path),):
        monkeypatch.setenv(name, fine)
        check_environment()


@pytest.mark.unit
def test_an_empty_part_file_beside_parquet_is_no_reason_to_refuse(tmp_path):
    """Spark skips an empty data file: the check before Spark does too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sepne_spark.jobs.evaluate import check_embedding_columns

    (tmp_path / "emb").mkdir()
    pq.write_table(pa.table({"id": ["1"], "embedding": [[0.1, 0.2]]}), tmp_path / "emb" / "part-00000.parquet")
    (tmp_path / "emb" / "part-00001.parquet").write_bytes(b"")
    check_embedding_columns(str(tmp_path / "emb"), need_context=False)
