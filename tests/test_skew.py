"""Skew: a giant community, a hub, sets of very unequal size. Every set stays bounded.

The per-set solve holds one set's rows: at most n_i node rows, nnz(M_ii) <= n_i^2
entries of M_ii and 4 k n_i landmark entries (M_i0, M_0i and the two-hop sums), so a
task's memory follows the set size, not a node's degree or a community's size.
``benchmarks/skew.py`` runs the same checks with a million-edge hub.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
from pyspark.sql import functions as F

from sepne_spark.model import SepNE
from sepne_spark.partition import pack_communities


def test_giant_community_is_split_and_small_ones_packed(spark):
    rows = [(f"g{i}", "giant") for i in range(1000)] + [(f"s{c}-{i}", f"small{c}") for c in range(50) for i in range(3)]
    labels = spark.createDataFrame(rows, "id string, label string")
    packed = pack_communities(labels, set_size=100, seed=1)
    # The giant community's nodes are ranked in ranges of its hash (a window by label and
    # range), not all in one task (a window by label alone).
    plan = packed._jdf.queryExecution().executedPlan().toString()
    assert re.search(r"row_number\(\) windowspecdefinition\(label#\d+L?, range#", plan), plan
    sets = packed.toPandas()
    assert sorted(sets["id"]) == sorted(r[0] for r in rows)  # every node once
    sizes = sets.groupby("set_id").size()
    assert sizes.max() <= 100 and sizes.min() >= 50  # the giant community became ten sets
    giant_sets = sets[sets["id"].str.startswith("g")]["set_id"].nunique()
    assert giant_sets == 10


def test_many_small_communities_fill_every_set_but_the_last(spark):
    """Thousands of small communities, spread over the offset buckets: the sets are cut
    every set_size nodes (all full but the last), a community is split only where it
    straddles a cut, and the packing does not depend on the input's partitioning."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 9, size=3000)
    rows = [(f"c{c}-{i}", int(c)) for c in range(len(sizes)) for i in range(sizes[c])]
    labels = spark.createDataFrame(rows, "id string, label long")
    sets = pack_communities(labels, set_size=50, seed=3).toPandas()
    assert sorted(sets["id"]) == sorted(r[0] for r in rows)
    per_set = sets.groupby("set_id").size().sort_index()
    assert list(per_set.index) == list(range(math.ceil(len(rows) / 50)))
    assert (per_set.iloc[:-1] == 50).all() and 0 < per_set.iloc[-1] <= 50
    community = sets["id"].str.split("-").str[0]
    split = (sets.groupby(community)["set_id"].nunique() > 1).sum()
    assert split <= len(per_set) - 1  # only at the cuts
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    try:
        again = pack_communities(labels.repartition(7), set_size=50, seed=3)
        # No window over a single partition: every ordering runs by bucket
        assert "SinglePartition" not in again._jdf.queryExecution().executedPlan().toString()
        assert dict(again.select("id", "set_id").collect()) == dict(zip(sets["id"], sets["set_id"]))
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def test_many_large_communities_without_a_broadcast_get_the_same_sets(spark, monkeypatch):
    """Over :data:`BROADCAST_LARGE_COMMUNITIES` large communities, their offsets reach the
    nodes by a shuffled join instead of a broadcast: the same sets, numbered after the
    small communities' without a gap, none over set_size, none under half of it."""
    from sepne_spark import partition

    rng = np.random.default_rng(5)
    sizes = np.concatenate([rng.integers(21, 90, size=40), rng.integers(1, 20, size=60)])
    rows = [(f"c{c}-{i}", int(c)) for c in range(len(sizes)) for i in range(sizes[c])]
    labels = spark.createDataFrame(rows, "id string, label long")
    def label_joins(df) -> str:
        plan = df._jdf.queryExecution().executedPlan().toString()
        return " ".join(re.findall(r"(\w+Join) \[label#\d+L?\]", plan))

    broadcast = pack_communities(labels, set_size=20, seed=2)
    assert label_joins(broadcast).count("BroadcastHashJoin") == 2  # the offsets, once per read
    expected = dict(broadcast.select("id", "set_id").collect())
    monkeypatch.setattr(partition, "BROADCAST_LARGE_COMMUNITIES", 39)
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        shuffled = pack_communities(labels, set_size=20, seed=2)
        assert "BroadcastHashJoin" not in label_joins(shuffled)
        got = dict(shuffled.select("id", "set_id").collect())
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)
    assert got == expected and sorted(got) == sorted(r[0] for r in rows)
    per_set = pd.Series(got).value_counts()
    assert sorted(per_set.index) == list(range(len(per_set)))
    large = {f"c{c}" for c in range(40)}
    in_large = pd.Series({i: s for i, s in got.items() if i.split("-")[0] in large})
    assert per_set.max() <= 20 and per_set[in_large.unique()].min() >= 10
    assert in_large.min() == math.ceil(sum(sizes[40:]) / 20)  # the large communities' sets come last
    assert in_large.nunique() == sum(math.ceil(n / 20) for n in sizes[:40])


