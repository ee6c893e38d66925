"""Differential test: an Avro schema read as a table (`formats.avro.schema_from_avsc`) against
spark-avro's own `SchemaConverters.toSqlType` (spark-avro 4.1.1, fetched by `make test` into
`.jars/test/`), reached through the shared session's py4j gateway and read through its API: the
returned type's `json()` and the exception's class or error condition, never printed text.

The documents are every kind of Avro schema (tests/avro_strategies.py), each parsed by Java's
parser first. What is asserted for each:

- a top-level record spark-avro converts: our columns as Spark types are its struct exactly
  (names, order, nesting, nullability, every leaf), metadata aside (spark-avro keeps no Avro
  attribute). Our model keeps Avro's logical types that Spark has no type for; `SPARK_AVRO_LEAF`
  says what spark-avro makes of each (enum and uuid: string, fixed: binary, time-millis: int,
  time-micros and the nanosecond timestamps: long, millisecond timestamps: microsecond ones);
- a record it refuses (a recursive type: `IncompatibleSchemaException`): ours is unmodelled, and
  says why; a decimal wider than 38 digits (`DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION`): ours holds
  that decimal, which every Spark profile refuses;
- any other top level: ours is unmodelled. spark-avro converts a top-level union to a struct, and
  Spark's reader then fails on the file (pinned in `test_spark_reads_no_top_level_union`).

One divergence is pinned, not generated: a `fixed(16)` with the `uuid` logical type is a uuid in
our model (the Avro spec's meaning, which the avro profile compares) and binary to spark-avro;
generated documents leave that logical type off fixed types.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from schemaguard.formats.avro import schema_from_avsc
from schemaguard.formats.spark import schema_to_spark_json
from schemaguard.model import (
    BinaryType,
    DataType,
    DecimalType,
    EnumType,
    FixedType,
    IntType,
    PrimitiveType,
    Schema,
    SchemaTransform,
    StringType,
    TimestampType,
    TimeType,
    UuidType,
    transform,
    walk,
)
from tests.avro_strategies import schemas
from tests.java_avro import java_parse
from tests.oracles import oracle_settings

INCOMPATIBLE = "org.apache.spark.sql.avro.IncompatibleSchemaException"
TOO_WIDE = "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"
SCHEMAS = 150


def spark_avro(spark: Any, avsc: Any) -> dict[str, Any] | str:
    """spark-avro's type for a document as Spark type JSON, or its refusal: the exception's error
    condition, else its Java class."""
    converters = spark.sparkContext._jvm.org.apache.spark.sql.avro.SchemaConverters
    try:
        converted = converters.toSqlType(java_parse(spark, avsc))
    except PySparkException as e:
        return str(e.getCondition())
    except Py4JJavaError as e:
        return str(e.java_exception.getClass().getName())
    doc: dict[str, Any] = json.loads(converted.dataType().json())
    return doc


def _leaf(t: PrimitiveType | EnumType) -> DataType:
    if isinstance(t, EnumType | UuidType):
        return StringType()
    if isinstance(t, FixedType):
        return BinaryType()
    if isinstance(t, TimeType):
        return IntType(32) if t.unit == "ms" else IntType(64)
    if isinstance(t, TimestampType):
        return IntType(64) if t.unit == "ns" else TimestampType("us", t.utc)
    return t


class _SparkAvroLeaves(SchemaTransform):
    """`SPARK_AVRO_LEAF` on every leaf: what spark-avro's `toSqlType` makes of each Avro logical type
    the model keeps (SchemaConverters, Spark 4.1)."""

    def enum(self, t: EnumType, path: str) -> DataType:
        return _leaf(t)

    def primitive(self, t: PrimitiveType, path: str) -> DataType:
        return _leaf(t)


SPARK_AVRO_LEAF = _SparkAvroLeaves()


def _no_metadata(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _no_metadata(v) for k, v in doc.items() if k != "metadata"}
    if isinstance(doc, list):
        return [_no_metadata(v) for v in doc]
    return doc


def ours_as_spark(schema: Schema) -> Any:
    return _no_metadata(json.loads(schema_to_spark_json(transform(schema, SPARK_AVRO_LEAF))))


def _plain_fixed(doc: Any) -> Any:
    """The document with `uuid` taken off fixed types (the pinned divergence above)."""
    if isinstance(doc, dict):
        fixed_uuid = doc.get("type") == "fixed" and doc.get("logicalType") == "uuid"
        return {k: _plain_fixed(v) for k, v in doc.items() if not (fixed_uuid and k == "logicalType")}
    if isinstance(doc, list):
        return [_plain_fixed(v) for v in doc]
    return doc


def differs(spark: Any, avsc: Any) -> str | None:
    """None when our reading of the document as a table is spark-avro's (module docstring)."""
    ours, theirs = schema_from_avsc(avsc), spark_avro(spark, avsc)
    is_record = isinstance(avsc, dict) and avsc.get("type") == "record"
    if not is_record:
        return None if ours.unmodelled and ours.unmodelled.startswith("a top-level") else \
            f"a top level that is not a record, ours {ours.unmodelled!r}"
    if theirs == INCOMPATIBLE:
        return None if ours.unmodelled and "recursive type" in ours.unmodelled else \
            f"spark-avro refuses it, ours {ours.unmodelled!r}"
    if ours.unmodelled is not None:
        return f"ours unmodelled ({ours.unmodelled}), spark-avro {theirs}"
    if theirs == TOO_WIDE:
        wide = any(isinstance(t, DecimalType) and t.precision > 38 for _, t, _ in walk(ours))
        return None if wide else "spark-avro: a decimal over 38 digits, ours has none"
    if isinstance(theirs, str):
        return f"spark-avro refused it with {theirs}"
    mine = ours_as_spark(ours)
    return None if mine == _no_metadata(theirs) else f"ours {mine}\nspark-avro {_no_metadata(theirs)}"


