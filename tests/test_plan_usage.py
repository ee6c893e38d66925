"""Who reads which column (planning/usage/): query logs resolved with sqlglot, Spark's own event
logs (real ones written by Spark with each codec, and hand-written ones), OpenLineage run events,
and the plan's checks on them."""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import sqlglot

from schemaguard.errors import UsageError
from schemaguard.formats.notation import dumps, schema_from_notation
from schemaguard.planning.usage.limits import QueryTimeout, within
from schemaguard.planning.usage.logs import open_log, read_log
from schemaguard.planning.usage.records import UnresolvedQuery
from schemaguard.planning.usage.resolve import column_reads
from schemaguard.planning.usage.tally import query_outcomes, read_usage
from tests.helpers import run

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


def test_the_time_limit_stops_work_that_never_ends() -> None:
    query = "SELECT weight FROM shipments WHERE id > 3"
    with pytest.raises(QueryTimeout):
        within(0.05, lambda: [sqlglot.parse_one(query) for _ in itertools.count()])
    assert within(0.05, lambda: "done") == "done"  # and leaves quick work alone


def test_the_time_limit_works_off_the_main_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # a notebook's or a scheduler's worker thread: signals never reach it
    query = "SELECT weight FROM shipments WHERE id > 3"
    died: list[type[BaseException] | None] = []  # a thread ended by an exception (ours or theirs)
    monkeypatch.setattr(threading, "excepthook", lambda failed: died.append(failed.exc_type))

    def endless() -> str:
        try:
            within(0.05, lambda: [sqlglot.parse_one(query) for _ in itertools.count()])
        except QueryTimeout:
            return "stopped"
        return "not stopped"

    def racing() -> int:
        # limits about as long as the work: each ends either way, and no timeout is left pending
        ended = 0
        for i in range(150):
            with contextlib.suppress(QueryTimeout):
                within(0.001 * (i % 30), lambda: [sqlglot.parse_one(query).sql() for _ in range(20)])
            ended += 1
        time.sleep(0.05)  # a timeout left pending would be raised here, outside `within`
        return ended

    with ThreadPoolExecutor(2) as pool:
        stopped, raced = pool.submit(endless), pool.submit(racing)
        assert stopped.result(timeout=60) == "stopped"
        assert raced.result(timeout=60) == 150
    assert died == []


def test_a_pathological_query_is_stopped_by_its_time_limit(tmp_path: Path) -> None:
    # 30,000 unions: its parse alone takes seconds here, so no machine resolves it within 0.2 s
    nested = "SELECT weight FROM shipments" + " UNION ALL SELECT weight FROM shipments" * 30_000
    log = write_jsonl(tmp_path / "q.jsonl", [{"user": "x", "query": nested},
                                             {"user": "y", "query": "SELECT id FROM shipments"}])
    usage = read_usage([log], "shipments", SHIPMENTS, time_limit=0.2)
    assert usage.unresolved == 1 and usage.unresolved_where == (f"{log}:1: not resolved within 0.2 s",)
    assert usage.columns["id"].readers == ("y",)  # the run goes on


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
    usage = read_usage([path], "shipments", SHIPMENTS)
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


def plan_node(name: str, text: str, *children: dict[str, Any], **metadata: str) -> dict[str, Any]:
    return {"nodeName": name, "simpleString": text, "metadata": metadata, "children": list(children)}


def partitioned_scan(output: str, read_schema: str, partition_filters: str = "[]") -> dict[str, Any]:
    """A scan of /lake/shipments as Spark prints it: its columns (the partition column `day`
    last), its ReadSchema (data columns only) and its PartitionFilters."""
    return plan_node("Scan parquet ", f"FileScan parquet {output} Batched: true, DataFilters: []",
                     Location="InMemoryFileIndex(1 paths)[file:/lake/shipments]", ReadSchema=read_schema,
                     PartitionFilters=partition_filters)


WIDE = ", ".join(f"c{i}#{i}" for i in range(24)) + ", ... 9 more fields"  # Spark cuts lists at 25
PARTITIONED = schema_from_notation({"fields": [*json.loads(dumps(SHIPMENTS))["fields"],
                                               {"name": "day", "type": "int32"}]})  # partitioned by day
ID_DAY, ID = "[id#1L,day#5]", "struct<id:bigint>"


