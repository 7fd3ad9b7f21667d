"""The SepNE estimator and model, in the pyspark.ml shape.

>>> model = SepNE(dim=128, landmarks=200, metric="A+A2").fit(edges)   # doctest: +SKIP
>>> emb = model.transform(edges)          # every node of the graph    # doctest: +SKIP
>>> some = model.transform(ids)           # only the ids asked for (IO) # doctest: +SKIP
>>> model.save("/models/sepne"); SepNEModel.load("/models/sepne")       # doctest: +SKIP

``fit`` does the work that is shared by every set: landmarks, the landmark SVD and the
k x k summaries S_A, S_B. ``transform`` embeds sets of nodes independently; given an
edge list it embeds every node with the configured partition (RP or LP), given a
DataFrame of ``id`` it embeds only those nodes (IO), keeping that DataFrame's rows and
other columns (ids that are no nodes of the graph are left out, with a warning; when
none is a node, :class:`~sepne_spark.errors.RequestedIdsError` is raised).

Both classes are complete pyspark.ml stages: one Param per model setting of
:data:`sepne_spark.settings.SETTINGS` with ``getX``/``setX``, keyword-only
constructors, and ``MLWritable``/``MLReadable`` persistence in pyspark.ml's layout,
so a :class:`~pyspark.ml.Pipeline` or :class:`~pyspark.ml.PipelineModel` holding them
can be saved and loaded.
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import numbers
import os
import re
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from pyspark import keyword_only
from pyspark.errors import AnalysisException
from pyspark.ml import Estimator, Model
from pyspark.ml.param import Param, Params
from pyspark.ml.util import DefaultParamsReader, DefaultParamsWriter, MLReadable, MLReader, MLWritable
from pyspark.sql import DataFrame, SparkSession

from sepne_spark import __version__, pipeline
from sepne_spark.errors import InputError, RequestedIdsError, SettingError, UnknownParamError, UserError  # noqa: F401 - RequestedIdsError re-exported here
from sepne_spark.graph import requested_ids  # noqa: F401 - part of the API, used by the embed job
from sepne_spark.graph import NO_EDGES, try_cast
from sepne_spark.proximity import check_window
from sepne_spark.session import holding_checkpoints, is_dataframe, is_stopped, release
from sepne_spark.set_stage import output_schema
from sepne_spark.settings import (
    FITTED_PARAMS, MODEL_PARAMS, MODEL_SETTINGS, Setting, param_converter, setting, unknown_param_message,
)
from sepne_spark.solver import LandmarkFactors

log = logging.getLogger(__name__)



def _param_doc(s: Setting) -> str:
    """The Param's doc: the setting's help with flags spelled as Param names."""
    text = re.sub(r"--([a-z][a-z-]*)", lambda m: _camel_of(m.group(1)), s.help)
    return f"{text} ({s.allowed()})"


def _camel_of(flag_word: str) -> str:
    name = flag_word.replace("-", "_")
    try:
        return setting(name).param or name
    except KeyError:
        return "--" + flag_word


class _SepNEParams(Params):
    """Parameters shared by :class:`SepNE` and :class:`SepNEModel`.

    One Param per model setting of :data:`sepne_spark.settings.SETTINGS` (its camelCase
    name, e.g. ``setSize`` for ``set_size``), with ``getX`` and ``setX`` methods. Each
    Param's converter is the settings' own check (:func:`~sepne_spark.settings.param_converter`):
    a bad value raises :class:`~sepne_spark.errors.SettingError` (a ``ValueError``) with
    the same message as the command-line flag. Defaults are the schema's.
    """

    def __init__(self) -> None:
        super().__init__()
        self._setDefault(**{s.param: s.default for s in MODEL_SETTINGS})

    def settings(self) -> dict[str, Any]:
        """All parameter values (defaults included) by Param name."""
        return {p.name: self.getOrDefault(p) for p in self.params}

    def _set(self, **kwargs: Any) -> Any:
        # pyspark.ml skips a Param's converter for None, which would then fail late, in a
        # Spark task; every setting has a value, so None is refused here, at the call.
        for name, value in kwargs.items():
            if value is None:
                raise SettingError(f"{name}: expected {setting(name).allowed()}, got None")
        return super()._set(**kwargs)

    def set(self, param: Param, value: Any) -> None:
        """As pyspark.ml's (``est.set(est.dim, 64)``), but a bad value raises the
        settings' :class:`SettingError`, as ``setDim`` does, not pyspark.ml's plain
        ``ValueError`` around it."""
        try:
            super().set(param, value)
        except ValueError as exc:
            if isinstance(exc.__context__, SettingError):
                raise exc.__context__ from None
            raise


def _getter(name: str):
    def get(self: Params) -> Any:
        return self.getOrDefault(getattr(self, name))

    get.__doc__ = f"Gets the value of :py:attr:`{name}` or its default value."
    return get


def _setter(name: str):
    def set_(self: Params, value: Any) -> Any:
        return self._set(**{name: value})

    set_.__doc__ = f"Sets the value of :py:attr:`{name}`."
    return set_


for _s in MODEL_SETTINGS:
    _cap = _s.param[0].upper() + _s.param[1:]
    setattr(_SepNEParams, _s.param, Param(Params._dummy(), _s.param, _param_doc(_s), param_converter(_s)))
    _get, _set_ = _getter(_s.param), _setter(_s.param)
    _get.__name__, _set_.__name__ = f"get{_cap}", f"set{_cap}"
    setattr(_SepNEParams, f"get{_cap}", _get)
    setattr(_SepNEParams, f"set{_cap}", _set_)
del _s, _cap, _get, _set_


def _known_keywords(method):
    """Refuse a keyword that is no Param before ``keyword_only`` passes it on, naming the
    Param meant (``set_size`` -> ``setSize``) instead of Python's bare ``TypeError``."""

    @functools.wraps(method)
    def checked(self, *args: Any, **kwargs: Any) -> Any:
        for key in kwargs:
            if key not in MODEL_PARAMS:
                raise UnknownParamError(unknown_param_message(key, type(self).__name__))
        return method(self, *args, **kwargs)

    return checked


