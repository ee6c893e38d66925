"""One audit run: per table what was read, found and proved, and the verdict of the run as a whole.

Everything the renderers and the catalog writer need is here, computed once by the audit; they
only format it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from schemaguard.base import SEVERITIES
from schemaguard.checks.finding import FailLevel, Finding, fails
from schemaguard.checks.summary import TableSummary
from schemaguard.model import Schema
from schemaguard.proofs import ProofResult
from schemaguard.rules.modes import Mode


@dataclass(frozen=True)
class TableAudit:
    name: str  # as configured: a short name or the catalog's `db.table`
    location: str  # the directory whose footers were read
    summary: TableSummary  # listing, footers, versions and what each report shows of them
    current_source: str  # where the current schema came from: "catalog", "newest version", a file
    current_schema: Schema
    profiles: tuple[str, ...]
    mode: Mode
    findings: tuple[Finding, ...]  # table set, waivers applied; most severe first
    proofs: tuple[ProofResult, ...] = ()  # the configured proofs' results, in configuration order


@dataclass(frozen=True)
class Phases:
    """Seconds a run spent in each of its parts, in the order they happen (what is left of the
    whole is start-up and writing the report files)."""

    spark_start: float = 0.0
    reading: float = 0.0  # listing and footers, every table
    checks: float = 0.0
    proofs: float = 0.0
    catalog: float = 0.0  # the catalog write: known only to what is shown after it


@dataclass(frozen=True)
class AuditRun:
    run_id: str
    started_at: datetime  # UTC
    finished_at: datetime  # UTC
    fail_level: FailLevel
    tables: tuple[TableAudit, ...]
    findings: tuple[Finding, ...] = ()  # about the run itself (waivers that expired or match nothing)
    phases: Phases = Phases()

    # Worked out once a run (it is immutable): every report format and the exit code ask again.
    @cached_property
    def all_findings(self) -> tuple[Finding, ...]:
        return (*self.findings, *(f for t in self.tables for f in t.findings))

    def fails(self, finding: Finding) -> bool:
        """At or above the fail level, and not acknowledged by a waiver in force on the run's day."""
        return fails(finding, self.fail_level, self.started_at.date())

    @cached_property
    def failing(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.all_findings if self.fails(f))

    @property
    def exit_code(self) -> int:
        return 1 if self.failing else 0

    def table_failing(self, table: TableAudit) -> list[Finding]:
        return [f for f in table.findings if self.fails(f)]

    def counts(self) -> dict[str, int]:
        """Findings by severity, plus how many are waived and how many fail the run."""
        found = self.all_findings
        today = self.started_at.date()
        counts: dict[str, int] = {s: sum(f.severity == s for f in found) for s in reversed(SEVERITIES)}
        counts["waived"] = sum(f.waived(today) for f in found)
        counts["failing"] = len(self.failing)
        return counts
