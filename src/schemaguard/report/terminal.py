"""The audit in a terminal: each table's facts and verdict, every finding most severe first, and the
run's verdict last. Lake text is passed as `Text`, never read as rich markup."""

from __future__ import annotations

from datetime import date

from rich.console import Console
from rich.table import Table
from rich.text import Text

from schemaguard.checks.finding import Finding, by_severity
from schemaguard.proofs.audit_run import AuditRun
from schemaguard.report.common import (
    duration,
    headline,
    severity_line,
    stamp,
    table_facts,
    today,
    took,
    verdict,
    versions_text,
    waiver_text,
)
from schemaguard.report.console import console as terminal

_RICH_STYLES = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}


def render_terminal(run: AuditRun, console: Console | None = None) -> None:
    out = console or terminal()
    day = today(run)
    out.print(Text.assemble(("schemaguard audit", "bold"), f"  run {run.run_id}",
                            f"  started {stamp(run.started_at)}  took {duration(run)}",
                            f"  fail level {run.fail_level}"))
    for table in run.tables:
        failing = run.table_failing(table)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(overflow="fold")
        for label, value in table_facts(table):
            grid.add_row(label, Text(value))
        grid.add_row("findings", Text(severity_line(table.findings, day)))
        grid.add_row("verdict", Text(f"FAIL ({len(failing)} failing)", "bold red") if failing
                     else Text("PASS", "bold green"))
        out.print()
        out.print(Text(table.name, "bold underline"))
        out.print(grid)
    findings = by_severity(run.all_findings)
    if findings:
        out.print()
        out.print(Text("Findings, most severe first", "bold underline"))
        rows = Table.grid(padding=(0, 1))
        rows.add_column(no_wrap=True)
        rows.add_column(overflow="fold")
        for f in findings:
            rows.add_row(Text(f.severity.upper(), _RICH_STYLES[f.severity]), _finding_text(run, f, day))
        out.print(rows)
    out.print()
    style = "bold red" if run.exit_code else "bold green"
    out.print(Text.assemble((verdict(run), style), f"  exit code {run.exit_code}: {headline(run)}"
                            f" ({run.counts()['waived']} waived)"))
    out.print(Text(f"took {took(run)}", "dim"))


def _finding_text(run: AuditRun, f: Finding, day: date) -> Text:
    text = Text.assemble((f.code, "bold"), "  ", (f.table or "-", "magenta"))
    if f.path:
        text.append("  ")
        text.append(f.path, "cyan")
    if run.fails(f):
        text.append("  FAILS", "bold red")
    waiver = waiver_text(f, day)
    if waiver:
        text.append(f"  {waiver}", "bold green" if f.waived(day) else "yellow")
    text.append(f"\n{f.message}")
    facts = []
    if f.count or f.files:
        facts.append(f"{f.count} file(s)")
    if f.versions:
        facts.append(f"in {versions_text(f.versions)}")
    if f.files:
        facts.append(f"e.g. {f.files[0]}")
    if facts:
        text.append("\n" + " ".join(facts), "dim")
    return text
