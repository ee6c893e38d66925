"""A migration's DDL linted for CI, statement by statement with its line, in the categories Atlas
users know, judged the way this project judges a change:

- DESTRUCTIVE: the statement drops a column; its values are gone for every reader.
- BACKWARD_INCOMPATIBLE: a reader profile breaks reading across the change, loudly (the read
  fails) or quietly (values change meaning or read as null), per direction.
- DATA_DEPENDENT: the statement is safe only if a proof holds on the data (no nulls before a
  tightening, values fit a narrower type ...); the proof's status from the plan.
- ENGINE_REFUSES: the table's engine rejects the statement as written: delta-spark and Iceberg's
  Spark catalog refuse `SET NOT NULL` on an existing nullable column ("Cannot change nullable
  column to non-nullable"); delta-spark changes a type only under type widening, and drops or
  renames a column only under column mapping (Delta PROTOCOL.md).
- SAFE: none of the above; the statement is safe as a single edit.

The DDL passes (exit 0) only when the whole change is safe as a single edit (`Plan.exit_code`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from schemaguard.base import Severity
from schemaguard.planning.ddl import DdlChange, Statement
from schemaguard.planning.planner import Plan, PlannedOperation, operations
from schemaguard.planning.treatments import DATA_PROOFS, treatment
from schemaguard.rules.changes import Operation, OpKind


class LintCode(StrEnum):
    """A lint finding's category, in the order of `LINT_CODES`, which says what each means."""

    DESTRUCTIVE = "DESTRUCTIVE"
    BACKWARD_INCOMPATIBLE = "BACKWARD_INCOMPATIBLE"
    DATA_DEPENDENT = "DATA_DEPENDENT"
    ENGINE_REFUSES = "ENGINE_REFUSES"
    SAFE = "SAFE"


LINT_CODES: dict[LintCode, str] = {
    LintCode.DESTRUCTIVE: "drops data: the column's values are gone for every reader",
    LintCode.BACKWARD_INCOMPATIBLE: "a reader breaks across the change, loudly or quietly",
    LintCode.DATA_DEPENDENT: "safe only if a proof holds on the data",
    LintCode.ENGINE_REFUSES: "the table's engine rejects the statement as written",
    LintCode.SAFE: "safe as a single edit",
}


@dataclass(frozen=True, slots=True)
class LintFinding:
    line: int
    statement: str
    code: LintCode
    severity: Severity
    message: str


@dataclass(frozen=True, slots=True)
class Lint:
    source: str  # the DDL file (or --ddl)
    table: str | None
    findings: tuple[LintFinding, ...]
    safe: bool  # the whole change is safe as a single edit

    @property
    def exit_code(self) -> int:
        return 0 if self.safe else 1


def lint(change: DdlChange, plan: Plan, source: str, table_format: str | None = None,
         configuration: Mapping[str, str] | None = None) -> Lint:
    """Each statement's findings; `configuration` is the table's properties (a Delta table's)."""
    planned = {(o.op.kind, o.op.path): o for o in plan.operations}
    found: list[LintFinding] = []
    for st in change.statements:
        mine = [*_refusals(st, table_format, dict(configuration or {}))]
        for op in operations(st.before, st.after, plan.identity, st.renames):
            mine += _judged(st, op, planned.get((op.kind, op.path)), plan)
        if not any(f.severity != "info" for f in mine):
            mine.append(_finding(st, LintCode.SAFE, "info", LINT_CODES[LintCode.SAFE]))
        found += mine
    refused = any(f.code == LintCode.ENGINE_REFUSES for f in found)
    return Lint(source, plan.table, tuple(found), plan.safe_as_single_edit and not refused)


def _finding(st: Statement, code: LintCode, severity: Severity, message: str) -> LintFinding:
    return LintFinding(st.line, st.text, code, severity, message)


def _judged(st: Statement, op: Operation, p: PlannedOperation | None, plan: Plan) -> list[LintFinding]:
    """One operation of a statement, as the plan judged it (None: a later statement undoes it)."""
    out = []
    where = op.old_path or op.path
    if op.kind == OpKind.DROP_FIELD:
        out.append(_finding(st, LintCode.DESTRUCTIVE, "error", f"drops {where}: its values are gone; old "
                            "readers read nulls where they read it"))
    if p is None:
        return out
    for profile, by in p.verdicts.items():
        for direction, word in by.items():
            if word != "ok" and not p.safe_as_single_edit:
                loud = word == "breaks"
                kind = "a loud" if loud else "a quiet"
                out.append(_finding(st, LintCode.BACKWARD_INCOMPATIBLE, "error" if loud else "warning",
                                    f"{profile} {direction}: {kind} break at {where} ({p.why}); ship it as "
                                    f"{p.strategy}"))
    checks = {c.key: c for c in plan.checks}
    for need in treatment(op, plan.identity).needs:
        if need.kind not in DATA_PROOFS:
            continue
        check = next((c for (kind, _), c in checks.items() if kind == need.kind and where in c.subject), None)
        status = check.status if check else "not-run"
        subject = check.subject if check else where
        severity: Severity = "info" if status == "proven" else "error" if status == "refuted" else "warning"
        out.append(_finding(st, LintCode.DATA_DEPENDENT, severity,
                            f"depends on the proof {need.kind} {subject}: {status}"
                            + (f" ({check.evidence})" if check and check.evidence else "")))
    return out


def _refusals(st: Statement, table_format: str | None, configuration: dict[str, str]) -> list[LintFinding]:
    """What the table's engine rejects as written (checked against delta-spark in the tests)."""
    props = {**configuration, **dict(st.properties)}
    out = []
    if st.kind == "set-not-null" and table_format in ("delta", "iceberg") and _tightens(st):
        fix = "add CHECK (c IS NOT NULL) instead" if table_format == "delta" else \
            "make it required with pyiceberg once the not-null proof holds"
        out.append(_finding(st, LintCode.ENGINE_REFUSES, "error", f"{table_format} refuses SET NOT NULL on "
                            f"an existing nullable column: {fix}"))
    if table_format == "delta" and st.kind == "alter-type" and \
            props.get("delta.enableTypeWidening", "").lower() != "true":
        out.append(_finding(st, LintCode.ENGINE_REFUSES, "error",
                            "delta-spark changes a column's type only under type widening: "
                            "SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true') first"))
    if table_format == "delta" and st.kind in ("drop-columns", "rename-column") and \
            props.get("delta.columnMapping.mode", "none") == "none":
        out.append(_finding(st, LintCode.ENGINE_REFUSES, "error",
                            "delta-spark drops or renames a column only under column mapping: "
                            "SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', ...) first; readers of "
                            "Delta reader version 1 can then no longer read the table"))
    return out


def _tightens(st: Statement) -> bool:
    """Whether a SET NOT NULL meets a column that is nullable now."""
    before = {f.name.lower(): f.nullable for f in st.before.fields}
    after = {f.name.lower(): f.nullable for f in st.after.fields}
    return any(before.get(name) and not nullable for name, nullable in after.items())
