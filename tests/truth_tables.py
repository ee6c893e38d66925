"""Truth tables from the real engines, for the finite part of the type space.

For every pair of Parquet leaf types the model knows (each physical backing of a decimal, every
timestamp unit and UTC flag, INT96, unsigned and half-precision numbers, UUID, JSON, TIME), and
each nullability, three tables record what the engines do:

- `spark_read.csv`: Spark's vectorized reader reading a file of the writer's leaf with a declared
  reader type: `ok` (every edge value comes through exactly as the declared type holds it,
  `oracles.spark_value`: a relabel's under its new meaning), `changed` (read, with another value)
  or the error conditions it failed with;
- `spark_read_rows.csv`: the same reads with the vectorized reader off
  (`spark.sql.parquet.enableVectorizedReader=false`: parquet-mr's row-by-row converters);
- `spark_merge.csv`: `mergeSchema` over a file of each leaf (the first sorts first): the merged
  type, or the error conditions;
- `delta_merge.csv`: a Delta table of one Spark type appended with a DataFrame of another with
  `mergeSchema`, type widening off and on: the table's new type (values read back exactly as it
  holds them), or `changed`, or the error conditions.

`make oracle-tables` (`python -m tests.truth_tables`) writes them under `tests/truth/` with real
Spark and delta-spark; `tests/test_truth_tables.py` replays every row against the profiles with no
JVM, and re-derives a sample from the engines. Nothing here imports pyspark at import time.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from schemaguard.formats.notation import parse_primitive, type_name
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    FixedType,
    FloatType,
    Int96Type,
    IntType,
    JsonType,
    PrimitiveType,
    StringType,
    TimestampType,
    TimeType,
    UuidType,
)
from tests.exact import NoExactValue, first_difference
from tests.oracles import conditions, edges, spark_atomic, spark_to_model, spark_value

TRUTH = Path(__file__).resolve().parent / "truth"


def written(t: DataType, nullable: bool) -> list[Any]:
    """The rows a one-column file or DataFrame holds: the edge values, then a null if allowed."""
    return [*edges(t), *([None] if nullable else [])]


@dataclass(frozen=True, slots=True)
class Leaf:
    """One Parquet leaf as a writer makes it: `type` is what schemaguard's footer reader reports,
    `physical` the backing that changes nothing in the model but may change a reader."""

    type: PrimitiveType
    physical: str
    arrow: pa.DataType

    @property
    def key(self) -> str:
        return f"{type_name(self.type)}@{self.physical}"


def _leaves() -> tuple[Leaf, ...]:
    out: list[Leaf] = [Leaf(BooleanType(), "BOOLEAN", pa.bool_())]
    for bits in (8, 16, 32, 64):
        for signed in (True, False):
            arrow = getattr(pa, f"{'' if signed else 'u'}int{bits}")()
            out.append(Leaf(IntType(bits, signed), "INT64" if bits == 64 else "INT32", arrow))
    out += [Leaf(FloatType(16), "FIXED_LEN_BYTE_ARRAY", pa.float16()),
            Leaf(FloatType(32), "FLOAT", pa.float32()), Leaf(FloatType(64), "DOUBLE", pa.float64())]
    # Decimals on each backing a writer uses: INT32 (p <= 9) and INT64 (p <= 18) as Spark and
    # parquet-java write them, FIXED_LEN_BYTE_ARRAY as pyarrow and Spark's legacy format do.
    for (p, s) in ((5, 2), (9, 2), (9, 0), (10, 2), (18, 2), (18, 0)):
        on_int = "INT32" if p <= 9 else "INT64"
        out += [Leaf(DecimalType(p, s, on_int), on_int, pa.decimal128(p, s)),
                Leaf(DecimalType(p, s, "FIXED_LEN_BYTE_ARRAY"), "FIXED_LEN_BYTE_ARRAY", pa.decimal128(p, s))]
    out += [Leaf(DecimalType(p, s, "FIXED_LEN_BYTE_ARRAY"), "FIXED_LEN_BYTE_ARRAY", pa.decimal128(p, s))
            for p, s in ((20, 2), (38, 10), (38, 0))]
    out += [Leaf(StringType(), "BYTE_ARRAY", pa.string()), Leaf(BinaryType(), "BYTE_ARRAY", pa.binary()),
            Leaf(FixedType(4), "FIXED_LEN_BYTE_ARRAY", pa.binary(4)),
            Leaf(UuidType(), "FIXED_LEN_BYTE_ARRAY", pa.uuid()), Leaf(JsonType(), "BYTE_ARRAY", pa.json_()),
            Leaf(DateType(), "INT32", pa.date32()), Leaf(TimeType("ms"), "INT32", pa.time32("ms")),
            Leaf(TimeType("us"), "INT64", pa.time64("us")), Leaf(TimeType("ns"), "INT64", pa.time64("ns"))]
    out += [Leaf(TimestampType(unit, utc), "INT64", pa.timestamp(unit, "UTC" if utc else None))
            for unit in ("ms", "us", "ns") for utc in (True, False)]
    out.append(Leaf(Int96Type(), "INT96", pa.timestamp("ns")))
    return tuple(out)


LEAVES: tuple[Leaf, ...] = _leaves()
LEAF: dict[str, Leaf] = {leaf.key: leaf for leaf in LEAVES}

# The types a Spark reader declares (and a Delta table holds): each Spark type once, as the model
# spells it, with decimals around the writers' precisions and scales.
SPARK_TYPES: tuple[DataType, ...] = (
    BooleanType(), IntType(8), IntType(16), IntType(32), IntType(64), FloatType(32), FloatType(64),
    *(DecimalType(p, s) for p, s in ((5, 2), (9, 2), (10, 0), (10, 2), (11, 2), (12, 4), (18, 2), (19, 0),
                                     (20, 0), (20, 2), (38, 0), (38, 10), (38, 18))),
    StringType(), BinaryType(), DateType(), TimestampType("us", True), TimestampType("us", False),
)

def _model_to_spark(t: DataType) -> Any:
    from pyspark.sql import types as T

    if isinstance(t, DecimalType):
        return T.DecimalType(t.precision, t.scale)
    spark_class = next((c for c, model in spark_atomic().items() if model == t), None)
    if spark_class is None:
        raise TypeError(f"{type_name(t)} is no Spark type")  # type: ignore[arg-type]
    return spark_class()


def _one_column(t: Any, nullable: bool) -> Any:
    from pyspark.sql import types as T

    return T.StructType([T.StructField("c", t, nullable)])


# ---------------------------------------------------------------------------------------------
# Writing one column of edge values


def _arrow_values(leaf: Leaf, nullable: bool) -> pa.Array:
    values = written(leaf.type, nullable)
    if isinstance(leaf.type, FloatType) and leaf.type.bits == 16:
        return pa.array([None if v is None else np.float16(v) for v in values], pa.float16())
    if isinstance(leaf.type, UuidType):
        return pa.ExtensionArray.from_storage(pa.uuid(), pa.array(values, pa.binary(16)))
    if isinstance(leaf.type, JsonType):
        return pa.ExtensionArray.from_storage(pa.json_(), pa.array(values, pa.string()))
    return pa.array(values, leaf.arrow)


def write_leaf(leaf: Leaf, nullable: bool, path: Path) -> list[Any]:
    """A one-column file `c` of the leaf's edge values (and a null when nullable), with the
    physical backing the leaf names. Returns the values written, in order."""
    column = _arrow_values(leaf, nullable)
    table = pa.table({"c": column}, schema=pa.schema([pa.field("c", column.type, nullable)]))
    pq.write_table(table, path, store_schema=False,
                   use_deprecated_int96_timestamps=isinstance(leaf.type, Int96Type),
                   store_decimal_as_integer=leaf.physical in ("INT32", "INT64"))
    return written(leaf.type, nullable)


# ---------------------------------------------------------------------------------------------
# The three probes (each takes a live SparkSession)


def outcome_of(written: list[Any], w: DataType, r: DataType, got: list[Any]) -> tuple[str, str]:
    """`ok` when each value written as `w` was read exactly as `r` holds it (`spark_value`), or
    `changed` with the first value read otherwise."""
    for e, g in zip(written, got, strict=True):
        try:
            changed = bool(first_difference(spark_value(e, w, r), g))
        except NoExactValue:  # `r` cannot hold it: any value read is a change
            changed = True
        if changed:
            return "changed", f"wrote {e!r}, read {g!r}"
    return "ok", ""


def failure(e: BaseException) -> tuple[str, str]:
    """The engine's error conditions (cause chain, '|'-joined). One error raised in Python counts
    too: a `ValueError` or `OverflowError` out of PySpark's own `fromInternal` came after Spark read
    the value, when PySpark could not hold what Spark made of it (an int read as a date 5.8 million
    years away), so the read succeeded with another value. Any other exception is a bug of the
    probe, not the engine's answer: it is raised, and stops the generation."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    if isinstance(e, PySparkException | Py4JError):
        return ("|".join(dict.fromkeys(conditions(e))) or type(e).__name__), ""
    if isinstance(e, ValueError | OverflowError) and raised_by_pyspark_conversion(e):
        return "changed", f"read, but Python cannot hold the value: {e}"
    raise e


