"""`schemaguard migrate --apply` killed with SIGKILL (the process and its JVM) right after each of
its commits, found by watching the table's `_delta_log`, and at a random moment: the table is at
the version before or after each statement, never between; `migrate status` (read from the
`migrations` table's log, no Spark) says the step is `started` with the true version before it; a
rerun finishes the step; a rollback, killed too and run again, gives back the rows exactly.

Each command runs as its own process with a catalog of its own (SCHEMAGUARD_HOME), as a scheduler
would run it; the tests' session reads the table by path."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SCHEMAGUARD, run_here

pytestmark = [pytest.mark.spark, pytest.mark.slow]
SEED = int(os.environ.get("SCHEMAGUARD_KILL_SEED", random.randrange(1 << 30)))
ROWS = [(i, None if i % 7 == 0 else i * 0.5, f"2024-01-0{1 + i % 4}") for i in range(400)]


def commits(table: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (table / "_delta_log").glob("*.json"))


def migrate(home: Path, plan: Path, *args: str, kill_at_commit: tuple[Path, int] | None = None,
            kill_after: float | None = None) -> subprocess.CompletedProcess[str]:
    """`schemaguard migrate ... --plan P` as its own process; killed (with its JVM) as soon as the
    table's log holds commit `kill_at_commit`, or `kill_after` seconds in."""
    env = {**os.environ, "SCHEMAGUARD_HOME": str(home)}
    proc = subprocess.Popen([str(SCHEMAGUARD), "migrate", *args, "--plan", str(plan)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    started = time.monotonic()
    while proc.poll() is None:
        due = kill_after is not None and time.monotonic() - started >= kill_after
        if kill_at_commit is not None:
            table, version = kill_at_commit
            due = (table / "_delta_log" / f"{version:020d}.json").exists()
        if due:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.002)
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def table_rows(spark: Any, table: Path, columns: str = "*") -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in spark.sql(f"SELECT {columns} FROM delta.`{table}`").collect()), key=repr)


def status_of(home: Path, plan: Path) -> dict[str, str]:
    said = migrate(home, plan, "status")
    assert said.returncode == 0, said.stderr
    assert "starting Spark" not in said.stderr  # read from the migrations table's own log
    return {line.split()[0]: line.split(None, 1)[1] for line in said.stdout.splitlines()[1:]}


def test_a_step_killed_after_each_commit_resumes_and_a_killed_rollback_restores_every_row(
        spark: Any, tmp_path: Path) -> None:
    print(f"SCHEMAGUARD_KILL_SEED={SEED}")  # give it back to replay the random kill
    table, home = tmp_path / "parcels", tmp_path / "home"
    spark.createDataFrame(ROWS, "id long, weight double, dt string").write.format("delta") \
        .partitionBy("dt").save(str(table))
    original = table_rows(spark, table)
    plan = tmp_path / "plan.json"
    done = run_here("plan", "--table", str(table), "--ddl",
                    "ALTER TABLE parcels RENAME COLUMN weight TO weight_kg", "--format", "json")
    plan.write_text(done.stdout)
    assert [s["kind"] for s in json.loads(done.stdout)["steps"]][:3] == ["expand", "dual-write", "backfill"]
    [v0] = commits(table)

    # expand: killed the moment ADD COLUMNS commits, before its views
    killed = migrate(home, plan, "start", "--apply", kill_at_commit=(table, v0 + 1))
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert commits(table) == [v0, v0 + 1]
    assert table_rows(spark, table, "id, weight, dt, weight_kg") == [(*r, None) for r in original]
    assert status_of(home, plan)["expand"] == f"started (table version {v0} before it)"
    rerun = migrate(home, plan, "start", "--apply")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"step expand: applied (table version {v0} -> {v0 + 1})" in rerun.stdout
    assert "resumed: the step was started before and not finished" in rerun.stdout
    [added] = [line for line in rerun.stdout.splitlines() if "ADD COLUMNS" in line]
    assert added.endswith("; (skipped: the table already shows it)")  # the killed run committed it

    # backfill: killed the moment its UPDATE commits, before its record
    killed = migrate(home, plan, "step", "--step", "backfill", "--apply", kill_at_commit=(table, v0 + 2))
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert table_rows(spark, table, "id, weight_kg, dt") == original  # the one commit is whole
    assert status_of(home, plan)["backfill"] == f"started (table version {v0 + 1} before it)"
    rerun = migrate(home, plan, "step", "--step", "backfill", "--apply")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"step backfill: applied (table version {v0 + 1} -> " in rerun.stdout
    assert table_rows(spark, table, "id, weight_kg, dt") == original

    # rollback: killed at a random moment, then run again
    now = commits(table)[-1]
    killed = migrate(home, plan, "rollback", "--apply", kill_after=random.Random(SEED).uniform(2.0, 30.0))
    assert commits(table)[-1] in (now, now + 1)  # before the RESTORE, or its one commit
    rerun = migrate(home, plan, "rollback", "--apply")
    assert rerun.returncode == 0, killed.stdout + rerun.stdout + rerun.stderr
    assert table_rows(spark, table) == original
    schema = spark.read.format("delta").load(str(table)).schema
    assert [f.name for f in schema.fields] == ["id", "weight", "dt"]
    assert status_of(home, plan)["expand"] == "rolled-back"


def test_an_iceberg_metadata_step_killed_after_its_commit_is_finished_without_a_second_commit(
        spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    from pyiceberg.schema import Schema as IcebergSchema
    from pyiceberg.types import DoubleType, LongType, NestedField

    from tests.helpers import sql_catalog

    home, plan = tmp_path / "home", tmp_path / "plan.json"
    with sql_catalog(tmp_path) as cat:
        table = cat.create_table("db.parcels", IcebergSchema(
            NestedField(1, "id", LongType(), required=False),
            NestedField(2, "weight", DoubleType(), required=False)))
        table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "weight": [1.5, None]}))
        where = ("--catalog", "test", "--catalog-uri", f"sqlite:///{tmp_path}/catalog.db")
        done = run_here("plan", "--table", "db.parcels", *where, "--ddl",
                        "ALTER TABLE db.parcels RENAME COLUMN weight TO weight_kg", "--identity", "id",
                        "--format", "json")
        plan.write_text(done.stdout)
        metadata = Path(table.metadata_location.removeprefix("file://")).parent
        known = set(metadata.glob("*.metadata.json"))

        def current() -> str:  # the catalog's pointer, read from its sqlite file: the commit itself
            with sqlite3.connect(tmp_path / "catalog.db") as db:
                return str(db.execute("SELECT metadata_location FROM iceberg_tables").fetchone()[0])

        before = current()
        env = {**os.environ, "SCHEMAGUARD_HOME": str(home)}
        step = [str(SCHEMAGUARD), "migrate", "step", "--step", "edit", "--apply", "--plan", str(plan), *where]
        proc = subprocess.Popen(step, env=env, start_new_session=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        while proc.poll() is None and current() == before:
            time.sleep(0.002)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=300)
        assert [f.name for f in cat.load_table("db.parcels").schema().fields] == ["id", "weight_kg"]
        assert status_of(home, plan)["edit"] == "started (table version 0 before it)"
        rerun = subprocess.run(step, env=env, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert "step edit: applied (table version 0 -> 1)" in rerun.stdout
        assert "the table's schema already shows the step: nothing committed" in rerun.stdout
        assert len(set(metadata.glob("*.metadata.json")) - known) == 1  # one commit, the killed run's
        assert current() != before
        assert cat.load_table("db.parcels").schema().find_field("weight_kg").field_id == 2
