"""Each reader profile's rule rows, one case per row (the row id is in the case), plus identity,
modes with TRANSITIVE and the registry. Rows cite docs/reference/compat-rules.md and
docs/reference/parquet-and-spark.md in rules/read.py, rules/promotions.py and rules/merge.py; a test
below fails if a row has no case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from avro.compatibility import SchemaIncompatibilityType
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schemaguard import base
from schemaguard.base import Options, Problem, ProblemCode, errors
from schemaguard.formats import spark_view
from schemaguard.formats.avro import schema_from_avsc
from schemaguard.formats.notation import schema_from_notation
from schemaguard.model import (
    DataType,
    DecimalType,
    Field,
    ListType,
    MapType,
    Schema,
    StructType,
    TimestampType,
    walk,
)
from schemaguard.rules import avro as avro_rules
from schemaguard.rules import merge as merge_rules
from schemaguard.rules import profiles as profile_rules
from schemaguard.rules import promotions, read
from schemaguard.rules.modes import Mode, check, pairs
from schemaguard.rules.profiles import PROFILES, ReadProfile, can_read, merge_schemas


def one(t: Any, nullable: bool = True, **extra: Any) -> Schema:
    return schema_from_notation({"fields": [{"name": "c", "type": t, "nullable": nullable, **extra}]})


def two(a: str, b: str) -> Schema:
    return schema_from_notation({"fields": [{"name": "c", "type": a}, {"name": "d", "type": b}]})


def swapped(a: str, b: str) -> Schema:
    """`two` with its columns' names swapped: d first, then c."""
    return schema_from_notation({"fields": [{"name": "d", "type": a}, {"name": "c", "type": b}]})


def named(name: str, t: str = "int32") -> Schema:
    return schema_from_notation({"fields": [{"name": name, "type": t}]})


def avsc_fields(*fields: dict[str, Any]) -> Schema:
    return schema_from_avsc({"type": "record", "name": "r", "fields": list(fields)})


def avsc(*branches: Any) -> Schema:
    """One field `c` of an Avro type, or of a union of several."""
    return avsc_fields({"name": "c", "type": list(branches) if len(branches) > 1 else branches[0]})


def rules_of(problems: list[Problem]) -> set[tuple[str, str]]:
    return {(p.rule.id, p.severity) for p in problems}


ROWS = Options(vectorized_reader=False)  # spark.sql.parquet.enableVectorizedReader=false

