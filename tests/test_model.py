"""Fingerprint semantics as `model.fingerprint` documents them.

- field order counts under identity `position` (the default), not under `name`, `name-ci`, `id`;
- metadata key order and alias order never count;
- enum symbol order always counts;
- a different type, nullability, default, id or name always changes it.
"""

from __future__ import annotations

import pickle
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemaguard.formats.notation import describe, dumps, fingerprint, loads
from schemaguard.model import (
    DataType,
    DecimalType,
    EnumType,
    Field,
    FloatType,
    Int96Type,
    IntType,
    Leaf,
    ListType,
    MapType,
    PartnerVisitor,
    Paths,
    PrimitiveType,
    Schema,
    SchemaTransform,
    SchemaVisitor,
    StringType,
    StructType,
    TimestampType,
    canonical_json,
    child_nodes,
    fields_along,
    fields_of,
    leaves,
    transform,
    visit,
    visit_with_partner,
    walk,
)
from schemaguard.names import Identity
from schemaguard.paths import ancestors, join_parts
from tests.strategies import PROPERTY, schemas

ALL: tuple[Identity, ...] = ("position", "name", "name-ci", "id")
BY_NAME_OR_ID: tuple[Identity, ...] = ("name", "name-ci", "id")


def f(name: str, t: DataType, **kw: Any) -> Field:
    return Field(name, t, **kw)


def struct(*fields: Field) -> StructType:
    return StructType(tuple(fields))


ORDERS = Schema((
    f("id", IntType(64), nullable=False, id=1),
    f("customer", StringType(), id=2),
    f("amount", DecimalType(12, 2), id=3, metadata=(("doc", "total"), ("unit", "EUR"))),
    f("ts", TimestampType("us", True), id=4, aliases=("event_ts", "created")),
    f("status", EnumType(("NEW", "PAID"), "NEW"), id=5, default_json='"NEW"'),
    f("items", ListType(struct(
        f("sku", StringType(), id=7),
        f("qty", IntType(32), id=8, default_json="1"),
        f("price", DecimalType(10, 2), id=9),
    ), True), id=6),
    f("attrs", MapType(StringType(), struct(
        f("k", IntType(16), id=11),
        f("v", FloatType(64), id=12),
    ), True), id=10),
))


def _reorder(schema: Schema, order: list[int]) -> Schema:
    return Schema(tuple(schema.fields[i] for i in order))


def _reverse_nested(t: DataType) -> DataType:
    """The same type with every struct's fields reversed, at every depth."""
    if isinstance(t, StructType):
        fields = [replace(x, type=_reverse_nested(x.type)) for x in reversed(t.fields)]
        return StructType(tuple(fields))
    if isinstance(t, ListType):
        return replace(t, element=_reverse_nested(t.element))
    if isinstance(t, MapType):
        return replace(t, key=_reverse_nested(t.key), value=_reverse_nested(t.value))
    return t


def _shuffle(t: DataType | Schema, rnd: random.Random) -> Any:
    """The same schema or type with the fields of every struct shuffled, at every depth."""
    if isinstance(t, Schema | StructType):
        fields = [replace(x, type=_shuffle(x.type, rnd)) for x in t.fields]
        rnd.shuffle(fields)
        return type(t)(tuple(fields))
    if isinstance(t, ListType):
        return replace(t, element=_shuffle(t.element, rnd))
    if isinstance(t, MapType):
        return replace(t, key=_shuffle(t.key, rnd), value=_shuffle(t.value, rnd))
    return t


def _replace_field(schema: Schema, which: str, **changes: Any) -> Schema:
    return Schema(tuple(replace(x, **changes) if x.name == which else x for x in schema.fields))


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("identity", ALL)
def test_fingerprint_is_16_hex_digits_and_stable(identity: Identity) -> None:
    fp = fingerprint(ORDERS, identity)
    assert re.fullmatch(r"[0-9a-f]{16}", fp)
    rebuilt = loads(dumps(ORDERS))  # an equal schema built independently
    assert rebuilt == ORDERS
    assert fingerprint(rebuilt, identity) == fp


def test_default_identity_is_position() -> None:
    assert fingerprint(ORDERS) == fingerprint(ORDERS, "position")


