"""`load_schemas`: every source kind, told apart by content, and one-line errors naming the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.formats.avro import schema_to_avsc
from schemaguard.formats.io import SchemaLoadError
from schemaguard.formats.notation import dumps
from schemaguard.formats.spark import schema_to_spark_json
from schemaguard.model import (
    DecimalType,
    Field,
    FloatType,
    IntType,
    ListType,
    Schema,
    StringType,
    StructType,
    make_metadata,
)
from schemaguard.sources import LoadedSchemas, load_schemas

SCHEMA = Schema((
    Field("id", IntType(64), nullable=False),
    Field("name", StringType()),
    Field("prices", ListType(DecimalType(12, 2), element_nullable=True)),
))
V1 = Schema((Field("id", IntType(64), nullable=False), Field("name", StringType())))
V2 = Schema((*V1.fields, Field("score", FloatType(64))))


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def only(loaded: LoadedSchemas) -> Schema:
    (label_and_schema,) = loaded.schemas
    return label_and_schema[1]


# ---------------------------------------------------------------------------------------------
# One schema file of each kind; the name says nothing, the content decides


def test_a_notation_file(tmp_path: Path) -> None:
    loaded = load_schemas(write(tmp_path / "orders.schema", dumps(SCHEMA, indent=2)))
    assert loaded == LoadedSchemas("notation", (("orders.schema", SCHEMA),))


def test_a_spark_struct_type_json_file(tmp_path: Path) -> None:
    loaded = load_schemas(write(tmp_path / "orders.json", schema_to_spark_json(SCHEMA)))
    assert loaded.kind == "spark" and loaded.schemas[0][0] == "orders.json"
    assert only(loaded) == SCHEMA


def test_an_avro_file_even_with_a_misleading_name(tmp_path: Path) -> None:
    loaded = load_schemas(write(tmp_path / "orders.parquet", json.dumps(schema_to_avsc(SCHEMA))))
    assert loaded.kind == "avro" and only(loaded) == SCHEMA


def test_a_json_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + dumps(SCHEMA).encode())
    assert only(load_schemas(str(path))) == SCHEMA


def test_a_parquet_file_without_a_parquet_name(tmp_path: Path) -> None:
    path = tmp_path / "part-0"
    pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "name": ["a"]}), path)
    loaded = load_schemas(str(path))
    assert loaded.kind == "parquet" and loaded.schemas[0][0] == "part-0"
    assert only(loaded).field_names() == ["id", "name"]
    assert only(loaded).fields[0].type == IntType(64)


def test_a_file_uri(tmp_path: Path) -> None:
    path = write(tmp_path / "s.json", dumps(SCHEMA))
    assert load_schemas(f"file://{path}").kind == "notation"


# ---------------------------------------------------------------------------------------------
# A Parquet table directory: every version, oldest first


def test_a_table_directory_gives_every_version_oldest_first(tmp_path: Path) -> None:
    table = tmp_path / "orders"
    table.mkdir()
    old = pa.table({"id": pa.array([1], pa.int64()), "name": ["a"]})
    new = old.append_column("score", pa.array([0.5]))
    for name, data, mtime in [("b-old.parquet", old, 1_700_000_000), ("a-new.parquet", new, 1_700_100_000)]:
        pq.write_table(data, table / name)
        os.utime(table / name, (mtime, mtime))
    (table / "_SUCCESS").write_text("")
    loaded = load_schemas(str(table))
    assert loaded.kind == "table" and [label for label, _ in loaded.schemas] == ["v1", "v2"]
    assert [s.field_names() for _, s in loaded.schemas] == [["id", "name"], ["id", "name", "score"]]
    assert loaded.notes == ()


def test_unreadable_files_in_a_table_are_skipped_with_a_note(tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": [1]}), tmp_path / "good.parquet")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 truncated")
    loaded = load_schemas(str(tmp_path))
    assert len(loaded.schemas) == 1 and loaded.notes == (
        "1 unreadable files skipped (`schemaguard scan` says why)",)


# ---------------------------------------------------------------------------------------------
# A Delta table: the log's schemas in commit order (PROTOCOL.md: newline-delimited JSON actions)


PROTOCOL = {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}


def meta_action(schema: Schema, configuration: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metaData": {
        "id": "0f6b8d7e-3c0a-4bde-9d6c-2f1f2c3a4b5c",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": schema_to_spark_json(schema),
        "partitionColumns": [],
        "configuration": configuration or {},
        "createdTime": 1_700_000_000_000,
    }}


def add_action(n: int) -> dict[str, Any]:
    return {"add": {"path": f"part-{n:05d}.snappy.parquet", "partitionValues": {}, "size": 512,
                    "modificationTime": 1_700_000_000_000 + n, "dataChange": True}}


def commit_info(operation: str) -> dict[str, Any]:
    return {"commitInfo": {"timestamp": 1_700_000_000_000, "operation": operation}}


def commit(table: Path, version: int, *actions: dict[str, Any]) -> None:
    write(table / "_delta_log" / f"{version:020d}.json", "\n".join(json.dumps(a) for a in actions) + "\n")


def test_a_delta_table_gives_each_schema_its_log_sets_in_commit_order(tmp_path: Path) -> None:
    table = tmp_path / "delta"
    commit(table, 0, commit_info("CREATE TABLE"), PROTOCOL, meta_action(V1), add_action(0))
    commit(table, 1, commit_info("WRITE"), add_action(1))  # no metaData: the schema stays
    commit(table, 2, commit_info("WRITE"), meta_action(V2), add_action(2))  # mergeSchema
    commit(table, 3, commit_info("SET TBLPROPERTIES"), meta_action(V2, {"delta.appendOnly": "true"}))
    (table / "_delta_log" / "00000000000000000003.crc").write_text("{}")
    (table / "part-00000.snappy.parquet").write_bytes(b"not read")
    loaded = load_schemas(str(table))
    assert loaded == LoadedSchemas("delta", (("v0", V1), ("v2", V2)))


def test_a_schema_that_comes_back_is_listed_again(tmp_path: Path) -> None:
    commit(tmp_path, 0, PROTOCOL, meta_action(V1))
    commit(tmp_path, 1, meta_action(V2))
    commit(tmp_path, 2, meta_action(V1))  # overwriteSchema back to V1: a change to check too
    assert [label for label, _ in load_schemas(str(tmp_path)).schemas] == ["v0", "v1", "v2"]


def mapped(name: str, t: Any, column_id: int) -> dict[str, Any]:
    return {"name": name, "type": t, "nullable": True,
            "metadata": {"delta.columnMapping.id": column_id,
                         "delta.columnMapping.physicalName": f"col-{column_id:04d}"}}


def test_column_mapping_ids_become_field_ids_and_logical_names_stay(tmp_path: Path) -> None:
    struct = {"type": "struct", "fields": [
        mapped("customer_id", "long", 1),
        mapped("address", {"type": "struct", "fields": [mapped("city", "string", 3)]}, 2),
    ]}
    action = meta_action(V1, {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "3"})
    action["metaData"]["schemaString"] = json.dumps(struct)
    commit(tmp_path, 0, PROTOCOL, action)
    customer_id, address = only(load_schemas(str(tmp_path))).fields
    assert customer_id == Field("customer_id", IntType(64), id=1,
                                metadata=make_metadata({"delta.columnMapping.physicalName": "col-0001"}))
    assert address.id == 2 and isinstance(address.type, StructType)
    assert address.type.fields[0].id == 3 and address.type.fields[0].name == "city"


def test_without_column_mapping_the_mapping_metadata_is_left_alone(tmp_path: Path) -> None:
    action = meta_action(V1)
    action["metaData"]["schemaString"] = json.dumps({"type": "struct", "fields": [mapped("a", "long", 1)]})
    commit(tmp_path, 0, PROTOCOL, action)
    (a,) = only(load_schemas(str(tmp_path))).fields
    assert a.id is None and a.meta["delta.columnMapping.id"] == "1"


def write_checkpoint(table: Path, version: int, schema: Schema, configuration: dict[str, str]) -> None:
    """A classic checkpoint as Delta writes it: one row per action, the other columns null."""
    meta_type = pa.struct([
        ("id", pa.string()), ("schemaString", pa.string()), ("partitionColumns", pa.list_(pa.string())),
        ("configuration", pa.map_(pa.string(), pa.string())), ("createdTime", pa.int64()),
    ])
    columns = pa.schema([
        ("protocol", pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32())])),
        ("metaData", meta_type),
        ("add", pa.struct([("path", pa.string()), ("size", pa.int64())])),
    ])
    meta = meta_action(schema)["metaData"]
    rows = [
        {"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}},
        {"add": {"path": "part-00000.snappy.parquet", "size": 512}},
        {"metaData": {"id": meta["id"], "schemaString": meta["schemaString"], "partitionColumns": [],
                      "configuration": list(configuration.items()), "createdTime": meta["createdTime"]}},
    ]
    (table / "_delta_log").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=columns),
                   table / "_delta_log" / f"{version:020d}.checkpoint.parquet")


def test_when_old_commits_are_cleaned_up_the_history_starts_at_a_checkpoint(tmp_path: Path) -> None:
    write_checkpoint(tmp_path, 10, V1, {"delta.appendOnly": "false"})
    commit(tmp_path, 10, meta_action(V1))
    commit(tmp_path, 11, add_action(11))
    commit(tmp_path, 12, meta_action(V2))
    loaded = load_schemas(str(tmp_path))
    assert loaded.schemas == (("v10", V1), ("v12", V2))
    assert loaded.notes == ("history starts at checkpoint v10: older commits were cleaned up",)


def test_a_checkpoint_under_column_mapping_gives_ids(tmp_path: Path) -> None:
    write_checkpoint(tmp_path, 5, V1, {"delta.columnMapping.mode": "id"})
    checkpoint = next((tmp_path / "_delta_log").iterdir())
    data = pq.read_table(checkpoint).to_pylist()
    struct = {"type": "struct", "fields": [mapped("a", "long", 9)]}
    data[2]["metaData"]["schemaString"] = json.dumps(struct)
    pq.write_table(pa.Table.from_pylist(data, schema=pq.read_schema(checkpoint)), checkpoint)
    (a,) = only(load_schemas(str(tmp_path))).fields
    assert a.id == 9


def test_with_commit_zero_present_the_whole_log_is_replayed_and_checkpoints_ignored(tmp_path: Path) -> None:
    commit(tmp_path, 0, PROTOCOL, meta_action(V1))
    commit(tmp_path, 1, meta_action(V2))
    write_checkpoint(tmp_path, 1, V2, {})
    loaded = load_schemas(str(tmp_path))
    assert loaded.schemas == (("v0", V1), ("v1", V2)) and loaded.notes == ()


# ---------------------------------------------------------------------------------------------
# Errors: one line, starting with the file, for the command line to print before exit 2


def _missing(tmp_path: Path) -> str:
    return str(tmp_path / "nope.json")


def _text(content: str, name: str = "s.json") -> Callable[[Path], str]:
    return lambda tmp_path: write(tmp_path / name, content)


def _bytes(content: bytes, name: str) -> Callable[[Path], str]:
    def make(tmp_path: Path) -> str:
        (tmp_path / name).write_bytes(content)
        return str(tmp_path / name)
    return make


def _table_dir(tmp_path: Path) -> str:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "junk.bin").write_bytes(b"hello, not parquet")
    return str(tmp_path / "t")


def _empty_dir(tmp_path: Path) -> str:
    (tmp_path / "empty").mkdir()
    return str(tmp_path / "empty")


def _delta(*commits: tuple[int, str]) -> Callable[[Path], str]:
    def make(tmp_path: Path) -> str:
        (tmp_path / "d" / "_delta_log").mkdir(parents=True)
        for version, text in commits:
            write(tmp_path / "d" / "_delta_log" / f"{version:020d}.json", text)
        return str(tmp_path / "d")
    return make


GOOD_COMMIT = json.dumps(PROTOCOL) + "\n" + json.dumps(meta_action(V1))
BAD_SCHEMA_STRING = json.dumps({"metaData": {"schemaString": '{"type":"struct","fields":[{"name":"a",'
                                                            '"type":"interval"}]}', "configuration": {}}})


@pytest.mark.parametrize(
    ("make", "where", "problem"),
    [
        (_missing, "nope.json", "no such file or directory"),
        (_text("hello"), "s.json", "not JSON and not Parquet"),
        (_bytes(b"\xff\xfe\x00garbage", "s.bin"), "s.bin", "not JSON and not Parquet"),
        (_text("[1, 2]"), "s.json", "invalid avro schema: schema: not an Avro type: 1"),  # a union of what?
        (_text('{"type": "widget", "name": "E"}'), "s.json", "JSON that is no schema"),
        (_text('{"columns": []}'), "s.json", "JSON that is no schema"),
        (_text('{"fields": [{"name": "a", "type": "int33"}]}'), "s.json",
         "invalid notation schema: a: unknown type 'int33'"),
        (_text('{"type": "struct", "fields": [{"name": "a", "type": "interval"}]}'), "s.json",
         "invalid spark schema: a: Spark type 'interval' has no notation equivalent"),
        (_text('{"type": "struct", "fields": [{"name": "a", "type": {"type": "array"}}]}'), "s.json",
         "invalid spark schema: missing key 'elementType'"),
        (_text('{"type": "record", "name": "r", "fields": [{"name": "a", "type": ["int", ["string"]]}]}'),
         "s.json", "invalid avro schema: a: a union may not hold a union"),
        (_bytes(b"", "empty.parquet"), "empty.parquet", "unreadable Parquet file: zero-byte file"),
        (_bytes(b"PAR1" + b"\x00" * 64, "cut.parquet"), "cut.parquet", "unreadable Parquet file: truncated"),
        (_empty_dir, "empty", "no readable Parquet files"),
        (_table_dir, "t", "no readable Parquet files (1 unreadable; junk.bin: not a Parquet file"),
        (_delta(), "d/_delta_log", "no Delta commits or checkpoints"),
        (_delta((0, GOOD_COMMIT), (2, GOOD_COMMIT)), "d/_delta_log",
         "commit 1 is missing and no checkpoint lets it be replayed"),
        (_delta((3, GOOD_COMMIT)), "d/_delta_log", "the log starts at version 3 and no checkpoint"),
        (_delta((0, GOOD_COMMIT), (1, '{"add": {}}\n{oops')), "d/_delta_log/00000000000000000001.json",
         "line 2 is not JSON"),
        (_delta((0, BAD_SCHEMA_STRING)), "d/_delta_log/00000000000000000000.json",
         "invalid schemaString: a: Spark type 'interval'"),
        (_delta((0, json.dumps({"metaData": {"configuration": {}}}))),
         "d/_delta_log/00000000000000000000.json", "metaData has no schemaString"),
        (_delta((0, json.dumps(PROTOCOL))), "d/_delta_log", "no metaData action with a schema in the log"),
    ],
)
def test_every_failure_is_one_line_naming_the_file(
    tmp_path: Path, make: Callable[[Path], str], where: str, problem: str
) -> None:
    source = make(tmp_path)
    with pytest.raises(SchemaLoadError) as caught:
        load_schemas(source)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path}/{where}: {problem}"), message


def test_an_unknown_uri_scheme_is_a_load_error() -> None:
    with pytest.raises(SchemaLoadError, match="nosuch://bucket/t"):
        load_schemas("nosuch://bucket/t")


def test_importing_the_loader_does_not_import_pyspark() -> None:
    code = "import sys, schemaguard.sources; print('pyspark' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
