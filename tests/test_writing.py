"""Atomic output: a failed write leaves the old output whole and nothing visible."""
from __future__ import annotations

import os

import pytest

from sepne_spark.writing import atomic_write, exists


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
