"""Reader profiles: can a reader with schema R read data written with schema W?

One generic walk pairs fields (rules/identity.py) and asks the profile's rule table about each
difference. Every profile's promotions, field matching, missing-field, nullability and enum
rules live in one table below, each row citing its source in `shared/reference/`:
`compat-rules.md` (§1 Avro, §3 Iceberg, §4 Delta, §5 Spark) and `parquet-and-spark.md` (§2.4
Parquet->Spark types, §2.5 read-time conversions, §2.6 trap matrix).

`spark-merge` and `delta-merge` are merges rather than reads: "R reads W" means the merge of
R (left, the table) with W (right, the new data) succeeds (rules/merge.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from schemaguard.formats.notation import describe
from schemaguard.model import (
    BinaryType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    Field,
    FixedType,
    FloatType,
    Identity,
    Int96Type,
    IntType,
    JsonType,
    ListType,
    MapType,
    Schema,
    StringType,
    StructType,
    TimestampType,
    TimeType,
    UuidType,
)
from schemaguard.rules.identity import Pair, match_fields

ProfileName = Literal[
    "avro", "spark-read", "spark-merge", "delta-merge", "delta-read", "iceberg", "positional"
]
PROFILES: tuple[ProfileName, ...] = (
    "avro", "spark-read", "spark-merge", "delta-merge", "delta-read", "iceberg", "positional"
)
Severity = Literal["error", "warning", "info"]  # info: a rule that allowed a difference


@dataclass(frozen=True, slots=True)
class Options:
    type_widening: bool = False
    column_mapping: Literal["none", "name", "id"] = "none"
    iceberg_version: Literal[2, 3] = 2
    uniform: bool = False
    case_sensitive: bool = False
    identity: Identity | None = None  # None: the profile's own default


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of a profile's table: what it allows or forbids, and where that comes from."""

    id: str
    text: str
    source: str


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    code: str
    message: str
    rule: Rule
    severity: Severity = "error"


Test = Callable[[DataType, DataType, Options], bool]


@dataclass(frozen=True, slots=True)
class Promotion:
    """A type change W -> R the reader accepts (when `test(w, r, options)` holds); both types
    as the reader sees them (`Table.view`)."""

    rule: Rule
    test: Test
    warning: str | None = None  # accepted, but silently changes meaning: say so
    raw: bool = False  # test the writer's own type, not the reader's view of it (physical matters)


# ---------------------------------------------------------------------------------------------
# Type predicates the tables are written in


def _int_bits(t: DataType) -> int | None:
    return t.bits if isinstance(t, IntType) and t.signed else None


def _int32_read(w: DataType, r: DataType) -> bool:
    """Parquet INT32 integers (any sign) read as byte, short, int, bigint or double; UINT32 values
    do not fit an int, so Spark reads those only as bigint or double."""
    if not (isinstance(w, IntType) and w.bits <= 32):
        return False
    if w.bits == 32 and not w.signed:
        return r in (IntType(64), FloatType(64))
    return r in (IntType(8), IntType(16), IntType(32), IntType(64), FloatType(64))


def _decimal_widens(w: object, r: object) -> bool:
    """decimal(p,s) -> decimal(p',s') losing neither scale nor integer digits."""
    return (isinstance(w, DecimalType) and isinstance(r, DecimalType)
            and r.scale >= w.scale and r.precision - r.scale >= w.precision - w.scale)


def _same_scale_wider(w: object, r: object) -> bool:
    return (isinstance(w, DecimalType) and isinstance(r, DecimalType)
            and r.scale == w.scale and r.precision >= w.precision)


def _is(kind: type, *more: type) -> Callable[[DataType], bool]:
    kinds = (kind, *more)
    return lambda t: isinstance(t, kinds)


_is_timestamp = _is(TimestampType, Int96Type)


# ---------------------------------------------------------------------------------------------
# How each reader sees a type (before comparing): Spark's Parquet converter, Avro's base types


