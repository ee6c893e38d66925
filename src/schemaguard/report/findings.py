"""Typed findings: one record per problem, grouped, never one line per file."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from schemaguard.lake.discover import Listing
from schemaguard.lake.scan import ScanResult

Severity = Literal["info", "warning", "error"]
SAMPLE = 20  # files named per finding; the count says how many there are in all


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    count: int
    files: tuple[str, ...]  # a bounded sample, table-relative


def scan_findings(listing: Listing, result: ScanResult) -> list[Finding]:
    """Findings a footer scan alone can make: unreadable files (by reason) and stale checksums."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for u in result.unreadable:
        by_reason[u.reason].append(u.rel)
    found = [
        Finding("UNREADABLE_FILE", "error",
                f"{len(files)} file(s) Spark would list as data cannot be read: {reason}",
                len(files), tuple(files[:SAMPLE]))
        for reason, files in sorted(by_reason.items())
    ]
    if listing.stale_checksums:
        files = [s.rel for s in listing.stale_checksums]
        found.append(Finding(
            "STALE_CHECKSUM", "error",
            f"{len(files)} file(s) have a .crc sidecar that does not match their size: "
            "Hadoop's checksum layer (Spark on local/HDFS) will fail reading them",
            len(files), tuple(files[:SAMPLE])))
    return found
