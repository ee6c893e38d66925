"""Each proof over a scope of a table: statistics decide every file they can; the files they leave
`unknown` are read (unless `footer_only`, or no Spark is given) and decided by the data.

Per file a proof is `ok`, `bad` (with offending rows), `absent` (no such column: its rows read as
null) or `unknown`. A proof is refuted when any file is bad (for `not-null` and `backfilled`,
also when any file lacks the column), unknown when any file stays unknown, proven otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from difflib import get_close_matches
from statistics import median
from typing import TYPE_CHECKING

from schemaguard.errors import UsageError
from schemaguard.formats.notation import parse_primitive
from schemaguard.formats.parquet import FileFooter
from schemaguard.lake.discover import parse_partition, partition_dir, spark_order_key
from schemaguard.lake.history import date_partition_column, files_per_day, partition_day
from schemaguard.lake.table import TableRead
from schemaguard.model import DataType, fields_of
from schemaguard.proofs import PARTITIONS, SAMPLE, DecidedBy, Proof, ProofResult, Verdict
from schemaguard.proofs.drift import THRESHOLD, largest_step
from schemaguard.proofs.gx_spark import (
    DataProofError,
    PassResult,
    Question,
    condition,
    extremes_on_data,
    named_columns,
    one_pass,
    prove_on_data,
    values_on_data,
)
from schemaguard.proofs.stats import (
    FileFacts,
    Lookup,
    backfill_facts,
    log_nulls,
    magnitude,
    null_facts,
    range_facts,
    range_of,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True, slots=True)
class Scope:
    """Which files a proof covers: partition values (`K=V`, all must hold) and a range of the
    date partition (inclusive ISO dates)."""

    partitions: tuple[tuple[str, str], ...] = ()
    since: str | None = None
    until: str | None = None


def in_scope(table: TableRead, scope: Scope) -> tuple[list[FileFooter], tuple[str, ...]]:
    """The read files in scope, in Spark's order, and the unreadable ones in scope."""
    date_col = date_partition_column(table.scan.footers.partition_values())
    if (scope.since or scope.until) and date_col is None:
        raise UsageError(f"{table.location}: since/until (--since/--until) need a date partition column; "
                         "this table has none")
    since, until = (partition_day(v) if v else None for v in (scope.since, scope.until))
    if (scope.since and since is None) or (scope.until and until is None):
        raise UsageError("since/until (--since/--until) take ISO dates (2024-01-31)")
    wanted = {k.lower(): v for k, v in scope.partitions}

    def kept(partition: tuple[tuple[str, str | None], ...]) -> bool:
        values = {k.lower(): v for k, v in partition}
        if any(values.get(k) != v for k, v in wanted.items()):
            return False
        if date_col is not None and (since or until):
            day = partition_day(dict(partition).get(date_col))
            return day is not None and not (since and day < since) and not (until and day > until)
        return True

    files = sorted((f for f in table.scan.footers if kept(f.partition)), key=lambda f: spark_order_key(f.rel))
    bad = {u.rel for u in table.scan.unreadable}
    unreadable = tuple(d.rel for d in table.listing.files if d.rel in bad and kept(d.partition))
    return files, unreadable


SparkFactory = Callable[[], "SparkSession"]


def run_proofs(table: TableRead, proofs: Sequence[Proof], scope: Scope = Scope(),
               spark: SparkFactory | None = None, footer_only: bool = False, keys: Sequence[str] = (),
               with_values: bool = True, sensitive: Sequence[str] = ()) -> list[ProofResult]:
    """Every proof's verdict over the files in scope; `spark` is called (Spark started) only when
    some file needs its data read. Values appear in samples only `with_values`, and never for a
    proof that names a `sensitive` column."""
    check_columns(table, proofs)
    files, unreadable = in_scope(table, scope)
    if not files:
        raise UsageError(f"{table.location}: no readable data file in the scope given")
    hidden = [c.lower() for c in sensitive]
    date_col = date_partition_column(table.scan.footers.partition_values())
    asked = [_ask(table, p, files) for p in proofs]
    answers = _data_pass(table, asked, spark) if spark is not None and not footer_only else None
    return [_placed(_one(table, a, files, unreadable, spark, footer_only, keys,
                         with_values and not any(c in a.proof.column.lower() for c in hidden),
                         answers.get(i) if answers is not None else None), date_col)
            for i, a in enumerate(asked)]


