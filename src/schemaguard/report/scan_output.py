"""What `schemaguard scan` prints: the JSON document of DESIGN.md and a rich text form."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from schemaguard.formats.notation import schema_to_notation
from schemaguard.lake.discover import Listing
from schemaguard.lake.history import ColumnChange, History, column_changes
from schemaguard.lake.scan import ScanResult
from schemaguard.report.console import console as terminal
from schemaguard.report.findings import Finding, finding_doc, history_findings, scan_findings

PROGRESS_ABOVE = 2000  # files; smaller scans finish before a bar would help


@dataclass(frozen=True)
class ScanReport:
    table: str
    listing: Listing
    result: ScanResult
    history: History

    @cached_property
    def findings(self) -> list[Finding]:
        return [*scan_findings(self.listing, self.result), *history_findings(self.history)]


@contextmanager
def progress(total: int, enabled: bool, label: str = "") -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr for large scans in a terminal; stdout stays clean for data."""
    if not enabled or total < PROGRESS_ABOVE or not sys.stderr.isatty():
        yield None
        return
    title = f"reading footers{' of ' + label if label else ''}"
    columns = (TextColumn(title), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("footers", total=total)
        yield lambda n: bar.advance(task, n)


def to_json(report: ScanReport, max_files: int) -> dict[str, Any]:
    versions = []
    previous = None
    for v in report.history.versions:
        changes: list[ColumnChange] = column_changes(previous, v.footer) if previous else []
        versions.append({
            "version": v.number,
            "fingerprint": v.fingerprint,
            "schema": schema_to_notation(v.footer.schema),
            "spark_schema": schema_to_notation(v.footer.spark_schema) if v.footer.spark_schema else None,
            "columns": [_column_json(c) for c in v.footer.columns],
            "files": [f.rel for f in v.files[:max_files]],
            "file_count": len(v.files),
            "partitions": list(v.partitions[:max_files]),
            "partition_count": len(v.partitions),
            "rows": v.rows,
            "first_seen": v.first_seen,
            "last_seen": v.last_seen,
            "changes_from_previous": [
                {"path": c.path, "before": c.before, "after": c.after} for c in changes
            ],
        })
        previous = v.footer
    return {
        "table": report.table,
        "ordered_by": report.history.ordered_by,
        "partition_columns": list(report.listing.partition_columns),
        "versions": versions,
        "unreadable": [{"path": u.rel, "reason": u.reason} for u in report.result.unreadable],
        "ignored": [{"path": i.rel, "why": i.why} for i in report.listing.ignored],
        "findings": [finding_doc(f) for f in report.findings],
        "counts": {
            "files": len(report.listing.files),
            "read": len(report.result.footers),
            "unreadable": len(report.result.unreadable),
            "ignored": len(report.listing.ignored),
            "versions": len(report.history.versions),
            "rows": sum(f.rows for f in report.result.footers),
        },
    }


def _column_json(c: Any) -> dict[str, Any]:
    return {
        "path": c.path,
        "physical_type": c.physical_type,
        "type_length": c.type_length,
        "logical_type": c.logical_type,
        "converted_type": c.converted_type,
        "repetition": c.repetition,
        "field_id": c.field_id,
        "container": c.container,
    }


def render_text(report: ScanReport, console: Console | None = None) -> None:
    out = console or terminal()
    h = report.history
    counts = to_json(report, 0)["counts"]
    out.print(f"[bold]{report.table}[/]  {counts['files']} data files, {counts['rows']:,} rows, "
              f"{counts['versions']} schema version(s), oldest first by {h.ordered_by}")
    versions = Table(title="Schema versions", title_justify="left")
    for col in ("version", "seen", "files", "partitions", "rows", "columns", "fingerprint"):
        right = col in ("files", "partitions", "rows", "columns")
        versions.add_column(col, justify="right" if right else "left", no_wrap=True)
    for v in h.versions:
        seen = v.first_seen if v.first_seen == v.last_seen else f"{v.first_seen} .. {v.last_seen}"
        versions.add_row(f"v{v.number}", seen or "-", str(len(v.files)), str(len(v.partitions)),
                         f"{v.rows:,}", str(len(v.footer.columns)), v.fingerprint)
    out.print(versions)
    changes = Table(title="Columns that change between versions", title_justify="left")
    for col in ("versions", "column", "before", "after"):
        changes.add_column(col)
    for prev, cur in zip(h.versions, h.versions[1:], strict=False):
        for c in column_changes(prev.footer, cur.footer):
            changes.add_row(f"v{prev.number}->v{cur.number}", c.path, c.before or "(absent)",
                            c.after or "(absent)")
    if changes.row_count:
        out.print(changes)
    if report.result.unreadable:
        bad = Table(title="Unreadable files", title_justify="left")
        bad.add_column("file")
        bad.add_column("reason")
        for u in report.result.unreadable:
            bad.add_row(u.rel, u.reason)
        out.print(bad)
    colour = {"error": "red", "warning": "yellow", "info": "cyan"}
    for f in report.findings:
        if f.code != "UNREADABLE_FILE":  # those are in the table above
            where = f" in v{', v'.join(map(str, f.versions))}" if f.versions else ""
            out.print(f"[{colour[f.severity]}]{f.severity.upper()} {f.code}[/] {f.message} "
                      f"({f.count} file(s){where}, e.g. {f.files[0]})", soft_wrap=True)
    if report.listing.ignored:
        why = Counter(i.why for i in report.listing.ignored)
        out.print("Ignored (not data to Spark): " + "; ".join(f"{n} x {w}" for w, n in why.items()))
