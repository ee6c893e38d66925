"""What the Python API returns: one result class per command, each holding the computed report.

Every result has `.ok` and `.exit_code` (what the command's exit code means), `.to_dict()` (the
same keys as `--format json`), `.findings` (typed objects), `.to_pandas()` and `.to_spark(spark)`
(its main rows: findings, proofs or steps), `_repr_html_` (a notebook shows the report's HTML),
a one-line `repr`, and `raise_for_status()`, which raises `ChecksFailed` naming what failed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemaguard.errors import ChecksFailed, InvalidInput

if TYPE_CHECKING:
    from schemaguard.checks.compare import CompareReport, EvolveReport, MergeReport
    from schemaguard.checks.finding import Finding
    from schemaguard.checks.gate import GateReport
    from schemaguard.checks.summary import TableSummary
    from schemaguard.config import AuditConfig
    from schemaguard.lake.history import SchemaVersion
    from schemaguard.lake.table import TableRead
    from schemaguard.planning.ddl import DdlChange
    from schemaguard.planning.planner import Plan
    from schemaguard.proofs import ProofResult
    from schemaguard.proofs.audit_run import AuditRun
    from schemaguard.report.check import CheckReport


class Result:
    """What every result shares; a subclass says its exit code, JSON, rows and name."""

    command = ""

    @property
    def exit_code(self) -> int:
        raise NotImplementedError

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def findings(self) -> tuple[Any, ...]:
        return ()

    def rows(self) -> list[dict[str, Any]]:
        """The result's main table as JSON rows (the `--format json` entries)."""
        return []

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every table of rows the result holds, by name; the first is `rows()`."""
        return {"rows": self.rows()}

    def _table(self, which: str | None) -> list[dict[str, Any]]:
        tables = self.tables()
        if which is None:
            return next(iter(tables.values()))
        if which not in tables:
            raise InvalidInput(f"{which!r} is not one of this result's tables: {', '.join(tables)}")
        return tables[which]

    def failing(self) -> list[str]:
        """What makes the result fail, one line each (empty when it passes)."""
        return []

    def summary(self) -> str:
        return f"exit {self.exit_code}"

    def to_pandas(self, which: str | None = None) -> Any:
        """A table of rows (`tables()`; the main one by default) as a pandas DataFrame."""
        import pandas as pd  # (only where pandas is installed)

        return pd.DataFrame(self._table(which))

    def to_spark(self, spark: Any, which: str | None = None) -> Any:
        """A table of rows as a Spark DataFrame of the given session (nested entries as structs)."""
        rows = self._table(which)
        if not rows:
            from pyspark.sql.types import StructType

            return spark.createDataFrame([], StructType([]))
        texts = [json.dumps(r, default=str) for r in rows]
        return spark.read.json(spark.sparkContext.parallelize(texts, 1))

    def raise_for_status(self) -> None:
        if not self.ok:
            failing = self.failing()
            shown = "; ".join(failing[:5]) + (f"; and {len(failing) - 5} more" if len(failing) > 5 else "")
            raise ChecksFailed(f"schemaguard {self.command} failed (exit {self.exit_code}): "
                               f"{shown or self.summary()}", self)

    # A notebook's designed view: (table of `tables()`, its columns) sections; none: every key.
    view: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def _repr_html_(self) -> str:
        from schemaguard.report.html.page import result_view

        tables = self.tables()
        sections = [(name, tables.get(name, []), columns) for name, columns in self.view] or [
            ("rows", self.rows(), ())]
        return result_view(f"schemaguard {self.command}: {self.summary()}", sections)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {'ok' if self.ok else 'FAIL'}: {self.summary()}>"


PROBLEMS_VIEW = (("rows", ("severity", "code", "path", "message", "rule")),)  # compare, merge, evolve


@dataclass(frozen=True, repr=False)
class ScanResult(Result):
    table: TableRead
    table_summary: TableSummary
    scan_findings: tuple[Finding, ...]
    max_files: int = 1000
    command = "scan"
    view = (("versions", ("version", "file_count", "rows", "first_seen", "last_seen",
                          "changes_from_previous")),
            ("findings", ("severity", "code", "path", "message", "count", "files")),
            ("unreadable", ("path", "reason")))

    @property
    def exit_code(self) -> int:
        return 0  # a scan reports; `gate`, `audit` and `check` decide

    @property
    def versions(self) -> tuple[SchemaVersion, ...]:
        return self.table.versions

    @property
    def files(self) -> Sequence[Any]:
        return self.table.listing.files

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.scan_findings

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.scan import scan_json

        return scan_json(self.table_summary, self.scan_findings, self.max_files)

    def rows(self) -> list[dict[str, Any]]:
        return list(self.to_dict()["findings"])

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        doc = self.to_dict()
        return {"findings": list(doc["findings"]), "versions": list(doc["versions"]),
                "unreadable": list(doc["unreadable"])}

    def summary(self) -> str:
        return (f"{self.table.location}: {len(self.files):,} files, {len(self.versions)} schema version(s), "
                f"{len(self.findings)} finding(s)")


@dataclass(frozen=True, repr=False)
class CompareResult(Result):
    report: CompareReport
    command = "compare"
    view = PROBLEMS_VIEW

    @property
    def exit_code(self) -> int:
        return 0 if self.report.compatible else 1

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(p for _, problems in self.report.writers for p in problems)

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.rules_output import compare_json

        return compare_json(self.report)

    def rows(self) -> list[dict[str, Any]]:
        return list(self.to_dict()["problems"])

    def failing(self) -> list[str]:
        return [f"{p.path}: {p.message}" for p in self.findings if p.severity == "error"]

    def summary(self) -> str:
        return f"{'compatible' if self.report.compatible else 'incompatible'} under {self.report.profile}"


@dataclass(frozen=True, repr=False)
class MergeResult(Result):
    report: MergeReport
    command = "merge"
    view = PROBLEMS_VIEW

    @property
    def exit_code(self) -> int:
        return 0 if self.report.result.ok else 1

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(self.report.result.conflicts)

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.rules_output import merge_json

        return merge_json(self.report)

    def rows(self) -> list[dict[str, Any]]:
        return list(self.to_dict()["conflicts"])

    def failing(self) -> list[str]:
        return [f"{c.path}: {c.message}" for c in self.findings]

    def summary(self) -> str:
        return f"{'merges' if self.report.result.ok else 'does not merge'} under {self.report.profile}"


@dataclass(frozen=True, repr=False)
class EvolveResult(Result):
    report: EvolveReport
    command = "evolve"
    view = PROBLEMS_VIEW

    @property
    def exit_code(self) -> int:
        return 0 if self.report.compatible else 1

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(p for f in self.report.failures for p in f.problems)

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.rules_output import evolve_json

        return evolve_json(self.report)

    def rows(self) -> list[dict[str, Any]]:
        return [p for failed in self.to_dict()["failed"] for p in failed["problems"]]

    def failing(self) -> list[str]:
        return [f"{p.path}: {p.message}" for p in self.findings if p.severity == "error"]

    def summary(self) -> str:
        return f"{'allowed' if self.report.compatible else 'refused'} under {self.report.mode.value}"


@dataclass(frozen=True, repr=False)
class GateResult(Result):
    report: GateReport
    command = "gate"
    view = (("rows", ("path", "left", "right", "message", "rule", "files", "versions")),)

    @property
    def exit_code(self) -> int:
        return self.report.exit_code

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(self.report.conflicts)

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.gate import gate_json

        return gate_json(self.report)

    def rows(self) -> list[dict[str, Any]]:
        return list(self.to_dict()["conflicts"])

    def failing(self) -> list[str]:
        return [f"{c.path}: {c.message}" for c in self.report.conflicts]

    def summary(self) -> str:
        return f"{self.report.table}: mergeSchema {'safe' if self.report.merge_safe else 'not safe'}"


@dataclass(frozen=True, repr=False)
class CheckResult(Result):
    report: CheckReport
    command = "check"
    view = (("rows", ("proof", "column", "verdict", "decided_by", "count", "partitions", "why")),)

    @property
    def exit_code(self) -> int:
        return self.report.exit_code

    @property
    def proofs(self) -> tuple[ProofResult, ...]:
        return self.report.results

    @property
    def findings(self) -> tuple[ProofResult, ...]:
        return tuple(r for r in self.report.results if r.verdict != "proven")

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.check import check_json

        return check_json(self.report)

    def rows(self) -> list[dict[str, Any]]:
        return list(self.to_dict()["proofs"])

    def failing(self) -> list[str]:
        return [f"{r.proof.kind} {r.proof.column}: {r.verdict}" + (f" ({r.where() or r.why})"
                                                                    if r.where() or r.why else "")
                for r in self.findings]

    def summary(self) -> str:
        return f"{self.report.table}: {self.report.verdict} ({len(self.proofs)} proof(s))"


@dataclass(frozen=True, repr=False)
class PlanResult(Result):
    plan: Plan
    ddl: DdlChange | None = None
    table: TableRead | None = None
    ddl_source: str = "--ddl"
    command = "plan"

    @property
    def exit_code(self) -> int:
        return self.plan.exit_code

    @property
    def steps(self) -> tuple[Any, ...]:
        return self.plan.steps

    @property
    def findings(self) -> tuple[Any, ...]:
        return tuple(c for c in self.plan.checks if c.status in ("refuted", "unknown"))

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.plan import plan_json

        return plan_json(self.plan)

    def rows(self) -> list[dict[str, Any]]:
        return list(self.to_dict()["steps"])

    def failing(self) -> list[str]:
        return [f"{c.kind} {c.subject}: {c.status}" for c in self.findings] or [
            f"a staged plan is needed ({self.plan.strategy})"]

    def lint(self) -> Any:
        """The DDL's statements judged for CI (`plan --format sarif|junit`); None without DDL."""
        if self.ddl is None:
            return None
        from schemaguard.planning.lint import lint

        configuration = self.table.delta.configuration if self.table is not None and self.table.delta else {}
        return lint(self.ddl, self.plan, self.ddl_source, self.table.table_format if self.table else None,
                    configuration)

    def _repr_html_(self) -> str:
        from schemaguard.report.html.page import fragment
        from schemaguard.report.plan import plan_body

        return fragment(plan_body(self.plan))

    def summary(self) -> str:
        plan = self.plan
        verdict = "safe as a single edit" if plan.safe_as_single_edit else f"{plan.strategy}, staged"
        return f"{verdict}: {len(self.plan.steps)} step(s), mode {self.plan.mode}"


