"""Helpers shared by the tests: small random graphs and their dense matrices, the
oracle comparison of embeddings. Test modules import helpers from here, never from
each other."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sepne_spark import dense


@dataclass
class SmallGraph:
    rows: list  # (src, dst, weight) as given to Spark
    ids: list  # node ids, sorted
    src: np.ndarray  # indices into ids, self-loops removed
    dst: np.ndarray
    weight: np.ndarray

    def index(self) -> dict:
        return {v: i for i, v in enumerate(self.ids)}

    def proximity(
        self, metric: str, directed: bool, weighted: bool = True, scaling: str = "none", window: int = 2
    ) -> np.ndarray:
        w = self.weight if weighted else np.ones(len(self.src))
        A = dense.transition_matrix(len(self.ids), self.src, self.dst, w, directed=directed)
        M = dense.proximity_from_transition(A, metric, window)
        if scaling == "log":
            W = dense.weight_matrix(len(self.ids), self.src, self.dst, w, directed=directed)
            M = dense.log_scaled(M, W, window)
        return M


def random_graph(n: int = 60, m: int = 220, seed: int = 0, string_ids: bool = True, communities: int = 3) -> SmallGraph:
    """A random graph with some community structure, a few duplicates and self-loops."""
    rng = np.random.default_rng(seed)
    comm = rng.integers(0, communities, n)
    src = rng.integers(0, n, m)
    dst = np.where(rng.random(m) < 0.7, -1, rng.integers(0, n, m))
    for e in np.where(dst < 0)[0]:
        same = np.where(comm == comm[src[e]])[0]
        dst[e] = rng.choice(same)
    weight = np.round(rng.random(m) * 2 + 0.25, 3)
    name = (lambda i: f"v{i:03d}") if string_ids else (lambda i: int(i) * 10 + 1)
    rows = [(name(a), name(b), float(w)) for a, b, w in zip(src, dst, weight)]
    keep = src != dst
    ids = sorted({name(i) for i in range(n)} & ({r[0] for r in rows} | {r[1] for r in rows}))
    pos = {v: i for i, v in enumerate(ids)}
    return SmallGraph(
        rows=rows,
        ids=ids,
        src=np.array([pos[name(a)] for a in src[keep]]),
        dst=np.array([pos[name(b)] for b in dst[keep]]),
        weight=weight[keep],
    )
