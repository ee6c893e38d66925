"""Avro's reader/writer check, as Java's `SchemaCompatibility` decides it, over whole Avro graphs.

`compatibility(W, R)` returns what `checkReaderWriterCompatibility(R, W)` lists: each
incompatibility's type, its location (the JSON pointer Java builds: `/fields/1/type/items`, a
writer union's branch as its index, the attribute `name`, `size` or `symbols` last) and Java's
message, in Java's order. The walk follows SchemaCompatibility.java (avro 1.12) step by step,
memoisation included: a (reader, writer) pair of nodes is checked once, a pair met again while it
is being checked (a recursive type) counts as compatible, and a pair met again later reuses the
first result, locations and all, as Java does. docs/reference/compat-rules.md §1 lists the rules with their
sources.

Beyond Java: logical types are ignored by Java's check, but a reader applies its own logical type
to the writer's value. Where the two sides' valid logical types differ (a decimal's scale, millis
read as micros, an instant read as local time, days read as a plain int or an int read as days)
the stored numbers decode to other values: a quiet break (a uuid is the same text either way).
"""

from __future__ import annotations

from dataclasses import dataclass

from schemaguard.base import CR, Problem, ProblemCode, Rule
from schemaguard.formats.avro_schema import NAMED_KINDS, AvroField, AvroType
from schemaguard.paths import ELEMENT, VALUE

SC = "SchemaCompatibility.java (avro 1.12)"

# Java's SchemaIncompatibilityType, each with what it means and where it comes from, and
# AMBIGUOUS_FIELD, where Java's lookupWriterField throws AvroRuntimeException instead.
RULES: dict[ProblemCode, Rule] = {
    ProblemCode.TYPE_MISMATCH: Rule(
        "avro.type-mismatch", "the writer's type is not the reader's nor promotable to it (int -> long "
        "-> float -> double, string <-> bytes)", f"{CR} §1; {SC} typeMismatch"),
    ProblemCode.NAME_MISMATCH: Rule(
        "avro.name-mismatch", "a record, enum or fixed must keep its unqualified name, or the reader's "
        "aliases must hold the writer's full name", f"{CR} §1; {SC} checkSchemaNames"),
    ProblemCode.FIXED_SIZE_MISMATCH: Rule(
        "avro.fixed-size", "fixed sizes must be equal", f"{CR} §1; {SC} checkFixedSize"),
    ProblemCode.MISSING_ENUM_SYMBOLS: Rule(
        "avro.enum", "every writer symbol must be a reader symbol unless the reader enum has a default",
        f"{CR} §1; {SC} checkReaderEnumContainsAllWriterEnumSymbols"),
    ProblemCode.READER_FIELD_MISSING_DEFAULT_VALUE: Rule(
        "avro.missing-default", "a reader field absent from the data needs a default",
        f"{CR} §1; {SC} checkReaderWriterRecordFields"),
    ProblemCode.MISSING_UNION_BRANCH: Rule(
        "avro.union-branch", "every branch the writer may write must be readable by the reader (a "
        "reader union: by one of its branches)", f"{CR} §1; {SC} UNION"),
    ProblemCode.AMBIGUOUS_FIELD: Rule(
        "avro.ambiguous-field", "a reader field whose name and aliases name more than one writer field: "
        "Java's lookupWriterField throws, the check has no verdict",
        f"{CR} §1 (name and alias both match); {SC} lookupWriterField"),
}
LOGICAL = Rule(
    "avro.logical-relabel", "the sides' logical types differ (a decimal's scale, a unit, instant vs "
    "local time, one side without): Java's check ignores logical types, and the reader decodes the "
    "writer's numbers as other values", f"{CR} §1 (logical types ignored); Avro spec 'Logical Types'")

_PROMOTIONS = {("long", "int"), ("float", "int"), ("float", "long"), ("double", "int"),  # (reader, writer)
               ("double", "long"), ("double", "float"), ("bytes", "string"), ("string", "bytes")}


@dataclass(frozen=True, slots=True)
class Incompatibility:
    type: ProblemCode  # Java's SchemaIncompatibilityType name, or AMBIGUOUS_FIELD
    location: str  # Java's getLocation(): a JSON pointer into the reader's schema
    message: str  # Java's message
    path: str  # the same place as a model path (fields joined with `.`, `[]`, `{value}`)
    detail: str  # what is wrong, in Avro's type names


@dataclass(frozen=True, slots=True)
class QuietBreak:
    location: str
    path: str
    message: str


class _Ambiguous(Exception):
    def __init__(self, found: Incompatibility) -> None:
        self.found = found


Step = tuple[str, str]  # (Java location token, what it adds to the model path)
Found = list[Incompatibility]


def compatibility(writer: AvroType, reader: AvroType) -> list[Incompatibility]:
    """Java's incompatibilities for "R reads W", in Java's order (empty: compatible)."""
    return check(writer, reader)[0]


