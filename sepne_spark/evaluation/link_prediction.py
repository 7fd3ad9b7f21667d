"""Link prediction: held-out edges, sampled non-edges, dot-product scores and their AUC."""
from __future__ import annotations

import bisect
import logging
import math
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from sepne_spark.errors import InputError, SettingError
from sepne_spark.evaluation.pairs import _as_array, _sample_pairs, _uniform, dot_column
from sepne_spark.progress import stage
from sepne_spark.session import checkpoint, holding_checkpoints, release

log = logging.getLogger(__name__)

try:  # Spark is a dependency of the package, but the NumPy half works without it
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import functions as F
except ImportError:  # pragma: no cover
    Column = DataFrame = SparkSession = F = None  # type: ignore[assignment,misc]


# ---------------------------------------------------------------------------
# Link prediction
# ---------------------------------------------------------------------------


def _pair_cols(directed: bool, src: str = "src", dst: str = "dst") -> tuple[Column, Column]:
    if directed:
        return F.col(src), F.col(dst)
    return F.least(src, dst), F.greatest(src, dst)


def split_edges(
    edges_df: DataFrame,
    fraction: float,
    seed: int = 0,
    directed: bool = False,
) -> tuple[DataFrame, DataFrame]:
    """Hold out a seeded random fraction of the edges, keeping every node in training.

    Edges are grouped into pairs: ``(src, dst)`` for a directed graph, the unordered
    ``{src, dst}`` for an undirected one (so both directions and duplicates of an edge
    go to the same side). Each node protects one incident pair, the one with the
    smallest seeded hash: protected pairs always stay in the training graph, so every
    node with an edge (other than a self-loop) keeps one, and its last edge is never
    held out. Each other pair is held out independently with probability ``q``, chosen
    so that ``fraction`` of all pairs is held out in expectation (fewer when too many
    pairs are protected, e.g. in a tree). Self-loops stay in training.

    The hashes depend only on the seed and the node ids (as strings), so the split is
    the same on every partitioning and every run.

    Parameters
    ----------
    edges_df : DataFrame
        Edges with columns ``src``, ``dst`` (and any others, e.g. ``weight``).
    fraction : float
        Fraction of pairs to hold out, in [0, 1).
    seed : int
        Seed of the split.
    directed : bool
        Whether ``(u, v)`` and ``(v, u)`` are different edges.

    Returns
    -------
    train, test : DataFrame
        ``train``: the rows of ``edges_df`` whose pair is kept (all columns);
        ``test``: the held-out pairs, one row each, columns ``(src, dst)`` (for an
        undirected graph ``src <= dst`` as compared by Spark).
    """
    train, test, _ = _split(edges_df, fraction, seed, directed)
    return train, test


def _split(edges_df: DataFrame, fraction: float, seed: int, directed: bool) -> tuple[DataFrame, DataFrame, int]:
    """:func:`split_edges`, and the number of pairs of the graph (self-loops left out),
    which its one counting job finds."""
    if not 0.0 <= fraction < 1.0:
        raise SettingError(f"fraction must be in [0, 1), got {fraction}")
    a, b = _pair_cols(directed)
    keyed = edges_df.withColumn("_a", a).withColumn("_b", b)
    pairs = (
        keyed.where(F.col("_a") != F.col("_b"))
        .select("_a", "_b")
        .distinct()
        .withColumn("_u", _uniform(seed, 11, F.col("_a"), F.col("_b")))
    )
    ends = pairs.select(F.col("_a").alias("_node"), "_u", "_a", "_b").unionByName(
        pairs.select(F.col("_b").alias("_node"), "_u", "_a", "_b")
    )
    protected = (
        ends.groupBy("_node")
        .agg(
            F.min(
                F.struct(
                    "_u",
                    F.col("_a").cast("string").alias("_sa"),  # ties broken by the ids
                    F.col("_b").cast("string").alias("_sb"),
                    "_a",
                    "_b",
                )
            ).alias("_k")
        )
        .select(F.col("_k._a").alias("_a"), F.col("_k._b").alias("_b"))
        .distinct()
    )
    marked = pairs.join(protected.withColumn("_p", F.lit(True)), ["_a", "_b"], "left")
    counts = marked.agg(
        F.count(F.lit(1)).alias("n"), F.count_if(F.col("_p").isNull()).alias("c")
    ).first()
    n_pairs, n_cand = int(counts["n"]), int(counts["c"] or 0)
    candidates = marked.where(F.col("_p").isNull())
    q = min(1.0, fraction * n_pairs / n_cand) if n_cand else 0.0
    if n_cand < fraction * n_pairs:
        log.warning(
            "split_edges: only %d of %d pairs can be held out without isolating a node; "
            "holding out fewer than %.1f%%", n_cand, n_pairs, 100 * fraction,
        )
    held = candidates.where(_uniform(seed, 12, F.col("_a"), F.col("_b")) < F.lit(q)).select("_a", "_b")
    train = keyed.join(held, ["_a", "_b"], "left_anti").drop("_a", "_b")
    test = held.select(F.col("_a").alias("src"), F.col("_b").alias("dst"))
    return train, test, n_pairs


