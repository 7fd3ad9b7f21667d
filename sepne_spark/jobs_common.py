"""What every job entry point shares: logging, session start-up and exit codes.

A job module defines ``main(spark, args) -> int`` and ends with::

    if __name__ == "__main__":
        raise SystemExit(run_job(main, "sepne-<name>"))

so that ``spark-submit jobs/<name>.py ...`` runs it in the cluster's session, while
notebooks and tests call ``main(spark, [...])`` directly.
"""
from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from sepne_spark.errors import UserError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["UserError", "run_job", "setup_logging"]  # UserError lives in sepne_spark.errors

log = logging.getLogger("sepne_spark")


def setup_logging(level: int = logging.INFO) -> None:
    """Log ``sepne_spark`` messages to stderr with timestamps (idempotent)."""
    root = logging.getLogger("sepne_spark")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(level)


def run_job(
    main: Callable[[SparkSession, Sequence[str] | None], int],
    app_name: str,
    argv: Sequence[str] | None = None,
    session_conf: Callable[[Sequence[str]], dict] | None = None,
) -> int:
    """Run ``main`` in the active (or a new local) session; map failures to exit codes.

    ``session_conf(argv)`` may give Spark settings (a profile's ``spark:`` block) for
    the session built when none is active; an active session is used as it is.

    Returns 0 on success, 2 for a :class:`UserError` or bad arguments (one line on
    stderr naming what is wrong) and 1 for any other failure.
    """
    from sepne_spark.session import get_spark

    setup_logging()
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        return main(None, argv)  # argparse prints help and exits before Spark starts
    start = time.time()
    try:
        conf = session_conf(argv) if session_conf else None
        spark = get_spark(app_name, conf=conf)
        log.info("%s: sepne-spark %s from %s, Spark %s", app_name, _version(), _package_location(), spark.version)
        rc = main(spark, argv)
    except UserError as exc:
        print(f"{app_name}: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # argparse errors
        return int(exc.code or 0)
    except Exception as exc:  # noqa: BLE001 - one line for the scheduler, trace in the log
        log.exception("job failed")
        print(f"{app_name}: failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", file=sys.stderr)
        return 1
    log.info("%s finished in %.1f s", app_name, time.time() - start)
    return rc or 0


def _version() -> str:
    from sepne_spark import __version__

    return __version__


def _package_location() -> str:
    """Where ``sepne_spark`` was imported from (a checkout, site-packages or a wheel)."""
    import sepne_spark

    return str(Path(sepne_spark.__file__).parent)
