"""The graph model: a canonical edge list, its vertices, and the neighbourhood queries.

:func:`prepare_graph` canonicalises a raw edge list (from
:func:`sepne_spark.reading.read_edges` or any DataFrame ``src, dst[, weight]``) into a
:class:`Graph`: merged duplicates, both directions of an undirected edge, self-loops
dropped or kept, the vertex table. :func:`load_graph` reads and canonicalises in one
call. :func:`incident_ends` and :func:`rows_of` answer questions about a few nodes from
the input edges alone, without canonicalising the whole graph (the IO path).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sepne_spark.errors import InputError, RequestedIdsError, SettingError, UnknownParamError, check_choice
from sepne_spark.reading import read_edges
from sepne_spark.session import pinned

log = logging.getLogger(__name__)

__all__ = ["DUPLICATE_POLICIES", "SELF_LOOP_POLICIES", "Graph", "count_edges", "incident_ends",
           "load_graph", "prepare_graph", "requested_ids", "rows_of"]

DUPLICATE_POLICIES = ("sum", "max")
SELF_LOOP_POLICIES = ("drop", "keep")


@dataclass
class Graph:
    """A canonical edge list and its vertices.

    Attributes
    ----------
    edges : DataFrame
        Columns ``src``, ``dst`` (the id type of the input) and ``weight`` (double): a
        directed edge list without repeated ``(src, dst)`` pairs. An undirected graph
        holds both directions of every edge (a kept self-loop once).
    vertices : DataFrame
        Column ``id``: every node that appears in the input, including nodes whose only
        edge was a dropped self-loop.
    directed : bool
        Whether the input was read as a directed graph.
    bad_lines : int
        Number of bad input lines (or Parquet rows) that were skipped; 0 under the
        ``"fail"`` policy.
    raw : DataFrame, optional
        The edges as read (``src``, ``dst``, ``weight``), before canonicalisation: with
        it, the rows of a few nodes can be canonicalised on their own (see
        :func:`rows_of`) without merging the edges of the whole graph.
    duplicates, self_loops : str
        The policies that turned ``raw`` into ``edges``.
    input_rows : int, optional
        Valid edge lines (rows) of the input, when the reader counted them
        (:func:`load_graph`): it bounds the nodes (at most twice as many) without a job.
    input_self_loops : int, optional
        How many of those are self-loops ``(u, u)``, when the reader counted them.
    counted : dict
        Sizes counted from ``edges`` once for the stages that need them (not a
        constructor argument).
    """

    edges: DataFrame
    vertices: DataFrame
    directed: bool
    bad_lines: int = 0
    raw: DataFrame | None = None
    duplicates: str = "sum"
    self_loops: str = "drop"
    input_rows: int | None = None
    input_self_loops: int | None = None
    #: Sizes counted from ``edges`` once, for every stage that needs them (the degree
    #: counts of ``sepne_spark.pipeline``); not part of the graph's identity.
    counted: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)


#: How the error that :func:`prepare_graph` raises inside a plan for a bad row begins.
BAD_ROW = "the edge list DataFrame has a bad row: "
#: Why a graph with nodes and no edge is refused (its nodes' only edges were dropped
#: self-loops, or every edge has weight 0).
NO_EDGES = ("the graph has no edges: the edge list is empty, or holds only dropped self-loops and edges of "
            "weight 0")


def prepare_graph(
    raw_edges: DataFrame,
    directed: bool,
    *,
    duplicates: str = "sum",
    self_loops: str = "drop",
    bad_lines: int = 0,
    input_rows: int | None = None,
    input_self_loops: int | None = None,
    check: bool = True,
) -> Graph:
    """Canonicalise a raw edge list into a :class:`Graph`.

    For an undirected graph ``(u, v)`` and ``(v, u)`` are the same edge: both are put
    in a canonical order (smaller id first), repeated edges are merged, and then both
    directions are added (a kept self-loop appears once). For a directed graph repeated
    ``(src, dst)`` pairs are merged. The vertices are all endpoints of the input,
    including nodes whose only edge is a dropped self-loop.

    Parameters
    ----------
    raw_edges : DataFrame
        Columns ``src``, ``dst`` (ids of one type, no nulls) and optionally ``weight``
        (non-negative numbers; 1.0 when absent), e.g. from :func:`read_edges`.
    directed : bool
        Whether ``(u, v)`` and ``(v, u)`` are different edges.
    duplicates : {"sum", "max"}, default "sum"
        How the weights of repeated edges are merged.
    self_loops : {"drop", "keep"}, default "drop"
        Whether edges ``(u, u)`` are removed.
    bad_lines : int, default 0
        Number of skipped input lines, recorded in :attr:`Graph.bad_lines`.
    input_rows : int, optional
        Number of valid input lines (rows), recorded in :attr:`Graph.input_rows`.
    input_self_loops : int, optional
        How many of them are self-loops, recorded in :attr:`Graph.input_self_loops`.
    check : bool, default True
        Check every row as part of the plan (no extra pass): a null or empty id, or a
        null, negative, NaN or infinite weight, fails the first action with an error
        that names the row (the estimator turns it into :class:`InputError`).
        :func:`load_graph` passes False: its reader has checked the rows already.

    Returns
    -------
    Graph
        Lazy edge and vertex DataFrames.

    Raises
    ------
    SettingError
        For an invalid option value (a ``ValueError``).
    InputError
        For missing columns, ids that are not strings or integers, src and dst of
        different types (integer types of two widths are read as bigint), or a weight
        that is not a number.
    """
    check_choice("duplicates", duplicates, DUPLICATE_POLICIES)
    check_choice("self_loops", self_loops, SELF_LOOP_POLICIES)
    if not isinstance(directed, bool):
        raise SettingError(f"directed must be True or False; got {directed!r}")
    # The columns named src, dst or weight in any case, in one pass over the names.
    # Two of them for one name (weight and Weight) are one name to Spark's default
    # resolution (spark.sql.caseSensitive false): named, not left to fail as an ambiguous
    # reference in a later query. One in another case alone (Weight, SRC) is not read:
    # named rather than taken, or (a weight) silently left out.
    cased = {name: [c for c in raw_edges.columns if c.lower() == name] for name in ("src", "dst", "weight")}
    twice = {name: found for name, found in cased.items() if len(found) > 1}
    if twice and str(raw_edges.sparkSession.conf.get("spark.sql.caseSensitive", "false")).lower() != "true":
        shown = "; ".join(" and ".join(repr(c) for c in found) for found in twice.values())
        extra = [c for found in twice.values() for c in found if c not in twice]
        raise InputError(f"the edge list has columns whose names differ only in case ({shown}), which Spark "
                         f"does not tell apart (spark.sql.caseSensitive is false): drop or rename the one that "
                         f"is not the edges' {' or '.join(twice)}, e.g. df.drop({', '.join(map(repr, extra))})")
    other_case = {name: found[0] for name, found in cased.items() if found and name not in raw_edges.columns}
    if other_case:
        shown = ", ".join(f"{found!r} for {name}" for name, found in other_case.items())
        renames = "".join(f".withColumnRenamed({found!r}, {name!r})" for name, found in other_case.items())
        raise InputError(f"the edge list's column names are read as written, in lower case (src, dst and the "
                         f"optional weight): it has {shown}; rename them: df{renames}")
    missing = [c for c in ("src", "dst") if c not in raw_edges.columns]
    if missing:
        raise InputError(f"the edge list needs columns src and dst; missing {missing} in {raw_edges.columns}")
    types = {f.name: f.dataType for f in raw_edges.schema.fields}
    from pyspark.sql.types import DecimalType, IntegralType, LongType, NumericType, StringType

    def whole(kind: Any) -> bool:  # integers, also as decimals of scale 0 (JDBC, Hive)
        return isinstance(kind, (StringType, IntegralType)) or (isinstance(kind, DecimalType) and kind.scale == 0)

    for name in ("src", "dst"):
        if not whole(types[name]):
            raise InputError(f"the edge list DataFrame's {name} column is {types[name].simpleString()}: node ids "
                             "must be strings or integers (cast it to string or bigint)")
    if "weight" in types and not isinstance(types["weight"], NumericType):
        raise InputError(f"the edge list DataFrame's weight column is {types['weight'].simpleString()}: "
                         "weights must be numbers (cast it, or drop it for weights of 1)")
    if types["src"] != types["dst"] and all(isinstance(types[c], IntegralType) for c in ("src", "dst")):
        # integer ids of two widths (an int column against a bigint one): the same ids, as bigint
        raw_edges = raw_edges.withColumn("src", F.col("src").cast(LongType())).withColumn(
            "dst", F.col("dst").cast(LongType()))
        types["src"] = types["dst"] = LongType()
    if types["src"] != types["dst"]:
        raise InputError(
            f"src ({types['src'].simpleString()}) and dst ({types['dst'].simpleString()}) must have the same type"
        )
    # Under a Spark Connect client before 4.0, one analysis of the input that every query
    # shares: otherwise a text source's persisted descendants are never found again.
    raw_edges = pinned(raw_edges, "sepne_edges")
    weight = F.col("weight").cast("double") if "weight" in raw_edges.columns else F.lit(1.0)
    if check:
        raw_edges = _checked_rows(raw_edges, weight, isinstance(types["src"], StringType))
        weight = F.col("weight")
    src, dst = F.col("src"), F.col("dst")
    if directed:
        e = raw_edges.select(src.alias("src"), dst.alias("dst"), weight.alias("weight"))
    else:
        e = raw_edges.select(
            F.least(src, dst).alias("src"), F.greatest(src, dst).alias("dst"), weight.alias("weight")
        )
    if self_loops == "drop":
        e = e.where(F.col("src") != F.col("dst"))
    from sepne_spark.proximity import ordered_sum  # a fixed order: the same weights every run

    merge = ordered_sum if duplicates == "sum" else F.max
    merged = e.groupBy("src", "dst").agg(merge(F.col("weight").cast("double")).cast("double").alias("weight"))
    if directed:
        edges = merged
    else:
        # Both directions in one pass (no union, so the input is read and shuffled once);
        # a self-loop is its own reverse and appears once.
        both = F.when(
            F.col("src") == F.col("dst"), F.array(F.struct(F.col("src"), F.col("dst")))
        ).otherwise(
            F.array(
                F.struct(F.col("src"), F.col("dst")),
                F.struct(F.col("dst").alias("src"), F.col("src").alias("dst")),
            )
        )
        edges = merged.select(F.explode(both).alias("_e"), "weight").select("_e.src", "_e.dst", "weight")
    # Vertices straight from the input: one pass, one shuffle, self-loop-only nodes kept.
    vertices = raw_edges.select(F.explode(F.array(src, dst)).alias("id")).distinct()
    raw = raw_edges.select(src.alias("src"), dst.alias("dst"), weight.alias("weight"))
    return Graph(
        edges=edges, vertices=vertices, directed=directed, bad_lines=int(bad_lines),
        raw=raw, duplicates=duplicates, self_loops=self_loops,
        input_rows=None if input_rows is None else int(input_rows),
        input_self_loops=None if input_self_loops is None else int(input_self_loops),
    )


def _checked_rows(edges: DataFrame, weight: Column, string_ids: bool) -> DataFrame:
    """``src, dst, weight`` (double) of ``edges``, with the checks that the reader makes
    of a Parquet file's rows (:func:`~sepne_spark.reading.row_reason`) in the plan: a
    row with a null or empty id or a null, negative, NaN or infinite weight fails the
    query with :data:`BAD_ROW` and the row's ends."""
    from sepne_spark.reading import row_problem, row_reason

    src, dst = F.col("src"), F.col("dst")
    reason = row_reason(src, dst, weight, string_ids)

    def shown(c: Column) -> Column:
        return F.coalesce(c.cast("string"), F.lit("null"))

    message = F.concat(F.lit(BAD_ROW), row_problem(reason, weight),
                       F.lit(" (src "), shown(src), F.lit(", dst "), shown(dst), F.lit(")"))
    return edges.select(F.when(reason > 0, F.raise_error(message)).otherwise(src).alias("src"), "dst",
                        weight.alias("weight"))


