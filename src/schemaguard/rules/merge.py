"""What Spark's and Delta's schema merges produce from two or more schemas, in order, and every
column they conflict on.

Spark (`StructType.merge`, the Parquet `mergeSchema` read; compat-rules.md §5,
parquet-and-spark.md §2.3): fields matched by name (lower-cased unless case-sensitive), the left
side's fields first in their order, the right side's new fields appended; nullable = OR (also
list elements and map values); decimals of the same scale merge to the larger precision; every
other difference is a conflict. Types are compared as Spark sees the Parquet columns
(`base.spark_type`), so ms and us timestamps, uint32 and int64, JSON and string all merge.

Delta (`SchemaMergingUtils.mergeSchemas(table, data)`, schema evolution on write; compat-rules.md
§4): case-insensitive, the table's spelling and nullability win, new data columns are appended
to their struct, byte/short/int mix, and a type change needs the type-widening feature and a row
of its table (promotions.DELTA_WIDENING), checked against real Delta 4.4.0.

Spark and Delta stop at the first conflict. `merge` finds them all: on a conflict the column is
taken out of every input and the merge starts again, so each conflicting column is named once,
with the input whose merge failed on it. The gate and the audit both ask this one function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeGuard

from schemaguard.base import (
    CR,
    PS,
    SPARK_ILLEGAL,
    Conflict,
    Options,
    Rule,
    SparkUnreadable,
    spark_schema,
)
from schemaguard.formats.notation import describe
from schemaguard.model import (
    ELEMENT,
    KEY,
    VALUE,
    DataType,
    DecimalType,
    Field,
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
    join,
    transform,
    visit_with_partner,
    walk,
)
from schemaguard.rules.promotions import DELTA_WIDENING

# Merges two schemas (left, right, options) into one, or raises _Clash at the first conflict.
Merger = Callable[[Schema, Schema, Options], Schema]


@dataclass(frozen=True, slots=True)
class MergeResult:
    merged: Schema | None  # None when any column conflicts
    conflicts: tuple[Conflict, ...]

    @property
    def ok(self) -> bool:
        return not self.conflicts


SPARK_MERGE = Rule("spark-merge.equal", "StructType.merge needs equal types apart from nullability "
                   "and same-scale decimal precision", f"{CR} §5 StructType.merge; {PS} §2.3")
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
KIND = Rule("merge.kind", "a struct, list, map or primitive does not merge with another kind",
            f"{CR} §4, §5")


class _Clash(Exception):
    """A conflict found while merging one pair of schemas; `merge` records it and goes on."""

    def __init__(self, path: str, left: DataType | None, right: DataType, why: str, rule: Rule) -> None:
        super().__init__(why)
        self.path, self.left, self.right, self.why, self.rule = path, left, right, why, rule

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
    conflicting column."""
    opts = options or Options()
    inputs = list(schemas)
    conflicts: list[Conflict] = []
    while inputs:
        try:
            merged = _merge_once(inputs, merger, opts)
        except _Failed as failed:
            conflicts.append(failed.conflict)
            without = [drop(s, failed.conflict.path) for s in inputs]
            if without == inputs:
                break  # the column cannot be taken out: stop at what was found
            inputs = without
            continue
        return MergeResult(None if conflicts else merged, tuple(conflicts))
    return MergeResult(None, tuple(conflicts))


class _Failed(Exception):
    def __init__(self, conflict: Conflict) -> None:
        super().__init__(conflict.message)
        self.conflict = conflict


def _merge_once(inputs: list[Schema], merger: Merger, o: Options) -> Schema:
    """Spark's or Delta's own merge: stops at the first conflict (raised as _Failed)."""
    merged: Schema | None = None
    for i, schema in enumerate(inputs):
        try:
            # both see Spark's types (Delta merges Spark DataFrames' schemas), as its converter
            # makes them: a type Spark refuses only once merged is checked after the merge
            view = spark_schema(schema, converting=True)
            merged = view if merged is None else merger(merged, view, o)
        except SparkUnreadable as e:
            raise _Failed(_Clash(e.path, e.type, e.type, e.why, SPARK_ILLEGAL).conflict(i)) from None
        except _Clash as c:
            raise _Failed(c.conflict(i)) from None
    assert merged is not None
    try:
        return spark_schema(merged)
    except SparkUnreadable as e:
        last = len(inputs) - 1
        raise _Failed(_Clash(e.path, e.type, e.type, e.why, SPARK_ILLEGAL).conflict(last)) from None


# ---------------------------------------------------------------------------------------------
# Taking a conflicting column out


