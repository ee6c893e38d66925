"""Differential test: the `delta-read` profile against delta-spark reading old files.

Each table is created with Delta's DDL, written once under its schema W (edge values: the
extremes of each integer width, negatives, full-precision decimals, pre-1970 and sub-second
times, non-ASCII text, nulls), evolved to R with Delta's own DDL (ALTER COLUMN ... TYPE under
type widening, for every widening Delta 4.4 allows and many it refuses; RENAME, DROP, re-ADD,
reorder and nested changes under column mapping `name` and `id`; ADD COLUMNS; nullability), and
read back through Delta (`spark.read.format("delta")`, the current snapshot). Delta's "no" is its
refusal of the DDL, and it counts only when the error condition is one ENGINE_ERRORS
(tests/oracles.py) names for a rule of ours that fired; any other failure fails the test. A read
must return every written value exactly as R's type holds it, each R column bound to the W column
Delta binds it to (by physical name under column mapping, else by name); anything else is a quiet
break, also a "no". Where the DDL is refused, our verdict is asked about the R it asked for.

Our verdict is the audit's (checks/compat.py): the table read through schemaguard's loader
(`lake.table.read`), options from `table_options`, R the log's current schema, W each old file's
footer as the loader labels it, and also W as the log's schema when the file was added.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from schemaguard.base import Options, Problem, errors
from schemaguard.checks.compat import table_options
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.lake.table import read
from schemaguard.model import DataType, Field, Schema, SchemaTransform, transform
from schemaguard.rules.profiles import can_read
from tests.exact import Map, NoExactValue, decimal_as, first_difference
from tests.oracles import predicted, refusal

D = decimal.Decimal

# Edge values per Spark type (JSON names, as the log writes them). Floats are exact in float32.
EDGES: dict[str, list[Any]] = {
    "byte": [-128, 127, 0], "short": [-32768, 32767, -1], "integer": [-2**31, 2**31 - 1, 0],
    "long": [-2**63, 2**63 - 1, -1],
    "float": [3.4028234663852886e38, -1.401298464324817e-45, -0.0],
    "double": [1.7976931348623157e308, -5e-324, -0.0],
    "decimal(5,2)": [D("999.99"), D("-999.99"), D("0.01")],
    "date": [dt.date(1, 1, 1), dt.date(1969, 12, 31), dt.date(9999, 12, 31)],
    "timestamp_ntz": [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1900, 1, 1, 0, 0, 0, 1)],
    "timestamp": [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1900, 1, 1, 0, 0, 0, 1)],
    "string": ["é", "日本語", "", "\U0001f600"],
    "binary": [b"\x00\xff", b""],
    "boolean": [True, False],
}
SQL = {"byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT"}
INTEGRAL = {"byte": 8, "short": 16, "integer": 32, "long": 64}


def sql_type(t: str) -> str:
    return SQL.get(t, t.upper())


# The ALTER COLUMN ... TYPE pairs: every widening Delta 4.4's type-widening table allows (byte <
# short < int < long; float -> double; byte/short/int -> double; date -> timestamp_ntz; decimal(p,s)
# -> decimal(p+k1, s+k2), k1 >= k2 >= 0; byte/short/int -> decimal(10+k1, k2); long ->
# decimal(20+k1, k2)), and the changes next to them that it refuses. (Each refusal costs a Spark
# analysis, about 0.2 s here: the refused side is a sample of each boundary, not every pair.)
ALLOWED: list[tuple[str, str]] = [
    *((w, r) for w in INTEGRAL for r in INTEGRAL if INTEGRAL[w] < INTEGRAL[r]),
    *((w, "double") for w in ("byte", "short", "integer")),
    *((w, r) for w in ("byte", "short", "integer") for r in ("decimal(10,0)", "decimal(12,2)")),
    ("long", "decimal(20,0)"), ("long", "decimal(22,2)"), ("float", "double"),
    ("decimal(5,2)", "decimal(6,3)"), ("decimal(5,2)", "decimal(7,2)"), ("decimal(5,2)", "decimal(10,0)"),
    ("date", "timestamp_ntz"),
]
REFUSED: list[tuple[str, str]] = [
    ("long", "integer"), ("long", "double"), ("integer", "float"), ("short", "float"), ("long", "float"),
    ("byte", "decimal(3,0)"),
    ("integer", "decimal(9,0)"), ("long", "decimal(19,0)"), ("double", "float"),
    ("decimal(5,2)", "decimal(6,4)"), ("decimal(5,2)", "decimal(5,3)"), ("decimal(5,2)", "double"),
    ("date", "timestamp"), ("timestamp", "timestamp_ntz"), ("timestamp_ntz", "date"),
    ("string", "binary"), ("integer", "string"), ("boolean", "integer"),
]
PAIRS = ALLOWED + REFUSED
# Without the type-widening feature Delta changes no type at all.
NO_WIDENING = [("integer", "long"), ("float", "double"), ("decimal(5,2)", "decimal(7,2)"),
               ("date", "timestamp_ntz")]


# ---------------------------------------------------------------------------------------------
# What a reader should get: each written value as R's type holds it, bound as Delta binds it


def converted(value: Any, w: Any, r: Any) -> Any:
    """`value` of Spark type `w` (JSON form) as type `r` holds it unchanged; NoExactValue when it
    cannot."""
    if value is None or w == r:
        return value
    if w in INTEGRAL and r in INTEGRAL and INTEGRAL[w] <= INTEGRAL[r]:
        return value
    if w in INTEGRAL and r == "double" and abs(value) <= 2**53:
        return float(value)
    if w == "float" and r == "double":
        return value
    if isinstance(r, str) and r.startswith("decimal(") and (w in INTEGRAL or str(w).startswith("decimal(")):
        precision, scale = map(int, re.findall(r"\d+", r))
        return decimal_as(D(value), precision, scale)
    if w == "date" and r == "timestamp_ntz":
        return dt.datetime(value.year, value.month, value.day)
    raise NoExactValue(f"{value!r} ({w}) has no exact value as {r}")


def physical(f: dict[str, Any]) -> str:
    """What Delta binds a column by: its physical name under column mapping, else its name
    (case-insensitively)."""
    meta = f.get("metadata") or {}
    return str(meta.get("delta.columnMapping.physicalName") or f["name"].lower())


def projected(value: Any, w: Any, r: Any, nullable: bool) -> Any:
    """The value a reader of type `r` should get from `value` written as type `w` (None: the
    column is not in the file)."""
    result: Any
    if w is None or value is None:
        result = None
    elif isinstance(r, dict) and r["type"] == "struct" and isinstance(w, dict) and w["type"] == "struct":
        result = struct_value(value, w, r)
    elif isinstance(r, dict) and r["type"] == "array" and isinstance(w, dict) and w["type"] == "array":
        result = [projected(e, w["elementType"], r["elementType"], r["containsNull"]) for e in value]
    elif isinstance(r, dict) and r["type"] == "map" and isinstance(w, dict) and w["type"] == "map":
        key, item = (w["keyType"], r["keyType"]), (w["valueType"], r["valueType"], r["valueContainsNull"])
        result = Map({projected(k, *key, False): projected(v, *item) for k, v in value.items()})
    else:
        result = converted(value, w, r)
    if result is None and not nullable:
        raise NoExactValue("a NOT NULL column of R reads null")
    return result


def struct_value(value: dict[str, Any], w: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    by_physical = {physical(f): f for f in w["fields"]}
    out = {}
    for rf in r["fields"]:
        wf = by_physical.get(physical(rf))
        out[rf["name"]] = projected(value.get(wf["name"]) if wf else None, wf["type"] if wf else None,
                                    rf["type"], rf["nullable"])
    return out


def log_schemas(path: Path) -> list[dict[str, Any]]:
    """Every schema the log sets, oldest first, read from the commit files themselves."""
    found = []
    for commit in sorted((path / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                found.append(json.loads(action["metaData"]["schemaString"]))
    return found


# ---------------------------------------------------------------------------------------------
# Writing, evolving, reading


@dataclass
class Table:
    path: Path
    written: dict[str, Any]  # W as the log holds it (Spark StructType JSON)
    rows: list[dict[str, Any]]
    refused: dict[str, str]  # column -> the condition Delta refused its change with

    @property
    def at(self) -> str:
        return f"delta.`{self.path}`"


def create(spark: Any, path: Path, columns: str, rows: list[dict[str, Any]], **properties: str) -> Table:
    """The table created with `columns` (DDL) and `properties` (`delta_x` for `delta.x`), and
    `rows` written to it in one append."""
    properties = {"delta_checkpointInterval": "1000", **properties}  # no checkpoint: commits stay fast
    props = ", ".join(f"'{k.replace('_', '.')}' = '{v}'" for k, v in properties.items())
    spark.sql(f"CREATE TABLE delta.`{path}` ({columns}) USING delta TBLPROPERTIES ({props})")
    schema = spark.read.format("delta").load(str(path)).schema
    spark.createDataFrame(rows, schema=schema).write.format("delta").mode("append").save(str(path))
    return Table(path, log_schemas(path)[-1], rows, {})


def alter(spark: Any, table: Table, column: str, clause: str) -> None:
    """One ALTER TABLE; a refusal is recorded against `column` (when ENGINE_ERRORS names it)."""
    try:
        spark.sql(f"ALTER TABLE {table.at} {clause}")
    except Exception as e:  # Delta's "no", when its condition is one a rule predicts
        table.refused[column] = refusal(e)


def alter_types(spark: Any, table: Table, changes: dict[str, str]) -> None:
    """Every `column -> type` change in one ALTER statement (one commit: Delta commits are slow);
    a refused change is recorded against the column Delta names, dropped, and the rest retried."""
    pending = dict(changes)
    while pending:
        clause = ", ".join(f"{c} TYPE {t}" for c, t in pending.items())
        try:
            spark.sql(f"ALTER TABLE {table.at} ALTER COLUMN {clause}")
            return
        except Exception as e:  # Delta's "no", when its condition is one a rule predicts
            condition = refusal(e)
            params = e.getMessageParameters() or {}  # type: ignore[attr-defined]
            column = str(params.get("fieldPath") or params.get("originName", "")).strip("`")
            assert column in pending, (condition, params)
            table.refused[column] = condition
            del pending[column]


def engine_rows(spark: Any, table: Table) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What Delta reads now (rows by id), and R as the log holds it."""
    got = [r.asDict(recursive=True) for r in spark.read.format("delta").load(str(table.path)).collect()]
    return sorted(got, key=lambda r: r["id"]), log_schemas(table.path)[-1]


