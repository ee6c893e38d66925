"""Findings from the versions on disk: grouped per column (or field id, or reason), naming
versions, files and partitions with evidence; the mergeSchema verdict checked against real Spark,
and Spark-written footers checked to agree with themselves."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemaguard.checks import run_checks
from schemaguard.checks.finding import CODES, SAMPLE, Finding, FindingCode, reason_category
from schemaguard.demo import build_demo_lake
from schemaguard.lake.discover import crc_size
from schemaguard.lake.table import read
from tests.helpers import spark_conf
from tests.oracles import conditions

SPARK_KEY = "org.apache.spark.sql.parquet.row.metadata"


FILE_CODES = {FindingCode.UNREADABLE_FILE, FindingCode.STALE_CHECKSUM, FindingCode.TABLE_HAS_NO_DATA}


def findings_of(table: Path) -> list[Finding]:
    """What the versions on disk show (the findings about files alone left out)."""
    return [f for f in all_findings_of(table) if f.code not in FILE_CODES]


def all_findings_of(table: Path) -> list[Finding]:
    found = run_checks(read(str(table)))
    assert_unique_keys(found)
    return found


def assert_unique_keys(found: list[Finding]) -> None:
    keys = [replace(f, table="t").key for f in found]
    assert len(keys) == len(set(keys)), sorted(keys)


def by_code(found: list[Finding], code: str) -> dict[str, Finding]:
    """One code's findings by path (or subject): also asserts no two share one."""
    hits = [f for f in found if f.code == code]
    named = {f.subject or f.path: f for f in hits}
    assert len(named) == len(hits)
    return named


