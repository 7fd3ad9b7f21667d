"""A saved model embedding a small graph given as a plain edge DataFrame, through the API.

Times ``SepNEModel.embed(None, edges).count()`` with ``oneTaskNodes=0`` (the distributed
stages, the path such a call took before the library counted small inputs itself) and
with the model's own ``oneTaskNodes`` (counted, one task), twice each, alternating.

    python jobs/embed.py --input ../shared/datasets/cora/edges.tsv --output /tmp/cora-fit \\
        --overwrite --save-model /tmp/cora-model
    python benchmarks/loaded_small.py --model /tmp/cora-model --edges ../shared/datasets/cora/edges.tsv
"""
from __future__ import annotations

import argparse
import time

from sepne_spark import SepNEModel, get_spark


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="a model saved by the embed job (--save-model)")
    ap.add_argument("--edges", required=True, help="tab-separated edge list src<TAB>dst")
    ns = ap.parse_args()
    spark = get_spark()
    edges = spark.read.option("sep", "\t").csv(ns.edges, schema="src string, dst string")
    model = SepNEModel.load(ns.model)
    default = model.getOneTaskNodes()
    for label, limit in (("distributed (oneTaskNodes=0)", 0), ("counted, one task", default)) * 2:
        model.setOneTaskNodes(limit)
        t = time.perf_counter()
        n = model.embed(None, edges).count()
        print(f"{label}: {n} rows in {time.perf_counter() - t:.1f} s; one_task={model.plan.get('one_task', False)}",
              flush=True)


if __name__ == "__main__":
    main()
