"""``spark-submit`` entry of the evaluate job: see :mod:`sepne_spark.jobs.evaluate`.

    spark-submit --py-files sepne_spark-0.1.0-py3-none-any.whl jobs/evaluate.py classify --embeddings out/emb --labels labels.tsv

Installed, the same job is the ``sepne-evaluate`` command.
"""
import os
import sys

_checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isdir(os.path.join(_checkout, "sepne_spark")):  # run from a source checkout
    sys.path.insert(0, _checkout)

from sepne_spark.jobs.evaluate import build_parser, cli, main, session_conf  # noqa: E402,F401

__all__ = ["build_parser", "cli", "main", "session_conf"]

if __name__ == "__main__":
    raise SystemExit(cli())
