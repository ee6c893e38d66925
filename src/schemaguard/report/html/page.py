"""The audit as one self-contained HTML page, the last step of the pipeline for a person: the run's
header, per table its facts, its timeline (report.html.timeline), its grid of columns by version
(report.html.grid), its proofs and findings; the run's own findings last. Also the page and notebook
shells every HTML writer uses (`page`, `fragment`, the style sheet style.css shipped beside this
module and inlined) and the designed notebook views of results. It may import the stages before the
report (checks, proofs) and report/common; no script, no external resource, and everything the lake
names goes through report.html.escape."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import date
from functools import cache
from importlib import resources
from typing import Any

from schemaguard.checks.finding import Finding
from schemaguard.proofs.audit_run import AuditRun, TableAudit
from schemaguard.report.common import (
    headline,
    ordered_by,
    severity_groups,
    severity_line,
    stamp,
    table_facts,
    today,
    took,
    verdict,
)
from schemaguard.report.html.escape import escape
from schemaguard.report.html.grid import grid_html
from schemaguard.report.html.timeline import timeline_svg


@cache
def css() -> str:
    """The style sheet every HTML page of schemaguard inlines."""
    return "\n" + resources.files("schemaguard.report.html").joinpath("style.css").read_text(encoding="utf-8")


NOTEBOOK_ROOT = "sg-report"  # the element a notebook's output lives in; every rule is scoped to it
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


@cache
def scoped_css(root: str = NOTEBOOK_ROOT) -> str:
    """The style sheet with every rule under `.root`, for output inside someone else's page (a
    notebook): the page's own `:root`, `html` and `body` rules become the root element's, `*`
    its descendants'. style.css is flat (no @-rules), which this relies on."""
    def one(selector: str) -> str:
        selector = selector.strip()
        if selector in (":root", "html", "body"):
            return f".{root}"
        return f".{root} {selector}"

    return "\n".join(f"{', '.join(one(s) for s in m.group(1).split(','))} {{{m.group(2)}}}"
                     for m in _RULE.finditer(css()))


def page(title: str, body: str) -> str:
    """A self-contained HTML page around a report's body."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{css()}</style></head>
<body>
{body}
</body></html>
"""


def fragment(body: str) -> str:
    """A report's body for a notebook cell: inside its own element, styled by rules that reach
    nothing outside it."""
    return f'<div class="{NOTEBOOK_ROOT}"><style>{scoped_css()}</style>{body}</div>'


def to_html(run: AuditRun) -> str:
    return page(f"schemaguard audit: {verdict(run)} · {run.run_id}", audit_body(run))


def audit_body(run: AuditRun) -> str:
    """The audit report's content: the run's header, each table, the footer."""
    day = today(run)
    counts = run.counts()
    state = "fail" if run.exit_code else "pass"
    chips = "".join(f'<li class="c-{escape(k)}"><b>{n}</b>{escape(k)}</li>' for k, n in counts.items())
    slugs: dict[str, int] = {}
    sections = []
    for table in run.tables:
        slug = _slug(table.name)
        slugs[slug] = slugs.get(slug, 0) + 1
        if slugs[slug] > 1:
            slug = f"{slug}-{slugs[slug]}"
        sections.append(_table_html(run, table, slug, day))
    if run.findings:
        sections.append('<section class="run-findings" id="run-findings"><h2>About the run itself</h2>'
                        f'{_findings_html(run, run.findings, day)}</section>')
    return f"""<header class="run" id="run"><div class="brand">schemaguard audit</div>
<h1><span class="verdict {state}" id="verdict">{verdict(run)}</span> {escape(headline(run))}</h1>
<p class="meta">run <code>{escape(run.run_id)}</code> · started {escape(stamp(run.started_at))}
 · took {escape(took(run))} · exit code {run.exit_code} · fail level <b>{escape(run.fail_level)}</b>
 · {len(run.tables)} table(s)</p>
<ul class="counts">{chips}</ul></header>
<main>
{"".join(sections)}
</main>
<footer>schemaguard · each lane and grid column is one schema version: the files that share one
footer schema.</footer>"""


