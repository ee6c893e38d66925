"""Oracle: Delta column mapping `id` mode and data files whose Parquet field ids are missing or wrong.

One Delta table is made with delta-spark under `delta.columnMapping.mode = 'id'` (reader 2, writer
5) and one row written by Delta; each case copies it and commits (a JSON commit of our own: a
commitInfo and one `add`) a second data file written with pyarrow under the table's physical column
names (`delta.columnMapping.physicalName` from the log's schema), carrying:

  none     no field ids at all
  wrong    ids the table does not have (each real id + 100)
  partial  the right id on the first column, none on the second
  right    the table's ids (the control)

Engine facts (delta-spark 4.4.0 on Spark 4.1, observed here and read in the sources):

* Delta turns `spark.sql.parquet.fieldId.read.enabled` on for the whole session (its analysis rule
  in io/delta/sql/AbstractDeltaSparkSessionExtension.scala sets PARQUET_FIELD_ID_READ_ENABLED and
  ..._WRITE_ENABLED), and DeltaParquetFileFormat.scala `require`s both under IdMapping; its
  `prepareSchemaForRead` keeps the `parquet.field.id` metadata that
  DeltaColumnMapping.getColumnMappingMetadata puts on each physical field (it strips it only
  under NameMapping). Delta never sets `spark.sql.parquet.fieldId.read.ignoreMissing`
  (SQLConf.IGNORE_MISSING_PARQUET_FIELD_ID, default false): nowhere in delta v4.4.0's sources.
* Spark's ParquetReadSupport.getRequestedSchema then throws a plain RuntimeException ("Spark read
  schema expects field Ids, but Parquet file schema doesn't contain any field Ids.") when the
  requested schema has ids and the file has none (`containsFieldIds`: any id anywhere counts).
  It reaches the caller as FAILED_READ_FILE.NO_HINT. No name fallback: a file under the right
  physical names still fails. A read that requests no column (count()) does not fail.
* With some ids in the file, clipParquetGroupFields matches every requested field by id only
  (`matchIdField`); a field whose id is not in the file is read under a fake name: all null, no
  error. So wrong ids give a row of nulls, and a column without an id beside one with an id is
  null.

Guard side: the file as the guard reads the table, against the table's schema under
`delta-read` with `column_mapping="id"`: a loud break exactly when Delta fails, a quiet one
exactly when a column the file holds without an id comes back null (a file without ids has both);
columns under ids the table never assigned are DELTA_UNKNOWN_COLUMN (no Delta reader returns
them; an id the table once gave a dropped column is another column, read null as intended).
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.oracles import conditions

CASES = ("none", "wrong", "partial", "right")
FIELD_ID = b"PARQUET:field_id"
NO_IDS_MESSAGE = "Spark read schema expects field Ids, but Parquet file schema doesn't contain any field Ids"
# What Delta reads for our file (a=2, b='y' written), None when the read fails.
EXPECTED_ROW: dict[str, tuple[Any, Any] | None] = {
    "none": None,
    "wrong": (None, None),
    "partial": (2, None),
    "right": (2, "y"),
}


def _log_schema(table: Path) -> dict[str, Any]:
    for line in (table / "_delta_log" / f"{0:020d}.json").read_text().splitlines():
        action = json.loads(line)
        if "metaData" in action:
            return dict(json.loads(action["metaData"]["schemaString"]))
    raise AssertionError("no metaData in commit 0")


def _ids(case: str, schema: dict[str, Any]) -> list[int | None]:
    real = [int(f["metadata"]["delta.columnMapping.id"]) for f in schema["fields"]]
    ids: dict[str, list[int | None]] = {"none": [None, None], "wrong": [i + 100 for i in real],
                                        "partial": [real[0], None], "right": [*real]}
    return ids[case]


def _add_file(table: Path, case: str) -> Path:
    """Write our file under the physical names with the case's ids and commit it as the next
    version: a commitInfo and an `add` (no stats)."""
    schema = _log_schema(table)
    fields = []
    for f, t, fid in zip(schema["fields"], (pa.int32(), pa.string()), _ids(case, schema), strict=True):
        physical = f["metadata"]["delta.columnMapping.physicalName"]
        fields.append(pa.field(physical, t, metadata=None if fid is None else {FIELD_ID: str(fid).encode()}))
    data = pa.table([pa.array([2], pa.int32()), pa.array(["y"])], schema=pa.schema(fields))
    name = f"part-00000-{uuid.uuid4()}-pyarrow.snappy.parquet"
    pq.write_table(data, table / name)
    stat = (table / name).stat()
    log = table / "_delta_log"
    version = max(int(p.name[:20]) for p in log.glob("*.json")) + 1
    actions = [
        {"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "WRITE",
                        "operationParameters": {"mode": "Append"}, "isBlindAppend": True}},
        {"add": {"path": name, "partitionValues": {}, "size": stat.st_size,
                 "modificationTime": int(stat.st_mtime * 1000), "dataChange": True}},
    ]
    (log / f"{version:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))
    return table / name


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """case -> (table, our file): one table made by Delta, copied per case."""
    root = tmp_path_factory.mktemp("delta-id-mode")
    base = root / "base"
    spark.sql(f"CREATE TABLE delta.`{base}` (a INT, b STRING) USING delta TBLPROPERTIES ("
              "'delta.columnMapping.mode' = 'id', 'delta.minReaderVersion' = '2', "
              "'delta.minWriterVersion' = '5')")
    spark.sql(f"INSERT INTO delta.`{base}` VALUES (1, 'x')")
    out = {}
    for case in CASES:
        table = root / case
        shutil.copytree(base, table)
        out[case] = (table, _add_file(table, case))
    return out


def _read(spark: Any, table: Path) -> list[tuple[Any, Any]]:
    return [(r["a"], r["b"]) for r in spark.read.format("delta").load(str(table)).collect()]


# ---------------------------------------------------------------------------------------------
# Engine facts


def test_delta_writes_field_ids_and_turns_field_id_reads_on(spark: Any, tables: dict[str, tuple[Path, Path]]
                                                            ) -> None:
    table, _ = tables["right"]
    schema = _log_schema(table)
    commit = (table / "_delta_log" / f"{1:020d}.json").read_text().splitlines()
    delta_file = next(json.loads(a)["add"]["path"] for a in commit if "add" in json.loads(a))
    written = pq.read_schema(table / delta_file)
    meta = [f["metadata"] for f in schema["fields"]]
    assert [f.name for f in written] == [m["delta.columnMapping.physicalName"] for m in meta]
    assert [int(f.metadata[FIELD_ID]) for f in written] == [m["delta.columnMapping.id"] for m in meta]
    _read(spark, table)
    assert spark.conf.get("spark.sql.parquet.fieldId.read.enabled") == "true"
    assert spark.conf.get("spark.sql.parquet.fieldId.read.ignoreMissing") == "false"


@pytest.mark.parametrize("case", CASES)
def test_delta_reads_the_file(spark: Any, tables: dict[str, tuple[Path, Path]], case: str) -> None:
    table, _ = tables[case]
    expected = EXPECTED_ROW[case]
    if expected is None:
        with pytest.raises(Exception) as caught:
            _read(spark, table)
        found = conditions(caught.value, message=True)
        assert found[0] == "FAILED_READ_FILE.NO_HINT", found
        assert found[-1].startswith(f"java.lang.RuntimeException: {NO_IDS_MESSAGE}"), found
    else:
        assert sorted(_read(spark, table), key=repr) == sorted([(1, "x"), expected], key=repr)


def test_no_ids_fails_only_when_a_column_is_read(spark: Any, tables: dict[str, tuple[Path, Path]]) -> None:
    """The check runs on the requested schema: a count requests no column and passes; selecting
    one column fails just the same."""
    table, _ = tables["none"]
    frame = spark.read.format("delta").load(str(table))
    assert frame.count() == 2
    with pytest.raises(Exception) as caught:
        frame.select("a").collect()
    assert conditions(caught.value)[0] == "FAILED_READ_FILE.NO_HINT"


def test_ignore_missing_ids_reads_nulls(spark: Any, tables: dict[str, tuple[Path, Path]]) -> None:
    """With Spark's escape hatch on (Delta never sets it), the file without ids reads as nulls: no
    binding by name even then."""
    table, _ = tables["none"]
    spark.conf.set("spark.sql.parquet.fieldId.read.ignoreMissing", "true")
    try:
        rows = _read(spark, table)
    finally:
        spark.conf.unset("spark.sql.parquet.fieldId.read.ignoreMissing")
    assert sorted(rows, key=repr) == sorted([(1, "x"), (None, None)], key=repr)


# ---------------------------------------------------------------------------------------------
# The guard's verdict


@pytest.mark.parametrize("case", CASES)
def test_guard_flags_exactly_what_delta_breaks(tables: dict[str, tuple[Path, Path]], case: str) -> None:
    """The file as the guard reads a Delta table (lake/delta.py names its columns through the log)
    against the table's schema; a failure is a loud break, a column read null a quiet one."""
    from schemaguard.base import Options, errors
    from schemaguard.checks import run_checks
    from schemaguard.lake.table import read
    from schemaguard.rules.profiles import can_read

    table, ours = tables[case]
    read_table = read(str(table))
    delta = read_table.delta
    assert delta is not None and delta.mapping_mode == "id"
    rel = ours.relative_to(table).as_posix()
    version = next(v for v in read_table.versions if any(f.rel == rel for f in v.files))
    problems = errors(can_read(version.footer.schema, delta.current.schema, "delta-read",
                               Options(column_mapping="id")))
    expected = EXPECTED_ROW[case]
    assert any(not p.quiet for p in problems) == (expected is None), problems  # Delta fails
    # a column the file holds without an id comes back null: a quiet break
    assert any(p.quiet for p in problems) == (case in ("none", "partial")), problems
    # ids the table never assigned: data no Delta reader returns
    unknown = {f.path for f in run_checks(read_table) if f.code == "DELTA_UNKNOWN_COLUMN"}
    assert unknown == ({"a", "b"} if case == "wrong" else set()), unknown
