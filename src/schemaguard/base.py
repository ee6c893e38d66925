"""What every rule and check speaks in: severities, rules, problems and their codes, conflicts,
reader options, and how Spark sees a Parquet type. Shared by `rules/`, `checks/` and `report/`, so
that none of them imports another to name a type.

May import: names, model. Must not: hold a rule of one reader (those live in `rules/`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal

from schemaguard.model import (
    BinaryType,
    DataType,
    DecimalType,
    EnumType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    Int96Type,
    IntType,
    JsonType,
    PrimitiveType,
    Schema,
    SchemaTransform,
    StringType,
    TimestampType,
    TimeType,
    UuidType,
    transform,
)
from schemaguard.names import ColumnMapping, IcebergVersion, Identity

Severity = Literal["info", "warning", "error"]  # info: a rule that allowed a difference
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")  # lowest first

CR = "docs/reference/compat-rules.md"  # the reference pages rules cite, in this repository
PS = "docs/reference/parquet-and-spark.md"


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of a rule table: what it allows or forbids, and where that comes from."""

    id: str
    text: str
    source: str


Verdict = Literal["loud", "quiet", "fine"]


class ProblemCode(StrEnum):
    """What a reader meets, as `Problem.code` names it (docs/cli.md `problems[]`). One code stands
    for a kind of problem under every profile, so the rule a problem cites is its own `Problem.rule`
    (a TYPE_MISMATCH cites the profile's promotion table, Java's typeMismatch, a Spark refusal ...);
    Avro's codes are Java's SchemaIncompatibilityType names, each with one rule (rules/avro.py `RULES`)."""

    # loud: the read fails
    TYPE_MISMATCH = "TYPE_MISMATCH"
    UNREADABLE_TYPE = "UNREADABLE_TYPE"
    READER_FIELD_MISSING = "READER_FIELD_MISSING"
    NULLABILITY_TIGHTENED = "NULLABILITY_TIGHTENED"
    POSITION_TYPE_MISMATCH = "POSITION_TYPE_MISMATCH"
    WRITER_FIELD_UNREAD = "WRITER_FIELD_UNREAD"
    FIELD_RENAMED = "FIELD_RENAMED"
    AMBIGUOUS_COLUMN = "AMBIGUOUS_COLUMN"
    FILE_WITHOUT_FIELD_IDS = "FILE_WITHOUT_FIELD_IDS"
    MERGE_CONFLICT = "MERGE_CONFLICT"
    SCHEMA_CHANGE_NEEDS_MERGE = "SCHEMA_CHANGE_NEEDS_MERGE"
    ENGINE_REFUSES = "ENGINE_REFUSES"
    NULLS_INTO_NOT_NULL = "NULLS_INTO_NOT_NULL"  # a warning: the write fails at its first null
    # quiet: the read succeeds, values change meaning, land in another column or read as null
    VALUES_CHANGE_MEANING = "VALUES_CHANGE_MEANING"
    POSITION_NAME_MISMATCH = "POSITION_NAME_MISMATCH"
    FIELD_ID_UNBOUND = "FIELD_ID_UNBOUND"
    # fine: a rule allows it
    PROMOTED = "PROMOTED"
    # Avro's own (TYPE_MISMATCH above is one of them)
    NAME_MISMATCH = "NAME_MISMATCH"
    FIXED_SIZE_MISMATCH = "FIXED_SIZE_MISMATCH"
    MISSING_ENUM_SYMBOLS = "MISSING_ENUM_SYMBOLS"
    READER_FIELD_MISSING_DEFAULT_VALUE = "READER_FIELD_MISSING_DEFAULT_VALUE"
    MISSING_UNION_BRANCH = "MISSING_UNION_BRANCH"
    AMBIGUOUS_FIELD = "AMBIGUOUS_FIELD"  # not a Java type: Java's lookupWriterField throws


@dataclass(frozen=True, slots=True)
class Problem:
    """What a reader meets at one place of a schema: a loud break (the reader fails), a quiet break
    (it reads, and values change meaning or land in another column) or fine (a rule allows it:
    severity info). Both breaks are errors; `allow_quiet` makes the quiet ones warnings."""

    path: str
    code: ProblemCode
    message: str
    rule: Rule
    severity: Severity = "error"
    quiet: bool = False
    location: str = ""  # where the reader's own tools point (Avro: Java's JSON pointer), when they do

    @property
    def verdict(self) -> Verdict:
        if self.quiet:
            return "quiet"
        return "loud" if self.severity == "error" else "fine"


def allow_quiet(problems: list[Problem]) -> list[Problem]:
    """`--allow-quiet`: quiet breaks become warnings; loud ones stay errors."""
    return [replace(p, severity="warning") if p.quiet and p.severity == "error" else p for p in problems]


@dataclass(frozen=True, slots=True)
class Conflict:
    """One column a schema merge cannot merge; `input` is the index of the schema whose merge into
    those before it failed there."""

    path: str
    left: str
    right: str
    message: str
    rule: Rule
    input: int = 0


@dataclass(frozen=True, slots=True)
class Options:
    """How a reader is configured; the profiles read what applies to them."""

    type_widening: bool = False
    column_mapping: ColumnMapping = "none"
    iceberg_version: IcebergVersion = 2
    uniform: bool = False
    case_sensitive: bool = False
    identity: Identity | None = None  # None: the profile's own default
    allow_quiet: bool = False  # quiet breaks are warnings, not errors (--allow-quiet)
    # spark.sql.parquet.enableVectorizedReader: false reads through parquet-mr's row converters,
    # which widen less (tests/truth/spark_read_rows.csv)
    vectorized_reader: bool = True


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def worse(a: Severity, b: Severity) -> bool:
    """Is `a` more severe than `b`?"""
    return SEVERITIES.index(a) > SEVERITIES.index(b)


# ---------------------------------------------------------------------------------------------
# How Spark sees a Parquet type

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

    def primitive(self, t: PrimitiveType | EnumType, path: str) -> DataType:
        if self.converting and t in CONVERTED_UNSUPPORTED:
            return t
        view = spark_view(t)
        if isinstance(view, str):
            raise SparkUnreadable(path, t, view)
        return view

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
