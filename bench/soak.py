"""Soak: audits of a table that another process keeps changing, some of them killed mid-run.

    make soak            (python bench/soak.py [--runs 9] [--files 300] [--kill-every 3] [--seed 7])

A mutator process adds, deletes and rewrites the table's files (new files written in place, so a
reader can meet one half-written; rewrites truncate and write again) every few milliseconds, while
`schemaguard audit` runs again and again on the table with the catalog on, as a scheduler would run
it. Every `--kill-every`th audit is SIGKILLed at a random moment. A last audit runs with the table
at rest. Then the checks, and exit 1 if any fails:

- every audit that exited 0 or 1 has its `runs` row, and a complete report folder;
- every `runs` row is consistent: its findings, schema_versions and file_footers rows are as many
  as its report.json says, and the printed findings query shows the latest complete run's findings,
  all of them and no other run's;
- a killed audit left either nothing visible or (killed after its last commit) a consistent run;
- no report folder is partial (every format present and parseable) and no staging folder remains.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / ".bench" / "soak"
FIRST_DAY = date(2024, 1, 1)
DAYS = 10
FORMATS = ["json", "markdown", "html", "junit", "sarif"]
CACHE_DIR = "_cache"  # lake/cache.py CACHE_DIR: beside the run folders
FILE_NAMES = {"json": "report.json", "markdown": "report.md", "html": "report.html", "junit": "junit.xml",
              "sarif": "report.sarif"}


def log(message: str) -> None:
    print(message, flush=True)


def write_file(path: Path, rng: random.Random) -> None:
    """A small file of one of three writer schemas (so the audit finds versions and changes)."""
    n = rng.randint(1, 50)
    columns: dict[str, pa.Array] = {"id": pa.array(range(n), pa.int64()),
                                    "name": pa.array([f"n{i}" for i in range(n)])}
    shape = rng.randrange(3)
    if shape >= 1:
        columns["amount"] = pa.array([i * 1.5 for i in range(n)])
    if shape == 2:
        columns["id"] = pa.array(range(n), pa.int32())  # a narrowed id: an incompatible change
    pq.write_table(pa.table(columns), path)


def file_path(table: Path, rng: random.Random) -> Path:
    folder = table / f"dt={FIRST_DAY + timedelta(days=rng.randrange(DAYS))}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"part-{rng.getrandbits(40):010x}.parquet"


def mutate(table: Path, seed: int) -> None:
    """Add, delete and rewrite files until killed."""
    rng = random.Random(seed)
    while True:
        files = sorted(table.rglob("*.parquet"))
        action = rng.choice(("add", "add", "delete", "rewrite"))
        try:
            if action == "add" or not files:
                write_file(file_path(table, rng), rng)
            elif action == "delete":
                rng.choice(files).unlink()
            else:
                write_file(rng.choice(files), rng)
        except FileNotFoundError:
            pass  # raced with nothing but ourselves: a directory listed a moment ago
        time.sleep(rng.uniform(0.002, 0.03))


def setup(work: Path, files: int, seed: int) -> Path:
    if work.exists():
        shutil.rmtree(work)
    table = work / "lake" / "events"
    rng = random.Random(seed)
    for _ in range(files):
        write_file(file_path(table, rng), rng)
    conf = work / "soak.toml"
    conf.write_text(f"""
[audit]
mode = "FULL_TRANSITIVE"
profiles = ["spark-read"]
report_dir = "{work / 'reports'}"
formats = {json.dumps(["terminal", *FORMATS])}

[catalog]
enabled = true
database = "soak"

[[tables]]
name = "events"
path = "{table}"
""", encoding="utf-8")
    return conf


def audit(conf: Path, run_id: str, home: Path, kill_after: float | None, logs: Path) -> int:
    env = {**os.environ, "SCHEMAGUARD_HOME": str(home)}
    with open(logs / f"{run_id}.log", "w", encoding="utf-8") as out:
        proc = subprocess.Popen([str(REPO / ".venv" / "bin" / "schemaguard"), "audit", "--conf", str(conf),
                                 "--run-id", run_id], stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
        return proc.wait()


def check_folders(reports: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Each complete report folder's report.json, and what is wrong with the folders."""
    problems, documents = [], {}
    for entry in sorted(reports.iterdir()):
        if entry.name == CACHE_DIR:
            continue  # the incremental cache beside the reports, not a run
        if entry.name.startswith("."):
            problems.append(f"staging folder left behind: {entry.name}")
            continue
        missing = [name for name in FILE_NAMES.values() if not (entry / name).is_file()]
        if missing:
            problems.append(f"{entry.name}: partial report folder, missing {missing}")
            continue
        try:
            documents[entry.name] = json.loads((entry / "report.json").read_text(encoding="utf-8"))
            json.loads((entry / "report.sarif").read_text(encoding="utf-8"))
            ET.parse(entry / "junit.xml")
        except (ValueError, ET.ParseError) as e:
            problems.append(f"{entry.name}: a report file does not parse: {e}")
    return documents, problems


