"""What Spark's and Delta's schema merges produce from two or more schemas, in order.

Spark (`StructType.merge`, the Parquet `mergeSchema` read; compat-rules.md §5,
parquet-and-spark.md §2.3): fields matched by name (lower-cased unless case-sensitive), the left
side's fields first in their order, the right side's new fields appended; nullable = OR (also
list elements and map values); decimals of the same scale merge to the larger precision; every
other difference is a conflict. Types are compared as Spark sees the Parquet columns
(`profiles.spark_view`), so ms and us timestamps, uint32 and int64, JSON and string all merge.

Delta (`SchemaMergingUtils.mergeSchemas(table, data)`, schema evolution on write; compat-rules.md
§4): case-insensitive, the table's spelling and nullability win, new data columns are appended
to their struct, byte/short/int mix, and a type change needs the type-widening feature and a row
of its table (profiles.DELTA_WIDENING), checked against real Delta 4.4.0.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemaguard.formats.notation import describe
from schemaguard.model import (
    DataType,
    DecimalType,
    Field,
    IntType,
    ListType,
    MapType,
    Schema,
    StructType,
)
from schemaguard.rules.profiles import CR, DELTA_WIDENING, PS, Options, Problem, Rule, spark_view


@dataclass(frozen=True, slots=True)
class Conflict:
    path: str
    left: str
    right: str
    message: str
    rule: Rule


@dataclass(frozen=True, slots=True)
class MergeResult:
    merged: Schema | None
    conflicts: tuple[Conflict, ...]

    @property
    def ok(self) -> bool:
        return not self.conflicts


SPARK_MERGE = Rule("spark-merge.equal", "StructType.merge needs equal types apart from nullability "
                   "and same-scale decimal precision", f"{CR} §5 StructType.merge; {PS} §2.3")
SPARK_DECIMAL_SCALE = Rule("spark-merge.decimal-scale", "decimals of different scale do not merge "
                           "(SPARK-37191)", f"{CR} §5; {PS} §2.3")
SPARK_ILLEGAL = Rule("spark.illegal-type", "Spark cannot read this Parquet type at all", f"{PS} §2.4")
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


class _Conflict(Exception):
    def __init__(self, conflict: Conflict) -> None:
        super().__init__(conflict.message)
        self.conflict = conflict


def _conflict(path: str, left: DataType, right: DataType, why: str, rule: Rule) -> _Conflict:
    return _Conflict(Conflict(path, describe(left), describe(right),
                              f"`{path}`: {describe(left)} and {describe(right)} do not merge: {why}",
                              rule))


def merge(schemas: list[Schema], profile: str, options: Options | None = None) -> MergeResult:
    """Merge left to right: the first schema is the left side (Delta: the table)."""
    opts = options or Options()
    if profile not in ("spark-merge", "delta-merge"):
        raise ValueError(f"merge needs profile spark-merge or delta-merge, not {profile!r}")
    try:
        # Both merges see Spark's types: Delta merges the schemas of Spark DataFrames.
        views = [Schema(_spark_struct_view(s.fields, "")) for s in schemas]
        merged = views[0]
        for right in views[1:]:
            fields = (_spark_fields(merged.fields, right.fields, "", opts) if profile == "spark-merge"
                      else _delta_fields(merged.fields, right.fields, "", opts))
            merged = Schema(fields)
    except _Conflict as c:
        return MergeResult(None, (c.conflict,))
    return MergeResult(merged, ())


def merge_problems(reader: Schema, writer: Schema, profile: str, options: Options) -> list[Problem]:
    """`can_read` for merge profiles: the reader's (table's) schema merged with the data's."""
    result = merge([reader, writer], profile, options)
    return [Problem(c.path, "MERGE_CONFLICT", c.message, c.rule) for c in result.conflicts]


def _key(name: str, o: Options) -> str:
    return name if o.case_sensitive else name.lower()


# ---------------------------------------------------------------------------------------------
# Spark's view of the inputs, and Spark's merge


def _spark_struct_view(fields: tuple[Field, ...], path: str) -> tuple[Field, ...]:
    return tuple(Field(f.name, _spark_type(f.type, f"{path}.{f.name}" if path else f.name),
                       f.nullable, f.id, f.default_json, f.aliases, f.metadata) for f in fields)


