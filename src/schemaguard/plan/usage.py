"""Who still reads which column: query logs resolved with sqlglot, and Spark event logs' scans.

A query log is JSON lines or CSV (a timestamp, a user and the query text, under any of the
usual names), or a Spark event log (JSON lines of listener events), told apart by content.
Each statement is parsed and qualified against the table's columns (sqlglot's `qualify`: stars
expanded, CTEs, subqueries, joins with USING and aliases followed), and every column a scope
reads from the table counts, its top-level column for a struct field (`addr.city` reads `addr`).
A DELETE, UPDATE or MERGE counts what it reads (its conditions and assigned values), an INSERT
what its query reads; the columns a statement only writes are no reads. Reads are counted
conservatively: a CTE's column counts even when the outer query drops it, and a bare name that
is the table's column is the table's (had another source the same name, Spark would refuse the
query as ambiguous), except in a correlated subquery, where Spark looks inside first. A query
that names the table but cannot be parsed, attributed with certainty, or resolved within its time
limit is `unresolved`: the no-reads check is then unknown, never proven.

Spark event logs: Spark 4.1 writes no SQL text for `spark.sql` (an execution's `description` is
its call site, `details` a JVM stack), but each SQL execution's physical plan (`sparkPlanInfo`)
names, per file scan, its `Location` and `ReadSchema`: the columns Spark really read there. A
scan with neither (a data source V2 `BatchScan`) cannot be attributed and is unresolved.

Logs are streamed: memory is bounded by the outcomes kept per distinct query text (RESOLVED_CACHE,
a long text keyed by its digest) and the per-column aggregates. No literal or query text is in
any output, only file and line numbers and fixed reasons.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import signal
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache, partial
from itertools import chain
from pathlib import Path
from types import FrameType
from typing import Any, Generic, TextIO, TypeVar

import sqlglot
from sqlglot import TokenType, exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from schemaguard.errors import UsageError, require_regular
from schemaguard.model import Schema

TIME_KEYS = ("timestamp", "ts", "time", "event_time", "start_time")
USER_KEYS = ("user", "user_name", "username", "principal", "executed_by")
QUERY_KEYS = ("query", "query_text", "statement", "sql", "text")
SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
APP_START = "SparkListenerApplicationStart"
RESOLVED_CACHE = 10_000  # distinct query texts whose outcome is kept
SHORT_TEXT = 1_000  # a text this long or shorter is its own cache key, a longer one its digest
UNRESOLVED_SHOWN = 20
EPOCH_SCALES = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6))  # below: seconds, milliseconds, microseconds


@dataclass(frozen=True, slots=True)
class Scan:
    """One file scan of a Spark SQL execution: its `Location` and `ReadSchema` metadata (both
    None for a scan that names neither, a data source V2 `BatchScan`)."""

    location: str | None
    read_schema: str | None


@dataclass(frozen=True, slots=True)
class LoggedQuery:
    line: int  # 1-based line (record) number in its log
    source: str  # the log file
    timestamp: datetime | None  # timezone-aware (UTC when the log names no zone)
    user: str | None
    text: str  # SQL text: read, never printed ("" for a Spark execution)
    scans: tuple[Scan, ...] = ()  # a Spark SQL execution's file scans


class UnresolvedQuery(Exception):
    """A query names the table, but which of its columns it reads cannot be told. The message
    is a reason without any literal or text of the query."""


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
    skipped_lines: int  # malformed log lines
    since: datetime | None
    until: datetime | None


# ---------------------------------------------------------------------------------------------
# Reading logs


def read_log(path: Path) -> Iterator[LoggedQuery]:
    """Every query of one log, streamed; the kind (JSON lines, Spark event log, CSV) is told from
    its first line that is not blank. Malformed lines are skipped (`read_usage` counts them)."""
    for item in _records(path):
        if item is not None:
            yield item


def _records(path: Path) -> Iterator[LoggedQuery | None]:
    """Each query of the log, and None for each malformed line. A directory is a Spark event log
    directory (one file per application, or rolling `eventlog_v2_*` directories)."""
    if path.is_dir():
        yield from _event_log_dir(path)
        return
    with _open_text(path) as handle:
        lines = enumerate(handle, start=1)
        first = next(((n, line) for n, line in lines if line.strip()), None)
        if first is None:
            return
        numbered = chain([first], lines)
        if first[1].lstrip().startswith("{"):
            yield from _json_lines(numbered, str(path))
        elif set(QUERY_KEYS) & _header(first[1]):
            yield from _csv(numbered, str(path))
        else:
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
    require_regular(path, f"--query-log {path}")
    try:
        if suffix in (".zstd", ".zst"):
            import pyarrow as pa  # here: only compressed event logs need it

            return io.TextIOWrapper(pa.input_stream(str(path), compression="zstd"), encoding="utf-8-sig",
                                    errors="replace", newline="")
        return path.open(encoding="utf-8-sig", errors="replace", newline="")
    except OSError as e:
        raise UsageError(f"--query-log {path}: {e.strerror or e}") from None


def _header(line: str) -> set[str]:
    return {c.strip().lower() for c in next(csv.reader([line]), [])}


def _json_lines(lines: Iterable[tuple[int, str]], source: str) -> Iterator[LoggedQuery | None]:
    user = None  # a Spark event log's application user, from its start event
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            yield None
            continue
        if not isinstance(record, dict):
            yield None
        elif "Event" not in record:
            yield _query(record, number, source)
        elif record["Event"] == APP_START:
            user = record.get("User") if isinstance(record.get("User"), str) else None
        elif record["Event"] == SQL_START:
            yield from _spark_execution(record, number, source, user)


def _csv(lines: Iterable[tuple[int, str]], source: str) -> Iterator[LoggedQuery | None]:
    """Rows of a CSV log, each at the line it starts on (a quoted query may span lines)."""
    numbered = iter(lines)
    first, header_line = next(numbered)
    reader = csv.reader(chain([header_line], (line for _, line in numbered)))
    header = [c.strip().lower() for c in next(reader)]
    while True:
        start = first + reader.line_num  # the reader has read `line_num` lines from the header on
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error:  # e.g. a field over csv's size limit: this record only
            yield None
            continue
        if row:
            yield _query(dict(zip(header, row, strict=False)), start, source)


def _query(record: dict[str, Any], number: int, source: str) -> LoggedQuery | None:
    times, users, texts = _roles(tuple(record))
    text = _pick(record, texts)
    if not isinstance(text, str):
        return None
    user = _pick(record, users)
    when = _instant(_pick(record, times))
    return LoggedQuery(number, source, when, None if user is None else str(user), text)


@lru_cache(maxsize=256)
def _roles(keys: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """A record's keys that may hold its time, user and query, most likely first, in any case
    (once per set of keys: a log's records share a few)."""
    spelled: dict[str, str] = {}
    for key in keys:
        spelled.setdefault(str(key).lower(), key)
    return tuple(tuple(spelled[n] for n in names if n in spelled)
                 for names in (TIME_KEYS, USER_KEYS, QUERY_KEYS))


def _pick(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of `keys` that holds a value."""
    for key in keys:
        if record[key] not in (None, ""):
            return record[key]
    return None


def _instant(value: Any) -> datetime | None:
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


def _spark_execution(record: dict[str, Any], number: int, source: str,
                     user: str | None) -> Iterator[LoggedQuery]:
    """A Spark SQL execution that scans files (a command without scans reads no table)."""
    scans = tuple(_scans(record.get("sparkPlanInfo")))
    if scans:
        yield LoggedQuery(number, source, _instant(record.get("time")), user, "", scans)


def _scans(node: Any) -> Iterator[Scan]:
    """Every file scan of a plan tree: `nodeName` "Scan ..." with metadata `Location` and
    `ReadSchema` (a V1 file source), or "BatchScan ..." (a V2 source: Spark logs no metadata)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, dict):
            continue
        stack.extend(n.get("children") or ())
        name, meta = str(n.get("nodeName", "")), n.get("metadata") or {}
        if name.startswith("Scan") and "ReadSchema" in meta:
            yield Scan(str(meta.get("Location", "")), str(meta["ReadSchema"]))
        elif name.startswith("BatchScan"):
            yield Scan(None, None)


# ---------------------------------------------------------------------------------------------
# Resolving one query


def _parts(table: str) -> tuple[str, ...]:
    return tuple(table.lower().split("."))


def _matches(t: exp.Table, parts: tuple[str, ...]) -> bool:
    """Does a table reference name the table (`db.t` or `t`, in any case)?"""
    named = tuple(p.lower() for p in (t.catalog, t.db, t.name) if p)
    return bool(named) and (named[-len(parts):] == parts or parts[-len(named):] == named)


def _mentions(sql: str, name: str, dialect: str) -> bool:
    """Does a text name `name` outside its strings and comments? (The tokenizer keeps the rest
    of an opaque command, `OPTIMIZE t ...`, as one string: that string is read again.)"""
    try:
        tokens = sqlglot.tokenize(sql, read=dialect)
    except Exception:  # text beyond the tokenizer: any mention counts
        return name in sql.lower()
    previous = None
    for t in tokens:
        if t.text.lower() == name and not t.token_type.name.endswith("STRING"):
            return True
        if previous == TokenType.COMMAND and _mentions(t.text, name, dialect):
            return True
        previous = t.token_type
    return False


def statements_naming(sql: str, table: str, dialect: str = "spark") -> list[exp.Expr]:
    """Each statement of `sql` that names `table` (a DELETE, UPDATE or MERGE as the query of what
    it reads); a text that does not parse, or that sqlglot keeps as an opaque command, but names
    the table is unresolved."""
    parts = _parts(table)
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except Exception:  # sqlglot's own faults on odd text too: one query, not the run
        statements = None
    if statements is None:
        if _mentions(sql, parts[-1], dialect):
            raise UnresolvedQuery("does not parse")
        return []
    if any(_opaque(s) and _mentions(s.sql(dialect=dialect), parts[-1], dialect) for s in statements):
        raise UnresolvedQuery("a statement sqlglot cannot read")
    queries = [_as_query(s) for s in statements if not isinstance(s, exp.Command)]
    return [q for q in queries if any(_matches(t, parts) for t in q.find_all(exp.Table))]


def _opaque(statement: exp.Expr) -> bool:
    """A statement sqlglot keeps as an opaque command (`OPTIMIZE t ZORDER BY (c)`), other than a
    SHOW, which reads no data."""
    return isinstance(statement, exp.Command) and statement.name.upper() != "SHOW"


def _as_query(statement: exp.Expr) -> exp.Expr:
    """A DELETE, UPDATE or MERGE as the SELECT of what it reads, so that one qualification
    resolves every statement: conditions and assigned values (not the columns assigned)."""
    if isinstance(statement, exp.Delete | exp.Update):
        source = statement.args.get("from_")
        values = [e.expression for e in statement.expressions if isinstance(e, exp.EQ)]
        joins = [exp.Join(this=source.this.copy())] if source else []  # UPDATE ... FROM (not Spark's)
        return _select(values, statement.this, joins, statement.args.get("where"))
    if isinstance(statement, exp.Merge):
        reads: list[exp.Expr] = []
        for when in statement.find_all(exp.When):
            action = when.args.get("then")
            reads += [when.args["condition"]] if when.args.get("condition") else []
            if isinstance(action, exp.Update):
                reads += [e.expression if isinstance(e, exp.EQ) else e for e in action.expressions]
            elif isinstance(action, exp.Insert):
                reads += action.expression.expressions if action.expression else []
                reads += [action.this] if isinstance(action.this, exp.Star) else []
        using = statement.args["using"]
        reads = [exp.Column(this=exp.Star(), table=exp.to_identifier(using.alias_or_name))
                 if isinstance(r, exp.Star) else r for r in reads]  # `SET *`, `INSERT *`: all of the source
        join = exp.Join(this=using.copy(), on=statement.args["on"].copy())
        return _select(reads, statement.this, [join], None)
    return statement


def _select(reads: Sequence[exp.Expr], table: exp.Expr, joins: Sequence[exp.Join],
            where: exp.Expr | None) -> exp.Select:
    return exp.Select(expressions=[r.copy() for r in reads] or [exp.Literal.number(1)],
                      from_=exp.From(this=table.copy()), joins=list(joins),
                      where=where.copy() if where else None)


# Statements whose naming of the table, outside a query, reads none of its data.
_NO_READ = (exp.Insert, exp.Create, exp.Describe, exp.Drop, exp.Alter, exp.TruncateTable)


@dataclass(frozen=True, slots=True)
class TableScope:
    """A scope of a qualified statement that reads the table, under the aliases in `ours`."""

    scope: Scope
    ours: frozenset[str]


def table_scopes(statement: exp.Expr, table: str, schema: Schema,
                 dialect: str = "spark") -> list[TableScope] | None:
    """The statement qualified against the table's columns (stars expanded, every column given
    its source), as its scopes that read the table; None when every mention of the table's name
    is a CTE's. A mention in no scope that is not a write target, DDL or DESCRIBE is unresolved."""
    parts = _parts(table)
    tree = _qualified(statement, parts, schema, dialect)
    try:
        scopes = traverse_scope(tree)
    except Exception as e:  # sqlglot's own faults on odd queries too: one query, not the run
        raise UnresolvedQuery(f"cannot be resolved ({type(e).__name__})") from None
    found = [TableScope(scope, _aliases(scope, parts)) for scope in scopes]
    mentioned = [t for t in tree.find_all(exp.Table) if _matches(t, parts)]
    in_scopes = {id(t) for scope in scopes for t in scope.tables}
    if any(id(t) not in in_scopes for t in mentioned):
        if not isinstance(tree, _NO_READ):
            raise UnresolvedQuery(f"the table in a {tree.key.upper()} statement is not resolved")
        return [f for f in found if f.ours]
    return [f for f in found if f.ours] or None


def _qualified(statement: exp.Expr, parts: tuple[str, ...], schema: Schema, dialect: str) -> exp.Expr:
    """The statement qualified by sqlglot with the table's columns under every spelling it uses."""
    refs = [t for t in statement.find_all(exp.Table) if _matches(t, parts)]
    if len({len([p for p in (t.catalog, t.db) if p]) for t in refs}) > 1:
        raise UnresolvedQuery("the table is named with and without its database")  # one depth in sqlglot
    types = {f.name: "STRING" for f in schema.fields}  # the types do not matter, only the names
    mapping: dict[str, Any] = {}
    for t in refs:
        node: dict[str, Any] = mapping
        for part in [p for p in (t.catalog, t.db) if p]:
            node = node.setdefault(part, {})
        node[t.name] = types
    try:
        tree = _bind_subquery_columns(statement.copy(), parts, {f.name.lower() for f in schema.fields})
        return qualify(tree, schema=mapping, dialect=dialect, expand_stars=True,
                       validate_qualify_columns=False, quote_identifiers=False, identify=False)
    except Exception as e:  # sqlglot's own faults on odd queries too: one query, not the run
        raise UnresolvedQuery(f"cannot be resolved ({type(e).__name__})") from None


def _bind_subquery_columns(tree: exp.Expr, parts: tuple[str, ...], names: set[str]) -> exp.Expr:
    """In a subquery on one other table (`col IN (SELECT code FROM lookup)`), a bare name that
    is none of the table's columns is the other table's (or an outer source's): either way not
    the table's, which is all that matters here. sqlglot, not knowing the lookup's columns,
    would refuse to tell; a bare name that is the table's stays bare, and sqlglot refuses it,
    since Spark reads it from the subquery's table if that has it, else from the outer query."""
    for scope in traverse_scope(tree):
        sources = list(scope.sources.items())
        if scope.is_subquery and len(sources) == 1 and isinstance(sources[0][1], exp.Table) \
                and not _matches(sources[0][1], parts):
            for column in scope.unqualified_columns:
                if column.name.lower() not in names:
                    column.set("table", exp.to_identifier(sources[0][0]))
    return tree


def _aliases(scope: Scope, parts: tuple[str, ...]) -> frozenset[str]:
    """The table's aliases in a scope, and those of its PIVOTs (whose output keeps its columns)."""
    tables = [s for s in scope.sources.values() if isinstance(s, exp.Table) and _matches(s, parts)]
    pivots = [p.alias for t in tables for p in t.args.get("pivots") or () if p.alias]
    return frozenset([a for a, s in scope.sources.items() if any(s is t for t in tables)] + pivots)


def table_column(column: exp.Column, at: TableScope, names: dict[str, str]) -> str | None:
    """The table's top-level column a reference reads (None: another source's); a name of the
    table's that sqlglot gave no source is the table's when the scope reads nothing else, else
    unresolved, never guessed."""
    name = names.get(column.name.lower())
    if name is None:
        return None
    if column.table in at.ours:
        return name
    if not column.table and set(at.scope.sources) <= at.ours:
        return name  # a self join: every source is the table
    if not column.table:
        raise UnresolvedQuery("a column of the table cannot be told from another source's")
    return None


def column_reads(sql: str, table: str, schema: Schema, dialect: str = "spark") -> frozenset[str] | None:
    """The top-level columns of `table` one query reads; None when it does not name the table."""
    names = {f.name.lower(): f.name for f in schema.fields}
    found = [table_scopes(s, table, schema, dialect) for s in statements_naming(sql, table, dialect)]
    if all(f is None for f in found):
        return None
    read: set[str] = set()
    for at in (at for f in found for at in f or ()):
        read |= {n for c in at.scope.columns if (n := table_column(c, at, names)) is not None}
        select = at.scope.expression
        if isinstance(select, exp.Select) and any(isinstance(e, exp.Star) for e in select.expressions):
            read |= set(names.values())  # a star sqlglot could not expand reads everything
    return frozenset(read)


# ---------------------------------------------------------------------------------------------
# Time limits, and outcomes per distinct text


R = TypeVar("R")


class QueryTimeout(BaseException):
    """A query's resolution ran past its time limit (a BaseException, so that no `except
    Exception` on the way, sqlglot's or ours, takes it for a failure of the query)."""


RETRY_SECONDS = 0.01


def _alarm(signum: int, frame: FrameType | None) -> None:
    # The signal lands in whatever Python code runs now, which may be a finalizer (py4j's, in a
    # session with Spark) that would swallow the exception and print it: raise only inside the
    # work itself (sqlglot's or our code), else try again a moment later.
    signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
    if frame is not None and any(part in frame.f_code.co_filename for part in _WORK):
        raise QueryTimeout


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


def text_key(text: str) -> str | bytes:
    """What caches and de-duplication keep of a query text: the text itself when short (cheaper
    than a digest), else its digest, so that memory stays bounded by the number of texts."""
    if len(text) <= SHORT_TEXT:
        return text
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).digest()


