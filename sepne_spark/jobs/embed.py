"""Embed a graph with SepNE and write the embeddings to Parquet.

    sepne-embed --input edges.tsv --output out/emb --profile document
    spark-submit jobs/embed.py --input edges.tsv --output out/emb --profile document

With ``--generated`` in place of ``--input`` it embeds a generated stochastic-block-model
graph (no download needed) and reports how well the embeddings recover the planted
communities.

Output (Parquet): ``id`` (as in the input), ``embedding`` (array of d doubles),
``is_landmark``, ``set_id`` (-1 for landmarks) and, with ``--context``, ``context``.
Every node of the input gets exactly one row; with ``--nodes`` only the nodes asked for.
A ``_manifest.json`` with the settings, versions, counts and stage timings is written
inside the output directory.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gzip
import logging
import os
import re
import sys
import time
from typing import TYPE_CHECKING, Any, Sequence

from sepne_spark import __version__
from sepne_spark import settings as schema
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
    in_flag_words,
    integer_arg,
    is_local_path,
    local_data_files,
    local_path,
    mark_written,
    number_arg,
    profile_arg,
    profile_names,
    qualify_paths,
    read_options,
    run_job,
    session_settings,
    settings_checked_quietly,
    show_profile_defaults,
)

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from pyspark.sql import SparkSession

log = logging.getLogger("sepne_spark.jobs.embed")

#: The generated graph's planted communities are scored on at most this many nodes.
SCORED_NODES = 20_000


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Append argparse's default, except to options whose default is "not given"
    (``None``): their help already states the real default (the profile's value). A
    switch's default reads as the settings' do: ``false``, not ``False``."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        if isinstance(action.default, bool) and "%(default)" not in (action.help or ""):
            return f"{action.help} (default: {'true' if action.default else 'false'})"
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """The ``sepne-embed`` command line: every setting of the schema as a flag, with the
    input, output, profile and run options."""
    p = JobArgumentParser(
        prog="sepne-embed",
        description="Compute SepNE node embeddings of an edge list and write them to Parquet.",
        formatter_class=_HelpFormatter,
    )
    io = p.add_argument_group("input and output")
    io.add_argument("--profile", default=schema.AUTO_PROFILE, type=profile_arg,
                    help=f"YAML profile: a name ({', '.join(profile_names()) or 'none found'}) or a path; "
                         f"default: auto, which takes {schema.AUTO_SMALL} for sparse graphs of up to "
                         f"{schema.AUTO_SMALL_NODES:,} nodes (its walk window shortened on denser ones) and "
                         f"{schema.AUTO_LARGE} otherwise, both with ProNE's filter (propagation 3) and the anchor "
                         f"for unreached nodes; {schema.AUTO_LARGE} with A+A2, log scaling and the landmark rows' "
                         f"subspaces while the two-step walks are at most {schema.AUTO_MAX_TWO_STEP_WALKS:,}, else "
                         "with I+A and the two-step walks' subspaces, both refining the solve over the whole graph "
                         "(README lists what auto changes by size; yarn extends auto with a cluster's session "
                         "settings); the setting defaults shown below are the built-in values, with the profile "
                         "named default's beside them where it differs")
    io.add_argument("--input", nargs="+", action="extend", default=None,
                    help="edge list file(s) or directories (tsv/csv/txt/parquet), after one --input or each of "
                         "several; one of --input and --generated is required")
    io.add_argument("--output", default=None, help="output directory (Parquet); required")
    io.add_argument("--overwrite", action="store_true", help="replace an existing output")
    io.add_argument("--json", default=None, metavar="PATH",
                    help="also write the run's summary as JSON (the manifest's fields, with the scores of a "
                         "generated graph's planted communities): a file (an existing one is replaced, whole), "
                         "or - for one line, the last of stdout")
    io.add_argument("--run-date", default=None, metavar="YYYY-MM-DD",
                    help="write to OUTPUT/dt=YYYY-MM-DD/, replacing only that partition")
    add_read_arguments(io)
    io.add_argument("--nodes", default=None,
                    help="embed only these ids (IO): a comma-separated list or @FILE with one id per line (blank and # "
                         "lines skipped, and a line that names the column: id, node, ...); @FOLDER reads its files")
    io.add_argument("--max-missing", type=float, default=None, metavar="FRACTION",
                    help="with --nodes: fail (exit 2, nothing written) when more than this fraction of the "
                         "requested ids are not nodes of the graph, e.g. 0 for none; by default those are left out "
                         "with a warning, and only a request of which no id is a node fails")
    io.add_argument("--save-model", default=None, metavar="PATH",
                    help="also save the fitted model here (an existing one is replaced with --overwrite, "
                    "or with --run-date when it is the model that date's earlier run saved)")
    io.add_argument("--model", default=None, metavar="PATH",
                    help="embed with a saved model instead of fitting; its parameters (k, d, metric, "
                    "direction, ...) are used, whatever the profile and the flags say")
    gen = p.add_argument_group("generated graph (in place of --input)")
    gen.add_argument("--generated", action="store_true",
                     help="embed a generated stochastic-block-model graph (the --gen-* flags describe it; any of "
                          "them implies --generated) and score its planted communities")
    gen.add_argument("--gen-nodes", type=integer_arg, default=3000, help="nodes of the generated SBM graph")
    gen.add_argument("--gen-communities", type=integer_arg, default=6, help="planted communities")
    gen.add_argument("--gen-avg-degree", type=number_arg, default=12.0, help="average degree")
    gen.add_argument("--gen-mixing", type=number_arg, default=0.3, help="fraction of edges placed at random")
    schema.add_arguments(p)
    show_profile_defaults(p)
    return p


def _requested(spark, text: str):
    """The ids of ``--nodes`` as strings (column ``id``), as written.

    :func:`sepne_spark.graph.requested_ids` converts them to the graph's id type.
    """
    from pyspark.sql import functions as F

    if text.startswith("@"):
        path = text[1:]
        # A local file (a path or a file: URI) was checked before Spark started.
        if not is_local_path(path) and not any(c in path for c in "*?[{") and not _exists(path):
            raise UserError(f"--nodes file {path} does not exist")
        # (Hadoop's line reader drops a byte-order mark before the first line.) A line
        # that is a column name (id, node, ...) is a header, not an id, in any file of
        # a folder and after comments too (_is_id_line).
        from sepne_spark.reading import text_lines

        ids = text_lines(spark, path).select(F.trim("value").alias("id"))
        return ids.where((F.col("id") != "") & ~F.col("id").startswith("#")
                         & ~F.lower("id").isin(*sorted(NODE_WORDS)))
    return spark.createDataFrame([(x.strip(),) for x in text.split(",") if x.strip()], "id string")


def _exists(path: str) -> bool:
    """Whether the remote ``path`` exists; True when its file system cannot tell (Spark's
    read reports it then)."""
    from sepne_spark.storage import exists

    try:
        return exists(path)
    except Exception:  # noqa: BLE001 - a file system the driver cannot reach: left to Spark
        return True


def _check_ids_file(path: str) -> None:
    """Refuse, before Spark starts, a local ``--nodes`` file without an id (empty, or
    blanks and ``#`` lines only), and a local file or folder whose first id line (in each
    of its first files) holds a tab or a comma: several fields, such as an edge list's,
    where one id per line is read (every line would be a missing id). Each file is read
    line by line up to its first id; a gzip'd one (``.gz``) as Spark reads it."""
    if not is_local_path(path):
        return  # a remote file: the job's check of the ids covers it
    local = local_path(path)
    files = local_data_files(local, limit=8)
    for file in files:
        opener = gzip.open if file.endswith(".gz") else open
        try:
            with opener(file, "rt", encoding="utf-8-sig", errors="replace") as f:  # a byte-order mark is no id
                first = next(((n, line.strip()) for n, line in enumerate(f, 1) if _is_id_line(line.strip())), None)
        except (OSError, EOFError):  # not gzip after all, unreadable: Spark's read reports it
            continue
        if first is not None and ("\t" in first[1] or "," in first[1]):
            where = os.path.relpath(file, local) if file != local else path
            raise UserError(f"--nodes file {where}, line {first[0]}: {first[1][:80]!r} holds several fields; "
                            "--nodes @FILE takes one id per line (an edge list is --input)")
        if first is None and file == local:
            raise UserError(f"--nodes file {path} holds no id (one id per line; blank and # lines, and a column "
                            "name such as id, are skipped)")


