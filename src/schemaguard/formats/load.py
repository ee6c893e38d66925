"""Every schema source the command line accepts, loaded into the model as labelled schemas.

A source is a local path or a URI, told apart by content rather than by name:
- a file starting with Parquet's magic (or named `*.parquet` and not JSON) -> its footer schema;
- a JSON file, by its top-level keys: `{"type": "struct"}` is Spark StructType JSON,
  `{"type": "record"}` Avro `.avsc`, `{"fields": [...]}` without `type` the neutral notation;
  each labelled with the file name;
- a directory with `_delta_log/` -> a Delta table: every schema its log sets (`metaData.schemaString`),
  in commit order, a schema equal to the one before it left out; labelled with the Delta table
  version that set it (`v0` is the creation). Under column mapping (`name` or `id`), each field's
  `delta.columnMapping.id` becomes its id. When cleaned-up commits leave a checkpoint as the
  oldest state, the history starts with the checkpoint's metaData, and a note says so;
- any other directory -> a Parquet table: every footer schema version, oldest first, labelled
  `v1`, `v2`, ... as `schemaguard scan` numbers them.
Every failure is a `SchemaLoadError` whose one-line message names the file and the problem, so the
command line can print it and exit 2. Nothing here imports pyspark.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from schemaguard.formats.avro import schema_from_avsc
from schemaguard.formats.notation import schema_from_notation
from schemaguard.formats.parquet import MAGIC, UnreadableFile, read_footer
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.lake.discover import DiscoveryError, discover, resolve
from schemaguard.lake.history import build_history
from schemaguard.lake.scan import scan
from schemaguard.model import DataType, Field, ListType, MapType, Schema, StructType, make_metadata

Kind = Literal["notation", "spark", "avro", "parquet", "table", "delta"]

MAX_SCHEMA_FILE_BYTES = 64 * 2**20  # a schema file larger than this is some other file given by mistake
MAPPING_MODE_KEY = "delta.columnMapping.mode"
MAPPING_ID_KEY = "delta.columnMapping.id"
_COMMIT = re.compile(r"(\d{20})\.json")
# Classic (`n.checkpoint.parquet`), multi-part (`n.checkpoint.i.k.parquet`) and V2 (`n.checkpoint.uuid.json`).
_CHECKPOINT = re.compile(r"(\d{20})\.checkpoint(?:\.[\w-]+)*\.(?:json|parquet)")


class SchemaLoadError(ValueError):
    """A source that cannot be loaded; the message is one line naming the file and the problem."""


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
    info = _info(filesystem, path, source)
    if info.type == pafs.FileType.NotFound:
        raise SchemaLoadError(f"{source}: no such file or directory")
    if info.type != pafs.FileType.Directory:
        return _load_file(filesystem, info, source)
    if _info(filesystem, f"{path}/_delta_log", source).type == pafs.FileType.Directory:
        return _load_delta(filesystem, f"{path}/_delta_log", _shown(source, "_delta_log"))
    return _load_table(source)


def _shown(source: str, rel: str) -> str:
    return f"{source.rstrip('/')}/{rel}"


def _one_line(e: BaseException) -> str:
    text = f"missing key {e}" if isinstance(e, KeyError) else str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def _info(filesystem: pafs.FileSystem, path: str, shown: str) -> pafs.FileInfo:
    try:
        return filesystem.get_file_info(path)
    except (OSError, pa.ArrowException) as e:
        raise SchemaLoadError(f"{shown}: cannot be read: {_one_line(e)}") from None


def _read(filesystem: pafs.FileSystem, path: str, shown: str, limit: int | None = None) -> bytes:
    """The file's bytes; only the first `limit` of them when a limit is given."""
    try:
        with filesystem.open_input_file(path) as f:
            return bytes(f.read_at(min(limit, f.size()), 0) if limit is not None else f.read())
    except (OSError, pa.ArrowException) as e:
        raise SchemaLoadError(f"{shown}: cannot be read: {_one_line(e)}") from None


# ---------------------------------------------------------------------------------------------
# One file: Parquet or one of the three JSON kinds


