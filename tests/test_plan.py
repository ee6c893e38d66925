"""The change plan (planning/planner.py): the worked example, each operation of the seed rules under
each deploy order (the table in docs/plan-and-migrate.md, row by row), identities, and the command
line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schemaguard.formats.notation import schema_from_notation
from schemaguard.model import Schema
from schemaguard.planning.planner import Check, PlanRequest, build_plan
from tests.helpers import run

# ---------------------------------------------------------------------------------------------
# Schemas in the notation


def schema(*fields: dict[str, Any]) -> Schema:
    return schema_from_notation({"fields": list(fields)})


def f(name: str, type_: Any = "double", nullable: bool = True, **more: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "nullable": nullable, **more}


ID = f("id", "int64", nullable=False)
OLD = schema(ID, f("weight"))
RENAMED = schema(ID, f("weight_kg"))


def steps(plan: Any) -> list[tuple[str, tuple[int, int]]]:
    return [(s.kind, s.weeks) for s in plan.steps]


# ---------------------------------------------------------------------------------------------
# The worked example: rename weight to weight_kg, ten readers, unknown deploy order


def test_the_worked_example_rename_under_name_identity() -> None:
    plan = build_plan(PlanRequest(OLD, RENAMED, identity="name", readers=10,
                                  renames=(("weight", "weight_kg"),), table="lake/shipments"))
    [op] = plan.operations
    assert (op.op.kind.value, op.op.old_path, op.op.path, op.strategy) == (
        "rename", "weight", "weight_kg", "expand-contract")
    assert op.verdicts["spark-read"] == {"backward": "quiet", "forward": "quiet"}  # nulls both ways
    assert (plan.mode, plan.strategy, plan.safe_as_single_edit, plan.exit_code) == (
        "FULL_TRANSITIVE", "expand-contract", False, 1)
    assert steps(plan) == [("expand", (1, 1)), ("dual-write", (1, 1)), ("backfill", (2, 2)),
                           ("move-readers", (3, 6)), ("verify-no-reads", (3, 7)), ("contract", (8, 8))]
    gates = {s.kind: [(c.kind, c.subject) for c in s.entry_checks] for s in plan.steps}
    assert gates["move-readers"] == [("backfilled", "weight_kg from weight"), ("agree", "weight = weight_kg")]
    assert gates["contract"] == [("no-reads", "weight")]
    commands = {c.kind: c.command for c in plan.checks}
    assert commands == {"backfilled": 'schemaguard check lake/shipments --backfilled "weight_kg from weight"',
                        "agree": 'schemaguard check lake/shipments --agree "weight = weight_kg"',
                        "no-reads": None}
    assert all(c.status == "not-run" for c in plan.checks)


@pytest.mark.parametrize("order", ["readers-first", "writers-first", "unknown"])
def test_a_rename_keeps_its_whole_expand_contract_whatever_the_deploy_order(order: str) -> None:
    plan = build_plan(PlanRequest(OLD, RENAMED, identity="name", renames=(("weight", "weight_kg"),),
                                  deploy_order=order))  # type: ignore[arg-type]
    assert [s.kind for s in plan.steps] == ["expand", "dual-write", "backfill", "move-readers",
                                            "verify-no-reads", "contract"]
    assert [(c.kind, c.subject) for c in plan.checks] == [
        ("backfilled", "weight_kg from weight"), ("agree", "weight = weight_kg"), ("no-reads", "weight")]


def test_without_rename_the_diff_shows_drop_and_add_with_the_suggestion() -> None:
    plan = build_plan(PlanRequest(OLD, RENAMED, identity="name"))
    kinds = [(o.op.kind.value, o.op.path, o.op.detail) for o in plan.operations]
    assert ("rename", "weight_kg", "suggested: same type and position") in kinds
    assert {k for k, _, _ in kinds} >= {"drop_field", "add_optional_field"}
    assert plan.strategy == "expand-contract" and not plan.safe_as_single_edit


def test_a_rename_under_id_identity_is_metadata_only() -> None:
    old = schema(f("id", "int64", nullable=False, id=1), f("weight", id=2))
    new = schema(f("id", "int64", nullable=False, id=1), f("weight_kg", id=2))
    plan = build_plan(PlanRequest(old, new, identity="id", profiles=("iceberg",)))
    [op] = plan.operations
    assert (op.op.kind.value, op.safe_as_single_edit) == ("rename", True)
    assert (plan.strategy, plan.exit_code, steps(plan)) == ("single-edit", 0, [("edit", (1, 1))])


def test_a_reorder_under_position_identity_is_fatal() -> None:
    old = schema(ID, f("weight"), f("height"))
    new = schema(ID, f("height"), f("weight"))
    plan = build_plan(PlanRequest(old, new, identity="position", profiles=("positional",)))
    assert plan.strategy == "new-version" and not plan.safe_as_single_edit
    assert "position" in next(o.why for o in plan.operations if o.op.kind.value == "reorder")
    assert plan.steps[0].kind == "new-version"
    same = build_plan(PlanRequest(old, new, identity="name"))  # readers by name do not care
    assert same.safe_as_single_edit and same.strategy == "single-edit"


# ---------------------------------------------------------------------------------------------
# Every operation of the seed rules, under each deploy order (docs/plan-and-migrate.md: "What each change
# needs")

ORDERS = ("readers-first", "writers-first", "unknown")
ROWS: list[tuple[str, Schema, Schema, str, dict[str, tuple[str, bool]]]] = [
    # operation, old, new, identity, {deploy order: (strategy, safe as one edit)}
    ("add optional with default", schema(ID), schema(ID, f("note", "string", default="n/a")), "name",
     dict.fromkeys(ORDERS, ("single-edit", True))),
    ("add required", schema(ID), schema(ID, f("note", "string", nullable=False)), "name",
     dict.fromkeys(ORDERS, ("expand-contract", False))),
    ("drop optional", schema(ID, f("note", "string")), schema(ID), "name",
     dict.fromkeys(ORDERS, ("expand-contract", False))),
    ("widen int32 to int64", schema(ID, f("n", "int32")), schema(ID, f("n", "int64")), "name",
     {"readers-first": ("single-edit", True), "writers-first": ("expand-contract", False),
      "unknown": ("single-edit", False)}),
    ("narrow int64 to int32", schema(ID, f("n", "int64")), schema(ID, f("n", "int32")), "name",
     dict.fromkeys(ORDERS, ("data-migration", False))),
    ("rename, name identity", OLD, RENAMED, "name", dict.fromkeys(ORDERS, ("expand-contract", False))),
    ("rename, id identity", schema(f("weight", id=2)), schema(f("weight_kg", id=2)), "id",
     dict.fromkeys(ORDERS, ("single-edit", True))),
    ("rename, position identity", schema(ID, f("weight")), schema(ID, f("weight_kg")), "position",
     dict.fromkeys(ORDERS, ("single-edit", True))),
    ("reorder, name identity", schema(ID, f("a"), f("b")), schema(ID, f("b"), f("a")), "name",
     dict.fromkeys(ORDERS, ("single-edit", True))),
    ("reorder, id identity", schema(f("a", id=1), f("b", id=2)), schema(f("b", id=2), f("a", id=1)), "id",
     dict.fromkeys(ORDERS, ("single-edit", True))),
    ("reorder, position identity", schema(ID, f("a"), f("b")), schema(ID, f("b"), f("a")), "position",
     dict.fromkeys(ORDERS, ("new-version", False))),
    ("enum value added", schema(f("s", {"enum": ["a", "b"]})), schema(f("s", {"enum": ["a", "b", "c"]})),
     "name", dict.fromkeys(ORDERS, ("single-edit", False))),
    ("default changed", schema(f("c", "string", default="x")), schema(f("c", "string", default="y")), "name",
     dict.fromkeys(ORDERS, ("single-edit", False))),
    ("nullability relaxed", schema(f("c", "string", nullable=False)), schema(f("c", "string")), "name",
     {"readers-first": ("single-edit", True), "writers-first": ("expand-contract", False),
      "unknown": ("single-edit", False)}),  # Avro's old readers refuse nulls
    ("nullability tightened", schema(f("c", "string")), schema(f("c", "string", nullable=False)), "name",
     dict.fromkeys(ORDERS, ("single-edit", False))),
    ("meaning changed", schema(f("w", metadata={"unit": "lb"})), schema(f("w", metadata={"unit": "kg"})),
     "name", dict.fromkeys(ORDERS, ("single-edit", False))),
]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("name", "old", "new", "identity", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_each_operation_of_the_seed_rules(name: str, old: Schema, new: Schema, identity: str,
                                          expected: dict[str, tuple[str, bool]], order: str) -> None:
    plan = build_plan(PlanRequest(old, new, identity=identity, profiles=profiles_for(identity),  # type: ignore[arg-type]
                                  deploy_order=order))  # type: ignore[arg-type]
    assert (plan.strategy, plan.safe_as_single_edit) == expected[order]
    assert plan.mode == {"readers-first": "BACKWARD", "writers-first": "FORWARD",
                         "unknown": "FULL"}[order] + "_TRANSITIVE"
    assert plan.exit_code == (0 if expected[order][1] else 1)


def profiles_for(identity: str) -> tuple[str, ...]:
    return {"id": ("iceberg",), "position": ("positional",)}.get(identity, ("spark-read", "avro"))


def test_the_docs_table_is_what_the_planner_says() -> None:
    """docs/plan-and-migrate.md "What each change needs": one row per seed operation, as the planner
    plans it."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "plan-and-migrate.md").read_text(encoding="utf-8")
    shown = page.split("<!-- plan-table -->\n")[1].split("<!-- /plan-table -->")[0].strip().splitlines()[2:]
    rows = []
    for name, old, new, identity, _ in ROWS:
        cells, kinds = [], ""
        for order in ORDERS:
            plan = build_plan(PlanRequest(old, new, identity=identity,  # type: ignore[arg-type]
                                          profiles=profiles_for(identity), deploy_order=order))  # type: ignore[arg-type]
            cells.append(plan.strategy + (" (one edit)" if plan.safe_as_single_edit else ", staged"))
            kinds = ", ".join(s.kind for s in plan.steps)
        rows.append(f"| {name} | {identity} | {' | '.join(cells)} | {kinds} |")
    assert shown == rows


