"""What `schemaguard gate` prints: the gate's report (checks/gate.py) as JSON and as text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from schemaguard.acyclic import acyclic
from schemaguard.checks.finding import SAMPLE
from schemaguard.checks.gate import GateReport, Side
from schemaguard.formats.notation import schema_to_notation
from schemaguard.report.console import console as terminal
from schemaguard.report.rules_output import (
    count,
    finding_line,
    merged_table,
    print_line,
    print_lines,
    rule_json,
)
from schemaguard.report.scan import unreadable_table

# ---------------------------------------------------------------------------------------------
# JSON


def _side_json(side: Side) -> dict[str, Any]:
    return {"type": side.type, "versions": list(side.versions), "count": side.count,
            "files": list(side.files)}


@acyclic()
def gate_json(report: GateReport) -> dict[str, Any]:
    w = report.without_merge
    return {
        "table": report.table,
        "merge_safe": report.merge_safe,
        "merged": schema_to_notation(report.merged) if report.merged is not None else None,
        "conflicts": [
            {"path": c.path, "left": c.left.type, "right": c.right.type, "message": c.message,
             **rule_json(c.rule),
             "files": list(dict.fromkeys([*c.left.files, *c.right.files]))[:2 * SAMPLE],
             "versions": sorted({*c.left.versions, *c.right.versions}),
             "left_side": _side_json(c.left), "right_side": _side_json(c.right)}
            for c in report.conflicts
        ],
        "schema_without_merge": {
            "from_file": w.from_file,
            "source": w.source,
            "version": w.version,
            "schema": schema_to_notation(w.schema) if w.schema is not None else None,
            "error": w.error,
            "lost_columns": [
                {"path": c.path, "type": c.type, "versions": list(c.versions), "count": c.count,
                 "files": list(c.files)} for c in w.lost_columns
            ],
            "relabelled_columns": [
                {"path": c.path, "type": c.type,
                 "versions": [{"version": v.version, "type": v.type, "count": v.count, "files": list(v.files)}
                              for v in c.versions]}
                for c in w.relabelled_columns
            ],
        },
        "read_failures": [
            {"schema": f.schema, "version": f.version, "files": list(f.files), "count": f.count,
             "path": f.path, "code": f.code.value, "message": f.message, **rule_json(f.rule)}
            for f in report.read_failures
        ],
        "versions": report.versions,
        "data_files": report.data_files,
        "merge_order": list(report.merge_order),
        "unreadable": [{"path": u.rel, "reason": u.reason} for u in report.unreadable],
        "duplicate_names": [{"path": d.path, "names": list(d.names), "versions": list(d.versions)}
                            for d in report.duplicates],
        "partition_columns": list(report.partition_columns),
        "notes": list(report.notes),
    }


# ---------------------------------------------------------------------------------------------
# Text


def _where(versions: Sequence[int], n: int, files: Sequence[str]) -> str:
    named = f"v{', v'.join(map(str, versions))}, " if versions else ""
    sample = f", e.g. {files[0]}" if files else ""
    return f"{named}{count(n, 'file')}{sample}"


def _line(kind: str, style: str, path: str, text: str) -> Text:
    line = Text()
    line.append(f"{kind.upper():<10} ", style=style)
    line.append(path or "(top level)", style="bold")
    return line.append(f"  {text}")


def gate_text(report: GateReport, console: Console | None = None) -> None:
    out = console or terminal()
    order = ", ".join(f"v{n}" for n in report.merge_order)
    print_line(out, Text(f"{report.table}: {count(report.data_files, 'data file')}, "
                     f"{count(report.versions, 'schema version')}"
                     + (f"; Spark merges them in file-path order: {order}" if order else ""), style="bold"))
    for note in report.notes:
        print_line(out, Text(f"note: {note}", style="dim"))

    if report.merged is not None:
        print_line(out, Text('Schema with spark.read.option("mergeSchema", "true"):'))
        out.print(merged_table(report.merged))
    lines = []
    for c in report.conflicts:
        lines.append(finding_line("conflict", c.path, c.message, c.rule, ""))
        for label, side in (("left", c.left), ("right", c.right)):
            if side.count:
                where = _where(side.versions, side.count, side.files)
                lines.append(Text(f"         {label}: {side.type} in {where}", style="dim"))
    print_lines(out, lines)

    w = report.without_merge
    source = "" if w.version is None else f" (v{w.version})"
    if w.from_file is None:
        print_line(out, Text(f"Without mergeSchema: {w.error}", style="bold red"))
    elif w.schema is None:
        print_line(out, Text(f"Without mergeSchema Spark takes the schema of {w.from_file}{source}, "
                             f"and fails: {w.error}", style="bold red"))
    else:
        print_line(out, Text(f"Without mergeSchema Spark takes the schema of {w.from_file}{source}: "
                             f"{count(len(w.schema.fields), 'column')}"))
    lines = [_line("lost", "yellow", lost.path,
                   f"{lost.type} in {_where(lost.versions, lost.count, lost.files)}: silently not read")
             for lost in w.lost_columns]
    for r in w.relabelled_columns:
        others = "; ".join(f"v{v.version}: {v.type}" for v in r.versions if v.type != r.type)
        lines.append(_line("relabelled", "yellow", r.path, f"read as {r.type}; {others}"))
    for f in report.read_failures:
        schema = "the merged schema" if f.schema == "merged" else "the schema without merge"
        line = finding_line("error", f.path, f.message, f.rule, "")
        lines.append(line.append(f"  reading v{f.version} with {schema} ({_where((), f.count, f.files)})"))
    print_lines(out, lines)

    if report.unreadable:
        out.print(unreadable_table("Unreadable files (a mergeSchema read fails on each)", report.unreadable))
    for d in report.duplicates:
        where = f"v{', v'.join(map(str, d.versions))}"
        print_line(out, _line("duplicate", "bold red", d.path, f"named {', '.join(d.names)} in one struct "
                              f"({where}): Spark cannot resolve it and fails the read"))

    if report.merge_safe:
        print_line(out, Text("merge is safe", style="bold green").append(
            ': spark.read.option("mergeSchema", "true") succeeds and reads every file', style=""))
        return
    reasons = []
    if report.conflicts:
        reasons.append(count(len(report.conflicts), "conflicting column"))
    merged_failures = [f for f in report.read_failures if f.schema == "merged"]
    if merged_failures:
        reasons.append(f"{count(len(merged_failures), 'read failure')} with the merged schema")
    if report.unreadable:
        reasons.append(count(len(report.unreadable), "unreadable file"))
    if report.duplicates:
        reasons.append(count(len(report.duplicates), "duplicate column name"))
    if report.merged is None and not report.conflicts:
        reasons.append("no schema to merge")
    print_line(out, Text("merge is NOT safe", style="bold red").append(f": {', '.join(reasons)}", style=""))
