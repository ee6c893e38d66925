"""The model as Spark StructType JSON, checked against pyspark's own JSON types (no JVM needed:
`StructType.fromJson` and `jsonValue` are pure Python)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemaguard.formats.spark import (
    SparkSchemaError,
    schema_from_spark_json,
    schema_to_spark_json,
    type_to_spark,
)
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    Field,
    FixedType,
    FloatType,
    Int96Type,
    IntType,
    JsonType,
    ListType,
    MapType,
    Schema,
    StringType,
    StructType,
    TimestampType,
    TimeType,
    UuidType,
    make_metadata,
)
from tests.strategies import PROPERTY, names


def pyspark_round_trip(doc: dict[str, Any]) -> Any:
    """What pyspark makes of our JSON and writes back: equal to the input when Spark accepts it as is."""
    from pyspark.sql.types import StructType as SparkStructType

    return SparkStructType.fromJson(doc).jsonValue()


def one_field(t: DataType) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(schema_to_spark_json(Schema((Field("x", t),))))
    return doc


# ---------------------------------------------------------------------------------------------
# Lossless round trips over every type Spark holds exactly


SPARK_EXACT: list[DataType] = [
    BooleanType(), IntType(8), IntType(16), IntType(32), IntType(64), FloatType(32), FloatType(64),
    StringType(), BinaryType(), DateType(), TimestampType("us", True), TimestampType("us", False),
]


@st.composite
def spark_decimals(draw: st.DrawFn) -> DecimalType:
    precision = draw(st.integers(1, 38))
    return DecimalType(precision, draw(st.integers(0, precision)))


def spark_fields(types: st.SearchStrategy[DataType]) -> st.SearchStrategy[tuple[Field, ...]]:
    field = st.builds(
        Field,
        name=names,
        type=types,
        nullable=st.booleans(),
        id=st.none() | st.integers(0, 2**31 - 1),
        metadata=st.dictionaries(st.sampled_from(["comment", "unit", "semantic"]), st.text(max_size=8),
                                 max_size=2).map(make_metadata),
    )
    return st.lists(field, max_size=4, unique_by=lambda f: f.name).map(tuple)


spark_types: st.SearchStrategy[DataType] = st.recursive(
    st.sampled_from(SPARK_EXACT) | spark_decimals(),
    lambda inner: st.one_of(
        spark_fields(inner).map(StructType),
        st.builds(ListType, inner, st.booleans()),
        st.builds(MapType, inner, inner, st.booleans()),
    ),
    max_leaves=8,
)


@pytest.mark.slow
@PROPERTY
@given(spark_fields(spark_types).map(Schema))
def test_model_to_spark_json_to_model_is_identity_and_pyspark_keeps_it(schema: Schema) -> None:
    text = schema_to_spark_json(schema)
    assert schema_from_spark_json(text) == schema
    assert pyspark_round_trip(json.loads(text)) == json.loads(text)


def test_pyspark_written_json_reads_and_writes_back_the_same() -> None:
    from pyspark.sql import types as T

    spark_schema = T.StructType([
        T.StructField("id", T.LongType(), False, {"parquet.field.id": 1}),
        T.StructField("amount", T.DecimalType(12, 2), True, {"comment": "in EUR"}),
        T.StructField("tags", T.ArrayType(T.StringType(), containsNull=False)),
        T.StructField("attrs", T.MapType(T.StringType(), T.IntegerType(), valueContainsNull=True)),
        T.StructField("at", T.TimestampType()),
        T.StructField("local", T.TimestampNTZType()),
        T.StructField("nested", T.StructType([
            T.StructField("b", T.ByteType()), T.StructField("s", T.ShortType())])),
    ])
    schema = schema_from_spark_json(spark_schema.json())
    assert schema.fields[0].id == 1 and schema.fields[1].meta == {"comment": "in EUR"}
    assert json.loads(schema_to_spark_json(schema)) == spark_schema.jsonValue()


# ---------------------------------------------------------------------------------------------
# Types Spark reads as something else


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        (IntType(8, signed=False), "short"),
        (IntType(16, signed=False), "integer"),
        (IntType(32, signed=False), "long"),
        (IntType(64, signed=False), "decimal(20,0)"),
        (JsonType(), "string"),
        (EnumType(("A", "B")), "string"),
        (FixedType(16), "binary"),
        (UuidType(), "binary"),
        (Int96Type(), "timestamp"),
        (TimestampType("ms", True), "timestamp"),
        (TimestampType("ns", True), "timestamp"),
        (TimestampType("ms", False), "timestamp_ntz"),
        (TimestampType("ns", False), "timestamp_ntz"),
        (DecimalType(38, 38), "decimal(38,38)"),
    ],
)
def test_types_spark_lacks_become_what_spark_reads_them_as(t: DataType, expected: str) -> None:
    assert type_to_spark(t) == expected
    doc = one_field(t)
    assert doc["fields"][0]["type"] == expected
    assert pyspark_round_trip(doc) == doc


@pytest.mark.parametrize(
    ("t", "message"),
    [
        (TimeType("ms"), "x: time_ms has no Spark type"),
        (TimeType("us"), "x: time_us has no Spark type"),
        (TimeType("ns"), "x: time_ns has no Spark type"),
        (FloatType(16), "x: float16 has no Spark type"),
        (DecimalType(39, 0), "x: decimal(39,0): Spark decimals hold at most 38 digits"),
        (ListType(StructType((Field("t", TimeType("us")),))), "x[].t: time_us"),
        (MapType(FloatType(16), StringType()), "x{key}: float16"),
        (MapType(StringType(), FloatType(16)), "x{value}: float16"),
    ],
)
def test_types_spark_cannot_hold_raise_naming_the_place(t: DataType, message: str) -> None:
    with pytest.raises(SparkSchemaError, match="^" + re.escape(message)):
        one_field(t)


def test_ids_go_into_parquet_field_id_and_defaults_and_aliases_are_dropped() -> None:
    field = Field("a", IntType(32), nullable=False, id=7, default_json="0", aliases=("old",),
                  metadata=make_metadata({"unit": "ms"}))
    (doc,) = json.loads(schema_to_spark_json(Schema((field,))))["fields"]
    assert doc == {"name": "a", "type": "integer", "nullable": False,
                   "metadata": {"unit": "ms", "parquet.field.id": 7}}
    assert schema_from_spark_json(schema_to_spark_json(Schema((field,)))) == Schema((
        Field("a", IntType(32), nullable=False, id=7, metadata=make_metadata({"unit": "ms"})),))


def test_nested_containers_carry_their_nullability() -> None:
    t = MapType(StringType(), ListType(IntType(64), element_nullable=True), value_nullable=False)
    assert type_to_spark(t) == {
        "type": "map", "keyType": "string",
        "valueType": {"type": "array", "elementType": "long", "containsNull": True},
        "valueContainsNull": False,
    }
