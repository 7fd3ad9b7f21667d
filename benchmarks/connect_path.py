"""The embed job through a Spark Connect server against the same job in a classic
session of the same PySpark, on one edge list: wall time, the job's stage times and
the largest difference between the two outputs' vectors.

Written for Spark Connect 3.5 (Databricks shared clusters on Runtime 14 to 16), whose
client has no checkpoints: the server gets a ``spark.checkpoint.dir`` of its own. Run it
with the interpreter of a PySpark 3.5 virtualenv (``make test-spark-version SPARK=3.5.5``
makes ``.venv-spark-3.5.5``, with the Connect client's packages) and the server's JAR,
``org.apache.spark:spark-connect_2.12`` (that script fetches it into ``~/.m2``)::

    .venv-spark-3.5.5/bin/python benchmarks/connect_path.py --input /tmp/g200k/edges \\
        --out /tmp/connect_path.json -- --one-task-nodes 0

Arguments after ``--`` go to both jobs (``jobs/embed.py``). The two runs are one after
the other, the server stopped before the classic run starts; both get ``--memory`` of
driver memory and two shuffle partitions, and listen on 127.0.0.1 only.

With ``--library`` the two runs are a notebook's instead of the job: the caller's own
code parses the edge list from ``spark.read.text`` (tab-separated ``src dst``), then
``SepNE.fromProfile("auto", edges, **PARAMS).fit(edges)``, ``transform`` and a Parquet
write, with ``--params`` a JSON object of Params (``'{"oneTaskNodes": 0}'`` for the
distributed path)::

    .venv-spark-3.5.5/bin/python benchmarks/connect_path.py --library --params '{"oneTaskNodes": 0}' \
        --input /tmp/g20k/edges --out /tmp/connect_library.json
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SERVER = r"""
import os, sys
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pyspark.sql import SparkSession
port, memory, checkpoints, jars = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
builder = (SparkSession.builder.master("local[2]")
           .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
           .config("spark.connect.grpc.binding.address", "127.0.0.1")
           .config("spark.connect.grpc.binding.port", port)
           .config("spark.driver.memory", memory).config("spark.sql.shuffle.partitions", "2")
           .config("spark.ui.enabled", "false").config("spark.checkpoint.dir", checkpoints))
if jars:
    builder = builder.config("spark.jars", ",".join(jars))
