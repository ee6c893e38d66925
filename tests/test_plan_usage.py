"""Who reads which column (plan/usage.py): query logs resolved with sqlglot, Spark's own event
log, and the plan's checks on them. Every log is a text file the test writes."""

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
from schemaguard.plan.usage import UnresolvedQuery, column_reads, read_log, read_usage
from tests.helpers import SCHEMAGUARD

SHIPMENTS = schema_from_notation({"fields": [
    {"name": "id", "type": "int64"}, {"name": "weight", "type": "double"},
    {"name": "status", "type": {"enum": ["new", "paid"]}},
    {"name": "addr", "type": {"struct": [{"name": "city", "type": "string"}]}}]})
ALL = frozenset({"id", "weight", "status", "addr"})
NOW = datetime.now(UTC)
DAY = timedelta(days=1)


@pytest.mark.parametrize(("sql", "reads"), [
    ("SELECT * FROM db.shipments", ALL),
    ("SELECT s.* FROM shipments s JOIN other o ON s.id = o.id", ALL),
    ("SELECT s.* EXCEPT (weight) FROM shipments s", ALL - {"weight"}),
    ("SELECT id, status FROM SHIPMENTS WHERE Weight > 3", {"id", "status", "weight"}),  # any case
    ("SELECT Weight FROM Prod.DB.Shipments", {"weight"}),  # catalog.db.table
    ("SELECT `weight` FROM `db`.`shipments`", {"weight"}),
    ("SELECT x.id AS k FROM db.shipments AS x ORDER BY k", {"id"}),  # table and column aliases
    ("SELECT id FROM shipments ORDER BY weight", {"id", "weight"}),
    ("WITH recent AS (SELECT id, weight FROM shipments) SELECT id FROM recent", {"id", "weight"}),
    ("WITH s AS (SELECT * FROM shipments) SELECT id FROM s", ALL),
    ("SELECT id FROM (SELECT * FROM shipments) t", ALL),  # a subquery's star is read
    ("SELECT k FROM (SELECT weight AS k FROM shipments) q", {"weight"}),
    ("SELECT id FROM shipments WHERE id IN (SELECT id FROM shipments WHERE weight > 3)", {"id", "weight"}),
    ("SELECT (SELECT max(weight) FROM shipments) AS top", {"weight"}),  # a scalar subquery
    ("SELECT id FROM shipments WHERE status IN (SELECT code FROM ref.codes)", {"id", "status"}),
    ("SELECT 1 FROM shipments s WHERE EXISTS (SELECT 1 FROM other o WHERE o.k = s.weight)", {"weight"}),
    ("SELECT a.id FROM shipments a JOIN shipments b USING (id)", {"id"}),
    ("SELECT weight FROM shipments a JOIN shipments b ON a.id = b.id", {"id", "weight"}),  # a self join
    ("SELECT * FROM shipments JOIN other USING (id)", ALL),
    ("SELECT weight FROM shipments JOIN other ON shipments.id = other.id", {"id", "weight"}),
    ("SELECT code FROM shipments JOIN other ON shipments.id = other.id", {"id"}),  # code is other's
    ("SELECT addr.city FROM shipments", {"addr"}),  # a struct field reads its top-level column
    ("SELECT s.addr.city FROM shipments s", {"addr"}),
    ("SELECT a.c FROM (SELECT addr AS a FROM shipments) AS x LATERAL VIEW inline(array(x.a)) a AS c",
     {"addr"}),
    ("SELECT addr.city FROM shipments JOIN other addr ON addr.id = shipments.id", {"id"}),  # alias first
    ("SELECT * FROM shipments PIVOT (count(*) FOR status IN ('a', 'b'))", ALL),  # grouped by the rest
    ("SELECT status, count(*) FROM shipments GROUP BY 1", {"status"}),
    ("SELECT count(*) FROM shipments", set()),
    ("INSERT INTO other SELECT weight FROM shipments", {"weight"}),
    ("INSERT INTO shipments (id, weight) SELECT k, w FROM other", set()),  # writes are no reads
    ("DELETE FROM shipments WHERE status = 'gone'", {"status"}),
    ("UPDATE shipments SET weight = weight * 2, status = 'x' WHERE id = 7", {"weight", "id"}),
    ("MERGE INTO shipments t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.status = s.status",
     {"id"}),
    ("MERGE INTO other t USING shipments s ON t.id = s.id WHEN MATCHED AND s.status = 'x' THEN "
     "UPDATE SET t.w = s.weight WHEN NOT MATCHED THEN INSERT (id, a) VALUES (s.id, s.addr)", ALL),
    ("MERGE INTO other t USING shipments s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *", ALL),
    ("DESCRIBE shipments", set()),
    ("SELECT id FROM shipments; SELECT status FROM db.shipments", {"id", "status"}),
    ("SELECT id FROM other", None),  # another table
    ("SELECT id FROM warehouse.shipments", None),  # another database
    ("SELECT shipments FROM other_shipments", None),
    ("WITH shipments AS (SELECT 1 AS x) SELECT x FROM shipments", None),  # a CTE of that name
    ("SELEC x FROM other WHERE note = 'shipments'", None),  # no parse, and the name only in a string
])
def test_columns_each_query_reads(sql: str, reads: set[str] | None) -> None:
    got = column_reads(sql, "db.shipments", SHIPMENTS)
    assert got == (None if reads is None else frozenset(reads))


