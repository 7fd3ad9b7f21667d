"""Storage: atomic output (a failed write leaves the old output whole and nothing visible) and the path rules."""
from __future__ import annotations

import os

import pytest

from pathlib import Path

from sepne_spark import storage
from sepne_spark.errors import UserError
from sepne_spark.storage import atomic_write, exists


def test_atomic_write_replaces_only_when_complete(spark, tmp_path):
    out = str(tmp_path / "emb" / "dt=2026-01-01")
    df = spark.createDataFrame([(1, 2.0)], "id long, x double")
    atomic_write(lambda p: df.write.parquet(p), out)
    assert exists(out) and spark.read.parquet(out).count() == 1
    with pytest.raises(FileExistsError):
        atomic_write(lambda p: df.write.parquet(p), out)

    def broken(p: str) -> None:
        df.write.parquet(p)
        raise RuntimeError("killed half way")

    with pytest.raises(RuntimeError):
        atomic_write(broken, out, overwrite=True)
    assert spark.read.parquet(out).count() == 1  # the old output is intact
    assert sorted(os.listdir(tmp_path / "emb")) == ["dt=2026-01-01"]  # no leftovers
    two = spark.createDataFrame([(1, 2.0), (2, 3.0)], "id long, x double")
    atomic_write(lambda p: two.write.parquet(p), out, overwrite=True)
    assert spark.read.parquet(str(tmp_path / "emb")).count() == 2
    assert sorted(os.listdir(tmp_path / "emb")) == ["dt=2026-01-01"]


def test_a_failed_write_leaves_no_folder_it_created(tmp_path):
    """A dated output's first run that fails leaves neither its partition folder nor the
    output root it created; a folder that was there before stays."""
    def broken(p: str) -> None:
        Path(p).mkdir()
        (Path(p) / "part-00000").write_text("half")
        raise RuntimeError("killed half way")

    with pytest.raises(RuntimeError):
        atomic_write(broken, str(tmp_path / "root" / "dt=2026-12-05"))
    assert not (tmp_path / "root").exists()
    with pytest.raises(RuntimeError):  # several folders created: all removed
        atomic_write(broken, str(tmp_path / "a" / "b" / "c" / "dt=2026-12-05"))
    assert not (tmp_path / "a").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(RuntimeError):
        atomic_write(broken, str(tmp_path / "kept" / "dt=2026-12-05"))
    assert (tmp_path / "kept").is_dir() and os.listdir(tmp_path / "kept") == []

    # Another date's run writing beside it into the same new root, still with only the
    # empty folders Spark's committer starts with: neither its folder nor the root goes.
    def beside(p: str) -> None:
        (tmp_path / "new" / ".dt=2026-12-06.tmp-0123" / "_temporary" / "0").mkdir(parents=True)
        broken(p)

    with pytest.raises(RuntimeError):
        atomic_write(beside, str(tmp_path / "new" / "dt=2026-12-05"))
    assert os.listdir(tmp_path / "new") == [".dt=2026-12-06.tmp-0123"]


def _writer(text: str, also=None):
    """A write of one file ``part-0`` holding ``text``; ``also(tmp)`` runs after it."""
    def write(p: str) -> None:
        Path(p).mkdir()
        (Path(p) / "part-0").write_text(text)
        if also is not None:
            also(p)
    return write


def _content(folder: Path) -> str:
    return (folder / "part-0").read_text()


