"""A schema change given as Spark SQL DDL, parsed with sqlglot: the table's current schema with
the statements applied is NEW, and a `RENAME COLUMN` is a declared rename.

Understood (`ALTER TABLE t ...`, several statements separated by `;`): `ADD COLUMN(S)` (with
`FIRST`/`AFTER`), `DROP COLUMN(S)`, `RENAME COLUMN a TO b`, `ALTER|CHANGE COLUMN c TYPE t`,
`ALTER|CHANGE COLUMN c SET|DROP NOT NULL`, `CHANGE COLUMN c c t`, `REPLACE COLUMNS (...)`,
`ADD CONSTRAINT n CHECK (...)`, `DROP CONSTRAINT n`, `SET TBLPROPERTIES (...)`. Column names may
be dotted paths into structs (`address.city`) and match as Spark matches them, case-insensitively.
Anything else is refused with its line, never guessed: a plan built on a misread statement would
be wrong in ways no check can catch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from schemaguard.errors import UsageError, quiet_logger
from schemaguard.formats.spark_ddl import DdlTypeError, ddl_field, ddl_type, spark_sql
from schemaguard.model import (
    DataType,
    Field,
    Leaf,
    ListType,
    MapType,
    PartnerVisitor,
    Paths,
    Schema,
    StructType,
    fields_along,
    make_metadata,
    visit_with_partner,
)
from schemaguard.names import is_table_name
from schemaguard.paths import join, join_parts, parent_and_name, parts, segment

if TYPE_CHECKING:
    from sqlglot import exp


class DdlError(UsageError):
    """A statement the planner does not understand, or that does not fit the table."""


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement as written: where it starts, its text, what it does, the table it names."""

    line: int
    text: str
    kind: str
    table: str
    before: Schema  # the schema the statement meets
    after: Schema  # and the one it leaves
    renames: tuple[tuple[str, str], ...] = ()  # the rename it declares
    properties: tuple[tuple[str, str], ...] = ()  # table properties set by it and the statements before


@dataclass(frozen=True, slots=True)
class DdlChange:
    """The statements and what they make of OLD."""

    statements: tuple[Statement, ...]
    new: Schema
    renames: tuple[tuple[str, str], ...]  # (old path, new path), in order
    properties: tuple[tuple[str, str], ...]  # SET TBLPROPERTIES, the last value of each key
    constraints: tuple[tuple[str, str], ...]  # CHECK constraints added: (name, Spark SQL condition)
    dropped_constraints: tuple[str, ...]


def split_statements(text: str, source: str) -> list[tuple[int, str]]:
    """The statements of `text` with the line each starts on (comments and blank ones left out)."""
    from sqlglot import TokenType
    from sqlglot.errors import TokenError

    try:
        tokens = spark_sql()().tokenize(text)
    except TokenError as e:
        raise DdlError(f"{source}: {str(e).splitlines()[0]}") from None
    out, start = [], 0
    for i, token in enumerate([*tokens, None]):
        if token is None or token.token_type == TokenType.SEMICOLON:
            part = tokens[start:i]
            if part:
                out.append((part[0].line, text[part[0].start:part[-1].end + 1]))
            start = i + 1
    return out


def retarget(statement: str, name: str) -> str:
    """An `ALTER TABLE x ...` statement with its table named `name` instead, the rest of its text
    as written (regenerating it through sqlglot could respell what Spark reads)."""
    from sqlglot import TokenType

    tokens = spark_sql()().tokenize(statement)
    at = 2  # ALTER TABLE, then the name's parts and the dots between them
    end = at
    while end + 2 < len(tokens) and tokens[end + 1].token_type == TokenType.DOT:
        end += 2
    if len(tokens) <= at or tokens[0].text.upper() != "ALTER":
        return statement
    return statement[:tokens[at].start] + name + statement[tokens[end].end + 1:]


@dataclass(frozen=True, slots=True)
class Parsed:
    """One ALTER TABLE statement, parsed: where it starts, its text, the table it names, its action."""

    line: int
    text: str
    table: str
    action: exp.Expression


