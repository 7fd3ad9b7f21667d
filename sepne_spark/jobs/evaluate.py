"""Evaluate node embeddings: node classification, reconstruction R^2, link prediction.

Tasks (a subcommand, or ``--task NAME``)::

    # micro/macro-F1 of one-vs-rest logistic regression (the SepNE paper's protocol)
    sepne-evaluate classify --embeddings out/emb.parquet \\
        --labels /data/cora/labels.tsv --ratios 0.1,0.9 --splits 10 --json cora.json

    # R^2 of W C^T against the proximity matrix M of the graph (M as in the
    # embeddings' _manifest.json; --metric, --window, --scaling, ... override it)
    sepne-evaluate reconstruct --edges /data/cora/edges.tsv \\
        --embeddings out/emb

    # AUC of held-out edges against sampled non-edges, embedding with SepNE
    sepne-evaluate linkpred --edges /data/cora/edges.tsv --fraction 0.1

Embeddings are Parquet with columns ``id``, ``embedding`` (array or ML vector) and
optionally ``context``. Ids are matched to the labels and edge files as strings.
Edge lists are read as the embed job reads ``--input`` (:func:`sepne_spark.graph.load_graph`).
``classify`` brings only the labelled nodes' vectors to the driver. ``reconstruct``
computes the exact R^2 over every entry of M either way: up to ``--driver-max-nodes``
nodes (``--method driver``) it brings the merged edges and the graph's nodes' vectors
into the driver and builds a sparse M there; above it (``--method spark``) it stays in
Spark: M's entries are built as the embed job builds them, W C^T is formed at them
as block products (one task per pair of node blocks), and only a few sums and two
d x d Gram matrices reach the driver.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sepne_spark.errors import DuplicateIdsError, InputError
from sepne_spark.progress import stage
from sepne_spark.reading import spark_error_text
from sepne_spark.sparse import sparse_proximity
from sepne_spark.jobs.common import (
    NODE_WORDS,
    JobArgumentParser,
    UserError,
    add_read_arguments,
    auto_settings,
    check_edge_folders,
    check_input_format,
    check_input_head,
    check_inputs_exist,
    emit_json,
    given_flags,
    given_read_options,
    input_fingerprint,
    is_local_path,
    local_data_files,
    local_path,
    parquet_magic,
    profile_arg,
    profile_names,
    qualify_paths,
    read_options,
    run_job,
    session_settings,
    settings_checked_quietly,
    show_profile_defaults,
)

log = logging.getLogger("sepne_spark.jobs.evaluate")

TASKS = ("classify", "reconstruct", "linkpred")
VECTORS = ("embedding", "context", "concat", "sum")

# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def _ratios(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values or any(not 0.0 < v < 1.0 for v in values):
        raise argparse.ArgumentTypeError(f"train ratios must be in (0, 1), got {text!r}")
    return list(dict.fromkeys(values))  # a ratio given twice is evaluated once


def _bounded(convert: Callable[[str], Any], ok: Callable[[Any], bool], words: str) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)``, refused unless ``ok`` ("must be {words}")."""
    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"must be {words}, got {text!r}")
        return value
    return parse


#: A whole number of at least 1 (splits, samples, nodes).
_count = _bounded(int, lambda v: v >= 1, "a whole number >= 1")
#: The held-out fraction of the edges.
_fraction = _bounded(float, lambda v: 0.0 < v < 1.0, "a number in (0, 1)")


class _Retired(argparse.Action):
    """An option a task no longer has (or never had, where another job has it): using
    it is an error that says why."""

    def __init__(self, option_strings: Sequence[str], dest: str, why: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs="?", **kw)
        self.why = why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(f"{option_string}: {self.why}")


_seed = _bounded(int, lambda v: 0 <= v < 2 ** 63, "an integer from 0 to 2^63-1")


