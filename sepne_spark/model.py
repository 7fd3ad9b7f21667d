"""The SepNE estimator and model, in the pyspark.ml shape.

>>> model = SepNE(dim=128, landmarks=200, metric="A+A2").fit(edges)   # doctest: +SKIP
>>> emb = model.transform(edges)          # every node of the graph    # doctest: +SKIP
>>> some = model.transform(ids)           # only the ids asked for (IO) # doctest: +SKIP
>>> model.save("/models/sepne"); SepNEModel.load("/models/sepne")       # doctest: +SKIP

``fit`` does the work that is shared by every set: landmarks, the landmark SVD and the
k x k summaries S_A, S_B. ``transform`` embeds sets of nodes independently; given an
edge list it embeds every node with the configured partition (RP or LP), given a
DataFrame of ``id`` it embeds only those nodes (IO).
"""
from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
from pyspark import keyword_only
from pyspark.ml import Estimator, Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sepne_spark import __version__
from sepne_spark.jobs_common import UserError
from sepne_spark.landmarks import STRATEGIES, select_landmarks
from sepne_spark.partition import SETUPS, lp_partition, random_partition, requested_partition
from sepne_spark.progress import stage
from sepne_spark.reading import incident_ends, rows_of
from sepne_spark.proximity import (
    METRICS,
    SCALINGS,
    Proximity,
    check_window,
    landmark_blocks,
    landmark_summaries,
    metric_text,
    transition,
)
from sepne_spark.set_stage import embed_sets, output_schema, set_records
from sepne_spark.solver import LandmarkFactors, landmark_factors

log = logging.getLogger(__name__)

_MAX_EXAMPLES = 5  # missing ids quoted in a warning or an error


class RequestedIdsError(UserError, ValueError):
    """None of the ids asked for is a node of the graph (or no id was asked for)."""


def _choice(name: str, allowed: tuple[str, ...]):
    def conv(value: Any) -> str:
        value = TypeConverters.toString(value)
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        return value

    return conv


def _positive_int(name: str, minimum: int = 1):
    def conv(value: Any) -> int:
        value = TypeConverters.toInt(value)
        if value < minimum:
            raise ValueError(f"{name} must be >= {minimum}; got {value}")
        return value

    return conv


def _float_at_least(name: str, minimum: float, strict: bool = False):
    def conv(value: Any) -> float:
        value = TypeConverters.toFloat(value)
        if value < minimum or (strict and value == minimum):
            raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}; got {value}")
        return value

    return conv


class _SepNEParams(Params):
    """Parameters shared by :class:`SepNE` and :class:`SepNEModel`."""

    dim = Param(Params._dummy(), "dim", "embedding dimension d", _positive_int("dim"))
    landmarks = Param(Params._dummy(), "landmarks", "number of landmarks k", _positive_int("landmarks"))
    landmarkStrategy = Param(
        Params._dummy(), "landmarkStrategy", f"landmark choice: {', '.join(STRATEGIES)}", _choice("landmarkStrategy", STRATEGIES)
    )
    metric = Param(Params._dummy(), "metric", "proximity M: I+A or A+A2", _choice("metric", METRICS))
    window = Param(
        Params._dummy(), "window",
        "powers of A in M for metric A+A2: M = A + A^2 + ... + A^window (2 to 10; 2 is the paper's A + A^2)",
        _positive_int("window", 2),
    )
    scaling = Param(
        Params._dummy(), "scaling", "element-wise scaling of M: none, or log(max(vol m / (window s_in), 1))",
        _choice("scaling", SCALINGS),
    )
    partition = Param(Params._dummy(), "partition", f"set setup: {', '.join(SETUPS)}", _choice("partition", SETUPS))
    setSize = Param(Params._dummy(), "setSize", "target nodes per set", _positive_int("setSize"))
    lam = Param(Params._dummy(), "lam", "weight lambda of the global terms (>= 0)", _float_at_least("lam", 0.0))
    eta = Param(Params._dummy(), "eta", "ridge regulariser eta (> 0)", _float_at_least("eta", 0.0, strict=True))
    iters = Param(Params._dummy(), "iters", "alternating rounds per set", _positive_int("iters", 0))
    seed = Param(Params._dummy(), "seed", "random seed", TypeConverters.toInt)
    directed = Param(Params._dummy(), "directed", "treat edges as directed", TypeConverters.toBoolean)
    duplicates = Param(Params._dummy(), "duplicates", "merge duplicate edges: sum or max", _choice("duplicates", ("sum", "max")))
    selfLoops = Param(Params._dummy(), "selfLoops", "self-loops: drop or keep", _choice("selfLoops", ("drop", "keep")))
    lpMaxIter = Param(Params._dummy(), "lpMaxIter", "label propagation rounds (LP)", _positive_int("lpMaxIter"))
    dtype = Param(Params._dummy(), "dtype", "float64 or float32 iterations", _choice("dtype", ("float64", "float32")))

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(
            dim=128,
            landmarks=200,
            landmarkStrategy="DD",
            metric="A+A2",
            window=2,
            scaling="none",
            partition="RP",
            setSize=1000,
            lam=0.4,
            eta=0.1,
            iters=100,
            seed=0,
            directed=False,
            duplicates="sum",
            selfLoops="drop",
            lpMaxIter=10,
            dtype="float64",
        )

    def settings(self) -> dict[str, Any]:
        """All parameter values (defaults included) by name."""
        return {p.name: self.getOrDefault(p) for p in self.params}