def outcome(table: Table, column: str, got: list[dict[str, Any]], r: dict[str, Any]) -> str:
    """'ok', or Delta's refusal condition, or how the values changed (a quiet break)."""
    if column in table.refused:
        return table.refused[column]
    [rf] = [f for f in r["fields"] if f["name"] == column]
    wf = next((f for f in table.written["fields"] if physical(f) == physical(rf)), None)
    for row, read_row in zip(table.rows, got, strict=True):
        try:
            want = projected(row.get(wf["name"]) if wf else None, wf["type"] if wf else None,
                             rf["type"], rf["nullable"])
        except NoExactValue as e:
            return f"read, but values changed: {e}; read {read_row[column]!r}"
        if diff := first_difference(want, read_row[column], f"{column} of row {row['id']}"):
            return f"read, but values changed: {diff}"
    return "ok"


# ---------------------------------------------------------------------------------------------
# Our verdict, as the audit reaches it


class _Changed(SchemaTransform):
    """A schema with the fields at some paths changed."""

    def __init__(self, changes: dict[str, Callable[[Field], Field]]) -> None:
        self.changes = changes

    def field(self, f: Field, path: str, type_result: DataType) -> Field:
        f = replace(f, type=type_result)
        return self.changes[path](f) if path in self.changes else f


