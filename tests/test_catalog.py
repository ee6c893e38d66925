"""The catalog report: the demo run written as Delta tables and read back with Spark SQL; reruns of
a run id replace its rows; keyword database names; concurrent writers; a new process reads what
another wrote; a writer killed mid-write leaves no visible partial run, and its rerun completes it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from schemaguard.auditing import run_audit
from schemaguard.config import CatalogConfig, load_config
from schemaguard.demo import build_demo_lake
from schemaguard.proofs.audit_run import AuditRun
from schemaguard.report import catalog as report

CHILD = Path(__file__).with_name("catalog_writer_child.py")
CHILD_TIMEOUT = 900  # seconds: a Spark child starts in 10-20 s on 2 idle cores, much more on busy ones


@pytest.fixture(scope="module")
def conf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("catalog")
    build_demo_lake(directory / "lake")
    path = directory / "schemaguard.toml"
    path.write_text('[catalog]\nenabled = false\n[[tables]]\nname = "orders"\npath = "lake/orders"\n')
    return path


@pytest.fixture(scope="module")
def demo_run(conf: Path) -> AuditRun:
    return run_audit(load_config(conf), run_id="run-1")


@pytest.fixture(scope="module")
def written(spark: Any, demo_run: AuditRun, conf: Path) -> CatalogConfig:
    """The demo run written once into a database named by an SQL keyword."""
    catalog = CatalogConfig(database="order")
    report.write_run(spark, demo_run, catalog, str(conf))
    return catalog


def rows(spark: Any, catalog: CatalogConfig, table: str, run_id: str | None = None) -> list[Any]:
    from pyspark.sql import functions as F

    df = spark.table(report.table_names(catalog)[table])
    if run_id is not None:
        df = df.where(F.col("run_id") == F.lit(run_id))
    return list(df.collect())


def counts(spark: Any, catalog: CatalogConfig) -> dict[str, int]:
    return {t: spark.table(q).count() for t, q in report.table_names(catalog).items()}


# ---------------------------------------------------------------------------------------------
# without Spark


def test_names_are_validated_and_quoted() -> None:
    assert report.quote("order", "runs") == "`order`.`runs`"
    assert report.table_names(CatalogConfig(catalog="main", database="select"))["findings"] == \
        "`main`.`select`.`findings`"
    for bad in ("a`b", "a.b", "1a", "", "x y"):
        with pytest.raises(ValueError):
            report.quote(bad)


def test_findings_query_names_the_quoted_tables() -> None:
    query = report.findings_query(CatalogConfig(database="order"))
    assert "FROM `order`.`findings` f JOIN (SELECT run_id, started_at FROM `order`.`runs`" in query
    assert "\n" not in query  # the CLI prints it on one line


def test_conflicts_are_recognised_by_class_name() -> None:
    class ConcurrentAppendException(Exception):
        pass

    assert report.is_conflict(ConcurrentAppendException("Files were added to the root of the table"))
    assert report.is_conflict(RuntimeError(
        "io.delta.exceptions.ConcurrentDeleteReadException: [DELTA_CONCURRENT_DELETE_READ] ..."))
    assert not report.is_conflict(RuntimeError("[TABLE_OR_VIEW_NOT_FOUND] The table cannot be found"))


def test_the_module_does_not_import_pyspark() -> None:
    code = "import sys, schemaguard.report.catalog; print('pyspark' in sys.modules, 'delta' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_rows_of_the_demo_run(demo_run: AuditRun) -> None:
    footers = report.footer_rows(demo_run)
    unreadable = [r for r in footers if r["status"] == "unreadable"]
    assert len(unreadable) == 3 and all(r["reason"] and r["version"] is None for r in unreadable)
    assert {r["version"] for r in footers if r["status"] == "read"} == {1, 2, 3, 4}
    versions = report.version_rows(demo_run)
    assert [v["is_current"] for v in versions] == [False, False, False, True]
    assert json.loads(versions[0]["schema_json"])["fields"]
    assert report.run_row(demo_run, "x.toml")["verdict"] == "fail"


# ---------------------------------------------------------------------------------------------
# the shared session


def test_a_run_reads_back_with_spark_sql(spark: Any, written: CatalogConfig, demo_run: AuditRun) -> None:
    runs = rows(spark, written, "runs")
    assert len(runs) == 1
    run = runs[0]
    counted = demo_run.counts()
    assert (run.run_id, run.status, run.verdict, run.exit_code, run.tables, run.files) == \
        ("run-1", "complete", "fail", 1, 1, 123)
    assert (run.errors, run.warnings, run.infos, run.waived, run.failing) == \
        (counted["error"], counted["warning"], counted["info"], counted["waived"], counted["failing"])
    assert run.started_at.replace(tzinfo=None) <= run.finished_at.replace(tzinfo=None)

    found = rows(spark, written, "findings")
    assert sorted((f.finding_key, f.severity) for f in found) == \
        sorted((f.key, f.severity) for f in demo_run.all_findings)
    assert all(f.fails == (f.severity == "error") for f in found)  # fail level error, no waivers

    versions = rows(spark, written, "schema_versions")
    assert sorted(v.version for v in versions) == [1, 2, 3, 4]
    assert sum(v.rows for v in versions) == sum(v.rows for v in demo_run.tables[0].summary.table.versions)

    footers = rows(spark, written, "file_footers")
    scan = demo_run.tables[0].summary.table.scan
    assert len(footers) == len(scan.footers) + len(scan.unreadable)
    unreadable = sorted(f.path for f in footers if f.status == "unreadable")
    assert unreadable == sorted(u.rel for u in scan.unreadable)

    latest = spark.sql(report.findings_query(written)).collect()
    assert len(latest) == len(demo_run.all_findings)
    assert [r.severity for r in latest] == sorted((r.severity for r in latest),
                                                  key=["error", "warning", "info"].index)


def test_a_keyword_database_name_works(spark: Any, written: CatalogConfig) -> None:
    assert written.database == "order"
    assert {r.namespace for r in spark.sql("SHOW DATABASES").collect()} >= {"order"}
    tables = {r.tableName for r in spark.sql("SHOW TABLES IN `order`").collect()}
    assert tables >= set(report.TABLES)


def test_report_tables_of_an_earlier_version_gain_the_new_columns(spark: Any, demo_run: AuditRun,
                                                                  conf: Path) -> None:
    from pyspark.sql.types import StructType

    catalog = CatalogConfig(database="earlier")
    spark.sql("CREATE DATABASE IF NOT EXISTS earlier")
    added = {"schema_versions": ("table_format", "table_version", "log_schemas"),
             "file_footers": ("referenced", "log_schema")}
    for table, schema in report.schemas().items():
        old = StructType([f for f in schema.fields if f.name not in added.get(table, ())])
        spark.createDataFrame([], old).write.format("delta").saveAsTable(report.table_names(catalog)[table])
    report.write_run(spark, demo_run, catalog, str(conf))
    for table, columns in added.items():
        assert set(columns) <= set(spark.table(report.table_names(catalog)[table]).columns)
    [version] = {(r.table_format, r.table_version) for r in rows(spark, catalog, "schema_versions")}
    assert version == ("parquet", None)
    assert {r.referenced for r in rows(spark, catalog, "file_footers")} == {None}


def test_rerunning_a_run_id_replaces_its_rows(spark: Any, written: CatalogConfig, demo_run: AuditRun,
                                              conf: Path) -> None:
    before = counts(spark, written)
    findings = report.table_names(written)["findings"]
    assert last_operation(spark, findings) == "WRITE"  # a new run id: appended
    report.write_run(spark, demo_run, written, str(conf))  # a scheduler's retry: same run id
    assert counts(spark, written) == before
    assert last_operation(spark, findings) == "MERGE"  # the rerun replaced its rows

    other = replace(demo_run, run_id="run-2")
    report.write_run(spark, other, written, str(conf))
    assert counts(spark, written) == {t: 2 * n for t, n in before.items()}

    table = demo_run.tables[0]
    dropped = table.findings[0]
    fewer = replace(demo_run, tables=(replace(table, findings=table.findings[1:]),))
    report.write_run(spark, fewer, written, str(conf))
    keys = [r.finding_key for r in rows(spark, written, "findings", "run-1")]
    assert len(keys) == len(demo_run.all_findings) - 1
    assert keys.count(dropped.key) == sum(f.key == dropped.key for f in fewer.all_findings)
    assert len(rows(spark, written, "findings", "run-2")) == len(demo_run.all_findings)  # untouched
    assert len(rows(spark, written, "runs")) == 2


def last_operation(spark: Any, table: str) -> str:
    from delta.tables import DeltaTable

    return str(DeltaTable.forName(spark, table).history(1).collect()[0]["operation"])


def test_two_writers_at_once_both_land(spark: Any, demo_run: AuditRun, conf: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A real Delta commit conflict, made to happen: writer A reruns run-a (a MERGE) and its MERGE
    into `findings` holds (its source waits on a file) after it read the table, while writer B
    appends its whole new run; A's commit then conflicts, is retried, and both runs land whole."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    catalog = CatalogConfig(database="sg_concurrent", file_footers=False)
    report.write_run(spark, replace(demo_run, run_id="run-a"), catalog, str(conf))
    conflicts: list[str] = []
    recognise, frame = report.is_conflict, report._frame
    started, go = tmp_path / "a-started", tmp_path / "b-done"

    def seen(e: BaseException) -> bool:
        if recognise(e):
            conflicts.append(type(e).__name__)
            return True
        return False

    def hold(s: str, g: str) -> bool:  # runs in Spark's Python worker: files are what it shares
        Path(s).touch()
        deadline = time.monotonic() + 120
        while not Path(g).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return True

    waiting = F.udf(hold, BooleanType(), useArrow=False)  # said: its hints are text here (no inference)

    def held(session: Any, schema: Any, rows: list[dict[str, Any]]) -> Any:
        df = frame(session, schema, rows)
        if rows and rows[0].get("run_id") == "run-a" and "finding_key" in schema.fieldNames():
            return df.coalesce(1).filter(waiting(F.lit(str(started)), F.lit(str(go))))  # one slot held
        return df

    monkeypatch.setattr(report, "is_conflict", seen)
    monkeypatch.setattr(report, "_frame", held)
    errors: list[BaseException] = []

    def write_a() -> None:
        try:
            report.write_run(spark, replace(demo_run, run_id="run-a"), catalog, str(conf))
        except BaseException as e:  # handed to the main thread
            errors.append(e)

    a = threading.Thread(target=write_a)
    a.start()
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "writer A never reached its MERGE"
    report.write_run(spark, replace(demo_run, run_id="run-b"), catalog, str(conf))
    go.touch()
    a.join()
    assert not errors, errors
    assert conflicts, "writer A's commit was expected to conflict with B's and be retried"
    assert {r.run_id for r in rows(spark, catalog, "runs")} == {"run-a", "run-b"}
    assert len(rows(spark, catalog, "findings")) == 2 * len(demo_run.all_findings)
    assert not spark.catalog.tableExists(report.table_names(catalog)["file_footers"])


# ---------------------------------------------------------------------------------------------
# other processes: a catalog home of their own (Derby admits one process per home)


class Child:
    """A catalog_writer_child.py process whose `CHILD {json}` lines arrive on a queue."""

    def __init__(self, home: Path, conf: Path, database: str, *actions: str) -> None:
        env = {**os.environ, "SCHEMAGUARD_HOME": str(home)}
        env.pop("PYSPARK_GATEWAY_PORT", None)
        self.log = (home / f"child-{time.monotonic_ns()}.log").open("w")
        self.proc = subprocess.Popen([sys.executable, str(CHILD), str(conf), database, *actions],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, env=env)
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("CHILD "):
                self.lines.put(json.loads(line[len("CHILD "):]))
        self.lines.put(None)

    def next(self, deadline: float) -> dict[str, Any]:
        try:
            doc = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self.proc.kill()
            raise AssertionError(f"child timed out; see {self.log.name}") from None
        if doc is None:
            raise AssertionError(f"child ended early (exit {self.proc.wait()}); see {self.log.name}")
        return doc

    def finish(self, deadline: float) -> None:
        assert self.proc.wait(timeout=max(1.0, deadline - time.monotonic())) == 0, self.log.name
        self.log.close()


def commits(table_dir: Path) -> set[str]:
    log = table_dir / "_delta_log"
    return {p.name for p in log.glob("*.json")} if log.exists() else set()


def test_a_killed_writer_leaves_no_visible_run_and_its_rerun_completes(
        spark: Any, conf: Path, tmp_path: Path) -> None:
    """Process 1 writes run A, then starts run B and is SIGKILLed the moment B's first commit (the
    findings) lands. Process 2 (a new process, same catalog) reads A, sees no trace of B through
    `runs` or the findings query, reruns B, and finds exactly one set of its rows."""
    from pyspark.sql import functions as F

    home, database = tmp_path / "home", "sg_kill"
    home.mkdir()
    warehouse = home / "warehouse" / f"{database}.db"
    deadline = time.monotonic() + CHILD_TIMEOUT

    writer = Child(home, conf, database, "write:run-a", "write:run-b")
    assert writer.next(deadline)["writing"] == "run-a"
    assert writer.next(deadline) == {"done": "run-a"}
    assert writer.next(deadline)["writing"] == "run-b"
    before = commits(warehouse / "findings")
    while commits(warehouse / "findings") == before:
        assert writer.proc.poll() is None, "the writer ended before its findings commit"
        assert time.monotonic() < deadline, "no findings commit for run-b"
        time.sleep(0.005)
    writer.proc.send_signal(signal.SIGKILL)
    assert writer.proc.wait(timeout=60) == -signal.SIGKILL
    writer.log.close()

    # The tables as files, read from this (other) session: B's findings committed, no runs row.
    def by_path(table: str, run_id: str) -> int:
        df = spark.read.format("delta").load(str(warehouse / table))
        return int(df.where(F.col("run_id") == F.lit(run_id)).count())

    assert by_path("findings", "run-b") > 0, "the kill came too late to be mid-write"
    assert by_path("runs", "run-b") == 0
    assert by_path("runs", "run-a") == 1

    reader = Child(home, conf, database, "count:run-a", "count:run-b", "write:run-b", "count:run-b")
    a = reader.next(deadline)
    b_killed = reader.next(deadline)
    expected = reader.next(deadline)["expected"]
    assert reader.next(deadline) == {"done": "run-b"}
    b_rerun = reader.next(deadline)
    reader.finish(deadline)

    whole = {"runs": 1, **expected}
    assert {k: a[k] for k in whole} == whole  # written by process 1, read by process 2
    assert a["query"] == expected["findings"]  # A is the latest complete run: B has no runs row
    assert b_killed["runs"] == 0 and b_killed["query"] == 0  # invisible through runs
    assert b_killed["findings"] == expected["findings"]  # the orphaned rows, about to be replaced
    assert {k: b_rerun[k] for k in whole} == whole  # exactly one set of rows
    assert b_rerun["query"] == expected["findings"]  # now the latest complete run
