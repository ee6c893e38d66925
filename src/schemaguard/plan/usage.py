"""Who still reads which column: query logs resolved with sqlglot, Spark event logs' scans, and
OpenLineage events' column lineage.

A query log is JSON lines or CSV (a timestamp, a user and the query text, under any of the
usual names), a Spark event log (JSON lines of listener events) or OpenLineage run events (JSON
lines with `eventType`, `run` and `job`), told apart by content.
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
names, per file scan, its `Location` and `ReadSchema`: the data columns Spark really read there.
Partition columns are never in `ReadSchema` (Spark reads them from directory names): one counts
when the plan uses it (`PartitionFilters`, any node above the scan), or when no node above the
scan projects, so that every column it outputs reaches the result. A scan with neither location
nor schema (a data source V2 `BatchScan`) cannot be attributed and is unresolved. A log
compressed with any codec Spark writes (`spark.eventLog.compression.codec`: lz4, lzf, snappy,
zstd; the file's suffix names it, as Spark names it) is decoded as it is read.

OpenLineage: each output's `columnLineage` facet names, per output field and for the whole
dataset, the input fields it derives from (direct and indirect transformations alike): those of
the table (at its location, or under its name) are read. An event that reads the table while an
output has no such facet is unresolved. A run's events (START, RUNNING, COMPLETE) are one read.

Logs are streamed: memory is bounded by the outcomes kept per distinct query text (RESOLVED_CACHE,
a long text keyed by its digest), the recent OpenLineage runs, one compressed block and the
per-column aggregates. No literal or query text is in any output, only file and line numbers and
fixed reasons.
"""

from __future__ import annotations

import csv
import ctypes
import hashlib
import io
import json
import os
import re
import sys
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache, partial
from itertools import chain
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any, Generic, TextIO, TypeVar

import sqlglot
from sqlglot import TokenType, exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from schemaguard.errors import UsageError, require_regular
from schemaguard.formats.spark_codecs import codec_of, decoded
from schemaguard.formats.spark_ddl import sql_dialect
from schemaguard.model import Schema

TIME_KEYS = ("timestamp", "ts", "time", "event_time", "start_time")
USER_KEYS = ("user", "user_name", "username", "principal", "executed_by")
QUERY_KEYS = ("query", "query_text", "statement", "sql", "text")
SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
APP_START = "SparkListenerApplicationStart"
LINEAGE_KEYS = frozenset({"eventType", "run", "job"})  # an OpenLineage RunEvent's (spec 2-0-2)
RESOLVED_CACHE = 10_000  # distinct query texts whose outcome is kept
SHORT_TEXT = 1_000  # a text this long or shorter is its own cache key, a longer one its digest
UNRESOLVED_SHOWN = 20
EPOCH_SCALES = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6))  # below: seconds, milliseconds, microseconds
# Nodes of a Spark physical plan that print the columns they keep: a scan's column none of them
# names is dropped there. Any other node passes its child's columns on, or counts as if it did.
PROJECTING = frozenset({"Project", "HashAggregate", "SortAggregate", "ObjectHashAggregate",
                        "TakeOrderedAndProject", "Expand", "Generate"})
TRUNCATED = " more fields"  # how Spark ends a list cut at spark.sql.debug.maxToStringFields


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


# ---------------------------------------------------------------------------------------------
# Reading logs


def read_log(path: Path) -> Iterator[LoggedQuery]:
    """Every query of one log, streamed; the kind (JSON lines, Spark event log, CSV) is told from
    its first line that is not blank. Malformed lines are skipped (`read_usage` counts them)."""
    for item in _records(path):
        if item is not None:
            yield item


def _records(path: Path, live: bool = False) -> Iterator[LoggedQuery | None]:
    """Each query of the log, and None for each malformed line. A directory is a Spark event log
    directory (one file per application, or rolling `eventlog_v2_*` directories). A `live` log
    is one Spark is still writing."""
    if path.is_dir():
        yield from _event_log_dir(path)
        return
    with _open_text(path, live) as handle:
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
    live = any(path.glob("appstatus_*.inprogress"))  # the application runs: its last part grows
    for n, log in enumerate(logs, start=1):
        yield from _records(log, live and n == len(logs))


