"""What the versions on disk show about one column across them: its Parquet layout drifting,
REQUIRED in some and OPTIONAL in others, names differing only in case, columns older files lack."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import chain
from typing import NamedTuple, TypeVar

from schemaguard.checks.compat import CheckOptions
from schemaguard.checks.finding import Evidence, Finding, FindingCode, Involvement, finding, numbers
from schemaguard.checks.gate import duplicated
from schemaguard.formats.notation import describe
from schemaguard.lake.history import SchemaVersion, leaf_layouts
from schemaguard.lake.table import TableRead
from schemaguard.model import walk

K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Hashable)


def varying(versions: Sequence[SchemaVersion], values: Callable[[SchemaVersion], Iterable[tuple[K, V]]],
            ) -> dict[K, dict[V, list[SchemaVersion]]]:
    """Per key (a path, a field id), the versions holding each of its values, for the keys seen
    with more than one value: a column's layouts, its nullability, the paths of one id. O(versions
    x keys); the keys that vary are found by sets and counting (C loops), so a table whose versions
    agree costs no Python loop over their keys."""
    held = [(v, list(values(v))) for v in versions]
    distinct = set(chain.from_iterable(pairs for _, pairs in held))
    varies = {key for key, n in Counter(key for key, _ in distinct).items() if n > 1}
    seen: dict[K, dict[V, list[SchemaVersion]]] = defaultdict(lambda: defaultdict(list))
    for v, pairs in held if varies else ():
        for key, value in pairs:
            if key in varies:
                seen[key][value].append(v)
    return {key: dict(by_value) for key, by_value in seen.items()}


def by_number(groups: Iterable[list[SchemaVersion]]) -> list[SchemaVersion]:
    """The versions in any of the groups, once each, oldest first."""
    return sorted({v.number: v for vs in groups for v in vs}.values(), key=lambda v: v.number)


def named(versions: Iterable[SchemaVersion]) -> str:
    return ",".join(f"v{v.number}" for v in versions)


def values_by_version(groups: dict[V, list[SchemaVersion]]) -> dict[int, list[V]]:
    """Per version number, the values (paths, spellings) whose group holds it: the groups turned
    round once, O(their sizes), not searched for each version."""
    out: dict[int, list[V]] = defaultdict(list)
    for key, group in groups.items():
        for v in group:
            out[v.number].append(key)
    return out


def layout_drift(table: TableRead, _: object = None) -> list[Finding]:
    """A leaf whose type or Parquet layout (backing, annotation, unit, UTC flag, INT96) differs;
    a REQUIRED / OPTIONAL difference alone is NULLABILITY_MISMATCH's. O(versions x leaves); what
    the finding says of the versions is spelt once per distinct drift (20,000 columns moved from
    int32 to int64 between the same versions drift alike)."""
    found, of = [], Involvement()
    told: dict[tuple[tuple[str, tuple[int, ...]], ...], _Drift] = {}
    for path, layouts in varying(table.versions, lambda v: leaf_layouts(v.footer).items()).items():
        key = tuple((layout, numbers(group)) for layout, group in layouts.items())
        drift = told.get(key) or told.setdefault(key, _drift(layouts))
        said = f"`{path}` is stored differently across versions: {drift.spelled}"
        found.append(finding(FindingCode.LOGICAL_TYPE_DRIFT, said, drift.versions, path, drift.evidence,
                             of=of))
    return found


class _Drift(NamedTuple):
    versions: list[SchemaVersion]  # oldest first
    spelled: str  # each layout with the versions holding it
    evidence: Evidence  # each version's layout


def _drift(layouts: dict[str, list[SchemaVersion]]) -> _Drift:
    """What a drift says of its versions, from each layout's versions."""
    vs = by_number(layouts.values())
    by_version = {v.number: layout for layout, group in layouts.items() for v in group}
    return _Drift(vs, "; ".join(f"{named(group)}: {layout}" for layout, group in layouts.items()),
                  [(f"v{v.number}", by_version[v.number]) for v in vs])


def nullability(table: TableRead, _: object = None) -> list[Finding]:
    """A node (column, nested field, list element, map value) REQUIRED in some versions and
    OPTIONAL in others. O(versions x nodes), then one pass over the OPTIONAL versions' files for
    the null counts of all the columns found (each file's statistics decoded once)."""
    flags = varying(table.versions, lambda v: ((p, n) for p, _, n in walk(v.footer.schema)))
    nulls = _top_level_nulls({path: by_flag[True] for path, by_flag in flags.items()})
    return [_nullability_finding(path, by_flag[False], by_flag[True], nulls[path])
            for path, by_flag in flags.items()]