@dataclass(frozen=True, slots=True)
class _Asked:
    """A proof with what statistics said of each file (None: a drift, decided by magnitudes) and
    the files only the data can decide (stale-checksum files left out: Spark cannot read them)."""

    proof: Proof
    lookup: Lookup
    target: DataType | None
    facts: list[FileFacts] | None
    needs_data: list[FileFooter]
    magnitudes: dict[str, Decimal | None] | None = None  # a drift's: each file's, from statistics


def _ask(table: TableRead, proof: Proof, files: list[FileFooter]) -> _Asked:
    lookup, target = Lookup(proof.column), _target(proof)
    stale = {s.rel for s in table.listing.stale_checksums}
    if proof.kind == "unit-drift":
        magnitudes = {f.rel: magnitude(f, lookup(f.footer)) for f in files}
        unknown = [f for f in files if f.rel not in stale and magnitudes[f.rel] is None
                   and lookup(f.footer) is not None]
        return _Asked(proof, lookup, target, None, unknown, magnitudes)
    facts = _facts(table, proof, files, lookup, target)
    unknown = [f for f, x in zip(files, facts, strict=True) if x.state == "unknown" and f.rel not in stale]
    return _Asked(proof, lookup, target, facts, unknown)


@dataclass(frozen=True, slots=True)
class _Answer:
    """The data pass's answer for one proof: its files with offending rows, or its extremes."""

    bad: dict[str, int]
    extremes: dict[str, tuple[object, object]]


def _data_pass(table: TableRead, asked: list[_Asked], spark: SparkFactory) -> dict[int, _Answer] | None:
    """Every proof that needs the data, answered by one read of the union of their files
    (`gx_spark.one_pass`). None when no proof needs the data, or when the pass fails: each
    proof is then read on its own, and its own failure is reported with it."""
    wanted = [i for i, a in enumerate(asked) if a.needs_data]
    if not wanted:
        return None
    files = list({f.rel: f for i in wanted for f in asked[i].needs_data}.values())
    named = [named_columns(asked[i].proof) for i in wanted]
    columns = None if any(not n for n in named) else list(dict.fromkeys(c for n in named for c in n))
    questions = [_question(asked[i]) for i in wanted]
    try:
        result = one_pass(spark(), table.listing.root, files, columns, questions)
    except DataProofError:
        return None
    return {i: _answer(result, k, asked[i]) for k, i in enumerate(wanted)}


def _question(a: _Asked) -> Question:
    if a.proof.kind == "unit-drift":
        return Question(None, a.proof.column)
    source = a.lookup(a.needs_data[0].footer)
    return Question(condition(a.proof, named_columns(a.proof), source.type if source else None, a.target))


def _answer(result: PassResult, k: int, a: _Asked) -> _Answer:
    """The pass's result for question `k`, kept to the proof's own files."""
    mine = {f.rel for f in a.needs_data}
    return _Answer({rel: n for rel, n in result.bad.get(k, {}).items() if rel in mine},
                   {rel: x for rel, x in result.extremes.get(k, {}).items() if rel in mine})


