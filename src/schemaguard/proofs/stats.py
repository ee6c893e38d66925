"""What statistics decide, file by file, without reading a data page.

A file's footer holds, per leaf column and row group, a null count and min/max; the reader sums
and bounds them over every row group (formats/parquet/stats.py, into `LeafStats`), so a null only
in a file's second row group still counts. A leaf that cannot be null (max definition level 0: it
and every ancestor REQUIRED) needs no statistics. Where the footer has none (statistics off;
pyarrow writes none for INT96), a Delta table's log statistics (`nullCount` per file) or an
Iceberg table's manifest (null counts by field id) may; where none has them, the file is
`unknown` and left to the data.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any, Literal, NamedTuple

from schemaguard.formats.delta import MAPPING_PHYSICAL_KEY
from schemaguard.formats.parquet import FileFooter, FooterSchema, LeafStats, ParquetColumn
from schemaguard.lake.snapshot import relative
from schemaguard.lake.table import TableRead
from schemaguard.model import (
    DataType,
    DecimalType,
    FloatType,
    IntType,
    Schema,
    fields_along,
    fields_of,
)
from schemaguard.proofs import DecidedBy

State = Literal["ok", "bad", "absent", "unknown"]


class FileFacts(NamedTuple):
    """One file's answer for one proof: `bad` rows (nulls; for `fits`, files with a bound out
    of range count 1), from which source, or why it is unknown."""

    state: State
    bad: int = 0
    source: DecidedBy = "none"
    why: str = ""


class Column(NamedTuple):
    """A column as one footer schema holds it: its leaf (None when the path is a group), its
    model path and type, and its field id."""

    leaf: int | None  # its index among the footer's leaf columns
    path: str
    type: DataType
    field_id: int | None


def find_column(footer: FooterSchema, name: str, case_sensitive: bool = False) -> Column | None:
    """The column a reader means by `name` (case-insensitively, as Spark resolves names by
    default), or None when this footer has no such column."""
    key = name if case_sensitive else name.lower()
    for path, f in fields_of(footer.schema):
        if (path if case_sensitive else path.lower()) == key:
            index = next((i for i, c in enumerate(footer.columns) if c.path == path), None)
            return Column(index, path, f.type, f.id)
    return None


class Lookup:
    """Column look-ups cached per footer schema: footers of one version share one object, so a
    table of a million files costs one look-up per version, not per file."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._cache: dict[int, Column | None] = {}

    def __call__(self, footer: FooterSchema) -> Column | None:
        key = id(footer)
        if key not in self._cache:
            self._cache[key] = find_column(footer, self.name)
        return self._cache[key]


# ---------------------------------------------------------------------------------------------
# Nulls


NullSource = Callable[[FileFooter, Column], int | None]


def null_facts(f: FileFooter, column: Column | None, fallbacks: tuple[tuple[DecidedBy, NullSource], ...]
               ) -> FileFacts:
    """How many nulls one file holds in the column, from the first source that knows."""
    if column is None:
        return FileFacts("absent", source="footer")
    n, source, why = null_count(f, column, fallbacks)
    return FileFacts("unknown", why=why) if n is None else _nulls(n, source)


def backfill_facts(f: FileFooter, new: Column | None, old: Column | None,
                   fallbacks: tuple[tuple[DecidedBy, NullSource], ...]) -> FileFacts:
    """`new` null only where `old` is null, from null counts: a file whose `old` holds no value
    has nothing to fill; one whose `new` has no null is filled; one without `new` misses every
    row `old` has a value in. Null counts cannot pair rows otherwise: the data decides."""
    old_nulls, old_source, old_why = (f.rows, "footer", "") if old is None else null_count(f, old, fallbacks)
    if old_nulls == f.rows:
        return FileFacts("ok", 0, old_source)
    if new is None:
        return FileFacts("unknown", why=old_why) if old_nulls is None else FileFacts(
            "bad", f.rows - old_nulls, old_source)
    new_nulls, new_source, new_why = null_count(f, new, fallbacks)
    if new_nulls == 0:
        return FileFacts("ok", 0, new_source)
    return FileFacts("unknown", why=new_why or old_why or "null counts cannot pair the two columns' rows")


def null_count(f: FileFooter, column: Column, fallbacks: tuple[tuple[DecidedBy, NullSource], ...]
               ) -> tuple[int | None, DecidedBy, str]:
    """The nulls of a column in one file and who said so, or None and why nobody can."""
    if column.leaf is None:
        return None, "none", "a group column: its leaves' null counts do not add up to its own"
    leaf: ParquetColumn = f.footer.columns[column.leaf]
    if leaf.max_definition_level == 0:
        return 0, "footer", ""
    stats: LeafStats = f.stats[column.leaf]
    if stats.null_count is not None:
        return stats.null_count, "footer", ""
    for source, nulls_of in fallbacks:
        found = nulls_of(f, column)
        if found is not None:
            return found, source, ""
    return None, "none", "no null count in the footer" + (" or the log" if fallbacks else "")


