"""The gate before enabling `mergeSchema` on a table (`schemaguard gate PATH`, jobs/merge_gate.py).

It answers, from the footers alone (no Spark): will `spark.read.option("mergeSchema", "true")`
succeed on this table, what schema comes out, which files and columns conflict, and what a read
without mergeSchema silently loses. The facts it rests on (docs/reference/parquet-and-spark.md §2, checked
against the pinned Spark in tests/test_gate.py):

- Spark sorts the listed leaves by their path string (`ParquetUtils.splitFiles`:
  `sortBy(_.getPath.toString)`), a Java string order: UTF-16 code units, which differs from
  Python's code-point order for names outside the Basic Multilingual Plane (§2.1).
- With mergeSchema, every data file is merged in that order, then every `_metadata`, then every
  `_common_metadata` summary file; the first file leads the merged field order (§2.1, §2.5).
  Each footer contributes Spark's own schema from its key-value metadata when it has one, else
  the converted Parquet schema (§2.2). Every file whose footer cannot be read fails the merge
  (on the pinned Spark 4.1 a zero-byte file does too: CANNOT_READ_FILE_FOOTER).
- Without it, the schema comes from the first `_common_metadata`, else the first `_metadata`,
  else the first data file in that order, whether or not that file is readable (§2.1).
- Either way, each file is then read with that one schema by the vectorized reader, which widens
  some types and fails on the rest per file (§2.5: profile `spark-read`).
- `spark.read` reports every column nullable (§2.5), so the schemas here are all nullable too;
  Spark appends the partition columns (named in `partition_columns`) after the data columns.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from schemaguard.acyclic import acyclic
from schemaguard.base import Conflict, Options, Problem, ProblemCode, Rule, errors
from schemaguard.checks.finding import Finding, FindingCode, Involvement, finding
from schemaguard.formats.notation import describe
from schemaguard.formats.parquet import FooterSchema
from schemaguard.formats.spark_view import SPARK_ILLEGAL, SparkUnreadable, as_nullable, spark_type
from schemaguard.lake.discover import Listing, spark_order_key
from schemaguard.lake.history import SAMPLE, SchemaVersion, leaf_layouts
from schemaguard.lake.scan import Unreadable
from schemaguard.lake.table import SUMMARY_FILES, TableRead
from schemaguard.model import (
    DataType,
    ListType,
    MapType,
    Schema,
    StructType,
    child_nodes,
    walk,
)
from schemaguard.paths import segment
from schemaguard.rules.identity import duplicate_names
from schemaguard.rules.profiles import can_read, merge_schemas

SchemaRead = Literal["without_merge", "merged"]
SchemaSource = Literal["_common_metadata", "_metadata", "data file"]
SUMMARY_PREFERENCE: tuple[SchemaSource, ...] = ("_common_metadata", "_metadata")  # without mergeSchema


# ---------------------------------------------------------------------------------------------
# The report


@dataclass(frozen=True, slots=True)
class Side:
    """The versions (and summary files) that bring one side of a conflict."""

    type: str
    versions: tuple[int, ...]
    count: int  # files in all
    files: tuple[str, ...]  # a bounded sample, table-relative


@dataclass(frozen=True, slots=True)
class GateConflict:
    path: str
    message: str
    rule: Rule
    left: Side  # what the files merged before it hold (Spark's left side)
    right: Side  # what the file that fails the merge holds


@dataclass(frozen=True, slots=True)
class VersionType:
    version: int
    type: str  # as Spark sees the column in that version's files
    count: int
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LostColumn:
    """A column some versions hold that the schema without merge lacks: never read."""

    path: str
    type: str
    versions: tuple[int, ...]
    count: int
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RelabelledColumn:
    """A column whose type in the schema without merge differs from its type in some version."""

    path: str
    type: str  # in the schema without merge
    versions: tuple[VersionType, ...]  # every version holding the column, with its type


@dataclass(frozen=True, slots=True)
class WithoutMerge:
    from_file: str | None  # table-relative; None: nothing to take a schema from
    source: SchemaSource | None
    version: int | None  # the version of `from_file` when it is a data file
    schema: Schema | None  # None when Spark cannot take a schema from that file (see `error`)
    error: str | None
    lost_columns: tuple[LostColumn, ...]
    relabelled_columns: tuple[RelabelledColumn, ...]


@dataclass(frozen=True, slots=True)
class ReadFailure:
    """Reading one version's files with one schema fails (vectorized reader, per file)."""

    schema: SchemaRead
    version: int
    count: int
    files: tuple[str, ...]
    path: str
    code: ProblemCode
    message: str
    rule: Rule


