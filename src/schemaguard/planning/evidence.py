"""The evidence behind a plan's checks, gathered when the plan is given a table, query logs or
consumer SQL: data proofs through proofs/ (statistics first, then the data), reads of the old
column from query logs (usage/), exhaustive enum consumers (consumers.py), and the files and
rows a changed default reaches (the table's history). A check with no evidence to read stays
`not-run`; a check whose evidence is incomplete is `unknown`, never `proven`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from schemaguard.errors import UsageError
from schemaguard.lake.table import TableRead
from schemaguard.model import EnumType, Schema, fields_of
from schemaguard.paths import top_name
from schemaguard.planning.planner import Check, Judge, PlanRequest, operations
from schemaguard.proofs import ProofResult, proof_of
from schemaguard.proofs.run import SparkFactory, run_proofs
from schemaguard.proofs.stats import Lookup
from schemaguard.rules.changes import OpKind

if TYPE_CHECKING:  # sqlglot loads only when there are queries to read
    from schemaguard.planning.consumers import ConsumerHit
    from schemaguard.planning.usage.records import LoggedQuery
    from schemaguard.planning.usage.tally import Usage


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the plan may read: the table (with Spark for what statistics cannot decide), the
    usage of the table's columns from query logs, and the enum consumers found."""

    new: Schema
    table: TableRead | None = None
    spark: SparkFactory | None = None
    footer_only: bool = False
    usage: Usage | None = None
    consumers: tuple[ConsumerHit, ...] | None = None
    consumers_unparsed: int = 0


def judge(evidence: Evidence) -> Judge:
    """The function that gives each check its status from `evidence`."""

    def one(check: Check) -> Check:
        if check.kind == "no-reads":
            return _no_reads(check, evidence.usage)
        if check.kind == "enum-consumers":
            return _consumers(check, evidence.consumers, evidence.consumers_unparsed)
        if check.kind == "sign-off":
            return replace(check, evidence="a decision for the producers and consumers, not a data check")
        if evidence.table is None:
            return replace(check, evidence="no --table: nothing to prove it on")
        if check.kind == "default-impact":
            return _default_impact(check, evidence.table)
        return _proof(check, evidence)

    return one


def _columns(check: Check) -> list[str]:
    """The columns a check reads: for `agree`, both sides of `A = B`; for `backfilled`, the new
    column (its source may be gone from the table by then)."""
    if check.kind == "agree":
        return [side.strip() for side in check.subject.split("=")]
    return [proof_of(check.kind, check.subject).column]  # type: ignore[arg-type]


def _present(table: TableRead, column: str) -> bool:
    find = Lookup(column)
    return any(find(v.footer) is not None for v in table.versions)


def _proof(check: Check, evidence: Evidence) -> Check:
    table = evidence.table
    assert table is not None
    absent = [c for c in _columns(check) if not _present(table, c)]
    if absent:
        return replace(check, evidence=f"{', '.join(absent)} is not in the table yet")
    proof = proof_of(check.kind, check.subject)  # type: ignore[arg-type]
    if check.kind == "values":
        proof = replace(proof, allowed=_symbols(evidence.new, proof.column))
    [result] = run_proofs(table, [proof], spark=evidence.spark, footer_only=evidence.footer_only,
                          with_values=False)
    return replace(check, status=result.verdict, evidence=_proof_evidence(result))


def _symbols(schema: Schema, column: str) -> tuple[str, ...] | None:
    """The new schema's symbols for an enum column: the values a migration must leave."""
    for path, f in fields_of(schema):
        if path.lower() == column.lower() and isinstance(f.type, EnumType):
            return tuple(f.type.symbols)
    return None


def _proof_evidence(r: ProofResult) -> str:
    where = f" in {r.where()}" if r.partitions else ""
    read = f"{r.rows_read:,} rows read" if r.rows_read else "no data read"
    if r.verdict == "refuted":
        return f"{r.count:,} offending rows{where}; decided by {r.decided_by}, {read}"
    if r.verdict == "unknown":
        return r.why
    return f"decided by {r.decided_by}, {read}"


READERS_NAMED = 10  # readers a no-reads check names; the rest are counted


