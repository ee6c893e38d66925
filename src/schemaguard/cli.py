"""The command line: parse, call, render, exit code. Exit 2 is always bad input or usage.

Nothing here imports pyspark or great_expectations at start-up: commands that need no Spark
must start fast (the Spark imports live inside the commands that use them). The options several
commands share and the parsing of option values are in cli_input; what the command line writes
besides the reports (the one-line error, status on stderr, JSON, the migrate and findings text)
is in cli_output.
"""

from __future__ import annotations

import gc
import sys
from dataclasses import replace
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from typer._click.exceptions import UsageError as ClickUsageError  # typer's own click

from schemaguard.acyclic import freezing_stages
from schemaguard.cli_input import (
    AllowQuietOption,
    CaseSensitiveOption,
    CatalogOption,
    CatalogUriOption,
    ColumnMappingOption,
    FormatHintOption,
    FormatOption,
    IcebergVersionOption,
    IdentityOption,
    ProfileOption,
    RowReaderOption,
    SparkCatalogOption,
    TimestampOption,
    TypeWideningOption,
    UniformOption,
    allowed_values,
    ddl_text,
    pair,
)
from schemaguard.cli_output import (
    OutputFormat,
    audit_exit,
    bars,
    fail,
    print_json,
    render,
    show_audit,
    show_findings,
    show_gate,
    show_run,
    show_scan,
    show_status,
    shown,
    spark_note,
    status,
)
from schemaguard.errors import TOO_DEEP, UsageError, first_line
from schemaguard.names import MERGE_PROFILE_NAMES, PROFILE_NAMES, Mode

# No rule or model module at start-up: `--help` and a bad option stay fast; commands import what
# they run.
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: rich's help layout costs ~0.1 s of imports on every --help
    help="A schema-change guard for Spark/Parquet data lakes.",
)


class Engine(StrEnum):
    auto = "auto"
    local = "local"
    spark = "spark"


@app.command()
def scan(
    path: Annotated[str, typer.Argument(help="table directory, file, s3:// gs:// abfs:// hdfs:// URI, "
                                        "Iceberg *.metadata.json, or db.table with --catalog-uri")],
    output: FormatOption = OutputFormat.text,
    max_files: Annotated[int, typer.Option(help="file paths listed per version in JSON")] = 1000,
    engine: Annotated[Engine, typer.Option(
        help="local processes/threads, a Spark job, or auto: a Spark job only in a running Spark "
             "session with more task slots than local cores, on a large table")] = Engine.auto,
    format_hint: FormatHintOption = "auto",
    version: Annotated[int | None, typer.Option(
        "--version", help="Delta table version or Iceberg snapshot id to audit (time travel)")] = None,
    timestamp: TimestampOption = None,
    include_unreferenced: Annotated[bool, typer.Option(
        "--include-unreferenced", help="Delta/Iceberg: also read files on disk the snapshot leaves out"),
    ] = False,
    catalog: CatalogOption = None,
    catalog_uri: CatalogUriOption = None,
) -> None:
    """Read every footer: schema versions, columns that change between them, unreadable files.
    Delta and Iceberg tables are read through their logs: the snapshot's files, columns by
    logical name."""
    from schemaguard import api

    with freezing_stages():
        result = api.scan(path, engine=engine.value, format_hint=format_hint, version=version,
                          timestamp=timestamp, include_unreferenced=include_unreferenced, catalog=catalog,
                          catalog_uri=catalog_uri, max_files=max_files, progress=bars(output))
        show_scan(result, output)


