"""What several report formats say the same way: the verdict, the headline, times, the severity
line, a waiver, the facts of a table, findings grouped by severity. Plain text; each format
escapes it its own way."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime

from schemaguard.base import SEVERITIES, Severity
from schemaguard.checks.finding import Finding, by_severity
from schemaguard.proofs.audit_run import AuditRun, TableAudit


def verdict(run: AuditRun) -> str:
    return "FAIL" if run.exit_code else "PASS"


def today(run: AuditRun) -> date:
    """The day waivers are judged on: the run's start."""
    return run.started_at.date()


def headline(run: AuditRun) -> str:
    failing = len(run.failing)
    if run.fail_level == "never":
        return "no finding fails this run (fail level: never)"
    if failing:
        return f"{failing} finding(s) at or above {run.fail_level} fail the run"
    return f"no unwaived finding at or above {run.fail_level}"


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def elapsed(run: AuditRun) -> float:
    """Seconds the run took (never negative)."""
    return max((run.finished_at - run.started_at).total_seconds(), 0.0)


def duration(run: AuditRun) -> str:
    seconds = elapsed(run)
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


PHASE_NAMES = {"spark_start": "Spark start", "reading": "reading", "checks": "checks", "proofs": "proofs",
               "catalog": "catalog write"}


def took(run: AuditRun) -> str:
    """The run's whole time and where it went: `41.2 s (Spark start 14.1 s, reading 0.8 s, ...)`;
    a phase that took no time (no Spark; the catalog, not yet written when a report file is) is
    left out."""
    spent = ((PHASE_NAMES[name], seconds) for name, seconds in vars(run.phases).items())
    split = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in spent if seconds >= 0.05)
    return f"{duration(run)} ({split})" if split else duration(run)


def severity_line(findings: Sequence[Finding], day: date) -> str:
    """`2 error, 1 warning; 1 waived`, or `none`."""
    found = Counter(f.severity for f in findings)
    parts = [f"{found[s]} {s}" for s in reversed(SEVERITIES) if found[s]]
    waived = sum(f.waived(day) for f in findings)
    return (", ".join(parts) or "none") + (f"; {waived} waived" if waived else "")


def severity_groups(findings: Iterable[Finding]) -> Iterator[tuple[Severity, list[Finding]]]:
    """The findings of each severity that has any, most severe first, each group in report order."""
    ordered = by_severity(findings)
    for severity in reversed(SEVERITIES):
        group = [f for f in ordered if f.severity == severity]
        if group:
            yield severity, group


def versions_text(versions: Sequence[int]) -> str:
    return ", ".join(f"v{n}" for n in versions)


def waiver_text(f: Finding, day: date) -> str:
    """`WAIVED (owner, until date)`, `waiver expired ...`, or empty."""
    if f.waiver is None:
        return ""
    if f.waiver.active(day):
        return f"WAIVED ({f.waiver.owner}, until {f.waiver.expires.isoformat()})"
    return f"waiver expired {f.waiver.expires.isoformat()} ({f.waiver.owner})"


def table_facts(table: TableAudit) -> list[tuple[str, str]]:
    """The summary of one table, as (label, text) rows every format shows."""
    counts = table.summary.counts
    return [
        ("location", table.location),
        ("files", f"{counts.read} read, {counts.unreadable} unreadable, {counts.ignored} ignored"),
        ("rows", f"{counts.rows:,}"),
        ("schema versions", f"{counts.versions} (oldest first by {ordered_by(table)})"),
        ("current schema", table.current_source),
        ("readers", f"{', '.join(table.profiles)}; mode {table.mode}"),
        *([("proofs", _proofs_line(table))] if table.proofs else []),
    ]


def _proofs_line(table: TableAudit) -> str:
    verdicts = Counter(p.verdict for p in table.proofs)
    read = sum(p.rows_read for p in table.proofs)
    return (", ".join(f"{verdicts[v]} {v}" for v in ("proven", "refuted", "unknown") if verdicts[v])
            + (f"; {read:,} rows read" if read else "; from statistics, no data read"))


def ordered_by(table: TableAudit) -> str:
    """How the table's versions are ordered: `partition <column>` or `file modification time`."""
    return table.summary.table.history.ordered_by
