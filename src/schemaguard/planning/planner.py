"""The change plan: the operations a change is made of, the mode it needs, and the ordered steps
(with their schedule and checks) that ship it without breaking a reader, loudly or quietly.

1. **Operations** are `rules/changes.diff` under the plan's identity; an intended rename
   (`--rename OLD=NEW`) is paired through an alias, so it is one RENAME with any type change
   beside it instead of a drop plus an add.
2. **Verdicts** per reader profile and direction: BACKWARD (the new schema reads old data: every
   writer schema on disk), FORWARD (old readers, up to `readers_behind` versions back, read new
   data). A reader's problems are laid on the operation at or above their path: an error
   `breaks`, a warning is `quiet` (the read succeeds with other values). Each operation's row in
   TREATMENTS adds the quiet breaks no reader reports: under name identity a rename reads nulls
   both ways, a drop reads nulls in old readers, a meaning change reads every value differently.
3. **Mode** from the deploy order: readers first -> BACKWARD, writers first -> FORWARD, unknown ->
   FULL; TRANSITIVE unless readers are at most one version behind (docs/reference/compat-rules.md §2).
4. **Steps**: a change safe as one edit is one `edit` step (or `deploy-readers` then
   `deploy-writers` when only the order makes it safe); otherwise the operation's staged
   strategy. Steps of several operations merge by kind, in one fixed order.
5. **Checks** gate the steps; the caller's `judge` gives each a status (the command line runs
   proofs, query logs and consumer SQL through `planning/evidence.py`). A refuted or unproven entry
   check never makes a plan safe.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from math import ceil
from typing import Literal, NamedTuple, get_args

from schemaguard.base import Options, Problem
from schemaguard.model import Field, Schema, SchemaTransform, transform
from schemaguard.names import Identity
from schemaguard.paths import parent_and_name
from schemaguard.planning.treatments import (
    DATA_PROOFS,
    EXPAND_CONTRACT,
    NEW_VERSION,
    NO_READS,
    STEP_ORDER,
    STRATEGIES,
    CheckKind,
    DeployOrder,
    Direction,
    Need,
    Status,
    StepKind,
    Strategy,
    Treatment,
    Word,
    treatment,
)
from schemaguard.proofs import BACKFILLED_FROM
from schemaguard.rules.changes import Operation, OpKind, diff
from schemaguard.rules.profiles import can_read

# ---------------------------------------------------------------------------------------------
# Plan objects


@dataclass(frozen=True, slots=True)
class Check:
    """One check a step waits for. `subject` is the column (or `agree` expression) it is about;
    `command` runs it where it is a data proof."""

    kind: CheckKind
    subject: str
    command: str | None
    status: Status = "not-run"
    evidence: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.subject


@dataclass(frozen=True, slots=True)
class PlannedOperation:
    op: Operation
    verdicts: dict[str, dict[Direction, Word]]  # profile -> direction -> word
    safe_as_single_edit: bool
    strategy: Strategy
    why: str


@dataclass(frozen=True, slots=True)
class Step:
    kind: StepKind
    title: str
    weeks: tuple[int, int]
    entry_checks: tuple[Check, ...]
    sql: tuple[str, ...] = ()  # the statements that do it (planning/sql.py); none for a step of people


@dataclass(frozen=True, slots=True)
class View:
    """A view that presents one schema version over the table while a staged plan runs: created
    at `expand`, dropped at `contract`; `readers` are those the plan points at it."""

    name: str
    version: int
    shape: Literal["old", "new"]
    sql: str
    readers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    operations: tuple[PlannedOperation, ...]
    mode: str
    deploy_order: DeployOrder
    identity: Identity
    profiles: tuple[str, ...]
    strategy: Strategy
    steps: tuple[Step, ...]
    checks: tuple[Check, ...]
    notes: tuple[str, ...]
    table: str | None = None
    views: tuple[View, ...] = ()
    target: str | None = None  # how the steps' SQL names the table (planning/sql.py)
    table_format: str | None = None

    @property
    def safe_as_single_edit(self) -> bool:
        return all(o.safe_as_single_edit for o in self.operations) and not any(
            c.status in ("refuted", "unknown") for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 0 if self.safe_as_single_edit else 1


@dataclass(frozen=True, slots=True)
class Durations:
    """Weeks per step (`[plan]` in the configuration); readers move `readers_per_week` at a time,
    and `verify-no-reads` watches a window of `no_reads_days` that starts with the first move and
    ends at least a week after the last."""

    expand: int = 1
    backfill: int = 1
    migrate_data: int = 2
    new_version: int = 1
    tighten: int = 1
    sign_off: int = 1
    deploy: int = 1
    edit: int = 1
    contract: int = 1
    readers_per_week: int = 3
    no_reads_days: int = 30


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """What the plan is asked for. `history` holds every writer schema still on disk, oldest
    first (empty: only OLD); `table` names the table in check commands."""

    old: Schema
    new: Schema
    identity: Identity = "name"
    profiles: tuple[str, ...] = ("spark-read",)
    deploy_order: DeployOrder = "unknown"
    readers_behind: int | None = None  # None: unbounded (transitive)
    readers: int = 10
    renames: tuple[tuple[str, str], ...] = ()
    options: Options = field(default_factory=Options)
    history: tuple[Schema, ...] = ()
    table: str | None = None
    durations: Durations = field(default_factory=Durations)
    drop_needs_mapping: bool = False  # a Delta table without column mapping: a drop upgrades it first
    check_table: str | None = None  # how a check command names the table, when not as `table`


Judge = Callable[[Check], Check]  # fills a check's status and evidence


def not_run(check: Check) -> Check:
    return check


# ---------------------------------------------------------------------------------------------
# The plan


def required_mode(order: DeployOrder, readers_behind: int | None) -> str:
    """The compatibility mode a deploy order needs (docs/reference/compat-rules.md §2)."""
    base = {"readers-first": "BACKWARD", "writers-first": "FORWARD", "unknown": "FULL"}[order]
    return base if readers_behind == 1 else f"{base}_TRANSITIVE"


def directions(order: DeployOrder) -> tuple[Direction, ...]:
    """The directions a deploy order's mode checks."""
    by_order: dict[DeployOrder, tuple[Direction, ...]] = {
        "readers-first": ("backward",), "writers-first": ("forward",), "unknown": ("backward", "forward")}
    return by_order[order]


