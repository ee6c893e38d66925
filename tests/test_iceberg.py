"""Iceberg tables read through their metadata, checked against pyiceberg.

Every table here is written by pyiceberg's own writer on a SQL catalog (sqlite). For every
snapshot, the files schemaguard reads are exactly the files pyiceberg plans for a scan of that
snapshot (`scan(snapshot_id=...).plan_files()`), and the schema history and current schema are
pyiceberg's, field by field (ids, names, types, nullability)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import IntegerType, ListType, LongType, NestedField, StringType, StructType

from schemaguard.checks import run_checks
from schemaguard.checks.summary import summarize
from schemaguard.formats.iceberg import iceberg_schema
from schemaguard.formats.notation import describe
from schemaguard.lake.table import ReadOptions, TableRead, read
from schemaguard.model import Schema, fields_of, walk
from schemaguard.proofs import Proof
from schemaguard.proofs.run import run_proofs
from tests.helpers import run, sql_catalog


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[SqlCatalog]:
    with sql_catalog(tmp_path) as cat:
        yield cat


def local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def table_dir(t: Any) -> Path:
    return Path(local(t.metadata.location))


def shape(schema: Schema) -> list[tuple[str, str, bool, int | None]]:
    """Every field as (path, type, nullable, id), and every list element / map slot's type."""
    ids = {p: f.id for p, f in fields_of(schema)}
    return [(p, describe(t), n, ids.get(p)) for p, t, n in walk(schema)]


def engine_schema(t: Any, schema_id: int) -> Schema:
    return iceberg_schema(json.loads(t.metadata.schema_by_id(schema_id).model_dump_json()))


def assert_like_pyiceberg(t: Any) -> None:
    """At every snapshot: the same files as pyiceberg's plan, and the schema it reads with."""
    for s in t.metadata.snapshots:
        table = read(str(table_dir(t)), how=ReadOptions(version=s.snapshot_id), workers=1)
        assert table.iceberg is not None and table.iceberg.snapshot_id == s.snapshot_id
        planned = {local(task.file.file_path) for task in t.scan(snapshot_id=s.snapshot_id).plan_files()}
        assert {f.path for f in table.listing.files} == planned, f"files at snapshot {s.snapshot_id}"
        assert shape(table.iceberg.current.schema) == shape(engine_schema(t, s.schema_id))
    latest = read(str(table_dir(t)), workers=1)
    assert latest.iceberg is not None
    assert [s.schema_id for s in latest.iceberg.schemas] == sorted(s.schema_id for s in t.metadata.schemas)
    for s in latest.iceberg.schemas:
        assert shape(s.schema) == shape(engine_schema(t, s.schema_id))
    assert latest.iceberg.current_schema_id == t.metadata.current_schema_id


def arrow(t: Any, **columns: list[Any]) -> pa.Table:
    return pa.Table.from_pydict(columns, schema=t.schema().as_arrow())


def history(table: TableRead) -> list[tuple[int, int, list[tuple[str, str, str | None]]]]:
    return [(v.version, v.files, [(o.kind.value, o.path, o.old_path) for o in v.changes])
            for v in summarize("t", table).log_versions]


def evolved(catalog: SqlCatalog) -> Any:
    """qty int -> long, name renamed to title, note added and then dropped; a file per schema."""
    t = catalog.create_table("db.orders", IcebergSchema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "qty", IntegerType()),
        NestedField(3, "name", StringType())))
    t.append(arrow(t, id=[1, 2], qty=[1, None], name=["a", "b"]))
    with t.update_schema() as u:
        u.rename_column("name", "title")
        u.update_column("qty", field_type=LongType())
        u.add_column("note", StringType())
    t.append(arrow(t, id=[3], qty=[5], title=["c"], note=["x"]))
    with t.update_schema() as u:
        u.delete_column("note")
    return t


