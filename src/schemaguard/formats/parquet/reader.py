"""One Parquet file's footer read from its own bytes into a `FileFooter` (`read_footer`).

The file's tail is read once (as parquet-cpp does: the last 64 KiB, or the whole footer when it
is longer), from a local file or through a pyarrow filesystem; a file that is not plain Parquet
is named from its magic bytes (encrypted footer, appended bytes, truncated write). Its
`FileMetaData` is decoded by `formats/thrift.py`, keeping only the parts a scan uses (`SCANNED`).

The top of `formats/parquet/`: it imports the other modules of the package (the schema part from
`schema.py`, statistics from `stats.py`) and `formats.thrift`; `lake/scan.py` calls it per file,
in worker processes too. pyarrow is named for typing only: it must not import pyarrow, pyspark or
any engine, and it never parses the schema list itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from schemaguard.errors import first_line
from schemaguard.formats.parquet.footer import FileFooter, UnreadableFile, corrupt, per_process, text
from schemaguard.formats.parquet.schema import RECENT, known_footer
from schemaguard.formats.parquet.stats import statistics
from schemaguard.formats.thrift import Keep, ThriftError, decode_file_metadata, decode_struct

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"
MAGIC = b"PAR1"
ENCRYPTED_MAGIC = b"PARE"
TAIL_BYTES = 64 * 1024  # read at once from the end of a file: parquet-cpp's default footer_read_size
MAX_FOOTER_BYTES = 256 * 2**20  # a footer claiming more is corrupt: refused before allocating
ENCRYPTION_ALGORITHMS = {1: "AES_GCM_V1", 2: "AES_GCM_CTR_V1"}

if TYPE_CHECKING:
    from pyarrow import fs as pafs


def read_footer(
    path: str,
    *,
    rel: str | None = None,
    filesystem: pafs.FileSystem | None = None,
    size: int | None = None,
    mtime: float | None = None,
    partition: tuple[tuple[str, str | None], ...] = (),
) -> FileFooter:
    """Read one file's footer. Raises `UnreadableFile` with a reason a person understands."""
    if size == 0:
        raise UnreadableFile("zero-byte file (an unfinished or failed write)")
    actual, data = _local_footer(path) if filesystem is None else _remote_footer(path, filesystem)
    try:
        meta, raw_schema = decode_file_metadata(data, RECENT, SCANNED)
        kv = _key_values(meta.get(5))
        footer = known_footer(raw_schema, meta[2], kv.get(SPARK_SCHEMA_KEY))
        rows = meta.get(3)
        if not isinstance(rows, int) or rows < 0:
            raise corrupt(f"the file claims {rows} rows")
        groups = meta.get(4)
        if not isinstance(groups, list):
            raise corrupt("no row group list")
        stats, encrypted = statistics(groups, footer)
    except ThriftError as e:
        raise corrupt(str(e)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        # A field of the wrong Thrift type where the parse expects another: the footer is corrupt.
        raise corrupt(f"{type(e).__name__}: {first_line(e)}") from None
    created_by = meta.get(6)
    return FileFooter(  # positional: this runs once per file, keywords cost measurably
        path,
        path if rel is None else rel,
        partition,
        actual,
        mtime,
        rows,
        len(groups),
        text(created_by) if isinstance(created_by, bytes) else None,
        footer,
        stats,
        _kv_keys(tuple(kv)),
        encrypted,
    )


# The parts of a footer a scan uses (parquet.thrift field ids), built; everything else is walked
# over: FileMetaData 3 num_rows, 4 row_groups, 5 key_value_metadata, 6 created_by; RowGroup
# 1 columns, 3 num_rows; ColumnChunk 3 meta_data, 8 crypto_metadata, 9 encrypted_column_metadata;
# ColumnMetaData 5 num_values, 12 statistics.
SCANNED: Keep = {3: None, 4: {1: {3: {5: None, 12: None}, 8: None, 9: None}, 3: None}, 5: None, 6: None}

_KV_KEYS: dict[tuple[bytes, ...], tuple[str, ...]] = per_process({})


def _kv_keys(raw: tuple[bytes, ...]) -> tuple[str, ...]:
    """Key-value metadata keys as text, decoded once per distinct set of keys."""
    found = _KV_KEYS.get(raw)
    if found is None:
        found = _KV_KEYS[raw] = tuple(k.decode("utf-8", "replace") for k in raw)
    return found


def _key_values(raw: Any) -> dict[bytes, bytes | None]:
    """`key_value_metadata`: a list of KeyValue {1: key, 2: value}."""
    if raw is None:
        return {}
    if not isinstance(raw, list) or not all(isinstance(kv, dict) and isinstance(kv.get(1), bytes)
                                            for kv in raw):
        raise corrupt("malformed key-value metadata")
    return {kv[1]: kv.get(2) if isinstance(kv.get(2), bytes) else None for kv in raw}


def _local_footer(path: str) -> tuple[int, bytes]:
    """A local file's size and footer bytes. Opened non-blocking and checked with fstat: opening
    a FIFO that took a listed file's place would otherwise block forever. Names that are not UTF-8
    arrive as surrogate-escaped text, which `os` opens as the original bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UnreadableFile("vanished: listed, but gone when its footer was read") from None
    except PermissionError:
        raise UnreadableFile("cannot be opened: permission denied") from None
    except OSError as e:
        raise UnreadableFile(f"cannot be opened: {e.strerror or first_line(e)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile("not a regular file (a FIFO, socket or device took its place)")
        return st.st_size, _footer_bytes(st.st_size, lambda n, at: os.pread(fd, n, at))
    except OSError as e:
        raise UnreadableFile(f"cannot be read: {e.strerror or first_line(e)}") from None
    finally:
        os.close(fd)


def _remote_footer(path: str, filesystem: pafs.FileSystem) -> tuple[int, bytes]:
    try:
        with filesystem.open_input_file(path) as f:
            size = f.size()
            return size, _footer_bytes(size, lambda n, at: bytes(f.read_at(n, at)))
    except FileNotFoundError:
        raise UnreadableFile("vanished: listed, but gone when its footer was read") from None
    except PermissionError:
        raise UnreadableFile("cannot be opened: permission denied") from None
    except OSError as e:
        raise UnreadableFile(f"cannot be read: {first_line(e)}") from None


def _footer_bytes(size: int, read_at: Callable[[int, int], bytes]) -> bytes:
    """The serialized FileMetaData: the tail read once, its claimed length checked against the
    file and a cap before anything larger is read; files that are not plain Parquet named."""
    if size == 0:
        raise UnreadableFile("zero-byte file (an unfinished or failed write)")
    if size < 12:
        raise UnreadableFile(f"too small to be Parquet ({size} bytes)")
    n = min(size, TAIL_BYTES)
    tail = read_at(n, size - n)
    if len(tail) < n:
        raise UnreadableFile("truncated while being read (the file shrank)")
    if tail[-4:] != MAGIC:
        # The head magic is not evidence of a footer: look for PAR1 only after it.
        raise UnreadableFile(_not_parquet(tail[4:] if n == size else tail, read_at(4, 0)))
    length = int.from_bytes(tail[-8:-4], "little")
    if not 0 < length <= size - 12 or length > MAX_FOOTER_BYTES:
        raise corrupt(f"a footer length of {length} bytes in a file of {size}")
    if length + 8 <= n:
        return tail[n - 8 - length:n - 8]
    return read_at(length, size - 8 - length)


def _not_parquet(tail: bytes, head: bytes) -> str:
    """Why a file that does not end in PAR1 is no plain Parquet file, from its magic bytes."""
    if tail[-4:] == ENCRYPTED_MAGIC:
        return f"encrypted footer (PARE{_algorithm(tail)}): cannot be read without its key"
    if head != MAGIC:
        return "not a Parquet file (no PAR1 magic at head or tail)"
    if MAGIC in tail:
        return "bytes appended after the footer: the file does not end in PAR1"
    return "truncated: starts as Parquet but has no footer (the write did not finish)"


def _algorithm(tail: bytes) -> str:
    """`, AES_GCM_V1` from an encrypted footer's plaintext FileCryptoMetaData, when readable."""
    length = int.from_bytes(tail[-8:-4], "little")
    if not 0 < length <= len(tail) - 8:
        return ""
    try:
        crypto, _ = decode_struct(tail, len(tail) - 8 - length)
    except ThriftError:
        return ""
    member = next(iter(crypto.get(1) or {}), None) if isinstance(crypto.get(1), dict) else None
    return f", {ENCRYPTION_ALGORITHMS.get(member, f'algorithm {member}')}" if member else ""