@pytest.mark.parametrize(("sql", "why"), [
    ("SELEC weight FROM shipments WHERE x = 'secret-literal'", "does not parse"),
    ("SELECT id FROM shipments, db.shipments", "with and without its database"),
    # Spark looks in the subquery first: `weight` may be other's (its columns are unknown)
    ("SELECT id FROM shipments WHERE weight IN (SELECT weight FROM other WHERE k = 'secret-literal')",
     "cannot be resolved"),
    ("SELECT (SELECT max(weight) FROM other) FROM shipments", "cannot be resolved"),
    ("CACHE TABLE shipments", "CACHE statement"),
    ("OPTIMIZE shipments ZORDER BY (status)", "sqlglot cannot read"),
])
def test_queries_that_cannot_be_resolved(sql: str, why: str) -> None:
    with pytest.raises(UnresolvedQuery) as caught:
        column_reads(sql, "db.shipments", SHIPMENTS)
    assert why in str(caught.value) and "secret" not in str(caught.value)


def write_jsonl(path: Path, rows: list[dict[str, Any]], junk: int = 0) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n" * junk)
    return path


def test_usage_over_a_log_window_readers_and_unresolved(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "queries.jsonl", [
        {"ts": (NOW - 40 * DAY).isoformat(), "user": "old-report", "query": "SELECT weight FROM shipments"},
        {"ts": (NOW - 3 * DAY).isoformat(), "user": "finance",
         "query": "SELECT id, weight FROM db.shipments WHERE id > 424242"},
        {"ts": (NOW - 2 * DAY).isoformat(), "user": "ops", "query": "SELECT weight FROM shipments WHERE "
                                                                    "status = 'confidential-value'"},
        {"timestamp": int((NOW - DAY).timestamp() * 1000), "user_name": "ops",
         "statement": "SELECT * FROM db.shipments"},
        {"ts": (NOW - DAY).isoformat(), "user": "bi", "query": "SELEC weight FROM shipments 'x-literal'"},
        {"ts": (NOW - DAY).isoformat(), "user": "bi", "query": "SELECT 1 FROM other_table"},
        {"ts": (NOW + DAY).isoformat(), "user": "future", "query": "SELECT status FROM shipments"},
    ], junk=2)
    usage = read_usage([log], "db.shipments", SHIPMENTS, since=NOW - 30 * DAY, until=NOW)
    assert (usage.queries, usage.unresolved, usage.skipped_lines) == (3, 1, 2)
    assert {c: (u.queries, u.readers) for c, u in usage.columns.items()} == {
        "weight": (3, ("finance", "ops")), "id": (2, ("finance", "ops")),
        "status": (2, ("ops",)), "addr": (1, ("ops",))}
    weight = usage.columns["weight"].last_read
    assert weight is not None and abs(weight - (NOW - DAY)) < timedelta(seconds=1)
    assert usage.unresolved_where == (f"{log}:5: does not parse",)
    text = json.dumps(asdict(usage), default=str)
    assert not any(s in text for s in ("confidential", "literal", "424242", "SELECT", "other_table"))