def operations(old: Schema, new: Schema, identity: Identity,
               renames: Sequence[tuple[str, str]] = ()) -> list[Operation]:
    """The change as operations; each intended rename (old path, new path) is one RENAME."""
    if not renames:
        return diff(old, new, identity)
    aliases = {new_path: parent_and_name(old_path)[1] for old_path, new_path in renames}
    aliased = transform(new, _Aliases(aliases))
    intended = {new_path for _, new_path in renames}
    ops = []
    for op in diff(old, aliased, "name" if identity == "name-ci" else identity):
        if op.kind == OpKind.METADATA_CHANGED and op.detail == "aliases" and op.path in intended:
            continue  # the alias is ours
        if op.kind == OpKind.RENAME and op.path in intended:
            op = replace(op, detail="declared")  # by --rename or the DDL
        ops.append(op)
    missing = intended - {op.path for op in ops if op.kind == OpKind.RENAME}
    if missing:
        raise ValueError(f"--rename: {', '.join(sorted(missing))} is not a field of the new schema "
                         "that pairs with the old name")
    return ops


class _Aliases(SchemaTransform):
    def __init__(self, by_path: Mapping[str, str]) -> None:
        self.by_path = by_path

    def field(self, f: Field, path: str, type_result: object) -> Field:
        rebuilt = super().field(f, path, type_result)  # type: ignore[arg-type]
        old = self.by_path.get(path)
        return rebuilt if old is None else replace(rebuilt, aliases=(*rebuilt.aliases, old))


def _by_ancestor(problems: Sequence[Problem]) -> dict[str, list[Problem]]:
    """Each problem under its own path and every path above it (`a.b[].c` under `a`, `a.b`,
    `a.b[]`, `a.b[].c`), so an operation finds the problems at or below it in one look-up:
    linear in problems times depth, not operations times problems."""
    index: dict[str, list[Problem]] = {}
    for p in problems:
        cuts = [i for i, ch in enumerate(p.path) if ch in ".[{"] + [len(p.path)]
        for at in dict.fromkeys(p.path[:i] for i in cuts):
            index.setdefault(at, []).append(p)
    return index


