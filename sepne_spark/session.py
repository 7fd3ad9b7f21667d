"""Finding or building the SparkSession the library runs in.

Library code never creates a session behind the user's back when one is active
(notebooks, ``spark-submit``, Spark Connect): :func:`get_spark` returns the active one.
Only when none exists (a local script, the test suite) does it build a local session,
with the GraphFrames JARs from ``jars/`` (or ``$SEPNE_SPARK_JARS``) on ``spark.jars``.
"""
from __future__ import annotations

import datetime
import glob
import inspect
import logging
import os
import re
import sys
import tempfile
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator, Mapping

import pyspark
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from sepne_spark import daemon
from sepne_spark.errors import UserError
from sepne_spark.progress import is_connect

log = logging.getLogger(__name__)

GRAPHFRAMES_CLASS = "org.graphframes.GraphFramePythonAPI"
GRAPHFRAMES_CONNECT_CLASS = "org.apache.spark.sql.graphframes.GraphFramesConnect"


def jar_dir() -> Path:
    """Folder holding the GraphFrames JAR and its dependencies for local sessions."""
    env = os.environ.get("SEPNE_SPARK_JARS", "").strip()
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parent.parent / "jars"


def local_jars() -> list[str]:
    """The JAR files found in :func:`jar_dir` (empty when none were fetched), less those
    built for another Spark major version than this PySpark's (see :func:`for_this_spark`)."""
    return [jar for jar in sorted(glob.glob(str(jar_dir() / "*.jar"))) if for_this_spark(jar)]


def for_this_spark(jar: str) -> bool:
    """Whether a JAR is for this PySpark's Spark: GraphFrames names the Spark major
    version it was built for (``graphframes-spark4_2.13-0.11.0.jar``), and one built for
    Spark 4 fails on Spark 3.5 at its first call. A JAR that names none is kept."""
    found = re.search(r"-spark(\d+)_", Path(jar).name)
    if found is None or found.group(1) == pyspark.__version__.split(".")[0]:
        return True
    log.debug("%s is for Spark %s, not this PySpark %s: left off spark.jars", jar, found.group(1), pyspark.__version__)
    return False


def local_cores(master: str) -> int:
    """Cores of a ``local``, ``local[N]``, ``local[*]`` or ``local[N,F]`` master (at least 2)."""
    inner = master[master.find("[") + 1:master.find("]")] if "[" in master else "1"
    first = inner.split(",")[0].strip()
    cores = (os.cpu_count() or 2) if first == "*" else int(first) if first.isdigit() else 1
    return max(2, cores)


#: The setting of the folder reliable checkpoints are written to (:func:`checkpoint`).
_CHECKPOINT_DIR = "spark.checkpoint.dir"

#: Whether ``DataFrame.localCheckpoint`` takes a storage level (PySpark 4.0 on).
_LOCAL_CHECKPOINT_LEVEL = "storageLevel" in inspect.signature(DataFrame.localCheckpoint).parameters


def checkpoint(df: DataFrame, storage_level: StorageLevel | None = None) -> DataFrame:
    """``df`` computed now and cut from its lineage, in a way that outlives its executors.

    With a local master the one executor is the driver's JVM: a local checkpoint (held
    by the executors' block managers, in ``storage_level``, Spark's default when None
    and on Spark 3.5)
    lives as long as the application. With any other master a local checkpoint's blocks
    are lost with their executor, and a later stage that needs them fails the job
    (``CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND``): there the table is written to
    ``spark.checkpoint.dir`` (HDFS, S3, a shared folder), computed once (persisted
    while it is written). Without a checkpoint directory it stays a local checkpoint,
    with a warning, once per session, that losing an executor then fails the job.

    A Spark Connect client before Spark 4.0 has neither checkpoint: there ``df`` is
    written as Parquet under ``spark.checkpoint.dir`` and read back (:func:`_written`),
    and without that setting :class:`~sepne_spark.errors.SettingError` says what to do.
    Persisting instead keeps the lineage, and a loop of them sends the server plans that
    double in size each round.

    A Spark Connect client of Spark 4 checkpoints a read of a temporary view of ``df``
    (dropped once the checkpoint is made): its ``localCheckpoint`` and ``checkpoint``
    parse the plan they send again, with protobuf's limit of 100 nested messages, and
    failed with ``DecodeError`` on plans of more than about 50 nested operations (the
    distributed solve's with the steps after it), which a view's read is not.
    """
    if connect_before_4(df.sparkSession):
        return _written(df)
    if is_connect(df.sparkSession):
        name = _temporary_view(df, "sepne_checkpoint")
        try:
            return _checkpoint(df.sparkSession.table(name), storage_level)
        finally:
            df.sparkSession.catalog.dropTempView(name)
    return _checkpoint(df, storage_level)


