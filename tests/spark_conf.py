"""The Spark settings of every session the tests start, in-process or in a subprocess.

The test graphs have tens to hundreds of nodes, so a query's cost is its fixed
overhead: two shuffle partitions (one per core of ``local[2]``, still more than one,
so every exchange is exercised) and no whole-stage code generation (compiling the
generated Java takes longer than running it on such inputs) take a quarter off the
suite's time. The JVMs that tests start in subprocesses (``SUBPROCESS_CONF``) live for
under a minute: the JIT's first tier alone (``TieredStopAtLevel=1``) saves a sixth of
their time, which the optimising tier would spend compiling code that is never run
again. The session of the test process lives for the whole suite and is slower
without the optimising tier, so it keeps the default.
"""
from __future__ import annotations

TEST_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.ui.enabled": "false",
}

SUBPROCESS_CONF: dict[str, str] = {
    **TEST_CONF,
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
}


def spark_flags(flag: str = "--spark", **overrides: str) -> list[str]:
    """``SUBPROCESS_CONF`` as command-line options: ``--spark K=V`` (a job) or ``--conf K=V``.

    ``overrides`` replace or add settings, each key given once: ``spark_flags(**{"spark.x": "1"})``.
    """
    conf = {**SUBPROCESS_CONF, **overrides}
    return [arg for key, value in conf.items() for arg in (flag, f"{key}={value}")]
