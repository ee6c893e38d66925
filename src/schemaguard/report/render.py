"""The audit's reports: one `AuditRun` as terminal text, JSON, Markdown, HTML, JUnit XML and SARIF,
and the writer that puts every file format of a run into one folder at once.

The renderers are pure functions of the run: they format what the audit computed and decide
nothing. `write_reports` is the only one that touches the disk.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rich.console import Console
from rich.table import Table
from rich.text import Text

from schemaguard import version
from schemaguard.formats.notation import describe, schema_to_notation
from schemaguard.lake.history import SchemaVersion, column_changes, date_partition_column, leaf_signature
from schemaguard.model import leaves
from schemaguard.report import scan_output
from schemaguard.report.console import console as terminal
from schemaguard.report.findings import SAMPLE, SEVERITIES, Finding, finding_doc
from schemaguard.report.run import AuditRun, TableAudit, by_severity

MAX_FILES = SAMPLE  # files per version in the JSON scan document (the count stands beside them)
FILE_NAMES = {"json": "report.json", "markdown": "report.md", "html": "report.html",
              "junit": "junit.xml", "sarif": "report.sarif"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
RUN_SUITE = "schemaguard:run"  # JUnit suite of the run's own findings (':' is never in a table name)

# One colour per schema version lane in the HTML timeline (and its column in the grid); no red, which
# means "unreadable" and "error" on the page.
LANE_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7",
                "#86bcb6", "#d4a6c8")
UNREADABLE_COLOUR = "#c0392b"
SEVERITY_COLOURS = {"error": "#c0392b", "warning": "#b7791f", "info": "#2f6fb0"}
_RICH_STYLES = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}
_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}

# What each finding code means, for SARIF rules and the reports' legends; an unknown code (a newer
# rule) still renders, described by its name.
RULES = {
    "UNREADABLE_FILE": "A file Spark lists as data cannot be read as Parquet",
    "STALE_CHECKSUM": "A Hadoop .crc sidecar does not match its data file",
    "SPARK_MERGE_CONFLICT": "spark.read with mergeSchema fails on the versions on disk",
    "LOGICAL_TYPE_DRIFT": "A column's type or Parquet layout differs between schema versions",
    "CASE_ONLY_NAME_DIFFERENCE": "Column names that differ only in case",
    "COLUMN_MISSING_IN_OLD_FILES": "A column of the newest version that older files lack",
    "NULLABILITY_MISMATCH": "A column is REQUIRED in some schema versions and OPTIONAL in others",
    "FIELD_ID_REUSED": "One Parquet field id names different columns: id-based readers bind the wrong one",
    "FIELD_ID_CHANGED": "One column carries different Parquet field ids across schema versions",
    "SPARK_SCHEMA_DISAGREES_WITH_PARQUET": "The Spark schema in a footer disagrees with its Parquet schema",
    "TABLE_HAS_NO_DATA": "No data file under the table's location: nothing was checked",
    "VERSION_INCOMPATIBLE": "A reader cannot read a schema version on disk",
    "VERSION_READ_CHANGES_MEANING": "A reader reads a schema version on disk, but changes what it means",
    "WAIVER_EXPIRED": "A waiver in the configuration has expired",
    "WAIVER_UNMATCHED": "A waiver in the configuration matches no finding",
}


# ---------------------------------------------------------------------------------------------
# shared pieces


def verdict(run: AuditRun) -> str:
    return "FAIL" if run.exit_code else "PASS"


def _today(run: AuditRun) -> date:
    return run.started_at.date()


def _table_failing(run: AuditRun, table: TableAudit) -> list[Finding]:
    return [f for f in table.findings if run.fails(f)]


def _severity_counts(findings: Iterable[Finding]) -> dict[str, int]:
    found = Counter(f.severity for f in findings)
    return {s: found[s] for s in reversed(SEVERITIES)}


def _severity_line(findings: Sequence[Finding], today: date) -> str:
    counts = _severity_counts(findings)
    parts = [f"{n} {s}" for s, n in counts.items() if n]
    waived = sum(f.waived(today) for f in findings)
    return (", ".join(parts) or "none") + (f"; {waived} waived" if waived else "")


def _versions_text(versions: Sequence[int]) -> str:
    return ", ".join(f"v{n}" for n in versions)


def _waiver_text(f: Finding, today: date) -> str:
    """`WAIVED (owner, until date)`, `waiver expired ...`, or empty."""
    if f.waiver is None:
        return ""
    if f.waiver.active(today):
        return f"WAIVED ({f.waiver.owner}, until {f.waiver.expires.isoformat()})"
    return f"waiver expired {f.waiver.expires.isoformat()} ({f.waiver.owner})"


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(run: AuditRun) -> str:
    seconds = max((run.finished_at - run.started_at).total_seconds(), 0.0)
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _headline(run: AuditRun) -> str:
    failing = len(run.failing)
    if run.fail_level == "never":
        return "no finding fails this run (fail level: never)"
    if failing:
        return f"{failing} finding(s) at or above {run.fail_level} fail the run"
    return f"no unwaived finding at or above {run.fail_level}"


def _table_facts(table: TableAudit, scan_doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The summary of one table, as (label, text) rows every format shows."""
    counts = scan_doc["counts"]
    return [
        ("location", table.location),
        ("files", f"{counts['read']} read, {counts['unreadable']} unreadable, {counts['ignored']} ignored"),
        ("rows", f"{counts['rows']:,}"),
        ("schema versions", f"{counts['versions']} (oldest first by {scan_doc['ordered_by']})"),
        ("current schema", table.current_source),
        ("readers", f"{', '.join(table.profiles)}; mode {table.mode}"),
    ]


def finding_json(run: AuditRun, f: Finding) -> dict[str, Any]:
    today = _today(run)
    waiver = None
    if f.waiver is not None:
        waiver = {"owner": f.waiver.owner, "reason": f.waiver.reason, "expires": f.waiver.expires.isoformat(),
                  "active": f.waiver.active(today)}
    return {**finding_doc(f), "waiver": waiver, "fails": run.fails(f)}


# ---------------------------------------------------------------------------------------------
# terminal


