"""Reading edge lists: formats, headers and comments, validation messages, canonical graphs."""
from __future__ import annotations

import logging
import math
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sepne_spark.errors import UserError
from sepne_spark.graph import Graph, count_edges, incident_ends, load_graph, prepare_graph, rows_of
from sepne_spark.reading import InputError, read_edges
from tests.helpers import physical_plan


def write(tmp_path: Path, name: str, text: str, newline: str = "\n") -> str:
    """Write ``text`` to ``tmp_path/name`` (with the given line ending); return the path."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return str(path)


def local_df(spark: SparkSession, rows: list[tuple], schema: str | T.StructType) -> DataFrame:
    """A small DataFrame held in the plan (built through pandas, so reading it runs no job)."""
    names = [part.split()[0] for part in schema.split(",")] if isinstance(schema, str) else schema.names
    frame = pd.DataFrame([tuple(r) for r in rows], columns=names)
    return spark.createDataFrame(frame, schema)


def edges_df(spark: SparkSession, rows: list[tuple], id_type: str = "string") -> DataFrame:
    return local_df(spark, sorted(rows), f"src {id_type}, dst {id_type}, weight double")


def sorted_df(df: DataFrame) -> DataFrame:
    """``df`` collected (one Spark job), sorted on the driver, as a local DataFrame.

    Sorting on the driver keeps the comparisons cheap: chispa's ``ignore_row_order``
    would run a distributed sort of each side.
    """
    return local_df(df.sparkSession, sorted(df.collect()), df.schema)


def assert_edges(actual: DataFrame, expected: DataFrame) -> None:
    assert_df_equality(sorted_df(actual), expected, ignore_nullable=True)


def bad_message(spark: SparkSession, path: str, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        read_edges(spark, path, **kwargs)
    return str(info.value)


# ----------------------------------------------------------------------- text formats


def test_tsv_three_fields_ids_kept_as_written(spark, tmp_path):
    path = write(tmp_path, "g.tsv", "# a comment\n007\t1\t2.5\n a b \t c\t1e-3\n\n   \nx\ty\t0\n")
    edges, bad = read_edges(spark, path)
    assert bad == 0
    assert_edges(edges, edges_df(spark, [("007", "1", 2.5), ("a b", "c", 0.001), ("x", "y", 0.0)]))


def test_a_connect_client_before_spark_4_reads_text_through_one_temporary_view(spark, tmp_path, monkeypatch):
    """A Spark Connect 3.5 client reads the lines through a temporary view
    (``reading.text_lines``), so that the server analyses the read once and a cached
    table built on it is found by later queries (checked on such a server by
    tests/test_connect.py); exercised here on the classic session, as that client would."""
    from sepne_spark import session

    monkeypatch.setattr(session, "connect_before_4", lambda s: True)
    path = write(tmp_path, "g.tsv", "1\t2\n2\t3\t0.5\n")
    edges, _ = read_edges(spark, path)
    assert_edges(edges, edges_df(spark, [("1", "2", 1.0), ("2", "3", 0.5)]))
    views = [r["viewName"] for r in spark.sql("SHOW VIEWS LIKE 'sepne_text_*'").collect()]
    assert len(views) == 1 and re.fullmatch(r"sepne_text_[0-9a-f]{12}", views[0]), views
    spark.catalog.dropTempView(views[0])


def test_txt_whitespace_runs_two_or_three_fields(spark, tmp_path):
    path = write(tmp_path, "g.dat", "1 2\n2   3\t4.5\n\t3 \t 1  \n")
    edges, _ = read_edges(spark, path, fmt="txt")
    assert_edges(edges, edges_df(spark, [("1", "2", 1.0), ("2", "3", 4.5), ("3", "1", 1.0)]))


@pytest.mark.parametrize("name, text, options, said", [
    # a column named in a file without a header
    ("e.tsv", "163\t402\n402\t7\n", {"src_col": "src", "dst_col": "dst"},
     "no column 'src' in the header ['163', '402']: that first line looks like data"),
    ("e.tsv.gz", "163\t402\n402\t7\n", {"src_col": "src", "dst_col": "dst"}, "no column 'src' in the header"),
    ("e.csv", "source,target\n1,2\n", {"header": True, "src_col": "from"}, "no column 'from' in the header"),
    # the wrong separator, and a weight column the lines do not have
    ("e.tsv", "# a comment\n\n1\t2\n3\t4\n", {"sep": ","}, "e.tsv:3: expected 2 or 3 fields, found 1"),
    ("e.tsv", "1\t2\n3\t4\n", {"src_col": 0, "dst_col": 1, "weight_col": 2},
     "e.tsv:1: expected at least 3 fields, found 2"),
])
def test_a_local_files_first_lines_are_checked_before_spark_as_the_read_checks_them(
        spark, tmp_path, name, text, options, said):
    """check_local_head, which the jobs run before Spark starts, refuses what the read
    refuses for the same file and options, with the read's words."""
    import gzip

    from sepne_spark.reading import check_local_head

    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(InputError, match=re.escape(said)):
        check_local_head(str(path), **options)
    with pytest.raises(InputError, match=re.escape(said)):
        read_edges(spark, str(path), **options)


