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
    """Pairs in reader order, then the writer's unmatched fields in writer order."""
    if identity == "position":
        n = max(len(writer), len(reader))
        return [
            Pair(writer[i] if i < len(writer) else None, reader[i] if i < len(reader) else None,
                 "position" if i < len(writer) and i < len(reader) else None)
            for i in range(n)
        ]
    used: set[int] = set()
    pairs: list[Pair] = []
    for r in reader:
        found = _find(writer, r, identity, aliases, used)
        if found is None:
            pairs.append(Pair(None, r, None))
        else:
            index, how = found
            used.add(index)
            pairs.append(Pair(writer[index], r, how))
    pairs.extend(Pair(w, None, None) for i, w in enumerate(writer) if i not in used)
    return pairs


def _find(
    writer: tuple[Field, ...], r: Field, identity: Identity, aliases: bool, used: set[int]
) -> tuple[int, How] | None:
    free = [(i, w) for i, w in enumerate(writer) if i not in used]
    if identity == "id" and r.id is not None:
        return next(((i, "id") for i, w in free if w.id == r.id), None)
    if identity == "id":  # no id on the reader's field: fall back to its name
        return next(((i, "name-fallback") for i, w in free if w.id is None and w.name == r.name),
                    None)
    if identity == "name-ci":
        key = r.name.lower()
        hit = next(((i, "name-ci") for i, w in free if w.name.lower() == key), None)
    else:
        hit = next(((i, "name") for i, w in free if w.name == r.name), None)
    if hit is None and aliases:
        names = set(r.aliases) if identity == "name" else {a.lower() for a in r.aliases}
        hit = next(((i, "alias") for i, w in free
                    if (w.name if identity == "name" else w.name.lower()) in names), None)
    return hit  # type: ignore[return-value]