class SepNE(Estimator, _SepNEParams):
    """Separated Network Embedding estimator.

    ``fit(edges)`` takes an edge list DataFrame with columns ``src``, ``dst`` and an
    optional ``weight`` (ids of any type), or a :class:`sepne_spark.reading.Graph`.
    """

    @keyword_only
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, **kwargs: Any) -> "SepNE":
        return self._set(**self._input_kwargs)

    def _fit(self, dataset: Any) -> "SepNEModel":
        s = self.settings()
        check_window(s["metric"], s["window"])  # before any Spark work
        if s["dim"] > s["landmarks"]:
            raise ValueError(
                f"dim={s['dim']} is more than landmarks={s['landmarks']}: the landmark embedding "
                "has at most as many dimensions as there are landmarks"
            )
        spark = _session_of(dataset)
        graph = _as_graph(dataset, s["directed"], s["duplicates"], s["selfLoops"])
        check_graph_reading(graph, s)  # a Graph read otherwise would be saved under the wrong settings
        for frame in (graph.edges, graph.vertices):  # a caller (the embed job) may have cached them
            if not frame.is_cached:
                frame.persist()
        n_nodes = graph.vertices.count()  # fills the cache that the landmark choice reads
        if s["landmarks"] > n_nodes:
            raise ValueError(f"landmarks={s['landmarks']} is more than the {n_nodes} nodes of the graph")
        timings: dict[str, float] = {}
        with stage(spark, "landmarks", f"{s['landmarks']} by {s['landmarkStrategy']}", timings) as st:
            A = transition(graph.edges).persist()
            prox = Proximity(A, graph.vertices, s["metric"], s["scaling"], graph.edges, s["window"])
            ids = select_landmarks(spark, graph.vertices, graph.edges, s["landmarks"], s["landmarkStrategy"], s["seed"])
            st.count(landmarks=len(ids))
        what = metric_text(s["metric"], s["window"]) + (f", {s['scaling']} scaling" if s["scaling"] != "none" else "")
        with stage(spark, "summaries_svd", f"M00, S_A, S_B of {len(ids)} landmarks, {what}", timings) as st:
            id_type = graph.vertices.schema["id"].dataType
            lm = _landmark_df(spark, ids, id_type)
            blocks = landmark_blocks(prox.rows(lm).persist(), prox.cols(lm).persist(), lm)
            M00, S_A, S_B = landmark_summaries(blocks, lm, len(ids))
            factors = landmark_factors(M00, s["dim"])
            st.count(k=len(ids), d=int(factors.Phi.shape[0]))
        model = SepNEModel(ids, factors, S_A, S_B, id_type)
        self._copyValues(model)
        model._graph = graph
        model._fit_input = dataset
        model._A = A
        model._blocks = blocks
        model.timings = timings
        return model


