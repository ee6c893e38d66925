"""Spark StructType JSON (as in `df.schema.json()` and the Parquet footer key
`org.apache.spark.sql.parquet.row.metadata`) into the model.

Spark type -> notation: byte/short/integer/long -> int8..int64; float/double; decimal(p,s);
string, char(n), varchar(n) -> string; binary; date; timestamp -> timestamp_us_utc (Spark's
TIMESTAMP is an instant in microseconds); timestamp_ntz -> timestamp_us_local; array, map, struct.
Field ids come from the `parquet.field.id` metadata key, which is where Spark keeps them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    Field,
    FloatType,
    IntType,
    ListType,
    MapType,
    Schema,
    StringType,
    StructType,
    TimestampType,
    canonical_json,
)


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
}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_CHAR = re.compile(r"(?:var)?char\(\d+\)")
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
        raise SparkSchemaError(f"{where}: Spark type {doc!r} has no notation equivalent")
    if not isinstance(doc, dict):
        raise SparkSchemaError(f"{where}: not a Spark type: {doc!r}")
    kind = doc.get("type")
    if kind == "struct":
        return StructType(tuple(_field(f, where) for f in doc.get("fields", [])))
    if kind == "array":
        return ListType(spark_type_to_model(doc["elementType"], where + "[]"),
                        bool(doc.get("containsNull", True)))
    if kind == "map":
        return MapType(spark_type_to_model(doc["keyType"], where + "{key}"),
                       spark_type_to_model(doc["valueType"], where + "{value}"),
                       bool(doc.get("valueContainsNull", True)))
    raise SparkSchemaError(f"{where}: unknown Spark type object {kind!r}")


def _field(doc: Any, parent: str) -> Field:
    if not isinstance(doc, dict) or "name" not in doc or "type" not in doc:
        raise SparkSchemaError(f"{parent or 'schema'}: a Spark field needs name and type")
    name = str(doc["name"])
    path = f"{parent}.{name}" if parent else name
    meta = dict(doc.get("metadata") or {})
    fid = meta.pop(FIELD_ID_KEY, None)
    return Field(
        name=name,
        type=spark_type_to_model(doc["type"], path),
        nullable=bool(doc.get("nullable", True)),
        id=int(fid) if fid is not None else None,
        metadata=tuple(sorted(
            (k, v if isinstance(v, str) else canonical_json(v)) for k, v in meta.items()
        )),
    )


def schema_from_spark_json(text: str) -> Schema:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SparkSchemaError(f"not JSON: {e}") from e
    if not isinstance(doc, dict) or doc.get("type") != "struct":
        raise SparkSchemaError('Spark schema JSON is {"type": "struct", "fields": [...]}')
    t = spark_type_to_model(doc, "")
    assert isinstance(t, StructType)
    return Schema(t.fields)