def spark_view(t: DataType) -> DataType | str:
    """The Spark type a Parquet column of this type becomes, or the error Spark raises.
    Source: parquet-and-spark.md §2.4 (ParquetToSparkSchemaConverter, Spark 4.x)."""
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
    if isinstance(t, TimeType):
        return "PARQUET_TYPE_ILLEGAL: TIME"
    if isinstance(t, TimestampType):
        if t.unit == "ns":
            return "PARQUET_TYPE_ILLEGAL: TIMESTAMP(NANOS)"
        return TimestampType("us", t.utc)
    if isinstance(t, Int96Type):
        return TimestampType("us", True)
    return t


def avro_view(t: DataType) -> DataType:
    """Avro's check ignores logical types: only the underlying Avro type counts
    (compat-rules.md §1, "Logical types ... ignored")."""
    if isinstance(t, IntType):
        return IntType(64) if t.bits == 64 else IntType(32)
    if isinstance(t, DecimalType):
        return BinaryType()
    if isinstance(t, DateType) or (isinstance(t, TimeType) and t.unit == "ms"):
        return IntType(32)
    if isinstance(t, TimeType | TimestampType):
        return IntType(64)
    if isinstance(t, UuidType | JsonType):
        return StringType()
    return t


# ---------------------------------------------------------------------------------------------
# The tables. Rule ids are stable: tests and reports cite them.

CR = "compat-rules.md"
PS = "parquet-and-spark.md"


def _r(id_: str, text: str, source: str) -> Rule:
    return Rule(id_, text, source)


AVRO_PROMOTIONS = (
    Promotion(_r("avro.promote.int-long", "int -> long, float, double", f"{CR} §1 primitive promotions"),
              lambda w, r, o: w == IntType(32) and r in (IntType(64), FloatType(32), FloatType(64))),
    Promotion(_r("avro.promote.long-float", "long -> float, double", f"{CR} §1 primitive promotions"),
              lambda w, r, o: w == IntType(64) and r in (FloatType(32), FloatType(64))),
    Promotion(_r("avro.promote.float-double", "float -> double", f"{CR} §1 primitive promotions"),
              lambda w, r, o: w == FloatType(32) and r == FloatType(64)),
    Promotion(_r("avro.promote.string-bytes", "string <-> bytes", f"{CR} §1 primitive promotions"),
              lambda w, r, o: {type(w), type(r)} == {StringType, BinaryType}),
)

SPARK_READ_PROMOTIONS = (
    Promotion(_r("spark-read.int32-family", "INT32 integers read as byte, short, int, bigint or double",
                 f"{PS} §2.5 (INT32 -> int, bigint, double, byte/short); {CR} §5 short<->int, int->long"),
              lambda w, r, o: _int32_read(w, r), raw=True),
    Promotion(_r("spark-read.int-decimal", "signed integers read as a decimal with enough integer "
                 "digits (>= 10 for INT32, >= 20 for INT64); not unsigned ones",
                 f"{CR} §5 ParquetTypeWideningSuite; {PS} §2.5 (UINT32 -> bigint only)"),
              lambda w, r, o: isinstance(r, DecimalType) and isinstance(w, IntType) and w.signed
              and r.precision - r.scale >= (20 if w.bits == 64 else 10), raw=True),
    Promotion(_r("spark-read.float-double", "FLOAT read as double", f"{PS} §2.5"),
              lambda w, r, o: w == FloatType(32) and r == FloatType(64)),
    Promotion(_r("spark-read.date-ntz", "DATE read as timestamp_ntz (not as timestamp)", f"{CR} §5"),
              lambda w, r, o: isinstance(w, DateType) and r == TimestampType("us", False)),
    Promotion(_r("spark-read.decimal-widen", "decimal read wider, losing neither scale nor integer "
                 "digits", f"{CR} §5; {PS} §2.5 (vectorized reader)"),
              lambda w, r, o: _decimal_widens(w, r)),
    Promotion(_r("spark-read.timestamp-relabel", "INT64/INT96 timestamps read as timestamp or "
                 "timestamp_ntz: the UTC flag is not checked", f"{PS} §2.5, §2.6 (ts UTC vs NTZ)"),
              lambda w, r, o: _is_timestamp(w) and isinstance(r, TimestampType),
              warning="values are silently re-labelled between instant and local time"),
    Promotion(_r("spark-read.binary-string", "BYTE_ARRAY read as string or binary", f"{PS} §2.5, "
                 "§2.6 (string vs binary)"),
              lambda w, r, o: isinstance(w, StringType | BinaryType)
              and isinstance(r, StringType | BinaryType),
              warning="bytes are silently re-labelled between string and binary"),
)

