"""The Spark settings of every session the tests start, in-process or in a subprocess.

The test graphs have tens to hundreds of nodes, so a query's cost is its fixed
overhead, most of it per task: no whole-stage code generation (compiling the
generated Java takes longer than running it on such inputs) takes a quarter off the
suite's time. Every session reads its inputs in two partitions and shuffles into one:
the spark tier took 430 s instead of 568 s with two shuffle partitions (``-n 2``, the
same machine, back to back), and the Spark Connect test's server and client 45 s
instead of 56 s (alone on a quiet machine, 2026-12-04). The tests that depend on
partitioning set it themselves: the separability test compares one shuffle partition
with two and seven, the killed-write test one with three, and the standalone cluster
runs two (:data:`CLUSTER_CONF`), so that both of its executors solve sets.

Every JVM the tests start (the test processes' sessions, the jobs in subprocesses, the
Spark Connect server, the standalone cluster's daemons and executors) runs the JIT's
first tier alone (``TieredStopAtLevel=1``, :data:`JAVA_OPTIONS`), with room for its
code (``ReservedCodeCacheSize``: C1's code is larger, and a full code cache stops the
JIT). The optimising tier spends more CPU compiling than its code saves on these tiny
inputs: one session running the Spark Connect test's three fits four times over
(about 80 s) spent 63 s of CPU in C2 and 18 s in C1 (``-XX:+CITime``); with C1 alone,
11 s. On 2 cores shared by three test processes that CPU is taken from the tests:
``make test`` went from 618 s to 500 s of pytest on a quiet machine (2026-12-03; 483 s
in a fresh clone's ``.ci/run``, 9 min 16 s with its set-up). The test processes'
sessions had kept C2 until then, after an earlier measurement had found them slower
without it; measured again, ``test_core``, ``test_pipeline`` and ``test_jobs`` took
321 s with C1 alone against 364 s (``-n 3``, one run after the other on a quiet machine).

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
below).

Memory pages are 1 MB (``spark.buffer.pageSize``). Spark sizes them from the heap and
the cores, 32 MB for the test processes' 2 GB drivers, and the hash relation of every
broadcast join holds at least one page in the driver until the context cleaner frees it:
four small fits left 1.8 GB of the heap live after a full collection, of which 1.5 GB
in 14,936 ``long[]`` arrays, and the run spent 17 s of its 42 in collection pauses; with 1 MB pages,
135 MB live, and a warm distributed fit took 3.3 s instead of 7 to 9.5 s. ``make test``
went from 520 s to 444 s of pytest (2026-12-03, quiet, one run each). At the product's
scale this does not arise: a job on 20,000 nodes spent 0.5 s of 57 s in collection
pauses with the default pages.

Users' sessions keep Spark's defaults: these settings are for the tests' tiny inputs.
"""
from __future__ import annotations

_COMMON: dict[str, str] = {
    "spark.default.parallelism": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.ui.enabled": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.buffer.pageSize": "1m",
}

#: JVM options of every JVM the tests start (drivers, executors, the cluster's daemons).
JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m -XX:+UseSerialGC"

TEST_CONF: dict[str, str] = {**_COMMON, "spark.sql.shuffle.partitions": "1",
                              "spark.driver.extraJavaOptions": JAVA_OPTIONS}

SUBPROCESS_CONF: dict[str, str] = {
    **_COMMON,
    "spark.sql.shuffle.partitions": "1",
    "spark.driver.extraJavaOptions": JAVA_OPTIONS,
    "spark.executor.extraJavaOptions": JAVA_OPTIONS,
}

#: The standalone cluster's jobs: two shuffle partitions, one per executor.
CLUSTER_CONF: dict[str, str] = {**SUBPROCESS_CONF, "spark.sql.shuffle.partitions": "2"}


def spark_flags(flag: str = "--spark", base: dict[str, str] = SUBPROCESS_CONF, **overrides: str) -> list[str]:
    """``base`` (``SUBPROCESS_CONF``) as command-line options: ``--spark K=V`` (a job) or ``--conf K=V``.

    ``overrides`` replace or add settings, each key given once: ``spark_flags(**{"spark.x": "1"})``.
    """
    conf = {**base, **overrides}
    return [arg for key, value in conf.items() for arg in (flag, f"{key}={value}")]
