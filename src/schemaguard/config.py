"""The audit's configuration (`conf/schemaguard.toml`), validated whole before anything runs.

A wrong key, a wrong value or a missing table is a `ConfigError` naming it (the CLI prints it on
one line and exits 2), so a scheduled audit never half-runs on a typo. Relative paths are
relative to the configuration file, so a job may start in any directory.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, get_args, get_type_hints
from urllib.parse import unquote, urlsplit

from schemaguard.base import Options
from schemaguard.checks.finding import FailLevel, Waiver
from schemaguard.errors import UsageError, require_regular
from schemaguard.formats.notation import parse_primitive
from schemaguard.names import NAME, Identity
from schemaguard.planning.planner import Durations
from schemaguard.proofs import Proof, ProofKind, proof_of
from schemaguard.rules.modes import Mode
from schemaguard.rules.profiles import PROFILES

FORMATS = ("terminal", "json", "markdown", "html", "junit", "sarif")
ENGINES = ("auto", "local", "spark")
REPORT_DIR = Path(".schemaguard/reports")  # under the working directory unless the file says where
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
WAREHOUSE_KEY = "spark.sql.warehouse.dir"


class ConfigError(UsageError):
    """Bad configuration: the message names the file, the key and what is wrong."""


@dataclass(frozen=True)
class TableConfig:
    name: str  # how reports name it
    path: str | None  # a directory or URI whose footers are read
    catalog_table: str | None  # `db.table` (or `catalog.db.table`): location and schema from the catalog
    schema: str | None  # the current schema, when neither the catalog's nor the newest version's
    profiles: tuple[str, ...]
    mode: Mode
    options: Options
    # With catalog_table: an Iceberg catalog (pyiceberg's name for it, and a SQL catalog's URI)
    # holds the table, read without Spark; without them the table is the Spark session catalog's.
    iceberg_catalog: str | None = None
    iceberg_catalog_uri: str | None = None
    proofs: tuple[Proof, ...] = ()  # proved on every audit; results become findings and `proofs` rows
    keys: tuple[str, ...] = ()  # key columns shown with offending rows
    sensitive: tuple[str, ...] = ()  # columns whose values never appear in any output
    # The days of the date partition the proofs cover (inclusive; None: from the first, to the last).
    proofs_since: date | None = None
    proofs_until: date | None = None


@dataclass(frozen=True)
class CatalogConfig:
    enabled: bool = True
    catalog: str | None = None  # None: the session's current catalog
    database: str = "schemaguard"
    file_footers: bool = True  # one row per data file; turn off for tables of millions of files


@dataclass(frozen=True)
class AuditConfig:
    source: Path  # the configuration file
    tables: tuple[TableConfig, ...]
    fail_level: FailLevel = "error"
    engine: str = "auto"
    incremental: bool = True  # footers of files unchanged since the last audit come from its cache
    report_dir: Path = Path(".schemaguard/reports")
    formats: tuple[str, ...] = FORMATS
    catalog: CatalogConfig = CatalogConfig()
    spark: dict[str, str] = field(default_factory=dict)
    waivers: tuple[Waiver, ...] = ()


# Each section: its keys and the type each must have. Anything else is an unknown key.
_OPTION_KEYS = {k: t for k, t in get_type_hints(Options).items()}
_AUDIT_KEYS = {"mode": str, "profiles": list, "identity": str, "fail_level": str, "engine": str,
               "incremental": bool, "report_dir": str, "formats": list}
_TABLE_KEYS = {"name": str, "path": str, "catalog_table": str, "iceberg_catalog": str,
               "iceberg_catalog_uri": str, "schema": str, "profiles": list,
               "mode": str, "options": dict,
               # proofs about the data (proofs/): columns, expressions, COL:TYPE, value sets
               "not_null": list, "backfilled": list, "agree": list, "fits": list, "unit_drift": list,
               "values": list, "keys": list, "sensitive": list,
               "proofs_since": object, "proofs_until": object}  # dates, quoted or not
_VALUES_KEYS = {"column": str, "allowed": list}
_CATALOG_KEYS = {"enabled": bool, "catalog": str, "database": str, "file_footers": bool}
_WAIVER_KEYS = {"key": str, "owner": str, "reason": str, "expires": object}  # a date, quoted or not
_SECTIONS = {"audit": dict, "options": dict, "catalog": dict, "spark": dict, "tables": list, "waivers": list,
             "plan": dict}


def _read_toml(source: Path) -> dict[str, Any]:
    require_regular(source, str(source))
    try:
        return tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{source}: no such configuration file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None


def load_config(path: str | Path) -> AuditConfig:
    source = Path(path)
    return parse_config(_read_toml(source), source)


def load_durations(path: str | Path) -> Durations:
    """The `[plan]` section of a configuration file: weeks per step of a change plan."""
    source = Path(path)
    section = _read_toml(source).get("plan", {})
    where = f"{source} [plan]"
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: must be a table of weeks per step")
    _keys(section, {name: int for name in get_type_hints(Durations)}, where)
    if bad := next((k for k, v in section.items() if isinstance(v, bool) or v < 1), None):
        raise ConfigError(f"{where}: {bad} must be a whole number of at least 1, not {section[bad]!r}")
    return Durations(**section)


def parse_config(raw: dict[str, Any], source: Path) -> AuditConfig:
    where = str(source)
    _keys(raw, _SECTIONS, where)
    audit = raw.get("audit", {})
    _keys(audit, _AUDIT_KEYS, f"{where} [audit]")
    base_options = _options(raw.get("options", {}), audit.get("identity"), f"{where} [options]")
    base_profiles = _profiles(audit.get("profiles", ["spark-read"]), f"{where} [audit] profiles")
    base_mode = _one_of(audit.get("mode", "FULL_TRANSITIVE"), list(Mode), f"{where} [audit] mode")
    home = source.parent
    tables = tuple(
        _table(t, i, base_profiles, base_mode, base_options, home, f"{where} [[tables]] #{i + 1}")
        for i, t in enumerate(_list_of_tables(raw.get("tables"), f"{where} [[tables]]")))
    names = [t.name for t in tables]
    if duplicate := next((n for n in names if names.count(n) > 1), None):
        raise ConfigError(f"{where} [[tables]]: two tables are named {duplicate!r}; names key the findings")
    formats = tuple(_one_of(f, FORMATS, f"{where} [audit] formats") for f in audit.get("formats", FORMATS))
    report_dir = _report_dir(audit["report_dir"], home, f"{where} [audit] report_dir") \
        if "report_dir" in audit else REPORT_DIR
    _outside_tables(report_dir, tables, f"{where} [audit] report_dir")
    spark = _spark(raw.get("spark", {}), f"{where} [spark]")
    if WAREHOUSE_KEY in spark:  # the catalog's report tables land there
        _outside_tables(_report_dir(spark[WAREHOUSE_KEY], home, f"{where} [spark] {WAREHOUSE_KEY}"), tables,
                        f"{where} [spark] {WAREHOUSE_KEY}")
    return AuditConfig(
        source=source,
        tables=tables,
        fail_level=_one_of(audit.get("fail_level", "error"), get_args(FailLevel),
                           f"{where} [audit] fail_level"),
        engine=_one_of(audit.get("engine", "auto"), ENGINES, f"{where} [audit] engine"),
        incremental=audit.get("incremental", True),
        report_dir=report_dir,
        formats=formats,
        catalog=_catalog(raw.get("catalog", {}), f"{where} [catalog]"),
        spark=spark,
        waivers=tuple(_waiver(w, f"{where} [[waivers]] #{i + 1}")
                      for i, w in enumerate(_list_of_tables(raw.get("waivers", []), f"{where} [[waivers]]",
                                                            empty_ok=True))),
    )


def _keys(section: dict[str, Any], allowed: dict[str, Any], where: str) -> None:
    for key, value in section.items():
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(allowed)})")
        want = allowed[key]
        if isinstance(want, type) and want is not object and not isinstance(value, want):
            raise ConfigError(f"{where}: {key} must be a {_kind(want)}, not {value!r}")


def _kind(t: type) -> str:
    return {str: "string", list: "list", dict: "table", bool: "boolean (true/false)", int: "whole number",
            date: "date (YYYY-MM-DD, unquoted)"}.get(t, t.__name__)


def _one_of(value: Any, choices: Any, where: str) -> Any:
    for choice in choices:
        if isinstance(value, str) and str(choice).lower() == value.lower():
            return choice
        if value == choice:
            return choice
    raise ConfigError(f"{where}: {value!r} is not one of {', '.join(map(str, choices))}")


def _profiles(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{where}: must be a non-empty list of {', '.join(PROFILES)}")
    return tuple(_one_of(p, PROFILES, where) for p in value)


def _options(section: dict[str, Any], identity: Any, where: str) -> Options:
    options: dict[str, Any] = {}
    for key, value in section.items():
        if key not in _OPTION_KEYS or key == "identity":
            known = [k for k in _OPTION_KEYS if k != "identity"]
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(known)})")
        choices = get_args(_OPTION_KEYS[key])
        if choices:  # a Literal
            options[key] = _one_of(value, choices, f"{where} {key}")
        elif not isinstance(value, bool):
            raise ConfigError(f"{where}: {key} must be a boolean (true/false), not {value!r}")
        else:
            options[key] = value
    if identity is not None:
        options["identity"] = _one_of(identity, get_args(Identity), f"{where} identity")
    return Options(**options)


def _list_of_tables(value: Any, where: str, empty_ok: bool = False) -> list[dict[str, Any]]:
    if value is None or (not value and not empty_ok):
        raise ConfigError(f"{where}: at least one is needed")
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{where}: must be an array of tables ([[...]] entries)")
    return value


def _table(t: dict[str, Any], i: int, profiles: tuple[str, ...], mode: Mode, options: Options,
           home: Path, where: str) -> TableConfig:
    _keys(t, _TABLE_KEYS, where)
    path, catalog_table = t.get("path"), t.get("catalog_table")
    if (path is None) == (catalog_table is None):
        raise ConfigError(f"{where}: give exactly one of path or catalog_table")
    if catalog_table is not None:
        catalog_table = ".".join(_name(part, f"{where} catalog_table") for part in catalog_table.split("."))
        if catalog_table.count(".") not in (1, 2):
            raise ConfigError(f"{where} catalog_table: {catalog_table!r} is not db.table or catalog.db.table")
    iceberg = t.get("iceberg_catalog") or ("default" if "iceberg_catalog_uri" in t else None)
    if iceberg is not None and catalog_table is None:
        raise ConfigError(f"{where}: iceberg_catalog and iceberg_catalog_uri go with catalog_table")
    if path is not None and not path.strip():
        raise ConfigError(f"{where}: path must not be empty")
    name = t.get("name") or catalog_table or Path(str(path)).name
    if ":" in name:
        raise ConfigError(f"{where} name: {name!r} may not contain ':' (it separates finding key parts)")
    table_options = options
    if "options" in t:
        merged = {k: getattr(options, k) for k in _OPTION_KEYS if k != "identity"}
        merged.update(t["options"])
        identity = merged.pop("identity", options.identity)
        table_options = _options(merged, identity, f"{where} options")
    return TableConfig(
        name=name,
        path=_resolve(path, home) if path is not None else None,
        catalog_table=catalog_table,
        schema=_resolve(t["schema"], home) if "schema" in t else None,
        profiles=_profiles(t["profiles"], f"{where} profiles") if "profiles" in t else profiles,
        mode=_one_of(t["mode"], list(Mode), f"{where} mode") if "mode" in t else mode,
        options=table_options,
        iceberg_catalog=iceberg,
        iceberg_catalog_uri=t.get("iceberg_catalog_uri"),
        proofs=_proofs(t, where),
        keys=_strings(t.get("keys", []), f"{where} keys"),
        sensitive=_strings(t.get("sensitive", []), f"{where} sensitive"),
        proofs_since=_date(t["proofs_since"], f"{where} proofs_since") if "proofs_since" in t else None,
        proofs_until=_date(t["proofs_until"], f"{where} proofs_until") if "proofs_until" in t else None,
    )


def _strings(value: list[Any], where: str) -> tuple[str, ...]:
    if not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: must be a list of non-empty strings")
    return tuple(value)


# The proofs a table lists by column (or expression), and the key each is listed under; `fits`
# (COL:TYPE) and `[[tables.values]]` (column, allowed) have shapes of their own.
COLUMN_PROOF_KEYS: dict[ProofKind, str] = {"not-null": "not_null", "backfilled": "backfilled",
                                           "agree": "agree", "unit-drift": "unit_drift"}


def _proofs(t: dict[str, Any], where: str) -> tuple[Proof, ...]:
    """The table's proofs: `not_null`, `backfilled`, `unit_drift` (columns), `agree` (A=B or a Spark
    SQL expression), `fits` (COL:TYPE), `[[tables.values]]` (column, allowed)."""
    out = [proof_of(kind, c) for kind, key in COLUMN_PROOF_KEYS.items()
           for c in _strings(t.get(key, []), f"{where} {key}")]
    for text in _strings(t.get("fits", []), f"{where} fits"):
        column, sep, target = text.partition(":")
        if not sep or not column or not target:
            raise ConfigError(f"{where} fits: {text!r} is not COL:TYPE (amount:decimal(10,2))")
        try:
            parse_primitive(target, f"{where} fits {text}")
        except UsageError as e:
            raise ConfigError(str(e)) from None
        out.append(Proof("fits", column, target=target))
    for i, v in enumerate(t.get("values", [])):
        here = f"{where} values[{i}]"
        if not isinstance(v, dict):
            raise ConfigError(f"{here}: must be a table with column and allowed")
        _keys(v, _VALUES_KEYS, here)
        if "column" not in v:
            raise ConfigError(f"{here}: column is required")
        allowed = tuple(str(a) for a in v["allowed"]) if "allowed" in v else None
        out.append(Proof("values", v["column"], allowed=allowed))
    return tuple(out)


def _report_dir(value: str, home: Path, where: str) -> Path:
    """A local folder to write into: a `file:` URI is taken as its path, any other URI refused, a
    relative path taken from the configuration file's folder; an existing file is refused now,
    before any work."""
    local = _local_path(value)
    if local is None:
        raise ConfigError(f"{where}: {value!r} is not a local folder (reports are written to local disk)")
    if not local:
        raise ConfigError(f"{where}: must not be empty")
    folder = Path(_resolve(local, home))
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{where}: {folder} exists and is not a folder")
    return folder


def _local_path(value: str) -> str | None:
    """A local path as given, or the path of a `file:` URI (`file:///x`, `file://localhost/x`,
    `file:/x`); None for any other URI."""
    if value[:5].lower() != "file:":
        return None if "://" in value else value
    parts = urlsplit(value)
    if parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path)


def _outside_tables(report_dir: Path, tables: tuple[TableConfig, ...], where: str) -> None:
    """The guard never writes into a table it audits: reports may not land inside one, however
    either path is spelled (relative, through links, `..`, a `file:` URI)."""
    folder = report_dir.resolve()
    for t in tables:
        table = _local_path(t.path) if t.path is not None else None
        if table and folder.is_relative_to(Path(table).resolve()):
            raise ConfigError(f"{where}: {report_dir} lies inside the audited table {t.name} ({t.path}); "
                              "the guard never writes into a table it audits")


def _resolve(path: str, home: Path) -> str:
    """A URI stays as it is; a relative local path is taken from the configuration file's folder."""
    if "://" in path or path[:5].lower() == "file:" or Path(path).is_absolute():
        return path
    return str((home / path).resolve())