def test_readers_one_version_behind_need_no_transitive_mode() -> None:
    plan = build_plan(PlanRequest(OLD, OLD, readers_behind=1, deploy_order="readers-first"))
    assert plan.mode == "BACKWARD" and plan.safe_as_single_edit and not plan.operations


def test_the_steps_of_each_staged_operation() -> None:
    tighten = build_plan(PlanRequest(schema(f("c", "string")), schema(f("c", "string", nullable=False))))
    assert [(s.kind, [c.kind for c in s.entry_checks]) for s in tighten.steps] == [("tighten", ["not-null"])]
    required = build_plan(PlanRequest(schema(ID), schema(ID, f("note", "string", nullable=False))))
    assert [s.kind for s in required.steps] == ["expand", "backfill", "tighten"]
    assert [c.kind for c in required.steps[-1].entry_checks] == ["backfilled", "not-null"]
    narrow = build_plan(PlanRequest(schema(f("n", "int64")), schema(f("n", "int32"))))
    assert narrow.steps[0].kind == "migrate-data"
    assert [(c.kind, c.subject) for c in narrow.steps[0].entry_checks] == [("fits", "n:int32")]
    enum = build_plan(PlanRequest(schema(f("s", {"enum": ["a"]})), schema(f("s", {"enum": ["a", "b"]}))))
    assert [s.kind for s in enum.steps] == ["update-consumers", "deploy-readers", "deploy-writers"]
    assert [c.kind for c in enum.steps[-1].entry_checks] == ["enum-consumers"]
    meaning = build_plan(PlanRequest(schema(f("w", metadata={"unit": "lb"})),
                                     schema(f("w", metadata={"unit": "kg"}))))
    assert [o.op.kind.value for o in meaning.operations] == ["meaning_changed"]
    assert {c.kind for c in meaning.checks} == {"sign-off", "unit-drift"}
    [changed] = meaning.operations
    assert changed.verdicts["spark-read"] == {"backward": "quiet", "forward": "quiet"}


