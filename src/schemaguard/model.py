"""The neutral schema model: one immutable class per type, fields, schemas, paths, fingerprints.

Every converter in `formats/` reads into and writes out of these classes; the rules compare them.
Paths address a node inside a schema: struct fields join with `.`, a list element is `[]`, a map
key is `{key}` and a map value is `{value}` (so `orders.items[].price` and `attrs{value}`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

TimeUnit = Literal["ms", "us", "ns"]
Identity = Literal["name", "name-ci", "id", "position"]
TIME_UNITS: tuple[TimeUnit, ...] = ("ms", "us", "ns")


@dataclass(frozen=True, slots=True)
class BooleanType:
    pass


@dataclass(frozen=True, slots=True)
class IntType:
    bits: int
    signed: bool = True


@dataclass(frozen=True, slots=True)
class FloatType:
    """IEEE floating point: 16 (half), 32 (`float`) or 64 (`double`) bits."""

    bits: int


@dataclass(frozen=True, slots=True)
class DecimalType:
    precision: int
    scale: int


@dataclass(frozen=True, slots=True)
class StringType:
    pass


@dataclass(frozen=True, slots=True)
class BinaryType:
    pass


@dataclass(frozen=True, slots=True)
class FixedType:
    length: int


@dataclass(frozen=True, slots=True)
class UuidType:
    pass


@dataclass(frozen=True, slots=True)
class JsonType:
    pass


@dataclass(frozen=True, slots=True)
class DateType:
    pass


@dataclass(frozen=True, slots=True)
class TimeType:
    unit: TimeUnit


@dataclass(frozen=True, slots=True)
class TimestampType:
    """A timestamp with a unit; `utc` is Parquet's isAdjustedToUTC (instant vs local wall time)."""

    unit: TimeUnit
    utc: bool


@dataclass(frozen=True, slots=True)
class Int96Type:
    """Legacy INT96 timestamp: no unit or zone annotation, only a writer convention."""


@dataclass(frozen=True, slots=True)
class EnumType:
    """An enum; `symbols` is empty when the source (a Parquet ENUM annotation) does not list them."""

    symbols: tuple[str, ...]
    default: str | None = None


@dataclass(frozen=True, slots=True)
class StructType:
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class ListType:
    element: DataType
    element_nullable: bool = False


@dataclass(frozen=True, slots=True)
class MapType:
    key: DataType
    value: DataType
    value_nullable: bool = False


PrimitiveType = (
    BooleanType | IntType | FloatType | DecimalType | StringType | BinaryType | FixedType
    | UuidType | JsonType | DateType | TimeType | TimestampType | Int96Type
)
DataType = PrimitiveType | EnumType | StructType | ListType | MapType


@dataclass(frozen=True, slots=True)
class Field:
    """One named field. `default_json` is the default as canonical JSON text (None: no default,
    "null": a null default), so that a field stays hashable whatever its default is."""

    name: str
    type: DataType
    nullable: bool = True
    id: int | None = None
    default_json: str | None = None
    aliases: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = field(default=())

    @property
    def has_default(self) -> bool:
        return self.default_json is not None

    @property
    def default(self) -> object:
        if self.default_json is None:
            raise ValueError(f"field {self.name!r} has no default")
        return json.loads(self.default_json)

    @property
    def meta(self) -> dict[str, str]:
        return dict(self.metadata)


@dataclass(frozen=True, slots=True)
class Schema:
    fields: tuple[Field, ...]

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]


def canonical_json(value: object) -> str:
    """The one JSON spelling of a value: sorted keys, no spaces (used for defaults and hashes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def make_metadata(meta: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    """Metadata as sorted pairs: key order never matters to a reader."""
    return tuple(sorted((meta or {}).items()))


# ---------------------------------------------------------------------------------------------
# Walking a schema


def child_nodes(t: DataType) -> Iterator[tuple[str, DataType, bool]]:
    """The direct children of a type as (path suffix, type, nullable)."""
    if isinstance(t, StructType):
        for f in t.fields:
            yield "." + f.name, f.type, f.nullable
    elif isinstance(t, ListType):
        yield "[]", t.element, t.element_nullable
    elif isinstance(t, MapType):
        yield "{key}", t.key, False
        yield "{value}", t.value, t.value_nullable


def walk(schema: Schema) -> Iterator[tuple[str, DataType, bool]]:
    """Every node of a schema, depth first, as (path, type, nullable)."""

    def visit(path: str, t: DataType, nullable: bool) -> Iterator[tuple[str, DataType, bool]]:
        yield path, t, nullable
        for suffix, child, child_nullable in child_nodes(t):
            yield from visit(path + suffix, child, child_nullable)

    for f in schema.fields:
        yield from visit(f.name, f.type, f.nullable)


def is_nested(t: DataType) -> bool:
    return isinstance(t, StructType | ListType | MapType)


def leaves(schema: Schema) -> dict[str, tuple[DataType, bool]]:
    """Leaf paths (non-nested nodes) mapped to (type, nullable)."""
    return {p: (t, n) for p, t, n in walk(schema) if not is_nested(t)}


# ---------------------------------------------------------------------------------------------
# Fingerprints


def fingerprint(schema: Schema, identity: Identity = "position") -> str:
    """A stable hash of a schema, 16 hex digits.

    What it ignores, and why:
    - metadata key order and alias order always (no reader looks at either);
    - struct field order under `name`, `name-ci` and `id` identity, because readers that bind by
      name or id (Spark, Delta, Iceberg, Avro) read a reordered file the same way; under
      `position` (the default, used to group files into versions) order counts, because
      positional readers and Spark's merged column order depend on it.
    Enum symbol order always counts (Avro encodes an enum by its index).
    """
    from schemaguard.formats.notation import schema_to_notation  # the notation is the canonical form

    canonical = Schema(_canonical_fields(schema.fields, identity))
    return hashlib.sha256(canonical_json(schema_to_notation(canonical)).encode()).hexdigest()[:16]


def _canonical_fields(fields: tuple[Field, ...], identity: Identity) -> tuple[Field, ...]:
    out = tuple(
        Field(f.name, _canonical_type(f.type, identity), f.nullable, f.id, f.default_json,
              tuple(sorted(f.aliases)), f.metadata)
        for f in fields
    )
    if identity == "position":
        return out
    return tuple(sorted(out, key=lambda f: _field_key(f, identity)))


def _canonical_type(t: DataType, identity: Identity) -> DataType:
    if isinstance(t, StructType):
        return StructType(_canonical_fields(t.fields, identity))
    if isinstance(t, ListType):
        return ListType(_canonical_type(t.element, identity), t.element_nullable)
    if isinstance(t, MapType):
        return MapType(_canonical_type(t.key, identity), _canonical_type(t.value, identity),
                       t.value_nullable)
    return t


def _field_key(f: Field, identity: Identity) -> tuple[int, str]:
    if identity == "id" and f.id is not None:
        return (0, f"{f.id:>12}")
    return (1, f.name.lower() if identity == "name-ci" else f.name)
