"""The neutral schema model: one immutable class per type, fields, schemas, and the walk.

Every converter in `formats/` reads into and writes out of these classes; the rules compare them.
Each node the walk visits comes with its path (`paths.py`: how a path is spelt and read back).

May import: names, paths. Must not: know any file format or reader (those are `formats/` and `rules/`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Generic, Literal, NamedTuple, Protocol, TypeVar, overload

from schemaguard.paths import ELEMENT, KEY, VALUE, join, parts, segment

TimeUnit = Literal["ms", "us", "ns"]
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
    # The Parquet physical type a footer stores it on (INT32, INT64, FIXED_LEN_BYTE_ARRAY,
    # BYTE_ARRAY), when known. Not part of the type: files differing only here hold the same
    # decimal. Spark's reader tells them apart (a scale-0 decimal on INT32 reads as an int).
    physical: str | None = field(default=None, compare=False, repr=False)


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
class VariantType:
    """Semi-structured values: Parquet's VARIANT group (metadata and value, maybe shredded into
    typed columns), which Spark 4 reads as one `variant` column however it is shredded."""


@dataclass(frozen=True, slots=True)
class VoidType:
    """Spark's NullType (`void`): a column that holds no values, only NULL. Delta keeps it in a
    table's schema and leaves it out of the Parquet files it writes."""


# Spark's ANSI interval fields, coarsest first: a year-month interval is a span of the first two,
# a day-time interval of the last four.
INTERVAL_FIELDS = ("year", "month", "day", "hour", "minute", "second")


@dataclass(frozen=True, slots=True)
class IntervalType:
    """Spark's ANSI interval, `start` to `end` (two of INTERVAL_FIELDS, the same when one): a
    year-month interval is a count of months, a day-time one of microseconds. Spark writes them to
    Parquet as plain INT32 and INT64 and names the type only in its own footer schema."""

    start: str
    end: str

    @property
    def months(self) -> bool:
        """A year-month interval (a count of months), else a day-time one (microseconds)."""
        return self.start in INTERVAL_FIELDS[:2]


@dataclass(frozen=True, slots=True)
class GeometryType:
    """Parquet GEOMETRY (WKB); `crs` as written, None when the footer names none (OGC:CRS84)."""

    crs: str | None = None


@dataclass(frozen=True, slots=True)
class GeographyType:
    """Parquet GEOGRAPHY (WKB); `crs` and the edge `algorithm` as written, None when absent (the
    spec's defaults: OGC:CRS84 and SPHERICAL)."""

    crs: str | None = None
    algorithm: str | None = None


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
    | UuidType | JsonType | DateType | TimeType | TimestampType | Int96Type | VariantType
    | VoidType | GeometryType | GeographyType | IntervalType
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

    def __reduce__(self) -> tuple[Callable[..., Field], tuple[object, ...]]:
        # Rebuilt by `new_field`: a slotted dataclass's default pickling (a state dict per field)
        # unpickles a 20,000-column footer schema from its worker four times as slowly.
        if self.default_json is None and not self.aliases and not self.metadata:
            return new_field, (self.name, self.type, self.nullable, self.id)
        return new_field, (self.name, self.type, self.nullable, self.id, self.default_json, self.aliases,
                           self.metadata)

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


_SET_FIELD = tuple(getattr(Field, name).__set__ for name in (
    "name", "type", "nullable", "id", "default_json", "aliases", "metadata"))


def new_field(name: str, type: DataType, nullable: bool = True, id: int | None = None,
              default_json: str | None = None, aliases: tuple[str, ...] = (),
              metadata: tuple[tuple[str, str], ...] = ()) -> Field:
    """`Field(...)`, built by its slots: a frozen dataclass's constructor sets each attribute
    through `object.__setattr__`, twice as slow, and a wide footer holds tens of thousands."""
    f = object.__new__(Field)
    set_name, set_type, set_nullable, set_id, set_default, set_aliases, set_metadata = _SET_FIELD
    set_name(f, name)
    set_type(f, type)
    set_nullable(f, nullable)
    set_id(f, id)
    set_default(f, default_json)
    set_aliases(f, aliases)
    set_metadata(f, metadata)
    return f


