"""The audit report as Delta tables in the catalog: `runs`, `findings`, `schema_versions`,
`file_footers`, `proofs`, managed tables in one database (`schemaguard` by default) of the
session's catalog.

Idempotent: a run id the tables have never seen (the audit's own ids are new by construction)
is written with blind appends, one commit a table; Delta never makes appends conflict with each
other, so concurrent audits all land on the first try. A run id some table already holds (a
scheduler's retry with its own run id, or the orphans of a run that died) is written with one MERGE
a table keyed by the run (`runs`: run_id; `findings`: run_id, finding_key; `schema_versions`:
run_id, table_name, version; `file_footers`: run_id, table_name, path; `proofs`: run_id,
table_name, proof, column_name): matched rows are updated, new ones inserted, and rows of *this*
run that the source no longer holds are deleted (`whenNotMatchedBySourceDelete` restricted to the
run id), so writing a run again replaces that run's rows and never duplicates them; other runs'
rows are never touched. Appends cost a fifth of a MERGE here (0.8 s against 2-3 s a table on the
embedded session, measured): a MERGE joins against the table and rewrites the files it touches.

Crash safety: a run is complete iff its `runs` row exists. The child tables (`findings`,
`schema_versions`, `file_footers`, `proofs`) are written first and the `runs` row last, each table
in one atomic Delta commit. A run that dies part way leaves child rows without a `runs` row, never
a `runs` row without its children; whoever reads through `runs` (`findings_query`, the query the
CLI prints, joins findings to the latest run in `runs`) never sees a partial run. Rerunning the
same run id finds those orphans and replaces them by the MERGE path. Orphans of a run id that is
never retried stay until someone deletes them
(`DELETE FROM findings WHERE run_id NOT IN (SELECT run_id FROM runs)`).

Concurrent writers: appends of different runs never conflict. A MERGE (a rerun) reads the whole
table (its not-matched-by-source clause must), so it may fail with Delta's
ConcurrentAppendException and its kin when another run commits meanwhile; those are retried a few
times, each retry the same idempotent MERGE against the new table version. One run id is written
by one writer at a time: two writers of the same new id at once would both append.

Names are validated parts (`config.NAME`) and are still backtick-quoted in every statement; run
ids and other values reach Spark only as literals of Column expressions, never pasted into SQL.

Only this module's functions import pyspark and delta, so the CLI stays light without Spark.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemaguard.checks.finding import Finding
from schemaguard.checks.summary import partition_dir
from schemaguard.config import CatalogConfig
from schemaguard.errors import UsageError, first_line
from schemaguard.formats.notation import schema_to_notation
from schemaguard.formats.spark_ddl import qualified
from schemaguard.meta import version
from schemaguard.names import NAME
from schemaguard.proofs.audit_run import AuditRun, TableAudit
from schemaguard.report.check import proof_json

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

TABLES = ("runs", "findings", "schema_versions", "file_footers", "proofs")
# Each table's key: a rerun of a run matches its rows on these columns.
KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "findings": ("run_id", "finding_key"),
    "schema_versions": ("run_id", "table_name", "version"),
    "file_footers": ("run_id", "table_name", "path"),
    "proofs": ("run_id", "table_name", "proof", "column_name"),
}
# Delta's commit conflicts that a retry of the same MERGE resolves (io.delta.exceptions.*).
CONFLICTS = frozenset({
    "ConcurrentAppendException", "ConcurrentDeleteReadException", "ConcurrentDeleteDeleteException",
    "ConcurrentWriteException", "MetadataChangedException", "ProtocolChangedException",
})
ATTEMPTS = 6  # a commit and up to five retries on conflicts


class CatalogWriteError(UsageError):
    """The report could not be written (after retries); nothing partial is visible through `runs`."""


def quote(*parts: str) -> str:
    """`a`.`b`.`c`: each part a validated name, backtick-quoted (so keywords like `order` work)."""
    for part in parts:
        if not NAME.fullmatch(part):
            raise ValueError(f"{part!r} is not a valid catalog, database or table name")
    return qualified(parts)


def _prefix(catalog: CatalogConfig) -> tuple[str, ...]:
    return (catalog.catalog, catalog.database) if catalog.catalog else (catalog.database,)


def table_names(catalog: CatalogConfig) -> dict[str, str]:
    """Each report table's quoted full name, e.g. {"runs": "`schemaguard`.`runs`", ...}."""
    return {name: quote(*_prefix(catalog), name) for name in TABLES}


