"""A Delta table read as Delta readers read it: the files of one snapshot of its log, not its
directory, and its columns by their logical names.

The log (formats/delta.py) gives the snapshot's files (add minus remove) and the schema history.
Files on disk that the snapshot does not reference (removed and not yet vacuumed, or orphans) are
counted apart and read by no verdict unless asked. Under column mapping (`name` or `id`, Delta
PROTOCOL.md "Column Mapping") footers hold physical names (`col-<uuid>`) and field ids; each is
joined to its logical name by physical name, else by field id, through every schema the log has
set, so a file written before a rename shows the new name and a dropped column its last name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from schemaguard.formats.delta import (
    MAPPING_MODE_KEY,
    MAPPING_PHYSICAL_KEY,
    DeltaFile,
    DeltaLog,
    holds_commits,
    read_delta_log,
)
from schemaguard.lake.discover import Listing
from schemaguard.lake.file_records import DataFile, Footers
from schemaguard.lake.snapshot import Snapshot, relabel, snapshot_listing
from schemaguard.model import (
    EnumType,
    Field,
    ListType,
    MapType,
    PrimitiveType,
    SchemaVisitor,
    StructType,
    visit,
)
from schemaguard.paths import ELEMENT, KEY, VALUE, segment

if TYPE_CHECKING:
    from pyarrow import fs as pafs

LOG_DIR = "_delta_log"


def is_delta(listing: Listing) -> bool:
    """A directory whose `_delta_log/` holds a commit or checkpoint is a Delta table (the listing
    reports the log as skipped; an empty log makes no Delta table, as Delta itself says)."""
    return any(i.rel == f"{LOG_DIR}/" for i in listing.ignored) and holds_commits(
        _filesystem(listing), _log(listing))


def read_log(listing: Listing, version: int | None = None, timestamp: float | None = None) -> DeltaLog:
    """The table's log at a version or time (default: the latest), read where the table lies."""
    return read_delta_log(_filesystem(listing), _log(listing), _log(listing), version, timestamp)


def _log(listing: Listing) -> str:
    return f"{listing.root.rstrip('/')}/{LOG_DIR}"


def _filesystem(listing: Listing) -> pafs.FileSystem:
    if listing.filesystem is not None:
        return listing.filesystem
    from pyarrow import fs as pafs

    return pafs.LocalFileSystem()


def log_snapshot(listing: Listing, log: DeltaLog, include_unreferenced: bool = False) -> Snapshot:
    """The snapshot's files as data files (sizes and partition values from the log, partition
    columns by their logical names, and as each file's time the commit that added it, which
    orders the versions), in Spark's order."""
    logical = _partition_names(log)
    files = (DataFile(f.path, f.path, f.size, _added_at(f, log),
                      tuple((logical.get(k, k), v) for k, v in f.partition_values)) for f in log.files)
    columns = tuple(logical.get(c, c) for c in log.current.partition_columns)
    return snapshot_listing(listing, files, columns, include_unreferenced, LOG_DIR)


def _added_at(f: DeltaFile, log: DeltaLog) -> float | None:
    """When the commit that added a file was made; the file's own time where only a checkpoint
    says it is there (the commit cleaned up)."""
    when = log.commit_times.get(f.added_in) if f.added_in is not None else None
    return when if when is not None else f.modification_time


def _partition_names(log: DeltaLog) -> dict[str, str]:
    """Physical partition column names (the keys of `partitionValues`) to logical ones."""
    return {f.meta.get(MAPPING_PHYSICAL_KEY, f.name): f.name for f in log.current.schema.fields}


# ---------------------------------------------------------------------------------------------
# Column mapping


