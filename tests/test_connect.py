"""The main path (RP, IO and LP sets) under Spark Connect gives the classic session's result."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sepne_spark.model import SepNE
from tests.helpers import random_graph

pytest.importorskip("grpc", reason="Spark Connect client needs pyspark[connect]")


def test_rp_io_and_lp_under_spark_connect(spark):
    g = random_graph(n=50, m=180, seed=4)
    here = Path(__file__).parent / "connect"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    with socket.socket() as s:  # a free port for the server
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(here / "server.py"), str(port)], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert server.stdout.readline().strip() == "READY", "the Spark Connect server did not start"
        proc = subprocess.run(
            [sys.executable, str(here / "run_connect.py"), f"sc://localhost:{port}", json.dumps(g.rows)],
            capture_output=True, text=True, timeout=900, env=env,
        )
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    remote = json.loads(lines[0][len("RESULT "):])

    edges = spark.createDataFrame(g.rows, "src string, dst string, weight double")
    for partition in ("RP", "IO", "LP"):
        model = SepNE(dim=4, landmarks=8, metric="A+A2", setSize=20, iters=5, partition=partition).fit(edges)
        if partition == "IO":
            out = model.transform(spark.createDataFrame([(r[0],) for r in g.rows[:15]], "id string"))
        else:
            out = model.transform(edges)
        local = {r["id"]: (np.asarray(r["embedding"]), r["set_id"]) for r in out.collect()}
        got = remote[partition]
        assert got["landmarks"] == model.landmark_ids
        assert sorted(got["rows"]) == sorted(local)
        for node, (vec, set_id) in local.items():
            assert got["rows"][node][1] == set_id
            np.testing.assert_allclose(got["rows"][node][0], vec, rtol=1e-9, atol=1e-12)
