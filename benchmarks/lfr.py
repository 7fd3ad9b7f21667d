"""LFR benchmark graphs (Lancichinetti, Fortunato and Radicchi 2008) for the benchmarks.

Power-law degrees and power-law community sizes, drawn by NetworkX's
``LFR_benchmark_graph`` (NetworkX is needed by this module only: ``pip install
networkx``). Unlike the stochastic block models of :mod:`sepne_spark.generators`, the
communities differ in size by a factor of ten, as real ones do.
"""
from __future__ import annotations

import numpy as np


def lfr_edges_numpy(nodes: int, communities: int, avg_degree: float, mixing: float,
                    seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``src, dst`` (each undirected edge once, no self-loop) and a community label per
    node of an LFR graph: degree exponent 2.5, community-size exponent 1.5, sizes from
    ``s`` to ``10 s`` with ``s`` chosen so that about ``communities`` communities hold
    the nodes (a size law of exponent 1.5 on [s, 10 s] has mean 3.16 s), degrees up to
    the largest community's size (a node's neighbours inside its community must fit in
    it) and at most 50 times the mean; ``mixing`` is the share of a node's edges that
    leave its community."""
    try:
        import networkx as nx
    except ImportError:
        raise SystemExit("LFR graphs need NetworkX: pip install networkx") from None

    smallest = max(10, round(nodes / (3.16 * communities)))
    G = nx.LFR_benchmark_graph(nodes, 2.5, 1.5, mixing, average_degree=avg_degree,
                               max_degree=int(min(10 * smallest, 50 * avg_degree)), min_community=smallest,
                               max_community=10 * smallest, seed=seed,
                               max_iters=20_000)  # draws of community sizes until they sum to exactly n
    label = np.empty(nodes, dtype=np.int64)
    by_first = {min(G.nodes[v]["community"]): G.nodes[v]["community"] for v in G}
    for j, first in enumerate(sorted(by_first)):
        label[list(by_first[first])] = j
    pairs = np.array([(u, v) for u, v in G.edges() if u != v], dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1], label
