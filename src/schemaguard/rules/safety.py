"""Safety per operation: for each change between OLD and NEW, is it safe BACKWARD (new readers
read old data) and FORWARD (old readers read new data) under a profile, which mode it passes,
and the deployment order it requires. The change planner builds its steps from this table.

The verdicts come from the reader profiles themselves (`can_read` both ways), attributed to the
operation whose path the problem sits at, so the two can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from schemaguard.model import Identity, Schema
from schemaguard.rules.changes import Operation, OpKind, diff
from schemaguard.rules.modes import Mode
from schemaguard.rules.profiles import TABLES, Options, Problem, can_read, effective_options

DeployOrder = Literal["any order", "readers first", "writers first", "together"]
DEPLOY_ORDER: dict[Mode, DeployOrder] = {
    Mode.FULL: "any order",
    Mode.BACKWARD: "readers first",  # new readers can read old data: upgrade consumers first
    Mode.FORWARD: "writers first",  # old readers can read new data: upgrade producers first
    Mode.NONE: "together",  # neither side can read the other: change both at once, or migrate
}


@dataclass(frozen=True, slots=True)
class OperationSafety:
    operation: Operation
    backward: tuple[Problem, ...]  # problems of NEW reading OLD data
    forward: tuple[Problem, ...]  # problems of OLD reading NEW data

    @property
    def backward_ok(self) -> bool:
        return not any(p.severity == "error" for p in self.backward)

    @property
    def forward_ok(self) -> bool:
        return not any(p.severity == "error" for p in self.forward)

    @property
    def mode(self) -> Mode:
        """The strongest mode this change passes: FULL, BACKWARD, FORWARD or NONE (breaking)."""
        if self.backward_ok and self.forward_ok:
            return Mode.FULL
        if self.backward_ok:
            return Mode.BACKWARD
        return Mode.FORWARD if self.forward_ok else Mode.NONE

    @property
    def deploy_order(self) -> DeployOrder:
        return DEPLOY_ORDER[self.mode]


def operation_safety(old: Schema, new: Schema, profile: str, options: Options | None = None,
                     identity: Identity | None = None) -> list[OperationSafety]:
    opts = effective_options(profile, options or Options(identity=identity))
    ident = opts.identity or (TABLES[profile].default_identity if profile in TABLES else "name-ci")
    backward = can_read(old, new, profile, opts)
    forward = can_read(new, old, profile, opts)
    return [
        OperationSafety(op, tuple(p for p in backward if _concerns(op, p)),
                        tuple(p for p in forward if _concerns(op, p)))
        for op in diff(old, new, "name" if ident == "name-ci" and opts.case_sensitive else ident)
    ]


def _concerns(op: Operation, problem: Problem) -> bool:
    """Does a reader's problem come from this operation? It sits at the operation's path (old or
    new), below it, or, for a reorder, anywhere in the reordered struct under positional binding."""
    paths = {op.path} | ({op.old_path} if op.old_path else set())
    if op.kind == OpKind.REORDER:
        return problem.code == "POSITION_NAME_MISMATCH" and (
            op.path == "" or problem.path.startswith(op.path))
    return any(problem.path == p or problem.path.startswith((p + ".", p + "[", p + "{"))
               for p in paths)
