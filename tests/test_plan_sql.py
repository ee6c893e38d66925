"""The plan's SQL runs as written on delta-spark: for each change given as DDL, every step's
statements applied in order to a real Delta table leave it in NEW's shape (names, order, types,
nullability), except where Delta cannot say NOT NULL and the plan uses a CHECK constraint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.planning.ddl import apply_ddl
from tests.helpers import run_here
from tests.test_plan_ddl import shape

pytestmark = pytest.mark.spark
CREATE = "CREATE TABLE delta.`{path}` (id BIGINT NOT NULL, weight INT, note STRING, dt STRING) USING delta " \
         "PARTITIONED BY (dt)"
CHANGES = {
    "add a column with a comment": "ALTER TABLE t ADD COLUMNS (origin STRING COMMENT 'country' AFTER id)",
    "widen a column": "ALTER TABLE t SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true'); "
                      "ALTER TABLE t ALTER COLUMN weight TYPE BIGINT",
    "rename a column (staged)": "ALTER TABLE t RENAME COLUMN weight TO weight_kg",
    "drop a column (staged)": "ALTER TABLE t DROP COLUMN note",
    "relax a column": "ALTER TABLE t ALTER COLUMN id DROP NOT NULL",
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_every_steps_sql_runs_and_ends_in_the_new_shape(spark: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / "t"
    spark.sql(CREATE.format(path=path))
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 10, 'a', '2024-01-01'), (2, NULL, 'b', '2024-01-02')")
    done = run_here("plan", "--table", str(path), "--ddl", CHANGES[name], "--deploy-order", "readers-first",
                    "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    for step in doc["steps"]:
        for statement in step["sql"]:
            spark.sql(statement)
    table = schema_from_spark_json(spark.read.format("delta").load(str(path)).schema.json())
    before = schema_from_spark_json(json.dumps({"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": False, "metadata": {}},
        {"name": "weight", "type": "integer", "nullable": True, "metadata": {}},
        {"name": "note", "type": "string", "nullable": True, "metadata": {}},
        {"name": "dt", "type": "string", "nullable": True, "metadata": {}}]}))
    new = apply_ddl(before, CHANGES[name], "--ddl", "t").new
    assert shape(table) == shape(new), [s["kind"] for s in doc["steps"]]
    rows = spark.read.format("delta").load(str(path)).orderBy("id").collect()
    assert len(rows) == 2  # no row lost by any step
