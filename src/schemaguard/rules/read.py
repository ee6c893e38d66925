"""Read profiles: can a reader with schema R read data written with schema W?

One walk pairs fields (rules/identity.py) and asks the profile's rule table about each
difference. Every read profile's identity, type view, promotions (rules/promotions.py),
missing-field, nullability and enum rules live in one `Table` below, each row citing its source:
`docs/reference/compat-rules.md` (§1 Avro, §3 Iceberg, §4 Delta, §5 Spark) and
`docs/reference/parquet-and-spark.md` (§2.4 Parquet->Spark types, §2.5 read-time conversions, §2.6
trap matrix).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from schemaguard.base import CR, PS, Options, Problem, ProblemCode, Rule
from schemaguard.formats.notation import describe
from schemaguard.formats.spark_view import SPARK_ILLEGAL, spark_view
from schemaguard.model import (
    TOP,
    DataType,
    EnumType,
    Field,
    Leaf,
    ListType,
    MapType,
    PartnerVisitor,
    Paths,
    Schema,
    StructType,
    VoidType,
    fields_of,
    visit_with_partner,
)
from schemaguard.names import Identity
from schemaguard.paths import ELEMENT, VALUE
from schemaguard.rules.identity import Pair, match_fields
from schemaguard.rules.promotions import (
    DELTA_MERGE_INTO_CASTS,
    DELTA_MERGE_INTO_NO_CAST,
    DELTA_WIDENING,
    ICEBERG_PROMOTIONS,
    SPARK_READ_PROMOTIONS,
    SPARK_ROW_READ,
    Promotion,
)


@dataclass(frozen=True, slots=True)
class Table:
    """One profile's rules."""

    identity: Rule  # which identity, and why
    default_identity: Identity
    view: Callable[[DataType], DataType | str]  # how the reader sees a type first
    promotions: tuple[Promotion, ...]
    missing: Rule  # reader field absent in the data
    missing_ok: Callable[[Field, Options], bool]
    tighten: Rule  # data may hold nulls, reader says not null
    tighten_ok: bool
    promotions_need_type_widening: bool = False  # Delta: only with the type-widening feature
    mismatch: Rule | None = None  # a type change no promotion allows, when the profile names its own
    extra: Rule | None = None  # data the reader does not ask for is a break (a Delta stream)
    renamed: Rule | None = None  # a paired column under another name (another case) is a break
    ids_only: Rule | None = None  # Delta `id` mapping: a file's columns bind by field id, never by name
    ambiguous: Rule | None = None  # names matched case-insensitively: several data columns match one
    rows: tuple[Promotion, ...] | None = None  # the row-by-row reader's table, when vectorized_reader is off
    spark_void: bool = False  # reads through Spark, whose NullType (`void`) reads as below


# Spark's NullType (`void`): a column holding no values, which Delta keeps in a table's schema and
# leaves out of the files it writes.
VOID_WRITTEN = Rule("void.written", "a void column holds no values (Delta leaves it out of the files it "
                    "writes): a reader of any type reads NULL", f"{PS} §2.6 (a column absent from a file "
                    "reads as null); delta-spark 4.4 SchemaUtils.dropNullTypeColumns; tests/test_void.py")
VOID_READER = Rule("void.reader", "Spark's Parquet reader fails a column that holds values read as void "
                   "(FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH: 'Expected Spark type void')",
                   f"{PS} §2.5; Spark 4.1 Parquet readers, vectorized and row by row (tests/test_void.py)")

_DELTA_ID = Rule(
    "delta.id-mode", "column mapping `id`: readers bind a file's columns by Parquet field id only: a file "
    "without field ids fails ('Spark read schema expects field Ids'), a column whose id the table does "
    "not hold reads as null", f"{CR} §4 Column mapping; delta-spark 4.4 DeltaParquetFileFormat (field-id "
    "read on, ignoreMissing off); tests/test_oracle_delta_id_mode.py")

