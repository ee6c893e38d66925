"""Consumers that match an enum column's values exhaustively, and so mishandle a value added to it.

In queries (a query log, or `.sql` files), each statement that reads the table is qualified as
usage/resolve.py qualifies it (its functions, usage/limits.py's time limit), and three patterns on
the column count:
- `case-without-else`: a CASE that tests the column (`CASE col WHEN ...`, or `CASE WHEN col = ...`
  / `col IN (...)`) and has no ELSE: a new value falls through to NULL;
- `in-list`: `col IN (literals)` or `col IN (subquery)` as a condition that drops rows (in a
  WHERE, HAVING or QUALIFY, or a join condition that drops the table's rows, see below): a new
  value is filtered out. A projected `col IN (...)` is a computed flag, not a filter, and
  `col NOT IN (...)` lets a new value through: neither counts;
- `inner-join`: an equality of the column with another source's column (a lookup table) in an
  INNER or SEMI join, an outer join with the table on its inner side, or a WHERE (an implicit
  inner join): rows with a value the lookup lacks disappear. An outer join's kept side keeps them.
Delta CHECK constraints (`delta.constraints.NAME`) that list the column's values reject a new
value on write (`check-constraint`). A nested column (`addr.kind`) is matched on its whole path;
one inside a list or map (`items[].kind`) on its top-level column, conservatively. Not found:
matches in correlated subqueries (`EXISTS (... WHERE l.code = t.col)`) and in code outside SQL.

Hits name the consumer and where, never a literal value; one hit per consumer, kind and distinct
statement (a log repeats a query many times), at its first line. A statement on the table that
cannot be read is `unparsed` (one FILE:LINE per distinct text): the check is then unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import sqlglot
from sqlglot import Token, TokenType, exp

from schemaguard.errors import UsageError, require_regular
from schemaguard.formats.spark_ddl import spark_sql
from schemaguard.model import Schema
from schemaguard.paths import parts, top_name
from schemaguard.planning.usage.limits import TextCache, bounded, text_key
from schemaguard.planning.usage.records import LoggedQuery, UnresolvedQuery
from schemaguard.planning.usage.resolve import TableScope, statements_naming, table_column, table_scopes

HitKind = Literal["case-without-else", "in-list", "inner-join", "check-constraint"]


@dataclass(frozen=True, slots=True)
class ConsumerHit:
    kind: HitKind
    consumer: str  # the log's user, the .sql file, or "constraint NAME"
    where: str  # FILE:LINE
    detail: str  # what matches, without values


@dataclass(frozen=True, slots=True)
class ConsumerScan:
    hits: tuple[ConsumerHit, ...]
    unparsed: tuple[str, ...]  # FILE:LINE of each distinct statement on the table that could not be read


def sql_files(directory: Path) -> Iterator[LoggedQuery]:
    """Every statement of every `.sql` file below `directory`, at the line it starts on."""
    if not directory.is_dir():
        raise UsageError(f"consumer SQL {directory} (--sql): not a directory of .sql files")
    for path in sorted(directory.rglob("*.sql")):
        require_regular(path, f"--sql {path}")
        try:
            text = path.read_text(encoding="utf-8-sig", errors="replace")
        except OSError as e:
            raise UsageError(f"consumer SQL {path} (--sql): {e.strerror or e}") from None
        for line, statement in _statements(text):
            yield LoggedQuery(line, str(path), None, None, statement)


def _statements(text: str) -> list[tuple[int, str]]:
    """The statements of a file, each with the line of its first token, split where the
    tokenizer sees `;` (never inside a string or a comment). A file beyond the tokenizer is one
    statement, which then does not parse."""
    try:
        tokens = sqlglot.tokenize(text, read=spark_sql())
    except Exception:  # sqlglot's own faults on odd text too: reported as unparsed, not fatal
        return [(1, text)] if text.strip() else []
    groups: list[list[Token]] = [[]]
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(token)
    return [(g[0].line, text[g[0].start:g[-1].end + 1]) for g in groups if g]


Found = tuple[tuple[HitKind, str], ...] | str  # the matches of one text, or why it was not read


def enum_consumers(queries: Iterable[LoggedQuery], table: str, column: str, schema: Schema,
                   dialect: str = "spark", time_limit: float = 2.0) -> ConsumerScan:
    """Every exhaustive match on `column` (a path: `status`, `addr.kind`) of `table` in the
    queries; each distinct text is read once, within `time_limit` seconds."""
    hits: dict[tuple[HitKind, str, str, str | bytes], ConsumerHit] = {}
    unparsed: dict[str | bytes, str] = {}
    cache = TextCache(partial(_found, table=table, column=column, schema=schema, dialect=dialect,
                              seconds=time_limit))
    for q in queries:
        if q.scans:  # a Spark execution: no query text to read
            continue
        found = cache.get(q.text)
        where, key = f"{q.source}:{q.line}", text_key(q.text)
        if isinstance(found, str):
            unparsed.setdefault(key, where)
            continue
        for kind, detail in found:
            hit = ConsumerHit(kind, q.user or q.source, where, detail)
            hits.setdefault((kind, hit.consumer, detail, key), hit)
    return ConsumerScan(tuple(hits.values()), tuple(unparsed.values()))


def _found(text: str, table: str, column: str, schema: Schema, dialect: str, seconds: float) -> Found:
    try:
        return bounded(seconds, partial(_matches_in, text, table, column, schema, dialect))
    except UnresolvedQuery as e:
        return str(e)


def _matches_in(text: str, table: str, column: str, schema: Schema,
                dialect: str) -> tuple[tuple[HitKind, str], ...]:
    names = {f.name.lower(): f.name for f in schema.fields}
    found: dict[tuple[HitKind, str], None] = {}
    for statement in statements_naming(text, table, dialect):
        for at in table_scopes(statement, table, schema, dialect) or ():
            test = partial(_on_column, at=at, names=names, path=_path(column))
            found.update(dict.fromkeys(_matches(at, test)))
    return tuple(found)


def _path(column: str) -> tuple[str, ...]:
    """A column path's names to match, lower case (`` `a.b` `` is one name, the column's); inside
    a list or map only its top-level column."""
    try:
        names = parts(column)
    except ValueError:  # through a list element or a map slot
        names = (top_name(column),)
    return tuple(n.lower() for n in names)


def _on_column(e: exp.Expr, at: TableScope, names: dict[str, str], path: tuple[str, ...]) -> bool:
    """Is an expression a reference to the column's path (`s.addr.kind`: the table's column
    `addr`, then its field `kind`)?"""
    c = _innermost(e)
    if c is None or (top := table_column(c, at, names)) is None:
        return False
    named: list[str] = [top.lower()]
    node: exp.Expr = c
    while len(named) < len(path) and isinstance(dot := node.parent, exp.Dot) and dot.this is node:
        named.append(dot.expression.name.lower())
        node = dot
    return tuple(named) == path


def _innermost(e: exp.Expr) -> exp.Column | None:
    """The column a reference starts from (`s.addr` in `s.addr.kind`, which sqlglot writes as a
    field access on it), or None for anything else."""
    while isinstance(e, exp.Dot):
        e = e.this
    return e if isinstance(e, exp.Column) else None


def _own(node: exp.Expr, root: exp.Expr) -> bool:
    """Is `node` in this scope itself, not in a subquery below it (that scope answers for it)?"""
    parent = node.parent
    while parent is not None and parent is not root:
        if isinstance(parent, exp.Subquery | exp.Select):
            return False
        parent = parent.parent
    return True


Test = Callable[[exp.Expr], bool]


def _matches(at: TableScope, test: Test) -> Iterator[tuple[HitKind, str]]:
    """The exhaustive matches on the column in one scope (`test` tells a reference to it)."""
    root = at.scope.expression
    for case in root.find_all(exp.Case):
        if _own(case, root) and case.args.get("default") is None and _case_tests(case, test):
            branches = len(case.args.get("ifs") or [])
            yield "case-without-else", f"a CASE on the column with {branches} WHEN branch(es), no ELSE"
    for inlist in root.find_all(exp.In):
        if _own(inlist, root) and test(inlist.this) and (how := _dropping(inlist, at)):
            if inlist.args.get("query") is not None:
                yield "in-list", f"{how} keeps only the values a subquery returns"
            elif inlist.expressions and all(isinstance(e, exp.Literal) for e in inlist.expressions):
                yield "in-list", f"{how} keeps only {len(inlist.expressions)} listed value(s) of the column"
    for eq in root.find_all(exp.EQ):
        if _own(eq, root) and (other := _lookup(eq, test, at)) is not None and (how := _dropping(eq, at)):
            yield "inner-join", f"{how} matches the column with {other}: unmatched rows are dropped"


def _case_tests(case: exp.Case, test: Test) -> bool:
    """Does a CASE test the column: as its subject, or in a WHEN condition?"""
    subject = case.this
    conditions = [subject] if subject is not None else [b.this for b in case.args.get("ifs") or []]
    return any(test(c) for e in conditions for c in e.find_all(exp.Column))


def _clause(node: exp.Expr) -> exp.Expr | None:
    """The clause whose condition holds `node` (WHERE, HAVING, QUALIFY, a join); None for a
    projected value or a negated condition."""
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Not | exp.Select):
        if isinstance(parent, exp.Where | exp.Having | exp.Qualify | exp.Join):
            return parent
        parent = parent.parent
    return None


def _dropping(node: exp.Expr, at: TableScope) -> str | None:
    """How a condition drops the table's rows where it fails: as a filter (WHERE, HAVING,
    QUALIFY), or in an inner or semi join, or an outer join with the table on its inner side;
    None when they are kept (a projected value, a negated condition, an outer join's kept side,
    an anti join)."""
    clause = _clause(node)
    if isinstance(clause, exp.Where | exp.Having | exp.Qualify):
        return f"a {clause.key.upper()} filter"
    if not isinstance(clause, exp.Join):
        return None
    side, kind = (clause.side or "").upper(), (clause.kind or "").upper()
    joined = clause.this.alias_or_name in at.ours  # the table is the joined side, else the FROM side
    if not side and kind in ("", "INNER"):
        return "an inner join"
    if kind == "SEMI":
        return None if joined else "a semi join"
    if kind != "ANTI" and ((side == "LEFT" and joined) or (side == "RIGHT" and not joined)):
        return f"a {side.lower()} join (the table on its inner side)"
    return None


def _lookup(eq: exp.EQ, test: Test, at: TableScope) -> str | None:
    """The other source's name when an equality sets the column against another source's column
    of this scope (not the table's own, nor an outer query's)."""
    ours = [side for side in (eq.left, eq.right) if test(side)]
    if len(ours) != 1:
        return None
    other = _innermost(eq.right if ours[0] is eq.left else eq.left)
    if other is None or other.table in at.ours or other.table not in at.scope.sources:
        return None
    source = at.scope.sources[other.table]
    return exp.table_name(source) if isinstance(source, exp.Table) else f"the derived table {other.table}"


def constraint_hits(constraints: Mapping[str, str], column: str) -> list[ConsumerHit]:
    """Delta CHECK constraints that list the column's values (`col IN (...)`, `col = a OR ...`);
    one that does not parse but names the column counts too, as it may."""
    path = _path(column)
    hits = []
    for name, text in constraints.items():
        try:
            tree = sqlglot.parse_one(text, read=spark_sql())
        except Exception:  # sqlglot's own faults too: the constraint is then read as text
            if path[-1] in text.lower():
                hits.append(_constraint(name, "a CHECK constraint that does not parse names the column"))
            continue
        if any(_in_list(i, path) for i in tree.find_all(exp.In)) or any(
                _equals(e, path) for e in tree.find_all(exp.EQ)):
            hits.append(_constraint(name, "a CHECK constraint lists the column's values: a new value is "
                                          "rejected on write"))
    return hits


def _in_list(node: exp.In, path: tuple[str, ...]) -> bool:
    """`col IN (literals)` on the column's path, not negated."""
    return not isinstance(node.parent, exp.Not) and _is(node.this, path) and bool(node.expressions) and all(
        isinstance(e, exp.Literal) for e in node.expressions)


def _equals(node: exp.EQ, path: tuple[str, ...]) -> bool:
    """`col = literal` (either way round) on the column's path, not negated."""
    sides = (node.left, node.right)
    return not isinstance(node.parent, exp.Not) and any(
        _is(a, path) and isinstance(b, exp.Literal) for a, b in (sides, sides[::-1]))


def _is(node: exp.Expr, path: tuple[str, ...]) -> bool:
    """Is an expression of a constraint the column (`status`, `addr.kind`)?"""
    return isinstance(node, exp.Column | exp.Dot) and tuple(p.name.lower() for p in node.parts) == path


def _constraint(name: str, detail: str) -> ConsumerHit:
    return ConsumerHit("check-constraint", f"constraint {name}", f"delta.constraints.{name}", detail)