# (profile, options, writer, reader, expected (rule id, severity) pairs; empty = reads silently)
CASES: list[tuple[str, Options, Schema, Schema, set[tuple[str, str]]]] = [
    # Avro, docs/reference/compat-rules.md §1, as Java's SchemaCompatibility decides (rules/avro.py); a
    # promotion or an enum default is fine and says nothing, as Java says nothing
    ("avro", Options(), one("int32"), one("int64"), set()),
    ("avro", Options(), one("int64"), one("float"), set()),
    ("avro", Options(), one("string"), one("binary"), set()),
    # both nullable: ["null", "long"] read as ["null", "int"], the long branch has no reader branch
    ("avro", Options(), one("int64"), one("int32"), {("avro.union-branch", "error")}),
    ("avro", Options(), one("int64", False), one("int32", False), {("avro.type-mismatch", "error")}),
    ("avro", Options(), one("string"),
     schema_from_notation({"fields": [{"name": "c", "type": "string"},
                                      {"name": "d", "type": "int32", "nullable": False}]}),
     {("avro.missing-default", "error")}),
    # ["null", "int"] read as "int": the writer's null branch is no int
    ("avro", Options(), one("int32"), one("int32", nullable=False), {("avro.type-mismatch", "error")}),
    ("avro", Options(), one({"enum": ["A", "B"]}, False), one({"enum": ["A"]}, False),
     {("avro.enum", "error")}),
    # nullable: Java reports the union, not why its branch fails
    ("avro", Options(), one({"enum": ["A", "B"]}), one({"enum": ["A"]}), {("avro.union-branch", "error")}),
    ("avro", Options(), one({"enum": ["A", "B"]}), one({"enum": ["A", "U"], "default": "U"}), set()),
    ("avro", Options(), one("fixed(4)", False), one("fixed(8)", False), {("avro.fixed-size", "error")}),
    # Java ignores logical types; the reader's scale gives the bytes another value: a quiet break
    ("avro", Options(), one("decimal(9,2)"), one("decimal(9,3)"), {("avro.logical-relabel", "error")}),
    ("avro", Options(allow_quiet=True), one("decimal(9,2)"), one("decimal(9,3)"),
     {("avro.logical-relabel", "warning")}),
    ("avro", Options(), one("decimal(9,2)"), one("decimal(12,2)"), set()),
    ("avro", Options(), one("int32", False), one({"list": "int32"}, False),
     {("avro.type-mismatch", "error")}),
    ("avro", Options(), avsc("int"), avsc("float"), set()),  # every Java promotion, one each
    ("avro", Options(), avsc("long"), avsc("double"), set()),
    ("avro", Options(), avsc("float"), avsc("double"), set()),
    ("avro", Options(), avsc("bytes"), avsc("string"), set()),
    ("avro", Options(), avsc("double"), avsc("float"), {("avro.type-mismatch", "error")}),
    # names compare unqualified: a namespace change alone reads (docs/reference/compat-rules.md §1)
    ("avro", Options(), avsc({"type": "fixed", "name": "a.F", "size": 4}),
     avsc({"type": "fixed", "name": "b.F", "size": 4}), set()),
    ("avro", Options(), avsc("int", "string"), avsc("int"), {("avro.type-mismatch", "error")}),
    ("avro", Options(), avsc("int", "string"), avsc("int", "long"), {("avro.union-branch", "error")}),
    ("avro", Options(), avsc({"type": "fixed", "name": "F", "size": 4}),
     avsc({"type": "fixed", "name": "G", "size": 4}), {("avro.name-mismatch", "error")}),
    ("avro", Options(), avsc_fields({"name": "a", "type": "int"}, {"name": "b", "type": "int"}),
     avsc_fields({"name": "a", "type": "int", "aliases": ["b"]}), {("avro.ambiguous-field", "error")}),
    # Spark read with a declared schema: docs/reference/parquet-and-spark.md §2.4-2.6,
    # docs/reference/compat-rules.md §5
    ("spark-read", Options(), one("int16"), one("int64"), {("spark-read.int32-family", "info")}),
    ("spark-read", Options(), one("int32"), one("decimal(12,2)"), {("spark-read.int-decimal", "info")}),
    ("spark-read", Options(), one("int64"), one("decimal(12,2)"), {("type-mismatch", "error")}),
    # the integer digits a decimal needs: 10 for INT32, 20 for INT64 (one fewer is refused)
    ("spark-read", Options(), one("int32"), one("decimal(11,2)"), {("type-mismatch", "error")}),
    ("spark-read", Options(), one("int64"), one("decimal(22,2)"), {("spark-read.int-decimal", "info")}),
    ("spark-read", Options(), one("int64"), one("decimal(21,2)"), {("type-mismatch", "error")}),
    # UINT32 fits no int: bigint or double only (docs/reference/parquet-and-spark.md §2.5)
    ("spark-read", Options(), one("uint32"), one("int32"), {("type-mismatch", "error")}),
    ("spark-read", Options(), one("uint32"), one("int64"), set()),  # Spark reads UINT32 as bigint
    ("spark-read", Options(), one("float"), one("double"), {("spark-read.float-double", "info")}),
    ("spark-read", Options(), one("date"), one("timestamp_us_local"), {("spark-read.date-ntz", "info")}),
    ("spark-read", Options(), one("date"), one("timestamp_us_utc"), {("type-mismatch", "error")}),
    ("spark-read", Options(), one("decimal(10,2)"), one("decimal(12,3)"),
     {("spark-read.decimal-widen", "info")}),
    ("spark-read", Options(), one("decimal(12,2)"), one("decimal(10,2)"), {("type-mismatch", "error")}),
    ("spark-read", Options(), one("decimal(10,3)"), one("decimal(12,2)"), {("type-mismatch", "error")}),
    ("spark-read", Options(), one("timestamp_us_utc"), one("timestamp_us_local"),
     {("spark-read.timestamp-relabel", "error")}),
    ("spark-read", Options(allow_quiet=True), one("timestamp_us_utc"), one("timestamp_us_local"),
     {("spark-read.timestamp-relabel", "warning")}),
    ("spark-read", Options(), one("string"), one("binary"), {("spark-read.string-binary", "error")}),
    ("spark-read", Options(), one("fixed(4)"), one("string"), {("type-mismatch", "error")}),  # FLBA: no
    ("spark-read", Options(), one("fixed(4)"), one("binary"), set()),
    # found by the truth tables (tests/truth/spark_read.csv): narrower reads wrap, binary is not
    # always UTF-8, declared reads of types Spark cannot infer, scale-0 decimals on INT32/INT64
    ("spark-read", Options(), one("int16"), one("int8"), {("spark-read.int-wraps", "error")}),
    ("spark-read", Options(), one("uint8"), one("int8"), {("spark-read.int-wraps", "error")}),
    ("spark-read", Options(), one("uint8"), one("int16"), set()),  # Spark's own view of UINT8
    ("spark-read", Options(), one("uint32"), one("double"), {("spark-read.int-wraps", "error")}),
    ("spark-read", Options(), one("binary"), one("string"), {("spark-read.binary-as-string", "error")}),
    ("spark-read", Options(), one("uuid"), one("binary"), {("spark-read.declared-storage", "info")}),
    ("spark-read", Options(), one("timestamp_ns_utc"), one("int64"),
     {("spark-read.declared-storage", "info")}),
    ("spark-read", Options(), one("uint64"), one("decimal(38,0)"), {("type-mismatch", "error")}),
    ("spark-read", Options(), Schema((Field("c", DecimalType(9, 0, "INT32")),)), one("int32"),
     {("spark-read.int32-family", "info")}),
    ("spark-read", Options(), Schema((Field("c", DecimalType(9, 0, "FIXED_LEN_BYTE_ARRAY")),)), one("int32"),
     {("type-mismatch", "error")}),
    ("spark-read", Options(), Schema((Field("c", DecimalType(18, 0, "INT64")),)), one("int32"),
     {("type-mismatch", "error")}),
    # values that would fit, but INT64 is never read as int (int64@INT64 in the truth table)
    ("spark-read", Options(), Schema((Field("c", DecimalType(9, 0, "INT64")),)), one("int32"),
     {("type-mismatch", "error")}),
    ("spark-read", Options(), one("int64"), one("double"), {("type-mismatch", "error")}),
    ("spark-read", Options(), one("timestamp_ns_utc"), one("timestamp_us_utc"),
     {("spark.illegal-type", "error")}),
    ("spark-read", Options(), one("int32"), one("int32", nullable=False), set()),
    ("spark-read", Options(), one("int32"),
     schema_from_notation({"fields": [{"name": "c", "type": "int32"},
                                      {"name": "d", "type": "int32", "nullable": False}]}), set()),
    ("spark-read", Options(), one({"enum": ["A", "B"]}), one({"enum": ["A"]}), set()),
    ("spark-read", Options(), one("json"), one("string"), set()),
    ("spark-read", Options(), one("date"), one("int32"), {("spark-read.reinterpreted", "error")}),
    ("spark-read", Options(), one("timestamp_us_utc"), one("int64"), {("spark-read.reinterpreted", "error")}),
    ("spark-read", Options(), one("int32"), one({"list": "int32"}), {("shape-mismatch", "error")}),
    # the row-by-row reader (vectorized reader off; tests/truth/spark_read_rows.csv): Spark 4.1's
    # ParquetRowConverter reads some changes the vectorized reader refuses, and refuses others
    ("spark-read", ROWS, one("int16"), one("int64"), {("spark-read.int32-family", "info")}),
    ("spark-read", ROWS, one("int8"), one("decimal(5,2)"), {("spark-read.rows.int-decimal", "info")}),
    ("spark-read", ROWS, one("int64"), one("decimal(19,0)"), {("spark-read.rows.int-decimal", "info")}),
    ("spark-read", ROWS, one("uint64"), one("decimal(38,0)"), {("spark-read.rows.int-decimal", "info")}),
    ("spark-read", ROWS, one("int64"), one("decimal(20,2)"), {("spark-read.rows.decimal-overflow", "error")}),
    ("spark-read", ROWS, one("decimal(12,2)"), one("decimal(10,2)"),
     {("spark-read.rows.decimal-overflow", "error")}),
    ("spark-read", Options(vectorized_reader=False, allow_quiet=True), one("decimal(10,3)"),
     one("decimal(12,2)"), {("spark-read.rows.decimal-overflow", "warning")}),
    ("spark-read", ROWS, one("decimal(10,2)"), one("decimal(12,3)"), {("spark-read.decimal-widen", "info")}),
    ("spark-read", ROWS, one("uint32"), one("int32"), {("spark-read.rows.reinterpreted", "error")}),
    ("spark-read", ROWS, one("timestamp_int96"), one("string"), {("spark-read.rows.reinterpreted", "error")}),
    ("spark-read", ROWS, one("timestamp_us_utc"), one("decimal(38,0)"),
     {("spark-read.rows.reinterpreted", "error")}),
    ("spark-read", ROWS, one("date"), one("int32"), {("spark-read.reinterpreted", "error")}),
    ("spark-read", ROWS, one("float"), one("decimal(38,10)"),
     {("spark-read.rows.decimal-physical", "error")}),
    ("spark-read", ROWS, one("string"), one("decimal(10,2)"),
     {("spark-read.rows.decimal-unannotated", "error")}),
    ("spark-read", ROWS, one("date"), one("timestamp_us_utc"), {("spark-read.rows.no-converter", "error")}),
    ("spark-read", ROWS, one("timestamp_ns_utc"), one("int64"), {("spark-read.declared-storage", "info")}),
    ("spark-read", ROWS, one("timestamp_ns_utc"), one("timestamp_us_utc"),
     {("spark-read.rows.no-converter", "error")}),
    ("spark-read", ROWS, one("int64"), one("int32"), {("spark-read.rows.setter-mismatch", "error")}),
    ("spark-read", ROWS, one("int32"), one("string"), {("spark-read.rows.setter-mismatch", "error")}),
    ("spark-read", ROWS, one("fixed(4)"), one("string"), {("spark-read.rows.reinterpreted", "error")}),
    # Delta read, docs/reference/compat-rules.md §4
    ("delta-read", Options(), one("int32"), one("int64"), {("delta-read.type-change", "error")}),
    ("delta-read", Options(type_widening=True), one("int32"), one("int64"),
     {("delta.widen.integer", "info")}),
    ("delta-read", Options(type_widening=True), one("float"), one("double"),
     {("delta.widen.float-double", "info")}),
    ("delta-read", Options(type_widening=True), one("int32"), one("double"),
     {("delta.widen.int-double", "info")}),
    ("delta-read", Options(type_widening=True, uniform=True), one("int32"), one("double"),
     {("delta-read.type-change", "error")}),
    ("delta-read", Options(type_widening=True), one("int64"), one("double"),
     {("delta-read.type-change", "error")}),
    ("delta-read", Options(type_widening=True), one("date"), one("timestamp_us_local"),
     {("delta.widen.date-ntz", "info")}),
    ("delta-read", Options(type_widening=True), one("decimal(10,2)"), one("decimal(13,3)"),
     {("delta.widen.decimal", "info")}),
    ("delta-read", Options(type_widening=True, uniform=True), one("decimal(10,2)"),
     one("decimal(13,3)"), {("delta-read.type-change", "error")}),
    ("delta-read", Options(type_widening=True), one("int64"), one("decimal(22,2)"),
     {("delta.widen.int-decimal", "info")}),
    # Delta refuses to add a NOT NULL column (DELTA_OPERATION_NOT_ALLOWED): old files would read
    # null into it (tests/test_oracle_delta_read.py); a nullable one reads as null
    ("delta-read", Options(), one("int32"),
     schema_from_notation({"fields": [{"name": "c", "type": "int32"},
                                      {"name": "d", "type": "int32", "nullable": False}]}),
     {("delta-read.missing", "error")}),
    ("delta-read", Options(), one("int32"),
     schema_from_notation({"fields": [{"name": "c", "type": "int32"}, {"name": "d", "type": "int32"}]}),
     set()),
    ("delta-read", Options(), one("int32"), one("int32", nullable=False), {("delta-read.tighten", "error")}),
    ("delta-read", Options(), one({"enum": ["A", "B"]}), one({"enum": ["A"]}), set()),
    # column mapping id: a file without field ids fails, a column without its id reads null
    ("delta-read", Options(column_mapping="id"), one("int32"), one("int32", id=1),
     {("delta.id-mode", "error")}),
    # another id is another column (a name dropped and added back): read null, as Delta intends
    ("delta-read", Options(column_mapping="id"), one("int32", id=7), one("int32", id=1), set()),
    ("delta-read", Options(column_mapping="id"), one("int32", id=1), one("int32", id=1), set()),
    # Iceberg, docs/reference/compat-rules.md §3
    ("iceberg", Options(), one("int32", id=1), one("int64", id=1), {("iceberg.promote.int-long", "info")}),
    ("iceberg", Options(), one("float", id=1), one("double", id=1),
     {("iceberg.promote.float-double", "info")}),
    ("iceberg", Options(), one("decimal(9,2)", id=1), one("decimal(12,2)", id=1),
     {("iceberg.promote.decimal", "info")}),
    ("iceberg", Options(), one("decimal(9,2)", id=1), one("decimal(12,3)", id=1),
     {("iceberg.type-change", "error")}),
    ("iceberg", Options(), one("int32", id=1), one("double", id=1), {("iceberg.type-change", "error")}),
    ("iceberg", Options(), one("date", id=1), one("timestamp_us_local", id=1),
     {("iceberg.type-change", "error")}),
    ("iceberg", Options(iceberg_version=3), one("date", id=1), one("timestamp_us_local", id=1),
     {("iceberg.v3.date-timestamp", "info")}),
    ("iceberg", Options(), one("int32", id=1), one("int32", nullable=False, id=2),
     {("iceberg.missing", "error")}),
    ("iceberg", Options(iceberg_version=3), one("int32", id=1),
     one("int32", nullable=False, id=2, default=0), set()),
    ("iceberg", Options(), one("int32", id=1),  # v2 has no initial-default
     one("int32", nullable=False, id=2, default=0), {("iceberg.missing", "error")}),
    # a name stands in for an id only when both sides lack one
    ("iceberg", Options(), one("int32", id=1), one("int32", nullable=False), {("iceberg.missing", "error")}),
    ("iceberg", Options(), one("int32"), one("int32", nullable=False, id=1), {("iceberg.missing", "error")}),
    ("iceberg", Options(), one("int32", id=1), one("int32", nullable=False, id=1),
     {("iceberg.tighten", "error")}),
    ("iceberg", Options(), one({"enum": ["A", "B"]}, id=1), one({"enum": ["A"]}, id=1), set()),
    # Delta streams: SchemaUtils.isReadCompatible(new schema, stream's schema, forbidTightenNullability)
    ("delta-stream", Options(), two("int32", "int32"), one("int32"), {("delta-stream.added", "error")}),
    ("delta-stream", Options(), one("int32"), two("int32", "int32"), set()),  # accepted without mapping
    ("delta-stream", Options(column_mapping="name"), one("int32"), two("int32", "int32"),
     {("delta-stream.dropped", "error")}),
    ("delta-stream", Options(), named("C"), one("int32"), {("delta-stream.renamed", "error")}),
    ("delta-stream", Options(), one("int64"), one("int32"), {("delta-stream.type-change", "error")}),
    ("delta-stream", Options(type_widening=True), one("int64"), one("int32"),
     {("delta-stream.type-change", "error")}),
    ("delta-stream", Options(), one("int32"), one("int32", nullable=False),
     {("delta-stream.tighten", "error")}),
    ("delta-stream", Options(), one("int32", nullable=False), one("int32"), set()),
    # Positional readers: a column of another name is bound all the same (rules/identity.py); a
    # rename in place reads as the same column, a name that moved binds another column's values
    ("positional", Options(), one("int32"), named("x"), set()),
    ("positional", Options(), one("int32"), named("x", "int64"), {("spark-read.int32-family", "info")}),
    ("positional", Options(), two("int32", "int32"), swapped("int32", "int32"),
     {("identity.position-misbound", "error")}),
    ("positional", Options(allow_quiet=True), two("int32", "int32"), swapped("int32", "int32"),
     {("identity.position-misbound", "warning")}),
    ("positional", Options(), two("int32", "int32"), swapped("int64", "int32"),
     {("identity.position-type", "error"), ("spark-read.int32-family", "info"),
      ("identity.position-misbound", "error")}),
    ("positional", Options(), one("int32"),
     schema_from_notation({"fields": [{"name": "c", "type": "int32"},
                                      {"name": "d", "type": "int32", "nullable": False, "default": 0}]}),
     set()),  # appended at the end with a default: read as its default
    ("positional", Options(), one("int32"),
     schema_from_notation({"fields": [{"name": "c", "type": "int32"},
                                      {"name": "d", "type": "int32", "nullable": False}]}),
     {("positional.missing", "error")}),
    ("positional", Options(), one("int32"), two("int32", "int32"), set()),
    ("positional", Options(), one("int32"), one("int32", nullable=False), set()),
    ("positional", Options(), one({"enum": ["A", "B"]}), one({"enum": ["A"]}), set()),
    # Merges (rules/merge.py)
    ("spark-merge", Options(), one("int32"), one("int64"), {("spark-merge.equal", "error")}),
    ("spark-merge", Options(), one("decimal(10,2)"), one("decimal(10,3)"),
     {("spark-merge.decimal-scale", "error")}),
    ("spark-merge", Options(), one("int32"), one({"list": "int32"}), {("merge.kind", "error")}),
    ("spark-merge", Options(), one("timestamp_ns_utc"), one("int32"), {("spark.illegal-type", "error")}),
    ("delta-merge", Options(), one("int64"), one("int32"), {("delta-merge.no-widening", "error")}),
    # table (reader) int64, data (writer) int32: narrower data fails even with widening
    ("delta-merge", Options(type_widening=True), one("int32"), one("int64"), {("delta-merge.type", "error")}),
    ("delta-merge", Options(type_widening=True), one("int64"), one("int32"), set()),
    # a write without mergeSchema (tests/test_oracle_delta_write.py): the table is the reader
    ("delta-write", Options(), one("int8"), one("int32"), set()),
    ("delta-write", Options(), one("int64"), one("int32"), {("delta-merge.no-widening", "error")}),
    ("delta-write", Options(type_widening=True), one("int64"), one("int32"),
     {("delta-write.schema-change", "error")}),
    ("delta-write", Options(), one("string"), one("string", False), {("delta-write.not-null", "warning")}),
    # MERGE INTO with schema evolution (tests/test_oracle_delta_merge_into.py): the source is the writer,
    # the table the reader; the table keeps its type where Spark casts implicitly, values cast under ANSI
    ("delta-merge-into", Options(), one("int32"), one("int64"), {("delta-merge-into.exact", "info")}),
    ("delta-merge-into", Options(), one("int64"), one("int32"), {("delta-merge-into.overflow", "error")}),
    ("delta-merge-into", Options(type_widening=True), one("int64"), one("int32"), set()),  # the table widens
    ("delta-merge-into", Options(), one("decimal(12,4)"), one("decimal(10,2)"),
     {("delta-merge-into.overflow", "error")}),  # 99999999.9999 rounds up past 8 integer digits
    ("delta-merge-into", Options(), one("decimal(10,4)"), one("decimal(10,2)"),
     {("delta-merge-into.rounded", "error")}),
    ("delta-merge-into", Options(), one("uint16"), one("decimal(9,2)"), {("delta-merge-into.exact", "info")}),
    ("delta-merge-into", Options(), one("int32"), one("float"), {("delta-merge-into.rounded", "error")}),
    ("delta-merge-into", Options(), one("int16"), one("float"), {("delta-merge-into.exact", "info")}),
    ("delta-merge-into", Options(), one("string"), one("int32"),
     {("delta-merge-into.invalid-text", "error")}),
    ("delta-merge-into", Options(), one("date"), one("timestamp_us_utc"),
     {("delta-merge-into.date-timestamp", "info")}),
    ("delta-merge-into", Options(), one("timestamp_us_utc"), one("date"),
     {("delta-merge-into.to-date", "error")}),
    ("delta-merge-into", Options(), one("timestamp_us_utc"), one("timestamp_us_local"),
     {("delta-merge-into.timestamp-relabel", "error")}),
    ("delta-merge-into", Options(), one("string"), one("binary"),
     {("delta-merge-into.string-binary", "error")}),
    ("delta-merge-into", Options(), one("boolean"), one("string"), {("delta-merge-into.as-text", "error")}),
    ("delta-merge-into", Options(), one("boolean"), one("int32"), {("delta-merge-into.no-cast", "error")}),
    ("delta-merge-into", Options(), named("d", "string"), one("string", False),
     {("delta-merge-into.missing", "error")}),  # INSERT * writes null into `c`
    ("delta-merge-into", Options(), one("string"), one("string", False),
     {("delta-merge-into.not-null", "warning")}),
    ("delta-merge-into", Options(case_sensitive=True), named("C"), named("c"),
     {("delta-merge-into.case", "error")}),
    ("delta-merge-into", Options(), named("C"), named("c"), set()),
    # void (Spark's NullType): checked against Spark and delta-spark in tests/test_void.py
    ("delta-merge", Options(), one("void"), one("string"), set()),
    ("delta-merge", Options(), one("string"), one("void"), set()),
    ("delta-merge", Options(), one("void"), one({"struct": [{"name": "a", "type": "int32"}]}), set()),
    ("spark-merge", Options(), one("void"), one("string"), {("spark-merge.equal", "error")}),
    ("spark-read", Options(), one("void"), one("string"), {("void.written", "info")}),
    ("delta-read", Options(), one("void"), one({"list": "int64"}), {("void.written", "info")}),
    ("spark-read", Options(vectorized_reader=False), one("int64"), one("void"), {("void.reader", "error")}),
    ("positional", Options(), one({"struct": [{"name": "a", "type": "int32"}]}), one("void"),
     {("void.reader", "error")}),
    ("iceberg", Options(), one("void"), one("string"), {("iceberg.type-change", "error")}),
    # a timestamp_ntz column added to a table without one needs the timestampNtz feature (observed)
    ("delta-merge", Options(), schema_from_notation({"fields": [
        {"name": "c", "type": "int8"}, {"name": "d", "type": "timestamp_us_local"}]}), one("int8"),
     {("delta-merge.timestamp-ntz", "error")}),
    ("delta-merge", Options(), one("timestamp_us_local"), one("timestamp_us_local"), set()),
    # ANSI intervals: checked against Spark's readers and mergeSchema in tests/test_intervals.py
    ("spark-read", Options(), one("interval_year_to_month"), one("interval_year"),
     {("spark-read.interval-fields", "error")}),
    ("spark-read", Options(), one("interval_day"), one("interval_hour_to_second"),
     {("spark-read.interval-kind", "info")}),
    ("spark-read", Options(), one("int32"), one("interval_month"),
     {("spark-read.interval-relabel", "error")}),
    ("spark-read", Options(), one("interval_day_to_second"), one("int64"),
     {("spark-read.interval-relabel", "error")}),
    ("spark-read", Options(), one("interval_day"), one("interval_month"), {("type-mismatch", "error")}),
    ("spark-merge", Options(), one("interval_year"), one("interval_day"),
     {("spark-merge.interval", "error")}),
    ("spark-merge", Options(), one("interval_year"), one("interval_month"), set()),
    ("delta-merge", Options(), one("interval_day"), one("interval_day"),
     {("delta.interval", "error")}),
    ("iceberg", Options(), one("int64"), one("interval_day"), {("iceberg.interval", "error"),
                                                               ("iceberg.type-change", "error")}),
]