# Delta's type-widening table feature (compat-rules.md §4, PROTOCOL "Type Widening").
DELTA_WIDENING = (
    Promotion(_r("delta.widen.integer", "byte -> short -> int -> long", f"{CR} §4 type widening"),
              lambda w, r, o: (_int_bits(w) or 99) < (_int_bits(r) or 0)),
    Promotion(_r("delta.widen.float-double", "float -> double", f"{CR} §4 type widening"),
              lambda w, r, o: w == FloatType(32) and r == FloatType(64)),
    Promotion(_r("delta.widen.int-double", "byte/short/int -> double (not under UniForm)",
                 f"{CR} §4 type widening"),
              lambda w, r, o: not o.uniform and (_int_bits(w) or 99) <= 32 and r == FloatType(64)),
    Promotion(_r("delta.widen.date-ntz", "date -> timestamp_ntz (not under UniForm)", f"{CR} §4"),
              lambda w, r, o: not o.uniform and isinstance(w, DateType)
              and isinstance(r, TimestampType) and not r.utc),
    Promotion(_r("delta.widen.decimal", "decimal(p,s) -> decimal(p+k1, s+k2), k1 >= k2 >= 0 "
                 "(UniForm: scale must stay)", f"{CR} §4 type widening"),
              lambda w, r, o: _decimal_widens(w, r) and (not o.uniform or _same_scale_wider(w, r))),
    Promotion(_r("delta.widen.int-decimal", "byte/short/int -> decimal(10+k1,k2), long -> "
                 "decimal(20+k1,k2) (not under UniForm)", f"{CR} §4 type widening"),
              lambda w, r, o: not o.uniform and isinstance(r, DecimalType) and isinstance(w, IntType)
              and w.signed and r.precision - r.scale >= (20 if w.bits == 64 else 10)),
)

ICEBERG_PROMOTIONS = (
    Promotion(_r("iceberg.promote.int-long", "int -> long", f"{CR} §3 TypeUtil.isPromotionAllowed"),
              lambda w, r, o: w == IntType(32) and r == IntType(64)),
    Promotion(_r("iceberg.promote.float-double", "float -> double", f"{CR} §3"),
              lambda w, r, o: w == FloatType(32) and r == FloatType(64)),
    Promotion(_r("iceberg.promote.decimal", "decimal(P,S) -> decimal(P',S), P' >= P", f"{CR} §3"),
              lambda w, r, o: _same_scale_wider(w, r)),
    Promotion(_r("iceberg.v3.date-timestamp", "date -> timestamp without zone (spec v3+)",
                 f"{CR} §3 (spec v3; TypeUtil at HEAD does not implement it)"),
              lambda w, r, o: o.iceberg_version >= 3 and isinstance(w, DateType)
              and isinstance(r, TimestampType) and not r.utc),
)


@dataclass(frozen=True, slots=True)
class Table:
    """One profile's rules."""

    identity: Rule  # which identity, and why
    default_identity: Identity
    aliases: bool  # do the reader's aliases count?
    view: Callable[[DataType], DataType | str]  # how the reader sees a type first
    promotions: tuple[Promotion, ...]
    missing: Rule  # reader field absent in the data
    missing_ok: Callable[[Field, Options], bool]
    tighten: Rule  # data may hold nulls, reader says not null
    tighten_ok: bool
    enums: Rule  # how enum symbols are checked
    enum_symbols_checked: bool
    promotions_need_type_widening: bool = False  # Delta: only with the type-widening feature
    fixed_size_checked: bool = False  # Avro: fixed types must have the same size


def _identity(o: Options, default: Identity) -> Identity:
    return o.identity or default


