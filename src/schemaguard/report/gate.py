"""The gate before enabling `mergeSchema` on a table (`schemaguard gate PATH`, jobs/merge_gate.py).

It answers, from the footers alone (no Spark): will `spark.read.option("mergeSchema", "true")`
succeed on this table, what schema comes out, which files and columns conflict, and what a read
without mergeSchema silently loses. The facts it rests on (parquet-and-spark.md §2, checked
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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

from schemaguard.formats.notation import describe, schema_to_notation
from schemaguard.formats.parquet import FooterSchema, UnreadableFile, read_footer
from schemaguard.lake.discover import Listing, spark_order_key
from schemaguard.lake.history import History, SchemaVersion
from schemaguard.lake.scan import ScanResult, Unreadable
from schemaguard.model import DataType, Field, ListType, MapType, Schema, StructType, child_nodes
from schemaguard.report.console import console as terminal
from schemaguard.report.findings import SAMPLE
from schemaguard.report.rules_output import _count, _finding_line, _print, merged_table
from schemaguard.rules.merge import SPARK_ILLEGAL, Conflict, merge
from schemaguard.rules.profiles import Problem, Rule, can_read, errors, spark_view

SchemaRead = Literal["without_merge", "merged"]
SchemaSource = Literal["_common_metadata", "_metadata", "data file"]
SUMMARY_FILES = ("_metadata", "_common_metadata")  # the order mergeSchema merges them in, after the data
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
    code: str
    message: str
    rule: Rule


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

    @property
    def merge_safe(self) -> bool:
        """The merge succeeds, every version reads with the merged schema, and every file is readable."""
        return (self.merged is not None and not self.unreadable
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
    parses, else the converted Parquet schema (parquet-and-spark.md §2.2)."""
    return footer.spark_schema if footer.spark_schema is not None else footer.schema


def _version_source(v: SchemaVersion) -> _Source:
    return _Source(v.number, len(v.files), tuple(f.rel for f in v.files[:SAMPLE]), _spark_input(v.footer))


def evaluate_gate(table: str, listing: Listing, result: ScanResult, history: History) -> GateReport:
    """The gate's verdict from a listing, its footer scan and the versions built from it. Spark is
    not needed; the only I/O is reading the footers of `_metadata`/`_common_metadata` summary files,
    which the scan does not read."""
    first_file = {v.number: min(spark_order_key(f.rel) for f in v.files) for v in history.versions if v.files}
    ordered = sorted((v for v in history.versions if v.files), key=lambda v: first_file[v.number])
    version_of = {f.rel: v.number for v in history.versions for f in v.files}

    unreadable = [Unreadable(u.rel, u.reason) for u in result.unreadable]
    unreadable += [Unreadable(s.rel, s.why) for s in listing.stale_checksums]
    summaries: dict[str, list[tuple[str, Schema]]] = {name: [] for name in SUMMARY_FILES}
    summary_errors: dict[str, str] = {}
    for rel, name in _summary_files(listing):
        try:
            footer = read_footer(f"{listing.root.rstrip('/')}/{rel}",
                                 filesystem=None if listing.is_local else listing.filesystem, rel=rel)
        except UnreadableFile as e:
            unreadable.append(Unreadable(rel, f"summary file: {e.reason}"))
            summary_errors[rel] = e.reason
            continue
        summaries[name].append((rel, _spark_input(footer.footer)))

    sources = [_version_source(v) for v in ordered]
    sources += [_Source(None, 1, (rel,), schema)
                for name in SUMMARY_FILES for rel, schema in summaries[name]]
    merged, conflicts = _merge_all(sources)
    notes: list[str] = []
    if not sources:
        notes.append("no readable footer: Spark cannot infer a schema (UNABLE_TO_INFER_SCHEMA)")
    if len(conflicts) > 1:
        notes.append("every conflicting column is listed; Spark's error names only the first")
    if listing.partition_columns:
        notes.append(f"Spark appends the partition column(s) {', '.join(listing.partition_columns)} "
                     "after the data columns of both schemas")
    if any(summaries.values()) or summary_errors:
        notes.append("summary files (_metadata/_common_metadata) are merged after the data files, and "
                     "without mergeSchema Spark takes its schema from one of them")

    without = _without_merge(listing, ordered, summaries, summary_errors, version_of, unreadable)
    failures: list[ReadFailure] = []
    if without.schema is not None:
        failures += _read_failures("without_merge", without.schema, ordered)
    if merged is not None:
        failures += _read_failures("merged", merged, ordered)
    return GateReport(table, len(history.versions), len(listing.files), tuple(v.number for v in ordered),
                      merged, tuple(conflicts), without, tuple(failures), tuple(unreadable),
                      listing.partition_columns, tuple(notes))


