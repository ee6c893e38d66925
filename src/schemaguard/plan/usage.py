"""Who still reads which column: query logs resolved with sqlglot, and Spark event logs' scans.

A query log is JSON lines or CSV (a timestamp, a user and the query text, under any of the
usual names), or a Spark event log (JSON lines of listener events), told apart by content.
Each query is parsed and qualified against the table's columns (sqlglot's `qualify`: stars
expanded, CTEs, subqueries, joins with USING and aliases followed), and every column a scope
reads from the table counts, its top-level column for a struct field (`addr.city` reads `addr`).
A query that names the table but cannot be parsed, attributed with certainty, or resolved within
its time limit is `unresolved`: the no-reads check is then unknown, never proven. Reads are
counted conservatively (a CTE's column counts even when the outer query drops it).

Spark event logs: each SQL execution's physical plan (`sparkPlanInfo`) names, per file scan,
its location and `ReadSchema`: the columns Spark really read, at the table's location.

Memory is bounded by the distinct query texts kept (RESOLVED_CACHE) and the per-column
aggregates; no literal or query text is kept in any output, only file and line numbers.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import chain
from pathlib import Path
from types import FrameType
from typing import Any, TextIO, TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from schemaguard.errors import UsageError
from schemaguard.model import Schema

TIME_KEYS = ("timestamp", "ts", "time", "event_time", "start_time")
USER_KEYS = ("user", "user_name", "username", "principal", "executed_by")
QUERY_KEYS = ("query", "query_text", "statement", "sql", "text")
SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
APP_START = "SparkListenerApplicationStart"
RESOLVED_CACHE = 10_000  # distinct query texts whose resolution is kept
UNRESOLVED_SHOWN = 20


@dataclass(frozen=True, slots=True)
class LoggedQuery:
    line: int  # 1-based line (record) number in its log
    source: str  # the log file
    timestamp: datetime | None  # timezone-aware (UTC when the log names no zone)
    user: str | None
    text: str  # SQL text: read, never printed
    columns: frozenset[str] | None = None  # a Spark scan: the columns it read, already resolved
    location: str | None = None  # a Spark scan: the location it read


class UnresolvedQuery(Exception):
    """A query names the table, but which of its columns it reads cannot be told."""


@dataclass(frozen=True, slots=True)
class ColumnUsage:
    column: str
    last_read: datetime | None
    readers: tuple[str, ...]
    queries: int


@dataclass(frozen=True, slots=True)
class Usage:
    table: str
    columns: dict[str, ColumnUsage]  # only the columns read at least once
    queries: int  # queries in the window that read the table
    unresolved: int  # queries that name the table but could not be resolved
    unresolved_where: tuple[str, ...]  # "FILE:LINE: why", at most UNRESOLVED_SHOWN
    skipped_lines: int  # log lines that are no query record
    since: datetime | None
    until: datetime | None


# ---------------------------------------------------------------------------------------------
# Reading logs


def read_log(path: Path) -> Iterator[LoggedQuery]:
    """Every query of one log, streamed; the kind (JSON lines, Spark event log, CSV) is told from
    its first record. Lines that are no query record are skipped (`skipped_lines` counts them in
    `read_usage`)."""
    for item in _records(path):
        if isinstance(item, LoggedQuery):
            yield item


def _records(path: Path) -> Iterator[LoggedQuery | None]:
    """Each record of the log: a query, or None for a line that is not one. A directory is a
    Spark rolling event log (`eventlog_v2_*`: its `events_N_*` files in order)."""
    if path.is_dir():
        yield from _event_log_dir(path)
        return
    with _open_text(path) as handle:
        first = handle.readline()
        if first.lstrip().startswith("{"):
            yield from _json_lines(chain([first], handle), str(path))
        elif any(k in _header(first) for k in QUERY_KEYS):
            yield from _csv(chain([first], handle), str(path))
        elif first:
            raise UsageError(f"--query-log {path}: neither JSON lines, a Spark event log nor CSV with a "
                             f"query column ({', '.join(QUERY_KEYS)})")


def _event_log_dir(path: Path) -> Iterator[LoggedQuery | None]:
    """A directory of Spark event logs (`spark.eventLog.dir`: one file per application, or one
    `eventlog_v2_*` directory of rolling `events_N_*` parts), or one rolling log's directory."""
    parts = sorted(path.glob("events_*"), key=lambda p: _part_number(p.name))
    logs = parts or sorted(p for p in path.iterdir()
                           if not p.name.startswith(".") and not p.name.endswith(".crc")
                           and (p.is_file() or p.name.startswith("eventlog_v2_")))
    if not logs:
        raise UsageError(f"--query-log {path}: a directory without Spark event logs")
    for log in logs:
        yield from _records(log)