def _task_alias(argv: Sequence[str]) -> list[str]:
    """Turn ``--task NAME`` / ``--task=NAME`` anywhere into the ``NAME`` subcommand; a
    task given both ways must be the same one."""
    argv = list(argv)
    for i, a in enumerate(argv):
        if a == "--task" and i + 1 < len(argv):
            name, rest = argv[i + 1], argv[:i] + argv[i + 2:]
        elif a.startswith("--task="):
            name, rest = a.split("=", 1)[1], argv[:i] + argv[i + 1:]
        else:
            continue
        if rest and rest[0] in TASKS:
            if rest[0] != name:
                raise UserError(f"the task is given twice, as {rest[0]} and as --task {name}: give one")
            rest = rest[1:]
        return [name] + rest
    return argv


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``--help`` lists every option with its default)."""
    p = JobArgumentParser(
        prog="sepne-evaluate",
        description="Evaluate node embeddings by node classification, reconstruction R^2 "
        "or link prediction. Give the task as a subcommand or with --task NAME.",
    )
    # --task NAME becomes the subcommand before parsing (_task_alias); declared here, hidden,
    # so that a mistyped --task is told its name
    p.add_argument("--task", help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="task", metavar="TASK", required=True,
                           help="one of: " + ", ".join(TASKS) + " (also accepted as --task TASK)")

    c = sub.add_parser("classify", help="micro/macro-F1 of one-vs-rest logistic regression",
                       description="Node classification with one-vs-rest L2 logistic regression "
                       "(C=1) on L2-normalised embeddings over random train/test splits.")
    c.add_argument("--embeddings", required=True, metavar="PARQUET",
                   help="embeddings: columns id, embedding [, context]")
    c.add_argument("--labels", required=True, metavar="PATH",
                   help="labels: a node<TAB>label text file (one line per (node, label); .gz, .bz2, .xz "
                        "read as such), a Parquet file of two columns, or a folder of such part files "
                        "(as sepne-generate writes them); local, or a file: URI")
    c.add_argument("--ratios", type=_ratios, default=[0.1, 0.9], metavar="R1,R2,...",
                   help="training fractions (default: 0.1,0.9)")
    c.add_argument("--splits", type=_count, default=10, help="random splits per ratio (default: %(default)s)")
    c.add_argument("--seed", type=_seed, default=0, help="seed of the splits (default: %(default)s)")
    c.add_argument("--threads", type=_count, default=None, metavar="N",
                   help="classes the driver fits at once, each on one core; the scores do not depend on it "
                        "(default: spark.driver.cores in cluster deploy mode, else every core the driver "
                        "process may use, by its CPU affinity and its container's CPU limit)")
    c.add_argument("--missing", choices=("drop", "zero"), default="drop",
                   help="labelled nodes without an embedding: left out of the splits, or scored as zero "
                   "vectors, so that methods which embed different nodes are scored on the same nodes and "
                   "the same splits (default: %(default)s)")
    c.add_argument("--vectors", choices=VECTORS, default="embedding",
                   help="features: the embedding, the context vector, both concatenated, or "
                   "their sum (default: %(default)s)")
    c.add_argument("--use-context", action="store_true",
                   help="shorthand for --vectors concat")
    c.add_argument("--json", metavar="OUT.json",
                   help="also write the results as JSON (an existing file is replaced, whole); - "
                   "prints them on one line, the last of stdout")

    r = sub.add_parser("reconstruct", help="R^2 of W C^T against the proximity matrix",
                       description="R^2 = 1 - SS_res/SS_tot of W C^T against M over all entries "
                       "and over the non-zero entries of M.")
    r.add_argument("--edges", "--input", dest="edges", required=True, metavar="FILE",
                   help="edge list src, dst[, weight]: a file or directory (tsv/csv/txt/parquet; --input, "
                   "the embed job's name, also works), read as the embed job read it: the embeddings' "
                   "manifest's input_format, bad_lines and layout (--sep, --header and the column flags "
                   "the embed job was given; layout flags given here replace that layout whole)")
    r.add_argument("--embeddings", required=True, metavar="PARQUET",
                   help="embeddings: columns id, embedding [, context]")
    add_read_arguments(r.add_argument_group("edge list layout (default: the embeddings' manifest's)"))
    from sepne_spark import settings as schema

    schema.add_arguments(
        r, MATRIX_SETTINGS + READ_SETTINGS, "proximity matrix M and how the edges are read",
        "Each defaults to the value in the embeddings' _manifest.json (written by the embed job), "
        "else to the embed job's built-in default shown.")
    r.add_argument("--method", choices=("auto", "driver", "spark"), default="auto",
                   help="where the exact R^2 is computed: driver: M built on the driver (graphs that fit "
                   "there; the fastest on small ones); spark: M's entries and W C^T at them as block "
                   "products in Spark, nothing per node on the driver (any size); auto: driver up to "
                   "--driver-max-nodes nodes, spark above (default: %(default)s)")
    r.add_argument("--driver-max-nodes", "--dense-max-nodes", type=_count, default=20_000,
                   help="largest graph computed on the driver: --method auto takes Spark above it, and "
                   "--method driver refuses a larger graph (default: %(default)s)")
    for retired in ("--zero-samples", "--seed"):  # of the sampled estimate this task no longer makes
        r.add_argument(retired, action=_Retired, help=argparse.SUPPRESS,
                       why="reconstruct computes the exact R^2 over every entry of M and samples nothing: drop it")
    r.add_argument("--json", metavar="OUT.json",
                   help="also write the results as JSON (an existing file is replaced, whole); - "
                   "prints them on one line, the last of stdout")

    lp = sub.add_parser("linkpred", help="AUC of held-out edges against non-edges (SepNE)",
                        description="Hold out a fraction of the edges, embed the rest with SepNE "
                        "and report the AUC of dot-product scores of held-out edges against as "
                        "many sampled non-edges.")
    lp.add_argument("--edges", "--input", dest="edges", required=True, metavar="FILE",
                    help="edge list src, dst[, weight]: a file or directory (tsv/csv/txt/parquet; --input, "
                    "the embed job's name, also works), read as the embed job reads it (format from the "
                    "extension, header detected, the profile's input_format and bad_lines, and the layout "
                    "flags below)")
    add_read_arguments(lp.add_argument_group("edge list layout, as for the embed job"))
    lp.add_argument("--fraction", type=_fraction, default=0.1, help="fraction of edges held out (default: %(default)s)")
    lp.add_argument("--profile", default=schema.AUTO_PROFILE, type=profile_arg,
                    help="YAML profile of the embedding settings, as for the embed job (a name: "
                    f"{', '.join(profile_names()) or 'none found'}; or a path; default: auto, chosen from the "
                    "training graph's size as the embed job chooses); the flags below override it. --seed "
                    "also seeds the held-out edges and the sampled non-edges")
    # Link prediction writes no vectors and scores both products: the embed job's
    # --context / --no-context (write the context vectors or not) would change nothing.
    schema.add_arguments(lp, [name for name in schema.SETTING_NAMES if name != "context"])
    for flag in ("--context", "--no-context"):
        lp.add_argument(flag, action=_Retired, help=argparse.SUPPRESS,
                        why="linkpred writes no vectors and scores both embedding.embedding and "
                            "embedding.context: drop it (it is sepne-embed's)")
    show_profile_defaults(lp)
    lp.add_argument("--json", metavar="OUT.json",
                    help="also write the results as JSON (an existing file is replaced, whole); - "
                    "prints them on one line, the last of stdout")
    return p


def parse_args(args: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line; ``--task NAME`` is accepted for the subcommand."""
    argv = list(sys.argv[1:] if args is None else args)
    ns = build_parser().parse_args(_task_alias(argv))
    if getattr(ns, "use_context", False):
        if "--vectors" in given_flags(argv) and ns.vectors != "concat":
            raise UserError(f"--use-context is --vectors concat, and --vectors {ns.vectors} is given too: give one")
        ns.vectors = "concat"
    # The labels are read on the driver, from its own file system: not qualified.
    qualify_paths(ns, ("embeddings", "edges", "json"))
    # the edge list's flag as written, for messages: --input is the embed job's word for it
    ns.edges_flag = "--input" if "--input" in given_flags(argv) else "--edges"
    return ns


# ---------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------


def _label_table(path: str) -> pd.DataFrame:
    """One labels file as a table of strings: Parquet (its columns named as a node and a
    label, :data:`NODE_WORDS` and :data:`LABEL_WORDS`, in either order; else its first
    two) or ``node<TAB>label`` text (whitespace-separated where it has no tab)."""
    if path.lower().endswith(".parquet") or parquet_magic(path):
        import pyarrow.parquet as pq

        from sepne_spark.errors import LabelsError

        table = pq.read_table(path)
        if table.num_columns < 2:
            raise LabelsError(f"{path}: expected two columns, node and label; found {table.column_names}")
        node = next((c for c in table.column_names if c.lower() in NODE_WORDS), None)
        label = next((c for c in table.column_names if c.lower() in LABEL_WORDS), None)
        chosen = [node, label] if node and label else table.column_names[:2]
        if chosen != table.column_names[:2]:
            log.info("%s: the labels are read from its columns %r (node) and %r (label)", path, *chosen)
        for name in chosen:
            column = table.column(name)
            if column.null_count:
                raise LabelsError(f"{path}: column {name!r} has {column.null_count} null value"
                                  f"{'s' if column.null_count != 1 else ''} (every row needs a node and a label)")
        return table.select(chosen).rename_columns(["node", "label"]).to_pandas().astype(str)
    return pd.DataFrame(_label_lines(path), columns=["node", "label"], dtype=str)


#: Column names of a labels file's labels (its nodes': :data:`NODE_WORDS`).
LABEL_WORDS = frozenset({"label", "labels", "class", "classes", "category", "group", "community"})
#: Words that make a labels file's first line a header (``node<TAB>label``).
LABEL_HEADER_WORDS = NODE_WORDS | LABEL_WORDS


