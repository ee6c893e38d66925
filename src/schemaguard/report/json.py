"""The audit as one JSON document (docs/design.md): the run, each table with its scan document and its
findings, and the findings about the run itself. This builds the document; `folder.py` serialises it
(with the standard library's `json`: imports are absolute, so this module's name shadows nothing)."""

from __future__ import annotations

from typing import Any

from schemaguard.acyclic import acyclic
from schemaguard.checks.finding import SAMPLE, Finding, finding_doc
from schemaguard.formats.notation import schema_to_notation
from schemaguard.proofs.audit_run import AuditRun
from schemaguard.report.check import proof_json
from schemaguard.report.common import elapsed, today, verdict
from schemaguard.report.scan import scan_json

MAX_FILES = SAMPLE  # files per version in the JSON scan document (the count stands beside them)


def finding_json(run: AuditRun, f: Finding) -> dict[str, Any]:
    """A finding's stable keys, with its waiver and whether it fails the run."""
    waiver = None
    if f.waiver is not None:
        waiver = {"owner": f.waiver.owner, "reason": f.waiver.reason, "expires": f.waiver.expires.isoformat(),
                  "active": f.waiver.active(today(run))}
    return {**finding_doc(f), "waiver": waiver, "fails": run.fails(f)}


@acyclic()
def to_json(run: AuditRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat(),
        "seconds": {"total": round(elapsed(run), 3), **{k: round(v, 3) for k, v in vars(run.phases).items()}},
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
                "verdict": "FAIL" if run.table_failing(t) else "PASS",
                "scan": scan_json(t.summary, t.findings, MAX_FILES),
                "findings": [finding_json(run, f) for f in t.findings],
                "proofs": [proof_json(p) for p in t.proofs],
            }
            for t in run.tables
        ],
        "findings": [finding_json(run, f) for f in run.findings],
    }