def _part_number(name: str) -> int:
    number = name.split("_")[1] if name.count("_") >= 2 else ""
    return int(number) if number.isdigit() else 0


def _open_text(path: Path) -> TextIO:
    """A log as text; Spark's default event log codec (zstd) is read through pyarrow's stream."""
    suffix = path.suffix.lower()
    if suffix in (".lz4", ".lzf", ".snappy"):
        raise UsageError(f"--query-log {path}: compressed with {suffix[1:]}; set spark.eventLog.compression."
                         "codec=zstd (Spark's default) or read it uncompressed")
    try:
        if suffix in (".zstd", ".zst"):
            import pyarrow as pa  # here: only compressed event logs need it

            return io.TextIOWrapper(pa.input_stream(str(path), compression="zstd"), encoding="utf-8",
                                    errors="replace", newline="")
        return path.open(encoding="utf-8", errors="replace", newline="")
    except OSError as e:
        raise UsageError(f"--query-log {path}: {e.strerror or e}") from None


def _header(line: str) -> set[str]:
    return {c.strip().lower() for c in next(csv.reader(io.StringIO(line)), [])}


def _json_lines(lines: Iterable[str], source: str) -> Iterator[LoggedQuery | None]:
    user = None  # a Spark event log's application user, from its start event
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except ValueError:
            yield None
            continue
        if not isinstance(record, dict):
            yield None
        elif record.get("Event") == APP_START:
            user = record.get("User") if isinstance(record.get("User"), str) else None
            yield None
        elif "Event" in record:
            yield from _spark_event(record, number, source, user)
        else:
            yield _query(record, number, source)


def _csv(handle: Iterable[str], source: str) -> Iterator[LoggedQuery | None]:
    for number, row in enumerate(csv.DictReader(handle), start=2):
        yield _query(row, number, source)


def _pick(record: dict[str, Any], keys: Sequence[str]) -> Any:
    lowered = {str(k).lower(): v for k, v in record.items()}
    return next((lowered[k] for k in keys if lowered.get(k) not in (None, "")), None)


def _query(record: dict[str, Any], number: int, source: str) -> LoggedQuery | None:
    text = _pick(record, QUERY_KEYS)
    if not isinstance(text, str):
        return None
    user = _pick(record, USER_KEYS)
    return LoggedQuery(number, source, _instant(_pick(record, TIME_KEYS)),
                       None if user is None else str(user), text)


def _instant(value: Any) -> datetime | None:
    """A log's time: ISO 8601 text, or seconds (or milliseconds) since the epoch."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        return datetime.fromtimestamp(seconds, UTC)
    try:
        moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _spark_event(record: dict[str, Any], number: int, source: str,
                 user: str | None) -> Iterator[LoggedQuery | None]:
    """A Spark SQL execution's scans: one record per file scan of its physical plan."""
    if record.get("Event") != SQL_START:
        yield None
        return
    when = _instant(record.get("time"))
    scans = list(_scans(record.get("sparkPlanInfo")))
    if not scans:
        yield None
    for location, columns in scans:
        yield LoggedQuery(number, source, when, user, "", columns, location)