def _no_reads(check: Check, usage: Usage | None) -> Check:
    if usage is None:
        return replace(check, evidence="no --query-log given")
    top = top_name(check.subject)
    seen = {c.lower(): u for c, u in usage.columns.items()}.get(top.lower())
    if seen is not None:
        when = f", last {seen.last_read.isoformat(timespec='seconds')}" if seen.last_read else ""
        who = sorted({*seen.readers, *seen.applications})
        named = ", ".join(who[:READERS_NAMED]) + (f" and {len(who) - READERS_NAMED} more"
                                                   if len(who) > READERS_NAMED else "")
        return replace(check, status="refuted", evidence=f"{seen.queries:,} queries by "
                       f"{len(seen.readers)} reader(s){when}: {named}")
    if usage.unresolved:
        return replace(check, status="unknown", evidence=f"no resolved read, but {usage.unresolved:,} "
                       f"queries on the table could not be resolved")
    return replace(check, status="proven", evidence=f"no read in {usage.queries:,} queries on the table")


def _consumers(check: Check, hits: Sequence[ConsumerHit] | None, unparsed: int) -> Check:
    if hits is None:
        return replace(check, evidence="no --query-log or --sql given")
    if hits:
        listed = "; ".join(f"{h.consumer} ({h.where}): {h.detail}" for h in hits[:5])
        more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
        return replace(check, status="refuted", evidence=f"{len(hits)} consumer(s) need an unknown "
                       f"branch: {listed}{more}")
    if unparsed:
        return replace(check, status="unknown", evidence=f"none found, but {unparsed} statement(s) "
                       "could not be parsed")
    return replace(check, status="proven", evidence="no exhaustive consumer found")


def _default_impact(check: Check, table: TableRead) -> Check:
    """The files (and rows) written without the column: every one reads the default."""
    find = Lookup(check.subject)
    lacking = [f for f in table.scan.footers if find(f.footer) is None]
    if not lacking:
        return replace(check, status="proven", evidence="every file has the column: no row reads the default")
    rows = sum(f.rows for f in lacking)
    return replace(check, status="refuted", evidence=f"{len(lacking):,} file(s), {rows:,} rows read the "
                   "default: their meaning changes")


def read_evidence(evidence: Evidence, request: PlanRequest, logs: Sequence[Path], sql: Path | None,
                  query_table: str | None = None, now: datetime | None = None) -> Evidence:
    """The usage and consumer evidence the plan's checks need, read once: query logs over the
    no-reads window, consumer SQL, and the table's CHECK constraints. Queries name the table as
    `query_table` says, else as `--table` was given (`db.table`), else by its directory's name."""
    if not logs and sql is None:
        return evidence
    from schemaguard.planning.consumers import constraint_hits, enum_consumers, sql_files
    from schemaguard.planning.usage.logs import read_log
    from schemaguard.planning.usage.tally import read_usage

    name = query_table or _query_name(request.table)
    columns = _both(request.old, request.new)
    since = (now or datetime.now(UTC)) - timedelta(days=request.durations.no_reads_days)
    usage = read_usage(logs, name, columns, since=since, location=_location(evidence.table)) if logs else None
    queries: list[Iterable[LoggedQuery]] = [read_log(p) for p in logs]
    if sql is not None:
        queries.append(sql_files(sql))
    added = [op.path for op in operations(request.old, request.new, request.identity, request.renames)
             if op.kind == OpKind.ENUM_VALUE_ADDED]
    hits: list[ConsumerHit] = []
    unparsed = 0
    for column in dict.fromkeys(added):
        scan = enum_consumers(chain.from_iterable(queries), name, column, columns)
        hits += scan.hits
        unparsed += len(scan.unparsed)
        if evidence.table is not None and evidence.table.delta is not None:
            hits += constraint_hits(_constraints(evidence.table.delta.configuration), column)
    return replace(evidence, usage=usage, consumers=tuple(hits) if added else None,
                   consumers_unparsed=unparsed)


def _query_name(table: str | None) -> str:
    """How queries name the table: `db.table` as given, else a path's last part."""
    if table is None:
        raise UsageError("query logs and consumer SQL (--query-log, --event-log, --sql) need table or "
                         "query_table (--table, --query-table): the table their queries read")
    if "/" not in table and "." in table:
        return table
    return table.rstrip("/").rsplit("/", 1)[-1]


def _location(table: TableRead | None) -> str | None:
    return None if table is None else table.listing.root


def _both(old: Schema, new: Schema) -> Schema:
    """The columns a query may name while a change is under way: the old ones and the new ones."""
    names = {f.name.lower() for f in old.fields}
    return Schema(old.fields + tuple(f for f in new.fields if f.name.lower() not in names))


def _constraints(configuration: Mapping[str, str]) -> dict[str, str]:
    """A Delta table's CHECK constraints: `delta.constraints.NAME` properties."""
    prefix = "delta.constraints."
    return {k[len(prefix):]: v for k, v in configuration.items() if k.startswith(prefix)}
