"""The Python API (`import schemaguard as sg`): each function is the computation of its command,
returning a result instead of printing. The command line and the `jobs/` call these functions.

Spark: wherever it is needed, `spark=` takes the caller's SparkSession and uses it as it is (its
catalog, its configuration); schemaguard never stops a session it did not start and never sets
a session's configuration. Without `spark=`, the embedded default (`schemaguard.spark`).

Bad input raises `InvalidInput` with the one-line message the command prints (exit 2 there).
Nothing here imports pyspark or great_expectations until a function needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from schemaguard.errors import UsageError
from schemaguard.inputs import (
    SchemaLike,
    catalog_location,
    catalog_ref,
    choice,
    ddl_options,
    fits_proof,
    given_options,
    located,
    modelled,
    read_options,
    read_table,
    schemas,
    spark_factory,
    with_data,
)
from schemaguard.names import (
    MERGE_PROFILE_NAMES,
    PROFILE_NAMES,
)
from schemaguard.spark import kept_conf

if TYPE_CHECKING:
    from schemaguard.base import Options
    from schemaguard.results import (
        AuditResult,
        CheckResult,
        CompareResult,
        EvolveResult,
        GateResult,
        MergeResult,
        PlanResult,
        ScanResult,
    )

# ---------------------------------------------------------------------------------------------
# The public functions


def scan(location: str, *, spark: Any = None, engine: str = "auto", format_hint: str = "auto",
         version: int | None = None, timestamp: str | None = None, include_unreferenced: bool = False,
         catalog: str | None = None, catalog_uri: str | None = None, max_files: int = 1000,
         progress: Any = None) -> ScanResult:
    """Every footer of a table read: its schema versions, the columns that change between them,
    unreadable files (`schemaguard scan`)."""
    from schemaguard.checks import run_checks
    from schemaguard.checks.summary import summarize
    from schemaguard.results import ScanResult

    how = read_options(format_hint, version, timestamp, include_unreferenced)
    ref = catalog_ref(catalog, catalog_uri)
    where = location if ref is not None else located(location, spark, False)
    table = with_data(read_table(where, spark=spark, engine=engine, how=how, catalog=ref, progress=progress))
    return ScanResult(table, summarize(table.location, table), tuple(run_checks(table)), max_files)


def compare(writer: SchemaLike, reader: SchemaLike, *, profile: str, identity: str | None = None,
            type_widening: bool = False, column_mapping: str = "none", iceberg_version: str = "2",
            uniform: bool = False, case_sensitive: bool = False, allow_quiet: bool = False,
            vectorized_reader: bool = True, options: Options | None = None,
            spark: Any = None) -> CompareResult:
    """Can a reader with schema `reader` read data written with `writer` (every version of it)? The
    reader options are the keywords, or one `schemaguard.Options` as `options`."""
    from schemaguard.checks.compare import compare as compare_schemas
    from schemaguard.results import CompareResult

    profile = choice(profile, list(PROFILE_NAMES), "profile")
    options = given_options(options, "compare", identity=identity, type_widening=type_widening,
                            column_mapping=column_mapping, iceberg_version=iceberg_version, uniform=uniform,
                            case_sensitive=case_sensitive, allow_quiet=allow_quiet,
                            vectorized_reader=vectorized_reader)
    writers, notes = schemas([writer], spark=spark, unnamed="writer")
    readers, reader_notes = (writers, []) if reader is writer or reader == writer else schemas(
        [reader], spark=spark, unnamed="reader")
    label, reader_schema = readers[-1]
    modelled(writers + readers, profile)
    if len(readers) > 1:
        notes.append(f"the reader is {label}, the newest of {len(readers)} versions of {reader}")
    return CompareResult(compare_schemas(writers, (label, reader_schema), profile, options,
                                         tuple(notes + reader_notes)))


def merge(*sources: SchemaLike, profile: str, type_widening: bool = False, case_sensitive: bool = False,
          options: Options | None = None, spark: Any = None) -> MergeResult:
    """Does the merge of the schemas succeed (`spark-merge` or `delta-merge`), and what comes out?
    The options are the keywords, or one `schemaguard.Options` as `options`."""
    from schemaguard.checks.compare import merge as merge_schemas
    from schemaguard.results import MergeResult

    profile = choice(profile, list(MERGE_PROFILE_NAMES), "profile")
    labelled, notes = schemas(sources, at_least=2, what="merge", spark=spark)
    modelled(labelled, profile)
    options = given_options(options, "merge", type_widening=type_widening, case_sensitive=case_sensitive)
    return MergeResult(merge_schemas(labelled, profile, options, tuple(notes)))


def evolve(*versions: SchemaLike, mode: str, profile: str, identity: str | None = None,
           type_widening: bool = False, column_mapping: str = "none", iceberg_version: str = "2",
           uniform: bool = False, case_sensitive: bool = False, allow_quiet: bool = False,
           vectorized_reader: bool = True, options: Options | None = None, spark: Any = None) -> EvolveResult:
    """May the last version follow the others under `mode`, as a schema registry checks it? The
    reader options are the keywords, or one `schemaguard.Options` as `options`."""
    from schemaguard.checks.compare import evolve as evolve_schemas
    from schemaguard.names import Mode
    from schemaguard.results import EvolveResult

    checked = choice(mode, list(Mode), "mode")
    profile = choice(profile, list(PROFILE_NAMES), "profile")
    options = given_options(options, "evolve", identity=identity, type_widening=type_widening,
                            column_mapping=column_mapping, iceberg_version=iceberg_version, uniform=uniform,
                            case_sensitive=case_sensitive, allow_quiet=allow_quiet,
                            vectorized_reader=vectorized_reader)
    labelled, notes = schemas(versions, at_least=2, what="evolve", spark=spark)
    modelled(labelled, profile)
    return EvolveResult(evolve_schemas(labelled, checked, profile, options, tuple(notes)))


def gate(location: str, *, allow_quiet: bool = False, spark: Any = None, progress: Any = None) -> GateResult:
    """Before enabling mergeSchema: does Spark's merged read succeed, what comes out, which files
    and columns conflict, what a read without it silently loses."""
    from schemaguard.checks.gate import evaluate_gate
    from schemaguard.results import GateResult

    read = with_data(read_table(located(location, spark, False), spark=spark, progress=progress))
    return GateResult(evaluate_gate(read, allow_quiet))


def check(table: str, *, not_null: Iterable[str] = (), backfilled: Iterable[str] = (),
          agree: Iterable[str] = (), fits: Iterable[str] = (),
          values: Mapping[str, Iterable[str]] | None = None, unit_drift: Iterable[str] = (),
          spark: Any = None, footer_only: bool = False,
          partitions: Mapping[str, str] | None = None, since: str | None = None, until: str | None = None,
          keys: Iterable[str] = (), with_values: bool = True, version: int | None = None,
          timestamp: str | None = None, format_hint: str = "auto", catalog: str | None = None,
          catalog_uri: str | None = None, spark_catalog: bool = False,
          announce: Callable[[], None] | None = None) -> CheckResult:
    """Prove what no schema shows, from statistics first and from the data (Spark, Great
    Expectations) where they cannot decide. `fits` takes `COL:TYPE`; `values` maps a column to its
    allowed values. A table name of the session's catalog needs `spark_catalog=True`."""
    from schemaguard.proofs import Proof, proof_of
    from schemaguard.proofs.run import Scope, run_proofs
    from schemaguard.report.check import CheckReport
    from schemaguard.results import CheckResult

    proofs = [*(Proof("not-null", c) for c in not_null), *(proof_of("backfilled", c) for c in backfilled),
              *(Proof("agree", e) for e in agree), *(fits_proof(f) for f in fits),
              *(Proof("values", c, allowed=tuple(a)) for c, a in (values or {}).items()),
              *(Proof("unit-drift", c) for c in unit_drift)]
    if not proofs:
        raise UsageError("check: name at least one proof (not_null, backfilled, agree, fits, values, "
                         "unit_drift)")
    how = read_options(format_hint, version, timestamp)
    ref = catalog_ref(catalog, catalog_uri)
    where = table if ref is not None else located(table, spark, spark_catalog)
    read = with_data(read_table(where, how=how, catalog=ref))
    scope = Scope(tuple((partitions or {}).items()), since, until)
    factory = spark_factory("schemaguard-check", spark, announce, read)
    with kept_conf(spark):
        results = run_proofs(read, proofs, scope, factory, footer_only, tuple(keys), with_values)
    return CheckResult(CheckReport(table, read.table_format, scope, tuple(results)))