def _part_number(name: str) -> int:
    number = name.split("_")[1] if name.count("_") >= 2 else ""
    return int(number) if number.isdigit() else 0


def _open_text(path: Path, live: bool = False) -> TextIO:
    """A log as text; a compressed Spark event log is decoded block by block as it is read. A log
    Spark still writes is `live`, or named so (`.inprogress`)."""
    require_regular(path, f"--query-log {path}")
    codec, live = codec_of(path), live or path.name.endswith(".inprogress")
    try:
        if codec is None:
            return path.open(encoding="utf-8-sig", errors="replace", newline="")
        raw = path.open("rb")
    except OSError as e:
        raise UsageError(f"--query-log {path}: {e.strerror or e}") from None
    stream = io.BufferedReader(decoded(raw, codec, f"--query-log {path}", live))
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")


def _header(line: str) -> set[str]:
    return {c.strip().lower() for c in next(csv.reader([line]), [])}


def _json_lines(lines: Iterable[tuple[int, str]], source: str) -> Iterator[LoggedQuery | None]:
    user = application = None  # a Spark event log's application and its user, from its start event
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
        elif record.keys() >= LINEAGE_KEYS:
            yield from _lineage_event(record, number, source)
        elif "Event" not in record:
            yield _query(record, number, source)
        elif record["Event"] == APP_START:
            user = _text(record.get("User"))
            application = _text(record.get("App Name") or record.get("App ID"))
        elif record["Event"] == SQL_START:
            yield from _spark_execution(record, number, source, user, application)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


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


def _spark_execution(record: dict[str, Any], number: int, source: str, user: str | None,
                     application: str | None) -> Iterator[LoggedQuery]:
    """A Spark SQL execution that scans files (a command without scans reads no table)."""
    scans = tuple(_scans(record.get("sparkPlanInfo")))
    if scans:
        yield LoggedQuery(number, source, _instant(record.get("time")), user, "", scans, application)


def _scans(plan: Any) -> Iterator[Scan]:
    """Every file scan of a plan tree: `nodeName` "Scan ..." with metadata `Location` and
    `ReadSchema` (a V1 file source), or "BatchScan ..." (a V2 source: Spark logs no metadata).
    Each carries its own text, whether a node above it projects, and every text that may use a
    partition column of it: the other nodes' and the scans' `PartitionFilters`."""
    nodes: list[tuple[dict[str, Any], bool]] = []  # each node, and whether a node above projects
    stack: list[tuple[Any, bool]] = [(plan, False)]
    while stack:
        node, projected = stack.pop()
        if isinstance(node, dict):
            nodes.append((node, projected))
            below = projected or node.get("nodeName") in PROJECTING
            stack.extend((child, below) for child in node.get("children") or ())
    uses = "\n".join(_uses(n) for n, _ in nodes)
    for node, projected in nodes:
        meta, text = _metadata(node), str(node.get("simpleString", ""))
        if _is_scan(node):
            yield Scan(str(meta.get("Location", "")), str(meta["ReadSchema"]),
                       None if TRUNCATED in text else text, not projected, uses)
        elif str(node.get("nodeName", "")).startswith("BatchScan"):
            yield Scan(None, None)


def _uses(node: dict[str, Any]) -> str:
    """Where a node may use a partition column: a scan's `PartitionFilters`, another node's text."""
    text = _metadata(node).get("PartitionFilters") if _is_scan(node) else node.get("simpleString")
    return str(text or "")


def _metadata(node: dict[str, Any]) -> dict[str, Any]:
    meta = node.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _is_scan(node: dict[str, Any]) -> bool:
    return str(node.get("nodeName", "")).startswith("Scan") and "ReadSchema" in _metadata(node)


