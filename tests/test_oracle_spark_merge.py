"""Differential test: the `spark-merge` profile against real Spark's Parquet `mergeSchema`.

Each generated pair is written as two Parquet files with pyarrow (the reader's schema sorts
first, so it is Spark's left side), then `spark.read.option("mergeSchema", "true")` infers the
schema. Our verdict and merged schema must equal Spark's. Spark reports every column nullable
on read (parquet-and-spark.md §2.5), so merged schemas are compared with nullability forced on.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings

from schemaguard.formats.notation import dumps
from schemaguard.formats.parquet import read_footer
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.model import Schema
from schemaguard.rules.profiles import merge_schemas
from tests.oracles import as_nullable, predicted, refusal, related_pairs, writable, write_parquet

ORACLE = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def spark_merge(spark: Any, left: Schema, right: Schema) -> tuple[bool, Schema | None, str]:
    folder = Path(tempfile.mkdtemp(prefix="merge-"))
    try:
        write_parquet(left, folder / "part-0.parquet")
        write_parquet(right, folder / "part-1.parquet")
        try:
            schema = spark.read.option("mergeSchema", "true").parquet(str(folder)).schema
        except Exception as e:  # Spark's "no", when its condition is one a rule predicts
            return False, None, refusal(e)
        return True, schema_from_spark_json(schema.json()), ""
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@ORACLE
@given(pair=related_pairs())
def test_spark_merge_agrees_with_spark(spark: Any, pair: tuple[Schema, Schema]) -> None:
    left, right = pair
    assume(writable(left) and writable(right))
    ok, spark_schema, error = spark_merge(spark, left, right)
    ours = merge_schemas([left, right], "spark-merge")
    assert ours.ok == ok, (f"ours={ours.conflicts} spark={error or 'ok'}\n"
                           f"left={dumps(left)}\nright={dumps(right)}")
    if not ok:  # both refuse: for the reason our rule names
        assert predicted({c.rule.id for c in ours.conflicts}, error), (error, ours.conflicts)
    if ok:
        assert ours.merged is not None and spark_schema is not None
        assert as_nullable(ours.merged) == as_nullable(spark_schema), (
            f"\nours ={dumps(as_nullable(ours.merged))}\nspark={dumps(as_nullable(spark_schema))}")


@ORACLE
@given(pair=related_pairs())
def test_footer_reads_back_what_pyarrow_wrote(pair: tuple[Schema, Schema]) -> None:
    """The oracle tests rest on this: the footer of a written file is the schema we wrote."""
    schema = pair[1]
    assume(writable(schema))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.parquet"
        write_parquet(schema, path)
        assert read_footer(str(path)).schema == schema
