"""Type promotions: the type changes each reader accepts, one cited table per reader.

Each row is a `Promotion`: the rule it comes from (`docs/reference/compat-rules.md` §1 Avro, §3
Iceberg, §4 Delta, §5 Spark; `docs/reference/parquet-and-spark.md` §2.5 read-time conversions) and a
test on the writer's and the reader's type. The read profiles (rules/read.py) and Delta's merge
(rules/merge.py) look their promotions up here. Spark's row-by-row reader (vectorized reader off)
has its own table, `SPARK_ROW_READ`, which also names the reads it fails; Delta's MERGE INTO has
`DELTA_MERGE_INTO_CASTS`, what its writes make of the source's values (`implicit_cast` is the
schema side of it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from schemaguard.base import CR, PS, Options, Rule
from schemaguard.model import (
    INTERVAL_FIELDS,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    Int96Type,
    IntervalType,
    IntType,
    JsonType,
    StringType,
    TimestampType,
    TimeType,
    UuidType,
)

Test = Callable[[DataType, DataType, Options], bool]


@dataclass(frozen=True, slots=True)
class Promotion:
    """A type change W -> R the reader accepts (when `test(w, r, options)` holds); both types
    as the reader sees them (`Table.view`). A `refused` row names a change the reader fails on."""

    rule: Rule
    test: Test
    raw: bool = False  # test the writer's own type, not the reader's view of it (physical matters)
    quiet: bool = False  # the reader reads it, and values change meaning: a quiet break
    refused: bool = False  # the reader fails: a loud break (SPARK_ROW_READ names why)


# ---------------------------------------------------------------------------------------------
# Type predicates the tables are written in


def _int_bits(t: DataType) -> int | None:
    return t.bits if isinstance(t, IntType) and t.signed else None


def _int_range(t: DataType) -> tuple[int, int] | None:
    """The values an integer column may hold: an integer type's range, or a scale-0 decimal's
    when it is stored on INT32 or INT64 (the only decimals Spark reads as integers)."""
    if isinstance(t, IntType):
        return (-(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1) if t.signed else (0, 2 ** t.bits - 1)
    if isinstance(t, DecimalType) and t.scale == 0 and t.physical in ("INT32", "INT64"):
        return (-(10 ** t.precision - 1), 10 ** t.precision - 1)
    return None


def _stored_on_int32(t: DataType) -> bool:
    return (isinstance(t, IntType) and t.bits <= 32) or (isinstance(t, DecimalType) and t.physical == "INT32")


def _int_read(w: DataType, r: DataType) -> bool:
    """Integers (and scale-0 decimals) stored on INT32 read as byte, short, int or bigint, those on
    INT64 as bigint, when the reader's range holds every value the writer's type allows; INT32 also
    as double, except UINT32 (read as a signed int, its large values turn negative)."""
    values = _int_range(w)
    if values is None:
        return False
    if r == FloatType(64):
        return _stored_on_int32(w) and w != IntType(32, False)
    if not (isinstance(r, IntType) and r.signed and (r.bits == 64 or _stored_on_int32(w))):
        return False
    return bool(-(2 ** (r.bits - 1)) <= values[0] and values[1] <= 2 ** (r.bits - 1) - 1)


def _int_wraps(w: DataType, r: DataType) -> bool:
    """INT32 read as a narrower integer (or UINT32 as double): Spark reads it, and values outside
    the reader's range wrap around."""
    if not (_stored_on_int32(w) and _int_range(w) is not None) or _int_read(w, r):
        return False
    if w == IntType(32, False):  # Spark refuses UINT32 as byte, short or int (UnsupportedOperation)
        return r == FloatType(64)
    return r in (IntType(8), IntType(16), IntType(32), FloatType(64))