def test_a_bad_line_among_good_ones_is_left_to_the_read(spark, tmp_path):
    """One bad line below good ones is the read's to count and name (with how many there
    are in all); so is a file the read skips bad lines of."""
    from sepne_spark.reading import check_local_head

    path = tmp_path / "e.tsv"
    path.write_text("1\t2\n3\n4\t5\n")
    check_local_head(str(path))
    with pytest.raises(InputError, match=r"e.tsv:2: expected 2 or 3 fields, found 1 .*1 bad line in total"):
        read_edges(spark, str(path))
    (tmp_path / "f.tsv").write_text("1\n3\n")
    check_local_head(str(tmp_path / "f.tsv"), bad_lines="skip")
    with pytest.raises(InputError, match=r"f.tsv:1: expected 2 or 3 fields, found 1"):
        check_local_head(str(tmp_path / "f.tsv"))
    # A codec Python does not read, and a line too long to be an edge: left to the read.
    (tmp_path / "g.tsv.zst").write_bytes(b"\x28\xb5\x2f\xfd" + bytes(range(256)) * 4)
    check_local_head(str(tmp_path / "g.tsv.zst"))
    (tmp_path / "h.tsv").write_text("x" * (1 << 20) + "y\n")
    check_local_head(str(tmp_path / "h.tsv"))


def test_csv_header_columns_by_name(spark, tmp_path):
    path = write(tmp_path, "g.csv", "w,to,from,note\n2,b,a,x\n3,c,b,y\n")
    edges, _ = read_edges(spark, path, src_col="from", dst_col="to", weight_col="w")
    assert_edges(edges, edges_df(spark, [("a", "b", 2.0), ("b", "c", 3.0)]))


def test_csv_quoted_fields_and_detected_header(spark, tmp_path):
    path = write(tmp_path, "g.csv", '"source","target","weight"\n"a", "b",1.5\nb,c,2\n')
    edges, _ = read_edges(spark, path)
    assert_edges(edges, edges_df(spark, [("a", "b", 1.5), ("b", "c", 2.0)]))


def test_columns_by_index_without_header(spark, tmp_path):
    path = write(tmp_path, "g.tsv", "9\ta\tb\t0.5\n8\tb\tc\t2\n")
    edges, _ = read_edges(spark, path, src_col=2, dst_col=1, weight_col=3)
    assert_edges(edges, edges_df(spark, [("b", "a", 0.5), ("c", "b", 2.0)]))


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("g.edges", "a\tb\t2\nb\tc\n", [("a", "b", 2.0), ("b", "c", 1.0)]),  # tab sniffed
        ("g.dat", "a,b,2\nb,c\n", [("a", "b", 2.0), ("b", "c", 1.0)]),  # comma sniffed
        ("g", "# header comment\na b  3\n", [("a", "b", 3.0)]),  # whitespace
    ],
)
def test_auto_format_sniffs_separator(spark, tmp_path, name, text, expected):
    edges, _ = read_edges(spark, write(tmp_path, name, text))
    assert_edges(edges, edges_df(spark, expected))