def test_outputs_written_together_are_replaced_together_or_not_at_all(tmp_path):
    """atomic_writes: a graph's two tables, or an embedding and its model, replace the
    old pair only when both are written; a failed second write, a second path that
    exists without overwrite, or a failed move leaves the old pair as it was."""
    a, b = tmp_path / "out" / "edges", tmp_path / "out" / "labels"
    storage.atomic_writes([(_writer("a1"), str(a)), (_writer("b1"), str(b))])
    assert (_content(a), _content(b)) == ("a1", "b1")

    def fail(p):
        raise RuntimeError("the second table failed")

    with pytest.raises(RuntimeError, match="second table"):
        storage.atomic_writes([(_writer("a2"), str(a)), (_writer("b2", fail), str(b))], overwrite=True)
    assert (_content(a), _content(b)) == ("a1", "b1")
    assert sorted(os.listdir(tmp_path / "out")) == ["edges", "labels"]  # no temporaries left

    called = []
    with pytest.raises(FileExistsError, match="labels"):
        storage.atomic_writes([(lambda p: called.append(p), str(tmp_path / "out" / "new")), (_writer("b2"), str(b))])
    assert called == [] and not (tmp_path / "out" / "new").exists()  # refused before any write

    # The last move fails (something appeared at its path meanwhile; the moves go from
    # the last write to the first): the output already moved into place is put back.
    c = tmp_path / "out" / "third"

    def squat(p):
        c.mkdir()
        (c / "other").write_text("another writer's")

    with pytest.raises(OSError):
        storage.atomic_writes([(_writer("c1", squat), str(c)), (_writer("a3"), str(a))], overwrite=True)
    assert _content(a) == "a1" and (c / "other").exists() and not (c / "part-0").exists()
    assert sorted(os.listdir(tmp_path / "out")) == ["edges", "labels", "third"]

    storage.atomic_writes([(_writer("a4"), str(a)), (_writer("b4"), str(b))], overwrite=True)
    assert (_content(a), _content(b)) == ("a4", "b4")
    for twice in (str(a) + "/", f"file://{a}", str(tmp_path / "out" / "." / "edges")):
        with pytest.raises(ValueError, match="given twice"):
            storage.atomic_writes([(_writer("a5"), str(a)), (_writer("a6"), twice)], overwrite=True)
    assert sorted(os.listdir(tmp_path / "out")) == ["edges", "labels", "third"]


def test_next_write_cleans_up_after_a_killed_run(tmp_path, caplog):
    from pathlib import Path

    base = tmp_path / "out"
    base.mkdir()

    def write_file(text):
        def write(p: str) -> None:
            Path(p).mkdir()
            (Path(p) / "part-0").write_text(text)
        return write

    # Killed between its two moves: the old output aside, the new one not in place.
    (base / ".emb.old-aaaa").mkdir()
    (base / ".emb.old-aaaa" / "part-0").write_text("previous")
    (base / ".emb.tmp-bbbb").mkdir()  # and a half-written temporary of another run
    (base / ".emb.tmp-bbbb" / "part-0").write_text("half")
    (base / ".other.tmp-cccc").mkdir()  # another output's: not ours to touch
    with pytest.raises(FileExistsError):
        atomic_write(write_file("new"), str(base / "emb"))
    assert (base / "emb" / "part-0").read_text() == "previous"  # restored, then kept
    assert sorted(os.listdir(base)) == [".other.tmp-cccc", "emb"]
    assert any("restoring it" in r.getMessage() for r in caplog.records)

    (base / ".emb.tmp-dddd").mkdir()
    atomic_write(write_file("new"), str(base / "emb"), overwrite=True)
    assert (base / "emb" / "part-0").read_text() == "new"
    assert sorted(os.listdir(base)) == [".other.tmp-cccc", "emb"]


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_write_whose_temporary_another_run_removed_replaces_nothing(tmp_path, overwrite):
    """Two runs writing one output at once: the later one's recovery removes the earlier
    one's temporary folder; the earlier one, whose writer (like Spark's tasks) recreates
    its folders and goes on, must fail rather than move its partial output into place."""
    import threading

    from sepne_spark.errors import ConcurrentWriteError

    out = tmp_path / "emb"
    if overwrite:
        atomic_write(_writer("first"), str(out))
    halfway, resume = threading.Event(), threading.Event()

    def slow(p: str) -> None:
        for i in range(3):
            Path(p).mkdir(exist_ok=True)
            (Path(p) / f"part-{i}").write_text("slow")
            if i == 0:
                halfway.set()
                resume.wait(60)

    failed: list[BaseException] = []

    def first_run() -> None:
        try:
            atomic_write(slow, str(out), overwrite=overwrite)
        except BaseException as exc:  # noqa: BLE001 - kept for the main thread's asserts
            failed.append(exc)

    run = threading.Thread(target=first_run)
    run.start()
    assert halfway.wait(60)
    atomic_write(_writer("second"), str(out), overwrite=True)  # removes the slow run's temporary
    resume.set()
    run.join(60)
    assert len(failed) == 1 and isinstance(failed[0], ConcurrentWriteError), failed
    assert "replaced nothing" in str(failed[0])
    assert os.listdir(out) == ["part-0"] and _content(out) == "second"  # the second run's, whole
    assert os.listdir(tmp_path) == ["emb"]  # no temporary, no marker left