@app.command()
def demo(
    directory: Annotated[Path, typer.Argument(help="where to build the demo lake")],
    catalog_table: Annotated[str | None, typer.Option(
        "--catalog-table", help="also copy the newest days of `orders` into a managed Delta table of "
        "this name (db.table) in the session's catalog, replacing one there")] = None,
) -> None:
    """Build a demo lake: an `orders` Parquet table, an `orders_iceberg` Iceberg table (written with
    pyiceberg) and an `orders_delta` Delta table (written with delta-spark) whose histories hold
    realistic schema changes; and `plan/`, the inputs of a change to plan (a rename read by several
    teams: the schema after it, a query log, consumers' SQL)."""
    from schemaguard.demo import (
        DEMO_TABLES,
        build_delta_demo,
        build_demo_lake,
        build_iceberg_demo,
        build_plan_inputs,
        register_orders,
    )
    from schemaguard.names import is_table_name
    from schemaguard.spark import get_spark

    if catalog_table is not None and not is_table_name(catalog_table):
        fail(f"--catalog-table {catalog_table!r}: give db.table")
    for name in DEMO_TABLES:  # all refused before any is written
        if (directory / name).exists():
            fail(f"{directory / name} already exists; pick another directory or remove it")
    table = build_demo_lake(directory)
    typer.echo(f"demo lake written: {table}")
    typer.echo(f"a change to plan: {build_plan_inputs(directory)}")
    iceberg = build_iceberg_demo(directory)
    typer.echo(f"demo lake written: {iceberg}")
    status("writing the Delta table with delta-spark")
    # Path-based Delta needs no metastore: an in-memory catalog never contends for the embedded
    # catalog's database with another session (an audit, a notebook) on this machine. A catalog
    # table needs the catalog.
    in_memory = {"spark.sql.catalogImplementation": "in-memory"}
    spark = get_spark("schemaguard-demo", None if catalog_table else in_memory)
    delta = build_delta_demo(directory, spark)
    typer.echo(f"demo lake written: {delta}")
    if catalog_table is not None:
        status(f"copying the newest days of orders into {catalog_table}")
        location = register_orders(directory, spark, catalog_table)
        typer.echo(f"catalog table written: {catalog_table} at {location}")
    typer.echo(f"try: schemaguard scan {table}")
    typer.echo(f"     schemaguard scan {iceberg}")
    typer.echo(f"     schemaguard scan {delta}")


@app.command()
def compare(
    writer: Annotated[str, typer.Option("--writer", help="the data's schema: a file, table or Delta dir")],
    reader: Annotated[str, typer.Option("--reader", help="the reader's schema (of several: the newest)")],
    profile: ProfileOption,
    identity: IdentityOption = None,
    type_widening: TypeWideningOption = False,
    column_mapping: ColumnMappingOption = "none",
    iceberg_version: IcebergVersionOption = "2",
    uniform: UniformOption = False,
    case_sensitive: CaseSensitiveOption = False,
    allow_quiet: AllowQuietOption = False,
    no_vectorized_reader: RowReaderOption = False,
    output: FormatOption = OutputFormat.text,
) -> None:
    """Can READER read data written with WRITER? Every version of WRITER is checked as a writer."""
    from schemaguard import api
    from schemaguard.report import rules_output

    result = api.compare(writer, reader, profile=profile, identity=identity, type_widening=type_widening,
                         column_mapping=column_mapping, iceberg_version=iceberg_version, uniform=uniform,
                         case_sensitive=case_sensitive, allow_quiet=allow_quiet,
                         vectorized_reader=not no_vectorized_reader)
    render(output, result.report, rules_output.compare_json, rules_output.compare_text)
    raise typer.Exit(result.exit_code)


@app.command()
def merge(
    sources: Annotated[list[str], typer.Argument(help="schemas in merge order (a table: all its versions)")],
    profile: Annotated[str, typer.Option("--profile", help=" or ".join(MERGE_PROFILE_NAMES))],
    type_widening: TypeWideningOption = False,
    case_sensitive: CaseSensitiveOption = False,
    output: FormatOption = OutputFormat.text,
) -> None:
    """Does the merge of the schemas succeed, and what comes out? The first is the left side (Delta: the
    table)."""
    from schemaguard import api
    from schemaguard.report import rules_output

    result = api.merge(*sources, profile=profile, type_widening=type_widening, case_sensitive=case_sensitive)
    render(output, result.report, rules_output.merge_json, rules_output.merge_text)
    raise typer.Exit(result.exit_code)


