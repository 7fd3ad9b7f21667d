"""Reading and validating edge lists: TSV, CSV, whitespace text and Parquet.

:func:`read_edges` turns files into a raw edge DataFrame ``(src, dst, weight double)``
after checking every line. The graph built from it (merged duplicates, both directions
of an undirected edge, the vertex table) and its neighbourhood queries live in
:mod:`sepne_spark.graph`.

How text is read
----------------
Text files are read with ``spark.read.text`` and parsed with Spark SQL expressions (no
Python worker is involved, nothing of the size of the input reaches the driver). Every
line is classified on its own: blank, comment, header, a valid edge or a bad line. The
edge DataFrame is a lazy pipeline over the files; validation is one extra pass over them
that aggregates per file split (``_metadata.file_path``, ``_metadata.file_block_start``)
with a hash aggregation: the number of lines, of good and of bad lines, and the row ids
of the split's first line and first bad line. Rows of one split arrive contiguously and
in order, so ``monotonically_increasing_id`` minus its minimum over the split is a
line's offset inside the split, and the number of lines of the earlier splits of the
same file (a prefix sum over a handful of rows on the driver) turns that offset into the
physical line number, with no sort, window or index over the data. Only when a bad line
exists does a further query fetch its text (the first bad row of that one split).

Header rule
-----------
With ``header=None`` the first non-blank, non-comment line at the top of an input file
(the first file Spark reads) is a header when one of its fields is a usual column name
(``src``, ``dst``, ``source``, ``target``, ``from``, ``to``, ``weight``, ``node1`` ...,
compared case-insensitively), when the field that would hold the weight (the third
by default) is present and is not a number, or when both its node ids are words while
both ids are numbers on every one of the next lines of that file (up to four looked at:
``paper<TAB>cited`` over numeric ids). The job logs which rule decided. Naming a column
by a string (``src_col="from"``) implies a header. When a header is in use, every line identical to it is skipped, so part files
that each repeat the header read as one table.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Sequence
from urllib.parse import unquote

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sepne_spark.errors import InputError, SettingError, UserError, check_choice  # noqa: F401 - InputError, UserError re-exported here

__all__ = ["BAD_LINE_POLICIES", "FORMATS", "InputError", "read_edges"]

log = logging.getLogger(__name__)

FORMATS = ("auto", "tsv", "csv", "txt", "parquet")
BAD_LINE_POLICIES = ("fail", "skip")

#: Extensions recognised by ``fmt="auto"`` (after removing a compression suffix).
_EXTENSIONS = {"tsv": "tsv", "tab": "tsv", "csv": "csv", "txt": "txt", "parquet": "parquet", "pq": "parquet"}
_COMPRESSION_SUFFIXES = ("gz", "bz2", "deflate", "lz4", "snappy", "zst", "zstd", "xz")

#: Field names that mark a first line as a header when ``header=None``.
_HEADER_WORDS = frozenset(
    """src dst source target from to weight src_id dst_id source_id target_id from_id to_id
    srcid dstid fromnodeid tonodeid node1 node2 node_1 node_2 id1 id2 id_1 id_2""".split()
)

# A finite decimal number (the same pattern in Python and Java regex syntax).
_NUMBER_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_NONFINITE_RE = r"(?i)^[+-]?(nan|inf|infinity)$"
_QUOTED_RE = r'^"(.*)"$'  # a field in double quotes (CSV)
# Characters stripped around a line and around each field (ASCII whitespace and a BOM).
_STRIP = " \t\r\n\x0b\x0c\ufeff"
_WS_RE = r"[ \t\n\x0b\f\r]+"  # Java's \s, spelled out so Python splits alike
_MAX_SHOWN = 120  # characters of an offending line quoted in a message
_HEAD_LINES = 5  # data lines read at the top of a file to decide on a header
_HEAD_SCAN_LINES = 10_000  # lines (blank, comments) check_local_head reads at most to find them
_HEAD_LINE_CHARS = 1 << 20  # longer lines are left to the read

# Reason codes of the line classification.
_R_SKIP = -1  # blank line, comment or header
_R_OK = 0
_R_FIELDS = 1
_R_EMPTY_ID = 2
_R_NOT_NUMBER = 3
_R_NONFINITE = 4
_R_NEGATIVE = 5
_R_NULL_WEIGHT = 6
_R_TOO_LARGE = 7

#: Largest edge weight read. The weights' sums (a node's, the graph's) and the products
#: of two such sums in the log scaling must stay finite: with 10^12 edges at most 10^112
#: and 10^224, within a double's 1.8 x 10^308. Larger weights overflowed into zero
#: vectors or a failed solve.
MAX_WEIGHT = 1e100


# --------------------------------------------------------------------------- helpers


#: Extensions of files that are no edge list (text or Parquet) but turn up in data folders:
#: Spark's reader would read them as edges.
NOT_EDGE_LISTS = frozenset({
    "md", "markdown", "rst", "html", "htm", "pdf", "doc", "docx", "xls", "xlsx", "json", "yaml", "yml", "toml",
    "ini", "cfg", "xml", "py", "sh", "ipynb", "log", "png", "jpg", "jpeg", "svg", "zip", "jar", "tar",
})
#: A part file as Spark and Hadoop name them (``part-00000...``).
_PART_FILE_NAME = re.compile(r"part-(?:[rm]-)?\d{5}(?:$|[-.])")
#: How the name of a table of nodes (their labels, communities, features) starts.
_NODE_TABLE_WORDS = ("label", "node", "class", "categor", "communit", "group", "vertex", "vertices", "feature")


def _base_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def no_edge_list_files(files: Sequence[str]) -> list[str]:
    """The ``files`` (paths or URIs) that are no edge list by their extension
    (:data:`NOT_EDGE_LISTS`: a ``README.md``, a ``schema.json``), which a reader of their
    folder would take for edge lines."""
    return [f for f in files if "." in _base_name(f) and _base_name(f).rsplit(".", 1)[-1].lower() in NOT_EDGE_LISTS]


def node_tables_beside_edges(files: Sequence[str]) -> tuple[str, list[str]] | None:
    """A file named as an edge list (``edges.tsv``) and the files beside it named as
    tables of the nodes (``labels.tsv``, ``nodes.csv``, ``groups.csv``; a name with
    ``edge`` in it is an edge list's), when ``files`` (the files of one folder) hold both:
    a dataset's folder, whose every file a reader would take for edges. None otherwise;
    part files (``part-00000``) are chunks of one table and never count."""
    named = [f for f in files if not _PART_FILE_NAME.match(_base_name(f))]
    edges = [f for f in named if _base_name(f).lower().startswith("edge")]
    # group-edges.csv (a node-group table of the ASU graphs) stays an edge list's name:
    # their folders hold nodes.csv and groups.csv beside it too.
    others = [f for f in named if _base_name(f).lower().startswith(_NODE_TABLE_WORDS)
              and "edge" not in _base_name(f).lower()]
    return (edges[0], others) if edges and others else None


def _as_paths(path: str | Sequence[str]) -> list[str]:
    """``path`` as a non-empty list of path strings."""
    paths = [path] if isinstance(path, str) else list(path)
    if not paths or not all(isinstance(p, str) and p for p in paths):
        raise SettingError(f"path must be a non-empty string or list of strings; got {path!r}")
    return paths


def _describe(paths: Sequence[str]) -> str:
    """The input paths for a message."""
    return paths[0] if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more paths)"


def _display_file(uri: str) -> str:
    """A file URI from ``_metadata.file_path`` as a readable path (``file:`` URIs local)."""
    if uri.startswith("file:"):
        rest = uri[len("file:") :]
        if rest.startswith("//"):
            rest = rest[2:]
        return unquote(rest)
    return unquote(uri)


def _shorten(text: str | None) -> str:
    """``text`` quoted and cut to a readable length."""
    if text is None:
        return "None"
    if len(text) > _MAX_SHOWN:
        text = text[:_MAX_SHOWN] + "..."
    return repr(text)


def _extension(path: str) -> str:
    """Lower-case extension of ``path``, ignoring a compression suffix."""
    name = path.rstrip("/").rsplit("/", 1)[-1].lower()
    parts = name.split(".")
    if len(parts) > 2 and parts[-1] in _COMPRESSION_SUFFIXES:
        parts = parts[:-1]
    return parts[-1] if len(parts) > 1 else ""


def spark_error_text(exc: BaseException) -> str:
    """The informative line of a Spark/JVM error (not the whole Java stack)."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.search(r"\[[A-Z][A-Z_.]+\]", ln):
            line = re.sub(r"^.*?(\[[A-Z][A-Z_.]+\])", r"\1", ln)
            # An error class without a hint (a truncated .gz: FAILED_READ_FILE.NO_HINT):
            # the root cause's own words, from the Java trace's last "Caused by".
            causes = [c for c in lines if c.startswith("Caused by:")]
            if "NO_HINT" in line and causes:
                cause = re.sub(r"^(?:[a-z_$][\w$]*\.)+", "", causes[-1][len("Caused by:"):].strip())
                line += f" (cause: {cause})"
            return line
    for ln in lines:
        if "Exception:" in ln and not ln.startswith("at "):
            return ln
    return lines[0] if lines else type(exc).__name__


_READ_ERROR_MARKS = (
    "PATH_NOT_FOUND",
    "FAILED_READ_FILE",
    "CANNOT_READ_FILE_FOOTER",
    "UNABLE_TO_INFER_SCHEMA",
    "FileNotFoundException",
    "AccessDeniedException",
    "Permission denied",
    "is not a Parquet file",
    "EOFException",
)


def _is_read_error(exc: BaseException) -> bool:
    """Whether a Spark error is about reading the input files."""
    text = str(exc)
    return any(mark in text for mark in _READ_ERROR_MARKS)


def _read_failure(paths: Sequence[str], exc: BaseException) -> InputError:
    """An :class:`InputError` for a Spark error raised while reading ``paths``."""
    return InputError(f"cannot read {_describe(paths)}: {spark_error_text(exc)}")


def _strip(col: Column, chars: str = _STRIP) -> Column:
    """``col`` without surrounding whitespace (and byte-order mark)."""
    return F.btrim(col, F.lit(chars))


def _line_strip_chars(sep: str | None) -> str:
    """Characters stripped around a line before splitting it: never the separator.

    Keeping a leading or trailing tab of a TSV line keeps the empty field it delimits,
    so ``"<TAB>b<TAB>1"`` is an edge with an empty source, not ``(b, 1)``.
    """
    if _is_whitespace_sep(sep):
        return _STRIP
    return "".join(c for c in _STRIP if c not in sep)  # type: ignore[operator]


def _split_pattern(sep: str | None) -> str:
    """Java regex splitting a stripped line into fields (``None`` or blank: whitespace runs)."""
    if _is_whitespace_sep(sep):
        return _WS_RE
    return re.sub(r"([\\^$.|?*+()\[\]{}-])", r"\\\1", sep)  # type: ignore[arg-type]


def _is_whitespace_sep(sep: str | None) -> bool:
    """Whether ``sep`` means "runs of whitespace" (``None``, ``" "`` or ``r"\\s+"``)."""
    return sep is None or sep == " " or sep == r"\s+"


def _split_line(line: str, sep: str | None) -> list[str]:
    """Python twin of the field split done in Spark (for the header line)."""
    stripped = line.strip(_line_strip_chars(sep))
    fields = re.split(_WS_RE, stripped) if _is_whitespace_sep(sep) else stripped.split(sep)
    return [_unquote(f.strip(_STRIP)) for f in fields]


def _unquote(field: str) -> str:
    """A field without one pair of surrounding double quotes."""
    if len(field) >= 2 and field[0] == field[-1] == '"':
        return field[1:-1]
    return field


def _is_number(text: str) -> bool:
    return re.match(_NUMBER_RE, text) is not None or re.match(_NONFINITE_RE, text) is not None


# --------------------------------------------------------------------- text parsing


@dataclass(frozen=True)
class _TextLayout:
    """How the fields of a text line map to an edge."""

    sep: str | None  # None: whitespace runs
    header: str | None  # stripped header line, or None
    n_header: int | None  # fields of the header
    src: int
    dst: int
    weight: int | None  # None: every weight is 1.0
    weight_optional: bool  # weight present only on lines with enough fields
    min_fields: int  # without a header: fewer fields is an error
    max_fields: int | None  # without a header: more fields is an error (None: no limit)
    quoted: bool  # strip one pair of double quotes around fields (CSV)
    comment: str | None

    def expected(self) -> str:
        """What the field count must be, in words."""
        if self.n_header is not None:
            return f"{self.n_header} fields like the header"
        if self.max_fields is None:
            return f"at least {self.min_fields} fields"
        if self.max_fields == self.min_fields:
            return f"{self.min_fields} fields"
        return f"{self.min_fields} or {self.max_fields} fields"


class _Head(list):
    """The head lines of one input file (:func:`_head_lines`), with that file's path."""

    file: str | None = None


def _head_lines(spark: SparkSession, paths: Sequence[str], comment: str | None) -> _Head:
    """Up to :data:`_HEAD_LINES` non-blank, non-comment lines at the top of one input file
    (its path in ``.file``).

    Only first splits of files are considered and the query stops once it has that many
    rows (from the first file Spark reads, usually the largest; lines of other files are
    dropped), so this reads little more than the head of one file. Empty when the input
    has no data line.
    """
    try:
        lines = spark.read.text(list(paths))
    except Exception as exc:
        if _is_read_error(exc):
            raise _read_failure(paths, exc) from exc
        raise
    s = _strip(F.col("value"))
    cond = (F.col("_metadata.file_block_start") == 0) & (s != "")
    if comment:
        cond = cond & ~s.startswith(comment)
    try:
        rows = lines.where(cond).select("value", "_metadata.file_path").limit(_HEAD_LINES).collect()
    except Exception as exc:
        if _is_read_error(exc):
            raise _read_failure(paths, exc) from exc
        raise
    head = _Head(r["value"] for r in rows if r["file_path"] == rows[0]["file_path"])
    head.file = rows[0]["file_path"] if rows else None
    return head


def _header_reason(
    fields: Sequence[str], weight_index: int | None, ids: tuple[int, int], below: Sequence[Sequence[str]]
) -> str | None:
    """The ``header=None`` rule: why the first line (``fields``) is a header, or None.

    Known column names; a present, non-numeric weight field; or node ids that are words
    where every line below it (``below``: the next lines of the same file, at least one)
    has numbers in both id columns.
    """
    if any(f.strip().lower().lstrip("#").strip() in _HEADER_WORDS for f in fields):
        return "it holds a usual column name"
    if weight_index is not None and weight_index < len(fields) and not _is_number(fields[weight_index]):
        return f"its weight field {fields[weight_index].strip()!r} is not a number"

    def numeric_ids(row: Sequence[str]) -> bool:
        return max(ids) < len(row) and all(_is_number(row[i]) for i in ids)

    def word_ids(row: Sequence[str]) -> bool:
        return max(ids) < len(row) and not any(_is_number(row[i]) for i in ids)

    if below and word_ids(fields) and all(numeric_ids(row) for row in below):
        lines = "the next line" if len(below) == 1 else f"the next {len(below)} lines"
        return f"its node ids are words and those on {lines} are numbers"
    return None


def _column_index(
    col: str | int, role: str, header_fields: Sequence[str] | None, where: str
) -> int:
    """Index of a column given by name (needs a header) or 0-based position."""
    if isinstance(col, bool) or not isinstance(col, (int, str)):
        raise SettingError(f"{role} must be a column name or a 0-based index; got {col!r}")
    if isinstance(col, int):
        if col < 0:
            raise SettingError(f"{role} must be a non-negative index; got {col}")
        if header_fields is not None and col >= len(header_fields):
            raise InputError(f"{where}: {role}={col} but the header has only {len(header_fields)} columns")
        return col
    if header_fields is None:
        raise SettingError(f"{role}={col!r} names a column, which needs a header line (header=True, --header yes)")
    if col in header_fields:
        return list(header_fields).index(col)
    lowered = [h.lower() for h in header_fields]
    if lowered.count(col.lower()) == 1:
        return lowered.index(col.lower())
    hint = ""
    if header_fields and all(_is_number(h) for h in header_fields):
        hint = (": that first line looks like data, not column names; a file without a header takes 0-based "
                "indexes (--src-col 0 --dst-col 1)")
    raise InputError(f"{where}: no column {col!r} in the header {list(header_fields)}{hint}")


def _text_layout(
    paths: Sequence[str],
    fmt: str,
    sep: str | None,
    header: bool | None,
    src_col: str | int | None,
    dst_col: str | int | None,
    weight_col: str | int | None,
    comment: str | None,
    head: Sequence[str],
    announce: bool = True,
) -> _TextLayout:
    """Decide separator, header and column positions for a text input (``head``: the
    first data lines of one file, from :func:`_head_lines`; may be empty). ``announce``:
    log a detected header at INFO (else DEBUG, for a check before the read)."""
    if sep is None:
        sep = {"tsv": "\t", "csv": ",", "txt": None}[fmt]
    named = any(isinstance(c, str) for c in (src_col, dst_col, weight_col))  # header=False refused before
    explicit = src_col is not None or dst_col is not None
    where = _describe(paths)

    first_line = head[0] if head else None
    header_fields: list[str] | None = None
    if first_line is not None and header is not False:
        fields = _split_line(first_line, sep)
        if header or named:
            header_fields = fields
        else:  # auto-detect
            w_guess = weight_col if isinstance(weight_col, int) and not isinstance(weight_col, bool) else (
                None if explicit else 2
            )
            ids = (
                src_col if isinstance(src_col, int) else 0,
                dst_col if isinstance(dst_col, int) else 1,
            )
            reason = _header_reason(fields, w_guess, ids, [_split_line(line, sep) for line in head[1:]])
            if reason is not None:
                header_fields = fields
                source = getattr(head, "file", None)
                log.log(logging.INFO if announce else logging.DEBUG,
                    "read the first line of %s, %s, as the header of every file: %s (--header no, or header=False, "
                    "reads it as an edge instead)", _display_file(source) if source else where, _shorten(first_line),
                    reason,
                )

    src = _column_index(src_col, "src_col", header_fields, where) if src_col is not None else 0
    dst = _column_index(dst_col, "dst_col", header_fields, where) if dst_col is not None else 1
    if src == dst:
        raise SettingError(f"src_col and dst_col (--src-col, --dst-col) name the same column ({src})")
    weight: int | None
    optional = False
    if weight_col is not None:
        weight = _column_index(weight_col, "weight_col", header_fields, where)
        if weight in (src, dst):
            raise SettingError("weight_col (--weight-col) must differ from src_col and dst_col")
    elif header_fields is not None:
        lowered = [h.lower() for h in header_fields]
        if "weight" in lowered and lowered.index("weight") not in (src, dst):
            weight = lowered.index("weight")
        elif not explicit and len(header_fields) > 2:
            weight = 2
        else:
            weight = None
    elif not explicit:
        weight, optional = 2, True
    else:
        weight = None

    if header_fields is not None:
        n_header = len(header_fields)
        if max(src, dst, weight if weight is not None else 0) >= n_header:
            raise InputError(f"{where}: the header {header_fields} has fewer columns than selected")
        min_fields, max_fields = n_header, n_header
    elif not explicit and weight_col is None:
        n_header, min_fields, max_fields = None, 2, 3
    else:
        n_header = None
        min_fields, max_fields = max(src, dst, weight if weight is not None else 0) + 1, None

    return _TextLayout(
        sep=sep,
        header=None if header_fields is None else first_line.strip(_line_strip_chars(sep)),  # type: ignore[union-attr]
        n_header=n_header,
        src=src,
        dst=dst,
        weight=weight,
        weight_optional=optional,
        min_fields=min_fields,
        max_fields=max_fields,
        quoted=fmt == "csv" or sep == ",",
        comment=comment or None,
    )


def _sql_str(text: str) -> str:
    """``text`` as a Spark SQL string expression, exact whatever the parser settings.

    Plain words are quoted as they are; anything else is spelled in hex and decoded
    (constant-folded at planning), so backslashes, quotes and control characters never
    depend on ``spark.sql.parser.escapedStringLiterals``.
    """
    if re.fullmatch(r"[A-Za-z0-9 _.,:;#%@!?+=/-]*", text):
        return f"'{text}'"
    return f"CAST(unhex('{text.encode('utf-8').hex()}') AS STRING)"


def _classify_text(lines: DataFrame, layout: _TextLayout) -> DataFrame:
    """Per-line parse: columns ``reason``, ``nf``, ``src``, ``dst``, ``weight``.

    ``reason`` is -1 for a blank line, comment or header, 0 for a valid edge and a
    positive code for a bad line. All other columns of ``lines`` are kept.

    The expressions are SQL text, one call per projection: building the plan then costs
    a handful of round trips to the JVM instead of hundreds.
    """
    strip_all = _sql_str(_STRIP)
    partial = _line_strip_chars(layout.sep)
    # _t: the line stripped of all whitespace (blank and comment lines); _s: stripped
    # of whitespace other than the separator (the text that is split into fields).
    df = lines.selectExpr(
        "*",
        f"btrim(value, {strip_all}) AS _t",
        "btrim(value, {}) AS _s".format(strip_all if partial == _STRIP else _sql_str(partial)),
    )
    df = df.selectExpr("*", f"split(_s, {_sql_str(_split_pattern(layout.sep))}, -1) AS _fields")

    def field(i: int) -> str:
        value = f"btrim(try_element_at(_fields, {i + 1}), {strip_all})"
        if layout.quoted:
            value = f"regexp_replace({value}, {_sql_str(_QUOTED_RE)}, '$1')"
        return value

    cols = ["*", "size(_fields) AS nf", f"{field(layout.src)} AS src", f"{field(layout.dst)} AS dst"]
    if layout.weight is not None:
        cols.append(f"{field(layout.weight)} AS _w")
    df = df.selectExpr(*cols)

    skip = ["_t = ''"]
    if layout.comment:
        skip.append(f"startswith(_t, {_sql_str(layout.comment)})")
    if layout.header is not None:
        skip.append(f"_s = {_sql_str(layout.header)}")
    bad_count = f"nf < {layout.min_fields}"
    if layout.max_fields is not None:
        bad_count += f" OR nf > {layout.max_fields}"
    cases = [
        f"WHEN {' OR '.join(skip)} THEN {_R_SKIP}",
        f"WHEN {bad_count} THEN {_R_FIELDS}",
        f"WHEN coalesce(src = '' OR dst = '', true) THEN {_R_EMPTY_ID}",
    ]
    if layout.weight is None:
        weight = "1.0D"
    else:
        # Regex match and cast once per line, each in its own projection.
        df = df.selectExpr("*", f"coalesce(_w RLIKE {_sql_str(_NUMBER_RE)}, false) AS _num")
        df = df.selectExpr("*", "CASE WHEN _num THEN try_cast(_w AS DOUBLE) END AS _wd")
        has_w = f"nf > {layout.weight}" if layout.weight_optional else "true"
        nonfinite = (
            "CASE WHEN _num THEN abs(_wd) = double('inf') "
            f"ELSE coalesce(_w RLIKE {_sql_str(_NONFINITE_RE)}, false) END"
        )
        weight = f"CASE WHEN {has_w} THEN _wd ELSE 1.0D END"
        cases += [
            f"WHEN ({has_w}) AND ({nonfinite}) THEN {_R_NONFINITE}",
            f"WHEN ({has_w}) AND NOT _num THEN {_R_NOT_NUMBER}",
            f"WHEN ({has_w}) AND _wd < 0 THEN {_R_NEGATIVE}",
            f"WHEN ({has_w}) AND _wd > {MAX_WEIGHT!r}D THEN {_R_TOO_LARGE}",
        ]
    reason = f"CASE {' '.join(cases)} ELSE {_R_OK} END"
    # The guard is always true, but it makes ``reason`` nondeterministic: a filter on it
    # then stays above this projection instead of being pushed below it with every
    # reference to the split fields inlined (which would split each line a dozen times).
    return df.selectExpr(
        "*",
        f"CAST({weight} AS DOUBLE) AS weight",
        f"CAST(CASE WHEN spark_partition_id() >= 0 THEN {reason} END AS INT) AS reason",
    )


def _text_reason(code: int, nf: int, text: str, layout: _TextLayout) -> str:
    """Words for a bad line."""
    if code == _R_FIELDS:
        return f"expected {layout.expected()}, found {nf}"
    if code == _R_EMPTY_ID:
        return "empty node id"
    fields = _split_line(text, layout.sep)
    w = fields[layout.weight] if layout.weight is not None and layout.weight < len(fields) else ""
    if code == _R_NOT_NUMBER:
        return f"weight {w!r} is not a number"
    if code == _R_NONFINITE:
        return f"weight {w!r} is NaN or infinite"
    if code == _R_NEGATIVE:
        return f"weight {w!r} is negative"
    if code == _R_TOO_LARGE:
        return f"weight {w!r} is {_TOO_LARGE}"
    return f"bad line (code {code})"


def _layout_hint(layout: _TextLayout, columns: Sequence[Any], counted: bool) -> str:
    """What to check when every line read is bad: the column indexes given, when a field
    count is what is wrong (``counted``) and one of them is past the first two, else the
    separator."""
    split = "whitespace" if layout.sep is None else repr(layout.sep)
    given = {name: c for name, c in zip(("src_col", "dst_col", "weight_col"), columns)
             if isinstance(c, int) and not isinstance(c, bool)}
    if layout.n_header is None and given and max(given.values()) >= 2 and counted:
        cols = ", ".join(f"{name}={c}" for name, c in given.items())
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
        return (f"split at {split}: {cols} ({flags}) count fields from 0; do the lines have that many? Or is the "
                "separator wrong? give it with sep= (--sep)")
    return f"split at {split}: is the separator right? give it with sep= (--sep), or the file's format"


def text_lines(spark: SparkSession, paths: str | list[str]) -> DataFrame:
    """``spark.read.text(paths)``, as a table whose cached descendants later queries find.

    Spark before 4.0 tells two analyses of one text read apart (its text format has no
    equality, unlike Parquet's and CSV's), and a Spark Connect client has every query's
    plan analysed anew on the server. So under a Spark Connect 3.5 client a table
    persisted from a text input never matched the queries built on it: each of them
    read and parsed the files again (the distributed fit of a 3,000-node TSV graph ran
    202 jobs in its last stage against 38 in a classic session). There the read is a
    temporary view, ``sepne_text_<12 hex digits>`` (:func:`~sepne_spark.session.pinned`);
    other sessions read the files directly.
    """
    from sepne_spark.session import pinned

    return pinned(spark.read.text(paths), "sepne_text")


def _read_text(
    spark: SparkSession,
    paths: list[str],
    fmt: str,
    sep: str | None,
    header: bool | None,
    src_col: str | int | None,
    dst_col: str | int | None,
    weight_col: str | int | None,
    bad_lines: str,
    comment: str | None,
    head: list[str] | None,
    counts: dict[str, int] | None = None,
) -> tuple[DataFrame, int]:
    """Text branch of :func:`read_edges` (``head``: :func:`_head_lines`, if already fetched)."""
    where = _describe(paths)
    named = any(isinstance(c, str) for c in (src_col, dst_col, weight_col))
    if head is None and (header is not False or named):  # the header decides the layout
        head = _head_lines(spark, paths, comment)
        if not head:
            raise InputError(
                f"no edges in {where}: the input has no data lines (only blank or comment lines, or no files)"
            )
    layout = _text_layout(paths, fmt, sep, header, src_col, dst_col, weight_col, comment, head or [])

    # Validation pass: per split, the number of lines, good and bad lines, the row id of
    # its first line and of its first bad line. Only fixed-width values are aggregated,
    # so Spark uses a hash aggregation (no sort of the rows).
    try:
        lines = spark.read.text(paths).selectExpr(
            "value",
            "_metadata.file_path AS _file",
            "_metadata.file_block_start AS _block",
            "monotonically_increasing_id() AS _row",
        )
        parsed = _classify_text(lines, layout)
        summary = parsed.groupBy("_file", "_block").agg(
            F.expr("count(1) AS lines"),
            F.expr("min(_row) AS base"),
            F.expr(f"count_if(reason = {_R_OK}) AS good"),
            F.expr("count_if(reason > 0) AS bad"),
            F.expr(f"count_if(reason = {_R_FIELDS}) AS bad_fields"),
            F.expr(f"count_if(reason = {_R_OK} AND src = dst) AS loops"),
            F.expr("min(CASE WHEN reason > 0 THEN _row END) AS first_bad"),
        )
        splits = summary.coalesce(1).collect()  # one row per file split
    except Exception as exc:
        if _is_read_error(exc):
            raise _read_failure(paths, exc) from exc
        raise

    good = sum(int(r["good"]) for r in splits)
    bad = sum(int(r["bad"]) for r in splits)
    first_msg = None
    if bad:
        first_msg = _first_bad_text(parsed, splits, layout)
        if bad_lines == "fail":
            if good == 0:  # skipping would leave nothing: the layout is more likely wrong than the lines
                wrong_count = sum(int(r["bad_fields"]) for r in splits) == bad  # every line: its field count
                hint = _layout_hint(layout, (src_col, dst_col, weight_col), wrong_count)
                raise InputError(f"{first_msg} (all {bad} lines are bad, {hint})")
            raise InputError(
                f"{first_msg} ({bad} bad line{'s' if bad != 1 else ''} in total; "
                "pass bad_lines='skip' (--bad-lines skip) to drop them)"
            )
    if good == 0:
        total = sum(int(r["lines"]) for r in splits)
        if bad:
            detail = f"; all {bad} data lines are bad, the first: {first_msg}"
        elif total and layout.header is not None:
            detail = (f" (its first data line, {_shorten(layout.header)}, is the header"
                      + ("; header=False (--header no) reads it as an edge" if header is None else "")
                      + "; the others are comments or blank lines)")
        else:
            detail = " (comments or blank lines only)" if total else ""
        raise InputError(f"no edges in {where}: {total:,} line{'s' if total != 1 else ''} read, none is a valid "
                         f"edge{detail}")
    if bad:
        log.warning("skipped %d bad line%s in %s; the first: %s", bad, "s" if bad != 1 else "", where, first_msg)
    log.info("read %s edge lines from %s (%d split%s)", f"{good:,}", where, len(splits),
             "s" if len(splits) != 1 else "")
    if counts is not None:
        counts.update(rows=good, self_loops=sum(int(r["loops"]) for r in splits))

    edges = (
        _classify_text(text_lines(spark, paths), layout)
        .where(F.col("reason") == _R_OK)
        .select("src", "dst", "weight")
    )
    return edges, (bad if bad_lines == "skip" else 0)


def _first_bad_text(parsed: DataFrame, splits: Sequence[Any], layout: _TextLayout) -> str:
    """``file:N: reason (line N: 'text')`` for the first bad line over all splits.

    The line number comes from the per-split summary; the text of the line is fetched
    by a second, cheap query: the first bad row of that one split.
    """
    by_file: dict[str, list[Any]] = {}
    for r in splits:
        by_file.setdefault(r["_file"], []).append(r)
    for file in sorted(by_file):
        before = 0
        for r in sorted(by_file[file], key=lambda r: r["_block"]):
            if r["bad"]:
                line = before + int(r["first_bad"]) - int(r["base"]) + 1
                row = (
                    parsed.where((F.col("_file") == file) & (F.col("_block") == r["_block"]))
                    .where(F.col("reason") > 0)
                    .orderBy("_row")
                    .select(F.substring("value", 1, 4 * _MAX_SHOWN).alias("text"), "reason", "nf")
                    .first()
                )
                if row is None:  # the input changed since the validation pass
                    return f"{_display_file(file)}:{line}: bad line"
                what = _text_reason(int(row["reason"]), int(row["nf"]), row["text"], layout)
                return f"{_display_file(file)}:{line}: {what} (line {line}: {_shorten(row['text'])})"
            before += int(r["lines"])
    raise AssertionError("no bad line found")  # pragma: no cover - caller checked the count


# ------------------------------------------------------------------------- parquet

_ID_TYPES = (T.StringType, T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def _parquet_column(df: DataFrame, col: str | int, role: str, where: str) -> str:
    """Name of the Parquet column given by name or 0-based position."""
    names = df.columns
    if isinstance(col, bool) or not isinstance(col, (int, str)):
        raise SettingError(f"{role} must be a column name or a 0-based index; got {col!r}")
    if isinstance(col, int):
        if not 0 <= col < len(names):
            raise InputError(f"{where}: {role}={col} but the data have {len(names)} columns {names}")
        return names[col]
    if col in names:
        return col
    lowered = [n.lower() for n in names]
    if lowered.count(col.lower()) == 1:
        return names[lowered.index(col.lower())]
    raise InputError(f"{where}: no column {col!r}; the columns are {names}")


def _empty_id(c: Column, string_ids: bool) -> Column:
    """A null node id, or an empty one when ids are strings."""
    return c.isNull() | (c == "") if string_ids else c.isNull()


def row_reason(src: Column, dst: Column, weight: Column, string_ids: bool) -> Column:
    """The reason code of an edge row of typed columns: 0 for a good one, else why it is
    bad (a null or empty id; a null, NaN, infinite, negative or too large weight). The rule of a
    Parquet file's rows and of an edge DataFrame given to ``fit``; text lines have
    their own, :func:`_classify_text`."""
    return (
        F.when(_empty_id(src, string_ids) | _empty_id(dst, string_ids), _R_EMPTY_ID)
        .when(weight.isNull(), _R_NULL_WEIGHT)
        .when(F.isnan(weight) | (F.abs(weight) == F.lit(float("inf"))), _R_NONFINITE)
        .when(weight < 0, _R_NEGATIVE)
        .when(weight > F.lit(MAX_WEIGHT), _R_TOO_LARGE)
        .otherwise(_R_OK)
        .cast("int")
    )


_TOO_LARGE = f"over {MAX_WEIGHT:g}, where sums of weights may overflow: divide every weight by one factor"


def _row_problem(reason: int, weight: str) -> str:
    """What is wrong with a row of :func:`row_reason` ``reason`` (> 0)."""
    return {
        _R_EMPTY_ID: "null or empty node id",
        _R_NULL_WEIGHT: "null weight",
        _R_NONFINITE: f"weight {weight} is NaN or infinite",
        _R_NEGATIVE: f"weight {weight} is negative",
        _R_TOO_LARGE: f"weight {weight} is {_TOO_LARGE}",
    }[reason]


def row_problem(reason: Column, weight: Column) -> Column:
    """:func:`_row_problem` as a Spark expression, for an error raised inside a plan."""
    shown = F.coalesce(weight.cast("string"), F.lit("null"))
    return (
        F.when(reason == _R_EMPTY_ID, F.lit(_row_problem(_R_EMPTY_ID, "")))
        .when(reason == _R_NULL_WEIGHT, F.lit(_row_problem(_R_NULL_WEIGHT, "")))
        .when(reason == _R_NONFINITE, F.concat(F.lit("weight "), shown, F.lit(" is NaN or infinite")))
        .when(reason == _R_TOO_LARGE, F.concat(F.lit("weight "), shown, F.lit(f" is {_TOO_LARGE}")))
        .otherwise(F.concat(F.lit("weight "), shown, F.lit(" is negative")))
    )


def _read_parquet(
    spark: SparkSession,
    paths: list[str],
    src_col: str | int | None,
    dst_col: str | int | None,
    weight_col: str | int | None,
    bad_lines: str,
    counts: dict[str, int] | None = None,
) -> tuple[DataFrame, int]:
    """Parquet branch of :func:`read_edges`."""
    where = _describe(paths)
    try:
        df = spark.read.parquet(*paths)
        names = df.columns
    except Exception as exc:
        if _is_read_error(exc):
            raise _read_failure(paths, exc) from exc
        if "COLUMN_ALREADY_EXISTS" in str(exc):
            named = re.search(r"column `(.+?)` already exists", str(exc))
            raise InputError(f"{where} has two columns {f'named {named.group(1)!r} ' if named else ''}but for case, "
                             "which Spark does not tell apart while spark.sql.caseSensitive is false: rename or "
                             "drop one of them in the file") from None
        raise
    if len(names) < 2:
        raise InputError(f"{where}: an edge list needs at least two columns; found {names}")
    lowered = [n.lower() for n in names]
    by_name = src_col is None and dst_col is None and "src" in lowered and "dst" in lowered
    if by_name:
        src, dst = names[lowered.index("src")], names[lowered.index("dst")]
    else:
        src = _parquet_column(df, src_col if src_col is not None else 0, "src_col", where)
        dst = _parquet_column(df, dst_col if dst_col is not None else 1, "dst_col", where)
    if src == dst:
        raise SettingError(f"src_col and dst_col (--src-col, --dst-col) name the same column ({src!r})")
    if weight_col is not None:
        weight: str | None = _parquet_column(df, weight_col, "weight_col", where)
    elif "weight" in lowered and names[lowered.index("weight")] not in (src, dst):
        weight = names[lowered.index("weight")]
    elif not by_name and src_col is None and dst_col is None and len(names) > 2:
        weight = names[2]  # by position: src, dst, weight
    else:
        weight = None

    types = {f.name: f.dataType for f in df.schema.fields}
    for role, name in (("src", src), ("dst", dst)):
        if not isinstance(types[name], _ID_TYPES):
            found = types[name]
            fix = ("cast the column to bigint or string where the file is written, or read the file with Spark "
                   "and pass the DataFrame to fit, which takes whole decimals"
                   if isinstance(found, T.DecimalType) and found.scale == 0
                   else f"is it the id column? choose the column with {role}_col (--{role}-col)")
            raise InputError(f"{where}, column {name!r}: node ids must be strings or integers, "
                             f"found {found.simpleString()}: {fix}")
    st, dt = types[src], types[dst]
    id_type: T.DataType = st
    if type(st) is not type(dt):
        if isinstance(st, _INTEGRAL) and isinstance(dt, _INTEGRAL):
            id_type = T.LongType()
        else:
            raise InputError(
                f"{where}: columns {src!r} ({st.simpleString()}) and {dst!r} ({dt.simpleString()}) "
                "must hold ids of the same type"
            )
    if weight is not None and not isinstance(types[weight], T.NumericType):
        if weight_col is None and weight == names[2] and not by_name and src_col is None and dst_col is None:
            raise InputError(
                f"{where}: without columns named src and dst, the first three columns are read as src, dst, "
                f"weight, but the third, {weight!r}, is {types[weight].simpleString()}: give src_col={src!r}, "
                f"dst_col={dst!r} (--src-col {src} --dst-col {dst}) for weights of 1, or weight_col (--weight-col) "
                "for the weight column"
            )
        raise InputError(
            f"{where}, column {weight!r}: a weight must be numeric, found {types[weight].simpleString()} "
            "(choose another column with weight_col, --weight-col)"
        )

    def quoted(name: str) -> Column:
        return F.col("`" + name.replace("`", "``") + "`")

    s, d = quoted(src).cast(id_type), quoted(dst).cast(id_type)
    w = quoted(weight).cast("double") if weight is not None else F.lit(1.0)

    strings = isinstance(id_type, T.StringType)
    reason = row_reason(s, d, w, strings)
    bad_col = (F.when(_empty_id(s, strings), F.lit(src)).when(_empty_id(d, strings), F.lit(dst))
               .otherwise(F.lit(weight or "")))
    edge_cols = [s.alias("src"), d.alias("dst"), w.alias("weight"), reason.alias("reason")]
    checked = df.select(
        *edge_cols,
        F.col("_metadata.file_path").alias("_file"),
        F.col("_metadata.row_index").alias("_row"),
        bad_col.alias("_col"),
    )
    r = F.col("reason")
    try:
        stats = checked.agg(
            F.sum((r == _R_OK).cast("long")).alias("good"),
            F.sum((r > 0).cast("long")).alias("bad"),
            F.sum(((r == _R_OK) & (F.col("src") == F.col("dst"))).cast("long")).alias("loops"),
            F.min(
                F.when(
                    r > 0,
                    F.struct(
                        "_file",
                        "_row",
                        "reason",
                        "_col",
                        F.col("src").cast("string").alias("s"),
                        F.col("dst").cast("string").alias("d"),
                        F.col("weight").alias("w"),
                    ),
                )
            ).alias("first_bad"),
        ).collect()[0]
    except Exception as exc:
        if _is_read_error(exc):
            raise _read_failure(paths, exc) from exc
        raise
    good, bad = int(stats["good"] or 0), int(stats["bad"] or 0)
    first_msg = None
    if bad:
        fb = stats["first_bad"]
        what = _row_problem(int(fb["reason"]), str(fb["w"]))
        first_msg = (
            f"{_display_file(fb['_file'])}: row {int(fb['_row']) + 1}, column {fb['_col']!r}: {what} "
            f"(src={fb['s']!r}, dst={fb['d']!r}, weight={fb['w']!r})"
        )
        if bad_lines == "fail":
            raise InputError(
                f"{first_msg} ({bad} bad row{'s' if bad != 1 else ''} in total; pass bad_lines='skip' (--bad-lines skip) to drop them)"
            )
    if good == 0:
        detail = f"; all {bad} rows are bad, the first: {first_msg}" if bad else ""
        raise InputError(f"no edges in {where}: the data have no valid rows{detail}")
    if bad:
        log.warning("skipped %d bad row%s in %s; the first: %s", bad, "s" if bad != 1 else "", where, first_msg)
    log.info("read %s edge rows from %s", f"{good:,}", where)
    if counts is not None:
        counts.update(rows=good, self_loops=int(stats["loops"] or 0))
    # A plan of its own: without the metadata columns (row indexes cost a little per row).
    edges = spark.read.parquet(*paths).select(*edge_cols).where(r == _R_OK).select("src", "dst", "weight")
    return edges, (bad if bad_lines == "skip" else 0)


# -------------------------------------------------------------------------- public


def _input_files(spark: SparkSession, paths: list[str]) -> list[str]:
    """The files a reader of ``paths`` takes, as Spark lists them (URIs)."""
    try:
        return spark.read.text(paths).inputFiles()
    except Exception as exc:
        if _is_read_error(exc):
            raise _read_failure(paths, exc) from exc
        raise


def _check_edge_list_files(paths: list[str], files: Sequence[str]) -> None:
    """Refuse files a reader of ``paths`` would take for edges though they are none, in
    any one folder: a ``README.md`` (:func:`no_edge_list_files`), or a table of the nodes
    beside the edge list (:func:`node_tables_beside_edges`, a dataset's folder given
    whole)."""
    stray = no_edge_list_files(files)
    if stray:
        shown = ", ".join(_display_file(f) for f in stray[:3]) + (", ..." if len(stray) > 3 else "")
        raise InputError(f"{_describe(paths)} holds files that are no edge list ({shown}), which would be read as "
                         "edges: move them out of the folder, or give the edge files themselves")
    folders: dict[str, list[str]] = {}
    for f in files:
        folders.setdefault(f.rsplit("/", 1)[0], []).append(f)
    for in_one in folders.values():
        beside = node_tables_beside_edges(in_one)
        if beside:
            edges, others = beside
            shown = ", ".join(_base_name(f) for f in others[:3]) + (", ..." if len(others) > 3 else "")
            raise InputError(f"{_describe(paths)} holds {_base_name(edges)} and other files ({shown}), which would "
                             f"be read as edges too: give the edge list itself, {_display_file(edges)}")


def _detect_format(
    spark: SparkSession, paths: list[str], comment: str | None, files: list[str] | None = None
) -> tuple[str, list[str] | None]:
    """Format for ``fmt="auto"`` and, for text, the first data lines (:func:`_head_lines`) if
    read; ``files``, the inputs' files if Spark has listed them already."""
    exts = {_EXTENSIONS.get(_extension(p)) for p in paths}
    if len(exts) == 1 and None not in exts:
        return exts.pop(), None  # type: ignore[return-value]
    if files is None:
        files = _input_files(spark, paths)
    parquet = [f for f in files if _EXTENSIONS.get(_extension(f)) == "parquet"]
    text = [f for f in files if _EXTENSIONS.get(_extension(f)) not in (None, "parquet")]
    if parquet and text:
        raise InputError(
            f"{_describe(paths)} mixes Parquet and text files (e.g. {_display_file(parquet[0])} and "
            f"{_display_file(text[0])}): give the files of one format at a time"
        )
    if files and len(parquet) == len(files):
        return "parquet", None
    head = _head_lines(spark, paths, comment)
    if not head:
        return "txt", None
    first = head[0]
    if first.startswith("PAR1"):
        return "parquet", None
    if "\t" in first:
        return "tsv", head
    if "," in first:
        return "csv", head
    return "txt", head


def check_local_head(
    path: str,
    fmt: str = "auto",
    *,
    sep: str | None = None,
    header: bool | None = None,
    src_col: str | int | None = None,
    dst_col: str | int | None = None,
    weight_col: str | int | None = None,
    bad_lines: str = "fail",
    comment: str | None = "#",
) -> None:
    """What the first lines of one local text file decide, checked without Spark (the
    jobs call it before Spark starts): the header and the columns named in it, and
    (``bad_lines="fail"``) the field count of its first data lines. The same rules, and
    the same messages, as :func:`read_edges`, which checks every line when it reads.

    ``path`` is a plain path of this machine, or a ``.gz`` or ``.bz2`` file; Parquet
    (by extension or content) is not looked at here.

    Raises
    ------
    InputError, SettingError
        As :func:`read_edges` would for the same file.
    """
    import bz2
    import gzip

    ext = _extension(path)
    fmt = _EXTENSIONS.get(ext, fmt) if fmt == "auto" else fmt
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in _COMPRESSION_SUFFIXES and suffix not in ("gz", "bz2"):
        return  # a codec Python does not read: the read checks it
    opener = {"gz": gzip.open, "bz2": bz2.open}.get(suffix, open)
    comment = comment or None
    head: _Head = _Head()
    numbers: list[int] = []  # each head line's line number
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as fh:
            for number in range(1, _HEAD_SCAN_LINES + 1):
                line = fh.readline(_HEAD_LINE_CHARS + 1)
                if not line:
                    break
                if len(line) > _HEAD_LINE_CHARS:
                    return  # not a line of an edge list: the read names it
                text = line.strip(_STRIP)
                if number == 1 and text.startswith("PAR1"):
                    return  # Parquet without its extension
                if not text or (comment and text.startswith(comment)):
                    continue
                head.append(line.rstrip("\r\n"))
                numbers.append(number)
                if len(head) == _HEAD_LINES:
                    break
    except (OSError, EOFError, UnicodeError):
        return  # the read names what is wrong with the file
    if not head or fmt == "parquet":
        return
    if fmt == "auto":
        fmt = "tsv" if "\t" in head[0] else "csv" if "," in head[0] else "txt"
    head.file = path
    layout = _text_layout([path], fmt, sep, header, src_col, dst_col, weight_col, comment, head, announce=False)
    if bad_lines != "fail":
        return
    # Every first data line of the wrong field count: the layout is wrong, not the lines
    # (one bad line among good ones is left to the read, which counts them all).
    lines = [(number, line) for number, line in zip(numbers, head)
             if layout.header is None or line.strip(_line_strip_chars(layout.sep)) != layout.header]
    counts = [len(_split_line(line, layout.sep)) for _, line in lines]
    if lines and all(nf < layout.min_fields or (layout.max_fields is not None and nf > layout.max_fields)
                     for nf in counts):
        (number, line), nf = lines[0], counts[0]
        shown = "the first line is" if len(lines) == 1 else f"the first {len(lines)} lines are"
        hint = _layout_hint(layout, (src_col, dst_col, weight_col), True)
        raise InputError(f"{path}:{number}: {_text_reason(_R_FIELDS, nf, line, layout)} (line {number}: "
                         f"{_shorten(line)}) ({shown} bad, {hint})")


_COLUMN_FLAGS = {"src_col": "--src-col", "dst_col": "--dst-col", "weight_col": "--weight-col"}


def check_layout(
    *,
    sep: str | None = None,
    header: bool | None = None,
    src_col: str | int | None = None,
    dst_col: str | int | None = None,
    weight_col: str | int | None = None,
) -> None:
    """Refuse layout options that no file could satisfy, before anything is read: the
    rules :func:`read_edges` applies first (the jobs call it before Spark starts).

    Raises
    ------
    SettingError
        For a bad value, a column given by name with ``header=False``, or two column
        options naming the same column.
    """
    if header is not None and not isinstance(header, bool):
        raise SettingError(f"header must be True, False or None; got {header!r}")
    if sep is not None and (not isinstance(sep, str) or sep == ""):
        raise SettingError(f"sep must be a non-empty string; got {sep!r}")
    cols = {"src_col": src_col, "dst_col": dst_col, "weight_col": weight_col}
    given = [k for k, v in cols.items() if v is not None]
    named = [k for k in given if isinstance(cols[k], str)]
    if header is False and named:
        raise SettingError(", ".join(f"{k} ({_COLUMN_FLAGS[k]}) {cols[k]!r}" for k in named)
                           + " names a column, which needs a header line: pass header=True (--header yes, "
                           "or drop --header no), or give 0-based indices")
    for i, a in enumerate(given):
        for b in given[i + 1:]:
            if cols[a] == cols[b]:
                raise SettingError(f"{a} and {b} ({_COLUMN_FLAGS[a]}, {_COLUMN_FLAGS[b]}) name the same "
                                   f"column ({cols[a]!r})")


def read_edges(
    spark: SparkSession,
    path: str | list[str],
    fmt: str = "auto",
    *,
    sep: str | None = None,
    header: bool | None = None,
    src_col: str | int | None = None,
    dst_col: str | int | None = None,
    weight_col: str | int | None = None,
    bad_lines: str = "fail",
    comment: str | None = "#",
    counts: dict[str, int] | None = None,
) -> tuple[DataFrame, int]:
    """Read and validate a raw edge list.

    Every line (row) is checked in one distributed pass before the function returns;
    the DataFrame returned is a lazy pipeline over the files that yields the valid
    edges only.

    Parameters
    ----------
    spark : SparkSession
        Session to read with (classic or Spark Connect).
    path : str or list of str
        A file, a directory of part files, a glob, or a list of them. Text files may be
        compressed (``.gz``, ``.bz2`` ...).
    fmt : {"auto", "tsv", "csv", "txt", "parquet"}, default "auto"
        ``"tsv"``: tab-separated; ``"csv"``: comma-separated; ``"txt"``: fields
        separated by runs of whitespace; ``"parquet"``. ``"auto"`` goes by the extension
        of ``path`` (``.tsv``, ``.csv``, ``.txt``, ``.parquet``; a compression suffix is
        ignored); otherwise (a directory, ``.edges``, no extension) a directory of
        ``.parquet`` files or a file starting with the Parquet magic is Parquet, and for
        text the separator is sniffed from the first data line: a tab makes it TSV, a
        comma CSV, anything else whitespace-separated.
    sep : str, optional
        Field separator for text, overriding the format's (``" "`` or ``r"\\s+"`` mean
        runs of whitespace). Ignored for Parquet.
    header : bool, optional
        Whether the first data line of a text input is a header. ``None`` detects it:
        the first non-blank, non-comment line is a header when a field is a usual column
        name (``src``, ``dst``, ``source``, ``target``, ``from``, ``to``, ``weight`` ...)
        or its weight field (the third) is not a number. With a header, every line equal
        to it is skipped (part files that each start with the header). Ignored for
        Parquet.
    src_col, dst_col, weight_col : str or int, optional
        Columns holding the edge, by header name or 0-based index. Defaults for text:
        the first two fields, and the third as weight when a line has one (with a
        header: the column named ``weight``, or else the third column). For Parquet:
        the columns named ``src``, ``dst`` (and ``weight``) if present, otherwise the
        first two (and the third as weight). When you pick ``src_col``/``dst_col``
        yourself, name ``weight_col`` too unless a header column is called ``weight``;
        otherwise every weight is 1.0.
    bad_lines : {"fail", "skip"}, default "fail"
        ``"fail"`` raises :class:`InputError` for the first bad line; ``"skip"`` drops
        bad lines, logs a warning with their number and the first one, and returns
        their number.
    comment : str or None, default "#"
        Lines starting with this (after leading whitespace) are ignored; ``None`` or
        ``""`` disables comments. Blank lines are always ignored.
    counts : dict, optional
        Receives ``rows``, the number of valid edge lines (rows), and ``self_loops``, how
        many of them are self-loops, which the validating pass counts anyway.

    Returns
    -------
    edges : DataFrame
        Columns ``src``, ``dst`` (strings for text, the column type for Parquet) and
        ``weight`` (double, 1.0 when the input has none).
    bad_lines : int
        Number of bad lines (rows) skipped; 0 under ``"fail"``.

    Raises
    ------
    InputError
        For a missing or unreadable path, an input without edges, Parquet and text files
        mixed in one input (``fmt="auto"``), a folder holding files that are no edge
        list (``README.md``) or a table of the nodes beside the edge list (``edges.tsv``
        and ``labels.tsv``, a dataset's folder), a column that does not exist or has the
        wrong type, or (policy ``"fail"``) a bad line: wrong number of
        fields, empty id, weight not a number, NaN, infinite or negative. The message
        names the file and line (Parquet: file, row and column), quotes the line and
        gives the total number of bad lines.
    SettingError
        For an invalid option value (a ``ValueError``).
    """
    check_choice("fmt", fmt, FORMATS)
    check_choice("bad_lines", bad_lines, BAD_LINE_POLICIES)
    if comment is not None and not isinstance(comment, str):
        raise SettingError(f"comment must be a string or None; got {comment!r}")
    check_layout(sep=sep, header=header, src_col=src_col, dst_col=dst_col, weight_col=weight_col)
    paths = _as_paths(path)
    comment = comment or None

    files = None
    listed = [p for p in paths if _EXTENSIONS.get(_extension(p)) is None]  # a folder, a glob, a bare name
    if listed:
        # Each such path's files on their own (files named one by one are the user's
        # choice); one path's listing serves the format's detection too.
        found = {p: _input_files(spark, [p]) for p in listed}
        for p, its in found.items():
            _check_edge_list_files([p], its)
        if len(listed) == len(paths):
            files = [f for its in found.values() for f in its]
    head: list[str] | None = None
    if fmt == "auto":
        fmt, head = _detect_format(spark, paths, comment, files)
    if fmt == "parquet":
        return _read_parquet(spark, paths, src_col, dst_col, weight_col, bad_lines, counts)
    return _read_text(
        spark, paths, fmt, sep, header, src_col, dst_col, weight_col, bad_lines, comment, head, counts
    )