def _word(problems: Sequence[Problem]) -> Word:
    if any(p.severity == "error" for p in problems):
        return "breaks"
    return "quiet" if any(p.severity == "warning" for p in problems) else "ok"


def _worst(*words: Word) -> Word:
    return max(words, key=get_args(Word).index)


def reader_problems(request: PlanRequest) -> dict[str, dict[Direction, list[Problem]]]:
    """Per profile and direction, every problem a reader meets: BACKWARD, NEW reading each writer
    schema on disk; FORWARD, each old reader (the last `readers_behind`) reading NEW data."""
    writers = request.history or (request.old,)
    behind = request.readers_behind
    old_readers = writers if behind is None else writers[-behind:]
    out: dict[str, dict[Direction, list[Problem]]] = {}
    for profile in request.profiles:
        o = request.options
        backward = [p for w in _distinct(writers) for p in can_read(w, request.new, profile, o)]
        forward = [p for r in _distinct(old_readers) for p in can_read(request.new, r, profile, o)]
        out[profile] = {"backward": backward, "forward": forward}
    return out


def _distinct(schemas: Sequence[Schema]) -> list[Schema]:
    return list(dict.fromkeys(schemas))


def _problem_paths(op: Operation, direction: Direction) -> tuple[str, ...]:
    """Where a reader's problems about this operation are named: at the reader's paths (NEW for
    BACKWARD, the old path for FORWARD)."""
    if direction == "backward" or op.old_path is None:
        return (op.path,)
    return (op.old_path, op.path)


def build_plan(request: PlanRequest, judge: Judge = not_run) -> Plan:
    """The whole plan for a change; `judge` gives each check its status."""
    problems = reader_problems(request)
    indexed = {(profile, d): _by_ancestor(found)
               for profile, by in problems.items() for d, found in by.items()}
    wanted = directions(request.deploy_order)
    claimed: set[int] = set()
    decided: list[tuple[PlannedOperation, tuple[StepKind, ...], tuple[Need, ...]]] = []
    checks: dict[tuple[str, str], Check] = {}
    for op in operations(request.old, request.new, request.identity, request.renames):
        t = treatment(op, request.identity)
        verdicts: dict[str, dict[Direction, Word]] = {}
        for profile in problems:
            verdicts[profile] = {}
            for i, d in enumerate(get_args(Direction)):
                at = indexed[profile, d]
                mine = list({id(p): p for path in _problem_paths(op, d) for p in at.get(path, ())}.values())
                claimed |= {id(p) for p in mine}
                mine = [p for p in mine if p.code not in t.intended]
                verdicts[profile][d] = _worst(_word(mine), t.floor[i])
        decision = _decide(t, verdicts, wanted, request.deploy_order)
        own = [judge(_check(n, op, request.check_table or request.table)) for n in decision.needs]
        for c in own:
            checks.setdefault(c.key, c)
        safe = decision.safe or (t.proof_makes_safe and all(c.status == "proven" for c in own))
        why = decision.why + (" (proven on the data)" if safe and not decision.safe else "")
        planned = PlannedOperation(op, verdicts, safe, decision.strategy, why)
        decided.append((planned, decision.steps, decision.needs))
    # Older writer schemas on disk that NEW cannot read are notes: no step of this change fixes
    # those files, so they do not make its strategy (which its operations and steps agree with).
    notes = _unclaimed(problems, claimed, wanted)
    strategy: Strategy = max((o.strategy for o, _, _ in decided), key=STRATEGIES.index,
                             default="single-edit")
    steps = _steps(decided, checks, request)
    return Plan(tuple(o for o, _, _ in decided), required_mode(request.deploy_order, request.readers_behind),
                request.deploy_order, request.identity, request.profiles, strategy, steps,
                tuple(checks.values()), tuple(notes), request.table)


class _Decision(NamedTuple):
    safe: bool
    strategy: Strategy
    steps: tuple[StepKind, ...]
    needs: tuple[Need, ...]
    why: str


