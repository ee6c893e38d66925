"""The audit as Markdown (a CI job summary, a pull-request comment): the verdict, each table's facts
and schema versions, the findings by severity. Everything the lake names is escaped or put in code
spans, so no cell of a table breaks out."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date

from schemaguard.checks.finding import Finding
from schemaguard.checks.summary import VersionSummary
from schemaguard.proofs.audit_run import AuditRun, TableAudit
from schemaguard.report.common import (
    headline,
    severity_groups,
    severity_line,
    stamp,
    table_facts,
    today,
    took,
    verdict,
    versions_text,
    waiver_text,
)

_MD_SPECIAL = re.compile(r"([\\`*\[\]<>&|]|(?<!\w)_|_(?!\w))")
_SPACES = re.compile(r"\s+")
_TICKS = re.compile(r"`+")


def _md_plain(text: str) -> str:
    """Text outside code: Markdown and HTML punctuation backslash-escaped, one line."""
    return _MD_SPECIAL.sub(r"\\\1", _SPACES.sub(" ", text))


def _md_code(text: str) -> str:
    """A code span for any text (backticks inside get a longer fence); `|` escaped for tables."""
    text = _SPACES.sub(" ", text)
    longest = max(map(len, _TICKS.findall(text)), default=0) if "`" in text else 0
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
    day = today(run)
    mark = "❌" if run.exit_code else "✅"
    lines = [
        f"# {mark} schemaguard audit: **{verdict(run)}**",
        "",
        f"{_md_plain(headline(run))}. Exit code **{run.exit_code}**, fail level `{run.fail_level}`.",
        "",
        f"Run {_md_code(run.run_id)}, started {stamp(run.started_at)}, took {took(run)}.",
        "",
    ]
    counts = run.counts()
    lines += [*_md_table(list(counts), [[str(n) for n in counts.values()]], range(len(counts))), ""]
    for table in run.tables:
        lines += _md_table_section(run, table, day)
    if run.findings:
        lines += ["## Run", "", *_md_findings(run, run.findings, day)]
    return "\n".join(lines).rstrip() + "\n"


def _md_table_section(run: AuditRun, table: TableAudit, day: date) -> list[str]:
    failing = run.table_failing(table)
    facts = [(label, _md_code(value) if label == "location" else _md_plain(value))
             for label, value in table_facts(table)]
    facts.append(("findings", _md_plain(severity_line(table.findings, day))))
    facts.append(("verdict", f"**FAIL** ({len(failing)} failing)" if failing else "**PASS**"))
    lines = [f"## Table {_md_code(table.name)}: {'FAIL' if failing else 'PASS'}", "",
             *_md_table(["", ""], [[f"**{label}**", value] for label, value in facts]), ""]
    if table.summary.versions:
        header = ["version", "seen", "files", "partitions", "rows", "columns", "changes from previous",
                  "fingerprint"]
        rows = [_md_version_row(vs) for vs in table.summary.versions]
        lines += ["### Schema versions", "", *_md_table(header, rows, (2, 3, 4, 5)), ""]
    if table.findings:
        lines += ["### Findings", "", *_md_findings(run, table.findings, day)]
    return lines


def _md_version_row(vs: VersionSummary) -> list[str]:
    v = vs.version
    seen = v.first_seen
    if v.last_seen != v.first_seen:
        seen = f"{v.first_seen} .. {v.last_seen}"
    changes = "; ".join(_md_change(c.path, c.before, c.after) for c in vs.changes)
    return [f"v{v.number}", _md_plain(seen or "-"), str(len(v.files)), str(len(v.partitions)),
            f"{v.rows:,}", str(len(v.footer.columns)), changes or ("first" if v.number == 1 else "-"),
            _md_code(v.fingerprint)]


def _md_change(path: str, before: str | None, after: str | None) -> str:
    code = _md_code(path)
    if before is None:
        return f"added {code} {_md_code(after or '')}"
    if after is None:
        return f"dropped {code}"
    return f"{code} {_md_code(before)} → {_md_code(after)}"


def _md_findings(run: AuditRun, findings: Sequence[Finding], day: date) -> list[str]:
    lines: list[str] = []
    for severity, group in severity_groups(findings):
        rows = []
        for f in group:
            files = "-"
            if f.files:
                files = f"{f.count}, e.g. {_md_code(f.files[0])}"
            elif f.count:
                files = str(f.count)
            waiver = _md_plain(waiver_text(f, day)) or "-"
            if f.waiver is not None and f.waived(day):
                waiver = f"**{waiver}**: {_md_plain(f.waiver.reason)}"
            rows.append([_md_code(f.code) + (" **fails**" if run.fails(f) else ""),
                         _md_code(f.path) if f.path else "-", _md_text(f.message),
                         _md_plain(versions_text(f.versions)) or "-", files, waiver])
        lines += [f"#### {severity} ({len(group)})", "",
                  *_md_table(["code", "column", "message", "versions", "files", "waiver"], rows), ""]
    return lines
