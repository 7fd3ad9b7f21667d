"""Deprecated: the settings moved to :mod:`sepne_spark.settings`.

``from sepne_spark import config`` keeps working (every name of
:mod:`sepne_spark.settings` is re-exported here); new code imports
:mod:`sepne_spark.settings`.
"""
from __future__ import annotations

from sepne_spark.settings import *  # noqa: F401,F403
from sepne_spark.settings import (  # noqa: F401 - names used by older callers and tests
    _BY_NAME,
    _Invalid,
    _ProfileLoader,
    _check_combination,
    _check_mapping,
    _coerce,
    conf_dirs,
    find_profile,
    model_params,
)
from sepne_spark.settings import __all__  # noqa: F401
