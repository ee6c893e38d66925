"""Findings: one typed record per problem, grouped, never one line per file; the one table of
finding codes; waivers; the fail level.

Each finding names the files and partition directories involved (a count and a bounded sample),
the schema versions, what was seen (`evidence`) and the rule behind it. Its key
(`table:CODE:subject-or-path`) is unique within a table, so that a waiver names one finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from itertools import chain, islice
from operator import attrgetter
from typing import Any, Literal

from schemaguard.base import SEVERITIES, Severity
from schemaguard.lake.history import SAMPLE as SAMPLE  # files named per finding
from schemaguard.lake.history import SchemaVersion

FailLevel = Literal["info", "warning", "error", "never"]


class FindingCode(StrEnum):
    """Every finding code, in the order of `CODES`, which gives each its severity, meaning and
    reference (tests/test_findings.py holds the two to the same codes)."""

    UNREADABLE_FILE = "UNREADABLE_FILE"
    STALE_CHECKSUM = "STALE_CHECKSUM"
    NAME_NOT_UTF8 = "NAME_NOT_UTF8"
    ENCRYPTED_COLUMNS = "ENCRYPTED_COLUMNS"
    TABLE_HAS_NO_DATA = "TABLE_HAS_NO_DATA"
    SPARK_CANNOT_READ_FOOTER = "SPARK_CANNOT_READ_FOOTER"
    SPARK_MERGE_CONFLICT = "SPARK_MERGE_CONFLICT"
    LOGICAL_TYPE_DRIFT = "LOGICAL_TYPE_DRIFT"
    NULLABILITY_MISMATCH = "NULLABILITY_MISMATCH"
    FIELD_ID_CHANGED = "FIELD_ID_CHANGED"
    DUPLICATE_COLUMN_NAME = "DUPLICATE_COLUMN_NAME"
    CASE_ONLY_NAME_DIFFERENCE = "CASE_ONLY_NAME_DIFFERENCE"
    COLUMN_MISSING_IN_OLD_FILES = "COLUMN_MISSING_IN_OLD_FILES"
    FIELD_ID_REUSED = "FIELD_ID_REUSED"
    SPARK_SCHEMA_DISAGREES_WITH_PARQUET = "SPARK_SCHEMA_DISAGREES_WITH_PARQUET"
    VERSION_INCOMPATIBLE = "VERSION_INCOMPATIBLE"
    VERSION_QUIET_BREAK = "VERSION_QUIET_BREAK"
    VERSION_READ_CHANGES_MEANING = "VERSION_READ_CHANGES_MEANING"
    DELTA_UNKNOWN_COLUMN = "DELTA_UNKNOWN_COLUMN"
    ICEBERG_FIELD_WITHOUT_ID = "ICEBERG_FIELD_WITHOUT_ID"
    ICEBERG_UNKNOWN_FIELD_ID = "ICEBERG_UNKNOWN_FIELD_ID"
    ICEBERG_INCOMPATIBLE_CHANGE = "ICEBERG_INCOMPATIBLE_CHANGE"
    NULLS_BLOCK_TIGHTENING = "NULLS_BLOCK_TIGHTENING"
    BACKFILL_INCOMPLETE = "BACKFILL_INCOMPLETE"
    DUAL_WRITE_DISAGREES = "DUAL_WRITE_DISAGREES"
    VALUE_OUT_OF_RANGE = "VALUE_OUT_OF_RANGE"
    ENUM_VALUE_UNEXPECTED = "ENUM_VALUE_UNEXPECTED"
    UNIT_DRIFT_SUSPECTED = "UNIT_DRIFT_SUSPECTED"
    PROOF_UNKNOWN = "PROOF_UNKNOWN"
    WAIVER_EXPIRED = "WAIVER_EXPIRED"
    WAIVER_UNMATCHED = "WAIVER_UNMATCHED"


@dataclass(frozen=True, slots=True)
class Code:
    """One finding code: its usual severity, what it means, and the reference it comes from."""

    code: FindingCode
    severity: Severity
    meaning: str
    reference: str


_PS, _CR = "docs/reference/parquet-and-spark.md", "docs/reference/compat-rules.md"
_ID_REF = (f"{_CR} §3 Identity (by field id), §4 Column mapping (id mode; new columns get new ids), "
           "'What none of them checks' (name or id reuse)")
_CONFIG = "conf/schemaguard.toml [[waivers]]"
_PROOF = "conf/schemaguard.toml [[tables]] proofs; proofs/ (statistics, then Great Expectations on Spark)"
CODES: dict[FindingCode, Code] = {c.code: c for c in (
    Code(FindingCode.UNREADABLE_FILE, "error", "A file Spark lists as data cannot be read as Parquet",
         f"{_PS} §2.6 (bad-file cases), §0.7"),
    Code(FindingCode.STALE_CHECKSUM, "error", "A Hadoop .crc sidecar does not match its data file",
         f"{_PS} §2.6 (bad-file cases: stale .crc), §0.7"),
    Code(FindingCode.NAME_NOT_UTF8, "warning", "A data file's path holds bytes that are not UTF-8",
         "Hadoop Path (a java.net.URI: Java strings cannot hold bytes that are not UTF-8)"),
    Code(FindingCode.ENCRYPTED_COLUMNS, "info",
         "Files whose column metadata is encrypted: their statistics are unknown without the keys",
         "parquet.thrift ColumnChunk.crypto_metadata (8), encrypted_column_metadata (9); Parquet Modular "
         "Encryption (plaintext footer mode)"),
    Code(FindingCode.TABLE_HAS_NO_DATA, "error",
         "No Parquet data under the table's location (no data file, or none of them Parquet): nothing was "
         "checked", "lake/discover.py (Spark's listing rules)"),
    Code(FindingCode.SPARK_CANNOT_READ_FOOTER, "error",
         "Spark refuses a footer whole: every read of those files fails",
         "formats/parquet/schema.py _spark_refusal (observed on Spark 4.1.4: key-only MAP, unknown logical "
         "type)"),
    Code(FindingCode.SPARK_MERGE_CONFLICT, "error",
         "spark.read with mergeSchema fails on the versions on disk",
         f"{_CR} §5 StructType.merge; {_PS} §2.3"),
    Code(FindingCode.LOGICAL_TYPE_DRIFT, "warning",
         "A column's type or Parquet layout differs between schema versions",
         f"{_PS} §1.4, §0 (compare at the Parquet level)"),
    Code(FindingCode.NULLABILITY_MISMATCH, "warning",
         "A column is REQUIRED in some schema versions and OPTIONAL in others",
         f"{_CR} §4 isReadCompatible (forbidTightenNullability), §3 (optional -> required), 'Where the "
         f"references disagree' (nullability tightened); {_PS} §2.5"),
    Code(FindingCode.FIELD_ID_CHANGED, "warning",
         "One column carries different Parquet field ids across schema versions", _ID_REF),
    Code(FindingCode.DUPLICATE_COLUMN_NAME, "error",
         "A struct names one column twice (exactly, or in case when readers compare names "
         "case-insensitively): Spark fails the read, with or without mergeSchema",
         f"{_CR} §5 (names differing only in case); tests/test_oracle_duplicate_names.py (Spark 4.1)"),
    Code(FindingCode.CASE_ONLY_NAME_DIFFERENCE, "warning", "Column names that differ only in case",
         f"{_CR} §5 (names differing only in case)"),
    Code(FindingCode.COLUMN_MISSING_IN_OLD_FILES, "info",
         "A column of the newest version that older files lack", f"{_PS} §2.6 (extra column in file B)"),
    Code(FindingCode.FIELD_ID_REUSED, "error",
         "One Parquet field id names different columns: id-based readers bind the wrong one", _ID_REF),
    Code(FindingCode.SPARK_SCHEMA_DISAGREES_WITH_PARQUET, "warning",
         "The Spark schema in a footer disagrees with its Parquet schema",
         f"{_PS} §0.6, §2.2 (Spark uses the footer's Spark schema in preference to the Parquet schema), "
         "§2.4 (Parquet -> Spark types), §2.5 (read-time conversions)"),
    Code(FindingCode.VERSION_INCOMPATIBLE, "error", "A reader cannot read a schema version on disk",
         "the reader profile's rule table (rules/read.py, rules/merge.py)"),
    Code(FindingCode.VERSION_QUIET_BREAK, "error",
         "A reader reads a schema version on disk without an error, and its values change meaning or "
         "land in another column", "the reader profile's rule table (rules/read.py, rules/avro.py)"),
    Code(FindingCode.VERSION_READ_CHANGES_MEANING, "warning",
         "A quiet break the configuration allows (allow_quiet): the read succeeds and changes what values "
         "mean", "the reader profile's rule table (rules/read.py, rules/avro.py)"),
    Code(FindingCode.DELTA_UNKNOWN_COLUMN, "warning",
         "A column of a Delta table's files that no schema of its log holds: no Delta reader returns it",
         f"Delta PROTOCOL.md 'Column Mapping', 'Schema Serialization Format'; {_CR} §4"),
    Code(FindingCode.ICEBERG_FIELD_WITHOUT_ID, "error",
         "Columns of an Iceberg table's file that have no field id and no name-mapping entry: Iceberg "
         "readers cannot bind them",
         f"{_CR} §3 Identity; Iceberg spec 'Column Projection' (name mapping for files without ids)"),
    Code(FindingCode.ICEBERG_UNKNOWN_FIELD_ID, "warning",
         "Columns of an Iceberg table's file whose field id no schema of the table holds: no Iceberg "
         "reader reads them", f"{_CR} §3 Identity"),
    Code(FindingCode.ICEBERG_INCOMPATIBLE_CHANGE, "error",
         "An Iceberg schema change that the spec does not let the current schema read over files still "
         "live in the snapshot",
         f"{_CR} §3 CheckCompatibility, TypeUtil.isPromotionAllowed, spec 'Schema Evolution', "
         "'Default values'"),
    Code(FindingCode.NULLS_BLOCK_TIGHTENING, "error",
         "A column the configuration says is not null holds nulls, or files without it: making it "
         "required breaks their reads", f"{_PROOF}; {_CR} §3, §4 (optional -> required)"),
    Code(FindingCode.BACKFILL_INCOMPLETE, "error",
         "Files or rows in scope still lack a backfilled column", _PROOF),
    Code(FindingCode.DUAL_WRITE_DISAGREES, "error",
         "Dual-written columns disagree where both are written", _PROOF),
    Code(FindingCode.VALUE_OUT_OF_RANGE, "error",
         "Values that do not fit the narrower type the configuration names",
         f"{_PROOF}; exact comparison (decimals, 64-bit integers)"),
    Code(FindingCode.ENUM_VALUE_UNEXPECTED, "warning", "Values outside the allowed set", _PROOF),
    Code(FindingCode.UNIT_DRIFT_SUSPECTED, "warning",
         "A column's magnitude steps by ~100x along the table's order while its type stays the same",
         f"{_PROOF} (proofs/drift.py)"),
    Code(FindingCode.PROOF_UNKNOWN, "warning",
         "A configured proof that neither statistics nor the data could decide (files without "
         "statistics and no data read, unreadable files)", _PROOF),
    Code(FindingCode.WAIVER_EXPIRED, "warning", "A waiver in the configuration has expired", _CONFIG),
    Code(FindingCode.WAIVER_UNMATCHED, "info", "A waiver in the configuration matches no finding", _CONFIG),
)}


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
    code: FindingCode
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


def fails(finding: Finding, fail_level: FailLevel, today: date) -> bool:
    """At or above the fail level, and not acknowledged by a waiver in force on that day."""
    if fail_level == "never" or finding.waived(today):
        return False
    return SEVERITIES.index(finding.severity) >= SEVERITIES.index(fail_level)


def by_severity(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first; within a severity, by code and key, so reports are stable across runs."""
    return sorted(findings, key=lambda f: (-SEVERITIES.index(f.severity), f.code, f.key))


