"""Differential test: the `iceberg` profile against pyiceberg reading files written under an older
schema.

Each case writes rows under a schema W with pyiceberg (a SQL catalog on sqlite in `tmp_path`;
edge values: integer extremes, float32 extremes and -0.0, full-precision decimals, pre-1970 and
sub-second times, non-ASCII text, a null at every optional level), evolves the table with
pyiceberg's own `update_schema()` to R, and reads the old file back with a scan's `to_arrow()`:
every promotion pair of 18 primitive types (an exhaustive table), 39 named evolutions of a nested
table (renames, drops, re-adds, adds with and without defaults, nullability, moves, promotions in
structs, lists and maps), and random sequences of them.

pyiceberg's "no" is its refusal of the evolution or of the read, and it counts only when the
refusal is one ENGINE_ERRORS (tests/oracles.py) names for a rule of ours that fired; anything else
pyiceberg raises fails the test. A refused evolution is also forced (`allow_incompatible_changes`)
and read, so the read behind it is seen too; a refusal speaks of its own step, so in a sequence of
steps each step is judged on its own pair and the old file on the final read. A read that
succeeds must return every written value exactly as R's type holds it, matched by field id as
Iceberg binds columns (a renamed field keeps its values, a re-added one reads null, an added one
its initial default, a required one a value); anything else is a quiet break, also a "no".

Our verdict is the audit's: the table read through schemaguard's loader (`lake.table.read`),
options from `table_options`, R the metadata's current schema, and W the old file's schema both
ways the audit takes it: the metadata's schema it was written with (`iceberg_schema_changes`)
and its own footer (`compatibility`).

pyiceberg 0.12 departs from the spec (and from Java's SchemaUpdate) in a few places where the
profile keeps to the spec: `DEPARTURES` and `SCENARIO_DEPARTURES` pin each, both ways.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table import Table
from pyiceberg.table.update.schema import UpdateSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from schemaguard.base import Options, Problem, errors
from schemaguard.checks.compat import table_options
from schemaguard.lake.table import read
from schemaguard.model import Schema
from schemaguard.rules.profiles import can_read
from tests.exact import NoExactValue, decimal_as, first_difference
from tests.helpers import sql_catalog
from tests.oracles import KNOWN_REFUSALS, oracle_settings, predicted

# A differential suite against pyiceberg (hundreds of reads): in `make test`, not in test-fast.
pytestmark = pytest.mark.slow


D = decimal.Decimal
UTC = dt.UTC

TYPES: dict[str, IcebergType] = {
    "boolean": BooleanType(), "int": IntegerType(), "long": LongType(), "float": FloatType(),
    "double": DoubleType(), "decimal(9,2)": DecimalType(9, 2), "decimal(12,2)": DecimalType(12, 2),
    "decimal(12,3)": DecimalType(12, 3), "decimal(38,2)": DecimalType(38, 2), "date": DateType(),
    "time": TimeType(), "timestamp": TimestampType(), "timestamptz": TimestamptzType(),
    "string": StringType(), "uuid": UUIDType(), "fixed[16]": FixedType(16), "fixed[4]": FixedType(4),
    "binary": BinaryType(),
}

# Edge values of each type: extremes, negatives, full precision, pre-1970 and sub-second times,
# non-ASCII text. Floats are exact in float32, so a float column holds them unchanged.
EDGES: dict[str, list[Any]] = {
    "boolean": [True, False],
    "int": [-2**31, 2**31 - 1, 0, -1],
    "long": [-2**63, 2**63 - 1, -1],
    "float": [3.4028234663852886e38, -1.401298464324817e-45, -0.0, 1.5],
    "double": [1.7976931348623157e308, -5e-324, -0.0, 0.1],
    "decimal(9,2)": [D("9999999.99"), D("-9999999.99"), D("0.01")],
    "decimal(12,2)": [D("9999999999.99"), D("-0.01")],
    "decimal(12,3)": [D("999999999.999"), D("-0.001")],
    "decimal(38,2)": [D("9" * 36 + ".99"), D("-" + "9" * 36 + ".99")],
    "date": [dt.date(1, 1, 1), dt.date(1969, 12, 31), dt.date(9999, 12, 31)],
    "time": [dt.time(0, 0), dt.time(23, 59, 59, 999999)],
    "timestamp": [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1900, 1, 1, 0, 0, 0, 1),
                  dt.datetime(9999, 12, 31, 23, 59, 59, 999999)],
    "timestamptz": [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                    dt.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC)],
    "string": ["é", "日本語", "", "\U0001f600"],
    "uuid": [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.UUID("12345678-9abc-def0-1234-56789abcdef0")],
    "fixed[16]": [bytes(16), b"\xff" * 16],
    "fixed[4]": [b"\x00\x01\x02\x03", b"\xff\xfe\xfd\xfc"],
    "binary": [b"", b"\x00\xff", "é".encode()],
}


# Where pyiceberg 0.12 departs from the spec that the `iceberg` profile follows: it makes the change
# and reads every old value back unchanged, where the spec (and Java's SchemaUpdate) refuses the
# change. Pinned both ways: pyiceberg must still read them, and our verdict stays the spec's "no".
_SCALE = ("pyiceberg's `promote` never compares scales (`file_type.scale == file_type.scale`, "
          "pyiceberg/schema.py): it lets a decimal change its scale, which the spec forbids (only "
          "decimal(P,S) -> decimal(P',S), P' >= P); a change that loses digits then fails the read")
DEPARTURES: dict[tuple[str, str], str] = {
    ("string", "binary"): "pyiceberg promotes string -> binary (and binary -> string, whose read "
                          "fails on bytes that are no UTF-8); the spec and Java's "
                          "TypeUtil.isPromotionAllowed do not",
    ("fixed[16]", "uuid"): "pyiceberg promotes fixed[16] -> uuid (to read Parquet UUIDs that pyarrow "
                           "returns as fixed bytes); the spec does not",
    ("decimal(9,2)", "decimal(12,3)"): _SCALE,
}


# ---------------------------------------------------------------------------------------------
# pyiceberg's refusals, named as ENGINE_ERRORS names them: "pyiceberg: <exception>: <message start>",
# `*` standing for any text


# pyiceberg 0.12 crashes reading a column it was forced (allow_incompatible_changes) to turn into a
# timestamp from another type. That is no answer of the engine's: it is taken only after pyiceberg
# refused the change, and the refusal stays the verdict.
CRASHES_AFTER_FORCING = ("pyiceberg: AttributeError: 'pyarrow.lib.*' object has no attribute 'tz'",)


def condition(e: BaseException, refused: str = "") -> str:
    """The refusal pyiceberg raised, when ENGINE_ERRORS names it (or, after a refused change was
    forced, a known crash of the forced read: then the refusal); anything else is raised again,
    so a failure no rule predicts (or a broken test) never passes as a verdict."""
    text = f"pyiceberg: {type(e).__name__}: {e}"
    known = [c for c in KNOWN_REFUSALS if c.startswith("pyiceberg: ") and fnmatchcase(text, f"{c}*")]
    if known:
        return known[0]
    if refused and any(fnmatchcase(text, f"{c}*") for c in CRASHES_AFTER_FORCING):
        return refused
    raise e


@dataclass(frozen=True)
class Outcome:
    """What pyiceberg did: read every value unchanged (ok), or refused (the condition), or read
    something else (a quiet break: `changed` says what)."""

    ok: bool
    condition: str = ""
    changed: str = ""

    def __str__(self) -> str:
        return "ok" if self.ok else self.condition or f"read, but values changed: {self.changed}"


def evolve(table: Table, steps: list[Callable[[UpdateSchema], None]]) -> str:
    """Apply each step as one schema update; a refused step is recorded, then forced. Returns the
    first refusal's condition ('' when pyiceberg accepted every step)."""
    refused = ""
    for step in steps:
        try:
            with table.update_schema() as update:
                step(update)
        except Exception as e:  # pyiceberg's "no", when ENGINE_ERRORS names it
            refused = refused or condition(e)
            try:
                with table.update_schema(allow_incompatible_changes=True) as update:
                    step(update)
            except Exception as forced:  # some refusals cannot be forced (map keys, say)
                condition(forced)
    return refused


