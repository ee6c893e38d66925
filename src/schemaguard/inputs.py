"""The inputs every public function takes, checked and read before any work: choices named as the
API names its settings, reader and read options, schemas from any source (a path, JSON text, a
pyspark StructType, a pyarrow.Schema, a catalog table), tables read as every command reads them,
and the session proofs read data with. `api.py` (the public functions) and the command line use
these; nothing here decides anything about the schemas it reads.

Bad input raises `UsageError` with one line naming the setting as the API does (`deploy_order`, not
a command-line flag). Nothing here imports pyspark until a function needs a session.
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from schemaguard.errors import UsageError
from schemaguard.names import COLUMN_MAPPINGS, ICEBERG_VERSIONS, IDENTITIES, is_table_name

if TYPE_CHECKING:
    from schemaguard.base import Options
    from schemaguard.lake.iceberg import CatalogRef
    from schemaguard.lake.table import ReadOptions, TableRead
    from schemaguard.model import Schema

T = TypeVar("T")
SchemaLike = Any  # a path or URI, notation/Spark/Avro JSON text, a pyspark StructType, a pyarrow.Schema


def choice(value: str, choices: Sequence[T], option: str) -> T:
    """The choice `value` names, in any case; else a one-line error listing the choices, naming
    the setting as the API and the configuration do (`deploy_order`, not a command-line flag)."""
    for c in choices:
        if str(c).lower() == str(value).lower():
            return c
    raise UsageError(f"{option} {value!r} is not one of {', '.join(map(str, choices))}")


def timestamp_of(text: str) -> float:
    """An ISO 8601 instant (UTC unless it says) as seconds since the epoch."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"timestamp {text!r}: not an ISO 8601 time, e.g. 2024-03-01T12:00:00Z") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def catalog_ref(catalog: str | None, catalog_uri: str | None) -> CatalogRef | None:
    """The Iceberg catalog the options name, if any (`default` when only a URI is given)."""
    if catalog is None and catalog_uri is None:
        return None
    from schemaguard.lake.iceberg import CatalogRef

    return CatalogRef(catalog or "default", catalog_uri)


def reader_options(identity: str | None = None, type_widening: bool = False, column_mapping: str = "none",
                   iceberg_version: str = "2", uniform: bool = False, case_sensitive: bool = False,
                   allow_quiet: bool = False, vectorized_reader: bool = True) -> Options:
    from schemaguard.base import Options

    return Options(type_widening=type_widening,
                   column_mapping=choice(column_mapping, COLUMN_MAPPINGS, "column_mapping"),
                   iceberg_version=choice(str(iceberg_version), ICEBERG_VERSIONS, "iceberg_version"),
                   uniform=uniform, case_sensitive=case_sensitive,
                   identity=None if identity is None else choice(identity, IDENTITIES, "identity"),
                   allow_quiet=allow_quiet, vectorized_reader=vectorized_reader)


def given_options(options: Options | None, what: str, **keywords: Any) -> Options:
    """A call's reader options: `options` (a `schemaguard.Options`, each field checked as the
    keywords are) or its reader keywords, not both; `what` names the function in errors."""
    if options is None:
        return reader_options(**keywords)
    from schemaguard.base import Options

    if not isinstance(options, Options):
        raise UsageError(f"{what}: options is a schemaguard.Options, not {type(options).__name__}")
    defaults = inspect.signature(reader_options).parameters
    both = [k for k, v in keywords.items() if v != defaults[k].default]
    if both:
        raise UsageError(f"{what}: give the reader options as options= or as keywords ({', '.join(both)}), "
                         "not both")
    return reader_options(**{f.name: getattr(options, f.name) for f in fields(options)})


def read_options(format_hint: str = "auto", version: int | None = None, timestamp: str | None = None,
                 include_unreferenced: bool = False) -> ReadOptions:
    """How to read a table, each option checked: the format hint, a version or time to travel to."""
    from schemaguard.lake.table import FORMAT_HINTS, ReadOptions

    return ReadOptions(choice(format_hint, FORMAT_HINTS, "format_hint"), version,
                       timestamp_of(timestamp) if timestamp is not None else None, include_unreferenced)