def changed(changes: dict[str, Callable[[Field], Field]]) -> Callable[[Schema], Schema]:
    return lambda s: transform(s, _Changed(changes))


def spark_type(t: str) -> DataType:
    """A Spark type (JSON form) in the model, by the converter the loader uses for the log."""
    doc = {"type": "struct", "fields": [{"name": "x", "type": t, "nullable": True, "metadata": {}}]}
    return schema_from_spark_json(json.dumps(doc)).fields[0].type


@dataclass(frozen=True)
class Verdict:
    by_footer: list[Problem]  # W = each old file's footer, as the loader labels it
    by_log: list[Problem] | None  # W = the log's schema when the file was added

    def at(self, column: str) -> list[tuple[str, list[Problem]]]:
        def only(problems: list[Problem]) -> list[Problem]:
            return [p for p in errors(problems) if p.path == column
                    or p.path.startswith((f"{column}.", f"{column}[", f"{column}{{"))]
        return [("footer W", only(self.by_footer)),
                *([("log W", only(self.by_log))] if self.by_log is not None else [])]


def ours(table: Table, intended: Callable[[Schema], Schema] = lambda s: s, log: bool = True) -> Verdict:
    """delta-read's problems for each old file against the current schema, or the one a refused
    DDL asked for (`intended`)."""
    loaded = read(str(table.path), workers=1)
    assert loaded.delta is not None
    options = table_options(loaded, Options())
    current = intended(loaded.delta.current.schema)
    by_footer = [p for v in loaded.versions
                 for p in can_read(v.footer.schema, current, "delta-read", options)]
    by_log = [p for f in loaded.delta.files
              for p in can_read(loaded.delta.schema_at(f.added_in).schema, current, "delta-read", options)]
    return Verdict(by_footer, by_log if log else None)


