"""One Parquet footer -> one `FileFooter`, at the Parquet level (not the Arrow level).

The schema part of a footer is parsed once per distinct footer schema (cached by pyarrow's
printed schema tree, which holds every node's repetition, annotation and field id, plus Spark's
schema from the key-value metadata); per file only the scalars and the statistics are read.
That keeps the per-file cost close to pyarrow's own `read_metadata` (parquet-and-spark.md §4, §5).

Group shapes follow the Parquet LIST/MAP backward-compatibility rules (LogicalTypes.md, "Nested
Types"): the standard 3-level list, legacy 2-level lists (`array`, `<name>_tuple`, a repeated
primitive, a repeated multi-field group), maps annotated MAP or MAP_KEY_VALUE, and bare repeated
fields (a required list of required elements).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs
from pyarrow._parquet import ParquetReader  # what pq.ParquetFile wraps; see _read_metadata

from schemaguard.errors import first_line
from schemaguard.formats.notation import schema_to_notation
from schemaguard.formats.spark import SparkSchemaError, schema_from_spark_json
from schemaguard.formats.thrift import (
    CONVERTED_LIST,
    CONVERTED_MAP,
    CONVERTED_MAP_KEY_VALUE,
    SchemaElement,
    ThriftError,
    schema_elements,
)
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
    TimeUnit,
    UuidType,
    canonical_json,
)

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"
MAGIC = b"PAR1"
ENCRYPTED_MAGIC = b"PARE"


class UnreadableFile(Exception):
    """A listed file whose footer cannot be read; `reason` says why in words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ParquetColumn:
    """What the footer says about one leaf column, beyond the model type."""

    path: str  # model path, e.g. `items[].price`
    parquet_path: tuple[str, ...]  # the Parquet node names, e.g. ("items", "list", "element", "price")
    physical_type: str  # BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
    type_length: int | None  # FIXED_LEN_BYTE_ARRAY width
    logical_type: str | None  # e.g. TIMESTAMP(MICROS,utc), DECIMAL(12,2), STRING, INT(16,signed)
    converted_type: str | None  # legacy annotation, e.g. UTF8, TIMESTAMP_MICROS, DECIMAL
    precision: int | None
    scale: int | None
    repetition: str  # REQUIRED, OPTIONAL, REPEATED
    field_id: int | None
    max_definition_level: int
    max_repetition_level: int
    # nearest list/map shape: list:3-level, list:2-level, map, map:MAP_KEY_VALUE, repeated
    container: str | None


class LeafStats(NamedTuple):
    """Statistics of one leaf aggregated over row groups. `min`/`max` are physical values made
    comparable: integers (also for dates, timestamps, times and unscaled decimals), floats,
    booleans or bytes; `complete` is False when some row group lacked them."""

    null_count: int | None
    min: Any
    max: Any
    complete: bool


@dataclass(frozen=True, slots=True)
class FooterSchema:
    """The schema part of a footer, shared by every file with the same footer schema."""

    schema: Schema
    columns: tuple[ParquetColumn, ...]
    spark_schema: Schema | None
    spark_schema_json: str | None
    spark_schema_error: str | None
    fingerprint: str
    stat_kinds: tuple[str, ...]  # per leaf, how to make raw min/max comparable (see _stat_kinds)


class FileFooter(NamedTuple):
    """One file's footer. A NamedTuple: the local engine pickles one per file back from its
    workers, and tuples pickle several times faster than dataclasses."""

    path: str  # as given to the reader (absolute path or URI)
    rel: str  # relative to the table root
    partition: tuple[tuple[str, str | None], ...]
    size: int
    mtime: float | None
    rows: int
    row_groups: int
    created_by: str | None
    footer: FooterSchema
    stats: tuple[LeafStats, ...]
    kv_keys: tuple[str, ...]

    @property
    def schema(self) -> Schema:
        return self.footer.schema

    @property
    def fingerprint(self) -> str:
        return self.footer.fingerprint


# ---------------------------------------------------------------------------------------------
# Reading


