"""Packaging for sepne-spark."""
import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent

GRAPHFRAMES_VERSION = "0.11.0"
#: The PySpark the tests and benchmarks run (the `test` extra pins it).
PYSPARK_VERSION = "4.1.4"
#: The oldest Spark the library runs on (README, "Spark versions"; sepne_spark.errors.PYSPARK_MINIMUM).
PYSPARK_MINIMUM = "3.5"


class BuildWithProfiles(build_py):
    """Ship the YAML profiles of ``conf/`` inside the package as ``sepne_spark/profiles``,
    so that ``--profile document`` works from a wheel (also one on ``--py-files``)."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "sepne_spark" / "profiles"
        target.mkdir(parents=True, exist_ok=True)
        for profile in sorted((HERE / "conf").glob("*.yaml")):
            shutil.copyfile(profile, target / profile.name)

setup(
    name="sepne-spark",
    version="0.1.0",
    description="Separated Network Embedding (SepNE) on Apache Spark DataFrames",
    long_description=Path(__file__).with_name("README.md").read_text(encoding="utf-8")
    if Path(__file__).with_name("README.md").exists()
    else "",
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["sepne_spark", "sepne_spark.*"]),
    cmdclass={"build_py": BuildWithProfiles},
    entry_points={
        "console_scripts": [
            "sepne-embed = sepne_spark.jobs.embed:cli",
            "sepne-evaluate = sepne_spark.jobs.evaluate:cli",
            "sepne-generate = sepne_spark.jobs.generate:cli",
        ],
    },
    # PySpark is not required: clusters (YARN, Databricks, Spark Connect) bring their
    # own, and a pip-installed one would shadow it. `pip install "sepne-spark[spark]"`
    # adds it on a machine without Spark.
    install_requires=[
        "numpy>=1.26",
        "scipy>=1.11",
        "pandas>=1.5",
        "pyarrow>=15",
        f"graphframes-py=={GRAPHFRAMES_VERSION}",
        "pyyaml>=6",
        "typing_extensions>=4.0",
    ],
    extras_require={
        "test": ["pytest>=8", "pytest-xdist>=3.6", "chispa>=0.10", f"pyspark[connect]=={PYSPARK_VERSION}", "setuptools>=70.1", "wheel",
                 "scikit-learn>=1.4"],
        "eval": ["scikit-learn>=1.4"],
        "spark": [f"pyspark[sql]>={PYSPARK_MINIMUM}"],
        "connect": [f"pyspark[connect]>={PYSPARK_MINIMUM}"],
        "plots": ["matplotlib>=3.8"],
        # peers of the benchmarks only (benchmarks/quality/peers.py's DeepWalk)
        "bench": ["gensim>=4.4", "scikit-learn>=1.4"],
    },
)
