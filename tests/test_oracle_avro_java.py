"""Differential test: Avro's reader/writer check against Java's `SchemaCompatibility` (issue 13, item 3).

The oracle is `org.apache.avro.SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)`
from the avro-1.12.1 jar pyspark ships, reached through the shared test SparkSession's py4j gateway
(tests/java_avro.py; read through the Java API, never its printed text). The schemas are .avsc
documents covering all of Avro (tests/avro_strategies.py: every type, names, namespaces, aliases,
defaults, unions of any shape, recursion, logical types, any top level), each parsed by Java's own
parser first: a document it refuses fails the test as a generator bug.

What is asserted, for both directions of every pair ("R reads W"):

(a) `rules.avro.compatibility(parse_avro(W), parse_avro(R))` is Java's incompatibility list exactly:
    the same (type, location, message) triples in the same order, memoised repeats included. Where
    Java throws (`lookupWriterField`: a reader field whose name and aliases name more than one
    writer field), ours holds an AMBIGUOUS_FIELD entry, and only then.
(b) the `avro` profile on `schema_from_avsc` schemas: loud errors (`severity == "error"`, not quiet)
    exactly when Java says INCOMPATIBLE or throws; their (code, location) are Java's (type,
    location) list, or AMBIGUOUS_FIELD where Java throws. Quiet breaks (values that change meaning,
    which Java's check does not look at) are not compared.
(c) `rules.modes.check` over version chains of 3 to 5 schemas, every mode: the failing
    (writer, reader) version pairs are the pairs the schema registry checks (`REGISTRY`, written
    here from docs/reference/compat-rules.md §2, not taken from modes.py) on which Java says INCOMPATIBLE or
    throws. With `allow_quiet` the sets are equal; by default ours may add pairs whose only errors
    are quiet.
(d) named cases (`CASES`), each with Java's own list pinned (`JAVA_SAYS`) and ours equal to it.
(e) avro-python 1.12.2 as a second opinion: where it differs from Java is recorded as a hypothesis
    `event` (`--hypothesis-show-statistics`), never failed on. Seen on the generated pairs:
    - Java throws (ambiguous field), Python gives a verdict (the direct match, else the first alias
      in the reader's order), also for a field that lists its own name as an alias, where Java
      throws even when a schema reads itself;
    - Python refuses documents Java reads: references written `{"type": "Name"}`; a type defined
      with `"namespace": ""` inside another namespace that refers to itself by its short name
      (Python looks the name up in the outer namespace);
    - Python does not qualify a named type's short aliases with the reader's namespace (the spec
      and Java do): reader `n.C` with alias `D` reads writer `n.D` for Java, not for Python; reader
      `n.A` with alias `Rec` does not read writer `Rec` for Java (the alias is `n.Rec`), does for
      Python. The same shows as different incompatibility types inside unions.
    `test_avro_python_vs_java` pins one example of each.

Also (slow-marked), (b) on model schemas as tests/test_oracle_avro.py draws them for avro-python
(no Avro graph kept: the profile writes them with `schema_to_avsc`), their loud errors exactly Java's.

Sizes (derandomized: the same examples every run): `PAIRS` related and `UNRELATED` unrelated pairs
for (a), `PROFILE_PAIRS` related pairs for (b), `MODEL_PAIRS` model pairs, each in both directions,
`CHAINS` chains for (c) (every pair a mode checks), and `SCHEMAS` schemas parsed by Java whose
features must cover `ALL_FEATURES`: about 1,300 Java checks and 1,000 parses in `make test`.
`SCHEMAGUARD_ORACLE_SCALE` multiplies every count but the parses (`make oracle` runs 3: about 3,900
checks; 30 is a search of ~40,000).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import avro.errors
import avro.schema
import pytest
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType
from hypothesis import event, given

from schemaguard.base import Options, Problem
from schemaguard.formats.avro import parse_avro, schema_from_avsc, schema_to_avsc
from schemaguard.model import Schema
from schemaguard.rules import modes
from schemaguard.rules.avro import compatibility
from schemaguard.rules.profiles import can_read
from tests.avro_strategies import ALL_FEATURES, chains, features, related_pairs, schemas, unrelated_pairs
from tests.java_avro import (
    FIXED_SIZE_MISMATCH,
    MISSING_ENUM_SYMBOLS,
    MISSING_UNION_BRANCH,
    NAME_MISMATCH,
    READER_FIELD_MISSING_DEFAULT_VALUE,
    THREW,
    TYPE_MISMATCH,
    JavaVerdict,
    java_check,
    java_parse,
)
from tests.oracles import oracle_settings
from tests.test_oracle_avro import expressible
from tests.test_oracle_avro import related_pairs as model_pairs

AMBIGUOUS = "AMBIGUOUS_FIELD"
SCHEMAS, PAIRS, UNRELATED, PROFILE_PAIRS, CHAINS, MODEL_PAIRS = 1000, 250, 60, 130, 50, 50


# ---------------------------------------------------------------------------------------------
# Ours against Java


Triple = tuple[str, str, str]


def ours(w_avsc: Any, r_avsc: Any) -> list[Triple]:
    return [(i.type, i.location, i.message) for i in compatibility(parse_avro(w_avsc), parse_avro(r_avsc))]


def _show(java: JavaVerdict, mine: Any, w_avsc: Any, r_avsc: Any) -> str:
    said = f"threw {java.error}" if java.error else java.triples
    return f"\njava: {said}\nours: {mine}\nW={json.dumps(w_avsc)}\nR={json.dumps(r_avsc)}"


def compatibility_differs(java: JavaVerdict, mine: list[Triple], w_avsc: Any, r_avsc: Any) -> str | None:
    """None when our list is Java's (see (a) in the module docstring); else what differs."""
    ambiguous = any(t == AMBIGUOUS for t, _, _ in mine)
    if java.error is not None or ambiguous:
        if java.error is not None and ambiguous:
            return None
        why = "Java threw, no AMBIGUOUS_FIELD" if java.error else "AMBIGUOUS_FIELD, Java did not throw"
    elif mine == java.triples:
        return None
    elif [x[:2] for x in mine] == [x[:2] for x in java.triples]:
        why = "messages differ"
    elif Counter(x[:2] for x in mine) == Counter(x[:2] for x in java.triples):
        why = "order differs"
    else:
        why = "(type, location) lists differ"
    return why + _show(java, mine, w_avsc, r_avsc)


