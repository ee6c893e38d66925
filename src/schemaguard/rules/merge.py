"""What Spark's and Delta's schema merges produce from two or more schemas, in order, and every
column they conflict on.

Spark (`StructType.merge`, the Parquet `mergeSchema` read; docs/reference/compat-rules.md §5,
docs/reference/parquet-and-spark.md §2.3): fields matched by name (lower-cased unless
case-sensitive), the left side's fields first in their order, the right side's new fields appended;
nullable = OR (also list elements and map values); decimals of the same scale merge to the larger
precision; every other difference is a conflict. Types are compared as Spark sees the Parquet
columns (`formats/spark_view.spark_type`), so ms and us timestamps, uint32 and int64, JSON and
string all merge.

Delta (`SchemaMergingUtils.mergeSchemas(table, data)`, schema evolution on write;
docs/reference/compat-rules.md §4): case-insensitive, the table's spelling and nullability win, new
data columns are appended to their struct, byte/short/int mix, and a type change needs the
type-widening feature and a row of its table (promotions.DELTA_WIDENING), checked against real Delta
4.4.0.

Delta's MERGE INTO with schema evolution (`mergeSchemas(target, source, allowImplicitConversions =
true)`; docs/reference/compat-rules.md §4 MERGE INTO) merges alike, except that a type the
type-widening table does not widen keeps the table's type whenever Spark casts the source's type to it
implicitly (promotions.implicit_cast), and new columns come in nullable; checked against real Delta
4.4.0 (tests/test_oracle_delta_merge_into.py).

Spark and Delta stop at the first conflict. `merge` finds them all in one pass: a conflict takes
its field out of the merge so far and out of every later input, and the merge goes on, so each
conflicting field is named once, with the input whose merge failed on it: what restarting the
merge without that column would find, in time linear in the inputs' nodes (O(inputs x columns),
never x conflicts). The gate and the audit both ask this one function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple, TypeGuard

from schemaguard.base import CR, PS, Conflict, Options, Rule
from schemaguard.formats.notation import describe
from schemaguard.formats.spark_view import SPARK_ILLEGAL, SparkUnreadable, as_nullable, spark_schema
from schemaguard.model import (
    INTERVAL_FIELDS,
    DataType,
    DecimalType,
    Field,
    IntervalType,
    IntType,
    Leaf,
    ListType,
    MapType,
    PartnerVisitor,
    Paths,
    Schema,
    SchemaTransform,
    StructType,
    TimestampType,
    VoidType,
    new_field,
    transform,
    visit_with_partner,
    walk,
)
from schemaguard.paths import ELEMENT, KEY, VALUE, ancestors, join, parts, segment
from schemaguard.rules.promotions import DELTA_MERGE_INTO_NO_CAST, DELTA_WIDENING, implicit_cast

# Merges two schemas (left, right, options) into one without the fields they clash on, and the clashes.
Merger = Callable[[Schema, Schema, Options], tuple[Schema, list["_Clash"]]]


@dataclass(frozen=True, slots=True)
class MergeResult:
    merged: Schema | None  # None when any column conflicts
    conflicts: tuple[Conflict, ...]

    @property
    def ok(self) -> bool:
        return not self.conflicts


SPARK_MERGE = Rule("spark-merge.equal", "StructType.merge needs equal types apart from nullability "
                   "and same-scale decimal precision", f"{CR} §5 StructType.merge; {PS} §2.3")
SPARK_INTERVALS = Rule("spark-merge.interval", "ANSI intervals of one kind merge into the span of both "
                       "(interval year and interval month: year to month); a year-month and a day-time "
                       "interval do not", f"{CR} §5 StructType.merge; tests/test_intervals.py")
SPARK_DECIMAL_SCALE = Rule("spark-merge.decimal-scale", "decimals of different scale do not merge "
                           "(SPARK-37191)", f"{CR} §5; {PS} §2.3")
DELTA_MERGE = Rule("delta-merge.type", "with type widening, data merges only when it is wider than "
                   "the table column by a row of the type-widening table; narrower data fails too "
                   "(DELTA_FAILED_TO_MERGE_FIELDS)", f"{CR} §4 mergeSchemas, type widening "
                   "(observed on Delta 4.4.0: int->double and int->decimal widen on merge as well, "
                   "not only by ALTER)")
DELTA_NO_WIDENING = Rule("delta-merge.no-widening", "without type widening, a type differing from "
                         "the table's (even a narrower one) is DELTA_MERGE_INCOMPATIBLE_DATATYPE",
                         f"{CR} §4 mergeSchemas")
DELTA_NTZ = Rule("delta-merge.timestamp-ntz", "a timestamp_ntz column needs the timestampNtz table "
                 "feature, which a merge does not enable on a table that has none "
                 "(DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT)", f"{CR} §4 (observed on Delta 4.4.0: an added "
                 "timestamp_ntz column, top-level or nested, nullable or not, fails the append)")
DELTA_VOID = Rule("delta-merge.void", "a void (NullType) column merges with any type: the data's type "
                  "replaces the table's void, and void data keeps the table's type",
                  f"{CR} §4 mergeSchemas (NullType against any type); delta-spark 4.4 "
                  "SchemaMergingUtils.mergeSchemas; tests/test_void.py")
KIND = Rule("merge.kind", "a struct, list, map or primitive does not merge with another kind",
            f"{CR} §4, §5")


class _Clash(NamedTuple):
    """A conflict found while merging one pair of schemas; `merge` records it and goes on (a
    tuple: a table whose every column changed has one per column)."""

    path: str
    left: DataType | None
    right: DataType
    why: str
    rule: Rule

    def conflict(self, at: int) -> Conflict:
        right = describe(self.right)
        if self.left is None:  # a column the left side lacks
            return Conflict(self.path, "absent", right, f"`{self.path}`: {right} cannot be added: {self.why}",
                            self.rule, at)
        left = describe(self.left)
        return Conflict(self.path, left, right,
                        f"`{self.path}`: {left} and {right} do not merge: {self.why}", self.rule, at)


def merge(schemas: list[Schema], merger: Merger, options: Options | None = None) -> MergeResult:
    """Merge left to right (the first schema is the left side; Delta: the table), naming every
    conflicting field. One pass: O(total nodes of the inputs), whatever the number of conflicts."""
    opts = options or Options()
    conflicts: list[Conflict] = []
    gone: set[str] = set()  # fields taken out of the merge (lower-cased paths)
    merged: Schema | None = None
    for i, schema in enumerate(schemas):
        view, unreadable = _readable(_without(schema, gone) if gone else schema, i, converting=True)
        if unreadable:
            conflicts += unreadable
            gone.update(field_of(c.path) for c in unreadable)
            merged = drop(merged, *(c.path for c in unreadable)) if merged is not None else None
        if view is None:
            break  # a field that cannot be taken out: stop at what was found
        if merged is None:
            merged = view
            continue
        merged, clashes = merger(merged, view, opts)
        conflicts += [c.conflict(i) for c in clashes]
        gone.update(field_of(c.path) for c in clashes)
    if merged is None:
        return MergeResult(None, tuple(conflicts))
    if gone:  # a field kept whole beside one spelt alike (`a` beside `A`) is out with its twin
        merged = _without(merged, gone)
    final, unreadable = _readable(merged, len(schemas) - 1, converting=False)
    conflicts += unreadable
    return MergeResult(None if conflicts else final, tuple(conflicts))


def _readable(schema: Schema, at: int, converting: bool) -> tuple[Schema | None, list[Conflict]]:
    """The schema as Spark sees it, without each field of a type Spark refuses (`converting`: as
    its converter makes it, refusing less), and those refusals. None when a refused field cannot
    be taken out. Each refusal costs one conversion: they are few, unlike clashes."""
    found: list[Conflict] = []
    while True:
        try:
            return spark_schema(schema, converting=converting), found
        except SparkUnreadable as e:
            found.append(_Clash(e.path, e.type, e.type, e.why, SPARK_ILLEGAL).conflict(at))
            without = drop(schema, e.path)
            if without == schema:
                return None, found
            schema = without


# ---------------------------------------------------------------------------------------------
# Taking a conflicting column out


class _Drop(SchemaTransform):
    """Leave out the fields at some paths, names compared case-insensitively as the merges compare them."""

    def __init__(self, paths: set[str]) -> None:
        self.paths = paths

    def struct(self, t: StructType, path: str, fields: Sequence[Field]) -> DataType:
        return StructType(tuple(f for f in fields if join(path, f.name).lower() not in self.paths))


def field_of(path: str) -> str:
    """The field a conflict's path points into, lower-cased (`a.b[]` -> `a.b`): what is taken out."""
    while path.endswith((ELEMENT, KEY, VALUE)):
        path = path[:path.rindex("{" if path.endswith("}") else "[")]
    return path.lower()