def parse_ddl(text: str, source: str, table: str | None = None) -> list[Parsed]:
    """Every statement of `text` parsed, or the first one that is not an understood ALTER TABLE as
    a one-line error (`source` names it: a file or `--ddl`). With `table`, every statement must name
    it (as `t`, `db.t` or `catalog.db.t`, compared on the last parts given). Needs no schema, so a
    bad statement is refused before any table is read."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError

    out = []
    for line, sql in split_statements(text, source):
        where = f"{source}:{line}"
        try:
            with quiet_logger("sqlglot"):
                parsed = sqlglot.parse_one(sql, read=spark_sql())
        except ParseError as e:
            raise DdlError(f"{where}: does not parse as Spark SQL: {_first(e)}") from None
        if isinstance(parsed, exp.Command):  # sqlglot's fallback for syntax it does not know
            raise DdlError(f"{where}: not understood as Spark SQL DDL: {_head(sql)}")
        if not isinstance(parsed, exp.Alter) or parsed.args.get("kind") != "TABLE":
            raise DdlError(f"{where}: only ALTER TABLE statements describe a change: {_head(sql)}")
        name = parsed.this.sql(dialect=spark_sql())
        if table is not None and not _same_table(parsed.this, table):
            raise DdlError(f"{where}: the statement alters {name}, the plan is for {table}")
        actions = parsed.args.get("actions") or []
        if len(actions) != 1:
            raise DdlError(f"{where}: one change a statement, please: {_head(sql)}")
        out.append(Parsed(line, sql.strip(), name, actions[0]))
    if not out:
        raise DdlError(f"{source}: no statement")
    return out


def apply_ddl(old: Schema, text: str, source: str, table: str | None = None) -> DdlChange:
    """NEW from OLD and the DDL in `text` (parsed as `parse_ddl` parses it)."""
    schema = old
    renames: list[tuple[str, str]] = []
    properties: dict[str, str] = {}
    constraints: list[tuple[str, str]] = []
    dropped: list[str] = []
    statements = []
    for st in parse_ddl(text, source, table):
        before, declared = schema, len(renames)
        try:
            kind, schema = _apply(schema, st.action, renames, properties, constraints, dropped)
        except (DdlTypeError, _NoSuchColumn) as e:
            raise DdlError(f"{source}:{st.line}: {e}") from None
        statements.append(Statement(st.line, st.text, kind, st.table, before, schema,
                                    tuple(renames[declared:]), tuple(properties.items())))
    return DdlChange(tuple(statements), schema, tuple(renames), tuple(properties.items()),
                     tuple(constraints), tuple(dropped))


class _NoSuchColumn(ValueError):
    pass


def _apply(schema: Schema, action: exp.Expression, renames: list[tuple[str, str]],
           properties: dict[str, str], constraints: list[tuple[str, str]],
           dropped: list[str]) -> tuple[str, Schema]:
    """What one action does, and the schema after it."""
    from sqlglot import exp

    if isinstance(action, exp.RenameColumn):
        old_path, new_name = column_path(action.this), action.args["to"].name
        parent, name = parent_and_name(old_path)
        renames.append((_spelled(schema, old_path), join(parent, new_name)))
        return "rename-column", _edit(schema, parent, _one_changed(name, old_path,
                                                                   lambda f: replace(f, name=new_name)))
    if isinstance(action, exp.Schema):  # ADD COLUMNS (...)
        for column in action.expressions:
            schema = _add(schema, column)
        return "add-columns", schema
    if isinstance(action, exp.ColumnDef):  # ADD COLUMN c t
        return "add-columns", _add(schema, action)
    if isinstance(action, exp.Drop) and action.args.get("kind") in ("COLUMN", "COLUMNS"):
        for path in dropped_paths(action):
            schema = _drop(schema, path)
        return "drop-columns", schema
    if isinstance(action, exp.Drop) and action.args.get("kind") == "CONSTRAINT":
        dropped.extend(t.name for t in action.args.get("tables") or ())
        return "drop-constraint", schema
    if isinstance(action, exp.AlterColumn):
        return _alter_column(schema, action, renames)
    if isinstance(action, exp.ReplaceColumns):
        fields = tuple(ddl_field(c) for c in action.expressions)
        if not all(f.nullable for f in fields):  # Spark's parser refuses it, so would the job
            raise DdlTypeError("NOT NULL is not supported in Hive-style REPLACE COLUMNS")
        replaced = visit_with_partner(schema, Schema(fields), _Replace())
        assert isinstance(replaced, StructType)  # two schemas make a struct
        return "replace-columns", Schema(replaced.fields)
    if isinstance(action, exp.AddConstraint):
        for constraint in action.expressions:
            checks = [c for c in constraint.expressions if isinstance(c, exp.CheckColumnConstraint)]
            if not checks:
                shown = constraint.sql(dialect=spark_sql())
                raise DdlTypeError(f"only CHECK constraints are understood: {shown}")
            constraints.append((constraint.name, checks[0].this.sql(dialect=spark_sql())))
        return "add-constraint", schema
    if isinstance(action, exp.AlterSet):
        for prop in action.find_all(exp.Property):
            properties[prop.name] = prop.args["value"].name
        return "set-properties", schema
    raise DdlTypeError(f"not understood: {action.sql(dialect=spark_sql())}")


def _drop(schema: Schema, path: str) -> Schema:
    parent, name = parent_and_name(path)

    def kept(fs: tuple[Field, ...]) -> tuple[Field, ...]:
        gone = _find(fs, name, path)
        return tuple(f for f in fs if f is not gone)

    return _edit(schema, parent, kept)


def _alter_column(schema: Schema, action: exp.AlterColumn,
                  renames: list[tuple[str, str]]) -> tuple[str, Schema]:
    """ALTER/CHANGE COLUMN: a type, a nullability, or (CHANGE) a new name with its type."""
    from sqlglot import exp

    path = column_path(action.this)
    parent, name = parent_and_name(path)
    dtype, allow_null, rename_to = (action.args.get(k) for k in ("dtype", "allow_null", "rename_to"))
    unknown = action.args.get("comment") or action.args.get("default")
    if unknown or (action.args.get("drop") and allow_null is None):
        raise DdlTypeError(f"not understood: {action.sql(dialect=spark_sql())}")

    def change(f: Field) -> Field:
        if isinstance(dtype, exp.DataType):
            f = replace(f, type=ddl_type(dtype, path))
        if allow_null is not None:
            f = replace(f, nullable=bool(allow_null))
        if rename_to is not None and rename_to.name != f.name:
            f = replace(f, name=rename_to.name)
        return f

    if rename_to is not None and rename_to.name.lower() != name.lower():
        renames.append((_spelled(schema, path), join(parent, rename_to.name)))
    kind = ("set-not-null" if allow_null is False else "drop-not-null" if allow_null else
            "rename-column" if dtype is None else "alter-type")
    return kind, _edit(schema, parent, _one_changed(name, path, change))


def _add(schema: Schema, column: exp.ColumnDef) -> Schema:
    """One added column, where its FIRST/AFTER says (else last), into its struct."""
    full = column_path(column.this)
    parent, name = parent_and_name(full)
    bare = column.copy()
    bare.set("this", _ident(name))
    field = ddl_field(bare, parent)
    position = column.args.get("position")

    def added(fs: tuple[Field, ...]) -> tuple[Field, ...]:
        if any(f.name.lower() == field.name.lower() for f in fs):
            raise _NoSuchColumn(f"{full} already exists")
        if position is None:
            return (*fs, field)
        if position.args.get("position") == "FIRST":
            return (field, *fs)
        after = _find(fs, position.this.name, position.this.name)
        at = fs.index(after) + 1
        return (*fs[:at], field, *fs[at:])

    return _edit(schema, parent, added)


def _ident(name: str) -> exp.Identifier:
    from sqlglot import exp

    return exp.to_identifier(name)


def dropped_paths(action: exp.Drop) -> list[str]:
    from sqlglot import exp

    paths = []
    for target in action.args.get("tables") or ():
        items = target.expressions if isinstance(target, exp.Schema) else [target]
        paths += [column_path(x) for x in items]
    return paths


def column_path(node: exp.Expression) -> str:
    """A column reference as a model path (`a.b.c`, however sqlglot split it into table/db parts;
    `` `a.b` `` one name holding a dot)."""
    from sqlglot import exp

    if isinstance(node, exp.Column):
        return join_parts([part.name for part in node.parts])
    if isinstance(node, exp.Dot):
        return join(column_path(node.this), node.expression.name)
    return segment(node.name)


def _find(fields: Sequence[Field], name: str, path: str) -> Field:
    """The field Spark would resolve `name` to: exact, else the one equal ignoring case."""
    exact = [f for f in fields if f.name == name]
    loose = [f for f in fields if f.name.lower() == name.lower()]
    found = exact or loose
    if len(found) != 1:
        raise _NoSuchColumn(f"no column {path}" if not found else f"{path} names {len(found)} columns")
    return found[0]


def _one_changed(name: str, path: str, change: Callable[[Field], Field]
                 ) -> Callable[[tuple[Field, ...]], tuple[Field, ...]]:
    """An edit of a struct's fields: the one `name` resolves to, changed (looked for once)."""
    def edit(fields: tuple[Field, ...]) -> tuple[Field, ...]:
        target = _find(fields, name, path)
        return tuple(change(f) if f is target else f for f in fields)

    return edit


