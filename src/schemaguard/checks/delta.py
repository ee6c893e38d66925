"""What Delta readers make of a snapshot's files: they read each file with the snapshot's schema,
binding columns by name (by physical name or field id under column mapping), so a column of a
file that no schema of the log names is data no Delta reader returns."""

from __future__ import annotations

from schemaguard.checks.finding import Finding, FindingCode, finding
from schemaguard.lake.table import TableRead
from schemaguard.model import fields_of


def delta_unknown_columns(table: TableRead, _: object = None) -> list[Finding]:
    """DELTA_UNKNOWN_COLUMN: columns of snapshot files that no schema the log has set holds (by
    logical name, case-insensitively as Delta resolves names; under column mapping, a physical
    name the log never assigned; under `id` mapping also a field id it never assigned, as its
    readers bind by id only). O(the log's schemas' fields + versions x fields)."""
    log = table.delta
    if log is None:
        return []
    fields = [(p, f) for s in log.schemas for p, f in fields_of(s.schema)]
    known = {p.lower() for p, _ in fields}
    ids = {f.id for _, f in fields} if log.mapping_mode == "id" else None
    found: dict[str, list[int]] = {}  # column -> version numbers holding it
    for v in table.versions:
        for path, f in fields_of(v.footer.schema):
            if path.lower() not in known or (ids is not None and f.id is not None and f.id not in ids):
                found.setdefault(path, []).append(v.number)
    by_number = {v.number: v for v in table.versions}
    return [finding(FindingCode.DELTA_UNKNOWN_COLUMN,
                    f"`{path}` is in the files but in no schema of the Delta log: Delta readers never "
                    "return it (the data is on disk but invisible)",
                    [by_number[n] for n in numbers], path, [(f"v{n}", "present") for n in numbers])
            for path, numbers in found.items()]
