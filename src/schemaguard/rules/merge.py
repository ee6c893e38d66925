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

from collections.abc import Callable
from dataclasses import dataclass

from schemaguard.base import (
    CR,
    PS,
    SPARK_ILLEGAL,
    Conflict,
    Options,
    Rule,
    SparkUnreadable,
    join,
    spark_schema,
)
from schemaguard.formats.notation import describe
from schemaguard.model import DataType, DecimalType, Field, IntType, ListType, MapType, Schema, StructType
from schemaguard.rules.promotions import DELTA_WIDENING

# Merges one struct's fields (left, right, path, options) into the merged fields, or raises _Clash.
Merger = Callable[[tuple[Field, ...], tuple[Field, ...], str, Options], tuple[Field, ...]]


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
KIND = Rule("merge.kind", "a struct, list, map or primitive does not merge with another kind",
            f"{CR} §4, §5")


class _Clash(Exception):
    """A conflict found while merging one pair of schemas; `merge` records it and goes on."""

    def __init__(self, path: str, left: DataType, right: DataType, why: str, rule: Rule) -> None:
        super().__init__(why)
        self.path, self.left, self.right, self.why, self.rule = path, left, right, why, rule

    def conflict(self, at: int) -> Conflict:
        left, right = describe(self.left), describe(self.right)
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
            view = spark_schema(schema)  # both see Spark's types: Delta merges Spark DataFrames' schemas
            merged = view if merged is None else Schema(merger(merged.fields, view.fields, "", o))
        except SparkUnreadable as e:
            raise _Failed(_Clash(e.path, e.type, e.type, e.why, SPARK_ILLEGAL).conflict(i)) from None
        except _Clash as c:
            raise _Failed(c.conflict(i)) from None
    assert merged is not None
    return merged


def _key(name: str, o: Options) -> str:
    return name if o.case_sensitive else name.lower()


# ---------------------------------------------------------------------------------------------
# Taking a conflicting column out


def drop(schema: Schema, path: str) -> Schema:
    """`schema` without the field a conflict path points into (`a.b[]` -> field `a.b`), names
    compared case-insensitively as Spark's merge compares them."""
    while path.endswith(("[]", "{key}", "{value}")):
        path = path[:path.rindex("{" if path.endswith("}") else "[")]
    return Schema(_drop_fields(schema.fields, path))


def _drop_fields(fields: tuple[Field, ...], path: str) -> tuple[Field, ...]:
    out: list[Field] = []
    for f in fields:
        name = f.name.lower()
        if path.lower() == name:
            continue
        rest = path[len(f.name):] if path.lower().startswith(name) else ""
        if rest[:1] in (".", "[", "{"):
            f = Field(f.name, _drop_type(f.type, rest), f.nullable, f.id, f.default_json, f.aliases,
                      f.metadata)
        out.append(f)
    return tuple(out)


def _drop_type(t: DataType, rest: str) -> DataType:
    if isinstance(t, StructType) and rest.startswith("."):
        return StructType(_drop_fields(t.fields, rest[1:]))
    if isinstance(t, ListType) and rest.startswith("[]"):
        return ListType(_drop_type(t.element, rest[2:]), t.element_nullable)
    if isinstance(t, MapType) and rest.startswith("{key}"):
        return MapType(_drop_type(t.key, rest[5:]), t.value, t.value_nullable)
    if isinstance(t, MapType) and rest.startswith("{value}"):
        return MapType(t.key, _drop_type(t.value, rest[7:]), t.value_nullable)
    return t


# ---------------------------------------------------------------------------------------------
# Spark


def spark_fields(left: tuple[Field, ...], right: tuple[Field, ...], path: str,
                 o: Options) -> tuple[Field, ...]:
    by_key = {_key(f.name, o): f for f in right}
    out: list[Field] = []
    for lf in left:
        rf = by_key.pop(_key(lf.name, o), None)
        if rf is None:
            out.append(lf)
            continue
        out.append(Field(lf.name, _spark_merge_type(lf.type, rf.type, join(path, lf.name), o),
                         lf.nullable or rf.nullable, lf.id))
    left_keys = {_key(f.name, o) for f in left}
    out.extend(f for f in right if _key(f.name, o) not in left_keys)
    return tuple(out)


