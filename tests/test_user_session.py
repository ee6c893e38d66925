"""The user's own SparkSession and input, checked first and left as found: a session without
Delta is refused before anything is read or written; a data proof on the user's session leaves
their temp view `tmp_view` (the name Great Expectations uses) as it was; a column a proof names
that the table does not have, and a configured path that does not exist, are one line (exit 2)
before Spark starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import schemaguard as sg
from tests.helpers import assert_usage_error, run

ROOT = Path(__file__).resolve().parents[1]



def test_a_typo_in_a_proofs_column_is_one_line_before_spark(lake: Path) -> None:
    done = run("check", str(lake / "orders"), "--not-null", "idd", "--agree", "amount_cents = amount * 100")
    assert_usage_error(done, "not-null idd: no column idd in", "; did you mean id?")
    assert "starting Spark" not in done.stderr  # and no JVM: `make test-fast` fails any start of one
    done = run("check", str(lake / "orders"), "--backfilled", "amount_cents from amount_cent")
    assert_usage_error(done, "no column amount_cent in", "did you mean amount_cents?")


def test_an_audit_of_a_missing_path_says_so_before_spark(tmp_path: Path) -> None:
    conf = tmp_path / "audit.toml"
    conf.write_text(f'[audit]\nreport_dir = "{tmp_path / "reports"}"\n'
                    f'[[tables]]\nname = "gone"\npath = "{tmp_path / "nowhere"}"\n')
    done = run("audit", "--conf", str(conf))
    assert_usage_error(done, "table gone: no such table path:", "nowhere")
    assert "starting Spark" not in done.stderr
    assert not (tmp_path / "reports").exists()


def test_an_audit_with_its_catalog_report_refuses_a_typo_before_spark(lake: Path, tmp_path: Path) -> None:
    conf = tmp_path / "audit.toml"
    conf.write_text(f'[audit]\nreport_dir = "{tmp_path / "reports"}"\n'
                    f'[[tables]]\nname = "orders"\npath = "{lake / "orders"}"\nnot_null = ["idd"]\n')
    done = run("audit", "--conf", str(conf))  # the catalog report is on: it would need Spark
    assert_usage_error(done, "table orders: not-null idd: no column idd in", "did you mean id?")
    assert "starting Spark" not in done.stderr  # and no JVM: `make test-fast` fails any start of one
    reports = tmp_path / "reports"  # no report: at most the footer cache the reading kept
    assert [p.name for p in reports.iterdir()] == ["_cache"] if reports.exists() else True


PLAIN_SESSION = """
import sys, time
from pyspark.sql import SparkSession
import schemaguard as sg
spark = (SparkSession.builder.master("local[1]").appName("plain").config("spark.ui.enabled", "false")
         .getOrCreate())
started = time.monotonic()
try:
    sg.audit(sys.argv[1], spark=spark)
except sg.InvalidInput as e:
    print(f"refused in {time.monotonic() - started:.1f} s: {e}")
scanned = sg.scan(sys.argv[2])  # read-only work runs on a plain session
print("scan", scanned.ok, len(scanned.versions))
"""


@pytest.mark.spark
def test_a_session_without_delta_is_refused_before_anything_is_written(lake: Path, tmp_path: Path) -> None:
    conf = tmp_path / "audit.toml"
    conf.write_text(f'[audit]\nreport_dir = "{tmp_path / "reports"}"\n'
                    f'[[tables]]\nname = "orders"\npath = "{lake / "orders"}"\n')
    done = subprocess.run([sys.executable, "-c", PLAIN_SESSION, str(conf), str(lake / "orders")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    refused, scanned = done.stdout.splitlines()[-2:]
    assert refused.startswith("refused in "), done.stdout
    for named in ("spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
                  "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
                  "the delta-spark jars (spark.jars.packages=io.delta:delta-spark_4.1_2.13:4.4.0"):
        assert named in refused
    assert scanned == "scan True 4"
    assert not (tmp_path / "reports").exists()


def test_a_data_proof_leaves_the_users_temp_view_and_settings_as_they_were(spark: Any, lake: Path) -> None:
    spark.range(3).createOrReplaceTempView("tmp_view")
    spark.range(5).createOrReplaceTempView("their_other_view")
    before = (dict(spark.conf.getAll), sorted((t.name, t.isTemporary) for t in spark.catalog.listTables()))
    checked = sg.check(str(lake / "orders"), agree=["amount_cents = amount * 100"], spark=spark)
    assert checked.proofs[0].decided_by == "data"  # Great Expectations ran its query over `tmp_view`
    assert [r["id"] for r in spark.table("tmp_view").collect()] == [0, 1, 2]
    after = (dict(spark.conf.getAll), sorted((t.name, t.isTemporary) for t in spark.catalog.listTables()))
    assert after == before
    spark.catalog.dropTempView("tmp_view")
    sg.check(str(lake / "orders"), agree=["amount_cents = amount * 100"], spark=spark)
    assert not [t for t in spark.catalog.listTables() if t.name == "tmp_view"]  # none of ours left
    spark.catalog.dropTempView("their_other_view")


def test_a_first_call_on_a_new_session_leaves_its_delta_id_mapping_readable(
        spark: Any, lake: Path, tmp_path: Path) -> None:
    """Delta's extension turns Parquet field-id reads on as the session's analyzer is built, at
    its first query; when that query is ours, those settings are the session's, not ours to unset."""
    table = str(tmp_path / "ids")
    spark.sql("SELECT 1 AS id, 'a' AS name").write.format("delta") \
        .option("delta.columnMapping.mode", "id").save(table)
    fresh = spark.newSession()  # a session whose analyzer no query has built yet
    sg.check(str(lake / "orders"), agree=["amount_cents = amount * 100"], spark=fresh)
    assert fresh.conf.get("spark.sql.parquet.fieldId.read.enabled") == "true"
    assert [tuple(r) for r in fresh.read.format("delta").load(table).collect()] == [(1, "a")]


