"""Findings from the versions on disk: grouped per column, naming versions and files, and the
mergeSchema verdict checked against real Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemaguard.demo import build_demo_lake
from schemaguard.lake.discover import discover
from schemaguard.lake.history import build_history
from schemaguard.lake.scan import scan
from schemaguard.report.findings import Finding, history_findings


def findings_of(table: Path) -> list[Finding]:
    return history_findings(build_history(scan(discover(str(table))).footers))


def write(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def test_demo_lake_findings(tmp_path: Path) -> None:
    found = {(f.code, f.path): f for f in findings_of(build_demo_lake(tmp_path))}
    assert set(found) == {
        ("SPARK_MERGE_CONFLICT", "quantity"),  # int32 and int64 do not merge (compat-rules.md §5)
        ("LOGICAL_TYPE_DRIFT", "quantity"),
        ("LOGICAL_TYPE_DRIFT", "amount"),  # decimal(10,2) on FLBA(5) -> decimal(12,2) on FLBA(6)
        ("LOGICAL_TYPE_DRIFT", "ts"),  # INT96 -> INT64 TIMESTAMP(MICROS, UTC)
        ("COLUMN_MISSING_IN_OLD_FILES", "channel"),
    }
    missing = found[("COLUMN_MISSING_IN_OLD_FILES", "channel")]
    assert (missing.versions, missing.count, missing.severity) == ((1,), 30, "info")
    assert "1,500 rows" in missing.message
    drift = found[("LOGICAL_TYPE_DRIFT", "ts")]
    assert drift.versions == (1, 2, 3, 4) and drift.count == 120 and len(drift.files) == 20  # a sample


def test_case_only_names(tmp_path: Path) -> None:
    write(tmp_path / "t" / "part-0.parquet", pa.table({"Amount": [1]}))
    write(tmp_path / "t" / "part-1.parquet", pa.table({"amount": [2]}))
    (case,) = [f for f in findings_of(tmp_path / "t") if f.code == "CASE_ONLY_NAME_DIFFERENCE"]
    assert case.path == "Amount" and case.versions == (1, 2)


def test_merge_conflict_finding_agrees_with_spark(spark: Any, tmp_path: Path) -> None:
    for name, first, second in (("clash", pa.int32(), pa.int64()), ("fine", pa.int64(), pa.int64())):
        write(tmp_path / name / "part-0.parquet", pa.table({"c": pa.array([1], first)}))
        write(tmp_path / name / "part-1.parquet", pa.table({"c": pa.array([2], second), "d": [1]}))
        try:
            spark_ok = bool(spark.read.option("mergeSchema", "true").parquet(str(tmp_path / name)).schema)
        except Exception:
            spark_ok = False
        ours = [f for f in findings_of(tmp_path / name) if f.code == "SPARK_MERGE_CONFLICT"]
        assert spark_ok == (not ours), name
