"""Gated migration steps: `schemaguard migrate start|step|complete|rollback|status --plan P`.

A step runs only when every one of its entry checks is proven on the data as it is now (the data
proofs run again; the checks only the plan could judge count as the plan recorded them). Without
`--apply` nothing is written anywhere: the command says what would run. With `--apply` the step's
Spark SQL runs on the one table the plan names (and its views), its exit checks are read back,
and the step is recorded in the catalog's `migrations` table (plan id, step, status, the table
version before and after, the checks' verdicts). A rerun of an applied step does nothing.

`start` is the `expand` step; `complete` the `column-mapping` and `contract` steps; `rollback`
undoes the expand phase: it drops the views, then the added columns where the table allows a drop
(Delta column mapping), else restores the table version recorded before `expand`, saying first
what that discards.

Every statement is checked against the plan before anything runs: it may alter, update or merge
into the plan's table, and create or drop the plan's views; anything else is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemaguard.config import CatalogConfig
from schemaguard.errors import UsageError, first_line
from schemaguard.plan.gate import plan_step, read_plan
from schemaguard.plan.planner import DATA_PROOFS
from schemaguard.proofs import EXIT_CODES, Proof, Verdict, overall

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from schemaguard.lake.iceberg import CatalogRef

ACTIONS = ("start", "step", "complete", "rollback", "status")
ROLLBACK = "rollback"
ADDED = ("rename", "add_optional_field", "add_required_field")  # operations whose expand adds a column


class MigrationError(UsageError):
    """A step that cannot run as asked (a statement outside the plan's table, a failed statement)."""


@dataclass(frozen=True, slots=True)
class Migration:
    """A plan written with `--table` (so its steps carry SQL), and its id: a digest of what it
    changes and how, so the same plan written again is the same migration."""

    doc: dict[str, Any]
    plan_id: str
    table: str  # as the plan was given it: a path or a catalog name
    target: str  # as its SQL names it
    table_format: str
    views: tuple[str, ...]

    @property
    def operations(self) -> list[dict[str, Any]]:
        """The plan's operations as its JSON holds them (`kind`, `path`, `old_path`, `after`)."""
        return [o for o in self.doc.get("operations", []) if isinstance(o, dict)]


@dataclass(frozen=True, slots=True)
class StepRun:
    """What one step did: `applied`, `already-applied`, `would-apply` (no --apply), `refused` (an
    entry check not proven), `exit-check-failed`."""

    step: str
    status: str
    verdict: Verdict
    checks: tuple[tuple[str, str, str, str], ...]  # (kind, subject, verdict, evidence)
    statements: tuple[str, ...]
    version_before: int | None = None
    version_after: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        if self.status in ("applied", "already-applied", "would-apply"):
            return 0
        return EXIT_CODES[self.verdict] if self.verdict != "proven" else 1


def load_migration(plan_file: Path) -> Migration:
    doc = read_plan(plan_file)
    table, target, fmt = doc.get("table"), doc.get("target"), doc.get("table_format")
    if not isinstance(table, str) or not isinstance(target, str) or not isinstance(fmt, str):
        raise UsageError(f"--plan {plan_file}: written without --table, so its steps carry no SQL to run")
    what = {"table": table, "target": target,
            "operations": [[o.get(k) for k in ("kind", "path", "old_path", "after")]
                           for o in doc.get("operations", [])],
            "steps": [[s.get("kind"), s.get("sql")] for s in doc["steps"]]}
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]
    views = tuple(str(v["name"]) for v in doc.get("views", []) if isinstance(v, dict))
    return Migration(doc, digest, table, target, fmt, views)


def steps_of(action: str, m: Migration, step: str | None) -> list[str]:
    """The steps an action runs, in the plan's order."""
    kinds = [str(s["kind"]) for s in m.doc["steps"]]
    if action == "step":
        if step is None:
            raise UsageError("migrate step: give --step KIND")
        return [step]
    wanted = {"start": ("expand",), "complete": ("column-mapping", "contract")}[action]
    found = [k for k in kinds if k in wanted]
    if not found:
        raise UsageError(f"migrate {action}: the plan has no {' or '.join(wanted)} step (its steps: "
                         f"{', '.join(kinds)})")
    return found


# ---------------------------------------------------------------------------------------------
# The guard: every statement writes only the plan's table and views


def guard(statements: Sequence[str], m: Migration) -> None:
    """Refuse, before anything runs, a statement that writes anything but the plan's table or views."""
    allowed_tables, allowed_views = {_norm(m.target)}, {_norm(v) for v in m.views}
    for statement in statements:
        kind, name = written(statement)
        ok = (name in allowed_tables) if kind == "table" else (name in allowed_views)
        if not ok:
            raise MigrationError(f"the step's statement writes {name} ({kind}), which the plan does not "
                                 f"name: {statement[:80]}")