SPARK_READ = Table(
    identity=Rule("spark.identity", "by name, case-insensitive unless spark.sql.caseSensitive; by "
                  "field id when spark.sql.parquet.fieldId.read.enabled", f"{PS} §2.7; {CR} §5"),
    default_identity="name-ci", view=spark_view, promotions=SPARK_READ_PROMOTIONS,
    missing=Rule("spark-read.missing", "a column absent from a file reads as null", f"{PS} §2.6 "
                 "(extra column in file B)"), missing_ok=lambda f, o: True,
    tighten=Rule("spark-read.nullability", "Spark reads every Parquet column as nullable",
                 f"{PS} §2.5"), tighten_ok=True,
    ambiguous=Rule("spark-read.ambiguous", "the data holds several columns this name matches "
                   "case-insensitively: Spark's Parquet reader fails the read ('Found duplicate field(s) "
                   "... in case-insensitive mode')", f"{PS} §2.7; Spark 4.1 ParquetReadSupport."
                   "clipParquetGroupFields (tests/test_oracle_spark_read.py)"),
    rows=SPARK_ROW_READ, spark_void=True,
)

DELTA_READ = Table(
    identity=Rule("delta.identity", "column mapping none: by name, case-insensitive; name/id: by "
                  "the column-mapping id", f"{CR} §4 Column mapping"),
    default_identity="name-ci", view=spark_view, promotions=DELTA_WIDENING,
    missing=Rule("delta-read.missing", "an added nullable column reads as null in old files; a NOT "
                 "NULL one would read null against its constraint, and Delta refuses to add one "
                 "(DELTA_OPERATION_NOT_ALLOWED, found by the read oracle)", f"{CR} §4 isReadCompatible "
                 "(plans only); delta-spark 4.4 ALTER TABLE ADD COLUMNS ... NOT NULL"),
    missing_ok=lambda f, o: f.nullable,
    tighten=Rule("delta-read.tighten", "forbidTightenNullability: data that may hold nulls cannot "
                 "be read as not null", f"{CR} §4 isReadCompatible"), tighten_ok=False,
    promotions_need_type_widening=True, ids_only=_DELTA_ID,
    mismatch=Rule("delta-read.type-change", "a type change the type-widening table does not allow "
                  "(any, without the feature): Delta refuses the ALTER and its readers the file",
                  f"{CR} §4 type widening ('Readers must reject any type change they do not support'); "
                  "delta-spark 4.4 ALTER COLUMN TYPE (the read oracle)"),
    spark_void=True,
)

ICEBERG = Table(
    identity=Rule("iceberg.identity", "by field id; names are ignored", f"{CR} §3 Identity"),
    default_identity="id", view=lambda t: t, promotions=ICEBERG_PROMOTIONS,
    missing=Rule("iceberg.missing", "an added optional field reads as null; a required one is "
                 "an error (v3: allowed with an initial-default)", f"{CR} §3"),
    missing_ok=lambda f, o: f.nullable or (o.iceberg_version >= 3 and f.has_default),
    tighten=Rule("iceberg.tighten", "optional -> required is not readable", f"{CR} §3"),
    tighten_ok=False,
    mismatch=Rule("iceberg.type-change", "a type change TypeUtil.isPromotionAllowed does not allow: "
                  "schema updates refuse it and readers cannot promote the file's values",
                  f"{CR} §3; pyiceberg 0.12 update_schema and scan (the read oracle)"),
)

