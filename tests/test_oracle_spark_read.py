"""Differential test: the `spark-read` profile against real Spark reading with a declared schema.

Each generated pair writes the data schema W (nested structs, lists, maps; edge values in every
row) with pyarrow or with Spark itself, then `spark.read.schema(R)` reads it and collects. Our
verdict on the file's footer (no error-severity problem) must equal Spark's success, and on
success every value must come through exactly, element by element."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from schemaguard.base import errors
from schemaguard.formats.notation import dumps
from schemaguard.formats.spark import schema_to_spark_json
from schemaguard.formats.spark_view import spark_view
from schemaguard.model import ListType, MapType, Schema, StructType, walk
from schemaguard.rules.identity import match_fields
from schemaguard.rules.profiles import can_read
from tests.oracles import (
    RELABELS,
    WRITERS,
    oracle_settings,
    predicted,
    refusal,
    related_pairs,
    same,
    writable,
    write_file,
)

ORACLE = oracle_settings(50)


def declarable(schema: Schema) -> bool:
    """A Spark reader can only declare types Spark has."""
    return not any(isinstance(spark_view(t), str) for _, t, _ in walk(schema)
                   if not isinstance(t, StructType | ListType | MapType))


def spark_read(
    spark: Any, writer: Schema, reader: Schema, who: str
) -> tuple[bool, list[Any], list[dict[str, Any]], str, Schema]:
    """Spark's read of the writer's file with the reader's schema declared: (read, values read,
    rows written, Spark's refusal, the file's schema as its footer holds it)."""
    from pyspark.sql.types import StructType as SparkStruct

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "part-0.parquet"
        rows, footer = write_file(spark, writer, path, who)
        declared = SparkStruct.fromJson(json.loads(schema_to_spark_json(reader)))
        try:
            got = [r.asDict(recursive=True) for r in spark.read.schema(declared).parquet(str(path)).collect()]
        except Exception as e:  # Spark's "no", when its condition is one a rule predicts
            return False, [], rows, refusal(e), footer
    return True, got, rows, "", footer


def changed_values(writer: Schema, reader: Schema, rows: list[dict[str, Any]], got: list[Any]) -> str:
    """The first value Spark read differently from what was written, or ''."""
    for written, read in zip(rows, got, strict=True):
        for p in match_fields(writer.fields, reader.fields, "name-ci"):
            if p.reader is None:
                continue
            expected = written.get(p.writer.name) if p.writer else None
            if not same(expected, read[p.reader.name]):
                return f"{p.reader.name}: wrote {expected!r}, Spark read {read[p.reader.name]!r}"
    return ""


def check_read(spark: Any, writer: Schema, reader: Schema, who: str) -> None:
    """A loud break exactly where Spark fails, for the reason our rule names; a quiet break exactly
    where Spark "succeeds" with changed values (an int read as a narrower one, wrapped), or with
    the very values under another meaning (`RELABELS`)."""
    ok, got, rows, error, footer = spark_read(spark, writer, reader, who)
    changed = changed_values(footer, reader, rows, got) if ok else ""
    problems = errors(can_read(footer, reader, "spark-read"))
    loud, quiet = [p for p in problems if not p.quiet], [p for p in problems if p.quiet]
    context = (f"ours={[(p.path, p.code) for p in problems]} spark="
               f"{error or ('read, but values changed: ' + changed if changed else 'ok')}\n"
               f"{who}: W={dumps(footer)}\nR={dumps(reader)}")
    assert bool(loud) == (not ok), context
    if not ok:  # both refuse: for the reason our rule names
        assert predicted({p.rule.id for p in loud}, error), (error, problems)
    elif changed:
        assert quiet, context
    else:
        assert all(p.rule.id in RELABELS for p in quiet), context


def read_cases() -> st.SearchStrategy[tuple[Schema, Schema, str]]:
    return st.tuples(related_pairs(), st.sampled_from(WRITERS)).map(lambda x: (*x[0], x[1])).filter(
        lambda c: writable(c[0]) and declarable(c[1]))


@ORACLE
@given(case=read_cases())
def test_spark_read_agrees_with_spark(spark: Any, case: tuple[Schema, Schema, str]) -> None:
    check_read(spark, *case)


def test_spark_session_is_utc(spark: Any) -> None:
    """Timestamps compare as wall-clock values: the shared session must not shift them."""
    assert spark.conf.get("spark.sql.session.timeZone") in ("UTC", "Etc/UTC")


def test_a_name_two_columns_match_case_insensitively_fails_as_spark_fails(spark: Any, tmp_path: Path) -> None:
    """A file holding `a` and `A` (top level, and inside a struct): Spark's case-insensitive read
    of `a` fails; of another column, or case-sensitively, it reads. Our verdict each way."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.types import StructType as SparkStruct

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
    for declared, case_sensitive, fails in (
            ({"name": "a", "type": "int32"}, False, True), ({"name": "b", "type": "int32"}, False, False),
            ({"name": "a", "type": "int32"}, True, False),
            ({"name": "s", "type": {"struct": [{"name": "x", "type": "int32"}]}}, False, True)):
        reader = schema_from_notation({"fields": [declared]})
        with spark_conf(spark, spark__sql__caseSensitive=str(case_sensitive).lower()):
            try:
                spark.read.schema(SparkStruct.fromJson(json.loads(schema_to_spark_json(reader)))) \
                    .parquet(str(path)).collect()
                refused = ""
            except Exception as e:
                refused = " ".join(conditions(e, message=True))
        ours = errors(can_read(footer, reader, "spark-read", Options(case_sensitive=case_sensitive)))
        # Spark 4.1's condition for "Found duplicate field(s) ... in case-insensitive mode"
        assert ("_LEGACY_ERROR_TEMP_2093" in refused if fails else refused == ""), (declared, refused)
        assert [p.code for p in ours] == (["AMBIGUOUS_COLUMN"] if fails else []), (declared, ours)
