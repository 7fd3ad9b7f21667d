"""What every job entry point shares: argument errors, logging, session start-up and exit codes.

A job module (``sepne_spark.jobs.embed``, ``evaluate``, ``generate``) defines
``main(spark, args) -> int``, a ``session_conf(argv)`` that parses and checks the
command line and returns the Spark settings of the session to build, and a console entry::

    def cli(argv=None) -> int:
        return run_job(main, "sepne-<name>", argv, session_conf=session_conf)

``run_job`` calls ``session_conf`` before any JVM starts, so a mistyped flag, a bad value or
a missing local input is reported at once, in one line, with exit status 2. Notebooks
and tests call ``main(spark, [...])`` directly.
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import glob
import logging
import math
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence
from urllib.parse import urlparse

log = logging.getLogger("sepne_spark")


from sepne_spark.errors import JobStopped, UserError  # noqa: E402 - the library's one base of user errors


class JobArgumentParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``sepne-<job>: error: ...``, exit 2.

    argparse's default prints the whole usage block first; for a scheduler's log and a
    person alike one line naming the problem (and the closest option, for a mistyped
    one) is easier to read. ``--help`` is unchanged. Subcommand parsers are of the
    same class and report under the job's name.

    Abbreviated options (``--out`` for ``--output``) are refused: a scheduled command
    line that works today would change meaning, or fail, when a later release adds an
    option sharing the prefix.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def _options(self) -> list[str]:
        names = [s for a in self._actions for s in a.option_strings]
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    names += [s for a in sub._actions for s in a.option_strings]
        return sorted(set(names))

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's, but a mistyped option is reported before what else is missing:
        argparse would first say that a required option (the one mistyped) is absent."""
        argv = list(sys.argv[1:] if args is None else args)
        self._argv = argv  # for error(): the task named, whose options are suggested
        known = self._options()
        for word in argv:
            if word == "--":
                break
            name = word.split("=", 1)[0]
            if name.startswith("--") and name not in known:
                self.error(f"unrecognized arguments: {word}")
        self._refuse_repeats(argv)
        return super().parse_args(argv, namespace)

    def _refuse_repeats(self, argv: Sequence[str]) -> None:
        """Refuse an option of one value given twice (``--output a --output b``), or two
        options of one setting (``--directed --undirected``): argparse keeps the last
        without a word, and a scheduler's template that repeats a flag would run on part
        of what it names. Options that collect (``--spark``, ``--input``) may repeat, and
        so may a switch (``--overwrite --overwrite`` says the same twice); ``--help`` and
        options a task has retired (which say why themselves) are left to argparse."""
        if any(word in ("-h", "--help") for word in argv):
            return
        actions = list(self._actions)
        tasks = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        if tasks is not None:
            task = next((w for w in argv if w in tasks.choices), None)
            actions += tasks.choices[task]._actions if task is not None else []
        by_name = {name: a for a in actions for name in a.option_strings}
        given: dict[str, list[str]] = {}
        for word in argv:
            if word == "--":
                break
            action = by_name.get(word.split("=", 1)[0])
            if action is None or action.help == argparse.SUPPRESS or isinstance(
                    action, (argparse._AppendAction, argparse._CountAction, argparse._HelpAction,
                             argparse._VersionAction)):
                continue
            given.setdefault(action.dest, []).append(word.split("=", 1)[0])
        switches = {a.dest for a in actions if a.nargs == 0}
        for dest, names in given.items():
            if dest in switches and len(set(names)) == 1:  # the same switch again: no conflict
                continue
            if len(names) > 1:
                if len(set(names)) == 1:
                    times = "twice" if len(names) == 2 else f"{len(names)} times"
                    self.error(f"{names[0]} is given {times}: give it once (only the last would count)")
                self.error(f"{' and '.join(dict.fromkeys(names))} are given together: give one of them")

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print ``message`` in one line (with the close option or task, where there is
        one, and the task-first hint for a misplaced task) and exit with status 2."""
        choices = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        if choices is not None and message.startswith(f"argument {choices.metavar}: invalid choice"):
            given = re.search(r"invalid choice: '([^']*)'", message)
            close = difflib.get_close_matches(given.group(1), list(choices.choices), n=1, cutoff=0.6) if given else []
            message += (f" (did you mean {close[0]}?)" if close else
                        f"; the task comes first: {self.prog} {{{','.join(choices.choices)}}} [options]")
        if message.startswith("unrecognized arguments:"):
            unknown = [w for w in message.split(":", 1)[1].split() if w.startswith("--")]
            tasks = choices.choices if choices is not None else {}
            for word in unknown:
                name = word.split("=", 1)[0]
                owners = [t for t, sub in tasks.items()
                          if any(name in a.option_strings and a.help != argparse.SUPPRESS for a in sub._actions)]
                if owners:  # another task's option
                    message += f" ({name} is an option of {' and '.join(owners)})"
                    break
                task = next((w for w in getattr(self, "_argv", []) if w in tasks), None)
                options = self._options() if task is None else sorted(
                    {o for a in self._actions for o in a.option_strings}
                    | {o for a in tasks[task]._actions for o in a.option_strings})
                prefixed = [o for o in options if o.startswith(name)]  # an abbreviation
                close = prefixed if len(prefixed) == 1 else difflib.get_close_matches(name, options, n=1, cutoff=0.6)
                if close:
                    message += f" (did you mean {close[0]}?)"
                    break
        name = self.prog.split()[0]
        self.exit(2, f"{name}: error: {message}; see {name} --help\n")


def auto_settings(
    ns: argparse.Namespace, graph: Any, n_nodes: int, n_edges: int, timings: dict[str, float] | None = None,
) -> tuple[Any, str]:
    """The settings of ``--profile auto`` for a graph of this size (flags still win),
    and the profile chosen; of a profile that extends ``auto`` (``ns.profile``, such as
    ``yarn``), its own entries over that choice
    (:func:`sepne_spark.settings.auto_extension`).

    Parameters
    ----------
    ns : argparse.Namespace
        A job's parsed flags (the settings' flags, ``profile``; ``nodes`` when the job has
        it).
    graph : sepne_spark.graph.Graph
        The canonical graph; its edges are read once more when the choice needs the
        two-step walks (a stage of its own, ``auto_profile``).
    n_nodes, n_edges : int
        Its node and edge-row counts.
    timings : dict, optional
        Stage timings to add the ``auto_profile`` stage to.

    Returns
    -------
    (EmbedSettings, str)
        The resolved settings and the name of the profile ``auto`` chose.
    """
    from sepne_spark import settings as schema
    from sepne_spark.pipeline import choose_profile

    profile = getattr(ns, "profile", schema.AUTO_PROFILE)
    own = schema.auto_extension(profile)
    if own is None:
        raise ValueError(f"auto_settings: profile {profile!r} does not extend auto")
    choice = choose_profile(graph, n_nodes, n_edges, timings)
    name, changed = choice.profile, dict(choice.changed)
    # A profile's own entries over auto's choice, as over a profile it extends (as
    # SepNE.fromProfile takes them); its Spark settings are among the job's, below.
    base, values = schema.over_auto(name, changed, {k: v for k, v in own.items() if k != "spark"}, str(profile),
                                    getattr(ns, "landmarks", None), getattr(ns, "dim", None) is not None)
    # The graph is fitted as it was read (with the flags, else the profile's), and the
    # job's own settings (how input is read, what is written, Spark) are those of the
    # profile the run started with (auto's: the default profile's): the run read its
    # input and started its session with them.
    started = schema.load_profile(profile)
    values.update({k: v for k, v in started.items() if schema.setting(k).scope == schema.JOB})
    values.update(directed=graph.directed, duplicates=graph.duplicates, self_loops=graph.self_loops)
    if getattr(ns, "nodes", None):  # requested ids only: no whole-graph step after the solve

        def chosen(name: str) -> bool:  # by auto, not by a flag nor by the profile over it
            return getattr(ns, name, None) is None and name not in own

        if chosen("propagation"):
            values["propagation"] = 1
        if chosen("refine_steps"):
            values["refine_steps"] = 0
            if chosen("refine_operator") and "refine_operator" in changed:  # no rounds to run it
                values["refine_operator"] = base.get("refine_operator", schema.setting("refine_operator").default)
        if chosen("average_steps"):
            values["average_steps"] = 0
        if chosen("unreached"):  # the anchor fills whole graphs only
            values["unreached"] = "zero"
    within = "auto," if profile == schema.AUTO_PROFILE else f"{profile}, which extends auto,"
    settings = schema.resolve(ns, values, profile_name=f"{within} which chose {name} for this graph")
    shown = {k: v for k, v in values.items() if schema.setting(k).scope != schema.JOB
             and getattr(ns, k, None) is None and base.get(k, schema.setting(k).default) != v}
    log.info("profile %s: %s", profile, choice.describe(shown))
    usual = base.get("dim", schema.setting("dim").default)
    if ns.dim is None and "dim" not in own and settings.dim < usual:  # auto narrowed a tiny graph's output
        if getattr(ns, "landmarks", None) is not None:
            log.warning("--landmarks %d gives vectors of %d dimensions (at most the landmarks), not %s; give "
                        "--dim to choose", settings.landmarks, settings.dim, usual)
        else:
            log.warning("a graph of %d nodes takes at most %d landmarks (half its nodes), so its vectors have %d "
                        "dimensions, not %s; give --dim and --landmarks to choose", n_nodes, settings.landmarks,
                        settings.dim, usual)
    return settings, name


def profile_arg(text: str) -> str:
    """``--profile``'s argparse type: ``auto`` in any case is :data:`~sepne_spark.settings.AUTO_PROFILE`
    (as for ``SepNE.fromProfile``); anything else a profile name or path, as given."""
    from sepne_spark import settings as schema

    return schema.AUTO_PROFILE if text.strip().lower() == schema.AUTO_PROFILE else text


def integer_arg(text: str) -> int:
    """An argparse type for a whole number, refused in the words of the settings' flags
    (``expected an integer, got 'abc'``); its range is the library's to check."""
    try:
        return int(text.strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def number_arg(text: str) -> float:
    """An argparse type for a finite number, refused in the words of the settings' flags."""
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def profile_names() -> list[str]:
    """The profiles that ``--profile NAME`` finds (``$SEPNE_CONF_DIR``, ``conf/``, the wheel's)."""
    from sepne_spark import settings as schema

    names: set[str] = set()
    for folder in schema.conf_dirs():
        if folder.is_dir():
            names.update(p.stem for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    return sorted(names)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    return str(value)


def show_profile_defaults(parser: argparse.ArgumentParser) -> None:
    """Make the help of each setting flag give the value a run with ``--profile default``
    uses (the ``default`` profile's), where it differs from the built-in default (a run
    without ``--profile`` takes ``auto``, which chooses per graph).

    A default profile that cannot be read leaves the defaults shown as they are, and the
    help ends with the error a run that reads it would report.
    """
    from sepne_spark import settings as schema

    try:
        profile = schema.load_profile(None)
    except UserError as err:
        note = (f"The default profile cannot be read, so the defaults above are the built-in "
                f"ones; a run without --profile, or with --profile default, stops with: {err}").replace("%", "%%")
        parser.epilog = f"{parser.epilog}\n\n{note}" if parser.epilog else note
        return
    for action in parser._actions:
        if action.dest not in profile or not action.help or "default: " not in action.help:
            continue
        at = action.help.rfind("default: ")
        builtin = action.help[at + len("default: "):].rstrip(")")
        shown = _shown(profile[action.dest]).replace("%", "%%")
        if shown != builtin:
            # How the input is read and the job's own settings apply under auto too;
            # auto chooses the model's settings from the graph instead.
            read = action.dest in ("directed", "duplicates", "self_loops") or schema.setting(action.dest).scope == schema.JOB
            where = "from the default profile" if read else "with --profile default"
            action.help = f"{action.help[:at]}default: {shown}, {where}; built-in {builtin})"


@contextlib.contextmanager
def session_settings(spark: Any, conf: dict[str, str]) -> Iterator[dict[str, str]]:
    """Apply a profile's ``spark:`` block and ``--spark`` to a session that was running
    before the job (a notebook's, or ``main`` called by a scheduler's worker) for the
    job's run, and put the session's values back afterwards (also when the run or the
    setting of a value fails; a key the session had no value of is unset again).

    A session the job built has them already (``session_conf``). Settings a running
    session cannot change (the driver's memory, the executors' resources), or refuses,
    are named in a warning: they take effect only when a session starts with them.
    Yields those settings (key: the value asked for, a credential's hidden), for the
    run's record. No credential's value is logged.
    """
    from sepne_spark.session import LAUNCH_ONLY
    from sepne_spark.settings import redacted, redaction_pattern

    pattern = redaction_pattern(conf or {}, spark)  # the site's pattern of secrets

    try:  # the keys the session holds a value of (PySpark 4); the others are unset again
        explicit = set(spark.conf.getAll)
    except Exception:  # noqa: BLE001 - PySpark 3.5: restore what get returned
        explicit = None
    changed: dict[str, str | None] = {}
    static: dict[str, str] = {}  # not applied: what the session cannot change, or refuses
    refused: set[str] = set()
    try:
        for key, value in (conf or {}).items():
            try:
                now = spark.conf.get(key)
            except Exception:  # noqa: BLE001 - a key without a value (or one the session cannot read)
                now = None
            if now == str(value):
                continue
            try:
                modifiable = spark.conf.isModifiable(key)
            except Exception:  # noqa: BLE001
                modifiable = False
            if modifiable:
                before = now if explicit is None or key in explicit else None
                try:
                    spark.conf.set(key, str(value))
                except Exception as exc:  # noqa: BLE001 - a value the session refuses
                    log.warning("Spark setting %s=%s (--spark or a profile's spark: block): the session refuses "
                                "it (%s)", key, redacted({key: value}, pattern)[key],
                                str(exc).strip().splitlines()[0][:200])
                    static[key] = str(value)
                    refused.add(key)
                    continue
                changed[key] = before
                continue
            static[key] = str(value)
        # Under spark-submit the session helper has said it of the driver's own settings.
        told = set(LAUNCH_ONLY) if "PYSPARK_GATEWAY_PORT" in os.environ else set()
        shown = redacted({k: v for k, v in static.items() if k not in told and k not in refused}, pattern)
        if shown:
            log.warning("%s: the session runs already, so %s nothing; set %s when the session starts "
                        "(spark-submit --conf, or the session's builder)", ", ".join(f"{k}={v}" for k, v in shown.items()),
                        "this changes" if len(shown) == 1 else "these change", "it" if len(shown) == 1 else "them")
        yield redacted(static, pattern)
    finally:
        for key, before in changed.items():
            try:
                if before is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, before)
            except Exception:  # noqa: BLE001 - best effort: the others are still put back
                log.warning("could not put back the session's %s", key)


@contextlib.contextmanager
def settings_checked_quietly() -> Iterator[None]:
    """Hold back the settings' warnings for a check made before Spark starts
    (a ``session_conf``): the job's ``main`` resolves the same settings again and warns
    once, in its own log."""
    from sepne_spark import settings as schema

    quiet = logging.getLogger(schema.__name__)
    was, quiet.disabled = quiet.disabled, True
    try:
        yield
    finally:
        quiet.disabled = was


def setup_logging(level: int = logging.INFO) -> None:
    """Log ``sepne_spark`` messages to stderr with timestamps (idempotent).

    Replaces the library's default handler (see :mod:`sepne_spark.progress`) with one
    that also prints the time, as a scheduler's log wants.
    """
    from sepne_spark import progress

    logger = logging.getLogger("sepne_spark")
    progress.remove_default_handler()
    if not any(getattr(h, "_sepne_job", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._sepne_job = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(progress.level_from_env(level))


def is_local_path(path: str) -> bool:
    """Whether ``path`` is on the local file system (no scheme, or ``file:``).

    A Windows drive letter is not taken for a scheme. Remote paths (``hdfs:``, ``s3a:``,
    ``abfss:``, ``dbfs:`` ...) are left to Spark.
    """
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or len(scheme) == 1


def qualify_paths(ns: argparse.Namespace, names: Sequence[str], conf: Mapping[str, Any] | None = None) -> None:
    """Rewrite the path flags ``names`` of ``ns`` (one path, or a list) as the URIs they
    name: a path without a scheme goes where the session reads and writes it (a cluster's
    HDFS, :func:`~sepne_spark.storage.default_filesystem` given the job's Spark settings
    ``conf``), so the checks before Spark starts treat it as the remote path it is."""
    from sepne_spark.storage import default_filesystem, qualified

    default_fs = default_filesystem(conf)
    for name in names:
        value, flag = getattr(ns, name, None), "--" + name.replace("_", "-")
        if isinstance(value, list):
            setattr(ns, name, [qualified(v, default_fs, flag) for v in value])
        elif value and value != "-":  # "-": stdout (--json -)
            setattr(ns, name, qualified(value, default_fs, flag))


def given_flags(argv: Sequence[str]) -> set[str]:
    """The long options written on a command line (``--name`` or ``--name=value``), up
    to a ``--``: what the user gave, where a parsed value may be a default."""
    words = list(argv)
    words = words[:words.index("--")] if "--" in words else words
    return {word.split("=", 1)[0] for word in words if word.startswith("--")}


def local_path(path: str) -> str:
    """A local path, or a ``file:`` URI, as a path of this machine's file system."""
    parsed = urlparse(path)
    return os.path.expanduser(parsed.path if parsed.scheme == "file" else path)


def check_inputs_exist(paths: Iterable[str], flag: str, allow_empty: bool = False) -> None:
    """Raise a :class:`UserError` naming ``flag`` and the path when a local input is
    missing, holds a file that cannot be read (a link to a file that is gone, no read
    permission), or, unless ``allow_empty``, when every file of the local inputs is
    empty (Spark would start, to find no line).

    A glob must match something. Spark's listing of a folder leaves a file that cannot
    be read out without a word (the job would embed the rest of the graph as if it were
    all), so every data file is looked at (:func:`local_data_files`). Remote paths are not
    checked here: Spark reports them.
    """
    files: list[tuple[str, str]] = []  # (the path given, one of its data files)
    remote = False
    for path in paths:
        if not is_local_path(path):
            remote = True
            continue
        local = local_path(path)
        if any(c in local for c in "*?[{"):
            matches = sorted({m for pattern in _braces(local) for m in glob.glob(pattern)})
            if not matches:
                literal = ("; a file of that very name exists, but Spark reads *, ?, [ ] and { } in a path as a "
                           "pattern: rename it, or give its folder" if os.path.exists(local) else "")
                raise UserError(f"{flag} {path}: no file matches{literal}")
            # as Spark's reader: a match whose name starts with _ or . is no data
            matches = [m for m in matches if not os.path.basename(m.rstrip("/")).startswith(("_", "."))]
        elif not os.path.lexists(local):
            parent = os.path.dirname(os.path.abspath(local))
            where = "" if os.path.isdir(parent) else f" (nor does the folder {parent})"
            raise UserError(f"{flag} {path} does not exist{where}")
        else:
            matches = [local]
        files += [(path, file) for match in sorted(matches) for file in local_data_files(match)]
    for path, file in files:
        if not os.path.exists(file):  # a link whose target is gone
            raise UserError(f"{flag} {path}: {file} cannot be read: it links to {os.readlink(file)}, which does "
                            "not exist")
        if not os.access(file, os.R_OK):
            raise UserError(f"{flag} {path}: {file} cannot be read (permission denied)")
    if files and not remote and not allow_empty and all(os.path.getsize(f) == 0 for _, f in files):
        if len(files) == 1 and files[0][1] == local_path(files[0][0]):
            raise UserError(f"{flag} {files[0][0]} is empty (0 bytes)")
        shown = ", ".join(f for _, f in files[:3]) + (", ..." if len(files) > 3 else "")
        given = " ".join(dict.fromkeys(path for path, _ in files))
        raise UserError(f"{flag} {given}: every file is empty ({len(files)} of 0 bytes: {shown})")


def _braces(pattern: str) -> list[str]:
    """The glob patterns a Hadoop glob with ``{a,b}`` alternatives stands for (Python's
    glob has none): ``part-{0,1}*`` is ``part-0*`` and ``part-1*``; nested ones too."""
    depth, start = 0, -1
    for i, c in enumerate(pattern):
        if c == "{":
            depth, start = depth + 1, i if depth == 0 else start
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                inner, parts, level, last = pattern[start + 1:i], [], 0, 0
                for j, ch in enumerate(inner):  # split at the commas of this level only
                    level += (ch == "{") - (ch == "}")
                    if ch == "," and level == 0:
                        parts.append(inner[last:j])
                        last = j + 1
                parts.append(inner[last:])
                return [out for part in parts for out in _braces(pattern[:start] + part + pattern[i + 1:])]
    return [pattern]


#: Column names that name a table's nodes (a header line ``id``, a labels file's ``node``).
NODE_WORDS = frozenset({"id", "ids", "node", "nodes", "node_id", "nodeid", "vertex", "vertices", "vertex_id"})


def local_data_files(local: str, limit: int | None = None) -> list[str]:
    """The files Spark's readers take from the local path ``local``, at any depth, for
    the checks before Spark starts (:func:`sepne_spark.storage.data_files` lists one
    folder's files on any file system the session reaches): the path itself, or
    a folder's files at any depth (through linked folders too, as Hadoop lists them),
    without those whose name (or a folder's on the way) starts with ``_`` or ``.``
    (``_SUCCESS``, checksums, temporary folders); the first ``limit`` of them if given."""
    if not os.path.isdir(local):
        return [local]
    files, seen = [], set()
    for folder, dirs, names in os.walk(local, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a link back up the tree
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        files += [os.path.join(folder, name) for name in sorted(names) if not name.startswith((".", "_"))]
        if limit is not None and len(files) >= limit:
            return files[:limit]
    return files


def parquet_magic(file: str) -> bool | None:
    """Whether the local ``file`` starts as Parquet does (``PAR1``, or ``PARE`` for an
    encrypted footer); None for an empty file or one that cannot be read."""
    try:
        with open(file, "rb") as f:
            head = f.read(4)
    except OSError:
        return None
    return head in (b"PAR1", b"PARE") if head else None


def check_input_format(paths: Iterable[str], fmt: str, flag: str) -> None:
    """Refuse, before Spark starts, a local input whose files contradict an explicit
    format: ``parquet`` for a file that is not Parquet (its first bytes are not ``PAR1``,
    or ``PARE`` for an encrypted footer), or a text format for a Parquet file. Spark
    would find out in a task, with its executor's stack trace in the log before the
    job's one line."""
    if fmt in ("auto", None):
        return
    for path in paths:
        if not is_local_path(path) or any(c in path for c in "*?[{"):
            continue
        for file in local_data_files(local_path(path)):
            magic = parquet_magic(file)  # None (empty, unreadable): named by check_inputs_exist, or no data
            if magic is not None and (fmt == "parquet") != magic:
                shown = file if os.path.isabs(local_path(path)) else os.path.relpath(file)
                what = "is not a Parquet file (it does not start with PAR1)" if fmt == "parquet" else \
                    f"is a Parquet file, not {fmt} text"
                raise UserError(f"{flag} {path}: {shown} {what}: give --input-format with the files' format, or "
                                "auto, which tells them apart")


def check_input_head(paths: Sequence[str], fmt: str, layout: Mapping[str, Any], bad_lines: str) -> None:
    """Check one local text input's header, named columns and first lines' field count
    before Spark starts (:func:`sepne_spark.reading.check_local_head`): a layout flag
    that does not fit the file (``--src-col src`` without a header, ``--sep ,`` on a
    TSV) is named at once rather than after the session has started and read it. A
    folder, a glob or several inputs are left to the read."""
    from sepne_spark.reading import check_local_head

    if len(paths) != 1 or not is_local_path(paths[0]) or any(c in paths[0] for c in "*?[{"):
        return
    file = local_path(paths[0])
    if os.path.isfile(file):
        check_local_head(file, fmt, bad_lines=bad_lines, **layout)


def in_flag_words(message: str, flags: Mapping[str, str]) -> str:
    """A library message about parameters (``avg_degree must be positive``) in the words
    of a command's flags: each name of ``flags`` (followed by a space or ``=``) becomes
    its flag (``--avg-degree must be positive``)."""
    names = "|".join(re.escape(name) for name in flags)
    return re.sub(r"(?<![-\w])(" + names + r")(?=[ =])", lambda m: flags[m.group(1)], message)


#: Partition keys of dates: a folder of several such partitions is read whole, which a
#: warning says (a folder partitioned otherwise, type=a/ and type=b/, is meant whole).
_DATE_KEYS = frozenset({"dt", "date", "ds", "day", "run_date"})


def check_edge_folders(paths: Iterable[str], flag: str) -> None:
    """Refuse a local edge-list folder that holds folders and no file, where they are
    not partitions (``dt=2026-12-01``) that Spark reads as columns: a graph folder such as
    ``sepne-generate`` writes (``edges/``, ``labels/``) given in place of its ``edges``.
    The reader would find no data file and report an empty input once Spark runs. A file
    that is no edge list (:data:`sepne_spark.reading.NOT_EDGE_LISTS`: a ``README.md``, a
    ``schema.json``) in the folder is refused too: Spark would read its lines as edges,
    and the first of them could be taken for the header of every file. So is a folder
    that holds a file named as the edge list (``edges.tsv``) beside others named otherwise
    (``labels.tsv``): a dataset's folder, not an edge list's.
    :func:`sepne_spark.reading.read_edges` refuses these two on any file system, once
    Spark has listed the files; here they are named before Spark starts."""
    from sepne_spark.reading import no_edge_list_files, node_tables_beside_edges

    for path in paths:
        if not is_local_path(path) or any(c in path for c in "*?[{"):
            continue
        local = local_path(path)
        if not os.path.isdir(local):
            continue
        found = [os.path.relpath(f, local) for f in local_data_files(local)]
        stray = no_edge_list_files(found)
        if stray:
            shown = ", ".join(stray[:3]) + (", ..." if len(stray) > 3 else "")
            raise UserError(f"{flag} {path} holds files that are no edge list ({shown}), which Spark would read as "
                            "edges: move them out of the folder, or give the edge files themselves (a glob such as "
                            f"{path.rstrip('/')}/*.tsv)")
        beside = node_tables_beside_edges(found)
        if beside:
            edges, others = beside
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise UserError(f"{flag} {path} holds {edges} and other files ({shown}), which Spark would read "
                            f"as edges too: give the edge list itself, e.g. {path.rstrip('/')}/{edges}")
        entries = [name for name in os.listdir(local) if not name.startswith((".", "_"))]
        folders = sorted(name for name in entries if os.path.isdir(os.path.join(local, name)))
        if folders and len(folders) == len(entries) and not all("=" in name for name in folders):
            shown = ", ".join(f"{name}/" for name in folders[:3]) + (", ..." if len(folders) > 3 else "")
            pick = next((name for name in folders if name.startswith("edges")), folders[0])
            raise UserError(f"{flag} {path} holds folders ({shown}) and no data file: give the edge list's own "
                            f"folder, e.g. {path.rstrip('/')}/{pick}")
        if len(folders) > 1 and all(name.split("=", 1)[0].lower() in _DATE_KEYS and "=" in name for name in folders):
            # dated partitions (runs of a daily job, say): Spark reads them all
            shown = ", ".join(folders[:3]) + (", ..." if len(folders) > 3 else "")
            log.warning("%s %s holds %d partitions (%s): all of them are read, as one edge list; give one "
                        "partition's folder to read one, e.g. %s/%s", flag, path, len(folders), shown,
                        path.rstrip("/"), folders[-1])


def _local_fingerprint(path: str) -> dict[str, Any]:
    local = local_path(path)
    matches = sorted(glob.glob(local)) if any(c in local for c in "*?[") else [local]
    files: list[str] = []
    for match in matches:
        if os.path.isdir(match):
            for folder, dirs, names in os.walk(match):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                files += [os.path.join(folder, n) for n in sorted(names) if not n.startswith((".", "_"))]
        elif os.path.isfile(match):
            files.append(match)
    stats = [os.stat(f) for f in files]
    return {
        "path": path,
        "absolute": os.path.abspath(local),  # a relative path as the run saw it
        "files": len(files),
        "bytes": sum(st.st_size for st in stats),
        "modified_utc": _utc(max(st.st_mtime for st in stats)) if stats else None,
    }


def _hadoop_fingerprint(spark: Any, path: str) -> dict[str, Any]:
    """Through the storage layer's Hadoop file system of a classic session: the
    session's Hadoop configuration, as Spark read the input with."""
    from sepne_spark.storage import HadoopFileSystem

    files, size, latest = HadoopFileSystem(spark, path).content_summary(path)
    return {"path": path, "files": files, "bytes": size,
            "modified_utc": _utc(latest / 1000.0) if latest else None}


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def input_fingerprint(spark: Any, paths: Sequence[str]) -> list[dict[str, Any]]:
    """For each input path: the number of files, their total size and the latest
    modification time (UTC), so that a manifest says which data a run read.

    Local paths are looked at with ``os.stat``; other file systems through Hadoop in a
    classic session. Where neither works (Spark Connect, a file system without the
    information) the entry says so instead of failing the run.
    """
    out = []
    for path in paths:
        try:
            if is_local_path(path):
                out.append(_local_fingerprint(path))
            elif getattr(spark, "_jvm", None) is not None:
                out.append(_hadoop_fingerprint(spark, path))
            else:
                out.append({"path": path, "files": None, "note": "not fingerprinted under Spark Connect"})
        except Exception as exc:  # noqa: BLE001 - the manifest must not fail the run
            out.append({"path": path, "files": None, "note": f"not fingerprinted: {type(exc).__name__}"})
    return out


#: JVM loggers that print a Java stack trace for conditions Spark handles or reports
#: again itself (a missing path's metadata probe, ...); at ERROR they stay quiet.
NOISY_LOGGERS = (
    "org.apache.spark.sql.execution.streaming.FileStreamSink",
    "org.apache.spark.sql.execution.streaming.sinks.FileStreamSink",
    "org.apache.spark.sql.execution.datasources.InMemoryFileIndex",
    # GraphFrames' label propagation warns that its result is cached, every call.
    "org.graphframes.lib.LabelPropagation",
)


def quiet_jvm_loggers(spark: Any, names: Sequence[str] = NOISY_LOGGERS) -> None:
    """Set the JVM loggers ``names`` to ERROR in a classic session (job code only).

    Uses the Py4J gateway, which only classic sessions have; under Spark Connect, or
    where the gateway is not reachable, it does nothing.
    """
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return
    try:
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator
        level = jvm.org.apache.logging.log4j.Level.ERROR
        for name in names:
            configurator.setLevel(name, level)
    except Exception:  # noqa: BLE001 - a quieter log is a convenience
        log.debug("could not quiet the JVM loggers", exc_info=True)


#: The outputs the running job has written in full (:func:`mark_written`), for the line a stop prints.
_written: list[str] = []


def mark_written(paths: Iterable[str]) -> None:
    """Record that the job's outputs ``paths`` are in place, whole: a stop after that (a
    SIGTERM while the summary is printed or the checkpoints are removed) says that they
    are complete, not that a write was undone."""
    _written.extend(paths)


#: The ``--json -`` lines of the job :func:`run_job` runs, printed after its last log line
#: (None outside it: printed at once).
_json_lines: list[str] | None = None


def emit_json(spark: Any, path: str | None, payload: dict[str, Any]) -> None:
    """A job's results as JSON (``--json``): ``-`` prints them on one line, the last of
    the job's output, after its closing log line on stderr too (the line a scheduler
    such as Airflow's BashOperator keeps, of stdout and stderr together); a path gets a
    file, whole or not at all, resolved as ``--output`` is (a path without a scheme on the
    session's default file system)."""
    if not path:
        return
    from sepne_spark.storage import json_text, resolve_output, write_json

    if path == "-":
        if _json_lines is not None:  # under run_job: printed after its last log line
            _json_lines.append(json_text(payload))
        else:
            print(json_text(payload), flush=True)
        return
    write_json(resolve_output(spark, path), payload)
    mark_written([path])
    print(f"results written to {path}")


def run_job(
    main: Callable[[Any, Sequence[str] | None], int],
    app_name: str,
    argv: Sequence[str] | None = None,
    session_conf: Callable[[Sequence[str]], dict] | None = None,
) -> int:
    """Run ``main`` in the active (or a new local) session; map failures to exit codes.

    ``session_conf(argv)`` parses and checks the arguments and returns Spark settings
    (a profile's ``spark:`` block) for the session built when none is active; an
    active session is used as it is. It runs before any session or JVM is started, so
    that argument errors arrive at once.

    Returns 0 on success, 2 for a :class:`UserError` or bad arguments (one line on
    stderr naming what is wrong), 1 for any other failure, and 128 + the signal's number
    when stopped by SIGTERM (143) or Ctrl-C (130) once the session runs: one line, no
    trace, the writes in progress undone (:func:`sepne_spark.storage.atomic_writes`: the
    output and ``--save-model`` are replaced together or not at all); a stop that comes
    after the outputs are in place (:func:`mark_written`) names them as complete.
    """
    setup_logging()
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        try:
            return main(None, argv)  # argparse prints help and exits before Spark starts
        except SystemExit as exc:
            return int(exc.code or 0)
        except UserError as exc:  # a command line refused before argparse's help
            print(f"{app_name}: error: {exc}", file=sys.stderr)
            return 2
    start = time.time()
    stopped: dict[str, int] = {}
    _written.clear()
    global _json_lines
    _json_lines = []
    try:
        return _run_job(main, app_name, argv, session_conf, start, stopped)
    finally:
        _json_lines = None


def _run_job(main: Callable[[Any, Sequence[str] | None], int], app_name: str, argv: list[str],
             session_conf: Callable[[Sequence[str]], dict] | None, start: float, stopped: dict[str, int]) -> int:
    """The body of :func:`run_job`, from the session's start."""
    try:
        try:
            check_environment()
            conf = session_conf(argv) if session_conf else None
            from sepne_spark.session import get_spark

            # No handler while the JVM starts: a signal then ends Python, and the JVM with it.
            spark = get_spark(app_name, conf=conf, run_checkpoints=True)
            with _stop_on_signals(stopped):
                quiet_jvm_loggers(spark)
                log.info("%s: sepne-spark %s from %s, Spark %s", app_name, _version(), _package_location(),
                         spark.version)
                try:
                    rc = main(spark, argv)
                finally:
                    _remove_run_checkpoints(spark)
        except BaseException as exc:
            # Once stopped, whatever ends the run (the stop itself, or a call into a JVM that
            # the same signal is shutting down) is the stop: one line, no trace.
            signum = stopped.get("signum") or (signal.SIGINT if isinstance(exc, KeyboardInterrupt) else None)
            if signum is None:
                raise
            log.debug("the run ended with the stop", exc_info=True)
            print(f"{app_name}: stopped by {signal.Signals(signum).name} after {time.time() - start:.1f} s; "
                  f"{_what_was_written('the write in progress was undone')}", file=sys.stderr)
            return 128 + signum
    except UserError as exc:
        print(f"{app_name}: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # argparse errors, already printed in one line
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except Exception as exc:  # noqa: BLE001 - one line for the scheduler, trace in the log
        message = _user_error_in_task(exc)
        if message is not None:  # bad input found inside a Spark task
            log.debug("the error was raised in a Spark task", exc_info=True)
            print(f"{app_name}: error: {message}", file=sys.stderr)
            return 2
        if _SHUT_DOWN.search(str(exc)):  # the JVM's own shutdown: spark-submit's on its SIGTERM, or a failure
            log.debug("the run ended with the session's shutdown", exc_info=True)
            log.warning("the job's Spark call ended with: %s", _reason(exc))
            print(f"{app_name}: failed: the Spark session was shut down while the job ran, after "
                  f"{time.time() - start:.1f} s: a stop (a SIGTERM to spark-submit, the application killed) or a "
                  f"failure that Spark's log names; {_what_was_written('no output was replaced')}", file=sys.stderr)
            return 1
        log.exception("job failed")
        print(f"{app_name}: failed: {_reason(exc)}", file=sys.stderr)
        return 1
    log.info("%s finished in %.1f s", app_name, time.time() - start)
    for line in _json_lines or []:
        print(line, flush=True)
    return rc or 0


#: The local masters Spark's ``SparkContext`` parses (its ``LOCAL_*`` patterns), with at
#: least one thread: ``local``, ``local[N]``, ``local[*]``, ``local[N,F]``,
#: ``local-cluster[W,C,M]``.
_LOCAL_MASTER = re.compile(r"local(\[(\*|0*[1-9]\d*)(\s*,\s*\d+)?\]|-cluster\[\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\])?")


def check_environment() -> None:
    """Refuse, before Spark starts, an environment variable of the library's whose value
    it cannot use (one line, exit 2), instead of ignoring it or failing as the JVM starts:
    ``SEPNE_LOG_LEVEL`` (a level's name or a number), ``SEPNE_HEARTBEAT_S`` (seconds, at
    least 0), ``SEPNE_DRIVER_MEMORY`` (``4g``, ``512m``, ...), ``SEPNE_CONF_DIR`` (folders
    that exist) and ``SEPNE_SPARK_JARS`` (a folder that exists)."""
    from sepne_spark.progress import LEVEL_ENV

    level = os.environ.get(LEVEL_ENV, "").strip()
    if level and not level.isdigit() and not isinstance(logging.getLevelName(level.upper()), int):
        raise UserError(f"${LEVEL_ENV}={level!r} is not a log level: give DEBUG, INFO, WARNING, ERROR or a number")
    beat = os.environ.get("SEPNE_HEARTBEAT_S", "").strip()
    if beat:
        try:
            ok = 0 <= float(beat) < float("inf")
        except ValueError:
            ok = False
        if not ok:
            raise UserError(f"$SEPNE_HEARTBEAT_S={beat!r} is not a number of seconds (0 or more, finite)")
    memory = os.environ.get("SEPNE_DRIVER_MEMORY", "").strip()
    if memory:  # the driver's heap, as spark.driver.memory in a profile is checked
        from sepne_spark import settings as schema

        try:
            schema.coerce_flag("spark", [f"spark.driver.memory={memory}"])
        except UserError as exc:
            raise UserError(f"$SEPNE_DRIVER_MEMORY={memory!r}: {str(exc).split(': ', 1)[-1]}") from None
    for folder in (p for p in os.environ.get("SEPNE_CONF_DIR", "").split(os.pathsep) if p.strip()):
        if not os.path.isdir(os.path.expanduser(folder)):
            raise UserError(f"$SEPNE_CONF_DIR names {folder}, which is not a folder")
    master = os.environ.get("SEPNE_SPARK_MASTER", "").strip()
    if master.startswith("local") and not _LOCAL_MASTER.fullmatch(master):
        raise UserError(f"$SEPNE_SPARK_MASTER={master!r} is not a local master Spark reads: give local, local[N], "
                        "local[*], local[N,F] (N threads, F task failures) or local-cluster[W,C,M]")
    jars = os.environ.get("SEPNE_SPARK_JARS", "").strip()
    if jars and not os.path.isdir(os.path.expanduser(jars)):
        raise UserError(f"$SEPNE_SPARK_JARS names {jars}, which is not a folder (a folder without JARs puts none "
                        "on spark.jars)")


def _remove_run_checkpoints(spark: Any) -> None:
    """Remove the checkpoint folder of a session this job built
    (``get_spark(run_checkpoints=True)``) once the run has ended, written or failed:
    nothing reads its tables any more, and Spark would leave the files of the last ones."""
    folder = getattr(spark, "_sepne_run_checkpoints", None)
    if not folder:
        return
    from sepne_spark import storage

    try:
        if storage.exists(folder):
            files = storage.file_count(folder)
            storage.remove(folder)
            log.info("removed this run's checkpoints, %s (%d files)", folder, files)
    except Exception as exc:  # noqa: BLE001 - the run's result stands; the folder is named
        log.warning("could not remove this run's checkpoints, %s: %s", folder, str(exc).splitlines()[0][:200])


@contextlib.contextmanager
def _stop_on_signals(stopped: dict[str, int]) -> Iterator[None]:
    """SIGTERM (a scheduler's kill) and SIGINT (Ctrl-C) record their number in
    ``stopped`` and raise :class:`JobStopped` in the main thread while the block runs,
    after asking Spark to interrupt the session's running jobs (Spark 4.0 and later);
    later signals are only recorded, so that the unwinding is not cut short. The
    handlers before (PySpark's own for SIGINT) are put back after. Off the main thread,
    where Python cannot set a handler, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        if stopped:
            return
        stopped["signum"] = signum
        # The main thread may be inside a call to the JVM, whose connection is its own:
        # the jobs are interrupted from another thread, which gets a connection of its own.
        interrupter = threading.Thread(target=_interrupt_jobs, name="sepne-stop", daemon=True)
        interrupter.start()
        interrupter.join(timeout=30)
        raise JobStopped(signum)

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _worker_error(exc: BaseException) -> tuple[str, str] | None:
    """``(type, message)`` of the Python exception a Spark task raised, from the worker's
    traceback that PySpark's ``PythonException`` carries (its first line is empty); None
    for any other error."""
    text = str(exc)
    at = text.rfind("Traceback (most recent call last):")
    if at < 0:
        return None
    lines = text[at:].splitlines()[1:]
    for i in range(len(lines) - 1, -1, -1):
        found = re.match(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))(?:: (.*))?$", lines[i])
        if found:
            return found.group(1).rsplit(".", 1)[-1], found.group(2) or ""
    return None


def _user_error_in_task(exc: BaseException) -> str | None:
    """The message of a :class:`~sepne_spark.errors.UserError` (bad input, a bad setting)
    that a Spark task raised, for the job's one ``error:`` line and exit status 2."""
    from sepne_spark import errors

    found = _worker_error(exc)
    if found is None:
        return None
    kind = getattr(errors, found[0], None)
    return found[1] if isinstance(kind, type) and issubclass(kind, errors.UserError) else None


#: What Spark says of the jobs its shutdown cancelled, and of calls into a stopped context.
_SHUT_DOWN = re.compile(r"cancelled because SparkContext was shut down|Cannot call methods on a stopped "
                        r"SparkContext|SparkContext has been shutdown|SparkContext was shut down")


def _what_was_written(otherwise: str) -> str:
    """After a stop: the outputs already in place, or ``otherwise`` (what became of them)."""
    return (f"its output was already written in full: {', '.join(_written)} (only what follows the write did not "
            "run)" if _written else f"{otherwise} (an output is replaced whole or not at all)")


def _reason(exc: BaseException) -> str:
    """``Type: first line``; for an error from the JVM, its informative line (Spark's
    error class, or the first Java exception's message) instead of Py4J's
    ``An error occurred while calling o598.collectToPython.``; for an error a Spark task
    raised in Python, that error's own line (``PythonException: FloatingPointError:
    ...``)."""
    worker = _worker_error(exc)
    if worker is not None:
        return f"{type(exc).__name__}: {worker[0]}: {worker[1]}".rstrip(": ")
    text = next((line for line in str(exc).splitlines() if line.strip()), "").strip()
    if type(exc).__name__.startswith("Py4J"):
        from sepne_spark.reading import spark_error_text

        return f"{type(exc).__name__}: {spark_error_text(exc).lstrip(': ') or text}"
    return f"{type(exc).__name__}: {text}"


def _interrupt_jobs() -> None:
    """Interrupt the active session's running Spark jobs (Spark 4.0 and later)."""
    from sepne_spark.session import active_session

    try:
        spark = active_session()
        if spark is not None:
            spark.interruptAll()
    except Exception:  # noqa: BLE001 - Spark 3.5's classic session has no interruptAll
        log.debug("could not interrupt the running Spark jobs", exc_info=True)


def _version() -> str:
    from sepne_spark import __version__

    return __version__


def _package_location() -> str:
    """Where ``sepne_spark`` was imported from (a checkout, site-packages or a wheel)."""
    import sepne_spark

    return str(Path(sepne_spark.__file__).parent)


#: How a text edge list is laid out: the options of ``--sep``, ``--header`` and the
#: column flags, shared by the jobs that read edge lists; the embed job records those it
#: was given in its manifest (``read``), and ``evaluate reconstruct`` reads the same way.
READ_OPTIONS = ("sep", "header", "src_col", "dst_col", "weight_col")


def add_read_arguments(group: Any) -> None:
    """Add ``--sep``, ``--header``, ``--src-col``, ``--dst-col`` and ``--weight-col``."""
    group.add_argument("--sep", default=None, help="field separator for text input (default: by format)")
    group.add_argument("--header", default=None, choices=["auto", "yes", "no"],
                       help="text input has a header line (default: auto, a first line of column names or of "
                            "words over numeric ids; the log says which rule decided)")
    group.add_argument("--src-col", default=None,
                       help="source column (name or 0-based index; default: the first, or Parquet's column src)")
    group.add_argument("--dst-col", default=None,
                       help="destination column (name or 0-based index; default: the second, or Parquet's column "
                            "dst)")
    group.add_argument("--weight-col", default=None,
                       help="weight column (name or 0-based index; default: the one named weight, else the third "
                            "if the lines have one, else weights of 1)")


def _col(value: str | int | None) -> str | int | None:
    if value is None or isinstance(value, int):
        return value
    return int(value) if value.isdigit() else value


def given_read_options(ns: Any) -> dict[str, str]:
    """The read options given on the command line, as written (for a manifest)."""
    return {k: getattr(ns, k) for k in READ_OPTIONS if getattr(ns, k, None) is not None}


def read_options(ns: Any, saved: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`sepne_spark.graph.load_graph`'s layout keywords: the layout flags given, or
    else ``saved`` (a manifest's ``read``) whole, checked by the reader's own rules
    (:func:`sepne_spark.reading.check_layout`) before Spark starts. (A column given
    against a default one, ``--dst-col 0`` alone, is the reader's to refuse when it
    reads: Parquet's default columns are found by name.)"""
    from sepne_spark.reading import check_layout

    given = given_read_options(ns)
    origin = ""
    if not given and saved:
        given, origin = dict(saved), " (the layout in the embeddings' manifest; give layout flags to replace it)"
    header = {"auto": None, "yes": True, "no": False, None: None}[given.get("header")]
    layout = {"sep": given.get("sep"), "header": header,
              **{k: _col(given.get(k)) for k in ("src_col", "dst_col", "weight_col")}}
    try:
        check_layout(**layout)
    except UserError as exc:
        raise type(exc)(f"{exc}{origin}") from None
    return layout