@dataclass(frozen=True, slots=True)
class DuplicateName:
    """A column one struct names twice (as Spark compares names): Spark cannot resolve it."""

    path: str
    names: tuple[str, ...]
    versions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GateReport:
    table: str
    versions: int
    data_files: int
    merge_order: tuple[int, ...]  # version numbers in the order Spark merges them
    merged: Schema | None  # the footers' merge; None when it conflicts
    conflicts: tuple[GateConflict, ...]
    without_merge: WithoutMerge
    read_failures: tuple[ReadFailure, ...]
    unreadable: tuple[Unreadable, ...]
    partition_columns: tuple[str, ...]
    notes: tuple[str, ...] = ()
    duplicates: tuple[DuplicateName, ...] = ()

    @property
    def merge_safe(self) -> bool:
        """The merge succeeds, every version reads with the merged schema, every file is readable,
        and no column is named twice."""
        return (self.merged is not None and not self.unreadable and not self.duplicates
                and not any(f.schema == "merged" for f in self.read_failures))

    @property
    def exit_code(self) -> int:
        return 0 if self.merge_safe else 1


# ---------------------------------------------------------------------------------------------
# Evaluation


@dataclass(frozen=True, slots=True)
class _Source:
    """One input of Spark's merge: a schema version, or a summary file."""

    version: int | None
    count: int
    files: tuple[str, ...]
    schema: Schema  # what Spark takes from the footer: its own schema if written, else the Parquet one


def _spark_input(footer: FooterSchema) -> Schema:
    """ParquetFileFormat.readSchemaFromFooter: Spark's schema from the key-value metadata when it
    parses, else the converted Parquet schema (docs/reference/parquet-and-spark.md §2.2)."""
    return footer.spark_schema if footer.spark_schema is not None else footer.schema


def _version_source(v: SchemaVersion) -> _Source:
    return _Source(v.number, len(v.files), v.sample, _spark_input(v.footer))


def _ordered(table: TableRead) -> list[SchemaVersion]:
    """The versions holding files, in the order Spark's merge meets them (by their first file)."""
    first_file = {v.number: min(map(spark_order_key, v.files.rels())) for v in table.history.versions
                  if v.files}
    return sorted((v for v in table.history.versions if v.files), key=lambda v: first_file[v.number])


def _summaries(table: TableRead) -> tuple[dict[str, list[tuple[str, Schema]]], dict[str, str]]:
    """The summary files' schemas by file name (`_metadata`, `_common_metadata`), and why each
    unreadable one could not be read."""
    summaries: dict[str, list[tuple[str, Schema]]] = {name: [] for name in SUMMARY_FILES}
    errors: dict[str, str] = {}
    for s in table.summaries:
        if isinstance(s, Unreadable):
            errors[s.rel] = s.reason
        else:
            summaries[s.rel.rpartition("/")[2]].append((s.rel, _spark_input(s.footer)))
    return summaries, errors


def _sources(ordered: list[SchemaVersion], summaries: dict[str, list[tuple[str, Schema]]]) -> list[_Source]:
    """What Spark's mergeSchema merges, in its order: the data files' versions, then the summaries."""
    return [*(_version_source(v) for v in ordered),
            *(_Source(None, 1, (rel,), schema) for name in SUMMARY_FILES for rel, schema in summaries[name])]


