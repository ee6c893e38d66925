"""The mergeSchema gate (checks/gate.py, printed by report/gate.py): verdicts, merged schemas and
the schema without merge, checked against real Spark (the shared session) on small tables written
with pyarrow, plus fast tests without Spark for what Spark only shows as one error (every
conflict, which versions bring each side) and for the JSON and text forms.

Spark facts these tests pin down (pyspark 4.1.4): files are ordered by the Java string order of
their path (UTF-16 code units), not by modification time; without mergeSchema the schema comes
from `_common_metadata`, else `_metadata`, else the first data file; a zero-byte file fails the
mergeSchema read (CANNOT_READ_FILE_FOOTER), unlike the 4.3.0 observation in the reference.
"""

from __future__ import annotations

import decimal
import io
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from schemaguard.checks.gate import GateReport, evaluate_gate
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.lake.discover import crc_size, spark_order_key
from schemaguard.lake.table import read
from schemaguard.model import Schema, StructType, walk
from schemaguard.report.gate import gate_json, gate_text

# ---------------------------------------------------------------------------------------------
# Helpers


def write(path: Path, table: pa.Table, mtime: int | None = None) -> str:
    """Write a Parquet file; `mtime` (seconds) fixes the version order, which is by mtime."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    if mtime is not None:
        os.utime(path, (1_700_000_000 + mtime, 1_700_000_000 + mtime))
    return path.name


def gate(path: Path) -> GateReport:
    return evaluate_gate(read(str(path)))


def version_of(path: Path, rel: str) -> int:
    """The version number holding `rel` (versions are numbered oldest first)."""
    return next(v.number for v in read(str(path)).versions if rel in {f.rel for f in v.files})


def spark_schema(spark: Any, path: Path, merge: bool) -> Schema:
    df = spark.read.option("mergeSchema", "true" if merge else "false").parquet(str(path))
    return schema_from_spark_json(df.schema.json())


def spark_error(action: Any) -> str | None:
    """What Spark raises (with its causes), or None when it succeeds."""
    try:
        action()
    except Exception as e:  # AnalysisException / SparkException: Spark said no
        return " ".join(str(e).split())
    return None


def topmost_missing(full: Schema, part: Schema) -> set[str]:
    """Paths of `full` absent from `part`, only the topmost one of a missing subtree."""
    have = {p.lower() for p, *_ in walk(part)}
    missing = [p for p, *_ in walk(full) if p.lower() not in have]
    return {p for p in missing if not any(p.startswith(q + ".") for q in missing if q != p)}


def without_partitions(schema: Schema, columns: tuple[str, ...]) -> Schema:
    return Schema(tuple(f for f in schema.fields if f.name not in columns))


# ---------------------------------------------------------------------------------------------
# Against real Spark


def test_compatible_additions_merge_like_spark(spark: Any, tmp_path: Path) -> None:
    """(a) Added columns merge; the merged schema, field order included, is Spark's. The first file
    by path leads the order although it is the newest version; the columns the read without merge
    loses are exactly those Spark's non-merged schema lacks."""
    t = tmp_path / "additions"
    s_x = pa.struct([("x", pa.int64())])
    s_xy = pa.struct([("x", pa.int64()), ("y", pa.string())])
    write(t / "part-0.parquet", pa.table({"b": ["p"], "a": [1], "s": pa.array([{"x": 1}], s_x)}), mtime=30)
    write(t / "part-1.parquet", pa.table({"a": [2], "b": ["q"], "c": [1.5],
                                          "s": pa.array([{"x": 2, "y": "y"}], s_xy)}), mtime=10)
    required = pa.schema([pa.field("a", pa.int64()), pa.field("d", pa.string(), nullable=False)])
    write(t / "part-2.parquet", pa.table({"a": [3], "d": ["r"]}, schema=required), mtime=20)

    report = gate(t)
    merged_by_spark = spark_schema(spark, t, merge=True)
    rows = spark.read.option("mergeSchema", "true").parquet(str(t)).collect()
    plain_by_spark = spark_schema(spark, t, merge=False)

    assert report.merge_safe and report.exit_code == 0 and not report.conflicts
    assert report.merged == merged_by_spark
    assert [f.name for f in merged_by_spark.fields] == ["b", "a", "s", "c", "d"]
    assert report.merge_order == tuple(version_of(t, f"part-{i}.parquet") for i in range(3))
    assert len(rows) == 3
    w = report.without_merge
    assert w.from_file == "part-0.parquet" and w.source == "data file"
    assert w.schema == plain_by_spark
    assert {c.path for c in w.lost_columns} == topmost_missing(merged_by_spark, plain_by_spark) \
        == {"c", "d", "s.y"}
    assert not w.relabelled_columns and not report.read_failures


