"""Shared fixtures: one local SparkSession for the whole test session."""
from __future__ import annotations

import os
import sys

import pytest

from tests.spark_conf import TEST_CONF

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark():
    from sepne_spark.session import get_spark

    session = get_spark(
        "sepne-tests",
        master="local[2]",
        conf={**TEST_CONF, "spark.sql.adaptive.enabled": "false", "spark.driver.memory": "2g"},
    )
    yield session
    session.stop()