def _lineage_event(record: dict[str, Any], number: int, source: str) -> Iterator[LoggedQuery | None]:
    """An OpenLineage RunEvent: its input datasets (and their symlinks' names) and, from its
    outputs' `columnLineage` facets, the fields read of each dataset, direct and indirect alike
    (a filter's or a join's field is read too). Its reader is its job, `namespace/name`. An
    event that names no dataset read is no query; one whose job or run is no object, malformed."""
    job, run = record["job"], record["run"]
    if not isinstance(job, dict) or not isinstance(run, dict):
        yield None
        return
    inputs = {key: _symlinks(d) for d in _objects(record.get("inputs")) if (key := _dataset_key(d))}
    facets = [_facet(o, "columnLineage") for o in _objects(record.get("outputs"))]
    told = bool(facets) and all(isinstance(f, dict) for f in facets)
    fields: dict[tuple[str, str], set[str]] = defaultdict(set)
    for facet in facets:
        for entry in _input_fields(facet):
            if (key := _dataset_key(entry)) and isinstance(entry.get("field"), str):
                fields[key].add(entry["field"])
    datasets = tuple(Dataset(*key, inputs.get(key, ()), frozenset(fields[key]) if told else None)
                     for key in dict.fromkeys([*inputs, *fields]))
    if datasets:
        name, namespace = _text(job.get("name")), _text(job.get("namespace"))
        user = name if namespace is None or name is None else f"{namespace}/{name}"
        yield LoggedQuery(number, source, _instant(record.get("eventTime")), user, "",
                          datasets=datasets, run=_text(run.get("runId")))


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON array (nothing from a value that is no array)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dataset_key(dataset: dict[str, Any]) -> tuple[str, str] | None:
    namespace, name = dataset.get("namespace"), dataset.get("name")
    return (namespace, name) if isinstance(namespace, str) and isinstance(name, str) else None


def _facet(dataset: dict[str, Any], name: str) -> Any:
    facets = dataset.get("facets")
    return facets.get(name) if isinstance(facets, dict) else None


def _symlinks(dataset: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A dataset's other names, from its symlinks facet (a table's name for its location; a
    name without its namespace, as some producers write it, still names the table)."""
    symlinks = _facet(dataset, "symlinks")
    found = _objects(symlinks.get("identifiers")) if isinstance(symlinks, dict) else []
    return tuple((_text(i.get("namespace")) or "", i["name"]) for i in found if _text(i.get("name")))


def _input_fields(facet: Any) -> Iterator[dict[str, Any]]:
    """The input fields a columnLineage facet names: each output field's, and the dataset-wide
    ones (filters, joins, grouping, sorting: `dataset`, facet version 1-2-0)."""
    if not isinstance(facet, dict):
        return
    outputs = facet.get("fields")
    for output in outputs.values() if isinstance(outputs, dict) else ():
        if isinstance(output, dict):
            yield from _objects(output.get("inputFields"))
    yield from _objects(facet.get("dataset"))


# ---------------------------------------------------------------------------------------------
# Resolving one query


def _parts(table: str) -> tuple[str, ...]:
    return tuple(table.lower().split("."))


def _matches(t: exp.Table, parts: tuple[str, ...]) -> bool:
    """Does a table reference name the table (`db.t` or `t`, in any case)?"""
    return _names_table(tuple(p.lower() for p in (t.catalog, t.db, t.name) if p), parts)


def _names_table(named: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Do the lowered parts of a name (`db`, `t`) name the table under any catalog or database?"""
    return bool(named) and (named[-len(parts):] == parts or parts[-len(named):] == named)


