"""Typed findings: one record per problem, grouped, never one line per file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Literal

from schemaguard.lake.discover import Listing
from schemaguard.lake.history import History, SchemaVersion, leaf_signature
from schemaguard.lake.scan import ScanResult
from schemaguard.model import walk
from schemaguard.rules.merge import merge

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")  # lowest first
SAMPLE = 20  # files named per finding; the count says how many there are in all


@dataclass(frozen=True, slots=True)
class Waiver:
    """An acknowledged finding: still reported, does not fail a run until it expires."""

    key: str
    owner: str
    reason: str
    expires: date

    def active(self, today: date) -> bool:
        return today <= self.expires


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    count: int  # files involved in all
    files: tuple[str, ...]  # a bounded sample, table-relative
    path: str = ""  # the column, when the finding is about one
    versions: tuple[int, ...] = ()  # schema versions involved (1 = oldest)
    rule: str = ""  # the rule that produced it, with its source
    subject: str = ""  # what the finding is about when that is not one column alone (a reason, a profile)
    partitions: tuple[str, ...] = ()  # a bounded sample of partition directories involved
    partition_count: int = 0
    evidence: tuple[tuple[str, str], ...] = ()  # (label, value): what was seen, e.g. a layout per version
    table: str = ""  # set by the audit: the table as configured
    waiver: Waiver | None = None  # set by the audit when a waiver in configuration matches the key

    @property
    def key(self) -> str:
        """Stable across runs while the problem persists: `table:CODE:subject`; waivers name it."""
        return f"{self.table}:{self.code}:{self.subject or self.path}"

    def waived(self, today: date) -> bool:
        return self.waiver is not None and self.waiver.active(today)


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


def history_findings(history: History) -> list[Finding]:
    """Findings about the versions on disk: what Spark's mergeSchema would do with them, columns
    whose Parquet layout drifts between versions, names that differ only in case, and columns
    older files lack. One finding per column, naming the versions and files involved."""
    versions = history.versions
    if len(versions) < 2:
        return []
    return [*_merge_conflicts(versions), *_layout_drift(versions), *_case_only(versions),
            *_missing_in_old(versions)]


def _files(versions: list[SchemaVersion]) -> tuple[int, tuple[str, ...]]:
    names = [f.rel for v in versions for f in v.files]
    return len(names), tuple(names[:SAMPLE])


def _by_number(groups: Iterable[list[SchemaVersion]]) -> list[SchemaVersion]:
    """The versions in any of the groups, once each, oldest first."""
    return sorted({v.number: v for vs in groups for v in vs}.values(), key=lambda v: v.number)


def _merge_conflicts(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    result = merge([v.footer.schema for v in versions], "spark-merge")
    found = []
    for c in result.conflicts:
        involved = [v for v in versions
                    if any(p.lower() == c.path.lower() for p, *_ in walk(v.footer.schema))]
        count, files = _files(involved)
        found.append(Finding(
            "SPARK_MERGE_CONFLICT", "error",
            f"spark.read.option('mergeSchema', 'true') fails on this table: {c.message}",
            count, files, c.path, tuple(v.number for v in involved), f"{c.rule.id} ({c.rule.source})"))
    return found


def _layout_drift(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """A leaf whose type or Parquet layout (backing, annotation, unit, UTC flag, INT96) differs."""
    seen: dict[str, dict[str, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v in versions:
        for path, layout in leaf_signature(v.footer).items():
            seen[path][layout].append(v)
    found = []
    for path, layouts in seen.items():
        if len(layouts) < 2:
            continue
        involved = _by_number(layouts.values())
        count, files = _files(involved)
        spelled = "; ".join(f"v{','.join(str(v.number) for v in vs)}: {layout}"
                            for layout, vs in layouts.items())
        found.append(Finding("LOGICAL_TYPE_DRIFT", "warning",
                             f"`{path}` is stored differently across versions: {spelled}",
                             count, files, path, tuple(v.number for v in involved),
                             "parquet-and-spark.md §1.4, §0 (compare at the Parquet level)"))
    return found


def _case_only(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    spellings: dict[str, dict[str, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v in versions:
        for path, *_ in walk(v.footer.schema):
            spellings[path.lower()][path].append(v)
    found = []
    for names in spellings.values():
        if len(names) < 2:
            continue
        involved = _by_number(names.values())
        count, files = _files(involved)
        found.append(Finding(
            "CASE_ONLY_NAME_DIFFERENCE", "warning",
            f"{' / '.join(sorted(names))} differ only in case: Spark's mergeSchema (caseSensitive=false) "
            "folds them into one column named as in the first file; case-sensitive readers see two",
            count, files, sorted(names)[0], tuple(v.number for v in involved),
            "compat-rules.md §5 (names differing only in case)"))
    return found


def _missing_in_old(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """Columns of the newest version that older files lack: readers fill them with null/defaults."""
    newest = versions[-1]
    found = []
    for path, *_ in walk(newest.footer.schema):
        lacking = [v for v in versions[:-1] if path not in {p for p, *_ in walk(v.footer.schema)}]
        if not lacking or "." in path or "[" in path or "{" in path:
            continue  # nested fields are reported with their top-level column
        count, files = _files(lacking)
        rows = sum(v.rows for v in lacking)
        found.append(Finding(
            "COLUMN_MISSING_IN_OLD_FILES", "info",
            f"`{path}` is absent from {count} older file(s) ({rows:,} rows): readers fill it with "
            "null or their default", count, files, path, tuple(v.number for v in lacking),
            "parquet-and-spark.md §2.6 (extra column in file B)"))
    return found
