"""The neutral JSON notation of docs/design.md, read and written losslessly.

Writing always spells a field the same way (`name`, `id`, `type`, `nullable`, then `default`,
`aliases`, `metadata` only when present), so notation -> model -> notation is the identity on
canonical documents and model -> notation -> model is the identity on every model. Being that
one spelling, it is also what `fingerprint` hashes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from schemaguard.errors import TOO_DEEP, UsageError, require_regular
from schemaguard.model import (
    INTERVAL_FIELDS,
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
    GeographyType,
    GeometryType,
    Int96Type,
    IntervalType,
    IntType,
    JsonType,
    ListType,
    MapType,
    PrimitiveType,
    Schema,
    SchemaTransform,
    SchemaVisitor,
    StringType,
    StructType,
    TimestampType,
    TimeType,
    UuidType,
    VariantType,
    VoidType,
    canonical_json,
    transform,
    visit,
)
from schemaguard.names import Identity
from schemaguard.paths import ELEMENT, KEY, VALUE


class NotationError(UsageError, ValueError):
    """A document that is not valid notation; the message names the place inside it."""


_SIMPLE: dict[str, PrimitiveType] = {
    "boolean": BooleanType(),
    "float16": FloatType(16),
    "float": FloatType(32),
    "double": FloatType(64),
    "string": StringType(),
    "binary": BinaryType(),
    "uuid": UuidType(),
    "json": JsonType(),
    "date": DateType(),
    "timestamp_int96": Int96Type(),
    "variant": VariantType(),
    "void": VoidType(),
}
for _bits in (8, 16, 32, 64):
    _SIMPLE[f"int{_bits}"] = IntType(_bits, True)
    _SIMPLE[f"uint{_bits}"] = IntType(_bits, False)
for _unit in TIME_UNITS:
    _SIMPLE[f"time_{_unit}"] = TimeType(_unit)
    _SIMPLE[f"timestamp_{_unit}_utc"] = TimestampType(_unit, True)
    _SIMPLE[f"timestamp_{_unit}_local"] = TimestampType(_unit, False)
_NAMES: dict[PrimitiveType, str] = {t: n for n, t in _SIMPLE.items()}

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED = re.compile(r"fixed\(\s*(\d+)\s*\)")
# geometry("EPSG:4326"), geography(null, "KARNEY"): parameters as JSON strings, since a CRS may
# hold any character (PROJJSON, commas, parentheses).
_INTERVAL = re.compile(r"interval_([a-z]+)(?:_to_([a-z]+))?")
_GEO = re.compile(r"(geometry|geography)(?:\((.*)\))?", re.DOTALL)


def type_name(t: PrimitiveType) -> str:
    """The notation spelling of a primitive type (`decimal(12,2)`, `timestamp_us_utc`, ...)."""
    name = _NAMES.get(t)  # the types without parameters first: most columns are one of them
    if name is not None:
        return name
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, FixedType):
        return f"fixed({t.length})"
    if isinstance(t, IntervalType):
        return f"interval_{t.start}" + ("" if t.end == t.start else f"_to_{t.end}")
    if isinstance(t, GeometryType):
        return "geometry" if t.crs is None else f"geometry({json.dumps(t.crs)})"
    if isinstance(t, GeographyType):
        if t.crs is None and t.algorithm is None:
            return "geography"
        return f"geography({json.dumps(t.crs)}, {json.dumps(t.algorithm)})"
    raise NotationError(f"no notation for type {t!r}")


def parse_primitive(text: str, where: str = "type") -> PrimitiveType:
    if text in _SIMPLE:
        return _SIMPLE[text]
    if m := _DECIMAL.fullmatch(text):
        precision, scale = int(m[1]), int(m[2])
        if not precision >= 1 or scale > precision:
            raise NotationError(
                f"{where}: decimal({precision},{scale}) needs 1 <= precision and scale <= precision")
        return DecimalType(precision, scale)
    if m := _FIXED.fullmatch(text):
        return FixedType(int(m[1]))
    if m := _GEO.fullmatch(text):
        return _geo(m[1], m[2], where)
    if m := _INTERVAL.fullmatch(text):
        try:
            return interval(m[1], m[2] or m[1])
        except ValueError as e:
            raise NotationError(f"{where}: {e}") from None
    raise NotationError(f"{where}: unknown type {text!r}")


def interval(start: str, end: str) -> IntervalType:
    """Spark's ANSI interval from `start` to `end` (lower case), checked as Spark checks it: both
    year-month fields or both day-time ones, the start no finer than the end."""
    families = (INTERVAL_FIELDS[:2], INTERVAL_FIELDS[2:])
    family = next((f for f in families if start in f), ())
    if end not in family or family.index(start) > family.index(end):
        shown = start if start == end else f"{start} to {end}"
        raise ValueError(f"interval {shown} is no Spark interval: year to month, or day, hour, "
                         "minute, second from coarser to finer")
    return IntervalType(start, end)


def _geo(kind: str, params: str | None, where: str) -> PrimitiveType:
    try:
        values = json.loads(f"[{params}]") if params is not None else []
    except json.JSONDecodeError:
        values = None
    limit = 1 if kind == "geometry" else 2
    if not isinstance(values, list) or len(values) > limit or not all(
            v is None or isinstance(v, str) for v in values):
        raise NotationError(f"{where}: {kind} takes up to {limit} JSON strings (or null), e.g. "
                            f'{kind}("EPSG:4326")')
    padded = [*values, None, None]
    return GeometryType(padded[0]) if kind == "geometry" else GeographyType(padded[0], padded[1])


class _Describe(SchemaVisitor[str, str]):
    """`describe`, node by node."""

    def field(self, f: Field, path: str, type_result: str) -> str:
        return f"{f.name}:{type_result}"

    def struct(self, t: StructType, path: str, fields: Sequence[str]) -> str:
        return "struct<" + ",".join(fields) + ">"

    def list(self, t: ListType, path: str, element: str) -> str:
        return f"list<{element}>"

    def map(self, t: MapType, path: str, key: str, value: str) -> str:
        return f"map<{key},{value}>"

    def enum(self, t: EnumType, path: str) -> str:
        return "enum<" + ",".join(t.symbols) + ">" if t.symbols else "enum"

    def primitive(self, t: PrimitiveType, path: str) -> str:
        return type_name(t)


def describe(t: DataType) -> str:
    """A short one-line spelling of any type, for messages and tables."""
    if isinstance(t, StructType | ListType | MapType):
        return visit(t, _Describe())
    return _describe_leaf(t)


@functools.lru_cache(maxsize=4096)
def _describe_leaf(t: DataType) -> str:
    """`describe` of a type without children, remembered: a wide table repeats a few types."""
    return visit(t, _Describe())


# ---------------------------------------------------------------------------------------------
# model -> notation


class _ToNotation(SchemaVisitor[Any, dict[str, Any]]):
    """The notation of each node; a schema is `{"fields": [...]}`."""

    def schema(self, schema: Schema, fields: Sequence[dict[str, Any]]) -> Any:
        return {"fields": list(fields)}

    def field(self, f: Field, path: str, type_result: Any) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": f.name, "id": f.id, "type": type_result, "nullable": f.nullable}
        if f.default_json is not None:
            doc["default"] = json.loads(f.default_json)
        if f.aliases:
            doc["aliases"] = list(f.aliases)
        if f.metadata:
            doc["metadata"] = dict(f.metadata)
        return doc

    def struct(self, t: StructType, path: str, fields: Sequence[dict[str, Any]]) -> Any:
        return {"struct": list(fields)}

    def list(self, t: ListType, path: str, element: Any) -> Any:
        return {"list": element, "element_nullable": t.element_nullable}

    def map(self, t: MapType, path: str, key: Any, value: Any) -> Any:
        return {"map": [key, value], "value_nullable": t.value_nullable}

    def enum(self, t: EnumType, path: str) -> Any:
        doc: dict[str, Any] = {"enum": list(t.symbols)}
        if t.default is not None:
            doc["default"] = t.default
        return doc

    def primitive(self, t: PrimitiveType, path: str) -> Any:
        return type_name(t)


def type_to_notation(t: DataType) -> Any:
    return visit(t, _ToNotation())


def schema_to_notation(schema: Schema) -> dict[str, Any]:
    doc: dict[str, Any] = visit(schema, _ToNotation())
    return doc


def dumps(schema: Schema, indent: int | None = None) -> str:
    return json.dumps(schema_to_notation(schema), indent=indent, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Fingerprints


def fingerprint(schema: Schema, identity: Identity = "position") -> str:
    """A stable hash of a schema, 16 hex digits: of its notation, once made canonical.

    What it ignores, and why:
    - metadata key order and alias order always (no reader looks at either);
    - struct field order under `name`, `name-ci` and `id` identity, because readers that bind by
      name or id (Spark, Delta, Iceberg, Avro) read a reordered file the same way; under
      `position` (the default, used to group files into versions) order counts, because
      positional readers and Spark's merged column order depend on it.
    Enum symbol order always counts (Avro encodes an enum by its index).
    """
    canonical = transform(schema, _Canonical(identity))
    return hashlib.sha256(canonical_json(schema_to_notation(canonical)).encode()).hexdigest()[:16]


class _Canonical(SchemaTransform):
    """Aliases sorted; struct fields sorted too unless `identity` binds by position."""

    def __init__(self, identity: Identity) -> None:
        self.identity = identity

    def field(self, f: Field, path: str, type_result: DataType) -> Field:
        return replace(f, type=type_result, aliases=tuple(sorted(f.aliases)))

    def struct(self, t: StructType, path: str, fields: Sequence[Field]) -> DataType:
        if self.identity == "position":
            return StructType(tuple(fields))
        return StructType(tuple(sorted(fields, key=self._key)))

    def _key(self, f: Field) -> tuple[int, str]:
        if self.identity == "id" and f.id is not None:
            return (0, f"{f.id:>12}")
        return (1, f.name.lower() if self.identity == "name-ci" else f.name)


# ---------------------------------------------------------------------------------------------
# notation -> model


def _expect(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise NotationError(f"{where}: {message}")


_TYPE_KEYS = {
    "struct": {"struct"},
    "list": {"list", "element_nullable"},
    "map": {"map", "value_nullable"},
    "enum": {"enum", "default"},
}


def type_from_notation(doc: Any, where: str) -> DataType:
    if isinstance(doc, str):
        return parse_primitive(doc, where)
    _expect(isinstance(doc, dict), where, f"a type is a string or an object, not {doc!r}")
    kinds = [k for k in _TYPE_KEYS if k in doc]
    _expect(len(kinds) == 1, where, f"unknown type object with keys {sorted(doc)} "
            f"(a type object has exactly one of {sorted(_TYPE_KEYS)})")
    unknown = set(doc) - _TYPE_KEYS[kinds[0]]
    _expect(not unknown, where, f"unknown keys {sorted(unknown)} in a {kinds[0]} type")
    if "struct" in doc:
        _expect(isinstance(doc["struct"], list), where, "struct needs a list of fields")
        return StructType(_fields_from_notation(doc["struct"], where))
    if "list" in doc:
        nullable = doc.get("element_nullable", False)
        _expect(isinstance(nullable, bool), where, "element_nullable must be true or false")
        return ListType(type_from_notation(doc["list"], where + ELEMENT), nullable)
    if "map" in doc:
        kv = doc["map"]
        _expect(isinstance(kv, list) and len(kv) == 2, where, "map needs [key type, value type]")
        nullable = doc.get("value_nullable", False)
        _expect(isinstance(nullable, bool), where, "value_nullable must be true or false")
        return MapType(
            type_from_notation(kv[0], where + KEY),
            type_from_notation(kv[1], where + VALUE),
            nullable,
        )
    symbols = doc["enum"]  # the one kind left
    _expect(
        isinstance(symbols, list) and all(isinstance(s, str) for s in symbols),
        where, "enum needs a list of symbol strings",
    )
    _expect(len(set(symbols)) == len(symbols), where, "enum symbols must be unique")
    default = doc.get("default")
    _expect(default is None or default in symbols, where,
            f"enum default {default!r} is not one of its symbols")
    return EnumType(tuple(symbols), default)


_FIELD_KEYS = {"name", "id", "type", "nullable", "default", "aliases", "metadata"}


def field_from_notation(doc: Any, where: str, index: int) -> Field:
    place = f"{where or 'fields'}[{index}]"  # until the field has a name to be called by
    _expect(isinstance(doc, dict), place, "a field is an object")
    name = doc.get("name")
    _expect(isinstance(name, str) and name != "", place, "field needs a non-empty string name")
    here = f"{where}.{name}" if where else name
    unknown = set(doc) - _FIELD_KEYS
    _expect(not unknown, here, f"unknown field keys {sorted(unknown)}")
    _expect("type" in doc, here, "field needs a type")
    fid = doc.get("id")
    _expect(fid is None or (isinstance(fid, int) and not isinstance(fid, bool)), here,
            "id must be an integer or null")
    nullable = doc.get("nullable", True)
    _expect(isinstance(nullable, bool), here, "nullable must be true or false")
    aliases = doc.get("aliases", [])
    _expect(isinstance(aliases, list) and all(isinstance(a, str) for a in aliases), here,
            "aliases must be a list of strings")
    meta = doc.get("metadata", {})
    _expect(isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values()), here,
            "metadata must map strings to strings")
    return Field(
        name=name,
        type=type_from_notation(doc["type"], here),
        nullable=nullable,
        id=fid,
        default_json=canonical_json(doc["default"]) if "default" in doc else None,
        aliases=tuple(aliases),
        metadata=tuple(sorted(meta.items())),
    )


def _fields_from_notation(docs: list[Any], where: str) -> tuple[Field, ...]:
    fields = tuple(field_from_notation(d, where, i) for i, d in enumerate(docs))
    names = [f.name for f in fields]
    dupes = sorted(n for n, k in Counter(names).items() if k > 1)  # linear: schemas of 50,000 fields
    _expect(not dupes, where or "schema", f"duplicate field names {dupes}")
    return fields


def schema_from_notation(doc: Any) -> Schema:
    """The model of a notation document. One that uses `null`, a `union` or a type `name` is an
    Avro schema written in the notation: `formats.avro.schema_from_avro_notation` reads it (schema
    files are told apart by `sources.py`)."""
    _expect(isinstance(doc, dict) and isinstance(doc.get("fields"), list), "schema",
            'a schema is {"fields": [...]}')
    _expect(not uses_avro(doc["fields"]), "schema", "this document uses Avro's null, unions or type "
            "names: read it with formats.avro.schema_from_avro_notation")
    return Schema(_fields_from_notation(doc["fields"], ""))


AVRO_KEYS = ("union", "fixed", "name", "aliases")  # type-object keys only Avro schemas need


def uses_avro(doc: Any) -> bool:
    """Does a notation document (or part of one) use `null`, a union or a named type?"""
    if doc == "null":
        return True
    if isinstance(doc, list):
        return any(uses_avro(d) for d in doc)
    if not isinstance(doc, dict):
        return False
    if not any(k in doc for k in (*_TYPE_KEYS, "union", "fixed")):  # a field: its type
        return uses_avro(doc.get("type"))
    return any(k in doc for k in AVRO_KEYS) or any(
        uses_avro(doc[k]) for k in ("struct", "list", "map") if k in doc)


def loads(text: str) -> Schema:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise NotationError(f"not JSON: {e}") from e
    except RecursionError:
        raise NotationError(TOO_DEEP) from None
    return schema_from_notation(doc)


def load(path: Path) -> Schema:
    require_regular(path, str(path))
    return loads(path.read_text(encoding="utf-8"))
