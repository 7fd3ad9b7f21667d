"""Shared helpers of the quality study: the benchmark graphs, the library's pipeline,
the evaluation.

Every configuration the library has runs through the library itself: the estimator
(:class:`sepne_spark.SepNE`, its one-task path on these graphs) in one local Spark
session, so the landmarks, the sets, M and the solve are the ones that ship
(:func:`library_run`). The research-only variants live in :mod:`variants`, which takes
the library's landmarks, sets and solver and changes one thing. Embeddings are scored
with the paper's node-classification protocol
(:func:`sepne_spark.evaluation.node_classification`) or with a validation score
computed inside the training part of each split only.

BLAS is limited to one thread before NumPy is imported, and the Spark session runs
``local[1]`` (``$SEPNE_STUDY_MASTER`` to change it).
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sepne_spark import settings  # noqa: E402
from sepne_spark.evaluation import (  # noqa: E402
    OneVsRestLogisticRegression,
    _binarize,
    _predict_labels,
    f1_scores,
    l2_normalize,
    node_classification,
)

DATA_DIR = Path(os.environ.get("SEPNE_DATA_DIR", "/work/shared/datasets"))
RESULTS_DIR = ROOT / "benchmarks" / "results"
DATASETS = ("wiki", "cora", "citeseer")

PAPER = {
    "SepNE (paper)": {"wiki": (0.5764, 0.6867), "cora": (0.7365, 0.8220), "citeseer": (0.5157, 0.6072)},
    "DeepWalk (paper)": {"wiki": (0.5737, 0.6893), "cora": (0.7509, 0.8187), "citeseer": (0.5086, 0.5813)},
}


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


@dataclass
class Graph:
    name: str
    ids: list[str]
    src: np.ndarray  # edge list over 0..n-1 after self-loop removal (duplicates kept)
    dst: np.ndarray
    labels: list[str]  # one label per node, "" for nodes without a label
    ratios: tuple[float, float] = (0.1, 0.9)  # training fractions of its two cells

    @property
    def n(self) -> int:
        return len(self.ids)


def load_graph(name: str, self_loops: str = "drop") -> Graph:
    """Edges and labels of a benchmark; labelled nodes without edges become isolated nodes."""
    folder = DATA_DIR / name
    e_src, e_dst = [], []
    with open(folder / "edges.tsv") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                e_src.append(parts[0])
                e_dst.append(parts[1])
    lab: dict[str, str] = {}
    with open(folder / "labels.tsv") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                lab[parts[0]] = parts[1]
    ids = sorted(set(e_src) | set(e_dst) | set(lab))
    index = {v: i for i, v in enumerate(ids)}
    src = np.array([index[v] for v in e_src], dtype=np.int64)
    dst = np.array([index[v] for v in e_dst], dtype=np.int64)
    if self_loops == "drop":
        keep = src != dst
        src, dst = src[keep], dst[keep]
    return Graph(name, ids, src, dst, [lab.get(v, "") for v in ids])


def generated_graph(spec: str) -> Graph:
    """A generated graph named ``MODEL:NODES:COMMUNITIES:DEGREE:MIXING:SEED`` (MODEL
    ``sbm`` or ``dcsbm``, :mod:`sepne_spark.generators`' NumPy twins of the job's
    generators), labelled by its planted communities and scored at 10% and 50% training
    (the scale ladder's ratios)."""
    from sepne_spark.generators import dcsbm_edges_numpy, sbm_edges_numpy

    model, n, c, deg, mix, seed = spec.split(":")
    fn = {"sbm": sbm_edges_numpy, "dcsbm": dcsbm_edges_numpy}[model]
    src, dst, comm = fn(int(n), int(c), float(deg), float(mix), int(seed))
    ids = [str(i) for i in range(int(n))]
    return Graph(spec, ids, src.astype(np.int64), dst.astype(np.int64), [str(x) for x in comm], (0.1, 0.5))


def any_graph(name: str, self_loops: str = "drop") -> Graph:
    """A document graph by its folder name, or a generated one by its spec (:func:`generated_graph`)."""
    return generated_graph(name) if ":" in name else load_graph(name, self_loops)


def adjacency(g: Graph, directed: bool, dups: str = "sum") -> sp.csr_matrix:
    """Weighted adjacency (undirected edges in both directions). Duplicate edges (and, when
    undirected, the two directions of a pair given both ways) are summed (``dups="sum"``)
    or kept once with weight 1 (``dups="max"``), as the job's ``duplicates`` setting."""
    n = g.n
    W = sp.coo_matrix((np.ones(len(g.src)), (g.src, g.dst)), shape=(n, n)).tocsr()
    if not directed:
        W = W + W.T - sp.diags(W.diagonal())  # a kept self-loop appears once, as in the job
    W.sum_duplicates()
    W = W.tocsr()
    if dups == "max":
        W.data[:] = 1.0
    elif dups != "sum":
        raise ValueError(dups)
    return W


def edge_arrays(g: Graph, directed: bool, dups: str = "sum") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The merged weighted edge list of :func:`adjacency` (both directions when undirected)."""
    W = adjacency(g, directed, dups).tocoo()
    return W.row.astype(np.int64), W.col.astype(np.int64), W.data.astype(np.float64)


# ---------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------


def _default(name: str) -> Any:
    """The library's default of the setting ``name`` (sepne_spark.settings, the one schema)."""
    return settings._BY_NAME[name].default


@dataclass(frozen=True)
class Config:
    """One configuration of the study. Fields the library has map onto the estimator's
    Params (:func:`library_params`) and take its defaults from the settings schema; the
    others are research variants (:mod:`variants`). The short field names are those of
    the configurations' tags in VALIDATION_LOG.md."""

    directed: bool = _default("directed")
    transform: str = "rw"  # rw (scaling none), logN (scaling log); research: sym, logN:b, logNa:alpha
    metric: str = "A+A2"  # A+A2, I+A, winT (A+A2 with window T)
    d: int = _default("dim")
    k: int = _default("landmarks")
    strategy: str = _default("landmark_strategy")
    partition: str = _default("partition")  # RP, LP; research: ALL (one set)
    set_size: int = _default("set_size")
    lam: float = _default("lam")
    eta: float = _default("eta")
    iters: int = _default("iters")
    output: str = "W"  # W, C, W+C (sum), avg (mean of the L2-normalised W and C), concat (2d)
    seed: int = _default("seed")
    method: str = "sepne"  # sepne; research: svd (rank-d truncated SVD of M), nystrom (same landmarks)
    self_loops: str = _default("self_loops")  # "keep": self-loops stay in the adjacency (once)
    spow: float = 0.0  # research: output coordinate j scaled by s_j ** spow (s: singular values of M00)
    dups: str = _default("duplicates")  # "max": duplicate edges kept once (the job's duplicates: max)
    factor: str = _default("landmark_factors")  # "rows": landmark subspaces from all landmark rows / columns
    average: int = _default("average_steps")  # steps of neighbourhood averaging of W after the solve
    propagation: int = _default("propagation")  # Chebyshev terms of ProNE's filter before the averaging

    def tag(self) -> str:
        return ",".join(f"{k}={v}" for k, v in asdict(self).items())


AS_WRITTEN = Config()

#: The study's transforms the library has, as its ``scaling`` setting.
LIBRARY_SCALING = {"rw": "none", "logN": "log"}


def library_metric(metric: str) -> tuple[str, int]:
    """The library's ``metric`` and ``window`` for the study's ``metric``."""
    if metric.startswith("win"):
        return "A+A2", int(metric[3:])
    if metric in ("A+A2", "I+A"):
        return metric, 2
    raise ValueError(metric)


def layout_params(cfg: Config) -> dict[str, Any]:
    """The estimator's Params that decide the landmarks and the sets (and the graph the
    library reads): the same for a research variant as for the library's own run."""
    return dict(
        landmarks=cfg.k, landmarkStrategy=cfg.strategy, partition="RP" if cfg.partition == "ALL" else cfg.partition,
        setSize=cfg.set_size, seed=cfg.seed, directed=cfg.directed, duplicates=cfg.dups, selfLoops=cfg.self_loops,
        dim=min(cfg.d, cfg.k),
    )


def library_params(cfg: Config) -> dict[str, Any] | None:
    """The :class:`sepne_spark.SepNE` Params of ``cfg``, or None when it is a research
    variant (a transform, partition, method or output scaling the library does not have)."""
    if (cfg.method != "sepne" or cfg.spow or cfg.partition not in ("RP", "LP")
            or cfg.transform not in LIBRARY_SCALING):
        return None
    metric, window = library_metric(cfg.metric)
    return dict(layout_params(cfg), metric=metric, window=window, scaling=LIBRARY_SCALING[cfg.transform],
                dim=cfg.d, lam=cfg.lam, eta=cfg.eta, iters=cfg.iters, landmarkFactors=cfg.factor,
                averageSteps=cfg.average, propagation=cfg.propagation)


# ---------------------------------------------------------------------------
# The library's pipeline (one local Spark session for the whole study)
# ---------------------------------------------------------------------------

_SPARK = None
_FRAMES: dict[tuple[str, str], Any] = {}


def spark_session():
    """The study's Spark session: ``local[1]`` (one core, as BLAS), built once."""
    global _SPARK
    if _SPARK is None:
        from sepne_spark.session import get_spark

        _SPARK = get_spark("sepne-quality-study", os.environ.get("SEPNE_STUDY_MASTER", "local[1]"),
                           {"spark.ui.enabled": "false"})
        _SPARK.sparkContext.setLogLevel("ERROR")
    return _SPARK


def _edges_frame(g: Graph):
    """The graph's edge list as the library reads it: one row per line of the edge file
    that the loader kept (self-loops dropped when the graph was loaded that way)."""
    key = (g.name, f"{len(g.src)}")
    if key not in _FRAMES:
        import pandas as pd

        ids = np.array(g.ids, dtype=object)
        pdf = pd.DataFrame({"src": ids[g.src], "dst": ids[g.dst], "weight": np.ones(len(g.src))})
        _FRAMES[key] = spark_session().createDataFrame(pdf, "src string, dst string, weight double").cache()
    return _FRAMES[key]


@dataclass
class LibraryRun:
    """The library's output in the graph's node order: W, C (n x d; zero for nodes
    without an edge), the landmark indices in landmark order and every node's set id
    (-1: a landmark or a node without an edge)."""

    W: np.ndarray
    C: np.ndarray
    landmarks: np.ndarray
    sets: np.ndarray


def library_run(g: Graph, params: dict[str, Any]) -> LibraryRun:
    """Fit and embed ``g`` with the library's estimator (:class:`sepne_spark.SepNE`, the
    one-task path on these graphs) and ``params``."""
    from sepne_spark import SepNE

    edges = _edges_frame(g)
    model = SepNE(**params).fit(edges)
    pdf = model.transform(edges).toPandas()
    at = {v: i for i, v in enumerate(g.ids)}
    rows = np.array([at[v] for v in pdf["id"]], dtype=np.int64)
    d = len(pdf["embedding"].iloc[0])
    W = np.zeros((g.n, d))
    C = np.zeros((g.n, d))
    W[rows] = np.vstack(pdf["embedding"].to_numpy())
    C[rows] = np.vstack(pdf["context"].to_numpy())
    sets = np.full(g.n, -1, dtype=np.int64)
    sets[rows] = pdf["set_id"].to_numpy(np.int64)
    landmarks = np.array([at[v] for v in model.landmark_ids], dtype=np.int64)
    return LibraryRun(W, C, landmarks, sets)


def proximity(
    g: Graph, directed: bool, transform: str = "rw", metric: str = "A+A2", dups: str = "sum"
) -> sp.csr_matrix:
    """M of the configuration: the library's (:func:`sepne_spark.sparse.sparse_proximity`,
    what its one-task path builds) for ``rw`` and ``logN``; a research transform's
    (:func:`variants.proximity`) otherwise."""
    if transform not in LIBRARY_SCALING:
        import variants

        return variants.proximity(g, directed, transform, metric, dups)
    from sepne_spark.sparse import sparse_proximity

    lib_metric, window = library_metric(metric)
    src, dst, w = edge_arrays(g, directed, dups)
    return sparse_proximity(g.n, src, dst, w, lib_metric, window, LIBRARY_SCALING[transform])


def sepne(g: Graph, cfg: Config, M: sp.csr_matrix | None = None) -> tuple[np.ndarray, np.ndarray]:
    """W, C (n x d) of every node: the library's output when it has the configuration,
    else the research variant's (:func:`variants.sepne`, the library's landmarks, sets
    and solver on the variant's M)."""
    params = library_params(cfg)
    if params is not None:
        run = library_run(g, params)
        return run.W, run.C
    import variants

    W, C = variants.sepne(g, cfg, M)
    return averaged(g, cfg, W), C


def averaged(g: Graph, cfg: Config, W: np.ndarray) -> np.ndarray:
    """``W`` after the library's filter of ``cfg.propagation`` terms and ``cfg.average``
    steps of its averaging (:func:`sepne_spark.spectral.smooth`; the context vectors are
    left as they are, as the library leaves them), for the research paths; ``W`` itself
    without them."""
    if not cfg.average and cfg.propagation <= 1:
        return W
    from sepne_spark.spectral import smooth

    return smooth(adjacency(g, cfg.directed, cfg.dups), W, cfg.propagation, _default("propagation_mu"),
                  _default("propagation_theta"), average_steps=cfg.average)


def combine(W: np.ndarray, C: np.ndarray, output: str) -> np.ndarray:
    if output == "W":
        return W
    if output == "C":
        return C
    if output == "W+C":
        return W + C
    if output == "avg":
        return 0.5 * (l2_normalize(W) + l2_normalize(C))
    if output == "concat":
        return np.hstack([W, C])
    raise ValueError(output)


def nystrom(g: Graph, cfg: Config, M: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Nystrom with the library's landmarks of ``cfg``."""
    import variants

    return variants.nystrom(g, cfg, M)


def embed(g: Graph, cfg: Config, M: sp.csr_matrix | None = None) -> np.ndarray:
    if cfg.method == "svd":
        import variants

        W, C = variants.svd_factors(M if M is not None else proximity(g, cfg.directed, cfg.transform, cfg.metric,
                                                                      cfg.dups), cfg.d)
    elif cfg.method == "nystrom":
        W, C = nystrom(g, cfg, M if M is not None else proximity(g, cfg.directed, cfg.transform, cfg.metric, cfg.dups))
    else:
        W, C = sepne(g, cfg, M)
    return combine(W, C, cfg.output)


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


def labelled(g: Graph, X: np.ndarray) -> tuple[np.ndarray, list[str]]:
    keep = [i for i, l in enumerate(g.labels) if l != ""]
    return X[keep], [g.labels[i] for i in keep]


def test_scores(g: Graph, X: np.ndarray, n_splits: int = 10, seed: int = 0) -> tuple[float, float]:
    """The reported numbers: micro-F1 mean of 10 splits at the graph's two training
    fractions (10% and 90% on the document graphs)."""
    Xl, y = labelled(g, X)
    r = node_classification(Xl, y, g.ratios, n_splits=n_splits, seed=seed)["results"]
    return r[g.ratios[0]]["micro_f1_mean"], r[g.ratios[1]]["micro_f1_mean"]


def validation_scores(
    g: Graph, X: np.ndarray, n_outer: int = 5, folds: int = 3, seed: int = 0
) -> tuple[float, float]:
    """Model-selection score that never looks at the test nodes of the split it scores.

    For each of the first ``n_outer`` splits of the reporting protocol (the same
    permutations as :func:`node_classification`), only the training part (the first 10%
    or 90% of the permutation: the graph's two ratios) is used: it is cut into ``folds``
    folds, a classifier trained on the other folds predicts each fold, and the micro-F1
    over the training part is averaged over the outer splits.

    A choice made on the average over the outer splits has seen the others' training
    parts, which hold the test nodes of every reported split: at 90% the five training
    parts together hold every labelled node, at 10% 34% to 41% of each split's test
    nodes. Test scores of a setting chosen by it are optimistic by the selection; only
    graphs outside the choice give an unbiased measure.
    """
    Xl, y = labelled(g, X)
    Y, _ = _binarize(y)
    Xl = l2_normalize(Xl)
    n = Xl.shape[0]
    out = []
    for r in g.ratios:
        vals = []
        for s in range(n_outer):
            perm = np.random.default_rng([int(seed), s]).permutation(n)
            tr = perm[: min(max(1, int(r * n)), n - 1)]
            inner = np.random.default_rng([int(seed), s, 999]).permutation(tr)
            parts = np.array_split(inner, folds)
            T = np.zeros((0, Y.shape[1]), dtype=bool)
            P = np.zeros((0, Y.shape[1]), dtype=bool)
            for j in range(folds):
                va = parts[j]
                fit = np.concatenate([parts[i] for i in range(folds) if i != j])
                clf = OneVsRestLogisticRegression().fit(Xl[fit], Y[fit])
                pred = _predict_labels(clf.decision_function(Xl[va]), None)
                T = np.vstack([T, Y[va]])
                P = np.vstack([P, pred])
            vals.append(f1_scores(T, P)[0])
        out.append(float(np.mean(vals)))
    return out[0], out[1]


def save_json(name: str, obj: Any) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    path.write_text(json.dumps(obj, indent=2, default=str))
    return path


__all__ = [n for n in dir() if not n.startswith("__")]