def disagreement(engine: str, problems: list[Problem], how: str) -> str:
    """'' when our verdict (no error: readable) is Delta's, and a refusal is one our rules name."""
    ok = engine == "ok"
    if (not problems) != ok:
        return f"{how}: ours={[(p.path, p.rule.id) for p in problems] or 'ok'} delta={engine}"
    if not ok and not engine.startswith("read, but") and not predicted({p.rule.id for p in problems}, engine):
        return f"{how}: Delta refused with {engine}, which none of {[p.rule.id for p in problems]} names"
    return ""


def rows_of(types: dict[str, str]) -> list[dict[str, Any]]:
    """Rows holding each column's edge values, then a row of nulls; `id` numbers them."""
    n = max(len(EDGES[t]) for t in types.values()) + 1
    return [{"id": i, **{c: (EDGES[t][i] if i < len(EDGES[t]) else None) for c, t in types.items()}}
            for i in range(n)]


# ---------------------------------------------------------------------------------------------
# The tests


def retyped(table: Table, pairs: dict[str, tuple[str, str]]) -> Callable[[Schema], Schema]:
    """The R the refused ALTER COLUMN ... TYPE asked for: each refused column with its new type."""
    def typed(target: str) -> Callable[[Field], Field]:
        return lambda f: replace(f, type=spark_type(target))

    return changed({c: typed(target) for c, (_, target) in pairs.items() if c in table.refused})


