"""``spark-submit`` entry of the embed job: see :mod:`sepne_spark.jobs.embed`.

    spark-submit --py-files sepne_spark-0.1.0-py3-none-any.whl jobs/embed.py --input edges.tsv ...

Installed, the same job is the ``sepne-embed`` command.
"""
import os
import sys

_checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isdir(os.path.join(_checkout, "sepne_spark")):  # run from a source checkout
    sys.path.insert(0, _checkout)

from sepne_spark.jobs.embed import build_parser, cli, main, session_conf  # noqa: E402,F401

__all__ = ["build_parser", "cli", "main", "session_conf"]

if __name__ == "__main__":
    raise SystemExit(cli())
