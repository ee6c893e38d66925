"""Typed findings: one record per problem, grouped, never one line per file.

Each names the files and partition directories involved (a count and a bounded sample), the
schema versions, what was seen (`evidence`) and the rule behind it. Its key
(`table:CODE:subject-or-path`) is unique within a table, so that a waiver names one finding.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from schemaguard.formats.notation import describe
from schemaguard.formats.parquet import SPARK_SCHEMA_KEY, FooterSchema
from schemaguard.formats.spark import SparkSchemaError, type_to_spark
from schemaguard.lake.discover import Listing, spark_order_key
from schemaguard.lake.history import History, SchemaVersion, leaf_signature
from schemaguard.lake.scan import ScanResult, Unreadable
from schemaguard.model import DataType, Field, Schema, StructType, child_nodes, is_nested, walk
from schemaguard.rules.changes import OpKind, diff
from schemaguard.rules.merge import merge
from schemaguard.rules.profiles import can_read, errors, spark_view

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")  # lowest first
SAMPLE = 20  # files named per finding; the count says how many there are in all


@dataclass(frozen=True, slots=True)
class Waiver:
    """An acknowledged finding: still reported, does not fail a run until it expires."""

    key: str
    owner: str
    reason: str
    expires: date

    def active(self, today: date) -> bool:
        return today <= self.expires


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    count: int  # files involved in all
    files: tuple[str, ...]  # a bounded sample, table-relative
    path: str = ""  # the column, when the finding is about one
    versions: tuple[int, ...] = ()  # schema versions involved (1 = oldest)
    rule: str = ""  # the rule that produced it, with its source
    subject: str = ""  # what the finding is about when that is not one column alone (a reason, a profile)
    partitions: tuple[str, ...] = ()  # a bounded sample of partition directories involved
    partition_count: int = 0
    evidence: tuple[tuple[str, str], ...] = ()  # (label, value): what was seen, e.g. a layout per version
    table: str = ""  # set by the audit: the table as configured
    waiver: Waiver | None = None  # set by the audit when a waiver in configuration matches the key

    @property
    def key(self) -> str:
        """Stable across runs while the problem persists: `table:CODE:subject`; waivers name it."""
        return f"{self.table}:{self.code}:{self.subject or self.path}"

    def waived(self, today: date) -> bool:
        return self.waiver is not None and self.waiver.active(today)


Evidence = list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Involved:
    """The files and partition directories behind a finding: counts in all, bounded samples."""

    count: int
    files: tuple[str, ...]
    partitions: tuple[str, ...]
    partition_count: int


def involved(versions: Iterable[SchemaVersion]) -> Involved:
    """What some versions cover: their files and their partition directories."""
    vs = list(versions)
    return _sampled([f.rel for v in vs for f in v.files], (p for v in vs for p in v.partitions))


def _involved_files(rels: Sequence[str]) -> Involved:
    """Files known by path alone (the scan's): a file's partition directory is its parent."""
    return _sampled(rels, (r.rpartition("/")[0] for r in rels))


def _sampled(files: Sequence[str], partitions: Iterable[str]) -> Involved:
    parts = sorted(set(partitions) - {""})
    return Involved(len(files), tuple(files[:SAMPLE]), tuple(parts[:SAMPLE]), len(parts))


def _finding(code: str, severity: Severity, message: str, versions: Sequence[SchemaVersion],
             path: str, rule: str, evidence: Evidence, subject: str = "") -> Finding:
    """A finding about some versions: their files, partitions and numbers filled in one place."""
    inv = involved(versions)
    return Finding(code, severity, message, inv.count, inv.files, path, tuple(v.number for v in versions),
                   rule, subject=subject, partitions=inv.partitions, partition_count=inv.partition_count,
                   evidence=tuple(evidence))


# ---------------------------------------------------------------------------------------------
# What the scan alone shows


_DETAIL = re.compile(r":| \(")  # formats/parquet.py puts a reason's detail after these


def reason_category(reason: str) -> str:
    """The stable head of an unreadable file's reason (`truncated`, `zero-byte file`, `corrupt
    footer`, `too small to be Parquet`): the detail after it (an error text, a byte count) varies
    per file and would split one problem into many findings with unstable keys."""
    return _DETAIL.split(reason, maxsplit=1)[0].strip() or reason


def finding_doc(f: Finding) -> dict[str, Any]:
    """A finding's stable JSON keys (the audit adds its waiver and verdict)."""
    return {
        "key": f.key, "code": f.code, "severity": f.severity, "table": f.table, "path": f.path,
        "subject": f.subject, "message": f.message, "count": f.count, "files": list(f.files),
        "partitions": list(f.partitions), "partition_count": f.partition_count, "versions": list(f.versions),
        "evidence": [{"label": label, "value": value} for label, value in f.evidence], "rule": f.rule,
    }


def scan_findings(listing: Listing, result: ScanResult) -> list[Finding]:
    """Findings a footer scan alone can make: unreadable files (by reason) and stale checksums."""
    by_category: dict[str, list[Unreadable]] = defaultdict(list)
    for u in result.unreadable:
        by_category[reason_category(u.reason)].append(u)
    found = [_unreadable(category, files) for category, files in sorted(by_category.items())]
    if listing.stale_checksums:
        inv = _involved_files([s.rel for s in listing.stale_checksums])
        found.append(Finding(
            "STALE_CHECKSUM", "error",
            f"{inv.count} file(s) have a .crc sidecar that does not match their size: "
            "Hadoop's checksum layer (Spark on local/HDFS) will fail reading them",
            inv.count, inv.files, rule="parquet-and-spark.md §2.6 (bad-file cases: stale .crc), §0.7",
            partitions=inv.partitions, partition_count=inv.partition_count,
            evidence=tuple(("why", w) for w in dict.fromkeys(s.why for s in listing.stale_checksums))))
    return found


def _unreadable(category: str, files: list[Unreadable]) -> Finding:
    inv = _involved_files([u.rel for u in files])
    reasons = list(dict.fromkeys(u.reason for u in files))
    more = f" (and {len(reasons) - 1} more reason(s) of this kind)" if len(reasons) > 1 else ""
    return Finding("UNREADABLE_FILE", "error",
                   f"{inv.count} file(s) Spark would list as data cannot be read: {reasons[0]}{more}",
                   inv.count, inv.files, rule="parquet-and-spark.md §2.6 (bad-file cases), §0.7",
                   subject=category, partitions=inv.partitions, partition_count=inv.partition_count,
                   evidence=tuple(("reason", r) for r in reasons[:SAMPLE]))


# ---------------------------------------------------------------------------------------------
# What the versions on disk show


def history_findings(history: History) -> list[Finding]:
    """Findings about the versions on disk, one per column (or field id), naming the versions and
    files involved. Within each file: field ids used twice, and a Spark footer schema that
    disagrees with the Parquet one. Across versions: what Spark's mergeSchema would do, layout
    drift, nullability differences, field ids moved, names differing in case only, and columns
    older files lack."""
    versions = history.versions
    found = [*_field_id_reuse(versions), *_spark_disagreements(versions)]
    if len(versions) < 2:
        return found
    return [*_merge_conflicts(versions), *_layout_drift(versions), *_nullability(versions),
            *_field_id_changes(versions), *_case_only(versions), *_missing_in_old(versions), *found]


def _by_number(groups: Iterable[list[SchemaVersion]]) -> list[SchemaVersion]:
    """The versions in any of the groups, once each, oldest first."""
    return sorted({v.number: v for vs in groups for v in vs}.values(), key=lambda v: v.number)


def _named(versions: Iterable[SchemaVersion]) -> str:
    return ",".join(f"v{v.number}" for v in versions)


def _holding(groups: dict[str, list[SchemaVersion]], v: SchemaVersion) -> list[str]:
    """The keys (paths, spellings) whose group holds version `v`."""
    return [key for key, group in groups.items() if any(g.number == v.number for g in group)]


def _layouts(footer: FooterSchema) -> dict[str, str]:
    """Each leaf's type and Parquet layout (`int32 [INT32]`), nullability left out: a REQUIRED /
    OPTIONAL difference is NULLABILITY_MISMATCH's, not layout drift. (`leaf_signature` spells a
    REQUIRED leaf `<type> not null [<layout>]`; no type spelling holds that text.)"""
    return {p: s.replace(" not null [", " [", 1) for p, s in leaf_signature(footer).items()}


def _node_text(footer: FooterSchema, path: str) -> str:
    """How one version holds a node, matched case-insensitively as Spark's merge matches it."""
    for p, t, _ in walk(footer.schema):
        if p.lower() == path.lower():
            return _layouts(footer).get(p) or describe(t)
    return "absent"


def _merge_conflicts(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """Merged as Spark merges them: in its file order (the version of the first file leads), each
    file's Spark schema where the footer has one. The verdict does not depend on the order, the
    sides of a conflict do."""
    in_spark_order = sorted(versions, key=lambda v: min(spark_order_key(f.rel) for f in v.files))
    result = merge([v.footer.spark_schema or v.footer.schema for v in in_spark_order], "spark-merge")
    found = []
    for c in result.conflicts:
        vs = [v for v in versions if any(p.lower() == c.path.lower() for p, *_ in walk(v.footer.schema))]
        found.append(_finding(
            "SPARK_MERGE_CONFLICT", "error",
            f"spark.read.option('mergeSchema', 'true') fails on this table: {c.message}", vs, c.path,
            f"{c.rule.id} ({c.rule.source})", [(f"v{v.number}", _node_text(v.footer, c.path)) for v in vs]))
    return found


def _layout_drift(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """A leaf whose type or Parquet layout (backing, annotation, unit, UTC flag, INT96) differs."""
    seen: dict[str, dict[str, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v in versions:
        for path, layout in _layouts(v.footer).items():
            seen[path][layout].append(v)
    found = []
    for path, layouts in seen.items():
        if len(layouts) < 2:
            continue
        vs = _by_number(layouts.values())
        spelled = "; ".join(f"{_named(group)}: {layout}" for layout, group in layouts.items())
        by_version = {v.number: layout for layout, group in layouts.items() for v in group}
        found.append(_finding("LOGICAL_TYPE_DRIFT", "warning",
                              f"`{path}` is stored differently across versions: {spelled}", vs, path,
                              "parquet-and-spark.md §1.4, §0 (compare at the Parquet level)",
                              [(f"v{v.number}", by_version[v.number]) for v in vs]))
    return found


def _nullability(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """A node (column, nested field, list element, map value) REQUIRED in some versions and
    OPTIONAL in others."""
    seen: dict[str, dict[bool, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v in versions:
        for path, _, nullable in walk(v.footer.schema):
            seen[path][nullable].append(v)
    return [_nullability_finding(path, flags[False], flags[True])
            for path, flags in seen.items() if len(flags) == 2]


def _nullability_finding(path: str, required: list[SchemaVersion], optional: list[SchemaVersion]) -> Finding:
    vs = _by_number([required, optional])
    nulls = _top_level_nulls(path, optional)
    evidence = [(f"v{v.number}", _holding({"REQUIRED": required, "OPTIONAL": optional}, v)[0]) for v in vs]
    held = ""
    if nulls is not None:
        evidence.append(("nulls in OPTIONAL files", str(nulls)))
        held = f" (holding {nulls:,} null(s), by footer statistics)"
    return _finding(
        "NULLABILITY_MISMATCH", "warning",
        f"`{path}` is REQUIRED in {_named(required)} and OPTIONAL in {_named(optional)}{held}: Spark "
        "reads every Parquet column as nullable, so Spark reads are unaffected; a reader declaring it "
        "not null (Delta reading with forbidTightenNullability, an Iceberg required field) rejects the "
        "OPTIONAL files, and Delta refuses nulls written into a NOT NULL column",
        vs, path, "compat-rules.md §4 isReadCompatible (forbidTightenNullability), §3 (optional -> "
        "required), 'Where the references disagree' (nullability tightened); parquet-and-spark.md §2.5",
        evidence)


def _top_level_nulls(path: str, versions: list[SchemaVersion]) -> int | None:
    """Null values of a top-level leaf over the versions' files, from footer statistics; None when
    unknown or nested (a nested leaf's null count also counts its parents' nulls and empty lists)."""
    total = 0
    for v in versions:
        index = next((i for i, c in enumerate(v.footer.columns) if c.parquet_path == (path,)), None)
        if index is None:
            return None
        for f in v.files:
            nulls = f.stats[index].null_count
            if nulls is None:
                return None
            total += nulls
    return total


# Field ids


def _id_paths(footer: FooterSchema) -> dict[str, int]:
    """Every path carrying a Parquet field id: named fields at any depth (groups too), and the
    list element and map key/value leaves, whose ids no field carries. A bare repeated leaf is its
    list and its element at once: one node, one id, counted once."""
    ids = dict(_field_ids(StructType(footer.schema.fields), ""))
    for c in footer.columns:
        slot = c.path.endswith(("[]", "{key}", "{value}")) and c.container != "repeated"
        if slot and c.field_id is not None:
            ids[c.path] = c.field_id
    return ids


def _field_ids(t: DataType, path: str) -> Iterator[tuple[str, int]]:
    if not isinstance(t, StructType):
        for suffix, child, _ in child_nodes(t):
            yield from _field_ids(child, path + suffix)
        return
    for f in t.fields:
        here = f"{path}.{f.name}" if path else f.name
        if f.id is not None:
            yield here, f.id
        yield from _field_ids(f.type, here)


_ID_RULE = ("compat-rules.md §3 Identity (by field id), §4 Column mapping (id mode; new columns get new "
            "ids), 'What none of them checks' (name or id reuse)")


def _field_id_reuse(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """One field id on different paths: id readers (Iceberg, Delta column mapping `id`) bind them
    all to one column. An error when a file holds the id twice or the paths' types are unrelated;
    a warning when it looks like a rename (one path per version, related types), which Iceberg
    does legitimately and Delta never does (its physical names do not change)."""
    seen: dict[int, dict[str, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v in versions:
        for path, fid in _id_paths(v.footer).items():
            seen[fid][path].append(v)
    return [_id_reuse_finding(fid, paths) for fid, paths in sorted(seen.items()) if len(paths) > 1]


def _id_reuse_finding(fid: int, paths: dict[str, list[SchemaVersion]]) -> Finding:
    vs = _by_number(paths.values())
    types = {p: _type_at(group[-1].footer.schema, p) for p, group in paths.items()}
    twice = [v for v in vs if len(_holding(paths, v)) > 1]
    unrelated = any(_unrelated(a, b) for a in types.values() for b in types.values())
    newest = max(paths, key=lambda p: paths[p][-1].number)
    spelled = ", ".join(f"`{p}` ({describe(types[p])}) in {_named(group)}" for p, group in paths.items())
    if twice:
        why = (f"{_named(twice)} hold it twice, but ids are unique within a schema: id readers bind "
               "these columns to one another's data")
    elif unrelated:
        why = ("the types are unrelated, so it was given to another column: id readers read one's "
               "values as the other's")
    else:
        why = (f"id readers read the older files' values as `{newest}` while name readers (Spark) read "
               "null there: right if it is a rename (Iceberg), a reuse otherwise (Delta never renames "
               "a physical column)")
    evidence = [(f"v{v.number}", ", ".join(_holding(paths, v))) for v in vs]
    return _finding("FIELD_ID_REUSED", "error" if twice or unrelated else "warning",
                    f"field id {fid} is on {spelled}: {why}", vs, newest, _ID_RULE, evidence,
                    subject=f"field_id={fid}")


def _type_at(schema: Schema, path: str) -> DataType:
    return next(t for p, t, _ in walk(schema) if p == path)


def _unrelated(a: DataType, b: DataType) -> bool:
    """No rename keeps a column's values across this type change (the diff calls it CHANGE_TYPE)."""
    return any(op.kind is OpKind.CHANGE_TYPE for op in diff(_alone(a), _alone(b)))


def _alone(t: DataType) -> Schema:
    """A one-column schema, to ask a whole-schema rule about one type."""
    return Schema((Field("c", t),))


def _field_id_changes(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """One path carrying different field ids: id readers see different columns, name readers one."""
    seen: dict[str, dict[int, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v in versions:
        for path, fid in _id_paths(v.footer).items():
            seen[path][fid].append(v)
    found = []
    for path, ids in seen.items():
        if len(ids) < 2:
            continue
        vs = _by_number(ids.values())
        by_version = {v.number: fid for fid, group in ids.items() for v in group}
        spelled = "; ".join(f"{_named(group)}: {fid}" for fid, group in ids.items())
        found.append(_finding(
            "FIELD_ID_CHANGED", "warning",
            f"`{path}` carries different field ids ({spelled}): id readers (Iceberg, Delta column "
            "mapping `id`) take these for different columns and read the files with another id as null "
            "(or as another column, see FIELD_ID_REUSED); name readers (Spark) read one column",
            vs, path, _ID_RULE, [(f"v{v.number}", f"field_id {by_version[v.number]}") for v in vs]))
    return found


# Spark's footer schema against the Parquet schema


_SPARK_RULE = ("parquet-and-spark.md §0.6, §2.2 (Spark uses the footer's Spark schema in preference to "
               "the Parquet schema), §2.4 (Parquet -> Spark types), §2.5 (read-time conversions)")


def _spark_disagreements(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    seen: dict[str, list[tuple[SchemaVersion, str]]] = defaultdict(list)
    for v in versions:
        for path, why in spark_vs_parquet(v.footer).items():
            seen[path].append((v, why))
    return [
        _finding("SPARK_SCHEMA_DISAGREES_WITH_PARQUET", "warning",
                 f"`{path}`: the Spark schema in the footer ({SPARK_SCHEMA_KEY.decode()}) disagrees with "
                 f"the file's Parquet schema in {_named(v for v, _ in hits)}: {hits[0][1]}. Spark takes "
                 "its table schema and its mergeSchema input from that Spark schema, not from the Parquet "
                 "one; Spark never writes such a footer, another writer copied or edited it",
                 [v for v, _ in hits], path, _SPARK_RULE, [(f"v{v.number}", why) for v, why in hits])
        for path, hits in seen.items()
    ]


def spark_vs_parquet(footer: FooterSchema) -> dict[str, str]:
    """Per path, how the footer's Spark schema disagrees with its Parquet schema: a node on one side
    only, another type, another nullability. Types are compared as Spark reads the Parquet column
    (`spark_view`), so the layouts Spark itself writes for its types (INT96 or ms/us timestamps,
    FLBA or INT32/INT64 decimals, legacy lists and maps) agree. Below a node on one side only, or
    of another shape, nothing more is compared."""
    if footer.spark_schema is None:
        return {}
    parquet = {p: (t, n) for p, t, n in walk(footer.schema)}
    spark = {p: (t, n) for p, t, n in walk(footer.spark_schema)}
    layouts = _layouts(footer)
    found: dict[str, str] = {}
    cut: list[str] = []
    for path in dict.fromkeys([*parquet, *spark]):
        if any(_below(path, c) for c in cut):
            continue
        p, s = parquet.get(path), spark.get(path)
        if p is None or s is None or _shape(p[0]) != _shape(s[0]):
            cut.append(path)
        why = _disagreement(p, s, layouts.get(path))
        if why:
            found[path] = why
    return found


def _below(path: str, parent: str) -> bool:
    return path.startswith(parent) and path[len(parent):len(parent) + 1] in (".", "[", "{")


def _shape(t: DataType) -> str:
    return type(t).__name__ if is_nested(t) else "primitive"


Node = tuple[DataType, bool]


def _disagreement(parquet: Node | None, spark: Node | None, layout: str | None) -> str:
    if parquet is None:
        shown = _spark_name(spark[0]) if spark else "?"
        return f"Spark's schema has it ({shown}), the Parquet schema does not"
    if spark is None:
        return f"the Parquet schema has it ({layout or describe(parquet[0])}), Spark's schema does not"
    parts = [_type_disagreement(parquet[0], spark[0], layout)]
    if parquet[1] != spark[1]:
        parts.append(f"Spark says {'nullable' if spark[1] else 'not null'}, the Parquet schema "
                     f"{'OPTIONAL' if parquet[1] else 'REQUIRED'}")
    return "; ".join(p for p in parts if p)


def _type_disagreement(parquet: DataType, spark: DataType, layout: str | None) -> str:
    if is_nested(parquet) or is_nested(spark):
        same = type(parquet) is type(spark)
        return "" if same else f"Spark says {_spark_name(spark)}, the Parquet schema has {describe(parquet)}"
    seen = spark_view(parquet)
    if seen == spark:
        return ""
    how = f"Spark reads it as {_spark_name(seen)}" if not isinstance(seen, str) else seen
    fails = errors(can_read(_alone(parquet), _alone(spark), "spark-read"))
    verdict = "its reader fails on the file" if fails else "its reader converts the values"
    return (f"Spark says {_spark_name(spark)}, the Parquet column is {layout or describe(parquet)} "
            f"({how}; {verdict})")


def _spark_name(t: DataType) -> str:
    """A type as Spark's schema JSON spells it (`timestamp`, `long`), so the Spark side of a
    disagreement reads in Spark's words; nested types in the notation."""
    try:
        name = type_to_spark(t)
    except SparkSchemaError:
        return describe(t)
    return name if isinstance(name, str) else describe(t)


def _case_only(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    spellings: dict[str, dict[str, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v in versions:
        for path, *_ in walk(v.footer.schema):
            spellings[path.lower()][path].append(v)
    found = []
    for names in spellings.values():
        if len(names) < 2:
            continue
        vs = _by_number(names.values())
        evidence = [(f"v{v.number}", ", ".join(_holding(names, v))) for v in vs]
        found.append(_finding(
            "CASE_ONLY_NAME_DIFFERENCE", "warning",
            f"{' / '.join(sorted(names))} differ only in case: Spark's mergeSchema (caseSensitive=false) "
            "folds them into one column named as in the first file; case-sensitive readers see two",
            vs, sorted(names)[0], "compat-rules.md §5 (names differing only in case)", evidence))
    return found


def _missing_in_old(versions: tuple[SchemaVersion, ...]) -> list[Finding]:
    """Columns of the newest version that older files lack: readers fill them with null/defaults."""
    newest = versions[-1]
    found = []
    for path, t, _ in walk(newest.footer.schema):
        if "." in path or "[" in path or "{" in path:
            continue  # nested fields are reported with their top-level column
        lacking = [v for v in versions[:-1] if path not in {p for p, *_ in walk(v.footer.schema)}]
        if not lacking:
            continue
        inv = involved(lacking)
        rows = sum(v.rows for v in lacking)
        evidence = [(f"v{v.number}", "absent") for v in lacking]
        evidence += [(f"v{newest.number}", _layouts(newest.footer).get(path) or describe(t)),
                     ("rows without it", str(rows))]
        found.append(_finding(
            "COLUMN_MISSING_IN_OLD_FILES", "info",
            f"`{path}` is absent from {inv.count} older file(s) ({rows:,} rows): readers fill it with "
            "null or their default", lacking, path,
            "parquet-and-spark.md §2.6 (extra column in file B)", evidence))
    return found
