"""Proofs on the data, for the files statistics leave undecided: read only those files and only
the columns a proof needs, with Spark, and validate with Great Expectations Core 1.x.

Files are read one schema version at a time (each version's files share one footer schema, so no
file of another version can fail the read) with the table root as `basePath` (Spark adds the
partition columns), and the versions are unioned by name.

Every proof of a table is answered in one pass (`one_pass`): one aggregation per file holding,
for each proof, the rows its condition selects (`count_if`, in Spark SQL whose literals keep
decimals and 64-bit integers exact: GX's between-expectation compares through double) and the
extremes a drift proof needs. Great Expectations validates that result in-process (a pandas
batch: each proof's count expected to be 0 in every file). A refuted proof is then asked again on
the files holding its offending rows alone (`prove_on_data`: an `UnexpectedRowsExpectation` over
the rows, ephemeral context, Spark data source, whole DataFrame batch) for a sample of them.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from schemaguard.errors import first_line, quiet_logger
from schemaguard.formats.parquet import FileFooter
from schemaguard.formats.spark import SparkSchemaError, schema_to_spark_json
from schemaguard.formats.spark_ddl import quoted
from schemaguard.formats.spark_view import SparkUnreadable, spark_schema
from schemaguard.model import DataType, DecimalType, FloatType, IntType, Schema
from schemaguard.paths import segment
from schemaguard.proofs import SAMPLE, Proof
from schemaguard.proofs.stats import range_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FILE_COLUMN = "__schemaguard_file"


def preload() -> threading.Thread:
    """Import Great Expectations in the background (3-4 s of imports here) while the JVM starts, for
    a run that starts Spark and has proofs: the import then overlaps the start instead of following
    the first proof that reads data. A failed import is met again, and reported, where it is used."""

    def load() -> None:
        with contextlib.suppress(Exception):  # reported by the proof that needs it
            importlib.import_module("great_expectations")

    thread = threading.Thread(target=load, name="schemaguard-gx-import", daemon=True)
    thread.start()
    return thread


class DataProofError(Exception):
    """Spark or Great Expectations could not evaluate a proof on the data (the why is one line)."""


@dataclass(frozen=True, slots=True)
class DataOutcome:
    bad: int  # offending rows
    bad_files: dict[str, int]  # file rel -> offending rows
    rows_read: int
    bytes_read: int
    sample: tuple[dict[str, Any], ...]


def prove_on_data(spark: SparkSession, root: str, proof: Proof, files: Sequence[FileFooter],
                  columns: Sequence[str], keys: Sequence[str], with_values: bool,
                  source: DataType | None = None, target: DataType | None = None) -> DataOutcome:
    """Read `files` (their `columns` and `keys`; every column for an expression) and count the
    rows that break `proof`; `source` and `target` are the column's type and the narrower one
    (`fits`)."""
    df = _read(spark, root, files, [*columns, *keys] if columns else None)
    bad = condition(proof, columns, source, target)
    shown = [*keys, *columns] if with_values else list(keys)
    try:
        count, sample = _validate(df, bad, [FILE_COLUMN, *shown])
    except DataProofError:
        _spark_error(df, bad)  # Great Expectations may say only "no result": name Spark's own error
        raise
    by_file: dict[str, int] = {}
    if count:
        rel_of = _Files(files)
        for row in df.where(bad).groupBy(FILE_COLUMN).count().collect():
            by_file[rel_of(row[0])] = int(row[1])
        sample = tuple({"file": rel_of(r.get(FILE_COLUMN)),
                        **{k: v for k, v in r.items() if k != FILE_COLUMN}} for r in sample)
    return DataOutcome(count, by_file, sum(f.rows for f in files), sum(f.size for f in files), sample)


@dataclass(frozen=True, slots=True)
class Question:
    """What one proof asks of the data pass: the Spark SQL condition its offending rows meet (None:
    none) and the column whose smallest and largest value per file it needs (a drift)."""

    condition: str | None
    extremes: str | None = None


@dataclass(frozen=True, slots=True)
class PassResult:
    """Per question (by index): each file's offending rows (files without any left out), and
    each file's (min, max) of the asked column."""

    bad: dict[int, dict[str, int]]
    extremes: dict[int, dict[str, tuple[Any, Any]]]


