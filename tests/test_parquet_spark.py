"""The footer reader on files real Spark writes (default, TIMESTAMP_MICROS/MILLIS output, legacy
format) and on files parquet-java writes with annotations neither pyarrow nor Spark emit
(ENUM, BSON, decimal on BYTE_ARRAY, 2-level lists, INTERVAL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schemaguard.formats.notation import type_to_notation
from schemaguard.formats.parquet import FileFooter, annotation, read_footer
from tests.helpers import spark_conf, spark_parquet_file
from tests.java_thrift import java_leaves, java_metadata

ROW = """
SELECT CAST(1 AS BIGINT) AS id,
       CAST(2 AS TINYINT) AS tiny, CAST(3 AS SMALLINT) AS small, CAST(4 AS INT) AS i,
       CAST(1.5 AS FLOAT) AS f, CAST(2.5 AS DOUBLE) AS d, true AS b,
       CAST('x' AS STRING) AS s, CAST('y' AS BINARY) AS bin,
       CAST(1.25 AS DECIMAL(9,2)) AS dec9, CAST(1.25 AS DECIMAL(18,2)) AS dec18,
       CAST(1.25 AS DECIMAL(20,2)) AS dec20,
       DATE'2024-01-02' AS dt, TIMESTAMP'2024-01-02 03:04:05' AS ts,
       TIMESTAMP_NTZ'2024-01-02 03:04:05' AS ntz,
       array('a', 'b') AS arr, array('a', CAST(NULL AS STRING)) AS arrn, map('k', 1) AS m,
       named_struct('x', 1, 'y', 'z') AS st
"""


def spark_write(spark: Any, tmp_path: Path, sql: str = ROW, **settings: str) -> FileFooter:
    out = tmp_path / "t"
    with spark_conf(spark, **settings):
        spark.sql(sql).coalesce(1).write.mode("overwrite").parquet(str(out))
    return read_footer(str(spark_parquet_file(out)))


def columns(footer: FileFooter) -> dict[str, Any]:
    return {c.path: c for c in footer.footer.columns}


def types(footer: FileFooter) -> dict[str, Any]:
    return {f.name: type_to_notation(f.type) for f in footer.schema.fields}


@pytest.fixture(scope="module")
def default_footer(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> FileFooter:
    return spark_write(spark, tmp_path_factory.mktemp("spark-default"))


@pytest.mark.parametrize(("column", "notation", "physical", "logical"), [
    ("id", "int64", "INT64", None),
    ("tiny", "int8", "INT32", "INT(8,signed)"),
    ("small", "int16", "INT32", "INT(16,signed)"),
    ("i", "int32", "INT32", None),
    ("f", "float", "FLOAT", None),
    ("d", "double", "DOUBLE", None),
    ("b", "boolean", "BOOLEAN", None),
    ("s", "string", "BYTE_ARRAY", "STRING"),
    ("bin", "binary", "BYTE_ARRAY", None),
    ("dec9", "decimal(9,2)", "INT32", "DECIMAL(9,2)"),
    ("dec18", "decimal(18,2)", "INT64", "DECIMAL(18,2)"),
    ("dec20", "decimal(20,2)", "FIXED_LEN_BYTE_ARRAY", "DECIMAL(20,2)"),
    ("dt", "date", "INT32", "DATE"),
    ("ts", "timestamp_int96", "INT96", None),  # Spark still writes INT96 by default
    ("ntz", "timestamp_us_local", "INT64", "TIMESTAMP(MICROS,local)"),
])
def test_spark_default_writer(default_footer: FileFooter, column: str, notation: str,
                              physical: str, logical: str | None) -> None:
    assert types(default_footer)[column] == notation
    c = columns(default_footer)[column]
    assert (c.physical_type, c.logical_type) == (physical, logical)


def test_spark_nested_types(default_footer: FileFooter) -> None:
    t = types(default_footer)
    assert t["arr"] == {"list": "string", "element_nullable": False}  # array(lits): containsNull=false
    assert t["m"] == {"map": ["string", "int32"], "value_nullable": False}
    assert t["st"] == {"struct": [
        {"name": "x", "id": None, "type": "int32", "nullable": False},
        {"name": "y", "id": None, "type": "string", "nullable": False},
    ]}
    assert columns(default_footer)["arr[]"].container == "list:3-level"


def test_spark_footer_schema_is_captured(default_footer: FileFooter) -> None:
    spark_schema = default_footer.footer.spark_schema
    assert spark_schema is not None
    fields = {f.name: f for f in spark_schema.fields}
    assert fields["id"].nullable is False  # Spark's own view keeps the not-null flag
    assert type_to_notation(fields["ts"].type) == "timestamp_us_utc"  # Spark's TIMESTAMP
    assert type_to_notation(fields["dec20"].type) == "decimal(20,2)"
    assert "org.apache.spark.sql.parquet.row.metadata" in default_footer.kv_keys
    assert default_footer.created_by and "parquet-mr" in default_footer.created_by


@pytest.mark.parametrize(("output", "logical"), [
    ("TIMESTAMP_MICROS", "TIMESTAMP(MICROS,utc)"),
    ("TIMESTAMP_MILLIS", "TIMESTAMP(MILLIS,utc)"),
    ("INT96", None),
])
def test_spark_timestamp_output_types(spark: Any, tmp_path: Path, output: str,
                                      logical: str | None) -> None:
    footer = spark_write(spark, tmp_path, "SELECT TIMESTAMP'2024-01-02 03:04:05' AS ts",
                         spark__sql__parquet__outputTimestampType=output)
    c = columns(footer)["ts"]
    assert c.logical_type == logical
    assert c.physical_type == ("INT96" if output == "INT96" else "INT64")


def test_spark_legacy_format(spark: Any, tmp_path: Path) -> None:
    footer = spark_write(spark, tmp_path, spark__sql__parquet__writeLegacyFormat="true")
    c = columns(footer)
    # legacy format: every decimal as FIXED_LEN_BYTE_ARRAY, lists and maps in the old shapes
    assert {c[k].physical_type for k in ("dec9", "dec18", "dec20")} == {"FIXED_LEN_BYTE_ARRAY"}
    t = types(footer)
    assert t["dec9"] == "decimal(9,2)"
    assert t["arr"] == {"list": "string", "element_nullable": False}  # array(lits): containsNull=false
    assert t["m"] == {"map": ["string", "int32"], "value_nullable": False}
    # non-null elements: a 2-level list; nullable ones: Spark's legacy `bag`/`array` names
    assert (c["arr[]"].container, c["arr[]"].parquet_path) == ("list:2-level", ("arr", "array"))
    assert t["arrn"] == {"list": "string", "element_nullable": True}
    assert c["arrn[]"].container == "list:3-level"
    assert c["arrn[]"].parquet_path == ("arrn", "bag", "array")
    assert c["m{key}"].container == "map:MAP_KEY_VALUE"


def test_spark_legacy_and_standard_files_differ_only_on_disk(spark: Any, tmp_path: Path,
                                                             default_footer: FileFooter) -> None:
    legacy = spark_write(spark, tmp_path, spark__sql__parquet__writeLegacyFormat="true")
    assert legacy.schema == default_footer.schema
    assert legacy.fingerprint != default_footer.fingerprint


NESTED_ROW = """
SELECT array(array(1)) AS aa, array(map('k', 1)) AS am, array(named_struct('a', 1)) AS ast,
       array(array(array(1))) AS aaa, array(map('k', array(1))) AS aml