def test_schema_history_by_field_id_and_no_false_merge_conflict(catalog: SqlCatalog) -> None:
    t = evolved(catalog)
    table = read(str(table_dir(t)))
    assert table.table_format == "iceberg"
    assert table.scan.unreadable == ()  # the metadata files are Iceberg's, not data
    assert history(table) == [
        (0, 1, []),
        (1, 1, [("widen_type", "qty", None), ("rename", "title", "name"),
                ("add_optional_field", "note", None)]),
        (2, 0, [("drop_field", "note", None)]),
    ]
    # The file written before the rename shows the column by its name today (joined by id).
    assert [[p for p, _ in fields_of(v.footer.schema)] for v in table.versions] == [
        ["id", "qty", "title"], ["id", "qty", "title", "note"]]
    codes = [f.code for f in run_checks(table)]
    assert "SPARK_MERGE_CONFLICT" not in codes and "UNREADABLE_FILE" not in codes
    assert [c for c in codes if c.startswith("ICEBERG")] == []
    assert_like_pyiceberg(t)


def test_an_overwrite_leaves_unreferenced_files_counted_apart(catalog: SqlCatalog) -> None:
    t = catalog.create_table("db.over", IcebergSchema(NestedField(1, "id", LongType()),
                                                      NestedField(2, "qty", IntegerType())))
    t.append(arrow(t, id=[1], qty=[10]))
    old = {local(task.file.file_path) for task in t.scan().plan_files()}
    t.overwrite(arrow(t, id=[2], qty=[20]))
    table = read(str(table_dir(t)))
    assert {f.path for f in table.unreferenced} == old
    assert summarize("t", table).counts.unreferenced == 1
    with_old = read(str(table_dir(t)), how=ReadOptions(include_unreferenced=True))
    assert {f.path for f in with_old.listing.files} == old | {f.path for f in table.listing.files}
    assert_like_pyiceberg(t)