# MERGE WITH SCHEMA EVOLUTION INTO t USING s ... UPDATE SET * / INSERT * (profiles.MergeIntoProfile):
# this table is run on the source (the writer) against the table's schema after the evolution (the
# reader), so each type left different is a cast of the source's values to the table's type.
_MERGE_INTO = "delta-spark 4.4 MERGE INTO (tests/test_oracle_delta_merge_into.py)"
DELTA_MERGE_INTO = Table(
    identity=Rule("delta-merge-into.identity", "UPDATE SET * and INSERT * take the source's columns by "
                  "name, case-insensitively at every depth (spark.sql.caseSensitive: top-level names "
                  "exactly); the table's spelling stays, a new column keeps the source's",
                  f"{CR} §4 MERGE INTO; {_MERGE_INTO}"),
    default_identity="name-ci", view=spark_view, promotions=DELTA_MERGE_INTO_CASTS,
    missing=Rule("delta-merge-into.missing", "UPDATE SET * keeps the table's value and INSERT * writes "
                 "null, which a NOT NULL column refuses at the first row inserted "
                 "(DELTA_NOT_NULL_CONSTRAINT_VIOLATED); a struct's field is kept alike, one of a struct in a "
                 "list or map is null in every element the source writes",
                 f"{CR} §4 MERGE INTO; delta-spark 4.4 UpdateExpressionsSupport.castIfNeeded (target-only "
                 f"struct fields); {_MERGE_INTO}"),
    missing_ok=lambda f, o: f.nullable,
    # nulls into a NOT NULL column are the profile's warning (profiles.DELTA_MERGE_INTO_NULLS)
    tighten=Rule("delta-merge-into.nullability", "the source's nullability is not checked against the "
                 "table's: its nulls meet the table's NOT NULL constraint as they are written",
                 f"{CR} §4 MERGE INTO; {_MERGE_INTO}"), tighten_ok=True,
    mismatch=DELTA_MERGE_INTO_NO_CAST, spark_void=True,
)

# A Delta streaming source checks each schema change with SchemaUtils.isReadCompatible(existing =
# the new metadata's schema, read = the stream's schema, forbidTightenNullability = true,
# caseSensitive = true, no type widening past the stream's start): DeltaStreamUtils.scala
# checkSchemaChangesWhenNoSchemaTracking; SchemaUtils.scala isReadCompatible.
_DSU = "delta-spark 4.4 DeltaStreamUtils.checkSchemaChangesWhenNoSchemaTracking; SchemaUtils.isReadCompatible"
DELTA_STREAM = Table(
    identity=Rule("delta-stream.identity", "names matched case-insensitively, then spelled exactly alike "
                  "(caseSensitive = true); column mapping name/id: by the column-mapping id",
                  f"{CR} §4 isReadCompatible; {_DSU}"),
    default_identity="name-ci", view=spark_view, promotions=(),
    missing=Rule("delta-stream.dropped", "a column of the stream's schema that the new schema lacks: "
                 "under column mapping a non-additive change stops the stream (schema tracking needed); "
                 "without it the read check accepts it (only an overwrite drops a column there, and its "
                 "removed files stop the stream unless skipChangeCommits)",
                 f"{CR} §4; {_DSU}; DeltaSource column-mapping checks (tests/test_oracle_delta_stream.py)"),
    missing_ok=lambda f, o: o.column_mapping == "none",
    tighten=Rule("delta-stream.tighten", "forbidTightenNullability: a column that may now hold nulls "
                 "cannot be streamed into a not-null one", f"{CR} §4 isReadCompatible; {_DSU}"),
    tighten_ok=False, ids_only=_DELTA_ID,
    mismatch=Rule("delta-stream.type-change", "any type change stops the stream: it is checked without "
                  "type widening (with the feature the stop is retryable: restart reads on)",
                  f"{CR} §4 isReadCompatible (typeWideningMode); {_DSU}"),
    extra=Rule("delta-stream.added", "a column the new schema adds and the stream's schema lacks: "
               "existing fields must be a subset of the stream's, so the stream stops (restart picks it up)",
               f"{CR} §4 isReadCompatible ('Dropped a column that was present'); {_DSU}"),
    renamed=Rule("delta-stream.renamed", "a column renamed, even only in case: isReadCompatible matches "
                 "names case-insensitively, then requires the exact spelling; under column mapping a "
                 "rename is a non-additive change",
                 f"{CR} §4 (case-only rename); {_DSU}; DeltaSource column-mapping checks"),
)

