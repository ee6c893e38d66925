"""What `schemaguard scan` prints: the JSON document of docs/design.md and a rich text form, both read
from the table's summary and findings; and the progress bar of long footer scans."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING, Any

from schemaguard.acyclic import acyclic
from schemaguard.checks.finding import Finding, FindingCode, finding_doc
from schemaguard.checks.summary import TableSummary
from schemaguard.formats.notation import schema_to_notation

if TYPE_CHECKING:  # rich loads where text is drawn: `scan --format json` (a program's) never needs it
    from rich.console import Console
    from rich.table import Table

PROGRESS_ABOVE = 2000  # files; smaller scans finish before a bar would help


@contextmanager
def progress(total: int, enabled: bool, label: str = "") -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr for large scans in a terminal; stdout stays clean for data."""
    if not enabled or total < PROGRESS_ABOVE or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from schemaguard.report.console import console as terminal

    title = f"reading footers{' of ' + label if label else ''}"
    columns = (TextColumn(title, markup=False), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=terminal(stderr=True), transient=True) as bar:
        task = bar.add_task("footers", total=total)
        yield lambda n: bar.advance(task, n)


@acyclic()
def scan_json(summary: TableSummary, findings: Sequence[Finding], max_files: int) -> dict[str, Any]:
    """The scan's JSON document (docs/design.md), also each table's `scan` in the audit's JSON report."""
    table, c = summary.table, summary.counts
    versions = []
    for vs in summary.versions:
        v = vs.version
        versions.append({
            "version": v.number,
            "fingerprint": v.fingerprint,
            "schema": schema_to_notation(v.footer.schema),
            "spark_schema": schema_to_notation(v.footer.spark_schema) if v.footer.spark_schema else None,
            "columns": [_column_json(c) for c in v.footer.columns],
            "files": list(islice(v.files.rels(), max_files)),
            "file_count": len(v.files),
            "partitions": list(v.partitions[:max_files]),
            "partition_count": len(v.partitions),
            "rows": v.rows,
            "first_seen": v.first_seen,
            "last_seen": v.last_seen,
            "changes_from_previous": [
                {"path": ch.path, "before": ch.before, "after": ch.after} for ch in vs.changes
            ],
        })
    return {
        "table": summary.name,
        "format": table.table_format,
        **({"snapshot": _snapshot_json(summary, max_files)} if table.table_format != "parquet" else {}),
        "ordered_by": table.history.ordered_by,
        "partition_columns": list(table.listing.partition_columns),
        "versions": versions,
        "unreadable": [{"path": u.rel, "reason": u.reason} for u in table.scan.unreadable],
        "ignored": [{"path": i.rel, "why": i.why} for i in table.listing.ignored],
        "findings": [finding_doc(f) for f in findings],
        "counts": {"files": c.files, "read": c.read, "unreadable": c.unreadable, "ignored": c.ignored,
                   "versions": c.versions, "rows": c.rows, "unreferenced": c.unreferenced,
                   "reused": c.reused},
    }


def _snapshot_json(summary: TableSummary, max_files: int) -> dict[str, Any]:
    """A Delta or Iceberg table's snapshot: its version, features, schema history and
    unreferenced files."""
    table = summary.table
    history = [{
        "version": v.version,
        "timestamp": v.timestamp,
        "schema": schema_to_notation(v.schema),
        "files": v.files,
        "changes": [{"operation": o.kind.value, "path": o.path, "old_path": o.old_path,
                     "before": o.before, "after": o.after, "detail": o.detail} for o in v.changes],
    } for v in summary.log_versions]
    unreferenced = [f.rel for f in table.unreferenced[:max_files]]
    common = {"schema_history": history, "unreferenced_files": unreferenced}
    if table.iceberg is not None:
        snap = table.iceberg
        return {"version": snap.snapshot_id, "metadata_location": snap.metadata_location,
                "format_version": snap.format_version, "current_schema_id": snap.current_schema_id,
                "name_mapping": snap.name_mapping is not None, "delete_files": len(snap.delete_files),
                **common, "notes": list(snap.notes)}
    log = table.delta
    assert log is not None
    return {"version": log.version, "column_mapping": log.mapping_mode, "protocol": log.protocol,
            **common, "notes": list(log.notes)}


def _column_json(c: Any) -> dict[str, Any]:
    return {
        "path": c.path,
        "parquet_path": list(c.parquet_path),
        "physical_type": c.physical_type,
        "type_length": c.type_length,
        "logical_type": c.logical_type,
        "converted_type": c.converted_type,
        "repetition": c.repetition,
        "field_id": c.field_id,
        "container": c.container,
        "max_definition_level": c.max_definition_level,
        "max_repetition_level": c.max_repetition_level,
    }


SHOWN_CHANGES = 200  # rows of the text's column changes table; the JSON has every one