def write(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def with_id(name: str, type_: pa.DataType, field_id: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable, metadata={b"PARQUET:field_id": str(field_id).encode()})


def test_every_finding_code_has_its_row_in_the_code_table() -> None:
    """`CODES` is keyed by the enum: no member without its severity, meaning and reference, no row
    without a member, each row under its own code, in the enum's order."""
    assert list(CODES) == list(FindingCode)
    for code, row in CODES.items():
        assert row.code is code and row.meaning and row.reference, code


def test_demo_lake_findings(tmp_path: Path) -> None:
    found = {(f.code, f.path): f for f in findings_of(build_demo_lake(tmp_path))}
    assert set(found) == {
        # int32 and int64 do not merge (docs/reference/compat-rules.md §5)
        ("SPARK_MERGE_CONFLICT", "quantity"),
        ("LOGICAL_TYPE_DRIFT", "quantity"),
        ("LOGICAL_TYPE_DRIFT", "amount"),  # decimal(10,2) on FLBA(5) -> decimal(12,2) on FLBA(6)
        ("LOGICAL_TYPE_DRIFT", "ts"),  # INT96 -> INT64 TIMESTAMP(MICROS, UTC)
        ("COLUMN_MISSING_IN_OLD_FILES", "channel"),
        ("COLUMN_MISSING_IN_OLD_FILES", "amount_cents"),  # added in v3, to be dual-written
    }
    cents = found[(FindingCode.COLUMN_MISSING_IN_OLD_FILES, "amount_cents")]
    assert (cents.versions, cents.count, cents.partition_count) == ((1, 2), 60, 30)
    missing = found[(FindingCode.COLUMN_MISSING_IN_OLD_FILES, "channel")]
    assert (missing.versions, missing.count, missing.severity) == ((1,), 30, "info")
    assert "1,500 rows" in missing.message
    assert missing.partition_count == 15 and missing.partitions[0] == "dt=2024-01-01"
    assert missing.evidence == (("v1", "absent"), ("v4", "string [BYTE_ARRAY STRING]"),
                                ("rows without it", "1500"))
    drift = found[(FindingCode.LOGICAL_TYPE_DRIFT, "ts")]
    assert drift.versions == (1, 2, 3, 4) and drift.count == 120 and len(drift.files) == 20  # a sample
    assert drift.partition_count == 60 and len(drift.partitions) == SAMPLE
    assert drift.partitions == tuple(sorted(drift.partitions))
    assert drift.evidence == (("v1", "timestamp_int96 [INT96]"), ("v2", "timestamp_int96 [INT96]"),
                              ("v3", "timestamp_us_utc [INT64 TIMESTAMP(MICROS,utc)]"),
                              ("v4", "timestamp_us_utc [INT64 TIMESTAMP(MICROS,utc)]"))
    conflict = found[(FindingCode.SPARK_MERGE_CONFLICT, "quantity")]
    assert conflict.evidence[0] == ("v1", "int32 [INT32]")
    assert conflict.evidence[-1] == ("v4", "int64 [INT64]")


def test_case_only_names(tmp_path: Path) -> None:
    write(tmp_path / "t" / "part-0.parquet", pa.table({"Amount": [1]}))
    write(tmp_path / "t" / "part-1.parquet", pa.table({"amount": [2]}))
    (case,) = [f for f in findings_of(tmp_path / "t") if f.code == "CASE_ONLY_NAME_DIFFERENCE"]
    assert case.path == "Amount" and case.versions == (1, 2)
    assert case.evidence == (("v1", "Amount"), ("v2", "amount")) or case.evidence == (
        ("v1", "amount"), ("v2", "Amount"))  # no date partition: versions ordered by mtime
    assert (case.partitions, case.partition_count) == ((), 0)  # unpartitioned


def test_merge_conflict_finding_agrees_with_spark(spark: Any, tmp_path: Path) -> None:
    for name, first, second in (("clash", pa.int32(), pa.int64()), ("fine", pa.int64(), pa.int64())):
        write(tmp_path / name / "part-0.parquet", pa.table({"c": pa.array([1], first)}))
        write(tmp_path / name / "part-1.parquet", pa.table({"c": pa.array([2], second), "d": [1]}))
        try:
            spark_ok = bool(spark.read.option("mergeSchema", "true").parquet(str(tmp_path / name)).schema)
        except Exception as e:  # Spark's "no" is its merge error, nothing else
            assert "CANNOT_MERGE_SCHEMAS" in conditions(e), e
            spark_ok = False
        ours = [f for f in findings_of(tmp_path / name) if f.code == "SPARK_MERGE_CONFLICT"]
        assert spark_ok == (not ours), name


# ---------------------------------------------------------------------------------------------
# What the scan alone shows


def test_unreadable_files_one_finding_per_reason_category(tmp_path: Path) -> None:
    table = tmp_path / "t"
    write(table / "dt=2024-01-01" / "good.parquet", pa.table({"a": [1]}))
    good = (table / "dt=2024-01-01" / "good.parquet").read_bytes()
    (table / "dt=2024-01-01" / "zero.parquet").write_bytes(b"")
    (table / "dt=2024-01-02").mkdir()
    (table / "dt=2024-01-02" / "zero.parquet").write_bytes(b"")
    (table / "dt=2024-01-02" / "tiny.parquet").write_bytes(b"PAR1x")  # 5 bytes
    (table / "tiny.parquet").write_bytes(b"PAR1xyz")  # 7 bytes, outside any partition
    (table / "dt=2024-01-03").mkdir()
    (table / "dt=2024-01-03" / "half.parquet").write_bytes(good[: len(good) // 2])
    found = all_findings_of(table)
    unreadable = by_code(found, "UNREADABLE_FILE")
    assert set(unreadable) == {"zero-byte file", "too small to be Parquet", "truncated"}
    assert {f.code for f in found} == {"UNREADABLE_FILE"}
    zero = unreadable["zero-byte file"]
    assert (zero.severity, zero.count, zero.path, zero.versions) == ("error", 2, "", ())
    assert zero.files == ("dt=2024-01-01/zero.parquet", "dt=2024-01-02/zero.parquet")
    assert (zero.partitions, zero.partition_count) == (("dt=2024-01-01", "dt=2024-01-02"), 2)
    assert zero.evidence == (("reason", "zero-byte file (an unfinished or failed write)"),)
    tiny = unreadable["too small to be Parquet"]  # two byte counts, one finding with a stable key
    assert tiny.count == 2 and set(tiny.files) == {"dt=2024-01-02/tiny.parquet", "tiny.parquet"}
    assert (tiny.partitions, tiny.partition_count) == (("dt=2024-01-02",), 1)  # the root is no partition
    assert set(tiny.evidence) == {("reason", "too small to be Parquet (5 bytes)"),
                                  ("reason", "too small to be Parquet (7 bytes)")}
    assert "and 1 more reason" in tiny.message
    assert replace(tiny, table="sales").key == "sales:UNREADABLE_FILE:too small to be Parquet"
    half = unreadable["truncated"]
    assert half.files == ("dt=2024-01-03/half.parquet",) and half.partitions == ("dt=2024-01-03",)


def test_reason_categories_of_every_reason_the_footer_reader_gives() -> None:
    assert reason_category("vanished: listed, but gone when its footer was read") == "vanished"
    assert reason_category("cannot be opened: permission denied") == "cannot be opened"
    assert reason_category("encrypted footer (PARE): cannot be read without its key") == "encrypted footer"
    assert reason_category("not a Parquet file (no PAR1 magic at head or tail)") == "not a Parquet file"
    assert reason_category("bytes appended after the footer: the file does not end in PAR1") == (
        "bytes appended after the footer")
    assert reason_category("corrupt footer: Couldn't deserialize thrift: x") == "corrupt footer"
    assert reason_category("unexpected Parquet schema line: optional x;") == "unexpected Parquet schema line"
    assert reason_category("empty Parquet schema") == "empty Parquet schema"


def test_stale_checksum(tmp_path: Path) -> None:
    table = tmp_path / "t"
    write(table / "dt=2024-01-01" / "part-0.parquet", pa.table({"a": [1]}))
    size = (table / "dt=2024-01-01" / "part-0.parquet").stat().st_size
    (table / "dt=2024-01-01" / ".part-0.parquet.crc").write_bytes(b"\0" * (crc_size(size) + 4))
    found = all_findings_of(table)
    (stale,) = found
    assert (stale.code, stale.severity, stale.count, stale.subject, stale.path) == (
        "STALE_CHECKSUM", "error", 1, "", "")
    assert stale.files == ("dt=2024-01-01/part-0.parquet",)
    assert (stale.partitions, stale.partition_count) == (("dt=2024-01-01",), 1)
    assert stale.evidence[0][0] == "why" and "stale .crc" in stale.evidence[0][1]


# ---------------------------------------------------------------------------------------------
# Field ids


def test_field_id_reused_across_versions(tmp_path: Path) -> None:
    """Id 2 is `b: string` in v1 and `c: double` in v2: id readers read v1's strings as `c`."""
    table = tmp_path / "t"
    old = pa.schema([with_id("a", pa.int64(), 1), with_id("b", pa.string(), 2)])
    new = pa.schema([with_id("a", pa.int64(), 1), with_id("c", pa.float64(), 2)])
    for day in (1, 2):
        write(table / f"dt=2024-01-0{day}" / "p.parquet", pa.table({"a": [1], "b": ["x"]}, schema=old))
    write(table / "dt=2024-01-03" / "p.parquet", pa.table({"a": [1], "c": [1.5]}, schema=new))
    found = findings_of(table)
    assert {f.code for f in found} == {"FIELD_ID_REUSED", "COLUMN_MISSING_IN_OLD_FILES"}
    reused = by_code(found, "FIELD_ID_REUSED")["field_id=2"]
    assert (reused.severity, reused.path, reused.versions, reused.count) == ("error", "c", (1, 2), 3)
    assert reused.partitions == ("dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03")
    assert reused.partition_count == 3
    assert reused.evidence == (("v1", "b"), ("v2", "c"))
    assert "unrelated" in reused.message
    assert replace(reused, table="t").key == "t:FIELD_ID_REUSED:field_id=2"


def test_field_id_reused_within_one_file(tmp_path: Path) -> None:
    schema = pa.schema([with_id("a", pa.int64(), 1), with_id("b", pa.int64(), 1)])
    write(tmp_path / "t" / "p.parquet", pa.table({"a": [1], "b": [2]}, schema=schema))
    (reused,) = findings_of(tmp_path / "t")  # one version is enough
    assert (reused.code, reused.severity, reused.versions, reused.count) == (
        "FIELD_ID_REUSED", "error", (1,), 1)
    assert reused.evidence == (("v1", "a, b"),) and reused.subject == "field_id=1"


def test_field_id_on_a_renamed_column_is_a_warning(tmp_path: Path) -> None:
    """Same id, same type, one name per version: an Iceberg rename, or a reuse; readers disagree."""
    table = tmp_path / "t"
    write(table / "dt=2024-01-01" / "p.parquet",
          pa.table({"amount": [1]}, schema=pa.schema([with_id("amount", pa.int64(), 3)])))
    write(table / "dt=2024-01-02" / "p.parquet",
          pa.table({"total": [1]}, schema=pa.schema([with_id("total", pa.int64(), 3)])))
    reused = by_code(findings_of(table), "FIELD_ID_REUSED")["field_id=3"]
    assert (reused.severity, reused.path, reused.versions) == ("warning", "total", (1, 2))
    assert reused.evidence == (("v1", "amount"), ("v2", "total"))


def test_field_id_changed_and_list_element_ids(tmp_path: Path) -> None:
    table = tmp_path / "t"
    items = pa.list_(with_id("element", pa.int32(), 11))
    write(table / "dt=2024-01-01" / "p.parquet", pa.table(
        {"a": [1], "l": [[1]]}, schema=pa.schema([with_id("a", pa.int64(), 1), with_id("l", items, 10)])))
    write(table / "dt=2024-01-02" / "p.parquet", pa.table(
        {"a": [1], "l": [[1]]}, schema=pa.schema([with_id("a", pa.int64(), 7), with_id("l", items, 10)])))
    found = findings_of(table)
    assert {f.code for f in found} == {"FIELD_ID_CHANGED"}  # ids 10 and 11 (`l`, `l[]`) are fine
    changed = by_code(found, "FIELD_ID_CHANGED")["a"]
    assert (changed.severity, changed.versions, changed.count) == ("warning", (1, 2), 2)
    assert changed.partitions == ("dt=2024-01-01", "dt=2024-01-02")
    assert changed.evidence == (("v1", "field_id 1"), ("v2", "field_id 7"))


# ---------------------------------------------------------------------------------------------
# Nullability


def test_nullability_mismatch_top_level_and_nested(tmp_path: Path) -> None:
    table = tmp_path / "t"
    required = pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("s", pa.struct([pa.field("y", pa.int32(), nullable=False)])),
        pa.field("l", pa.list_(pa.field("element", pa.int32(), nullable=False))),
        pa.field("same", pa.int32(), nullable=False),
    ])
    optional = pa.schema([
        pa.field("id", pa.int64()), pa.field("s", pa.struct([pa.field("y", pa.int32())])),
        pa.field("l", pa.list_(pa.int32())), pa.field("same", pa.int32(), nullable=False),
    ])
    write(table / "dt=2024-01-01" / "p.parquet",
          pa.table({"id": [1], "s": [{"y": 1}], "l": [[1]], "same": [1]}, schema=required))
    for day in (2, 3):
        write(table / f"dt=2024-01-0{day}" / "p.parquet", pa.table(
            {"id": [None, 2, None], "s": [{"y": None}, None, {"y": 1}], "l": [[None], None, []],
             "same": [1, 2, 3]}, schema=optional))
    found = findings_of(table)
    assert {f.code for f in found} == {"NULLABILITY_MISMATCH"}  # not layout drift as well
    mismatch = by_code(found, "NULLABILITY_MISMATCH")
    assert set(mismatch) == {"id", "s.y", "l[]"}
    top = mismatch["id"]
    assert (top.severity, top.versions, top.count, top.partition_count) == ("warning", (1, 2), 3, 3)
    assert top.evidence == (("v1", "REQUIRED"), ("v2", "OPTIONAL"), ("nulls in OPTIONAL files", "4"))
    assert "REQUIRED in v1 and OPTIONAL in v2" in top.message and "4 null" in top.message
    assert mismatch["s.y"].evidence == (("v1", "REQUIRED"), ("v2", "OPTIONAL"))  # no count for nested


def test_null_counts_of_many_loosened_columns_over_many_files(tmp_path: Path) -> None:
    """Forty columns REQUIRED in the first version and OPTIONAL in the two after it (one with no
    statistics): each finding counts its column's nulls over every file of the OPTIONAL versions,
    a column named with a dot as well; the one whose files lack statistics says no count."""
    table = tmp_path / "t"
    names = [f"c{i}" for i in range(39)] + ["a.b"]
    tight = pa.schema([pa.field(n, pa.int32(), nullable=False) for n in names])
    loose = pa.schema([pa.field(n, pa.int32()) for n in names])
    write(table / "dt=2024-01-01" / "p.parquet", pa.table({n: [1] for n in names}, schema=tight))
    for day in (2, 3):  # 3 files a day, each with i % 3 + 1 nulls in column i
        for k in range(3):
            rows = {n: [None] * (i % 3 + 1) + [k] * (3 - i % 3) for i, n in enumerate(names)}
            write(table / f"dt=2024-01-0{day}" / f"p{k}.parquet", pa.table(rows, schema=loose))
    bare = table / "dt=2024-01-04" / "p.parquet"  # a third OPTIONAL version: no statistics at all
    bare.parent.mkdir()
    pq.write_table(pa.table({n: [None] for n in names}, schema=loose), bare, write_statistics=False)
    mismatch = by_code(findings_of(table), "NULLABILITY_MISMATCH")
    assert set(mismatch) == {f"c{i}" for i in range(39)} | {"`a.b`"}
    counted = {f.path: dict(f.evidence).get("nulls in OPTIONAL files") for f in mismatch.values()}
    assert counted == {f"c{i}": None for i in range(39)} | {"`a.b`": None}  # v3's files have no count
    bare.unlink()
    mismatch = by_code(findings_of(table), "NULLABILITY_MISMATCH")
    counted = {f.path: dict(f.evidence).get("nulls in OPTIONAL files") for f in mismatch.values()}
    assert counted == {p: str(6 * (i % 3 + 1)) for i, p in enumerate([*names[:-1], "`a.b`"])}


# ---------------------------------------------------------------------------------------------
# Spark's footer schema against the Parquet schema


def spark_json(*fields: tuple[str, Any, bool]) -> str:
    return json.dumps({"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": nullable, "metadata": {}} for n, t, nullable in fields]})


