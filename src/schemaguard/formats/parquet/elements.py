"""One `SchemaElement` of a footer's schema list as written (`Element`), and what a leaf
element's type fields say (`Leaf`): its model type, its logical and converted types as labels
(`TIMESTAMP(MICROS,utc)`, `DECIMAL(12,2)`, `FIELD_25`), decimals, time units, edge algorithms, and
how its statistics decode.

In the pipeline `schema.py` parses each element with `parse_element` and asks `leaf_of` for each
leaf, worked out once per distinct spelling; `annotation` labels a column for `lake/history.py`
and the reports. It imports `footer.py` and `stats.py` of the package; it knows nothing of the
tree the elements form (groups, lists, maps: `schema.py`) and reads no file.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from schemaguard.formats.parquet.footer import ParquetColumn, corrupt, per_process, text
from schemaguard.formats.parquet.stats import stat_kind
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    EnumType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    Int96Type,
    IntType,
    JsonType,
    StringType,
    TimestampType,
    TimeType,
    TimeUnit,
    UuidType,
)

# parquet.thrift enums, by value.
PHYSICAL_TYPES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                  "FIXED_LEN_BYTE_ARRAY")
CONVERTED_TYPES = (
    "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS", "TIME_MICROS",
    "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8",
    "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL",
)
REPETITIONS = ("REQUIRED", "OPTIONAL", "REPEATED")
EDGE_ALGORITHMS = ("SPHERICAL", "VINCENTY", "THOMAS", "ANDOYER", "KARNEY")
# `LogicalType` union members without parameters, by field id (parameterised ones: _logical_label).
SIMPLE_LOGICAL = {1: "STRING", 2: "MAP", 3: "LIST", 4: "ENUM", 6: "DATE", 11: "UNKNOWN", 12: "JSON",
                  13: "BSON", 14: "UUID", 15: "FLOAT16", 19: "FILE"}
_TIME_UNITS: dict[int, tuple[str, TimeUnit]] = {1: ("MILLIS", "ms"), 2: ("MICROS", "us"),
                                                3: ("NANOS", "ns")}


class Element(NamedTuple):
    """One `SchemaElement` (fields 1-10) as written; `logical` is the LogicalType union's member
    id and body, `converted` the ConvertedType value."""

    name: str  # the bytes as written, decoded as UTF-8 with replacement characters
    physical: int | None
    type_length: int | None
    repetition: str
    num_children: int | None
    converted: int | None
    scale: int | None
    precision: int | None
    field_id: int | None
    logical: tuple[int, dict[int, Any]] | None


def parse_element(e: Any, index: int) -> Element:
    """Entry `index` of the schema list, `e` as the Thrift decoder built it."""
    if type(e) is not dict or type(name := e.get(4)) is not bytes:
        raise corrupt(f"schema element {index} has no name")
    # An i32 field holding anything else (a boolean, bytes) is treated as absent.
    get = e.get
    physical = v if type(v := get(1)) is int else None
    repetition = get(3)
    union = get(10)
    logical = None
    if type(union) is dict and union:
        member = next(iter(union))
        body = union[member]
        logical = (member, body if type(body) is dict else {})
    return Element(
        name.decode("utf-8", "replace"), physical,
        v if type(v := get(2)) is int else None,
        REPETITIONS[repetition] if repetition in (0, 1, 2) and type(repetition) is int else "REQUIRED",
        v if type(v := get(5)) is int else None,
        v if type(v := get(6)) is int else None,
        v if type(v := get(7)) is int else None,
        v if type(v := get(8)) is int else None,
        v if type(v := get(9)) is int else None,
        logical)


class Leaf(NamedTuple):
    """What a leaf element's type fields say, whatever its name and field id."""

    type: DataType
    physical: str
    type_length: int | None  # FIXED_LEN_BYTE_ARRAY width
    logical: str | None
    converted: str | None
    precision: int | None
    scale: int | None
    stat_kind: str  # how its min/max bytes decode (see `stats.stat_kind`)
    token: str  # its spelling in the fingerprint


# Bounded by the distinct leaf spellings in a process: a few dozen on any lake.
_LEAVES: dict[tuple[Any, ...], Leaf] = per_process({})


