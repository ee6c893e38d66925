"""Hypothesis strategies shared by the test files: arbitrary model schemas (every primitive of the
notation, nested struct/list/map/enum, defaults, ids, aliases and metadata) and their parts, plus
the deterministic settings the property tests run with."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

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
    canonical_json,
    make_metadata,
)

# Deterministic in CI: a fixed derandomized search, no example database, no wall-clock deadline.
PROPERTY = settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Every fixed primitive spelling of docs/design.md, written out here rather than taken from the code.
PRIMITIVES: dict[str, DataType] = {
    "boolean": BooleanType(),
    "int8": IntType(8),
    "int16": IntType(16),
    "int32": IntType(32),
    "int64": IntType(64),
    "uint8": IntType(8, signed=False),
    "uint16": IntType(16, signed=False),
    "uint32": IntType(32, signed=False),
    "uint64": IntType(64, signed=False),
    "float16": FloatType(16),
    "float": FloatType(32),
    "double": FloatType(64),
    "string": StringType(),
    "binary": BinaryType(),
    "uuid": UuidType(),
    "json": JsonType(),
    "date": DateType(),
    "time_ms": TimeType("ms"),
    "time_us": TimeType("us"),
    "time_ns": TimeType("ns"),
    "timestamp_ms_utc": TimestampType("ms", utc=True),
    "timestamp_us_utc": TimestampType("us", utc=True),
    "timestamp_ns_utc": TimestampType("ns", utc=True),
    "timestamp_ms_local": TimestampType("ms", utc=False),
    "timestamp_us_local": TimestampType("us", utc=False),
    "timestamp_ns_local": TimestampType("ns", utc=False),
    "timestamp_int96": Int96Type(),
}


# ---------------------------------------------------------------------------------------------
# Strategies


names = st.text(min_size=1, max_size=10)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=4,
)


@st.composite
def decimals(draw: st.DrawFn) -> DecimalType:
    precision = draw(st.integers(1, 76))
    return DecimalType(precision, draw(st.integers(0, precision)))


@st.composite
def enums(draw: st.DrawFn) -> EnumType:
    symbols = draw(st.lists(names, max_size=5, unique=True))
    default = draw(st.none() | st.sampled_from(symbols)) if symbols else None
    return EnumType(tuple(symbols), default)


primitives = st.sampled_from(list(PRIMITIVES.values())) | decimals() | st.builds(
    FixedType, st.integers(1, 64)
)


metadata_keys = st.sampled_from(["unit", "semantic", "doc"]) | st.text(min_size=1, max_size=6)


def fields(types: st.SearchStrategy[DataType]) -> st.SearchStrategy[Field]:
    return st.builds(
        Field,
        name=names,
        type=types,
        nullable=st.booleans(),
        id=st.none() | st.integers(-(2**31), 2**63),
        default_json=st.none() | json_values.map(canonical_json),
        aliases=st.lists(names, max_size=2).map(tuple),
        metadata=st.dictionaries(metadata_keys, st.text(max_size=8), max_size=2).map(make_metadata),
    )


def field_tuples(types: st.SearchStrategy[DataType], max_size: int) -> st.SearchStrategy[
    tuple[Field, ...]
]:
    """Fields with unique names, as every struct (and the schema) requires."""
    return st.lists(fields(types), max_size=max_size, unique_by=lambda f: f.name).map(tuple)


data_types: st.SearchStrategy[DataType] = st.recursive(
    primitives | enums(),
    lambda inner: st.one_of(
        field_tuples(inner, 4).map(StructType),
        st.builds(ListType, inner, st.booleans()),
        st.builds(MapType, inner, inner, st.booleans()),
    ),
    max_leaves=8,
)


def schemas(max_fields: int = 5) -> st.SearchStrategy[Schema]:
    """Arbitrary model schemas: every primitive of the notation, nested struct/list/map/enum,
    defaults, ids, aliases and metadata; names unique within each struct."""
    return field_tuples(data_types, max_fields).map(Schema)