def _load_file(filesystem: pafs.FileSystem, info: pafs.FileInfo, source: str) -> LoadedSchemas:
    label = info.base_name
    head = _read(filesystem, info.path, source, len(MAGIC))
    if head == MAGIC or (label.endswith(".parquet") and not head.startswith(b"{")):
        try:
            footer = read_footer(info.path, filesystem=filesystem)
        except UnreadableFile as e:
            raise SchemaLoadError(f"{source}: unreadable Parquet file: {e.reason}") from None
        return LoadedSchemas("parquet", ((label, footer.schema),))
    if (info.size or 0) > MAX_SCHEMA_FILE_BYTES:
        raise SchemaLoadError(f"{source}: neither Parquet nor a schema file (too large for JSON schema)")
    try:
        doc = json.loads(_read(filesystem, info.path, source).decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SchemaLoadError(f"{source}: not JSON and not Parquet ({_one_line(e)})") from None
    kind = _json_kind(doc)
    if kind is None:
        raise SchemaLoadError(
            f'{source}: JSON that is no schema: expected notation {{"fields": [...]}}, '
            'Spark {"type": "struct", ...} or Avro {"type": "record", ...}')
    return LoadedSchemas(kind, ((label, _parse_json(kind, doc, source)),))


def _json_kind(doc: Any) -> Literal["notation", "spark", "avro"] | None:
    if not isinstance(doc, dict):
        return None
    if doc.get("type") == "struct":
        return "spark"
    if doc.get("type") == "record":
        return "avro"
    return "notation" if "fields" in doc and "type" not in doc else None


def _parse_json(kind: Literal["notation", "spark", "avro"], doc: Any, shown: str) -> Schema:
    try:
        if kind == "notation":
            return schema_from_notation(doc)
        if kind == "avro":
            return schema_from_avsc(doc)
        return schema_from_spark_json(json.dumps(doc))
    # ValueError covers NotationError, SparkSchemaError and AvroSchemaError; the Spark reader can
    # also fail with KeyError or TypeError on a malformed document.
    except (ValueError, LookupError, TypeError) as e:
        raise SchemaLoadError(f"{shown}: invalid {kind} schema: {_one_line(e)}") from None


# ---------------------------------------------------------------------------------------------
# A Parquet table directory


def _load_table(source: str) -> LoadedSchemas:
    try:
        listing = discover(source)
    except DiscoveryError as e:
        raise SchemaLoadError(str(e)) from None
    result = scan(listing)
    if not result.footers:
        first = result.unreadable[0] if result.unreadable else None
        why = f" ({len(result.unreadable)} unreadable; {first.rel}: {first.reason})" if first else ""
        raise SchemaLoadError(f"{source}: no readable Parquet files{why}")
    history = build_history(result.footers)
    notes = (
        (f"{len(result.unreadable)} unreadable files skipped (`schemaguard scan` says why)",)
        if result.unreadable else ()
    )
    return LoadedSchemas("table", tuple((f"v{v.number}", v.footer.schema) for v in history.versions), notes)


# ---------------------------------------------------------------------------------------------
# A Delta table: the schemas its log sets


def _load_delta(filesystem: pafs.FileSystem, log: str, shown: str) -> LoadedSchemas:
    try:
        entries = filesystem.get_file_info(pafs.FileSelector(log))
    except (OSError, pa.ArrowException) as e:
        raise SchemaLoadError(f"{shown}: cannot be listed: {_one_line(e)}") from None
    commits: dict[int, str] = {}
    checkpoints: dict[int, list[str]] = {}
    for entry in entries:
        if m := _COMMIT.fullmatch(entry.base_name):
            commits[int(m[1])] = entry.path
        elif m := _CHECKPOINT.fullmatch(entry.base_name):
            checkpoints.setdefault(int(m[1]), []).append(entry.path)
    if not commits and not checkpoints:
        raise SchemaLoadError(f"{shown}: no Delta commits or checkpoints")
    start, replay = _replay_plan(set(commits), set(checkpoints), shown)
    states: list[tuple[int, str, dict[str, Any] | None]] = []
    if start is not None:
        states.append((start, _shown(shown, f"{start:020d}.checkpoint"),
                       _checkpoint_metadata(filesystem, sorted(checkpoints[start]), shown)))
    states += [(v, _shown(shown, f"{v:020d}.json"), _commit_metadata(filesystem, commits[v], shown))
               for v in replay]
    schemas: list[tuple[str, Schema]] = []
    for version, where, meta in states:
        schema = _delta_schema(meta, where) if meta is not None else None
        if schema is not None and (not schemas or schemas[-1][1] != schema):
            schemas.append((f"v{version}", schema))
    if not schemas:
        raise SchemaLoadError(f"{shown}: no metaData action with a schema in the log")
    cut = f"history starts at checkpoint v{start}: older commits were cleaned up"
    notes = () if start is None else (cut,)
    return LoadedSchemas("delta", tuple(schemas), notes)


def _replay_plan(commits: set[int], checkpoints: set[int], shown: str) -> tuple[int | None, list[int]]:
    """The oldest state the log can rebuild: from the empty table when commit 0 is there, else
    from the oldest checkpoint every later commit follows; and the commits to replay after it."""
    latest = max(commits | checkpoints)
    for start in ([-1] if 0 in commits else []) + sorted(checkpoints):
        rest = range(start + 1, latest + 1)
        if all(v in commits for v in rest):
            return (start if start >= 0 else None), list(rest)
    oldest = min(commits | checkpoints)
    gaps = [v for v in range(oldest + 1, latest + 1) if v not in commits]
    problem = f"commit {gaps[0]} is missing" if gaps else f"the log starts at version {oldest}"
    raise SchemaLoadError(f"{shown}: {problem} and no checkpoint lets it be replayed")


def _commit_metadata(filesystem: pafs.FileSystem, path: str, shown_log: str) -> dict[str, Any] | None:
    shown = _shown(shown_log, path.rpartition("/")[2])
    return _json_metadata(_read(filesystem, path, shown), shown)


def _json_metadata(data: bytes, shown: str) -> dict[str, Any] | None:
    """The last metaData action among a JSON log file's newline-delimited actions, if any."""
    found = None
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except json.JSONDecodeError as e:
            raise SchemaLoadError(f"{shown}: line {number} is not JSON ({_one_line(e)})") from None
        if isinstance(action, dict) and isinstance(action.get("metaData"), dict):
            found = action["metaData"]
    return found


def _checkpoint_metadata(
    filesystem: pafs.FileSystem, paths: list[str], shown_log: str
) -> dict[str, Any] | None:
    """The metaData action of a checkpoint (any of its parts), read with pyarrow or as JSON."""
    for path in paths:
        shown = _shown(shown_log, path.rpartition("/")[2])
        if path.endswith(".json"):
            meta = _json_metadata(_read(filesystem, path, shown), shown)
        else:
            try:
                rows = pq.read_table(path, columns=["metaData"], filesystem=filesystem).column(0).to_pylist()
            except (OSError, pa.ArrowException, KeyError) as e:
                raise SchemaLoadError(f"{shown}: unreadable checkpoint: {_one_line(e)}") from None
            meta = next((r for r in rows if r), None)
        if meta is not None:
            return meta
    return None


def _delta_schema(meta: dict[str, Any], shown: str) -> Schema:
    text = meta.get("schemaString")
    if not isinstance(text, str):
        raise SchemaLoadError(f"{shown}: metaData has no schemaString")
    # pyarrow reads a map column as a list of pairs, JSON as an object: dict() takes both.
    mode = dict(meta.get("configuration") or {}).get(MAPPING_MODE_KEY, "none")
    try:
        schema = schema_from_spark_json(text)
        return Schema(_with_mapping_ids(schema.fields)) if mode in ("name", "id") else schema
    except (ValueError, LookupError, TypeError) as e:
        raise SchemaLoadError(f"{shown}: invalid schemaString: {_one_line(e)}") from None


def _with_mapping_ids(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """Column-mapping ids as field ids, where id-identity readers look for them."""
    return tuple(_field_with_mapping_id(f) for f in fields)


def _field_with_mapping_id(f: Field) -> Field:
    meta = f.meta
    raw = meta.pop(MAPPING_ID_KEY, None)
    return replace(f, type=_type_with_mapping_ids(f.type), id=f.id if raw is None else int(raw),
                   metadata=make_metadata(meta))


def _type_with_mapping_ids(t: DataType) -> DataType:
    if isinstance(t, StructType):
        return StructType(_with_mapping_ids(t.fields))
    if isinstance(t, ListType):
        return ListType(_type_with_mapping_ids(t.element), t.element_nullable)
    if isinstance(t, MapType):
        return MapType(_type_with_mapping_ids(t.key), _type_with_mapping_ids(t.value), t.value_nullable)
    return t
