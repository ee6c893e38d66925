"""What the command line takes in beyond what typer parses: the options several commands share
(their help written once, `--format` among them), and the values of options that need reading or
splitting (DDL text and files, allowed values from a list, a file or a table, K=V pairs). A helper of
the entry point cli, loaded at start-up with it: it imports typer, schemaguard.names, errors and
cli_output, and no stage (pyspark, spark and report.catalog only inside `table_values`, which reads a
table); it must not run a command or render a result, and a bad value ends in `fail` (one line,
exit 2)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from schemaguard.cli_output import OutputFormat, fail, status
from schemaguard.errors import first_line, require_regular
from schemaguard.names import COLUMN_MAPPINGS, ICEBERG_VERSIONS, IDENTITIES, PROFILE_NAMES

FormatOption = Annotated[
    OutputFormat, typer.Option("--format", help="text (rich tables) or json (stable keys)")
]


# Choices come from the rules themselves, so a mode or option added there is accepted here.

# Profile, mode and identity are plain strings checked by `api.choice`: typer's own check prints a
# multi-line box, and a bad value must be one line (exit 2) like any other bad input.
ProfileOption = Annotated[str, typer.Option("--profile", help=f"reader profile: {', '.join(PROFILE_NAMES)}")]
IdentityOption = Annotated[str | None, typer.Option(
    "--identity", help=f"how the reader finds fields: {'|'.join(IDENTITIES)} (default: the profile's)")]
TypeWideningOption = Annotated[bool, typer.Option("--type-widening", help="Delta's type widening is on")]
ColumnMappingOption = Annotated[str, typer.Option(
    "--column-mapping", help=f"Delta column mapping: {'|'.join(COLUMN_MAPPINGS)}")]
IcebergVersionOption = Annotated[str, typer.Option(
    "--iceberg-version", help=f"Iceberg spec version: {'|'.join(map(str, ICEBERG_VERSIONS))}")]
TimestampOption = Annotated[str | None, typer.Option(
    "--timestamp", help="Delta/Iceberg: the snapshot at this time (ISO 8601; UTC unless it says)")]
UniformOption = Annotated[bool, typer.Option("--uniform", help="Delta UniForm (Iceberg readers) is on")]
FormatHintOption = Annotated[str, typer.Option(
    "--format-hint", help="read the table as auto (detected)|parquet|delta|iceberg")]
CatalogOption = Annotated[str | None, typer.Option(
    "--catalog", help="Iceberg catalog name as pyiceberg is configured; the table is db.table")]
CatalogUriOption = Annotated[str | None, typer.Option(
    "--catalog-uri", help="Iceberg SQL catalog at this SQLAlchemy URI (sqlite:///c.db); table: db.table")]
SparkCatalogOption = Annotated[bool, typer.Option(
    "--spark-catalog", help="the table is db.table of the Spark session's catalog: read at its location")]
CaseSensitiveOption = Annotated[bool, typer.Option("--case-sensitive", help="spark.sql.caseSensitive=true")]
RowReaderOption = Annotated[bool, typer.Option(
    "--no-vectorized-reader", help="spark.sql.parquet.enableVectorizedReader=false (spark-read)")]
AllowQuietOption = Annotated[bool, typer.Option(
    "--allow-quiet", help="quiet breaks (values change meaning or land in another column) warn, not fail")]


class _JobArguments(argparse.ArgumentParser):
    """A job's options: a bad one is one line and exit 2, as on the command line."""

    def error(self, message: str) -> NoReturn:
        fail(f"{self.prog}: {message} (see '{self.prog} --help')")


def job_arguments(prog: str, description: str) -> argparse.ArgumentParser:
    """The option parser of a job in `jobs/`, with its `--format`."""
    parser = _JobArguments(prog=prog, description=description)
    parser.add_argument("--format", type=OutputFormat, choices=list(OutputFormat), default=OutputFormat.text,
                        help="text (rich tables) or json (stable keys)")
    return parser


def ddl_text(ddl: list[str], ddl_file: Path | None) -> tuple[str, str] | None:
    """The DDL of --ddl (each one statement or several) and --ddl-file as one text, and how errors
    name it; None when neither is given."""
    if ddl and ddl_file is not None:
        fail("plan: give --ddl or --ddl-file, not both")
    if ddl_file is not None:
        require_regular(ddl_file, str(ddl_file))
        try:
            return ddl_file.read_text(encoding="utf-8"), str(ddl_file)
        except (OSError, UnicodeDecodeError) as e:
            fail(f"{ddl_file}: cannot read: {first_line(e)}")
    return (";\n".join(ddl), "--ddl") if ddl else None


def allowed_values(text: str | None, file: Path | None, table: str | None) -> tuple[str, ...] | None:
    """The values --values allows: from --allowed, --allowed-file or --allowed-table (one of them)."""
    if sum(x is not None for x in (text, file, table)) > 1:
        fail("give one of --allowed, --allowed-file, --allowed-table")
    if table is not None:
        return table_values(table)
    if file is not None:
        require_regular(file, f"--allowed-file {file}")
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
            return tuple(line.strip() for line in lines if line.strip())
        except (OSError, UnicodeDecodeError) as e:
            fail(f"--allowed-file {file}: {e}")
    return tuple(v.strip() for v in text.split(",")) if text is not None else None


def table_values(name: str) -> tuple[str, ...]:
    """The distinct values of a catalog table's first column (a reference table of codes)."""
    from pyspark.errors import AnalysisException

    from schemaguard.report.catalog import quote
    from schemaguard.spark import get_spark

    try:
        quoted = quote(*name.split("."))
    except ValueError:
        fail(f"--allowed-table {name!r}: not db.table or catalog.db.table")
    status(f"reading the allowed values from {name} with Spark")
    try:
        df = get_spark("schemaguard-check").table(quoted)
        first = df.columns[0]
        return tuple(sorted(str(r[0]) for r in df.select(first).distinct().collect() if r[0] is not None))
    except AnalysisException as e:
        fail(f"--allowed-table {name}: {first_line(e)}")


def pair(text: str, option: str = "--partition", form: str = "K=V, e.g. dt=2024-01-31") -> tuple[str, str]:
    """`K=V` as (K, V), stripped; a --rename needs both sides."""
    k, sep, v = text.partition("=")
    if not sep or not k or (option == "--rename" and not v):
        fail(f"{option} {text!r}: give {form}")
    return k.strip(), v.strip()
