"""Spark event logs' compression codecs, decoded from their bytes as the Java libraries Spark
writes them with frame them (`spark.eventLog.compression.codec`): lz4 (lz4-java's
LZ4BlockOutputStream), snappy (snappy-java's SnappyOutputStream), lzf (compress-lzf's chunks) and
zstd; the raw blocks are decompressed by pyarrow, LZF by the short algorithm below. Streamed: one
block in memory at a time."""

from __future__ import annotations

import contextlib
import io
import os
import struct
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from schemaguard.errors import UsageError

READ_SIZE = 1 << 16
LZ4_HEADER = struct.Struct("<8sBiii")  # magic, token, compressed length, length, checksum
LZ4_RAW, LZ4_BLOCK = 0x10, 0x20  # a token's method: the block stored, or lz4-compressed
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
SNAPPY_HEADER = 16  # the magic, then the version and the compatible version (int32s)
SNAPPY_RATIO = 22  # a snappy element of 3 bytes writes at most 64: no block expands more


class _Corrupt(Exception):
    """A compressed log's bytes are not its codec's stream; the message says where it broke."""


class _Truncated(_Corrupt):
    """A compressed log ends inside a block (lz4: before its end mark), as a log being written may."""


def codec_of(path: Path) -> str | None:
    """The codec a Spark event log is compressed with: its name's last suffix, as Spark names it
    (`EventLogFileWriter.codecName`: `.inprogress` and a compacted log's `.compact` aside)."""
    name = path.name.lower().removesuffix(".inprogress").removesuffix(".compact")
    suffix = name.rpartition(".")[2] if "." in name else ""
    return "zstd" if suffix == "zst" else suffix if suffix in _DECODERS else None


def decoded(raw: BinaryIO, codec: str, what: str, live: bool) -> io.RawIOBase:
    """The decoded bytes of a compressed log opened as `raw`; errors name it as `what`."""
    return _Decoded(_blocks(raw, codec, what, live))


def _blocks(raw: BinaryIO, codec: str, what: str, live: bool) -> Generator[bytes, None, None]:
    """The decoded blocks of a compressed log. A log cut inside a block, or whose bytes break its
    codec, is a usage error, except the end of a log Spark still writes (`live`): it ends with
    its last whole block, as Spark's own reader of a running application's log does."""
    with raw:
        try:
            yield from _DECODERS[codec](raw)
        except _Corrupt as e:
            if not (live and isinstance(e, _Truncated)):
                raise UsageError(f"{what}: not a valid {codec} stream ({e})") from None
        except OSError as e:
            raise UsageError(f"{what}: {e.strerror or e}") from None


class _Decoded(io.RawIOBase):
    """Decoded blocks as a byte stream: one block in memory at a time."""

    def __init__(self, blocks: Generator[bytes, None, None]) -> None:
        super().__init__()
        self._blocks = blocks
        self._block = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._block:
            block = next(self._blocks, None)
            if block is None:
                return 0
            self._block = memoryview(block)
        size = min(len(buffer), len(self._block))
        buffer[:size] = self._block[:size]
        self._block = self._block[size:]
        return size

    def close(self) -> None:
        self._blocks.close()  # the generator closes the file
        super().close()


def _read(raw: BinaryIO, size: int, may_end: bool = False) -> bytes:
    """The next `size` bytes; b"" at the end of the file where a block may end (`may_end`)."""
    data = raw.read(size)
    if len(data) == size or (may_end and not data):
        return data
    raise _Truncated("it ends inside a block")


def _lz4(raw: BinaryIO) -> Iterator[bytes]:
    """lz4-java's LZ4BlockOutputStream (Spark's lz4 codec): per block "LZ4Block", a token (the
    method, 0x10 stored or 0x20 lz4, plus log2(block size) - 10), then the compressed length, the
    length and an XXHash32 checksum (little-endian int32s), then the block. An empty block ends a
    stream; another may follow (Spark reads them so). The checksum is not checked: a block that
    decodes to exactly its length is taken, as the JSON read from it is checked line by line."""
    ended = True  # at the start or after an end mark, where a file may end
    while header := _read(raw, LZ4_HEADER.size, may_end=True):
        magic, token, size, length, _ = LZ4_HEADER.unpack(header)
        method = token & 0xF0
        if magic != b"LZ4Block" or method not in (LZ4_RAW, LZ4_BLOCK) or size < 0 \
                or not 0 <= length <= 1 << (10 + (token & 0xF)) \
                or (size == 0) != (length == 0) or (method == LZ4_RAW and size != length):
            raise _Corrupt(f"a bad block header at byte {raw.tell() - LZ4_HEADER.size}")
        ended = length == 0
        if length:
            block = _read(raw, size)
            yield block if method == LZ4_RAW else _lz4_block(block, length)
    if not ended:
        raise _Truncated("it ends without lz4-java's end mark")


def _lz4_block(block: bytes, length: int) -> bytes:
    """An lz4 block that decodes to exactly `length` bytes. pyarrow returns the size asked for,
    padding a shorter block with zeros; so the block must also not fit in one byte less."""
    data = _decompress(block, "lz4_raw", length)
    try:
        _decompress(block, "lz4_raw", length - 1)
    except _Corrupt:
        return data
    raise _Corrupt(f"a block shorter than its {length} bytes")


