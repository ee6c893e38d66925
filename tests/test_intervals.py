"""Spark's ANSI interval types (issue 35): spelt in the notation, Spark's schema JSON and DDL as Spark
spells them, found in the footers Spark writes, and judged as real Spark reads and merges them.

Spark writes a year-month interval as a plain INT32 of months and a day-time one as a plain INT64 of
microseconds, naming the type only in its own footer schema. Its readers decide by the physical
type, so an interval reads as any number its storage reads as and a plain integer as an interval:
the same count under another meaning (a relabel), which our verdict must name. Every read below is
made by real Spark, with the vectorized reader and with the row-by-row one, and what it read is
written back by Spark and read by pyarrow, so every count is compared exactly."""

from __future__ import annotations

import decimal
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.base import Options, errors
from schemaguard.formats.notation import NotationError, dumps, schema_from_notation
from schemaguard.formats.parquet import read_footer
from schemaguard.formats.spark import SparkSchemaError, schema_from_spark_json, schema_to_spark_json
from schemaguard.formats.spark_ddl import sql_type
from schemaguard.model import (
    INTERVAL_FIELDS,
    DataType,
    DecimalType,
    Field,
    FloatType,
    IntervalType,
    IntType,
    Schema,
)
from schemaguard.planning.ddl import DdlError, apply_ddl
from schemaguard.rules.profiles import can_read, merge_schemas
from tests.helpers import spark_conf
from tests.oracles import as_nullable, predicted, refusal, spark_fields

# ---------------------------------------------------------------------------------------------
# Spelling (no JVM)


SPELLINGS = [  # notation, Spark's schema JSON (its typeName), DDL
    ("interval_year_to_month", "interval year to month", "INTERVAL YEAR TO MONTH"),
    ("interval_year", "interval year", "INTERVAL YEAR"),
    ("interval_month", "interval month", "INTERVAL MONTH"),
    ("interval_day_to_second", "interval day to second", "INTERVAL DAY TO SECOND"),
    ("interval_day", "interval day", "INTERVAL DAY"),
    ("interval_hour_to_minute", "interval hour to minute", "INTERVAL HOUR TO MINUTE"),
    ("interval_second", "interval second", "INTERVAL SECOND"),
]


@pytest.mark.parametrize(("notation", "spark", "ddl"), SPELLINGS)
def test_an_interval_is_spelt_as_spark_spells_it(notation: str, spark: str, ddl: str) -> None:
    schema = schema_from_notation({"fields": [{"name": "i", "type": notation}]})
    assert isinstance(schema.fields[0].type, IntervalType)
    text = f'{{"type":"struct","fields":[{{"name":"i","type":"{spark}","nullable":true,"metadata":{{}}}}]}}'
    assert schema_from_spark_json(text) == schema
    assert schema_to_spark_json(schema) == text
    assert sql_type(schema.fields[0].type) == ddl
    assert schema_from_notation(json.loads(dumps(schema))) == schema


@pytest.mark.parametrize("spelling", ["interval_month_to_year", "interval_day_to_month", "interval_week"])
def test_an_interval_spark_has_not_is_refused_by_name(spelling: str) -> None:
    with pytest.raises(NotationError, match="is no Spark interval"):
        schema_from_notation({"fields": [{"name": "i", "type": spelling}]})
    with pytest.raises(SparkSchemaError, match="is no Spark interval"):
        schema_from_spark_json(json.dumps({"type": "struct", "fields": [
            {"name": "i", "type": spelling.replace("_", " ")}]}))


def _declared_type(declared: str) -> DataType:
    """A DDL type as `plan --ddl` reads it."""
    return apply_ddl(Schema(()), f"ALTER TABLE t ADD COLUMNS (c {declared})", "test").new.fields[0].type


def test_a_ddl_interval_becomes_the_model_type() -> None:
    assert _declared_type("INTERVAL YEAR TO MONTH") == IntervalType("year", "month")
    assert _declared_type("interval day") == IntervalType("day", "day")
    with pytest.raises(DdlError, match="interval day to year is no Spark interval"):
        _declared_type("INTERVAL DAY TO YEAR")


# ---------------------------------------------------------------------------------------------
# Files Spark writes, read and merged by real Spark


