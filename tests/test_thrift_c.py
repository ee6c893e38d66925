"""The compiled footer decoder (formats/_thrift.c) against the Python one (formats/thrift.py): on
real footers, hand-built ones and mutated ones, both give the same values (compared by repr, so a
bool is not an int and every float is exact) or both refuse the bytes with ThriftError."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemaguard.formats import thrift
from schemaguard.formats.parquet.reader import SCANNED
from schemaguard.formats.thrift import Keep, ThriftError, decode_file_metadata, decode_struct
from tests.handmade_footers import (
    BYTE_ARRAY,
    FIXED,
    INT32,
    OPTIONAL,
    chunk,
    element,
    encode_struct,
    file_metadata,
    logical,
    row_group,
    stats,
)
from tests.test_fuzz_footer import SAMPLES, mutated

KEEPS: list[Keep] = [SCANNED, {}, {4: {1: None}}, {4: {1: {3: None}}, 5: None, 1: None, 2: None}]


def footer(data: bytes) -> bytes:
    """The serialized FileMetaData of a whole Parquet file."""
    length = int.from_bytes(data[-8:-4], "little")
    return data[len(data) - 8 - length:-8]


def outcome(decode: Any, *args: Any, **kwargs: Any) -> str:
    try:
        return repr(decode(*args, **kwargs))
    except ThriftError:
        return "ThriftError"


def both_agree(data: bytes) -> None:
    for keep in KEEPS:
        for known in ([], [footer_schema(data)]):
            c = outcome(decode_file_metadata, data, known, keep, compiled=True)
            assert c == outcome(decode_file_metadata, data, known, keep, compiled=False), (keep, known)
    for pos in (0, 1, len(data) // 2):
        assert outcome(decode_struct, data, pos, compiled=True) == outcome(
            decode_struct, data, pos, compiled=False)


def footer_schema(data: bytes) -> bytes:
    try:
        return decode_file_metadata(data, [], {}, compiled=False)[1]
    except ThriftError:
        return b"\x19\x0c\x00"


def test_the_compiled_decoder_was_built_and_is_used_unless_switched_off() -> None:
    # `make test` runs where `pip install` compiled it; the fallback is for machines without a compiler.
    # `make test-python-decoder` sets the switch: then every footer goes through the Python decoder.
    assert thrift.BUILT_FROM, "formats/_thrift.c was not built: is a C compiler installed?"
    assert thrift.COMPILED is not bool(os.environ.get(thrift.PYTHON_DECODER_SWITCH))
    # `make sanitize` names the build it made: these tests must be running on it.
    assert os.environ.get("SCHEMAGUARD_SANITIZED", thrift.BUILT_FROM) == thrift.BUILT_FROM


@pytest.mark.parametrize("index", range(len(SAMPLES)))
def test_real_footers_decode_alike(index: int) -> None:
    data = footer(SAMPLES[index])
    both_agree(data)
    assert decode_file_metadata(data, [], SCANNED, compiled=True)[0][3] == 3 - index  # num_rows


def one_leaf(name: bytes, physical: int, **kw: Any) -> bytes:
    """A FileMetaData of one top-level leaf, with statistics and key-value metadata."""
    leaf = element(name, type=physical, repetition=OPTIONAL, **kw)
    text = name.decode("utf-8", "replace")
    group = row_group([chunk([text], physical, values=3, statistics=stats(
        null_count=1, min_value=b"\x01\x00", max_value=b"\x09\x00", min_exact=True, max_exact=False))], 3)
    return encode_struct(file_metadata([element("schema", children=1), leaf], [group], 3, kv={"k": "v"}))


HANDMADE = {
    "float16": one_leaf(b"h", FIXED, type_length=2, logical=logical(15)),
    "future logical member": one_leaf(b"x", INT32, logical=logical(99, {1: b"?"})),
    "non-utf8 name": one_leaf(b"n\xff\xfe", BYTE_ARRAY),
    "long name": one_leaf(b"c" * 300, BYTE_ARRAY),
    "field id": one_leaf(b"i", INT32, field_id=2**31 - 1),
}


@pytest.mark.parametrize("name", sorted(HANDMADE))
def test_hand_built_footers_decode_alike(name: str) -> None:
    both_agree(HANDMADE[name])


# Values of every compact type, including those no footer holds (double, byte, map, set, bool list)
# and long-form field ids: a struct of field 1 (i8 -3), field 300 (double 1.5), a map<i32,binary>,
# a set<bool>, and a list<list<i64>>.
EVERY_TYPE = bytes([
    0x13, 0xFD,  # field 1, byte -3
    0x07, 0xD8, 0x04, *b"\x00\x00\x00\x00\x00\x00\xf8\x3f",  # long form: field 300, double 1.5
    0x1B, 0x02, 0x58, 0x02, 0x01, 0x61, 0x04, 0x01, 0x62,  # field 301, map {1: b"a", 2: b"b"}
    0x1A, 0x31, 0x01, 0x02, 0x01,  # field 302, set<bool> [True, False, True]
    0x19, 0x29, 0x36, 0x02, 0x04, 0x06, 0x16, 0x08,  # field 303, list<list<i64>> [[1, 2, 3], [4]]
    0x00,
])


def test_every_compact_type_decodes_alike() -> None:
    c = decode_struct(EVERY_TYPE, compiled=True)
    assert c == decode_struct(EVERY_TYPE, compiled=False)
    assert repr(c) == repr(({1: -3, 300: 1.5, 301: [(1, b"a"), (2, b"b")], 302: [True, False, True],
                            303: [[1, 2, 3], [4]]}, len(EVERY_TYPE)))


@pytest.mark.parametrize("data", [
    b"",  # nothing
    b"\x15",  # a field header and no value
    b"\x18\x05ab",  # a string longer than the bytes
    b"\x19\xfc\x0b" + b"\x00" * 4,  # a list claiming more items than bytes
    b"\x16" + b"\xff" * 10 + b"\x01",  # a varint longer than 10 bytes
    b"\x16" + b"\xff" * 9 + b"\x02",  # a varint beyond 64 bits
    b"\x05\x80\x80\x04\x02\x00",  # a long-form field id outside i16
    b"\x1d\x00",  # compact type 13: unknown
    b"\x1c" * 2000,  # structs nested beyond any footer
])
def test_malformed_bytes_are_refused_by_both(data: bytes) -> None:
    for compiled in (True, False):
        with pytest.raises(ThriftError):
            decode_struct(data, compiled=compiled)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.integers(0, 3))
def test_mutated_footers_decode_alike(data: bytes, cut: int) -> None:
    length = int.from_bytes(data[-8:-4], "little")
    both_agree(data[max(0, len(data) - 8 - length):len(data) - 8 + cut])


def test_a_boolean_where_a_kept_struct_belongs_is_read_from_its_header() -> None:
    """A boolean's value is its field header's type; the Python decoder once read one more byte
    when `keep` expected a struct there (found by the mutated-footer comparison above)."""
    data = encode_struct({2: [{4: b"s"}], 4: [{1: [{3: True, 8: {1: b"k"}}]}]})
    for compiled in (True, False):
        meta, _ = decode_file_metadata(data, [], SCANNED, compiled=compiled)
        assert meta[4] == [{1: [{3: True, 8: {1: b"k"}}]}]
