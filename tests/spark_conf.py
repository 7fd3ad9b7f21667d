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

Every session also evaluates expressions interpreted (``spark.sql.codegen.factoryMode``
``NO_CODEGEN``, the setting Spark's own test suites use): without whole-stage code
generation Spark still generated and compiled a Java class for each projection, sort
order and predicate of every query, which on these inputs costs more than evaluating
them. Every JVM collects garbage with the serial collector (``-XX:+UseSerialGC``): the
heaps are small, and three test processes with their subprocesses share two cores. The
two together took the propagation and pipeline tests from 237 s to 224 s, the two
variants run side by side, so that both met the same load on this shared machine (two
runs of the suite twenty minutes apart, that differed only in the order of the modules,
took 480 s and 716 s). The results are the same (the oracle tests compare to 1e-9 and
below). Users' sessions keep Spark's defaults: these settings are for the tests' tiny
inputs.
"""
from __future__ import annotations

_COMMON: dict[str, str] = {
    "spark.default.parallelism": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.ui.enabled": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}

TEST_CONF: dict[str, str] = {**_COMMON, "spark.sql.shuffle.partitions": "1",
                              "spark.driver.extraJavaOptions": "-XX:+UseSerialGC"}

SUBPROCESS_CONF: dict[str, str] = {
    **_COMMON,
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m -XX:+UseSerialGC",
}


def spark_flags(flag: str = "--spark", **overrides: str) -> list[str]:
    """``SUBPROCESS_CONF`` as command-line options: ``--spark K=V`` (a job) or ``--conf K=V``.

    ``overrides`` replace or add settings, each key given once: ``spark_flags(**{"spark.x": "1"})``.
    """
    conf = {**SUBPROCESS_CONF, **overrides}
    return [arg for key, value in conf.items() for arg in (flag, f"{key}={value}")]