def _label_lines(path: str) -> list[tuple[str, str]]:
    """The ``(node, label)`` pairs of a text labels file (compressed by its extension:
    .gz, .bz2, .xz), one per line, split at the tab (at runs of whitespace in a file
    without tabs); blank and ``#`` lines skipped, a first line of column names
    (:data:`LABEL_HEADER_WORDS`) skipped with a log line (``label<TAB>node`` then reads
    the columns in that order). Any other line that is not two
    non-empty fields is a :class:`~sepne_spark.errors.LabelsError` naming the file and line."""
    import bz2
    import gzip
    import lzma

    from sepne_spark.errors import LabelsError

    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(os.path.splitext(path)[1].lower(), open)
    with opener(path, "rt", encoding="utf-8-sig", errors="replace") as fh:  # -sig: a BOM is no part of an id
        lines = fh.read().splitlines()
    tabbed = any("\t" in line for line in lines)
    pairs: list[tuple[str, str]] = []
    first, swapped = True, False
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in (line.split("\t") if tabbed else line.split())]
        if first and len(fields) == 2 and {f.lower() for f in fields} <= LABEL_HEADER_WORDS:
            # label<TAB>node: the columns as the header names them
            swapped = fields[0].lower() in LABEL_WORDS and fields[1].lower() in NODE_WORDS
            log.info("%s: line %d (%s) read as a header%s", path, number, " / ".join(fields),
                     ": the label first, the node second" if swapped else "")
            first = False
            continue
        first = False
        if len(fields) != 2 or not all(fields):
            shown = line if len(line) <= 80 else line[:77] + "..."
            why = (f"{len(fields)} field{'s' if len(fields) != 1 else ''}" if len(fields) != 2
                   else "an empty " + ("node" if not fields[0] else "label"))
            hint = " (a comma-separated file? labels are node<TAB>label)" if len(fields) == 1 and "," in line else ""
            raise LabelsError(f"{path}:{number}: expected node<TAB>label, found {why}: {shown!r}{hint}")
        pairs.append((fields[1], fields[0]) if swapped else (fields[0], fields[1]))
    return pairs


#: The last labels read: (the files' paths, inodes, sizes and times; the labels). The command
#: reads them before Spark starts (a bad line is reported at once) and its run takes
#: them from here, unless the files changed in between.
_LAST_LABELS: tuple[tuple, dict[str, set[str]]] | None = None


def read_labels(path: str) -> dict[str, set[str]]:
    """Read ``node<TAB>label`` lines (one per pair) into ``{node: {labels}}``: a file, a
    ``file:`` URI or a folder of part files (as ``sepne-generate`` writes them, text or
    Parquet; names starting with ``_`` or ``.`` are skipped)."""
    global _LAST_LABELS
    local = local_path(path)
    if not os.path.exists(local):
        raise UserError(f"labels file not found: {path}")
    files = [local] if not os.path.isdir(local) else sorted(
        os.path.join(local, name) for name in os.listdir(local)
        if not name.startswith(("_", ".")) and os.path.isfile(os.path.join(local, name)))
    # A file rewritten in place, or replaced by a copy that keeps its size and time
    # (cp -p), changes its inode or its change time.
    stats = [(f, os.stat(f)) for f in files]
    key = tuple((f, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) for f, st in stats)
    if _LAST_LABELS is not None and _LAST_LABELS[0] == key:
        return {node: set(labs) for node, labs in _LAST_LABELS[1].items()}
    labels = _read_label_files(path, files)
    _LAST_LABELS = (key, labels)
    return {node: set(labs) for node, labs in labels.items()}


def _read_label_files(path: str, files: list[str]) -> dict[str, set[str]]:
    tables = [t for t in (_label_table(f) for f in files) if not t.empty]
    if not tables:
        raise UserError(f"labels file is empty: {path}")
    df = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    if df.shape[1] < 2:
        raise UserError(f"{path}: expected node<TAB>label lines")
    labels: dict[str, set[str]] = {}
    for node, lab in zip(df.iloc[:, 0].astype(str).str.strip(), df.iloc[:, 1].astype(str).str.strip()):
        if node == "" or lab == "":
            continue
        labels.setdefault(node, set()).add(lab)
    if not labels:
        raise UserError(f"labels file has no labels: {path}")
    return labels


def _vector_col(df: DataFrame, name: str, path: str = ""):
    """Column ``name`` as ``array<double>``: an array of numbers, or an ML vector; any
    other type is refused naming the file, the column and its type."""
    from pyspark.sql.types import ArrayType, NumericType

    dtype = df.schema[name].dataType
    if type(dtype).__name__ == "VectorUDT":
        from pyspark.ml.functions import vector_to_array

        # A null vector stays null (no embedding), as in an array column
        return F.when(F.col(name).isNull(), F.lit(None)).otherwise(vector_to_array(F.col(name)))
    if not (isinstance(dtype, ArrayType) and isinstance(dtype.elementType, NumericType)):
        raise UserError(f"{path}: column {name} is {dtype.simpleString()}; expected an array of numbers or an ML "
                        "vector (what sepne-embed writes)")
    return F.col(name).cast("array<double>")


def read_embeddings(spark: SparkSession, path: str, need_context: bool) -> DataFrame:
    """Embeddings Parquet as ``(key string, e array<double>[, c array<double>])``;
    refused, naming the file, without the columns, with vectors of another type, or
    without a row."""
    try:
        df = spark.read.parquet(path)
    except Exception as exc:  # noqa: BLE001 - missing path or not Parquet
        raise UserError(f"cannot read embeddings Parquet {path}: {spark_error_text(exc)}") from None
    _check_columns(path, df.columns, need_context)
    cols = [F.col("id").cast("string").alias("key"), _vector_col(df, "embedding", path).alias("e")]
    if "context" in df.columns:
        cols.append(_vector_col(df, "context", path).alias("c"))
    if df.limit(1).count() == 0:  # one row read at most
        raise UserError(f"{path}: the embeddings have no rows")
    return df.select(*cols)


def check_finite(path: str, keys: Sequence[str], *matrices: np.ndarray) -> None:
    """Refuse vectors with NaN, infinite or null values (``keys`` name the rows of
    ``matrices``), naming the file, their number and a few of their ids: the scores
    would count them as zero vectors, or be NaN. The Spark path checks them as it
    counts the vectors (:func:`sepne_spark.evaluation.reconstruction_r2_spark`)."""
    bad = np.zeros(len(keys), dtype=bool)
    for X in matrices:
        if X is not None:
            bad |= ~np.isfinite(X).all(axis=1)
    if bad.any():
        shown = [k for k, b in zip(keys, bad) if b][:3]
        raise UserError(f"{path}: {int(bad.sum())} vector(s) hold NaN, infinite or null values, e.g. "
                        f"{', '.join(map(repr, shown))}")


def _features(e: np.ndarray, c: np.ndarray | None, vectors: str) -> np.ndarray:
    if vectors == "embedding":
        return e
    if vectors == "context":
        return c  # type: ignore[return-value]
    if vectors == "concat":
        return np.concatenate([e, c], axis=1)  # type: ignore[list-item]
    return e + c  # type: ignore[operator]