SHOWN_ITEMS = 5  # a list in a notebook cell: its first items, then how many more


Section = tuple[str, Sequence[Mapping[str, Any]], Sequence[str]]  # a table's name, rows and columns


def result_view(title: str, sections: Sequence[Section]) -> str:
    """A result's designed notebook view: its headline, then each named table with the columns
    chosen for it (every key when none are), lists cut to their first items."""
    parts = [f"<h3>{escape(title)}</h3>"]
    for name, rows, columns in sections:
        keys = list(columns) or list(dict.fromkeys(k for r in rows for k in r))
        head = "".join(f"<th>{escape(k)}</th>" for k in keys)
        body = "".join("<tr>" + "".join(f"<td>{escape(_shown(r.get(k)))}</td>" for k in keys) + "</tr>"
                       for r in rows)
        parts.append(f"<h4>{escape(name)} ({len(rows)})</h4>" + (
            f'<table class="plan"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>' if rows
            else '<p class="empty">none</p>'))
    return fragment("".join(parts))


def _shown(value: Any) -> str:
    """A cell as a person reads it: a list's first items, a change as `path: before -> after`,
    other records as `key value` pairs (never raw JSON)."""
    if isinstance(value, list):
        more = len(value) - SHOWN_ITEMS
        return "; ".join(_shown(v) for v in value[:SHOWN_ITEMS]) + (f" (+{more} more)" if more > 0 else "")
    if isinstance(value, dict):
        if {"path", "before", "after"} <= value.keys():
            return f"{value['path']}: {value['before'] or '(none)'} -> {value['after'] or '(none)'}"
        return ", ".join(f"{k} {_shown(v)}" for k, v in value.items() if v is not None)
    if value is None:
        return ""
    return _cell(value)


def _cell(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, default=str)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "table"


def _inline(text: str) -> str:
    """A message, escaped, whose `backticked` parts become <code>."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return escape(text)
    return "".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p) for i, p in enumerate(parts))


def _table_html(run: AuditRun, table: TableAudit, slug: str, day: date) -> str:
    failing = run.table_failing(table)
    facts = "".join(f'<div><dt>{escape(label)}</dt><dd>{escape(value)}</dd></div>'
                    for label, value in table_facts(table))
    facts += f'<div><dt>findings</dt><dd>{escape(severity_line(table.findings, day))}</dd></div>'
    state = "fail" if failing else "pass"
    caption = "Each lane is one schema version, oldest at the top; "
    order = ordered_by(table)
    if order.startswith("partition "):
        column = order.removeprefix("partition ")
        caption += f"each block is one <code>{escape(column)}</code> partition holding its files"
    else:
        caption += "each tick is a minute in which files were written (modification time)"
    return f"""<section class="table" id="table-{escape(slug)}">
