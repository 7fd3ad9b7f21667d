"""Per-set solve throughput against the machine's NumPy GEMM rate, measured together.

    python benchmarks/solver_bench.py --k 1000 --d 128 --set-size 2000 --iters 5

Prints the achieved GFLOP/s of :func:`sepne_spark.solver.solve_set` (flop count from
:func:`sepne_spark.solver.solve_flops`) and the GEMM rate of a float64 matrix product
measured in the same run, and the ratio between the two. As in the Spark stage, the
set-independent part (:func:`sepne_spark.solver.set_constants`) is computed once and
timed separately (``constants_seconds``); the rate is that of the per-set solve.
Set ``OPENBLAS_NUM_THREADS=1`` to measure what one Spark task gets.
``--landmark-blocks both`` also times the solve with M_i0 and M_0i as SciPy sparse
matrices (as the set stage gives them), in the same run; the GFLOP/s figures count
dense work.

``--processes N`` runs N such solvers at once (forked after the inputs are built, so
set the BLAS thread count to 1 in the environment), as N Spark task slots on one
machine: all N time their solves together, then all N time the GEMM together, and the
aggregate rates (sums over processes) are compared::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/solver_bench.py --processes 16
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time

import numpy as np
import scipy.sparse as sp

from sepne_spark.solver import landmark_factors, set_constants, solve_flops, solve_set


def gemm_rate(n: int = 2000, dtype=np.float64, reps: int = 3) -> float:
    a = np.random.default_rng(0).random((n, n)).astype(dtype)
    b = a.T.copy()
    a @ b
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


def _time_solves(args: tuple, dtype: str, constants, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        solve_set(*args, dtype=dtype, constants=constants)
        best = min(best, time.perf_counter() - t)
    return best


_SHARED: dict = {}


def _worker(i: int) -> tuple[float, float]:
    """One of N concurrent solvers: time the solves, wait for all, then time the GEMM."""
    sh = _SHARED
    solve_set(*sh["args"], dtype=sh["dtype"], constants=sh["constants"])  # warm-up
    sh["barrier"].wait()
    best = _time_solves(sh["args"], sh["dtype"], sh["constants"], sh["reps"])
    sh["barrier"].wait()
    return best, gemm_rate(dtype=np.float64)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=1000)
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--set-size", type=int, default=2000)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--avg-degree", type=float, default=10.0)
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--processes", type=int, default=1,
                   help="concurrent single-process solvers, as Spark task slots (default: %(default)s)")
    p.add_argument("--landmark-blocks", choices=["dense", "sparse", "both"], default="dense",
                   help="give M_i0 and M_0i to the solve as dense arrays or as SciPy sparse, as the set "
                   "stage does; both: time the two in the same run (one process; default: %(default)s)")
    p.add_argument("--json", default=None)
    a = p.parse_args()
    if a.landmark_blocks == "both" and a.processes != 1:
        p.error("--landmark-blocks both times one process")
    rng = np.random.default_rng(1)
    k, d, n = a.k, a.d, a.set_size
    M00 = np.eye(k) + sp.random(k, k, density=a.avg_degree / k, random_state=1).toarray()
    f = landmark_factors(M00, d)
    nnz = int(a.avg_degree * n)
    M_ii = sp.random(n, n, density=nnz / n / n, random_state=2, format="csr")
    M_ii = M_ii + sp.eye(n, format="csr")
    M_i0 = sp.random(n, k, density=a.avg_degree / k, random_state=3).toarray()
    M_0i = sp.random(k, n, density=a.avg_degree / k, random_state=4).toarray()
    R = rng.random((k, n)) * 1e-3
    base = sp.random(50 * n, k, density=a.avg_degree / k, random_state=5)
    S = (base.T @ base).toarray()
    t = time.perf_counter()
    constants = set_constants(f, S, S, 1.0, 1.0)
    constants_s = time.perf_counter() - t
    if a.landmark_blocks == "sparse":
        M_i0, M_0i = sp.csr_matrix(M_i0), sp.csr_matrix(M_0i)
    args = (f, None, None, M_ii, M_i0, M_0i, R, R, 1.0, 1.0, a.iters)
    flops = solve_flops(k, d, n, M_ii.nnz, a.iters)
    res = {
        "k": k, "d": d, "set_size": n, "iters": a.iters, "dtype": a.dtype, "processes": a.processes,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "cpus": os.cpu_count(),
        "constants_seconds": constants_s, "landmark_blocks": a.landmark_blocks,
    }
    if a.processes == 1:
        solve_set(*args, dtype=a.dtype, constants=constants)
        best = _time_solves(args, a.dtype, constants, a.reps)
        g = gemm_rate(dtype=np.float64)
        res.update({"solve_seconds": best, "solve_gflops": flops / best / 1e9, "gemm_gflops": g,
                    "fraction_of_gemm": flops / best / 1e9 / g})
        if a.landmark_blocks == "both":  # the same inputs, M_i0 and M_0i as SciPy sparse
            sparse_args = args[:4] + (sp.csr_matrix(M_i0), sp.csr_matrix(M_0i)) + args[6:]
            solve_set(*sparse_args, dtype=a.dtype, constants=constants)
            sparse_best = _time_solves(sparse_args, a.dtype, constants, a.reps)
            res.update({"landmark_blocks": "dense", "sparse_solve_seconds": sparse_best,
                        "dense_over_sparse": best / sparse_best})
    else:
        ctx = mp.get_context("fork")
        _SHARED.update(args=args, dtype=a.dtype, constants=constants, reps=a.reps,
                       barrier=ctx.Barrier(a.processes))
        with ctx.Pool(a.processes) as pool:
            out = pool.map(_worker, range(a.processes))
        secs = [o[0] for o in out]
        solve_total = sum(flops / s_ / 1e9 for s_ in secs)
        gemm_total = sum(o[1] for o in out)
        res.update({"solve_seconds_per_process": secs, "solve_gflops_total": solve_total,
                    "gemm_gflops_total": gemm_total, "fraction_of_gemm": solve_total / gemm_total})
    print(json.dumps(res, indent=2))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=2)


if __name__ == "__main__":
    main()