def _spark_merge_type(lt: DataType, rt: DataType, path: str, o: Options) -> DataType:
    if isinstance(lt, StructType) and isinstance(rt, StructType):
        return StructType(spark_fields(lt.fields, rt.fields, path, o))
    if isinstance(lt, ListType) and isinstance(rt, ListType):
        return ListType(_spark_merge_type(lt.element, rt.element, path + "[]", o),
                        lt.element_nullable or rt.element_nullable)
    if isinstance(lt, MapType) and isinstance(rt, MapType):
        return MapType(_spark_merge_type(lt.key, rt.key, path + "{key}", o),
                       _spark_merge_type(lt.value, rt.value, path + "{value}", o),
                       lt.value_nullable or rt.value_nullable)
    if lt == rt:
        return lt
    if isinstance(lt, DecimalType) and isinstance(rt, DecimalType):
        if lt.scale == rt.scale:
            return DecimalType(max(lt.precision, rt.precision), lt.scale)
        raise _Clash(path, lt, rt, SPARK_DECIMAL_SCALE.text, SPARK_DECIMAL_SCALE)
    nested = (StructType, ListType, MapType)
    rule = KIND if isinstance(lt, nested) or isinstance(rt, nested) else SPARK_MERGE
    raise _Clash(path, lt, rt, rule.text, rule)


# ---------------------------------------------------------------------------------------------
# Delta


def delta_fields(table: tuple[Field, ...], data: tuple[Field, ...], path: str,
                 o: Options) -> tuple[Field, ...]:
    by_key = {f.name.lower(): f for f in data}  # Delta merges case-insensitively (§4)
    out: list[Field] = []
    for tf in table:
        df = by_key.pop(tf.name.lower(), None)
        if df is None:
            out.append(tf)
            continue
        out.append(Field(tf.name, _delta_merge_type(tf.type, df.type, join(path, tf.name), o), tf.nullable,
                         tf.id, tf.default_json, tf.aliases, tf.metadata))
    table_keys = {f.name.lower() for f in table}
    out.extend(f for f in data if f.name.lower() not in table_keys)
    return tuple(out)


def _delta_merge_type(tt: DataType, dt: DataType, path: str, o: Options) -> DataType:
    if isinstance(tt, StructType) and isinstance(dt, StructType):
        return StructType(delta_fields(tt.fields, dt.fields, path, o))
    if isinstance(tt, ListType) and isinstance(dt, ListType):
        return ListType(_delta_merge_type(tt.element, dt.element, path + "[]", o), tt.element_nullable)
    if isinstance(tt, MapType) and isinstance(dt, MapType):
        return MapType(_delta_merge_type(tt.key, dt.key, path + "{key}", o),
                       _delta_merge_type(tt.value, dt.value, path + "{value}", o), tt.value_nullable)
    if tt == dt:
        return tt
    nested = (StructType, ListType, MapType)
    if isinstance(tt, nested) or isinstance(dt, nested):
        raise _Clash(path, tt, dt, KIND.text, KIND)
    if o.type_widening and any(p.test(tt, dt, o) for p in DELTA_WIDENING):
        return dt
    if _small_int(tt) and _small_int(dt):
        return tt  # byte/short/int are one Parquet INT32: the table's type stays (§4)
    if not o.type_widening:
        raise _Clash(path, tt, dt, DELTA_NO_WIDENING.text, DELTA_NO_WIDENING)
    raise _Clash(path, tt, dt, DELTA_MERGE.text, DELTA_MERGE)


def _small_int(t: DataType) -> bool:
    return isinstance(t, IntType) and t.signed and t.bits <= 32
