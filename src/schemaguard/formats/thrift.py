"""Parquet footer bytes decoded with the Thrift compact protocol, as `parquet.thrift` defines them.

Only what the model needs from the bytes themselves is decoded: the file's `SchemaElement` list
(names as written, repetition, converted types, field ids, which `LogicalType` union member,
child counts). Decoding stops after the schema, the second field of `FileMetaData`, so the row
groups of a large footer are never walked here. Every failure is `ThriftError` with the offset.

Compact protocol (Apache Thrift, `doc/specs/thrift-compact-protocol.md`): a field header byte
holds the field-id delta (high nibble; 0 means a zigzag varint id follows) and the type (low
nibble); integers are zigzag varints; binary is a varint length and the bytes; a list header
holds the size (high nibble, 15 means a varint size follows) and the element type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Compact protocol type ids.
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
MAX_DEPTH = 64  # nesting a real footer never reaches; deeper input is a corrupt footer, not a crash

# parquet.thrift `LogicalType` union members, by field id.
LOGICAL_TYPES = {
    1: "STRING", 2: "MAP", 3: "LIST", 4: "ENUM", 5: "DECIMAL", 6: "DATE", 7: "TIME", 8: "TIMESTAMP",
    10: "INTEGER", 11: "UNKNOWN", 12: "JSON", 13: "BSON", 14: "UUID", 15: "FLOAT16", 16: "VARIANT",
    17: "GEOMETRY", 18: "GEOGRAPHY",
}
# parquet.thrift `ConvertedType` values that annotate groups.
CONVERTED_MAP, CONVERTED_MAP_KEY_VALUE, CONVERTED_LIST = 1, 2, 3
REPETITIONS = {0: "REQUIRED", 1: "OPTIONAL", 2: "REPEATED"}


class ThriftError(ValueError):
    """Bytes that are not a valid compact-protocol footer; the message says where."""


@dataclass(frozen=True, slots=True)
class SchemaElement:
    """One node of the footer's schema list, as written."""

    name: bytes
    repetition: str | None  # REQUIRED, OPTIONAL, REPEATED; None for the root
    num_children: int | None  # None for a leaf
    converted_type: int | None
    field_id: int | None
    logical_type: str | None  # the LogicalType member's name, `FIELD_<id>` for one this code does not know


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0
        self.last_span = (0, 0)

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ThriftError(f"footer ends early at byte {self.pos}")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ThriftError(f"varint too long at byte {self.pos}")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def binary(self) -> bytes:
        n = self.varint()
        if n > len(self.data) - self.pos:
            raise ThriftError(f"a string of {n} bytes at byte {self.pos} runs past the footer")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def value(self, kind: int, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ThriftError(f"nested deeper than {MAX_DEPTH} at byte {self.pos}")
        if kind in (_TRUE, _FALSE):
            return kind == _TRUE
        if kind == _BYTE:
            return self.byte()
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            self.pos += 8
            return None  # no double is read from a footer here
        if kind == _BINARY:
            return self.binary()
        if kind in (_LIST, _SET):
            return self.items(depth)
        if kind == _MAP:
            n = self.varint()
            if n == 0:
                return {}
            kinds = self.byte()
            return {self.value(kinds >> 4, depth + 1): self.value(kinds & 0x0F, depth + 1) for _ in range(n)}
        if kind == _STRUCT:
            return self.fields(depth + 1)
        raise ThriftError(f"unknown compact type {kind} at byte {self.pos}")

    def items(self, depth: int) -> list[Any]:
        header = self.byte()
        n, kind = header >> 4, header & 0x0F
        if n == 15:
            n = self.varint()
        if n > len(self.data) - self.pos:
            raise ThriftError(f"a list of {n} items at byte {self.pos} runs past the footer")
        if kind in (_TRUE, _FALSE):  # booleans in a list are one byte each
            return [self.byte() == 1 for _ in range(n)]
        return [self.value(kind, depth + 1) for _ in range(n)]

    def fields(self, depth: int, until: int | None = None) -> dict[int, Any]:
        """A struct's fields by id; with `until`, stop once that field has been read (its bytes
        are then `self.last_span`)."""
        out: dict[int, Any] = {}
        last = 0
        while True:
            header = self.byte()
            if header == 0:
                return out
            delta, kind = header >> 4, header & 0x0F
            last = last + delta if delta else self.zigzag()
            start = self.pos
            out[last] = self.value(kind, depth)
            if until is not None and last >= until:
                self.last_span = (start, self.pos)
                return out


def schema_elements(footer: bytes) -> tuple[list[SchemaElement], bytes]:
    """The `SchemaElement` list of a serialized `FileMetaData` (the footer, without its length and
    magic), in the file's depth-first order, and the bytes it was decoded from (equal bytes are
    an equal schema: they key the cache of parsed schemas)."""
    reader = _Reader(footer)
    meta = reader.fields(0, until=2)
    raw = meta.get(2)
    if not isinstance(raw, list) or not raw:
        raise ThriftError("the footer holds no schema")
    start, end = reader.last_span
    return [_element(e, i) for i, e in enumerate(raw)], footer[start:end]


def _element(e: Any, index: int) -> SchemaElement:
    if not isinstance(e, dict) or not isinstance(e.get(4), bytes):
        raise ThriftError(f"schema element {index} has no name")
    raw_logical = e.get(10)
    logical: dict[int, Any] = raw_logical if isinstance(raw_logical, dict) else {}
    member: int | None = next(iter(logical), None)
    return SchemaElement(
        name=e[4],
        repetition=REPETITIONS.get(e[3]) if isinstance(e.get(3), int) else None,
        num_children=e.get(5) if isinstance(e.get(5), int) else None,
        converted_type=e.get(6) if isinstance(e.get(6), int) else None,
        field_id=e.get(9) if isinstance(e.get(9), int) else None,
        logical_type=None if member is None else LOGICAL_TYPES.get(member, f"FIELD_{member}"),
    )
