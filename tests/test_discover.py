"""Listing a table directory like Spark does, and reading footers without ever raising on bad files.

Every file here is written for real with pyarrow into `tmp_path`.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.lake.discover import (
    LIST_SPLIT,
    DiscoveryError,
    Listing,
    Subtree,
    crc_size,
    discover,
    list_subtrees,
    parse_partition,
    spark_order_key,
)
from schemaguard.lake.scan import ScanResult, Unreadable, scan
from tests.helpers import many_folders

TABLE = pa.table({"id": pa.array(range(100), pa.int64()), "name": [f"n{i}" for i in range(100)]})


def write(path: Path, table: pa.Table = TABLE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def rels(listing: Listing) -> list[str]:
    return [f.rel for f in listing.files]


def ignored(listing: Listing) -> dict[str, str]:
    return {i.rel: i.why for i in listing.ignored}


# ---------------------------------------------------------------------------------------------
# Spark's skip rules


@pytest.fixture
def table_with_junk(tmp_path: Path) -> Path:
    t = tmp_path / "t"
    write(t / "part-00000.parquet")
    write(t / "dt=2024-01-01" / "part-00001.parquet")
    (t / "_SUCCESS").write_bytes(b"")
    write(t / "_temporary" / "0" / "_temporary" / "attempt_1" / "part-00000.parquet")
    write(t / "_temporary" / "0" / "task_1" / "part-00009.parquet")
    (t / "_delta_log").mkdir()
    (t / "_delta_log" / "00000000000000000000.json").write_text("{}\n")
    write(t / ".hidden")
    write(t / ".part-00003.parquet")  # a writer's hidden temporary, Parquet all the same
    write(t / ".hidden-dir" / "part-00000.parquet")
    (t / ".part-00000.parquet.crc").write_bytes(b"crc\x00\x00\x00\x02\x00" + b"\x00" * 8)
    write(t / "_metadata")
    write(t / "_common_metadata")
    write(t / "part-00002.parquet._COPYING_")
    write(t / "dt=2024-01-01" / "_SUCCESS")
    write(t / "dt=2024-01-01" / "_temporary" / "x.parquet")
    return t


def test_only_data_files_are_listed(table_with_junk: Path) -> None:
    listing = discover(str(table_with_junk))
    assert rels(listing) == ["dt=2024-01-01/part-00001.parquet", "part-00000.parquet"]


@pytest.mark.parametrize(
    ("rel", "why"),
    [
        ("_SUCCESS", "job marker"),
        ("_temporary/", "'_'"),
        ("_delta_log/", "Delta"),
        (".hidden", "hidden"),
        (".part-00003.parquet", "hidden"),
        (".part-00000.parquet.crc", "checksum"),
        (".hidden-dir/", "hidden"),
        ("_metadata", "summary"),
        ("_common_metadata", "summary"),
        ("part-00002.parquet._COPYING_", "_COPYING_"),
        ("dt=2024-01-01/_SUCCESS", "job marker"),
        ("dt=2024-01-01/_temporary/", "'_'"),
    ],
)
def test_skipped_names_are_reported_with_why(table_with_junk: Path, rel: str, why: str) -> None:
    reported = ignored(discover(str(table_with_junk)))
    assert rel in reported, sorted(reported)
    assert why in reported[rel]


def test_contents_of_a_skipped_directory_are_neither_listed_nor_reported(
    table_with_junk: Path,
) -> None:
    listing = discover(str(table_with_junk))
    everything = rels(listing) + list(ignored(listing))
    for prefix in ("_temporary/", "_delta_log/", ".hidden-dir/", "dt=2024-01-01/_temporary/"):
        inside = [r for r in everything if r.startswith(prefix) and r != prefix]
        assert inside == [], prefix
    assert listing.ignored == tuple(sorted(listing.ignored, key=lambda i: i.rel))


def test_checksum_sidecars_are_not_data(table_with_junk: Path) -> None:
    listing = discover(str(table_with_junk))
    assert not any(r.endswith(".crc") for r in rels(listing))


def test_checksum_sidecars_are_reported_as_ignored(table_with_junk: Path) -> None:
    assert ".part-00000.parquet.crc" in ignored(discover(str(table_with_junk)))


def test_underscore_partition_directory_is_data(tmp_path: Path) -> None:
    """Spark skips `_x` names unless they hold `=` (a partition directory)."""
    write(tmp_path / "_bucket=3" / "part-0.parquet")
    listing = discover(str(tmp_path))
    assert rels(listing) == ["_bucket=3/part-0.parquet"]
    assert listing.files[0].partition == (("_bucket", "3"),)


def test_empty_directory_is_an_empty_table(tmp_path: Path) -> None:
    listing = discover(str(tmp_path))
    assert listing.files == () and listing.ignored == ()
    result = scan(listing)
    assert list(result.footers) == [] and result.unreadable == ()


# ---------------------------------------------------------------------------------------------
# Hive partitions


def test_partitions_are_parsed_and_unescaped(tmp_path: Path) -> None:
    write(tmp_path / "city=New%20York" / "day=2024-01-05" / "p.parquet")
    write(tmp_path / "city=S%C3%A3o%20Paulo" / "day=2024-01-06" / "p.parquet")
    write(tmp_path / "city=a%2Fb%3Dc%25d" / "day=2024-01-07" / "p.parquet")
    write(tmp_path / "city=__HIVE_DEFAULT_PARTITION__" / "day=2024-01-08" / "p.parquet")
    write(tmp_path / "city=a+b" / "day=2024-01-09" / "p.parquet")
    listing = discover(str(tmp_path))
    assert listing.partition_columns == ("city", "day")
    by_rel = {f.rel: f.partition for f in listing.files}
    assert by_rel == {
        "city=New%20York/day=2024-01-05/p.parquet": (("city", "New York"), ("day", "2024-01-05")),
        "city=S%C3%A3o%20Paulo/day=2024-01-06/p.parquet": (
            ("city", "São Paulo"), ("day", "2024-01-06")),
        "city=a%2Fb%3Dc%25d/day=2024-01-07/p.parquet": (("city", "a/b=c%d"), ("day", "2024-01-07")),
        "city=__HIVE_DEFAULT_PARTITION__/day=2024-01-08/p.parquet": (
            ("city", None), ("day", "2024-01-08")),
        "city=a+b/day=2024-01-09/p.parquet": (("city", "a+b"), ("day", "2024-01-09")),
    }


@pytest.mark.parametrize(
    ("segment", "expected"),
    [
        ("dt=2024-01-05", ("dt", "2024-01-05")),
        ("city=New%20York", ("city", "New York")),
        ("k%3D1=v", ("k=1", "v")),
        ("x=__HIVE_DEFAULT_PARTITION__", ("x", None)),
        ("x=a=b", ("x", "a=b")),
        ("plain", None),
        ("=v", None),
    ],
)
def test_parse_partition(segment: str, expected: tuple[str, str | None] | None) -> None:
    assert parse_partition(segment) == expected


def test_non_partition_directories_add_no_partition_values(tmp_path: Path) -> None:
    write(tmp_path / "data" / "dt=1" / "p.parquet")
    listing = discover(str(tmp_path))
    assert listing.files[0].partition == (("dt", "1"),)
    assert listing.partition_columns == ("dt",)


def test_files_are_sorted_by_path(tmp_path: Path) -> None:
    names = ["b=2/z.parquet", "a.parquet", "b=10/a.parquet", "b=1/y.parquet", "c.parquet",
             "b=1/x.parquet", "A.parquet"]
    for name in names:  # created in this (unsorted) order
        write(tmp_path / name)
    listing = discover(str(tmp_path))
    assert rels(listing) == sorted(names)


def test_a_walk_gives_files_in_the_order_of_their_whole_paths(tmp_path: Path) -> None:
    """The walk sorts one directory at a time, and still gives Spark's order of whole paths:
    `a-c` before `a/b` ('-' sorts before '/'), and UTF-16 order beyond the BMP."""
    names = ["a/b.parquet", "a-c.parquet", "a.parquet", "a/x/y.parquet", "a0.parquet", "a/x-.parquet",
             "\U0001f600.parquet", "\ufffd.parquet", "b=\U0001f600/z.parquet", "b=\ufffd/z.parquet"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        write(tmp_path / name)
    assert rels(discover(str(tmp_path))) == sorted(names, key=spark_order_key) != sorted(names)


def test_data_file_sizes_and_mtimes_come_from_the_filesystem(tmp_path: Path) -> None:
    p = write(tmp_path / "p.parquet")
    os.utime(p, (1_700_000_000, 1_700_000_000))
    (f,) = discover(str(tmp_path)).files
    assert f.size == p.stat().st_size
    assert f.mtime == pytest.approx(1_700_000_000)
    assert Path(f.path) == p


def test_a_single_file_is_a_table_of_one_file(tmp_path: Path) -> None:
    p = write(tmp_path / "dt=2024-01-01" / "one.parquet")
    listing = discover(str(p))
    assert rels(listing) == ["one.parquet"]
    assert listing.files[0].size == p.stat().st_size
    result = scan(listing)
    assert result.unreadable == ()
    assert [f.rows for f in result.footers] == [100]


def test_a_relative_path_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "t" / "p.parquet")
    monkeypatch.chdir(tmp_path)
    assert rels(discover("t")) == ["p.parquet"]
    assert rels(discover("t/")) == ["p.parquet"]


def test_a_missing_path_is_a_discovery_error(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "table"
    with pytest.raises(DiscoveryError, match="no such table path") as raised:
        discover(str(missing))
    assert str(missing) in str(raised.value)
    assert "\n" not in str(raised.value)


def test_an_unknown_uri_scheme_is_a_discovery_error() -> None:
    with pytest.raises(DiscoveryError):
        discover("nosuchscheme://bucket/table")


# ---------------------------------------------------------------------------------------------
# Hadoop .crc sidecars


@pytest.mark.parametrize(
    ("size", "expected"), [(0, 8), (1, 12), (512, 12), (513, 16), (1024, 16), (1025, 20)]
)
def test_crc_size(size: int, expected: int) -> None:
    assert crc_size(size) == expected


def _sidecar(data: Path, size: int) -> None:
    (data.parent / f".{data.name}.crc").write_bytes(b"crc\x00\x00\x00\x02\x00".ljust(size, b"\x00"))


def test_stale_crc_sidecar_is_detected(tmp_path: Path) -> None:
    good = write(tmp_path / "dt=1" / "good.parquet")
    stale = write(tmp_path / "dt=1" / "stale.parquet")
    bare = write(tmp_path / "dt=1" / "bare.parquet")
    right = 8 + 4 * math.ceil(good.stat().st_size / 512)
    _sidecar(good, right)
    _sidecar(stale, 8 + 4 * math.ceil(stale.stat().st_size / 512) + 4)  # one chunk too many
    listing = discover(str(tmp_path))
    assert rels(listing) == ["dt=1/bare.parquet", "dt=1/good.parquet", "dt=1/stale.parquet"]
    assert [s.rel for s in listing.stale_checksums] == ["dt=1/stale.parquet"]
    assert "crc" in listing.stale_checksums[0].why
    assert bare.exists()


def test_a_file_rewritten_after_its_checksum_has_a_stale_sidecar(tmp_path: Path) -> None:
    p = write(tmp_path / "p.parquet")
    _sidecar(p, crc_size(p.stat().st_size))
    assert discover(str(tmp_path)).stale_checksums == ()
    write(p, pa.table({"x": list(range(5000))}))  # rewritten without its sidecar
    assert crc_size(p.stat().st_size) != (tmp_path / ".p.parquet.crc").stat().st_size
    assert [s.rel for s in discover(str(tmp_path)).stale_checksums] == ["p.parquet"]


# ---------------------------------------------------------------------------------------------
# Bad files become Unreadable with a reason, never an exception


def _by_rel(result: ScanResult) -> dict[str, str]:
    return {u.rel: u.reason for u in result.unreadable}


@pytest.fixture
def good_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A good Parquet file's bytes, written outside the test's table directory."""
    return write(tmp_path_factory.mktemp("source") / "good.parquet").read_bytes()