@pytest.mark.parametrize(("plan", "reads"), [
    # no node above projects: the partition column reaches the result (SELECT *, a bare DataFrame)
    (plan_node("ColumnarToRow", "ColumnarToRow", partitioned_scan(ID_DAY, ID)), {"id", "day"}),
    (plan_node("Project", "Project [id#1L]", partitioned_scan(ID_DAY, ID)), {"id"}),
    (plan_node("Project", "Project [id#1L]", partitioned_scan(ID_DAY, ID, "[isnotnull(day#5), (day#5 = 1)]")),
     {"id", "day"}),
    (plan_node("HashAggregate", "HashAggregate(keys=[day#5], functions=[count(1)])",
               partitioned_scan("[day#5]", "struct<>")), {"day"}),
    (plan_node("Project", "Project [id#1L, weekday#9]", partitioned_scan(ID_DAY, ID)),
     {"id"}),  # another column's name ends like it
    (plan_node("Project", f"Project [{WIDE}]", partitioned_scan(ID_DAY, ID)),
     {"id", "day"}),  # a cut list may hide it
    (plan_node("Project", "Project [id#1L]", partitioned_scan(f"[{WIDE}]", "struct<id:bigint,status:int>")),
     {"id", "status"}),  # the scan's own columns cut: what is not named above is not used
])
def test_partition_columns_count_where_the_plan_uses_them(tmp_path: Path, plan: dict[str, Any],
                                                          reads: set[str]) -> None:
    log = tmp_path / "app"
    log.write_text(json.dumps({"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
                               "executionId": 0, "time": 0, "sparkPlanInfo": plan}) + "\n")
    [(_, outcome)] = query_outcomes(read_log(log), "shipments", PARTITIONED, location="/lake/shipments")
    assert outcome == frozenset(reads)


SPARK_APPS = '''
import sys
from pathlib import Path
from pyspark.sql import SparkSession

base = Path(sys.argv[1])


def session(codec, rolling=True):
    return (SparkSession.builder.master("local[1]").appName(f"app-{codec}")
            .config("spark.ui.enabled", "false").config("spark.eventLog.enabled", "true")
            .config("spark.eventLog.dir", str(base / "events")).config("spark.eventLog.compress", "true")
            .config("spark.eventLog.compression.codec", codec)
            .config("spark.eventLog.rolling.enabled", str(rolling).lower()).getOrCreate())


def read_once(spark):  # every application's last execution
    spark.read.parquet(str(base / "t")).where("day = 1 AND status = 'new'").select("id").collect()


spark = session("lz4")
spark.range(6).selectExpr("id", "id * 2.0 AS weight", "'new' AS status",
                          "named_struct('city', 'x', 'zip', 'y') AS addr", "CAST(id % 2 AS INT) AS day"
                          ).write.partitionBy("day").parquet(str(base / "t"))
spark.range(3).selectExpr("id", "'c' AS code", "id * 1.0 AS weight").write.parquet(str(base / "other"))
spark.read.parquet(str(base / "t")).createOrReplaceTempView("shipments")
spark.read.parquet(str(base / "other")).createOrReplaceTempView("other")
spark.sql("SELECT * FROM shipments").collect()
spark.read.parquet(str(base / "t")).select("weight").collect()
spark.sql("SELECT id FROM shipments WHERE status = 'new'").collect()
spark.sql("SELECT weight FROM shipments WHERE day = 1").collect()
spark.sql("SELECT addr.city FROM shipments").collect()
spark.sql("SELECT s.id, o.code FROM shipments s JOIN other o ON s.id = o.id").collect()
spark.sql("SELECT * FROM other").collect()
spark.sql("SELECT day, count(*) FROM shipments GROUP BY day").collect()
spark.sql("SELECT count(*) FROM shipments").collect()
read_once(spark)
spark.stop()
for codec in ("lzf", "snappy", "zstd"):
    spark = session(codec, rolling=codec != "snappy")  # snappy: one file, not a rolling directory
    read_once(spark)
    spark.stop()

# Spark's own reader of its event logs decodes each, for the test to compare with (no log of its
# own: a session in the same JVM starts from the first one's settings)
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.eventLog.enabled", "false").getOrCreate())
jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
for log in (base / "events").rglob("*"):
    if log.is_file() and not log.name.startswith((".", "appstatus")):
        path = jvm.org.apache.hadoop.fs.Path(log.as_uri())
        reader = jvm.org.apache.spark.deploy.history.EventLogFileReader
        stream = reader.openEventLog(path, path.getFileSystem(conf))
        (base / f"{log.name}.spark").write_bytes(bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream)))
        stream.close()
spark.stop()
'''