def incident_ends(graph: Graph, ids: DataFrame) -> DataFrame:
    """The edge ends at ``ids``, read from the input as read (``graph.raw``).

    Returns ``(k, o, into)``: one row per end of an input edge at a node ``k`` of
    ``ids``, ``o`` the other end and ``into`` whether the edge points to ``k`` (a
    self-loop gives two rows). One scan of the input, no shuffle: ``ids`` is broadcast
    (:func:`_marked`), so it must be small (the embedding checks it holds at most
    :data:`sepne_spark.pipeline.BROADCAST_IDS_MAX` ids). The ``k`` found are exactly
    the ``ids`` that are nodes of the graph.
    """
    if graph.raw is None:
        raise ValueError("this Graph holds no raw edges (build it with prepare_graph or load_graph)")
    ends = F.filter(
        F.array(
            F.struct(F.col("src").alias("k"), F.col("dst").alias("o"), F.lit(False).alias("into"),
                     F.col("s_in").alias("keep")),
            F.struct(F.col("dst").alias("k"), F.col("src").alias("o"), F.lit(True).alias("into"),
                     F.col("d_in").alias("keep")),
        ),
        lambda end: end["keep"],
    )
    return _marked(graph.raw, ids).select(F.explode(ends).alias("e")).select("e.k", "e.o", "e.into")


