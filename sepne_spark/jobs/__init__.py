"""The command-line jobs: ``sepne-embed``, ``sepne-evaluate`` and ``sepne-generate``.

Each module has ``main(spark, args) -> int`` for notebooks and tests, and ``cli()``, the
console entry point, which checks the arguments before it starts Spark. The files in the
checkout's ``jobs/`` folder call ``cli()`` for ``spark-submit``.
"""

from sepne_spark.errors import require_pyspark as _require_pyspark

_require_pyspark()  # before a job module imports PySpark: one clear line when it is missing