def check_columns(table: TableRead, proofs: Sequence[Proof]) -> None:
    """Refuse a proof naming a column the table has in no version and not in its current schema
    (a typo would otherwise read as a column missing from every file: "refuted"), with the
    nearest name it does have. Before any data is read, so before Spark starts."""
    schemas = [v.footer.schema for v in table.versions] + [s for s in [table.current()[1]] if s is not None]
    known = {path.lower(): path for schema in schemas for path, _ in fields_of(schema)}
    for proof in proofs:
        for column in named_columns(proof):
            if column.lower() not in known:
                near = get_close_matches(column.lower(), list(known), n=1)
                hint = f"; did you mean {known[near[0]]}?" if near else ""
                raise UsageError(f"{proof.label}: no column {column} in {table.location}{hint}")


def _placed(result: ProofResult, date_col: str | None) -> ProofResult:
    """The result with the days of the date partition where it is refuted (for the timeline)."""
    if date_col is None or not result.partitions:
        return result
    partitions = (tuple(kv for part in p.split("/") if (kv := parse_partition(part)) is not None)
                  for p in result.partitions)
    return replace(result, days=tuple(day for day, _ in files_per_day(partitions, date_col)))


def _one(table: TableRead, asked: _Asked, files: list[FileFooter], unreadable: tuple[str, ...],
         spark: SparkFactory | None, footer_only: bool, keys: Sequence[str],
         with_values: bool, answer: _Answer | None) -> ProofResult:
    proof, lookup, target, facts = asked.proof, asked.lookup, asked.target, asked.facts
    if facts is None:
        return _drift(table, asked, files, unreadable, spark, footer_only, answer)
    bad = {f.rel: x for f, x in zip(files, facts, strict=True) if x.state == "bad"}
    absent = [f.rel for f, x in zip(files, facts, strict=True) if x.state == "absent"]
    unknown = [f for f, x in zip(files, facts, strict=True) if x.state == "unknown"]
    sources = {x.source for x in facts if x.state != "unknown"}
    decided_by: DecidedBy = "footer" if sources <= {"footer"} and sources else next(
        (s for s in ("manifest", "log") if s in sources), "none")
    count = sum(x.bad for x in bad.values()) + sum(f.rows for f, x in zip(files, facts, strict=True)
                                                   if x.state == "absent" and _absent_refutes(proof))
    rows_read = bytes_read = 0
    sample: tuple[dict[str, object], ...] = ()
    why: list[str] = []
    stale = {s.rel for s in table.listing.stale_checksums}
    unread = [f for f in unknown if f.rel in stale]  # Spark's checksum layer fails their reads
    if unread:
        why.append(f"{len(unread)} file(s) with a stale .crc sidecar left out of the data pass: Spark "
                   "cannot read their rows")
    if unknown and not footer_only and spark is not None and len(unread) < len(unknown):
        read_now = asked.needs_data
        source = lookup(read_now[0].footer)
        columns, kind = named_columns(proof), source.type if source else None
        try:
            if answer is None:  # no pass (or it failed): this proof reads its files alone
                outcome = prove_on_data(spark(), table.listing.root, proof, read_now, columns, keys,
                                        with_values, kind, target)
                found, sample = outcome.bad_files, outcome.sample
            else:
                found, sample = answer.bad, ()
                if found and proof.kind != "values":  # a sample of its rows, from those files alone
                    holding = [f for f in read_now if f.rel in found]
                    sample = prove_on_data(spark(), table.listing.root, proof, holding, columns, keys,
                                           with_values, kind, target).sample
        except DataProofError as e:
            why.append(f"{len(read_now)} file(s) undecided: the data could not be checked: {e}")
        else:
            for rel, n in found.items():
                bad[rel] = FileFacts("bad", n, "data")
            count += sum(found.values())
            rows_read, bytes_read = sum(f.rows for f in read_now), sum(f.size for f in read_now)
            decided_by = "data"
            if proof.kind == "values":
                root = table.listing.root
                seen = values_on_data(spark(), root, read_now, proof.column) if with_values else {}
                sample = _observed(table, files, seen, proof.allowed) if with_values else ()
            unknown = unread
    elif unknown:
        reasons = sorted({x.why for x in facts if x.state == "unknown"})
        why.append(_undecided(len(unknown), f"undecided by statistics ({'; '.join(reasons)})", footer_only))
    if proof.predicate is not None:
        why.append(f"holds when {proof.predicate}")
    refuted = bool(bad) or (bool(absent) and _absent_refutes(proof))
    verdict: Verdict = "refuted" if refuted else "unknown" if unknown or unreadable else "proven"
    if absent and _absent_refutes(proof):
        why.append(f"{len(absent)} file(s) lack the column: their rows read as null")
    if proof.kind == "fits" and bad and decided_by != "data":
        why.append("statistics show values out of range in these files (the count is of files; the "
                   "rows need the data)")
    if unreadable:
        why.append(f"{len(unreadable)} unreadable file(s) in scope: nothing is known of their rows")
    part = {f.rel: partition_dir(f.partition) for f in files}
    where = sorted({part.get(rel, "") for rel in bad} | (
        {part[rel] for rel in absent} if _absent_refutes(proof) else set()))
    where = [p for p in where if p]
    return ProofResult(
        proof, verdict, decided_by, count, tuple(where[:PARTITIONS]),
        tuple(sorted(bad, key=spark_order_key)[:SAMPLE]),
        tuple([f.rel for f in unknown][:SAMPLE] + list(unreadable[:SAMPLE])),
        tuple(absent[:SAMPLE]), rows_read, bytes_read, sample, "; ".join(why), len(where))


