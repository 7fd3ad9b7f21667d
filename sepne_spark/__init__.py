"""sepne-spark: Separated Network Embedding (SepNE) on Apache Spark DataFrames.

The public API, importable from the package itself::

    from sepne_spark import SepNE, SepNEModel, load_graph, get_spark

``import sepne_spark`` is cheap: it imports neither PySpark nor NumPy and starts no
JVM. Each name below is imported from its module on first use.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it
_LAZY = {
    "SepNE": "sepne_spark.model",
    "SepNEModel": "sepne_spark.model",
    "load_graph": "sepne_spark.graph",
    "get_spark": "sepne_spark.session",
    "SepNEError": "sepne_spark.errors",
    "UserError": "sepne_spark.errors",
    "InputError": "sepne_spark.errors",
    "RequestedIdsError": "sepne_spark.errors",
    "SettingError": "sepne_spark.errors",
    "UnknownParamError": "sepne_spark.errors",
    "LabelsError": "sepne_spark.errors",
    "MissingExtraError": "sepne_spark.errors",
}
_SUBMODULES = ("errors", "settings")

__all__ = ["__version__", "set_verbosity", *_LAZY, *_SUBMODULES]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from sepne_spark import errors, settings
    from sepne_spark.errors import (InputError, LabelsError, MissingExtraError, RequestedIdsError, SepNEError,
                                    SettingError, UnknownParamError, UserError)
    from sepne_spark.graph import load_graph
    from sepne_spark.model import SepNE, SepNEModel
    from sepne_spark.session import get_spark


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        if _LAZY[name] != "sepne_spark.errors":
            from sepne_spark.errors import require_pyspark

            require_pyspark()
        value = getattr(import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


from sepne_spark.progress import ensure_default_handler as _ensure_default_handler  # noqa: E402
from sepne_spark.progress import set_verbosity  # noqa: E402

_ensure_default_handler()