def test_a_proven_check_makes_a_tightening_one_edit() -> None:
    def proven(check: Check) -> Check:
        return Check(check.kind, check.subject, check.command, "proven", "decided by footer")

    plan = build_plan(PlanRequest(schema(f("c", "string")), schema(f("c", "string", nullable=False))),
                      judge=proven)
    assert plan.safe_as_single_edit and plan.exit_code == 0

    def refuted(check: Check) -> Check:
        return Check(check.kind, check.subject, check.command, "refuted", "3 offending")

    assert not build_plan(PlanRequest(schema(f("c", "string")), schema(f("c", "string", nullable=False))),
                          judge=refuted).safe_as_single_edit


def test_the_schedule_follows_the_durations_and_readers() -> None:
    from schemaguard.planning.planner import Durations

    plan = build_plan(PlanRequest(OLD, RENAMED, readers=1, renames=(("weight", "weight_kg"),),
                                  durations=Durations(backfill=2, no_reads_days=14)))
    assert steps(plan) == [("expand", (1, 1)), ("dual-write", (1, 1)), ("backfill", (2, 3)),
                           ("move-readers", (4, 4)), ("verify-no-reads", (4, 5)), ("contract", (6, 6))]


# ---------------------------------------------------------------------------------------------
# The command line


def write(path: Path, s: Schema) -> str:
    from schemaguard.formats.notation import dumps

    path.write_text(dumps(s))
    return str(path)


