"""Parquet files with hand-built footers: a small Thrift compact-protocol *encoder*, written apart
from the decoder it tests (src/schemaguard/formats/thrift.py), and builders for the parquet.thrift
structs a footer holds. A file is `PAR1`, then the footer, its length and `PAR1`: no data pages,
which footer readers (and Spark's schema inference) never look at.

Field ids are those of apache/parquet-format `src/main/thrift/parquet.thrift`. Values are tagged
with their Thrift type where Python cannot tell: `I32(5)`, `I64(5)`, `I8(1)`; `bool`, `bytes`,
`str` (UTF-8 binary), `float` (double), `list`s of one element type and `dict`s (structs) are
taken as they are."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _STRUCT = 1, 2, 3, 4, 5, 6, 7, 8, 9, 12


@dataclass(frozen=True)
class I8:
    value: int


@dataclass(frozen=True)
class I32:
    value: int


@dataclass(frozen=True)
class I64:
    value: int


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))


def _type_of(value: Any) -> int:
    if isinstance(value, bool):
        return _TRUE
    return {
        I8: _BYTE,
        I32: _I32,
        I64: _I64,
        float: _DOUBLE,
        bytes: _BINARY,
        str: _BINARY,
        list: _LIST,
        dict: _STRUCT,
    }[type(value)]


def _body(value: Any) -> bytes:
    if isinstance(value, bool):
        return bytes([1 if value else 2])  # only inside lists; fields carry it in the header
    if isinstance(value, I8):
        return struct.pack("b", value.value)
    if isinstance(value, I32 | I64):
        return _zigzag(value.value)
    if isinstance(value, float):
        return struct.pack("<d", value)
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return _varint(len(value)) + value
    if isinstance(value, list):
        kind = _type_of(value[0]) if value else _STRUCT
        head = (
            bytes([(len(value) << 4) | kind])
            if len(value) < 15
            else bytes([0xF0 | kind]) + _varint(len(value))
        )
        return head + b"".join(_body(v) for v in value)
    if isinstance(value, dict):
        return encode_struct(value)
    raise TypeError(f"no Thrift encoding for {value!r}")


def encode_struct(fields: dict[int, Any]) -> bytes:
    """A struct: its fields in id order (None values left out), then the stop byte."""
    out = bytearray()
    last = 0
    for fid in sorted(f for f, v in fields.items() if v is not None):
        value = fields[fid]
        kind = (_TRUE if value else _FALSE) if isinstance(value, bool) else _type_of(value)
        delta = fid - last
        out += bytes([(delta << 4) | kind]) if 0 < delta <= 15 else bytes([kind]) + _zigzag(fid)
        if not isinstance(value, bool):
            out += _body(value)
        last = fid
    return bytes(out) + b"\x00"


def write_footer_file(path: Path, file_metadata: dict[int, Any] | bytes) -> Path:
    """`PAR1`, the footer, its length, `PAR1`."""
    footer = file_metadata if isinstance(file_metadata, bytes) else encode_struct(file_metadata)
    path.write_bytes(b"PAR1" + footer + len(footer).to_bytes(4, "little") + b"PAR1")
    return path


# parquet.thrift enums
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED = range(8)
REQUIRED, OPTIONAL, REPEATED = range(3)
UTF8, MAP, MAP_KEY_VALUE, LIST = 0, 1, 2, 3
TIME_MILLIS, TIME_MICROS, TIMESTAMP_MILLIS, TIMESTAMP_MICROS, UINT_32 = 7, 8, 9, 10, 13


def element(
    name: str | bytes,
    *,
    type: int | None = None,
    type_length: int | None = None,
    repetition: int | None = None,
    children: int | None = None,
    converted: int | None = None,
    scale: int | None = None,
    precision: int | None = None,
    field_id: int | None = None,
    logical: dict[int, Any] | None = None,
) -> dict[int, Any]:
    """A SchemaElement (fields 1-10)."""

    def i32(v: int | None) -> I32 | None:
        return None if v is None else I32(v)

    return {
        1: i32(type),
        2: i32(type_length),
        3: i32(repetition),
        4: name if isinstance(name, bytes) else name.encode(),
        5: i32(children),
        6: i32(converted),
        7: i32(scale),
        8: i32(precision),
        9: i32(field_id),
        10: logical,
    }


def logical(member: int, body: dict[int, Any] | None = None) -> dict[int, Any]:
    """A LogicalType union: one member (by field id) and its struct."""
    return {member: body or {}}


def timestamp(unit: int, utc: bool) -> dict[int, Any]:
    """TIMESTAMP (8) with TimeUnit member 1 MILLIS, 2 MICROS or 3 NANOS."""
    return logical(8, {1: utc, 2: {unit: {}}})


def time_of_day(unit: int, utc: bool) -> dict[int, Any]:
    return logical(7, {1: utc, 2: {unit: {}}})


def stats(
    *,
    null_count: int | None = None,
    min_value: bytes | None = None,
    max_value: bytes | None = None,
    min_exact: bool | None = None,
    max_exact: bool | None = None,
    nan_count: int | None = None,
) -> dict[int, Any]:
    return {
        3: None if null_count is None else I64(null_count),
        5: max_value,
        6: min_value,
        7: max_exact,
        8: min_exact,
        9: None if nan_count is None else I64(nan_count),
    }


def chunk(
    path: list[str],
    physical: int,
    *,
    values: int,
    statistics: dict[int, Any] | None = None,
    crypto: dict[int, Any] | None = None,
    size_statistics: dict[int, Any] | None = None,
    with_metadata: bool = True,
) -> dict[int, Any]:
    """A ColumnChunk with its ColumnMetaData (PLAIN, uncompressed, made-up offsets)."""
    meta = {
        1: I32(physical),
        2: [I32(0)],
        3: path,
        4: I32(0),
        5: I64(values),
        6: I64(100),
        7: I64(100),
        9: I64(4),
        12: statistics,
        16: size_statistics,
    }
    return {
        2: I64(4),
        3: meta if with_metadata else None,
        8: crypto,
        9: b"\x00" * 16 if crypto is not None and not with_metadata else None,
    }


def row_group(chunks: list[dict[int, Any]], rows: int) -> dict[int, Any]:
    return {1: chunks, 2: I64(100 * len(chunks)), 3: I64(rows)}


def file_metadata(
    schema: list[dict[int, Any]],
    groups: list[dict[int, Any]],
    rows: int,
    *,
    kv: dict[str, str] | None = None,
    created_by: str | bytes | None = "handmade_footers.py",
    encryption_algorithm: dict[int, Any] | None = None,
) -> dict[int, Any]:
    return {
        1: I32(2),
        2: schema,
        3: I64(rows),
        4: groups,
        5: [{1: k, 2: v} for k, v in kv.items()] if kv else None,
        6: created_by,
        8: encryption_algorithm,
    }


def leaf_file(
    path: Path,
    leaf: dict[int, Any],
    *,
    rows: int = 3,
    values: int | None = None,
    statistics: dict[int, Any] | None = None,
) -> Path:
    """A file of one top-level leaf in one row group."""
    schema = [element("schema", children=1), leaf]
    name = leaf[4].decode("utf-8", "replace")
    group = row_group(
        [chunk([name], leaf[1].value, values=rows if values is None else values, statistics=statistics)], rows
    )
    return write_footer_file(path, file_metadata(schema, [group], rows))