def scan(table: Table, expected: list[Any], refused: str, column: str | None = None) -> Outcome:
    """Read the table (one column of it, or every column) and compare with `expected` (a value
    per row; NoExactValue where R's type cannot hold the written value)."""
    try:
        selected = (column,) if column is not None else ("*",)
        got = table.scan(selected_fields=selected).to_arrow()
    except Exception as e:  # pyiceberg's "no" of the read (a forced one too), when ENGINE_ERRORS names it
        return Outcome(False, refused or condition(e, refused))
    rows = got.column(column).to_pylist() if column is not None else got.to_pylist()
    for i, (want, have) in enumerate(zip(expected, rows, strict=True)):
        if isinstance(want, NoExactValue):
            return Outcome(False, refused, f"row {i}: {want}; read {have!r}")
        if diff := first_difference(want, have, f"row {i}"):
            return Outcome(False, refused, diff)
    return Outcome(not refused, refused)


# ---------------------------------------------------------------------------------------------
# What a reader should get: each written value as R's type holds it, by field id


def converted(value: Any, w: IcebergType, r: IcebergType) -> Any:
    """`value` of type `w` as type `r` holds it unchanged; NoExactValue when `r` cannot."""
    if value is None or w == r:
        return value
    if isinstance(w, IntegerType) and isinstance(r, LongType):
        return value
    if isinstance(w, IntegerType | LongType) and isinstance(r, DoubleType) and abs(value) <= 2**53:
        return float(value)
    if isinstance(w, FloatType) and isinstance(r, DoubleType):
        return value
    if isinstance(w, DecimalType | IntegerType | LongType) and isinstance(r, DecimalType):
        return decimal_as(D(value), r.precision, r.scale)
    if isinstance(w, StringType) and isinstance(r, BinaryType):
        return value.encode()
    if isinstance(w, BinaryType | FixedType) and isinstance(r, StringType):
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            raise NoExactValue(f"{value!r} is no UTF-8 text") from None
    if isinstance(w, FixedType) and isinstance(r, BinaryType):
        return value
    if isinstance(w, FixedType | BinaryType) and isinstance(r, UUIDType) and len(value) == 16:
        return uuid.UUID(bytes=bytes(value))
    if isinstance(w, UUIDType) and isinstance(r, FixedType | BinaryType) and getattr(r, "length", 16) == 16:
        return value.bytes
    if isinstance(w, DateType) and isinstance(r, TimestampType):
        return dt.datetime(value.year, value.month, value.day)
    raise NoExactValue(f"{value!r} ({w}) has no exact value as {r}")


