"""What every report shows about one table, computed once: counts, each version with what
changed from the one before and its leaves, where the files lie in time. The renderers read this
and decide nothing."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from schemaguard.acyclic import acyclic
from schemaguard.formats.delta import BOOKKEEPING, MAPPING_MODE_KEY, DeltaSchemaVersion
from schemaguard.lake.delta import files_per_schema
from schemaguard.lake.discover import partition_dir as partition_dir  # for the catalog's rows
from schemaguard.lake.file_records import DataFile
from schemaguard.lake.history import (
    ColumnChange,
    SchemaVersion,
    column_changes,
    date_partition_column,
    files_per_day,
    leaf_signature,
)
from schemaguard.lake.iceberg import IcebergSnapshot
from schemaguard.lake.snapshot import relative
from schemaguard.lake.table import TableRead
from schemaguard.model import Schema
from schemaguard.names import Identity
from schemaguard.rules.changes import Operation, OpKind, diff


@dataclass(frozen=True, slots=True)
class VersionSummary:
    version: SchemaVersion
    changes: tuple[ColumnChange, ...]  # from the version before (none for the first)
    signature: dict[str, str]  # each leaf: type, nullability and Parquet layout
    days: tuple[tuple[date, int], ...]  # files per day of the date partition, when there is one


@dataclass(frozen=True, slots=True)
class LogVersion:
    """A schema version the table's log sets (Delta: a metaData action that changed the schema;
    Iceberg: a schema of the metadata's `schemas`), with how many of the snapshot's files were
    added while it was current, and the operations from the one before (columns paired by id in
    Iceberg and under Delta's column mapping, else by name; changes of Delta's bookkeeping
    metadata left out)."""

    version: int  # Delta: the table version that set it; Iceberg: the schema id
    timestamp: str | None  # ISO, UTC
    schema: Schema
    files: int
    changes: tuple[Operation, ...]


@dataclass(frozen=True, slots=True)
class Counts:
    files: int  # data files listed
    read: int
    unreadable: int
    ignored: int
    versions: int
    rows: int
    unreferenced: int = 0  # Delta/Iceberg: data files on disk that the snapshot does not reference
    reused: int = 0  # footers taken from the last audit's cache, unread (lake/cache.py)


@dataclass(frozen=True, slots=True)
class TableSummary:
    name: str
    table: TableRead
    counts: Counts
    versions: tuple[VersionSummary, ...]
    date_column: str | None  # the date partition that places files in time, if any
    unreadable_files: tuple[DataFile, ...]  # as listed (partition, mtime), for the timeline
    unreadable_days: tuple[tuple[date, int], ...]  # the unreadable files per day of the date partition
    log_versions: tuple[LogVersion, ...] = ()  # Delta/Iceberg: the log's schema history, oldest first
    log_schema_of: dict[str, int] = field(default_factory=dict)  # file rel -> its LogVersion.version


@acyclic()
def summarize(name: str, table: TableRead) -> TableSummary:
    versions = table.versions
    date_col = date_partition_column(table.scan.footers.partition_values())
    previous = [None, *versions][:len(versions)]
    summaries = tuple(
        VersionSummary(v, tuple(column_changes(p.footer, v.footer)) if p else (), leaf_signature(v.footer),
                       files_per_day(v.files.partitions(), date_col) if date_col else ())
        for p, v in zip(previous, versions, strict=True))
    bad = {u.rel for u in table.scan.unreadable}
    unreadable = tuple(f for f in table.listing.files if f.rel in bad) if bad else ()
    counts = Counts(len(table.listing.files), len(table.scan.footers), len(table.scan.unreadable),
                    len(table.listing.ignored), len(versions), sum(v.rows for v in versions),
                    len(table.unreferenced), table.reuse.reused if table.reuse else 0)
    return TableSummary(name, table, counts, summaries, date_col, unreadable,
                        files_per_day((f.partition for f in unreadable), date_col) if date_col else (),
                        log_versions(table), log_schema_of(table))


def log_versions(table: TableRead) -> tuple[LogVersion, ...]:
    """The log's schema history with files and operations (empty for a Parquet directory)."""
    if table.iceberg is not None:
        return _iceberg_versions(table.iceberg)
    log = table.delta
    if log is None:
        return ()
    files = files_per_schema(log)
    previous = [None, *log.schemas][:len(log.schemas)]
    return tuple(
        LogVersion(s.version, _iso(s.timestamp), s.schema, files[s.version],
                   tuple(o for o in diff(p.schema, s.schema, _pairing(p, s))
                         if not (o.kind == OpKind.METADATA_CHANGED and o.detail in BOOKKEEPING)) if p else ())
        for p, s in zip(previous, log.schemas, strict=True))


def log_schema_of(table: TableRead) -> dict[str, int]:
    """Each snapshot file (by table-relative path) with the log's schema version it was written
    under: the Delta table version that set the schema current at its add, the Iceberg schema id
    of the snapshot that added it (files of expired Iceberg snapshots are left out)."""
    root = table.listing.root
    if table.iceberg is not None:
        return {relative(f.path, root): f.schema_id for f in table.iceberg.files if f.schema_id is not None}
    log = table.delta
    if log is None:
        return {}
    return {relative(f.path, root): log.schema_at(f.added_in).version for f in log.files}


def _iceberg_versions(snap: IcebergSnapshot) -> tuple[LogVersion, ...]:
    """Iceberg's schemas in the order they became current, each with the live files added while
    it was (the last time the adding snapshot's schema became current before it); fields pair by id."""
    timeline = snap.timeline
    spans: dict[int, list[tuple[float, int]]] = {}  # schema id -> (time it became current, index)
    for i, c in enumerate(timeline):
        spans.setdefault(c.schema_id, []).append((c.timestamp or 0.0, i))
    files: Counter[int] = Counter()
    for f in snap.files:
        if f.schema_id in spans:
            span = spans[f.schema_id]
            at = bisect_right(span, (f.added_at or 0.0, len(timeline)))
            files[span[max(at - 1, 0)][1]] += 1
    schemas = {s.schema_id: s.schema for s in snap.schemas}
    previous = [None, *timeline][:len(timeline)]
    return tuple(
        LogVersion(c.schema_id, _iso(c.timestamp), schemas[c.schema_id], files[i],
                   tuple(diff(schemas[p.schema_id], schemas[c.schema_id], "id")) if p else ())
        for i, (p, c) in enumerate(zip(previous, timeline, strict=True)))


def _pairing(before: DeltaSchemaVersion, after: DeltaSchemaVersion) -> Identity:
    """Columns pair by column-mapping id when both schemas have ids (a rename is then a rename),
    by name when either has none (the commit that switches column mapping on assigns them)."""
    mapped = all(v.configuration.get(MAPPING_MODE_KEY, "none") != "none" for v in (before, after))
    return "id" if mapped else "name"


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
