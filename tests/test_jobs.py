"""The jobs are thin entry points over the CLI: run with `python` and with `spark-submit`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from schemaguard.demo import build_demo_lake
from schemaguard.spark import PROJECT_ROOT, delta_jars
from tests.helpers import assert_usage_error

JOBS = PROJECT_ROOT / "jobs"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("jobs")
    build_demo_lake(work / "lake")
    (work / "schemaguard.toml").write_text(
        '[audit]\nreport_dir = "reports"\n[catalog]\ndatabase = "jobs_test"\n'
        '[[tables]]\nname = "orders"\npath = "lake/orders"\n')
    return work


def python_job(job: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(JOBS / job), *args], capture_output=True, text=True,
                          timeout=300, check=False)


def test_lake_audit_with_python(work: Path) -> None:
    done = python_job("lake_audit.py", "--conf", str(work / "schemaguard.toml"), "--no-catalog",
                      "--run-id", "py-1", "--format", "json")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["run_id"] == "py-1"
    assert (work / "reports" / "py-1" / "report.html").is_file()


def test_merge_gate_with_python(work: Path) -> None:
    done = python_job("merge_gate.py", str(work / "lake" / "orders"), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["merge_safe"] is False


def test_migration_check_needs_a_schema(work: Path) -> None:
    assert_usage_error(python_job("migration_check.py", "--conf", str(work / "schemaguard.toml")),
                       "or --schema NEW (the schema the migration installs)")


def test_migration_check_passes_a_schema_every_version_reads(work: Path) -> None:
    """Dropping `channel` and reading `quantity` as bigint: every version on disk reads (BACKWARD)."""
    target = work / "target.json"
    target.write_text(json.dumps({"fields": [
        {"name": "id", "type": "int64", "nullable": False},
        {"name": "quantity", "type": "int64", "nullable": True}]}))
    conf = work / "migration.toml"
    conf.write_text('[audit]\nmode = "BACKWARD_TRANSITIVE"\nreport_dir = "reports"\n'
                    '[catalog]\nenabled = false\n[[tables]]\nname = "orders"\npath = "lake/orders"\n')
    done = python_job("migration_check.py", "--conf", str(conf), "--table", "orders", "--schema", str(target),
                      "--format", "json")
    doc = json.loads(done.stdout)
    codes = {f["code"] for t in doc["tables"] for f in t["findings"]}
    assert "VERSION_INCOMPATIBLE" not in codes
    # The run still fails on the lake's own damage (unreadable files), which a migration must see.
    assert done.returncode == 1 and "UNREADABLE_FILE" in codes


@pytest.mark.spark  # spark-submit starts a JVM
def test_lake_audit_under_spark_submit(work: Path) -> None:
    """spark-submit's master is kept; the footers are read by a Spark job; the report is written
    as Delta tables into the cluster's catalog (here an in-memory catalog with a temp warehouse)."""
    conf = work / "submit.toml"
    conf.write_text('[audit]\nengine = "spark"\nreport_dir = "reports"\n[catalog]\ndatabase = "submitted"\n'
                    '[[tables]]\nname = "orders"\npath = "lake/orders"\n')
    venv_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "SCHEMAGUARD_HOME": str(work / "home"), "PYSPARK_PYTHON": sys.executable,
           "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")}
    env.pop("COLUMNS", None)
    done = subprocess.run(
        [str(Path(venv_bin) / "spark-submit"), "--master", "local[2]",
         "--jars", ",".join(str(j) for j in delta_jars()),
         "--conf", f"spark.sql.warehouse.dir={work / 'warehouse'}",
         str(JOBS / "lake_audit.py"), "--conf", str(conf), "--run-id", "submitted-1"],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "SPARK_MERGE_CONFLICT" in done.stdout and "catalog: run submitted-1" in done.stdout
    assert (work / "warehouse" / "submitted.db" / "findings" / "_delta_log").is_dir()


def test_migration_check_runs_the_tables_proofs(tmp_path: Path) -> None:
    """Before making `region` required: the proof that no nulls exist runs with the check, from
    the footers' statistics (no Spark), and its refutation fails the migration."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "t").mkdir()
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "region": ["eu", "us"]}),
                   tmp_path / "t" / "a.parquet")
    target = tmp_path / "target.json"
    target.write_text(json.dumps({"fields": [{"name": "id", "type": "int64", "nullable": True},
                                             {"name": "region", "type": "string", "nullable": False}]}))
    conf = tmp_path / "m.toml"
    conf.write_text('[audit]\nmode = "BACKWARD_TRANSITIVE"\nprofiles = ["spark-read"]\n'
                    'report_dir = "reports"\n[catalog]\nenabled = false\n'
                    '[[tables]]\nname = "t"\npath = "t"\nnot_null = ["region"]\n')
    args = ("--conf", str(conf), "--table", "t", "--schema", str(target), "--format", "json")
    done = python_job("migration_check.py", *args)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert json.loads(done.stdout)["tables"][0]["proofs"][0]["verdict"] == "proven"
    pq.write_table(pa.table({"id": pa.array([3], pa.int64()), "region": pa.array([None], pa.string())}),
                   tmp_path / "t" / "b.parquet")
    done = python_job("migration_check.py", *args)
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["tables"][0]["proofs"][0]["verdict"] == "refuted"
    assert "NULLS_BLOCK_TIGHTENING" in {f["code"] for f in doc["tables"][0]["findings"]}