def sample_non_edges(
    edges_df: DataFrame,
    n: int,
    seed: int = 0,
    directed: bool = False,
    nodes_df: DataFrame | None = None,
) -> DataFrame:
    """Sample ``n`` distinct node pairs that are not edges of the graph (seeded).

    Pairs ``(u, v)`` with ``u != v`` are drawn uniformly over the nodes, rejected when
    they are an edge (either direction for an undirected graph), de-duplicated, and the
    ``n`` with the smallest seeded hash are returned: the result is uniform over the
    non-edges, without replacement, and depends only on the data and the seed.

    Parameters
    ----------
    edges_df : DataFrame
        Edges ``(src, dst, ...)`` of the full graph.
    n : int
        Number of non-edges to return.
    seed : int
        Seed of the sample.
    directed : bool
        Whether ``(u, v)`` and ``(v, u)`` are different pairs; for an undirected graph
        the pairs are returned with ``src <= dst`` (as compared by Spark).
    nodes_df : DataFrame, optional
        ``id`` column of the nodes to draw from; by default the edges' endpoints.

    Returns
    -------
    DataFrame
        ``(src, dst)``, ``n`` rows.
    """
    if int(n) < 0:
        raise SettingError(f"n must be at least 0; got {n}")
    if nodes_df is None:
        nodes_df = edges_df.select(F.col("src").alias("id")).unionByName(edges_df.select(F.col("dst").alias("id")))
    a, b = _pair_cols(directed)
    excl = edges_df.select(a.alias("src"), b.alias("dst")).where(F.col("src") != F.col("dst")).distinct()
    return _sample_pairs(nodes_df.select("id"), excl, int(n), seed, directed=directed, allow_self=False)


def auc(pos_scores: Sequence[float] | np.ndarray, neg_scores: Sequence[float] | np.ndarray) -> float:
    """Area under the ROC curve: the Mann-Whitney statistic, ties counting one half.

    ``AUC = P(s_pos > s_neg) + 1/2 P(s_pos == s_neg)`` over all positive/negative pairs.
    """
    pos = np.asarray(pos_scores, dtype=np.float64).ravel()
    neg = np.asarray(neg_scores, dtype=np.float64).ravel()
    if pos.size == 0 or neg.size == 0:
        raise InputError("need at least one positive and one negative score")
    for name, scores in (("pos_scores", pos), ("neg_scores", neg)):
        bad = np.flatnonzero(np.isnan(scores))
        if bad.size:
            raise InputError(f"{name} holds {bad.size} NaN score(s), e.g. at {', '.join(map(str, bad[:3]))}: "
                             "a NaN has no rank")
    ranks = rankdata(np.concatenate([pos, neg]), method="average")
    u = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0
    return float(u / (pos.size * neg.size))


#: Scores per range that :func:`auc_spark` aims at (one pandas frame per range in a task).
AUC_RANGE_ROWS = 1_000_000
#: At most this many ranges.
AUC_MAX_RANGES = 4096


def _range_index(score: Column, cuts: list[float]) -> Column:
    """How many of the sorted ``cuts`` lie below ``score``, by a balanced tree of
    comparisons: log2(len(cuts)) of them per row. Equal scores share a range."""
    def below(lo: int, hi: int) -> Column:  # score is above cuts[:lo] and not above cuts[hi:]
        if lo == hi:
            return F.lit(lo)
        mid = (lo + hi) // 2
        return F.when(score > F.lit(float(cuts[mid])), below(mid + 1, hi)).otherwise(below(lo, mid))

    return below(0, len(cuts))