def test_json_lines_records_times_and_malformed_lines(tmp_path: Path) -> None:
    seconds, query = int((NOW - DAY).timestamp()), "SELECT id FROM shipments"
    log = tmp_path / "q.log"  # the name says nothing: the content does
    log.write_text("\n".join([
        "",  # blank lines are no records
        json.dumps({"TIME": seconds, "Principal": "a", "SQL": query}),
        json.dumps({"event_time": seconds * 1_000_000, "executed_by": "b", "query_text": query}),  # µs
        json.dumps({"start_time": "2020-01-02 03:04:05", "username": "c", "text": query}),
        "[1, 2]",  # JSON, but no record
        json.dumps({"ts": seconds, "user": "d"}),  # no query
        '{"ts": 1, "query": "SELECT id FROM shipm',  # cut off
        "",
    ]) + "\n")
    queries = list(read_log(log))
    assert [(q.line, q.user) for q in queries] == [(2, "a"), (3, "b"), (4, "c")]
    assert queries[0].timestamp == queries[1].timestamp == datetime.fromtimestamp(seconds, UTC)
    assert queries[2].timestamp == datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    usage = read_usage([log], "shipments", SHIPMENTS, since=datetime(2021, 1, 1))  # naive: UTC
    assert (usage.columns["id"].readers, usage.skipped_lines) == (("a", "b"), 3)


