"""Footer-scan benchmark: schemaguard's scan against a bare pyarrow loop and Spark's mergeSchema.

Run with `make bench` (or `.venv/bin/python bench/footer_scan.py --files 500 --repeat 2` to try it
small). It builds, once, a hive-partitioned Parquet table with a few distinct writer schemas under
`.bench/` (git-ignored) and reuses it; a marker file written last means a half-written table is
rebuilt. Then, in one run, it measures best-of-K wall time with a warm page cache (the
repetitions of a and b interleaved) of:

  a. schemaguard's scan as `schemaguard scan` does it: lake.table.read (listing, footers, versions)
     (listing, footers, statistics and versions), with the footer-schema cache cleared before
     each repetition;
  b. a bare `pyarrow.parquet.read_metadata` loop over the same paths (listed before timing);
  c. Spark's `spark.read.option("mergeSchema", "true").parquet(path).schema` in a warm session;

and the peak memory of one scan in a fresh subprocess. Targets (docs/reference/parquet-and-spark.md §5): the
scan runs at >= 0.8x the speed of the bare pyarrow loop and >= 3x the speed of Spark's merge.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemaguard.spark import BRIEF_JIT

if TYPE_CHECKING:
    from schemaguard.proofs import ProofKind

REPO = Path(__file__).resolve().parents[1]
CACHE_DIR = REPO / ".bench" / "footer_scan"
GENERATOR_VERSION = 1  # bump when the generated table changes, so old caches are rebuilt
SEED = 20240101
MAX_PARTITIONS = 100
FIRST_DAY = date(2024, 1, 1)
TARGET_VS_PYARROW = 0.8  # scan speed / bare read_metadata loop speed
TARGET_VS_SPARK = 3.0  # scan speed / Spark mergeSchema speed
NOISY_ABOVE = 0.1  # cores used by other processes while timing, on average

BASE_FIELDS = (
    pa.field("id", pa.int64()),
    pa.field("user", pa.string()),
    pa.field("amount", pa.decimal128(12, 2)),
    pa.field("ts", pa.timestamp("us", tz="UTC")),
    pa.field("tags", pa.list_(pa.string())),
)
EXTRA_NOTE = pa.field("extra_note", pa.string())  # every 4th file
SCORE = pa.field("score", pa.float64())  # every 10th file (i % 10 == 3)

# The scan as `schemaguard scan` does it, in a fresh interpreter, printing its peak memory as JSON.
# It forks first: Linux carries the spawning process's peak RSS over fork+exec into the new
# program's ru_maxrss (so this interpreter reports the bench's own peak), but a forked child starts
# from zero. The child then starts its own workers, which RUSAGE_CHILDREN covers.
MEMORY_PROBE = """
import os, sys
pid = os.fork()
if pid:
    sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
