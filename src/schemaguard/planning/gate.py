"""One step of a written plan, gated: its entry checks as a `schemaguard check` command line
(the data proofs) and the checks only the plan could judge (no reads, enum consumers, sign-off,
default impact), as the plan recorded them. `jobs/migration_check.py --plan P --step K` runs it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemaguard.errors import UsageError, require_regular
from schemaguard.planning.treatments import DATA_PROOFS, STEP_ORDER
from schemaguard.proofs import Verdict, overall


@dataclass(frozen=True, slots=True)
class StepGate:
    check_argv: tuple[str, ...]  # `check TABLE --kind subject ...`; empty when no data proof gates it
    recorded_checks: tuple[tuple[str, str, str, str], ...]  # (kind, subject, status, evidence) from the plan

    @property
    def recorded(self) -> Verdict:
        """The recorded checks together, as `check` counts proofs (not run: unknown)."""
        return overall(status if status in ("proven", "refuted") else "unknown"  # type: ignore[misc]
                       for _, _, status, _ in self.recorded_checks)


def read_plan(plan_file: Path) -> dict[str, Any]:
    """A plan written by `schemaguard plan --format json`, or a one-line error."""
    try:
        require_regular(plan_file, str(plan_file))
        doc: Any = json.loads(plan_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"--plan {plan_file}: not a plan written by `schemaguard plan --format json` ({e})"
                         ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list) or not all(
            isinstance(s, dict) for s in doc["steps"]):
        raise UsageError(f"--plan {plan_file}: not a plan written by `schemaguard plan --format json`")
    return doc


def plan_step(doc: dict[str, Any], step: str) -> dict[str, Any]:
    """The step of kind `step` in a plan, or a one-line error naming the plan's steps."""
    if step not in STEP_ORDER:
        raise UsageError(f"--step {step!r} is not one of {', '.join(STEP_ORDER)}")
    found = [s for s in doc["steps"] if s.get("kind") == step]
    if not found:
        kinds = ", ".join(str(s.get("kind")) for s in doc["steps"])
        raise UsageError(f"--step {step}: the plan has no such step (its steps: {kinds})")
    step_doc: dict[str, Any] = found[0]
    return step_doc


def step_gate(plan_file: Path, step: str) -> StepGate:
    """The gate of `step` in the plan written to `plan_file` (`schemaguard plan --format json`)."""
    doc = read_plan(plan_file)
    checks = [c for c in plan_step(doc, step).get("entry_checks", []) if isinstance(c, dict)]
    data = [c for c in checks if c.get("kind") in DATA_PROOFS]
    argv: tuple[str, ...] = ()
    if data:
        table = doc.get("table")
        if not isinstance(table, str):
            raise UsageError(f"--plan {plan_file}: written without --table, so its data checks have "
                             "no table to run on")
        argv = ("check", table, *[a for c in data for a in (f"--{c['kind']}", str(c["subject"]))])
    recorded = tuple((str(c.get("kind")), str(c.get("subject")), str(c.get("status")),
                      str(c.get("evidence") or "")) for c in checks if c.get("kind") not in DATA_PROOFS)
    return StepGate(argv, recorded)
