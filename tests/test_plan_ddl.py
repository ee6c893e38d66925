"""A change given as Spark SQL DDL (planning/ddl.py): each statement kind, the errors a user meets, and
an oracle: the same DDL run by delta-spark on a real Delta table made from OLD must end with the
schema the planner computes (names, order, types, nullability, nested fields)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schemaguard.formats.notation import loads
from schemaguard.formats.spark import schema_from_spark_json, schema_to_spark_json
from schemaguard.model import Field, ListType, MapType, Schema, SchemaTransform, StructType, transform
from schemaguard.planning.ddl import DdlError, apply_ddl, split_statements

OLD = loads(json.dumps({"fields": [
    {"name": "id", "type": "int64", "nullable": False},
    {"name": "Weight", "type": "int32"},
    {"name": "addr", "type": {"struct": [{"name": "city", "type": "string"}]}},
    {"name": "tags", "type": {"list": "string"}},
]}))


def shape(schema: Schema) -> list[Any]:
    """Names, types and nullability, nested: what a reader sees (no metadata, no ids)."""

    class Bare(SchemaTransform):
        def field(self, f: Field, path: str, type_result: Any) -> Field:
            return Field(f.name, type_result, f.nullable)

    return json.loads(schema_to_spark_json(transform(schema, Bare())))["fields"]  # type: ignore[no-any-return]


def test_each_statement_kind_and_its_line() -> None:
    ddl = """-- rename the weight, then the rest
ALTER TABLE db.orders RENAME COLUMN weight TO weight_kg;

