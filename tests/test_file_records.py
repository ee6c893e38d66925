"""Per-file records kept as columns (lake/file_records.py) give back exactly the files put in: the
listing's and the footers' every field, whatever the path, time or statistics."""

from __future__ import annotations

import pickle
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from schemaguard.formats.parquet import LeafStats, decode_stats, encode_stats, read_footer
from schemaguard.lake.file_records import DataFile, DataFiles, Footers
from schemaguard.lake.history import build_history


def test_a_listing_gives_back_every_field_of_every_file() -> None:
    files = [
        DataFile("/t/dt=1/a.parquet", "dt=1/a.parquet", 10, 1.5, (("dt", "1"),)),
        DataFile("/t/dt=1/b.parquet", "dt=1/b.parquet", 0, None, (("dt", "1"),)),
        DataFile("/t/\udcff.parquet", "\\xff.parquet", 7, 2.0, ()),  # a name shown with escapes
        DataFile("s3://b/x.parquet", "s3://b/x.parquet", 3, 0.0, (("dt", None),)),  # another root
        DataFile("/t/ü/€.parquet", "ü/€.parquet", 1, -1.0, ()),
    ]
    listed = DataFiles(files)
    assert len(listed) == 5 and list(listed) == files and listed == files and listed == tuple(files)
    assert listed[-1] == files[-1] and listed[1:3] == files[1:3]
    assert pickle.loads(pickle.dumps(listed)) == files  # as a Spark task receives its range
    assert DataFiles() == () and not DataFiles()


def test_the_paths_ending_with_a_suffix_are_exactly_those_endswith_finds() -> None:
    rels = ["metadata/v1.metadata.json", "a.metadata.json/part-0.parquet", "x.metadata.jso",
            "ü/v2.metadata.json", "metadata/v1.metadata.json.tmp", ".metadata.json", "dt=1/a.parquet",
            "metadata/v3.metadata.json", "x.meta", "data.json", "x", ".metadata.json"]  # a match across two
    listed = DataFiles(DataFile(f"/t/{r}", r, 1, None, ()) for r in rels)
    for suffix in (".metadata.json", ".parquet", "json", "/part-0.parquet", "€"):
        assert listed.rels_ending(suffix) == [r for r in rels if r.endswith(suffix)]
    assert DataFiles().rels_ending(".parquet") == []


def test_statistics_come_back_exactly_and_any_value_marshal_refuses_is_pickled() -> None:
    stats = (LeafStats(3, -(2**70), 2**70, True, None), LeafStats(None, b"\x00a", b"\xff", False, False),
             LeafStats(0, 1.5, float("inf"), True, True), LeafStats(1, True, False, True))
    assert decode_stats(encode_stats(stats)) == stats
    odd = (LeafStats(0, Decimal("1.5"), Decimal("2"), True),)  # not a value a decoder gives today
    assert decode_stats(encode_stats(odd)) == odd


def test_footers_give_back_what_was_read_and_share_one_schema_object(tmp_path: Path) -> None:
    footers = []
    for i in range(6):
        path = tmp_path / f"dt=2024-01-0{1 + i % 2}" / f"part-{i}.parquet"
        path.parent.mkdir(exist_ok=True)
        columns = {"id": pa.array([i, None]), "name": pa.array(["a", f"b{i}"])}
        if i >= 3:
            columns["extra"] = pa.array([1.5, 2.5])
        pq.write_table(pa.table(columns), path)
        footers.append(read_footer(str(path), rel=str(path.relative_to(tmp_path)),
                                   partition=(("dt", path.parent.name[3:]),), mtime=float(i)))
    copies = [f._replace(footer=pickle.loads(pickle.dumps(f.footer))) for f in footers]  # as workers send
    kept = Footers(copies)
    assert list(kept) == footers
    assert kept[0].footer is kept[1].footer is kept[2].footer  # one object per distinct schema
    assert len(kept.schemas()) == 2
    history = build_history(kept)
    assert [len(v.files) for v in history.versions] == [3, 3]
    assert list(history.versions[1].files) == sorted(footers[3:], key=lambda f: f.rel)
    assert history.versions[0].rows == 6
    assert history.versions[0].partitions == ("dt=2024-01-01", "dt=2024-01-02")