def projected(value: Any, w: IcebergType | None, r: NestedField) -> Any:
    """The value a reader with field `r` should read, given the written `value` of the field of W
    with r's id (`w` None: no such field, so r's initial default, else null)."""
    if w is None:
        result = r.initial_default
    elif value is None:
        result = None
    elif isinstance(r.field_type, StructType) and isinstance(w, StructType):
        result = struct_value(value, w, r.field_type)
    elif isinstance(r.field_type, ListType) and isinstance(w, ListType):
        element = r.field_type.element_field
        result = [projected(e, w.element_type, element) for e in value]
    elif isinstance(r.field_type, MapType) and isinstance(w, MapType):
        key, item = r.field_type.key_field, r.field_type.value_field
        result = [(projected(k, w.key_type, key), projected(v, w.value_type, item)) for k, v in value]
    else:
        result = converted(value, w, r.field_type)
    if result is None and r.required:
        raise NoExactValue(f"`{r.name}` is required but no value can be read for it")
    return result


def struct_value(value: dict[str, Any], w: StructType, r: StructType) -> dict[str, Any]:
    by_id = {f.field_id: f for f in w.fields}
    out = {}
    for rf in r.fields:
        wf = by_id.get(rf.field_id)
        out[rf.name] = projected(value.get(wf.name) if wf else None, wf.field_type if wf else None, rf)
    return out