def test_bad_files_are_unreadable_with_a_reason(tmp_path: Path, good_bytes: bytes) -> None:
    t = tmp_path / "t"
    write(t / "good.parquet")
    (t / "zero.parquet").write_bytes(b"")
    (t / "truncated.parquet").write_bytes(good_bytes[: len(good_bytes) // 2])
    (t / "notes.parquet").write_text("id,name\n1,alice\n2,bob\nthis is a CSV export\n")
    (t / "tail-garbage.parquet").write_bytes(good_bytes[:-64] + bytes(range(64)))
    (t / "appended-garbage.parquet").write_bytes(good_bytes + b"\x00garbage after the footer")
    footer_len = struct.unpack("<I", good_bytes[-8:-4])[0]
    body = good_bytes[: -8 - footer_len]
    (t / "corrupt-footer.parquet").write_bytes(body + b"\xff" * footer_len + good_bytes[-8:])
    (t / "tiny.parquet").write_bytes(b"PAR1")

    result = scan(discover(str(t)))

    assert [f.rel for f in result.footers] == ["good.parquet"]
    reasons = _by_rel(result)
    assert sorted(reasons) == sorted([
        "zero.parquet", "truncated.parquet", "notes.parquet", "tail-garbage.parquet",
        "appended-garbage.parquet", "corrupt-footer.parquet", "tiny.parquet",
    ])
    assert "zero-byte" in reasons["zero.parquet"]
    assert reasons["truncated.parquet"].startswith("truncated")
    assert "not a Parquet file" in reasons["notes.parquet"]
    assert "footer" in reasons["tail-garbage.parquet"]
    assert "footer" in reasons["appended-garbage.parquet"]
    assert reasons["corrupt-footer.parquet"].startswith("corrupt footer")
    assert "too small" in reasons["tiny.parquet"]
    for reason in reasons.values():
        assert reason.strip() and "\n" not in reason and "Traceback" not in reason
    assert list(reasons) == sorted(reasons)  # reported in listing (path) order


def test_a_vanished_file_is_unreadable(tmp_path: Path) -> None:
    write(tmp_path / "a.parquet")
    gone = write(tmp_path / "b.parquet")
    listing = discover(str(tmp_path))
    gone.unlink()
    result = scan(listing)
    assert [f.rel for f in result.footers] == ["a.parquet"]
    assert result.unreadable == (Unreadable("b.parquet", result.unreadable[0].reason),)
    assert "vanished" in result.unreadable[0].reason


def test_a_file_emptied_after_listing_is_unreadable(tmp_path: Path) -> None:
    p = write(tmp_path / "a.parquet")
    listing = discover(str(tmp_path))
    p.write_bytes(b"")
    (u,) = scan(listing).unreadable
    assert u.rel == "a.parquet" and u.reason


SCAN_AND_PRINT = """
import json, sys
from schemaguard.lake.discover import discover
from schemaguard.lake.scan import scan
result = scan(discover(sys.argv[1]))
print(json.dumps({"read": [f.rel for f in result.footers],
                  "unreadable": {u.rel: u.reason for u in result.unreadable}}))
"""


def _scanned_without_dac_override(folder: Path) -> dict[str, Any]:
    """The scan as a process without the capabilities that let root read a chmod-000 file."""
    setpriv = shutil.which("setpriv")
    assert setpriv, "running as root: setpriv (util-linux) drops the capability that reads any file"
    drop = "-dac_override,-dac_read_search"
    run = subprocess.run([setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", sys.executable, "-c",
                          SCAN_AND_PRINT, str(folder)], capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr
    found: dict[str, Any] = json.loads(run.stdout)
    return found


def test_an_unreadable_file_is_reported(tmp_path: Path) -> None:
    """As any user: root reads chmod-000 files, so as root the scan runs without that power."""
    write(tmp_path / "a.parquet")
    locked = write(tmp_path / "locked.parquet")
    locked.chmod(0)
    try:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            found = _scanned_without_dac_override(tmp_path)
        else:
            result = scan(discover(str(tmp_path)))
            found = {"read": [f.rel for f in result.footers], "unreadable": _by_rel(result)}
    finally:
        locked.chmod(0o644)
    assert found == {"read": ["a.parquet"],
                     "unreadable": {"locked.parquet": "cannot be opened: permission denied"}}


# ---------------------------------------------------------------------------------------------
# Two workers give the same answer as one


def test_worker_processes_give_the_in_process_result(tmp_path: Path, good_bytes: bytes) -> None:
    n = 420
    small = [pa.table({"a": pa.array([1], pa.int32())}), pa.table({"b": ["x"], "c": [1.5]})]
    for i in range(n):
        write(tmp_path / f"dt=2024-01-{1 + i % 28:02d}" / f"p{i:04d}.parquet", small[i % 2])
    (tmp_path / "dt=2024-01-03" / "zero.parquet").write_bytes(b"")
    (tmp_path / "dt=2024-01-07" / "trunc.parquet").write_bytes(good_bytes[:100])
    vanishing = tmp_path / "dt=2024-01-09" / "p0008.parquet"
    assert vanishing.exists()

    listing = discover(str(tmp_path))
    assert len(listing.files) == n + 2
    vanishing.unlink()

    seen: list[int] = []
    in_process = scan(listing, workers=1)
    parallel = scan(listing, progress=seen.append, workers=2)

    assert parallel == in_process
    assert sum(seen) == len(listing.files) and len(seen) > 1  # progress came in chunks
    assert len(in_process.footers) == n - 1
    assert {u.rel for u in in_process.unreadable} == {
        "dt=2024-01-03/zero.parquet", "dt=2024-01-07/trunc.parquet", "dt=2024-01-09/p0008.parquet",
    }
    assert [f.rel for f in parallel.footers] == sorted(f.rel for f in parallel.footers)
    assert {f.fingerprint for f in parallel.footers} == {f.fingerprint for f in in_process.footers}
    assert len({f.fingerprint for f in parallel.footers}) == 2


def _same(listing: Listing) -> tuple[object, ...]:
    return (listing.root, tuple(listing.files), listing.ignored, listing.stale_checksums,
            listing.partition_columns)


def test_a_listing_split_by_top_directory_equals_the_whole_walk(tmp_path: Path) -> None:
    """Past LIST_SPLIT top directories a lister (a Spark job in use) lists each; handed back in
    any order, the listing is the same, cycles, skipped names and findings included."""
    root = many_folders(tmp_path / "t", folders=LIST_SPLIT + 8)
    asked: list[str] = []

    def backwards(filesystem: object, folders: Sequence[str]) -> Iterator[Subtree]:
        asked.extend(folders)
        return list_subtrees(None, reversed(folders))

    whole = discover(str(root))
    split = discover(str(root), backwards)
    assert len(asked) == LIST_SPLIT + 8 + 4 and _same(split) == _same(whole)
    assert len(whole.files) == LIST_SPLIT + 8 + 2 and any("FIFO" in i.why for i in whole.ignored)


def test_a_table_of_few_directories_is_listed_here(tmp_path: Path) -> None:
    root = many_folders(tmp_path / "t", folders=3)

    def refuse(filesystem: object, folders: Sequence[str]) -> Iterator[Subtree]:
        raise AssertionError("listed elsewhere")

    assert _same(discover(str(root), refuse)) == _same(discover(str(root)))
