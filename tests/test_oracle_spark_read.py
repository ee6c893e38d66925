"""Differential test: the `spark-read` profile against real Spark reading with a declared schema.

Each generated pair writes the data schema W (nested structs, lists, maps; edge values in every
row) with pyarrow or with Spark itself, then `spark.read.schema(R)` reads it and collects. Our
verdict on the file's footer (no error-severity problem) must equal Spark's success, and on
success every value must come through exactly as the declared type holds it (`spark_value`),
element by element: a changed value is a quiet break our verdict must name, and a relabel (the
very values under another meaning, `relabels`) one it must name with that rule at that column."""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemaguard.base import errors
from schemaguard.formats.notation import dumps
from schemaguard.formats.spark import schema_to_spark_json
from schemaguard.formats.spark_view import spark_view
from schemaguard.model import ListType, MapType, Schema, StructType, walk
from schemaguard.rules.profiles import can_read
from tests.exact import NoExactValue, first_difference
from tests.oracles import (
    WRITERS,
    oracle_settings,
    predicted,
    refusal,
    relabels,
    related_pairs,
    spark_fields,
    spark_value,
    writable,
    write_file,
)

ORACLE = oracle_settings(50)


def declarable(schema: Schema) -> bool:
    """A Spark reader can only declare types Spark has."""
    return not any(isinstance(spark_view(t), str) for _, t, _ in walk(schema)
                   if not isinstance(t, StructType | ListType | MapType))


def declared(reader: Schema) -> Any:
    """The reader's schema as Spark is told it (a pyspark StructType)."""
    from pyspark.sql.types import StructType as SparkStruct

    return SparkStruct.fromJson(json.loads(schema_to_spark_json(reader)))


def spark_read(
    spark: Any, writer: Schema, reader: Schema, who: str
) -> tuple[bool, list[Any], list[dict[str, Any]], str, Schema]:
    """Spark's read of the writer's file with the reader's schema declared: (read, values read,
    rows written, Spark's refusal, the file's schema as its footer holds it)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "part-0.parquet"
        rows, footer = write_file(spark, writer, path, who)
        try:
            read = spark.read.schema(declared(reader)).parquet(str(path))
            got = [r.asDict(recursive=True) for r in read.collect()]
        except Exception as e:  # Spark's "no", when its condition is one a rule predicts
            return False, [], rows, refusal(e), footer
    return True, got, rows, "", footer


def changed_values(writer: Schema, read_as: Schema, rows: list[dict[str, Any]], got: list[Any]) -> str:
    """The first value Spark read other than the declared schema `read_as` holds the written one
    (`spark_value`), or ''."""
    w, r = StructType(writer.fields), StructType(read_as.fields)
    for i, (written, read) in enumerate(zip(rows, got, strict=True)):
        try:
            expected = spark_value(written, w, r)
        except NoExactValue as e:  # any value read is a change
            return f"row {i}: {e}; Spark read {read!r}"
        if difference := first_difference(expected, read, f"row {i}"):
            return difference
    return ""


def check_read(spark: Any, writer: Schema, reader: Schema, who: str) -> str | None:
    """A loud break exactly where Spark fails, for the reason our rule names; a quiet break exactly
    where Spark "succeeds" with changed values (an int read as a narrower one, wrapped), or with
    the very values under another meaning: each relabel `relabels` states, named by its rule at its
    column, and no other. Returns the first changed value ('' when none), None when Spark refused."""
    ok, got, rows, error, footer = spark_read(spark, writer, reader, who)
    read_as = Schema(spark_fields(declared(reader)))
    changed = changed_values(footer, read_as, rows, got) if ok else ""
    stated = set(relabels(StructType(footer.fields), StructType(read_as.fields)).items())
    problems = errors(can_read(footer, reader, "spark-read"))
    loud, quiet = [p for p in problems if not p.quiet], [p for p in problems if p.quiet]
    named = {(p.path, p.rule.id) for p in quiet}
    context = (f"ours={[(p.path, p.code) for p in problems]} spark="
               f"{error or ('read, but values changed: ' + changed if changed else 'ok')} "
               f"relabels={sorted(stated)}\n{who}: W={dumps(footer)}\nR={dumps(reader)}")
    assert bool(loud) == (not ok), context
    if not ok:  # both refuse: for the reason our rule names
        assert predicted({p.rule.id for p in loud}, error), (error, problems)
        return None
    assert stated <= named, f"a relabel our verdict does not name: {sorted(stated - named)}\n{context}"
    if changed:
        assert quiet, context
    else:
        assert named <= stated, context
    return changed


def read_cases() -> st.SearchStrategy[tuple[Schema, Schema, str]]:
    return st.tuples(related_pairs(), st.sampled_from(WRITERS)).map(lambda x: (*x[0], x[1])).filter(
        lambda c: writable(c[0]) and declarable(c[1]))


@ORACLE
@given(case=read_cases())
def test_spark_read_agrees_with_spark(spark: Any, case: tuple[Schema, Schema, str]) -> None:
    check_read(spark, *case)


@pytest.mark.parametrize("who", ["pyarrow", "spark"])
def test_each_relabel_is_named_at_its_column(spark: Any, who: str) -> None:
    """Relabels inside a struct (bound across a change of case), a list and a map, on files by
    pyarrow and by Spark (INT96): Spark reads each, and our verdict names each, there and only there."""
    from schemaguard.formats.notation import schema_from_notation

    def schema(name: str, text: str, stamp: str, wall: str) -> Schema:
        return schema_from_notation({"fields": [
            {"name": "s", "type": {"struct": [{"name": name, "type": text}, {"name": "t", "type": stamp}]}},
            {"name": "l", "type": {"list": text, "element_nullable": True}},
            {"name": "m", "type": {"map": ["string", wall], "value_nullable": True}},
            {"name": "u", "type": "timestamp_us_utc"}]})  # read as it is: no relabel

    writer = schema("x", "string", "timestamp_us_utc", "timestamp_us_local")
    reader = schema("X", "binary", "timestamp_us_local", "timestamp_us_utc")
    assert relabels(StructType(writer.fields), StructType(reader.fields)) == {
        "s.X": "spark-read.string-binary", "s.t": "spark-read.timestamp-relabel",
        "l[]": "spark-read.string-binary", "m{value}": "spark-read.timestamp-relabel"}
    assert check_read(spark, writer, reader, who) == "", "Spark reads every value as the relabel says"


def test_spark_session_is_utc(spark: Any) -> None:
    """`spark_value` expects timestamps as their UTC wall clock: the shared session must not shift
    them, nor PySpark, which presents a `timestamp` in the Python process's zone (1900, 1969, 2024)."""
    assert spark.conf.get("spark.sql.session.timeZone") in ("UTC", "Etc/UTC")
    for seconds in (-2_208_988_800, -1, 1_709_208_000):
        utc = dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None)
        assert dt.datetime.fromtimestamp(seconds) == utc, "the Python process does not run in UTC"