class SepNE(Estimator, _SepNEParams, MLWritable, MLReadable):
    """Separated Network Embedding estimator.

    ``fit(edges)`` takes an edge list DataFrame with columns ``src``, ``dst`` and an
    optional ``weight`` (string or integer ids), or a :class:`sepne_spark.graph.Graph`.
    ``SepNE()`` takes the built-in defaults (the paper's document-network setting);
    :meth:`fromProfile` takes a profile's, or with ``"auto"`` the embed job's default,
    chosen from the graph's size.
    """

    @_known_keywords
    @keyword_only
    def __init__(
        self,
        *,
        metric: str = "A+A2",
        window: int = 2,
        scaling: str = "none",
        dim: int = 128,
        landmarks: int = 200,
        landmarkStrategy: str = "DD",
        partition: str = "RP",
        setSize: int = 500,
        lam: float = 0.4,
        eta: float = 0.1,
        iters: int = 100,
        seed: int = 0,
        directed: bool = False,
        duplicates: str = "sum",
        selfLoops: str = "drop",
        lpMaxIter: int = 10,
        dtype: str = "float64",
        landmarkFactors: str = "M00",
        propagation: int = 1,
        averageSteps: int = 0,
        refineSteps: int = 0,
        refineOperator: str = "transition",
        unreached: str = "zero",
        unreachedLength: float = 1.0,
        propagationMu: float = 0.2,
        propagationTheta: float = 0.5,
        propagationBlocks: int = 0,
        propagationDtype: str = "float32",
        oneTaskNodes: int = 100_000,
    ) -> None:
        """A SepNE estimator; every parameter is keyword-only and defaults to the value
        of its setting in :data:`sepne_spark.settings.SETTINGS` (shown here)."""
        super().__init__()
        kwargs = self._input_kwargs
        self._set(**kwargs)

    @_known_keywords
    @keyword_only
    def setParams(
        self,
        *,
        metric: str = "A+A2",
        window: int = 2,
        scaling: str = "none",
        dim: int = 128,
        landmarks: int = 200,
        landmarkStrategy: str = "DD",
        partition: str = "RP",
        setSize: int = 500,
        lam: float = 0.4,
        eta: float = 0.1,
        iters: int = 100,
        seed: int = 0,
        directed: bool = False,
        duplicates: str = "sum",
        selfLoops: str = "drop",
        lpMaxIter: int = 10,
        dtype: str = "float64",
        landmarkFactors: str = "M00",
        propagation: int = 1,
        averageSteps: int = 0,
        refineSteps: int = 0,
        refineOperator: str = "transition",
        unreached: str = "zero",
        unreachedLength: float = 1.0,
        propagationMu: float = 0.2,
        propagationTheta: float = 0.5,
        propagationBlocks: int = 0,
        propagationDtype: str = "float32",
        oneTaskNodes: int = 100_000,
    ) -> "SepNE":
        """Set the parameters given (keyword-only); the others keep their values."""
        kwargs = self._input_kwargs
        return self._set(**kwargs)

    @classmethod
    def fromProfile(cls, profile: str | os.PathLike[str] = "auto", graph: Any = None, **params: Any) -> "SepNE":
        """An estimator with a profile's settings, the Params given overriding them.

        ``SepNE()`` takes the built-in defaults (the paper's document-network setting);
        ``SepNE.fromProfile("auto", edges)`` takes what the embed job runs without
        ``--profile``: ``document-quality`` or ``social``, chosen from the graph's size;
        so does a profile that extends ``auto`` (``yarn``), with its own entries over
        that choice.

        Parameters
        ----------
        profile : str or path-like, default "auto"
            ``"auto"`` (in any case); a profile's name (``document``,
            ``document-quality``, ``social``, ``yarn``, ``default``, or ``NAME.yaml`` in
            ``$SEPNE_CONF_DIR``); or a YAML file's path. A profile's settings that are
            not the estimator's (``spark``, ``input_format``, ...) are left out. The
            edges given in its place (``SepNE.fromProfile(edges)``) mean ``"auto"``.
        graph : DataFrame or Graph, optional
            The edge list (``src``, ``dst``[, ``weight``]) or
            :class:`~sepne_spark.graph.Graph` that will be fitted; needed by
            ``"auto"`` (and a profile that extends it), which counts its nodes, edge
            rows and two-step walks in one
            Spark action (nothing is cached: ``fit`` reads the edges again). A ``Graph``'s
            reading (``directed``, ``duplicates``, ``selfLoops``) is taken, with any
            profile, unless given.
        **params
            SepNE Params (``dim=64``, ``landmarks=500``, ...), checked as ``SepNE(...)``
            checks them; they win over the profile. ``metric="I+A"`` drops a profile's
            walk window, as ``--metric I+A`` does, and ``window`` above 2 makes a
            profile's I+A into A+A2; under ``"auto"``, ``landmarks`` without ``dim``
            sets ``dim`` to at most that many.
            Settings that cannot go together (``dim`` above ``landmarks``) are refused
            here, and those that can but should not are warned about, as the embed job
            does.

        It is a class method: ``SepNE(dim=8).fromProfile("social")`` does not keep
        ``dim=8``.

        Returns
        -------
        SepNE
            An estimator with every Param set (call ``fit`` next).

        Raises
        ------
        SettingError
            ``"auto"`` without a graph, a bad Param value, or settings that cannot go
            together.
        InputError
            ``"auto"`` with a graph without edges, or with a bad row.
        UnknownParamError
            A keyword that is no Param.
        UserError
            A profile that cannot be found or read.
        """
        from sepne_spark import settings as schema

        if graph is None and not isinstance(profile, (str, os.PathLike)):
            profile, graph = schema.AUTO_PROFILE, profile  # SepNE.fromProfile(edges)
        given = cls(**params)  # every Param value checked here, with the Param's name
        overrides = {p: given.getOrDefault(p) for p in params}
        if graph is not None and isinstance(graph, _graph_type()):  # fitted as it was read
            for p, value in (("directed", graph.directed), ("duplicates", graph.duplicates),
                             ("selfLoops", graph.self_loops)):
                overrides.setdefault(p, value)
        chosen: pipeline.AutoChoice | None = None
        own = schema.auto_extension(profile)
        if own is not None:
            if graph is None:
                name = '"auto"' if str(profile).lower() == schema.AUTO_PROFILE else f"{profile}, which extends auto,"
                raise SettingError(f'profile {name} is chosen from the graph\'s size: pass the edge list DataFrame '
                                   f'(or Graph) to be fitted, SepNE.fromProfile("{profile}", edges)')
            reading = [overrides.get(p, own.get(schema.MODEL_PARAMS[p], given.getOrDefault(p)))
                       for p in ("directed", "duplicates", "selfLoops")]
            with _bad_rows_as_input_errors():
                chosen = pipeline.choose_profile(_as_graph(graph, *reading))
            if chosen.edge_rows == 0:
                raise InputError(NO_EDGES)
            base, profile_values = schema.over_auto(chosen.profile, chosen.changed, own, str(profile),
                                                    overrides.get("landmarks"), "dim" in params)
        else:
            base = profile_values = schema.load_profile(profile)
        est = cls(**schema.model_params(schema.resolve(None, profile_values)))
        est._set(**overrides)
        values = {schema.MODEL_PARAMS[p]: v for p, v in est.settings().items()}
        # metric="I+A" drops the profile's walk window, window above 2 makes its I+A into A+A2
        if schema.given_wins(values, {schema.MODEL_PARAMS[p] for p in params}):
            est._set(metric=values["metric"], window=values["window"])
            if "window" in params:
                log.info("window=%d asks for walks of up to %d steps: metric A+A2 in place of the profile's I+A",
                         values["window"], values["window"])
        try:  # the job's rules and warnings for settings that go together, at the call
            schema.check_together(values, {schema.MODEL_PARAMS[p]: "given" if p in params else "from the profile"
                                           for p in est.settings()})
        except UserError as exc:
            raise SettingError(str(exc)) from None
        if chosen is not None:
            shown = {k: v for k, v in profile_values.items() if setting(k).scope != schema.JOB
                     and setting(k).param not in params and base.get(k, setting(k).default) != v}
            log.info("profile %s: %s", profile, chosen.describe(shown))
            usual = base.get("dim", setting("dim").default)
            if "dim" not in params and "dim" not in own and est.getOrDefault(est.dim) < usual:
                k, d = est.getOrDefault(est.landmarks), est.getOrDefault(est.dim)
                if "landmarks" in params:
                    log.warning("landmarks=%d gives vectors of %d dimensions (at most the landmarks), not %s; "
                                "give dim to choose", k, d, usual)
                else:
                    log.warning("a graph of %d nodes takes at most %d landmarks (half its nodes), so its "
                                "vectors have %d dimensions, not %s; give dim and landmarks to choose",
                                chosen.nodes, k, d, usual)
        return est

    def write(self) -> "SepNEWriter":
        """An :class:`~pyspark.ml.util.MLWriter` of this estimator's parameters."""
        return SepNEWriter(self)

    @classmethod
    def read(cls) -> "SepNEReader":
        """An :class:`~pyspark.ml.util.MLReader` of estimators written by :meth:`write`."""
        return SepNEReader(cls)

    def save(self, path: str, overwrite: bool = False) -> None:
        """Save the parameters to ``path``: ``write().save(path)``, or
        ``write().overwrite().save(path)`` with ``overwrite``."""
        _save(self, path, overwrite)

    def _fit(self, dataset: Any) -> "SepNEModel":
        s = self.settings()
        try:
            check_window(s["metric"], s["window"])  # before any Spark work
        except ValueError as exc:
            raise SettingError(str(exc)) from None
        if s["dim"] > s["landmarks"]:
            default = " (the default)" if not self.isSet(self.dim) else ""
            raise SettingError(
                f"dim={s['dim']}{default} is more than landmarks={s['landmarks']}: the landmark embedding "
                f"has at most as many dimensions as there are landmarks; set dim to {s['landmarks']} or less"
            )
        graph = _as_graph(dataset, s["directed"], s["duplicates"], s["selfLoops"])
        check_graph_reading(graph, s, fitting=True)  # a Graph read otherwise would be saved under the wrong settings
        timings: dict[str, float] = {}
        with _bad_rows_as_input_errors():
            fitted, cache = pipeline.fit(graph, s, timings)
        from sepne_spark import settings as schema

        if cache.nodes > schema.AUTO_SMALL_NODES and not any(self.isSet(p) for p in self.params):
            log.warning("SepNE() runs the paper's document-network setting (built-in defaults), chosen for "
                        "graphs of a few thousand nodes; on this one of %d nodes it can leave many nodes with zero "
                        "vectors (a sparse or large graph: each landmark reaches a smaller share of it); "
                        "SepNE.fromProfile(\"auto\", edges) chooses the settings from the graph's size, as the "
                        "embed job does", cache.nodes)
        model = SepNEModel(fitted.landmark_ids, fitted.factors, fitted.S_A, fitted.S_B, fitted.id_type)
        model.fit_notes = dict(fitted.notes)
        self._copyValues(model)
        model._hold_fitted_values()
        model._fitted = cache
        model._fit_input = dataset
        model.timings = timings
        return model


