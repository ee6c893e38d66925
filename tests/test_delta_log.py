"""Delta tables read through their log, checked against real delta-spark.

Every table here is written by delta-spark in the shared session. For every version the table's
history holds, the files schemaguard reads are exactly the files Delta reads at that version
(`input_file_name()` with `versionAsOf`), and the schema schemaguard says was current is the schema
Delta reads at that version (names, types and nullability, column by column)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from schemaguard.base import Options
from schemaguard.checks import CheckOptions, run_checks
from schemaguard.checks.compat import table_options
from schemaguard.checks.summary import summarize
from schemaguard.formats.notation import describe
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.lake.table import ReadOptions, TableRead, read
from schemaguard.model import Schema, walk
from schemaguard.rules.modes import Mode
from tests.helpers import spark_conf


def shape(schema: Schema) -> list[tuple[str, str, bool]]:
    return [(p, describe(t), n) for p, t, n in walk(schema)]


def engine_files(spark: Any, path: Path, version: int) -> set[str]:
    df = spark.read.format("delta").option("versionAsOf", version).load(str(path))
    return {unquote(r[0]).removeprefix("file:").removeprefix("//")
            for r in df.selectExpr("input_file_name()").distinct().collect()}


def engine_schema(spark: Any, path: Path, version: int) -> Schema:
    df = spark.read.format("delta").option("versionAsOf", version).load(str(path))
    return schema_from_spark_json(df.schema.json())


def versions(spark: Any, path: Path) -> list[int]:
    return sorted(r[0] for r in spark.sql(f"DESCRIBE HISTORY delta.`{path}`").select("version").collect())


def assert_like_the_engine(spark: Any, path: Path, only: list[int] | None = None) -> None:
    """At every version (or those named): the same files and the same schema as Delta."""
    for v in only if only is not None else versions(spark, path):
        table = read(str(path), how=ReadOptions(version=v), workers=1)
        assert table.delta is not None and table.delta.version == v
        ours = {f.path for f in table.listing.files}
        assert ours == engine_files(spark, path, v), f"files at v{v}"
        assert shape(table.delta.current.schema) == shape(engine_schema(spark, path, v)), f"schema at v{v}"


def log_changes(table: TableRead) -> list[tuple[int, list[tuple[str, str, str | None]]]]:
    return [(v.version, [(o.kind.value, o.path, o.old_path) for o in v.changes])
            for v in summarize("t", table).log_versions]


def test_an_overwrite_with_a_new_schema_is_a_table_schema_change_not_a_merge_conflict(
        spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "over"
    spark.sql("SELECT CAST(1 AS INT) AS id, CAST(10 AS INT) AS qty").write.format("delta").save(str(path))
    spark.sql("SELECT CAST(2 AS INT) AS id, CAST(20 AS BIGINT) AS qty").write.format("delta") \
        .mode("overwrite").option("overwriteSchema", "true").save(str(path))
    table = read(str(path))
    assert table.table_format == "delta"
    assert [shape(v.footer.schema) for v in table.versions] == [
        [("id", "int32", True), ("qty", "int64", True)]]
    assert log_changes(table) == [(0, []), (1, [("widen_type", "qty", None)])]
    # The first file: removed in the log, still on disk.
    assert {f.path for f in table.unreferenced} == engine_files(spark, path, 0)
    assert [f.code for f in run_checks(table) if f.severity == "error"] == []
    assert_like_the_engine(spark, path)
    with_old = read(str(path), how=ReadOptions(include_unreferenced=True))
    assert len(with_old.versions) == 2  # asked for: the removed file's int column shows again


@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping_shows_renames_and_drops_by_logical_name(
        spark: Any, tmp_path: Path, mode: str) -> None:
    path = tmp_path / f"cm_{mode}"
    name = f"cm_{mode}"
    spark.sql(f"CREATE TABLE {name} (a INT, b STRING, c DOUBLE, s STRUCT<x: INT, y: STRING>) USING delta "
              f"LOCATION '{path}' TBLPROPERTIES ('delta.columnMapping.mode'='{mode}', "
              "'delta.minReaderVersion'='2', 'delta.minWriterVersion'='5')")
    try:
        spark.sql(f"INSERT INTO {name} VALUES (1, 'x', 1.5, named_struct('x', 1, 'y', 'p'))")
        spark.sql(f"ALTER TABLE {name} RENAME COLUMN b TO b2")
        spark.sql(f"ALTER TABLE {name} RENAME COLUMN s.x TO x2")
        spark.sql(f"ALTER TABLE {name} DROP COLUMN c")
        spark.sql(f"INSERT INTO {name} VALUES (2, 'y', named_struct('x2', 2, 'y', 'q'))")
        table = read(str(path))
        assert table.delta is not None and table.delta.mapping_mode == mode
        shapes = [[p for p, _, _ in shape(v.footer.schema)] for v in table.versions]
        assert shapes == [["a", "b2", "c", "s", "s.x2", "s.y"], ["a", "b2", "s", "s.x2", "s.y"]]
        assert log_changes(table) == [(0, []), (2, [("rename", "b2", "b")]), (3, [("rename", "s.x2", "s.x")]),
                                      (4, [("drop_field", "c", None)])]
        assert not any(f.severity == "error" for f in run_checks(table))
        assert_like_the_engine(spark, path)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_type_widening_and_constraints_are_in_the_log(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "widen"
    spark.sql("SELECT CAST(1 AS SMALLINT) AS n, 'a' AS tag").write.format("delta") \
        .option("delta.enableTypeWidening", "true").save(str(path))
    spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN n TYPE INT")
    spark.sql(f"ALTER TABLE delta.`{path}` ADD CONSTRAINT positive CHECK (n > 0)")
    spark.sql("SELECT CAST(70000 AS INT) AS n, 'b' AS tag").write.format("delta").mode("append") \
        .save(str(path))
    table = read(str(path))
    assert table.delta is not None
    assert table.delta.configuration["delta.constraints.positive"] == "n > 0"
    assert table.delta.configuration["delta.enableTypeWidening"] == "true"
    # The old file keeps its INT16 column: two footer versions, one logical column widened in the log.
    assert [shape(v.footer.schema)[0][1] for v in table.versions] == ["int16", "int32"]
    assert ("widen_type", "n", None) in log_changes(table)[1][1]
    assert_like_the_engine(spark, path)
    # Delta reads the INT16 file as INT (the engine's own read above): the audit's delta-read
    # reader takes type widening from the log, not from the configuration's default (off).
    assert sorted(r[0] for r in spark.read.format("delta").load(str(path)).collect()) == [1, 70000]
    options = table_options(table, Options())
    assert options.type_widening
    backward = CheckOptions(table.delta.current.schema, ("delta-read",), Mode.BACKWARD_TRANSITIVE, options)
    assert [f for f in run_checks(table, backward) if f.code.startswith("VERSION_")] == []
    unaware = CheckOptions(table.delta.current.schema, ("delta-read",), Mode.BACKWARD_TRANSITIVE, Options())
    assert [f.path for f in run_checks(table, unaware) if f.code == "VERSION_INCOMPATIBLE"] == ["n"]


def test_a_checkpoint_with_later_commits_and_a_cut_history(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "cp"
    for i in range(5):
        spark.sql(f"SELECT {i} AS id, 'p{i % 2}' AS part").write.format("delta").partitionBy("part") \
            .option("delta.checkpointInterval", "2").mode("append").save(str(path))
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 1")
    spark.sql(f"ALTER TABLE delta.`{path}` ADD COLUMNS (extra STRING)")
    log = path / "_delta_log"
    assert list(log.glob("*.checkpoint.parquet"))
    assert_like_the_engine(spark, path)
    table = read(str(path))
    assert table.listing.partition_columns == ("part",)
    assert {dict(f.partition)["part"] for f in table.listing.files} == {"p0", "p1"}
    # Cleaned-up commits: the snapshot comes from the newest checkpoint, the history starts there.
    for commit in sorted(log.glob("*.json"))[:4]:
        commit.unlink()
    cut = read(str(path))
    assert {f.rel for f in cut.listing.files} == {f.rel for f in table.listing.files}
    assert cut.delta is not None and cut.delta.notes and cut.delta.schemas[0].version >= 4


def test_a_vacuumed_table_has_no_unreferenced_files(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "vac"
    spark.sql("SELECT 1 AS id").write.format("delta").save(str(path))
    spark.sql("SELECT 2 AS id").write.format("delta").mode("overwrite").save(str(path))
    assert len(read(str(path)).unreferenced) == 1
    # Delta lists the table for VACUUM in spark.sql.sources.parallelPartitionDiscovery.parallelism
    # tasks (10,000 by default: a minute on two cores for one small folder).
    with spark_conf(spark, spark__databricks__delta__retentionDurationCheck__enabled="false",
                    spark__sql__sources__parallelPartitionDiscovery__parallelism="2"):
        spark.sql(f"VACUUM delta.`{path}` RETAIN 0 HOURS")
    assert read(str(path)).unreferenced == ()
    assert_like_the_engine(spark, path, only=[1])
    # Time travel to before the VACUUM: Delta fails on the deleted file; here it is one finding.
    old = read(str(path), how=ReadOptions(version=0))
    assert [u.reason.split(":")[0] for u in old.scan.unreadable] == ["vanished"]


def test_the_scan_command_says_delta_and_shows_the_log(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "cli"
    spark.sql("SELECT CAST(1 AS INT) AS qty").write.format("delta").save(str(path))
    spark.sql("SELECT CAST(2 AS BIGINT) AS qty").write.format("delta").mode("overwrite") \
        .option("overwriteSchema", "true").save(str(path))
    cli = [str(Path(sys.executable).parent / "schemaguard")]
    done = subprocess.run([*cli, "scan", str(path), "--format", "json"], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["format"] == "delta" and doc["snapshot"]["version"] == 1
    assert [h["version"] for h in doc["snapshot"]["schema_history"]] == [0, 1]
    assert doc["counts"]["unreferenced"] == 1 and len(doc["snapshot"]["unreferenced_files"]) == 1
    old = subprocess.run([*cli, "scan", str(path), "--version", "0", "--format", "json"],
                         capture_output=True, text=True, check=False, timeout=120)
    assert json.loads(old.stdout)["versions"][0]["schema"]["fields"][0]["type"] == "int32"
    bad = subprocess.run([*cli, "scan", str(path), "--version", "7"], capture_output=True, text=True,
                         check=False, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no table version 7" in bad.stderr


def test_the_demo_delta_table(spark: Any, tmp_path: Path) -> None:
    from schemaguard.demo import build_delta_demo

    path = build_delta_demo(tmp_path, spark)
    table = read(str(path))
    ops = [(v, kind, p) for v, changes in log_changes(table) for kind, p, _ in changes]
    assert ops == [(2, "add_optional_field", "channel"), (4, "rename", "customer_name"),
                   (5, "widen_type", "qty")]
    # The two appends' files, removed by the overwrite, on disk until VACUUM.
    assert {f.path for f in table.unreferenced} == engine_files(spark, path, 1)
    assert [[p for p, _, _ in shape(v.footer.schema)] for v in table.versions] == [
        ["id", "customer_name", "qty", "amount", "channel"]] * 2
    assert_like_the_engine(spark, path, only=[versions(spark, path)[-1]])


def test_a_table_written_by_delta_rs(spark: Any, tmp_path: Path) -> None:
    """delta-rs (another writer): appends that merge a new column in, an overwrite with a new
    schema, a checkpoint it writes itself. Delta (delta-spark) reads it; so does schemaguard."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    path = tmp_path / "rs"
    write_deltalake(str(path), pa.table({"id": pa.array([1, 2], pa.int32()), "p": ["a", "b"]}),
                    partition_by=["p"])
    write_deltalake(str(path), pa.table({"id": pa.array([3], pa.int32()), "p": ["a"], "note": ["x"]}),
                    mode="append", schema_mode="merge")
    DeltaTable(str(path)).create_checkpoint()
    write_deltalake(str(path), pa.table({"id": pa.array([4], pa.int64()), "p": ["c"]}),
                    mode="overwrite", schema_mode="overwrite", partition_by=["p"])
    table = read(str(path))
    rs_files = {unquote(u).removeprefix("file://") for u in DeltaTable(str(path)).file_uris()}
    assert {f.path for f in table.listing.files} == rs_files
    assert [(v, [k for k, _, _ in ops]) for v, ops in log_changes(table)] == [
        (0, []), (1, ["add_optional_field"]), (2, ["widen_type", "drop_field"])]
    # What Delta read before the overwrite is what is now on disk and unreferenced.
    assert {f.path for f in table.unreferenced} == engine_files(spark, path, 1)
    assert_like_the_engine(spark, path)