def _range_u(frame: pd.DataFrame) -> pd.DataFrame:
    """One range's positives, negatives and Mann-Whitney U (ties one half)."""
    pos = frame["_l"].to_numpy() == 1.0
    p, q = int(pos.sum()), int((~pos).sum())
    u = 0.0
    if p and q:
        u = float(rankdata(frame["_s"].to_numpy(), method="average")[pos].sum() - p * (p + 1) / 2.0)
    return pd.DataFrame({"_b": [int(frame["_b"].iloc[0])], "p": [float(p)], "q": [float(q)], "u": [u]})


def auc_spark(scored: DataFrame, score_col: str = "score", label_col: str = "label",
              buckets: int | None = None) -> float:
    """Mann-Whitney AUC of a DataFrame of scores and 0/1 labels, computed by Spark.

    Exact, ties counting one half, and distributed: the scores are cut into ``buckets``
    ranges at approximate quantiles and each range is ranked in one pandas frame
    (``applyInPandas``), which gives the pairs its positives win within it; one row per
    range reaches the driver, which adds the pairs won across ranges. A score that
    holds more than a range's share of the rows (a cut that repeats, such as the 0 of
    zero vectors) is counted apart, by value, so no frame holds much more than its
    share. Rows with a null or NaN score are ignored (NaN ones with a warning). Pass
    ``scored`` persisted or checkpointed: it is read three or four times (a count, the
    quantiles, the ranges, and the shared scores when there are any).

    Parameters
    ----------
    scored : DataFrame
        Rows with a score and a label, 1 (or true) for the positives and 0 (false) for
        the negatives.
    score_col, label_col : str
        Their columns.
    buckets : int, optional
        Score ranges; by default one per :data:`AUC_RANGE_ROWS` scores (at most
        :data:`AUC_MAX_RANGES`).

    Raises
    ------
    InputError
        Labels other than 0 and 1, or no positive or no negative score (a ``ValueError``).
    """
    rows = scored.where(F.col(score_col).isNotNull()).select(
        F.col(score_col).cast("double").alias("_s"), F.col(label_col).cast("double").alias("_l"))
    counts = rows.agg(F.count(F.lit(1)).alias("n"), F.sum(F.isnan("_s").cast("long")).alias("nan"),
                      F.sum((F.col("_l").isNull() | ~F.col("_l").isin(0.0, 1.0)).cast("long")).alias("bad")).first()
    if counts["bad"]:
        raise InputError(f"{counts['bad']} of the {counts['n']} scored rows have a label other than 0 and 1 "
                         f"in column {label_col!r} (1 marks the positives, 0 the negatives)")
    if counts["nan"]:
        log.warning("%d of the %d scores are NaN and left out of the AUC", counts["nan"], counts["n"])
        rows = rows.where(~F.isnan("_s"))
    if buckets is None:
        buckets = -(-(int(counts["n"]) - int(counts["nan"] or 0)) // AUC_RANGE_ROWS)
    buckets = min(max(int(buckets), 1), AUC_MAX_RANGES)
    quantiles = rows.stat.approxQuantile("_s", [i / buckets for i in range(1, buckets)], 0.001) \
        if buckets > 1 else []
    cuts = sorted(set(quantiles))
    shared = sorted({c for c in quantiles if quantiles.count(c) > 1})
    ranged = rows.where(~F.col("_s").isin(*shared)) if shared else rows
    # (position, kind, positives, negatives, pairs won within): ranges by their index,
    # each shared score right after the range of the scores below it.
    parts = [(r["_b"], 0, r["p"], r["q"], r["u"]) for r in ranged.withColumn(
        "_b", _range_index(F.col("_s"), cuts)).groupBy("_b").applyInPandas(
        _range_u, "_b int, p double, q double, u double").collect()]
    if shared:
        for r in rows.where(F.col("_s").isin(*shared)).groupBy("_s").agg(
                F.sum("_l").alias("p"), F.sum(1.0 - F.col("_l")).alias("q")).collect():
            parts.append((bisect.bisect_left(cuts, r["_s"]), 1, r["p"], r["q"], 0.5 * r["p"] * r["q"]))
    parts.sort()
    p_all = sum(part[2] for part in parts)
    q_all = sum(part[3] for part in parts)
    if not p_all or not q_all:
        raise InputError("need at least one positive and one negative score")
    u, below = 0.0, 0.0
    for _, _, p, q, within in parts:  # every positive also beats the negatives of what comes before
        u += within + p * below
        below += q
    return float(u / (p_all * q_all))


def score_pairs(
    pairs: DataFrame,
    embeddings: DataFrame,
    directed: bool = True,
    embedding_col: str = "embedding",
    context_col: str = "context",
) -> DataFrame:
    """Dot-product scores of node pairs.

    Adds ``score_ec`` = ``embedding_u . context_v`` (null without a context column) and
    ``score_ee`` = ``embedding_u . embedding_v``. For an undirected graph ``score_ec``
    is symmetrised: ``(embedding_u . context_v + embedding_v . context_u) / 2``. A pair
    with a node that has no embedding row gets null scores.

    Parameters
    ----------
    pairs : DataFrame
        ``(src, dst, ...)``.
    embeddings : DataFrame
        ``(id, embedding[, context])``.
    directed : bool
        Whether the graph is directed.

    Returns
    -------
    DataFrame
        ``pairs`` with the two score columns.
    """
    has_ctx = context_col in embeddings.columns
    cols = [F.col("id"), _as_array(embeddings, embedding_col).alias("e")]
    if has_ctx:
        cols.append(_as_array(embeddings, context_col).alias("c"))
    emb = embeddings.select(*cols)
    u = emb.select(*[F.col(c).alias(f"_u{c}") for c in emb.columns])
    v = emb.select(*[F.col(c).alias(f"_v{c}") for c in emb.columns])
    out = pairs.join(u, pairs["src"] == u["_uid"], "left").join(v, pairs["dst"] == v["_vid"], "left")
    out = out.withColumn("score_ee", dot_column("_ue", "_ve"))
    if has_ctx:
        ec = dot_column("_ue", "_vc")
        if not directed:
            ec = (ec + dot_column("_ve", "_uc")) / 2.0
        out = out.withColumn("score_ec", ec)
    else:
        out = out.withColumn("score_ec", F.lit(None).cast("double"))
    return out.drop(*[c for c in out.columns if c.startswith("_u") or c.startswith("_v")])


def link_prediction(
    spark: SparkSession,
    edges_df: DataFrame,
    fit_embed: Callable[[DataFrame], DataFrame],
    fraction: float = 0.1,
    seed: int = 0,
    directed: bool = False,
) -> dict[str, Any]:
    """Link-prediction AUC of an embedding method.

    Holds out ``fraction`` of the edges (:func:`split_edges`), embeds the training
    graph with ``fit_embed``, samples as many non-edges of the full graph as there are
    held-out edges (:func:`sample_non_edges`), scores both sets with
    :func:`score_pairs` and reports the AUC of each score (:func:`auc_spark`). Pairs
    with a node that ``fit_embed`` did not embed are left out of the AUC and counted.

    Parameters
    ----------
    spark : SparkSession
        The session (used for the empty-result checks and kept for symmetry with jobs).
    edges_df : DataFrame
        The full graph ``(src, dst[, weight])``.
    fit_embed : callable
        ``fit_embed(train_edges_df) -> DataFrame(id, embedding[, context])``.
    fraction : float
        Fraction of the edges held out, in (0, 1).
    seed : int
        Seed of the split and of the negative sample.
    directed : bool
        Whether the graph is directed.

    Returns
    -------
    dict
        ``auc_embedding_context`` (``embedding_u . context_v``; None without context
        vectors), ``auc_embedding_embedding`` (``embedding_u . embedding_v``),
        ``n_train_edges`` (the training graph's pairs, counted as ``n_test_edges`` is:
        an undirected pair once, whatever its rows, self-loops left out),
        ``n_train_rows`` (the rows of ``edges_df`` that ``fit_embed`` receives),
        ``n_test_edges``, ``n_negative``, ``n_test_missing`` and
        ``n_negative_missing`` (pairs left out for lack of an embedding), ``fraction``,
        ``seed``, ``directed``.
    """
    if not 0.0 < fraction < 1.0:  # split_edges takes 0 (nothing held out); a score needs held-out edges
        raise SettingError(f"link_prediction: fraction must be in (0, 1), got {fraction}")
    session = edges_df.sparkSession  # everything runs on the DataFrames' own session
    del spark
    with stage(session, "split", f"holding out {fraction:g} of the edges, seed {seed}") as st:
        train, test, n_pairs = _split(edges_df, fraction, seed, directed)
        n_test = int(test.count())
        st.count(held_out=int(n_test))
    if n_test == 0:
        raise InputError("no edge could be held out: every edge is the last one of one of its nodes (a tree, a "
                         "star or a graph this small); link prediction needs a graph with cycles")
    try:  # the negatives' seed: another one than the split's, within a long
        with stage(session, "negatives", f"{n_test:,} sampled non-edges, as many as the held-out edges") as st:
            negatives = sample_non_edges(edges_df, n_test, seed=(seed + 1) % 2**63, directed=directed)
            st.count(non_edges=int(n_test))
    except ValueError as exc:  # a graph too dense for as many non-edges as held-out edges
        if getattr(exc, "available", None) == 0:
            raise InputError("link prediction: the graph has no non-edge (every pair of its nodes is joined), so "
                             "there is nothing to score the held-out edges against") from None
        raise InputError(f"link prediction: {exc} (non-edges as many as the held-out edges; the graph is too "
                         "dense for --fraction; give a smaller one)") from None
    embeddings = fit_embed(train)
    # A Spark Connect 3.5 client counts in NumPy integers, which JSON would write as strings.
    n_train, n_train_rows = n_pairs - int(n_test), int(train.count())  # a held-out pair leaves with all its rows
    pairs = test.select("src", "dst", F.lit(1).alias("label")).unionByName(
        negatives.select("src", "dst", F.lit(0).alias("label"))
    )
    held: list = []  # what stands in for the checkpoint where Spark Connect has none, removed after
    with stage(session, "auc", f"the scores of {n_test:,} held-out edges and as many non-edges, and their AUC"), \
            holding_checkpoints(held):
        try:
            scored = score_pairs(pairs, embeddings, directed=directed)
            scored = checkpoint(scored)
            miss = scored.where(F.col("score_ee").isNull()).groupBy("label").count().collect()
            missing = {int(r["label"]): int(r["count"]) for r in miss}
            has_ctx = "context" in embeddings.columns
            auc_ec = auc_spark(scored, "score_ec") if has_ctx else None
            auc_ee = auc_spark(scored, "score_ee")
        finally:
            release(held)
    result: dict[str, Any] = {
        "auc_embedding_context": auc_ec,
        "auc_embedding_embedding": auc_ee,
        "n_train_edges": n_train,
        "n_train_rows": n_train_rows,
        "n_test_edges": int(n_test),
        "n_negative": int(n_test),
        "n_test_missing": missing.get(1, 0),
        "n_negative_missing": missing.get(0, 0),
        "fraction": float(fraction),
        "seed": int(seed),
        "directed": bool(directed),
    }
    if missing:
        log.warning("link prediction: %d held-out and %d negative pairs have a node without an embedding "
                    "and are left out", result["n_test_missing"], result["n_negative_missing"])
    if n_test < FEW_PAIRS:
        log.warning("link prediction: the AUC rests on %d held-out edges and as many non-edges; on so few pairs "
                    "an AUC of chance (0.5) spreads by +/- %.2f (one standard deviation): hold out more "
                    "(--fraction) or use a larger graph", n_test, chance_auc_spread(int(n_test)))
    return result


#: Fewer held-out edges than this: the AUC is reported with a warning of its spread.
FEW_PAIRS = 100


def chance_auc_spread(n: int) -> float:
    """The standard deviation of the AUC of random scores on ``n`` positive and ``n``
    negative pairs (the Mann-Whitney statistic's under no difference):
    sqrt((2n + 1) / (12 n^2))."""
    return math.sqrt((2 * n + 1) / (12 * n * n)) if n > 0 else float("nan")