import json, resource, time
from schemaguard.lake.table import read
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
table = read(sys.argv[1])
print(json.dumps({
    "seconds": time.perf_counter() - start,
    "files": len(table.listing.files),
    "after_imports_kb": before,
    "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    "versions": len(table.versions),
}))
"""


def log(message: str) -> None:
    print(message, flush=True)


# ---------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True, slots=True)
class Layout:
    files: int
    per_partition: int

    @property
    def partitions(self) -> int:
        return math.ceil(self.files / self.per_partition)

    def day(self, i: int) -> date:
        return FIRST_DAY + timedelta(days=i // self.per_partition)

    def rel_path(self, i: int) -> str:
        return f"dt={self.day(i).isoformat()}/part-{i:05d}.parquet"


def layout_for(n_files: int) -> Layout:
    partitions = min(MAX_PARTITIONS, n_files)
    return Layout(n_files, math.ceil(n_files / partitions))


def file_schema(i: int) -> pa.Schema:
    fields = list(BASE_FIELDS)
    if i % 4 == 0:
        fields.append(EXTRA_NOTE)
    if i % 10 == 3:
        fields.append(SCORE)
    return pa.schema(fields)


def distinct_schemas(n_files: int) -> int:
    return len({file_schema(i).to_string() for i in range(n_files)})


def make_table(i: int, day: date, rng: random.Random) -> pa.Table:
    n = rng.randint(40, 60)
    midnight_us = int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) * 10**6
    columns: dict[str, list[Any]] = {
        "id": list(range(i * 100, i * 100 + n)),
        "user": [f"user{rng.randrange(5000):04d}" for _ in range(n)],
        "amount": [Decimal(rng.randrange(-10**5, 10**7)).scaleb(-2) for _ in range(n)],
        "ts": [midnight_us + rng.randrange(86_400 * 10**6) for _ in range(n)],
        "tags": [rng.sample(["a", "b", "c", "vip", "new"], rng.randint(0, 3)) for _ in range(n)],
        "extra_note": [None if rng.random() < 0.3 else f"note {i}-{k}" for k in range(n)],
        "score": [None if rng.random() < 0.2 else rng.random() * 100 for _ in range(n)],
    }
    schema = file_schema(i)
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema}, schema=schema)


def marker_text(n_files: int) -> str:
    return json.dumps({"generator": GENERATOR_VERSION, "files": n_files, "seed": SEED})


def cached(name: str, text: str, make: Callable[[Path], object]) -> Path:
    """`.bench/footer_scan/<name>/table`, made by `make` unless a marker written after the last
    run of `make` holds `text` (a half-written or outdated table is made again)."""
    case = CACHE_DIR / name
    table, marker = case / "table", case / "COMPLETE"
    if marker.exists() and marker.read_text() == text:
        log(f"reusing cached table {table.relative_to(REPO)}")
        return table
    if case.exists():
        log(f"discarding incomplete or outdated cache {case.relative_to(REPO)}")
        shutil.rmtree(case)
    make(table)
    marker.write_text(text)
    return table


def ensure_table(n_files: int) -> Path:
    """The cached table for `n_files`."""
    return cached(f"n{n_files}", marker_text(n_files), lambda table: generate(table, layout_for(n_files)))


def generate(table: Path, layout: Layout) -> None:
    log(f"generating {layout.files:,} files in {layout.partitions} partitions under "
        f"{table.relative_to(REPO)} ...")
    rng = random.Random(SEED)
    start = time.perf_counter()
    step = max(1, layout.files // 10)
    for i in range(layout.files):
        path = table / layout.rel_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(make_table(i, layout.day(i), rng), path)
        if (i + 1) % step == 0 or i + 1 == layout.files:
            log(f"  {i + 1:>7,} / {layout.files:,} files  ({time.perf_counter() - start:.1f} s)")


def list_paths(table: Path) -> list[str]:
    return sorted(str(p) for p in table.rglob("*.parquet"))


# ---------------------------------------------------------------------------------------------
# Timing


@dataclass(frozen=True, slots=True)
class Timing:
    method: str
    runs: tuple[float, ...]
    files: int

    @property
    def best(self) -> float:
        return min(self.runs)

    @property
    def rate(self) -> float:
        return self.files / self.best


def interleaved(repeat: int, works: dict[str, Callable[[], object]]) -> dict[str, list[float]]:
    """Wall times of each work, run round-robin `repeat` times so that a change in background
    load hits every method alike. The footer-schema cache is cleared (untimed) before each run."""
    runs: dict[str, list[float]] = {name: [] for name in works}
    for _ in range(repeat):
        for name, work in works.items():
            clear_footer_cache()
            start = time.perf_counter()
            work()
            runs[name].append(time.perf_counter() - start)
    return runs


def wall(work: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def clear_footer_cache() -> None:
    from schemaguard.formats.parquet import forget_footer_schemas

    forget_footer_schemas()


@dataclass(frozen=True, slots=True)
class ScanOutcome:
    footers: int
    unreadable: int
    versions: int


def schemaguard_scan(table: Path, workers: int | None = None) -> ScanOutcome:
    """What `schemaguard scan` does before rendering: listing, footers and stats, versions."""
    from schemaguard.lake.table import read

    found = read(str(table), workers=workers)
    return ScanOutcome(len(found.scan.footers), len(found.scan.unreadable), len(found.versions))


def schemaguard_audit(table: Path) -> int:
    """What `schemaguard audit --no-catalog` computes before rendering: the scan, every finding, and
    every version against the newest under spark-read FULL_TRANSITIVE. Returns the findings."""
    from schemaguard.auditing import run_audit
    from schemaguard.config import parse_config

    raw = {"catalog": {"enabled": False}, "tables": [{"path": str(table)}]}
    return len(run_audit(parse_config(raw, table.parent / "bench.toml")).all_findings)


def bare_pyarrow(paths: Sequence[str]) -> int:
    rows = 0
    for p in paths:
        rows += pq.read_metadata(p).num_rows
    return rows


SCAN = "(a) schemaguard scan"
SCAN_ONE_WORKER = "    diag: scan with one worker process"
AUDIT = "    diag: audit (scan + findings), no catalog"
BARE = "(b) bare pq.read_metadata loop"


def time_local(table: Path, paths: Sequence[str], repeat: int) -> dict[str, Timing]:
    log("timing (a) schemaguard lake.table.read (listing, footers, versions), the same with one worker "
        "(diagnostic), and (b) a bare pyarrow.parquet.read_metadata loop, interleaved ...")
    works: dict[str, Callable[[], object]] = {
        SCAN: lambda: schemaguard_scan(table),
        SCAN_ONE_WORKER: lambda: schemaguard_scan(table, workers=1),
        AUDIT: lambda: schemaguard_audit(table),
        BARE: lambda: bare_pyarrow(paths),
    }
    runs = interleaved(repeat, works)
    return {name: Timing(name, tuple(r), len(paths)) for name, r in runs.items()}


@dataclass(frozen=True, slots=True)
class SparkResult:
    start_s: float
    first_query_s: float
    timing: Timing
    engine: Timing  # schemaguard's Spark engine (--engine spark) in the same session
    fields: int
    others: float | None  # cores used by other processes while timing


def time_spark(table: Path, n_files: int, repeat: int) -> SparkResult:
    home = tempfile.mkdtemp(prefix="schemaguard-bench-")
    os.environ["SCHEMAGUARD_HOME"] = home  # metastore, warehouse and derby.log go here
    try:
        log("starting Spark (pyspark import + JVM + session) ...")
        start = time.perf_counter()
        from schemaguard.spark import get_spark

        spark = get_spark("bench")
        start_s = time.perf_counter() - start

        from schemaguard.lake.table import read

        def merged_schema() -> object:
            return spark.read.option("mergeSchema", "true").parquet(str(table)).schema

        def spark_engine() -> object:
            return read(str(table), spark=spark)

        log("timing (c) Spark mergeSchema and (d) schemaguard's Spark engine: one warm-up each, then "
            "interleaved best-of ...")
        first_s, schema = wall(merged_schema)
        spark_engine()  # starts the Python workers, as a first query starts Spark's readers
        before = cpu_snapshot()
        runs = interleaved(repeat, {"merge": merged_schema, "engine": spark_engine})
        others = others_cores(before, cpu_snapshot())
        spark.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    fields = len(schema.fields)  # type: ignore[attr-defined]
    return SparkResult(start_s, first_s,
                       Timing("(c) Spark mergeSchema (warm session)", tuple(runs["merge"]), n_files),
                       Timing("(d) schemaguard, Spark engine", tuple(runs["engine"]), n_files),
                       fields, others)


# ---------------------------------------------------------------------------------------------
# Memory


@dataclass(frozen=True, slots=True)
class Memory:
    after_imports_kb: int
    self_kb: int
    children_kb: int
    seconds: float  # the scan's time in the probe (listing, footers, versions)
    files: int


def measure_memory(table: Path) -> Memory:
    log("measuring peak memory of one scan in a fresh subprocess ...")
    proc = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(table)],
                          capture_output=True, text=True, check=True)
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return Memory(data["after_imports_kb"], data["self_kb"], data["children_kb"], data["seconds"],
                  data["files"])


# ---------------------------------------------------------------------------------------------
# Other processes competing for the CPU (Linux /proc; the load average would count our workers)


@dataclass(frozen=True, slots=True)
class CpuSnapshot:
    wall: float
    busy: float  # CPU seconds the whole machine spent busy since boot
    ours: float  # CPU seconds of this process, its reaped children and its live descendants


def cpu_snapshot() -> CpuSnapshot | None:
    if not Path("/proc/stat").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:8]]  # user .. softirq (steal apart)
    busy = (sum(ticks) - ticks[3] - ticks[4]) / tick  # minus idle and iowait
    t = os.times()
    ours = t.user + t.system + t.children_user + t.children_system
    procs = _processes()
    ours += sum(cpu for pid, (_, cpu) in procs.items() if _descends(pid, os.getpid(), procs))
    return CpuSnapshot(time.perf_counter(), busy, ours)


def _processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds) for every process still in /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[int, float]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
        out[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    return out


def _descends(pid: int, root: int, procs: dict[int, tuple[int, float]]) -> bool:
    while pid in procs and pid > 1:
        pid = procs[pid][0]
        if pid == root:
            return True
    return False


def others_cores(start: CpuSnapshot | None, end: CpuSnapshot | None) -> float | None:
    """Average number of cores other processes kept busy between two snapshots."""
    if start is None or end is None:
        return None
    other = (end.busy - start.busy) - (end.ours - start.ours)
    return max(0.0, other / (end.wall - start.wall))


# ---------------------------------------------------------------------------------------------
# Report


def mib(kb: int) -> str:
    return f"{kb / 1024:,.1f} MiB"  # Linux reports ru_maxrss in KiB


def fmt_cores(cores: float | None) -> str:
    return "n/a (no /proc)" if cores is None else f"{cores:.2f} cores"


MISSED: list[str] = []  # every target missed in this run: the bench exits non-zero when any is


def met(ok: bool, what: str) -> str:
    """PASS or MISS for one target, the miss remembered for the exit status."""
    if not ok:
        MISSED.append(what)
    return "PASS" if ok else "MISS"


def verdict(ratio: float, target: float, what: str = "") -> str:
    return met(ratio >= target, what or f"ratio {ratio:.2f} below {target}")


def print_table(timings: Sequence[Timing]) -> None:
    width = max(len(t.method) for t in timings)
    log(f"\n{'method':<{width}}  {'best s':>8}  {'files/s':>9}  runs (s)")
    log("-" * (width + 40))
    for t in timings:
        runs = " ".join(f"{r:.3f}" for r in t.runs)
        log(f"{t.method:<{width}}  {t.best:>8.3f}  {t.rate:>9,.0f}  {runs}")


@dataclass(frozen=True, slots=True)
class Report:
    n_files: int
    repeat: int
    layout: Layout
    scan: Timing
    scan_one_worker: Timing
    audit: Timing
    bare: Timing
    spark: SparkResult
    outcome: ScanOutcome
    memory: Memory
    local_others: float | None  # cores used by other processes while timing a and b


def print_report(r: Report) -> None:
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    log("\n=== footer scan benchmark ===")
    log(f"table: {r.n_files:,} files, {r.layout.partitions} partitions (dt=YYYY-MM-DD), "
        "~50 rows each")
    log(f"machine: {cores} cores ({usable} usable), {platform.machine()}, Python "
        f"{platform.python_version()}, pyarrow {pa.__version__}")
    log(f"timing: best of {r.repeat} wall-clock runs, warm OS page cache (every file read once "
        "before timing; caches not dropped)")
    log(f"CPU used by other processes while timing: {fmt_cores(r.local_others)} (a, b), "
        f"{fmt_cores(r.spark.others)} (c)")
    if max(r.local_others or 0.0, r.spark.others or 0.0) > NOISY_ABOVE:
        log("WARNING: other processes competed for the CPU; the figures are noisy, rerun when idle")
    print_table([r.scan, r.scan_one_worker, r.audit, r.bare, r.spark.timing, r.spark.engine])
    vs_bare = r.bare.best / r.scan.best
    vs_spark = r.spark.timing.best / r.scan.best
    log("\nratios (scan speed relative to the other method; higher is better):")
    log(f"  scan vs bare pyarrow loop : {vs_bare:5.2f}x  (target >= {TARGET_VS_PYARROW}x)  "
        f"{verdict(vs_bare, TARGET_VS_PYARROW, 'scan vs bare loop')}")
    log(f"  scan vs Spark mergeSchema : {vs_spark:5.2f}x  (target >= {TARGET_VS_SPARK}x)  "
        f"{verdict(vs_spark, TARGET_VS_SPARK, 'scan vs Spark mergeSchema')}")
    vs_merge = r.spark.timing.best / r.spark.engine.best
    log(f"  Spark engine vs Spark mergeSchema, one session: {vs_merge:5.2f}x  (target >= 1x)  "
        f"{verdict(vs_merge, 1.0, 'Spark engine vs mergeSchema')}")
    log(f"\nSpark (local[*] = local[{os.cpu_count()}] here, UI off):")
    log(f"  session start (pyspark import + JVM + SparkSession): {r.spark.start_s:.2f} s")
    log(f"  first (cold) mergeSchema query, the untimed warm-up: {r.spark.first_query_s:.2f} s")
    log(f"  merged schema: {r.spark.fields} fields (data columns + partition column dt)")
    expected = distinct_schemas(r.n_files)
    sanity = "OK" if r.outcome.versions == expected else "MISMATCH"
    log("\nsanity:")
    log(f"  schema versions found: {r.outcome.versions} (distinct schemas generated: {expected}) "
        f"{sanity}")
    log(f"  footers read: {r.outcome.footers:,}, unreadable: {r.outcome.unreadable}")
    print_memory(r.memory)


def print_memory(memory: Memory) -> None:
    log("\npeak memory of one scan (fresh subprocess, ru_maxrss = peak resident set size):")
    log(f"  scanning process (RUSAGE_SELF)        : {mib(memory.self_kb)}"
        f"  (of which {mib(memory.after_imports_kb)} already after imports)")
    log(f"  largest worker (RUSAGE_CHILDREN)      : {mib(memory.children_kb)}"
        "  (peak of the single largest child, not a sum)")
    log(f"  max of the two                        : {mib(max(memory.self_kb, memory.children_kb))}")
    log("  a forked worker's RSS counts the pages it shares copy-on-write with the scanning")
    log("  process, so the combined footprint lies between the max and self + workers x largest.")


# ---------------------------------------------------------------------------------------------
# Whole processes: what a user runs


BARE_LOOP = """
import os, sys
import pyarrow.parquet as pq
paths = []
for folder, _, names in os.walk(sys.argv[1]):
    paths += [os.path.join(folder, n) for n in names if n.endswith(".parquet")]