def ddl_options(options: Options, properties: Mapping[str, str]) -> Options:
    """Reader options the DDL's table properties switch on (Delta column mapping, type widening)."""
    mapping = properties.get("delta.columnMapping.mode")
    if mapping is not None:
        options = replace(options, column_mapping=choice(mapping, ["none", "name", "id"],
                                                         "delta.columnMapping.mode"))
    if properties.get("delta.enableTypeWidening", "").lower() == "true":
        options = replace(options, type_widening=True)
    return options


def modelled(labelled: Iterable[tuple[str, Schema]], profile: str) -> None:
    """An Avro schema with no table equivalent, given to a profile other than avro: one line."""
    from schemaguard.rules.profiles import UnmodelledSchema, check_modelled

    for label, schema in labelled:
        try:
            check_modelled([schema], profile)
        except UnmodelledSchema as e:
            raise UsageError(f"{label}: {e}") from None


def fits_proof(text: str) -> Any:
    """`COL:TYPE` as a fits proof."""
    from schemaguard.proofs import Proof

    column, sep, target = text.partition(":")
    if not sep or not column or not target:
        raise UsageError(f"fits {text!r}: give COL:TYPE, e.g. amount:decimal(10,2)")
    return Proof("fits", column, target=target)


def read_table(location: str, *, spark: Any = None, engine: str = "auto", how: ReadOptions | None = None,
               catalog: CatalogRef | None = None, progress: Any = None) -> TableRead:
    """A table as every command reads it: a Spark job for its footers only in a running session
    with more task slots than local cores on a large table (or `engine="spark"`). `progress`
    makes a progress callback from the file count (a context manager), or None."""
    from contextlib import nullcontext

    from schemaguard.lake.discover import discover
    from schemaguard.lake.scan import lister_for, running_spark, use_spark
    from schemaguard.lake.table import ReadOptions, locate, read_listing

    engine = choice(engine, ("auto", "local", "spark"), "engine")
    root, how = locate(location, how or ReadOptions(), catalog)
    session = spark if spark is not None else running_spark()
    if engine == "spark" and session is None:
        session = _embedded("schemaguard-scan")
    listing = discover(root, lister_for(engine, session))
    if not use_spark(engine, len(listing.files), session):
        session = None
    with progress(len(listing.files)) if progress is not None else nullcontext(None) as advance:
        return read_listing(listing, advance, session, location=location, how=how)


def located(location: str, spark: Any, spark_catalog: bool) -> str:
    """A table's location: a name of the Spark session's catalog is looked up there (always with
    `spark_catalog`; with a caller's `spark`, when no such path exists)."""
    by_name = spark_catalog or (spark is not None and is_table_name(location) and not Path(location).exists())
    return catalog_location(location, spark) if by_name else location


def with_data(table: TableRead) -> TableRead:
    """The table, unless it is a folder holding no Parquet data (empty, or CSVs): bad input for a
    command about one table, saying what is there. An audit reports it as a finding instead."""
    from schemaguard.checks.files import no_parquet_data

    why = no_parquet_data(table) if table.table_format == "parquet" else None
    if why is not None:
        raise UsageError(why)
    return table


def catalog_location(name: str, spark: Any = None) -> str:
    """Where a table of the Spark session's catalog lies (the session given, else the embedded one).
    A Delta table the embedded catalog manages is found in its warehouse without starting Spark
    (an external table of that name has no log there: Spark is asked where it lies)."""
    from schemaguard.auditing import catalog_table

    if not is_table_name(name):
        raise UsageError(f"{name!r} is not a catalog table name: give db.table or catalog.db.table")
    managed = managed_location(name) if spark is None else None
    if managed is not None:
        return managed
    return catalog_table(spark if spark is not None else _embedded("schemaguard"), name)[0]


def same_home(name: str, location: str, managed: str | None) -> None:
    """Refuse a table the catalog places at `location`, outside the warehouse folder holding its
    log (`managed`: `managed_location`): a copied or moved $SCHEMAGUARD_HOME keeps its metastore's
    absolute locations, so Spark would write the original while the copy's log is read (its
    versions, the rollback's RESTORE)."""
    if managed is not None and Path(managed).resolve() != Path(location).resolve():
        raise UsageError(f"{name}: the catalog places it at {location}, not in its warehouse {managed} "
                         "(a copied or moved $SCHEMAGUARD_HOME keeps the old locations): run from the "
                         "home that made it")


