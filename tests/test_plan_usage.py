"""Who reads which column (plan/usage.py) and exhaustive enum consumers (plan/consumers.py): query
logs resolved with sqlglot, Spark's own event log, consumer SQL, and the plan's checks on them."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from schemaguard.errors import UsageError
from schemaguard.formats.notation import dumps, schema_from_notation
from schemaguard.plan.consumers import constraint_hits, enum_consumers, sql_files
from schemaguard.plan.usage import UnresolvedQuery, column_reads, read_log, read_usage
from tests.helpers import SCHEMAGUARD

SHIPMENTS = schema_from_notation({"fields": [
    {"name": "id", "type": "int64"}, {"name": "weight", "type": "double"},
    {"name": "status", "type": {"enum": ["new", "paid"]}},
    {"name": "addr", "type": {"struct": [{"name": "city", "type": "string"}]}}]})
ALL = frozenset({"id", "weight", "status", "addr"})
NOW = datetime.now(UTC)


@pytest.mark.parametrize(("sql", "reads"), [
    ("SELECT * FROM db.shipments", ALL),
    ("SELECT s.* FROM shipments s JOIN other o ON s.id = o.id", ALL),
    ("SELECT id, status FROM SHIPMENTS WHERE Weight > 3", {"id", "status", "weight"}),  # any case
    ("SELECT x.id AS k FROM db.shipments AS x", {"id"}),  # table and column aliases
    ("WITH recent AS (SELECT id, weight FROM shipments) SELECT id FROM recent", {"id", "weight"}),
    ("SELECT id FROM (SELECT * FROM shipments) t", ALL),  # a subquery's star is read
    ("SELECT id FROM shipments WHERE id IN (SELECT id FROM shipments WHERE weight > 3)", {"id", "weight"}),
    ("SELECT (SELECT max(weight) FROM shipments) AS top", {"weight"}),  # a scalar subquery
    ("SELECT a.id FROM shipments a JOIN shipments b USING (id)", {"id"}),
    ("SELECT * FROM shipments JOIN other USING (id)", ALL),
    ("SELECT addr.city FROM shipments", {"addr"}),  # a struct field reads its top-level column
    ("SELECT s.addr.city FROM shipments s", {"addr"}),
    ("SELECT count(*) FROM shipments", set()),
    ("SELECT id FROM other", None),  # another table
    ("SELECT id FROM warehouse.other_shipments", None),
])
def test_columns_each_query_reads(sql: str, reads: set[str] | None) -> None:
    got = column_reads(sql, "db.shipments", SHIPMENTS)
    assert got == (None if reads is None else frozenset(reads))


@pytest.mark.parametrize("sql", [
    "SELEC weight FROM shipments WHERE x = 'secret-literal'",  # does not parse
    "SELECT id FROM shipments, db.shipments",  # named with and without its database
])
def test_queries_that_cannot_be_resolved(sql: str) -> None:
    with pytest.raises(UnresolvedQuery) as caught:
        column_reads(sql, "db.shipments", SHIPMENTS)
    assert "secret" not in str(caught.value)


def write_jsonl(path: Path, rows: list[dict[str, Any]], junk: int = 0) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n" * junk)
    return path


def test_usage_over_a_log_window_readers_and_unresolved(tmp_path: Path) -> None:
    day = timedelta(days=1)
    log = write_jsonl(tmp_path / "queries.jsonl", [
        {"ts": (NOW - 40 * day).isoformat(), "user": "old-report", "query": "SELECT weight FROM shipments"},
        {"ts": (NOW - 3 * day).isoformat(), "user": "finance",
         "query": "SELECT id, weight FROM db.shipments"},
        {"ts": (NOW - 2 * day).isoformat(), "user": "ops", "query": "SELECT weight FROM shipments WHERE "
                                                                    "status = 'confidential-value'"},
        {"timestamp": int((NOW - day).timestamp() * 1000), "user_name": "ops",
         "statement": "SELECT * FROM db.shipments"},
        {"ts": (NOW - day).isoformat(), "user": "bi", "query": "SELEC weight FROM shipments 'x-literal'"},
        {"ts": (NOW - day).isoformat(), "user": "bi", "query": "SELECT 1 FROM other_table"},
    ], junk=2)
    usage = read_usage([log], "db.shipments", SHIPMENTS, since=NOW - 30 * day)
    assert (usage.queries, usage.unresolved, usage.skipped_lines) == (3, 1, 2)
    weight = usage.columns["weight"]
    assert (weight.queries, weight.readers) == (3, ("finance", "ops"))
    assert weight.last_read is not None and abs(weight.last_read - (NOW - day)) < timedelta(seconds=1)
    assert usage.unresolved_where == (f"{log}:5: does not parse",)
    text = json.dumps(asdict(usage), default=str)
    assert "confidential" not in text and "literal" not in text and "SELECT" not in text


def test_a_csv_log(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["Time", "User", "Query_Text"])
        out.writerow([NOW.isoformat(), "a", "SELECT status FROM shipments"])
        out.writerow([NOW.isoformat(), "b", "SELECT id FROM shipments"])
    usage = read_usage([path], "shipments", SHIPMENTS)
    assert {c: u.readers for c, u in usage.columns.items()} == {"status": ("a",), "id": ("b",)}
    assert [q.line for q in read_log(path)] == [2, 3]


def test_bad_logs_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\nworld\n")
    for bad in (tmp_path / "notes.txt", tmp_path / "missing.jsonl", tmp_path):
        with pytest.raises(UsageError):
            read_usage([bad], "shipments", SHIPMENTS)


def test_a_pathological_query_is_stopped_by_its_time_limit(tmp_path: Path) -> None:
    nested = "SELECT weight FROM shipments" + " UNION ALL SELECT weight FROM shipments" * 3000
    log = write_jsonl(tmp_path / "q.jsonl", [{"user": "x", "query": nested}])
    started = time.monotonic()
    usage = read_usage([log], "shipments", SHIPMENTS, time_limit=0.2)
    assert usage.unresolved == 1 and "within 0.2 s" in usage.unresolved_where[0]
    assert time.monotonic() - started < 5


@pytest.mark.slow
def test_a_million_line_log_streams_in_bounded_memory(tmp_path: Path) -> None:
    texts = ["SELECT weight FROM shipments", "SELECT id FROM db.shipments", "SELECT 1 FROM other",
             "SELECT status FROM shipments WHERE id > 3", "SELEC nope FROM shipments"]
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for i in range(1_000_000):
            record = {"ts": NOW.isoformat(), "user": f"u{i % 7}", "query": texts[i % 5]}
            handle.write(json.dumps(record) + "\n")
    usage = read_usage([path], "shipments", SHIPMENTS)
    assert (usage.queries, usage.unresolved) == (600_000, 200_000)
    assert {c: u.queries for c, u in usage.columns.items()} == {"weight": 200_000, "id": 400_000,
                                                                 "status": 200_000}
    assert len(usage.unresolved_where) == 20


# ---------------------------------------------------------------------------------------------
# Spark's own event log


@pytest.mark.spark
def test_a_spark_event_log_counts_the_columns_spark_scanned(tmp_path: Path) -> None:
    """A real Spark 4.1 application (zstd-compressed rolling event log, Spark's default) reads the
    table three ways; its scans' ReadSchema are the columns read, at the table's location."""
    script = tmp_path / "app.py"
    script.write_text(f'''
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.eventLog.enabled", "true")
         .config("spark.eventLog.dir", "{tmp_path}/events").config("spark.ui.enabled", "false").getOrCreate())
spark.range(5).selectExpr("id", "id * 2.0 AS weight", "'new' AS status").write.parquet("{tmp_path}/t")
spark.read.parquet("{tmp_path}/t").createOrReplaceTempView("shipments")
spark.sql("SELECT id, weight FROM shipments WHERE status = 'new'").collect()
spark.sql("SELECT status FROM parquet.`{tmp_path}/t`").collect()
spark.read.parquet("{tmp_path}/t").select("weight").collect()
spark.stop()
''')
    (tmp_path / "events").mkdir()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    usage = read_usage([tmp_path / "events"], "shipments", SHIPMENTS, location=str(tmp_path / "t"))
    assert {c: u.queries for c, u in usage.columns.items()} == {"id": 1, "weight": 2, "status": 2}
    assert usage.queries == 3 and usage.columns["weight"].readers  # the application's user
    elsewhere = read_usage([tmp_path / "events"], "shipments", SHIPMENTS, location=str(tmp_path / "u"))
    assert elsewhere.queries == 0


# ---------------------------------------------------------------------------------------------
# Enum consumers


CONSUMER_LOG = [
    ("analyst", "SELECT CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END AS n FROM shipments"),
    ("analyst", "SELECT CASE status WHEN 'new' THEN 1 ELSE 0 END FROM shipments"),  # has an ELSE
    ("finance", "SELECT CASE WHEN s.status = 'paid' THEN weight END FROM db.shipments s"),
    ("ops", "SELECT id FROM shipments WHERE status IN ('new', 'paid')"),
    ("ops", "SELECT status IN ('new') AS is_new FROM shipments"),  # a flag, not a filter
    ("bi", "SELECT s.id, l.label FROM shipments s JOIN ref.codes l ON s.status = l.code"),
    ("bi", "SELECT s.id, l.label FROM shipments s LEFT JOIN ref.codes l ON s.status = l.code"),
    ("bi", "SELECT CASE kind WHEN 'a' THEN 1 END FROM other"),  # another table
    ("bi", "SELEC broken FROM shipments"),
]


def test_enum_consumers_in_a_log_and_a_sql_directory(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "q.jsonl", [{"user": u, "query": q} for u, q in CONSUMER_LOG])
    scan = enum_consumers(read_log(log), "db.shipments", "status", SHIPMENTS)
    assert sorted((h.kind, h.consumer, h.where.rsplit(":", 1)[1]) for h in scan.hits) == [
        ("case-without-else", "analyst", "1"), ("case-without-else", "finance", "3"),
        ("in-list", "ops", "4"), ("inner-join", "bi", "6")]
    assert scan.unparsed == (f"{log}:9",)
    assert not any("paid" in h.detail or "new" in h.detail.split() for h in scan.hits)
    sql = tmp_path / "sql" / "reports"
    sql.mkdir(parents=True)
    (sql / "daily.sql").write_text("-- daily\nSELECT 1;\n\nSELECT CASE status\n  WHEN 'new' THEN 'N'\nEND\n"
                                   "FROM shipments;\nSELECT ';' AS semicolon FROM shipments WHERE id > 0;\n")
    [hit] = enum_consumers(sql_files(tmp_path / "sql"), "shipments", "status", SHIPMENTS).hits
    assert (hit.kind, hit.consumer, hit.where) == ("case-without-else", str(sql / "daily.sql"),
                                                   f"{sql / 'daily.sql'}:4")


def test_check_constraints_that_list_the_values() -> None:
    hits = constraint_hits({"valid": "status IN ('new', 'paid')", "positive": "id > 0",
                            "either": "status = 'new' OR status = 'paid'"}, "status")
    assert [h.consumer for h in hits] == ["constraint valid", "constraint either"]


# ---------------------------------------------------------------------------------------------
# The plan's checks on them


def test_the_plan_reads_query_logs_and_consumer_sql(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(dumps(SHIPMENTS))
    changed = schema_from_notation({"fields": [
        {"name": "id", "type": "int64"}, {"name": "weight_kg", "type": "double"},
        {"name": "status", "type": {"enum": ["new", "paid", "refunded"]}},
        {"name": "addr", "type": {"struct": [{"name": "city", "type": "string"}]}}]})
    new = tmp_path / "new.json"
    new.write_text(dumps(changed))
    recent = (NOW - timedelta(days=2)).isoformat()
    log = write_jsonl(tmp_path / "q.jsonl", [{"ts": recent, "user": u, "query": q} for u, q in CONSUMER_LOG])
    run = [str(SCHEMAGUARD), "plan", str(old), str(new), "--rename", "weight=weight_kg", "--format", "json"]

    def plan(*more: str) -> tuple[int, dict[str, Any], str]:
        done = subprocess.run([*run, *more], capture_output=True, text=True)
        return done.returncode, json.loads(done.stdout) if done.returncode != 2 else {}, done.stderr

    code, _, err = plan("--query-log", str(log))
    assert code == 2 and "need --table or --query-table" in err
    code, doc, _ = plan("--query-log", str(log), "--query-table", "db.shipments")
    checks = {c["kind"]: c for c in doc["checks"]}
    assert code == 1 and checks["no-reads"]["status"] == "refuted"
    assert checks["no-reads"]["evidence"].startswith("1 queries by 1 reader(s), last ")
    assert checks["enum-consumers"]["status"] == "refuted"
    assert checks["enum-consumers"]["evidence"].startswith("4 consumer(s) need an unknown branch")
    def status(log: Path) -> dict[str, str]:
        _, doc, _ = plan("--query-log", str(log), "--query-table", "shipments")
        return {c["kind"]: c["status"] for c in doc["checks"] if c["kind"] in ("no-reads", "enum-consumers")}

    one = {"ts": recent, "user": "a", "query": "SELECT id FROM shipments"}
    quiet = write_jsonl(tmp_path / "quiet.jsonl", [one])
    assert status(quiet) == {"no-reads": "proven", "enum-consumers": "proven"}
    murky = write_jsonl(tmp_path / "murky.jsonl", [one | {"query": "SELEC x FROM shipments"}])
    assert status(murky) == {"no-reads": "unknown", "enum-consumers": "unknown"}
    stale = write_jsonl(tmp_path / "stale.jsonl", [  # reads older than the 30-day window do not count
        {"ts": (NOW - timedelta(days=45)).isoformat(), "user": "a", "query": "SELECT weight FROM shipments"}])
    assert status(stale)["no-reads"] == "proven"
    sql = tmp_path / "sql"
    sql.mkdir()
    (sql / "report.sql").write_text("SELECT CASE status WHEN 'new' THEN 1 END FROM shipments;")
    _, doc, _ = plan("--sql", str(sql), "--query-table", "shipments")
    consumers = next(c for c in doc["checks"] if c["kind"] == "enum-consumers")
    assert consumers["status"] == "refuted" and "report.sql:1" in consumers["evidence"]
