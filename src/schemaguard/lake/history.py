"""Files grouped into schema versions, oldest first.

A version is every file that shares one footer fingerprint (model schema + physical layout +
Spark's footer schema). Its age comes, for a Delta or Iceberg table, from the commits that added
its files (a rewrite of an old partition is new); for a folder of Parquet files, from a date
partition when it has one (the first partition column whose every value is a date, `2024-01-31`
or `20240131`), else from file modification times. `History.ordered_by` says which.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from itertools import count, islice
from typing import Any

from schemaguard.formats.notation import describe
from schemaguard.formats.parquet import FileFooter, FooterSchema, ParquetColumn, annotation
from schemaguard.lake.discover import partition_dir, spark_order_key
from schemaguard.lake.file_records import Footers, Partition, Subset
from schemaguard.model import DataType, leaves

SAMPLE = 20  # files named per version and per finding (the first by path); counts say how many in all
_DATE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})(?:[ T].*)?")


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    number: int  # 1 = oldest
    fingerprint: str
    footer: FooterSchema
    files: Subset  # sorted by relative path; each file built when asked for (lake/file_records.py)
    partitions: tuple[str, ...]  # partition directories, sorted
    rows: int
    first_seen: str | None  # a date (date partition) or an ISO timestamp (mtime)
    last_seen: str | None
    sample: tuple[str, ...]  # the first SAMPLE files' paths: named once, not per finding


@dataclass(frozen=True, slots=True)
class ColumnChange:
    path: str
    before: str | None  # None: the column is absent on that side
    after: str | None


@dataclass(frozen=True, slots=True)
class History:
    versions: tuple[SchemaVersion, ...]
    ordered_by: str  # "partition <column>" or "file modification time"


def date_partition_column(partitions: Sequence[Partition]) -> str | None:
    """The first partition column whose values are all dates, if any, given the table's distinct
    partitions (one per directory: far fewer than files), the first file's first."""
    if not partitions or not partitions[0]:
        return None
    for key in (k for k, _ in partitions[0]):
        values = {dict(p).get(key) for p in partitions}
        if values and all(partition_day(v) for v in values):
            return key
    return None


def partition_day(value: str | None) -> date | None:
    """A partition value `2024-01-31`, `20240131` or a timestamp starting with a date, as its day."""
    m = _DATE.fullmatch(value) if value is not None else None
    if m is None:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:  # 8 digits that are not a calendar date, e.g. run=10000001
        return None


def files_per_day(partitions: Iterable[Partition], date_col: str) -> tuple[tuple[date, int], ...]:
    """How many files lie in each day of the date partition column, oldest day first, given each
    file's partition."""
    days = Counter(d for p in partitions if (d := partition_day(dict(p).get(date_col))) is not None)
    return tuple(sorted(days.items()))


def build_history(footers: Sequence[FileFooter], commits: str | None = None) -> History:
    """The footers grouped into versions, reading their columns (lake/file_records.py): a million
    files cost a pass over a few arrays, not a million objects. With `commits` (where a table's
    commits are kept: `the Delta log`), each file's time is the commit that added it, and versions
    are ordered by it whatever the partitions say."""
    store = footers if isinstance(footers, Footers) else Footers(footers)
    partitions = store.partition_values()
    date_col = date_partition_column(partitions) if commits is None else None
    schemas = store.schemas()
    fingerprints = [f.fingerprint for f in schemas]
    groups: dict[str, array[int]] = {}
    for i, code in enumerate(store.footer_codes()):
        groups.setdefault(fingerprints[code], array("q")).append(i)
    days = ([d.isoformat() if (d := partition_day(dict(p)[date_col])) else None for p in partitions]
            if date_col is not None else [])
    drafts = []
    for fp, positions in groups.items():
        codes = {store.partition_code(i) for i in positions}  # the version's directories
        exact: tuple[float, float] | None = None
        if date_col is not None:
            seen = [day for c in codes if (day := days[c]) is not None]
        else:
            # Shown to the second, ordered to the sub-second (log commit times are often that close).
            times = [t for t in map(store.mtime, positions) if t is not None]
            exact = (min(times), max(times)) if times else None
            seen = [_iso(t) for t in exact] if exact else []
        parts = sorted({partition_dir(partitions[c]) for c in codes} - {""})
        span = (min(seen, default=""), max(seen, default=""), *(exact or (0.0, 0.0)))
        drafts.append((span, fp, store.footer(positions[0]), _by_rel(store, positions), parts))
    # Versions seen over the same span are ordered as Spark lists their first files, never by hash
    # (looked for only where spans tie: it reads every path of the version).
    spans = Counter(d[0] for d in drafts)
    drafts.sort(key=lambda d: (d[0], _first_file(store, d[3]) if spans[d[0]] > 1 else b""))
    subsets = [Subset(store, d[3]) for d in drafts]
    versions = tuple(
        SchemaVersion(i + 1, fp, footer, files, tuple(parts), sum(map(store.rows, files.positions)),
                      span[0] or None, span[1] or None, tuple(islice(files.rels(), SAMPLE)))
        for i, ((span, fp, footer, _, parts), files) in enumerate(zip(drafts, subsets, strict=True))
    )
    if date_col:
        return History(versions, f"partition {date_col}")
    tied = [f"v{v.number}" for v, d in zip(versions, drafts, strict=True) if spans[d[0]] > 1]
    note = (f" ({', '.join(tied)} share their first and last times, so they follow the order Spark lists "
            "their first files in)" if tied else "")
    order = f"the commit that added their files ({commits})" if commits else "file modification time"
    return History(versions, f"{order}{note}")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def _first_file(store: Footers, positions: array[int]) -> bytes:
    """The Spark order key of the file Spark lists first among some (UTF-16 order, not Python's)."""
    return min(map(spark_order_key, map(store.rel, positions)))


