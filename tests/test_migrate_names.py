"""Migrations on names that break hand-built SQL, on real Delta tables of the local catalog: a
top-level column `a.b` beside a struct `a` with a field `b`, a backtick, a space, a non-ASCII
letter, a rename *to* a dotted name, a table path with a space. Each runs through plan, apply,
views and rollback, and the rows are compared one by one with what was written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import assert_usage_error, run_here

pytestmark = pytest.mark.spark
MAPPED = "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', " \
         "'delta.minWriterVersion' = '5')"


def planned(tmp_path: Path, name: str, *args: str) -> dict[str, Any]:
    done = run_here("plan", *args, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    (tmp_path / f"{name}.json").write_text(done.stdout)
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def migrate(tmp_path: Path, name: str, *args: str) -> str:
    done = run_here("migrate", *args, "--plan", str(tmp_path / f"{name}.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)


def test_a_dotted_top_level_name_is_never_taken_for_the_struct_beside_it(spark: Any, tmp_path: Path) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS odd")
    spark.sql("DROP TABLE IF EXISTS odd.dotted")
    spark.sql("CREATE TABLE odd.dotted (id BIGINT, `a.b` STRING, a STRUCT<b: STRING>, dt STRING) "
              f"USING delta PARTITIONED BY (dt) {MAPPED}")
    data = [(i, None if i % 4 == 0 else f"top{i}", (f"nested{i}",), f"2024-01-0{1 + i % 2}")
            for i in range(12)]
    spark.createDataFrame(data, "id long, `a.b` string, a struct<b: string>, dt string") \
        .writeTo("odd.dotted").append()
    doc = planned(tmp_path, "dotted", "--table", "odd.dotted", "--spark-catalog", "--ddl",
                  "ALTER TABLE odd.dotted RENAME COLUMN `a.b` TO a_b")
    sql = {s["kind"]: s["sql"] for s in doc["steps"]}
    assert sql["expand"][0] == "ALTER TABLE odd.dotted ADD COLUMNS (`a_b` STRING AFTER `id`)"
    assert sql["backfill"] == [
        "UPDATE odd.dotted SET `a_b` = `a.b` WHERE `a_b` IS NULL AND `a.b` IS NOT NULL"]
    assert sql["contract"][-1] == "ALTER TABLE odd.dotted DROP COLUMNS (`a.b`)"
    old_view = next(v for v in doc["views"] if v["shape"] == "old")
    assert old_view["sql"] == ("CREATE OR REPLACE VIEW `odd`.`dotted__v1` AS SELECT `id`, COALESCE(`a.b`, "
                               "`a_b`) AS `a.b`, `a`, `dt` FROM odd.dotted")
    checks = {c["kind"]: c["subject"] for s in doc["steps"] for c in s["entry_checks"]}
    assert checks["backfilled"] == "a_b from `a.b`"

    assert "step expand: applied" in migrate(tmp_path, "dotted", "start", "--apply")
    assert "step backfill: applied" in migrate(tmp_path, "dotted", "step", "--step", "backfill", "--apply")
    assert rows(spark, "SELECT id, a_b, `a.b`, a.b, a FROM odd.dotted") == sorted(
        ((i, top, top, nested, (nested,)) for i, top, (nested,), _ in data), key=repr)
    struct = spark.table("odd.dotted").schema["a"].dataType
    assert [f.name for f in struct.fields] == ["b"]  # the struct beside it untouched
    assert rows(spark, "SELECT id, `a.b`, a.b FROM odd.dotted__v1") == sorted(
        ((i, top, nested) for i, top, (nested,), _ in data), key=repr)
    assert rows(spark, "SELECT id, a_b FROM odd.dotted__v2") == sorted(((i, top) for i, top, _, _ in data),
                                                                       key=repr)
    # backfilled as users mean it: null only where the old column is null (3 genuine nulls here)
    gate = run_here("migrate", "step", "--step", "move-readers", "--plan", str(tmp_path / "dotted.json"))
    assert "entry check backfilled a_b from `a.b`: proven" in gate.stdout, gate.stdout
    check = run_here("check", "odd.dotted", "--spark-catalog", "--backfilled", "a_b from `a.b`")
    assert check.returncode == 0 and "a_b is null only where `a.b` is null" in check.stdout, check.stdout


def test_backticks_spaces_non_ascii_and_a_dotted_new_name_plan_apply_and_roll_back(
        spark: Any, tmp_path: Path) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS odd")
    spark.sql("DROP TABLE IF EXISTS odd.quirky")
    spark.sql(f"CREATE TABLE odd.quirky (id BIGINT, `we``ird` STRING, `naïve col` INT) USING delta {MAPPED}")
    data = [(i, f"w{i}", i * 10) for i in range(6)]
    spark.createDataFrame(data, "id long, `we``ird` string, `naïve col` int").writeTo("odd.quirky").append()
    before = rows(spark, "SELECT * FROM odd.quirky")
    ddl = "ALTER TABLE odd.quirky RENAME COLUMN `we``ird` TO `we``ird2`;\n" \
          "ALTER TABLE odd.quirky RENAME COLUMN `naïve col` TO `x.y`"
    doc = planned(tmp_path, "quirky", "--table", "odd.quirky", "--spark-catalog", "--ddl", ddl)
    expand = next(s["sql"] for s in doc["steps"] if s["kind"] == "expand")
    assert expand[:2] == ["ALTER TABLE odd.quirky ADD COLUMNS (`we``ird2` STRING AFTER `id`)",
                          "ALTER TABLE odd.quirky ADD COLUMNS (`x.y` INT AFTER `we``ird2`)"]
    assert "step expand: applied" in migrate(tmp_path, "quirky", "start", "--apply")
    assert [f.name for f in spark.table("odd.quirky").schema.fields] == [
        "id", "we`ird2", "x.y", "we`ird", "naïve col"]
    assert rows(spark, "SELECT id, `we``ird`, `naïve col` FROM odd.quirky__v1") == before
    said = migrate(tmp_path, "quirky", "rollback", "--apply")
    assert "ALTER TABLE odd.quirky DROP COLUMNS (`we``ird2`, `x.y`)" in said, said
    assert rows(spark, "SELECT * FROM odd.quirky") == before
    assert not spark.catalog.tableExists("odd.quirky__v1") and not spark.catalog.tableExists("odd.quirky__v2")
    status = run_here("migrate", "status", "--plan", str(tmp_path / "quirky.json"))
    assert "  expand           rolled-back\n" in status.stdout, status.stdout


def test_a_table_path_with_a_space_gets_views_it_can_name(spark: Any, tmp_path: Path) -> None:
    where = tmp_path / "ord ers"
    spark.createDataFrame([(1, "a"), (2, None)], "id long, customer string").write.format("delta") \
        .save(str(where))
    assert_usage_error(run_here("plan", "--table", str(where), "--ddl", "ALTER TABLE t RENAME COLUMN "
                                "customer TO customer_id", "--view-name", "{table}-v{version}"),
                       "--view-name '{table}-v{version}': a view name is letters, digits and _")
    doc = planned(tmp_path, "spaced", "--table", str(where), "--ddl",
                  "ALTER TABLE `ord ers` RENAME COLUMN customer TO customer_id")
    assert [v["name"] for v in doc["views"]] == ["ord_ers__v1", "ord_ers__v2"]
    assert doc["views"][0]["sql"].startswith("CREATE OR REPLACE VIEW `ord_ers__v1` AS SELECT")
    assert "step expand: applied" in migrate(tmp_path, "spaced", "start", "--apply")
    assert rows(spark, "SELECT * FROM ord_ers__v1") == [(1, "a"), (2, None)]
    assert "step backfill: applied" in migrate(tmp_path, "spaced", "step", "--step", "backfill", "--apply")
    assert rows(spark, f"SELECT id, customer_id FROM delta.`{where}`") == [(1, "a"), (2, None)]


def test_a_statement_that_fails_is_one_line_and_recorded_failed(spark: Any, tmp_path: Path) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS odd")
    spark.sql("DROP TABLE IF EXISTS odd.boxes")
    spark.sql("CREATE TABLE odd.boxes (id BIGINT, weight DOUBLE) USING delta")
    doc = planned(tmp_path, "boxes", "--table", "odd.boxes", "--spark-catalog", "--ddl",
                  "ALTER TABLE odd.boxes RENAME COLUMN weight TO weight_kg")
    for name, statement, said in (
            ("unparsed", "ALTER TABLE odd.boxes DROP COLUMNS (`we`ird2`)", "does not parse as Spark SQL"),
            ("unresolved", "UPDATE odd.boxes SET nope = 1", "step expand failed (recorded")):
        forged = {**doc, "steps": [{**s, "sql": [statement]} if s["kind"] == "expand" else s
                                   for s in doc["steps"]]}
        (tmp_path / f"{name}.json").write_text(json.dumps(forged))
        assert_usage_error(run_here("migrate", "start", "--plan", str(tmp_path / f"{name}.json"), "--apply"),
                           said, statement[:40])
    status = run_here("migrate", "status", "--plan", str(tmp_path / "unresolved.json"))
    assert "  expand           failed" in status.stdout, status.stdout
    assert [f.name for f in spark.table("odd.boxes").schema.fields] == ["id", "weight"]