@app.command()
def evolve(
    versions: Annotated[list[str], typer.Argument(help="V1 .. Vn oldest first (or one table: its versions)")],
    mode: Annotated[str, typer.Option("--mode", help=f"{', '.join(Mode)} (any case)")],
    profile: ProfileOption,
    identity: IdentityOption = None,
    type_widening: TypeWideningOption = False,
    column_mapping: ColumnMappingOption = "none",
    iceberg_version: IcebergVersionOption = "2",
    uniform: UniformOption = False,
    case_sensitive: CaseSensitiveOption = False,
    allow_quiet: AllowQuietOption = False,
    no_vectorized_reader: RowReaderOption = False,
    output: FormatOption = OutputFormat.text,
) -> None:
    """May Vn follow V1..Vn-1 under MODE? Pairs are checked as a schema registry checks them."""
    from schemaguard import api
    from schemaguard.report import rules_output

    result = api.evolve(*versions, mode=mode, profile=profile, identity=identity, type_widening=type_widening,
                        column_mapping=column_mapping, iceberg_version=iceberg_version, uniform=uniform,
                        case_sensitive=case_sensitive, allow_quiet=allow_quiet,
                        vectorized_reader=not no_vectorized_reader)
    render(output, result.report, rules_output.evolve_json, rules_output.evolve_text)
    raise typer.Exit(result.exit_code)


@app.command()
def gate(
    path: Annotated[str, typer.Argument(help="table directory or URI")],
    allow_quiet: AllowQuietOption = False,
    output: FormatOption = OutputFormat.text,
) -> None:
    """Before enabling mergeSchema: does Spark's merged read succeed, what comes out, which files and
    columns conflict, and what a read without it silently loses. Exit 0 safe, 1 not."""
    from schemaguard import api

    with freezing_stages():
        result = api.gate(path, allow_quiet=allow_quiet, progress=bars(output))
        show_gate(result, output)
    raise typer.Exit(result.exit_code)


@app.command()
def check(
    path: Annotated[str, typer.Argument(help="table: directory, URI, Iceberg metadata file, or db.table "
                                        "with --catalog/--catalog-uri")],
    not_null: Annotated[list[str] | None, typer.Option("--not-null", help="COL has no nulls, in no file "
                                                       "missing (repeatable)")] = None,
    backfilled: Annotated[list[str] | None, typer.Option("--backfilled", help="every file holds COL, "
                                                         "without nulls; or 'NEW from OLD': NEW is null "
                                                         "only where OLD is (repeatable)")] = None,
    agree: Annotated[list[str] | None, typer.Option("--agree", help="A=B, or a Spark SQL boolean "
                                                    "expression, where both sides are written")] = None,
    fits: Annotated[list[str] | None, typer.Option("--fits", help="COL:TYPE: every value fits the narrower "
                                                   "type (int32, float, decimal(10,2))")] = None,
    values: Annotated[list[str] | None, typer.Option("--values", help="COL: values outside --allowed")
                      ] = None,
    allowed: Annotated[str | None, typer.Option("--allowed", help="V1,V2,...: the values --values allows")
                       ] = None,
    unit_drift: Annotated[list[str] | None, typer.Option("--unit-drift", help="COL: no step of ~100x in its "
                                                         "magnitude along the table's order")] = None,
    allowed_file: Annotated[Path | None, typer.Option("--allowed-file", help="one allowed value per line")
                            ] = None,
    allowed_table: Annotated[str | None, typer.Option(
        "--allowed-table", help="db.table: its first column's values are the allowed ones (Spark)")] = None,
    partition: Annotated[list[str] | None, typer.Option("--partition", help="K=V: only this partition "
                                                        "(repeatable)")] = None,
    since: Annotated[str | None, typer.Option("--since", help="first day of the date partition")] = None,
    until: Annotated[str | None, typer.Option("--until", help="last day of the date partition")] = None,
    key: Annotated[list[str] | None, typer.Option("--key", help="key column shown with offending rows "
                                                  "(repeatable)")] = None,
    footer_only: Annotated[bool, typer.Option("--footer-only", help="statistics only: no data read")] = False,
    no_values: Annotated[bool, typer.Option("--no-values", help="leave data values out of the output")
                         ] = False,
    version: Annotated[int | None, typer.Option(
        "--version", help="Delta table version or Iceberg snapshot id")] = None,
    timestamp: TimestampOption = None,
    format_hint: FormatHintOption = "auto",
    catalog: CatalogOption = None,
    catalog_uri: CatalogUriOption = None,
    spark_catalog: SparkCatalogOption = False,
    output: FormatOption = OutputFormat.text,
) -> None:
    """Prove what no schema shows, from statistics first and from the data (Spark, Great
    Expectations) where they cannot decide. Exit 0 all proven, 1 any refuted, 3 some unknown."""
    from schemaguard import api
    from schemaguard.report import check as checking

    allowed_set = allowed_values(allowed, allowed_file, allowed_table) if values else None
    if spark_catalog:
        status(f"looking {path} up in the Spark catalog")
    result = api.check(path, not_null=not_null or (), backfilled=backfilled or (), agree=agree or (),
                       fits=fits or (), values={c: allowed_set or () for c in values or ()},
                       unit_drift=unit_drift or (), footer_only=footer_only,
                       partitions=dict(pair(p) for p in partition or ()), since=since, until=until,
                       keys=key or (), with_values=not no_values, version=version, timestamp=timestamp,
                       format_hint=format_hint, catalog=catalog, catalog_uri=catalog_uri,
                       spark_catalog=spark_catalog, announce=spark_note)
    render(output, result.report, checking.check_json, checking.check_text)
    raise typer.Exit(result.exit_code)


