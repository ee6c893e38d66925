"""`schemaguard audit` end to end, as `make run` and a scheduler run it: real Spark, the embedded
catalog in its own folder, a lake that must stay untouched, reports in every format, the rows
read back by a new process."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schemaguard.demo import build_delta_demo, build_demo_lake, build_iceberg_demo
from tests.helpers import SCHEMAGUARD

# Every test reads the `audited` run: `schemaguard audit` with the catalog on, and `schemaguard
# findings`, start Spark in processes of their own.
pytestmark = pytest.mark.spark

RUN_ID = "scheduler-run-7"


def schemaguard(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    env["SCHEMAGUARD_HOME"] = str(home)  # a catalog of its own: Derby allows one process per folder
    return subprocess.run([str(SCHEMAGUARD), *args], capture_output=True, text=True, env=env,
                          timeout=600, check=False)


def fingerprint(root: Path) -> dict[str, tuple[str, float]]:
    """Every file and folder under root: content hash and mtime."""
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                                       p.stat().st_mtime)
            for p in sorted(root.rglob("*"))}


def freeze(root: Path, on: bool) -> bool:
    """Make the lake read-only even for root (chattr +i) where the filesystem allows; else chmod."""
    flag = "+i" if on else "-i"
    done = subprocess.run(["chattr", "-R", flag, str(root)], capture_output=True, check=False)
    if done.returncode != 0:
        subprocess.run(["chmod", "-R", "a-w" if on else "u+w", str(root)], check=True)
    return done.returncode == 0


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Iterator[dict[str, object]]:
    work = tmp_path_factory.mktemp("audit-cli")
    lake = build_demo_lake(work / "lake")
    delta = build_delta_demo(work / "lake", spark)
    iceberg = build_iceberg_demo(work / "lake")
    conf = work / "schemaguard.toml"
    conf.write_text((Path(__file__).resolve().parents[1] / "conf" / "schemaguard.toml").read_text()
                    .replace('"../.demo/lake/orders"', f'"{lake}"')
                    .replace('"../.demo/lake/orders_delta"', f'"{delta}"')
                    .replace('"../.demo/lake/orders_iceberg"', f'"{iceberg}"')
                    .replace('"../.schemaguard/reports"', '"reports"')
                    .replace('database = "schemaguard"', 'database = "audit_cli"'))
    before = fingerprint(lake)
    immutable = freeze(lake, on=True)
    try:
        first = schemaguard(work / "home", "audit", "--conf", str(conf), "--run-id", RUN_ID)
        again = schemaguard(work / "home", "audit", "--conf", str(conf), "--run-id", RUN_ID)
    finally:
        freeze(lake, on=False)
    yield {"work": work, "lake": lake, "conf": conf, "before": before, "after": fingerprint(lake),
           "first": first, "again": again, "immutable": immutable}


def test_the_audit_ends_with_the_summary_and_exit_1_for_the_demo_findings(audited: dict[str, object]) -> None:
    first = audited["first"]
    assert isinstance(first, subprocess.CompletedProcess)
    assert first.returncode == 1, first.stderr
    assert "Traceback" not in first.stderr
    assert "orders" in first.stdout and "SPARK_MERGE_CONFLICT" in first.stdout
    assert "FAIL" in first.stdout
    assert "SELECT" in first.stdout and "audit_cli" in first.stdout  # the query to see the findings


def test_the_audits_time_is_the_whole_commands_split_into_its_phases(audited: dict[str, object]) -> None:
    """The header's time is the whole run's, Spark's start and the catalog write included; the
    summary says where it went. The report files, written before the catalog, say what they knew."""
    first, work = audited["first"], audited["work"]
    assert isinstance(first, subprocess.CompletedProcess) and isinstance(work, Path)
    text = " ".join(first.stdout.split())  # as a person reads it, however the terminal wrapped it
    header = re.search(r"took (\S+ (?:s|min)) fail level", text)
    split = re.search(r"took (\S+ (?:s|min)) \(Spark start (\S+) s, reading \S+ s, .*catalog write (\S+) s\)",
                      text)
    assert header and split and header.group(1) == split.group(1), text
    spark_start, catalog = float(split.group(2)), float(split.group(3))
    assert spark_start > 0 and catalog > 0
    assert float(header.group(1).split()[0]) >= spark_start + catalog - 0.2
    doc = json.loads((work / "reports" / RUN_ID / "report.json").read_text())
    seconds = doc["seconds"]
    assert seconds["catalog"] == 0 and seconds["spark_start"] > 0
    phases = seconds["spark_start"] + seconds["reading"] + seconds["checks"] + seconds["proofs"]
    assert seconds["total"] >= phases


def test_the_audit_never_writes_into_the_lake(audited: dict[str, object]) -> None:
    assert audited["before"] == audited["after"]


def test_reports_in_every_format_are_written(audited: dict[str, object]) -> None:
    work = audited["work"]
    assert isinstance(work, Path)
    folder = work / "reports" / RUN_ID
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["junit.xml", "report.html", "report.json", "report.md", "report.sarif"]
    doc = json.loads((folder / "report.json").read_text())
    assert doc["run_id"] == RUN_ID and doc["exit_code"] == 1
    first = audited["first"]
    assert isinstance(first, subprocess.CompletedProcess)
    assert str(folder / "report.html") in first.stdout


def test_a_rerun_of_the_same_run_keeps_one_set_of_rows_readable_by_a_new_process(
        audited: dict[str, object]) -> None:
    again = audited["again"]
    assert isinstance(again, subprocess.CompletedProcess)
    assert again.returncode == 1, again.stderr
    work = audited["work"]
    assert isinstance(work, Path)
    done = schemaguard(work / "home", "findings", "--conf", str(audited["conf"]), "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    report = json.loads((work / "reports" / RUN_ID / "report.json").read_text())
    expected = sorted(f["key"] for t in report["tables"] for f in t["findings"]) + sorted(
        f["key"] for f in report["findings"])
    assert {r["run_id"] for r in rows} == {RUN_ID}
    assert sorted(r["finding_key"] for r in rows) == sorted(expected)
