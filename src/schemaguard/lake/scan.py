"""Read every listed footer: one footer function (`formats.parquet.read_footer`), three engines.

On local disk footer reading is CPU-bound in the interpreter (docs/reference/parquet-and-spark.md
§5.5), so the local engine spreads chunks of files over forked worker processes, one per core. Every
local read happens in a worker, even on a small table, because one file can end the process reading
it (a crash in native code; pyarrow's C++ aborted on a plaintext footer over encrypted columns
before footers were decoded here): a range whose worker dies is split in two and read again in fresh
workers until the file that kills its reader is alone, and that file becomes an unreadable file; any
Python exception reading one file does too. On object stores reading is latency-bound (§5.4), so the
remote engine runs many threads in one process. On a cluster, `scan_on_spark` runs the same chunks
as the tasks of one Spark job, like Spark's own footer merge (§2.2). Every engine gives each file's
read READ_SECONDS: a read that takes longer is that file's finding.
"""

from __future__ import annotations

import faulthandler
import itertools
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from schemaguard.acyclic import acyclic
from schemaguard.errors import first_line
from schemaguard.formats.parquet import FileFooter, Packed, UnreadableFile, encode_stats, pack, read_footer
from schemaguard.lake.discover import REMOTE_THREADS, Lister, Listing, Subtree, list_subtrees
from schemaguard.lake.file_records import DataFile, DataFiles, Footers

if TYPE_CHECKING:
    from pyarrow import fs as pafs
    from pyspark.sql import SparkSession

CHUNK = 500  # files per task: large enough that pickling shares each footer schema per chunk
# What `--engine auto` weighs, measured on this project's 2-core machine with local[2]
# (docs/operations.md "Engines"): the footer job's fixed cost, and a file's read per Spark task slot
# and per local core.
SPARK_JOB_SECONDS = 0.5
SPARK_FILE_SECONDS = 0.23e-3  # read, packed and pickled in a Python worker, unpickled by the driver
LOCAL_FILE_SECONDS = 0.136e-3  # read in a forked worker, sent back and kept


@dataclass(frozen=True, slots=True)
class Unreadable:
    rel: str
    reason: str


Progress = Callable[[int], None]  # called with the number of files just finished


@dataclass(frozen=True, slots=True)
class ScanResult:
    footers: Footers  # in listing order, held as columns (lake/file_records.py)
    unreadable: tuple[Unreadable, ...]