@dataclass(frozen=True, slots=True)
class Schema:
    """Top-level fields. A schema read from Avro keeps its Avro graph (formats/avro_schema.AvroType)
    for the avro profile; `unmodelled` says why an Avro schema has no columns here (a recursive
    type, a top level that is not a record): only the avro profile reads it."""

    fields: tuple[Field, ...]
    avro: object = field(default=None, compare=False, repr=False)
    unmodelled: str | None = field(default=None, compare=False, repr=False)
    # `walk` and `fields_of`, kept once made: a schema is immutable and a dozen checks walk each
    # version (on 20,000 columns a walk is 20 ms). `replace` makes a schema without them.
    _nodes: tuple[tuple[str, DataType, bool], ...] | None = field(
        default=None, init=False, compare=False, repr=False)
    _fields: tuple[tuple[str, Field], ...] | None = field(default=None, init=False, compare=False, repr=False)

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def __reduce__(self) -> tuple[type[Schema], tuple[Any, ...]]:
        return Schema, (self.fields, self.avro, self.unmodelled)  # pickled without its walk


def canonical_json(value: object) -> str:
    """The one JSON spelling of a value: sorted keys, no spaces (used for defaults and hashes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def make_metadata(meta: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    """Metadata as sorted pairs: key order never matters to a reader."""
    return tuple(sorted((meta or {}).items()))


# ---------------------------------------------------------------------------------------------
# Walking a schema
#
# One walk, post-order: `visit` runs a SchemaVisitor over one tree, `visit_with_partner` a
# PartnerVisitor over two trees side by side, and each method gets its node, the node's path and
# its children's results. A new type of the model needs one method on each base and one branch in
# each driver (`_visit_type`, `_visit_pair`).



T = TypeVar("T")  # what a type (and a schema) becomes
F = TypeVar("F")  # what a field becomes
Leaf = PrimitiveType | EnumType  # the types without children
_PRIMITIVES, _LEAVES = frozenset(PrimitiveType.__args__), frozenset(Leaf.__args__)  # told by class alone
_NODE, _FIELD, _FIELD_AT = itemgetter(0, 1, 2), itemgetter(0, 3), itemgetter(3)  # of the walk's entries
Container = StructType | ListType | MapType  # the types with children


def fields_along(schema: Schema, path: str, pick: Callable[[Sequence[Field], str], Field | None]
                 ) -> list[Field] | None:
    """The fields a struct-field path names, from the top, each found among its struct's fields by
    `pick(fields, name)` (how a reader resolves a name: exactly, or ignoring case); None when
    `pick` finds none at some step."""
    fields: Sequence[Field] = schema.fields
    out = []
    for name in parts(path):
        f = pick(fields, name)
        if f is None:
            return None
        out.append(f)
        fields = f.type.fields if isinstance(f.type, StructType) else ()
    return out


class SchemaVisitor(ABC, Generic[T, F]):
    """A post-order walk of one tree: each method gets a node, its path and its children's results."""

    def schema(self, schema: Schema, fields: Sequence[F]) -> T:
        """A schema is its top-level struct unless a subclass says otherwise."""
        return self.struct(StructType(schema.fields), "", fields)

    @abstractmethod
    def field(self, f: Field, path: str, type_result: T) -> F: ...

    @abstractmethod
    def struct(self, t: StructType, path: str, fields: Sequence[F]) -> T: ...

    @abstractmethod
    def list(self, t: ListType, path: str, element: T) -> T: ...

    @abstractmethod
    def map(self, t: MapType, path: str, key: T, value: T) -> T: ...

    @abstractmethod
    def enum(self, t: EnumType, path: str) -> T: ...

    @abstractmethod
    def primitive(self, t: PrimitiveType, path: str) -> T: ...


