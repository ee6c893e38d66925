"""Differential test: the `delta-merge-into` profile against real Delta's MERGE INTO with schema
evolution (delta-spark 4.4 on Spark 4.1, spark.sql.storeAssignmentPolicy ANSI, the default).

A Delta table is made from the first schema's edge rows, then a source of the second schema's edge
rows is merged into it with `MERGE WITH SCHEMA EVOLUTION INTO t USING s ON t.k = s.k WHEN MATCHED
THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *` (or the same MERGE without the clause under
`spark.databricks.delta.schema.autoMerge.enabled`), with and without `delta.enableTypeWidening`.
The key `k` makes the source's rows update the table's (values onto values, values onto the table's
row of nulls, the source's row of nulls onto values), insert one row, and leave one row alone.

Our verdict: a loud break exactly where the MERGE fails, for the reason our rule names (only the
engine's named error conditions count as its "no"); where it succeeds, the table's schema after it
as ours, and every value read back exactly as written (the source's, the table's it keeps) unless we
name a quiet break, which must then show in the values (or be a relabel: the very values, another
meaning). Both DataFrames come from Parquet files pyarrow wrote, so every column is nullable here;
NOT NULL columns and spark.sql.caseSensitive have tests of their own below."""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemaguard.base import Options, errors
from schemaguard.formats.notation import dumps, schema_from_notation
from schemaguard.formats.spark_view import as_nullable
from schemaguard.model import (
    DataType,
    DateType,
    DecimalType,
    Field,
    FloatType,
    IntType,
    ListType,
    MapType,
    Schema,
    StructType,
    TimestampType,
)
from schemaguard.rules.profiles import PROFILES, MergeIntoProfile, can_read
from tests.exact import Map, NoExactValue, first_difference
from tests.helpers import spark_conf
from tests.oracles import (
    conditions,
    delta_cases,
    edge_rows,
    oracle_settings,
    predicted,
    refusal,
    relabels,
    spark_fields,
    spark_value,
    write_rows,
)
from tests.test_oracle_delta_merge import check_delta

ORACLE = oracle_settings(5)  # pairs per widening (a MERGE takes seconds); `make oracle` takes 15

KEY = "k"  # in neither schema: the strategies name fields a-e and x-z
TARGET_KEYS = (0, 1, 2, 3, 4)  # the table's 4 edge rows, then its row of nulls
SOURCE_KEYS = (2, 3, 4, 10, 1)  # onto rows 2, 3 and the nulls row 4; a new row 10; the source's nulls onto 1
AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"
EVOLUTIONS = ("sql", "conf")  # MERGE WITH SCHEMA EVOLUTION, or a plain MERGE under AUTO_MERGE
Rows = dict[int, dict[str, Any]]


def keyed(schema: Schema) -> Schema:
    return Schema((Field(KEY, IntType(64), False), *schema.fields))