def check(writer: AvroType, reader: AvroType) -> tuple[list[Incompatibility], list[QuietBreak]]:
    """Java's incompatibilities, and the places where the reader's logical type changes the
    writer's values (met where Java's walk passes; none when Java throws)."""
    checker = _Checker()
    try:
        return checker.top(reader, writer), checker.quiet
    except _Ambiguous as e:
        return [e.found], []


class _Checker:
    """One check: the memo of node pairs (by identity), and the quiet breaks met on the way."""

    def __init__(self) -> None:
        self.memo: dict[tuple[int, int], Found | None] = {}  # None: in progress
        self.quiet: list[QuietBreak] = []

    def top(self, reader: AvroType, writer: AvroType) -> Found:
        return self.get("", reader, writer, [])

    def get(self, token: str, reader: AvroType, writer: AvroType, location: list[Step],
            piece: str = "") -> Found:
        location.append((token, piece))
        key = (id(reader), id(writer))
        if key in self.memo:
            result = self.memo[key] or []  # in progress: compatible unless proven otherwise
        else:
            self.memo[key] = None
            result = self.calculate(reader, writer, location)
            self.memo[key] = result
        location.pop()
        return result

    def calculate(self, r: AvroType, w: AvroType, location: list[Step]) -> Found:
        if r.kind == w.kind:
            if r.kind == "array":
                return self.get("items", r.child, w.child, location, ELEMENT)
            if r.kind == "map":
                return self.get("values", r.child, w.child, location, VALUE)
            if r.kind == "fixed":
                return self.names(r, w, location) + self.fixed_size(r, w, location)
            if r.kind == "enum":
                return self.names(r, w, location) + self.symbols(r, w, location)
            if r.kind == "record":
                return self.names(r, w, location) + self.fields(r, w, location)
            if r.kind == "union":
                found: Found = []
                for i, branch in enumerate(w.branches):
                    location.append((str(i), ""))
                    if self.top(r, branch):
                        found.append(_at(location, ProblemCode.MISSING_UNION_BRANCH,
                                         f"reader union lacking writer type: {branch.kind.upper()}",
                                         f"no branch of {describe(r)} reads {describe(branch)}"))
                    location.pop()
                return found
            self.logical(r, w, location)
            return []
        if w.kind == "union":  # a reader that reads every branch of the writer's union reads it
            return [x for i, branch in enumerate(w.branches) for x in self.get(str(i), r, branch, location)]
        if r.kind == "union":
            if any(not self.top(branch, w) for branch in r.branches):
                return []
            lacking = f"reader union lacking writer type: {w.kind.upper()}"
            return [_at(location, ProblemCode.MISSING_UNION_BRANCH, lacking,
                        f"no branch of {describe(r)} reads {describe(w)}")]
        if (r.kind, w.kind) in _PROMOTIONS:
            self.logical(r, w, location)
            return []
        return [_at(location, ProblemCode.TYPE_MISMATCH, f"reader type: {r.kind.upper()} not compatible "
                    f"with writer type: {w.kind.upper()}",
                    f"{describe(w)} in the data, {describe(r)} to the reader")]

    def fields(self, r: AvroType, w: AvroType, location: list[Step]) -> Found:
        found: Found = []
        location.append(("fields", ""))
        by_name = {f.name: f for f in w.fields}
        for rf in r.fields:
            location.append((str(rf.pos), rf.name))
            wf = _writer_field(by_name, rf, location)
            if wf is not None:
                found += self.get("type", rf.type, wf.type, location)
            elif rf.default_json is None:
                if rf.type.kind == "enum" and rf.type.enum_default is not None:
                    found += self.get("type", rf.type, w, location)  # as Java: the enum against the record
                else:
                    found.append(_at(location, ProblemCode.READER_FIELD_MISSING_DEFAULT_VALUE, rf.name,
                                     f"reader field `{rf.name}` is not in the data and has no default"))
            location.pop()
        location.pop()
        return found

    def names(self, r: AvroType, w: AvroType, location: list[Step]) -> Found:
        if r.short_name == w.short_name or w.name in r.aliases:
            return []
        return [_attribute(location, "name", ProblemCode.NAME_MISMATCH, f"expected: {w.name}",
                           f"{describe(w)} in the data, {describe(r)} to the reader, whose aliases "
                           f"{list(r.aliases)} do not name {w.name}")]

    def fixed_size(self, r: AvroType, w: AvroType, location: list[Step]) -> Found:
        if r.size == w.size:
            self.logical(r, w, location)
            return []
        return [_attribute(location, "size", ProblemCode.FIXED_SIZE_MISMATCH,
                           f"expected: {w.size}, found: {r.size}",
                           f"{describe(w)} in the data, {describe(r)} to the reader")]

    def symbols(self, r: AvroType, w: AvroType, location: list[Step]) -> Found:
        missing = sorted(set(w.symbols) - set(r.symbols))  # Java's TreeSet: sorted by code point
        if not missing or (r.enum_default is not None and r.enum_default in r.symbols):
            return []
        return [_attribute(location, "symbols", ProblemCode.MISSING_ENUM_SYMBOLS, f"[{', '.join(missing)}]",
                           f"the data may hold {missing}, which {describe(r)} lacks, and it has no default")]

    def logical(self, r: AvroType, w: AvroType, location: list[Step]) -> None:
        rl, wl = valid_logical(r), valid_logical(w)
        if rl == wl or {rl, wl} <= {None, "uuid"}:  # a uuid is the same text or bytes either way
            return
        self.quiet.append(QuietBreak(_pointer(location), _path(location),
                                     f"{describe(w)} read as {describe(r)}"))


