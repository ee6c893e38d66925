"""Files grouped into schema versions, oldest first, from real Parquet files (pyarrow)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.lake.discover import discover
from schemaguard.lake.history import History, build_history, column_changes
from schemaguard.lake.scan import scan

# Two schemas: OLD (a int32, b string) and NEW (a int64, c double not null).
OLD = pa.schema([pa.field("a", pa.int32()), pa.field("b", pa.string())])
NEW = pa.schema([pa.field("a", pa.int64()), pa.field("c", pa.float64(), nullable=False)])


def rows(schema: pa.Schema, n: int) -> pa.Table:
    columns = {
        "a": pa.array(range(n), schema.field("a").type),
        "b": pa.array([f"s{i}" for i in range(n)]) if "b" in schema.names else None,
        "c": pa.array([i / 2 for i in range(n)], pa.float64()) if "c" in schema.names else None,
    }
    return pa.table({k: v for k, v in columns.items() if v is not None}, schema=schema)


def write(path: Path, schema: pa.Schema, n: int, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(rows(schema, n), path)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def history_of(table: Path) -> History:
    result = scan(discover(str(table)))
    assert result.unreadable == ()
    return build_history(result.footers)


def ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def iso(text: str) -> str:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------------------
# Ordering by a date partition


@pytest.mark.parametrize("style", ["%Y-%m-%d", "%Y%m%d"], ids=["dt=2024-01-05", "dt=20240105"])
def test_versions_are_ordered_by_a_date_partition(tmp_path: Path, style: str) -> None:
    def part(day: int) -> str:
        return "dt=" + datetime(2024, 1, day).strftime(style)

    # The newer schema's files were written first (older mtimes), so only the partition tells.
    write(tmp_path / part(20) / "p0.parquet", NEW, 7, mtime=ts("2023-01-01"))
    write(tmp_path / part(5) / "p0.parquet", OLD, 10, mtime=ts("2023-06-01"))
    write(tmp_path / part(5) / "p1.parquet", OLD, 11, mtime=ts("2023-06-01"))
    write(tmp_path / part(9) / "p0.parquet", OLD, 12, mtime=ts("2023-06-02"))
    write(tmp_path / part(21) / "p0.parquet", NEW, 8, mtime=ts("2023-01-02"))

    h = history_of(tmp_path)

    assert h.ordered_by == "partition dt"
    old, new = h.versions
    assert (old.number, new.number) == (1, 2)
    assert old.fingerprint != new.fingerprint
    assert [f.name for f in old.footer.schema.fields] == ["a", "b"]
    assert [f.name for f in new.footer.schema.fields] == ["a", "c"]
    assert [f.rel for f in old.files] == [f"{part(5)}/p0.parquet", f"{part(5)}/p1.parquet",
                                          f"{part(9)}/p0.parquet"]
    assert old.partitions == (part(5), part(9))
    assert new.partitions == (part(20), part(21))
    assert (old.rows, new.rows) == (33, 15)
    assert (old.first_seen, old.last_seen) == ("2024-01-05", "2024-01-09")
    assert (new.first_seen, new.last_seen) == ("2024-01-20", "2024-01-21")


def test_date_partition_below_another_partition(tmp_path: Path) -> None:
    write(tmp_path / "region=eu" / "dt=2024-03-02" / "p.parquet", NEW, 1)
    write(tmp_path / "region=us" / "dt=2024-03-01" / "p.parquet", OLD, 2)
    write(tmp_path / "region=eu" / "dt=2024-02-28" / "p.parquet", OLD, 3)
    h = history_of(tmp_path)
    assert h.ordered_by == "partition dt"
    assert [v.rows for v in h.versions] == [5, 1]
    assert h.versions[0].partitions == ("region=eu/dt=2024-02-28", "region=us/dt=2024-03-01")
    assert (h.versions[0].first_seen, h.versions[0].last_seen) == ("2024-02-28", "2024-03-01")


def test_a_version_that_returns_keeps_its_first_and_last_seen(tmp_path: Path) -> None:
    """OLD, then NEW, then OLD again (a rollback): still two versions, OLD spanning both."""
    write(tmp_path / "dt=2024-01-01" / "p.parquet", OLD, 1)
    write(tmp_path / "dt=2024-01-02" / "p.parquet", NEW, 1)
    write(tmp_path / "dt=2024-01-03" / "p.parquet", OLD, 1)
    h = history_of(tmp_path)
    assert [(v.first_seen, v.last_seen, v.rows) for v in h.versions] == [
        ("2024-01-01", "2024-01-03", 2),
        ("2024-01-02", "2024-01-02", 1),
    ]


# ---------------------------------------------------------------------------------------------
# Ordering by modification time


def test_versions_are_ordered_by_mtime_without_a_date_partition(tmp_path: Path) -> None:
    # File names sort the newer schema first; the mtimes say otherwise.
    write(tmp_path / "a-new.parquet", NEW, 4, mtime=ts("2024-02-01T12:00:00"))
    write(tmp_path / "b-old.parquet", OLD, 5, mtime=ts("2024-01-01T08:30:00"))
    write(tmp_path / "c-old.parquet", OLD, 6, mtime=ts("2024-01-03T09:00:00"))
    write(tmp_path / "d-new.parquet", NEW, 1, mtime=ts("2024-02-10T00:00:00"))

    h = history_of(tmp_path)

    assert h.ordered_by == "file modification time"
    old, new = h.versions
    assert [f.rel for f in old.files] == ["b-old.parquet", "c-old.parquet"]
    assert [f.rel for f in new.files] == ["a-new.parquet", "d-new.parquet"]
    assert (old.rows, new.rows) == (11, 5)
    assert old.partitions == () and new.partitions == ()
    assert old.first_seen == iso("2024-01-01T08:30:00")
    assert old.last_seen == iso("2024-01-03T09:00:00")
    assert new.first_seen == iso("2024-02-01T12:00:00")
    assert new.last_seen == iso("2024-02-10T00:00:00")


def test_a_non_date_partition_falls_back_to_mtime(tmp_path: Path) -> None:
    write(tmp_path / "region=eu" / "p.parquet", NEW, 1, mtime=ts("2024-05-01"))
    write(tmp_path / "region=us" / "p.parquet", OLD, 1, mtime=ts("2024-04-01"))
    h = history_of(tmp_path)
    assert h.ordered_by == "file modification time"
    assert [v.partitions for v in h.versions] == [("region=us",), ("region=eu",)]


def test_a_partly_null_date_partition_falls_back_to_mtime(tmp_path: Path) -> None:
    write(tmp_path / "dt=2024-01-01" / "p.parquet", NEW, 1, mtime=ts("2024-05-01"))
    write(tmp_path / "dt=__HIVE_DEFAULT_PARTITION__" / "p.parquet", OLD, 1, mtime=ts("2024-04-01"))
    h = history_of(tmp_path)
    assert h.ordered_by == "file modification time"
    assert [v.rows for v in h.versions] == [1, 1]
    assert h.versions[0].first_seen == iso("2024-04-01T00:00:00")


def test_an_eight_digit_number_is_not_a_date(tmp_path: Path) -> None:
    write(tmp_path / "run=10000001" / "p.parquet", NEW, 1, mtime=ts("2024-05-01"))
    write(tmp_path / "run=10000002" / "p.parquet", OLD, 1, mtime=ts("2024-04-01"))
    h = history_of(tmp_path)
    assert h.ordered_by == "file modification time"
    assert [v.rows for v in h.versions] == [1, 1]
    assert [v.partitions for v in h.versions] == [("run=10000002",), ("run=10000001",)]
    assert h.versions[0].first_seen == iso("2024-04-01T00:00:00")


def test_a_null_partition_is_not_confused_with_the_string_none(tmp_path: Path) -> None:
    write(tmp_path / "region=None" / "p.parquet", OLD, 1)
    write(tmp_path / "region=__HIVE_DEFAULT_PARTITION__" / "p.parquet", OLD, 1)
    (version,) = history_of(tmp_path).versions
    assert len(version.partitions) == 2


def test_same_schema_is_one_version(tmp_path: Path) -> None:
    for i in range(5):
        write(tmp_path / f"dt=2024-01-0{i + 1}" / "p.parquet", OLD, i + 1)
    (v,) = history_of(tmp_path).versions
    assert v.number == 1
    assert v.rows == 15
    assert len(v.files) == 5 and len(v.partitions) == 5
    assert (v.first_seen, v.last_seen) == ("2024-01-01", "2024-01-05")


def test_empty_history() -> None:
    h = build_history([])
    assert h.versions == ()


# ---------------------------------------------------------------------------------------------
# Column changes between versions


def test_column_changes_name_added_removed_and_changed_columns(tmp_path: Path) -> None:
    write(tmp_path / "dt=2024-01-01" / "p.parquet", OLD, 3)
    write(tmp_path / "dt=2024-01-02" / "p.parquet", NEW, 3)
    old, new = history_of(tmp_path).versions
    changes = {c.path: (c.before, c.after) for c in column_changes(old.footer, new.footer)}
    assert set(changes) == {"a", "b", "c"}
    a_before, a_after = changes["a"]
    assert a_before is not None and "int32" in a_before
    assert a_after is not None and "int64" in a_after
    assert changes["b"][0] is not None and "string" in changes["b"][0]
    assert changes["b"][1] is None  # removed
    assert changes["c"][0] is None  # added
    assert changes["c"][1] is not None and "double" in changes["c"][1]
    assert "not null" in changes["c"][1]


def test_column_changes_see_nullability_and_nested_leaves(tmp_path: Path) -> None:
    before = pa.schema([pa.field("id", pa.int64(), nullable=False),
                        pa.field("s", pa.struct([pa.field("x", pa.int32())]))])
    after = pa.schema([pa.field("id", pa.int64(), nullable=True),
                       pa.field("s", pa.struct([pa.field("x", pa.int32()),
                                                pa.field("y", pa.string())]))])
    for day, schema in ((1, before), (2, after)):
        path = tmp_path / f"dt=2024-01-0{day}" / "p.parquet"
        path.parent.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist([{"id": 1, "s": {"x": 1, "y": "a"}}], schema=schema),
                       path)
    v1, v2 = history_of(tmp_path).versions
    changes = {c.path: (c.before, c.after) for c in column_changes(v1.footer, v2.footer)}
    assert set(changes) == {"id", "s.y"}
    assert "not null" in (changes["id"][0] or "")
    assert "not null" not in (changes["id"][1] or "")
    assert changes["s.y"][0] is None


def test_no_column_changes_between_equal_footers(tmp_path: Path) -> None:
    write(tmp_path / "p.parquet", OLD, 3)
    (v,) = history_of(tmp_path).versions
    assert column_changes(v.footer, v.footer) == []


def test_spark_footer_schema_alone_makes_a_version(tmp_path: Path) -> None:
    spark_schema = {"type": "struct", "fields": [
        {"name": "a", "type": "integer", "nullable": True, "metadata": {}},
        {"name": "b", "type": "string", "nullable": True, "metadata": {}},
    ]}
    plain = rows(OLD, 2)
    with_spark = plain.replace_schema_metadata(
        {"org.apache.spark.sql.parquet.row.metadata": json.dumps(spark_schema)}
    )
    (tmp_path / "dt=2024-01-01").mkdir()
    (tmp_path / "dt=2024-01-02").mkdir()
    pq.write_table(plain, tmp_path / "dt=2024-01-01" / "p.parquet")
    pq.write_table(with_spark, tmp_path / "dt=2024-01-02" / "p.parquet")
    v1, v2 = history_of(tmp_path).versions
    assert v1.footer.schema == v2.footer.schema
    assert v1.fingerprint != v2.fingerprint
    assert v2.footer.spark_schema_json is not None
    assert [c.path for c in column_changes(v1.footer, v2.footer)] == ["(Spark footer schema)"]


def test_versions_written_in_the_same_second_follow_spark_order_and_say_so(tmp_path: Path) -> None:
    # Issue 9: with every mtime equal, the order came from fingerprints; now from the first file
    # of each version in Spark's listing order, and `ordered_by` says the times tie.
    same = ts("2024-03-01T10:00:00")
    write(tmp_path / "c.parquet", OLD, 1, mtime=same)
    write(tmp_path / "a.parquet", NEW, 2, mtime=same)
    write(tmp_path / "b.parquet", OLD, 3, mtime=same)
    h = history_of(tmp_path)
    assert [[f.rel for f in v.files] for v in h.versions] == [["a.parquet"], ["b.parquet", "c.parquet"]]
    assert h.ordered_by == ("file modification time (v1, v2 share their first and last times, so they "
                            "follow the order Spark lists their first files in)")
