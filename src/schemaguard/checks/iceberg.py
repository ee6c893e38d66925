"""What Iceberg readers make of a table's files and its schema history: they bind a file's columns
by field id (through the name mapping for a file without ids) and read every live file with the
current schema, so a column they cannot bind is data nobody reads, and a schema change the spec
does not allow breaks the reads of the files written before it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from schemaguard.base import Options
from schemaguard.checks.compat import table_options
from schemaguard.checks.finding import Evidence, Finding, FindingCode, files_finding, finding
from schemaguard.lake.history import SchemaVersion
from schemaguard.lake.snapshot import relative
from schemaguard.lake.table import TableRead
from schemaguard.model import fields_of
from schemaguard.rules.profiles import can_read


def iceberg_field_ids(table: TableRead, _: object = None) -> list[Finding]:
    """ICEBERG_FIELD_WITHOUT_ID: columns of a file with no field id and no name-mapping entry
    (Iceberg readers cannot bind them: Java's reads them as null, pyiceberg refuses the file).
    ICEBERG_UNKNOWN_FIELD_ID: columns whose id no schema of the table has (no reader sees them).
    O(the table's schemas' fields + versions x fields)."""
    snap = table.iceberg
    if snap is None:
        return []
    known = {f.id for s in snap.schemas for _, f in fields_of(s.schema)}
    missing: dict[int, list[str]] = defaultdict(list)  # version number -> columns
    unknown: dict[int, list[str]] = defaultdict(list)
    for v in table.versions:
        for path, f in fields_of(v.footer.schema):
            if f.id is None:
                missing[v.number].append(path)
            elif f.id not in known:
                unknown[v.number].append(f"{path} (id {f.id})")
    found = []
    if missing:
        why = ("and the table has no name mapping (schema.name-mapping.default)" if snap.name_mapping is None
               else "and the name mapping (schema.name-mapping.default) does not name them")
        found.append(_columns_finding(
            FindingCode.ICEBERG_FIELD_WITHOUT_ID, f"Columns written without a Parquet field id {why}: "
            "Iceberg readers bind columns by id, so they read these as null or refuse the file",
            table.versions, missing))
    if unknown:
        found.append(_columns_finding(
            FindingCode.ICEBERG_UNKNOWN_FIELD_ID, "Columns whose field id no schema of the table holds: "
            "Iceberg readers never read them (the data is on disk but invisible)", table.versions, unknown))
    return found


def _columns_finding(code: FindingCode, message: str, all_versions: Sequence[SchemaVersion],
                     columns: dict[int, list[str]]) -> Finding:
    versions = [v for v in all_versions if v.number in columns]
    first = columns[versions[0].number][0].split(" ")[0]
    return finding(code, message, versions, first,
                   [(f"v{v.number}", ", ".join(columns[v.number])) for v in versions])


def iceberg_schema_changes(table: TableRead, _: object = None) -> list[Finding]:
    """ICEBERG_INCOMPATIBLE_CHANGE: a schema of the table's history that still has live files, and
    that Iceberg's rules do not let the current schema read (a promotion the spec forbids, a
    field made required, a required field added without an `initial-default`): reads of those
    files fail. O(live files + schemas x fields): each old schema read once by the current one."""
    snap = table.iceberg
    if snap is None:
        return []
    current = snap.current
    options = table_options(table, Options())
    root = table.listing.root
    rels: dict[int | None, list[str]] = defaultdict(list)
    for f in snap.files:
        rels[f.schema_id].append(relative(f.path, root))
    found = []
    for s in snap.schemas:
        if s.schema_id == current.schema_id or not rels.get(s.schema_id):
            continue
        problems = [p for p in can_read(s.schema, current.schema, "iceberg", options)
                    if p.severity == "error"]
        if problems:
            evidence: Evidence = [(p.path, f"{p.message} ({p.rule.id})") for p in problems]
            found.append(files_finding(
                FindingCode.ICEBERG_INCOMPATIBLE_CHANGE,
                f"Files written with schema {s.schema_id} cannot be read with the current schema "
                f"{current.schema_id}: " + "; ".join(f"`{p.path}`: {p.message}" for p in problems),
                rels[s.schema_id], evidence, subject=f"schema-{s.schema_id}"))
    return found