def expected_rows(doc: dict[str, Any]) -> dict[str, int]:
    tables = doc["tables"]
    return {
        "findings": len(doc["findings"]) + sum(len(t["findings"]) for t in tables),
        "schema_versions": sum(t["scan"]["counts"]["versions"] for t in tables),
        "file_footers": sum(t["scan"]["counts"]["read"] + t["scan"]["counts"]["unreadable"] for t in tables),
    }


def check_catalog(home: Path, documents: dict[str, dict[str, Any]]) -> tuple[set[str], list[str]]:
    """The run ids the catalog shows, and every way a run in it disagrees with its report."""
    os.environ["SCHEMAGUARD_HOME"] = str(home)
    from schemaguard.config import CatalogConfig
    from schemaguard.report import catalog as report
    from schemaguard.spark import get_spark

    spark = get_spark("soak-check")
    catalog = CatalogConfig(database="soak")
    names = report.table_names(catalog)
    rows = spark.table(names["runs"]).select("run_id", "started_at", "status").collect()
    runs = {r["run_id"] for r in rows}
    complete = [(r["started_at"], r["run_id"]) for r in rows if r["status"] == "complete"]
    latest = max(complete)[1] if complete else None
    counts: dict[str, dict[str, int]] = {}
    for name in ("findings", "schema_versions", "file_footers"):
        for row in spark.table(names[name]).groupBy("run_id").count().collect():
            counts.setdefault(row["run_id"], {})[name] = row["count"]
    query = {r["run_id"]: r["count"]
             for r in spark.sql(report.findings_query(catalog)).groupBy("run_id").count().collect()}
    problems = []
    if set(query) - {latest}:
        problems.append(f"the findings query shows runs {sorted(query)}, not only the latest, {latest}")
    for run_id in sorted(runs):
        doc = documents.get(run_id)
        if doc is None:
            problems.append(f"{run_id}: in the catalog's runs, but no complete report folder")
            continue
        want = expected_rows(doc)
        got = {name: counts.get(run_id, {}).get(name, 0) for name in want}
        if got != want:
            problems.append(f"{run_id}: catalog rows {got}, report.json says {want}")
        if run_id == latest and query.get(run_id, 0) != want["findings"]:
            shown = query.get(run_id, 0)
            problems.append(f"{run_id}: the findings query shows {shown} of {want['findings']}")
    spark.stop()
    return runs, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=9, help="audits while the table changes (default 9)")
    parser.add_argument("--files", type=int, default=300, help="files at the start (default 300)")
    parser.add_argument("--kill-every", type=int, default=3, help="every n-th audit is SIGKILLed (default 3)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mutate", type=Path, help=argparse.SUPPRESS)  # the mutator process's own entry
    args = parser.parse_args(argv)
    if args.mutate:
        mutate(args.mutate, args.seed)
        return 0
    rng = random.Random(args.seed)
    conf = setup(WORK, args.files, args.seed)
    home, logs, table = WORK / "home", WORK / "logs", WORK / "lake" / "events"
    home.mkdir()
    logs.mkdir()
    log(f"soak: {args.runs} audits of {table} ({args.files} files at the start) while a mutator adds, "
        f"deletes and rewrites files; one audit in {args.kill_every} killed at a random moment")
    mutator = subprocess.Popen([sys.executable, __file__, "--mutate", str(table), "--seed", str(args.seed)])
    outcomes: dict[str, int] = {}
    start = time.monotonic()
    longest = 30.0
    try:
        for i in range(args.runs):
            run_id = f"soak-{i:03d}"
            # Anywhere in an audit's life, up to the longest whole one so far: Spark's start,
            # the scan, the reports, the catalog's commits.
            kill_after = rng.uniform(2.0, longest) if i % args.kill_every == args.kill_every - 1 else None
            began = time.monotonic()
            outcomes[run_id] = code = audit(conf, run_id, home, kill_after, logs)
            if code != -signal.SIGKILL:
                longest = max(longest, time.monotonic() - began)
            what = "killed" if code == -signal.SIGKILL else f"exit {code}"
            log(f"  {run_id}: {what} after {time.monotonic() - began:.1f} s")
    finally:
        mutator.send_signal(signal.SIGKILL)
        mutator.wait()
    outcomes["soak-final"] = code = audit(conf, "soak-final", home, None, logs)
    log(f"  soak-final (table at rest): exit {code}")
    documents, problems = check_folders(WORK / "reports")
    runs, catalog_problems = check_catalog(home, documents)
    problems += catalog_problems
    for run_id, code in outcomes.items():
        if code in (0, 1) and run_id not in runs:
            problems.append(f"{run_id}: exited {code}, but the catalog has no runs row")
        if code not in (0, 1, -signal.SIGKILL):
            problems.append(f"{run_id}: exited {code} (see {logs / run_id}.log)")
    killed = [r for r, c in outcomes.items() if c == -signal.SIGKILL]
    log(f"soak: {len(outcomes)} audits in {time.monotonic() - start:.0f} s, {len(killed)} killed "
        f"({sum(r in runs for r in killed)} of them after their last commit), {len(runs)} runs in the "
        f"catalog, {len(documents)} complete report folders")
    for p in problems:
        log(f"FAIL {p}")
    log("soak: PASS" if not problems else f"soak: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
