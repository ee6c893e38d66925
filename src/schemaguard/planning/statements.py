"""What a migration step's Spark SQL statement is, read with sqlglot: the table or view it
writes (migrate.py's guard allows only the plan's), and whether Delta answers it from its log
alone (a command of such statements starts a brief JVM). Any error of sqlglot's tokenizer or
parser is one line."""

from __future__ import annotations

from typing import Any

from schemaguard.errors import UsageError, first_line
from schemaguard.formats.spark_ddl import spark_sql


class StatementError(UsageError):
    """A step's statement that does not parse, or is not one a migration step runs."""


def written(statement: str) -> tuple[str, str]:
    """What one statement writes: ("table" | "view", its normalised name)."""
    from sqlglot import exp

    restore = restored(statement)
    if restore is not None:
        return "table", norm(restore)
    tree = parsed(statement)
    if isinstance(tree, exp.Alter | exp.Update | exp.Merge):
        return "table", norm(tree.this.sql(dialect=spark_sql()))
    if isinstance(tree, exp.Create | exp.Drop) and str(tree.args.get("kind", "")).upper() == "VIEW":
        named = tree.this if isinstance(tree, exp.Create) else (tree.args.get("tables") or [None])[0]
        if isinstance(named, exp.Table):  # a DROP names it among `tables`
            return "view", norm(named.sql(dialect=spark_sql()))
    raise StatementError(f"a step's statement is not one a migration step runs: {statement[:80]}")


def restored(statement: str) -> str | None:
    """The table a `RESTORE TABLE t TO VERSION AS OF n` names (Delta's own: sqlglot has no RESTORE)."""
    at = statement.upper().rfind(" TO VERSION AS OF ")
    return statement[len("RESTORE TABLE "):at] if statement.upper().startswith("RESTORE TABLE ") and at > 0 \
        else None


def parsed(statement: str) -> Any:
    """One statement as sqlglot parses it; any error of its tokenizer or parser is one line."""
    import sqlglot

    from schemaguard.errors import quiet_logger

    try:
        with quiet_logger("sqlglot"):
            return sqlglot.parse_one(statement, read=spark_sql())
    except sqlglot.errors.SqlglotError as e:
        raise StatementError(f"a step's statement does not parse as Spark SQL ({first_line(e)}): "
                             f"{statement[:80]}") from None


def norm(name: str) -> str:
    """A table or view name as the guard compares names: no backticks, lower case."""
    return name.replace("`", "").strip().lower()


def log_only(statement: str) -> bool:
    """A statement Delta answers from its log alone, reading no row: a view made or dropped,
    columns added, dropped or renamed, table properties set, a `RESTORE` (it plans files). Not a
    CHECK constraint or NOT NULL (Delta scans every row for them), an UPDATE, a MERGE, a CTAS."""
    from sqlglot import exp

    if restored(statement) is not None:
        return True
    tree = parsed(statement)
    if isinstance(tree, exp.Create | exp.Drop):
        return str(tree.args.get("kind", "")).upper() == "VIEW"
    if not isinstance(tree, exp.Alter):
        return False
    return all(isinstance(a, exp.Schema | exp.ColumnDef | exp.RenameColumn | exp.AlterSet)
               or (isinstance(a, exp.Drop) and a.args.get("kind") in ("COLUMN", "COLUMNS"))
               for a in tree.args.get("actions") or ())
