"""Shared fixtures. Spark tests share one session-scoped SparkSession whose warehouse and Derby
metastore live in a fresh temporary folder, so tests never touch the project's `.warehouse/`.

The session also carries Spark's Iceberg runtime and spark-avro (fetched by `make test` into
`.jars/test/`) and a path-based Iceberg catalog `ice`: Iceberg tables written by Spark, as a user's
Spark job writes them, for the tests that read them back, and spark-avro's SchemaConverters as an
oracle. The guard itself needs neither."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import helpers

TEST_JARS = Path(__file__).resolve().parents[1] / ".jars" / "test"
ICEBERG_CATALOG = "org.apache.iceberg.spark.SparkCatalog"


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's Parquet table, built without Spark (a module may build a lake of its own)."""
    from schemaguard.demo import build_demo_lake

    directory = tmp_path_factory.mktemp("lake")
    build_demo_lake(directory)
    return directory


def _test_jar(pattern: str) -> Path:
    found = sorted(TEST_JARS.glob(pattern))
    if not found:
        raise RuntimeError(f"no {pattern} in {TEST_JARS}: run `make test` (it fetches it)")
    return found[-1]


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    home = tmp_path_factory.mktemp("spark-home")
    previous = os.environ.get("SCHEMAGUARD_HOME")
    os.environ["SCHEMAGUARD_HOME"] = str(home)
    from schemaguard.spark import delta_jars, get_spark

    test_jars = [_test_jar("iceberg-spark-runtime-*.jar"), _test_jar("spark-avro_*.jar")]
    # `make test`'s first-tier JIT (SCHEMAGUARD_JAVA_OPTIONS) is for the short Spark processes the
    # tests start; this session runs for the whole suite, where the full JIT pays for itself.
    java_options = os.environ.pop("SCHEMAGUARD_JAVA_OPTIONS", None)
    try:
        session = get_spark("schemaguard-tests", {
            "spark.jars": ",".join(str(j) for j in [*delta_jars(), *test_jars]),
            "spark.sql.catalog.ice": ICEBERG_CATALOG,
            "spark.sql.catalog.ice.type": "hadoop",
            "spark.sql.catalog.ice.warehouse": str(home / "iceberg"),
        })
    finally:
        if java_options is not None:
            os.environ["SCHEMAGUARD_JAVA_OPTIONS"] = java_options
    yield session
    session.stop()
    if previous is None:
        os.environ.pop("SCHEMAGUARD_HOME", None)
    else:
        os.environ["SCHEMAGUARD_HOME"] = previous


@pytest.fixture(autouse=True)
def _spark_tests_run_commands_as_processes(request: pytest.FixtureRequest,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A Spark test's `run` starts the console script as its own process: in this one, a command
    would share the tests' session (and its catalog) instead of starting its own."""
    if request.node.get_closest_marker("spark") is not None:
        monkeypatch.setattr(helpers, "IN_PROCESS", False)


# The test files that take longest (measured under `make test`, slowest first). `make test`'s
# pytest-xdist hands out whole files in collection order (--no-loadscope-reorder), so these go
# first: a long file started last would run on alone while the other worker idles.
LONGEST_FIRST = ("test_catalog.py", "test_migrate_kill.py", "test_oracle_delta_merge_into.py",
                 "test_intervals.py", "test_audit_cli.py", "test_delta_log.py", "test_wheel.py",
                 "test_cluster.py", "test_make_run.py", "test_plan_usage.py", "test_oracle_delta_stream.py",
                 "test_jobs.py", "test_proofs.py", "test_spark_session.py", "test_migrate.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's own order kept
