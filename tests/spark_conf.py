"""The Spark settings of every session the tests start, in-process or in a subprocess.

The test graphs have tens to hundreds of nodes, so a query's cost is its fixed
overhead: two shuffle partitions (one per core of ``local[2]``, still more than one,
so every exchange is exercised) and no whole-stage code generation (compiling the
generated Java takes longer than running it on such inputs) take a quarter off the
suite's time. The JVMs that tests start in subprocesses live for under a minute: the
JIT's first tier alone (``TieredStopAtLevel=1``) saves a further sixth of their time,
which the optimising tier would spend compiling code that is never run again.
"""
from __future__ import annotations

TEST_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.ui.enabled": "false",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
}


def spark_flags(flag: str = "--spark") -> list[str]:
    """``TEST_CONF`` as command-line options: ``--spark K=V`` (a job) or ``--conf K=V``."""
    return [arg for key, value in TEST_CONF.items() for arg in (flag, f"{key}={value}")]
