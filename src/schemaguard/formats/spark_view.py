"""How Spark sees a Parquet type: the Spark type each model type becomes when Spark's Parquet
converter reads it, or the error Spark raises (docs/reference/parquet-and-spark.md §2.4,
`ParquetToSparkSchemaConverter`, Spark 4.x). The read, merge and gate rules, the footer checks and
the data proofs all ask it, so it sits in `formats/`, below them.

May import: errors, names, model, base. Must not: judge a pair of schemas (`rules/` does).
"""

from __future__ import annotations

from typing import overload

from schemaguard.base import PS, Rule
from schemaguard.model import (
    BinaryType,
    DataType,
    DecimalType,
    EnumType,
    Field,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    Int96Type,
    IntType,
    JsonType,
    ListType,
    MapType,
    PrimitiveType,
    Schema,
    SchemaTransform,
    StringType,
    TimestampType,
    TimeType,
    UuidType,
    new_field,
    transform,
)

SPARK_ILLEGAL = Rule("spark.illegal-type", "Spark cannot read this Parquet type at all", f"{PS} §2.4")


def spark_view(t: DataType) -> DataType | str:
    """The Spark type a Parquet column of this type becomes, or the error Spark raises.
    Source: docs/reference/parquet-and-spark.md §2.4 (ParquetToSparkSchemaConverter, Spark 4.x)."""
    if isinstance(t, IntType):
        if t.signed:
            return t
        return {8: IntType(16), 16: IntType(32), 32: IntType(64)}.get(t.bits, DecimalType(20, 0))
    if isinstance(t, FloatType):
        return t if t.bits != 16 else "PARQUET_TYPE_ILLEGAL: FLOAT16"
    if isinstance(t, DecimalType) and t.precision > 38:
        return "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"
    if isinstance(t, JsonType | EnumType):
        return StringType()
    if isinstance(t, FixedType):
        return BinaryType()
    if isinstance(t, UuidType):
        return "PARQUET_TYPE_ILLEGAL: UUID"
    if isinstance(t, TimeType):  # Spark 4.1 converts TIME(MICROS) to its TIME, then refuses it
        return "UNSUPPORTED_TIME_TYPE: TIME" if t.unit == "us" else "PARQUET_TYPE_ILLEGAL: TIME"
    if isinstance(t, GeometryType | GeographyType):  # Spark 4.1 has no geometry types yet
        return f"PARQUET_TYPE_ILLEGAL: {'GEOMETRY' if isinstance(t, GeometryType) else 'GEOGRAPHY'}"
    if isinstance(t, TimestampType):
        if t.unit == "ns":
            return "PARQUET_TYPE_ILLEGAL: TIMESTAMP(NANOS)"
        return TimestampType("us", t.utc)
    if isinstance(t, Int96Type):
        return TimestampType("us", True)
    return t


class SparkUnreadable(Exception):
    """A node Spark cannot read (`why` is Spark's error), at `path`."""

    def __init__(self, path: str, type_: DataType, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path, self.type, self.why = path, type_, why


# Types Spark's converter maps to a Spark type it then refuses to use (spark.sql.timeType.enabled is
# off): a mergeSchema merges them first, so a TIME beside another type fails as a merge conflict
# (tests/truth/spark_merge.csv).
CONVERTED_UNSUPPORTED = (TimeType("us"),)


class _SparkView(SchemaTransform):
    def __init__(self, converting: bool = False) -> None:
        self.converting = converting
        # Each leaf type object's view, by identity: a footer's leaves share a few type objects
        # (one per distinct spelling), which the schema walked keeps alive through the walk.
        self.views: dict[int, DataType] = {}

    def primitive(self, t: PrimitiveType | EnumType, path: str) -> DataType:
        view = self.views.get(id(t))
        if view is not None:
            return view
        if self.converting and t in CONVERTED_UNSUPPORTED:
            return t
        seen = spark_view(t)
        if isinstance(seen, str):
            raise SparkUnreadable(path, t, seen)
        self.views[id(t)] = seen
        return seen

    def enum(self, t: EnumType, path: str) -> DataType:
        return self.primitive(t, path)


def spark_type(t: DataType, path: str = "") -> DataType:
    """A type as Spark's Parquet converter sees it, every node through `spark_view`; raises
    `SparkUnreadable` for the first node Spark cannot read (docs/reference/parquet-and-spark.md §2.4)."""
    return transform(t, _SparkView(), path)


def spark_schema(schema: Schema, converting: bool = False) -> Schema:
    """A schema as Spark sees its Parquet columns (see `spark_type`); `converting`: as its
    converter makes it, before refusing the types in `CONVERTED_UNSUPPORTED`."""
    return transform(schema, _SparkView(converting))


class _AsNullable(SchemaTransform):
    """Spark's `DataType.asNullable`: every field, list element and map value nullable."""

    def field(self, f: Field, path: str, type_result: DataType) -> Field:
        if f.nullable and type_result is f.type:
            return f
        return new_field(f.name, type_result, True, f.id, f.default_json, f.aliases, f.metadata)

    def list(self, t: ListType, path: str, element: DataType) -> DataType:
        return ListType(element, True)

    def map(self, t: MapType, path: str, key: DataType, value: DataType) -> DataType:
        return MapType(key, value, True)


@overload
def as_nullable(node: Schema) -> Schema: ...
@overload
def as_nullable(node: DataType) -> DataType: ...
def as_nullable(node: Schema | DataType) -> Schema | DataType:
    """The schema or type with nothing NOT NULL in it (`DataType.asNullable`): as Spark reads every
    Parquet column, and as its merges compare schemas."""
    return transform(node, _AsNullable())