def one_pass(spark: SparkSession, root: str, files: Sequence[FileFooter], columns: Sequence[str] | None,
             questions: Sequence[Question]) -> PassResult:
    """Every question over `files` in one read of the data: a per-file aggregation (one Spark
    job over the rows, as a hand-written query would be), whose collected result Great
    Expectations validates in-process (each question's count expected to be 0 in every file) and
    from which the extremes are taken. Linear in rows, and in files times questions after."""
    from pyspark.sql import functions as F

    counted = {i: f"bad_{i}" for i, q in enumerate(questions) if q.condition is not None}
    asked = [i for i, q in enumerate(questions) if q.extremes is not None]
    with _spark_failures():  # the union of versions (a type no union takes) or any query may fail
        aggregates = [F.count_if(F.expr(questions[i].condition or "")).alias(name)
                      for i, name in counted.items()]
        for i in asked:
            column = quoted(questions[i].extremes or "")
            aggregates += [F.min(column).alias(f"min_{i}"), F.max(column).alias(f"max_{i}")]
        rows = _read(spark, root, files, columns).groupBy(FILE_COLUMN).agg(*aggregates).collect()
    rel_of = _Files(files)
    rels = [rel_of(r[FILE_COLUMN]) for r in rows]
    counts = {name: [int(r[name]) for r in rows] for name in counted.values()}
    failing = _validate_counts(counts)
    bad = {i: {rels[k]: counts[name][k] for k in failing[name]} for i, name in counted.items()}
    extremes = {i: {rel: (r[f"min_{i}"], r[f"max_{i}"]) for rel, r in zip(rels, rows, strict=True)}
                for i in asked}
    return PassResult(bad, extremes)


def _validate_counts(counts: dict[str, list[int]]) -> dict[str, list[int]]:
    """GX's verdict on the per-file counts (a column per question, a row per file): for each
    column, the rows (files) where it is not 0."""
    import great_expectations as gx
    import pandas as pd
    from great_expectations.expectations.core.expect_column_values_to_be_between import (
        ExpectColumnValuesToBeBetween,
    )

    if not counts:
        return {}
    with quiet_logger("great_expectations"):
        batch = _gx_context().data_sources.add_pandas(name="counts").add_dataframe_asset(name="files") \
            .add_batch_definition_whole_dataframe("whole").get_batch(
                batch_parameters={"dataframe": pd.DataFrame(counts)})
        suite = gx.ExpectationSuite(name="proofs", expectations=[
            ExpectColumnValuesToBeBetween(column=name, min_value=0, max_value=0) for name in counts])
        result = batch.validate(suite, result_format={"result_format": "COMPLETE"})
    failing: dict[str, list[int]] = {}
    for r in result.results:
        info = r.exception_info or {}
        if info.get("raised_exception") or "unexpected_index_list" not in (r.result or {}):
            raise DataProofError(first_line(Exception(info.get("exception_message") or "no result")))
        failing[r.expectation_config.kwargs["column"]] = [int(k) for k in r.result["unexpected_index_list"]]
    return failing


def values_on_data(spark: SparkSession, root: str, files: Sequence[FileFooter], column: str
                   ) -> dict[str, dict[str, int]]:
    """Each file's observed values of `column` (as strings; nulls left out) with their rows."""
    from pyspark.sql import functions as F

    df = _read(spark, root, files, [column])
    rel_of = _Files(files)
    out: dict[str, dict[str, int]] = {}
    for row in df.where(f"{quoted(column)} IS NOT NULL").groupBy(
            FILE_COLUMN, F.col(quoted(column)).cast("string")).count().collect():
        out.setdefault(rel_of(row[0]), {})[row[1]] = int(row[2])
    return out


def extremes_on_data(spark: SparkSession, root: str, files: Sequence[FileFooter], column: str
                     ) -> tuple[dict[str, tuple[Any, Any]], int, int]:
    """Each file's min and max of `column` (a plain Spark aggregation: no expectation applies),
    and the rows and bytes read."""
    from pyspark.sql import functions as F

    df = _read(spark, root, files, [column])
    rel_of = _Files(files)
    rows = df.groupBy(FILE_COLUMN).agg(F.min(quoted(column)), F.max(quoted(column))).collect()
    return ({rel_of(r[0]): (r[1], r[2]) for r in rows}, sum(f.rows for f in files),
            sum(f.size for f in files))


class _Files:
    """Spark's `input_file_name()` back to the table-relative path: Spark spells a local file as a
    percent-encoded `file:` URI (a space is `%20`), so both sides are compared decoded, bare."""

    def __init__(self, files: Sequence[FileFooter]) -> None:
        self._rel = {_bare(f.path): f.rel for f in files}

    def __call__(self, spelled: object) -> str:
        text = str(spelled)
        return self._rel.get(_bare(unquote(text)), text)


def _bare(path: str) -> str:
    return path.removeprefix("file://") if path.startswith("file:///") else path.removeprefix("file:")


