"""The records one footer read gives (`FileFooter`, its `FooterSchema`, `ParquetColumn`s and
`LeafStats`), `UnreadableFile`, and how a scan's worker packs a footer for its parent.

The bottom of `formats/parquet/`: every other module of the package builds these records, and
`lake/` (scan, compact, cache), `checks/` and `proofs/` read them. It imports nothing of the package
and only `model` of schemaguard; it decodes no bytes of a file. It also holds what the modules
share: the text of a footer's bytes interned once per value (`text`), and the per-process caches
(`per_process`) that `forget_footer_schemas` empties.
"""

from __future__ import annotations

import marshal
import pickle
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple, TypeVar

from schemaguard.model import Schema

Cache = TypeVar("Cache", bound="dict[Any, Any] | list[Any]")
_CACHES: list[dict[Any, Any] | list[Any]] = []


def per_process(cache: Cache) -> Cache:
    """`cache`, kept for the life of the process (each is bounded by the distinct footer parts it
    meets, few even on huge lakes) and emptied by `forget_footer_schemas`."""
    _CACHES.append(cache)
    return cache


def forget_footer_schemas() -> None:
    """Empty every per-process cache of footer parts (for benchmarks that time a cold scan)."""
    for cache in _CACHES:
        cache.clear()


class UnreadableFile(Exception):
    """A listed file whose footer cannot be read; `reason` says why in words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def corrupt(why: str) -> UnreadableFile:
    """A footer whose bytes break `parquet.thrift` or its own claims, `why` in words."""
    return UnreadableFile(f"corrupt footer: {why}")


class ParquetColumn(NamedTuple):
    """What the footer says about one leaf column, beyond the model type. A NamedTuple: a wide
    footer holds tens of thousands, pickled back from a worker (dataclasses with slots unpickle
    several times slower)."""

    path: str  # model path, e.g. `items[].price`; inside a variant, the variant's own path
    parquet_path: tuple[str, ...]  # the Parquet node names, e.g. ("items", "list", "element", "price")
    physical_type: str  # BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
    type_length: int | None  # FIXED_LEN_BYTE_ARRAY width
    logical_type: str | None  # as written, e.g. TIMESTAMP(MICROS,utc), DECIMAL(12,2), FIELD_25
    converted_type: str | None  # as written, e.g. UTF8, TIMESTAMP_MICROS, DECIMAL
    precision: int | None
    scale: int | None
    repetition: str  # REQUIRED, OPTIONAL, REPEATED
    field_id: int | None
    max_definition_level: int
    max_repetition_level: int
    # nearest list/map shape: list:3-level, list:2-level, map, map:MAP_KEY_VALUE, map:key-only,
    # repeated, variant
    container: str | None


def parquet_column(values: tuple[Any, ...]) -> ParquetColumn:
    """A `ParquetColumn` from its values in field order, past the NamedTuple's slower constructor."""
    return tuple.__new__(ParquetColumn, values)


class LeafStats(NamedTuple):
    """Statistics of one leaf aggregated over row groups. `min`/`max` are physical values made
    comparable: integers (also for dates, timestamps, times and unscaled decimals), floats,
    booleans or bytes; `complete` is False when some row group lacked them (or the column is
    encrypted); `exact` is False when a writer marked a bound inexact (a truncated string), None
    when no row group said."""

    null_count: int | None
    min: Any
    max: Any
    complete: bool
    exact: bool | None = None


@dataclass(frozen=True, slots=True)
class FooterSchema:
    """The schema part of a footer, shared by every file with the same footer schema."""

    schema: Schema
    columns: tuple[ParquetColumn, ...]
    spark_schema: Schema | None
    spark_schema_json: str | None
    spark_schema_error: str | None
    fingerprint: str
    stat_kinds: tuple[str, ...]  # per leaf, how to decode its min/max bytes (see stats.py)
    spark_refusal: str | None = None  # why Spark cannot read this footer at all (see schema.py)
    # What it was parsed from: the exact bytes of the footer's schema list and its Spark schema, so
    # that the incremental cache (lake/cache.py) keeps the footer as written, not a copy of ours.
    source: tuple[bytes, bytes | None] | None = field(default=None, compare=False, repr=False)

    def __reduce__(self) -> tuple[Callable[..., FooterSchema], tuple[Any, ...]]:
        # Leaves as plain tuples: a NamedTuple pickles through its 13-argument constructor, three
        # times slower, and a wide footer sends tens of thousands from its worker.
        return _footer_schema, (self.schema, tuple(map(tuple, self.columns)), self.spark_schema,
                                self.spark_schema_json, self.spark_schema_error, self.fingerprint,
                                self.stat_kinds, self.spark_refusal, self.source)


def _footer_schema(schema: Schema, columns: tuple[tuple[Any, ...], ...], *rest: Any) -> FooterSchema:
    return FooterSchema(schema, tuple(map(parquet_column, columns)), *rest)


class FileFooter(NamedTuple):
    """One file's footer. A NamedTuple: the local engine pickles one per file back from its
    workers, and tuples pickle several times faster than dataclasses."""

    path: str  # as given to the reader (absolute path or URI)
    rel: str  # relative to the table root
    partition: tuple[tuple[str, str | None], ...]
    size: int
    mtime: float | None
    rows: int
    row_groups: int
    created_by: str | None
    footer: FooterSchema
    stats: tuple[LeafStats, ...]
    kv_keys: tuple[str, ...]
    encrypted: tuple[str, ...] = ()  # leaf paths whose column metadata is encrypted in this file

    @property
    def schema(self) -> Schema:
        return self.footer.schema

    @property
    def fingerprint(self) -> str:
        return self.footer.fingerprint


# What a worker sends back for one footer: the fields its parent does not know from the listing
# (size as read, rows, row groups, created_by, footer schema, statistics encoded by
# `encode_stats`, key-value keys, encrypted leaves). The parent keeps the statistics as the bytes
# they arrive as (lake/file_records.py), so it never builds a file's statistics it is not asked for.
Packed = tuple[int, int, int, "str | None", FooterSchema, bytes, tuple[str, ...], tuple[str, ...]]


def pack(f: FileFooter) -> Packed:
    """One footer as a worker sends it (see `Packed`)."""
    return (f.size, f.rows, f.row_groups, f.created_by, f.footer, encode_stats(f.stats), f.kv_keys,
            f.encrypted)


def encode_stats(stats: Iterable[Sequence[Any]]) -> bytes:
    """A file's statistics as bytes. marshal keeps ints, floats, bools, bytes and None exactly and
    is several times faster than pickle; a value marshal refuses goes through pickle."""
    plain = tuple(map(tuple, stats))
    try:
        return marshal.dumps(plain)
    except ValueError:
        return pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)


_PICKLED = b"\x80"  # pickle's first byte from protocol 2 on; never a marshal type code
leaf_stats = partial(tuple.__new__, LeafStats)  # values in field order, past the slower constructor


def decode_stats(blob: bytes) -> tuple[LeafStats, ...]:
    """What `encode_stats` encoded."""
    plain = pickle.loads(blob) if blob[:1] == _PICKLED else marshal.loads(blob)
    return tuple(map(leaf_stats, plain))


_SHARED: dict[Any, Any] = per_process({})


def text(raw: bytes) -> str:
    """Bytes that should be UTF-8 as text, one object per distinct value (the writer repeats in
    every footer, and a chunk of footers then pickles it once); bad bytes become U+FFFD."""
    found = _SHARED.get(raw)
    if found is None:
        found = _SHARED[raw] = raw.decode("utf-8", "replace")
    return str(found)
