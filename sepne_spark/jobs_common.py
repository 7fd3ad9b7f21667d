"""Kept for imports written before the jobs moved: see :mod:`sepne_spark.jobs.common`."""
from sepne_spark.jobs.common import (  # noqa: F401
    JobArgumentParser,
    UserError,
    check_inputs_exist,
    run_job,
    setup_logging,
)

__all__ = ["JobArgumentParser", "UserError", "check_inputs_exist", "run_job", "setup_logging"]