def written(statement: str) -> tuple[str, str]:
    """What one statement writes: ("table" | "view", its normalised name)."""
    import sqlglot
    from sqlglot import exp

    from schemaguard.errors import quiet_logger

    restore = statement.upper().rfind(" TO VERSION AS OF ")
    if statement.upper().startswith("RESTORE TABLE ") and restore > 0:  # Delta's own: sqlglot has no RESTORE
        return "table", _norm(statement[len("RESTORE TABLE "):restore])
    try:
        with quiet_logger("sqlglot"):
            tree = sqlglot.parse_one(statement, read="spark")
    except sqlglot.errors.ParseError:
        raise MigrationError(f"a step's statement does not parse as Spark SQL: {statement[:80]}") from None
    if isinstance(tree, exp.Alter | exp.Update | exp.Merge):
        return "table", _norm(tree.this.sql(dialect="spark"))
    if isinstance(tree, exp.Create | exp.Drop) and str(tree.args.get("kind", "")).upper() == "VIEW":
        named = tree.this if isinstance(tree, exp.Create) else (tree.args.get("tables") or [None])[0]
        if isinstance(named, exp.Table):  # a DROP names it among `tables`
            return "view", _norm(named.sql(dialect="spark"))
    raise MigrationError(f"a step's statement is not one a migration step runs: {statement[:80]}")


def _norm(name: str) -> str:
    return name.replace("`", "").strip().lower()


# ---------------------------------------------------------------------------------------------
# Running a step


def run_step(m: Migration, kind: str, spark: SparkSession, catalog: CatalogConfig, apply: bool,
             read_table: Callable[[], Any], spark_factory: Callable[[], Any],
             iceberg: CatalogRef | None = None) -> StepRun:
    """One step, gated: entry checks now, then (with `apply`) its SQL, its exit checks, its record.
    `read_table` reads the table from disk as it is now (for the data proofs). An Iceberg table
    of an `iceberg` catalog is changed through pyiceberg's `update_schema()`."""
    from schemaguard.report.catalog import migration_rows

    step = plan_step(m.doc, kind)
    statements = tuple(str(s) for s in step.get("sql") or ())
    guard(statements, m)
    if kind in _applied(migration_rows(spark, catalog, m.plan_id)):
        return StepRun(kind, "already-applied", "proven", (), statements)
    checks = entry_checks(step, read_table, spark_factory)
    verdict = overall(v for _, _, v, _ in checks)  # type: ignore[misc]
    if verdict != "proven" or not apply:
        run = StepRun(kind, "would-apply" if verdict == "proven" else "refused", verdict, checks, statements)
        if apply:
            _record(spark, catalog, m, run, datetime.now(UTC))
        return run
    started = datetime.now(UTC)
    if m.table_format == "iceberg":
        return _iceberg_step(m, kind, spark, catalog, iceberg, checks, statements, started)
    before = table_version(spark, m)
    for statement in statements:
        try:
            spark.sql(statement)
        except Exception as e:
            failed = StepRun(kind, "failed", "refuted", checks, statements, before, table_version(spark, m),
                             (f"{statement[:80]}: {first_line(e)}",))
            _record(spark, catalog, m, failed, started)
            raise MigrationError(f"step {kind}: {statement[:80]}: {first_line(e)}") from None
    after = table_version(spark, m)
    problems = exit_problems(m, kind, spark)
    run = StepRun(kind, "exit-check-failed" if problems else "applied", "refuted" if problems else "proven",
                  checks, statements, before, after, tuple(problems))
    _record(spark, catalog, m, run, started)
    return run


# Iceberg through pyiceberg: the schema operations a metadata step is made of (Iceberg's
# SchemaUpdate: rename, delete, make optional, widen to an allowed promotion).
ICEBERG_PROMOTIONS = {"int64": "long", "float64": "double"}  # a widening's target, as pyiceberg names it


