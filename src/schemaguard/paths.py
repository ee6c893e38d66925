"""Column paths: how a node inside a schema is addressed, spelt and read back. Struct fields join
with `.`, a list element is `[]`, a map key is `{key}` and a map value is `{value}` (so
`orders.items[].price` and `attrs{value}`). A name that holds one of `` .`[]{} `` (or is empty)
is written in backticks, a backtick doubled, as Spark SQL writes it: a top-level column `a.b` is
`` `a.b` ``, never the field `b` of a struct `a`. Paths are built with `join` and read back with
`parts`; nothing else splits one. (Walking a schema along a path is `model.fields_along`; a path as
Spark SQL names a column is `formats/spark_ddl.column_ref`.)

May import: nothing of the package (the model and every stage spell paths with it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence

ELEMENT, KEY, VALUE = "[]", "{key}", "{value}"  # path suffixes: list element, map key, map value


_PLAIN = re.compile(r"[^.`\[\]{}]+")


@functools.lru_cache(maxsize=1 << 16)  # names repeat across the walks of a schema
def segment(name: str) -> str:
    """One field name as a path spells it: bare, or in backticks when it holds `` .`[]{} ``."""
    return name if _PLAIN.fullmatch(name) else "`" + name.replace("`", "``") + "`"


def join(parent: str, name: str) -> str:
    """The path of field `name` inside the node at `parent` (the top level is "")."""
    return f"{parent}.{segment(name)}" if parent else segment(name)


def join_parts(names: Sequence[str]) -> str:
    """The path of a struct field given by its names from the top."""
    path = ""
    for name in names:
        path = join(path, name)
    return path


_SEPARATOR = re.compile(r"[.\[{]")
_SEGMENT = re.compile(r"`((?:[^`]|``)*)`|([^.`\[\]{}]+)")


def parts(path: str) -> tuple[str, ...]:
    """The names of a struct-field path from the top (`a.b` -> ("a", "b"), `` `a.b` `` ->
    ("a.b",)). A path through a list element or a map slot is not a column: ValueError."""
    out: list[str] = []
    at = 0
    while True:
        m = _SEGMENT.match(path, at)
        if m is None:
            raise ValueError(f"{path!r} is not a column path")
        out.append(_name(m))
        at = m.end()
        if at == len(path):
            return tuple(out)
        if path[at] != ".":
            raise ValueError(f"{path!r} is not a column path (a list element or map slot)")
        at += 1


def ancestors(path: str) -> Iterator[str]:
    """The paths of the nodes above `path` (`a.b[].c` -> `a`, `a.b`, `a.b[]`): each ends before a
    separator outside a backticked name."""
    if "`" not in path:  # nothing quoted (most paths): every separator ends an ancestor
        yield from (path[:m.start()] for m in _SEPARATOR.finditer(path, 1))
        return
    quoted = False
    for i, ch in enumerate(path):
        if ch == "`":
            quoted = not quoted  # a doubled backtick inside a name flips twice
        elif not quoted and ch in ".[{" and i:
            yield path[:i]


def top_name(path: str) -> str:
    """The top-level column a path (into structs, lists or maps) is in, as its name."""
    m = _SEGMENT.match(path)
    if m is None:
        raise ValueError(f"{path!r} is not a column path")
    return _name(m)


def _name(m: re.Match[str]) -> str:
    """The name one matched segment spells: bare, or unquoted from its backticks."""
    return m.group(2) if m.group(2) is not None else m.group(1).replace("``", "`")


def parent_and_name(path: str) -> tuple[str, str]:
    """A struct-field path's parent path ("" at the top) and its own name."""
    names = parts(path)
    return join_parts(names[:-1]), names[-1]
