"""The footer reader on files pyarrow writes: one test per logical type, plus statistics,
field ids, nesting and file-level facts. Expected values are Parquet's own (LogicalTypes.md)."""

from __future__ import annotations

import decimal
import uuid
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.formats.notation import type_to_notation
from schemaguard.formats.parquet import FileFooter, ParquetColumn, read_footer


def write(tmp_path: Path, array: pa.Array, nullable: bool = True, **options: Any) -> FileFooter:
    field = pa.field("c", array.type, nullable=nullable)
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table([array], schema=pa.schema([field])), path, **options)
    return read_footer(str(path))


def only(footer: FileFooter) -> tuple[Any, ParquetColumn]:
    (field,) = footer.schema.fields
    (column,) = footer.footer.columns
    return type_to_notation(field.type), column


# (arrow array, write options, notation type, physical, logical, converted). Converted types as
# written: pyarrow 26 writes TIMESTAMP_MILLIS/MICROS beside local timestamps too (its own reader
# hides them); test_footer_oracle.py checks each against parquet-java's Thrift decoding.
LOGICAL_TYPES = {
    "boolean": (pa.array([True, False]), {}, "boolean", "BOOLEAN", None, None),
    "int8": (pa.array([1, -2], pa.int8()), {}, "int8", "INT32", "INT(8,signed)", "INT_8"),
    "int16": (pa.array([1, -2], pa.int16()), {}, "int16", "INT32", "INT(16,signed)", "INT_16"),
    "int32": (pa.array([1, -2], pa.int32()), {}, "int32", "INT32", None, None),
    "int64": (pa.array([1, -2], pa.int64()), {}, "int64", "INT64", None, None),
    "uint8": (pa.array([1, 2], pa.uint8()), {}, "uint8", "INT32", "INT(8,unsigned)", "UINT_8"),
    "uint16": (pa.array([1, 2], pa.uint16()), {}, "uint16", "INT32", "INT(16,unsigned)", "UINT_16"),
    "uint32": (pa.array([1, 2], pa.uint32()), {}, "uint32", "INT32", "INT(32,unsigned)", "UINT_32"),
    "uint64": (pa.array([1, 2], pa.uint64()), {}, "uint64", "INT64", "INT(64,unsigned)", "UINT_64"),
    "float16": (pa.array([1.5, 2.0], pa.float16()), {}, "float16", "FIXED_LEN_BYTE_ARRAY",
                "FLOAT16", None),
    "float": (pa.array([1.5, 2.0], pa.float32()), {}, "float", "FLOAT", None, None),
    "double": (pa.array([1.5, 2.0], pa.float64()), {}, "double", "DOUBLE", None, None),
    "string": (pa.array(["a", "b"]), {}, "string", "BYTE_ARRAY", "STRING", "UTF8"),
    "binary": (pa.array([b"a", b"b"]), {}, "binary", "BYTE_ARRAY", None, None),
    "fixed": (pa.array([b"abc", b"def"], pa.binary(3)), {}, "fixed(3)", "FIXED_LEN_BYTE_ARRAY",
              None, None),
    "uuid": (pa.array([uuid.UUID(int=1).bytes, uuid.UUID(int=2).bytes], pa.uuid()), {}, "uuid",
             "FIXED_LEN_BYTE_ARRAY", "UUID", None),
    "json": (pa.array(['{"a":1}', "[]"], pa.json_()), {}, "json", "BYTE_ARRAY", "JSON", "JSON"),
    "date": (pa.array([date(2024, 1, 1)], pa.date32()), {}, "date", "INT32", "DATE", "DATE"),
    "time_ms": (pa.array([time(1, 2, 3)], pa.time32("ms")), {}, "time_ms", "INT32",
                "TIME(MILLIS,local)", None),
    "time_us": (pa.array([time(1, 2, 3)], pa.time64("us")), {}, "time_us", "INT64",
                "TIME(MICROS,local)", None),
    "time_ns": (pa.array([time(1, 2, 3)], pa.time64("ns")), {}, "time_ns", "INT64",
                "TIME(NANOS,local)", None),
    "timestamp_ms_utc": (pa.array([1], pa.timestamp("ms", "UTC")), {}, "timestamp_ms_utc", "INT64",
                         "TIMESTAMP(MILLIS,utc)", "TIMESTAMP_MILLIS"),
    "timestamp_us_utc": (pa.array([1], pa.timestamp("us", "UTC")), {}, "timestamp_us_utc", "INT64",
                         "TIMESTAMP(MICROS,utc)", "TIMESTAMP_MICROS"),
    "timestamp_ns_utc": (pa.array([1], pa.timestamp("ns", "UTC")), {}, "timestamp_ns_utc", "INT64",
                         "TIMESTAMP(NANOS,utc)", None),
    "timestamp_ms_local": (pa.array([1], pa.timestamp("ms")), {}, "timestamp_ms_local", "INT64",
                           "TIMESTAMP(MILLIS,local)", "TIMESTAMP_MILLIS"),
    "timestamp_us_local": (pa.array([1], pa.timestamp("us")), {}, "timestamp_us_local", "INT64",
                           "TIMESTAMP(MICROS,local)", "TIMESTAMP_MICROS"),
    "timestamp_ns_local": (pa.array([1], pa.timestamp("ns")), {}, "timestamp_ns_local", "INT64",
                           "TIMESTAMP(NANOS,local)", None),
    "timestamp_int96": (pa.array([1], pa.timestamp("ns")), {"use_deprecated_int96_timestamps": True},
                        "timestamp_int96", "INT96", None, None),
    "decimal_int32": (pa.array([decimal.Decimal("1.25")], pa.decimal128(9, 2)),
                      {"store_decimal_as_integer": True}, "decimal(9,2)", "INT32",
                      "DECIMAL(9,2)", "DECIMAL"),
    "decimal_int64": (pa.array([decimal.Decimal("1.25")], pa.decimal128(18, 2)),
                      {"store_decimal_as_integer": True}, "decimal(18,2)", "INT64",
                      "DECIMAL(18,2)", "DECIMAL"),
    "decimal_flba": (pa.array([decimal.Decimal("1.25")], pa.decimal128(12, 2)), {},
                     "decimal(12,2)", "FIXED_LEN_BYTE_ARRAY", "DECIMAL(12,2)", "DECIMAL"),
}


