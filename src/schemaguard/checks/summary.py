"""What every report shows about one table, computed once: counts, each version with what
changed from the one before and its leaves, where the files lie in time. The renderers read this
and decide nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from schemaguard.lake.discover import DataFile, partition_dir
from schemaguard.lake.history import (
    ColumnChange,
    SchemaVersion,
    column_changes,
    date_partition_column,
    files_per_day,
    leaf_signature,
)
from schemaguard.lake.table import TableRead


@dataclass(frozen=True, slots=True)
class VersionSummary:
    version: SchemaVersion
    changes: tuple[ColumnChange, ...]  # from the version before (none for the first)
    signature: dict[str, str]  # each leaf: type, nullability and Parquet layout
    days: tuple[tuple[date, int], ...]  # files per day of the date partition, when there is one


@dataclass(frozen=True, slots=True)
class Counts:
    files: int  # data files listed
    read: int
    unreadable: int
    ignored: int
    versions: int
    rows: int


@dataclass(frozen=True, slots=True)
class TableSummary:
    name: str
    table: TableRead
    counts: Counts
    versions: tuple[VersionSummary, ...]
    date_column: str | None  # the date partition that places files in time, if any
    unreadable_files: tuple[DataFile, ...]  # as listed (partition, mtime), for the timeline
    unreadable_days: tuple[tuple[date, int], ...]  # the unreadable files per day of the date partition
    partition_dirs: dict[str, str]  # each listed file's partition directory ("" when unpartitioned)


def summarize(name: str, table: TableRead) -> TableSummary:
    versions = table.versions
    date_col = date_partition_column(table.scan.footers)
    previous = [None, *versions][:len(versions)]
    summaries = tuple(
        VersionSummary(v, tuple(column_changes(p.footer, v.footer)) if p else (), leaf_signature(v.footer),
                       files_per_day(v.files, date_col) if date_col else ())
        for p, v in zip(previous, versions, strict=True))
    bad = {u.rel for u in table.scan.unreadable}
    unreadable = tuple(f for f in table.listing.files if f.rel in bad)
    counts = Counts(len(table.listing.files), len(table.scan.footers), len(table.scan.unreadable),
                    len(table.listing.ignored), len(versions), sum(f.rows for f in table.scan.footers))
    return TableSummary(name, table, counts, summaries, date_col, unreadable,
                        files_per_day(unreadable, date_col) if date_col else (),
                        {f.rel: partition_dir(f.partition) for f in table.listing.files})
