"""An Iceberg table read as Iceberg readers read it: the data files of one snapshot, from its
manifests, and each footer's columns joined to the table's fields by field id.

The table is loaded with pyiceberg: from a metadata file (a static table), from the newest
metadata file in the table's `metadata/` directory (the version hint when there is one), or from
a SQL catalog. Its metadata gives the schema history (`schemas`, each with its `schema-id`, the
snapshot that first used it, field ids and v3 defaults), the name mapping
(`schema.name-mapping.default`) and, through the snapshot's manifests, its live data files with
their per-column null counts and bounds. A footer's field is the table field with the same
Parquet field id; a file written without ids (imported with `add_files`, say) is joined through
the name mapping, as Iceberg readers do (spec "Column Projection"). Data files on disk that the
snapshot does not reference are counted apart, like Delta's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from schemaguard.errors import UsageError, first_line, require_regular
from schemaguard.formats.iceberg import NAME_MAPPING_KEY, iceberg_schema, name_mapping
from schemaguard.formats.io import SchemaLoadError
from schemaguard.lake.discover import Listing
from schemaguard.lake.file_records import DataFile, Footers
from schemaguard.lake.snapshot import Snapshot, relabel, relative, snapshot_listing
from schemaguard.model import Field, Schema, fields_of

if TYPE_CHECKING:
    from pyiceberg.table import Table

METADATA_DIR = "metadata"
METADATA_SUFFIX = ".metadata.json"
VERSION_HINT = "version-hint.text"
_VERSION = re.compile(r"v?(\d+)")  # `v12.metadata.json` (Hadoop tables), `00012-<uuid>.metadata.json`


class IcebergFile(NamedTuple):
    """One live data file of a snapshot, as its manifest entry gives it."""

    path: str  # as the manifest writes it (absolute, often a URI)
    size: int
    records: int
    added_by: int | None  # the snapshot that added it
    added_at: float | None  # when that snapshot was committed (None: it has expired)
    schema_id: int | None  # the schema current when it was added (None: its snapshot has expired)
    partition: tuple[tuple[str, str | None], ...]
    null_counts: Mapping[int, int]  # field id -> nulls, as the manifest records them
    lower_bounds: Mapping[int, bytes]  # field id -> the spec's single-value serialization
    upper_bounds: Mapping[int, bytes]


class IcebergSchemaVersion(NamedTuple):
    schema_id: int
    schema: Schema


class SchemaChange(NamedTuple):
    """The table's current schema became `schema_id` at `timestamp` (a schema id can come back:
    dropping the column just added returns to the schema before, and Iceberg reuses its id)."""

    schema_id: int
    timestamp: float | None  # None: before the metadata log starts


@dataclass(frozen=True, slots=True)
class IcebergSnapshot:
    """One snapshot of an Iceberg table and the metadata its readers use."""

    metadata_location: str
    location: str  # the table's base location
    format_version: int
    snapshot_id: int | None  # None: a table with no snapshot yet
    timestamp: float | None
    schemas: tuple[IcebergSchemaVersion, ...]  # every schema of the metadata, by id
    timeline: tuple[SchemaChange, ...]  # which schema was current when, oldest first, up to the snapshot
    current_schema_id: int
    properties: Mapping[str, str]
    name_mapping: Mapping[str, int] | None  # model path -> field id
    files: tuple[IcebergFile, ...]
    delete_files: tuple[str, ...]  # position and equality delete files the snapshot applies (paths)
    notes: tuple[str, ...]

    @property
    def current(self) -> IcebergSchemaVersion:
        return next(s for s in self.schemas if s.schema_id == self.current_schema_id)

    @property
    def version(self) -> int | None:
        return self.snapshot_id


# ---------------------------------------------------------------------------------------------
# Finding and loading the table


def is_iceberg(listing: Listing) -> bool:
    """A directory whose `metadata/` holds a `*.metadata.json` file is an Iceberg table."""
    return bool(metadata_files(listing))


def metadata_files(listing: Listing) -> list[str]:
    return [rel for rel in listing.files.rels_ending(METADATA_SUFFIX)
            if rel.startswith(f"{METADATA_DIR}/") and rel.count("/") == 1]


def newest_metadata(listing: Listing) -> str:
    """The metadata file a path-based reader loads: the one the version hint names, else the one
    with the highest version number (a catalog may have committed another: give the catalog)."""
    root = listing.root.rstrip("/")
    hint = next((f for f in listing.files if f.rel == f"{METADATA_DIR}/{VERSION_HINT}"), None)
    if hint is not None:
        named = _hinted(hint, listing)
        if named is not None:
            return f"{root}/{METADATA_DIR}/{named}"
    found = metadata_files(listing)
    mtimes = {f.rel: f.mtime or 0.0 for f in listing.files}
    return f"{root}/{max(found, key=lambda rel: (_number(rel), mtimes[rel]))}"


def _hinted(hint: DataFile, listing: Listing) -> str | None:
    """The file a version hint names (a number, or a file name), None when it cannot be read."""
    try:
        if listing.filesystem is None:
            require_regular(hint.path, hint.path)
            with open(hint.path, "rb") as f:
                raw = f.read(256)
        else:
            with listing.filesystem.open_input_stream(hint.path) as s:
                raw = s.read(256)
        text = raw.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError, UsageError):  # no usable hint: the newest metadata file
        return None
    if text.endswith(METADATA_SUFFIX):
        return text
    return f"v{text}{METADATA_SUFFIX}" if text.isdigit() else None


def _number(rel: str) -> int:
    m = _VERSION.match(rel.rpartition("/")[2])
    return int(m[1]) if m else -1


@lru_cache(maxsize=16)
def load_static(metadata_location: str) -> Table:
    """The table as one metadata file describes it. Cached: a metadata file never changes (each
    commit writes a new one), and a table named by its metadata file or catalog is loaded once to
    find its location and again to be read."""
    from pyiceberg.table import StaticTable

    try:
        return StaticTable.from_metadata(metadata_location)
    except Exception as e:  # pyiceberg raises what its parsers and file IO raise
        raise SchemaLoadError(f"{metadata_location}: not a readable Iceberg metadata file: {_reason(e)}"
                              ) from None


class CatalogRef(NamedTuple):
    """An Iceberg catalog: by name as pyiceberg is configured (`~/.pyiceberg.yaml`, the
    `PYICEBERG_CATALOG__<NAME>__*` variables), or a SQL catalog at a SQLAlchemy URI."""

    name: str = "default"
    uri: str | None = None


def load_from_catalog(catalog: CatalogRef, identifier: str) -> Table:
    """A table of an Iceberg catalog (`db.table`)."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import NoSuchTableError

    where = f"{catalog.name}" + (f" ({catalog.uri})" if catalog.uri else "")
    try:
        loaded = load_catalog(catalog.name, **({"type": "sql", "uri": catalog.uri} if catalog.uri else {}))
        return loaded.load_table(identifier)
    except NoSuchTableError:
        raise UsageError(f"{identifier}: no such table in the Iceberg catalog {where}") from None
    except Exception as e:  # a missing configuration, an unreachable database, a bad URI
        raise UsageError(f"cannot load {identifier} from the Iceberg catalog {where}: {_reason(e)}") from None