def _snappy(raw: BinaryIO) -> Iterator[bytes]:
    """snappy-java's SnappyOutputStream (Spark's snappy codec): a header (the magic
    "\\x82SNAPPY\\0", a version and a compatible version), then blocks, each a big-endian int32
    length and a raw snappy block. A header again starts another stream (an int32 from the
    magic's first bytes is negative, never a length), as snappy-java reads them."""
    header = _read(raw, SNAPPY_HEADER, may_end=True)
    while header:
        if header[:8] != SNAPPY_MAGIC:
            raise _Corrupt(f"no snappy-java header at byte {raw.tell() - len(header)}")
        while (prefix := _read(raw, 4, may_end=True)) and prefix != SNAPPY_MAGIC[:4]:
            (size,) = struct.unpack(">i", prefix)
            if size < 0:
                raise _Corrupt(f"a negative block length at byte {raw.tell() - 4}")
            yield _snappy_block(_read(raw, size))
        header = prefix + _read(raw, SNAPPY_HEADER - 4) if prefix else b""


def _snappy_block(block: bytes) -> bytes:
    """A raw snappy block: its length as a varint, then its elements."""
    length = shift = 0
    for byte in block[:5]:
        length |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    else:
        raise _Corrupt("a bad snappy block length")
    if length > SNAPPY_RATIO * len(block):
        raise _Corrupt(f"a snappy block of {len(block)} bytes cannot hold {length}")
    return _decompress(block, "snappy", length)


def _lzf(raw: BinaryIO) -> Iterator[bytes]:
    """compress-lzf's LZFOutputStream (Spark's lzf codec): chunks of "ZV", a type (0 stored, 1
    compressed), big-endian uint16 lengths (stored: its length; compressed: its compressed, then
    its original length), then the chunk."""
    while head := _read(raw, 5, may_end=True):
        if head[:2] != b"ZV" or head[2] > 1:
            raise _Corrupt(f"a bad chunk header at byte {raw.tell() - 5}")
        size = int.from_bytes(head[3:5], "big")
        if head[2] == 0:
            yield _read(raw, size)
        else:
            chunk = _read(raw, 2 + size)
            yield _unlzf(chunk[2:], int.from_bytes(chunk[:2], "big"))


def _unlzf(data: bytes, length: int) -> bytes:
    """LZF (liblzf's format): a control byte under 32 is a run of itself + 1 literal bytes; above,
    a back reference of (control >> 5) + 2 bytes (7 meaning: plus the next byte) at a distance of
    ((control & 31) << 8 | the next byte) + 1 back in the output, which may overlap what it writes."""
    out = bytearray()
    at, end = 0, len(data)
    try:
        while at < end:
            control = data[at]
            at += 1
            if control < 32:
                out += data[at:at + control + 1]
                at += control + 1
                continue
            size = control >> 5
            if size == 7:
                size += data[at]
                at += 1
            start = len(out) - ((control & 31) << 8 | data[at]) - 1
            at += 1
            if start < 0:
                raise _Corrupt("a back reference before the chunk's start")
            copy = out[start:start + size + 2]
            while len(copy) < size + 2:  # an overlapping reference repeats what it copies
                copy += copy[:size + 2 - len(copy)]
            out += copy
    except IndexError:
        raise _Corrupt("a chunk that ends inside an element") from None
    if at != end or len(out) != length:
        raise _Corrupt(f"a chunk of {len(out)} bytes where its header says {length}")
    return bytes(out)


def _zstd(raw: BinaryIO) -> Iterator[bytes]:
    """zstd frames (Spark's default codec), through pyarrow's stream. pyarrow tells a cut frame
    from a corrupt one by message only, so an error once every byte is read is taken as the cut;
    and it drops what the read that breaks off decoded, so that tail is decoded again."""
    done = 0
    try:
        for block in _zstd_reads(raw, READ_SIZE):
            done += len(block)
            yield block
    except OSError as e:
        if raw.tell() < os.fstat(raw.fileno()).st_size:
            raise _Corrupt(str(e)) from None
        raw.seek(0)
        yield _zstd_tail(raw, done)
        raise _Truncated(str(e)) from None


def _zstd_reads(raw: BinaryIO, size: int) -> Iterator[bytes]:
    import pyarrow as pa  # here: only compressed event logs need it

    stream = pa.input_stream(raw, compression="zstd")
    while block := stream.read(size):
        yield block


def _zstd_tail(raw: BinaryIO, skip: int) -> bytes:
    """What a cut zstd stream decodes to past its first `skip` bytes, read a byte at a time (a
    read that breaks off returns nothing)."""
    import pyarrow as pa  # here: only compressed event logs need it

    stream = pa.input_stream(raw, compression="zstd")
    while skip > 0 and (block := stream.read(min(skip, READ_SIZE))):
        skip -= len(block)
    tail = bytearray()
    with contextlib.suppress(OSError):  # the cut
        while byte := stream.read(1):
            tail += byte
    return bytes(tail)


def _decompress(block: bytes, codec: str, length: int) -> bytes:
    import pyarrow as pa  # here: only compressed event logs need it

    try:
        return bytes(pa.decompress(block, decompressed_size=length, codec=codec))
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise _Corrupt(str(e)) from None


_DECODERS: dict[str, Callable[[BinaryIO], Iterator[bytes]]] = {
    "lz4": _lz4, "lzf": _lzf, "snappy": _snappy, "zstd": _zstd}
