"""Name every change between two schemas as operations (docs/design.md, "Operation").

`diff` pairs fields with the one pairing function (rules/identity.py) and walks both trees
together through structs, list elements and map keys and values. An operation says *what*
changed, independent of any reader; whether a reader survives it is the job of the reader
profiles and modes. Sections (§) below are those of docs/reference/compat-rules.md.

Type relations are facts about value domains, so that every profile can look them up:
WIDEN_TYPE when every value of the old type is a value of the new one, NARROW_TYPE when that
holds the other way round, LOGICAL_TYPE_CHANGE for the families below, else CHANGE_TYPE.

- Integers widen to more bits; unsigned to signed needs more bits; signed to unsigned never.
- An integer widens to a float only when its magnitude bits fit the mantissa (11, 24, 53 bits):
  int32->float and int64->double lose precision above 2^24 and 2^53 (§1, the Java note; "What
  none of them checks", precision loss), so they are CHANGE_TYPE; int16->float is exact.
- An integer widens to decimal(p,s) when p-s holds all its digits (int32: 10, int64: 19,
  uint64: 20). Delta and Spark ask 20 digits of a long (§4, §5): that is their reader rule.
- decimal(p,s)->decimal(p',s') widens when neither the scale nor the integer digits shrink
  (Spark read §5, Delta widening §4); with the same scale the detail is "decimal precision"
  (Iceberg allows only that one, §3), otherwise "decimal scale".
- date widens only to a local (NTZ) timestamp: Spark reads date->timestamp_ntz but not
  date->timestamp LTZ (§5), Delta widens to timestamp_ntz (§4), Iceberg's spec forbids
  date->timestamptz (§3): an instant made from a date depends on the session time zone.
- fixed(n)->binary and enum->string widen (Spark reads an ENUM column as a string, §5).

LOGICAL_TYPE_CHANGE: the stored values stay, their meaning changes; `detail` is one of
- "unit": a timestamp or time unit; ms<->us is invisible to Spark merge (§5) and Avro ignores
  logical types (§1), yet every value is rescaled. Not a widening: the range shrinks.
- "utc": isAdjustedToUTC flips; TimestampType and TimestampNTZType do not merge (§5), Iceberg
  rejects timestamp<->timestamptz (§3). When the unit changes too, "utc" is named: it changes
  what every value means, the unit only its precision.
- "int96": INT96 <-> an INT64 timestamp, whatever else changes (INT96 carries no unit or zone).
- "scale": a decimal scale change that neither widens nor narrows ((12,2)->(12,4)); Avro lets it
  pass (§1), Spark merge and Iceberg reject it (§5, §3).
- "string_binary": string, binary and json are one Parquet BYTE_ARRAY under another annotation
  (Spark reads STRING and JSON as StringType, §5; Avro promotes string<->bytes, §1); uuid <->
  string or fixed(16) likewise (Iceberg rejects uuid<->string and fixed<->binary, §3).

Other choices:
- An added field is optional when nullable or defaulted (§1 the default fills it, §3 optional
  fields read as null); ADD_* and DROP_FIELD carry the field's default in `detail`.
- A rename found only by type and position is a suggestion: the DROP_FIELD and ADD_* stay, since
  a reader by name really sees a drop and an add (§1 "Rename, no alias": values replaced).
- Under `position`, paired fields with other names are RENAME "by position"; REORDER is reported
  when the names both sides share come in another relative order, because positional binding
  then reads one column's data as another's.
- FIELD_ID_REUSED: id readers assume an id is never reused (§3, §4 `maxColumnId`), and nobody
  checks that it is not ("What none of them checks", name or id reuse).
- A change of `unit` or `semantic` metadata is MEANING_CHANGED: no reader sees it, every value
  means something else ("What none of them checks", units and semantics).
- A change of field id or aliases is METADATA_CHANGED ("field id", "aliases"): Spark writes field
  ids from field metadata (docs/reference/parquet-and-spark.md, `spark.sql.parquet.fieldId.*`) and Avro's name
  matching reads aliases (§1); naming them means every difference a `name` fingerprint sees is
  an operation.
- Enum symbol order is ENUM_REORDERED (Avro encodes an enum by its index); an enum without
  symbols is taken as listed, with none.
- Paths are model paths; a renamed node is at its new path with `old_path` set, a dropped field
  at its old path; the top-level struct's path (for REORDER) is "".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from schemaguard.formats.notation import describe
from schemaguard.model import (
    BinaryType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    Field,
    FixedType,
    FloatType,
    Int96Type,
    IntType,
    Leaf,
    ListType,
    MapType,
    PartnerVisitor,
    Paths,
    Schema,
    StringType,
    StructType,
    TimestampType,
    TimeType,
    is_nested,
    visit_with_partner,
)
from schemaguard.names import Identity
from schemaguard.paths import ELEMENT, KEY, VALUE, join, segment
from schemaguard.rules.identity import How, Pair, match_fields


class OpKind(StrEnum):
    """The kinds of operation; the values are stable (they appear in JSON and the catalog)."""

    ADD_OPTIONAL_FIELD = "add_optional_field"
    ADD_REQUIRED_FIELD = "add_required_field"
    DROP_FIELD = "drop_field"
    RENAME = "rename"
    REORDER = "reorder"
    WIDEN_TYPE = "widen_type"
    NARROW_TYPE = "narrow_type"
    CHANGE_TYPE = "change_type"
    LOGICAL_TYPE_CHANGE = "logical_type_change"
    NULLABILITY_RELAXED = "nullability_relaxed"
    NULLABILITY_TIGHTENED = "nullability_tightened"
    ENUM_VALUE_ADDED = "enum_value_added"
    ENUM_VALUE_REMOVED = "enum_value_removed"
    ENUM_DEFAULT_CHANGED = "enum_default_changed"
    ENUM_REORDERED = "enum_reordered"
    DEFAULT_CHANGED = "default_changed"
    METADATA_CHANGED = "metadata_changed"
    MEANING_CHANGED = "meaning_changed"
    FIELD_ID_REUSED = "field_id_reused"


@dataclass(frozen=True, slots=True)
class Operation:
    """One named change. `before`/`after` are short spellings (None when absent); `detail` says
    which aspect changed or how a pairing was found; `old_path` is set for renames."""

    kind: OpKind
    path: str
    before: str | None
    after: str | None
    detail: str
    old_path: str | None = None


def diff(old: Schema, new: Schema, identity: Identity = "name") -> list[Operation]:
    """Every change from `old` to `new`, as a reader binding fields by `identity` sees it.

    Order: per field in the new schema's order (its own changes, then those below it), then the
    dropped fields, then the struct's own changes (REORDER); the same at every depth.
    """
    return visit_with_partner(old, new, _Diff(identity)).below


# ---------------------------------------------------------------------------------------------
# The walk: the old schema is the writer side, the new one the reader side


@dataclass(frozen=True, slots=True)
class _Ops:
    """A node's own change (its type) and the changes below it, kept apart because a field lists
    its own type change before its nullability, default and metadata, and its children's after."""

    at: list[Operation]
    below: list[Operation]