def _physical(t: DataType) -> str | None:
    """The Parquet physical type a column of this type is stored on (a decimal: as its footer
    says, None when unknown)."""
    if isinstance(t, IntType):
        return "INT32" if t.bits <= 32 else "INT64"
    if isinstance(t, DecimalType):
        return t.physical
    if isinstance(t, TimeType):
        return "INT32" if t.unit == "ms" else "INT64"
    if isinstance(t, IntervalType):  # Spark writes a count of months or of microseconds
        return "INT32" if t.months else "INT64"
    if isinstance(t, FloatType):
        return {16: "FIXED_LEN_BYTE_ARRAY", 32: "FLOAT", 64: "DOUBLE"}.get(t.bits)
    if isinstance(t, StringType | BinaryType | JsonType | EnumType | GeometryType | GeographyType):
        return "BYTE_ARRAY"
    return {DateType: "INT32", TimestampType: "INT64", BooleanType: "BOOLEAN", Int96Type: "INT96",
            FixedType: "FIXED_LEN_BYTE_ARRAY", UuidType: "FIXED_LEN_BYTE_ARRAY"}.get(type(t))


# What Spark's vectorized reader reads from each physical type when a schema declares it, whatever
# the column's logical type: the stored numbers or bytes, re-interpreted (tests/truth/spark_read.csv).
_REINTERPRETED: dict[str, tuple[DataType, ...]] = {
    "INT32": (IntType(8), IntType(16), IntType(32), IntType(64), FloatType(64), DateType()),
    "INT64": (IntType(64),),
    "FIXED_LEN_BYTE_ARRAY": (BinaryType(),),
}


def _reinterpreted(w: DataType, r: DataType) -> bool:
    if isinstance(w, IntType) and not w.signed and w.bits >= 32:
        return False  # Spark refuses UINT32/UINT64 as what the rows above do not read (UnsupportedOperation)
    return r in _REINTERPRETED.get(_physical(w) or "", ())


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


def _same_interval_kind(w: DataType, r: DataType) -> bool:
    return isinstance(w, IntervalType) and isinstance(r, IntervalType) and w.months == r.months


def _coarser_end(w: DataType, r: DataType) -> bool:
    """Intervals of one kind, the reader's finest field coarser than the writer's (a year read where
    months were written)."""
    return (isinstance(w, IntervalType) and isinstance(r, IntervalType) and w.months == r.months
            and INTERVAL_FIELDS.index(r.end) < INTERVAL_FIELDS.index(w.end))


def _interval_relabel(w: DataType, r: DataType, o: Options) -> bool:
    """A column on INT32 read as a year-month interval, on INT64 as a day-time one; or an interval
    read as any type Spark reads the integer it is stored as (`_storage`) as."""
    if isinstance(r, IntervalType):
        return not isinstance(w, IntervalType) and _physical(w) == _physical(r)
    if not isinstance(w, IntervalType):
        return False
    storage = _storage(w)
    return any(p.test(storage, r, o) for p in SPARK_READ_PROMOTIONS if not p.refused)


def _storage(t: IntervalType) -> IntType:
    """The integer an interval is stored as: INT32 months, INT64 microseconds."""
    return IntType(32 if t.months else 64)


# ---------------------------------------------------------------------------------------------
# The tables. Rule ids are stable: tests and reports cite them. Avro's rules are rules/avro.py.


