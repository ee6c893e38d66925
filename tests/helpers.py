"""Helpers shared by several test files: running the console script, checking a usage error,
Spark settings for one block, the one file a Spark write leaves. Fixtures live in conftest.py;
hypothesis strategies in strategies.py; the differential tests' pieces in oracles.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMAGUARD = Path(sys.executable).parent / "schemaguard"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    return subprocess.run([str(SCHEMAGUARD), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300, check=False)


def assert_usage_error(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


@contextmanager
def spark_conf(spark: Any, **settings: str) -> Iterator[None]:
    keys = {k.replace("__", "."): v for k, v in settings.items()}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k in keys:
            spark.conf.unset(k)


def spark_parquet_file(directory: Path) -> Path:
    """The one data file Spark wrote into `directory` (written with coalesce(1))."""
    files = sorted(directory.glob("part-*.parquet"))
    assert len(files) == 1, files
    return files[0]


@contextmanager
def sql_catalog(folder: Path) -> Iterator[Any]:
    """A pyiceberg SQL catalog `test` on sqlite in `folder`, with the namespace `db`; its engine is
    closed afterwards (pyiceberg imported here: only the Iceberg tests pay for it)."""
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("test", uri=f"sqlite:///{folder}/catalog.db", warehouse=f"file://{folder}/wh")
    cat.create_namespace("db")
    try:
        yield cat
    finally:
        cat.engine.dispose()
