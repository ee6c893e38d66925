"""Avro `.avsc` schemas (as parsed JSON) into and out of the model.

avsc -> model, as spark-avro's SchemaConverters reads Avro as a table (formats/avro_schema.py
parses the document first; the model schema keeps that graph for the avro profile). Records become
structs; `null` plus one type makes the field, list element (`items`) or map value (`values`)
nullable; `[int, long]` is int64 and `[float, double]` float64; any other union is a struct of
`member0..n`, its non-null branches, each nullable, and a union with no non-null branch an empty
struct. The `null` type is void (Spark's NullType), nullable. A schema with no table equivalent (a
top level that is not a record, a recursive type) has no columns and says why in
`Schema.unmodelled`. int -> int32, long -> int64, bytes -> binary, fixed -> fixed(N), enum -> enum
(symbols and default), array -> list, map -> map<string, V>. Logical types: decimal on bytes or
fixed, uuid on string or fixed(16), date, time-millis/-micros, (local-)timestamp-millis/-micros/
-nanos. As the spec says, a logical type that is unknown (duration, big-decimal) or invalid
(decimal scale > precision, date on a string) is ignored and the underlying type is used. A
field's `default` becomes canonical JSON, `aliases` its aliases, `field-id` (Iceberg's convention)
its id, and every other attribute (`doc`, `order`, custom properties) its metadata; non-string
values are kept as canonical JSON text.

model -> avsc. Avro has no type for some model types, so:
- int8, int16, uint8 and uint16 -> int, uint32 -> long: every value fits, the width is lost;
- void -> `null`, never in a union (spark-avro's `toAvroType` writes NullType so);
- json -> string, uuid -> string + uuid, decimal -> bytes + decimal (no size to choose);
- uint64, float16, time_ns, timestamp_int96, enums without symbols (a Parquet ENUM annotation
  lists none) and maps whose key is not a string raise `AvroSchemaError`: no Avro type holds
  their values.
A nullable field is `["null", T]`, or `[T, "null"]` when its default is not null, because a field
default must match the first union branch. Records, enums and fixed types need names the model
does not keep, so they are named after their path: the top record is `name`, the type of field
`a.b` is `name.a.b`, a list element `….element` and a map value `….value` (unique, as sibling
labels are). A type directly under a field with aliases gets the aliases' full names, so a field
renamed with an alias still resolves in Avro's name check. Field names, aliases and enum symbols
must be Avro names (`[A-Za-z_][A-Za-z0-9_]*`); defaults are written as they are, unchecked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from schemaguard.formats.avro_schema import AvroField, AvroSchemaError, AvroType, parse_avro
from schemaguard.formats.notation import describe, parse_primitive
from schemaguard.model import (
    TIME_UNITS,
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
    PrimitiveType,
    Schema,
    SchemaVisitor,
    StringType,
    StructType,
    TimestampType,
    TimeType,
    UuidType,
    VariantType,
    VoidType,
    canonical_json,
    make_metadata,
    visit,
)
from schemaguard.paths import ELEMENT, VALUE

_PRIMITIVES_IN: dict[str, PrimitiveType] = {
    "boolean": BooleanType(),
    "int": IntType(32),
    "long": IntType(64),
    "float": FloatType(32),
    "double": FloatType(64),
    "string": StringType(),
    "bytes": BinaryType(),
}
_UNIT_WORDS = {"ms": "millis", "us": "micros", "ns": "nanos"}


def _logical(base: str, logical_type: str) -> dict[str, str]:
    return {"type": base, "logicalType": logical_type}


_PRIMITIVES_OUT: dict[PrimitiveType, Any] = {
    BooleanType(): "boolean",
    IntType(8): "int",
    IntType(16): "int",
    IntType(32): "int",
    IntType(64): "long",
    IntType(8, False): "int",
    IntType(16, False): "int",
    IntType(32, False): "long",
    FloatType(32): "float",
    FloatType(64): "double",
    StringType(): "string",
    VoidType(): "null",
    JsonType(): "string",
    BinaryType(): "bytes",
    UuidType(): _logical("string", "uuid"),
    DateType(): _logical("int", "date"),
    TimeType("ms"): _logical("int", "time-millis"),
    TimeType("us"): _logical("long", "time-micros"),
}
for _unit in TIME_UNITS:
    _PRIMITIVES_OUT[TimestampType(_unit, True)] = _logical("long", f"timestamp-{_UNIT_WORDS[_unit]}")
    _PRIMITIVES_OUT[TimestampType(_unit, False)] = _logical("long", f"local-timestamp-{_UNIT_WORDS[_unit]}")

# (logicalType, underlying primitive) -> model type: the inverse of the logical entries above.
_LOGICAL_IN: dict[tuple[str, str], PrimitiveType] = {
    (out["logicalType"], out["type"]): t for t, out in _PRIMITIVES_OUT.items() if isinstance(out, dict)
}

_INEXPRESSIBLE: dict[PrimitiveType, str] = {
    IntType(64, False): "uint64 values above 2^63-1 fit no Avro integer",
    FloatType(16): "Avro has no half-precision float",
    TimeType("ns"): "Avro has no time-nanos",
    Int96Type(): "INT96 has no Avro type (it is a Parquet writer convention)",
    VariantType(): "Avro has no variant type",
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ORDERS = ("ascending", "descending", "ignore")
_FIELD_KEYS = ("name", "type", "default", "aliases", "field-id")  # everything else is metadata
__all__ = ["AvroSchemaError", "AvroType", "as_avro", "parse_avro", "schema_from_avsc", "schema_to_avsc"]


def _at(path: str) -> str:
    return path or "schema"


def _child(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# avsc -> model


def schema_from_avsc(doc: Any) -> Schema:
    """A parsed `.avsc` document as a model schema that keeps its Avro graph (`Schema.avro`, which
    the avro profile checks). A schema spark-avro cannot read as a table (a top level that is not
    a record, a recursive type) has no columns and says why in
    `Schema.unmodelled`: only the avro profile reads it."""
    graph = parse_avro(doc)
    if graph.kind != "record":
        return Schema((), avro=graph, unmodelled=f"a top-level {graph.kind}: spark-avro reads only a "
                      "record as a table")
    try:
        t, _ = _to_model(graph, "", ())
    except _Unmodelled as e:
        return Schema((), avro=graph, unmodelled=str(e))
    assert isinstance(t, StructType)
    return Schema(t.fields, avro=graph)


def as_avro(schema: Schema) -> AvroType:
    """The Avro graph a schema was read from, or the model written as Avro (`schema_to_avsc`)."""
    if isinstance(schema.avro, AvroType):
        return schema.avro
    return parse_avro(schema_to_avsc(schema))


class _Unmodelled(Exception):
    """An Avro type no table column holds, at a model path."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{_at(path)}: {why}")