def test_spark_schema_disagrees_with_parquet(tmp_path: Path) -> None:
    """pyarrow writes the file; the Spark schema under Spark's key is edited by hand."""
    table = tmp_path / "t"
    edited = spark_json(
        ("ts", "timestamp", True),  # the Parquet column is a bare INT64
        ("amount", "decimal(12,2)", True),  # the Parquet column is decimal(10,2)
        ("n", "integer", True),  # REQUIRED in Parquet
        ("ok", "timestamp", True),  # INT64 TIMESTAMP(MILLIS, UTC): what Spark reads as timestamp
        ("ghost", "string", True),  # not in the Parquet schema
        ("s", json.loads(spark_json(("x", "integer", True), ("y", "string", True))), True),
    )
    schema = pa.schema([
        pa.field("ts", pa.int64()), pa.field("amount", pa.decimal128(10, 2)),
        pa.field("n", pa.int32(), nullable=False), pa.field("ok", pa.timestamp("ms", tz="UTC")),
        pa.field("extra", pa.string()), pa.field("s", pa.struct([pa.field("x", pa.int32())])),
    ]).with_metadata({SPARK_KEY: edited})
    row = {"ts": [1], "amount": [Decimal("1.00")], "n": [1], "ok": [datetime(2024, 1, 1, tzinfo=UTC)],
           "extra": ["e"], "s": [{"x": 1}]}
    for day in (1, 2):
        write(table / f"dt=2024-01-0{day}" / "p.parquet", pa.table(row, schema=schema))
    found = findings_of(table)
    assert {f.code for f in found} == {"SPARK_SCHEMA_DISAGREES_WITH_PARQUET"}  # one version suffices
    disagree = by_code(found, "SPARK_SCHEMA_DISAGREES_WITH_PARQUET")
    assert set(disagree) == {"ts", "amount", "n", "ghost", "extra", "s.y"}  # not `ok`, `s`, `s.x`
    ts = disagree["ts"]
    assert (ts.severity, ts.versions, ts.count, ts.partition_count) == ("warning", (1,), 2, 2)
    assert ts.partitions == ("dt=2024-01-01", "dt=2024-01-02")
    ((label, seen),) = ts.evidence
    assert label == "v1" and "Spark says timestamp" in seen and "int64 [INT64]" in seen and "fails" in seen
    assert "converts" in disagree["amount"].evidence[0][1]  # a wider decimal reads
    assert disagree["n"].evidence == (("v1", "Spark says nullable, the Parquet schema REQUIRED"),)
    assert "Spark's schema has it" in disagree["ghost"].evidence[0][1]
    assert "the Parquet schema has it" in disagree["extra"].evidence[0][1]