def _iceberg_step(m: Migration, kind: str, spark: SparkSession, catalog: CatalogConfig,
                  ref: CatalogRef | None, checks: tuple[tuple[str, str, str, str], ...],
                  statements: tuple[str, ...], started: datetime) -> StepRun:
    """A metadata step of an Iceberg catalog table, committed with pyiceberg; its record as any."""
    from schemaguard.lake.iceberg import load_from_catalog
    if ref is None:
        raise MigrationError("an Iceberg table is changed through its catalog: give --catalog or "
                             "--catalog-uri")
    if any(written(x)[0] == "view" or not x.upper().startswith("ALTER TABLE") for x in statements):
        raise MigrationError(f"step {kind} on an Iceberg table writes data or views: run its SQL with Spark "
                             "and Iceberg's runtime (the plan holds it); --apply commits schema steps only")
    table = load_from_catalog(ref, m.table)
    before = table.metadata.current_schema_id
    ops = m.operations
    with table.update_schema() as update:
        for op in ops if statements else ():
            _iceberg_op(update, op)
    table = load_from_catalog(ref, m.table)
    run = StepRun(kind, "applied", "proven", checks, statements, before, table.metadata.current_schema_id,
                  ("committed with pyiceberg's update_schema()",))
    _record(spark, catalog, m, run, started)
    return run


def _iceberg_op(update: Any, op: dict[str, Any]) -> None:
    from pyiceberg.types import DecimalType, DoubleType, LongType

    kind, path, old = str(op["kind"]), str(op["path"]), op.get("old_path")
    if kind == "rename" and old:
        update.rename_column(tuple(str(old).split(".")), path.rsplit(".", 1)[-1])
    elif kind == "drop_field":
        update.delete_column(tuple(path.split(".")))
    elif kind == "nullability_relaxed":
        update.make_column_optional(tuple(path.split(".")))
    elif kind == "widen_type" and str(op.get("after")) in ICEBERG_PROMOTIONS:
        update.update_column(tuple(path.split(".")), {"long": LongType(), "double": DoubleType()}[
            ICEBERG_PROMOTIONS[str(op["after"])]])
    elif kind == "widen_type" and str(op.get("after", "")).startswith("decimal("):
        precision, scale = str(op["after"])[len("decimal("):-1].split(",")
        update.update_column(tuple(path.split(".")), DecimalType(int(precision), int(scale)))
    else:
        raise MigrationError(f"{kind} {path}: not a metadata change pyiceberg commits here; run the step's "
                             "SQL with Spark and Iceberg's runtime")


def _applied(rows: Sequence[dict[str, Any]]) -> set[str]:
    """Steps applied since the last rollback."""
    done: set[str] = set()
    for r in rows:
        if r["step"] == ROLLBACK and r["status"] == "applied":
            done.clear()
        elif r["status"] == "applied":
            done.add(r["step"])
    return done


def entry_checks(step: dict[str, Any], read_table: Callable[[], Any],
                 spark_factory: Callable[[], Any]) -> tuple[tuple[str, str, str, str], ...]:
    """Each entry check's verdict now: data proofs run on the table as it is; the others as the plan
    recorded them (a check never run counts as unknown)."""
    from schemaguard.proofs.run import run_proofs

    checks = [c for c in step.get("entry_checks") or () if isinstance(c, dict)]
    data = [c for c in checks if c.get("kind") in DATA_PROOFS]
    results = run_proofs(read_table(), [_proof(str(c["kind"]), str(c["subject"])) for c in data],
                         spark=spark_factory) if data else []
    out: list[tuple[str, str, str, str]] = [
        (str(c["kind"]), str(c["subject"]), r.verdict, r.why or "")
        for c, r in zip(data, results, strict=True)]
    for c in checks:
        if c.get("kind") not in DATA_PROOFS:
            recorded = str(c.get("status"))
            out.append((str(c["kind"]), str(c["subject"]), recorded if recorded in ("proven", "refuted")
                        else "unknown", str(c.get("evidence") or "")))
    return tuple(out)


def _proof(kind: str, subject: str) -> Proof:
    if kind == "fits":
        column, _, target = subject.partition(":")
        return Proof("fits", column, target=target)
    return Proof(kind, subject)  # type: ignore[arg-type]


def table_version(spark: SparkSession, m: Migration) -> int | None:
    """The table's version now: Delta's latest commit (None for other formats)."""
    if m.table_format != "delta":
        return None
    rows = spark.sql(f"DESCRIBE HISTORY {m.target} LIMIT 1").collect()
    return int(rows[0]["version"]) if rows else None