def _spark_type(t: DataType, path: str) -> DataType:
    if isinstance(t, StructType):
        return StructType(_spark_struct_view(t.fields, path))
    if isinstance(t, ListType):
        return ListType(_spark_type(t.element, path + "[]"), t.element_nullable)
    if isinstance(t, MapType):
        return MapType(_spark_type(t.key, path + "{key}"), _spark_type(t.value, path + "{value}"),
                       t.value_nullable)
    view = spark_view(t)
    if isinstance(view, str):
        raise _conflict(path, t, t, view, SPARK_ILLEGAL)
    return view


def _spark_fields(left: tuple[Field, ...], right: tuple[Field, ...], path: str,
                  o: Options) -> tuple[Field, ...]:
    by_key = {_key(f.name, o): f for f in right}
    out: list[Field] = []
    for lf in left:
        rf = by_key.pop(_key(lf.name, o), None)
        if rf is None:
            out.append(lf)
            continue
        here = f"{path}.{lf.name}" if path else lf.name
        out.append(Field(lf.name, _spark_merge_type(lf.type, rf.type, here, o),
                         lf.nullable or rf.nullable, lf.id))
    left_keys = {_key(f.name, o) for f in left}
    out.extend(f for f in right if _key(f.name, o) not in left_keys)
    return tuple(out)


def _spark_merge_type(lt: DataType, rt: DataType, path: str, o: Options) -> DataType:
    if isinstance(lt, StructType) and isinstance(rt, StructType):
        return StructType(_spark_fields(lt.fields, rt.fields, path, o))
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
        raise _conflict(path, lt, rt, SPARK_DECIMAL_SCALE.text, SPARK_DECIMAL_SCALE)
    nested = (StructType, ListType, MapType)
    rule = KIND if isinstance(lt, nested) or isinstance(rt, nested) else SPARK_MERGE
    raise _conflict(path, lt, rt, rule.text, rule)


# ---------------------------------------------------------------------------------------------
# Delta


def _delta_fields(table: tuple[Field, ...], data: tuple[Field, ...], path: str,
                  o: Options) -> tuple[Field, ...]:
    by_key = {f.name.lower(): f for f in data}  # Delta merges case-insensitively (§4)
    out: list[Field] = []
    for tf in table:
        df = by_key.pop(tf.name.lower(), None)
        if df is None:
            out.append(tf)
            continue
        here = f"{path}.{tf.name}" if path else tf.name
        out.append(Field(tf.name, _delta_merge_type(tf.type, df.type, here, o), tf.nullable, tf.id,
                         tf.default_json, tf.aliases, tf.metadata))
    table_keys = {f.name.lower() for f in table}
    out.extend(f for f in data if f.name.lower() not in table_keys)
    return tuple(out)


def _delta_merge_type(tt: DataType, dt: DataType, path: str, o: Options) -> DataType:
    if isinstance(tt, StructType) and isinstance(dt, StructType):
        return StructType(_delta_fields(tt.fields, dt.fields, path, o))
    if isinstance(tt, ListType) and isinstance(dt, ListType):
        return ListType(_delta_merge_type(tt.element, dt.element, path + "[]", o), tt.element_nullable)
    if isinstance(tt, MapType) and isinstance(dt, MapType):
        return MapType(_delta_merge_type(tt.key, dt.key, path + "{key}", o),
                       _delta_merge_type(tt.value, dt.value, path + "{value}", o), tt.value_nullable)
    if tt == dt:
        return tt
    nested = (StructType, ListType, MapType)
    if isinstance(tt, nested) or isinstance(dt, nested):
        raise _conflict(path, tt, dt, KIND.text, KIND)
    if o.type_widening and any(p.test(tt, dt, o) for p in DELTA_WIDENING):
        return dt
    if _small_int(tt) and _small_int(dt):
        return tt  # byte/short/int are one Parquet INT32: the table's type stays (§4)
    if not o.type_widening:
        raise _conflict(path, tt, dt, DELTA_NO_WIDENING.text, DELTA_NO_WIDENING)
    raise _conflict(path, tt, dt, DELTA_MERGE.text, DELTA_MERGE)


def _small_int(t: DataType) -> bool:
    return isinstance(t, IntType) and t.signed and t.bits <= 32