class _Conf:
    """The one call :func:`resolve_output` makes on a session: ``conf.get``."""

    def __init__(self, default_fs=None):
        self.conf = self
        self._fs = default_fs

    def get(self, key, default=None):
        return self._fs if key == "spark.hadoop.fs.defaultFS" and self._fs else default


@pytest.mark.parametrize("path, default_fs, expected", [
    ("out/emb", None, os.path.abspath("out/emb")),  # bare: local, made absolute
    ("/data/emb", "file:///", "/data/emb"),
    ("/data/emb", "hdfs://nn:8020", "hdfs://nn:8020/data/emb"),  # bare with an HDFS default
    ("file:///tmp/emb", "hdfs://nn:8020", "file:///tmp/emb"),  # a URI is kept
    ("hdfs://nn:8020/emb", None, "hdfs://nn:8020/emb"),
    ("s3a://bucket/emb", "hdfs://nn:8020", "s3a://bucket/emb"),
    # Databricks' spellings: a one-slash URI is kept (it was once taken for a relative
    # local path), a bare path goes to the dbfs: default file system.
    ("dbfs:/models/sepne", None, "dbfs:/models/sepne"),
    ("dbfs:/Volumes/main/graphs/emb", "dbfs:/", "dbfs:/Volumes/main/graphs/emb"),
    ("/Volumes/main/graphs/emb", "dbfs:/", "dbfs:/Volumes/main/graphs/emb"),
    ("hdfs:/emb", None, "hdfs:/emb"),
])
def test_output_path_rules(path, default_fs, expected):
    assert storage.resolve_output(_Conf(default_fs), path) == expected


def test_relative_path_with_a_remote_default_is_refused():
    with pytest.raises(ValueError, match="absolute path or a full URI"):
        storage.resolve_output(_Conf("hdfs://nn:8020"), "out/emb")


def test_locations_compare_across_spellings(tmp_path):
    # file: URIs and bare paths name the same local place; s3a and s3n are s3.
    assert storage._location(str(tmp_path / "a")) == storage._location((tmp_path / "a").as_uri())
    assert storage._location("s3a://b/x/../y") == ("s3://b", "/y") == storage._location("s3n://b/y")
    assert storage._location("hdfs://nn:8020/a/b") == ("hdfs://nn:8020", "/a/b")
    assert storage._within("/a/b/c", "/a/b") and not storage._within("/a/bc", "/a/b")


