"""Large-graph study: SepNE's base factorisation, ProNE's spectral propagation, ProNE.

NumPy/SciPy only (no Spark session), deterministic (every seed fixed), BLAS on one
thread. For each graph (a uniform SBM or a degree-corrected SBM from
:mod:`sepne_spark.generators`, or a document graph from ``$SEPNE_DATA_DIR``) and each
method it records, as one JSON line in ``benchmarks/results/large_graph_study.jsonl``
(or the file ``$STUDY_RESULTS`` names):

* ``val``: the model-selection score, computed inside the training part of each split
  only (3-fold cross-validation of the training nodes, mean of 3 splits), per ratio;
* ``test``: micro-F1 of one-vs-rest logistic regression (``sepne_spark.evaluation``'s,
  L2-normalised rows) trained on the training part, on the held-out nodes, mean of 5
  splits, per ratio (10% and 50% on generated graphs, 10% and 90% on document graphs);
* ``zero_frac``: fraction of all-zero embedding rows among the nodes with an edge;
* ``seconds``: wall time of the embedding (not of the evaluation), and ``products``:
  the sparse products of the propagation (:func:`sepne_spark.spectral.sparse_products`).

On generated graphs the classification uses a fixed random sample of 5,000 nodes (the
same for every method) so that the logistic regressions stay cheap; the embeddings are
always of the whole graph.

Methods are named on the command line, e.g. ``prone``, ``prone-base``,
``social``, ``social+p3`` (the ``social`` base then the propagation of order 3),
``social:k=2000,strategy=DP+p5``, ``docq``; see :func:`parse_method`.

    PYTHONPATH=. python benchmarks/large_graph_study.py --graphs sbm-10k dcsbm-10k \\
        --methods prone prone-base social social+p10 social+p3
    PYTHONPATH=. python benchmarks/large_graph_study.py --report
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))

from sepne_spark.sparse import landmark_summaries, solve_sets, sparse_proximity, walk_summaries  # noqa: E402
from sepne_spark.evaluation import (  # noqa: E402
    OneVsRestLogisticRegression,
    _predict_labels,
    f1_scores,
    l2_normalize,
)
from sepne_spark.generators import dcsbm_edges_numpy, sbm_edges_numpy  # noqa: E402
from sepne_spark.solver import landmark_factors, row_space_factors, set_constants  # noqa: E402
from sepne_spark.spectral import average, propagate, refine, reorthogonalize, sparse_products  # noqa: E402

DATA_DIR = Path(os.environ.get("SEPNE_DATA_DIR", "/work/shared/datasets"))
RESULTS = Path(os.environ.get("STUDY_RESULTS", ROOT / "benchmarks" / "results" / "large_graph_study.jsonl"))
EVAL_SAMPLE = 5000


# --------------------------------------------------------------------------- graphs


@dataclass
class Graph:
    name: str
    A: sp.csr_matrix  # symmetric 0/1 adjacency, no self-loops
    labels: np.ndarray  # int64 label per node, -1 when unlabelled
    ratios: tuple[float, float]

    @property
    def n(self) -> int:
        return self.A.shape[0]


def _adjacency(n: int, src: np.ndarray, dst: np.ndarray) -> sp.csr_matrix:
    keep = src != dst
    W = sp.coo_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n)).tocsr()
    W = (W + W.T).tocsr()
    W.data[:] = 1.0  # an undirected 0/1 graph: repeated and reciprocal links kept once
    return W


def load_dataset(name: str) -> Graph:
    """A document graph read as undirected (as the ``document`` profiles do)."""
    folder = DATA_DIR / name
    e = [line.split()[:2] for line in open(folder / "edges.tsv") if len(line.split()) >= 2]
    lab = dict(line.split()[:2] for line in open(folder / "labels.tsv") if len(line.split()) >= 2)
    ids = sorted({v for p in e for v in p} | set(lab))
    index = {v: i for i, v in enumerate(ids)}
    src = np.array([index[a] for a, _ in e])
    dst = np.array([index[b] for _, b in e])
    classes = {c: j for j, c in enumerate(sorted(set(lab.values())))}
    labels = np.array([classes[lab[v]] if v in lab else -1 for v in ids], dtype=np.int64)
    return Graph(name, _adjacency(len(ids), src, dst), labels, (0.1, 0.9))


def generated(kind: str, n: int, communities: int, degree: float, mixing: float, seed: int) -> Graph:
    """A generated graph: ``sbm``, ``dcsbm`` (:mod:`sepne_spark.generators`) or ``lfr``
    (:mod:`lfr`: power-law community sizes; needs NetworkX)."""
    if kind == "lfr":
        from lfr import lfr_edges_numpy as fn
    else:
        fn = sbm_edges_numpy if kind == "sbm" else dcsbm_edges_numpy
    src, dst, labels = fn(n, communities, degree, mixing, seed)
    name = f"{kind}-n{n}-c{communities}-d{degree:g}-mu{mixing:g}" + (f"-s{seed}" if kind == "lfr" else "")
    return Graph(name, _adjacency(n, src, dst), labels.astype(np.int64), (0.1, 0.5))


GRAPHS = {
    "sbm-10k": lambda: generated("sbm", 10_000, 50, 15, 0.7, 1),
    "dcsbm-10k": lambda: generated("dcsbm", 10_000, 50, 15, 0.7, 1),
    "sbm-100k": lambda: generated("sbm", 100_000, 100, 15, 0.7, 1),
    "dcsbm-100k": lambda: generated("dcsbm", 100_000, 100, 15, 0.7, 1),
    "sbm-4k-d20": lambda: generated("sbm", 4_000, 40, 20, 0.7, 1),
    # The scale ladder's graphs (benchmarks/scale_quality.py: 50 communities, mixing 0.6).
    "sbm6-100k": lambda: generated("sbm", 100_000, 50, 15, 0.6, 1),
    "dcsbm6-100k": lambda: generated("dcsbm", 100_000, 50, 15, 0.6, 1),
    "dcsbm-4k-d20": lambda: generated("dcsbm", 4_000, 40, 20, 0.7, 1),
    # Sparse graphs of citation-network degree above document-quality's size bound.
    "sbm-20k-d4.5": lambda: generated("sbm", 20_000, 50, 4.5, 0.6, 1),
    "dcsbm-20k-d4.5": lambda: generated("dcsbm", 20_000, 50, 4.5, 0.6, 1),
    # Between the sparse graphs above and the mean degree of 15 of sbm-10k.
    "sbm-10k-d8": lambda: generated("sbm", 10_000, 50, 8, 0.6, 1),
    "dcsbm-10k-d8": lambda: generated("dcsbm", 10_000, 50, 8, 0.6, 1),
    # The same degree with citation networks' homophily (Cora: about 0.8 of the edges
    # inside a class), fewer and larger classes.
    "sbm-20k-d4.5-mu0.3": lambda: generated("sbm", 20_000, 20, 4.5, 0.3, 1),
    "dcsbm-20k-d4.5-mu0.3": lambda: generated("dcsbm", 20_000, 20, 4.5, 0.3, 1),
    # Sparse graphs of 50,000 nodes with citation networks' homophily: where the
    # small-graph tier's size bound is tested (finding 19).
    "sbm-50k-d4-mu0.3": lambda: generated("sbm", 50_000, 50, 4, 0.3, 2),
    "dcsbm-50k-d4-mu0.3": lambda: generated("dcsbm", 50_000, 50, 4, 0.3, 2),
    # BlogCatalog's size and density with hubs (BENCHMARKS.md, "Dense graphs").
    "dcsbm-10k-d65": lambda: generated("dcsbm", 10_312, 39, 65, 0.6, 1),
    # Flickr's size and density (80,513 nodes, mean degree 146) with hubs, 50 communities.
    "dcsbm-80k-d146": lambda: generated("dcsbm", 80_513, 50, 146, 0.7, 1),
    # A uniform graph dense enough for the I+A tier (sum of d^2 over 3 x 10^7), under 10^5 nodes.
    "sbm-50k-d25": lambda: generated("sbm", 50_000, 50, 25, 0.7, 1),
    # The degree-spread rule's test graphs (finding 20): seed 2, shapes not used before.
    "dcsbm-50k-d25-s2": lambda: generated("dcsbm", 50_000, 50, 25, 0.7, 2),
    "sbm-30k-d40-s2": lambda: generated("sbm", 30_000, 30, 40, 0.7, 2),
    "dcsbm-30k-d40-s2": lambda: generated("dcsbm", 30_000, 30, 40, 0.7, 2),
    "sbm-80k-d60-s2": lambda: generated("sbm", 80_000, 50, 60, 0.7, 2),
    # The degree-spread rule above 10^5 nodes (finding 21): seed 4.
    "dcsbm-300k-d15-s4": lambda: generated("dcsbm", 300_000, 100, 15, 0.7, 4),
    "dcsbm-300k-d40-s4": lambda: generated("dcsbm", 300_000, 100, 40, 0.7, 4),
    "dcsbm-1m-d15-s5": lambda: generated("dcsbm", 1_000_000, 100, 15, 0.7, 5),
    # The log-ratio rounds for the I+A tier (finding 22): seed 7.
    "dcsbm-10k-d65-s7": lambda: generated("dcsbm", 10_312, 39, 65, 0.6, 7),
    "dcsbm-30k-d40-s7": lambda: generated("dcsbm", 30_000, 30, 40, 0.7, 7),
    "dcsbm-100k-s7": lambda: generated("dcsbm", 100_000, 100, 15, 0.7, 7),
    "sbm-50k-d25-s7": lambda: generated("sbm", 50_000, 50, 25, 0.7, 7),
    # The log-ratio rounds for the dense graphs of the I+A tier (finding 23): seed 8.
    "dcsbm-20k-d50-s8": lambda: generated("dcsbm", 20_000, 40, 50, 0.7, 8),
    "sbm-30k-d40-s8": lambda: generated("sbm", 30_000, 30, 40, 0.7, 8),
    "dcsbm-80k-d60-s8": lambda: generated("dcsbm", 80_000, 50, 60, 0.7, 8),
    # The densest graphs of the I+A tier (finding 25): seed 11.
    "dcsbm-15k-d100-s11": lambda: generated("dcsbm", 15_000, 30, 100, 0.7, 11),
    "sbm-20k-d80-s11": lambda: generated("sbm", 20_000, 25, 80, 0.7, 11),
    "dcsbm-50k-d120-s11": lambda: generated("dcsbm", 50_000, 50, 120, 0.7, 11),
    # One averaging step after the log-ratio rounds of the I+A tier (finding 26): seed 12.
    "dcsbm-12k-d40-s12": lambda: generated("dcsbm", 12_000, 30, 40, 0.7, 12),
    "sbm-40k-d30-s12": lambda: generated("sbm", 40_000, 40, 30, 0.75, 12),
    "dcsbm-60k-d90-s12": lambda: generated("dcsbm", 60_000, 60, 90, 0.7, 12),
    "cora": lambda: load_dataset("cora"),
    "citeseer": lambda: load_dataset("citeseer"),
    "wiki": lambda: load_dataset("wiki"),
}


def graph(name: str) -> Graph:
    """A graph of :data:`GRAPHS`, or ``KIND:NODES:COMMUNITIES:DEGREE:MIXING:SEED`` with KIND
    one of sbm, dcsbm, lfr (``lfr:5000:40:15:0.6:1``)."""
    if name in GRAPHS:
        return GRAPHS[name]()
    kind, *fields_ = name.split(":")
    if kind not in ("sbm", "dcsbm", "lfr") or len(fields_) != 5:
        raise SystemExit(f"unknown graph {name!r}: a name of GRAPHS or KIND:NODES:COMMUNITIES:DEGREE:MIXING:SEED")
    n, c, d, mu, seed = int(fields_[0]), int(fields_[1]), float(fields_[2]), float(fields_[3]), int(fields_[4])
    return generated(kind, n, c, d, mu, seed)


# --------------------------------------------------------------------------- SepNE


@dataclass(frozen=True)
class Base:
    """SepNE base settings (names as in the job's profiles)."""

    metric: str = "I+A"
    window: int = 2
    scaling: str = "none"
    k: int = 1000
    strategy: str = "DD"
    lam: float = 50.0
    eta: float = 1.0
    iters: int = 5
    set_size: int = 2000
    d: int = 128
    seed: int = 0
    # "rows": landmark subspaces from all landmark rows / columns; "walks": from the
    # landmark rows / columns of the log-scaled A + A^2, whatever `metric` is (P is the
    # metric's own M00 projected on them)
    factor: str = "M00"
    # Research only, not in the library: metric "I+A+L2" is I + A plus the A^2 entries
    # of the landmark rows and columns; this is the scaling of those entries
    l2_scaling: str = "none"
    # "I+A+L2" with hops = h > 2: the entries of A^2 + ... + A^h in the landmark rows
    # and columns (finding 13)
    hops: int = 2


SOCIAL = Base()
DOCQ = Base(metric="A+A2", window=5, scaling="log", k=250, strategy="GDS", lam=0.4, eta=1000.0, iters=100, set_size=500)
PRESETS = {"social": SOCIAL, "docq": DOCQ}


def select_landmarks(A: sp.csr_matrix, k: int, strategy: str, seed: int) -> np.ndarray:
    """DD (degree, then id), DP (degree-proportional, seeded), GDS (greedy dominating set)."""
    n = A.shape[0]
    deg = np.diff(A.indptr).astype(np.float64)
    order = np.lexsort((np.arange(n), -deg))
    k = min(k, n)
    if strategy == "DD":
        return order[:k]
    if strategy == "DP":
        rng = np.random.default_rng([seed, 17])
        nz = np.flatnonzero(deg > 0)
        return rng.choice(nz, size=min(k, nz.size), replace=False, p=deg[nz] / deg[nz].sum())
    if strategy == "GDS":
        blocked = np.zeros(n, dtype=bool)
        chosen: list[int] = []
        for v in order:
            if len(chosen) == k:
                break
            if not blocked[v]:
                chosen.append(int(v))
                blocked[v] = True
                blocked[A.indices[A.indptr[v]:A.indptr[v + 1]]] = True
        if len(chosen) < k:
            taken = set(chosen)
            chosen += [int(v) for v in order if int(v) not in taken][: k - len(chosen)]
        return np.array(chosen, dtype=np.int64)
    raise ValueError(strategy)


def sepne_embed(G: Graph, b: Base) -> np.ndarray:
    """W (n x d) of SepNE with random sets: landmark rows Phi^T, other rows Phi A; the
    library's own SciPy path (:mod:`sepne_spark.sparse`, what one task runs)."""
    n = G.n
    coo = G.A.tocoo()
    V0 = select_landmarks(G.A, b.k, b.strategy, b.seed)
    if b.metric == "I+A+L2":  # I + A, plus A^2 in the landmark rows and columns only
        M = sparse_proximity(n, coo.row, coo.col, coo.data, "I+A", 2, "none")
        T = sparse_proximity(n, coo.row, coo.col, coo.data, "A+A2", 1, "none")
        R = sp.csr_matrix(T[V0] @ T)
        C = sp.csc_matrix(T @ T[:, V0])
        Rp, Cp = R, C
        for _ in range(b.hops - 2):
            Rp = sp.csr_matrix(Rp @ T)
            Cp = sp.csc_matrix(T @ Cp)
            R, C = R + Rp, C + Cp
        if b.l2_scaling == "log":
            vol = float(G.A.sum())
            s_in = np.asarray(G.A.sum(axis=0)).ravel()
            R = R.tocoo()
            R = sp.csr_matrix((np.log(np.maximum(vol * R.data / (2 * s_in[R.col]), 1.0)), (R.row, R.col)), shape=R.shape)
            C = C.tocoo()
            C = sp.csr_matrix((np.log(np.maximum(vol * C.data / (2 * s_in[V0[C.col]]), 1.0)), (C.row, C.col)), shape=C.shape)
        sel = sp.csr_matrix((np.ones(len(V0)), (V0, np.arange(len(V0)))), shape=(n, len(V0)))
        Cn = sp.csr_matrix(C)
        Cn = sp.diags(np.isin(np.arange(n), V0, invert=True).astype(float)) @ Cn  # landmark block once, from R
        M = sp.csr_matrix(M + sel @ R + Cn @ sel.T)
    else:
        M = sparse_proximity(n, coo.row, coo.col, coo.data, b.metric, b.window, b.scaling)
    M00, S_A, S_B = landmark_summaries(M, V0)
    if b.factor == "M00":
        F = landmark_factors(M00, b.d)
    elif b.factor == "rows":
        F = row_space_factors(M00, S_A, S_B, b.d)
    elif b.factor == "walks":
        W00, WA, WB = walk_summaries(n, coo.row, coo.col, coo.data, V0)
        F = row_space_factors(M00, S_A, S_B, b.d, subspaces=(WA + W00 @ W00.T, WB + W00.T @ W00))
    else:
        raise ValueError(b.factor)
    nonl = np.ones(n, dtype=bool)
    nonl[V0] = False
    nl = np.flatnonzero(nonl)
    s = max(1, math.ceil(len(nl) / b.set_size))
    sets = np.full(n, -1, dtype=np.int64)
    sets[nl] = np.random.default_rng([b.seed, 7919]).integers(0, s, size=len(nl))
    W = np.zeros((n, F.Phi.shape[0]))
    W[V0] = F.Phi.T
    for _, members, Wi, _ in solve_sets(M, V0, sets, set_constants(F, S_A, S_B, b.lam, b.eta), b.iters):
        W[members] = Wi.T
    return W


# --------------------------------------------------------------------------- methods


@dataclass(frozen=True)
class Method:
    name: str
    base: str  # "prone", "sepne"
    sepne: Base | None = None
    order: int = 1  # 1: no propagation
    mu: float = 0.2
    theta: float = 0.5
    pre_normalize: bool = True  # L2-normalise the base rows before propagating
    fill: bool = False  # zero base rows get a random unit row (seeded) before propagating
    gram: bool = False  # ProNE's final SVD done through the d x d Gram matrix (always for SepNE)
    refine: int = 0  # rounds of subspace iteration (sepne_spark.spectral.refine) before the propagation
    average: int = 0  # steps of neighbourhood averaging (sepne_spark.spectral.average) before the refinement
    refine_operator: str = "transition"  # the refinement's operator (+mSTEPS: the log-ratio matrix, +nSTEPS: ProNE's)
    final_average: int = 0  # steps of neighbourhood averaging after everything else (the filter's output)
    anchor: float | None = None  # +uA: unreached="anchor" of length A last (sepne_spark.unreached)


def _parse_value(field: str, text: str):
    typ = {f.name: f.type for f in fields(Base)}[field]
    return {"int": int, "float": float, "str": str}[typ if isinstance(typ, str) else typ.__name__](text)


def parse_method(name: str) -> Method:
    """``BASE[:key=value,...][+aSTEPS][+rSTEPS|+mSTEPS|+nSTEPS][+pORDER[:mu=..,theta=..,raw,fill,gram]][+qSTEPS]``; BASE in
    prone(-base), random, social, docq; ``+aSTEPS`` averages the base over that many steps
    of neighbourhood averaging, ``+rSTEPS`` refines it by that many rounds of subspace
    iteration (``+mSTEPS``: with the one-hop log-ratio matrix as the operator; ``+nSTEPS``:
    with ``F F^T``, ``F`` ProNE's log-ratio matrix, research only); a trailing
    ``+qSTEPS`` averages the final vectors (after the filter); a trailing ``+uA`` gives the
    nodes no landmark reaches the library's anchor of length A
    (:func:`sepne_spark.unreached.anchor_unreached`, seed 0), last."""
    name, _, anchor_text = name.partition("+u")
    m = _parse_method(name)
    return replace(m, name=m.name + f"+u{anchor_text}", anchor=float(anchor_text)) if anchor_text else m


def _parse_method(name: str) -> Method:
    name_, _, last = name.partition("+q")
    final_steps = int(last) if last else 0
    head, _, prop = name_.partition("+p")
    head, _, steps = head.partition("+r")
    head, _, msteps = head.partition("+m")
    head, _, nsteps = head.partition("+n")
    if sum(map(bool, (steps, msteps, nsteps))) > 1:
        raise ValueError(f"{name}: +r, +m and +n are operators of the same refinement; give one")
    refine_steps = int(steps or msteps or nsteps or 0)
    refine_operator = "pmi" if msteps else "prone" if nsteps else "transition"
    head, _, avg = head.partition("+a")
    average_steps = int(avg) if avg else 0
    order, mu, theta, pre, fill, gram = 1, 0.2, 0.5, True, False, False
    if prop:
        o, _, opts = prop.partition(":")
        order = int(o)
        for kv in filter(None, opts.split(",")):
            if kv == "raw":
                pre = False
                continue
            if kv == "fill":
                fill = True
                continue
            if kv == "gram":
                gram = True
                continue
            key, val = kv.split("=")
            if key == "mu":
                mu = float(val)
            elif key == "theta":
                theta = float(val)
            else:
                raise ValueError(kv)
    if head == "random":  # floor: Gaussian rows (seeded) as the base, only the propagation learns
        return Method(name, "random", order=order, mu=mu, theta=theta, refine=refine_steps,
                      refine_operator=refine_operator, final_average=final_steps)
    if head in ("prone", "prone-base"):
        return Method(name, "prone", order=10 if head == "prone" and not prop else order, mu=mu, theta=theta,
                      gram=gram, final_average=final_steps)
    preset, _, opts = head.partition(":")
    b = PRESETS[preset]
    for kv in filter(None, opts.split(",")):
        key, val = kv.split("=")
        b = replace(b, **{key: _parse_value(key, val)})
    return Method(name, "sepne", b, order, mu, theta, pre, fill, refine=refine_steps, average=average_steps,
                  refine_operator=refine_operator, final_average=final_steps)


def embed(G: Graph, m: Method) -> tuple[np.ndarray, float, float]:
    """Embedding, seconds of the base stage, seconds of the propagation stage."""
    from prone import dense_svd_embedding, prone_base

    t0 = time.perf_counter()
    if m.base == "prone":
        E = prone_base(G.A, 128)
    elif m.base == "random":
        E = np.random.default_rng(0).standard_normal((G.n, 128))
    else:
        E = sepne_embed(G, m.sepne)
    t1 = time.perf_counter()
    if m.average:
        E = average(G.A, E, m.average)
    if m.refine:
        if m.refine_operator == "prone":
            E = refine_prone_matrix(G.A, E, m.refine)
        else:
            E = refine(G.A, E, m.refine, m.refine_operator)  # orthonormal columns; the filter normalises its rows
        if m.order == 1:
            E = reorthogonalize(l2_normalize(E))
    if m.order > 1:
        X = l2_normalize(E) if m.pre_normalize else E
        if m.fill:
            X = fill_zero_rows(X)
        Y = propagate(G.A, X, m.order, m.mu, m.theta)
        if m.base == "prone" and not m.gram:  # the peer exactly as published: dense SVD of Y
            E = dense_svd_embedding(Y, 128)
        else:  # the distributed route: Gram matrix, d x d eigendecomposition
            E = reorthogonalize(Y)
    if m.final_average:
        E = average(G.A, E, m.final_average)
    if m.anchor is not None:
        from sepne_spark.unreached import anchor_unreached

        E, _ = anchor_unreached(G.A, E, np.arange(G.n), m.anchor, 0)
    t2 = time.perf_counter()
    return E, t1 - t0, t2 - t1


def refine_prone_matrix(A: sp.csr_matrix, E: np.ndarray, steps: int) -> np.ndarray:
    """Research only (``+nSTEPS``): subspace iteration on ``F F^T``, ``F`` ProNE's own
    log-ratio matrix (degree^0.75 negatives, negative entries kept; not symmetric), two
    sparse products a round, started from SepNE's L2-normalised rows: its fixed point is
    the span of ProNE's tSVD factor."""
    from prone import prone_matrix
    from sepne_spark.spectral import gram_matrix, orthonormalizer

    F = prone_matrix(A)
    Ft = sp.csr_matrix(F.T)
    Q = l2_normalize(E)
    for _ in range(steps):
        Y = F @ (Ft @ Q)
        Q = Y @ orthonormalizer(gram_matrix(Y))
    return Q


def fill_zero_rows(X: np.ndarray, seed: int = 0) -> np.ndarray:
    """Rows of ``X`` that are zero replaced by random unit rows (Gaussian, seeded by the
    node's index; a distributed job would hash (node id, column))."""
    zero = np.linalg.norm(X, axis=1) == 0
    if not zero.any():
        return X
    X = X.copy()
    R = np.random.default_rng(seed).standard_normal(X.shape)[zero]
    scale = np.median(np.linalg.norm(X[~zero], axis=1)) if (~zero).any() else 1.0
    X[zero] = scale * R / np.linalg.norm(R, axis=1, keepdims=True)
    return X


# --------------------------------------------------------------------------- evaluation


def _fit_predict(X: np.ndarray, y: np.ndarray, tr: np.ndarray, te: np.ndarray, L: int) -> float:
    Y = np.zeros((len(y), L), dtype=bool)
    Y[np.arange(len(y)), y] = True
    clf = OneVsRestLogisticRegression(max_iter=300, tol=1e-6).fit(X[tr], Y[tr])
    pred = _predict_labels(clf.decision_function(X[te]), None)
    return f1_scores(Y[te], pred)[0]


def evaluate(G: Graph, E: np.ndarray, test_splits: int = 5, val_splits: int = 3, folds: int = 3) -> dict:
    lab = np.flatnonzero(G.labels >= 0)
    if G.name.startswith(("sbm", "dcsbm", "lfr")) and lab.size > EVAL_SAMPLE:
        lab = np.sort(np.random.default_rng(12345).choice(lab, EVAL_SAMPLE, replace=False))
    X = l2_normalize(E[lab])
    y = G.labels[lab]
    L = int(G.labels.max()) + 1
    n = len(lab)
    out: dict = {"val": {}, "test": {}}
    for r in G.ratios:
        tests, vals = [], []
        for s in range(test_splits):
            perm = np.random.default_rng([0, s]).permutation(n)
            ntr = int(r * n)
            tr, te = perm[:ntr], perm[ntr:]
            tests.append(_fit_predict(X, y, tr, te, L))
            if s < val_splits:
                inner = np.random.default_rng([0, s, 999]).permutation(tr)
                parts = np.array_split(inner, folds)
                f = []
                for j in range(folds):
                    fit = np.concatenate([parts[i] for i in range(folds) if i != j])
                    f.append(_fit_predict(X, y, fit, parts[j], L) * len(parts[j]))
                vals.append(sum(f) / len(inner))
        out["test"][str(r)] = float(np.mean(tests))
        out["val"][str(r)] = float(np.mean(vals))
    return out


def zero_fraction(G: Graph, E: np.ndarray) -> float:
    has_edge = np.diff(G.A.indptr) > 0
    norms = np.linalg.norm(E, axis=1)
    tiny = norms <= 1e-12 * max(norms.max(), 1e-300)
    return float(np.mean(tiny[has_edge]))


# --------------------------------------------------------------------------- driver


def run(graph_names: list[str], method_names: list[str], test_splits: int = 5, val_splits: int = 3) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    for gname in graph_names:
        G = graph(gname)
        deg = np.diff(G.A.indptr)
        print(f"# {gname}: n={G.n} edges={G.A.nnz // 2} mean degree={deg.mean():.2f} max={deg.max()} "
              f"degree-1 {np.mean(deg == 1):.3f} isolated {np.mean(deg == 0):.3f}", flush=True)
        for mname in method_names:
            m = parse_method(mname)
            load0 = os.getloadavg()[0]
            E, tb, tp = embed(G, m)
            ev = evaluate(G, E, test_splits, val_splits)
            rec = {
                "graph": gname, "graph_name": G.name, "method": mname, "n": G.n,
                "edges": int(G.A.nnz // 2), "val": ev["val"], "test": ev["test"],
                "zero_frac": zero_fraction(G, E), "base_s": tb, "prop_s": tp,
                "products": sparse_products(m.order) + m.refine + m.average + m.final_average, "load1": load0,
                "test_splits": test_splits, "val_splits": val_splits,
                "method_spec": {**asdict(m), "sepne": asdict(m.sepne) if m.sepne else None},
            }
            with open(RESULTS, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            r0, r1 = (str(r) for r in G.ratios)
            print(f"{gname:10s} {mname:40s} val {ev['val'][r0]:.4f} {ev['val'][r1]:.4f}  test {ev['test'][r0]:.4f} "
                  f"{ev['test'][r1]:.4f}  zero {rec['zero_frac']:.4f}  {tb:7.1f}s + {tp:6.1f}s  load {load0:.1f}",
                  flush=True)


def report(path: Path = RESULTS) -> None:
    """Markdown tables of the log (last record of each graph/method), one per graph."""
    recs: dict[tuple[str, str], dict] = {}
    for line in open(path):
        r = json.loads(line)
        recs[(r["graph"], r["method"])] = r
    graphs = list(dict.fromkeys(g for g, _ in recs))
    for g in graphs:
        rows = [r for (gg, _), r in recs.items() if gg == g]
        ratios = list(rows[0]["test"])
        prone_rec = recs.get((g, "prone"))
        print(f"\n### {g} ({rows[0]['graph_name']}, n = {rows[0]['n']}, {rows[0]['edges']} edges)\n")
        print(f"| method | products | val {ratios[0]} | val {ratios[1]} | test {ratios[0]} | test {ratios[1]} "
              f"| test / ProNE | zero rows | base s | prop s | load |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            ratio = ""
            if prone_rec:
                ratio = " / ".join(f"{r['test'][x] / prone_rec['test'][x]:.3f}" for x in ratios)
            print(f"| {r['method']} | {r['products']} | {r['val'][ratios[0]]:.4f} | {r['val'][ratios[1]]:.4f} | "
                  f"{r['test'][ratios[0]]:.4f} | {r['test'][ratios[1]]:.4f} | {ratio} | {100 * r['zero_frac']:.2f}% | "
                  f"{r['base_s']:.1f} | {r['prop_s']:.1f} | {r['load1']:.1f} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", nargs="*", default=[])
    ap.add_argument("--methods", nargs="*", default=[])
    ap.add_argument("--test-splits", type=int, default=5)
    ap.add_argument("--val-splits", type=int, default=3)
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if args.graphs:
        run(args.graphs, args.methods, args.test_splits, args.val_splits)
    if args.report:
        report()


if __name__ == "__main__":
    main()