def check_columns(table: Table, got: list[dict[str, Any]], r: dict[str, Any], verdict: Verdict,
                  asked: Verdict, also: tuple[str, ...] = (),
                  pairs: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """Every column of R (and `also` the columns a refused ADD asked for), against Delta: a column
    whose DDL Delta refused is judged on the R that DDL asked for (`asked`). `pairs` names the
    type change of each column, for the message."""
    found = []
    for column in [*(f["name"] for f in r["fields"]), *also]:
        engine = outcome(table, column, got, r)
        for how, problems in (asked if column in table.refused else verdict).at(column):
            if diff := disagreement(engine, problems, how):
                change = " -> ".join((pairs or {}).get(column, ()))
                found.append(f"{column} {change}: {diff}")
    return found


def test_every_alter_column_type_agrees_with_delta(spark: Any, tmp_path: Path) -> None:
    """One column per pair, all changed by ALTER COLUMN ... TYPE under type widening (`id`, NOT
    NULL, is not changed)."""
    pairs = {f"c{i}": pair for i, pair in enumerate(PAIRS)}
    columns = {c: w for c, (w, _) in pairs.items()}
    ddl = ", ".join(f"{c} {sql_type(t)}" for c, t in columns.items())
    table = create(spark, tmp_path / "widening", f"id INT NOT NULL, {ddl}", rows_of(columns),
                   delta_enableTypeWidening="true", delta_feature_timestampNtz="supported")
    alter_types(spark, table, {c: sql_type(r) for c, (_, r) in pairs.items()})
    got, r = engine_rows(spark, table)
    found = check_columns(table, got, r, ours(table), ours(table, retyped(table, pairs)), pairs=pairs)
    assert not found, "\n".join(found)


# A table for column mapping: every kind of column, nulls at every nullable level; `id`, `nn` and
# `t.q` are NOT NULL (Delta holds a nested NOT NULL field to a value even where its struct is
# null, so `t` never is), the rest nullable.
MAPPED_COLUMNS = ("id INT NOT NULL, a INT, b STRING, c STRING, d DOUBLE, e DATE, f INT, g STRING, "
                  "k TIMESTAMP_NTZ, nn BIGINT NOT NULL, s STRUCT<x: SMALLINT, y: STRING>, "
                  "t STRUCT<q: INT NOT NULL, u: STRING>, arr ARRAY<INT>, m MAP<STRING, FLOAT>, "
                  "dec DECIMAL(5,2)")
MAPPED_ROWS: list[dict[str, Any]] = [
    {"id": 0, "a": -2**31, "b": "日本語", "c": "é", "d": -0.0, "e": dt.date(1, 1, 1), "f": 2**31 - 1,
     "g": "\U0001f600", "k": dt.datetime(1969, 12, 31, 23, 59, 59, 999999), "nn": -2**63,
     "s": {"x": -32768, "y": ""}, "t": {"q": 2**31 - 1, "u": "é"}, "arr": [-2**31, None, 2**31 - 1],
     "m": {"é": 3.4028234663852886e38, "k": None}, "dec": D("-999.99")},
    {"id": 1, "a": None, "b": None, "c": None, "d": None, "e": None, "f": None, "g": None, "k": None,
     "nn": 2**63 - 1, "s": {"x": None, "y": None}, "t": {"q": -2**31, "u": None}, "arr": [], "m": {},
     "dec": None},
    {"id": 2, "a": 0, "b": "", "c": "", "d": 5e-324, "e": dt.date(9999, 12, 31), "f": -1, "g": "",
     "k": dt.datetime(1900, 1, 1, 0, 0, 0, 1), "nn": 0, "s": None, "t": {"q": 0, "u": ""}, "arr": None,
     "m": None, "dec": D("0.01")},
]
# Delta's DDL, in order; each clause is one commit (Delta commits cost about a second here).
MAPPED_CHANGES = [
    "RENAME COLUMN a TO a2",
    "RENAME COLUMN s.x TO x2",
    "RENAME COLUMN f TO tmp", "RENAME COLUMN g TO f", "RENAME COLUMN tmp TO g",  # f and g swap names
    "DROP COLUMNS (c, d, s.y)",
    "ADD COLUMNS (c INT, d DOUBLE, s.z BIGINT, n STRING)",  # c back with another type, d with its own
    "ALTER COLUMN a2 TYPE BIGINT, s.x2 TYPE INT, arr.element TYPE BIGINT, m.value TYPE DOUBLE, "
    "dec TYPE DECIMAL(7,3), k FIRST, nn DROP NOT NULL",  # widen after a rename, reorder, relax
]
SWAP = MAPPED_CHANGES[2:5]  # under `id` mapping too, but the name table is where names could mislead
# Refused by Delta: (the column, the DDL, the R it asks for, as a change of the current schema)
MAPPED_REFUSED: list[tuple[str, str, Callable[[Schema], Schema]]] = [
    ("b", "ALTER COLUMN b SET NOT NULL", changed({"b": lambda f: replace(f, nullable=False)})),
    ("z", "ADD COLUMNS (z INT NOT NULL)",
     lambda s: Schema((*s.fields, Field("z", spark_type("integer"), False, 10_000)))),
]


@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping_agrees_with_delta(spark: Any, tmp_path: Path, mode: str) -> None:
    table = create(spark, tmp_path / mode, MAPPED_COLUMNS, MAPPED_ROWS, delta_columnMapping_mode=mode,
                   delta_enableTypeWidening="true", delta_feature_timestampNtz="supported")
    for clause in MAPPED_CHANGES:
        if mode == "name" or clause not in SWAP:
            alter(spark, table, clause.split()[2], clause)
    assert not table.refused, f"Delta refused a change this test expects it to make: {table.refused}"
    for column, clause, _ in MAPPED_REFUSED:
        alter(spark, table, column, clause)
    got, r = engine_rows(spark, table)
    asked = ours(table, lambda s: _all(s, [change for _, _, change in MAPPED_REFUSED]))
    found = check_columns(table, got, r, ours(table), asked, ("z",))
    assert not found, "\n".join(found)


def _all(schema: Schema, changes: list[Callable[[Schema], Schema]]) -> Schema:
    for change in changes:
        schema = change(schema)
    return schema


def test_a_table_from_before_column_mapping_and_type_widening_agrees_with_delta(
        spark: Any, tmp_path: Path) -> None:
    """A table as an older writer left it: without type widening (Delta then changes no type at
    all), and written before `name` mapping was switched on, so its file has no field ids and its
    columns' own names, which Delta keeps as their physical names: a rename still finds a column,
    a column dropped and added back under its name does not. (The log's schemas from before the
    switch have no ids to bind by: W is the footer here, as the audit takes it.)"""
    pairs = {f"w{i}": pair for i, pair in enumerate(NO_WIDENING)}
    columns = {"a": "integer", "c": "string", **{c: w for c, (w, _) in pairs.items()}}
    ddl = ", ".join(f"{c} {sql_type(t)}" for c, t in columns.items())
    table = create(spark, tmp_path / "old", f"id INT NOT NULL, {ddl}", rows_of(columns),
                   delta_feature_timestampNtz="supported")
    alter_types(spark, table, {c: sql_type(r) for c, (_, r) in pairs.items()})
    assert set(table.refused) == set(pairs), table.refused  # no type changes without the feature
    for clause in ["SET TBLPROPERTIES ('delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5', "
                   "'delta.columnMapping.mode' = 'name')",
                   "RENAME COLUMN a TO a2", "DROP COLUMN c", "ADD COLUMNS (c INT)"]:
        alter(spark, table, clause, clause)
    assert set(table.refused) == set(pairs), table.refused
    got, r = engine_rows(spark, table)
    asked = ours(table, retyped(table, pairs), log=False)
    found = check_columns(table, got, r, ours(table, log=False), asked, pairs=pairs)
    assert not found, "\n".join(found)
