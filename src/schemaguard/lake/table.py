"""The one way into a table: its files as its readers find them, every footer, and the versions
they form.

`read(location)` is what every command, the audit, the schema sources and the benchmark call:
list the table the way Spark does (lake/discover.py). A directory holding `_delta_log/` is a Delta
table and is read through its log (lake/delta.py); one whose `metadata/` holds a
`*.metadata.json` is an Iceberg table, read through that metadata and its manifests
(lake/iceberg.py); either way the snapshot's files, not the directory's, and columns by their
logical names. Anything else is a Parquet directory: every listed data file, and the Parquet
summary files Spark would also consult (`_metadata`, `_common_metadata`). Each footer is read
with one of the engines (lake/scan.py), and the footers are grouped into schema versions
(lake/history.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from schemaguard.acyclic import acyclic
from schemaguard.errors import UsageError
from schemaguard.formats.delta import DeltaLog
from schemaguard.formats.parquet import FileFooter, UnreadableFile, read_footer
from schemaguard.lake.cache import Reuse, cache_path, scan_incremental
from schemaguard.lake.delta import LOG_DIR, is_delta, log_snapshot, logical_footers, read_log
from schemaguard.lake.discover import Listing, discover, redacted, spark_order_key
from schemaguard.lake.file_records import DataFile
from schemaguard.lake.history import History, SchemaVersion, build_history
from schemaguard.lake.iceberg import (
    METADATA_DIR,
    METADATA_SUFFIX,
    CatalogRef,
    IcebergSnapshot,
    is_iceberg,
    load_from_catalog,
    load_static,
    moved_from,
    newest_metadata,
    read_snapshot,
    snapshot_files,
)
from schemaguard.lake.iceberg import logical_footers as iceberg_footers
from schemaguard.lake.scan import ScanResult, Unreadable, scan, scan_on_spark
from schemaguard.model import Schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TableFormat = Literal["parquet", "delta", "iceberg"]
FORMAT_HINTS = ("auto", "parquet", "delta", "iceberg")


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read a table: its format (`auto`: detected), which snapshot of a Delta or Iceberg
    table (a Delta version or Iceberg snapshot id, or the last commit at or before a time; default
    the latest), whether files no snapshot references are read too, and the Iceberg metadata file
    to read (None: the newest in the table's `metadata/`)."""

    format_hint: str = "auto"
    version: int | None = None
    timestamp: float | None = None  # seconds since the epoch
    include_unreferenced: bool = False
    metadata: str | None = None


SUMMARY_FILES = ("_metadata", "_common_metadata")  # the order mergeSchema merges them in, after the data


@dataclass(frozen=True, slots=True)
class TableRead:
    """Everything read from one table location, before any rule looks at it."""

    location: str  # as the user gave it, a URI's credentials removed (discover.redacted)
    listing: Listing
    scan: ScanResult
    history: History
    summaries: tuple[FileFooter | Unreadable, ...]  # summary files in Spark's order, read or not
    delta: DeltaLog | None = None  # the snapshot's log, for a Delta table
    iceberg: IcebergSnapshot | None = None  # the snapshot's metadata, for an Iceberg table
    unreferenced: tuple[DataFile, ...] = ()  # data files on disk that the snapshot leaves out
    reuse: Reuse | None = None  # footers taken from the incremental cache, when one was given

    @property
    def versions(self) -> tuple[SchemaVersion, ...]:
        return self.history.versions

    @property
    def table_format(self) -> TableFormat:
        return "delta" if self.delta is not None else "iceberg" if self.iceberg is not None else "parquet"

    def current(self) -> tuple[str, Schema | None]:
        """The table's current schema and where it comes from: the Delta log's, the Iceberg
        metadata's, else the newest version's (None: no readable file)."""
        if self.delta is not None:
            return f"Delta log (v{self.delta.version})", self.delta.current.schema
        if self.iceberg is not None:
            return (f"Iceberg metadata (schema {self.iceberg.current_schema_id})",
                    self.iceberg.current.schema)
        if self.versions:
            return f"newest version (v{self.versions[-1].number})", self.versions[-1].footer.schema
        return "none (no readable file)", None


def read(location: str, progress: Callable[[int], None] | None = None,
         spark: SparkSession | None = None, workers: int | None = None,
         how: ReadOptions = ReadOptions()) -> TableRead:
    """List, scan and group one table; with `spark`, footers are read as a Spark job, else by
    `workers` local processes (default: one per core)."""
    root, how = locate(location, how)
    return read_listing(discover(root), progress, spark, location, workers, how)


def locate(location: str, how: ReadOptions = ReadOptions(),
           catalog: CatalogRef | None = None) -> tuple[str, ReadOptions]:
    """The directory to list for a table given as a directory, as an Iceberg metadata file, or
    as `db.table` of an Iceberg catalog, and the options that read the metadata it names."""
    if catalog is None and not location.endswith(METADATA_SUFFIX):
        return location, how
    if how.format_hint not in ("auto", "iceberg"):
        raise UsageError(f"{location}: an Iceberg metadata file or catalog table cannot be read as "
                         f"{how.format_hint}")
    table = load_from_catalog(catalog, location) if catalog else load_static(location)
    return table.metadata.location, replace(how, format_hint="iceberg", metadata=table.metadata_location)


