"""rules/changes.py: every change between two schemas named as operations.

Each test cites the row of docs/reference/compat-rules.md (§1 Avro, §2 Confluent, §3 Iceberg,
§4 Delta, §5 Spark) or the decision in the changes.py docstring that it exercises.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemaguard.formats.notation import fingerprint
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
from schemaguard.names import Identity
from schemaguard.rules.changes import Operation, OpKind, diff
from tests.strategies import (
    PROPERTY,
    data_types,
    enums,
    fields,
    json_values,
    metadata_keys,
    names,
    primitives,
    schemas,
)

ALL: tuple[Identity, ...] = ("name", "name-ci", "id", "position")
K = OpKind


def f(name: str, t: DataType, **kw: Any) -> Field:
    return Field(name, t, **kw)


def schema(*fs: Field) -> Schema:
    return Schema(tuple(fs))


def struct(*fs: Field) -> StructType:
    return StructType(tuple(fs))


def kinds(ops: list[Operation]) -> list[tuple[OpKind, str]]:
    return [(op.kind, op.path) for op in ops]


def one(ops: list[Operation]) -> Operation:
    assert len(ops) == 1, ops
    return ops[0]


def type_change(old: DataType, new: DataType) -> Operation:
    """The single operation for one field whose type changes from `old` to `new`."""
    return one(diff(schema(f("x", old)), schema(f("x", new))))


def test_op_kind_values_are_stable() -> None:
    # They are written to JSON and the catalog: renaming one is a breaking change.
    assert {k.name: k.value for k in OpKind} == {
        "ADD_OPTIONAL_FIELD": "add_optional_field",
        "ADD_REQUIRED_FIELD": "add_required_field",
        "DROP_FIELD": "drop_field",
        "RENAME": "rename",
        "REORDER": "reorder",
        "WIDEN_TYPE": "widen_type",
        "NARROW_TYPE": "narrow_type",
        "CHANGE_TYPE": "change_type",
        "LOGICAL_TYPE_CHANGE": "logical_type_change",
        "NULLABILITY_RELAXED": "nullability_relaxed",
        "NULLABILITY_TIGHTENED": "nullability_tightened",
        "ENUM_VALUE_ADDED": "enum_value_added",
        "ENUM_VALUE_REMOVED": "enum_value_removed",
        "ENUM_DEFAULT_CHANGED": "enum_default_changed",
        "ENUM_REORDERED": "enum_reordered",
        "DEFAULT_CHANGED": "default_changed",
        "METADATA_CHANGED": "metadata_changed",
        "MEANING_CHANGED": "meaning_changed",
        "FIELD_ID_REUSED": "field_id_reused",
    }


# ---------------------------------------------------------------------------------------------
# Adding and dropping fields


BASE = schema(f("id", IntType(64), nullable=False))


def test_add_nullable_field_is_optional_without_default() -> None:
    # §3 "R adds optional field (new id): OK, read as null".
    new = schema(*BASE.fields, f("note", StringType()))
    assert diff(BASE, new) == [
        Operation(K.ADD_OPTIONAL_FIELD, "note", None, "string", "no default")]


def test_add_required_field_with_default_is_optional() -> None:
    # §1 "R adds field with default: OK" (the default fills it); docstring: optional = nullable
    # or defaulted.
    new = schema(*BASE.fields, f("n", IntType(32), nullable=False, default_json="0"))
    assert diff(BASE, new) == [
        Operation(K.ADD_OPTIONAL_FIELD, "n", None, "int32", "with default 0")]


def test_add_required_field_without_default() -> None:
    # §1 "R adds field without default: NO"; §3 "R adds required field: NO".
    new = schema(*BASE.fields, f("n", IntType(32), nullable=False))
    assert diff(BASE, new) == [
        Operation(K.ADD_REQUIRED_FIELD, "n", None, "int32", "no default")]


def test_drop_field_names_the_old_path_and_its_default() -> None:
    # §1 "R drops a W field: OK, the writer's extra values are skipped".
    old = schema(*BASE.fields, f("gone", StringType(), default_json='"x"'))
    assert diff(old, BASE) == [
        Operation(K.DROP_FIELD, "gone", "string", None, 'with default "x"')]


def test_confluent_s1_s2_s3() -> None:
    # §2 test facts: s1={f1}, s2={f1, f2 default "foo"}, s3={f1, f2 no default}.
    s1 = schema(f("f1", StringType(), nullable=False))
    s2 = schema(*s1.fields, f("f2", StringType(), nullable=False, default_json='"foo"'))
    s3 = schema(*s1.fields, f("f2", StringType(), nullable=False))
    assert diff(s1, s2) == [
        Operation(K.ADD_OPTIONAL_FIELD, "f2", None, "string", 'with default "foo"')]
    assert diff(s2, s3) == [
        Operation(K.DEFAULT_CHANGED, "f2", '"foo"', None, '"foo" -> no default')]
    # s3 cannot read s1 (BACKWARD_TRANSITIVE rejects it): seen from s1 it is a required add.
    assert kinds(diff(s1, s3)) == [(K.ADD_REQUIRED_FIELD, "f2")]


# ---------------------------------------------------------------------------------------------
# Renames, under each identity


RENAME_OLD = schema(f("a", IntType(32), id=1), f("b", StringType(), id=2))
RENAME_NEW = schema(f("a", IntType(32), id=1), f("c", StringType(), id=2))


def test_rename_by_id_is_one_rename() -> None:
    # §3 "Rename (same id): OK, names are irrelevant".
    assert diff(RENAME_OLD, RENAME_NEW, "id") == [
        Operation(K.RENAME, "c", "b", "c", "by id", old_path="b")]


@pytest.mark.parametrize("identity", ["name", "name-ci"])
def test_rename_by_name_is_drop_add_and_a_suggestion(identity: Identity) -> None:
    # §1 "Rename, no alias": a name reader sees a drop and an add (§5 "rename: by name =
    # drop+add"); docstring: the same-type, same-position rename is only a suggestion, and the
    # drop and add stay.
    assert diff(RENAME_OLD, RENAME_NEW, identity) == [
        Operation(K.ADD_OPTIONAL_FIELD, "c", None, "string", "no default"),
        Operation(K.RENAME, "c", "b", "c", "suggested: same type and position", old_path="b"),
        Operation(K.DROP_FIELD, "b", "string", None, "no default"),
    ]


def test_rename_by_position_keeps_binding() -> None:
    # Docstring: under `position` a pair with another name is RENAME "by position".
    assert diff(RENAME_OLD, RENAME_NEW, "position") == [
        Operation(K.RENAME, "c", "b", "c", "by position", old_path="b")]


def test_no_suggestion_when_type_or_position_differs() -> None:
    # Docstring: a suggestion needs the same type AND the same position.
    other_type = schema(f("a", IntType(32)), f("c", BinaryType()))
    other_place = schema(f("c", StringType()), f("a", IntType(32)))
    assert K.RENAME not in {op.kind for op in diff(RENAME_OLD, other_type)}
    assert K.RENAME not in {op.kind for op in diff(RENAME_OLD, other_place)}


def test_rename_by_alias_under_name_identities() -> None:
    # §1 "Rename, R lists the old name in aliases: OK" (only the new field's aliases count).
    new = schema(f("a", IntType(32), id=1), f("c", StringType(), id=2, aliases=("b",)))
    expected_rename = Operation(K.RENAME, "c", "b", "c", "by alias", old_path="b")
    aliases_added = Operation(K.METADATA_CHANGED, "c", None, "b", "aliases")
    for identity in ("name", "name-ci"):
        assert diff(RENAME_OLD, new, identity) == [expected_rename, aliases_added], identity
    # §1 "Alias only on W's side: NO": the old schema's aliases do not pair anything.
    assert kinds(diff(new, RENAME_OLD)) == [
        (K.ADD_OPTIONAL_FIELD, "b"), (K.RENAME, "b"), (K.DROP_FIELD, "c")]


def test_case_only_rename_under_name_ci() -> None:
    # §5 "names differing only in case" fold under caseSensitive=false; §4 mergeSchemas is
    # case-insensitive: the same column, renamed "case only". By exact name: drop + add.
    old = schema(f("Amount", DecimalType(12, 2)))
    new = schema(f("amount", DecimalType(12, 2)))
    assert diff(old, new, "name-ci") == [
        Operation(K.RENAME, "amount", "Amount", "amount", "case only", old_path="Amount")]
    assert kinds(diff(old, new, "name")) == [
        (K.ADD_OPTIONAL_FIELD, "amount"), (K.RENAME, "amount"), (K.DROP_FIELD, "Amount")]


# ---------------------------------------------------------------------------------------------
# Reorder


ORDER_OLD = schema(f("a", IntType(32)), f("b", StringType()), f("c", DateType()))
ORDER_NEW = schema(f("c", DateType()), f("a", IntType(32)), f("b", StringType()))


@pytest.mark.parametrize("identity", ["name", "name-ci", "id"])
def test_reorder_is_one_struct_level_op_by_name_or_id(identity: Identity) -> None:
    # §1 "Reorder fields: OK, matched by name"; §3 "Reorder: read OK; write check NO".
    assert diff(ORDER_OLD, ORDER_NEW, identity) == [
        Operation(K.REORDER, "", "a,b,c", "c,a,b", "shared fields in another order")]


def test_reorder_under_position_pairs_other_columns() -> None:
    # Docstring: under `position` the same names in another order bind other columns' data.
    ops = diff(ORDER_OLD, ORDER_NEW, "position")
    assert kinds(ops) == [
        (K.RENAME, "c"), (K.CHANGE_TYPE, "c"),
        (K.RENAME, "a"), (K.CHANGE_TYPE, "a"),
        (K.RENAME, "b"), (K.CHANGE_TYPE, "b"),
        (K.REORDER, ""),
    ]
    assert ops[0] == Operation(K.RENAME, "c", "a", "c", "by position", old_path="a")
    assert ops[-1] == Operation(K.REORDER, "", "a,b,c", "c,a,b", "same names at other positions")


def test_reorder_ignores_added_and_dropped_fields() -> None:
    # Docstring: only the relative order of the fields both sides share counts.
    new = schema(f("z", IntType(8)), f("a", IntType(32)), f("c", DateType()))
    for identity in ALL:
        assert K.REORDER not in {op.kind for op in diff(ORDER_OLD, new, identity)}, identity


def test_nested_reorder_is_reported_at_the_struct_path() -> None:
    # §1 "Reorder fields" applies at every depth; the struct is a list element.
    old = schema(f("l", ListType(struct(f("x", IntType(32)), f("y", IntType(32))))))
    new = schema(f("l", ListType(struct(f("y", IntType(32)), f("x", IntType(32))))))
    assert diff(old, new) == [Operation(K.REORDER, "l[]", "x,y", "y,x", "shared fields in another order")]


# ---------------------------------------------------------------------------------------------
# Type relations


@pytest.mark.parametrize(
    ("old", "new", "detail"),
    [
        # §3 "int->long, float->double"; §5 read "short<->int, int->long"
        (IntType(8), IntType(16), "integer"),
        (IntType(32), IntType(64), "integer"),
        (IntType(8, signed=False), IntType(16), "integer"),
        (IntType(32, signed=False), IntType(64, signed=False), "integer"),
        (FloatType(32), FloatType(64), "float"),
        (FloatType(16), FloatType(32), "float"),
        # §5 read "short/int->double"; docstring: exact when the magnitude fits the mantissa
        (IntType(32), FloatType(64), "integer to float"),
        (IntType(32, signed=False), FloatType(64), "integer to float"),
        (IntType(16), FloatType(32), "integer to float"),
        # §4 "byte/short/int->decimal(10+k1, k2)"; docstring: int64 needs 19 digits
        (IntType(32), DecimalType(10, 0), "integer to decimal"),
        (IntType(64), DecimalType(21, 2), "integer to decimal"),
        (IntType(64, signed=False), DecimalType(20, 0), "integer to decimal"),
        # §3 "decimal(P,S)->decimal(P',S), P'>=P"; §4 "decimal(p,s)->decimal(p+k1, s+k2)"
        (DecimalType(12, 2), DecimalType(17, 2), "decimal precision"),
        (DecimalType(10, 2), DecimalType(12, 4), "decimal scale"),
        # §4 "date->timestamp_ntz"; §5 read "date->timestamp_ntz"
        (DateType(), TimestampType("us", utc=False), "date to local timestamp"),
        (DateType(), TimestampType("ns", utc=False), "date to local timestamp"),
        # docstring: fixed->binary, enum->string (§5: enums are strings to Spark)
        (FixedType(16), BinaryType(), "fixed to binary"),
        (EnumType(("A", "B")), StringType(), "enum to string"),
    ],
)
def test_widen_and_its_reverse_narrow(old: DataType, new: DataType, detail: str) -> None:
    assert type_change(old, new).kind is K.WIDEN_TYPE
    assert type_change(old, new).detail == detail
    narrow = type_change(new, old)
    assert (narrow.kind, narrow.detail) == (K.NARROW_TYPE, detail)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (IntType(32), FloatType(32)),  # §1 Java note: lossy above 2^24
        (IntType(64), FloatType(64)),  # §5 read "long->double: NO"; lossy above 2^53
        (IntType(64), DecimalType(18, 0)),  # 19 digits needed
        (IntType(8), IntType(16, signed=False)),  # negatives do not fit
        (IntType(8, signed=False), IntType(8)),  # 255 does not fit
        (DateType(), TimestampType("us", utc=True)),  # §5 "date->timestamp (LTZ): NO"; §3 spec
        (StringType(), IntType(32)),  # §1 "int->string ... TYPE_MISMATCH"
        (BooleanType(), IntType(32)),  # §1 "boolean<->int"
        (FixedType(4), FixedType(8)),  # §1 "fixed size differs: NO"
        (DecimalType(10, 2), FloatType(64)),  # §4 "decimal vs double: NO"
        (struct(f("a", IntType(32))), ListType(IntType(32))),  # §3 "primitive<->struct/list/map"
        (IntType(32), struct(f("a", IntType(32)))),
        (EnumType(("A",)), BinaryType()),
        (TimeType("ms"), TimestampType("ms", utc=False)),
    ],
)
def test_change_type(old: DataType, new: DataType) -> None:
    for a, b in ((old, new), (new, old)):
        op = type_change(a, b)
        assert (op.kind, op.detail) == (K.CHANGE_TYPE, "unrelated types"), (a, b)


@pytest.mark.parametrize(
    ("old", "new", "detail"),
    [
        # §5: ms<->us is invisible to Spark merge; §1 Avro ignores logical types
        (TimestampType("ms", utc=True), TimestampType("us", utc=True), "unit"),
        (TimestampType("us", utc=False), TimestampType("ns", utc=False), "unit"),
        (TimeType("ms"), TimeType("us"), "unit"),
        # §5 TimestampType vs TimestampNTZType fail to merge; §3 "timestamp<->timestamptz: NO"
        (TimestampType("us", utc=True), TimestampType("us", utc=False), "utc"),
        (TimestampType("ms", utc=True), TimestampType("us", utc=False), "utc"),  # utc wins
        # docstring: INT96 <-> any INT64 timestamp, whatever else changes
        (Int96Type(), TimestampType("us", utc=True), "int96"),
        (Int96Type(), TimestampType("ms", utc=False), "int96"),
        # §1 "decimal(9,2)->decimal(9,3) OK" in Avro; §5 merge "different scale: NO"
        (DecimalType(12, 2), DecimalType(12, 4), "scale"),
        (DecimalType(10, 2), DecimalType(12, 1), "scale"),
        # §1 string<->bytes; §3 "string<->binary, uuid<->string, fixed<->binary: NO"
        (StringType(), BinaryType(), "string_binary"),
        (JsonType(), StringType(), "string_binary"),
        (JsonType(), BinaryType(), "string_binary"),
        (UuidType(), StringType(), "string_binary"),
        (UuidType(), FixedType(16), "string_binary"),
    ],
)
def test_logical_type_change_both_ways(old: DataType, new: DataType, detail: str) -> None:
    for a, b in ((old, new), (new, old)):
        op = type_change(a, b)
        assert (op.kind, op.detail) == (K.LOGICAL_TYPE_CHANGE, detail), (a, b)


def test_type_op_spells_types_with_describe() -> None:
    assert type_change(IntType(32), ListType(IntType(64))) == Operation(
        K.CHANGE_TYPE, "x", "int32", "list<int64>", "unrelated types")


# ---------------------------------------------------------------------------------------------
# Nullability


def test_nullability_of_fields_elements_and_map_values() -> None:
    # §3 "optional->required: NO (also for list elements and map values)", "required->optional:
    # OK"; §4 isReadCompatible: the same rules inside arrays and maps.
    old = schema(
        f("a", IntType(32), nullable=False),
        f("l", ListType(IntType(32), element_nullable=True)),
        f("m", MapType(StringType(), IntType(32), value_nullable=False)),
    )
    new = schema(
        f("a", IntType(32), nullable=True),
        f("l", ListType(IntType(32), element_nullable=False)),
        f("m", MapType(StringType(), IntType(32), value_nullable=True)),
    )
    assert diff(old, new) == [
        Operation(K.NULLABILITY_RELAXED, "a", "required", "nullable", "field"),
        Operation(K.NULLABILITY_TIGHTENED, "l[]", "nullable", "required", "list element"),
        Operation(K.NULLABILITY_RELAXED, "m{value}", "required", "nullable", "map value"),
    ]


# ---------------------------------------------------------------------------------------------
# Enums, defaults, metadata


def test_enum_symbols_added_removed_reordered_and_default() -> None:
    # §1 "Enum: R has every W symbol: OK", "W has symbols R lacks ... NO / OK with enum default";
    # docstring: symbol order is ENUM_REORDERED (Avro encodes an enum by index).
    old = schema(f("s", EnumType(("NEW", "PAID", "VOID", "SHIPPED"), "NEW")))
    new = schema(f("s", EnumType(("SHIPPED", "NEW", "PAID", "LOST"), "LOST")))
    assert diff(old, new) == [
        Operation(K.ENUM_VALUE_ADDED, "s", None, "LOST", "LOST"),
        Operation(K.ENUM_VALUE_REMOVED, "s", "VOID", None, "VOID"),
        Operation(K.ENUM_REORDERED, "s", "NEW,PAID,SHIPPED", "SHIPPED,NEW,PAID", "symbols reordered"),
        Operation(K.ENUM_DEFAULT_CHANGED, "s", "NEW", "LOST", "NEW -> LOST"),
    ]


def test_enum_default_removed() -> None:
    # §1 "Enum: same, only a field default (no enum default): NO": losing it matters.
    old = schema(f("s", EnumType(("A",), "A")))
    new = schema(f("s", EnumType(("A",))))
    assert diff(old, new) == [Operation(K.ENUM_DEFAULT_CHANGED, "s", "A", None, "A -> no default")]


def test_default_added_changed_removed() -> None:
    # "What none of them checks": a changed default silently replaces data; §1 "Reader default
    # value changed: not checked".
    def with_default(d: str | None) -> Schema:
        return schema(f("c", StringType(), default_json=d))

    assert diff(with_default(None), with_default("null")) == [
        Operation(K.DEFAULT_CHANGED, "c", None, "null", "no default -> null")]
    assert diff(with_default('"a"'), with_default('"b"')) == [
        Operation(K.DEFAULT_CHANGED, "c", '"a"', '"b"', '"a" -> "b"')]


def test_metadata_unit_semantic_doc_aliases_and_field_id() -> None:
    # "What none of them checks": units and semantics; docs/design.md "meaning changed (unit or semantic
    # metadata)"; docstring: aliases and field ids are METADATA_CHANGED too.
    old = schema(f("amt", DecimalType(12, 2), id=3, aliases=("x", "y"),
                   metadata=(("doc", "total"), ("unit", "EUR"))))
    new = schema(f("amt", DecimalType(12, 2), id=4, aliases=("y", "x"),
                   metadata=(("semantic", "net"), ("unit", "USD"))))
    assert diff(old, new, "name") == [
        Operation(K.METADATA_CHANGED, "amt", "total", None, "doc"),
        Operation(K.MEANING_CHANGED, "amt", None, "net", "semantic"),
        Operation(K.MEANING_CHANGED, "amt", "EUR", "USD", "unit"),
        Operation(K.METADATA_CHANGED, "amt", "3", "4", "field id"),
    ]  # alias order never counts (model.fingerprint)


# ---------------------------------------------------------------------------------------------
# Field id reuse


def test_id_paired_to_an_unrelated_column_is_reused() -> None:
    # §3 "ids are never reused" is assumed, never checked ("What none of them checks").
    old = schema(f("price", DecimalType(10, 2), id=7))
    new = schema(f("comment", StringType(), id=7))
    ops = diff(old, new, "id")
    assert kinds(ops) == [(K.RENAME, "comment"), (K.FIELD_ID_REUSED, "comment"),
                          (K.CHANGE_TYPE, "comment")]
    assert ops[1].before == "price: decimal(10,2)" and ops[1].after == "comment: string"
    assert "unrelated name and type" in ops[1].detail


def test_id_moved_to_another_fields_name_is_reused() -> None:
    # §3 / §4 (maxColumnId only goes up): the name "b" belonged to id 2; now id 1 carries it.
    old = schema(f("a", IntType(32), id=1), f("b", IntType(32), id=2))
    new = schema(f("b", IntType(64), id=1))
    ops = diff(old, new, "id")
    assert kinds(ops) == [(K.RENAME, "b"), (K.FIELD_ID_REUSED, "b"), (K.WIDEN_TYPE, "b"),
                          (K.DROP_FIELD, "b")]
    assert ops[1].detail == "'b' was another field (id 2), id 1 was 'a'"


def test_rename_by_id_with_a_related_type_is_not_reuse() -> None:
    # §3 "Rename (same id): OK" plus "int->long: OK": a genuine rename and widening.
    old = schema(f("qty", IntType(32), id=1))
    new = schema(f("quantity", IntType(64), id=1))
    assert kinds(diff(old, new, "id")) == [(K.RENAME, "quantity"), (K.WIDEN_TYPE, "quantity")]


# ---------------------------------------------------------------------------------------------
# Nesting and order


def test_struct_in_list_in_map_paths() -> None:
    # §1 "array/map: recurse into items/values"; §4 "element/key/value merged recursively".
    def table(key: DataType, element: StructType) -> Schema:
        return schema(f("m", MapType(key, ListType(element, True), True)))

    old = table(StringType(), struct(f("x", IntType(32)), f("y", StringType()),
                                     f("gone", BooleanType())))
    new = table(JsonType(), struct(f("y", StringType(), nullable=False), f("x", IntType(64)),
                                   f("z", DateType())))
    assert diff(old, new) == [
        Operation(K.LOGICAL_TYPE_CHANGE, "m{key}", "string", "json", "string_binary"),
        Operation(K.NULLABILITY_TIGHTENED, "m{value}[].y", "nullable", "required", "field"),
        Operation(K.WIDEN_TYPE, "m{value}[].x", "int32", "int64", "integer"),
        Operation(K.ADD_OPTIONAL_FIELD, "m{value}[].z", None, "date", "no default"),
        Operation(K.DROP_FIELD, "m{value}[].gone", "boolean", None, "no default"),
        Operation(K.REORDER, "m{value}[]", "x,y", "y,x", "shared fields in another order"),
    ]


def test_renamed_parent_gives_children_new_paths_and_old_paths() -> None:
    # Docstring: a renamed node is at its new path with `old_path`; a dropped field at its old.
    old = schema(f("s", struct(f("a", IntType(32), id=2), f("b", IntType(32), id=3)), id=1))
    new = schema(f("t", struct(f("c", IntType(32), id=2)), id=1))
    assert diff(old, new, "id") == [
        Operation(K.RENAME, "t", "s", "t", "by id", old_path="s"),
        Operation(K.RENAME, "t.c", "a", "c", "by id", old_path="s.a"),
        Operation(K.DROP_FIELD, "s.b", "int32", None, "no default"),
    ]


def test_order_new_fields_then_dropped_then_struct_ops() -> None:
    # The brief's stable order: by path in the new schema's order, then drops, then REORDER.
    old = schema(f("a", IntType(32)), f("b", IntType(32)), f("d", BooleanType()),
                 f("c", StringType()))
    new = schema(f("c", StringType(), nullable=False), f("e", DateType()),
                 f("b", IntType(64)), f("a", IntType(32)))
    assert kinds(diff(old, new)) == [
        (K.NULLABILITY_TIGHTENED, "c"), (K.ADD_OPTIONAL_FIELD, "e"), (K.WIDEN_TYPE, "b"),
        (K.DROP_FIELD, "d"), (K.REORDER, ""),
    ]


# ---------------------------------------------------------------------------------------------
# One pair, four identities


def test_each_identity_gives_its_own_verdict() -> None:
    # §3 ids, §1 names and aliases, §5 case folding, docstring positional binding.
    old = schema(f("ID", IntType(64), id=1), f("name", StringType(), id=2))
    new = schema(f("label", StringType(), id=2), f("id", IntType(64), id=1))
    verdicts = {identity: kinds(diff(old, new, identity)) for identity in ALL}
    assert verdicts == {
        "name": [(K.ADD_OPTIONAL_FIELD, "label"), (K.ADD_OPTIONAL_FIELD, "id"),
                 (K.DROP_FIELD, "ID"), (K.DROP_FIELD, "name")],
        "name-ci": [(K.ADD_OPTIONAL_FIELD, "label"), (K.RENAME, "id"), (K.DROP_FIELD, "name")],
        "id": [(K.RENAME, "label"), (K.RENAME, "id"), (K.REORDER, "")],
        "position": [(K.RENAME, "label"), (K.CHANGE_TYPE, "label"), (K.METADATA_CHANGED, "label"),
                     (K.RENAME, "id"), (K.CHANGE_TYPE, "id"), (K.METADATA_CHANGED, "id")],
    }


# ---------------------------------------------------------------------------------------------
# Properties


@pytest.mark.slow
@PROPERTY
@given(schemas(), st.sampled_from(ALL))
def test_a_schema_has_no_changes_from_itself(s: Schema, identity: Identity) -> None:
    assert diff(s, s, identity) == []


def _mutated_fields(draw: st.DrawFn, fs: tuple[Field, ...]) -> tuple[Field, ...]:
    """`fs` with one change somewhere: a field added, dropped, moved or altered, at any depth."""
    how = draw(st.sampled_from(["alter", "alter", "add", "drop", "shuffle"])) if fs else "add"
    taken = {g.name for g in fs}
    if how == "add":
        at = draw(st.integers(0, len(fs)))
        return (*fs[:at], draw(fields(data_types).filter(lambda g: g.name not in taken)), *fs[at:])
    if how == "shuffle":
        return tuple(draw(st.permutations(fs)))
    i = draw(st.integers(0, len(fs) - 1))
    altered = () if how == "drop" else (_mutated_field(draw, fs[i], taken),)
    return (*fs[:i], *altered, *fs[i + 1:])


def _mutated_field(draw: st.DrawFn, g: Field, taken: set[str]) -> Field:
    aspect = draw(st.sampled_from(["type", "type", "name", "nullable", "id", "default", "aliases",
                                   "metadata"]))
    if aspect == "name":
        return replace(g, name=draw(names.filter(lambda n: n not in taken)))
    if aspect == "type":
        return replace(g, type=_mutated_type(draw, g.type))
    if aspect == "nullable":
        return replace(g, nullable=not g.nullable)
    if aspect == "id":
        return replace(g, id=draw(st.none() | st.integers(0, 5)))
    if aspect == "default":
        return replace(g, default_json=draw(st.none() | json_values.map(canonical_json)))
    if aspect == "aliases":
        return replace(g, aliases=tuple(draw(st.lists(names, max_size=2))))
    return replace(g, metadata=make_metadata(draw(st.dictionaries(metadata_keys, names, max_size=2))))


def _mutated_type(draw: st.DrawFn, t: DataType) -> DataType:
    """`t` changed in one place: inside a struct, a list or map slot, an enum, or replaced."""
    if draw(st.integers(0, 4)) == 0:
        return draw(data_types)
    if isinstance(t, StructType):
        return StructType(_mutated_fields(draw, t.fields))
    if isinstance(t, ListType):
        if draw(st.booleans()):
            return replace(t, element_nullable=not t.element_nullable)
        return replace(t, element=_mutated_type(draw, t.element))
    if isinstance(t, MapType):
        slot = draw(st.sampled_from(["nullable", "key", "value"]))
        if slot == "nullable":
            return replace(t, value_nullable=not t.value_nullable)
        if slot == "key":
            return replace(t, key=_mutated_type(draw, t.key))
        return replace(t, value=_mutated_type(draw, t.value))
    if isinstance(t, EnumType):
        symbols = draw(st.permutations(t.symbols) | st.lists(names, max_size=4, unique=True))
        return EnumType(tuple(symbols), draw(st.none() | st.sampled_from(symbols)) if symbols else None)
    return draw(primitives)


@st.composite
def nearby_pairs(draw: st.DrawFn) -> tuple[Schema, Schema]:
    """A schema of one to five fields, and one that differs from it in one place (or none)."""
    a = Schema(draw(st.lists(fields(data_types | enums()), min_size=1, max_size=5,
                             unique_by=lambda g: g.name).map(tuple)))
    return a, Schema(_mutated_fields(draw, a.fields))


@pytest.mark.slow
@PROPERTY
@given(nearby_pairs() | st.tuples(schemas(), schemas()))
def test_every_fingerprinted_difference_is_named(pair: tuple[Schema, Schema]) -> None:
    # Docstring: every difference a `name` fingerprint sees is an operation.
    a, b = pair
    if fingerprint(a, "name") != fingerprint(b, "name"):
        assert diff(a, b, "name"), (a, b)
