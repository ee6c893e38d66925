"""The neutral JSON notation (docs/design.md): lossless both ways, and clear errors on bad input.

`schemas()` (tests/strategies.py) generates arbitrary model schemas.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from schemaguard.formats.notation import (
    NotationError,
    dumps,
    load,
    loads,
    parse_primitive,
    schema_from_notation,
    schema_to_notation,
    type_name,
)
from schemaguard.model import (
    DataType,
    DecimalType,
    EnumType,
    Field,
    FixedType,
    Int96Type,
    ListType,
    MapType,
    Schema,
    StringType,
    StructType,
    VoidType,
)
from tests.strategies import PRIMITIVES, PROPERTY, schemas

# ---------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.slow
@PROPERTY
@given(schemas())
def test_model_to_notation_to_json_text_to_model_is_identity(schema: Schema) -> None:
    text = json.dumps(schema_to_notation(schema))
    assert schema_from_notation(json.loads(text)) == schema
    assert loads(dumps(schema)) == schema
    assert loads(dumps(schema, indent=2)) == schema
    assert loads(json.dumps(schema_to_notation(schema), ensure_ascii=True)) == schema


@pytest.mark.slow
@PROPERTY
@given(schemas())
def test_notation_to_model_to_notation_is_identity_on_canonical_docs(schema: Schema) -> None:
    canonical_text = json.dumps(schema_to_notation(schema), ensure_ascii=False)
    doc = json.loads(canonical_text)  # a canonical document, as a user would have it on disk
    again = schema_to_notation(schema_from_notation(doc))
    # Same content and the same key order: the writer spells every field one way.
    assert json.dumps(again, ensure_ascii=False) == canonical_text


def _drop_optional_spellings(node: Any) -> Any:
    """A non-canonical but equivalent document: leave out every key whose absence means the same."""
    if isinstance(node, list):
        return [_drop_optional_spellings(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _drop_optional_spellings(v) for k, v in node.items() if k != "default"}
    if "default" in node:
        out["default"] = node["default"]  # a default is a value: never rewritten
    if "name" in node and "type" in node:  # a field
        if out.get("id", 0) is None:
            del out["id"]
        if out.get("nullable") is True:
            del out["nullable"]
    for key in ("element_nullable", "value_nullable"):
        if out.get(key) is False:
            del out[key]
    return out


@pytest.mark.slow
@PROPERTY
@given(schemas())
def test_optional_keys_may_be_left_out(schema: Schema) -> None:
    doc = _drop_optional_spellings(json.loads(dumps(schema)))
    assert schema_from_notation(doc) == schema


HAND_WRITTEN = """
{"fields": [
  {"name": "id", "id": 1, "type": "int64", "nullable": false},
  {"name": "amount", "id": 2, "type": "decimal(12,2)", "nullable": true, "default": null,
   "metadata": {"doc": "order total", "unit": "EUR"}},
  {"name": "ts", "id": 3, "type": "timestamp_us_utc", "nullable": true, "aliases": ["event_ts"]},
  {"name": "status", "id": null, "type": {"enum": ["NEW", "PAID", "SHIPPED"], "default": "NEW"},
   "nullable": false, "default": "NEW"},
  {"name": "items", "id": 4, "type": {"list": {"struct": [
      {"name": "sku", "id": 5, "type": "fixed(16)", "nullable": false},
      {"name": "qty", "id": 6, "type": "uint16", "nullable": true, "default": 1}
    ]}, "element_nullable": true}, "nullable": true},
  {"name": "attrs", "id": 7, "type": {"map": ["string", {"list": "timestamp_int96",
   "element_nullable": false}], "value_nullable": true}, "nullable": true,
   "default": {"k": [1, 2.5, "x", null, true]}}
]}
"""


def test_hand_written_canonical_document_round_trips() -> None:
    doc = json.loads(HAND_WRITTEN)
    schema = schema_from_notation(doc)
    assert schema_to_notation(schema) == doc
    assert json.dumps(schema_to_notation(schema)) == json.dumps(doc)

    by_name = {f.name: f for f in schema.fields}
    assert by_name["amount"].type == DecimalType(12, 2)
    assert by_name["amount"].has_default and by_name["amount"].default is None
    assert by_name["amount"].meta == {"doc": "order total", "unit": "EUR"}
    assert not by_name["ts"].has_default
    assert by_name["ts"].aliases == ("event_ts",)
    assert by_name["status"].type == EnumType(("NEW", "PAID", "SHIPPED"), "NEW")
    items = by_name["items"].type
    assert isinstance(items, ListType) and items.element_nullable
    assert isinstance(items.element, StructType)
    assert [f.name for f in items.element.fields] == ["sku", "qty"]
    assert items.element.fields[0].type == FixedType(16)
    assert by_name["attrs"].type == MapType(StringType(), ListType(Int96Type(), False), True)
    assert by_name["attrs"].default == {"k": [1, 2.5, "x", None, True]}


def test_load_reads_a_notation_file(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    assert load(path) == loads(HAND_WRITTEN)


@pytest.mark.parametrize("spelling", sorted(PRIMITIVES))
def test_every_primitive_spelling_reads_and_writes_back(spelling: str) -> None:
    assert parse_primitive(spelling) == PRIMITIVES[spelling]
    assert type_name(PRIMITIVES[spelling]) == spelling  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spelling", "expected", "canonical"),
    [
        ("decimal(1,0)", DecimalType(1, 0), "decimal(1,0)"),
        ("decimal(12,2)", DecimalType(12, 2), "decimal(12,2)"),
        ("decimal(38,38)", DecimalType(38, 38), "decimal(38,38)"),
        ("decimal( 12 , 2 )", DecimalType(12, 2), "decimal(12,2)"),
        ("fixed(16)", FixedType(16), "fixed(16)"),
        ("fixed( 4 )", FixedType(4), "fixed(4)"),
    ],
)
def test_parameterised_primitives(spelling: str, expected: DataType, canonical: str) -> None:
    assert parse_primitive(spelling) == expected
    assert type_name(expected) == canonical


def test_absent_default_differs_from_null_default() -> None:
    absent = loads('{"fields": [{"name": "a", "type": "int32"}]}')
    null = loads('{"fields": [{"name": "a", "type": "int32", "default": null}]}')
    assert not absent.fields[0].has_default
    assert null.fields[0].has_default and null.fields[0].default is None
    assert "default" not in schema_to_notation(absent)["fields"][0]
    assert schema_to_notation(null)["fields"][0]["default"] is None


# ---------------------------------------------------------------------------------------------
# Malformed notation: a NotationError whose message starts with the place inside the document


def _field(name: str, type_: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **extra}


def _doc(*fields: dict[str, Any]) -> str:
    return json.dumps({"fields": list(fields)})


# (test id, document, place, message pattern)
_BAD_CASES: list[tuple[str, str, str, str]] = [
    ("unknown-type", _doc(_field("a", "int128")), "a", r"unknown type 'int128'"),
    ("type-case", _doc(_field("a", "Int32")), "a", r"unknown type 'Int32'"),
    ("unknown-type-nested-in-list",
     _doc(_field("s", {"list": {"struct": [_field("b", "nope")]}})), "s[].b",
     r"unknown type 'nope'"),
    ("unknown-type-in-map-value",
     _doc(_field("m", {"map": ["string", {"struct": [_field("q", "bad")]}]})), "m{value}.q",
     r"unknown type 'bad'"),
    ("unknown-type-in-map-key-list",
     _doc(_field("m", {"map": [{"list": "wat"}, "string"]})), "m{key}[]", r"unknown type 'wat'"),
    ("unknown-type-object", _doc(_field("a", {"tuple": ["int32"]})), "a", r"unknown type object"),
    ("duplicate-top-level",
     _doc(_field("a", "int32"), _field("b", "string"), _field("a", "int64")), "schema",
     r"duplicate field names \['a'\]"),
    ("duplicate-nested",
     _doc(_field("s", {"struct": [_field("x", "int32"), _field("x", "int32")]})), "s",
     r"duplicate field names \['x'\]"),
    ("decimal-scale-above-precision", _doc(_field("a", "decimal(3,4)")), "a", r"decimal\(3,4\)"),
    ("decimal-zero-precision", _doc(_field("a", "decimal(0,0)")), "a", r"decimal\(0,0\)"),
    ("decimal-negative-scale", _doc(_field("a", "decimal(5,-1)")), "a", r"decimal\(5,-1\)"),
    ("decimal-no-scale", _doc(_field("a", "decimal(12)")), "a", r"decimal\(12\)"),
    ("enum-default-not-symbol",
     _doc(_field("e", {"enum": ["A", "B"], "default": "C"})), "e",
     r"enum default 'C' is not one of its symbols"),
    ("enum-default-nested",
     _doc(_field("s", {"struct": [_field("e", {"enum": ["A"], "default": 1})]})), "s.e",
     r"enum default 1 is not one of its symbols"),
    ("enum-dupes", _doc(_field("e", {"enum": ["A", "A"]})), "e", r"enum symbols must be unique"),
    ("unknown-field-key", _doc(_field("a", "int32", doc="x")), "a",
     r"unknown field keys \['doc'\]"),
    ("unknown-field-key-nested",
     _doc(_field("s", {"struct": [_field("b", "int32", nulable=False)]})), "s.b",
     r"unknown field keys \['nulable'\]"),
    ("missing-type", _doc({"name": "a"}), "a", r"field needs a type"),
    ("bool-id", _doc(_field("a", "int32", id=True)), "a", r"id must be an integer"),
    ("string-id", _doc(_field("a", "int32", id="7")), "a", r"id must be an integer"),
    ("nullable", _doc(_field("a", "int32", nullable="yes")), "a",
     r"nullable must be true or false"),
    ("aliases", _doc(_field("a", "int32", aliases="b")), "a", r"aliases must be a list"),
    ("metadata", _doc(_field("a", "int32", metadata={"unit": 3})), "a", r"metadata must map"),
    ("element-nullable", _doc(_field("a", {"list": "int32", "element_nullable": "no"})), "a",
     r"element_nullable must be true or false"),
    ("map-arity", _doc(_field("a", {"map": ["string"]})), "a",
     r"map needs \[key type, value type\]"),
    ("not-a-schema", '{"columns": []}', "schema", r'a schema is \{"fields"'),
    ("top-level-list", "[]", "schema", r'a schema is \{"fields"'),
]
BAD = [pytest.param(*case[1:], id=case[0]) for case in _BAD_CASES]


@pytest.mark.parametrize(("text", "place", "message"), BAD)
def test_malformed_notation_names_the_place(text: str, place: str, message: str) -> None:
    with pytest.raises(NotationError) as raised:
        loads(text)
    text_of_error = str(raised.value)
    assert text_of_error.startswith(place + ": "), text_of_error
    assert re.search(message, text_of_error), text_of_error
    assert "\n" not in text_of_error


@pytest.mark.parametrize(
    "text",
    ["", "not json", '{"fields": [', "{'fields': []}", '{"fields": []} trailing'],
)
def test_non_json_text_is_a_notation_error_with_the_position(text: str) -> None:
    with pytest.raises(NotationError, match=r"^not JSON: .*line \d+ column \d+"):
        loads(text)


@pytest.mark.parametrize(
    "text",
    [
        _doc(_field("a", "int32"), "oops"),  # type: ignore[arg-type]
        _doc(_field("a", "int32"), {"type": "int32"}),
        _doc(_field("a", "int32"), {"name": "", "type": "int32"}),
    ],
    ids=["field-not-an-object", "field-without-name", "field-with-empty-name"],
)
def test_malformed_top_level_field_names_the_place(text: str) -> None:
    with pytest.raises(NotationError) as raised:
        loads(text)
    place, _, _ = str(raised.value).partition(": ")
    assert place.strip(), f"no place in {str(raised.value)!r}"


@pytest.mark.parametrize(
    "type_doc",
    [
        {"list": "int32", "element_nulable": True},
        {"map": ["string", "int32"], "valueNullable": True},
        {"enum": ["A", "B"], "defualt": "A"},
        {"struct": [], "list": "int32"},
    ],
    ids=["list-typo", "map-typo", "enum-typo", "struct-and-list"],
)
def test_unknown_keys_in_a_type_object_are_rejected(type_doc: dict[str, Any]) -> None:
    with pytest.raises(NotationError, match=r"^a: "):
        loads(_doc(_field("a", type_doc)))


@pytest.mark.parametrize("text", [
    "variant", "geometry", 'geometry("EPSG:4326")', "geography", 'geography("OGC:CRS84", "KARNEY")',
    'geography(null, "VINCENTY")', 'geometry("{\\"type\\": \\"GeographicCRS\\", \\"name\\": \\"a, (b)\\"}")',
])
def test_variant_and_geospatial_types_round_trip(text: str) -> None:
    t = parse_primitive(text)
    assert parse_primitive(type_name(t)) == t
    assert type_name(t) == text


@pytest.mark.parametrize("text", ['geometry("a", "b")', "geography(1)", "geometry(EPSG:4326)"])
def test_bad_geospatial_parameters_are_one_clear_error(text: str) -> None:
    with pytest.raises(NotationError, match="JSON strings"):
        parse_primitive(text)


# ---------------------------------------------------------------------------------------------
# Avro written in the notation: null, unions and type names


def test_a_document_with_unions_and_names_is_read_through_avro() -> None:
    from schemaguard.formats.avro import schema_from_avro_notation
    from schemaguard.rules.profiles import can_read

    def doc(union: list[str], record: str) -> dict[str, Any]:
        struct = {"struct": [{"name": "x", "type": "int32"}], "name": record}
        return {"fields": [{"name": "a", "type": {"union": union}}, {"name": "o", "type": struct}]}

    old, new = schema_from_avro_notation(doc(["null", "string", "int32"], "acme.Order")), \
        schema_from_avro_notation(doc(["null", "string"], "Purchase"))
    with pytest.raises(NotationError, match="uses Avro's null, unions or type names"):
        schema_from_notation(doc(["null", "string"], "Purchase"))
    assert old.avro is not None and old.unmodelled is None
    # other readers see what spark-avro makes of them: a struct of the non-null branches
    assert [f.name for f in old.fields[0].type.fields] == ["member0", "member1"]  # type: ignore[union-attr]
    found = {(p.code, p.location) for p in can_read(old, new, "avro")}
    assert found == {("MISSING_UNION_BRANCH", "/fields/0/type/2"),
                     ("MISSING_UNION_BRANCH", "/fields/1/type/1")}


def test_the_null_type_is_void_to_other_readers() -> None:
    from schemaguard.formats.avro import schema_from_avro_notation

    schema = schema_from_avro_notation({"fields": [{"name": "n", "type": "null"}]})
    assert schema.fields == (Field("n", VoidType(), True),) and schema.unmodelled is None
