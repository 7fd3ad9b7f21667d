"""The per-set blocks formed in a set's task, against the dense matrices (no Spark)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sepne_spark.set_stage import L_COL, L_ROW, M_COL, M_ROW, NODE, set_blocks
from tests.helpers import random_graph


def records(M: np.ndarray, ids: list, L: list, Vi: np.ndarray) -> pd.DataFrame:
    """The rows ``set_records`` gives set ``Vi`` (set 7), made from the dense M."""
    lm = set(L)
    rows = [(NODE, ids[u], ids[u], None, 0.0) for u in Vi]
    out_nbrs, in_nbrs = set(), set()
    for u in Vi:
        for v in np.flatnonzero(M[u]):
            rows.append((M_ROW, ids[u], ids[v], None, M[u, v]))
            out_nbrs.add(v)
        for v in np.flatnonzero(M[:, u]):
            rows.append((M_COL, ids[u], ids[v], None, M[v, u]))
            in_nbrs.add(v)
    for kind, nbrs, entry in ((L_ROW, out_nbrs, lambda v, l: M[L[l], v]), (L_COL, in_nbrs, lambda v, l: M[v, L[l]])):
        for v in sorted(nbrs - lm):
            rows += [(kind, ids[v], ids[v], l, entry(v, l)) for l in range(len(L)) if entry(v, l) != 0]
    pdf = pd.DataFrame(rows, columns=["kind", "u", "v", "l", "val"])
    pdf.insert(0, "set_id", 7)
    return pdf


@pytest.mark.parametrize("metric", ["I+A", "A+A2"])
@pytest.mark.parametrize("string_ids", [True, False])
def test_set_blocks_equal_the_dense_blocks_in_any_row_order(metric, string_ids):
    g = random_graph(n=70, m=300, seed=5, string_ids=string_ids)
    M = g.proximity(metric, directed=True)
    n = M.shape[0]
    L = list(range(0, n, 7))
    nl = np.setdiff1d(np.arange(n), L)
    Vi = nl[5:25]
    pdf = records(M, g.ids, L, Vi)
    assert pdf["l"].isna().any()  # as from Arrow: l is null on rows other than L_ROW / L_COL
    b = set_blocks(pdf, pd.Index([g.ids[l] for l in L]))

    assert list(b.nodes) == [g.ids[u] for u in Vi]
    M0nl, Mnl0 = M[np.ix_(L, nl)], M[np.ix_(nl, L)]
    expected = dict(
        M_ii=M[np.ix_(Vi, Vi)], M_i0=M[np.ix_(Vi, L)], M_0i=M[np.ix_(L, Vi)],
        Rhat_A=M0nl @ M[np.ix_(Vi, nl)].T, Rhat_B=Mnl0.T @ M[np.ix_(nl, Vi)],
    )
    for name, want in expected.items():
        got = getattr(b, name)
        got = got.toarray() if hasattr(got, "toarray") else got
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14 * max(1.0, np.abs(want).max()), err_msg=name)
    assert np.abs(b.Rhat_A).sum() > 0 and np.abs(b.Rhat_B).sum() > 0

    # Spark delivers a set's rows in an order that varies between runs: the blocks do not.
    for seed in range(3):
        shuffled = set_blocks(pdf.sample(frac=1, random_state=seed), pd.Index([g.ids[l] for l in L]))
        for name in expected:
            a, c = getattr(b, name), getattr(shuffled, name)
            a, c = (a.toarray(), c.toarray()) if hasattr(a, "toarray") else (a, c)
            assert np.array_equal(a, c), name
