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

A step killed at any moment can be finished or undone. Before its first statement the step is
recorded `started` with the table's version; each statement either is idempotent (views made
with OR REPLACE or dropped IF EXISTS, a backfill that fills only rows still missing the value)
or is skipped when the table already shows its effect (a column added, dropped or renamed, a
constraint or table property in place). So a rerun of a `started` step finishes it, keeping the
version recorded before its first statement, and `rollback` undoes a started expand as an
applied one. Each Delta statement commits atomically: the table is at the version before or
after each statement, never inside one.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemaguard.config import CatalogConfig
from schemaguard.errors import UsageError, first_line
from schemaguard.formats.spark_ddl import column_ref
from schemaguard.model import fields_of
from schemaguard.paths import join, parent_and_name, parts
from schemaguard.planning.gate import plan_step, read_plan
from schemaguard.planning.statements import log_only, norm, parsed, restored, written
from schemaguard.planning.treatments import DATA_PROOFS
from schemaguard.proofs import EXIT_CODES, Verdict, overall, proof_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from schemaguard.formats.delta import DeltaLog
    from schemaguard.lake.iceberg import CatalogRef

ACTIONS = ("start", "step", "complete", "rollback", "status")
ROLLBACK = "rollback"
# What a step's records may say: written before its first statement, and after its last.
STARTED, APPLIED, FAILED = "started", "applied", "failed"
WROTE = (STARTED, APPLIED, FAILED, "exit-check-failed")  # a step that may have changed the table
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
    location: str | None = None  # where the table's files are, once known (its log's commits count versions)

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
    took: tuple[float | None, ...] = ()  # seconds each statement ran in Spark (None: skipped, done)

    @property
    def exit_code(self) -> int:
        if self.status in ("applied", "already-applied", "would-apply"):
            return 0
        return EXIT_CODES[self.verdict] if self.verdict != "proven" else 1


def load_migration(plan_file: Path) -> Migration:
    doc = read_plan(plan_file)
    table, target, fmt = doc.get("table"), doc.get("target"), doc.get("table_format")
    if isinstance(table, str) and not isinstance(target, str):
        raise UsageError(f"--plan {plan_file}: its table {table} is a Parquet folder, which has no DDL: its "
                         "steps are made by its writers and readers, and carry no SQL to run")
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


def touches_rows(m: Migration, kinds: Sequence[str]) -> bool:
    """Whether running these steps reads or writes the table's rows through Spark: a data proof
    among their entry checks, or a statement that is not `log_only`. The others (and a rollback)
    are metadata work: a command of them starts a brief JVM."""
    steps = [plan_step(m.doc, kind) for kind in kinds]
    return any(c.get("kind") in DATA_PROOFS for s in steps for c in s.get("entry_checks") or ()
               if isinstance(c, dict)) or not all(log_only(str(x)) for s in steps for x in s.get("sql") or ())


def brief_jvm(m: Migration, kinds: Sequence[str]) -> bool:
    """Whether a command running these steps starts a brief JVM (`spark.BRIEF_JIT`): metadata
    work, or rows of a Delta table at `m.location` whose files hold at most `spark.BRIEF_BYTES`
    (its log says; measured: a backfill's UPDATE of 2M rows, 16 MiB, 14.8 s brief against 18.0 s,
    six paired runs). Any other table keeps the full JIT."""
    from schemaguard.formats.io import SchemaLoadError
    from schemaguard.spark import brief_for

    if not touches_rows(m, kinds):
        return True
    if m.table_format != "delta" or m.location is None:
        return False
    try:
        return brief_for(sum(f.size for f in delta_log_at(m.location).files))
    except SchemaLoadError:
        return False  # the step's own read of the table says what is wrong with it


# ---------------------------------------------------------------------------------------------
# The guard: every statement writes only the plan's table and views


def guard(statements: Sequence[str], m: Migration) -> None:
    """Refuse, before anything runs, a statement that writes anything but the plan's table or views."""
    allowed_tables, allowed_views = {norm(m.target)}, {norm(v) for v in m.views}
    for statement in statements:
        kind, name = written(statement)
        ok = (name in allowed_tables) if kind == "table" else (name in allowed_views)
        if not ok:
            raise MigrationError(f"the step's statement writes {name} ({kind}), which the plan does not "
                                 f"name: {statement[:80]}")


# ---------------------------------------------------------------------------------------------
# What the table shows already: a statement whose effect is there is not run again


