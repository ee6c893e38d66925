"""The command line: parse, call, render, exit code. Exit 2 is always bad input or usage.

Nothing here imports pyspark or great_expectations at start-up: commands that need no Spark
must start fast (the Spark imports live inside the commands that use them).
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from schemaguard.formats.notation import NotationError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="A schema-change guard for Spark/Parquet data lakes.",
)

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


class Engine(StrEnum):
    local = "local"
    spark = "spark"


FormatOption = Annotated[
    OutputFormat, typer.Option("--format", help="text (rich tables) or json (stable keys)")
]


class UsageError(Exception):
    """Bad input: reported in one line with exit code 2."""


def fail(message: str) -> NoReturn:
    typer.echo(f"schemaguard: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


@app.command()
def scan(
    path: Annotated[str, typer.Argument(help="table directory, file, or s3:// gs:// abfs:// hdfs:// URI")],
    output: FormatOption = OutputFormat.text,
    max_files: Annotated[int, typer.Option(help="file paths listed per version in JSON")] = 1000,
    engine: Annotated[Engine, typer.Option(help="local processes/threads, or a Spark job")] = Engine.local,
) -> None:
    """Read every footer: schema versions, columns that change between them, unreadable files."""
    from schemaguard.lake.discover import discover
    from schemaguard.lake.history import build_history
    from schemaguard.lake.scan import scan as scan_footers
    from schemaguard.lake.scan import scan_on_spark
    from schemaguard.report import scan_output

    listing = discover(path)
    if engine == Engine.spark:
        from schemaguard.spark import get_spark

        result = scan_on_spark(listing, get_spark("schemaguard-scan"))
    else:
        with scan_output.progress(len(listing.files), enabled=output == OutputFormat.text) as advance:
            result = scan_footers(listing, advance)
    history = build_history(result.footers)
    report = scan_output.ScanReport(path, listing, result, history)
    if output == OutputFormat.json:
        _print_json(scan_output.to_json(report, max_files))
    else:
        scan_output.render_text(report)


@app.command()
def demo(
    directory: Annotated[Path, typer.Argument(help="where to build the demo lake")],
) -> None:
    """Build a demo lake: an `orders` table whose history holds realistic schema changes."""
    from schemaguard.demo import build_demo_lake

    table = build_demo_lake(directory)
    typer.echo(f"demo lake written: {table}")
    typer.echo(f"try: schemaguard scan {table}")


def _print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")


def main() -> None:
    from schemaguard.lake.discover import DiscoveryError
    from schemaguard.spark import SparkSetupError

    try:
        app()
    except (DiscoveryError, NotationError, UsageError, FileExistsError, SparkSetupError) as e:
        fail(str(e))
