"""The proofs' data pass on a messy lake: three unreadable files, a stale .crc sidecar, and two
schema versions whose `weight` types conflict (double, then string). A refutation in the readable
files is a refutation whatever else is unreadable; every verdict is compared with pyarrow's
reading of the files Spark can read; a file whose data Spark cannot read is named with its error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.lake.discover import crc_size
from tests.helpers import run

pytestmark = pytest.mark.spark


def _write(root: Path, rel: str, table: pa.Table) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


@pytest.fixture(scope="module")
def messy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("messy") / "parcels"
    for day in range(1, 4):  # v1: weight a double
        ids = range(day * 10, day * 10 + 10)
        _write(root, f"dt=2024-01-0{day}/part-0.parquet", pa.table({
            "id": pa.array(ids, pa.int64()), "weight": pa.array([1.5] * 10),
            "weight_kg": pa.array([1.5] * 10), "status": ["ok"] * 10}))
    _write(root, "dt=2024-01-04/part-0.parquet", pa.table({  # v2: weight a string; 5 rows disagree
        "id": pa.array(range(100, 110), pa.int64()), "weight": ["1.5"] * 5 + ["2.0"] * 5,
        "weight_kg": pa.array([1.5] * 10), "status": ["ok"] * 9 + ["lost"]}))
    stale = _write(root, "dt=2024-01-05/part-0.parquet", pa.table({  # disagrees too, but Spark cannot read it
        "id": pa.array([200], pa.int64()), "weight": pa.array([9.0]), "weight_kg": pa.array([1.0]),
        "status": ["stolen"]}))
    (stale.parent / f".{stale.name}.crc").write_bytes(b"\0" * (crc_size(stale.stat().st_size) + 4))
    good = (root / "dt=2024-01-01" / "part-0.parquet").read_bytes()
    (root / "dt=2024-01-05" / "part-1.parquet").write_bytes(b"")
    (root / "dt=2024-01-05" / "part-2.parquet").write_bytes(good[: len(good) // 2])
    (root / "dt=2024-01-05" / "part-3.parquet").write_bytes(b"PAR1 not a footer PAR1")
    return root


def _readable(root: Path) -> list[dict[str, Any]]:
    """pyarrow's reading of every file Spark can read: not the stale one, not the unreadable ones."""
    rows: list[dict[str, Any]] = []
    for path in sorted(root.glob("dt=*/part-0.parquet")):
        if not (path.parent / f".{path.name}.crc").exists():
            rows += pq.read_table(path).to_pylist()
    return rows


def _proofs(done: Any) -> dict[str, dict[str, Any]]:
    assert done.returncode in (0, 1, 3), done.stderr
    return {p["proof"]: p for p in json.loads(done.stdout)["proofs"]}


def test_a_refutation_in_the_readable_files_is_a_refutation(messy: Path) -> None:
    rows = _readable(messy)
    disagree = [r for r in rows if float(r["weight"]) != r["weight_kg"]]
    unknown_values = sorted({r["status"] for r in rows} - {"ok"})
    proofs = _proofs(run("check", str(messy), "--agree", "weight = weight_kg", "--values", "status",
                         "--allowed", "ok", "--format", "json"))
    agree, values = proofs["agree"], proofs["values"]
    assert (agree["verdict"], agree["decided_by"], agree["count"]) == ("refuted", "data", len(disagree))
    assert values["verdict"] == "refuted" and values["count"] == len(
        [r for r in rows if r["status"] not in ("ok",)])
    assert [s["value"] for s in values["sample"] if not s["allowed"]] == unknown_values
    for p in (agree, values):
        assert "1 file(s) with a stale .crc sidecar left out of the data pass" in p["why"]
        assert "3 unreadable file(s) in scope" in p["why"]


def test_a_file_whose_data_spark_cannot_read_is_named_with_its_error(tmp_path: Path) -> None:
    root = tmp_path / "t"
    path = _write(root, "part-0.parquet", pa.table({"a": pa.array(range(1000), pa.int64()),
                                                    "b": pa.array(range(1000), pa.int64())}))
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    start = 4
    data[start:len(data) - footer - 8] = b"\xff" * (len(data) - footer - 8 - start)  # pages, not footer
    path.write_bytes(bytes(data))
    proofs = _proofs(run("check", str(root), "--agree", "a = b", "--format", "json"))
    assert proofs["agree"]["verdict"] == "unknown"
    assert "the data could not be checked:" in proofs["agree"]["why"]
    assert "part-0.parquet" in proofs["agree"]["why"]