def _marked(raw: DataFrame, ids: DataFrame) -> DataFrame:
    """The rows of ``raw`` with an end in ``ids``, in one scan: two broadcast left joins
    add ``s_in`` and ``d_in`` (whether ``src``, ``dst`` is in ``ids``: true or false)
    to ``raw``'s own columns. Two semi-joins would read the input twice."""
    marks = ids.select("id").distinct().withColumn("in", F.lit(True))
    at_src = F.broadcast(marks.select(F.col("id").alias("src"), F.col("in").alias("s_in")))
    at_dst = F.broadcast(marks.select(F.col("id").alias("dst"), F.col("in").alias("d_in")))
    flagged = raw.join(at_src, "src", "left").join(at_dst, "dst", "left")
    s_in, d_in = F.coalesce("s_in", F.lit(False)), F.coalesce("d_in", F.lit(False))
    return flagged.where(s_in | d_in).select(*raw.columns, s_in.alias("s_in"), d_in.alias("d_in"))


def _key_column(ids: DataFrame, name: str, broadcast: bool) -> DataFrame:
    """The distinct ``id`` of ``ids`` as one column ``name``, broadcast if asked."""
    keys = ids.select(F.col("id").alias(name)).distinct()
    return F.broadcast(keys) if broadcast else keys