def scan(listing: Listing, progress: Progress | None = None, workers: int | None = None) -> ScanResult:
    files = listing.files
    if not listing.is_local:
        return _collected(_read_remote(files, listing.filesystem, progress))
    if not files:
        return ScanResult(Footers(), ())
    n_workers = workers or len(os.sched_getaffinity(0))  # the cores this process may use
    # fork: the workers inherit the imported modules and the listing, start in milliseconds,
    # and are sent only index ranges into the listing, not the files themselves.
    global _INHERITED
    _INHERITED = files
    # At least four ranges a worker, so the cores stay busy to the end, even on a few wide footers.
    size = min(CHUNK, -(-len(files) // (n_workers * 4)))
    ranges = [(i, min(i + size, len(files))) for i in range(0, len(files), size)]
    # No cyclic garbage collection while footers are built and sent (the workers inherit this):
    # footers hold no cycles, and collections triggered by their many small objects cost a
    # fifth of a wide footer's read.
    try:
        with acyclic():
            sink = _Sink(files)
            _read_ranges(ranges, n_workers, progress, sink)
            return ScanResult(sink.footers, tuple(sink.unreadable))
    finally:
        _INHERITED = ()


class _Sink:
    """Ranges of results kept as they arrive, in listing order: the footers as columns (never a
    million objects), the unreadable files as findings. A range whose worker died arrives late, and
    the ranges after it wait for it."""

    def __init__(self, files: DataFiles) -> None:
        self.files = files
        self.footers = Footers()
        self.unreadable: list[Unreadable] = []
        self._waiting: dict[int, list[Packed | Unreadable]] = {}
        self._next = 0

    def put(self, lo: int, results: list[Packed | Unreadable]) -> None:
        self._waiting[lo] = results
        while self._next in self._waiting:
            chunk = self._waiting.pop(self._next)
            run: list[Packed] = []  # footers in a row, copied with their listed files at once
            for i, r in enumerate(chunk, self._next):
                if isinstance(r, Unreadable):
                    self.footers.extend_listed(self.files, i - len(run), run)
                    run = []
                    self.unreadable.append(r)
                else:
                    run.append(r)
            self._next += len(chunk)
            self.footers.extend_listed(self.files, self._next - len(run), run)


def _read_ranges(ranges: list[tuple[int, int]], n_workers: int, progress: Progress | None,
                 sink: _Sink) -> None:
    """Each range of the inherited listing read by a worker. When a worker dies, every range still
    pending fails with it, so each failed range is read again alone; only one that fails alone
    holds a file that kills its reader, and it is halved until that file is alone."""
    for lo, hi in _run_pool(ranges, n_workers, progress, sink):
        _isolate(lo, hi, progress, sink)


def _run_pool(ranges: list[tuple[int, int]], n_workers: int, progress: Progress | None,
              sink: _Sink) -> list[tuple[int, int]]:
    """Read the ranges in one pool into `sink`; the ranges whose worker pool broke, returned."""
    failed: list[tuple[int, int]] = []
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(min(n_workers, len(ranges)), mp_context=context, initializer=_quiet) as pool:
        futures = [pool.submit(_read_inherited, lo, hi) for lo, hi in ranges]
        for future, (lo, hi) in zip(futures, ranges, strict=True):
            try:
                sink.put(lo, _done(future, hi - lo, progress))
            except BrokenProcessPool:
                failed.append((lo, hi))
    return failed


def _isolate(lo: int, hi: int, progress: Progress | None, sink: _Sink) -> None:
    """Read one range alone; if its reader dies, halve it, down to the file that kills it."""
    if not _run_pool([(lo, hi)], 1, progress, sink):
        return
    if hi - lo == 1:
        sink.put(lo, [Unreadable(_INHERITED[lo].rel, CRASHED)])
        if progress:
            progress(1)
        return
    mid = (lo + hi) // 2
    _isolate(lo, mid, progress, sink)
    _isolate(mid, hi, progress, sink)


def _quiet() -> None:
    """A worker's stderr goes nowhere: a C++ abort prints its message there once per retry, and the
    file it came from is reported as a finding instead."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    faulthandler.disable()  # it keeps its own copy of stderr (pytest, PYTHONFAULTHANDLER)


CRASHED = ("reader crashed: the process reading its footer died (a crash inside a native library or "
           "the interpreter); the file was read alone to find it")


_INHERITED: Sequence[DataFile] = ()  # the listing a forked worker reads its ranges from


READ_SECONDS = 60.0  # per file: far beyond a healthy footer read, short enough for a nightly run


class _Timeout(BaseException):  # not an Exception: the per-file handler must not take it
    """The time limit of one file's read ran out."""


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def _read_inherited(lo: int, hi: int) -> list[Packed | Unreadable]:
    """A range of the listing, read as `_read_timed` does. Footers go back packed
    (`formats.parquet.Packed`): statistics already encoded, as the parent keeps them."""
    return [r if isinstance(r, Unreadable) else pack(r) for r in _read_timed(_INHERITED[lo:hi])]


def _read_timed(files: Sequence[DataFile]) -> list[FileFooter | Unreadable]:
    """Each file's read under a time limit: a read that blocks (a stalled mount) or never ends is
    interrupted by SIGALRM and becomes that file's finding. For a process's main thread: a local
    worker, a Spark task's Python worker."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    out: list[FileFooter | Unreadable] = []
    try:
        for f in files:
            signal.setitimer(signal.ITIMER_REAL, READ_SECONDS)
            try:
                out.append(_read_one(f, None))
            except _Timeout:
                out.append(_timed_out(f))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return out


def _timed_out(f: DataFile) -> Unreadable:
    return Unreadable(f.rel, f"timed out: no footer after {READ_SECONDS:g} s (a stalled mount or store, "
                             "or a read that does not end)")


_R = TypeVar("_R")


def _done(future: Future[list[_R]], n: int, progress: Progress | None) -> list[_R]:
    result = future.result()
    if progress:
        progress(n)
    return result


def use_spark(engine: str, files: int, spark: SparkSession | None) -> bool:
    """Whether to read the footers as a Spark job: `spark` always, `local` never, `auto` when
    `spark` (a session already running: the audit's, a job's, the user's) would read them sooner."""
    if engine != "auto":
        return engine == "spark"
    return spark is not None and spark_pays(files, spark.sparkContext.defaultParallelism,
                                            len(os.sched_getaffinity(0)))


def spark_pays(files: int, slots: int, cores: int) -> bool:
    """Whether a Spark job with `slots` task slots reads `files` footers sooner than `cores` local
    workers: never with as many slots as cores (a Spark task reads slower), and with 100 slots
    against 2 cores from about 7,600 files."""
    return SPARK_JOB_SECONDS + files * SPARK_FILE_SECONDS / slots < files * LOCAL_FILE_SECONDS / cores


def lister_for(engine: str, spark: SparkSession | None) -> Lister | None:
    """Who lists a table's top directories: a Spark job when the engine is `spark`, or `auto` with
    a session running whose task slots outnumber the local cores; else this process."""
    if spark is None or engine == "local":
        return None
    if engine == "auto" and spark.sparkContext.defaultParallelism <= len(os.sched_getaffinity(0)):
        return None
    return spark_lister(spark)


def spark_lister(spark: SparkSession) -> Lister:
    """Directories listed by Spark tasks, as Spark's own parallel partition discovery does; each
    task gives back its directories' entries as one pickled blob, in the order it was given them."""
    def lister(filesystem: pafs.FileSystem | None, folders: Sequence[str]) -> Iterator[Subtree]:
        tasks = spark.sparkContext.parallelize(list(folders), min(len(folders), 2 * spark.sparkContext
                                                                  .defaultParallelism))
        for blob in tasks.mapPartitions(lambda part: _listing_task(part, filesystem)).collect():
            yield from pickle.loads(blob)

    return lister


def _listing_task(folders: Iterable[str], filesystem: pafs.FileSystem | None) -> Iterator[bytes]:
    yield pickle.dumps(list(list_subtrees(filesystem, folders)), protocol=pickle.HIGHEST_PROTOCOL)


def running_spark() -> SparkSession | None:
    """The SparkSession already active in this process, if any; never imports pyspark."""
    if "pyspark.sql" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def scan_on_spark(listing: Listing, spark: SparkSession, progress: Progress | None = None) -> ScanResult:
    """The footer scan as one Spark job, like Spark's own footer merge (§2.2): each task reads a
    range of the listing where it runs (an object store's with REMOTE_THREADS threads, local files
    one at a time under the time limit: the task's process is its core) and returns the range as
    one compact blob (statistics already encoded), which the driver appends in listing order.
    Executors need schemaguard and pyarrow installed and the table's filesystem reachable."""
    files = listing.files
    if not files:
        return ScanResult(Footers(), ())
    # Two tasks a slot: a task costs its Python worker a fixed ~0.4 s (measured on local[2]: 10,000
    # files took 5.8 s in 20 tasks, 1.8 s in 4).
    size = max(CHUNK, -(-len(files) // (2 * spark.sparkContext.defaultParallelism)))
    ranges = [(lo, min(lo + size, len(files))) for lo in range(0, len(files), size)]
    filesystem = listing.filesystem
    # Each task is sent its range as a DataFiles (columns): small, however many files.
    tasks = spark.sparkContext.parallelize(
        [(lo, DataFiles(files[lo:hi])) for lo, hi in ranges], len(ranges))
    sink = _Sink(files)
    for blob in tasks.mapPartitions(lambda part: _spark_task(part, filesystem)).collect():
        lo, results = pickle.loads(blob)
        sink.put(lo, results)
        if progress:
            progress(len(results))
    return ScanResult(sink.footers, tuple(sink.unreadable))


def _spark_task(part: Iterable[tuple[int, Sequence[DataFile]]],
                filesystem: pafs.FileSystem | None) -> Iterator[bytes]:
    """One Spark task: its ranges read, each given back as one pickled blob of packed footers."""
    for lo, chunk in part:
        read = _read_remote(chunk, filesystem, None) if filesystem is not None else _read_timed(chunk)
        packed = [r if isinstance(r, Unreadable) else pack(r) for r in read]
        yield pickle.dumps((lo, packed), protocol=pickle.HIGHEST_PROTOCOL)


def _read_remote(files: Sequence[DataFile], filesystem: pafs.FileSystem | None,
                 progress: Progress | None) -> Iterator[FileFooter | Unreadable]:
    """Footers from an object store, REMOTE_THREADS reads at a time (latency-bound, §5.4), given in
    the listing's order as they finish. A thread cannot be interrupted, so a read past READ_SECONDS
    is that file's finding, its daemon thread is left to end alone (it never holds the process
    open; its late answer is dropped) and a new thread takes its place."""
    n = len(files)
    claim = itertools.count()  # the next listing index to read; next() on it is atomic
    finished: queue.SimpleQueue[tuple[int, FileFooter | Unreadable]] = queue.SimpleQueue()
    started: dict[int, float] = {}  # reads under way, by listing index: when they started

    def worker() -> None:
        while (i := next(claim)) < n:
            started[i] = time.monotonic()
            finished.put((i, _read_one(files[i], filesystem)))

    def start_thread() -> None:
        threading.Thread(target=worker, name="schemaguard-footer", daemon=True).start()

    for _ in range(min(REMOTE_THREADS, n)):
        start_thread()
    done: dict[int, FileFooter | Unreadable] = {}  # finished, waiting for the files before them
    given = 0
    while given < n:
        try:
            i, read = finished.get(timeout=1.0)
            if started.pop(i, None) is not None:  # None: it timed out, and was given as such
                done[i] = read
                if progress:
                    progress(1)
        except queue.Empty:
            now = time.monotonic()
            for i, at in list(started.items()):
                if now - at > READ_SECONDS and started.pop(i, None) is not None:
                    done[i] = _timed_out(files[i])
                    start_thread()
                    if progress:
                        progress(1)
        while given in done:
            yield done.pop(given)
            given += 1


def _read_one(f: DataFile, filesystem: pafs.FileSystem | None) -> FileFooter | Unreadable:
    try:
        return read_footer(f.path, rel=f.rel, filesystem=filesystem, size=f.size, mtime=f.mtime,
                           partition=f.partition)
    except UnreadableFile as e:
        return Unreadable(f.rel, e.reason)
    except Exception as e:  # any other failure on one file is that file's, never the run's
        return Unreadable(f.rel, f"corrupt footer: {type(e).__name__}: {first_line(e)}")


def _collected(results: Iterable[FileFooter | Unreadable]) -> ScanResult:
    footers = Footers()
    unreadable: list[Unreadable] = []
    for r in results:
        if isinstance(r, Unreadable):
            unreadable.append(r)
        else:
            footers.append(r, encode_stats(r.stats))
    return ScanResult(footers, tuple(unreadable))
