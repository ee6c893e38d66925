"""Iceberg schema JSON and name mappings into the model: every type of the spec, as pyiceberg
serializes it; nesting with ids; v3 defaults; name mappings with aliases, lists and maps; and
the files pyiceberg writes for a schema hold the same leaf types as our decoding of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from schemaguard.formats.iceberg import WRITE_DEFAULT_KEY, iceberg_schema, name_mapping
from schemaguard.formats.io import SchemaLoadError
from schemaguard.formats.notation import describe
from schemaguard.formats.parquet import read_footer
from schemaguard.model import Schema, fields_of, leaves

PRIMITIVES = [
    (BooleanType(), "boolean"), (IntegerType(), "int32"), (LongType(), "int64"), (FloatType(), "float"),
    (DoubleType(), "double"), (DecimalType(10, 2), "decimal(10,2)"), (DateType(), "date"),
    (TimeType(), "time_us"), (TimestampType(), "timestamp_us_local"), (TimestamptzType(), "timestamp_us_utc"),
    (StringType(), "string"), (UUIDType(), "uuid"), (FixedType(16), "fixed(16)"), (BinaryType(), "binary"),
]


def decoded(schema: IcebergSchema) -> Schema:
    return iceberg_schema(json.loads(schema.model_dump_json()))


def test_every_primitive_type_of_the_spec() -> None:
    schema = IcebergSchema(*(NestedField(i + 1, f"c{i}", t, required=i % 2 == 0)
                             for i, (t, _) in enumerate(PRIMITIVES)))
    ours = decoded(schema)
    assert [(f.name, describe(f.type), f.nullable, f.id) for f in ours.fields] == [
        (f"c{i}", text, i % 2 == 1, i + 1) for i, (_, text) in enumerate(PRIMITIVES)]


@pytest.mark.parametrize(("text", "described"), [
    ("timestamp_ns", "timestamp_ns_local"), ("timestamptz_ns", "timestamp_ns_utc"),
    ("decimal(38, 0)", "decimal(38,0)"), ("fixed[3]", "fixed(3)"), ("variant", "variant"),
])
def test_v3_and_spelled_types(text: str, described: str) -> None:
    field = {"id": 1, "name": "x", "required": False, "type": text}
    ours = iceberg_schema({"type": "struct", "fields": [field]})
    assert describe(ours.fields[0].type) == described


def test_nesting_keeps_ids_and_nullability() -> None:
    schema = IcebergSchema(
        NestedField(1, "s", StructType(NestedField(2, "a", IntegerType(), required=True)), required=False),
        NestedField(3, "xs", ListType(4, StructType(NestedField(5, "b", StringType())),
                                      element_required=True)),
        NestedField(6, "m", MapType(7, StringType(), 8, LongType(), value_required=False)))
    ours = decoded(schema)
    assert [(p, f.id, f.nullable) for p, f in fields_of(ours)] == [
        ("s", 1, True), ("s.a", 2, False), ("xs", 3, True), ("xs[].b", 5, True), ("m", 6, True)]
    assert {p: describe(t) for p, (t, _) in leaves(ours).items()} == {
        "s.a": "int32", "xs[].b": "string", "m{key}": "string", "m{value}": "int64"}


def test_v3_defaults_are_the_fields_defaults() -> None:
    ours = iceberg_schema({"type": "struct", "fields": [
        {"id": 1, "name": "n", "required": True, "type": "int", "initial-default": 7, "write-default": 9}]})
    [f] = ours.fields
    assert f.default == 7 and f.meta[WRITE_DEFAULT_KEY] == "9" and not f.nullable


def test_a_schema_that_is_not_iceberg_is_one_clear_error() -> None:
    for bad in ({"type": "struct", "fields": [{"id": 1, "name": "x", "required": False, "type": "unknown"}]},
                {"type": "struct", "fields": [{"name": "x", "type": "int"}]},
                {"type": "record", "fields": []}):
        with pytest.raises(SchemaLoadError):
            iceberg_schema(bad)


def test_name_mapping_paths_aliases_and_slots() -> None:
    doc: list[dict[str, Any]] = [
        {"field-id": 1, "names": ["id", "record_id"]},
        {"field-id": 2, "names": ["xs"], "fields": [
            {"field-id": 3, "names": ["element"], "fields": [{"field-id": 4, "names": ["b"]}]}]},
        {"field-id": 5, "names": ["m"], "fields": [
            {"field-id": 6, "names": ["key"]}, {"field-id": 7, "names": ["value"]}]},
        {"names": ["unmapped"]},
    ]
    mapped = name_mapping(doc)
    assert {p: mapped[p] for p in ("id", "record_id", "xs", "xs[]", "xs[].b", "m", "m{key}", "m{value}")} == {
        "id": 1, "record_id": 1, "xs": 2, "xs[]": 3, "xs[].b": 4, "m": 5, "m{key}": 6, "m{value}": 7}
    assert "unmapped" not in mapped


def test_the_files_pyiceberg_writes_hold_the_types_we_decode(tmp_path: Path) -> None:
    """pyiceberg's Arrow schema for a table, written as Parquet, read back by our footer reader:
    each field's id and leaf type equals our decoding of the Iceberg schema."""
    supported = [(t, text) for t, text in PRIMITIVES if not isinstance(t, TimeType | UUIDType)]
    schema = IcebergSchema(*(NestedField(i + 1, f"c{i}", t) for i, (t, _) in enumerate(supported)),
                           NestedField(100, "s", StructType(NestedField(101, "a", LongType()))))
    path = tmp_path / "f.parquet"
    pq.write_table(schema.as_arrow().empty_table(), path)
    footer = read_footer(str(path), rel="f.parquet")
    ours = decoded(schema)
    assert {p: f.id for p, f in fields_of(footer.footer.schema)} == {p: f.id for p, f in fields_of(ours)}
    assert {p: describe(t) for p, (t, _) in leaves(footer.footer.schema).items()} == {
        p: describe(t) for p, (t, _) in leaves(ours).items()}