def render_terminal(run: AuditRun, console: Console | None = None) -> None:
    out = console or terminal()
    today = _today(run)
    out.print(Text.assemble(("schemaguard audit", "bold"), f"  run {run.run_id}",
                            f"  started {_stamp(run.started_at)}  took {_duration(run)}",
                            f"  fail level {run.fail_level}"))
    for table in run.tables:
        scan_doc = scan_output.to_json(table.scan, 0)
        failing = _table_failing(run, table)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(overflow="fold")
        for label, value in _table_facts(table, scan_doc):
            grid.add_row(label, Text(value))
        grid.add_row("findings", Text(_severity_line(table.findings, today)))
        grid.add_row("verdict", Text(f"FAIL ({len(failing)} failing)", "bold red") if failing
                     else Text("PASS", "bold green"))
        out.print()
        out.print(Text(table.name, "bold underline"))
        out.print(grid)
    findings = by_severity(list(run.all_findings))
    if findings:
        out.print()
        out.print(Text("Findings, most severe first", "bold underline"))
        rows = Table.grid(padding=(0, 1))
        rows.add_column(no_wrap=True)
        rows.add_column(overflow="fold")
        for f in findings:
            rows.add_row(Text(f.severity.upper(), _RICH_STYLES[f.severity]), _finding_text(run, f, today))
        out.print(rows)
    out.print()
    style = "bold red" if run.exit_code else "bold green"
    out.print(Text.assemble((verdict(run), style), f"  exit code {run.exit_code}: {_headline(run)}"
                            f" ({run.counts()['waived']} waived)"))


def _finding_text(run: AuditRun, f: Finding, today: date) -> Text:
    text = Text.assemble((f.code, "bold"), "  ", (f.table or "-", "magenta"))
    if f.path:
        text.append("  ")
        text.append(f.path, "cyan")
    if run.fails(f):
        text.append("  FAILS", "bold red")
    waiver = _waiver_text(f, today)
    if waiver:
        text.append(f"  {waiver}", "bold green" if f.waived(today) else "yellow")
    text.append(f"\n{f.message}")
    facts = []
    if f.count or f.files:
        facts.append(f"{f.count} file(s)")
    if f.versions:
        facts.append(f"in {_versions_text(f.versions)}")
    if f.files:
        facts.append(f"e.g. {f.files[0]}")
    if facts:
        text.append("\n" + " ".join(facts), "dim")
    return text


# ---------------------------------------------------------------------------------------------
# JSON


def to_json(run: AuditRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat(),
        "fail_level": run.fail_level,
        "verdict": verdict(run),
        "exit_code": run.exit_code,
        "counts": run.counts(),
        "tables": [
            {
                "name": t.name,
                "location": t.location,
                "current_source": t.current_source,
                "current_schema": schema_to_notation(t.current_schema),
                "profiles": list(t.profiles),
                "mode": str(t.mode),
                "verdict": "FAIL" if _table_failing(run, t) else "PASS",
                "scan": scan_output.to_json(t.scan, MAX_FILES),
                "findings": [finding_json(run, f) for f in t.findings],
            }
            for t in run.tables
        ],
        "findings": [finding_json(run, f) for f in run.findings],
    }


# ---------------------------------------------------------------------------------------------
# Markdown

_MD_SPECIAL = re.compile(r"([\\`*\[\]<>&|]|(?<!\w)_|_(?!\w))")


def _md_plain(text: str) -> str:
    """Text outside code: Markdown and HTML punctuation backslash-escaped, one line."""
    return _MD_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", text))


