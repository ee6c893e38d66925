"""Per-file records held as columns, so that a table of a million files is a few dozen arrays and
buffers, not millions of Python objects (issue 14: memory stays bounded at a million files).

`DataFiles` holds a listing, `Footers` the footers read from it, in arrival order; `Subset` is
a version's share of the footers. Each is a `Sequence` whose items are built when asked for
(a `DataFile`, a `FileFooter`) and dropped by the caller, so every existing loop over files works
unchanged; the whole-table questions the history asks (partitions, rows, dates) read the columns.
What repeats across files is kept once and numbered: partition values (one per directory),
footer schemas (a few per table), writers, key-value keys. Statistics, the one part that differs
per file and column, are kept encoded (`marshal`) and decoded when a file is asked for.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from schemaguard.formats.parquet import FileFooter, FooterSchema, Packed, decode_stats, encode_stats


@dataclass(frozen=True, slots=True)
class DataFile:
    path: str  # what the filesystem opens
    rel: str  # relative to the table root
    size: int
    mtime: float | None
    partition: tuple[tuple[str, str | None], ...]


_H = TypeVar("_H", bound=Hashable)
_T = TypeVar("_T")
Partition = tuple[tuple[str, str | None], ...]


class Buffer:
    """Byte strings in one buffer and one array of ends: a million paths (encoded) or files'
    statistics are two objects, not a million."""

    __slots__ = ("_data", "_ends")

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("q")

    def append(self, blob: bytes) -> None:
        self._data += blob
        self._ends.append(len(self._data))

    def extend(self, other: Buffer, lo: int, hi: int) -> None:
        """Another buffer's strings `lo` to `hi` (excluded), appended as one slice."""
        start = other._ends[lo - 1] if lo else 0
        end = other._ends[hi - 1] if hi > lo else start
        shift = len(self._data) - start
        self._data += other._data[start:end]
        self._ends.extend([e + shift for e in other._ends[lo:hi]])

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i: int) -> bytes:
        return bytes(self._data[self._ends[i - 1] if i else 0:self._ends[i]])

    def ending(self, blob: bytes) -> Iterator[int]:
        """The numbers of the strings that end with `blob` (not empty), found by searching the
        whole buffer: no string taken out but those."""
        data, ends = self._data, self._ends
        at = data.find(blob)
        while at >= 0:
            end = at + len(blob)
            i = bisect_left(ends, end)
            # the string's end, and a match inside it (not begun in the strings before)
            if i < len(ends) and ends[i] == end and at >= (ends[i - 1] if i else 0):
                yield i
            at = data.find(blob, at + 1)


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a name listed from bytes that are not UTF-8


