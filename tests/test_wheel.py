"""schemaguard as a user installs it: the built wheel in a fresh virtual environment outside the
repository (no Makefile, no `.jars/`, no source tree), then `schemaguard scan` and `compare` as
commands and an audit through `import schemaguard as sg` on a SparkSession the user configures,
its Delta jars from `spark.jars.packages`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.spark, pytest.mark.slow]

USER_SESSION = """
import sys
from pyspark.sql import SparkSession
import schemaguard as sg
from schemaguard.spark import DELTA_CATALOG, DELTA_EXTENSION, DELTA_PACKAGE
spark = (SparkSession.builder.master("local[2]").appName("their-app")
         .config("spark.jars.packages", DELTA_PACKAGE)
         .config("spark.sql.extensions", DELTA_EXTENSION)
         .config("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
         .config("spark.sql.warehouse.dir", sys.argv[2])
         .config("spark.ui.enabled", "false").getOrCreate())
result = sg.audit([sys.argv[1]], spark=spark, reports=False)
print(result.exit_code, len(result.run.tables), spark.table("schemaguard.runs").count())
print(sg.__file__)
"""


def test_the_wheel_installs_in_a_fresh_venv_and_runs_outside_the_repository(tmp_path: Path) -> None:
    dist, venv, work, source = tmp_path / "dist", tmp_path / "venv", tmp_path / "work", tmp_path / "source"
    work.mkdir()
    # built from a copy: setuptools writes build/ and egg-info beside the sources it builds
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", ".jars", ".demo", ".bench", ".warehouse", ".schemaguard", "build", "*.egg-info",
        "__pycache__", "*.so", ".*_cache", ".hypothesis"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist),
                    str(source)], check=True, timeout=600)
    [wheel] = dist.glob("schemaguard-*.whl")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=300)
    # --no-compile: byte-compiling pyspark's and great_expectations' thousands of modules is not
    # what is tested (Python compiles what the commands import)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile",
                    str(wheel)], check=True, timeout=1200)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCHEMAGUARD_JARS", "VIRTUAL_ENV")}
    env["HOME"] = str(tmp_path / "home")  # the user's own ~/.schemaguard, ~/.ivy2
    table = work / "orders"
    table.mkdir()
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), table / "part-0.parquet")
    pq.write_table(pa.table({"id": pa.array([3], pa.int32()), "note": ["x"]}), table / "part-1.parquet")

    def schemaguard(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv / "bin" / "schemaguard"), *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=600)

    scanned = schemaguard("scan", str(table), "--format", "json")
    assert scanned.returncode in (0, 1), scanned.stderr
    assert len(json.loads(scanned.stdout)["versions"]) == 2
    compared = schemaguard("compare", "--writer", str(table / "part-0.parquet"), "--reader",
                           str(table / "part-1.parquet"), "--profile", "spark-read")  # int64 read as int32
    assert compared.returncode == 1 and "int32" in compared.stdout, compared.stdout + compared.stderr
    audited = subprocess.run([str(venv / "bin" / "python"), "-c", USER_SESSION, str(table),
                              str(tmp_path / "warehouse")], cwd=work, env=env, capture_output=True, text=True,
                             timeout=900)
    assert audited.returncode == 0, audited.stderr[-3000:]
    counts, where = audited.stdout.splitlines()[-2:]
    assert counts.split()[1:] == ["1", "1"]  # one table audited, its run in the session's catalog
    assert where.startswith(str(venv)) and str(ROOT) not in where