# Under the position rule a reader binds the i-th column whatever its name (rules/identity.py):
# a column of another name is read all the same, so its values land in another column.
_IDENTITY_POSITION = "rules/identity.py `position`; docs/design.md Reader profile (positional)"
POSITIONAL = Table(
    identity=Rule("positional.identity", "the i-th column of the data is the i-th column of the "
                  "reader, whatever its name", _IDENTITY_POSITION),
    default_identity="position", view=spark_view,
    promotions=SPARK_READ_PROMOTIONS,
    missing=Rule("positional.missing", "a reader column past the data's last column reads as its "
                 "default, else null, which a required column cannot hold", _IDENTITY_POSITION),
    missing_ok=lambda f, o: f.nullable or f.has_default,
    tighten=Rule("positional.nullability", "positional readers do not check nullability",
                 _IDENTITY_POSITION), tighten_ok=True, spark_void=True,
)

TYPE_MISMATCH = Rule("type-mismatch", "no rule of this profile reads this type as that one",
                     "the profile's promotion table")
SHAPE = Rule("shape-mismatch", "a struct, list, map or primitive cannot be read as another kind",
             f"{CR} §1 TYPE_MISMATCH; §3 'cannot be read as a struct/list/map'")
POSITION_NAME = Rule("identity.position-misbound", "the data's column at this position has another name "
                     "and the same type: a reader by position reads it, and its values land in another "
                     "column (a quiet break)", _IDENTITY_POSITION)
POSITION_TYPE = Rule("identity.position-type", "the data's column at this position has another name and "
                     "another type: a reader by position binds a column it cannot hold (a loud break)",
                     _IDENTITY_POSITION)


def read_problems(writer: Schema, reader: Schema, table: Table, options: Options) -> list[Problem]:
    """Every problem a reader with `reader` and rule table `table` meets on data written with `writer`."""
    return visit_with_partner(writer, reader, _Read(table, options))


Problems = list[Problem]