def test_below_a_node_of_another_shape_nothing_more_is_compared_whatever_its_names(tmp_path: Path) -> None:
    """Spark's schema says `s` is a string where the file has a struct: `s` disagrees, the nodes
    below it are not compared again. Beside it, a top-level `s.x` (one name holding a dot) and a
    list of structs whose element Spark misses are compared on their own; a thousand columns Spark's
    schema lacks are a thousand findings (found in one pass: no node is compared with every cut)."""
    table = tmp_path / "t"
    absent = [pa.field(f"c{i}", pa.struct([pa.field("v", pa.int32())])) for i in range(1000)]
    edited = spark_json(("s", "string", True), ("s.x", "string", True),
                        ("l", {"type": "array", "elementType": "integer", "containsNull": True}, True))
    deep = pa.struct([pa.field("z", pa.int32())])
    schema = pa.schema([
        pa.field("s", pa.struct([pa.field("x", pa.string()), pa.field("y", deep)])),
        pa.field("s.x", pa.string()), pa.field("l", pa.list_(pa.struct([pa.field("a", pa.int32())]))),
        *absent,
    ]).with_metadata({SPARK_KEY: edited})
    write(table / "p.parquet", pa.table({f.name: pa.array([None], f.type) for f in schema}, schema=schema))
    disagree = by_code(findings_of(table), "SPARK_SCHEMA_DISAGREES_WITH_PARQUET")
    assert set(disagree) == {"s", "l[]", *(f"c{i}" for i in range(1000))}
    assert "Spark says string" in disagree["s"].evidence[0][1]