@dataclass(frozen=True, slots=True)
class _Siblings:
    """The struct a pair of fields sits in: what renames and id reuse are judged against."""

    old: tuple[Field, ...]
    new: tuple[Field, ...]
    dropped: frozenset[str]  # names of the old fields no new field pairs with
    old_named: dict[str, Field]  # the first old field of each name


class _Pair(NamedTuple):  # a tuple: a diff pairs every field of both sides
    writer: Field | None
    reader: Field | None
    how: How | None
    siblings: _Siblings
    place: int  # the reader field's place among its siblings (pairs come in reader order)


class _Diff(PartnerVisitor[_Pair, _Ops, list[Operation]]):
    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        # Each struct's pairs, by its two field tuples: made once for its fields, used again for
        # its REORDER (both tuples live through the walk, so their ids stay theirs).
        self.matched: dict[tuple[int, int], list[Pair]] = {}

    def _pairs(self, old: tuple[Field, ...], new: tuple[Field, ...]) -> list[Pair]:
        return match_fields(old, new, self.identity, aliases=self.identity in ("name", "name-ci"))

    def pair_fields(self, writer: tuple[Field, ...], reader: tuple[Field, ...]) -> list[_Pair]:
        pairs = self.matched[(id(writer), id(reader))] = self._pairs(writer, reader)
        dropped = frozenset(p.writer.name for p in pairs if p.writer is not None and p.reader is None)
        siblings = _Siblings(writer, reader, dropped, {f.name: f for f in reversed(writer)})
        return [_Pair(p.writer, p.reader, p.how, siblings, i) for i, p in enumerate(pairs)]

    def field(self, writer: Field, reader: Field, pair: _Pair, paths: Paths,
              type_result: _Ops) -> list[Operation]:
        path = paths.reader
        return [
            *_rename(paths.writer, path, writer, reader, pair.how),
            *(_id_reuse(path, writer, reader, pair.siblings.old_named) if pair.how == "id" else []),
            *type_result.at,
            *_nullability(path, writer.nullable, reader.nullable, "field"),
            *_default_change(path, writer, reader),
            *_metadata_changes(path, writer, reader),
            *type_result.below,
        ]

    def writer_only(self, writer: Field, pair: _Pair, paths: Paths) -> list[Operation]:
        return [_dropped(paths.writer, writer)]

    def reader_only(self, reader: Field, pair: _Pair, paths: Paths) -> list[Operation]:
        s = pair.siblings
        return [_added(paths.reader, reader),
                *_suggested_rename(paths, reader, pair.place, s.old, s.dropped)]

    def struct(self, writer: StructType, reader: StructType, paths: Paths,
               fields: Sequence[list[Operation]]) -> _Ops:
        pairs = self.matched.pop((id(writer.fields), id(reader.fields)))  # pair_fields made them
        ops = [op for field_ops in fields for op in field_ops]
        return _Ops([], ops + _reorder(paths.reader, writer.fields, reader.fields, pairs, self.identity))

    def list(self, writer: ListType, reader: ListType, paths: Paths, element: _Ops) -> _Ops:
        nullable = (writer.element_nullable, reader.element_nullable)
        return _Ops([], _slot(paths.reader, ELEMENT, *nullable, element))

    def map(self, writer: MapType, reader: MapType, paths: Paths, key: _Ops, value: _Ops) -> _Ops:
        return _Ops([], _slot(paths.reader, KEY, False, False, key)
                    + _slot(paths.reader, VALUE, writer.value_nullable, reader.value_nullable, value))

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> _Ops:
        return _Ops(_type_ops(paths.reader, writer, reader), [])

    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> _Ops:
        return _Ops(_type_ops(paths.reader, writer, reader), [])