@acyclic()
def evaluate_gate(table: TableRead, allow_quiet: bool = False) -> GateReport:
    """The gate's verdict from what was read of a table: its listing, footers, summary files and
    versions. Spark is not needed. Quiet breaks fail reads unless `allow_quiet`."""
    history = table.history
    ordered = _ordered(table)
    version_of = {rel: v.number for v in history.versions for rel in v.files.rels()}

    unreadable = [Unreadable(u.rel, u.reason) for u in table.scan.unreadable]
    unreadable += [Unreadable(s.rel, s.why) for s in table.listing.stale_checksums]
    unreadable += [Unreadable(rel, f"Spark cannot read it: {v.footer.spark_refusal}")
                   for v in history.versions if v.footer.spark_refusal for rel in v.files.rels()]
    summaries, summary_errors = _summaries(table)
    unreadable += [Unreadable(rel, f"summary file: {why}") for rel, why in summary_errors.items()]

    sources = _sources(ordered, summaries)
    result = merge_schemas([s.schema for s in sources], "spark-merge")
    nodes = [_nodes(s.schema) for s in sources]  # each input's nodes once, whatever asks
    conflicts = [_gate_conflict(c, sources, nodes) for c in result.conflicts]
    # as `spark.read` reports it
    merged = as_nullable(result.merged) if result.merged is not None and sources else None
    notes: list[str] = []
    if not sources:
        notes.append("no readable footer: Spark cannot infer a schema (UNABLE_TO_INFER_SCHEMA)")
    if len(conflicts) > 1:
        notes.append("every conflicting column is listed; Spark's error names only the first")
    listing = table.listing
    if listing.partition_columns:
        notes.append(f"Spark appends the partition column(s) {', '.join(listing.partition_columns)} "
                     "after the data columns of both schemas")
    if any(summaries.values()) or summary_errors:
        notes.append("summary files (_metadata/_common_metadata) are merged after the data files, and "
                     "without mergeSchema Spark takes its schema from one of them")

    without = _without_merge(listing, ordered, nodes[:len(ordered)], summaries, summary_errors, version_of,
                             unreadable)
    failures: list[ReadFailure] = []
    if without.schema is not None:
        failures += _read_failures("without_merge", without.schema, ordered, allow_quiet)
    if merged is not None:
        failures += _read_failures("merged", merged, ordered, allow_quiet)
    return GateReport(table.location, len(history.versions), len(listing.files),
                      tuple(v.number for v in ordered), merged, tuple(conflicts), without, tuple(failures),
                      tuple(unreadable), listing.partition_columns, tuple(notes), duplicated(ordered))


def duplicated(versions: Iterable[SchemaVersion], case_sensitive: bool = False) -> tuple[DuplicateName, ...]:
    """Columns named twice in a version, as Spark compares names (case-insensitively by default),
    each with the versions that hold it."""
    holders: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for v in sorted(versions, key=lambda v: v.number):
        for path, names in duplicate_names(v.footer.schema, case_sensitive):
            holders.setdefault((path, names), []).append(v.number)
    return tuple(DuplicateName(path, names, tuple(vs)) for (path, names), vs in holders.items())


# --- the sides of each conflict ----------------------------------------------------------------


def _gate_conflict(c: Conflict, sources: list[_Source], nodes: list[dict[str, _Node]]) -> GateConflict:
    """The conflict with the inputs that bring each side: the right side is every input holding the
    type of the one that failed the merge; the left side every input merged before it that holds the
    column (or holds the left type later). O(inputs) a conflict: each input's nodes are indexed once."""
    key, at = c.path.lower(), c.input
    types = [n.get(key) for n in nodes]
    if c.rule.id == SPARK_ILLEGAL.id:
        right = [i for i, n in enumerate(types) if n is not None and n.raw == c.right]
        left: list[int] = []
    else:
        right = [i for i, n in enumerate(types) if n is not None and n.spark == c.right] or [at]
        left = [i for i, n in enumerate(types)
                if n is not None and i not in right and (i < at or n.spark == c.left)]
    return GateConflict(c.path, c.message, c.rule, _side(c.left, left, sources),
                        _side(c.right, right, sources))


def _side(type_: str, indexes: list[int], sources: list[_Source]) -> Side:
    chosen = [sources[i] for i in indexes]
    files = [f for s in chosen for f in s.files]
    return Side(type_, tuple(sorted(s.version for s in chosen if s.version is not None)),
                sum(s.count for s in chosen), tuple(files[:SAMPLE]))


# --- the schema without merge ------------------------------------------------------------------


class _Node(NamedTuple):  # a tuple: one per node of every version
    path: str
    parent: str | None  # lower-cased parent path; None at the top level
    struct_field: bool  # a field of a struct (or the top level), not a list element or map key/value
    kind: str | None  # struct, list, map; None for a primitive
    spark: str  # the type as Spark sees it
    raw: str  # the type as the footer holds it


