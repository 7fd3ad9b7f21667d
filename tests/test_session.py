"""The sessions the library builds: their Python workers' daemon (sepne_spark.daemon)."""
from __future__ import annotations

import sys
from pathlib import Path

import pyspark
import pytest

from sepne_spark import daemon
from sepne_spark.session import replaced_submitted

#: How Spark names the type a setting's value should have: quoted on Spark 4 ('int'),
#: "should be int" on Spark 3.5.
TYPE_WORDS = "'{}'" if int(pyspark.__version__.split(".")[0]) >= 4 else "should be {}"


def _installed(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A site folder with a PySpark package holding its archives, as pip installs it."""
    site = tmp_path / "site"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "__init__.py").write_text("")
    (site / "pyspark" / "jars").mkdir()
    archives = [lib / "pyspark.zip", lib / "py4j-0.10.9.9-src.zip", site / "pyspark" / "jars" / "spark-core.jar"]
    for a in archives:
        a.write_bytes(b"PK")
    return site, archives


@pytest.mark.unit
def test_only_the_installed_packages_archives_leave_the_path(tmp_path):
    site, archives = _installed(tmp_path)
    mine = tmp_path / "deps.zip"
    mine.write_bytes(b"PK")
    path = [str(a) for a in archives] + [str(mine), str(tmp_path / "code"), str(site)]
    assert daemon.installed_pyspark(path) == str(site.resolve() / "pyspark")
    assert daemon.without_bundled_archives(path) == [str(mine), str(tmp_path / "code"), str(site)]


@pytest.mark.unit
def test_path_unchanged_without_an_installed_pyspark(tmp_path):
    spark_home = tmp_path / "spark" / "python" / "lib"
    spark_home.mkdir(parents=True)
    (spark_home / "pyspark.zip").write_bytes(b"PK")  # a Spark distribution's archive, no package beside it
    path = [str(spark_home / "pyspark.zip"), str(tmp_path)]
    assert daemon.installed_pyspark(path) is None
    assert daemon.without_bundled_archives(path) == path


def test_session_workers_import_pyspark_from_the_package_scan_no_archive_and_start_preloaded(spark):
    assert spark.conf.get(daemon.SETTING) == daemon.MODULE
    wanted = daemon.PRELOAD

    def probe(batches):
        import importlib
        import zipimport

        import pyspark

        preloaded = ",".join(m for m in wanted if m in sys.modules)  # before this task imports anything
        importlib.invalidate_caches()  # what every task starts with
        archives = sorted({k for k, v in sys.path_importer_cache.items() if isinstance(v, zipimport.zipimporter)})
        for pdf in batches:
            pdf["where"] = pyspark.__file__
            pdf["archives"] = ";".join(archives)
            pdf["preloaded"] = preloaded
            yield pdf

    rows = spark.range(4).repartition(2).mapInPandas(
        probe, "id long, where string, archives string, preloaded string").collect()
    assert sorted(r["id"] for r in rows) == [0, 1, 2, 3]  # tasks run and return their rows
    import pyspark

    for r in rows:
        assert r["where"] == pyspark.__file__, r["where"]
        assert r["archives"] == "", r["archives"]
        # The daemon imported the library's modules once; the worker it forked has them.
        assert r["preloaded"] == ",".join(wanted), r["preloaded"]


def test_only_local_masters_are_told_this_interpreter():
    from sepne_spark.session import runs_here

    assert runs_here("local[2]", {}) and runs_here(None, {"spark.master": "local[*]"})
    assert not runs_here(None, {"spark.master": "yarn"}) and not runs_here("spark://127.0.0.1:7077", {})
    assert not runs_here(None, {})  # submitted without a master setting: the cluster decides


@pytest.mark.unit
def test_a_driver_in_a_cluster_container_uses_its_allotted_cores():
    from sepne_spark.session import allotted_driver_cores

    assert allotted_driver_cores({"spark.submit.deployMode": "cluster", "spark.driver.cores": "4"}) == 4
    # Spark's default for a driver in the cluster is one core
    assert allotted_driver_cores({"spark.submit.deployMode": "cluster", "spark.driver.cores": None}) == 1
    # a driver on the machine Python runs on (client mode, the default) has that machine's cores
    assert allotted_driver_cores({"spark.submit.deployMode": "client", "spark.driver.cores": "4"}) is None
    assert allotted_driver_cores({"spark.submit.deployMode": None, "spark.driver.cores": "4"}) is None


def test_a_local_session_leaves_the_driver_its_machines_cores(spark):
    from sepne_spark.session import driver_cores

    assert driver_cores(spark) is None


@pytest.mark.unit
def test_settings_that_replace_a_submitted_value_are_named():
    """Under spark-submit, a session's conf (a profile's spark: block, --spark) replaces
    what the submission set; get_spark warns with each value this finds (test_submit
    reads the warning of a real submission)."""
    launched = {"spark.executor.memory": "32g", "spark.sql.shuffle.partitions": "800", "spark.master": "yarn",
                "spark.sql.adaptive.enabled": "true", "spark.driver.memory": "16g"}
    conf = {"spark.executor.memory": "16g", "spark.sql.shuffle.partitions": 800, "spark.executor.cores": "4",
            "spark.sql.adaptive.enabled": True, "spark.driver.memory": "8g"}
    # The driver's memory is not replaced (the driver runs already): get_spark says so apart.
    assert replaced_submitted(conf, launched) == {"spark.executor.memory": ("32g", "16g")}
    assert replaced_submitted({}, launched) == {}


def test_a_spark_sql_value_spark_cannot_read_is_refused_and_a_mistyped_key_named(spark, caplog):
    """Each SQL value is parsed by a fresh SQLConf of the JVM: the running session's
    settings are not touched, a bad value is a SettingError naming key, value and type,
    and a key one slip from Spark's own is named in a warning (a catalog's key is not)."""
    import logging

    from sepne_spark.errors import SettingError
    from sepne_spark.session import check_sql_settings

    before = spark.conf.get("spark.sql.shuffle.partitions")
    for key, value, words in [("spark.sql.shuffle.partitions", "abc", TYPE_WORDS.format("int")),
                              ("spark.sql.adaptive.enabled", "maybe", TYPE_WORDS.format("boolean")),
                              ("spark.sql.shuffle.partitions", "-3", "must be positive"),
                              ("spark.sql.session.timeZone", "Mars/Base", "timezone")]:
        with pytest.raises(SettingError) as err:
            check_sql_settings(spark._jvm, {"spark.sql.ansi.enabled": "true", key: value})
        assert str(err.value).startswith(f"Spark setting {key}={value}: ") and words in str(err.value), err.value
    with caplog.at_level(logging.WARNING, logger="sepne_spark"):
        check_sql_settings(spark._jvm, {"spark.sql.shufle.partitions": "3", "spark.sql.shuffle.partitions": "7",
                                        "spark.sql.catalog.lake": "org.example.Catalog",
                                        "spark.sql.catalog.spark_catalog.type": "hive",
                                        "spark.sql.catalog.spark_catalog.uri": "thrift://127.0.0.1:9083",
                                        "spark.sql.warehouse.dir": "/tmp/w"})
    assert [r.getMessage() for r in caplog.records] == [
        "Spark setting spark.sql.shufle.partitions is not one this Spark defines, so it changes nothing: "
        "did you mean spark.sql.shuffle.partitions?"]
    assert spark.conf.get("spark.sql.shuffle.partitions") == before


@pytest.mark.e2e
def test_a_job_given_a_spark_sql_value_spark_cannot_read_ends_in_one_line(tmp_path):
    """A session holding such a value hangs PySpark 4.1 at its first query (reporting the
    error reads the value again): the job checks the value before the session exists and
    exits 2 with one line. (The timeout is the hang's guard, not a speed target.)"""
    import os
    import subprocess

    from tests.spark_conf import spark_flags

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root), SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYSPARK_GATEWAY_PORT", None)
    proc = subprocess.run([sys.executable, str(root / "jobs" / "embed.py"),
                           *spark_flags(**{"spark.sql.shuffle.partitions": "abc"}), "--generated", "--output",
                           str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("sepne-embed: error: Spark setting spark.sql.shuffle.partitions=abc: ")
    assert TYPE_WORDS.format("int") in last
    assert not (tmp_path / "out").exists()


def test_a_connect_client_before_spark_4_checkpoints_to_parquet_files(spark, tmp_path, monkeypatch):
    """A Spark Connect client of PySpark 3.5 has no checkpoints: ``checkpoint`` writes
    the table as Parquet under ``spark.checkpoint.dir``, reads it back (its plan a file
    scan, so a loop of them stays small) and hands the folder to the holder, whose
    ``unpersist()`` removes it; without the setting it says what to set. (Exercised
    here on the classic session, as that client would; tests/test_connect.py runs it
    on a Spark Connect 3.5 server under ``make test-spark-version SPARK=3.5.x``.)"""
    from chispa import assert_df_equality
    from pyspark.sql import functions as F

    from sepne_spark import session
    from sepne_spark.errors import SettingError

    monkeypatch.setattr(session, "connect_before_4", lambda s: True)
    df = spark.range(20).withColumn("x", F.col("id") * 2).where(F.col("id") % 3 > 0)
    monkeypatch.setattr(session, "_checkpoint_folder", lambda s: None)
    with pytest.raises(SettingError, match=r"has no checkpoints \(Spark 4.0 added them\).*set spark.checkpoint.dir"):
        session.checkpoint(df)
    monkeypatch.setattr(session, "_checkpoint_folder", lambda s: str(tmp_path))
    held: list = []
    with session.holding_checkpoints(held):
        out = session.checkpoint(df)
    assert_df_equality(out, df, ignore_row_order=True, ignore_nullable=True)
    (written,) = held
    assert written.path.startswith(str(tmp_path / "sepne-")) and Path(written.path).is_dir()
    assert out.inputFiles() and all(written.path in f for f in out.inputFiles())  # read back from the files
    assert not any(".snappy." in f for f in out.inputFiles())  # uncompressed (see session._written)
    # release() unpersists a table persisted from the files before it removes them (a
    # Spark Connect server analyses the table again to unpersist it: tests/test_connect.py).
    kept = out.where(F.col("x") > 4).persist()
    assert kept.count() == 11 and kept.is_cached
    session.release(held + [kept])
    assert not kept.is_cached
    assert not any(tmp_path.iterdir())