def _read(spark: SparkSession, root: str, files: Sequence[FileFooter],
          wanted: Sequence[str] | None) -> DataFrame:
    """The files' `wanted` columns (by their names in each version, case-insensitively; None:
    all), plus the file each row comes from; one read per schema version, unioned by name."""
    from pyspark.sql import functions as F

    groups: dict[str, list[FileFooter]] = {}
    for f in files:
        groups.setdefault(f.fingerprint, []).append(f)
    frames = []
    for members in groups.values():
        reader = spark.read.option("basePath", root)
        requested = _requested(members[0].footer.schema, wanted)
        if requested is not None:
            from pyspark.sql.types import StructType

            reader = reader.schema(StructType.fromJson(json.loads(requested)))
        df = reader.parquet(*(f.path for f in members))
        present = {segment(c).lower(): c for c in df.columns}  # a top-level column as a path names it
        cols = [F.col(quoted(c)) for c in df.columns] if wanted is None else [
            F.col(quoted(present[w.lower()])).alias(w) for w in dict.fromkeys(wanted) if w.lower() in present]
        frames.append(df.select(*cols, F.input_file_name().alias(FILE_COLUMN)))
    out = frames[0]
    for other in frames[1:]:
        out = out.unionByName(other, allowMissingColumns=True)
    for w in dict.fromkeys(wanted or ()):  # a column no version holds reads as null, as a reader fills it
        if w not in out.columns:
            out = out.withColumn(w, F.lit(None))
    return out


def _requested(schema: Schema, wanted: Sequence[str] | None) -> str | None:
    """The Spark schema that reads only the wanted top-level columns of one version (None: all),
    as Spark types them: a column of the file that Spark cannot read (FLOAT16, say) is then never
    asked for, and Spark infers nothing (inferring reads footers again, in a job of its own). None
    (let Spark read the footer) when a column has no Spark type."""
    keep = None if wanted is None else {w.lower() for w in wanted}
    fields = tuple(f for f in schema.fields if keep is None or segment(f.name).lower() in keep)
    try:
        return schema_to_spark_json(spark_schema(Schema(fields))) if fields else None
    except (SparkUnreadable, SparkSchemaError):
        return None


def condition(proof: Proof, columns: Sequence[str], source: DataType | None, target: DataType | None) -> str:
    """The Spark SQL condition that selects the rows breaking the proof."""
    c = quoted(columns[0]) if columns else ""
    if proof.kind == "backfilled" and proof.source is not None:
        return f"{c} IS NULL AND {quoted(columns[1])} IS NOT NULL"
    if proof.kind in ("not-null", "backfilled"):
        return f"{c} IS NULL"
    if proof.kind == "values":
        allowed = ", ".join(_string(v) for v in proof.allowed or ())
        return f"{c} IS NOT NULL AND CAST({c} AS STRING) NOT IN ({allowed})" if allowed else "false"
    if proof.kind == "agree":
        if len(columns) == 2:
            a, b = (quoted(x) for x in columns)
            return f"{a} IS NOT NULL AND {b} IS NOT NULL AND NOT ({a} <=> {b})"
        return f"NOT ({proof.column})"  # null when a side is missing: not selected
    assert target is not None and source is not None
    return _out_of_range(c, source, target)


def _out_of_range(c: str, source: DataType, target: DataType) -> str:
    """Rows whose value the narrower type cannot hold, compared exactly in the column's own type
    (Spark compares two decimals of different scales by rounding one when their common type
    would pass 38 digits, so no comparison here mixes types): an integer column against BIGINT
    bounds, a decimal column against bounds cut to its own scale (for a value of that scale,
    `x > top` holds exactly when `x > top cut to the scale`) plus the values a smaller scale
    would round (a round trip through the target's scale that changes them). A floating column
    is compared as a double, as its values are."""
    bounds = range_of(target)
    assert bounds is not None
    low, high, scale = bounds
    if isinstance(source, FloatType):
        top = f"{c} >= {float(high + 1)!r}D" if isinstance(target, IntType) else f"{c} > {float(high)!r}D"
        whole = f" OR {c} <> floor({c})" if isinstance(target, IntType) else ""
        return f"({c} < {float(low)!r}D OR {top}{whole})"
    if isinstance(source, IntType):
        held = range_of(source)
        assert held is not None
        lo, hi = _cut(low, 0, ROUND_CEILING), _cut(high, 0, ROUND_FLOOR)
        parts = [*([f"{c} < {lo}L"] if lo > held[0] else []), *([f"{c} > {hi}L"] if hi < held[1] else [])]
        return "(" + " OR ".join(parts) + ")" if parts else "false"  # a bound past the column's own: no test
    assert isinstance(source, DecimalType)
    p, s = source.precision, source.scale
    own = f"DECIMAL({p}, {s})"
    parts = []
    largest = Decimal(f"{10 ** p - 1}E{-s}")
    if largest > high or largest.copy_negate() < low:
        parts.append(f"{c} < CAST('{_cut(low, s, ROUND_CEILING)}' AS {own}) "
                     f"OR {c} > CAST('{_cut(high, s, ROUND_FLOOR)}' AS {own})")
    kept = scale if scale is not None else 0
    if s > kept:  # a value with more decimals than the target keeps changes on the round trip
        parts.append(f"NOT (try_cast(try_cast({c} AS DECIMAL(38, {kept})) AS {own}) <=> {c})")
    return "(" + " OR ".join(parts) + ")" if parts else "false"