def _top_level(path: str) -> bool:
    if "`" not in path:  # nothing quoted: any separator goes down a level
        return bool(path) and not ("." in path or "[" in path or "{" in path)
    try:
        return len(parts(path)) == 1
    except ValueError:  # through a list element or map slot
        return False


def drop(schema: Schema, *paths: str) -> Schema:
    """`schema` without the fields the paths point into."""
    return _without(schema, {field_of(p) for p in paths})


def _without(schema: Schema, gone: set[str]) -> Schema:
    """`schema` without the fields at the paths `gone` (as `field_of` gives them), in one walk;
    top-level fields alone (the common case: whole columns in conflict) are filtered without
    walking the rest."""
    names = [segment(f.name).lower() for f in schema.fields]
    if all(_top_level(p) for p in gone.difference(names)):  # a top-level field's path is its name
        kept = (f for f, name in zip(schema.fields, names, strict=True) if name not in gone)
        return replace(schema, fields=tuple(kept))
    return transform(schema, _Drop(gone))


# ---------------------------------------------------------------------------------------------
# The merges: the left side (the table, or what is merged so far) is the reader, the right side
# (the data) the writer, so that "R reads W" is "the merge of R with W succeeds".


class _Pair(NamedTuple):  # a tuple: a merge pairs every field of both sides
    writer: Field | None  # right
    reader: Field | None  # left