@pytest.mark.parametrize(
    "text, header, expected",
    [
        ("src\tdst\na\tb\n", None, [("a", "b", 1.0)]),  # usual column names
        ("# comment first\nFrom\tTo\tWeight\na\tb\t3\n", None, [("a", "b", 3.0)]),
        ("a\tb\tlabel\n1\t2\t3\n", None, [("1", "2", 3.0)]),  # non-numeric third field
        ("src\tdst\na\tb\n", False, [("src", "dst", 1.0), ("a", "b", 1.0)]),
        ("p\tq\n1\t2\n", True, [("1", "2", 1.0)]),
        ("p\tq\n1\t2\n", False, [("p", "q", 1.0), ("1", "2", 1.0)]),
        # word ids over numeric ids: a header (only numeric lines below it count)
        ("paper\tcited\n1\t2\n3\t4\n", None, [("1", "2", 1.0), ("3", "4", 1.0)]),
        ("# c\n\npaper\tcited\n1\t2\n", None, [("1", "2", 1.0)]),
        # ... but not when an id below is a word too, or only one of the first ids is
        ("p\tq\n1\t2\nr\t3\n", None, [("p", "q", 1.0), ("1", "2", 1.0), ("r", "3", 1.0)]),
        ("p\t7\n1\t2\n", None, [("p", "7", 1.0), ("1", "2", 1.0)]),
        ("p\tq\n", None, [("p", "q", 1.0)]),  # nothing below to compare with
    ],
)
def test_header_detection(spark, tmp_path, text, header, expected):
    edges, _ = read_edges(spark, write(tmp_path, "g.tsv", text), header=header)
    assert_edges(edges, edges_df(spark, expected))


@pytest.mark.parametrize("name, text", [("g.csv", "paper,cited\n1,2\n"), ("g.txt", "paper cited\n1 2\n")])
def test_word_ids_over_numbers_are_a_header_and_the_log_says_so(spark, tmp_path, caplog, name, text):
    with caplog.at_level(logging.INFO, logger="sepne_spark.reading"):
        edges, _ = read_edges(spark, write(tmp_path, name, text))
    assert_edges(edges, edges_df(spark, [("1", "2", 1.0)]))
    assert (f"read the first line of {tmp_path / name}, 'paper{text[5]}cited', as the header of every file: its node "
            "ids are words and those on the next line are numbers") in caplog.text
    # a folder: the file the line came from is named
    folder = tmp_path / f"parts-{name}"
    folder.mkdir()
    (folder / f"part-0.{name[-3:]}").write_text(text)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="sepne_spark.reading"):
        read_edges(spark, str(folder))
    assert f"read the first line of {folder / ('part-0.' + name[-3:])}, " in caplog.text
    # columns picked by index: the ids looked at are those columns
    edges, _ = read_edges(spark, write(tmp_path, "h.tsv", "x\tpaper\tcited\n9\t1\t2\n"), src_col=1, dst_col=2)
    assert_edges(edges, edges_df(spark, [("1", "2", 1.0)]))


def test_header_repeated_in_part_files_and_comment_option(spark, tmp_path):
    write(tmp_path, "parts/part-0.csv", "% made by a tool\nsrc,dst\na,b\n")
    write(tmp_path, "parts/part-1.csv", "src,dst\nb,c\n\n")
    edges, _ = read_edges(spark, str(tmp_path / "parts"), comment="%")
    assert_edges(edges, edges_df(spark, [("a", "b", 1.0), ("b", "c", 1.0)]))


# ---------------------------------------------------------------------------- parquet


def test_parquet_long_ids_stay_long_and_columns_by_name(spark, tmp_path):
    path = str(tmp_path / "g.parquet")
    table = pa.table(
        {
            "weight": pa.array([2, 3], pa.int32()),
            "dst": pa.array([2, 3], pa.int32()),  # int and long ids: both read as long
            "src": pa.array([1, 2**40], pa.int64()),
        }
    )
    pq.write_table(table, path)
    edges, _ = read_edges(spark, path)
    assert edges.schema["src"].dataType == T.LongType()
    assert edges.schema["weight"].dataType == T.DoubleType()
    assert_edges(edges, edges_df(spark, [(1, 2, 2.0), (2**40, 3, 3.0)], "long"))


def test_parquet_directory_positional_columns_and_index_selection(spark, tmp_path):
    folder = tmp_path / "pq"
    folder.mkdir()
    pq.write_table(pa.table({"a": ["x", "y"], "b": ["y", "z"], "c": [1.5, 2.5]}), str(folder / "part-0.parquet"))
    edges, _ = read_edges(spark, str(folder))  # directory of Parquet files, detected
    assert_edges(edges, edges_df(spark, [("x", "y", 1.5), ("y", "z", 2.5)]))
    edges, _ = read_edges(spark, str(folder), "parquet", src_col=1, dst_col="A")
    assert_edges(edges, edges_df(spark, [("y", "x", 1.0), ("z", "y", 1.0)]))


