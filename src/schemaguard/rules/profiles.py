"""The one registry of reader profiles: every real reader schemaguard models, by name.

A profile answers one question, `problems(writer, reader, options)`: what does a reader with
schema R meet on data written with schema W? Read profiles walk both schemas with their rule
table (rules/read.py); merge profiles merge the reader's (table's) schema with the data's
(rules/merge.py), and "R reads W" means the merge succeeds; Delta's writes (a batch write, MERGE
INTO) merge first and then judge what the write does to the data. The command line, the
configuration and the list in docs/rules.md all take their names from `PROFILES`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from schemaguard.base import CR, Options, Problem, ProblemCode, Rule, allow_quiet
from schemaguard.formats.avro import AvroSchemaError, as_avro
from schemaguard.model import IntervalType, Schema, walk
from schemaguard.names import Identity
from schemaguard.rules import avro, read
from schemaguard.rules.changes import Operation, OpKind, diff
from schemaguard.rules.merge import Merger, MergeResult, delta_merge, delta_merge_into, merge, spark_merge


class Profile(Protocol):
    name: str
    default_identity: Identity

    def problems(self, writer: Schema, reader: Schema, options: Options) -> list[Problem]: ...


@dataclass(frozen=True, slots=True)
class ReadProfile:
    """A reader of files: Avro's resolver, Spark's and Delta's Parquet reads, Iceberg, positional."""

    name: str
    table: read.Table
    by_mapping_id: bool = False  # Delta column mapping (name or id) binds by the column-mapping id
    case_flag: bool = False  # spark.sql.caseSensitive decides between name and name-ci

    @property
    def default_identity(self) -> Identity:
        return self.table.default_identity

    def problems(self, writer: Schema, reader: Schema, options: Options) -> list[Problem]:
        return read.read_problems(writer, reader, self.table, options)


@dataclass(frozen=True, slots=True)
class AvroProfile:
    """Avro's resolver as Java's SchemaCompatibility decides (rules/avro.py), on the Avro schemas
    the inputs were read from, or on the model written as Avro. Identity is Avro's own: by name
    plus the reader's aliases."""

    name: str = "avro"
    default_identity: Identity = "name"
    by_mapping_id: bool = False
    case_flag: bool = False

    def problems(self, writer: Schema, reader: Schema, options: Options) -> list[Problem]:
        try:
            w, r = as_avro(writer), as_avro(reader)
        except AvroSchemaError as e:  # a model type no Avro type holds (uint64, float16, ...)
            return [Problem(e.path, ProblemCode.UNREADABLE_TYPE, str(e),
                            avro.RULES[ProblemCode.TYPE_MISMATCH])]
        return avro.problems(w, r)


@dataclass(frozen=True, slots=True)
class MergeProfile:
    """A schema merge: the reader's (table's) schema on the left, the data's on the right."""

    name: str
    merger: Merger
    by_mapping_id: bool = False
    case_flag: bool = True
    default_identity: Identity = "name-ci"

    def merge(self, schemas: list[Schema], options: Options | None = None) -> MergeResult:
        return merge(schemas, self.merger, options)

    def problems(self, writer: Schema, reader: Schema, options: Options) -> list[Problem]:
        return [Problem(c.path, ProblemCode.MERGE_CONFLICT, c.message, c.rule)
                for c in self.merge([reader, writer], options).conflicts]


# A batch write without mergeSchema: ImplicitMetadataOperation.updateMetadata merges the data's
# schema, made nullable, into the table's (SchemaMergingUtils.mergeSchemas, as `delta-merge`) and
# refuses the write when the merged schema is not the table's.
_IMO = "delta-spark 4.4 ImplicitMetadataOperation.updateMetadata (tests/test_oracle_delta_write.py)"
DELTA_WRITE = Rule("delta-write.schema-change", "a write without mergeSchema must leave the table's "
                   "schema as it is: a new column or a changed type fails it (DELTA_METADATA_MISMATCH)",
                   f"{CR} §4; {_IMO}")