def leaf_of(e: Element) -> Leaf:
    """`Leaf` of a leaf element, worked out once per distinct type fields (a failure is not kept:
    each corrupt leaf raises with its own name)."""
    key = (e.physical, e.type_length, e.converted, e.scale, e.precision,
           None if e.logical is None else _hashable(e.logical))
    found = _LEAVES.get(key)
    if found is None:
        physical = _physical(e)
        decimal = _decimal(e)
        logical, converted = _logical_label(e), _converted_label(e.converted)
        length = e.type_length if physical == "FIXED_LEN_BYTE_ARRAY" else None
        precision, scale = (decimal.precision, decimal.scale) if decimal else (None, None)
        token = f"{physical} {length} {logical} {converted} {precision} {scale}"
        found = _LEAVES[key] = Leaf(_leaf_type(e), physical, length, logical, converted, precision,
                                    scale, stat_kind(physical, logical, converted, precision), token)
    return found


def _hashable(value: Any) -> Any:
    """A decoded Thrift value (dicts and lists inside) as a hashable key."""
    if type(value) is dict:
        return tuple((k, _hashable(v)) for k, v in value.items())
    if type(value) in (list, tuple):
        return (type(value).__name__, *map(_hashable, value))
    return value


def annotation(c: ParquetColumn) -> str | None:
    """A leaf's annotation in one label: its logical type, with its converted type beside it when
    that says something else (`TIMESTAMP(MILLIS,local) + TIMESTAMP_MILLIS`: readers that know
    only converted types take those values as UTC instants)."""
    if c.logical_type is None or c.converted_type is None:
        return c.logical_type or c.converted_type
    if c.converted_type == _CONVERTED_EQUIVALENT.get(c.logical_type, c.logical_type.split("(")[0]):
        return c.logical_type
    return f"{c.logical_type} + {c.converted_type}"


# The converted type each logical type stands for (parquet.thrift LogicalType comments), where its
# name differs from the logical type's.
_CONVERTED_EQUIVALENT = {
    "STRING": "UTF8", "TIME(MILLIS,utc)": "TIME_MILLIS", "TIME(MICROS,utc)": "TIME_MICROS",
    "TIMESTAMP(MILLIS,utc)": "TIMESTAMP_MILLIS", "TIMESTAMP(MICROS,utc)": "TIMESTAMP_MICROS",
    **{f"INT({bits},{sign})": f"{'U' if sign == 'unsigned' else ''}INT_{bits}"
       for bits in (8, 16, 32, 64) for sign in ("signed", "unsigned")},
}


def _converted_label(value: int | None) -> str | None:
    if value is None:
        return None
    return CONVERTED_TYPES[value] if 0 <= value < len(CONVERTED_TYPES) else f"CONVERTED_{value}"


def _physical(e: Element) -> str:
    if e.physical is None or not 0 <= e.physical < len(PHYSICAL_TYPES):
        raise corrupt(f"leaf {e.name!r} has physical type {e.physical}, not one parquet.thrift defines")
    return PHYSICAL_TYPES[e.physical]


def _decimal(e: Element) -> DecimalType | None:
    """DECIMAL(p,s) from the logical type, else from the converted type and the element's fields."""
    if e.logical and e.logical[0] == 5:
        body = e.logical[1]
        precision, scale = body.get(2), body.get(1)
    elif e.converted == 5:
        precision, scale = e.precision, e.scale if e.scale is not None else 0
    else:
        return None
    if not isinstance(precision, int) or not isinstance(scale, int) or not 0 <= scale <= precision \
            or precision < 1:
        raise corrupt(f"leaf {e.name!r} is a DECIMAL with precision {precision} and scale {scale}")
    known = e.physical is not None and 0 <= e.physical < len(PHYSICAL_TYPES)
    return DecimalType(precision, scale, PHYSICAL_TYPES[e.physical] if known else None)  # type: ignore[index]


