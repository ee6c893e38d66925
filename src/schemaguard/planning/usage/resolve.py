"""What one SQL text reads of the table, with sqlglot. Each statement is parsed and qualified
against the table's columns (sqlglot's `qualify`: stars expanded, CTEs, subqueries, joins with
USING and aliases followed), and every column a scope reads from the table counts, its top-level
column for a struct field (`addr.city` reads `addr`). A DELETE, UPDATE or MERGE counts what it
reads (its conditions and assigned values), an INSERT what its query reads; the columns a
statement only writes are no reads. Reads are counted conservatively: a CTE's column counts even
when the outer query drops it, and a bare name that is the table's column is the table's (had
another source the same name, Spark would refuse the query as ambiguous), except in a correlated
subquery, where Spark looks inside first. A text that names the table but cannot be parsed or
attributed with certainty raises `UnresolvedQuery`. Called by tally.py and planning/consumers.py
within limits.py's time limit (it sets none itself); it imports records.py, model and
formats.spark_ddl's dialect; it reads no log, keeps nothing between texts, and puts no literal or
text of a query in a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import TokenType, exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from schemaguard.formats.spark_ddl import sql_dialect
from schemaguard.model import Schema
from schemaguard.planning.usage.records import UnresolvedQuery, names_table, table_parts


def _matches(t: exp.Table, parts: tuple[str, ...]) -> bool:
    """Does a table reference name the table (`db.t` or `t`, in any case)?"""
    return names_table(tuple(p.lower() for p in (t.catalog, t.db, t.name) if p), parts)


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
    parts = table_parts(table)
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
    parts = table_parts(table)
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