PLAN_FORMATS = ("text", "json", "markdown", "html", "sarif", "junit")
RENAME_FORM = "OLD=NEW, e.g. weight=weight_kg"


@app.command()
def plan(
    old: Annotated[str | None, typer.Argument(
        help="the schema today: a schema file, Parquet file or table (with --ddl and --table: the table's "
             "current schema)", show_default=False)] = None,
    new: Annotated[str | None, typer.Argument(help="the schema after the change (or --ddl)",
                                              show_default=False)] = None,
    ddl: Annotated[list[str] | None, typer.Option(
        "--ddl", help="the change as Spark SQL: ALTER TABLE statements (repeatable)")] = None,
    ddl_file: Annotated[Path | None, typer.Option(
        "--ddl-file", help="a file of Spark SQL ALTER TABLE statements (the change)")] = None,
    table: Annotated[str | None, typer.Option("--table", help="the table: every writer schema on disk, "
                                              "and the checks run on its data")] = None,
    identity: IdentityOption = None,
    profiles: Annotated[list[str] | None, typer.Option(
        "--profile", help=f"a reader of the table (repeatable): {', '.join(PROFILE_NAMES)}")] = None,
    deploy_order: Annotated[str, typer.Option("--deploy-order", help="readers-first|writers-first|unknown")
                            ] = "unknown",
    readers_behind: Annotated[int | None, typer.Option(
        "--readers-behind", min=1, help="how many versions behind a reader can be (default: any)")] = None,
    readers: Annotated[int, typer.Option("--readers", min=1, help="consumer teams, for the schedule")] = 10,
    rename: Annotated[list[str] | None, typer.Option("--rename", help="OLD=NEW: an intended rename "
                                                     "(repeatable)")] = None,
    query_log: Annotated[list[Path] | None, typer.Option(
        "--query-log", help="query log (JSON lines, CSV, Spark event log): who still reads the old "
        "column (repeatable)")] = None,
    event_log: Annotated[list[Path] | None, typer.Option(
        "--event-log", help="Spark event log (a file, a folder of logs, a rolling eventlog_v2_* folder; any "
        "codec Spark writes) or OpenLineage run events (JSON lines): the columns each job read (repeatable)")
    ] = None,
    sql: Annotated[Path | None, typer.Option("--sql", help="directory of consumer .sql files")] = None,
    query_table: Annotated[str | None, typer.Option(
        "--query-table", help="how queries name the table (default: --table's db.table or directory name)")
    ] = None,
    conf: Annotated[Path | None, typer.Option("--conf", help="configuration file: its [plan] weeks")] = None,
    footer_only: Annotated[bool, typer.Option("--footer-only", help="checks from statistics only")] = False,
    view_name: Annotated[str, typer.Option(
        "--view-name", help="the views that keep each schema version readable: {table} and {version}")
    ] = "{table}__v{version}",
    allow_quiet: AllowQuietOption = False,
    catalog: CatalogOption = None,
    catalog_uri: CatalogUriOption = None,
    spark_catalog: SparkCatalogOption = False,
    output: Annotated[str, typer.Option(
        "--format", help="text, json, markdown, html; sarif or junit: the DDL linted for CI")] = "text",
) -> None:
    """How to ship a schema change: its operations, the mode it needs, the ordered steps with
    their schedule, checks and Spark SQL (with --table). Exit 0 safe as one edit, 1 a staged plan
    is needed. With --format sarif|junit, the DDL's statements linted, each at its line."""
    from schemaguard import api
    from schemaguard.inputs import choice
    from schemaguard.report import plan as planning

    shape = choice(output, PLAN_FORMATS, "--format")
    statements = ddl_text(ddl or [], ddl_file)
    if shape in ("sarif", "junit") and statements is None:
        fail(f"plan --format {shape} lints DDL: give --ddl or --ddl-file")
    if spark_catalog and table is not None:
        status(f"looking {table} up in the Spark catalog")
    result = api.plan(old, new, table=table, ddl=statements[0] if statements else None,
                      ddl_source=statements[1] if statements else "--ddl", identity=identity,
                      profiles=profiles or (), deploy_order=deploy_order, readers_behind=readers_behind,
                      readers=readers, renames=dict(pair(r, "--rename", RENAME_FORM) for r in rename or ()),
                      query_logs=query_log or (), event_logs=event_log or (), sql=sql,
                      query_table=query_table,
                      conf=conf, footer_only=footer_only, view_name=view_name, allow_quiet=allow_quiet,
                      catalog=catalog, catalog_uri=catalog_uri, spark_catalog=spark_catalog,
                      progress=bars(OutputFormat.text if shape == "text" else OutputFormat.json),
                      announce=spark_note)
    linted = result.lint() if shape in ("sarif", "junit") else None
    if linted is not None:
        from schemaguard.report import lint as linting

        if shape == "sarif":
            print_json(linting.lint_sarif(linted))
        else:
            sys.stdout.write(linting.lint_junit(linted))
        raise typer.Exit(linted.exit_code)
    if shape in ("markdown", "html"):
        to_text = planning.plan_markdown if shape == "markdown" else planning.plan_html
        sys.stdout.write(to_text(result.plan))
    else:
        render(OutputFormat(shape), result.plan, planning.plan_json, planning.plan_text)
    raise typer.Exit(result.exit_code)