def expected_rows(rows: list[dict[str, Any]], w: IcebergSchema, r: IcebergSchema) -> list[Any]:
    out: list[Any] = []
    for row in rows:
        try:
            out.append(struct_value(row, w.as_struct(), r.as_struct()))
        except NoExactValue as e:
            out.append(e)
    return out


# ---------------------------------------------------------------------------------------------
# Our verdict, as the audit reaches it


@dataclass(frozen=True)
class Ours:
    by_metadata: list[Problem]  # W = the metadata's schema the file was written with
    by_footer: list[Problem]  # W = the file's footer, its fields named by id
    schemas: dict[int, Schema]  # every schema of the metadata, as the loader reads it, by id
    options: Options

    def errors_at(self, column: str | None) -> tuple[list[Problem], list[Problem]]:
        def at(problems: list[Problem]) -> list[Problem]:
            return [p for p in errors(problems) if column is None or p.path == column
                    or p.path.startswith((f"{column}.", f"{column}[", f"{column}{{"))]
        return at(self.by_metadata), at(self.by_footer)


def ours(table: Table) -> Ours:
    loaded = read(table.metadata.location.removeprefix("file://"), workers=1)
    snap = loaded.iceberg
    assert snap is not None and len(snap.files) == 1 and len(loaded.versions) == 1, "one old file"
    options = table_options(loaded, Options())
    current = snap.current.schema
    [written] = [s.schema for s in snap.schemas if s.schema_id == snap.files[0].schema_id]
    return Ours(can_read(written, current, "iceberg", options),
                can_read(loaded.versions[0].footer.schema, current, "iceberg", options),
                {s.schema_id: s.schema for s in snap.schemas}, options)


def disagreement(engine: Outcome, problems: list[Problem], how: str) -> str:
    """'' when our verdict (no error: readable) is the engine's, and a refusal is one our rules name."""
    if (not problems) != engine.ok:
        return f"{how}: ours={[(p.path, p.rule.id) for p in problems] or 'ok'} pyiceberg={engine}"
    if engine.condition and not predicted({p.rule.id for p in problems}, engine.condition):
        rules = [p.rule.id for p in problems]
        return f"{how}: pyiceberg refused with {engine.condition!r}, which none of {rules} names"
    return ""


# ---------------------------------------------------------------------------------------------
# The tests


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[SqlCatalog]:
    with sql_catalog(tmp_path) as cat:
        yield cat


def write(catalog: SqlCatalog, schema: IcebergSchema,
          rows: list[dict[str, Any]]) -> tuple[Table, IcebergSchema]:
    """The table, and W as the catalog made it (it assigns fresh field ids)."""
    table = catalog.create_table("db.t", schema)
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    as_written = table.scan().to_arrow().to_pylist()
    assert not (diff := first_difference(rows, as_written)), f"pyiceberg did not write the rows: {diff}"
    return table, table.schema()


