"""Oracle: Parquet files whose columns repeat a name, read by Spark 4.1.

pyarrow writes four kinds of file (Spark's own writer refuses them all):

  top_dup      top-level `a`, `a`
  top_case     top-level `a`, `A`
  struct_dup   `id`, `s` struct<`x`, `x`>
  struct_case  `id`, `s` struct<`x`, `X`>

each in three tables: the file alone (`single`), after a clean file that has the name once
(`clean_first`: part-0 clean, part-1 duplicated) and before one (`dup_first`). Each table is read
with `spark.read.parquet(dir).collect()` under spark.sql.caseSensitive false and true, with and
without mergeSchema. The engine facts (Spark 4.1):

* Spark checks the inferred schema at load: DataSource.resolveRelation calls
  SchemaUtils.checkSchemaColumnNameDuplication on the relation's data schema, nested structs too,
  with the session's case sensitivity: COLUMN_ALREADY_EXISTS (an AnalysisException). Without
  mergeSchema the schema comes from the first file, so a duplicate in a later file passes the load.
* Such a later file fails at read time when caseSensitive is false:
  ParquetReadSupport.clipParquetGroupFields (`matchCaseInsensitiveField`) throws
  foundDuplicateFieldInCaseInsensitiveModeError, _LEGACY_ERROR_TEMP_2093 ("Found duplicate
  field(s) ...  in case-insensitive mode") under FAILED_READ_FILE.NO_HINT. With caseSensitive true
  it reads quietly: one of two same-named columns (the first), and a read without mergeSchema
  drops the other-case column.
* mergeSchema changes where a case-only struct pair fails (the merged schema holds s.x and s.X:
  the load fails), never whether a read fails.

Guard side: `schemaguard.checks.run_checks` on `schemaguard.lake.table.read(dir)` (the scan's and
the audit's findings) must hold an error DUPLICATE_COLUMN_NAME exactly when Spark fails (caseSensitive
from the check options), and `schemaguard gate DIR` (Spark's default, caseSensitive false) must exit 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers import run, spark_conf
from tests.oracles import conditions

I32 = pa.int32()
CASES = ("top_dup", "top_case", "struct_dup", "struct_case")
LAYOUTS = ("single", "clean_first", "dup_first")
DUP_LOAD = "COLUMN_ALREADY_EXISTS"  # at spark.read: the inferred schema repeats a name
DUP_READ = "FAILED_READ_FILE.NO_HINT/_LEGACY_ERROR_TEMP_2093"  # at collect: a file's names clash


def _top(first: str, second: str) -> pa.Table:
    return pa.Table.from_arrays([pa.array([1], I32), pa.array([2], I32)], names=[first, second])


def _nested(first: str, second: str) -> pa.Table:
    s = pa.StructArray.from_arrays([pa.array([1], I32), pa.array([2], I32)],
                                   fields=[pa.field(first, I32), pa.field(second, I32)])
    return pa.Table.from_arrays([pa.array([0], I32), s], names=["id", "s"])


def _duplicated(case: str) -> pa.Table:
    return {"top_dup": lambda: _top("a", "a"), "top_case": lambda: _top("a", "A"),
            "struct_dup": lambda: _nested("x", "x"), "struct_case": lambda: _nested("x", "X")}[case]()


def _clean(case: str) -> pa.Table:
    if case.startswith("top"):
        return pa.table({"a": pa.array([9], I32)})
    s = pa.StructArray.from_arrays([pa.array([9], I32)], names=["x"])
    return pa.table({"id": pa.array([9], I32), "s": s})


# (case, layout, caseSensitive, mergeSchema) -> a condition (DUP_LOAD at load, DUP_READ at collect),
# or what the read returns: the schema's simpleString and the rows' reprs, sorted.
Outcome = str | tuple[str, list[str]]
A_FIRST = ("struct<a:int>", ["Row(a=1)", "Row(a=9)"])
S_X_FIRST = ("struct<id:int,s:struct<x:int>>", ["Row(id=0, s=Row(x=1))", "Row(id=9, s=Row(x=9))"])
A_BOTH = ("struct<a:int,A:int>", ["Row(a=1, A=2)", "Row(a=9, A=None)"])
S_BOTH = ("struct<id:int,s:struct<x:int,X:int>>",
          ["Row(id=0, s=Row(x=1, X=2))", "Row(id=9, s=Row(x=9, X=None))"])
SPARK: dict[tuple[str, str, bool, bool], Outcome] = {
    **{(c, lay, cs, m): DUP_LOAD for c in ("top_dup", "struct_dup") for lay in ("single", "dup_first")
       for cs in (False, True) for m in (False, True)},
    **{(c, lay, False, m): DUP_LOAD for c in ("top_case", "struct_case") for lay in ("single", "dup_first")
       for m in (False, True)},
    **{(c, "clean_first", False, m): DUP_READ for c in CASES for m in (False, True)},
    ("struct_case", "clean_first", False, True): DUP_LOAD,
    ("top_dup", "clean_first", True, False): A_FIRST,
    ("top_dup", "clean_first", True, True): A_FIRST,
    ("struct_dup", "clean_first", True, False): S_X_FIRST,
    ("struct_dup", "clean_first", True, True): S_X_FIRST,
    ("top_case", "single", True, False): ("struct<a:int,A:int>", ["Row(a=1, A=2)"]),
    ("top_case", "single", True, True): ("struct<a:int,A:int>", ["Row(a=1, A=2)"]),
    ("top_case", "clean_first", True, False): A_FIRST,  # file 1's `A` is dropped
    ("top_case", "clean_first", True, True): A_BOTH,
    ("top_case", "dup_first", True, False): A_BOTH,
    ("top_case", "dup_first", True, True): A_BOTH,
    ("struct_case", "single", True, False): (S_BOTH[0], ["Row(id=0, s=Row(x=1, X=2))"]),
    ("struct_case", "single", True, True): (S_BOTH[0], ["Row(id=0, s=Row(x=1, X=2))"]),
    ("struct_case", "clean_first", True, False): S_X_FIRST,  # file 1's `s.X` is dropped
    ("struct_case", "clean_first", True, True): S_BOTH,
    ("struct_case", "dup_first", True, False): S_BOTH,
    ("struct_case", "dup_first", True, True): S_BOTH,
}


def spark_fails(case: str, layout: str, case_sensitive: bool) -> bool:
    """Whether Spark fails on the table (with mergeSchema or without: they agree, as
    test_merge_changes_no_verdict checks)."""
    return isinstance(SPARK[(case, layout, case_sensitive, False)], str)


def spark_breaks(case: str, layout: str, case_sensitive: bool) -> bool:
    """Spark fails, or reads one of a file's two same-named columns and drops the other without a
    word (an exact duplicate behind a clean file's schema, case-sensitive): a quiet break."""
    return spark_fails(case, layout, case_sensitive) or (
        case.endswith("_dup") and SPARK[(case, layout, case_sensitive, False)] in (A_FIRST, S_X_FIRST))


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    root = tmp_path_factory.mktemp("duplicate-names")
    out = {}
    for case in CASES:
        for layout in LAYOUTS:
            d = root / case / layout
            d.mkdir(parents=True)
            files = {"single": [_duplicated(case)], "clean_first": [_clean(case), _duplicated(case)],
                     "dup_first": [_duplicated(case), _clean(case)]}[layout]
            for i, data in enumerate(files):
                pq.write_table(data, d / f"part-{i}.parquet")
            out[(case, layout)] = d
    return out


def test_pyarrow_wrote_the_duplicates(tables: dict[tuple[str, str], Path]) -> None:
    names = {case: pq.read_schema(tables[(case, "single")] / "part-0.parquet") for case in CASES}
    assert names["top_dup"].names == ["a", "a"] and names["top_case"].names == ["a", "A"]
    assert [f.name for f in names["struct_dup"].field("s").type] == ["x", "x"]
    assert [f.name for f in names["struct_case"].field("s").type] == ["x", "X"]


# ---------------------------------------------------------------------------------------------
# Engine facts


@pytest.mark.parametrize("merge", [False, True], ids=["plain", "merge"])
@pytest.mark.parametrize("case_sensitive", [False, True], ids=["ci", "cs"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES)
def test_spark_reads(spark: Any, tables: dict[tuple[str, str], Path], case: str, layout: str,
                     case_sensitive: bool, merge: bool) -> None:
    expected = SPARK[(case, layout, case_sensitive, merge)]
    stage, got = "load", None
    with spark_conf(spark, spark__sql__caseSensitive=str(case_sensitive).lower()):
        try:
            frame = spark.read.option("mergeSchema", str(merge).lower()).parquet(str(tables[(case, layout)]))
            stage = "collect"
            got = (frame.schema.simpleString(), sorted(repr(r) for r in frame.collect()))
        except Exception as e:
            found = conditions(e)
            outcome = "/".join(found)
            assert (stage, outcome) == ("load" if expected == DUP_LOAD else "collect", expected), found
            return
    assert got == expected


def test_merge_changes_no_verdict() -> None:
    """mergeSchema moves a failure between load and collect at most: it fails or reads alike."""
    for case in CASES:
        for layout in LAYOUTS:
            for cs in (False, True):
                plain, merged = SPARK[(case, layout, cs, False)], SPARK[(case, layout, cs, True)]
                assert isinstance(plain, str) == isinstance(merged, str)


# ---------------------------------------------------------------------------------------------
# The guard's verdict


@pytest.mark.parametrize("case_sensitive", [False, True], ids=["ci", "cs"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES)
def test_guard_finds_what_spark_refuses(tables: dict[tuple[str, str], Path], case: str, layout: str,
                                        case_sensitive: bool) -> None:
    from schemaguard.base import Options
    from schemaguard.checks import CheckOptions, run_checks
    from schemaguard.lake.table import read

    table = read(str(tables[(case, layout)]))
    findings = run_checks(table, CheckOptions(options=Options(case_sensitive=case_sensitive)))
    duplicate = [f for f in findings if f.code == "DUPLICATE_COLUMN_NAME" and f.severity == "error"]
    assert bool(duplicate) == spark_breaks(case, layout, case_sensitive), [
        (f.code, f.severity, f.message) for f in findings]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES)
def test_gate_exits_1_when_spark_fails(tables: dict[tuple[str, str], Path], case: str, layout: str) -> None:
    """The gate speaks for Spark's default, caseSensitive false: every table here fails."""
    assert spark_fails(case, layout, case_sensitive=False)
    done = run("gate", str(tables[(case, layout)]))
    assert done.returncode == 1, (done.stdout, done.stderr)


def test_gate_passes_a_clean_table(tmp_path: Path) -> None:
    """The control: the clean files alone, which Spark reads."""
    for i, case in enumerate(("top_dup", "struct_dup")):
        d = tmp_path / case
        d.mkdir()
        pq.write_table(_clean(case), d / f"part-{i}.parquet")
        done = run("gate", str(d))
        assert done.returncode == 0, (done.stdout, done.stderr)