def _to_model(t: AvroType, path: str, records: tuple[int, ...]) -> tuple[DataType, bool]:
    """A type as spark-avro's SchemaConverters makes it, and whether it admits null: `null` plus
    one type is that type, nullable; [int, long] is long and [float, double] double; any other union
    a struct of `member0..n` (its non-null branches, each nullable)."""
    if t.kind == "union":
        branches = [b for b in t.branches if b.kind != "null"]
        nullable = len(branches) < len(t.branches)
        kinds = {b.kind for b in branches}
        if not branches:  # spark-avro makes an empty struct of a union with no value branch
            return StructType(()), nullable
        if len(branches) == 1:
            return _to_model(branches[0], path, records)[0], nullable
        if kinds in ({"int", "long"}, {"float", "double"}) and not any(b.logical for b in branches):
            return _PRIMITIVES_IN["long" if "long" in kinds else "double"], nullable
        return StructType(tuple(Field(f"member{i}", _to_model(b, f"{path}.member{i}", records)[0], True)
                                for i, b in enumerate(branches))), nullable
    if t.kind == "null":
        return VoidType(), True
    if t.kind == "record":
        if id(t) in records:
            raise _Unmodelled(path, f"recursive type {t.name!r}: spark-avro refuses recursive types")
        return StructType(tuple(_field(f, _child(path, f.name), (*records, id(t))) for f in t.fields)), False
    if t.kind == "array":
        element, nullable = _to_model(t.child, path + ELEMENT, records)
        return ListType(element, nullable), False
    if t.kind == "map":
        value, nullable = _to_model(t.child, path + VALUE, records)
        return MapType(StringType(), value, nullable), False
    if t.kind == "enum":
        return EnumType(t.symbols, t.enum_default), False
    if t.kind == "fixed":
        return _fixed(t), False
    return _with_logical(_PRIMITIVES_IN[t.kind], t), False


def _field(f: AvroField, path: str, records: tuple[int, ...]) -> Field:
    t, nullable = _to_model(f.type, path, records)
    fid = f.props.get("field-id")
    if fid is not None and not _is_int(fid):
        raise AvroSchemaError(f"{path}: field-id must be an integer", path)
    return Field(
        name=f.name, type=t, nullable=nullable, id=fid, default_json=f.default_json, aliases=f.aliases,
        metadata=make_metadata({k: v if isinstance(v, str) else canonical_json(v)
                                for k, v in f.props.items() if k != "field-id"}))


def _fixed(t: AvroType) -> DataType:
    if t.logical == "uuid" and t.size == 16:
        return UuidType()
    if t.logical == "decimal" and t.size > 0:
        # The most digits a signed two's-complement number of `size` bytes holds (the spec's bound).
        return _decimal(t, len(str(2 ** (8 * t.size - 1) - 1)) - 1) or FixedType(t.size)
    return FixedType(t.size)


