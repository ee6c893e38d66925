"""Iceberg tables written by Spark's own Iceberg runtime (a path-based catalog: `version-hint.text`
and `v<N>.metadata.json`, as a Spark job on a Hadoop catalog leaves them), read back by
schemaguard and compared with what Spark's Iceberg reader reads: the data files of each snapshot
(the `_file` metadata column, `VERSION AS OF`), and the schema, field by field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemaguard.checks import run_checks
from schemaguard.checks.summary import summarize
from schemaguard.formats.notation import describe
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.lake.table import ReadOptions, TableRead, read
from schemaguard.model import Schema, fields_of, walk


def shape(schema: Schema) -> list[tuple[str, str, bool]]:
    return [(p, describe(t), n) for p, t, n in walk(schema)]


def location(spark: Any, name: str) -> Path:
    [row] = spark.sql(f"SELECT * FROM ice.{name}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1"
                      ).collect()
    return Path(row.file.removeprefix("file:")).parent.parent


def engine_files(spark: Any, name: str, snapshot: int) -> set[str]:
    rows = spark.sql(f"SELECT DISTINCT _file FROM ice.{name} VERSION AS OF {snapshot}").collect()
    return {r[0].removeprefix("file:") for r in rows}


def engine_schema(spark: Any, name: str, snapshot: int | None = None) -> Schema:
    at = f" VERSION AS OF {snapshot}" if snapshot is not None else ""
    return schema_from_spark_json(spark.sql(f"SELECT * FROM ice.{name}{at}").schema.json())


def snapshots(spark: Any, name: str) -> list[int]:
    return [r[0] for r in spark.sql(f"SELECT snapshot_id FROM ice.{name}.snapshots ORDER BY committed_at")
            .collect()]


def engine_timeline(spark: Any, name: str) -> list[int]:
    """The schema each metadata file made current (every file Spark logs, in commit order, as
    pyiceberg parses it), repeats collapsed."""
    from pyiceberg.table import StaticTable

    files = [r[0] for r in spark.sql(f"SELECT file FROM ice.{name}.metadata_log_entries ORDER BY timestamp")
             .collect()]
    ids = [StaticTable.from_metadata(f).metadata.current_schema_id for f in files]
    return [i for k, i in enumerate(ids) if k == 0 or ids[k - 1] != i]


def assert_like_spark(spark: Any, name: str) -> TableRead:
    path = location(spark, name)
    for snap in snapshots(spark, name):
        table = read(str(path), how=ReadOptions(version=snap), workers=1)
        assert table.iceberg is not None
        assert {f.path for f in table.listing.files} == engine_files(spark, name, snap), f"files at {snap}"
        assert shape(table.iceberg.current.schema) == shape(engine_schema(spark, name, snap))
    latest = read(str(path), workers=1)
    assert latest.iceberg is not None
    assert shape(latest.iceberg.current.schema) == shape(engine_schema(spark, name))
    assert [c.schema_id for c in latest.iceberg.timeline] == engine_timeline(spark, name)
    return latest


def test_a_spark_written_table_with_renames_promotions_and_partitions(spark: Any) -> None:
    spark.sql("CREATE TABLE ice.db.events (id BIGINT NOT NULL, qty INT, name STRING, "
              "tags STRUCT<a: STRING, b: INT>) USING iceberg PARTITIONED BY (bucket(4, id))")
    spark.sql("INSERT INTO ice.db.events VALUES (1, 1, 'a', named_struct('a', 'x', 'b', 1)), "
              "(2, NULL, 'b', NULL)")
    spark.sql("ALTER TABLE ice.db.events ALTER COLUMN qty TYPE BIGINT")
    spark.sql("ALTER TABLE ice.db.events RENAME COLUMN name TO title")
    spark.sql("ALTER TABLE ice.db.events RENAME COLUMN tags.a TO alpha")
    spark.sql("ALTER TABLE ice.db.events ADD COLUMN note STRING")
    spark.sql("INSERT INTO ice.db.events VALUES (3, 5, 'c', named_struct('alpha', 'y', 'b', 2), 'n')")
    spark.sql("ALTER TABLE ice.db.events DROP COLUMN note")
    table = assert_like_spark(spark, "db.events")
    assert (location(spark, "db.events") / "metadata" / "version-hint.text").exists()
    # Files written before the renames show today's names (joined by field id).
    for v in table.versions:
        paths = {p for p, _ in fields_of(v.footer.schema)}
        assert {"title", "tags.alpha"} <= paths and "name" not in paths
    ops = [(o.kind.value, o.path) for lv in summarize("t", table).log_versions for o in lv.changes]
    assert ("widen_type", "qty") in ops and ("rename", "title") in ops and ("rename", "tags.alpha") in ops
    # Dropping the column just added returns to the schema before it, and Iceberg reuses its id.
    timeline = [c.schema_id for c in table.iceberg.timeline] if table.iceberg else []
    assert timeline[-1] == timeline[-3] and ("drop_field", "note") in ops
    assert table.listing.partition_columns == ("id_bucket",)
    errors = [f.code for f in run_checks(table) if f.severity == "error"]
    assert errors == []


def test_merge_on_read_deletes_and_an_overwrite(spark: Any) -> None:
    spark.sql("CREATE TABLE ice.db.mor (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ("
              "'format-version'='2', 'write.delete.mode'='merge-on-read')")
    spark.sql("INSERT INTO ice.db.mor VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql("DELETE FROM ice.db.mor WHERE id = 2")
    table = assert_like_spark(spark, "db.mor")
    deletes = {r[0].removeprefix("file:") for r in spark.sql("SELECT file_path FROM ice.db.mor.delete_files")
               .collect()}
    assert table.iceberg is not None
    assert {d.removeprefix("file:") for d in table.iceberg.delete_files} == deletes
    assert any("delete file" in n for n in table.iceberg.notes)
    assert table.unreferenced == ()  # the live delete files are the snapshot's, not orphans
    data = {f.path for f in table.listing.files}
    spark.sql("INSERT OVERWRITE ice.db.mor SELECT 9, 'z'")
    table = assert_like_spark(spark, "db.mor")
    assert table.iceberg is not None and table.iceberg.delete_files == ()
    # Replaced and not yet expired: the old data files and the delete files that applied to them.
    assert {f.path for f in table.unreferenced} == data | deletes
