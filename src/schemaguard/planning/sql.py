"""Each step of a plan as the Spark SQL that does it, and the views that keep old readers working.

Delta tables get delta-spark's SQL, Iceberg tables Iceberg's Spark SQL DDL; a Parquet directory
has no DDL (its writers change the files), so its steps carry none. What each statement relies on:

- `expand` adds the new column where NEW puts it (`ADD COLUMNS (... AFTER prev)`); a default is a
  separate `SET DEFAULT` after enabling Delta's `allowColumnDefaults` feature (delta-spark refuses
  a default inside `ADD COLUMNS`). It creates one view per schema version in use (pgroll's idea):
  the old version's shape and the new one's over the same table, a renamed column read from
  whichever side holds a value (`COALESCE`), so readers on either version see every row.
- `backfill` fills only rows still missing the value (`WHERE new IS NULL AND old IS NOT NULL`):
  rerunning it is harmless, and a partitioned table is filled one range of partitions a statement,
  so a failed run resumes where it stopped.
- `tighten` on Delta is a `CHECK (c IS NOT NULL)` constraint: delta-spark refuses `SET NOT NULL` on
  an existing nullable column ("Cannot change nullable column to non-nullable"), and so does
  Iceberg's Spark catalog, whose tables are made required with pyiceberg instead.
- `column-mapping` (Delta without it) upgrades the table to column mapping `name`, which a Delta
  `DROP COLUMN` and `RENAME COLUMN` need (Delta PROTOCOL.md, Column Mapping: reader version 2,
  writer version 5).
- `contract` drops the views, then the old column.
- A narrowing is never `ALTER ... TYPE`: the values move into a new column by a statement.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from schemaguard.formats.spark_ddl import column_ref, qualified, quoted, sql_type
from schemaguard.lake.table import TableFormat, TableRead
from schemaguard.model import Field, Schema, StructType, fields_of
from schemaguard.names import NAME
from schemaguard.paths import join, parent_and_name, parts, segment
from schemaguard.planning.ddl import retarget
from schemaguard.planning.planner import Plan, View
from schemaguard.planning.treatments import StepKind
from schemaguard.rules.changes import Operation, OpKind

BACKFILL_PARTITIONS = 31  # partitions one backfill statement covers (a month of days)
VIEW_NAME = "{table}__v{version}"
TIGHTENED = (OpKind.ADD_REQUIRED_FIELD, OpKind.NULLABILITY_TIGHTENED)
DROPPED_AT_CONTRACT = (OpKind.RENAME, OpKind.DROP_FIELD, OpKind.NARROW_TYPE)
MAPPING_PROPERTIES = ("'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
                      "'delta.minWriterVersion' = '5'")


@dataclass(frozen=True, slots=True)
class SqlTarget:
    """The table the SQL runs on. `name` is how Spark SQL names it (`db.t`, `cat.db.t`, or
    ``delta.`/path` ``), `short` the name views are made from; `partitions` the values of its one
    partition column, sorted; `statements` the DDL the change was given as (for an edit step)."""

    name: str
    short: str
    table_format: TableFormat
    column_mapping: str = "none"
    partition_column: str | None = None
    partitions: tuple[str, ...] = ()
    view_name: str = VIEW_NAME
    version: int = 1  # the schema version readers use today
    statements: tuple[str, ...] = ()
    readers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # old column -> its readers


def with_sql(plan: Plan, old: Schema, new: Schema, target: SqlTarget) -> Plan:
    """The plan with each step's statements, and its views when the plan is staged."""
    if target.table_format == "parquet":
        return replace(plan, notes=(*plan.notes, "a Parquet directory has no DDL: its steps are made "
                                    "by the writers and readers, and no view can stand in for it"))
    ops = [o.op for o in plan.operations]
    staged = any(s.kind == "expand" for s in plan.steps) and any(
        o.kind == OpKind.RENAME for o in ops)
    views = _views(ops, old, new, target) if staged else ()
    steps = tuple(replace(s, sql=tuple(_step(s.kind, ops, old, new, target, views))) for s in plan.steps)
    return replace(plan, steps=steps, views=views, target=target.name, table_format=target.table_format)


