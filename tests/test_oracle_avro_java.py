"""Differential test: the `avro` profile against Java's `SchemaCompatibility` (issue 13, item 3).

The oracle is `org.apache.avro.SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)`
from the avro-1.12.1 jar pyspark ships, reached through the shared test SparkSession's py4j gateway
(tests/java_avro.py; the result is read through the Java API, never its printed text). The pairs are
the ones tests/test_oracle_avro.py generates for avro-python (`related_pairs`, with and without
aliases, both directions), written as .avsc by `schema_to_avsc` and parsed by Java's own parser.

What is asserted, per direction "R reads W":

- the verdict: no error from `can_read(W, R, "avro")` exactly when Java says COMPATIBLE;
- where both say incompatible, the reasons: every error of ours has a Java incompatibility of the
  matching type (`CODE_TO_AVRO`) at its path, or a MISSING_UNION_BRANCH at that path or above it
  (Java keeps only "reader union lacking writer type" for anything wrong inside a union); and every
  Java incompatibility (its location turned into our path, `reader_path`) is matched the same way
  by one of our errors.

Known disagreements (ours vs Java), each kept out of the strict test by `java_gaps` and pinned by
one example in `test_known_gap` (xfail, strict: it starts passing when issue 13 fixes the profile):

1. `java-throws-name-and-alias`: a reader field whose name and one of its aliases both name writer
   fields. Java's `lookupWriterField` throws AvroRuntimeException ("matches multiple fields in
   writer"), so the check has no verdict (Confluent calls it incompatible); we read the direct match.
2. `java-throws-two-aliases`: a reader field not in the writer, two of whose aliases name writer
   fields. Java throws the same way; we (as avro-python) take the first alias in the reader's order.
3. `enum-default-field-missing` (reasons only; the verdicts agree): a required reader field that
   the writer lacks, with no field default, whose type is an enum with an enum default. Java then
   checks the enum against the writer's whole record and reports TYPE_MISMATCH at the field's type;
   we report READER_FIELD_MISSING.

And in .avsc input, outside what `schema_to_avsc` writes (model types have no names and no
decimal-on-fixed): renamed records, enums and fixed types (Java NAME_MISMATCH, ours compatible),
decimal on bytes vs on fixed, decimal on fixed(8) vs fixed(16), uuid on fixed(16) vs string (Java
TYPE_MISMATCH / FIXED_SIZE_MISMATCH, ours compatible); unions other than null plus one type, the
`null` type and recursive records, which we refuse to load (AvroSchemaError) and Java checks.

avro-python vs Java on the same pairs (recorded as hypothesis events, never failed on; the
examples are pinned in `test_avro_python_vs_java`): they differ exactly in classes 1 and 2, where
Java throws and Python gives a verdict (it reads the direct match / the first alias in the reader's
order: compatible, or incompatible for some other reason in the same pair). Everywhere else (3,000
pairs per strategy, both directions, tried once while writing this) Python's verdict and its set of
incompatibility types equal Java's, class 3 included (Python also reports type_mismatch there).
avro-python's verdict equals ours on every generated pair (tests/test_oracle_avro.py).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Collection
from typing import Any

import avro.errors
import avro.schema
import pytest
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType
from hypothesis import assume, event, given

from schemaguard.base import Problem, errors
from schemaguard.formats.avro import AvroSchemaError, schema_from_avsc, schema_to_avsc
from schemaguard.model import EnumType, Field, Schema
from schemaguard.rules.profiles import can_read
from tests.java_avro import (
    FIXED_SIZE_MISMATCH,
    MISSING_ENUM_SYMBOLS,
    MISSING_UNION_BRANCH,
    READER_FIELD_MISSING_DEFAULT_VALUE,
    THREW,
    TYPE_MISMATCH,
    JavaVerdict,
    java_check,
    reader_path,
)
from tests.oracles import oracle_settings
from tests.test_oracle_avro import _struct_pairs, expressible, related_pairs

JAVA = oracle_settings(250)

# Our problem codes and the SchemaIncompatibilityType Java reports for the same thing. A required
# reader field where the data may hold null is Java's null branch against a non-union reader.
CODE_TO_AVRO = {
    "READER_FIELD_MISSING": READER_FIELD_MISSING_DEFAULT_VALUE,
    "TYPE_MISMATCH": TYPE_MISMATCH,
    "NULLABILITY_TIGHTENED": TYPE_MISMATCH,
    "MISSING_ENUM_SYMBOLS": MISSING_ENUM_SYMBOLS,
    "FIXED_SIZE_MISMATCH": FIXED_SIZE_MISMATCH,
}

NAME_AND_ALIAS = "java-throws-name-and-alias"
TWO_ALIASES = "java-throws-two-aliases"
ENUM_DEFAULT_FIELD_MISSING = "enum-default-field-missing"

# ---------------------------------------------------------------------------------------------
# The known gaps, recognised on model schemas


def _walk(w: tuple[Field, ...], r: tuple[Field, ...], path: str,
          visit: Callable[[Field, list[Field], str], None]) -> None:
    """Reader fields with every writer field Java's `lookupWriterField` collects for them (the one
    named like it, then one per alias); nested structs are followed where Java pairs uniquely."""
    by_name = {f.name: f for f in w}
    for rf in r:
        here = f"{path}.{rf.name}" if path else rf.name
        hits = [by_name[n] for n in (rf.name, *rf.aliases) if n in by_name]
        visit(rf, hits, here)
        if len(hits) == 1:
            for suffix, ws, rs in _struct_pairs(hits[0].type, rf.type):
                _walk(ws, rs, here + suffix, visit)


def java_gaps(w: Schema, r: Schema) -> dict[str, set[str]]:
    """The known-gap classes this direction hits, each with the reader paths where it does."""
    found: dict[str, set[str]] = {}

    def visit(rf: Field, hits: list[Field], here: str) -> None:
        if len(hits) > 1:
            found.setdefault(NAME_AND_ALIAS if hits[0].name == rf.name else TWO_ALIASES, set()).add(here)
        if (not hits and not rf.nullable and rf.default_json is None and isinstance(rf.type, EnumType)
                and rf.type.default is not None):
            found.setdefault(ENUM_DEFAULT_FIELD_MISSING, set()).add(here)

    _walk(w.fields, r.fields, "", visit)
    return found


# ---------------------------------------------------------------------------------------------
# Comparing the verdicts and the reasons


def _under(ancestor: str, path: str) -> bool:
    return path == ancestor or path.startswith((ancestor + ".", ancestor + "[", ancestor + "{"))


def reasons_disagree(problems: list[Problem], java: JavaVerdict, reader_avsc: Any,
                     excused: Collection[str] = ()) -> list[str]:
    """Where both say incompatible: our errors and Java's incompatibilities that the other side does
    not match (see the module docstring). Problems at `excused` paths are not compared."""
    theirs = [(t, reader_path(reader_avsc, loc)) for t, loc in java.incompatibilities]
    mine = [(CODE_TO_AVRO[p.code], p.path) for p in problems if p.code in CODE_TO_AVRO]
    for p in problems:
        if p.code not in CODE_TO_AVRO:
            event(f"code without an Avro type: {p.code}")
    unmatched = [f"ours {t} at {p!r}: Java has nothing matching" for t, p in mine
                 if p not in excused and not any(
                     (jt == t and jp == p) or (jt == MISSING_UNION_BRANCH and _under(jp, p))
                     for jt, jp in theirs)]
    unmatched += [f"Java {t} at {p!r}: we have nothing matching" for t, p in theirs
                  if p not in excused and not any(
                      (t == mt and p == mp) or (t == MISSING_UNION_BRANCH and _under(p, mp))
                      for mt, mp in mine)]
    return unmatched


def compare(java: JavaVerdict, w: Schema, r: Schema, w_avsc: Any, r_avsc: Any,
            excused: Collection[str] = ()) -> str | None:
    """None when our verdict and reasons on "R reads W" match Java's; else what differs."""
    problems = errors(can_read(w, r, "avro"))
    mine = not problems
    event(f"java {'compatible' if java.compatible else 'incompatible'}")
    if mine != java.compatible:
        why = [f"ours={'OK' if mine else 'NO'} java={'OK' if java.compatible else 'NO'}"]
    elif mine or THREW in java.types:
        return None
    else:
        why = reasons_disagree(problems, java, r_avsc, excused)
        if not why:
            return None
    return "\n".join([*why, f"java: {list(java.incompatibilities)} {java.error or ''}",
                      f"ours: {[(p.path, p.code) for p in problems]}",
                      f"W.avsc={json.dumps(w_avsc)}", f"R.avsc={json.dumps(r_avsc)}"])


