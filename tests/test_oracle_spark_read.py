"""Differential test: the `spark-read` profile against real Spark reading with a declared schema.

Each generated pair writes the data schema W with pyarrow, then `spark.read.schema(R)` reads it
and collects. Our verdict (no error-severity problem) must equal Spark's success, and on success
every value must come through unchanged (the sample values are small enough for every type)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings

from schemaguard.base import errors, spark_view
from schemaguard.formats.notation import dumps
from schemaguard.formats.spark import schema_to_spark_json
from schemaguard.model import ListType, MapType, Schema, StructType, walk
from schemaguard.rules.identity import match_fields
from schemaguard.rules.profiles import can_read
from tests.oracles import predicted, refusal, related_pairs, writable, write_parquet

ORACLE = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.function_scoped_fixture])


def declarable(schema: Schema) -> bool:
    """A Spark reader can only declare types Spark has."""
    return not any(isinstance(spark_view(t), str) for _, t, _ in walk(schema)
                   if not isinstance(t, StructType | ListType | MapType))


def spark_read(
    spark: Any, writer: Schema, reader: Schema
) -> tuple[bool, list[Any], list[dict[str, Any]], str]:
    from pyspark.sql.types import StructType as SparkStruct

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "part-0.parquet"
        rows = write_parquet(writer, path)
        declared = SparkStruct.fromJson(json.loads(schema_to_spark_json(reader)))
        try:
            got = [r.asDict(recursive=True) for r in spark.read.schema(declared).parquet(str(path)).collect()]
        except Exception as e:  # Spark's "no", when its condition is one a rule predicts
            return False, [], rows, refusal(e)
    return True, got, rows, ""


def same(expected: Any, got: Any) -> bool:
    """Value equality across the representations a widening read produces."""
    if expected is None or got is None:
        return expected is None and got is None
    if isinstance(expected, dict):
        return isinstance(got, dict) and all(same(v, _ci_get(got, k)) for k, v in expected.items()
                                             if _ci_get(got, k, missing=True) is not _MISSING)
    if isinstance(expected, list) and isinstance(got, dict):  # a map: pyarrow's (key, value) pairs
        return len(expected) == len(got) and all(same(v, got.get(k)) for k, v in expected)
    if isinstance(expected, list):  # every element, not only how many
        return isinstance(got, list) and len(expected) == len(got) and all(
            same(e, g) for e, g in zip(expected, got, strict=True))
    text = (bytes, bytearray, str)
    if isinstance(expected, text) != isinstance(got, text):
        return False  # e.g. a decimal read as its raw bytes
    if isinstance(expected, text):
        as_bytes = [x.encode() if isinstance(x, str) else bytes(x) for x in (expected, got)]
        return as_bytes[0] == as_bytes[1]
    if isinstance(expected, dt.datetime | dt.date) != isinstance(got, dt.datetime | dt.date):
        return False  # e.g. a date read as its day number: another value
    if isinstance(expected, dt.datetime | dt.date):
        return _wall(expected) == _wall(got)
    if isinstance(expected, int | float | decimal.Decimal) and isinstance(got, int | float | decimal.Decimal):
        return bool(expected == got)
    return bool(expected == got)


_MISSING = object()


def _ci_get(d: dict[str, Any], key: str, missing: bool = False) -> Any:
    for k, v in d.items():
        if k.lower() == key.lower():
            return v
    return _MISSING if missing else None


def _wall(x: dt.date) -> dt.datetime:
    if isinstance(x, dt.datetime):
        return x.astimezone(dt.UTC).replace(tzinfo=None) if x.tzinfo else x
    return dt.datetime(x.year, x.month, x.day)


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


@ORACLE
@given(pair=related_pairs())
def test_spark_read_agrees_with_spark(spark: Any, pair: tuple[Schema, Schema]) -> None:
    """Spark "succeeding" with changed values (e.g. a FIXED_LEN_BYTE_ARRAY decimal read as its raw
    bytes) is a failure to read: the oracle's verdict is success with the values unchanged."""
    writer, reader = pair
    assume(writable(writer) and declarable(reader))
    ok, got, rows, error = spark_read(spark, writer, reader)
    if ok and (changed := changed_values(writer, reader, rows, got)):
        ok, error = False, f"read, but values changed: {changed}"
    problems = can_read(writer, reader, "spark-read")
    assert (not errors(problems)) == ok, (f"ours={[(p.path, p.code) for p in problems]} "
                                          f"spark={error or 'ok'}\nW={dumps(writer)}\nR={dumps(reader)}")
    if not ok and not error.startswith("read, but"):  # both refuse: for the reason our rule names
        assert predicted({p.rule.id for p in errors(problems)}, error), (error, problems)


def test_spark_session_is_utc(spark: Any) -> None:
    """Timestamps compare as wall-clock values: the shared session must not shift them."""
    assert spark.conf.get("spark.sql.session.timeZone") in ("UTC", "Etc/UTC")