def _summary_files(listing: Listing) -> list[tuple[str, str]]:
    """(rel, name) of every summary file Spark lists, in Spark's order."""
    found = [(i.rel, i.rel.rpartition("/")[2]) for i in listing.ignored]
    return sorted(((rel, name) for rel, name in found if name in SUMMARY_FILES),
                  key=lambda x: spark_order_key(x[0]))


# --- the merge, every conflict -----------------------------------------------------------------


def _merge_all(sources: list[_Source]) -> tuple[Schema | None, list[GateConflict]]:
    """Spark's merge in Spark's order. On a conflict, the column is taken out of every input and
    the merge goes on, so that every conflicting column is found, not only the first."""
    schemas = [s.schema for s in sources]
    conflicts: list[GateConflict] = []
    while schemas:
        acc: Schema | None = None
        failed: tuple[int, Conflict] | None = None
        for i, schema in enumerate(schemas):
            step = merge([schema] if acc is None else [acc, schema], "spark-merge")
            if step.merged is None:
                failed = (i, step.conflicts[0])
                break
            acc = step.merged
        if failed is None:
            return (None if conflicts or acc is None else _nullable_schema(acc)), conflicts
        i, c = failed
        conflicts.append(_gate_conflict(c, i, sources, schemas))
        dropped = [_drop(s, c.path) for s in schemas]
        if all(d == s for d, s in zip(dropped, schemas, strict=True)):
            break  # cannot take the column out: stop at what was found
        schemas = dropped
    return None, conflicts


def _gate_conflict(c: Conflict, at: int, sources: list[_Source], schemas: list[Schema]) -> GateConflict:
    """The conflict with the inputs that bring each side: the right side is every input holding the
    type of the one that failed the merge; the left side every input merged before it that holds the
    column (or holds the left type later)."""
    key = c.path.lower()
    types = [_nodes(s).get(key) for s in schemas]
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


def _drop(schema: Schema, path: str) -> Schema:
    """`schema` without the field a conflict path points into (`a.b[]` -> field `a.b`)."""
    while True:
        for suffix in ("[]", "{key}", "{value}"):
            if path.endswith(suffix):
                path = path[:-len(suffix)]
                break
        else:
            break
    return Schema(_drop_fields(schema.fields, path))


def _drop_fields(fields: tuple[Field, ...], path: str) -> tuple[Field, ...]:
    out: list[Field] = []
    for f in fields:
        name = f.name.lower()
        if path.lower() == name:
            continue
        rest = path[len(f.name):] if path.lower().startswith(name) else ""
        if rest[:1] in (".", "[", "{"):
            f = Field(f.name, _drop_type(f.type, rest), f.nullable, f.id, f.default_json, f.aliases,
                      f.metadata)
        out.append(f)
    return tuple(out)


def _drop_type(t: DataType, rest: str) -> DataType:
    if isinstance(t, StructType) and rest.startswith("."):
        return StructType(_drop_fields(t.fields, rest[1:]))
    if isinstance(t, ListType) and rest.startswith("[]"):
        return ListType(_drop_type(t.element, rest[2:]), t.element_nullable)
    if isinstance(t, MapType) and rest.startswith("{key}"):
        return MapType(_drop_type(t.key, rest[5:]), t.value, t.value_nullable)
    if isinstance(t, MapType) and rest.startswith("{value}"):
        return MapType(t.key, _drop_type(t.value, rest[7:]), t.value_nullable)
    return t