TABLES: dict[str, Table] = {
    "avro": Table(
        identity=_r("avro.identity", "by name, plus the reader's aliases", f"{CR} §1 Identity"),
        default_identity="name", aliases=True, view=avro_view, promotions=AVRO_PROMOTIONS,
        missing=_r("avro.missing-default", "a reader field absent from the data needs a default",
                   f"{CR} §1 READER_FIELD_MISSING_DEFAULT_VALUE"),
        missing_ok=lambda f, o: f.has_default,
        tighten=_r("avro.tighten", "a nullable writer (union with null) cannot be read by a "
                   "non-null reader", f"{CR} §1 nullability tightened"), tighten_ok=False,
        enums=_r("avro.enum", "every writer symbol must be a reader symbol unless the reader enum "
                 "has a default", f"{CR} §1 MISSING_ENUM_SYMBOLS"), enum_symbols_checked=True,
        fixed_size_checked=True,
    ),
    "spark-read": Table(
        identity=_r("spark.identity", "by name, case-insensitive unless spark.sql.caseSensitive; by "
                    "field id when spark.sql.parquet.fieldId.read.enabled", f"{PS} §2.7; {CR} §5"),
        default_identity="name-ci", aliases=False, view=spark_view,
        promotions=SPARK_READ_PROMOTIONS,
        missing=_r("spark-read.missing", "a column absent from a file reads as null", f"{PS} §2.6 "
                   "(extra column in file B)"), missing_ok=lambda f, o: True,
        tighten=_r("spark-read.nullability", "Spark reads every Parquet column as nullable",
                   f"{PS} §2.5"), tighten_ok=True,
        enums=_r("spark-read.enum", "enums are strings to Spark: symbols are invisible", f"{CR} §5"),
        enum_symbols_checked=False,
    ),
    "delta-read": Table(
        identity=_r("delta.identity", "column mapping none: by name, case-insensitive; name/id: by "
                    "the column-mapping id", f"{CR} §4 Column mapping"),
        default_identity="name-ci", aliases=False, view=spark_view, promotions=DELTA_WIDENING,
        missing=_r("delta-read.missing", "an added column (nullable or not) reads as null in old "
                   "files", f"{CR} §4 isReadCompatible"), missing_ok=lambda f, o: True,
        tighten=_r("delta-read.tighten", "forbidTightenNullability: data that may hold nulls cannot "
                   "be read as not null", f"{CR} §4 isReadCompatible"), tighten_ok=False,
        enums=_r("delta-read.enum", "enums are strings to Delta", f"{CR} 'Where the references "
                 "disagree'"), enum_symbols_checked=False, promotions_need_type_widening=True,
    ),
    "iceberg": Table(
        identity=_r("iceberg.identity", "by field id; names are ignored", f"{CR} §3 Identity"),
        default_identity="id", aliases=False, view=lambda t: t, promotions=ICEBERG_PROMOTIONS,
        missing=_r("iceberg.missing", "an added optional field reads as null; a required one is "
                   "an error (v3: allowed with an initial-default)", f"{CR} §3"),
        missing_ok=lambda f, o: f.nullable or (o.iceberg_version >= 3 and f.has_default),
        tighten=_r("iceberg.tighten", "optional -> required is not readable", f"{CR} §3"),
        tighten_ok=False,
        enums=_r("iceberg.enum", "Iceberg has no enum type: enums are strings", f"{CR} 'Where the "
                 "references disagree'"), enum_symbols_checked=False,
    ),
    "positional": Table(
        identity=_r("positional.identity", "the i-th column of the data is the i-th column of the "
                    "reader, whatever its name", "DESIGN.md Reader profile (positional)"),
        default_identity="position", aliases=False, view=spark_view,
        promotions=SPARK_READ_PROMOTIONS,
        missing=_r("positional.missing", "a reader column past the data's last column reads as "
                   "null", "DESIGN.md Reader profile (positional)"), missing_ok=lambda f, o: True,
        tighten=_r("positional.nullability", "positional readers do not check nullability",
                   "DESIGN.md Reader profile (positional)"), tighten_ok=True,
        enums=_r("positional.enum", "enums are strings", "DESIGN.md"), enum_symbols_checked=False,
    ),
}