def _observed(table: TableRead, files: list[FileFooter], per_file: dict[str, dict[str, int]],
              allowed: tuple[str, ...] | None) -> tuple[dict[str, object], ...]:
    """The observed value set: each value with its rows, the partition it first appears in (in
    the table's order) and whether the allowed set holds it; values outside the set first."""
    first: dict[str, str] = {}
    rows: dict[str, int] = {}
    for name, members in _groups(table, files):
        for f in members:
            for value, n in per_file.get(f.rel, {}).items():
                first.setdefault(value, name)
                rows[value] = rows.get(value, 0) + n
    order = {v: i for i, v in enumerate(first)}
    listed = sorted(first, key=lambda v: (allowed is None or v in allowed, order[v]))
    return tuple({"value": v, "rows": rows[v], "first_partition": first[v],
                  **({"allowed": v in allowed} if allowed is not None else {})} for v in listed[:SAMPLE])


def _undecided(files: int, reason: str, footer_only: bool) -> str:
    return f"{files} file(s) {reason}" + ("; --footer-only: no data read" if footer_only
                                           else "; no Spark to read the data")


def _absent_refutes(proof: Proof) -> bool:
    """A file without the column reads as null: that breaks not-null and backfilled (from a
    column, only where that one holds a value: its facts count those rows)."""
    return proof.kind == "not-null" or (proof.kind == "backfilled" and proof.source is None)


def _target(proof: Proof) -> DataType | None:
    if proof.kind != "fits":
        return None
    if not proof.target:
        raise UsageError(f"fits {proof.column}: give the narrower type as COL:TYPE (int32, float, "
                         "decimal(10,2))")
    target = parse_primitive(proof.target, f"fits {proof.column}")
    if range_of(target) is None:
        raise UsageError(f"fits {proof.column}:{proof.target}: a narrower integer, float or decimal type "
                         "is needed")
    return target


def _facts(table: TableRead, proof: Proof, files: list[FileFooter], lookup: Lookup,
           target: DataType | None) -> list[FileFacts]:
    """Each file's answer from statistics alone."""
    if proof.kind == "backfilled" and proof.source is not None:
        fallbacks, old = log_nulls(table), Lookup(proof.source)
        return [backfill_facts(f, lookup(f.footer), old(f.footer), fallbacks) for f in files]
    if proof.kind in ("not-null", "backfilled"):
        fallbacks = log_nulls(table)
        return [null_facts(f, lookup(f.footer), fallbacks) for f in files]
    if proof.kind == "fits":
        assert target is not None
        return [range_facts(f, lookup(f.footer), target) for f in files]
    # values and agree: statistics cannot decide them
    return [FileFacts("unknown", why="only the data can tell") for _ in files]


