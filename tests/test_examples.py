"""The notebook example runs as written, in the test session (its ``%pip`` line aside)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "notebooks" / "sepne_quickstart.py"


def test_quickstart_notebook_runs(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SEPNE_EXAMPLE_OUTPUT", str(tmp_path / "quickstart"))
    monkeypatch.setenv("SEPNE_EXAMPLE_NODES", "600")
    source = NOTEBOOK.read_text()
    assert source.startswith("# Databricks notebook source")
    code = "\n".join(line for line in source.splitlines() if not line.startswith("# MAGIC"))
    spark.catalog.clearCache()
    exec(compile(code, str(NOTEBOOK), "exec"), {"spark": spark, "__name__": "__notebook__"})
    from tests.helpers import nothing_cached

    assert nothing_cached(spark)  # the notebook releases what its models cached, as README advises
    printed = capsys.readouterr().out
    assert "10% training: micro-F1" in printed
    assert "600 rows written" in printed
    assert (tmp_path / "quickstart" / "model").is_dir()