def visit(node: Schema | DataType, visitor: SchemaVisitor[T, F], path: str = "") -> T:
    """Run `visitor` over a schema, or over a type that sits at `path` (a schema is the top, "")."""
    if isinstance(node, Schema):
        return visitor.schema(node, _visit_fields(node.fields, "", visitor))
    return _visit_type(node, path, visitor)


def _visit_fields(fields: tuple[Field, ...], parent: str, v: SchemaVisitor[T, F]) -> list[F]:
    return [_visit_field(f, join(parent, f.name), v) for f in fields]


def _visit_field(f: Field, path: str, v: SchemaVisitor[T, F]) -> F:
    return v.field(f, path, _visit_type(f.type, path, v))


def _visit_type(t: DataType, path: str, v: SchemaVisitor[T, F]) -> T:
    if type(t) in _PRIMITIVES:  # most nodes: one set lookup, not four isinstance tests
        return v.primitive(t, path)  # type: ignore[arg-type]
    if isinstance(t, StructType):
        return v.struct(t, path, _visit_fields(t.fields, path, v))
    if isinstance(t, ListType):
        return v.list(t, path, _visit_type(t.element, path + ELEMENT, v))
    if isinstance(t, MapType):
        return v.map(t, path, _visit_type(t.key, path + KEY, v), _visit_type(t.value, path + VALUE, v))
    if isinstance(t, EnumType):
        return v.enum(t, path)
    return v.primitive(t, path)


class SchemaTransform(SchemaVisitor[DataType, Field]):
    """Rebuild a tree bottom-up: each method remakes its node from its children's results, so a
    subclass overrides only the kinds it changes. Run it with `transform`."""

    # Unchanged nodes are kept (immutable); changed ones built directly (`replace` is slow).

    def field(self, f: Field, path: str, type_result: DataType) -> Field:
        if type_result is f.type:
            return f
        return Field(f.name, type_result, f.nullable, f.id, f.default_json, f.aliases, f.metadata)

    def struct(self, t: StructType, path: str, fields: Sequence[Field]) -> DataType:
        if len(fields) == len(t.fields) and all(a is b for a, b in zip(fields, t.fields, strict=True)):
            return t
        return StructType(tuple(fields))

    def list(self, t: ListType, path: str, element: DataType) -> DataType:
        return t if element is t.element else ListType(element, t.element_nullable)

    def map(self, t: MapType, path: str, key: DataType, value: DataType) -> DataType:
        return t if key is t.key and value is t.value else MapType(key, value, t.value_nullable)

    def enum(self, t: EnumType, path: str) -> DataType:
        return t

    def primitive(self, t: PrimitiveType, path: str) -> DataType:
        return t


@overload
def transform(node: Schema, transformer: SchemaTransform) -> Schema: ...
@overload
def transform(node: DataType, transformer: SchemaTransform, path: str = "") -> DataType: ...
def transform(node: Schema | DataType, transformer: SchemaTransform, path: str = "") -> Schema | DataType:
    """The schema or type as `transformer` rebuilds it; a schema's fields are rebuilt as a struct's."""
    rebuilt = visit(node, transformer, path)
    if not isinstance(node, Schema):
        return rebuilt
    if not isinstance(rebuilt, StructType):
        raise TypeError(f"a schema must rebuild into a struct, not {rebuilt!r}")
    return Schema(rebuilt.fields)


# ---------------------------------------------------------------------------------------------
# Walking two schemas side by side
#
# The sides are named as a reader sees them: the writer's tree (the data, an old version, the
# right side of a merge) and the reader's (the reader, the new version, the merged-so-far left
# side). The model does not decide which fields pair up: the subclass does (rules/identity).


class FieldPair(Protocol):
    """Two struct fields walked as one; one side is None when the other side has no match."""

    @property
    def writer(self) -> Field | None: ...

    @property
    def reader(self) -> Field | None: ...