# A finding as `findings` stores it and `findings_query` reads it back (and `AuditResult.to_pandas`).
FINDINGS_COLUMNS = ("table_name", "severity", "code", "column_path", "message", "file_count", "waived",
                    "fails", "finding_key")


def findings_query(catalog: CatalogConfig) -> str:
    """Spark SQL (one line) for the findings of the latest complete run, most severe first."""
    t = table_names(catalog)
    return (
        f"SELECT r.run_id, r.started_at, {', '.join(f'f.{c}' for c in FINDINGS_COLUMNS)} "
        f"FROM {t['findings']} f "
        f"JOIN (SELECT run_id, started_at FROM {t['runs']} WHERE status = 'complete' "
        "ORDER BY started_at DESC, run_id DESC LIMIT 1) r ON f.run_id = r.run_id "
        "ORDER BY CASE f.severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, "
        "f.table_name, f.code, f.finding_key"
    )


# ---------------------------------------------------------------------------------------------
# table schemas


def schemas() -> dict[str, StructType]:
    """The four tables' schemas, explicit (never inferred from rows). Keys are NOT NULL."""
    from pyspark.sql.types import (
        ArrayType,
        BooleanType,
        DataType,
        DateType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    def struct(*cols: tuple[str, DataType] | tuple[str, DataType, bool]) -> StructType:
        return StructType([StructField(c[0], c[1], c[2] if len(c) == 3 else True) for c in cols])

    s, i, b = StringType(), IntegerType(), LongType()
    ts, flag = TimestampType(), BooleanType()
    strings = ArrayType(StringType(), containsNull=False)
    longs = ArrayType(LongType(), containsNull=False)
    return {
        "runs": struct(
            ("run_id", s, False), ("started_at", ts, False), ("finished_at", ts, False),
            ("status", s, False), ("fail_level", s, False), ("verdict", s, False), ("exit_code", i, False),
            ("tables", i), ("files", b), ("errors", i), ("warnings", i), ("infos", i), ("waived", i),
            ("failing", i), ("config", s), ("schemaguard_version", s), ("written_at", ts, False)),
        "findings": struct(
            ("run_id", s, False), ("finding_key", s, False),
            ("table_name", s), ("code", s, False), ("severity", s, False), ("column_path", s),
            ("subject", s), ("message", s), ("file_count", b), ("files", strings),
            ("partition_count", b), ("partitions", strings),
            ("versions", ArrayType(IntegerType(), containsNull=False)),
            ("evidence", ArrayType(struct(("label", s), ("value", s)), containsNull=False)),
            ("rule", s), ("waived", flag), ("waiver_owner", s), ("waiver_reason", s),
            ("waiver_expires", DateType()), ("fails", flag)),
        "schema_versions": struct(
            ("run_id", s, False), ("table_name", s, False), ("version", i, False), ("fingerprint", s),
            ("schema_json", s), ("spark_schema_json", s), ("file_count", b), ("partition_count", b),
            ("rows", b), ("first_seen", s), ("last_seen", s), ("is_current", flag),
            ("table_format", s), ("table_version", b), ("log_schemas", longs)),
        "file_footers": struct(
            ("run_id", s, False), ("table_name", s, False), ("path", s, False), ("partition", s),
            ("size", b), ("mtime", ts), ("rows", b), ("row_groups", i), ("created_by", s),
            ("version", i), ("fingerprint", s), ("status", s, False), ("reason", s),
            ("referenced", flag), ("log_schema", b)),
        "proofs": struct(
            ("run_id", s, False), ("table_name", s, False), ("proof", s, False),
            ("column_name", s, False), ("verdict", s, False), ("decided_by", s), ("count", b),
            ("partitions", strings), ("files", strings), ("files_unknown", strings),
            ("files_absent", strings), ("rows_read", b), ("bytes_read", b), ("sample_json", s), ("why", s)),
    }


# ---------------------------------------------------------------------------------------------
# rows


def run_row(run: AuditRun, config_path: str) -> dict[str, Any]:
    counts = run.counts()
    return {
        "run_id": run.run_id, "started_at": run.started_at, "finished_at": run.finished_at,
        "status": "complete", "fail_level": run.fail_level,
        "verdict": "fail" if run.exit_code else "pass", "exit_code": run.exit_code,
        "tables": len(run.tables), "files": sum(t.summary.counts.files for t in run.tables),
        "errors": counts["error"], "warnings": counts["warning"], "infos": counts["info"],
        "waived": counts["waived"], "failing": counts["failing"], "config": config_path,
        "schemaguard_version": version(), "written_at": datetime.now(UTC),
    }


def finding_rows(run: AuditRun) -> list[dict[str, Any]]:
    """One row per finding. Keys are unique within a run (the findings make them so); a duplicate
    would make the MERGE fail on a rerun, so it is refused here, before anything is written."""
    keys = [f.key for f in run.all_findings]
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"two findings of run {run.run_id} share the key {twice}")
    today = run.started_at.date()
    return [_finding_row(run, f, today) for f in run.all_findings]