@pytest.mark.parametrize(
    "column, values, row, words",
    [
        ("src", [1, 2, None, 4], 3, "null or empty node id"),
        ("weight", [1.0, -2.0, 1.0, 1.0], 2, "negative"),
        ("weight", [1.0, 1.0, math.inf, math.nan], 3, "NaN or infinite"),
        ("weight", [1.0, None, 1.0, 1.0], 2, "null weight"),
        ("weight", [1.0, 1.0, 1e101, 1.0], 3, "weight 1e+101 is over 1e+100, where sums of weights may overflow"),
    ],
)
def test_parquet_bad_rows_name_file_row_and_column(spark, tmp_path, column, values, row, words):
    data = {"src": [1, 2, 3, 4], "dst": [2, 3, 4, 5], "weight": [1.0, 1.0, 1.0, 1.0]}
    data[column] = values
    path = str(tmp_path / "bad_rows.parquet")
    pq.write_table(pa.table(data), path)
    msg = bad_message(spark, path)
    assert "bad_rows.parquet" in msg and f"row {row}," in msg and f"column {column!r}" in msg and words in msg
    assert re.search(r"\d bad rows? in total", msg)


def test_parquet_skip_policy(spark, tmp_path):
    path = str(tmp_path / "skip.parquet")
    pq.write_table(pa.table({"src": ["a", "", "c", None], "dst": ["b", "c", "d", "e"]}), path)
    edges, skipped = read_edges(spark, path, bad_lines="skip")
    assert skipped == 2
    assert_edges(edges, edges_df(spark, [("a", "b", 1.0), ("c", "d", 1.0)]))


def test_parquet_wrong_column_type(spark, tmp_path):
    path = str(tmp_path / "g.parquet")
    pq.write_table(pa.table({"src": [1.5], "dst": [2.5]}), path)
    msg = bad_message(spark, path)
    assert "g.parquet" in msg and "'src'" in msg and "double" in msg
    assert msg.endswith("found double: is it the id column? choose the column with src_col (--src-col)")
    # Whole decimals: the ways to read them are named
    import decimal

    whole = str(tmp_path / "d.parquet")
    pq.write_table(pa.table({"src": pa.array([decimal.Decimal(1)], pa.decimal128(10, 0)),
                             "dst": pa.array([decimal.Decimal(2)], pa.decimal128(10, 0))}), whole)
    msg = bad_message(spark, whole)
    assert "column 'src': node ids must be strings or integers, found decimal(10,0): cast the column to bigint or " \
           "string where the file is written, or read the file with Spark and pass the DataFrame to fit" in msg
    # A third column of text read as the weight by position: the fix named is the columns
    other = str(tmp_path / "h.parquet")
    pq.write_table(pa.table({"from_node": [1], "to_node": [2], "kind": ["cites"]}), other)
    msg = bad_message(spark, other)
    assert "the third, 'kind', is string: give src_col='from_node', dst_col='to_node' (--src-col from_node " \
           "--dst-col to_node) for weights of 1" in msg
    assert read_edges(spark, other, src_col="from_node", dst_col="to_node")[0].count() == 1


# ------------------------------------------------------------------ bad text lines


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("a\tb\n# c\n\nc\td\te\tf\n", 4, "expected 2 or 3 fields, found 4"),
        ("a\tb\tx\n1\t2\t3\n4\n", 3, "expected 3 fields like the header, found 1"),
        ("a\tb\t1\nc\td\tone\n", 2, "weight 'one' is not a number"),
        ("a\tb\t1\n\nc\td\t-0.5\n", 3, "weight '-0.5' is negative"),
        ("a\tb\t1\nc\td\t-Infinity\nc\td\tNaN\n", 2, "NaN or infinite"),
        ("a\tb\t1\nc\td\t1e999\n", 2, "NaN or infinite"),
        ("a\tb\t1\nc\td\t1e308\n", 2, "weight '1e308' is over 1e+100, where sums of weights may overflow"),
        ("a\tb\t1\n\tb\t1\n", 2, "empty node id"),
    ],
)
def test_bad_line_message_names_file_and_line(spark, tmp_path, text, line, words):
    path = write(tmp_path, "edges.tsv", text)
    msg = bad_message(spark, path)
    assert f"edges.tsv:{line}:" in msg and f"line {line}:" in msg
    assert words in msg
    assert re.search(r"\d bad lines? in total", msg)


