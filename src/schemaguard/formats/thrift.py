"""Parquet footer bytes decoded with the Thrift compact protocol, as `parquet.thrift` defines them.

The decoder is generic: a struct becomes a dict from field id to value (integers, bytes, floats,
booleans, lists and nested dicts), so every field a writer put there is kept, including union
members and fields this code has no name for. `formats/parquet/` reads the fields it needs by
their ids in apache/parquet-format `src/main/thrift/parquet.thrift` (the ids are cited there).

Compact protocol (Apache Thrift, `doc/specs/thrift-compact-protocol.md`): a field header byte
holds the field-id delta (high nibble; 0 means a zigzag varint id follows) and the type (low
nibble; a boolean field's value is its type, 1 true or 2 false); integers are zigzag varints;
binary is a varint length and the bytes; a list header holds the size (high nibble, 15 means a
varint size follows) and the element type; booleans inside lists are one byte each (1 is true).

Every malformed input raises `ThriftError` with the byte offset: reading past the end, a list
longer than the bytes left, an unknown type id, a varint beyond 64 bits, a long field id outside
i16, nesting beyond Python's recursion limit.

`formats/_thrift.c` is this decoder compiled (built by `pip install`, optional): the same values
and the same errors, about ten times faster. Where it was not built, or `SCHEMAGUARD_PYTHON_DECODER`
is set (the switch that runs the whole test suite on this decoder), this module decodes alone;
`COMPILED` says which, and tests run both on the same footers.
"""

from __future__ import annotations

import os
from struct import Struct
from typing import Any

# Compact protocol type ids.
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
_DOUBLE_LE = Struct("<d").unpack_from


class ThriftError(ValueError):
    """Bytes that are not a valid compact-protocol footer; the message says where."""


try:
    from schemaguard.formats import _thrift  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install): the Python decoder below
    _thrift = None
else:
    _thrift.use_error(ThriftError)
# Where the compiled decoder was loaded from (None: not built).
BUILT_FROM: str | None = getattr(_thrift, "__file__", None)
PYTHON_DECODER_SWITCH = "SCHEMAGUARD_PYTHON_DECODER"
# Which decoder reads footers by default; the compiled one stays importable for the tests that
# compare the two even when the switch is on.
COMPILED: bool = BUILT_FROM is not None and not os.environ.get(PYTHON_DECODER_SWITCH)


def decode_struct(data: bytes, pos: int = 0, *, compiled: bool = COMPILED) -> tuple[dict[int, Any], int]:
    """One struct at `pos`: its fields by id, and the offset just past it."""
    if compiled:
        out_c: tuple[dict[int, Any], int] = _thrift.decode_struct(data, pos)
        return out_c
    try:
        out, end = _struct(data, pos, 0)
    except IndexError:
        raise ThriftError(f"the footer ends inside a structure ({len(data)} bytes)") from None
    except RecursionError:
        raise ThriftError("structures nested deeper than any footer holds") from None
    if end > len(data):
        raise ThriftError(f"a string runs past the end of the footer ({len(data)} bytes)")
    return out, end


# Which fields of a struct to build: field id -> None (the whole value) or the `Keep` of the struct
# it holds (or of each struct in the list it holds). Fields not named are walked over, not built.
Keep = dict[int, "Keep | None"]


def decode_file_metadata(data: bytes, known: list[bytes], keep: Keep, *,
                         compiled: bool = COMPILED) -> tuple[dict[int, Any], bytes]:
    """A serialized `FileMetaData` (the fields after the schema as `keep` says) and the exact bytes
    of its `schema` list (field 2).

    When those bytes equal one of `known` (the schemas of files read lately), the list is skipped
    with one byte comparison and field 2 is None: files of one table share a few schemas, so the
    schema of most files costs no decoding. Linear in the footer's bytes."""
    try:
        meta, schema = (_thrift.file_metadata if compiled else _file_metadata)(data, known, keep)
    except IndexError:
        raise ThriftError(f"the footer ends inside a structure ({len(data)} bytes)") from None
    except RecursionError:
        raise ThriftError("structures nested deeper than any footer holds") from None
    if not schema:
        raise ThriftError("the footer holds no schema")
    return meta, schema