class _Merge(PartnerVisitor[_Pair, DataType, Field]):
    """What both merges share: left fields first in their order, right-only fields appended, a
    right-only or left-only field kept as it is, containers merged slot by slot."""

    def __init__(self, o: Options) -> None:
        self.o = o
        self.clashes: list[_Clash] = []
        self.gone: set[str] = set()  # fields that clashed, lower-cased: left out of their struct

    def clash(self, c: _Clash, kept: DataType) -> DataType:
        """Record a clash (the first in its field) and go on; the field is left out of its struct,
        so `kept` stands in only until then."""
        here = field_of(c.path)
        if here not in self.gone and not any(a in self.gone for a in ancestors(here)):
            self.gone.add(here)  # a clash inside a field already out is gone with it
            self.clashes.append(c)
        return kept

    def key(self, name: str) -> str:
        return name.lower()

    def pair_fields(self, writer: tuple[Field, ...], reader: tuple[Field, ...]) -> list[_Pair]:
        right = {self.key(f.name): f for f in writer}  # a later spelling of one key wins, as in Spark's map
        left_keys = {self.key(f.name) for f in reader}
        return ([_Pair(right.pop(self.key(f.name), None), f) for f in reader]
                + [_Pair(f, None) for f in writer if self.key(f.name) not in left_keys])

    def writer_only(self, writer: Field, pair: _Pair, paths: Paths) -> Field:
        return writer

    def reader_only(self, reader: Field, pair: _Pair, paths: Paths) -> Field:
        return reader

    def struct(self, writer: StructType, reader: StructType, paths: Paths,
               fields: Sequence[Field]) -> DataType:
        if not self.gone:
            return StructType(tuple(fields))
        return StructType(tuple(f for f in fields if join(paths.reader, f.name).lower() not in self.gone))

    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> DataType:
        return self.clash(_Clash(paths.reader, reader, writer, KIND.text, KIND), reader)


class _SparkMerge(_Merge):
    """`StructType.merge`: nullable is OR, same-scale decimals take the larger precision."""

    def key(self, name: str) -> str:
        return name if self.o.case_sensitive else name.lower()

    def field(self, writer: Field, reader: Field, pair: _Pair, paths: Paths, type_result: DataType) -> Field:
        return new_field(reader.name, type_result, reader.nullable or writer.nullable, reader.id)

    def list(self, writer: ListType, reader: ListType, paths: Paths, element: DataType) -> DataType:
        return ListType(element, reader.element_nullable or writer.element_nullable)

    def map(self, writer: MapType, reader: MapType, paths: Paths, key: DataType, value: DataType) -> DataType:
        return MapType(key, value, reader.value_nullable or writer.value_nullable)

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> DataType:
        lt, rt, path = reader, writer, paths.reader
        if lt == rt:
            return lt
        if isinstance(lt, DecimalType) and isinstance(rt, DecimalType):
            if lt.scale == rt.scale:
                return DecimalType(max(lt.precision, rt.precision), lt.scale)
            return self.clash(_Clash(path, lt, rt, SPARK_DECIMAL_SCALE.text, SPARK_DECIMAL_SCALE), lt)
        if isinstance(lt, IntervalType) and isinstance(rt, IntervalType):
            if lt.months == rt.months:
                ends = sorted((lt.start, lt.end, rt.start, rt.end), key=INTERVAL_FIELDS.index)
                return IntervalType(ends[0], ends[-1])
            return self.clash(_Clash(path, lt, rt, SPARK_INTERVALS.text, SPARK_INTERVALS), lt)
        return self.clash(_Clash(path, lt, rt, SPARK_MERGE.text, SPARK_MERGE), lt)