def _finding_row(run: AuditRun, f: Finding, today: Any) -> dict[str, Any]:
    w = f.waiver
    return {
        "run_id": run.run_id, "finding_key": f.key, "table_name": f.table,
        "code": f.code.value, "severity": f.severity, "column_path": f.path or None,
        "subject": f.subject or None, "message": f.message, "file_count": f.count,
        "files": list(f.files), "partition_count": f.partition_count, "partitions": list(f.partitions),
        "versions": list(f.versions), "evidence": [(label, value) for label, value in f.evidence],
        "rule": f.rule or None, "waived": f.waived(today),
        "waiver_owner": w.owner if w else None, "waiver_reason": w.reason if w else None,
        "waiver_expires": w.expires if w else None, "fails": run.fails(f),
    }


def version_rows(run: AuditRun) -> list[dict[str, Any]]:
    """Each table's schema versions; `is_current` marks those whose schema is the one the audit
    checked the others against (the table's current schema). For a Delta or Iceberg table,
    `table_version` is the snapshot read (Delta version, Iceberg snapshot id) and `log_schemas` the
    log's schema versions its files were written under (Delta versions, Iceberg schema ids)."""
    return [
        {
            "run_id": run.run_id, "table_name": t.name, "version": v.number, "fingerprint": v.fingerprint,
            "schema_json": json.dumps(schema_to_notation(v.footer.schema), ensure_ascii=False),
            "spark_schema_json": v.footer.spark_schema_json, "file_count": len(v.files),
            "partition_count": len(v.partitions), "rows": v.rows, "first_seen": v.first_seen,
            "last_seen": v.last_seen, "is_current": v.footer.schema == t.current_schema,
            "table_format": t.summary.table.table_format, "table_version": _table_version(t),
            "log_schemas": sorted({t.summary.log_schema_of[rel] for rel in v.files.rels()
                                   if rel in t.summary.log_schema_of}),
        }
        for t in run.tables for v in t.summary.table.versions
    ]


def _table_version(t: TableAudit) -> int | None:
    table = t.summary.table
    if table.delta is not None:
        return table.delta.version
    return table.iceberg.snapshot_id if table.iceberg is not None else None