def rows_of(graph: Graph, nodes: DataFrame, broadcast: bool = True) -> DataFrame:
    """The canonical out-edges ``(src, dst, weight)`` of ``nodes``, each row complete.

    Equal, row for row and bit for bit, to ``graph.edges`` restricted to ``src`` in
    ``nodes``, but built from the input edges that touch ``nodes`` alone (one scan of
    ``graph.raw`` without a shuffle when ``nodes`` is broadcast, else semi-joins), then the duplicate merge
    and symmetrisation of :func:`prepare_graph` on that part only. Without
    ``graph.raw`` it filters ``graph.edges``.
    """
    as_src = _key_column(nodes, "src", broadcast)
    if graph.raw is None:
        return graph.edges.join(as_src, "src", "left_semi")
    raw = graph.raw
    if graph.directed:
        part = raw.join(as_src, "src", "left_semi")
    elif broadcast:  # every input edge with an end in ``nodes``, once, in one scan
        part = _marked(raw, nodes).select(*raw.columns)
    else:
        # Every input edge with an end in ``nodes``, once: those whose src is there, and
        # those whose dst alone is.
        part = raw.join(as_src, "src", "left_semi").unionByName(
            raw.join(_key_column(nodes, "dst", broadcast), "dst", "left_semi").join(as_src, "src", "left_anti")
        )
    local = prepare_graph(part, graph.directed, duplicates=graph.duplicates, self_loops=graph.self_loops,
                          check=False)
    return local.edges.join(as_src, "src", "left_semi")


