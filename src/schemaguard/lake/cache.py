"""Incremental runs: the previous run's footers for the files that have not changed since.

A table's cache is one file beside the reports, `<report_dir>/_cache/<table>-<hash>.sgcache` (the
hash names the table's location and format). It holds, for each footer read, the file's path
relative to the table, its size and modification time as listed (for a Delta or Iceberg table: as
the log's entry gives them), and what the footer said, kept as `lake/file_records.py` keeps it. A file
listed with the same path, size and time is not read again.

- A file modified in the last `SETTLE_SECONDS` before the listing is not kept: a file systems'
  clock ticks in milliseconds, and a same-size rewrite within one tick would keep its time (git's
  "racy clean" problem, handled the same way). A copy that sets an old time and keeps the size
  (`rsync -t` over a changed file) is not seen, as `make` and rsync do not see it: `--full` reads
  every footer.
- The file is written whole under a temporary name and renamed over the old one: a crash leaves
  the old cache or the new, never a part.
- It is this module's own layout: a JSON header and typed arrays read with `array.frombytes` and
  checked against each other. The footer schemas are kept as the bytes of the footer they were
  parsed from and parsed again on load. The whole is signed with a key that only this user can
  read (`~/.schemaguard/cache.key`, or `$SCHEMAGUARD_HOME/cache.key`): a cache written by anyone
  else, damaged, or of another format version is ignored, and every footer is read.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import struct
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from schemaguard.errors import first_line
from schemaguard.formats.parquet import UnreadableFile, footer_schema_from
from schemaguard.lake.discover import Listing, spark_order_key
from schemaguard.lake.file_records import DataFiles, Footers
from schemaguard.lake.scan import ScanResult

FORMAT = 1  # bump whenever the layout below or what a footer's record means changes
MAGIC = b"SGCACHE\n"
CACHE_DIR = "_cache"  # in the report folder; never a run id (those start with a letter or digit)
SETTLE_SECONDS = 2.0
_HEAD = struct.Struct("<8sI32sQ")  # magic, format, HMAC-SHA256 of what follows, header length
# The arrays, in file order: (name, typecode); "B" sections are byte strings.
_SECTIONS = (("rel", "B"), ("rel_ends", "q"), ("size", "q"), ("mtime", "d"), ("rows", "q"), ("groups", "q"),
             ("writer", "I"), ("footer", "I"), ("stats", "B"), ("stats_ends", "q"), ("kv", "I"),
             ("encrypted", "I"))


@dataclass(frozen=True, slots=True)
class Reuse:
    """What a read took from the cache: footers reused and read, and why the cache was not used
    (None when it was, or when there was none yet)."""

    reused: int
    read: int
    ignored: str | None = None


def cache_path(report_dir: Path, location: str, table_format: str) -> Path:
    """The cache file of one table: named by its location's last part, keyed by the whole."""
    key = hashlib.sha256(f"{table_format}\0{location}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", location.rstrip("/").rpartition("/")[2])[:64]
    return report_dir / CACHE_DIR / f"{slug}-{key}.sgcache"


def scan_incremental(listing: Listing, path: Path, scan: Callable[[Listing], ScanResult],
                     progress: Callable[[int], None] | None = None,
                     reuse: bool = True) -> tuple[ScanResult, Reuse]:
    """The scan of `listing`, reading only the files the cache at `path` holds unchanged (every
    file when not `reuse`), and the cache written anew from the result."""
    started = time.time()
    previous, ignored = _load(path) if reuse else (None, None)
    files = listing.files
    if previous is None:  # the first run, or a cache not used: every footer read
        result = scan(listing)
        _save(path, result.footers, started - SETTLE_SECONDS)
        return result, Reuse(0, len(files), ignored)
    if previous.describes(files):  # nothing changed: no file read
        if progress:
            progress(len(files))
        return ScanResult(previous.with_files(files), ()), Reuse(len(files), 0)  # the cache holds them all
    hits = _matches(files, previous)
    misses = DataFiles(files[i] for i, hit in enumerate(hits) if hit < 0)
    if progress and len(misses) < len(files):
        progress(len(files) - len(misses))
    fresh = scan(replace(listing, files=misses))
    result = ScanResult(_merged(files, hits, previous, fresh), fresh.unreadable)
    _save(path, result.footers, started - SETTLE_SECONDS)
    return result, Reuse(len(files) - len(misses), len(misses), ignored)


def _matches(files: DataFiles, cached: Footers) -> array[int]:
    """For each listed file, the row of the cached footer with its path, size and time, else -1.
    Both lists come in Spark's order, so one merge-like pass pairs them (usually each path equals
    the next cached one): no index of a million paths is built. A file out of that order is only
    a miss, never a wrong match."""
    out = array("q")
    j, n = 0, len(cached)
    for i in range(len(files)):
        if j < n and files.raw_rel(i) != cached.raw_rel(j):  # a file added or removed: find its place
            mine = spark_order_key(files.rel(i))
            while j < n and spark_order_key(cached.rel(j)) < mine:
                j += 1
        mtime = files.mtime(i)
        if (j < n and mtime is not None and cached.mtime(j) == mtime and cached.size(j) == files.size(i)
                and files.raw_rel(i) == cached.raw_rel(j)):
            out.append(j)
            j += 1
        else:
            out.append(-1)
    return out


