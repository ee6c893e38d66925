"""A Delta table's own schema changes against delta-spark: `compare` and `evolve` under the Delta
profiles say ENGINE_REFUSES exactly for the changes delta-spark refuses on a table without column
mapping (a drop or a rename, top level or nested), and nothing for those it makes; under column
mapping (`name`) it refuses none of them, and neither does the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schemaguard as sg

pytestmark = pytest.mark.spark

COLUMNS = "id BIGINT, note STRING, Amount DOUBLE, s STRUCT<a: INT, b: STRING>"
CHANGES = {  # statement -> whether delta-spark refuses it on a table without column mapping
    "DROP COLUMN note": True,
    "DROP COLUMNS (note, Amount)": True,
    "DROP COLUMN s.b": True,
    "RENAME COLUMN note TO remark": True,
    "RENAME COLUMN s.a TO a2": True,
    "ADD COLUMNS (origin STRING)": False,
    "ADD COLUMNS (s.c BIGINT)": False,
    "ALTER COLUMN note COMMENT 'free text'": False,
}
MAPPED = "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', " \
         "'delta.minWriterVersion' = '5')"
DELTA_REFUSALS = ("DELTA_UNSUPPORTED_DROP_COLUMN", "DELTA_UNSUPPORTED_RENAME_COLUMN",
                  "DELTA_UNSUPPORTED_DROP_NESTED_COLUMN_FROM_NON_STRUCT_TYPE")


def altered(spark: Any, path: Path, change: str, mapped: bool) -> tuple[Any, Any, bool]:
    """The table's schema before and after `change` (None after when delta-spark refused it)."""
    spark.sql(f"CREATE TABLE delta.`{path}` ({COLUMNS}) USING delta {MAPPED if mapped else ''}")
    before = spark.read.format("delta").load(str(path)).schema
    try:
        spark.sql(f"ALTER TABLE delta.`{path}` {change}")
    except Exception as e:  # only delta-spark's own refusal counts as its "no"
        condition = getattr(e, "getCondition", lambda: None)()
        assert condition in DELTA_REFUSALS, (condition, e)
        return before, None, True
    return before, spark.read.format("delta").load(str(path)).schema, False


@pytest.mark.parametrize("change", list(CHANGES))
def test_engine_refusals_are_the_changes_delta_spark_refuses(spark: Any, tmp_path: Path, change: str) -> None:
    _, _, unmapped_refused = altered(spark, tmp_path / "plain", change, mapped=False)
    before, after, mapped_refused = altered(spark, tmp_path / "mapped", change, mapped=True)
    assert (unmapped_refused, mapped_refused) == (CHANGES[change], False)
    for profile in ("delta-read", "delta-merge", "delta-stream"):
        for mapping, refused in (("none", unmapped_refused), ("name", mapped_refused)):
            compared = sg.compare(before, after, profile=profile, column_mapping=mapping).to_dict()
            said = [p for p in compared["problems"] if p["code"] == "ENGINE_REFUSES"]
            assert bool(said) == refused, (profile, mapping, said)
            evolved = sg.evolve(before, after, mode="BACKWARD", profile=profile, column_mapping=mapping)
            codes = [p["code"] for f in evolved.to_dict()["failed"] for p in f["problems"]]
            assert ("ENGINE_REFUSES" in codes) == refused, (profile, mapping, codes)
    plain = sg.compare(before, after, profile="spark-read").to_dict()  # not a Delta table's reader
    assert not [p for p in plain["problems"] if p["code"] == "ENGINE_REFUSES"]