def _writer_field(by_name: dict[str, AvroField], rf: AvroField, location: list[Step]) -> AvroField | None:
    """Java's lookupWriterField: the writer field named like the reader field, or like one of its
    aliases; more than one is an error (Java throws AvroRuntimeException)."""
    hits = ([by_name[rf.name]] if rf.name in by_name else []) + [
        by_name[a] for a in dict.fromkeys(rf.aliases) if a in by_name]
    if len(hits) > 1:
        names = ", ".join(f.name for f in hits)
        raise _Ambiguous(_at(location, ProblemCode.AMBIGUOUS_FIELD,
                             f"reader field {rf.name} matches writer fields {names}",
                             f"reader field `{rf.name}` and its aliases name writer fields {names}"))
    return hits[0] if hits else None


def _at(location: list[Step], type_: ProblemCode, message: str, detail: str) -> Incompatibility:
    return Incompatibility(type_, _pointer(location), message, _path(location), detail)


def _attribute(location: list[Step], attribute: str, type_: ProblemCode, message: str,
               detail: str) -> Incompatibility:
    location.append((attribute, ""))
    found = _at(location, type_, message, detail)
    location.pop()
    return found


def _pointer(location: list[Step]) -> str:
    """Java's getLocation(): the root token dropped, JSON-pointer escaped, `/`-joined."""
    return "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t, _ in location[1:])


def _path(location: list[Step]) -> str:
    path = ""
    for _, piece in location:
        if piece in (ELEMENT, VALUE):
            path += piece
        elif piece:
            path = f"{path}.{piece}" if path else piece
    return path


# ---------------------------------------------------------------------------------------------
# Logical types and names, as Avro users read them

_LOGICAL_BASES = {"date": ("int",), "time-millis": ("int",), "time-micros": ("long",),
                  "timestamp-millis": ("long",), "timestamp-micros": ("long",), "timestamp-nanos": ("long",),
                  "local-timestamp-millis": ("long",), "local-timestamp-micros": ("long",),
                  "local-timestamp-nanos": ("long",), "uuid": ("string", "fixed"), "duration": ("fixed",),
                  "decimal": ("bytes", "fixed"), "big-decimal": ("bytes",)}


def valid_logical(t: AvroType) -> str | None:
    """The logical type as a reader applies it (a decimal with its scale), or None when there is
    none or it is invalid (the spec: an invalid logical type is ignored, the underlying type used)."""
    if t.logical is None or t.kind not in _LOGICAL_BASES.get(t.logical, ()):
        return None
    if t.logical == "uuid" and t.kind == "fixed" and t.size != 16:
        return None
    if t.logical == "duration" and t.size != 12:
        return None
    if t.logical == "decimal":
        p, s = t.precision, t.scale
        if p is None or s is None or not 0 <= s <= p or p <= 0:
            return None
        if t.kind == "fixed" and p > len(str(2 ** (8 * t.size - 1) - 1)) - 1:
            return None
        return f"decimal(scale {s})"  # the precision bounds values, the scale gives them meaning
    return t.logical


def describe(t: AvroType) -> str:
    """A type as Avro users name it: `long (timestamp-millis)`, `record com.acme.Order`, `fixed(16)`."""
    base = t.kind
    if t.kind in NAMED_KINDS:
        base = f"{t.kind} {t.name}" + (f" ({t.size} bytes)" if t.kind == "fixed" else "")
    elif t.kind in ("array", "map"):
        base = f"{t.kind}<{describe(t.child)}>"
    elif t.kind == "union":
        base = "[" + ", ".join(describe(b) for b in t.branches) + "]"
    if t.logical == "decimal" and t.precision is not None:
        return f"{base} (decimal({t.precision},{t.scale}))"
    return f"{base} ({t.logical})" if t.logical else base


def problems(writer: AvroType, reader: AvroType) -> list[Problem]:
    """`check` as problems: Java's type as the code and its location kept; the quiet breaks last."""
    found, quiet = check(writer, reader)
    return [Problem(i.path, i.type, f"`{i.path or '(top)'}` at {i.location}: {i.detail}: "
                    f"{RULES[i.type].text}", RULES[i.type], location=i.location) for i in found] + [
        Problem(q.path, ProblemCode.VALUES_CHANGE_MEANING, f"`{q.path or '(top)'}` at {q.location}: "
                f"{q.message}: {LOGICAL.text}", LOGICAL, location=q.location, quiet=True) for q in quiet]
