"""The lake audit: for each configured table, read every footer, group the versions, check each
version on disk against the table's current schema under the configured readers and mode, and
collect the findings with their waivers. Pure of output: the CLI and the jobs render and store it.

Every table is listed before any footer is read, so a missing table stops the run (exit 2)
before anything is written. Spark is started only when something needs it: a catalog table, the
Spark engine, or the catalog report.
"""

from __future__ import annotations

import secrets
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from schemaguard.config import AuditConfig, TableConfig
from schemaguard.lake.discover import DiscoveryError, Listing, discover
from schemaguard.lake.history import SchemaVersion, build_history
from schemaguard.lake.scan import scan, scan_on_spark
from schemaguard.model import Schema
from schemaguard.report.findings import SEVERITIES, Finding, Waiver
from schemaguard.report.findings import involved as involved_in
from schemaguard.report.run import AuditRun, TableAudit, by_severity
from schemaguard.report.scan_output import ScanReport
from schemaguard.rules.modes import pairs
from schemaguard.rules.profiles import Problem, can_read

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Per table: (files in all, label=table name) -> a context whose value advances by files done, or None.
Progress = Callable[..., AbstractContextManager[Callable[[int], None] | None]]


def no_progress(total: int, label: str = "") -> AbstractContextManager[None]:
    return nullcontext()


class AuditError(Exception):
    """The audit cannot start: a table the catalog does not know, a schema file that does not load."""


@dataclass(frozen=True)
class _Target:
    table: TableConfig
    listing: Listing
    catalog_schema: Schema | None


def new_run_id(now: datetime) -> str:
    """Sortable by time, unique across concurrent runs: `20261202T151402Z-1a2b3c`."""
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def needs_spark(config: AuditConfig) -> bool:
    return (config.catalog.enabled or config.engine == "spark"
            or any(t.catalog_table for t in config.tables))


def run_audit(config: AuditConfig, run_id: str | None = None, spark: SparkSession | None = None,
              progress: Progress = no_progress, now: datetime | None = None) -> AuditRun:
    started = now or datetime.now(UTC)
    clock = time.monotonic()
    targets = [_target(t, spark) for t in config.tables]  # every listing first: fail before reading
    tables = []
    for target in targets:
        with progress(len(target.listing.files), label=target.table.name) as advance:
            tables.append(_waive(_audit_table(target, config, spark, advance), config.waivers))
    run_findings = waiver_findings(config.waivers, [f for t in tables for f in t.findings], started.date())
    finished = started + timedelta(seconds=time.monotonic() - clock)
    return AuditRun(run_id or new_run_id(started), started, finished, config.fail_level,
                    tuple(tables), tuple(run_findings))


def _target(table: TableConfig, spark: SparkSession | None) -> _Target:
    schema = None
    if table.catalog_table is None:
        assert table.path is not None
        location = table.path
    elif spark is None:
        raise AuditError(f"table {table.name}: a catalog table needs Spark")
    else:
        location, schema = catalog_table(spark, table.catalog_table)
    try:
        return _Target(table, discover(location), schema)
    except DiscoveryError as e:
        raise AuditError(f"table {table.name}: {e}") from None


def catalog_table(spark: SparkSession, name: str) -> tuple[str, Schema]:
    """The location and schema the catalog holds for `name` (validated parts, quoted here)."""
    from pyspark.errors import AnalysisException

    from schemaguard.formats.spark import schema_from_spark_json

    quoted = ".".join(f"`{part}`" for part in name.split("."))
    try:
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {quoted}").collect()
        schema = schema_from_spark_json(spark.table(quoted).schema.json())
    except AnalysisException as e:
        raise AuditError(f"catalog table {name}: {str(e).splitlines()[0]}") from None
    location = next((r["data_type"] for r in rows if r["col_name"] == "Location"), None)
    if not location:
        raise AuditError(f"catalog table {name}: the catalog gives no location (a view?)")
    if location.startswith("file:") and not location.startswith("file://"):
        location = location[len("file:"):]  # Hive's `file:/x`; pyarrow wants a path or file:///x
    return location, schema


def _audit_table(target: _Target, config: AuditConfig, spark: SparkSession | None,
                 advance: Callable[[int], None] | None) -> TableAudit:
    table = target.table
    if config.engine == "spark" and spark is not None:
        result = scan_on_spark(target.listing, spark)
    else:
        result = scan(target.listing, advance)
    history = build_history(result.footers)
    report = ScanReport(table.name, target.listing, result, history)
    source, current = _current_schema(target, history.versions)
    found = list(report.findings)
    if not target.listing.files:
        found.append(Finding(
            "TABLE_HAS_NO_DATA", "warning",
            f"no data file under {target.listing.root}: nothing was checked (a wrong path, or a table "
            f"not written yet?); {len(target.listing.ignored)} file(s) ignored", 0, (),
            rule="lake/discover.py (Spark's listing rules)"))
    if current is not None:
        found += compatibility_findings(history.versions, current, table)
    found = [replace(f, table=table.name) for f in found]
    return TableAudit(table.name, target.listing.root, report, source, current or Schema(()),
                      table.profiles, table.mode, tuple(by_severity(found)))