def managed_location(name: str) -> str | None:
    """Where the embedded catalog keeps the Delta table `db.table` it manages (its warehouse,
    found without Spark); None for any other name or table."""
    from schemaguard.spark import embedded_table_location

    parts = name.split(".")
    managed = embedded_table_location(None, *parts) if len(parts) == 2 else None
    return str(managed) if managed is not None and (managed / "_delta_log").is_dir() else None


def schemas(sources: Sequence[SchemaLike], at_least: int = 1, what: str = "",
            spark: Any = None, unnamed: str = "schema") -> tuple[list[tuple[str, Schema]], list[str]]:
    """Every schema of the sources, oldest first, labelled by the path as given (a table's versions
    as `path@v3`; a schema object as `unnamed #i`), and the loader's notes. A source may also be a
    pyspark StructType, a pyarrow.Schema, or (with `spark`) a table name of the session's catalog."""
    from schemaguard.sources import load_schemas

    labelled: list[tuple[str, Schema]] = []
    notes: list[str] = []
    for i, source in enumerate(sources):
        given = _given_schema(source, spark)
        if given is not None:
            labelled.append((f"{unnamed} #{i + 1}" if not isinstance(source, str) else source, given))
            continue
        loaded = load_schemas(str(source))
        versioned = loaded.kind in ("table", "delta")
        labelled += [(f"{source}@{label}" if versioned else str(source), schema)
                     for label, schema in loaded.schemas]
        notes += [f"{source}: {note}" for note in loaded.notes]
    if len(labelled) < at_least:
        shown = " ".join(map(str, sources))
        raise UsageError(f"{what} needs at least {at_least} schemas; {shown} holds {len(labelled)}")
    return labelled, notes


def _given_schema(source: SchemaLike, spark: Any) -> Schema | None:
    """A schema object (or a catalog table's name with `spark`), as the model; None for a path."""
    from schemaguard.formats.spark import schema_from_spark_json

    if hasattr(source, "json") and hasattr(source, "fieldNames"):  # a pyspark StructType
        return schema_from_spark_json(source.json())
    if type(source).__module__.startswith("pyarrow") and hasattr(source, "names"):
        return _arrow_schema(source)
    if isinstance(source, str) and spark is not None and is_table_name(source) and not Path(source).exists():
        from schemaguard.auditing import catalog_table

        return catalog_table(spark, source)[1]
    return None


def _arrow_schema(schema: Any) -> Schema:
    """A pyarrow.Schema as Parquet writes it: an empty file's footer, read as any footer is."""
    import pyarrow.parquet as pq

    from schemaguard.formats.parquet import read_footer

    with tempfile.TemporaryDirectory(prefix="schemaguard-") as folder:
        path = f"{folder}/schema.parquet"
        pq.write_table(schema.empty_table(), path)
        return read_footer(path).schema


def _embedded(name: str, brief: bool = False) -> Any:
    from schemaguard.spark import get_spark

    return get_spark(name, brief=brief)


def spark_factory(name: str, spark: Any = None, announce: Callable[[], None] | None = None,
                  read: TableRead | None = None) -> Callable[[], Any]:
    """The session proofs read data with: the caller's, else the embedded one started on first use
    (once, however many proofs call it), brief when the table `read` (the proofs' table) is small
    (`spark.brief_for`)."""
    from schemaguard.spark import SparkSetupError, brief_for

    @cache
    def started() -> Any:
        if spark is not None:
            return spark
        if announce is not None:
            announce()
        brief = read is not None and brief_for(read.listing.files.total_size())
        try:
            return _embedded(name, brief)
        except SparkSetupError:
            raise
        except Exception as e:  # the JVM did not start: one line (footer_only needs none)
            from schemaguard.errors import first_line

            raise SparkSetupError(f"Spark did not start ({first_line(e)}); footer-only decides from "
                                  "statistics alone") from None

    return started
