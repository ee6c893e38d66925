"""Every row of the engines' truth tables (tests/truth_tables.py, `make oracle-tables`) replayed
against the profiles, with no JVM: what Spark's reader, Spark's `mergeSchema` and Delta's
`mergeSchema` append did with each pair of leaf types is what the profile must say.

- spark-read: we name a loud break exactly when Spark failed, and our error's rule names Spark's
  error condition; a quiet break exactly when Spark changed an edge value, or returned the very
  values with another meaning: a relabel (`oracles.relabel`), which we name by its rule.
- spark-merge, delta-merge: we merge exactly when the engine did, to the engine's type; where it
  refused, our conflict's rule names its condition. A Delta append that lands with changed
  values is a break we must report.

Every promotion row of the three profiles must apply to at least one stored pair, so no row goes
untested. The last test re-derives a sample of rows from the engines: the stored tables are
still true."""

from __future__ import annotations

import datetime
import os
import random
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from schemaguard.base import Options, errors
from schemaguard.formats.notation import type_name
from schemaguard.formats.spark_view import spark_view
from schemaguard.model import DataType, Field, Schema
from schemaguard.rules.profiles import can_read, merge_schemas
from schemaguard.rules.promotions import DELTA_WIDENING, SPARK_READ_PROMOTIONS, SPARK_ROW_READ, Promotion
from schemaguard.spark import kept_conf
from tests.oracles import ORACLE_SCALE, predicted, relabel
from tests.truth_tables import (
    DELTA_MERGE_HEADER,
    LEAF,
    READ_HEADER,
    SPARK_MERGE_HEADER,
    SPARK_TYPES,
    VECTORIZED,
    as_type,
    delta_merge_groups,
    failure,
    flag,
    load,
    probe_delta_merge,
    probe_read,
    probe_spark_merge,
    read_cases,
    spark_merge_cases,
)

SHOWN = 25  # disagreements listed in a failure; the count says how many more


def one(t: DataType, nullable: bool) -> Schema:
    return Schema((Field("c", t, nullable),))


def refused(outcome: str) -> bool:
    return outcome not in ("ok", "changed")


def _check(rows: Iterable[dict[str, str]], disagreement: Callable[[dict[str, str]], str]) -> None:
    found = [f"{', '.join(row.values())}: {why}" for row in rows if (why := disagreement(row))]
    assert not found, f"{len(found)} rows disagree:\n" + "\n".join(found[:SHOWN])


def read_disagreement(row: dict[str, str], options: Options | None = None) -> str:
    w, r = LEAF[row["writer"]].type, as_type(row["reader"])
    problems = can_read(one(w, row["writer_nullable"] == "true"), one(r, row["reader_nullable"] == "true"),
                        "spark-read", options)
    ours = errors(problems)
    loud, quiet = [p for p in ours if not p.quiet], [p for p in ours if p.quiet]
    named, stated = {p.rule.id for p in quiet}, {rule} if (rule := relabel(w, r)) else set()
    if bool(loud) != refused(row["outcome"]):
        return f"ours={[p.code for p in ours] or 'reads'}"
    if not refused(row["outcome"]) and not stated <= named:
        return f"Spark reads the values under {rule}, and we say {sorted(named) or 'nothing'}"
    if row["outcome"] == "changed" and not quiet:
        return "Spark changes the values and we call the read fine"
    if row["outcome"] == "ok" and not named <= stated:
        return f"Spark reads every value unchanged, and we say {sorted(named - stated)}"
    if refused(row["outcome"]) and not any(predicted({p.rule.id for p in ours}, c)
                                           for c in row["outcome"].split("|")):
        return f"both refuse, but our rules {[p.rule.id for p in ours]} do not name it"
    return ""


def merge_disagreement(ours_ok: bool, merged: str | None, rule_ids: set[str], row: dict[str, str]) -> str:
    if ours_ok != (row["outcome"] == "ok"):
        return f"ours={'merges to ' + str(merged) if ours_ok else sorted(rule_ids)}"
    if row["outcome"] == "ok" and merged != row["detail"]:
        return f"ours merges to {merged}"
    if refused(row["outcome"]) and not any(predicted(rule_ids, c) for c in row["outcome"].split("|")):
        return f"both refuse, but our rules {sorted(rule_ids)} do not name it"
    return ""