class SepNEModel(Model, _SepNEParams, MLWritable, MLReadable):
    """A fitted SepNE model: landmark ids, Phi, Psi, P, S_A, S_B and the parameters.

    With the per-set solve alone (``propagation`` 1, no ``averageSteps`` or
    ``refineSteps``) that is all it needs to embed any node later from that node's own
    edges and two-hop sums, including nodes and edges added after fitting; the steps
    after the solve and the anchor of ``unreached`` read the whole graph.

    A model that :meth:`SepNE.fit` returned also holds, until :meth:`release`, the
    tables the fit cached for its input (the graph, its rows of A and the landmark
    blocks): ``transform`` of that same object (the DataFrame or
    :class:`~sepne_spark.graph.Graph` passed to ``fit``, compared by identity) embeds
    from them instead of rebuilding them; any other input, an equal copy included, is
    read anew. A saved and loaded model holds none.
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
        self._fitted: pipeline.FittedGraph | None = None
        self._fit_input: Any = None
        self._embedded: list[DataFrame] = []  # tables its embeddings persisted, for release()
        self.timings: dict[str, float] = {}
        #: what the last :meth:`embed` set up: ``setup`` (RP, LP, IO), ``sets``, ``nodes``
        self.plan: dict[str, Any] = {}
        #: what the fit did that the Params do not say, saved with the model:
        #: ``landmark_subspaces`` (``"M00"``, ``"rows"`` or ``"walks"``; ``"M00"`` also when
        #: ``landmarkFactors="walks"`` and the walks were over the limit of products) and,
        #: when the walks' Gram sums ran over a sample of the nodes, ``walk_sample`` (its
        #: share); empty for a model saved before 2026-12-06
        self.fit_notes: dict[str, Any] = {}
        self._fitted_values: dict[str, Any] = {}  # FITTED_PARAMS' values at the fit

    def copy(self, extra: Any = None) -> "SepNEModel":
        """As :meth:`pyspark.ml.param.Params.copy`; the copy keeps its own record of what
        its embeddings set up and took (``plan``, ``timings``), and shares the fitted
        graph's tables and the list of tables to release with this model."""
        that = super().copy(extra)
        that.plan = dict(self.plan)
        that.timings = dict(self.timings)
        that.fit_notes = dict(self.fit_notes)
        that._fitted_values = dict(self._fitted_values)
        return that

    def _hold_fitted_values(self) -> None:
        """Record the values of the Params the fit fixed (after the fit or a load)."""
        self._fitted_values = {p: self.getOrDefault(p) for p in FITTED_PARAMS}

    def _check_fitted_values(self) -> None:
        """Refuse a model without fitted factors, and values of the fit's Params other
        than those the model was fitted with: the landmarks, their factors and M are the
        fit's, and would not follow them."""
        if self.factors is None:
            raise SettingError("this SepNEModel holds no fitted factors: fit SepNE, or load a saved model with "
                               "SepNEModel.load(path)")
        changed = [f"{p}={self.getOrDefault(p)!r} (fitted with {v!r})"
                   for p, v in self._fitted_values.items() if self.getOrDefault(p) != v]
        if changed:
            raise SettingError(
                "this model was set to " + ", ".join(changed) + ": " + ", ".join(FITTED_PARAMS)
                + " are fixed when the model is fitted (its landmarks, their factors and the proximity); "
                "set them back, or fit SepNE with the new values"
            )

    # -- embedding -------------------------------------------------------------------
    @property
    def _graph(self) -> Any:
        """The graph this model was fitted on, while its cached tables are held and its
        session runs (a stopped session's tables are gone: the model then holds none)."""
        if self._fitted is not None and is_stopped(self._fitted.graph.edges.sparkSession):
            self._fitted = None
        return self._fitted.graph if self._fitted is not None else None

    def _state(self) -> pipeline.Fit:
        return pipeline.Fit(self.landmark_ids, self.factors, self.S_A, self.S_B, self.id_type)

    def landmark_embeddings(self, spark: SparkSession) -> DataFrame:
        """Rows of the landmarks: embedding Phi, context Psi (k rows)."""
        return pipeline.landmark_rows(spark, self._state())

    def transform(self, dataset: Any, params: Any = None) -> DataFrame:
        """Embed, lazily: the solve runs at the first action on the result. At the call,
        requested ids are checked to be nodes of the graph (a small query); :meth:`embed`
        lists the other jobs a call can run.

        ``dataset`` is one of:

        * an edge list DataFrame (``src``, ``dst`` and an optional ``weight``) or a
          :class:`~sepne_spark.graph.Graph`: every node of it; the very one passed to
          ``fit`` reuses the fit's cached tables;
        * a DataFrame with a column ``id`` and none named ``src``: requested ids of the
          fitted graph (IO), its other columns kept beside the output's.

        Rows of an edge list are checked as the result is computed: a null id or a bad
        weight fails the first action with Spark's error carrying the library's message
        (``fit`` raises it as :class:`InputError`). The tables this call persists are
        the model's until :meth:`release`. ``params`` is pyspark.ml's extra param map.
        """
        return super().transform(dataset, params)

    def _transform(self, dataset: Any) -> DataFrame:
        # Lazy: no Spark job decides the path here (see embed), so a graph this model was
        # not fitted on in this session takes the distributed path; with the steps after
        # the solve or the anchor, which run jobs at the call there, a small graph is
        # counted (one small job) and embedded in one task instead (pipeline.embed).
        if is_dataframe(dataset) and "id" in dataset.columns and "src" not in dataset.columns:
            self._check_fitted_values()
            if self._graph is None:
                raise SettingError("this model holds no graph (it was loaded, release() let it go, or its "
                                   "session was stopped): pass the edge list with transform(edges), or use "
                                   "embed(ids, edges)")
            extra = [c for c in dataset.columns if c != "id"]
            # compared without regard to case, as Spark resolves names by default
            clash = [c for c in extra if c.lower() in {n.lower() for n in output_schema(self.id_type).names}]
            if clash:
                raise RequestedIdsError(f"the requested ids' columns {clash} would be replaced by the embedding's; "
                                        f"rename or drop them")
            out = self._embed(dataset.select("id"), self._graph, None, count_small=False)
            if not extra:
                return out
            # pyspark.ml's contract: the input's rows and columns, the output's appended.
            # The ids are matched as embed matches them (cast to the graph's id type).
            ids = dataset.withColumn("_sepne_id", try_cast("id", self.id_type))
            return ids.join(out.withColumnRenamed("id", "_sepne_id"), "_sepne_id").drop("_sepne_id")
        if dataset is self._fit_input and self._graph is not None:
            return self._embed(None, self._graph, None, count_small=False)  # the fitted graph: reuse its blocks
        return self._embed(None, dataset, None, count_small=False)

    def embeds_locally(self, graph: Any, ids: DataFrame | None = None) -> bool:
        """Whether :meth:`embed` of requested ids reads only their neighbourhood.

        True for M = I + A without scaling, propagation, refinement or averaging, a
        :class:`~sepne_spark.graph.Graph` that keeps its input edges (``raw``: from
        :func:`~sepne_spark.graph.load_graph`, :func:`~sepne_spark.graph.prepare_graph`,
        or an edge DataFrame), and at most :data:`BROADCAST_IDS_MAX` requested ids
        (counted when ``ids`` is given). Then the graph's edges are never merged or
        counted as a whole: broadcast semi-joins of the input (on ``src`` and on ``dst``,
        no shuffle) keep only the edges at the requested nodes, their in-neighbours and
        the landmarks, so the time follows those neighbourhoods and a few scans of the
        input.
        """
        return pipeline.embeds_locally(self.settings(), graph, ids)

    def embed(self, ids: DataFrame | None, graph: Any, *, nodes: int | None = None) -> DataFrame:
        """Embed ``ids`` (a DataFrame with column ``id``; None: every node) of ``graph``.

        ``graph`` is an edge-list DataFrame or a :class:`~sepne_spark.graph.Graph`; it
        may hold nodes and edges added after fitting. Landmarks, Phi, Psi, S_A and S_B
        are taken from the model as fitted. The result is lazy: the solve runs at the
        first action on it, once (see :func:`sepne_spark.pipeline.embed`), except the check
        that requested ids are nodes of ``graph`` (a small query, so that none being one
        is an error here and a few missing ones a warning); the label
        propagation of ``LP`` sets; under a propagation by row blocks (graphs of over
        100,000 nodes), the solve and its products; and on the distributed path,
        ``unreached='anchor'`` (its counts and Gram matrix), after them: these run here,
        and the output is then computed and checkpointed here (README, "Python
        API (pyspark.ml shape)", lists every job a call runs).

        ``nodes``, the number of nodes of ``graph`` when the caller has counted them (the
        embed job does), lets a model that was not fitted on ``graph`` in this session
        (a loaded one) embed a graph of at most ``oneTaskNodes`` nodes in one task, as
        the fit would have. Without it the nodes are counted here (one small job) when
        the input has at most ``oneTaskNodes / 2`` edge rows: the count of
        :func:`~sepne_spark.graph.load_graph`'s reader, or for an edge DataFrame one
        bounded job that stops reading after ``oneTaskNodes / 2 + 1`` rows per
        partition. A larger input takes the distributed path, which gives the same
        vectors in more Spark jobs; requested ids that :meth:`embeds_locally` embeds
        keep that neighbourhood path. Deciding takes a small job that checks the graph
        holds every landmark, and for ``A+A2`` one over the degree table. ``transform``
        runs none of these jobs, so that it stays lazy: a graph this model was not
        fitted on in this session takes the distributed path there. The steps after the
        solve (``propagation`` > 1, ``refineSteps``, ``averageSteps``) with
        ``propagationBlocks`` 0 need the node count of such a graph, here and in
        ``transform`` (a count, a few small Spark jobs): up to 100,000 nodes they run in
        one task, above it by row blocks.

        Requested ids that are not nodes of ``graph`` are left out, with a warning that
        gives their number and a few of them (see :func:`~sepne_spark.graph.requested_ids`); requested
        landmarks get their landmark rows. The result has one row per node of ``graph``
        (or per requested node): a landmark that ``graph`` no longer holds gets none,
        and its vector still enters the others' as fitted.

        Raises
        ------
        RequestedIdsError
            A ``ValueError`` (and a ``UserError`` for the jobs) when ``ids`` is empty or
            none of its ids is a node of ``graph``.
        """
        if ids is not None and not is_dataframe(ids):
            raise TypeError(f"ids must be a DataFrame with a column id (or None for every node), not a "
                            f"{type(ids).__name__}: spark.createDataFrame([(i,) for i in ids], ['id']) makes one")
        if nodes is not None and (isinstance(nodes, bool) or not isinstance(nodes, numbers.Integral) or nodes < 0):
            raise SettingError(f"nodes must be the number of nodes of the graph (an integer >= 0), not {nodes!r}")
        return self._embed(ids, graph, None if nodes is None else int(nodes), count_small=True)

    def _embed(self, ids: DataFrame | None, graph: Any, nodes: int | None, count_small: bool) -> DataFrame:
        self._check_fitted_values()
        s = self.settings()
        if not isinstance(graph, _graph_type()):
            graph = _as_graph(graph, s["directed"], s["duplicates"], s["selfLoops"])
        else:
            check_graph_reading(graph, s)
        # This call's tables (and, under Spark Connect 3.5, the files standing in for its
        # checkpoints): the model's once it returns, released at once if it fails.
        held: list = []
        try:
            with _bad_rows_as_input_errors(), holding_checkpoints(held):  # the queries that run at the call
                out = pipeline.embed(self._state(), s, graph, ids, self._fitted, self.plan, self.timings,
                                     nodes=nodes, count_small=count_small, cached=held)
        except BaseException:
            try:
                release(held)
            except Exception:  # noqa: BLE001 - the call's own error is what the caller sees
                log.debug("could not unpersist a table of a failed embedding", exc_info=True)
            raise
        self._embedded.extend(held)
        return out

    def __enter__(self) -> "SepNEModel":
        """``with model:`` (or ``with SepNEModel.load(path) as model:``) releases the
        model's tables when the block ends (:meth:`release`)."""
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        """Unpersist the tables cached for the graph this model was fitted on and those
        its embeddings (:meth:`transform`, :meth:`embed`) persisted: call it once their
        results have been written or collected; a result used after it is recomputed.
        Each call of ``transform`` and ``embed`` persists tables of its own, held until
        this call (a call that fails persists none); a model is not released when it is
        garbage-collected, so release one you stop using, or use it in a ``with`` block.

        The model then holds no graph, as a loaded one: ``transform(edges)`` and
        ``embed(ids, edges)`` embed, ``transform(ids)`` raises :class:`SettingError`.
        Tables of a session that was stopped since are gone with it and are skipped."""
        held, self._embedded = list(self._embedded), []
        fitted, self._fitted = self._fitted, None
        try:
            release(held)
        finally:
            if fitted is not None:
                fitted.release()

    # -- persistence -----------------------------------------------------------------
    def write(self) -> "SepNEWriter":
        """An :class:`~pyspark.ml.util.MLWriter` of this model (see :class:`SepNEWriter`),
        in the session of the graph it was fitted on, if any, else the active one."""
        writer = SepNEWriter(self)
        if self._graph is not None:
            writer.session(self._graph.edges.sparkSession)
        return writer

    @classmethod
    def read(cls) -> "SepNEModelReader":
        """An :class:`~pyspark.ml.util.MLReader` of models written by :meth:`write`."""
        return SepNEModelReader(cls)

    def save(self, path: str, overwrite: bool = False) -> None:
        """Save to ``path`` (any Spark-writable URI): ``write().save(path)``, or
        ``write().overwrite().save(path)`` with ``overwrite``.

        Raises
        ------
        FileExistsError
            When ``path`` exists and ``overwrite`` is not set.
        """
        _save(self, path, overwrite)

    def _data(self, spark: SparkSession) -> tuple[DataFrame, DataFrame]:
        """The model's arrays (raw little-endian float64, in parts of at most
        :data:`_PART_VALUES` values) and its landmark ids, as DataFrames."""
        f = self.factors
        arrays = {"Phi": f.Phi, "Psi": f.Psi, "S_A": self.S_A, "S_B": self.S_B,
                  "singular_values": f.singular_values}
        id_type = self.id_type.json()
        rows = []
        for name, value in arrays.items():
            flat = np.ascontiguousarray(value, dtype="<f8").ravel()
            shape = [int(n) for n in np.shape(value)]
            for part, start in enumerate(range(0, max(flat.size, 1), _PART_VALUES)):
                rows.append((id_type, name, part, shape, flat[start:start + _PART_VALUES].tobytes()))
        data = spark.createDataFrame(rows, _DATA_SCHEMA)
        return data, pipeline.landmark_frame(spark, self.landmark_ids, self.id_type)


