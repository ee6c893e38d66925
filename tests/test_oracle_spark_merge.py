"""Differential test: the `spark-merge` profile against real Spark's Parquet `mergeSchema`.

Each example is a schema history of 3 to 5 versions (maps, nested structs, lists of structs, kind
changes, renames, case changes, required fields), written one file per version in a drawn order,
each file by pyarrow or by Spark itself (its row metadata, INT-backed decimals, INT96, and its
legacy format's 2-level lists). `spark.read.option("mergeSchema", "true")` infers the schema; our
merge of the footers, in the order Spark lists the files, must equal it. Spark reports every
column nullable on read (docs/reference/parquet-and-spark.md §2.5), so merged schemas are compared with
nullability forced on.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from schemaguard.formats.notation import dumps
from schemaguard.formats.parquet import read_footer
from schemaguard.model import Schema
from schemaguard.rules.profiles import merge_schemas
from tests.oracles import (
    WRITERS,
    as_nullable,
    oracle_settings,
    predicted,
    refusal,
    related_pairs,
    schema_histories,
    spark_fields,
    writable,
    write_file,
    write_parquet,
)

ORACLE = oracle_settings(35)


def spark_merge(spark: Any, folder: Path) -> tuple[bool, Schema | None, str]:
    try:
        schema = spark.read.option("mergeSchema", "true").parquet(str(folder)).schema
    except Exception as e:  # Spark's "no", when its condition is one a rule predicts
        return False, None, refusal(e)
    return True, Schema(spark_fields(schema)), ""


def spark_tasks(files: int, parallelism: int) -> list[slice]:
    """How `mergeSchema` splits the files among its tasks (ParquetFileFormat.mergeSchemasInParallel
    over ParallelCollectionRDD's slices): each task converts and merges its own files in order, the
    driver merges what the tasks return, and the first task to fail names the error. With two
    conflicts in two tasks, Spark's error is either's: both are the engine's "no"."""
    tasks = min(max(files, 1), parallelism)
    return [slice(i * files // tasks, (i + 1) * files // tasks) for i in range(tasks)]


def check_merge(spark: Any, files: list[Schema], writers: list[str]) -> None:
    """`files` in the order Spark lists them, each written by its writer."""
    folder = Path(tempfile.mkdtemp(prefix="merge-"))
    try:
        footers = [write_file(spark, schema, folder / f"part-{k:05d}.parquet", who)[1]
                   for k, (schema, who) in enumerate(zip(files, writers, strict=True))]
        ok, spark_schema, error = spark_merge(spark, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ours = merge_schemas(footers, "spark-merge")
    shown = "\n".join(f"{w}: {dumps(f)}" for w, f in zip(writers, footers, strict=True))
    assert ours.ok == ok, f"ours={ours.conflicts} spark={error or 'ok'}\n{shown}"
    if not ok:  # both refuse: for a reason one of our conflicts names, in the merge or in a task's
        tasks = [merge_schemas(footers[part], "spark-merge")
                 for part in spark_tasks(len(footers), spark.sparkContext.defaultParallelism)]
        reasons = {c.rule.id for result in (ours, *tasks) for c in result.conflicts}
        assert predicted(reasons, error), (error, ours.conflicts, shown)
    if ok:
        assert ours.merged is not None and spark_schema is not None
        assert as_nullable(ours.merged) == as_nullable(spark_schema), (
            f"\nours ={dumps(as_nullable(ours.merged))}\nspark={dumps(as_nullable(spark_schema))}\n{shown}")


@st.composite
def merge_cases(draw: st.DrawFn) -> tuple[list[Schema], list[str]]:
    """A history of 3 to 5 versions in a drawn order, each file by a drawn writer."""
    history = draw(schema_histories(3, 5).filter(lambda h: all(writable(s) for s in h)))
    files = draw(st.permutations(history))
    return files, [draw(st.sampled_from(WRITERS)) for _ in files]


@ORACLE
@given(case=merge_cases())
def test_spark_merge_agrees_with_spark(spark: Any, case: tuple[list[Schema], list[str]]) -> None:
    check_merge(spark, *case)


@ORACLE
@given(pair=related_pairs())
def test_footer_reads_back_what_pyarrow_wrote(pair: tuple[Schema, Schema]) -> None:
    """The oracle tests rest on this: the footer of a written file is the schema we wrote."""
    schema = pair[1]
    assume(writable(schema))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.parquet"
        write_parquet(schema, path)
        assert read_footer(str(path)).schema == schema