def _is_id_line(line: str) -> bool:
    """Whether a stripped line of a ``--nodes`` file is an id: not blank, not a ``#``
    comment, not a column name (:data:`NODE_WORDS`, a header)."""
    return bool(line) and not line.startswith("#") and line.lower() not in NODE_WORDS


def _output_target(ns: argparse.Namespace) -> str:
    """Where the embeddings go: ``--output``, or its ``dt=`` partition with ``--run-date``."""
    target = ns.output.rstrip("/")
    if ns.run_date is not None:  # "" too: an empty date from a scheduler's template is an error, not "no date"
        try:
            canonical = time.strftime("%Y-%m-%d", time.strptime(ns.run_date, "%Y-%m-%d"))
        except ValueError:
            raise UserError(f"--run-date {ns.run_date!r} is not a date YYYY-MM-DD") from None
        if canonical != ns.run_date:  # dt=2026-1-5 and dt=2026-01-05 would be two partitions of one day
            raise UserError(f"--run-date {ns.run_date!r} is not written YYYY-MM-DD: give {canonical}")
        parent, slash, last = target.rpartition("/")
        if last.startswith("dt="):  # OUT/dt=D/dt=D: two dt columns for a reader of OUT
            # its folder: "." for a bare name, the file system's root for /dt=, hdfs:///dt=
            root = "." if not slash else parent + "/" if not parent or parent.endswith((":", "/")) else parent
            raise UserError(f"--output {ns.output} is a dt= partition already, and --run-date adds its own: give "
                            f"the dated output's root, --output {root}")
        target = f"{target}/dt={ns.run_date}"
    return target


def _with_model_params(settings: schema.EmbedSettings, params: dict, ns: argparse.Namespace) -> schema.EmbedSettings:
    """``settings`` with a loaded model's parameters in place of the resolved ones.

    Where the command line (a flag, or a ``--profile`` given) asked for another value, a
    warning names it: the model's value is the one used. Defaults, of the built-in
    settings or of ``auto``, give way without a word.
    """
    changed = {name: params[p] for p, name in schema.MODEL_PARAMS.items() if getattr(settings, name) != params[p]}
    own = schema.auto_extension(ns.profile)  # under auto, only what the profile sets over auto's choice
    asked = set(schema.load_profile(ns.profile)) if own is None else set(own)
    for p, name in schema.MODEL_PARAMS.items():
        flag = getattr(ns, name, None)  # k, d, metric and window given as flags are not in settings (_checked)
        wanted = schema.coerce_flag(name, flag) if flag is not None else getattr(settings, name)
        if wanted != params[p] and (flag is not None or name in asked):
            log.warning("--model: %s is the model's %r, not %r", name, params[p], wanted)
    return dataclasses.replace(settings, **changed)