MONTHS = [14, -25, 2**31 - 1, -(2**31), 0, None]  # every INT32 edge a count of months may be
MICROS = [86_400_000_005, -1, 2**63 - 1, -(2**63), 0, None]
WRITTEN = {  # file -> (Spark type it is written as, the counts it holds)
    "ym": ("INTERVAL YEAR TO MONTH", MONTHS), "year": ("INTERVAL YEAR", MONTHS),
    "month": ("INTERVAL MONTH", MONTHS), "dts": ("INTERVAL DAY TO SECOND", MICROS),
    "day": ("INTERVAL DAY", MICROS), "hour": ("INTERVAL HOUR", MICROS),
    "int": ("INT", MONTHS), "bigint": ("BIGINT", MICROS),
}
DECLARED = ["INTERVAL YEAR", "INTERVAL MONTH", "INTERVAL YEAR TO MONTH", "INTERVAL DAY", "INTERVAL HOUR",
            "INTERVAL DAY TO SECOND", "INTERVAL MINUTE TO SECOND", "TINYINT", "INT", "BIGINT", "DOUBLE",
            "DECIMAL(10,0)", "DECIMAL(20,0)", "DECIMAL(5,0)", "STRING", "DATE", "TIMESTAMP"]


def _write_plain(counts: list[int | None], bits: int, path: Path) -> None:
    pq.write_table(pa.table({"c": pa.array(counts, pa.int32() if bits == 32 else pa.int64())}), path)