def load_graph(
    spark: SparkSession,
    path: str | list[str],
    fmt: str = "auto",
    *,
    directed: bool,
    duplicates: str = "sum",
    self_loops: str = "drop",
    bad_lines: str = "fail",
    **read_options: Any,
) -> Graph:
    """Read an edge list and canonicalise it: :func:`read_edges` then :func:`prepare_graph`.

    Parameters
    ----------
    spark : SparkSession
        Session to read with.
    path : str or list of str
        Input file(s) or directories; see :func:`read_edges`.
    fmt : {"auto", "tsv", "csv", "txt", "parquet"}, default "auto"
        Input format; see :func:`read_edges`.
    directed : bool
        Whether the edges are directed.
    duplicates : {"sum", "max"}, default "sum"
        How repeated edges are merged.
    self_loops : {"drop", "keep"}, default "drop"
        What happens to edges ``(u, u)``.
    bad_lines : {"fail", "skip"}, default "fail"
        Policy for malformed lines.
    **read_options
        ``sep``, ``header``, ``src_col``, ``dst_col``, ``weight_col``, ``comment``;
        see :func:`read_edges`.

    Returns
    -------
    Graph
        The canonical graph, with the number of skipped lines in ``bad_lines``.
    """
    check_choice("duplicates", duplicates, DUPLICATE_POLICIES)
    check_choice("self_loops", self_loops, SELF_LOOP_POLICIES)
    allowed = {"sep", "header", "src_col", "dst_col", "weight_col", "comment"}
    unknown = sorted(set(read_options) - allowed)
    if unknown:
        raise UnknownParamError(f"unknown read option(s) {unknown}; allowed: {sorted(allowed)}")
    counts: dict[str, int] = {}
    raw, skipped = read_edges(spark, path, fmt, bad_lines=bad_lines, counts=counts, **read_options)
    return prepare_graph(raw, directed, duplicates=duplicates, self_loops=self_loops, bad_lines=skipped,
                         input_rows=counts.get("rows"), input_self_loops=counts.get("self_loops"), check=False)


def count_edges(graph: Graph) -> tuple[int, dict[str, int] | None]:
    """The rows of ``graph.edges`` and what canonicalising the input made of its lines:
    one pass over ``graph.edges`` (persist it first to keep it), none over the input
    (the reader counted its lines and self-loops).

    Returns
    -------
    (int, dict or None)
        The edge rows, and ``input_lines``; ``self_loops_dropped``; ``repeats_merged``,
        the lines that repeat an edge already read (for an undirected graph in either
        direction), merged into it by the ``duplicates`` policy; ``edges``, the edges
        left (an undirected edge once). The dict is None when the reader did not count
        (a DataFrame given to :func:`prepare_graph`).
    """
    row = graph.edges.agg(F.count(F.lit(1)).alias("rows"), F.expr("count_if(src = dst)").alias("loops")).first()
    edge_rows, kept_loops = int(row["rows"]), int(row["loops"] or 0)
    if graph.input_rows is None or graph.input_self_loops is None:
        return edge_rows, None
    dropped = graph.input_self_loops if graph.self_loops == "drop" else 0
    edges = edge_rows if graph.directed else (edge_rows - kept_loops) // 2 + kept_loops
    return edge_rows, {"input_lines": graph.input_rows, "self_loops_dropped": dropped,
                       "repeats_merged": graph.input_rows - dropped - edges, "edges": edges}


_MAX_EXAMPLES = 5  # missing ids quoted in a warning or an error


def try_cast(column: str, data_type: Any) -> Column:
    """Column ``column`` cast to ``data_type``, null where a value does not convert.

    ``Column.try_cast`` where PySpark has it (4.0 on), else SQL's ``try_cast`` (Spark 3.5).
    To an integer type a number with a fraction does not convert (Spark's cast would
    drop the fraction, and 402.5 would name node 402).
    """
    from pyspark.sql.types import DoubleType, IntegralType

    def cast(to: Any) -> Column:
        col = F.col(column)
        if hasattr(type(col), "try_cast"):
            return col.try_cast(to)
        return F.expr(f"try_cast(`{column.replace('`', '``')}` AS {to.simpleString()})")

    if not isinstance(data_type, IntegralType):
        return cast(data_type)
    number = cast(DoubleType())
    return F.when(number != F.floor(number), F.lit(None).cast(data_type)).otherwise(cast(data_type))


def check_requested_id_type(ids: DataFrame) -> None:
    """Raise :class:`RequestedIdsError` unless the requested ids' column ``id`` holds
    strings or numbers (a whole number names the node with that integer id): a boolean,
    date or nested column would be cast to ids it does not mean (true as node 1)."""
    from pyspark.sql.types import NumericType, StringType

    if "id" not in ids.columns:
        raise RequestedIdsError(f"the requested ids need a column 'id'; got columns {ids.columns}")
    kind = ids.schema["id"].dataType
    if not isinstance(kind, (StringType, NumericType)):
        raise RequestedIdsError(f"the requested ids' column id is {kind.simpleString()}: node ids are strings or "
                                "integers (cast it to string or bigint)")