@pytest.mark.parametrize("name", sorted(LOGICAL_TYPES))
def test_logical_type_from_pyarrow(tmp_path: Path, name: str) -> None:
    array, options, notation, physical, logical, converted = LOGICAL_TYPES[name]
    ntype, column = only(write(tmp_path, array, **options))
    assert ntype == notation
    assert column.physical_type == physical
    assert column.logical_type == logical
    assert column.converted_type == converted


def test_decimal_precision_scale_and_backing_width(tmp_path: Path) -> None:
    _, column = only(write(tmp_path, pa.array([decimal.Decimal("1.5")], pa.decimal128(12, 3))))
    assert (column.precision, column.scale) == (12, 3)
    assert column.type_length == 6  # FLBA(6) holds up to 14 digits


def test_repetition_and_nullability(tmp_path: Path) -> None:
    _, column = only(write(tmp_path, pa.array([1, 2], pa.int64()), nullable=False))
    assert column.repetition == "REQUIRED"
    assert write(tmp_path, pa.array([1, 2], pa.int64()), nullable=False).schema.fields[0].nullable is False
    assert write(tmp_path, pa.array([1, None], pa.int64())).schema.fields[0].nullable is True


def test_field_ids(tmp_path: Path) -> None:
    schema = pa.schema([
        pa.field("a", pa.int64(), metadata={"PARQUET:field_id": "7"}),
        pa.field("s", pa.struct([pa.field("x", pa.int32(), metadata={"PARQUET:field_id": "9"})]),
                 metadata={"PARQUET:field_id": "8"}),
        pa.field("b", pa.int64()),
    ])
    path = tmp_path / "ids.parquet"
    pq.write_table(pa.table({"a": [1], "s": [{"x": 1}], "b": [2]}, schema=schema), path)
    footer = read_footer(str(path))
    a, s, b = footer.schema.fields
    assert (a.id, s.id, b.id) == (7, 8, None)
    assert s.type.fields[0].id == 9  # type: ignore[union-attr]
    assert [c.field_id for c in footer.footer.columns] == [7, 9, None]


def test_standard_three_level_list_and_map(tmp_path: Path) -> None:
    table = pa.table({
        "l": pa.array([[1, None]], pa.list_(pa.int32())),
        "m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64())),
    })
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    footer = read_footer(str(path))
    assert [type_to_notation(f.type) for f in footer.schema.fields] == [
        {"list": "int32", "element_nullable": True},
        {"map": ["string", "int64"], "value_nullable": True},
    ]
    assert [(c.path, c.container, c.parquet_path) for c in footer.footer.columns] == [
        ("l[]", "list:3-level", ("l", "list", "element")),
        ("m{key}", "map", ("m", "key_value", "key")),
        ("m{value}", "map", ("m", "key_value", "value")),
    ]


