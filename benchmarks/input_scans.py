"""How often a saved model's ``transform`` of a whole graph reads a text edge list.

A generated graph is written as TSV; a model is fitted on it, saved and loaded, and the
loaded model's ``transform`` of the same file, read again (a graph no fit of this session
holds), is counted: the input records its jobs read (from the event log) and its wall
time. Each read of a text input parses and checks every line again::

    .venv/bin/python benchmarks/input_scans.py --nodes 20000 --avg-degree 10 --workdir /tmp/sepne-scans
"""
from __future__ import annotations

import argparse
import glob
import io
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sepne_spark.generators import sbm_graph, write_edges  # noqa: E402
from sepne_spark.model import SepNE, SepNEModel  # noqa: E402
from sepne_spark.reading import read_edges  # noqa: E402
from sepne_spark.session import get_spark  # noqa: E402

GROUP = "sepne-input-scans"


def _events(folder: str):
    """The events of the one application logged under ``folder``."""
    path = glob.glob(f"{folder}/**/events*", recursive=True)[0]
    if path.endswith(".zstd"):
        text = subprocess.run(["zstd", "-dc", path], capture_output=True, text=True, check=True).stdout
    else:
        text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in io.StringIO(text)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=20_000)
    ap.add_argument("--avg-degree", type=float, default=10.0)
    ap.add_argument("--landmarks", type=int, default=100)
    ap.add_argument("--one-task-nodes", type=int, default=0, help="0: the distributed path (default)")
    ap.add_argument("--workdir", default="/tmp/sepne-scans")
    ns = ap.parse_args(argv)
    work = Path(ns.workdir)
    events = work / "events"
    events.mkdir(parents=True, exist_ok=True)
    spark = get_spark("sepne-input-scans", conf={"spark.eventLog.enabled": "true",
                                                 "spark.eventLog.dir": str(events)})
    edges_path = str(work / "edges")
    edges, _ = sbm_graph(spark, ns.nodes, 20, ns.avg_degree, 0.3, seed=1)
    write_edges(edges, edges_path, overwrite=True)
    graph, _ = read_edges(spark, edges_path)
    model = SepNE(landmarks=ns.landmarks, dim=min(32, ns.landmarks), iters=3, oneTaskNodes=ns.one_task_nodes)
    fitted = model.fit(graph)
    fitted.save(str(work / "model"), overwrite=True)
    fitted.release()
    loaded = SepNEModel.load(str(work / "model"))
    other, _ = read_edges(spark, edges_path)
    lines = sum(1 for f in Path(edges_path).glob("part-*") for _ in open(f, encoding="utf-8"))
    spark.sparkContext.setJobGroup(GROUP, "a loaded model's transform")
    started = time.time()
    rows = loaded.transform(other).count()
    seconds = time.time() - started
    loaded.release()
    app = spark.sparkContext.applicationId
    spark.stop()
    in_group, read = set(), 0
    stage_job: dict[int, int] = {}
    for e in _events(str(events)):
        if e.get("Event") == "SparkListenerJobStart" and (e.get("Properties") or {}).get("spark.jobGroup.id") == GROUP:
            in_group.add(e["Job ID"])
            stage_job.update({s: e["Job ID"] for s in e["Stage IDs"]})
        elif e.get("Event") == "SparkListenerTaskEnd" and stage_job.get(e["Stage ID"]) in in_group:
            read += ((e.get("Task Metrics") or {}).get("Input Metrics") or {}).get("Records Read", 0)
    print(f"{app}: {rows:,} rows embedded in {seconds:.1f} s; the transform's jobs read {read:,} input records "
          f"of {lines:,} lines ({read / lines:.2f} reads of the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