def requested_ids(ids: DataFrame, vertices: DataFrame, id_type: Any,
                  counts: dict[str, int] | None = None) -> DataFrame:
    """The requested ids that are nodes of the graph: a DataFrame with column ``id``.

    Parameters
    ----------
    ids : DataFrame
        Column ``id`` of any type; values are converted to ``id_type``, and one that
        does not convert (``"abc"`` for integer ids) is not in the graph.
    vertices : DataFrame
        Column ``id``: the nodes of the graph (:attr:`Graph.vertices`).
    id_type : DataType
        Type of the node ids.
    counts : dict, optional
        Receives ``requested`` (the distinct ids asked for) and ``requested_missing``
        (those that are no node), for a run's record.

    Returns
    -------
    DataFrame
        The distinct requested ids found in ``vertices``, lazy. Those not found are left
        out with a warning giving their number and up to five of them, as written in
        ``ids``. The check is one query, whose one row of counts is all that reaches the
        driver, and when ids are missing a second one for those examples.

    Raises
    ------
    RequestedIdsError
        When ``ids`` is empty or none of its ids is in ``vertices``.
    """
    check_requested_id_type(ids)
    asked = ids.select(F.col("id").alias("asked"), try_cast("id", id_type).alias("id")).distinct()
    found = vertices.select("id", F.lit(True).alias("found"))
    flagged = asked.join(found, "id", "left")
    missing = F.when(F.col("found").isNull(), F.col("asked").cast("string"))
    row = flagged.agg(
        F.count(F.lit(1)).alias("asked"), F.count("found").alias("found"),
        F.sum(F.col("asked").isNull().cast("long")).alias("nulls"),
    ).first()
    n_asked, n_found, nulls = int(row["asked"]), int(row["found"]), int(row["nulls"] or 0)
    if counts is not None:
        counts.update(requested=n_asked, requested_missing=n_asked - n_found)
    if n_asked == 0:
        raise RequestedIdsError("no ids requested: the DataFrame of requested ids is empty")
    if n_found < n_asked:
        # A second query, only when ids are missing: the first few in order (a top few
        # per task, not every missing id through one task; the ids asked are distinct).
        shown = [r["asked"] for r in flagged.where(missing.isNotNull()).select(missing.alias("asked"))
                 .orderBy("asked").limit(_MAX_EXAMPLES).collect()]
        examples = f"e.g. {shown}" if shown else ""
        if nulls:
            examples += (" and " if examples else "") + "a null id"
        if n_asked == 1:
            what = "is null" if nulls else f"{shown[0]!r} is not a node of the graph"
            raise RequestedIdsError(f"the requested id {what}")
        if n_found == 0:
            raise RequestedIdsError(f"none of the {n_asked} requested ids is a node of the graph, {examples}")
        log.warning(
            "%d of the %d requested ids are not nodes of the graph and get no embedding, %s",
            n_asked - n_found, n_asked, examples,
        )
    return flagged.where(F.col("found")).select("id").distinct()


#: The ``kind`` of an edge row and of a node row in :func:`edge_and_node_rows`.
EDGE_ROW, NODE_ROW = 0, 1


def edge_and_node_rows(edges: DataFrame, nodes: DataFrame, edge_columns: dict[str, Column] | None = None,
                       node_columns: dict[str, Column] | None = None) -> DataFrame:
    """Edge rows (``kind`` :data:`EDGE_ROW`, ``a`` = src, ``b`` = dst) and node rows
    (``kind`` :data:`NODE_ROW`, ``a`` = ``b`` = id) in one DataFrame, for a stage that gathers a graph into one
    ``applyInPandas`` task; the other columns by name, the same names on both sides (a
    typed null where a side has none).

    A node row repeats its id in ``b`` rather than leave it null: pandas holds an
    integer column with a null as doubles, which merge 64-bit ids past 2^53."""
    def extra(columns: dict[str, Column] | None) -> list[Column]:
        return [c.alias(name) for name, c in (columns or {}).items()]

    return edges.select(F.lit(EDGE_ROW).alias("kind"), F.col("src").alias("a"), F.col("dst").alias("b"),
                        *extra(edge_columns)).unionByName(
        nodes.select(F.lit(NODE_ROW).alias("kind"), F.col("id").alias("a"), F.col("id").alias("b"),
                     *extra(node_columns)))