def _decoded(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


class Codes(Generic[_H]):
    """Values that repeat across files, each kept once and numbered in order of first sight."""

    __slots__ = ("_numbers", "codes", "values")

    def __init__(self) -> None:
        self._numbers: dict[_H, int] = {}
        self.values: list[_H] = []
        self.codes = array("I")

    def append(self, value: _H) -> None:
        self.codes.append(self.number(value))

    def number(self, value: _H) -> int:
        """The number of `value`, numbered now if it is new."""
        number = self._numbers.get(value)
        if number is None:
            number = self._numbers[value] = len(self.values)
            self.values.append(value)
        return number

    @classmethod
    def of(cls, values: list[_H], codes: array[int]) -> Codes[_H]:
        """Codes as `values` and `codes` already number them (each value once)."""
        out = cls()
        out.values, out.codes = values, codes
        out._numbers = {v: i for i, v in enumerate(values)}
        return out

    def __getitem__(self, i: int) -> _H:
        return self.values[self.codes[i]]


class _Files:
    """What a listing says of each file: relative path, size, time and partition, as columns. The
    path opened is the relative one after a common prefix; the rare other (a name shown with
    escapes) is kept apart."""

    __slots__ = ("_mtime", "_partition", "_paths", "_prefix", "_rel", "_size")

    def __init__(self) -> None:
        self._rel = Buffer()  # encoded relative paths
        self._prefix: str | None = None
        self._paths: dict[int, str] = {}
        self._size = array("q")
        self._mtime = array("d")  # NaN: no time known
        self._partition: Codes[Partition] = Codes()

    def _add(self, path: str, rel: str, size: int, mtime: float | None, partition: Partition) -> None:
        i = len(self._rel)
        if self._prefix is None:
            self._prefix = path[:-len(rel)] if rel and path.endswith(rel) else ""
        if path != self._prefix + rel:
            self._paths[i] = path
        self._rel.append(_encoded(rel))
        self._size.append(size)
        self._mtime.append(math.nan if mtime is None else mtime)
        self._partition.append(partition)

    def copy_range(self, other: _Files, lo: int, sizes: Sequence[int]) -> None:
        """Rows `lo` on of another listing's columns with the sizes read, paths kept as encoded
        and copied a slice at a time (a scan's footers come in listing order: no path decoded
        and encoded again a file)."""
        if self._prefix is None:
            self._prefix = other._prefix
        hi = lo + len(sizes)
        if self._prefix != other._prefix:  # another listing's root: spelled out
            for i, size in zip(range(lo, hi), sizes, strict=True):
                self._add(other.path(i), other.rel(i), size, other.mtime(i), other.partition(i))
            return
        if other._paths:
            base = len(self._rel) - lo
            self._paths.update((base + i, other._paths[i]) for i in range(lo, hi) if i in other._paths)
        self._rel.extend(other._rel, lo, hi)
        self._size.extend(sizes)
        self._mtime.extend(other._mtime[lo:hi])
        values, number = other._partition.values, self._partition.number
        self._partition.codes.extend([number(values[c]) for c in other._partition.codes[lo:hi]])

    def __len__(self) -> int:
        return len(self._rel)

    def rel(self, i: int) -> str:
        return _decoded(self._rel[i])

    def path(self, i: int) -> str:
        found = self._paths.get(i)
        return found if found is not None else f"{self._prefix}{self.rel(i)}"

    def mtime(self, i: int) -> float | None:
        t = self._mtime[i]
        return None if t != t else t  # NaN

    def partition(self, i: int) -> Partition:
        return self._partition[i]

    def file(self, i: int) -> DataFile:
        return DataFile(self.path(i), self.rel(i), self._size[i], self.mtime(i), self.partition(i))

    def partition_values(self) -> list[Partition]:
        """Every partition seen (one per directory: far fewer than files), in order of first sight."""
        return self._partition.values


class _Sequence(Sequence[_T]):
    """A `Sequence` built item by item; slices are lists; equal to any sequence with equal items."""

    def _item(self, i: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> _T: ...

    @overload
    def __getitem__(self, i: slice) -> list[_T]: ...

    def __getitem__(self, i: int | slice) -> _T | list[_T]:
        if isinstance(i, slice):
            return [self._item(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self._item(i % n if i < 0 else i)

    def __iter__(self) -> Iterator[_T]:
        return map(self._item, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self)}>"


class DataFiles(_Sequence[DataFile]):
    """A listing's data files, in listing order."""

    __slots__ = ("_files",)

    def __init__(self, files: Iterable[DataFile] = ()) -> None:
        self._files = _Files()
        for f in files:
            self.append(f)

    def append(self, f: DataFile) -> None:
        self._files._add(f.path, f.rel, f.size, f.mtime, f.partition)

    def add(self, path: str, rel: str, size: int, mtime: float | None, partition: Partition) -> None:
        """`append` without building the `DataFile` (a listing adds a million)."""
        self._files._add(path, rel, size, mtime, partition)

    def rels(self) -> Iterator[str]:
        return map(self._files.rel, range(len(self)))

    def rels_ending(self, suffix: str) -> list[str]:
        """The relative paths that end with `suffix`, in listing order (a million paths searched
        as one buffer: only those found are decoded)."""
        return [self._files.rel(i) for i in self._files._rel.ending(_encoded(suffix))]

    def total_size(self) -> int:
        """The files' bytes, as the listing gave them."""
        return sum(self._files._size)

    def raw_rel(self, i: int) -> bytes:
        return self._files._rel[i]

    def __len__(self) -> int:
        return len(self._files)

    def _item(self, i: int) -> DataFile:
        return self._files.file(i)

    def rel(self, i: int) -> str:
        return self._files.rel(i)

    def size(self, i: int) -> int:
        return self._files._size[i]

    def mtime(self, i: int) -> float | None:
        return self._files.mtime(i)


class Footers(_Sequence[FileFooter]):
    """Footers as read, in the order they arrived. Footer schemas are kept once per distinct
    schema (by fingerprint and columns: a version's files may shred a VARIANT apiece), so
    versions and relabelling work per schema, not per file."""

    __slots__ = (
        "_encrypted",
        "_files",
        "_footer",
        "_footers",
        "_groups",
        "_kv",
        "_recent",
        "_rows",
        "_stats",
        "_writer",
    )

    def __init__(self, footers: Iterable[FileFooter] = ()) -> None:
        self._files = _Files()
        self._rows = array("q")
        self._groups = array("q")
        self._writer: Codes[str | None] = Codes()
        self._footer: Codes[tuple[str, Any]] = Codes()
        self._footers: dict[tuple[str, Any], FooterSchema] = {}
        self._recent: dict[int, tuple[FooterSchema, tuple[str, Any]]] = {}
        self._stats = Buffer()
        self._kv: Codes[tuple[str, ...]] = Codes()
        self._encrypted: Codes[tuple[str, ...]] = Codes()
        for f in footers:
            self.append(f, encode_stats(f.stats))

    def append(self, f: FileFooter | DataFile, stats: bytes, read: Packed | None = None) -> None:
        """One file: a footer, or (what a worker sends) the listing's file with `read`, the footer
        as `formats.parquet.pack` packs it (size, rows, row groups, writer, schema, ...)."""
        if read is None:
            assert isinstance(f, FileFooter)
            size, rows, groups, writer, footer, kv, encrypted = (
                f.size, f.rows, f.row_groups, f.created_by, f.footer, f.kv_keys, f.encrypted)
        else:
            size, rows, groups, writer, footer, _, kv, encrypted = read
        self._files._add(f.path, f.rel, size, f.mtime, f.partition)
        self._rest(rows, groups, writer, footer, stats, kv, encrypted)

    def extend_listed(self, files: DataFiles, lo: int, reads: Sequence[Packed]) -> None:
        """Files `lo` on of a listing as a worker read them (`append`'s `read`), their paths and
        partitions copied from the listing's columns as they are."""
        self._files.copy_range(files._files, lo, [r[0] for r in reads])
        for _, rows, groups, writer, footer, stats, kv, encrypted in reads:
            self._rest(rows, groups, writer, footer, stats, kv, encrypted)

    def _rest(self, rows: int, groups: int, writer: str | None, footer: Any, stats: bytes,
              kv: tuple[str, ...], encrypted: tuple[str, ...]) -> None:
        self._rows.append(rows)
        self._groups.append(groups)
        self._writer.append(writer)
        self._footer.append(self._key(footer))
        self._stats.append(stats)
        self._kv.append(kv)
        self._encrypted.append(encrypted)

    def __len__(self) -> int:
        return len(self._files)

    def _item(self, i: int) -> FileFooter:
        fs = self._files
        return FileFooter(fs.path(i), fs.rel(i), fs.partition(i), fs._size[i], fs.mtime(i), self._rows[i],
                          self._groups[i], self._writer[i], self.footer(i), decode_stats(self._stats[i]),
                          self._kv[i], self._encrypted[i])

    @classmethod
    def picked(cls, files: DataFiles, picks: Iterable[tuple[Footers, int]]) -> Footers:
        """The footers of `files`, in order, one pick each: row `i` of footers `source`. The file
        columns are `files`' own (shared: neither changes once built); the rest is copied row by
        row, each source's shared values numbered anew once."""
        out = cls()
        out._files = files._files
        numbers: dict[int, tuple[list[int], list[int], list[int], list[int]]] = {}
        for source, i in picks:
            n = numbers.get(id(source))
            if n is None:
                n = numbers[id(source)] = (
                    [out._writer.number(v) for v in source._writer.values],
                    [out._footer.number(out._key(footer)) for footer in source.schemas()],
                    [out._kv.number(v) for v in source._kv.values],
                    [out._encrypted.number(v) for v in source._encrypted.values])
            out._rows.append(source._rows[i])
            out._groups.append(source._groups[i])
            out._writer.codes.append(n[0][source._writer.codes[i]])
            out._footer.codes.append(n[1][source._footer.codes[i]])
            out._stats.append(source._stats[i])
            out._kv.codes.append(n[2][source._kv.codes[i]])
            out._encrypted.codes.append(n[3][source._encrypted.codes[i]])
        return out

    def to_columns(self) -> tuple[dict[str, list[Any]], dict[str, bytes]]:
        """The footers as tables of shared values and typed arrays (lake/cache.py stores them):
        schemas as their `source`, partitions and the paths beyond the relative ones left out."""
        f = self._files
        tables: dict[str, list[Any]] = {
            "writer": self._writer.values, "kv": self._kv.values, "encrypted": self._encrypted.values,
            "schemas": [footer.source for footer in self.schemas()]}
        arrays = {"rel": bytes(f._rel._data), "rel_ends": f._rel._ends.tobytes(), "size": f._size.tobytes(),
                  "mtime": f._mtime.tobytes(), "rows": self._rows.tobytes(), "groups": self._groups.tobytes(),
                  "writer": self._writer.codes.tobytes(), "footer": self._footer.codes.tobytes(),
                  "stats": bytes(self._stats._data), "stats_ends": self._stats._ends.tobytes(),
                  "kv": self._kv.codes.tobytes(), "encrypted": self._encrypted.codes.tobytes()}
        return tables, arrays

    @classmethod
    def from_columns(cls, tables: dict[str, list[Any]], arrays: dict[str, Any]) -> Footers:
        """What `to_columns` gave, the arrays already decoded and checked against each other and the
        tables (lake/cache.py); every file unpartitioned, opened by its relative path."""
        out = cls()
        f = out._files
        f._rel._data, f._rel._ends = bytearray(arrays["rel"]), arrays["rel_ends"]
        f._prefix, f._size, f._mtime = "", arrays["size"], arrays["mtime"]
        f._partition = Codes.of([()], array("I", bytes(4 * len(f._size))))
        out._rows, out._groups = arrays["rows"], arrays["groups"]
        out._writer = Codes.of(tables["writer"], arrays["writer"])
        out._kv = Codes.of(tables["kv"], arrays["kv"])
        out._encrypted = Codes.of(tables["encrypted"], arrays["encrypted"])
        keys = [out._key(footer) for footer in tables["schemas"]]
        out._footer = Codes.of(keys, arrays["footer"])
        out._stats._data, out._stats._ends = bytearray(arrays["stats"]), arrays["stats_ends"]
        return out

    def describes(self, files: DataFiles) -> bool:
        """Whether these are the footers of exactly `files`: the same paths, sizes and times (known),
        in the same order. Compares whole columns at once."""
        a, b = self._files, files._files
        return (a._rel._ends == b._rel._ends and a._rel._data == b._rel._data and a._size == b._size
                and a._mtime == b._mtime)  # NaN (no time) is equal to nothing: such a file is read again

    def with_files(self, files: DataFiles) -> Footers:
        """The same footers for `files`, which list the same files in the same order (a table
        read again unchanged: its listing's paths and partitions with the cached footers)."""
        out = Footers.__new__(Footers)
        for name in Footers.__slots__:
            setattr(out, name, getattr(self, name))
        out._files = files._files
        return out

    def encrypted_files(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        """Each file with encrypted column metadata, and those columns' paths."""
        values = self._encrypted.values
        return ((self.rel(i), values[c]) for i, c in enumerate(self._encrypted.codes) if values[c])

    def packed(self, i: int) -> Packed:
        """One file's footer as a worker packs it (statistics still encoded)."""
        return (self._files._size[i], self._rows[i], self._groups[i], self._writer[i], self.footer(i),
                self._stats[i], self._kv[i], self._encrypted[i])

    # The columns the history reads without building a file.

    def footer(self, i: int) -> FooterSchema:
        return self._footers[self._footer[i]]

    def footer_codes(self) -> array[int]:
        """Each file's distinct schema, by its number in `schemas()`."""
        return self._footer.codes

    def schemas(self) -> list[FooterSchema]:
        """The distinct footer schemas, numbered as `footer_codes` numbers them."""
        return [self._footers[k] for k in self._footer.values]

    def rel(self, i: int) -> str:
        return self._files.rel(i)

    def mtime(self, i: int) -> float | None:
        return self._files.mtime(i)

    def size(self, i: int) -> int:
        return self._files._size[i]

    def raw_rel(self, i: int) -> bytes:
        return self._files._rel[i]

    def file(self, i: int) -> DataFile:
        """What the listing said of the file."""
        return self._files.file(i)

    def rows(self, i: int) -> int:
        return self._rows[i]

    def partition(self, i: int) -> Partition:
        return self._files.partition(i)

    def partition_code(self, i: int) -> int:
        return self._files._partition.codes[i]

    def partition_values(self) -> list[Partition]:
        return self._files.partition_values()

    def with_footers(self, schemas: Iterable[FooterSchema]) -> Footers:
        """The same files, each with the footer schema `schemas` gives it (one per file, in order)."""
        out = Footers.__new__(Footers)
        for name in Footers.__slots__:
            setattr(out, name, getattr(self, name))
        out._footer, out._footers, out._recent = Codes(), {}, {}
        for footer in schemas:
            out._footer.append(out._key(footer))
        return out

    def _key(self, footer: FooterSchema) -> tuple[str, Any]:
        """The distinct schema a file's footer schema is, kept once. Each chunk a worker sends
        holds its own copy of a schema, so the few objects seen last are remembered by identity
        (the object kept alongside, so its id is not reused) to skip hashing its columns."""
        recent = self._recent.get(id(footer))
        if recent is not None and recent[0] is footer:
            return recent[1]
        key = (footer.fingerprint, footer.columns)
        self._footers.setdefault(key, footer)
        if len(self._recent) >= 64:
            self._recent.clear()
        self._recent[id(footer)] = (footer, key)
        return key


class Subset(_Sequence[FileFooter]):
    """Some of a `Footers`' files (a version's), by position."""

    __slots__ = ("footers", "positions")

    def __init__(self, footers: Footers, positions: array[int]) -> None:
        self.footers = footers
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    def _item(self, i: int) -> FileFooter:
        return self.footers[self.positions[i]]

    def rels(self) -> Iterator[str]:
        return map(self.footers.rel, self.positions)

    def partitions(self) -> Iterator[Partition]:
        return map(self.footers.partition, self.positions)
