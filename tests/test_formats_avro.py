"""Avro `.avsc` <-> model. The `avro` package (avro-python 1.12.2) is the oracle: every document we
write must pass `avro.schema.parse`, and its compatibility checker must agree with our naming."""

from __future__ import annotations

import json
import operator
import re
import string
import warnings
from pathlib import Path
from typing import Any

import avro.errors
import avro.schema
import pytest
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType
from hypothesis import given
from hypothesis import strategies as st

from schemaguard.formats.avro import AvroSchemaError, schema_from_avsc, schema_to_avsc
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    Field,
    FixedType,
    FloatType,
    Int96Type,
    IntType,
    JsonType,
    ListType,
    MapType,
    Schema,
    StringType,
    StructType,
    TimestampType,
    TimeType,
    UuidType,
    canonical_json,
    make_metadata,
)
from schemaguard.sources import load_schemas
from tests.strategies import PROPERTY, decimals, json_values


def parse_with_avro(doc: dict[str, Any]) -> avro.schema.Schema:
    """The oracle's parse; it warns about logical types it does not know (nanos, local-*), which
    the spec tells readers to ignore, so those warnings are not failures."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", avro.errors.IgnoredLogicalType)
        return avro.schema.parse(json.dumps(doc))


def record(*fields: dict[str, Any], name: str = "r") -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields)}


def one_type(avro_type: Any) -> tuple[DataType, bool]:
    """The model type and nullability that one field of this Avro type reads as."""
    (f,) = schema_from_avsc(record({"name": "x", "type": avro_type})).fields
    return f.type, f.nullable


# ---------------------------------------------------------------------------------------------
# Strategies: schemas whose every type Avro expresses exactly (model -> avsc -> model is identity)


_HEAD = string.ascii_letters + "_"
avro_names = st.builds(operator.add, st.sampled_from(_HEAD), st.text(_HEAD + string.digits, max_size=7))

EXACT_PRIMITIVES: list[DataType] = [
    BooleanType(), IntType(32), IntType(64), FloatType(32), FloatType(64), StringType(), BinaryType(),
    UuidType(), DateType(), TimeType("ms"), TimeType("us"),
    *(TimestampType(unit, utc) for unit in ("ms", "us", "ns") for utc in (True, False)),
]


@st.composite
def avro_enums(draw: st.DrawFn) -> EnumType:
    symbols = draw(st.lists(avro_names, min_size=1, max_size=4, unique=True))
    return EnumType(tuple(symbols), draw(st.none() | st.sampled_from(symbols)))


avro_metadata_keys = st.sampled_from(["doc", "unit", "semantic", "connect.name"]) | st.text(
    min_size=1, max_size=6
).filter(lambda k: k not in {"name", "type", "default", "aliases", "field-id", "order"})


def avro_fields(types: st.SearchStrategy[DataType]) -> st.SearchStrategy[tuple[Field, ...]]:
    field = st.builds(
        Field,
        name=avro_names,
        type=types,
        nullable=st.booleans(),
        id=st.none() | st.integers(-(2**31), 2**63),
        default_json=st.none() | json_values.map(canonical_json),
        aliases=st.lists(avro_names, max_size=2).map(tuple),
        metadata=st.dictionaries(avro_metadata_keys, st.text(max_size=8), max_size=2).map(make_metadata),
    )
    return st.lists(field, max_size=4, unique_by=lambda f: f.name).map(tuple)


avro_types: st.SearchStrategy[DataType] = st.recursive(
    st.sampled_from(EXACT_PRIMITIVES) | decimals() | st.builds(FixedType, st.integers(1, 32)) | avro_enums(),
    lambda inner: st.one_of(
        avro_fields(inner).map(StructType),
        st.builds(ListType, inner, st.booleans()),
        st.builds(MapType, st.just(StringType()), inner, st.booleans()),
    ),
    max_leaves=8,
)


@pytest.mark.slow
@PROPERTY
@given(avro_fields(avro_types).map(Schema))
def test_model_to_avsc_to_model_is_identity_and_avro_accepts_every_document(schema: Schema) -> None:
    doc = schema_to_avsc(schema)
    parse_with_avro(doc)
    assert schema_from_avsc(json.loads(json.dumps(doc))) == schema
    assert schema_to_avsc(schema_from_avsc(doc)) == doc


# ---------------------------------------------------------------------------------------------
# avsc -> model


@pytest.mark.parametrize(
    ("avro_type", "expected"),
    [
        ("boolean", BooleanType()),
        ("int", IntType(32)),
        ("long", IntType(64)),
        ("float", FloatType(32)),
        ("double", FloatType(64)),
        ("string", StringType()),
        ("bytes", BinaryType()),
        ({"type": "int"}, IntType(32)),
        ({"type": "fixed", "name": "F", "size": 7}, FixedType(7)),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"], "default": "B"}, EnumType(("A", "B"), "B")),
        ({"type": "array", "items": "long"}, ListType(IntType(64))),
        ({"type": "map", "values": "double"}, MapType(StringType(), FloatType(64))),
        ({"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}, DecimalType(12, 2)),
        ({"type": "bytes", "logicalType": "decimal", "precision": 5}, DecimalType(5, 0)),
        ({"type": "fixed", "name": "D", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 4},
         DecimalType(18, 4)),
        ({"type": "string", "logicalType": "uuid"}, UuidType()),
        ({"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"}, UuidType()),
        ({"type": "int", "logicalType": "date"}, DateType()),
        ({"type": "int", "logicalType": "time-millis"}, TimeType("ms")),
        ({"type": "long", "logicalType": "time-micros"}, TimeType("us")),
        ({"type": "long", "logicalType": "timestamp-millis"}, TimestampType("ms", True)),
        ({"type": "long", "logicalType": "timestamp-micros"}, TimestampType("us", True)),
        ({"type": "long", "logicalType": "timestamp-nanos"}, TimestampType("ns", True)),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, TimestampType("ms", False)),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, TimestampType("us", False)),
        ({"type": "long", "logicalType": "local-timestamp-nanos"}, TimestampType("ns", False)),
        ({"type": "record", "name": "N", "fields": [{"name": "a", "type": "int"}]},
         StructType((Field("a", IntType(32), nullable=False),))),
    ],
    ids=lambda v: canonical_json(v) if not isinstance(v, DataType) else "",
)
def test_avro_types_map_to_model_types(avro_type: Any, expected: DataType) -> None:
    assert one_type(avro_type) == (expected, False)


@pytest.mark.parametrize(
    ("avro_type", "underlying"),
    [
        # The spec: unknown or invalid logical types are ignored; the underlying type is used.
        ({"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 5}, BinaryType()),
        ({"type": "bytes", "logicalType": "decimal", "precision": 0}, BinaryType()),
        ({"type": "bytes", "logicalType": "decimal"}, BinaryType()),
        ({"type": "fixed", "name": "D", "size": 4, "logicalType": "decimal", "precision": 10}, FixedType(4)),
        ({"type": "string", "logicalType": "date"}, StringType()),
        ({"type": "int", "logicalType": "timestamp-millis"}, IntType(32)),
        ({"type": "fixed", "name": "U", "size": 12, "logicalType": "uuid"}, FixedType(12)),
        ({"type": "fixed", "name": "Dur", "size": 12, "logicalType": "duration"}, FixedType(12)),
        ({"type": "bytes", "logicalType": "big-decimal"}, BinaryType()),
    ],
)
def test_unknown_or_invalid_logical_types_fall_back_to_the_underlying_type(
    avro_type: Any, underlying: DataType
) -> None:
    assert one_type(avro_type) == (underlying, False)
    parsed = parse_with_avro(record({"name": "x", "type": avro_type}))
    assert isinstance(parsed, avro.schema.RecordSchema)
    # The oracle agrees: a plain primitive or fixed, no logical schema class.
    assert type(parsed.fields[0].type) in (avro.schema.PrimitiveSchema, avro.schema.FixedSchema)


@pytest.mark.parametrize("union", [["null", "int"], ["int", "null"], [{"type": "null"}, "int"]])
def test_a_union_with_null_is_a_nullable_field(union: list[Any]) -> None:
    assert one_type(union) == (IntType(32), True)


def test_a_one_branch_union_is_its_branch() -> None:
    assert one_type(["int"]) == (IntType(32), False)


def test_unions_with_null_make_list_elements_and_map_values_nullable() -> None:
    assert one_type({"type": "array", "items": ["null", "string"]}) == (ListType(StringType(), True), False)
    assert one_type({"type": "map", "values": ["long", "null"]}) == (
        MapType(StringType(), IntType(64), True), False)


def test_field_default_aliases_doc_id_and_custom_properties() -> None:
    doc = record({
        "name": "a", "type": ["null", "string"], "default": None, "aliases": ["old_a"],
        "doc": "what a is", "field-id": 7, "order": "descending", "unit": "ms", "tags": ["x", 1],
    }, {"name": "b", "type": "string", "default": "foo"})
    a, b = schema_from_avsc(doc).fields
    assert a == Field("a", StringType(), nullable=True, id=7, default_json="null", aliases=("old_a",),
                      metadata=make_metadata({"doc": "what a is", "order": "descending", "unit": "ms",
                                              "tags": '["x",1]'}))
    assert b.default == "foo" and not b.nullable and b.metadata == ()


def test_record_names_are_dropped_and_named_references_resolved() -> None:
    point = {"type": "record", "name": "Point", "namespace": "geo",
             "fields": [{"name": "x", "type": "double"}, {"name": "y", "type": "double"}]}
    doc = {"type": "record", "name": "Trip", "namespace": "geo", "fields": [
        {"name": "start", "type": point},
        {"name": "end", "type": "Point"},  # resolved in the enclosing namespace
        {"name": "stops", "type": {"type": "array", "items": "geo.Point"}},  # a full name
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A"]}},
        {"name": "again", "type": ["null", "Kind"]},
    ]}
    start, end, stops, kind, again = schema_from_avsc(doc).fields
    assert start.type == end.type == stops.type.element == StructType(  # type: ignore[union-attr]
        (Field("x", FloatType(64), nullable=False), Field("y", FloatType(64), nullable=False)))
    assert again.type == kind.type and again.nullable


def test_a_reference_falls_back_to_the_null_namespace_as_avro_java_does() -> None:
    doc = {"type": "record", "name": "R", "namespace": "ns", "fields": [
        {"name": "a", "type": {"type": "fixed", "name": "F", "namespace": "", "size": 2}},
        {"name": "b", "type": "F"},
    ]}
    assert [f.type for f in schema_from_avsc(doc).fields] == [FixedType(2), FixedType(2)]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (record({"name": "a", "type": ["null", "null"]}), "a: the union holds null twice"),
        (record({"name": "a", "type": ["int", ["long"]]}), "a: a union may not hold a union"),
        (record({"name": "a", "type": "Nope"}), "a: unknown Avro type 'Nope'"),
        (record({"name": "a", "type": {"type": "fixed", "name": "F", "size": 2}},
                {"name": "b", "type": {"type": "fixed", "name": "F", "size": 3}}),
         "b: Avro name 'F' is defined twice"),
        (record({"name": "a", "type": "int"}, {"name": "a", "type": "long"}),
         "schema: duplicate field name 'a'"),
        (record({"name": "a"}), "a: a field needs a type"),
        (record({"type": "int"}), "schema: a field needs a non-empty string name"),
        (record({"name": "a", "type": "int", "field-id": "7"}), "a: field-id must be an integer"),
        (record({"name": "a", "type": "int", "aliases": "b"}), "a: aliases must be a list of strings"),
        (record({"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "A"]}}),
         "e: enum symbols"),
        (record({"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"], "default": "B"}}),
         "e: enum default 'B'"),
        (record({"name": "f", "type": {"type": "fixed", "name": "F"}}), "f: a fixed needs"),
        (record({"name": "s", "type": {"type": "record", "fields": []}}), "s: a record needs a name"),
        (record({"name": "s", "type": {"type": "record", "name": "S"}}),
         "s: a record needs a list of fields"),
        (record({"name": "a", "type": {"type": {"type": "int"}}}), "a: not an Avro type"),
    ],
)
def test_inexpressible_or_invalid_avro_names_the_place(doc: Any, message: str) -> None:
    with pytest.raises(AvroSchemaError, match="^" + re.escape(message)):
        schema_from_avsc(doc)


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ({"type": "enum", "name": "E", "symbols": ["A"]}, "a top-level enum"),
        ("string", "a top-level string"),
        (["null", "int"], "a top-level union"),
        (record({"name": "a", "type": {"type": "record", "name": "L", "fields": [
            {"name": "next", "type": ["null", "L"]}]}}), "a.next: recursive type 'L'"),
    ],
)
def test_avro_without_a_table_equivalent_keeps_its_graph_and_says_why(doc: Any, why: str) -> None:
    schema = schema_from_avsc(doc)
    assert schema.fields == () and schema.unmodelled is not None and schema.unmodelled.startswith(why)
    assert schema.avro is not None  # the avro profile still checks it


MEMBERS = StructType((Field("member0", IntType(32)), Field("member1", StringType())))


@pytest.mark.parametrize(
    ("union", "expected", "nullable"),
    [
        # spark-avro's SchemaConverters: null plus one type is that type, nullable; int/long and
        # float/double unions widen; any other union is a struct of member0..n (nullable members)
        (["null", "int"], IntType(32), True),
        (["int", "long"], IntType(64), False),
        (["null", "float", "double"], FloatType(64), True),
        (["int", "string"], MEMBERS, False),
        (["null", "int", "string"], MEMBERS, True),
    ],
)
def test_unions_become_what_spark_avro_reads(union: Any, expected: DataType, nullable: bool) -> None:
    (f,) = schema_from_avsc(record({"name": "a", "type": union})).fields
    assert (f.type, f.nullable) == (expected, nullable)


# ---------------------------------------------------------------------------------------------
# model -> avsc


def avsc_of(t: DataType, nullable: bool = False, **kw: Any) -> Any:
    return schema_to_avsc(Schema((Field("x", t, nullable=nullable, **kw),)))["fields"][0]["type"]


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        # Lossy but safe: every value fits the wider Avro type.
        (IntType(8), "int"),
        (IntType(16), "int"),
        (IntType(8, signed=False), "int"),
        (IntType(16, signed=False), "int"),
        (IntType(32, signed=False), "long"),
        (JsonType(), "string"),
        (DecimalType(38, 9), {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 9}),
        (UuidType(), {"type": "string", "logicalType": "uuid"}),
    ],
)
def test_types_avro_lacks_are_written_as_the_nearest_type_that_holds_them(t: DataType, expected: Any) -> None:
    assert avsc_of(t) == expected
    parse_with_avro(schema_to_avsc(Schema((Field("x", t),))))


@pytest.mark.parametrize(
    ("t", "message"),
    [
        (IntType(64, signed=False), "x: uint64 has no Avro type"),
        (FloatType(16), "x: float16 has no Avro type"),
        (TimeType("ns"), "x: time_ns has no Avro type"),
        (Int96Type(), "x: timestamp_int96 has no Avro type"),
        (MapType(IntType(32), StringType()), "x: Avro map keys are strings, not int32"),
        (EnumType(()), "x: an enum without symbols"),
        (EnumType(("ok", "not ok")), "x: enum symbol 'not ok'"),
        (ListType(StructType((Field("y", FloatType(16)),))), r"x[].y: float16"),
    ],
)
def test_types_avro_cannot_hold_raise_naming_the_place(t: DataType, message: str) -> None:
    with pytest.raises(AvroSchemaError, match="^" + re.escape(message)):
        avsc_of(t)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (Field("order id", StringType()), "order id: field name or alias 'order id' is not an Avro name"),
        (Field("a", StringType(), aliases=("1a",)), "a: field name or alias '1a'"),
        (Field("a", StringType(), metadata=make_metadata({"type": "x"})), "a: metadata type='x' clashes"),
        (Field("a", StringType(), metadata=make_metadata({"order": "up"})), "a: metadata order='up' clashes"),
    ],
)
def test_names_and_metadata_avro_rejects_raise(field: Field, message: str) -> None:
    with pytest.raises(AvroSchemaError, match="^" + re.escape(message)):
        schema_to_avsc(Schema((field,)))


def test_a_bad_record_name_raises() -> None:
    with pytest.raises(AvroSchemaError, match="not a valid Avro record name"):
        schema_to_avsc(Schema(()), name="my-schema")


@pytest.mark.parametrize(
    ("default_json", "union"),
    [(None, ["null", "long"]), ("null", ["null", "long"]), ("5", ["long", "null"])],
)
def test_a_nullable_field_puts_the_branch_its_default_matches_first(
    default_json: str | None, union: list[str]
) -> None:
    assert avsc_of(IntType(64), nullable=True, default_json=default_json) == union


def test_named_types_are_named_after_their_path_and_unique() -> None:
    leaf = StructType((Field("v", FixedType(4)),))
    schema = Schema((
        Field("a", StructType((
            Field("b", leaf), Field("c", ListType(leaf)), Field("d", MapType(StringType(), leaf))))),
        Field("b", leaf),
    ))
    doc = schema_to_avsc(schema, name="com.example.Orders")
    names: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") in ("record", "enum", "fixed"):
                names.append(node["name"])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(doc)
    assert names == [
        "com.example.Orders", "com.example.Orders.a", "com.example.Orders.a.b", "com.example.Orders.a.b.v",
        "com.example.Orders.a.c.element", "com.example.Orders.a.c.element.v",
        "com.example.Orders.a.d.value", "com.example.Orders.a.d.value.v",
        "com.example.Orders.b", "com.example.Orders.b.v",
    ]
    parsed = parse_with_avro(doc)
    assert schema_from_avsc(json.loads(str(parsed))) == schema  # the oracle's own spelling reads back


def _compatible(reader: Schema, writer: Schema) -> bool:
    checker = ReaderWriterCompatibilityChecker()  # type: ignore[no-untyped-call]
    result = checker.get_compatibility(
        parse_with_avro(schema_to_avsc(reader)), parse_with_avro(schema_to_avsc(writer)))
    return bool(result.compatibility is SchemaCompatibilityType.compatible)


def test_a_field_renamed_with_an_alias_keeps_its_record_type_resolvable() -> None:
    """Generated type names follow the field name; the alias carries the old type name too, so
    Avro's checker sees the rename the way the model does (docs/reference/compat-rules.md §1, aliases)."""
    point = StructType((Field("x", FloatType(64), nullable=False),))
    writer = Schema((Field("location", point, nullable=False),))
    renamed = Schema((Field("position", point, nullable=False, aliases=("location",)),))
    without_alias = Schema((Field("position", point, nullable=False),))
    assert _compatible(renamed, writer)
    assert not _compatible(without_alias, writer)