def proof_rows(run: AuditRun) -> list[dict[str, Any]]:
    """One row per configured proof and table: its verdict, where, and what it read."""
    rows = []
    for t in run.tables:
        for p in t.proofs:
            doc = proof_json(p)
            sample = json.dumps(list(p.sample), default=str, ensure_ascii=False) if p.sample else None
            rows.append({
                "run_id": run.run_id, "table_name": t.name, "proof": doc["proof"],
                "column_name": doc["column"], "verdict": p.verdict, "decided_by": p.decided_by,
                "count": p.count, "partitions": list(p.partitions), "files": list(p.files),
                "files_unknown": list(p.files_unknown), "files_absent": list(p.files_absent),
                "rows_read": p.rows_read, "bytes_read": p.bytes_read, "sample_json": sample,
                "why": p.why or None})
    return rows


def footer_rows(run: AuditRun) -> list[dict[str, Any]]:
    """One row per data file listed: footers read, and files that could not be read (with why)."""
    return [row for t in run.tables for row in _table_footer_rows(run.run_id, t)]


def _table_footer_rows(run_id: str, t: TableAudit) -> Iterable[dict[str, Any]]:
    """`referenced`: in the snapshot (Delta, Iceberg; None for a Parquet directory), False for
    files read with --include-unreferenced."""
    version_of = {v.fingerprint: v.number for v in t.summary.table.versions}
    unreferenced = {d.rel for d in t.summary.table.unreferenced}
    logged = t.summary.table.table_format != "parquet"
    schema_of = t.summary.log_schema_of

    def log_columns(rel: str) -> dict[str, Any]:
        return {"referenced": rel not in unreferenced if logged else None, "log_schema": schema_of.get(rel)}

    for f in t.summary.table.scan.footers:
        yield {
            **log_columns(f.rel),
            "run_id": run_id, "table_name": t.name, "path": f.rel,
            "partition": partition_dir(f.partition) or None, "size": f.size, "mtime": _time(f.mtime),
            "rows": f.rows, "row_groups": f.row_groups, "created_by": f.created_by,
            "version": version_of.get(f.fingerprint), "fingerprint": f.fingerprint,
            "status": "read", "reason": None,
        }
    bad = {u.rel for u in t.summary.table.scan.unreadable}
    listed = {d.rel: d for d in t.summary.table.listing.files if d.rel in bad} if bad else {}
    for u in t.summary.table.scan.unreadable:
        d = listed.get(u.rel)
        yield {
            **log_columns(u.rel),
            "run_id": run_id, "table_name": t.name, "path": u.rel,
            "partition": partition_dir(d.partition) or None if d else None,
            "size": d.size if d else None, "mtime": _time(d.mtime) if d else None,
            "rows": None, "row_groups": None, "created_by": None, "version": None, "fingerprint": None,
            "status": "unreadable", "reason": u.reason,
        }


def _time(mtime: float | None) -> datetime | None:
    return datetime.fromtimestamp(mtime, UTC) if mtime is not None else None


# ---------------------------------------------------------------------------------------------
# writing


def warm(spark: SparkSession, catalog: CatalogConfig) -> None:
    """The report tables made ready while the audit still runs (the metastore's first answers, and
    Delta's first commits in a new JVM: seconds on the embedded default), so the write that follows
    only appends. Idempotent, writing no row; any error is met again, and reported, by the write."""
    with contextlib.suppress(Exception):
        ensure_tables(spark, catalog)