def _reason(e: Exception) -> str:
    """Why pyiceberg failed, in one line: a validation error's first problem and where it is
    (pydantic's own text spreads over lines; pyiceberg raises it as the cause of its own), else
    the error's first line."""
    for cause in (e, e.__cause__):
        errors = getattr(cause, "errors", None)
        if callable(errors):
            try:
                first = errors()[0]
                return f"{first['msg']} (at {'.'.join(map(str, first['loc'])) or 'the top'})"
            except (TypeError, LookupError, ValueError):
                pass
    return f"{type(e).__name__}: {first_line(e)}"


# ---------------------------------------------------------------------------------------------
# The snapshot


def read_snapshot(table: Table, version: int | None = None,
                  timestamp: float | None = None) -> IcebergSnapshot:
    """The table at a snapshot id or at the last snapshot committed at or before a time (default:
    its current snapshot): its live data files and the schemas up to the one its readers use (the
    table's current schema; an older snapshot's own when one is asked for, as time travel reads)."""
    md = table.metadata
    snap = _snapshot(table, version, timestamp)
    travel = version is not None or timestamp is not None
    schema_id = (snap.schema_id if travel and snap is not None and snap.schema_id is not None
                 else md.current_schema_id)
    schemas = tuple(
        IcebergSchemaVersion(s.schema_id, iceberg_schema(s.model_dump(by_alias=True, mode="json")))
        for s in sorted(md.schemas, key=lambda s: s.schema_id))
    files, deletes, notes = _live_files(table, snap) if snap is not None else ((), (), [])
    timeline = _timeline(table, schema_id, snap.timestamp_ms if travel else None, notes)
    if any(f.schema_id is None for f in files):
        notes.append("some files were added by snapshots that have expired: their schema is unknown")
    mapping = md.properties.get(NAME_MAPPING_KEY)
    return IcebergSnapshot(
        table.metadata_location, md.location, md.format_version, None if snap is None else snap.snapshot_id,
        None if snap is None else snap.timestamp_ms / 1000, schemas, timeline, schema_id, dict(md.properties),
        _name_mapping(mapping) if mapping else None, files, deletes, tuple(notes))