def _nullability_finding(path: str, required: list[SchemaVersion], optional: list[SchemaVersion],
                         nulls: int | None) -> Finding:
    vs = by_number([required, optional])
    flags = values_by_version({"REQUIRED": required, "OPTIONAL": optional})
    evidence = [(f"v{v.number}", flags[v.number][0]) for v in vs]
    held = ""
    if nulls is not None:
        evidence.append(("nulls in OPTIONAL files", str(nulls)))
        held = f" (holding {nulls:,} null(s), by footer statistics)"
    return finding(
        FindingCode.NULLABILITY_MISMATCH,
        f"`{path}` is REQUIRED in {named(required)} and OPTIONAL in {named(optional)}{held}: Spark "
        "reads every Parquet column as nullable, so Spark reads are unaffected; a reader declaring it "
        "not null (Delta reading with forbidTightenNullability, an Iceberg required field) rejects the "
        "OPTIONAL files, and Delta refuses nulls written into a NOT NULL column",
        vs, path, evidence)


def _top_level_nulls(versions: dict[str, list[SchemaVersion]]) -> dict[str, int | None]:
    """Per path, the null values of a top-level leaf over its versions' files, from footer
    statistics; None when unknown or nested (a nested leaf's null count also counts its parents'
    nulls and empty lists). One pass over the files: each is built once, whatever the paths."""
    total: dict[str, int | None] = dict.fromkeys(versions, 0)
    wanted = values_by_version(versions)
    columns: dict[int, dict[str, int]] = {}  # per distinct footer schema (shared objects): top-level leaves
    for v in by_number(versions.values()):
        for f in v.files:  # each file's own columns: a version's files may shred a VARIANT apiece
            top = columns.get(id(f.footer))
            if top is None:
                top = columns[id(f.footer)] = {}
                for i, c in enumerate(f.footer.columns):
                    if len(c.parquet_path) == 1:
                        top.setdefault(c.path, i)  # the model path: a name holding a dot is quoted
            for path in wanted[v.number]:
                so_far, index = total[path], top.get(path)
                if so_far is not None:  # once unknown, a path stays unknown
                    nulls = None if index is None else f.stats[index].null_count
                    total[path] = None if nulls is None else so_far + nulls
    return total


def case_only(table: TableRead, _: object = None) -> list[Finding]:
    """Names that differ only in case across versions (within one version they are another
    problem: Spark refuses duplicate columns). O(versions x nodes)."""
    if len(table.versions) < 2:
        return []
    found = []
    spellings = varying(table.versions, lambda v: ((p.lower(), p) for p, *_ in walk(v.footer.schema)))
    for names in spellings.values():
        vs = by_number(names.values())
        spelt = values_by_version(names)
        evidence = [(f"v{v.number}", ", ".join(spelt[v.number])) for v in vs]
        found.append(finding(
            FindingCode.CASE_ONLY_NAME_DIFFERENCE,
            f"{' / '.join(sorted(names))} differ only in case: Spark's mergeSchema (caseSensitive=false) "
            "folds them into one column named as in the first file; case-sensitive readers see two",
            vs, sorted(names)[0], evidence))
    return found


def missing_in_old(table: TableRead, _: object = None) -> list[Finding]:
    """Columns of the newest version that older files lack: readers fill them with null/defaults.
    O(versions x top-level columns)."""
    versions = table.versions
    if len(versions) < 2:
        return []
    newest = versions[-1]
    held = [set(v.footer.schema.field_names()) for v in versions[:-1]]
    layouts = leaf_layouts(newest.footer)
    found, of = [], Involvement()
    for f in newest.footer.schema.fields:  # nested fields are reported with their top-level column
        path, t = f.name, f.type
        lacking = [v for v, names in zip(versions[:-1], held, strict=True) if path not in names]
        if not lacking:
            continue
        files = sum(len(v.files) for v in lacking)
        rows = sum(v.rows for v in lacking)
        evidence = [(f"v{v.number}", "absent") for v in lacking]
        evidence += [(f"v{newest.number}", layouts.get(path) or describe(t)), ("rows without it", str(rows))]
        found.append(finding(
            FindingCode.COLUMN_MISSING_IN_OLD_FILES,
            f"`{path}` is absent from {files} older file(s) ({rows:,} rows): readers fill it with "
            "null or their default", lacking, path, evidence, of=of))
    return found


def duplicates(table: TableRead, opts: CheckOptions) -> list[Finding]:
    """Columns named twice in one version's footer (exactly, or in case when the readers compare
    names case-insensitively): one finding per column, naming the versions that hold it (the
    gate's own analysis, so the two agree). O(versions x nodes)."""
    case_sensitive = opts.options.case_sensitive
    how = "exactly" if case_sensitive else "case-insensitively, as spark.sql.caseSensitive=false compares"
    number = {v.number: v for v in table.versions}
    return [finding(
        FindingCode.DUPLICATE_COLUMN_NAME,
        f"`{d.path}` is named {len(d.names)} times in one struct ({', '.join(d.names)}), compared {how}: "
        "Spark cannot resolve the column: it fails the read, with or without mergeSchema, or (case-"
        "sensitive, behind another file's schema) reads the first of them and drops the other",
        [number[n] for n in d.versions], d.path, [(f"v{n}", ", ".join(d.names)) for n in d.versions])
        for d in duplicated(table.versions, case_sensitive)]