TYPE_MISMATCH = _r("type-mismatch", "no rule of this profile reads this type as that one",
                   "the profile's promotion table")
NOT_READABLE = _r("spark.illegal-type", "Spark cannot read this Parquet type at all", f"{PS} §2.4")
SHAPE = _r("shape-mismatch", "a struct, list, map or primitive cannot be read as another kind",
           f"{CR} §1 TYPE_MISMATCH; §3 'cannot be read as a struct/list/map'")
ENUM_DEFAULT = _r("avro.enum-default", "unknown symbols decode as the reader enum's default",
                  f"{CR} §1 enum with default")
FIXED_SIZE = _r("avro.fixed-size", "fixed sizes must be equal", f"{CR} §1 FIXED_SIZE_MISMATCH")
POSITION_NAME = _r("positional.name", "the data's column at this position has another name: a "
                   "positional reader binds it anyway", "DESIGN.md Reader profile (positional)")


def effective_options(profile: str, options: Options) -> Options:
    """Options that decide identity: Delta column mapping binds by id; Spark's case flag."""
    if options.identity is not None:
        return options
    if profile in ("delta-read", "delta-merge") and options.column_mapping != "none":
        return replace(options, identity="id")
    if profile in ("spark-read", "spark-merge", "delta-read", "delta-merge") and options.case_sensitive:
        return replace(options, identity="name")
    return options


# ---------------------------------------------------------------------------------------------
# The walk


def can_read(writer: Schema, reader: Schema, profile: str, options: Options | None = None) -> list[Problem]:
    """Every problem a reader with `reader` meets on data written with `writer` (empty: it reads)."""
    opts = effective_options(profile, options or Options())
    if profile in ("spark-merge", "delta-merge"):
        from schemaguard.rules.merge import merge_problems

        return merge_problems(reader, writer, profile, opts)
    if profile not in TABLES:
        raise ValueError(f"unknown profile {profile!r}; one of {', '.join(PROFILES)}")
    table = TABLES[profile]
    return _struct(writer.fields, reader.fields, "", table, opts)


def _struct(w: tuple[Field, ...], r: tuple[Field, ...], path: str, table: Table, o: Options) -> list[Problem]:
    identity = _identity(o, table.default_identity)
    problems: list[Problem] = []
    pairs = (_avro_pairs(w, r) if table.aliases and identity == "name"
             else match_fields(w, r, identity, aliases=table.aliases))
    for pair in pairs:
        wf, rf = pair.writer, pair.reader
        if rf is None:
            continue  # data the reader does not ask for is skipped by every reader here
        here = f"{path}.{rf.name}" if path else rf.name
        if wf is None:
            if not table.missing_ok(rf, o):
                problems.append(Problem(here, "READER_FIELD_MISSING", f"`{here}` is not in the data "
                                        f"and {table.missing.text}", table.missing))
            continue
        if identity == "position" and wf.name != rf.name:
            problems.append(Problem(here, "POSITION_NAME_MISMATCH", f"the data's column at this "
                                    f"position is `{wf.name}`, read as `{rf.name}`", POSITION_NAME,
                                    "warning"))
        problems += _nullability(wf.nullable, rf.nullable, here, "field", table)
        problems += _type(wf.type, rf.type, here, table, o)
    return problems


def _avro_pairs(w: tuple[Field, ...], r: tuple[Field, ...]) -> list[Pair]:
    """Avro's `lookupWriterField`: each reader field on its own takes the writer field with its name,
    else the one named by its first alias (in the reader's order) that names one. A writer field may
    feed several reader fields; unmatched writer fields are skipped (compat-rules.md §1 Identity;
    SchemaCompatibility.lookupWriterField, avro-python compatibility.lookup_writer_field)."""
    by_name = {f.name: f for f in w}
    pairs: list[Pair] = []
    for rf in r:
        if rf.name in by_name:
            pairs.append(Pair(by_name[rf.name], rf, "name"))
            continue
        hit = next((by_name[a] for a in rf.aliases if a in by_name), None)
        pairs.append(Pair(hit, rf, "alias" if hit is not None else None))
    return pairs