def _spelled(schema: Schema, path: str) -> str:
    """`path` as the schema spells it (DDL matches case-insensitively)."""
    along = fields_along(schema, path, lambda fields, name: _find(fields, name, path))
    assert along is not None  # `_find` raises rather than finding none
    return join_parts([f.name for f in along])


@dataclass(frozen=True, slots=True)
class _Pair:
    writer: Field | None  # the column today
    reader: Field | None  # its REPLACE COLUMNS definition


class _Replace(PartnerVisitor[_Pair, DataType, Field | None]):
    """REPLACE COLUMNS as delta-spark applies it (SchemaUtils.changeDataType): the new list in its
    order; a column that was there keeps its metadata, its comment unless a new one is given, and
    its arrays' and maps' element nullability, and takes the new nullability and type."""

    def pair_fields(self, writer: tuple[Field, ...], reader: tuple[Field, ...]) -> list[_Pair]:
        old = {f.name.lower(): f for f in writer}
        return [_Pair(old.get(f.name.lower()), f) for f in reader] + [
            _Pair(f, None) for f in writer if f.name.lower() not in {r.name.lower() for r in reader}]

    def field(self, writer: Field, reader: Field, pair: _Pair, paths: Paths, type_result: DataType) -> Field:
        comment = reader.meta.get("comment")
        meta = writer.meta if comment is None else {**writer.meta, "comment": comment}
        return replace(writer, type=type_result, nullable=reader.nullable, metadata=make_metadata(meta))

    def writer_only(self, writer: Field, pair: _Pair, paths: Paths) -> None:
        return None  # not in the new list: gone

    def reader_only(self, reader: Field, pair: _Pair, paths: Paths) -> Field:
        return reader

    def struct(self, writer: StructType, reader: StructType, paths: Paths,
               fields: Sequence[Field | None]) -> StructType:
        return StructType(tuple(f for f in fields if f is not None))

    def list(self, writer: ListType, reader: ListType, paths: Paths, element: DataType) -> ListType:
        return ListType(element, writer.element_nullable)

    def map(self, writer: MapType, reader: MapType, paths: Paths, key: DataType, value: DataType) -> MapType:
        return MapType(key, value, writer.value_nullable)

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> DataType:
        return reader

    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> DataType:
        return reader


