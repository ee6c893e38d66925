"""Every column of a table by schema version, drawn for the audit page (report.html.page) from the
checks' summary: a row a column path, a column a version (and the current schema where it differs
from the newest), each cell its type and Parquet layout, drift marked against the cell before. It may
import checks/summary, proofs/audit_run, the model's leaves, formats.notation, report.html.escape and
the timeline's lane colours; it reads no file and judges nothing beyond "differs from the cell
before"."""

from __future__ import annotations

from schemaguard.checks.summary import VersionSummary
from schemaguard.formats.notation import describe
from schemaguard.model import leaves
from schemaguard.proofs.audit_run import TableAudit
from schemaguard.report.html.escape import escape
from schemaguard.report.html.timeline import LANE_COLOURS


def _split_signature(signature: str) -> tuple[str, str]:
    """A leaf signature's `kind [layout]` as (kind, layout)."""
    i = signature.rfind(" [")
    if i < 0 or not signature.endswith("]"):
        return signature, ""
    return signature[:i], signature[i + 2:-1]


def grid_html(table: TableAudit, slug: str) -> str:
    """The table's columns by version as an HTML table, `grid-SLUG` by id."""
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
                    f'<span class="vmeta">{escape(table.current_source)}</span></th>')
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
        rows.append(f'<tr{cls}><th scope="row" class="colname"><code>{escape(path)}</code></th>'
                    f'{"".join(cells)}</tr>')
    return (f'<div class="grid-wrap"><table class="grid" id="grid-{escape(slug)}"><thead>'
            f'<tr>{"".join(head)}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def _version_head(vs: VersionSummary, colour: str) -> str:
    v = vs.version
    seen = v.first_seen or "?"
    if v.last_seen and v.last_seen != v.first_seen:
        seen = f"{v.first_seen or '?'} → {v.last_seen}"
    return (f'<th scope="col"><span class="swatch" style="background:{colour}"></span>'
            f'<span class="vlabel">v{v.number}</span><span class="vmeta">{escape(seen)}</span>'
            f'<span class="vmeta">{len(v.files)} file(s)</span></th>')


def _grid_cell(text: str | None, previous: str | None, has_previous: bool,
               previous_name: str) -> tuple[str, bool]:
    """One cell, and whether it drifted from the previous column's cell."""
    if text is None:
        label = "dropped" if has_previous and previous is not None else "—"
        return f'<td class="absent" title="not in this version">{label}</td>', False
    kind, layout = _split_signature(text)
    layout_html = f'<span class="layout">{escape(layout)}</span>' if layout else ""
    if has_previous and previous is None:
        return (f'<td class="added" title="first appears here"><span class="kind">{escape(kind)}</span>'
                f'{layout_html}<span class="was">new</span></td>'), False
    if has_previous and previous is not None and previous != text:
        before, before_layout = _split_signature(previous)
        was = f"was {before}" if before != kind else f"was [{before_layout}]"
        return (f'<td class="drift" title="{escape(previous_name)}: {escape(previous)}">'
                f'<span class="kind">{escape(kind)}</span>{layout_html}'
                f'<span class="was">{escape(was)}</span></td>'), True
    return f'<td class="same"><span class="kind">{escape(kind)}</span>{layout_html}</td>', False