SPARK_READ_PROMOTIONS = (
    Promotion(Rule("spark-read.int32-family", "integers (and scale-0 decimals) on INT32 read as byte, "
                   "short, int, bigint or double, those on INT64 as bigint, when every value fits",
                   f"{PS} §2.5 (INT32 -> int, bigint, double, byte/short); {CR} §5 short<->int, "
                   "int->long; tests/truth/spark_read.csv (a narrower read wraps)"),
              lambda w, r, o: _int_read(w, r), raw=True),
    Promotion(Rule("spark-read.int-wraps", "INT32 read as a narrower integer, or UINT32 as double: "
                   "Spark reads it, and values outside the reader's range come back wrapped",
                   f"{PS} §2.5 (INT32 -> byte/short); tests/truth/spark_read.csv (255 read as -1)"),
              lambda w, r, o: _int_wraps(w, r), raw=True, quiet=True),
    Promotion(Rule("spark-read.int-decimal", "signed integers read as a decimal with enough integer "
                   "digits (>= 10 for INT32, >= 20 for INT64); not unsigned ones",
                   f"{CR} §5 ParquetTypeWideningSuite; {PS} §2.5 (UINT32 -> bigint only)"),
              lambda w, r, o: isinstance(r, DecimalType) and isinstance(w, IntType) and w.signed
              and r.precision - r.scale >= (20 if w.bits == 64 else 10), raw=True),
    Promotion(Rule("spark-read.float-double", "FLOAT read as double", f"{PS} §2.5"),
              lambda w, r, o: w == FloatType(32) and r == FloatType(64)),
    Promotion(Rule("spark-read.date-ntz", "DATE read as timestamp_ntz (not as timestamp)", f"{CR} §5"),
              lambda w, r, o: isinstance(w, DateType) and r == TimestampType("us", False)),
    # the writer's own type: a UINT64 is decimal(20,0) to Spark, but never read as another decimal
    Promotion(Rule("spark-read.decimal-widen", "decimal read wider, losing neither scale nor integer "
                   "digits", f"{CR} §5; {PS} §2.5 (vectorized reader); tests/truth/spark_read.csv"),
              lambda w, r, o: _decimal_widens(w, r), raw=True),
    Promotion(Rule("spark-read.timestamp-relabel", "INT64/INT96 timestamps read as timestamp or "
                   "timestamp_ntz: the UTC flag is not checked, so values are re-labelled between an "
                   "instant and a local wall time", f"{PS} §2.5, §2.6 (ts UTC vs NTZ)"),
              lambda w, r, o: _is_timestamp(w) and isinstance(r, TimestampType), quiet=True),
    Promotion(Rule("spark-read.string-binary", "UTF-8 BYTE_ARRAY (string, JSON, enum) read as binary: "
                   "Spark reads it, and text becomes bytes", f"{PS} §2.5, §2.6 (string vs binary)"),
              # the writer's own type: a FIXED_LEN_BYTE_ARRAY is binary to Spark, but never a string
              # (FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH, found by the read oracle)
              lambda w, r, o: isinstance(w, StringType | JsonType | EnumType) and isinstance(r, BinaryType),
              raw=True, quiet=True),
    Promotion(Rule("spark-read.binary-as-string", "binary BYTE_ARRAY read as string: Spark reads it, "
                   "and bytes that are not UTF-8 come back changed", f"{PS} §2.6 (string vs binary); "
                   "tests/truth/spark_read.csv"),
              lambda w, r, o: isinstance(w, BinaryType) and isinstance(r, StringType), raw=True, quiet=True),
    Promotion(Rule("spark-read.declared-storage", "a type Spark cannot infer reads as its storage when "
                   "declared: a UUID as binary, TIMESTAMP(NANOS) and TIME(NANOS) as bigint (raw nanoseconds)",
                   f"{PS} §2.4 (types Spark cannot infer); tests/truth/spark_read.csv"),
              lambda w, r, o: (isinstance(w, UuidType) and r == BinaryType())
              or (isinstance(w, TimestampType | TimeType) and w.unit == "ns" and r == IntType(64)), raw=True),
    Promotion(Rule("spark-read.interval-fields", "an ANSI interval read as one of the same kind (year-month "
                   "or day-time) whose finest field is coarser: Spark reads the same count of months or "
                   "microseconds, and shows and casts it without the finer part (14 months as INTERVAL '1' "
                   "YEAR)", f"{PS} §2.5 (the vectorized reader by physical type); tests/test_intervals.py"),
              lambda w, r, o: _coarser_end(w, r), quiet=True),
    Promotion(Rule("spark-read.interval-kind", "an ANSI interval read as one of the same kind with fields "
                   "as fine: the same count of months or microseconds",
                   f"{PS} §2.5; tests/test_intervals.py"),
              lambda w, r, o: _same_interval_kind(w, r) and not _coarser_end(w, r)),
    Promotion(Rule("spark-read.interval-relabel", "a column on INT32 read as a year-month interval, on "
                   "INT64 as a day-time one, or an interval read as a number its storage reads as (a "
                   "year-month interval as int, bigint, double or a decimal): Spark reads the stored count "
                   "under the other meaning (months, microseconds)",
                   f"{PS} §2.4 (Spark writes intervals as plain INT32 and INT64), §2.5; "
                   "tests/test_intervals.py"),
              _interval_relabel, raw=True, quiet=True),
    # last: every row above reads these pairs as they should be read
    Promotion(Rule("spark-read.reinterpreted", "a column read with a declared type of another logical type "
                   "on the same physical type (an int as a date, a decimal's unscaled number as an int, a "
                   "timestamp as bigint, fixed bytes as binary): Spark reads the stored numbers or bytes as "
                   "the declared type", f"{PS} §2.5 (the vectorized reader by physical type); "
                   "tests/truth/spark_read.csv"),
              lambda w, r, o: _reinterpreted(w, r), raw=True, quiet=True),
)