def test_a_csv_log(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    with path.open("w", newline="", encoding="utf-8-sig") as handle:  # a BOM, as spreadsheets write
        out = csv.writer(handle)
        out.writerow(["Time", "User", "Query_Text"])
        out.writerow([NOW.isoformat(), "a", "SELECT status\nFROM shipments\nWHERE id > 1"])  # three lines
        out.writerow([str(int(NOW.timestamp() * 1000)), "b", "SELECT id FROM shipments"])  # epoch ms
        out.writerow([])
        out.writerow([NOW.isoformat(), "c", "SELECT weight FROM shipments WHERE x = '" + "y" * 200_000 + "'"])
        out.writerow([NOW.isoformat(), "d", "SELECT addr FROM shipments"])
    assert [(q.line, q.user) for q in read_log(path)] == [(2, "a"), (5, "b"), (8, "d")]
    usage = read_usage([path], "shipments", SHIPMENTS)
    assert {c: u.readers for c, u in usage.columns.items()} == {
        "status": ("a",), "id": ("a", "b"), "addr": ("d",)}
    assert usage.skipped_lines == 1  # the row over csv's field limit
    assert usage.columns["id"].last_read is not None and abs(usage.columns["id"].last_read - NOW) < DAY


def test_bad_logs_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\nworld\n")
    (tmp_path / "empty").mkdir()
    for bad in (tmp_path / "notes.txt", tmp_path / "missing.jsonl", tmp_path / "empty"):
        with pytest.raises(UsageError) as caught:
            read_usage([bad], "shipments", SHIPMENTS)
        assert str(bad) in str(caught.value) and "\n" not in str(caught.value)


def test_a_pathological_query_is_stopped_by_its_time_limit(tmp_path: Path) -> None:
    nested = "SELECT weight FROM shipments" + " UNION ALL SELECT weight FROM shipments" * 3000
    log = write_jsonl(tmp_path / "q.jsonl", [{"user": "x", "query": nested},
                                             {"user": "y", "query": "SELECT id FROM shipments"}])
    started = time.monotonic()
    usage = read_usage([log], "shipments", SHIPMENTS, time_limit=0.2)
    assert usage.unresolved == 1 and usage.unresolved_where == (f"{log}:1: not resolved within 0.2 s",)
    assert usage.columns["id"].readers == ("y",)  # the run goes on
    assert time.monotonic() - started < 5


@pytest.mark.slow
def test_a_million_line_log_streams_with_one_resolution_per_text(tmp_path: Path) -> None:
    texts = ["SELECT weight FROM shipments", "SELECT id FROM db.shipments", "SELECT 1 FROM other",
             "SELECT status FROM shipments WHERE id > 3", "SELEC nope FROM shipments"]
    lines = [json.dumps({"ts": (NOW - i * DAY).isoformat(), "user": f"u{i}", "query": t}) + "\n"
             for i, t in enumerate(texts)]
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for _ in range(200_000):
            handle.writelines(lines)
    started = time.monotonic()
    usage = read_usage([path], "shipments", SHIPMENTS)
    assert time.monotonic() - started < 30  # a few seconds; the margin is for a loaded machine
    assert (usage.queries, usage.unresolved, usage.skipped_lines) == (600_000, 200_000, 0)
    assert {c: (u.queries, u.readers) for c, u in usage.columns.items()} == {
        "weight": (200_000, ("u0",)), "id": (400_000, ("u1", "u3")), "status": (200_000, ("u3",))}
    assert len(usage.unresolved_where) == 20


# ---------------------------------------------------------------------------------------------
# Spark's own event log


def sql_start(execution: int, *scans: dict[str, Any]) -> str:
    """One SparkListenerSQLExecutionStart line as Spark 4.1 writes it (the keys this reads)."""
    plan = {"nodeName": "Project", "metadata": {}, "children": list(scans)}
    return json.dumps({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                       "executionId": execution, "description": "collect at job.py:7",
                       "time": int(NOW.timestamp() * 1000), "sparkPlanInfo": plan})


def file_scan(location: str, read_schema: str) -> dict[str, Any]:
    return {"nodeName": "Scan parquet ", "children": [], "metadata": {
        "Location": f"InMemoryFileIndex(1 paths)[file:{location}]", "ReadSchema": read_schema}}


def test_event_log_scans_count_at_the_tables_location(tmp_path: Path) -> None:
    log = tmp_path / "app-1"
    log.write_text("\n".join([
        json.dumps({"Event": "SparkListenerApplicationStart", "User": "etl"}),
        json.dumps({"Event": "SparkListenerJobStart", "Job ID": 0}),  # not a query, not malformed
        sql_start(0, file_scan("/lake/shipments", "struct<id:bigint,Weight:double>")),
        sql_start(1, file_scan("/lake/shipments/day=1", "struct<addr:struct<city:string>>"),
                  file_scan("/lake/shipments", "struct<addr:struct<city:string>,id:bigint>")),
        sql_start(2, file_scan("/lake/shipments_old", "struct<status:string>")),  # another table
        sql_start(3),  # a command: no scan
    ]) + "\n")
    usage = read_usage([log], "shipments", SHIPMENTS, location="file:///lake/shipments/")
    assert {c: (u.queries, u.readers) for c, u in usage.columns.items()} == {
        "id": (2, ("etl",)), "weight": (1, ("etl",)), "addr": (1, ("etl",))}
    assert (usage.queries, usage.unresolved, usage.skipped_lines) == (2, 0, 0)
    unknown = read_usage([log], "shipments", SHIPMENTS)  # scans, but where the table is is not given
    assert (unknown.queries, unknown.unresolved) == (0, 3)
    v2 = tmp_path / "app-2"
    v2.write_text(sql_start(0, {"nodeName": "BatchScan local.db.shipments", "metadata": {}}) + "\n")
    assert read_usage([v2], "shipments", SHIPMENTS, location="/lake/shipments").unresolved_where == (
        f"{v2}:1: a Spark data source V2 scan names no location",)


@pytest.mark.spark
def test_a_spark_event_log_counts_the_columns_spark_scanned(tmp_path: Path) -> None:
    """A real Spark 4.1 application (zstd-compressed rolling event log, Spark's default) reads the
    table four ways; each execution's scans name the columns read, at the table's location."""
    script = tmp_path / "app.py"
    script.write_text(f'''
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.eventLog.enabled", "true")
         .config("spark.eventLog.dir", "{tmp_path}/events").config("spark.ui.enabled", "false").getOrCreate())
spark.range(5).selectExpr("id", "id * 2.0 AS weight", "'new' AS status",
                          "named_struct('city', 'x') AS addr").write.parquet("{tmp_path}/t")
spark.read.parquet("{tmp_path}/t").createOrReplaceTempView("shipments")
spark.sql("SELECT id, weight FROM shipments WHERE status = 'new'").collect()
spark.sql("SELECT status, addr.city FROM parquet.`{tmp_path}/t`").collect()
spark.read.parquet("{tmp_path}/t").select("weight").collect()
spark.sql("SELECT a.id FROM shipments a JOIN shipments b ON a.id = b.id").collect()
spark.stop()
''')
    (tmp_path / "events").mkdir()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    usage = read_usage([tmp_path / "events"], "shipments", SHIPMENTS, location=str(tmp_path / "t"))
    assert {c: u.queries for c, u in usage.columns.items()} == {"id": 2, "weight": 2, "status": 2, "addr": 1}
    assert (usage.queries, usage.unresolved, usage.skipped_lines) == (4, 0, 0)
    assert usage.columns["weight"].readers  # the application's user
    elsewhere = read_usage([tmp_path / "events"], "shipments", SHIPMENTS, location=str(tmp_path / "u"))
    assert elsewhere.queries == 0


# ---------------------------------------------------------------------------------------------
# The plan's checks on them


CONSUMER_LOG = [
    ("analyst", "SELECT CASE status WHEN 'new' THEN 1 WHEN 'paid' THEN 2 END AS n FROM shipments"),
    ("finance", "SELECT CASE WHEN s.status = 'paid' THEN weight END FROM db.shipments s"),
    ("ops", "SELECT id FROM shipments WHERE status IN ('new', 'paid')"),
    ("bi", "SELECT s.id, l.label FROM shipments s JOIN ref.codes l ON s.status = l.code"),
    ("bi", "SELEC broken FROM shipments"),
]


def test_the_plan_reads_query_logs_and_consumer_sql(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(dumps(SHIPMENTS))
    changed = schema_from_notation({"fields": [
        {"name": "id", "type": "int64"}, {"name": "weight_kg", "type": "double"},
        {"name": "status", "type": {"enum": ["new", "paid", "refunded"]}},
        {"name": "addr", "type": {"struct": [{"name": "city", "type": "string"}]}}]})
    new = tmp_path / "new.json"
    new.write_text(dumps(changed))
    recent = (NOW - 2 * DAY).isoformat()
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
        {"ts": (NOW - 45 * DAY).isoformat(), "user": "a", "query": "SELECT weight FROM shipments"}])
    assert status(stale)["no-reads"] == "proven"
    sql = tmp_path / "sql"
    sql.mkdir()
    (sql / "report.sql").write_text("SELECT CASE status WHEN 'new' THEN 1 END FROM shipments;")
    _, doc, _ = plan("--sql", str(sql), "--query-table", "shipments")
    consumers = next(c for c in doc["checks"] if c["kind"] == "enum-consumers")
    assert consumers["status"] == "refuted" and "report.sql:1" in consumers["evidence"]
