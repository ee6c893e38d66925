"""The audit as one self-contained HTML page: per table its facts, a timeline of its schema versions
(SVG: one lane per version, a block per date partition or a tick per modification minute), a grid of
every column by version with the drift marked, and its findings; the run's own findings last. No
script, no external resource; the style sheet (html.css, shipped beside this module) is inlined.
Everything the lake names is escaped."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from importlib import resources
from typing import Any

from schemaguard.checks.finding import Finding
from schemaguard.checks.summary import VersionSummary
from schemaguard.formats.notation import describe
from schemaguard.model import leaves
from schemaguard.proofs.outcome import AuditRun, TableAudit
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

# One colour per schema version lane in the HTML timeline (and its column in the grid); no red, which
# means "unreadable" and "error" on the page.
LANE_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7",
                "#86bcb6", "#d4a6c8")
UNREADABLE_COLOUR = "#c0392b"
REFUTED_COLOUR = "#8e2c6a"  # a refuted proof's lane: where the data breaks the claim
GUTTER_CHARACTERS = 22  # a lane's name and detail fit the timeline's gutter up to this many characters


@cache
def css() -> str:
    """The style sheet every HTML page of schemaguard inlines."""
    return "\n" + resources.files("schemaguard.report").joinpath("html.css").read_text(encoding="utf-8")


NOTEBOOK_ROOT = "sg-report"  # the element a notebook's output lives in; every rule is scoped to it
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


@cache
def scoped_css(root: str = NOTEBOOK_ROOT) -> str:
    """The style sheet with every rule under `.root`, for output inside someone else's page (a
    notebook): the page's own `:root`, `html` and `body` rules become the root element's, `*`
    its descendants'. html.css is flat (no @-rules), which this relies on."""
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
<title>{_e(title)}</title>
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
    chips = "".join(f'<li class="c-{_e(k)}"><b>{n}</b>{_e(k)}</li>' for k, n in counts.items())
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
<h1><span class="verdict {state}" id="verdict">{verdict(run)}</span> {_e(headline(run))}</h1>
<p class="meta">run <code>{_e(run.run_id)}</code> · started {_e(stamp(run.started_at))}
 · took {_e(took(run))} · exit code {run.exit_code} · fail level <b>{_e(run.fail_level)}</b>
 · {len(run.tables)} table(s)</p>
<ul class="counts">{chips}</ul></header>
<main>
{"".join(sections)}
</main>
<footer>schemaguard · each lane and grid column is one schema version: the files that share one
footer schema.</footer>"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


SHOWN_ITEMS = 5  # a list in a notebook cell: its first items, then how many more


Section = tuple[str, Sequence[Mapping[str, Any]], Sequence[str]]  # a table's name, rows and columns