for p in sorted(paths):
    pq.read_metadata(p)
"""


@dataclass(frozen=True, slots=True)
class ProcessPair:
    label: str
    ours: Timing
    bare: Timing


def process_times(label: str, table: Path, files: int, repeat: int) -> ProcessPair:
    """`schemaguard scan TABLE --format json` and the bare read_metadata loop, each as a whole
    process (interpreter start, imports, listing, output), run in turn."""
    log(f"timing whole processes on the {label}: schemaguard scan vs the bare loop, in turn ...")
    scan_cmd = [str(Path(sys.executable).parent / "schemaguard"), "scan", str(table), "--format", "json"]
    bare_cmd = [sys.executable, "-c", BARE_LOOP, str(table)]
    ours: list[float] = []
    bare: list[float] = []
    for _ in range(repeat):
        for cmd, runs in ((scan_cmd, ours), (bare_cmd, bare)):
            start = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, check=False)
            runs.append(time.perf_counter() - start)
            if done.returncode not in (0, 1):
                sys.exit(f"{cmd[0]} failed: {done.stderr.decode()[-500:]}")
    return ProcessPair(label, Timing("schemaguard scan (process)", tuple(ours), files),
                       Timing("bare loop (process)", tuple(bare), files))


def help_time(repeat: int) -> float:
    cmd = [str(Path(sys.executable).parent / "schemaguard"), "--help"]
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        runs.append(time.perf_counter() - start)
    return min(runs)


# ---------------------------------------------------------------------------------------------
# Scale: a wide table and a table of many files


WIDE_VERSION = 1


def ensure_wide_table(columns: int) -> Path:
    """Two files of `columns` int64 columns each; the second adds one column (two versions)."""

    def make(table: Path) -> None:
        log(f"generating a table of 2 files x {columns:,} columns ...")
        table.mkdir(parents=True)
        for i, extra in enumerate((0, 1)):
            names = [f"c{j:05d}" for j in range(columns + extra)]
            pq.write_table(pa.table({n: pa.array([i, None], pa.int64()) for n in names}),
                           table / f"part-{i}.parquet")

    return cached(f"wide{columns}", json.dumps({"wide": WIDE_VERSION, "columns": columns}), make)


MANY_VERSION = 1


def ensure_many_files(files: int, linked: bool = False) -> Path:
    """`files` small files in 1,000 partitions: the 10,000-file table's files (real footers, four
    writer schemas) again and again, copied, or as hard links (`linked`: a million directory
    entries cost little disk), so making it takes a minute, not hours."""

    def make(table: Path) -> None:
        sources = list_paths(ensure_table(10_000))
        how = "hard links to" if linked else "copies of"
        log(f"making {files:,} files ({how} the 10,000-file table's) ...")
        per = math.ceil(files / 1000)
        place = os.link if linked else shutil.copyfile
        for i in range(files):
            folder = table / f"dt={FIRST_DAY + timedelta(days=i // per)}"
            if i % per == 0:
                folder.mkdir(parents=True)
            place(sources[i % len(sources)], folder / f"part-{i:07d}.parquet")

    name, version = ("linked", LINKED_VERSION) if linked else ("many", MANY_VERSION)
    return cached(f"{name}{files}", json.dumps({name: version, "files": files}), make)


LINKED_VERSION = 1
TINY_VERSION = 1
TINY_PARTITIONS = 200


def ensure_tiny_files(files: int) -> Path:
    """`files` tiny footers (4 flat columns, or 5 in every third file: two writer schemas) in
    TINY_PARTITIONS partitions: where the footer decode is cheap and the per-file costs around it
    (listing, sending to workers, history, output) are what a scan's time is made of."""

    def make(table: Path) -> None:
        log(f"making {files:,} tiny-footer files in {TINY_PARTITIONS} partitions ...")
        sources = table.parent / "sources"
        sources.mkdir(parents=True)
        four = {"id": pa.array([1], pa.int64()), "name": pa.array(["a"]), "amount": pa.array([1.5]),
                "ok": pa.array([True])}
        pq.write_table(pa.table(four), sources / "four.parquet")
        pq.write_table(pa.table({**four, "note": pa.array(["n"])}), sources / "five.parquet")
        per = math.ceil(files / TINY_PARTITIONS)
        for i in range(files):
            folder = table / f"dt={FIRST_DAY + timedelta(days=i // per)}"
            if i % per == 0:
                folder.mkdir(parents=True)
            shutil.copyfile(sources / ("five.parquet" if i % 3 == 2 else "four.parquet"),
                            folder / f"part-{i:07d}.parquet")

    return cached(f"tiny{files}", json.dumps({"tiny": TINY_VERSION, "files": files}), make)