def _decide(t: Treatment, verdicts: dict[str, dict[Direction, Word]], wanted: tuple[Direction, ...],
            order: DeployOrder) -> _Decision:
    """Is one operation safe as one edit under the mode the deploy order needs, and if not, how is
    it shipped? Old files stay on disk, so a BACKWARD break is never fixed by deploy order."""
    failing = {d for by in verdicts.values() for d, w in by.items() if w != "ok"}
    relevant = failing & set(wanted)
    if t.always_staged or t.proof_makes_safe:
        return _Decision(False, t.strategy, t.steps, t.needs, t.why or _failing_why(failing))
    if "backward" in relevant:
        if t.strategy != "single-edit":
            return _Decision(False, t.strategy, t.steps, t.needs, t.why)
        return _Decision(False, "new-version", NEW_VERSION, (NO_READS,), _failing_why(failing))
    if relevant == {"forward"} and order == "unknown":
        return _Decision(False, "single-edit", ("deploy-readers", "deploy-writers"), (),
                         "old readers cannot read the new data: readers must deploy first")
    if relevant == {"forward"}:  # writers first: old readers would meet the new data
        return _Decision(False, "expand-contract", EXPAND_CONTRACT, (NO_READS,),
                         "old readers cannot read the new data, and writers deploy first: a new field")
    if "forward" in failing:  # readers first, as it must be
        return _Decision(True, "single-edit", ("deploy-readers", "deploy-writers"), (),
                         "old readers cannot read the new data: safe because readers deploy first")
    if failing:
        return _Decision(True, "single-edit", ("edit",), (), "safe under FORWARD (writers first), but new "
                         "readers still meet the old files: " + _failing_why(failing))
    return _Decision(True, "single-edit", ("edit",), (), "every reader reads it, both ways")


def _failing_why(failing: set[Direction]) -> str:
    if failing == {"backward"}:
        return "the new schema cannot read the data already on disk"
    return "readers break both ways" if len(failing) == 2 else "old readers cannot read the new data"


def _unclaimed(problems: dict[str, dict[Direction, list[Problem]]], claimed: set[int],
               wanted: tuple[Direction, ...]) -> list[str]:
    """Problems no operation of OLD -> NEW explains: older writer schemas still on disk."""
    notes = []
    for profile, by_direction in problems.items():
        for d in wanted:
            for p in by_direction[d]:
                if id(p) not in claimed and p.severity != "info":
                    notes.append(f"{profile} {d}: {p.message} (a schema version on disk, not this change)")
    return list(dict.fromkeys(notes))


# ---------------------------------------------------------------------------------------------
# Steps, checks and the schedule


def _steps(decided: Sequence[tuple[PlannedOperation, tuple[StepKind, ...], tuple[Need, ...]]],
           checks: Mapping[tuple[str, str], Check], request: PlanRequest) -> tuple[Step, ...]:
    """The operations' steps merged by kind in STEP_ORDER, each with the checks that gate it."""
    subjects: dict[StepKind, list[str]] = {}
    gates: dict[StepKind, list[Check]] = {}
    staged = not all(o.safe_as_single_edit for o, _, _ in decided)
    for o, kinds, needs in decided:
        if staged and o.safe_as_single_edit and kinds == ("edit",):
            continue  # a safe edit rides along with the staged plan's schema changes
        for kind in kinds:
            subjects.setdefault(kind, []).append(_subject(o.op, kind))
        for need in needs:
            gate = need.gates if need.gates in kinds else kinds[-1]
            gates.setdefault(gate, []).append(checks[_check(need, o.op, request.table).key])
    if "contract" in subjects and request.drop_needs_mapping:
        subjects["column-mapping"] = [_STEP_TITLES["column-mapping"]]
    ordered = [k for k in STEP_ORDER if k in subjects] or ["edit"]
    weeks = schedule(ordered, request.durations, request.readers)
    return tuple(Step(k, _title(k, subjects.get(k, [])), weeks[k], tuple(dict.fromkeys(gates.get(k, ()))))
                 for k in ordered)


def _subject(op: Operation, kind: StepKind) -> str:
    """What one step does for one operation, in words (`{old}`/`{new}`: its paths)."""
    old, new = op.old_path or op.path, op.path
    if op.kind == OpKind.DROP_FIELD and kind == "move-readers":
        return f"move readers off {old}, one consumer at a time"
    return _STEP_TITLES[kind].format(old=old, new=new)