@pytest.fixture(scope="module")
def spark_apps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Python process runs four Spark 4.1 applications in turn, each writing its event log
    compressed with another codec: lz4 reads the table every way a reader may, then each reads it
    once more the same way; Spark's own reader decodes every log, for comparison."""
    base = tmp_path_factory.mktemp("spark-apps")
    (base / "events").mkdir()
    (base / "apps.py").write_text(SPARK_APPS)
    done = subprocess.run([sys.executable, str(base / "apps.py"), str(base)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return base


def spark_log(base: Path, codec: str) -> Path:
    """The event log Spark wrote with `codec`: its rolling directory, or its one file."""
    log = next((base / "events").rglob(f"*.{codec}"))
    return log.parent if log.parent.name.startswith("eventlog_v2_") else log


ONCE = frozenset({"id", "day", "status"})  # what every application's last execution reads


@pytest.mark.spark
def test_spark_executions_read_what_their_scans_and_filters_name(spark_apps: Path) -> None:
    """Per execution of a real Spark application (lz4-compressed rolling log): a star, a
    DataFrame select, a column only filtered on, the partition column only filtered on, a struct
    field, a join, another table, a group by the partition column, a count."""
    log, table = spark_log(spark_apps, "lz4"), str(spark_apps / "t")
    outcomes = [o for _, o in query_outcomes(read_log(log), "shipments", PARTITIONED, location=table)]
    assert outcomes == [frozenset(c) if c is not None else None for c in (
        {"id", "weight", "status", "addr", "day"}, {"weight"}, {"id", "status"}, {"weight", "day"}, {"addr"},
        {"id"}, None, {"day"}, set(), ONCE)]
    usage = read_usage([log], "shipments", PARTITIONED, location=table)
    assert {c: u.queries for c, u in usage.columns.items()} == {
        "id": 4, "weight": 3, "status": 3, "addr": 2, "day": 4}
    assert (usage.queries, usage.unresolved, usage.skipped_lines) == (9, 0, 0)
    assert {(u.applications, bool(u.readers)) for u in usage.columns.values()} == {(("app-lz4",), True)}


@pytest.mark.spark
@pytest.mark.parametrize("codec", ["lz4", "lzf", "snappy", "zstd"])
def test_every_event_log_codec_spark_writes(spark_apps: Path, codec: str) -> None:
    """Each codec's log decodes to the very bytes Spark's own reader gives, and reads the same."""
    log = spark_log(spark_apps, codec)
    files = sorted(log.glob("events_*")) if log.is_dir() else [log]
    for file in files:
        with open_log(file) as text:  # the decoded bytes, before any JSON
            assert text.buffer.read() == (spark_apps / f"{file.name}.spark").read_bytes()
    queries = list(query_outcomes(read_log(log), "shipments", PARTITIONED, location=str(spark_apps / "t")))
    assert queries[-1][1] == ONCE and queries[-1][0].application == f"app-{codec}"


# ---------------------------------------------------------------------------------------------
# Compressed event logs, by hand: each codec's framing, cut and corrupt logs


LINES = [json.dumps({"user": u, "query": f"SELECT {c} FROM shipments"}).encode() + b"\n"
         for u, c in (("a", "id"), ("b", "weight"))]


def lz4_block(data: bytes) -> bytes:
    """A block as lz4-java's LZ4BlockOutputStream frames it (its checksum 0: not read)."""
    packed: bytes = pa.compress(data, codec="lz4_raw", asbytes=True)
    return b"LZ4Block" + struct.pack("<Biii", 0x20 | 6, len(packed), len(data), 0) + packed


def framed(codec: str, blocks: list[bytes]) -> bytes:
    """`blocks` as Spark's codec frames them (lz4-java, snappy-java, compress-lzf stored chunks,
    zstd frames)."""
    if codec == "lz4":
        return b"".join(map(lz4_block, blocks)) + b"LZ4Block" + struct.pack("<Biii", 0x10 | 6, 0, 0, 0)
    if codec == "snappy":
        packed = [pa.compress(b, codec="snappy", asbytes=True) for b in blocks]
        header = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)  # magic, version, compatible version
        return header + b"".join(struct.pack(">i", len(p)) + p for p in packed)
    if codec == "lzf":
        return b"".join(b"ZV\x00" + struct.pack(">H", len(b)) + b for b in blocks)
    return b"".join(pa.compress(b, codec="zstd", asbytes=True) for b in blocks)


@pytest.mark.parametrize("codec", ["lz4", "lzf", "snappy", "zstd"])
def test_compressed_logs_cut_or_corrupt_are_one_line_errors(tmp_path: Path, codec: str) -> None:
    whole = framed(codec, LINES)
    cut = whole[:len(framed(codec, LINES[:1])) + 3]  # three bytes into the second block
    if codec == "lz4":
        cut = framed(codec, LINES[:1])[:-3]  # the end mark cut
    for name, data in (("whole", whole), ("cut", cut), ("bad", b"X" + whole[1:])):
        (tmp_path / f"{name}.{codec}").write_bytes(data)
    usage = read_usage([tmp_path / f"whole.{codec}"], "shipments", SHIPMENTS)
    assert {c: u.readers for c, u in usage.columns.items()} == {"id": ("a",), "weight": ("b",)}
    for name in ("cut", "bad"):
        log = tmp_path / f"{name}.{codec}"
        with pytest.raises(UsageError) as caught:
            read_usage([log], "shipments", SHIPMENTS)
        assert str(caught.value).startswith(f"query log {log}: not a valid {codec} stream (")
        assert "\n" not in str(caught.value)
    live = tmp_path / f"app-1.{codec}.inprogress"  # Spark still writes it: it ends with its last whole block
    live.write_bytes(cut)
    assert [q.user for q in read_log(live)] == ["a"]


def test_a_rolling_log_still_written_ends_with_its_last_whole_block(tmp_path: Path) -> None:
    rolling = tmp_path / "eventlog_v2_app-1"
    rolling.mkdir()
    (rolling / "events_1_app-1.lz4").write_bytes(framed("lz4", LINES[:1]))
    (rolling / "events_2_app-1.lz4").write_bytes(lz4_block(LINES[1])[:-2])
    (rolling / "appstatus_app-1.inprogress").write_bytes(b"")
    assert [q.user for q in read_log(rolling)] == ["a"]
    (rolling / "appstatus_app-1.inprogress").rename(rolling / "appstatus_app-1")  # done: then it is cut
    with pytest.raises(UsageError, match=r"events_2_app-1\.lz4: not a valid lz4 stream"):
        list(read_log(rolling))


def test_lzf_chunks_with_long_and_overlapping_back_references(tmp_path: Path) -> None:
    """An LZF chunk written by hand: literal runs, and one back reference of 11 bytes at a
    distance of 1 (its length past 8: a length byte follows; it copies what it writes)."""
    head, tail = b'{"user": "a', b'aaaaaaaaaaa", "query": "SELECT status FROM shipments"}\n'
    rest = tail[11:]
    body = bytes([len(head) - 1]) + head + bytes([7 << 5, 11 - 2 - 7, 0])
    body += bytes([31]) + rest[:32] + bytes([len(rest) - 33]) + rest[32:]
    chunk = b"ZV\x01" + struct.pack(">HH", len(body), len(head + tail)) + body
    log = tmp_path / "app-1.lzf"
    log.write_bytes(chunk + framed("lzf", LINES[:1]))
    assert [q.user for q in read_log(log)] == ["a" * 12, "a"]
    log.write_bytes(chunk[:7] + bytes([0, 0]) + chunk[9:])  # a back reference before the start
    with pytest.raises(UsageError, match="not a valid lzf stream"):
        list(read_log(log))


# ---------------------------------------------------------------------------------------------
# OpenLineage run events


SHIP = {"namespace": "file", "name": "/lake/shipments"}
OTHER = {"namespace": "file", "name": "/lake/other"}


def run_event(job: str, run: str, when: datetime, inputs: list[dict[str, Any]],
              outputs: list[dict[str, Any]], kind: str = "COMPLETE") -> dict[str, Any]:
    """An OpenLineage RunEvent (spec 2-0-2)."""
    return {"eventType": kind, "eventTime": when.isoformat().replace("+00:00", "Z"),
            "producer": "https://example.com/scheduler",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run}, "job": {"namespace": "airflow", "name": job},
            "inputs": inputs, "outputs": outputs}


