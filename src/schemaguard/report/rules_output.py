"""What `compare`, `merge` and `evolve` print: the JSON documents of docs/design.md and a text form.

Both forms are built from one report object per command, so text and JSON never disagree. Every
problem carries its rule (id, text, source) so that a verdict can be checked against the
reference it cites.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from schemaguard.base import Conflict, Problem, Rule, errors
from schemaguard.checks.compare import CompareReport, EvolveReport, MergeReport
from schemaguard.formats.notation import describe, schema_to_notation
from schemaguard.model import DataType, ListType, MapType, Schema, StructType, walk
from schemaguard.report.console import console as terminal

STYLES = {"error": "bold red", "quiet": "bold magenta", "warning": "yellow", "info": "cyan",
          "conflict": "bold red"}
LABELS = ("error", "quiet", "warning", "info")  # how problems are labelled in text, most severe first


# ---------------------------------------------------------------------------------------------
# JSON


def rule_json(rule: Rule) -> dict[str, str]:
    # docs/design.md fixes "rule"; it stays the stable id, the text and source come beside it.
    return {"rule": rule.id, "rule_text": rule.text, "rule_source": rule.source}


def problem_json(p: Problem, writer: str) -> dict[str, Any]:
    return {"path": p.path, "code": p.code.value, "message": p.message, **rule_json(p.rule),
            "severity": p.severity, "break": None if p.verdict == "fine" else p.verdict,
            **({"location": p.location} if p.location else {}), "writer": writer}


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
            {"path": c.path, "left": c.left, "right": c.right, "message": c.message, **rule_json(c.rule),
             "input": report.inputs[c.input]}
            for c in report.result.conflicts
        ],
        "profile": report.profile,
        "options": {"type_widening": report.options.type_widening,
                    "case_sensitive": report.options.case_sensitive},
        "inputs": list(report.inputs),
        "notes": list(report.notes),
    }


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


def print_line(out: Console, text: Text) -> None:
    out.print(text, soft_wrap=True)  # one finding per line, whatever the width: greppable


def print_lines(out: Console, lines: Sequence[Text]) -> None:
    """Lines as `print_line` prints them, in one call: a print costs rich about 70 us, and a table
    of 20,000 changed columns has 60,000 lines to say."""
    if lines:
        out.print(Text("\n").join(lines), soft_wrap=True)


_AFTER_PATH = re.compile(r"(?::| is)?\s+")  # what separates a message's leading `path` from the rest


def _detail(message: str, path: str) -> str:
    """The message without its leading `path`: the line already starts with the path."""
    head = f"`{path}`"
    m = _AFTER_PATH.match(message, len(head)) if message.startswith(head) else None
    return message[m.end():] if m else message


def finding_line(kind: str, path: str, message: str, rule: Rule, indent: str) -> Text:
    line = Text(indent)
    line.append(f"{kind.upper():<8} ", style=STYLES.get(kind, ""))
    line.append(path or "(top level)", style="bold")
    line.append(f"  {_detail(message, path)}  ")
    line.append(f"[rule {rule.id} — {rule.source}]", style="dim")
    return line


def _kind(p: Problem) -> str:
    """`quiet` for a quiet break that fails, else the severity (a loud break is an `error`)."""
    return "quiet" if p.quiet and p.severity == "error" else p.severity


def _problem_line(p: Problem, indent: str = "") -> Text:
    return finding_line(_kind(p), p.path, p.message, p.rule, indent)


def _conflict_line(c: Conflict) -> Text:
    return finding_line("conflict", c.path, c.message, c.rule, "")


def _notes(out: Console, notes: tuple[str, ...]) -> None:
    for note in notes:
        print_line(out, Text(f"note: {note}", style="dim"))


def _verdict(out: Console, ok: bool, text: str) -> None:
    line = Text("compatible" if ok else "NOT compatible", style="bold green" if ok else "bold red")
    print_line(out, line.append(f": {text}", style=""))


def count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 or what == "info" else f"{n} {what}s"


def _tally(problems: list[Problem]) -> str:
    """`2 errors, 1 quiet break, 1 warning`: counts by label, most severe first."""
    counts = Counter(_kind(p) for p in problems)
    return ", ".join(count(counts[s], "quiet break" if s == "quiet" else s)
                     for s in LABELS if counts[s])


def compare_text(report: CompareReport, console: Console | None = None) -> None:
    out = console or terminal()
    _notes(out, report.notes)
    several = len(report.writers) > 1
    for label, problems in report.writers:
        if problems and several:
            print_line(out, Text(f"data written with {label}:", style="bold"))
        for p in problems:
            print_line(out, _problem_line(p, "  " if several else ""))
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
    merged, inputs = report.result.merged, count(len(report.inputs), "schema")
    if merged is not None:
        print_line(out, Text(f"Merged schema ({report.profile} of {', '.join(report.inputs)})"))
        out.print(merged_table(merged))
        print_line(out, Text("merge succeeds", style="bold green").append(
            f": {inputs} merge under {report.profile}", style=""))
        return
    for c in report.result.conflicts:
        print_line(out, _conflict_line(c))
    where, before = "", report.conflicting_input
    if before == 0:
        where = f" in {report.inputs[0]} itself (Spark cannot read a type in it)"
    elif before is not None:
        into = report.inputs[0] if before == 1 else f"the merge of the {before} inputs before it"
        where = f" when merging {report.inputs[before]} into {into}"
    print_line(out, Text("merge fails", style="bold red").append(
        f": {count(len(report.result.conflicts), 'conflict')}{where} (profile {report.profile})", style=""))


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
    print_line(out, Text(f"versions, oldest first: {listing} (new)", style="dim"))
    for f in report.failures:
        w, r = f.writer_version, f.reader_version
        print_line(out, Text(f"v{w} -> v{r} (R=v{r} reads W=v{w}): {_tally(list(f.problems))}", style="bold"))
        for p in f.problems:
            print_line(out, _problem_line(p, "  "))
    history = "v1" if n == 2 else f"v1..v{n - 1}"
    new = f"v{n} ({report.versions[-1]})"
    if report.compatible:
        text = f"{new} may follow {history} under {report.mode.value}"
    else:
        text = (f"{new} may not follow {history} under {report.mode.value}: "
                f"{count(len(report.failures), 'failing pair')}")
    _verdict(out, report.compatible, f"{text} (profile {report.profile})")
