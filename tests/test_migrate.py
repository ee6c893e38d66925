"""The worked example end to end on a real Delta table of the local catalog: the change given as
DDL (`RENAME COLUMN weight TO weight_kg`, read by ten teams), planned with SQL per step, then each
step applied through `schemaguard migrate` with its gate, while a reader on the old shape reads
through its view: no row lost and no value changed after any step. A refuted entry check applies
nothing; a rollback after expand leaves the old readers' results as they were."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from schemaguard import meta
from tests.helpers import assert_usage_error, run_here

pytestmark = pytest.mark.spark
DDL = "ALTER TABLE mig.{t} RENAME COLUMN weight TO weight_kg"
ROWS = [(i, float(i) * 1.5, "new" if i % 2 else "paid", f"2024-01-0{1 + i % 3}") for i in range(1, 13)]


def make_table(spark: Any, name: str) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS mig")
    spark.sql(f"DROP TABLE IF EXISTS mig.{name}")
    spark.sql(f"CREATE TABLE mig.{name} (id BIGINT, weight DOUBLE, status STRING, dt STRING) USING delta "
              "PARTITIONED BY (dt)")
    spark.createDataFrame(ROWS, "id long, weight double, status string, dt string") \
        .writeTo(f"mig.{name}").append()


def query_log(path: Path, recent_weight_reader: bool) -> Path:
    """Ten teams: each read `weight` six weeks ago; in the window they read other columns (one
    still reads `weight` when `recent_weight_reader`)."""
    now = datetime.now(UTC)
    lines = [{"timestamp": (now - timedelta(days=42)).isoformat(), "user": f"team{i}",
              "query": "SELECT id, weight FROM mig.shipments"} for i in range(10)]
    lines += [{"timestamp": (now - timedelta(days=3)).isoformat(), "user": f"team{i}",
               "query": "SELECT id, status FROM mig.shipments WHERE dt = '2024-01-02'"} for i in range(10)]
    if recent_weight_reader:
        lines.append({"timestamp": (now - timedelta(days=1)).isoformat(), "user": "team7",
                      "query": "SELECT sum(weight) FROM mig.shipments"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def plan(tmp_path: Path, table: str, recent_weight_reader: bool = False) -> Path:
    done = run_here("plan", "--table", f"mig.{table}", "--spark-catalog", "--ddl", DDL.format(t=table),
                    "--query-log", str(query_log(tmp_path / f"{table}.jsonl", recent_weight_reader)),
                    "--query-table", "mig.shipments", "--format", "json")
    assert done.returncode == 1, done.stderr
    path = tmp_path / f"{table}.plan.json"
    path.write_text(done.stdout)
    return path


def rows(spark: Any, sql: str) -> set[tuple[Any, ...]]:
    return {tuple(r) for r in spark.sql(sql).collect()}


def version(spark: Any, table: str) -> int:
    return int(spark.sql(f"DESCRIBE HISTORY mig.{table} LIMIT 1").collect()[0]["version"])


def test_a_copied_home_whose_catalog_places_the_table_elsewhere_is_refused_before_any_write(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of $SCHEMAGUARD_HOME keeps its metastore's absolute locations: Spark would write the
    original table while the copy's log is read (the versions a rollback's RESTORE goes back to)."""
    make_table(spark, "moved")
    plan_file = plan(tmp_path, "moved")
    original = Path(os.environ["SCHEMAGUARD_HOME"]) / "warehouse" / "mig.db" / "moved"
    commits = sorted((original / "_delta_log").glob("*.json"))
    copy = tmp_path / "copy"
    shutil.copytree(original, copy / "warehouse" / "mig.db" / "moved")
    monkeypatch.setenv("SCHEMAGUARD_HOME", str(copy))
    done = run_here("migrate", "start", "--plan", str(plan_file), "--apply")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"schemaguard: error: mig.moved: the catalog places it at {original}, not in its warehouse "
        f"{copy / 'warehouse' / 'mig.db' / 'moved'} (a copied or moved $SCHEMAGUARD_HOME keeps the old "
        "locations): run from the home that made it")
    assert "Traceback" not in done.stderr
    assert sorted((original / "_delta_log").glob("*.json")) == commits  # nothing written
    assert not spark.catalog.tableExists("mig.moved__v1")
    from schemaguard.config import CatalogConfig
    from schemaguard.migrate import load_migration
    from schemaguard.report.catalog import migration_rows

    assert migration_rows(spark, CatalogConfig(), load_migration(plan_file).plan_id) == []  # no record


OLD_READER = "SELECT id, weight, status, dt FROM {source}"
NEW_READER = "SELECT id, weight_kg, status, dt FROM {source}"