DELTA_WRITE_NULLS = Rule("delta-write.not-null", "the data may hold nulls in a NOT NULL column: the "
                         "schema check passes (the data's schema is made nullable), and the first null "
                         "written fails the write (DELTA_NOT_NULL_CONSTRAINT_VIOLATED)",
                         f"{CR} §4; {_IMO}; delta-spark 4.4 DeltaInvariantChecker")


@dataclass(frozen=True, slots=True)
class WriteProfile:
    """Delta's batch write of a DataFrame without mergeSchema: the table's schema is the reader's,
    the DataFrame's the writer's. The write succeeds when Delta's merge of the two leaves the
    table's schema unchanged; columns the data lacks are written as null."""

    name: str = "delta-write"
    default_identity: Identity = "name-ci"
    by_mapping_id: bool = True
    case_flag: bool = True

    def problems(self, writer: Schema, reader: Schema, options: Options) -> list[Problem]:
        result = merge([reader, writer], delta_merge, options)
        table = merge([reader], delta_merge, options).merged  # the table's schema as Spark holds it
        if result.merged is None or table is None:  # the merge fails, as it does with mergeSchema
            return [Problem(c.path, ProblemCode.MERGE_CONFLICT, c.message, c.rule) for c in result.conflicts]
        changed = [Problem(op.path, ProblemCode.SCHEMA_CHANGE_NEEDS_MERGE,
                           f"`{op.path}`: {_spelt(op)}: {DELTA_WRITE.text}", DELTA_WRITE)
                   for op in diff(table, result.merged, "name-ci")]
        return changed + _nulls_into_not_null(writer, reader, DELTA_WRITE_NULLS)


def _nulls_into_not_null(writer: Schema, reader: Schema, rule: Rule) -> list[Problem]:
    """A warning wherever the data may hold nulls and the table's column is NOT NULL: Delta checks
    the constraint on the values, so only the data can tell whether the write fails."""
    return [Problem(op.path, ProblemCode.NULLS_INTO_NOT_NULL, f"`{op.path}`: {rule.text}", rule, "warning")
            for op in diff(reader, writer, "name-ci") if op.kind == OpKind.NULLABILITY_RELAXED]


def _spelt(op: Operation) -> str:
    """An operation in a few words: `add optional field (- -> int64)`."""
    return f"{op.kind.value.replace('_', ' ')} ({op.before or '-'} -> {op.after or '-'})"


# MERGE WITH SCHEMA EVOLUTION INTO t USING s ON ... WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED
# THEN INSERT * (or the same MERGE with spark.databricks.delta.schema.autoMerge.enabled).
_MI = "delta-spark 4.4 MERGE INTO (tests/test_oracle_delta_merge_into.py)"
DELTA_MERGE_INTO_NULLS = Rule("delta-merge-into.not-null", "the source may hold nulls in a NOT NULL column: "
                              "the MERGE writes them as they come, and the first null written fails it "
                              "(DELTA_NOT_NULL_CONSTRAINT_VIOLATED)", f"{CR} §4 MERGE INTO; {_MI}; "
                              "delta-spark 4.4 DeltaInvariantChecker")
DELTA_MERGE_INTO_CASE = Rule("delta-merge-into.case", "with spark.sql.caseSensitive, UPDATE SET * and INSERT "
                             "* look the table's top-level columns up by their exact names: a source column "
                             "spelt in another case is not found (DELTA_MISSING_SET_COLUMN); nested fields "
                             "still match in any case", f"{CR} §4 MERGE INTO; {_MI}")