@dataclass(frozen=True, slots=True)
class IncrementalResult:
    files: int
    first: float  # the run that writes the cache
    rerun: Timing  # the table unchanged: every footer from the cache
    full: Timing  # the same read without the cache


def time_incremental(table: Path, repeat: int) -> IncrementalResult:
    """What an audit's read of a table costs when nothing changed since the last audit (footers
    from the cache beside the reports, lake/cache.py) against reading every footer."""
    from schemaguard.lake.discover import discover
    from schemaguard.lake.table import read_listing

    home, reports = Path(tempfile.mkdtemp(prefix="schemaguard-bench-")), Path(tempfile.mkdtemp())
    os.environ["SCHEMAGUARD_HOME"] = str(home)  # the cache's signing key goes there
    try:
        log(f"timing the incremental rerun of {table.parent.name}: the first read writes the cache ...")
        first, _ = wall(lambda: read_listing(discover(str(table)), report_dir=reports))
        runs = interleaved(repeat, {
            "rerun": lambda: read_listing(discover(str(table)), report_dir=reports),
            "full": lambda: read_listing(discover(str(table)))})
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(reports, ignore_errors=True)
    n = len(list_paths(table))
    return IncrementalResult(n, first, Timing("rerun, table unchanged (cache)", tuple(runs["rerun"]), n),
                             Timing("full read (no cache)", tuple(runs["full"]), n))


def print_incremental(r: IncrementalResult) -> None:
    log("\n=== incremental rerun (listing, footers, versions; in-process, best of runs) ===")
    print_table([r.rerun, r.full])
    log(f"  {r.files:,} unchanged files: the rerun takes {r.rerun.best:.2f} s against {r.full.best:.2f} s "
        f"for a full read ({r.full.best / r.rerun.best:.1f}x faster); the first run, writing the cache: "
        f"{r.first:.2f} s")
    share = r.rerun.best / r.first
    log(f"  the rerun is {share:.2f} of the first run (target 0.3) "
        f"{met(share <= 0.3, 'an unchanged rerun within 0.3 of the first run')}")


def print_memory_at_scale(results: Sequence[tuple[str, Memory]]) -> None:
    log("\n=== memory at scale (one scan in a fresh process: listing, footers, versions) ===")
    log(f"  {'table':<22} {'files':>10} {'peak, scanning':>15} {'peak, worker':>13} {'time':>8} "
        f"{'per file':>9}")
    for label, m in results:
        log(f"  {label:<22} {m.files:>10,} {mib(m.self_kb):>15} {mib(m.children_kb):>13} {m.seconds:>7.1f}s "
            f"{m.seconds / max(m.files, 1) * 1e6:>6.0f} us")


@dataclass(frozen=True, slots=True)
class ScaleResult:
    label: str
    scan: Timing
    bare: Timing
    memory: Memory


def time_scale(label: str, table: Path, repeat: int) -> ScaleResult:
    paths = list_paths(table)
    bare_pyarrow(paths)  # warm the page cache
    log(f"timing the {label}: schemaguard lake.table.read vs the bare loop, interleaved ...")
    runs = interleaved(repeat, {"scan": lambda: schemaguard_scan(table), "bare": lambda: bare_pyarrow(paths)})
    return ScaleResult(label, Timing(f"scan, {label}", tuple(runs["scan"]), len(paths)),
                       Timing(f"bare loop, {label}", tuple(runs["bare"]), len(paths)),
                       measure_memory(table))


def print_scale(results: Sequence[ScaleResult], processes: Sequence[ProcessPair], help_s: float) -> None:
    if results:  # none when --wide 0 --many 0
        log("\n=== scale: a wide table and many files (in-process, best of runs) ===")
        print_table([t for r in results for t in (r.scan, r.bare)])
    for r in results:
        ratio = r.scan.best / r.bare.best
        peak = mib(max(r.memory.self_kb, r.memory.children_kb))
        log(f"  {r.label}: scan takes {ratio:.2f}x the bare loop's time (target <= 3x) "
            f"{met(ratio <= 3, r.label)}; peak memory {peak}")
    print_pairs("whole processes (what a user runs; best of runs)", processes, faster_than_the_loop)
    log(f"  schemaguard --help: {help_s:.2f} s (target < 0.3 s) {met(help_s < 0.3, '--help')}")


def print_pairs(title: str, pairs: Sequence[ProcessPair], verdict: Callable[[ProcessPair], str]) -> None:
    """Whole-process pairs as a table, then each pair's verdict line."""
    log(f"\n=== {title} ===")
    print_table([t for p in pairs for t in (p.ours, p.bare)])
    for p in pairs:
        log(f"  {p.label}: {verdict(p)}")


def faster_than_the_loop(p: ProcessPair) -> str:
    ratio = p.bare.best / p.ours.best
    return (f"schemaguard scan runs at {ratio:.2f}x the speed of the bare loop process (target > 1x) "
            f"{met(ratio > 1, p.label + ', whole process')}")


def within_3x_of_the_loop(p: ProcessPair) -> str:
    ratio = p.ours.best / p.bare.best
    return f"{ratio:.2f}x the bare loop's time (target <= 3x) {met(ratio <= 3, 'hostile: ' + p.label)}"


# ---------------------------------------------------------------------------------------------
# Hostile shapes: tables built to find what is quadratic (in columns, versions, conflicts, depth)

HOSTILE_VERSION = 1


def _nested(depth: int, leaf: pa.DataType) -> pa.DataType:
    for level in range(depth):
        leaf = pa.struct([pa.field(f"s{level}", leaf)])
    return leaf


