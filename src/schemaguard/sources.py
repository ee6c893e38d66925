"""Every schema source the command line accepts, loaded into the model as labelled schemas.

A source is a local path or a URI, told apart by content rather than by name:
- a file starting with Parquet's magic (or named `*.parquet` and not JSON) -> its footer schema;
- a JSON file, by its top-level keys: `{"type": "struct"}` is Spark StructType JSON,
  `{"type": "record"}` Avro `.avsc`, `{"fields": [...]}` without `type` the neutral notation;
  each labelled with the file name;
- a directory with `_delta_log/` -> a Delta table: every schema its log sets, labelled with the
  Delta table version that set it (formats/delta.py);
- any other directory -> a Parquet table (lake.table.read): every footer schema version, oldest
  first, labelled `v1`, `v2`, ... as `schemaguard scan` numbers them.
Every failure is a `SchemaLoadError` whose one-line message names the file and the problem, so the
command line can print it and exit 2. Nothing here imports pyspark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pyarrow import fs as pafs

from schemaguard.errors import TOO_DEEP, first_line
from schemaguard.formats.avro import schema_from_avro_notation, schema_from_avsc
from schemaguard.formats.avro_schema import NAMED_KINDS, PRIMITIVE_KINDS
from schemaguard.formats.delta import delta_schemas
from schemaguard.formats.io import SchemaLoadError, file_info, inside, read_bytes
from schemaguard.formats.notation import schema_from_notation, uses_avro
from schemaguard.formats.parquet import MAGIC, UnreadableFile, read_footer
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.lake.discover import DiscoveryError, resolve
from schemaguard.lake.table import read
from schemaguard.model import Schema

Kind = Literal["notation", "spark", "avro", "parquet", "table", "delta"]

MAX_SCHEMA_FILE_BYTES = 64 * 2**20  # a schema file larger than this is some other file given by mistake


@dataclass(frozen=True, slots=True)
class LoadedSchemas:
    kind: Kind
    schemas: tuple[tuple[str, Schema], ...]  # (label, schema), oldest first
    notes: tuple[str, ...] = ()  # what a reader of the result should know (skipped files, a cut history)


def load_schemas(source: str) -> LoadedSchemas:
    try:
        filesystem, path, _ = resolve(source)
    except DiscoveryError as e:
        raise SchemaLoadError(str(e)) from None
    info = file_info(filesystem, path, source)
    if info.type == pafs.FileType.NotFound:
        raise SchemaLoadError(f"{source}: no such file or directory")
    if info.type != pafs.FileType.Directory:
        return _load_file(filesystem, info, source)
    if file_info(filesystem, f"{path}/_delta_log", source).type == pafs.FileType.Directory:
        schemas, notes = delta_schemas(filesystem, f"{path}/_delta_log", inside(source, "_delta_log"))
        return LoadedSchemas("delta", tuple(schemas), tuple(notes))
    return _load_table(source)


# ---------------------------------------------------------------------------------------------
# One file: Parquet or one of the three JSON kinds


def _load_file(filesystem: pafs.FileSystem, info: pafs.FileInfo, source: str) -> LoadedSchemas:
    label = info.base_name
    head = read_bytes(filesystem, info.path, source, len(MAGIC))
    if head == MAGIC or (label.endswith(".parquet") and not head.startswith(b"{")):
        try:
            footer = read_footer(info.path, filesystem=filesystem)
        except UnreadableFile as e:
            raise SchemaLoadError(f"{source}: unreadable Parquet file: {e.reason}") from None
        return LoadedSchemas("parquet", ((label, footer.schema),))
    if (info.size or 0) > MAX_SCHEMA_FILE_BYTES:
        raise SchemaLoadError(f"{source}: neither Parquet nor a schema file (too large for JSON schema)")
    try:
        doc = json.loads(read_bytes(filesystem, info.path, source).decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SchemaLoadError(f"{source}: not JSON and not Parquet ({first_line(e)})") from None
    except RecursionError:
        raise SchemaLoadError(f"{source}: {TOO_DEEP}") from None
    kind = _json_kind(doc)
    if kind is None:
        raise SchemaLoadError(
            f'{source}: JSON that is no schema: expected notation {{"fields": [...]}}, '
            'Spark {"type": "struct", ...} or Avro (.avsc)')
    return LoadedSchemas(kind, ((label, _parse_json(kind, doc, source)),))


def _json_kind(doc: Any) -> Literal["notation", "spark", "avro"] | None:
    """Spark's `{"type": "struct"}`; the notation's `{"fields": [...]}`; any Avro schema: a type
    name, a union (a JSON array) or an object with an Avro `type`."""
    if isinstance(doc, list) or doc in PRIMITIVE_KINDS:
        return "avro"
    if not isinstance(doc, dict):
        return None
    if doc.get("type") == "struct":
        return "spark"
    if doc.get("type") in (*PRIMITIVE_KINDS, *NAMED_KINDS, "array", "map"):
        return "avro"
    return "notation" if "fields" in doc and "type" not in doc else None


def _parse_json(kind: Literal["notation", "spark", "avro"], doc: Any, shown: str) -> Schema:
    try:
        if kind == "notation":
            return schema_from_avro_notation(doc) if uses_avro(doc["fields"]) else schema_from_notation(doc)
        if kind == "avro":
            return schema_from_avsc(doc)
        return schema_from_spark_json(json.dumps(doc))
    # ValueError covers NotationError, SparkSchemaError and AvroSchemaError; the Spark reader can
    # also fail with KeyError or TypeError on a malformed document.
    except (ValueError, LookupError, TypeError) as e:
        raise SchemaLoadError(f"{shown}: invalid {kind} schema: {first_line(e)}") from None


# ---------------------------------------------------------------------------------------------
# A Parquet table directory


def _load_table(source: str) -> LoadedSchemas:
    try:
        table = read(source)
    except DiscoveryError as e:
        raise SchemaLoadError(str(e)) from None
    result = table.scan
    if not result.footers:
        first = result.unreadable[0] if result.unreadable else None
        why = f" ({len(result.unreadable)} unreadable; {first.rel}: {first.reason})" if first else ""
        raise SchemaLoadError(f"{source}: no readable Parquet files{why}")
    notes = (
        (f"{len(result.unreadable)} unreadable files skipped (`schemaguard scan` says why)",)
        if result.unreadable else ()
    )
    return LoadedSchemas("table", tuple((f"v{v.number}", v.footer.schema) for v in table.versions), notes)