def raised_by_pyspark_conversion(e: BaseException) -> bool:
    """Whether the innermost Python frame of `e` is a `fromInternal` of `pyspark/sql/types.py`."""
    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and frames[-1].name == "fromInternal" and \
        Path(frames[-1].filename).parts[-3:] == ("pyspark", "sql", "types.py")


def probe_read(spark: Any, folder: Path, leaf: Leaf, writer_nullable: bool, reader: DataType,
               reader_nullable: bool) -> tuple[str, str]:
    path = folder / f"{LEAVES.index(leaf)}-{writer_nullable}.parquet"
    if not path.exists():  # once per leaf; a thread racing here writes the same bytes
        draft = Path(tempfile.mkstemp(dir=folder, suffix=".tmp")[1])
        write_leaf(leaf, writer_nullable, draft)
        draft.replace(path)
    declared = _one_column(_model_to_spark(reader), reader_nullable)
    try:
        got = [r["c"] for r in spark.read.schema(declared).parquet(str(path)).collect()]
    except Exception as e:  # the engine's "no", recorded as it is; the replay judges it
        return failure(e)
    return outcome_of(written(leaf.type, writer_nullable), leaf.type, reader, got)


def probe_spark_merge(spark: Any, folder: Path, left: Leaf, right: Leaf, nullable: bool) -> tuple[str, str]:
    pair = Path(tempfile.mkdtemp(dir=folder))
    try:
        write_leaf(left, nullable, pair / "part-0.parquet")
        write_leaf(right, nullable, pair / "part-1.parquet")
        try:
            schema = spark.read.option("mergeSchema", "true").parquet(str(pair)).schema
        except Exception as e:
            return failure(e)
        return "ok", type_name(spark_to_model(schema["c"].dataType))  # type: ignore[arg-type]
    finally:
        shutil.rmtree(pair, ignore_errors=True)


