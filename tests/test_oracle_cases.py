"""The disagreements `make oracle` found, replayed against the engines in every `make test`: a
case once found stays a fixed case (tests/oracle_cases/*.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle_search import CASES, checks, decode

FOUND = sorted(CASES.glob("*.json"))


@pytest.mark.parametrize("case", FOUND, ids=lambda p: p.stem)
def test_found_case_agrees_with_the_engine(spark: Any, case: Path) -> None:
    oracle, args = decode(json.loads(case.read_text()))
    check, _ = checks()[oracle]
    check(spark, *args)


def test_a_case_reads_back_as_written() -> None:
    """The case format round-trips, so a stored case replays what the search found."""
    from schemaguard.model import Field, IntType, Schema
    from tests.oracle_search import encode

    schema = Schema((Field("a", IntType(32), False),))
    case = ([schema, schema], ["spark", "pyarrow"])
    assert decode(json.loads(json.dumps(encode("spark-merge", case)))) == ("spark-merge", list(case))