Evidence = list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Involved:
    """The files and partition directories behind a finding: counts in all, bounded samples."""

    count: int
    files: tuple[str, ...]
    partitions: tuple[str, ...]
    partition_count: int


_NUMBER = attrgetter("number")


def numbers(versions: Iterable[SchemaVersion]) -> tuple[int, ...]:
    """The versions' numbers, in their order (a C loop: it runs once per finding)."""
    return tuple(map(_NUMBER, versions))


def involved(versions: Iterable[SchemaVersion]) -> Involved:
    """What some versions cover: their files and their partition directories. Linear in the
    versions and their partitions, never in their files: only the sampled files are listed (one
    finding each of a thousand columns of a million-file version lists 20 files a finding, not a
    million), and one version's partitions are already sorted and distinct (lake/history.py)."""
    vs = list(versions)
    files = vs[0].sample if len(vs) == 1 else tuple(islice(chain.from_iterable(v.sample for v in vs), SAMPLE))
    parts = vs[0].partitions if len(vs) == 1 else tuple(sorted({p for v in vs for p in v.partitions}))
    return Involved(sum(len(v.files) for v in vs), files, parts[:SAMPLE], len(parts))


class Involvement:
    """`involved` once per distinct set of versions: for a check that makes many findings over the
    same few sets (each of 20,000 columns drifting between the same two versions)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, ...], Involved] = {}

    def __call__(self, versions: Sequence[SchemaVersion]) -> Involved:
        key = numbers(versions)
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = involved(versions)
        return found


def involved_files(rels: Sequence[str]) -> Involved:
    """Files known by path alone (the scan's): a file's partition directory is its parent."""
    return sampled(rels, (r.rpartition("/")[0] for r in rels))


def sampled(files: Sequence[str], partitions: Iterable[str]) -> Involved:
    parts = sorted(set(partitions) - {""})
    return Involved(len(files), tuple(files[:SAMPLE]), tuple(parts[:SAMPLE]), len(parts))


def cited(code: FindingCode) -> str:
    """The reference a code comes from, as a finding's `rule` cites it."""
    return CODES[code].reference


def finding(code: FindingCode, message: str, versions: Sequence[SchemaVersion], path: str, evidence: Evidence,
            subject: str = "", severity: Severity | None = None, rule: str | None = None,
            of: Callable[[Sequence[SchemaVersion]], Involved] = involved) -> Finding:
    """A finding about some versions: their files, partitions and numbers filled in one place (by
    `of`: an `Involvement` shared by one check's findings); the severity and the rule default to
    the code's row in `CODES`."""
    inv = of(versions)
    return Finding(code, severity or CODES[code].severity, message, inv.count, inv.files, path,
                   numbers(versions), rule if rule is not None else cited(code),
                   subject=subject, partitions=inv.partitions, partition_count=inv.partition_count,
                   evidence=tuple(evidence))


def files_finding(code: FindingCode, message: str, rels: Sequence[str], evidence: Evidence,
                  subject: str = "") -> Finding:
    """A finding about files known by path alone (unreadable ones, stale checksums)."""
    inv = involved_files(rels)
    return Finding(code, CODES[code].severity, message, inv.count, inv.files, rule=cited(code),
                   subject=subject, partitions=inv.partitions, partition_count=inv.partition_count,
                   evidence=tuple(evidence))


_DETAIL = re.compile(r":| \(")  # formats/parquet/ puts a reason's detail after these


def reason_category(reason: str) -> str:
    """The stable head of an unreadable file's reason (`truncated`, `zero-byte file`, `corrupt
    footer`, `too small to be Parquet`): the detail after it (an error text, a byte count) varies
    per file and would split one problem into many findings with unstable keys."""
    return _DETAIL.split(reason, maxsplit=1)[0].strip() or reason


def finding_doc(f: Finding) -> dict[str, Any]:
    """A finding's stable JSON keys (the audit adds its waiver and verdict)."""
    return {
        "key": f.key, "code": f.code.value, "severity": f.severity, "table": f.table, "path": f.path,
        "subject": f.subject, "message": f.message, "count": f.count, "files": list(f.files),
        "partitions": list(f.partitions), "partition_count": f.partition_count, "versions": list(f.versions),
        "evidence": [{"label": label, "value": value} for label, value in f.evidence], "rule": f.rule,
    }
