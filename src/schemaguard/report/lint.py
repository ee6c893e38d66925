"""A linted migration (planning/lint.py) for CI: SARIF 2.1.0, each finding at its statement's line
of the DDL file, and JUnit XML, a test case per statement that fails on an error or warning."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from schemaguard.meta import version
from schemaguard.planning.lint import LINT_CODES, Lint, LintFinding
from schemaguard.report.junit import xml_text
from schemaguard.report.sarif import SARIF_LEVELS, SARIF_SCHEMA, SARIF_VERSION


def lint_sarif(result: Lint) -> dict[str, Any]:
    codes = list(LINT_CODES)
    rules = [{"id": c.value, "name": "".join(w.capitalize() for w in c.split("_")),
              "shortDescription": {"text": LINT_CODES[c]}} for c in codes]
    uri = Path(result.source).as_posix() if result.source != "--ddl" else "ddl.sql"
    results = [{
        "ruleId": f.code.value, "ruleIndex": codes.index(f.code), "level": SARIF_LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri},
                                            "region": {"startLine": f.line}}}],
        "properties": {"table": result.table, "statement": f.statement},
    } for f in result.findings]
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [{
        "tool": {"driver": {"name": "schemaguard", "version": version(), "rules": rules}},
        "automationDetails": {"id": f"schemaguard/lint/{result.table or 'table'}"},
        "invocations": [{"executionSuccessful": True, "exitCode": result.exit_code}],
        "results": results}]}


def lint_junit(result: Lint) -> str:
    root = ET.Element("testsuites", name="schemaguard lint")
    suite = ET.SubElement(root, "testsuite", name=f"schemaguard:lint:{result.table or result.source}")
    by_line: dict[int, list[LintFinding]] = {}
    for f in result.findings:
        by_line.setdefault(f.line, []).append(f)
    failures = 0
    for line, found in by_line.items():
        name = xml_text(f"line {line}: {found[0].statement}")
        case = ET.SubElement(suite, "testcase", classname=xml_text(result.source), name=name)
        bad = [f for f in found if f.severity != "info"]
        text = "\n".join(f"{f.code} ({f.severity}): {f.message}" for f in found)
        if bad:
            failures += 1
            failure = ET.SubElement(case, "failure", type=bad[0].code, message=xml_text(bad[0].message))
            failure.text = xml_text(text)
        else:
            ET.SubElement(case, "system-out").text = xml_text(text)
    for element in (root, suite):
        element.set("tests", str(len(by_line)))
        element.set("failures", str(failures))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