def python_vs_java(w_avsc: Any, r_avsc: Any, java: JavaVerdict) -> str | None:
    """How avro-python's checker differs from Java on this pair (for the record, never failed on)."""
    with warnings.catch_warnings():  # local-timestamp-* is unknown to avro-python: ignored
        warnings.simplefilter("ignore", avro.errors.IgnoredLogicalType)
        reader, writer = (avro.schema.parse(json.dumps(s)) for s in (r_avsc, w_avsc))
    result = ReaderWriterCompatibilityChecker().get_compatibility(  # type: ignore[no-untyped-call]
        reader, writer)
    ok = result.compatibility is SchemaCompatibilityType.compatible
    kinds = {k.name.upper() for k in result.incompatibilities}
    if java.error is not None:
        return f"Java threw {java.error}, Python {'OK' if ok else sorted(kinds)}"
    if ok != java.compatible:
        return f"Python {'OK' if ok else 'NO'}, Java {'OK' if java.compatible else 'NO'}"
    if kinds != set(java.types):
        return f"types: Python {sorted(kinds)}, Java {sorted(java.types)}"
    return None


def check_both_directions(spark: Any, pair: tuple[Schema, Schema]) -> None:
    old, new = pair
    assume(expressible(old, new))
    for direction, w, r in (("R=new reads W=old", old, new), ("R=old reads W=new", new, old)):
        gaps = java_gaps(w, r)
        for gap in gaps:
            event(f"known gap: {gap}")
        w_avsc, r_avsc = schema_to_avsc(w), schema_to_avsc(r)
        java = java_check(spark, w_avsc, r_avsc)
        if NAME_AND_ALIAS in gaps or TWO_ALIASES in gaps:  # Java has no verdict: test_known_gap
            assert java.error is not None, f"{direction}: Java did not throw: {java}"
            event(f"avro-python vs Java: {python_vs_java(w_avsc, r_avsc, java) or 'same'}")
            continue
        assert java.error is None, f"{direction}: Java threw {java.error} outside the known gaps"
        excused = gaps.get(ENUM_DEFAULT_FIELD_MISSING, set())
        found = compare(java, w, r, w_avsc, r_avsc, excused)
        assert found is None, f"{direction}:\n{found}"
        difference = python_vs_java(w_avsc, r_avsc, java)
        event(f"avro-python vs Java: {difference or 'same'}")


