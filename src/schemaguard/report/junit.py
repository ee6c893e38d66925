"""The audit as JUnit XML, which CI systems show as tests: one suite per table (a test case per
finding and one `audit` case for the table's verdict) and one for the findings about the run itself.
A failing finding is a failure, a waived one is skipped, any other passes with its text as output."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from datetime import date

from schemaguard.checks.finding import Finding
from schemaguard.proofs.audit_run import AuditRun
from schemaguard.report.common import elapsed, today, versions_text, waiver_text

RUN_SUITE = "schemaguard:run"  # JUnit suite of the run's own findings (':' is never in a table name)

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def to_junit(run: AuditRun) -> str:
    root = ET.Element("testsuites", name="schemaguard audit")
    for table in run.tables:
        suite = _suite(run, table.name, table.findings, audit_case=True)
        properties = ET.Element("properties")
        for label, value in (("location", table.location), ("current_source", table.current_source),
                             ("profiles", ",".join(table.profiles)), ("mode", str(table.mode))):
            ET.SubElement(properties, "property", name=label, value=xml_text(value))
        suite.insert(0, properties)
        root.append(suite)
    if run.findings:
        root.append(_suite(run, RUN_SUITE, run.findings, audit_case=False))
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in root)))
    root.set("time", f"{elapsed(run):.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def xml_text(value: object) -> str:
    """Text XML 1.0 can hold: control characters (from file names) shown as \\xNN."""
    return _XML_BAD.sub(lambda m: f"\\x{ord(m[0]):02x}", str(value))


def _finding_details(f: Finding, day: date) -> str:
    lines = [f.message, f"key: {f.key}", f"severity: {f.severity}"]
    if f.path:
        lines.append(f"column: {f.path}")
    if f.versions:
        lines.append(f"versions: {versions_text(f.versions)}")
    if f.count or f.files:
        lines.append(f"files: {f.count}" + (" (sample below)" if f.files else ""))
        lines += [f"  {p}" for p in f.files]
    if f.partition_count:
        lines.append(f"partitions: {f.partition_count}")
        lines += [f"  {p}" for p in f.partitions]
    lines += [f"{label}: {value}" for label, value in f.evidence]
    if f.rule:
        lines.append(f"rule: {f.rule}")
    if f.waiver is not None:
        lines.append(f"{waiver_text(f, day)}: {f.waiver.reason}")
    return "\n".join(lines)


def _suite(run: AuditRun, name: str, findings: Sequence[Finding], audit_case: bool) -> ET.Element:
    day = today(run)
    suite = ET.Element("testsuite", name=xml_text(name), timestamp=run.started_at.isoformat())
    tests = failures = skipped = 0
    seen: Counter[str] = Counter()
    for f in findings:
        seen[f.key] += 1
        name_ = f.key if seen[f.key] == 1 else f"{f.key} #{seen[f.key]}"  # keys should be unique; be safe
        case = ET.SubElement(suite, "testcase", classname=xml_text(name), name=xml_text(name_), time="0")
        tests += 1
        if run.fails(f):
            failure = ET.SubElement(case, "failure", message=xml_text(f.message), type=xml_text(f.code))
            failure.text = xml_text(_finding_details(f, day))
            failures += 1
        elif f.waived(day) and f.waiver is not None:
            ET.SubElement(case, "skipped", message=xml_text(f"waived by {f.waiver.owner} until "
                                                      f"{f.waiver.expires.isoformat()}: {f.waiver.reason}"))
            skipped += 1
        else:
            ET.SubElement(case, "system-out").text = xml_text(f"{f.severity.upper()} {f.code}\n"
                                                       f"{_finding_details(f, day)}")
    if audit_case:
        case = ET.SubElement(suite, "testcase", classname=xml_text(name), name="audit", time="0")
        tests += 1
        failing = [f for f in findings if run.fails(f)]
        if failing:
            failure = ET.SubElement(case, "failure", type="AUDIT",
                                    message=f"{len(failing)} finding(s) at or above {run.fail_level}")
            failure.text = xml_text("\n".join(f"{f.severity} {f.key}" for f in failing))
            failures += 1
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", "0")
    return suite
