"""What the command line writes besides the reports: the one-line error of bad input or usage (exit
2), what a long step is doing and progress bars (stderr), a result as text or JSON (`--format`), paths
as short as they can be, and the text of `migrate` and `findings`. A helper of the entry point cli,
loaded at start-up with it (cli and cli_input import it): it imports neither of them and, at
start-up, only errors from the package (report.scan inside `bars`, migrate inside `show_status`, when
a command needs them). It must not parse options or run anything: it only writes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer

from schemaguard.errors import one_line
from schemaguard.jsontext import json_bytes

EXIT_USAGE = 2  # bad input or usage, always
R = TypeVar("R")


class OutputFormat(StrEnum):
    """`--format` of the commands that print text or JSON."""

    text = "text"
    json = "json"


def fail(message: str) -> NoReturn:
    """Bad input or usage: one line on stderr, exit 2."""
    typer.echo(f"schemaguard: error: {one_line(message)}", err=True)
    sys.exit(EXIT_USAGE)


def status(message: str) -> None:
    """What a long step is doing, on stderr: stdout stays clean for the report."""
    typer.echo(f"schemaguard: {message} ...", err=True)


def shown(path: Path) -> str:
    """A path as short as it can be: relative to the working directory when it lies below it."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def spark_note() -> None:
    """Said when statistics leave a check undecided and Spark reads the data (a command's `announce`)."""
    status("reading the files statistics cannot decide, with Spark")


def print_json(doc: Any) -> None:
    """A command's document on stdout as JSON, indented for a person at a terminal. Written as
    bytes where stdout has a byte stream below it (a 40 MB document is not decoded to be encoded)."""
    data = json_bytes(doc, indent=sys.stdout.isatty())
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:  # a text stream only (a notebook's, a redirect to a StringIO)
        sys.stdout.write(data.decode())
        return
    sys.stdout.flush()  # what was written as text goes first
    raw.write(data)
    raw.flush()


def bars(output: OutputFormat) -> Callable[[int], Any]:
    """Progress bars on stderr for long scans, in text mode only (stdout stays clean for data)."""
    from schemaguard.report.scan import progress

    return partial(progress, enabled=output == OutputFormat.text)


def render(
    output: OutputFormat, report: R, to_json: Callable[[R], Any], to_text: Callable[[R], None]
) -> None:
    """A command's report as JSON or as its text."""
    if output == OutputFormat.json:
        print_json(to_json(report))
    else:
        to_text(report)


def show_scan(result: Any, output: OutputFormat) -> None:
    """What `scan` prints: the result's JSON, or its versions and findings as text."""
    from schemaguard.report import scan as scan_report

    if output == OutputFormat.json:
        print_json(result.to_dict())
    else:
        scan_report.scan_text(result.table_summary, result.findings)


def show_gate(result: Any, output: OutputFormat) -> None:
    """What `gate` prints: the verdict's JSON, or its text."""
    from schemaguard.report import gate as gating

    render(output, result.report, gating.gate_json, gating.gate_text)


def show_audit(result: Any, output: OutputFormat, conf: Path | None) -> None:
    """What `audit` prints: the run's JSON, or its text, the report files written and where the
    catalog holds the run."""
    from schemaguard.report import catalog as catalog_tables
    from schemaguard.report import json as json_report
    from schemaguard.report import terminal

    run, config = result.run, result.config
    if output == OutputFormat.json:
        print_json(json_report.to_json(run))
        return
    terminal.render_terminal(run)
    for fmt, path in result.reports.items():
        typer.echo(f"{fmt:>8}: {shown(path)}")
    if config.catalog.enabled:
        typer.echo(f"catalog: run {run.run_id} in {catalog_tables.table_names(config.catalog)['runs']}; "
                   "read it back with `schemaguard findings" + (f" --conf {conf}`" if conf else "`")
                   + " or in Spark SQL:")
        typer.echo(catalog_tables.findings_query(config.catalog))


def audit_exit(result: Any, proofs_exit: bool) -> int:
    """`audit`'s exit code: the run's, or 3 with `--proofs-exit` when a proof stayed unknown and
    nothing fails (as `check`)."""
    unknown = any(p.verdict == "unknown" for t in result.run.tables for p in t.proofs)
    return 3 if proofs_exit and result.exit_code == 0 and unknown else int(result.exit_code)


def run_job(main: Callable[[list[str]], int]) -> NoReturn:
    """A job of `jobs/` run as a program: `main(argv)` gives the exit code; bad input is one line on
    stderr and exit 2, as on the command line."""
    from schemaguard.errors import TOO_DEEP, UsageError

    try:
        code = main(sys.argv[1:])
    except (UsageError, OSError) as e:
        fail(str(e))
    except RecursionError:
        fail(f"an input {TOO_DEEP}")
    sys.exit(code)


def show_status(m: Any, rows: list[dict[str, Any]]) -> NoReturn:
    """Each step's status as the `migrations` records tell it, then exit 0."""
    from schemaguard import migrate as migrating

    typer.echo(f"plan {m.plan_id} on {m.table} ({m.table_format})")
    for s in migrating.status(m, rows):
        before, after = s.version_before, s.version_after
        versions = ("" if before is None else f" (table version {before} before it)" if after is None
                    else f" (table version {before} -> {after})")
        typer.echo(f"  {s.step:<16} {s.status}{versions}")
    raise typer.Exit(0)


def show_run(run: Any, apply: bool) -> None:
    """One step's outcome as a person reads it: its checks, its statements, what happened."""
    before, after = run.version_before, run.version_after
    versions = f" (table version {before} -> {after})" if before is not None else ""
    typer.echo(f"step {run.step}: {run.status}{versions}")
    for kind, subject, verdict, evidence in run.checks:
        typer.echo(f"  entry check {kind} {subject}: {verdict}" + (f" ({evidence})" if evidence else ""))
    verb = "ran" if run.status in ("applied", "failed", "exit-check-failed") else "would run"
    if run.status == "already-applied":
        typer.echo("  nothing to do: the migrations table records it applied")
    elif run.status != "refused":
        for statement, took in zip(run.statements, _took(run), strict=True):
            typer.echo(f"  {verb}: {statement};{took}")
    for note in run.notes:
        typer.echo(f"  {note}")
    if run.status == "would-apply" and not apply and run.statements:
        typer.echo("  nothing written: add --apply to run it")


def _took(run: Any) -> list[str]:
    """Each statement's time as the step ran it: its seconds, or skipped where the table already
    showed its effect (nothing for a step not run)."""
    if not run.took:
        return [""] * len(run.statements)
    return [" (skipped: the table already shows it)" if t is None else f" ({t:.1f} s)" for t in run.took]


def show_findings(rows: list[dict[str, Any]]) -> None:
    """Each finding on a line of its own (severity, whole code, table, column, files, waived),
    its message below it: nothing cut, no word wrapped by us, no None or True."""
    if not rows:
        typer.echo("no findings in the latest complete run")
        return
    typer.echo(f"findings of run {rows[0]['run_id']} (started {rows[0]['started_at']:%Y-%m-%d %H:%M:%S %Z}): "
               f"{len(rows)}")
    for r in rows:
        files = f"{r['file_count']:,} file(s)" if r["file_count"] else ""
        tags = " ".join(x for x in (r["table_name"], r["column_path"] or "", files,
                                    "waived" if r["waived"] else "", "fails" if r["fails"] else "") if x)
        typer.echo(f"{r['severity']:<8} {r['code']}  {one_line(tags)}")
        typer.echo(f"         {one_line(r['message'])}")