def _file_metadata(data: bytes, known: list[bytes], keep: Keep) -> tuple[dict[int, Any], bytes]:
    meta: dict[int, Any] = {}
    pos = last = 0
    while data[pos]:
        last, kind, pos = _header(data, pos, last)
        if last == 2 and kind == _LIST:
            start = pos
            for raw in known:
                if data.startswith(raw, pos):
                    meta[2], pos = None, pos + len(raw)
                    break
            else:
                meta[2], pos = _list(data, pos)
            schema = data[start:pos]
            rest, end = _project(data, pos, 2, keep)
            if end > len(data):
                raise ThriftError(f"a string runs past the end of the footer ({len(data)} bytes)")
            meta.update(rest)
            return meta, schema
        if kind in (_TRUE, _FALSE):
            meta[last] = kind == _TRUE
        else:
            meta[last], pos = _value(data, pos, kind)
    return meta, b""


def _project(data: bytes, pos: int, last: int, keep: Keep) -> tuple[dict[int, Any], int]:
    """`_struct`, building only the fields `keep` names and walking over the others."""
    out: dict[int, Any] = {}
    while True:
        h = data[pos]
        pos += 1
        if h == 0:
            return out, pos
        kind = h & 0x0F
        if h > 0x0F:
            last += h >> 4
        else:
            last, pos = _field_id(data, pos)
        if last not in keep:
            if kind in (_I32, _I64):
                while data[pos] > 0x7F:
                    pos += 1
                pos += 1
            elif kind not in (_TRUE, _FALSE):
                pos = _skip(data, pos, kind)
            continue
        inner = keep[last]
        if kind in (_TRUE, _FALSE):  # the value is the header's type, whatever `keep` expects here
            out[last] = kind == _TRUE
        elif inner is None:
            if kind in (_I32, _I64):
                n = data[pos]
                pos += 1
                if n > 0x7F:
                    n, pos = _varint(data, pos - 1)
                out[last] = (n >> 1) ^ -(n & 1)
            elif kind == _STRUCT:
                out[last], pos = _struct(data, pos, 0)
            else:
                out[last], pos = _value(data, pos, kind)
        elif kind == _STRUCT:
            out[last], pos = _project(data, pos, 0, inner)
        elif kind == _LIST and data[pos] & 0x0F == _STRUCT:
            n = data[pos] >> 4
            pos += 1
            if n == 15:
                n, pos = _varint(data, pos)
            if n > len(data) - pos:
                raise ThriftError(f"a list of {n} items at byte {pos} runs past the footer")
            items = []
            for _ in range(n):
                item, pos = _project(data, pos, 0, inner)
                items.append(item)
            out[last] = items
        else:  # not the type parquet.thrift gives this field: kept as written, for the caller to refuse
            out[last], pos = _value(data, pos, kind)


def _skip(data: bytes, pos: int, kind: int) -> int:
    """The offset after one value of `kind` at `pos`, nothing built. Integers and strings inside
    structs and lists are stepped over inline: most of a footer is those."""
    if kind in (_I16, _I32, _I64):
        while data[pos] > 0x7F:
            pos += 1
        return pos + 1
    if kind == _BINARY:
        n = data[pos]
        pos += 1
        if n > 0x7F:
            n, pos = _varint(data, pos - 1)
        return pos + n
    if kind == _STRUCT:
        while True:
            h = data[pos]
            pos += 1
            if h == 0:
                return pos
            if h <= 0x0F:  # a long field id follows
                while data[pos] > 0x7F:
                    pos += 1
                pos += 1
            inner = h & 0x0F
            if inner in (_I16, _I32, _I64):
                while data[pos] > 0x7F:
                    pos += 1
                pos += 1
            elif inner not in (_TRUE, _FALSE):
                pos = _skip(data, pos, inner)
    if kind in (_LIST, _SET):
        h = data[pos]
        pos += 1
        n, inner = h >> 4, h & 0x0F
        if n == 15:
            n, pos = _varint(data, pos)
        if n > len(data) - pos:
            raise ThriftError(f"a list of {n} items at byte {pos} runs past the footer")
        if inner in (_I16, _I32, _I64):
            for _ in range(n):
                while data[pos] > 0x7F:
                    pos += 1
                pos += 1
        elif inner in (_TRUE, _FALSE, _BYTE):
            pos += n
        else:
            for _ in range(n):
                pos = _skip(data, pos, inner)
        return pos
    if kind in (_TRUE, _FALSE):
        return pos
    return _value(data, pos, kind)[1]


def _header(data: bytes, pos: int, last: int) -> tuple[int, int, int]:
    h = data[pos]
    if h > 0x0F:
        return last + (h >> 4), h & 0x0F, pos + 1
    field, pos = _field_id(data, pos + 1)
    return field, h & 0x0F, pos