SPARK_ROW = """
SELECT CAST(1 AS BIGINT) AS id, CAST(2 AS TINYINT) AS tiny, CAST(3 AS SMALLINT) AS small,
       CAST(1.5 AS FLOAT) AS f, CAST('y' AS BINARY) AS bin, CAST(NULL AS STRING) AS s,
       CAST(1.25 AS DECIMAL(9,2)) AS dec9, CAST(1.25 AS DECIMAL(18,2)) AS dec18,
       CAST(1.25 AS DECIMAL(30,5)) AS dec30, DATE'2024-01-02' AS dt,
       TIMESTAMP'2024-01-02 03:04:05' AS ts, TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz,
       array(1, 2) AS arr, array('a', CAST(NULL AS STRING)) AS arrn,
       array(named_struct('a', 1, 'b', CAST(NULL AS DOUBLE))) AS arrs,
       map('k', 1) AS m, map('k', named_struct('v', CAST(NULL AS DECIMAL(20,2)))) AS ms,
       named_struct('x', 1, 'y', named_struct('z', TIMESTAMP'2024-01-02 03:04:05')) AS st
"""


def spark_writes(spark: Any, table: Path, sql: str) -> None:
    """The same rows written with Spark's default, its legacy format, and millisecond timestamps."""
    settings = {
        "default": {},
        "legacy": {"spark__sql__parquet__writeLegacyFormat": "true"},
        "millis": {"spark__sql__parquet__outputTimestampType": "TIMESTAMP_MILLIS"},
    }
    for name, conf in settings.items():
        with spark_conf(spark, **conf):
            spark.sql(sql).coalesce(1).write.parquet(str(table / f"w={name}"))