def _with_logical(base: PrimitiveType, t: AvroType) -> PrimitiveType:
    """The logical type on a primitive, or the primitive when the logical type is unknown or invalid."""
    if t.logical == "decimal" and base == BinaryType():
        return _decimal(t, None) or base
    return _LOGICAL_IN.get((t.logical or "", t.kind), base)


def _decimal(t: AvroType, max_precision: int | None) -> DecimalType | None:
    precision, scale = t.precision, t.scale
    if not (_is_int(precision) and _is_int(scale) and 0 <= scale <= precision and precision > 0):
        return None
    return DecimalType(precision, scale) if max_precision is None or precision <= max_precision else None


# ---------------------------------------------------------------------------------------------
# Avro written in the notation -> avsc


def schema_from_avro_notation(doc: dict[str, Any]) -> Schema:
    """A notation document that uses Avro's own types, read through Avro (`schema_from_avsc`)."""
    return schema_from_avsc(avsc_from_notation(doc))


def avsc_from_notation(doc: dict[str, Any], name: str = "schema") -> dict[str, Any]:
    """A notation document that uses Avro's own types as `.avsc`. The notation's types are written
    as `schema_to_avsc` writes them; `"null"` is Avro's null; `{"union": [T, ...]}` a union (a
    field of a union or null type is not wrapped again, whatever `nullable` says); a struct, enum or
    `{"fixed": N}` takes its `name` and `aliases`, else a name made from its path."""
    return {"type": "record", "name": name, "fields": _notation_fields(doc["fields"], name)}


def _notation_fields(fields: list[Any], record: str) -> list[dict[str, Any]]:
    out = []
    for f in fields:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
            raise AvroSchemaError(f"{record}: a field needs a string name and a type", record)
        t = _notation_type(f["type"], f"{record}.{f['name']}")
        default = canonical_json(f["default"]) if "default" in f else None
        field: dict[str, Any] = {"name": f["name"], "type": _or_null(t, f.get("nullable", True), default)}
        for key, avro_key in (("default", "default"), ("aliases", "aliases"), ("id", "field-id")):
            if f.get(key) is not None:
                field[avro_key] = f[key]
        field.update(f.get("metadata", {}))
        out.append(field)
    return out


def _or_null(t: Any, nullable: bool, default_json: str | None = None) -> Any:
    """`_nullable`, except that a union says itself whether it holds null."""
    return t if isinstance(t, list) else _nullable(t, nullable, default_json)


def _notation_type(doc: Any, path: str) -> Any:
    if doc == "null":
        return "null"
    if isinstance(doc, str):
        return _primitive_to_avro(parse_primitive(doc, path), path, [path])
    if not isinstance(doc, dict):
        raise AvroSchemaError(f"{path}: a type is a string or an object, not {doc!r}", path)
    named = {"name": doc.get("name", path), **({"aliases": doc["aliases"]} if "aliases" in doc else {})}
    if "union" in doc:
        return [_notation_type(b, f"{path}.member{i}") for i, b in enumerate(doc["union"])]
    if "struct" in doc:
        return {"type": "record", **named, "fields": _notation_fields(doc["struct"], named["name"])}
    if "enum" in doc:
        return {"type": "enum", **named, "symbols": doc["enum"],
                **({"default": doc["default"]} if "default" in doc else {})}
    if "fixed" in doc:
        return {"type": "fixed", **named, "size": doc["fixed"]}
    if "list" in doc:
        items = _notation_type(doc["list"], f"{path}.element")
        return {"type": "array", "items": _or_null(items, doc.get("element_nullable", False))}
    if "map" in doc and isinstance(doc["map"], list) and len(doc["map"]) == 2 and doc["map"][0] == "string":
        values = _notation_type(doc["map"][1], f"{path}.value")
        return {"type": "map", "values": _or_null(values, doc.get("value_nullable", False))}
    raise AvroSchemaError(f"{path}: not a type Avro holds: {canonical_json(doc)}", path)


# ---------------------------------------------------------------------------------------------
# model -> avsc


def schema_to_avsc(schema: Schema, name: str = "schema") -> dict[str, Any]:
    """The model as an `.avsc` document whose top record is called `name`."""
    if not all(_NAME.fullmatch(part) for part in name.split(".")) or name in _PRIMITIVES_IN:
        raise AvroSchemaError(f"schema: {name!r} is not a valid Avro record name")
    doc: dict[str, Any] = visit(schema, _AvscWriter())([name])
    return doc


# A node's Avro names come from above it (its record's names, its field's aliases), but the walk
# is post-order; so each node becomes a function from the full names it gets if it is a named
# type (name first, then aliases) to its avsc, and calling the top one writes the document.
# The calls run top-down, so names are checked and errors raised in document order.
_Avsc = Callable[[list[str]], Any]


