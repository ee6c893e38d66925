"""Spark's NullType (`void`) against the engines: a column of a Delta table that has only ever
held NULL (`SELECT NULL AS v` written as Delta keeps that type in the table's schema and leaves the
column out of its Parquet files).

* delta-spark's `mergeSchema` append (the `delta-merge` profile): each pair of a table column and a
  data column, void on one side, top level and nested; the merged schema Delta commits must be ours.
* Spark's `StructType.merge` (the `spark-merge` profile), called in the JVM on the same pairs.
* Spark's Parquet readers, vectorized and row by row (`spark-read`, `delta-read`): a void column
  read as any type is NULL; a column holding values read as void fails the read.
* A Delta table holding a void column scans (it was refused as bad input before).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import schemaguard as sg
from schemaguard.base import Options, errors
from schemaguard.model import Field, IntType, Schema, StructType, VoidType
from schemaguard.rules.profiles import can_read, merge_schemas
from tests.oracles import as_nullable, conditions, spark_fields

pytestmark = pytest.mark.spark

# (the table's column, the data's column): SQL expressions of a column `v`, void on one side
PAIRS = [
    ("NULL", "'x'"),
    ("'x'", "NULL"),
    ("NULL", "1L"),
    ("named_struct('a', NULL, 'b', 1)", "named_struct('a', 2.5D, 'b', 1)"),
    ("named_struct('a', 'x', 'b', 1)", "named_struct('a', NULL, 'b', 1)"),
    ("NULL", "named_struct('a', 1)"),
    ("array(1)", "NULL"),
    ("NULL", "map('k', DATE'2024-01-01')"),
]


def frame_schema(spark: Any, v: str) -> Schema:
    return Schema(spark_fields(spark.sql(f"SELECT 1L AS id, {v} AS v").schema))


@pytest.mark.parametrize(("table", "data"), PAIRS)
def test_a_void_column_merges_as_delta_merges_it(spark: Any, tmp_path: Path, table: str, data: str) -> None:
    target = str(tmp_path / "t")
    spark.sql(f"SELECT 1L AS id, {table} AS v").write.format("delta").save(target)
    try:
        spark.sql(f"SELECT 2L AS id, {data} AS v").write.format("delta").mode("append") \
            .option("mergeSchema", "true").save(target)
        delta: Schema | None = Schema(spark_fields(spark.read.format("delta").load(target).schema))
    except Exception as e:  # Delta's refusal: none is expected, and the test names it
        delta, refused = None, conditions(e)
    ours = merge_schemas([frame_schema(spark, table), frame_schema(spark, data)], "delta-merge", Options())
    assert delta is not None, refused
    assert ours.ok and ours.merged is not None, ours.conflicts
    assert as_nullable(ours.merged) == as_nullable(delta)


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_a_void_column_merges_as_spark_merges_it(spark: Any, left: str, right: str) -> None:
    jvm_struct = spark._jvm.org.apache.spark.sql.types.StructType
    schemas = [spark.sql(f"SELECT 1L AS id, {v} AS v").schema for v in (left, right)]
    try:
        merged = jvm_struct.fromJson(schemas[0].json()).merge(jvm_struct.fromJson(schemas[1].json()), False)
        spark_merged: str | None = merged.json()
    except Exception as e:
        spark_merged, failure = None, conditions(e, message=True)
    ours = merge_schemas([Schema(spark_fields(s)) for s in schemas], "spark-merge", Options())
    if spark_merged is None:  # Spark fails on `v`'s two types; so do we, there and only there
        assert "CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE" in " ".join(failure), failure
        [conflict] = ours.conflicts
        assert conflict.path.split(".")[0] == "v" and "void" in (conflict.left, conflict.right), conflict
        assert conflict.rule.id in ("spark-merge.equal", "merge.kind")
    else:
        from pyspark.sql.types import StructType as SparkStruct

        assert ours.ok and ours.merged is not None, ours.conflicts
        assert as_nullable(ours.merged) == as_nullable(Schema(spark_fields(SparkStruct.fromJson(
            json.loads(spark_merged)))))


@pytest.mark.parametrize("vectorized", [True, False])
@pytest.mark.parametrize("value", ["'x'", "1L", "array(1)", "named_struct('a', 1)"])
def test_a_column_holding_values_read_as_void_fails_spark(spark: Any, tmp_path: Path, vectorized: bool,
                                                          value: str) -> None:
    path = str(tmp_path / "p")
    spark.sql(f"SELECT 1L AS id, {value} AS v").write.parquet(path)
    writer = frame_schema(spark, value)
    reader = frame_schema(spark, "NULL")
    key = "spark.sql.parquet.enableVectorizedReader"
    before = spark.conf.get(key)
    spark.conf.set(key, str(vectorized).lower())
    try:
        spark.read.schema(spark.sql("SELECT 1L AS id, NULL AS v").schema).parquet(path).collect()
        failed: list[str] = []
    except Exception as e:
        failed = conditions(e)
    finally:
        spark.conf.set(key, before)
    ours = errors(can_read(writer, reader, "spark-read", Options(vectorized_reader=vectorized)))
    assert any(c.startswith("FAILED_READ_FILE") for c in failed), failed
    assert [(p.path, p.rule.id) for p in ours] == [("v", "void.reader")]


@pytest.mark.parametrize("profile", ["spark-read", "delta-read"])
def test_a_void_column_reads_as_null_under_its_new_type(spark: Any, tmp_path: Path, profile: str) -> None:
    target = str(tmp_path / "t")
    spark.sql("SELECT 1L AS id, NULL AS v").write.format("delta").save(target)
    void_files = {f.path for f in sg.scan(target).files}
    spark.sql("SELECT 2L AS id, 'x' AS v").write.format("delta").mode("append") \
        .option("mergeSchema", "true").save(target)
    reader = Schema(spark_fields(spark.read.format("delta").load(target).schema))
    if profile == "spark-read":  # the void file's own Parquet columns, read with the table's schema
        table_schema = spark.read.format("delta").load(target).schema
        rows = spark.read.schema(table_schema).parquet(*void_files).collect()
    else:
        rows = spark.read.format("delta").load(target).where("id = 1").collect()
    assert [(r["id"], r["v"]) for r in rows] == [(1, None)]
    delta = sg.scan(target).table.delta
    assert delta is not None
    old = delta.schemas[0].schema  # the table's schema when the void file was written
    assert [f.type for f in old.fields if f.name == "v"] == [VoidType()]
    assert errors(can_read(old, reader, profile)) == []


def test_a_delta_table_holding_a_void_column_is_scanned(spark: Any, tmp_path: Path) -> None:
    target = str(tmp_path / "t")
    # Delta refuses a struct of void fields only (STRUCT_ALL_VOID_FIELDS) and a void in a list or map
    spark.sql("SELECT 1L AS id, NULL AS v, named_struct('a', NULL, 'b', 1) AS s").write.format("delta") \
        .save(target)
    result = sg.scan(target)
    assert result.ok and result.table.delta is not None
    [logged] = result.table.delta.schemas
    assert [(f.name, f.type) for f in logged.schema.fields][1:] == [
        ("v", VoidType()), ("s", StructType((Field("a", VoidType(), True), Field("b", IntType(32), True))))]
