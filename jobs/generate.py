"""``spark-submit`` entry of the generate job: see :mod:`sepne_spark.jobs.generate`.

    spark-submit --py-files sepne_spark-0.1.0-py3-none-any.whl jobs/generate.py --model sbm --output /tmp/sbm

Installed, the same job is the ``sepne-generate`` command.
"""
import os
import sys

_checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isdir(os.path.join(_checkout, "sepne_spark")):  # run from a source checkout
    sys.path.insert(0, _checkout)

from sepne_spark.jobs.generate import cli, main, parse_args, session_conf  # noqa: E402,F401

__all__ = ["cli", "main", "parse_args", "session_conf"]

if __name__ == "__main__":
    raise SystemExit(cli())