def _step(kind: StepKind, ops: Sequence[Operation], old: Schema, new: Schema, target: SqlTarget,
          views: Sequence[View]) -> list[str]:
    t = target.name
    if kind == "expand":
        return [s for op in ops for s in _expand(op, new, target)] + [v.sql for v in views]
    if kind == "backfill":
        return [s for op in ops for s in _backfill(op, new, target)]
    if kind == "tighten" and target.table_format == "delta":
        return [f"ALTER TABLE {t} ADD CONSTRAINT {_constraint(op.path)} CHECK ({column_ref(op.path)} "
                "IS NOT NULL)" for op in ops if op.kind in TIGHTENED]
    if kind == "column-mapping":
        return [f"ALTER TABLE {t} SET TBLPROPERTIES ({MAPPING_PROPERTIES})"]
    if kind == "contract":
        dropped = [column_ref(op.old_path or op.path) for op in ops if op.kind in DROPPED_AT_CONTRACT]
        return [f"DROP VIEW IF EXISTS {view_sql(v.name)}" for v in views] + (
            [f"ALTER TABLE {t} DROP COLUMNS ({', '.join(dropped)})"] if dropped else [])
    if kind == "migrate-data":
        return [s for op in ops if op.kind == OpKind.NARROW_TYPE for s in _narrow(op, new, target)]
    if kind == "new-version":
        return [_new_table(old, new, target)]
    if kind in ("edit", "deploy-writers"):  # the writers' deploy is when the edit is made
        return list(target.statements) or [s for op in ops for s in _edit(op, new, target)]
    return []  # a step of people and jobs (dual-write, move-readers, sign-off ...): no SQL


# ---------------------------------------------------------------------------------------------
# One operation's statements


def _expand(op: Operation, new: Schema, target: SqlTarget) -> list[str]:
    if op.kind not in (OpKind.RENAME, OpKind.ADD_OPTIONAL_FIELD, OpKind.ADD_REQUIRED_FIELD):
        return []
    f = _field(new, op.path)
    out = [f"ALTER TABLE {target.name} ADD COLUMNS ({_definition(op.path, f, new)})"]
    if f.default_json is not None and target.table_format == "delta":
        out += [f"ALTER TABLE {target.name} SET TBLPROPERTIES ('delta.feature.allowColumnDefaults' = "
                "'supported')",
                f"ALTER TABLE {target.name} ALTER COLUMN {column_ref(op.path)} SET DEFAULT "
                f"{_literal(f.default_json)}"]
    return out


def _backfill(op: Operation, new: Schema, target: SqlTarget) -> list[str]:
    """Idempotent fills, one partition range each: only rows still missing the value."""
    column = column_ref(op.path)
    default = _field(new, op.path).default_json if op.kind == OpKind.ADD_REQUIRED_FIELD else None
    if op.kind == OpKind.RENAME and op.old_path:
        source = column_ref(op.old_path)
        base = f"UPDATE {target.name} SET {column} = {source} WHERE {column} IS NULL AND {source} IS NOT NULL"
    elif default is not None:
        value = _literal(default)
        base = f"UPDATE {target.name} SET {column} = {value} WHERE {column} IS NULL"
    else:
        return []
    return [base + where for where in _ranges(target)]


def _ranges(target: SqlTarget) -> list[str]:
    """A condition per range of partitions (none for an unpartitioned or small table)."""
    values = target.partitions
    if target.partition_column is None or len(values) <= BACKFILL_PARTITIONS:
        return [""]
    column = quoted(target.partition_column)
    chunks = [values[i:i + BACKFILL_PARTITIONS] for i in range(0, len(values), BACKFILL_PARTITIONS)]
    return [f" AND {column} BETWEEN {_string(c[0])} AND {_string(c[-1])}" for c in chunks]