def _timeline(table: Table, current: int, until_ms: int | None, notes: list[str]) -> tuple[SchemaChange, ...]:
    """When each schema became current: the current schema id of every metadata file the
    metadata log names, at the time that file was committed (its `last-updated-ms`, which the log
    records), up to `until_ms` (time travel), ending with the schema its readers use. Schemas
    older than the log's first entry (its start is cut by `write.metadata.previous-versions-max`)
    come first, in id order (Iceberg assigns ids in order), without a time."""
    md = table.metadata
    changes: list[SchemaChange] = []
    unread = 0
    for entry in md.metadata_log:
        if until_ms is not None and entry.timestamp_ms > until_ms:
            break
        schema_id = _current_schema_id(table, entry.metadata_file)
        if schema_id is None:
            unread += 1
        else:
            changes.append(SchemaChange(schema_id, entry.timestamp_ms / 1000))
    changes.append(SchemaChange(current, md.last_updated_ms / 1000 if until_ms is None else until_ms / 1000))
    if unread:
        notes.append(f"{unread} metadata file(s) of the metadata log could not be read: the schema "
                     "history may miss changes")
    first = changes[0].schema_id
    out = [SchemaChange(s.schema_id, None) for s in sorted(md.schemas, key=lambda s: s.schema_id)
           if s.schema_id < first]
    for change in changes:
        if not out or out[-1].schema_id != change.schema_id:
            out.append(change)
    return tuple(out)


def _current_schema_id(table: Table, path: str) -> int | None:
    """The `current-schema-id` of one metadata file (v1 files without one have schema 0), None
    when it cannot be read (expired and deleted, or damaged)."""
    import gzip
    import json

    try:
        with table.io.new_input(path).open() as f:
            raw = f.read()
        doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        return int(doc.get("current-schema-id", 0))
    except Exception:  # a missing or damaged old metadata file: noted, never fatal
        return None


def _snapshot(table: Table, version: int | None, timestamp: float | None) -> Any:
    md = table.metadata
    if version is not None:
        snap = md.snapshot_by_id(version)
        if snap is None:
            raise UsageError(f"{table.metadata_location}: no snapshot {version} (snapshots: "
                             f"{', '.join(str(s.snapshot_id) for s in md.snapshots) or 'none'})")
        return snap
    if timestamp is not None:
        before = [s for s in md.snapshots if s.timestamp_ms <= timestamp * 1000]
        if not before:
            raise UsageError(f"{table.metadata_location}: no snapshot at or before that time")
        return max(before, key=lambda s: s.timestamp_ms)
    return table.current_snapshot()