DeployOrder = Literal["readers-first", "writers-first", "unknown"]


def plan(old: SchemaLike | None = None, new: SchemaLike | None = None, *, table: str | None = None,
         ddl: str | Sequence[str] | None = None, ddl_source: str = "--ddl", identity: str | None = None,
         profiles: Sequence[str] = (), deploy_order: str = "unknown", readers_behind: int | None = None,
         readers: int = 10, renames: Mapping[str, str] | None = None, query_logs: Sequence[str | Path] = (),
         event_logs: Sequence[str | Path] = (), sql: str | Path | None = None, query_table: str | None = None,
         conf: str | Path | None = None, footer_only: bool = False, view_name: str = "{table}__v{version}",
         allow_quiet: bool = False, options: Options | None = None, catalog: str | None = None,
         catalog_uri: str | None = None, spark_catalog: bool = False, spark: Any = None, progress: Any = None,
         announce: Callable[[], None] | None = None) -> PlanResult:
    """How to ship a schema change: operations, the mode it needs, the ordered steps with their
    schedule, checks and (with `table`) Spark SQL. The change is OLD -> NEW, or `ddl` (Spark SQL
    ALTER TABLE statements, one string or several) over `old` or the table's current schema. The
    reader options are `identity` and `allow_quiet`, or one `schemaguard.Options` as `options`; a
    table's log and the DDL's table properties add theirs."""
    from schemaguard.checks.compat import table_options
    from schemaguard.planning.ddl import apply_ddl, parse_ddl
    from schemaguard.planning.evidence import Evidence
    from schemaguard.planning.planner import Durations, PlanRequest
    from schemaguard.planning.run import SqlAsk, plan_change, table_readers
    from schemaguard.planning.sql import check_view_name
    from schemaguard.planning.treatments import DEPLOY_ORDERS
    from schemaguard.results import PlanResult
    from schemaguard.rules.profiles import PROFILES

    order = choice(deploy_order, DEPLOY_ORDERS, "deploy_order")
    given = given_options(options, "plan", identity=identity, allow_quiet=allow_quiet)
    chosen = tuple(choice(p, list(PROFILE_NAMES), "profile") for p in profiles)
    try:
        check_view_name(view_name)
    except ValueError as e:
        raise UsageError(str(e)) from None
    declared = tuple((renames or {}).items())
    durations = Durations()
    if conf is not None:
        from schemaguard.config import load_durations

        durations = load_durations(conf)
    text = ddl if isinstance(ddl, str) or ddl is None else ";\n".join(ddl)
    if text is None and (old is None or new is None):
        raise UsageError("plan: give old and new, or the change as ddl (--ddl/--ddl-file) over old or the "
                         "table's schema (table, --table)")
    if text is not None and new is not None:
        raise UsageError("plan: new comes from ddl (--ddl/--ddl-file): give one or the other")
    named = (table if spark_catalog else Path(table.rstrip("/")).name) if table else query_table
    if text is not None:
        parse_ddl(text, ddl_source, named)  # a statement not understood: refused before any read
    read = None
    if table is not None:
        location = catalog_location(table, spark) if spark_catalog else table
        read = read_table(location, spark=spark, catalog=catalog_ref(catalog, catalog_uri), progress=progress)
    current = read.current()[1] if read is not None else None
    old_schema = schemas([old], spark=spark)[0][-1][1] if old is not None else current
    if old_schema is None:
        raise UsageError("plan: ddl (--ddl) needs the schema today: old, or a table (--table) with a "
                         "readable file")
    change, properties = None, {}
    if text is not None:
        change = apply_ddl(old_schema, text, ddl_source, named)
        new_schema, properties = change.new, dict(change.properties)
        declared = change.renames + declared
    else:
        new_schema = schemas([new], spark=spark)[0][-1][1]
    chosen = chosen or table_readers(read)
    for name in chosen:
        modelled([(str(old) if old is not None else "the table's schema", old_schema),
                  (str(new) if new is not None else "the DDL's schema", new_schema)], name)
    options = ddl_options(table_options(read, given) if read is not None else given, properties)
    request = PlanRequest(
        old_schema, new_schema, options.identity or PROFILES[chosen[0]].default_identity, chosen, order,
        readers_behind, readers, declared, options,
        tuple(v.footer.schema for v in read.versions) if read else (), table, durations,
        drop_needs_mapping=read is not None and read.delta is not None and options.column_mapping == "none",
        check_table=f"{table} --spark-catalog" if spark_catalog else None)
    logs = [Path(p) for p in [*query_logs, *event_logs]]  # one reader: each log's kind told by content
    factory = spark_factory("schemaguard-plan", spark, announce, read)
    evidence = Evidence(new_schema, read, factory, footer_only)
    by_name = spark_catalog or catalog_ref(catalog, catalog_uri) is not None  # not a path
    sql_ask = SqlAsk(table, by_name, tuple(st.text for st in change.statements) if change else (),
                     view_name) if read is not None and table is not None else None
    with kept_conf(spark):
        result = plan_change(request, evidence, logs, Path(sql) if sql else None, query_table, sql_ask)
    return PlanResult(result, change, read, ddl_source)


