"""The Spark settings of every session the tests start, in-process or in a subprocess.

The test graphs have tens to hundreds of nodes, so a query's cost is its fixed
overhead, most of it per task: no whole-stage code generation (compiling the
generated Java takes longer than running it on such inputs) takes a quarter off the
suite's time. The session of the test process (``TEST_CONF``) reads its inputs in two
partitions and shuffles into one: the spark tier took 430 s instead of 568 s with two
shuffle partitions (``-n 2``, the same machine, back to back). The tests that depend on
partitioning set it themselves: the separability test compares the session's one
shuffle partition with two and seven, the killed-write test one with three, and every
job the tests start in a subprocess (``SUBPROCESS_CONF``) runs two, one per core of
``local[2]``, as does the standalone cluster. Those JVMs live for under a minute: the
JIT's first tier alone (``TieredStopAtLevel=1``) saves a sixth of their time, which the
optimising tier would spend compiling code that is never run again. The session of
the test process lives for the whole suite and is slower without the optimising tier,
so it keeps the default.
"""
from __future__ import annotations

_COMMON: dict[str, str] = {
    "spark.default.parallelism": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.ui.enabled": "false",
}

TEST_CONF: dict[str, str] = {**_COMMON, "spark.sql.shuffle.partitions": "1"}

SUBPROCESS_CONF: dict[str, str] = {
    **_COMMON,
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
}


def spark_flags(flag: str = "--spark", **overrides: str) -> list[str]:
    """``SUBPROCESS_CONF`` as command-line options: ``--spark K=V`` (a job) or ``--conf K=V``.

    ``overrides`` replace or add settings, each key given once: ``spark_flags(**{"spark.x": "1"})``.
    """
    conf = {**SUBPROCESS_CONF, **overrides}
    return [arg for key, value in conf.items() for arg in (flag, f"{key}={value}")]