def _nodes(schema: Schema) -> dict[str, _Node]:
    """Every node of a schema by lower-cased path (Spark matches names case-insensitively); a
    second spelling of one name is folded into the first, as Spark folds it."""
    out: dict[str, _Node] = {}
    above: dict[str, tuple[str | None, bool]] = {segment(f.name): (None, True) for f in schema.fields}
    for path, t, _ in walk(schema):  # parents before children
        key = path.lower()
        parent, struct_field = above[path]
        kind = _kind(t)
        out.setdefault(key, _Node(path, parent, struct_field, kind, _spark_text(t), describe(t)))
        for suffix, _child, _ in child_nodes(t) if kind is not None else ():
            above[path + suffix] = (key, suffix.startswith("."))
    return out


_KINDS: dict[type, str] = {StructType: "struct", ListType: "list", MapType: "map"}


def _kind(t: DataType) -> str | None:
    return _KINDS.get(type(t))


def _spark_text(t: DataType) -> str:
    """The type spelled as Spark sees it (docs/reference/parquet-and-spark.md §2.4), or why Spark
    cannot read it."""
    if isinstance(t, StructType | ListType | MapType):
        return _spark_text_of(t)
    return _leaf_spark_text(t)


@functools.lru_cache(maxsize=4096)
def _leaf_spark_text(t: DataType) -> str:
    """`_spark_text` of a type without children, remembered: a wide table repeats a few types."""
    return _spark_text_of(t)


def _spark_text_of(t: DataType) -> str:
    try:
        return describe(spark_type(t))
    except SparkUnreadable as e:
        return f"{describe(t)} (Spark cannot read it: {e.why})"


def _differs(a: _Node, b: _Node) -> bool:
    """Spark reads the column as another type: another kind, or another primitive type."""
    if a.kind is not None and b.kind is not None:
        return a.kind != b.kind
    return a.spark != b.spark


def _without_merge(
    listing: Listing,
    ordered: list[SchemaVersion],
    held: list[dict[str, _Node]],
    summaries: dict[str, list[tuple[str, Schema]]],
    summary_errors: dict[str, str],
    version_of: dict[str, int],
    unreadable: list[Unreadable],
) -> WithoutMerge:
    """ParquetUtils.inferSchema without mergeSchema: the first `_common_metadata`, else the first
    `_metadata`, else the first data file, readable or not."""
    source: SchemaSource
    schema: Schema | None = None
    error: str | None = None
    for name in SUMMARY_PREFERENCE:
        candidates = sorted([*(rel for rel, _ in summaries[name]),
                             *(rel for rel in summary_errors if rel.rpartition("/")[2] == name)],
                            key=spark_order_key)
        if candidates:
            from_file, source, version = candidates[0], name, None
            found = dict(summaries[name]).get(from_file)
            schema, error = (found, None) if found is not None else (None, summary_errors[from_file])
            break
    else:
        if not listing.files:
            return WithoutMerge(None, None, None, None, "no data files: Spark cannot infer a schema "
                                "(UNABLE_TO_INFER_SCHEMA)", (), ())
        from_file = min((f.rel for f in listing.files), key=spark_order_key)
        source, version = "data file", version_of.get(from_file)
        bad = {u.rel: u.reason for u in unreadable}
        if from_file in bad:
            error = f"Spark cannot read its footer or data: {bad[from_file]}"
        elif version is not None:
            schema = next(_spark_input(v.footer) for v in ordered if v.number == version)
    if schema is not None:
        alone = merge_schemas([schema], "spark-merge")  # Spark's view of it; fails on types Spark cannot read
        schema = as_nullable(alone.merged) if alone.merged is not None else None
        error = None if alone.merged is not None else alone.conflicts[0].message
    if schema is None:
        return WithoutMerge(from_file, source, version, None, error, (), ())
    have = _nodes(schema)
    return WithoutMerge(from_file, source, version, schema, None, _lost(have, ordered, held),
                        _relabelled(have, ordered, held))


