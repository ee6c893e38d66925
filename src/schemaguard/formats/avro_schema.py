"""Avro `.avsc` documents parsed as Avro sees them: a graph of `AvroType` nodes, every Avro type.

Unlike the model (formats/avro.py converts one into the other), the graph keeps what only Avro
has: unions of any shape, the `null` type, the full names, namespaces and aliases of records, enums
and fixed types, recursive references (a named type used again is the same node, as in Java's
parser) and any type at the top level. `rules/avro.py` checks two graphs as Java's
`SchemaCompatibility` does.

Names follow the spec ("Names"): a dotted name is a full name; otherwise it is qualified by the
type's `namespace`, else by the enclosing named type's namespace. An alias without a dot takes
the type's own namespace. A reference resolves in the enclosing namespace first, then in the
null namespace, as Java's parser does. What the spec forbids and Java's parser refuses is an
`AvroSchemaError` naming the place: an unknown name, a name defined twice, a union in a union, two
branches of one type (or one full name), duplicate fields or symbols, an enum default that is not
a symbol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemaguard.model import canonical_json
from schemaguard.paths import ELEMENT, VALUE

PRIMITIVE_KINDS = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAMED_KINDS = ("record", "enum", "fixed")


class AvroSchemaError(ValueError):
    """An Avro schema the model cannot express, or a model Avro cannot; the message names the
    place, `path` holds it alone (a model path, "" for the top)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


@dataclass(eq=False)
class AvroField:
    name: str
    type: AvroType
    pos: int
    default_json: str | None = None  # canonical JSON of `default`; None when there is none
    aliases: tuple[str, ...] = ()
    props: dict[str, Any] = field(default_factory=dict)  # every other attribute (doc, order, field-id, ...)


@dataclass(eq=False)  # nodes compare by identity: a named type used twice is one node
class AvroType:
    """One Avro schema node. `kind` is Avro's type name; the other attributes hold what that kind has."""

    kind: str
    name: str | None = None  # the full name of a record, enum or fixed
    aliases: tuple[str, ...] = ()  # full names
    fields: list[AvroField] = field(default_factory=list)  # a record's; filled after it is named
    symbols: tuple[str, ...] = ()
    enum_default: str | None = None
    size: int = 0
    items: AvroType | None = None  # an array's items, a map's values
    branches: tuple[AvroType, ...] = ()  # a union's
    logical: str | None = None  # the logical type as written (valid or not: Java's check ignores it)
    precision: int | None = None
    scale: int | None = None
    props: dict[str, Any] = field(default_factory=dict)  # the rest of the type's attributes

    @property
    def child(self) -> AvroType:
        """An array's items or a map's values."""
        if self.items is None:
            raise ValueError(f"a {self.kind} has no items or values")
        return self.items

    @property
    def short_name(self) -> str | None:
        """The unqualified name, which Java's name check compares."""
        return None if self.name is None else self.name.rpartition(".")[2]

    @property
    def namespace(self) -> str | None:
        return None if self.name is None else self.name.rpartition(".")[0] or None

    def branch_key(self) -> str:
        """What two branches of one union may not share (spec "Unions")."""
        return self.name if self.kind in NAMED_KINDS and self.name else self.kind


def parse_avro(doc: Any) -> AvroType:
    """A parsed `.avsc` document (as loaded JSON) as an Avro graph; raises `AvroSchemaError`."""
    return _Parser().type(doc, "", None)


def _at(path: str) -> str:
    return path or "schema"


_TYPE_KEYS = ("type", "name", "namespace", "aliases", "fields", "symbols", "default", "size", "items",
              "values", "logicalType", "precision", "scale")
_FIELD_KEYS = ("name", "type", "default", "aliases")