def scan_text(summary: TableSummary, findings: Sequence[Finding], console: Console | None = None) -> None:
    from rich.table import Table
    from rich.text import Text

    from schemaguard.report.console import console as terminal
    from schemaguard.report.rules_output import print_lines

    out = console or terminal()
    table, counts = summary.table, summary.counts
    kind = ""
    if table.delta is not None:
        kind = f" (Delta table, snapshot v{table.delta.version})"
    elif table.iceberg is not None:
        kind = f" (Iceberg table, snapshot {table.iceberg.snapshot_id})"
    out.print(Text.assemble((summary.name, "bold"),  # one line, however long the path: a log greps it
                            f"{kind}  {counts.files} data files, {counts.rows:,} rows, {counts.versions} "
                            f"schema version(s), oldest first by {table.history.ordered_by}"), soft_wrap=True)
    if table.reuse is not None and table.reuse.ignored:
        out.print(f"the last run's cache was not used ({table.reuse.ignored}): every footer was read")
    elif counts.reused:
        out.print(f"{counts.reused:,} footer(s) of files unchanged since the last run taken from its cache, "
                  f"{counts.files - counts.reused:,} read (--full reads all)")
    if summary.log_versions:
        out.print(_log_table(summary))
    if counts.unreferenced:
        out.print(f"{counts.unreferenced} data file(s) on disk that the snapshot does not reference "
                  "(removed, not yet vacuumed, or orphans): left out of every verdict")
    versions = Table(title="Schema versions", title_justify="left")
    for col in ("version", "seen", "files", "partitions", "rows", "columns", "fingerprint"):
        right = col in ("files", "partitions", "rows", "columns")
        versions.add_column(col, justify="right" if right else "left", no_wrap=True)
    for v in table.versions:
        seen = v.first_seen if v.first_seen == v.last_seen else f"{v.first_seen} .. {v.last_seen}"
        versions.add_row(f"v{v.number}", seen or "-", str(len(v.files)), str(len(v.partitions)),
                         f"{v.rows:,}", str(len(v.footer.columns)), v.fingerprint)
    out.print(versions)
    changes = Table(title="Columns that change between versions", title_justify="left")
    for col in ("versions", "column", "before", "after"):
        changes.add_column(col)
    rows = ((f"v{prev.version.number}->v{cur.version.number}", c.path, c.before or "(absent)",
             c.after or "(absent)")
            for prev, cur in zip(summary.versions, summary.versions[1:], strict=False) for c in cur.changes)
    for row in islice(rows, SHOWN_CHANGES):
        changes.add_row(*row)
    if changes.row_count:
        out.print(changes)
    if more := sum(1 for _ in rows):  # what the table leaves out (a terminal is no place for 20,000 rows)
        out.print(f"... and {more:,} more column change(s) between versions: --format json lists every one")
    if table.scan.unreadable:
        out.print(unreadable_table("Unreadable files", table.scan.unreadable))
    colour = {"error": "red", "warning": "yellow", "info": "cyan"}
    lines = []
    for f in findings:
        if f.code != FindingCode.UNREADABLE_FILE:  # those are in the table above
            where = f" in v{', v'.join(map(str, f.versions))}" if f.versions else ""
            example = f", e.g. {f.files[0]}" if f.files else ""
            lines.append(Text.assemble((f"{f.severity.upper()} {f.code}", colour[f.severity]),
                                       f" {f.message} ({f.count} file(s){where}{example})"))
    print_lines(out, lines)
    if table.listing.ignored:
        why = Counter(i.why for i in table.listing.ignored)
        out.print("Ignored (not data to Spark): " + "; ".join(f"{n} x {w}" for w, n in why.items()))


def _log_table(summary: TableSummary) -> Table:
    from rich.table import Table

    iceberg = summary.table.iceberg is not None
    history = Table(title=f"Table schema history ({'the metadata' if iceberg else 'the log'})",
                    title_justify="left")
    for col in ("schema id" if iceberg else "table version", "current from" if iceberg else "committed",
                "files", "changes"):
        history.add_column(col, justify="right" if col == "files" else "left")
    for v in summary.log_versions:
        first = v is summary.log_versions[0]
        changes = "; ".join(_operation_text(o) for o in v.changes) or ("created" if first else "-")
        history.add_row(str(v.version) if iceberg else f"v{v.version}", v.timestamp or "-", str(v.files),
                        changes)
    return history


def _operation_text(o: Any) -> str:
    if o.old_path:
        return f"{o.kind.value} {o.old_path} -> {o.path}"
    change = f" {o.before} -> {o.after}" if o.before and o.after else ""
    return f"{o.kind.value} {o.path}{change}"


def unreadable_table(title: str, unreadable: Iterable[Any]) -> Table:
    """Files that cannot be read, with why (`rel`, `reason`), as the scan and the gate list them."""
    from rich.table import Table

    bad = Table(title=title, title_justify="left")
    bad.add_column("file")
    bad.add_column("reason")
    for u in unreadable:
        bad.add_row(u.rel, u.reason)
    return bad