# Spark's row-by-row reader (spark.sql.parquet.enableVectorizedReader=false): Spark 4.1's
# ParquetRowConverter.newConverter picks one converter per declared Catalyst type (checking the
# file's Parquet type only for a few: INT32 widened to bigint/double, FLOAT to double, decimals,
# timestamps), and parquet-mr hands it each value through the setter of the column's physical type.
# A value its converter has no setter for reaches a row slot of another type and fails; a decimal
# is rebuilt at the file's precision and fitted to the declared one as the row is written.
_ROWS = "Spark 4.1 ParquetRowConverter.newConverter"
_ROWS_TRUTH = "tests/truth/spark_read_rows.csv"
_BYTES = ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY", "INT96")  # handed over as bytes (addBinary)

# The physical types whose values the converter for each declared type stores (decimals and
# timestamps have rows of their own below).
_ROW_TAKES: dict[DataType, tuple[str, ...]] = {
    BooleanType(): ("BOOLEAN",),
    IntType(8): ("INT32",), IntType(16): ("INT32",), IntType(32): ("INT32",), DateType(): ("INT32",),
    IntType(64): ("INT32", "INT64"),  # an INT32 widened (setLong), a UINT32 as unsigned
    FloatType(32): ("FLOAT",),
    FloatType(64): ("INT32", "FLOAT", "DOUBLE"),  # INT32 and FLOAT widened (setDouble)
    StringType(): _BYTES, BinaryType(): _BYTES,
}


def _row_setter_mismatch(w: DataType, r: DataType) -> bool:
    physical = _physical(w)
    takes = (_physical(r),) if isinstance(r, IntervalType) else _ROW_TAKES.get(r)  # an interval: its storage
    return takes is not None and physical is not None and physical not in takes


def _row_timestamp_source(w: DataType, r: TimestampType) -> bool:
    """The columns a timestamp (or, `utc` off, timestamp_ntz) converter exists for."""
    return (isinstance(w, Int96Type) or (isinstance(w, TimestampType) and w.unit != "ns")
            or (not r.utc and isinstance(w, DateType)))


def _int_digits(t: DataType) -> int | None:
    """The integer digits every value of an integer column needs as the row reader reads it into
    a decimal: TIMESTAMP/TIME(NANOS) as their raw INT64 count (a TIME's within one day); None for
    UINT32 (read as signed)."""
    values = _int_range(t) if isinstance(t, IntType) and t != IntType(32, False) else None
    if isinstance(t, TimestampType) and t.unit == "ns":
        values = _int_range(IntType(64))
    if isinstance(t, TimeType) and t.unit == "ns":
        values = (0, 86_400 * 10 ** 9 - 1)
    return None if values is None else len(str(max(-values[0], values[1])))


def _as_vectorized(*ids: str) -> tuple[Promotion, ...]:
    """Rows of SPARK_READ_PROMOTIONS the row reader answers alike (same id), citing its table too."""
    rows = {p.rule.id: p for p in SPARK_READ_PROMOTIONS}
    alike = f"; the row reader alike: {_ROWS_TRUTH}"
    return tuple(replace(p, rule=replace(p.rule, source=p.rule.source + alike))
                 for p in (rows[f"spark-read.{i}"] for i in ids))