def test_a_column_no_schema_of_the_log_holds_is_a_finding(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "extra"
    spark.sql("SELECT CAST(1 AS BIGINT) AS id").write.format("delta").save(str(path))
    # Another writer adds a file with a column the table's schema does not have, and commits it.
    pq.write_table(pa.table({"id": pa.array([2], pa.int64()), "secret": ["x"]}), path / "odd.parquet")
    size = (path / "odd.parquet").stat().st_size
    add = {"add": {"path": "odd.parquet", "partitionValues": {}, "size": size,
                   "modificationTime": 1_700_000_000_000, "dataChange": True}}
    (path / "_delta_log" / f"{1:020d}.json").write_text(json.dumps(add) + "\n")
    engine = spark.read.format("delta").load(str(path))
    assert engine.columns == ["id"] and engine.count() == 2  # Delta reads the file, not the column
    table = read(str(path))
    [found] = [f for f in run_checks(table) if f.code == "DELTA_UNKNOWN_COLUMN"]
    assert found.path == "secret" and found.count == 1 and found.files == ("odd.parquet",)
    assert_like_the_engine(spark, path)


def test_versions_of_a_delta_table_follow_the_commits_that_added_their_files(tmp_path: Path) -> None:
    """A late backfill of an old day (delta-rs) holds the newest schema although its partition
    value is the oldest: versions are in commit order, as the log (read by delta-rs) says."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    table = tmp_path / "events"
    write_deltalake(str(table), pa.table({"id": pa.array([1], pa.int64()), "dt": ["2024-01-02"]}),
                    partition_by=["dt"])
    write_deltalake(str(table), pa.table({"id": pa.array([2], pa.int64()), "dt": ["2024-01-01"],
                                          "note": ["backfilled late"]}),
                    partition_by=["dt"], mode="append", schema_mode="merge")
    read_back = read(str(table))
    assert read_back.history.ordered_by == "the commit that added their files (the Delta log)"
    def rels(version: int) -> set[str]:
        uris = DeltaTable(str(table), version=version).file_uris()
        return {unquote(str(Path(u.removeprefix("file://")).relative_to(table))) for u in uris}

    first, last = rels(0), rels(1)
    oldest, newest = read_back.versions
    assert [f.name for f in newest.footer.schema.fields] == ["id", "note"]
    assert set(newest.files.rels()) == last - first  # what the last commit added
    assert set(oldest.files.rels()) == first
