"""The `plan` command's work once its inputs are read and checked (`api.plan`): the evidence its
checks need, read once (query logs, Spark event logs, consumer SQL, the table), each check judged,
the plan built, and with a table each step's Spark SQL and the views.

May import: errors, names, paths, model, base, formats, lake, rules, checks, proofs (as every
module of the plan stage). Must not: read its inputs (`inputs.py` does) or render (`report/`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from schemaguard.errors import UsageError
from schemaguard.lake.table import TableRead
from schemaguard.planning.evidence import Evidence, judge, read_evidence
from schemaguard.planning.planner import Plan, PlanRequest, build_plan
from schemaguard.planning.sql import sql_target, with_sql


@dataclass(frozen=True, slots=True)
class SqlAsk:
    """What a plan's Spark SQL is written for (with a table): its name as the user gave it, whether
    that is a catalog name (else a path), the DDL's own statements, the views' name pattern."""

    name: str
    by_name: bool
    statements: tuple[str, ...]
    view_name: str


def table_readers(read: TableRead | None) -> tuple[str, ...]:
    """The profiles a plan judges when none is asked for: Spark's reader, and a Delta or Iceberg
    table's own readers."""
    own = ("delta-read",) if read and read.delta else ("iceberg",) if read and read.iceberg else ()
    return ("spark-read", *own)


def plan_change(request: PlanRequest, evidence: Evidence, logs: Sequence[Path], sql: Path | None,
                query_table: str | None, sql_ask: SqlAsk | None) -> Plan:
    """The plan of `request`, its checks judged on the evidence (`logs` and `sql` read into it once),
    with each step's Spark SQL when `sql_ask` names the table read. A plan the planner cannot make
    (a rename onto a column that exists, ...) is bad input: one line."""
    evidence = read_evidence(evidence, request, logs, sql, query_table)
    try:
        plan = build_plan(request, judge(evidence))
    except ValueError as e:
        raise UsageError(f"plan: {e}") from None
    if sql_ask is None or evidence.table is None:
        return plan
    used = {c: u.readers for c, u in evidence.usage.columns.items()} if evidence.usage else {}
    target = sql_target(evidence.table, sql_ask.name, sql_ask.by_name, sql_ask.statements, used,
                        sql_ask.view_name)
    return with_sql(plan, request.old, request.new, target)
