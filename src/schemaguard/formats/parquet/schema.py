"""The schema part of a footer, parsed once per distinct (schema bytes, Spark schema): the
schema list as a tree with each node's levels, the model schema, the leaf columns' layouts, the
fingerprint, and why Spark would refuse the footer whole.

Group shapes follow the Parquet LIST/MAP backward-compatibility rules (LogicalTypes.md, "Nested
Types"): the standard 3-level list, legacy 2-level lists (`array`, `<name>_tuple`, a repeated
primitive, a repeated multi-field group), maps annotated MAP or MAP_KEY_VALUE, and bare repeated
fields (a required list of required elements).

In the pipeline `reader.py` hands each file's schema bytes to `known_footer`, and `lake/cache.py`
the bytes it kept to `footer_schema_from`. It imports `footer.py` and `elements.py` of the package
(what one element says is theirs), and `formats.thrift`, `formats.spark` and `formats.notation`;
it reads no file and decodes no statistics.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from schemaguard.errors import first_line
from schemaguard.formats.notation import schema_to_notation
from schemaguard.formats.parquet.elements import Element, Leaf, leaf_of, parse_element
from schemaguard.formats.parquet.footer import (
    FooterSchema,
    ParquetColumn,
    corrupt,
    parquet_column,
    per_process,
)
from schemaguard.formats.spark import SparkSchemaError, schema_from_spark_json
from schemaguard.formats.thrift import ThriftError, decode_file_metadata
from schemaguard.model import (
    DataType,
    Field,
    IntervalType,
    IntType,
    ListType,
    MapType,
    PrimitiveType,
    Schema,
    SchemaTransform,
    StructType,
    VariantType,
    canonical_json,
    new_field,
    transform,
    walk,
)
from schemaguard.paths import ELEMENT, KEY, VALUE, join

# Bounded by the number of distinct footer schemas in a process, which is small even on huge lakes.
_FOOTERS: dict[tuple[bytes, bytes | None], FooterSchema] = per_process({})
_ELEMENTS: dict[bytes, list[dict[int, Any]]] = per_process({})
RECENT: list[bytes] = per_process([])  # schema bytes seen lately, most recent first: compared before decoding
RECENT_SCHEMAS = 8


def known_footer(raw: bytes, decoded: list[Any] | None, spark_json: bytes | None) -> FooterSchema:
    """The footer schema for these schema bytes (decoded now, or skipped because they equal a
    recent schema's) and this Spark schema."""
    found = _FOOTERS.get((raw, spark_json))
    if found is None:
        elements = _ELEMENTS.get(raw) if decoded is None else decoded
        if elements is None:
            raise corrupt("schema bytes matched a schema no longer cached")  # cannot happen
        _ELEMENTS[raw] = elements
        found = _FOOTERS[(raw, spark_json)] = _parse_footer_schema(elements, spark_json, raw)
    if not RECENT or RECENT[0] != raw:
        if raw in RECENT:
            RECENT.remove(raw)
        RECENT.insert(0, raw)
        del RECENT[RECENT_SCHEMAS:]
    return found


def footer_schema_from(source: tuple[bytes, bytes | None]) -> FooterSchema:
    """The footer schema parsed from what `FooterSchema.source` keeps, as a footer read gives it.
    Raises `UnreadableFile` when the bytes are not a schema list."""
    raw, spark_json = source
    try:  # the list alone, as field 2 of an otherwise empty FileMetaData (compact protocol)
        meta, _ = decode_file_metadata(b"\x29" + raw + b"\x00", [], {})
        return known_footer(raw, meta[2], spark_json)
    except ThriftError as e:
        raise corrupt(str(e)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        raise corrupt(f"{type(e).__name__}: {first_line(e)}") from None


def _parse_footer_schema(elements: list[Any], spark_json: bytes | None, raw: bytes) -> FooterSchema:
    """The model, leaf layouts and fingerprint of one footer schema. Linear in its elements: each
    is visited once, and what a leaf's type fields say is worked out once per distinct spelling
    (`leaf_of`), since a wide footer repeats a few."""
    root, tokens, refusal = _tree(elements)
    leaves = _Leaves([], [])
    fields = tuple(_to_field(child, "", (), None, leaves) for child in root.children)
    schema = Schema(fields)
    spark_schema = spark_error = spark_text = None
    if spark_json is not None:
        spark_text = spark_json.decode("utf-8", "replace")
        try:
            spark_schema = schema_from_spark_json(spark_text)
        except SparkSchemaError as e:
            spark_error = str(e)
        if spark_schema is not None and "interval" in spark_text:
            schema = spark_intervals(schema, spark_schema)
    spark = canonical_json(schema_to_notation(spark_schema)) if spark_schema else repr(spark_text)
    digest = hashlib.sha256(repr((tokens, spark)).encode()).hexdigest()[:16]
    return FooterSchema(schema, tuple(leaves.columns), spark_schema, spark_text, spark_error, digest,
                        tuple(leaves.kinds), refusal or _spark_refusal(leaves.columns), (raw, spark_json))


class _Intervals(SchemaTransform):
    def __init__(self, spark: dict[str, IntervalType]) -> None:
        self.spark = spark

    def primitive(self, t: PrimitiveType, path: str) -> DataType:
        named = self.spark.get(path)
        if named is not None and t == IntType(32 if named.months else 64):
            return named
        return t


def spark_intervals(schema: Schema, spark_schema: Schema) -> Schema:
    """The Parquet schema with the ANSI intervals its footer's Spark schema names: Spark writes a
    year-month interval as a plain INT32 of months and a day-time one as a plain INT64 of
    microseconds, and says which they are only there (a plain integer column stays an integer)."""
    named = {path: t for path, t, _ in walk(spark_schema) if isinstance(t, IntervalType)}
    return transform(schema, _Intervals(named)) if named else schema


def _spark_refusal(columns: list[ParquetColumn]) -> str | None:
    """Why Spark (parquet-java 1.16) refuses a footer whose shapes the model has no type for,
    observed on Spark 4.1.4 (tests/test_footer_files.py): a key-only map (its schema converter
    wants a key and a value), a logical type newer than parquet-java (its Thrift decoding of the
    footer fails); a VARIANT of another specification version is found by `_tree`. Types Spark
    refuses by kind (FLOAT16, GEOMETRY...) are `spark_view.spark_view`'s."""
    for c in columns:
        if c.container == "map:key-only":
            map_path = c.path.rpartition(ELEMENT)[0]
            return f"`{map_path}` is a MAP without values: Spark fails with 'Invalid map type'"
        if c.logical_type is not None and c.logical_type.startswith("FIELD_"):
            return (f"`{c.path}` has a logical type parquet-java does not know ({c.logical_type}): "
                    "Spark fails reading the footer")
    return None


def _variant_refusal(e: Element, path: str) -> str | None:
    """A VARIANT group whose specification version is not 1 (absent reads as 0): Spark 4.1.4 fails
    with PARQUET_TYPE_NOT_RECOGNIZED."""
    version = e.logical[1].get(1, 0) if e.logical else 0
    if version == 1:
        return None
    return f"`{path}` is a VARIANT of specification version {version}: Spark reads only version 1 " \
           "(PARQUET_TYPE_NOT_RECOGNIZED)"



@dataclass(slots=True)
class _Node:
    element: Element
    children: list[_Node]
    info: Leaf | None  # a leaf's type fields; None for a group
    definition: int  # max definition level of this node
    repetition_level: int  # max repetition level of this node

    @property
    def leaf(self) -> bool:
        return self.info is not None

    @property
    def name(self) -> str:
        return self.element.name

    @property
    def repetition(self) -> str:
        return self.element.repetition

    def annotation(self) -> str | None:
        """LIST, MAP, MAP_KEY_VALUE or VARIANT on a group, by its logical or converted type."""
        return _group_annotation(self.element)


def _group_annotation(e: Element) -> str | None:
    member = e.logical[0] if e.logical else None
    converted = e.converted
    if member == 3 or converted == 3:
        return "LIST"
    if member == 2 or converted == 1:
        return "MAP"
    if member == 16:
        return "VARIANT"
    return "MAP_KEY_VALUE" if converted == 2 else None


def _tree(raw: list[Any]) -> tuple[_Node, list[tuple[Any, ...]], str | None]:
    """The schema list (depth first, each group followed by its `num_children` children) as a
    tree, with each node's definition and repetition levels; the fingerprint's tokens; a VARIANT
    Spark refuses. Iterative: a footer may nest as deep as its bytes allow.

    The tokens spell every element outside a VARIANT's shredding as what the model and the leaf
    layouts take from it (name, repetition, field id; a group's annotation and size; a leaf's
    `leaf_of` spelling), so two footers share a fingerprint exactly when their model schema and
    layouts agree; Spark 4.1 shreds each file by its values and reads every shredding alike, so
    shredding is no schema version."""
    if not raw:
        raise corrupt("the schema list is empty")
    root_element = parse_element(raw[0], 0)
    root = _Node(root_element, [], None, 0, 0)
    tokens: list[tuple[Any, ...]] = []
    refusal = None
    # (group, its children, children expected, path, inside a VARIANT)
    top: tuple[_Node, list[_Node], int, str, bool] = (root, root.children, root_element.num_children or 0,
                                                     "", False)
    stack = [top]
    for position in range(1, len(raw)):
        e = parse_element(raw[position], position)
        while len(top[1]) == top[2]:
            stack.pop()
            if not stack:
                raise corrupt(f"schema element {position} is beyond the root's children")
            top = stack[-1]
        parent, siblings, _, parent_path, in_variant = top
        children = e.num_children
        if children is None or (children == 0 and e.physical is not None):
            if e.physical is None:
                raise corrupt(f"leaf {e.name!r} has no physical type")
            info = leaf_of(e)
            siblings.append(_Node(e, [], info, parent.definition + (e.repetition != "REQUIRED"),
                                  parent.repetition_level + (e.repetition == "REPEATED")))
            if not in_variant:
                tokens.append((e.name, e.repetition, e.field_id, info.token))
            continue
        node = _Node(e, [], None, parent.definition + (e.repetition != "REQUIRED"),
                     parent.repetition_level + (e.repetition == "REPEATED"))
        siblings.append(node)
        path = join(parent_path, e.name)
        annotation = _group_annotation(e)
        if not in_variant:
            # A VARIANT's size is its shredding's (metadata, value, typed_value...): not spelled.
            tokens.append((e.name, e.repetition, e.field_id, annotation,
                           None if annotation == "VARIANT" else children))
            if annotation == "VARIANT" and refusal is None:
                refusal = _variant_refusal(e, path)
        top = (node, node.children, children, path, in_variant or annotation == "VARIANT")
        stack.append(top)
    if any(len(children) != count for _, children, count, _, _ in stack):
        raise corrupt("the schema list ends inside a group")
    return root, tokens, refusal


@dataclass(frozen=True, slots=True)
class _Leaves:
    """The leaf columns of a footer in the footer's order, and how each one's min/max decode."""

    columns: list[ParquetColumn]
    kinds: list[str]

    def add(self, node: _Node, leaf: Leaf, path: str, ppath: tuple[str, ...],
            container: str | None) -> None:
        e = node.element
        self.columns.append(parquet_column((
            path, ppath, leaf.physical, leaf.type_length, leaf.logical, leaf.converted, leaf.precision,
            leaf.scale, e.repetition, e.field_id, node.definition, node.repetition_level, container)))
        self.kinds.append(leaf.stat_kind)


def _to_field(node: _Node, parent: str, parquet_parent: tuple[str, ...], container: str | None,
              out: _Leaves) -> Field:
    name = node.element.name
    path = join(parent, name)
    ppath = (*parquet_parent, name)
    if node.element.repetition == "REPEATED":
        # A repeated field outside LIST/MAP: a required list of required elements.
        element = _to_type(node, path + ELEMENT, ppath, "repeated", out)
        return new_field(name, ListType(element, False), False, node.element.field_id)
    t = _to_type(node, path, ppath, container, out)
    return new_field(name, t, node.element.repetition == "OPTIONAL", node.element.field_id)


def _to_type(node: _Node, path: str, ppath: tuple[str, ...], container: str | None,
             out: _Leaves) -> DataType:
    if node.info is not None:
        out.add(node, node.info, path, ppath, container)
        return node.info.type
    annotation = node.annotation()
    if annotation == "VARIANT":
        _variant_columns(node, path, ppath, out)
        return VariantType()
    if annotation == "LIST" and len(node.children) == 1:
        return _list_type(node, path, ppath, out)
    if annotation in ("MAP", "MAP_KEY_VALUE") and len(node.children) == 1:
        kv = node.children[0]
        if kv.repetition == "REPEATED" and len(kv.children) == 2:
            # Legacy writers annotate the repeated group too (MAP_KEY_VALUE, or MAP).
            legacy = "MAP_KEY_VALUE" in (annotation, kv.annotation()) or kv.annotation() == "MAP"
            shape = "map:MAP_KEY_VALUE" if legacy else "map"
            kpath = (*ppath, kv.name)
            key_node, value_node = kv.children
            key = _to_type(key_node, path + KEY, (*kpath, key_node.name), shape, out)
            value = _to_type(value_node, path + VALUE, (*kpath, value_node.name), shape, out)
            return MapType(key, value, value_node.repetition == "OPTIONAL")
        if kv.repetition == "REPEATED" and len(kv.children) == 1:
            # A key-only map (a set; LogicalTypes.md allows it): no model map has no value, so it
            # stays a list of its keys' group, and its layout says what the footer holds.
            return ListType(_to_type(kv, path + ELEMENT, (*ppath, kv.name), "map:key-only", out), False)
    return StructType(tuple(_to_field(c, path, ppath, container, out) for c in node.children))


def _variant_columns(node: _Node, path: str, ppath: tuple[str, ...], out: _Leaves) -> None:
    """The physical leaves of a VARIANT group (metadata, value, shredded typed_value...) in the
    footer's order, each a column of the variant's own path: Spark reads the group as one value."""
    stack = [(child, (*ppath, child.name)) for child in reversed(node.children)]
    while stack:
        n, p = stack.pop()
        if n.info is not None:
            out.add(n, n.info, path, p, "variant")
        else:
            stack.extend((child, (*p, child.name)) for child in reversed(n.children))


def _list_type(node: _Node, path: str, ppath: tuple[str, ...], out: _Leaves) -> ListType:
    rep = node.children[0]
    rpath = (*ppath, rep.name)
    two_level = (
        rep.leaf
        or len(rep.children) > 1
        or (len(rep.children) == 1 and rep.children[0].repetition == "REPEATED")
        or rep.name in ("array", node.name + "_tuple")
    )
    if two_level:
        # The repeated field itself is the (required) element, with its own annotation: a
        # primitive, a struct, or a LIST/MAP group (Spark's legacy `array(array(..))` writes
        # `repeated group array (LIST) { repeated int32 array; }`).
        return ListType(_to_type(rep, path + ELEMENT, rpath, "list:2-level", out), False)
    element = rep.children[0]
    etype = _to_type(element, path + ELEMENT, (*rpath, element.name), "list:3-level", out)
    return ListType(etype, element.repetition == "OPTIONAL")

