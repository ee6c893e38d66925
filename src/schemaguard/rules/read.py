"""Read profiles: can a reader with schema R read data written with schema W?

One walk pairs fields (rules/identity.py) and asks the profile's rule table about each
difference. Every read profile's identity, type view, promotions (rules/promotions.py),
missing-field, nullability and enum rules live in one `Table` below, each row citing its source
in `shared/reference/`: `compat-rules.md` (§1 Avro, §3 Iceberg, §4 Delta, §5 Spark) and
`parquet-and-spark.md` (§2.4 Parquet->Spark types, §2.5 read-time conversions, §2.6 trap matrix).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from schemaguard.base import CR, PS, SPARK_ILLEGAL, Options, Problem, Rule, spark_view
from schemaguard.formats.notation import describe
from schemaguard.model import (
    ELEMENT,
    VALUE,
    DataType,
    EnumType,
    Field,
    FixedType,
    Identity,
    Leaf,
    ListType,
    MapType,
    PartnerVisitor,
    Paths,
    Schema,
    StructType,
    visit_with_partner,
)
from schemaguard.rules.identity import Pair, match_fields
from schemaguard.rules.promotions import (
    AVRO_PROMOTIONS,
    DELTA_WIDENING,
    ICEBERG_PROMOTIONS,
    SPARK_READ_PROMOTIONS,
    Promotion,
    avro_view,
)


@dataclass(frozen=True, slots=True)
class Table:
    """One profile's rules."""

    identity: Rule  # which identity, and why
    default_identity: Identity
    aliases: bool  # do the reader's aliases count?
    view: Callable[[DataType], DataType | str]  # how the reader sees a type first
    promotions: tuple[Promotion, ...]
    missing: Rule  # reader field absent in the data
    missing_ok: Callable[[Field, Options], bool]
    tighten: Rule  # data may hold nulls, reader says not null
    tighten_ok: bool
    enums: Rule  # how enum symbols are checked
    enum_symbols_checked: bool
    promotions_need_type_widening: bool = False  # Delta: only with the type-widening feature
    fixed_size_checked: bool = False  # Avro: fixed types must have the same size
    mismatch: Rule | None = None  # a type change no promotion allows, when the profile names its own


AVRO = Table(
    identity=Rule("avro.identity", "by name, plus the reader's aliases", f"{CR} §1 Identity"),
    default_identity="name", aliases=True, view=avro_view, promotions=AVRO_PROMOTIONS,
    missing=Rule("avro.missing-default", "a reader field absent from the data needs a default",
                 f"{CR} §1 READER_FIELD_MISSING_DEFAULT_VALUE"),
    missing_ok=lambda f, o: f.has_default,
    tighten=Rule("avro.tighten", "a nullable writer (union with null) cannot be read by a "
                 "non-null reader", f"{CR} §1 nullability tightened"), tighten_ok=False,
    enums=Rule("avro.enum", "every writer symbol must be a reader symbol unless the reader enum "
               "has a default", f"{CR} §1 MISSING_ENUM_SYMBOLS"), enum_symbols_checked=True,
    fixed_size_checked=True,
)

SPARK_READ = Table(
    identity=Rule("spark.identity", "by name, case-insensitive unless spark.sql.caseSensitive; by "
                  "field id when spark.sql.parquet.fieldId.read.enabled", f"{PS} §2.7; {CR} §5"),
    default_identity="name-ci", aliases=False, view=spark_view,
    promotions=SPARK_READ_PROMOTIONS,
    missing=Rule("spark-read.missing", "a column absent from a file reads as null", f"{PS} §2.6 "
                 "(extra column in file B)"), missing_ok=lambda f, o: True,
    tighten=Rule("spark-read.nullability", "Spark reads every Parquet column as nullable",
                 f"{PS} §2.5"), tighten_ok=True,
    enums=Rule("spark-read.enum", "enums are strings to Spark: symbols are invisible", f"{CR} §5"),
    enum_symbols_checked=False,
)

DELTA_READ = Table(
    identity=Rule("delta.identity", "column mapping none: by name, case-insensitive; name/id: by "
                  "the column-mapping id", f"{CR} §4 Column mapping"),
    default_identity="name-ci", aliases=False, view=spark_view, promotions=DELTA_WIDENING,
    missing=Rule("delta-read.missing", "an added nullable column reads as null in old files; a NOT "
                 "NULL one would read null against its constraint, and Delta refuses to add one "
                 "(DELTA_OPERATION_NOT_ALLOWED, found by the read oracle)", f"{CR} §4 isReadCompatible "
                 "(plans only); delta-spark 4.4 ALTER TABLE ADD COLUMNS ... NOT NULL"),
    missing_ok=lambda f, o: f.nullable,
    tighten=Rule("delta-read.tighten", "forbidTightenNullability: data that may hold nulls cannot "
                 "be read as not null", f"{CR} §4 isReadCompatible"), tighten_ok=False,
    enums=Rule("delta-read.enum", "enums are strings to Delta", f"{CR} 'Where the references "
               "disagree'"), enum_symbols_checked=False, promotions_need_type_widening=True,
    mismatch=Rule("delta-read.type-change", "a type change the type-widening table does not allow "
                  "(any, without the feature): Delta refuses the ALTER and its readers the file",
                  f"{CR} §4 type widening ('Readers must reject any type change they do not support'); "
                  "delta-spark 4.4 ALTER COLUMN TYPE (the read oracle)"),
)