class TextCache(Generic[R]):
    """`compute(text)` per distinct query text, the RESOLVED_CACHE most recent kept: logs repeat
    a few texts a million times, and each is resolved once."""

    def __init__(self, compute: Callable[[str], R]) -> None:
        self._compute = compute
        self._outcomes: OrderedDict[str | bytes, R] = OrderedDict()

    def get(self, text: str) -> R:
        key = text_key(text)
        if key in self._outcomes:
            self._outcomes.move_to_end(key)
            return self._outcomes[key]
        outcome = self._outcomes[key] = self._compute(text)
        if len(self._outcomes) > RESOLVED_CACHE:
            self._outcomes.popitem(last=False)
        return outcome


def bounded(seconds: float, work: Callable[[], R]) -> R:
    """`work()` within its time limit; a resolution that runs over it, or nests too deeply for
    Python's stack, is unresolved."""
    try:
        return within(seconds, work)
    except QueryTimeout:
        raise UnresolvedQuery(f"not resolved within {seconds:g} s") from None
    except RecursionError:
        raise UnresolvedQuery("nested too deeply to resolve") from None


# ---------------------------------------------------------------------------------------------
# Usage over logs


@dataclass(slots=True)
class _Tally:
    last: datetime | None = None
    readers: set[str] = field(default_factory=set)
    queries: int = 0

    def add(self, q: LoggedQuery) -> None:
        self.queries += 1
        if q.user:
            self.readers.add(q.user)
        if q.timestamp and (self.last is None or q.timestamp > self.last):
            self.last = q.timestamp


