"""What `schemaguard plan` prints: JSON (stable keys), the text a person reads first, and Markdown
for a pull request. Rendering only: the plan is decided in plan/planner.py."""

from __future__ import annotations

from typing import Any

from schemaguard.plan.planner import Check, Plan, PlannedOperation, Step
from schemaguard.report.console import console as terminal


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
            "entry_checks": [_check_json(c) for c in s.entry_checks]}


def plan_json(plan: Plan) -> dict[str, Any]:
    return {"table": plan.table, "operations": [_operation_json(o) for o in plan.operations],
            "mode": plan.mode,
            "deploy_order": plan.deploy_order, "identity": plan.identity, "profiles": list(plan.profiles),
            "safe_as_single_edit": plan.safe_as_single_edit, "strategy": plan.strategy,
            "steps": [_step_json(s) for s in plan.steps], "checks": [_check_json(c) for c in plan.checks],
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
    commands = [c.command for c in plan.checks if c.command]
    if commands:
        lines += ["", "Checks on the data:", "", "```", *commands, "```"]
    lines += [f"\n> {_cell(n)}" for n in plan.notes]
    return "\n".join(lines) + "\n"