def read_footer(
    path: str,
    *,
    rel: str | None = None,
    filesystem: pafs.FileSystem | None = None,
    size: int | None = None,
    mtime: float | None = None,
    partition: tuple[tuple[str, str | None], ...] = (),
) -> FileFooter:
    """Read one file's footer. Raises `UnreadableFile` with a reason a person understands."""
    if size == 0:
        raise UnreadableFile("zero-byte file (an unfinished or failed write)")
    if filesystem is None:
        _regular_file(path)
    try:
        md = _read_metadata(path, filesystem)
    except FileNotFoundError:
        raise UnreadableFile("vanished: listed, but gone when its footer was read") from None
    except PermissionError:
        raise UnreadableFile("cannot be opened: permission denied") from None
    except (OSError, pa.ArrowException) as e:
        raise UnreadableFile(_diagnose(path, filesystem, e)) from None
    kv = md.metadata or {}
    footer = _known_footer(md.schema, kv.get(SPARK_SCHEMA_KEY), lambda: _footer_bytes(path, filesystem))
    return FileFooter(  # positional: this runs once per file, keywords cost measurably
        path,
        path if rel is None else rel,
        partition,
        _size(path, filesystem) if size is None else size,
        mtime,
        md.num_rows,
        md.num_row_groups,
        _shared(md.created_by),
        footer,
        _statistics(md, footer.stat_kinds),
        _kv_keys(tuple(kv)),
    )


_SHARED: dict[Any, Any] = {}
_KV_KEYS: dict[tuple[bytes, ...], tuple[str, ...]] = {}


def _kv_keys(raw: tuple[bytes, ...]) -> tuple[str, ...]:
    """Key-value metadata keys as text, decoded once per distinct set of keys."""
    found = _KV_KEYS.get(raw)
    if found is None:
        found = _KV_KEYS[raw] = tuple(k.decode("utf-8", "replace") for k in raw)
    return found


def _shared(value: Any) -> Any:
    """One object for equal values that repeat in every footer (writer, key-value keys), so a
    chunk of footers pickles each once."""
    return _SHARED.setdefault(value, value)


def _read_metadata(path: str, filesystem: pafs.FileSystem | None) -> pq.FileMetaData:
    """The footer alone. `pq.read_metadata` goes through `ParquetFile`, whose Python set-up (path
    resolution, the nested-path maps it builds for reading data) costs as much as the footer read
    itself on small files; pyarrow's own reader class does only the read (bench/footer_scan.py)."""
    reader = ParquetReader()
    if filesystem is None:
        reader.open(path)
    else:
        with filesystem.open_input_file(path) as f:
            reader.open(f)
    return reader.metadata