_WIDE = Context(prec=120)  # room for any 38-digit decimal and the int64 range: nothing rounds


def _cut(value: Decimal, scale: int, rounding: str) -> Decimal:
    """`value` at `scale` decimals, rounded as asked, every digit kept."""
    return value.quantize(Decimal(f"1E{-scale}"), rounding=rounding, context=_WIDE)


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _validate(df: DataFrame, bad: str, shown: Sequence[str]) -> tuple[int, tuple[dict[str, Any], ...]]:
    """GX's verdict on one condition: the number of offending rows and a sample of them."""
    from great_expectations.expectations.core.unexpected_rows_expectation import UnexpectedRowsExpectation

    with quiet_logger("great_expectations"):
        source = _gx_context().data_sources.add_spark(name="lake", persist=False)
        asset = source.add_dataframe_asset(name="files")
        batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(
            batch_parameters={"dataframe": df})
        columns = ", ".join(quoted(c) for c in shown) or "1"
        expectation = UnexpectedRowsExpectation(
            unexpected_rows_query=f"SELECT {columns} FROM {{batch}} WHERE {bad}")
        with _kept_view(df.sparkSession, GX_VIEW):
            result = batch.validate(expectation, result_format={"result_format": "COMPLETE"})
    info = result.exception_info or {}
    if info.get("raised_exception") or "observed_value" not in (result.result or {}):
        # GX reports a failed query as a result, not an error: never read it as "no offending row"
        raise DataProofError(first_line(Exception(info.get("exception_message") or "no result")))
    count = int(result.result["observed_value"])
    rows = (result.result.get("details") or {}).get("unexpected_rows") or []
    return count, tuple(_row(r) for r in rows[:SAMPLE])


def _gx_context() -> Any:
    """An ephemeral Great Expectations context that draws no progress bars (stderr is for our
    own lines)."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


def _spark_error(df: DataFrame, bad: str) -> None:
    """Run the condition's query in Spark itself and raise its failure as a DataProofError (Spark's
    message names the file it could not read); return when Spark runs it."""
    with _spark_failures():
        df.where(bad).limit(1).collect()


@contextlib.contextmanager
def _spark_failures() -> Iterator[None]:
    """A Spark failure inside as one DataProofError line (a task's: the JVM exception's own
    message, which names the file)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    try:
        yield
    except PySparkException as e:
        raise DataProofError(first_line(e)) from None
    except Py4JJavaError as e:
        raise DataProofError(first_line(Exception(str(e.java_exception.getMessage())))) from None


# Great Expectations runs a query expectation over a temp view it names `tmp_view` (its query
# metrics call createOrReplaceTempView("tmp_view")): a caller's own view of that name is put back.
GX_VIEW = "tmp_view"


@contextlib.contextmanager
def _kept_view(spark: SparkSession, name: str) -> Iterator[None]:
    """Leave the session's temp view `name` as it was: put back if it existed, else dropped."""
    theirs = spark.table(name) if _temp_view(spark, name) else None
    try:
        yield
    finally:
        if theirs is not None:
            theirs.createOrReplaceTempView(name)
        else:
            spark.catalog.dropTempView(name)


def _temp_view(spark: SparkSession, name: str) -> bool:
    """Whether the session has a temp view `name`, asked of its session catalog alone: listing
    tables would start the metastore (embedded Derby: seconds, and one process a folder)."""
    session = getattr(spark, "_jsparkSession", None)
    if session is not None:
        return bool(session.sessionState().catalog().getTempView(name).isDefined())
    return any(t.isTemporary and t.name == name for t in spark.catalog.listTables(pattern=name))  # Connect


def _row(r: Any) -> dict[str, Any]:
    data = r.asDict() if hasattr(r, "asDict") else dict(r)
    return {k: v if isinstance(v, int | float | str | bool) or v is None else str(v) for k, v in data.items()}


def named_columns(proof: Proof) -> list[str]:
    """The columns a proof names (an `agree` expression's names are Spark's to find)."""
    if proof.kind == "agree":
        left, sep, right = proof.column.partition("=")
        if sep and left.strip().isidentifier() and right.strip().isidentifier() and "=" not in right:
            return [left.strip(), right.strip()]
        return []
    if proof.kind == "backfilled" and proof.source is not None:
        return [proof.column, proof.source]
    return [proof.column]
