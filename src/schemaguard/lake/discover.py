"""List a table directory the way Spark does.

A local directory is walked with `os.scandir` (no pyarrow import: a local scan starts faster);
`s3://`, `gs://`, `abfs://`, `hdfs://` URIs are listed through pyarrow's filesystem layer. Both
become the same entries for one classification. The skip
rules are Spark's `HadoopFSUtils.shouldFilterOutPathName` (docs/reference/parquet-and-spark.md §2.8): a name
starting with `_` (unless it holds `=`, a partition directory) or `.`, or ending in `._COPYING_`,
is not data. `_metadata` / `_common_metadata` summary files are skipped here too and reported.
Everything skipped is reported with why, so nothing disappears silently.
"""

from __future__ import annotations

import contextlib
import math
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from urllib.parse import parse_qs, unquote, urlsplit

from schemaguard.errors import UsageError, first_line
from schemaguard.lake.file_records import DataFile, DataFiles

if TYPE_CHECKING:
    from pyarrow import fs as pafs

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
HADOOP_BYTES_PER_CHECKSUM = 512  # io.bytes.per.checksum default


class DiscoveryError(UsageError):
    """The table path itself cannot be listed (missing, not a table, unknown scheme)."""


@dataclass(frozen=True, slots=True)
class Ignored:
    rel: str
    why: str


@dataclass(frozen=True, slots=True)
class Listing:
    root: str
    filesystem: pafs.FileSystem | None  # None on local disk: files are opened with `os`
    files: DataFiles  # columns, not an object a file (lake/file_records.py)
    ignored: tuple[Ignored, ...]
    stale_checksums: tuple[Ignored, ...]  # data files whose Hadoop .crc sidecar does not match
    partition_columns: tuple[str, ...]

    @property
    def is_local(self) -> bool:
        return self.filesystem is None


def resolve(location: str) -> tuple[pafs.FileSystem, str, bool]:
    """A pyarrow filesystem and a path in it for a local path or a URI."""
    import pyarrow as pa
    from pyarrow import fs as pafs

    if "://" not in location:
        return pafs.LocalFileSystem(), _absolute(location), True
    try:
        if location.split("://", 1)[0].lower() in S3_SCHEMES:
            filesystem, path = _s3(location)
        else:
            filesystem, path = pafs.FileSystem.from_uri(location)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise DiscoveryError(f"cannot open {redacted(location)}: {first_line(e)}") from None
    return filesystem, path.rstrip("/"), isinstance(filesystem, pafs.LocalFileSystem)


S3_SCHEMES = ("s3", "s3a", "s3n")  # Hadoop's spellings name the same store
S3_ATTEMPTS = 10  # per request: throttling (503 SlowDown) and dropped connections, with backoff
S3_CONNECT_SECONDS, S3_REQUEST_SECONDS = 10.0, 60.0
REMOTE_THREADS = 64  # reads in flight on an object store: latency-bound, not CPU-bound


def _s3(location: str) -> tuple[pafs.FileSystem, str]:
    """pyarrow's S3 filesystem for an `s3://` (or `s3a://`, `s3n://`) URI, retrying each request
    with the AWS SDK's standard backoff. Credentials and endpoint come from where the AWS SDK looks
    (`AWS_ACCESS_KEY_ID`..., `AWS_ENDPOINT_URL`, profiles, instance roles), or from the URI's
    `region`, `endpoint_override` and `scheme` parameters and `key:secret@` part, as pyarrow's
    own URIs take them."""
    import pyarrow as pa
    from pyarrow import fs as pafs

    parts = urlsplit(location)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(query) - {"region", "endpoint_override", "scheme"}
    if unknown:
        raise ValueError(f"unknown S3 URI parameter(s): {', '.join(sorted(unknown))}")
    options: dict[str, Any] = {k: v for k, v in query.items()}
    if parts.username is not None:
        options.update(access_key=unquote(parts.username), secret_key=unquote(parts.password or ""))
    bucket = parts.hostname or ""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint and "endpoint_override" not in options:  # an S3-compatible store (MinIO, Ceph...)
        scheme, _, host = endpoint.rpartition("://")
        options.setdefault("scheme", scheme or "https")
        options["endpoint_override"] = host.rstrip("/")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if "region" not in options:
        if region or "endpoint_override" in options:
            options["region"] = region or "us-east-1"
        else:  # AWS itself: the bucket's region, as pyarrow's own URIs find it
            options["region"] = pafs.resolve_s3_region(bucket)
    # The AWS SDK opens at most max(25, pyarrow's I/O threads) connections (arrow's s3fs.cc):
    # fewer than the reads in flight, and they wait for each other (measured on the 20 ms store:
    # about 500 files/s with the default 8 threads, 1,000 with 64).
    if pa.io_thread_count() < REMOTE_THREADS:
        pa.set_io_thread_count(REMOTE_THREADS)
    filesystem = pafs.S3FileSystem(
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=S3_ATTEMPTS),
        connect_timeout=S3_CONNECT_SECONDS, request_timeout=S3_REQUEST_SECONDS, **options)
    return filesystem, f"{bucket}{unquote(parts.path)}"