def test_top_level_field_order_counts_under_position_only() -> None:
    swapped = _reorder(ORDERS, [1, 0, *range(2, len(ORDERS.fields))])
    assert fingerprint(swapped, "position") != fingerprint(ORDERS, "position")
    for identity in BY_NAME_OR_ID:
        assert fingerprint(swapped, identity) == fingerprint(ORDERS, identity), identity


def test_nested_field_order_counts_under_position_only() -> None:
    """Structs inside a list element and inside a map value, reordered."""
    nested = Schema(tuple(replace(x, type=_reverse_nested(x.type)) for x in ORDERS.fields))
    assert nested != ORDERS
    assert nested.field_names() == ORDERS.field_names()  # only nested order differs
    assert fingerprint(nested, "position") != fingerprint(ORDERS, "position")
    for identity in BY_NAME_OR_ID:
        assert fingerprint(nested, identity) == fingerprint(ORDERS, identity), identity


def test_order_of_fields_without_ids_does_not_count_under_id_identity() -> None:
    a = Schema((f("x", IntType(32)), f("y", StringType()), f("z", IntType(64), id=3)))
    b = Schema((f("z", IntType(64), id=3), f("y", StringType()), f("x", IntType(32))))
    assert fingerprint(a, "id") == fingerprint(b, "id")
    assert fingerprint(a, "position") != fingerprint(b, "position")


def test_name_ci_ignores_order_of_differently_cased_names() -> None:
    a = Schema((f("Alpha", IntType(32)), f("beta", StringType())))
    b = Schema((f("beta", StringType()), f("Alpha", IntType(32))))
    assert fingerprint(a, "name-ci") == fingerprint(b, "name-ci")


@pytest.mark.parametrize("identity", ALL)
def test_metadata_key_order_never_counts(identity: Identity) -> None:
    a = _replace_field(ORDERS, "amount", metadata=(("doc", "total"), ("unit", "EUR")))
    b = _replace_field(ORDERS, "amount", metadata=(("unit", "EUR"), ("doc", "total")))
    assert fingerprint(a, identity) == fingerprint(b, identity)


@pytest.mark.parametrize("identity", ALL)
def test_alias_order_never_counts(identity: Identity) -> None:
    a = _replace_field(ORDERS, "ts", aliases=("event_ts", "created"))
    b = _replace_field(ORDERS, "ts", aliases=("created", "event_ts"))
    assert fingerprint(a, identity) == fingerprint(b, identity)


@pytest.mark.parametrize("identity", ALL)
def test_enum_symbol_order_always_counts(identity: Identity) -> None:
    a = _replace_field(ORDERS, "status", type=EnumType(("NEW", "PAID"), "NEW"))
    b = _replace_field(ORDERS, "status", type=EnumType(("PAID", "NEW"), "NEW"))
    assert fingerprint(a, identity) != fingerprint(b, identity)


def _variants() -> list[tuple[str, Schema]]:
    items = ORDERS.fields[5]
    assert isinstance(items.type, ListType) and isinstance(items.type.element, StructType)
    element = items.type.element
    return [
        ("type int64 -> int32", _replace_field(ORDERS, "id", type=IntType(32))),
        ("signedness", _replace_field(ORDERS, "id", type=IntType(64, signed=False))),
        ("decimal scale", _replace_field(ORDERS, "amount", type=DecimalType(12, 3))),
        ("decimal precision", _replace_field(ORDERS, "amount", type=DecimalType(10, 2))),
        ("timestamp unit", _replace_field(ORDERS, "ts", type=TimestampType("ms", True))),
        ("timestamp utc->local", _replace_field(ORDERS, "ts", type=TimestampType("us", False))),
        ("timestamp -> int96", _replace_field(ORDERS, "ts", type=Int96Type())),
        ("nullability", _replace_field(ORDERS, "customer", nullable=False)),
        ("element nullability", _replace_field(ORDERS, "items", type=replace(
            items.type, element_nullable=False))),
        ("map value nullability", _replace_field(ORDERS, "attrs", type=MapType(
            StringType(), ORDERS.fields[6].type.value, False))),  # type: ignore[union-attr]
        ("map key type", _replace_field(ORDERS, "attrs", type=MapType(
            IntType(32), ORDERS.fields[6].type.value, True))),  # type: ignore[union-attr]
        ("nested type", _replace_field(ORDERS, "items", type=ListType(StructType((
            element.fields[0], replace(element.fields[1], type=IntType(64)), element.fields[2],
        )), True))),
        ("default added", _replace_field(ORDERS, "customer", default_json='"anon"')),
        ("null default added", _replace_field(ORDERS, "customer", default_json="null")),
        ("default changed", _replace_field(ORDERS, "status", default_json='"PAID"')),
        ("default removed", _replace_field(ORDERS, "status", default_json=None)),
        ("enum default", _replace_field(ORDERS, "status", type=EnumType(("NEW", "PAID"), "PAID"))),
        ("enum symbol added", _replace_field(
            ORDERS, "status", type=EnumType(("NEW", "PAID", "GONE"), "NEW"))),
        ("field id", _replace_field(ORDERS, "customer", id=99)),
        ("field renamed", _replace_field(ORDERS, "customer", name="client")),
        ("metadata value", _replace_field(ORDERS, "amount", metadata=(("doc", "total"),
                                                                     ("unit", "USD")))),
        ("alias added", _replace_field(ORDERS, "ts", aliases=("event_ts", "created", "t"))),
        ("field dropped", Schema(ORDERS.fields[:-1])),
        ("field added", Schema((*ORDERS.fields, f("channel", StringType())))),
    ]