class _AvscWriter(SchemaVisitor[_Avsc, _Avsc]):
    def field(self, f: Field, path: str, type_result: _Avsc) -> _Avsc:
        return lambda record: _field_to_avro(f, path, record, type_result)

    def struct(self, t: StructType, path: str, fields: Sequence[_Avsc]) -> _Avsc:
        return lambda names: {"type": "record", **_named(names), "fields": [f(names) for f in fields]}

    def list(self, t: ListType, path: str, element: _Avsc) -> _Avsc:
        return lambda names: _list_to_avro(t, names, element)

    def map(self, t: MapType, path: str, key: _Avsc, value: _Avsc) -> _Avsc:
        return lambda names: _map_to_avro(t, path, names, value)

    def enum(self, t: EnumType, path: str) -> _Avsc:
        return lambda names: _enum_to_avro(t, path, names)

    def primitive(self, t: PrimitiveType, path: str) -> _Avsc:
        return lambda names: _primitive_to_avro(t, path, names)


def _named(names: list[str]) -> dict[str, Any]:
    return {"name": names[0], **({"aliases": names[1:]} if len(names) > 1 else {})}


def _suffixed(names: list[str], suffix: str) -> list[str]:
    return [n + suffix for n in names]


def _list_to_avro(t: ListType, names: list[str], element: _Avsc) -> dict[str, Any]:
    return {"type": "array", "items": _nullable(element(_suffixed(names, ".element")), t.element_nullable)}


def _map_to_avro(t: MapType, path: str, names: list[str], value: _Avsc) -> dict[str, Any]:
    if t.key != StringType():
        raise AvroSchemaError(f"{_at(path)}: Avro map keys are strings, not {describe(t.key)}", path)
    return {"type": "map", "values": _nullable(value(_suffixed(names, ".value")), t.value_nullable)}


def _enum_to_avro(t: EnumType, path: str, names: list[str]) -> dict[str, Any]:
    if not t.symbols:
        raise AvroSchemaError(f"{_at(path)}: an enum without symbols has no Avro type", path)
    _check_names(t.symbols, path, "enum symbol")
    doc = {"type": "enum", **_named(names), "symbols": list(t.symbols)}
    if t.default is not None:
        doc["default"] = t.default
    return doc


def _primitive_to_avro(t: PrimitiveType, path: str, names: list[str]) -> Any:
    if isinstance(t, FixedType):
        return {"type": "fixed", **_named(names), "size": t.length}
    if isinstance(t, DecimalType):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    out = _PRIMITIVES_OUT.get(t)
    if out is None:
        why = _INEXPRESSIBLE.get(t, "no Avro equivalent")
        raise AvroSchemaError(f"{_at(path)}: {describe(t)} has no Avro type: {why}", path)
    return dict(out) if isinstance(out, dict) else out  # a copy: callers may edit the document


def _field_to_avro(f: Field, path: str, record: list[str], type_avsc: _Avsc) -> dict[str, Any]:
    """`record`: the enclosing record's full name, then its aliases (names it may have had)."""
    _check_names((f.name, *f.aliases), path, "field name or alias")
    t = type_avsc(_field_type_names(f, record))
    doc: dict[str, Any] = {"name": f.name, "type": _nullable(t, f.nullable, f.default_json)}
    if f.default_json is not None:
        doc["default"] = json.loads(f.default_json)
    if f.aliases:
        doc["aliases"] = list(f.aliases)
    if f.id is not None:
        doc["field-id"] = f.id
    for key, value in f.metadata:
        if key in _FIELD_KEYS or (key == "order" and value not in _ORDERS):
            raise AvroSchemaError(f"{path}: metadata {key}={value!r} clashes with an Avro field attribute",
                                  path)
        doc[key] = value
    return doc


def _field_type_names(f: Field, record: list[str]) -> list[str]:
    """`record.field`, then the names the type may have been written under: any earlier name of the
    record joined with any earlier name of the field."""
    name = f"{record[0]}.{f.name}"
    aliases = dict.fromkeys(f"{r}.{n}" for r in record for n in (f.name, *f.aliases))
    return [name, *(a for a in aliases if a != name)]


def _nullable(t: Any, nullable: bool, default_json: str | None = None) -> Any:
    """A union with null, null first unless a non-null default must match the first branch; the
    null type stays itself (spark-avro's `toAvroType` writes a void column as `null`)."""
    if not nullable or t == "null":
        return t
    return ["null", t] if default_json in (None, "null") else [t, "null"]


def _check_names(names: tuple[str, ...], path: str, what: str) -> None:
    for n in names:
        if not _NAME.fullmatch(n):
            raise AvroSchemaError(f"{_at(path)}: {what} {n!r} is not an Avro name ([A-Za-z_][A-Za-z0-9_]*)",
                                  path)