def _narrow(op: Operation, new: Schema, target: SqlTarget) -> list[str]:
    """The narrower values into a column of their own, filled by a statement (never ALTER TYPE)."""
    f = _field(new, op.path)
    parent, name = parent_and_name(op.path)
    suffix = sql_type(f.type).lower().replace("(", "_").replace(",", "_").rstrip(")")
    moved = join(parent, f"{name}__{suffix}")
    column, source = column_ref(moved), column_ref(op.old_path or op.path)
    return [f"ALTER TABLE {target.name} ADD COLUMNS ({column} {sql_type(f.type, op.path)})",
            f"UPDATE {target.name} SET {column} = CAST({source} AS {sql_type(f.type, op.path)}) "
            f"WHERE {column} IS NULL AND {source} IS NOT NULL"]


def _new_table(old: Schema, new: Schema, target: SqlTarget) -> str:
    """A side-by-side table of NEW's shape, filled from the old one (a column NEW adds is null)."""
    have = {f.name.lower() for f in old.fields}
    select = ", ".join(
        f"CAST({quoted(f.name) if f.name.lower() in have else 'NULL'} AS {sql_type(f.type, f.name)}) "
        f"AS {quoted(f.name)}" for f in new.fields)
    name = target.view_name.format(table=target.short, version=target.version + 1)
    using = "iceberg" if target.table_format == "iceberg" else "delta"
    return f"CREATE TABLE {view_sql(name)} USING {using} AS SELECT {select} FROM {target.name}"