def redacted(location: str) -> str:
    """A location as it may be shown: a URI's `user:secret@` part removed (credentials never reach
    a message, a report or the catalog)."""
    if "://" not in location or "@" not in location.split("://", 1)[1].split("/", 1)[0]:
        return location
    scheme, rest = location.split("://", 1)
    return f"{scheme}://{rest.split('@', 1)[1]}"


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


def _absolute(location: str) -> str:
    return str(Path(location).expanduser().absolute())


LIST_SPLIT = 32  # Spark's spark.sql.sources.parallelPartitionDiscovery.threshold default

# Lists each of a table's top directories, maybe elsewhere (a Spark job: lake/scan.py `spark_lister`).
Lister = Callable[["pafs.FileSystem | None", Sequence[str]], Iterable["Subtree"]]


class Subtree(NamedTuple):
    """One top directory's listing, as a lister gives it back (in any order)."""

    folder: str
    entries: list[Entry]  # in Spark's order
    error: str | None  # an object store's listing failed: the whole table cannot be listed


def discover(location: str, lister: Lister | None = None) -> Listing:
    """The table at `location` listed as Spark lists it. With `lister`, a table of more than
    LIST_SPLIT top directories has each of them listed by it (as Spark lists a table's partition
    directories in a job of their own past the same threshold); the result is the same."""
    if "://" not in location:
        return _discover_local(_absolute(location), location, lister)
    filesystem, root, is_local = resolve(location)
    if is_local:  # a file:// URI
        return _discover_local(root, location, lister)
    import pyarrow as pa
    from pyarrow import fs as pafs

    try:
        info = filesystem.get_file_info(root)
        if info.type == pafs.FileType.NotFound:
            raise DiscoveryError(f"no such table path: {redacted(location)}")
        if info.type == pafs.FileType.File:  # a single file is a table of one file
            one = DataFile(root, info.base_name, info.size or 0, _mtime(info.mtime_ns), ())
            return Listing(root, filesystem, DataFiles((one,)), (), (), ())
        top = _remote_entries(filesystem, root, recursive=False) if lister is not None else []
        folders = [e.path for e in top if e.kind == "dir"]
        if lister is not None and len(folders) > LIST_SPLIT:
            entries = top
            for subtree in lister(filesystem, folders):
                if subtree.error is not None:
                    raise DiscoveryError(f"cannot list {redacted(location)}: {subtree.error}")
                entries += subtree.entries
            entries.sort(key=lambda e: spark_order_key(e.path))
        else:  # one listing of the whole tree: fewer requests than one a directory
            entries = sorted(_remote_entries(filesystem, root, recursive=True),
                             key=lambda e: spark_order_key(e.path))
    except UnicodeDecodeError:  # pyarrow decodes a name when asked for it
        raise DiscoveryError(f"cannot list {redacted(location)}: a name in it is not valid UTF-8") from None
    except (pa.ArrowException, OSError) as e:
        raise DiscoveryError(f"cannot list {redacted(location)}: {first_line(e)}") from None
    return _classify(root, filesystem, entries)