def _mentions(sql: str, name: str, dialect: str) -> bool:
    """Does a text name `name` outside its strings and comments? (The tokenizer keeps the rest
    of an opaque command, `OPTIMIZE t ...`, as one string: that string is read again.)"""
    try:
        tokens = sqlglot.tokenize(sql, read=sql_dialect(dialect))
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
        statements = [s for s in sqlglot.parse(sql, read=sql_dialect(dialect)) if s is not None]
    except Exception:  # sqlglot's own faults on odd text too: one query, not the run
        statements = None
    if statements is None:
        if _mentions(sql, parts[-1], dialect):
            raise UnresolvedQuery("does not parse")
        return []
    read = sql_dialect(dialect)
    if any(_opaque(s) and _mentions(s.sql(dialect=read), parts[-1], dialect) for s in statements):
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
        return qualify(tree, schema=mapping, dialect=sql_dialect(dialect), expand_stars=True,
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
IDLE_SECONDS = 1.0  # how often an idle resolver thread looks whether its caller has ended


class _Job(Generic[R]):
    """One piece of work handed to a resolver thread, and what came of it."""

    def __init__(self, work: Callable[[], R]) -> None:
        self.work = work
        self.started = False
        self.result: R | None = None
        self.error: BaseException | None = None
        self.done = threading.Lock()  # a C lock, held until the work has ended: no Python code
        self.done.acquire()           # runs in the caller's thread while it waits


class _Resolver(threading.Thread):
    """A thread of our own that runs the work `within` is given. The timeout is raised into this
    thread (CPython's PyThreadState_SetAsyncExc), never into the caller's, and only while the work
    runs here; one that lands just after the work has ended ends this thread quietly, and
    `within` starts another."""

    def __init__(self, caller: threading.Thread) -> None:
        super().__init__(name="schemaguard-resolver", daemon=True)
        self.caller = caller
        self.jobs: SimpleQueue[_Job[Any]] = SimpleQueue()
        self.current: _Job[Any] | None = None
        self.start()

    def run(self) -> None:
        try:
            self._serve()
        except QueryTimeout:
            return

    def _serve(self) -> None:
        while self.caller.is_alive():  # an idle resolver ends with its caller
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except Empty:
                continue
            job.started, self.current = True, job
            try:
                job.result = job.work()
            except BaseException as e:  # every outcome goes back to the caller, a timeout too
                job.error = e
            finally:
                self.current = None
                job.done.release()


_RESOLVERS = threading.local()


def _resolver() -> _Resolver:
    """The calling thread's resolver, started when it has none (or its last one ended)."""
    resolver: _Resolver | None = getattr(_RESOLVERS, "resolver", None)
    if resolver is None or not resolver.is_alive():
        resolver = _RESOLVERS.resolver = _Resolver(threading.current_thread())
    return resolver


def within(seconds: float, work: Callable[[], R]) -> R:
    """`work()` stopped after `seconds` by QueryTimeout, from any thread (signals reach only the
    main thread). The work runs in the calling thread's resolver; the caller only waits, so no
    timeout is ever raised into it from outside."""
    job = _Job(work)
    resolver = _resolver()
    resolver.jobs.put(job)
    deadline = time.monotonic() + seconds
    while not job.done.acquire(timeout=min(IDLE_SECONDS, max(deadline - time.monotonic(), RETRY_SECONDS))):
        if not resolver.is_alive():  # ended by a late timeout of an earlier piece of work
            if job.started:
                raise QueryTimeout
            resolver = _resolver()
            resolver.jobs.put(job)  # it never ran: hand it to the new one
        elif resolver.current is job and time.monotonic() >= deadline and _in_work(resolver):
            _raise_in(resolver.ident or 0, QueryTimeout)  # again a moment later: it may be swallowed
    if job.error is not None:
        raise job.error
    return job.result  # type: ignore[return-value]  # set when no error was


_WORK = (f"{os.sep}sqlglot{os.sep}", f"{os.sep}schemaguard{os.sep}")


def _in_work(thread: threading.Thread) -> bool:
    """Whether the thread runs the work's own code (sqlglot's or ours) now, not a finalizer or a
    garbage collector's callback (another library's), which would swallow the timeout."""
    frame = sys._current_frames().get(thread.ident or 0)
    return frame is not None and any(part in frame.f_code.co_filename for part in _WORK)


def _raise_in(thread: int, exception: type[BaseException]) -> None:
    """Raise `exception` in another thread at its next bytecode."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(exception))


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


Outcome = frozenset[str] | str | None  # the columns read, why unresolved, or None: not the table


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
        for q in chain.from_iterable(_records(log) for log in logs):
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
            yield q, _scan_reads(q.scans, location, names)
        elif q.datasets:
            yield q, _lineage_reads(q.datasets, _parts(table), location, names)
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


def _scan_reads(scans: tuple[Scan, ...], location: str | None, names: dict[str, str]) -> Outcome:
    """The table's columns one Spark execution's scans read at its location."""
    if location is None:
        return "a Spark scan, but the table's location is not given"
    if any(s.location is None or s.read_schema is None for s in scans):
        return "a Spark data source V2 scan names no location"
    root = _path(location)
    ours = [s for s in scans if s.location and any(_under(p, root) for p in _locations(s.location))]
    return frozenset().union(*(_scan_columns(s, names) for s in ours)) if ours else None


def _scan_columns(scan: Scan, names: dict[str, str]) -> frozenset[str]:
    """The table's columns one scan reads: its `ReadSchema`'s, and the columns of it that Spark
    reads from directory names (partition columns: in its output, never in `ReadSchema`) when
    the plan uses them: all when no node above projects, else those a node above or a
    `PartitionFilters` names (`day#12`; by name, so another source's `day` counts too). A text
    Spark cut short (spark.sql.debug.maxToStringFields) may hide any: then all count."""
    read = _scanned(scan.read_schema or "", names)
    output = scan.output
    rest = [n for n in names.values() if n not in read and (output is None or _attribute(n, output))]
    if scan.flows or TRUNCATED in scan.uses:
        return read | frozenset(rest)
    return read | frozenset(n for n in rest if _attribute(n, scan.uses))


def _attribute(name: str, plan: str) -> bool:
    """Does a plan's text name a column of this name, as Spark prints an attribute (`day#12`)?"""
    return _attribute_pattern(name).search(plan) is not None


@lru_cache(maxsize=1024)
def _attribute_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|[\s\[(,]){re.escape(name)}#\d", re.IGNORECASE | re.MULTILINE)


def _lineage_reads(datasets: tuple[Dataset, ...], parts: tuple[str, ...], location: str | None,
                   names: dict[str, str]) -> Outcome:
    """The table's columns one OpenLineage event reads: the fields its column lineage names of
    the table's datasets, a nested field (`addr.city`) as its top-level column."""
    root = None if location is None else _path(location)
    ours = [d for d in datasets if _is_table(d, parts, root)]
    if not ours:
        return None
    if any(d.fields is None for d in ours):
        return "an OpenLineage event without column lineage"
    return frozenset(c for d in ours for f in d.fields or () if (c := _field_column(f, names)) is not None)


def _is_table(dataset: Dataset, parts: tuple[str, ...], root: str | None) -> bool:
    """Is a dataset the table: at its location (or below), or named as it is (`db.t`), under its
    own name or a symlink's?"""
    for namespace, name in ((dataset.namespace, dataset.name), *dataset.aliases):
        if root is not None and _under(_path(_dataset_path(namespace, name)), root):
            return True
        if "/" not in name and _names_table(tuple(name.lower().split(".")), parts):
            return True
    return False


def _dataset_path(namespace: str, name: str) -> str:
    """A file dataset's location from its OpenLineage name (spec, Naming): a local path under the
    namespace `file` (or `file://host`), else the path or key under a scheme and authority
    (`s3://bucket`, `hdfs://host:port`)."""
    if namespace == "file" or namespace.startswith("file:") or "://" not in namespace:
        return name
    return f"{namespace.rstrip('/')}/{name.lstrip('/')}"


def _field_column(field: str, names: dict[str, str]) -> str | None:
    """The table's top-level column an OpenLineage field is (or is a nested field of)."""
    return names.get(field.lower()) or names.get(field.split(".", 1)[0].lower())


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


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