Outcome = frozenset[str] | str | None  # the columns read, why unresolved, or None: not the table


def read_usage(logs: Sequence[Path], table: str, schema: Schema, since: datetime | None = None,
               until: datetime | None = None, time_limit: float = 2.0, location: str | None = None,
               dialect: str = "spark") -> Usage:
    """Per column of `table`, the queries in the window that read it: last read, readers, count.
    Spark event log scans count when they read `location` (or below it). A query without a time
    counts as in the window; naive `since`/`until` are UTC."""
    since, until = _aware(since), _aware(until)
    names = {f.name.lower(): f.name for f in schema.fields}
    tallies: defaultdict[str, _Tally] = defaultdict(_Tally)
    cache = TextCache(partial(_resolve, table=table, schema=schema, dialect=dialect, seconds=time_limit))
    queries = unresolved = skipped = 0
    where: list[str] = []
    for log in logs:
        for q in _records(log):
            if q is None:
                skipped += 1
                continue
            if not _in_window(q.timestamp, since, until):
                continue
            outcome = _scan_reads(q.scans, location, names) if q.scans else cache.get(q.text)
            if isinstance(outcome, str):
                unresolved += 1
                if len(where) < UNRESOLVED_SHOWN:
                    where.append(f"{q.source}:{q.line}: {outcome}")
            elif outcome is not None:
                queries += 1
                for column in outcome:
                    tallies[column].add(q)
    columns = {c: ColumnUsage(c, t.last, tuple(sorted(t.readers)), t.queries) for c, t in tallies.items()}
    return Usage(table, columns, queries, unresolved, tuple(where), skipped, since, until)


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