def read_of(dataset: dict[str, Any], field: str, kind: str = "DIRECT",
            subtype: str = "IDENTITY") -> dict[str, Any]:
    """An input field of the columnLineage facet (1-2-0), with its transformation."""
    return dataset | {"field": field, "transformations": [
        {"type": kind, "subtype": subtype, "description": "", "masking": False}]}


def output(fields: dict[str, list[dict[str, Any]]], dataset: list[dict[str, Any]] | None = None,
           name: str = "/lake/report") -> dict[str, Any]:
    """An output dataset and its columnLineage facet (no facet when `fields` is empty)."""
    facet = {"_producer": "https://example.com/scheduler",
             "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
             "fields": {f: {"inputFields": inputs} for f, inputs in fields.items()}, "dataset": dataset or []}
    return {"namespace": "file", "name": name, "facets": {"columnLineage": facet} if fields else {}}


def test_openlineage_column_lineage_counts_the_tables_fields(tmp_path: Path) -> None:
    """Direct and indirect reads (per output field, and dataset-wide) of the table, found by its
    location or a symlink's name; a run's events are one read; another dataset is no read."""
    fields = {"total": [read_of(SHIP, "weight", subtype="AGGREGATION")], "city": [read_of(SHIP, "addr.city")],
              "code": [read_of(OTHER, "code")]}
    wide = [read_of(SHIP, "status", "INDIRECT", "FILTER"), read_of(OTHER, "id", "INDIRECT", "JOIN")]
    later = fields | {"key": [read_of(SHIP, "id", "INDIRECT", "JOIN")]}  # a later event of the run tells more
    s3 = {"namespace": "s3://bucket", "name": "warehouse/db.db/shipments"}
    hive = s3 | {"facets": {"symlinks": {"identifiers": [
        {"namespace": "hive://metastore:9083", "name": "db.shipments", "type": "TABLE"}]}}}
    log = write_jsonl(tmp_path / "lineage.jsonl", [
        run_event("daily_report", "r1", NOW - 2 * DAY, [SHIP, OTHER], [output(fields, wide)], kind="START"),
        run_event("daily_report", "r1", NOW - DAY * 1.9, [SHIP, OTHER], [output(later, wide)]),
        run_event("enrich", "r2", NOW - DAY, [hive],
                  [output({"flag": [read_of(s3, "weight", "INDIRECT", "CONDITIONAL")]})]),
        run_event("other_only", "r3", NOW - DAY, [OTHER], [output({"code": [read_of(OTHER, "code")]})]),
        run_event("no_lineage", "r4", NOW - DAY, [SHIP], [output({})]),  # reads the table, tells no fields
        run_event("old", "r5", NOW - 40 * DAY, [SHIP], [output({"s": [read_of(SHIP, "status")]})]),
        {"ts": (NOW - DAY).isoformat(), "user": "analyst", "query": "SELECT id FROM db.shipments"},  # SQL too
    ])
    usage = read_usage([log], "db.shipments", SHIPMENTS, since=NOW - 30 * DAY, location="file:///lake/shipments")
    assert {c: (u.queries, u.readers) for c, u in usage.columns.items()} == {
        "weight": (2, ("airflow/daily_report", "airflow/enrich")), "addr": (1, ("airflow/daily_report",)),
        "status": (1, ("airflow/daily_report",)), "id": (2, ("airflow/daily_report", "analyst"))}
    assert (usage.queries, usage.unresolved, usage.skipped_lines) == (3, 1, 0)
    assert usage.unresolved_where == (f"{log}:5: an OpenLineage event without column lineage",)
    last = usage.columns["weight"].last_read
    assert last is not None and abs(last - (NOW - DAY)) < timedelta(seconds=1)
    assert all(u.applications == () for u in usage.columns.values())


