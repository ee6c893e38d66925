"""The verdicts of `compare`, `merge` and `evolve`: labelled schemas in, one report object out,
which the renderers print as text or JSON."""

from __future__ import annotations

from dataclasses import dataclass

from schemaguard.base import Options, Problem, errors
from schemaguard.model import Schema
from schemaguard.rules.merge import MergeResult
from schemaguard.rules.modes import Mode, PairFailure, check
from schemaguard.rules.profiles import can_read, merge_schemas, table_refusals

Labelled = list[tuple[str, Schema]]


@dataclass(frozen=True, slots=True)
class CompareReport:
    profile: str
    options: Options
    reader: str  # label of the reader's schema
    writers: tuple[tuple[str, tuple[Problem, ...]], ...]  # (writer label, problems), oldest first
    notes: tuple[str, ...] = ()

    @property
    def compatible(self) -> bool:
        return not any(errors(list(problems)) for _, problems in self.writers)


@dataclass(frozen=True, slots=True)
class MergeReport:
    profile: str
    options: Options
    inputs: tuple[str, ...]  # labels, in merge order
    result: MergeResult
    notes: tuple[str, ...] = ()

    @property
    def conflicting_input(self) -> int | None:
        """Index in `inputs` of the one whose merge into those before it failed first."""
        return self.result.conflicts[0].input if self.result.conflicts else None


@dataclass(frozen=True, slots=True)
class EvolveReport:
    mode: Mode
    profile: str
    options: Options
    versions: tuple[str, ...]  # labels, oldest first; the last one is the new schema
    failures: tuple[PairFailure, ...]
    notes: tuple[str, ...] = ()

    @property
    def compatible(self) -> bool:
        return not self.failures


def compare(writers: Labelled, reader: tuple[str, Schema], profile: str, options: Options,
            notes: tuple[str, ...] = ()) -> CompareReport:
    """Can the reader read data written with each writer schema, and could the reader's schema be
    the table's after each writer's (its engine may refuse the change between them)?"""
    label, schema = reader
    problems = tuple((w, (*can_read(ws, schema, profile, options),
                          *table_refusals(ws, schema, profile, options))) for w, ws in writers)
    return CompareReport(profile, options, label, problems, notes)


def merge(inputs: Labelled, profile: str, options: Options, notes: tuple[str, ...] = ()) -> MergeReport:
    """Does the merge of the schemas succeed, and what comes out?"""
    result = merge_schemas([schema for _, schema in inputs], profile, options)
    return MergeReport(profile, options, tuple(label for label, _ in inputs), result, notes)


def evolve(versions: Labelled, mode: Mode, profile: str, options: Options,
           notes: tuple[str, ...] = ()) -> EvolveReport:
    """May the last version follow the others under the mode?"""
    schemas = [schema for _, schema in versions]
    failures = check(schemas[:-1], schemas[-1], mode, profile, options)
    return EvolveReport(mode, profile, options, tuple(label for label, _ in versions), tuple(failures), notes)
