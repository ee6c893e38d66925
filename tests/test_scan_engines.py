"""The Spark engine reads the same footers as the local engine: one footer function, two ways
of running it; and `--engine auto` picks Spark only where it can pay."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemaguard.demo import build_demo_lake
from schemaguard.lake.discover import LIST_SPLIT, discover
from schemaguard.lake.history import build_history
from schemaguard.lake.scan import CHUNK, lister_for, scan, scan_on_spark, spark_lister, spark_pays, use_spark
from tests.helpers import many_folders


def test_spark_engine_matches_local_engine(spark: Any, tmp_path: Path) -> None:
    listing = discover(str(build_demo_lake(tmp_path)))
    local = scan(listing, workers=1)
    on_spark = scan_on_spark(listing, spark)
    assert list(on_spark.footers) == list(local.footers)
    assert on_spark.unreadable == local.unreadable
    versions = build_history(on_spark.footers).versions
    assert [len(v.files) for v in versions] == [30, 30, 30, 30]


def test_spark_engine_matches_local_engine_over_many_ranges(spark: Any, tmp_path: Path) -> None:
    """More files than one task's range, in any order of schemas, with unreadable files among them:
    every footer, in listing order, and every finding, the same."""
    n = 2 * CHUNK + 37
    for i in range(n):
        folder = tmp_path / f"dt=2024-01-{1 + i % 28:02d}"
        folder.mkdir(exist_ok=True)
        path = folder / f"part-{i:05d}.parquet"
        if i % 97 == 5:
            path.write_bytes(b"")  # zero bytes
        elif i % 89 == 7:
            path.write_bytes(b"PAR1 not a footer PAR1")
        else:
            columns: dict[str, pa.Array] = {"id": pa.array([i, None], pa.int64())}
            if i % 3:
                columns["name"] = pa.array([f"n{i}", None])
            if i % 5 == 0:
                columns["amount"] = pa.array([1.5 * i, 2.0], pa.float32() if i % 2 else pa.float64())
            pq.write_table(pa.table(columns), path)
    listing = discover(str(tmp_path))
    local = scan(listing)
    on_spark = scan_on_spark(listing, spark)
    assert len(local.footers) + len(local.unreadable) == n and local.unreadable
    assert list(on_spark.footers) == list(local.footers)
    assert on_spark.unreadable == local.unreadable


def test_auto_reads_on_spark_only_with_a_running_session_that_reads_sooner(spark: Any) -> None:
    cores = len(os.sched_getaffinity(0))
    assert use_spark("spark", 1, None) and not use_spark("local", 10**7, spark)
    assert not use_spark("auto", 10**7, None)  # never starts a session of its own
    slots = spark.sparkContext.defaultParallelism  # the test session: local[*]
    assert use_spark("auto", 10**7, spark) == spark_pays(10**7, slots, cores)
    assert not spark_pays(10**9, cores, cores)  # as many slots as cores: a Spark task reads slower
    assert not spark_pays(1_000, 100, 2) and spark_pays(10_000, 100, 2)  # a cluster pays on a large table


def test_a_listing_by_spark_tasks_equals_the_local_walk(spark: Any, tmp_path: Path) -> None:
    root = str(many_folders(tmp_path / "t", folders=LIST_SPLIT + 8))
    local, on_spark = discover(root), discover(root, spark_lister(spark))
    assert tuple(on_spark.files) == tuple(local.files) and len(local.files) == LIST_SPLIT + 10
    assert (on_spark.ignored, on_spark.partition_columns) == (local.ignored, local.partition_columns)


def test_spark_lists_only_for_the_spark_engine_or_a_session_of_more_slots(spark: Any) -> None:
    slots = spark.sparkContext.defaultParallelism
    assert lister_for("spark", spark) is not None
    assert lister_for("local", spark) is None and lister_for("auto", None) is None
    assert (lister_for("auto", spark) is not None) == (slots > len(os.sched_getaffinity(0)))