def _regular_file(path: str) -> None:
    """A local path must be a regular file with a UTF-8 name: opening a FIFO blocks forever (it can
    replace a listed file at any time), and pyarrow opens only UTF-8 paths."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise UnreadableFile("name is not valid UTF-8: pyarrow cannot open it") from None
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UnreadableFile("vanished: listed, but gone when its footer was read") from None
    except PermissionError:
        raise UnreadableFile("cannot be opened: permission denied") from None
    if not stat.S_ISREG(mode):
        raise UnreadableFile("not a regular file (a FIFO, socket or device took its place)")


def _size(path: str, filesystem: pafs.FileSystem | None) -> int:
    fs, p = (filesystem, path) if filesystem else pafs.FileSystem.from_uri(_as_uri(path))
    return int(fs.get_file_info(p).size or 0)


def _diagnose(path: str, filesystem: pafs.FileSystem | None, error: Exception) -> str:
    """Tell truncated files from non-Parquet files from corrupt footers by their magic bytes."""
    try:
        fs, p = (filesystem, path) if filesystem else pafs.FileSystem.from_uri(_as_uri(path))
        with fs.open_input_file(p) as f:
            n = f.size()
            head = f.read_at(4, 0) if n >= 4 else b""
            window = min(n - 4, 65536)  # the end of the file, for a footer that is not at the end
            end = f.read_at(window, n - window) if n >= 8 else b""
            tail = end[-4:]
    except FileNotFoundError:
        return "vanished: listed, but gone when its footer was read"
    except (OSError, pa.ArrowException) as e:
        return f"cannot be opened: {first_line(e)}"
    if n < 12:
        return f"too small to be Parquet ({n} bytes)"
    if tail == ENCRYPTED_MAGIC:
        return "encrypted footer (PARE): cannot be read without its key"
    if head != MAGIC and tail != MAGIC:
        return "not a Parquet file (no PAR1 magic at head or tail)"
    if head == MAGIC and tail != MAGIC:
        if MAGIC in end:
            return "bytes appended after the footer: the file does not end in PAR1"
        return "truncated: starts as Parquet but has no footer (the write did not finish)"
    return f"corrupt footer: {first_line(error)}"


def _as_uri(path: str) -> str:
    return path if "://" in path else "file://" + path


# ---------------------------------------------------------------------------------------------
# The schema part, parsed once per distinct (printed schema, Spark schema)


# Bounded by the number of distinct footer schemas in a process, which is small even on huge lakes.
_FOOTERS: dict[tuple[bytes, bytes | None], FooterSchema] = {}


_RECENT: list[tuple[pq.ParquetSchema, bytes | None, FooterSchema]] = []  # most recent first
RECENT_SCHEMAS = 8
MAX_FOOTER_BYTES = 256 * 2**20  # a footer claiming more is corrupt: refused before allocating


def _known_footer(pq_schema: pq.ParquetSchema, spark_json: bytes | None,
                  footer_bytes: Callable[[], bytes]) -> FooterSchema:
    """The footer schema of a file, comparing its Parquet schema structurally (C++, well under a
    microsecond) with the few seen last before decoding the footer's bytes: files of one table
    share a handful of schemas, so the footer bytes are read again only for a schema not seen
    lately."""
    for i, (seen, seen_spark, found) in enumerate(_RECENT):
        if seen_spark == spark_json and seen.equals(pq_schema):
            if i:
                _RECENT.insert(0, _RECENT.pop(i))
            return found
    try:
        elements, raw = schema_elements(footer_bytes())
    except ThriftError as e:
        raise UnreadableFile(f"corrupt footer: {e}") from None
    key = (raw, spark_json)
    if key not in _FOOTERS:
        _FOOTERS[key] = _parse_footer_schema(elements, spark_json, pq_schema)
    found = _FOOTERS[key]
    _RECENT.insert(0, (pq_schema, spark_json, found))
    del _RECENT[RECENT_SCHEMAS:]
    return found


def forget_footer_schemas() -> None:
    """Empty every per-process cache of footer parts (for benchmarks that time a cold scan)."""
    for cache in (_RECENT, _FOOTERS, _SHARED, _KV_KEYS):
        cache.clear()


def _footer_bytes(path: str, filesystem: pafs.FileSystem | None) -> bytes:
    """The serialized FileMetaData at the end of the file, its claimed length checked before reading."""
    fs, p = (filesystem, path) if filesystem else (pafs.LocalFileSystem(), path)
    with fs.open_input_file(p) as f:
        size = f.size()
        tail = f.read_at(8, size - 8) if size >= 8 else b""
        length = int.from_bytes(tail[:4], "little") if len(tail) == 8 else -1
        if not 0 < length <= min(size - 12, MAX_FOOTER_BYTES):
            raise UnreadableFile(f"corrupt footer: a footer length of {length} bytes in a file of {size}")
        return bytes(f.read_at(length, size - 8 - length))


def _parse_footer_schema(
    elements: list[SchemaElement], spark_json: bytes | None, pq_schema: pq.ParquetSchema
) -> FooterSchema:
    leaves = [pq_schema.column(i) for i in range(len(pq_schema))]
    root = _tree(elements)
    columns: list[ParquetColumn] = []
    fields = tuple(_to_field(child, "", (), None, leaves, columns) for child in root.children)
    schema = Schema(fields)
    spark_schema = spark_error = spark_text = None
    if spark_json is not None:
        spark_text = spark_json.decode("utf-8", "replace")
        try:
            spark_schema = schema_from_spark_json(spark_text)
        except SparkSchemaError as e:
            spark_error = str(e)
    ident = {
        "schema": schema_to_notation(schema),
        "columns": [_physical_key(c) for c in columns],
        "spark": schema_to_notation(spark_schema) if spark_schema else spark_text,
    }
    digest = hashlib.sha256(canonical_json(ident).encode()).hexdigest()[:16]
    return FooterSchema(schema, tuple(columns), spark_schema, spark_text, spark_error, digest,
                        _stat_kinds(columns))


def _physical_key(c: ParquetColumn) -> list[Any]:
    """What makes two leaves with the same model type differ on disk (backing, annotation, shape)."""
    return [c.path, c.physical_type, c.type_length, c.logical_type, c.converted_type, c.container]


@dataclass
class _Node:
    name: str
    repetition: str
    field_id: int | None
    annotation: str | None  # LIST, MAP or MAP_KEY_VALUE on a group, by its logical or converted type
    children: list[_Node]
    leaf: int | None  # index into the footer's leaf columns


def _tree(elements: list[SchemaElement]) -> _Node:
    """The schema list (depth first, each group followed by its `num_children` children) as a tree;
    names are the bytes as written, decoded as UTF-8 with replacement characters."""
    position = 0
    next_leaf = 0

    def node() -> _Node:
        nonlocal position, next_leaf
        if position >= len(elements):
            raise UnreadableFile("corrupt footer: the schema list ends inside a group")
        e = elements[position]
        position += 1
        name = e.name.decode("utf-8", "replace")
        repetition = e.repetition or "REQUIRED"
        if e.num_children is None:
            next_leaf += 1
            return _Node(name, repetition, e.field_id, None, [], next_leaf - 1)
        children = [node() for _ in range(e.num_children)]
        return _Node(name, repetition, e.field_id, _group_annotation(e), children, None)

    root = node()
    if position != len(elements):
        raise UnreadableFile("corrupt footer: schema elements beyond the root's children")
    return root


def _group_annotation(e: SchemaElement) -> str | None:
    if e.logical_type == "LIST" or e.converted_type == CONVERTED_LIST:
        return "LIST"
    if e.logical_type == "MAP" or e.converted_type == CONVERTED_MAP:
        return "MAP"
    return "MAP_KEY_VALUE" if e.converted_type == CONVERTED_MAP_KEY_VALUE else None


def _to_field(
    node: _Node,
    parent: str,
    parquet_parent: tuple[str, ...],
    container: str | None,
    leaves: list[Any],
    out: list[ParquetColumn],
) -> Field:
    path = f"{parent}.{node.name}" if parent else node.name
    ppath = (*parquet_parent, node.name)
    if node.repetition == "REPEATED":
        # A repeated field outside LIST/MAP: a required list of required elements.
        element = _to_type(node, path + "[]", ppath, "repeated", leaves, out)
        return Field(node.name, ListType(element, False), False, node.field_id)
    t = _to_type(node, path, ppath, container, leaves, out)
    return Field(node.name, t, node.repetition == "OPTIONAL", node.field_id)


def _to_type(
    node: _Node,
    path: str,
    ppath: tuple[str, ...],
    container: str | None,
    leaves: list[Any],
    out: list[ParquetColumn],
) -> DataType:
    if node.leaf is not None:
        col = leaves[node.leaf]
        out.append(_column(col, node, path, ppath, container))
        return _leaf_type(col)
    if node.annotation == "LIST" and len(node.children) == 1:
        return _list_type(node, path, ppath, leaves, out)
    if node.annotation in ("MAP", "MAP_KEY_VALUE") and len(node.children) == 1:
        kv = node.children[0]
        if kv.repetition == "REPEATED" and len(kv.children) == 2:
            # Legacy writers annotate the repeated group too (MAP_KEY_VALUE, or MAP).
            legacy = "MAP_KEY_VALUE" in (node.annotation, kv.annotation) or kv.annotation == "MAP"
            shape = "map:MAP_KEY_VALUE" if legacy else "map"
            kpath = (*ppath, kv.name)
            key = _to_type(kv.children[0], path + "{key}", (*kpath, kv.children[0].name), shape,
                           leaves, out)
            value_node = kv.children[1]
            value = _to_type(value_node, path + "{value}", (*kpath, value_node.name), shape,
                             leaves, out)
            return MapType(key, value, value_node.repetition == "OPTIONAL")
    return StructType(tuple(_to_field(c, path, ppath, container, leaves, out) for c in node.children))


def _list_type(
    node: _Node, path: str, ppath: tuple[str, ...], leaves: list[Any], out: list[ParquetColumn]
) -> ListType:
    rep = node.children[0]
    rpath = (*ppath, rep.name)
    two_level = (
        rep.leaf is not None
        or len(rep.children) > 1
        or (len(rep.children) == 1 and rep.children[0].repetition == "REPEATED")
        or rep.name in ("array", node.name + "_tuple")
    )
    if two_level:
        # The repeated field itself is the (required) element, with its own annotation: a
        # primitive, a struct, or a LIST/MAP group (Spark's legacy `array(array(..))` writes
        # `repeated group array (LIST) { repeated int32 array; }`).
        return ListType(_to_type(rep, path + "[]", rpath, "list:2-level", leaves, out), False)
    element = rep.children[0]
    etype = _to_type(element, path + "[]", (*rpath, element.name), "list:3-level", leaves, out)
    return ListType(etype, element.repetition == "OPTIONAL")


def _column(col: Any, node: _Node, path: str, ppath: tuple[str, ...], container: str | None) -> ParquetColumn:
    converted = col.converted_type
    return ParquetColumn(
        path=path,
        parquet_path=ppath,
        physical_type=col.physical_type,
        type_length=col.length if col.physical_type == "FIXED_LEN_BYTE_ARRAY" else None,
        logical_type=_logical_label(col),
        converted_type=None if converted == "NONE" else converted,
        precision=col.precision if col.precision >= 0 else None,
        scale=col.scale if col.precision >= 0 else None,
        repetition=node.repetition,
        field_id=node.field_id,
        max_definition_level=col.max_definition_level,
        max_repetition_level=col.max_repetition_level,
        container=container,
    )


_UNITS: dict[str, TimeUnit] = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
_PARQUET_UNITS = {"milliseconds": "MILLIS", "microseconds": "MICROS", "nanoseconds": "NANOS"}


def _logical_label(col: Any) -> str | None:
    doc = json.loads(col.logical_type.to_json())
    kind = doc.pop("Type")
    if kind == "None":
        return None
    if kind == "Null" and col.physical_type == "FIXED_LEN_BYTE_ARRAY" and col.length == 12:
        return "INTERVAL"  # pyarrow shows the legacy INTERVAL converted type as an unknown type
    if kind in ("Timestamp", "Time"):
        unit = _PARQUET_UNITS[doc["timeUnit"]]
        return f"{kind.upper()}({unit},{'utc' if doc['isAdjustedToUTC'] else 'local'})"
    if kind == "Decimal":
        return f"DECIMAL({doc['precision']},{doc['scale']})"
    if kind == "Int":
        return f"INT({doc['bitWidth']},{'signed' if doc['isSigned'] else 'unsigned'})"
    return str(kind).upper()


def _leaf_type(col: Any) -> DataType:
    """Model type of a leaf from its physical type and annotation (LogicalTypes.md table)."""
    physical = col.physical_type
    lt = json.loads(col.logical_type.to_json())
    kind = lt["Type"]
    if kind == "Decimal":
        return DecimalType(lt["precision"], lt["scale"])
    if kind == "Int":
        return IntType(lt["bitWidth"], lt["isSigned"])
    if kind == "Timestamp":
        return TimestampType(_UNITS[lt["timeUnit"]], lt["isAdjustedToUTC"])
    if kind == "Time":
        return TimeType(_UNITS[lt["timeUnit"]])
    simple: dict[str, DataType] = {
        "String": StringType(), "Enum": EnumType(()), "JSON": JsonType(), "BSON": BinaryType(),
        "Date": DateType(), "UUID": UuidType(), "Float16": FloatType(16),
    }
    if kind in simple:
        return simple[kind]
    by_physical: dict[str, DataType] = {
        "BOOLEAN": BooleanType(), "INT32": IntType(32), "INT64": IntType(64), "INT96": Int96Type(),
        "FLOAT": FloatType(32), "DOUBLE": FloatType(64), "BYTE_ARRAY": BinaryType(),
    }
    if physical == "FIXED_LEN_BYTE_ARRAY":
        return FixedType(col.length)
    return by_physical[physical]  # Null/Unknown annotation and un-annotated leaves


# ---------------------------------------------------------------------------------------------
# Statistics


def _stat_kinds(columns: list[ParquetColumn]) -> tuple[str, ...]:
    """How to make each leaf's raw min/max comparable (and whether they mean anything)."""
    kinds = []
    for c in columns:
        lt = c.logical_type or ""
        if c.physical_type == "INT96":
            kinds.append("none")  # INT96 min/max are only meaningful under Int96TimestampOrder
        elif lt.startswith("DECIMAL") and c.physical_type in ("FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY"):
            kinds.append("be-int")
        elif lt == "INT(32,unsigned)" or c.converted_type == "UINT_32":
            kinds.append("u32")
        elif lt == "INT(64,unsigned)" or c.converted_type == "UINT_64":
            kinds.append("u64")
        else:
            kinds.append("raw")
    return tuple(kinds)


