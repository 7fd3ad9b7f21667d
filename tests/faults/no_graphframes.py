"""A session without the GraphFrames JARs: ``python no_graphframes.py JSON``.

Run by tests/test_graphframes.py in its own process, with ``SEPNE_SPARK_JARS`` pointing
at an empty folder, so that the local session it builds has no GraphFrames classes (as
on a cluster where nobody passed ``--packages``). JSON is ``{"rows": [[src, dst], ...],
"ids": [...], "max_iter": N}`` with string ids. Prints ``RESULT`` and a JSON object:
whether GraphFrames was found, the errors raised when GraphFrames is demanded, and the
degrees and label-propagation labels computed by the DataFrame implementations.
"""
import json
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from sepne_spark.baselines import random_walk_embeddings  # noqa: E402
from sepne_spark.errors import UserError  # noqa: E402
from sepne_spark.landmarks import degrees  # noqa: E402
from sepne_spark.partition import label_propagation  # noqa: E402
from sepne_spark.session import get_spark, graphframes_available, local_jars  # noqa: E402
from tests.spark_conf import SUBPROCESS_CONF  # noqa: E402

spec = json.loads(sys.argv[1])
assert not local_jars(), local_jars()
spark = get_spark("sepne-no-graphframes", master="local[2]", conf=SUBPROCESS_CONF)
vertices = spark.createDataFrame([(i,) for i in spec["ids"]], "id string")
edges = spark.createDataFrame([tuple(r) for r in spec["rows"]], "src string, dst string")


def error_of(call) -> str | None:
    try:
        call()
    except UserError as exc:
        return str(exc)
    return None


result = {
    "available": graphframes_available(spark),
    "errors": {
        "degrees": error_of(lambda: degrees(spark, vertices, edges, use_graphframes=True).collect()),
        "label_propagation": error_of(
            lambda: label_propagation(spark, vertices, edges, 2, use_graphframes=True).collect()
        ),
        "random_walk_embeddings": error_of(lambda: random_walk_embeddings(spark, edges, dim=4).collect()),
    },
    "degrees": {r["id"]: r["degree"] for r in degrees(spark, vertices, edges).collect()},
    "labels": {r["id"]: r["label"] for r in label_propagation(spark, vertices, edges, spec["max_iter"]).collect()},
}
print("RESULT " + json.dumps(result))
spark.stop()