def delta_table(spark: Any, folder: Path, table: DataType, nullable: bool, widening: bool) -> Path:
    """An empty Delta table of one column `c`, type widening on or off."""
    target = Path(tempfile.mkdtemp(dir=folder)) / "t"
    spark.createDataFrame([], _one_column(_model_to_spark(table), nullable)).write.format("delta") \
        .option("delta.enableTypeWidening", str(widening).lower()).save(str(target))
    return target


def delta_append(spark: Any, target: Path, data: DataType, nullable: bool) -> tuple[str, str]:
    """Append the data type's edge values with `mergeSchema`: `ok` with the table's new type when
    the append lands and reads back every value exactly. A refused append leaves the table as it
    was (Delta commits whole or not at all), so the caller may append to it again."""
    rows = [(v,) for v in written(data, nullable)]
    frame = spark.createDataFrame(rows, _one_column(_model_to_spark(data), nullable))
    try:
        # one file, so the rows read back in the order written
        frame.coalesce(1).write.format("delta").mode("append").option("mergeSchema", "true").save(str(target))
        read = spark.read.format("delta").load(str(target))
        got = [r["c"] for r in read.collect()]
    except Exception as e:
        return failure(e)
    merged = spark_to_model(read.schema["c"].dataType)
    verdict, detail = outcome_of([r[0] for r in rows], data, merged, got)
    name = type_name(merged)  # type: ignore[arg-type]
    return (verdict, f"{name}; {detail}") if detail else ("ok", name)


def probe_delta_merge(spark: Any, folder: Path, table: DataType, data: DataType, nullable: bool,
                      widening: bool) -> tuple[str, str]:
    target = delta_table(spark, folder, table, nullable, widening)
    try:
        return delta_append(spark, target, data, nullable)
    finally:
        shutil.rmtree(target.parent, ignore_errors=True)


def probe_delta_group(spark: Any, folder: Path, table: DataType, nullable: bool,
                      widening: bool) -> list[tuple[str, ...]]:
    """Every data type appended to a table of one type: one table serves until an append lands
    (most are refused, and creating the table is half a probe's time)."""
    rows: list[tuple[str, ...]] = []
    target: Path | None = None
    for data in SPARK_TYPES:
        target = target or delta_table(spark, folder, table, nullable, widening)
        outcome = delta_append(spark, target, data, nullable)
        names = type_name(table), type_name(data)  # type: ignore[arg-type]
        rows.append((*names, flag(nullable), flag(widening), *outcome))
        if outcome[0] in ("ok", "changed"):  # it landed: the next append needs a fresh table
            shutil.rmtree(target.parent, ignore_errors=True)
            target = None
    if target is not None:
        shutil.rmtree(target.parent, ignore_errors=True)
    return rows