# Rows that describe how fields are matched rather than a verdict: covered by the identity tests.
DOCUMENTATION_ROWS = {"spark.identity", "delta.identity", "iceberg.identity", "delta-stream.identity",
                      "positional.identity", "spark-read.missing", "spark-read.nullability",
                      "delta-read.missing", "positional.nullability",
                      "delta-merge.void",  # a merge that succeeds names no rule: tests/test_void.py
                      "delta.drop-rename",  # table_refusals, not can_read: tests/test_delta_refusals.py
                      "delta-merge-into.identity", "delta-merge-into.nullability"}


@pytest.mark.parametrize(("profile", "options", "writer", "reader", "expected"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_row(profile: str, options: Options, writer: Schema, reader: Schema,
                  expected: set[tuple[str, str]]) -> None:
    assert rules_of(can_read(writer, reader, profile, options)) == expected


# the read profiles' tables, and the one MERGE INTO runs on its source against the evolved table
TABLES = [*(p.table for p in PROFILES.values() if isinstance(p, ReadProfile)), read.DELTA_MERGE_INTO]


def table_rules(t: read.Table) -> list[base.Rule]:
    return [r for r in (t.identity, t.missing, t.tighten, t.mismatch, t.extra, t.renamed, t.ids_only)
            if r is not None]


def promotion_rows(t: read.Table) -> tuple[promotions.Promotion, ...]:
    return (*t.promotions, *(t.rows or ()))


def all_rule_ids() -> set[str]:
    ids = {p.rule.id for t in TABLES for p in promotion_rows(t)} | {r.id for r in avro_rules.RULES.values()}
    for t in TABLES:
        ids |= {r.id for r in table_rules(t)}
    for module in (base, spark_view, read, promotions, merge_rules, avro_rules, profile_rules):
        ids |= {v.id for v in vars(module).values() if isinstance(v, base.Rule)}
    return ids


# How Spark sees a Parquet type (docs/reference/parquet-and-spark.md §2.4, ParquetToSparkSchemaConverter)
SPARK_VIEWS = [("uint8", "int16"), ("uint16", "int32"), ("uint32", "int64"), ("uint64", "decimal(20,0)"),
               ("timestamp_int96", "timestamp_us_utc"), ("timestamp_ms_utc", "timestamp_us_utc"),
               ("timestamp_ms_local", "timestamp_us_local"), ("json", "string"), ("fixed(4)", "binary")]


@pytest.mark.parametrize(("parquet", "seen"), SPARK_VIEWS)  # not `spark`: that name is the session fixture
def test_how_spark_sees_a_parquet_type(parquet: str, seen: str) -> None:
    from schemaguard.formats.notation import parse_primitive

    assert spark_view.spark_view(parse_primitive(parquet)) == parse_primitive(seen)


def test_avro_rules_are_javas_incompatibility_types() -> None:
    """Each of Java's SchemaIncompatibilityType names (avro-python spells them in lower case) has
    its rule, and so has AMBIGUOUS_FIELD, where Java throws instead; no other code has one."""
    java = {ProblemCode(t.name.upper()) for t in SchemaIncompatibilityType}
    assert set(avro_rules.RULES) == java | {ProblemCode.AMBIGUOUS_FIELD}


def test_every_problem_code_is_raised_by_a_rule() -> None:
    """No problem code only declared: each member is named where a rule module makes problems."""
    rules = "\n".join(p.read_text(encoding="utf-8") for p in Path(avro_rules.__file__).parent.glob("*.py"))
    assert [c.name for c in ProblemCode if f"ProblemCode.{c.name}" not in rules] == []


def test_every_rule_row_has_a_case() -> None:
    covered = {rule for *_, expected in CASES for rule, _ in expected}
    assert all_rule_ids() - covered - DOCUMENTATION_ROWS == set()


def test_every_rule_cites_a_source() -> None:
    for t in TABLES:
        for rule in (*table_rules(t), *(p.rule for p in promotion_rows(t))):
            assert rule.source and (".md" in rule.source), rule


# ---------------------------------------------------------------------------------------------
# Identity (spark.identity, delta.identity, iceberg.identity, avro.identity, positional.identity)

RENAMED = (schema_from_notation({"fields": [{"name": "amount", "id": 3, "type": "int64",
                                             "nullable": False}]}),
           schema_from_notation({"fields": [{"name": "total", "id": 3, "type": "int64",
                                             "nullable": False}]}))


def test_rename_by_id_reads_under_iceberg_and_delta_column_mapping() -> None:
    old, new = RENAMED
    assert not errors(can_read(old, new, "iceberg"))
    assert not errors(can_read(old, new, "delta-read", Options(column_mapping="id")))
    assert not errors(can_read(old, new, "delta-read", Options(column_mapping="name")))


def test_rename_by_name_is_drop_and_add() -> None:
    old, new = RENAMED
    assert errors(can_read(old, new, "avro"))  # total has no default (§1 rename, no alias)
    assert can_read(old, new, "spark-read") == []  # total reads as null: silently
    assert errors(can_read(old, new, "iceberg", Options(identity="name")))


def test_avro_reader_alias() -> None:
    old = schema_from_notation({"fields": [{"name": "amount", "type": "int64"}]})
    new = schema_from_notation({"fields": [{"name": "total", "type": "int64", "aliases": ["amount"]}]})
    assert not errors(can_read(old, new, "avro"))
    assert errors(can_read(new, old, "avro"))  # only the reader's aliases count (§1)


def test_case_only_names() -> None:
    old = schema_from_notation({"fields": [{"name": "Amount", "type": "int64"}]})
    new = schema_from_notation({"fields": [{"name": "amount", "type": "int64", "nullable": False}]})
    assert not errors(can_read(old, new, "spark-read"))
    problems = can_read(old, new, "spark-read", Options(case_sensitive=True))
    assert problems == []  # case-sensitive: `amount` is another column, read as null
    assert errors(can_read(old, new, "avro"))  # Avro names are case-sensitive, no default


def test_positional_reorder_binds_the_wrong_column() -> None:
    old = schema_from_notation({"fields": [{"name": "a", "type": "int64"}, {"name": "b", "type": "int64"}]})
    new = schema_from_notation({"fields": [{"name": "b", "type": "int64"}, {"name": "a", "type": "int64"}]})
    assert can_read(old, new, "spark-read") == []
    assert {p.code for p in can_read(old, new, "positional")} == {"POSITION_NAME_MISMATCH"}


# ---------------------------------------------------------------------------------------------
# Modes, docs/reference/compat-rules.md §2 (the Confluent AvroCompatibilityTest facts)

S1 = schema_from_notation({"fields": [{"name": "f1", "type": "string", "nullable": False}]})
S2 = schema_from_notation({"fields": [{"name": "f1", "type": "string", "nullable": False},
                                      {"name": "f2", "type": "string", "nullable": False,
                                       "default": "foo"}]})
S3 = schema_from_notation({"fields": [{"name": "f1", "type": "string", "nullable": False},
                                      {"name": "f2", "type": "string", "nullable": False}]})


@pytest.mark.parametrize(("mode", "failed"), [
    (Mode.BACKWARD, []), (Mode.BACKWARD_TRANSITIVE, [(1, 3)]), (Mode.FULL, []),
    (Mode.FULL_TRANSITIVE, [(1, 3)]), (Mode.FORWARD, []), (Mode.FORWARD_TRANSITIVE, []),
    (Mode.NONE, []),
])
def test_confluent_s3_after_s1_s2(mode: Mode, failed: list[tuple[int, int]]) -> None:
    assert [(f.writer_version, f.reader_version) for f in check([S1, S2], S3, mode, "avro")] == failed


def test_confluent_forward_transitive_rejects_s1_after_s3_s2() -> None:
    failures = check([S3, S2], S1, Mode.FORWARD_TRANSITIVE, "avro")
    assert [(f.writer_version, f.reader_version) for f in failures] == [(3, 1)]  # s3 reads s1


def test_pairs_follow_the_registry() -> None:
    assert pairs(3, Mode.BACKWARD) == [(3, 4)]
    assert pairs(3, Mode.FORWARD) == [(4, 3)]
    assert pairs(2, Mode.FULL_TRANSITIVE) == [(2, 3), (3, 2), (1, 3), (3, 1)]
    assert pairs(0, Mode.FULL) == []


@pytest.mark.parametrize("widening", [False, True])
def test_delta_merge_of_byte_short_int_takes_the_wider(widening: bool) -> None:
    # Observed on Delta 4.4.0 (probed for every pair of byte/short/int/long): without type widening
    # a byte table appended short data becomes smallint, a short table with int data int; narrower
    # data leaves the table's type.
    for table, data, merged in (("int8", "int16", "int16"), ("int16", "int32", "int32"),
                                ("int32", "int8", "int32"), ("int16", "int8", "int16")):
        result = merge_schemas([one(table), one(data)], "delta-merge", Options(type_widening=widening))
        assert result.merged == one(merged), (table, data)


def test_merge_keeps_order_and_ors_nullability() -> None:
    left = schema_from_notation({"fields": [{"name": "b", "type": "int32", "nullable": False},
                                            {"name": "a", "type": "decimal(10,2)", "nullable": False}]})
    right = schema_from_notation({"fields": [{"name": "c", "type": "string"},
                                             {"name": "A", "type": "decimal(12,2)"}]})
    result = merge_schemas([left, right], "spark-merge")
    assert result.merged is not None
    assert [(f.name, f.nullable) for f in result.merged.fields] == [("b", False), ("a", True), ("c", True)]
    assert result.merged.fields[1].type == schema_from_notation(
        {"fields": [{"name": "x", "type": "decimal(12,2)"}]}).fields[0].type
    sensitive = merge_schemas([left, right], "spark-merge", Options(case_sensitive=True))
    assert [f.name for f in sensitive.merged.fields] == ["b", "a", "c", "A"]  # type: ignore[union-attr]


def test_the_rules_page_lists_the_registry() -> None:
    # docs/rules.md names the profiles in one sentence; it must be the registry's list, in its order.
    page = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")
    sentence = " ".join(page.split("The profiles, by name:", 1)[1].split(".", 1)[0].split())
    assert [name.strip(" `,") for name in sentence.split(", ")] == list(PROFILES)


# One-pass conflicts: what restarting the merge without each conflicting field finds.
_near_names = st.sampled_from(["a", "b", "A", "c"])
_near_leaves = st.sampled_from([one(t).fields[0].type for t in (
    "int32", "int64", "int8", "decimal(10,2)", "decimal(12,2)", "decimal(10,3)", "string",
    "timestamp_us_local", "timestamp_us_utc", "uint64", "time_us", "time_ms")])
_near_types: st.SearchStrategy[DataType] = st.recursive(
    _near_leaves,
    lambda inner: st.one_of(
        st.lists(st.builds(Field, _near_names, inner, st.booleans()), max_size=3,
                 unique_by=lambda f: f.name).map(lambda fs: StructType(tuple(fs))),
        st.builds(ListType, inner, st.booleans()),
        st.builds(MapType, _near_leaves, inner, st.booleans())),
    max_leaves=6)
_near_schemas = st.lists(st.builds(Field, _near_names, _near_types, st.booleans()), max_size=4,
                         unique_by=lambda f: f.name).map(lambda fs: Schema(tuple(fs)))


@settings(max_examples=150, deadline=None)
@given(st.lists(_near_schemas, min_size=1, max_size=4), st.sampled_from(["spark-merge", "delta-merge"]),
       st.booleans())
def test_one_pass_names_each_conflict_a_restarted_merge_would_stop_at(
        inputs: list[Schema], name: str, widening: bool) -> None:
    """Conflict k is the first conflict of the merge with conflicts 0..k-1 taken out of every input
    (Spark and Delta stop at the first), and without them all the merge succeeds. Only for rules
    of one field: Delta's timestamp_ntz rule is the table's feature, on while the table has such a
    column at all, so taking a clashing one out of the table would turn off what Delta keeps on
    (that rule is checked against delta-spark in tests/test_oracle_delta_merge.py)."""
    assume(name != "delta-merge" or not any(isinstance(t, TimestampType) and not t.utc
                                            for s in inputs for _, t, _ in walk(s)))
    options = Options(type_widening=widening)
    found = merge_schemas(inputs, name, options).conflicts
    for k, conflict in enumerate(found):
        without = [merge_rules.drop(s, *(c.path for c in found[:k])) for s in inputs]
        assert merge_schemas(without, name, options).conflicts[0] == conflict
    clean = merge_schemas([merge_rules.drop(s, *(c.path for c in found)) for s in inputs], name, options)
    assert clean.ok and clean.merged is not None
