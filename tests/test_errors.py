"""The exceptions' module, their old import locations and the package's public API (no Spark)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import sepne_spark
from sepne_spark import errors

pytestmark = pytest.mark.unit


def test_hierarchy():
    assert issubclass(errors.UserError, errors.SepNEError)
    for cls in (errors.SettingError, errors.InputError, errors.RequestedIdsError):
        assert issubclass(cls, errors.UserError) and issubclass(cls, ValueError)


def test_the_errors_are_also_importable_where_they_are_raised():
    from sepne_spark.jobs.common import UserError
    from sepne_spark.model import RequestedIdsError
    from sepne_spark.reading import InputError
    from sepne_spark.settings import SettingError
    from sepne_spark.settings import UserError as SettingsUserError

    assert UserError is SettingsUserError is errors.UserError
    assert InputError is errors.InputError and RequestedIdsError is errors.RequestedIdsError
    assert SettingError is errors.SettingError


def test_public_api_of_the_package():
    from sepne_spark.model import SepNE, SepNEModel
    from sepne_spark.graph import load_graph
    from sepne_spark.session import get_spark

    assert sepne_spark.SepNE is SepNE and sepne_spark.SepNEModel is SepNEModel
    assert sepne_spark.load_graph is load_graph and sepne_spark.get_spark is get_spark
    assert sepne_spark.errors is errors and sepne_spark.UserError is errors.UserError
    assert isinstance(sepne_spark.__version__, str)
    assert set(sepne_spark.__all__) <= set(dir(sepne_spark))
    with pytest.raises(AttributeError):
        sepne_spark.no_such_name  # noqa: B018


def test_importing_the_package_loads_neither_pyspark_nor_a_jvm():
    code = ("import sys, sepne_spark; assert sepne_spark.__version__; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'numpy')))")
    root = str(Path(sepne_spark.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=root)
    assert out.stdout.strip() == "[]"


def test_pyspark_missing_or_too_old_is_one_clear_error(monkeypatch):
    import importlib.metadata
    import importlib.util

    errors.require_pyspark()  # the PySpark installed here
    real_find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real_find(name, *a))
    with pytest.raises(errors.MissingExtraError, match=r"pip install 'sepne-spark\[spark\]'"):
        errors.require_pyspark()
    with pytest.raises(errors.MissingExtraError):
        sepne_spark.__getattr__("SepNE")  # the public API's Spark names check it first
    assert sepne_spark.__getattr__("InputError") is errors.InputError  # the errors need no Spark
    monkeypatch.setattr(importlib.util, "find_spec", real_find)

    def version(found: str):
        def fake(name: str) -> str:
            if name != "pyspark":
                raise importlib.metadata.PackageNotFoundError(name)
            if found == "none":  # a Spark distribution's python/ folder: no package metadata
                raise importlib.metadata.PackageNotFoundError(name)
            return found
        return fake

    for found, ok in (("3.4.4", False), ("2.4.8", False), ("3.5.0", True), ("4.3.0", True), ("none", True)):
        monkeypatch.setattr(importlib.metadata, "version", version(found))
        if ok:
            errors.require_pyspark()
        else:
            with pytest.raises(errors.MissingExtraError, match=f"needs PySpark 3.5 or later; this is PySpark {found}"):
                errors.require_pyspark()