class SepNEModel(Model, _SepNEParams):
    """A fitted SepNE model: landmark ids, Phi, Psi, P, S_A, S_B and the parameters.

    That is all it needs to embed any node later from that node's own edges and
    two-hop sums, including nodes and edges added after fitting.
    """

    def __init__(
        self,
        landmark_ids: list | None = None,
        factors: LandmarkFactors | None = None,
        S_A: np.ndarray | None = None,
        S_B: np.ndarray | None = None,
        id_type: Any = None,
    ) -> None:
        super().__init__()
        self.landmark_ids = list(landmark_ids or [])
        self.factors = factors
        self.S_A = S_A
        self.S_B = S_B
        self.id_type = id_type
        self._graph = None
        self._A: DataFrame | None = None
        self._blocks = None
        self._fit_input: Any = None
        self.timings: dict[str, float] = {}
        #: what the last :meth:`embed` set up: ``setup`` (RP, LP, IO), ``sets``, ``nodes``
        self.plan: dict[str, Any] = {}

    # -- embedding -------------------------------------------------------------------
    def landmark_embeddings(self, spark: SparkSession) -> DataFrame:
        """Rows of the landmarks: embedding Phi, context Psi (k rows)."""
        Phi, Psi = self.factors.Phi, self.factors.Psi
        rows = [
            (lid, [float(x) for x in Phi[:, j]], [float(x) for x in Psi[:, j]], True, -1)
            for j, lid in enumerate(self.landmark_ids)
        ]
        return spark.createDataFrame(rows, output_schema(self.id_type))

    def _transform(self, dataset: Any) -> DataFrame:
        s = self.settings()
        if isinstance(dataset, DataFrame) and "id" in dataset.columns and "src" not in dataset.columns:
            if self._graph is None:
                raise ValueError("this model holds no graph: pass the edge list with transform(edges) or use embed(ids, edges)")
            return self.embed(dataset, self._graph)
        if dataset is self._fit_input and self._graph is not None:
            return self.embed(None, self._graph)  # the graph it was fitted on: reuse its blocks
        graph = _as_graph(dataset, s["directed"], s["duplicates"], s["selfLoops"])
        return self.embed(None, graph)

    def embeds_locally(self, graph: Any, ids: DataFrame | None = None) -> bool:
        """Whether :meth:`embed` of requested ids reads only their neighbourhood.

        True for M = I + A without scaling, a :class:`~sepne_spark.reading.Graph` that
        keeps its input edges (``raw``: from :func:`~sepne_spark.reading.load_graph`,
        :func:`~sepne_spark.reading.prepare_graph`, or an edge DataFrame), and at most
        :data:`BROADCAST_IDS_MAX` requested ids (counted when ``ids`` is given). Then
        the graph's edges are never merged or counted as a whole: broadcast semi-joins
        of the input (on ``src`` and on ``dst``, no shuffle) keep only the edges at the
        requested nodes, their in-neighbours and the landmarks, so the time follows
        those neighbourhoods and a few scans of the input.
        """
        s = self.settings()
        if s["metric"] != "I+A" or s["scaling"] != "none":
            return False
        if isinstance(graph, _graph_type()) and graph.raw is None:
            return False
        return ids is None or ids.count() <= BROADCAST_IDS_MAX

    def embed(self, ids: DataFrame | None, graph: Any) -> DataFrame:
        """Embed ``ids`` (a DataFrame with column ``id``; None: every node) of ``graph``.

        ``graph`` is an edge-list DataFrame or a :class:`~sepne_spark.reading.Graph`; it
        may hold nodes and edges added after fitting. Landmarks, Phi, Psi, S_A and S_B
        are taken from the model as fitted.

        Requested ids that are not nodes of ``graph`` are left out, with a warning that
        gives their number and a few of them (see :func:`requested_ids`); requested
        landmarks get their landmark rows.

        Raises
        ------
        RequestedIdsError
            A ``ValueError`` (and a ``UserError`` for the jobs) when ``ids`` is empty or
            none of its ids is a node of ``graph``.
        """
        s = self.settings()
        if not isinstance(graph, _graph_type()):
            graph = _as_graph(graph, s["directed"], s["duplicates"], s["selfLoops"])
        else:
            check_graph_reading(graph, s)
        spark = graph.edges.sparkSession
        same = graph is self._graph and self._A is not None
        lm = _landmark_df(spark, self.landmark_ids, self.id_type)
        local = ids is not None and not same and self.embeds_locally(graph, ids)
        setup = "IO" if ids is not None else s["partition"]
        with stage(spark, "partition", f"{setup}, about {s['setSize']} nodes per set", self.timings) as st:
            if local:
                # The requested nodes' edge ends, straight from the input: which ids are
                # nodes, and their in-neighbours, without the graph's vertex list.
                asked = ids.select(F.col("id").try_cast(self.id_type).alias("id")).where(F.col("id").isNotNull())
                ends = incident_ends(graph, asked).localCheckpoint()
                wanted = requested_ids(ids, ends.select(F.col("k").alias("id")).distinct(), self.id_type)
            elif ids is not None:
                wanted = requested_ids(ids, graph.vertices, self.id_type)
            if ids is not None:
                targets = wanted.join(lm.select("id"), "id", "left_anti")
                assign = requested_partition(targets, s["setSize"], s["seed"]).localCheckpoint()
            else:
                non_lm = graph.vertices.select("id").join(lm.select("id"), "id", "left_anti")
                if s["partition"] == "LP":
                    assign = lp_partition(spark, graph.vertices, graph.edges, non_lm, s["setSize"], s["lpMaxIter"], s["seed"])
                else:
                    assign = random_partition(non_lm, s["setSize"], s["seed"])
                assign = assign.localCheckpoint()
            sizes = assign.agg(F.countDistinct("set_id").alias("sets"), F.count(F.lit(1)).alias("nodes")).first()
            self.plan = {"setup": setup, "sets": int(sizes["sets"]), "nodes": int(sizes["nodes"])}
            st.count(**{k: v for k, v in self.plan.items() if k != "setup"})
        with stage(spark, "proximity_rows", f"rows of M for {self.plan['nodes']} nodes", self.timings) as st:
            if same:
                A = self._A
            elif ids is not None and s["metric"] == "I+A":
                # Complete rows of A for the requested nodes, their in-neighbours and the
                # landmarks only (see _needed_rows); from the input edges when local.
                if local:
                    in_nbrs = ends.where(F.col("into") | F.lit(not graph.directed)).select(F.col("o").alias("id"))
                else:
                    to_wanted = wanted.select(F.col("id").alias("dst"))
                    if self.plan["nodes"] <= BROADCAST_IDS_MAX:
                        to_wanted = F.broadcast(to_wanted)
                    in_nbrs = graph.edges.join(to_wanted, "dst", "left_semi").select(F.col("src").alias("id"))
                needed = _needed_rows(in_nbrs, wanted, lm)
                n_needed = needed.count()
                from_input = graph.raw is not None  # rows_of merges only these rows' input edges
                self.plan.update(rows_read=n_needed, rows_from="input edges" if from_input else "merged edges")
                st.count(rows_of_A=n_needed)
                A = transition(rows_of(graph, needed, broadcast=n_needed <= BROADCAST_IDS_MAX)).persist()
            else:
                A = transition(graph.edges).persist()
            prox = Proximity(A, graph.vertices, s["metric"], s["scaling"], graph.edges, s["window"])
            blocks = self._blocks if same else landmark_blocks(prox.rows(lm), prox.cols(lm), lm)
            if ids is not None:
                M_rows, M_cols = prox.rows(assign).localCheckpoint(), prox.cols(assign).localCheckpoint()
                lm_out = self.landmark_embeddings(spark).join(wanted, "id", "left_semi")
            else:
                M_rows = M_cols = prox.rows(None).localCheckpoint()
                lm_out = self.landmark_embeddings(spark)
        records = set_records(assign, M_rows, M_cols, blocks)
        out = embed_sets(records, self.factors, self.S_A, self.S_B, s["lam"], s["eta"], s["iters"], self.id_type, s["dtype"])
        return out.unionByName(lm_out)

    # -- persistence -----------------------------------------------------------------
    def save(self, path: str, overwrite: bool = False) -> None:
        """Save to ``path`` (any Spark-writable URI) as Parquet and JSON."""
        from sepne_spark.writing import atomic_write

        spark = self._graph.edges.sparkSession if self._graph is not None else _active()
        f = self.factors
        meta = {
            "class": "SepNEModel",
            "version": __version__,
            "params": self.settings(),
            "id_type": self.id_type.json(),
            "k": len(self.landmark_ids),
            "d": int(f.Phi.shape[0]),
        }
        arrays = {"Phi": f.Phi, "Psi": f.Psi, "S_A": self.S_A, "S_B": self.S_B, "singular_values": f.singular_values}
        row = [(json.dumps(meta), {k: [float(x) for x in v.ravel()] for k, v in arrays.items()},
                {k: list(v.shape) for k, v in arrays.items()})]
        data = spark.createDataFrame(row, "meta string, arrays map<string, array<double>>, shapes map<string, array<int>>")
        lm = _landmark_df(spark, self.landmark_ids, self.id_type)

        def write(tmp: str) -> None:
            data.coalesce(1).write.parquet(tmp + "/model")
            lm.coalesce(1).write.parquet(tmp + "/landmarks")

        atomic_write(write, path, overwrite=overwrite)

    @classmethod
    def load(cls, path: str) -> "SepNEModel":
        """Load a model written by :meth:`save`."""
        from pyspark.sql.types import _parse_datatype_json_string

        spark = _active()
        row = spark.read.parquet(path.rstrip("/") + "/model").first()
        meta = json.loads(row["meta"])
        arr = {k: np.asarray(v, dtype=np.float64).reshape(row["shapes"][k]) for k, v in row["arrays"].items()}
        lms = spark.read.parquet(path.rstrip("/") + "/landmarks").orderBy("l").collect()
        Phi, Psi = arr["Phi"], arr["Psi"]
        factors = LandmarkFactors(Phi=Phi, Psi=Psi, P=Phi.T @ Psi, singular_values=arr["singular_values"])
        model = cls([r["id"] for r in lms], factors, arr["S_A"], arr["S_B"], _parse_datatype_json_string(meta["id_type"]))
        model._set(**meta["params"])
        return model


