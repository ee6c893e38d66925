"""Footers built by hand (tests/handmade_footers.py): every annotation parquet.thrift defines, and some
it will, read as written; damaged footers as one clear reason each; names with awkward characters
exact; and, against real Spark 4.1, what Spark makes of each shape the model has to express
(GEOMETRY, GEOGRAPHY, VARIANT shredded or not, UNKNOWN, a future logical type, key-only and
optional-key maps, converted types beside local timestamps)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schemaguard.checks import run_checks
from schemaguard.checks.gate import evaluate_gate
from schemaguard.formats.notation import describe
from schemaguard.formats.parquet import FileFooter, UnreadableFile, annotation, read_footer
from schemaguard.formats.spark import schema_to_spark_json
from schemaguard.formats.spark_view import SparkUnreadable, spark_schema
from schemaguard.lake.table import read
from schemaguard.model import GeographyType, GeometryType, IntType, VariantType
from tests.handmade_footers import (
    BYTE_ARRAY,
    FIXED,
    I8,
    I32,
    I64,
    INT32,
    INT64,
    MAP,
    OPTIONAL,
    REPEATED,
    REQUIRED,
    TIME_MICROS,
    TIMESTAMP_MICROS,
    TIMESTAMP_MILLIS,
    UINT_32,
    UTF8,
    chunk,
    element,
    encode_struct,
    file_metadata,
    leaf_file,
    logical,
    row_group,
    stats,
    time_of_day,
    timestamp,
    write_footer_file,
)

MILLIS, MICROS = 1, 2


def one(path: Path) -> tuple[FileFooter, Any]:
    footer = read_footer(str(path))
    (column,) = footer.footer.columns
    return footer, column


def group_file(
    path: Path, schema: list[dict[int, Any]], leaves: list[tuple[list[str], int]], rows: int = 3
) -> Path:
    groups = [row_group([chunk(p, t, values=rows) for p, t in leaves], rows)]
    return write_footer_file(path, file_metadata(schema, groups, rows))


# --- annotations as written --------------------------------------------------------------------

GEO = {
    "geometry": (logical(17), "GEOMETRY", GeometryType(None)),
    "geometry-crs": (logical(17, {1: "EPSG:4326"}), "GEOMETRY(crs=EPSG:4326)", GeometryType("EPSG:4326")),
    "geography": (logical(18), "GEOGRAPHY", GeographyType(None, None)),
    "geography-crs-karney": (
        logical(18, {1: "OGC:CRS84", 2: I32(4)}),
        "GEOGRAPHY(crs=OGC:CRS84, algorithm=KARNEY)",
        GeographyType("OGC:CRS84", "KARNEY"),
    ),
    "geography-vincenty": (
        logical(18, {2: I32(1)}),
        "GEOGRAPHY(algorithm=VINCENTY)",
        GeographyType(None, "VINCENTY"),
    ),
}


@pytest.mark.parametrize("name", sorted(GEO))
def test_geometry_and_geography_keep_their_crs_and_algorithm(tmp_path: Path, name: str) -> None:
    annotation_, label, model = GEO[name]
    footer, column = one(
        leaf_file(
            tmp_path / "g.parquet", element("g", type=BYTE_ARRAY, repetition=OPTIONAL, logical=annotation_)
        )
    )
    assert (column.physical_type, column.logical_type, column.converted_type) == ("BYTE_ARRAY", label, None)
    assert footer.schema.fields[0].type == model
    assert footer.stats[0].min is None  # GEOMETRY/GEOGRAPHY have no min/max by the spec


def test_four_crs_values_are_four_versions_and_one_drift(tmp_path: Path) -> None:
    for i, crs in enumerate(["OGC:CRS84", "EPSG:4326", "EPSG:3857", '{"type":"ProjectedCRS"}']):
        part = tmp_path / f"dt=2024-01-0{i + 1}"
        part.mkdir()
        leaf_file(
            part / "p.parquet",
            element("g", type=BYTE_ARRAY, repetition=OPTIONAL, logical=logical(17, {1: crs})),
        )
    table = read(str(tmp_path))
    assert len(table.versions) == 4
    drift = [f for f in run_checks(table) if f.code == "LOGICAL_TYPE_DRIFT"]
    assert [(f.path, f.versions) for f in drift] == [("g", (1, 2, 3, 4))]


@pytest.mark.parametrize(
    ("leaf", "logical_label", "converted", "shown", "model"),
    [
        (
            element("u", type=INT32, repetition=OPTIONAL, logical=logical(11)),
            "UNKNOWN",
            None,
            "UNKNOWN",
            IntType(32),
        ),
        (
            element("f", type=BYTE_ARRAY, repetition=OPTIONAL, logical=logical(25)),
            "FIELD_25",
            None,
            "FIELD_25",
            None,
        ),
        (
            element(
                "t",
                type=INT64,
                repetition=OPTIONAL,
                converted=TIMESTAMP_MILLIS,
                logical=timestamp(MILLIS, False),
            ),
            "TIMESTAMP(MILLIS,local)",
            "TIMESTAMP_MILLIS",
            "TIMESTAMP(MILLIS,local) + TIMESTAMP_MILLIS",
            None,
        ),
        (
            element(
                "t",
                type=INT64,
                repetition=OPTIONAL,
                converted=TIMESTAMP_MICROS,
                logical=timestamp(MICROS, False),
            ),
            "TIMESTAMP(MICROS,local)",
            "TIMESTAMP_MICROS",
            "TIMESTAMP(MICROS,local) + TIMESTAMP_MICROS",
            None,
        ),
        (
            element(
                "t",
                type=INT64,
                repetition=OPTIONAL,
                converted=TIME_MICROS,
                logical=time_of_day(MICROS, False),
            ),
            "TIME(MICROS,local)",
            "TIME_MICROS",
            "TIME(MICROS,local) + TIME_MICROS",
            None,
        ),
        (
            element(
                "t",
                type=INT64,
                repetition=OPTIONAL,
                converted=TIMESTAMP_MICROS,
                logical=timestamp(MICROS, True),
            ),
            "TIMESTAMP(MICROS,utc)",
            "TIMESTAMP_MICROS",
            "TIMESTAMP(MICROS,utc)",
            None,
        ),
        (
            element("n", type=INT32, repetition=OPTIONAL, converted=UINT_32),
            None,
            "UINT_32",
            "UINT_32",
            IntType(32, False),
        ),
        (
            element("v", type=FIXED, type_length=12, repetition=OPTIONAL, converted=21),
            None,
            "INTERVAL",
            "INTERVAL",
            None,
        ),
    ],
    ids=[
        "unknown",
        "future-member",
        "ts-ms-local+legacy",
        "ts-us-local+legacy",
        "time-us-local+legacy",
        "ts-us-utc+legacy",
        "converted-only",
        "interval",
    ],
)
def test_logical_and_converted_types_as_written(
    tmp_path: Path,
    leaf: dict[int, Any],
    logical_label: str | None,
    converted: str | None,
    shown: str,
    model: Any,
) -> None:
    footer, column = one(leaf_file(tmp_path / "f.parquet", leaf))
    assert (column.logical_type, column.converted_type, annotation(column)) == (
        logical_label,
        converted,
        shown,
    )
    if model is not None:
        assert footer.schema.fields[0].type == model


def test_a_variant_group_is_one_variant_column_shredded_or_not(tmp_path: Path) -> None:
    plain = group_file(
        tmp_path / "plain.parquet",
        [
            element("schema", children=1),
            element("v", repetition=OPTIONAL, children=2, logical=logical(16, {1: I8(1)})),
            element("metadata", type=BYTE_ARRAY, repetition=REQUIRED),
            element("value", type=BYTE_ARRAY, repetition=REQUIRED),
        ],
        [(["v", "metadata"], BYTE_ARRAY), (["v", "value"], BYTE_ARRAY)],
    )
    shredded = group_file(
        tmp_path / "shredded.parquet",
        [
            element("schema", children=1),
            element("v", repetition=OPTIONAL, children=3, logical=logical(16)),
            element("metadata", type=BYTE_ARRAY, repetition=REQUIRED),
            element("value", type=BYTE_ARRAY, repetition=OPTIONAL),
            element("typed_value", type=INT64, repetition=OPTIONAL),
        ],
        [(["v", "metadata"], BYTE_ARRAY), (["v", "value"], BYTE_ARRAY), (["v", "typed_value"], INT64)],
    )
    for path, parquet_paths in [
        (plain, [("v", "metadata"), ("v", "value")]),
        (shredded, [("v", "metadata"), ("v", "value"), ("v", "typed_value")]),
    ]:
        footer = read_footer(str(path))
        assert footer.schema.fields[0].type == VariantType()
        assert [c.parquet_path for c in footer.footer.columns] == parquet_paths
        assert {c.path for c in footer.footer.columns} == {"v"}
        assert len(footer.stats) == len(parquet_paths)


def test_a_key_only_map_keeps_its_shape_and_spark_refuses_it(tmp_path: Path) -> None:
    key_only_map(tmp_path / "dt=2024-01-01" / "k.parquet")
    footer, column = one(tmp_path / "dt=2024-01-01" / "k.parquet")
    assert column.container == "map:key-only" and column.parquet_path == ("m", "key_value", "key")
    assert footer.footer.spark_refusal == "`m` is a MAP without values: Spark fails with 'Invalid map type'"
    table = read(str(tmp_path))
    assert [f.code for f in run_checks(table) if f.severity == "error"] == ["SPARK_CANNOT_READ_FOOTER"]
    assert not evaluate_gate(table).merge_safe


def key_only_map(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return group_file(
        path,
        [
            element("schema", children=1),
            element("m", repetition=OPTIONAL, children=1, converted=MAP, logical=logical(2)),
            element("key_value", repetition=REPEATED, children=1),
            element("key", type=BYTE_ARRAY, repetition=REQUIRED, converted=UTF8, logical=logical(1)),
        ],
        [(["m", "key_value", "key"], BYTE_ARRAY)],
    )


def optional_key_map(path: Path) -> Path:
    return group_file(
        path,
        [
            element("schema", children=1),
            element("m", repetition=OPTIONAL, children=1, converted=MAP, logical=logical(2)),
            element("key_value", repetition=REPEATED, children=2),
            element("key", type=BYTE_ARRAY, repetition=OPTIONAL, converted=UTF8, logical=logical(1)),
            element("value", type=INT32, repetition=OPTIONAL),
        ],
        [(["m", "key_value", "key"], BYTE_ARRAY), (["m", "key_value", "value"], INT32)],
    )


def test_a_map_with_an_optional_key_is_a_map_not_an_unreadable_file(tmp_path: Path) -> None:
    footer = read_footer(str(optional_key_map(tmp_path / "m.parquet")))
    assert describe(footer.schema.fields[0].type) == "map<string,int32>"
    assert footer.footer.spark_refusal is None


# --- statistics as written ---------------------------------------------------------------------


def test_statistics_keep_exactness_over_row_groups_and_ignore_nan_and_size_statistics(tmp_path: Path) -> None:
    schema = [
        element("schema", children=2),
        element("s", type=BYTE_ARRAY, repetition=OPTIONAL, logical=logical(1)),
        element("x", type=INT64, repetition=OPTIONAL),
    ]
    size = {1: I64(40), 2: [], 3: [I64(1), I64(2)]}
    groups = [
        row_group(
            [
                chunk(
                    ["s"],
                    BYTE_ARRAY,
                    values=3,
                    size_statistics=size,
                    statistics=stats(
                        null_count=1, min_value=b"apple", max_value=b"kiw", max_exact=False, min_exact=True
                    ),
                ),
                chunk(
                    ["x"],
                    INT64,
                    values=3,
                    statistics=stats(
                        null_count=0,
                        min_value=(-5).to_bytes(8, "little", signed=True),
                        max_value=(9).to_bytes(8, "little"),
                        nan_count=0,
                    ),
                ),
            ],
            3,
        ),
        row_group(
            [
                chunk(
                    ["s"],
                    BYTE_ARRAY,
                    values=2,
                    statistics=stats(
                        null_count=0, min_value=b"banana", max_value=b"zebra", max_exact=True, min_exact=True
                    ),
                ),
                chunk(["x"], INT64, values=2, statistics=stats(null_count=2)),
            ],
            2,
        ),
    ]
    footer = read_footer(str(write_footer_file(tmp_path / "s.parquet", file_metadata(schema, groups, 5))))
    s, x = footer.stats
    assert (s.null_count, s.min, s.max, s.complete, s.exact) == (1, b"apple", b"zebra", True, False)
    assert (x.null_count, x.min, x.max, x.complete, x.exact) == (2, -5, 9, True, None)
    assert (footer.rows, footer.row_groups) == (5, 2)


def test_columns_encrypted_under_a_plaintext_footer_are_named_and_their_statistics_unknown(
    tmp_path: Path,
) -> None:
    schema = [
        element("schema", children=2),
        element("a", type=INT64, repetition=OPTIONAL),
        element("b", type=INT64, repetition=OPTIONAL),
    ]
    column_key = {2: {1: ["a"], 2: b"key-id"}}  # ColumnCryptoMetaData: ENCRYPTION_WITH_COLUMN_KEY
    groups = [
        row_group(
            [
                chunk(["a"], INT64, values=3, crypto=column_key, with_metadata=False),
                chunk(
                    ["b"],
                    INT64,
                    values=3,
                    statistics=stats(null_count=0, min_value=bytes(8), max_value=bytes(8)),
                ),
            ],
            3,
        )
    ]
    meta = file_metadata(schema, groups, 3, encryption_algorithm={1: {}})
    footer = read_footer(str(write_footer_file(tmp_path / "e.parquet", meta)))
    assert footer.encrypted == ("a",)
    assert footer.stats[0].complete is False and footer.stats[1].min == 0


# --- names exactly as written ------------------------------------------------------------------

NAMES = ["a\nb", "c\rd", "e\x0cf", "g\u2028h", "price[usd]", "g (List)", "x (Map)", "v (Variant)", "é ü 中"]


def test_awkward_names_are_read_exactly(tmp_path: Path) -> None:
    schema = [element("schema", children=len(NAMES) + 1)]
    schema += [element(n, type=INT32, repetition=OPTIONAL) for n in NAMES]
    schema.append(element(b"n\xffx", type=INT32, repetition=OPTIONAL))
    names = [*NAMES, "n\ufffdx"]
    group = row_group([chunk([n], INT32, values=1) for n in names], 1)
    footer = read_footer(str(write_footer_file(tmp_path / "n.parquet", file_metadata(schema, [group], 1))))
    assert [f.name for f in footer.schema.fields] == names
    assert [c.parquet_path for c in footer.footer.columns] == [(n,) for n in names]


def test_a_group_named_like_an_annotation_is_still_a_struct(tmp_path: Path) -> None:
    path = group_file(
        tmp_path / "g.parquet",
        [
            element("schema", children=1),
            element("g (List)", repetition=OPTIONAL, children=1),
            element("x", type=INT32, repetition=OPTIONAL),
        ],
        [(["g (List)", "x"], INT32)],
    )
    assert describe(read_footer(str(path)).schema.fields[0].type) == "struct<x:int32>"


# --- damaged footers ---------------------------------------------------------------------------


def _with(base: dict[int, Any], **changes: Any) -> dict[int, Any]:
    return {**base, **{int(k[1:]): v for k, v in changes.items()}}


def _good() -> dict[int, Any]:
    schema = [element("schema", children=1), element("a", type=INT32, repetition=OPTIONAL)]
    return file_metadata(schema, [row_group([chunk(["a"], INT32, values=3)], 3)], 3)


DAMAGED: dict[str, tuple[Callable[[], bytes], str]] = {
    "negative rows": (
        lambda: encode_struct(_with(_good(), f3=I64(-5))),
        "corrupt footer: the file claims -5 rows",
    ),
    "group claims more children": (
        lambda: encode_struct(_with(_good(), f2=[element("schema", children=3), element("a", type=INT32)])),
        "corrupt footer: the schema list ends inside a group",
    ),
    "no column chunks": (
        lambda: encode_struct(_with(_good(), f4=[row_group([], 3)])),
        "corrupt footer: row group 0 has 0 column chunks for 1 leaf columns",
    ),
    "nested 10,000 deep": (lambda: b"\x1c" * 10_000, "corrupt footer: "),
    "unknown time unit": (
        lambda: encode_struct(
            _with(
                _good(),
                f2=[
                    element("schema", children=1),
                    element("t", type=INT64, logical=logical(8, {1: True, 2: {7: {}}})),
                ],
            )
        ),
        "corrupt footer: leaf 't' has a time unit parquet.thrift does not define",
    ),
    "integer of 7 bits": (
        lambda: encode_struct(
            _with(
                _good(),
                f2=[
                    element("schema", children=1),
                    element("i", type=INT32, logical=logical(10, {1: I8(7), 2: True})),
                ],
            )
        ),
        "corrupt footer: leaf 'i' is an INTEGER of 7 bits",
    ),
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_footer_is_one_clear_reason(tmp_path: Path, name: str) -> None:
    make, reason = DAMAGED[name]
    path = write_footer_file(tmp_path / "bad.parquet", make())
    with pytest.raises(UnreadableFile) as caught:
        read_footer(str(path))
    assert caught.value.reason.startswith(reason), caught.value.reason


def test_a_footer_length_of_two_gigabytes_is_refused_before_reading(tmp_path: Path) -> None:
    footer = encode_struct(_good())
    path = tmp_path / "huge.parquet"
    path.write_bytes(b"PAR1" + footer + (2**31 - 1).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(UnreadableFile) as caught:
        read_footer(str(path))
    assert caught.value.reason == (
        f"corrupt footer: a footer length of {2**31 - 1} bytes in a file of {path.stat().st_size}"
    )


# --- against real Spark 4.1 --------------------------------------------------------------------

SPARK_FILES: dict[str, Callable[[Path], Path]] = {
    "geometry": lambda d: leaf_file(
        d / "f.parquet",
        element("g", type=BYTE_ARRAY, repetition=OPTIONAL, logical=logical(17, {1: "EPSG:4326"})),
    ),
    "geography": lambda d: leaf_file(
        d / "f.parquet", element("g", type=BYTE_ARRAY, repetition=OPTIONAL, logical=logical(18, {2: I32(4)}))
    ),
    "unknown": lambda d: leaf_file(
        d / "f.parquet", element("u", type=INT32, repetition=OPTIONAL, logical=logical(11))
    ),
    "future-member": lambda d: leaf_file(
        d / "f.parquet", element("f", type=BYTE_ARRAY, repetition=OPTIONAL, logical=logical(25))
    ),
    "ts-local+legacy": lambda d: leaf_file(
        d / "f.parquet",
        element(
            "t", type=INT64, repetition=OPTIONAL, converted=TIMESTAMP_MILLIS, logical=timestamp(MILLIS, False)
        ),
    ),
    "key-only-map": lambda d: key_only_map(d / "f.parquet"),
    "variant-v1": lambda d: variant_file(d / "f.parquet", 1),
    "variant-no-version": lambda d: variant_file(d / "f.parquet", None),
    "optional-key-map": lambda d: optional_key_map(d / "f.parquet"),
}


def spark_answer(spark: Any, path: Path) -> str:
    """Spark's schema of the file (simpleString), or the error it raises, by condition or root cause."""
    try:
        return str(spark.read.parquet(str(path)).schema.simpleString())
    except Exception as e:  # only the engine's own error classes are taken as its "no" below
        condition = getattr(e, "getCondition", lambda: None)()
        if condition:
            return f"error {condition}"
        cause = getattr(e, "java_exception", None)
        while cause is not None and cause.getCause() is not None:
            cause = cause.getCause()
        if cause is None:
            raise
        return f"error {cause.getClass().getName()}"


