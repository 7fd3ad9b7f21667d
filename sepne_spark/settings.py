"""Every setting of SepNE, declared once: estimator Params, YAML profiles, flags, manifests.

:data:`SETTINGS` is the one table of settings. Each :class:`Setting` has its profile
key (``set_size``), its command-line flag (``--set-size``), its estimator Param
(``setSize``, for the settings a model holds; ``None`` for the job-only ones), type,
default, bounds or choices (the choices are the domain modules' own tuples:
:data:`~sepne_spark.proximity.METRICS`, :data:`~sepne_spark.landmarks.STRATEGIES`,
:data:`~sepne_spark.partition.SETUPS`, ...) and help text. Everything else is derived
from that table:

* :class:`~sepne_spark.model.SepNE` and :class:`~sepne_spark.model.SepNEModel` get one
  Param per model setting, with ``getX``/``setX``, whose converter is :func:`_coerce`,
  the same check as for a flag or a profile (:func:`param_converter`).
* :func:`load_profile` reads a YAML profile (a file path, or the name of a file in
  ``conf/`` or ``$SEPNE_CONF_DIR``) and validates it; a profile may ``extends:`` another.
* :func:`add_arguments` adds one command-line flag per setting; every flag defaults to
  ``None`` ("not given").
* :func:`resolve` combines them, lowest to highest precedence: built-in default, then
  profile, then command-line flag, into a frozen :class:`EmbedSettings`, whose
  :meth:`EmbedSettings.as_dict` is what a run manifest records.

Typical use in a job::

    parser = argparse.ArgumentParser(prog="sepne-embed")
    parser.add_argument("--profile", help="YAML profile: a path or a name in conf/")
    settings.add_arguments(parser)
    args = parser.parse_args(argv)
    resolved = settings.resolve(args, settings.load_profile(args.profile))
    model = SepNE(**settings.model_params(resolved))

Every problem with a profile or a flag is a :class:`~sepne_spark.errors.UserError`
whose one-line message names the file or flag, the setting and what is allowed; a bad
Param value is a :class:`~sepne_spark.errors.SettingError` (also a ``ValueError``).
"""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import logging
import math
import numbers
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

import yaml

from sepne_spark.errors import SettingError, UserError
from sepne_spark.landmarks import STRATEGIES
from sepne_spark.partition import SETUPS
from sepne_spark.proximity import MAX_WINDOW, METRICS, SCALINGS
from sepne_spark.graph import DUPLICATE_POLICIES, SELF_LOOP_POLICIES
from sepne_spark.reading import BAD_LINE_POLICIES, FORMATS
from sepne_spark.unreached import UNREACHED

log = logging.getLogger(__name__)

__all__ = [
    "AUTO_DENSE_DEGREE",
    "AUTO_DENSE_AVERAGE_STEPS",
    "AUTO_LARGE",
    "AUTO_LOG_RATIO_AVERAGE_STEPS",
    "AUTO_LOG_RATIO_DENSE_DEGREE",
    "AUTO_LOG_RATIO_NODES",
    "AUTO_LOG_RATIO_ROUNDS",
    "AUTO_MAX_ENTRIES",
    "AUTO_MAX_TWO_STEP_WALKS",
    "AUTO_MORE_LANDMARKS_NODES",
    "AUTO_SMALL_NODES",
    "AUTO_SPREAD",
    "AUTO_SPREAD_ROUNDS",
    "AUTO_PROFILE",
    "AUTO_SMALL",
    "auto_needs_walks",
    "degree_spread",
    "DTYPES",
    "FITTED_PARAMS",
    "MODEL_PARAMS",
    "MODEL_SETTINGS",
    "SETTINGS",
    "SETTING_NAMES",
    "Setting",
    "SettingError",
    "EmbedSettings",
    "UserError",
    "add_arguments",
    "auto_extension",
    "auto_profile",
    "conf_dirs",
    "extend",
    "over_auto",
    "find_profile",
    "is_auto",
    "load_profile",
    "model_params",
    "param_converter",
    "resolve",
    "setting",
    "unknown_param_message",
]

#: How the landmark subspaces are chosen: ``M00`` (the paper: M00's own singular vectors,
#: :func:`sepne_spark.solver.landmark_factors`), ``rows`` (the landmark rows' and
#: columns' Gram matrices over every node, :func:`sepne_spark.solver.row_space_factors`)
#: or ``walks`` (the same Gram matrices of the log-scaled A + A^2, whatever the metric:
#: :func:`sepne_spark.pipeline.walk_summaries`). Written here so that reading settings
#: needs no SciPy.
FACTORISATIONS = ("M00", "rows", "walks")
#: Operators of the refinement (``sepne_spark.spectral.REFINE_OPERATORS``; this module
#: does not import SciPy, so that a scheduler can check a job's flags without it).
REFINE_OPERATORS = ("transition", "pmi")

#: Floating-point types of the per-set solve and of the output.
DTYPES = ("float64", "float32")

#: ``scope`` of a setting the fitted model holds (a Param of the estimator).
MODEL = "model"
#: ``scope`` of a setting of the job alone (how input is read, what is written, Spark).
JOB = "job"