def _merged(files: DataFiles, hits: array[int], previous: Footers, fresh: ScanResult) -> Footers:
    """The footers in listing order: the cache's where it matched, the fresh scan's elsewhere."""
    bad = {u.rel for u in fresh.unreadable}
    kept = files if not bad else DataFiles(f for f in files if f.rel not in bad)
    picks: list[tuple[Footers, int]] = []
    k = 0
    for i, hit in enumerate(hits):
        if hit >= 0:
            picks.append((previous, hit))
        elif files.rel(i) not in bad:
            picks.append((fresh.footers, k))
            k += 1
    return Footers.picked(kept, picks)


# ---------------------------------------------------------------------------------------------
# The file


def _key() -> bytes:
    """This user's signing key, made on first use (readable by this user only)."""
    home = os.environ.get("SCHEMAGUARD_HOME")
    path = Path(home) / "cache.key" if home else Path.home() / ".schemaguard" / "cache.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another run made it a moment ago
            return path.read_bytes()
        with os.fdopen(fd, "wb") as out:
            out.write(key)
        return key


def _save(path: Path, footers: Footers, settled_before: float) -> None:
    """The cache of `footers`, files modified before `settled_before` only, written atomically."""
    sourced = [footer.source is not None for footer in footers.schemas()]
    keep = [i for i, code in enumerate(footers.footer_codes())
            if sourced[code] and (t := footers.mtime(i)) is not None and t < settled_before]
    if len(keep) < len(footers):
        footers = Footers.picked(DataFiles(footers.file(i) for i in keep), ((footers, i) for i in keep))
    tables, arrays = footers.to_columns()
    sections = [arrays[name] for name, _ in _SECTIONS]
    header = json.dumps({
        "files": len(footers), "byteorder": sys.byteorder, "sections": [len(s) for s in sections],
        "writer": tables["writer"], "kv": tables["kv"], "encrypted": tables["encrypted"],
        "schemas": [[_b64(raw), _b64(spark)] for raw, spark in tables["schemas"]],
    }).encode()
    body = b"".join([header, *sections])
    mac = hmac.new(_key(), struct.pack("<Q", len(header)) + body, hashlib.sha256).digest()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_HEAD.pack(MAGIC, FORMAT, mac, len(header)))
            out.write(body)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _load(path: Path) -> tuple[Footers | None, str | None]:
    """The cached footers, or None and why the cache is not used (None: there is none yet)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"cannot be read: {e.strerror or first_line(e)}"
    try:
        return _decode(data), None
    except _Ignored as e:
        return None, str(e)


class _Ignored(Exception):
    """Why a cache file is not used."""


def _decode(data: bytes) -> Footers:
    if len(data) < _HEAD.size or data[:8] != MAGIC:
        raise _Ignored("not a schemaguard cache file")
    _, fmt, mac, header_len = _HEAD.unpack_from(data)
    if fmt != FORMAT:
        raise _Ignored(f"written in cache format {fmt}, this version reads format {FORMAT}")
    signed = data[_HEAD.size - 8:]  # the header's length, the header and the sections
    if not hmac.compare_digest(mac, hmac.new(_key(), signed, hashlib.sha256).digest()):
        raise _Ignored("its signature does not match this user's key (written by another user, or damaged)")
    try:
        header = json.loads(data[_HEAD.size:_HEAD.size + header_len])
        return _columns(header, iter(_sections(data, _HEAD.size + header_len, header["sections"])))
    except (ValueError, KeyError, TypeError, IndexError, UnreadableFile) as e:
        raise _Ignored(f"does not decode: {first_line(e)}") from None


def _sections(data: bytes, at: int, lengths: list[int]) -> Iterator[bytes]:
    for n in lengths:
        if n < 0 or at + n > len(data):
            raise ValueError("a section runs past the end of the file")
        yield data[at:at + n]
        at += n
    if at != len(data):
        raise ValueError("bytes after the last section")


def _columns(header: dict[str, Any], raw: Iterator[bytes]) -> Footers:
    """The cached footers from the header and sections, each array checked against the others."""
    if header["byteorder"] != sys.byteorder:
        raise ValueError("written on a machine of the other byte order")
    n = header["files"]
    arrays: dict[str, Any] = {}
    for name, code in _SECTIONS:
        blob = next(raw)
        if code == "B":
            arrays[name] = blob
            continue
        arrays[name] = array(code)
        arrays[name].frombytes(blob)
        if len(arrays[name]) != n:
            raise ValueError(f"{name}: {len(arrays[name])} values for {n} files")
    for text, ends in (("rel", "rel_ends"), ("stats", "stats_ends")):
        e = arrays[ends]
        if any(b < a for a, b in pairwise(e)) or (n and (e[0] < 0 or e[-1] != len(arrays[text]))):
            raise ValueError(f"{ends} out of order")
    tables: dict[str, list[Any]] = {
        "writer": [w if w is None else str(w) for w in header["writer"]],
        "kv": [tuple(map(str, v)) for v in header["kv"]],
        "encrypted": [tuple(map(str, v)) for v in header["encrypted"]],
        "schemas": [footer_schema_from((base64.b64decode(raw, validate=True), _unb64(spark)))
                    for raw, spark in header["schemas"]],
    }
    coded = (("writer", "writer"), ("kv", "kv"), ("encrypted", "encrypted"), ("footer", "schemas"))
    for name, table in coded:
        if max(arrays[name], default=-1) >= len(tables[table]):
            raise ValueError(f"{name}: a code beyond its table")
    return Footers.from_columns(tables, arrays)


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text, validate=True)