def exit_problems(m: Migration, kind: str, spark: SparkSession) -> list[str]:
    """What the step should have left and did not: added columns and views after `expand`, the old
    columns and views gone after `contract`."""
    columns = {f.name.lower() for f in spark.table(m.target).schema.fields}
    ops = m.operations
    problems = []
    if kind == "expand":
        added = [str(o["path"]) for o in ops if o.get("kind") in ADDED]
        problems += [f"{c} is not in the table" for c in added if c.split(".")[0].lower() not in columns]
        problems += [f"view {v} does not exist" for v in m.views if not spark.catalog.tableExists(v)]
    if kind == "contract":
        gone = [str(o.get("old_path") or o["path"]) for o in ops if o.get("kind") in ("rename", "drop_field")]
        problems += [f"{c} is still in the table" for c in gone if "." not in c and c.lower() in columns]
        problems += [f"view {v} still exists" for v in m.views if spark.catalog.tableExists(v)]
    return problems


def _record(spark: SparkSession, catalog: CatalogConfig, m: Migration, run: StepRun,
            started: datetime) -> None:
    """The step's row in the catalog's `migrations` table."""
    from schemaguard.report.catalog import record_migration

    record_migration(spark, catalog, {
        "plan_id": m.plan_id, "table_name": m.table, "step": run.step, "status": run.status,
        "version_before": run.version_before, "version_after": run.version_after,
        "checks_json": json.dumps([dict(zip(("kind", "subject", "verdict", "evidence"), c, strict=True))
                                   for c in run.checks]),
        "sql_json": json.dumps(list(run.statements)), "started_at": started,
        "finished_at": datetime.now(UTC)})


# ---------------------------------------------------------------------------------------------
# Rollback and status


def rollback_statements(m: Migration, spark: SparkSession, catalog: CatalogConfig) -> tuple[list[str], str]:
    """What undoes the expand phase, and what it discards, said before it runs."""
    from schemaguard.report.catalog import migration_rows

    done = _applied(migration_rows(spark, catalog, m.plan_id))
    if "expand" not in done:
        return [], "nothing to roll back: expand is not applied"
    if "contract" in done:
        raise MigrationError("contract is applied: its dropped columns are gone, a rollback undoes only "
                             "the expand phase")
    drops = [f"DROP VIEW IF EXISTS {v}" for v in m.views]
    ops = m.operations
    added = [str(o["path"]) for o in ops if o.get("kind") in ADDED]
    mode = _property(spark, m.target, "delta.columnMapping.mode") if m.table_format == "delta" else "id"
    if not added or (mode or "none") != "none":
        columns = ", ".join(".".join(f"`{p}`" for p in c.split(".")) for c in added)
        return drops + ([f"ALTER TABLE {m.target} DROP COLUMNS ({columns})"] if added else []), (
            f"drops the views and the added columns ({', '.join(added) or 'none'}); rows written since stay")
    rows = migration_rows(spark, catalog, m.plan_id)
    before = next(r["version_before"] for r in reversed(rows)
                  if r["step"] == "expand" and r["status"] == "applied")
    now = table_version(spark, m)
    lost = (now - before) if now is not None else 0
    return [*drops, f"RESTORE TABLE {m.target} TO VERSION AS OF {before}"], (
        f"restores version {before}: discards the {lost} commit(s) after it, writes included (Delta "
        "cannot drop a column without column mapping)")


def _property(spark: SparkSession, target: str, key: str) -> str | None:
    rows = spark.sql(f"SHOW TBLPROPERTIES {target}").collect()
    return next((str(r["value"]) for r in rows if r["key"] == key), None)


def run_rollback(m: Migration, spark: SparkSession, catalog: CatalogConfig, apply: bool) -> StepRun:
    statements, what = rollback_statements(m, spark, catalog)
    guard(statements, m)
    if not statements or not apply:
        return StepRun(ROLLBACK, "would-apply", "proven", (), tuple(statements), notes=(what,))
    started, before = datetime.now(UTC), table_version(spark, m)
    for statement in statements:
        try:
            spark.sql(statement)
        except Exception as e:
            raise MigrationError(f"rollback: {statement[:80]}: {first_line(e)}") from None
    run = StepRun(ROLLBACK, "applied", "proven", (), tuple(statements), before, table_version(spark, m),
                  (what,))
    _record(spark, catalog, m, run, started)
    return run


def status(m: Migration, spark: SparkSession, catalog: CatalogConfig) -> list[tuple[str, str]]:
    """Each step of the plan and its latest recorded status (`pending` when never run,
    `rolled-back` when applied before the last rollback)."""
    from schemaguard.report.catalog import migration_rows

    rows = migration_rows(spark, catalog, m.plan_id)
    done = _applied(rows)
    latest = {r["step"]: r["status"] for r in rows}
    undone = {k: "rolled-back" for k, v in latest.items() if v == "applied" and k not in done}
    return [(str(s["kind"]), {**latest, **undone}.get(str(s["kind"]), "pending")) for s in m.doc["steps"]]