class _Read(PartnerVisitor[Pair, Problems, Problems]):
    """The writer's and the reader's schema walked together, problems named at the reader's paths."""

    def __init__(self, table: Table, o: Options) -> None:
        self.table, self.o = table, o
        self.identity = o.identity or table.default_identity
        self.ids_only = table.ids_only if o.column_mapping == "id" and self.identity == "id" else None
        self.unbound: set[int] = set()  # reader fields (by identity) whose data is there without their id
        self.ambiguous: dict[int, list[str]] = {}  # reader fields (by identity) -> the data's spellings
        self.misbound: set[int] = set()  # reader fields (by identity) bound by position to a moved column
        self.hits: dict[tuple[DataType, DataType], Promotion | None] = {}  # per type pair: see `_primitive`

    def schema(self, writer: Schema, reader: Schema, fields: Sequence[Problems]) -> Problems:
        problems = self.struct(StructType(writer.fields), StructType(reader.fields), TOP, fields)
        if self.ids_only and _has_ids(reader) and not _has_ids(writer) and writer.fields:
            return [Problem("", ProblemCode.FILE_WITHOUT_FIELD_IDS,
                            f"the data has no field ids: {self.ids_only.text}", self.ids_only), *problems]
        return problems

    def pair_fields(self, writer: tuple[Field, ...], reader: tuple[Field, ...]) -> list[Pair]:
        pairs = match_fields(writer, reader, self.identity)
        if self.identity == "position":
            self.misbound |= _moved(pairs, writer, reader)
        if self.table.ambiguous and self.identity == "name-ci" and len(writer) > 1:
            spellings: dict[str, list[str]] = {}
            for w in writer:
                spellings.setdefault(w.name.lower(), []).append(w.name)
            self.ambiguous.update((id(r), spellings[r.name.lower()]) for r in reader
                                  if len(spellings.get(r.name.lower(), ())) > 1)
        if self.ids_only:  # a column without an id (one with another id is another column: a re-added name)
            unread = {p.writer.name for p in pairs if p.writer is not None and p.reader is None
                      and p.writer.id is None}
            self.unbound |= {id(p.reader) for p in pairs
                             if p.reader is not None and p.writer is None and p.reader.name in unread}
        return pairs

    def field(self, writer: Field, reader: Field, pair: Pair, paths: Paths,
              type_result: Problems) -> Problems:
        here = paths.reader
        if id(reader) in self.ambiguous and self.table.ambiguous is not None:
            spelt = ", ".join(f"`{n}`" for n in self.ambiguous[id(reader)])
            return [Problem(here, ProblemCode.AMBIGUOUS_COLUMN, f"`{here}` matches {spelt} in the data: "
                            f"{self.table.ambiguous.text}", self.table.ambiguous)]
        return (self._names(writer, reader, here) + self._nullability(writer.nullable, reader.nullable, here,
                                                                      "field") + type_result)

    def _names(self, writer: Field, reader: Field, here: str) -> Problems:
        if writer.name == reader.name:
            return []
        if self.identity == "position" and id(reader) not in self.misbound:
            return []  # renamed in place: a reader by position never sees names
        if self.identity == "position":
            bound = f"the data's column at this position is `{writer.name}`, read as `{reader.name}`"
            if writer.type == reader.type:
                return [Problem(here, ProblemCode.POSITION_NAME_MISMATCH, f"{bound}: {POSITION_NAME.text}",
                                POSITION_NAME, quiet=True)]
            return [Problem(here, ProblemCode.POSITION_TYPE_MISMATCH, f"{bound}, {describe(writer.type)} "
                            f"read as {describe(reader.type)}: {POSITION_TYPE.text}", POSITION_TYPE)]
        renamed = self.table.renamed
        if renamed is None:
            return []
        return [Problem(here, ProblemCode.FIELD_RENAMED, f"`{writer.name}` in the data, `{reader.name}` "
                        f"to the reader: {renamed.text}", renamed)]

    def writer_only(self, writer: Field, pair: Pair, paths: Paths) -> Problems:
        extra = self.table.extra
        if extra is None:
            return []  # data the reader does not ask for is skipped
        here = paths.writer
        return [Problem(here, ProblemCode.WRITER_FIELD_UNREAD, f"`{here}` is in the data and not in the "
                        f"reader's schema: {extra.text}", extra)]

    def reader_only(self, reader: Field, pair: Pair, paths: Paths) -> Problems:
        here = paths.reader
        unbound = [Problem(here, ProblemCode.FIELD_ID_UNBOUND, f"the data holds `{here}` without the field "
                           f"id {reader.id}: {self.ids_only.text}", self.ids_only, quiet=True)
                   ] if self.ids_only and id(reader) in self.unbound else []
        if self.table.missing_ok(reader, self.o):
            return unbound
        return [*unbound, Problem(here, ProblemCode.READER_FIELD_MISSING, f"`{here}` is not in the data and "
                                  f"{self.table.missing.text}", self.table.missing)]

    def struct(self, writer: StructType, reader: StructType, paths: Paths,
               fields: Sequence[Problems]) -> Problems:
        return [p for problems in fields for p in problems]

    def list(self, writer: ListType, reader: ListType, paths: Paths, element: Problems) -> Problems:
        return self._nullability(writer.element_nullable, reader.element_nullable, paths.reader + ELEMENT,
                                 "list element") + element

    def map(self, writer: MapType, reader: MapType, paths: Paths, key: Problems, value: Problems) -> Problems:
        return key + self._nullability(writer.value_nullable, reader.value_nullable, paths.reader + VALUE,
                                       "map value") + value

    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> Problems:
        path = paths.reader
        void = _void(writer, reader, path, self.table)
        if void is not None:
            return void
        return [Problem(path, ProblemCode.TYPE_MISMATCH, f"`{path}` is {describe(writer)} in the data and "
                        f"{describe(reader)} to the reader: {SHAPE.text}", SHAPE)]

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> Problems:
        void = _void(writer, reader, paths.reader, self.table)
        return void if void is not None else _primitive(writer, reader, paths.reader, self.table, self.o,
                                                        self.hits)

    def _nullability(self, w_null: bool, r_null: bool, path: str, what: str) -> Problems:
        tighten = self.table.tighten
        if w_null and not r_null and not self.table.tighten_ok:
            return [Problem(path, ProblemCode.NULLABILITY_TIGHTENED, f"{what} `{path}` may hold nulls in the "
                            f"data but the reader requires a value: {tighten.text}", tighten)]
        return []