@dataclass(frozen=True, slots=True)
class TableNow:
    """The table as it is: its columns (lower-cased paths) and table properties."""

    columns: frozenset[str]
    properties: dict[str, str]

    def has(self, path: str) -> bool:
        return path.lower() in self.columns


def delta_log_at(location: str) -> DeltaLog:
    """The Delta table at `location` as its log says it is now."""
    from schemaguard.formats.delta import read_delta_log
    from schemaguard.lake.discover import resolve

    filesystem, root, _ = resolve(location)
    return read_delta_log(filesystem, f"{root.rstrip('/')}/_delta_log", location)


def table_now(spark: SparkSession, m: Migration) -> TableNow:
    """The table's columns and properties now: from its Delta log where its place is known (no
    Spark job), else from Spark."""
    if m.location is not None and m.table_format == "delta":
        log = delta_log_at(m.location)
        schema, properties = log.current.schema, dict(log.configuration)
    else:
        from schemaguard.formats.spark import schema_from_spark_json

        schema = schema_from_spark_json(spark.table(m.target).schema.json())
        rows = spark.sql(f"SHOW TBLPROPERTIES {m.target}").collect() if m.table_format == "delta" else []
        properties = {str(r["key"]): str(r["value"]) for r in rows}
    return TableNow(frozenset(p.lower() for p, _ in fields_of(schema)), properties)


def already_done(statement: str, table: Callable[[], TableNow]) -> bool:
    """Whether the table already shows what `statement` does (a non-idempotent DDL statement a
    killed run committed). Views, updates and the other idempotent statements always run, and
    only an ALTER reads the table (`table()`)."""
    from sqlglot import exp

    from schemaguard.planning.ddl import column_path, dropped_paths

    if restored(statement) is not None:
        return False  # restoring the same version again leaves the same table
    tree = parsed(statement)
    if not isinstance(tree, exp.Alter):
        return False
    action = (tree.args.get("actions") or [None])[0]
    now = table()
    if isinstance(action, exp.Schema | exp.ColumnDef):  # ADD COLUMNS
        defs = action.expressions if isinstance(action, exp.Schema) else [action]
        return all(now.has(column_path(d.this)) for d in defs)
    if isinstance(action, exp.Drop) and action.args.get("kind") in ("COLUMN", "COLUMNS"):
        return not any(now.has(path) for path in dropped_paths(action))
    if isinstance(action, exp.RenameColumn):
        old = column_path(action.this)
        return not now.has(old) and now.has(join(parent_and_name(old)[0], action.args["to"].name))
    if isinstance(action, exp.AddConstraint):
        return all(f"delta.constraints.{c.name.lower()}" in now.properties for c in action.expressions)
    if isinstance(action, exp.AlterSet):
        return all(now.properties.get(p.name) == p.args["value"].name for p in action.find_all(exp.Property))
    return False


# ---------------------------------------------------------------------------------------------
# Running a step


def run_step(m: Migration, kind: str, spark: SparkSession | None, catalog: CatalogConfig, apply: bool,
             read_table: Callable[[], Any], spark_factory: Callable[[], Any],
             recorded: Sequence[dict[str, Any]], iceberg: CatalogRef | None = None) -> StepRun:
    """One step, gated: entry checks now, then (with `apply`) its SQL, its exit checks, its record.
    `read_table` reads the table from disk as it is now (for the data proofs); `recorded` are the
    plan's rows of the `migrations` table. An Iceberg table of an `iceberg` catalog is changed
    through pyiceberg's `update_schema()`. A step recorded `started` (a run killed inside it) is
    finished: its entry checks held when it started. Without `apply` nothing needs `spark` (None:
    the data proofs start theirs through `spark_factory` when a file needs reading)."""
    step = plan_step(m.doc, kind)
    statements = tuple(str(s) for s in step.get("sql") or ())
    guard(statements, m)
    state = step_states(recorded).get(kind)
    if state is not None and state.status == APPLIED:
        return StepRun(kind, "already-applied", "proven", (), statements, state.version_before,
                       state.version_after)
    resumed = state if state is not None and state.status == STARTED else None
    checks = resumed.checks if resumed else entry_checks(step, read_table, spark_factory)
    verdict = overall(v for _, _, v, _ in checks)  # type: ignore[misc]
    if verdict != "proven" or not apply:
        run = StepRun(kind, "would-apply" if verdict == "proven" else "refused", verdict, checks, statements)
        if apply:
            _record(_writer(spark), catalog, m, run, datetime.now(UTC))
        return run
    spark = _writer(spark)
    started = resumed.started_at if resumed else datetime.now(UTC)
    before = resumed.version_before if resumed else _version(spark, m, iceberg)
    if not resumed:  # the record comes first: a kill from here on leaves a step `started`
        _record(spark, catalog, m, StepRun(kind, STARTED, "proven", checks, statements, before), started)
    notes = ("resumed: the step was started before and not finished",) if resumed else ()
    if m.table_format == "iceberg":
        return _iceberg_step(m, kind, spark, catalog, iceberg, checks, statements, started, before, notes)
    took = _run_statements(spark, catalog, m, StepRun(kind, FAILED, "refuted", checks, statements, before),
                           started)
    after = _version(spark, m, iceberg)
    problems = exit_problems(m, kind, spark)
    run = StepRun(kind, "exit-check-failed" if problems else APPLIED, "refuted" if problems else "proven",
                  checks, statements, before, after, (*notes, *problems), took)
    _record(spark, catalog, m, run, started)
    return run