def _logical_label(e: Element) -> str | None:
    """The LogicalType union member as written: `TIMESTAMP(MICROS,local)`, `GEOGRAPHY(crs=...,
    algorithm=KARNEY)`, `FIELD_25` for a member this code has no name for."""
    if e.logical is None:
        return None
    member, body = e.logical
    if member in SIMPLE_LOGICAL:
        return SIMPLE_LOGICAL[member]
    if member == 5:
        return f"DECIMAL({body.get(2)},{body.get(1)})"
    if member in (7, 8):
        unit = _time_unit(e)[0]
        return f"{'TIME' if member == 7 else 'TIMESTAMP'}({unit},{'utc' if body.get(1) else 'local'})"
    if member == 10:
        return f"INT({body.get(1)},{'signed' if body.get(2) else 'unsigned'})"
    if member == 16:
        version = body.get(1)
        return "VARIANT" if version is None else f"VARIANT({version})"
    if member in (17, 18):
        params = []
        if isinstance(body.get(1), bytes):
            params.append(f"crs={text(body[1])}")
        if member == 18 and isinstance(body.get(2), int):
            params.append(f"algorithm={_edge_algorithm(body[2])}")
        name = "GEOMETRY" if member == 17 else "GEOGRAPHY"
        return f"{name}({', '.join(params)})" if params else name
    return f"FIELD_{member}"


def _time_unit(e: Element) -> tuple[str, TimeUnit]:
    """The TimeUnit union member of a TIME or TIMESTAMP logical type (field 2)."""
    unit = e.logical[1].get(2) if e.logical else None
    member = next(iter(unit), None) if isinstance(unit, dict) else None
    if member not in _TIME_UNITS:
        raise corrupt(f"leaf {e.name!r} has a time unit parquet.thrift does not define")
    return _TIME_UNITS[member]


def _edge_algorithm(value: int) -> str:
    return EDGE_ALGORITHMS[value] if 0 <= value < len(EDGE_ALGORITHMS) else f"ALGORITHM_{value}"


_CONVERTED_MODEL: dict[int, DataType] = {
    0: StringType(), 4: EnumType(()), 6: DateType(), 7: TimeType("ms"), 8: TimeType("us"),
    9: TimestampType("ms", True), 10: TimestampType("us", True),  # legacy timestamps mean UTC
    11: IntType(8, False), 12: IntType(16, False), 13: IntType(32, False), 14: IntType(64, False),
    15: IntType(8), 16: IntType(16), 17: IntType(32), 18: IntType(64), 19: JsonType(), 20: BinaryType(),
}
_LOGICAL_MODEL: dict[int, DataType] = {
    1: StringType(), 4: EnumType(()), 6: DateType(), 12: JsonType(), 13: BinaryType(), 14: UuidType(),
    15: FloatType(16),
}
_PHYSICAL_MODEL: tuple[DataType, ...] = (
    BooleanType(), IntType(32), IntType(64), Int96Type(), FloatType(32), FloatType(64), BinaryType(),
)


def _leaf_type(e: Element) -> DataType:
    """Model type of a leaf: its logical type, else its converted type, else its physical type
    (LogicalTypes.md). UNKNOWN (always null) and members this code does not know keep the
    physical type, as Spark reads UNKNOWN on INT32 as int (docs/reference/parquet-and-spark.md §2.4)."""
    decimal = _decimal(e)
    if decimal:
        return decimal
    if e.logical:
        member, body = e.logical
        if member in _LOGICAL_MODEL:
            return _LOGICAL_MODEL[member]
        if member == 10:
            if body.get(1) not in (8, 16, 32, 64):
                raise corrupt(f"leaf {e.name!r} is an INTEGER of {body.get(1)} bits")
            return IntType(body[1], bool(body.get(2)))
        if member in (7, 8):
            unit = _time_unit(e)[1]
            return TimeType(unit) if member == 7 else TimestampType(unit, bool(body.get(1)))
        if member == 17:
            return GeometryType(text(body[1]) if isinstance(body.get(1), bytes) else None)
        if member == 18:
            crs = text(body[1]) if isinstance(body.get(1), bytes) else None
            return GeographyType(crs, _edge_algorithm(body[2]) if isinstance(body.get(2), int) else None)
    elif e.converted in _CONVERTED_MODEL:
        return _CONVERTED_MODEL[e.converted]
    physical = _physical(e)
    if physical == "FIXED_LEN_BYTE_ARRAY":
        return FixedType(e.type_length or 0)
    return _PHYSICAL_MODEL[PHYSICAL_TYPES.index(physical)]
