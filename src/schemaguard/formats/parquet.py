"""One Parquet footer -> one `FileFooter`, read from the footer's own bytes.

The file's tail is read once (as parquet-cpp does: the last 64 KiB, or the whole footer when it
is longer) and its `FileMetaData` decoded by `formats/thrift.py`; no library's reading of the
footer stands between the bytes and what is reported, so every logical type, converted type,
name, field id, statistic and encryption marker is the one written. Field ids below are those of
apache/parquet-format `src/main/thrift/parquet.thrift` (docs/reference/parquet-and-spark.md §1).

The schema part of a footer is parsed once per distinct schema (keyed by its exact bytes, plus
Spark's schema from the key-value metadata); per file only the row groups are decoded.

Group shapes follow the Parquet LIST/MAP backward-compatibility rules (LogicalTypes.md, "Nested
Types"): the standard 3-level list, legacy 2-level lists (`array`, `<name>_tuple`, a repeated
primitive, a repeated multi-field group), maps annotated MAP or MAP_KEY_VALUE, and bare repeated
fields (a required list of required elements).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import pickle
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from struct import Struct
from typing import TYPE_CHECKING, Any, NamedTuple

from schemaguard.errors import first_line
from schemaguard.formats.notation import schema_to_notation
from schemaguard.formats.spark import SparkSchemaError, schema_from_spark_json
from schemaguard.formats.thrift import Keep, ThriftError, decode_file_metadata, decode_struct
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
    GeographyType,
    GeometryType,
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
    VariantType,
    canonical_json,
    join,
    new_field,
)

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"
MAGIC = b"PAR1"
ENCRYPTED_MAGIC = b"PARE"
TAIL_BYTES = 64 * 1024  # read at once from the end of a file: parquet-cpp's default footer_read_size
MAX_FOOTER_BYTES = 256 * 2**20  # a footer claiming more is corrupt: refused before allocating

# parquet.thrift enums, by value.
PHYSICAL_TYPES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                  "FIXED_LEN_BYTE_ARRAY")
CONVERTED_TYPES = (
    "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS", "TIME_MICROS",
    "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8",
    "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL",
)
REPETITIONS = ("REQUIRED", "OPTIONAL", "REPEATED")
EDGE_ALGORITHMS = ("SPHERICAL", "VINCENTY", "THOMAS", "ANDOYER", "KARNEY")
ENCRYPTION_ALGORITHMS = {1: "AES_GCM_V1", 2: "AES_GCM_CTR_V1"}
# `LogicalType` union members without parameters, by field id (parameterised ones: _logical_label).
SIMPLE_LOGICAL = {1: "STRING", 2: "MAP", 3: "LIST", 4: "ENUM", 6: "DATE", 11: "UNKNOWN", 12: "JSON",
                  13: "BSON", 14: "UUID", 15: "FLOAT16", 19: "FILE"}
_TIME_UNITS: dict[int, tuple[str, TimeUnit]] = {1: ("MILLIS", "ms"), 2: ("MICROS", "us"),
                                                3: ("NANOS", "ns")}

if TYPE_CHECKING:
    from pyarrow import fs as pafs


class UnreadableFile(Exception):
    """A listed file whose footer cannot be read; `reason` says why in words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _corrupt(why: str) -> UnreadableFile:
    return UnreadableFile(f"corrupt footer: {why}")


class ParquetColumn(NamedTuple):
    """What the footer says about one leaf column, beyond the model type. A NamedTuple: a wide
    footer holds tens of thousands, pickled back from a worker (dataclasses with slots unpickle
    several times slower)."""

    path: str  # model path, e.g. `items[].price`; inside a variant, the variant's own path
    parquet_path: tuple[str, ...]  # the Parquet node names, e.g. ("items", "list", "element", "price")
    physical_type: str  # BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
    type_length: int | None  # FIXED_LEN_BYTE_ARRAY width
    logical_type: str | None  # as written, e.g. TIMESTAMP(MICROS,utc), DECIMAL(12,2), FIELD_25
    converted_type: str | None  # as written, e.g. UTF8, TIMESTAMP_MICROS, DECIMAL
    precision: int | None
    scale: int | None
    repetition: str  # REQUIRED, OPTIONAL, REPEATED
    field_id: int | None
    max_definition_level: int
    max_repetition_level: int
    # nearest list/map shape: list:3-level, list:2-level, map, map:MAP_KEY_VALUE, map:key-only,
    # repeated, variant
    container: str | None


def _parquet_column(values: tuple[Any, ...]) -> ParquetColumn:
    return tuple.__new__(ParquetColumn, values)


class LeafStats(NamedTuple):
    """Statistics of one leaf aggregated over row groups. `min`/`max` are physical values made
    comparable: integers (also for dates, timestamps, times and unscaled decimals), floats,
    booleans or bytes; `complete` is False when some row group lacked them (or the column is
    encrypted); `exact` is False when a writer marked a bound inexact (a truncated string), None
    when no row group said."""

    null_count: int | None
    min: Any
    max: Any
    complete: bool
    exact: bool | None = None


