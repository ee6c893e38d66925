"""Spark StructType JSON (as in `df.schema.json()` and the Parquet footer key
`org.apache.spark.sql.parquet.row.metadata`) into the model.

Spark type -> notation: byte/short/integer/long -> int8..int64; float/double; decimal(p,s);
string, char(n), varchar(n) -> string; binary; date; void (NullType) -> void; timestamp ->
timestamp_us_utc (Spark's TIMESTAMP is an instant in microseconds); timestamp_ntz ->
timestamp_us_local; `interval year to month` and the other ANSI intervals -> interval_year_to_month
and so on; array, map, struct.
Field ids come from the `parquet.field.id` metadata key, which is where Spark keeps them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from schemaguard.errors import TOO_DEEP
from schemaguard.formats.notation import describe, interval
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    Field,
    FixedType,
    FloatType,
    Int96Type,
    IntervalType,
    IntType,
    JsonType,
    ListType,
    MapType,
    PrimitiveType,
    Schema,
    SchemaVisitor,
    StringType,
    StructType,
    TimestampType,
    UuidType,
    VariantType,
    VoidType,
    canonical_json,
    new_field,
    visit,
)
from schemaguard.paths import ELEMENT, KEY, VALUE, join


class SparkSchemaError(ValueError):
    """Spark schema JSON this model cannot express, or that is not Spark schema JSON at all."""


_ATOMIC: dict[str, DataType] = {
    "boolean": BooleanType(),
    "byte": IntType(8),
    "short": IntType(16),
    "integer": IntType(32),
    "long": IntType(64),
    "float": FloatType(32),
    "double": FloatType(64),
    "string": StringType(),
    "binary": BinaryType(),
    "date": DateType(),
    "timestamp": TimestampType("us", True),
    "timestamp_ntz": TimestampType("us", False),
    "variant": VariantType(),
    "void": VoidType(),
}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_CHAR = re.compile(r"(?:var)?char\(\d+\)")
_INTERVAL = re.compile(r"interval (\w+)(?: to (\w+))?")
FIELD_ID_KEY = "parquet.field.id"


def spark_type_to_model(doc: Any, where: str) -> DataType:
    if isinstance(doc, str):
        if doc in _ATOMIC:
            return _ATOMIC[doc]
        if m := _DECIMAL.fullmatch(doc):
            return DecimalType(int(m[1]), int(m[2]))
        if doc == "decimal":  # Spark's DecimalType() default
            return DecimalType(10, 0)
        if _CHAR.fullmatch(doc):
            return StringType()
        if m := _INTERVAL.fullmatch(doc):
            try:
                return interval(m[1], m[2] or m[1])
            except ValueError as e:
                raise SparkSchemaError(f"{where}: {e}") from None
        raise SparkSchemaError(f"{where}: Spark type {doc!r} has no notation equivalent")
    if not isinstance(doc, dict):
        raise SparkSchemaError(f"{where}: not a Spark type: {doc!r}")
    kind = doc.get("type")
    if kind == "struct":
        return StructType(tuple(_field(f, where) for f in doc.get("fields", [])))
    if kind == "array":
        return ListType(spark_type_to_model(doc["elementType"], where + ELEMENT),
                        bool(doc.get("containsNull", True)))
    if kind == "map":
        return MapType(spark_type_to_model(doc["keyType"], where + KEY),
                       spark_type_to_model(doc["valueType"], where + VALUE),
                       bool(doc.get("valueContainsNull", True)))
    raise SparkSchemaError(f"{where}: unknown Spark type object {kind!r}")


def _field(doc: Any, parent: str) -> Field:
    if not isinstance(doc, dict) or "name" not in doc or "type" not in doc:
        raise SparkSchemaError(f"{parent or 'schema'}: a Spark field needs name and type")
    name = str(doc["name"])
    path = join(parent, name)
    raw = doc.get("metadata")
    fid, metadata = _field_metadata(raw, path) if raw else (None, ())
    # by its slots (a Delta log's schema may hold tens of thousands of fields, most without metadata)
    return new_field(name, spark_type_to_model(doc["type"], path), bool(doc.get("nullable", True)), fid,
                     metadata=metadata)


def _field_metadata(raw: Any, path: str) -> tuple[int | None, tuple[tuple[str, str], ...]]:
    """A Spark field's metadata: its Parquet field id, and the rest as sorted pairs of text."""
    meta = dict(raw)
    fid = meta.pop(FIELD_ID_KEY, None)
    if fid is not None and (type(fid) is not int or not -2**31 <= fid < 2**31):
        raise SparkSchemaError(f"{path}: {FIELD_ID_KEY} must be a whole number that fits a Parquet field id "
                               f"(32 bits), not {fid!r}")
    return fid, tuple(sorted((k, v if isinstance(v, str) else canonical_json(v)) for k, v in meta.items()))


