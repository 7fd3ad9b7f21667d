"""Generate a synthetic graph (stochastic block model or R-MAT) and write it out.

Writes ``OUTPUT/edges`` (``src<TAB>dst`` TSV or Parquet ``src long, dst long``) and, for
the block model, ``OUTPUT/labels`` (``node<TAB>label`` / ``node long, label int``), each
a directory of part files, or one file (``edges.tsv``, ``labels.parquet`` ...) with
``--single-file``. Examples::

    sepne-generate --model sbm --nodes 1000000 --communities 100 \\
        --avg-degree 20 --mixing 0.1 --format parquet --output /data/sbm-1m
    spark-submit jobs/generate.py --model rmat --scale 20 --edges 16000000 --output /tmp/rmat20
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from typing import Any, Callable, Sequence

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from sepne_spark.generators import (
    edge_columns,
    label_columns,
    output_exists,
    rmat_graph,
    sbm_edge_count,
    sbm_graph,
    table_write,
)
from sepne_spark.jobs.common import (
    JobArgumentParser,
    UserError,
    given_flags,
    in_flag_words,
    integer_arg,
    mark_written,
    number_arg,
    qualify_paths,
    run_job,
    setup_logging,
)
from sepne_spark.storage import atomic_writes

log = logging.getLogger("sepne_spark.jobs.generate")


def parse_args(args: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line (``--help`` lists every option with its default)."""
    p = JobArgumentParser(
        prog="sepne-generate",
        description="Generate a stochastic block model or R-MAT graph with Spark and "
        "write OUTPUT/edges (and OUTPUT/labels for sbm) as TSV or Parquet.",
    )
    p.add_argument("--model", choices=("sbm", "rmat"), default="sbm",
                   help="graph model (default: %(default)s)")
    p.add_argument("--output", required=True, metavar="DIR",
                   help="output folder (local path or URI), required; receives edges and, "
                   "for sbm, labels")
    p.add_argument("--format", choices=FORMATS, default="tsv",
                   help="output format: TSV without header, or Parquet (default: %(default)s)")
    p.add_argument("--seed", type=integer_arg, default=0,
                   help="random seed; the graph does not depend on the partitioning "
                   "(default: %(default)s)")
    p.add_argument("--directed", action="store_true",
                   help="keep edges directed (default: off, undirected edges stored once "
                   "as src < dst)")
    p.add_argument("--partitions", type=integer_arg, default=None,
                   help="partitions (and output files) of the edges and of the labels (default: Spark's "
                   "default parallelism and shuffle partitions)")
    p.add_argument("--single-file", action="store_true",
                   help="write one file per table (edges.tsv, labels.tsv ...) instead of "
                   "a directory of part files (default: off)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace existing output (default: off, existing output is an error)")
    sbm = p.add_argument_group("sbm", "stochastic block model")
    sbm.add_argument("--nodes", type=integer_arg, default=10_000,
                     help="number of nodes (default: %(default)s)")
    sbm.add_argument("--communities", type=integer_arg, default=10,
                     help="planted communities, node i is in community i mod C "
                     "(default: %(default)s)")
    sbm.add_argument("--avg-degree", type=number_arg, default=10.0,
                     help="target mean degree, mean out-degree with --directed "
                     "(default: %(default)s)")
    sbm.add_argument("--mixing", type=number_arg, default=0.1,
                     help="probability that an edge's destination ignores the communities "
                     "(default: %(default)s)")
    rmat = p.add_argument_group("rmat", "R-MAT / Kronecker graph over 2**scale nodes")
    rmat.add_argument("--scale", type=integer_arg, default=16,
                      help="log2 of the number of nodes (default: %(default)s)")
    rmat.add_argument("--edges", type=integer_arg, default=None,
                      help="edges drawn before removing self-loops and repeats "
                      "(default: 16 * 2**scale, the Graph500 edge factor)")
    rmat.add_argument("--rmat-a", type=number_arg, default=0.57,
                      help="top-left quadrant probability (default: %(default)s)")
    rmat.add_argument("--rmat-b", type=number_arg, default=0.19,
                      help="top-right quadrant probability (default: %(default)s)")
    rmat.add_argument("--rmat-c", type=number_arg, default=0.19,
                      help="bottom-left quadrant probability (default: %(default)s)")
    rmat.add_argument("--no-permute", action="store_true",
                      help="keep R-MAT node ids unpermuted, node 0 is then the hub "
                      "(default: off, ids permuted with a seeded bijection)")
    ns = p.parse_args(args)
    qualify_paths(ns, ("output",))
    return ns