def _slot(parent: str, suffix: str, was: bool, now: bool, ops: _Ops) -> list[Operation]:
    """A list element or map key or value: its type change, its nullability, then below it."""
    return [*ops.at, *_nullability(parent + suffix, was, now, _SLOT_NAMES[suffix]), *ops.below]


_RENAMED_BY: dict[How | None, str] = {
    "id": "by id", "alias": "by alias", "name-ci": "case only", "position": "by position",
}


def _rename(old_path: str, path: str, w: Field, r: Field, how: How | None) -> list[Operation]:
    if w.name == r.name:
        return []
    return [Operation(OpKind.RENAME, path, w.name, r.name, _RENAMED_BY[how], old_path)]


def _suggested_rename(
    paths: Paths, added: Field, index: int, old: tuple[Field, ...], dropped: frozenset[str],
) -> list[Operation]:
    """A dropped field at the added field's position with the same type may be its old name."""
    if index >= len(old):
        return []
    w = old[index]
    if w.name not in dropped or w.name == added.name or w.type != added.type:
        return []
    old_parent = paths.writer[:len(paths.writer) - len(segment(added.name))].removesuffix(".")
    return [Operation(OpKind.RENAME, paths.reader, w.name, added.name,
                      "suggested: same type and position", join(old_parent, w.name))]


def _added(path: str, f: Field) -> Operation:
    kind = OpKind.ADD_OPTIONAL_FIELD if f.nullable or f.has_default else OpKind.ADD_REQUIRED_FIELD
    return Operation(kind, path, None, describe(f.type), _default_note(f))


def _dropped(path: str, f: Field) -> Operation:
    return Operation(OpKind.DROP_FIELD, path, describe(f.type), None, _default_note(f))


def _default_note(f: Field) -> str:
    return f"with default {f.default_json}" if f.default_json is not None else "no default"


