"""Synthetic graph generators, the atomic writers and the ``jobs/generate.py`` entry point."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

from sepne_spark import generators as gen
from sepne_spark.generators import (
    output_exists,
    rmat_graph,
    sbm_edge_count,
    sbm_graph,
    write_edges,
    write_labels,
    write_table,
)
from sepne_spark.errors import UserError

ROOT = Path(__file__).resolve().parent.parent


def _pairs(df) -> pd.DataFrame:
    """A small edge DataFrame as a sorted pandas frame."""
    pdf = df.toPandas()
    return pdf.sort_values(["src", "dst"], ignore_index=True)


def _degrees(edges: pd.DataFrame) -> np.ndarray:
    ends = np.concatenate([edges["src"].to_numpy(), edges["dst"].to_numpy()])
    return np.bincount(ends)


def _load_job():
    from sepne_spark.jobs import generate

    return generate


# --------------------------------------------------------------------------- pure NumPy


@pytest.mark.parametrize("bits", [1, 2, 3, 7, 12])
def test_feistel_permutation_is_a_bijection(bits):
    keys = [gen._stream_key(5, gen._S_PERMUTE + r) for r in range(gen._FEISTEL_ROUNDS)]
    x = np.arange(1 << bits, dtype=np.uint64)
    y = gen._feistel_permute(x, bits, keys)
    assert sorted(y.tolist()) == x.tolist()
    if bits >= 7:
        assert (y != x).mean() > 0.9


def test_draws_depend_only_on_edge_index():
    draw = gen._rmat_draw(12, 0.57, 0.19, 0.19, seed=3, permute=True)
    idx = np.arange(5000, dtype=np.uint64)
    src, dst = draw(idx)
    src2, dst2 = draw(idx[2500:])  # another chunking of the same indices
    np.testing.assert_array_equal(src[2500:], src2)
    np.testing.assert_array_equal(dst[2500:], dst2)
    assert src.max() < 1 << 12 and dst.max() < 1 << 12
    other, _ = gen._rmat_draw(12, 0.57, 0.19, 0.19, seed=4, permute=True)(idx)
    assert (other != src).mean() > 0.5
    s1, _ = gen._sbm_draw(1000, 5, 0.1, seed=1)(idx)
    s2, _ = gen._sbm_draw(1000, 5, 0.1, seed=2)(idx)
    assert (s1 != s2).mean() > 0.9


def test_rmat_permutation_hides_the_hub():
    idx = np.arange(40_000, dtype=np.uint64)
    plain = np.bincount(np.concatenate(gen._rmat_draw(10, 0.57, 0.19, 0.19, 8, False)(idx)).astype(np.int64))
    perm = np.bincount(np.concatenate(gen._rmat_draw(10, 0.57, 0.19, 0.19, 8, True)(idx)).astype(np.int64))
    assert int(np.argmax(plain)) == 0  # with a the largest probability, node 0 is the hub
    assert int(np.argmax(perm)) != 0
    # relabelling keeps the degree sequence
    np.testing.assert_array_equal(np.sort(plain[plain > 0]), np.sort(perm[perm > 0]))
    # and degree no longer falls with the id
    corr_perm = np.corrcoef(np.arange(len(perm)), perm)[0, 1]
    corr_plain = np.corrcoef(np.arange(len(plain)), plain)[0, 1]
    assert abs(corr_perm) < 0.1 < abs(corr_plain)


def test_sbm_draw_mixing_and_balance():
    nodes, c, mu = 10_007, 7, 0.3
    src, dst = gen._sbm_draw(nodes, c, mu, seed=1)(np.arange(200_000, dtype=np.uint64))
    assert src.max() < nodes and dst.max() < nodes
    intra = np.mean(src % c == dst % c)
    assert intra == pytest.approx(1 - mu + mu / c, abs=0.01)
    counts = np.bincount((src % c).astype(np.int64))
    assert counts.min() > 0.95 * counts.mean()


def test_invalid_parameters(spark):
    with pytest.raises(ValueError, match="mixing"):
        sbm_graph(spark, 100, 2, 4, 1.5, 0)
    with pytest.raises(ValueError, match="communities"):
        sbm_graph(spark, 10, 11, 4, 0.1, 0)
    with pytest.raises(ValueError, match="a \\+ b \\+ c"):
        rmat_graph(spark, 8, 100, a=0.6, b=0.3, c=0.3)
    with pytest.raises(ValueError, match="scale"):
        rmat_graph(spark, 63, 100)
    with pytest.raises(ValueError, match="partitions"):
        rmat_graph(spark, 8, 100, partitions=0)
    assert sbm_edge_count(1000, 20) == 10_000
    assert sbm_edge_count(1000, 20, directed=True) == 20_000


# --------------------------------------------------------------------------- SBM


def test_sbm_deterministic_and_well_formed(spark):
    nodes, c, deg, mu = 3000, 6, 8.0, 0.2
    edges, labels = sbm_graph(spark, nodes, c, deg, mu, seed=11)
    a = _pairs(edges)
    b = _pairs(sbm_graph(spark, nodes, c, deg, mu, seed=11, partitions=3)[0])
    pd.testing.assert_frame_equal(a, b)

    assert dict(edges.dtypes) == {"src": "bigint", "dst": "bigint"}
    assert (a["src"] < a["dst"]).all()  # no self-loops, canonical order
    assert not a.duplicated().any()
    m = sbm_edge_count(nodes, deg)
    assert 0.97 * m <= len(a) <= m
    assert 2 * len(a) / nodes == pytest.approx(deg, rel=0.03)
    assert a["src"].min() >= 0 and a["dst"].max() < nodes

    intra = np.mean(a["src"] % c == a["dst"] % c)
    assert intra == pytest.approx(1 - mu + mu / c, abs=0.03)

    lab = labels.toPandas()
    assert dict(labels.dtypes) == {"node": "bigint", "label": "int"}
    assert len(lab) == nodes and (lab["label"] == lab["node"] % c).all()
    assert lab["label"].value_counts().max() - lab["label"].value_counts().min() <= 1


def test_sbm_directed(spark):
    nodes, deg = 2000, 5.0
    edges, _ = sbm_graph(spark, nodes, 4, deg, 0.5, seed=2, directed=True, partitions=2)
    a = _pairs(edges)
    assert (a["src"] != a["dst"]).all() and not a.duplicated().any()
    assert len(a) / nodes == pytest.approx(deg, rel=0.03)
    assert (a["src"] > a["dst"]).any() and (a["src"] < a["dst"]).any()


# --------------------------------------------------------------------------- R-MAT


def test_rmat_skewed_deterministic_and_well_formed(spark):
    scale, drawn = 11, 16 << 11
    a = _pairs(rmat_graph(spark, scale, drawn, seed=5))
    b = _pairs(rmat_graph(spark, scale, drawn, seed=5, partitions=5))
    pd.testing.assert_frame_equal(a, b)
    assert (a["src"] < a["dst"]).all() and not a.duplicated().any()
    assert a["dst"].max() < 1 << scale
    assert 0.5 * drawn < len(a) <= drawn
    deg = _degrees(a)
    assert deg.max() > 10 * deg[deg > 0].mean()


# --------------------------------------------------------------------------- NumPy twins and DC-SBM


def test_sbm_numpy_equals_spark(spark):
    args = (1500, 5, 6.0, 0.3, 21)
    src, dst, labels = gen.sbm_edges_numpy(*args)
    a = _pairs(sbm_graph(spark, *args, partitions=3)[0])
    np.testing.assert_array_equal(a["src"].to_numpy(), src)
    np.testing.assert_array_equal(a["dst"].to_numpy(), dst)
    np.testing.assert_array_equal(labels, np.arange(1500) % 5)


def test_dcsbm_numpy_equals_spark(spark):
    args = dict(nodes=2000, communities=8, avg_degree=10.0, mixing=0.4, seed=5)
    src, dst, labels = gen.dcsbm_edges_numpy(**args)
    edges, lab = gen.dcsbm_graph(spark, **args, partitions=3)
    a = _pairs(edges)
    np.testing.assert_array_equal(a["src"].to_numpy(), src)
    np.testing.assert_array_equal(a["dst"].to_numpy(), dst)
    lab = lab.toPandas().sort_values("node")
    np.testing.assert_array_equal(lab["label"].to_numpy(), labels)
    # directed, other partitioning
    s2, d2, _ = gen.dcsbm_edges_numpy(**args, directed=True)
    b = _pairs(gen.dcsbm_graph(spark, **args, directed=True, partitions=2)[0])
    np.testing.assert_array_equal(b["src"].to_numpy(), s2)
    np.testing.assert_array_equal(b["dst"].to_numpy(), d2)


def test_dcsbm_degrees_are_heavy_tailed():
    nodes, c, deg, mu = 20_000, 20, 12.0, 0.3
    src, dst, labels = gen.dcsbm_edges_numpy(nodes, c, deg, mu, seed=3)
    assert (src < dst).all() and len(np.unique(src * nodes + dst)) == len(src)
    d = np.bincount(np.concatenate([src, dst]), minlength=nodes)
    assert d.mean() == pytest.approx(deg, rel=0.1)  # repeats between hubs trim a little
    assert (d == 1).mean() > 0.05  # many degree-1 nodes
    cutoff = np.sqrt(deg * nodes)
    assert d.max() > 0.5 * cutoff and d.max() > 20 * deg  # hubs, near the cut-off
    expected = gen.dcsbm_expected_degrees(nodes, c, deg, mu, seed=3)
    assert expected.min() == pytest.approx(1.0, rel=1e-3)
    assert expected.max() == pytest.approx(cutoff, rel=1e-6)
    assert expected.mean() == pytest.approx(deg, rel=1e-9)
    # realised degrees follow the weights
    assert np.corrcoef(d, expected)[0, 1] > 0.9
    # power-law tail: P(D >= x) ~ x^-(exponent - 1); compare two points of the tail
    tail = lambda x: np.mean(expected >= x)  # noqa: E731
    slope = np.log(tail(200) / tail(50)) / np.log(4)
    assert slope == pytest.approx(-1.5, abs=0.2)
    intra = np.mean(labels[src] == labels[dst])
    assert intra == pytest.approx(1 - mu + mu / c, abs=0.04)
    # the weights do not depend on the id: hubs are spread over the communities
    hubs = np.argsort(-d)[:100]
    assert len(np.unique(labels[hubs])) >= 15


def test_dcsbm_invalid_parameters():
    with pytest.raises(ValueError, match="exponent"):
        gen.dcsbm_edges_numpy(100, 2, 4.0, 0.1, 0, exponent=2.0)
    with pytest.raises(ValueError, match="min_degree"):
        gen.dcsbm_edges_numpy(100, 2, 4.0, 0.1, 0, min_degree=5.0)
    with pytest.raises(ValueError, match="max_degree"):
        gen.dcsbm_edges_numpy(100, 2, 4.0, 0.1, 0, max_degree=2.0)
    with pytest.raises(ValueError, match="mixing"):
        gen.dcsbm_edges_numpy(100, 2, 4.0, 1.1, 0)


# --------------------------------------------------------------------------- writers


def _read_tsv(spark, path, schema="src long, dst long"):
    return spark.read.schema(schema).option("sep", "\t").option("header", "false").csv(path)


def _siblings_clean(parent: Path) -> bool:
    return not [p for p in os.listdir(parent) if p.startswith(".") and "-" in p]


def test_writers_round_trip(spark, tmp_path):
    rng = np.random.default_rng(0)
    pairs = pd.DataFrame({"src": rng.integers(0, 300, 600), "dst": rng.integers(0, 300, 600)})
    edges = spark.createDataFrame(pairs.drop_duplicates(), "src long, dst long")
    labels = spark.range(300).select(F.col("id").alias("node"), (F.col("id") % 3).alias("label"))
    expected = _pairs(edges)

    out = write_edges(edges, str(tmp_path / "edges"), "tsv")
    assert Path(out).is_dir()
    assert _pairs(_read_tsv(spark, out)).equals(expected)
    parts = [p for p in Path(out).iterdir() if p.name.startswith("part-")]
    assert parts and all(p.name.endswith(".tsv") for p in parts), sorted(p.name for p in parts)
    assert not [p.name for p in Path(out).iterdir() if p.name.endswith(".csv.crc")]
    line = parts[0].read_text()
    assert line.splitlines()[0].count("\t") == 1 and line.splitlines()[0].split("\t")[0].isdigit()
    # A part file on its own reads as tab-separated (auto goes by the name).
    from sepne_spark.graph import load_graph

    one = load_graph(spark, str(parts[0]), directed=True).edges.count()
    assert one == sum(1 for ln in line.splitlines() if len(set(ln.split("\t"))) == 2)  # self-loops dropped

    out = write_edges(edges, str(tmp_path / "edges_pq"), "parquet")
    assert _pairs(spark.read.parquet(out)).equals(expected)

    single = write_labels(labels, str(tmp_path / "labels.tsv"), "tsv", single_file=True)
    assert Path(single).is_file()
    rows = [tuple(map(int, ln.split("\t"))) for ln in Path(single).read_text().splitlines()]
    assert sorted(rows) == [(i, i % 3) for i in range(300)]

    # a URI goes through pyarrow.fs; an existing target needs overwrite
    uri = (tmp_path / "edges_pq").as_uri()
    assert output_exists(spark, uri)
    with pytest.raises(FileExistsError):
        write_edges(edges, uri, "parquet")
    write_edges(edges.limit(5), uri, "parquet", overwrite=True)
    assert spark.read.parquet(uri).count() == 5
    write_edges(edges, uri + "_single.parquet", "parquet", single_file=True)
    assert (tmp_path / "edges_pq_single.parquet").is_file()
    assert _siblings_clean(tmp_path)


@pytest.mark.unit
def test_csv_part_names_become_tsv_names_compressed_or_not():
    from sepne_spark.generators import _CSV_PART

    names = {"part-00000-1a2b-c000.csv": "part-00000-1a2b-c000.tsv",
             "part-00000-1a2b-c000.csv.gz": "part-00000-1a2b-c000.tsv.gz",
             "part-00001.csv.bz2": "part-00001.tsv.bz2", "part-00000.tsv": "part-00000.tsv",
             "part-00000.csvx": "part-00000.csvx"}
    assert {name: _CSV_PART.sub(r".tsv\1", name) for name in names} == names


def test_failed_write_leaves_nothing(spark, tmp_path):
    bad = spark.range(10).select(
        F.col("id").alias("src"), F.assert_true(F.col("id") < 5).cast("long").alias("dst")
    )
    target = tmp_path / "broken"
    with pytest.raises(Exception):
        write_table(bad, str(target), "tsv")
    assert not target.exists()
    assert _siblings_clean(tmp_path)
    with pytest.raises(ValueError, match="format"):
        write_table(bad, str(target), "csv")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- job


@pytest.mark.e2e
def test_generate_job(spark, tmp_path, capsys, caplog, monkeypatch):
    job = _load_job()
    with pytest.raises(SystemExit) as exc:
        job.main(None, ["--help"])
    assert exc.value.code == 0
    help_text = capsys.readouterr().out
    for option in ("--model", "--nodes", "--communities", "--avg-degree", "--mixing",
                   "--scale", "--edges", "--seed", "--directed", "--format", "--output",
                   "--partitions"):
        assert option in help_text
    assert "default: sbm" in help_text and "default: 0.1" in help_text

    out = tmp_path / "sbm"
    args = ["--model", "sbm", "--nodes", "400", "--communities", "4", "--avg-degree", "6",
            "--mixing", "0.2", "--seed", "9", "--format", "tsv", "--output", str(out),
            "--partitions", "2"]
    with caplog.at_level("INFO", logger="sepne_spark"):
        assert job.main(spark, args) == 0
    # the summary on stdout, as the embed job's
    summary = capsys.readouterr().out.splitlines()
    assert summary[0].startswith("generated an undirected SBM graph (4 communities, mixing 0.2), seed 9: 400 nodes, ")
    assert summary[1:] == [f"  edges: {out / 'edges'} (tsv)", f"  labels: {out / 'labels'} (tsv; columns node, label)"]
    # the writes are stages: logged at start and end, named in the Spark UI
    assert "SepNE generate_edges: drawing 1200 edges of 400 nodes" in caplog.text
    assert "SepNE generate_labels: the 400 nodes' communities" in caplog.text
    written = _pairs(_read_tsv(spark, str(out / "edges")))
    assert written.equals(_pairs(sbm_graph(spark, 400, 4, 6.0, 0.2, seed=9)[0]))
    assert len(list((out / "edges").glob("part-*"))) == 2
    assert _read_tsv(spark, str(out / "labels"), "node long, label int").count() == 400
    with pytest.raises(UserError, match="already holds data; pass --overwrite"):
        job.main(spark, args)
    # --overwrite whose labels fail to write (after the edges were written): the earlier
    # graph stays whole, its edges beside its own labels, and no temporary is left.
    files = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}

    def failing(labels):
        return labels.select(F.raise_error(F.lit("disk full")).cast("long").alias("node"), F.lit(0).alias("label"))

    with monkeypatch.context() as patched:
        patched.setattr(job, "label_columns", failing)
        with pytest.raises(Exception, match="disk full"):
            reseeded = [*args[:-4]]
            reseeded[reseeded.index("--seed") + 1] = "10"
            job.main(spark, [*reseeded, "--output", str(out), "--overwrite"])
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == files

    rmat_out = tmp_path / "rmat"
    assert job.main(spark, ["--model", "rmat", "--scale", "8", "--edges", "2000",
                            "--format", "parquet", "--single-file", "--output",
                            str(rmat_out)]) == 0
    assert (rmat_out / "edges.parquet").is_file() and not (rmat_out / "labels.parquet").exists()
    assert spark.read.parquet(str(rmat_out / "edges.parquet")).count() > 1000
    # Rerun in another single-file layout: the earlier run's file (its marker names it)
    # is removed, and a file of the user's by a table's name is refused, not deleted
    assert job.main(spark, ["--nodes", "60", "--communities", "2", "--avg-degree", "4", "--single-file",
                            "--output", str(rmat_out), "--overwrite"]) == 0
    assert sorted(p.name for p in rmat_out.iterdir()) == [job.MARKER, "edges.tsv", "labels.tsv"]
    (rmat_out / "labels.parquet").write_text("mine")
    with pytest.raises(UserError, match="holds labels.parquet, which this run does not write"):
        job.main(spark, ["--model", "rmat", "--scale", "6", "--edges", "200", "--single-file",
                         "--output", str(rmat_out), "--overwrite"])
    assert (rmat_out / "labels.parquet").read_text() == "mine"
    (rmat_out / "labels.parquet").unlink()
    # A run without --overwrite in another layout keeps the earlier files, and the marker
    # keeps naming them: a later --overwrite run removes them
    assert job.main(spark, ["--nodes", "60", "--communities", "2", "--avg-degree", "4",
                            "--output", str(rmat_out)]) == 0
    assert sorted(p.name for p in rmat_out.iterdir()) == [job.MARKER, "edges", "edges.tsv", "labels", "labels.tsv"]
    assert job.main(spark, ["--nodes", "60", "--communities", "2", "--avg-degree", "4",
                            "--output", str(rmat_out), "--overwrite"]) == 0
    assert sorted(p.name for p in rmat_out.iterdir()) == [job.MARKER, "edges", "labels"]
    # Overwritten with another model and layout: the earlier run's tables are gone, so
    # the folder holds one graph (no SBM labels beside R-MAT edges, no edges.tsv beside edges/).
    assert job.main(spark, ["--model", "rmat", "--scale", "8", "--edges", "2000", "--format", "parquet",
                            "--output", str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [job.MARKER, "edges"]
    with pytest.raises(UserError, match="mixing"):
        job.main(spark, ["--mixing", "2", "--output", str(tmp_path / "bad")])
    # A density the nodes cannot hold without repeats: the mean degree written is said
    caplog.clear()
    with caplog.at_level("INFO", logger="sepne_spark"):
        assert job.main(spark, ["--nodes", "30", "--communities", "2", "--avg-degree", "25",
                                "--output", str(tmp_path / "dense")]) == 0
    assert re.search(r"the graph's mean degree is \d+\.\d+, not the 25 asked", caplog.text)


@pytest.mark.unit
def test_generate_overwrite_replaces_only_earlier_graphs_tables(tmp_path):
    """--overwrite replaces an earlier run's tables and nothing of the user's: a file or
    folder of theirs where a table goes, or a file by another layout's name that the run
    would remove to leave one graph, is refused before Spark starts, named."""
    from sepne_spark.jobs import generate as job

    def check(*extra):
        argv = ["--nodes", "50", "--communities", "2", "--avg-degree", "3", "--output", str(out), "--overwrite",
                *extra]
        job.check_args(job.parse_args(argv), argv)

    out = tmp_path / "graph"
    (out / "edges").mkdir(parents=True)
    (out / "edges" / "part-00000-1.tsv").write_text("1\t2\n")
    (out / "edges" / "_SUCCESS").write_text("")
    (out / "labels.tsv").mkdir()  # an earlier graph's labels in another layout's name, as part files
    (out / "labels.tsv" / "part-00000").write_text("1\t0\n")
    check()  # an earlier graph's tables: replaced and removed
    (out / "edges" / "my.txt").write_text("mine")
    with pytest.raises(UserError, match=r"--output table .*edges holds other data than an earlier output \(my.txt\)"):
        check()
    (out / "edges" / "my.txt").unlink()
    (out / "edges.parquet").write_text("mine")  # a file of the user's by the single-file layout's name
    with pytest.raises(UserError, match=r"holds edges.parquet, which this run does not write \(edges, labels\) "
                                        r".*no run of sepne-generate wrote it"):
        check()
    # ... unless the marker names it as it is (size and modification time): a run's table
    import json

    from sepne_spark.storage import file_stamp

    stamp = list(file_stamp(str(out / "edges.parquet")))
    (out / job.MARKER).write_text(json.dumps({"files": {"edges.parquet": stamp}}))
    check()
    (out / "edges.parquet").write_text("mine, put later by the same name")  # another file now
    os.utime(out / "edges.parquet", ns=(1, 1))
    with pytest.raises(UserError, match=r"holds edges.parquet, .*no run of sepne-generate wrote it"):
        check()
    # with a marker, a --single-file table's own path holding a file no run wrote is refused too
    (out / "edges.tsv").write_text("mine")
    with pytest.raises(UserError, match=r"edges.tsv is a file no run of sepne-generate wrote"):
        check("--single-file")
    (out / "edges.tsv").unlink()
    (out / job.MARKER).unlink()
    (out / "edges.parquet").unlink()
    with pytest.raises(UserError, match=r"edges.tsv is a folder: --single-file writes a file there"):
        (out / "edges.tsv").mkdir()
        check("--single-file")
    (out / "edges.tsv").rmdir()
    (out / "labels.tsv").rename(tmp_path / "elsewhere")
    (out / "labels").write_text("mine")  # a file where the folder layout's labels go
    with pytest.raises(UserError, match=r"--output table .*labels is a file"):
        check()