#: The formats the generator writes.
FORMATS = ("tsv", "parquet")


def _target(output: str, table: str, fmt: str, single_file: bool) -> str:
    name = f"{table}.{fmt}" if single_file else table
    return output.rstrip("/") + "/" + name


def _observed(df: DataFrame, name: str) -> tuple[DataFrame, Any]:
    """Count rows while they are written, without a second pass over the data; a Spark
    Connect client before 4.0 has no ``Observation``, and counts them in a pass of its
    own (the draws are seeded, so it counts the rows written)."""
    from sepne_spark.session import connect_before_4

    if connect_before_4(df.sparkSession):
        return df, _Counted(df)
    obs = Observation(name)
    return df.observe(obs, F.count(F.lit(1)).alias("rows")), obs


class _Counted:
    """An ``Observation``'s ``get`` of the rows of ``df``, counted when it is read."""

    def __init__(self, df: DataFrame) -> None:
        self._df = df

    @property
    def get(self) -> dict[str, int]:
        return {"rows": int(self._df.count())}


def main(spark: SparkSession | None, args: Sequence[str] | None = None) -> int:
    """Generate the graph described by ``args`` and write it; returns the exit code.

    Parameters
    ----------
    spark : SparkSession or None
        Session to run in; ``None`` only for ``--help`` (argument parsing comes first),
        otherwise the active or a new local session is used.
    args : sequence of str, optional
        Command-line arguments (``sys.argv[1:]`` when omitted).

    Returns
    -------
    int
        0 on success.

    Raises
    ------
    UserError
        For invalid parameters or an existing output without ``--overwrite``.
    """
    ns = parse_args(args)
    check_args(ns, sys.argv[1:] if args is None else list(args))
    setup_logging()
    if spark is None:
        from sepne_spark.session import get_spark

        spark = get_spark("sepne-generate")
    from sepne_spark.storage import resolve_output

    # Where the session writes OUTPUT (a path without a scheme on a cluster's default
    # file system): checked again there, and the earlier run's tables read there.
    ns = argparse.Namespace(**{**vars(ns), "output": resolve_output(spark, ns.output)})
    check_replaceable(ns)
    marked = _marked(ns.output)
    fmt = ns.format
    edges_path = _target(ns.output, "edges", fmt, ns.single_file)
    labels_path = _target(ns.output, "labels", fmt, ns.single_file)
    if not ns.overwrite:
        for path in (edges_path, labels_path) if ns.model == "sbm" else (edges_path,):
            if output_exists(spark, path):
                raise UserError(f"output exists: {path} (pass --overwrite to replace it)")

    start = time.time()
    try:
        if ns.model == "sbm":
            edges, labels = sbm_graph(
                spark, ns.nodes, ns.communities, ns.avg_degree, ns.mixing, ns.seed,
                directed=ns.directed, partitions=ns.partitions,
            )
            nodes = ns.nodes
            drawn = sbm_edge_count(ns.nodes, ns.avg_degree, ns.directed)
            log.info(
                "sbm: %d nodes, %d communities, avg degree %g, mixing %g, seed %d, %s: "
                "drawing %d edges", nodes, ns.communities, ns.avg_degree, ns.mixing,
                ns.seed, "directed" if ns.directed else "undirected", drawn,
            )
        else:
            nodes = 1 << ns.scale
            drawn = 16 * nodes if ns.edges is None else ns.edges
            edges = rmat_graph(
                spark, ns.scale, drawn, ns.rmat_a, ns.rmat_b, ns.rmat_c, seed=ns.seed,
                directed=ns.directed, permute=not ns.no_permute, partitions=ns.partitions,
            )
            labels = None
            log.info(
                "rmat: scale %d (%d nodes), a=%g b=%g c=%g, seed %d, %s: drawing %d edges",
                ns.scale, nodes, ns.rmat_a, ns.rmat_b, ns.rmat_c, ns.seed,
                "directed" if ns.directed else "undirected", drawn,
            )
    except ValueError as exc:
        raise UserError(str(exc)) from exc

    edges, edge_obs = _observed(edges, "edges")
    tables = [(edge_columns(edges), edges_path, "generate_edges", f"drawing {drawn} edges of {nodes} nodes and "
               f"writing them to {edges_path}")]
    if labels is not None:
        labels, label_obs = _observed(labels, "labels")
        tables.append((label_columns(labels), labels_path, "generate_labels",
                       f"the {nodes} nodes' communities, written to {labels_path}"))
    took: dict[str, float] = {}
    writes = []
    for df, path, name, detail in tables:
        write, target = table_write(df, path, fmt, single_file=ns.single_file)
        writes.append((_as_stage(spark, write, name, detail, took), target))
    # The edges and the labels replace an earlier graph's together, once both are written.
    try:
        atomic_writes(writes, overwrite=ns.overwrite)
    except FileExistsError as exc:
        raise UserError(f"{exc}") from exc
    m = int(edge_obs.get["rows"])
    mean_degree = (m if ns.directed else 2 * m) / nodes
    log.info(
        "wrote %d edges (%d self-loops/repeats dropped, mean %sdegree %.3f%s) to %s in %.1f s",
        m, drawn - m, "out-" if ns.directed else "", mean_degree,
        f" over all {nodes:,} ids, those without an edge included" if ns.model == "rmat" else "",
        writes[0][1], took["generate_edges"],
    )
    if ns.model == "sbm" and mean_degree < 0.9 * ns.avg_degree:
        log.warning("the graph's mean degree is %.3f, not the %g asked: at this density many of the drawn edges "
                    "repeat one another and are kept once", mean_degree, ns.avg_degree)
    if labels is not None:
        log.info("wrote %d labels to %s in %.1f s", int(label_obs.get["rows"]), writes[1][1],
                 took["generate_labels"])
    _remove_stale(ns, marked)
    _mark(ns, marked)
    mark_written([target for _, target in writes])  # with the record the next run relies on
    took_all = time.time() - start
    log.info("generated %s graph in %.1f s", ns.model, took_all)
    # The summary on stdout, as the embed job's (the log lines above go to stderr).
    kind = (f"SBM graph ({ns.communities} communities, mixing {ns.mixing:g})" if ns.model == "sbm"
            else f"R-MAT graph (scale {ns.scale})")
    print(f"generated {'a directed' if ns.directed else 'an undirected'} {kind}, seed {ns.seed}: {nodes:,} nodes, "
          f"{m:,} edges, mean {'out-' if ns.directed else ''}degree {mean_degree:.2f}, in {took_all:.1f} s")
    print(f"  edges: {writes[0][1]} ({fmt})")
    if labels is not None:
        print(f"  labels: {writes[1][1]} ({fmt}; columns node, label)")
    return 0


