"""The one way into a table: its files as its readers find them, every footer, and the versions
they form.

`read(location)` is what every command, the audit, the schema sources and the benchmark call:
list the table the way Spark does (lake/discover.py). A directory holding `_delta_log/` is a Delta
table and is read through its log (lake/delta.py): the snapshot's files, not the directory's, and
its columns by their logical names. Anything else is a Parquet directory: every listed data file,
and the Parquet summary files Spark would also consult (`_metadata`, `_common_metadata`). Either
way each footer is read with one of the engines (lake/scan.py), and the footers are grouped into
schema versions (lake/history.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from schemaguard.errors import UsageError
from schemaguard.formats.delta import DeltaLog
from schemaguard.formats.parquet import FileFooter, UnreadableFile, read_footer
from schemaguard.lake.delta import is_delta, log_snapshot, logical_footers, read_log
from schemaguard.lake.discover import DataFile, Listing, discover, spark_order_key
from schemaguard.lake.history import History, SchemaVersion, build_history
from schemaguard.lake.scan import ScanResult, Unreadable, scan, scan_on_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TableFormat = Literal["parquet", "delta"]
FORMAT_HINTS = ("auto", "parquet", "delta")


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read a table: its format (`auto`: detected), which snapshot of a Delta table (a
    version, or the last commit at or before a time; default the latest), and whether files no
    snapshot references are read too."""

    format_hint: str = "auto"
    version: int | None = None
    timestamp: float | None = None  # seconds since the epoch
    include_unreferenced: bool = False


SUMMARY_FILES = ("_metadata", "_common_metadata")  # the order mergeSchema merges them in, after the data


@dataclass(frozen=True, slots=True)
class TableRead:
    """Everything read from one table location, before any rule looks at it."""

    location: str  # as the user gave it
    listing: Listing
    scan: ScanResult
    history: History
    summaries: tuple[FileFooter | Unreadable, ...]  # summary files in Spark's order, read or not
    delta: DeltaLog | None = None  # the snapshot's log, for a Delta table
    unreferenced: tuple[DataFile, ...] = ()  # Delta: data files on disk that the snapshot leaves out

    @property
    def versions(self) -> tuple[SchemaVersion, ...]:
        return self.history.versions

    @property
    def table_format(self) -> TableFormat:
        return "parquet" if self.delta is None else "delta"


def read(location: str, progress: Callable[[int], None] | None = None,
         spark: SparkSession | None = None, workers: int | None = None,
         how: ReadOptions = ReadOptions()) -> TableRead:
    """List, scan and group one table; with `spark`, footers are read as a Spark job, else by
    `workers` local processes (default: one per core)."""
    return read_listing(discover(location), progress, spark, location, workers, how)


def read_listing(listing: Listing, progress: Callable[[int], None] | None = None,
                 spark: SparkSession | None = None, location: str | None = None,
                 workers: int | None = None, how: ReadOptions = ReadOptions()) -> TableRead:
    """`read` of a table already listed (the audit lists every table before reading any)."""
    shown = location or listing.root
    if table_format(listing, how.format_hint, shown) == "parquet":
        if how.version is not None or how.timestamp is not None:
            raise UsageError(f"{shown}: a version or timestamp needs a Delta table; this is a Parquet "
                             "directory")
        result = _scan(listing, progress, spark, workers)
        return TableRead(shown, listing, result, build_history(result.footers), _summaries(listing))
    log = read_log(listing, how.version, how.timestamp)
    snapshot = log_snapshot(listing, log, how.include_unreferenced)
    result = _scan(snapshot.listing, progress, spark, workers)
    result = ScanResult(logical_footers(result.footers, log), result.unreadable)
    return TableRead(shown, snapshot.listing, result, build_history(result.footers), (), log,
                     snapshot.unreferenced)


def table_format(listing: Listing, hint: str, shown: str) -> TableFormat:
    """The format a table is read as: the hint, else Delta when its `_delta_log/` holds a commit."""
    if hint == "parquet":
        return "parquet"
    delta = is_delta(listing)
    if hint == "delta" and not delta:
        raise UsageError(f"{shown}: not a Delta table (no commit in a _delta_log directory)")
    return "delta" if delta else "parquet"


def _scan(listing: Listing, progress: Callable[[int], None] | None, spark: SparkSession | None,
          workers: int | None) -> ScanResult:
    return scan_on_spark(listing, spark) if spark is not None else scan(listing, progress, workers)


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