def _scans(node: Any) -> Iterator[tuple[str, frozenset[str]]]:
    """(location, columns read) of every file scan in a plan tree (`nodeName` "Scan ...",
    metadata `Location` and `ReadSchema`)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, dict):
            continue
        stack.extend(n.get("children") or ())
        meta = n.get("metadata") or {}
        if str(n.get("nodeName", "")).startswith("Scan") and "ReadSchema" in meta:
            yield str(meta.get("Location", "")), _read_schema_columns(str(meta["ReadSchema"]))


def _read_schema_columns(text: str) -> frozenset[str]:
    """The top-level names of a `ReadSchema` (`struct<a:bigint,s:struct<x:int>>`)."""
    body = text.strip()
    if not body.startswith("struct<") or not body.endswith(">"):
        return frozenset()
    names, depth, start = [], 0, len("struct<")
    for i, ch in enumerate(body[start:-1], start):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            names.append(body[start:i])
            start = i + 1
    names.append(body[start:-1])
    return frozenset(n.split(":", 1)[0].strip("` ") for n in names if ":" in n)


# ---------------------------------------------------------------------------------------------
# Resolving one query


def _matches(t: exp.Table, parts: tuple[str, ...]) -> bool:
    """Does a table reference name the table (`db.t` or `t`, in any case)?"""
    named = tuple(p.lower() for p in (t.catalog, t.db, t.name) if p)
    return bool(named) and (named[-len(parts):] == parts or parts[-len(named):] == named)


def statements_naming(sql: str, table: str, dialect: str = "spark") -> list[tuple[exp.Expr, list[exp.Table]]]:
    """Each statement of `sql` that names `table`, with its references to it; a text that does
    not parse but mentions the table's name is unresolved."""
    parts = tuple(table.lower().split("."))
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except SqlglotError:
        if parts[-1] in sql.lower():
            raise UnresolvedQuery("does not parse") from None
        return []
    named = [(s, [t for t in s.find_all(exp.Table) if _matches(t, parts)]) for s in statements]
    return [(s, refs) for s, refs in named if refs]


def table_scopes(statement: exp.Expr, refs: list[exp.Table], schema: Schema,
                 dialect: str = "spark") -> list[tuple[Scope, frozenset[str]]]:
    """The statement qualified against the table's columns (stars expanded, every column given
    its source), as its scopes that read the table, each with the table's aliases there."""
    types = {f.name: "STRING" for f in schema.fields}
    mapping: dict[str, Any] = {}
    for t in refs:  # the table under every spelling the query uses
        node: dict[str, Any] = mapping
        for part in [p for p in (t.catalog, t.db) if p]:
            node = node.setdefault(part, {})
        node[t.name] = types
    if len({len([p for p in (t.catalog, t.db) if p]) for t in refs}) > 1:
        raise UnresolvedQuery("the table is named with and without its database")  # one depth in sqlglot
    try:
        tree = qualify(statement.copy(), schema=mapping, dialect=dialect, expand_stars=True,
                       validate_qualify_columns=False, quote_identifiers=False, identify=False)
        scopes = list(traverse_scope(tree))
    except SqlglotError as e:
        raise UnresolvedQuery(f"cannot be resolved ({type(e).__name__})") from None
    name = refs[0].name.lower()
    found = [(scope, frozenset(alias for alias, source in scope.sources.items()
                               if isinstance(source, exp.Table) and source.name.lower() == name))
             for scope in scopes]
    return [(scope, ours) for scope, ours in found if ours]


def table_column(column: exp.Column, ours: frozenset[str], names: dict[str, str]) -> str | None:
    """The table's top-level column a reference reads (None: another table's); a name of the
    table's that sqlglot could give no source is unresolved, never guessed."""
    name = names.get(column.name.lower())
    if name is None:
        return None
    if column.table in ours:
        return name
    if not column.table:
        raise UnresolvedQuery("a column of the table cannot be told from another table's")
    return None


def column_reads(sql: str, table: str, schema: Schema, dialect: str = "spark") -> frozenset[str] | None:
    """The top-level columns of `table` one query reads; None when it does not name the table."""
    statements = statements_naming(sql, table, dialect)
    if not statements:
        return None
    names = {f.name.lower(): f.name for f in schema.fields}
    read: set[str] = set()
    for statement, refs in statements:
        for scope, ours in table_scopes(statement, refs, schema, dialect):
            read |= {n for c in scope.columns if (n := table_column(c, ours, names)) is not None}
            if any(not isinstance(star.parent, exp.Count | exp.Column)
                   for star in scope.expression.find_all(exp.Star)):
                read |= set(names.values())  # a star sqlglot could not expand reads everything
    return frozenset(read)


# ---------------------------------------------------------------------------------------------
# Time limits


R = TypeVar("R")


class _Timeout(Exception):
    pass


RETRY_SECONDS = 0.01