# ---------------------------------------------------------------------------------------------
# The tables' rows

READ_HEADER = ("writer", "writer_nullable", "reader", "reader_nullable", "outcome", "detail")
SPARK_MERGE_HEADER = ("left", "right", "nullable", "outcome", "detail")
DELTA_MERGE_HEADER = ("table", "data", "nullable", "widening", "outcome", "detail")
BOOLS = (False, True)
PROBES_AT_ONCE = 2


def read_cases() -> Iterator[tuple[Leaf, bool, DataType, bool]]:
    for leaf in LEAVES:
        for wn in BOOLS:
            for reader in SPARK_TYPES:
                for rn in BOOLS:
                    yield leaf, wn, reader, rn


def spark_merge_cases() -> Iterator[tuple[Leaf, Leaf, bool]]:
    for left in LEAVES:
        for right in LEAVES:
            for nullable in BOOLS:
                yield left, right, nullable


def delta_merge_groups() -> Iterator[tuple[DataType, bool, bool]]:
    for table in SPARK_TYPES:
        for nullable in BOOLS:
            for widening in BOOLS:
                yield table, nullable, widening


def flag(x: bool) -> str:
    return "true" if x else "false"


def load(name: str) -> list[dict[str, str]]:
    with open(TRUTH / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def as_type(text: str) -> PrimitiveType:
    return parse_primitive(text, "truth table")


def _write(name: str, header: tuple[str, ...], probe: Callable[[Any], list[tuple[str, ...]]],
           cases: list[Any]) -> None:
    """Probe every case (two at a time: the driver's planning is most of a probe's time, and
    Spark runs concurrent jobs), each giving rows, and write the table whole, or not at all."""
    TRUTH.mkdir(exist_ok=True)
    tmp = TRUTH / f".{name}.tmp"
    started = time.monotonic()
    with open(tmp, "w", newline="", encoding="utf-8") as f, ThreadPoolExecutor(PROBES_AT_ONCE) as pool:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(header)
        for i, rows in enumerate(pool.map(probe, cases), 1):
            out.writerows(rows)
            if i % max(1, len(cases) // 100) == 0 or i == len(cases):
                rate = i / (time.monotonic() - started)
                print(f"\r{name}: {i}/{len(cases)} ({rate:.1f}/s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    tmp.replace(TRUTH / name)


def generate(spark: Any, which: set[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="truth-") as d:
        folder = Path(d)
        for table, vectorized in (("spark_read", "true"), ("spark_read_rows", "false")):
            if table in which:
                spark.conf.set(VECTORIZED, vectorized)
                _write(f"{table}.csv", READ_HEADER, lambda c: [(
                    c[0].key, flag(c[1]), type_name(c[2]), flag(c[3]), *probe_read(spark, folder, *c))],
                    list(read_cases()))
                spark.conf.unset(VECTORIZED)
        if "spark_merge" in which:
            _write("spark_merge.csv", SPARK_MERGE_HEADER, lambda c: [(
                c[0].key, c[1].key, flag(c[2]), *probe_spark_merge(spark, folder, *c))],
                list(spark_merge_cases()))
        if "delta_merge" in which:
            _write("delta_merge.csv", DELTA_MERGE_HEADER, lambda c: probe_delta_group(spark, folder, *c),
                   list(delta_merge_groups()))


def session() -> Any:
    """A local session like the tests' one: Delta's jars, UTC everywhere (timestamps compare as
    wall-clock values, and PySpark turns instants into the Python process's local time)."""
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ.setdefault("SCHEMAGUARD_HOME", tempfile.mkdtemp(prefix="truth-home-"))
    from schemaguard.spark import get_spark

    return get_spark("schemaguard-truth-tables", {"spark.sql.session.timeZone": "UTC"})


TABLES = ("spark_read", "spark_read_rows", "spark_merge", "delta_merge")
VECTORIZED = "spark.sql.parquet.enableVectorizedReader"


def main(argv: list[str]) -> int:
    which = set(argv) or set(TABLES)
    unknown = which - set(TABLES)
    if unknown:
        print(f"unknown table {sorted(unknown)[0]!r}: choose from {', '.join(TABLES)}", file=sys.stderr)
        return 2
    generate(session(), which)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