#: Schema of a saved model's ``data`` Parquet: per array (Phi, Psi, S_A, S_B, the
#: singular values), its shape and its values in parts of raw little-endian float64.
#: (Models saved before 2026-12-04 hold one row ``idType, arrays map<string,
#: array<double>>, shapes``; they are read too.)
_DATA_SCHEMA = "idType string, name string, part int, shape array<int>, values binary"
#: Values per part: 8 MB. Binary parts keep a model with 2,000 landmarks (two 2,000 x
#: 2,000 summaries) a few seconds to save, where arrays of doubles took minutes.
#: Why a folder is no saved model (a saved model holds one of these folders).
MODEL_FOLDERS = ("metadata", "model")
NO_MODEL = "it holds neither metadata/ (a saved SepNEModel) nor model/ (a model saved by sepne-spark 0.1)"
_NO_ESTIMATOR = "it holds no metadata/ (a saved SepNE)"
_PART_VALUES = 1 << 20


def _arrays_of_row(row: Any) -> dict[str, np.ndarray]:
    """The arrays of a one-row layout (``arrays`` and ``shapes`` maps)."""
    return {k: np.asarray(v, dtype=np.float64).reshape(row["shapes"][k]) for k, v in row["arrays"].items()}


def _read_data(frame: DataFrame) -> tuple[dict[str, np.ndarray], str]:
    """The arrays and the id type (as JSON) of a saved model's ``data``, either layout."""
    if "arrays" in frame.columns:  # one row of arrays of doubles (before 2026-12-04)
        row = frame.first()
        return _arrays_of_row(row), row["idType"]
    parts: dict[str, list] = {}
    id_type = None
    for row in frame.collect():
        id_type = row["idType"]
        parts.setdefault(row["name"], []).append((row["part"], row["shape"], bytes(row["values"])))
    arrays = {}
    for name, pieces in parts.items():
        pieces.sort(key=lambda p: p[0])
        flat = np.frombuffer(b"".join(p[2] for p in pieces), dtype="<f8").astype(np.float64)
        arrays[name] = flat.reshape(pieces[0][1])
    return arrays, id_type