def _as_stage(spark: SparkSession, write: Callable[[str], None], name: str, detail: str,
              took: dict[str, float]) -> Callable[[str], None]:
    """``write`` run as the stage ``name`` (its Spark job description and log lines), its
    time in ``took[name]``."""
    from sepne_spark.progress import stage

    def staged(tmp: str) -> None:
        t0 = time.time()
        with stage(spark, name, detail):
            write(tmp)
        took[name] = time.time() - t0

    return staged


#: The hidden file in OUTPUT that names the single-file tables runs of this job wrote
#: there and that are still there, each with its size and modification time: a later run
#: with --overwrite replaces or removes those (another layout's, ``edges.tsv`` beside a
#: new ``edges/``), and no file of the user's by the same name.
MARKER = "_sepne_generate.json"


def _written(ns: argparse.Namespace) -> list[str]:
    """The tables this run writes: OUTPUT's edges and, for the SBM, labels."""
    return [_target(ns.output, t, ns.format, ns.single_file) for t in ("edges", "labels")
            if t == "edges" or ns.model == "sbm"]


def _stale(ns: argparse.Namespace) -> list[str]:
    """OUTPUT's names of the tables other runs write that this run does not (an SBM's
    labels under an R-MAT graph, ``edges.tsv`` beside a new ``edges/``)."""
    written = set(_written(ns))
    return [old for table in ("edges", "labels") for fmt in FORMATS for single in (False, True)
            if (old := _target(ns.output, table, fmt, single)) not in written]