#: Numbers of vectors collected by one query at most: 32 x 10^6 doubles, 256 MB, which
#: the driver's JVM holds before they reach Python. 10^6 vectors of 128 numbers in one
#: query filled a 4 GB driver heap (java.lang.OutOfMemoryError in Spark's task-result
#: thread, and the job then waited for ever); in slices of this size they pass.
COLLECT_NUMBERS = 32_000_000
#: Keys of one slice at most, whatever the vectors' length.
COLLECT_KEYS = 1_000_000


class _Vectors:
    """The vectors of ``keys`` in ``emb`` (a string ``key`` and ``array<double>`` vector
    columns, as :func:`read_embeddings` gives them), collected to the
    driver as Arrow data (``DataFrame.toArrow``, PySpark 4; ``toPandas`` before): no
    Python object per number, a third of the memory of ``collect()``'s rows and half its
    time (10^5 vectors of 128 numbers: 200 MB and 3.4 s against 630 MB and 6.7 s). The
    keys go in slices of at most :data:`COLLECT_NUMBERS` numbers (by the length of the
    first vector found) and :data:`COLLECT_KEYS` keys, one query each, so that the
    driver's JVM never holds more than one slice.

    ``keys`` are the rows' keys in order; per column, ``present`` marks the rows whose
    vector is not null and ``lengths`` holds each vector's length (-1 for a null one).
    """

    def __init__(self, spark: SparkSession, emb: DataFrame, keys: Sequence[str], columns: Sequence[str]) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = list(keys)
        first = emb.select(*[F.size(name).alias(name) for name in columns]).where(
            F.col(columns[0]).isNotNull()).limit(1).collect()
        width = max(1, sum(max(int(v), 0) for v in first[0])) if first else 1
        slices = max(1, -(-len(keys) * width // COLLECT_NUMBERS), -(-len(keys) // COLLECT_KEYS))
        schema = pa.schema([("key", pa.string())] + [(name, pa.list_(pa.float64())) for name in columns])
        tables = []
        for i in range(slices):
            part = spark.createDataFrame(pd.DataFrame({"key": keys[i::slices]}))
            df = emb.join(part, "key").select("key", *columns)  # read_embeddings' string keys and double arrays
            if hasattr(df, "toArrow"):
                table = df.toArrow()
            else:  # PySpark 3.5
                table = pa.Table.from_pandas(df.toPandas(), schema=schema, preserve_index=False)
            tables.append(table.cast(schema))
        self.slices = slices
        table = pa.concat_tables(tables)
        self.keys: list[str] = table.column("key").to_pylist()
        self._columns = {name: table.column(name).combine_chunks() for name in columns}
        self.present = {name: col.is_valid().to_numpy(zero_copy_only=False).astype(bool)
                        for name, col in self._columns.items()}
        self.lengths = {name: pc.fill_null(pc.list_value_length(col), -1).to_numpy(zero_copy_only=False)
                        .astype(np.int64) for name, col in self._columns.items()}

    def __len__(self) -> int:
        return len(self.keys)

    def matrix(self, name: str, rows: np.ndarray) -> np.ndarray:
        """The vectors of ``rows`` (positions of present vectors of one length) as an
        ``len(rows) x d`` float64 array; a null number inside a vector is NaN."""
        import pyarrow as pa

        rows = np.asarray(rows, dtype=np.int64)
        d = int(self.lengths[name][rows[0]]) if rows.size else 0
        flat = self._columns[name].take(pa.array(rows)).flatten().cast(pa.float64())
        return flat.to_numpy(zero_copy_only=False).astype(np.float64, copy=False).reshape(rows.size, d)


# ---------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------


#: Why a node's vector is zero, as the evaluations say it: the embed job's summary gives
#: the reason that its settings leave.
ZERO_WHY = ("no landmark reaches them, or they have no edge of non-zero weight to another node; the embed job's "
            "summary says which")


def _zero_filled(M: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """An ``n``-row matrix holding ``M``'s rows at ``rows`` and zeros elsewhere."""
    out = np.zeros((n, M.shape[1]), dtype=M.dtype)
    out[rows] = M
    return out


def run_classify(spark: SparkSession, ns: argparse.Namespace) -> dict[str, Any]:
    """The ``classify`` task; prints a table and returns the results.

    Only the labelled nodes' vectors are collected to the driver (joined in Spark).
    Labelled nodes without an embedding (or with a null vector) are counted in
    ``n_missing_embedding`` and excluded from the evaluation, or, with ``--missing
    zero``, scored as zero vectors (every labelled node in the splits).
    """
    from sepne_spark.evaluation import check_labels, node_classification, require_classifier
    from sepne_spark.evaluation.classification import available_cores
    from sepne_spark.session import driver_cores

    require_classifier()  # before any Spark work (main() called directly skips the job's check)
    labels = read_labels(ns.labels)
    need_ctx = ns.vectors != "embedding"
    emb = read_embeddings(spark, ns.embeddings, need_ctx)
    wanted = ["e", "c"] if need_ctx else ["e"]
    with stage(spark, "collect", f"the vectors of the {len(labels):,} labelled nodes, from {ns.embeddings}") as st:
        got = _Vectors(spark, emb, sorted(labels), wanted)
        st.count(rows=len(got), queries=got.slices)
    dup = {k for k, times in Counter(got.keys).items() if times > 1}
    if dup:
        raise UserError(f"{len(dup)} labelled node ids occur more than once in the embeddings, e.g. "
                        f"{sorted(dup)[:3]}{_one_run_hint(ns.embeddings)}")
    index = {k: i for i, k in enumerate(got.keys)}
    usable = [k for k in sorted(labels) if k in index and all(got.present[c][index[k]] for c in wanted)]
    usable_keys = set(usable)
    missing = [k for k in sorted(labels) if k not in usable_keys]

    def nodes_among(ids: list[str]) -> int:
        return int(emb.join(spark.createDataFrame(pd.DataFrame({"key": ids})), "key").select("key").distinct().count())

    warnings = check_labels(labels, usable, ns.labels, ns.embeddings, nodes_among=nodes_among)
    if len(usable) < 2:
        raise UserError(f"only {len(usable)} of {len(labels)} labelled nodes have an embedding")
    chosen = np.array([index[k] for k in usable], dtype=np.int64)
    for c in wanted:
        dims = sorted(set(got.lengths[c][chosen].tolist()))
        if len(dims) > 1:
            raise UserError(f"{'embedding' if c == 'e' else 'context'} vectors have different lengths: {dims[:5]}")
    E = got.matrix("e", chosen)
    Cx = got.matrix("c", chosen) if need_ctx else None
    if Cx is not None and Cx.shape != E.shape:
        raise UserError("embedding and context vectors have different lengths")
    # All-zero vectors: nodes that no landmark reached (see the embed job's warning).
    # They stay in the evaluation, as they are in the output, but are reported.
    zero = [k for k, z in zip(usable, ~E.any(axis=1)) if z]
    check_finite(ns.embeddings, usable, E, Cx)
    scored = usable
    if getattr(ns, "missing", "drop") == "zero" and missing:
        # Every labelled node, in the order of their ids: the splits of any method's
        # vectors are the same permutations of the same nodes.
        scored = sorted(labels)
        rows = np.array([i for i, k in enumerate(scored) if k in usable_keys], dtype=np.int64)
        E, Cx = (None if M is None else _zero_filled(M, rows, len(scored)) for M in (E, Cx))
    X = _features(E, Cx, ns.vectors)
    cores = ns.threads or driver_cores(spark) or available_cores()
    with stage(spark, "classify", f"logistic regression, {len(ns.ratios)} training ratio(s) x {ns.splits} splits, "
               f"{len(scored):,} nodes, classes fitted {cores} at a time"):
        res = node_classification(X, [labels[k] for k in scored], train_ratios=ns.ratios,
                                  n_splits=ns.splits, seed=ns.seed, threads=cores)
    res.update({
        "task": "classify",
        "embeddings": ns.embeddings,
        "labels": ns.labels,
        "vectors": ns.vectors,
        "dim": int(X.shape[1]),
        "n_labelled": len(labels),
        "missing": getattr(ns, "missing", "drop"),
        "n_missing_embedding": len(missing),
        "missing_examples": missing[:10],
        "n_zero_embedding": len(zero),
        "zero_examples": zero[:10],
        "label_warnings": warnings,
    })
    print(f"node classification: {res['n_nodes']} labelled nodes evaluated, {res['n_classes']} classes, "
          f"{res['mode']}, {res['n_splits']} splits, vectors={ns.vectors} (dim {X.shape[1]})")
    which = "embedded" if scored is not usable else "evaluated"
    if missing:
        fate = ("were scored as zero vectors (--missing zero)" if scored is not usable else
                "were excluded (--missing zero scores them as zero vectors)")
        print(f"{len(missing)} of {len(labels)} labelled nodes have no embedding and {fate} "
              f"(e.g. {', '.join(missing[:5])})")
    else:
        print(f"0 of {len(labels)} labelled nodes without an embedding")
    if zero:
        print(f"{len(zero)} of {len(usable)} {which} nodes have an all-zero embedding ({ZERO_WHY}; kept in "
              f"the evaluation, e.g. {', '.join(zero[:5])})")
    else:
        print(f"0 of {len(usable)} {which} nodes with an all-zero embedding")
    for w in warnings:
        print(f"warning: {w}")
    print(f"{'train ratio':>11}  {'n_train':>7}  {'micro-F1 (mean ± std)':>22}  {'macro-F1 (mean ± std)':>22}")
    for ratio, v in res["results"].items():
        print(f"{ratio:>11.2f}  {v['n_train']:>7d}  {v['micro_f1_mean']:>13.4f} ± {v['micro_f1_std']:.4f}  "
              f"{v['macro_f1_mean']:>13.4f} ± {v['macro_f1_std']:.4f}")
    return res


#: The settings that define M, as the embed job names them (each has a flag here).
MATRIX_SETTINGS = ("metric", "window", "scaling", "directed", "duplicates", "self_loops")
#: How the embed job read its input: taken from the manifest too (or from the flags).
READ_SETTINGS = ("input_format", "bad_lines")


def _one_run_hint(embeddings: str) -> str:
    """``": OUT holds 2 partitions (dt=..., dt=...), one per run; give one of them, e.g.
    --embeddings OUT/dt=..."`` for a dated output's root of several runs, else ``""``."""
    from sepne_spark.storage import partition_folders

    parts = partition_folders(embeddings)
    if len(parts) < 2:
        return ""
    shown = ", ".join(parts[:3]) + (", ..." if len(parts) > 3 else "")
    return (f": {embeddings} holds {len(parts)} partitions ({shown}), one per run; give one of them, e.g. "
            f"--embeddings {embeddings.rstrip('/')}/{parts[-1]}")


def matrix_settings(ns: argparse.Namespace, manifest: dict[str, Any], run: str = "") -> tuple[dict[str, Any], str]:
    """The settings of M and of reading the edges: flags over the embeddings' manifest
    (``manifest``, empty without one; ``run``, the dated run it is from, if any) over the
    built-in defaults.

    Returns the settings and where they came from, in words.
    """
    from sepne_spark import settings as schema

    wanted = MATRIX_SETTINGS + READ_SETTINGS
    saved = {k: v for k, v in (manifest.get("settings") or {}).items() if k in wanted}
    flags = {k: getattr(ns, k) for k in wanted if getattr(ns, k, None) is not None}
    settings = schema.resolve(flags, saved)
    source = "the built-in defaults"
    if saved:
        source = f"the manifest of the run {run}" if run else "the embeddings' manifest"
    if flags:
        source += " and " + ", ".join("--" + k.replace("_", "-") for k in flags)
    return {k: getattr(settings, k) for k in wanted}, source


def embeddings_manifest(ns: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The manifest of ``--embeddings`` and the dated run it is from (``""`` for the
    output's own): a dated output's root (``OUTPUT`` of ``--run-date``) takes its newest
    run's, when every run's M and reading agree; ``({}, "")`` without any.

    Raises
    ------
    UserError
        When the runs of a dated output were made with different settings of M (name
        one of them), or a manifest is not JSON.
    """
    from sepne_spark.storage import output_manifests

    manifests = output_manifests(ns.embeddings)
    runs = list(manifests)
    if not runs:
        return {}, ""
    newest = runs[-1]

    def used(manifest: dict[str, Any]) -> dict[str, Any]:
        """What a run's manifest decides here: M's settings and the edges' layout."""
        settings = matrix_settings(ns, manifest)[0]
        return {**{k: settings[k] for k in MATRIX_SETTINGS}, "layout": read_options(ns, manifest.get("read"))}

    chosen = {run: used(manifest) for run, manifest in manifests.items()}
    other = next((run for run in runs if chosen[run] != chosen[newest]), None)
    if other is not None:
        keys = ", ".join(k for k in chosen[newest] if chosen[other][k] != chosen[newest][k])
        raise UserError(f"the runs in {ns.embeddings} were made with different settings of M or read their "
                        f"edges otherwise ({other} and {newest} differ in {keys}): give one run, e.g. "
                        f"--embeddings {ns.embeddings.rstrip('/')}/{newest}")
    return manifests[newest], newest


def input_mismatch(spark: SparkSession, edges: str, manifest: dict[str, Any]) -> str | None:
    """Why ``edges`` looks like another input than the one the embeddings' manifest
    records (its files' number, total size or latest modification), or None when they
    agree or either cannot be told (no manifest, a generated graph, Spark Connect)."""
    saved = [f for f in manifest.get("input_files") or [] if f.get("files") is not None]
    if not saved or len(saved) != len(manifest.get("input_files") or []):
        return None
    (now,) = input_fingerprint(spark, [edges])
    if now.get("files") is None:
        return None
    then = {"files": sum(f["files"] for f in saved), "bytes": sum(f.get("bytes") or 0 for f in saved),
            "modified_utc": max(str(f.get("modified_utc")) for f in saved)}
    if (now["files"], now["bytes"], str(now["modified_utc"])) == (then["files"], then["bytes"], then["modified_utc"]):
        return None

    def shown(f: dict[str, Any]) -> str:
        return f"{f['files']} file(s), {f['bytes']:,} bytes, modified {f['modified_utc']}"

    made_from = ", ".join(str(f["path"]) for f in saved)
    return (f"--edges {edges} ({shown(now)}) may not be the input the embeddings were made from ({made_from}: "
            f"{shown(then)}); M is built from --edges")


def _steps_after_solve(manifest: dict[str, Any]) -> tuple[str, str] | None:
    """The steps after the solve that the manifest's run applied, in words, and the
    flags that leave them out; None without any."""
    from sepne_spark import settings as schema
    from sepne_spark.pipeline import spectral_steps

    saved = manifest.get("settings") or {}
    params = {schema.setting(name).param: saved.get(name, schema.setting(name).default)
              for name in ("propagation", "refine_steps", "refine_operator", "average_steps")}
    steps = list(spectral_steps(params))
    off = ["--propagation 1 --refine-steps 0 --average-steps 0"] if steps else []
    filled = (manifest.get("sets") or {}).get("unreached")  # the distributed path counts the nodes it filled
    if saved.get("unreached") == "anchor" and filled != 0:  # a whole graph's run (requested ids record zero)
        steps.append("the anchor of the nodes no landmark reaches")
        off.append("--unreached zero")
    return (", ".join(steps), " ".join(off)) if steps else None


def _say_embedding_counts(n: int, n_missing: int, n_zero: int, has_ctx: bool) -> None:
    if not has_ctx:
        log.warning("the embeddings have no context column: the embedding stands in for the context vector, and "
                    "the R^2 is that of W W^T (embed with --context for W C^T)")
    if n_missing:
        print(f"{n_missing} of {n} graph nodes have no embedding: their rows and columns predict 0")
        log.warning("%d of the graph's %d nodes (%.1f%%) have no embedding, and the R^2 counts their rows and "
                    "columns of M as predicted 0: are these the embeddings of this graph (--edges), of every "
                    "node (not of --nodes)?", n_missing, n, 100.0 * n_missing / max(n, 1))
    if n_zero:
        print(f"{n_zero} of {n} graph nodes have an all-zero embedding ({ZERO_WHY})")


def _reconstruct_on_driver(spark: SparkSession, graph: Any, emb: DataFrame, settings: dict[str, Any],
                           path: str = "embeddings") -> tuple[dict[str, Any], dict[str, int]]:
    """R^2 over every entry of M, built on the driver from the collected edges and the
    graph's nodes' vectors (``--method driver``: graphs that fit there; the caller has
    counted the nodes against ``--driver-max-nodes``)."""
    from sepne_spark.evaluation import reconstruction_r2

    with stage(spark, "collect", "the graph's nodes, edges and vectors, to the driver") as st:
        nodes = sorted(str(r["id"]) for r in graph.vertices.collect())  # self-loop-only nodes too
        n = len(nodes)
        index = {k: i for i, k in enumerate(nodes)}
        edges = graph.edges.select(F.col("src").cast("string"), F.col("dst").cast("string"), "weight").toPandas()
        src = edges["src"].map(index).to_numpy(np.int64)
        dst = edges["dst"].map(index).to_numpy(np.int64)
        w = edges["weight"].to_numpy(np.float64)
        has_ctx = "c" in emb.columns
        got = _Vectors(spark, emb, nodes, ["e", "c"] if has_ctx else ["e"])
        st.count(nodes=n, edge_rows=len(edges), vectors=len(got))
    rows = np.flatnonzero(got.present["e"])  # a node whose vector is null has none
    given = Counter(got.keys[r] for r in rows)
    if len(given) < rows.size:
        twice = sorted(k for k, c in given.items() if c > 1)
        raise DuplicateIdsError(f"{path}: {rows.size - len(given)} more vectors than ids of the graph: one row "
                                f"per id (given more than once: {', '.join(map(repr, twice[:3]))})")
    # The context of a row without one is its embedding (W C^T is then W W^T there).
    e_len = got.lengths["e"][rows]
    c_len = np.where(got.present["c"][rows], got.lengths["c"][rows], e_len) if has_ctx else e_len
    d = int(e_len[0]) if rows.size else 0
    odd = np.flatnonzero((e_len != d) | (c_len != d))
    if odd.size:
        j = odd[0]
        raise InputError(f"{path}: embedding{' and context' if has_ctx else ''} vectors have different "
                         f"lengths: {sorted({d, int(e_len[j]), int(c_len[j])})}, e.g. of {got.keys[rows[j]]!r}")
    at = np.array([index[got.keys[r]] for r in rows], dtype=np.int64)
    W = np.zeros((n, d))
    Cm = np.zeros((n, d))
    found = np.zeros(n, dtype=bool)
    W[at] = got.matrix("e", rows)
    Cm[at] = W[at]
    if has_ctx:
        with_c = got.present["c"][rows]
        Cm[at[with_c]] = got.matrix("c", rows[with_c])
    found[at] = True
    check_finite(path, nodes, W, Cm)
    n_missing = int((~found).sum())
    n_zero = int((found & ~W.any(axis=1)).sum())
    if not found.any():
        raise UserError("no node of the graph has an embedding (are the ids the same?)")
    _say_embedding_counts(n, n_missing, n_zero, has_ctx)
    with stage(spark, "r2", f"M and {'W C^T' if has_ctx else 'W W^T'} over every entry, on the driver"):
        M = sparse_proximity(n, src, dst, w, settings["metric"], settings["window"], settings["scaling"])
        r2 = reconstruction_r2(M, W, Cm)
    counts = {"n_nodes": n, "n_missing_embedding": n_missing, "n_zero_embedding": n_zero,
              "scored": "W C^T" if has_ctx else "W W^T (no context column)"}
    return r2, counts


def _reconstruct_on_spark(spark: SparkSession, graph: Any, emb: DataFrame, settings: dict[str, Any],
                          path: str = "embeddings") -> tuple[dict[str, Any], dict[str, int]]:
    """The exact R^2 with Spark (``--method spark``): M's entries are built as the embed
    job builds them and scored as block products (:func:`reconstruction_r2_spark`, which
    also counts and checks the graph's nodes' vectors); a few sums and counts reach the
    driver, nothing per node."""
    from sepne_spark.evaluation import reconstruction_r2_spark
    from sepne_spark.proximity import Proximity, transition

    has_ctx = "c" in emb.columns
    prox = Proximity(transition(graph.edges), graph.vertices, settings["metric"], settings["scaling"],
                     graph.edges, settings["window"])
    entries = prox.rows().select(F.col("src").cast("string").alias("src"), F.col("dst").cast("string").alias("dst"),
                                 F.col("m").alias("value")).persist()
    vectors = [F.col("key").alias("id"), F.col("e").alias("embedding")] + (
        [F.col("c").alias("context")] if has_ctx else [])
    try:
        with stage(spark, "r2", f"{'W C^T' if has_ctx else 'W W^T'} at M's non-zero entries, as block products") as st:
            res = reconstruction_r2_spark(entries, emb.select(*vectors), name=path,
                                          nodes=graph.vertices.select(F.col("id").cast("string").alias("id")))
            st.count(nodes=res["n_nodes"], entries=res["n_nonzero"])
    finally:
        entries.unpersist()
        prox.release()
    counts = {k: res.pop(k) for k in ("n_nodes", "n_missing_embedding", "n_zero_embedding")}
    _say_embedding_counts(counts["n_nodes"], counts["n_missing_embedding"], counts["n_zero_embedding"], has_ctx)
    counts["scored"] = "W C^T" if has_ctx else "W W^T (no context column)"
    return res, counts


def run_reconstruct(spark: SparkSession, ns: argparse.Namespace) -> dict[str, Any]:
    """The ``reconstruct`` task: on the driver up to ``--driver-max-nodes`` nodes, with
    Spark above (see the module docstring)."""
    from sepne_spark.proximity import metric_text
    from sepne_spark.graph import load_graph

    manifest, run = embeddings_manifest(ns)
    settings, source = matrix_settings(ns, manifest, run)
    if not manifest:
        log.warning("%s has no _manifest.json (written by sepne-embed): M is built from %s, which may not be the "
                    "M these embeddings were made from; give --metric, --window, --scaling and --directed or "
                    "--undirected as the embedding run had them", ns.embeddings, source)
    mismatch = input_mismatch(spark, ns.edges, manifest)
    if mismatch:
        log.warning("%s", mismatch)
    after = _steps_after_solve(manifest)
    if after:
        log.warning("the embeddings went through %s after the solve: the R^2 compares those vectors with M, "
                    "not the factorisation (embed with %s to measure it)", *after)
    # The embed job's own reading: the same layout, validation, merging and self-loop policy.
    layout = read_options(ns, manifest.get("read"))
    graph = load_graph(spark, ns.edges, settings["input_format"], directed=settings["directed"],
                       duplicates=settings["duplicates"], self_loops=settings["self_loops"],
                       bad_lines=settings["bad_lines"], **layout)
    what = metric_text(settings["metric"], settings["window"]) + (
        ", log scaling" if settings["scaling"] == "log" else "")
    print(f"M = {what}, {'directed' if settings['directed'] else 'undirected'} "
          f"(duplicates {settings['duplicates']}, self-loops {settings['self_loops']}; from {source})")
    emb = read_embeddings(spark, ns.embeddings, need_context=False)
    method = ns.method
    if method in ("auto", "driver"):
        with stage(spark, "count", f"the graph's nodes, for --method {method}") as st:
            n = int(graph.vertices.count())  # self-loop-only nodes too
            st.count(nodes=n)
        if method == "driver" and n > ns.driver_max_nodes:  # before anything per node reaches the driver
            raise UserError(f"--method driver: the graph has {n:,} nodes, more than --driver-max-nodes "
                            f"({ns.driver_max_nodes:,}), and the driver would hold its ids, edges, vectors and M: "
                            "give --method spark (or auto), or a larger --driver-max-nodes to compute it on the "
                            "driver anyway")
        method = "driver" if n <= ns.driver_max_nodes else "spark"
    t0 = time.time()
    try:
        if method == "driver":
            res, counts = _reconstruct_on_driver(spark, graph, emb, settings, ns.embeddings)
        else:
            res, counts = _reconstruct_on_spark(spark, graph, emb, settings, ns.embeddings)
    except DuplicateIdsError as exc:  # a dated output's root of several runs: each node once per run
        hint = _one_run_hint(ns.embeddings)
        if not hint:
            raise
        raise DuplicateIdsError(f"{exc}{hint}") from None
    n = counts["n_nodes"]
    res.update({
        "task": "reconstruct",
        "edges": ns.edges,
        "embeddings": ns.embeddings,
        **settings,
        "settings_from": source,
        "input_mismatch": mismatch,
        "steps_after_solve": after[0] if after else None,
        **counts,
        "method": method,
        "seconds": round(time.time() - t0, 3),
    })
    kind = "exact, on the driver" if method == "driver" else "exact, with Spark"
    print(f"reconstruction of M ({n} nodes, {res['n_nonzero']} non-zero entries; {kind})")
    print(f"  R^2 over all entries      : {res['r2_all']:.6f}")
    print(f"  R^2 over non-zero entries : {res['r2_nonzero']:.6f}")
    return res


def run_linkpred(spark: SparkSession, ns: argparse.Namespace) -> dict[str, Any]:
    """The ``linkpred`` task: :func:`sepne_spark.evaluation.link_prediction` with SepNE."""
    from sepne_spark import settings as schema
    from sepne_spark.evaluation import link_prediction
    from sepne_spark.reading import read_edges

    auto = schema.is_auto(ns.profile)
    settings = schema.resolve(ns, schema.load_profile(ns.profile), provisional=auto, profile_name=ns.profile)
    if settings.partition == "IO":
        raise UserError("partition IO embeds only requested nodes; link prediction needs every node")
    models = []
    profile = ns.profile
    cached: list[DataFrame] = []

    def fit_embed(train: DataFrame) -> DataFrame:
        nonlocal settings, profile
        from sepne_spark.graph import prepare_graph
        from sepne_spark.model import SepNE

        data: Any = train
        if auto:  # chosen from the training graph, as the embed job does
            data = prepare_graph(train, settings.directed, duplicates=settings.duplicates,
                                 self_loops=settings.self_loops, check=False)  # rows of a checked graph
            cached.extend(frame.persist() for frame in (data.edges, data.vertices))
            with stage(spark, "count", "the training graph's nodes and edge rows, for auto") as st:
                nodes, edge_rows = int(data.vertices.count()), int(data.edges.count())
                st.count(nodes=nodes, edge_rows=edge_rows)
            settings, chosen = auto_settings(ns, data, nodes, edge_rows)
            profile = f"auto: {chosen}" if ns.profile == schema.AUTO_PROFILE else f"{ns.profile} (auto: {chosen})"
        models.append(SepNE(**schema.model_params(settings)).fit(data))
        return models[-1].transform(data)

    try:
        with session_settings(spark, settings.spark):  # a session running before the job: for this run
            edges, _ = read_edges(spark, ns.edges, settings.input_format, bad_lines=settings.bad_lines,
                                  **read_options(ns))
            res = link_prediction(spark, edges, fit_embed, fraction=ns.fraction, seed=settings.seed,
                                  directed=settings.directed)
    finally:  # the scores are collected: nothing the fit or the embedding cached is kept
        for model in models:
            model.release()
        for frame in cached:
            frame.unpersist()
    from sepne_spark.pipeline import spectral_steps

    after = ", ".join(spectral_steps(models[-1].settings())) if models else ""
    res["context_note"] = None
    if after and res["auc_embedding_context"] is not None:
        # The steps after the solve change the embeddings, not the context vectors.
        res["context_note"] = (f"the embeddings went through {after} after the solve and the context vectors did "
                               "not: embedding.context pairs vectors of two kinds; read embedding.embedding, or "
                               "run with --propagation 1 --refine-steps 0 --average-steps 0 to score the solve's")
        log.warning("%s", res["context_note"])
    res.update({"task": "linkpred", "edges": ns.edges, "profile": profile,
                "settings": {k: v for k, v in settings.as_dict().items() if k not in ("spark", "context")}})
    print(f"link prediction: {res['n_test_edges']} held-out edges vs {res['n_negative']} non-edges, "
          f"{res['n_train_edges']} training edges ({res['n_train_rows']} edge-list rows)")
    ec = res["auc_embedding_context"]
    # The score to read first (README): the steps after the solve leave the context vectors as they were.
    print(f"  AUC embedding.embedding : {res['auc_embedding_embedding']:.4f}")
    print(f"  AUC embedding.context   : {ec:.4f}" if ec is not None else "  AUC embedding.context   : n/a")
    if res["n_test_missing"] or res["n_negative_missing"]:
        print(f"  left out for lack of an embedding: {res['n_test_missing']} held-out, "
              f"{res['n_negative_missing']} negative pairs")
    return res


def check_embedding_columns(path: str, need_context: bool) -> None:
    """Refuse, before Spark starts, local embeddings that are not Parquet (a data file
    without Parquet's leading magic bytes, such as a text edge list's folder) or whose
    Parquet schema lacks ``id``, ``embedding`` or (for ``need_context``) ``context``,
    with the words :func:`read_embeddings` uses. Parquet that pyarrow cannot read is left
    to Spark."""
    if not is_local_path(path):
        return
    local = local_path(path)
    for file in local_data_files(local, limit=8):
        if parquet_magic(file) is False:  # an empty file is no part (Spark skips it)
            raise UserError(f"{path}: {os.path.relpath(file, local) if file != local else file} is not a Parquet "
                            "file; --embeddings takes the Parquet output of sepne-embed (columns id, embedding)")
    try:
        import pyarrow.dataset as pads

        found = pads.dataset(local, format="parquet")
        if not found.files:
            return
        columns = set(found.schema.names)
    except Exception:  # noqa: BLE001 - Parquet pyarrow cannot read: Spark reads it and says what is wrong
        return
    _check_columns(path, columns, need_context)


def _check_columns(path: str, columns: Sequence[str], need_context: bool) -> None:
    """Refuse embeddings at ``path`` without the columns ``id`` and ``embedding``, or
    without ``context`` when ``need_context``."""
    missing = [c for c in ("id", "embedding") if c not in columns]
    if missing:
        raise UserError(f"{path}: embeddings need columns id and embedding; missing {', '.join(missing)}")
    if need_context and "context" not in columns:
        raise UserError(f"{path}: has no context column (needed by the chosen vectors; embed with --context)")


def _check_paths(ns: argparse.Namespace) -> None:
    """Local input paths that do not exist, and a ``--json`` that would replace an input
    or a folder or cannot be written, reported before Spark starts."""
    from sepne_spark.storage import check_json_path

    inputs = []
    for flag in ("embeddings", "labels", "edges"):
        value = getattr(ns, flag, None)
        if value:
            written = getattr(ns, "edges_flag", "--edges") if flag == "edges" else "--" + flag
            check_inputs_exist([value], written)
            if flag == "edges":
                check_edge_folders([value], written)
            inputs.append(value)
    if getattr(ns, "json", None) and ns.json != "-":
        check_json_path(ns.json, inputs)


def session_conf(argv: Sequence[str]) -> dict[str, str]:
    """Check the arguments and return the Spark settings of ``linkpred``'s profile (and
    ``--spark``) for a session we build; :func:`cli` calls it before Spark starts."""
    from sepne_spark import settings as schema

    ns = parse_args(argv)
    _check_paths(ns)
    if ns.task in ("reconstruct", "linkpred"):
        read_options(ns)  # conflicting layout flags, before Spark starts
    if getattr(ns, "embeddings", None):
        check_embedding_columns(ns.embeddings, getattr(ns, "vectors", "embedding") != "embedding")
    if ns.task == "classify":
        from sepne_spark.evaluation import require_classifier

        require_classifier()
        read_labels(ns.labels)  # a bad line is reported before Spark starts; the run reuses them
    if ns.task == "reconstruct":  # M's settings: the flags over a local manifest's, checked now
        manifest, _ = embeddings_manifest(ns) if is_local_path(ns.embeddings) else ({}, "")
        with settings_checked_quietly():
            matrix, _ = matrix_settings(ns, manifest)
        if is_local_path(ns.embeddings) or given_read_options(ns) or given_flags(argv) & {"--input-format"}:
            # (remote embeddings' manifest, read once Spark runs, may give the layout)
            _check_edges_layout(ns, matrix["input_format"], matrix["bad_lines"],
                                read_options(ns, manifest.get("read")))
    if ns.task != "linkpred":
        return {}
    with settings_checked_quietly():  # main() checks again and warns once
        settings = schema.resolve(ns, schema.load_profile(ns.profile), provisional=schema.is_auto(ns.profile),
                                  profile_name=ns.profile)
    if settings.partition == "IO":
        raise UserError("partition IO embeds only requested nodes; link prediction needs every node")
    _check_edges_layout(ns, settings.input_format, settings.bad_lines, read_options(ns))
    return dict(settings.spark)


def _check_edges_layout(ns: argparse.Namespace, fmt: str, bad_lines: str, layout: dict[str, Any]) -> None:
    """The edge list's format and its first lines against the layout the run will read it
    with, as the embed job checks its ``--input`` before Spark starts."""
    flag = getattr(ns, "edges_flag", "--edges")
    check_input_format([ns.edges], fmt, flag)
    check_input_head([ns.edges], fmt, layout, bad_lines)


def cli(argv: Sequence[str] | None = None) -> int:
    """The ``sepne-evaluate`` command: check the arguments, then start Spark and run :func:`main`."""
    return run_job(main, "sepne-evaluate", argv, session_conf=session_conf)


def main(spark: SparkSession | None, args: Sequence[str] | None = None) -> int:
    """Entry point: parse ``args`` (``--help`` works without Spark) and run the task."""
    ns = parse_args(args)
    if spark is None:
        from sepne_spark.session import get_spark

        spark = get_spark("sepne-evaluate", conf=session_conf(sys.argv[1:] if args is None else list(args)))
    _check_paths(ns)  # again, for a caller of main() (a notebook) that no cli() checked
    runners = {"classify": run_classify, "reconstruct": run_reconstruct, "linkpred": run_linkpred}
    res = runners[ns.task](spark, ns)
    emit_json(spark, getattr(ns, "json", None), res)
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