def test_confluent_example_schemas_parse(tmp_path: Path) -> None:
    """s1, s2 and s3 of docs/reference/compat-rules.md §2 (AvroCompatibilityTest) as .avsc files."""
    s1 = record({"name": "f1", "type": "string"}, name="myrecord")
    s2 = record({"name": "f1", "type": "string"}, {"name": "f2", "type": "string", "default": "foo"},
                name="myrecord")
    s3 = record({"name": "f1", "type": "string"}, {"name": "f2", "type": "string"}, name="myrecord")
    f1 = Field("f1", StringType(), nullable=False)
    expected = {
        "s1": (s1, Schema((f1,))),
        "s2": (s2, Schema((f1, Field("f2", StringType(), nullable=False, default_json='"foo"')))),
        "s3": (s3, Schema((f1, Field("f2", StringType(), nullable=False)))),
    }
    for label, (doc, schema) in expected.items():
        path = tmp_path / f"{label}.avsc"
        path.write_text(json.dumps(doc, indent=2))
        avro.schema.parse(path.read_text())
        assert schema_from_avsc(json.loads(path.read_text())) == schema
        loaded = load_schemas(str(path))
        assert loaded.kind == "avro" and loaded.schemas == ((f"{label}.avsc", schema),)
    # The oracle's verdicts on them, through our writer: s3 cannot read s1 (f2 has no default).
    assert _compatible(expected["s2"][1], expected["s1"][1])
    assert not _compatible(expected["s3"][1], expected["s1"][1])