# ---------------------------------------------------------------------------
# The schema
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One setting: profile key ``name``, ``flag``, estimator ``param``, rule and help.

    ``scope`` is :data:`MODEL` for a setting the fitted model holds (then ``param`` is
    its Param name, the camelCase of ``name``) or :data:`JOB` for one of the job alone
    (``param`` is ``None``). ``type`` is one of ``int``, ``float``, ``bool``, ``str`` (always with ``choices``)
    or ``dict`` (the ``spark`` mapping of Spark configuration keys to string values).
    ``minimum``/``maximum`` bound numbers; ``exclusive_minimum`` makes the minimum
    itself invalid. Booleans have a second flag, ``negative_flag``, that sets ``False``.
    ``fitted`` marks a model setting that the fit fixes (the landmarks, their factors, the
    proximity and how the graph is read): a fitted model refuses another value of it.
    """

    name: str
    flag: str
    type: type
    default: Any
    help: str
    scope: str = MODEL
    param: str | None = None
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    exclusive_minimum: bool = False
    maximum: float | None = None
    metavar: str | None = None
    negative_flag: str | None = None
    negative_help: str | None = None
    fitted: bool = False

    def allowed(self) -> str:
        """What values are allowed, in words (used in help texts and error messages)."""
        if self.choices is not None:
            return "one of " + ", ".join(self.choices)
        if self.type is bool:
            return "true or false"
        if self.type is dict:
            return "a mapping of Spark settings (keys start with 'spark.') to values"
        noun = "an integer" if self.type is int else "a number"
        if self.minimum is not None and self.maximum is not None:
            if self.exclusive_minimum:
                return f"{noun} > {_num(self.minimum)} and <= {_num(self.maximum)}"
            return f"{noun} from {_num(self.minimum)} to {_num(self.maximum)}"
        if self.minimum is not None:
            return f"{noun} {'>' if self.exclusive_minimum else '>='} {_num(self.minimum)}"
        if self.maximum is not None:
            return f"{noun} <= {_num(self.maximum)}"
        return noun

    def default_text(self) -> str:
        """The built-in default as it would be written in a profile."""
        if self.type is bool:
            return "true" if self.default else "false"
        if self.type is dict:
            return "none" if not self.default else ", ".join(f"{k}={v}" for k, v in self.default.items())
        return str(self.default)


def _num(x: float) -> str:
    if x == 2**63 - 1:
        return "2^63-1"
    return str(int(x)) if float(x).is_integer() else str(x)


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(w.capitalize() for w in rest)


def _setting(name: str, type_: type, default: Any, help: str, scope: str = MODEL, **kw: Any) -> Setting:
    return Setting(name=name, flag="--" + name.replace("_", "-"), type=type_, default=default, help=help,
                   scope=scope, param=_camel(name) if scope == MODEL else None, **kw)


#: The embedding job's settings, in the order they are listed in ``--help``.
SETTINGS: tuple[Setting, ...] = (
    _setting("metric", str, "A+A2", "proximity matrix M: I+A is M = I + A, A+A2 is M = A + A*A, "
             "A the row-normalised transition matrix", choices=METRICS, fitted=True),
    _setting("window", int, 2, "powers of A in metric A+A2: M = A + A*A + ... + A^T for a window "
             "of T; 2 is the paper's A + A*A (given above 2 over a profile's I+A, it makes the metric "
             "A+A2). Each extra power is one more join and M grows "
             "roughly by the average degree per power, so keep it small on large graphs",
             minimum=2, maximum=MAX_WINDOW, metavar="T", fitted=True),
    _setting("scaling", str, "none", "element-wise scaling of M: none, or log, which replaces each "
             "entry m of column v by log(max(vol * m / (T * s_in(v)), 1)) (vol the total edge weight, "
             "s_in(v) the weight into v, T the window: a shifted PMI; M stays sparse). log damps the "
             "hubs' columns; with it eta must rise (about 1000)",
             choices=SCALINGS, fitted=True),
    _setting("dim", int, 128, "embedding dimension d, at most --landmarks. The output holds n x d values and "
             "every step after the solve moves them; 128 is the papers' setting for classification. Lower it "
             "to save storage and time; raise it only with more landmarks",
             minimum=1, metavar="D", fitted=True),
    _setting("landmarks", int, 200, "number of landmarks k", minimum=1, metavar="K", fitted=True),
    _setting("landmark_strategy", str, "DD", "how landmarks are chosen: DD highest degree, DP sampled "
             "proportionally to degree, UF uniformly, GDS greedy dominating set: DD's hubs sit "
             "together, GDS spreads them so that more nodes have one within two hops (a few rounds of "
             "joins; document-quality's; with I+A it leaves M00 nearly diagonal)",
             choices=STRATEGIES, fitted=True),
    _setting("partition", str, "RP", "how the other nodes are split into sets: RP random, "
             "LP label propagation communities, IO only the requested nodes. LP costs a label "
             "propagation over the graph (GraphFrames; about 10 s on the document graphs) and scored below RP "
             "on their validation folds; IO is what requested ids take",
             choices=SETUPS),
    _setting("set_size", int, 500, "target number of nodes per set, best at least --landmarks; a set's solve costs k x k "
             "factorisations once and its rows' products per round, so larger sets amortise the k x k part "
             "and hold more memory per task",
             minimum=1, metavar="N"),
    _setting("lam", float, 0.4, "weight lambda of the global terms of the objective (a set's proximities to and from the "
             "landmarks, against its own block); social takes 50: on sparse graphs the landmark and "
             "global terms carry most of the signal",
             minimum=0.0, metavar="LAMBDA"),
    _setting("eta", float, 0.1, "weight eta of the regularisation term; it scales with M's entries: 0.1 for the "
             "paper's M, about 1000 for the log-scaled walks of document-quality (chosen on validation folds)",
             minimum=0.0,
             exclusive_minimum=True, metavar="ETA"),
    _setting("iters", int, 100, "alternating least-squares rounds per set, each one pass over the set's rows of M; "
             "0 keeps the landmark-only start; social takes 5. The solve's time grows with it: each round "
             "is a pass over every set's rows", minimum=0, metavar="N"),
    _setting("seed", int, 0, "seed of the random partition, of sampled landmarks, of the anchor's "
             "per-component directions and of the row blocks' assignment of nodes",
             minimum=0, maximum=2**63 - 1, metavar="SEED"),
    _setting("directed", bool, False, "edges are directed: a line 'u v' means u -> v only",
             negative_flag="--undirected",
             negative_help="edges are undirected: a line 'u v' also means v -> u", fitted=True),
    _setting("input_format", str, "auto", "format of the edge input; auto picks it from the "
             "file extension, and looks inside a folder or a file without one (Parquet, or the separator of "
             "the first data line)", choices=FORMATS, scope=JOB),
    _setting("duplicates", str, "sum", "how repeated edges are merged: sum or max of their weights",
             choices=DUPLICATE_POLICIES, fitted=True),
    _setting("self_loops", str, "drop", "what to do with edges from a node to itself",
             choices=SELF_LOOP_POLICIES, fitted=True),
    _setting("bad_lines", str, "fail", "what to do with edge lines that cannot be parsed: "
             "fail the job or skip them", choices=BAD_LINE_POLICIES, scope=JOB),
    _setting("lp_max_iter", int, 10, "label propagation iterations, used with --partition LP; each is one "
             "join of the labels with every edge (a shuffle of the graph)",
             minimum=1, metavar="N"),
    _setting("dtype", str, "float64", "floating-point type of the per-set solve's rounds (the k x k "
             "factorisations and the output stay float64); float32 saved no time in the solver benchmark "
             "(the rounds are a quarter of a set's time), so keep float64",
             choices=DTYPES),
    _setting("landmark_factors", str, "M00", "landmark subspaces: M00 (the paper: the landmark block's "
             "singular vectors), rows (top eigenvectors of the landmark rows' and columns' Gram matrices "
             "S_A + M00 M00^T, S_B + M00^T M00; no extra cost; auto's with M = A + A^2) or walks (the same "
             "of the log-scaled A + A^2; costs k rows of A^2; auto's with M = I + A)",
             choices=FACTORISATIONS, fitted=True),
    _setting("propagation", int, 1, "Chebyshev terms of the spectral propagation applied after the "
             "per-set solve (ProNE's filter: 2 * T - 1 hops, 2 * T - 1 sparse products over the "
             "whole graph); 1 turns it off (the paper's SepNE). The embed job without "
             "--profile (auto) uses 3 at every size, 1 with --nodes: it embeds whole graphs only",
             minimum=1, maximum=30, metavar="T"),
    _setting("average_steps", int, 0, "steps of neighbourhood averaging, last: a vector e of the per-set "
             "solve (or of the refinement and propagation, when they run) L2-normalised becomes e + T e + ... + "
             "T^S e with T = D^-1 (I + A), one sparse product over the graph per step; 0 turns it off. Whole "
             "graphs only",
             minimum=0, maximum=20, metavar="S"),
    _setting("refine_steps", int, 0, "rounds of subspace iteration that refine the solve's vectors before "
             "the propagation (Q becomes the orthonormal basis of D^-1 (I + A) Q: one sparse product over the "
             "whole graph each); they draw the vectors towards the community structure that few landmarks "
             "miss; 0 turns it off. It embeds whole graphs only", minimum=0, maximum=100, metavar="S"),
    _setting("refine_operator", str, "transition", "the refinement's operator: transition (T = D^-1 (I + A)) "
             "or pmi, the one-hop log-ratio matrix log(max(vol * w(u,v) / (s_out(u) * s_in(v)), 1)) (the "
             "rounds then move the vectors towards its truncated SVD, as ProNE's base; one more copy of the "
             "graph's edges is stored by block)", choices=REFINE_OPERATORS),
    _setting("unreached", str, "zero", "nodes with an edge that no landmark reaches (a component without one): "
             "zero leaves their vectors at zero (the paper); anchor gives them the direction the other nodes use "
             "least, times --unreached-length, plus one unit direction per component. Last, whole graphs only",
             choices=UNREACHED),
    _setting("unreached_length", float, 1.0, "length of the shared direction of --unreached anchor, against "
             "the unit per-component direction (larger puts the unreached nodes closer together)",
             minimum=0.0, maximum=100.0, metavar="A"),
    _setting("propagation_mu", float, 0.2, "spectral shift mu of the propagation filter (ProNE's value; "
             "the filter passes the band of the Laplacian's spectrum around mu). Costs nothing; change it "
             "and theta only by measuring on your own validation labels",
             minimum=-1.0, maximum=2.0, metavar="MU"),
    _setting("propagation_theta", float, 0.5, "Bessel parameter theta of the propagation filter "
             "(larger smooths more)", minimum=0.0, exclusive_minimum=True, maximum=10.0, metavar="THETA"),
    _setting("propagation_blocks", int, 0, "row blocks of the sparse products after the solve "
             "(refinement, propagation, averaging); 0 picks them from the size (1 up to 100,000 "
             "nodes, else one per 512 MB of the n x d matrix in --propagation-dtype, at least 2). A "
             "product moves about 2 x blocks x n x d values; not used after a solve in one task",
             minimum=0, metavar="B"),
    _setting("propagation_dtype", str, "float32", "type the n x d matrices after the solve (refinement, "
             "propagation, averaging) are kept in between products by row blocks, and of the block "
             "products; the rest is float64. float64 doubles the bytes moved, for 1e-12 instead of "
             "1e-6 agreement with one task",
             choices=DTYPES),
    _setting("one_task_nodes", int, 100_000, "graphs of up to this many nodes, whose M has at most "
             "3 x 10^7 entries, are fitted and embedded in one Spark task with SciPy (seconds instead of "
             "minutes; a few GB of one Python worker's memory at the largest); larger graphs take the distributed "
             "stages. 0 always takes the distributed stages", minimum=0, metavar="N"),
    _setting("context", bool, False, "also write the context vectors C next to the embeddings (a second "
             "column of n x d values: twice the output; link prediction scores a pair u, v by embedding_u . context_v "
             "with them)",
             negative_flag="--no-context",
             negative_help="write only the embeddings", scope=JOB),
    _setting("spark", dict, {}, "Spark configuration, repeatable; merged over the profile's spark: block; "
             "given to the session the job builds, or, in a session already running (a notebook's, "
             "Spark Connect), set for the job's run where the session allows it (SQL settings) and "
             "named in a warning where it does not", metavar="KEY=VALUE", scope=JOB),
)

SETTING_NAMES: tuple[str, ...] = tuple(s.name for s in SETTINGS)

#: The shipped profiles whose values the settings reference shows: the two that
#: ``--profile auto`` chooses between (it changes some of their values by the graph's
#: size, see :func:`auto_profile`).
REFERENCE_PROFILES = ("document-quality", "social")


def reference_table() -> str:
    """README's settings reference, a Markdown table made from :data:`SETTINGS`: each
    setting's profile key, flag, Param, built-in default, the values of the profiles
    ``auto`` chooses between (:data:`REFERENCE_PROFILES`) and its help text."""

    def shown(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, dict):
            return ", ".join(f"{k}={v}" for k, v in value.items()) if value else ""
        return f"{value:,}" if isinstance(value, int) and abs(value) >= 10_000 else str(value)

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    profiles = {name: load_profile(name) for name in REFERENCE_PROFILES}
    head = ["profile key", "flag", "Param", "built-in"] + [f"`{name}`" for name in REFERENCE_PROFILES] + ["what it does"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in SETTINGS:
        flag = f"`{s.flag}`" + (f" / `{s.negative_flag}`" if s.negative_flag else "")
        values = [cell(shown(profiles[name][s.name])) if s.name in profiles[name] and
                  profiles[name][s.name] != s.default else "" for name in REFERENCE_PROFILES]
        param = f"`{s.param}`" if s.param else "(job only)"
        rows.append("| " + " | ".join([f"`{s.name}`", flag, param, cell(shown(s.default)), *values,
                                       cell(s.help)]) + " |")
    return "\n".join(rows) + "\n"


_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
#: The settings a fitted model holds: one estimator Param each, in schema order.
MODEL_SETTINGS: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.scope == MODEL)
_BY_PARAM: dict[str, Setting] = {s.param: s for s in MODEL_SETTINGS if s.param is not None}
#: The Params a fitted model holds fixed (``Setting.fitted``), in schema order.
FITTED_PARAMS: tuple[str, ...] = tuple(s.param for s in MODEL_SETTINGS if s.fitted and s.param is not None)
_RESERVED = ("extends",)  # profile keys that are not settings

# Names people write for a setting (the paper's symbols, singular/plural slips).
_ALIASES = {
    "lambda": "lam", "k": "landmarks", "d": "dim", "dimension": "dim", "dimensions": "dim",
    "iter": "iters", "iterations": "iters", "n_iter": "iters", "strategy": "landmark_strategy",
    "format": "input_format", "undirected": "directed", "contexts": "context",
    "num_landmarks": "landmarks", "n_landmarks": "landmarks", "setsize": "set_size",
    "lp_iters": "lp_max_iter", "lp_iter": "lp_max_iter", "conf": "spark", "spark_conf": "spark",
}

# Spark's own default for spark.redaction.regex, plus credentials.
#: Keys whose values are credentials: Spark's own default ``spark.redaction.regex``
#: (secret, password, token, access key) and the cloud stores' keys it misses (Azure's
#: ``fs.azure.account.key.*`` and SAS tokens, a GCS service account's private key,
#: S3's encryption key, credentials and API keys).
_SECRET_KEY = re.compile(
    r"secret|password|passwd|token|credential|(?:access|account|private|encryption|api)[._-]?key|(?:^|[.])sas(?:[.]|$)",
    re.IGNORECASE,
)

#: The Spark setting of a site's own pattern of secrets (Spark's ``spark.redaction.regex``).
REDACTION_KEY = "spark.redaction.regex"
#: Spark's default ``spark.redaction.regex``, which Spark applies to values too (a JDBC URL
#: with a password in it): used for values when the site sets no pattern of its own.
SPARK_REDACTION_DEFAULT = r"(?i)secret|password|token|access[.]key"


def _site_pattern(also: str) -> re.Pattern[str] | None:
    """A site's ``spark.redaction.regex`` (a Java pattern) for Python's ``re``: Java allows
    ``(?i)`` anywhere, Python only at the start, so every ``(?i)`` is dropped and the
    pattern compiled case-insensitive (as Spark's default is). None if it still does
    not compile."""
    try:
        return re.compile(also.replace("(?i)", ""), re.IGNORECASE)
    except re.error:
        return None


def is_secret_key(key: str, also: str | None = None, value: Any = None) -> bool:
    """Whether a Spark setting's value is not to be shown: its key matches
    :data:`_SECRET_KEY`, or the site's ``also`` (``spark.redaction.regex``; Spark's default
    without one) matches its key or its ``value`` (as Spark applies it: a JDBC URL
    holding ``password=``). A site pattern that Python cannot compile hides every
    ``spark.hadoop.*`` value (where the file systems' credentials are), rather than
    none."""
    if _SECRET_KEY.search(str(key)):
        return True
    pattern = _site_pattern(also or SPARK_REDACTION_DEFAULT)  # Spark's own default without a site's
    if pattern is None:
        return str(key).startswith("spark.hadoop.")
    return bool(pattern.search(str(key)) or (value is not None and pattern.search(str(value))))


def redacted(conf: Mapping[str, Any], also: str | None = None) -> dict[str, Any]:
    """``conf`` (Spark settings) with the values of keys that look like credentials
    (:func:`is_secret_key`, with ``also`` or the ``spark.redaction.regex`` that ``conf``
    itself sets) replaced by ``"*********"``, for logs and manifests."""
    also = also or conf.get(REDACTION_KEY)
    return {k: ("*********" if is_secret_key(k, also, v) else v) for k, v in conf.items()}


def redaction_pattern(conf: Mapping[str, Any], spark: Any = None) -> str | None:
    """The site's ``spark.redaction.regex`` for a run: the one its Spark settings
    ``conf`` give (a profile's ``spark:`` block and ``--spark``), else the session's."""
    if conf.get(REDACTION_KEY):
        return str(conf[REDACTION_KEY])
    if spark is None:
        return None
    try:
        return spark.conf.get(REDACTION_KEY, None)
    except Exception:  # noqa: BLE001 - a session that cannot read it
        return None


# ---------------------------------------------------------------------------
# Checking one value
# ---------------------------------------------------------------------------


class _Invalid(ValueError):
    """A value that breaks its setting's rule; the message says how, not where."""


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _show(value: Any) -> str:
    if value is None:
        return "null (no value)"
    return f"{value!r} ({type(value).__name__})"


def _coerce(s: Setting, value: Any, text: bool = False, api: bool = False) -> Any:
    """Check ``value`` against ``s`` and return it in canonical form.

    ``text`` is true for values from the command line: strings are then parsed as the
    setting's type. From YAML, values must already have the right type (a float
    setting also takes an int, and a string such as ``1e-3``, which YAML 1.1 reads as
    a string); an int setting never takes a bool. ``api`` is true for a Param's value
    in Python, where a float setting takes numbers only (as pyspark.ml's ``toFloat``).
    """
    if s.type is dict:
        return _coerce_spark(value)
    if s.type is bool:
        if isinstance(value, bool):
            return value
        if text and isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE:
                return True
            if word in _FALSE:
                return False
        raise _Invalid(f"expected true or false, got {_show(value)}")
    if s.choices is not None:
        if not isinstance(value, str):
            raise _Invalid(f"expected one of {', '.join(s.choices)}, got {_show(value)}")
        canonical = {c.lower(): c for c in s.choices}.get(value.strip().lower())
        if canonical is None:
            raise _Invalid(f"must be one of {', '.join(s.choices)}, got {value!r}")
        return canonical
    if s.type is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            number: float = int(value)
        elif text and isinstance(value, str):
            try:
                number = int(value.strip(), 10)
            except ValueError:
                raise _Invalid(f"expected an integer, got {value!r}") from None
        else:
            raise _Invalid(f"expected an integer, got {_show(value)}")
    elif s.type is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str) and not api:
            try:
                number = float(value.strip())
            except ValueError:
                raise _Invalid(f"expected a number, got {_show(value)}") from None
        else:
            raise _Invalid(f"expected a number, got {_show(value)}")
        if not math.isfinite(number):
            raise _Invalid(f"must be a finite number, got {value!r}")
    else:  # pragma: no cover - the schema only uses the types above
        raise TypeError(f"setting {s.name} has unsupported type {s.type!r}")
    too_low = s.minimum is not None and (
        number < s.minimum or (s.exclusive_minimum and number == s.minimum)
    )
    too_high = s.maximum is not None and number > s.maximum
    if too_low or too_high:
        raise _Invalid(f"must be {s.allowed()}, got {value!r}")
    return number


def _spark_value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise _Invalid(f"value of {key!r} must be a string, number or boolean, got {_show(value)}")


#: Spark settings that hold a size: a whole number and a unit (b, k, m, g, t, p, with or
#: without b), as Spark reads them; a bare number is MiB for the memories.
_SIZE_KEYS = frozenset({
    "spark.driver.memory", "spark.executor.memory", "spark.driver.memoryOverhead", "spark.executor.memoryOverhead",
    "spark.executor.pyspark.memory", "spark.driver.maxResultSize", "spark.python.worker.memory",
    "spark.memory.offHeap.size",
})
_SIZE = re.compile(r"([0-9]+)([kmgtp]?b?)", re.IGNORECASE)
#: The driver's memory as its JVM takes it (-Xmx, where the job starts the session): a
#: unit of one letter, no b; a bare number would be bytes.
_HEAP = re.compile(r"[0-9]+[kmgt]", re.IGNORECASE)
#: MiB in one unit of a size ("": Spark's MiB for the memories).
_MIB_PER_UNIT = {"b": 2.0 ** -20, "k": 2.0 ** -10, "": 1.0, "m": 1.0, "g": 2.0 ** 10, "t": 2.0 ** 20, "p": 2.0 ** 30}
#: The least heap Spark starts a driver or an executor with: 1.5 x its 300 MiB reserve.
_LEAST_HEAP_MIB = 450


def _checked_size(key: str, value: str) -> str:
    """``value`` of the Spark setting ``key``, refused here when it is no size Spark reads
    (``lots``, ``1.5g``), a driver heap its JVM does not take (``4096``, ``4gb``: the
    session the job starts passes it as ``-Xmx``) or a heap Spark cannot start
    (``spark.executor.memory=16``: 16 MiB): the JVM would fail to start, or the session,
    with a Java stack trace."""
    if key not in _SIZE_KEYS:
        return value
    if key == "spark.driver.memory" and not _HEAP.fullmatch(value.strip()):
        raise _Invalid(f"{key}={value!r} is not a heap size the driver's JVM takes: a whole number and a unit k, "
                       "m, g or t, such as 4g or 512m")
    found = _SIZE.fullmatch(value.strip())
    if not found:
        raise _Invalid(f"{key}={value!r} is not a size Spark reads: a whole number and a unit, such as 4g or 512m")
    if key in ("spark.driver.memory", "spark.executor.memory"):
        unit = found.group(2).lower()
        unit = unit if unit == "b" else unit.rstrip("b")  # kb is k, b alone bytes
        mib = int(found.group(1)) * _MIB_PER_UNIT[unit]
        if mib < _LEAST_HEAP_MIB:
            bare = "" if key == "spark.driver.memory" else "; a bare number is MiB"
            raise _Invalid(f"{key}={value} is less than Spark starts with ({_LEAST_HEAP_MIB}m{bare})")
    return value


def _spark_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip().startswith("spark."):
        raise _Invalid(f"{key!r} is not a Spark setting: keys start with 'spark.'")
    return key.strip()


def _spark_pair(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` from the command line."""
    key, sep, value = str(text).partition("=")
    if not sep:
        raise _Invalid(f"expected KEY=VALUE, got {text!r}")
    return _spark_key(key), _checked_size(_spark_key(key), value.strip())


def _coerce_spark(value: Any) -> dict[str, str]:
    """The ``spark`` setting: a mapping, or (command line) a list of pairs or KEY=VALUE."""
    if value is None:  # a spark: block whose entries are all commented out
        return {}
    if isinstance(value, Mapping):
        return {_spark_key(k): _checked_size(_spark_key(k), _spark_value(str(k), v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        out: dict[str, str] = {}
        for item in value:
            if isinstance(item, str):
                key, val = _spark_pair(item)
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                key, val = _spark_key(item[0]), _spark_value(str(item[0]), item[1])
            else:
                raise _Invalid(f"expected KEY=VALUE, got {_show(item)}")
            if key in out and out[key] != val:  # the last would win without a word
                raise _Invalid(f"{key} is given twice, as {out[key]!r} and {val!r}: give it once")
            out[key] = _checked_size(key, val)
        return out
    raise _Invalid(f"expected {_BY_NAME['spark'].allowed()}, got {_show(value)}")


def _named(norm: str) -> Setting | None:
    """The setting that ``norm`` (lower case, words joined by ``_``) names, exactly or by
    one of :data:`_ALIASES`."""
    return _BY_NAME.get(norm) or _BY_NAME.get(_ALIASES.get(norm, ""))


def _suggest(key: Any) -> str | None:
    """A hint for an unknown profile key: the closest valid key, or where it belongs."""
    text = str(key).strip()
    if text.startswith("spark."):
        return f"put {text!r} under 'spark:'"
    norm = text.lower().replace("-", "_").replace(" ", "_")
    named = _named(norm)
    if named is not None:
        return f"'{named.name}'"
    close = difflib.get_close_matches(norm, SETTING_NAMES + _RESERVED, n=1, cutoff=0.6)
    return f"'{close[0]}'" if close else None


def _unknown(key: Any, origin: str) -> UserError:
    hint = _suggest(key)
    did_you_mean = "" if not hint else f" ({hint})" if hint.startswith("put ") else f" (did you mean {hint}?)"
    valid = ", ".join(SETTING_NAMES + _RESERVED)
    return UserError(f"{origin}: unknown setting {key!r}{did_you_mean}; valid settings: {valid}")


def unknown_param_message(key: str, owner: str) -> str:
    """The message for a keyword argument ``key`` that is no Param of ``owner``: the Param
    meant when ``key`` is a setting's profile name (``set_size``), an alias (``k``) or
    close to a Param name, or the note that a job setting is not a Param."""
    norm = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key.strip()).lower().replace("-", "_")  # inputFormat too
    meant = _named(norm)
    by_lower = {p.lower(): p for p in _BY_PARAM}
    if meant is None and norm.replace("_", "") in by_lower:
        meant = _BY_PARAM[by_lower[norm.replace("_", "")]]
    if meant is not None and meant.param is None:
        hint = f"; {meant.name!r} is a setting of the jobs (a flag or a profile key), not a Param of {owner}"
    elif meant is not None:
        hint = f" (did you mean {meant.param!r}?)"
    else:
        close = difflib.get_close_matches(key, list(_BY_PARAM), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{owner}: unknown parameter {key!r}{hint}; its parameters are {', '.join(_BY_PARAM)}"


def _check_mapping(values: Mapping[Any, Any], origin: str) -> dict[str, Any]:
    """Validate a mapping of setting -> value (a profile); return canonical values."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(key, str) or key not in _BY_NAME:
            raise _unknown(key, origin)
        try:
            out[key] = _coerce(_BY_NAME[key], value)
        except _Invalid as exc:
            raise UserError(f"{origin}: {key!r}: {exc}") from None
    return out


def _check_combination(values: Mapping[str, Any], sources: Mapping[str, str] | None = None,
                       flags_only: bool = False) -> None:
    """Rules that involve more than one setting; with ``flags_only``, only those whose
    settings all come from flags (the profile is not chosen yet)."""
    def where(name: str) -> str:
        return f" ({sources[name]})" if sources and name in sources else ""

    def applies(*names: str) -> bool:
        return not flags_only or all(str((sources or {}).get(n, "")).startswith("from --") for n in names)

    if values["metric"] == "I+A" and values["window"] != 2 and applies("metric", "window"):
        raise UserError(
            f"window {values['window']}{where('window')} applies to metric A+A2 only "
            f"(M = A + ... + A^window); metric I+A{where('metric')} has no window"
        )
    if values["dim"] > values["landmarks"] and applies("dim", "landmarks"):
        raise UserError(
            f"dim {values['dim']}{where('dim')} is larger than landmarks {values['landmarks']}"
            f"{where('landmarks')}: the landmark embedding keeps at most k = landmarks dimensions"
        )


# ---------------------------------------------------------------------------
# The resolved settings
# ---------------------------------------------------------------------------


def _post_init(self: Any) -> None:
    for s in SETTINGS:
        try:
            value = _coerce(s, getattr(self, s.name))
        except _Invalid as exc:
            raise UserError(f"EmbedSettings.{s.name}: {exc}") from None
        object.__setattr__(self, s.name, value)
    _check_combination(dataclasses.asdict(self))


def _as_dict(self: Any, redact: bool = True, also: str | None = None) -> dict[str, Any]:
    """The settings as a plain, JSON-ready dict (for run manifests and fitted models).

    With ``redact`` (the default), values of Spark settings that look like credentials
    (:func:`redacted`, with the site's pattern ``also``) are replaced by ``"*********"``.
    """
    out = {s.name: getattr(self, s.name) for s in SETTINGS}
    out["spark"] = redacted(self.spark, also) if redact else dict(self.spark)
    return out


def _from_dict(cls: type, values: Mapping[str, Any]) -> Any:
    """Settings from :meth:`as_dict` output (e.g. a manifest); missing keys take defaults."""
    return cls(**_check_mapping(values, "settings"))


def _field(s: Setting) -> tuple[str, Any, Any]:
    annotation = "dict[str, str]" if s.type is dict else s.type.__name__
    if s.type is dict:
        # A dict field is excluded from the hash; compare=True keeps == exact.
        return s.name, annotation, dataclasses.field(default_factory=lambda d=s.default: dict(d), hash=False)
    return s.name, annotation, dataclasses.field(default=s.default)


#: All settings of one embedding run, resolved and validated. Frozen; built by
#: :func:`resolve`, or directly (``EmbedSettings(dim=64)``, validated the same way).
#: Its fields are :data:`SETTING_NAMES`, in schema order (the class's ``__doc__`` lists them).
EmbedSettings = dataclasses.make_dataclass(
    "EmbedSettings",
    [_field(s) for s in SETTINGS],
    frozen=True,
    namespace={
        "__module__": __name__,
        "__doc__": "All settings of one embedding run, resolved and validated (frozen).\n\n"
                   "Fields: " + ", ".join(SETTING_NAMES) + ".",
        "__post_init__": _post_init,
        "as_dict": _as_dict,
        "from_dict": classmethod(_from_dict),
    },
)


#: SepNE Param name (:class:`sepne_spark.model.SepNE`) -> setting name, for every setting
#: a fitted model holds (derived from :data:`SETTINGS`).
MODEL_PARAMS: dict[str, str] = {s.param: s.name for s in MODEL_SETTINGS if s.param is not None}


def setting(name: str) -> Setting:
    """The :class:`Setting` called ``name``: a profile key (``set_size``) or a Param
    name (``setSize``)."""
    found = _BY_NAME.get(name) or _BY_PARAM.get(name)
    if found is None:
        raise KeyError(f"no setting {name!r}")
    return found


def coerce_flag(name: str, value: Any) -> Any:
    """The value of setting ``name`` given as its flag's text (``"64"`` for ``--dim``)."""
    try:
        return _coerce(setting(name), value, text=True)
    except _Invalid as exc:
        raise SettingError(f"argument {setting(name).flag}: {exc}") from None


def model_params(settings: Any) -> dict[str, Any]:
    """The :class:`sepne_spark.model.SepNE` parameters of resolved ``settings``."""
    return {param: getattr(settings, name) for param, name in MODEL_PARAMS.items()}


def param_converter(s: Setting) -> Callable[[Any], Any]:
    """The ``typeConverter`` of the estimator Param of ``s``.

    It applies :func:`_coerce`, the rule of the flag and of the profile key, so
    ``SepNE(window=11)`` fails as ``--window 11`` does, with a :class:`SettingError`
    (a ``ValueError``) whose message names the Param and what is allowed.
    """
    return _ParamConverter(s.name)


class _ParamConverter:
    """:func:`param_converter`'s converter: a module-level class, so that an estimator
    pickles (``pickle.dumps(SepNE())``) as pyspark.ml's own converters do."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = f"to_{name}"

    def __call__(self, value: Any) -> Any:
        s = _BY_NAME[self.name]
        try:
            return _coerce(s, _plain(value), api=True)
        except _Invalid as exc:
            raise SettingError(f"{s.param}: {exc}") from None

    def __repr__(self) -> str:
        return f"param_converter({self.name!r})"


def _plain(value: Any) -> Any:
    """NumPy scalars as Python numbers (a Param may be set from an array element)."""
    item = getattr(value, "item", None)
    if item is not None and getattr(value, "shape", None) == ():
        return item()
    return value


# ---------------------------------------------------------------------------
# Profiles
# ---------------------------------------------------------------------------

_PROFILE_SUFFIXES = (".yaml", ".yml")
_MAX_EXTENDS_DEPTH = 8


def conf_dirs() -> list[Path]:
    """Folders searched for profiles given by name: ``$SEPNE_CONF_DIR`` (one or more
    folders, separated by ``os.pathsep``), then the checkout's ``conf/`` when running
    from a source tree, then the profiles shipped inside the installed package."""
    dirs = [Path(p).expanduser() for p in os.environ.get("SEPNE_CONF_DIR", "").split(os.pathsep) if p]
    checkout = Path(__file__).resolve().parent.parent / "conf"
    if checkout.is_dir():
        dirs.append(checkout)
    packaged = _packaged_profiles()
    if packaged is not None:
        dirs.append(packaged)
    return dirs


_PACKAGED: list[Path | None] = []
#: Where the profiles of a wheel imported from its zip file are (``.../x.whl/sepne_spark/profiles``),
#: when :func:`_packaged_profiles` copied them to a temporary folder.
_PACKAGED_ORIGIN: list[str] = []


def _packaged_profiles() -> Path | None:
    """The ``sepne_spark/profiles`` folder of an installed wheel.

    A wheel on ``spark-submit --py-files`` is imported from inside the zip file, where
    the YAML files are not plain files: they are then copied once to a private
    temporary folder so that profiles work the same way everywhere.
    """
    if _PACKAGED:
        return _PACKAGED[0]
    folder: Path | None = Path(__file__).resolve().parent / "profiles"
    if not folder.is_dir():
        folder = None
        try:
            from importlib.resources import files

            shipped = files("sepne_spark") / "profiles"
            entries = [e for e in shipped.iterdir() if e.name.endswith(_PROFILE_SUFFIXES)] if shipped.is_dir() else []
        except (OSError, ModuleNotFoundError, NotADirectoryError):
            entries = []
        if entries:
            import tempfile

            folder = Path(tempfile.mkdtemp(prefix="sepne-profiles-"))
            import atexit
            import shutil

            atexit.register(shutil.rmtree, folder, ignore_errors=True)  # the process's copy, gone with it
            for entry in entries:
                (folder / entry.name).write_text(entry.read_text(encoding="utf-8"), encoding="utf-8")
            _PACKAGED_ORIGIN.append(str(shipped))
    _PACKAGED.append(folder)
    return folder


def _available() -> list[str]:
    names: set[str] = set()
    for d in conf_dirs():
        if d.is_dir():
            names.update(p.stem for p in d.iterdir() if p.suffix in _PROFILE_SUFFIXES and p.is_file())
    return sorted(names)


def find_profile(path_or_name: str | os.PathLike[str], base: Path | None = None) -> Path:
    """The YAML file a profile argument refers to.

    A path (it has a folder separator or a ``.yaml``/``.yml`` suffix) is taken relative
    to ``base`` (the folder of a profile that ``extends:`` it) or the working directory.
    A bare name ``NAME`` is ``NAME.yaml`` (or ``.yml``) in ``base``, then in each of
    :func:`conf_dirs`.
    """
    text = os.fspath(path_or_name).strip()
    if not text:
        raise UserError("empty profile name")
    path = Path(text).expanduser()
    has_sep = "/" in text or os.sep in text
    candidates: list[Path] = []
    if has_sep or path.suffix in _PROFILE_SUFFIXES:
        if base is not None and not path.is_absolute():
            candidates.append(base / path)
        candidates.append(path)
        if not has_sep:  # "document.yaml": also look in the profile folders
            candidates += [d / text for d in conf_dirs()]
    else:
        folders = ([base] if base is not None else []) + conf_dirs()
        candidates += [d / (text + suffix) for d in folders for suffix in _PROFILE_SUFFIXES]
        candidates.append(path)  # a file without suffix in the working directory
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    available = _available()
    close = difflib.get_close_matches(path.stem if path.suffix in _PROFILE_SUFFIXES else text, available, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UserError(
        f"profile {text!r} not found{hint}; give a path to a YAML file or one of: "
        f"{', '.join(available) or '(none)'} (searched {', '.join(str(d) for d in conf_dirs())}), "
        f"or {AUTO_PROFILE}, chosen from the graph's size"
    )


class _ProfileLoader(yaml.SafeLoader):
    """Safe YAML loader that rejects a key written twice in one mapping."""


def _construct_mapping(loader: _ProfileLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:  # unhashable key; construct_mapping reports it
            continue
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice", key_node.start_mark
            )
    return loader.construct_mapping(node, deep=True)


_ProfileLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _read_yaml(path: Path) -> dict[Any, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read profile {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.load(text, Loader=_ProfileLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = exc.problem or exc.context or "syntax error"
        tag = re.search(r"constructor for the tag '([^']+)'", what)
        if tag:  # e.g. !!python/object/apply: the safe loader builds plain values only
            shown = re.sub(r"^tag:yaml\.org,2002:", "!!", tag.group(1))
            raise UserError(
                f"{path}: the YAML tag {shown}{at} is not allowed: a profile holds plain values only "
                "(strings, numbers, booleans, lists and mappings)"
            ) from None
        raise UserError(f"{path}: not valid YAML: {what}{at}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:  # empty file, or only comments
        return {}
    if not isinstance(data, dict):
        raise UserError(f"{path}: a profile is a mapping of 'setting: value' lines, got {type(data).__name__}")
    return data


def _merge(parent: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """``child`` over ``parent``; the ``spark`` mappings are merged key by key."""
    out = dict(parent)
    out.update(child)
    if "spark" in parent and "spark" in child:
        out["spark"] = {**parent["spark"], **child["spark"]}
    return out


def _load(path: Path, chain: tuple[Path, ...], above_auto: bool = False) -> dict[str, Any] | None:
    """The settings of the profile at ``path``, ``extends`` applied (``chain``: the
    profiles that extend it, for cycles). ``extends: auto`` stands for the default
    profile (what ``auto`` is until the graph is known); with ``above_auto``, for no
    settings at all, and a profile that does not extend ``auto`` gives None."""
    path = path.resolve()
    if path in chain:
        cycle = " -> ".join(str(p) for p in chain[chain.index(path):] + (path,))
        raise _Cycle(f"profiles extend each other in a cycle: {cycle}", path)
    if len(chain) >= _MAX_EXTENDS_DEPTH:
        raise UserError(f"{path}: profiles extend each other more than {_MAX_EXTENDS_DEPTH} levels deep")
    raw = _read_yaml(path)
    parent_ref = raw.pop("extends", None)
    own = _check_mapping(raw, str(path))
    if parent_ref is None:
        return None if above_auto else own
    if not isinstance(parent_ref, str) or not parent_ref.strip():
        raise UserError(f"{path}: 'extends': expected a profile name or path, got {_show(parent_ref)}")
    parent: dict[str, Any] | None
    if parent_ref.strip().lower() == AUTO_PROFILE:
        parent = {} if above_auto else _before_auto(path, chain)
    else:
        try:
            found = find_profile(parent_ref, base=path.parent)
        except UserError as exc:  # the file whose extends: names it is the one to mend
            raise UserError(f"{path}: 'extends': {exc}") from None
        if found.resolve() == path:  # a site's default.yaml that extends default: the one it hides
            found = _hidden_by(path, parent_ref.strip()) or found
        parent = _load(found, chain + (path,), above_auto)
        if parent is None:
            return None
    return extend(parent, own, str(path))


class _Cycle(UserError):
    """Profiles that extend each other in a cycle; ``path`` is the one met twice."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


def _before_auto(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    """What ``extends: auto`` in the profile at ``path`` stands on until the graph is
    known: the default profile, as for ``auto`` itself; where the default profile is
    ``path`` or extends it (a site's ``default.yaml`` over auto, directly or through
    other profiles), the default profile it hides (the shipped one), or no settings."""
    try:
        found = find_profile("default").resolve()
    except UserError:
        return {}
    try:
        return _load(found, chain + (path,)) or {}
    except _Cycle as exc:
        if exc.path not in (path, *chain):  # a cycle of the default profile's own
            raise
        hidden = _hidden_by(found, "default")
        return {} if hidden is None else _load(hidden, chain + (path,)) or {}


def extend(parent: Mapping[str, Any], own: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The settings ``own`` over ``parent``, as a profile's over the profile it extends:
    the ``spark`` mappings merged key by key, and of the metric and the walk window the
    one ``own`` gives wins (:func:`given_wins`; ``what`` names ``own`` in the log)."""
    merged = _merge(parent, own)
    gave = given_wins(merged, own)  # as a flag over a profile (resolve)
    if gave == "window":
        del merged["window"]
        log.info("%s: metric I+A drops the walk window of the profile it extends", what)
    elif gave == "metric":
        log.info("%s: window %d makes the metric I+A of the profile it extends A+A2", what, own["window"])
    return merged


def _hidden_by(path: Path, name: str) -> Path | None:
    """The profile ``name`` that ``path`` (a profile of the same name: a site's in
    :func:`conf_dirs`, or a file given by its path) stands in for: the next one of that
    name in the folders after it, or the first when ``path`` is in none of them; None
    if there is none. ``extends: NAME`` in the site's ``NAME.yaml`` means that one."""
    if "/" in name or os.sep in name or Path(name).suffix in _PROFILE_SUFFIXES:
        return None
    found = [c for folder in conf_dirs() for c in (folder / (name + sfx) for sfx in _PROFILE_SUFFIXES) if c.is_file()]
    mine = [i for i, c in enumerate(found) if c.resolve() == path]
    later = [c for c in found[mine[0] + 1:] if c.resolve() != path] if mine else found
    return later[0] if later else None


def given_wins(values: dict[str, Any], given: Collection[str]) -> str | None:
    """The metric and the walk window go together: of the two, the one given (a flag
    over a profile, a profile's own key over the profile it extends, a keyword of
    ``SepNE.fromProfile`` over its profile) wins, and the other gives way. Metric I+A
    given drops a window above 2 that was not (window 2); a window above 2 given makes
    a metric I+A that was not A+A2.

    ``values`` holds settings by name (a metric or window it lacks is the built-in one)
    and is changed in place. Returns the setting that gave way, ``"window"`` or
    ``"metric"``, or None.
    """
    metric = values.get("metric", _BY_NAME["metric"].default)
    window = values.get("window", _BY_NAME["window"].default)
    if metric != "I+A" or window == 2 or ("metric" in given) == ("window" in given):
        return None
    if "metric" in given:
        values["window"] = 2
        return "window"
    values["metric"] = "A+A2"
    return "metric"


#: The job's default profile: one of the shipped profiles, chosen from the graph's size.
AUTO_PROFILE = "auto"
#: Graphs of up to this many nodes (citation-network size) get :data:`AUTO_SMALL`.
AUTO_SMALL_NODES = 5_000
#: Above this estimated number of entries of M the small-graph walk window is shortened.
AUTO_MAX_ENTRIES = 6_000_000
#: Larger graphs get two-hop proximity while their two-step walks, sum of d(v)^2, stay
#: within this many; else M = I + A.
AUTO_MAX_TWO_STEP_WALKS = 30_000_000
#: From this many nodes on, the M = I + A tier takes 2,000 landmarks instead of 1,000.
AUTO_MORE_LANDMARKS_NODES = 50_000
#: Up to this many nodes (the propagation's one-task bound) the two-hop tier refines by
#: :data:`AUTO_LOG_RATIO_ROUNDS` rounds of the one-hop log-ratio matrix instead of the
#: profile's rounds of the transition matrix.
AUTO_LOG_RATIO_NODES = 100_000
AUTO_LOG_RATIO_ROUNDS = 64
#: ... followed by this many steps of neighbourhood averaging of the filter's output
#: (finding 17) ...
AUTO_LOG_RATIO_AVERAGE_STEPS = 3
#: ... or by :data:`AUTO_DENSE_AVERAGE_STEPS` on a graph of at least this mean degree
#: (edge rows per node): the sparser the graph, the more steps it wants (finding 27).
AUTO_LOG_RATIO_DENSE_DEGREE = 16
#: The M = I + A tier takes :data:`AUTO_SPREAD_ROUNDS` refinement rounds instead of the
#: profile's 8 when the degree spread ``n sum(d^2) / (sum d)^2`` is above
#: :data:`AUTO_SPREAD` (graphs with hubs; power iteration there drifts towards
#: eigenvectors held by small pieces of the graph). Measured from 10,000 to 10^6 nodes
#: (benchmarks/LARGE_GRAPH_STUDY.md, findings 20 and 21).
AUTO_SPREAD = 2.0
AUTO_SPREAD_ROUNDS = 4
#: ... except that up to :data:`AUTO_LOG_RATIO_NODES` nodes an I + A graph of at least this
#: mean degree (edge rows per node) takes :data:`AUTO_LOG_RATIO_ROUNDS` rounds of the
#: one-hop log-ratio matrix instead of its transition rounds (dense graphs, such as
#: social networks of overlapping communities: benchmarks/LARGE_GRAPH_STUDY.md, findings
#: 22 and 23).
AUTO_DENSE_DEGREE = 24
#: ... followed there by this many steps of neighbourhood averaging of the filter's
#: output (finding 26).
AUTO_DENSE_AVERAGE_STEPS = 1
AUTO_SMALL, AUTO_LARGE = "document-quality", "social"


def degree_spread(nodes: int, edge_rows: int, degree_squares: int) -> float:
    """``n sum(d^2) / (sum d)^2`` of the out-degrees: 1 for a regular graph, one plus the
    squared coefficient of variation of the degrees in general."""
    return nodes * degree_squares / max(edge_rows, 1) ** 2


def auto_profile(nodes: int, edge_rows: int, two_step_walks: int | None = None,
                 degree_squares: int | None = None) -> tuple[str, dict[str, Any]]:
    """The profile ``--profile auto`` (the embed job's default) uses for a graph, and
    the settings it changes; chosen on validation folds (benchmarks/LARGE_GRAPH_STUDY.md).

    Parameters
    ----------
    nodes, edge_rows : int
        Nodes and directed edge rows (an undirected edge counts twice) of the graph.
    two_step_walks : int, optional
        Walks of two steps: the sum over the nodes of in-degree x out-degree (the entries
        of A^2 at most), the sum of the squared degrees on an undirected graph; needed
        unless the graph is a sparse one of up to :data:`AUTO_SMALL_NODES` nodes (see
        :func:`auto_needs_walks`).
    degree_squares : int, optional
        The sum of the squared out-degrees, for :func:`degree_spread`; by default
        ``two_step_walks``, which it equals on an undirected graph.

    Returns
    -------
    (str, dict)
        * Up to :data:`AUTO_SMALL_NODES` nodes, when M's estimated size ``n * min(n,
          dbar^T)`` (dbar the mean out-degree) stays within :data:`AUTO_MAX_ENTRIES` for a
          walk window T of at least 3: ``document-quality`` (A + ... + A^5, log scaling,
          250 GDS landmarks, three-term propagation, six averaging steps), T the largest of
          5 .. 3 that fits;
          landmarks at most half the nodes and dim at most the landmarks, for tiny graphs.
        * Otherwise (larger graphs, and small ones too dense for walks of 3 steps, where
          document-quality scores far lower on validation): ``social`` (1,000 landmarks,
          at most half the nodes, lambda 50, eta 1, 5 rounds, sets of 2,000, three-term
          propagation), with M = A + A^2, the log scaling and the landmark-row
          factorisation while the two-step walks stay within
          :data:`AUTO_MAX_TWO_STEP_WALKS` (and, up to :data:`AUTO_LOG_RATIO_NODES` nodes,
          :data:`AUTO_LOG_RATIO_ROUNDS` refinement rounds by the one-hop log-ratio
          matrix in place of the profile's 8 by the transition matrix, and
          :data:`AUTO_LOG_RATIO_AVERAGE_STEPS` averaging steps last, or
          :data:`AUTO_DENSE_AVERAGE_STEPS` from a mean degree of
          :data:`AUTO_LOG_RATIO_DENSE_DEGREE`); otherwise the
          profile's M = I + A with the landmark subspaces of the two-step walks
          (``landmark_factors: walks``, from the k landmark rows of A^2 only), from
          :data:`AUTO_MORE_LANDMARKS_NODES` nodes 2,000 landmarks, and, up to
          :data:`AUTO_LOG_RATIO_NODES` nodes when the mean degree is at least
          :data:`AUTO_DENSE_DEGREE`, :data:`AUTO_LOG_RATIO_ROUNDS` refinement rounds by
          the one-hop log-ratio matrix and :data:`AUTO_DENSE_AVERAGE_STEPS` averaging
          step last, otherwise :data:`AUTO_SPREAD_ROUNDS` refinement
          rounds instead of 8 when the :func:`degree_spread` is above :data:`AUTO_SPREAD`.
    """
    window = _auto_window(nodes, edge_rows)
    if window is None:
        if two_step_walks is None:
            raise ValueError(f"auto_profile needs the two-step walk count of a graph of {nodes} nodes and "
                             f"{edge_rows} edge rows")
        over: dict[str, Any] = {}
        if two_step_walks <= AUTO_MAX_TWO_STEP_WALKS:
            over = {"metric": "A+A2", "scaling": "log", "landmark_factors": "rows"}
            if nodes <= AUTO_LOG_RATIO_NODES:
                dense = edge_rows >= AUTO_LOG_RATIO_DENSE_DEGREE * nodes
                over.update(refine_operator="pmi", refine_steps=AUTO_LOG_RATIO_ROUNDS,
                            average_steps=AUTO_DENSE_AVERAGE_STEPS if dense else AUTO_LOG_RATIO_AVERAGE_STEPS)
        else:
            if nodes >= AUTO_MORE_LANDMARKS_NODES:
                over["landmarks"] = 2000
            if nodes <= AUTO_LOG_RATIO_NODES and edge_rows >= AUTO_DENSE_DEGREE * nodes:
                over.update(refine_operator="pmi", refine_steps=AUTO_LOG_RATIO_ROUNDS,
                            average_steps=AUTO_DENSE_AVERAGE_STEPS)
            elif degree_spread(nodes, edge_rows, two_step_walks if degree_squares is None else degree_squares) \
                    > AUTO_SPREAD:
                over["refine_steps"] = AUTO_SPREAD_ROUNDS
        base = load_profile(AUTO_LARGE)
        return AUTO_LARGE, {**over, **_tiny(nodes, base, over)}
    over = {}
    base = load_profile(AUTO_SMALL)
    if window != base.get("window", _BY_NAME["window"].default):
        over["window"] = window
    return AUTO_SMALL, {**over, **_tiny(nodes, base, over)}


def _auto_window(nodes: int, edge_rows: int) -> int | None:
    """The document-quality walk window that keeps M within :data:`AUTO_MAX_ENTRIES`
    (the profile's 5 down to 3), or None when the graph is too large or too dense."""
    if nodes > AUTO_SMALL_NODES:
        return None
    dbar = edge_rows / max(nodes, 1)
    top = int(load_profile(AUTO_SMALL).get("window", _BY_NAME["window"].default))
    return next((t for t in range(top, 2, -1) if nodes * min(nodes, dbar ** t) <= AUTO_MAX_ENTRIES), None)


def auto_needs_walks(nodes: int, edge_rows: int) -> bool:
    """Whether :func:`auto_profile` needs the two-step walk count for this graph."""
    return _auto_window(nodes, edge_rows) is None


def _tiny(nodes: int, base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Landmarks at most half the nodes, and dim at most the landmarks."""
    k = int(over.get("landmarks", base.get("landmarks", _BY_NAME["landmarks"].default)))
    if k <= nodes // 2:
        return {}
    k = max(1, nodes // 2)
    return {"landmarks": k, "dim": min(int(base.get("dim", _BY_NAME["dim"].default)), k)}


def auto_with_landmarks(changed: Mapping[str, Any], base: Mapping[str, Any], landmarks: int) -> dict[str, Any]:
    """:func:`auto_profile`'s changes when the user gives the landmark count (and not the
    dim): the dim is the profile's, or the given count when that is smaller (the vectors
    have at most as many dimensions as there are landmarks), also where ``auto`` had
    narrowed it to its own landmarks for a tiny graph."""
    out = {k: v for k, v in changed.items() if k != "landmarks"}
    usual = int(base.get("dim", _BY_NAME["dim"].default))
    if "dim" in out or int(landmarks) < usual:
        out["dim"] = min(usual, int(landmarks))
    return out


def over_auto(chosen: str, changed: Mapping[str, Any], own: Mapping[str, Any], what: str,
              landmarks: int | None = None, dim_given: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings of ``auto``'s choice for a graph (the profile ``chosen`` with
    :func:`auto_profile`'s ``changed``), with a profile's own entries ``own`` over them
    (:func:`auto_extension`; ``what`` names it in the log), as over a profile it extends.

    ``landmarks`` given (or ``own``'s) without a dim, given or ``own``'s, bound the dim
    as :func:`auto_with_landmarks` does. Returns the chosen profile's settings and the
    settings in all.
    """
    base = load_profile(chosen)
    landmarks = own.get("landmarks") if landmarks is None else landmarks
    if landmarks is not None and not dim_given and "dim" not in own:
        changed = auto_with_landmarks(changed, base, landmarks)
    return base, extend({**base, **changed}, own, what)


def profile_label(path_or_name: str | os.PathLike[str] | None) -> str:
    """The file a profile argument names (``auto`` and None: the default profile's), for
    messages and run manifests; the argument itself when no file is found."""
    text = "default" if path_or_name is None else os.fspath(path_or_name).strip()
    try:
        found = find_profile("default" if text.lower() == AUTO_PROFILE else text).resolve()
    except UserError:
        return text
    copy = _packaged_profiles() if _PACKAGED_ORIGIN else None
    if copy is not None and found.parent == copy.resolve():  # the process's copy is gone with it: the wheel's file
        return f"{_PACKAGED_ORIGIN[0].rstrip('/')}/{found.name}"
    return str(found)


def load_profile(path_or_name: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Read and validate a profile; return its settings (``extends`` applied).

    ``path_or_name`` is a path to a YAML file or a profile name (``document``,
    ``document-quality``, ``social``, ``yarn``, ``default``, or any ``NAME.yaml`` in
    ``$SEPNE_CONF_DIR``).
    ``None`` means the ``default`` profile (or no settings at all if there is none);
    so does ``auto`` (:data:`AUTO_PROFILE`) until the job knows the graph's size and
    takes :func:`auto_profile`'s choice. The result holds only the settings the profile
    (or what it extends) sets, in canonical form; :func:`resolve` fills in the rest.
    """
    if path_or_name is not None and os.fspath(path_or_name).strip().lower() == AUTO_PROFILE:
        path_or_name = None
    if path_or_name is None:
        try:
            path = find_profile("default")
        except UserError:
            return {}
    else:
        path = find_profile(path_or_name)
    return _load(path, ()) or {}


def auto_extension(path_or_name: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """What a profile sets over ``auto``'s choice, or None for a profile that does not
    extend ``auto``.

    ``auto`` itself sets nothing over its choice (``{}``). A profile with ``extends:
    auto`` (directly, or through profiles that do) takes the settings ``auto`` picks from
    the graph's size, with its own entries over them: ``yarn`` adds only its ``spark``
    block. Until the graph is known such a profile stands, as ``auto`` does, on the
    default profile (:func:`load_profile`).
    """
    if path_or_name is None:
        return None
    if os.fspath(path_or_name).strip().lower() == AUTO_PROFILE:
        return {}
    return _load(find_profile(path_or_name), (), above_auto=True)


def is_auto(path_or_name: str | os.PathLike[str] | None) -> bool:
    """Whether a profile's settings are chosen from the graph's size: ``auto``, or a
    profile that extends it (:func:`auto_extension`)."""
    return auto_extension(path_or_name) is not None


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def _arg_type(s: Setting):
    def parse(text: str) -> Any:
        try:
            return _spark_pair(text) if s.type is dict else _coerce(s, text, text=True)
        except _Invalid as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = s.type.__name__
    return parse


def _escape(text: str) -> str:
    return text.replace("%", "%%")  # argparse %-formats help strings


def add_arguments(
    parser: argparse.ArgumentParser,
    names: Sequence[str] | None = None,
    title: str = "embedding settings",
    description: str = ("A flag overrides the profile's value, which overrides the built-in default shown. "
                        "The profile auto (and yarn, which extends it) replaces many of these defaults by the "
                        "graph's size; the log and the output's _manifest.json give the values a run used."),
) -> None:
    """Add one flag per setting to ``parser``, in a group ``title``.

    Every flag defaults to ``None`` (not given), so that :func:`resolve` can tell a
    flag from the profile's value. Booleans get two flags (``--directed`` /
    ``--undirected``, ``--context`` / ``--no-context``); ``--spark KEY=VALUE`` may be
    repeated. Bad values stop argparse with a message naming the flag. ``names`` (profile
    keys) limits the flags to those settings, in the schema's order.
    """
    group = parser.add_argument_group(title, description)
    names = None if names is None else tuple(names)
    unknown = set(names or ()) - set(SETTING_NAMES)
    if unknown:
        raise ValueError(f"not settings: {', '.join(sorted(unknown))}")
    for s in SETTINGS:
        if names is not None and s.name not in names:
            continue
        if s.type is bool:
            pair = group.add_mutually_exclusive_group()
            pair.add_argument(s.flag, dest=s.name, action="store_const", const=True, default=None,
                              help=_escape(f"{s.help} (default: {s.default_text()})"))
            pair.add_argument(s.negative_flag, dest=s.name, action="store_const", const=False,
                              default=None, help=_escape(s.negative_help or f"not {s.flag}"))
            continue
        metavar = s.metavar or ("{" + ",".join(s.choices) + "}" if s.choices else s.name.upper())
        if s.type is dict:
            extra = "default: none"
        else:
            extra = f"{s.allowed()}; default: {s.default_text()}"
        group.add_argument(
            s.flag, dest=s.name, type=_arg_type(s), default=None, metavar=metavar,
            action="append" if s.type is dict else "store",
            help=_escape(f"{s.help} ({extra})"),
        )


def resolve(
    args: argparse.Namespace | Mapping[str, Any] | None,
    profile: Mapping[str, Any] | None = None,
    *,
    provisional: bool = False,
    profile_name: str | None = None,
) -> EmbedSettings:
    """Combine built-in defaults < ``profile`` < command-line ``args`` into settings.

    ``args`` is the namespace from a parser set up by :func:`add_arguments` (other
    attributes are ignored), or a dict of setting name -> value; ``None`` values mean
    "not given". Strings are parsed as from the command line, and errors (a
    :class:`SettingError`) name the flag, also for a dict (the jobs pass their flags so).
    ``profile`` is what :func:`load_profile` returned (checked again here). Spark
    settings are merged key by key: flags over the profile's ``spark:`` block.

    A flag wins over the profile together with what depends on it: ``metric I+A``
    given as a flag drops the profile's walk window, and a window above 2 given as a
    flag makes the profile's metric I+A into A+A2 (each said in the log).

    ``provisional``: the profile is not the one the run will use (``auto`` before the
    graph's size is known): only the rules among the flags themselves are checked, and
    nothing is warned about.

    ``profile_name``: the profile argument ``profile`` was read from; an error about
    settings from it names its file (:func:`profile_label`).
    """
    given: Mapping[str, Any] = vars(args) if isinstance(args, argparse.Namespace) else (args or {})
    values: dict[str, Any] = {
        s.name: (dict(s.default) if s.type is dict else s.default) for s in SETTINGS
    }
    sources = {name: "built-in default" for name in SETTING_NAMES}
    where = f"from the profile {profile_label(profile_name)}" if profile_name else "from the profile"
    for name, value in _check_mapping(profile or {}, "profile").items():
        values[name] = value
        sources[name] = where
    for s in SETTINGS:
        value = given.get(s.name)
        if value is None:
            continue
        try:
            value = _coerce(s, value, text=True)
        except _Invalid as exc:
            raise SettingError(f"argument {s.flag}: {exc}") from None
        if s.type is dict:
            values[s.name] = {**values[s.name], **value}
        else:
            values[s.name] = value
        sources[s.name] = f"from {s.flag}"
    gave = given_wins(values, {name for name, where in sources.items() if where.startswith("from --")})
    if gave == "window":
        log.info("window %d (%s) applies to metric A+A2 only: %s %s drops it",
                 (profile or {}).get("window", _BY_NAME["window"].default),
                 sources["window"].replace("from ", ""), _BY_NAME["metric"].flag, values["metric"])
        sources["window"] = sources["metric"]
    elif gave == "metric":
        if not provisional:
            log.info("%s %d asks for walks of up to %d steps: metric A+A2 in place of the profile's I+A",
                     _BY_NAME["window"].flag, values["window"], values["window"])
        sources["metric"] = sources["window"]
    if provisional:
        _check_combination(values, sources, flags_only=True)
        if values["dim"] > values["landmarks"]:  # the profile's side gives way until the profile is chosen
            if sources["dim"].startswith("from --"):
                values["landmarks"] = values["dim"]
            else:
                values["dim"] = values["landmarks"]
    else:
        check_together(values, sources)
    return EmbedSettings(**values)


#: Settings that another setting's value leaves unused: (name, unused(values), why(values)).
_UNUSED_WHEN: tuple[tuple[str, Callable[[Mapping[str, Any]], bool], Callable[[Mapping[str, Any]], str]], ...] = (
    ("refine_operator", lambda v: v["refine_steps"] == 0, lambda v: "refine_steps is 0 (no refinement)"),
    ("lp_max_iter", lambda v: v["partition"] != "LP", lambda v: f"partition is {v['partition']}, not LP"),
    ("unreached_length", lambda v: v["unreached"] != "anchor", lambda v: f"unreached is {v['unreached']}"),
    ("propagation_mu", lambda v: v["propagation"] <= 1, lambda v: "propagation is 1 (no filter)"),
    ("propagation_theta", lambda v: v["propagation"] <= 1, lambda v: "propagation is 1 (no filter)"),
)


def check_together(values: Mapping[str, Any], sources: Mapping[str, str] | None = None) -> None:
    """The rules and warnings that involve more than one setting (by setting name),
    as :func:`resolve` applies them; ``sources`` says where each value came from, for
    the messages. Raises :class:`UserError` for a combination that cannot run."""
    _check_combination(values, sources)
    if values["partition"] != "IO" and values["set_size"] < values["landmarks"]:
        log.warning(
            "set_size %d is below landmarks %d: each set's solve will be dominated by its "
            "k x k factorisation; sets of at least k nodes use the machine better",
            values["set_size"], values["landmarks"],
        )
    if values["landmark_strategy"] == "GDS" and values["metric"] == "I+A" and values["dim"] < values["landmarks"]:
        log.warning("landmark_strategy GDS with metric I+A gives a nearly diagonal M00; "
                    "prefer A+A2, or dim = landmarks")
    # given as a flag ("from --flag"), or as a keyword of SepNE.fromProfile ("given")
    given = {name: str(where) for name, where in (sources or {}).items()
             if str(where).startswith("from --") or where == "given"}
    for name, unused, why in _UNUSED_WHEN:
        if name in given and unused(values):
            label = _BY_NAME[name].flag if given[name].startswith("from --") else f"{_BY_NAME[name].param}="
            log.warning("%s%s%s is not used: %s", label, "" if label.endswith("=") else " ", values[name],
                        why(values))