def spark_merge_disagreement(row: dict[str, str]) -> str:
    nullable = row["nullable"] == "true"
    ours = merge_schemas([one(LEAF[row["left"]].type, nullable), one(LEAF[row["right"]].type, nullable)],
                         "spark-merge")
    merged = type_name(ours.merged.fields[0].type) if ours.merged else None  # type: ignore[arg-type]
    return merge_disagreement(ours.ok, merged, {c.rule.id for c in ours.conflicts}, row)


def delta_merge_disagreement(row: dict[str, str]) -> str:
    nullable = row["nullable"] == "true"
    ours = merge_schemas([one(as_type(row["table"]), nullable), one(as_type(row["data"]), nullable)],
                         "delta-merge", Options(type_widening=row["widening"] == "true"))
    merged = type_name(ours.merged.fields[0].type) if ours.merged else None  # type: ignore[arg-type]
    return merge_disagreement(ours.ok, merged, {c.rule.id for c in ours.conflicts}, row)


def test_spark_read_table() -> None:
    _check(load("spark_read.csv"), read_disagreement)


def test_spark_read_rows_table() -> None:
    row_reader = Options(vectorized_reader=False)
    _check(load("spark_read_rows.csv"), lambda row: read_disagreement(row, row_reader))


def test_spark_merge_table() -> None:
    _check(load("spark_merge.csv"), spark_merge_disagreement)


def test_delta_merge_table() -> None:
    _check(load("delta_merge.csv"), delta_merge_disagreement)


def test_the_stored_tables_cover_todays_cross_product() -> None:
    """Each table holds exactly one row for each case the generator draws today (the leaves and
    Spark types as they are now): a leaf added since the last `make oracle-tables` fails here."""
    def keys(table: str, columns: tuple[str, ...]) -> list[tuple[str, ...]]:
        return [tuple(row[c] for c in columns) for row in load(table)]

    def type_key(t: DataType) -> str:
        return type_name(t)  # type: ignore[arg-type]

    read = [(leaf.key, flag(wn), type_key(reader), flag(rn)) for leaf, wn, reader, rn in read_cases()]
    merge = [(left.key, right.key, flag(nullable)) for left, right, nullable in spark_merge_cases()]
    delta = [(type_key(table), type_key(data), flag(nullable), flag(widening))
             for table, nullable, widening in delta_merge_groups() for data in SPARK_TYPES]
    for table, columns, wanted in (("spark_read.csv", READ_HEADER[:4], read),
                                   ("spark_read_rows.csv", READ_HEADER[:4], read),
                                   ("spark_merge.csv", SPARK_MERGE_HEADER[:3], merge),
                                   ("delta_merge.csv", DELTA_MERGE_HEADER[:4], delta)):
        stored = keys(table, columns)
        assert len(stored) == len(set(stored)), f"{table}: a case stored twice"
        assert set(stored) == set(wanted), (f"{table}: missing {sorted(set(wanted) - set(stored))[:5]}, "
                                            f"no longer drawn {sorted(set(stored) - set(wanted))[:5]}")


def test_only_the_engines_errors_and_pysparks_range_errors_are_recorded() -> None:
    """A value Spark read that PySpark cannot hold (DateType's `fromInternal` out of range) is a
    changed read; any other Python exception is a bug of the probe and stops the generation."""
    from pyspark.sql.types import DateType

    try:
        DateType().fromInternal(10**9)  # a day number 2.7 million years away
    except ValueError as e:
        assert failure(e)[0] == "changed"
    else:
        raise AssertionError("DateType.fromInternal held a date past year 9999")
    with pytest.raises(KeyError):
        failure(KeyError("c"))  # e.g. the probe looked up a column that is not there
    try:
        datetime.date.fromordinal(0)  # the same error class, raised outside PySpark's conversion
    except ValueError as e:
        with pytest.raises(ValueError):
            failure(e)


def _applies(p: Promotion, w: DataType, r: DataType, view: Callable[[DataType], Any],
             options: Options) -> bool:
    seen_w = w if p.raw else view(w)
    return not isinstance(seen_w, str) and p.test(seen_w, r, options)


# Rows checked against Spark by a test of their own instead of the stored tables, whose leaves are
# what pyarrow writes: an ANSI interval is Spark's own footer schema over a plain integer, read and
# merged by real Spark in tests/test_intervals.py (both readers).
OWN_ENGINE_TEST = {f"spark-read.interval-{kind}": "test_intervals.py"
                   for kind in ("fields", "kind", "relabel")}