def test_every_line_bad_points_at_the_separator(spark, tmp_path):
    path = write(tmp_path, "semi.txt", "a;b\nb;c\nc;d\n")
    msg = bad_message(spark, path)
    assert "semi.txt:1:" in msg and "found 1 (line 1: 'a;b')" in msg
    assert "all 3 lines are bad, split at whitespace: is the separator right? give it with sep= (--sep)" in msg
    assert "bad_lines='skip'" not in msg  # skipping them all would leave no edge
    # Columns given past the lines' fields: the columns are named first
    msg = bad_message(spark, write(tmp_path, "plain.csv", "1,2\n2,3\n"), fmt="csv", src_col=5, dst_col=1)
    assert "all 2 lines are bad, split at ',': src_col=5, dst_col=1 (--src-col, --dst-col) count fields from 0" in msg
    # ... but not when the lines have the fields and something else is wrong
    msg = bad_message(spark, write(tmp_path, "neg.txt", "1 2 -1\n2 3 -2\n"), fmt="txt", weight_col=2)
    assert "weight '-1' is negative" in msg and "count fields from 0" not in msg


def test_bad_line_count_and_quoted_text(spark, tmp_path):
    long_id = "n" * 500
    path = write(tmp_path, "many.txt", f"a b\nb c d e\n{long_id} x y\nc d\n# ok\nd\n")
    msg = bad_message(spark, path)
    assert "many.txt:2:" in msg and "'b c d e'" in msg and "3 bad lines in total" in msg
    assert long_id not in msg  # the quoted text is shortened


def test_skip_policy_counts_and_warns(spark, tmp_path, caplog):
    path = write(tmp_path, "skip.tsv", "a\tb\t1\nb\tc\tx\nc\td\nd\te\t-1\n")
    with caplog.at_level(logging.WARNING, logger="sepne_spark.reading"):
        edges, bad = read_edges(spark, path, bad_lines="skip")
    assert bad == 2
    assert_edges(edges, edges_df(spark, [("a", "b", 1.0), ("c", "d", 1.0)]))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("2 bad lines" in w and "skip.tsv:2:" in w for w in warnings)


def test_all_lines_bad_is_an_error_even_when_skipping(spark, tmp_path):
    msg = bad_message(spark, write(tmp_path, "bad.tsv", "a\tb\t1\ta\n"), bad_lines="skip")
    assert "no edges" in msg and "bad.tsv:1:" in msg


@pytest.mark.parametrize("text, said", [
    ("", "the input has no data lines"), ("# only a comment\n\n", "the input has no data lines"),
    ("src\tdst\n", "1 line read, none is a valid edge (its first data line, 'src\\tdst', is the header; "
                   "header=False (--header no) reads it as an edge; the others are comments or blank lines)"),
    ("# one edge\na\tb\tc\td\n", "2 lines read, none is a valid edge (its first data line, 'a\\tb\\tc\\td', is the "
                                "header; header=False")])
def test_empty_input(spark, tmp_path, text, said):
    msg = bad_message(spark, write(tmp_path, "empty.tsv", text), header=None)
    assert msg.startswith(f"no edges in {tmp_path / 'empty.tsv'}: {said}"), msg