def test_the_rename_given_as_ddl_is_applied_step_by_step_behind_its_views(spark: Any, tmp_path: Path) -> None:
    make_table(spark, "shipments")
    plan_file = plan(tmp_path, "shipments")
    doc = json.loads(plan_file.read_text())
    steps = [s["kind"] for s in doc["steps"]]
    assert steps == ["expand", "dual-write", "backfill", "move-readers", "verify-no-reads", "column-mapping",
                     "contract"]
    assert {v["name"]: v["shape"] for v in doc["views"]} == {"mig.shipments__v1": "old",
                                                              "mig.shipments__v2": "new"}
    sql = {s["kind"]: s["sql"] for s in doc["steps"]}
    assert sql["expand"][0] == "ALTER TABLE mig.shipments ADD COLUMNS (`weight_kg` DOUBLE AFTER `id`)"
    assert sql["backfill"] == ["UPDATE mig.shipments SET `weight_kg` = `weight` WHERE `weight_kg` IS NULL "
                               "AND `weight` IS NOT NULL"]
    assert sql["contract"][-1] == "ALTER TABLE mig.shipments DROP COLUMNS (`weight`)"
    assert sql["dual-write"] == [] and sql["move-readers"] == []
    expected = rows(spark, OLD_READER.format(source="mig.shipments"))
    assert len(expected) == len(ROWS)

    dry = run_here("migrate", "start", "--plan", str(plan_file))
    assert dry.returncode == 0, dry.stderr
    assert "would run: ALTER TABLE mig.shipments ADD COLUMNS" in dry.stdout
    assert version(spark, "shipments") == 1 and not spark.catalog.tableExists("mig.shipments__v1")

    for step in steps:
        if step in ("column-mapping", "contract"):
            continue
        done = run_here("migrate", "step", "--plan", str(plan_file), "--step", step, "--apply")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"step {step}: applied" in done.stdout
        ran = [line for line in done.stdout.splitlines() if line.startswith("  ran: ")]
        assert all(re.search(r"; \(\d+\.\d s\)$", line) for line in ran), ran  # each statement's time
        if step == "expand":  # writers now dual-write: new rows carry both columns
            spark.sql("INSERT INTO mig.shipments (id, weight_kg, weight, status, dt) "
                      "VALUES (100, 7.25, 7.25, 'new', '2024-01-04')")
            expected.add((100, 7.25, "new", "2024-01-04"))
        assert rows(spark, OLD_READER.format(source="mig.shipments__v1")) == expected, step
        renamed = rows(spark, NEW_READER.format(source="mig.shipments__v2"))
        assert renamed == expected, step  # the new shape reads every row's value, backfilled or not
    again = run_here("migrate", "step", "--plan", str(plan_file), "--step", "backfill", "--apply")
    assert again.returncode == 0 and "step backfill: already-applied" in again.stdout
    done = run_here("migrate", "complete", "--plan", str(plan_file), "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step column-mapping: applied" in done.stdout and "step contract: applied" in done.stdout
    assert rows(spark, NEW_READER.format(source="mig.shipments")) == expected
    assert [f.name for f in spark.table("mig.shipments").schema.fields] == ["id", "weight_kg", "status", "dt"]
    assert not spark.catalog.tableExists("mig.shipments__v1")
    status = run_here("migrate", "status", "--plan", str(plan_file))
    assert all(line.split()[1] == "applied" for line in status.stdout.splitlines()[1:]), status.stdout
    recorded = spark.sql("SELECT step, status, version_before, version_after, schemaguard_version "
                         "FROM schemaguard.migrations "
                         f"WHERE plan_id = '{status.stdout.split()[1]}' ORDER BY started_at").collect()
    assert {r["schemaguard_version"] for r in recorded} == {meta.version()}
    assert [r["step"] for r in recorded if r["status"] == "applied"] == steps
    started = {r["step"]: r["version_before"] for r in recorded if r["status"] == "started"}
    assert set(started) == set(steps)  # each step was recorded `started` before its first statement
    assert all(r["version_after"] >= r["version_before"] == started.get(r["step"], r["version_before"])
               for r in recorded if r["status"] == "applied")


def test_a_refuted_entry_check_applies_nothing(spark: Any, tmp_path: Path) -> None:
    make_table(spark, "crates")
    plan_file = plan(tmp_path, "crates", recent_weight_reader=True)  # team7 still reads weight
    before = version(spark, "crates")
    done = run_here("migrate", "complete", "--plan", str(plan_file), "--apply")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "step column-mapping: applied" in done.stdout  # it has no entry check
    assert "step contract: refused" in done.stdout and "no-reads weight: refuted" in done.stdout
    mapped = version(spark, "crates")
    assert mapped == before + 1
    again = run_here("migrate", "step", "--plan", str(plan_file), "--step", "contract", "--apply")
    assert again.returncode == 1 and "step contract: refused" in again.stdout
    assert "weight" in [f.name for f in spark.table("mig.crates").schema.fields]
    assert version(spark, "crates") == mapped


def test_rollback_after_expand_leaves_old_readers_as_they_were(spark: Any, tmp_path: Path) -> None:
    make_table(spark, "parcels")
    plan_file = plan(tmp_path, "parcels")
    old = rows(spark, "SELECT * FROM mig.parcels")
    assert run_here("migrate", "start", "--plan", str(plan_file), "--apply").returncode == 0
    assert spark.catalog.tableExists("mig.parcels__v1")
    said = run_here("migrate", "rollback", "--plan", str(plan_file))
    assert "restores version 1: discards the 1 commit(s) after it" in said.stdout, said.stdout
    assert "weight_kg" in [f.name for f in spark.table("mig.parcels").schema.fields]  # nothing written
    done = run_here("migrate", "rollback", "--plan", str(plan_file), "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    assert rows(spark, "SELECT * FROM mig.parcels") == old
    assert not spark.catalog.tableExists("mig.parcels__v1")
    status = run_here("migrate", "status", "--plan", str(plan_file))
    assert "  expand           rolled-back\n" in status.stdout, status.stdout
    redo = run_here("migrate", "start", "--plan", str(plan_file))
    assert "step expand: would-apply" in redo.stdout  # a rolled-back step can run again


def test_bad_plans_and_steps_are_one_line_errors(spark: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert_usage_error(run_here("migrate", "step", "--plan", str(bad), "--step", "expand"), "not a plan")
    assert_usage_error(run_here("migrate", "sideways", "--plan", str(bad)), "not one of")
    make_table(spark, "boxes")
    plan_file = plan(tmp_path, "boxes")
    assert_usage_error(run_here("migrate", "step", "--plan", str(plan_file), "--step", "tighten"),
                       "the plan has no such step")
    doc = json.loads(plan_file.read_text())
    doc["steps"][0]["sql"] = ["ALTER TABLE mig.other ADD COLUMNS (x INT)"]
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    assert_usage_error(run_here("migrate", "start", "--plan", str(forged), "--apply"),
                       "writes mig.other (table), which the plan does not name")


# ---------------------------------------------------------------------------------------------
# Iceberg: readers bound by field id see a rename as metadata; readers by name need the stages


def test_an_iceberg_rename_under_id_identity_is_one_metadata_step(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    from pyiceberg.schema import Schema as IcebergSchema
    from pyiceberg.types import DoubleType, LongType, NestedField

    from tests.helpers import sql_catalog

    with sql_catalog(tmp_path) as cat:
        table = cat.create_table("db.parcels", IcebergSchema(
            NestedField(1, "id", LongType(), required=False),
            NestedField(2, "weight", DoubleType(), required=False)))
        table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "weight": [1.5, 2.5, None]}))
        where = ("--catalog", "test", "--catalog-uri", f"sqlite:///{tmp_path}/catalog.db")
        ddl = "ALTER TABLE db.parcels RENAME COLUMN weight TO weight_kg"
        by_id = run_here("plan", "--table", "db.parcels", *where, "--ddl", ddl, "--identity", "id",
                         "--format", "json")
        assert by_id.returncode == 0, by_id.stderr
        doc = json.loads(by_id.stdout)
        assert [(s["kind"], s["sql"]) for s in doc["steps"]] == [("edit", [ddl])]
        plan_file = tmp_path / "by_id.json"
        plan_file.write_text(by_id.stdout)
        done = run_here("migrate", "step", "--plan", str(plan_file), "--step", "edit", "--apply", *where)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "step edit: applied (table version 0 -> 1)" in done.stdout
        table = cat.load_table("db.parcels")
        assert [f.name for f in table.schema().fields] == ["id", "weight_kg"]
        assert table.schema().find_field("weight_kg").field_id == 2
        table.append(pa.table({"id": pa.array([4], pa.int64()), "weight_kg": [4.5]}))
        back = table.scan().to_arrow().sort_by("id")
        assert back.column_names == ["id", "weight_kg"]
        assert back.to_pylist() == [{"id": 1, "weight_kg": 1.5}, {"id": 2, "weight_kg": 2.5},
                                    {"id": 3, "weight_kg": None}, {"id": 4, "weight_kg": 4.5}]
        old_file = [t.file.file_path for t in table.scan().plan_files()]
        assert len(old_file) == 2  # the file written before the rename is read by id, unchanged

        by_name = run_here("plan", "--table", "db.parcels", *where, "--ddl",
                           "ALTER TABLE db.parcels RENAME COLUMN weight_kg TO weight_g", "--identity", "name",
                           "--format", "json")
        assert by_name.returncode == 1, by_name.stderr
        staged = json.loads(by_name.stdout)
        assert [s["kind"] for s in staged["steps"]][:3] == ["expand", "dual-write", "backfill"]
        old_view = next(v for v in staged["views"] if v["shape"] == "old")
        assert old_view["name"] == "db.parcels__v2"
        assert "COALESCE(`weight_kg`, `weight_g`) AS `weight_kg`" in old_view["sql"]
        assert "column-mapping" not in [s["kind"] for s in staged["steps"]]  # Iceberg drops natively