def _edit(op: Operation, new: Schema, target: SqlTarget) -> list[str]:
    """The one statement of an edit that is safe as it is."""
    t, column = target.name, column_ref(op.path)
    if op.kind == OpKind.WIDEN_TYPE:
        widen = ([f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"]
                 if target.table_format == "delta" else [])
        return [*widen, f"ALTER TABLE {t} ALTER COLUMN {column} TYPE {sql_type(_field(new, op.path).type)}"]
    if op.kind == OpKind.ADD_OPTIONAL_FIELD:
        return [f"ALTER TABLE {t} ADD COLUMNS ({_definition(op.path, _field(new, op.path), new)})"]
    if op.kind == OpKind.NULLABILITY_RELAXED:
        return [f"ALTER TABLE {t} ALTER COLUMN {column} DROP NOT NULL"]
    if op.kind == OpKind.RENAME and op.old_path:
        mapping = ([f"ALTER TABLE {t} SET TBLPROPERTIES ({MAPPING_PROPERTIES})"]
                   if target.table_format == "delta" and target.column_mapping == "none" else [])
        return [*mapping,
                f"ALTER TABLE {t} RENAME COLUMN {column_ref(op.old_path)} TO {quoted(_leaf(op.path))}"]
    if op.kind == OpKind.METADATA_CHANGED and op.detail == "comment":
        comment = _field(new, op.path).meta.get("comment", "")
        return [f"ALTER TABLE {t} ALTER COLUMN {column} COMMENT {_string(comment)}"]
    return []


# ---------------------------------------------------------------------------------------------
# Views: one per schema version in use, both readable while the plan runs


def _views(ops: Sequence[Operation], old: Schema, new: Schema, target: SqlTarget) -> tuple[View, ...]:
    renamed = {op.old_path: op.path for op in ops if op.kind == OpKind.RENAME and op.old_path
               and len(parts(op.path)) == 1}  # top-level renames: both sides are names
    back = {n: o for o, n in renamed.items()}
    old_select = [_either(f.name, renamed) for f in old.fields]
    new_select = [_either(f.name, back) for f in new.fields]
    readers = tuple(sorted({r for column in renamed for r in target.readers.get(column, ())}))
    out = []
    shapes: tuple[tuple[int, Literal["old", "new"], list[str], tuple[str, ...]], ...] = (
        (target.version, "old", old_select, readers), (target.version + 1, "new", new_select, ()))
    for version, shape, select, who in shapes:
        name = target.view_name.format(table=target.short, version=version)
        sql = f"CREATE OR REPLACE VIEW {view_sql(name)} AS SELECT {', '.join(select)} FROM {target.name}"
        out.append(View(name, version, shape, sql, who))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Names and literals


def _either(name: str, other: Mapping[str, str]) -> str:
    """A top-level column of a view: itself, or (renamed) whichever of its two columns holds a value."""
    pair = other.get(segment(name))
    if pair is None:
        return quoted(name)
    return f"COALESCE({quoted(name)}, {column_ref(pair)}) AS {quoted(name)}"


def view_sql(name: str) -> str:
    """A view's name (`t__v1`, `db.t__v1`: parts checked by `check_view_name`) as SQL names it."""
    return qualified(name.split("."))


def check_view_name(template: str) -> None:
    """Refuse a `--view-name` that cannot make a view name (before anything is read)."""
    if "{table}" not in template or "{version}" not in template:
        raise ValueError(f"--view-name {template!r}: give both {{table}} and {{version}}")
    try:
        sample = template.format(table="t", version=1)
    except (KeyError, IndexError, ValueError):
        raise ValueError(f"--view-name {template!r}: only {{table}} and {{version}} are filled in") from None
    if not all(NAME.fullmatch(p) for p in sample.split(".")):
        raise ValueError(f"--view-name {template!r}: a view name is letters, digits and _ (and dots between "
                         "a database and the name)")


def view_short(name: str) -> str:
    """The name views are made from: a path's folder as an identifier (`ord ers` -> `ord_ers`)."""
    short = re.sub(r"[^A-Za-z0-9_]", "_", name) or "table"
    return short if not short[0].isdigit() else f"t_{short}"


def _leaf(path: str) -> str:
    return parts(path)[-1]


def _constraint(path: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in path) + "_not_null"


def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _literal(default_json: str) -> str:
    """A field's JSON default as a SQL literal."""
    value = json.loads(default_json)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    return _string(str(value))


def _field(schema: Schema, path: str) -> Field:
    """The field at a dotted path into structs (an operation's path)."""
    return dict(fields_of(schema))[path]


def _definition(path: str, f: Field, new: Schema) -> str:
    """`path TYPE [COMMENT '...'] [FIRST | AFTER prev]`, placed where NEW puts it."""
    above = parent_and_name(path)[0]
    parent = _field(new, above).type if above else StructType(new.fields)
    names = [s.name for s in parent.fields] if isinstance(parent, StructType) else [f.name]
    at = names.index(f.name)
    place = " FIRST" if at == 0 else f" AFTER {quoted(names[at - 1])}"
    comment = f.meta.get("comment")
    spelled = f"{column_ref(path)} {sql_type(f.type, path)}"
    return spelled + (f" COMMENT {_string(comment)}" if comment else "") + place


def sql_target(read: TableRead, name: str, in_catalog: bool, statements: Sequence[str] = (),
               readers: Mapping[str, tuple[str, ...]] | None = None, view_name: str = VIEW_NAME) -> SqlTarget:
    """The SQL target of a table read from disk: `name` as the user gave it (a catalog name, or a
    path, which Delta names ``delta.`path` ``); its first partition column's values for the
    backfill's ranges; DDL statements retargeted at it."""
    short = name if in_catalog else view_short(Path(read.listing.root.rstrip("/")).name)
    sql_name = name if in_catalog or read.table_format != "delta" else f"delta.{quoted(read.listing.root)}"
    column = read.listing.partition_columns[0] if read.listing.partition_columns else None
    values = sorted({v for f in read.listing.files for k, v in f.partition if k == column and v is not None})
    mapping = read.delta.configuration.get("delta.columnMapping.mode", "none") if read.delta else "none"
    version = read.versions[-1].number if read.versions else 1
    return SqlTarget(sql_name, short, read.table_format, mapping, column, tuple(values), view_name, version,
                     tuple(retarget(s, sql_name) for s in statements), dict(readers or {}))
