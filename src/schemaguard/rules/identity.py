"""How a reader finds a writer's field: by name, case-insensitive name, field id, or position.

One function pairs the fields of two structs; the operation diff and every reader profile use
it, so "which field is which" is decided in one place.

- `name`: exact name; when `aliases` is on, a reader field also matches a writer field named
  like one of its aliases (Avro's rule: only the *reader's* aliases count, compat-rules.md §1).
- `name-ci`: names compared lower-cased (Spark and Delta by default, §4, §5).
- `id`: field ids (Iceberg, Delta column mapping `id`, §3, §4); fields without an id on either
  side fall back to their name, and the pairing says so.
- `position`: the i-th field of each side (positional readers: CSV-like binders, Hive by index).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from schemaguard.model import Field, Identity

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
    match: under `name-ci`, fields `A` and `a` on both sides pair with their exact twins."""
    if identity == "position":
        n = max(len(writer), len(reader))
        return [
            Pair(writer[i] if i < len(writer) else None, reader[i] if i < len(reader) else None,
                 "position" if i < len(writer) and i < len(reader) else None)
            for i in range(n)
        ]
    found: dict[int, tuple[int, How]] = {}  # reader index -> (writer index, how)
    taken: set[int] = set()
    for how, same in _passes(identity, aliases):
        for ri, r in enumerate(reader):
            if ri in found:
                continue
            wi = next((i for i, w in enumerate(writer) if i not in taken and same(w, r)), None)
            if wi is not None:
                found[ri] = (wi, how)
                taken.add(wi)
    pairs = [Pair(writer[found[ri][0]], r, found[ri][1]) if ri in found else Pair(None, r, None)
             for ri, r in enumerate(reader)]
    pairs.extend(Pair(w, None, None) for i, w in enumerate(writer) if i not in taken)
    return pairs


Same = Callable[[Field, Field], bool]


def _passes(identity: Identity, aliases: bool) -> list[tuple[How, Same]]:
    exact: tuple[How, Same] = ("name", lambda w, r: w.name == r.name)
    if identity == "id":
        return [("id", lambda w, r: r.id is not None and w.id == r.id),
                ("name-fallback", lambda w, r: w.id is None and r.id is None and w.name == r.name)]
    if identity == "name-ci":
        out = [exact, ("name-ci", lambda w, r: w.name.lower() == r.name.lower())]
        if aliases:
            out.append(("alias", lambda w, r: w.name.lower() in {a.lower() for a in r.aliases}))
        return out
    return [exact, ("alias", lambda w, r: w.name in r.aliases)] if aliases else [exact]
