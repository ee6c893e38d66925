"""The audit as SARIF 2.1.0 (code-scanning dashboards): one rule per finding code seen, one result
per finding with its file as a location relative to its table, waivers in force as suppressions."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from schemaguard.base import SEVERITIES
from schemaguard.checks.finding import CODES, by_severity
from schemaguard.meta import version
from schemaguard.proofs.audit_run import AuditRun
from schemaguard.report.common import today

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def to_sarif(run: AuditRun) -> dict[str, Any]:
    day = today(run)
    findings = by_severity(run.all_findings)
    codes = sorted({f.code for f in findings})
    worst = {c: max((f.severity for f in findings if f.code == c), key=SEVERITIES.index) for c in codes}
    rules = [{"id": c.value, "name": "".join(w.capitalize() for w in c.split("_")),
              "shortDescription": {"text": CODES[c].meaning},
              "defaultConfiguration": {"level": SARIF_LEVELS[worst[c]]}} for c in codes]
    locations = {t.name: t.location for t in run.tables}
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.code.value,
            "ruleIndex": codes.index(f.code),
            "level": SARIF_LEVELS[f.severity],
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
        if f.waiver is not None and f.waived(day):
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


def _uri(path: str) -> str:
    """A table-relative file path as a relative URI reference (percent-encoded, `/` kept)."""
    return quote(path, safe="/=,;@+!$'()*&-._~")


def _location_uri(location: str) -> str:
    """The table location as an absolute URI ending in `/` (SARIF base URIs are folders)."""
    uri = location if "://" in location else Path(location).absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _sarif_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