def _checked(argv: Sequence[str] | None) -> tuple[argparse.Namespace, schema.EmbedSettings, str]:
    """Parse ``argv`` and check everything that can be checked without Spark.

    Returns the parsed arguments, the resolved settings and the output target. Only
    paths are looked at: a local input or ``--nodes @FILE`` that does not exist, an
    output that would overwrite data or the input, a bad ``--run-date``.
    """
    ns = build_parser().parse_args(None if argv is None else list(argv))
    # Under auto the profile is chosen from the graph: until then only the flags' own
    # combinations are checked (the default profile's reading and job settings apply).
    if ns.output is None:  # not argparse's required=: an unknown flag (--out) is named first, with its fix
        raise UserError("give the output folder with --output (the embeddings are written there as Parquet)")
    own = schema.auto_extension(ns.profile)  # what a profile over auto sets itself; None: no auto
    auto = own is not None
    # With --model the model's own k, d, metric and window replace the flags' (see
    # _with_model_params, which warns of each): the rules among them are not checked here.
    given = argparse.Namespace(**{**vars(ns), **dict.fromkeys(("dim", "landmarks", "metric", "window"))}) \
        if ns.model else ns
    settings = schema.resolve(given, schema.load_profile(ns.profile), provisional=auto, profile_name=ns.profile)
    qualify_paths(ns, ("input", "output", "save_model", "model", "json"), settings.spark)
    generated = sorted(f for f in given_flags(sys.argv[1:] if argv is None else argv) if f.startswith("--gen"))
    if ns.input and generated:
        raise UserError(f"{', '.join(generated)} describe{'s' if len(generated) == 1 else ''} the generated graph, "
                        "which --input replaces: drop one or the other")
    ns.generated = bool(generated)
    if generated:  # flags of reading a file, with no file to read: said, not ignored
        from sepne_spark.jobs.common import READ_OPTIONS

        reading = {"--" + name.replace("_", "-") for name in (*READ_OPTIONS, "bad_lines", "input_format")}
        unread = sorted(reading & given_flags(sys.argv[1:] if argv is None else argv))
        if unread:
            raise UserError(f"{', '.join(unread)} tell{'s' if len(unread) == 1 else ''} how an --input file is read; "
                            f"the generated graph ({generated[0]}) is read from none: drop "
                            f"{'it' if len(unread) == 1 else 'them'}")
    if not ns.input:  # the generated graph's flags, in the words of their flags
        from sepne_spark import generators

        try:
            generators._check_sbm(ns.gen_nodes, ns.gen_communities, ns.gen_avg_degree, ns.gen_mixing)
            if ns.gen_avg_degree > ns.gen_nodes - 1:
                raise ValueError(f"avg_degree {ns.gen_avg_degree:g} is more than a graph of nodes={ns.gen_nodes} "
                                 f"can have (at most {ns.gen_nodes - 1} neighbours a node)")
        except ValueError as exc:
            raise UserError("the generated graph's " + in_flag_words(str(exc), {
                name: "--gen-" + name.replace("_", "-") for name in ("nodes", "communities", "avg_degree", "mixing")
            })) from None
    if ns.nodes is not None and not ns.nodes.strip(" ,@"):
        raise UserError(f"--nodes {ns.nodes!r} names no id: give comma-separated ids, or @FILE with one id per line")
    if ns.max_missing is not None:
        if not ns.nodes:
            raise UserError("--max-missing is the share of the requested ids (--nodes) that may be missing: give "
                            "--nodes, or drop --max-missing")
        if not 0 <= ns.max_missing <= 1:  # NaN too
            raise UserError(f"--max-missing {ns.max_missing:g}: give a fraction from 0 to 1")

    from sepne_spark.storage import (check_apart, check_folder_to_write, check_holds_only_a_dataset,
                                     check_no_partitions, check_not_in_dataset, check_partition_parent)

    check_folder_to_write(ns.output)  # before --run-date's partition is added to it

    if settings.partition == "IO" and not ns.nodes:
        raise UserError("partition IO embeds only requested nodes: give them with --nodes")
    read_options(ns)  # conflicting layout flags are refused here, before Spark starts
    # auto turns off the whole-graph steps that neither a flag nor the profile over it gives
    step_names = ("propagation", "refine_steps", "average_steps")
    steps = schema.resolve({k: getattr(ns, k) for k in step_names}, {k: own[k] for k in step_names if k in own},
                           provisional=True) if own is not None else settings
    if ns.nodes and not ns.model and (steps.propagation > 1 or steps.refine_steps > 0
                                      or steps.average_steps > 0):
        def named(name: str) -> str:  # a flag as given, or the profile's setting
            value = getattr(steps, name)
            if getattr(ns, name, None) is not None:
                return f"--{name.replace('_', '-')} {value}"
            return f"{name} {value} (from --profile {ns.profile})"

        what = [f"{named('propagation')} smooths every vector over 2 x {steps.propagation} - 1 "
                "hops of the whole graph"] if steps.propagation > 1 else []
        what += [f"{named('average_steps')} averages every vector over its "
                 f"{steps.average_steps}-hop neighbourhood"] if steps.average_steps > 0 else []
        what += [f"{named('refine_steps')} refines every vector over the whole graph"] \
            if steps.refine_steps > 0 else []
        fix = " and ".join(flag for flag, on in (("--propagation 1", steps.propagation > 1),
                                                   ("--average-steps 0", steps.average_steps > 0),
                                                   ("--refine-steps 0", steps.refine_steps > 0)) if on)
        raise UserError(f"{' and '.join(what)}, so it embeds whole graphs only: drop --nodes, or give {fix}")
    target = _output_target(ns)
    if not ns.input and not ns.generated:  # never a generated graph by accident (a flag lost in a scheduler's command)
        raise UserError("give the edge list to embed with --input (or --generated for a generated graph)")
    twice = sorted({p for p in ns.input or [] if (ns.input or []).count(p) > 1})
    if twice:  # its edges would be read twice, and with duplicates sum every weight doubled
        raise UserError(f"--input {twice[0]} is given twice: give each edge list once")
    check_inputs_exist(ns.input or [], "--input")
    check_edge_folders(ns.input or [], "--input")
    check_input_format(ns.input or [], settings.input_format, "--input")
    check_input_head(ns.input or [], settings.input_format, read_options(ns), settings.bad_lines)
    if ns.nodes and ns.nodes.startswith("@"):
        check_inputs_exist([ns.nodes[1:]], "--nodes file", allow_empty=True)
        _check_ids_file(ns.nodes[1:])  # an empty file too: it holds no id
    if ns.model:
        check_inputs_exist([ns.model], "--model")
        model_dir = local_path(ns.model) if is_local_path(ns.model) else None
        from sepne_spark.model import MODEL_FOLDERS, NO_MODEL, local_saved_id_type

        if model_dir and os.path.isdir(model_dir) and not any(
                os.path.isdir(os.path.join(model_dir, name)) for name in MODEL_FOLDERS):
            raise UserError(f"--model: no SepNE model at {ns.model}: {NO_MODEL}; give the folder that "
                            "--save-model or model.save() wrote")
        if model_dir and ns.generated and local_saved_id_type(model_dir) == "string":
            raise UserError(f"--model {ns.model} was fitted on string node ids, and a generated graph's ids are "
                            "integers, none of them its landmarks: embed the graph it was fitted on (--input), or "
                            "fit a model on the generated graph (drop --model)")
    read = (ns.input or []) + ([ns.model] if ns.model else [])  # a saved model is an input too
    _check_output(target, read, ns.overwrite or bool(ns.run_date))
    check_not_in_dataset(ns.output)
    if ns.run_date:
        check_partition_parent(ns.output, "dt")
    elif ns.overwrite:
        check_no_partitions(ns.output, "dt", r"\d{4}-\d{2}-\d{2}")
    check_holds_only_a_dataset(target, part_suffix=".parquet")  # what --overwrite (or --run-date's rerun) would replace
    if ns.json and ns.json != "-":
        from sepne_spark.storage import check_json_path

        check_json_path(ns.json, read)
        check_apart(ns.json, "--json path", target, "output path")
        if ns.run_date:  # beside the dated runs, not among them (a reader of OUTPUT would trip on it)
            check_apart(ns.json, "--json path", ns.output, "output folder of the dated runs")
        if ns.save_model:
            check_apart(ns.json, "--json path", ns.save_model, "--save-model path")
    if ns.save_model:
        from sepne_spark.model import MODEL_FOLDERS

        _check_output(ns.save_model, read, ns.overwrite or bool(ns.run_date), "--save-model path", MODEL_FOLDERS)
        check_apart(ns.save_model, "--save-model path", target, "output path")
        check_holds_only_a_dataset(ns.save_model, "--save-model path", model_folders=MODEL_FOLDERS)
        if ns.run_date:  # beside the dated runs, not among them (a reader of OUTPUT would trip on it)
            check_apart(ns.save_model, "--save-model path", ns.output, "output folder of the dated runs")
            if is_local_path(ns.save_model):  # another date's model, named now (main() checks it again)
                check_model_of_run_date(ns, None, local_path(ns.save_model))
    return ns, settings, target