def _name(part: str, where: str) -> str:
    if not NAME.fullmatch(part):
        raise ConfigError(f"{where}: {part!r} is not a valid name (letters, digits, _; no leading digit)")
    return part


def _catalog(section: dict[str, Any], where: str) -> CatalogConfig:
    _keys(section, _CATALOG_KEYS, where)
    catalog = section.get("catalog")
    return CatalogConfig(
        enabled=section.get("enabled", True),
        catalog=_name(catalog, f"{where} catalog") if catalog else None,
        database=_name(section.get("database", "schemaguard"), f"{where} database"),
        file_footers=section.get("file_footers", True),
    )


def _spark(section: dict[str, Any], where: str) -> dict[str, str]:
    conf = {}
    for key, value in section.items():
        if not key.startswith("spark."):
            raise ConfigError(f"{where}: {key!r} is not a Spark setting (keys start with 'spark.')")
        if isinstance(value, dict | list):
            raise ConfigError(f"{where}: {key} must be a string, number or boolean")
        conf[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return conf


def _waiver(w: dict[str, Any], where: str) -> Waiver:
    _keys(w, _WAIVER_KEYS, where)
    missing = [k for k in _WAIVER_KEYS if k not in w]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)} (waivers need key, owner, reason, expires)")
    if len(w["key"].split(":", 2)) != 3:
        raise ConfigError(f"{where} key: {w['key']!r} is not a finding key (table:CODE:subject)")
    return Waiver(w["key"], w["owner"], w["reason"], _date(w["expires"], f"{where} expires"))


def _date(value: Any, where: str) -> date:
    """A TOML date, or a string YYYY-MM-DD (not a number: 20240101 reads as a date to Python)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _DATE.fullmatch(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ConfigError(f"{where}: {value!r} is not a date (YYYY-MM-DD)")