def _alarm(signum: int, frame: FrameType | None) -> None:
    # The signal lands in whatever Python code runs now, which may be a finalizer (py4j's, in a
    # session with Spark) that would swallow the exception and print it: raise only inside the
    # work itself (sqlglot's or our code), else try again a moment later.
    signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
    if frame is not None and any(part in frame.f_code.co_filename for part in _WORK):
        raise _Timeout


_WORK = (f"{os.sep}sqlglot{os.sep}", f"{os.sep}schemaguard{os.sep}")


def within(seconds: float, work: Callable[[], R]) -> R:
    """`work()` stopped after `seconds` (by SIGALRM; in the main thread only, else unbounded)."""
    try:
        previous = signal.signal(signal.SIGALRM, _alarm)
    except ValueError:  # not the main thread: signals cannot be used
        return work()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------------------------------------
# Usage over logs


@dataclass(slots=True)
class _Tally:
    last: datetime | None = None
    readers: set[str] = field(default_factory=set)
    queries: int = 0


def read_usage(logs: Sequence[Path], table: str, schema: Schema, since: datetime | None = None,
               until: datetime | None = None, time_limit: float = 2.0, location: str | None = None,
               dialect: str = "spark") -> Usage:
    """Per column of `table`, the queries in the window that read it: last read, readers, count.
    Spark event log scans count when their location is `location` (or below it)."""
    tallies: dict[str, _Tally] = {}
    resolved: OrderedDict[str, frozenset[str] | str | None] = OrderedDict()
    queries = unresolved = skipped = 0
    where: list[str] = []
    for log in logs:
        for q in _records(log):
            if q is None:
                skipped += 1
                continue
            if not _in_window(q.timestamp, since, until):
                continue
            outcome = _scan_reads(q, location, schema) if q.columns is not None else _cached(
                resolved, q.text, partial(_resolve, q.text, table, schema, dialect, time_limit))
            if outcome is None:
                continue
            if isinstance(outcome, str):
                unresolved += 1
                if len(where) < UNRESOLVED_SHOWN:
                    where.append(f"{q.source}:{q.line}: {outcome}")
                continue
            queries += 1
            for column in outcome:
                tally = tallies.setdefault(column, _Tally())
                tally.queries += 1
                if q.user:
                    tally.readers.add(q.user)
                if q.timestamp and (tally.last is None or q.timestamp > tally.last):
                    tally.last = q.timestamp
    columns = {c: ColumnUsage(c, t.last, tuple(sorted(t.readers)), t.queries) for c, t in tallies.items()}
    return Usage(table, columns, queries, unresolved, tuple(where), skipped, since, until)


def _in_window(when: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    """A query without a time counts: it may be recent."""
    return when is None or not ((since and when < since) or (until and when > until))


def _resolve(text: str, table: str, schema: Schema, dialect: str,
             seconds: float) -> frozenset[str] | str | None:
    """The columns one query text reads, None if it does not name the table, or why not known."""
    try:
        return within(seconds, lambda: column_reads(text, table, schema, dialect))
    except UnresolvedQuery as e:
        return str(e)
    except _Timeout:
        return f"not resolved within {seconds:g} s"
    except RecursionError:
        return "nested too deeply to resolve"


def _cached(cache: OrderedDict[str, Any], key: str, compute: Callable[[], Any]) -> Any:
    """A bounded cache of resolutions: logs repeat the same few texts many times."""
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = cache[key] = compute()
    if len(cache) > RESOLVED_CACHE:
        cache.popitem(last=False)
    return value


def _scan_reads(q: LoggedQuery, location: str | None, schema: Schema) -> frozenset[str] | None:
    """A Spark scan's columns, when it read the table's location."""
    if location is None or q.location is None or q.columns is None:
        return None
    root = location.rstrip("/").removeprefix("file:").removeprefix("//")
    if not any(root == loc.rstrip("/") or loc.startswith(root + "/")
               for loc in _locations(q.location)):
        return None
    names = {f.name.lower(): f.name for f in schema.fields}
    return frozenset(names[c.lower()] for c in q.columns if c.lower() in names)


def _locations(text: str) -> list[str]:
    """The paths of a scan's `Location` (`InMemoryFileIndex(1 paths)[file:/a/t]`)."""
    inside = text[text.find("[") + 1:text.rfind("]")] if "[" in text else text
    return [p.strip().removeprefix("file:").removeprefix("//") for p in inside.split(",") if p.strip()]