@acyclic()
def read_listing(listing: Listing, progress: Callable[[int], None] | None = None,
                 spark: SparkSession | None = None, location: str | None = None,
                 workers: int | None = None, how: ReadOptions = ReadOptions(),
                 report_dir: Path | None = None, incremental: bool = True) -> TableRead:
    """`read` of a table already listed (the audit lists every table before reading any). With
    `report_dir`, the table's cache beside the reports is written anew (lake/cache.py), and unless
    `incremental` is False the footers of files unchanged since it was written are taken from it."""
    shown = redacted(location) if location else listing.root
    kind = table_format(listing, how, shown)
    cache = cache_path(report_dir, shown, kind) if report_dir is not None else None
    if kind == "parquet":
        if how.version is not None or how.timestamp is not None:
            raise UsageError(f"{shown}: a version or timestamp needs a Delta or Iceberg table; this is "
                             "a Parquet directory")
        result, reuse = _scan(listing, progress, spark, workers, cache, incremental)
        return TableRead(shown, listing, result, build_history(result.footers), _summaries(listing),
                         reuse=reuse)
    if kind == "iceberg":
        table = load_static(how.metadata or newest_metadata(listing))
        snap = read_snapshot(table, how.version, how.timestamp)
        if (elsewhere := moved_from(listing, snap)) is not None:
            moved = (f"the metadata names the location {redacted(elsewhere)}, not this folder (a moved or "
                     "copied table): the data files read are the ones it names there")
            snap = replace(snap, notes=(*snap.notes, moved))
        snapshot = snapshot_files(listing, snap, how.include_unreferenced)
        result, reuse = _scan(snapshot.listing, progress, spark, workers, cache, incremental)
        result = ScanResult(iceberg_footers(result.footers, snap), result.unreadable)
        history = build_history(result.footers, "the Iceberg snapshots")
        return TableRead(shown, snapshot.listing, result, history, (), iceberg=snap,
                         unreferenced=snapshot.unreferenced, reuse=reuse)
    log = read_log(listing, how.version, how.timestamp)
    snapshot = log_snapshot(listing, log, how.include_unreferenced)
    result, reuse = _scan(snapshot.listing, progress, spark, workers, cache, incremental)
    result = ScanResult(logical_footers(result.footers, log), result.unreadable)
    return TableRead(shown, snapshot.listing, result, build_history(result.footers, "the Delta log"), (), log,
                     unreferenced=snapshot.unreferenced, reuse=reuse)


def table_format(listing: Listing, how: ReadOptions, shown: str) -> TableFormat:
    """The format a table is read as: the hint, else Delta when its `_delta_log/` holds a commit,
    else Iceberg when a metadata file is named or its `metadata/` holds one."""
    hint = how.format_hint
    if hint == "parquet":
        return "parquet"
    if hint in ("auto", "delta") and is_delta(listing):
        return "delta"
    if hint == "delta":
        raise UsageError(f"{shown}: not a Delta table (no commit in a _delta_log directory)")
    if how.metadata is not None or is_iceberg(listing):
        return "iceberg"
    if hint == "iceberg":
        raise UsageError(f"{shown}: not an Iceberg table (no *.metadata.json in a metadata directory)")
    if hint == "auto" and (below := tables_below(listing)):
        named = ", ".join(f"{rel} ({kind})" for rel, kind in below[:5]) + (", ..." if len(below) > 5 else "")
        raise UsageError(f"{shown} is not one table: it holds {len(below)} table(s) below it ({named}); "
                         "name one, or give --format-hint parquet to read every Parquet file below as one "
                         "table")
    return "parquet"


def tables_below(listing: Listing) -> list[tuple[str, str]]:
    """The Delta and Iceberg tables in folders below the listing's root (a lake's root, not a
    table), by folder: those holding a `_delta_log/` or a `metadata/*.metadata.json`."""
    log = f"/{LOG_DIR}/"
    found = {i.rel[: -len(log)]: "Delta" for i in listing.ignored if i.rel.endswith(log)}
    for rel in listing.files.rels_ending(METADATA_SUFFIX):
        folder = rel.rpartition("/")[0]
        root, _, name = folder.rpartition("/")
        if name == METADATA_DIR and root:
            found.setdefault(root, "Iceberg")
    return sorted(found.items())


def _scan(listing: Listing, progress: Callable[[int], None] | None, spark: SparkSession | None,
          workers: int | None, cache: Path | None, incremental: bool) -> tuple[ScanResult, Reuse | None]:
    def fresh(files: Listing) -> ScanResult:
        return scan_on_spark(files, spark, progress) if spark is not None else scan(files, progress, workers)

    if cache is None:
        return fresh(listing), None
    return scan_incremental(listing, cache, fresh, progress, incremental)


def _summaries(listing: Listing) -> tuple[FileFooter | Unreadable, ...]:
    """The footers of the summary files Spark lists (the scan skips them as not data)."""
    found = sorted((i.rel for i in listing.ignored if i.rel.rpartition("/")[2] in SUMMARY_FILES),
                   key=spark_order_key)
    out: list[FileFooter | Unreadable] = []
    for rel in found:
        try:
            out.append(read_footer(f"{listing.root.rstrip('/')}/{rel}", rel=rel,
                                   filesystem=listing.filesystem))
        except UnreadableFile as e:
            out.append(Unreadable(rel, e.reason))
    return tuple(out)