def _remote_entries(filesystem: pafs.FileSystem, folder: str, recursive: bool) -> list[Entry]:
    from pyarrow import fs as pafs

    kinds: dict[pafs.FileType, Kind] = {pafs.FileType.File: "file", pafs.FileType.Directory: "dir"}
    return [Entry(i.path, kinds.get(i.type, "other"), i.size, i.mtime_ns)
            for i in filesystem.get_file_info(pafs.FileSelector(folder, recursive=recursive))]


def list_subtrees(filesystem: pafs.FileSystem | None, folders: Iterable[str]) -> Iterator[Subtree]:
    """Top directories listed where this runs (a lister's work): a local one as the whole walk
    lists it below the table's root, a remote one recursively."""
    for folder in folders:
        if filesystem is None:
            # `_below` reports a directory it cannot list as the whole walk does
            yield Subtree(folder, list(_walk_local(_below(folder, (os.path.dirname(folder), folder)))), None)
            continue
        try:
            yield Subtree(folder, _remote_entries(filesystem, folder, recursive=True), None)
        except UnicodeDecodeError:
            yield Subtree(folder, [], "a name in it is not valid UTF-8")
        except Exception as e:  # the driver says it, as it says a failed listing of its own
            yield Subtree(folder, [], first_line(e))


def _discover_local(root: str, location: str, lister: Lister | None) -> Listing:
    try:
        st = os.stat(root)
    except FileNotFoundError:
        raise DiscoveryError(f"no such table path: {location}") from None
    except OSError as e:
        raise DiscoveryError(f"cannot list {location}: {e.strerror or first_line(e)}") from None
    if stat.S_ISREG(st.st_mode):  # a single file is a table of one file
        one = DataFile(root, os.path.basename(root), st.st_size, _mtime(st.st_mtime_ns), ())
        return Listing(root, None, DataFiles((one,)), (), (), ())
    if not stat.S_ISDIR(st.st_mode):
        raise DiscoveryError(f"cannot list {location}: not a directory or a regular file")
    try:
        top = _children(root, (root,))
    except OSError as e:  # the root itself cannot be listed
        raise DiscoveryError(f"cannot list {location}: {e.strerror or first_line(e)}") from None
    folders = [e.path for e, inside in top if inside is not None]
    if lister is None or len(folders) <= LIST_SPLIT:
        return _classify(root, None, _walk_local(top))
    subtrees = {s.folder: s.entries for s in lister(None, folders)}
    return _classify(root, None, (e for entry, inside in top for e in
                                  (entry, *(subtrees[entry.path] if inside is not None else ()))))


Kind = Literal["file", "dir", "other", "unlistable"]  # other: a FIFO, socket or device


class Entry(NamedTuple):
    """One listed entry, local or remote, as `_classify` reads it."""

    path: str  # on local disk, bytes that are not UTF-8 are kept as surrogates (os opens them)
    kind: Kind
    size: int | None
    mtime_ns: int | None
    why: str | None = None  # why an unlistable directory could not be listed


Inside = tuple[str, ...]  # the directories a walk is inside, the table's root first


def _walk_local(top: list[tuple[Entry, Inside | None]]) -> Iterator[Entry]:
    """The entries below a directory whose `_children` are `top`, depth first, in Spark's order (a
    directory before what it holds), one directory's entries held at a time: a listing never
    holds every path at once. It follows symbolic links as pyarrow's and Hadoop's local listings
    do, but never into a directory it is already inside (a link cycle). A directory below the
    root that it cannot list is an entry of its own, reported, not a dead run."""
    stack = [iter(top)]
    while stack:
        for entry, inside in stack[-1]:
            yield entry
            if inside is not None:
                stack.append(iter(_below(entry.path, inside)))
                break
        else:
            stack.pop()


def _below(folder: str, inside: Inside) -> list[tuple[Entry, Inside | None]]:
    try:
        return _children(folder, inside)
    except OSError as e:
        return [(Entry(folder, "unlistable", None, None, e.strerror or first_line(e)), None)]