VARIANTS = _variants()


@pytest.mark.parametrize("identity", ALL)
@pytest.mark.parametrize(("label", "changed"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_every_real_change_changes_the_fingerprint(
    label: str, changed: Schema, identity: Identity
) -> None:
    assert changed != ORDERS, label
    assert fingerprint(changed, identity) != fingerprint(ORDERS, identity), label


def test_a_default_is_not_confused_with_its_absence() -> None:
    absent = Schema((f("a", IntType(32)),))
    null = Schema((f("a", IntType(32), default_json="null"),))
    zero = Schema((f("a", IntType(32), default_json="0"),))
    assert len({fingerprint(s) for s in (absent, null, zero)}) == 3


@pytest.mark.parametrize("identity", BY_NAME_OR_ID)
def test_a_default_value_shaped_like_a_schema_does_not_crash(identity: Identity) -> None:
    schema = Schema((f("cfg", StringType(), default_json=canonical_json({"fields": ["b", "a"]})),))
    assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(schema, identity))


@pytest.mark.parametrize("identity", BY_NAME_OR_ID)
def test_list_order_inside_a_default_value_counts(identity: Identity) -> None:
    def with_default(value: object) -> Schema:
        return Schema((f("cfg", StringType(), default_json=canonical_json(value)),))

    a = with_default({"struct": [{"name": "b"}, {"name": "a"}]})
    b = with_default({"struct": [{"name": "a"}, {"name": "b"}]})
    assert fingerprint(a, identity) != fingerprint(b, identity)


# ---------------------------------------------------------------------------------------------
# Properties over arbitrary schemas


@pytest.mark.slow
@PROPERTY
@given(schemas(), st.randoms(use_true_random=False))
def test_shuffling_fields_at_every_depth(schema: Schema, rnd: random.Random) -> None:
    shuffled = _shuffle(schema, rnd)
    assert fingerprint(shuffled, "name") == fingerprint(schema, "name")
    if shuffled == schema:
        assert fingerprint(shuffled, "position") == fingerprint(schema, "position")
    else:  # names are unique per struct, so a different schema means a different order
        assert fingerprint(shuffled, "position") != fingerprint(schema, "position")


@pytest.mark.slow
@PROPERTY
@given(schemas())
def test_fingerprint_survives_the_notation_round_trip(schema: Schema) -> None:
    again = loads(dumps(schema))
    for identity in ("position", "name"):
        assert fingerprint(again, identity) == fingerprint(schema, identity)


# ---------------------------------------------------------------------------------------------
# Paths


def test_paths_address_struct_list_and_map_nodes() -> None:
    paths = [p for p, _, _ in walk(ORDERS)]
    assert paths[:5] == ["id", "customer", "amount", "ts", "status"]
    assert "items[]" in paths and "items[].price" in paths
    assert "attrs{key}" in paths and "attrs{value}.v" in paths
    leaf = leaves(ORDERS)
    assert leaf["items[].qty"] == (IntType(32), True)
    assert leaf["attrs{key}"] == (StringType(), False)
    assert "items" not in leaf and "attrs{value}" not in leaf


@given(schemas())
def test_the_walk_kept_on_a_schema_is_the_walk_of_it_and_never_travels_with_it(schema: Schema) -> None:
    """`walk` and `fields_of` remember their answer on the (immutable) schema: asked again, or of an
    equal schema built anew, they answer alike; a pickled schema leaves the remembered walk behind."""
    fresh = pickle.loads(pickle.dumps(schema))
    unwalked = pickle.dumps(schema)
    nodes, named = list(walk(schema)), fields_of(schema)
    assert list(walk(schema)) == nodes and fields_of(schema) is named
    assert pickle.dumps(schema) == unwalked and fresh == schema
    assert list(walk(fresh)) == nodes and fields_of(fresh) == named
    assert [p for p, _ in named] == [p for p, t, _ in nodes if p in dict(named)]  # fields: the named nodes
    assert {p: f.type for p, f in named}.items() <= {p: t for p, t, _ in nodes}.items()


@given(schemas())
def test_the_ancestors_of_a_path_are_the_nodes_above_it(schema: Schema) -> None:
    """`ancestors` reads them back from the path alone, names holding dots, brackets or backticks
    included: each is the path of a node the walk passes on the way down, top first."""
    above: dict[str, list[str]] = {}

    def down(path: str, t: DataType, over: list[str]) -> None:
        above[path] = over
        for suffix, child, _ in child_nodes(t):
            down(path + suffix, child, [*over, path])

    for f in schema.fields:
        down(join_parts([f.name]), f.type, [])
    assert {p: list(ancestors(p)) for p, _, _ in walk(schema)} == above


def test_the_fields_along_a_path_keep_a_name_holding_a_dot_apart_from_a_struct() -> None:
    """A top-level `a.b` beside a struct `a` with a field `b`: each path names its own field."""
    dotted, inner = Field("a.b", IntType(32)), Field("b", StringType())
    struct = Field("a", StructType((inner,)))
    schema = Schema((dotted, struct))

    def exact(fields: Sequence[Field], name: str) -> Field | None:
        return next((f for f in fields if f.name == name), None)

    assert fields_along(schema, join_parts(["a.b"]), exact) == [dotted]
    assert fields_along(schema, join_parts(["a", "b"]), exact) == [struct, inner]
    assert fields_along(schema, join_parts(["a", "c"]), exact) is None
    assert fields_along(schema, join_parts(["a.b", "b"]), exact) is None  # an int has no fields


# ---------------------------------------------------------------------------------------------
# The walk: a visitor, a partner visitor, a transform

Names = list[str]


def _flat(results: Sequence[Names]) -> Names:
    return [name for names in results for name in names]


class _NodeNames(SchemaVisitor[Names, Names]):
    """Every node as kind@path, children first."""

    def schema(self, schema: Schema, fields: Sequence[Names]) -> Names:
        return [*_flat(fields), "schema"]

    def field(self, f: Field, path: str, type_result: Names) -> Names:
        return [*type_result, f"field@{path}"]

    def struct(self, t: StructType, path: str, fields: Sequence[Names]) -> Names:
        return [*_flat(fields), f"struct@{path}"]

    def list(self, t: ListType, path: str, element: Names) -> Names:
        return [*element, f"list@{path}"]

    def map(self, t: MapType, path: str, key: Names, value: Names) -> Names:
        return [*key, *value, f"map@{path}"]

    def enum(self, t: EnumType, path: str) -> Names:
        return [f"enum@{path}"]

    def primitive(self, t: PrimitiveType, path: str) -> Names:
        return [f"{describe(t)}@{path}"]


def test_a_visitor_gets_every_node_with_its_path_after_its_children() -> None:
    schema = Schema((
        f("a", struct(f("b", ListType(IntType(32))))),
        f("m", MapType(StringType(), EnumType(("X",)))),
    ))
    assert visit(schema, _NodeNames()) == [
        "int32@a.b[]", "list@a.b", "field@a.b", "struct@a", "field@a",
        "string@m{key}", "enum@m{value}", "map@m", "field@m", "schema",
    ]
    assert visit(ListType(struct(f("x", IntType(8)))), _NodeNames(), "top") == [
        "int8@top[].x", "field@top[].x", "struct@top[]", "list@top"]


@dataclass(frozen=True)
class _Pair:
    writer: Field | None
    reader: Field | None


class _CaseInsensitiveDiff(PartnerVisitor[_Pair, Names, Names]):
    """Fields paired by lower-cased name, reader order first; every difference as a line."""

    def pair_fields(self, writer: tuple[Field, ...], reader: tuple[Field, ...]) -> list[_Pair]:
        unpaired = {w.name.lower(): w for w in writer}
        pairs = [_Pair(unpaired.pop(r.name.lower(), None), r) for r in reader]
        return [*pairs, *(_Pair(w, None) for w in unpaired.values())]

    def field(self, writer: Field, reader: Field, pair: _Pair, paths: Paths, type_result: Names) -> Names:
        return [*type_result, f"field {paths.writer} -> {paths.reader}"]

    def writer_only(self, writer: Field, pair: _Pair, paths: Paths) -> Names:
        return [f"dropped {paths.writer}"]

    def reader_only(self, reader: Field, pair: _Pair, paths: Paths) -> Names:
        return [f"added {paths.reader}"]

    def struct(self, writer: StructType, reader: StructType, paths: Paths, fields: Sequence[Names]) -> Names:
        return _flat(fields)

    def list(self, writer: ListType, reader: ListType, paths: Paths, element: Names) -> Names:
        return element

    def map(self, writer: MapType, reader: MapType, paths: Paths, key: Names, value: Names) -> Names:
        return [*key, *value]

    def leaf(self, writer: Leaf, reader: Leaf, paths: Paths) -> Names:
        return [] if writer == reader else [f"{paths.reader}: {describe(writer)} -> {describe(reader)}"]

    def mismatch(self, writer: DataType, reader: DataType, paths: Paths) -> Names:
        return [f"{paths.reader}: {describe(writer)} vs {describe(reader)}"]


def test_a_partner_visitor_sees_pairs_unmatched_fields_on_both_sides_and_kind_mismatches() -> None:
    writer = Schema((
        f("id", IntType(32)),
        f("Info", struct(f("zip", StringType()), f("old", IntType(32)))),
        f("tags", ListType(StringType())),
        f("m", MapType(StringType(), IntType(32))),
        f("gone", StringType()),
    ))
    reader = Schema((
        f("id", IntType(64)),
        f("info", struct(f("zip", StringType()), f("new", IntType(32)))),
        f("tags", struct(f("x", StringType()))),  # not descended: no "added tags.x"
        f("m", MapType(StringType(), IntType(64))),
        f("extra", StringType()),
    ))
    assert visit_with_partner(writer, reader, _CaseInsensitiveDiff()) == [
        "id: int32 -> int64", "field id -> id",
        "field Info.zip -> info.zip", "added info.new", "dropped Info.old", "field Info -> info",
        "tags: list<string> vs struct<x:string>", "field tags -> tags",
        "m{value}: int32 -> int64", "field m -> m",
        "added extra",
        "dropped gone",
    ]


class _Widen(SchemaTransform):
    """int32 becomes int64 wherever it is."""

    def primitive(self, t: PrimitiveType, path: str) -> DataType:
        return IntType(64) if t == IntType(32) else t


def test_a_transform_changes_only_what_its_methods_change() -> None:
    def schema(int_type: IntType) -> Schema:
        return Schema((
            f("a", int_type, nullable=False, id=1, aliases=("x",), default_json="1"),
            f("l", ListType(struct(f("n", int_type), f("s", StringType())), True)),
            f("m", MapType(int_type, EnumType(("A",)), True)),
        ))

    assert transform(schema(IntType(32)), _Widen()) == schema(IntType(64))
    assert transform(ListType(IntType(32)), _Widen()) == ListType(IntType(64))
    assert transform(ORDERS, SchemaTransform()) == ORDERS


def test_names_holding_dots_or_backticks_are_quoted_whole() -> None:
    from schemaguard.formats.spark_ddl import column_ref, quoted
    from schemaguard.paths import join, parts, segment

    assert segment("a.b") == "`a.b`" and segment("plain") == "plain"
    assert parts(join("s", "a.b")) == ("s", "a.b")  # a field `a.b` of a struct `s`, not s.a.b
    assert quoted("we`ird") == "`we``ird`"  # a backtick doubled, as Spark SQL spells it
    assert column_ref(join("", "we`ird")) == "`we``ird`"