def test_int32_int64_conflict(spark: Any, tmp_path: Path) -> None:
    """(b) int32 vs int64: Spark's mergeSchema read raises; the conflict names the column and the
    version on each side. Without merge, the int64 files fail to read as int (int32 sorts first)."""
    t = tmp_path / "ints"
    write(t / "part-0.parquet", pa.table({"id": [1], "a": pa.array([1], pa.int32())}), mtime=1)
    write(t / "part-1.parquet", pa.table({"id": [2], "a": pa.array([2], pa.int64())}), mtime=2)

    report = gate(t)
    merge_error = spark_error(lambda: spark.read.option("mergeSchema", "true").parquet(str(t)).schema)
    read_error = spark_error(lambda: spark.read.parquet(str(t)).collect())

    assert merge_error is not None and "CANNOT_MERGE" in merge_error
    assert not report.merge_safe and report.exit_code == 1 and report.merged is None
    (c,) = report.conflicts
    v_int32, v_int64 = version_of(t, "part-0.parquet"), version_of(t, "part-1.parquet")
    assert c.path == "a" and (c.left.type, c.right.type) == ("int32", "int64")
    assert (c.left.versions, c.right.versions) == ((v_int32,), (v_int64,))
    assert c.left.files == ("part-0.parquet",) and c.right.files == ("part-1.parquet",)
    doc = gate_json(report)["conflicts"][0]
    assert doc["versions"] == [v_int32, v_int64] and set(doc["files"]) == {"part-0.parquet", "part-1.parquet"}

    assert read_error is not None and "PARQUET_COLUMN_DATA_TYPE_MISMATCH" in read_error
    failures = [(f.schema, f.version, f.path) for f in report.read_failures]
    assert failures == [("without_merge", v_int64, "a")]
    (relabelled,) = report.without_merge.relabelled_columns
    assert relabelled.path == "a" and relabelled.type == "int32"
    assert {(v.version, v.type) for v in relabelled.versions} == {(v_int32, "int32"), (v_int64, "int64")}


def test_decimal_precision_merges_and_first_file_narrows(spark: Any, tmp_path: Path) -> None:
    """(c) decimal(10,2) first, decimal(12,2) after: Spark's merge widens to decimal(12,2) and reads
    every file; without merge the schema says decimal(10,2) and the vectorized reader refuses the
    decimal(12,2) files."""
    t = tmp_path / "decimals"
    values = [decimal.Decimal("12345678.90")]
    write(t / "part-0.parquet", pa.table({"d": pa.array(values, pa.decimal128(10, 2))}), mtime=1)
    write(t / "part-1.parquet", pa.table({"d": pa.array(values, pa.decimal128(12, 2))}), mtime=2)

    report = gate(t)
    merged_by_spark = spark_schema(spark, t, merge=True)
    rows = spark.read.option("mergeSchema", "true").parquet(str(t)).collect()
    read_error = spark_error(lambda: spark.read.parquet(str(t)).collect())

    assert report.merge_safe and report.merged == merged_by_spark
    assert [r.d for r in rows] == values * 2
    assert read_error is not None and "PARQUET_COLUMN_DATA_TYPE_MISMATCH" in read_error
    v12 = version_of(t, "part-1.parquet")
    assert [(f.schema, f.version, f.path) for f in report.read_failures] == [("without_merge", v12, "d")]
    assert [c.path for c in report.without_merge.relabelled_columns] == ["d"]


