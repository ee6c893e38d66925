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
    session = get_spark("schemaguard-tests", {
        "spark.jars": ",".join(str(j) for j in [*delta_jars(), *test_jars]),
        "spark.sql.catalog.ice": ICEBERG_CATALOG,
        "spark.sql.catalog.ice.type": "hadoop",
        "spark.sql.catalog.ice.warehouse": str(home / "iceberg"),
    })
    yield session
    session.stop()
    if previous is None:
        os.environ.pop("SCHEMAGUARD_HOME", None)
    else:
        os.environ["SCHEMAGUARD_HOME"] = previous


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
