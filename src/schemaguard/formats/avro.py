"""Avro `.avsc` schemas (as parsed JSON) into and out of the model.

avsc -> model. Records become structs (their names are only used to resolve references);
`["null", T]` and `[T, "null"]` unions make the field, list element (`items`) or map value
(`values`) nullable; a one-branch union `[T]` is T. Other unions, the `null` type and recursive
types have no model equivalent and raise `AvroSchemaError`. int -> int32, long -> int64, bytes ->
binary, fixed -> fixed(N), enum -> enum (symbols and default), array -> list, map ->
map<string, V>. Logical types: decimal on bytes or fixed, uuid on string or fixed(16), date,
time-millis/-micros, (local-)timestamp-millis/-micros/-nanos. As the spec says, a logical type
that is unknown (duration, big-decimal) or invalid (decimal scale > precision, date on a string)
is ignored and the underlying type is used. A field's `default` becomes canonical JSON, `aliases`
its aliases, `field-id` (Iceberg's convention) its id, and every other attribute (`doc`, `order`,
custom properties) its metadata; non-string values are kept as canonical JSON text.

model -> avsc. Avro has no type for some model types, so:
- int8, int16, uint8 and uint16 -> int, uint32 -> long: every value fits, the width is lost;
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
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from schemaguard.formats.notation import describe
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
    canonical_json,
    make_metadata,
    visit,
)


class AvroSchemaError(ValueError):
    """An Avro schema the model cannot express, or a model Avro cannot; the message names the place."""


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


def _at(path: str) -> str:
    return path or "schema"


def _child(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# avsc -> model


def schema_from_avsc(doc: Any) -> Schema:
    """A parsed `.avsc` document as a model schema; the top level must be a record."""
    if not isinstance(doc, dict) or doc.get("type") != "record":
        raise AvroSchemaError('schema: the top level of an Avro schema must be {"type": "record", ...}')
    t, _ = _Reader().read(doc, "", None)
    assert isinstance(t, StructType)
    return Schema(t.fields)


class _Reader:
    """One parse: the named types defined so far, for later references."""

    def __init__(self) -> None:
        self.named: dict[str, DataType | None] = {}  # None while a record is being defined

    def read(self, doc: Any, path: str, space: str | None) -> tuple[DataType, bool]:
        """A type and whether it admits null (a `["null", T]` union)."""
        if not isinstance(doc, list):
            return self._plain(doc, path, space), False
        branches = [b for b in doc if b != "null" and b != {"type": "null"}]
        nulls = len(doc) - len(branches)
        if len(branches) != 1 or nulls > 1:
            raise AvroSchemaError(
                f"{_at(path)}: union {canonical_json(doc)} is not expressible "
                '(only ["null", T], [T, "null"] and [T] are)')
        return self._plain(branches[0], path, space), nulls == 1

    def _plain(self, doc: Any, path: str, space: str | None) -> DataType:
        if doc == "null" or (isinstance(doc, dict) and doc.get("type") == "null"):
            raise AvroSchemaError(f"{_at(path)}: the null type alone has no model equivalent")
        if isinstance(doc, str):
            return _PRIMITIVES_IN[doc] if doc in _PRIMITIVES_IN else self._reference(doc, path, space)
        if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
            raise AvroSchemaError(f"{_at(path)}: not an Avro type: {canonical_json(doc)}")
        kind = doc["type"]
        if kind in _PRIMITIVES_IN:
            return _with_logical(_PRIMITIVES_IN[kind], doc)
        if kind == "array":
            element, nullable = self.read(doc.get("items"), path + "[]", space)
            return ListType(element, nullable)
        if kind == "map":
            value, nullable = self.read(doc.get("values"), path + "{value}", space)
            return MapType(StringType(), value, nullable)
        if kind in ("record", "enum", "fixed"):
            return self._named(doc, path, space)
        return self._reference(kind, path, space)

    def _reference(self, name: str, path: str, space: str | None) -> DataType:
        # As Avro Java does: the name in the enclosing namespace first, then in the null namespace.
        candidates = [name] if "." in name or not space else [f"{space}.{name}", name]
        for full in candidates:
            if full in self.named:
                found = self.named[full]
                if found is None:
                    raise AvroSchemaError(f"{_at(path)}: recursive type {full!r} has no model equivalent")
                return found
        raise AvroSchemaError(f"{_at(path)}: unknown Avro type {name!r}")

    def _named(self, doc: dict[str, Any], path: str, space: str | None) -> DataType:
        full = _fullname(doc, path, space)
        if full in self.named:
            raise AvroSchemaError(f"{_at(path)}: Avro name {full!r} is defined twice")
        self.named[full] = None
        kind = doc["type"]
        if kind == "record":
            t: DataType = StructType(self._fields(doc.get("fields"), path, full.rpartition(".")[0] or None))
        elif kind == "enum":
            t = _enum(doc, path)
        else:
            t = _fixed(doc, path)
        self.named[full] = t
        return t

    def _fields(self, docs: Any, path: str, space: str | None) -> tuple[Field, ...]:
        if not isinstance(docs, list):
            raise AvroSchemaError(f"{_at(path)}: a record needs a list of fields")
        fields = tuple(self._field(d, path, space) for d in docs)
        names = [f.name for f in fields]
        dupes = sorted(n for n, k in Counter(names).items() if k > 1)  # linear: schemas of 50,000 fields
        if dupes:
            raise AvroSchemaError(f"{_at(path)}: duplicate field names {dupes}")
        return fields

    def _field(self, doc: Any, parent: str, space: str | None) -> Field:
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not doc["name"]:
            raise AvroSchemaError(f"{_at(parent)}: a field needs a non-empty string name")
        path = _child(parent, doc["name"])
        if "type" not in doc:
            raise AvroSchemaError(f"{path}: a field needs a type")
        t, nullable = self.read(doc["type"], path, space)
        fid = doc.get("field-id")
        if fid is not None and not _is_int(fid):
            raise AvroSchemaError(f"{path}: field-id must be an integer")
        aliases = doc.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise AvroSchemaError(f"{path}: aliases must be a list of strings")
        return Field(
            name=doc["name"],
            type=t,
            nullable=nullable,
            id=fid,
            default_json=canonical_json(doc["default"]) if "default" in doc else None,
            aliases=tuple(aliases),
            metadata=make_metadata({
                k: v if isinstance(v, str) else canonical_json(v)
                for k, v in doc.items() if k not in _FIELD_KEYS
            }),
        )


def _fullname(doc: dict[str, Any], path: str, space: str | None) -> str:
    """The spec's fullname: a dotted name as is, else qualified by `namespace` or the enclosing one."""
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise AvroSchemaError(f"{_at(path)}: a {doc['type']} needs a name")
    namespace = doc.get("namespace", space)
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _enum(doc: dict[str, Any], path: str) -> EnumType:
    symbols = doc.get("symbols")
    if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
        raise AvroSchemaError(f"{_at(path)}: an enum needs a list of symbol strings")
    if len(set(symbols)) != len(symbols):
        raise AvroSchemaError(f"{_at(path)}: enum symbols must be unique")
    default = doc.get("default")
    if default is not None and default not in symbols:
        raise AvroSchemaError(f"{_at(path)}: enum default {default!r} is not one of its symbols")
    return EnumType(tuple(symbols), default)