def _edit(schema: Schema, parent: str, edit: Callable[[tuple[Field, ...]], tuple[Field, ...]]) -> Schema:
    """The schema with the fields of the struct at `parent` (the top level is "") rewritten by
    `edit`, each name on the way resolved as `_find` resolves it: only that struct and the fields
    above it are rebuilt (a statement of a thousand actions on a wide table is a thousand small
    edits, not a thousand walks)."""
    if not parent:
        return replace(schema, fields=edit(schema.fields))
    return replace(schema, fields=_edited(schema.fields, parts(parent), parent, edit))


def _edited(fields: tuple[Field, ...], names: Sequence[str], parent: str,
            edit: Callable[[tuple[Field, ...]], tuple[Field, ...]]) -> tuple[Field, ...]:
    f = _find(fields, names[0], parent)
    if not isinstance(f.type, StructType):  # the struct must exist: a clear error, not a silent no-op
        raise _NoSuchColumn(f"{parent} is not a struct column" if len(names) == 1 else f"no column {parent}")
    inner = edit(f.type.fields) if len(names) == 1 else _edited(f.type.fields, names[1:], parent, edit)
    changed = replace(f, type=StructType(inner))
    return tuple(changed if g is f else g for g in fields)


def _same_table(named: exp.Table, table: str) -> bool:
    """Whether the statement's table is the plan's, compared on the last name parts both give.
    The statement's parts come from the parser (a quoted name holding a dot stays one part); the
    plan's table is one name (a folder's), or the parts of a validated catalog name."""
    mine = [p.name.lower() for p in named.parts]
    readings = [[table.lower()]] + ([table.lower().split(".")] if is_table_name(table) else [])
    return any(mine[-n:] == given[-n:] for given in readings for n in [min(len(mine), len(given))])


def _head(sql: str) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _first(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__