@pytest.mark.parametrize("source", list(TYPES))
def test_every_promotion_from_a_type_agrees_with_pyiceberg(catalog: SqlCatalog, source: str) -> None:
    """One column per target type, all written as `source` with its edge values and a null, each
    evolved to its target on its own and read on its own."""
    targets = {target: f"c{i}" for i, target in enumerate(t for t in TYPES if t != source)}
    schema = IcebergSchema(*(NestedField(i + 1, c, TYPES[source], required=False)
                             for i, c in enumerate(targets.values())))
    rows = [dict.fromkeys(targets.values(), v) for v in [*EDGES[source], None]]
    table, written = write(catalog, schema, rows)
    def widen(column: str, target: str) -> Callable[[Any], None]:
        return lambda u: u.update_column(column, TYPES[target])

    refused = {c: evolve(table, [widen(c, t)]) for t, c in targets.items()}
    verdict = ours(table)
    current = table.schema()
    found = []
    for target, column in targets.items():
        want = [NoExactValue(str(e)) if isinstance(e, NoExactValue) else e[column] for e in
                expected_rows(rows, written, IcebergSchema(*[f for f in current.fields if f.name == column]))]
        engine = scan(table, want, refused[column], column)
        departure = DEPARTURES.get((source, target))
        for how, problems in zip(("metadata W", "footer W"), verdict.errors_at(column), strict=True):
            if departure is not None:  # pinned: pyiceberg's own behaviour, and ours by the spec
                if not engine.ok or not problems:
                    found.append(f"{source} -> {target} ({how}): departure changed: pyiceberg={engine}, "
                                 f"ours={[p.rule.id for p in problems] or 'ok'}; {departure}")
            elif diff := disagreement(engine, problems, how):
                found.append(f"{source} -> {target}: {diff}")
    assert not found, "\n".join(found)


def required(name: str, t: IcebergType, fid: int) -> NestedField:
    return NestedField(fid, name, t, required=True)


def optional(name: str, t: IcebergType, fid: int) -> NestedField:
    return NestedField(fid, name, t, required=False)


# A nested table: every kind of field, every optional level holding a null somewhere.
NESTED = IcebergSchema(
    required("id", LongType(), 1),
    optional("a", IntegerType(), 2),
    optional("b", StringType(), 3),
    optional("s", StructType(optional("x", IntegerType(), 6), required("y", FloatType(), 7),
                             optional("z", DecimalType(9, 2), 8)), 4),
    optional("xs", ListType(9, IntegerType(), element_required=False), 5),
    optional("m", MapType(10, StringType(), 11, FloatType(), value_required=False), 12),
    optional("ls", ListType(13, StructType(optional("p", IntegerType(), 14),
                                           optional("q", StringType(), 15)), element_required=False), 16),
    optional("mr", MapType(17, IntegerType(), 18, LongType(), value_required=True), 19),
    required("r", DateType(), 20),
)
NESTED_ROWS: list[dict[str, Any]] = [
    {"id": -2**63, "a": -2**31, "b": "日本語", "s": {"x": 2**31 - 1, "y": -1.401298464324817e-45,
                                                   "z": D("-9999999.99")},
     "xs": [2**31 - 1, None, -2**31], "m": [("é", 3.4028234663852886e38), ("k", None)],
     "ls": [{"p": -1, "q": "\U0001f600"}, None, {"p": None, "q": None}],
     "mr": [(-2**31, 2**63 - 1)], "r": dt.date(1969, 12, 31)},
    {"id": 2**63 - 1, "a": None, "b": None, "s": {"x": None, "y": -0.0, "z": None}, "xs": [], "m": [],
     "ls": [], "mr": [], "r": dt.date(1, 1, 1)},
    # (not `ls` null: pyiceberg writes a null list of structs as an empty list, see the last test)
    {"id": 0, "a": 0, "b": "", "s": None, "xs": None, "m": None, "ls": [], "mr": None,
     "r": dt.date(9999, 12, 31)},
]

Step = Callable[[UpdateSchema], None]


def step(*calls: Callable[[UpdateSchema], Any]) -> Step:
    def run(u: UpdateSchema) -> None:
        for call in calls:
            call(u)
    return run


