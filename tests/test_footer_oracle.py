"""The footer decoder against an independent one: parquet-java's own Thrift classes
(`org.apache.parquet.format.Util.readFileMetaData`, parquet-format-structures 1.16 in pyspark's
jars), which keep every `SchemaElement` field as written, converted types included. Each file's
leaves, annotations, field ids, row counts and statistics must be the same from both, on files
written by pyarrow, by Spark (default and legacy formats) and by hand (tests/test_footer_files.py)."""

from __future__ import annotations

import decimal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.checks import run_checks
from schemaguard.checks.gate import evaluate_gate
from schemaguard.formats.parquet import FileFooter, read_footer
from schemaguard.lake.table import read
from tests.helpers import spark_conf, spark_parquet_file
from tests.java_thrift import java_leaves, java_metadata
from tests.test_parquet_footer import LOGICAL_TYPES
from tests.test_parquet_spark import ROW

pytestmark = pytest.mark.spark


def ours(footer: FileFooter) -> list[dict[str, Any]]:
    return [{
        "parquet_path": c.parquet_path, "physical_type": c.physical_type, "type_length": c.type_length,
        "repetition": c.repetition, "field_id": c.field_id, "converted_type": c.converted_type,
        "logical_type": c.logical_type,
    } for c in footer.footer.columns]


def java_statistics(meta: Any) -> list[dict[str, Any]]:
    """Per leaf over the row groups: null counts summed (None when a group lacks one) and whether
    every bound was written exact (None when no group says)."""
    groups = list(meta.getRow_groups())
    out: list[dict[str, Any]] = []
    for j in range(len(groups[0].getColumns()) if groups else 0):
        nulls: int | None = 0
        exact: bool | None = None
        for g in groups:
            chunk = g.getColumns()[j]
            s = chunk.getMeta_data().getStatistics() if chunk.getMeta_data().isSetStatistics() else None
            if s is None or not s.isSetNull_count():
                nulls = None
            elif nulls is not None:
                nulls += s.getNull_count()
            if s is not None and (s.isSetIs_min_value_exact() or s.isSetIs_max_value_exact()):
                flags = (not s.isSetIs_min_value_exact() or s.isIs_min_value_exact(),
                         not s.isSetIs_max_value_exact() or s.isIs_max_value_exact())
                exact = all(flags) and exact is not False
        out.append({"null_count": nulls, "exact": exact})
    return out


def assert_same(spark: Any, path: Path) -> FileFooter:
    footer = read_footer(str(path))
    meta = java_metadata(spark, path)
    assert ours(footer) == java_leaves(meta)
    assert footer.rows == meta.getNum_rows()
    assert footer.row_groups == len(meta.getRow_groups())
    assert [{"null_count": s.null_count, "exact": s.exact} for s in footer.stats] == java_statistics(meta)
    assert footer.created_by == (meta.getCreated_by() if meta.isSetCreated_by() else None)
    return footer


@pytest.mark.parametrize("name", sorted(LOGICAL_TYPES))
def test_every_pyarrow_annotation_as_parquet_java_decodes_it(spark: Any, tmp_path: Path, name: str) -> None:
    array, options, *_ = LOGICAL_TYPES[name]
    path = tmp_path / f"{name}.parquet"
    pq.write_table(pa.table({"c": array}), path, **options)
    assert_same(spark, path)


def _nested(path: Path) -> None:
    t = pa.table({
        "id": pa.array([1, None, 3], pa.int64()),
        "items": pa.array([[{"p": decimal.Decimal("1.50"), "q": 2}], [], None],
                          pa.list_(pa.struct([("p", pa.decimal128(9, 2)), ("q", pa.int16())]))),
        "attrs": pa.array([[("k", "v")], None, [("a", None)]], pa.map_(pa.string(), pa.string())),
        "s": pa.array(["a", "b", "c"]),
    })
    pq.write_table(t, path, row_group_size=1, store_decimal_as_integer=True)


def _with_field_ids(path: Path) -> None:
    schema = pa.schema([pa.field("a", pa.int32(), metadata={b"PARQUET:field_id": b"7"}),
                        pa.field("b", pa.list_(pa.field("element", pa.string(),
                                                        metadata={b"PARQUET:field_id": b"9"})),
                                 metadata={b"PARQUET:field_id": b"8"})])
    pq.write_table(pa.table({"a": [1, 2], "b": [["x"], None]}, schema=schema), path)


@pytest.mark.parametrize("write", [_nested, _with_field_ids], ids=["nested", "field-ids"])
def test_nested_pyarrow_files_as_parquet_java_decodes_them(
        spark: Any, tmp_path: Path, write: Callable[[Path], None]) -> None:
    path = tmp_path / "f.parquet"
    write(path)
    assert_same(spark, path)


@pytest.mark.parametrize("settings", [
    {}, {"spark__sql__parquet__writeLegacyFormat": "true"},
    {"spark__sql__parquet__outputTimestampType": "INT96"},
    {"spark__sql__parquet__outputTimestampType": "TIMESTAMP_MILLIS"},
], ids=["default", "legacy", "int96", "millis"])
def test_spark_files_as_parquet_java_decodes_them(
        spark: Any, tmp_path: Path, settings: dict[str, str]) -> None:
    out = tmp_path / "t"
    with spark_conf(spark, **settings):
        spark.sql(ROW).coalesce(1).write.mode("overwrite").parquet(str(out))
    assert_same(spark, spark_parquet_file(out))


def test_variant_files_spark_writes_shredded_or_not_are_one_version(spark: Any, tmp_path: Path) -> None:
    """Spark 4.1 shreds a VARIANT by the values in each file (and not at all when shredding is off):
    each such file as parquet-java decodes it, all of them one version, read and merged as Spark
    does."""
    row = "SELECT parse_json('{\"a\": 1, \"b\": \"x\"}') AS v, 1 AS n"
    other = "SELECT parse_json('[1, 2]') AS v, 2 AS n"
    for part, sql, shred in [("k=1", row, "false"), ("k=2", row, "true"), ("k=3", other, "true")]:
        with spark_conf(spark, spark__sql__variant__writeShredding__enabled=shred):
            spark.sql(sql).coalesce(1).write.parquet(str(tmp_path / part))
    files = sorted(tmp_path.glob("k=*/part-*.parquet"))
    leaves = [[c.parquet_path for c in assert_same(spark, f).footer.columns] for f in files]
    assert sorted(leaves[0]) == [("n",), ("v", "metadata"), ("v", "value")]  # not shredded
    assert ("v", "typed_value", "a", "typed_value") in leaves[1]  # shredded by its values
    assert leaves[2] != leaves[1]
    table = read(str(tmp_path))
    assert len(table.versions) == 1
    assert [f.code for f in run_checks(table)] == []
    assert evaluate_gate(table).merge_safe
    merged = spark.read.option("mergeSchema", "true").parquet(str(tmp_path)).schema.simpleString()
    assert merged == "struct<v:variant,n:int,k:int>"
