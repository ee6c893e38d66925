"""How a reader finds a writer's field: by name, case-insensitive name, field id, or position.

One function pairs the fields of two structs; the operation diff and every reader profile use
it, so "which field is which" is decided in one place.

- `name`: exact name; when `aliases` is on, a reader field also matches a writer field named
  like one of its aliases (Avro's rule: only the *reader's* aliases count, docs/reference/compat-rules.md §1).
- `name-ci`: names compared lower-cased (Spark and Delta by default, §4, §5).
- `id`: field ids (Iceberg, Delta column mapping `id`, §3, §4); fields without an id on either
  side fall back to their name, and the pairing says so.
- `position`: the i-th field of each side (positional readers: CSV-like binders, Hive by index).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from schemaguard.model import (
    EnumType,
    Field,
    ListType,
    MapType,
    PrimitiveType,
    Schema,
    SchemaVisitor,
    StructType,
    fields_of,
    visit,
)
from schemaguard.names import Identity
from schemaguard.paths import join

How = Literal["name", "name-ci", "alias", "id", "name-fallback", "position"]


@dataclass(frozen=True, slots=True)
class Pair:
    """A writer field and the reader field that reads it; one side is None when unmatched."""

    writer: Field | None
    reader: Field | None
    how: How | None  # how they were matched (None when unmatched)


def match_fields(
    writer: tuple[Field, ...],
    reader: tuple[Field, ...],
    identity: Identity,
    aliases: bool = False,
) -> list[Pair]:
    """Pairs in reader order, then the writer's unmatched fields in writer order.

    Matching runs in passes, strongest first, so an exact name is never taken by a weaker
    match: under `name-ci`, fields `A` and `a` on both sides pair with their exact twins. Within a
    pass a reader field takes the first untaken writer field that matches it (looked up by key, so
    pairing is linear in the number of fields)."""
    if identity == "position":
        n = max(len(writer), len(reader))
        return [
            Pair(writer[i] if i < len(writer) else None, reader[i] if i < len(reader) else None,
                 "position" if i < len(writer) and i < len(reader) else None)
            for i in range(n)
        ]
    found: dict[int, tuple[int, How]] = {}  # reader index -> (writer index, how)
    taken: set[int] = set()
    for how, writer_key, reader_keys in _passes(identity, aliases):
        free: dict[Hashable, deque[int]] = defaultdict(deque)  # key -> untaken writer indexes, in order
        for wi, w in enumerate(writer):
            key = writer_key(w)
            if wi not in taken and key is not None:
                free[key].append(wi)
        for ri, r in enumerate(reader):
            if ri in found:
                continue
            first: deque[int] | None = None  # the queue of the earliest untaken match
            for k in reader_keys(r):
                q = free.get(k)
                if q and (first is None or q[0] < first[0]):
                    first = q
            if first is not None:
                wi = first.popleft()
                found[ri] = (wi, how)
                taken.add(wi)
    pairs = [Pair(writer[found[ri][0]], r, found[ri][1]) if ri in found else Pair(None, r, None)
             for ri, r in enumerate(reader)]
    pairs.extend(Pair(w, None, None) for i, w in enumerate(writer) if i not in taken)
    return pairs


# A pass: how it matches, a writer field's key (None: not matched in this pass), a reader field's keys.
Pass = tuple[How, Callable[[Field], Hashable | None], Callable[[Field], Iterable[Hashable]]]


def _passes(identity: Identity, aliases: bool) -> list[Pass]:
    exact: Pass = ("name", lambda w: w.name, lambda r: (r.name,))
    if identity == "id":
        return [("id", lambda w: w.id, lambda r: () if r.id is None else (r.id,)),
                ("name-fallback", lambda w: w.name if w.id is None else None,
                 lambda r: (r.name,) if r.id is None else ())]
    if identity == "name-ci":
        out = [exact, ("name-ci", lambda w: w.name.lower(), lambda r: (r.name.lower(),))]
        if aliases:
            out.append(("alias", lambda w: w.name.lower(), lambda r: {a.lower() for a in r.aliases}))
        return out
    return [exact, ("alias", lambda w: w.name, lambda r: r.aliases)] if aliases else [exact]


# ---------------------------------------------------------------------------------------------
# Names a reader cannot tell apart

Duplicates = list[tuple[str, tuple[str, ...]]]  # (path of the first such field, its spellings)


class _Duplicates(SchemaVisitor[Duplicates, Duplicates]):
    def __init__(self, case_sensitive: bool) -> None:
        self.case_sensitive = case_sensitive

    def field(self, f: Field, path: str, type_result: Duplicates) -> Duplicates:
        return type_result

    def struct(self, t: StructType, path: str, fields: Sequence[Duplicates]) -> Duplicates:
        spellings: dict[str, list[str]] = defaultdict(list)
        for f in t.fields:
            spellings[f.name if self.case_sensitive else f.name.lower()].append(f.name)
        here = [(join(path, names[0]), tuple(names)) for names in spellings.values() if len(names) > 1]
        return here + [d for below in fields for d in below]

    def list(self, t: ListType, path: str, element: Duplicates) -> Duplicates:
        return element

    def map(self, t: MapType, path: str, key: Duplicates, value: Duplicates) -> Duplicates:
        return key + value

    def enum(self, t: EnumType, path: str) -> Duplicates:
        return []

    def primitive(self, t: PrimitiveType, path: str) -> Duplicates:
        return []


def duplicate_names(schema: Schema, case_sensitive: bool = False) -> Duplicates:
    """Names held twice by one struct at any depth, compared as a reader by name compares them
    (Spark and Delta: case-insensitively unless spark.sql.caseSensitive). Such a reader cannot
    resolve the column: Spark fails the read, with or without mergeSchema."""
    # Two fields of one struct spelt alike have paths spelt alike (quoting ignores case): where no
    # two paths are, the structs need no look (the common case, from the schema's cached fields).
    spelt = [p if case_sensitive else p.lower() for p, _ in fields_of(schema)]
    if len(set(spelt)) == len(spelt):
        return []
    return visit(schema, _Duplicates(case_sensitive))