_STEP_TITLES: dict[StepKind, str] = {
    "sign-off": "producers and consumers sign off the new meaning of {new}",
    "update-consumers": "consumers of {new} gain a branch for values they do not know",
    "deploy-readers": "deploy the readers with the new schema",
    "expand": "add {new}, optional with a default",
    "dual-write": "writers write both {old} and {new}",
    "migrate-data": "migrate {old} into a new column or table of the new type",
    "new-version": "write a new table version side by side while old readers remain",
    "backfill": "old rows get {new}",
    "tighten": "make {new} required",
    "move-readers": "move readers from {old} to {new}, one consumer at a time",
    "verify-no-reads": "verify nobody reads {old}",
    "column-mapping": "enable Delta column mapping (name), which DROP COLUMN needs; it excludes Delta "
                      "readers below reader version 2 (delta-spark before 1.2, engines without column "
                      "mapping) and Parquet readers of the table's folder",
    "contract": "drop {old}",
    "deploy-writers": "deploy the writers with the new schema",
    "edit": "apply the change as one edit",
}


def _title(kind: StepKind, subjects: Sequence[str]) -> str:
    return "; ".join(dict.fromkeys(subjects)) or _STEP_TITLES[kind]


def _check(need: Need, op: Operation, table: str | None) -> Check:
    old = op.old_path or op.path
    subject = {"old": old, "new": op.path, "pair": f"{old} = {op.path}",
               "from": f"{op.path}{BACKFILLED_FROM}{old}"}[need.side]
    if need.kind == "fits" and op.after:
        subject = f"{old}:{op.after}"
    if need.kind == "values" and op.before:
        subject = old
    command = None
    if need.kind in DATA_PROOFS:
        command = f"schemaguard check {_shell_word(table or 'TABLE')} --{need.kind} {_shell_word(subject)}"
    return Check(need.kind, subject, command)


_PLAIN_WORD = re.compile(r"[\w@%+=:,./-]+")


def _shell_word(text: str) -> str:
    """`text` as one word of a POSIX shell command line: bare when plain, in double quotes when
    only spaces and the like need quoting (as the docs write `"weight = weight_kg"`), else in single
    quotes, so that a column spelt with backticks is never run as a command substitution."""
    if _PLAIN_WORD.fullmatch(text):
        return text
    return f'"{text}"' if not set(text) & set('$`"\\!') else shlex.quote(text)


def schedule(kinds: Sequence[StepKind], d: Durations, readers: int) -> dict[StepKind, tuple[int, int]]:
    """Weeks [start, end] per step, in order: each starts after the one before, except that
    `dual-write` starts with `expand`, `verify-no-reads` starts with `move-readers` and lasts
    the no-reads window, ending at least a week after the last reader moved, and `column-mapping`
    (a table property, no reader waits on it) runs in the window's last week, so the contract
    keeps the week after the window."""
    moving = max(1, ceil(readers / max(1, d.readers_per_week)))
    weeks = {"expand": d.expand, "dual-write": d.expand, "backfill": d.backfill,
             "migrate-data": d.migrate_data, "new-version": d.new_version, "tighten": d.tighten,
             "sign-off": d.sign_off,
             "deploy-readers": d.deploy, "deploy-writers": d.deploy, "edit": d.edit, "contract": d.contract,
             "move-readers": moving, "update-consumers": moving}
    out: dict[StepKind, tuple[int, int]] = {}
    end = 0
    for kind in kinds:
        if kind == "dual-write" and "expand" in out:
            out[kind] = out["expand"]
            continue
        if kind == "verify-no-reads" and "move-readers" in out:
            start, moved = out["move-readers"]
            out[kind] = (start, max(moved + 1, start + ceil(d.no_reads_days / 7) - 1))
        elif kind == "column-mapping" and "verify-no-reads" in out:
            last = out["verify-no-reads"][1]
            out[kind] = (last, last)
            continue
        else:
            out[kind] = (end + 1, end + weeks.get(kind, 1))
        end = max(end, out[kind][1])
    return out

