"""How the plan judges its non-data checks from what it read, without Spark: a read of the column
in the query logs in any spelling refutes `no-reads`, and every file written without a defaulted
column is counted, with its rows, by `default-impact`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from schemaguard.formats.notation import schema_from_notation
from schemaguard.lake.table import read
from schemaguard.planning.evidence import Evidence, judge
from schemaguard.planning.planner import Check
from schemaguard.planning.usage.tally import ColumnUsage, Usage

NEW = schema_from_notation({"fields": [{"name": "id", "type": "int64"},
                                       {"name": "weight", "type": "double"}]})


def usage(*columns: ColumnUsage, unresolved: int = 0) -> Usage:
    return Usage("shipments", {c.column: c for c in columns}, 10, unresolved, (), 0, None, None)


def test_a_read_of_the_column_in_any_spelling_refutes_no_reads() -> None:
    last = datetime(2026, 12, 1, tzinfo=UTC)
    seen = usage(ColumnUsage("Weight", last, ("etl", "bi"), 3))
    judged = judge(Evidence(NEW, usage=seen))(Check("no-reads", "weight", None))
    assert judged.status == "refuted" and judged.evidence.startswith("3 queries by 2 reader(s)")
    unread = judge(Evidence(NEW, usage=usage()))(Check("no-reads", "weight", None))
    assert unread.status == "proven"
    unsure = judge(Evidence(NEW, usage=usage(unresolved=2)))(Check("no-reads", "weight", None))
    assert unsure.status == "unknown"


def test_default_impact_counts_every_file_and_row_written_without_the_column(tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": [1, 2, 3]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"id": [4], "weight": [1.5]}), tmp_path / "b.parquet")
    impact = Check("default-impact", "weight", None)
    judged = judge(Evidence(NEW, table=read(str(tmp_path), workers=1)))(impact)
    assert judged.status == "refuted" and judged.evidence.startswith("1 file(s), 3 rows read the")
    pq.write_table(pa.table({"id": [5], "weight": [2.5]}), tmp_path / "a.parquet")
    judged = judge(Evidence(NEW, table=read(str(tmp_path), workers=1)))(impact)
    assert judged.status == "proven"