def _check_output(path: str, read: Sequence[str], overwrite: bool, what: str = "output path",
                  model_folders: Sequence[str] = ()) -> None:
    """:func:`~sepne_spark.storage.check_output_path`; where it refuses an existing path
    with the hint to pass ``--overwrite``, a path that ``--overwrite`` would not replace
    either (it holds other data) is named as that instead."""
    from sepne_spark.storage import OutputExistsError, check_holds_only_a_dataset, check_output_path

    try:
        check_output_path(path, read, overwrite=overwrite, what=what)
    except OutputExistsError:
        check_holds_only_a_dataset(path, what, model_folders=model_folders)
        raise


def check_model_of_run_date(ns: argparse.Namespace, spark: SparkSession | None, path: str) -> None:
    """With ``--run-date`` and without ``--overwrite``, an existing ``--save-model`` path
    is replaced only when it holds the model a run of the same date saved (a rerun
    replaces what its first run wrote); another date's model, or anything else, is
    refused. ``path``: where the model goes (``--save-model`` as the session resolves
    it), read with ``spark`` before the graph is; with ``spark`` None, a local folder
    read before Spark starts (metadata of a codec only Spark reads is left to the check
    with ``spark``)."""
    from sepne_spark.model import local_saved_metadata, saved_metadata
    from sepne_spark.storage import exists

    if not (ns.run_date and ns.save_model) or ns.overwrite or not exists(path):
        return
    if spark is None:
        try:
            metadata = local_saved_metadata(path)
        except LookupError:
            return
    else:
        metadata = saved_metadata(path, spark)
    saved = (metadata or {}).get("runDate")
    if saved == ns.run_date:
        return
    what = (f"the model of --run-date {saved}" if saved else
            "a model without a recorded run date (saved without --run-date, or by a version that did not record it)"
            if metadata is not None else "something other than a saved model")
    raise UserError(f"--save-model path {ns.save_model} holds {what}; a --run-date run replaces only the model "
                    f"its own date saved: pass --overwrite to replace it, or give each date its own path "
                    f"(e.g. models/dt={ns.run_date})")


def _used(used: dict, param: str) -> Any:
    """The value of the Param ``param`` (``averageSteps``) in ``used``, a model's
    settings, else the schema's default of that setting."""
    return used.get(param, schema.setting(re.sub(r"(?<!^)([A-Z])", r"_\1", param).lower()).default)


def check_missing(ns: argparse.Namespace, counts: dict[str, Any]) -> None:
    """Refuse the run when more of the requested ids than ``--max-missing`` allows are
    not nodes (``counts``: ``requested`` and ``requested_missing``, as
    :func:`~sepne_spark.graph.requested_ids` counts them)."""
    if ns.max_missing is None or not counts.get("requested"):
        return
    missing, asked = int(counts["requested_missing"]), int(counts["requested"])
    if missing > ns.max_missing * asked:
        raise UserError(f"{missing:,} of the {asked:,} requested ids ({missing / asked:.1%}) are not nodes of the "
                        f"graph, more than --max-missing {ns.max_missing:g} allows; nothing was written (the warning "
                        "above quotes some of them)")


def subspaces_note(used: dict, notes: dict[str, Any]) -> str:
    """For the job's summary: where the landmark subspaces came from, when that is not
    what ``landmarkFactors`` says (the walks over a sample of the nodes, or M00's own
    when the walks were over the limit); empty otherwise."""
    if "walk_sample" in notes:
        return f"; landmark subspaces from the walks over {100 * notes['walk_sample']:.1f}% of the nodes"
    if _used(used, "landmarkFactors") == "walks" and notes.get("landmark_subspaces") == "M00":
        return "; landmark subspaces: M00's own (the walks were over the limit of products)"
    return ""


def merged_parts(merged: dict[str, int] | None) -> list[str]:
    """The self-loops dropped and the repeats merged of :func:`~sepne_spark.graph.count_edges`,
    in words, those that are not 0 (none without the reader's counts): for the log and the
    summary."""
    if not merged:
        return []
    return [f"{n:,} {word}{'s' * (n != 1)} {done}" for n, word, done in (
        (merged["self_loops_dropped"], "self-loop", "dropped"), (merged["repeats_merged"], "repeat", "merged")) if n]


def check_landmarks_present(spark: SparkSession, model: Any, graph: Any, ns: argparse.Namespace,
                            counts: dict[str, int]) -> None:
    """Refuse a graph that holds none of a saved model's landmarks, and warn when it
    holds fewer than half: every vector is built from the proximity to them, so the
    model was fitted on another graph, or the ids are written another way (``n163``
    for ``163``). One small job: the k landmark ids against the graph's nodes. Records
    ``model_landmarks_present`` in ``counts``."""
    from pyspark.sql import functions as F

    from sepne_spark.pipeline import check_id_type, landmark_frame

    check_id_type(graph, model.id_type)  # before the join casts one to the other
    k = len(model.landmark_ids)
    landmarks = landmark_frame(spark, model.landmark_ids, model.id_type)
    present = int(graph.vertices.join(F.broadcast(landmarks), "id", "left_semi").count())  # k ids sent, not n
    counts["model_landmarks_present"] = present
    shown = ", ".join(map(repr, model.landmark_ids[:3]))
    if not present:
        raise UserError(f"--model: none of the model's {k:,} landmarks (e.g. {shown}) is a node of "
                        f"{', '.join(ns.input) if ns.input else 'the generated graph'}: the model was fitted on "
                        "another graph, or its node ids are written another way; every vector would be zero or "
                        "the unreached nodes' anchor")
    if present < k / 2:
        log.warning("--model: only %s of the model's %s landmarks are nodes of this graph: nodes far from the others "
                    "get weak or zero vectors (a graph much changed since the fit: fit a new model)",
                    f"{present:,}", f"{k:,}")
    elif present < k:
        log.info("--model: %s of the model's %s landmarks are nodes of this graph", f"{present:,}", f"{k:,}")