SPARK_ROW_READ = (
    # refused: no converter for the pair, or one that cannot store the column's values
    Promotion(Rule("spark-read.rows.decimal-physical", "a BOOLEAN, FLOAT, DOUBLE or INT96 column read as "
                   "a decimal: the row reader has no decimal converter for it (PARQUET_CONVERSION_FAILURE."
                   "DECIMAL)", f"{PS} §2.5; {_ROWS} (cannotCreateParquetConverterForDecimalTypeError); "
                   f"{_ROWS_TRUTH}"),
              lambda w, r, o: isinstance(r, DecimalType)
              and _physical(w) in ("BOOLEAN", "FLOAT", "DOUBLE", "INT96"), raw=True, refused=True),
    Promotion(Rule("spark-read.rows.decimal-unannotated", "bytes without a DECIMAL annotation (string, "
                   "binary, fixed, UUID, FLOAT16) read as a decimal: the row reader refuses "
                   "(PARQUET_CONVERSION_FAILURE.WITHOUT_DECIMAL_METADATA)",
                   f"{PS} §2.5; {_ROWS} (cannotCreateParquetConverterForTypeError); {_ROWS_TRUTH}"),
              lambda w, r, o: isinstance(r, DecimalType) and not isinstance(w, DecimalType)
              and _physical(w) in _BYTES, raw=True, refused=True),
    Promotion(Rule("spark-read.rows.no-converter", "read as timestamp, a column that is not a "
                   "TIMESTAMP(MILLIS or MICROS) or INT96 (timestamp_ntz: nor a DATE): the row reader has no "
                   "converter for it (PARQUET_CONVERSION_FAILURE.UNSUPPORTED); TIMESTAMP(NANOS) included",
                   f"{PS} §2.5; {_ROWS} (cannotCreateParquetConverterForDataTypeError); {_ROWS_TRUTH}"),
              lambda w, r, o: isinstance(r, TimestampType) and not _row_timestamp_source(w, r),
              raw=True, refused=True),
    Promotion(Rule("spark-read.rows.setter-mismatch", "the converter of the declared type takes no value "
                   "of the column's physical type (boolean: BOOLEAN; byte, short, int, date: INT32; bigint: "
                   "INT32, INT64; float: FLOAT; double: INT32, FLOAT, DOUBLE; string, binary: bytes): the "
                   "value reaches a row slot of another type (ClassCastException), or a string converter "
                   "cannot decode a numeric dictionary (UnsupportedOperationException)",
                   f"{PS} §2.5; {_ROWS} (ParquetPrimitiveConverter, ParquetStringConverter); {_ROWS_TRUTH}"),
              lambda w, r, o: _row_setter_mismatch(w, r), raw=True, refused=True),
    # read exactly
    *_as_vectorized("int32-family", "float-double", "date-ntz", "decimal-widen", "declared-storage",
                    "interval-kind"),
    Promotion(Rule("spark-read.rows.int-decimal", "an integer column read as a decimal with integer "
                   "digits for every value (int8 and uint8: 3, int16 and uint16: 5, int32: 10, int64: 19, "
                   "uint64: 20; TIMESTAMP(NANOS) as its raw count: 19, TIME(NANOS): 14): the row reader "
                   "reads it, where the vectorized reader asks for 10 or 20 digits and refuses unsigned ones",
                   f"{PS} §2.5; {_ROWS} (an INT32/INT64 as decimal(10,0)/(20,0), a UINT64 as its "
                   f"unsigned value); {_ROWS_TRUTH}"),
              lambda w, r, o: isinstance(r, DecimalType) and (_int_digits(w) or 99) <= r.precision - r.scale,
              raw=True),
    # read, with values changed
    *_as_vectorized("timestamp-relabel", "string-binary", "binary-as-string", "int-wraps", "interval-fields",
                    "reinterpreted"),
    Promotion(Rule("spark-read.rows.decimal-overflow", "a decimal or integer column read as a decimal "
                   "without the scale or integer digits for every value: the row reader reads it (the "
                   "vectorized reader refuses), and a value that does not fit reads as NULL, one with more "
                   "scale is rounded", f"{PS} §2.5 (99999.99 as decimal(5,2) is NULL); {_ROWS} (the file's "
                   "precision), UnsafeRowWriter.write (Decimal.changePrecision, else null); "
                   f"{_ROWS_TRUTH}"),
              lambda w, r, o: isinstance(r, DecimalType) and (isinstance(w, DecimalType)
                                                               or _int_digits(w) is not None),
              raw=True, quiet=True),
    # last: what the converter took and no row above reads as it was meant
    Promotion(Rule("spark-read.rows.reinterpreted", "read through the converter of another logical type: "
                   "the stored number or bytes are the value (a date, time or timestamp as a decimal, UINT32 "
                   "as a signed int, UINT64 as bigint, INT96, UUID, fixed or decimal bytes as a string or "
                   "binary); the vectorized reader refuses most of these", f"{PS} §2.5; {_ROWS} "
                   "(ParquetPrimitiveConverter, ParquetStringConverter, the decimal converters); "
                   f"{_ROWS_TRUTH}"),
              lambda w, r, o: _physical(w) is not None, raw=True, quiet=True),
)