@app.command()
def migrate(
    action: Annotated[str, typer.Argument(
        help="start (expand), step, complete (contract), rollback, status")],
    plan_file: Annotated[Path, typer.Option(
        "--plan", help="a plan written by `plan --table T --format json`")],
    step: Annotated[str | None, typer.Option(
        "--step", help="with `step`: the step's kind, e.g. backfill")] = None,
    apply: Annotated[bool, typer.Option(
        "--apply", help="run the step's SQL on the plan's table when its entry checks hold (opt-in); "
        "without it nothing is written anywhere")] = False,
    conf: Annotated[Path | None, typer.Option(
        "--conf", help="configuration file: its [catalog] holds the `migrations` table")] = None,
    catalog: CatalogOption = None,
    catalog_uri: CatalogUriOption = None,
) -> None:
    """Run a plan's steps, each gated by its entry checks on the data as it is now. Exit 0 done (or,
    without --apply, would run), 1 an entry check refuted (nothing applied), 3 one unknown, 2 bad input."""
    from schemaguard import inputs
    from schemaguard import migrate as migrating
    from schemaguard.config import CatalogConfig, load_config

    if action not in migrating.ACTIONS:
        fail(f"migrate: {action!r} is not one of {', '.join(migrating.ACTIONS)}")
    m = migrating.load_migration(plan_file)
    kinds = [] if action in ("status", "rollback") else migrating.steps_of(action, m, step)
    reports = load_config(conf).catalog if conf is not None else CatalogConfig()
    iceberg = inputs.catalog_ref(catalog, catalog_uri)
    from schemaguard.report.catalog import MIGRATIONS, migration_rows, migration_rows_from_log
    from schemaguard.spark import embedded_table_location, get_spark, kept_conf

    # The records come from the migrations table's own log where its place is known (the embedded
    # catalog makes it there, managed: no folder, no records yet). So `status` and a step shown
    # without --apply start no Spark, and a step applied reads no metastore for them.
    records = embedded_table_location(reports.catalog, reports.database, MIGRATIONS)
    recorded = None
    if records is not None:
        recorded = migration_rows_from_log(records, m.plan_id) or []
    if action == "status" and recorded is not None:
        show_status(m, recorded)
    in_spark = iceberg is None and m.target == m.table and "/" not in m.table
    known = inputs.managed_location(m.table) if in_spark else m.table  # found without Spark
    spark = None
    if apply or action == "rollback" or recorded is None:
        status("starting Spark (a migration step runs its checks and SQL through it)")
        brief = migrating.brief_jvm(replace(m, location=known if m.table_format == "delta" else None), kinds)
        spark = get_spark("schemaguard-migrate", brief=brief)
        if recorded is None:
            recorded = migration_rows(spark, reports, m.plan_id)
    if action == "status":
        show_status(m, recorded)
    typer.echo(f"plan {m.plan_id} on {m.table} ({m.table_format})")
    if in_spark:
        status(f"looking {m.table} up in the Spark catalog")
    # Without Spark, a table the embedded catalog manages is found in its warehouse. With Spark up
    # (a step applied), the metastore says where the table its statements write lies (the first
    # statement would load it anyway), and it must be the one whose log is read.
    where = inputs.catalog_location(m.table, spark) if in_spark else m.table
    if in_spark and spark is not None:
        inputs.same_home(m.table, where, known)
    m = replace(m, location=where if m.table_format == "delta" else None)
    if action == "rollback":
        with kept_conf(spark):  # a caller's session (a notebook's) keeps its settings
            writer = spark or get_spark("schemaguard-migrate", brief=True)
            show_run(migrating.run_rollback(m, writer, reports, apply, recorded), apply)
        raise typer.Exit(0)
    read_now = partial(inputs.read_table, where, spark=spark, catalog=iceberg,
                       progress=bars(OutputFormat.text))
    worst = 0
    with kept_conf(spark):  # Delta records each commit's version in the session's settings
        for kind in kinds:
            run = migrating.run_step(m, kind, spark, reports, apply, read_now,
                                     inputs.spark_factory("schemaguard-migrate", spark), recorded, iceberg)
            show_run(run, apply)
            worst = max(worst, run.exit_code)
            if run.status not in ("applied", "already-applied"):
                break  # a later step never runs after one that did not
    raise typer.Exit(worst)