def _writer(spark: SparkSession | None) -> SparkSession:
    """The session a step applied with writes through (the command line gives one with --apply)."""
    if spark is None:
        raise UsageError("applying a step needs a Spark session")
    return spark


def _run_statements(spark: SparkSession, catalog: CatalogConfig, m: Migration, failed: StepRun,
                    started: datetime) -> tuple[float | None, ...]:
    """A step's statements in order, each skipped when the table already shows its effect, and
    the seconds each ran (None: skipped). Any failure (sqlglot, analysis, a Delta conflict ...) is recorded as
    `failed` (the record `failed` holds, with the reason) and raised as one line."""
    took: list[float | None] = []
    for statement in failed.statements:
        try:
            if already_done(statement, lambda: table_now(spark, m)):
                took.append(None)
                continue
            began = time.perf_counter()
            spark.sql(statement)
            took.append(time.perf_counter() - began)
        except Exception as e:
            reason = f"{statement[:80]}: {first_line(e)}"
            now = table_version(spark, m)
            _record(spark, catalog, m, replace(failed, version_after=now, notes=(reason,)), started)
            raise MigrationError(f"step {failed.step} failed (recorded; run it again, or roll back): "
                                 f"{reason}") from None
    return tuple(took)


# Iceberg through pyiceberg: the schema operations a metadata step is made of (Iceberg's
# SchemaUpdate: rename, delete, make optional, widen to an allowed promotion).
ICEBERG_PROMOTIONS = {"int64": "long", "float64": "double"}  # a widening's target, as pyiceberg names it


def _iceberg_step(m: Migration, kind: str, spark: SparkSession, catalog: CatalogConfig,
                  ref: CatalogRef | None, checks: tuple[tuple[str, str, str, str], ...],
                  statements: tuple[str, ...], started: datetime, before: int | None,
                  notes: tuple[str, ...]) -> StepRun:
    """A metadata step of an Iceberg catalog table, committed with pyiceberg in one commit (an
    operation the schema already shows is left out); its record as any."""
    from schemaguard.lake.iceberg import load_from_catalog
    if ref is None:
        raise MigrationError("an Iceberg table is changed through its catalog: give --catalog or "
                             "--catalog-uri")
    if any(written(x)[0] == "view" or not x.upper().startswith("ALTER TABLE") for x in statements):
        raise MigrationError(f"step {kind} on an Iceberg table writes data or views: run its SQL with Spark "
                             "and Iceberg's runtime (the plan holds it); --apply commits schema steps only")
    table = load_from_catalog(ref, m.table)
    columns = _iceberg_columns(table)
    pending = [op for op in m.operations if statements and not _iceberg_done(op, columns)]
    if pending:
        with table.update_schema() as update:
            for op in pending:
                _iceberg_op(update, op)
    table = load_from_catalog(ref, m.table)
    run = StepRun(kind, APPLIED, "proven", checks, statements, before, table.metadata.current_schema_id,
                  (*notes, "committed with pyiceberg's update_schema()" if pending else
                   "the table's schema already shows the step: nothing committed"))
    _record(spark, catalog, m, run, started)
    return run


def _iceberg_columns(table: Any) -> frozenset[str]:
    """Every struct field of an Iceberg table's current schema as a lower-cased model path."""
    from schemaguard.formats.iceberg import iceberg_schema

    schema = iceberg_schema(table.schema().model_dump(by_alias=True, mode="json"))
    return frozenset(p.lower() for p, _ in fields_of(schema))


