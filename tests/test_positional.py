"""Positional readers against a real one: Spark's CSV reader with a declared schema and no header
binds the i-th column of the data to the i-th column of the reader, whatever the names (as Hive,
Trino and Athena read ORC by index). What its values show, and our verdict on each change: a rename
in place reads the same column; a name that moves, an insert or a drop in the middle lands values
in another column (a quiet break); a column appended at the end reads as null."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schemaguard.base import Options
from schemaguard.formats.notation import schema_from_notation
from schemaguard.model import Schema
from schemaguard.rules.profiles import can_read

pytestmark = pytest.mark.spark

ROWS = 3


def schema(*names: str) -> Schema:
    return schema_from_notation({"fields": [{"name": n, "type": "int32"} for n in names]})


# (the change, the data's columns, the reader's columns, the reader columns our verdict misbinds)
CASES = [
    ("a rename in place", ("a", "b", "c"), ("a", "x", "c"), set()),
    ("a drop in the middle", ("a", "b", "c"), ("a", "c"), {"c"}),
    ("an insert in the middle", ("a", "c"), ("a", "b", "c"), {"b"}),
    ("two columns swapped", ("a", "b"), ("b", "a"), {"a", "b"}),
    ("a column appended at the end", ("a", "b"), ("a", "b", "c"), set()),
]


@pytest.mark.parametrize(("change", "written", "read", "misbound"), CASES, ids=[c[0] for c in CASES])
def test_a_positional_reader_binds_by_position_and_our_verdict_names_what_moved(
        spark: Any, tmp_path: Path, change: str, written: tuple[str, ...], read: tuple[str, ...],
        misbound: set[str]) -> None:
    path = tmp_path / "data.csv"
    # each data column's values say which column they are: 100 x (its position + 1) + the row
    path.write_text("".join(",".join(str(100 * (i + 1) + r) for i in range(len(written))) + "\n"
                            for r in range(ROWS)))
    ddl = ", ".join(f"{n} INT" for n in read)
    got = [row.asDict() for row in spark.read.schema(ddl).csv(str(path)).collect()]
    for j, name in enumerate(read):  # Spark: the j-th data column, whatever its name; past the end, null
        expected = [100 * (j + 1) + r if j < len(written) else None for r in range(ROWS)]
        assert [row[name] for row in got] == expected, (change, name)
    problems = can_read(schema(*written), schema(*read), "positional", Options())
    assert {p.path for p in problems if p.code == "POSITION_NAME_MISMATCH"} == misbound, (change, problems)
    assert all(p.quiet for p in problems), problems
