"""The audit, `scan` and `gate` name the same conflicting columns: all three take them from one
function (checks/gate.py), and on the two-file lake of issue 8 the set is exactly the columns on
which real Spark's mergeSchema fails.

Spark's error names only the first conflict, so the oracle asks Spark about each column alone:
a lake of the same two files holding only that column fails to merge iff the column conflicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.auditing import run_audit
from schemaguard.checks import run_checks
from schemaguard.checks.gate import evaluate_gate
from schemaguard.config import parse_config
from schemaguard.lake.table import read
from tests import helpers

TWO_FILES = {
    "a": (pa.int32(), pa.int64()),
    "b": (pa.string(), pa.int64()),
    "c": (pa.float64(), pa.float64()),
}


def two_file_lake(directory: Path, columns: dict[str, tuple[pa.DataType, pa.DataType]]) -> Path:
    directory.mkdir(parents=True)
    for i, name in enumerate(("part-0.parquet", "part-1.parquet")):
        fields = [pa.field(c, types[i]) for c, types in columns.items()]
        pq.write_table(pa.table({f.name: pa.array([None], f.type) for f in fields}, pa.schema(fields)),
                       directory / name)
    return directory


def float16_lake(directory: Path) -> Path:
    directory.mkdir(parents=True)
    pq.write_table(pa.table({"h": pa.array([1.5], pa.float16()), "t": pa.array([1], pa.int64())}),
                   directory / "part-0.parquet")
    return directory


def nested_lake(directory: Path) -> Path:
    directory.mkdir(parents=True)
    inner = [pa.struct([("x", pa.int32()), ("y", pa.string())]),
             pa.struct([("x", pa.string()), ("y", pa.int64())])]
    for i, t in enumerate(inner):
        key = pa.array([i], pa.int32() if i else pa.int64())
        pq.write_table(pa.table({"s": pa.array([None], t), "k": key}), directory / f"part-{i}.parquet")
    return directory


def run(*args: str) -> dict[str, Any]:
    done = helpers.run(*args, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def audit(lake: Path, tmp: Path) -> dict[str, Any]:
    conf = tmp / "audit.toml"
    conf.write_text(f'[audit]\nreport_dir = "{tmp / "reports"}"\n[catalog]\nenabled = false\n'
                    f'[[tables]]\nname = "t"\npath = "{lake}"\n')
    return run("audit", "--conf", str(conf))


def conflicting(lake: Path, tmp: Path) -> tuple[set[str], set[str], set[str]]:
    """The conflicting columns as the scan's findings, the gate and the audit's findings name them."""
    scan = {f["path"] for f in run("scan", str(lake))["findings"] if f["code"] == "SPARK_MERGE_CONFLICT"}
    gate = {c["path"] for c in run("gate", str(lake))["conflicts"]}
    audited = {f["path"] for t in audit(lake, tmp)["tables"] for f in t["findings"]
               if f["code"] == "SPARK_MERGE_CONFLICT"}
    return scan, gate, audited


def conflicting_in_process(lake: Path, tmp: Path) -> tuple[set[str], set[str], set[str]]:
    """The same three answers through the Python functions behind the commands (no subprocess)."""
    table = read(str(lake))
    scan = {f.path for f in run_checks(table) if f.code == "SPARK_MERGE_CONFLICT"}
    gate = {c.path for c in evaluate_gate(table).conflicts}
    config = parse_config({"catalog": {"enabled": False}, "tables": [{"name": "t", "path": str(lake)}]},
                          tmp / "audit.toml")
    audited = {f.path for f in run_audit(config).all_findings if f.code == "SPARK_MERGE_CONFLICT"}
    return scan, gate, audited


@pytest.mark.parametrize("build", [
    lambda d: two_file_lake(d, TWO_FILES),
    float16_lake,
    nested_lake,
], ids=["two-files", "float16", "nested"])
def test_audit_scan_and_gate_name_the_same_conflicting_columns(tmp_path: Path, build: Any) -> None:
    lake = build(tmp_path / "lake")
    scan, gate, audited = conflicting_in_process(lake, tmp_path)
    assert scan == gate == audited
    assert gate  # every lake here has at least one conflict


def test_the_commands_name_the_same_conflicting_columns(tmp_path: Path) -> None:
    lake = nested_lake(tmp_path / "lake")
    assert conflicting(lake, tmp_path) == conflicting_in_process(lake, tmp_path)


def test_two_file_lake_conflicts_are_exactly_where_spark_fails(spark: Any, tmp_path: Path) -> None:
    lake = two_file_lake(tmp_path / "lake", TWO_FILES)
    scan, gate, audited = conflicting(lake, tmp_path)
    assert scan == gate == audited == {"a", "b"}
    spark_fails = set()
    for column, types in TWO_FILES.items():
        alone = two_file_lake(tmp_path / f"only-{column}", {column: types})
        try:
            spark.read.option("mergeSchema", "true").parquet(str(alone)).collect()
        except Exception as e:  # only Spark's merge failure counts as its "no"
            assert "CANNOT_MERGE" in str(e), e
            spark_fails.add(column)
    assert spark_fails == gate
    with pytest.raises(Exception, match="CANNOT_MERGE"):
        spark.read.option("mergeSchema", "true").parquet(str(lake)).collect()
