"""Spark SQL DDL types, as sqlglot parses them (`exp.DataType`), into the model: the types of
`ADD COLUMNS`, `ALTER COLUMN ... TYPE`, `REPLACE COLUMNS`. The same mapping as Spark's schema
JSON (formats/spark.py): TINYINT/SMALLINT/INT/BIGINT -> int8..int64, FLOAT/DOUBLE, DECIMAL(p,s)
(DECIMAL alone is Spark's decimal(10,0)), STRING/VARCHAR/CHAR -> string, BINARY, BOOLEAN, DATE,
TIMESTAMP -> timestamp_us_utc (an instant), TIMESTAMP_NTZ -> timestamp_us_local, VARIANT, VOID,
ARRAY<...>, MAP<..., ...>, STRUCT<...> (a field's NOT NULL and COMMENT kept)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, ClassVar

from schemaguard.formats.notation import interval
from schemaguard.formats.spark import type_to_spark
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    Field,
    FloatType,
    IntType,
    ListType,
    MapType,
    PrimitiveType,
    SchemaVisitor,
    StringType,
    StructType,
    TimestampType,
    VariantType,
    VoidType,
    visit,
)
from schemaguard.paths import ELEMENT, KEY, VALUE, join, parts

if TYPE_CHECKING:
    from sqlglot import exp
    from sqlglot.dialects.dialect import Dialect


def sql_dialect(name: str) -> str | type[Dialect]:
    """The sqlglot dialect that reads SQL written for `name`: for "spark", Spark's with its `VOID`
    type (`ADD COLUMNS (v VOID)`, `CAST(NULL AS VOID)`: NullType); else sqlglot's own by that name."""
    return spark_sql() if name == "spark" else name


@cache
def spark_sql() -> type[Dialect]:
    """sqlglot's Spark dialect, whose tokenizer lacks Spark's `VOID` keyword and whose generator
    writes the type as NULL (its Databricks dialect has both right). A subclass, so sqlglot's own
    stays as it is."""
    from sqlglot import TokenType, exp
    from sqlglot.dialects.spark import Spark
    from sqlglot.generators.spark import SparkGenerator

    class SchemaguardSpark(Spark):
        class Tokenizer(Spark.Tokenizer):
            KEYWORDS: ClassVar = {**Spark.Tokenizer.KEYWORDS, "VOID": TokenType.VOID}

        class Generator(SparkGenerator):
            TYPE_MAPPING: ClassVar = {**SparkGenerator.TYPE_MAPPING, exp.DType.NULL: "VOID"}

    return SchemaguardSpark


class DdlTypeError(ValueError):
    """A DDL type the model (or Spark) has no equivalent for."""


_ATOMIC: dict[str, DataType] = {
    "TINYINT": IntType(8), "SMALLINT": IntType(16), "INT": IntType(32), "BIGINT": IntType(64),
    "FLOAT": FloatType(32), "DOUBLE": FloatType(64),
    "TEXT": StringType(), "VARCHAR": StringType(), "CHAR": StringType(), "BINARY": BinaryType(),
    "BOOLEAN": BooleanType(), "DATE": DateType(),
    "TIMESTAMPTZ": TimestampType("us", True), "TIMESTAMP": TimestampType("us", True),
    "TIMESTAMPNTZ": TimestampType("us", False), "VARIANT": VariantType(), "NULL": VoidType(),
}


def ddl_type(t: exp.DataType, where: str) -> DataType:
    """The model type of one parsed DDL type."""
    from sqlglot import exp

    if isinstance(t.this, exp.Interval):  # INTERVAL YEAR TO MONTH: a span, or one field
        unit = t.this.args["unit"]
        if isinstance(unit, exp.IntervalSpan):
            start, end = unit.this.name, unit.args["expression"].name
        else:
            start = end = unit.name
        try:
            return interval(str(start).lower(), str(end).lower())
        except ValueError as e:
            raise DdlTypeError(f"{where}: {e}") from None
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
        return ListType(ddl_type(params[0], where + ELEMENT), True)
    if kind == "MAP" and len(params) == 2:
        return MapType(ddl_type(params[0], where + KEY), ddl_type(params[1], where + VALUE), True)
    if kind == "STRUCT":
        return StructType(tuple(ddl_field(f, where) for f in params))
    raise DdlTypeError(f"{where}: the type {t.sql(dialect=spark_sql())} has no equivalent here")


def ddl_field(column: exp.ColumnDef, parent: str = "") -> Field:
    """A column definition (`name TYPE [NOT NULL] [COMMENT '...']`) as a field."""
    from sqlglot import exp

    name = column.name
    path = join(parent, name)
    kind = column.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise DdlTypeError(f"{path}: a column needs a type")
    constraints = [c.args.get("kind") for c in column.args.get("constraints") or ()]
    comment = next((c.this.name for c in constraints if isinstance(c, exp.CommentColumnConstraint)), None)
    not_null = any(isinstance(c, exp.NotNullColumnConstraint) and not c.args.get("allow_null")
                   for c in constraints)
    return Field(name, ddl_type(kind, path), nullable=not not_null,
                 metadata=(("comment", comment),) if comment is not None else ())


# ---------------------------------------------------------------------------------------------
# The other way: a model type as Spark SQL DDL text (the plan's statements)

_SQL_NAMES = {"byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT"}


def quoted(name: str) -> str:
    """A name as Spark SQL spells any name: in backticks, a backtick doubled. Every identifier
    schemaguard writes into SQL goes through here."""
    return "`" + name.replace("`", "``") + "`"


def column_ref(path: str) -> str:
    """A struct-field path (paths.parts reads it) as Spark SQL names the column: each name quoted."""
    return ".".join(quoted(name) for name in parts(path))


def qualified(names: Sequence[str]) -> str:
    """A table or view name from its parts (`db`, `t`), each quoted."""
    return ".".join(quoted(name) for name in names)


class _ToSql(SchemaVisitor[str, str]):
    """Each node as Spark SQL type text (`STRUCT<`a`: INT NOT NULL>`); a leaf is its Spark type."""

    def field(self, f: Field, path: str, type_result: str) -> str:
        return f"{quoted(f.name)}: {type_result}" + ("" if f.nullable else " NOT NULL")

    def struct(self, t: StructType, path: str, fields: Sequence[str]) -> str:
        return f"STRUCT<{', '.join(fields)}>"

    def list(self, t: ListType, path: str, element: str) -> str:
        return f"ARRAY<{element}>"

    def map(self, t: MapType, path: str, key: str, value: str) -> str:
        return f"MAP<{key}, {value}>"

    def enum(self, t: EnumType, path: str) -> str:
        return "STRING"

    def primitive(self, t: PrimitiveType, path: str) -> str:
        name = type_to_spark(t, path)
        assert isinstance(name, str)  # a primitive's Spark type is a name
        return _SQL_NAMES.get(name, name.upper())


def sql_type(t: DataType, where: str = "") -> str:
    """One model type as Spark SQL DDL (an array's or map's element nullability is Spark's
    default, nullable: DDL cannot say otherwise)."""
    return visit(t, _ToSql(), where)