def _md_code(text: str) -> str:
    """A code span for any text (backticks inside get a longer fence); `|` escaped for tables."""
    text = re.sub(r"\s+", " ", text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def _md_text(text: str) -> str:
    """A message whose `backticked` parts stay code: everything else escaped, `|` escaped everywhere."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code spans at all
        return _md_plain(text)
    return "".join(_md_code(p) if i % 2 else _md_plain(p) for i, p in enumerate(parts) if p or not i % 2)


def _md_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    align = ["---:" if i in right else "---" for i in range(len(header))]
    return [_md_row(_md_plain(h) for h in header), _md_row(align), *(_md_row(r) for r in rows)]


def to_markdown(run: AuditRun) -> str:
    today = _today(run)
    mark = "❌" if run.exit_code else "✅"
    lines = [
        f"# {mark} schemaguard audit: **{verdict(run)}**",
        "",
        f"{_md_plain(_headline(run))}. Exit code **{run.exit_code}**, fail level `{run.fail_level}`.",
        "",
        f"Run {_md_code(run.run_id)}, started {_stamp(run.started_at)}, took {_duration(run)}.",
        "",
    ]
    counts = run.counts()
    lines += [*_md_table(list(counts), [[str(n) for n in counts.values()]], range(len(counts))), ""]
    for table in run.tables:
        lines += _md_table_section(run, table, today)
    if run.findings:
        lines += ["## Run", "", *_md_findings(run, list(run.findings), today)]
    return "\n".join(lines).rstrip() + "\n"


def _md_table_section(run: AuditRun, table: TableAudit, today: date) -> list[str]:
    scan_doc = scan_output.to_json(table.scan, 0)
    failing = _table_failing(run, table)
    facts = [(label, _md_code(value) if label == "location" else _md_plain(value))
             for label, value in _table_facts(table, scan_doc)]
    facts.append(("findings", _md_plain(_severity_line(table.findings, today))))
    facts.append(("verdict", f"**FAIL** ({len(failing)} failing)" if failing else "**PASS**"))
    lines = [f"## Table {_md_code(table.name)}: {'FAIL' if failing else 'PASS'}", "",
             *_md_table(["", ""], [[f"**{label}**", value] for label, value in facts]), ""]
    if scan_doc["versions"]:
        rows = []
        for v in scan_doc["versions"]:
            seen = v["first_seen"]
            if v["last_seen"] != v["first_seen"]:
                seen = f"{v['first_seen']} .. {v['last_seen']}"
            changes = "; ".join(_md_change(c) for c in v["changes_from_previous"])
            rows.append([f"v{v['version']}", _md_plain(seen or "-"), str(v["file_count"]),
                         str(v["partition_count"]), f"{v['rows']:,}", str(len(v["columns"])),
                         changes or ("first" if v["version"] == 1 else "-"), _md_code(v["fingerprint"])])
        header = ["version", "seen", "files", "partitions", "rows", "columns", "changes from previous",
                  "fingerprint"]
        lines += ["### Schema versions", "", *_md_table(header, rows, (2, 3, 4, 5)), ""]
    if table.findings:
        lines += ["### Findings", "", *_md_findings(run, list(table.findings), today)]
    return lines


def _md_change(change: dict[str, Any]) -> str:
    path = _md_code(change["path"])
    if change["before"] is None:
        return f"added {path} {_md_code(change['after'])}"
    if change["after"] is None:
        return f"dropped {path}"
    return f"{path} {_md_code(change['before'])} → {_md_code(change['after'])}"


def _md_findings(run: AuditRun, findings: list[Finding], today: date) -> list[str]:
    lines: list[str] = []
    for severity in reversed(SEVERITIES):
        group = [f for f in by_severity(findings) if f.severity == severity]
        if not group:
            continue
        rows = []
        for f in group:
            files = "-"
            if f.files:
                files = f"{f.count}, e.g. {_md_code(f.files[0])}"
            elif f.count:
                files = str(f.count)
            waiver = _md_plain(_waiver_text(f, today)) or "-"
            if f.waiver is not None and f.waived(today):
                waiver = f"**{waiver}**: {_md_plain(f.waiver.reason)}"
            rows.append([_md_code(f.code) + (" **fails**" if run.fails(f) else ""),
                         _md_code(f.path) if f.path else "-", _md_text(f.message),
                         _md_plain(_versions_text(f.versions)) or "-", files, waiver])
        lines += [f"#### {severity} ({len(group)})", "",
                  *_md_table(["code", "column", "message", "versions", "files", "waiver"], rows), ""]
    return lines


# ---------------------------------------------------------------------------------------------
# HTML


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "table"


def _inline(text: str) -> str:
    """A message, escaped, whose `backticked` parts become <code>."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return _e(text)
    return "".join(f"<code>{_e(p)}</code>" if i % 2 else _e(p) for i, p in enumerate(parts))


@dataclass(frozen=True)
class _Mark:
    start: datetime
    end: datetime | None  # None: an instant (a file's modification time)
    files: int
    label: str  # the partition or the moment


@dataclass(frozen=True)
class _Lane:
    label: str
    detail: str
    colour: str
    marks: tuple[_Mark, ...]
    cls: str
    note: str = ""  # what changed from the lane before, written beside the lane's blocks


def _day(value: str | None) -> date | None:
    """A partition value as a day: `2024-01-31`, `20240131`, or a timestamp starting with a date."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value).date()
    except ValueError:
        return None


def _moment(value: str | None) -> datetime | None:
    """first_seen/last_seen: an ISO date (a day, from a date partition) or an ISO timestamp (mtime)."""
    day = _day(value)
    if day is None or value is None:
        return None
    if len(value) <= 10:
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _marks(files: Sequence[Any], date_col: str | None, first: str | None = None,
           last: str | None = None) -> tuple[_Mark, ...]:
    """Where files lie in time: one block per date partition, else a tick per modification
    minute, else the first..last span. `files` are FileFooters or DataFiles (partition, mtime)."""
    if date_col is not None:
        days = Counter(d for f in files if (d := _day(dict(f.partition).get(date_col))) is not None)
        if days:
            return tuple(_Mark(_midnight(d), _midnight(d) + timedelta(days=1), n, f"{date_col}={d}")
                         for d, n in sorted(days.items()))
    minutes = Counter(datetime.fromtimestamp(f.mtime, UTC).replace(second=0, microsecond=0)
                      for f in files if f.mtime is not None)
    if minutes:
        return tuple(_Mark(m, None, n, f"written {m:%Y-%m-%d %H:%M} UTC") for m, n in sorted(minutes.items()))
    lo, hi = _moment(first), _moment(last)
    if lo is None:
        return ()
    return (_Mark(lo, hi if hi and hi > lo else None, 0, f"first seen {first}, last seen {last}"),)


def _lanes(table: TableAudit) -> list[_Lane]:
    report = table.scan
    date_col = date_partition_column(report.result.footers)
    lanes = []
    previous = None
    for i, v in enumerate(report.history.versions):
        detail = f"{len(v.files)} file(s) · {v.rows:,} rows"
        lanes.append(_Lane(f"v{v.number}", detail, LANE_COLOURS[i % len(LANE_COLOURS)],
                           _marks(v.files, date_col, v.first_seen, v.last_seen), f"lane lane-v{v.number}",
                           _change_note(previous, v)))
        previous = v
    bad = {u.rel for u in report.result.unreadable}
    if bad:
        files = [f for f in report.listing.files if f.rel in bad]
        lanes.append(_Lane("unreadable", f"{len(bad)} file(s)", UNREADABLE_COLOUR, _marks(files, date_col),
                           "lane lane-unreadable"))
    return lanes


def _change_note(previous: SchemaVersion | None, version: SchemaVersion) -> str:
    """`+added -dropped ~changed` columns against the version before, shortened to fit a lane."""
    if previous is None:
        return f"{len(version.footer.columns)} columns"
    marks = []
    for c in column_changes(previous.footer, version.footer):
        sign = "+" if c.before is None else "-" if c.after is None else "~"
        marks.append(f"{sign}{c.path}")
    note = "  ".join(marks) or "same columns"
    return note if len(note) <= 60 else note[:59] + "…"


def _ticks(lo: datetime, hi: datetime) -> list[tuple[datetime, str]]:
    """Round moments between lo and hi, at most about ten, labelled for their spacing (the year on the
    first and wherever it changes)."""
    span = (hi - lo).total_seconds()
    hour, day = 3600, 86400
    for step in (60, 300, 900, hour, 3 * hour, 6 * hour, 12 * hour, day, 2 * day, 7 * day, 14 * day):
        if span / step <= 10:
            if step >= 7 * day:  # weeks start on Mondays
                start = _midnight(lo.date() - timedelta(days=lo.weekday()))
            else:
                start = _midnight(lo.date())
            moment = start + timedelta(seconds=step * -(-(lo - start).total_seconds() // step))
            out, year = [], None
            while moment <= hi:
                label = f"{moment:%b} {moment.day}" + ("" if moment.year == year else f" {moment.year}")
                out.append((moment, label + ("" if step >= day else f" {moment:%H:%M}")))
                year = moment.year
                moment += timedelta(seconds=step)
            return out
    months = 1
    while span / (months * 30.4 * day) > 8:
        months = {1: 2, 2: 3, 3: 6, 6: 12}.get(months, months + 12)
    year, month = lo.year, lo.month
    out = []
    while True:
        moment = datetime(year, month, 1, tzinfo=UTC)
        if moment > hi:
            break
        step_ok = month == 1 and year % (months // 12) == 0 if months >= 12 else (month - 1) % months == 0
        if moment >= lo and step_ok:
            out.append((moment, moment.strftime("%b %Y" if months < 12 else "%Y")))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _timeline_svg(table: TableAudit) -> str:
    lanes = _lanes(table)
    width, gutter, right, top, lane_h, gap, axis_h = 1200, 200, 24, 14, 26, 12, 34
    height = top + len(lanes) * (lane_h + gap) + axis_h
    moments = [m.start for lane in lanes for m in lane.marks]
    moments += [m.end for lane in lanes for m in lane.marks if m.end is not None]
    if not lanes:
        return '<p class="empty">No readable data file: no schema version to place in time.</p>'
    parts = [f'<svg class="timeline-svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-label="schema versions of {_e(table.name)} over time" xmlns="http://www.w3.org/2000/svg">']
    if not moments:
        parts.append(f'<text x="{gutter}" y="{top + 16}" class="nodata">no dates: neither a date '
                     'partition nor file modification times</text>')
        lo = hi = datetime(1970, 1, 1, tzinfo=UTC)
    else:
        lo, hi = min(moments), max(moments)
        if hi - lo < timedelta(hours=1):
            lo, hi = lo - timedelta(minutes=30), hi + timedelta(minutes=30)
        pad = (hi - lo) * 0.01
        lo, hi = lo - pad, hi + pad
    scale = (width - gutter - right) / max((hi - lo).total_seconds(), 1.0)

    def x(moment: datetime) -> float:
        return gutter + (moment - lo).total_seconds() * scale

    plot_bottom = top + len(lanes) * (lane_h + gap) - gap / 2
    if moments:
        parts.append('<g class="axis">')
        for moment, label in _ticks(lo, hi):
            px = x(moment)
            parts.append(f'<line x1="{px:.1f}" y1="{top - 6}" x2="{px:.1f}" y2="{plot_bottom:.1f}" '
                         'class="gridline"/>')
            if px + 3.5 * len(label) <= width:  # a label that would run off the right edge is left out
                parts.append(f'<text x="{px:.1f}" y="{plot_bottom + 18:.1f}" class="tick">{_e(label)}</text>')
        parts.append('</g>')
    for i, lane in enumerate(lanes):
        y = top + i * (lane_h + gap)
        parts.append(f'<g class="{lane.cls}" data-colour="{lane.colour}">')
        parts.append(f'<rect x="4" y="{y}" width="{gutter - 16}" height="{lane_h}" rx="5" '
                     f'fill="{lane.colour}" class="lane-key"/>')
        parts.append(f'<text x="14" y="{y + lane_h / 2 + 5:.1f}" class="lane-label">{_e(lane.label)}</text>')
        parts.append(f'<text x="{gutter - 20}" y="{y + lane_h / 2 + 4:.1f}" class="lane-detail">'
                     f'{_e(lane.detail)}</text>')
        if not lane.marks:
            parts.append(f'<text x="{gutter + 8}" y="{y + lane_h / 2 + 4:.1f}" class="nodata">'
                         'no time known</text></g>')
            continue
        first = min(m.start for m in lane.marks)
        last = max(m.end or m.start for m in lane.marks)
        parts.append(f'<rect x="{x(first) - 3:.1f}" y="{y - 3}" width="{x(last) - x(first) + 6:.1f}" '
                     f'height="{lane_h + 6}" rx="6" fill="{lane.colour}" fill-opacity="0.14" '
                     'class="extent"/>')
        for x0, w, tip in _blocks(lane.marks, x):
            parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="{lane_h}" fill="{lane.colour}" '
                         f'class="mark"><title>{_e(lane.label)}: {_e(tip)}</title></rect>')
        if lane.note:
            parts.append(_note_svg(lane.note, x(first) - 3, x(last) + 3, y + lane_h / 2 + 4, gutter,
                                   width - right))
        parts.append('</g>')
    parts.append('</svg>')
    return "".join(parts)


def _blocks(marks: Sequence[_Mark], x: Callable[[datetime], float]) -> list[tuple[float, float, str]]:
    """Marks as drawn rectangles (x, width, tooltip): a partition a block with a pixel of air after
    it; an instant a 4 px tick; marks that would be drawn on top of each other (ticks within a pixel,
    touching partitions narrower than 3 px) merged into one, so a page stays small on long histories."""
    runs: list[list[Any]] = []  # [x0, x1, files, first label, last label, instant]
    for m in marks:
        x0 = x(m.start)
        x1 = x(m.end) if m.end is not None else x0
        if runs:
            last = runs[-1]
            touching = x0 - last[1] < 0.5 if m.end is not None else x0 - last[1] < 1
            if touching and (x1 - x0 < 3 or m.end is None) and last[5] == (m.end is None):
                last[1], last[2], last[4] = max(x1, last[1]), last[2] + m.files, m.label
                continue
        runs.append([x0, x1, m.files, m.label, m.label, m.end is None])
    out = []
    for x0, x1, files, first, last, instant in runs:
        label = first if first == last else f"{first} .. {last}"
        tip = f"{label}: {files} file(s)" if files else label
        if instant:
            out.append((x0 - 2, max(x1 - x0, 0.0) + 4, tip))
        else:
            w = x1 - x0
            out.append((x0, w - 1 if w > 4 else max(w, 2.0), tip))
    return out


def _note_svg(note: str, left: float, right: float, y: float, lo: float, hi: float) -> str:
    """The lane's note on whichever side of its blocks has room for it (about 7 px a character)."""
    need = 7.0 * len(note) + 10
    if hi - right >= need or hi - right >= left - lo:
        return f'<text x="{right + 8:.1f}" y="{y:.1f}" class="note">{_e(note)}</text>'
    return f'<text x="{left - 8:.1f}" y="{y:.1f}" class="note" text-anchor="end">{_e(note)}</text>'


def _split_signature(signature: str) -> tuple[str, str]:
    """leaf_signature's `kind [layout]` as (kind, layout)."""
    i = signature.rfind(" [")
    if i < 0 or not signature.endswith("]"):
        return signature, ""
    return signature[:i], signature[i + 2:-1]


def _grid_html(table: TableAudit, slug: str) -> str:
    versions = table.scan.history.versions
    signatures = [leaf_signature(v.footer) for v in versions]
    current: dict[str, str] | None = None
    if not versions or table.current_schema != versions[-1].footer.schema:
        current = {p: describe(t) + ("" if nullable else " not null")
                   for p, (t, nullable) in leaves(table.current_schema).items()}
    paths: dict[str, None] = {}
    for sig in [*signatures, *([current] if current else [])]:
        for p in sig:
            paths.setdefault(p)
    if not paths:
        return '<p class="empty">No columns to show.</p>'
    head = ['<th scope="col" class="colname">column</th>']
    for i, v in enumerate(versions):
        head.append(_version_head(v, LANE_COLOURS[i % len(LANE_COLOURS)]))
    if current is not None:
        head.append(f'<th scope="col" class="current"><span class="vlabel">current</span>'
                    f'<span class="vmeta">{_e(table.current_source)}</span></th>')
    rows = []
    for path in paths:
        cells, drifted = [], False
        previous: str | None = None
        for i, sig in enumerate(signatures):
            text = sig.get(path)
            cell, changed = _grid_cell(text, previous, i > 0, f"v{versions[i - 1].number}" if i else "")
            drifted |= changed
            cells.append(cell)
            previous = text
        if current is not None:
            now = current.get(path)
            newest = _split_signature(previous)[0] if previous is not None else None
            cell, changed = _grid_cell(now, newest, bool(versions), "the newest version")
            drifted |= changed
            cells.append(cell)
        cls = ' class="has-drift"' if drifted else ""
        rows.append(f'<tr{cls}><th scope="row" class="colname"><code>{_e(path)}</code></th>'
                    f'{"".join(cells)}</tr>')
    return (f'<div class="grid-wrap"><table class="grid" id="grid-{_e(slug)}"><thead><tr>{"".join(head)}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table></div>')


def _version_head(v: SchemaVersion, colour: str) -> str:
    seen = v.first_seen or "?"
    if v.last_seen and v.last_seen != v.first_seen:
        seen = f"{v.first_seen or '?'} → {v.last_seen}"
    return (f'<th scope="col"><span class="swatch" style="background:{colour}"></span>'
            f'<span class="vlabel">v{v.number}</span><span class="vmeta">{_e(seen)}</span>'
            f'<span class="vmeta">{len(v.files)} file(s)</span></th>')


def _grid_cell(text: str | None, previous: str | None, has_previous: bool,
               previous_name: str) -> tuple[str, bool]:
    """One cell, and whether it drifted from the previous column's cell."""
    if text is None:
        label = "dropped" if has_previous and previous is not None else "—"
        return f'<td class="absent" title="not in this version">{label}</td>', False
    kind, layout = _split_signature(text)
    layout_html = f'<span class="layout">{_e(layout)}</span>' if layout else ""
    if has_previous and previous is None:
        return (f'<td class="added" title="first appears here"><span class="kind">{_e(kind)}</span>'
                f'{layout_html}<span class="was">new</span></td>'), False
    if has_previous and previous is not None and previous != text:
        before, before_layout = _split_signature(previous)
        was = f"was {before}" if before != kind else f"was [{before_layout}]"
        return (f'<td class="drift" title="{_e(previous_name)}: {_e(previous)}">'
                f'<span class="kind">{_e(kind)}</span>{layout_html}'
                f'<span class="was">{_e(was)}</span></td>'), True
    return f'<td class="same"><span class="kind">{_e(kind)}</span>{layout_html}</td>', False


def _finding_html(run: AuditRun, f: Finding, today: date) -> str:
    fails = run.fails(f)
    classes = ["finding", f"sev-{f.severity}"]
    badges = []
    if fails:
        classes.append("fails")
        badges.append('<span class="badge badge-fail">fails the run</span>')
    if f.waiver is not None:
        if f.waived(today):
            classes.append("waived")
            badges.append(f'<span class="badge badge-waived">WAIVED · {_e(f.waiver.owner)} · until '
                          f'{_e(f.waiver.expires.isoformat())}</span>')
        else:
            badges.append('<span class="badge badge-expired">waiver expired '
                          f'{_e(f.waiver.expires.isoformat())} · {_e(f.waiver.owner)}</span>')
    column = f'<code class="column">{_e(f.path)}</code>' if f.path else ""
    facts = []
    if f.count or f.files:
        facts.append(f"{f.count:,} file(s)")
    if f.versions:
        facts.append(" ".join(f'<span class="vchip">v{n}</span>' for n in f.versions))
    if f.partition_count:
        facts.append(f"{f.partition_count:,} partition(s)")
    if f.files:
        facts.append(f"e.g. <code>{_e(f.files[0])}</code>")
    details = []
    if f.files:
        more = f" of {f.count:,}" if f.count > len(f.files) else ""
        items = "".join(f"<li><code>{_e(p)}</code></li>" for p in f.files)
        details.append(f'<h5>files ({len(f.files)}{more})</h5><ul class="files">{items}</ul>')
    if f.partitions:
        more = f" of {f.partition_count:,}" if f.partition_count > len(f.partitions) else ""
        items = "".join(f"<li><code>{_e(p)}</code></li>" for p in f.partitions)
        details.append(f'<h5>partitions ({len(f.partitions)}{more})</h5><ul class="files">{items}</ul>')
    if f.evidence:
        items = "".join(f"<tr><th>{_e(label)}</th><td>{_e(value)}</td></tr>" for label, value in f.evidence)
        details.append(f'<h5>evidence</h5><table class="evidence">{items}</table>')
    if f.waiver is not None:
        details.append(f'<h5>waiver</h5><p>{_e(f.waiver.owner)}, until {_e(f.waiver.expires.isoformat())}: '
                       f'{_e(f.waiver.reason)}</p>')
    meta = [f"key <code>{_e(f.key)}</code>"]
    if f.rule:
        meta.append(f"rule {_e(f.rule)}")
    details.append(f'<p class="meta">{" · ".join(meta)}</p>')
    return (f'<article class="{" ".join(classes)}"><header><span class="sev">{_e(f.severity.upper())}</span>'
            f'<span class="code">{_e(f.code)}</span>{column}<span class="where">{_e(f.table)}</span>'
            f'{"".join(badges)}</header><p class="msg">{_inline(f.message)}</p>'
            f'<p class="facts">{" · ".join(facts)}</p>'
            f'<details><summary>files, evidence and rule</summary>{"".join(details)}</details></article>')


def _findings_html(run: AuditRun, findings: Sequence[Finding], today: date) -> str:
    if not findings:
        return '<p class="empty">No findings.</p>'
    out = []
    for severity in reversed(SEVERITIES):
        group = [f for f in by_severity(list(findings)) if f.severity == severity]
        if group:
            out.append(f'<h4 class="sevhead sev-{severity}">{_e(severity)} <span>{len(group)}</span></h4>')
            out.extend(_finding_html(run, f, today) for f in group)
    return "".join(out)


def _table_html(run: AuditRun, table: TableAudit, slug: str, today: date) -> str:
    scan_doc = scan_output.to_json(table.scan, 0)
    failing = _table_failing(run, table)
    facts = "".join(f'<div><dt>{_e(label)}</dt><dd>{_e(value)}</dd></div>'
                    for label, value in _table_facts(table, scan_doc))
    facts += f'<div><dt>findings</dt><dd>{_e(_severity_line(table.findings, today))}</dd></div>'
    state = "fail" if failing else "pass"
    caption = "Each lane is one schema version, oldest at the top; "
    if scan_doc["ordered_by"].startswith("partition "):
        column = scan_doc["ordered_by"].removeprefix("partition ")
        caption += f"each block is one <code>{_e(column)}</code> partition holding its files"
    else:
        caption += "each tick is a minute in which files were written (modification time)"
    return f"""<section class="table" id="table-{_e(slug)}">
<h2><span class="verdict {state}">{'FAIL' if failing else 'PASS'}</span> {_e(table.name)}
<small>{len(failing)} failing finding(s)</small></h2>
<dl class="facts">{facts}</dl>
<h3>Schema history</h3>
<figure class="timeline" id="timeline-{_e(slug)}">{_timeline_svg(table)}
<figcaption>{caption}. Hover a block for its files.</figcaption></figure>
<h3>Columns by version</h3>
<div class="legend"><span class="key drift">drift: type or Parquet layout differs from the version
before</span> <span class="key added">first appears</span>
<span class="key absent">not in this version</span></div>
{_grid_html(table, slug)}
<h3>Findings</h3>
{_findings_html(run, table.findings, today)}
</section>"""


_CSS = """
:root { --ink:#1d232b; --muted:#5d6b7a; --line:#e1e5ea; --bg:#f4f6f8; --card:#fff;
  --error:#c0392b; --warning:#b7791f; --info:#2f6fb0; --pass:#1e8e3e; --drift:#fff1c2; --drift-edge:#e0a100;
  --added:#e3f4e8; --added-edge:#3c9d5d; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font:15px/1.5 -apple-system, "Segoe UI", "Helvetica Neue", Roboto, "DejaVu Sans", Arial, sans-serif; }
code, .kind, .layout { font-family: "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; }
code { font-size:.88em; background:#eef1f4; padding:0 .3em; border-radius:3px; word-break:break-all; }
main, header.run { max-width:1320px; margin:0 auto; padding:0 24px; }
header.run { padding-top:22px; padding-bottom:6px; }
.brand { font-size:13px; letter-spacing:.08em; text-transform:uppercase; color:var(--muted); }
h1 { font-size:26px; margin:4px 0 6px; display:flex; gap:14px; align-items:center; }
h2 { font-size:21px; margin:0 0 12px; display:flex; gap:12px; align-items:center; }
h2 small { font-size:14px; font-weight:normal; color:var(--muted); }
h3 { font-size:16px; margin:22px 0 8px; color:#33414f; }
.verdict { font-size:15px; font-weight:700; letter-spacing:.06em; color:#fff; padding:3px 12px;
  border-radius:4px; }
.verdict.fail { background:var(--error); } .verdict.pass { background:var(--pass); }
.meta { color:var(--muted); font-size:13px; margin:0; }
ul.counts { list-style:none; padding:0; margin:10px 0 0; display:flex; gap:8px; flex-wrap:wrap; }
ul.counts li { background:var(--card); border:1px solid var(--line); border-radius:14px; padding:2px 12px;
  font-size:13px; }
ul.counts b { font-size:15px; margin-right:4px; }
ul.counts .c-error b { color:var(--error); } ul.counts .c-warning b { color:var(--warning); }
ul.counts .c-info b { color:var(--info); }
section.table, section.run-findings { background:var(--card); border:1px solid var(--line);
  border-radius:10px; padding:20px 24px; margin:16px 0; box-shadow:0 1px 2px rgba(20,30,40,.05); }
dl.facts { display:grid; grid-template-columns:repeat(auto-fill, minmax(260px, 1fr)); gap:6px 24px;
  margin:0; }
dl.facts div { min-width:0; } dt { font-size:12px; color:var(--muted); text-transform:uppercase;
  letter-spacing:.05em; } dd { margin:0; overflow-wrap:anywhere; }
figure.timeline { margin:0; border:1px solid var(--line); border-radius:8px; padding:10px 8px 4px; }
figcaption { font-size:12.5px; color:var(--muted); padding:2px 8px; }
.timeline-svg { display:block; font-family:inherit; }
.timeline-svg .tick { font-size:12px; fill:var(--muted); text-anchor:middle; }
.timeline-svg .gridline { stroke:#e6e9ed; stroke-width:1; }
.timeline-svg .lane-label { font-size:14px; font-weight:700; fill:#fff; }
.timeline-svg .lane-detail { font-size:11.5px; fill:#fff; text-anchor:end; }
.timeline-svg .note { font-size:12px; fill:#3d4a57; font-family:"SFMono-Regular", Menlo, Consolas,
  "DejaVu Sans Mono", monospace; }
.timeline-svg .nodata { font-size:12px; fill:var(--muted); font-style:italic; }
.timeline-svg .mark { shape-rendering:crispEdges; }
.legend { display:flex; gap:10px; flex-wrap:wrap; margin:0 0 8px; font-size:12.5px; color:var(--muted); }
.legend .key { padding:1px 8px; border-radius:3px; border:1px solid var(--line); }
.legend .drift { background:var(--drift); border-left:4px solid var(--drift-edge); }
.legend .added { background:var(--added); border-left:4px solid var(--added-edge); }
.legend .absent { background:repeating-linear-gradient(135deg,#f3f4f6 0 6px,#e9ebee 6px 12px); }
.grid-wrap { overflow-x:auto; }
table.grid { border-collapse:separate; border-spacing:0; width:100%; font-size:13px; }
table.grid th, table.grid td { border-bottom:1px solid var(--line); padding:6px 10px; text-align:left;
  vertical-align:top; }
table.grid thead th { background:#f8f9fb; border-bottom:2px solid var(--line); font-weight:600;
  white-space:nowrap; }
table.grid th.colname { white-space:nowrap; }
table.grid tr.has-drift th.colname code { background:var(--drift);
  box-shadow:inset 0 -2px var(--drift-edge); }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; }
.vlabel { font-size:14px; }
.vmeta { display:block; font-size:11.5px; font-weight:normal; color:var(--muted); }
td .kind { display:block; font-size:13px; } td .layout { display:block; font-size:11px; color:var(--muted); }
td .was { display:inline-block; margin-top:2px; font-size:11px; font-weight:600; color:#8a5a00; }
td.drift { background:var(--drift); box-shadow:inset 4px 0 var(--drift-edge); }
td.added { background:var(--added); box-shadow:inset 4px 0 var(--added-edge); }
td.added .was { color:#23703f; }
td.absent { background:repeating-linear-gradient(135deg,#f5f6f8 0 6px,#eceef1 6px 12px); color:#9aa5b1;
  font-style:italic; }
h4.sevhead { margin:16px 0 6px; font-size:13px; text-transform:uppercase; letter-spacing:.07em; }
h4.sevhead span { color:var(--muted); font-weight:normal; margin-left:4px; }
h4.sev-error { color:var(--error); } h4.sev-warning { color:var(--warning); }
h4.sev-info { color:var(--info); }
article.finding { border:1px solid var(--line); border-left:5px solid var(--muted); border-radius:6px;
  padding:8px 14px; margin:6px 0; }
article.sev-error { border-left-color:var(--error); }
article.sev-warning { border-left-color:var(--warning); }
article.sev-info { border-left-color:var(--info); }
article.fails { background:#fdf3f2; }
article.waived { opacity:.72; background:repeating-linear-gradient(135deg,#fff 0 10px,#f7f8fa 10px 20px); }
article header { display:flex; gap:10px; align-items:baseline; flex-wrap:wrap; }
article .sev { font-size:11px; font-weight:700; letter-spacing:.06em; }
article.sev-error .sev { color:var(--error); } article.sev-warning .sev { color:var(--warning); }
article.sev-info .sev { color:var(--info); }
article .code { font-weight:700; font-family:"SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size:13px; }
article .where { color:var(--muted); font-size:12.5px; }
.badge { font-size:11.5px; font-weight:600; padding:1px 8px; border-radius:10px; }
.badge-fail { background:var(--error); color:#fff; } .badge-waived { background:#dff3e4; color:#1e6b34; }
.badge-expired { background:#fff1c2; color:#7a5200; }
p.msg { margin:4px 0 2px; } p.facts { margin:0; font-size:13px; color:var(--muted); }
.vchip { display:inline-block; background:#eef1f4; border-radius:3px; padding:0 5px; font-size:12px;
  color:var(--ink); }
details { margin:4px 0 2px; font-size:13px; } summary { cursor:pointer; color:var(--info); }
details h5 { margin:8px 0 2px; font-size:12px; color:var(--muted); text-transform:uppercase; }
ul.files { margin:0; padding-left:18px; max-height:220px; overflow:auto; }
table.evidence th { text-align:left; padding-right:12px; font-weight:600; }
p.empty { color:var(--muted); font-style:italic; }
footer { max-width:1320px; margin:0 auto 28px; padding:0 24px; color:var(--muted); font-size:12px; }
"""


def to_html(run: AuditRun) -> str:
    today = _today(run)
    counts = run.counts()
    state = "fail" if run.exit_code else "pass"
    chips = "".join(f'<li class="c-{_e(k)}"><b>{n}</b>{_e(k)}</li>' for k, n in counts.items())
    slugs: dict[str, int] = {}
    sections = []
    for table in run.tables:
        slug = _slug(table.name)
        slugs[slug] = slugs.get(slug, 0) + 1
        if slugs[slug] > 1:
            slug = f"{slug}-{slugs[slug]}"
        sections.append(_table_html(run, table, slug, today))
    if run.findings:
        sections.append('<section class="run-findings" id="run-findings"><h2>About the run itself</h2>'
                        f'{_findings_html(run, run.findings, today)}</section>')
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>schemaguard audit: {verdict(run)} · {_e(run.run_id)}</title>
<style>{_CSS}</style></head>
<body>
<header class="run" id="run"><div class="brand">schemaguard audit</div>
<h1><span class="verdict {state}" id="verdict">{verdict(run)}</span> {_e(_headline(run))}</h1>
<p class="meta">run <code>{_e(run.run_id)}</code> · started {_e(_stamp(run.started_at))}
 · took {_e(_duration(run))} · exit code {run.exit_code} · fail level <b>{_e(run.fail_level)}</b>
 · {len(run.tables)} table(s)</p>
<ul class="counts">{chips}</ul></header>
<main>
{"".join(sections)}
</main>
<footer>schemaguard · each lane and grid column is one schema version: the files that share one
footer schema.</footer>
</body></html>
"""


# ---------------------------------------------------------------------------------------------
# JUnit XML

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(value: object) -> str:
    """Text XML 1.0 can hold: control characters (from file names) shown as \\xNN."""
    return _XML_BAD.sub(lambda m: f"\\x{ord(m[0]):02x}", str(value))


def _finding_details(f: Finding, today: date) -> str:
    lines = [f.message, f"key: {f.key}", f"severity: {f.severity}"]
    if f.path:
        lines.append(f"column: {f.path}")
    if f.versions:
        lines.append(f"versions: {_versions_text(f.versions)}")
    if f.count or f.files:
        lines.append(f"files: {f.count}" + (" (sample below)" if f.files else ""))
        lines += [f"  {p}" for p in f.files]
    if f.partition_count:
        lines.append(f"partitions: {f.partition_count}")
        lines += [f"  {p}" for p in f.partitions]
    lines += [f"{label}: {value}" for label, value in f.evidence]
    if f.rule:
        lines.append(f"rule: {f.rule}")
    if f.waiver is not None:
        lines.append(f"{_waiver_text(f, today)}: {f.waiver.reason}")
    return "\n".join(lines)


def _suite(run: AuditRun, name: str, findings: Sequence[Finding], audit_case: bool) -> ET.Element:
    today = _today(run)
    suite = ET.Element("testsuite", name=_x(name), timestamp=run.started_at.isoformat())
    tests = failures = skipped = 0
    seen: Counter[str] = Counter()
    for f in findings:
        seen[f.key] += 1
        name_ = f.key if seen[f.key] == 1 else f"{f.key} #{seen[f.key]}"  # keys should be unique; be safe
        case = ET.SubElement(suite, "testcase", classname=_x(name), name=_x(name_), time="0")
        tests += 1
        if run.fails(f):
            failure = ET.SubElement(case, "failure", message=_x(f.message), type=_x(f.code))
            failure.text = _x(_finding_details(f, today))
            failures += 1
        elif f.waived(today) and f.waiver is not None:
            ET.SubElement(case, "skipped", message=_x(f"waived by {f.waiver.owner} until "
                                                      f"{f.waiver.expires.isoformat()}: {f.waiver.reason}"))
            skipped += 1
        else:
            ET.SubElement(case, "system-out").text = _x(f"{f.severity.upper()} {f.code}\n"
                                                       f"{_finding_details(f, today)}")
    if audit_case:
        case = ET.SubElement(suite, "testcase", classname=_x(name), name="audit", time="0")
        tests += 1
        failing = [f for f in findings if run.fails(f)]
        if failing:
            failure = ET.SubElement(case, "failure", type="AUDIT",
                                    message=f"{len(failing)} finding(s) at or above {run.fail_level}")
            failure.text = _x("\n".join(f"{f.severity} {f.key}" for f in failing))
            failures += 1
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", "0")
    return suite


def to_junit(run: AuditRun) -> str:
    root = ET.Element("testsuites", name="schemaguard audit")
    for table in run.tables:
        suite = _suite(run, table.name, table.findings, audit_case=True)
        properties = ET.Element("properties")
        for label, value in (("location", table.location), ("current_source", table.current_source),
                             ("profiles", ",".join(table.profiles)), ("mode", str(table.mode))):
            ET.SubElement(properties, "property", name=label, value=_x(value))
        suite.insert(0, properties)
        root.append(suite)
    if run.findings:
        root.append(_suite(run, RUN_SUITE, run.findings, audit_case=False))
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in root)))
    root.set("time", f"{max((run.finished_at - run.started_at).total_seconds(), 0.0):.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


# ---------------------------------------------------------------------------------------------
# SARIF


def _uri(path: str) -> str:
    """A table-relative file path as a relative URI reference (percent-encoded, `/` kept)."""
    return quote(path, safe="/=,;@+!$'()*&-._~")


def _location_uri(location: str) -> str:
    """The table location as an absolute URI ending in `/` (SARIF base URIs are folders)."""
    uri = location if "://" in location else Path(location).absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def to_sarif(run: AuditRun) -> dict[str, Any]:
    today = _today(run)
    findings = by_severity(list(run.all_findings))
    codes = sorted({f.code for f in findings})
    worst = {c: max((f.severity for f in findings if f.code == c), key=SEVERITIES.index) for c in codes}
    rules = [{"id": c, "name": "".join(w.capitalize() for w in c.split("_")),
              "shortDescription": {"text": RULES.get(c, c.replace("_", " ").lower())},
              "defaultConfiguration": {"level": _SARIF_LEVELS[worst[c]]}} for c in codes]
    locations = {t.name: t.location for t in run.tables}
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": codes.index(f.code),
            "level": _SARIF_LEVELS[f.severity],
            "message": {"text": f.message},
            "partialFingerprints": {"schemaguardKey/v1": f.key},
            "properties": {"table": f.table, "column": f.path, "severity": f.severity, "files": f.count,
                           "versions": list(f.versions), "fails": run.fails(f), "key": f.key},
        }
        physical: dict[str, Any] | None = None
        if f.files and f.table in locations:
            physical = {"artifactLocation": {"uri": _uri(f.files[0]), "uriBaseId": f.table}}
        elif f.table in locations:
            physical = {"artifactLocation": {"uri": _location_uri(locations[f.table])}}
        if physical is not None:
            location: dict[str, Any] = {"physicalLocation": physical}
            if f.path:
                location["logicalLocations"] = [{"name": f.path, "fullyQualifiedName": f"{f.table}.{f.path}",
                                                 "kind": "member"}]
            result["locations"] = [location]
        if f.waiver is not None and f.waived(today):
            result["suppressions"] = [{
                "kind": "external", "status": "accepted", "justification": f.waiver.reason,
                "properties": {"owner": f.waiver.owner, "expires": f.waiver.expires.isoformat()}}]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            # No informationUri: the project has no public page yet, and SARIF makes it optional.
            "tool": {"driver": {"name": "schemaguard", "version": version(), "rules": rules}},
            "automationDetails": {"id": f"schemaguard/audit/{run.run_id}"},
            "originalUriBaseIds": {t.name: {"uri": _location_uri(t.location)} for t in run.tables},
            "invocations": [{"executionSuccessful": True, "exitCode": run.exit_code,
                             "startTimeUtc": _sarif_time(run.started_at),
                             "endTimeUtc": _sarif_time(run.finished_at)}],
            "results": results,
        }],
    }


def _sarif_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# ---------------------------------------------------------------------------------------------
# the report folder

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # it names the report's folder


def render_file(run: AuditRun, fmt: str) -> str:
    """One file format as the text written to disk."""
    if fmt == "json":
        return json.dumps(to_json(run), indent=2, ensure_ascii=False, default=str) + "\n"
    if fmt == "markdown":
        return to_markdown(run)
    if fmt == "html":
        return to_html(run)
    if fmt == "junit":
        return to_junit(run)
    if fmt == "sarif":
        return json.dumps(to_sarif(run), indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(['terminal', *FILE_NAMES])})")


def write_reports(run: AuditRun, directory: Path, formats: Sequence[str]) -> dict[str, Path]:
    """Every file format in `formats` into `directory/<run_id>/`, all or nothing: the files are written
    into a temporary sibling folder that is renamed into place at the end, so a crash leaves no
    half-written report, and a rerun with the same run id replaces the folder whole. `terminal` is
    printed, not written, and is skipped here."""
    if not RUN_ID.fullmatch(run.run_id):
        raise ValueError(f"run id {run.run_id!r} cannot name a folder (letters, digits, . _ -)")
    wanted = [f for f in dict.fromkeys(formats) if f != "terminal"]
    texts = {f: render_file(run, f) for f in wanted}  # every renderer runs before anything touches the disk
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / run.run_id
    staging = Path(tempfile.mkdtemp(prefix=f".{run.run_id}.", suffix=".tmp", dir=directory))
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # mkdtemp makes it private; a report is for CI artifacts and people
    try:
        for fmt, text in texts.items():
            with open(staging / FILE_NAMES[fmt], "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
        _swap_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {fmt: target / FILE_NAMES[fmt] for fmt in texts}


def _swap_into_place(staging: Path, target: Path) -> None:
    """Rename `staging` to `target`; an existing `target` (a rerun) is moved aside first, then removed."""
    for _ in range(5):  # a concurrent writer may put its folder in place between our two renames
        try:
            os.rename(staging, target)
            return
        except OSError:
            if not target.exists():
                raise
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        try:
            os.rename(target, old / "report")
        except FileNotFoundError:
            pass  # another writer moved it first
        finally:
            shutil.rmtree(old, ignore_errors=True)
    raise OSError(f"could not put the report folder {target} in place: other writers keep replacing it")