def schema_from_spark_json(text: str) -> Schema:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SparkSchemaError(f"not JSON: {e}") from e
    except RecursionError:
        raise SparkSchemaError(TOO_DEEP) from None
    if not isinstance(doc, dict) or doc.get("type") != "struct":
        raise SparkSchemaError('Spark schema JSON is {"type": "struct", "fields": [...]}')
    t = spark_type_to_model(doc, "")
    assert isinstance(t, StructType)
    return Schema(t.fields)


# ---------------------------------------------------------------------------------------------
# model -> Spark StructType JSON
#
# The inverse of the above where Spark has the type. Otherwise the type Spark itself reads it as:
# unsigned integers as Spark's Parquet converter widens them (uint64 -> decimal(20,0)), json and
# enum -> string, fixed and uuid -> binary, every UTC timestamp unit and INT96 -> timestamp, local
# ones -> timestamp_ntz. Field ids go into `parquet.field.id`; defaults and aliases have no place
# in StructType JSON and are dropped. time_*, float16, geometry and geography have no
# Spark type here and raise.

_ATOMIC_OUT: dict[DataType, str] = {t: name for name, t in _ATOMIC.items()}
_WIDENED: dict[DataType, str] = {
    IntType(8, False): "short",
    IntType(16, False): "integer",
    IntType(32, False): "long",
    IntType(64, False): "decimal(20,0)",
    JsonType(): "string",
    UuidType(): "binary",
    Int96Type(): "timestamp",
}
SPARK_MAX_DECIMAL_PRECISION = 38


SparkType = dict[str, Any] | str


class _ToSpark(SchemaVisitor[SparkType, dict[str, Any]]):
    """Spark type JSON of each node; a schema is its top-level struct, as in `df.schema.json()`."""

    def field(self, f: Field, path: str, type_result: SparkType) -> dict[str, Any]:
        meta: dict[str, Any] = dict(f.metadata)
        if f.id is not None:
            meta[FIELD_ID_KEY] = f.id
        return {"name": f.name, "type": type_result, "nullable": f.nullable, "metadata": meta}

    def struct(self, t: StructType, path: str, fields: Sequence[dict[str, Any]]) -> SparkType:
        return {"type": "struct", "fields": list(fields)}

    def list(self, t: ListType, path: str, element: SparkType) -> SparkType:
        return {"type": "array", "elementType": element, "containsNull": t.element_nullable}

    def map(self, t: MapType, path: str, key: SparkType, value: SparkType) -> SparkType:
        return {"type": "map", "keyType": key, "valueType": value, "valueContainsNull": t.value_nullable}

    def enum(self, t: EnumType, path: str) -> SparkType:
        return "string"

    def primitive(self, t: PrimitiveType, path: str) -> SparkType:
        name = _ATOMIC_OUT.get(t) or _WIDENED.get(t)
        if name is not None:
            return name
        if isinstance(t, DecimalType):
            if t.precision > SPARK_MAX_DECIMAL_PRECISION:
                raise SparkSchemaError(f"{path or 'schema'}: {describe(t)}: Spark decimals hold at most "
                                       f"{SPARK_MAX_DECIMAL_PRECISION} digits")
            return f"decimal({t.precision},{t.scale})"
        if isinstance(t, FixedType):
            return "binary"
        if isinstance(t, TimestampType):
            return "timestamp" if t.utc else "timestamp_ntz"
        if isinstance(t, IntervalType):  # as Spark's typeName: `interval year`, `interval day to second`
            return f"interval {t.start}" + ("" if t.end == t.start else f" to {t.end}")
        raise SparkSchemaError(f"{path or 'schema'}: {describe(t)} has no Spark type")


def type_to_spark(t: DataType, where: str = "") -> SparkType:
    """One model type as Spark type JSON; `where` (its path) only names the place in errors."""
    return visit(t, _ToSpark(), where)


def schema_to_spark_json(schema: Schema) -> str:
    """The model as Spark StructType JSON (what `StructType.fromJson` and `df.schema.json()` use)."""
    return json.dumps(visit(schema, _ToSpark()), ensure_ascii=False, separators=(",", ":"))
