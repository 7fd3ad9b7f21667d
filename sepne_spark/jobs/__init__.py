"""The command-line jobs: ``sepne-embed``, ``sepne-evaluate`` and ``sepne-generate``.

Each module has ``main(spark, args) -> int`` for notebooks and tests, and ``cli()``, the
console entry point, which checks the arguments before it starts Spark. The files in the
checkout's ``jobs/`` folder call ``cli()`` for ``spark-submit``.
"""