def _fixed(doc: dict[str, Any], path: str) -> DataType:
    size = doc.get("size")
    if not _is_int(size) or size < 0:
        raise AvroSchemaError(f"{_at(path)}: a fixed needs a non-negative integer size")
    if doc.get("logicalType") == "uuid" and size == 16:
        return UuidType()
    if doc.get("logicalType") == "decimal" and size > 0:
        # The most digits a signed two's-complement number of `size` bytes holds (the spec's bound).
        return _decimal(doc, len(str(2 ** (8 * size - 1) - 1)) - 1) or FixedType(size)
    return FixedType(size)


def _with_logical(base: PrimitiveType, doc: dict[str, Any]) -> PrimitiveType:
    """The logical type on a primitive, or the primitive when the logical type is unknown or invalid."""
    logical: str = doc.get("logicalType", "")
    if logical == "decimal" and base == BinaryType():
        return _decimal(doc, None) or base
    return _LOGICAL_IN.get((logical, doc["type"]), base)


def _decimal(doc: dict[str, Any], max_precision: int | None) -> DecimalType | None:
    precision, scale = doc.get("precision"), doc.get("scale", 0)
    if not (_is_int(precision) and _is_int(scale) and 0 <= scale <= precision and precision > 0):
        return None
    return DecimalType(precision, scale) if max_precision is None or precision <= max_precision else None


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
        raise AvroSchemaError(f"{_at(path)}: Avro map keys are strings, not {describe(t.key)}")
    return {"type": "map", "values": _nullable(value(_suffixed(names, ".value")), t.value_nullable)}


def _enum_to_avro(t: EnumType, path: str, names: list[str]) -> dict[str, Any]:
    if not t.symbols:
        raise AvroSchemaError(f"{_at(path)}: an enum without symbols has no Avro type")
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
        raise AvroSchemaError(f"{_at(path)}: {describe(t)} has no Avro type: {why}")
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
            raise AvroSchemaError(f"{path}: metadata {key}={value!r} clashes with an Avro field attribute")
        doc[key] = value
    return doc


def _field_type_names(f: Field, record: list[str]) -> list[str]:
    """`record.field`, then the names the type may have been written under: any earlier name of the
    record joined with any earlier name of the field."""
    name = f"{record[0]}.{f.name}"
    aliases = dict.fromkeys(f"{r}.{n}" for r in record for n in (f.name, *f.aliases))
    return [name, *(a for a in aliases if a != name)]


def _nullable(t: Any, nullable: bool, default_json: str | None = None) -> Any:
    """A union with null, null first unless a non-null default must match the first branch."""
    if not nullable:
        return t
    return ["null", t] if default_json in (None, "null") else [t, "null"]


def _check_names(names: tuple[str, ...], path: str, what: str) -> None:
    for n in names:
        if not _NAME.fullmatch(n):
            raise AvroSchemaError(f"{_at(path)}: {what} {n!r} is not an Avro name ([A-Za-z_][A-Za-z0-9_]*)")
