"""Differential test: the `delta-merge` profile against real Delta. The table is created from
the first schema, then a DataFrame with the second is appended with `mergeSchema`, with and
without `delta.enableTypeWidening`. Both DataFrames come from Parquet files pyarrow wrote, so
every column is nullable here: this suite checks types, names and order, not nullability."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from schemaguard.base import Options
from schemaguard.formats.notation import dumps
from schemaguard.model import Schema
from schemaguard.rules.profiles import merge_schemas
from tests.oracles import as_nullable, delta_append, delta_cases, oracle_settings, predicted

ORACLE = oracle_settings(20)


def check_delta(spark: Any, table: Schema, data: Schema, widening: bool) -> None:
    ok, delta_schema, error = delta_append(spark, table, data, widening, merge_schema=True)
    ours = merge_schemas([table, data], "delta-merge", Options(type_widening=widening))
    assert ours.ok == ok, (f"ours={ours.conflicts} delta={error or 'ok'}\n"
                           f"table={dumps(table)}\ndata={dumps(data)}")
    if not ok:  # both refuse: for the reason our rule names
        assert predicted({c.rule.id for c in ours.conflicts}, error), (error, ours.conflicts)
    if ok:
        assert ours.merged is not None and delta_schema is not None
        assert as_nullable(ours.merged) == as_nullable(delta_schema), (
            f"\nours ={dumps(as_nullable(ours.merged))}\ndelta={dumps(as_nullable(delta_schema))}")


@pytest.mark.parametrize("widening", [False, True])
@ORACLE
@given(pair=delta_cases())
def test_delta_merge_agrees_with_delta(spark: Any, widening: bool, pair: tuple[Schema, Schema]) -> None:
    check_delta(spark, *pair, widening)