def _by_rel(store: Footers, positions: array[int]) -> array[int]:
    """A version's files in order of relative path. Listed files mostly come in that order, so
    one pass checks it, and only files that do not are sorted."""
    rels = map(store.rel, positions)
    previous = next(rels, "")
    for rel in rels:
        if rel < previous:
            return array("q", sorted(positions, key=store.rel))
        previous = rel
    return positions


def leaf_signature(footer: FooterSchema) -> dict[str, str]:
    """Each leaf as one readable line: model type, nullability and the Parquet layout behind it."""
    return _leaf_texts(footer)[0]


def leaf_layouts(footer: FooterSchema) -> dict[str, str]:
    """Each leaf's type and Parquet layout (`int32 [INT32]`), nullability left out."""
    return _leaf_texts(footer)[1]


_Texts = tuple[dict[str, str], dict[str, str]]  # (with nullability, without)
_LEAF_TEXTS: dict[str, _Texts] = {}  # by fingerprint: a few per table


def _leaf_texts(footer: FooterSchema) -> _Texts:
    """One line per model leaf, computed once per footer schema (several checks ask). A VARIANT is
    one leaf over several Parquet columns (metadata, value, shredded typed_value...)."""
    found = _LEAF_TEXTS.get(footer.fingerprint)
    if found is None:
        found = _LEAF_TEXTS[footer.fingerprint] = _compute_leaf_texts(footer)
    return found


def _compute_leaf_texts(footer: FooterSchema) -> _Texts:
    types = leaves(footer.schema)
    signed: dict[str, str] = {}
    plain: dict[str, str] = {}
    told: dict[tuple[Any, ...], tuple[str, str]] = {}  # each distinct leaf spelt once: columns share a few
    for c in footer.columns:
        if c.path not in plain:
            t, nullable = types[c.path]
            key = (t, nullable, c.physical_type, c.type_length, c.logical_type, c.converted_type,
                   c.container)  # the type, and the fields `_layout` spells
            texts = told.get(key) or told.setdefault(key, _texts(t, nullable, c))
            signed[c.path], plain[c.path] = texts
    return signed, plain


def _texts(t: DataType, nullable: bool | None, c: ParquetColumn) -> tuple[str, str]:
    """A leaf's line with its nullability and without."""
    text, layout = describe(t), _layout(c)
    plain = f"{text} [{layout}]"
    return (f"{text} not null [{layout}]" if nullable is False else plain), plain


def _layout(c: ParquetColumn) -> str:
    """A leaf's Parquet backing: physical type, annotation, container (`INT64 TIMESTAMP(MICROS,true)`)."""
    if c.container == "variant":  # however it is shredded (see formats/parquet/schema.py _tree)
        return "group VARIANT"
    physical = c.physical_type
    if c.type_length is not None:
        physical += f"({c.type_length})"
    ann = annotation(c)
    layout = f"{physical} {ann}" if ann else physical
    return f"{layout}, {c.container}" if c.container else layout


def column_changes(before: FooterSchema, after: FooterSchema) -> list[ColumnChange]:
    """Leaves that appear, disappear or change (type, nullability or layout) between versions."""
    a, b = leaf_signature(before), leaf_signature(after)
    changed = {p for p, _ in a.items() ^ b.items()}  # set operations in C: most leaves agree
    place = dict(zip({**a, **b}, count()))  # a's leaves, then b's new ones
    changes = [ColumnChange(p, a.get(p), b.get(p)) for p in sorted(changed, key=place.__getitem__)]
    if before.spark_schema_json != after.spark_schema_json and not changes:
        changes.append(ColumnChange("(Spark footer schema)", "differs", "differs"))
    return changes
