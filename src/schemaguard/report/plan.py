"""What `schemaguard plan` prints: JSON (stable keys), the text a person reads first, and Markdown
for a pull request. Rendering only: the plan is decided in planning/planner.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemaguard.planning.planner import Check, Plan, PlannedOperation, Step, View
from schemaguard.report.console import console as terminal
from schemaguard.report.html.escape import escape
from schemaguard.report.html.page import page

# A step's bar on the timeline of weeks: the colour of its worst entry check (refuted, then unknown,
# then not run); a step whose checks all hold, or that has none, is drawn in the plain colour.
STEP_COLOURS = {"refuted": "#8e2c6a", "unknown": "#b7791f", "not-run": "#7b8794", "proven": "#4e79a7"}


def describe_op(planned: PlannedOperation) -> str:
    """One line for a person: what changes where."""
    op = planned.op
    where = f"{op.old_path} -> {op.path}" if op.old_path else op.path or "(top level)"
    change = " -> ".join(x for x in (op.before, op.after) if x is not None)
    detail = op.detail if op.detail not in ("", op.before, op.after) else ""
    return f"{op.kind.value} {where}" + (f": {change}" if change and op.kind.value != "rename" else "") + (
        f" ({detail})" if detail else "")


def _check_json(c: Check) -> dict[str, Any]:
    return {"kind": c.kind, "subject": c.subject, "command": c.command, "status": c.status,
            "evidence": c.evidence or None}


def _operation_json(o: PlannedOperation) -> dict[str, Any]:
    return {"kind": o.op.kind.value, "path": o.op.path, "old_path": o.op.old_path,
            "before": o.op.before, "after": o.op.after, "detail": o.op.detail,
            "verdicts": o.verdicts, "safe_as_single_edit": o.safe_as_single_edit,
            "strategy": o.strategy, "why": o.why}


def _step_json(s: Step) -> dict[str, Any]:
    return {"kind": s.kind, "title": s.title, "weeks": list(s.weeks),
            "entry_checks": [_check_json(c) for c in s.entry_checks], "sql": list(s.sql)}


def _view_json(v: View) -> dict[str, Any]:
    return {"name": v.name, "version": v.version, "shape": v.shape, "sql": v.sql, "readers": list(v.readers)}


def plan_json(plan: Plan) -> dict[str, Any]:
    return {"table": plan.table, "target": plan.target, "table_format": plan.table_format,
            "operations": [_operation_json(o) for o in plan.operations],
            "mode": plan.mode,
            "deploy_order": plan.deploy_order, "identity": plan.identity, "profiles": list(plan.profiles),
            "safe_as_single_edit": plan.safe_as_single_edit, "strategy": plan.strategy,
            "steps": [_step_json(s) for s in plan.steps], "views": [_view_json(v) for v in plan.views],
            "checks": [_check_json(c) for c in plan.checks],
            "notes": list(plan.notes), "exit_code": plan.exit_code}


def _weeks(s: Step) -> str:
    start, end = s.weeks
    return f"week {start}" if start == end else f"weeks {start}-{end}"


def _verdicts(o: PlannedOperation) -> str:
    return "; ".join(f"{p}: backward {v['backward']}, forward {v['forward']}" for p, v in o.verdicts.items())


def _status(c: Check) -> str:
    return c.status + (f" ({c.evidence})" if c.evidence else "")


def _headline(plan: Plan) -> str:
    verdict = "safe as a single edit" if plan.safe_as_single_edit else "needs a staged plan"
    return f"{verdict}: strategy {plan.strategy}, mode {plan.mode} (deploy order {plan.deploy_order})"


def plan_text(plan: Plan) -> None:
    out = terminal()
    out.print(_headline(plan), soft_wrap=True, markup=False)
    out.print("\noperations", markup=False)
    for o in plan.operations:
        mark = "safe" if o.safe_as_single_edit else o.strategy
        out.print(f"  {describe_op(o)}  [{mark}]: {o.why}", soft_wrap=True, markup=False)
        out.print(f"    {_verdicts(o)}", soft_wrap=True, markup=False)
    out.print("\nsteps", markup=False)
    for i, s in enumerate(plan.steps, start=1):
        out.print(f"  {i}. {_weeks(s):<10} {s.kind:<16} {s.title}", soft_wrap=True, markup=False)
        for c in s.entry_checks:
            out.print(f"{'':<33}needs: {c.kind} {c.subject}: {_status(c)}", soft_wrap=True, markup=False)
        for statement in s.sql:
            out.print(f"{'':<33}{statement};", soft_wrap=True, markup=False)
    if plan.views:
        out.print("\nviews (created at expand, dropped at contract)", markup=False)
        for v in plan.views:
            out.print(f"  {v.name}: version {v.version}, the {v.shape} shape"
                      + (f"; for {', '.join(v.readers)}" if v.readers else ""), soft_wrap=True, markup=False)
    if plan.checks:
        out.print("\nchecks", markup=False)
        for c in plan.checks:
            out.print(f"  {c.kind} {c.subject}: {_status(c)}" + (f"\n    {c.command}" if c.command else ""),
                      soft_wrap=True, markup=False)
    for note in plan.notes:
        out.print(f"note: {note}", soft_wrap=True, markup=False)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def plan_markdown(plan: Plan) -> str:
    lines = [f"## Schema change plan: {_headline(plan)}", "", "| operation | verdicts | strategy | why |",
             "|---|---|---|---|"]
    lines += [f"| {_cell(describe_op(o))} | {_cell(_verdicts(o))} | "
              f"{'safe' if o.safe_as_single_edit else o.strategy} | {_cell(o.why)} |"
              for o in plan.operations]
    lines += ["", "| # | when | step | entry checks |", "|---|---|---|---|"]
    lines += [f"| {i} | {_weeks(s)} | **{s.kind}**: {_cell(s.title)} | "
              f"{_cell('; '.join(f'{c.kind} {c.subject}: {_status(c)}' for c in s.entry_checks)) or '-'} |"
              for i, s in enumerate(plan.steps, start=1)]
    for i, s in enumerate(plan.steps, start=1):
        if s.sql:
            lines += ["", f"Step {i}, **{s.kind}**:", "", "```sql", *(f"{x};" for x in s.sql), "```"]
    lines += [f"- view `{v.name}`: version {v.version}, the {v.shape} shape"
              + (f", for {', '.join(v.readers)}" if v.readers else "") for v in plan.views]
    commands = [c.command for c in plan.checks if c.command]
    if commands:
        lines += ["", "Checks on the data:", "", "```", *commands, "```"]
    lines += [f"\n> {_cell(n)}" for n in plan.notes]
    return "\n".join(lines) + "\n"


def step_state(s: Step) -> str:
    """The worst status among a step's entry checks ("proven" when it has none)."""
    statuses = {c.status for c in s.entry_checks}
    return next((x for x in ("refuted", "unknown", "not-run") if x in statuses), "proven")


