"""Time to save and load a SepNE model with k landmarks (d = 128, seeded random arrays).

The summaries S_A and S_B are k x k, so a model with k = 2,000 holds 8.5 million values::

    .venv/bin/python benchmarks/model_save.py --landmarks 2000 --path /tmp/sepne-model-bench
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql.types import LongType  # noqa: E402

from sepne_spark.model import SepNE, SepNEModel  # noqa: E402
from sepne_spark.session import get_spark  # noqa: E402
from sepne_spark.solver import LandmarkFactors  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--landmarks", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--path", default="/tmp/sepne-model-bench")
    ns = ap.parse_args(argv)
    get_spark()
    k, d = ns.landmarks, ns.dim
    rng = np.random.default_rng(0)
    Phi, Psi = rng.normal(size=(d, k)), rng.normal(size=(d, k))
    factors = LandmarkFactors(Phi=Phi, Psi=Psi, P=Phi.T @ Psi, singular_values=np.ones(d))
    model = SepNEModel(list(range(k)), factors, rng.normal(size=(k, k)), rng.normal(size=(k, k)), LongType())
    SepNE(landmarks=k, dim=d)._copyValues(model)
    model._hold_fitted_values()
    t = time.time()
    model.save(ns.path, overwrite=True)
    saved = time.time() - t
    t = time.time()
    loaded = SepNEModel.load(ns.path)
    read = time.time() - t
    same = np.array_equal(loaded.S_A, model.S_A) and np.array_equal(loaded.factors.Phi, model.factors.Phi)
    print(f"k {k}, d {d}: saved in {saved:.1f} s, loaded in {read:.1f} s, arrays equal: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