class _DeltaMerge(_Merge):
    """`mergeSchemas(table, data)`: case-insensitive; the table's spelling, nullability, id,
    default and metadata stay; a type change needs a type-widening row (§4)."""

    def field(self, writer: Field, reader: Field, pair: _Pair, paths: Paths, type_result: DataType) -> Field:
        return replace(reader, type=type_result)

    def list(self, writer: ListType, reader: ListType, paths: Paths, element: DataType) -> DataType:
        return ListType(element, reader.element_nullable)

    def map(self, writer: MapType, reader: MapType, paths: Paths, key: DataType, value: DataType) -> DataType:
        return MapType(key, value, reader.value_nullable)

    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> DataType:
        void = _void_merged(reader, writer)
        return void if void is not None else super().mismatch(writer, reader, paths)

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> DataType:
        tt, dt, o = reader, writer, self.o
        if tt == dt:
            return tt
        void = _void_merged(tt, dt)
        if void is not None:
            return void
        if o.type_widening and any(p.test(tt, dt, o) for p in DELTA_WIDENING):
            return dt
        return self.not_widened(tt, dt, paths.reader)

    def not_widened(self, tt: Leaf, dt: Leaf, path: str) -> DataType:
        """Two types no widening of the table's makes one: the table's (`tt`) and the data's."""
        if _small_int(tt) and _small_int(dt):
            # byte/short/int mix (§4, one Parquet INT32): the wider one wins, with or without type
            # widening (observed on Delta 4.4.0: byte table + short data is smallint)
            return tt if tt.bits >= dt.bits else dt
        if not self.o.type_widening:
            return self.clash(_Clash(path, tt, dt, DELTA_NO_WIDENING.text, DELTA_NO_WIDENING), tt)
        return self.clash(_Clash(path, tt, dt, DELTA_MERGE.text, DELTA_MERGE), tt)


class _DeltaMergeInto(_DeltaMerge):
    """`mergeSchemas(target, source, allowImplicitConversions = true)`, as MERGE INTO's schema evolution
    calls it: a widening the table's type-widening feature allows changes the table's type; any other
    type Spark casts to the table's implicitly keeps the table's type (the MERGE casts the values); a new
    column comes in nullable, whatever the source says (observed on Delta 4.4.0)."""

    def writer_only(self, writer: Field, pair: _Pair, paths: Paths) -> Field:
        return replace(writer, type=as_nullable(writer.type), nullable=True)

    def not_widened(self, tt: Leaf, dt: Leaf, path: str) -> DataType:
        if implicit_cast(dt, tt):
            return tt
        return self.clash(_Clash(path, tt, dt, DELTA_MERGE_INTO_NO_CAST.text, DELTA_MERGE_INTO_NO_CAST), tt)


def _void_merged(table: DataType, data: DataType) -> DataType | None:
    """Delta's merge of a void column with another type (DELTA_VOID), None when neither is void."""
    if isinstance(data, VoidType):
        return table
    return data if isinstance(table, VoidType) else None


def _small_int(t: DataType) -> TypeGuard[IntType]:
    return isinstance(t, IntType) and t.signed and t.bits <= 32


def spark_merge(left: Schema, right: Schema, o: Options) -> tuple[Schema, list[_Clash]]:
    """Spark's merge of two schemas (already as Spark sees them), without the fields they clash on."""
    visitor = _SparkMerge(o)
    merged = visit_with_partner(right, left, visitor)
    assert isinstance(merged, StructType)
    return Schema(merged.fields), visitor.clashes


def delta_merge(table: Schema, data: Schema, o: Options) -> tuple[Schema, list[_Clash]]:
    """Delta's merge of the data's schema into the table's, without the fields they clash on."""
    return _delta(table, data, _DeltaMerge(o))


def delta_merge_into(table: Schema, source: Schema, o: Options) -> tuple[Schema, list[_Clash]]:
    """The table's schema after MERGE INTO with schema evolution from a source of schema `source`,
    without the fields they clash on."""
    return _delta(table, source, _DeltaMergeInto(o))


def _delta(table: Schema, data: Schema, visitor: _DeltaMerge) -> tuple[Schema, list[_Clash]]:
    """One of Delta's merges, then its table-feature check: an added timestamp_ntz field fails."""
    merged = visit_with_partner(data, table, visitor)
    assert isinstance(merged, StructType)
    result, clashes = Schema(merged.fields), visitor.clashes
    if _ntz(table) is None and _ntz(result) is not None:
        nodes = {p: n for p, n, _ in walk(table)}
        while (at := _ntz(result)) is not None:  # each added timestamp_ntz field (they are few)
            path, t = at
            clashes.append(_Clash(path, nodes.get(path), t, DELTA_NTZ.text, DELTA_NTZ))
            without = drop(result, path)
            if without == result:
                break
            result = without
    return result, clashes


def _ntz(schema: Schema) -> tuple[str, DataType] | None:
    """The first timestamp_ntz node of a schema, if any."""
    return next(((p, t) for p, t, _ in walk(schema) if isinstance(t, TimestampType) and not t.utc), None)