def test_missing_and_unreadable_paths(spark, tmp_path):
    missing = str(tmp_path / "nowhere.tsv")
    msg = bad_message(spark, missing)
    assert "nowhere.tsv" in msg
    corrupt = write(tmp_path, "corrupt.parquet", "this is not parquet\n")
    msg = bad_message(spark, corrupt)
    assert "corrupt.parquet" in msg
    with pytest.raises(InputError, match="nowhere"):
        read_edges(spark, [write(tmp_path, "ok.tsv", "a\tb\n"), missing])
    with pytest.raises(InputError, match="nowhere"):
        read_edges(spark, missing, "tsv", header=False)
    # A truncated .gz: Spark's error class has no hint, the Java cause says what is wrong.
    import gzip

    whole = gzip.compress("".join(f"{i}\t{i + 1}\n" for i in range(20000)).encode())
    (tmp_path / "cut.tsv.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError, match=r"cut.tsv.gz: .*EOFException: Unexpected end of input stream"):
        read_edges(spark, str(tmp_path / "cut.tsv.gz"))


@pytest.mark.parametrize("fmt", ["auto", "tsv"])
def test_a_dataset_folder_or_a_readme_beside_the_edges_is_refused(spark, tmp_path, fmt):
    """A folder holding the edge list and a table of its nodes (a dataset's folder, given
    whole) or a file that is no edge list: the reader would take every line for an edge."""
    data = tmp_path / "cora"
    data.mkdir()
    write(data, "edges.tsv", "1\t2\n2\t3\n")
    write(data, "labels.tsv", "1\tTheory\n2\tRL\n")
    with pytest.raises(InputError, match=r"cora holds edges.tsv and other files \(labels.tsv\), which would be read "
                                         r"as edges too: give the edge list itself, .*cora/edges.tsv"):
        read_edges(spark, str(data), fmt)
    (data / "labels.tsv").unlink()
    write(data, "README.md", "# the graph\n")
    with pytest.raises(InputError, match=r"holds files that are no edge list \(.*cora/README.md\)"):
        read_edges(spark, str(data) + "/", fmt)
    (data / "README.md").unlink()
    for i in range(2):  # part files beside the edge list: chunks of edges, read with it
        write(data, f"part-0000{i}.tsv", "4\t5\n")
    assert read_edges(spark, str(data), fmt)[0].count() == 4
    # Edge lists whose names start as a node table's but say edge; files named one by one.
    both = tmp_path / "chats"
    both.mkdir()
    write(both, "edges_follow.tsv", "1\t2\n")
    write(both, "group_chat_edges.tsv", "2\t3\n")
    assert read_edges(spark, str(both), fmt)[0].count() == 2
    write(both, "edges", "3\t4\n")
    write(both, "nodes_more", "4\t5\n")
    assert read_edges(spark, [str(both / "edges"), str(both / "nodes_more")], "tsv")[0].count() == 2


def test_input_error_is_a_user_error_and_value_error():
    assert issubclass(InputError, UserError) and issubclass(InputError, ValueError)


def test_invalid_option_values_name_the_choices(spark, tmp_path):
    path = write(tmp_path, "g.tsv", "a\tb\n")
    with pytest.raises(ValueError, match="'auto', 'tsv', 'csv', 'txt', 'parquet'"):
        read_edges(spark, path, fmt="xlsx")
    with pytest.raises(ValueError, match="'fail', 'skip'"):
        read_edges(spark, path, bad_lines="ignore")
    raw = edges_df(spark, [("a", "b", 1.0)])
    with pytest.raises(ValueError, match="'sum', 'max'"):
        prepare_graph(raw, True, duplicates="mean")
    with pytest.raises(ValueError, match="'drop', 'keep'"):
        prepare_graph(raw, True, self_loops="remove")
    with pytest.raises(ValueError, match="header"):
        read_edges(spark, path, header=False, src_col="src")


# -------------------------------------------------------- distributed line numbers


@pytest.fixture
def tiny_splits(spark):
    """Split files into ~200-byte pieces and pack several pieces into one task."""
    keys = {"spark.sql.files.maxPartitionBytes": "200", "spark.sql.files.openCostInBytes": "1"}
    old = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    yield
    for k, v in old.items():
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_line_numbers_across_many_splits(spark, tmp_path, tiny_splits, newline):
    lines = ["# long file", "src\tdst\tweight"] + [f"n{i}\tn{i + 1}\t{i % 7}" for i in range(150)]
    lines[97 - 1] = "n95\tn96\toops"
    lines[140 - 1] = "n138"
    path = write(tmp_path, "big.tsv", "\n".join(lines) + "\n", newline)
    msg = bad_message(spark, path)
    assert "big.tsv:97:" in msg and "'oops' is not a number" in msg and "2 bad lines in total" in msg
    if newline == "\n":
        assert spark.read.text(path).select("_metadata.file_block_start").distinct().count() >= 8
        edges, bad = read_edges(spark, path, bad_lines="skip")
        assert bad == 2
        counts = edges.agg(F.count("*").alias("n"), F.countDistinct("src", "dst").alias("d")).first()
        assert counts["n"] == counts["d"] == 148


def test_first_bad_line_over_files_packed_in_one_task(spark, tmp_path, tiny_splits):
    write(tmp_path, "d/a.tsv", "x\ty\n" * 40)
    write(tmp_path, "d/b.tsv", "x\ty\n" * 3 + "x\n" + "x\ty\n" * 50)
    write(tmp_path, "d/c.tsv", "x\ty\nbad\n")
    msg = bad_message(spark, str(tmp_path / "d"), fmt="tsv")
    assert "b.tsv:4:" in msg and "2 bad lines in total" in msg


# ------------------------------------------------------------------ canonical graphs


RAW = [("a", "b", 1.0), ("b", "a", 2.0), ("a", "b", 4.0), ("c", "d", 1.0), ("e", "e", 3.0), ("c", "c", 1.0)]


@pytest.mark.parametrize(
    "directed, duplicates, expected",
    [
        (True, "sum", [("a", "b", 5.0), ("b", "a", 2.0), ("c", "d", 1.0)]),
        (True, "max", [("a", "b", 4.0), ("b", "a", 2.0), ("c", "d", 1.0)]),
        (False, "sum", [("a", "b", 7.0), ("b", "a", 7.0), ("c", "d", 1.0), ("d", "c", 1.0)]),
        (False, "max", [("a", "b", 4.0), ("b", "a", 4.0), ("c", "d", 1.0), ("d", "c", 1.0)]),
    ],
)
def test_prepare_graph_merges_duplicates(spark, directed, duplicates, expected):
    graph = prepare_graph(edges_df(spark, RAW), directed, duplicates=duplicates)
    assert isinstance(graph, Graph) and graph.directed is directed and graph.bad_lines == 0
    assert_edges(graph.edges, edges_df(spark, expected))
    if duplicates == "sum":  # the vertices do not depend on the merge rule
        vertices = local_df(spark, [(v,) for v in "abcde"], "id string")  # e: only a dropped self-loop
        assert_df_equality(sorted_df(graph.vertices), vertices, ignore_nullable=True)


def test_prepare_graph_keeps_self_loops_once(spark):
    graph = prepare_graph(edges_df(spark, RAW), False, self_loops="keep")
    expected = [("a", "b", 7.0), ("b", "a", 7.0), ("c", "d", 1.0), ("d", "c", 1.0), ("e", "e", 3.0), ("c", "c", 1.0)]
    assert_edges(graph.edges, edges_df(spark, expected))


# Repeated pairs in both orientations, self-loops, edges between two chosen nodes and
# edges with one chosen end: every case of the per-node canonicalisation.
RAW_LOCAL = RAW + [("b", "c", 0.5), ("d", "b", 1.5), ("c", "b", 2.5), ("f", "a", 1.0), ("b", "b", 2.0)]


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("duplicates, self_loops", [("sum", "drop"), ("max", "keep")])
@pytest.mark.parametrize("nodes", [["a", "b", "zz"], ["b", "c", "e", "f"]])
def test_rows_of_equals_the_canonical_rows(spark, directed, duplicates, self_loops, nodes):
    graph = prepare_graph(edges_df(spark, RAW_LOCAL), directed, duplicates=duplicates, self_loops=self_loops)
    ids = local_df(spark, [(v,) for v in nodes], "id string")
    expected = graph.edges.join(ids.withColumnRenamed("id", "src"), "src", "left_semi")
    expected = sorted_df(expected)
    assert_edges(rows_of(graph, ids, broadcast=len(nodes) == 3), expected)
    # Without the input edges the rows come from the canonical edges: the same.
    bare = Graph(edges=graph.edges, vertices=graph.vertices, directed=directed)
    assert_edges(rows_of(bare, ids), expected)


def test_incident_ends_find_nodes_and_in_neighbours(spark):
    graph = prepare_graph(edges_df(spark, RAW_LOCAL), True)
    ids = local_df(spark, [(v,) for v in ["a", "e", "zz"]], "id string")
    got = sorted(tuple(r) for r in incident_ends(graph, ids).collect())
    assert got == sorted([
        ("a", "b", False), ("a", "b", True), ("a", "b", False), ("a", "f", True), ("e", "e", False), ("e", "e", True),
    ])  # zz is not a node; e's only edge is a self-loop, and it is still a node
    with pytest.raises(ValueError, match="raw edges"):
        incident_ends(Graph(edges=graph.edges, vertices=graph.vertices, directed=True), ids)


def test_requested_neighbourhood_reads_the_input_once(spark, tmp_path):
    """With the ids broadcast, the ends and the rows of an undirected graph read the
    input in one scan each (two semi-joins would read it twice)."""
    path = str(tmp_path / "raw")
    edges_df(spark, RAW_LOCAL).write.parquet(path)
    graph = prepare_graph(spark.read.parquet(path), False)
    ids = local_df(spark, [(v,) for v in ["a", "b", "zz"]], "id string")

    def scans(df: DataFrame) -> int:
        return physical_plan(df).count("FileScan parquet")  # ids are local

    assert scans(incident_ends(graph, ids)) == 1 and scans(rows_of(graph, ids)) == 1


def test_prepare_graph_integer_ids_without_weight(spark):
    raw = local_df(spark, [(2, 1), (1, 2), (3, 3)], "src long, dst long")
    graph = prepare_graph(raw, False, bad_lines=4)
    assert graph.bad_lines == 4
    assert_edges(graph.edges, edges_df(spark, [(1, 2, 2.0), (2, 1, 2.0)], "long"))
    assert sorted(r.id for r in graph.vertices.collect()) == [1, 2, 3]


def test_load_graph_end_to_end(spark, tmp_path):
    path = write(tmp_path, "g.tsv", "src\tdst\tweight\n1\t2\t1\n2\t1\t1\n2\t3\t2\n3\t3\t1\n4\t4\t1\n1\t4\tz\n")
    graph = load_graph(spark, path, directed=False, bad_lines="skip", duplicates="max")
    assert graph.bad_lines == 1 and not graph.directed
    assert_edges(graph.edges, edges_df(spark, [("1", "2", 1.0), ("2", "1", 1.0), ("2", "3", 2.0), ("3", "2", 2.0)]))
    assert sorted(r.id for r in graph.vertices.collect()) == ["1", "2", "3", "4"]
    with pytest.raises(ValueError, match="unknown read option"):
        load_graph(spark, path, directed=True, delimiter="\t")


def test_counts_of_dropped_self_loops_and_merged_repeats_match_the_lines(spark, tmp_path):
    """count_edges reports what canonicalising made of the lines (the reader counts the
    lines and self-loops in its validating pass), as a count over the lines says, for
    text and Parquet, directed or not, self-loops dropped or kept."""
    lines = [(1, 2), (2, 1), (1, 2), (2, 3), (3, 3), (3, 3), (4, 4), (3, 4), (4, 3), (5, 1)]
    text = write(tmp_path, "g.tsv", "".join(f"{u}\t{v}\t1\n" for u, v in lines))
    parquet = str(tmp_path / "g.parquet")
    pq.write_table(pa.table({"src": [u for u, _ in lines], "dst": [v for _, v in lines]}), parquet)
    # each format with each direction and each self-loop policy
    for path, directed, self_loops in ((text, False, "drop"), (text, True, "keep"), (parquet, False, "keep"),
                                       (parquet, True, "drop")):
        kept = [(u, v) for u, v in lines if self_loops == "keep" or u != v]
        edges = len({(u, v) if directed else (min(u, v), max(u, v)) for u, v in kept})
        loops = sum(u == v for u, v in lines)
        graph = load_graph(spark, path, directed=directed, self_loops=self_loops)
        rows, merged = count_edges(graph)
        assert rows == graph.edges.count()
        assert merged == {"input_lines": len(lines), "self_loops_dropped": loops if self_loops == "drop" else 0,
                          "repeats_merged": len(kept) - edges, "edges": edges}, (path, directed, self_loops)
    assert count_edges(prepare_graph(edges_df(spark, [("a", "b", 1.0)]), False)) == (2, None)  # no reader's counts


@pytest.mark.unit
def test_layout_that_no_file_could_satisfy_is_refused_before_reading():
    """check_layout holds the reader's first rules: read_edges applies them before it
    looks at a file (here there is no session at all), and the jobs before Spark starts."""
    from sepne_spark.errors import SettingError
    from sepne_spark.reading import check_layout, read_edges

    with pytest.raises(SettingError, match=r"src_col \(--src-col\) 'paper' names a column, which needs a header"):
        read_edges(None, "nowhere.tsv", header=False, src_col="paper")
    with pytest.raises(SettingError, match=r"src_col and weight_col \(--src-col, --weight-col\) name the same column"):
        check_layout(src_col=2, weight_col=2)
    with pytest.raises(SettingError, match="sep must be a non-empty string"):
        check_layout(sep="")
    check_layout(header=True, src_col="paper", dst_col="cited", weight_col=2)  # a file may satisfy these


@pytest.mark.unit
def test_a_column_name_against_a_first_line_of_data_says_it_looks_like_data():
    from sepne_spark.errors import InputError
    from sepne_spark.reading import _column_index

    with pytest.raises(InputError, match=r"no column 'foo' in the header \['163', '402'\]: that first line looks "
                                         r"like data"):
        _column_index("foo", "src_col", ["163", "402"], "e.tsv")
    with pytest.raises(InputError, match=r"no column 'foo' in the header \['a', 'b'\]$"):
        _column_index("foo", "src_col", ["a", "b"], "e.tsv")