def zero_reason(used: dict, what: str) -> str:
    """Why nodes got the zero vector, given the settings used: without propagation or
    averaging no node of their set reaches a landmark through M; with them (and any
    refinement, which spreads the same way), no node within their reach got a vector from
    the solve either."""
    if _used(used, "unreached") == "anchor":
        return ("they have no edge of non-zero weight to another node (every node with one that no landmark "
                "reaches got the anchor, --unreached anchor)")
    steps = _used(used, "averageSteps")
    if _used(used, "propagation") <= 1 and steps <= 0:
        return (f"neither they nor the other nodes of their set reach a landmark through M ({what})"
                + ("; on a directed graph a node without out-edges has an empty row of M, and reaches none"
                   if _used(used, "directed") else ""))
    reach = "the spectral filter" if _used(used, "propagation") > 1 else f"the averaging ({steps} hops)"
    return (f"no node within reach of {reach} around them reaches a landmark through M ({what}), "
            "as in a connected component that holds no landmark")


def zero_advice(used: dict, n_nodes: int | None) -> str:
    """What to change so that fewer nodes get the zero vector, given the settings used
    (a model's parameters: ``landmarkStrategy``, ``landmarks``, ``metric``, ``window``)."""
    if _used(used, "unreached") == "anchor":
        return "drop the isolated nodes, or leave them at zero: the graph says nothing about them"
    tips = ["--unreached anchor (a shared direction and one per component for the nodes of components "
            "without a landmark)"]
    if _used(used, "propagation") <= 1:
        tips.append("--propagation 3 (the spectral filter gives every node of a component that holds a "
                    "landmark a vector from its neighbourhood)")
    if used["landmarkStrategy"] != "GDS":
        tips.append("--landmark-strategy GDS (a greedy dominating set reaches more of the graph)")
    if n_nodes is None or used["landmarks"] < n_nodes:
        tips.append("more --landmarks")
    if used["metric"] == "I+A":
        tips.append("--metric A+A2 (two-hop proximity)")
    elif _used(used, "window") < 5:
        tips.append("a longer --window (walks of more steps)")
    tips.append("dropping those components (often small ones cut off from the rest)")
    return "try " + ", or ".join(tips)


def _conf(spark, key: str) -> str | None:
    try:
        return spark.conf.get(key, None)
    except Exception:  # noqa: BLE001 - not every session exposes every key
        return None


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


#: The parts of fit, and the stages after it, in the order they run.
FIT_PARTS = ("landmarks", "summaries_svd")
#: ``auto_profile`` counts the two-step walks that ``--profile auto`` needs on a graph
#: beyond the document size or too dense for its walks. ``solve_write`` is the partition, the rows of M, the solve
#: and any propagation in one pass; the label propagation of ``LP`` sets runs before it,
#: as ``partition``; with a propagation by row blocks, the solve and the propagation run
#: before it, as ``solve_propagation``, and ``solve_write`` writes their result. On the
#: distributed path ``unreached`` (``--unreached anchor``) runs before the write too,
#: after ``solve_propagation`` (the solve and any steps after it, computed once for it);
#: in one task the anchor is part of the task, in ``solve_write``.
BEFORE_FIT = ("auto_profile", "requested_ids")
#: ``load_model``: reading a saved model (``--model``), before the input is read.
BEFORE_READ = ("load_model",)
AFTER_FIT = ("partition", "solve_propagation", "unreached", "save_model", "solve_write")


def _time_line(timings: dict[str, float], loaded: bool) -> str:
    """``read 2.0s, fit 30.1s (landmarks 10.0s, summaries_svd 19.9s), partition ..., total 45.0s``:
    the top-level stages add up to about the total; fit's parts are in brackets."""
    parts = ([f"{k} {timings[k]:.1f}s" for k in BEFORE_READ if k in timings] + [f"read {timings.get('read', 0.0):.1f}s"]
             + [f"{k} {timings[k]:.1f}s" for k in BEFORE_FIT if k in timings])
    if loaded:
        parts.append("fit: loaded model")
    else:
        inner = ", ".join(f"{k} {timings[k]:.1f}s" for k in FIT_PARTS if k in timings)
        parts.append(f"fit {timings.get('fit', 0.0):.1f}s" + (f" ({inner})" if inner else ""))
    parts += [f"{k} {timings[k]:.1f}s" for k in AFTER_FIT if k in timings]
    parts.append(f"total {timings.get('total', 0.0):.1f}s")
    return ", ".join(parts)


def session_conf(argv: Sequence[str]) -> dict[str, str]:
    """Check the arguments (see :func:`_checked`) and return the Spark settings of the
    chosen profile (and ``--spark``) for a session we build.

    :func:`cli` calls it before any session exists, so errors arrive at once.
    """
    with settings_checked_quietly():  # main() checks again and warns once
        _, settings, _ = _checked(argv)
    return dict(settings.spark)


def cli(argv: Sequence[str] | None = None) -> int:
    """The ``sepne-embed`` command: check the arguments, then start Spark and run :func:`main`."""
    return run_job(main, "sepne-embed", argv, session_conf=session_conf)


def _shown_arguments(argv: Sequence[str], also: str | None = None) -> list[str]:
    """The job's arguments as given, with the value of every ``KEY=VALUE`` that looks like
    a credential hidden (``--spark KEY=VALUE`` in any of the forms argparse takes;
    :func:`~sepne_spark.settings.is_secret_key`, with the site's pattern ``also``)."""
    from sepne_spark.settings import is_secret_key

    shown = []
    for arg in argv:  # KEY=VALUE, alone or after a flag's "=" (--spark=KEY=VALUE)
        found = re.match(r"(--[\w-]+=)?([^=]+)=(.*)", arg, re.DOTALL)
        shown.append(f"{found.group(1) or ''}{found.group(2)}=*********"
                     if found and is_secret_key(found.group(2), also, found.group(3)) else arg)
    return shown