def _moved(pairs: Sequence[Pair], writer: Sequence[Field], reader: Sequence[Field]) -> set[int]:
    """The reader fields (by identity) bound by position to a column of another name that either
    side holds elsewhere: a name that moved, an insert or a drop before it. A column of another
    name that neither side holds elsewhere is a rename in place, which positional readers read
    as the same column."""
    written, read = {f.name.lower() for f in writer}, {f.name.lower() for f in reader}
    return {id(p.reader) for p in pairs if p.writer is not None and p.reader is not None
            and p.writer.name.lower() != p.reader.name.lower()
            and (p.writer.name.lower() in read or p.reader.name.lower() in written)}


def _has_ids(schema: Schema) -> bool:
    return any(f.id is not None for _, f in fields_of(schema))


def _promotion(w: DataType, wv: DataType | str, rv: DataType, table: Table, o: Options) -> Promotion | None:
    """The first row of the reader's table that reads `w` (seen as `wv`) as `rv`, if any."""
    if table.promotions_need_type_widening and not o.type_widening:
        return None
    promotions = table.rows if table.rows is not None and not o.vectorized_reader else table.promotions
    # a raw promotion may read what the reader cannot infer (a declared UUID read as binary)
    return next((p for p in promotions if (p.raw and p.test(w, rv, o))
                 or (not p.raw and not isinstance(wv, str) and p.test(wv, rv, o))), None)


def _void(w: DataType, r: DataType, path: str, table: Table) -> Problems | None:
    """A void column on one side only, for a profile that reads through Spark (None otherwise)."""
    if not table.spark_void or isinstance(w, VoidType) == isinstance(r, VoidType):
        return None
    if isinstance(w, VoidType):
        return [Problem(path, ProblemCode.PROMOTED, f"`{path}` void read as {describe(r)}: "
                        f"{VOID_WRITTEN.text}", VOID_WRITTEN, "info")]
    return [Problem(path, ProblemCode.TYPE_MISMATCH, f"`{path}` is {describe(w)} in the data and void to "
                    f"the reader: {VOID_READER.text}", VOID_READER)]


def _primitive(w: DataType, r: DataType, path: str, table: Table, o: Options,
               hits: dict[tuple[DataType, DataType], Promotion | None]) -> list[Problem]:
    """A leaf read as another: the promotion row that reads it, looked up once per pair of types in
    `hits` (one reader's table and options: 20,000 columns widened alike search it once)."""
    wv, rv = table.view(w), table.view(r)
    if isinstance(rv, str):
        return [Problem(path, ProblemCode.UNREADABLE_TYPE, f"`{path}` is declared {describe(r)}: {rv}",
                        SPARK_ILLEGAL)]
    if wv == rv:
        return []
    if (w, r) not in hits:
        hits[w, r] = _promotion(w, wv, rv, table, o)
    hit = hits[w, r]
    if hit is not None and hit.refused:
        return [Problem(path, ProblemCode.TYPE_MISMATCH, f"`{path}` is {describe(w)} in the data and "
                        f"{describe(r)} to the reader: {hit.rule.text}", hit.rule)]
    if hit is not None and hit.quiet:
        return [Problem(path, ProblemCode.VALUES_CHANGE_MEANING, f"`{path}` {describe(w)} read as "
                        f"{describe(r)}: {hit.rule.text}", hit.rule, quiet=True)]
    if hit is not None:
        return [Problem(path, ProblemCode.PROMOTED, f"`{path}` {describe(w)} read as {describe(r)}: "
                        f"{hit.rule.text}", hit.rule, "info")]
    if isinstance(wv, str):
        return [Problem(path, ProblemCode.UNREADABLE_TYPE, f"`{path}` is {describe(w)} in the data: {wv}",
                        SPARK_ILLEGAL)]
    if isinstance(w, EnumType) and isinstance(r, EnumType):
        return []  # symbols are invisible to this reader (enums are strings)
    return [Problem(path, ProblemCode.TYPE_MISMATCH, f"`{path}` is {describe(w)} in the data and "
                    f"{describe(r)} to the reader: {TYPE_MISMATCH.text}", table.mismatch or TYPE_MISMATCH)]
