"""Exact comparison of values an engine read back with the values the test expects, for the
read oracles (`spark-read`, `delta-read`, `iceberg`) and the engines' truth tables: a read that
succeeds with any other value is a quiet break. Exact means the same Python kind and the same
value: floats bit for bit (so -0.0 is not 0.0), decimals with the reader's scale (1.50 is not 1.5
when the reader says scale 2), datetimes with the same time zone (naive is not UTC), structs with
the reader's field names, lists element by element, maps (`Map`) entry by entry in any order."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
import uuid
from typing import Any


class NoExactValue(Exception):
    """The reader's type cannot hold the written value unchanged: any value read is a change."""


class Map(dict[Any, Any]):
    """A map's expected entries, compared key by key in any order: a map has none (Spark's writer
    builds one through a Java hash map, so a file's entries need not be in the order written).
    A plain dict is a struct's fields, in order."""


def first_difference(expected: Any, got: Any, where: str = "") -> str:
    """'' when `got` is exactly `expected`, else where and how they differ."""
    here = where or "the row"
    if expected is None or got is None:
        return "" if expected is None and got is None else f"{here}: expected {expected!r}, read {got!r}"
    if isinstance(expected, Map):
        return _map_difference(expected, got, where)
    if isinstance(expected, dict):
        if not isinstance(got, dict) or list(expected) != list(got):
            return f"{here}: expected fields {list(expected)}, read {got!r}"
        return next((d for k in expected if (d := first_difference(expected[k], got[k], f"{where}.{k}"))), "")
    if isinstance(expected, list | tuple):
        if type(got) is not type(expected) or len(got) != len(expected):
            return f"{here}: expected {expected!r}, read {got!r}"
        return next((d for i, (e, g) in enumerate(zip(expected, got, strict=True))
                     if (d := first_difference(e, g, f"{where}[{i}]"))), "")
    if not _same(expected, got):
        return f"{here}: expected {expected!r}, read {got!r}"
    return ""


def _map_difference(expected: Map, got: Any, where: str) -> str:
    if not isinstance(got, dict) or len(got) != len(expected):
        return f"{where or 'the row'}: expected {dict(expected)!r}, read {got!r}"
    for key, value in expected.items():
        read = [k for k in got if not first_difference(key, k)]  # the key exactly, wherever it is
        if not read:
            return f"{where or 'the row'}: expected the key {key!r}, read {got!r}"
        if difference := first_difference(value, got[read[0]], f"{where}{{{key!r}}}"):
            return difference
    return ""


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, float):
        return isinstance(got, float) and struct.pack("<d", expected) == struct.pack("<d", got)
    if isinstance(expected, decimal.Decimal):
        return (isinstance(got, decimal.Decimal) and expected == got
                and expected.as_tuple().exponent == got.as_tuple().exponent)
    if isinstance(expected, bytes | bytearray):
        return isinstance(got, bytes | bytearray) and bytes(expected) == bytes(got)
    if isinstance(expected, dt.datetime):
        return (isinstance(got, dt.datetime) and (expected.tzinfo is None) == (got.tzinfo is None)
                and expected == got and expected.utcoffset() == got.utcoffset())
    if isinstance(expected, int | str | dt.date | dt.time | uuid.UUID):
        return type(got) is type(expected) and expected == got
    raise TypeError(f"no exact comparison for {type(expected).__name__}")


def decimal_as(value: decimal.Decimal, precision: int, scale: int) -> decimal.Decimal:
    """The value as decimal(precision, scale) holds it, if it holds it without change."""
    rescaled = value.quantize(decimal.Decimal(1).scaleb(-scale), context=decimal.Context(prec=80))
    if rescaled != value or (rescaled != 0 and len(rescaled.as_tuple().digits) > precision):
        raise NoExactValue(f"{value} does not fit decimal({precision},{scale})")
    return rescaled