def _checkpoint(df: DataFrame, storage_level: StorageLevel | None) -> DataFrame:
    """:func:`checkpoint` of a classic session, or of a Spark Connect client of Spark 4."""
    spark = df.sparkSession
    master = str(spark.conf.get("spark.master", "") or "")
    if master.startswith("local"):
        return _local_checkpoint(df, storage_level)
    if spark.conf.get(_CHECKPOINT_DIR, None):
        kept = df.persist(storage_level or StorageLevel.MEMORY_AND_DISK)
        out = kept.checkpoint(eager=True)
        kept.unpersist()
        return out
    if not getattr(spark, "_sepne_checkpoint_warned", False):
        log.warning("spark.checkpoint.dir is not set on this %s session: the intermediate tables are local "
                    "checkpoints, which a lost executor takes with it (the job then fails); set it to a "
                    "folder every executor reaches (hdfs://, s3a://) for jobs that survive a lost executor",
                    master or "cluster")
        try:
            spark._sepne_checkpoint_warned = True  # type: ignore[attr-defined]
        except Exception:  # pragma: no cover - some session types forbid attributes
            pass
    return _local_checkpoint(df, storage_level)


#: Whether a Spark Connect client has checkpoints (``localCheckpoint`` and
#: ``checkpoint``) and observed metrics (``Observation``): Spark 4.0 on; a Spark 3.5
#: client raises ``NOT_IMPLEMENTED``.
_CONNECT_CHECKPOINTS = int(pyspark.__version__.split(".")[0]) >= 4


