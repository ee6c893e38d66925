"""List a table directory the way Spark does, through pyarrow's filesystem layer.

Local paths and `s3://`, `gs://`, `abfs://`, `hdfs://` URIs go through the same code. The skip
rules are Spark's `HadoopFSUtils.shouldFilterOutPathName` (parquet-and-spark.md §2.8): a name
starting with `_` (unless it holds `=`, a partition directory) or `.`, or ending in `._COPYING_`,
is not data. `_metadata` / `_common_metadata` summary files are skipped here too and reported.
Everything skipped is reported with why, so nothing disappears silently.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol
from urllib.parse import unquote

import pyarrow as pa
from pyarrow import fs as pafs

from schemaguard.errors import UsageError, first_line

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
HADOOP_BYTES_PER_CHECKSUM = 512  # io.bytes.per.checksum default


class DiscoveryError(UsageError):
    """The table path itself cannot be listed (missing, not a table, unknown scheme)."""


@dataclass(frozen=True, slots=True)
class DataFile:
    path: str  # what the filesystem opens
    rel: str  # relative to the table root
    size: int
    mtime: float | None
    partition: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class Ignored:
    rel: str
    why: str


@dataclass(frozen=True, slots=True)
class Listing:
    root: str
    filesystem: pafs.FileSystem
    files: tuple[DataFile, ...]
    ignored: tuple[Ignored, ...]
    stale_checksums: tuple[Ignored, ...]  # data files whose Hadoop .crc sidecar does not match
    partition_columns: tuple[str, ...]
    is_local: bool


def resolve(location: str) -> tuple[pafs.FileSystem, str, bool]:
    """A filesystem and a path in it for a local path or a URI."""
    if "://" not in location:
        path = Path(location).expanduser().absolute()
        return pafs.LocalFileSystem(), str(path), True
    try:
        filesystem, path = pafs.FileSystem.from_uri(location)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise DiscoveryError(f"cannot open {location}: {first_line(e)}") from None
    return filesystem, path.rstrip("/"), isinstance(filesystem, pafs.LocalFileSystem)


def skip_reason(name: str) -> str | None:
    """Why Spark would not read a file or directory with this name, or None if it would."""
    if name in ("_metadata", "_common_metadata"):
        return "Parquet summary file (not data; Spark takes a schema from it before any data file)"
    if name == "_delta_log":
        return "Delta transaction log"
    if name == "_SUCCESS":
        return "job marker"
    if name.endswith(".crc") and name.startswith("."):
        return "Hadoop checksum sidecar"
    if name.startswith("_") and "=" not in name:
        return "name starts with '_' (Spark skips it)"
    if name.startswith("."):
        return "hidden: name starts with '.' (Spark skips it)"
    if name.endswith("._COPYING_"):
        return "copy in progress (._COPYING_)"
    return None


def spark_order_key(path: str) -> bytes:
    """Spark's order of listed files: Java `String` comparison of the path, i.e. UTF-16 code units
    (Python's code-point order differs beyond the BMP). Paths under one root sort the same whether
    whole or table-relative, and a directory still sorts before what it holds."""
    return path.encode("utf-16-be", "surrogatepass")


def partition_dir(partition: tuple[tuple[str, str | None], ...]) -> str:
    """The directory spelling of partition values (a null value is Hive's default partition)."""
    return "/".join(f"{k}={HIVE_NULL if v is None else v}" for k, v in partition)


def parse_partition(segment: str) -> tuple[str, str | None] | None:
    """`k=v` with Spark's URL escaping undone; the Hive default partition is a null value."""
    key, eq, value = segment.partition("=")
    if not eq or not key:
        return None
    decoded = unquote(value)
    return unquote(key), None if decoded == HIVE_NULL else decoded


def discover(location: str) -> Listing:
    filesystem, root, is_local = resolve(location)
    try:
        info = filesystem.get_file_info(root)
    except (pa.ArrowException, OSError) as e:
        raise DiscoveryError(f"cannot list {location}: {first_line(e)}") from None
    if info.type == pafs.FileType.NotFound:
        raise DiscoveryError(f"no such table path: {location}")
    if info.type == pafs.FileType.File:  # a single file is a table of one file
        one = DataFile(root, info.base_name, info.size or 0, _mtime(info), ())
        return Listing(root, filesystem, (one,), (), (), (), is_local)
    try:
        entries: Sequence[Entry] = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
        for entry in entries:
            entry.path  # noqa: B018  pyarrow decodes a name when asked: one that is not UTF-8 raises here
    except UnicodeDecodeError:
        if not is_local:
            raise DiscoveryError(f"cannot list {location}: a name in it is not valid UTF-8") from None
        entries = _walk_local(root)
    except (pa.ArrowException, OSError) as e:
        raise DiscoveryError(f"cannot list {location}: {first_line(e)}") from None
    return _classify(root, filesystem, entries, is_local)


class _LocalEntry(NamedTuple):
    """What `_classify` reads of a pyarrow FileInfo, for a listing pyarrow cannot make."""

    path: str  # undecodable bytes kept as surrogates (os functions open it, pyarrow cannot)
    type: pafs.FileType
    size: int | None
    mtime_ns: int | None


class Entry(Protocol):
    """What `_classify` reads of a listed entry: a pyarrow FileInfo, or a `_LocalEntry`."""

    @property
    def path(self) -> str: ...
    @property
    def type(self) -> pafs.FileType: ...
    @property
    def size(self) -> int | None: ...
    @property
    def mtime_ns(self) -> int | None: ...


def _walk_local(root: str) -> list[_LocalEntry]:
    """A local listing by `os.walk` that survives names which are not UTF-8."""
    found: list[_LocalEntry] = []
    for folder, dirs, files in os.walk(root):
        found += [_LocalEntry(os.path.join(folder, d), pafs.FileType.Directory, None, None) for d in dirs]
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue  # vanished between the two calls: not listed, as pyarrow would not list it
            kind = pafs.FileType.File if stat.S_ISREG(st.st_mode) else pafs.FileType.Unknown
            found.append(_LocalEntry(path, kind, st.st_size, st.st_mtime_ns))
    return found


@dataclass(frozen=True, slots=True)
class _Dir:
    """What a directory path says about every file in it (computed once per directory)."""

    skipped: bool  # it or a parent is skipped (and reported once, as the topmost one)
    partition: tuple[tuple[str, str | None], ...]


def _classify(root: str, filesystem: pafs.FileSystem, entries: Sequence[Entry], is_local: bool) -> Listing:
    prefix = root.rstrip("/") + "/"
    files: list[DataFile] = []
    ignored: list[Ignored] = []
    checksums: dict[str, int] = {}
    dirs: dict[str, _Dir] = {"": _Dir(False, ())}
    cut = len(prefix)
    for e in sorted(entries, key=lambda e: spark_order_key(e.path)):  # a directory before what it holds
        path = e.path
        rel = path[cut:] if path.startswith(prefix) else path
        if not rel.isascii():
            rel = shown_name(rel)
        parent, _, name = rel.rpartition("/")
        where = dirs.get(parent) or _dir(parent, dirs, ignored)
        if where.skipped:
            continue  # inside a directory already reported as skipped
        reason = skip_reason(name)
        if e.type == pafs.FileType.Unknown:
            ignored.append(Ignored(rel, "not a regular file (a FIFO, socket or device): not data"))
            continue
        if e.type == pafs.FileType.Directory:
            dirs[rel] = _Dir(reason is not None, where.partition + _partition_of(name))
            if reason:
                ignored.append(Ignored(rel + "/", reason))
            continue
        if reason:
            if reason == "Hadoop checksum sidecar":
                checksums[_sidecar_target(rel)] = e.size or 0
            ignored.append(Ignored(rel, reason))
            continue
        files.append(DataFile(path, rel, e.size or 0, _mtime(e), where.partition))
    # Spark sorts leaves by path ("the first file" means this order); entries came sorted that way.
    stale = tuple(
        Ignored(f.rel, "stale .crc sidecar: Hadoop's checksum layer will fail reading this file")
        for f in files
        if f.rel in checksums and checksums[f.rel] != crc_size(f.size)
    )
    ignored.sort(key=lambda i: i.rel)
    columns = dict.fromkeys(k for d in dirs.values() if not d.skipped for k, _ in d.partition)
    return Listing(root, filesystem, tuple(files), tuple(ignored), stale, tuple(columns), is_local)


def not_utf8(path: str) -> bool:
    """A path listed from bytes that are not UTF-8 (kept as surrogates by `os`)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def shown_name(path: str) -> str:
    """A path as it can be shown and written to JSON: bytes that are not UTF-8 (kept as
    surrogates by `os`) spelled `\\xNN`."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _dir(rel: str, dirs: dict[str, _Dir], ignored: list[Ignored]) -> _Dir:
    """A directory the listing did not return as an entry of its own (object stores list only
    files): derived from its parent, and reported if it is the topmost skipped one."""
    parent, _, name = rel.rpartition("/")
    above = dirs.get(parent) or _dir(parent, dirs, ignored)
    reason = None if above.skipped else skip_reason(name)
    if reason:
        ignored.append(Ignored(rel + "/", reason))
    found = dirs[rel] = _Dir(above.skipped or reason is not None, above.partition + _partition_of(name))
    return found


def _partition_of(name: str) -> tuple[tuple[str, str | None], ...]:
    kv = parse_partition(name)
    return (kv,) if kv else ()


def _sidecar_target(rel: str) -> str:
    head, _, name = rel.rpartition("/")
    target = name[1:-len(".crc")]
    return f"{head}/{target}" if head else target


def crc_size(data_size: int) -> int:
    """Size of a Hadoop ChecksumFileSystem sidecar for a file of `data_size` bytes:
    an 8-byte header ('crc\\0' + bytesPerChecksum) and one CRC32 per 512-byte chunk."""
    return 8 + 4 * math.ceil(data_size / HADOOP_BYTES_PER_CHECKSUM)


def _mtime(info: Entry) -> float | None:
    return info.mtime_ns / 1e9 if info.mtime_ns is not None else None