def _versions() -> dict[str, str]:
    """The versions of Python and of the packages the numbers depend on."""
    import platform

    import numpy
    import pyarrow
    import scipy

    return {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
            "pyarrow": pyarrow.__version__}


def main(spark: SparkSession | None, args: Sequence[str] | None = None) -> int:
    """Entry point: ``main(spark, ["--input", ...])``; returns the exit status.

    The rows are counted as they are written, with an ``Observation``: in PySpark 4.1 a
    classic session that ran one cannot compute pyspark.ml's training summaries any
    more, so a notebook that trains such models afterwards passes ``spark.newSession()``.

    Every table the run persists (the graph's, the fit's, the embedding's) is
    unpersisted before it returns, also on failure, so that a long-lived session (a
    notebook, a scheduler's worker) keeps no cached table of it. Checkpoints written to a
    session's ``spark.checkpoint.dir`` are left to Spark's cleaner (see README,
    "Checkpoints"); run as a command, the job removes the folder of its own session's
    checkpoints when it ends (:func:`~sepne_spark.jobs.common.run_job`).
    """
    ns, settings, target = _checked(args)
    ns.argv = list(sys.argv[1:] if args is None else args)  # for the manifest
    if ns.nodes and "--partition" in given_flags(sys.argv[1:] if args is None else args) \
            and settings.partition != "IO":
        log.warning("--nodes embeds the requested ids' sets only (partition IO): --partition %s is not used",
                    settings.partition)
    cleanup: list = []
    try:
        with session_settings(spark, settings.spark) as not_applied:  # a session running before the job
            return _run(spark, ns, settings, target, cleanup, not_applied)
    finally:
        for release in reversed(cleanup):
            try:
                release()
            except Exception as exc:  # noqa: BLE001 - the run's own outcome (or error) stands
                # One line (a stopped run's JVM may be gone by now); the trace for a debug log.
                log.warning("could not release a cached table (the session may be stopping; Spark drops its "
                            "cache with it): %s: %s", type(exc).__name__,
                            str(exc).splitlines()[0] if str(exc) else "")
                log.debug("the release's error", exc_info=True)