@app.command()
def audit(
    locations: Annotated[list[str] | None, typer.Argument(
        help="tables to audit with the default settings, no configuration file: paths, URIs or "
             "catalog names (db.table)", show_default=False)] = None,
    conf: Annotated[Path | None, typer.Option(
        "--conf", help="configuration file (default conf/schemaguard.toml when no table is named)")] = None,
    proof: Annotated[list[str] | None, typer.Option(
        "--proof", help="with named tables: a proof on each, as KIND SUBJECT (`not-null channel`, "
                        "`fits qty:int32`, `backfilled 'new from old'`; repeatable)")] = None,
    run_id: Annotated[str | None, typer.Option(
        "--run-id", help="this run's id (a scheduler's id makes retries idempotent); default: new")] = None,
    tables: Annotated[list[str] | None, typer.Option(
        "--table", help="audit only this configured table (repeat for more)")] = None,
    schema: Annotated[str | None, typer.Option(
        "--schema", help="check the lake against this schema instead of the current one (one table)")] = None,
    catalog: Annotated[bool, typer.Option(help="write the report into the catalog (Delta tables)")] = True,
    proofs_exit: Annotated[bool, typer.Option(
        "--proofs-exit", help="exit 3 when a configured proof stays unknown and nothing fails (as check)")
    ] = False,
    allow_quiet: AllowQuietOption = False,
    full: Annotated[bool, typer.Option(
        "--full", help="read every footer, not only those of files changed since the last audit")] = False,
    output: FormatOption = OutputFormat.text,
) -> None:
    """Audit every configured table: versions on disk against the current schema, drift, unreadable
    files, the configured proofs. Reports land in the report folder and the catalog. Exit 1 if a
    finding at or above the fail level is not waived."""
    from schemaguard import api
    from schemaguard.report import scan

    if locations and conf is not None:
        fail("audit: name tables or give --conf, not both (a configuration lists its own tables)")
    if proof and not locations:
        fail("audit: --proof goes with named tables; a configuration file lists its proofs per table")
    if not locations and conf is None:
        conf = Path("conf/schemaguard.toml")
    what: list[str] | Path = locations or conf  # type: ignore[assignment]  # one of them is set
    result = api.audit(what, run_id=run_id, tables=tables or (), schema=schema, catalog=catalog,
                       allow_quiet=allow_quiet, full=full, proofs=proof or (),
                       progress=partial(scan.progress, enabled=output == OutputFormat.text), announce=status)
    show_audit(result, output, conf)
    raise typer.Exit(audit_exit(result, proofs_exit))


class FindingsFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"


@app.command()
def findings(
    conf: Annotated[Path, typer.Option("--conf", help="configuration file")] = Path("conf/schemaguard.toml"),
    where: Annotated[bool, typer.Option(
        "--where", help="only say where the latest reports are and the Spark SQL that reads the "
                        "findings (no Spark started)")] = False,
    output: Annotated[FindingsFormat, typer.Option("--format", help="text, json or csv")] = (
        FindingsFormat.text),
) -> None:
    """The findings of the latest complete audit run in the catalog: read from the report tables'
    own Delta logs where their place is known (the embedded catalog), else with Spark SQL."""
    from schemaguard.config import load_config
    from schemaguard.report import catalog as catalog_tables
    from schemaguard.report import folder
    from schemaguard.spark import embedded_table_location

    config = load_config(conf)
    query = catalog_tables.findings_query(config.catalog)
    if where:
        newest = folder.latest(config.report_dir)
        typer.echo(f"reports: {shown(newest) if newest else f'none yet in {shown(config.report_dir)}'}")
        typer.echo(f"catalog: `schemaguard findings --conf {conf}`, or in Spark SQL:\n{query}")
        return
    runs, found = (embedded_table_location(config.catalog.catalog, config.catalog.database, name)
                   for name in ("runs", "findings"))
    rows = catalog_tables.findings_from_log(runs, found) if runs is not None and found is not None else None
    if rows is None:
        from pyspark.errors import AnalysisException

        from schemaguard.spark import get_spark

        status("reading the findings with Spark SQL")
        try:
            spark = get_spark("schemaguard-findings", config.spark, brief=True)
            rows = [r.asDict() for r in spark.sql(query).collect()]
        except AnalysisException as e:
            fail(f"cannot read the findings (has an audit written to this catalog?): {first_line(e)}")
    if output == FindingsFormat.json:
        print_json(rows)
    elif output == FindingsFormat.csv:
        import csv

        writer = csv.DictWriter(sys.stdout, ["run_id", "started_at", *catalog_tables.FINDINGS_COLUMNS])
        writer.writeheader()
        writer.writerows(rows)
    else:
        show_findings(rows)


# The command line's own process (never a caller's). Its stages' acyclic objects (nodes, findings)
# were walked by the cyclic collector again and again at Python's threshold (700): 30% of a scan of
# 2 x 20,000 changed columns. The stages pause it (acyclic.py); `scan` and `gate` (no data proofs,
# whose Great Expectations cycles a freeze would keep) freeze what each stage leaves.
GC_THRESHOLD = (50_000, 20, 20)


def main() -> None:
    gc.set_threshold(*GC_THRESHOLD)
    try:
        code = app(standalone_mode=False)
    except ClickUsageError as e:  # a wrong option or argument: one line, as for any bad input
        command = e.ctx.command_path if e.ctx is not None else "schemaguard"
        fail(f"{command}: {e.format_message() or 'no command given'} (see '{command} --help')")
    except (UsageError, OSError) as e:
        fail(str(e))
    except RecursionError:  # a structure parsed whole, then walked: too deep for any reader
        fail(f"an input {TOO_DEEP}")
    except typer.Abort:
        sys.exit(130)  # interrupted (Ctrl-C), as a shell reports it
    sys.exit(code if isinstance(code, int) else 0)