SCENARIOS: dict[str, list[Step]] = {
    "rename a column": [step(lambda u: u.rename_column("a", "a2"))],
    "rename a struct field": [step(lambda u: u.rename_column("s.x", "x2"))],
    "rename a field of a struct in a list": [step(lambda u: u.rename_column("ls.element.p", "p2"))],
    "case-only rename": [step(lambda u: u.rename_column("b", "B"))],
    "swap two names": [step(lambda u: u.rename_column("a", "tmp")), step(lambda u: u.rename_column("b", "a")),
                       step(lambda u: u.rename_column("tmp", "b"))],
    "drop a column": [step(lambda u: u.delete_column("b"))],
    "drop a struct field": [step(lambda u: u.delete_column("s.z"))],
    "drop and re-add the same name and type": [step(lambda u: u.delete_column("a")),
                                               step(lambda u: u.add_column("a", IntegerType()))],
    "drop and re-add the same name, another type": [step(lambda u: u.delete_column("b")),
                                                    step(lambda u: u.add_column("b", LongType()))],
    "rename, then add a column with the old name": [step(lambda u: u.rename_column("a", "old_a")),
                                                    step(lambda u: u.add_column("a", StringType()))],
    "add an optional column": [step(lambda u: u.add_column("n", TimestamptzType()))],
    "add an optional struct field": [step(lambda u: u.add_column(("s", "w"), LongType()))],
    "add a field to a struct in a list": [step(lambda u: u.add_column(("ls", "element", "t"), DoubleType()))],
    "add an optional struct column": [step(lambda u: u.add_column(
        "t", StructType(optional("u", IntegerType(), 1), optional("v", StringType(), 2))))],
    "add a required column without a default": [
        step(lambda u: u.add_column("n", IntegerType(), required=True))],
    "add a required struct field without a default": [
        step(lambda u: u.add_column(("s", "w"), IntegerType(), required=True))],
    "add a required column with a default (v2)": [
        step(lambda u: u.add_column("n", IntegerType(), required=True, default_value=-7))],
    "make a column required": [step(lambda u: u.update_column("a", required=True))],
    "make a struct field required": [step(lambda u: u.update_column("s.x", required=True))],
    "make list elements required": [step(lambda u: u.update_column("xs.element", required=True))],
    "make map values required": [step(lambda u: u.update_column("m.value", required=True))],
    "make a column optional": [step(lambda u: u.make_column_optional("r"))],
    "make a struct field optional": [step(lambda u: u.make_column_optional("s.y"))],
    "make map values optional": [step(lambda u: u.make_column_optional("mr.value"))],
    "move a column first": [step(lambda u: u.move_first("r"))],
    "move a column after another": [step(lambda u: u.move_after("id", "s"))],
    "move a struct field before another": [step(lambda u: u.move_before("s.z", "s.x"))],
    "int -> long in a struct": [step(lambda u: u.update_column("s.x", LongType()))],
    "float -> double in a struct": [step(lambda u: u.update_column("s.y", DoubleType()))],
    "decimal(9,2) -> decimal(18,2) in a struct": [step(lambda u: u.update_column("s.z", DecimalType(18, 2)))],
    "int -> long as a list element": [step(lambda u: u.update_column("xs.element", LongType()))],
    "float -> double as a map value": [step(lambda u: u.update_column("m.value", DoubleType()))],
    "int -> long in a struct in a list": [step(lambda u: u.update_column("ls.element.p", LongType()))],
    "long -> int as a map value": [step(lambda u: u.update_column("mr.value", IntegerType()))],
    "int -> double in a struct": [step(lambda u: u.update_column("s.x", DoubleType()))],
    "string -> int in a struct in a list": [step(lambda u: u.update_column("ls.element.q", IntegerType()))],
    "date -> timestamp": [step(lambda u: u.update_column("r", TimestampType()))],
    "rename, promote and move at once": [step(lambda u: u.rename_column("a", "count"),
                                              lambda u: u.update_column("a", LongType()),
                                              lambda u: u.move_first("a"))],
    "several commits: add, promote, rename, drop": [
        step(lambda u: u.add_column("n", StringType())), step(lambda u: u.update_column("a", LongType())),
        step(lambda u: u.rename_column("n", "note")), step(lambda u: u.delete_column("s.x"))],
}