def _children(folder: str, inside: Inside) -> list[tuple[Entry, Inside | None]]:
    """A directory's entries by `os.scandir`, in Spark's order: a path sorts by its UTF-16 units,
    and all a directory holds sorts as its name followed by `/`. Each directory comes with the
    directories to walk it inside, or None where it would close a link cycle. A file costs one
    `stat` (its size and time), a directory none: only a symbolic link can lead back to a
    directory the walk is inside, and only a link is followed and compared with them."""
    with os.scandir(folder) as listing:
        children = list(listing)
    found: list[tuple[bytes, Entry, Inside | None]] = []
    for child in children:
        try:
            if child.is_dir(follow_symlinks=False):  # the kind the listing gave: no system call
                found.append((spark_order_key(child.name + "/"), Entry(child.path, "dir", None, None),
                              (*inside, child.path)))
                continue
            st = child.stat()
        except OSError:
            continue  # vanished since it was listed, or a dangling link: not listed, as pyarrow
        if stat.S_ISDIR(st.st_mode):  # a link to a directory
            found.append((spark_order_key(child.name + "/"), Entry(child.path, "dir", None, None),
                          None if _leads_back(st, inside) else (*inside, child.path)))
        elif stat.S_ISREG(st.st_mode):
            found.append((spark_order_key(child.name), Entry(child.path, "file", st.st_size, st.st_mtime_ns),
                          None))
        else:
            found.append((spark_order_key(child.name), Entry(child.path, "other", None, None), None))
    found.sort(key=_FIRST)
    return [(entry, walk) for _, entry, walk in found]


_FIRST = itemgetter(0)


def _leads_back(target: os.stat_result, inside: Inside) -> bool:
    """Whether a link's directory is one the walk is inside (by device and inode): a cycle."""
    for folder in inside:
        with contextlib.suppress(OSError):  # one that vanished cannot be walked into again
            if os.path.samestat(target, os.stat(folder)):
                return True
    return False


@dataclass(frozen=True, slots=True)
class _Dir:
    """What a directory path says about every file in it (computed once per directory)."""

    skipped: bool  # it or a parent is skipped (and reported once, as the topmost one)
    partition: tuple[tuple[str, str | None], ...]


def _classify(root: str, filesystem: pafs.FileSystem | None, entries: Iterable[Entry]) -> Listing:
    """Entries given in Spark's order (a directory before what it holds) made a listing."""
    prefix = root.rstrip("/") + "/"
    files = DataFiles()
    add = files.add  # once: a listing adds a million
    ignored: list[Ignored] = []
    checksums: dict[str, int] = {}
    dirs: dict[str, _Dir] = {"": _Dir(False, ())}
    cut = len(prefix)
    for e in entries:
        path = e.path
        rel = path[cut:] if path.startswith(prefix) else path
        if not rel.isascii():
            rel = shown_name(rel)
        parent, _, name = rel.rpartition("/")
        where = dirs.get(parent) or _dir(parent, dirs, ignored)
        if where.skipped:
            continue  # inside a directory already reported as skipped
        reason = skip_reason(name)
        if e.kind == "other":
            ignored.append(Ignored(rel, "not a regular file (a FIFO, socket or device): not data"))
            continue
        if e.kind == "unlistable":
            ignored.append(Ignored(rel + "/", f"cannot be listed: {e.why}; its files are not read"))
            continue
        if e.kind == "dir":
            dirs[rel] = _Dir(reason is not None, where.partition + _partition_of(name))
            if reason:
                ignored.append(Ignored(rel + "/", reason))
            continue
        if reason:
            if reason == "Hadoop checksum sidecar":
                checksums[_sidecar_target(rel)] = e.size or 0
            ignored.append(Ignored(rel, reason))
            continue
        add(path, rel, e.size or 0, _mtime(e.mtime_ns), where.partition)
    # Spark sorts leaves by path ("the first file" means this order); entries came sorted that way.
    stale = tuple(
        Ignored(f.rel, "stale .crc sidecar: Hadoop's checksum layer will fail reading this file")
        for f in (files if checksums else ())
        if f.rel in checksums and checksums[f.rel] != crc_size(f.size)
    )
    ignored.sort(key=lambda i: i.rel)
    columns = dict.fromkeys(k for d in dirs.values() if not d.skipped for k, _ in d.partition)
    return Listing(root, filesystem, files, tuple(ignored), stale, tuple(columns))


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


def _mtime(ns: int | None) -> float | None:
    return ns / 1e9 if ns is not None else None