def _nullability(w_null: bool, r_null: bool, path: str, what: str, table: Table) -> list[Problem]:
    if w_null and not r_null and not table.tighten_ok:
        return [Problem(path, "NULLABILITY_TIGHTENED", f"{what} `{path}` may hold nulls in the data "
                        f"but the reader requires a value: {table.tighten.text}", table.tighten)]
    return []


def _type(w: DataType, r: DataType, path: str, table: Table, o: Options) -> list[Problem]:
    if isinstance(w, StructType) and isinstance(r, StructType):
        return _struct(w.fields, r.fields, path, table, o)
    if isinstance(w, ListType) and isinstance(r, ListType):
        elem = path + "[]"
        return (_nullability(w.element_nullable, r.element_nullable, elem, "list element", table)
                + _type(w.element, r.element, elem, table, o))
    if isinstance(w, MapType) and isinstance(r, MapType):
        return (_type(w.key, r.key, path + "{key}", table, o)
                + _nullability(w.value_nullable, r.value_nullable, path + "{value}", "map value", table)
                + _type(w.value, r.value, path + "{value}", table, o))
    nested = (StructType, ListType, MapType)
    if isinstance(w, nested) or isinstance(r, nested):
        return [Problem(path, "TYPE_MISMATCH", f"`{path}` is {describe(w)} in the data and "
                        f"{describe(r)} to the reader: {SHAPE.text}", SHAPE)]
    if isinstance(w, EnumType) and isinstance(r, EnumType) and table.enum_symbols_checked:
        return _enum(w, r, path, table)
    return _primitive(w, r, path, table, o)


def _enum(w: EnumType, r: EnumType, path: str, table: Table) -> list[Problem]:
    missing = [s for s in w.symbols if s not in r.symbols]
    if not missing:
        return []
    if r.default is not None:
        return [Problem(path, "ENUM_DEFAULT_USED", f"`{path}`: {missing} decode as "
                        f"{r.default!r}", ENUM_DEFAULT, "info")]
    return [Problem(path, "MISSING_ENUM_SYMBOLS", f"`{path}`: the data may hold {missing}, which "
                    f"the reader's enum lacks and it has no default: {table.enums.text}", table.enums)]


def _primitive(w: DataType, r: DataType, path: str, table: Table, o: Options) -> list[Problem]:
    wv, rv = table.view(w), table.view(r)
    if isinstance(wv, str):
        return [Problem(path, "UNREADABLE_TYPE", f"`{path}` is {describe(w)} in the data: {wv}",
                        NOT_READABLE)]
    if isinstance(rv, str):
        return [Problem(path, "UNREADABLE_TYPE", f"`{path}` is declared {describe(r)}: {rv}",
                        NOT_READABLE)]
    if table.fixed_size_checked and isinstance(wv, FixedType) and isinstance(rv, FixedType) and wv != rv:
        return [Problem(path, "FIXED_SIZE_MISMATCH", f"`{path}`: fixed({wv.length}) read as "
                        f"fixed({rv.length})", FIXED_SIZE)]
    if wv == rv:
        return []
    promotions = table.promotions
    if table.promotions_need_type_widening and not o.type_widening:
        promotions = ()
    for p in promotions:
        if p.test(w if p.raw else wv, rv, o):
            if p.warning:
                return [Problem(path, "SILENT_CHANGE", f"`{path}` {describe(w)} read as "
                                f"{describe(r)}: {p.warning}", p.rule, "warning")]
            return [Problem(path, "PROMOTED", f"`{path}` {describe(w)} read as {describe(r)}: "
                            f"{p.rule.text}", p.rule, "info")]
    if isinstance(w, EnumType) and isinstance(r, EnumType):
        return []  # symbols are invisible to this reader (enums are strings)
    return [Problem(path, "TYPE_MISMATCH", f"`{path}` is {describe(w)} in the data and "
                    f"{describe(r)} to the reader: {TYPE_MISMATCH.text}", TYPE_MISMATCH)]


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]