def _id_reuse(path: str, w: Field, r: Field, old_named: dict[str, Field]) -> list[Operation]:
    """Signs that one id was given to another column: id readers would bind its old data."""
    reasons = []
    if w.name != r.name and _unrelated(w.type, r.type):
        reasons.append(f"id {r.id} was {w.name!r}, an unrelated name and type")
    namesake = old_named.get(r.name) if r.name != w.name else None
    if namesake is not None and namesake.id != r.id:
        reasons.append(f"{r.name!r} was another field (id {namesake.id}), id {r.id} was {w.name!r}")
    if not reasons:
        return []
    return [Operation(OpKind.FIELD_ID_REUSED, path, _spelling(w), _spelling(r), "; ".join(reasons))]


def _spelling(f: Field) -> str:
    return f"{f.name}: {describe(f.type)}"


def _nullability(path: str, was: bool, now: bool, what: str) -> list[Operation]:
    if was == now:
        return []
    kind = OpKind.NULLABILITY_RELAXED if now else OpKind.NULLABILITY_TIGHTENED
    return [Operation(kind, path, _null_word(was), _null_word(now), what)]


def _null_word(nullable: bool) -> str:
    return "nullable" if nullable else "required"


def _default_change(path: str, w: Field, r: Field) -> list[Operation]:
    if w.default_json == r.default_json:
        return []
    detail = f"{_or_no_default(w.default_json)} -> {_or_no_default(r.default_json)}"
    return [Operation(OpKind.DEFAULT_CHANGED, path, w.default_json, r.default_json, detail)]


def _or_no_default(default: str | None) -> str:
    return "no default" if default is None else default


MEANING_KEYS = frozenset(("unit", "semantic"))  # docs/design.md "meaning changed (unit or semantic metadata)"


def _metadata_changes(path: str, w: Field, r: Field) -> list[Operation]:
    """Metadata keys in key order, then aliases (as a set, order never counts), then field id; a
    change of `unit` or `semantic` is MEANING_CHANGED: the same values now mean something else."""
    if w.metadata == r.metadata and w.aliases == r.aliases and w.id == r.id:
        return []  # the common case, told without building either side's aspects
    old, new = w.meta, r.meta
    aspects = [(k, old.get(k), new.get(k)) for k in sorted(old.keys() | new.keys())]
    aspects.append(("aliases", _listing(sorted(w.aliases)), _listing(sorted(r.aliases))))
    aspects.append(("field id", _text(w.id), _text(r.id)))
    return [Operation(OpKind.MEANING_CHANGED if key in MEANING_KEYS else OpKind.METADATA_CHANGED,
                      path, before, after, key)
            for key, before, after in aspects if before != after]


def _listing(items: Sequence[str]) -> str | None:
    return ",".join(items) if items else None


def _text(value: int | None) -> str | None:
    return None if value is None else str(value)


def _reorder(
    path: str, old: tuple[Field, ...], new: tuple[Field, ...], pairs: list[Pair],
    identity: Identity,
) -> list[Operation]:
    """One REORDER when the fields both sides share come in another relative order.

    Under `position` every pair is by index, so "shared" means shared names: the same names in
    another order are exactly the columns a positional reader now binds to other data.
    """
    if identity == "position":
        before, after = _common_order([f.name for f in old], [f.name for f in new])
        if before == after:
            return []
        return [Operation(OpKind.REORDER, path, ",".join(before), ",".join(after),
                          "same names at other positions")]
    matched = [(p.writer, p.reader) for p in pairs if p.writer is not None and p.reader is not None]
    place = {id(f): i for i, f in enumerate(old)}  # each old field's own place (a lookup, not a search)
    by_old = sorted(matched, key=lambda wr: place[id(wr[0])])
    if by_old == matched:
        return []
    return [Operation(OpKind.REORDER, path, ",".join(w.name for w, _ in by_old),
                      ",".join(r.name for _, r in matched), "shared fields in another order")]


def _common_order(old: Sequence[str], new: Sequence[str]) -> tuple[list[str], list[str]]:
    """The items both sides hold, in the old order and in the new order."""
    olds, news = set(old), set(new)
    return [x for x in old if x in news], [x for x in new if x in olds]


# ---------------------------------------------------------------------------------------------
# Types


_SLOT_NAMES = {ELEMENT: "list element", KEY: "map key", VALUE: "map value"}


def _same_container(old: DataType, new: DataType) -> bool:
    return type(old) is type(new) and is_nested(old)


