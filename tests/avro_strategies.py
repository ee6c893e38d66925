"""Hypothesis strategies for Avro `.avsc` documents covering all of Avro, for the differential tests
against Java's `SchemaCompatibility` (tests/test_oracle_avro_java.py).

A schema is drawn as a small graph (`Prim`, `Arr`, `Mp`, `Un`, `Named` nodes, where a named type
used twice is one object, so references and recursion are plain object identity) and written out by
`render`, which defines every named type at its first use in document order and refers to it by
name after that (so a mutation that reorders fields never produces a use before the definition).

What the documents hold: every primitive (`null` included); records (with zero or more fields,
namespaces written in every way the spec allows: dotted full name, `namespace` attribute, inherited
from the enclosing type, `"namespace": ""` to leave it; aliases short and full; field aliases, also
naming sibling fields or the field itself, and field defaults), enums (symbols, maybe none; an enum
`default`), fixed types (size 0 up), arrays, maps, unions of any shape (the empty union, which Java
accepts, included; never a union in a union nor two branches of one unnamed type or one full name),
references to named types defined earlier (as `"Name"`, `"ns.Name"` or `{"type": "Name"}`),
recursive and mutually recursive records, the logical types (decimal on bytes and on fixed,
big-decimal, uuid on string and on fixed(16), date, time-millis/-micros, timestamp-millis/-micros/
-nanos, local-timestamp-*, duration on fixed(12), and now and then an invalid or unknown one, which
the spec says readers ignore) and any type at the top level.

Defaults are valid for their field's type as the spec says (a union's default is a value of its
first branch; an enum's a symbol; a fixed's exactly `size` bytes), which is stricter than Java 1.12
(it takes any branch of a union, any string for an enum or fixed): a field whose type has no
finite value (a record that must contain itself) gets none. Every document is meant to be one Java's
parser accepts; the tests parse each with Java, and a refusal is a bug here. What Java's parser
(1.12.1) does that shapes the writing:
- it checks a default when it reads the field, and throws "Schema fields not set yet" where that
  means checking an object against a record whose definition it is still reading (a field of
  `Node` typed `["Node", "null"]` with default `{...}`): `render` leaves such a default out;
- it finds a short name in the null namespace from inside another namespace (the spec has no way
  to write that reference) only once that type's definition is complete: `repair` moves a type
  that would need it into a namespace;
- it reads names used before their definition (forward references); the spec's order (defined
  first) is kept here, as `parse_avro` requires it.

`related_pairs` draws a schema and the schema after one to three real-looking changes (see
`MUTATIONS`); `chains` draws a version history of three to five schemas, each one to two changes
after the one before; `unrelated_pairs` two schemas drawn independently.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import event
from hypothesis import strategies as st

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAMED = ("record", "enum", "fixed")
NAMESPACES = (None, "n", "com.acme", "x.y")
TYPE_NAMES = ("A", "B", "C", "D", "Node", "Rec")
FIELD_NAMES = ("a", "b", "c", "d")
SYMBOLS = ("S", "T", "U", "V", "W")
FIXED_SIZES = (0, 1, 4, 8, 12, 16)
MAX_DEPTH = 3
FULL_NAMES = tuple(f"{n}.{s}" for s in TYPE_NAMES for n in NAMESPACES if n)

# Logical types by the type they annotate (valid ones), and a few the spec says to ignore.
LOGICAL_ON: dict[str, tuple[str, ...]] = {
    "int": ("date", "time-millis"),
    "long": ("time-micros", "timestamp-millis", "timestamp-micros", "timestamp-nanos",
             "local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos"),
    "string": ("uuid",),
    "bytes": ("decimal", "big-decimal"),
}
INVALID_LOGICAL = ("date", "uuid", "timestamp-millis", "made-up")  # on a type they do not annotate

PROMOTIONS = {"int": ("long", "float", "double"), "long": ("float", "double"), "float": ("double",),
              "string": ("bytes",), "bytes": ("string",)}
DEMOTIONS = {"long": ("int",), "float": ("int", "long"), "double": ("int", "long", "float")}

NO = object()  # no default


# ---------------------------------------------------------------------------------------------
# The schema graph


@dataclass(eq=False)
class Prim:
    kind: str
    logical: dict[str, Any] = field(default_factory=dict)  # logicalType, precision, scale
    obj: bool = False  # written as {"type": kind} even without attributes
    props: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Arr:
    items: Node


@dataclass(eq=False)
class Mp:
    values: Node


@dataclass(eq=False)
class Un:
    branches: list[Node]


@dataclass(eq=False)
class Fld:
    name: str
    type: Node
    default: Any = NO
    aliases: list[str] = field(default_factory=list)
    props: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Named:
    """A record, enum or fixed. `style`: how its name is written where it is defined (`full`: a
    dotted name; `attr`: the `namespace` attribute; `inherit`: the enclosing namespace where it is
    the same, else `attr`; `other`: a dotted name plus a `namespace` attribute that it overrides)."""

    kind: str
    short: str
    ns: str | None
    aliases: list[str] = field(default_factory=list)  # as written: short (the type's namespace) or full
    style: str = "inherit"
    doc: str | None = None
    fields: list[Fld] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    enum_default: str | None = None
    size: int = 0
    logical: dict[str, Any] = field(default_factory=dict)

    @property
    def full(self) -> str:
        return f"{self.ns}.{self.short}" if self.ns else self.short


Node = Prim | Arr | Mp | Un | Named


@dataclass(eq=False)
class Top:
    """A whole schema: the root type, and how references are written (`"Name"` or `{"type": "Name"}`)."""

    root: Node
    ref_objects: bool = False


def walk(top: Top) -> Iterator[Node]:
    """Every node reachable from the root, each named type once."""
    seen: set[int] = set()
    stack: list[Node] = [top.root]
    while stack:
        t = stack.pop()
        if isinstance(t, Named):
            if id(t) in seen:
                continue
            seen.add(id(t))
            stack.extend(f.type for f in reversed(t.fields))
        elif isinstance(t, Arr):
            stack.append(t.items)
        elif isinstance(t, Mp):
            stack.append(t.values)
        elif isinstance(t, Un):
            stack.extend(reversed(t.branches))
        yield t


def named_types(top: Top) -> list[Named]:
    return [t for t in walk(top) if isinstance(t, Named)]


def branch_key(t: Node) -> str:
    """What two branches of one union may not share (the spec, "Unions")."""
    if isinstance(t, Named):
        return t.full
    if isinstance(t, Prim):
        return t.kind
    return "array" if isinstance(t, Arr) else "map" if isinstance(t, Mp) else "union"


# ---------------------------------------------------------------------------------------------
# Writing the graph as .avsc


class Unwritable(Exception):
    """A reference no .avsc text can make: to a type in the null namespace from inside another
    namespace, while that type is still being defined (the spec has no way to write it at all; Java
    finds it only once its definition is complete)."""

    def __init__(self, t: Named) -> None:
        self.type = t


def render(top: Top) -> Any:
    """The graph as an .avsc document (JSON-able): each named type defined at its first use."""
    defined: set[int] = set()
    reading: set[int] = set()  # the named types whose definition is being written
    fulls = {t.full for t in named_types(top)}

    def ref(t: Named, ctx: str | None) -> Any:
        # A short name resolves in the enclosing namespace, else (Java, not the spec) in the null
        # one, but only to a type whose definition Java has finished reading.
        if t.ns is None and ctx is not None and (f"{ctx}.{t.short}" in fulls or id(t) in reading):
            raise Unwritable(t)
        name = t.short if t.ns == ctx or t.ns is None else t.full
        return {"type": name} if top.ref_objects else name

    def define(t: Named, ctx: str | None) -> dict[str, Any]:
        defined.add(id(t))
        reading.add(id(t))
        doc: dict[str, Any] = {"type": t.kind}
        style = t.style if t.style != "inherit" or t.ns == ctx else "attr"
        if style == "inherit":
            doc["name"] = t.short
        elif style == "attr":
            doc["name"] = t.short
            doc["namespace"] = t.ns or ""
        else:  # full, other
            doc["name"] = t.full
            if t.ns is None and ctx is not None:
                doc["namespace"] = ""
            elif style == "other" and t.ns is not None:
                doc["namespace"] = "ignored.space"  # a dotted name's own namespace wins
        if t.aliases:
            doc["aliases"] = list(t.aliases)
        if t.doc is not None:
            doc["doc"] = t.doc
        if t.kind == "record":
            doc["fields"] = [render_field(f, t.ns) for f in t.fields]
        elif t.kind == "enum":
            doc["symbols"] = list(t.symbols)
            if t.enum_default is not None:
                doc["default"] = t.enum_default
        else:
            doc["size"] = t.size
            doc.update(t.logical)
        reading.discard(id(t))
        return doc

    def render_field(f: Fld, ctx: str | None) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": f.name, "type": node(f.type, ctx)}
        if f.default is not NO and not _reaches(f.type, f.default, reading):
            doc["default"] = f.default
        if f.aliases:
            doc["aliases"] = list(f.aliases)
        doc.update(f.props)
        return doc

    def node(t: Node, ctx: str | None) -> Any:
        if isinstance(t, Named):
            return ref(t, ctx) if id(t) in defined else define(t, ctx)
        if isinstance(t, Prim):
            if t.logical or t.obj or t.props:
                return {"type": t.kind, **t.logical, **t.props}
            return t.kind
        if isinstance(t, Arr):
            return {"type": "array", "items": node(t.items, ctx)}
        if isinstance(t, Mp):
            return {"type": "map", "values": node(t.values, ctx)}
        return [node(b, ctx) for b in t.branches]

    return node(top.root, None)


# ---------------------------------------------------------------------------------------------
# Defaults (valid as the spec says: a union's is its first branch's)


def default_value(t: Node, inside: frozenset[int] = frozenset()) -> Any:
    """A value valid as a default for type t, or NO when t has no finite value."""
    if isinstance(t, Prim):
        return {"null": None, "boolean": True, "int": 1, "long": 2, "float": 1.5, "double": 2.5,
                "bytes": "\u00ff", "string": "s"}[t.kind]
    if isinstance(t, Arr):
        return []
    if isinstance(t, Mp):
        return {}
    if isinstance(t, Un):
        return default_value(t.branches[0], inside) if t.branches else NO
    if t.kind == "enum":
        return t.enum_default or (t.symbols[0] if t.symbols else NO)
    if t.kind == "fixed":
        return "\u0000" * t.size
    if id(t) in inside:
        return NO
    value = {}
    for f in t.fields:
        v = default_value(f.type, inside | {id(t)})
        if v is NO:
            return NO
        value[f.name] = v
    return value


def _reaches(t: Node, v: Any, records: set[int]) -> bool:
    """Does checking v against t look into one of `records` with an object (Java's parser checks
    a default when it reads the field, and throws "Schema fields not set yet" on a record whose
    definition it is still reading)?"""
    if isinstance(t, Arr):
        return isinstance(v, list) and any(_reaches(t.items, x, records) for x in v)
    if isinstance(t, Mp):
        return isinstance(v, dict) and any(_reaches(t.values, x, records) for x in v.values())
    if isinstance(t, Un):
        return bool(t.branches) and _reaches(t.branches[0], v, records)
    if isinstance(t, Named) and t.kind == "record" and isinstance(v, dict):
        return id(t) in records or any(_reaches(f.type, v[f.name], records) for f in t.fields if f.name in v)
    return False


def valid_default(t: Node, v: Any) -> bool:
    """Is v a valid default for type t (as the spec says, so Java accepts it too)?"""
    if isinstance(t, Prim):
        if t.kind == "null":
            return v is None
        if t.kind == "boolean":
            return isinstance(v, bool)
        if t.kind in ("int", "long"):
            bits = 31 if t.kind == "int" else 63
            return isinstance(v, int) and not isinstance(v, bool) and -(2 ** bits) <= v < 2 ** bits
        if t.kind in ("float", "double"):
            return isinstance(v, int | float) and not isinstance(v, bool)
        return isinstance(v, str)
    if isinstance(t, Arr):
        return isinstance(v, list) and all(valid_default(t.items, x) for x in v)
    if isinstance(t, Mp):
        return isinstance(v, dict) and all(valid_default(t.values, x) for x in v.values())
    if isinstance(t, Un):
        return bool(t.branches) and valid_default(t.branches[0], v)
    if t.kind == "enum":
        return isinstance(v, str) and v in t.symbols
    if t.kind == "fixed":
        return isinstance(v, str) and len(v) == t.size
    if not isinstance(v, dict) or set(v) - {f.name for f in t.fields}:
        return False
    return all(valid_default(f.type, v[f.name]) if f.name in v else f.default is not NO for f in t.fields)


def repair(top: Top) -> None:
    """Make the graph valid again after a change: no union in a union, no two branches alike, enum
    defaults among the symbols, every field default valid for its (maybe changed) type."""
    for t in list(walk(top)):
        if isinstance(t, Un):
            flat: list[Node] = []
            for b in t.branches:
                flat.extend(b.branches if isinstance(b, Un) else [b])
            keys: set[str] = set()
            kept: list[Node] = []
            for b in flat:  # each branch key once, the first kept
                if branch_key(b) not in keys:
                    keys.add(branch_key(b))
                    kept.append(b)
            t.branches = kept
        elif isinstance(t, Named) and t.kind == "enum" and t.enum_default not in (None, *t.symbols):
            t.enum_default = None
    for t in named_types(top):
        for f in t.fields:
            if f.default is not NO and not valid_default(f.type, f.default):
                f.default = default_value(f.type)
    while True:  # a type no reference can name gets a namespace
        try:
            render(top)
            return
        except Unwritable as e:
            scope = Scope(named_types(top))
            e.type.short, e.type.ns = next((s, n) for n in NAMESPACES[1:] for s in (e.type.short, *TYPE_NAMES)
                                           if scope.name_ok(s, n, e.type))


# ---------------------------------------------------------------------------------------------
# Drawing schemas


class Scope:
    """What one schema being drawn holds so far: its named types (for references and names)."""

    def __init__(self, named: list[Named] | None = None) -> None:
        self.named: list[Named] = list(named or [])

    def name_ok(self, short: str, ns: str | None, but: Named | None = None) -> bool:
        """Full names are unique; a type in the null namespace shares its short name with no other
        type (else a reference to it from that namespace could not be written)."""
        others = [t for t in self.named if t is not but]
        if any(t.full == (f"{ns}.{short}" if ns else short) for t in others):
            return False
        return not any(t.short == short and (t.ns is None or ns is None) for t in others)

    def new_name(self, draw: st.DrawFn, but: Named | None = None) -> tuple[str, str | None] | None:
        options = [(s, n) for s in TYPE_NAMES for n in NAMESPACES if self.name_ok(s, n, but)]
        return draw(st.sampled_from(options)) if options else None


def _roll(draw: st.DrawFn, n: int) -> int:
    """0 to n-1. Hypothesis draws the smallest integers far more often than 1/n (0 to 3 of 0..99
    two times in five), so they land on the high rolls here, the cases that add nothing rare: a
    rare case tests for 0 or 1 and comes about as often as 1/n says."""
    return n - 1 - draw(st.integers(0, n - 1))


def _pick(draw: st.DrawFn, options: list[Any] | tuple[Any, ...]) -> Any:
    """One of options, evenly; the one hypothesis favours is the last (as `_roll`), not the first."""
    return options[_roll(draw, len(options))]


def _logical_for(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    if _roll(draw, 20) == 0:
        return {"logicalType": draw(st.sampled_from(INVALID_LOGICAL))}
    choices = LOGICAL_ON.get(kind, ())
    if not choices or _roll(draw, 6) < (2 if kind == "long" else 3):  # a long has 7 to choose from
        return {}
    logical = draw(st.sampled_from(choices))
    if logical == "decimal":
        precision = draw(st.integers(1, 20))
        return {"logicalType": "decimal", "precision": precision, "scale": draw(st.integers(0, precision))}
    return {"logicalType": logical}


def _fixed_logical(draw: st.DrawFn, size: int) -> dict[str, Any]:
    roll = _roll(draw, 4)
    if roll in (1, 2) and size == 16:
        return {"logicalType": "uuid"}
    if roll in (1, 2) and size == 12:
        return {"logicalType": "duration"}
    if roll in (0, 1) and size > 0:
        max_precision = len(str(2 ** (8 * size - 1) - 1)) - 1  # the digits size bytes always hold
        precision = draw(st.integers(1, max_precision))
        return {"logicalType": "decimal", "precision": precision, "scale": draw(st.integers(0, precision))}
    if roll == 2 and _roll(draw, 4) == 0:
        return {"logicalType": draw(st.sampled_from(["uuid", "duration"]))}  # on the wrong size: ignored
    return {}


@st.composite
def primitives(draw: st.DrawFn) -> Prim:
    kind = draw(st.sampled_from(PRIMITIVES))
    logical = _logical_for(draw, kind) if kind != "null" else {}
    roll = _roll(draw, 10)
    return Prim(kind, logical, obj=roll == 0, props={"doc": "d"} if roll == 1 else {})


def _new_named(draw: st.DrawFn, scope: Scope, kind: str, depth: int) -> Named | None:
    name = scope.new_name(draw)
    if name is None:
        return None
    short, ns = name
    aliases: list[str] = []
    if _roll(draw, 4) == 0:
        pool = [s for s in TYPE_NAMES if s != short] + list(FULL_NAMES)
        aliases = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))
    style = draw(st.sampled_from(["inherit", "inherit", "attr", "full", "other"]))
    t = Named(kind, short, ns, aliases, style, "a doc" if _roll(draw, 10) == 0 else None)
    scope.named.append(t)
    if kind == "record":
        t.fields = draw(field_lists(scope, depth + 1))
    elif kind == "enum":
        size = draw(st.sampled_from([2, 3, 1, 4, 0]))  # (hypothesis favours the first)
        t.symbols = draw(st.lists(st.sampled_from(SYMBOLS), min_size=size, max_size=size, unique=True))
        if t.symbols and _roll(draw, 3) == 0:
            t.enum_default = draw(st.sampled_from(t.symbols))
    else:
        t.size = draw(st.sampled_from(FIXED_SIZES))
        t.logical = _fixed_logical(draw, t.size)
    return t


def _reference(draw: st.DrawFn, scope: Scope, in_union: bool) -> Node | None:
    if not scope.named:
        return None
    t = draw(st.sampled_from(scope.named))
    if t.kind == "record" and not t.fields and not in_union and draw(st.booleans()):
        return None
    if t.kind == "record" and draw(st.integers(0, 5)) and not in_union:  # recursion mostly through null
        around: list[Node] = [Un([Prim("null"), t]), Un([t, Prim("null")]), Arr(t), Mp(t), t]
        return draw(st.sampled_from(around))
    return t


@st.composite
def types(draw: st.DrawFn, scope: Scope, depth: int = 0, in_union: bool = False) -> Node:
    """Any Avro type (a union only where `in_union` is false); smaller the deeper it sits."""
    deep = depth >= MAX_DEPTH
    kinds = ["primitive"] * 6 + ["reference"] * 2 + ["enum", "enum", "fixed"] + (
        [] if deep else ["record", "record", "array", "map"] + (
            [] if in_union else ["union", "union", "union"]))
    kind = draw(st.sampled_from(kinds))
    if kind == "reference":
        t = _reference(draw, scope, in_union)
        if t is not None:
            return t
        kind = "primitive"
    if kind in NAMED:
        t = _new_named(draw, scope, kind, depth)
        if t is not None:
            return t
        kind = "primitive"
    if kind == "array":
        return Arr(draw(types(scope, depth + 1)))
    if kind == "map":
        return Mp(draw(types(scope, depth + 1)))
    if kind == "union":
        return draw(unions(scope, depth))
    return draw(primitives())


@st.composite
def unions(draw: st.DrawFn, scope: Scope, depth: int) -> Un:
    size = draw(st.sampled_from([2, 2, 2, 3, 3, 1, 4, 0]))  # (hypothesis favours the first)
    branches: list[Node] = []
    if size and _roll(draw, 3) == 0:
        branches.append(Prim("null"))  # the usual optional: null first
    while len(branches) < size:
        b = draw(types(scope, depth + 1, in_union=True))
        if branch_key(b) in {branch_key(x) for x in branches}:
            size -= 1
            continue
        branches.append(b)
    return Un(branches)


def _field_aliases(draw: st.DrawFn, name: str, siblings: list[str]) -> list[str]:
    """Aliases: mostly names no field of the record has (former names), now and then a sibling's
    (Avro's edge cases live there: Java throws when a writer has both) or the field's own."""
    roll = _roll(draw, 100)
    others = [n for n in siblings if n != name]
    free = [n for n in FIELD_NAMES if n != name and n not in siblings]
    if roll >= 12 or (roll in (1, 2) and not others) or (roll > 2 and not free):
        return []
    if roll == 0:
        return [name]
    if roll in (1, 2):
        return [_pick(draw, others)]
    return draw(st.lists(st.sampled_from(free), min_size=1, max_size=2, unique=True))


def _field_props(draw: st.DrawFn) -> dict[str, Any]:
    roll = _roll(draw, 20)
    return {"doc": "d"} if roll == 0 else {"order": "descending"} if roll == 1 else {}


@st.composite
def fields(draw: st.DrawFn, scope: Scope, name: str, depth: int, siblings: list[str]) -> Fld:
    t = draw(types(scope, depth))
    default = default_value(t) if draw(st.booleans()) else NO
    return Fld(name, t, default, _field_aliases(draw, name, siblings), _field_props(draw))


@st.composite
def field_lists(draw: st.DrawFn, scope: Scope, depth: int) -> list[Fld]:
    size = 0 if _roll(draw, 30) == 0 else draw(st.sampled_from([2, 3, 1, 4]))
    names = draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=size, max_size=size, unique=True))
    return [draw(fields(scope, n, depth, names)) for n in names]


@st.composite
def graphs(draw: st.DrawFn) -> Top:
    """A schema graph; its root a record more often than not, but any type now and then."""
    scope = Scope()
    kinds = ["record"] * 8 + ["primitive"] * 2 + ["enum", "fixed", "array", "map", "union"]
    kind = draw(st.sampled_from(kinds))
    if kind in NAMED:
        root: Node | None = _new_named(draw, scope, kind, 0)
        assert root is not None
    elif kind == "primitive":
        root = draw(primitives())
    elif kind == "union":
        root = draw(unions(scope, 0))
    else:
        root = draw(types(scope, 1))
        root = Arr(root) if kind == "array" else Mp(root)
    top = Top(root, ref_objects=_roll(draw, 10) == 0)
    repair(top)
    return top


def schemas() -> st.SearchStrategy[Any]:
    """An .avsc document (loaded JSON) of any Avro schema."""
    return graphs().map(render)


# ---------------------------------------------------------------------------------------------
# Changes, as schema evolution makes them

Slot = tuple[Any, Any]  # (object, attribute name or list index) holding a type


def slots(top: Top) -> list[tuple[Slot, str | None, bool]]:
    """Every place a type sits, with the namespace it is written in and whether it is a union branch."""
    out: list[tuple[Slot, str | None, bool]] = [((top, "root"), None, False)]
    seen: set[int] = set()

    def go(t: Node, ctx: str | None) -> None:
        if isinstance(t, Named):
            if id(t) in seen:
                return
            seen.add(id(t))
            for f in t.fields:
                out.append(((f, "type"), t.ns, False))
                go(f.type, t.ns)
        elif isinstance(t, Arr):
            out.append(((t, "items"), ctx, False))
            go(t.items, ctx)
        elif isinstance(t, Mp):
            out.append(((t, "values"), ctx, False))
            go(t.values, ctx)
        elif isinstance(t, Un):
            for i, b in enumerate(t.branches):
                out.append(((t.branches, i), ctx, True))
                go(b, ctx)

    go(top.root, None)
    return out


def _get(slot: Slot) -> Node:
    holder, key = slot
    node: Node = holder[key] if isinstance(holder, list) else getattr(holder, key)
    return node


def _set(slot: Slot, t: Node) -> None:
    holder, key = slot
    if isinstance(holder, list):
        holder[key] = t
    else:
        setattr(holder, key, t)


def _change_type(draw: st.DrawFn, top: Top, scope: Scope, slot: Slot, in_union: bool) -> str:
    """One change to the type in a slot; returns what it did."""
    t = _get(slot)
    ops = ["replace", "reference", "wrap-collection"]  # (the last is the one hypothesis favours)
    if isinstance(t, Arr | Mp):
        ops += ["unwrap-collection", "swap-collection"]
    if isinstance(t, Un):
        ops += ["unwrap-union", "drop-branch", "reorder-branches", "add-branch", "add-branch"]
    elif not in_union:
        ops += ["wrap-union"] * 3
    if isinstance(t, Named) and t.kind == "fixed":
        ops += ["logical"]
    if isinstance(t, Prim):
        ops += ["primitive", "logical"] + ["demote"] * (t.kind in DEMOTIONS) + \
               ["promote"] * 3 * (t.kind in PROMOTIONS)
    op: str = _pick(draw, ops)
    if op == "promote" and isinstance(t, Prim):
        _set(slot, Prim(draw(st.sampled_from(PROMOTIONS[t.kind])), {}, t.obj))
    elif op == "demote" and isinstance(t, Prim):
        _set(slot, Prim(draw(st.sampled_from(DEMOTIONS[t.kind])), {}, t.obj))
    elif op == "primitive":
        _set(slot, draw(primitives()))
    elif op == "logical" and isinstance(t, Prim):
        t.logical = _logical_for(draw, t.kind) if t.kind != "null" else {}
    elif op == "logical" and isinstance(t, Named):
        t.logical = _fixed_logical(draw, t.size)
    elif op == "wrap-union":
        other = draw(types(scope, MAX_DEPTH - 1, in_union=True)) if _roll(draw, 4) == 0 \
            else Prim("null")
        _set(slot, Un([other, t] if draw(st.booleans()) else [t, other]))
    elif op == "unwrap-union" and isinstance(t, Un):
        _set(slot, draw(st.sampled_from(t.branches)) if t.branches else draw(primitives()))
    elif op == "add-branch" and isinstance(t, Un):
        t.branches.insert(draw(st.integers(0, len(t.branches))), draw(types(scope, MAX_DEPTH - 1, True)))
    elif op == "drop-branch" and isinstance(t, Un) and t.branches:
        t.branches.pop(draw(st.integers(0, len(t.branches) - 1)))
    elif op == "reorder-branches" and isinstance(t, Un) and len(t.branches) > 1:
        t.branches = draw(st.permutations(t.branches))
    elif op == "wrap-collection":
        _set(slot, Arr(t) if draw(st.booleans()) else Mp(t))
    elif op == "unwrap-collection" and isinstance(t, Arr | Mp):
        _set(slot, t.items if isinstance(t, Arr) else t.values)
    elif op == "swap-collection" and isinstance(t, Arr | Mp):
        _set(slot, Mp(t.items) if isinstance(t, Arr) else Arr(t.values))
    elif op == "reference" and scope.named:
        _set(slot, draw(st.sampled_from(scope.named)))
    else:
        op = "replace"
        _set(slot, draw(types(scope, MAX_DEPTH - 1, in_union)))
    return op


def _change_fields(draw: st.DrawFn, scope: Scope, r: Named) -> str:
    fs = r.fields
    free = [n for n in FIELD_NAMES if n not in {f.name for f in fs}]
    ops = ["nullable", "reorder", "alias", "unalias", "default", "undefault", "rename", "rename-with-alias",
           "add-optional", "drop", "add"]
    op: str = _pick(draw, ops)
    if op in ("add", "add-optional") and free:
        name = draw(st.sampled_from(free))
        if op == "add-optional":
            t: Node = Un([Prim("null"), draw(types(scope, MAX_DEPTH - 1, in_union=True))])
            fs.insert(draw(st.integers(0, len(fs))), Fld(name, t, None))
        else:
            t = draw(types(scope, MAX_DEPTH - 1))
            default = default_value(t) if draw(st.booleans()) else NO
            aliases = _field_aliases(draw, name, [f.name for f in fs])
            fs.insert(draw(st.integers(0, len(fs))), Fld(name, t, default, aliases))
        return op
    if not fs:
        return "none"
    f = draw(st.sampled_from(fs))
    if op == "drop":
        fs.remove(f)
    elif op.startswith("rename") and free:
        old, f.name = f.name, draw(st.sampled_from(free))
        f.aliases = [a for a in f.aliases if a != f.name]
        if op == "rename-with-alias":
            f.aliases.append(old)
    elif op == "reorder" and len(fs) > 1:
        fs.remove(f)
        fs.insert(draw(st.integers(0, len(fs))), f)
    elif op == "alias":
        f.aliases = [draw(st.sampled_from([n for n in FIELD_NAMES if n != f.name]))]
    elif op == "unalias":
        f.aliases = []
    elif op == "default":
        f.default = default_value(f.type)
    elif op == "undefault":
        f.default = NO
    elif op == "nullable" and not isinstance(f.type, Un):
        f.type = Un([Prim("null"), f.type])
        f.default = None if draw(st.booleans()) else NO
    else:
        return "none"
    return op


def _change_named(draw: st.DrawFn, scope: Scope, t: Named) -> str:
    ops = ["restyle", "alias", "unalias", "namespace", "namespace-with-alias", "rename-with-alias", "rename"]
    if t.kind == "enum":
        ops += ["reorder-symbols", "enum-default", "no-enum-default", "add-symbol", "drop-symbol"] * 2
    if t.kind == "fixed":
        ops += ["size"] * 3
    op: str = _pick(draw, ops)
    if op.startswith(("rename", "namespace")):
        old_full = t.full
        if op.startswith("rename"):
            options = [s for s in TYPE_NAMES if s != t.short and scope.name_ok(s, t.ns, t)]
            if not options:
                return "none"
            t.short = draw(st.sampled_from(options))
        else:
            options_ns = [n for n in NAMESPACES if n != t.ns and scope.name_ok(t.short, n, t)]
            if not options_ns:
                return "none"
            t.ns = draw(st.sampled_from(options_ns))
        if op.endswith("with-alias"):  # the old name as an alias: full, or short where that resolves to it
            short_ok = old_full.rpartition(".")[0] == (t.ns or "")
            t.aliases.append(old_full.rpartition(".")[2] if short_ok and draw(st.booleans()) else old_full)
    elif op == "alias":
        t.aliases.append(draw(st.sampled_from([*TYPE_NAMES, *FULL_NAMES])))
    elif op == "unalias":
        t.aliases = []
    elif op == "restyle":
        t.style = draw(st.sampled_from(["inherit", "attr", "full", "other"]))
    elif op == "add-symbol" and len(t.symbols) < len(SYMBOLS):
        t.symbols.insert(draw(st.integers(0, len(t.symbols))),
                         draw(st.sampled_from([s for s in SYMBOLS if s not in t.symbols])))
    elif op == "drop-symbol" and t.symbols:
        t.symbols.remove(draw(st.sampled_from(t.symbols)))
    elif op == "reorder-symbols":
        t.symbols = draw(st.permutations(t.symbols))
    elif op == "enum-default" and t.symbols:
        t.enum_default = draw(st.sampled_from(t.symbols))
    elif op == "no-enum-default":
        t.enum_default = None
    elif op == "size":
        t.size = draw(st.sampled_from([s for s in FIXED_SIZES if s != t.size]))
    else:
        return "none"
    t.aliases = list(dict.fromkeys(t.aliases))  # written once each
    return op


def mutate(draw: st.DrawFn, top: Top) -> tuple[Top, str]:
    """A copy of the graph after one change (named types change everywhere they are used)."""
    top = copy.deepcopy(top)
    scope = Scope(named_types(top))
    by_kind = {k: [t for t in scope.named if t.kind == k] for k in NAMED}
    what = _pick(draw, ["refs"] + ["named"] * 2 * bool(scope.named) + ["enum"] * 3 * bool(by_kind["enum"])
                 + ["fixed"] * bool(by_kind["fixed"]) + ["type"] * 3
                 + ["fields"] * 4 * bool(by_kind["record"]))
    if what == "fields":
        op = "field:" + _change_fields(draw, scope, draw(st.sampled_from(by_kind["record"])))
    elif what in NAMED or what == "named":
        t = draw(st.sampled_from(by_kind.get(what) or scope.named))
        op = f"{t.kind}:" + _change_named(draw, scope, t)
    elif what == "refs":
        top.ref_objects = not top.ref_objects
        op = "ref-style"
    else:
        slot, _, in_union = draw(st.sampled_from(slots(top)))
        op = "type:" + _change_type(draw, top, scope, slot, in_union)
    repair(top)
    return top, op


def _note(op: str) -> None:
    with contextlib.suppress(Exception):  # no build context: drawn outside a test (`.example()`)
        event(f"change {op}")


@st.composite
def related_graphs(draw: st.DrawFn) -> tuple[Top, Top]:
    old = draw(graphs())
    new = old
    for _ in range(draw(st.integers(1, 3))):
        new, op = mutate(draw, new)
        _note(op)
    return old, new


def related_pairs() -> st.SearchStrategy[tuple[Any, Any]]:
    """(old, new) .avsc documents: new is old after one to three changes."""
    return related_graphs().map(lambda p: (render(p[0]), render(p[1])))


def unrelated_pairs() -> st.SearchStrategy[tuple[Any, Any]]:
    """Two .avsc documents drawn independently (they share names often: the pools are small)."""
    return st.tuples(schemas(), schemas())


@st.composite
def chains(draw: st.DrawFn, min_size: int = 3, max_size: int = 5) -> list[Any]:
    """A version history as .avsc documents, oldest first: each one or two changes after the last."""
    versions = [draw(graphs())]
    for _ in range(draw(st.integers(min_size, max_size)) - 1):
        v = versions[-1]
        for _ in range(draw(st.integers(1, 2))):
            v, op = mutate(draw, v)
            _note(op)
        versions.append(v)
    return [render(v) for v in versions]


# ---------------------------------------------------------------------------------------------
# What a document holds (for coverage statistics)


def features(doc: Any) -> set[str]:
    """The Avro features an .avsc document uses, as short labels (`record`, `union-3`,
    `logical:decimal-on-fixed`, `recursive`, `field-alias`, ...)."""
    found: set[str] = set()
    defined: dict[str, str] = {}

    def full(name: str, ns: str | None) -> str:
        return name if "." in name or not ns else f"{ns}.{name}"

    def go(t: Any, ns: str | None, open_records: tuple[str, ...], top: bool) -> None:
        if isinstance(t, list):
            if top:
                found.add("top:union")
            found.add(f"union-{min(len(t), 3)}")
            if t and t[0] == "null":
                found.add("union-null-first")
            for b in t:
                go(b, ns, open_records, False)
            return
        if isinstance(t, str):
            if t in PRIMITIVES:
                found.update([t, f"top:{t}"] if top else [t])
                return
            t, label = {"type": t}, "reference"
        else:
            label = "reference-object"
        kind = t["type"]
        if top:
            found.add(f"top:{kind if kind in (*PRIMITIVES, *NAMED, 'array', 'map') else 'reference'}")
        if kind not in (*PRIMITIVES, *NAMED, "array", "map"):
            found.add(label)
            if (full(kind, ns) if full(kind, ns) in defined else kind) in open_records:
                found.add("recursive")
            return
        found.add(kind)
        if "logicalType" in t:
            base = kind if kind != "fixed" else f"fixed({t.get('size')})"
            found.add(f"logical:{t['logicalType']}-on-{base}")
        if kind in NAMED:
            name = full(t["name"], t.get("namespace", ns))
            found.add("namespace" if "." in name else "no-namespace")
            if "namespace" in t:
                found.add("namespace-attr" if t["namespace"] else "namespace-empty")
            if t.get("aliases"):
                found.add(f"{kind}-alias-" + ("full" if any("." in a for a in t["aliases"]) else "short"))
            defined[name] = kind
            inner_ns = name.rpartition(".")[0] or None
            if kind == "record":
                found.add("record-empty" if not t["fields"] else "record")
                for f in t["fields"]:
                    if "default" in f:
                        found.add("field-default")
                    if f.get("aliases"):
                        found.add("field-alias-self" if f["name"] in f["aliases"] else "field-alias")
                    go(f["type"], inner_ns, (*open_records, name), False)
            elif kind == "enum":
                found.add("enum-empty" if not t["symbols"] else "enum")
                if "default" in t:
                    found.add("enum-default")
            return
        if kind == "array":
            go(t["items"], ns, open_records, False)
        elif kind == "map":
            go(t["values"], ns, open_records, False)
        else:
            found.add(kind)

    go(doc, None, (), True)
    return found


# Every label `features` must see over a few hundred drawn schemas: all of Avro.
ALL_FEATURES = frozenset({
    *PRIMITIVES, "record", "record-empty", "enum", "enum-empty", "enum-default", "fixed", "array", "map",
    "union-0", "union-1", "union-2", "union-3", "union-null-first", "reference", "reference-object",
    "recursive", "namespace", "no-namespace", "namespace-attr", "namespace-empty", "record-alias-short",
    "record-alias-full", "field-alias", "field-alias-self", "field-default",
    *(f"top:{k}" for k in (*PRIMITIVES, *NAMED, "array", "map", "union")),
    *(f"logical:{lt}-on-{base}" for base, lts in LOGICAL_ON.items() for lt in lts),
    "logical:decimal-on-fixed(8)", "logical:uuid-on-fixed(16)", "logical:duration-on-fixed(12)",
})


def dumps(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"))


MUTATIONS = (
    "type: promote/demote (int->long->float->double, string<->bytes), another primitive, a logical type "
    "added/changed/removed, wrap in a union (with null or another type) / unwrap, add/drop/reorder "
    "union branches, wrap in/unwrap an array or map, array<->map, a new type, a reference to a named "
    "type (maybe recursive); fields: add (required, with a default, optional [null, T] = null), drop, "
    "rename with/without the old name as alias, reorder, aliases added/removed, default added/removed, "
    "made nullable; named types: rename or change namespace with/without the old name as alias (short "
    "or full), aliases, how the name is written; enums: symbols added/dropped/reordered, the enum "
    "default set/cleared; fixed: size; references written as objects or names")
