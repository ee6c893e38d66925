"""A Delta table's schema history from its transaction log (`_delta_log/`), read directly.

Every schema its log sets (`metaData.schemaString`), in commit order, a schema equal to the one
before it left out, labelled with the Delta table version that set it (`v0` is the creation).
Under column mapping (`name` or `id`), each field's `delta.columnMapping.id` becomes its id.
When cleaned-up commits leave a checkpoint as the oldest state, the history starts with the
checkpoint's metaData, and a note says so (Delta PROTOCOL.md: checkpoints, commit files).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from schemaguard.errors import first_line
from schemaguard.formats.io import SchemaLoadError, inside, read_bytes
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.model import DataType, Field, Schema, SchemaTransform, make_metadata, transform

MAPPING_MODE_KEY = "delta.columnMapping.mode"
MAPPING_ID_KEY = "delta.columnMapping.id"
_COMMIT = re.compile(r"(\d{20})\.json")
# Classic (`n.checkpoint.parquet`), multi-part (`n.checkpoint.i.k.parquet`) and V2 (`n.checkpoint.uuid.json`).
_CHECKPOINT = re.compile(r"(\d{20})\.checkpoint(?:\.[\w-]+)*\.(?:json|parquet)")


def delta_schemas(filesystem: pafs.FileSystem, log: str,
                  shown: str) -> tuple[list[tuple[str, Schema]], list[str]]:
    """Every schema the log at `log` sets, labelled `v<table version>`, and notes (a cut history)."""
    try:
        entries = filesystem.get_file_info(pafs.FileSelector(log))
    except (OSError, pa.ArrowException) as e:
        raise SchemaLoadError(f"{shown}: cannot be listed: {first_line(e)}") from None
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
        states.append((start, inside(shown, f"{start:020d}.checkpoint"),
                       _checkpoint_metadata(filesystem, sorted(checkpoints[start]), shown)))
    states += [(v, inside(shown, f"{v:020d}.json"), _commit_metadata(filesystem, commits[v], shown))
               for v in replay]
    schemas: list[tuple[str, Schema]] = []
    for version, where, meta in states:
        schema = _delta_schema(meta, where) if meta is not None else None
        if schema is not None and (not schemas or schemas[-1][1] != schema):
            schemas.append((f"v{version}", schema))
    if not schemas:
        raise SchemaLoadError(f"{shown}: no metaData action with a schema in the log")
    cut = f"history starts at checkpoint v{start}: older commits were cleaned up"
    return schemas, ([] if start is None else [cut])


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
    shown = inside(shown_log, path.rpartition("/")[2])
    return _json_metadata(read_bytes(filesystem, path, shown), shown)


def _json_metadata(data: bytes, shown: str) -> dict[str, Any] | None:
    """The last metaData action among a JSON log file's newline-delimited actions, if any."""
    found = None
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except json.JSONDecodeError as e:
            raise SchemaLoadError(f"{shown}: line {number} is not JSON ({first_line(e)})") from None
        if isinstance(action, dict) and isinstance(action.get("metaData"), dict):
            found = action["metaData"]
    return found


def _checkpoint_metadata(
    filesystem: pafs.FileSystem, paths: list[str], shown_log: str
) -> dict[str, Any] | None:
    """The metaData action of a checkpoint (any of its parts), read with pyarrow or as JSON."""
    for path in paths:
        shown = inside(shown_log, path.rpartition("/")[2])
        if path.endswith(".json"):
            meta = _json_metadata(read_bytes(filesystem, path, shown), shown)
        else:
            try:
                rows = pq.read_table(path, columns=["metaData"], filesystem=filesystem).column(0).to_pylist()
            except (OSError, pa.ArrowException, KeyError) as e:
                raise SchemaLoadError(f"{shown}: unreadable checkpoint: {first_line(e)}") from None
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
        return transform(schema, _MappingIds()) if mode in ("name", "id") else schema
    except (ValueError, LookupError, TypeError) as e:
        raise SchemaLoadError(f"{shown}: invalid schemaString: {first_line(e)}") from None


class _MappingIds(SchemaTransform):
    """Column-mapping ids as field ids, where id-identity readers look for them."""

    def field(self, f: Field, path: str, type_result: DataType) -> Field:
        meta = f.meta
        raw = meta.pop(MAPPING_ID_KEY, None)
        fid = f.id if raw is None else int(raw)
        return replace(f, type=type_result, id=fid, metadata=make_metadata(meta))
