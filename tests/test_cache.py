"""Incremental runs (lake/cache.py): a second read of a table takes the footers of unchanged files
from the cache beside the reports, and reads what changed; whatever the cache holds, the result
is the one a full read gives."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.lake import cache
from schemaguard.lake.discover import discover
from schemaguard.lake.table import TableRead, read_listing

OLD = time.time() - 3600  # written an hour ago: settled, so cached


@pytest.fixture(autouse=True)
def _own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMAGUARD_HOME", str(tmp_path / "home"))


def write(path: Path, columns: dict[str, pa.Array], when: float = OLD) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)
    os.utime(path, (when, when))


def table(root: Path) -> Path:
    t = root / "t"
    for i in range(30):
        columns = {"id": pa.array([i, None], pa.int64()), "name": pa.array(["a", None])}
        if i >= 20:
            columns["extra"] = pa.array([1.5, None])
        write(t / f"dt=2024-01-{1 + i // 10:02d}" / f"part-{i:03d}.parquet", columns, OLD + i)
    return t


def read(t: Path, reports: Path | None, incremental: bool = True) -> TableRead:
    return read_listing(discover(str(t)), report_dir=reports, incremental=incremental)


def same(a: TableRead, b: TableRead) -> None:
    """Everything a check or report reads from a table read."""
    assert list(a.scan.footers) == list(b.scan.footers)
    assert a.scan.unreadable == b.scan.unreadable
    assert [(v.fingerprint, list(v.files), v.rows, v.partitions, v.first_seen, v.last_seen)
            for v in a.versions] == [(v.fingerprint, list(v.files), v.rows, v.partitions, v.first_seen,
                                      v.last_seen) for v in b.versions]


def test_an_unchanged_table_is_read_from_the_cache_and_reads_the_same(tmp_path: Path) -> None:
    t, reports = table(tmp_path), tmp_path / "reports"
    first = read(t, reports)
    assert first.reuse == cache.Reuse(0, 30)
    assert len(list((reports / cache.CACHE_DIR).iterdir())) == 1
    second = read(t, reports)
    assert second.reuse == cache.Reuse(30, 0)
    same(second, read(t, None))
    assert len(second.versions) == 2
    assert read(t, reports, incremental=False).reuse == cache.Reuse(0, 30)  # --full


def test_changed_added_and_removed_files_are_read_again(tmp_path: Path) -> None:
    t, reports = table(tmp_path), tmp_path / "reports"
    read(t, reports)
    changed = t / "dt=2024-01-01" / "part-003.parquet"
    write(changed, {"id": pa.array(["x", "y"]), "name": pa.array(["a", None])}, OLD + 100)  # a new type
    write(t / "dt=2024-01-02" / "part-015b.parquet", {"id": pa.array([1], pa.int64())})
    (t / "dt=2024-01-03" / "part-025.parquet").unlink()
    (t / "dt=2024-01-03" / "part-026.parquet").write_bytes(b"PAR1 truncated")  # now unreadable
    again = read(t, reports)
    assert again.reuse == cache.Reuse(27, 3)
    same(again, read(t, None))
    assert len(again.versions) == 4 and len(again.scan.unreadable) == 1


def test_a_file_written_in_the_last_moments_is_not_cached(tmp_path: Path) -> None:
    """Within one tick of the file system's clock a same-size rewrite keeps its time: a file this
    new is read again next time (git's racy-clean rule)."""
    t, reports = table(tmp_path), tmp_path / "reports"
    write(t / "dt=2024-01-01" / "fresh.parquet", {"id": pa.array([1], pa.int64())}, time.time())
    read(t, reports)
    assert read(t, reports).reuse == cache.Reuse(30, 1)


@pytest.mark.parametrize("damage", ["format", "key", "truncated", "flipped", "empty", "not ours"])
def test_a_cache_of_another_version_or_user_or_damaged_is_ignored(tmp_path: Path, damage: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    t, reports = table(tmp_path), tmp_path / "reports"
    read(t, reports)
    [path] = (reports / cache.CACHE_DIR).iterdir()
    data = path.read_bytes()
    if damage == "format":
        data = data[:8] + struct.pack("<I", cache.FORMAT + 1) + data[12:]
    elif damage == "key":
        monkeypatch.setenv("SCHEMAGUARD_HOME", str(tmp_path / "another user"))
    elif damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "flipped":
        data = data[:-10] + bytes([data[-10] ^ 1]) + data[-9:]
    elif damage == "empty":
        data = b""
    else:
        data = b"PAR1" + data[4:]
    path.write_bytes(data)
    again = read(t, reports)
    assert again.reuse is not None and again.reuse.reused == 0 and again.reuse.read == 30
    assert again.reuse.ignored  # said why
    same(again, read(t, None))
    assert read(t, reports).reuse == cache.Reuse(30, 0)  # and written anew


def test_a_crash_while_writing_leaves_the_old_cache(tmp_path: Path) -> None:
    t, reports = table(tmp_path), tmp_path / "reports"
    read(t, reports)
    [path] = (reports / cache.CACHE_DIR).iterdir()
    partial = path.parent / f".{path.name}.1234.tmp"  # what a run killed mid-write leaves
    partial.write_bytes(path.read_bytes()[:100])
    assert read(t, reports).reuse == cache.Reuse(30, 0)


def test_each_table_has_its_own_cache(tmp_path: Path) -> None:
    a, b, reports = table(tmp_path / "a"), table(tmp_path / "b"), tmp_path / "reports"
    read(a, reports)
    assert read(b, reports).reuse == cache.Reuse(0, 30)
    assert read(a, reports).reuse == cache.Reuse(30, 0)
    assert len(list((reports / cache.CACHE_DIR).iterdir())) == 2
