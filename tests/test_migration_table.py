"""A rename in the middle of its migration, on a table Spark wrote: `weight` is being renamed to
`weight_kg`; writers dual-write from the second day, the first day missed the backfill, and two
rows of the third day disagree. The proofs must match Spark's own counts on its own files, and the
plan with `--table` must show the checks refuted where they are; the migration job gates a step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemaguard.formats.notation import dumps, schema_from_notation
from schemaguard.lake.table import read
from schemaguard.planning.evidence import Evidence, judge
from schemaguard.planning.planner import PlanRequest, build_plan
from schemaguard.proofs import Proof
from schemaguard.proofs.run import run_proofs
from tests.helpers import SCHEMAGUARD

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[1]
OLD = schema_from_notation({"fields": [{"name": "id", "type": "int64", "nullable": True},
                                       {"name": "weight", "type": "double", "nullable": True}]})
NEW = schema_from_notation({"fields": [{"name": "id", "type": "int64", "nullable": True},
                                       {"name": "weight_kg", "type": "double", "nullable": True}]})


@pytest.fixture(scope="module")
def shipments(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("migration") / "shipments"
    spark.createDataFrame([(i, float(i)) for i in range(1, 6)], "id long, weight double") \
        .selectExpr("*", "'2024-01-01' AS dt").write.partitionBy("dt").parquet(str(root))
    rows = [(day * 10 + i, float(i), float(i) + (0.5 if day == 3 and i > 3 else 0.0), f"2024-01-0{day}")
            for day in (2, 3, 4) for i in range(1, 6)]
    spark.createDataFrame(rows, "id long, weight double, weight_kg double, dt string") \
        .write.mode("append").partitionBy("dt").parquet(str(root))
    return root


def test_the_proofs_match_what_spark_reads(spark: Any, shipments: Path) -> None:
    table = read(str(shipments), workers=1)
    backfilled, agree, not_null = run_proofs(
        table, [Proof("backfilled", "weight_kg"), Proof("agree", "weight = weight_kg"),
                Proof("not-null", "weight")], spark=lambda: spark, keys=("id",))
    engine = spark.read.option("mergeSchema", "true").parquet(str(shipments))
    missing = engine.where("weight_kg IS NULL")
    assert (backfilled.verdict, backfilled.decided_by) == ("refuted", "footer")
    assert backfilled.count == missing.count()
    assert backfilled.partitions == tuple(sorted({f"dt={r.dt}" for r in missing.select("dt").collect()}))
    disagree = engine.where("weight <> weight_kg")
    assert (agree.verdict, agree.count, agree.partitions) == ("refuted", disagree.count(), ("dt=2024-01-03",))
    assert sorted(s["id"] for s in agree.sample) == sorted(r.id for r in disagree.select("id").collect())
    assert (not_null.verdict, not_null.decided_by, not_null.rows_read) == ("proven", "footer", 0)


def test_the_plan_on_the_table_shows_where_the_migration_stands(spark: Any, shipments: Path) -> None:
    table = read(str(shipments), workers=1)
    request = PlanRequest(OLD, NEW, identity="name", renames=(("weight", "weight_kg"),),
                          history=tuple(v.footer.schema for v in table.versions), table=str(shipments))
    plan = build_plan(request, judge(Evidence(NEW, table, lambda: spark)))
    checks = {c.kind: c for c in plan.checks}
    assert checks["backfilled"].status == "refuted" and "dt=2024-01-01" in checks["backfilled"].evidence
    assert checks["agree"].status == "refuted"
    assert checks["agree"].evidence.startswith("2 offending rows in dt=2024-01-03")
    assert checks["no-reads"].status == "not-run"
    assert plan.strategy == "expand-contract" and plan.exit_code == 1


def test_the_plan_command_and_the_migration_job_gate_a_step(shipments: Path, tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text(dumps(OLD))
    (tmp_path / "new.json").write_text(dumps(NEW))
    done = subprocess.run([str(SCHEMAGUARD), "plan", str(tmp_path / "old.json"), str(tmp_path / "new.json"),
                           "--table", str(shipments), "--rename", "weight=weight_kg", "--footer-only",
                           "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    status = {c["kind"]: c["status"] for c in doc["checks"]}
    assert status == {"backfilled": "refuted", "agree": "unknown", "no-reads": "not-run"}
    plan = tmp_path / "plan.json"
    plan.write_text(done.stdout)
    job = [sys.executable, str(ROOT / "jobs" / "migration_check.py"), "--plan", str(plan)]
    contract = subprocess.run([*job, "--step", "contract"], capture_output=True, text=True)
    assert contract.returncode == 3 and "no-reads weight: not-run" in contract.stderr  # nobody looked yet
    move = subprocess.run([*job, "--step", "move-readers", "--format", "json"], capture_output=True,
                          text=True)
    assert move.returncode == 2  # the job takes the plan and the step, nothing else
    move = subprocess.run([*job, "--step", "move-readers"], capture_output=True, text=True)
    assert move.returncode == 1, move.stderr  # the backfill is refuted again, on the data now
    assert "backfilled" in move.stdout and "refuted" in move.stdout.lower()