def test_the_largest_seeds_hash_without_overflow(spark):
    """Seeds up to 2^63 - 1 are valid; the hashes' seeds derived from them wrap instead
    of overflowing Spark's long (the largest seeds failed at the first action)."""
    from sepne_spark.blocks import BlockGraph
    from sepne_spark.partition import hash_seed, random_partition

    assert hash_seed(5, 7919) == 7924 and hash_seed(2**63 - 1, 1) == -(2**63)
    nodes = spark.range(50).select(F.col("id").cast("string").alias("id"))
    labels = nodes.select("id", (F.col("id").cast("long") % 3).alias("label"))
    assert random_partition(nodes, 10, seed=2**63 - 1).count() == 50
    assert pack_communities(labels, 10, seed=2**63 - 1).count() == 50
    entries = spark.createDataFrame([(str(i), str((i + 1) % 50), 1.0) for i in range(50)],
                                    "src string, dst string, value double")
    assert BlockGraph.build(nodes, entries, blocks=2, seed=2**63 - 1).index.count() == 50


def test_hub_with_many_edges_and_unequal_sets_stay_bounded(spark):
    leaves = 10_000
    star = spark.range(leaves).select(F.lit("hub").alias("src"), F.concat(F.lit("n"), F.col("id").cast("string")).alias("dst"))
    ring = spark.range(leaves).select(
        F.concat(F.lit("n"), F.col("id").cast("string")).alias("src"),
        F.concat(F.lit("n"), ((F.col("id") + 1) % leaves).cast("string")).alias("dst"),
    )
    edges = star.unionByName(ring)
    model = SepNE(dim=8, landmarks=16, metric="I+A", lam=50.0, eta=1.0, iters=5, setSize=40, seed=2).fit(edges)
    assert "hub" in model.landmark_ids
    # IO: the hub (a landmark, with a row of 10,000 entries) and 45 nodes in sets of ~40.
    wanted = spark.createDataFrame([("hub",)] + [(f"n{i * 211}",) for i in range(45)], "id string")
    out = model.transform(wanted).toPandas()
    assert len(out) == 46
    assert np.isfinite(np.vstack(out["embedding"].to_numpy())).all()
    assert out.loc[out["id"] == "hub", "is_landmark"].item()
    # The requested nodes that are not landmarks are cut into ceil(n / setSize) sets, so
    # each set's solve holds at most setSize nodes whatever the hub's degree; the
    # landmarks (the hub among them) are in no set.
    others = out[~out["is_landmark"]]
    n_sets = math.ceil(len(others) / 40)
    assert len(others) >= 40 and n_sets >= 2  # more than one set, or nothing is being cut
    assert model.plan["setup"] == "IO"
    sizes = others.groupby("set_id").size()
    assert len(sizes) == n_sets and sizes.max() <= 40
    assert (out.loc[out["is_landmark"], "set_id"] == -1).all()