# Scenarios where pyiceberg departs from the spec, as DEPARTURES above.
SCENARIO_DEPARTURES: dict[str, str] = {
    "add a required column with a default (v2)":
        "pyiceberg 0.12 writes an `initial-default` into a v2 table and fills it in on read; the spec "
        "makes default values a v3 feature, and the profile reads them only on v3 (pyiceberg cannot "
        "write v3: 'Writing V3 is not yet supported')",
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_schema_evolution_agrees_with_pyiceberg(catalog: SqlCatalog, scenario: str) -> None:
    table, written = write(catalog, NESTED, NESTED_ROWS)
    refused = evolve(table, SCENARIOS[scenario])
    engine = scan(table, expected_rows(NESTED_ROWS, written, table.schema()), refused)
    verdict = ours(table)
    departure = SCENARIO_DEPARTURES.get(scenario)
    for how, problems in zip(("metadata W", "footer W"), verdict.errors_at(None), strict=True):
        if departure is not None:
            assert engine.ok and problems, (
                f"{how}: departure changed: pyiceberg={engine}, ours={problems}; {departure}")
        else:
            assert not (diff := disagreement(engine, problems, how)), f"{diff}\nR={table.schema()}"


LS_ID = 7  # the id the catalog gives NESTED's `ls` (it numbers top-level fields first)
PROMOTABLE = {"int": ["long"], "float": ["double"], "decimal(9,2)": ["decimal(12,2)", "decimal(38,2)"],
              "decimal(12,2)": ["decimal(38,2)"]}


def _type_name(t: IcebergType) -> str | None:
    return next((n for n, u in TYPES.items() if u == t), None)


def _random_step(data: st.DataObject, schema: IcebergSchema, fresh: Iterator[str]) -> tuple[str, Step]:
    """One schema change pyiceberg may accept or refuse, drawn against `schema`; never one it would
    fail to make for another reason (a name taken, a map key, a list element renamed)."""
    fields = [(p, f, of_struct) for f, of_struct in _all_fields(schema)
              if (p := schema.find_column_name(f.field_id)) is not None and p != "id"]
    named = [(p, f) for p, f, of_struct in fields if of_struct]  # struct fields: renamed, dropped
    values = [(p, f) for p, f, _ in fields if not p.endswith(".key")]
    primitives = [(p, f) for p, f in values if f.field_type.is_primitive and _type_name(f.field_type)]
    structs = [tuple(p.split(".")) for p, f in values if isinstance(f.field_type, StructType)]
    kind = data.draw(st.sampled_from(["rename", "drop", "add", "add-required", "promote", "retype",
                                      "require", "optional", "move"]))
    if kind == "rename":
        path, _ = data.draw(st.sampled_from(named))
        name = next(fresh)
        return f"rename {path} to {name}", step(lambda u: u.rename_column(path, name))
    if kind == "drop" and (top := [p for p, _ in named if "." not in p]):
        path = data.draw(st.sampled_from(top))
        return f"drop {path}", step(lambda u: u.delete_column(path))
    if kind in ("add", "add-required"):
        name, t = next(fresh), TYPES[data.draw(st.sampled_from(list(TYPES)))]
        where = (*data.draw(st.sampled_from([(), *structs])), name)
        return (f"add {'required ' if kind == 'add-required' else ''}{'.'.join(where)} {t}",
                step(lambda u: u.add_column(where, t, required=kind == "add-required")))
    if kind in ("promote", "retype") and primitives:
        path, f = data.draw(st.sampled_from(primitives))
        source = _type_name(f.field_type)
        assert source is not None
        targets = (PROMOTABLE.get(source, []) if kind == "promote" else
                   [t for t in TYPES if t != source and (source, t) not in DEPARTURES
                    and not (source.startswith("decimal") and t.startswith("decimal"))])
        if targets:
            target = TYPES[data.draw(st.sampled_from(targets))]
            return f"{path} {source} -> {target}", step(lambda u: u.update_column(path, target))
    if kind in ("require", "optional"):
        # (not `ls`: its rows hold no null list, see NESTED_ROWS, so no read could show the break)
        path, f = data.draw(st.sampled_from([(p, f) for p, f in values if f.field_id != LS_ID]))
        if kind == "require" and not f.required:
            return f"require {path}", step(lambda u: u.update_column(path, required=True))
        if kind == "optional" and f.required:
            return f"optional {path}", step(lambda u: u.make_column_optional(path))
    top_name = data.draw(st.sampled_from([n.name for n in schema.fields]))
    return f"move {top_name} first", step(lambda u: u.move_first(top_name))


def _all_fields(schema: IcebergSchema) -> list[tuple[NestedField, bool]]:
    """Every field below the schema, and whether it is a struct's (not a list element or map slot)."""
    out: list[tuple[NestedField, bool]] = []

    def walk(t: IcebergType) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                out.append((f, True))
                walk(f.field_type)
        elif isinstance(t, ListType):
            out.append((t.element_field, False))
            walk(t.element_type)
        elif isinstance(t, MapType):
            out.extend(((t.key_field, False), (t.value_field, False)))
            walk(t.value_type)

    walk(schema.as_struct())
    return out


@oracle_settings(20)
@given(data=st.data())
def test_random_evolutions_agree_with_pyiceberg(tmp_path_factory: pytest.TempPathFactory,
                                                data: st.DataObject) -> None:
    """One to four changes drawn against the live schema, each its own commit (a refused one
    forced). A refusal speaks of its own step (schema before -> schema asked for), not of the old
    file: each step is judged on its pair, and the old file on what the final read returns."""
    folder = tmp_path_factory.mktemp("random")
    with sql_catalog(folder) as cat:
        table, written = write(cat, NESTED, NESTED_ROWS)
        fresh = iter(f"n{i}" for i in range(100))
        steps = []
        for _ in range(data.draw(st.integers(1, 4))):
            what, change = _random_step(data, table.schema(), fresh)
            before = table.metadata.current_schema_id
            refused = evolve(table, [change])
            steps.append((what, before, table.metadata.current_schema_id, refused))
        engine = scan(table, expected_rows(NESTED_ROWS, written, table.schema()), "")
        event(f"pyiceberg: {str(engine)[:70]}")  # shown by --hypothesis-show-statistics
        verdict = ours(table)
        done = [what for what, *_ in steps]
        for what, before, after, refused in steps:
            old, new = verdict.schemas[before], verdict.schemas[after]
            problems = errors(can_read(old, new, "iceberg", verdict.options))
            diff = disagreement(Outcome(not refused, refused), problems, f"step {what!r}")
            assert not diff, f"{diff}\nchanges: {done}"
        for how, problems in zip(("metadata W", "footer W"), verdict.errors_at(None), strict=True):
            assert not (diff := disagreement(engine, problems, how)), f"{diff}\nchanges: {done}"


def test_a_map_key_cannot_be_promoted_even_by_force(catalog: SqlCatalog) -> None:
    """Iceberg's read check lets a map key be promoted like any value (docs/reference/compat-rules.md
    §3), but no table can get there: pyiceberg refuses to update a map key even with incompatible changes
    allowed, as Java's SchemaUpdate does ("Cannot update map keys")."""
    table, _ = write(catalog, NESTED, NESTED_ROWS)
    for allow in (False, True):
        with pytest.raises(ValueError, match="Cannot update map keys"), \
                table.update_schema(allow_incompatible_changes=allow) as update:
            update.update_column("mr.key", LongType())


def test_pyiceberg_writes_a_null_list_of_structs_as_empty(catalog: SqlCatalog) -> None:
    """A pyiceberg quirk the rows above step around (it is no schema change): a null list of structs
    is written as an empty list (the Parquet file itself holds []); a null list of ints stays null."""
    schema = IcebergSchema(optional("ls", ListType(2, StructType(optional("p", IntegerType(), 3)),
                                                   element_required=False), 1),
                           optional("xs", ListType(5, IntegerType(), element_required=False), 4))
    table = catalog.create_table("db.t", schema)
    table.append(pa.Table.from_pylist([{"ls": None, "xs": None}], schema=table.schema().as_arrow()))
    assert table.scan().to_arrow().to_pylist() == [{"ls": [], "xs": None}]