# Delta's type-widening table feature (docs/reference/compat-rules.md §4, PROTOCOL "Type Widening").
DELTA_WIDENING = (
    Promotion(Rule("delta.widen.integer", "byte -> short -> int -> long", f"{CR} §4 type widening"),
              lambda w, r, o: (_int_bits(w) or 99) < (_int_bits(r) or 0)),
    Promotion(Rule("delta.widen.float-double", "float -> double", f"{CR} §4 type widening"),
              lambda w, r, o: w == FloatType(32) and r == FloatType(64)),
    Promotion(Rule("delta.widen.int-double", "byte/short/int -> double (not under UniForm)",
                   f"{CR} §4 type widening"),
              lambda w, r, o: not o.uniform and (_int_bits(w) or 99) <= 32 and r == FloatType(64)),
    Promotion(Rule("delta.widen.date-ntz", "date -> timestamp_ntz (not under UniForm)", f"{CR} §4"),
              lambda w, r, o: not o.uniform and isinstance(w, DateType)
              and isinstance(r, TimestampType) and not r.utc),
    Promotion(Rule("delta.widen.decimal", "decimal(p,s) -> decimal(p+k1, s+k2), k1 >= k2 >= 0 "
                   "(UniForm: scale must stay)", f"{CR} §4 type widening"),
              lambda w, r, o: _decimal_widens(w, r) and (not o.uniform or _same_scale_wider(w, r))),
    Promotion(Rule("delta.widen.int-decimal", "byte/short/int -> decimal(10+k1,k2), long -> "
                   "decimal(20+k1,k2) (not under UniForm)", f"{CR} §4 type widening"),
              lambda w, r, o: not o.uniform and isinstance(r, DecimalType) and isinstance(w, IntType)
              and w.signed and r.precision - r.scale >= (20 if w.bits == 64 else 10)),
)

ICEBERG_PROMOTIONS = (
    Promotion(Rule("iceberg.promote.int-long", "int -> long", f"{CR} §3 TypeUtil.isPromotionAllowed"),
              lambda w, r, o: w == IntType(32) and r == IntType(64)),
    Promotion(Rule("iceberg.promote.float-double", "float -> double", f"{CR} §3"),
              lambda w, r, o: w == FloatType(32) and r == FloatType(64)),
    Promotion(Rule("iceberg.promote.decimal", "decimal(P,S) -> decimal(P',S), P' >= P", f"{CR} §3"),
              lambda w, r, o: _same_scale_wider(w, r)),
    Promotion(Rule("iceberg.v3.date-timestamp", "date -> timestamp without zone (spec v3+)",
                   f"{CR} §3 (spec v3; TypeUtil at HEAD does not implement it)"),
              lambda w, r, o: o.iceberg_version >= 3 and isinstance(w, DateType)
              and isinstance(r, TimestampType) and not r.utc),
)

# ---------------------------------------------------------------------------------------------
# MERGE INTO with schema evolution (docs/reference/compat-rules.md §4 MERGE INTO): the source's
# values are cast to the table's column type under spark.sql.storeAssignmentPolicy (ANSI, the default)


