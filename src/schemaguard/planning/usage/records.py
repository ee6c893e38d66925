"""What the usage modules share: the records a log is read into (`LoggedQuery`, with a Spark SQL
execution's `Scan`s or an OpenLineage event's `Dataset`s), a log's times and strings as its fields
hold them, how a name names the table, and what one query comes to (`Outcome`, or
`UnresolvedQuery` when its reads cannot be told). The bottom of planning/usage/: its other modules
import this one, and it imports only the standard library; it reads no file and resolves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

EPOCH_SCALES = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6))  # below: seconds, milliseconds, microseconds


@dataclass(frozen=True, slots=True)
class Scan:
    """One file scan of a Spark SQL execution: its `Location` and `ReadSchema` metadata (both
    None for a scan that names neither, a data source V2 `BatchScan`), and what tells which of
    its partition columns the plan uses."""

    location: str | None
    read_schema: str | None
    output: str | None = ""  # the scan as Spark prints it, its columns `[id#1L,day#2]` first (None: cut)
    flows: bool = False  # no node above projects: every column of the scan reaches the result
    uses: str = ""  # the plan's other nodes and its scans' PartitionFilters, as Spark prints them


@dataclass(frozen=True, slots=True)
class Dataset:
    """A dataset an OpenLineage event reads, and the fields of it that the event's column lineage
    names (None: an output has no columnLineage facet, so the fields read are not told)."""

    namespace: str
    name: str
    aliases: tuple[tuple[str, str], ...]  # its symlinks facet's (namespace, name) identifiers
    fields: frozenset[str] | None


@dataclass(frozen=True, slots=True)
class LoggedQuery:
    line: int  # 1-based line (record) number in its log
    source: str  # the log file
    timestamp: datetime | None  # timezone-aware (UTC when the log names no zone)
    user: str | None  # an OpenLineage event's job (`namespace/name`)
    text: str  # SQL text: read, never printed ("" for a Spark execution or an OpenLineage event)
    scans: tuple[Scan, ...] = ()  # a Spark SQL execution's file scans
    application: str | None = None  # a Spark execution's application (its name, else its id)
    datasets: tuple[Dataset, ...] = ()  # an OpenLineage event's datasets read
    run: str | None = None  # an OpenLineage event's run id


class UnresolvedQuery(Exception):
    """A query names the table, but which of its columns it reads cannot be told. The message
    is a reason without any literal or text of the query."""


Outcome = frozenset[str] | str | None  # the columns read, why unresolved, or None: not the table


def as_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def instant(value: Any) -> datetime | None:
    """A log's time: ISO 8601 text, or seconds, milliseconds or microseconds since the epoch (a
    number, or its digits in a CSV cell)."""
    if isinstance(value, str):
        if not value.strip().lstrip("-").replace(".", "", 1).isdigit():
            return _iso(value)
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    scale = next((s for limit, s in EPOCH_SCALES if abs(value) < limit), 1e9)  # else nanoseconds
    try:
        return datetime.fromtimestamp(value / scale, UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _iso(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def table_parts(table: str) -> tuple[str, ...]:
    return tuple(table.lower().split("."))


def names_table(named: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Do the lowered parts of a name (`db`, `t`) name the table under any catalog or database?"""
    return bool(named) and (named[-len(parts):] == parts or parts[-len(named):] == named)
