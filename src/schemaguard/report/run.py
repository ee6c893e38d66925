"""One audit run: per table what was scanned and found, and the verdict of the run as a whole.

Everything the renderers and the catalog writer need is here, computed once by the audit; they
only format it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from schemaguard.model import Schema
from schemaguard.report.findings import SEVERITIES, Finding
from schemaguard.report.scan_output import ScanReport
from schemaguard.rules.modes import Mode

FailLevel = Literal["info", "warning", "error", "never"]


@dataclass(frozen=True)
class TableAudit:
    name: str  # as configured: a short name or the catalog's `db.table`
    location: str  # the directory whose footers were read
    scan: ScanReport  # listing, footers, versions
    current_source: str  # where the current schema came from: "catalog", "newest version", a file
    current_schema: Schema
    profiles: tuple[str, ...]
    mode: Mode
    findings: tuple[Finding, ...]  # table set, waivers applied; most severe first


@dataclass(frozen=True)
class AuditRun:
    run_id: str
    started_at: datetime  # UTC
    finished_at: datetime  # UTC
    fail_level: FailLevel
    tables: tuple[TableAudit, ...]
    findings: tuple[Finding, ...] = ()  # about the run itself (waivers that expired or match nothing)

    @property
    def all_findings(self) -> tuple[Finding, ...]:
        return (*self.findings, *(f for t in self.tables for f in t.findings))

    def fails(self, finding: Finding) -> bool:
        """At or above the fail level, and not acknowledged by a waiver in force on the run's day."""
        if self.fail_level == "never" or finding.waived(self.started_at.date()):
            return False
        return SEVERITIES.index(finding.severity) >= SEVERITIES.index(self.fail_level)

    @property
    def failing(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.all_findings if self.fails(f))

    @property
    def exit_code(self) -> int:
        return 1 if self.failing else 0

    def counts(self) -> dict[str, int]:
        """Findings by severity, plus how many are waived and how many fail the run."""
        found = self.all_findings
        today = self.started_at.date()
        counts: dict[str, int] = {s: sum(f.severity == s for f in found) for s in reversed(SEVERITIES)}
        counts["waived"] = sum(f.waived(today) for f in found)
        counts["failing"] = len(self.failing)
        return counts


def by_severity(findings: tuple[Finding, ...] | list[Finding]) -> list[Finding]:
    """Most severe first; within a severity, by code and key, so reports are stable across runs."""
    return sorted(findings, key=lambda f: (-SEVERITIES.index(f.severity), f.code, f.key))