def test_schema_without_merge_comes_from_the_first_file_in_javas_order(spark: Any, tmp_path: Path) -> None:
    """(d) Spark sorts paths as Java strings (UTF-16 code units): a name outside the BMP sorts before
    U+FF21 although Python's code-point order puts it after. In a partitioned table the order is by
    path (k=1 < k=10 < k=2), not by modification time."""
    t = tmp_path / "names"
    write(t / "\uff21.parquet", pa.table({"id": [1], "from_fullwidth": ["f"]}))
    write(t / "\U0001f600.parquet", pa.table({"id": [2], "from_emoji": ["e"]}))
    report = gate(t)
    assert sorted(["\uff21.parquet", "\U0001f600.parquet"])[0] == "\uff21.parquet"  # Python's order
    assert report.without_merge.from_file == "\U0001f600.parquet"
    assert report.without_merge.schema == spark_schema(spark, t, merge=False)
    assert [c.path for c in report.without_merge.lost_columns] == ["from_fullwidth"]

    p = tmp_path / "partitioned"
    write(p / "k=2" / "part-0.parquet", pa.table({"id": [1], "c2": [1]}), mtime=1)
    write(p / "k=10" / "part-0.parquet", pa.table({"id": [1], "c10": [1]}), mtime=2)
    write(p / "k=1" / "part-0.parquet", pa.table({"c1": [1], "id": [1]}), mtime=3)
    report = gate(p)
    assert report.without_merge.from_file == "k=1/part-0.parquet"
    assert report.partition_columns == ("k",)
    assert report.without_merge.schema == without_partitions(spark_schema(spark, p, merge=False), ("k",))


def test_summary_files_lead_without_merge_and_close_the_merge(spark: Any, tmp_path: Path) -> None:
    """(d) `_common_metadata` gives the schema without merge; with merge, `_metadata` and then
    `_common_metadata` are merged after the data files."""
    t = tmp_path / "summaries"
    write(t / "part-0.parquet", pa.table({"a": [1]}))
    write(t / "part-1.parquet", pa.table({"a": [1], "b": ["x"]}))
    pq.write_metadata(pa.schema([("a", pa.int64()), ("from_common", pa.string())]), t / "_common_metadata")
    pq.write_metadata(pa.schema([("a", pa.int64()), ("from_meta", pa.string())]), t / "_metadata")

    report = gate(t)
    w = report.without_merge
    assert (w.from_file, w.source, w.version) == ("_common_metadata", "_common_metadata", None)
    assert w.schema == spark_schema(spark, t, merge=False)
    assert report.merged == spark_schema(spark, t, merge=True)
    assert [c.path for c in w.lost_columns] == ["b"]


def test_unreadable_files_fail_the_gate(spark: Any, tmp_path: Path) -> None:
    """(e) A file whose footer cannot be read fails Spark's mergeSchema read, and so the gate; a
    zero-byte file does too on this Spark."""
    for name, content in (("garbage", b"not parquet at all, not even close"), ("zero", b"")):
        t = tmp_path / name
        write(t / "part-0.parquet", pa.table({"a": [1]}))
        (t / "part-1.parquet").write_bytes(content)
        report = gate(t)
        error = spark_error(lambda t=t: spark.read.option("mergeSchema", "true").parquet(str(t)).schema)
        assert error is not None and "CANNOT_READ_FILE_FOOTER" in error, name
        assert not report.merge_safe and report.exit_code == 1
        assert [u.rel for u in report.unreadable] == ["part-1.parquet"]
        assert report.merged is not None  # the readable footers merge: the files alone block it


# ---------------------------------------------------------------------------------------------
# Without Spark


def test_spark_order_key_is_utf16() -> None:
    names = ["b", "\uff21", "\U0001f600", "B", "a/b", "a-b", "a=1/x"]
    assert sorted(names, key=spark_order_key) == ["B", "a-b", "a/b", "a=1/x", "b", "\U0001f600", "\uff21"]


def test_every_conflict_with_the_versions_on_each_side(tmp_path: Path) -> None:
    """Spark stops at the first conflict; the gate names every conflicting column, and on each side
    every version that brings it, also ones merged after the failing file."""
    t = tmp_path / "t"
    write(t / "part-0.parquet", pa.table({"a": pa.array([1], pa.int32()), "b": ["s"]}), mtime=1)
    write(t / "part-1.parquet", pa.table({"a": pa.array([1], pa.int64()), "b": pa.array([b"x"])}), mtime=2)
    write(t / "part-2.parquet", pa.table({"a": pa.array([1], pa.int32()), "b": ["s"], "c": [1]}), mtime=3)
    report = gate(t)
    assert [(c.path, c.left.type, c.right.type) for c in report.conflicts] == [
        ("a", "int32", "int64"), ("b", "string", "binary")]
    for c in report.conflicts:
        assert (c.left.versions, c.right.versions) == ((1, 3), (2,))
        assert c.left.count == 2 and c.right.files == ("part-1.parquet",)
    assert report.merged is None and not report.merge_safe
    assert any("first" in n for n in report.notes)