def merge_into(spark: Any, table: Schema, source: Schema, widening: bool,
               evolution: str) -> tuple[bool, Schema | None, Rows, str, Rows, Rows]:
    """The MERGE of `source`'s edge rows into a Delta table of `table`'s: whether Delta took it,
    the table's schema and rows (by key) after it, the condition of its "no", and the rows written
    (the table's and the source's, by key)."""
    t_rows = {k: {KEY: k, **r} for k, r in zip(TARGET_KEYS, edge_rows(table), strict=True)}
    s_rows = {k: {KEY: k, **r} for k, r in zip(SOURCE_KEYS, edge_rows(source), strict=True)}
    folder = Path(tempfile.mkdtemp(prefix="merge-into-"))
    view = f"merge_source_{uuid.uuid4().hex}"
    try:
        write_rows(keyed(table), list(t_rows.values()), folder / "table.parquet")
        write_rows(keyed(source), list(s_rows.values()), folder / "source.parquet")
        try:
            first = spark.read.parquet(str(folder / "table.parquet"))
            second = spark.read.parquet(str(folder / "source.parquet"))
        except Exception as e:  # Spark cannot read the file at all (e.g. NANOS)
            return False, None, {}, refusal(e), t_rows, s_rows
        target = str(folder / "delta")
        first.write.format("delta").save(target)
        if widening:
            spark.sql(f"ALTER TABLE delta.`{target}` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
        second.createOrReplaceTempView(view)
        clause = "WITH SCHEMA EVOLUTION " if evolution == "sql" else ""  # else AUTO_MERGE
        settings = {AUTO_MERGE.replace(".", "__"): "true"} if evolution == "conf" else {}
        with spark_conf(spark, **settings):
            try:
                spark.sql(f"MERGE {clause}INTO delta.`{target}` t USING {view} s ON t.{KEY} = s.{KEY} "
                          "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
            except Exception as e:  # Delta's "no", when its condition is one a rule predicts
                return False, None, {}, refusal(e), t_rows, s_rows
        after = spark.read.format("delta").load(target)
        rows = {r[KEY]: r.asDict(recursive=True) for r in after.collect()}
        return True, Schema(spark_fields(after.schema)), rows, "", t_rows, s_rows
    finally:
        spark.catalog.dropTempView(view)
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# What the table should hold after the MERGE, exactly: the source's values cast to the table's type
# where it writes, the table's where it keeps them (delta-spark 4.4 UpdateExpressionsSupport.castIfNeeded)


def _field(fields: tuple[Field, ...], name: str) -> Field | None:
    return next((f for f in fields if f.name.lower() == name.lower()), None)


def _keeps_fields(source: DataType, after: DataType) -> bool:
    """Does UPDATE SET * keep some of the table's values in this struct: a field the source lacks,
    here or in a struct in it (never in a list or map: `hasExtraStructFieldsToPreserveValue`)?"""
    if not (isinstance(source, StructType) and isinstance(after, StructType)):
        return False
    return any((s := _field(source.fields, f.name)) is None or _keeps_fields(s.type, f.type)
               for f in after.fields)


def cast_value(v: Any, w: DataType, r: DataType) -> Any:
    """A source leaf value of type `w` as the MERGE writes it into a column of type `r` and PySpark
    reads it back, exactly (NoExactValue where the cast changes it): Spark's read conversions
    (`spark_value`), and the two lossless casts no Parquet read makes: a date to a timestamp (its
    midnight in the session's zone, UTC here, which PySpark presents naive) and a number a float holds
    exactly."""
    if isinstance(w, DateType) and isinstance(r, TimestampType):
        return dt.datetime(v.year, v.month, v.day)
    if r == FloatType(32) and isinstance(w, IntType | DecimalType) and float(np.float32(v)) == v:
        return float(v)
    return spark_value(v, w, r)


def expected(written: Any, source: DataType, kept: Any, table: DataType | None, after: DataType,
             keep: bool) -> Any:
    """The value the MERGE leaves from the source's `written` (of type `source`) over the table's
    `kept` (of type `table`; None on an insert or for a column the table lacks), in the column the
    table has `after` it. A struct keeps the table's fields the source lacks (`keep`: not inside a
    list or map, where the source's elements replace the table's), and stays NULL for a NULL source
    unless it keeps a value of the table's."""
    if isinstance(after, StructType) and isinstance(source, StructType):
        keeps = keep and kept is not None and _keeps_fields(source, after)
        if written is None and not keeps:
            return None
        out = {}
        for f in after.fields:
            s = _field(source.fields, f.name)
            t = _field(table.fields, f.name) if isinstance(table, StructType) else None
            old = kept[t.name] if keep and kept is not None and t is not None else None
            if s is None:  # the table's value, read as the column is now
                out[f.name] = spark_value(old, t.type, f.type) if t is not None else None
            else:
                out[f.name] = expected(None if written is None else written[s.name], s.type, old,
                                       None if t is None else t.type, f.type, keep)
        return out
    if written is None:
        return None
    if isinstance(after, ListType) and isinstance(source, ListType):
        return [expected(e, source.element, None, None, after.element, False) for e in written]
    if isinstance(after, MapType) and isinstance(source, MapType):
        return Map({expected(k, source.key, None, None, after.key, False):
                    expected(v, source.value, None, None, after.value, False) for k, v in written})
    return cast_value(written, source, after)


def changed_values(table: Schema, source: Schema, after: Schema, got: Rows, t_rows: Rows,
                   s_rows: Rows) -> str:
    """The first value the table holds after the MERGE other than what the MERGE was to write or
    keep (`expected`), or ''. A column the source lacks keeps the table's value on an update and is
    NULL on an insert; a row the source does not touch stays (a new column NULL in it)."""
    if sorted(got) != sorted(set(t_rows) | set(s_rows)):
        return f"rows {sorted(got)}"
    want_type, source_type = StructType(after.fields), StructType(source.fields)
    for k in sorted(got):
        written, kept = s_rows.get(k), t_rows.get(k)
        try:
            if written is None:  # a row the source does not touch, read as the table is now
                want = spark_value(kept, StructType(table.fields), want_type)
            else:
                want = expected(written, source_type, kept, StructType(table.fields), want_type, keep=True)
        except NoExactValue as e:  # any value is a change
            return f"row {k}: {e}; Delta holds {got[k]!r}"
        if difference := first_difference(want, got[k], f"row {k}"):
            return difference
    return ""


def check_merge_into(spark: Any, table: Schema, source: Schema, widening: bool, evolution: str) -> None:
    ok, after, got, error, t_rows, s_rows = merge_into(spark, table, source, widening, evolution)
    options = Options(type_widening=widening)
    # Spark reads every Parquet column as nullable: the table Delta holds is all nullable
    reader, writer = as_nullable(keyed(table)), as_nullable(keyed(source))
    problems = errors(can_read(writer, reader, "delta-merge-into", options))
    loud, quiet = [p for p in problems if not p.quiet], [p for p in problems if p.quiet]
    changed, stated = "", set()
    if after is not None:  # merged: each relabel `relabels` states, named by our rule of the same kind
        changed = changed_values(keyed(table), keyed(source), after, got, t_rows, s_rows)
        stated = {(path, rule.replace("spark-read.", "delta-merge-into.")) for path, rule in
                  relabels(StructType(writer.fields), StructType(after.fields)).items()}
    context = (f"ours={[(p.path, p.rule.id) for p in problems]} delta="
               f"{error or ('merged, but values changed: ' + changed if changed else 'ok')}\n"
               f"relabels={sorted(stated)}\ntable={dumps(table)}\nsource={dumps(source)}\n"
               f"widening={widening} evolution={evolution}")
    assert bool(loud) == (not ok), context
    if not ok:  # both refuse: for the reason our rule names
        assert predicted({p.rule.id for p in loud}, error), (error, context)
        return
    profile = PROFILES["delta-merge-into"]
    assert isinstance(profile, MergeIntoProfile) and after is not None
    ours = profile.evolve(writer, reader, options).merged
    assert ours is not None and as_nullable(ours) == as_nullable(after), (
        f"\nours ={dumps(as_nullable(ours)) if ours else None}\ndelta={dumps(as_nullable(after))}\n{context}")
    named = {(p.path, p.rule.id) for p in quiet}
    assert stated <= named, f"a relabel our verdict does not name: {sorted(stated - named)}\n{context}"
    if changed:
        assert quiet, context
    else:
        assert named <= stated, context


@pytest.mark.slow
@pytest.mark.parametrize("widening", [False, True])
@ORACLE
@given(pair=delta_cases(), evolution=st.sampled_from(EVOLUTIONS))
def test_delta_merge_into_agrees_with_delta(spark: Any, widening: bool, pair: tuple[Schema, Schema],
                                            evolution: str) -> None:
    check_merge_into(spark, *pair, widening, evolution)


# ---------------------------------------------------------------------------------------------
# Pair by pair: MERGE INTO against an append with mergeSchema (`delta-merge`), both engines and
# both profiles on the same table and data (docs/rules.md "Delta's MERGE INTO")


ID, C = {"name": "id", "type": "int64"}, {"name": "c", "type": "int32"}


def notation(*fields: dict[str, Any]) -> Schema:
    return schema_from_notation({"fields": list(fields)})


def one(t: str) -> Schema:
    return notation(ID, {"name": "c", "type": t})

STRUCT = notation({"name": "s", "type": {"struct": [{"name": "x", "type": "int32"}]}})
STRUCT_MORE = notation({"name": "s", "type": {"struct": [{"name": "x", "type": "int32"},
                                                          {"name": "y", "type": "string"}]}})
LIST = notation({"name": "l", "type": {"list": {"struct": [{"name": "x", "type": "int32"}]}}})
LIST_MORE = notation({"name": "l", "type": {"list": {"struct": [{"name": "x", "type": "int32"},
                                                                 {"name": "y", "type": "string"}]}}})

# (table, source, type widening, the append's verdict, MERGE INTO's: ok, quiet or loud)
PAIRS = [
    (one("int32"), one("int64"), False, "refused", "loud"),  # the append refuses; MERGE overflows
    (one("int32"), one("int64"), True, "ok", "ok"),  # both widen the table to bigint
    (one("int64"), one("int32"), False, "refused", "ok"),  # MERGE casts the narrower data
    (one("int64"), one("int32"), True, "refused", "ok"),  # narrower data fails the append even so
    (one("int8"), one("int32"), False, "ok", "loud"),  # the append makes int; MERGE keeps tinyint
    (one("string"), one("int32"), False, "refused", "quiet"),  # MERGE writes the numbers' text
    (one("int32"), one("string"), False, "refused", "loud"),  # MERGE fails on text that is no number
    (one("decimal(10,2)"), one("decimal(12,2)"), False, "refused", "loud"),  # MERGE overflows
    (one("decimal(10,2)"), one("decimal(10,4)"), False, "refused", "quiet"),  # MERGE rounds
    (one("date"), one("timestamp_us_utc"), False, "refused", "quiet"),  # the time of day goes
    (one("boolean"), one("int32"), False, "refused", "loud"),  # no implicit cast: both refuse
    (one("int32"), notation({**ID, "name": "ID"}, {**C, "name": "C"}, {"name": "d", "type": "string"}), False,
     "ok", "ok"),  # names in another case, a new column
    (one("int32"), notation(ID), False, "ok", "ok"),  # a column the source lacks
    (STRUCT_MORE, STRUCT, False, "ok", "ok"),  # a struct field the source lacks: kept
    (LIST, LIST_MORE, False, "ok", "ok"), (LIST_MORE, LIST, False, "ok", "ok"),  # in a list's structs: NULL
]


def _verdict(problems: list[Any]) -> str:
    bad = errors(problems)
    return "loud" if any(not p.quiet for p in bad) else "quiet" if bad else "ok"


@pytest.mark.parametrize(("table", "source", "widening", "append", "merge"), PAIRS,
                         ids=[f"{dumps(t)}<-{dumps(s)}{'-widening' if w else ''}" for t, s, w, *_ in PAIRS])
def test_merge_into_and_an_append_with_merge_schema_pair_by_pair(
        spark: Any, table: Schema, source: Schema, widening: bool, append: str, merge: str) -> None:
    options = Options(type_widening=widening)
    assert ("ok" if not errors(can_read(source, table, "delta-merge", options)) else "refused") == append
    assert _verdict(can_read(source, table, "delta-merge-into", options)) == merge
    check_delta(spark, table, source, widening)  # each profile against its own engine
    check_merge_into(spark, table, source, widening, "sql")


# ---------------------------------------------------------------------------------------------
# NOT NULL columns and case-sensitive names


def _merge_sql(spark: Any, target: str, source_sql: str) -> str:
    """MERGE WITH SCHEMA EVOLUTION of a query's rows into the table at `target`: Delta's condition
    of its "no", or ''."""
    spark.sql(source_sql).createOrReplaceTempView("not_null_source")
    try:
        spark.sql(f"MERGE WITH SCHEMA EVOLUTION INTO delta.`{target}` t USING not_null_source s "
                  "ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
        return ""
    except Exception as e:
        return " ".join(conditions(e))
    finally:
        spark.catalog.dropTempView("not_null_source")


def test_nulls_into_a_not_null_column_fail_at_the_first_null(spark: Any, tmp_path: Path) -> None:
    """A source that may hold nulls passes the schema check into a NOT NULL column and fails the
    MERGE at its first null (a warning: only the data can tell); a NOT NULL column the source lacks
    keeps its value on an update and fails the first insert (an error: INSERT * writes null)."""
    target = str(tmp_path / "t")
    spark.sql(f"CREATE TABLE delta.`{target}` (id BIGINT, c STRING NOT NULL) USING delta")
    spark.sql(f"INSERT INTO delta.`{target}` VALUES (1L, 'a')")
    nullable = "SELECT 1L AS id, CAST(NULL AS STRING) AS c WHERE false UNION ALL SELECT 2L, 'b'"
    assert _merge_sql(spark, target, nullable) == ""  # no null: written
    assert "DELTA_NOT_NULL_CONSTRAINT_VIOLATED" in _merge_sql(spark, target, "SELECT 3L AS id, "
                                                              "CAST(NULL AS STRING) AS c")
    assert _merge_sql(spark, target, "SELECT 1L AS id") == ""  # an update keeps `c`
    assert "DELTA_NOT_NULL_CONSTRAINT_VIOLATED" in _merge_sql(spark, target, "SELECT 4L AS id")  # an insert
    assert sorted(tuple(r) for r in spark.read.format("delta").load(target).collect()) == [(1, "a"), (2, "b")]
    table = notation(ID, {"name": "c", "type": "string", "nullable": False})
    nulls, missing = (can_read(source, table, "delta-merge-into") for source in (one("string"), notation(ID)))
    assert [(p.path, p.rule.id, p.severity) for p in nulls] == [("c", "delta-merge-into.not-null", "warning")]
    assert [(p.path, p.rule.id, p.severity) for p in missing] == [("c", "delta-merge-into.missing", "error")]
    assert predicted({"delta-merge-into.missing"}, "DELTA_NOT_NULL_CONSTRAINT_VIOLATED")


def test_case_sensitive_names_miss_only_at_the_top_level(spark: Any, tmp_path: Path) -> None:
    """Under spark.sql.caseSensitive a top-level source column spelt in another case is not found
    (DELTA_MISSING_SET_COLUMN); a nested field still matches in any case."""
    target = str(tmp_path / "t")
    spark.sql(f"CREATE TABLE delta.`{target}` (id BIGINT, c INT, s STRUCT<c: INT>) USING delta")
    with spark_conf(spark, spark__sql__caseSensitive="true"):
        top = _merge_sql(spark, target, "SELECT 1L AS id, 1 AS C, named_struct('c', 1) AS s")
        nested = _merge_sql(spark, target, "SELECT 1L AS id, 1 AS c, named_struct('C', 1) AS s")
    assert "DELTA_MISSING_SET_COLUMN" in top and nested == ""
    table = notation(ID, C, {"name": "s", "type": {"struct": [C]}})
    source = notation(ID, {**C, "name": "C"}, {"name": "s", "type": {"struct": [{**C, "name": "C"}]}})
    sensitive = can_read(source, table, "delta-merge-into", Options(case_sensitive=True))
    assert [(p.path, p.rule.id) for p in errors(sensitive)] == [("c", "delta-merge-into.case")]
    assert predicted({"delta-merge-into.case"}, "DELTA_MISSING_SET_COLUMN")
    assert errors(can_read(source, table, "delta-merge-into")) == []
