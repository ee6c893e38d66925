"""The lake audit: for each configured table, read every footer, group the versions, check each
version on disk against the table's current schema under the configured readers and mode, and
collect the findings with their waivers. Pure of output: the CLI and the jobs render and store it.

Every table is listed before any footer is read, so a missing table stops the run (exit 2)
before anything is written. Spark is started only when something needs it, and no sooner: a
catalog table or the Spark engine before reading, a data proof when its first file needs reading,
the catalog report after the audit. So a bad column in a proof is refused before Spark starts.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemaguard.checks import CheckOptions, run_checks
from schemaguard.checks.compat import table_options
from schemaguard.checks.finding import by_severity
from schemaguard.checks.summary import summarize
from schemaguard.checks.waivers import waive, waiver_findings
from schemaguard.config import AuditConfig, TableConfig
from schemaguard.errors import UsageError, first_line
from schemaguard.formats.spark_ddl import qualified
from schemaguard.lake.discover import DiscoveryError, Lister, Listing, discover
from schemaguard.lake.file_records import DataFiles
from schemaguard.lake.iceberg import CatalogRef
from schemaguard.lake.scan import lister_for, use_spark
from schemaguard.lake.table import ReadOptions, TableRead, locate, read_listing
from schemaguard.model import Schema
from schemaguard.names import is_table_name
from schemaguard.proofs import ProofResult
from schemaguard.proofs.audit_run import AuditRun, Phases, TableAudit
from schemaguard.proofs.findings import proof_finding
from schemaguard.proofs.run import Scope, check_columns, run_proofs
from schemaguard.spark import brief_for

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Per table: (files in all, label=table name) -> a context whose value advances by files done, or None.
Progress = Callable[..., AbstractContextManager[Callable[[int], None] | None]]


def no_progress(total: int, label: str = "") -> AbstractContextManager[None]:
    return nullcontext()


class AuditError(UsageError):
    """The audit cannot start: a table the catalog does not know, a schema file that does not load."""


@dataclass(frozen=True)
class _Target:
    table: TableConfig
    listing: Listing
    catalog_schema: Schema | None
    how: ReadOptions  # an Iceberg catalog table: the metadata file its catalog names


def new_run_id(now: datetime) -> str:
    """Sortable by time, unique across concurrent runs: `20261202T151402Z-1a2b3c`."""
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def reading_needs_spark(config: AuditConfig) -> bool:
    """Whether the tables cannot even be listed without Spark: a metastore table or the Spark engine."""
    return config.engine == "spark" or any(t.catalog_table and not t.iceberg_catalog for t in config.tables)


def brief_work(tables: Sequence[tuple[TableConfig, DataFiles]]) -> bool:
    """Whether the audit's Spark work is brief (`spark.brief_for`): the files of its tables with
    proofs (each table's listing) are few; the rest of it, the catalog write, is small."""
    return brief_for(sum(files.total_size() for table, files in tables if table.proofs))


class LazySpark:
    """The run's Spark session: the caller's, or ours, started on its first use or, once it is
    certain to be needed, in the background while the audit goes on (`prestart`). `seconds` is
    the time the run waited for it: the start, less what ran meanwhile."""

    def __init__(self, conf: dict[str, str] | None = None, session: SparkSession | None = None,
                 announce: Callable[[str], None] | None = None,
                 warm: Callable[[SparkSession], None] | None = None) -> None:
        self.conf = conf
        self.session = session
        self.announce = announce
        self.warm = warm  # run on ours once started (the metastore's first answer, say)
        self.brief = False  # ours starts brief (`brief_work`), once the run knows its work
        self.seconds = 0.0
        self._starting: threading.Thread | None = None
        self._ready = threading.Event()  # the session is there (or failed to start)
        if session is not None:
            self._ready.set()
        self._failed: BaseException | None = None

    def prestart(self, why: str) -> None:
        """Start ours now in the background, or warm the caller's there; a later call waits for the
        session (not its warm-up)."""
        if self._starting is None and (self.session is None or self.warm is not None):
            self._starting = threading.Thread(target=self._start, args=(why,), daemon=True,
                                              name="schemaguard-spark-start")
            self._starting.start()

    def _start(self, why: str) -> None:
        from schemaguard.spark import get_spark

        if self.session is None:
            if self.announce is not None:
                self.announce(f"starting Spark ({why})")
            try:
                self.session = get_spark("schemaguard-audit", self.conf, brief=self.brief)
            except BaseException as e:  # met again, and raised, where the session is asked for
                self._failed = e
            finally:
                self._ready.set()
        if self.session is not None and self.warm is not None:
            self.warm(self.session)

    def __call__(self, why: str = "a data proof reads files") -> SparkSession:
        waited = time.monotonic()
        if self.session is None and self._starting is None:
            self._start(why)
        self._ready.wait()
        if self._failed is not None:
            raise self._failed
        assert self.session is not None
        self.seconds += time.monotonic() - waited
        return self.session

    def quiet(self) -> None:
        """Wait for a warm-up still going on (an audit that failed before its write)."""
        if self._starting is not None:
            self._starting.join()

    def settled(self) -> SparkSession:
        """The session once its warm-up is done too (before the catalog write, which it prepares)."""
        session = self("the catalog report needs it; --no-catalog skips it")
        self.quiet()
        return session

    def for_proofs(self) -> SparkSession:
        """The session for a data proof; ours, when started now, with Great Expectations imported
        while the JVM starts."""
        if self.session is None:
            from schemaguard.proofs.gx_spark import preload

            preload()
        return self("a data proof reads files")


def check_paths(config: AuditConfig) -> None:
    """Refuse a configured table path that does not exist, before Spark starts (a listing would
    say so too, but only after the JVM's start)."""
    from pyarrow import fs as pafs

    from schemaguard.lake.discover import redacted, resolve

    for t in config.tables:
        if t.path is None:
            continue
        try:
            filesystem, root, _ = resolve(t.path)
            missing = filesystem.get_file_info(root).type == pafs.FileType.NotFound
        except (DiscoveryError, OSError) as e:
            raise AuditError(f"table {t.name}: {first_line(e)}") from None
        if missing:
            raise AuditError(f"table {t.name}: no such table path: {redacted(t.path)}")


def run_audit(config: AuditConfig, run_id: str | None = None, spark: SparkSession | LazySpark | None = None,
              progress: Progress = no_progress, now: datetime | None = None,
              since: float | None = None) -> AuditRun:
    """Audit every configured table. The run started at `now`, `since` on the monotonic clock
    (default: this call); `spark` is the session, or ours to start when first needed."""
    started = now or datetime.now(UTC)
    clock = time.monotonic() if since is None else since
    lazy = spark if isinstance(spark, LazySpark) else LazySpark(config.spark, spark)
    if lazy.session is None and reading_needs_spark(config):
        lazy("a catalog table or the Spark engine")
    spent = _Spent()
    with spent("reading"):
        lister = lister_for(config.engine, lazy.session)
        targets = [_target(t, lazy.session, lister) for t in config.tables]  # every listing first: fail early
    lazy.brief = brief_work([(t.table, t.listing.files) for t in targets])
    tables = []
    for target in targets:
        with progress(len(target.listing.files), label=target.table.name) as advance:
            tables.append(_audit_table(target, config, lazy, advance, spent))
    run_findings = waiver_findings(config.waivers, [f for t in tables for f in t.findings], started.date())
    finished = started + timedelta(seconds=time.monotonic() - clock)
    return AuditRun(run_id or new_run_id(started), started, finished, config.fail_level,
                    tuple(tables), tuple(run_findings), Phases(lazy.seconds, **spent.seconds))


class _Spent:
    """Seconds spent in each phase of the audit, summed over the tables."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(("reading", "checks", "proofs"), 0.0)

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.seconds[phase] += time.monotonic() - start


def _target(table: TableConfig, spark: SparkSession | None, lister: Lister | None) -> _Target:
    schema = None
    how = ReadOptions()
    if table.catalog_table is None:
        assert table.path is not None
        location = table.path
    elif table.iceberg_catalog is not None:
        try:
            location, how = locate(table.catalog_table, how,
                                   CatalogRef(table.iceberg_catalog, table.iceberg_catalog_uri))
        except UsageError as e:
            raise AuditError(f"table {table.name}: {e}") from None
    elif spark is None:
        raise AuditError(f"table {table.name}: a catalog table needs Spark")
    else:
        location, schema = catalog_table(spark, table.catalog_table)
    try:
        return _Target(table, discover(location, lister), schema, how)
    except DiscoveryError as e:
        raise AuditError(f"table {table.name}: {e}") from None


def catalog_table(spark: SparkSession, name: str) -> tuple[str, Schema]:
    """The location and schema the catalog holds for `name` (validated parts, quoted here)."""
    from pyspark.errors import AnalysisException

    from schemaguard.formats.spark import schema_from_spark_json

    quoted = qualified(name.split("."))  # each part a validated NAME (names.is_table_name)
    try:
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {quoted}").collect()
        schema = schema_from_spark_json(spark.table(quoted).schema.json())
    except AnalysisException as e:
        raise AuditError(f"catalog table {name}: {first_line(e)}") from None
    location = next((r["data_type"] for r in rows if r["col_name"] == "Location"), None)
    if not location:
        raise AuditError(f"catalog table {name}: the catalog gives no location (a view?)")
    if location.startswith("file:") and not location.startswith("file://"):
        location = location[len("file:"):]  # Hive's `file:/x`; pyarrow wants a path or file:///x
    return location, schema


def _audit_table(target: _Target, config: AuditConfig, spark: LazySpark,
                 advance: Callable[[int], None] | None, spent: _Spent) -> TableAudit:
    table = target.table
    on_spark = use_spark(config.engine, len(target.listing.files), spark.session)
    with spent("reading"):
        read = read_listing(target.listing, advance, spark.session if on_spark else None, how=target.how,
                            report_dir=config.report_dir, incremental=config.incremental)
    try:
        check_columns(read, table.proofs)  # a column the table lacks is bad input, not a finding
    except UsageError as e:
        raise AuditError(f"table {table.name}: {e}") from None
    if config.catalog.enabled:  # the report needs Spark: its JVM starts while the audit goes on
        spark.prestart("the catalog report needs it; --no-catalog skips it")
    with spent("checks"):
        source, current = _current_schema(target, read)
        options = CheckOptions(current, table.profiles, table.mode, table_options(read, table.options))
        checked = run_checks(read, options)
    started = spark.seconds
    with spent("proofs"):
        proved = _proofs(table, read, spark)
    spent.seconds["proofs"] -= spark.seconds - started  # a start a proof caused is its own phase
    found = [replace(f, table=table.name) for f in [
        *checked, *(p for p in map(proof_finding, proved) if p is not None)]]
    return TableAudit(table.name, target.listing.root, summarize(table.name, read), source,
                      current or Schema(()), table.profiles, table.mode,
                      tuple(by_severity(waive(found, config.waivers))), proved)


def _proofs(table: TableConfig, read: TableRead, spark: LazySpark) -> tuple[ProofResult, ...]:
    """The table's configured proofs over its configured days; Spark is started only when some file
    needs its data read. A table with nothing in scope proves nothing: each proof is unknown."""
    if not table.proofs:
        return ()
    try:
        since, until = (d.isoformat() if d else None for d in (table.proofs_since, table.proofs_until))
        scope = Scope(since=since, until=until)
        return tuple(run_proofs(read, table.proofs, scope, spark=spark.for_proofs, keys=table.keys,
                                sensitive=table.sensitive))
    except UsageError as e:
        return tuple(ProofResult(p, "unknown", "none", why=str(e)) for p in table.proofs)


def _current_schema(target: _Target, read: TableRead) -> tuple[str, Schema | None]:
    if target.table.schema is not None:
        from schemaguard.sources import load_schemas

        loaded = load_schemas(target.table.schema)
        if not loaded.schemas:
            raise AuditError(f"{target.table.name}: schema {target.table.schema} holds no schema")
        return target.table.schema, loaded.schemas[-1][1]
    if target.catalog_schema is not None:
        return "catalog", target.catalog_schema
    return read.current()


def write_catalog(run: AuditRun, config: AuditConfig, lazy: LazySpark, label: str, new_id: bool,
                  say: Callable[[str], None], started: datetime, clock: float) -> AuditRun:
    """The run written into the catalog's report tables, its time and phases brought up to date."""
    from schemaguard.report import catalog as catalog_tables
    from schemaguard.spark import tune_report_writes

    session = lazy.settled()
    say(f"writing run {run.run_id} into the catalog database {config.catalog.database}")
    writing = time.monotonic()
    tune_report_writes(session)
    catalog_tables.write_run(session, run, config.catalog, label, new_id=new_id)
    done = time.monotonic()
    return replace(run, finished_at=started + timedelta(seconds=done - clock),
                   phases=replace(run.phases, spark_start=lazy.seconds, catalog=done - writing))


def _listed_table(location: str) -> dict[str, str]:
    """A table named on the command line as the configuration would list it: a catalog name
    (db.table) that is not also a path is a catalog table; anything else a path or URI."""
    if is_table_name(location) and not Path(location).exists():
        return {"name": location, "catalog_table": location}
    return {"name": Path(location.rstrip("/")).name or location, "path": location}


def named_tables_config(locations: Sequence[str], proofs: Sequence[str]) -> AuditConfig:
    """The configuration of an audit of tables named without a configuration file: each with the
    default settings and the same proofs."""
    from schemaguard.config import parse_config

    listed = [{**_listed_table(location), **_proof_keys(proofs)} for location in locations]
    return parse_config({"tables": listed}, Path.cwd() / "schemaguard.toml")


def _proof_keys(proofs: Sequence[str]) -> dict[str, Any]:
    """`KIND SUBJECT` proofs as a configured table's keys (`not-null channel` -> not_null); a
    `values` proof without a configuration has no allowed set: it lists what it sees."""
    from schemaguard.config import COLUMN_PROOF_KEYS

    listed = {**{str(kind): key for kind, key in COLUMN_PROOF_KEYS.items()}, "fits": "fits"}
    keys: dict[str, Any] = {}
    for text in proofs:
        kind, _, subject = text.strip().partition(" ")
        if kind == "values" and subject.strip():
            keys.setdefault("values", []).append({"column": subject.strip()})
        elif kind in listed and subject.strip():
            keys.setdefault(listed[kind], []).append(subject.strip())
        else:
            raise UsageError(f"proof {text!r} (--proof): give KIND SUBJECT, KIND one of "
                             f"{', '.join([*listed, 'values'])}")
    return keys


def narrowed(config: AuditConfig, names: list[str], schema: str | None, catalog: bool,
             allow_quiet: bool = False) -> AuditConfig:
    """The configuration narrowed: some tables, another current schema, no catalog, quiet breaks
    allowed on every table."""
    known = {t.name: t for t in config.tables}
    if unknown := [n for n in names if n not in known]:
        raise UsageError(f"table {unknown[0]!r} (tables, --table) is not in {config.source} "
                         f"(tables: {', '.join(known)})")
    chosen = tuple(known[n] for n in names) if names else config.tables
    if schema is not None:
        if len(chosen) != 1:
            raise UsageError(f"schema (--schema) needs one table; {config.source} has {len(chosen)}: "
                             "pick one with tables (--table)")
        chosen = (replace(chosen[0], schema=schema),)
    if allow_quiet:
        chosen = tuple(replace(t, options=replace(t.options, allow_quiet=True)) for t in chosen)
    enabled = config.catalog.enabled and catalog
    return replace(config, tables=chosen, catalog=replace(config.catalog, enabled=enabled))