@pytest.mark.slow
@oracle_settings(SCHEMAS)
@given(schemas())
def test_avro_schemas_read_as_tables_as_spark_avro_reads_them(spark: Any, avsc: Any) -> None:
    avsc = _plain_fixed(avsc)
    why = differs(spark, avsc)
    assert why is None, f"{why}\n{json.dumps(avsc)}"


def record(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": "R", "fields": list(fields)}


@pytest.mark.parametrize("avsc", [
    record({"name": "n", "type": "null"}),
    record({"name": "n", "type": ["null"]}),
    record({"name": "n", "type": []}),
    record({"name": "n", "type": {"type": "array", "items": "null"}}),
    record({"name": "n", "type": {"type": "map", "values": "null"}}),
    record({"name": "u", "type": ["null", "int", "string"]}),
    record({"name": "u", "type": ["long", "int"]}, {"name": "f", "type": ["float", "null", "double"]}),
    record({"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}}),
    record({"name": "L", "type": {"type": "record", "name": "L", "fields": [
        {"name": "next", "type": ["null", "L"]}]}}),
], ids=["null", "null-union", "empty-union", "null-items", "null-values", "union", "widened", "decimal-40",
        "recursive"])
def test_named_documents_read_as_spark_avro_reads_them(spark: Any, avsc: Any) -> None:
    assert differs(spark, avsc) is None


def test_fixed_uuid_is_a_uuid_to_us_and_binary_to_spark_avro(spark: Any) -> None:
    avsc = record({"name": "id", "type": {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"}})
    assert schema_from_avsc(avsc).fields[0].type == UuidType()
    assert spark_avro(spark, avsc) == {"type": "struct", "fields": [
        {"name": "id", "type": "binary", "nullable": False, "metadata": {}}]}


def test_spark_reads_no_top_level_union(spark: Any, tmp_path: Path) -> None:
    """spark-avro infers a struct from a top-level union, then fails to read the file's rows."""
    import avro.datafile
    import avro.io
    import avro.schema

    union = ["null", record({"name": "a", "type": "int"})]
    path = tmp_path / "u.avro"
    with avro.datafile.DataFileWriter(path.open("wb"), avro.io.DatumWriter(),
                                      avro.schema.parse(json.dumps(union))) as writer:
        writer.append({"a": 1})
    frame = spark.read.format("avro").load(str(path))
    assert [f.name for f in frame.schema.fields] == ["a"]
    with pytest.raises(Py4JJavaError) as refused:
        frame.collect()
    assert refused.value.java_exception.getCondition() == "FAILED_READ_FILE.NO_HINT"
    unmodelled = schema_from_avsc(union).unmodelled
    assert unmodelled == "a top-level union: spark-avro reads only a record as a table"