def _iceberg_done(op: dict[str, Any], columns: frozenset[str]) -> bool:
    """Whether the schema already shows an operation (a killed run committed it unrecorded)."""
    kind, path, old = str(op["kind"]), str(op["path"]).lower(), str(op.get("old_path") or "").lower()
    if kind == "rename" and old:
        return old not in columns and path in columns
    if kind == "drop_field":
        return path not in columns
    return False  # make optional and widen commit the same schema again: harmless


def _iceberg_op(update: Any, op: dict[str, Any]) -> None:
    from pyiceberg.types import DecimalType, DoubleType, LongType

    kind, path, old = str(op["kind"]), str(op["path"]), op.get("old_path")
    names = parts(path)
    if kind == "rename" and old:
        update.rename_column(parts(str(old)), names[-1])
    elif kind == "drop_field":
        update.delete_column(names)
    elif kind == "nullability_relaxed":
        update.make_column_optional(names)
    elif kind == "widen_type" and str(op.get("after")) in ICEBERG_PROMOTIONS:
        update.update_column(names, {"long": LongType(), "double": DoubleType()}[
            ICEBERG_PROMOTIONS[str(op["after"])]])
    elif kind == "widen_type" and str(op.get("after", "")).startswith("decimal("):
        precision, scale = str(op["after"])[len("decimal("):-1].split(",")
        update.update_column(names, DecimalType(int(precision), int(scale)))
    else:
        raise MigrationError(f"{kind} {path}: not a metadata change pyiceberg commits here; run the step's "
                             "SQL with Spark and Iceberg's runtime")


@dataclass(frozen=True, slots=True)
class StepState:
    """A step's latest record since the last applied rollback."""

    status: str
    version_before: int | None
    version_after: int | None
    started_at: datetime
    checks: tuple[tuple[str, str, str, str], ...]


def step_states(rows: Sequence[dict[str, Any]]) -> dict[str, StepState]:
    """Each step's latest record, oldest rows first; an applied rollback clears the steps before
    it. A step's `started` row keeps the version before its first statement, which the rows
    after it (a resumed run's) carry on."""
    states: dict[str, StepState] = {}
    for r in rows:
        if r["step"] == ROLLBACK and r["status"] == APPLIED:
            states.clear()
            continue
        earlier = states.get(r["step"])
        resumed = earlier is not None and earlier.status == STARTED and r["status"] != STARTED
        checks = tuple(tuple(str(c.get(k, "")) for k in ("kind", "subject", "verdict", "evidence"))
                       for c in json.loads(r.get("checks_json") or "[]"))
        states[r["step"]] = StepState(
            r["status"], earlier.version_before if resumed and earlier else r["version_before"],
            r["version_after"], earlier.started_at if resumed and earlier else r["started_at"],
            checks)  # type: ignore[arg-type]
    return states


