"""A footer's column statistics: how each leaf's min/max bytes decode (`stat_kind`), and each
leaf's null count and bounds over the row groups of one file (`statistics`).

In the pipeline `reader.py` calls `statistics` once per file with the row groups the Thrift
decoder built, and `elements.py` asks `stat_kind` once per distinct leaf spelling. It imports only
`footer.py` of the package; it reads no file and parses no schema, and it keeps no cache.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from struct import Struct
from typing import Any

from schemaguard.formats.parquet.footer import FooterSchema, LeafStats, corrupt, leaf_stats


def stat_kind(physical: str, logical: str | None, converted: str | None, precision: int | None) -> str:
    """How to decode a leaf's min/max bytes (PLAIN encoding of its physical type), or `none` when
    they mean nothing comparable: INT96 (only under Int96TimestampOrder), half floats, intervals,
    geometries (no min/max by the spec), always-null columns, and annotations not known here."""
    lt = logical or ""
    if physical == "INT96" or lt in ("FLOAT16", "UNKNOWN") or lt.startswith(
            ("GEOMETRY", "GEOGRAPHY", "FIELD_")) or converted == "INTERVAL":
        return "none"
    if precision is not None and physical in ("FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY"):
        return "be-int"
    if (lt.startswith("INT(") and lt.endswith("unsigned)")) or (converted or "").startswith("UINT"):
        return "u32" if physical == "INT32" else "u64"
    return {"BOOLEAN": "bool", "INT32": "i32", "INT64": "i64", "FLOAT": "f32", "DOUBLE": "f64"}.get(
        physical, "bytes")


def _nan_free(value: float) -> float | None:
    return None if value != value else value  # a NaN bound orders nothing


def _fixed(width: int, decode: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """`decode` for bounds of exactly `width` bytes (PLAIN encoding); other lengths are None."""
    return lambda raw: decode(raw) if len(raw) == width else None


def _little(width: int, signed: bool) -> Callable[[bytes], int | None]:
    """A little-endian integer of exactly `width` bytes (one call a bound: the ints are most)."""
    return lambda raw: int.from_bytes(raw, "little", signed=signed) if len(raw) == width else None


_F32, _F64 = Struct("<f").unpack, Struct("<d").unpack
# How each stat kind's min/max bytes decode (see stat_kind), one function per kind.
_DECODE_STAT: dict[str, Callable[[bytes], Any]] = {
    "i32": _little(4, signed=True),
    "i64": _little(8, signed=True),
    "u32": _little(4, signed=False),
    "u64": _little(8, signed=False),
    "f32": _fixed(4, lambda raw: _nan_free(_F32(raw)[0])),
    "f64": _fixed(8, lambda raw: _nan_free(_F64(raw)[0])),
    "bool": _fixed(1, lambda raw: raw != b"\x00"),
    "be-int": lambda raw: int.from_bytes(raw, "big", signed=True) if raw else None,
    "bytes": lambda raw: raw,
}
_SIGNED_ORDER = frozenset(("bool", "i32", "i64", "f32", "f64"))  # where the deprecated min/max hold


def statistics(groups: list[Any], footer: FooterSchema) -> tuple[tuple[LeafStats, ...], tuple[str, ...]]:
    """Each leaf's statistics over the row groups, and the leaves whose metadata is encrypted."""
    kinds = footer.stat_kinds
    if not groups:
        return tuple(LeafStats(0, None, None, True) for _ in kinds), ()
    encrypted: set[int] = set()
    combined: list[LeafStats] | None = None
    for index, group in enumerate(groups):
        chunks = group.get(1) if isinstance(group, dict) else None
        if not isinstance(chunks, list) or len(chunks) != len(kinds):
            count = len(chunks) if isinstance(chunks, list) else 0
            raise corrupt(f"row group {index} has {count} column chunks for {len(kinds)} leaf columns")
        rows = group.get(3)
        if not isinstance(rows, int) or rows < 0:
            raise corrupt(f"row group {index} claims {rows} rows")
        stats = list(map(_chunk_stats, chunks, kinds, range(len(kinds)), repeat(encrypted)))
        combined = stats if combined is None else list(map(_combine, combined, stats))
    assert combined is not None
    paths = tuple(dict.fromkeys(footer.columns[j].path for j in sorted(encrypted))) if encrypted else ()
    return tuple(combined), paths


_UNKNOWN = LeafStats(None, None, None, False)


def _chunk_stats(chunk: Any, kind: str, index: int, encrypted: set[int]) -> LeafStats:
    """One column chunk's statistics (ColumnChunk 3 meta_data -> ColumnMetaData 12 statistics).
    A chunk with `crypto_metadata` (8) or only `encrypted_column_metadata` (9) is encrypted: its
    statistics are unknown without the key."""
    if type(chunk) is not dict:
        raise corrupt(f"column chunk {index} is not a structure")
    meta = chunk.get(3)
    if 8 in chunk or 9 in chunk or type(meta) is not dict:
        if 8 in chunk or 9 in chunk:
            encrypted.add(index)
        return _UNKNOWN
    s = meta.get(12)
    if type(s) is not dict:
        return _UNKNOWN
    nulls = v if type(v := s.get(3)) is int else None
    low, high = s.get(6), s.get(5)
    if low is None and high is None and kind in _SIGNED_ORDER:
        low, high = s.get(2), s.get(1)  # deprecated fields, valid for signed orders only
    exact = None if 7 not in s and 8 not in s else bool(s.get(7, True) and s.get(8, True))
    if kind == "none" or type(low) is not bytes or type(high) is not bytes:
        # A row group of nulls only has no min/max and loses nothing by it.
        values = meta.get(5)
        return leaf_stats((nulls, None, None, nulls is not None and kind != "none" and values == nulls,
                            exact))
    decode = _DECODE_STAT[kind]
    return leaf_stats((nulls, decode(low), decode(high), nulls is not None, exact))


def _combine(a: LeafStats, b: LeafStats) -> LeafStats:
    """Two row groups' statistics of one leaf as one."""
    nulls = None if a.null_count is None or b.null_count is None else a.null_count + b.null_count
    lows = [x for x in (a.min, b.min) if x is not None]
    highs = [x for x in (a.max, b.max) if x is not None]
    exact = None if a.exact is None and b.exact is None else (a.exact is not False and b.exact is not False)
    return LeafStats(nulls, min(lows) if lows else None, max(highs) if highs else None,
                     a.complete and b.complete, exact)
