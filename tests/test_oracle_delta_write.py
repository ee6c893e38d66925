"""Differential test: the `delta-write` profile against real Delta. A table is created from the
first schema, then a DataFrame with the second is appended without `mergeSchema`, with and without
`delta.enableTypeWidening`: Delta's schema enforcement. Both DataFrames come from Parquet files
pyarrow wrote (every column nullable); NOT NULL columns have a test of their own below.

Guard side: `errors(can_read(data, table, "delta-write"))` must be empty exactly when Delta takes
the write; when both refuse, our rule names Delta's condition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from schemaguard.base import Options, errors
from schemaguard.formats.notation import dumps, schema_from_notation
from schemaguard.model import Schema
from schemaguard.rules.profiles import can_read
from tests.oracles import conditions, delta_append, delta_cases, oracle_settings, predicted

ORACLE = oracle_settings(10)  # a seeded sample; `make oracle` searches afresh (tests/oracle_search.py)


def check_write(spark: Any, table: Schema, data: Schema, widening: bool) -> None:
    ok, _, error = delta_append(spark, table, data, widening, merge_schema=False)
    ours = errors(can_read(data, table, "delta-write", Options(type_widening=widening)))
    assert (not ours) == ok, f"ours={ours} delta={error or 'ok'}\ntable={dumps(table)}\ndata={dumps(data)}"
    if not ok:
        assert predicted({p.rule.id for p in ours}, error), (error, ours)


@pytest.mark.parametrize("widening", [False, True])
@ORACLE
@given(pair=delta_cases())
def test_delta_write_agrees_with_delta(spark: Any, widening: bool, pair: tuple[Schema, Schema]) -> None:
    check_write(spark, *pair, widening)


def one(t: str, nullable: bool = True) -> Schema:
    return schema_from_notation({"fields": [{"name": "id", "type": "int64"},
                                            {"name": "c", "type": t, "nullable": nullable}]})


FIXED = [  # pairs the search may not draw: a narrower int, a new column, a column missing, case
    (one("int32"), one("int8")), (one("int8"), one("int32")), (one("int32"), one("int64")),
    (schema_from_notation({"fields": [{"name": "id", "type": "int64"}]}), one("string")),
    (one("string"), schema_from_notation({"fields": [{"name": "id", "type": "int64"}]})),
    (one("string"), schema_from_notation({"fields": [{"name": "ID", "type": "int64"},
                                                     {"name": "C", "type": "string"}]})),
    (one("decimal(10,2)"), one("decimal(12,2)")), (one("decimal(12,2)"), one("decimal(10,2)")),
]


@pytest.mark.parametrize("widening", [False, True])
@pytest.mark.parametrize(("table", "data"), FIXED, ids=[f"{dumps(t)}<-{dumps(d)}" for t, d in FIXED])
def test_delta_write_agrees_with_delta_on_fixed_pairs(spark: Any, widening: bool, table: Schema,
                                                      data: Schema) -> None:
    check_write(spark, table, data, widening)


def test_nulls_into_a_not_null_column_fail_at_the_first_null(spark: Any, tmp_path: Path) -> None:
    target = str(tmp_path / "t")
    spark.sql(f"CREATE TABLE delta.`{target}` (id BIGINT, c STRING NOT NULL) USING delta")
    frame = spark.sql("SELECT 1L AS id, CAST('x' AS STRING) AS c UNION ALL SELECT 2L, NULL")
    assert [f.nullable for f in frame.schema.fields] == [False, True]
    frame.where("c IS NOT NULL").write.format("delta").mode("append").save(target)  # no null: written
    with pytest.raises(Exception) as refused:
        frame.write.format("delta").mode("append").save(target)
    assert "DELTA_NOT_NULL_CONSTRAINT_VIOLATED" in conditions(refused.value)
    problems = can_read(one("string"), one("string", nullable=False), "delta-write")
    assert [(p.path, p.rule.id, p.severity) for p in problems] == [("c", "delta-write.not-null", "warning")]
    assert spark.read.format("delta").load(target).count() == 1