def ensure_tables(spark: SparkSession, catalog: CatalogConfig) -> None:
    """The database and the report tables, created when missing (never altered or replaced)."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(*_prefix(catalog))}")
    names = table_names(catalog)
    for table, schema in schemas().items():
        if table == "file_footers" and not catalog.file_footers:
            continue
        if spark.catalog.tableExists(names[table]):  # a metastore look-up: cheaper than createIfNotExists
            _expand_columns(spark, names[table], spark.table(names[table]).schema, schema)
            continue
        _create(spark, names[table], schema, f"schemaguard report: {table}")


def _create(spark: SparkSession, name: str, schema: StructType, comment: str) -> None:
    """Create a Delta table that was missing a moment ago (another writer may just have made it)."""
    from delta.tables import DeltaTable
    from pyspark.errors import AnalysisException

    try:
        DeltaTable.createIfNotExists(spark).tableName(name).addColumns(schema).comment(comment).execute()
    except AnalysisException:
        # Another writer created it between our check and our create: fine if it is there now.
        if not spark.catalog.tableExists(name):
            raise


def _expand_columns(spark: SparkSession, name: str, found: StructType, wanted: StructType) -> None:
    """An existing report table must have this version's columns and types (nullability aside): a
    MERGE into another shape would fail half-way through a run, so refuse before writing. A table
    an earlier version made, lacking only columns added since (all nullable), is expanded."""
    have = {f.name: f.dataType.simpleString() for f in found.fields}
    want = {f.name: f.dataType.simpleString() for f in wanted.fields}
    other = [c for c in want if c in have and have[c] != want[c]]
    extra = [c for c in have if c not in want]
    if other or extra:
        raise CatalogWriteError(
            f"report table {name} does not have this schemaguard version's columns (other type: "
            f"{', '.join(other) or '-'}; unexpected: {', '.join(extra) or '-'}): set another [catalog] "
            "database, or migrate the table")
    added = [f for f in wanted.fields if f.name not in have]
    if added:
        spark.sql(f"ALTER TABLE {name} ADD COLUMNS "
                  f"({', '.join(f'{quote(f.name)} {f.dataType.simpleString()}' for f in added)})")


def write_run(spark: SparkSession, run: AuditRun, catalog: CatalogConfig, config_path: str,
              new_id: bool = False) -> None:
    """Write one audit run: child tables first, `runs` last, one commit a table; appends for a run id
    no table holds yet, MERGEs for one some table holds (a rerun: its rows are replaced). `new_id`:
    the id was made by this run (`new_run_id`), so no table can hold it and the look costs nothing
    (it is the session's first read of the tables: 5-10 s of JVM warm-up on the embedded default).

    File footers are only written when `catalog.file_footers`. Rows are built in Python and sent
    with one createDataFrame call per table: fine for thousands of files; a table of millions
    would want the footer rows built on the executors or sent through Arrow in batches.
    """
    ensure_tables(spark, catalog)
    parts: list[tuple[str, Callable[[AuditRun], list[dict[str, Any]]]]] = [
        ("findings", finding_rows), ("schema_versions", version_rows), ("proofs", proof_rows)]
    if catalog.file_footers:
        parts.append(("file_footers", footer_rows))
    write = _append if new_id or not written_before(spark, catalog, run.run_id) else _merge
    for table, rows in parts:
        write(spark, catalog, table, run.run_id, rows(run))
    write(spark, catalog, "runs", run.run_id, [run_row(run, config_path)])  # last: marks the run complete


def written_before(spark: SparkSession, catalog: CatalogConfig, run_id: str) -> bool:
    """Whether any report table holds a row of `run_id` (a complete run, or a dead run's orphans):
    one query over all of them, each filtered on run_id (Delta skips files by its statistics)."""
    from pyspark.sql import functions as F

    names = table_names(catalog)
    present = [spark.table(names[t]).where(F.col("run_id") == F.lit(run_id)).select("run_id")
               for t in TABLES if spark.catalog.tableExists(names[t])]
    union = present[0]
    for df in present[1:]:
        union = union.unionAll(df)
    return bool(union.limit(1).take(1))


def _append(spark: SparkSession, catalog: CatalogConfig, table: str, run_id: str,
            rows: list[dict[str, Any]]) -> None:
    """Add `rows` to the table in one commit (a run id no table holds yet)."""
    name = table_names(catalog)[table]
    _committed(name, run_id, lambda: _frame(spark, schemas()[table], rows).writeTo(name).append())


def _merge(spark: SparkSession, catalog: CatalogConfig, table: str, run_id: str,
           rows: list[dict[str, Any]]) -> None:
    """Make the table's rows of `run_id` exactly `rows`, in one commit."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    source = _frame(spark, schemas()[table], rows)
    on = F.lit(True)
    for key in KEYS[table]:
        on = on & (F.col(f"t.{key}") == F.col(f"s.{key}"))
    ours = F.col("t.run_id") == F.lit(run_id)
    name = table_names(catalog)[table]
    _committed(name, run_id, lambda: (
        DeltaTable.forName(spark, name).alias("t")
        .merge(source.alias("s"), on & ours)
        .whenMatchedUpdateAll()
        .whenNotMatchedInsertAll()
        .whenNotMatchedBySourceDelete(ours)
        .execute()))


def _committed(name: str, run_id: str, commit: Callable[[], object]) -> None:
    """Run one commit, retrying Delta's commit conflicts with jitter; any other error is one line."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            commit()
            return
        except Exception as e:
            if not is_conflict(e):
                raise CatalogWriteError(f"writing {name} for run {run_id}: {first_line(e)}") from e
            if attempt == ATTEMPTS:
                raise CatalogWriteError(
                    f"{name}: run {run_id} still conflicts with concurrent writers after "
                    f"{ATTEMPTS} attempts: {first_line(e)}") from e
            time.sleep(random.uniform(0.2, 0.5) * attempt)  # jitter: two writers do not retry in step


def _frame(spark: SparkSession, schema: StructType, rows: list[dict[str, Any]]) -> DataFrame:
    """The rows as a DataFrame, sent to the JVM as Arrow: a list of tuples would be unpickled by
    a Python worker, whose start costs a cold process about two seconds."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    return spark.createDataFrame(pa.Table.from_pylist(rows, schema=to_arrow_schema(schema)), schema)


def is_conflict(e: BaseException) -> bool:
    """A Delta commit conflict, however pyspark surfaces it: delta-spark's Python classes (installed
    by `import delta.exceptions`, which patches pyspark's converter), or pyspark's UnknownException /
    Py4JJavaError naming `io.delta.exceptions.<Name>` (or Delta's internal class of the same name)."""
    if any(c.__name__ in CONFLICTS for c in type(e).__mro__):
        return True
    text = first_line(e)
    return any(f".{name}:" in text or text.startswith(f"{name}:") for name in CONFLICTS)


# ---------------------------------------------------------------------------------------------
# migrations: one row a gated step run with --apply (schemaguard migrate)

MIGRATIONS = "migrations"


def migrations_schema() -> StructType:
    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    s = StringType()
    return StructType([
        StructField("plan_id", s, False), StructField("table_name", s, False), StructField("step", s, False),
        StructField("status", s, False), StructField("version_before", LongType()),
        StructField("version_after", LongType()), StructField("checks_json", s), StructField("sql_json", s),
        StructField("started_at", TimestampType(), False), StructField("finished_at", TimestampType(), False),
        StructField("schemaguard_version", s)])


def migrations_table(catalog: CatalogConfig) -> str:
    return quote(*_prefix(catalog), MIGRATIONS)


def migration_rows(spark: SparkSession, catalog: CatalogConfig, plan_id: str) -> list[dict[str, Any]]:
    """The recorded steps of one plan, oldest first (none when the table does not exist yet)."""
    from pyspark.sql import functions as F

    name = migrations_table(catalog)
    if not spark.catalog.tableExists(name):
        return []
    rows = (spark.table(name).where(F.col("plan_id") == F.lit(plan_id))
            .orderBy("started_at", "finished_at").collect())
    # PySpark gives a TIMESTAMP as a naive datetime in this process's local time: made an instant
    return [{k: v.astimezone(UTC) if isinstance(v, datetime) else v for k, v in r.asDict().items()}
            for r in rows]


def _may_hold(stats: dict[str, Any] | None, column: str, value: str) -> bool:
    """Whether a file's logged min/max of a string column admit the value (no bounds: it may)."""
    low = ((stats or {}).get("minValues") or {}).get(column)
    high = ((stats or {}).get("maxValues") or {}).get(column)
    if not isinstance(low, str) or not isinstance(high, str):
        return True
    # Delta may log a long string's bounds cut to a prefix: a cut min is still at most every
    # value, and every value at most the max compares at most the max on the max's length
    return low <= value and value[:len(high)] <= high


def migration_rows_from_log(location: Path, plan_id: str) -> list[dict[str, Any]] | None:
    """`migration_rows` read without Spark (`rows_from_log`); None when no table is there."""
    rows = rows_from_log(location, ("plan_id", plan_id))
    return None if rows is None else sorted(rows, key=lambda r: (r["started_at"], r["finished_at"]))


def findings_from_log(runs: Path, findings: Path) -> list[dict[str, Any]] | None:
    """What `findings_query` answers, read without Spark from the two tables' logs: the latest
    complete run's findings, most severe first. None when either table is not there."""
    complete = rows_from_log(runs, ("status", "complete"))
    if complete is None:
        return None
    if not complete:
        return []
    latest = max(complete, key=lambda r: (r["started_at"], r["run_id"]))
    found = rows_from_log(findings, ("run_id", latest["run_id"]))
    if found is None:
        return None
    rank = {"error": 0, "warning": 1}
    found.sort(key=lambda r: (rank.get(r["severity"], 2), r["table_name"], r["code"], r["finding_key"]))
    return [{"run_id": latest["run_id"], "started_at": latest["started_at"],
             **{k: r[k] for k in FINDINGS_COLUMNS}} for r in found]


def rows_from_log(location: Path, where: tuple[str, str]) -> list[dict[str, Any]] | None:
    """The rows of one of our Delta tables whose column `where[0]` equals `where[1]`, read without
    Spark: its log (formats/delta.py) names the snapshot's files, pyarrow reads them. Times come
    back as UTC instants. None when no table is there (only the metastore could say whether it
    is elsewhere or not made yet)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    from schemaguard.formats.delta import holds_commits, read_delta_log

    log = location / "_delta_log"
    fs = pafs.LocalFileSystem()
    if not log.is_dir() or not holds_commits(fs, str(log)):
        return None
    snapshot = read_delta_log(fs, str(log), str(location))
    column, value = where
    # Spark writes TIMESTAMP as INT96 (UTC instants): read as microseconds, made aware below. Only
    # the files whose logged bounds of the column can hold the value are read (one run's rows of
    # `findings` in a file or two, however many runs the table keeps).
    tables = [pq.read_table(location / f.path, coerce_int96_timestamp_unit="us") for f in snapshot.files
              if _may_hold(f.stats, column, value)]
    if not tables:
        return []
    table = pa.concat_tables(tables, promote_options="permissive")
    table = table.filter(pc.equal(table[column], value))
    return [{k: v.replace(tzinfo=UTC) if isinstance(v, datetime) and v.tzinfo is None else v
             for k, v in r.items()} for r in table.to_pylist()]


def record_migration(spark: SparkSession, catalog: CatalogConfig, row: dict[str, Any]) -> None:
    """Append one step's record in one commit (the database and table made on first use)."""
    name = migrations_table(catalog)
    if not spark.catalog.tableExists(name):  # a metastore look-up: a step records twice
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(*_prefix(catalog))}")
        _create(spark, name, migrations_schema(), "schemaguard: migration steps run with --apply")
    row = {**row, "schemaguard_version": version()}
    _committed(name, row["plan_id"], lambda: _frame(spark, migrations_schema(), [row]).writeTo(name).append())
