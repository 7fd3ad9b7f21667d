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