def test_openlineage_datasets_match_by_location_or_name(tmp_path: Path) -> None:
    s3 = {"namespace": "s3://lake", "name": "tables/shipments"}
    named = {"namespace": "spark", "name": "db.shipments"}
    beside = {"namespace": "s3://lake", "name": "tables/shipments_v2"}
    log = write_jsonl(tmp_path / "lineage.jsonl", [
        run_event("a", "r1", NOW, [s3], [output({"w": [read_of(s3, "Weight")]})]),  # in any case
        run_event("b", "r2", NOW, [], [output({"w": [read_of(named, "id")]})]),
        run_event("c", "r3", NOW, [], [output({"w": [read_of(beside, "id")]})]),
        run_event("d", "r4", NOW, [], []),  # reads nothing: no query
    ])
    outcomes = query_outcomes(read_log(log), "shipments", SHIPMENTS, location="s3://lake/tables/shipments/")
    assert [(q.user, o) for q, o in outcomes] == [
        ("airflow/a", frozenset({"weight"})), ("airflow/b", frozenset({"id"})), ("airflow/c", None)]


def test_an_openlineage_field_is_the_column_it_names_whole_or_the_top_of_its_path(tmp_path: Path) -> None:
    dotted = schema_from_notation({"fields": [  # a column named `a.b` beside a struct `a` with fields b, c
        {"name": "a.b", "type": "string"},
        {"name": "a", "type": {"struct": [{"name": "b", "type": "string"},
                                          {"name": "c", "type": "string"}]}}]})
    log = write_jsonl(tmp_path / "lineage.jsonl", [
        run_event(job, job, NOW, [SHIP], [output({"x": [read_of(SHIP, field)]})])
        for job, field in (("quoted", "`a.b`"), ("spark", "a.b"), ("nested", "a.c"), ("quoted_top", "`a`.c"))
    ])
    outcomes = query_outcomes(read_log(log), "shipments", dotted, location="/lake/shipments")
    assert [(q.user, o) for q, o in outcomes] == [
        ("airflow/quoted", frozenset({"a.b"})),  # in backticks, as model.py writes it: the column
        ("airflow/spark", frozenset({"a.b"})),  # a column's own name, as Spark names its attribute
        ("airflow/nested", frozenset({"a"})), ("airflow/quoted_top", frozenset({"a"}))]


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
    given = ("plan", str(old), str(new), "--rename", "weight=weight_kg", "--format", "json")

    def plan(*more: str) -> tuple[int, dict[str, Any], str]:
        done = run(*given, *more)
        return done.returncode, json.loads(done.stdout) if done.returncode != 2 else {}, done.stderr

    code, _, err = plan("--query-log", str(log))
    assert code == 2 and "need table or query_table (--table, --query-table)" in err
    code, doc, _ = plan("--query-log", str(log), "--query-table", "db.shipments")
    checks = {c["kind"]: c for c in doc["checks"]}
    assert code == 1 and checks["no-reads"]["status"] == "refuted"
    assert checks["no-reads"]["evidence"].startswith("1 queries by 1 reader(s), last ")
    assert checks["no-reads"]["evidence"].endswith(": finance")  # the reader a team must move, by name
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