P = TypeVar("P", bound=FieldPair)


class Paths(NamedTuple):
    """Where a pair of nodes sits on each side (they differ below a renamed field); an unmatched
    field's path on the side that lacks it uses its own name."""

    writer: str
    reader: str

    def field(self, writer_name: str, reader_name: str) -> Paths:
        return Paths(join(self.writer, writer_name), join(self.reader, reader_name))

    def child(self, suffix: str) -> Paths:
        return Paths(self.writer + suffix, self.reader + suffix)


TOP = Paths("", "")


class PartnerVisitor(ABC, Generic[P, T, F]):
    """A post-order walk of two trees together. Structs are paired by `pair_fields`, lists and maps
    slot by slot; two nodes of different kinds go to `mismatch` and are not descended."""

    @abstractmethod
    def pair_fields(self, writer: tuple[Field, ...], reader: tuple[Field, ...]) -> Sequence[P]:
        """Both sides' fields paired, in the order the results should come; none left out."""

    def schema(self, writer: Schema, reader: Schema, fields: Sequence[F]) -> T:
        """Two schemas are their top-level structs unless a subclass says otherwise."""
        return self.struct(StructType(writer.fields), StructType(reader.fields), TOP, fields)

    @abstractmethod
    def field(self, writer: Field, reader: Field, pair: P, paths: Paths, type_result: T) -> F: ...

    @abstractmethod
    def writer_only(self, writer: Field, pair: P, paths: Paths) -> F: ...

    @abstractmethod
    def reader_only(self, reader: Field, pair: P, paths: Paths) -> F: ...

    @abstractmethod
    def struct(self, writer: StructType, reader: StructType, paths: Paths, fields: Sequence[F]) -> T: ...

    @abstractmethod
    def list(self, writer: ListType, reader: ListType, paths: Paths, element: T) -> T: ...

    @abstractmethod
    def map(self, writer: MapType, reader: MapType, paths: Paths, key: T, value: T) -> T: ...

    @abstractmethod
    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> T:
        """Two primitives or enums, in any mix."""

    @abstractmethod
    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> T:
        """Two nodes of different kinds where one is a struct, list or map."""


@overload
def visit_with_partner(writer: Schema, reader: Schema, visitor: PartnerVisitor[P, T, F]) -> T: ...
@overload
def visit_with_partner(
    writer: DataType, reader: DataType, visitor: PartnerVisitor[P, T, F], paths: Paths = TOP
) -> T: ...
def visit_with_partner(
    writer: Schema | DataType, reader: Schema | DataType, visitor: PartnerVisitor[P, T, F],
    paths: Paths = TOP,
) -> T:
    """Run `visitor` over two schemas, or two types that sit at `paths`."""
    if isinstance(writer, Schema) and isinstance(reader, Schema):
        return visitor.schema(writer, reader, _visit_pairs(writer.fields, reader.fields, TOP, visitor))
    if isinstance(writer, Schema) or isinstance(reader, Schema):
        raise TypeError("a schema pairs only with a schema")
    return _visit_pair(writer, reader, paths, visitor)


def _visit_pairs(
    writer: tuple[Field, ...], reader: tuple[Field, ...], parent: Paths, v: PartnerVisitor[P, T, F]
) -> list[F]:
    return [_visit_field_pair(pair, parent, v) for pair in v.pair_fields(writer, reader)]


def _visit_field_pair(pair: P, parent: Paths, v: PartnerVisitor[P, T, F]) -> F:
    w, r = pair.writer, pair.reader
    if w is not None and r is not None:
        paths = parent.field(w.name, r.name)
        return v.field(w, r, pair, paths, _visit_pair(w.type, r.type, paths, v))
    if w is not None:
        return v.writer_only(w, pair, parent.field(w.name, w.name))
    if r is not None:
        return v.reader_only(r, pair, parent.field(r.name, r.name))
    raise ValueError("pair_fields returned a pair without a field")


