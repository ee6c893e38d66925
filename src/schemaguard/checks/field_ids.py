"""Parquet field ids across the versions on disk: one id on different paths (id readers bind
them all to one column), and one path carrying different ids (id readers see different columns)."""

from __future__ import annotations

from collections.abc import Callable

from schemaguard.checks.finding import Finding, FindingCode, finding
from schemaguard.checks.versions import by_number, named, values_by_version, varying
from schemaguard.formats.notation import describe
from schemaguard.formats.parquet import FooterSchema
from schemaguard.lake.history import SchemaVersion
from schemaguard.lake.table import TableRead
from schemaguard.model import DataType, Field, Schema, fields_of, walk
from schemaguard.paths import ELEMENT, KEY, VALUE
from schemaguard.rules.changes import OpKind, diff


def id_paths(footer: FooterSchema) -> dict[str, int]:
    """Every path carrying a Parquet field id: named fields at any depth (groups too), and the
    list element and map key/value leaves, whose ids no field carries. A bare repeated leaf is its
    list and its element at once: one node, one id, counted once."""
    ids = {path: f.id for path, f in fields_of(footer.schema) if f.id is not None}
    for c in footer.columns:
        slot = c.path.endswith((ELEMENT, KEY, VALUE)) and c.container != "repeated"
        if slot and c.field_id is not None:
            ids[c.path] = c.field_id
    return ids


def field_id_reuse(table: TableRead, _: object = None) -> list[Finding]:
    """One field id on different paths: id readers (Iceberg, Delta column mapping `id`) bind them
    all to one column. An error when a file holds the id twice or the paths' types are unrelated;
    a warning when it looks like a rename (one path per version, related types), which Iceberg
    does legitimately and Delta never does (its physical names do not change). O(versions x
    nodes), and per reused id the pairs of its distinct types (a few)."""
    reused = varying(table.versions, lambda v: ((fid, path) for path, fid in id_paths(v.footer).items()))
    nodes: dict[int, dict[str, DataType]] = {}  # per version, each node's type, made when first asked

    def type_at(v: SchemaVersion, path: str) -> DataType:
        if v.number not in nodes:
            nodes[v.number] = {p: t for p, t, _ in walk(v.footer.schema)}
        return nodes[v.number][path]

    return [_id_reuse_finding(fid, paths, type_at) for fid, paths in sorted(reused.items())]


def _id_reuse_finding(fid: int, paths: dict[str, list[SchemaVersion]],
                      type_at: Callable[[SchemaVersion, str], DataType]) -> Finding:
    vs = by_number(paths.values())
    types = {p: type_at(group[-1], p) for p, group in paths.items()}
    distinct = list(dict.fromkeys(types.values()))
    on = values_by_version(paths)
    twice = [v for v in vs if len(on[v.number]) > 1]
    unrelated = any(_unrelated(a, b) for a in distinct for b in distinct)
    newest = max(paths, key=lambda p: paths[p][-1].number)
    spelled = ", ".join(f"`{p}` ({describe(types[p])}) in {named(group)}" for p, group in paths.items())
    if twice:
        why = (f"{named(twice)} hold it twice, but ids are unique within a schema: id readers bind "
               "these columns to one another's data")
    elif unrelated:
        why = ("the types are unrelated, so it was given to another column: id readers read one's "
               "values as the other's")
    else:
        why = (f"id readers read the older files' values as `{newest}` while name readers (Spark) read "
               "null there: right if it is a rename (Iceberg), a reuse otherwise (Delta never renames "
               "a physical column)")
    evidence = [(f"v{v.number}", ", ".join(on[v.number])) for v in vs]
    return finding(FindingCode.FIELD_ID_REUSED, f"field id {fid} is on {spelled}: {why}", vs, newest,
                   evidence, subject=f"field_id={fid}", severity="error" if twice or unrelated else "warning")


def _unrelated(a: DataType, b: DataType) -> bool:
    """No rename keeps a column's values across this type change (the diff calls it CHANGE_TYPE)."""
    return any(op.kind is OpKind.CHANGE_TYPE for op in diff(alone(a), alone(b)))


def alone(t: DataType) -> Schema:
    """A one-column schema, to ask a whole-schema rule about one type."""
    return Schema((Field("c", t),))


def field_id_changes(table: TableRead, _: object = None) -> list[Finding]:
    """One path carrying different field ids: id readers see different columns, name readers one.
    O(versions x nodes)."""
    found = []
    for path, ids in varying(table.versions, lambda v: id_paths(v.footer).items()).items():
        vs = by_number(ids.values())
        by_version = {v.number: fid for fid, group in ids.items() for v in group}
        spelled = "; ".join(f"{named(group)}: {fid}" for fid, group in ids.items())
        found.append(finding(
            FindingCode.FIELD_ID_CHANGED,
            f"`{path}` carries different field ids ({spelled}): id readers (Iceberg, Delta column "
            "mapping `id`) take these for different columns and read the files with another id as null "
            "(or as another column, see FIELD_ID_REUSED); name readers (Spark) read one column",
            vs, path, [(f"v{v.number}", f"field_id {by_version[v.number]}") for v in vs]))
    return found