def loud(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error" and not p.quiet]


def profile_differs(java: JavaVerdict, w_avsc: Any, r_avsc: Any) -> str | None:
    """None when the avro profile's loud errors on .avsc input agree with Java (see (b))."""
    problems = can_read(schema_from_avsc(w_avsc), schema_from_avsc(r_avsc), "avro")
    found = [(p.code, p.location) for p in loud(problems)]
    if bool(found) == java.compatible:
        why = f"verdicts differ: ours {'NO' if found else 'OK'}, Java {'OK' if java.compatible else 'NO'}"
    elif java.error is not None:
        if any(code == AMBIGUOUS for code, _ in found):
            return None
        why = "Java threw, no AMBIGUOUS_FIELD error"
    elif found == list(java.incompatibilities):
        return None
    else:
        why = "codes or locations differ"
    return why + _show(java, [(p.code, p.location, p.message) for p in loud(problems)], w_avsc, r_avsc)


# ---------------------------------------------------------------------------------------------
# avro-python, the second opinion (recorded, never failed on)


def _python_parse(avsc: Any) -> avro.schema.Schema:
    with warnings.catch_warnings():  # logical types avro-python does not know are ignored, as specified
        warnings.simplefilter("ignore", avro.errors.IgnoredLogicalType)
        return avro.schema.parse(json.dumps(avsc))


def python_vs_java(w_avsc: Any, r_avsc: Any, java: JavaVerdict) -> str | None:
    """How avro-python's checker differs from Java on this pair, in a few words (None: the same
    verdict and the same set of incompatibility types)."""
    try:
        reader, writer = _python_parse(r_avsc), _python_parse(w_avsc)
    except Exception as e:  # whatever Python's parser raises is the record
        return f"Python refuses a document Java reads ({type(e).__name__})"
    try:
        result = ReaderWriterCompatibilityChecker().get_compatibility(  # type: ignore[no-untyped-call]
            reader, writer)
    except Exception as e:
        return f"Python's checker raised {type(e).__name__}"
    ok = result.compatibility is SchemaCompatibilityType.compatible
    kinds = {k.name.upper() for k in result.incompatibilities}
    if java.error is not None:
        return f"Java threw {java.error.rpartition('.')[2]}, Python {'OK' if ok else 'NO'}"
    if ok != java.compatible:
        return f"Python {'OK' if ok else 'NO'}, Java {'OK' if java.compatible else 'NO'}"
    if kinds != set(java.types):
        return "types differ"
    return None


def _note_java(java: JavaVerdict) -> None:
    event("java " + ("threw" if java.error else "compatible" if java.compatible else "incompatible"))
    for t in sorted(java.types - {THREW}):
        event(f"java reports {t}")
    if len(set(java.incompatibilities)) < len(java.incompatibilities):
        event("java repeats a (type, location): a memoised result reused")


def check_pair(spark: Any, pair: tuple[Any, Any], compare: Callable[[JavaVerdict, Any, Any], str | None],
               second_opinion: bool = False) -> None:
    old, new = pair
    for direction, w, r in (("R=new reads W=old", old, new), ("R=old reads W=new", new, old)):
        java = java_check(spark, w, r)
        _note_java(java)
        found = compare(java, w, r)
        assert found is None, f"{direction}: {found}"
        if second_opinion:
            event(f"avro-python vs Java: {python_vs_java(w, r, java) or 'same'}")


def _compatibility(java: JavaVerdict, w: Any, r: Any) -> str | None:
    return compatibility_differs(java, ours(w, r), w, r)


# ---------------------------------------------------------------------------------------------
# The generator: only what Java parses, and all of Avro


def test_generated_schemas_parse_in_java_and_cover_avro(spark: Any) -> None:
    seen: Counter[str] = Counter()

    @oracle_settings(SCHEMAS, least=SCHEMAS)  # fewer might not cover all of Avro
    @given(doc=schemas())
    def parse_all(doc: Any) -> None:
        java_parse(spark, doc)  # JavaRefused: a generator bug
        parse_avro(doc)
        schema_from_avsc(doc)
        seen.update(features(doc))

    parse_all()
    assert not ALL_FEATURES - set(seen), f"never generated: {sorted(ALL_FEATURES - set(seen))}"


# ---------------------------------------------------------------------------------------------
# (a) compatibility() == Java, exactly


@oracle_settings(PAIRS)
@given(pair=related_pairs())
def test_compatibility_matches_java(spark: Any, pair: tuple[Any, Any]) -> None:
    check_pair(spark, pair, _compatibility, second_opinion=True)


@oracle_settings(UNRELATED)
@given(pair=unrelated_pairs())
def test_compatibility_matches_java_on_unrelated_pairs(spark: Any, pair: tuple[Any, Any]) -> None:
    check_pair(spark, pair, _compatibility, second_opinion=True)


# ---------------------------------------------------------------------------------------------
# (b) the avro profile's verdict == Java's


@oracle_settings(PROFILE_PAIRS)
@given(pair=related_pairs())
def test_profile_matches_java(spark: Any, pair: tuple[Any, Any]) -> None:
    check_pair(spark, pair, profile_differs)


@pytest.mark.slow
@oracle_settings(MODEL_PAIRS)
@given(pair=model_pairs())
def test_profile_on_model_schemas_matches_java(spark: Any, pair: tuple[Schema, Schema]) -> None:
    """Model schemas (no Avro graph kept: the profile writes them with `schema_to_avsc`), as
    tests/test_oracle_avro.py draws them for avro-python."""
    old, new = pair
    if not expressible(old, new):
        event("not expressible in Avro")
        return
    for direction, w, r in (("R=new reads W=old", old, new), ("R=old reads W=new", new, old)):
        w_avsc, r_avsc = schema_to_avsc(w), schema_to_avsc(r)
        java = java_check(spark, w_avsc, r_avsc)
        _note_java(java)
        found = [(p.code, p.location) for p in loud(can_read(w, r, "avro"))]
        shown = f"{direction}:{_show(java, found, w_avsc, r_avsc)}"
        if java.error is not None:
            assert any(code == AMBIGUOUS for code, _ in found), shown
        else:
            assert found == list(java.incompatibilities), shown


# ---------------------------------------------------------------------------------------------
# (c) the registry's modes over version chains == Java on the same pairs

# docs/reference/compat-rules.md §2: registering version n after versions 1..n-1, the (writer, reader)
# pairs checked.
REGISTRY: dict[modes.Mode, Callable[[int], list[tuple[int, int]]]] = {
    modes.Mode.BACKWARD: lambda n: [(n - 1, n)],
    modes.Mode.FORWARD: lambda n: [(n, n - 1)],
    modes.Mode.FULL: lambda n: [(n - 1, n), (n, n - 1)],
    modes.Mode.BACKWARD_TRANSITIVE: lambda n: [(v, n) for v in range(1, n)],
    modes.Mode.FORWARD_TRANSITIVE: lambda n: [(n, v) for v in range(1, n)],
    modes.Mode.FULL_TRANSITIVE: lambda n: [p for v in range(1, n) for p in ((v, n), (n, v))],
    modes.Mode.NONE: lambda n: [],
}


def test_registry_table_names_every_mode() -> None:
    assert set(REGISTRY) == set(modes.Mode)


@oracle_settings(CHAINS)
@given(chain=chains())
def test_modes_match_java(spark: Any, chain: list[Any]) -> None:
    n = len(chain)
    versions = [schema_from_avsc(doc) for doc in chain]
    java: dict[tuple[int, int], JavaVerdict] = {}

    def fails(w: int, r: int) -> bool:  # Java INCOMPATIBLE, or threw: the registry refuses
        if (w, r) not in java:
            java[w, r] = java_check(spark, chain[w - 1], chain[r - 1])
        return not java[w, r].compatible

    for mode in modes.Mode:
        expected = {p for p in REGISTRY[mode](n) if fails(*p)}
        strict = modes.check(versions[:-1], versions[-1], mode, "avro", Options(allow_quiet=True))
        got = [(f.writer_version, f.reader_version) for f in strict]
        assert len(got) == len(set(got)), f"{mode}: a pair reported twice: {got}"
        shown = "\n".join(json.dumps(doc) for doc in chain)
        assert set(got) == expected, (f"{mode}: ours fails {sorted(got)}, Java {sorted(expected)}; Java on "
                                      f"each pair: { {p: v.triples or v.error for p, v in java.items()} }"
                                      f"\nversions:\n{shown}")
        for f in modes.check(versions[:-1], versions[-1], mode, "avro"):
            pair = (f.writer_version, f.reader_version)
            assert pair in expected or not loud(list(f.problems)), f"{mode}: {pair} fails loudly, Java OK"
        event(f"{mode}: {'some pair fails' if expected else 'passes'}")


# ---------------------------------------------------------------------------------------------
# (d) named cases, each with Java's list pinned


def _rec(*fields: dict[str, Any], name: str = "schema", **attrs: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, **attrs, "fields": list(fields)}


def _f(name: str, t: Any, **attrs: Any) -> dict[str, Any]:
    return {"name": name, "type": t, **attrs}


_DEC = {"logicalType": "decimal", "precision": 9, "scale": 2}
_E2 = {"type": "enum", "name": "E", "symbols": ["X", "Y"]}

CASES: dict[str, tuple[Any, Any]] = {  # name: (writer, reader)
    "name-and-alias-both-match": (_rec(_f("a", "string"), _f("b", "int")),
                                  _rec(_f("b", "int", aliases=["a"]))),
    "two-aliases-match": (_rec(_f("a", "int"), _f("c", "string")),
                          _rec(_f("b", "string", aliases=["c", "a"]))),
    "self-alias-reads-itself": (_rec(_f("a", "int", aliases=["a"])), _rec(_f("a", "int", aliases=["a"]))),
    "enum-default-field-missing": (
        _rec(_f("a", "int")),
        _rec(_f("a", "int"), _f("e", {"type": "enum", "name": "E", "symbols": ["A"], "default": "A"}))),
    "field-missing-no-default": (_rec(_f("a", "int")), _rec(_f("a", "int"), _f("b", "int"))),
    "record-renamed": (_rec(_f("a", _rec(_f("x", "int"), name="A"))),
                       _rec(_f("a", _rec(_f("x", "int"), name="B")))),
    "top-record-renamed": (_rec(_f("x", "int"), name="A"), _rec(_f("x", "int"), name="B")),
    "record-renamed-with-alias": (_rec(_f("x", "int"), name="a.A"),
                                  _rec(_f("x", "int"), name="B", namespace="b", aliases=["a.A"])),
    "short-alias-resolves-in-reader-namespace": (_rec(name="a.R"),
                                                 _rec(name="S", namespace="b", aliases=["R"])),
    "namespace-changed": (_rec(name="a.R"), _rec(name="b.R")),
    "short-alias-in-the-reader-namespace": ({"type": "fixed", "name": "D", "namespace": "n", "size": 16},
                                            {"type": "fixed", "name": "C", "namespace": "n", "aliases": ["D"],
                                             "size": 16}),
    "short-alias-names-another-namespace": (_rec(name="Rec"),
                                            _rec(name="A", namespace="n", aliases=["Rec"])),
    "reference-as-object": (_rec(_f("a", _rec(name="A")), _f("b", {"type": "A"})),
                            _rec(_f("a", _rec(name="A")), _f("b", {"type": "A"}))),
    "empty-namespace-inside-a-namespace": (  # S refers to itself: the null namespace, not n
        _rec(_f("a", _rec(_f("b", ["null", "S"]), name="S", namespace="")), namespace="n"),
        _rec(_f("a", _rec(_f("b", ["null", "S"]), name="S", namespace="")), namespace="n")),
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
    "union-branch-dropped": (_rec(_f("a", ["null", "string", "int"])), _rec(_f("a", ["null", "string"]))),
    "null-type": (_rec(_f("a", "null")), _rec(_f("a", "null"))),
    "null-read-as-optional": ("null", ["int", "null"]),
    "empty-union-reads-nothing": ("int", []),
    "empty-union-read-as-anything": ([], "int"),
    "recursive-record": (_rec(_f("next", ["null", "schema"])), _rec(_f("next", ["null", "schema"]))),
    "recursive-record-changed": (_rec(_f("v", "int"), _f("next", ["null", "schema"])),
                                 _rec(_f("v", "string"), _f("next", ["null", "schema"]))),
    "named-type-used-twice-memoised": (_rec(_f("a", _E2), _f("b", "E")),
                                       _rec(_f("a", {**_E2, "symbols": ["X"]}), _f("b", "E"))),
    "top-level-int-read-as-long": ("int", "long"),
    "top-level-array-narrowed": ({"type": "array", "items": "long"}, {"type": "array", "items": "int"}),
    "top-level-enum-symbols-dropped": ({"type": "enum", "name": "E", "symbols": ["A", "B", "C"]},
                                       {"type": "enum", "name": "E", "symbols": ["B"]}),
    "top-level-map-of-optional": ({"type": "map", "values": ["null", "int"]},
                                  {"type": "map", "values": "int"}),
}

# Java's verdict on each: its (type, location) list, or THREW.
JAVA_SAYS: dict[str, list[tuple[str, str]] | str] = {
    "name-and-alias-both-match": THREW,
    "two-aliases-match": THREW,
    "self-alias-reads-itself": THREW,
    "enum-default-field-missing": [(TYPE_MISMATCH, "/fields/1/type")],
    "field-missing-no-default": [(READER_FIELD_MISSING_DEFAULT_VALUE, "/fields/1")],
    "record-renamed": [(NAME_MISMATCH, "/fields/0/type/name")],
    "top-record-renamed": [(NAME_MISMATCH, "/name")],
    "record-renamed-with-alias": [],
    "short-alias-resolves-in-reader-namespace": [(NAME_MISMATCH, "/name")],
    "namespace-changed": [],
    "short-alias-in-the-reader-namespace": [],
    "short-alias-names-another-namespace": [(NAME_MISMATCH, "/name")],
    "reference-as-object": [],
    "empty-namespace-inside-a-namespace": [],
    "enum-renamed": [(NAME_MISMATCH, "/fields/0/type/name")],
    "fixed-renamed": [(NAME_MISMATCH, "/fields/0/type/name")],
    "decimal-bytes-read-as-fixed": [(TYPE_MISMATCH, "/fields/0/type")],
    "decimal-fixed-read-as-bytes": [(TYPE_MISMATCH, "/fields/0/type")],
    "decimal-fixed8-read-as-fixed16": [(FIXED_SIZE_MISMATCH, "/fields/0/type/size")],
    "uuid-fixed-read-as-string": [(TYPE_MISMATCH, "/fields/0/type")],
    "union-of-three": [],
    "union-branch-dropped": [(MISSING_UNION_BRANCH, "/fields/0/type/2")],
    "null-type": [],
    "null-read-as-optional": [],
    "empty-union-reads-nothing": [(MISSING_UNION_BRANCH, "/")],
    "empty-union-read-as-anything": [],
    "recursive-record": [],
    "recursive-record-changed": [(TYPE_MISMATCH, "/fields/0/type")],
    "named-type-used-twice-memoised": [(MISSING_ENUM_SYMBOLS, "/fields/0/type/symbols")] * 2,
    "top-level-int-read-as-long": [],
    "top-level-array-narrowed": [(TYPE_MISMATCH, "/items")],
    "top-level-enum-symbols-dropped": [(MISSING_ENUM_SYMBOLS, "/symbols")],
    "top-level-map-of-optional": [(TYPE_MISMATCH, "/values/0")],
}


def test_every_case_has_java_pinned() -> None:
    assert set(CASES) == set(JAVA_SAYS)


@pytest.mark.parametrize("case", list(CASES))
def test_java_on_case(spark: Any, case: str) -> None:
    """Java's own result on each case, as pinned (documents what Java does)."""
    java = java_check(spark, *CASES[case])
    assert (THREW if java.error else list(java.incompatibilities)) == JAVA_SAYS[case], java


@pytest.mark.parametrize("case", list(CASES))
def test_case(spark: Any, case: str) -> None:
    """Ours equals Java on each case: compatibility() exactly, and the profile."""
    w, r = CASES[case]
    java = java_check(spark, w, r)
    assert compatibility_differs(java, ours(w, r), w, r) is None
    assert profile_differs(java, w, r) is None


# ---------------------------------------------------------------------------------------------
# (e) avro-python vs Java, one example per kind of difference (documentation, not a gate)

_THREW = "Java threw AvroRuntimeException, Python OK"
_REFUSES = "Python refuses a document Java reads (SchemaParseException)"
PYTHON_SAYS: dict[str, str] = {  # case: how avro-python differs from Java on it
    "name-and-alias-both-match": _THREW,
    "two-aliases-match": _THREW,
    "self-alias-reads-itself": _THREW,
    "reference-as-object": _REFUSES,
    "empty-namespace-inside-a-namespace": _REFUSES,
    "short-alias-in-the-reader-namespace": "Python NO, Java OK",
    "short-alias-names-another-namespace": "Python OK, Java NO",
}


@pytest.mark.parametrize("case", list(PYTHON_SAYS))
def test_avro_python_vs_java(spark: Any, case: str) -> None:
    w, r = CASES[case]
    assert python_vs_java(w, r, java_check(spark, w, r)) == PYTHON_SAYS[case]