<h2><span class="verdict {state}">{'FAIL' if failing else 'PASS'}</span> {escape(table.name)}
<small>{len(failing)} failing finding(s)</small></h2>
<dl class="facts">{facts}</dl>
<h3>Schema history</h3>
<figure class="timeline" id="timeline-{escape(slug)}">{timeline_svg(table)}
<figcaption>{caption}. Hover a block for its files.</figcaption></figure>
<h3>Columns by version</h3>
<div class="legend"><span class="key drift">drift: type or Parquet layout differs from the version
before</span> <span class="key added">first appears</span>
<span class="key absent">not in this version</span></div>
{grid_html(table, slug)}
{_proofs_html(table)}<h3>Findings</h3>
{_findings_html(run, table.findings, day)}
</section>"""


def _proofs_html(table: TableAudit) -> str:
    """The configured proofs: verdict, what decided it, and where it failed (also on the timeline)."""
    if not table.proofs:
        return ""
    rows = "".join(
        f'<tr class="proof proof-{escape(p.verdict)}"><td><code>{escape(p.proof.label)}</code></td>'
        f'<td><span class="pverdict {escape(p.verdict)}">{escape(p.verdict)}</span></td>'
        f'<td>{escape(p.decided_by)}</td>'
        f'<td>{escape(p.where() if p.partitions else ", ".join(p.files[:3]))}</td>'
        f'<td>{p.rows_read:,}</td><td>{_inline(p.why)}</td></tr>'
        for p in table.proofs)
    return (f'<h3>Proofs</h3>\n<table class="proofs"><thead><tr><th>proof</th><th>verdict</th><th>decided '
            f'by</th><th>where refuted</th><th>rows read</th><th>why</th></tr></thead><tbody>{rows}</tbody>'
            '</table>\n')


def _findings_html(run: AuditRun, findings: Sequence[Finding], day: date) -> str:
    if not findings:
        return '<p class="empty">No findings.</p>'
    out = []
    for severity, group in severity_groups(findings):
        out.append(f'<h4 class="sevhead sev-{severity}">{escape(severity)} <span>{len(group)}</span></h4>')
        out.extend(_finding_html(run, f, day) for f in group)
    return "".join(out)


def _finding_html(run: AuditRun, f: Finding, day: date) -> str:
    fails = run.fails(f)
    classes = ["finding", f"sev-{f.severity}"]
    badges = []
    if fails:
        classes.append("fails")
        badges.append('<span class="badge badge-fail">fails the run</span>')
    if f.waiver is not None:
        if f.waived(day):
            classes.append("waived")
            badges.append(f'<span class="badge badge-waived">WAIVED · {escape(f.waiver.owner)} · until '
                          f'{escape(f.waiver.expires.isoformat())}</span>')
        else:
            badges.append('<span class="badge badge-expired">waiver expired '
                          f'{escape(f.waiver.expires.isoformat())} · {escape(f.waiver.owner)}</span>')
    column = f'<code class="column">{escape(f.path)}</code>' if f.path else ""
    facts = []
    if f.count or f.files:
        facts.append(f"{f.count:,} file(s)")
    if f.versions:
        facts.append(" ".join(f'<span class="vchip">v{n}</span>' for n in f.versions))
    if f.partition_count:
        facts.append(f"{f.partition_count:,} partition(s)")
    if f.files:
        facts.append(f"e.g. <code>{escape(f.files[0])}</code>")
    details = []
    if f.files:
        more = f" of {f.count:,}" if f.count > len(f.files) else ""
        items = "".join(f"<li><code>{escape(p)}</code></li>" for p in f.files)
        details.append(f'<h5>files ({len(f.files)}{more})</h5><ul class="files">{items}</ul>')
    if f.partitions:
        more = f" of {f.partition_count:,}" if f.partition_count > len(f.partitions) else ""
        items = "".join(f"<li><code>{escape(p)}</code></li>" for p in f.partitions)
        details.append(f'<h5>partitions ({len(f.partitions)}{more})</h5><ul class="files">{items}</ul>')
    if f.evidence:
        items = "".join(f"<tr><th>{escape(label)}</th><td>{escape(value)}</td></tr>"
                        for label, value in f.evidence)
        details.append(f'<h5>evidence</h5><table class="evidence">{items}</table>')
    if f.waiver is not None:
        details.append(f'<h5>waiver</h5><p>{escape(f.waiver.owner)}, until '
                       f'{escape(f.waiver.expires.isoformat())}: {escape(f.waiver.reason)}</p>')
    meta = [f"key <code>{escape(f.key)}</code>"]
    if f.rule:
        meta.append(f"rule {escape(f.rule)}")
    details.append(f'<p class="meta">{" · ".join(meta)}</p>')
    return (f'<article class="{" ".join(classes)}"><header>'
            f'<span class="sev">{escape(f.severity.upper())}</span>'
            f'<span class="code">{escape(f.code)}</span>{column}<span class="where">{escape(f.table)}</span>'
            f'{"".join(badges)}</header><p class="msg">{_inline(f.message)}</p>'
            f'<p class="facts">{" · ".join(facts)}</p>'
            f'<details><summary>files, evidence and rule</summary>{"".join(details)}</details></article>')