def test_the_plan_command_text_json_markdown_and_exit_codes(tmp_path: Path) -> None:
    old, new = write(tmp_path / "old.json", OLD), write(tmp_path / "new.json", RENAMED)
    done = run("plan", old, new, "--rename", "weight=weight_kg", "--identity", "name", "--readers", "10",
               "--format", "json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) >= {"operations", "mode", "deploy_order", "safe_as_single_edit", "strategy", "steps",
                        "checks", "notes"}
    assert [(s["kind"], s["weeks"]) for s in doc["steps"]][-1] == ("contract", [8, 8])
    assert doc["operations"][0]["verdicts"]["spark-read"] == {"backward": "quiet", "forward": "quiet"}
    text = run("plan", old, new, "--rename", "weight=weight_kg")
    assert text.returncode == 1 and "week 8" in text.stdout and "contract" in text.stdout
    markdown = run("plan", old, new, "--rename", "weight=weight_kg", "--format", "markdown")
    assert markdown.stdout.startswith("## Schema change plan") and "| 6 | week 8 |" in markdown.stdout
    same = run("plan", old, old)
    assert same.returncode == 0, same.stdout + same.stderr
    for bad in (["plan", old], ["plan", old, new, "--rename", "nope"], ["plan", old, new, "--rename", "x=y"],
                ["plan", old, new, "--deploy-order", "sideways"], ["plan", old, str(tmp_path / "none.json")]):
        wrong = run(*bad)
        assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, (bad, wrong.stderr)


def test_column_mapping_runs_in_the_no_reads_windows_last_week_so_the_contract_keeps_its_week() -> None:
    plan = build_plan(PlanRequest(OLD, RENAMED, identity="name", renames=(("weight", "weight_kg"),),
                                  drop_needs_mapping=True))
    assert steps(plan) == [("expand", (1, 1)), ("dual-write", (1, 1)), ("backfill", (2, 2)),
                           ("move-readers", (3, 6)), ("verify-no-reads", (3, 7)), ("column-mapping", (7, 7)),
                           ("contract", (8, 8))]
