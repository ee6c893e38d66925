"""What `compare`, `merge` and `evolve` print: the JSON documents of DESIGN.md and a text form.

Both forms are built from one report object per command, so text and JSON never disagree. Every
problem carries its rule (id, text, source) so that a verdict can be checked against the
reference it cites.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, get_args

from rich.console import Console
from rich.table import Table
from rich.text import Text

from schemaguard.formats.notation import describe, schema_to_notation
from schemaguard.model import DataType, ListType, MapType, Schema, StructType, walk
from schemaguard.report.console import console as terminal
from schemaguard.rules.merge import Conflict, MergeResult
from schemaguard.rules.modes import Mode, PairFailure
from schemaguard.rules.profiles import Options, Problem, Rule, Severity, errors

STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan", "conflict": "bold red"}
SEVERITIES = get_args(Severity)  # most severe first; only "error" fails a check


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
    conflicting_input: int | None  # index in `inputs` of the one whose merge into those before it failed
    notes: tuple[str, ...] = ()


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


# ---------------------------------------------------------------------------------------------
# JSON


def _rule_json(rule: Rule) -> dict[str, str]:
    # DESIGN.md fixes "rule"; it stays the stable id, the text and source come beside it.
    return {"rule": rule.id, "rule_text": rule.text, "rule_source": rule.source}


def problem_json(p: Problem, writer: str) -> dict[str, Any]:
    return {"path": p.path, "code": p.code, "message": p.message, **_rule_json(p.rule),
            "severity": p.severity, "writer": writer}


def compare_json(report: CompareReport) -> dict[str, Any]:
    return {
        "compatible": report.compatible,
        "problems": [problem_json(p, label) for label, problems in report.writers for p in problems],
        "profile": report.profile,
        "options": asdict(report.options),
        "writer_versions": [label for label, _ in report.writers],
        "reader": report.reader,
        "notes": list(report.notes),
    }


def merge_json(report: MergeReport) -> dict[str, Any]:
    merged = report.result.merged
    return {
        "ok": report.result.ok,
        "merged": schema_to_notation(merged) if merged is not None else None,
        "conflicts": [
            {"path": c.path, "left": c.left, "right": c.right, "message": c.message, **_rule_json(c.rule),
             "input": _conflicting_label(report)}
            for c in report.result.conflicts
        ],
        "profile": report.profile,
        "options": {"type_widening": report.options.type_widening,
                    "case_sensitive": report.options.case_sensitive},
        "inputs": list(report.inputs),
        "notes": list(report.notes),
    }


def _conflicting_label(report: MergeReport) -> str | None:
    return None if report.conflicting_input is None else report.inputs[report.conflicting_input]


def evolve_json(report: EvolveReport) -> dict[str, Any]:
    return {
        "compatible": report.compatible,
        "failed": [
            {"writer_version": f.writer_version, "reader_version": f.reader_version,
             "writer": _label(report, f.writer_version), "reader": _label(report, f.reader_version),
             "problems": [problem_json(p, _label(report, f.writer_version)) for p in f.problems]}
            for f in report.failures
        ],
        "mode": report.mode.value,
        "profile": report.profile,
        "options": asdict(report.options),
        "versions": list(report.versions),
        "notes": list(report.notes),
    }


def _label(report: EvolveReport, version: int) -> str:
    return report.versions[version - 1]


# ---------------------------------------------------------------------------------------------
# Text


def _print(out: Console, text: Text) -> None:
    out.print(text, soft_wrap=True)  # one finding per line, whatever the width: greppable


def _detail(message: str, path: str) -> str:
    """The message without its leading `path`: the line already starts with the path."""
    m = re.match(rf"`{re.escape(path)}`(?::| is)?\s+", message)
    return message[m.end():] if m else message


def _finding_line(kind: str, path: str, message: str, rule: Rule, indent: str) -> Text:
    line = Text(indent)
    line.append(f"{kind.upper():<8} ", style=STYLES.get(kind, ""))
    line.append(path or "(top level)", style="bold")
    line.append(f"  {_detail(message, path)}  ")
    line.append(f"[rule {rule.id} — {rule.source}]", style="dim")
    return line


def _problem_line(p: Problem, indent: str = "") -> Text:
    return _finding_line(p.severity, p.path, p.message, p.rule, indent)


def _conflict_line(c: Conflict) -> Text:
    return _finding_line("conflict", c.path, c.message, c.rule, "")


def _notes(out: Console, notes: tuple[str, ...]) -> None:
    for note in notes:
        _print(out, Text(f"note: {note}", style="dim"))


def _verdict(out: Console, ok: bool, text: str) -> None:
    line = Text("compatible" if ok else "NOT compatible", style="bold green" if ok else "bold red")
    _print(out, line.append(f": {text}", style=""))


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 or what == "info" else f"{n} {what}s"


def _tally(problems: list[Problem]) -> str:
    """`2 errors, 1 warning`: counts by severity, most severe first."""
    counts = Counter(p.severity for p in problems)
    return ", ".join(_count(counts[s], s) for s in SEVERITIES if counts[s])


def compare_text(report: CompareReport, console: Console | None = None) -> None:
    out = console or terminal()
    _notes(out, report.notes)
    several = len(report.writers) > 1
    for label, problems in report.writers:
        if problems and several:
            _print(out, Text(f"data written with {label}:", style="bold"))
        for p in problems:
            _print(out, _problem_line(p, "  " if several else ""))
    all_problems = [p for _, problems in report.writers for p in problems]
    failing = [label for label, problems in report.writers if errors(list(problems))]
    if not several:
        writers = report.writers[0][0]
    elif failing:
        writers = f"{len(failing)} of {len(report.writers)} writer versions ({', '.join(failing)})"
    else:
        writers = f"each of the {len(report.writers)} writer versions"
    tally = _tally(all_problems)
    if report.compatible:
        text = f"{report.reader} reads data written with {writers}"
    else:
        text = f"{report.reader} cannot read data written with {writers}"
    _verdict(out, report.compatible, f"{text}{': ' + tally if tally else ''} (profile {report.profile})")


def merge_text(report: MergeReport, console: Console | None = None) -> None:
    out = console or terminal()
    _notes(out, report.notes)
    merged, inputs = report.result.merged, _count(len(report.inputs), "schema")
    if merged is not None:
        _print(out, Text(f"Merged schema ({report.profile} of {', '.join(report.inputs)})"))
        out.print(merged_table(merged))
        _print(out, Text("merge succeeds", style="bold green").append(
            f": {inputs} merge under {report.profile}", style=""))
        return
    for c in report.result.conflicts:
        _print(out, _conflict_line(c))
    where, before = "", report.conflicting_input
    if before is not None:
        into = report.inputs[0] if before == 1 else f"the merge of the {before} inputs before it"
        where = f" when merging {report.inputs[before]} into {into}"
    _print(out, Text("merge fails", style="bold red").append(
        f": {_count(len(report.result.conflicts), 'conflict')}{where} (profile {report.profile})", style=""))


def merged_table(schema: Schema) -> Table:
    table = Table()
    table.add_column("column")
    table.add_column("type")
    table.add_column("nullable")
    for path, t, nullable in walk(schema):
        table.add_row(path, _type_cell(t), "yes" if nullable else "no")
    return table


def _type_cell(t: DataType) -> str:
    """Nested types by kind only: their children have rows of their own."""
    kinds = {StructType: "struct", ListType: "list", MapType: "map"}
    return kinds.get(type(t)) or describe(t)


def evolve_text(report: EvolveReport, console: Console | None = None) -> None:
    out = console or terminal()
    _notes(out, report.notes)
    n = len(report.versions)
    listing = ", ".join(f"v{i} = {label}" for i, label in enumerate(report.versions, 1))
    _print(out, Text(f"versions, oldest first: {listing} (new)", style="dim"))
    for f in report.failures:
        w, r = f.writer_version, f.reader_version
        _print(out, Text(f"v{w} -> v{r} (R=v{r} reads W=v{w}): {_tally(list(f.problems))}", style="bold"))
        for p in f.problems:
            _print(out, _problem_line(p, "  "))
    history = "v1" if n == 2 else f"v1..v{n - 1}"
    new = f"v{n} ({report.versions[-1]})"
    if report.compatible:
        text = f"{new} may follow {history} under {report.mode.value}"
    else:
        text = (f"{new} may not follow {history} under {report.mode.value}: "
                f"{_count(len(report.failures), 'failing pair')}")
    _verdict(out, report.compatible, f"{text} (profile {report.profile})")