def _live_files(table: Table, snap: Any) -> tuple[tuple[IcebergFile, ...], tuple[str, ...], list[str]]:
    """The snapshot's data files from its data manifests, and how many delete files it applies."""
    from pyiceberg.manifest import ManifestContent

    md = table.metadata
    schema_of = {s.snapshot_id: s.schema_id for s in md.snapshots}
    time_of = {s.snapshot_id: s.timestamp_ms / 1000 for s in md.snapshots}
    fields = {spec_id: [f.name for f in spec.fields] for spec_id, spec in md.specs().items()}
    files: list[IcebergFile] = []
    deletes: list[str] = []
    for manifest in snap.manifests(table.io):
        entries = manifest.fetch_manifest_entry(table.io, discard_deleted=True)
        if manifest.content != ManifestContent.DATA:
            deletes += (e.data_file.file_path for e in entries)
            continue
        for e in entries:
            d = e.data_file
            names = fields.get(d.spec_id, [])
            files.append(IcebergFile(
                d.file_path, d.file_size_in_bytes, d.record_count, e.snapshot_id,
                time_of.get(e.snapshot_id) if e.snapshot_id is not None else None,
                schema_of.get(e.snapshot_id) if e.snapshot_id is not None else None,
                tuple((n, None if v is None else str(v)) for n, v in zip(names, d.partition, strict=False)),
                dict(d.null_value_counts or {}), dict(d.lower_bounds or {}), dict(d.upper_bounds or {})))
    notes = [f"{len(deletes)} delete file(s) apply to this snapshot: row counts are before deletes"
             ] if deletes else []
    return tuple(files), tuple(deletes), notes


def _name_mapping(text: str) -> Mapping[str, int]:
    import json

    try:
        doc = json.loads(text)
    except ValueError as e:
        raise SchemaLoadError(f"{NAME_MAPPING_KEY} is not JSON: {e}") from None
    if not isinstance(doc, list):
        raise SchemaLoadError(f"{NAME_MAPPING_KEY} is not a list of fields")
    return name_mapping(doc)


def snapshot_files(listing: Listing, snap: IcebergSnapshot, include_unreferenced: bool = False) -> Snapshot:
    """The snapshot's files as data files, sizes and partition values from the manifests, and
    the commit time of the snapshot that added each as its time (what orders the versions). A
    table whose metadata names another location (a moved or copied folder) is read where its
    metadata says, and the folder's own copies of those files are not unreferenced."""
    files = (DataFile(f.path, f.path, f.size, f.added_at, f.partition) for f in snap.files)
    columns = tuple(dict.fromkeys(k for f in snap.files for k, _ in f.partition))
    live: tuple[str, ...] = snap.delete_files
    if moved_from(listing, snap) is not None:
        live += tuple(relative(f.path, snap.location.rstrip("/")) for f in snap.files)
    return snapshot_listing(listing, files, columns, include_unreferenced, METADATA_DIR, live)


def moved_from(listing: Listing, snap: IcebergSnapshot) -> str | None:
    """The location the table's metadata names when it is not the folder read (a moved or copied
    table, whose readers still read the files there), else None."""
    def bare(location: str) -> str:
        return location.removeprefix("file://").removeprefix("file:").rstrip("/")

    return snap.location if bare(snap.location) != bare(listing.root) else None


# ---------------------------------------------------------------------------------------------
# Footers joined to fields by id


def logical_footers(footers: Footers, snap: IcebergSnapshot) -> Footers:
    """Footers with each field given the name its id has in the schema its readers use, else in
    the newest schema that holds it; a field without an id gets the one the name mapping gives its
    path (and keeps none without)."""
    names = field_names([*(s.schema for s in snap.schemas), snap.current.schema])
    mapping = snap.name_mapping or {}

    def label(f: Field, path: str) -> tuple[str, int | None]:
        fid = f.id if f.id is not None else mapping.get(path)
        return (names.get(fid, f.name) if fid is not None else f.name), fid

    return relabel(footers, label)


def field_names(schemas: Iterable[Schema]) -> dict[int, str]:
    """Field id -> its name in the newest schema holding it (schemas oldest first)."""
    names: dict[int, str] = {}
    for schema in schemas:
        names.update((f.id, f.name) for _, f in fields_of(schema) if f.id is not None)
    return names