def _nullable_type(t: DataType) -> DataType:
    """`DataType.asNullable`: what `spark.read` reports."""
    if isinstance(t, StructType):
        return StructType(_nullable_fields(t.fields))
    if isinstance(t, ListType):
        return ListType(_nullable_type(t.element), True)
    if isinstance(t, MapType):
        return MapType(_nullable_type(t.key), _nullable_type(t.value), True)
    return t


def _nullable_fields(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    return tuple(Field(f.name, _nullable_type(f.type), True, f.id, f.default_json, f.aliases, f.metadata)
                 for f in fields)


def _nullable_schema(schema: Schema) -> Schema:
    return Schema(_nullable_fields(schema.fields))


# --- the schema without merge ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Node:
    path: str
    parent: str | None  # lower-cased parent path; None at the top level
    struct_field: bool  # a field of a struct (or the top level), not a list element or map key/value
    kind: str | None  # struct, list, map; None for a primitive
    spark: str  # the type as Spark sees it
    raw: str  # the type as the footer holds it


def _nodes(schema: Schema) -> dict[str, _Node]:
    """Every node of a schema by lower-cased path (Spark matches names case-insensitively)."""
    out: dict[str, _Node] = {}

    def visit(path: str, t: DataType, parent: str | None, struct_field: bool) -> None:
        key = path.lower()
        if key in out:
            return  # a second spelling of one name: Spark folds it into the first
        out[key] = _Node(path, parent, struct_field, _kind(t), _spark_text(t), describe(t))
        for suffix, child, _ in child_nodes(t):
            visit(path + suffix, child, key, suffix.startswith("."))

    for f in schema.fields:
        visit(f.name, f.type, None, True)
    return out


def _kind(t: DataType) -> str | None:
    return {StructType: "struct", ListType: "list", MapType: "map"}.get(type(t))


def _spark_text(t: DataType) -> str:
    """The type spelled as Spark sees it (parquet-and-spark.md §2.4), or why Spark cannot read it."""
    view = _spark_type(t)
    return describe(view) if not isinstance(view, str) else f"{describe(t)} (Spark cannot read it: {view})"


def _spark_type(t: DataType) -> DataType | str:
    if isinstance(t, StructType):
        fields = []
        for f in t.fields:
            ft = _spark_type(f.type)
            if isinstance(ft, str):
                return ft
            fields.append(Field(f.name, ft, f.nullable))
        return StructType(tuple(fields))
    if isinstance(t, ListType):
        e = _spark_type(t.element)
        return e if isinstance(e, str) else ListType(e, t.element_nullable)
    if isinstance(t, MapType):
        k, v = _spark_type(t.key), _spark_type(t.value)
        if isinstance(k, str):
            return k
        return v if isinstance(v, str) else MapType(k, v, t.value_nullable)
    return spark_view(t)


def _differs(a: _Node, b: _Node) -> bool:
    """Spark reads the column as another type: another kind, or another primitive type."""
    if a.kind is not None and b.kind is not None:
        return a.kind != b.kind
    return a.spark != b.spark


def _without_merge(
    listing: Listing,
    ordered: list[SchemaVersion],
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
        alone = merge([schema], "spark-merge")  # Spark's view of it; fails on types Spark cannot read
        schema = _nullable_schema(alone.merged) if alone.merged is not None else None
        error = None if alone.merged is not None else alone.conflicts[0].message
    if schema is None:
        return WithoutMerge(from_file, source, version, None, error, (), ())
    return WithoutMerge(from_file, source, version, schema, None, _lost(schema, ordered),
                        _relabelled(schema, ordered))


def _lost(chosen: Schema, ordered: list[SchemaVersion]) -> tuple[LostColumn, ...]:
    """Struct fields some versions hold whose parent the chosen schema has as a struct but which it
    lacks itself: the read never asks for them. Only the topmost missing field is named."""
    have = _nodes(chosen)
    lost: dict[str, tuple[_Node, list[SchemaVersion]]] = {}
    for v in ordered:
        for key, node in _nodes(_spark_input(v.footer)).items():
            if key in have or not node.struct_field:
                continue
            if node.parent is None or (node.parent in have and have[node.parent].kind == "struct"):
                lost.setdefault(key, (node, []))[1].append(v)
    return tuple(LostColumn(node.path, node.spark, *_versions_files(vs)) for node, vs in lost.values())


def _relabelled(chosen: Schema, ordered: list[SchemaVersion]) -> tuple[RelabelledColumn, ...]:
    """Columns of the chosen schema that some version holds as another type (as Spark sees both)."""
    have = _nodes(chosen)
    seen: dict[str, list[tuple[SchemaVersion, _Node]]] = {}
    for v in ordered:
        for key, node in _nodes(_spark_input(v.footer)).items():
            if key in have:
                seen.setdefault(key, []).append((v, node))
    out = []
    for key, node in have.items():
        holders = seen.get(key, [])
        if any(_differs(node, n) for _, n in holders):
            out.append(RelabelledColumn(node.path, node.spark, tuple(
                VersionType(v.number, n.spark, len(v.files), tuple(f.rel for f in v.files[:SAMPLE]))
                for v, n in holders)))
    return tuple(out)


def _versions_files(versions: Sequence[SchemaVersion]) -> tuple[tuple[int, ...], int, tuple[str, ...]]:
    files = [f.rel for v in versions for f in v.files[:SAMPLE]]
    return (tuple(sorted(v.number for v in versions)), sum(len(v.files) for v in versions),
            tuple(files[:SAMPLE]))


# --- reading every version with one schema -----------------------------------------------------


def _read_failures(which: SchemaRead, reader: Schema, ordered: Iterable[SchemaVersion]) -> list[ReadFailure]:
    """Spark's vectorized reader reading each version's files with `reader` (profile spark-read: the
    file's Parquet types against the requested Spark types)."""
    out: list[ReadFailure] = []
    for v in sorted(ordered, key=lambda v: v.number):
        problems: list[Problem] = errors(can_read(v.footer.schema, reader, "spark-read"))
        files = tuple(f.rel for f in v.files[:SAMPLE])
        out += [ReadFailure(which, v.number, len(v.files), files, p.path, p.code, p.message, p.rule)
                for p in problems]
    return out


# ---------------------------------------------------------------------------------------------
# JSON


def _rule_json(rule: Rule) -> dict[str, str]:
    return {"rule": rule.id, "rule_text": rule.text, "rule_source": rule.source}


def _side_json(side: Side) -> dict[str, Any]:
    return {"type": side.type, "versions": list(side.versions), "count": side.count,
            "files": list(side.files)}


def gate_json(report: GateReport) -> dict[str, Any]:
    w = report.without_merge
    return {
        "table": report.table,
        "merge_safe": report.merge_safe,
        "merged": schema_to_notation(report.merged) if report.merged is not None else None,
        "conflicts": [
            {"path": c.path, "left": c.left.type, "right": c.right.type, "message": c.message,
             **_rule_json(c.rule),
             "files": list(dict.fromkeys([*c.left.files, *c.right.files]))[:2 * SAMPLE],
             "versions": sorted({*c.left.versions, *c.right.versions}),
             "left_side": _side_json(c.left), "right_side": _side_json(c.right)}
            for c in report.conflicts
        ],
        "schema_without_merge": {
            "from_file": w.from_file,
            "source": w.source,
            "version": w.version,
            "schema": schema_to_notation(w.schema) if w.schema is not None else None,
            "error": w.error,
            "lost_columns": [
                {"path": c.path, "type": c.type, "versions": list(c.versions), "count": c.count,
                 "files": list(c.files)} for c in w.lost_columns
            ],
            "relabelled_columns": [
                {"path": c.path, "type": c.type,
                 "versions": [{"version": v.version, "type": v.type, "count": v.count, "files": list(v.files)}
                              for v in c.versions]}
                for c in w.relabelled_columns
            ],
        },
        "read_failures": [
            {"schema": f.schema, "version": f.version, "files": list(f.files), "count": f.count,
             "path": f.path, "code": f.code, "message": f.message, **_rule_json(f.rule)}
            for f in report.read_failures
        ],
        "versions": report.versions,
        "data_files": report.data_files,
        "merge_order": list(report.merge_order),
        "unreadable": [{"path": u.rel, "reason": u.reason} for u in report.unreadable],
        "partition_columns": list(report.partition_columns),
        "notes": list(report.notes),
    }


# ---------------------------------------------------------------------------------------------
# Text


def _where(versions: Sequence[int], count: int, files: Sequence[str]) -> str:
    named = f"v{', v'.join(map(str, versions))}, " if versions else ""
    sample = f", e.g. {files[0]}" if files else ""
    return f"{named}{_count(count, 'file')}{sample}"


def _line(kind: str, style: str, path: str, text: str) -> Text:
    line = Text()
    line.append(f"{kind.upper():<10} ", style=style)
    line.append(path or "(top level)", style="bold")
    return line.append(f"  {text}")


def gate_text(report: GateReport, console: Console | None = None) -> None:
    out = console or terminal()
    order = ", ".join(f"v{n}" for n in report.merge_order)
    _print(out, Text(f"{report.table}: {_count(report.data_files, 'data file')}, "
                     f"{_count(report.versions, 'schema version')}"
                     + (f"; Spark merges them in file-path order: {order}" if order else ""), style="bold"))
    for note in report.notes:
        _print(out, Text(f"note: {note}", style="dim"))

    if report.merged is not None:
        _print(out, Text('Schema with spark.read.option("mergeSchema", "true"):'))
        out.print(merged_table(report.merged))
    for c in report.conflicts:
        _print(out, _finding_line("conflict", c.path, c.message, c.rule, ""))
        for label, side in (("left", c.left), ("right", c.right)):
            if side.count:
                where = _where(side.versions, side.count, side.files)
                _print(out, Text(f"         {label}: {side.type} in {where}", style="dim"))

    w = report.without_merge
    source = "" if w.version is None else f" (v{w.version})"
    if w.from_file is None:
        _print(out, Text(f"Without mergeSchema: {w.error}", style="bold red"))
    elif w.schema is None:
        _print(out, Text(f"Without mergeSchema Spark takes the schema of {w.from_file}{source}, and fails: "
                         f"{w.error}", style="bold red"))
    else:
        _print(out, Text(f"Without mergeSchema Spark takes the schema of {w.from_file}{source}: "
                         f"{_count(len(w.schema.fields), 'column')}"))
    for lost in w.lost_columns:
        where = _where(lost.versions, lost.count, lost.files)
        _print(out, _line("lost", "yellow", lost.path, f"{lost.type} in {where}: silently not read"))
    for r in w.relabelled_columns:
        others = "; ".join(f"v{v.version}: {v.type}" for v in r.versions if v.type != r.type)
        _print(out, _line("relabelled", "yellow", r.path, f"read as {r.type}; {others}"))

    for f in report.read_failures:
        schema = "the merged schema" if f.schema == "merged" else "the schema without merge"
        line = _finding_line("error", f.path, f.message, f.rule, "")
        _print(out, line.append(f"  reading v{f.version} with {schema} ({_where((), f.count, f.files)})"))

    if report.unreadable:
        bad = Table(title="Unreadable files (a mergeSchema read fails on each)", title_justify="left")
        bad.add_column("file")
        bad.add_column("reason")
        for u in report.unreadable:
            bad.add_row(u.rel, u.reason)
        out.print(bad)

    if report.merge_safe:
        _print(out, Text("merge is safe", style="bold green").append(
            ': spark.read.option("mergeSchema", "true") succeeds and reads every file', style=""))
        return
    reasons = []
    if report.conflicts:
        reasons.append(_count(len(report.conflicts), "conflicting column"))
    merged_failures = [f for f in report.read_failures if f.schema == "merged"]
    if merged_failures:
        reasons.append(f"{_count(len(merged_failures), 'read failure')} with the merged schema")
    if report.unreadable:
        reasons.append(_count(len(report.unreadable), "unreadable file"))
    if report.merged is None and not report.conflicts:
        reasons.append("no schema to merge")
    _print(out, Text("merge is NOT safe", style="bold red").append(f": {', '.join(reasons)}", style=""))