def _norm(kind: str, value: Any) -> Any:
    if kind == "raw":
        return value
    if kind == "be-int":
        return int.from_bytes(value, "big", signed=True)
    if kind == "u32":
        return value & 0xFFFFFFFF
    if kind == "u64":
        return value & 0xFFFFFFFFFFFFFFFF
    return None


def _statistics(md: pq.FileMetaData, kinds: tuple[str, ...]) -> tuple[LeafStats, ...]:
    if md.num_row_groups == 0:
        return tuple(LeafStats(0, None, None, True) for _ in kinds)
    stats = _row_group_stats(md.row_group(0), kinds)
    for r in range(1, md.num_row_groups):
        stats = tuple(map(_combine, stats, _row_group_stats(md.row_group(r), kinds)))
    return stats


def _row_group_stats(rg: Any, kinds: tuple[str, ...]) -> tuple[LeafStats, ...]:
    column = rg.column
    return tuple([_leaf_stats(column(j).statistics, kind) for j, kind in enumerate(kinds)])


def _leaf_stats(s: Any, kind: str) -> LeafStats:
    if s is None:
        return LeafStats(None, None, None, False)
    nulls = s.null_count if s.has_null_count else None
    if kind == "none" or not s.has_min_max:
        # A row group of nulls only has no min/max and loses nothing by it.
        return LeafStats(nulls, None, None, nulls is not None and kind != "none" and s.num_values == 0)
    if kind == "raw":
        return LeafStats(nulls, s.min_raw, s.max_raw, nulls is not None)
    return LeafStats(nulls, _norm(kind, s.min_raw), _norm(kind, s.max_raw), nulls is not None)


def _combine(a: LeafStats, b: LeafStats) -> LeafStats:
    """Two row groups' statistics of one leaf as one."""
    nulls = None if a.null_count is None or b.null_count is None else a.null_count + b.null_count
    lows = [x for x in (a.min, b.min) if x is not None]
    highs = [x for x in (a.max, b.max) if x is not None]
    return LeafStats(nulls, min(lows) if lows else None, max(highs) if highs else None,
                     a.complete and b.complete)