def _marked(output: str) -> dict[str, tuple[int, int]] | None:
    """The files :data:`MARKER` names (name in OUTPUT -> size and modification time as
    the run that wrote it saw them); None without a marker (a graph of an older version,
    or none) or where this process cannot read it."""
    from sepne_spark.storage import read_json

    try:
        marker = read_json(output.rstrip("/") + "/" + MARKER)
    except Exception:  # noqa: BLE001 - unreadable: nothing is taken for a run's
        return None
    files = marker.get("files") if isinstance(marker, dict) else None
    if not isinstance(files, dict):
        return None
    return {str(name): (int(stamp[0]), int(stamp[1])) for name, stamp in files.items()
            if isinstance(stamp, list) and len(stamp) == 2}


def _ours(path: str, marked: dict[str, tuple[int, int]] | None) -> bool:
    """Whether the file ``path`` is the one a run of this job wrote: named in the
    marker with the size and modification time it still has."""
    from sepne_spark.storage import file_stamp

    name = path.rstrip("/").rsplit("/", 1)[-1]
    return bool(marked) and name in marked and file_stamp(path) == marked[name]


def check_replaceable(ns: argparse.Namespace) -> None:
    """With ``--overwrite``, refuse before anything is written to replace or remove what
    is not an earlier run's table, naming it:

    * where this run writes a folder (``edges/``): a file, or a folder that holds more
      than part files and hidden files;
    * where it writes a file (``--single-file``): a folder, or, in an OUTPUT with a
      :data:`MARKER`, a file no run of this job wrote (a graph of an older version has
      no marker: its files are replaced, as the paths the run names);
    * the other layouts' names, which the run removes so that OUTPUT holds one graph
      (``edges.tsv`` beside a new ``edges/``): a folder that holds more than part files,
      or a file no run of this job wrote.

    Paths this process cannot list before Spark starts (a remote file system without
    pyarrow's set-up for it) are not looked at, as for every job's output.
    """
    from pyarrow import fs

    from sepne_spark.storage import check_holds_only_a_dataset, path_type

    if not ns.overwrite:
        return
    marked = _marked(ns.output)
    for target in _written(ns):
        kind = path_type(target)
        if not ns.single_file:
            check_holds_only_a_dataset(target, "--output table")
        elif kind == fs.FileType.Directory:
            raise UserError(f"{target} is a folder: --single-file writes a file there, which would delete it; "
                            "remove it first, or give another --output")
        elif kind == fs.FileType.File and marked is not None and not _ours(target, marked):
            raise UserError(f"{target} is a file no run of sepne-generate wrote ({MARKER} does not name it as it "
                            "is): --overwrite would replace it; remove it yourself, or give another --output")
    for old in _stale(ns):
        kind = path_type(old)
        if kind == fs.FileType.Directory:
            check_holds_only_a_dataset(old, "table of an earlier run")
        elif kind == fs.FileType.File and not _ours(old, marked):
            raise UserError(f"--output {ns.output} holds {old.rsplit('/', 1)[-1]}, which this run does not write "
                            f"({', '.join(t.rsplit('/', 1)[-1] for t in _written(ns))}) and --overwrite would "
                            f"remove so that the folder holds one graph, but no run of sepne-generate wrote it "
                            f"({MARKER} does not name it as it is): remove it yourself if it is an earlier graph's, "
                            "or give another --output")


def _remove_stale(ns: argparse.Namespace, marked: dict[str, tuple[int, int]] | None) -> None:
    """With ``--overwrite``, the tables of an earlier run in OUTPUT that this run did not
    replace (an SBM's labels under an R-MAT graph, ``edges.tsv`` beside a new ``edges/``)
    are removed, so that OUTPUT holds one graph: folders (of part files, as
    :func:`check_replaceable` found) and the files ``marked`` (read from the marker
    before this run wrote) as they still are. Any other file by such a name (found only
    where the check could not look) is named and kept."""
    from pyarrow import fs

    from sepne_spark.storage import path_type, remove

    if not ns.overwrite:
        return
    for old in _stale(ns):
        kind = path_type(old)
        if kind == fs.FileType.NotFound:
            continue
        if kind != fs.FileType.Directory and not _ours(old, marked):
            log.warning("kept %s: this run does not write it, and no run of sepne-generate wrote it as it is (it "
                        "may be yours); OUTPUT holds another graph's table beside this one", old)
            continue
        log.warning("removing %s, left by an earlier run: OUTPUT holds this run's graph only", old)
        remove(old)