def test_the_plans_no_reads_check_from_event_logs(tmp_path: Path) -> None:
    """`plan --event-log`: OpenLineage runs of the last days that read the table's `customer` refute
    the contract's no-reads check; runs that read only other columns prove it."""
    from schemaguard.demo import build_demo_lake
    from tests.helpers import run

    table = build_demo_lake(tmp_path / "lake")
    orders = {"namespace": "file", "name": str(table)}
    recent = NOW - 2 * DAY

    def plan(events: list[dict[str, Any]]) -> dict[str, Any]:
        log = write_jsonl(tmp_path / "lineage.jsonl", events)
        rename = "ALTER TABLE orders RENAME COLUMN customer TO client"
        done = run("plan", "--table", str(table), "--ddl", rename, "--event-log", str(log), "--footer-only",
                   "--format", "json")
        assert done.returncode == 1, done.stderr
        return next(c for c in json.loads(done.stdout)["checks"] if c["kind"] == "no-reads")

    who = output({"who": [read_of(orders, "customer")]})
    reads = plan([run_event("crm_sync", "r1", recent, [orders], [who]),
                  run_event("daily", "r2", recent, [orders], [output({"n": [read_of(orders, "id")]})])])
    assert reads["status"] == "refuted" and "1 queries by 1 reader(s)" in reads["evidence"]
    assert reads["evidence"].endswith(": airflow/crm_sync"), reads  # the job, in its namespace
    moved = plan([run_event("daily", "r2", recent, [orders], [output({"n": [read_of(orders, "id")]})]),
                  run_event("crm_sync", "r3", NOW - 45 * DAY, [orders],  # before the window
                            [output({"who": [read_of(orders, "customer")]})])])
    assert moved["status"] == "proven", moved
    blind = plan([run_event("opaque", "r4", recent, [orders], [output({})])])  # reads it, tells no fields
    assert blind["status"] == "unknown", blind