def test_a_partitioned_nested_table(catalog: SqlCatalog) -> None:
    schema = IcebergSchema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()),
        NestedField(3, "items", ListType(4, StructType(NestedField(5, "sku", StringType()),
                                                       NestedField(6, "n", IntegerType())))))
    t = catalog.create_table("db.parts", schema, partition_spec=PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region")))
    t.append(arrow(t, id=[1, 2], region=["eu", "us"], items=[[{"sku": "a", "n": 1}], []]))
    with t.update_schema() as u:
        u.rename_column("items.sku", "code")
    t.append(arrow(t, id=[3], region=["eu"], items=[[{"code": "b", "n": 2}]]))
    table = read(str(table_dir(t)))
    assert table.listing.partition_columns == ("region",)
    assert sorted({str(dict(f.partition)["region"]) for f in table.listing.files}) == ["eu", "us"]
    # The nested rename reaches the files written before it.
    for v in table.versions:
        assert "items[].code" in {p for p, _ in fields_of(v.footer.schema)}
    assert history(table)[1][2] == [("rename", "items[].code", "items[].sku")]
    assert_like_pyiceberg(t)


def test_files_without_field_ids_join_through_the_name_mapping(catalog: SqlCatalog, tmp_path: Path) -> None:
    t = catalog.create_table("db.imported", IcebergSchema(NestedField(1, "id", LongType()),
                                                          NestedField(2, "city", StringType())))
    plain = tmp_path / "outside.parquet"  # written by plain pyarrow: no field ids
    pq.write_table(pa.table({"id": pa.array([7], pa.int64()), "city": ["Oslo"]}), plain)
    t.add_files([str(plain)])
    with t.update_schema() as u:
        u.rename_column("city", "town")
    table = read(str(table_dir(t)))
    assert table.iceberg is not None and table.iceberg.name_mapping is not None
    [version] = table.versions
    assert [(p, f.id) for p, f in fields_of(version.footer.schema)] == [("id", 1), ("town", 2)]
    assert [f.code for f in run_checks(table) if f.code.startswith("ICEBERG")] == []
    assert pq.read_metadata(plain).schema.to_arrow_schema().field("city").metadata is None
    assert_like_pyiceberg(t)


def test_files_without_ids_or_a_name_mapping_are_a_finding(catalog: SqlCatalog, tmp_path: Path) -> None:
    t = catalog.create_table("db.nomap", IcebergSchema(NestedField(1, "id", LongType()),
                                                       NestedField(2, "city", StringType())))
    plain = tmp_path / "outside.parquet"
    pq.write_table(pa.table({"id": pa.array([7], pa.int64()), "city": ["Oslo"]}), plain)
    t.add_files([str(plain)])
    with t.transaction() as tx:
        tx.remove_properties("schema.name-mapping.default")
    # The engine's view: pyiceberg refuses to read the file.
    with pytest.raises(ValueError, match="field-ids"):
        t.scan().to_arrow()
    table = read(str(table_dir(t)))
    found = [f for f in run_checks(table) if f.code == "ICEBERG_FIELD_WITHOUT_ID"]
    assert len(found) == 1 and found[0].severity == "error"
    assert found[0].evidence == (("v1", "id, city"),)


def test_a_change_the_spec_forbids_is_an_error(catalog: SqlCatalog) -> None:
    t = catalog.create_table("db.strict", IcebergSchema(NestedField(1, "id", LongType()),
                                                        NestedField(2, "qty", IntegerType())))
    t.append(arrow(t, id=[1], qty=[None]))
    with t.update_schema(allow_incompatible_changes=True) as u:
        u.update_column("qty", required=True)
    table = read(str(table_dir(t)))
    [found] = [f for f in run_checks(table) if f.code == "ICEBERG_INCOMPATIBLE_CHANGE"]
    assert found.severity == "error" and found.count == 1 and "qty" in found.message
    assert found.subject == "schema-0"


def test_time_travel_by_snapshot_id_and_timestamp(catalog: SqlCatalog) -> None:
    t = evolved(catalog)
    first, second = t.metadata.snapshots
    old = read(str(table_dir(t)), how=ReadOptions(version=first.snapshot_id))
    assert old.iceberg is not None and old.iceberg.current_schema_id == 0
    assert [c.schema_id for c in old.iceberg.timeline] == [0]
    at = read(str(table_dir(t)), how=ReadOptions(timestamp=first.timestamp_ms / 1000))
    assert at.iceberg is not None and at.iceberg.snapshot_id == first.snapshot_id
    latest = read(str(table_dir(t)))
    assert latest.iceberg is not None and latest.iceberg.snapshot_id == second.snapshot_id


def test_the_scan_command_reads_a_directory_a_metadata_file_and_a_catalog_table(
        catalog: SqlCatalog, tmp_path: Path) -> None:
    t = evolved(catalog)
    by_dir = run("scan", str(table_dir(t)), "--format", "json")
    by_file = run("scan", local(t.metadata_location), "--format", "json")
    by_catalog = run("scan", "db.orders", "--catalog", "test", "--catalog-uri", f"sqlite:///{tmp_path}/catalog.db",
                     "--format", "json")
    docs = []
    for done in (by_dir, by_file, by_catalog):
        assert done.returncode == 0, done.stderr
        docs.append(json.loads(done.stdout))
    for doc in docs:
        assert doc["format"] == "iceberg"
        assert doc["snapshot"]["version"] == t.metadata.current_snapshot_id
        assert doc["snapshot"]["current_schema_id"] == 2
        assert [h["version"] for h in doc["snapshot"]["schema_history"]] == [0, 1, 2]
        assert doc["counts"]["files"] == 2 and doc["counts"]["unreferenced"] == 0
    # check proves on the snapshot asked for: before the second append, only the first file
    first = t.metadata.snapshots[0]
    at = run("check", str(table_dir(t)), "--not-null", "qty", "--version", str(first.snapshot_id),
             "--footer-only", "--format", "json")
    assert at.returncode == 1 and json.loads(at.stdout)["proofs"][0]["count"] == 1  # qty: [1, None]
    later = run("check", str(table_dir(t)), "--not-null", "note", "--footer-only", "--format", "json")
    assert later.returncode == 1 and json.loads(later.stdout)["format"] == "iceberg"
    text = run("scan", str(table_dir(t)))
    assert "Iceberg table, snapshot" in text.stdout and "rename name -> title" in text.stdout


def test_bad_iceberg_input_is_one_line_and_exit_2(catalog: SqlCatalog, tmp_path: Path) -> None:
    t = evolved(catalog)
    cases = [
        ("scan", str(table_dir(t)), "--version", "12345"),
        ("scan", "db.missing", "--catalog-uri", f"sqlite:///{tmp_path}/catalog.db"),
        ("scan", str(tmp_path / "nope.metadata.json")),
        ("scan", local(t.metadata_location), "--format-hint", "delta"),
    ]
    broken = tmp_path / "broken.metadata.json"
    broken.write_text("{not json")
    cases.append(("scan", str(broken)))
    for args in cases:
        done = run(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_the_audit_reads_an_iceberg_catalog_table_without_spark(catalog: SqlCatalog, tmp_path: Path) -> None:
    t = evolved(catalog)
    conf = tmp_path / "schemaguard.toml"
    conf.write_text(f"""
[audit]
profiles = ["iceberg"]
mode = "BACKWARD_TRANSITIVE"
report_dir = "reports"
formats = ["json"]
[catalog]
enabled = false
[[tables]]
name = "orders"
catalog_table = "db.orders"
iceberg_catalog = "test"
iceberg_catalog_uri = "sqlite:///{tmp_path}/catalog.db"
[[tables]]
name = "by_path"
path = "{table_dir(t)}"
profiles = ["iceberg"]
""")
    done = run("audit", "--conf", str(conf), "--format", "json")
    assert done.returncode == 0, done.stderr  # int -> long and a rename: the current schema reads every file
    doc = json.loads(done.stdout)
    for table in doc["tables"]:
        assert table["scan"]["format"] == "iceberg"
        assert table["current_source"] == "Iceberg metadata (schema 2)"
        assert [f["code"] for f in table["findings"] if f["severity"] == "error"] == []
    # FULL also asks whether a reader still on the first schema reads what is written now: long
    # read as int is no promotion Iceberg makes.
    full = tmp_path / "full.toml"
    full.write_text(conf.read_text().replace("BACKWARD_TRANSITIVE", "FULL_TRANSITIVE"))
    done = run("audit", "--conf", str(full), "--format", "json")
    assert done.returncode == 1
    for table in json.loads(done.stdout)["tables"]:
        assert [(f["code"], f["path"]) for f in table["findings"] if f["severity"] == "error"] == [
            ("VERSION_INCOMPATIBLE", "qty")]
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(conf.read_text().replace('"db.orders"', '"db.nope"'))
    done = run("audit", "--conf", str(wrong))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "db.nope" in done.stderr


def test_manifest_null_counts_decide_where_the_footer_has_none(catalog: SqlCatalog) -> None:
    """Another engine's file: field ids, no Parquet statistics, its own metrics in the manifest
    (committed with pyiceberg's fast append, as engines that compute metrics while writing do).
    The proofs decide from the manifest, read no data, and agree with pyiceberg's read."""
    t = catalog.create_table("db.metrics", IcebergSchema(NestedField(1, "id", LongType()),
                                                         NestedField(2, "v", LongType())))
    path = table_dir(t) / "data" / "engine-0.parquet"
    path.parent.mkdir(parents=True)
    ids = pa.schema([pa.field("id", pa.int64(), metadata={"PARQUET:field_id": "1"}),
                     pa.field("v", pa.int64(), metadata={"PARQUET:field_id": "2"})])
    pq.write_table(pa.table({"id": [1, 2, 3], "v": [4, None, 6]}, schema=ids), path, write_statistics=False)
    data = DataFile.from_args(content=DataFileContent.DATA, file_path=f"file://{path}",
                              file_format=FileFormat.PARQUET, partition=Record(), record_count=3,
                              file_size_in_bytes=path.stat().st_size, null_value_counts={1: 0, 2: 1},
                              value_counts={1: 3, 2: 3})
    data.spec_id = 0
    with t.transaction() as tx, tx.update_snapshot().fast_append() as append:
        append.append_data_file(data)
    table = read(str(table_dir(t)), workers=1)
    assert all(s.null_count is None for f in table.scan.footers for s in f.stats)  # the footer has none

    def no_spark() -> Any:
        raise AssertionError("statistics decide: no data is read")

    v, i = run_proofs(table, [Proof("not-null", "v"), Proof("not-null", "id")], spark=no_spark)
    assert (v.verdict, v.decided_by, v.count, v.rows_read) == ("refuted", "manifest", 1, 0)
    assert (i.verdict, i.decided_by) == ("proven", "manifest")
    engine = t.refresh().scan().to_arrow()
    assert (engine["v"].null_count, engine["id"].null_count) == (1, 0)


def test_a_plan_on_an_iceberg_catalog_table(catalog: SqlCatalog, tmp_path: Path) -> None:
    """Tightening `v` to required, planned against the table in its SQL catalog (no Spark): the
    not-null check is proven from the table's own statistics, so it is one edit; with a null it
    is refuted, and the plan stays staged."""
    t = catalog.create_table("db.events", IcebergSchema(NestedField(1, "id", LongType()),
                                                        NestedField(2, "v", LongType())))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": pa.array([5, 6], pa.int64())}))
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    fields = [{"name": "id", "id": 1, "type": "int64"}, {"name": "v", "id": 2, "type": "int64"}]
    old.write_text(json.dumps({"fields": fields}))
    new.write_text(json.dumps({"fields": [fields[0], {**fields[1], "nullable": False}]}))
    args = ("plan", str(old), str(new), "--table", "db.events", "--catalog", "test", "--catalog-uri",
            f"sqlite:///{tmp_path}/catalog.db", "--format", "json")
    done = run(*args)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["profiles"] == ["spark-read", "iceberg"] and doc["safe_as_single_edit"]
    [check] = doc["checks"]
    assert (check["kind"], check["status"]) == ("not-null", "proven")
    t.append(pa.table({"id": pa.array([3], pa.int64()), "v": pa.array([None], pa.int64())}))
    refuted = run(*args)
    assert refuted.returncode == 1
    assert json.loads(refuted.stdout)["checks"][0]["status"] == "refuted"


def test_versions_of_an_iceberg_table_follow_the_snapshots_that_added_their_files(
        catalog: SqlCatalog) -> None:
    """A late append to an old day, after a column was added, holds the newest schema: versions
    are in snapshot order, as pyiceberg's snapshots say, whatever the partition values."""
    schema = IcebergSchema(NestedField(1, "id", LongType(), required=False),
                           NestedField(2, "dt", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="dt"))
    t = catalog.create_table("db.late", schema, partition_spec=spec)
    t.append(pa.table({"id": pa.array([1], pa.int64()), "dt": ["2024-01-02"]}))
    first = {local(task.file.file_path) for task in t.scan().plan_files()}
    with t.update_schema() as update:
        update.add_column("note", StringType())
    t.append(pa.table({"id": pa.array([2], pa.int64()), "dt": ["2024-01-01"], "note": ["late"]}))
    table = read(str(table_dir(t)), workers=1)
    assert table.history.ordered_by == "the commit that added their files (the Iceberg snapshots)"
    oldest, newest = table.versions
    assert [f.name for f in newest.footer.schema.fields] == ["id", "dt", "note"]
    assert {f.path for f in table.listing.files if f.rel in set(oldest.files.rels())} == first


def test_a_moved_iceberg_table_says_where_the_files_it_reads_live(tmp_path: Path) -> None:
    """A copied folder whose metadata still names the original location: its readers read the
    original's files; the scan says so, and the copy's own copies of them are not unreferenced."""
    import shutil

    from schemaguard.demo import build_iceberg_demo

    original = build_iceberg_demo(tmp_path / "a")
    copy = tmp_path / "b" / "orders_iceberg"
    shutil.copytree(original, copy)
    table = read(str(copy), workers=1)
    assert table.iceberg is not None
    assert any(f"names the location file://{original}, not this folder" in n for n in table.iceberg.notes)
    assert table.unreferenced == ()
    assert table.listing.files and all(f.path.startswith(str(original)) for f in table.listing.files)