def connect_before_4(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session of a PySpark before 4.0, which has
    no checkpoints (:func:`checkpoint` writes Parquet instead) and no ``Observation``."""
    return not _CONNECT_CHECKPOINTS and is_connect(spark)


def pinned(df: Any, prefix: str) -> Any:
    """``df`` as a table whose persisted descendants later queries find, under a Spark
    Connect client before 4.0; ``df`` itself elsewhere.

    A Spark Connect client has every query's plan analysed anew on the server, and Spark
    3.5 tells two analyses of some sources apart (its text format has no equality,
    unlike Parquet's and CSV's): a table persisted from such a source there never
    matched the queries built on it, and each of them read and parsed the files again.
    Under such a client ``df`` becomes a temporary view, ``<prefix>_<12 hex digits>``,
    read back with ``spark.table``: the server keeps one analysis of it that every
    query shares. The view ends with the session and stores no rows of its own (a
    DataFrame made from local rows carries them in its plan, and so in the view).
    """
    if not connect_before_4(df.sparkSession):
        return df
    return df.sparkSession.table(_temporary_view(df, prefix))


def _temporary_view(df: Any, prefix: str) -> str:
    """The name of a new temporary view of ``df``, ``<prefix>_<12 hex digits>``."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    df.createTempView(name)
    return name


#: The list :func:`checkpoint` appends its stand-ins to (:func:`holding_checkpoints`).
_HOLDER: ContextVar[list | None] = ContextVar("sepne_checkpoint_holder", default=None)


@contextmanager
def holding_checkpoints(held: list) -> Iterator[list]:
    """Within the block, the tables :func:`checkpoint` writes in place of checkpoints
    (Spark Connect before 4.0) are appended to ``held``: the caller calls their
    ``unpersist()`` (which removes the files) once the results that read them are
    written or collected."""
    token = _HOLDER.set(held)
    try:
        yield held
    finally:
        _HOLDER.reset(token)


#: Why :func:`checkpoint` stops under Spark Connect before 4.0 without a folder for it.
NO_CONNECT_CHECKPOINT = (
    "this Spark Connect client (PySpark {version}) has no checkpoints (Spark 4.0 added them), which label "
    "propagation (partition LP), the steps after the solve on graphs above oneTaskNodes (refinement, "
    "propagation, averaging) and the anchor of unreached nodes need; set spark.checkpoint.dir on the server "
    "(the cluster's Spark configuration) to a folder its executors write and the client can remove files "
    "from (a Unity Catalog volume, dbfs:/tmp/..., hdfs://...), and those tables are written there as Parquet, "
    "or use Spark 4 (Databricks Runtime 17 and later) or a classic session"
)


class _Written:
    """A table written in place of a checkpoint (see :func:`_written`); :meth:`unpersist`
    removes its files."""

    def __init__(self, spark: Any, path: str) -> None:
        self.sparkSession, self.path = spark, path

    def unpersist(self) -> None:
        from sepne_spark import storage

        try:
            storage.remove(self.path)
        except Exception as exc:  # noqa: BLE001 - a folder the client cannot reach: left for the cluster's clean-up
            log.warning("could not remove %s, written in place of a checkpoint: %s", self.path,
                        str(exc).splitlines()[0][:200])


def release(held: list) -> None:
    """Unpersist the tables in ``held`` and remove the files written in place of
    checkpoints among them (:func:`holding_checkpoints`), skipping those of a session
    stopped since (gone with it).

    The tables go first, the latest first, and the files last: a Spark Connect client's
    ``unpersist`` has the server analyse the table's plan again, which fails once files
    it reads are gone (``PATH_NOT_FOUND``), and a table persisted after one of them may
    read it. Every one is tried; the first error is raised after the last.
    """
    tables = [item for item in reversed(held) if not isinstance(item, _Written)]
    first: Exception | None = None
    for item in tables + [item for item in held if isinstance(item, _Written)]:
        if is_stopped(item.sparkSession):
            continue
        try:
            item.unpersist()
        except Exception as exc:  # noqa: BLE001 - the others are released all the same
            log.debug("could not release %r", item, exc_info=True)
            first = first or exc
    if first is not None:
        raise first


def _checkpoint_folder(spark: Any) -> str | None:
    """The session's ``spark.checkpoint.dir``, or None."""
    return spark.conf.get(_CHECKPOINT_DIR, None) or None


def _written(df: Any) -> Any:
    """``df`` written as Parquet under ``spark.checkpoint.dir`` and read back: a
    :func:`checkpoint` where Spark Connect has none (before 4.0). The folder is appended
    to the list of the innermost :func:`holding_checkpoints` block, whose
    ``unpersist()`` removes it."""
    from sepne_spark.errors import SettingError

    spark = df.sparkSession
    folder = _checkpoint_folder(spark)
    if not folder:
        raise SettingError(NO_CONNECT_CHECKPOINT.format(version=pyspark.__version__))
    path = f"{folder.rstrip('/')}/sepne-{uuid.uuid4().hex}"
    # Uncompressed: the tables hold float blocks that do not compress, and Spark 3.5
    # reads Snappy pages of values that large very slowly (its Parquet decompressor
    # grows a direct buffer per piece of a page: 300 MB of 2 MB blocks took 93 s
    # against 0.6 s uncompressed in a local session; Spark 4.1 took 2.3 s). Given to
    # parquet() itself: a Spark Connect 3.5 client's parquet() sets the option again,
    # to Spark's default, when it is not.
    df.write.parquet(path, compression="none")
    held = _HOLDER.get()
    if held is not None:
        held.append(_Written(spark, path))
    else:
        log.debug("%s: written in place of a checkpoint outside holding_checkpoints(), kept", path)
    return spark.read.parquet(path)


def _local_checkpoint(df: DataFrame, storage_level: StorageLevel | None) -> DataFrame:
    """``df.localCheckpoint(eager=True)`` in ``storage_level`` where PySpark takes one
    (4.0 on); before, and when it is None, in Spark's default level."""
    if storage_level is None or not _LOCAL_CHECKPOINT_LEVEL:
        return df.localCheckpoint(eager=True)
    return df.localCheckpoint(eager=True, storageLevel=storage_level)


def connect_plugin_jars() -> list[str]:
    """The GraphFrames Spark Connect server plugin JAR(s) in ``jar_dir()/connect``.

    Only a Spark Connect *server* loads them, next to :func:`local_jars`, with
    ``spark.connect.extensions.relation.classes`` set to :data:`GRAPHFRAMES_CONNECT_CLASS`.
    """
    return [jar for jar in sorted(glob.glob(str(jar_dir() / "connect" / "*.jar"))) if for_this_spark(jar)]


def driver_cores(spark: Any) -> int | None:
    """The cores a cluster manager allots the driver of ``spark``, for work the library
    does on the driver in threads (node classification): ``spark.driver.cores`` (Spark's
    default, 1, where it is not set) when the driver runs in a container of the cluster
    (``spark.submit.deployMode`` ``cluster``, on YARN or Kubernetes). ``None`` elsewhere:
    in client mode, with a local master and in a Spark Connect client, the Python process
    is on a machine of its own, whose cores it may use."""
    if is_connect(spark):
        return None
    return allotted_driver_cores({key: spark.conf.get(key, None)
                                  for key in ("spark.submit.deployMode", "spark.driver.cores")})


def allotted_driver_cores(conf: Mapping[str, Any]) -> int | None:
    """:func:`driver_cores` from the two settings it reads (``None`` for one not set)."""
    if str(conf.get("spark.submit.deployMode") or "client").strip().lower() != "cluster":
        return None
    text = str(conf.get("spark.driver.cores") or "1").strip()
    return max(1, int(text)) if text.isdigit() else 1


def active_session() -> SparkSession | None:
    """The active SparkSession (classic or Spark Connect), or ``None``."""
    spark = SparkSession.getActiveSession()
    if spark is not None:
        return spark
    # Spark Connect sessions are tracked separately, by a module that a Connect session
    # has imported already. It is not imported here: without the connect extra (grpc),
    # PySpark 4.3 exits the process on that import (instead of raising ImportError) when
    # __main__ has no file, as in a pytest-xdist worker or an embedded interpreter.
    connect = sys.modules.get("pyspark.sql.connect.session")
    return None if connect is None else connect.SparkSession.getActiveSession()


def is_dataframe(obj: Any) -> bool:
    """Whether ``obj`` is a Spark DataFrame: a classic one, or Spark Connect's, which on
    Spark 3.4 and 3.5 is no ``pyspark.sql.DataFrame`` (on 4.x both derive from it)."""
    if isinstance(obj, DataFrame):
        return True
    connect = sys.modules.get("pyspark.sql.connect.dataframe")  # loaded by any Connect session
    return connect is not None and isinstance(obj, connect.DataFrame)


def is_stopped(spark: SparkSession) -> bool:
    """Whether ``spark`` has been stopped: a Spark Connect session that was closed, or a
    classic one whose context was stopped (``spark.stop()``, or a notebook's restart)."""
    stopped = getattr(type(spark), "is_stopped", None)
    if stopped is not None:  # Spark Connect's property
        return bool(spark.is_stopped)
    try:
        return spark._sc._jsc is None  # noqa: SLF001 - set to None by SparkContext.stop()
    except Exception:  # noqa: BLE001 - a session without them, or that refuses them: taken as running
        return False


def runs_here(master: str | None, launched: Mapping[str, str]) -> bool:
    """Whether a new session's executors run on this machine: its master (``master``, or
    the ``spark.master`` a ``spark-submit`` launched the JVM with) is a local one."""
    return (master or launched.get("spark.master", "")).startswith("local")


#: Settings of the driver's JVM itself: under spark-submit it is running before any
#: session is built, so a session's value for them changes nothing.
LAUNCH_ONLY = ("spark.driver.memory", "spark.driver.cores", "spark.driver.extraJavaOptions",
               "spark.driver.extraClassPath", "spark.driver.extraLibraryPath")


def _text(value: Any) -> str:
    """A setting's value as Spark holds it (``True`` is ``"true"``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def replaced_submitted(conf: Mapping[str, Any], launched: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The settings of ``conf`` that replace a different value the submission set
    (``launched``): key -> (submitted value, new value), in ``conf``'s order; the
    driver's launch settings (:data:`LAUNCH_ONLY`) are not among them."""
    return {key: (launched[key], _text(value)) for key, value in conf.items()
            if key in launched and key not in LAUNCH_ONLY and launched[key] != _text(value)}


def _user() -> str:
    """The name of the user running this process, for folders of its own (the uid where
    the system knows no name for it)."""
    try:
        import getpass

        return re.sub(r"[^A-Za-z0-9._-]", "_", getpass.getuser()) or str(os.getuid())
    except Exception:  # noqa: BLE001 - no name for this uid (a container's)
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def get_spark(
    app_name: str = "sepne-spark",
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    run_checkpoints: bool = False,
) -> SparkSession:
    """Return the active SparkSession, or build a local one.

    A session it builds with a local master runs its Python workers with this
    interpreter (unless ``$PYSPARK_PYTHON`` says otherwise; so does one that
    ``spark-submit --master local[N]`` launched, which keeps the rest of its settings;
    with a cluster master the submission says which Python the executors run), uses one shuffle partition
    per core with adaptive execution coalescing them (in persisted tables' plans too),
    hides the console progress bar (the library logs its stages instead), starts its
    Python workers through :mod:`sepne_spark.daemon`, and has the GraphFrames JARs of
    :func:`jar_dir` on ``spark.jars``. Under ``spark-submit`` (no session yet, the JVM
    launched with the submission's settings) a setting the submission gives
    (``--conf``, ``spark-defaults.conf``) keeps its value against these defaults.
    ``conf`` overrides all of them, the submission's included: each submitted value it
    replaces is named in a warning. Under ``spark-submit`` the driver's own settings
    (:data:`LAUNCH_ONLY`, such as ``spark.driver.memory``) are the exception: the driver
    runs already, so ``conf``'s values for them are dropped, with a warning.

    Parameters
    ----------
    app_name:
        Application name for a new session.
    master:
        Master URL for a new session; defaults to ``$SEPNE_SPARK_MASTER`` or
        ``local[*]``. Ignored when a session is already active. Without it (and outside
        ``spark-submit``), ``$SPARK_REMOTE`` connects to that Spark Connect server
        instead, with the server's settings.
    conf:
        Extra Spark settings for a new session.
    run_checkpoints:
        For a new session with a ``spark.checkpoint.dir`` (a local session's, under the
        temporary folder, or one given here or by the submission): make its checkpoint
        folder one of its own under that one, ``<dir>/<app_name>-<UTC time>-<8 hex
        digits>``, named in the session's ``_sepne_run_checkpoints`` attribute, for the
        caller to remove when the run ends (the jobs do:
        :func:`sepne_spark.jobs.common.run_job`). Spark never removes the files of a
        checkpoint that is still referred to when the application ends.
    """
    spark = active_session()
    if spark is not None:
        return spark
    # Under spark-submit the JVM is already launched with the cluster's master: keep it.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    remote = os.environ.get("SPARK_REMOTE")
    master = master or os.environ.get("SEPNE_SPARK_MASTER")
    if remote and master and not submitted:  # PySpark itself refuses a master with SPARK_REMOTE
        from sepne_spark.errors import UserError

        raise UserError(f"SPARK_REMOTE ({remote}) and a master ({master}, SEPNE_SPARK_MASTER or the caller's) are "
                        "both set: unset SPARK_REMOTE to run locally or on that master, or the master to use the "
                        "Spark Connect server")
    if remote and not submitted:
        # A Spark Connect server (PySpark's own SPARK_REMOTE): the server's settings and
        # JARs stand; a job sets the SQL settings of its profile and --spark for its run
        # and names the others in a warning, as in any session that runs already.
        log.info("connecting to the Spark Connect server at %s (SPARK_REMOTE)", remote)
        return SparkSession.builder.remote(remote).getOrCreate()
    builder = SparkSession.builder.appName(app_name)
    master = master or (None if submitted else "local[*]")
    if master:
        builder = builder.master(master)
    local = bool(master) and master.startswith("local")
    settings: dict[str, str] = {
        # Adaptive execution merges small shuffle partitions (and splits skewed ones), so
        # a stage's task count follows the data, not a fixed partition number.
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.coalescePartitions.enabled": "true",
        # ... also inside the plans of persisted tables, which the library's lazy plans
        # fill at their first action: Spark's default (false) runs each of their stages
        # with all spark.sql.shuffle.partitions tasks. Requested ids with a saved model
        # at 10^6 nodes and 40 partitions: 1,271 tasks -> 108, 43-49 s -> 27-32 s warm.
        "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        # One BLAS thread per Python worker: the solve stage already runs one task per core.
        "spark.executorEnv.OPENBLAS_NUM_THREADS": "1",
        "spark.executorEnv.OMP_NUM_THREADS": "1",
        "spark.executorEnv.MKL_NUM_THREADS": "1",
        # Checkpoints written to spark.checkpoint.dir (a cluster's, see checkpoint()) are
        # deleted once nothing refers to them; Spark's default keeps the files for good.
        "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
    }
    launched: dict[str, str] = {}
    if submitted:
        from pyspark import SparkConf, SparkContext

        SparkContext._ensure_initialized()  # connects to the submission's JVM, as the builder does next
        launched = dict(SparkConf().getAll())
    # On this machine the Python workers must import numpy/scipy and sepne_spark from the
    # interpreter running us, also when its virtualenv is not activated (PATH's python3 is
    # then another one): PySpark starts them with $PYSPARK_PYTHON. A value set before is
    # kept, and a cluster's executors are not told a path that exists only here.
    if runs_here(master, launched):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if local:
        # A local folder only serves a local master: a cluster's executors need one they
        # all reach (see checkpoint()), which the submission sets.
        # One folder per user: the first user to create a shared one would own it.
        settings[_CHECKPOINT_DIR] = os.path.join(tempfile.gettempdir(), f"sepne-checkpoints-{_user()}")
        settings["spark.pyspark.python"] = os.environ["PYSPARK_PYTHON"]
        settings["spark.pyspark.driver.python"] = sys.executable
        # Spark's 200 shuffle partitions are 200 tasks per stage: on one machine the
        # graphs are small and the fixed cost per task dominates. One partition per core
        # (at least 2); adaptive execution coalesces further.
        settings["spark.sql.shuffle.partitions"] = str(local_cores(master))
        settings["spark.driver.memory"] = os.environ.get("SEPNE_DRIVER_MEMORY", "4g")
        # Python workers without the archives PySpark has installed (sepne_spark.daemon):
        # under Python 3.10 and 3.11 they cost every task 0.15 to 0.2 s of CPU. The
        # workers import sepne_spark anyway (the library's stages are its functions).
        settings[daemon.SETTING] = daemon.MODULE
    jars = local_jars()
    if jars:
        settings["spark.jars"] = ",".join(jars)
    if submitted:
        # spark-submit's --conf and spark-defaults.conf (the launched JVM's system
        # properties) stand: a cluster's spark.checkpoint.dir or adaptive settings are
        # not replaced by this local-session default.
        settings = {key: value for key, value in settings.items() if key not in launched}
        replaced = replaced_submitted(conf or {}, launched)
        if replaced:  # values of credentials' keys are not logged
            from sepne_spark.settings import REDACTION_KEY, is_secret_key

            pattern = (conf or {}).get(REDACTION_KEY) or launched.get(REDACTION_KEY)
            replaced = {key: ("*********", "*********")
                        if is_secret_key(key, pattern, pair[0]) or is_secret_key(key, pattern, pair[1]) else pair
                        for key, pair in replaced.items()}
            log.warning("the session's Spark settings (in the jobs: the profile's spark: block and --spark) replace "
                        "%d submitted value(s) (spark-submit --conf or spark-defaults.conf): %s", len(replaced),
                        "; ".join(f"{key}={new} (submitted: {old})" for key, (old, new) in replaced.items()))
        late = {key: _text(value) for key, value in (conf or {}).items()
                if key in LAUNCH_ONLY and launched.get(key) != _text(value)}
        if late:
            log.warning("%s: the driver spark-submit started is already running, so this changes nothing; give it "
                        "to spark-submit (--driver-memory, --driver-cores, --driver-java-options or --conf)",
                        ", ".join(f"{key}={value}" for key, value in late.items()))
        conf = {key: value for key, value in (conf or {}).items() if key not in LAUNCH_ONLY}
    settings.update(conf or {})
    run_folder = None
    base = settings.get(_CHECKPOINT_DIR) or launched.get(_CHECKPOINT_DIR)
    if run_checkpoints and base:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        run_folder = f"{str(base).rstrip('/')}/{app_name}-{stamp}-{uuid.uuid4().hex[:8]}"
        settings[_CHECKPOINT_DIR] = run_folder
    # A Spark SQL setting is read at its first use, and PySpark 4.1 then hangs on a value
    # Spark cannot read (reporting the error reads the same setting again): check the
    # caller's and the submission's values in the JVM before the session exists.
    given = {key: _text(value) for key, value in {**launched, **(conf or {})}.items() if key.startswith("spark.sql.")}
    if given:
        from pyspark import SparkConf, SparkContext

        if not submitted:  # the JVM PySpark would start next, with the same settings
            options = SparkConf()
            options.set("spark.app.name", app_name)
            if master:
                options.set("spark.master", master)
            for key, value in settings.items():
                options.set(key, _text(value))
            SparkContext._ensure_initialized(conf=options)
        check_sql_settings(SparkContext._jvm, given)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if run_folder is not None:
        try:
            spark._sepne_run_checkpoints = run_folder  # type: ignore[attr-defined]
        except Exception:  # pragma: no cover - some session types forbid attributes
            pass
    return spark


def check_sql_settings(jvm: Any, settings: Mapping[str, str]) -> None:
    """Refuse a Spark SQL setting whose value this Spark cannot read, before a session holds it.

    Each value is parsed as Spark parses it, by a fresh ``SQLConf`` of the JVM ``jvm``
    (no session's settings change). A key this Spark does not define passes, as Spark
    lets it, with a warning when it is one typing slip from a key Spark defines.

    Raises
    ------
    SettingError
        Naming the key, the value and what Spark expects (``It should be a/an 'int'
        value``).
    """
    from sepne_spark.errors import SettingError

    internal = jvm.org.apache.spark.sql.internal
    probe = internal.SQLConf()
    for key, value in settings.items():
        try:
            probe.setConfString(key, value)
        except Exception as exc:  # noqa: BLE001 - Py4J's error, whose Java message names the fault
            java = getattr(exc, "java_exception", None)
            reason = java.getMessage() if java is not None else str(exc).splitlines()[0]
            raise SettingError(f"Spark setting {key}={value}: {reason}") from None
    try:
        registry = getattr(getattr(internal, "SQLConf$"), "MODULE$")
        getattr(getattr(internal, "StaticSQLConf$"), "MODULE$")  # registers the static settings' keys
        unknown = [key for key in settings if not registry.containsConfigKey(key)]
        defined = [entry.key() for entry in jvm.java.util.ArrayList(registry.getConfigEntries())] if unknown else []
    except Exception:  # noqa: BLE001 - a Spark without these internals: no suggestion
        log.debug("could not list the Spark SQL settings", exc_info=True)
        return
    import difflib

    for key in unknown:
        if key.startswith("spark.sql.catalog.") or any(key.startswith(name + ".") for name in defined):
            continue  # a catalog's or a plugin's options (spark.sql.catalog.spark_catalog.type): keys of their own
        close = difflib.get_close_matches(key, defined, n=1, cutoff=0.9)
        if close:
            log.warning("Spark setting %s is not one this Spark defines, so it changes nothing: did you mean %s?",
                        key, close[0])


#: The JVM classes the library's GraphFrames calls load: the Python API's entry point,
#: label propagation, and GraphFrames' own GraphX (the ``graphframes-graphx`` JAR).
GRAPHFRAMES_JVM_CLASSES = (
    GRAPHFRAMES_CLASS,
    "org.graphframes.lib.LabelPropagation",
    "org.apache.spark.graphframes.graphx.Pregel",
)


def _jvm_classes_present(spark: SparkSession) -> bool:
    """Whether a classic session's JVM finds :data:`GRAPHFRAMES_JVM_CLASSES` (no job runs).

    The classes are looked up as GraphFrames' Python API looks up its own, through the
    session's Py4J gateway: a name that is no class resolves to a package.
    """
    from py4j.java_gateway import JavaClass

    for name in GRAPHFRAMES_JVM_CLASSES:
        found = spark._jvm
        for part in name.split("."):
            found = getattr(found, part)
        if not isinstance(found, JavaClass):
            raise ImportError(f"JVM class {name} not found")
    return True


def graphframes_available(spark: SparkSession) -> bool:
    """Whether the GraphFrames JVM classes can be used from ``spark``.

    A classic session looks the classes up in its JVM (:data:`GRAPHFRAMES_JVM_CLASSES`)
    and builds a one-edge GraphFrame (GraphFrames built for another Scala version than
    the session's fails there), which runs no job. A Spark Connect session has no JVM on the client: it runs label
    propagation on a one-edge :class:`graphframes.GraphFrame`, which works only when the
    server has the GraphFrames Connect plugin. The answer is kept on the session.
    """
    cached = getattr(spark, "_sepne_graphframes", None)
    if cached is not None:
        return cached
    ok = False
    try:
        from graphframes import GraphFrame

        if getattr(spark, "_jvm", None) is not None:
            ok = _jvm_classes_present(spark)
            # Built for another Scala than the session's, the classes load but the
            # first call fails: build a one-edge GraphFrame (no Spark job runs).
            GraphFrame(spark.createDataFrame([(1,)], "id long"), spark.createDataFrame([(1, 1)], "src long, dst long"))
        else:
            v = spark.createDataFrame([(1,)], "id long")
            e = spark.createDataFrame([(1, 1)], "src long, dst long")
            # labelPropagation runs in the JVM (the plugin under Spark Connect, where some
            # GraphFrame methods are plain DataFrame code and would succeed without it).
            probe = GraphFrame(v, e).labelPropagation(maxIter=1)
            probe.collect()
            probe.unpersist()  # GraphFrames returns it persisted
            ok = True
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable"
        log.info("GraphFrames is not usable from this session (%s: %s); using the DataFrame "
                 "implementations of degrees and label propagation, which give the same results (to use it, "
                 "give spark-submit --packages io.graphframes:graphframes-spark4_2.13:0.11.0, or --jars with the "
                 "two JARs that make setup put in jars/: a session spark-submit started takes no JAR later)",
                 type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else "")
        ok = False
    try:
        spark._sepne_graphframes = ok  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - some session types forbid attributes
        pass
    return ok


def resolve_graphframes(spark: SparkSession, use_graphframes: bool | None, what: str) -> bool:
    """Whether a computation (``what``, for messages) runs through GraphFrames.

    Parameters
    ----------
    spark : SparkSession
        Session (classic or Spark Connect) the computation runs in.
    use_graphframes : bool or None
        ``None``: GraphFrames when :func:`graphframes_available`, else the DataFrame
        implementation. ``True``: GraphFrames, an error when it is not available.
        ``False``: the DataFrame implementation.
    what : str
        What is computed, e.g. ``"label propagation"``.

    Raises
    ------
    UserError
        ``use_graphframes=True`` on a session without GraphFrames.
    """
    if use_graphframes is None:
        return graphframes_available(spark)
    if use_graphframes and not graphframes_available(spark):
        raise UserError(
            f"{what} through GraphFrames was requested, but the GraphFrames JVM library is not on the "
            "session: add io.graphframes:graphframes-spark4_2.13 (--packages, or spark.jars with the "
            "graphframes and graphframes-graphx JARs; under Spark Connect the server also needs the "
            f"graphframes-connect plugin and spark.connect.extensions.relation.classes={GRAPHFRAMES_CONNECT_CLASS})"
        )
    return bool(use_graphframes)