@pytest.fixture(scope="module")
def files(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each of WRITTEN as one file Spark wrote: the counts written by pyarrow as plain integers,
    read by Spark as the type (the reads under test below), written again by Spark."""
    root = tmp_path_factory.mktemp("intervals")
    out = {}
    for name, (spark_type, counts) in WRITTEN.items():
        plain = root / f"{name}-plain.parquet"
        _write_plain(counts, 32 if counts is MONTHS else 64, plain)
        folder = root / name
        spark.read.schema(f"c {spark_type}").parquet(str(plain)).coalesce(1).write.parquet(str(folder))
        out[name] = next(folder.glob("part-*.parquet"))
    return out


def _counts(column: pa.ChunkedArray) -> list[Any]:
    """The counts a column pyarrow read back holds: a date's days, a timestamp's microseconds, a
    number's value (a decimal or double as the integer it equals, else as it is)."""
    if pa.types.is_date32(column.type):
        column = column.cast(pa.int32())
    elif pa.types.is_timestamp(column.type) or pa.types.is_duration(column.type):
        column = column.cast(pa.int64())
    return [int(v) if isinstance(v, float | decimal.Decimal) and v == int(v) else v
            for v in column.to_pylist()]


def spark_reads(spark: Any, path: Path, declared: str, folder: Path) -> tuple[list[Any] | None, str]:
    """What Spark reads from the file with `declared` as the column's type, as counts (written back
    by Spark, read by pyarrow: PySpark itself cannot hold a year-month interval); or its refusal."""
    try:
        spark.read.schema(f"c {declared}").parquet(str(path)).coalesce(1).write.mode("overwrite").parquet(
            str(folder))
    except Exception as e:  # Spark's "no", when its condition is one a rule predicts
        return None, refusal(e)
    try:
        table = pq.read_table(next(folder.glob("part-*.parquet")))
    finally:
        shutil.rmtree(folder)
    return _counts(table.column("c")), ""


def _same_meaning(w: DataType, r: DataType) -> bool:
    """Does the reader take the stored count for what it meant? An interval as one of its kind with
    fields as fine, a plain integer as a number; anything else is the count under another meaning."""
    if isinstance(w, IntervalType) or isinstance(r, IntervalType):
        return (isinstance(w, IntervalType) and isinstance(r, IntervalType) and w.months == r.months
                and INTERVAL_FIELDS.index(r.end) >= INTERVAL_FIELDS.index(w.end))
    return isinstance(r, IntType | DecimalType | FloatType)


@pytest.mark.parametrize("vectorized", [True, False], ids=["vectorized", "row-by-row"])
@pytest.mark.parametrize("name", list(WRITTEN))
def test_reads_of_intervals_agree_with_spark(spark: Any, files: dict[str, Path], tmp_path: Path, name: str,
                                             vectorized: bool) -> None:
    """Each written file read as each declared type: a loud break exactly where Spark fails (for
    the reason our rule names); where it reads, every count as written unless a quiet break is
    named, and a quiet break named exactly where the count changed or took another meaning."""
    writer = read_footer(str(files[name])).schema
    spark_type, counts = WRITTEN[name]
    assert writer.fields[0].type == _declared_type(spark_type)  # the footer's Spark schema names it
    disagreements = []
    for declared in DECLARED:
        reader = Schema((Field("c", _declared_type(declared)),))
        with spark_conf(spark, spark__sql__parquet__enableVectorizedReader=str(vectorized).lower()):
            read, error = spark_reads(spark, files[name], declared, tmp_path / "read")
        problems = errors(can_read(writer, reader, "spark-read", Options(vectorized_reader=vectorized)))
        loud = [p.rule.id for p in problems if not p.quiet]
        quiet = [p.rule.id for p in problems if p.quiet]
        if read is None:
            ok = bool(loud) and predicted(set(loud), error)
        else:
            changed = read != counts
            ok = not loud and bool(quiet) == (changed or not _same_meaning(writer.fields[0].type,
                                                                            reader.fields[0].type))
        if not ok:
            disagreements.append(f"{name} as {declared}: spark={error or read} ours={loud or quiet}")
    assert not disagreements, "\n".join(disagreements)


@pytest.mark.parametrize(("first", "second"), [
    ("ym", "year"), ("year", "month"), ("month", "ym"), ("dts", "day"), ("day", "hour"), ("hour", "dts"),
    ("ym", "dts"), ("day", "year"), ("year", "int"), ("day", "bigint"), ("int", "ym"),
])
def test_merges_of_intervals_agree_with_spark(spark: Any, files: dict[str, Path], tmp_path: Path,
                                              first: str, second: str) -> None:
    """mergeSchema over two files Spark wrote: intervals of one kind merge into the span of both,
    anything else fails, as Spark's merge does."""
    for k, name in enumerate((first, second)):
        shutil.copy(files[name], tmp_path / f"part-{k}.parquet")
    try:
        merged: Schema | None = Schema(spark_fields(
            spark.read.option("mergeSchema", "true").parquet(str(tmp_path)).schema))
        error = ""
    except Exception as e:
        merged, error = None, refusal(e)
    footers = [read_footer(str(files[name])).footer for name in (first, second)]
    ours = merge_schemas([f.spark_schema or f.schema for f in footers], "spark-merge")
    assert ours.ok == (merged is not None), (ours.conflicts, error)
    if merged is None:
        assert predicted({c.rule.id for c in ours.conflicts}, error), (ours.conflicts, error)
    else:
        assert ours.merged is not None and as_nullable(ours.merged) == as_nullable(merged)


def test_a_spark_written_interval_file_scans_clean(files: dict[str, Path]) -> None:
    """The footer's Spark schema and its Parquet schema agree on Spark's own interval layout."""
    from schemaguard import api as sg

    for name in ("ym", "dts"):
        scan = sg.scan(str(files[name].parent))
        assert [f.code for f in scan.scan_findings] == []
        assert scan.table.versions[0].footer.schema.fields[0].type == _declared_type(WRITTEN[name][0])


@pytest.mark.parametrize("profile", ["delta-merge", "delta-write", "delta-merge-into"])
def test_delta_refuses_intervals_as_delta_spark_does(spark: Any, tmp_path: Path, profile: str) -> None:
    """A Delta table cannot be made with an interval, nor take a DataFrame holding one by an append
    with mergeSchema, an overwrite, or MERGE INTO with schema evolution: each for the reason our
    rule names."""
    with pytest.raises(Exception) as created:
        spark.sql(f"CREATE TABLE delta.`{tmp_path / 'made'}` (id BIGINT, c INTERVAL DAY) USING delta")
    target = str(tmp_path / "t")
    spark.sql(f"CREATE TABLE delta.`{target}` (id BIGINT) USING delta")
    source = spark.sql("SELECT 1L AS id, INTERVAL '1' DAY AS c")
    with pytest.raises(Exception) as written:
        if profile == "delta-merge":
            source.write.format("delta").mode("append").option("mergeSchema", "true").save(target)
        elif profile == "delta-write":
            source.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(target)
        else:
            source.createOrReplaceTempView("interval_source")
            try:
                spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO delta.`{target}` t USING interval_source s "
                          "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
            finally:
                spark.catalog.dropTempView("interval_source")
    table = Schema((Field("id", IntType(64)),))
    data = Schema((*table.fields, Field("c", IntervalType("day", "day"))))
    loud = {p.rule.id for p in errors(can_read(data, table, profile)) if not p.quiet}
    assert "delta.interval" in loud
    for refused in (created.value, written.value):
        assert predicted({"delta.interval"}, refusal(refused)), refused


def test_iceberg_refuses_intervals_as_its_spark_catalog_does(spark: Any) -> None:
    """Iceberg's spec has no interval type: its Spark catalog refuses a table with one (Java's
    UnsupportedOperationException with no error condition, so its message is the engine's "no")."""
    from pyspark.errors.exceptions.captured import UnsupportedOperationException

    for spark_type in ("INTERVAL DAY", "INTERVAL YEAR TO MONTH"):
        refused = f"Not a supported type: {spark_type.lower()}"
        with pytest.raises(UnsupportedOperationException, match=refused):
            spark.sql(f"CREATE TABLE ice.db.interval_refused (c {spark_type}) USING iceberg")
        interval = Schema((Field("c", _declared_type(spark_type)),))
        assert {p.rule.id for p in errors(can_read(interval, interval, "iceberg"))} == {"iceberg.interval"}