def _run(spark, ns: argparse.Namespace, settings: schema.EmbedSettings, target: str, cleanup: list,
         not_applied: dict[str, str] | None = None) -> int:
    """The body of :func:`main`; appends to ``cleanup`` what releases each cached table.
    ``not_applied``: the Spark settings the running session could not take (for the
    manifest)."""
    started = time.time()

    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from sepne_spark.jobs.common import input_fingerprint
    from sepne_spark.graph import count_edges, load_graph, prepare_graph
    from sepne_spark.model import SepNE, SepNEModel, requested_ids
    from sepne_spark.pipeline import spectral_steps
    from sepne_spark.progress import stage
    from sepne_spark.proximity import metric_text
    from sepne_spark.settings import redaction_pattern
    from sepne_spark.storage import atomic_writes, resolve_output, write_manifest

    if ns.save_model:  # where the session puts it: a path without a scheme goes to its fs.defaultFS
        check_model_of_run_date(ns, spark, resolve_output(spark, ns.save_model))
    timings: dict[str, float] = {}
    labels = None
    model = None
    if ns.model:
        # A saved model brings its own parameters: the graph is read its way, and the
        # manifest records them (not the command line's or the profile's).
        with stage(spark, "load_model", ns.model, timings) as st:
            try:
                model = SepNEModel.load(ns.model)
            except FileNotFoundError as exc:  # a path that holds no saved model: the user's to fix
                raise UserError(f"--model: {exc}") from None
            st.count(landmarks=len(model.landmark_ids))
        if ns.nodes and (model.getPropagation() > 1 or model.getRefineSteps() > 0 or model.getAverageSteps() > 0):
            # The filter reads every node within 2T - 1 hops, the averaging within S hops,
            # the refinement every node: requested ids get the solve alone.
            log.warning("--model: the model averages with %d steps, refines with %d rounds and propagates with %d "
                        "terms; requested ids are embedded without them (they embed whole graphs only)",
                        model.getAverageSteps(), model.getRefineSteps(), model.getPropagation())
            model.setPropagation(1)
            model.setRefineSteps(0)
            model.setAverageSteps(0)
        if not ns.nodes and model.getPartition() == "IO":
            # Saved from a run of requested ids: the whole graph takes the sets the
            # command line or the profile names (never IO without --nodes, checked before).
            log.warning("--model: the model was saved with partition IO (requested ids); the whole graph is "
                        "embedded with partition %s", settings.partition)
            model.setPartition(settings.partition)
        settings = _with_model_params(settings, model.settings(), ns)
    what_read = ", ".join(ns.input) if ns.input else f"a generated SBM graph of {ns.gen_nodes} nodes"
    with stage(spark, "read", what_read, timings) as st:
        if ns.input:
            graph = load_graph(
                spark, ns.input, settings.input_format, directed=settings.directed,
                duplicates=settings.duplicates, self_loops=settings.self_loops, bad_lines=settings.bad_lines,
                **read_options(ns),
            )
            source = what_read
        else:
            from sepne_spark.generators import sbm_graph

            edges, labels = sbm_graph(spark, ns.gen_nodes, ns.gen_communities, ns.gen_avg_degree, ns.gen_mixing,
                                      settings.seed, directed=settings.directed)
            graph = prepare_graph(edges.select("src", "dst", F.lit(1.0).alias("weight")), settings.directed,
                                  check=False)
            source = (f"generated SBM graph: {ns.gen_nodes} nodes, {ns.gen_communities} communities, "
                      f"average degree {ns.gen_avg_degree}, mixing {ns.gen_mixing}")
        requested = _requested(spark, ns.nodes) if ns.nodes else None
        # With a saved model and requested nodes, M = I + A reads only their neighbourhood:
        # the graph is never merged or counted as a whole (SepNEModel.embeds_locally).
        local = model is not None and requested is not None and model.embeds_locally(graph, requested)
        n_nodes = n_edges = None
        merged = None
        if not local:
            for frame in (graph.edges, graph.vertices):
                frame.persist()
                cleanup.append(frame.unpersist)
            n_edges, merged = count_edges(graph)
            n_nodes = int(graph.vertices.count())  # a Spark Connect 3.5 client counts in NumPy integers
            dropped = merged_parts(merged)
            if dropped:
                log.info("%s edge lines: %s (%sa repeat is an edge read again%s, merged by --duplicates %s); %s edges "
                         "left", f"{merged['input_lines']:,}", ", ".join(dropped),
                         "--self-loops keep keeps self-loops; " if merged["self_loops_dropped"] else "",
                         "" if graph.directed else " in either direction", graph.duplicates, f"{merged['edges']:,}")
            st.count(nodes=n_nodes, edge_rows=n_edges)
    if local:
        log.info("read %s: validated; only the requested nodes' neighbourhood is used (%.1f s)", source, timings["read"])
    # A saved model's parameters replace the profile's (see _with_model_params).
    profile_used = ns.profile if model is None else f"none: the parameters of the saved model {ns.model}"
    chosen = ns.profile
    own = schema.auto_extension(ns.profile)  # None: a profile that does not extend auto
    if own is not None and model is None:
        settings, chosen = auto_settings(ns, graph, n_nodes, n_edges, timings)
        profile_used = f"auto: {chosen}" if ns.profile == schema.AUTO_PROFILE else f"{ns.profile} (auto: {chosen})"
    if model is None and n_nodes is not None and settings.landmarks > n_nodes:  # before requested_ids' job
        # a profile's own landmarks over auto's choice: its file
        source = ns.profile if own is None or "landmarks" in own else chosen
        where = ("--landmarks" if ns.landmarks is not None else f"the profile {schema.profile_label(source)}"
                 if "landmarks" in schema.load_profile(source) else "the built-in default")
        dim = f", and --dim at most that (it is {settings.dim})" if settings.dim > n_nodes else ""
        raise UserError(f"landmarks {settings.landmarks} (from {where}) is more than the {n_nodes:,} nodes of the "
                        f"graph: give --landmarks with at most {n_nodes:,}{dim} (the profile auto takes at most "
                        "half the nodes)")
    # Before fitting: requested ids that are not nodes are reported (an error when none is).
    # With a loaded model the embedding does that itself.
    wanted = requested
    asked: dict[str, int] = {}  # the requested and missing ids, for the manifest
    if requested is not None and model is None:
        id_type = graph.vertices.schema["id"].dataType
        with stage(spark, "requested_ids", "which of the requested ids are nodes of the graph", timings):
            wanted = requested_ids(requested, graph.vertices, id_type, counts=asked)
        check_missing(ns, asked)  # before the fit

    t = time.time()
    if model is None:
        model = SepNE(**schema.model_params(settings)).fit(graph)
    cleanup.append(model.release)
    timings["fit"] = time.time() - t

    used = model.settings()  # a loaded model's own parameters, not the command line's
    what = metric_text(used["metric"], used["window"]) + (", log scaling" if used["scaling"] == "log" else "")
    landmarks_found: dict[str, int] = {}  # a loaded model's landmarks among the graph's nodes
    if ns.model and not local:
        check_landmarks_present(spark, model, graph, ns, landmarks_found)
    # Lazy: everything from the partition on runs in the write. A loaded model checks the
    # requested ids here, as a stage of its own.
    checks = stage(spark, "requested_ids", "which of the requested ids are nodes of the graph, and the rows of "
                   "their neighbourhood", timings) if requested is not None and ns.model else contextlib.nullcontext()
    with checks:
        out = model.embed(wanted, graph, nodes=n_nodes)
    if ns.model:
        check_missing(ns, model.plan)  # the loaded model's own check of the ids, before the write
    timings.update(model.timings)  # landmarks, summaries_svd (the embedding is lazy: it runs in the write)
    cols = ["id", "embedding", "is_landmark", "set_id"] + (["context"] if settings.context else [])
    out = out.select(*cols)

    counts: dict[str, int] = {"bad_lines": graph.bad_lines, **landmarks_found}
    if local:
        counts["rows_of_A_read"] = int(model.plan["rows_read"])
    else:
        counts.update(input_nodes=n_nodes, input_edge_rows=n_edges, **(merged or {}))
    plan = dict(model.plan)
    plan.update(asked)  # the job's own check saw the ids as given (the model's, those found)
    for key in ("requested", "requested_missing"):
        if key in plan:
            counts[key] = int(plan.pop(key))

    secrets = redaction_pattern(settings.spark, spark)  # the site's spark.redaction.regex, if any
    applied = settings.as_dict(also=secrets)  # what the run did: requested ids take their own sets and no anchor
    if wanted is not None:
        applied.update(partition="IO", unreached="zero")

    manifest: dict[str, Any] = {}  # written into the output, and the --json summary

    def write(tmp: str) -> None:
        from sepne_spark.session import connect_before_4
        from sepne_spark.storage import data_files

        detail = f"{plan['setup']} sets of about {used['setSize']} nodes, to {target}"
        on_disk = None  # the rows the files hold, read from their footers
        with stage(spark, "solve_write", detail, timings) as st:
            # Rows, sets and all-zero vectors are counted as they are written (no second read).
            zero = F.forall("embedding", lambda x: x == 0).cast("long")
            metrics = [F.count(F.lit(1)).alias("rows"), F.sum(zero).alias("zero"), F.max("set_id").alias("last_set"),
                       F.sum((~F.col("is_landmark")).cast("long")).alias("nodes")]
            if connect_before_4(spark):  # no Observation there: the same counts, read from the files written
                out.write.parquet(tmp)
                files = data_files(tmp)
                written = spark.read.parquet(*files).agg(*metrics).first().asDict() if files else {
                    "rows": 0, "zero": 0, "last_set": None, "nodes": 0}
                on_disk = int(written["rows"])  # that read is the files' count too
            else:
                seen = Observation("sepne_written")
                out.observe(seen, *metrics).write.parquet(tmp)
                written = seen.get
            counts["output_rows"] = int(written["rows"])
            counts["zero_embeddings"] = int(written["zero"] or 0)
            # Set ids run 0 .. sets - 1 (a hashed set may be empty).
            plan.setdefault("sets", int(written["last_set"] if written["last_set"] is not None else -1) + 1)
            plan.setdefault("nodes", int(written["nodes"] or 0))
            st.count(rows=counts["output_rows"], sets=plan["sets"])
        # Before the output replaces the old one: the files hold every row computed (a
        # second writer of the same output, which the job does not support, could have
        # removed some), and every node has its row.
        # The Parquet footers' row counts, the files named one by one: Spark's reader
        # warns of a folder whose name starts with a dot (the temporary one), and a
        # pattern's metadata probe logs a Java stack trace where no job has quieted it
        # (main(spark, args) called from a notebook).
        if on_disk is None:
            files = data_files(tmp)
            on_disk = int(spark.read.parquet(*files).count()) if files else 0
        if on_disk != counts["output_rows"]:
            raise RuntimeError(f"the files written hold {on_disk} rows of the {counts['output_rows']} computed: "
                               f"did another run write {target} at the same time? The old output is kept")
        if expected is not None and counts["output_rows"] != expected:
            raise RuntimeError(f"wrote {counts['output_rows']} rows for {expected} nodes; the old output is kept")
        if counts["zero_embeddings"]:
            log.warning(
                "%s of %s nodes got an all-zero embedding: %s; %s", f"{counts['zero_embeddings']:,}",
                f"{counts['output_rows']:,}", zero_reason(used, what), zero_advice(used, n_nodes),
            )
        timings["total"] = time.time() - started
        manifest.update({
            "job": "embed", "version": __version__, "spark_version": spark.version,
            "spark_app_id": _conf(spark, "spark.app.id"), "spark_master": _conf(spark, "spark.master"),
            "arguments": _shown_arguments(ns.argv, secrets), "run_date": ns.run_date, "versions": _versions(),
            # the file of the profile given (one over auto: its own file), else of auto's choice
            "profile": profile_used, "profile_file": None if ns.model else schema.profile_label(
                chosen if ns.profile == schema.AUTO_PROFILE else ns.profile),
            "input": source, "input_files": input_fingerprint(spark, ns.input or []),
            "read": given_read_options(ns),
            "output": target, "settings": applied, "counts": counts,
            "spark_not_applied": not_applied or {},
            "sets": plan, "fit": model.fit_notes, "model": ns.model, "saved_model": ns.save_model,
            "nodes": ns.nodes,
            "graphframes_used": bool(getattr(spark, "_sepne_graphframes", False)),
            # fit is landmarks + summaries_svd (and the graph's caching): its parts are
            # listed too, so the stages do not add up to total.
            "timings_s": timings,
            "started_utc": _utc(started), "finished_utc": _utc(time.time()),
            "duration_s": round(timings["total"], 3),
        })
        write_manifest(tmp, manifest)

    expected = n_nodes if wanted is None else None
    writes = [(write, target)]
    if ns.save_model:
        # The model and the output replace their old versions together, once both are
        # written and the output's rows are checked: a failed run leaves the old pair. A
        # --run-date rerun replaces its partition, and the model it saved the first time.
        writer = model.write().option("runDate", ns.run_date) if ns.run_date else model.write()
        save, model_target = writer.staged(ns.save_model)

        def write_model(tmp: str) -> None:
            with stage(spark, "save_model", ns.save_model, timings):
                save(tmp)

        writes.insert(0, (write_model, model_target))  # first: a failed save costs no solve
    atomic_writes(writes, overwrite=ns.overwrite or bool(ns.run_date))
    mark_written([target] + ([ns.save_model] if ns.save_model else []))
    timings["total"] = time.time() - started  # the manifest's is up to its writing
    print(f"SepNE embedded {counts['output_rows']:,} nodes of {source}")
    size = (f"neighbourhood of the requested nodes: {counts['rows_of_A_read']:,} rows of A" if local
            else f"{n_nodes:,} nodes, {n_edges:,} edges" if settings.directed
            else f"{n_nodes:,} nodes, {n_edges:,} edge rows (an undirected edge counts twice)")
    dropped = merged_parts(merged)
    if dropped:
        size += f" from {merged['input_lines']:,} lines ({', '.join(dropped)})"
    after = spectral_steps(used)  # what ran over the graph after the solve
    print(f"  {size}; k={len(model.landmark_ids)} ({used['landmarkStrategy']}), "
          f"d={model.factors.Phi.shape[0]}, metric {what}, partition {plan['setup']}, set size {used['setSize']}"
          + subspaces_note(used, model.fit_notes)
          + (f"; then {', '.join(after)}" if after else "")
          + ("; unreached nodes: the anchor" if _used(used, "unreached") == "anchor" and wanted is None else ""))
    print("  time: " + _time_line(timings, loaded=bool(ns.model)))
    if counts["zero_embeddings"]:
        print(f"  all-zero vectors: {counts['zero_embeddings']:,} of {counts['output_rows']:,} nodes (the warning "
              "in the log says why, and what to change)")
    print(f"  output: {target}")
    from sepne_spark.evaluation.classification import CLASSIFIER_EXTRA, classifier_available

    if labels is not None and wanted is not None:
        print("  planted communities: not scored (--nodes embedded only the requested nodes; the score is of "
              "a whole generated graph)")
    elif labels is not None and not classifier_available():
        print(f"  planted communities: not scored (node classification needs scikit-learn: {CLASSIFIER_EXTRA})")
    elif labels is not None:
        import numpy as np
        from pyspark.sql import functions as F

        from sepne_spark.evaluation import node_classification
        from sepne_spark.progress import stage
        from sepne_spark.session import driver_cores

        # At most SCORED_NODES nodes (the first by a seeded hash of the id) reach the
        # driver: the score of a large generated graph without collecting its vectors.
        # A stage of its own (after the summary's times): seconds pass, and they are said.
        with stage(spark, "score", f"the planted communities of at most {SCORED_NODES:,} nodes, "
                   "logistic regression"):
            emb = (spark.read.parquet(target).select("id", "embedding")
                   .join(labels.select(F.col("node").alias("id"), "label"), "id")
                   .orderBy(F.xxhash64("id", F.lit(int(settings.seed))), "id").limit(SCORED_NODES).toPandas())
            X = np.vstack(emb["embedding"].to_numpy())
            y = [[v] for v in emb["label"]]
            res = node_classification(X, y, train_ratios=(0.1, 0.5), n_splits=3, seed=settings.seed,
                                      threads=driver_cores(spark))
        for ratio, r in sorted(res["results"].items()):
            print(f"  planted communities, {ratio:.0%} training: micro-F1 {r['micro_f1_mean']:.4f} "
                  f"(logistic regression, {res['n_splits']} splits, {len(emb)} nodes)")
        manifest["planted_communities"] = {
            "nodes_scored": len(emb), "splits": res["n_splits"],
            "micro_f1": {f"{ratio:g}": r["micro_f1_mean"] for ratio, r in sorted(res["results"].items())}}
    emit_json(spark, ns.json, dict(manifest, timings_s=timings, duration_s=round(timings["total"], 3)))
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