def _scan_reads(scans: tuple[Scan, ...], location: str | None, names: dict[str, str]) -> Outcome:
    """The table's columns one Spark execution's scans read at its location."""
    if location is None:
        return "a Spark scan, but the table's location is not given"
    if any(s.location is None or s.read_schema is None for s in scans):
        return "a Spark data source V2 scan names no location"
    root = _path(location)
    ours = [s.read_schema for s in scans if s.location and s.read_schema is not None
            and any(p == root or p.startswith(root + "/") for p in _locations(s.location))]
    return frozenset().union(*(_scanned(r, names) for r in ours)) if ours else None


def _path(location: str) -> str:
    """A location without its `file:` scheme, as Spark's scans print local paths."""
    return location.strip().rstrip("/").removeprefix("file:").removeprefix("//")


def _locations(text: str) -> list[str]:
    """The root paths of a scan's `Location` (`InMemoryFileIndex(1 paths)[file:/a/t, ...]`);
    Spark lists them in its plan metadata only in this form."""
    inside = text[text.find("[") + 1:text.rfind("]")] if "[" in text else text
    return [_path(p) for p in inside.split(", ") if p.strip() and p.strip() != "..."]


def _scanned(read_schema: str, names: dict[str, str]) -> frozenset[str]:
    """The table's columns in a `ReadSchema` (`struct<a:bigint,s:struct<x:int>>`, Spark's catalog
    string: names unquoted, so a name may hold any character). Each of the table's names is read
    when a top-level field starts with it and a colon; a comma inside a name only adds starts,
    so a read is never missed (at worst a read is counted twice as conservatively)."""
    text = read_schema.strip()
    body = text[len("struct<"):-1] if text.startswith("struct<") and text.endswith(">") else ""
    starts, depth = [0], 0
    for i, ch in enumerate(body):
        depth += (ch in "<(") - (ch in ">)")
        if ch == "," and depth == 0:
            starts.append(i + 1)
    lowered = body.lower()
    return frozenset(name for low, name in names.items()
                     if body and any(lowered.startswith(f"{low}:", s) for s in starts))