def _type_ops(path: str, old: DataType, new: DataType) -> list[Operation]:
    """The change at one node; two structs, lists or maps differ only below (see _children)."""
    if old == new or _same_container(old, new):
        return []
    if isinstance(old, EnumType) and isinstance(new, EnumType):
        return _enum_ops(path, old, new)
    kind, detail = _relation(old, new)
    return [Operation(kind, path, describe(old), describe(new), detail)]


def _unrelated(old: DataType, new: DataType) -> bool:
    return any(op.kind is OpKind.CHANGE_TYPE for op in _type_ops("", old, new))


def _relation(old: DataType, new: DataType) -> tuple[OpKind, str]:
    """How two different types relate, with the detail that says why."""
    if (why := _widening(old, new)) is not None:
        return OpKind.WIDEN_TYPE, why
    if (why := _widening(new, old)) is not None:
        return OpKind.NARROW_TYPE, why
    if (why := _logical_change(old, new)) is not None:
        return OpKind.LOGICAL_TYPE_CHANGE, why
    return OpKind.CHANGE_TYPE, "unrelated types"


def _widening(old: DataType, new: DataType) -> str | None:
    """Why every value of `old` is a value of the different type `new`, or None if not."""
    if isinstance(old, IntType):
        return _int_widening(old, new)
    if isinstance(old, FloatType) and isinstance(new, FloatType):
        return "float" if new.bits > old.bits else None
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return _decimal_widening(old, new)
    if isinstance(old, DateType) and isinstance(new, TimestampType) and not new.utc:
        return "date to local timestamp"
    if isinstance(old, FixedType) and isinstance(new, BinaryType):
        return "fixed to binary"
    if isinstance(old, EnumType) and isinstance(new, StringType):
        return "enum to string"
    return None


_MANTISSA_BITS = {16: 11, 32: 24, 64: 53}


def _int_widening(old: IntType, new: DataType) -> str | None:
    if isinstance(new, IntType):
        fits = new.bits > old.bits and (new.signed or not old.signed)
        return "integer" if fits else None
    if isinstance(new, FloatType):
        magnitude_bits = old.bits - 1 if old.signed else old.bits
        return "integer to float" if magnitude_bits <= _MANTISSA_BITS[new.bits] else None
    if isinstance(new, DecimalType):
        largest = 2 ** (old.bits - 1) if old.signed else 2**old.bits - 1
        return "integer to decimal" if new.precision - new.scale >= len(str(largest)) else None
    return None


def _decimal_widening(old: DecimalType, new: DecimalType) -> str | None:
    if new.scale < old.scale or new.precision - new.scale < old.precision - old.scale:
        return None
    return "decimal precision" if new.scale == old.scale else "decimal scale"


_STRING_BINARY = frozenset(frozenset(pair) for pair in (
    ("string", "binary"), ("json", "string"), ("json", "binary"),
    ("uuid", "string"), ("uuid", "fixed(16)"),
))


def _logical_change(old: DataType, new: DataType) -> str | None:
    """The logical aspect that differs between two types neither widening nor narrowing."""
    timestamps = (TimestampType, Int96Type)
    if isinstance(old, timestamps) and isinstance(new, timestamps):
        if isinstance(old, Int96Type) or isinstance(new, Int96Type):
            return "int96"
        return "utc" if old.utc != new.utc else "unit"
    if isinstance(old, TimeType) and isinstance(new, TimeType):
        return "unit"
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return "scale"  # a same-scale pair always widens or narrows
    if frozenset((describe(old), describe(new))) in _STRING_BINARY:
        return "string_binary"
    return None


def _enum_ops(path: str, old: EnumType, new: EnumType) -> list[Operation]:
    ops = [Operation(OpKind.ENUM_VALUE_ADDED, path, None, s, s)
           for s in new.symbols if s not in old.symbols]
    ops += [Operation(OpKind.ENUM_VALUE_REMOVED, path, s, None, s)
            for s in old.symbols if s not in new.symbols]
    before, after = _common_order(old.symbols, new.symbols)
    if before != after:
        ops.append(Operation(OpKind.ENUM_REORDERED, path, ",".join(before), ",".join(after),
                             "symbols reordered"))
    if old.default != new.default:
        detail = f"{_or_no_default(old.default)} -> {_or_no_default(new.default)}"
        ops.append(Operation(OpKind.ENUM_DEFAULT_CHANGED, path, old.default, new.default, detail))
    return ops
