"""Compatibility modes, paired exactly as the schema registry pairs them (docs/reference/compat-rules.md §2).

Registering NEW after history v1..vn (oldest first):
  BACKWARD             R=NEW reads W=vn             FORWARD             R=vn reads W=NEW
  BACKWARD_TRANSITIVE  R=NEW reads W=vi, every i    FORWARD_TRANSITIVE  R=vi reads W=NEW, every i
  FULL / FULL_TRANSITIVE: both directions (against vn / every vi); NONE: nothing.
Earlier versions are not re-checked against each other. Unlike the registry, which stops at the
first failure, every failing pair is reported, so a transitive failure names its versions.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemaguard.base import Options, Problem, errors
from schemaguard.model import Schema
from schemaguard.names import Mode
from schemaguard.rules.profiles import can_read, table_refusals

__all__ = ["Mode"]  # rules' callers import the modes from here, with the check


@dataclass(frozen=True, slots=True)
class PairFailure:
    writer_version: int  # 1-based; the new schema is len(history) + 1
    reader_version: int
    problems: tuple[Problem, ...]


def pairs(n_history: int, mode: Mode) -> list[tuple[int, int]]:
    """(writer, reader) version numbers to check, newest history version first."""
    new = n_history + 1
    if mode == Mode.NONE or n_history == 0:
        return []
    olds = list(range(n_history, 0, -1)) if mode.endswith("TRANSITIVE") else [n_history]
    out: list[tuple[int, int]] = []
    for old in olds:
        if mode.startswith(("BACKWARD", "FULL")):
            out.append((old, new))
        if mode.startswith(("FORWARD", "FULL")):
            out.append((new, old))
    return out


def check(history: list[Schema], new: Schema, mode: Mode, profile: str,
          options: Options | None = None) -> list[PairFailure]:
    """Every (writer, reader) pair the mode checks that the profile's reader cannot read. The change
    from the newest version to the new schema, which the table's engine may refuse, is named at the
    first pair of the two."""
    versions = [*history, new]
    failures = []
    refused = table_refusals(history[-1], new, profile, options or Options()) if history else []
    for w, r in pairs(len(history), mode):
        problems = can_read(versions[w - 1], versions[r - 1], profile, options)
        if {w, r} == {len(history), len(versions)}:
            problems, refused = [*problems, *refused], []
        if errors(problems):
            failures.append(PairFailure(w, r, tuple(problems)))
    return failures