def result_view(title: str, sections: Sequence[Section]) -> str:
    """A result's designed notebook view: its headline, then each named table with the columns
    chosen for it (every key when none are), lists cut to their first items."""
    parts = [f"<h3>{_e(title)}</h3>"]
    for name, rows, columns in sections:
        keys = list(columns) or list(dict.fromkeys(k for r in rows for k in r))
        head = "".join(f"<th>{_e(k)}</th>" for k in keys)
        body = "".join("<tr>" + "".join(f"<td>{_e(_shown(r.get(k)))}</td>" for k in keys) + "</tr>"
                       for r in rows)
        parts.append(f"<h4>{_e(name)} ({len(rows)})</h4>" + (
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
        return _e(text)
    return "".join(f"<code>{_e(p)}</code>" if i % 2 else _e(p) for i, p in enumerate(parts))


def _table_html(run: AuditRun, table: TableAudit, slug: str, day: date) -> str:
    failing = run.table_failing(table)
    facts = "".join(f'<div><dt>{_e(label)}</dt><dd>{_e(value)}</dd></div>'
                    for label, value in table_facts(table))
    facts += f'<div><dt>findings</dt><dd>{_e(severity_line(table.findings, day))}</dd></div>'
    state = "fail" if failing else "pass"
    caption = "Each lane is one schema version, oldest at the top; "
    order = ordered_by(table)
    if order.startswith("partition "):
        column = order.removeprefix("partition ")
        caption += f"each block is one <code>{_e(column)}</code> partition holding its files"
    else:
        caption += "each tick is a minute in which files were written (modification time)"
    return f"""<section class="table" id="table-{_e(slug)}">
<h2><span class="verdict {state}">{'FAIL' if failing else 'PASS'}</span> {_e(table.name)}
<small>{len(failing)} failing finding(s)</small></h2>
<dl class="facts">{facts}</dl>
<h3>Schema history</h3>
<figure class="timeline" id="timeline-{_e(slug)}">{_timeline_svg(table)}
<figcaption>{caption}. Hover a block for its files.</figcaption></figure>
<h3>Columns by version</h3>
<div class="legend"><span class="key drift">drift: type or Parquet layout differs from the version
before</span> <span class="key added">first appears</span>
<span class="key absent">not in this version</span></div>
{_grid_html(table, slug)}
{_proofs_html(table)}<h3>Findings</h3>
{_findings_html(run, table.findings, day)}
</section>"""


def _proofs_html(table: TableAudit) -> str:
    """The configured proofs: verdict, what decided it, and where it failed (also on the timeline)."""
    if not table.proofs:
        return ""
    rows = "".join(
        f'<tr class="proof proof-{_e(p.verdict)}"><td><code>{_e(p.proof.label)}</code></td>'
        f'<td><span class="pverdict {_e(p.verdict)}">{_e(p.verdict)}</span></td><td>{_e(p.decided_by)}</td>'
        f'<td>{_e(p.where() if p.partitions else ", ".join(p.files[:3]))}</td>'
        f'<td>{p.rows_read:,}</td><td>{_inline(p.why)}</td></tr>'
        for p in table.proofs)
    return (f'<h3>Proofs</h3>\n<table class="proofs"><thead><tr><th>proof</th><th>verdict</th><th>decided '
            f'by</th><th>where refuted</th><th>rows read</th><th>why</th></tr></thead><tbody>{rows}</tbody>'
            '</table>\n')


# ---------------------------------------------------------------------------------------------
# the timeline


@dataclass(frozen=True)
class _Mark:
    start: datetime
    end: datetime | None  # None: an instant (a file's modification time)
    files: int
    label: str  # the partition or the moment


@dataclass(frozen=True)
class _Lane:
    label: str
    detail: str
    colour: str
    marks: tuple[_Mark, ...]
    cls: str
    note: str = ""  # what changed from the lane before, written beside the lane's blocks


def _moment(value: str | None) -> datetime | None:
    """first_seen/last_seen as history writes them: an ISO date (from a date partition) or an ISO
    timestamp (from a modification time); naive ones are UTC."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _marks(days: Sequence[tuple[date, int]], date_col: str | None, files: Sequence[Any],
           first: str | None = None, last: str | None = None) -> tuple[_Mark, ...]:
    """Where files lie in time: one block per day of the date partition, else a tick per
    modification minute, else the first..last span. `files` are footers or listed files (mtime)."""
    if days:
        return tuple(_Mark(_midnight(d), _midnight(d) + timedelta(days=1), n, f"{date_col}={d}")
                     for d, n in days)
    minutes = Counter(datetime.fromtimestamp(f.mtime, UTC).replace(second=0, microsecond=0)
                      for f in files if f.mtime is not None)
    if minutes:
        return tuple(_Mark(m, None, n, f"written {m:%Y-%m-%d %H:%M} UTC") for m, n in sorted(minutes.items()))
    lo, hi = _moment(first), _moment(last)
    if lo is None:
        return ()
    return (_Mark(lo, hi if hi and hi > lo else None, 0, f"first seen {first}, last seen {last}"),)


def _lanes(table: TableAudit) -> list[_Lane]:
    summary = table.summary
    date_col = summary.date_column
    lanes = []
    for i, vs in enumerate(summary.versions):
        v = vs.version
        detail = f"{len(v.files)} file(s) · {v.rows:,} rows"
        lanes.append(_Lane(f"v{v.number}", detail, LANE_COLOURS[i % len(LANE_COLOURS)],
                           _marks(vs.days, date_col, v.files, v.first_seen, v.last_seen),
                           f"lane lane-v{v.number}",
                           _change_note(vs, first=i == 0)))
    if summary.counts.unreadable:
        lanes.append(_Lane("unreadable", f"{summary.counts.unreadable} file(s)", UNREADABLE_COLOUR,
                           _marks(summary.unreadable_days, date_col, summary.unreadable_files),
                           "lane lane-unreadable"))
    for proof in table.proofs:
        if proof.verdict == "refuted":
            # the kind as the lane's name, the column beside it: the gutter holds ~22 characters, so a
            # longer column (an `agree` expression) is cut there and written whole beside the blocks
            kind, spelled = proof.proof.kind, proof.proof.spelled
            room = GUTTER_CHARACTERS - len(kind)
            cut = spelled if len(spelled) <= room else spelled[:room - 1] + "…"
            note = f"refuted in {proof.partition_count} partition(s)"
            lanes.append(_Lane(kind, cut, REFUTED_COLOUR, _refuted_marks(proof.days, date_col),
                               "lane lane-proof", note if cut == spelled else f"{spelled}: {note}"))
    return lanes


def _refuted_marks(days: Sequence[date], date_col: str | None) -> tuple[_Mark, ...]:
    """Where a proof is refuted, a block a day of the date partition (others have no place in time)."""
    return tuple(_Mark(_midnight(d), _midnight(d) + timedelta(days=1), 0, f"refuted in {date_col}={d}")
                 for d in days)


def _change_note(vs: VersionSummary, first: bool) -> str:
    """`+added -dropped ~changed` columns against the version before, shortened to fit a lane."""
    if first:
        return f"{len(vs.version.footer.columns)} columns"
    marks = []
    for c in vs.changes:
        sign = "+" if c.before is None else "-" if c.after is None else "~"
        marks.append(f"{sign}{c.path}")
    note = "  ".join(marks) or "same columns"
    return note if len(note) <= 60 else note[:59] + "…"


def _ticks(lo: datetime, hi: datetime) -> list[tuple[datetime, str]]:
    """Round moments between lo and hi, at most about ten, labelled for their spacing (the year on the
    first and wherever it changes)."""
    span = (hi - lo).total_seconds()
    hour, day = 3600, 86400
    for step in (60, 300, 900, hour, 3 * hour, 6 * hour, 12 * hour, day, 2 * day, 7 * day, 14 * day):
        if span / step <= 10:
            if step >= 7 * day:  # weeks start on Mondays
                start = _midnight(lo.date() - timedelta(days=lo.weekday()))
            else:
                start = _midnight(lo.date())
            moment = start + timedelta(seconds=step * -(-(lo - start).total_seconds() // step))
            out, year = [], None
            while moment <= hi:
                label = f"{moment:%b} {moment.day}" + ("" if moment.year == year else f" {moment.year}")
                out.append((moment, label + ("" if step >= day else f" {moment:%H:%M}")))
                year = moment.year
                moment += timedelta(seconds=step)
            return out
    months = 1
    while span / (months * 30.4 * day) > 8:
        months = {1: 2, 2: 3, 3: 6, 6: 12}.get(months, months + 12)
    year, month = lo.year, lo.month
    out = []
    while True:
        moment = datetime(year, month, 1, tzinfo=UTC)
        if moment > hi:
            break
        step_ok = month == 1 and year % (months // 12) == 0 if months >= 12 else (month - 1) % months == 0
        if moment >= lo and step_ok:
            out.append((moment, moment.strftime("%b %Y" if months < 12 else "%Y")))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _timeline_svg(table: TableAudit) -> str:
    lanes = _lanes(table)
    width, gutter, right, top, lane_h, gap, axis_h = 1200, 200, 24, 14, 26, 12, 34
    height = top + len(lanes) * (lane_h + gap) + axis_h
    moments = [m.start for lane in lanes for m in lane.marks]
    moments += [m.end for lane in lanes for m in lane.marks if m.end is not None]
    if not lanes:
        return '<p class="empty">No readable data file: no schema version to place in time.</p>'
    parts = [f'<svg class="timeline-svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-label="schema versions of {_e(table.name)} over time" xmlns="http://www.w3.org/2000/svg">']
    if not moments:
        parts.append(f'<text x="{gutter}" y="{top + 16}" class="nodata">no dates: neither a date '
                     'partition nor file modification times</text>')
        lo = hi = datetime(1970, 1, 1, tzinfo=UTC)
    else:
        lo, hi = min(moments), max(moments)
        if hi - lo < timedelta(hours=1):
            lo, hi = lo - timedelta(minutes=30), hi + timedelta(minutes=30)
        pad = (hi - lo) * 0.01
        lo, hi = lo - pad, hi + pad
    scale = (width - gutter - right) / max((hi - lo).total_seconds(), 1.0)

    def x(moment: datetime) -> float:
        return gutter + (moment - lo).total_seconds() * scale

    plot_bottom = top + len(lanes) * (lane_h + gap) - gap / 2
    if moments:
        parts.append('<g class="axis">')
        for moment, label in _ticks(lo, hi):
            px = x(moment)
            parts.append(f'<line x1="{px:.1f}" y1="{top - 6}" x2="{px:.1f}" y2="{plot_bottom:.1f}" '
                         'class="gridline"/>')
            if px + 3.5 * len(label) <= width:  # a label that would run off the right edge is left out
                parts.append(f'<text x="{px:.1f}" y="{plot_bottom + 18:.1f}" class="tick">{_e(label)}</text>')
        parts.append('</g>')
    for i, lane in enumerate(lanes):
        y = top + i * (lane_h + gap)
        parts.append(f'<g class="{lane.cls}" data-colour="{lane.colour}">')
        parts.append(f'<rect x="4" y="{y}" width="{gutter - 16}" height="{lane_h}" rx="5" '
                     f'fill="{lane.colour}" class="lane-key"/>')
        parts.append(f'<text x="14" y="{y + lane_h / 2 + 5:.1f}" class="lane-label">{_e(lane.label)}</text>')
        parts.append(f'<text x="{gutter - 20}" y="{y + lane_h / 2 + 4:.1f}" class="lane-detail">'
                     f'{_e(lane.detail)}</text>')
        if not lane.marks:
            parts.append(f'<text x="{gutter + 8}" y="{y + lane_h / 2 + 4:.1f}" class="nodata">'
                         'no time known</text></g>')
            continue
        first = min(m.start for m in lane.marks)
        last = max(m.end or m.start for m in lane.marks)
        parts.append(f'<rect x="{x(first) - 3:.1f}" y="{y - 3}" width="{x(last) - x(first) + 6:.1f}" '
                     f'height="{lane_h + 6}" rx="6" fill="{lane.colour}" fill-opacity="0.14" '
                     'class="extent"/>')
        for x0, w, tip in _blocks(lane.marks, x):
            parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="{lane_h}" fill="{lane.colour}" '
                         f'class="mark"><title>{_e(lane.label)}: {_e(tip)}</title></rect>')
        if lane.note:
            parts.append(_note_svg(lane.note, x(first) - 3, x(last) + 3, y + lane_h / 2 + 4, gutter,
                                   width - right))
        parts.append('</g>')
    parts.append('</svg>')
    return "".join(parts)


def _blocks(marks: Sequence[_Mark], x: Callable[[datetime], float]) -> list[tuple[float, float, str]]:
    """Marks as drawn rectangles (x, width, tooltip): a partition a block with a pixel of air after
    it; an instant a 4 px tick; marks that would be drawn on top of each other (ticks within a pixel,
    touching partitions narrower than 3 px) merged into one, so a page stays small on long histories."""
    runs: list[list[Any]] = []  # [x0, x1, files, first label, last label, instant]
    for m in marks:
        x0 = x(m.start)
        x1 = x(m.end) if m.end is not None else x0
        if runs:
            last = runs[-1]
            touching = x0 - last[1] < 0.5 if m.end is not None else x0 - last[1] < 1
            if touching and (x1 - x0 < 3 or m.end is None) and last[5] == (m.end is None):
                last[1], last[2], last[4] = max(x1, last[1]), last[2] + m.files, m.label
                continue
        runs.append([x0, x1, m.files, m.label, m.label, m.end is None])
    out = []
    for x0, x1, files, first, last, instant in runs:
        label = first if first == last else f"{first} .. {last}"
        tip = f"{label}: {files} file(s)" if files else label
        if instant:
            out.append((x0 - 2, max(x1 - x0, 0.0) + 4, tip))
        else:
            w = x1 - x0
            out.append((x0, w - 1 if w > 4 else max(w, 2.0), tip))
    return out


def _note_svg(note: str, left: float, right: float, y: float, lo: float, hi: float) -> str:
    """The lane's note on whichever side of its blocks has room for it (about 7 px a character)."""
    need = 7.0 * len(note) + 10
    if hi - right >= need or hi - right >= left - lo:
        return f'<text x="{right + 8:.1f}" y="{y:.1f}" class="note">{_e(note)}</text>'
    return f'<text x="{left - 8:.1f}" y="{y:.1f}" class="note" text-anchor="end">{_e(note)}</text>'


# ---------------------------------------------------------------------------------------------
# the grid of columns by version


def _split_signature(signature: str) -> tuple[str, str]:
    """A leaf signature's `kind [layout]` as (kind, layout)."""
    i = signature.rfind(" [")
    if i < 0 or not signature.endswith("]"):
        return signature, ""
    return signature[:i], signature[i + 2:-1]


def _grid_html(table: TableAudit, slug: str) -> str:
    versions = table.summary.versions
    signatures = [vs.signature for vs in versions]
    current: dict[str, str] | None = None
    if not versions or table.current_schema != versions[-1].version.footer.schema:
        current = {p: describe(t) + ("" if nullable else " not null")
                   for p, (t, nullable) in leaves(table.current_schema).items()}
    paths: dict[str, None] = {}
    for sig in [*signatures, *([current] if current else [])]:
        for p in sig:
            paths.setdefault(p)
    if not paths:
        return '<p class="empty">No columns to show.</p>'
    head = ['<th scope="col" class="colname">column</th>']
    for i, vs in enumerate(versions):
        head.append(_version_head(vs, LANE_COLOURS[i % len(LANE_COLOURS)]))
    if current is not None:
        head.append(f'<th scope="col" class="current"><span class="vlabel">current</span>'
                    f'<span class="vmeta">{_e(table.current_source)}</span></th>')
    rows = []
    for path in paths:
        cells, drifted = [], False
        previous: str | None = None
        for i, sig in enumerate(signatures):
            text = sig.get(path)
            before = f"v{versions[i - 1].version.number}" if i else ""
            cell, changed = _grid_cell(text, previous, i > 0, before)
            drifted |= changed
            cells.append(cell)
            previous = text
        if current is not None:
            now = current.get(path)
            newest = _split_signature(previous)[0] if previous is not None else None
            cell, changed = _grid_cell(now, newest, bool(versions), "the newest version")
            drifted |= changed
            cells.append(cell)
        cls = ' class="has-drift"' if drifted else ""
        rows.append(f'<tr{cls}><th scope="row" class="colname"><code>{_e(path)}</code></th>'
                    f'{"".join(cells)}</tr>')
    return (f'<div class="grid-wrap"><table class="grid" id="grid-{_e(slug)}"><thead><tr>{"".join(head)}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table></div>')


def _version_head(vs: VersionSummary, colour: str) -> str:
    v = vs.version
    seen = v.first_seen or "?"
    if v.last_seen and v.last_seen != v.first_seen:
        seen = f"{v.first_seen or '?'} → {v.last_seen}"
    return (f'<th scope="col"><span class="swatch" style="background:{colour}"></span>'
            f'<span class="vlabel">v{v.number}</span><span class="vmeta">{_e(seen)}</span>'
            f'<span class="vmeta">{len(v.files)} file(s)</span></th>')


def _grid_cell(text: str | None, previous: str | None, has_previous: bool,
               previous_name: str) -> tuple[str, bool]:
    """One cell, and whether it drifted from the previous column's cell."""
    if text is None:
        label = "dropped" if has_previous and previous is not None else "—"
        return f'<td class="absent" title="not in this version">{label}</td>', False
    kind, layout = _split_signature(text)
    layout_html = f'<span class="layout">{_e(layout)}</span>' if layout else ""
    if has_previous and previous is None:
        return (f'<td class="added" title="first appears here"><span class="kind">{_e(kind)}</span>'
                f'{layout_html}<span class="was">new</span></td>'), False
    if has_previous and previous is not None and previous != text:
        before, before_layout = _split_signature(previous)
        was = f"was {before}" if before != kind else f"was [{before_layout}]"
        return (f'<td class="drift" title="{_e(previous_name)}: {_e(previous)}">'
                f'<span class="kind">{_e(kind)}</span>{layout_html}'
                f'<span class="was">{_e(was)}</span></td>'), True
    return f'<td class="same"><span class="kind">{_e(kind)}</span>{layout_html}</td>', False


# ---------------------------------------------------------------------------------------------
# findings


def _findings_html(run: AuditRun, findings: Sequence[Finding], day: date) -> str:
    if not findings:
        return '<p class="empty">No findings.</p>'
    out = []
    for severity, group in severity_groups(findings):
        out.append(f'<h4 class="sevhead sev-{severity}">{_e(severity)} <span>{len(group)}</span></h4>')
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
            badges.append(f'<span class="badge badge-waived">WAIVED · {_e(f.waiver.owner)} · until '
                          f'{_e(f.waiver.expires.isoformat())}</span>')
        else:
            badges.append('<span class="badge badge-expired">waiver expired '
                          f'{_e(f.waiver.expires.isoformat())} · {_e(f.waiver.owner)}</span>')
    column = f'<code class="column">{_e(f.path)}</code>' if f.path else ""
    facts = []
    if f.count or f.files:
        facts.append(f"{f.count:,} file(s)")
    if f.versions:
        facts.append(" ".join(f'<span class="vchip">v{n}</span>' for n in f.versions))
    if f.partition_count:
        facts.append(f"{f.partition_count:,} partition(s)")
    if f.files:
        facts.append(f"e.g. <code>{_e(f.files[0])}</code>")
    details = []
    if f.files:
        more = f" of {f.count:,}" if f.count > len(f.files) else ""
        items = "".join(f"<li><code>{_e(p)}</code></li>" for p in f.files)
        details.append(f'<h5>files ({len(f.files)}{more})</h5><ul class="files">{items}</ul>')
    if f.partitions:
        more = f" of {f.partition_count:,}" if f.partition_count > len(f.partitions) else ""
        items = "".join(f"<li><code>{_e(p)}</code></li>" for p in f.partitions)
        details.append(f'<h5>partitions ({len(f.partitions)}{more})</h5><ul class="files">{items}</ul>')
    if f.evidence:
        items = "".join(f"<tr><th>{_e(label)}</th><td>{_e(value)}</td></tr>" for label, value in f.evidence)
        details.append(f'<h5>evidence</h5><table class="evidence">{items}</table>')
    if f.waiver is not None:
        details.append(f'<h5>waiver</h5><p>{_e(f.waiver.owner)}, until {_e(f.waiver.expires.isoformat())}: '
                       f'{_e(f.waiver.reason)}</p>')
    meta = [f"key <code>{_e(f.key)}</code>"]
    if f.rule:
        meta.append(f"rule {_e(f.rule)}")
    details.append(f'<p class="meta">{" · ".join(meta)}</p>')
    return (f'<article class="{" ".join(classes)}"><header><span class="sev">{_e(f.severity.upper())}</span>'
            f'<span class="code">{_e(f.code)}</span>{column}<span class="where">{_e(f.table)}</span>'
            f'{"".join(badges)}</header><p class="msg">{_inline(f.message)}</p>'
            f'<p class="facts">{" · ".join(facts)}</p>'
            f'<details><summary>files, evidence and rule</summary>{"".join(details)}</details></article>')