@dataclass(frozen=True, repr=False)
class AuditResult(Result):
    run: AuditRun
    config: AuditConfig
    reports: Mapping[str, Path] = field(default_factory=dict)
    command = "audit"

    @property
    def exit_code(self) -> int:
        return self.run.exit_code

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(self.run.all_findings)

    @property
    def proofs(self) -> tuple[ProofResult, ...]:
        return tuple(p for t in self.run.tables for p in t.proofs)

    def to_dict(self) -> dict[str, Any]:
        from schemaguard.report.json import to_json

        return to_json(self.run)

    def rows(self) -> list[dict[str, Any]]:
        return self.tables()["findings"]

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """The run's findings and proofs as the catalog's `findings` and `proofs` tables hold them:
        the same columns, whichever way they are read."""
        from schemaguard.report.catalog import finding_rows, proof_rows

        return {"findings": finding_rows(self.run), "proofs": proof_rows(self.run)}

    def failing(self) -> list[str]:
        return [f"{f.table}: {f.code} {f.path or ''} {f.message}".replace("  ", " ")
                for f in self.run.all_findings if self.run.fails(f)]

    def _repr_html_(self) -> str:
        from schemaguard.report.html.page import audit_body, fragment

        return fragment(audit_body(self.run))

    def summary(self) -> str:
        c = self.run.counts()
        return (f"run {self.run.run_id}: {len(self.run.tables)} table(s), {c['error']} error(s), "
                f"{c['warning']} warning(s), {c['failing']} failing")

