"""Whether the GraphFrames JARs are here, for the tests that need them.

``scripts/setup.sh`` puts the core and GraphX JARs in ``jars/`` and the Spark Connect
plugin in ``jars/connect/``. A test that needs one calls :func:`require` (classic) or
:func:`require_connect_plugin`: without the JAR it is skipped on a developer machine
and FAILS under continuous integration (``CI=true``), where set-up must have put them
there. With the JARs present nothing is skipped.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from sepne_spark.session import connect_plugin_jars, for_this_spark, jar_dir, local_jars

CORE_JARS = ("graphframes-spark4_2.13-", "graphframes-graphx-spark4_2.13-")
CONNECT_JAR = "graphframes-connect-spark4_2.13-"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _missing(reason: str) -> None:
    reason += " (scripts/setup.sh puts them there)"
    if in_ci():
        pytest.fail("GraphFrames is required under CI: " + reason, pytrace=False)
    pytest.skip(reason)


def core_jars() -> list[str]:
    """The core and GraphX JARs in ``jars/``, or the test is skipped (failed under CI)."""
    found = [j for j in local_jars() if Path(j).name.startswith(CORE_JARS)]
    names = [Path(j).name for j in found]
    if not all(any(n.startswith(prefix) for n in names) for prefix in CORE_JARS):
        other = sorted(p.name for p in jar_dir().glob("*.jar") if not for_this_spark(str(p)))
        if other:  # make test-spark-version on Spark 3: these JARs cannot serve it, CI or not
            import pyspark

            pytest.skip(f"the GraphFrames JARs in {jar_dir()} are for another Spark major version than "
                        f"PySpark {pyspark.__version__}: {other}")
        _missing(f"the GraphFrames core and GraphX JARs are not both in {jar_dir()} (found {names})")
    return found


def require(spark) -> None:
    """Skip (or fail under CI) without the JARs; with them GraphFrames must work."""
    core_jars()
    from sepne_spark.session import graphframes_available

    assert graphframes_available(spark), "the GraphFrames JARs are in jars/ but GraphFrames does not work"


def connect_jars() -> list[str]:
    """core + GraphX + Connect plugin, for a Spark Connect server (skip or fail without)."""
    plugin = [j for j in connect_plugin_jars() if Path(j).name.startswith(CONNECT_JAR)]
    if not plugin:
        _missing(f"the GraphFrames Spark Connect plugin JAR is not in {jar_dir() / 'connect'}")
    return core_jars() + plugin