def logical_footers(footers: Footers, log: DeltaLog) -> Footers:
    """Footers with their columns named as the log names them (unchanged without column mapping):
    by physical path, else by field id, through every schema the log has set. A column without a
    field id (a file written before `name` mapping was switched on) gets the mapping id of its
    physical name, so readers that bind by id find it, and a column dropped and added back under
    its name stays another column. Not under `id` mode: its readers bind by the file's field ids
    only (a file without them fails, a column without one reads null: tests/test_oracle_delta_id_mode.py).

    Delta writes every column OPTIONAL in Parquet whatever the table says and holds NOT NULL on
    write (found by the read oracle: a NOT NULL column read as may-hold-nulls was an error on every
    such table): a column NOT NULL in the log's schema when the file was added is not nullable."""
    mapped = not (log.mapping_mode == "none" and all(
        s.configuration.get(MAPPING_MODE_KEY, "none") == "none" for s in log.schemas))
    not_null = _not_null_per_file(log)
    if not mapped and not any(not_null.values()):
        return footers
    names: dict[str, str] = {}
    ids: dict[int, str] = {}
    physical_ids: dict[str, int] = {}
    for s in log.schemas if mapped else ():  # oldest first: a later name (a rename) wins
        for physical, name, mapping_id in visit(s.schema, _PhysicalPaths()):
            names[physical[1:]] = name
            if mapping_id is not None:
                ids[mapping_id] = name
                physical_ids[physical[1:]] = mapping_id

    by_id_only = log.mapping_mode == "id"

    def label(f: Field, path: str) -> tuple[str, int | None]:
        fid = f.id if f.id is not None or by_id_only else physical_ids.get(path)
        return names.get(path) or (ids.get(fid) if fid is not None else None) or f.name, fid

    return relabel(footers, label, lambda rel: not_null.get(rel, frozenset()))


def _not_null_per_file(log: DeltaLog) -> dict[str, frozenset[str]]:
    """Each snapshot file (by its path in the log) -> the physical paths of the fields NOT NULL in
    the log's schema when it was added (the oldest known, for files only a checkpoint records)."""
    per_version: dict[int, frozenset[str]] = {}
    out = {}
    for f in log.files:
        schema = log.schema_at(f.added_in)
        if schema.version not in per_version:
            per_version[schema.version] = frozenset(p[1:] for p in visit(schema.schema, _NotNull()))
        out[f.path] = per_version[schema.version]
    return out


_Pairs = list[tuple[str, str, int | None]]  # (physical path below a node, logical name, mapping id)


class _PhysicalPaths(SchemaVisitor[_Pairs, _Pairs]):
    """Every field of a logical Delta schema as (physical path, logical name, id): the physical
    path joins each field's `delta.columnMapping.physicalName` in the model's path syntax."""

    def field(self, f: Field, path: str, type_result: _Pairs) -> _Pairs:
        physical = segment(f.meta.get(MAPPING_PHYSICAL_KEY, f.name))
        return [(physical, f.name, f.id), *((physical + p, n, i) for p, n, i in type_result)]

    def struct(self, t: StructType, path: str, fields: Sequence[_Pairs]) -> _Pairs:
        return [("." + p, n, i) for pairs in fields for p, n, i in pairs]

    def list(self, t: ListType, path: str, element: _Pairs) -> _Pairs:
        return [(ELEMENT + p, n, i) for p, n, i in element]

    def map(self, t: MapType, path: str, key: _Pairs, value: _Pairs) -> _Pairs:
        return [*((KEY + p, n, i) for p, n, i in key), *((VALUE + p, n, i) for p, n, i in value)]

    def enum(self, t: EnumType, path: str) -> _Pairs:
        return []

    def primitive(self, t: PrimitiveType, path: str) -> _Pairs:
        return []


_Paths = list[str]  # physical paths below a node


class _NotNull(SchemaVisitor[_Paths, _Paths]):
    """The physical path of every NOT NULL struct field of a logical Delta schema (list elements
    and map values are left out: their nullability is the footer's own)."""

    def field(self, f: Field, path: str, type_result: _Paths) -> _Paths:
        physical = segment(f.meta.get(MAPPING_PHYSICAL_KEY, f.name))
        return [*([physical] if not f.nullable else []), *(physical + p for p in type_result)]

    def struct(self, t: StructType, path: str, fields: Sequence[_Paths]) -> _Paths:
        return ["." + p for paths in fields for p in paths]

    def list(self, t: ListType, path: str, element: _Paths) -> _Paths:
        return [ELEMENT + p for p in element]

    def map(self, t: MapType, path: str, key: _Paths, value: _Paths) -> _Paths:
        return [*(KEY + p for p in key), *(VALUE + p for p in value)]

    def enum(self, t: EnumType, path: str) -> _Paths:
        return []

    def primitive(self, t: PrimitiveType, path: str) -> _Paths:
        return []


def files_per_schema(log: DeltaLog) -> dict[int, int]:
    """How many snapshot files were added while each schema version of the log was current
    (files only a checkpoint records count under the oldest schema it knows)."""
    counts = dict.fromkeys((s.version for s in log.schemas), 0)
    for f in log.files:
        counts[log.schema_at(f.added_in).version] += 1
    return counts