def plan_html(plan: Plan) -> str:
    """One self-contained page (`plan_body`)."""
    word = "SAFE" if plan.safe_as_single_edit else "STAGED"
    return page(f"schemaguard plan: {word}" + (f" · {plan.table}" if plan.table else ""), plan_body(plan))


def plan_body(plan: Plan) -> str:
    """The operations, the steps as a timeline of weeks (each bar coloured by its entry checks),
    each step's checks, and the checks with the commands that run them."""
    state = "pass" if plan.safe_as_single_edit else "staged"
    word = "SAFE" if plan.safe_as_single_edit else "STAGED"
    where = f"table <code>{escape(plan.table)}</code> · " if plan.table else ""
    ops = [(f"<code>{escape(describe_op(o))}</code>", escape(_verdicts(o)),
            "safe" if o.safe_as_single_edit else escape(o.strategy), escape(o.why)) for o in plan.operations]
    steps = [(str(i), escape(_weeks(s)), f"<b>{escape(s.kind)}</b>: {escape(s.title)}" + "".join(
              f"<pre class=\"sql\">{escape(x)};</pre>" for x in s.sql),
              "".join(f"<div>{_check_html(c)}</div>" for c in s.entry_checks) or "-")
             for i, s in enumerate(plan.steps, start=1)]
    checks = [(_check_html(c), escape(c.evidence or "-"),
               f"<code>{escape(c.command)}</code>" if c.command else "-") for c in plan.checks]
    sections = [
        _section("operations", "Operations", _rows(("operation", "verdicts", "strategy", "why"), ops)),
        _section("steps", "Steps <small>a timeline of weeks; a bar takes the colour of its worst entry "
                 "check</small>", _legend() + _weeks_svg(plan.steps)
                 + _rows(("#", "when", "step", "entry checks"), steps)),
    ]
    if checks:
        sections.append(_section("checks", "Checks", _rows(("check", "evidence", "command"), checks)))
    if plan.notes:
        sections.append(_section("notes", "Notes",
                                 "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in plan.notes) + "</ul>"))
    return f"""<header class="run" id="plan"><div class="brand">schemaguard plan</div>
<h1><span class="verdict {state}" id="verdict">{word}</span> {escape(_headline(plan))}</h1>
<p class="meta">{where}identity <b>{escape(plan.identity)}</b> · readers {escape(", ".join(plan.profiles))}
 · exit code {plan.exit_code}</p></header>
<main>
{"".join(sections)}
</main>
<footer>schemaguard · a quiet break (values change meaning or land in another column) is a break.</footer>"""


def _section(slug: str, title: str, body: str) -> str:
    return f'<section class="plan" id="{slug}"><h2>{title}</h2>{body}</section>\n'


def _rows(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    """A table of cells already escaped."""
    heads = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="plan"><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>'


def _check_html(c: Check) -> str:
    status = escape(c.status)
    return (f'<span class="pverdict {status}">{status}</span> {escape(c.kind)} '
            f'<code>{escape(c.subject)}</code>')


def _legend() -> str:
    names = {"refuted": "a check refuted", "unknown": "a check unknown", "not-run": "a check not run",
             "proven": "checks proven, or none"}
    keys = "".join(f'<span class="key" style="border-left:4px solid {colour}">{escape(names[state])}</span>'
                   for state, colour in STEP_COLOURS.items())
    return f'<div class="legend">{keys}</div>'


def _weeks_svg(steps: tuple[Step, ...]) -> str:
    """One lane per step, its bar from its first week to its last, weeks as the axis."""
    if not steps:
        return '<p class="empty">No step.</p>'
    width, gutter, right, top, lane_h, gap, axis_h = 1200, 230, 20, 10, 24, 10, 30
    last = max(s.weeks[1] for s in steps)
    week_w = (width - gutter - right) / last
    height = top + len(steps) * (lane_h + gap) + axis_h
    bottom = top + len(steps) * (lane_h + gap) - gap / 2
    parts = [f'<svg class="weeks-svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
             'aria-label="the plan\'s steps over weeks" xmlns="http://www.w3.org/2000/svg"><g class="axis">']
    for week in range(1, last + 1):
        x = gutter + (week - 1) * week_w
        parts.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{bottom:.1f}" class="gridline"/>'
                     f'<text x="{x + week_w / 2:.1f}" y="{bottom + 18:.1f}" class="tick">week {week}</text>')
    parts.append("</g>")
    for i, s in enumerate(steps):
        y = top + i * (lane_h + gap)
        start, end = s.weeks
        x, w = gutter + (start - 1) * week_w, (end - start + 1) * week_w
        state = step_state(s)
        tip = "; ".join(f"{c.kind} {c.subject}: {c.status}" for c in s.entry_checks) or "no entry check"
        mid = y + lane_h / 2
        parts.append(
            f'<g class="step step-{escape(s.kind)} state-{state}">'
            f'<text x="4" y="{mid + 5:.1f}" class="step-label">{i + 1}. {escape(s.kind)}</text>'
            f'<rect x="{x + 1:.1f}" y="{y}" width="{w - 2:.1f}" height="{lane_h}" rx="4" '
            f'fill="{STEP_COLOURS[state]}" class="bar"><title>{escape(s.title)}: {escape(tip)}</title></rect>'
            f'<text x="{x + 8:.1f}" y="{mid + 4:.1f}" class="bar-label">{escape(_weeks(s))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