@dataclass(frozen=True, slots=True)
class MergeIntoProfile:
    """Delta's MERGE INTO with schema evolution, updating and inserting every column (`*`): the
    table's schema is the reader's, the source's the writer's. The schema evolves first
    (rules/merge.py `delta_merge_into`: new columns added, a widening under type widening, the
    table's type kept where Spark casts implicitly); then every value is cast to the table's type
    under the ANSI store assignment (rules/read.py `DELTA_MERGE_INTO`: an overflow or malformed
    text fails the MERGE, a rounding is a quiet break) and nulls meet the NOT NULL columns."""

    name: str = "delta-merge-into"
    default_identity: Identity = "name-ci"
    by_mapping_id: bool = True  # a Delta table (table_refusals); the source still binds by name
    case_flag: bool = False  # names pair case-insensitively at any depth; the case rule is its own

    def evolve(self, writer: Schema, reader: Schema, options: Options) -> MergeResult:
        """The table's schema after the MERGE, or the conflicts that fail it."""
        return merge([reader, writer], delta_merge_into, options)

    def problems(self, writer: Schema, reader: Schema, options: Options) -> list[Problem]:
        result = self.evolve(writer, reader, options)
        if result.merged is None:
            return [Problem(c.path, ProblemCode.MERGE_CONFLICT, c.message, c.rule) for c in result.conflicts]
        case = _case_misses(writer, reader) if options.case_sensitive else []
        casts = read.read_problems(writer, result.merged, read.DELTA_MERGE_INTO, options)
        return case + casts + _nulls_into_not_null(writer, reader, DELTA_MERGE_INTO_NULLS)


def _case_misses(source: Schema, table: Schema) -> list[Problem]:
    """The source's top-level columns spelt otherwise than the table's (DELTA_MERGE_INTO_CASE)."""
    spelt = {f.name.lower(): f.name for f in table.fields}
    return [Problem(name, ProblemCode.FIELD_RENAMED, f"`{f.name}` in the source, `{name}` in the table: "
                    f"{DELTA_MERGE_INTO_CASE.text}", DELTA_MERGE_INTO_CASE)
            for f in source.fields if (name := spelt.get(f.name.lower(), f.name)) != f.name]


AnyProfile = ReadProfile | MergeProfile | AvroProfile | WriteProfile | MergeIntoProfile
_ALL: tuple[AnyProfile, ...] = (
    AvroProfile(),
    ReadProfile("spark-read", read.SPARK_READ, case_flag=True),
    MergeProfile("spark-merge", spark_merge),
    MergeProfile("delta-merge", delta_merge, by_mapping_id=True),
    WriteProfile(),
    MergeIntoProfile(),
    ReadProfile("delta-read", read.DELTA_READ, by_mapping_id=True, case_flag=True),
    ReadProfile("delta-stream", read.DELTA_STREAM, by_mapping_id=True),
    ReadProfile("iceberg", read.ICEBERG),
    ReadProfile("positional", read.POSITIONAL),
)
PROFILES: dict[str, AnyProfile] = {p.name: p for p in _ALL}  # named as names.PROFILE_NAMES
MERGE_PROFILES: dict[str, MergeProfile] = {p.name: p for p in _ALL if isinstance(p, MergeProfile)}


class UnmodelledSchema(ValueError):
    """An Avro schema only the avro profile reads, given to another profile."""


def profile(name: str) -> AnyProfile:
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; one of {', '.join(PROFILES)}")
    return PROFILES[name]


def effective_options(p: AnyProfile, options: Options) -> Options:
    """Options that decide identity: Delta column mapping binds by id; Spark's case flag."""
    if options.identity is not None:
        return options
    if p.by_mapping_id and options.column_mapping != "none":
        return replace(options, identity="id")
    if p.case_flag and options.case_sensitive:
        return replace(options, identity="name")
    return options