def _save(instance: Params, path: str, overwrite: bool) -> None:
    writer = instance.write()
    if overwrite:
        writer.overwrite()
    writer.save(path)


class SepNEWriter(DefaultParamsWriter):
    """Writes a :class:`SepNE` or a :class:`SepNEModel` in pyspark.ml's layout.

    ``path/metadata``: :class:`~pyspark.ml.util.DefaultParamsWriter`'s JSON (class, uid,
    timestamp, sparkVersion, paramMap, defaultParamMap) plus ``sepneVersion`` and, for a
    model, ``k`` and ``d``, and ``runDate`` when the writer was given
    ``.option("runDate", "YYYY-MM-DD")`` (the embed job's ``--run-date``). A model adds
    ``path/data`` (Parquet: the id type and the arrays Phi, Psi, S_A, S_B and the
    singular values with their shapes, as raw float64 in parts of 8 MB,
    :data:`_DATA_SCHEMA`) and
    ``path/landmarks`` (Parquet ``id, l``: the landmark ids in order). Everything is
    written with the DataFrame API, so it also works on Spark Connect and shared
    clusters, into a temporary sibling of ``path`` that is moved into place when
    complete (:func:`~sepne_spark.storage.atomic_write`): an existing ``path`` is
    replaced only with :meth:`overwrite` and only once the new one is whole.
    """

    def save(self, path: str) -> None:
        """Write to ``path``; raise ``FileExistsError`` if it exists and
        :meth:`overwrite` was not called, and :class:`~sepne_spark.errors.UserError`
        when :meth:`overwrite` would replace a file or a folder that holds no saved
        estimator or model (a dataset, a folder of the user's), which would be lost."""
        from sepne_spark.errors import OutputExistsError
        from sepne_spark.storage import atomic_write, check_holds_only_a_dataset

        write, target = self.staged(path)
        if self.shouldOverwrite:
            check_holds_only_a_dataset(target, "save path", model_folders=MODEL_FOLDERS)
        try:
            atomic_write(write, target, overwrite=self.shouldOverwrite)
        except OutputExistsError:
            raise OutputExistsError(f"{path} exists: save(path, overwrite=True), or write().overwrite().save(path), "
                                    "replaces it once the new one is written whole") from None

    def staged(self, path: str) -> tuple[Callable[[str], None], str]:
        """The write of this model and its final location, for
        :func:`~sepne_spark.storage.atomic_writes` with other outputs (the embed job
        replaces a saved model and its embeddings together)."""
        from sepne_spark.storage import resolve_output

        # Resolved as Spark resolves it (the session's default file system), so that the
        # moves into place act on the files Spark wrote.
        return self.saveImpl, resolve_output(self.sparkSession, path)

    def saveImpl(self, path: str) -> None:
        """Write the metadata (with the library's version and a ``runDate`` option) and,
        for a fitted model, its landmark data, to ``path`` as the session resolves it."""
        spark = self.sparkSession
        instance = self.instance
        extra: dict[str, Any] = {"sepneVersion": __version__}
        if self.optionMap.get("rundate"):  # .option("runDate", "YYYY-MM-DD"): the run that saved it
            extra["runDate"] = self.optionMap["rundate"]
        if isinstance(instance, SepNEModel):
            instance._check_fitted_values()
            extra.update(k=len(instance.landmark_ids), d=int(instance.factors.Phi.shape[0]), fit=instance.fit_notes)
        _save_metadata(instance, path, spark, extra)
        if isinstance(instance, SepNEModel):
            data, landmarks = instance._data(spark)
            data.coalesce(1).write.parquet(path.rstrip("/") + "/data")
            landmarks.coalesce(1).write.parquet(path.rstrip("/") + "/landmarks")


