"""Tables on an object store: a real S3-compatible server on loopback (moto's standalone server),
reached by pyarrow's own S3 filesystem over HTTP, through a proxy that adds 20 ms to every
request and injects 503 SlowDown answers and reset connections. The footers read must equal a
local read of the same files, and credentials never appear in any output."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs as pafs

from schemaguard.lake.discover import LIST_SPLIT, REMOTE_THREADS, Subtree, discover, list_subtrees
from schemaguard.lake.scan import scan
from tests.helpers import many_folders, run
from tests.s3_store import KEY, SECRET, Faults, faulty_proxy, moto_server

BUCKET = "lake"


def _local_lake(root: Path) -> Path:
    """60 files in 3 partitions, two writer schemas (a column added on the third day)."""
    for day in (1, 2, 3):
        folder = root / f"dt=2024-01-0{day}"
        folder.mkdir(parents=True)
        for i in range(20):
            columns = {"id": pa.array([i, i + 1], pa.int64()), "name": pa.array(["a", None])}
            if day == 3:
                columns["qty"] = pa.array([1.5, 2.5])
            pq.write_table(pa.table(columns), folder / f"part-{i:03d}.parquet")
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The server's endpoint, with the local lake uploaded under s3://lake/orders."""
    local = _local_lake(tmp_path_factory.mktemp("s3") / "orders")
    with moto_server() as endpoint:
        s3 = pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, endpoint_override=endpoint, scheme="http",
                               region="us-east-1", allow_bucket_creation=True)
        s3.create_dir(BUCKET)
        pafs.copy_files(str(local), f"{BUCKET}/orders", source_filesystem=pafs.LocalFileSystem(),
                        destination_filesystem=s3)
        yield endpoint, local


def _environment(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    """Where the AWS SDK (and so pyarrow) looks for an endpoint and credentials."""
    for key, value in {"AWS_ENDPOINT_URL": f"http://{endpoint}", "AWS_ACCESS_KEY_ID": KEY,
                       "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1",
                       "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(key, value)


def _seen(result: object) -> list[tuple[object, ...]]:
    return [(f.rel, f.fingerprint, f.rows, f.stats, f.partition) for f in result.footers]  # type: ignore[attr-defined]


def test_footers_read_through_throttling_and_dropped_connections_equal_a_local_read(
        store: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint, local = store
    faults = Faults(latency=0.02, slow_down_every=7, reset_every=11)
    with faulty_proxy(endpoint, faults) as proxy:
        _environment(monkeypatch, proxy)
        for scheme in ("s3", "s3a"):
            listing = discover(f"{scheme}://{BUCKET}/orders")
            assert not listing.is_local and len(listing.files) == 60
            remote = scan(listing)
            assert remote.unreadable == ()
            assert _seen(remote) == _seen(scan(discover(str(local)), workers=1))
    assert {"503", "reset"} <= set(faults.injected)


def test_reads_in_flight_are_not_held_back_by_the_sdks_connection_pool(
        store: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The AWS SDK opens at most as many connections as pyarrow has I/O threads (at least 25);
    REMOTE_THREADS reads in flight need as many, or the store's latency is paid 25 files at a time."""
    endpoint, _ = store
    faults = Faults(latency=0.2)  # long enough that every reader's first request waits at once
    with faulty_proxy(endpoint, faults) as proxy:
        _environment(monkeypatch, proxy)
        assert len(scan(discover(f"s3://{BUCKET}/orders")).footers) == 60
    assert 25 < faults.peak <= REMOTE_THREADS


def test_a_listing_split_by_top_directory_equals_one_listing_of_the_store(
        store: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint, _ = store
    _environment(monkeypatch, endpoint)
    local = many_folders(tmp_path / "many", folders=LIST_SPLIT + 4)
    s3 = pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, endpoint_override=endpoint, scheme="http",
                           region="us-east-1")
    for path in local.rglob("*.parquet"):
        if path.is_file() and "loop" not in path.parts and path.name.isascii():
            with s3.open_output_stream(f"{BUCKET}/many/{path.relative_to(local)}") as out:
                out.write(path.read_bytes())
    asked: list[str] = []

    def here(filesystem: pafs.FileSystem | None, folders: Sequence[str]) -> Iterator[Subtree]:
        asked.extend(folders)
        return list_subtrees(filesystem, reversed(folders))

    whole, split = discover(f"s3://{BUCKET}/many"), discover(f"s3://{BUCKET}/many", here)
    assert len(asked) == LIST_SPLIT + 4 + 3  # and _tmp, .hidden, _delta_log
    assert tuple(split.files) == tuple(whole.files) and len(whole.files) == LIST_SPLIT + 4 + 1
    assert (split.ignored, split.partition_columns) == (whole.ignored, whole.partition_columns)


def test_credentials_never_reach_output_or_reports(store: tuple[str, Path], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint, _ = store
    _environment(monkeypatch, endpoint)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")  # only the URI holds the secret
    uri = f"s3://{KEY}:{SECRET}@{BUCKET}/orders"
    done = run("scan", uri, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["table"] == f"s3://{BUCKET}/orders"
    assert SECRET not in done.stdout + done.stderr
    missing = run("scan", f"s3://{KEY}:{SECRET}@{BUCKET}/nothing-here")
    assert missing.returncode == 2 and SECRET not in missing.stdout + missing.stderr
    conf = tmp_path / "schemaguard.toml"
    conf.write_text(f'[audit]\nreport_dir = "reports"\n[[tables]]\nname = "orders"\npath = "{uri}"\n')
    audited = run("audit", "--conf", str(conf), "--no-catalog", "--run-id", "r1")
    assert audited.returncode in (0, 1), audited.stderr
    reports = list((tmp_path / "reports" / "r1").iterdir())
    assert len(reports) == 5
    for report in reports:
        assert SECRET not in report.read_text(), report.name
    assert SECRET not in audited.stdout + audited.stderr