def _nulls(n: int, source: DecidedBy) -> FileFacts:
    return FileFacts("bad" if n else "ok", n, source)


def log_nulls(table: TableRead) -> tuple[tuple[DecidedBy, NullSource], ...]:
    """The null counts a table's log keeps per file: Delta's `stats.nullCount` (by physical
    name), Iceberg's manifest null counts (by field id)."""
    root = table.listing.root
    if table.delta is not None:
        by_rel = {relative(d.path, root): d for d in table.delta.files}
        schema = table.delta.current.schema

        def delta(f: FileFooter, column: Column) -> int | None:
            d = by_rel.get(f.rel)
            stats = d.stats if d is not None else None
            node: Any = stats.get("nullCount") if stats else None
            for part in _physical_path(schema, column.path) or ():
                node = node.get(part) if isinstance(node, dict) else None
            return node if isinstance(node, int) and not isinstance(node, bool) else None

        return (("log", delta),)
    if table.iceberg is not None:
        by_path = {relative(i.path, root): i for i in table.iceberg.files}

        def manifest(f: FileFooter, column: Column) -> int | None:
            i = by_path.get(f.rel)
            if i is None or column.field_id is None:
                return None
            return i.null_counts.get(column.field_id)

        return (("manifest", manifest),)
    return ()


def _physical_path(schema: Schema, path: str) -> list[str] | None:
    """A struct path's physical names under Delta column mapping (the names themselves without),
    each name resolved as Spark resolves it: ignoring case."""
    along = fields_along(schema, path, lambda fields, name: next(
        (f for f in fields if f.name.lower() == name.lower()), None))
    return None if along is None else [f.meta.get(MAPPING_PHYSICAL_KEY, f.name) for f in along]


# ---------------------------------------------------------------------------------------------
# Ranges


def range_of(t: DataType) -> tuple[Decimal, Decimal, int | None] | None:
    """The values a narrower type holds, exactly: (lowest, highest, decimal scale or None)."""
    if isinstance(t, IntType):
        if t.signed:
            return Decimal(-(2 ** (t.bits - 1))), Decimal(2 ** (t.bits - 1) - 1), None
        return Decimal(0), Decimal(2 ** t.bits - 1), None
    if isinstance(t, DecimalType):
        top = _exact(10 ** t.precision - 1, t.scale)
        return top.copy_negate(), top, t.scale  # `-top` would round to the context's 28 digits
    if isinstance(t, FloatType) and t.bits == 32:
        largest = Decimal(float.fromhex("0x1.fffffep+127"))  # FLT_MAX, exactly (a double holds it)
        return largest.copy_negate(), largest, None
    return None


def value_of(raw: Any, t: DataType) -> Decimal | None:
    """A statistics bound (a physical value) as the exact number it stands for."""
    if raw is None or isinstance(raw, bool | bytes):
        return None
    if isinstance(t, DecimalType):
        return _exact(int(raw), t.scale)
    if isinstance(t, IntType | FloatType):
        return Decimal(raw)
    return None


def _exact(unscaled: int, scale: int) -> Decimal:
    """unscaled * 10^-scale with every digit kept (arithmetic would round to the context's 28)."""
    return Decimal(f"{unscaled}E{-scale}")


def range_facts(f: FileFooter, column: Column | None, target: DataType) -> FileFacts:
    """Whether one file's values fit `target`, from the footer's min/max (exact: no double)."""
    if column is None:
        return FileFacts("absent", source="footer")
    bounds = range_of(target)
    if column.leaf is None or bounds is None:
        return FileFacts("unknown", why="not a numeric leaf column")
    stats = f.stats[column.leaf]
    low, high = value_of(stats.min, column.type), value_of(stats.max, column.type)
    if stats.null_count is not None and stats.null_count == f.rows:
        return FileFacts("ok", 0, "footer")  # nulls only: nothing to fit
    if low is None or high is None or not stats.complete or stats.exact is False:
        return FileFacts("unknown", why="no exact min/max in the footer")
    lowest, highest, scale = bounds
    if low < lowest or high > highest:
        return FileFacts("bad", 1, "footer", f"min {low}, max {high}")
    if scale is not None and isinstance(column.type, DecimalType) and column.type.scale > scale:
        return FileFacts("unknown", why="a smaller scale: the bounds cannot tell whether digits are lost")
    return FileFacts("ok", 0, "footer")


# ---------------------------------------------------------------------------------------------
# Magnitudes (unit drift)


def magnitude(f: FileFooter, column: Column | None) -> Decimal | None:
    """The largest absolute value of a file's column from its footer's bounds (None: no exact
    bounds, or no such numeric column)."""
    if column is None or column.leaf is None:
        return None
    stats = f.stats[column.leaf]
    low, high = value_of(stats.min, column.type), value_of(stats.max, column.type)
    if low is None or high is None or not stats.complete or stats.exact is False:
        return None
    return max(low.copy_abs(), high.copy_abs())  # abs() would round to the context's 28 digits