"""


def test_spark_legacy_lists_of_lists_maps_and_structs(spark: Any, tmp_path: Path) -> None:
    """A legacy 2-level list's repeated field is the element with its own annotation: a LIST or
    MAP group there (`repeated group array (LIST) { repeated int32 array; }`) is a list or a map
    element, not a struct with one field named `array`."""
    default = spark_write(spark, tmp_path / "default", NESTED_ROW)
    legacy = spark_write(spark, tmp_path / "legacy", NESTED_ROW,
                         spark__sql__parquet__writeLegacyFormat="true")
    t = types(legacy)
    assert t["aa"] == {"list": {"list": "int32", "element_nullable": False}, "element_nullable": False}
    assert t["am"] == {"list": {"map": ["string", "int32"], "value_nullable": False},
                       "element_nullable": False}
    assert t["ast"] == {"list": {"struct": [{"name": "a", "id": None, "type": "int32", "nullable": False}]},
                        "element_nullable": False}
    assert t == types(default) and legacy.schema == default.schema
    c = columns(legacy)
    assert list(c) == [x.path for x in default.footer.columns] == [
        "aa[][]", "am[]{key}", "am[]{value}", "ast[].a", "aaa[][][]", "aml[]{key}", "aml[]{value}[]"]
    assert (c["aa[][]"].container, c["aa[][]"].parquet_path) == ("list:2-level", ("aa", "array", "array"))
    assert c["aaa[][][]"].parquet_path == ("aaa", "array", "array", "array")
    assert (c["am[]{key}"].container, c["am[]{key}"].parquet_path) == (
        "map:MAP_KEY_VALUE", ("am", "array", "key_value", "key"))
    assert (c["ast[].a"].container, c["ast[].a"].parquet_path) == ("list:2-level", ("ast", "array", "a"))
    assert c["aml[]{value}[]"].container == "list:2-level"


def test_spark_statistics(spark: Any, tmp_path: Path) -> None:
    footer = spark_write(spark, tmp_path, "SELECT * FROM VALUES (1, 'b'), (NULL, 'a'), (7, NULL)"
                                          " AS t(n, s)")
    n, s = footer.stats
    assert (n.null_count, n.min, n.max, n.complete) == (1, 1, 7, True)
    assert (s.null_count, s.min, s.max) == (1, b"a", b"b")
    assert footer.rows == 3


# ---------------------------------------------------------------------------------------------
# parquet-java (the library inside Spark), for annotations pyarrow and Spark do not write


def parquet_java_write(spark: Any, path: Path, message: str, rows: list[dict[str, Any]]) -> FileFooter:
    jvm = spark._jvm
    schema = jvm.org.apache.parquet.schema.MessageTypeParser.parseMessageType(message)
    writer = (jvm.org.apache.parquet.hadoop.example.ExampleParquetWriter
              .builder(jvm.org.apache.hadoop.fs.Path(path.as_uri()))
              .withType(schema).withConf(jvm.org.apache.hadoop.conf.Configuration()).build())
    factory = jvm.org.apache.parquet.example.data.simple.SimpleGroupFactory(schema)
    binary = jvm.org.apache.parquet.io.api.Binary
    for row in rows:
        group = factory.newGroup()
        for name, value in row.items():
            if isinstance(value, list):
                inner = group.addGroup(name)
                for item in value:
                    inner.add("array", item)
            elif isinstance(value, bytes):
                group.add(name, binary.fromConstantByteArray(value))
            else:
                group.add(name, value)
        writer.write(group)
    writer.close()
    return read_footer(str(path))


@pytest.fixture(scope="module")
def java_footer(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> FileFooter:
    message = """message m {
      required binary e (ENUM);
      optional binary bs (BSON);
      required binary dec (DECIMAL(20,2));
      optional group l (LIST) { repeated int32 array; }
      optional fixed_len_byte_array(12) iv (INTERVAL);
      required int64 ts (TIMESTAMP(MICROS,true));
      repeated int32 bare;
    }"""
    # INT64 values must exceed 2**31 so that py4j passes them to Java as longs
    rows = [{"e": "RED", "dec": bytes([0, 5]), "l": [1, 2], "ts": 1_700_000_000_000_000, "bare": 3},
            {"e": "BLUE", "dec": bytes([255, 251]), "l": [], "ts": 1_700_000_000_000_001}]
    path = tmp_path_factory.mktemp("parquet-java") / "f.parquet"
    return parquet_java_write(spark, path, message, rows)


def test_enum_annotation(java_footer: FileFooter) -> None:
    assert types(java_footer)["e"] == {"enum": []}  # Parquet's ENUM does not list its symbols
    assert columns(java_footer)["e"].logical_type == "ENUM"
    assert columns(java_footer)["e"].converted_type == "ENUM"


def test_bson_annotation(java_footer: FileFooter) -> None:
    assert types(java_footer)["bs"] == "binary"
    assert columns(java_footer)["bs"].logical_type == "BSON"


def test_decimal_on_byte_array(java_footer: FileFooter) -> None:
    c = columns(java_footer)["dec"]
    assert types(java_footer)["dec"] == "decimal(20,2)"
    assert (c.physical_type, c.precision, c.scale) == ("BYTE_ARRAY", 20, 2)
    stats = java_footer.stats[[x.path for x in java_footer.footer.columns].index("dec")]
    assert (stats.min, stats.max) == (-5, 5)  # big-endian two's complement, compared signed


def test_two_level_list(java_footer: FileFooter) -> None:
    assert types(java_footer)["l"] == {"list": "int32", "element_nullable": False}
    assert columns(java_footer)["l[]"].container == "list:2-level"


def test_interval(spark: Any, java_footer: FileFooter) -> None:
    """parquet-java writes INTERVAL as the UNKNOWN logical type beside the INTERVAL converted type
    (parquet.thrift has no INTERVAL member); its own Thrift decoding says the same."""
    assert types(java_footer)["iv"] == "fixed(12)"
    iv = columns(java_footer)["iv"]
    assert (iv.logical_type, iv.converted_type) == ("UNKNOWN", "INTERVAL")
    assert annotation(iv) == "UNKNOWN + INTERVAL"
    leaves = java_leaves(java_metadata(spark, Path(java_footer.path)))
    [java] = [c for c in leaves if c["parquet_path"] == ("iv",)]
    assert (java["logical_type"], java["converted_type"]) == ("UNKNOWN", "INTERVAL")


def test_bare_repeated_field_is_required_list(java_footer: FileFooter) -> None:
    bare = next(f for f in java_footer.schema.fields if f.name == "bare")
    assert type_to_notation(bare.type) == {"list": "int32", "element_nullable": False}
    assert bare.nullable is False
    assert columns(java_footer)["bare[]"].repetition == "REPEATED"


def test_timestamp_from_parquet_java(java_footer: FileFooter) -> None:
    assert types(java_footer)["ts"] == "timestamp_us_utc"
    assert java_footer.created_by and java_footer.created_by.startswith("parquet-mr")