def test_storage_operations_on_local_paths_and_file_uris(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    for name in ("part-0", "_SUCCESS", ".hidden", "part-1"):
        (folder / name).write_text(name)
    assert storage.data_files(str(folder)) == [str(folder / "part-0"), str(folder / "part-1")]
    assert storage.data_files(folder.as_uri()) == [folder.as_uri() + "/part-0", folder.as_uri() + "/part-1"]
    storage.move(str(folder / "part-0"), str(tmp_path / "moved"))
    assert storage.exists((tmp_path / "moved").as_uri()) and not storage.exists(str(folder / "part-0"))
    storage.remove(str(folder))
    storage.remove(str(folder))  # already gone: nothing to do
    assert not folder.exists()


@pytest.mark.parametrize("uri", [False, True])
def test_write_json_replaces_a_file_whole_or_not_at_all(tmp_path, uri):
    import json

    target = tmp_path / "results" / "cora.json"
    path = f"file://{target}" if uri else str(target)
    storage.write_json(path, {"micro_f1": 0.75})  # the folder is created
    storage.write_json(path, {"r2": float("nan"), "per": [float("inf"), 1.0]})  # strict JSON: null
    assert json.loads(target.read_text(), parse_constant=lambda c: pytest.fail(c)) == {"r2": None, "per": [None, 1.0]}
    storage.write_json(path, {"micro_f1": 0.8})
    assert json.loads(target.read_text()) == {"micro_f1": 0.8}
    assert os.listdir(target.parent) == ["cora.json"]

    broken: dict = {"micro_f1": 0.9}
    broken["self"] = broken  # cannot be written
    with pytest.raises(ValueError, match="Circular reference"):
        storage.write_json(path, broken)
    assert json.loads(target.read_text()) == {"micro_f1": 0.8}  # the old results stay, no part is left
    assert os.listdir(target.parent) == ["cora.json"]
    # A write killed before its move left a temporary file: the next write removes it.
    (target.parent / ".cora.json.tmp-0123abcd").write_text("{")
    storage.write_json(path, {"micro_f1": 0.85})
    assert json.loads(target.read_text()) == {"micro_f1": 0.85}
    assert os.listdir(target.parent) == ["cora.json"]


def test_dbfs_paths_are_written_through_the_drivers_mounts(tmp_path, monkeypatch):
    """A dbfs: output (as a Databricks notebook names it) is moved, listed and checked
    through the driver's local mounts: volumes at /Volumes, the rest of DBFS under /dbfs
    (here two temporary folders); without the mount the path is refused by name. The
    writes themselves are Spark's, which reads dbfs: on Databricks only: the writer here
    writes through the mount as Spark's dbfs: file system would."""
    dbfs, volumes = tmp_path / "dbfs", tmp_path / "Volumes"
    if not os.path.isdir("/dbfs"):  # no Databricks mount on this machine: the path is refused by name
        with pytest.raises(UserError, match=r"dbfs:/models/m: dbfs: paths are written through Databricks' /dbfs"):
            storage.exists("dbfs:/models/m")
    dbfs.mkdir()
    volumes.mkdir()
    monkeypatch.setattr(storage, "DBFS_MOUNTS", (("/Volumes", str(volumes)), ("/", str(dbfs))))
    assert storage._filesystem("dbfs:/Volumes/main/g/emb")[1] == str(volumes / "main" / "g" / "emb")
    assert storage._filesystem("dbfs:/models/m")[1] == str(dbfs / "models" / "m")

    def write(uri: str) -> None:  # what Spark's dbfs: file system would do on Databricks
        local = storage._filesystem(uri)[1]
        os.makedirs(local)
        (Path(local) / "part-0.parquet").write_text("rows")

    out = "dbfs:/Volumes/main/g/emb"
    atomic_write(write, out)
    assert storage.exists(out) and storage.data_files(out) == [out + "/part-0.parquet"]
    assert sorted(os.listdir(volumes / "main" / "g")) == ["emb"]  # no temporary left
    with pytest.raises(FileExistsError):
        atomic_write(write, out)
    # An output inside the input is refused, whichever spelling names the input.
    with pytest.raises(UserError, match="inside"):
        storage.check_output_path("dbfs:/models/in/out", [str(dbfs / "models" / "in")], overwrite=False)
    with pytest.raises(UserError, match="no host"):
        storage.exists("dbfs://host/models/m")


def test_an_output_under_a_file_is_refused_before_the_run(tmp_path):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    for output in (tmp_path / "afile" / "emb", tmp_path / "afile" / "deeper" / "emb"):
        with pytest.raises(UserError, match=f"{tmp_path / 'afile'} is a file, not a folder"):
            storage.check_output_path(str(output), [], overwrite=True)
    storage.check_output_path(str(tmp_path / "new" / "emb"), [], overwrite=False)  # folders made by the write


def test_a_jvm_that_refuses_the_calls_leaves_remote_uris_to_pyarrow(spark, monkeypatch, caplog):
    """A classic session whose JVM refuses Python's calls (a shared cluster's Py4J
    allow-list raises on sessionState()): remote URIs go through pyarrow's file system
    (here its mock: one, the kind an s3: or abfs: URI gets) instead of failing."""
    from pyarrow import fs

    from py4j.protocol import Py4JError

    calls = []

    def refuse(self, spark, path):
        calls.append(path)
        raise Py4JError("py4j.security.Py4JSecurityException: Method public ... sessionState() is not whitelisted")

    monkeypatch.setattr(storage, "_REFUSED", set())
    # The file system's own error (an unknown scheme) is not taken for a refusal
    with pytest.raises(Py4JError):
        storage._hadoop_filesystem("nosuchfs://bucket/x")
    assert not storage._REFUSED
    monkeypatch.setattr(storage.HadoopFileSystem, "__init__", refuse)
    with caplog.at_level("INFO", logger="sepne_spark.storage"):
        filesystem, inner = storage._filesystem("mock:///bucket/emb")
        assert storage._filesystem("mock:///bucket/other")[1] == "bucket/other"
    assert isinstance(filesystem, fs.FileSystem) and inner == "bucket/emb"
    assert caplog.text.count("not reachable from Python (py4j.security.Py4JSecurityException") == 1
    assert len(calls) == 1  # the session is not asked again


def test_remote_uris_go_through_the_sessions_hadoop_file_system(spark, tmp_path, monkeypatch):
    """hdfs:, s3a: ... paths are moved, listed and read with the Hadoop file system of the
    classic session's JVM (as Spark writes them), not pyarrow's, which needs libhdfs and
    credentials of its own. Run here on file: URIs through Hadoop's local file system:
    the atomic write, its recovery after a killed run, manifests and JSON."""
    from pyarrow import fs

    hadoop = storage._hadoop_filesystem(f"file://{tmp_path}")
    assert isinstance(hadoop, storage.HadoopFileSystem)
    real = storage._filesystem
    monkeypatch.setattr(storage, "_filesystem", lambda path: (storage.HadoopFileSystem(spark, path), path)
                        if path.startswith("file:") else real(path))
    out = f"file://{tmp_path}/emb/dt=2026-01-01"
    df = spark.createDataFrame([(1, 2.0)], "id long, x double")
    atomic_write(lambda p: df.write.parquet(p), out)
    assert exists(out) and spark.read.parquet(out).count() == 1
    with pytest.raises(FileExistsError):
        atomic_write(lambda p: df.write.parquet(p), out)
    storage.write_manifest(out, {"rows": 1})
    assert storage.read_manifest(out) == {"rows": 1}
    assert storage.data_files(out) and all(f.startswith(f"{out}/part-") for f in storage.data_files(out))
    # A killed run's leftovers beside the output: removed by the next write to it.
    (tmp_path / "emb" / ".dt=2026-01-01.tmp-dead").mkdir()
    two = spark.createDataFrame([(1, 2.0), (2, 3.0)], "id long, x double")
    atomic_write(lambda p: two.write.parquet(p), out, overwrite=True)
    assert spark.read.parquet(out).count() == 2
    assert sorted(n for n in os.listdir(tmp_path / "emb") if not n.endswith(".crc")) == ["dt=2026-01-01"]
    storage.write_json(f"file://{tmp_path}/scores.json", {"f1": 0.5})
    with hadoop.open_input_stream(f"file://{tmp_path}/scores.json") as fh:
        assert b'"f1": 0.5' in fh.read()
    assert hadoop.get_file_info(f"file://{tmp_path}/none").type == fs.FileType.NotFound
    storage.remove(out)
    assert not exists(out) and not (tmp_path / "emb" / "dt=2026-01-01").exists()


def test_the_hadoop_file_systems_listing_and_fingerprint(spark, tmp_path):
    """A missing path and folder in one call each, and the manifest's input fingerprint
    of a remote input, all through the storage layer's Hadoop file system (the session's
    configuration); checked on file: URIs against the local view of the same files."""
    from pyarrow import fs

    from sepne_spark.jobs.common import _hadoop_fingerprint, _local_fingerprint

    (tmp_path / "edges").mkdir()
    for name, text in (("part-0.tsv", "1\t2\n"), ("part-1.tsv", "2\t3\n3\t4\n")):
        (tmp_path / "edges" / name).write_text(text, encoding="utf-8")
    hadoop = storage.HadoopFileSystem(spark, f"file://{tmp_path}")
    assert hadoop.get_file_info(fs.FileSelector(f"file://{tmp_path}/none", allow_not_found=True)) == []
    with pytest.raises(FileNotFoundError, match="none"):
        hadoop.get_file_info(fs.FileSelector(f"file://{tmp_path}/none"))
    listed = hadoop.get_file_info(fs.FileSelector(f"file://{tmp_path}/edges"))
    assert sorted(info.base_name for info in listed) == ["part-0.tsv", "part-1.tsv"]
    assert hadoop.get_file_info(f"file://{tmp_path}/edges/part-1.tsv").size == 8
    for given in (str(tmp_path / "edges"), str(tmp_path / "edges" / "part-*.tsv")):
        local = _local_fingerprint(given)
        remote = _hadoop_fingerprint(spark, "file://" + given)
        assert (remote["files"], remote["bytes"]) == (local["files"], local["bytes"]) == (2, 12)
        assert remote["modified_utc"] is not None
    assert _hadoop_fingerprint(spark, f"file://{tmp_path}/none")["files"] == 0


def test_an_unreachable_remote_output_is_left_to_the_write(monkeypatch):
    """Before Spark starts, pyarrow cannot reach hdfs: without libhdfs: the path rules
    still apply, and whether the output exists is checked by the write itself."""
    monkeypatch.setattr(storage, "_hadoop_filesystem", lambda path: None)  # no session: pyarrow's
    storage.check_output_path("hdfs://nn:8020/emb", ["hdfs://nn:8020/graphs/edges"], overwrite=False)
    with pytest.raises(UserError, match="is inside the input"):
        storage.check_output_path("hdfs://nn:8020/graphs/edges/emb", ["hdfs://nn:8020/graphs/edges"], overwrite=False)


def test_a_path_without_a_scheme_goes_where_the_sessions_hadoop_configuration_says(spark, tmp_path):
    """A cluster sets fs.defaultFS in core-site.xml, not as spark.hadoop.fs.defaultFS: the
    session's Hadoop configuration is read too (here the local one, file:///)."""
    assert storage._hadoop_default_fs(spark).startswith("file:")
    assert storage.resolve_output(spark, str(tmp_path / "emb")) == str(tmp_path / "emb")
    hadoop = spark._jsparkSession.sessionState().newHadoopConf()
    assert hadoop.get("fs.defaultFS") == storage._hadoop_default_fs(spark)


@pytest.mark.unit
def test_a_core_site_default_file_system_resolves_a_bare_path():
    """The Hadoop configuration's fs.defaultFS (no spark.hadoop.fs.defaultFS set), as a
    YARN cluster's core-site.xml gives it: a bare absolute path goes to HDFS."""
    class _Hadoop:
        def sessionState(self):
            return self

        def newHadoopConf(self):
            return self

        def get(self, key):
            return "hdfs://nn:8020" if key == "fs.defaultFS" else None

    session = _Conf(None)
    session._jsparkSession = _Hadoop()
    assert storage.resolve_output(session, "/data/emb") == "hdfs://nn:8020/data/emb"
    with pytest.raises(ValueError, match="absolute path or a full URI"):
        storage.resolve_output(session, "out/emb")


@pytest.mark.unit
def test_paths_without_a_scheme_are_qualified_by_the_clusters_default_file_system(tmp_path, monkeypatch):
    """On a cluster whose core-site.xml makes HDFS the default, /data/emb is HDFS's: the
    jobs check it as that URI before Spark starts (not as a local folder, whose root
    this user cannot write), and refuse a relative one."""
    from sepne_spark.errors import SettingError
    from sepne_spark.jobs import embed

    for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    import sepne_spark.session

    monkeypatch.setattr(sepne_spark.session, "active_session", lambda: None)  # before Spark starts
    assert storage.default_filesystem() is None
    assert storage.qualified("/data/emb", None, "--output") == "/data/emb"
    (tmp_path / "core-site.xml").write_text(
        "<configuration><property><name>fs.defaultFS</name><value>hdfs://nn:8020</value></property>"
        "</configuration>")
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    assert storage.default_filesystem() == "hdfs://nn:8020"
    assert storage.default_filesystem({"spark.hadoop.fs.defaultFS": "s3a://b"}) == "s3a://b"  # the session's wins
    assert storage.qualified("/data/emb", "hdfs://nn:8020", "--output") == "hdfs://nn:8020/data/emb"
    assert storage.qualified("file:///tmp/e", "hdfs://nn:8020", "--output") == "file:///tmp/e"
    assert storage.qualified("/data/emb", "file:///", "--output") == "/data/emb"
    with pytest.raises(SettingError, match=r"--output out/emb is a relative path, and a path without a scheme goes "
                                           r"to the default file system hdfs://nn:8020"):
        storage.qualified("out/emb", "hdfs://nn:8020", "--output")
    ns, _, target = embed._checked(["--input", "/graphs/edges", "--output", "/data/emb", "--save-model", "/m/x"])
    assert (ns.input, ns.output, ns.save_model, target) == (
        ["hdfs://nn:8020/graphs/edges"], "hdfs://nn:8020/data/emb", "hdfs://nn:8020/m/x", "hdfs://nn:8020/data/emb")
