"""Consumers that match an enum column's values exhaustively, and so mishandle a value added to it.

In queries (a query log, or `.sql` files), each statement that reads the table is qualified as
usage.py qualifies it, and three patterns on the column count:
- `case-without-else`: a CASE that tests the column (`CASE col WHEN ...`, or `CASE WHEN col = ...`
  / `col IN (...)`) and has no ELSE: a new value falls through to NULL;
- `in-list`: `col IN (literals)` in a WHERE, HAVING or join condition: a new value is filtered out
  (a projected `col IN (...)` is a computed flag, not a filter, and is left out);
- `inner-join`: an INNER JOIN that equates the column with another table's column (a lookup table):
  rows with a value the lookup lacks disappear.
Delta CHECK constraints (`delta.constraints.NAME`) that list the column's values reject a new
value on write (`check-constraint`). Hits name the consumer and where; never a literal value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemaguard.errors import UsageError
from schemaguard.model import Schema
from schemaguard.plan.usage import (
    LoggedQuery,
    UnresolvedQuery,
    statements_naming,
    table_column,
    table_scopes,
)

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
    unparsed: tuple[str, ...]  # FILE:LINE of statements on the table that could not be read


def sql_files(directory: Path) -> Iterator[LoggedQuery]:
    """Every statement of every `.sql` file below `directory`, at the line it starts on."""
    if not directory.is_dir():
        raise UsageError(f"--sql {directory}: not a directory of .sql files")
    for path in sorted(directory.rglob("*.sql")):
        text = path.read_text(encoding="utf-8", errors="replace")
        line, start = 1, 0
        for piece in _statements(text):
            offset = text.index(piece, start)
            line += text.count("\n", start, offset)
            start = offset
            yield LoggedQuery(line, str(path), None, None, piece)


def _statements(text: str) -> list[str]:
    """The statements of a file, split where the tokenizer sees `;` (never inside a string)."""
    try:
        tokens = sqlglot.tokenize(text, read="spark")
    except SqlglotError:
        return [text]
    pieces, begin = [], 0
    for token in tokens:
        if token.token_type == sqlglot.TokenType.SEMICOLON:
            pieces.append(text[begin:token.start])
            begin = token.end + 1
    pieces.append(text[begin:])
    return [p.strip() for p in pieces if p.strip()]


def enum_consumers(queries: Iterable[LoggedQuery], table: str, column: str, schema: Schema,
                   dialect: str = "spark") -> ConsumerScan:
    """Every exhaustive match on `column` of `table` in the queries."""
    hits: dict[tuple[str, str, str], ConsumerHit] = {}
    unparsed: list[str] = []
    names = {f.name.lower(): f.name for f in schema.fields}
    target = column.split(".")[0].lower()
    for q in queries:
        if q.columns is not None:  # a Spark scan: no query text to read
            continue
        where = f"{q.source}:{q.line}"
        try:
            for statement, refs in statements_naming(q.text, table, dialect):
                for scope, ours in table_scopes(statement, refs, schema, dialect):
                    def on_target(c: exp.Expr, ours: frozenset[str] = ours) -> bool:
                        return isinstance(c, exp.Column) and (
                            table_column(c, ours, names) or "").lower() == target

                    for kind, detail in _matches(scope.expression, on_target):
                        hit = ConsumerHit(kind, q.user or q.source, where, detail)
                        hits.setdefault((kind, where, detail), hit)
        except UnresolvedQuery:
            unparsed.append(where)
    return ConsumerScan(tuple(hits.values()), tuple(unparsed))


def _own(node: exp.Expr, scope_root: exp.Expr) -> bool:
    """Is `node` in this scope itself, not in a subquery below it (that scope answers for it)?"""
    parent = node.parent
    while parent is not None and parent is not scope_root:
        if isinstance(parent, exp.Subquery | exp.Select) and parent is not scope_root:
            return False
        parent = parent.parent
    return True


Test = Callable[[exp.Expr], bool]


def _matches(root: exp.Expr, test: Test) -> Iterator[tuple[HitKind, str]]:
    """The exhaustive matches on the column in one scope (`test` tells a reference to it)."""
    for case in root.find_all(exp.Case):
        if not _own(case, root) or case.args.get("default") is not None:
            continue
        branches = case.args.get("ifs") or []
        subject = case.this
        if (subject is not None and any(test(c) for c in subject.find_all(exp.Column))) or any(
                test(c) for b in branches for c in b.this.find_all(exp.Column)):
            yield "case-without-else", f"a CASE on the column with {len(branches)} WHEN branch(es), no ELSE"
    for inlist in root.find_all(exp.In):
        if (_own(inlist, root) and test(inlist.this) and inlist.expressions
                and all(isinstance(e, exp.Literal) for e in inlist.expressions)
                and inlist.find_ancestor(exp.Where, exp.Having, exp.Join) is not None):
            yield "in-list", f"a filter keeps only {len(inlist.expressions)} listed value(s) of the column"
    for join in root.find_all(exp.Join):
        if not _own(join, root) or join.side or join.kind.upper() not in ("", "INNER"):
            continue
        on = join.args.get("on")
        equal = [eq for eq in (on.find_all(exp.EQ) if on is not None else ())
                 if isinstance(eq.left, exp.Column) and isinstance(eq.right, exp.Column)
                 and test(eq.left) != test(eq.right)]
        used = {u.name.lower() for u in join.args.get("using") or () if isinstance(u, exp.Identifier)}
        if equal or used & {c.name.lower() for c in root.find_all(exp.Column) if test(c)}:
            yield "inner-join", "an inner join on the column drops the rows whose value the other side lacks"


def constraint_hits(constraints: Mapping[str, str], column: str) -> list[ConsumerHit]:
    """Delta CHECK constraints that list the column's values (`col IN (...)`, `col = a OR ...`)."""
    target = column.split(".")[0].lower()
    hits = []
    for name, text in constraints.items():
        try:
            tree = sqlglot.parse_one(text, read="spark")
        except SqlglotError:
            continue
        listed = [i for i in tree.find_all(exp.In)
                  if isinstance(i.this, exp.Column) and i.this.name.lower() == target]
        equals = [e for e in tree.find_all(exp.EQ) if any(
            isinstance(x, exp.Column) and x.name.lower() == target for x in (e.left, e.right))]
        if listed or len(equals) > 1:
            hits.append(ConsumerHit("check-constraint", f"constraint {name}", f"delta.constraints.{name}",
                                    "a CHECK constraint lists the column's values: a new value is "
                                    "rejected on write"))
    return hits