def entry_checks(step: dict[str, Any], read_table: Callable[[], Any],
                 spark_factory: Callable[[], Any]) -> tuple[tuple[str, str, str, str], ...]:
    """Each entry check's verdict now: data proofs run on the table as it is; the others as the plan
    recorded them (a check never run counts as unknown)."""
    from schemaguard.proofs.run import run_proofs

    checks = [c for c in step.get("entry_checks") or () if isinstance(c, dict)]
    data = [c for c in checks if c.get("kind") in DATA_PROOFS]
    results = run_proofs(read_table(), [proof_of(c["kind"], str(c["subject"])) for c in data],
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


def table_version(spark: SparkSession, m: Migration) -> int | None:
    """The table's version now: Delta's latest commit, from its log's listing where the table's
    place is known, else from Delta's history (None for other formats)."""
    if m.table_format != "delta":
        return None
    if m.location is not None:
        from schemaguard.formats.delta import latest_commit
        from schemaguard.lake.discover import resolve

        filesystem, root, _ = resolve(m.location)
        return latest_commit(filesystem, f"{root.rstrip('/')}/_delta_log")
    rows = spark.sql(f"DESCRIBE HISTORY {m.target} LIMIT 1").collect()
    return int(rows[0]["version"]) if rows else None


def _version(spark: SparkSession, m: Migration, ref: CatalogRef | None) -> int | None:
    """Delta's latest commit, or an Iceberg catalog table's current schema id."""
    if m.table_format == "iceberg" and ref is not None:
        from schemaguard.lake.iceberg import load_from_catalog

        return int(load_from_catalog(ref, m.table).metadata.current_schema_id)
    return table_version(spark, m)


def exit_problems(m: Migration, kind: str, spark: SparkSession) -> list[str]:
    """What the step should have left and did not: added columns and views after `expand`, the old
    columns and views gone after `contract`."""
    now = table_now(spark, m)
    ops = m.operations
    problems = []
    if kind == "expand":
        added = [str(o["path"]) for o in ops if o.get("kind") in ADDED]
        problems += [f"{c} is not in the table" for c in added if not now.has(c)]
        problems += [f"view {v} does not exist" for v in m.views if not spark.catalog.tableExists(v)]
    if kind == "contract":
        gone = [str(o.get("old_path") or o["path"]) for o in ops if o.get("kind") in ("rename", "drop_field")]
        problems += [f"{c} is still in the table" for c in gone if now.has(c)]
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


def rollback_statements(m: Migration, spark: SparkSession, recorded: Sequence[dict[str, Any]]
                        ) -> tuple[list[str], str]:
    """What undoes the expand phase (applied, or started and killed), and what it discards, said
    before it runs."""
    from schemaguard.planning.sql import view_sql

    states = step_states(recorded)
    expand, contract = states.get("expand"), states.get("contract")
    if expand is None or expand.status not in WROTE:
        return [], "nothing to roll back: expand was never run"
    if contract is not None and contract.status in WROTE:
        raise MigrationError(f"contract is {contract.status}: its dropped columns may be gone, a rollback "
                             "undoes only the expand phase (finish it with `migrate complete --apply`)")
    drops = [f"DROP VIEW IF EXISTS {view_sql(v)}" for v in m.views]
    added = [str(o["path"]) for o in m.operations if o.get("kind") in ADDED]
    mode = (table_now(spark, m).properties.get("delta.columnMapping.mode") if m.table_format == "delta"
            else "id")
    if not added or (mode or "none") != "none":
        columns = ", ".join(column_ref(c) for c in added)
        return drops + ([f"ALTER TABLE {m.target} DROP COLUMNS ({columns})"] if added else []), (
            f"drops the views and the added columns ({', '.join(added) or 'none'}); rows written since stay")
    before = expand.version_before
    now = table_version(spark, m)
    lost = (now - before) if now is not None and before is not None else 0
    return [*drops, f"RESTORE TABLE {m.target} TO VERSION AS OF {before}"], (
        f"restores version {before}: discards the {lost} commit(s) after it, writes included (Delta "
        "cannot drop a column without column mapping)")


def run_rollback(m: Migration, spark: SparkSession, catalog: CatalogConfig, apply: bool,
                 recorded: Sequence[dict[str, Any]]) -> StepRun:
    """The rollback, recorded `started` before its first statement like any step, so that a
    killed one is simply run again (each of its statements is idempotent or skipped when done)."""
    statements, what = rollback_statements(m, spark, recorded)
    guard(statements, m)
    if not statements or not apply:
        return StepRun(ROLLBACK, "would-apply", "proven", (), tuple(statements), notes=(what,))
    started, before = datetime.now(UTC), table_version(spark, m)
    _record(spark, catalog, m, StepRun(ROLLBACK, STARTED, "proven", (), tuple(statements), before), started)
    took = _run_statements(spark, catalog, m, StepRun(ROLLBACK, FAILED, "refuted", (), tuple(statements),
                                                      before), started)
    after = table_version(spark, m)
    run = StepRun(ROLLBACK, APPLIED, "proven", (), tuple(statements), before, after, (what,), took)
    _record(spark, catalog, m, run, started)
    return run


@dataclass(frozen=True, slots=True)
class StepStatus:
    """One step of the plan as the records tell it: `pending` (never run), `started` (a run that
    did not finish: rerun it, or roll back), `applied`, `failed`, `refused`, `exit-check-failed`,
    `rolled-back` (applied or started before the last rollback); the table's version before its
    first statement and after its last."""

    step: str
    status: str
    version_before: int | None = None
    version_after: int | None = None


def status(m: Migration, rows: Sequence[dict[str, Any]]) -> list[StepStatus]:
    """Each step of the plan and its latest record (rows as `migration_rows` gives them)."""
    states = step_states(rows)
    ever = {str(r["step"]) for r in rows if r["status"] in WROTE}
    out = []
    for s in m.doc["steps"]:
        kind = str(s["kind"])
        state = states.get(kind)
        if state is None:
            out.append(StepStatus(kind, "rolled-back" if kind in ever else "pending"))
        else:
            out.append(StepStatus(kind, state.status, state.version_before, state.version_after))
    return out