def audit(conf_or_tables: str | Path | Sequence[str], *, spark: Any = None, catalog: bool = True,
          run_id: str | None = None, tables: Sequence[str] = (), schema: str | None = None,
          allow_quiet: bool = False, full: bool = False, reports: bool = True, proofs: Sequence[str] = (),
          progress: Any = None, announce: Callable[[str], None] | None = None) -> AuditResult:
    """Audit every configured table (a configuration file), or the tables at the given locations
    with the default settings: versions on disk against the current schema, drift, unreadable
    files, the configured proofs. Reports land in the report folder (`reports`) and, with
    `catalog`, in the catalog's Delta tables through the session."""
    import time

    from schemaguard import auditing
    from schemaguard.config import load_config
    from schemaguard.report import folder
    from schemaguard.results import AuditResult

    if run_id is not None and not folder.RUN_ID.fullmatch(run_id):
        raise UsageError(f"run_id {run_id!r} cannot name a report folder: letters, digits, '.', '_' "
                         "and '-' only")
    label = str(conf_or_tables) if isinstance(conf_or_tables, str | Path) else "(tables named: no conf)"
    if isinstance(conf_or_tables, str | Path):
        if proofs:
            raise UsageError("audit: proofs= go with named tables; a configuration file lists its proofs")
        config = load_config(conf_or_tables)
    else:
        config = auditing.named_tables_config([str(t) for t in conf_or_tables], proofs)
    config = auditing.narrowed(config, list(tables), schema, catalog, allow_quiet)
    if full:
        config = replace(config, incremental=False)
    say = announce or (lambda _: None)
    started, clock = datetime.now(UTC), time.monotonic()  # the run's time is the whole call's
    auditing.check_paths(config)
    warm_up = None
    if config.catalog.enabled:
        from schemaguard.report.catalog import warm

        warm_up = partial(warm, catalog=config.catalog)
    lazy = auditing.LazySpark(config.spark, spark, say, warm_up)
    if spark is not None and config.catalog.enabled:  # the caller's session: refused now, before any work
        from schemaguard.spark import require_delta

        require_delta(spark, "the catalog report (Delta tables)")
    with kept_conf(spark):  # a caller's session keeps its settings, whatever our threads commit
        try:
            run = auditing.run_audit(config, run_id, lazy, progress or auditing.no_progress, now=started,
                                     since=clock)
            paths = folder.write_reports(run, config.report_dir,
                                         [f for f in config.formats if f != "terminal"]) if reports else {}
            if config.catalog.enabled:
                run = auditing.write_catalog(run, config, lazy, label, run_id is None, say, started, clock)
        finally:
            if spark is not None:
                lazy.quiet()  # nothing of ours goes on in the caller's session once the call returns
    return AuditResult(run, config, paths)
