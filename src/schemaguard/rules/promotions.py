"""Type promotions: the type changes each reader accepts, one cited table per reader.

Each row is a `Promotion`: the rule it comes from (`docs/reference/compat-rules.md` §1 Avro, §3
Iceberg, §4 Delta, §5 Spark; `docs/reference/parquet-and-spark.md` §2.5 read-time conversions) and a
test on the writer's and the reader's type. The read profiles (rules/read.py) and Delta's merge
(rules/merge.py) look their promotions up here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from schemaguard.base import CR, PS, Options, Rule
from schemaguard.model import (
    BinaryType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    FloatType,
    Int96Type,
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
    as the reader sees them (`Table.view`)."""

    rule: Rule
    test: Test
    raw: bool = False  # test the writer's own type, not the reader's view of it (physical matters)
    quiet: bool = False  # the reader reads it, and values change meaning: a quiet break


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
    """The Parquet physical type a column of this type is stored on (a decimal: as its footer says)."""
    if isinstance(t, IntType):
        return "INT32" if t.bits <= 32 else "INT64"
    if isinstance(t, DecimalType):
        return t.physical
    if isinstance(t, TimeType):
        return "INT32" if t.unit == "ms" else "INT64"
    if isinstance(t, FloatType) and t.bits == 16:
        return "FIXED_LEN_BYTE_ARRAY"
    return {DateType: "INT32", TimestampType: "INT64"}.get(type(t))


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
    # last: every row above reads these pairs as they should be read
    Promotion(Rule("spark-read.reinterpreted", "a column read with a declared type of another logical type "
                   "on the same physical type (an int as a date, a decimal's unscaled number as an int, a "
                   "timestamp as bigint, fixed bytes as binary): Spark reads the stored numbers or bytes as "
                   "the declared type", f"{PS} §2.5 (the vectorized reader by physical type); "
                   "tests/truth/spark_read.csv"),
              lambda w, r, o: _reinterpreted(w, r), raw=True, quiet=True),
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
