"""Usage over logs: per column of the table, the queries in the window that read it (last read,
readers, count, Spark applications), and how many name the table but could not be resolved, with
where (FILE:LINE and a fixed reason). Logs are streamed: memory is bounded by the outcomes kept
per distinct query text, the recent OpenLineage runs, one compressed block and the per-column
aggregates. The last stage of planning/usage/, called by planning/evidence.py: it imports logs.py,
events.py, resolve.py, limits.py and records.py, keeps no query, and puts no literal or query text
in any output, only file and line numbers and fixed reasons.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import chain
from pathlib import Path

from schemaguard.model import Schema
from schemaguard.planning.usage.events import lineage_reads, scan_reads
from schemaguard.planning.usage.limits import RESOLVED_CACHE, TextCache, bounded
from schemaguard.planning.usage.logs import log_records
from schemaguard.planning.usage.records import LoggedQuery, Outcome, UnresolvedQuery, table_parts
from schemaguard.planning.usage.resolve import column_reads

UNRESOLVED_SHOWN = 20


@dataclass(frozen=True, slots=True)
class ColumnUsage:
    column: str
    last_read: datetime | None
    readers: tuple[str, ...]
    queries: int
    applications: tuple[str, ...] = ()  # the Spark applications that read it


@dataclass(frozen=True, slots=True)
class Usage:
    table: str
    columns: dict[str, ColumnUsage]  # only the columns read at least once
    queries: int  # queries in the window that read the table
    unresolved: int  # queries that name the table but could not be resolved
    unresolved_where: tuple[str, ...]  # "FILE:LINE: why", at most UNRESOLVED_SHOWN
    skipped_lines: int  # malformed log lines
    since: datetime | None
    until: datetime | None


@dataclass(slots=True)
class _Tally:
    last: datetime | None = None
    readers: set[str] = field(default_factory=set)
    applications: set[str] = field(default_factory=set)
    queries: int = 0

    def add(self, q: LoggedQuery) -> None:
        self.queries += 1
        if q.user:
            self.readers.add(q.user)
        if q.application:
            self.applications.add(q.application)
        if q.timestamp and (self.last is None or q.timestamp > self.last):
            self.last = q.timestamp


class _Runs:
    """The columns counted per OpenLineage run, for the RESOLVED_CACHE most recent runs: a run's
    events (START, RUNNING, COMPLETE) each repeat what it reads, and the run is one read."""

    def __init__(self) -> None:
        self._counted: OrderedDict[str, frozenset[str]] = OrderedDict()

    def fresh(self, q: LoggedQuery, columns: frozenset[str]) -> tuple[bool, frozenset[str]]:
        """Is `q` a read not counted yet, and which of its columns are not counted for its run."""
        if q.run is None:
            return True, columns
        before = self._counted.pop(q.run, None)
        self._counted[q.run] = columns | (before or frozenset())
        if len(self._counted) > RESOLVED_CACHE:
            self._counted.popitem(last=False)
        return before is None, columns - (before or frozenset())


def read_usage(logs: Sequence[Path], table: str, schema: Schema, since: datetime | None = None,
               until: datetime | None = None, time_limit: float = 2.0, location: str | None = None,
               dialect: str = "spark") -> Usage:
    """Per column of `table`, the queries in the window that read it: last read, readers, count,
    and the Spark applications. Spark event log scans count when they read `location` (or below
    it), OpenLineage datasets at `location` or under the table's name. A query without a time
    counts as in the window; naive `since`/`until` are UTC."""
    since, until = _aware(since), _aware(until)
    tallies: defaultdict[str, _Tally] = defaultdict(_Tally)
    runs = _Runs()
    queries = unresolved = skipped = 0
    where: list[str] = []

    def in_window() -> Iterator[LoggedQuery]:
        nonlocal skipped
        for q in chain.from_iterable(log_records(log) for log in logs):
            if q is None:
                skipped += 1
            elif _in_window(q.timestamp, since, until):
                yield q

    for q, outcome in query_outcomes(in_window(), table, schema, location, time_limit, dialect):
        if isinstance(outcome, str):
            unresolved += 1
            if len(where) < UNRESOLVED_SHOWN:
                where.append(f"{q.source}:{q.line}: {outcome}")
        elif outcome is not None:
            new, fresh = runs.fresh(q, outcome)
            queries += new
            for column in fresh:
                tallies[column].add(q)
    columns = {c: ColumnUsage(c, t.last, tuple(sorted(t.readers)), t.queries, tuple(sorted(t.applications)))
               for c, t in tallies.items()}
    return Usage(table, columns, queries, unresolved, tuple(where), skipped, since, until)


def query_outcomes(queries: Iterable[LoggedQuery], table: str, schema: Schema, location: str | None = None,
                   time_limit: float = 2.0, dialect: str = "spark") -> Iterator[tuple[LoggedQuery, Outcome]]:
    """Each query with what it reads of `table`: the top-level columns (maybe none), why that
    cannot be told (a fixed reason), or None when it does not read the table. A Spark execution's
    scans count at `location` (or below it), an OpenLineage event's datasets at `location` or
    under the table's name, SQL text as `column_reads` resolves it (once per distinct text, within
    `time_limit` seconds)."""
    names = {f.name.lower(): f.name for f in schema.fields}
    cache = TextCache(partial(_resolve, table=table, schema=schema, dialect=dialect, seconds=time_limit))
    for q in queries:
        if q.scans:
            yield q, scan_reads(q.scans, location, names)
        elif q.datasets:
            yield q, lineage_reads(q.datasets, table_parts(table), location, names)
        else:
            yield q, cache.get(q.text)


def _aware(moment: datetime | None) -> datetime | None:
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def _in_window(when: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    """A query without a time counts: it may be recent."""
    return when is None or not ((since and when < since) or (until and when > until))


def _resolve(text: str, table: str, schema: Schema, dialect: str, seconds: float) -> Outcome:
    try:
        return bounded(seconds, lambda: column_reads(text, table, schema, dialect))
    except UnresolvedQuery as e:
        return str(e)
