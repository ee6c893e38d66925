"""Iceberg schemas and name mappings, decoded from their JSON form (the table spec, "Appendix C:
JSON serialization") into the neutral model.

A field keeps its id and its nullability (`required`); a v3 `initial-default` becomes the field's
default (what a reader fills in for files written before the field existed), a `write-default`
and a `doc` become field metadata. List elements and map keys and values have ids of their own
that the model does not carry: they matter only to the name mapping, which is decoded here into
model paths (`a.b`, `xs[]`, `m{key}`) so that a footer field can be looked up by its path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from schemaguard.formats.io import SchemaLoadError
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    Field,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IntType,
    ListType,
    MapType,
    Schema,
    StringType,
    StructType,
    TimestampType,
    TimeType,
    UuidType,
    VariantType,
    canonical_json,
    make_metadata,
)
from schemaguard.paths import ELEMENT, KEY, VALUE, join

NAME_MAPPING_KEY = "schema.name-mapping.default"  # the table property holding the name mapping
WRITE_DEFAULT_KEY = "iceberg.write-default"  # field metadata: the v3 write default, as JSON
DOC_KEY = "iceberg.doc"

# The spec's primitive types ("Schemas and Data Types"); parameterised ones are matched below.
_PRIMITIVES: dict[str, DataType] = {
    "boolean": BooleanType(),
    "int": IntType(32),
    "long": IntType(64),
    "float": FloatType(32),
    "double": FloatType(64),
    "date": DateType(),
    "time": TimeType("us"),
    "timestamp": TimestampType("us", utc=False),
    "timestamptz": TimestampType("us", utc=True),
    "timestamp_ns": TimestampType("ns", utc=False),
    "timestamptz_ns": TimestampType("ns", utc=True),
    "string": StringType(),
    "uuid": UuidType(),
    "binary": BinaryType(),
    "variant": VariantType(),
    "geometry": GeometryType(),
    "geography": GeographyType(),
}
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED = re.compile(r"fixed\[\s*(\d+)\s*\]")
_GEOMETRY = re.compile(r"geometry\(\s*([^,)]+?)\s*\)")
_GEOGRAPHY = re.compile(r"geography\(\s*([^,)]+?)\s*(?:,\s*([^)]+?)\s*)?\)")


def iceberg_schema(doc: Mapping[str, Any]) -> Schema:
    """A schema (`{"type": "struct", "fields": [...]}`, `type` optional) as the model holds it."""
    return Schema(tuple(_field(f) for f in _fields({"type": "struct", **doc})))


def _fields(doc: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    fields = doc.get("fields")
    if doc.get("type") != "struct" or not isinstance(fields, list | tuple):
        raise SchemaLoadError(f"not an Iceberg struct: {canonical_json(doc)[:200]}")
    return fields


def _field(f: Mapping[str, Any]) -> Field:
    try:
        name, fid, required = f["name"], f["id"], f["required"]
    except KeyError as e:
        raise SchemaLoadError(f"Iceberg field without {e.args[0]!r}: {canonical_json(f)[:200]}") from None
    meta = {}
    if "write-default" in f:
        meta[WRITE_DEFAULT_KEY] = canonical_json(f["write-default"])
    if f.get("doc"):
        meta[DOC_KEY] = str(f["doc"])
    return Field(str(name), _type(f["type"]), not required, int(fid),
                 canonical_json(f["initial-default"]) if "initial-default" in f else None,
                 metadata=make_metadata(meta))


def _type(t: Any) -> DataType:
    if isinstance(t, dict):
        kind = t.get("type")
        if kind == "struct":
            return StructType(tuple(_field(f) for f in _fields(t)))
        if kind == "list":
            return ListType(_type(t["element"]), not t["element-required"])
        if kind == "map":
            return MapType(_type(t["key"]), _type(t["value"]), not t["value-required"])
        raise SchemaLoadError(f"unknown Iceberg nested type {kind!r}")
    if not isinstance(t, str):
        raise SchemaLoadError(f"not an Iceberg type: {t!r}")
    if t in _PRIMITIVES:
        return _PRIMITIVES[t]
    if m := _DECIMAL.fullmatch(t):
        return DecimalType(int(m[1]), int(m[2]))
    if m := _FIXED.fullmatch(t):
        return FixedType(int(m[1]))
    if m := _GEOMETRY.fullmatch(t):
        return GeometryType(m[1])
    if m := _GEOGRAPHY.fullmatch(t):
        return GeographyType(m[1], m[2].lower() if m[2] else None)
    raise SchemaLoadError(f"Iceberg type {t!r} has no counterpart here (v3 `unknown` is not supported)")


# ---------------------------------------------------------------------------------------------
# Name mapping (spec "Column Projection": files without field ids)


def name_mapping(doc: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """A name mapping as model path -> field id, one path per name and alias. The spec spells a
    list element `element` and map slots `key` and `value`, and the mapping does not say whether
    a node is a list, a map or a struct: such a name maps both as a slot (`[]`, `{key}`,
    `{value}`) and as a struct field, and a footer's own path picks the one that applies."""
    return dict(_mapped(doc, ""))


_SLOTS = {"element": ELEMENT, "key": KEY, "value": VALUE}


def _mapped(fields: Sequence[Mapping[str, Any]], parent: str) -> Iterator[tuple[str, int]]:
    for f in fields:
        if not isinstance(f, Mapping):
            raise SchemaLoadError(f"not a name mapping field: {f!r}")
        for name in f.get("names", ()):
            paths = [join(parent, str(name))]
            if parent and name in _SLOTS:
                paths.append(parent + _SLOTS[name])
            for path in paths:
                if f.get("field-id") is not None:
                    yield path, int(f["field-id"])
                yield from _mapped(f.get("fields") or (), path)