def _groups(table: TableRead, files: list[FileFooter]) -> list[tuple[str, list[FileFooter]]]:
    """The table's order for drift: partition directories by their date (else as Spark lists
    them), or, unpartitioned, each file by its time (Delta and Iceberg: commit time)."""
    if not any(f.partition for f in files):
        return [(f.rel, [f]) for f in sorted(files, key=lambda f: (f.mtime or 0.0, spark_order_key(f.rel)))]
    date_col = date_partition_column(list(dict.fromkeys(f.partition for f in files)))
    groups: dict[str, list[FileFooter]] = {}
    for f in files:
        groups.setdefault(partition_dir(f.partition), []).append(f)

    def key(item: tuple[str, list[FileFooter]]) -> tuple[object, ...]:
        first = item[1][0]
        day = partition_day(dict(first.partition).get(date_col)) if date_col else None
        return (day.isoformat() if day else "", spark_order_key(item[0]))

    return sorted(groups.items(), key=key)


def _drift(table: TableRead, asked: _Asked, files: list[FileFooter], unreadable: tuple[str, ...],
           spark: SparkFactory | None, footer_only: bool, answer: _Answer | None) -> ProofResult:
    proof, lookup = asked.proof, asked.lookup
    groups = _groups(table, files)
    per_file = dict(asked.magnitudes or {})
    unknown = [f for f in files if per_file[f.rel] is None and lookup(f.footer) is not None]
    rows_read = bytes_read = 0
    decided_by: DecidedBy = "footer"
    read_now = asked.needs_data
    if read_now and spark is not None and not footer_only:
        if answer is not None:
            found, rows_read, bytes_read = (answer.extremes, sum(f.rows for f in read_now),
                                            sum(f.size for f in read_now))
        else:
            found, rows_read, bytes_read = extremes_on_data(spark(), table.listing.root, read_now,
                                                            proof.column)
        for f in read_now:  # a file without rows has no extremes: nothing to compare
            low, high = found.get(f.rel, (None, None))
            per_file[f.rel] = max((Decimal(str(v)).copy_abs() for v in (low, high) if v is not None),
                                  default=Decimal(0))
        decided_by = "data"
        unknown = [f for f in unknown if per_file[f.rel] is None]  # stale checksums: never read
    if unknown:
        return ProofResult(proof, "unknown", decided_by, files_unknown=tuple(f.rel for f in unknown[:SAMPLE]),
                           why=_undecided(len(unknown), "without exact bounds", footer_only))
    names = [name for name, _ in groups]
    sizes = [max((per_file[f.rel] or Decimal(0) for f in members), default=Decimal(0))
             for _, members in groups]
    step = largest_step(sizes)
    if step is None or step.ratio < THRESHOLD:
        why = "fewer than two groups with values" if step is None else f"largest step {step.ratio:.1f}x"
        return ProofResult(proof, "unknown" if unreadable else "proven", decided_by, rows_read=rows_read,
                           bytes_read=bytes_read, files_unknown=unreadable[:SAMPLE], why=why)
    direction = "drops" if median(sizes[step.at:]) < median(sizes[:step.at]) else "rises"
    return ProofResult(
        proof, "refuted", decided_by, len(names) - step.at, (names[step.at],), rows_read=rows_read,
        bytes_read=bytes_read, sample=({"at": names[step.at], "ratio": round(step.ratio, 1),
                                        "before": str(sizes[step.at - 1]), "after": str(sizes[step.at])},),
        why=f"the magnitude of {proof.column} {direction} about {step.ratio:.0f}x at {names[step.at]} "
            f"(largest absolute value per group, {len(names)} groups in order)")
