"""One bad file is one finding: files that make the footer reader raise, abort the process or hang,
and names the listing cannot decode, each end as an unreadable or ignored file while every other
file is read (no JVM: these run in `make test-fast`)."""

from __future__ import annotations

import base64
import os
import select
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pyarrow.parquet.encryption as pe
import pytest
from pyarrow import fs as pafs

from schemaguard.checks import run_checks
from schemaguard.formats.parquet import read_footer
from schemaguard.lake.discover import discover
from schemaguard.lake.scan import scan
from schemaguard.lake.table import read


class _Kms(pe.KmsClient):  # type: ignore[misc]  # an in-memory KMS: the key is only base64-wrapped
    def wrap_key(self, key_bytes: bytes, master_key_identifier: str) -> bytes:
        return base64.b64encode(key_bytes)

    def unwrap_key(self, wrapped_key: bytes, master_key_identifier: str) -> bytes:
        return base64.b64decode(wrapped_key)


def encrypted_columns(path: Path, plaintext_footer: bool = True) -> None:
    """An encrypted column `a` (pyarrow's modular encryption), under a plaintext footer by default."""
    factory = pe.CryptoFactory(lambda config: _Kms())
    config = pe.EncryptionConfiguration(footer_key="fk", column_keys={"ck": ["a"]},
                                        plaintext_footer=plaintext_footer, double_wrapping=False)
    props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config)
    t = pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    with pq.ParquetWriter(path, t.schema, encryption_properties=props) as w:
        w.write_table(t)


def good_lake(root: Path, n: int) -> None:
    for i in range(n):
        part = root / f"dt=2024-01-{1 + i % 28:02d}"
        part.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"a": pa.array([i], pa.int64())}), part / f"p{i:04d}.parquet")


def test_encrypted_columns_under_a_plaintext_footer_are_read_and_named(tmp_path: Path) -> None:
    """pyarrow's C++ aborts reading this footer's statistics; the footer's own bytes say which
    columns are encrypted, and their statistics are unknown."""
    good_lake(tmp_path, 3)
    encrypted_columns(tmp_path / "dt=2024-01-02" / "p9999-encrypted.parquet")
    table = read(str(tmp_path))
    assert table.scan.unreadable == ()
    [enc] = [f for f in table.scan.footers if f.encrypted]
    assert enc.rel == "dt=2024-01-02/p9999-encrypted.parquet"
    assert enc.encrypted == ("a",)
    assert enc.stats[0].complete is False and enc.stats[0].null_count is None
    assert enc.stats[1].null_count == 0 and enc.stats[1].min == b"x"  # `b` is not encrypted
    found = [f for f in run_checks(table) if f.code == "ENCRYPTED_COLUMNS"]
    assert [(f.files, f.subject) for f in found] == [(("dt=2024-01-02/p9999-encrypted.parquet",), "a")]


def test_an_encrypted_footer_is_unreadable_naming_its_algorithm(tmp_path: Path) -> None:
    good_lake(tmp_path, 2)
    encrypted_columns(tmp_path / "dt=2024-01-02" / "p9999-secret.parquet", plaintext_footer=False)
    table = read(str(tmp_path))
    assert [(u.rel, u.reason) for u in table.scan.unreadable] == [
        ("dt=2024-01-02/p9999-secret.parquet",
         "encrypted footer (PARE, AES_GCM_V1): cannot be read without its key")]
    assert len(table.scan.footers) == 2


def _hang_on(marker: str) -> Callable[..., Any]:
    """The footer reader, except that it blocks on one file as a read from a stalled mount does."""
    def reader(path: str, **kwargs: Any) -> Any:
        if marker in path:
            select.select([], [], [])  # blocks in a system call until a signal interrupts it
        return read_footer(path, **kwargs)
    return reader


def test_a_read_that_blocks_is_one_unreadable_file_after_the_time_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good_lake(tmp_path, 20)
    hanging = tmp_path / "dt=2024-01-03" / "p9999-hang.parquet"
    shutil.copy(tmp_path / "dt=2024-01-01" / "p0000.parquet", hanging)
    monkeypatch.setattr("schemaguard.lake.scan.read_footer", _hang_on("p9999-hang"))
    monkeypatch.setattr("schemaguard.lake.scan.READ_SECONDS", 0.5)
    result = scan(discover(str(tmp_path)), workers=2)
    assert len(result.footers) == 20
    assert [(u.rel, u.reason.split(":")[0]) for u in result.unreadable] == [
        ("dt=2024-01-03/p9999-hang.parquet", "timed out")]