def _save_metadata(instance: Params, path: str, spark: SparkSession, extra: dict[str, Any]) -> None:
    """``path/metadata``: pyspark.ml's metadata JSON, as one text file written through
    the DataFrame API (as PySpark 4's ``DefaultParamsWriter.saveMetadata`` writes it;
    PySpark 3.5's needs a SparkContext, which shared clusters and Spark Connect refuse)."""
    text = DefaultParamsWriter._get_metadata_to_save(instance, spark, extra)
    spark.createDataFrame([(text,)], "value string").coalesce(1).write.text(path.rstrip("/") + "/metadata")


def _load_metadata(path: str, spark: SparkSession) -> dict[str, Any]:
    """The metadata :func:`_save_metadata` wrote (or pyspark.ml's own writers)."""
    text = spark.read.text(path.rstrip("/") + "/metadata").first()[0]
    return DefaultParamsReader._parseMetaData(text)


def saved_metadata(path: str, spark: SparkSession) -> dict[str, Any] | None:
    """The metadata of the model or estimator saved at ``path``, or None when ``path``
    holds none (no ``metadata/``, or one that is not a saved model's). Read with Spark's
    text reader, as :meth:`SepNEModel.load` reads it (compressed or not)."""
    from sepne_spark import storage

    if not storage.exists(path.rstrip("/") + "/metadata"):
        return None
    try:
        metadata = json.loads(spark.read.text(path.rstrip("/") + "/metadata").first()[0])
    except Exception:  # noqa: BLE001 - no line, not JSON, not text: not a saved model's metadata
        return None
    return metadata if isinstance(metadata, dict) else None