def implicit_cast(w: DataType, r: DataType) -> bool:
    """Spark's implicit cast of a value of type `w` into `r` (`TypeCoercion.implicitCast`), which
    MERGE INTO's schema evolution accepts in place of a type change (`mergeSchemas(...,
    allowImplicitConversions = true)`), on two different types as Spark sees them: any number to any
    number, anything atomic to string, string to a number, binary, date or timestamp, a date to either
    timestamp, a timestamp to a date or the other timestamp; boolean and binary to string only."""
    atomic = (IntType, FloatType, DecimalType, StringType, BinaryType, BooleanType, DateType, TimestampType)
    if not (isinstance(w, atomic) and isinstance(r, atomic)):
        return False
    if (_number(w) and _number(r)) or isinstance(r, StringType):
        return True
    if isinstance(w, StringType):
        return not isinstance(r, BooleanType)
    if isinstance(w, DateType):
        return isinstance(r, TimestampType)
    return isinstance(w, TimestampType) and isinstance(r, DateType | TimestampType)


DELTA_MERGE_INTO_NO_CAST = Rule(
    "delta-merge-into.no-cast", "MERGE INTO's schema evolution keeps the table's type where Spark casts the "
    "source's type to it implicitly; there is no such cast here (boolean or binary to anything but string, "
    "a number to or from a date, timestamp, boolean or binary, string to boolean): "
    "DELTA_FAILED_TO_MERGE_FIELDS", f"{CR} §4 MERGE INTO; delta-spark 4.4 ResolveDeltaMergeInto, "
    "SchemaMergingUtils.mergeSchemas (allowImplicitConversions); Spark 4.1 TypeCoercion.implicitCast")


def _number(t: DataType) -> bool:
    return isinstance(t, IntType | FloatType | DecimalType)


_SIGNIFICAND = {32: 24, 64: 53}  # bits of a float's and a double's significand: integers up to 2**m are exact


def _largest(t: DataType, unscaled: bool = False) -> int:
    """The largest magnitude an integer or decimal column holds: of its integer part (a cast to an
    integer truncates), or `unscaled`, of its digits (what a float must hold to be exact)."""
    if isinstance(t, IntType):
        low, high = _int_range(t) or (0, 0)
        return max(-low, high)
    if isinstance(t, DecimalType):
        return int(10 ** (t.precision if unscaled else t.precision - t.scale)) - 1
    return 0


def _overflows(w: DataType, r: DataType) -> bool:
    """Some value of the source's number type (its own: an unsigned integer's range) does not fit the
    table's, after the cast rounds it: ANSI's cast fails on it. A float's largest values, NaN and
    infinities fit no integer or decimal; no number overflows a float or a double (double to float
    goes to infinity)."""
    if isinstance(r, FloatType):
        return False
    if isinstance(w, FloatType):
        return True
    if isinstance(r, IntType):
        return _largest(w) > (_int_range(r) or (0, 0))[1]
    if not isinstance(r, DecimalType):
        return False
    room = r.precision - r.scale  # integer digits
    if isinstance(w, DecimalType):  # rounding to fewer places carries 99.99 up to 100
        digits = w.precision - w.scale
        return digits > room or (w.scale > r.scale and digits == room)
    return len(str(_largest(w))) > room


def _rounds(w: DataType, r: DataType) -> bool:
    """Some value of the source's number type comes back another number without an error: a fraction
    truncated or rounded away, digits a float's or double's significand cannot hold, a double out of
    float's range."""
    if isinstance(w, FloatType):
        return not isinstance(r, FloatType) or w.bits > r.bits
    scale = w.scale if isinstance(w, DecimalType) else 0
    if isinstance(r, FloatType):
        return scale > 0 or _largest(w, unscaled=True) > 2 ** _SIGNIFICAND[r.bits]
    return scale > (r.scale if isinstance(r, DecimalType) else 0)


def _text_into(r: DataType) -> bool:
    """A type text is parsed into (a malformed text fails the cast)."""
    return _number(r) or isinstance(r, DateType | TimestampType)