def _own_engine_test(p: Promotion) -> bool:
    """A row `OWN_ENGINE_TEST` names, whose source cites that test, which exists."""
    test = OWN_ENGINE_TEST.get(p.rule.id)
    return test is not None and test in p.rule.source and (Path(__file__).parent / test).is_file()


@pytest.mark.parametrize("promotion", SPARK_READ_PROMOTIONS, ids=lambda p: p.rule.id)
def test_every_spark_read_promotion_meets_the_engine(promotion: Promotion) -> None:
    if _own_engine_test(promotion):
        return
    hits = [r for r in load("spark_read.csv")
            if _applies(promotion, LEAF[r["writer"]].type, as_type(r["reader"]), spark_view, Options())]
    assert hits, f"no stored Spark read tests {promotion.rule.id}"


@pytest.mark.parametrize("row", SPARK_ROW_READ, ids=lambda p: p.rule.id)
def test_every_row_reader_row_decides_a_stored_read(row: Promotion) -> None:
    """The row reader's rows are tried in order, as newConverter's cases are: each one is the
    first to apply to some stored read of another type."""
    def first(w: DataType, r: DataType) -> Promotion | None:
        return next((p for p in SPARK_ROW_READ if _applies(p, w, r, spark_view, Options())), None)

    if _own_engine_test(row):
        return
    keys = {(r["writer"], r["reader"]) for r in load("spark_read_rows.csv")}  # a decimal's backing counts
    pairs = [(LEAF[w].type, as_type(r)) for w, r in keys]
    assert any(first(w, r) is row for w, r in pairs if spark_view(w) != spark_view(r)), \
        f"no stored row-reader read is decided by {row.rule.id}"


@pytest.mark.parametrize("promotion", DELTA_WIDENING, ids=lambda p: p.rule.id)
def test_every_delta_widening_meets_the_engine(promotion: Promotion) -> None:
    hits = [r for r in load("delta_merge.csv") if r["widening"] == "true"
            and _applies(promotion, as_type(r["table"]), as_type(r["data"]), lambda t: t, Options())]
    assert hits, f"no stored Delta append tests {promotion.rule.id}"


# ---------------------------------------------------------------------------------------------
# The stored tables are still what the engines do

# Rows re-derived a run (times SCHEMAGUARD_ORACLE_SCALE: `make oracle` checks three times as many).
SAMPLE = {"spark_read.csv": 15, "spark_read_rows.csv": 10, "spark_merge.csv": 10, "delta_merge.csv": 4}


def rederive(spark: Any, folder: Path, table: str, row: dict[str, str]) -> tuple[str, str]:
    def b(key: str) -> bool:
        return row[key] == "true"

    if table in ("spark_read.csv", "spark_read_rows.csv"):
        with kept_conf(spark):
            spark.conf.set(VECTORIZED, str(table == "spark_read.csv").lower())
            return probe_read(spark, folder, LEAF[row["writer"]], b("writer_nullable"),
                              as_type(row["reader"]), b("reader_nullable"))
    if table == "spark_merge.csv":
        return probe_spark_merge(spark, folder, LEAF[row["left"]], LEAF[row["right"]], b("nullable"))
    return probe_delta_merge(spark, folder, as_type(row["table"]), as_type(row["data"]), b("nullable"),
                             b("widening"))


@pytest.mark.slow
@pytest.mark.parametrize("table", list(SAMPLE))
def test_a_sample_of_the_stored_rows_is_still_true(spark: Any, table: str) -> None:
    """A fresh sample each run, so the whole table gets re-checked over time; its seed is printed
    and in the failure, and SCHEMAGUARD_TRUTH_SEED gives it back. `make oracle-tables` writes the
    tables anew when an engine moves."""
    seed = int(os.environ.get("SCHEMAGUARD_TRUTH_SEED", random.randrange(2 ** 32)))
    print(f"SCHEMAGUARD_TRUTH_SEED={seed}")
    rows = random.Random(seed).sample(load(table), max(1, round(SAMPLE[table] * ORACLE_SCALE)))
    with tempfile.TemporaryDirectory() as d:
        stale = [(row, got) for row in rows
                 if (got := rederive(spark, Path(d), table, row)) != (row["outcome"], row["detail"])]
    assert not stale, f"seed {seed}: the engine now says otherwise: {stale[:5]}"