@pytest.mark.slow
@JAVA
@given(pair=related_pairs())
def test_avro_profile_agrees_with_java(spark: Any, pair: tuple[Schema, Schema]) -> None:
    check_both_directions(spark, pair)


@pytest.mark.slow
@JAVA
@given(pair=related_pairs(aliases=False))
def test_avro_profile_agrees_with_java_without_aliases(spark: Any, pair: tuple[Schema, Schema]) -> None:
    check_both_directions(spark, pair)


# ---------------------------------------------------------------------------------------------
# One example per known gap, as .avsc (the generated pairs' classes first, then .avsc input)


def _rec(*fields: dict[str, Any], name: str = "schema") -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields)}


def _f(name: str, t: Any, **attrs: Any) -> dict[str, Any]:
    return {"name": name, "type": t, **attrs}


_DEC = {"logicalType": "decimal", "precision": 9, "scale": 2}

GAPS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {  # name: (writer, reader)
    NAME_AND_ALIAS: (_rec(_f("a", "string"), _f("b", "int")),
                     _rec(_f("b", "int", aliases=["a"]))),
    TWO_ALIASES: (_rec(_f("a", "int"), _f("c", "string")),
                  _rec(_f("b", "string", aliases=["c", "a"]))),
    ENUM_DEFAULT_FIELD_MISSING: (
        _rec(_f("a", "int")),
        _rec(_f("a", "int"), _f("e", {"type": "enum", "name": "E", "symbols": ["A"], "default": "A"}))),
    "record-renamed": (_rec(_f("a", _rec(_f("x", "int"), name="A"))),
                       _rec(_f("a", _rec(_f("x", "int"), name="B")))),
    "top-record-renamed": (_rec(_f("x", "int"), name="A"), _rec(_f("x", "int"), name="B")),
    "enum-renamed": (_rec(_f("a", {"type": "enum", "name": "E", "symbols": ["X"]})),
                     _rec(_f("a", {"type": "enum", "name": "F", "symbols": ["X"]}))),
    "fixed-renamed": (_rec(_f("a", {"type": "fixed", "name": "E", "size": 4})),
                      _rec(_f("a", {"type": "fixed", "name": "F", "size": 4}))),
    "decimal-bytes-read-as-fixed": (_rec(_f("a", {"type": "bytes", **_DEC})),
                                    _rec(_f("a", {"type": "fixed", "name": "D", "size": 8, **_DEC}))),
    "decimal-fixed-read-as-bytes": (_rec(_f("a", {"type": "fixed", "name": "D", "size": 8, **_DEC})),
                                    _rec(_f("a", {"type": "bytes", **_DEC}))),
    "decimal-fixed8-read-as-fixed16": (_rec(_f("a", {"type": "fixed", "name": "D", "size": 8, **_DEC})),
                                       _rec(_f("a", {"type": "fixed", "name": "D", "size": 16, **_DEC}))),
    "uuid-fixed-read-as-string": (
        _rec(_f("a", {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"})),
        _rec(_f("a", {"type": "string", "logicalType": "uuid"}))),
    "union-of-three": (_rec(_f("a", ["null", "string"])), _rec(_f("a", ["null", "string", "int"]))),
    "null-type": (_rec(_f("a", "null")), _rec(_f("a", "null"))),
    "recursive-record": (_rec(_f("next", ["null", "schema"])), _rec(_f("next", ["null", "schema"]))),
}

# What Java says on each: (compatible, incompatibility types)
JAVA_SAYS: dict[str, tuple[bool, frozenset[str]]] = {
    NAME_AND_ALIAS: (False, frozenset({THREW})),
    TWO_ALIASES: (False, frozenset({THREW})),
    ENUM_DEFAULT_FIELD_MISSING: (False, frozenset({TYPE_MISMATCH})),
    "record-renamed": (False, frozenset({"NAME_MISMATCH"})),
    "top-record-renamed": (False, frozenset({"NAME_MISMATCH"})),
    "enum-renamed": (False, frozenset({"NAME_MISMATCH"})),
    "fixed-renamed": (False, frozenset({"NAME_MISMATCH"})),
    "decimal-bytes-read-as-fixed": (False, frozenset({TYPE_MISMATCH})),
    "decimal-fixed-read-as-bytes": (False, frozenset({TYPE_MISMATCH})),
    "decimal-fixed8-read-as-fixed16": (False, frozenset({FIXED_SIZE_MISMATCH})),
    "uuid-fixed-read-as-string": (False, frozenset({TYPE_MISMATCH})),
    "union-of-three": (True, frozenset()),
    "null-type": (True, frozenset()),
    "recursive-record": (True, frozenset()),
}


def _ours_on_avsc(w_avsc: Any, r_avsc: Any) -> tuple[Schema, Schema, list[Problem]]:
    w, r = schema_from_avsc(w_avsc), schema_from_avsc(r_avsc)
    return w, r, errors(can_read(w, r, "avro"))


def test_every_gap_has_java_verdict_pinned() -> None:
    assert set(GAPS) == set(JAVA_SAYS)


@pytest.mark.parametrize("gap", list(GAPS))
def test_java_on_known_gap(spark: Any, gap: str) -> None:
    """Java's own verdict on each gap example, as the report documents it."""
    w_avsc, r_avsc = GAPS[gap]
    java = java_check(spark, w_avsc, r_avsc)
    assert (java.compatible, java.types) == JAVA_SAYS[gap], java


UNLOADABLE = {"union-of-three", "null-type", "recursive-record"}  # schema_from_avsc refuses them


@pytest.mark.parametrize("gap", [pytest.param(g, marks=pytest.mark.xfail(
    strict=True, raises=AvroSchemaError if g in UNLOADABLE else AssertionError,
    reason=f"issue 13: the avro profile differs from Java's SchemaCompatibility ({g})"))
    for g in GAPS])
def test_known_gap(spark: Any, gap: str) -> None:
    """Ours equals Java (verdict and reasons) on each gap example: fails today, by design."""
    w_avsc, r_avsc = GAPS[gap]
    w, r = schema_from_avsc(w_avsc), schema_from_avsc(r_avsc)
    java = java_check(spark, w_avsc, r_avsc)
    problems = errors(can_read(w, r, "avro"))
    assert (not problems) == java.compatible, (java, problems)
    if not java.compatible:
        assert THREW not in java.types, "Java threw: a verdict of ours cannot match it"
        assert not reasons_disagree(problems, java, r_avsc), (java, problems)


def test_gap_detector_recognises_the_generated_classes() -> None:
    for gap in (NAME_AND_ALIAS, TWO_ALIASES, ENUM_DEFAULT_FIELD_MISSING):
        w, r = (schema_from_avsc(s) for s in GAPS[gap])
        assert gap in java_gaps(w, r)


@pytest.mark.parametrize(("gap", "python_says"), [
    (NAME_AND_ALIAS, "Java threw org.apache.avro.AvroRuntimeException, Python OK"),
    (TWO_ALIASES, "Java threw org.apache.avro.AvroRuntimeException, Python OK"),
    (ENUM_DEFAULT_FIELD_MISSING, None),
])
def test_avro_python_vs_java(spark: Any, gap: str, python_says: str | None) -> None:
    """Where avro-python differs from Java on the generated classes (documentation, not a gate)."""
    w_avsc, r_avsc = GAPS[gap]
    assert python_vs_java(w_avsc, r_avsc, java_check(spark, w_avsc, r_avsc)) == python_says