def _lost(have: dict[str, _Node], ordered: list[SchemaVersion], held: list[dict[str, _Node]]
          ) -> tuple[LostColumn, ...]:
    """Struct fields some versions hold (`held`: each version's nodes) whose parent the chosen
    schema (its nodes `have`) has as a struct but which it lacks itself: the read never asks for
    them. Only the topmost missing field is named."""
    lost: dict[str, tuple[_Node, list[SchemaVersion]]] = {}
    for v, nodes in zip(ordered, held, strict=True):
        for key, node in nodes.items():
            if key in have or not node.struct_field:
                continue
            if node.parent is None or (node.parent in have and have[node.parent].kind == "struct"):
                lost.setdefault(key, (node, []))[1].append(v)
    return tuple(LostColumn(node.path, node.spark, *_versions_files(vs)) for node, vs in lost.values())


def _relabelled(have: dict[str, _Node], ordered: list[SchemaVersion], held: list[dict[str, _Node]]
                ) -> tuple[RelabelledColumn, ...]:
    """Columns of the chosen schema that some version holds as another type (as Spark sees both)."""
    seen: dict[str, list[tuple[SchemaVersion, _Node]]] = {}
    for v, nodes in zip(ordered, held, strict=True):
        for key, node in nodes.items():
            if key in have:
                seen.setdefault(key, []).append((v, node))
    out = []
    for key, node in have.items():
        holders = seen.get(key, [])
        if any(_differs(node, n) for _, n in holders):
            out.append(RelabelledColumn(node.path, node.spark, tuple(
                VersionType(v.number, n.spark, len(v.files), v.sample)
                for v, n in holders)))
    return tuple(out)


def _versions_files(versions: Sequence[SchemaVersion]) -> tuple[tuple[int, ...], int, tuple[str, ...]]:
    files = [rel for v in versions for rel in v.sample]
    return (tuple(sorted(v.number for v in versions)), sum(len(v.files) for v in versions),
            tuple(files[:SAMPLE]))


# --- reading every version with one schema -----------------------------------------------------


def _read_failures(which: SchemaRead, reader: Schema, ordered: Iterable[SchemaVersion],
                   allow_quiet: bool) -> list[ReadFailure]:
    """Spark's vectorized reader reading each version's files with `reader` (profile spark-read: the
    file's Parquet types against the requested Spark types); quiet breaks are failures too."""
    out: list[ReadFailure] = []
    options = Options(allow_quiet=allow_quiet)
    for v in sorted(ordered, key=lambda v: v.number):
        problems: list[Problem] = errors(can_read(v.footer.schema, reader, "spark-read", options))
        files = v.sample
        out += [ReadFailure(which, v.number, len(v.files), files, p.path, p.code, p.message, p.rule)
                for p in problems]
    return out




# ---------------------------------------------------------------------------------------------
# The audit's finding: the gate's conflicts


def merge_conflicts(table: TableRead, _: object = None) -> list[Finding]:
    """SPARK_MERGE_CONFLICT: every column the gate finds Spark's mergeSchema failing on, naming the
    versions that hold it and how each holds it. The gate's own analysis, so the two agree.
    Not for a Delta or Iceberg table: their readers read the snapshot with the log's schema, never
    merging footers (`mergeSchema` on a Delta read is a write option). O(versions x columns) to
    index the versions' nodes once, then O(versions) a conflict."""
    if table.table_format != "parquet":
        return []
    conflicts = merge_schemas([s.schema for s in _sources(_ordered(table), _summaries(table)[0])],
                              "spark-merge").conflicts  # the gate's merge, without the rest of its report
    if not conflicts:
        return []
    held = [(v, f"v{v.number}", _held(v.footer), leaf_layouts(v.footer)) for v in table.versions]
    found, of = [], Involvement()
    for c in conflicts:
        key = c.path.lower()
        vs = [(v, label, layouts.get(nodes[key][0]) or describe(nodes[key][1]))
              for v, label, nodes, layouts in held if key in nodes]
        found.append(finding(
            FindingCode.SPARK_MERGE_CONFLICT,
            f"spark.read.option('mergeSchema', 'true') fails on this table: {c.message}",
            [v for v, _, _ in vs], c.path, [(label, text) for _, label, text in vs],
            rule=f"{c.rule.id} ({c.rule.source})", of=of))
    return found


def _held(footer: FooterSchema) -> dict[str, tuple[str, DataType]]:
    """A version's nodes (path, type) by lower-cased path, as Spark's merge matches names; the first
    spelling of a path wins."""
    out: dict[str, tuple[str, DataType]] = {}
    for p, t, _ in walk(footer.schema):
        out.setdefault(p.lower(), (p, t))
    return out