def _mark(ns: argparse.Namespace, marked: dict[str, tuple[int, int]] | None) -> None:
    """Write :data:`MARKER`: this run's single files, and the files ``marked`` before it
    that are still there as they were (another layout's, kept without --overwrite)."""
    from sepne_spark.storage import file_stamp, write_json

    written = _written(ns)
    files = {}
    for path in [*_stale(ns), *written]:
        stamp = file_stamp(path)
        if stamp is not None and (path in written or _ours(path, marked)):
            files[path.rsplit("/", 1)[-1]] = list(stamp)
    write_json(ns.output.rstrip("/") + "/" + MARKER, {"model": ns.model, "files": files})


#: The flags of each model's group: given with the other model, they would do nothing.
MODEL_FLAGS = {"sbm": ("--nodes", "--communities", "--avg-degree", "--mixing"),
               "rmat": ("--scale", "--edges", "--rmat-a", "--rmat-b", "--rmat-c", "--no-permute")}


def check_args(ns: argparse.Namespace, argv: Sequence[str]) -> None:
    """Everything that can be checked without Spark: the model's parameters, flags of
    the other model, and outputs that exist (local ones) without ``--overwrite``."""
    from sepne_spark import generators
    from sepne_spark.storage import check_folder_to_write, check_not_in_dataset, check_output_path

    given = given_flags(argv)
    other = [flag for flag in MODEL_FLAGS["rmat" if ns.model == "sbm" else "sbm"] if flag in given]
    if other:
        raise UserError(f"{', '.join(other)} appl{'ies' if len(other) == 1 else 'y'} to "
                        f"--model {'rmat' if ns.model == 'sbm' else 'sbm'} only; this is --model {ns.model}")
    try:
        generators._check_seed(ns.seed)
        generators._check_partitions(ns.partitions)
        if ns.model == "sbm":
            generators._check_sbm(ns.nodes, ns.communities, ns.avg_degree, ns.mixing, ns.directed)
            if ns.avg_degree > ns.nodes - 1:
                raise ValueError(f"--avg-degree {ns.avg_degree:g} is more than a graph of --nodes {ns.nodes} can have "
                                 f"(at most {ns.nodes - 1} neighbours a node)")
        elif ns.edges is not None and ns.edges < 1:
            raise ValueError(f"--edges must be positive (0 draws no edge), got {ns.edges}")
        else:
            generators._check_rmat(ns.scale, 16 << ns.scale if ns.edges is None else ns.edges,
                                   ns.rmat_a, ns.rmat_b, ns.rmat_c)
    except ValueError as exc:
        raise UserError(_in_flags(str(exc))) from None
    check_folder_to_write(ns.output, "--output folder")  # it will hold edges/ and labels/
    for target in _written(ns):
        check_not_in_dataset(target)  # the folder --output names included
        check_output_path(target, [], overwrite=ns.overwrite)
    check_replaceable(ns)


#: The generators' parameter names, as this job's flags name them.
_FLAGS = {"nodes": "--nodes", "communities": "--communities", "avg_degree": "--avg-degree", "mixing": "--mixing",
          "scale": "--scale", "edges": "--edges", "seed": "--seed", "partitions": "--partitions"}


def _in_flags(message: str) -> str:
    """A generator's message (``avg_degree must be positive``) in the words of the
    flags (``--avg-degree must be positive``)."""
    message = in_flag_words(message, _FLAGS)
    return re.sub(r"(?<![-\w])([abc])(?=( >=|,|=))", r"--rmat-\1", message)


def session_conf(argv: Sequence[str]) -> dict[str, str]:
    """Check the arguments before Spark starts (no Spark settings of its own)."""
    check_args(parse_args(argv), argv)
    return {}


def cli(argv: Sequence[str] | None = None) -> int:
    """The ``sepne-generate`` command: check the arguments, then start Spark and run :func:`main`."""
    return run_job(main, "sepne-generate", argv, session_conf=session_conf)


if __name__ == "__main__":
    raise SystemExit(cli())
