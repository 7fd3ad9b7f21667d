"""The exceptions sepne-spark raises on purpose.

Every one derives from :class:`SepNEError`. :class:`UserError` and its subclasses are
problems with the user's input or settings: the jobs report them in one line and exit
with status 2. Those that a library caller passes a bad value for are also
``ValueError`` s, as Python code expects.

* :class:`UserError`: a bad profile, flag, path or argument.
* :class:`SettingError`: a setting's value breaks its rule (a Param of
  :class:`~sepne_spark.model.SepNE`, a profile key, a flag).
* :class:`InputError`: an edge list that is missing, unreadable or malformed; the
  message names the file and line (or row and column).
* :class:`DuplicateIdsError`: an input holds vectors of one node id more than once.
* :class:`RequestedIdsError`: none of the node ids asked for is a node of the graph.
* :class:`LabelsError`: a label file that cannot be the labels of the embedded graph.
* :class:`MissingExtraError`: a task needs an optional package that is not installed.
* :class:`OutputExistsError`: an output that exists (or an earlier run's that was set
  aside) and was not to be replaced.
* :class:`ConcurrentWriteError`: another run wrote the same output at the same time.

:class:`JobStopped` is no error: a job's command stopped by a signal (SIGTERM from a
scheduler) raises it to unwind, as ``KeyboardInterrupt`` does for Ctrl-C.
"""
from __future__ import annotations

from typing import Any, Sequence

__all__ = ["SepNEError", "UserError", "SettingError", "UnknownParamError", "InputError", "DuplicateIdsError", "RequestedIdsError", "LabelsError",
           "MissingExtraError", "OutputExistsError", "ConcurrentWriteError", "JobStopped", "check_choice"]


class SepNEError(Exception):
    """Base class of the errors sepne-spark raises on purpose."""


class UserError(SepNEError):
    """A problem with the user's input or configuration: reported in one line, exit 2."""


class SettingError(UserError, ValueError):
    """A setting's value breaks its rule (a Param, a keyword argument, a flag value)."""


class UnknownParamError(SettingError, TypeError):
    """A keyword argument that is no Param of the estimator (a ``TypeError``, as Python
    raises for an unexpected keyword); the message names the Param meant, if one is close."""


class InputError(UserError, ValueError):
    """The input edge list is missing, unreadable or malformed.

    The message names the file and the line (text) or the row and column (Parquet) of
    the first problem found.
    """


class DuplicateIdsError(InputError):
    """Vectors given more than once for one node id, where each node has one row (the
    embeddings of several runs read together, e.g. a dated output's root)."""


class RequestedIdsError(UserError, ValueError):
    """None of the ids asked for is a node of the graph (or no id was asked for)."""


class LabelsError(UserError, ValueError):
    """A label file that cannot be what it claims (an edge list, labels of another graph)."""


class MissingExtraError(UserError, ImportError):
    """A task needs an optional dependency (an extra of the package) that is not installed."""


class OutputExistsError(UserError, FileExistsError):
    """An output path that holds data (or an earlier run's output set aside there) and
    was not to be replaced: pass ``overwrite=True`` (``--overwrite``)."""


class ConcurrentWriteError(UserError, RuntimeError):
    """Another run started writing the same output path while this one wrote it, and
    removed this run's temporary output as an unfinished run's leftover: this run
    replaced nothing (the other run's output stands, whole)."""


class JobStopped(BaseException):
    """A job's command received a stop signal (SIGTERM: a scheduler's kill, a timeout).

    Raised in the main thread by the jobs' handler so that every write in progress
    unwinds (its temporary path removed, an existing output left whole); like
    ``KeyboardInterrupt`` it is no ``Exception``, so no ``except Exception`` stops it.
    """

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(self.name)


#: The oldest PySpark the library runs on (setup.py's ``PYSPARK_MINIMUM``).
PYSPARK_MINIMUM = (3, 5)


def require_pyspark() -> None:
    """Raise :class:`MissingExtraError` when PySpark is not installed, or older than
    :data:`PYSPARK_MINIMUM`; imports nothing. A PySpark without package metadata (a
    Spark distribution's ``python/`` folder on the path) is taken as it is."""
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        raise MissingExtraError(
            "sepne-spark runs on PySpark, which is not installed here: run it where your Spark is "
            "(spark-submit, a notebook of the cluster), or install it: pip install 'sepne-spark[spark]'"
        )
    try:
        version = importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return
    numbers = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
    if numbers < PYSPARK_MINIMUM:
        raise MissingExtraError(f"sepne-spark needs PySpark {'.'.join(map(str, PYSPARK_MINIMUM))} or later; "
                                f"this is PySpark {version}")


def check_choice(name: str, value: Any, allowed: Sequence[str]) -> None:
    """Raise :class:`SettingError` (a ``ValueError``) naming the allowed values when
    ``value`` is not one of them."""
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise SettingError(f"{name} must be one of {choices}; got {value!r}")