def test_the_remote_engine_reads_as_the_local_one_and_a_read_that_blocks_is_one_finding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The object-store engine (threads; here over pyarrow's local filesystem, as it would be over
    S3): the same footers in the listing's order, and a read that never returns is cut off by the
    time limit without holding up the others or the process."""
    good_lake(tmp_path, 40)
    listing = discover(str(tmp_path))
    local = scan(listing, workers=1)
    remote = replace(listing, filesystem=pafs.LocalFileSystem())
    assert not remote.is_local
    same = scan(remote)
    assert [(f.rel, f.fingerprint, f.rows, f.stats) for f in same.footers] == [
        (f.rel, f.fingerprint, f.rows, f.stats) for f in local.footers]
    hanging = tmp_path / "dt=2024-01-03" / "p9999-hang.parquet"
    shutil.copy(tmp_path / "dt=2024-01-01" / "p0000.parquet", hanging)
    monkeypatch.setattr("schemaguard.lake.scan.read_footer", _hang_on("p9999-hang"))
    monkeypatch.setattr("schemaguard.lake.scan.READ_SECONDS", 0.5)
    result = scan(replace(discover(str(tmp_path)), filesystem=pafs.LocalFileSystem()))
    assert len(result.footers) == 40
    assert [(u.rel, u.reason.split(":")[0]) for u in result.unreadable] == [
        ("dt=2024-01-03/p9999-hang.parquet", "timed out")]


def _abort_on(marker: str) -> Callable[..., Any]:
    """The footer reader, except that it kills its process on one file: a stand-in for a crash
    inside a native library, which the engine must survive whatever causes it."""
    def reader(path: str, **kwargs: Any) -> Any:
        if marker in path:
            os.abort()
        return read_footer(path, **kwargs)
    return reader


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_that_kills_its_reader_is_one_unreadable_file(
        tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    good_lake(tmp_path, 600)
    killer = tmp_path / "dt=2024-01-05" / "p9999-kill.parquet"
    shutil.copy(tmp_path / "dt=2024-01-01" / "p0000.parquet", killer)
    monkeypatch.setattr("schemaguard.lake.scan.read_footer", _abort_on("p9999-kill"))
    result = scan(discover(str(tmp_path)), workers=workers)
    assert len(result.footers) == 600
    assert [u.rel for u in result.unreadable] == ["dt=2024-01-05/p9999-kill.parquet"]
    assert result.unreadable[0].reason.startswith("reader crashed")
    assert [f.rel for f in result.footers] == sorted(f.rel for f in result.footers)  # order kept


def test_a_writer_name_that_is_not_utf8_is_read_with_a_replacement_character(tmp_path: Path) -> None:
    good_lake(tmp_path, 3)
    data = (tmp_path / "dt=2024-01-01" / "p0000.parquet").read_bytes()
    at = data.rindex(b"parquet-cpp-arrow")  # created_by, in the footer: no checksum guards it
    (tmp_path / "dt=2024-01-01" / "p0000.parquet").write_bytes(data[:at] + b"\xff" + data[at + 1:])
    table = read(str(tmp_path))
    assert table.scan.unreadable == ()
    [odd] = [f for f in table.scan.footers if f.rel == "dt=2024-01-01/p0000.parquet"]
    assert odd.created_by is not None and odd.created_by.startswith("\ufffdarquet-cpp-arrow")
    assert run_checks(table) == []


def test_a_fifo_is_not_data_and_one_in_a_files_place_is_unreadable(tmp_path: Path) -> None:
    good_lake(tmp_path, 2)
    os.mkfifo(tmp_path / "dt=2024-01-01" / "pipe.parquet")
    listing = discover(str(tmp_path))
    assert [(i.rel, i.why) for i in listing.ignored] == [
        ("dt=2024-01-01/pipe.parquet", "not a regular file (a FIFO, socket or device): not data")]
    swapped = tmp_path / "dt=2024-01-02" / "p0001.parquet"
    swapped.unlink()
    os.mkfifo(swapped)  # after the listing, before the footer read: must not hang
    result = scan(listing)
    assert len(result.footers) == 1
    assert [(u.rel, u.reason) for u in result.unreadable] == [
        ("dt=2024-01-02/p0001.parquet", "not a regular file (a FIFO, socket or device took its place)")]


def test_a_name_that_is_not_utf8_is_listed_escaped_and_one_finding(tmp_path: Path) -> None:
    good_lake(tmp_path, 2)
    odd = os.path.join(os.fsencode(tmp_path), b"dt=2024-01-\xff")
    os.mkdir(odd)
    source = os.fsencode(tmp_path / "dt=2024-01-01" / "p0000.parquet")
    shutil.copy(source, os.path.join(odd, b"p\xfe.parquet"))
    table = read(str(tmp_path))
    assert table.scan.unreadable == ()
    assert sorted(f.rel for f in table.scan.footers)[-1] == "dt=2024-01-\\xff/p\\xfe.parquet"
    [finding] = run_checks(table)
    assert (finding.code, finding.files) == ("NAME_NOT_UTF8", ("dt=2024-01-\\xff/p\\xfe.parquet",))