ICEBERG = Table(
    identity=Rule("iceberg.identity", "by field id; names are ignored", f"{CR} §3 Identity"),
    default_identity="id", aliases=False, view=lambda t: t, promotions=ICEBERG_PROMOTIONS,
    missing=Rule("iceberg.missing", "an added optional field reads as null; a required one is "
                 "an error (v3: allowed with an initial-default)", f"{CR} §3"),
    missing_ok=lambda f, o: f.nullable or (o.iceberg_version >= 3 and f.has_default),
    tighten=Rule("iceberg.tighten", "optional -> required is not readable", f"{CR} §3"),
    tighten_ok=False,
    enums=Rule("iceberg.enum", "Iceberg has no enum type: enums are strings", f"{CR} 'Where the "
               "references disagree'"), enum_symbols_checked=False,
    mismatch=Rule("iceberg.type-change", "a type change TypeUtil.isPromotionAllowed does not allow: "
                  "schema updates refuse it and readers cannot promote the file's values",
                  f"{CR} §3; pyiceberg 0.12 update_schema and scan (the read oracle)"),
)

POSITIONAL = Table(
    identity=Rule("positional.identity", "the i-th column of the data is the i-th column of the "
                  "reader, whatever its name", "DESIGN.md Reader profile (positional)"),
    default_identity="position", aliases=False, view=spark_view,
    promotions=SPARK_READ_PROMOTIONS,
    missing=Rule("positional.missing", "a reader column past the data's last column reads as "
                 "null", "DESIGN.md Reader profile (positional)"), missing_ok=lambda f, o: True,
    tighten=Rule("positional.nullability", "positional readers do not check nullability",
                 "DESIGN.md Reader profile (positional)"), tighten_ok=True,
    enums=Rule("positional.enum", "enums are strings", "DESIGN.md"), enum_symbols_checked=False,
)

TYPE_MISMATCH = Rule("type-mismatch", "no rule of this profile reads this type as that one",
                     "the profile's promotion table")
SHAPE = Rule("shape-mismatch", "a struct, list, map or primitive cannot be read as another kind",
             f"{CR} §1 TYPE_MISMATCH; §3 'cannot be read as a struct/list/map'")
ENUM_DEFAULT = Rule("avro.enum-default", "unknown symbols decode as the reader enum's default",
                    f"{CR} §1 enum with default")
FIXED_SIZE = Rule("avro.fixed-size", "fixed sizes must be equal", f"{CR} §1 FIXED_SIZE_MISMATCH")
POSITION_NAME = Rule("positional.name", "the data's column at this position has another name: a "
                     "positional reader binds it anyway", "DESIGN.md Reader profile (positional)")


def read_problems(writer: Schema, reader: Schema, table: Table, options: Options) -> list[Problem]:
    """Every problem a reader with `reader` and rule table `table` meets on data written with `writer`."""
    return visit_with_partner(writer, reader, _Read(table, options))


Problems = list[Problem]