def _field_id(data: bytes, pos: int) -> tuple[int, int]:
    """A long-form field id (a zigzag varint): Thrift field ids are i16."""
    n, pos = _varint(data, pos)
    field = (n >> 1) ^ -(n & 1)
    if not -32768 <= field <= 32767:
        raise ThriftError(f"a field id outside i16 at byte {pos}")
    return field, pos


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if result >> 64:
                raise ThriftError(f"a varint larger than 64 bits at byte {pos}")
            return result, pos
        shift += 7
        if shift > 63:
            raise ThriftError(f"a varint longer than 10 bytes at byte {pos}")


def _struct(data: bytes, pos: int, last: int) -> tuple[dict[int, Any], int]:
    """The fields of one struct from `pos` (after the field `last`, 0 at its start). The common
    types are inlined: this loop runs for every field of every footer."""
    out: dict[int, Any] = {}
    while True:
        h = data[pos]
        pos += 1
        if h == 0:
            return out, pos
        kind = h & 0x0F
        if h > 0x0F:
            last += h >> 4
        else:
            last, pos = _field_id(data, pos)
        if kind in (_I32, _I64):
            n = data[pos]
            pos += 1
            if n > 0x7F:
                n, pos = _varint(data, pos - 1)
            out[last] = (n >> 1) ^ -(n & 1)
        elif kind == _STRUCT:
            if data[pos] == 0:  # an empty struct (a union's member without fields)
                out[last] = {}
                pos += 1
            else:
                out[last], pos = _struct(data, pos, 0)
        elif kind == _BINARY:
            n = data[pos]
            pos += 1
            if n > 0x7F:
                n, pos = _varint(data, pos - 1)
            end = pos + n
            out[last] = data[pos:end]
            pos = end
        elif kind == _LIST:
            out[last], pos = _list(data, pos)
        elif kind in (_TRUE, _FALSE):
            out[last] = kind == _TRUE
        else:
            out[last], pos = _value(data, pos, kind)


def _list(data: bytes, pos: int) -> tuple[list[Any], int]:
    h = data[pos]
    pos += 1
    n, kind = h >> 4, h & 0x0F
    if n == 15:
        n, pos = _varint(data, pos)
    if n > len(data) - pos:  # every element takes at least one byte
        raise ThriftError(f"a list of {n} items at byte {pos} runs past the footer")
    out: list[Any] = []
    append = out.append
    if kind == _STRUCT:
        for _ in range(n):
            if data[pos] == 0:  # an empty struct (a union's member without fields)
                append({})
                pos += 1
            else:
                item, pos = _struct(data, pos, 0)
                append(item)
    elif kind in (_I32, _I64):
        for _ in range(n):
            v = data[pos]
            pos += 1
            if v > 0x7F:
                v, pos = _varint(data, pos - 1)
            append((v >> 1) ^ -(v & 1))
    elif kind == _BINARY:
        for _ in range(n):
            size = data[pos]
            pos += 1
            if size > 0x7F:
                size, pos = _varint(data, pos - 1)
            end = pos + size
            append(data[pos:end])
            pos = end
    else:
        for _ in range(n):
            value, pos = _value(data, pos, kind)
            append(value)
    return out, pos


def _value(data: bytes, pos: int, kind: int) -> tuple[Any, int]:
    """One value of any type outside a field header (list elements, map entries, rare fields)."""
    if kind in (_I16, _I32, _I64):
        n, pos = _varint(data, pos)
        return (n >> 1) ^ -(n & 1), pos
    if kind == _BINARY:
        n, pos = _varint(data, pos)
        return data[pos:pos + n], pos + n
    if kind == _STRUCT:
        return _struct(data, pos, 0)
    if kind in (_LIST, _SET):
        return _list(data, pos)
    if kind in (_TRUE, _FALSE):  # a boolean list element: one byte
        return data[pos] == _TRUE, pos + 1
    if kind == _BYTE:
        b = data[pos]
        return (b ^ 0x80) - 0x80, pos + 1
    if kind == _DOUBLE:
        if pos + 8 > len(data):
            raise IndexError
        return _DOUBLE_LE(data, pos)[0], pos + 8
    if kind == _MAP:
        n, pos = _varint(data, pos)
        if n > len(data) - pos:
            raise ThriftError(f"a map of {n} entries at byte {pos} runs past the footer")
        entries: list[tuple[Any, Any]] = []  # pairs: a key may be a struct, which is not hashable
        if n:
            kinds = data[pos]
            pos += 1
            for _ in range(n):
                k, pos = _value(data, pos, kinds >> 4)
                v, pos = _value(data, pos, kinds & 0x0F)
                entries.append((k, v))
        return entries, pos
    raise ThriftError(f"unknown compact type {kind} at byte {pos}")
