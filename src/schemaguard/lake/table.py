"""The one way into a table: its listing, every footer, and the versions they form.

`read(location)` is what every command, the audit, the schema sources and the benchmark call:
list the table the way Spark does (lake/discover.py), read every data file's footer with one of
the engines (lake/scan.py), read the Parquet summary files Spark would also consult
(`_metadata`, `_common_metadata`), and group the footers into schema versions (lake/history.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemaguard.formats.parquet import FileFooter, UnreadableFile, read_footer
from schemaguard.lake.discover import Listing, discover, spark_order_key
from schemaguard.lake.history import History, SchemaVersion, build_history
from schemaguard.lake.scan import ScanResult, Unreadable, scan, scan_on_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SUMMARY_FILES = ("_metadata", "_common_metadata")  # the order mergeSchema merges them in, after the data


@dataclass(frozen=True, slots=True)
class TableRead:
    """Everything read from one table location, before any rule looks at it."""

    location: str  # as the user gave it
    listing: Listing
    scan: ScanResult
    history: History
    summaries: tuple[FileFooter | Unreadable, ...]  # summary files in Spark's order, read or not

    @property
    def versions(self) -> tuple[SchemaVersion, ...]:
        return self.history.versions


def read(location: str, progress: Callable[[int], None] | None = None,
         spark: SparkSession | None = None, workers: int | None = None) -> TableRead:
    """List, scan and group one table; with `spark`, footers are read as a Spark job, else by
    `workers` local processes (default: one per core)."""
    return read_listing(discover(location), progress, spark, location, workers)


def read_listing(listing: Listing, progress: Callable[[int], None] | None = None,
                 spark: SparkSession | None = None, location: str | None = None,
                 workers: int | None = None) -> TableRead:
    """`read` of a table already listed (the audit lists every table before reading any)."""
    result = scan_on_spark(listing, spark) if spark is not None else scan(listing, progress, workers)
    return TableRead(location or listing.root, listing, result, build_history(result.footers),
                     _summaries(listing))


def _summaries(listing: Listing) -> tuple[FileFooter | Unreadable, ...]:
    """The footers of the summary files Spark lists (the scan skips them as not data)."""
    found = sorted((i.rel for i in listing.ignored if i.rel.rpartition("/")[2] in SUMMARY_FILES),
                   key=spark_order_key)
    out: list[FileFooter | Unreadable] = []
    for rel in found:
        try:
            out.append(read_footer(f"{listing.root.rstrip('/')}/{rel}", rel=rel,
                                   filesystem=None if listing.is_local else listing.filesystem))
        except UnreadableFile as e:
            out.append(Unreadable(rel, e.reason))
    return tuple(out)