class _Read(PartnerVisitor[Pair, Problems, Problems]):
    """The writer's and the reader's schema walked together, problems named at the reader's paths."""

    def __init__(self, table: Table, o: Options) -> None:
        self.table, self.o = table, o
        self.identity = o.identity or table.default_identity

    def pair_fields(self, writer: tuple[Field, ...], reader: tuple[Field, ...]) -> list[Pair]:
        if self.table.aliases and self.identity == "name":
            return _avro_pairs(writer, reader)
        return match_fields(writer, reader, self.identity, aliases=self.table.aliases)

    def field(self, writer: Field, reader: Field, pair: Pair, paths: Paths,
              type_result: Problems) -> Problems:
        here = paths.reader
        problems: Problems = []
        if self.identity == "position" and writer.name != reader.name:
            problems.append(Problem(here, "POSITION_NAME_MISMATCH", f"the data's column at this "
                                    f"position is `{writer.name}`, read as `{reader.name}`", POSITION_NAME,
                                    "warning"))
        return problems + self._nullability(writer.nullable, reader.nullable, here, "field") + type_result

    def writer_only(self, writer: Field, pair: Pair, paths: Paths) -> Problems:
        return []  # data the reader does not ask for is skipped by every reader here

    def reader_only(self, reader: Field, pair: Pair, paths: Paths) -> Problems:
        if self.table.missing_ok(reader, self.o):
            return []
        here = paths.reader
        return [Problem(here, "READER_FIELD_MISSING", f"`{here}` is not in the data and "
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
        return [Problem(path, "TYPE_MISMATCH", f"`{path}` is {describe(writer)} in the data and "
                        f"{describe(reader)} to the reader: {SHAPE.text}", SHAPE)]

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> Problems:
        if isinstance(writer, EnumType) and isinstance(reader, EnumType) and self.table.enum_symbols_checked:
            return _enum(writer, reader, paths.reader, self.table)
        return _primitive(writer, reader, paths.reader, self.table, self.o)

    def _nullability(self, w_null: bool, r_null: bool, path: str, what: str) -> Problems:
        tighten = self.table.tighten
        if w_null and not r_null and not self.table.tighten_ok:
            return [Problem(path, "NULLABILITY_TIGHTENED", f"{what} `{path}` may hold nulls in the data "
                            f"but the reader requires a value: {tighten.text}", tighten)]
        return []


def _avro_pairs(w: tuple[Field, ...], r: tuple[Field, ...]) -> list[Pair]:
    """Avro's `lookupWriterField`: each reader field on its own takes the writer field with its name,
    else the one named by its first alias (in the reader's order) that names one. A writer field may
    feed several reader fields; unmatched writer fields are skipped (compat-rules.md §1 Identity;
    SchemaCompatibility.lookupWriterField, avro-python compatibility.lookup_writer_field)."""
    by_name = {f.name: f for f in w}
    pairs: list[Pair] = []
    for rf in r:
        if rf.name in by_name:
            pairs.append(Pair(by_name[rf.name], rf, "name"))
            continue
        hit = next((by_name[a] for a in rf.aliases if a in by_name), None)
        pairs.append(Pair(hit, rf, "alias" if hit is not None else None))
    return pairs


def _enum(w: EnumType, r: EnumType, path: str, table: Table) -> list[Problem]:
    missing = [s for s in w.symbols if s not in r.symbols]
    if not missing:
        return []
    if r.default is not None:
        return [Problem(path, "ENUM_DEFAULT_USED", f"`{path}`: {missing} decode as "
                        f"{r.default!r}", ENUM_DEFAULT, "info")]
    return [Problem(path, "MISSING_ENUM_SYMBOLS", f"`{path}`: the data may hold {missing}, which "
                    f"the reader's enum lacks and it has no default: {table.enums.text}", table.enums)]


def _primitive(w: DataType, r: DataType, path: str, table: Table, o: Options) -> list[Problem]:
    wv, rv = table.view(w), table.view(r)
    if isinstance(rv, str):
        return [Problem(path, "UNREADABLE_TYPE", f"`{path}` is declared {describe(r)}: {rv}",
                        SPARK_ILLEGAL)]
    if table.fixed_size_checked and isinstance(wv, FixedType) and isinstance(rv, FixedType) and wv != rv:
        return [Problem(path, "FIXED_SIZE_MISMATCH", f"`{path}`: fixed({wv.length}) read as "
                        f"fixed({rv.length})", FIXED_SIZE)]
    if wv == rv:
        return []
    promotions = table.promotions
    if table.promotions_need_type_widening and not o.type_widening:
        promotions = ()
    # a raw promotion may read what the reader cannot infer (a declared UUID read as binary)
    hit = next((p for p in promotions if (p.raw and p.test(w, rv, o))
                or (not p.raw and not isinstance(wv, str) and p.test(wv, rv, o))), None)
    if hit is not None and hit.breaks:
        return [Problem(path, "QUIET_BREAK", f"`{path}` {describe(w)} read as {describe(r)}: "
                        f"{hit.rule.text}", hit.rule)]
    if hit is not None and hit.warning:
        return [Problem(path, "SILENT_CHANGE", f"`{path}` {describe(w)} read as "
                        f"{describe(r)}: {hit.warning}", hit.rule, "warning")]
    if hit is not None:
        return [Problem(path, "PROMOTED", f"`{path}` {describe(w)} read as {describe(r)}: "
                        f"{hit.rule.text}", hit.rule, "info")]
    if isinstance(wv, str):
        return [Problem(path, "UNREADABLE_TYPE", f"`{path}` is {describe(w)} in the data: {wv}",
                        SPARK_ILLEGAL)]
    if isinstance(w, EnumType) and isinstance(r, EnumType):
        return []  # symbols are invisible to this reader (enums are strings)
    return [Problem(path, "TYPE_MISMATCH", f"`{path}` is {describe(w)} in the data and "
                    f"{describe(r)} to the reader: {TYPE_MISMATCH.text}", table.mismatch or TYPE_MISMATCH)]