spark = builder.getOrCreate()
print("READY", flush=True)
sys.stdin.read()
spark.stop()
"""

LIBRARY = r"""
import json, sys, time
from pyspark.sql import functions as F
from sepne_spark import SepNE
from sepne_spark.session import get_spark
path, out, params, memory = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
spark = get_spark(conf={"spark.driver.memory": memory, "spark.sql.shuffle.partitions": "2"})
start = time.perf_counter()
parts = F.split("value", "\t")
edges = spark.read.text(path).select(parts[0].alias("src"), parts[1].alias("dst"))
model = SepNE.fromProfile("auto", edges, **params).fit(edges)
fitted = time.perf_counter()
model.transform(edges).select("id", "embedding").write.mode("overwrite").parquet(out)
done = time.perf_counter()
print(f"SepNE fit done in {fitted - start:.1f} s", file=sys.stderr)
print(f"SepNE transform_write done in {done - fitted:.1f} s", file=sys.stderr)
model.release()
"""

STAGE = re.compile(r"SepNE (\w+) done in ([0-9.]+) s")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(env: dict, args: list[str], log: Path) -> dict:
    """Run ``jobs/embed.py args`` (or ``-c LIBRARY args`` when the first is ``-c``) with
    ``env``; its wall time, exit status and stage times."""
    start = time.perf_counter()
    command = args if args[:1] == ["-c"] else [str(ROOT / "jobs" / "embed.py"), *args]
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.run([sys.executable, *command], env=env,
                              stdout=subprocess.DEVNULL, stderr=err, text=True)
    wall = time.perf_counter() - start
    text = log.read_text(encoding="utf-8")
    stages = {name: float(sec) for name, sec in STAGE.findall(text)}
    return {"rc": proc.returncode, "wall_s": round(wall, 1), "stages_s": stages, "log": str(log)}


def vectors(path: str) -> tuple[list, "object"]:
    import numpy as np
    import pandas as pd

    df = pd.read_parquet(path).sort_values("id")
    return list(df["id"]), np.stack(df["embedding"].to_numpy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, help="edge list for both jobs")
    parser.add_argument("--connect-jar", default=None,
                        help="the Spark Connect server JAR (default: spark-connect_2.12 of this PySpark in ~/.m2; "
                             "none on PySpark 4, which has it)")
    parser.add_argument("--memory", default="8g", help="driver memory of the server and of the classic job")
    parser.add_argument("--workdir", default=None, help="folder for the outputs and logs (default: a temporary one)")
    parser.add_argument("--out", default=None, help="JSON file for the results")
    parser.add_argument("--library", action="store_true",
                        help="run the library from the caller's own text parsing instead of the job")
    parser.add_argument("--params", default="{}", help="with --library: a JSON object of SepNE Params")
    parser.add_argument("job_args", nargs="*", help="after --: arguments for both jobs")
    ns = parser.parse_args()
    if ns.library and ns.job_args:
        parser.error("--library takes --params, not job arguments")
    if not isinstance(json.loads(ns.params), dict):
        parser.error("--params must be a JSON object")

    import pyspark

    jars = []
    if int(pyspark.__version__.split(".")[0]) < 4:
        jar = ns.connect_jar or os.path.expanduser(
            f"~/.m2/repository/org/apache/spark/spark-connect_2.12/{pyspark.__version__}/"
            f"spark-connect_2.12-{pyspark.__version__}.jar")
        if not os.path.isfile(jar):
            sys.exit(f"no Spark Connect server JAR at {jar}: give --connect-jar")
        jars = [jar]
    work = Path(ns.workdir or tempfile.mkdtemp(prefix="connect-path-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_REMOTE", None)
    common = ["--input", ns.input, "--overwrite", *ns.job_args]
    results: dict = {"pyspark": pyspark.__version__, "input": ns.input, "job_args": ns.job_args}
    if ns.library:
        results["library_params"] = json.loads(ns.params)

    def args(name: str, classic: bool = False) -> list[str]:
        if ns.library:
            return ["-c", LIBRARY, ns.input, str(work / name), ns.params, ns.memory]
        extra = ["--spark", f"spark.driver.memory={ns.memory}", "--spark", "spark.sql.shuffle.partitions=2"]
        return ["--output", str(work / name), *common, *(extra if classic else [])]

    port, checkpoints = free_port(), tempfile.mkdtemp(prefix="connect-path-checkpoints-")
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), ns.memory, checkpoints, *jars], env=env,
                              text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        if server.stdout.readline().strip() != "READY":
            sys.exit("the Spark Connect server did not start")
        results["connect"] = run_job(dict(env, SPARK_REMOTE=f"sc://127.0.0.1:{port}"), args("connect"),
                                     work / "connect.log")
    finally:
        server.stdin.close()
        server.wait(timeout=300)
        shutil.rmtree(checkpoints, ignore_errors=True)
    results["classic"] = run_job(env, args("classic", classic=True), work / "classic.log")
    if results["connect"]["rc"] == 0 and results["classic"]["rc"] == 0:
        import numpy as np

        ids_a, a = vectors(str(work / "connect"))
        ids_b, b = vectors(str(work / "classic"))
        results["same_ids"] = ids_a == ids_b
        results["max_abs_difference"] = float(np.abs(a - b).max()) if ids_a == ids_b else None
        results["time_ratio"] = round(results["connect"]["wall_s"] / results["classic"]["wall_s"], 2)
    print(json.dumps(results, indent=1))
    if ns.out:
        Path(ns.out).write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
