"""Differential test: the `delta-merge` profile against real Delta. The table is created from
the first schema, then a DataFrame with the second is appended with `mergeSchema`, with and
without `delta.enableTypeWidening`. Both DataFrames come from Parquet files pyarrow wrote, so
every column is nullable here: this suite checks types, names and order, not nullability."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemaguard.base import Options
from schemaguard.formats.notation import dumps
from schemaguard.model import Schema
from schemaguard.rules.profiles import merge_schemas
from tests.oracles import (
    as_nullable,
    oracle_settings,
    predicted,
    refusal,
    related_pairs,
    spark_fields,
    writable,
    write_parquet,
)

ORACLE = oracle_settings(60)


def delta_append(spark: Any, table: Schema, data: Schema, widening: bool) -> tuple[bool, Schema | None, str]:
    folder = Path(tempfile.mkdtemp(prefix="delta-"))
    try:
        write_parquet(table, folder / "table.parquet")
        write_parquet(data, folder / "data.parquet")
        try:
            first = spark.read.parquet(str(folder / "table.parquet"))
            second = spark.read.parquet(str(folder / "data.parquet"))
        except Exception as e:  # Spark cannot read the file at all (e.g. NANOS)
            return False, None, refusal(e)
        target = str(folder / "delta")
        first.write.format("delta").save(target)
        if widening:
            spark.sql(f"ALTER TABLE delta.`{target}` SET TBLPROPERTIES "
                      "('delta.enableTypeWidening' = 'true')")
        try:
            second.write.format("delta").mode("append").option("mergeSchema", "true").save(target)
        except Exception as e:  # Delta's "no", when its condition is one a rule predicts
            return False, None, refusal(e)
        merged = spark.read.format("delta").load(target).schema
        return True, Schema(spark_fields(merged)), ""
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check_delta(spark: Any, table: Schema, data: Schema, widening: bool) -> None:
    ok, delta_schema, error = delta_append(spark, table, data, widening)
    ours = merge_schemas([table, data], "delta-merge", Options(type_widening=widening))
    assert ours.ok == ok, (f"ours={ours.conflicts} delta={error or 'ok'}\n"
                           f"table={dumps(table)}\ndata={dumps(data)}")
    if not ok:  # both refuse: for the reason our rule names
        assert predicted({c.rule.id for c in ours.conflicts}, error), (error, ours.conflicts)
    if ok:
        assert ours.merged is not None and delta_schema is not None
        assert as_nullable(ours.merged) == as_nullable(delta_schema), (
            f"\nours ={dumps(as_nullable(ours.merged))}\ndelta={dumps(as_nullable(delta_schema))}")


def delta_cases() -> st.SearchStrategy[tuple[Schema, Schema]]:
    return related_pairs().filter(lambda p: writable(p[0]) and writable(p[1]))


@pytest.mark.parametrize("widening", [False, True])
@ORACLE
@given(pair=delta_cases())
def test_delta_merge_agrees_with_delta(spark: Any, widening: bool, pair: tuple[Schema, Schema]) -> None:
    check_delta(spark, *pair, widening)
