"""`make run` end to end, as a new user runs it: the demo lake built, the audit with its proofs
and the catalog, the plan of a rename read by several teams, and where the reports are; then the
catalog's `proofs` table read back by a process of its own. The shipped configuration is used as
it is: copied beside a demo folder of the test's own, so its relative paths land there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[1]
READ_PROOFS = """
import json
from schemaguard.spark import get_spark
rows = get_spark("read-proofs").sql(
    "SELECT p.proof, p.column_name, p.verdict, p.decided_by, p.partitions FROM schemaguard.proofs p "
    "JOIN schemaguard.runs r ON p.run_id = r.run_id WHERE r.status = 'complete'").collect()
print(json.dumps([r.asDict() for r in rows]))
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("make-run")
    (work / "conf").mkdir()
    shutil.copy(REPO / "conf" / "schemaguard.toml", work / "conf" / "schemaguard.toml")
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "PYSPARK_GATEWAY_PORT", "MAKEFLAGS", "MFLAGS")}
    env["SCHEMAGUARD_HOME"] = str(work / "home")  # a catalog of its own: Derby allows one process per folder
    # `-o` the venv's stamp: `make run` never reinstalls into the venv this test runs from
    done = subprocess.run(["make", "-s", "-o", ".venv/.installed", "run",
                           f"DEMO_DIR={work / '.demo' / 'lake'}",
                           f"CONF={work / 'conf' / 'schemaguard.toml'}", f"PLAN_HTML={work / 'plan.html'}"],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=900, check=False)
    proofs = subprocess.run([sys.executable, "-c", READ_PROOFS], capture_output=True, text=True, env=env,
                            timeout=600, check=False)
    return {"work": work, "make": done, "proofs": proofs}


def test_make_run_audits_proves_and_plans(made: dict[str, Any]) -> None:
    done = made["make"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "INFO:" not in done.stderr
    # one JVM for the audit; the plan, the step shown and `findings` start none of their own
    assert done.stderr.count("starting Spark") == 1, done.stderr[-2000:]
    assert "with Spark" not in done.stderr  # nor a plan or findings reading through Spark
    text = " ".join(done.stdout.split())  # as a person reads it, however the terminal wrapped it
    assert "proofs 3 proven, 3 refuted" in text
    for code in ("BACKFILL_INCOMPLETE", "DUAL_WRITE_DISAGREES", "ENUM_VALUE_UNEXPECTED"):
        assert code in text
    assert "e.g. dt=2024-02-03/" in text and "e.g. dt=2024-02-25/" in text and "e.g. dt=2024-02-20/" in text
    plan = text[text.index("needs a staged plan"):]
    steps = ["expand", "dual-write", "backfill", "move-readers", "verify-no-reads", "contract"]
    assert [plan.index(f" {s} ") for s in steps] == sorted(plan.index(f" {s} ") for s in steps)
    assert "rename customer -> customer_id" in plan
    assert "no-reads customer: refuted (5 queries by 4 reader(s)" in plan
    assert "bi, finance, marketing, support" in plan  # who still reads it, named
    # the plan of the demo's catalog table carries its Spark SQL and views
    assert "ALTER TABLE sales.orders ADD COLUMNS (`customer_id` STRING AFTER `id`);" in plan
    assert "sales.orders__v1: version 1, the old shape" in plan
    shown = text[text.index("step expand: would-apply"):]
    assert "would run: CREATE OR REPLACE VIEW `sales`.`orders__v1`" in shown
    assert "nothing written: add --apply to run it" in shown
    assert f"plan: {made['work'] / 'plan.html'}" in done.stdout
    assert "<svg" in (made["work"] / "plan.html").read_text(encoding="utf-8")
    ending = done.stdout[done.stdout.rindex("reports: "):].splitlines()
    folder = Path(ending[0].removeprefix("reports: "))
    assert (folder if folder.is_absolute() else REPO / folder).joinpath("report.html").is_file()
    assert ending[1].startswith("catalog: ") and ending[2].startswith("SELECT ")


def test_the_demo_table_is_left_as_the_demo_wrote_it(made: dict[str, Any]) -> None:
    from pyarrow import fs as pafs

    from schemaguard.formats.delta import read_delta_log
    from schemaguard.model import fields_of

    table = made["work"] / "home" / "warehouse" / "sales.db" / "orders"
    log = read_delta_log(pafs.LocalFileSystem(), str(table / "_delta_log"), str(table))
    assert [p for p, _ in fields_of(log.current.schema)] == [
        "id", "customer", "quantity", "amount", "ts", "channel", "amount_cents"]
    assert log.version == 0  # `migrate start` without --apply wrote nothing


def test_the_catalog_holds_each_proof_with_where_it_was_refuted(made: dict[str, Any]) -> None:
    read = made["proofs"]
    assert read.returncode == 0, read.stderr[-2000:]
    rows = {(r["proof"], r["column_name"]): r for r in json.loads(read.stdout.splitlines()[-1])}
    verdicts = {key: (r["verdict"], r["decided_by"]) for key, r in rows.items()}
    assert verdicts == {
        ("not-null", "channel"): ("proven", "footer"),
        ("backfilled", "amount_cents"): ("refuted", "footer"),
        ("agree", "amount_cents = amount * 100"): ("refuted", "data"),
        ("fits", "quantity:int32"): ("proven", "footer"),
        ("unit-drift", "amount"): ("proven", "footer"),
        ("values", "channel"): ("refuted", "data"),
    }
    assert rows[("backfilled", "amount_cents")]["partitions"] == ["dt=2024-02-03"]
    assert rows[("agree", "amount_cents = amount * 100")]["partitions"] == ["dt=2024-02-25"]
    assert rows[("values", "channel")]["partitions"] == [f"dt=2024-02-{d}" for d in range(20, 30)]