def our_answer(spark: Any, path: Path) -> str:
    footer = read_footer(str(path))
    if footer.footer.spark_refusal:
        return "refused"
    try:
        view = spark_schema(footer.schema)
    except SparkUnreadable as e:
        return f"error {e.why.split(':')[0]}"
    from pyspark.sql.types import StructType

    return str(StructType.fromJson(json.loads(schema_to_spark_json(view))).simpleString())


EXPECTED_REFUSALS = {  # the error Spark raises where the model says Spark refuses the footer
    "future-member": "error java.lang.NullPointerException",
    "key-only-map": "error _LEGACY_ERROR_TEMP_3071",
    "variant-no-version": "error PARQUET_TYPE_NOT_RECOGNIZED",
}


def variant_file(path: Path, version: int | None) -> Path:
    return group_file(
        path,
        [
            element("schema", children=1),
            element(
                "v",
                repetition=OPTIONAL,
                children=2,
                logical=logical(16, None if version is None else {1: I8(version)}),
            ),
            element("metadata", type=BYTE_ARRAY, repetition=REQUIRED),
            element("value", type=BYTE_ARRAY, repetition=REQUIRED),
        ],
        [(["v", "metadata"], BYTE_ARRAY), (["v", "value"], BYTE_ARRAY)],
    )


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(SPARK_FILES))
def test_what_spark_makes_of_each_shape(spark: Any, tmp_path: Path, name: str) -> None:
    path = SPARK_FILES[name](tmp_path)
    theirs, ours = spark_answer(spark, path), our_answer(spark, path)
    if ours == "refused":
        assert theirs == EXPECTED_REFUSALS[name]
    else:
        assert ours == theirs