def local_saved_id_type(folder: str) -> str | None:
    """``string`` or ``integer``: the type of the landmark ids of a model saved in the
    local ``folder``, from its ``landmarks`` Parquet schema (without Spark); None when it
    cannot be read here (a model of the first layout, which holds no such folder)."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    try:
        field = pads.dataset(os.path.join(folder, "landmarks"), format="parquet").schema.field("id")
    except (OSError, KeyError, ValueError, pa.ArrowException):
        return None
    if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
        return "string"
    return "integer" if pa.types.is_integer(field.type) else None


def local_saved_metadata(folder: str) -> dict[str, Any] | None:
    """:func:`saved_metadata` of a local folder, read without Spark (plain, gzip or
    bzip2 text, as a session writes it).

    Raises
    ------
    LookupError
        When the metadata is compressed by a codec Python does not read (snappy, lz4,
        zstd, deflate): only Spark's reader can say what it holds.
    """
    import bz2
    import gzip

    readers = {"": open, ".txt": open, ".gz": gzip.open, ".bz2": bz2.open}
    metadata_dir = os.path.join(folder, "metadata")
    if not os.path.isdir(metadata_dir):
        return None
    for name in sorted(n for n in os.listdir(metadata_dir) if not n.startswith(("_", "."))):
        codec = os.path.splitext(name)[1]
        if codec not in readers:
            raise LookupError(f"{metadata_dir}/{name}")
        try:
            with readers[codec](os.path.join(metadata_dir, name), "rt", encoding="utf-8") as part:
                line = part.readline()
        except (OSError, EOFError, UnicodeDecodeError):  # not text: not a saved model's metadata
            return None
        if not line.strip():
            continue  # an empty part: Spark's first() reads the next one
        try:
            metadata = json.loads(line)
        except ValueError:
            return None
        return metadata if isinstance(metadata, dict) else None
    return None


class SepNEReader(DefaultParamsReader):
    """Reads a :class:`SepNE` estimator written by :class:`SepNEWriter`."""

    def load(self, path: str) -> "SepNE":
        """The :class:`SepNE` estimator saved at ``path``, with its uid and Params."""
        _check_saved_path(self.sparkSession, path, "SepNE estimator", ("metadata",), _NO_ESTIMATOR)
        try:
            metadata = _load_metadata(path, self.sparkSession)
        except AnalysisException:
            raise FileNotFoundError(f"no SepNE estimator at {path}: {_NO_ESTIMATOR}") from None
        _check_saved_class(path, metadata, SepNE)
        instance = SepNE()
        instance._resetUid(metadata["uid"])
        DefaultParamsReader.getAndSetParams(instance, metadata)
        return instance


def _check_saved_path(spark: SparkSession, path: str, what: str, folders: Sequence[str], why: str) -> None:
    """Raise ``FileNotFoundError`` when ``path`` does not exist, is a file, or is a folder
    without any of ``folders`` (``why`` says which), before Spark's readers try it (they
    log a warning with a Java stack trace first)."""
    from pyarrow import fs

    from sepne_spark import storage

    try:
        kind, entries = storage.listing(storage.resolve_output(spark, path))
    except Exception:  # a file system the storage layer cannot reach from here: Spark's reader decides
        return
    if kind == fs.FileType.NotFound:
        raise FileNotFoundError(f"no {what} at {path}: the path does not exist")
    if kind == fs.FileType.File:
        raise FileNotFoundError(f"no {what} at {path}: it is a file (a saved {what} is a folder)")
    if kind == fs.FileType.Directory and not any(
            e.base_name in folders and e.type == fs.FileType.Directory for e in entries):
        raise FileNotFoundError(f"no {what} at {path}: {why}")


def _check_saved_class(path: str, metadata: dict[str, Any], cls: type) -> None:
    """Refuse a saved estimator read as a model, and the reverse, naming the right call."""
    found = str(metadata.get("class", "")).rsplit(".", 1)[-1]
    if found == cls.__name__:
        return
    what = {"SepNE": "a SepNE estimator (its parameters; fit it to get a model)",
            "SepNEModel": "a fitted SepNEModel"}.get(found, f"a {metadata.get('class')!r}")
    raise InputError(f"{path} holds {what}, not a {cls.__name__}: load it with "
                     f"{found if found in ('SepNE', 'SepNEModel') else 'its own class'}.load")


class SepNEModelReader(MLReader):
    """Reads a :class:`SepNEModel` written by :class:`SepNEWriter`.

    Models saved before the settings schema (2026-11-27: ``path/model`` Parquet with
    columns ``meta``, ``arrays`` and ``shapes``, and ``path/landmarks``) are read too.
    """

    def __init__(self, cls: type) -> None:
        super().__init__()
        self.cls = cls

    def load(self, path: str) -> "SepNEModel":
        """The :class:`SepNEModel` saved at ``path``: its Params, landmarks and factors
        (O(k^2 + k d) read to the driver), without the graph it was fitted on."""
        from pyspark.sql.types import _parse_datatype_json_string

        spark = self.sparkSession
        path = path.rstrip("/")
        _check_saved_path(spark, path, "SepNE model", MODEL_FOLDERS, NO_MODEL)
        try:
            metadata = _load_metadata(path, spark)
        except AnalysisException:
            return self._load_v0(spark, path)
        _check_saved_class(path, metadata, SepNEModel)
        arrays, id_type = _read_data(spark.read.parquet(path + "/data"))
        model = self._build(spark, path, arrays, _parse_datatype_json_string(id_type))
        model._resetUid(metadata["uid"])
        DefaultParamsReader.getAndSetParams(model, metadata)
        model._hold_fitted_values()
        model.fit_notes = dict(metadata.get("fit") or {})
        return model

    def _build(self, spark: SparkSession, path: str, arr: dict[str, np.ndarray], id_type: Any) -> "SepNEModel":
        ids = [r["id"] for r in spark.read.parquet(path + "/landmarks").orderBy("l").collect()]
        Phi, Psi = arr["Phi"], arr["Psi"]
        factors = LandmarkFactors(Phi=Phi, Psi=Psi, P=Phi.T @ Psi, singular_values=arr["singular_values"])
        return self.cls(ids, factors, arr["S_A"], arr["S_B"], id_type)

    def _load_v0(self, spark: SparkSession, path: str) -> "SepNEModel":
        """A model in the layout of sepne-spark 0.1 (before pyspark.ml persistence)."""
        from pyspark.sql.types import _parse_datatype_json_string

        try:
            row = spark.read.parquet(path + "/model").first()
        except AnalysisException:
            raise FileNotFoundError(f"no SepNE model at {path}: {NO_MODEL}") from None
        meta = json.loads(row["meta"])
        model = self._build(spark, path, _arrays_of_row(row), _parse_datatype_json_string(meta["id_type"]))
        model._set(**meta["params"])
        model._hold_fitted_values()
        return model


BROADCAST_IDS_MAX = pipeline.BROADCAST_IDS_MAX


def _graph_type():
    from sepne_spark.graph import Graph

    return Graph


def check_graph_reading(graph: Any, params: dict[str, Any], fitting: bool = False) -> None:
    """Raise ``SettingError`` unless ``graph`` was read the way the Params say.

    A :class:`~sepne_spark.graph.Graph` carries its own reading (direction, duplicate
    and self-loop policy); embedding it with a model fitted on another reading would mix
    two proximity matrices without any error. ``fitting``: the Params are an
    estimator's, which can still take the graph's values.
    """
    names = {"directed": "directed", "duplicates": "duplicates", "self_loops": "selfLoops"}
    got = {"directed": graph.directed, "duplicates": graph.duplicates, "self_loops": graph.self_loops}
    diff = {k: got[k] for k, p in names.items() if got[k] != params[p]}
    if not diff:
        return
    read = ", ".join(f"{k}={v!r} ({'the estimator' if fitting else 'the model'} has {params[names[k]]!r})"
                     for k, v in diff.items())
    if fitting:
        fix = ", ".join(f"{names[k]}={v!r}" for k, v in diff.items())
        raise SettingError(f"the graph was read with {read}: set SepNE({fix}) to fit it as read, or pass "
                           "the edge list DataFrame")
    raise SettingError(f"the graph was read with {read}: read it with the model's settings, or pass the "
                       "edge list DataFrame")


def _as_graph(dataset: Any, directed: bool, duplicates: str, self_loops: str):
    """An edge-list DataFrame (or Graph) as a canonical :class:`Graph`."""
    from sepne_spark.graph import Graph, prepare_graph

    if isinstance(dataset, Graph):
        _check_running(dataset.edges)
        return dataset
    expected = "expected an edge list DataFrame with columns src, dst[, weight] or a Graph"
    if isinstance(dataset, str):
        raise TypeError(f"{expected}, got the string {dataset!r}: read a file with "
                        "sepne_spark.load_graph(spark, path, directed=...) and pass its Graph")
    if not is_dataframe(dataset):
        raise TypeError(f"{expected}, got a {type(dataset).__module__}.{type(dataset).__name__}"
                        + (": spark.createDataFrame(it) first" if type(dataset).__name__ == "DataFrame" else ""))
    if not {"src", "dst"} <= {c.lower() for c in dataset.columns}:  # prepare_graph names SRC, Dst
        if {"id", "src"} <= set(dataset.columns):  # with a column src, not taken for requested ids
            raise InputError(f"{expected}, or a DataFrame of requested ids (a column named id and none named "
                             f"src); the DataFrame has id and src, and no dst (columns {dataset.columns}): for "
                             "requested ids drop src, df.drop('src'); for an edge list add dst")
        cased = [c for c in dataset.columns if c.lower() == "id" and c != "id"]
        if cased:
            raise InputError(f"{expected}, or a DataFrame of requested ids (a column named id, in lower case, as "
                             f"the edge list's columns are read); the DataFrame has {cased[0]!r}: rename it, "
                             f"df.withColumnRenamed({cased[0]!r}, 'id')")
        raise InputError(f"{expected}, or a DataFrame of requested ids (a column named id); the DataFrame has "
                         f"columns {dataset.columns}")
    _check_running(dataset)
    return prepare_graph(dataset, directed, duplicates=duplicates, self_loops=self_loops)


def _check_running(df: DataFrame) -> None:
    """Refuse a DataFrame whose session was stopped, before any of its plan is built."""
    if is_stopped(df.sparkSession):
        raise InputError("the DataFrame belongs to a Spark session that was stopped (spark.stop(), or a notebook's "
                         "restart): read or create it again in the running session")


@contextlib.contextmanager
def _bad_rows_as_input_errors() -> Iterator[None]:
    """Raise the :class:`InputError` of an edge-list DataFrame's bad row in place of the
    Spark error that carries it: :func:`~sepne_spark.graph.prepare_graph` checks the rows inside the plan,
    so the driver gets Spark's exception (a classic session's or Spark Connect's) with
    the message on one line, between Spark's error class and its SQLSTATE."""
    from sepne_spark.graph import BAD_ROW

    try:
        yield
    except Exception as exc:
        text = str(exc)
        at = text.find(BAD_ROW)
        if at < 0:
            raise
        message = text[at:].splitlines()[0].split(" SQLSTATE:")[0].rstrip()
        raise InputError(message) from None


def _active() -> SparkSession:
    from sepne_spark.session import get_spark

    return get_spark()