def test_nested_lost_case_insensitive_and_unreadable_types(tmp_path: Path) -> None:
    """Names differing in case are one column to Spark (not lost); a lost nested field is named, not
    its leaves; a type Spark cannot read conflicts on its own, with no left side."""
    t = tmp_path / "t"
    write(t / "part-0.parquet", pa.table({"ID": [1], "s": pa.array([{"x": 1}])}), mtime=1)
    inner = pa.struct([("x", pa.int64()), ("y", pa.struct([("z", pa.int64())]))])
    write(t / "part-1.parquet", pa.table({"id": [1], "s": pa.array([{"x": 1, "y": {"z": 1}}], inner),
                                          "h": pa.array([1.5], pa.float16())}), mtime=2)
    report = gate(t)
    assert [c.path for c in report.without_merge.lost_columns] == ["s.y", "h"]
    (c,) = report.conflicts
    assert c.path == "h" and c.rule.id == "spark.illegal-type"
    assert c.left.versions == () and c.right.versions == (2,)
    assert not report.read_failures  # the read without merge never asks for `h`


def test_relabelled_timestamps_are_a_quiet_break(tmp_path: Path) -> None:
    t = tmp_path / "t"
    utc = pa.array([0], pa.timestamp("us", "UTC"))
    write(t / "part-0.parquet", pa.table({"ts": utc}), mtime=1)
    write(t / "part-1.parquet", pa.table({"ts": pa.array([0], pa.timestamp("us"))}), mtime=2)
    report = gate(t)
    assert [c.path for c in report.conflicts] == ["ts"] and not report.merge_safe
    (r,) = report.without_merge.relabelled_columns
    assert r.type == "timestamp_us_utc" and [v.type for v in r.versions] == ["timestamp_us_utc",
                                                                              "timestamp_us_local"]
    # Spark reads it without an error, re-labelled (docs/reference/parquet-and-spark.md §2.6): a quiet break
    assert [(f.schema, f.path, f.code) for f in report.read_failures] == [
        ("without_merge", "ts", "VALUES_CHANGE_MEANING")]
    assert not evaluate_gate(read(str(t)), allow_quiet=True).read_failures


def test_empty_table_and_stale_checksum(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    report = gate(empty)
    assert not report.merge_safe and report.without_merge.from_file is None
    assert report.without_merge.error and "UNABLE_TO_INFER_SCHEMA" in report.without_merge.error

    t = tmp_path / "crc"
    write(t / "part-0.parquet", pa.table({"a": [1]}))
    size = (t / "part-0.parquet").stat().st_size
    (t / ".part-0.parquet.crc").write_bytes(b"\0" * (crc_size(size) + 4))
    report = gate(t)
    assert [u.rel for u in report.unreadable] == ["part-0.parquet"] and not report.merge_safe
    assert report.without_merge.schema is None and report.without_merge.error


def test_json_keys_and_text(tmp_path: Path) -> None:
    t = tmp_path / "t"
    write(t / "part-0.parquet", pa.table({"a": pa.array([1], pa.int32())}), mtime=1)
    write(t / "part-1.parquet", pa.table({"a": pa.array([1], pa.int64()), "b": [1]}), mtime=2)
    (t / "part-2.parquet").write_bytes(b"")
    report = gate(t)
    doc = json.loads(json.dumps(gate_json(report)))
    assert {"merge_safe", "merged", "conflicts", "schema_without_merge", "read_failures", "table",
            "versions", "unreadable"} <= doc.keys()
    assert {"from_file", "lost_columns", "relabelled_columns"} <= doc["schema_without_merge"].keys()
    assert {"path", "left", "right", "message", "files", "versions"} <= doc["conflicts"][0].keys()
    assert doc["merge_safe"] is False and doc["merged"] is None and doc["versions"] == 2
    assert doc["schema_without_merge"]["lost_columns"][0]["path"] == "b"
    assert doc["unreadable"] == [{"path": "part-2.parquet", "reason": report.unreadable[0].reason}]

    buffer = io.StringIO()
    gate_text(report, Console(file=buffer, width=200))
    text = buffer.getvalue()
    for expected in ("CONFLICT", "LOST", "RELABELLED", "part-2.parquet", "merge is NOT safe"):
        assert expected in text, text

    safe = tmp_path / "safe"
    write(safe / "part-0.parquet", pa.table({"a": [1], "s": pa.array([{"x": 1}])}))
    buffer = io.StringIO()
    report = gate(safe)
    gate_text(report, Console(file=buffer, width=200))
    assert "merge is safe" in buffer.getvalue() and report.exit_code == 0
    assert isinstance(report.merged.fields[1].type if report.merged else None, StructType)