@pytest.mark.spark
def test_variant_files_shredded_or_not_merge_in_spark_and_in_the_gate(spark: Any, tmp_path: Path) -> None:
    for i, shredded in enumerate((False, True)):
        part = tmp_path / f"dt=2024-01-0{i + 1}"
        part.mkdir()
        children = [
            element("metadata", type=BYTE_ARRAY, repetition=REQUIRED),
            element("value", type=BYTE_ARRAY, repetition=OPTIONAL if shredded else REQUIRED),
        ]
        leaves = [(["v", "metadata"], BYTE_ARRAY), (["v", "value"], BYTE_ARRAY)]
        if shredded:
            children.append(element("typed_value", type=INT64, repetition=OPTIONAL))
            leaves.append((["v", "typed_value"], INT64))
        variant = element("v", repetition=OPTIONAL, children=len(children), logical=logical(16, {1: I8(1)}))
        group_file(part / "p.parquet", [element("schema", children=1), variant, *children], leaves)
    merged = spark.read.option("mergeSchema", "true").parquet(str(tmp_path)).schema.simpleString()
    assert merged == "struct<v:variant,dt:date>"
    table = read(str(tmp_path))
    assert len(table.versions) == 1  # shredding is no schema version
    assert evaluate_gate(table).merge_safe
    assert [f.code for f in run_checks(table) if f.severity == "error"] == []


@pytest.mark.parametrize(("physical", "converted", "notation"), [
    (INT64, TIMESTAMP_MILLIS, "timestamp_ms_utc"), (INT64, TIMESTAMP_MICROS, "timestamp_us_utc"),
    (INT32, 7, "time_ms"), (INT64, TIME_MICROS, "time_us"), (INT32, UINT_32, "uint32"), (INT32, 15, "int8"),
])
def test_legacy_converted_types_alone(tmp_path: Path, physical: int, converted: int, notation: str) -> None:
    """Writers before LogicalType wrote only the ConvertedType: its unit is the unit, and legacy
    timestamps are UTC instants (LogicalTypes.md, backward compatibility)."""
    from schemaguard.formats.notation import parse_primitive

    footer, column = one(leaf_file(tmp_path / "c.parquet",
                                   element("c", type=physical, repetition=OPTIONAL, converted=converted)))
    assert column.logical_type is None
    assert footer.schema.fields[0].type == parse_primitive(notation)