def _visit_pair(w: DataType, r: DataType, paths: Paths, v: PartnerVisitor[P, T, F]) -> T:
    if type(w) in _LEAVES and type(r) in _LEAVES:  # most pairs: two set lookups, not eight tests
        return v.leaf(w, r, paths)  # type: ignore[arg-type]
    if isinstance(w, StructType) and isinstance(r, StructType):
        return v.struct(w, r, paths, _visit_pairs(w.fields, r.fields, paths, v))
    if isinstance(w, ListType) and isinstance(r, ListType):
        return v.list(w, r, paths, _visit_pair(w.element, r.element, paths.child(ELEMENT), v))
    if isinstance(w, MapType) and isinstance(r, MapType):
        key = _visit_pair(w.key, r.key, paths.child(KEY), v)
        return v.map(w, r, paths, key, _visit_pair(w.value, r.value, paths.child(VALUE), v))
    if isinstance(w, Container) or isinstance(r, Container):
        return v.mismatch(w, r, paths)
    return v.leaf(w, r, paths)


# ---------------------------------------------------------------------------------------------
# Nodes and leaves


def child_nodes(t: DataType) -> Iterator[tuple[str, DataType, bool]]:
    """The direct children of a type as (path suffix, type, nullable)."""
    if isinstance(t, StructType):
        for f in t.fields:
            yield "." + segment(f.name), f.type, f.nullable
    elif isinstance(t, ListType):
        yield ELEMENT, t.element, t.element_nullable
    elif isinstance(t, MapType):
        yield KEY, t.key, False
        yield VALUE, t.value, t.value_nullable


_Nodes = list[tuple[str, DataType, bool, Field | None]]  # (path, type, nullable, the field if one)


class _Preorder(SchemaVisitor[_Nodes, _Nodes]):
    """Every node below each place, each node before its children (list elements and map slots
    are nodes, not fields)."""

    def field(self, f: Field, path: str, type_result: _Nodes) -> _Nodes:
        return [(path, f.type, f.nullable, f), *type_result]

    def struct(self, t: StructType, path: str, fields: Sequence[_Nodes]) -> _Nodes:
        return [node for nodes in fields for node in nodes]

    def list(self, t: ListType, path: str, element: _Nodes) -> _Nodes:
        return [(path + ELEMENT, t.element, t.element_nullable, None), *element]

    def map(self, t: MapType, path: str, key: _Nodes, value: _Nodes) -> _Nodes:
        return [(path + KEY, t.key, False, None), *key,
                (path + VALUE, t.value, t.value_nullable, None), *value]

    def enum(self, t: EnumType, path: str) -> _Nodes:
        return []

    def primitive(self, t: PrimitiveType, path: str) -> _Nodes:
        return []


def _walked(schema: Schema) -> None:
    """Walk a schema once and keep its nodes and fields on it (see `Schema`)."""
    if schema._nodes is None:
        nodes: _Nodes = visit(schema, _Preorder())
        object.__setattr__(schema, "_nodes", tuple(map(_NODE, nodes)))  # C loops: a node is walked often
        object.__setattr__(schema, "_fields", tuple(map(_FIELD, filter(_FIELD_AT, nodes))))


def walk(schema: Schema) -> Iterator[tuple[str, DataType, bool]]:
    """Every node of a schema, depth first, as (path, type, nullable)."""
    _walked(schema)
    return iter(schema._nodes or ())


def fields_of(schema: Schema) -> tuple[tuple[str, Field], ...]:
    """Every field of a schema at any depth as (path, field), each before those below it."""
    _walked(schema)
    return schema._fields or ()


def is_nested(t: DataType) -> bool:
    return isinstance(t, Container)


def leaves(schema: Schema) -> dict[str, tuple[DataType, bool]]:
    """Leaf paths (non-nested nodes) mapped to (type, nullable)."""
    return {p: (t, n) for p, t, n in walk(schema) if type(t) in _LEAVES}
