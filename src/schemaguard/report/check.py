"""What `schemaguard check` prints: each proof's verdict, as JSON (stable keys) and as text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from schemaguard.proofs import EXIT_CODES, ProofResult, Verdict, overall
from schemaguard.proofs.run import Scope
from schemaguard.report.console import console as terminal


@dataclass(frozen=True, slots=True)
class CheckReport:
    table: str
    format: str
    scope: Scope
    results: tuple[ProofResult, ...]

    @property
    def verdict(self) -> Verdict:
        return overall(r.verdict for r in self.results)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]


def _scope_json(scope: Scope) -> dict[str, Any]:
    return {"partitions": {k: v for k, v in scope.partitions}, "since": scope.since, "until": scope.until}


def proof_json(r: ProofResult) -> dict[str, Any]:
    return {
        "proof": r.proof.kind,
        "column": r.proof.spelled,
        "verdict": r.verdict,
        "decided_by": r.decided_by,
        "count": r.count,
        "partitions": list(r.partitions),
        "partition_count": r.partition_count,
        "files": list(r.files),
        "files_unknown": list(r.files_unknown),
        "files_absent": list(r.files_absent),
        "rows_read": r.rows_read,
        "bytes_read": r.bytes_read,
        "sample": list(r.sample),
        "why": r.why or None,
    }


def check_json(report: CheckReport) -> dict[str, Any]:
    return {"table": report.table, "format": report.format, "scope": _scope_json(report.scope),
            "verdict": report.verdict, "exit_code": report.exit_code,
            "proofs": [proof_json(r) for r in report.results],
            "rows_read": sum(r.rows_read for r in report.results),
            "bytes_read": sum(r.bytes_read for r in report.results)}


def check_text(report: CheckReport) -> None:
    out = terminal()
    colour = {"proven": "green", "refuted": "red", "unknown": "yellow"}
    table = Table(title=f"{report.table} ({report.format}): {report.verdict.upper()}", title_justify="left")
    for col in ("proof", "column", "verdict", "decided by", "count", "where", "read"):
        table.add_column(col, justify="right" if col in ("count", "read") else "left")
    for r in report.results:
        where = r.where() or ", ".join(r.files[:2]) or (f"{len(r.files_absent)} file(s) without it"
                                                    if r.files_absent else "-")
        column = proof_json(r)["column"]
        table.add_row(r.proof.kind, column, Text(r.verdict, style=colour[r.verdict]), r.decided_by,
                      f"{r.count:,}", where, f"{r.rows_read:,} rows" if r.rows_read else "no data")
    out.print(table)
    for r in report.results:
        if r.why or r.sample:
            head = f"{r.proof.label}: {r.why or r.verdict}"
            out.print(head, soft_wrap=True, markup=False)
        for row in r.sample[:5]:
            out.print(f"  e.g. {row}", soft_wrap=True, markup=False)