def _one_row(columns: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({name: pa.array([None], t) for name, t in columns.items()})


def _every_column_changes(table: Path, columns: int) -> None:
    """2 files: every int32 column of the first is int64 in the second (a pipeline moved to long)."""
    for i, t in enumerate((pa.int32(), pa.int64())):
        pq.write_table(_one_row({f"c{j}": t for j in range(columns)}), table / f"part-{i}.parquet")


def _half_dropped_half_added(table: Path, columns: int) -> None:
    half = columns // 2
    pq.write_table(_one_row({f"c{j}": pa.int32() for j in range(columns)}), table / "part-0.parquet")
    pq.write_table(_one_row({**{f"c{j}": pa.int32() for j in range(half, columns)},
                             **{f"d{j}": pa.int32() for j in range(half)}}), table / "part-1.parquet")


def _nested_structs(table: Path, columns: int) -> None:
    """`columns` struct columns 5 deep; the second file's leaves are int64 (a conflict each)."""
    for i, leaf in enumerate((pa.int32(), pa.int64())):
        pq.write_table(_one_row({f"n{j}": _nested(5, leaf) for j in range(columns)}),
                       table / f"part-{i}.parquet")


def _many_versions(table: Path, versions: int) -> None:
    """`versions` files of 500 columns, each its own schema: one column of its own, and a
    seventh of the columns int64 by turns."""
    for v in range(versions):
        columns = {f"c{j}": pa.int64() if (j + v) % 7 == 0 else pa.int32() for j in range(500)}
        pq.write_table(_one_row({**columns, f"v{v}": pa.int32()}), table / f"part-{v:04d}.parquet")


def _delta_half_replaced(table: Path, columns: int) -> None:
    """A Delta table (delta-rs) of `columns` columns, then overwritten with half of them dropped and
    half added: the scan reads the snapshot's file and diffs the log's two schemas."""
    from deltalake import write_deltalake

    half = columns // 2
    write_deltalake(str(table), _one_row({f"c{j}": pa.int32() for j in range(columns)}))
    write_deltalake(str(table), _one_row({**{f"c{j}": pa.int32() for j in range(half, columns)},
                                          **{f"d{j}": pa.int32() for j in range(half)}}),
                    mode="overwrite", schema_mode="overwrite")


def _one_file_partitions(table: Path, partitions: int) -> None:
    small = pa.table({"id": pa.array([1], pa.int64()), "note": pa.array(["a"])})
    for p in range(partitions):
        (table / f"p={p}").mkdir()
        pq.write_table(small, table / f"p={p}" / "part-0.parquet")


def _deep_column(table: Path, depth: int) -> None:
    """One column `depth` structs deep (pyarrow reads at most 100 levels of a footer's tree, root
    and leaf included); the second file's leaf is int64."""
    for i, leaf in enumerate((pa.int32(), pa.int64())):
        pq.write_table(_one_row({"deep": _nested(depth, leaf)}), table / f"part-{i}.parquet")


HOSTILE: tuple[tuple[str, Callable[[Path, int], None], int], ...] = (
    ("every column changes type, 2 files x {n:,} columns", _every_column_changes, 20_000),
    ("half dropped and half added, {n:,} columns", _half_dropped_half_added, 20_000),
    ("a Delta log dropping half and adding half of {n:,} columns", _delta_half_replaced, 20_000),
    ("{n:,} nested structs 5 deep, every leaf widened", _nested_structs, 1_000),
    ("{n} versions x 500 columns", _many_versions, 200),
    ("{n:,} partitions of one file each", _one_file_partitions, 10_000),
    ("a column nested {n} levels", _deep_column, 98),
)


def ensure_hostile(name: str, make: Callable[[Path, int], None], n: int) -> Path:
    def build(table: Path) -> None:
        log(f"generating the hostile shape: {name.format(n=n)} ...")
        table.mkdir(parents=True)
        make(table, n)

    key = f"hostile-{make.__name__.strip('_')}-{n}"
    return cached(key, json.dumps({"hostile": HOSTILE_VERSION, "shape": make.__name__, "n": n}), build)


def time_hostile(repeat: int) -> list[ProcessPair]:
    tables = [(name.format(n=n), ensure_hostile(name, make, n)) for name, make, n in HOSTILE]
    return [process_times(label, table, len(list_paths(table)), repeat) for label, table in tables]




DELTA_VERSION = 1
DELTA_COMMITS = 100


def ensure_delta_table(files: int) -> Path:
    """A Delta table of `files` data files written by delta-rs: DELTA_COMMITS appends of
    files/DELTA_COMMITS partitions each (one file per partition), a checkpoint, one more commit."""
    from deltalake import DeltaTable, write_deltalake

    def make(table: Path) -> None:
        log(f"generating a Delta table of {files:,} files with delta-rs ...")
        per = max(1, files // DELTA_COMMITS)
        for commit in range(math.ceil(files / per)):
            parts = list(range(per))
            write_deltalake(str(table), pa.table({"id": [commit * per + p for p in parts], "part": parts,
                                                  "note": [f"c{commit}"] * per}),
                            partition_by=["part"], mode="append")
            if commit == DELTA_COMMITS - 2:
                DeltaTable(str(table)).create_checkpoint()

    return cached(f"delta{files}", json.dumps({"delta": DELTA_VERSION, "files": files}), make)


@dataclass(frozen=True, slots=True)
class DeltaResult:
    files: int
    log: Timing
    listing: Timing


def time_delta(files: int, repeat: int) -> DeltaResult:
    """The snapshot from the log against a listing of the same directory (both in-process)."""
    from pyarrow import fs as pafs

    from schemaguard.formats.delta import read_delta_log
    from schemaguard.lake.discover import discover

    table = ensure_delta_table(files)
    local = pafs.LocalFileSystem()
    log_dir = str(table / "_delta_log")
    snapshot = read_delta_log(local, log_dir, log_dir)
    log(f"timing the {len(snapshot.files):,}-file Delta table: its snapshot from the log vs a listing ...")
    runs = interleaved(repeat, {"log": lambda: read_delta_log(local, log_dir, log_dir),
                                "listing": lambda: discover(str(table))})
    n = len(snapshot.files)
    return DeltaResult(n, Timing("Delta snapshot from the log", tuple(runs["log"]), n),
                       Timing("listing the directory", tuple(runs["listing"]), n))


def print_delta(r: DeltaResult) -> None:
    log(f"\n=== a Delta table of {r.files:,} files (in-process, best of runs) ===")
    print_table([r.log, r.listing])
    ratio = r.log.best / r.listing.best
    log(f"  reading the snapshot from the log takes {ratio:.2f}x the listing's time (target < 1x) "
        f"{met(ratio < 1, 'Delta log vs listing')}")


# ---------------------------------------------------------------------------------------------
# Proofs: statistics alone, and the data path on a tenth of the files


@dataclass(frozen=True, slots=True)
class ProofsResult:
    files: int
    stats: Timing  # the not-null proof over a read table, from the footers' statistics
    verdict: str
    data_files: int
    data: Timing  # the data path (Spark + Great Expectations) on a tenth of the files
    data_rows: int
    one_pass: Timing  # four data proofs at once (gx_spark.one_pass) on the same files
    by_hand: Timing  # the same four conditions as one hand-written aggregation: the physical limit


def time_proofs(table: Path, repeat: int) -> ProofsResult:
    from schemaguard.lake.table import read
    from schemaguard.proofs import Proof
    from schemaguard.proofs.gx_spark import prove_on_data
    from schemaguard.proofs.run import run_proofs

    read_table = read(str(table))
    proof = Proof("not-null", "user")

    def no_spark() -> Any:
        raise AssertionError("statistics decide not-null here: no data may be read")

    log("timing the not-null proof from statistics alone ...")
    runs = tuple(wall(lambda: run_proofs(read_table, [proof], spark=no_spark))[0] for _ in range(repeat))
    [result] = run_proofs(read_table, [proof], spark=no_spark)
    footers = sorted(read_table.scan.footers, key=lambda f: f.rel)
    tenth = footers[:: 10]
    home = tempfile.mkdtemp(prefix="schemaguard-bench-")
    os.environ["SCHEMAGUARD_HOME"] = home
    try:
        from schemaguard.spark import get_spark

        spark = get_spark("bench-proofs")
        log(f"timing the not-null proof's data path on {len(tenth):,} files (Spark + Great Expectations) ...")

        def on_data() -> object:
            return prove_on_data(spark, read_table.listing.root, proof, tenth, ["user"], (), False)

        wall(on_data)  # warm-up: the first validation pays GX's and the JVM's start
        data_runs = tuple(wall(on_data)[0] for _ in range(repeat))
        rows = sum(f.rows for f in tenth)
        pass_runs, hand_runs = four_proofs(spark, read_table.listing.root, tenth, repeat)
        spark.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return ProofsResult(len(footers), Timing("not-null from statistics", runs, len(footers)), result.verdict,
                        len(tenth), Timing("not-null on the data (Spark + GX)", data_runs, len(tenth)), rows,
                        Timing("four proofs in one pass (Spark + GX)", pass_runs, len(tenth)),
                        Timing("the same, one hand-written aggregation", hand_runs, len(tenth)))


# Four proofs statistics could not decide (their conditions as the proofs write them): not-null,
# agree (an expression), fits a narrower decimal, values in a set.
FOUR_PROOFS: tuple[tuple[ProofKind, str, str | None], ...] = (
    ("not-null", "user", None), ("agree", "id = id", None), ("fits", "amount", "decimal(9,2)"),
    ("values", "user", None))


def four_proofs(spark: Any, root: str, files: Sequence[Any], repeat: int
                ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """`one_pass` with the four proofs' questions against one hand-written aggregation of the
    same conditions over the same files, interleaved, after a warm-up of each."""
    from pyspark.sql import functions as F

    from schemaguard.formats.notation import parse_primitive
    from schemaguard.proofs import Proof
    from schemaguard.proofs.gx_spark import Question, condition, named_columns, one_pass
    from schemaguard.proofs.stats import Lookup

    proofs = [Proof(kind, column, target=target, allowed=tuple(f"user{i:04d}" for i in range(4000))
                    if kind == "values" else None) for kind, column, target in FOUR_PROOFS]
    def kind(column: str) -> Any:  # the column's type as the files' footers say (the proofs' Lookup)
        found = Lookup(column)(files[0].footer)
        return found.type if found is not None else None

    conditions = [condition(p, named_columns(p), kind(p.column), parse_primitive(p.target, "bench")
                            if p.target else None) for p in proofs]
    questions = [Question(c) for c in conditions]

    def by_pass() -> object:
        return one_pass(spark, root, files, None, questions)

    def by_hand() -> object:
        df = spark.read.option("basePath", root).parquet(*(f.path for f in files))
        return df.groupBy(F.input_file_name()).agg(*(F.count_if(F.expr(c)) for c in conditions)).collect()

    by_pass(), by_hand()  # warm-up: each query's first run pays its planning and code generation
    timings = interleaved(repeat, {"pass": by_pass, "hand": by_hand})
    return tuple(timings["pass"]), tuple(timings["hand"])


def print_proofs(r: ProofsResult) -> None:
    log(f"\n=== proofs on the {r.files:,}-file table (in-process, after the table is read, best of runs) ===")
    print_table([r.stats, r.data])
    log(f"  from statistics: {r.verdict}, no data page read; the data path read {r.data_rows:,} rows "
        f"of {r.data_files:,} files")
    print_table([r.one_pass, r.by_hand])
    ratio = min(r.one_pass.runs) / min(r.by_hand.runs)
    missed = f"proofs pass {ratio:.2f}x the hand-written aggregation"
    log(f"  four proofs in one pass: {ratio:.2f}x one hand-written aggregation over the same files "
        f"(target within 1.5x): {met(ratio <= 1.5, missed)}")


# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# An object store answering in 20 ms (moto's S3 server behind a proxy that waits 20 ms a request)


@dataclass(frozen=True, slots=True)
class StoreResult:
    files: int
    timing: Timing
    bare: Timing


def time_object_store(files: int, repeat: int) -> StoreResult:
    """The remote engine's scan of `files` footers on S3 (moto on loopback) with 20 ms added to
    every request, as a store across a network answers, against a bare `read_metadata` loop on as
    many threads through the same store (what the store itself allows)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.parquet as pq
    from pyarrow import fs as pafs

    sys.path.insert(0, str(REPO))
    from schemaguard.lake.discover import REMOTE_THREADS, discover
    from schemaguard.lake.scan import scan
    from tests.s3_store import KEY, SECRET, Faults, moto_server, proxy_process

    sources = list_paths(ensure_table(10_000))[:files]
    keys = [f"bench/t/dt={i // 100}/p{i:06d}.parquet" for i in range(len(sources))]
    with moto_server() as endpoint:
        s3 = pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, endpoint_override=endpoint, scheme="http",
                               region="us-east-1", allow_bucket_creation=True)
        s3.create_dir("bench")
        log(f"uploading {files:,} files to moto's S3 server ...")
        for key, path in zip(keys, sources, strict=True):
            with s3.open_output_stream(key) as out:
                out.write(Path(path).read_bytes())
        faults = Faults(latency=0.020, cache_reads=True)
        environment = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1",
                       "AWS_EC2_METADATA_DISABLED": "true"}
        with proxy_process(endpoint, faults) as proxy:
            os.environ.update(environment, AWS_ENDPOINT_URL=f"http://{proxy}")
            listing = discover("s3://bench/t")  # sets pyarrow's I/O threads, which the bare loop shares
            store = pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, endpoint_override=proxy,
                                      scheme="http", region="us-east-1")
            log(f"timing the remote engine and a bare loop on {REMOTE_THREADS} threads over "
                f"{len(listing.files):,} files, 20 ms a request (the proxy answers from memory after "
                "a first, untimed read through moto) ...")
            scan(listing)

            def schemaguard() -> None:
                result = scan(listing)
                if result.unreadable or len(result.footers) != files:
                    sys.exit(f"object store scan read {len(result.footers)} of {files} files")

            def bare() -> None:
                with ThreadPoolExecutor(REMOTE_THREADS) as pool:
                    list(pool.map(lambda key: pq.read_metadata(key, filesystem=store), keys))

            runs = interleaved(repeat, {"schemaguard": schemaguard, "bare": bare})
        return StoreResult(files, Timing("remote engine, 20 ms store", tuple(runs["schemaguard"]), files),
                           Timing(f"bare read_metadata loop, {REMOTE_THREADS} threads",
                                  tuple(runs["bare"]), files))


def print_store(r: StoreResult) -> None:
    log("\n=== an object store answering in 20 ms (S3 on moto, footers only, best of runs) ===")
    print_table([r.timing, r.bare])
    rate = r.timing.rate
    log(f"  {rate:,.0f} files/s (target >= 1,000) {met(rate >= 1000, 'object store')}; "
        f"{r.bare.best / r.timing.best:.2f}x the bare loop's speed; two requests a file (pyarrow's "
        "open asks the size, then the tail is read)")


# ---------------------------------------------------------------------------------------------
# The demo run (`make run`'s audit): where its time goes, the catalog write above all


@dataclass(frozen=True, slots=True)
class DemoResult:
    runs: tuple[dict[str, float], ...]  # each run's `seconds` (its JSON), the first creating the tables
    walls: tuple[float, ...]  # each whole process, interpreter start included
    user: tuple[dict[str, float], ...]  # the same audit through `sg.audit(spark=...)` on a user's session
    findings: tuple[float, ...]  # `schemaguard findings --conf ...`, whole processes
    make_run: tuple[float, ...]  # `make -s run` in the checkout, warm (its demo lake and tables there)
    bare_start: tuple[float, ...]  # a process that starts a Spark+Delta session and runs one query


# A bare Spark+Delta session: the embedded one started, one query answered (what any job pays first)
BARE_SPARK = "from schemaguard.spark import get_spark; get_spark('bench').sql('SELECT 1').collect()"


# A user's own session, as a notebook builds one: Delta on the classpath and in its settings, its own
# warehouse, none of the embedded session's tuning. Audits the demo with the catalog through it and
# prints the run's `seconds`; one run a process, as the embedded runs, so both meet a cold JVM.
USER_SESSION = """
import json, sys
from pyspark.sql import SparkSession
import schemaguard as sg
from schemaguard.spark import DELTA_CATALOG, DELTA_EXTENSION, delta_jars
spark = (SparkSession.builder.master("local[*]").appName("a-users-notebook")
         .config("spark.jars", ",".join(str(j) for j in delta_jars()))
         .config("spark.sql.extensions", DELTA_EXTENSION)
         .config("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
         .config("spark.sql.warehouse.dir", sys.argv[2] + "/warehouse").config("spark.ui.enabled", "false")
         .config("spark.driver.extraJavaOptions", "-Dderby.system.home=" + sys.argv[2] + " " + sys.argv[3])
         .enableHiveSupport().getOrCreate())  # a catalog that outlives the process, as a platform's
print(json.dumps(sg.audit(sys.argv[1], spark=spark).to_dict()["seconds"]), flush=True)
"""


def time_demo_run(repeat: int) -> DemoResult:
    """`schemaguard audit` of the demo lake with the catalog on, as `make run` runs it, in a home of
    its own (metastore, warehouse): the first run creates the catalog tables, the rest find them."""
    case = CACHE_DIR / "demo"
    shutil.rmtree(case, ignore_errors=True)
    schemaguard = str(Path(sys.executable).parent / "schemaguard")
    env = {**os.environ, "SCHEMAGUARD_HOME": str(case / "home")}
    log("building the demo lake and timing its audit with the catalog (a fresh process each run) ...")
    subprocess.run([schemaguard, "demo", str(case / "lake")], env=env, capture_output=True, check=True)
    conf = case / "schemaguard.toml"
    conf.write_text((REPO / "conf" / "schemaguard.toml").read_text()
                    .replace("../.demo/lake/", f"{case / 'lake'}/")
                    .replace('"../.schemaguard/reports"', '"reports"'))
    runs, walls = [], []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        done = subprocess.run([schemaguard, "audit", "--conf", str(conf), "--format", "json"], env=env,
                              capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            sys.exit(f"the demo audit failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
        runs.append(json.loads(done.stdout)["seconds"])
    findings = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([schemaguard, "findings", "--conf", str(conf)], env=env, capture_output=True,
                       check=True)
        findings.append(time.perf_counter() - start)
    log("  ... and through a session a user builds (sg.audit(conf, spark=session)) ...")
    user = []
    for _ in range(repeat + 1):  # the first creates the tables in its warehouse, as the embedded first
        # its JVM on the JIT the embedded audit of this small lake starts with (auditing.brief_work),
        # so the two writes compare our code on like JVMs; the user's session stays theirs otherwise
        done = subprocess.run([sys.executable, "-c", USER_SESSION, str(conf), str(case / "user-warehouse"),
                               BRIEF_JIT],
                              env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"the audit on a user's session failed (exit {done.returncode}): "
                     f"{done.stderr.strip()[-500:]}")
        user += [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    log("  ... and `make run` itself (warm) against a bare Spark+Delta start, in turn ...")
    # `-o` the venv's stamp: `make run` never reinstalls into the venv this bench runs from
    make = partial(subprocess.run, ["make", "-s", "-o", ".venv/.installed", "run"], cwd=REPO,
                   capture_output=True, check=True)
    make()  # builds the demo lake and its catalog table when missing: not timed
    make_run, bare = [], []
    for _ in range(repeat):
        make_run.append(wall(make)[0])
        bare.append(wall(partial(subprocess.run, [sys.executable, "-c", BARE_SPARK], capture_output=True,
                                 check=True))[0])
    return DemoResult(tuple(runs), tuple(walls), tuple(user), tuple(findings), tuple(make_run), tuple(bare))


def print_demo(r: DemoResult) -> None:
    log("\n=== the demo run: `schemaguard audit` of the demo lake with the catalog, whole processes ===")
    log(f"  {'run':<22} {'process':>8} {'total':>7} {'Spark':>7} {'reading':>8} {'checks':>7} {'proofs':>7} "
        f"{'catalog':>8}")
    for i, (seconds, wall) in enumerate(zip(r.runs, r.walls, strict=True)):
        label = "first (creates tables)" if i == 0 else f"warm tables, run {i}"
        log(f"  {label:<22} {wall:>7.1f}s {seconds['total']:>6.1f}s {seconds['spark_start']:>6.1f}s "
            f"{seconds['reading']:>7.1f}s {seconds['checks']:>6.1f}s {seconds['proofs']:>6.1f}s "
            f"{seconds['catalog']:>7.1f}s")
    best = min(r.runs[1:] or r.runs, key=lambda s: s["total"])
    beyond = best["total"] - best["spark_start"]
    log(f"  best warm run: {beyond:.1f} s beyond the Spark start (target < 10 s) "
        f"{met(beyond < 10, 'demo audit beyond Spark start')}; the catalog write {best['catalog']:.1f} s")
    users = min(r.user[1:] or r.user, key=lambda s: s["catalog"])
    ratio = users["catalog"] / best["catalog"]
    log(f"  the catalog write on a user's own session (on the embedded run's JIT): {users['catalog']:.1f} s "
        f"(best of {len(r.user) - 1 or 1} warm-table runs, a process each), {ratio:.2f}x the embedded "
        "session's "
        "(target <= 1.2x) "
        f"{met(ratio <= 1.2, 'catalog write on a user session')}")
    log(f"  `schemaguard findings` on the demo catalog: {min(r.findings):.2f} s best of {len(r.findings)} "
        f"(target < 3 s) {met(min(r.findings) < 3, 'findings')}")
    run, bare = statistics.median(r.make_run), statistics.median(r.bare_start)
    log(f"  `make run` (warm): {run:.1f} s median against {bare:.1f} s for a bare Spark+Delta start and one "
        f"query: {run - bare:.1f} s beyond it (target 15 s) {met(run - bare <= 15, 'make run beyond Spark')}")


@dataclass(frozen=True, slots=True)
class MigrateResult:
    rows: int
    start: tuple[float, ...]  # a process that only starts the embedded Spark (the class archive used)
    start_brief: tuple[float, ...]  # the same with the brief JVM a metadata command starts
    start_cold: tuple[float, ...]  # the first without the class archive
    commands: dict[str, tuple[float, ...]]  # each migrate command, whole processes
    statements: dict[str, tuple[float, ...]]  # the seconds its statements ran in Spark, as it says
    jvms: dict[str, str | None]  # the JVM each command starts, as migrate decides it: brief, full, none


MIGRATE_TABLE = """
import sys
from schemaguard.spark import get_spark
spark = get_spark("bench")
spark.sql("CREATE DATABASE IF NOT EXISTS shop")
rows = spark.range(int(sys.argv[1])).selectExpr(
    "id", "CASE WHEN id % 1000 = 0 THEN NULL ELSE concat('c', id % 5000) END AS customer",
    "id * 0.5 AS amount", "CAST(id % 20 AS INT) AS part")
rows.repartition(20, "part").write.format("delta").partitionBy("part").saveAsTable("shop.orders")
"""
SPARK_START = "from schemaguard.spark import get_spark; get_spark('bench', brief={})"
# each migrate command of the walkthrough, in the order a user runs them (rollback then start again),
# and the steps it runs (none for a rollback), or None where it starts no JVM
MIGRATE_COMMANDS: tuple[tuple[str, tuple[str, ...], tuple[str, ...] | None], ...] = (
    ("start --apply", ("start", "--apply"), ("expand",)),
    ("step backfill --apply", ("step", "--step", "backfill", "--apply"), ("backfill",)),
    ("status", ("status",), None), ("rollback --apply", ("rollback", "--apply"), ()))


def time_migrate(rows: int, repeat: int) -> MigrateResult:
    """The migrate walkthrough's commands on a managed Delta table of `rows` rows in 20 partitions,
    each a whole process, beside processes that only start Spark (with and without the class archive
    `make setup` writes): what a command costs beyond Spark's start."""
    case = CACHE_DIR / f"migrate-{rows}"
    shutil.rmtree(case, ignore_errors=True)
    env = {**os.environ, "SCHEMAGUARD_HOME": str(case / "home")}
    log(f"building a {rows:,}-row catalog Delta table and timing the migrate commands ...")
    subprocess.run([sys.executable, "-c", MIGRATE_TABLE, str(rows)], env=env, capture_output=True, check=True)
    from schemaguard.spark import delta_jars

    schemaguard = str(Path(sys.executable).parent / "schemaguard")
    plan = case / "plan.json"
    ddl = "ALTER TABLE shop.orders RENAME COLUMN customer TO customer_id"
    done = subprocess.run([schemaguard, "plan", "--table", "shop.orders", "--spark-catalog", "--ddl", ddl,
                           "--format", "json"], env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):  # 1: a staged plan
        sys.exit(f"the migrate bench's plan failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    plan.write_text(done.stdout)
    from schemaguard.migrate import brief_jvm, load_migration

    # the JVM each command starts, as the command decides it (the table's place found as it finds it)
    m = replace(load_migration(plan), location=str(case / "home" / "warehouse" / "shop.db" / "orders"))
    jvms = {label: None if steps is None else "brief" if brief_jvm(m, steps) else "full"
            for label, _, steps in MIGRATE_COMMANDS}
    no_archive = case / "jars"
    no_archive.mkdir()
    for jar in delta_jars():
        (no_archive / jar.name).symlink_to(jar)
    start: list[float] = []
    start_brief: list[float] = []
    start_cold: list[float] = []
    full, brief = SPARK_START.format(False), SPARK_START.format(True)
    no_archive_env = {**env, "SCHEMAGUARD_JARS": str(no_archive)}
    for _ in range(repeat):
        kinds = ((start, full, env), (start_brief, brief, env), (start_cold, full, no_archive_env))
        for times, code, its_env in kinds:
            times.append(wall(partial(subprocess.run, [sys.executable, "-c", code], env=its_env,
                                      capture_output=True, check=True))[0])
    commands: dict[str, list[float]] = {label: [] for label, _, _ in MIGRATE_COMMANDS}
    statements: dict[str, list[float]] = {label: [] for label, _, _ in MIGRATE_COMMANDS}
    for _ in range(repeat):
        for label, args, _ in MIGRATE_COMMANDS:
            began = time.perf_counter()
            done = subprocess.run([schemaguard, "migrate", *args, "--plan", str(plan)], env=env,
                                  capture_output=True, text=True, check=False)
            seconds = time.perf_counter() - began
            if done.returncode != 0:
                sys.exit(f"migrate {label} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
            commands[label].append(seconds)
            statements[label].append(sum(statement_seconds(done.stdout)))
    return MigrateResult(rows, tuple(start), tuple(start_brief), tuple(start_cold),
                         {k: tuple(v) for k, v in commands.items()},
                         {k: tuple(v) for k, v in statements.items()}, jvms)


def statement_seconds(stdout: str) -> list[float]:
    """The seconds each statement a migrate command ran took in Spark, as its output says
    (`  ran: STATEMENT; (8.2 s)`; a skipped one took none). A `ran:` line of another shape stops
    the bench: the split of the command's time would be wrong."""
    seconds = []
    for line in stdout.splitlines():
        if not line.startswith("  ran: ") or line.endswith("; (skipped: the table already shows it)"):
            continue
        took = line.rsplit("; (", 1)[-1]
        if not took.endswith(" s)"):
            sys.exit(f"a migrate command's statement line has no time: {line[:120]}")
        seconds.append(float(took.removesuffix(" s)")))
    return seconds


def print_migrate(r: MigrateResult) -> None:
    log(f"\n=== migrate on a {r.rows:,}-row catalog Delta table (20 partitions), whole processes ===")
    starts = {"full": statistics.median(r.start), "brief": statistics.median(r.start_brief), None: 0.0}
    cold = statistics.median(r.start_cold)
    log(f"  Spark's start alone: {starts['full']:.1f} s median ({cold:.1f} s without the class archive, "
        f"{starts['brief']:.1f} s with the brief JVM of a metadata command)")
    for label, _, _ in MIGRATE_COMMANDS:
        jvm = r.jvms[label]
        median = statistics.median(r.commands[label])
        beyond = median - starts[jvm]
        ours = beyond - statistics.median(r.statements[label])
        log(f"  migrate {label:<22} {median:>6.1f} s median, {beyond:>5.1f} s beyond the start of "
            f"{f'its {jvm} JVM' if jvm else 'no JVM'} (target 10 s) "
            f"{met(beyond <= 10, f'migrate {label} within 10 s beyond Spark')}; "
            f"{ours:.1f} s beyond it and its statements' own time in Spark")


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=positive, default=10_000,
                        help="files in the generated table (default 10000)")
    parser.add_argument("--repeat", type=positive, default=3,
                        help="timed repetitions per method; the best is reported (default 3)")
    parser.add_argument("--wide", type=int, default=20_000,
                        help="columns of the wide table (2 files, 2 versions); 0 skips it (default 20000)")
    parser.add_argument("--many", type=int, default=100_000,
                        help="files of the many-files table; 0 skips it (default 100000)")
    parser.add_argument("--million", type=int, default=1_000_000,
                        help="files of the hard-linked table whose scan's memory is measured; 0 skips "
                             "(default 1000000)")
    parser.add_argument("--delta", type=int, default=10_000,
                        help="files of the Delta table (written by delta-rs); 0 skips it (default 10000)")
    parser.add_argument("--proofs", type=int, default=1,
                        help="time the proofs (statistics; the data path on a tenth of the files); 0 skips")
    parser.add_argument("--demo", type=int, default=1,
                        help="time the demo audit with the catalog, as `make run` runs it; 0 skips")
    parser.add_argument("--hostile", type=int, default=1,
                        help="time the hostile shapes (every column changing type, 200 versions, ...); "
                        "0 skips")
    parser.add_argument("--migrate", type=int, default=2_000_000,
                        help="rows of the catalog table the migrate commands run on; 0 skips (default "
                        "2000000)")
    parser.add_argument("--store", type=int, default=2_000,
                        help="files read from S3 (moto) answering in 20 ms a request; 0 skips (default 2000)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    n_files: int = args.files
    repeat: int = args.repeat
    table = ensure_table(n_files)
    paths = list_paths(table)
    if len(paths) != n_files:
        sys.exit(f"expected {n_files} files under {table}, found {len(paths)}; delete it and rerun")
    bare_pyarrow(paths)  # warm the page cache: every method then reads from memory
    outcome = schemaguard_scan(table)  # what the scan finds (and one more warm-up)
    before = cpu_snapshot()
    local = time_local(table, paths, repeat)
    local_others = others_cores(before, cpu_snapshot())
    memory = measure_memory(table)  # before Spark, so the JVM does not compete for cores
    spark = time_spark(table, len(paths), repeat)
    report = Report(n_files, repeat, layout_for(n_files), local[SCAN], local[SCAN_ONE_WORKER], local[AUDIT],
                    local[BARE], spark, outcome, memory, local_others)
    print_report(report)
    scale, processes = [], [process_times(f"{n_files:,}-file table", table, n_files, repeat)]
    if args.wide:
        wide = ensure_wide_table(args.wide)
        scale.append(time_scale(f"{args.wide:,}-column table", wide, repeat))
    if args.many:
        many = ensure_many_files(args.many)
        scale.append(time_scale(f"{args.many:,}-file table", many, repeat))
        processes.append(process_times(f"{args.many:,}-file table", many, args.many, repeat))
    for files in sorted({args.files, args.many} - {0}):
        processes.append(process_times(f"{files:,} tiny footers in {TINY_PARTITIONS} partitions",
                                       ensure_tiny_files(files), files, repeat))
    print_scale(scale, processes, help_time(repeat))
    at_scale = [(r.label, r.memory) for r in scale if "file table" in r.label]
    if args.million:
        million = ensure_many_files(args.million, linked=True)
        at_scale.append((f"{args.million:,}-file table", measure_memory(million)))
    print_memory_at_scale(at_scale)
    if args.many:
        print_incremental(time_incremental(ensure_many_files(args.many), repeat))
    if args.delta:
        print_delta(time_delta(args.delta, repeat))
    if args.proofs:
        print_proofs(time_proofs(table, repeat))
    if args.store:
        print_store(time_object_store(args.store, repeat))
    if args.hostile:
        print_pairs("hostile shapes: `schemaguard scan --format json` against the bare loop, whole processes",
                    time_hostile(repeat), within_3x_of_the_loop)
    if args.demo:
        print_demo(time_demo_run(repeat))
    if args.migrate:
        print_migrate(time_migrate(args.migrate, repeat))
    if MISSED:
        sys.exit(f"\n{len(MISSED)} target(s) missed: {'; '.join(MISSED)}")


if __name__ == "__main__":
    main()