class _Parser:
    """One parse: the named types defined so far, by full name."""

    def __init__(self) -> None:
        self.named: dict[str, AvroType] = {}

    def type(self, doc: Any, path: str, space: str | None) -> AvroType:
        if isinstance(doc, list):
            return self._union(doc, path, space)
        if isinstance(doc, str):
            return AvroType(doc) if doc in PRIMITIVE_KINDS else self._reference(doc, path, space)
        if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
            raise AvroSchemaError(f"{_at(path)}: not an Avro type: {canonical_json(doc)}", path)
        kind = doc["type"]
        props = {k: v for k, v in doc.items() if k not in _TYPE_KEYS}
        if kind in PRIMITIVE_KINDS:
            return _logical(AvroType(kind, props=props), doc)
        if kind in ("array", "map"):
            key = "items" if kind == "array" else "values"
            if key not in doc:
                raise AvroSchemaError(f"{_at(path)}: an {kind} needs `{key}`", path)
            child = self.type(doc[key], path + (ELEMENT if kind == "array" else VALUE), space)
            return AvroType(kind, items=child, props=props)
        if kind in NAMED_KINDS:
            return self._named(doc, path, space, props)
        return self._reference(kind, path, space)

    def _union(self, doc: list[Any], path: str, space: str | None) -> AvroType:
        branches = tuple(self.type(b, path, space) for b in doc)
        seen: set[str] = set()
        for b in branches:
            if b.kind == "union":
                raise AvroSchemaError(f"{_at(path)}: a union may not hold a union", path)
            if b.branch_key() in seen:
                raise AvroSchemaError(f"{_at(path)}: the union holds {b.branch_key()} twice", path)
            seen.add(b.branch_key())
        return AvroType("union", branches=branches)

    def _reference(self, name: str, path: str, space: str | None) -> AvroType:
        for full in ([name] if "." in name or not space else [f"{space}.{name}", name]):
            if full in self.named:
                return self.named[full]
        raise AvroSchemaError(f"{_at(path)}: unknown Avro type {name!r}", path)

    def _named(self, doc: dict[str, Any], path: str, space: str | None, props: dict[str, Any]) -> AvroType:
        kind, name = doc["type"], doc.get("name")
        if not isinstance(name, str) or not name:
            raise AvroSchemaError(f"{_at(path)}: a {kind} needs a name", path)
        namespace = doc.get("namespace", space)
        if namespace is not None and not isinstance(namespace, str):
            raise AvroSchemaError(f"{_at(path)}: a namespace must be a string", path)
        full = name if "." in name or not namespace else f"{namespace}.{name}"
        if full in self.named or full in PRIMITIVE_KINDS:
            raise AvroSchemaError(f"{_at(path)}: Avro name {full!r} is defined twice", path)
        own_space = full.rpartition(".")[0] or None
        aliases = _strings(doc.get("aliases", []), path, "aliases")
        node = AvroType(kind, name=full, props=props, aliases=tuple(
            a if "." in a or not own_space else f"{own_space}.{a}" for a in aliases))
        self.named[full] = node  # before the fields: a record may refer to itself
        if kind == "record":
            node.fields = self._fields(doc.get("fields"), path, own_space)
        elif kind == "enum":
            node.symbols, node.enum_default = _enum(doc, path)
        else:
            size = doc.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise AvroSchemaError(f"{_at(path)}: a fixed needs a non-negative integer size", path)
            node.size = size
            _logical(node, doc)
        return node

    def _fields(self, docs: Any, path: str, space: str | None) -> list[AvroField]:
        if not isinstance(docs, list):
            raise AvroSchemaError(f"{_at(path)}: a record needs a list of fields", path)
        fields: list[AvroField] = []
        names: set[str] = set()
        for pos, d in enumerate(docs):
            if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not d["name"]:
                raise AvroSchemaError(f"{_at(path)}: a field needs a non-empty string name", path)
            here = f"{path}.{d['name']}" if path else d["name"]
            if d["name"] in names:
                raise AvroSchemaError(f"{_at(path)}: duplicate field name {d['name']!r}", path)
            if "type" not in d:
                raise AvroSchemaError(f"{here}: a field needs a type", here)
            names.add(d["name"])
            fields.append(AvroField(
                d["name"], self.type(d["type"], here, space), pos,
                canonical_json(d["default"]) if "default" in d else None,
                tuple(_strings(d.get("aliases", []), here, "aliases")),
                {k: v for k, v in d.items() if k not in _FIELD_KEYS}))
        return fields


def _strings(value: Any, path: str, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise AvroSchemaError(f"{_at(path)}: {what} must be a list of strings", path)
    return value


def _enum(doc: dict[str, Any], path: str) -> tuple[tuple[str, ...], str | None]:
    symbols = doc.get("symbols")
    if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
        raise AvroSchemaError(f"{_at(path)}: an enum needs a list of symbol strings", path)
    if len(set(symbols)) != len(symbols):
        raise AvroSchemaError(f"{_at(path)}: enum symbols must be unique", path)
    default = doc.get("default")
    if default is not None and default not in symbols:
        raise AvroSchemaError(f"{_at(path)}: enum default {default!r} is not one of its symbols", path)
    return tuple(symbols), default


def _logical(node: AvroType, doc: dict[str, Any]) -> AvroType:
    logical, precision, scale = doc.get("logicalType"), doc.get("precision"), doc.get("scale", 0)
    if isinstance(logical, str):
        node.logical = logical
        if logical == "decimal" and isinstance(precision, int) and isinstance(scale, int):
            node.precision, node.scale = precision, scale
    return node