def _current_schema(target: _Target, versions: tuple[SchemaVersion, ...]) -> tuple[str, Schema | None]:
    if target.table.schema is not None:
        from schemaguard.formats.load import load_schemas

        loaded = load_schemas(target.table.schema)
        if not loaded.schemas:
            raise AuditError(f"{target.table.name}: schema {target.table.schema} holds no schema")
        return target.table.schema, loaded.schemas[-1][1]
    if target.catalog_schema is not None:
        return "catalog", target.catalog_schema
    if versions:
        return f"newest version (v{versions[-1].number})", versions[-1].footer.schema
    return "none (no readable file)", None


def compatibility_findings(versions: tuple[SchemaVersion, ...], current: Schema,
                           table: TableConfig) -> list[Finding]:
    """Each version on disk against the current schema, as the mode pairs them, per profile.

    A pair (writer, reader) whose reader is the current schema is BACKWARD: today's readers on old
    files. One whose writer is the current schema is FORWARD: readers still on an old version
    reading what is written now. Problems are grouped by (profile, direction, column, code), so a
    problem shared by many versions is one finding naming them all.
    """
    current_n = len(versions) + 1
    schemas = [v.footer.schema for v in versions]
    groups: dict[tuple[str, str, str, str], list[tuple[SchemaVersion, Problem]]] = defaultdict(list)
    for profile in table.profiles:
        for w, r in pairs(len(versions), table.mode):
            old = versions[(r if w == current_n else w) - 1]
            direction = "forward" if w == current_n else "backward"
            writer = current if w == current_n else schemas[w - 1]
            reader = current if r == current_n else schemas[r - 1]
            for p in can_read(writer, reader, profile, table.options):
                if p.severity == "info":
                    continue  # a promotion the reader makes: LOGICAL_TYPE_DRIFT shows the change itself
                groups[(profile, direction, p.path, p.code)].append((old, p))
    return [_compat_finding(key, hits, versions, current) for key, hits in groups.items()]


def _compat_finding(key: tuple[str, str, str, str], hits: list[tuple[SchemaVersion, Problem]],
                    versions: tuple[SchemaVersion, ...], current: Schema) -> Finding:
    """Backward: the files at stake are the old versions'. Forward: they are the files written with
    the current schema (if any are on disk yet), and the old versions are the readers."""
    profile, direction, path, code = key
    olds = sorted({v.number: v for v, _ in hits}.values(), key=lambda v: v.number)
    worst = max((p for _, p in hits), key=lambda p: SEVERITIES.index(p.severity))
    named = ", ".join(f"v{v.number}" for v in olds)
    if direction == "backward":
        involved, readers = olds, "the current schema"
        what = f"{profile}: a reader with the current schema reading {named} files"
    else:
        involved, readers = [v for v in versions if v.footer.schema == current], named
        what = f"{profile}: a reader still on the schema of {named} reading data written now"
    files = involved_in(involved)
    written = ", ".join(f"v{v.number}" for v in involved) or "the current schema (none on disk yet)"
    return Finding(
        "VERSION_INCOMPATIBLE" if worst.severity == "error" else "VERSION_READ_CHANGES_MEANING",
        worst.severity, f"{what}: {worst.message} [{code}]", files.count, files.files, path,
        tuple(v.number for v in involved), f"{worst.rule.id} ({worst.rule.source})",
        subject=f"{profile}:{direction}:{path}:{code}", partitions=files.partitions,
        partition_count=files.partition_count,
        evidence=(("reader profile", profile), ("direction", direction), ("reader schema", readers),
                  ("files written with", written)))


def _waive(table: TableAudit, waivers: tuple[Waiver, ...]) -> TableAudit:
    by_key = {w.key: w for w in waivers}
    return replace(table, findings=tuple(replace(f, waiver=by_key.get(f.key)) for f in table.findings))


def waiver_findings(waivers: tuple[Waiver, ...], findings: list[Finding], today: date) -> list[Finding]:
    """An expired waiver is a finding of its own (it no longer hides anything); so is one whose
    finding is gone (the problem was fixed: remove the waiver)."""
    keys = {f.key for f in findings}
    out = []
    for w in waivers:
        table = w.key.split(":", 1)[0]
        evidence = (("owner", w.owner), ("reason", w.reason), ("expires", w.expires.isoformat()))
        if not w.active(today):
            out.append(Finding("WAIVER_EXPIRED", "warning",
                               f"the waiver of {w.key} by {w.owner} expired on {w.expires}: the finding "
                               "counts again; fix it or renew the waiver", 0, (), subject=w.key,
                               evidence=evidence, table=table, rule="conf/schemaguard.toml [[waivers]]"))
        elif w.key not in keys:
            out.append(Finding("WAIVER_UNMATCHED", "info",
                               f"the waiver of {w.key} by {w.owner} matches no finding of this run: "
                               "the problem is gone or the key is misspelt; remove it", 0, (), subject=w.key,
                               evidence=evidence, table=table, rule="conf/schemaguard.toml [[waivers]]"))
    return out
