"""Shared fixtures. Spark tests share one session-scoped SparkSession whose warehouse and Derby
metastore live in a fresh temporary folder, so tests never touch the project's `.warehouse/`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    home = tmp_path_factory.mktemp("spark-home")
    previous = os.environ.get("SCHEMAGUARD_HOME")
    os.environ["SCHEMAGUARD_HOME"] = str(home)
    from schemaguard.spark import get_spark

    session = get_spark("schemaguard-tests")
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