def test_spark_written_files_agree_with_their_spark_schema(spark: Any, tmp_path: Path) -> None:
    """Spark writes its schema consistently with the layout it chooses: INT96 or ms/us timestamps,
    INT32/INT64 or FLBA decimals, standard or legacy lists and maps. No finding may say otherwise."""
    table = tmp_path / "t"
    spark_writes(spark, table, SPARK_ROW)
    versions = read(str(table)).versions
    assert len(versions) == 3 and all(v.footer.spark_schema is not None for v in versions)
    found = findings_of(table)
    assert not [f for f in found if f.code in ("SPARK_SCHEMA_DISAGREES_WITH_PARQUET", "NULLABILITY_MISMATCH")]
    assert {f.code for f in found} == {"LOGICAL_TYPE_DRIFT"}  # legacy vs standard layouts, INT96 vs ms


def test_spark_legacy_list_of_non_null_lists_agrees(spark: Any, tmp_path: Path) -> None:
    """Legacy 2-level lists of lists read as list<list<int32>>, as Spark's schema says: the only
    finding is the layout drift between the legacy and the standard files."""
    spark_writes(spark, tmp_path / "t", "SELECT array(array(1)) AS nested")
    assert {f.code for f in findings_of(tmp_path / "t")} == {"LOGICAL_TYPE_DRIFT"}