def can_read(writer: Schema, reader: Schema, name: str, options: Options | None = None) -> list[Problem]:
    """Every problem a reader with `reader` meets on data written with `writer` (empty: it reads);
    quiet breaks are warnings under `options.allow_quiet`."""
    p = profile(name)
    check_modelled([writer, reader], name)
    o = options or Options()
    problems = p.problems(writer, reader, effective_options(p, o))
    rule = DELTA_INTERVAL if p.by_mapping_id else ICEBERG_INTERVAL if p.name == "iceberg" else None
    if rule is not None:  # a table format without intervals
        problems = _intervals(writer, reader, rule) + problems
    return allow_quiet(problems) if o.allow_quiet else problems


DELTA_INTERVAL = Rule(
    "delta.interval", "a Delta table holds no ANSI interval: delta-spark refuses a table with one "
    "(DELTA_UNSUPPORTED_DATA_TYPES) and a DataFrame with one written to Delta "
    "(UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE)", f"{CR} §4 (no intervals); delta-spark 4.4 "
    "SchemaUtils.findUnsupportedDataTypes, DeltaDataSource (tests/test_intervals.py)")
ICEBERG_INTERVAL = Rule(
    "iceberg.interval", "an Iceberg table holds no ANSI interval (the spec has no interval type): Spark's "
    "Iceberg catalog refuses a table with one ('Not a supported type')", f"{CR} §3 (no intervals); "
    "iceberg-spark SparkTypeToType (tests/test_intervals.py)")


def _intervals(writer: Schema, reader: Schema, rule: Rule) -> list[Problem]:
    """Each interval column of either side, once per path, refused by the table format's `rule`."""
    found = dict.fromkeys(path for schema in (reader, writer) for path, t, _ in walk(schema)
                          if isinstance(t, IntervalType))
    return [Problem(path, ProblemCode.ENGINE_REFUSES, f"`{path}` is an interval: {rule.text}", rule)
            for path in found]


# A Delta table's own schema changes, where the direction is known (its earlier schema, then its
# later one): the read rules cannot tell a column the table dropped from one a newer file added.
DELTA_DROP_RENAME = Rule(
    "delta.drop-rename", "delta-spark drops or renames a column only under column mapping "
    "(DELTA_UNSUPPORTED_DROP_COLUMN, DELTA_UNSUPPORTED_RENAME_COLUMN); without it only an overwrite "
    "with overwriteSchema, which rewrites every file, reaches this schema",
    f"{CR} §4 Column mapping; delta-spark 4.4 ALTER TABLE DROP/RENAME COLUMN "
    "(tests/test_delta_refusals.py)")


def table_refusals(old: Schema, new: Schema, name: str, options: Options) -> list[Problem]:
    """What the profile's table engine refuses in changing its table's schema from `old` to `new`:
    a Delta table without column mapping cannot lose or rename a column (top level or nested)."""
    p = profile(name)
    if not p.by_mapping_id or options.column_mapping != "none":
        return []
    gone = (op for op in diff(old, new, "name-ci") if op.kind in (OpKind.DROP_FIELD, OpKind.RENAME))
    return [Problem(op.old_path or op.path, ProblemCode.ENGINE_REFUSES,
                    f"`{op.old_path or op.path}` is not in the new schema: {DELTA_DROP_RENAME.text}",
                    DELTA_DROP_RENAME) for op in gone]


def check_modelled(schemas: list[Schema], name: str) -> None:
    """Raise `UnmodelledSchema` for an Avro schema with no table equivalent, unless `name` is avro."""
    if name == "avro":
        return
    for s in schemas:
        if s.unmodelled is not None:
            raise UnmodelledSchema(f"{s.unmodelled}; only --profile avro reads this schema")


def merge_schemas(schemas: list[Schema], name: str, options: Options | None = None) -> MergeResult:
    """The merge of a merge profile (`spark-merge`, `delta-merge`), every conflict named."""
    if name not in MERGE_PROFILES:
        raise ValueError(f"merge needs one of {', '.join(MERGE_PROFILES)}, not {name!r}")
    return MERGE_PROFILES[name].merge(schemas, options)
