"""Fuzzing the footer reader: real footers with bytes flipped, cut, inserted or their length field
changed must each end as a read footer or one `UnreadableFile`, never another exception, a hang
or an allocation out of proportion to the file (bounded to well under a minute)."""

from __future__ import annotations

import decimal
import tempfile
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemaguard.formats.parquet import UnreadableFile, forget_footer_schemas, read_footer


def _sample_files() -> list[bytes]:
    tables = [
        pa.table({
            "id": pa.array([1, None, 3], pa.int64()), "s": ["a", "b", None],
            "d": pa.array([decimal.Decimal("1.25")] * 3, pa.decimal128(12, 2)),
            "ts": pa.array([datetime(2024, 1, 1, tzinfo=UTC)] * 3, pa.timestamp("us", "UTC")),
            "tags": pa.array([["x"], [], None], pa.list_(pa.string())),
            "m": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int32())),
            "st": pa.array([{"a": 1, "b": "z"}] * 3, pa.struct([("a", pa.int16()), ("b", pa.string())])),
        }),
        pa.table({"u": pa.array([1, 2], pa.uint32()), "f": pa.array([1.5, None], pa.float32())}),
    ]
    out = []
    for t in tables:
        sink = pa.BufferOutputStream()
        pq.write_table(t, sink, row_group_size=2)
        out.append(sink.getvalue().to_pybytes())
    return out


SAMPLES = _sample_files()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SAMPLES)))
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length  # mutate the footer, where the decoder works
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "set", "cut", "insert", "length"]))
        at = start + draw(st.integers(0, 2**20)) % (len(data) - 8 - start)  # spread, not near the start
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set":
            data[at] = draw(st.sampled_from([0x00, 0x0F, 0x7F, 0x80, 0xFF, 0x19, 0x1C, 0x15, 0x16]))
        elif kind == "cut":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            new = draw(st.sampled_from([0, 1, length - 1, length + 1, 2**31 - 1, 2**32 - 1]))
            data[-8:-4] = (new % 2**32).to_bytes(4, "little")
    return bytes(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_footer_is_read_or_one_unreadable_file(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mutated.parquet"
        path.write_bytes(data)
        _read_within_bounds(path, data)


def _read_within_bounds(path: Path, data: bytes) -> None:
    forget_footer_schemas()  # decode the schema too, not only the row groups
    tracemalloc.start()  # a read that never ends is the per-test timeout's (pyproject.toml)
    try:
        footer = read_footer(str(path))
    except UnreadableFile as e:
        assert e.reason and "\n" not in e.reason
    else:
        assert footer.rows >= 0
        assert len(footer.stats) == len(footer.footer.columns)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 64 * len(data) + 2**20  # proportional to the footer, not to a claimed length