@dataclass(frozen=True, slots=True)
class FooterSchema:
    """The schema part of a footer, shared by every file with the same footer schema."""

    schema: Schema
    columns: tuple[ParquetColumn, ...]
    spark_schema: Schema | None
    spark_schema_json: str | None
    spark_schema_error: str | None
    fingerprint: str
    stat_kinds: tuple[str, ...]  # per leaf, how to decode its min/max bytes (see _stat_kind)
    spark_refusal: str | None = None  # why Spark cannot read this footer at all (see _spark_refusal)
    # What it was parsed from: the exact bytes of the footer's schema list and its Spark schema, so
    # that the incremental cache (lake/cache.py) keeps the footer as written, not a copy of ours.
    source: tuple[bytes, bytes | None] | None = field(default=None, compare=False, repr=False)

    def __reduce__(self) -> tuple[Callable[..., FooterSchema], tuple[Any, ...]]:
        # Leaves as plain tuples: a NamedTuple pickles through its 13-argument constructor, three
        # times slower, and a wide footer sends tens of thousands from its worker.
        return _footer_schema, (self.schema, tuple(map(tuple, self.columns)), self.spark_schema,
                                self.spark_schema_json, self.spark_schema_error, self.fingerprint,
                                self.stat_kinds, self.spark_refusal, self.source)


def _footer_schema(schema: Schema, columns: tuple[tuple[Any, ...], ...], *rest: Any) -> FooterSchema:
    return FooterSchema(schema, tuple(map(_parquet_column, columns)), *rest)


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
    encrypted: tuple[str, ...] = ()  # leaf paths whose column metadata is encrypted in this file

    @property
    def schema(self) -> Schema:
        return self.footer.schema

    @property
    def fingerprint(self) -> str:
        return self.footer.fingerprint


# What a worker sends back for one footer: the fields its parent does not know from the listing
# (size as read, rows, row groups, created_by, footer schema, statistics encoded by
# `encode_stats`, key-value keys, encrypted leaves). The parent keeps the statistics as the bytes
# they arrive as (lake/compact.py), so it never builds a file's statistics it is not asked for.
Packed = tuple[int, int, int, "str | None", FooterSchema, bytes, tuple[str, ...], tuple[str, ...]]


def pack(f: FileFooter) -> Packed:
    """One footer as a worker sends it (see `Packed`)."""
    return (f.size, f.rows, f.row_groups, f.created_by, f.footer, encode_stats(f.stats), f.kv_keys,
            f.encrypted)


def encode_stats(stats: Iterable[Sequence[Any]]) -> bytes:
    """A file's statistics as bytes. marshal keeps ints, floats, bools, bytes and None exactly and
    is several times faster than pickle; a value marshal refuses goes through pickle."""
    plain = tuple(map(tuple, stats))
    try:
        return marshal.dumps(plain)
    except ValueError:
        return pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)


_PICKLED = b"\x80"  # pickle's first byte from protocol 2 on; never a marshal type code
_LEAF_STATS = partial(tuple.__new__, LeafStats)


