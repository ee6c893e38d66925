"""What the listing and the footer scan alone show: unreadable files (by reason), Hadoop checksum
sidecars that no longer match, and a table with no data file at all."""

from __future__ import annotations

from collections import defaultdict

from schemaguard.checks.finding import (
    CODES,
    Finding,
    FindingCode,
    cited,
    files_finding,
    reason_category,
)
from schemaguard.lake.discover import not_utf8
from schemaguard.lake.history import SAMPLE
from schemaguard.lake.scan import Unreadable
from schemaguard.lake.table import TableRead


def unreadable_files(table: TableRead, _: object = None) -> list[Finding]:
    """One finding per kind of reason (`truncated`, `zero-byte file`, ...), naming the files.
    O(unreadable files)."""
    by_category: dict[str, list[Unreadable]] = defaultdict(list)
    for u in table.scan.unreadable:
        by_category[reason_category(u.reason)].append(u)
    return [_unreadable(category, files) for category, files in sorted(by_category.items())]


def _unreadable(category: str, files: list[Unreadable]) -> Finding:
    reasons = list(dict.fromkeys(u.reason for u in files))
    more = f" (and {len(reasons) - 1} more reason(s) of this kind)" if len(reasons) > 1 else ""
    return files_finding(FindingCode.UNREADABLE_FILE,
                         f"{len(files)} file(s) Spark would list as data cannot be read: {reasons[0]}{more}",
                         [u.rel for u in files], [("reason", r) for r in reasons[:SAMPLE]], subject=category)


def stale_checksums(table: TableRead, _: object = None) -> list[Finding]:
    """Files whose `.crc` sidecar the listing found stale, in one finding. O(stale files)."""
    stale = table.listing.stale_checksums
    if not stale:
        return []
    return [files_finding(
        FindingCode.STALE_CHECKSUM,
        f"{len(stale)} file(s) have a .crc sidecar that does not match their size: "
        "Hadoop's checksum layer (Spark on local/HDFS) will fail reading them",
        [s.rel for s in stale], [("why", w) for w in dict.fromkeys(s.why for s in stale)])]


def undecodable_names(table: TableRead, _: object = None) -> list[Finding]:
    """Files whose path is not UTF-8: read here, listed with `\\xNN` escapes, but a JVM reader
    cannot name them at all. O(files): one look at each path's bytes."""
    odd = [f.rel for f in table.listing.files if not_utf8(f.path)]
    if not odd:
        return []
    return [files_finding(
        FindingCode.NAME_NOT_UTF8,
        f"{len(odd)} data file path(s) hold bytes that are not UTF-8 (shown as \\xNN): Spark and other "
        "JVM readers cannot name them, and may skip or fail on them", odd, [])]


def encrypted_columns(table: TableRead, _: object = None) -> list[Finding]:
    """Files with encrypted column metadata: their statistics cannot be read, so no proof from
    statistics covers those columns there. O(files): one pass over the footers' encrypted column."""
    by_columns: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for rel, columns in table.scan.footers.encrypted_files():
        by_columns[columns].append(rel)
    return [files_finding(
        FindingCode.ENCRYPTED_COLUMNS,
        f"{len(files)} file(s) have encrypted column metadata for {', '.join(columns)}: their "
        "statistics are unknown without the keys", files, [("column", c) for c in columns],
        subject=",".join(columns)) for columns, files in sorted(by_columns.items())]


# Reasons that say a file was never Parquet (a CSV, a text file), as against a Parquet file that
# is damaged (zero bytes of an unfinished write, truncated, a corrupt footer): those are findings
# of a real table.
NOT_PARQUET = ("not a Parquet file", "too small to be Parquet")


def no_parquet_data(table: TableRead) -> str | None:
    """What the table's location holds when it holds no Parquet data at all (no data file, or
    only files that never were Parquet), in a few words; None when there is Parquet to check,
    readable or damaged."""
    listing, unreadable = table.listing, table.scan.unreadable
    if not listing.files:
        more = ", ..." if len(listing.ignored) > 3 else ""
        ignored = ", ".join(i.rel for i in listing.ignored[:3]) + more
        return (f"no data file under {listing.root}: an empty folder" if not listing.ignored else
                f"no data file under {listing.root}: {len(listing.ignored)} file(s) ignored ({ignored})")
    if table.versions or any(reason_category(u.reason) not in NOT_PARQUET for u in unreadable):
        return None
    example = unreadable[0]
    return (f"no Parquet data under {listing.root}: {len(listing.files)} file(s), none of them Parquet "
            f"(e.g. {example.rel}: {example.reason})")


def no_data(table: TableRead, _: object = None) -> list[Finding]:
    """A location with no Parquet data at all: one finding, nothing else checked. O(unreadable
    files)."""
    why = no_parquet_data(table)
    if why is None:
        return []
    return [Finding(FindingCode.TABLE_HAS_NO_DATA, CODES[FindingCode.TABLE_HAS_NO_DATA].severity,
                    f"{why}; nothing was checked (a wrong path, or a table not written yet?)",
                    len(table.listing.files), tuple(u.rel for u in table.scan.unreadable[:SAMPLE]),
                    rule=cited(FindingCode.TABLE_HAS_NO_DATA))]
