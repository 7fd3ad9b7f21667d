"""PySpark's Python daemon, started without the copies of Spark's archives that PySpark
already has installed and with the library's modules imported: the
``spark.python.daemon.module`` of local sessions.

Spark starts its Python workers with ``pyspark.zip``, the Py4J zip and the
``spark-core`` JAR first on their path, and a worker calls
``importlib.invalidate_caches()`` before every task. Under Python 3.10 and 3.11 that
makes every zip importer re-read its archive's directory (Python 3.12 does it lazily:
python/cpython#103200): 16 importers over 6,700 entries once a worker has run a task,
0.15 to 0.2 s of CPU per task, which on small graphs is much of a stage's time. When
PySpark is installed as a package (pip), those archives lie inside it and hold nothing
that the package does not: this module drops them from the path, before anything
imports PySpark, imports the modules the library's stages use (:data:`PRELOAD`: NumPy,
pandas, PyArrow, SciPy's sparse matrices and the library's solver; about 0.9 s of CPU
in each new worker otherwise, since the daemon forks its workers), and runs
``pyspark.daemon`` as Spark would. Archives elsewhere (a Spark distribution's
``python/lib``, the files of ``--py-files``) stay where they are.

:func:`sepne_spark.session.get_spark` names this module for the sessions it builds with
a local master, whose workers run the driver's interpreter and import ``sepne_spark``
anyway (the library's stages are its functions); a setting given by the caller stands.
"""
from __future__ import annotations

import os
import sys

#: The setting that names this module, and its value.
SETTING = "spark.python.daemon.module"
MODULE = "sepne_spark.daemon"


def installed_pyspark(path: list[str]) -> str | None:
    """The real path of the ``pyspark`` package found in a folder (not an archive) of
    ``path``, or None."""
    for entry in path:
        folder = os.path.join(entry or os.curdir, "pyspark")
        if os.path.isdir(entry or os.curdir) and os.path.isfile(os.path.join(folder, "__init__.py")):
            return os.path.realpath(folder)
    return None


def without_bundled_archives(path: list[str]) -> list[str]:
    """``path`` without the archives (files, not folders) that lie inside the installed
    ``pyspark`` package; unchanged when PySpark is not installed as a package."""
    package = installed_pyspark(path)
    if package is None:
        return list(path)
    inside = package + os.sep
    return [p for p in path if not (os.path.isfile(p) and os.path.realpath(p).startswith(inside))]


#: Modules the workers of the library's stages import: imported once in the daemon, so
#: that the workers it forks start with them.
PRELOAD = ("numpy", "pandas", "pyarrow", "scipy.sparse", "scipy.sparse.csgraph", "sepne_spark.set_stage",
           "sepne_spark.blocks", "sepne_spark.solver")


def preload() -> None:
    """Import :data:`PRELOAD` (a module that is not installed is left out)."""
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def main() -> None:
    """Trim ``sys.path`` and run PySpark's daemon (its worker module from ``sys.argv``)."""
    kept = without_bundled_archives(sys.path)
    for dropped in set(sys.path) - set(kept):  # the importers made while finding this module
        sys.path_importer_cache.pop(dropped, None)
    sys.path[:] = kept
    preload()
    from pyspark import daemon as pyspark_daemon  # reads its worker module from sys.argv[1], as under -m

    pyspark_daemon.manager()


if __name__ == "__main__":
    main()