def requested_ids(ids: DataFrame, vertices: DataFrame, id_type: Any) -> DataFrame:
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

    Returns
    -------
    DataFrame
        The distinct requested ids found in ``vertices``. Those not found are left out
        with a warning giving their number and up to five of them, as written in
        ``ids``. Only two counts and those examples reach the driver.

    Raises
    ------
    RequestedIdsError
        When ``ids`` is empty or none of its ids is in ``vertices``.
    """
    if "id" not in ids.columns:
        raise ValueError(f"the requested ids need a column 'id'; got columns {ids.columns}")
    asked = ids.select(F.col("id").alias("asked"), F.col("id").try_cast(id_type).alias("id")).distinct()
    found = vertices.select("id", F.lit(True).alias("found"))
    flagged = asked.join(found, "id", "left").localCheckpoint()
    counts = flagged.agg(F.count(F.lit(1)).alias("asked"), F.count("found").alias("found")).first()
    n_asked, n_found = int(counts["asked"]), int(counts["found"])
    if n_asked == 0:
        raise RequestedIdsError("no ids requested: the DataFrame of requested ids is empty")
    if n_found < n_asked:
        missing = flagged.where(F.col("found").isNull()).select("asked").limit(_MAX_EXAMPLES).collect()
        examples = sorted((r["asked"] for r in missing), key=str)
        if n_asked == 1:
            raise RequestedIdsError(f"the requested id {examples[0]!r} is not a node of the graph")
        if n_found == 0:
            raise RequestedIdsError(f"none of the {n_asked} requested ids is a node of the graph, e.g. {examples}")
        log.warning(
            "%d of the %d requested ids are not nodes of the graph and get no embedding, e.g. %s",
            n_asked - n_found, n_asked, examples,
        )
    return flagged.where(F.col("found")).select("id").distinct()


#: Largest number of node ids a neighbourhood filter is broadcast with (a few MB); above
#: it the filters are ordinary joins. A bound on the broadcast, not a function of n.
BROADCAST_IDS_MAX = 1_000_000


def _needed_rows(in_neighbours: DataFrame, ids: DataFrame, landmarks: DataFrame) -> DataFrame:
    """The nodes whose rows of A embedding ``ids`` with M = I + A reads (column ``id``):
    the requested nodes, their in-neighbours and the landmarks. Checkpointed.

    Rows of M for a requested node u are its own row of A; its column needs the rows of
    its in-neighbours (A[v, u] = w(v, u) / s(v)), which also give M[v, l] for the two-hop
    sum Rhat_B; M[l, v] for M_0i and Rhat_A are rows of the landmarks. Every row kept
    (:func:`~sepne_spark.reading.rows_of`) is complete, so its out-weight s and its
    entries are exact, and the work follows the requested nodes' neighbourhoods instead
    of the graph.
    """
    return (
        in_neighbours.select("id")
        .unionByName(ids.select("id"))
        .unionByName(landmarks.select("id"))
        .distinct()
        .localCheckpoint()
    )


def _graph_type():
    from sepne_spark.reading import Graph

    return Graph


def check_graph_reading(graph: Any, params: dict[str, Any]) -> None:
    """Raise ``ValueError`` unless ``graph`` was read the way the model's parameters say.

    A :class:`~sepne_spark.reading.Graph` carries its own reading (direction, duplicate
    and self-loop policy); embedding it with a model fitted on another reading would mix
    two proximity matrices without any error.
    """
    wanted = {"directed": params["directed"], "duplicates": params["duplicates"], "self_loops": params["selfLoops"]}
    got = {"directed": graph.directed, "duplicates": graph.duplicates, "self_loops": graph.self_loops}
    diff = [f"{k}={got[k]!r} (the model has {wanted[k]!r})" for k in wanted if got[k] != wanted[k]]
    if diff:
        raise ValueError("the graph was read with " + ", ".join(diff)
                         + ": read it with the model's settings, or pass the edge list DataFrame")


def _as_graph(dataset: Any, directed: bool, duplicates: str, self_loops: str):
    """An edge-list DataFrame (or Graph) as a canonical :class:`Graph`."""
    from sepne_spark.reading import Graph, prepare_graph

    if isinstance(dataset, Graph):
        return dataset
    if not isinstance(dataset, DataFrame) or not {"src", "dst"} <= set(dataset.columns):
        raise ValueError("expected an edge list DataFrame with columns src, dst[, weight] or a Graph")
    raw = dataset.select(
        "src", "dst", (F.col("weight").cast("double") if "weight" in dataset.columns else F.lit(1.0)).alias("weight")
    )
    return prepare_graph(raw, directed, duplicates=duplicates, self_loops=self_loops)


def _session_of(dataset: Any) -> SparkSession:
    if isinstance(dataset, DataFrame):
        return dataset.sparkSession
    return dataset.edges.sparkSession


def _active() -> SparkSession:
    from sepne_spark.session import get_spark

    return get_spark()


def _landmark_df(spark: SparkSession, ids: list, id_type: Any) -> DataFrame:
    from pyspark.sql.types import IntegerType, StructField, StructType

    schema = StructType([StructField("id", id_type, False), StructField("l", IntegerType(), False)])
    return spark.createDataFrame([(i, j) for j, i in enumerate(ids)], schema)
