"""What each operation needs to ship without breaking a reader: the treatment table (a strategy,
its steps and the checks that gate them, per operation kind and identity rule, each row citing
its source), and the words plans are made of (steps, checks, strategies, directions).

Part of the plan stage: `planner.py` looks each operation up here. May import the stages below
(`rules/changes` for the operation kinds); must not judge a schema or read a table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

from schemaguard.base import ProblemCode
from schemaguard.names import Identity
from schemaguard.rules.changes import Operation, OpKind

DeployOrder = Literal["readers-first", "writers-first", "unknown"]
DEPLOY_ORDERS: tuple[DeployOrder, ...] = get_args(DeployOrder)
Word = Literal["ok", "quiet", "breaks"]  # what one reader meets, worst last
Strategy = Literal["single-edit", "expand-contract", "data-migration", "new-version"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)  # least to most demanding
StepKind = Literal[
    "sign-off", "update-consumers", "deploy-readers", "expand", "dual-write", "migrate-data",
    "new-version", "backfill", "tighten", "move-readers", "verify-no-reads", "column-mapping", "contract",
    "deploy-writers", "edit",
]
STEP_ORDER: tuple[StepKind, ...] = get_args(StepKind)  # the order steps run in
CheckKind = Literal["not-null", "backfilled", "agree", "fits", "values", "unit-drift", "no-reads",
                    "enum-consumers", "default-impact", "sign-off"]
DATA_PROOFS: frozenset[CheckKind] = frozenset(
    ("not-null", "backfilled", "agree", "fits", "values", "unit-drift"))
Status = Literal["proven", "refuted", "unknown", "not-run"]
Direction = Literal["backward", "forward"]


# ---------------------------------------------------------------------------------------------
# What each operation needs (the step list; sources cited per row)


IdentityClass = Literal["name", "id", "position"]


@dataclass(frozen=True, slots=True)
class Need:
    """A check an operation's step must pass before it starts: its kind, the step it gates, and
    which side of the operation it is about (`old`: the old path, `new`: the new one, `pair`:
    both, as an `agree` expression, `from`: the new one filled from the old, `NEW from OLD`)."""

    kind: CheckKind
    gates: StepKind
    side: Literal["old", "new", "pair", "from"] = "new"


@dataclass(frozen=True, slots=True)
class Treatment:
    """One operation kind under one identity: the strategy when it is not safe as one edit, its
    steps and checks, the quiet break no reader reports (backward, forward), and why."""

    strategy: Strategy
    steps: tuple[StepKind, ...]
    needs: tuple[Need, ...] = ()
    floor: tuple[Word, Word] = ("ok", "ok")
    why: str = ""
    always_staged: bool = False  # never one edit, whatever the readers say
    intended: frozenset[ProblemCode] = frozenset()  # problem codes that are the operation itself
    proof_makes_safe: bool = False  # one edit once every check it needs is proven


EXPAND_CONTRACT: tuple[StepKind, ...] = (
    "expand", "dual-write", "backfill", "move-readers", "verify-no-reads", "contract")
_RETIRE: tuple[StepKind, ...] = ("move-readers", "verify-no-reads", "contract")
NEW_VERSION: tuple[StepKind, ...] = ("new-version", *_RETIRE)
NO_READS = Need("no-reads", "contract", "old")
_ONE_EDIT = Treatment("single-edit", ("edit",))
_FATAL_POSITION = Treatment(
    "new-version", NEW_VERSION, (NO_READS,), ("quiet", "quiet"),
    "positional readers bind columns by position: values land in other columns (docs/rules.md, "
    "'Positional readers'); write a new table version side by side", always_staged=True)

TREATMENTS: dict[tuple[OpKind, IdentityClass], Treatment] = {
    # docs/reference/compat-rules.md §1 "Rename, no alias": a reader by name sees a drop and an add
    (OpKind.RENAME, "name"): Treatment(
        "expand-contract", EXPAND_CONTRACT,
        (Need("backfilled", "move-readers", "from"), Need("agree", "move-readers", "pair"), NO_READS),
        ("quiet", "quiet"), "readers by name read nulls for a renamed column, both ways",
        always_staged=True),
    (OpKind.RENAME, "id"): replace(_ONE_EDIT, why="readers by id: a rename is metadata only (§3)"),
    (OpKind.RENAME, "position"): replace(_ONE_EDIT, why="positional readers ignore names",
                                         intended=frozenset({ProblemCode.POSITION_NAME_MISMATCH})),
    # a drop: old readers read nulls (§1 missing field; §3 optional read as null)
    (OpKind.DROP_FIELD, "name"): Treatment(
        "expand-contract", _RETIRE, (NO_READS,), ("ok", "quiet"),
        "old readers read nulls for a dropped column", always_staged=True),
    (OpKind.REORDER, "position"): _FATAL_POSITION,
    # an optional field without a default: Avro readers need one (§1 READER_FIELD_MISSING_DEFAULT_VALUE)
    (OpKind.ADD_OPTIONAL_FIELD, "name"): Treatment(
        "expand-contract", ("expand",), (), ("ok", "ok"),
        "readers that need a default for a field the data lacks (Avro) fail: add it with a default"),
    # add required: old data has no value for it (§1 READER_FIELD_MISSING_DEFAULT_VALUE)
    (OpKind.ADD_REQUIRED_FIELD, "name"): Treatment(
        "expand-contract", ("expand", "backfill", "tighten"),
        (Need("backfilled", "tighten"), Need("not-null", "tighten")), ("breaks", "ok"),
        "old data has no value for a required field: add it optional, backfill, then tighten",
        always_staged=True),
    (OpKind.NARROW_TYPE, "name"): Treatment(
        "data-migration", ("migrate-data", *_RETIRE), (Need("fits", "migrate-data", "old"), NO_READS),
        ("breaks", "ok"), "a narrower type cannot hold every old value: migrate the data, never "
        "edit the schema", always_staged=True),
    (OpKind.CHANGE_TYPE, "name"): Treatment(
        "new-version", NEW_VERSION, (NO_READS,), ("breaks", "breaks"),
        "unrelated types: no reader converts one to the other", always_staged=True),
    (OpKind.LOGICAL_TYPE_CHANGE, "name"): Treatment(
        "new-version", ("sign-off", *NEW_VERSION), (Need("sign-off", "sign-off"), NO_READS),
        ("quiet", "quiet"), "the stored values stay, their meaning changes (unit, time zone, "
        "scale or text/bytes): never safe on shape alone", always_staged=True),
    (OpKind.NULLABILITY_TIGHTENED, "name"): Treatment(
        "single-edit", ("tighten",), (Need("not-null", "tighten"),), ("breaks", "ok"),
        "old data may hold nulls: prove none on every version on disk, then tighten",
        proof_makes_safe=True),
    (OpKind.ENUM_VALUE_ADDED, "name"): Treatment(
        "single-edit", ("update-consumers", "deploy-readers", "deploy-writers"),
        (Need("enum-consumers", "deploy-writers"),), ("ok", "quiet"),
        "consumers that match the values exhaustively mishandle the new one", always_staged=True),
    (OpKind.ENUM_VALUE_REMOVED, "name"): Treatment(
        "data-migration", ("migrate-data", "edit"), (Need("values", "edit", "old"),), ("breaks", "ok"),
        "old data may hold the removed value (§1 MISSING_ENUM_SYMBOLS)", always_staged=True),
    (OpKind.DEFAULT_CHANGED, "name"): Treatment(
        "single-edit", ("sign-off", "edit"), (Need("default-impact", "edit"),), ("quiet", "ok"),
        "rows written without the field read the new default (docs/reference/compat-rules.md, meaning of a "
        "reader default)", proof_makes_safe=True),
    (OpKind.ENUM_DEFAULT_CHANGED, "name"): Treatment(
        "single-edit", ("sign-off", "edit"), (Need("default-impact", "edit"),), ("quiet", "ok"),
        "unknown symbols decode as the new default", proof_makes_safe=True),
    (OpKind.MEANING_CHANGED, "name"): Treatment(
        "single-edit", ("sign-off", "edit"), (Need("sign-off", "edit"), Need("unit-drift", "edit")),
        ("quiet", "quiet"), "the same values mean something else (unit or semantic metadata): a "
        "producer-consumer contract, never safe on shape alone", always_staged=True),
    (OpKind.FIELD_ID_REUSED, "name"): replace(
        _FATAL_POSITION, why="an id given to another column: id readers bind its old data"),
}


def treatment(op: Operation, identity: Identity) -> Treatment:
    """The row for one operation: its identity's own row, else the name row, else one edit.
    Under position identity a drop or insert anywhere but the end moves every later column."""
    klass: IdentityClass = "position" if identity == "position" else "id" if identity == "id" else "name"
    if klass == "position" and op.kind == OpKind.RENAME and op.detail != "by position":
        return _FATAL_POSITION
    return TREATMENTS.get((op.kind, klass)) or TREATMENTS.get((op.kind, "name")) or _ONE_EDIT