_CAST = "delta-spark 4.4 UpdateExpressionsSupport.cast (ANSI: an ANSI Cast, CheckOverflowInTableWrite)"
_MERGE_INTO = "tests/test_oracle_delta_merge_into.py"

DELTA_MERGE_INTO_CASTS = (
    Promotion(Rule("delta-merge-into.overflow", "a number cast to a type that cannot hold every value of it "
                   "(a narrower integer, fewer integer digits, fewer decimal places when the largest value "
                   "rounds up, a float or double into an integer or decimal): the first value that does not "
                   "fit fails the MERGE (DELTA_CAST_OVERFLOW_IN_TABLE_WRITE), NaN and infinities too",
                   f"{CR} §4 MERGE INTO; {_CAST}; {_MERGE_INTO}"),
              lambda w, r, o: _number(w) and _number(r) and _overflows(w, r), raw=True, refused=True),
    Promotion(Rule("delta-merge-into.invalid-text", "text cast to a number, date or timestamp: the first "
                   "text that does not parse as one fails the MERGE (CAST_INVALID_INPUT)",
                   f"{CR} §4 MERGE INTO; {_CAST}; {_MERGE_INTO}"),
              lambda w, r, o: isinstance(w, StringType) and _text_into(r), refused=True),
    Promotion(Rule("delta-merge-into.rounded", "a number cast to a type that holds it only rounded: decimal "
                   "places beyond the table's rounded half up, fractions of an integer column truncated, "
                   "digits beyond a float's or double's significand rounded, a double out of float's range "
                   "written as infinity", f"{CR} §4 MERGE INTO; {_CAST}; {_MERGE_INTO}"),
              lambda w, r, o: _number(w) and _number(r) and _rounds(w, r), raw=True, quiet=True),
    Promotion(Rule("delta-merge-into.exact", "a number cast to a type that holds every value of it: a wider "
                   "integer, a decimal with the integer digits and places, float to double, integers within "
                   "a float's or double's significand", f"{CR} §4 MERGE INTO; {_CAST}; {_MERGE_INTO}"),
              lambda w, r, o: _number(w) and _number(r), raw=True),
    Promotion(Rule("delta-merge-into.date-timestamp", "a date cast to a timestamp is its midnight (a "
                   "timestamp's in the session time zone)", f"{CR} §4 MERGE INTO; {_CAST}; {_MERGE_INTO}"),
              lambda w, r, o: isinstance(w, DateType) and isinstance(r, TimestampType)),
    Promotion(Rule("delta-merge-into.to-date", "a timestamp cast to a date loses its time of day (an "
                   "instant's in the session time zone)", f"{CR} §4 MERGE INTO; {_CAST}; {_MERGE_INTO}"),
              lambda w, r, o: isinstance(w, TimestampType) and isinstance(r, DateType), quiet=True),
    Promotion(Rule("delta-merge-into.timestamp-relabel", "timestamp and timestamp_ntz cast to each other: an "
                   "instant is written as its wall time in the session time zone, a wall time as the "
                   "instant it is there", f"{CR} §4 MERGE INTO; {PS} §2.6 (ts UTC vs NTZ); {_CAST}"),
              lambda w, r, o: isinstance(w, TimestampType) and isinstance(r, TimestampType), quiet=True),
    Promotion(Rule("delta-merge-into.string-binary", "text cast to binary is written as its UTF-8 bytes",
                   f"{CR} §4 MERGE INTO; {PS} §2.6 (string vs binary); {_CAST}"),
              lambda w, r, o: isinstance(w, StringType) and isinstance(r, BinaryType), quiet=True),
    Promotion(Rule("delta-merge-into.as-text", "a value cast to string is written as Spark's text of it: "
                   "numbers as Java prints them, dates and timestamps in the session time zone, booleans as "
                   "true or false, bytes decoded as UTF-8 (bytes that are not UTF-8 change)",
                   f"{CR} §4 MERGE INTO; {_CAST}; {_MERGE_INTO}"),
              lambda w, r, o: isinstance(r, StringType), quiet=True),
)