def test_audit_my_table_in_one_line(lake: Path, tmp_path: Path) -> None:
    done = run("audit", str(lake / "orders"), "--no-catalog", "--proof", "not-null id", "--proof",
               "fits quantity:int64", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the demo lake fails its audit, as with its configuration
    doc = json.loads(done.stdout)
    [table] = doc["tables"]
    assert table["name"] == "orders"
    assert [(p["proof"], p["column"], p["verdict"]) for p in table["proofs"]] == [
        ("not-null", "id", "unknown"), ("fits", "quantity:int64", "unknown")]
    assert all("3 unreadable file(s) in scope" in p["why"] for p in table["proofs"])  # the demo's damage
    assert (tmp_path / ".schemaguard" / "reports").is_dir()
    assert "starting Spark" not in done.stderr
    assert_usage_error(run("audit", str(lake / "orders"), "--conf", "x.toml"), "name tables or give --conf")
    assert_usage_error(run("audit", str(lake / "orders"), "--no-catalog", "--proof", "nulls id"),
                       "proof 'nulls id' (--proof): give KIND SUBJECT")
    assert_usage_error(run("audit", str(lake / "orders"), "--no-catalog", "--proof", "not-null idd"),
                       "no column idd", "did you mean id?")


def test_migrate_on_a_plan_of_a_parquet_folder_says_why_it_cannot_run(lake: Path, tmp_path: Path) -> None:
    orders = str(lake / "orders")
    planned = run("plan", "--table", orders, "--ddl",
                  "ALTER TABLE orders RENAME COLUMN customer TO customer_id", "--format", "json",
                  "--footer-only")
    assert planned.returncode == 1, planned.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(planned.stdout)
    done = run("migrate", "start", "--plan", str(plan))
    assert_usage_error(done, f"its table {orders} is a Parquet folder, which has no DDL")
    assert "starting Spark" not in done.stderr


def session_state(spark: Any) -> dict[str, Any]:
    """What a caller sees of their session: its settings, current database, temp views (with the
    rows of `tmp_view`), functions of their own."""
    return {"conf": dict(spark.conf.getAll), "spark_conf": dict(spark.sparkContext.getConf().getAll()),
            "database": spark.catalog.currentDatabase(),
            "temp_views": sorted(t.name for t in spark.catalog.listTables() if t.isTemporary),
            "tmp_view": sorted(tuple(r) for r in spark.table("tmp_view").collect()),
            "functions": sorted(f.name for f in spark.catalog.listFunctions() if f.isTemporary)}


def test_audit_check_plan_and_migrate_leave_the_callers_session_as_they_found_it(
        spark: Any, lake: Path, tmp_path: Path) -> None:
    from tests.helpers import run_here

    spark.sql("CREATE DATABASE IF NOT EXISTS theirs")
    spark.sql("DROP TABLE IF EXISTS theirs.parcels")
    spark.sql("CREATE TABLE theirs.parcels (id BIGINT, weight DOUBLE, status STRING) USING delta")
    spark.sql("INSERT INTO theirs.parcels VALUES (1, 1.5, 'new'), (2, NULL, 'paid')")
    spark.createDataFrame([(7, "theirs")], "n int, who string").createOrReplaceTempView("tmp_view")
    spark.udf.register("their_fn", lambda x: x)
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    before = session_state(spark)
    orders = str(lake / "orders")
    sg.check(orders, not_null=["id"], backfilled=["amount_cents"], agree=["amount_cents = amount * 100"],
             fits=["quantity:int64"], values={"channel": ["web", "store"]}, unit_drift=["amount"],
             spark=spark)
    conf = tmp_path / "audit.toml"
    conf.write_text(f'[audit]\nreport_dir = "{tmp_path / "reports"}"\n[catalog]\ndatabase = "their_reports"\n'
                    f'[[tables]]\nname = "orders"\npath = "{orders}"\n'
                    'agree = ["amount_cents = amount * 100"]\n')
    sg.audit(conf, spark=spark)
    planned = sg.plan(table="theirs.parcels", spark_catalog=True, spark=spark,
                      ddl="ALTER TABLE theirs.parcels RENAME COLUMN weight TO weight_kg")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(planned.to_dict()))
    done = run_here("migrate", "start", "--plan", str(plan), "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    after = session_state(spark)
    changed = {k for k in before["conf"].keys() | after["conf"].keys()
               if before["conf"].get(k) != after["conf"].get(k)}
    assert not changed, {k: (before["conf"].get(k), after["conf"].get(k)) for k in changed}
    assert after == before


def test_each_results_notebook_view_shows_its_own_tables_and_chosen_columns(lake: Path) -> None:
    scan = sg.scan(str(lake / "orders"))._repr_html_()
    assert scan.startswith('<div class="sg-report">')
    for heading in ("versions (4)", "findings (", "unreadable (3)"):
        assert f"<h4>{heading}" in scan
    assert "<th>changes_from_previous</th>" in scan and "<th>spark_schema</th>" not in scan  # no raw dumps
    check = sg.check(str(lake / "orders"), not_null=["id"], footer_only=True)._repr_html_()
    assert "<th>verdict</th>" in check and "<th>sample</th>" not in check
    gate = sg.gate(str(lake / "orders"))._repr_html_()
    assert "<th>left</th>" in gate and "<th>rule_text</th>" not in gate
