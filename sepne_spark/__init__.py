"""sepne-spark: Separated Network Embedding (SepNE) on Apache Spark DataFrames."""

__version__ = "0.1.0"

__all__ = ["__version__"]