# ---------------------------------------------------------------------------------------------
# Grouping


def test_many_files_one_drift(tmp_path: Path) -> None:
    """300 files in 30 partitions, ms timestamps then us: one finding, a bounded sample."""
    table = tmp_path / "t"
    for day in range(30):
        unit = "ms" if day < 15 else "us"
        batch = pa.table({"ts": pa.array([datetime(2024, 1, 1, tzinfo=UTC)], pa.timestamp(unit, tz="UTC"))})
        for part in range(10):
            pq.write_table(batch, _mkdir(table / f"dt=2024-01-{day + 1:02d}") / f"part-{part}.parquet")
    (drift,) = findings_of(table)  # Spark merges ms and us: no conflict, only the drift
    assert (drift.code, drift.path, drift.versions, drift.count) == ("LOGICAL_TYPE_DRIFT", "ts", (1, 2), 300)
    assert len(drift.files) == SAMPLE and drift.files[0] == "dt=2024-01-01/part-0.parquet"
    assert drift.partition_count == 30
    assert drift.partitions == tuple(f"dt=2024-01-{d:02d}" for d in range(1, SAMPLE + 1))
    assert drift.evidence == (("v1", "timestamp_ms_utc [INT64 TIMESTAMP(MILLIS,utc)]"),
                              ("v2", "timestamp_us_utc [INT64 TIMESTAMP(MICROS,utc)]"))


def test_columns_drifting_alike_and_apart_each_say_their_own(tmp_path: Path) -> None:
    """Drifts spelt once per distinct drift: columns that drift alike share the words about their
    versions, a column drifting otherwise (other layouts, other versions) has its own."""
    table = tmp_path / "t"
    table.mkdir()
    for i, (a, c) in enumerate([(pa.int32(), pa.float32()), (pa.int64(), pa.float32()),
                                (pa.int64(), pa.float64())]):
        batch = pa.table({"a": pa.array([1], a), "b": pa.array([1], a), "c": pa.array([1], c)})
        pq.write_table(batch, table / f"part-{i}.parquet")
        os.utime(table / f"part-{i}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))
    drift = {f.path: f for f in findings_of(table) if f.code == FindingCode.LOGICAL_TYPE_DRIFT}
    said = "is stored differently across versions:"
    assert set(drift) == {"a", "b", "c"}
    for column in ("a", "b"):
        assert drift[column].message == f"`{column}` {said} v1: int32 [INT32]; v2,v3: int64 [INT64]"
        assert (drift[column].versions, drift[column].evidence) == (
            (1, 2, 3), (("v1", "int32 [INT32]"), ("v2", "int64 [INT64]"), ("v3", "int64 [INT64]")))
    assert drift["c"].message == f"`c` {said} v1,v2: float [FLOAT]; v3: double [DOUBLE]"
    assert drift["c"].evidence == (("v1", "float [FLOAT]"), ("v2", "float [FLOAT]"),
                                   ("v3", "double [DOUBLE]"))


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_keys_are_unique_per_table_on_a_lake_with_every_problem(tmp_path: Path) -> None:
    table = build_demo_lake(tmp_path)
    extra = table / "dt=2024-03-01"
    schema = pa.schema([with_id("id", pa.int64(), 1), with_id("ID", pa.string(), 1),
                        pa.field("quantity", pa.int64(), nullable=False)])
    write(extra / "odd.parquet", pa.table({"id": [1], "ID": ["x"], "quantity": [1]}, schema=schema))
    (extra / "zero.parquet").write_bytes(b"")
    found = [replace(f, table="orders") for f in all_findings_of(table)]
    assert len({f.key for f in found}) == len(found)
    assert {"FIELD_ID_REUSED", "NULLABILITY_MISMATCH", "UNREADABLE_FILE", "STALE_CHECKSUM",
            "SPARK_MERGE_CONFLICT", "CASE_ONLY_NAME_DIFFERENCE"} <= {f.code for f in found}
    assert all(f.evidence and f.rule for f in found)
