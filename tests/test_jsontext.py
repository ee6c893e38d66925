"""A document as JSON (`jsontext`): orjson writes it, with the meaning the standard encoder gives
it under `default=str` (the oracle here): every value read back alike, indented or not."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from schemaguard.jsontext import json_bytes, json_text
from tests.strategies import PROPERTY


@dataclass(frozen=True)
class _Row:
    name: str
    count: int


_LEAVES = st.one_of(
    st.none(), st.booleans(), st.text(), st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False), st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(), st.datetimes(timezones=st.just(UTC)), st.dates(),
    st.builds(_Row, st.text(), st.integers()),
)
_KEYS = st.one_of(st.text(), st.integers(min_value=-(2**40), max_value=2**40))
_DOCS = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=20)


@PROPERTY
@given(_DOCS, st.booleans())
def test_a_document_reads_back_as_the_standard_encoder_writes_it(doc: Any, indent: bool) -> None:
    expected = json.loads(json.dumps(doc, default=str, ensure_ascii=False))
    assert json.loads(json_bytes(doc, indent)) == expected
    text = json_text(doc, indent)
    assert json.loads(text) == expected and text.endswith("\n")
    assert ("\n  " in text) == (indent and isinstance(doc, (dict, list, tuple)) and len(doc) > 0)


def test_values_without_a_json_type_are_written_as_str_gives_them() -> None:
    doc = {"at": datetime(2024, 1, 2, 3, 4, tzinfo=UTC), "day": date(2024, 1, 2), "price": Decimal("1.50"),
           "row": _Row("a", 1), 7: "seven", "big": 2**70}
    assert json.loads(json_bytes(doc, indent=False)) == {
        "at": "2024-01-02 03:04:00+00:00", "day": "2024-01-02", "price": "1.50",
        "row": "_Row(name='a', count=1)", "7": "seven", "big": 2**70}