def decode_stats(blob: bytes) -> tuple[LeafStats, ...]:
    """What `encode_stats` encoded."""
    plain = pickle.loads(blob) if blob[:1] == _PICKLED else marshal.loads(blob)
    return tuple(map(_LEAF_STATS, plain))


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
    actual, data = _local_footer(path) if filesystem is None else _remote_footer(path, filesystem)
    try:
        meta, raw_schema = decode_file_metadata(data, _RECENT, _SCANNED)
        kv = _key_values(meta.get(5))
        footer = _known_footer(raw_schema, meta[2], kv.get(SPARK_SCHEMA_KEY))
        rows = meta.get(3)
        if not isinstance(rows, int) or rows < 0:
            raise _corrupt(f"the file claims {rows} rows")
        groups = meta.get(4)
        if not isinstance(groups, list):
            raise _corrupt("no row group list")
        stats, encrypted = _statistics(groups, footer)
    except ThriftError as e:
        raise _corrupt(str(e)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        # A field of the wrong Thrift type where the parse expects another: the footer is corrupt.
        raise _corrupt(f"{type(e).__name__}: {first_line(e)}") from None
    created_by = meta.get(6)
    return FileFooter(  # positional: this runs once per file, keywords cost measurably
        path,
        path if rel is None else rel,
        partition,
        actual,
        mtime,
        rows,
        len(groups),
        _text(created_by) if isinstance(created_by, bytes) else None,
        footer,
        stats,
        _kv_keys(tuple(kv)),
        encrypted,
    )


# The parts of a footer a scan uses (parquet.thrift field ids), built; everything else is walked
# over: FileMetaData 3 num_rows, 4 row_groups, 5 key_value_metadata, 6 created_by; RowGroup
# 1 columns, 3 num_rows; ColumnChunk 3 meta_data, 8 crypto_metadata, 9 encrypted_column_metadata;
# ColumnMetaData 5 num_values, 12 statistics.
_SCANNED: Keep = {3: None, 4: {1: {3: {5: None, 12: None}, 8: None, 9: None}, 3: None}, 5: None, 6: None}

_SHARED: dict[Any, Any] = {}
_KV_KEYS: dict[tuple[bytes, ...], tuple[str, ...]] = {}


def _kv_keys(raw: tuple[bytes, ...]) -> tuple[str, ...]:
    """Key-value metadata keys as text, decoded once per distinct set of keys."""
    found = _KV_KEYS.get(raw)
    if found is None:
        found = _KV_KEYS[raw] = tuple(k.decode("utf-8", "replace") for k in raw)
    return found


def _text(raw: bytes) -> str:
    """Bytes that should be UTF-8 as text, one object per distinct value (the writer repeats in
    every footer, and a chunk of footers then pickles it once); bad bytes become U+FFFD."""
    found = _SHARED.get(raw)
    if found is None:
        found = _SHARED[raw] = raw.decode("utf-8", "replace")
    return str(found)


def _key_values(raw: Any) -> dict[bytes, bytes | None]:
    """`key_value_metadata`: a list of KeyValue {1: key, 2: value}."""
    if raw is None:
        return {}
    if not isinstance(raw, list) or not all(isinstance(kv, dict) and isinstance(kv.get(1), bytes)
                                            for kv in raw):
        raise _corrupt("malformed key-value metadata")
    return {kv[1]: kv.get(2) if isinstance(kv.get(2), bytes) else None for kv in raw}


def _local_footer(path: str) -> tuple[int, bytes]:
    """A local file's size and footer bytes. Opened non-blocking and checked with fstat: opening
    a FIFO that took a listed file's place would otherwise block forever. Names that are not UTF-8
    arrive as surrogate-escaped text, which `os` opens as the original bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UnreadableFile("vanished: listed, but gone when its footer was read") from None
    except PermissionError:
        raise UnreadableFile("cannot be opened: permission denied") from None
    except OSError as e:
        raise UnreadableFile(f"cannot be opened: {e.strerror or first_line(e)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile("not a regular file (a FIFO, socket or device took its place)")
        return st.st_size, _footer_bytes(st.st_size, lambda n, at: os.pread(fd, n, at))
    except OSError as e:
        raise UnreadableFile(f"cannot be read: {e.strerror or first_line(e)}") from None
    finally:
        os.close(fd)


def _remote_footer(path: str, filesystem: pafs.FileSystem) -> tuple[int, bytes]:
    try:
        with filesystem.open_input_file(path) as f:
            size = f.size()
            return size, _footer_bytes(size, lambda n, at: bytes(f.read_at(n, at)))
    except FileNotFoundError:
        raise UnreadableFile("vanished: listed, but gone when its footer was read") from None
    except PermissionError:
        raise UnreadableFile("cannot be opened: permission denied") from None
    except OSError as e:
        raise UnreadableFile(f"cannot be read: {first_line(e)}") from None


def _footer_bytes(size: int, read_at: Callable[[int, int], bytes]) -> bytes:
    """The serialized FileMetaData: the tail read once, its claimed length checked against the
    file and a cap before anything larger is read; files that are not plain Parquet named."""
    if size == 0:
        raise UnreadableFile("zero-byte file (an unfinished or failed write)")
    if size < 12:
        raise UnreadableFile(f"too small to be Parquet ({size} bytes)")
    n = min(size, TAIL_BYTES)
    tail = read_at(n, size - n)
    if len(tail) < n:
        raise UnreadableFile("truncated while being read (the file shrank)")
    if tail[-4:] != MAGIC:
        # The head magic is not evidence of a footer: look for PAR1 only after it.
        raise UnreadableFile(_not_parquet(tail[4:] if n == size else tail, read_at(4, 0)))
    length = int.from_bytes(tail[-8:-4], "little")
    if not 0 < length <= size - 12 or length > MAX_FOOTER_BYTES:
        raise _corrupt(f"a footer length of {length} bytes in a file of {size}")
    if length + 8 <= n:
        return tail[n - 8 - length:n - 8]
    return read_at(length, size - 8 - length)


def _not_parquet(tail: bytes, head: bytes) -> str:
    """Why a file that does not end in PAR1 is no plain Parquet file, from its magic bytes."""
    if tail[-4:] == ENCRYPTED_MAGIC:
        return f"encrypted footer (PARE{_algorithm(tail)}): cannot be read without its key"
    if head != MAGIC:
        return "not a Parquet file (no PAR1 magic at head or tail)"
    if MAGIC in tail:
        return "bytes appended after the footer: the file does not end in PAR1"
    return "truncated: starts as Parquet but has no footer (the write did not finish)"


def _algorithm(tail: bytes) -> str:
    """`, AES_GCM_V1` from an encrypted footer's plaintext FileCryptoMetaData, when readable."""
    length = int.from_bytes(tail[-8:-4], "little")
    if not 0 < length <= len(tail) - 8:
        return ""
    try:
        crypto, _ = decode_struct(tail, len(tail) - 8 - length)
    except ThriftError:
        return ""
    member = next(iter(crypto.get(1) or {}), None) if isinstance(crypto.get(1), dict) else None
    return f", {ENCRYPTION_ALGORITHMS.get(member, f'algorithm {member}')}" if member else ""


# ---------------------------------------------------------------------------------------------
# The schema part, parsed once per distinct (schema bytes, Spark schema)


# Bounded by the number of distinct footer schemas in a process, which is small even on huge lakes.
_FOOTERS: dict[tuple[bytes, bytes | None], FooterSchema] = {}
_ELEMENTS: dict[bytes, list[dict[int, Any]]] = {}
_RECENT: list[bytes] = []  # schema bytes seen lately, most recent first: compared before decoding
RECENT_SCHEMAS = 8


def _known_footer(raw: bytes, decoded: list[Any] | None, spark_json: bytes | None) -> FooterSchema:
    """The footer schema for these schema bytes (decoded now, or skipped because they equal a
    recent schema's) and this Spark schema."""
    found = _FOOTERS.get((raw, spark_json))
    if found is None:
        elements = _ELEMENTS.get(raw) if decoded is None else decoded
        if elements is None:
            raise _corrupt("schema bytes matched a schema no longer cached")  # cannot happen
        _ELEMENTS[raw] = elements
        found = _FOOTERS[(raw, spark_json)] = _parse_footer_schema(elements, spark_json, raw)
    if not _RECENT or _RECENT[0] != raw:
        if raw in _RECENT:
            _RECENT.remove(raw)
        _RECENT.insert(0, raw)
        del _RECENT[RECENT_SCHEMAS:]
    return found


def footer_schema_from(source: tuple[bytes, bytes | None]) -> FooterSchema:
    """The footer schema parsed from what `FooterSchema.source` keeps, as a footer read gives it.
    Raises `UnreadableFile` when the bytes are not a schema list."""
    raw, spark_json = source
    try:  # the list alone, as field 2 of an otherwise empty FileMetaData (compact protocol)
        meta, _ = decode_file_metadata(b"\x29" + raw + b"\x00", [], {})
        return _known_footer(raw, meta[2], spark_json)
    except ThriftError as e:
        raise _corrupt(str(e)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as e:
        raise _corrupt(f"{type(e).__name__}: {first_line(e)}") from None


def forget_footer_schemas() -> None:
    """Empty every per-process cache of footer parts (for benchmarks that time a cold scan)."""
    for cache in (_RECENT, _FOOTERS, _ELEMENTS, _SHARED, _KV_KEYS, _LEAVES):
        cache.clear()


def _parse_footer_schema(elements: list[Any], spark_json: bytes | None, raw: bytes) -> FooterSchema:
    """The model, leaf layouts and fingerprint of one footer schema. Linear in its elements: each
    is visited once, and what a leaf's type fields say is worked out once per distinct spelling
    (`_leaf`), since a wide footer repeats a few."""
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
    spark = canonical_json(schema_to_notation(spark_schema)) if spark_schema else repr(spark_text)
    digest = hashlib.sha256(repr((tokens, spark)).encode()).hexdigest()[:16]
    return FooterSchema(schema, tuple(leaves.columns), spark_schema, spark_text, spark_error, digest,
                        tuple(leaves.kinds), refusal or _spark_refusal(leaves.columns), (raw, spark_json))


def _spark_refusal(columns: list[ParquetColumn]) -> str | None:
    """Why Spark (parquet-java 1.16) refuses a footer whose shapes the model has no type for,
    observed on Spark 4.1.4 (tests/test_footer_files.py): a key-only map (its schema converter
    wants a key and a value), a logical type newer than parquet-java (its Thrift decoding of the
    footer fails); a VARIANT of another specification version is found by `_tree`. Types Spark
    refuses by kind (FLOAT16, GEOMETRY...) are `base.spark_view`'s."""
    for c in columns:
        if c.container == "map:key-only":
            map_path = c.path.rpartition("[]")[0]
            return f"`{map_path}` is a MAP without values: Spark fails with 'Invalid map type'"
        if c.logical_type is not None and c.logical_type.startswith("FIELD_"):
            return (f"`{c.path}` has a logical type parquet-java does not know ({c.logical_type}): "
                    "Spark fails reading the footer")
    return None


def _variant_refusal(e: _Element, path: str) -> str | None:
    """A VARIANT group whose specification version is not 1 (absent reads as 0): Spark 4.1.4 fails
    with PARQUET_TYPE_NOT_RECOGNIZED."""
    version = e.logical[1].get(1, 0) if e.logical else 0
    if version == 1:
        return None
    return f"`{path}` is a VARIANT of specification version {version}: Spark reads only version 1 " \
           "(PARQUET_TYPE_NOT_RECOGNIZED)"


class _Element(NamedTuple):
    """One `SchemaElement` (fields 1-10) as written; `logical` is the LogicalType union's member
    id and body, `converted` the ConvertedType value."""

    name: str  # the bytes as written, decoded as UTF-8 with replacement characters
    physical: int | None
    type_length: int | None
    repetition: str
    num_children: int | None
    converted: int | None
    scale: int | None
    precision: int | None
    field_id: int | None
    logical: tuple[int, dict[int, Any]] | None


def _element(e: Any, index: int) -> _Element:
    if type(e) is not dict or type(name := e.get(4)) is not bytes:
        raise _corrupt(f"schema element {index} has no name")
    # An i32 field holding anything else (a boolean, bytes) is treated as absent.
    get = e.get
    physical = v if type(v := get(1)) is int else None
    repetition = get(3)
    union = get(10)
    logical = None
    if type(union) is dict and union:
        member = next(iter(union))
        body = union[member]
        logical = (member, body if type(body) is dict else {})
    return _Element(
        name.decode("utf-8", "replace"), physical,
        v if type(v := get(2)) is int else None,
        REPETITIONS[repetition] if repetition in (0, 1, 2) and type(repetition) is int else "REQUIRED",
        v if type(v := get(5)) is int else None,
        v if type(v := get(6)) is int else None,
        v if type(v := get(7)) is int else None,
        v if type(v := get(8)) is int else None,
        v if type(v := get(9)) is int else None,
        logical)


@dataclass(slots=True)
class _Node:
    element: _Element
    children: list[_Node]
    info: _Leaf | None  # a leaf's type fields; None for a group
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


def _group_annotation(e: _Element) -> str | None:
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
    `_leaf` spelling), so two footers share a fingerprint exactly when their model schema and
    layouts agree; Spark 4.1 shreds each file by its values and reads every shredding alike, so
    shredding is no schema version."""
    if not raw:
        raise _corrupt("the schema list is empty")
    root_element = _element(raw[0], 0)
    root = _Node(root_element, [], None, 0, 0)
    tokens: list[tuple[Any, ...]] = []
    refusal = None
    # (group, its children, children expected, path, inside a VARIANT)
    top: tuple[_Node, list[_Node], int, str, bool] = (root, root.children, root_element.num_children or 0,
                                                     "", False)
    stack = [top]
    for position in range(1, len(raw)):
        e = _element(raw[position], position)
        while len(top[1]) == top[2]:
            stack.pop()
            if not stack:
                raise _corrupt(f"schema element {position} is beyond the root's children")
            top = stack[-1]
        parent, siblings, _, parent_path, in_variant = top
        children = e.num_children
        if children is None or (children == 0 and e.physical is not None):
            if e.physical is None:
                raise _corrupt(f"leaf {e.name!r} has no physical type")
            info = _leaf(e)
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
        raise _corrupt("the schema list ends inside a group")
    return root, tokens, refusal


@dataclass(frozen=True, slots=True)
class _Leaves:
    """The leaf columns of a footer in the footer's order, and how each one's min/max decode."""

    columns: list[ParquetColumn]
    kinds: list[str]

    def add(self, node: _Node, leaf: _Leaf, path: str, ppath: tuple[str, ...],
            container: str | None) -> None:
        e = node.element
        self.columns.append(_parquet_column((
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
        element = _to_type(node, path + "[]", ppath, "repeated", out)
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
            key = _to_type(key_node, path + "{key}", (*kpath, key_node.name), shape, out)
            value = _to_type(value_node, path + "{value}", (*kpath, value_node.name), shape, out)
            return MapType(key, value, value_node.repetition == "OPTIONAL")
        if kv.repetition == "REPEATED" and len(kv.children) == 1:
            # A key-only map (a set; LogicalTypes.md allows it): no model map has no value, so it
            # stays a list of its keys' group, and its layout says what the footer holds.
            return ListType(_to_type(kv, path + "[]", (*ppath, kv.name), "map:key-only", out), False)
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
        return ListType(_to_type(rep, path + "[]", rpath, "list:2-level", out), False)
    element = rep.children[0]
    etype = _to_type(element, path + "[]", (*rpath, element.name), "list:3-level", out)
    return ListType(etype, element.repetition == "OPTIONAL")


class _Leaf(NamedTuple):
    """What a leaf element's type fields say, whatever its name and field id."""

    type: DataType
    physical: str
    type_length: int | None  # FIXED_LEN_BYTE_ARRAY width
    logical: str | None
    converted: str | None
    precision: int | None
    scale: int | None
    stat_kind: str  # how its min/max bytes decode (see _stat_kind)
    token: str  # its spelling in the fingerprint


# Bounded by the distinct leaf spellings in a process: a few dozen on any lake.
_LEAVES: dict[tuple[Any, ...], _Leaf] = {}


def _leaf(e: _Element) -> _Leaf:
    """`_Leaf` of a leaf element, worked out once per distinct type fields (a failure is not kept:
    each corrupt leaf raises with its own name)."""
    key = (e.physical, e.type_length, e.converted, e.scale, e.precision,
           None if e.logical is None else _hashable(e.logical))
    found = _LEAVES.get(key)
    if found is None:
        physical = _physical(e)
        decimal = _decimal(e)
        logical, converted = _logical_label(e), _converted_label(e.converted)
        length = e.type_length if physical == "FIXED_LEN_BYTE_ARRAY" else None
        precision, scale = (decimal.precision, decimal.scale) if decimal else (None, None)
        token = f"{physical} {length} {logical} {converted} {precision} {scale}"
        found = _LEAVES[key] = _Leaf(_leaf_type(e), physical, length, logical, converted, precision,
                                     scale, _stat_kind(physical, logical, converted, precision), token)
    return found


def _hashable(value: Any) -> Any:
    """A decoded Thrift value (dicts and lists inside) as a hashable key."""
    if type(value) is dict:
        return tuple((k, _hashable(v)) for k, v in value.items())
    if type(value) in (list, tuple):
        return (type(value).__name__, *map(_hashable, value))
    return value


def annotation(c: ParquetColumn) -> str | None:
    """A leaf's annotation in one label: its logical type, with its converted type beside it when
    that says something else (`TIMESTAMP(MILLIS,local) + TIMESTAMP_MILLIS`: readers that know
    only converted types take those values as UTC instants)."""
    if c.logical_type is None or c.converted_type is None:
        return c.logical_type or c.converted_type
    if c.converted_type == _CONVERTED_EQUIVALENT.get(c.logical_type, c.logical_type.split("(")[0]):
        return c.logical_type
    return f"{c.logical_type} + {c.converted_type}"


# The converted type each logical type stands for (parquet.thrift LogicalType comments), where its
# name differs from the logical type's.
_CONVERTED_EQUIVALENT = {
    "STRING": "UTF8", "TIME(MILLIS,utc)": "TIME_MILLIS", "TIME(MICROS,utc)": "TIME_MICROS",
    "TIMESTAMP(MILLIS,utc)": "TIMESTAMP_MILLIS", "TIMESTAMP(MICROS,utc)": "TIMESTAMP_MICROS",
    **{f"INT({bits},{sign})": f"{'U' if sign == 'unsigned' else ''}INT_{bits}"
       for bits in (8, 16, 32, 64) for sign in ("signed", "unsigned")},
}


def _converted_label(value: int | None) -> str | None:
    if value is None:
        return None
    return CONVERTED_TYPES[value] if 0 <= value < len(CONVERTED_TYPES) else f"CONVERTED_{value}"


def _physical(e: _Element) -> str:
    if e.physical is None or not 0 <= e.physical < len(PHYSICAL_TYPES):
        raise _corrupt(f"leaf {e.name!r} has physical type {e.physical}, not one parquet.thrift defines")
    return PHYSICAL_TYPES[e.physical]


def _decimal(e: _Element) -> DecimalType | None:
    """DECIMAL(p,s) from the logical type, else from the converted type and the element's fields."""
    if e.logical and e.logical[0] == 5:
        body = e.logical[1]
        precision, scale = body.get(2), body.get(1)
    elif e.converted == 5:
        precision, scale = e.precision, e.scale if e.scale is not None else 0
    else:
        return None
    if not isinstance(precision, int) or not isinstance(scale, int) or not 0 <= scale <= precision \
            or precision < 1:
        raise _corrupt(f"leaf {e.name!r} is a DECIMAL with precision {precision} and scale {scale}")
    known = e.physical is not None and 0 <= e.physical < len(PHYSICAL_TYPES)
    return DecimalType(precision, scale, PHYSICAL_TYPES[e.physical] if known else None)  # type: ignore[index]


def _logical_label(e: _Element) -> str | None:
    """The LogicalType union member as written: `TIMESTAMP(MICROS,local)`, `GEOGRAPHY(crs=...,
    algorithm=KARNEY)`, `FIELD_25` for a member this code has no name for."""
    if e.logical is None:
        return None
    member, body = e.logical
    if member in SIMPLE_LOGICAL:
        return SIMPLE_LOGICAL[member]
    if member == 5:
        return f"DECIMAL({body.get(2)},{body.get(1)})"
    if member in (7, 8):
        unit = _time_unit(e)[0]
        return f"{'TIME' if member == 7 else 'TIMESTAMP'}({unit},{'utc' if body.get(1) else 'local'})"
    if member == 10:
        return f"INT({body.get(1)},{'signed' if body.get(2) else 'unsigned'})"
    if member == 16:
        version = body.get(1)
        return "VARIANT" if version is None else f"VARIANT({version})"
    if member in (17, 18):
        params = []
        if isinstance(body.get(1), bytes):
            params.append(f"crs={_text(body[1])}")
        if member == 18 and isinstance(body.get(2), int):
            params.append(f"algorithm={_edge_algorithm(body[2])}")
        name = "GEOMETRY" if member == 17 else "GEOGRAPHY"
        return f"{name}({', '.join(params)})" if params else name
    return f"FIELD_{member}"


def _time_unit(e: _Element) -> tuple[str, TimeUnit]:
    """The TimeUnit union member of a TIME or TIMESTAMP logical type (field 2)."""
    unit = e.logical[1].get(2) if e.logical else None
    member = next(iter(unit), None) if isinstance(unit, dict) else None
    if member not in _TIME_UNITS:
        raise _corrupt(f"leaf {e.name!r} has a time unit parquet.thrift does not define")
    return _TIME_UNITS[member]


def _edge_algorithm(value: int) -> str:
    return EDGE_ALGORITHMS[value] if 0 <= value < len(EDGE_ALGORITHMS) else f"ALGORITHM_{value}"


_CONVERTED_MODEL: dict[int, DataType] = {
    0: StringType(), 4: EnumType(()), 6: DateType(), 7: TimeType("ms"), 8: TimeType("us"),
    9: TimestampType("ms", True), 10: TimestampType("us", True),  # legacy timestamps mean UTC
    11: IntType(8, False), 12: IntType(16, False), 13: IntType(32, False), 14: IntType(64, False),
    15: IntType(8), 16: IntType(16), 17: IntType(32), 18: IntType(64), 19: JsonType(), 20: BinaryType(),
}
_LOGICAL_MODEL: dict[int, DataType] = {
    1: StringType(), 4: EnumType(()), 6: DateType(), 12: JsonType(), 13: BinaryType(), 14: UuidType(),
    15: FloatType(16),
}
_PHYSICAL_MODEL: tuple[DataType, ...] = (
    BooleanType(), IntType(32), IntType(64), Int96Type(), FloatType(32), FloatType(64), BinaryType(),
)


def _leaf_type(e: _Element) -> DataType:
    """Model type of a leaf: its logical type, else its converted type, else its physical type
    (LogicalTypes.md). UNKNOWN (always null) and members this code does not know keep the
    physical type, as Spark reads UNKNOWN on INT32 as int (docs/reference/parquet-and-spark.md §2.4)."""
    decimal = _decimal(e)
    if decimal:
        return decimal
    if e.logical:
        member, body = e.logical
        if member in _LOGICAL_MODEL:
            return _LOGICAL_MODEL[member]
        if member == 10:
            if body.get(1) not in (8, 16, 32, 64):
                raise _corrupt(f"leaf {e.name!r} is an INTEGER of {body.get(1)} bits")
            return IntType(body[1], bool(body.get(2)))
        if member in (7, 8):
            unit = _time_unit(e)[1]
            return TimeType(unit) if member == 7 else TimestampType(unit, bool(body.get(1)))
        if member == 17:
            return GeometryType(_text(body[1]) if isinstance(body.get(1), bytes) else None)
        if member == 18:
            crs = _text(body[1]) if isinstance(body.get(1), bytes) else None
            return GeographyType(crs, _edge_algorithm(body[2]) if isinstance(body.get(2), int) else None)
    elif e.converted in _CONVERTED_MODEL:
        return _CONVERTED_MODEL[e.converted]
    physical = _physical(e)
    if physical == "FIXED_LEN_BYTE_ARRAY":
        return FixedType(e.type_length or 0)
    return _PHYSICAL_MODEL[PHYSICAL_TYPES.index(physical)]


# ---------------------------------------------------------------------------------------------
# Statistics


def _stat_kind(physical: str, logical: str | None, converted: str | None, precision: int | None) -> str:
    """How to decode a leaf's min/max bytes (PLAIN encoding of its physical type), or `none` when
    they mean nothing comparable: INT96 (only under Int96TimestampOrder), half floats, intervals,
    geometries (no min/max by the spec), always-null columns, and annotations not known here."""
    lt = logical or ""
    if physical == "INT96" or lt in ("FLOAT16", "UNKNOWN") or lt.startswith(
            ("GEOMETRY", "GEOGRAPHY", "FIELD_")) or converted == "INTERVAL":
        return "none"
    if precision is not None and physical in ("FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY"):
        return "be-int"
    if (lt.startswith("INT(") and lt.endswith("unsigned)")) or (converted or "").startswith("UINT"):
        return "u32" if physical == "INT32" else "u64"
    return {"BOOLEAN": "bool", "INT32": "i32", "INT64": "i64", "FLOAT": "f32", "DOUBLE": "f64"}.get(
        physical, "bytes")


def _nan_free(value: float) -> float | None:
    return None if value != value else value  # a NaN bound orders nothing


def _fixed(width: int, decode: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """`decode` for bounds of exactly `width` bytes (PLAIN encoding); other lengths are None."""
    return lambda raw: decode(raw) if len(raw) == width else None


_F32, _F64 = Struct("<f").unpack, Struct("<d").unpack
# How each stat kind's min/max bytes decode (see _stat_kind), one function per kind.
_DECODE_STAT: dict[str, Callable[[bytes], Any]] = {
    "i32": _fixed(4, partial(int.from_bytes, byteorder="little", signed=True)),
    "i64": _fixed(8, partial(int.from_bytes, byteorder="little", signed=True)),
    "u32": _fixed(4, partial(int.from_bytes, byteorder="little")),
    "u64": _fixed(8, partial(int.from_bytes, byteorder="little")),
    "f32": _fixed(4, lambda raw: _nan_free(_F32(raw)[0])),
    "f64": _fixed(8, lambda raw: _nan_free(_F64(raw)[0])),
    "bool": _fixed(1, lambda raw: raw != b"\x00"),
    "be-int": lambda raw: int.from_bytes(raw, "big", signed=True) if raw else None,
    "bytes": lambda raw: raw,
}
_SIGNED_ORDER = frozenset(("bool", "i32", "i64", "f32", "f64"))  # where the deprecated min/max hold


def _statistics(groups: list[Any], footer: FooterSchema) -> tuple[tuple[LeafStats, ...], tuple[str, ...]]:
    """Each leaf's statistics over the row groups, and the leaves whose metadata is encrypted."""
    kinds = footer.stat_kinds
    if not groups:
        return tuple(LeafStats(0, None, None, True) for _ in kinds), ()
    encrypted: set[int] = set()
    combined: list[LeafStats] | None = None
    for index, group in enumerate(groups):
        chunks = group.get(1) if isinstance(group, dict) else None
        if not isinstance(chunks, list) or len(chunks) != len(kinds):
            count = len(chunks) if isinstance(chunks, list) else 0
            raise _corrupt(f"row group {index} has {count} column chunks for {len(kinds)} leaf columns")
        rows = group.get(3)
        if not isinstance(rows, int) or rows < 0:
            raise _corrupt(f"row group {index} claims {rows} rows")
        stats = [_chunk_stats(chunk, kind, j, encrypted)
                 for j, (chunk, kind) in enumerate(zip(chunks, kinds, strict=True))]
        combined = stats if combined is None else list(map(_combine, combined, stats))
    assert combined is not None
    paths = tuple(dict.fromkeys(footer.columns[j].path for j in sorted(encrypted)))
    return tuple(combined), paths


_UNKNOWN = LeafStats(None, None, None, False)


def _chunk_stats(chunk: Any, kind: str, index: int, encrypted: set[int]) -> LeafStats:
    """One column chunk's statistics (ColumnChunk 3 meta_data -> ColumnMetaData 12 statistics).
    A chunk with `crypto_metadata` (8) or only `encrypted_column_metadata` (9) is encrypted: its
    statistics are unknown without the key."""
    if type(chunk) is not dict:
        raise _corrupt(f"column chunk {index} is not a structure")
    meta = chunk.get(3)
    if 8 in chunk or 9 in chunk or type(meta) is not dict:
        if 8 in chunk or 9 in chunk:
            encrypted.add(index)
        return _UNKNOWN
    s = meta.get(12)
    if type(s) is not dict:
        return _UNKNOWN
    nulls = v if type(v := s.get(3)) is int else None
    low, high = s.get(6), s.get(5)
    if low is None and high is None and kind in _SIGNED_ORDER:
        low, high = s.get(2), s.get(1)  # deprecated fields, valid for signed orders only
    exact = None if 7 not in s and 8 not in s else bool(s.get(7, True) and s.get(8, True))
    if kind == "none" or type(low) is not bytes or type(high) is not bytes:
        # A row group of nulls only has no min/max and loses nothing by it.
        values = meta.get(5)
        return _LEAF_STATS((nulls, None, None, nulls is not None and kind != "none" and values == nulls,
                            exact))
    decode = _DECODE_STAT[kind]
    return _LEAF_STATS((nulls, decode(low), decode(high), nulls is not None, exact))


def _combine(a: LeafStats, b: LeafStats) -> LeafStats:
    """Two row groups' statistics of one leaf as one."""
    nulls = None if a.null_count is None or b.null_count is None else a.null_count + b.null_count
    lows = [x for x in (a.min, b.min) if x is not None]
    highs = [x for x in (a.max, b.max) if x is not None]
    exact = None if a.exact is None and b.exact is None else (a.exact is not False and b.exact is not False)
    return LeafStats(nulls, min(lows) if lows else None, max(highs) if highs else None,
                     a.complete and b.complete, exact)
