"""sepne-spark: Separated Network Embedding (SepNE) on Apache Spark DataFrames."""

__version__ = "0.1.0"

from sepne_spark.progress import ensure_default_handler as _ensure_default_handler  # noqa: E402
from sepne_spark.progress import set_verbosity  # noqa: E402

_ensure_default_handler()

__all__ = ["__version__", "set_verbosity"]