class _Drop(SchemaTransform):
    """Leave out the field at one path, names compared case-insensitively as the merges compare them."""

    def __init__(self, path: str) -> None:
        self.path = path.lower()

    def struct(self, t: StructType, path: str, fields: Sequence[Field]) -> DataType:
        return StructType(tuple(f for f in fields if join(path, f.name).lower() != self.path))


def drop(schema: Schema, path: str) -> Schema:
    """`schema` without the field a conflict path points into (`a.b[]` -> field `a.b`)."""
    while path.endswith((ELEMENT, KEY, VALUE)):
        path = path[:path.rindex("{" if path.endswith("}") else "[")]
    return transform(schema, _Drop(path))


# ---------------------------------------------------------------------------------------------
# The merges: the left side (the table, or what is merged so far) is the reader, the right side
# (the data) the writer, so that "R reads W" is "the merge of R with W succeeds".


@dataclass(frozen=True, slots=True)
class _Pair:
    writer: Field | None  # right
    reader: Field | None  # left


class _Merge(PartnerVisitor[_Pair, DataType, Field]):
    """What both merges share: left fields first in their order, right-only fields appended, a
    right-only or left-only field kept as it is, containers merged slot by slot."""

    def __init__(self, o: Options) -> None:
        self.o = o

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
        return StructType(tuple(fields))

    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> DataType:
        raise _Clash(paths.reader, reader, writer, KIND.text, KIND)


class _SparkMerge(_Merge):
    """`StructType.merge`: nullable is OR, same-scale decimals take the larger precision."""

    def key(self, name: str) -> str:
        return name if self.o.case_sensitive else name.lower()

    def field(self, writer: Field, reader: Field, pair: _Pair, paths: Paths, type_result: DataType) -> Field:
        return Field(reader.name, type_result, reader.nullable or writer.nullable, reader.id)

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
            raise _Clash(path, lt, rt, SPARK_DECIMAL_SCALE.text, SPARK_DECIMAL_SCALE)
        raise _Clash(path, lt, rt, SPARK_MERGE.text, SPARK_MERGE)


class _DeltaMerge(_Merge):
    """`mergeSchemas(table, data)`: case-insensitive; the table's spelling, nullability, id,
    default and metadata stay; a type change needs a type-widening row (§4)."""

    def field(self, writer: Field, reader: Field, pair: _Pair, paths: Paths, type_result: DataType) -> Field:
        return replace(reader, type=type_result)

    def list(self, writer: ListType, reader: ListType, paths: Paths, element: DataType) -> DataType:
        return ListType(element, reader.element_nullable)

    def map(self, writer: MapType, reader: MapType, paths: Paths, key: DataType, value: DataType) -> DataType:
        return MapType(key, value, reader.value_nullable)

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> DataType:
        tt, dt, path, o = reader, writer, paths.reader, self.o
        if tt == dt:
            return tt
        if o.type_widening and any(p.test(tt, dt, o) for p in DELTA_WIDENING):
            return dt
        if _small_int(tt) and _small_int(dt):
            # byte/short/int mix (§4, one Parquet INT32): the wider one wins, with or without type
            # widening (observed on Delta 4.4.0: byte table + short data is smallint)
            return tt if tt.bits >= dt.bits else dt
        if not o.type_widening:
            raise _Clash(path, tt, dt, DELTA_NO_WIDENING.text, DELTA_NO_WIDENING)
        raise _Clash(path, tt, dt, DELTA_MERGE.text, DELTA_MERGE)


def _small_int(t: DataType) -> TypeGuard[IntType]:
    return isinstance(t, IntType) and t.signed and t.bits <= 32


def spark_merge(left: Schema, right: Schema, o: Options) -> Schema:
    """Spark's merge of two schemas (already as Spark sees them); raises _Clash at the first conflict."""
    merged = visit_with_partner(right, left, _SparkMerge(o))
    assert isinstance(merged, StructType)
    return Schema(merged.fields)


def delta_merge(table: Schema, data: Schema, o: Options) -> Schema:
    """Delta's merge of the data's schema into the table's; raises _Clash at the first conflict."""
    merged = visit_with_partner(data, table, _DeltaMerge(o))
    assert isinstance(merged, StructType)
    result = Schema(merged.fields)
    if _ntz(table) is None and (at := _ntz(result)) is not None:
        path, t = at
        before = {p: n for p, n, _ in walk(table)}.get(path)
        raise _Clash(path, before, t, DELTA_NTZ.text, DELTA_NTZ)
    return result


def _ntz(schema: Schema) -> tuple[str, DataType] | None:
    """The first timestamp_ntz node of a schema, if any."""
    return next(((p, t) for p, t, _ in walk(schema) if isinstance(t, TimestampType) and not t.utc), None)
