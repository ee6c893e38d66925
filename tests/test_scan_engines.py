"""The Spark engine reads the same footers as the local engine: one footer function, two ways
of running it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemaguard.demo import build_demo_lake
from schemaguard.lake.discover import discover
from schemaguard.lake.history import build_history
from schemaguard.lake.scan import scan, scan_on_spark


def test_spark_engine_matches_local_engine(spark: Any, tmp_path: Path) -> None:
    listing = discover(str(build_demo_lake(tmp_path)))
    local = scan(listing, workers=1)
    on_spark = scan_on_spark(listing, spark)
    assert sorted((f.rel, f.fingerprint, f.rows, f.stats) for f in on_spark.footers) == sorted(
        (f.rel, f.fingerprint, f.rows, f.stats) for f in local.footers)
    assert set(on_spark.unreadable) == set(local.unreadable)
    versions = build_history(on_spark.footers).versions
    assert [len(v.files) for v in versions] == [30, 30, 30, 30]
