"""A Delta table's schema history from its transaction log (`_delta_log/`), read directly.

Every schema its log sets (`metaData.schemaString`), in commit order, a schema (and partitioning)
equal to the one before it left out, labelled with the Delta table version that set it (`v0` is
the creation).
Under column mapping (`name` or `id`), each field's `delta.columnMapping.id` becomes its id.
When cleaned-up commits leave a checkpoint as the oldest state, the history starts with the
checkpoint's metaData, and a note says so (Delta PROTOCOL.md: checkpoints, commit files).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from urllib.parse import unquote

from schemaguard.errors import TOO_DEEP, first_line
from schemaguard.formats.io import SchemaLoadError, inside, read_bytes
from schemaguard.formats.spark import schema_from_spark_json
from schemaguard.model import DataType, Field, Schema, SchemaTransform, make_metadata, transform

if TYPE_CHECKING:  # pyarrow loads where a log is read: a scan of a Parquet directory never needs it
    from pyarrow import fs as pafs

MAPPING_MODE_KEY = "delta.columnMapping.mode"
MAPPING_ID_KEY = "delta.columnMapping.id"
MAPPING_PHYSICAL_KEY = "delta.columnMapping.physicalName"
# Field metadata Delta keeps for itself (column mapping, type widening's record of changes): a
# change of these is no change of the schema its readers see. A field id is a column-mapping id.
BOOKKEEPING = frozenset({MAPPING_PHYSICAL_KEY, MAPPING_ID_KEY, "delta.typeChanges", "field id"})
# Any number of digits, as Delta's FileNames matches them (writers pad to 20); a version must fit
# the Long Delta numbers it with.
_COMMIT = re.compile(r"(\d+)\.json")
MAX_VERSION = 2**63 - 1
# Classic (`n.checkpoint.parquet`), multi-part (`n.checkpoint.i.k.parquet`) and V2 (`n.checkpoint.uuid.json`).
_CHECKPOINT = re.compile(r"(\d+)\.checkpoint(?:\.[\w-]+)*\.(?:json|parquet)")
_CHECKPOINT_PART = re.compile(r"\d{20}\.checkpoint\.(\d{10})\.(\d{10})\.parquet")  # part i of k


class DeltaFile(NamedTuple):
    """One `add` action of the snapshot: a data file Delta readers read. A NamedTuple: a snapshot
    holds one per data file, millions on a large table."""

    path: str  # as logged, URI-decoded: relative to the table root, or an absolute URI
    partition_values: tuple[tuple[str, str | None], ...]  # as logged (physical column names)
    size: int
    modification_time: float | None  # seconds since the epoch
    added_in: int | None  # the commit that added it; None when only a checkpoint says it is there
    stats_json: str | None  # `stats` as logged: numRecords, nullCount, minValues, maxValues
    deletion_vector: bool

    @property
    def stats(self) -> dict[str, Any] | None:
        """The parsed statistics (parsed when asked: most reads never look at them); unusable
        statistics are no statistics, and the proofs fall back to the data."""
        try:
            parsed = json.loads(self.stats_json) if self.stats_json is not None else None
        except json.JSONDecodeError:
            return None
        return parsed if isinstance(parsed, dict) else None


@dataclass(frozen=True, slots=True)
class DeltaSchemaVersion:
    """A schema the log set (a `metaData` action whose schema or partition columns differ from the
    one before: a DataFrame overwritten with `overwriteSchema` and another `partitionBy` keeps its
    schema and changes only the partitioning, which the snapshot's files are read by)."""

    version: int  # the commit (or checkpoint) that set it
    timestamp: float | None  # the commit's time: its in-commit timestamp, else its file's mtime
    schema: Schema  # logical names; column-mapping ids as field ids
    configuration: dict[str, str]
    partition_columns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeltaLog:
    """A snapshot of a Delta table and its schema history, from the log alone."""

    version: int  # the snapshot's table version
    timestamp: float | None
    files: tuple[DeltaFile, ...]  # add minus remove, in path order
    schemas: tuple[DeltaSchemaVersion, ...]  # oldest first; the last is the snapshot's
    protocol: dict[str, Any]
    configuration: dict[str, str]  # the snapshot's table properties (its last metaData action)
    notes: tuple[str, ...]  # what a reader should know (a history cut at a checkpoint)
    commit_times: dict[int, float | None] = field(default_factory=dict)  # each commit read: its time

    @property
    def current(self) -> DeltaSchemaVersion:
        return self.schemas[-1]

    @property
    def mapping_mode(self) -> Literal["none", "name", "id"]:
        """The column mapping mode (Delta reads the property case-insensitively)."""
        mode = self.configuration.get(MAPPING_MODE_KEY, "none").lower()
        return "name" if mode == "name" else "id" if mode == "id" else "none"

    def schema_at(self, version: int | None) -> DeltaSchemaVersion:
        """The schema current at a table version (the oldest known, before the history starts)."""
        if version is None:
            return self.schemas[0]
        # a binary search: the loader asks once per file (schemas are oldest first)
        known = bisect_right(self.schemas, version, key=lambda s: s.version)
        return self.schemas[known - 1] if known else self.schemas[0]


def delta_schemas(filesystem: pafs.FileSystem, log: str,
                  shown: str) -> tuple[list[tuple[str, Schema]], list[str]]:
    """Every schema the log at `log` sets, labelled `v<table version>`, and notes (a cut history)."""
    read = read_delta_log(filesystem, log, shown)
    return [(f"v{s.version}", s.schema) for s in read.schemas], list(read.notes)


def latest_commit(filesystem: pafs.FileSystem, log: str) -> int | None:
    """The newest commit's version in a `_delta_log` directory (its table's version), None without one."""
    from pyarrow import fs as pafs

    entries = filesystem.get_file_info(pafs.FileSelector(log))
    return max((int(m.group(1)) for e in entries if (m := _COMMIT.fullmatch(e.base_name))), default=None)


def holds_commits(filesystem: pafs.FileSystem, log: str) -> bool:
    """Whether a `_delta_log` directory holds a commit or a checkpoint: without one, Delta itself
    says the directory is not a Delta table. An unlistable log counts as one (its read says why)."""
    import pyarrow as pa
    from pyarrow import fs as pafs

    try:
        entries = filesystem.get_file_info(pafs.FileSelector(log))
    except (OSError, pa.ArrowException):
        return True
    return any(_COMMIT.fullmatch(e.base_name) or _CHECKPOINT.fullmatch(e.base_name) for e in entries)


def read_delta_log(filesystem: pafs.FileSystem, log: str, shown: str, version: int | None = None,
                   timestamp: float | None = None) -> DeltaLog:
    """The snapshot at `version` (or the last commit at or before `timestamp`, or the latest) of
    the log at `log`: JSON commits replayed after the checkpoint they follow (classic, multi-part
    and V2 checkpoints with sidecars), per Delta PROTOCOL.md "Action Reconciliation"."""
    import pyarrow as pa
    from pyarrow import fs as pafs

    try:
        entries = filesystem.get_file_info(pafs.FileSelector(log))
    except (OSError, pa.ArrowException) as e:
        raise SchemaLoadError(f"{shown}: cannot be listed: {first_line(e)}") from None
    commits: dict[int, pafs.FileInfo] = {}
    checkpoints: dict[int, list[str]] = {}
    for entry in entries:
        if m := _COMMIT.fullmatch(entry.base_name):
            commits[_version(m[1], entry.base_name, shown)] = entry
        elif m := _CHECKPOINT.fullmatch(entry.base_name):
            checkpoints.setdefault(_version(m[1], entry.base_name, shown), []).append(entry.path)
    whole = {v: _whole_checkpoint(paths) for v, paths in checkpoints.items()}
    partial = sorted(v for v, paths in whole.items() if not paths)
    checkpoints = {v: paths for v, paths in whole.items() if paths}
    if not commits and not checkpoints:
        raise SchemaLoadError(f"{shown}: no Delta commits or checkpoints{_lacking(partial)}")
    # Commits after the version asked for are never read (nor does their time count).
    read = _monotonic({v: _commit(filesystem, info, inside(shown, info.base_name))
                       for v, info in sorted(commits.items()) if version is None or v <= version})
    target = _target_version(read, set(commits) | set(checkpoints), version, timestamp, shown)
    start, replay = _replay_plan({v for v in commits if v <= target},
                                 {v for v in checkpoints if v <= target}, shown,
                                 [v for v in partial if v <= target])
    files: dict[str, tuple[dict[str, Any], int | None]] = {}  # path -> (add, added in): built last
    metas: list[tuple[int, float | None, dict[str, Any]]] = []
    protocol: dict[str, Any] = {}
    if start is not None:
        base = _checkpoint_actions(filesystem, sorted(checkpoints[start]), log, shown)
        origin = {a["path"]: v for v, c in read.items() if v <= start for a in c.adds}
        for add in base.adds:
            files[add["path"]] = (add, origin.get(add["path"]))
        if base.metadata is not None:
            metas.append((start, read[start].timestamp if start in read else None, base.metadata))
        protocol = base.protocol or protocol
    for v in replay:
        c = read[v]
        for path in c.removes:
            files.pop(path, None)
        for add in c.adds:
            files[add["path"]] = (add, v)
        if c.metadata is not None:
            metas.append((v, c.timestamp, c.metadata))
        protocol = c.protocol or protocol
    schemas: list[DeltaSchemaVersion] = []
    for v, when, meta in metas:
        where = inside(shown, f"{v:020d}.json")
        schema = _delta_schema(meta, where)
        partitioning = tuple(meta.get("partitionColumns") or ())
        if not schemas or (schemas[-1].schema, schemas[-1].partition_columns) != (schema, partitioning):
            schemas.append(DeltaSchemaVersion(v, when, schema, _configuration(meta), partitioning))
    if not schemas:
        raise SchemaLoadError(f"{shown}: no metaData action with a schema in the log")
    cut = f"history starts at checkpoint v{start}: older commits were cleaned up"
    return DeltaLog(target, read[target].timestamp if target in read else None,
                    tuple(_file(*files[p]) for p in sorted(files)), tuple(schemas), protocol,
                    _configuration(metas[-1][2]), () if start is None else (cut,),
                    {v: c.timestamp for v, c in read.items()})


def _version(digits: str, name: str, shown: str) -> int:
    """A log file's version; one Delta cannot number (beyond a Long, where its reader fails with a
    NumberFormatException) is bad input."""
    if len(digits) > 19 and int(digits) > MAX_VERSION:
        raise SchemaLoadError(f"{inside(shown, name)}: version {digits} is beyond what Delta numbers "
                              f"(at most {MAX_VERSION})")
    return int(digits)


def _configuration(meta: dict[str, Any]) -> dict[str, str]:
    """A metaData action's table properties (a JSON object, or pairs as pyarrow reads a map)."""
    return {str(k): str(x) for k, x in dict(meta.get("configuration") or {}).items()}


def _target_version(read: dict[int, _Commit], versions: set[int], version: int | None,
                    timestamp: float | None, shown: str) -> int:
    latest = max(versions)
    if version is not None:
        if version not in versions:
            raise SchemaLoadError(f"{shown}: no table version {version} (the log holds "
                                  f"{min(versions)}..{latest})")
        return version
    if timestamp is not None:
        before = [v for v, c in read.items() if c.timestamp is not None and c.timestamp <= timestamp]
        if not before:
            raise SchemaLoadError(f"{shown}: no commit at or before that time (the oldest commit is "
                                  f"later)")
        return max(before)
    return latest


def _whole_checkpoint(paths: list[str]) -> list[str]:
    """The files of one whole checkpoint among those a version has: a classic or V2 checkpoint is
    one file; a multi-part one counts only with all of its parts (a writer that dies while writing
    one leaves some, and a reader must skip such a set, Delta PROTOCOL.md "Checkpoints"; delta-spark
    refuses it with DELTA_MISSING_PART_FILES). Empty when the version has no whole checkpoint."""
    sets: dict[int, dict[int, str]] = {}
    for path in sorted(paths):
        part = _CHECKPOINT_PART.fullmatch(path.rpartition("/")[2])
        if part is None:
            return [path]  # any whole one will do: every checkpoint of a version holds the same state
        sets.setdefault(int(part[2]), {})[int(part[1])] = path
    return next(([parts[i] for i in sorted(parts)] for count, parts in sorted(sets.items())
                 if set(parts) == set(range(1, count + 1))), [])


def _monotonic(read: dict[int, _Commit]) -> dict[int, _Commit]:
    """Commit times as Delta sees them (DESCRIBE HISTORY, `timestampAsOf`): a commit no later than
    the one before it is taken to be 1 ms after it. File times collide or go back when a log is
    copied, or on a store that keeps whole seconds; without this a timestamp selects another
    commit than Delta does."""
    before: float | None = None
    for v in sorted(read):
        when = read[v].timestamp
        if when is not None and before is not None and when <= before:
            read[v] = replace(read[v], timestamp=(round(before * 1000) + 1) / 1000)
        before = read[v].timestamp if when is not None else before
    return read


def _replay_plan(commits: set[int], checkpoints: set[int], shown: str,
                 partial: list[int]) -> tuple[int | None, list[int]]:
    """The oldest state the log can rebuild: from the empty table when commit 0 is there, else
    from the oldest checkpoint every later commit follows; and the commits to replay after it.
    `partial`: versions whose only checkpoint lacks parts (named when nothing else can serve)."""
    latest = max(commits | checkpoints)
    for start in ([-1] if 0 in commits else []) + sorted(checkpoints):
        rest = range(start + 1, latest + 1)
        if all(v in commits for v in rest):
            return (start if start >= 0 else None), list(rest)
    oldest = min(commits | checkpoints)
    # The first gap lies within len(commits) of the oldest version, however far the latest jumps.
    gap = next((v for v in range(oldest + 1, latest + 1) if v not in commits), None)
    problem = f"commit {gap} is missing" if gap is not None else f"the log starts at version {oldest}"
    raise SchemaLoadError(f"{shown}: {problem} and no checkpoint lets it be replayed{_lacking(partial)}")


def _lacking(partial: list[int]) -> str:
    """Why a version's checkpoint did not count, for an error that would otherwise not say."""
    return f" (the checkpoint of version {partial[-1]} lacks parts)" if partial else ""


@dataclass(frozen=True, slots=True)
class _Commit:
    """The actions of one commit (or checkpoint) that a snapshot and its history need."""

    adds: list[dict[str, Any]]
    removes: list[str]
    metadata: dict[str, Any] | None  # the last metaData action
    protocol: dict[str, Any] | None
    timestamp: float | None


def _commit(filesystem: pafs.FileSystem, info: pafs.FileInfo, shown: str) -> _Commit:
    """One JSON commit's actions; its time is its in-commit timestamp, else its file's mtime in
    whole milliseconds (what Delta reads from the file system, and DESCRIBE HISTORY shows: a
    timestamp taken from it must select this commit, not the one before)."""
    actions = _json_actions(read_bytes(filesystem, info.path, shown), shown)
    found = _gather(actions)
    info_action: dict[str, Any] = next(
        (a["commitInfo"] for a in actions if isinstance(a.get("commitInfo"), dict)), {})
    ict = info_action.get("inCommitTimestamp")
    mtime = info.mtime_ns // 1_000_000 / 1000 if info.mtime_ns is not None else None
    return replace(found, timestamp=ict / 1000 if isinstance(ict, int) else mtime)


def _json_actions(data: bytes, shown: str) -> list[dict[str, Any]]:
    """A JSON log file's newline-delimited actions: decoded as one JSON array (one call into the
    C decoder per commit, not one per action), line by line only to name a bad line."""
    text = data.decode("utf-8", "replace")
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        every = json.loads(f"[{','.join(lines)}]")
    except json.JSONDecodeError:
        every = None
    except RecursionError:
        raise SchemaLoadError(f"{shown}: {TOO_DEEP}") from None
    if every is not None and len(every) == len(lines):
        return [a for a in every if isinstance(a, dict)]
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except json.JSONDecodeError as e:
            raise SchemaLoadError(f"{shown}: line {number} is not JSON ({first_line(e)})") from None
        if isinstance(action, dict):
            out.append(action)
    return out


def _gather(actions: list[dict[str, Any]]) -> _Commit:
    adds, removes, metadata, protocol = [], [], None, None
    for a in actions:
        if isinstance(add := a.get("add"), dict) and isinstance(add.get("path"), str):
            adds.append(add)
        elif isinstance(remove := a.get("remove"), dict) and isinstance(remove.get("path"), str):
            removes.append(remove["path"])
        elif isinstance(a.get("metaData"), dict):
            metadata = a["metaData"]
        elif isinstance(a.get("protocol"), dict):
            protocol = a["protocol"]
    return _Commit(adds, removes, metadata, protocol, None)


_CHECKPOINT_COLUMNS = ("add", "remove", "metaData", "protocol", "sidecar")


def _checkpoint_actions(filesystem: pafs.FileSystem, paths: list[str], log: str, shown_log: str) -> _Commit:
    """Every action of a checkpoint: its parts (multi-part), and the sidecar files a V2
    checkpoint names (`_delta_log/_sidecars/`)."""
    actions: list[dict[str, Any]] = []
    for path in paths:
        actions += _actions_file(filesystem, path, inside(shown_log, path.rpartition("/")[2]))
    for sidecar in [a["sidecar"] for a in actions if isinstance(a.get("sidecar"), dict)]:
        name = unquote(str(sidecar.get("path", "")))
        where = name if "/" in name else f"{log}/_sidecars/{name}"
        actions += _actions_file(filesystem, where, inside(shown_log, f"_sidecars/{name}"))
    return _gather(actions)


def _actions_file(filesystem: pafs.FileSystem, path: str, shown: str) -> list[dict[str, Any]]:
    """The actions of a checkpoint part or sidecar, JSON or Parquet (one action per row)."""
    if path.endswith(".json"):
        return _json_actions(read_bytes(filesystem, path, shown), shown)
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path, filesystem=filesystem)
        columns = [c for c in _CHECKPOINT_COLUMNS if c in file.schema_arrow.names]
        rows = file.read(columns=columns).to_pylist()
    except (OSError, pa.ArrowException, KeyError) as e:
        raise SchemaLoadError(f"{shown}: unreadable checkpoint: {first_line(e)}") from None
    return [{k: v for k, v in row.items() if v is not None} for row in rows]


def _file(add: dict[str, Any], added_in: int | None) -> DeltaFile:
    """An `add` action as a snapshot file (pyarrow reads a checkpoint's maps as lists of pairs)."""
    values = add.get("partitionValues") or {}
    stats = add.get("stats")
    when = add.get("modificationTime")
    path = add["path"]
    # past the NamedTuple's slower constructor: a snapshot has one per data file
    return tuple.__new__(DeltaFile, (
        unquote(path) if "%" in path else path,
        tuple(sorted((values if type(values) is dict else dict(values)).items())), int(add.get("size") or 0),
        when / 1000 if isinstance(when, int) else None, added_in, stats if isinstance(stats, str) else None,
        bool(add.get("deletionVector"))))


def _delta_schema(meta: dict[str, Any], shown: str) -> Schema:
    text = meta.get("schemaString")
    if not isinstance(text, str):
        raise SchemaLoadError(f"{shown}: metaData has no schemaString")
    # pyarrow reads a map column as a list of pairs, JSON as an object: dict() takes both.
    mode = _configuration(meta).get(MAPPING_MODE_KEY, "none")
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
