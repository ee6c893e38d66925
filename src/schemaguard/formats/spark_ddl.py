"""Spark SQL DDL types, as sqlglot parses them (`exp.DataType`), into the model: the types of
`ADD COLUMNS`, `ALTER COLUMN ... TYPE`, `REPLACE COLUMNS`. The same mapping as Spark's schema
JSON (formats/spark.py): TINYINT/SMALLINT/INT/BIGINT -> int8..int64, FLOAT/DOUBLE, DECIMAL(p,s)
(DECIMAL alone is Spark's decimal(10,0)), STRING/VARCHAR/CHAR -> string, BINARY, BOOLEAN, DATE,
TIMESTAMP -> timestamp_us_utc (an instant), TIMESTAMP_NTZ -> timestamp_us_local, VARIANT,
ARRAY<...>, MAP<..., ...>, STRUCT<...> (a field's NOT NULL and COMMENT kept)."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    StringType,
    StructType,
    TimestampType,
    VariantType,
)

if TYPE_CHECKING:
    from sqlglot import exp


class DdlTypeError(ValueError):
    """A DDL type the model (or Spark) has no equivalent for."""


_ATOMIC: dict[str, DataType] = {
    "TINYINT": IntType(8), "SMALLINT": IntType(16), "INT": IntType(32), "BIGINT": IntType(64),
    "FLOAT": FloatType(32), "DOUBLE": FloatType(64),
    "TEXT": StringType(), "VARCHAR": StringType(), "CHAR": StringType(), "BINARY": BinaryType(),
    "BOOLEAN": BooleanType(), "DATE": DateType(),
    "TIMESTAMPTZ": TimestampType("us", True), "TIMESTAMP": TimestampType("us", True),
    "TIMESTAMPNTZ": TimestampType("us", False), "VARIANT": VariantType(),
}


def ddl_type(t: exp.DataType, where: str) -> DataType:
    """The model type of one parsed DDL type."""
    kind = t.this.name
    if kind in _ATOMIC:
        return _ATOMIC[kind]
    params = t.expressions
    if kind == "DECIMAL":
        if not params:
            return DecimalType(10, 0)
        precision, scale = (int(p.name) for p in params) if len(params) == 2 else (int(params[0].name), 0)
        return DecimalType(precision, scale)
    if kind == "ARRAY" and len(params) == 1:
        return ListType(ddl_type(params[0], f"{where}[]"), True)
    if kind == "MAP" and len(params) == 2:
        return MapType(ddl_type(params[0], f"{where}{{key}}"), ddl_type(params[1], f"{where}{{value}}"), True)
    if kind == "STRUCT":
        return StructType(tuple(ddl_field(f, where) for f in params))
    raise DdlTypeError(f"{where}: the type {t.sql(dialect='spark')} has no equivalent here")


def ddl_field(column: exp.ColumnDef, parent: str = "") -> Field:
    """A column definition (`name TYPE [NOT NULL] [COMMENT '...']`) as a field."""
    from sqlglot import exp

    name = column.name
    path = f"{parent}.{name}" if parent else name
    kind = column.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise DdlTypeError(f"{path}: a column needs a type")
    constraints = [c.args.get("kind") for c in column.args.get("constraints") or ()]
    comment = next((c.this.name for c in constraints if isinstance(c, exp.CommentColumnConstraint)), None)
    not_null = any(isinstance(c, exp.NotNullColumnConstraint) and not c.args.get("allow_null")
                   for c in constraints)
    return Field(name, ddl_type(kind, path), nullable=not not_null,
                 metadata=(("comment", comment),) if comment is not None else ())
