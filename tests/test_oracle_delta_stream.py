"""Oracle: the `delta-stream` profile against delta-spark 4.4's streaming source.

Each case makes a fresh path-based Delta table, inserts a row, starts
`spark.readStream.format("delta").load(path)` into a `noop` sink (checkpoint under tmp_path),
processes it, changes the table, appends a row that fits the new schema and processes again. The
change is Delta's own DDL where Delta allows it; else an overwrite with `overwriteSchema` (a type
change without type widening, a case-only rename without column mapping), or for SET NOT NULL,
which Spark refuses outright, a metadata-only commit of our own. The engine's verdict is whether
the query stopped; the condition is read from the listener API
(`QueryTerminatedEvent.errorClassOnException`, the cause's condition: pyspark's
StreamingQueryException itself only says STREAM_FAILED). A stream that goes on must read the new row.

Engine facts (observed here; source: delta v4.4.0, sources/DeltaSource.scala
checkReadIncompatibleSchemaChanges and checkNonAdditiveSchemaChanges, sources/DeltaStreamUtils.scala
checkSchemaChangesWhenNoSchemaTracking, schema/SchemaUtils.scala isReadCompatible):

* A metadata action whose schema differs from the stream's in any way but a tightened
  nullability stops the stream: DELTA_SCHEMA_CHANGED_WITH_VERSION. That includes ADD COLUMNS,
  relaxing NOT NULL and, under type widening, a widened type (these three: a restart reads on),
  and a type change or a case-only rename by overwrite (a restart stops again). The check is
  isReadCompatible(existingSchema = new table schema, readSchema = stream schema,
  forbidTightenNullability = true, typeWideningMode = NoTypeWidening when not backfilling,
  caseSensitive = true by default).
* Under column mapping, RENAME (also case-only) and DROP are caught earlier (the physical-name
  comparison of DeltaColumnMapping.hasNoColumnMappingSchemaChanges):
  DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG (a restart stops again).
* A new schema that tightens a column to NOT NULL and an unrelated property change do not stop it.

Guard side: `errors(can_read(new table schema, stream schema, "delta-stream", options))` must be
non-empty exactly when the stream stopped; options carry the table's type widening and column
mapping.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from schemaguard.base import Options, errors
from schemaguard.model import Schema
from schemaguard.rules.profiles import can_read
from tests.oracles import conditions, spark_fields

pytestmark = pytest.mark.slow  # about 2 minutes on 2 cores (a JVM, 13 streams)

SCHEMA_CHANGED = "DELTA_SCHEMA_CHANGED_WITH_VERSION"
NON_ADDITIVE = "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG"
CM_NAME = {"delta.columnMapping.mode": "name"}
WIDENING = {"delta.enableTypeWidening": "true"}
TYPE_DDL = "ALTER COLUMN a TYPE {}"
TYPE_REFUSED = "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP"
SKIP_CHANGES = {"skipChangeCommits": "true"}


def _overwrite(columns: str, row: tuple[Any, ...],
               refused: tuple[str, str] | None = None) -> Callable[[Any, str], None]:
    """The table's schema replaced by `columns` through an overwrite with overwriteSchema (one
    row, `row`). With `refused` = (ALTER TABLE clause, condition): that DDL is tried first and
    Delta must refuse it with that condition (a type change on a table without type widening)."""
    def change(spark: Any, path: str) -> None:
        if refused is not None:
            clause, condition = refused
            try:
                spark.sql(f"ALTER TABLE delta.`{path}` {clause}")
            except Exception as e:  # pyspark's AnalysisException & co.
                assert condition in conditions(e), conditions(e)
            else:
                raise AssertionError(f"Delta accepted {clause}")
        (spark.createDataFrame([row], columns)
         .write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(path))
    return change


def _case_only_rename(spark: Any, path: str) -> None:
    """RENAME COLUMN a TO A: Spark's analyzer refuses it (FIELD_ALREADY_EXISTS) unless
    spark.sql.caseSensitive is on for the statement."""
    before = spark.conf.get("spark.sql.caseSensitive")
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        spark.sql(f"ALTER TABLE delta.`{path}` RENAME COLUMN a TO A")
    finally:
        spark.conf.set("spark.sql.caseSensitive", before)


def _set_not_null_by_commit(spark: Any, path: str) -> None:
    """Column a made NOT NULL. Delta's DDL cannot (ALTER COLUMN a SET NOT NULL is refused by
    Spark's analysis, _LEGACY_ERROR_TEMP_2330, even on data without nulls; an overwrite makes
    every column nullable; REPLACE TABLE makes a new table id), so the change is a commit of our
    own: the table's metaData action with a's nullable false, and nothing else."""
    try:
        spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN a SET NOT NULL")
    except Exception as e:
        assert "_LEGACY_ERROR_TEMP_2330" in conditions(e), conditions(e)
    else:
        raise AssertionError("Delta accepted SET NOT NULL")
    log = Path(path) / "_delta_log"
    commits = sorted(log.glob("[0-9]" * 20 + ".json"))
    metadata = next(action["metaData"] for commit in reversed(commits)
                    for action in map(json.loads, commit.read_text().splitlines()) if "metaData" in action)
    schema = json.loads(metadata["schemaString"])
    for f in schema["fields"]:
        if f["name"] == "a":
            f["nullable"] = False
    metadata["schemaString"] = json.dumps(schema)
    now = int(time.time() * 1000)
    info = {"inCommitTimestamp": now, "timestamp": now, "operation": "CHANGE COLUMN",
            "operationParameters": {}, "isBlindAppend": False}
    version = int(commits[-1].stem) + 1
    (log / f"{version:020d}.json").write_text(
        "".join(json.dumps(a) + "\n" for a in ({"commitInfo": info}, {"metaData": metadata})))


@dataclass(frozen=True)
class Case:
    name: str
    columns: str  # the table's DDL columns
    first: str  # the first row, as SQL VALUES
    change: str | Callable[[Any, str], None]  # SQL with {t} for the table, or a function
    row: str  # a row of the new schema, as SQL VALUES
    stops: str | None  # the condition the stream stops with; None: it goes on
    props: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)  # the stream's own (readStream) options


CASES = [
    Case("add-column", "a INT, b STRING", "1, 'x'", "ALTER TABLE {t} ADD COLUMNS (c INT)",
         "2, 'y', 3", SCHEMA_CHANGED),
    Case("drop-column", "a INT, b STRING", "1, 'x'", "ALTER TABLE {t} DROP COLUMN b",
         "2", NON_ADDITIVE, CM_NAME),
    # Without column mapping a column can only go by an overwrite, which removes files: the stream
    # skips such commits only when told to (skipChangeCommits), and its schema check accepts a
    # schema that lacks a column (isReadCompatible: only column mapping makes a drop non-additive).
    Case("overwrite-drop-column", "a INT, b STRING", "1, 'x'", _overwrite("a INT", (2,)), "3", None,
         options=SKIP_CHANGES),
    Case("overwrite-drop-nested", "a INT, s STRUCT<x: INT, y: STRING>", "1, named_struct('x', 1, 'y', 'p')",
         _overwrite("a INT, s STRUCT<x: INT>", (2, (2,))), "3, named_struct('x', 3)", None,
         options=SKIP_CHANGES),
    Case("rename-case-only", "a INT, b STRING", "1, 'x'", _case_only_rename, "2, 'y'", NON_ADDITIVE,
         CM_NAME),
    Case("overwrite-case-only", "a INT, b STRING", "1, 'x'", _overwrite("A INT, b STRING", (2, "y")),
         "3, 'z'", SCHEMA_CHANGED),
    Case("rename", "a INT, b STRING", "1, 'x'", "ALTER TABLE {t} RENAME COLUMN b TO c",
         "2, 'y'", NON_ADDITIVE, CM_NAME),
    Case("widen-int-bigint", "a INT, b STRING", "1, 'x'", "ALTER TABLE {t} ALTER COLUMN a TYPE BIGINT",
         "2, 'y'", SCHEMA_CHANGED, WIDENING),
    Case("widen-byte-int", "a TINYINT, b STRING", "1, 'x'", "ALTER TABLE {t} ALTER COLUMN a TYPE INT",
         "2, 'y'", SCHEMA_CHANGED, WIDENING),
    Case("widen-float-double", "a FLOAT, b STRING", "1.5, 'x'",
         "ALTER TABLE {t} ALTER COLUMN a TYPE DOUBLE", "2.5, 'y'", SCHEMA_CHANGED, WIDENING),
    Case("overwrite-int-bigint", "a INT, b STRING", "1, 'x'",
         _overwrite("a BIGINT, b STRING", (2, "y"), (TYPE_DDL.format("BIGINT"), TYPE_REFUSED)),
         "3, 'z'", SCHEMA_CHANGED),
    Case("overwrite-float-double", "a FLOAT, b STRING", "1.5, 'x'",
         _overwrite("a DOUBLE, b STRING", (2.5, "y"), (TYPE_DDL.format("DOUBLE"), TYPE_REFUSED)),
         "3.5, 'z'", SCHEMA_CHANGED),
    Case("relax-not-null", "a INT NOT NULL, b STRING", "1, 'x'",
         "ALTER TABLE {t} ALTER COLUMN a DROP NOT NULL", "NULL, 'y'", SCHEMA_CHANGED),
    Case("tighten-to-not-null", "a INT, b STRING", "1, 'x'", _set_not_null_by_commit, "2, 'y'", None),
    Case("control-property", "a INT, b STRING", "1, 'x'",
         "ALTER TABLE {t} SET TBLPROPERTIES ('schemaguard.test' = 'x')", "2, 'y'", None),
]


class Terminations:
    """Each terminated query's error condition, from Spark's streaming listener events."""

    def __init__(self) -> None:
        self.conditions: dict[str, str | None] = {}
        self.changed = threading.Condition()

    def record(self, query_id: str, condition: str | None) -> None:
        with self.changed:
            self.conditions[query_id] = condition
            self.changed.notify_all()

    def wait(self, query_id: str, timeout: float = 30.0) -> str | None:
        with self.changed:
            if not self.changed.wait_for(lambda: query_id in self.conditions, timeout):
                raise AssertionError(f"no QueryTerminatedEvent for {query_id} within {timeout} s")
            return self.conditions[query_id]


@pytest.fixture(scope="module")
def terminations(spark: Any) -> Iterator[Terminations]:
    from pyspark.sql.streaming.listener import StreamingQueryListener

    seen = Terminations()

    class Listener(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            pass

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            seen.record(str(event.id), event.errorClassOnException if event.exception else None)

    listener = Listener()
    spark.streams.addListener(listener)
    yield seen
    spark.streams.removeListener(listener)


@dataclass(frozen=True)
class Outcome:
    stream_schema: Any  # Spark StructType: the streaming DataFrame's
    new_schema: Any  # Spark StructType: the table's after the change
    stopped: bool
    condition: str | None
    rows: int  # rows the stream read, over all its batches


def stream_through_change(spark: Any, case: Case, folder: Path, terminations: Terminations) -> Outcome:
    from pyspark.errors import StreamingQueryException

    path = str(folder / "table")
    table = f"delta.`{path}`"
    props = ", ".join(f"'{k}' = '{v}'" for k, v in case.props.items())
    spark.sql(f"CREATE TABLE {table} ({case.columns}) USING delta"
              + (f" TBLPROPERTIES ({props})" if props else ""))
    spark.sql(f"INSERT INTO {table} VALUES ({case.first})")
    stream = spark.readStream.format("delta").options(**case.options).load(path)
    query = (stream.writeStream.format("noop").queryName(f"delta_stream_{uuid.uuid4().hex}")
             .option("checkpointLocation", str(folder / "checkpoint")).start())
    try:
        query.processAllAvailable()
        if callable(case.change):
            case.change(spark, path)
        else:
            spark.sql(case.change.format(t=table))
        spark.sql(f"INSERT INTO {table} VALUES ({case.row})")
        try:
            query.processAllAvailable()
            stopped = False
        except StreamingQueryException:
            stopped = True
        if stopped != (query.exception() is not None):
            raise AssertionError("processAllAvailable and query.exception() disagree")
        condition = terminations.wait(str(query.id)) if stopped else None
        rows = sum(progress.numInputRows for progress in query.recentProgress)
    finally:
        query.stop()
    new_schema = spark.read.format("delta").load(path).schema
    return Outcome(stream.schema, new_schema, stopped, condition, rows)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_delta_stream_agrees_with_delta(spark: Any, terminations: Terminations, case: Case,
                                        tmp_path: Path) -> None:
    outcome = stream_through_change(spark, case, tmp_path, terminations)
    assert (outcome.stopped, outcome.condition) == (case.stops is not None, case.stops), outcome
    assert outcome.rows == (1 if outcome.stopped else 2), outcome  # a stream that goes on reads the new row

    stream_model = Schema(spark_fields(outcome.stream_schema))
    new_model = Schema(spark_fields(outcome.new_schema))
    options = Options(type_widening=case.props.get("delta.enableTypeWidening") == "true",
                      column_mapping="name" if case.props.get("delta.columnMapping.mode") == "name"
                      else "none")
    problems = errors(can_read(new_model, stream_model, "delta-stream", options))
    assert bool(problems) == outcome.stopped, (new_model, stream_model, problems)
