"""Read every listed footer: one footer function (`formats.parquet.read_footer`), three engines.

On local disk footer reading is CPU-bound in the interpreter (parquet-and-spark.md §5.5), so the
local engine spreads chunks of files over worker processes, one per core. On object stores it
is latency-bound (§5.4), so the remote engine runs many threads in one process. Small tables are
read in-process: starting workers would cost more than it saves. On a cluster, `scan_on_spark`
runs the same chunks as the tasks of one Spark job, like Spark's own footer merge (§2.2).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyarrow import fs as pafs

from schemaguard.formats.parquet import FileFooter, UnreadableFile, read_footer
from schemaguard.lake.discover import DataFile, Listing

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

IN_PROCESS_BELOW = 400  # files; below this, worker start-up costs more than it saves
CHUNK = 500  # files per task: large enough that pickling shares each footer schema per chunk
REMOTE_THREADS = 32


@dataclass(frozen=True, slots=True)
class Unreadable:
    rel: str
    reason: str


Progress = Callable[[int], None]  # called with the number of files just finished


@dataclass(frozen=True, slots=True)
class ScanResult:
    footers: tuple[FileFooter, ...]
    unreadable: tuple[Unreadable, ...]


def scan(listing: Listing, progress: Progress | None = None, workers: int | None = None) -> ScanResult:
    files = listing.files
    if not listing.is_local:
        chunks = list(_chunks(files, 16))
        with ThreadPoolExecutor(REMOTE_THREADS) as pool:
            return _collect(pool, chunks, listing.filesystem, progress)
    n_workers = workers or len(os.sched_getaffinity(0))  # the cores this process may use
    if len(files) < IN_PROCESS_BELOW or n_workers == 1:
        out = _read_chunk(files, None)
        if progress:
            progress(len(files))
        return _split([out])
    # fork: the workers inherit the imported modules and the listing, start in milliseconds,
    # and are sent only index ranges into the listing, not the files themselves.
    global _INHERITED
    _INHERITED = files
    size = min(CHUNK, max(50, len(files) // (n_workers * 4)))
    ranges = [(i, min(i + size, len(files))) for i in range(0, len(files), size)]
    try:
        with ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_read_inherited, lo, hi) for lo, hi in ranges]
            return _split([_done(f, hi - lo, progress) for f, (lo, hi) in zip(futures, ranges, strict=True)])
    finally:
        _INHERITED = ()


_INHERITED: Sequence[DataFile] = ()  # the listing a forked worker reads its ranges from


def _read_inherited(lo: int, hi: int) -> list[FileFooter | Unreadable]:
    return _read_chunk(_INHERITED[lo:hi], None)


def _done(future: Future[list[FileFooter | Unreadable]], n: int,
          progress: Progress | None) -> list[FileFooter | Unreadable]:
    result = future.result()
    if progress:
        progress(n)
    return result


def scan_on_spark(listing: Listing, spark: SparkSession) -> ScanResult:
    """The footer scan as one Spark job: each task reads a chunk of footers where it runs.
    Executors need schemaguard and pyarrow installed and the table's filesystem reachable."""
    chunks = list(_chunks(listing.files, CHUNK))
    if not chunks:
        return ScanResult((), ())
    filesystem = None if listing.is_local else listing.filesystem
    rdd = spark.sparkContext.parallelize(chunks, len(chunks))
    return _split(rdd.map(lambda chunk: _read_chunk(chunk, filesystem)).collect())


def _collect(
    pool: Executor,
    chunks: list[Sequence[DataFile]],
    filesystem: pafs.FileSystem | None,
    progress: Progress | None,
) -> ScanResult:
    futures = [pool.submit(_read_chunk, c, filesystem) for c in chunks]
    return _split([_done(f, len(c), progress) for f, c in zip(futures, chunks, strict=True)])


def _chunks(files: Sequence[DataFile], size: int) -> Iterator[Sequence[DataFile]]:
    for i in range(0, len(files), size):
        yield files[i:i + size]


def _read_chunk(
    files: Sequence[DataFile], filesystem: pafs.FileSystem | None
) -> list[FileFooter | Unreadable]:
    out: list[FileFooter | Unreadable] = []
    for f in files:
        try:
            out.append(read_footer(f.path, rel=f.rel, filesystem=filesystem, size=f.size,
                                   mtime=f.mtime, partition=f.partition))
        except UnreadableFile as e:
            out.append(Unreadable(f.rel, e.reason))
    return out


def _split(results: list[list[FileFooter | Unreadable]]) -> ScanResult:
    footers: list[FileFooter] = []
    unreadable: list[Unreadable] = []
    for chunk in results:
        for r in chunk:
            (unreadable if isinstance(r, Unreadable) else footers).append(r)  # type: ignore[arg-type]
    return ScanResult(tuple(footers), tuple(unreadable))