def test_a_name_two_columns_match_case_insensitively_fails_as_spark_fails(spark: Any, tmp_path: Path) -> None:
    """A file holding `a` and `A` (top level, and inside a struct): Spark's case-insensitive read
    of `a` fails; of another column, or case-sensitively, it reads. Our verdict each way."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemaguard.base import Options
    from schemaguard.formats.notation import schema_from_notation
    from schemaguard.formats.parquet import read_footer
    from tests.helpers import spark_conf
    from tests.oracles import conditions

    path = tmp_path / "part-0.parquet"
    inner = pa.struct([pa.field("x", pa.int32()), pa.field("X", pa.int32())])
    pq.write_table(pa.table({"a": pa.array([1], pa.int32()), "A": pa.array([2], pa.int32()),
                             "b": pa.array([3], pa.int32()), "s": pa.array([{"x": 4, "X": 5}], inner)}), path)
    footer = read_footer(str(path)).schema
    for column, case_sensitive, fails in (
            ({"name": "a", "type": "int32"}, False, True), ({"name": "b", "type": "int32"}, False, False),
            ({"name": "a", "type": "int32"}, True, False),
            ({"name": "s", "type": {"struct": [{"name": "x", "type": "int32"}]}}, False, True)):
        reader = schema_from_notation({"fields": [column]})
        with spark_conf(spark, spark__sql__caseSensitive=str(case_sensitive).lower()):
            try:
                spark.read.schema(declared(reader)).parquet(str(path)).collect()
                refused = ""
            except Exception as e:
                refused = " ".join(conditions(e, message=True))
        ours = errors(can_read(footer, reader, "spark-read", Options(case_sensitive=case_sensitive)))
        # Spark 4.1's condition for "Found duplicate field(s) ... in case-insensitive mode"
        assert ("_LEGACY_ERROR_TEMP_2093" in refused if fails else refused == ""), (column, refused)
        assert [p.code for p in ours] == (["AMBIGUOUS_COLUMN"] if fails else []), (column, ours)
