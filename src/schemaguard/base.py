"""What every rule and check speaks in: severities, rules, problems and their codes, conflicts,
reader options. Shared by `rules/`, `checks/` and `report/`, so that none of them imports another
to name a type. (How Spark sees a Parquet type is `formats/spark_view.py`.)

May import: names, paths, model. Must not: hold a rule of one reader (those live in `rules/`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal

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
