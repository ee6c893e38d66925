"""Proofs about the data that no schema shows: no nulls before a column is made required, a
backfill complete, a dual-written pair agreeing, values fitting a narrower type, a column's value
set, no unit drift. Each proof ends `proven`, `refuted` (with where) or `unknown` (with why).

Statistics decide first (`stats.py`: footer null counts and bounds, Delta's log statistics,
Iceberg's manifests); only the files they leave undecided are read, with Spark, and validated
with Great Expectations (`gx_spark.py`). `run.py` puts the two together over a scope of the table.

Stage `proofs` (sources -> lake -> formats -> history -> rules -> checks -> proofs -> plan ->
report).
May import: errors, acyclic, names, paths, model, base, formats, lake, rules, checks.
Must not: write into the tables it reads, or leave a caller's Spark session changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from schemaguard.paths import join_parts, parts

ProofKind = Literal["not-null", "backfilled", "agree", "fits", "values", "unit-drift"]
PROOF_KINDS: tuple[ProofKind, ...] = ("not-null", "backfilled", "agree", "fits", "values", "unit-drift")
Verdict = Literal["proven", "refuted", "unknown"]
DecidedBy = Literal["footer", "log", "manifest", "data", "none"]
SAMPLE = 20  # offending rows, files or values kept per proof
PARTITIONS = 1000  # partitions listed where a proof is refuted; `partition_count` counts them all


@dataclass(frozen=True, slots=True)
class Proof:
    """One proof asked for: its kind and column (for `agree`, the expression as given), the
    narrower type for `fits` (in the notation: int32, float, decimal(10,2)), the allowed values
    for `values`."""

    kind: ProofKind
    column: str
    target: str | None = None
    allowed: tuple[str, ...] | None = None
    source: str | None = None  # `backfilled` from this column: null only where it is null

    def __post_init__(self) -> None:
        # A column is named by its path, which quotes a name only where it must: `` `sp ace` `` and
        # `sp ace` name one column, kept as the schema's paths spell it (`a.b` stays the field b of
        # a struct a, `` `a.b` `` one column).
        if self.kind != "agree":
            object.__setattr__(self, "column", _path(self.column))
        if self.source is not None:
            object.__setattr__(self, "source", _path(self.source))

    @property
    def spelled(self) -> str:
        """The column as configured: `quantity:int32` for `fits`, `NEW from OLD` for `backfilled`."""
        if self.source is not None:
            return f"{self.column}{BACKFILLED_FROM}{self.source}"
        return self.column if self.target is None else f"{self.column}:{self.target}"

    @property
    def predicate(self) -> str | None:
        """What a `backfilled` proof holds, in words (the rows it counts break it)."""
        if self.kind != "backfilled":
            return None
        if self.source is None:
            return f"{self.column} is never null"
        return f"{self.column} is null only where {self.source} is null"

    @property
    def label(self) -> str:
        """`not-null channel`: how reports name the proof."""
        return f"{self.kind} {self.spelled}"


def _path(column: str) -> str:
    """A column as paths spell it; left as given when it is no column path (named as it is in the
    error that refuses it)."""
    try:
        return join_parts(parts(column))
    except ValueError:
        return column


BACKFILLED_FROM = " from "  # `--backfilled "customer_id from customer"`


def proof_of(kind: ProofKind, subject: str, allowed: tuple[str, ...] | None = None) -> Proof:
    """A proof as its subject spells it: `COL:TYPE` for `fits`, `NEW from OLD` (or `NEW`) for
    `backfilled`, the column (or `agree` expression) for the rest."""
    if kind == "fits":
        column, _, target = subject.partition(":")
        return Proof("fits", column, target=target or None)
    if kind == "backfilled" and BACKFILLED_FROM in subject:
        new, _, old = subject.partition(BACKFILLED_FROM)
        return Proof("backfilled", new.strip(), source=old.strip())
    return Proof(kind, subject, allowed=allowed)


@dataclass(frozen=True, slots=True)
class ProofResult:
    proof: Proof
    verdict: Verdict
    decided_by: DecidedBy
    count: int = 0  # offending rows (or values, for `values`)
    partitions: tuple[str, ...] = ()  # the first PARTITIONS directories where it is refuted, in order
    files: tuple[str, ...] = ()  # files where it is refuted (a sample)
    files_unknown: tuple[str, ...] = ()  # files neither statistics nor data decided (a sample)
    files_absent: tuple[str, ...] = ()  # files without the column (a sample)
    rows_read: int = 0
    bytes_read: int = 0
    sample: tuple[dict[str, Any], ...] = field(default=())  # offending rows or values, bounded
    why: str = ""
    partition_count: int = 0  # every partition where it is refuted
    days: tuple[date, ...] = ()  # the days of the date partition where it is refuted, if there is one

    def __post_init__(self) -> None:
        if len(self.partitions) > self.partition_count:
            object.__setattr__(self, "partition_count", len(self.partitions))

    def where(self, shown: int = 3) -> str:
        """The first partitions where it is refuted, for a line of text."""
        return ", ".join(self.partitions[:shown]) + (" ..." if self.partition_count > shown else "")

EXIT_CODES: dict[Verdict, int] = {"proven": 0, "refuted": 1, "unknown": 3}  # `check`'s exit codes


def overall(verdicts: Iterable[Verdict]) -> Verdict:
    """Refuted if any is, else unknown if any is, else proven."""
    verdicts = set(verdicts)
    return "refuted" if "refuted" in verdicts else "unknown" if "unknown" in verdicts else "proven"