ALTER TABLE orders ADD COLUMNS (note STRING COMMENT 'free text' AFTER id, addr.zip STRING);
ALTER TABLE orders ALTER COLUMN weight_kg TYPE BIGINT;
ALTER TABLE orders ALTER COLUMN weight_kg SET NOT NULL;
ALTER TABLE orders RENAME COLUMN addr.city TO town;
ALTER TABLE orders ADD CONSTRAINT positive CHECK (weight_kg > 0);
ALTER TABLE orders SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name');
ALTER TABLE orders DROP COLUMN tags
"""
    change = apply_ddl(OLD, ddl, "m.sql", "orders")
    assert [(s.line, s.kind) for s in change.statements] == [
        (2, "rename-column"), (4, "add-columns"), (5, "alter-type"), (6, "set-not-null"),
        (7, "rename-column"), (8, "add-constraint"), (9, "set-properties"), (10, "drop-columns")]
    assert change.renames == (("Weight", "weight_kg"), ("addr.city", "addr.town"))
    assert change.properties == (("delta.columnMapping.mode", "name"),)
    assert change.constraints == (("positive", "weight_kg > 0"),)
    names = [(f.name, f.nullable) for f in change.new.fields]
    assert names == [("id", False), ("note", True), ("weight_kg", False), ("addr", True)]
    addr = change.new.fields[3].type
    assert isinstance(addr, StructType) and [f.name for f in addr.fields] == ["town", "zip"]
    assert change.new.fields[1].meta == {"comment": "free text"}


@pytest.mark.parametrize(("ddl", "message"), [
    ("SELECT 1", "m.sql:1: only ALTER TABLE statements describe a change"),
    ("ALTER TABLE orders RENAME COLUMN nope TO x", "m.sql:1: no column nope"),
    ("\n\nALTER TABLE other ADD COLUMN x INT", "m.sql:3: the statement alters other, the plan is for orders"),
    ("ALTER TABLE orders ADD COLUMN x FOO", "m.sql:1: not understood as Spark SQL DDL"),
    ("ALTER TABLE orders ALTER COLUMN id COMMENT 'x'", "m.sql:1: not understood: ALTER COLUMN id COMMENT"),
    ("ALTER TABLE orders ADD COLUMN ID INT", "m.sql:1: ID already exists"),
    ("ALTER TABLE orders ADD COLUMN x INT AFTER nope", "m.sql:1: no column nope"),
    ("ALTER TABLE orders ADD COLUMN tags.x INT", "m.sql:1: tags is not a struct column"),
    ("ALTER TABLE orders ADD COLUMN x GEOMETRY", "m.sql:1:"),
    ("-- nothing\n", "m.sql: no statement"),
    ("ALTER TABLE orders ADD COLUMN x 'unterminated", "m.sql"),
])
def test_a_statement_not_understood_is_one_line_naming_its_line(ddl: str, message: str) -> None:
    with pytest.raises(DdlError) as e:
        apply_ddl(OLD, ddl, "m.sql", "orders")
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(("statement_table", "plan_table", "same"), [
    ("orders", "orders", True), ("db.orders", "orders", True), ("orders", "db.orders", True),
    ("cat.db.orders", "db.orders", True), ("db.orders", "other.orders", False),
    ("`v1.2`", "v1.2", True),  # a folder whose name holds a dot: one name, not two
    ("v1.`2`", "v1.2", False), ("`ord ers`", "ord ers", True), ("`my.orders`", "my.orders", True),
    ("`db.orders`", "db.orders", True), ("`ünï`", "ünï", True),
])
def test_the_table_a_statement_alters_is_compared_by_its_name_parts(
        statement_table: str, plan_table: str, same: bool) -> None:
    ddl = f"ALTER TABLE {statement_table} ADD COLUMN x INT"
    if same:
        assert apply_ddl(OLD, ddl, "m.sql", plan_table).new.fields[-1].name == "x"
    else:
        with pytest.raises(DdlError, match="the plan is for"):
            apply_ddl(OLD, ddl, "m.sql", plan_table)


def test_statements_split_on_semicolons_outside_strings_and_comments() -> None:
    text = ("ALTER TABLE t ADD CONSTRAINT c CHECK (note <> ';');  -- a; comment\n\n"
            "ALTER TABLE t DROP COLUMN a;\n;")
    assert [line for line, _ in split_statements(text, "x")] == [1, 3]


def test_names_match_as_spark_matches_them() -> None:
    change = apply_ddl(OLD, "ALTER TABLE orders ALTER COLUMN WEIGHT TYPE BIGINT", "--ddl")
    assert change.new.fields[1].name == "Weight" and str(change.new.fields[1].type) != str(OLD.fields[1].type)


def test_a_nested_edit_lands_in_the_struct_its_path_resolves_to() -> None:
    """Two structs spelt alike but for case, `S` first: `s.x` resolves to `s` (the exact name
    wins, as Spark resolves it), so the column lands there and `S` is left as it was; deeper
    paths resolve the same way at each level."""
    t = {"name": "t", "type": {"struct": [{"name": "b", "type": "int32"}]}}
    old = loads(json.dumps({"fields": [
        {"name": "S", "type": {"struct": [{"name": "a", "type": "int32"}]}},
        {"name": "s", "type": {"struct": [{"name": "a", "type": "int32"}, t]}},
    ]}))
    change = apply_ddl(old, "ALTER TABLE orders ADD COLUMNS (s.x STRING, s.t.y INT); "
                            "ALTER TABLE orders RENAME COLUMN s.a TO a2", "--ddl")
    assert shape(change.new)[0] == shape(old)[0]  # `S` untouched
    inner = change.new.fields[1].type
    assert isinstance(inner, StructType) and [f.name for f in inner.fields] == ["a2", "t", "x"]
    deep = inner.fields[1].type
    assert isinstance(deep, StructType) and [f.name for f in deep.fields] == ["b", "y"]


def test_types_of_every_kind() -> None:
    ddl = ("ALTER TABLE t ADD COLUMNS (a TINYINT, b SMALLINT, c DECIMAL(12,2), d DECIMAL, e VARCHAR(3), "
           "f TIMESTAMP, g TIMESTAMP_NTZ, h ARRAY<STRUCT<x: INT NOT NULL>>, i MAP<STRING, DOUBLE>, j DATE, "
           "k BINARY, l BOOLEAN, m FLOAT, n VOID)")
    added = {f.name: f.type for f in apply_ddl(OLD, ddl, "--ddl").new.fields[4:]}
    spark = {f["name"]: f["type"] for f in json.loads(schema_to_spark_json(Schema(tuple(
        Field(n, t) for n, t in added.items()))))["fields"]}
    assert spark == {
        "a": "byte", "b": "short", "c": "decimal(12,2)", "d": "decimal(10,0)", "e": "string",
        "f": "timestamp", "g": "timestamp_ntz", "j": "date", "k": "binary", "l": "boolean", "m": "float",
        "n": "void",
        "h": {"type": "array", "elementType": {"type": "struct", "fields": [
            {"name": "x", "type": "integer", "nullable": False, "metadata": {}}]}, "containsNull": True},
        "i": {"type": "map", "keyType": "string", "valueType": "double", "valueContainsNull": True}}
    assert isinstance(added["h"], ListType) and isinstance(added["i"], MapType)


# ---------------------------------------------------------------------------------------------
# The oracle: delta-spark runs the same DDL

SCRIPTS = {
    "rename and drop under column mapping": [
        "ALTER TABLE {t} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
        "'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')",
        "ALTER TABLE {t} RENAME COLUMN Weight TO weight_kg",
        "ALTER TABLE {t} RENAME COLUMN addr.city TO town",
        "ALTER TABLE {t} DROP COLUMN tags",
    ],
    "added columns where FIRST and AFTER put them, nested too": [
        "ALTER TABLE {t} ADD COLUMNS (first_col STRING FIRST, note STRING COMMENT 'n' AFTER id, "
        "addr.zip STRING, m MAP<STRING, ARRAY<DECIMAL(10,2)>>)",
        "ALTER TABLE {t} ADD COLUMN addr.country STRING FIRST",
    ],
    "nullability and a check constraint": [
        "ALTER TABLE {t} ALTER COLUMN id DROP NOT NULL",
        "ALTER TABLE {t} ADD CONSTRAINT positive CHECK (Weight > 0)",
        "ALTER TABLE {t} DROP CONSTRAINT positive",
    ],
    "type widening": [
        "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
        "ALTER TABLE {t} ALTER COLUMN weight TYPE BIGINT",
        "ALTER TABLE {t} CHANGE COLUMN id id BIGINT",
    ],
    "void columns (sqlglot's Spark dialect lacks VOID)": [
        "ALTER TABLE {t} ADD COLUMNS (nothing VOID, s STRUCT<x: VOID, y: INT>)",
        "ALTER TABLE {t} ADD CONSTRAINT still_null CHECK (CAST(nothing AS VOID) IS NULL)",
    ],
    "replace columns": [
        "ALTER TABLE {t} REPLACE COLUMNS (id BIGINT, Weight INT, addr STRUCT<city: STRING>, "
        "tags ARRAY<STRING>, extra DOUBLE)",
    ],
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_new_schema_is_the_one_delta_spark_makes(spark: Any, tmp_path: Path, name: str) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql.types import StructType as SparkStruct

    path = tmp_path / "t"
    # The builder keeps NOT NULL (a DataFrame write would make every column nullable).
    DeltaTable.create(spark).location(str(path)) \
        .addColumns(SparkStruct.fromJson(json.loads(schema_to_spark_json(OLD)))).execute()
    table = f"delta.`{path}`"
    for statement in SCRIPTS[name]:
        spark.sql(statement.format(t=table))
    delta = schema_from_spark_json(spark.read.format("delta").load(str(path)).schema.json())
    ours = apply_ddl(OLD, ";\n".join(s.format(t="orders") for s in SCRIPTS[name]), "m.sql", "orders").new
    assert shape(ours) == shape(delta)


def test_not_null_in_replace_columns_is_refused_as_spark_refuses_it(spark: Any) -> None:
    from pyspark.errors import ParseException

    statement = "ALTER TABLE {t} REPLACE COLUMNS (id BIGINT NOT NULL, Weight INT)"
    with pytest.raises(ParseException, match="NOT NULL is not supported in Hive-style REPLACE COLUMNS"):
        spark.sql(statement.format(t="delta.`/nowhere`"))
    with pytest.raises(DdlError, match=r"m\.sql:1: NOT NULL is not supported in Hive-style REPLACE COLUMNS"):
        apply_ddl(OLD, statement.format(t="orders"), "m.sql", "orders")


# ---------------------------------------------------------------------------------------------
# plan --ddl on the command line


def test_plan_takes_the_change_as_ddl_over_the_tables_schema(tmp_path: Path) -> None:
    from schemaguard.demo import build_demo_lake
    from tests.helpers import assert_usage_error, run

    table = build_demo_lake(tmp_path)
    ddl = tmp_path / "migration.sql"
    ddl.write_text("-- the team's migration\nALTER TABLE orders RENAME COLUMN customer TO customer_id;\n")
    done = run("plan", "--table", str(table), "--ddl-file", str(ddl), "--format", "json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert [(o["kind"], o["path"], o["detail"]) for o in doc["operations"]] == [
        ("rename", "customer_id", "declared")]
    assert doc["steps"][0]["kind"] == "expand"
    rename = "ALTER TABLE orders RENAME COLUMN customer TO customer_id"
    same = run("plan", "--table", str(table), "--ddl", rename, "--format", "json")
    assert json.loads(same.stdout)["operations"] == doc["operations"]
    nope = "ALTER TABLE orders RENAME COLUMN nope TO x"
    assert_usage_error(run("plan", "--table", str(table), "--ddl", nope), "--ddl:1: no column nope")
    assert_usage_error(run("plan", "--table", str(table), "--ddl", "VACUUM orders"), "--ddl:1:")
    assert_usage_error(run("plan", "--table", str(table), "--ddl", "ALTER TABLE other ADD COLUMN x INT"),
                       "the plan is for orders")
    assert_usage_error(run("plan", "--ddl", "ALTER TABLE t ADD COLUMN x INT"),
                       "ddl (--ddl) needs the schema today")