def test_list_of_structs_paths(tmp_path: Path) -> None:
    t = pa.list_(pa.struct([("price", pa.float64()), ("sku", pa.string())]))
    path = tmp_path / "items.parquet"
    pq.write_table(pa.table({"items": pa.array([[{"price": 1.0, "sku": "a"}]], t)}), path)
    footer = read_footer(str(path))
    assert [c.path for c in footer.footer.columns] == ["items[].price", "items[].sku"]


def test_statistics_aggregate_over_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "rg.parquet"
    table = pa.table({
        "n": pa.array([5, None, -3, 9, None, 2], pa.int64()),
        "s": pa.array(["m", "b", None, "z", "a", None]),
        "d": pa.array([decimal.Decimal(x) for x in ("-1.50", "2.25", "0.00", "7.00", "-9.99",
                                                   "3.10")], pa.decimal128(12, 2)),
    })
    pq.write_table(table, path, row_group_size=2)
    footer = read_footer(str(path))
    assert footer.row_groups == 3
    assert footer.rows == 6
    n, s, d = footer.stats
    assert (n.null_count, n.min, n.max, n.complete) == (2, -3, 9, True)
    assert (s.null_count, s.min, s.max, s.complete) == (2, b"a", b"z", True)
    # decimals on FLBA compare as signed unscaled integers, not as bytes
    assert (d.min, d.max) == (-999, 700)


def test_statistics_missing_are_marked_incomplete(tmp_path: Path) -> None:
    footer = write(tmp_path, pa.array([1, 2], pa.int64()), write_statistics=False)
    (stats,) = footer.stats
    assert stats.complete is False
    assert stats.null_count is None


def test_all_null_column_has_complete_null_count(tmp_path: Path) -> None:
    footer = write(tmp_path, pa.array([None, None], pa.int64()))
    (stats,) = footer.stats
    assert (stats.null_count, stats.min, stats.complete) == (2, None, True)


def test_unsigned_statistics_are_unsigned(tmp_path: Path) -> None:
    footer = write(tmp_path, pa.array([1, 2**63 + 5], pa.uint64()))
    (stats,) = footer.stats
    assert (stats.min, stats.max) == (1, 2**63 + 5)


def test_timestamp_statistics_are_physical_units(tmp_path: Path) -> None:
    ts = datetime(2024, 1, 1, 0, 0, 1)
    footer = write(tmp_path, pa.array([ts], pa.timestamp("ms")))
    (stats,) = footer.stats
    assert stats.min == (ts - datetime(1970, 1, 1)) // timedelta(milliseconds=1)


def test_file_facts(tmp_path: Path) -> None:
    footer = write(tmp_path, pa.array([1, 2, 3], pa.int64()))
    assert footer.rows == 3
    assert footer.row_groups == 1
    assert footer.created_by and footer.created_by.startswith("parquet-cpp-arrow")
    assert footer.footer.spark_schema is None  # only Spark writes its schema into the footer
    assert "ARROW:schema" in footer.kv_keys


def test_same_schema_shares_fingerprint_and_backing_changes_it(tmp_path: Path) -> None:
    a = write(tmp_path, pa.array([decimal.Decimal("1.5")], pa.decimal128(9, 2)))
    b = write(tmp_path, pa.array([decimal.Decimal("2.5")], pa.decimal128(9, 2)))
    c = write(tmp_path, pa.array([decimal.Decimal("1.5")], pa.decimal128(9, 2)),
              store_decimal_as_integer=True)
    assert a.fingerprint == b.fingerprint
    assert a.schema == c.schema  # same logical schema ...
    assert a.fingerprint != c.fingerprint  # ... but FLBA vs INT32 backing is drift on disk


def test_names_are_read_from_the_footer_bytes_not_printed_text(tmp_path: Path) -> None:
    # Issue 9: the schema was parsed from pyarrow's printed tree, so these names broke it or lost
    # text; the footer's own bytes give every name exactly, checked against pyarrow's Arrow schema.
    names = ["a\nb", "price[usd]", "tab\tand\u2028line", "g (List)", "m (Map)", "v (Variant)", ""]
    columns = {n: pa.array([{"x": 1}], pa.struct([("x", pa.int32())])) if n.startswith(("g", "m", "v"))
               else pa.array([1], pa.int64()) for n in names}
    pq.write_table(pa.table(columns), tmp_path / "odd.parquet")
    footer = read_footer(str(tmp_path / "odd.parquet"))
    assert [f.name for f in footer.schema.fields] == pq.read_schema(tmp_path / "odd.parquet").names == names
    struct = {"struct": [{"name": "x", "id": None, "type": "int32", "nullable": True}]}
    groups = [f for f in footer.schema.fields if f.name.startswith(("g", "m", "v"))]
    assert len(groups) == 3 and all(type_to_notation(f.type) == struct for f in groups)
