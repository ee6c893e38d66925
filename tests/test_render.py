"""The audit's reports, rendered from a real audit of the demo lake (one waiver in force, one
expired): JSON, Markdown, JUnit, SARIF, the report folder, HTML escaping of what the lake names,
and the HTML page as a real browser draws it."""

from __future__ import annotations

import json
import os
import re
import struct
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from schemaguard.auditing import run_audit
from schemaguard.checks.finding import Finding, FindingCode
from schemaguard.config import load_config
from schemaguard.demo import build_demo_lake
from schemaguard.proofs import Proof, ProofResult
from schemaguard.proofs.audit_run import AuditRun, Phases
from schemaguard.report import common, junit, markdown, sarif, terminal
from schemaguard.report import folder as report_folder
from schemaguard.report import json as json_report
from schemaguard.report.html import page as html_page
from schemaguard.report.html import timeline
from tests.helpers import chromium, need_chromium, valid_sarif

ACTIVE = "orders:LOGICAL_TYPE_DRIFT:ts"
EXPIRED = "orders:LOGICAL_TYPE_DRIFT:amount"


def _config(directory: Path, body: str) -> Path:
    conf = directory / "schemaguard.toml"
    conf.write_text("[catalog]\nenabled = false\n" + body, encoding="utf-8")
    return conf


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> AuditRun:
    directory = tmp_path_factory.mktemp("render")
    build_demo_lake(directory / "lake")
    conf = _config(directory, f"""
[[tables]]
name = "orders"
path = "lake/orders"

[[waivers]]
key = "{ACTIVE}"
owner = "platform"
reason = "INT96 to timestamp_us_utc; old partitions are rewritten in the Q1 compaction"
expires = 2099-12-31

[[waivers]]
key = "{EXPIRED}"
owner = "alice"
reason = "precision change, long done"
expires = 2024-01-01
""")
    return run_audit(load_config(conf))


@pytest.fixture(scope="module")
def odd_run(tmp_path_factory: pytest.TempPathFactory) -> AuditRun:
    """A small lake whose names need escaping: a column `<b>x</b>` whose type drifts, a column `a|b`
    added later, a partition value with `&`, a table named with markup; no date partition (so the
    timeline is drawn from modification times)."""
    directory = tmp_path_factory.mktemp("odd")
    table = directory / "lake & co"
    old = table / "p=1&2" / "part-0.parquet"
    new = table / "p=3" / "part-0.parquet"
    old.parent.mkdir(parents=True)
    new.parent.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "<b>x</b>": pa.array([1, 2], pa.int32())}),
                   old)
    pq.write_table(pa.table({"id": pa.array([3], pa.int64()), "<b>x</b>": pa.array([3], pa.int64()),
                             "a|b": pa.array(["[bold]not markup[/]"])}), new)
    os.utime(old, (datetime(2024, 3, 1, tzinfo=UTC).timestamp(),) * 2)
    os.utime(new, (datetime(2024, 3, 5, 12, tzinfo=UTC).timestamp(),) * 2)
    conf = _config(directory, '[[tables]]\nname = "<i>t</i>&co"\npath = "lake & co"\n')
    return run_audit(load_config(conf))


def by_code(findings: list[dict[str, Any]], code: str) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in findings if f["code"] == code}


# ---------------------------------------------------------------------------------------------
# JSON


def test_the_time_split_names_each_phase_that_took_time(run: AuditRun) -> None:
    timed = replace(run, finished_at=run.started_at + timedelta(seconds=20),
                    phases=Phases(spark_start=14.06, reading=0.84, checks=0.01, proofs=3.2))
    assert common.took(timed) == "20.0 s (Spark start 14.1 s, reading 0.8 s, proofs 3.2 s)"
    assert common.took(replace(timed, phases=Phases())) == "20.0 s"
    assert json_report.to_json(timed)["seconds"] == {
        "total": 20.0, "spark_start": 14.06, "reading": 0.84, "checks": 0.01, "proofs": 3.2, "catalog": 0.0}


def test_json_has_stable_keys_and_the_audit_values(run: AuditRun) -> None:
    doc = json_report.to_json(run)
    json.dumps(doc)  # plain JSON all the way down
    assert {"run_id", "started_at", "finished_at", "fail_level", "verdict", "exit_code", "counts", "tables",
            "findings"} <= doc.keys()
    assert (doc["run_id"], doc["verdict"], doc["exit_code"]) == (run.run_id, "FAIL", 1)
    assert doc["fail_level"] == "error"
    assert doc["counts"] == run.counts()
    assert datetime.fromisoformat(doc["started_at"]) == run.started_at
    [table] = doc["tables"]
    assert {"name", "location", "current_source", "current_schema", "profiles", "mode", "scan",
            "findings"} <= table.keys()
    assert (table["name"], table["mode"], table["profiles"]) == ("orders", "FULL_TRANSITIVE", ["spark-read"])
    assert [f["name"] for f in table["current_schema"]["fields"]] == [
        "id", "customer", "quantity", "amount", "ts", "channel", "amount_cents"]
    versions = table["scan"]["versions"]
    assert [v["version"] for v in versions] == [1, 2, 3, 4]
    assert [v["file_count"] for v in versions] == [30, 30, 30, 30]
    assert all(len(v["files"]) <= json_report.MAX_FILES for v in versions)  # bounded, with the count beside

    finding_keys = {"key", "code", "severity", "table", "path", "subject", "message", "count", "files",
                    "partitions", "partition_count", "versions", "evidence", "rule", "waiver", "fails"}
    assert all(f.keys() == finding_keys for f in table["findings"] + doc["findings"])
    drift = by_code(table["findings"], "LOGICAL_TYPE_DRIFT")
    assert set(drift) == {"quantity", "amount", "ts"}
    assert drift["ts"]["waiver"] == {"owner": "platform", "expires": "2099-12-31", "active": True,
                                     "reason": "INT96 to timestamp_us_utc; old partitions are rewritten in "
                                               "the Q1 compaction"}
    assert drift["ts"]["fails"] is False
    assert drift["amount"]["waiver"]["active"] is False
    assert drift["quantity"]["waiver"] is None
    assert drift["quantity"]["versions"] == [1, 2, 3, 4] and drift["quantity"]["count"] == 120
    merge = by_code(table["findings"], "SPARK_MERGE_CONFLICT")["quantity"]
    assert merge["severity"] == "error" and merge["fails"] is True
    assert sum(f["fails"] for f in table["findings"] + doc["findings"]) == len(run.failing)
    assert [f["code"] for f in doc["findings"]] == ["WAIVER_EXPIRED"]
    assert doc["findings"][0]["evidence"][0] == {"label": "owner", "value": "alice"}


# ---------------------------------------------------------------------------------------------
# terminal and Markdown


def test_terminal_summarises_tables_findings_and_verdict(run: AuditRun, odd_run: AuditRun) -> None:
    out = Console(record=True, width=140, color_system=None, file=StringIO())
    terminal.render_terminal(run, out)
    text = out.export_text()
    for expected in ("orders", "120 read, 3 unreadable", "newest version (v4)", "FULL_TRANSITIVE",
                     "SPARK_MERGE_CONFLICT", "WAIVED (platform, until 2099-12-31)",
                     "waiver expired 2024-01-01", "FAIL  exit code 1"):
        assert expected in text, expected
    assert text.index("SPARK_MERGE_CONFLICT") < text.index("LOGICAL_TYPE_DRIFT") < text.index(
        "COLUMN_MISSING_IN_OLD_FILES")  # most severe first
    out = Console(record=True, width=140, color_system=None, file=StringIO())
    terminal.render_terminal(odd_run, out)
    assert "int32 [INT32]" in out.export_text()  # lake text is never read as rich markup


def test_markdown_has_verdict_tables_versions_and_findings(run: AuditRun) -> None:
    md = markdown.to_markdown(run)
    assert md.startswith("# ❌ schemaguard audit: **FAIL**")
    assert "## Table `orders`: FAIL" in md
    for n in (1, 2, 3, 4):
        assert re.search(rf"^\| v{n} \| 2024-", md, re.M), n
    assert "| **verdict** | **FAIL** (7 failing) |" in md
    assert "#### error" in md and "#### warning" in md and "#### info" in md
    assert md.index("#### error") < md.index("#### warning") < md.index("#### info")
    assert "**WAIVED (platform, until 2099-12-31)**" in md
    assert "waiver expired 2024-01-01 (alice)" in md
    assert "## Run" in md and "`WAIVER_EXPIRED`" in md
    _tables_are_rectangular(md)


def _tables_are_rectangular(md: str) -> None:
    """Every row of every Markdown table has as many unescaped `|` as its header: no cell breaks out."""
    width = None
    for line in md.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        pipes = len(re.findall(r"(?<!\\)\|", line))
        width = width or pipes
        assert pipes == width, line


def test_markdown_escapes_pipes_in_cells(odd_run: AuditRun) -> None:
    md = markdown.to_markdown(odd_run)
    assert r"`a\|b`" in md
    _tables_are_rectangular(md)
    finding = Finding(FindingCode.LOGICAL_TYPE_DRIFT, "error", "a | b and `c | d` <script>", 1,
                      ("p=1|2/f.parquet",), "col|x", table="orders")
    table = replace(odd_run.tables[0], findings=(finding,))
    md = markdown.to_markdown(replace(odd_run, tables=(table,)))
    assert r"a \| b and `c \| d` \<script\>" in md
    assert r"`p=1\|2/f.parquet`" in md and r"`col\|x`" in md
    _tables_are_rectangular(md)


# ---------------------------------------------------------------------------------------------
# JUnit


def test_junit_counts_match_the_run(run: AuditRun) -> None:
    root = ET.fromstring(junit.to_junit(run))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["orders", junit.RUN_SUITE]
    for suite in [*suites, root]:
        cases = suite.iter("testcase")
        counted = {"tests": 0, "failures": 0, "skipped": 0}
        for case in cases:
            counted["tests"] += 1
            counted["failures"] += case.find("failure") is not None
            counted["skipped"] += case.find("skipped") is not None
        assert {k: int(suite.get(k, "-1")) for k in counted} == counted, suite.get("name")
        assert suite.get("errors") == "0"
    orders = suites[0]
    by_name = {c.get("name"): c for c in orders.iter("testcase")}
    assert len(by_name) == len(run.tables[0].findings) + 1  # names are unique, plus the table's audit case
    failing = [c for c in root.iter("testcase") if c.get("name") != "audit" and c.find("failure") is not None]
    assert len(failing) == len(run.failing)
    merge = by_name["orders:SPARK_MERGE_CONFLICT:quantity"]
    failure = merge.find("failure")
    assert failure is not None and failure.get("type") == "SPARK_MERGE_CONFLICT"
    assert "mergeSchema" in (failure.get("message") or "")
    assert merge.get("classname") == "orders"
    skipped = by_name[ACTIVE].find("skipped")
    assert skipped is not None
    assert (skipped.get("message") or "").startswith("waived by platform until 2099-12-31")
    out = by_name["orders:LOGICAL_TYPE_DRIFT:quantity"]
    assert out.find("failure") is None and out.find("skipped") is None
    assert "WARNING LOGICAL_TYPE_DRIFT" in (out.findtext("system-out") or "")
    assert by_name["audit"].find("failure") is not None


def test_junit_audit_case_passes_on_a_clean_table(run: AuditRun) -> None:
    clean = replace(run, fail_level="never")
    root = ET.fromstring(junit.to_junit(clean))
    assert root.get("failures") == "0"
    audit = next(c for c in root.iter("testcase") if c.get("name") == "audit")
    assert list(audit) == []  # a green test


# ---------------------------------------------------------------------------------------------
# SARIF

_MESSAGE = {"type": "object", "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
            "properties": {"text": {"type": "string"}, "id": {"type": "string"}}}
_ARTIFACT_LOCATION = {"type": "object", "properties": {
    "uri": {"type": "string"}, "uriBaseId": {"type": "string"}, "index": {"type": "integer"}}}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
# The parts of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json, OASIS) that this report uses: required
# properties, enums and types, spelled out by hand because the full schema is not shipped with any
# package here and tests fetch nothing.
SARIF_SUBSET: dict[str, Any] = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"],
                    "properties": {
                        "name": {"type": "string"}, "informationUri": {"type": "string"},
                        "rules": {"type": "array", "uniqueItems": True, "items": {
                            "type": "object", "required": ["id"],
                            "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                                           "shortDescription": _MESSAGE,
                                           "defaultConfiguration": {"type": "object",
                                                                    "properties": {"level": _LEVEL}}}}}}}}},
                "automationDetails": {"type": "object", "properties": {"id": {"type": "string"}}},
                "originalUriBaseIds": {"type": "object", "additionalProperties": _ARTIFACT_LOCATION},
                "invocations": {"type": "array", "items": {
                    "type": "object", "required": ["executionSuccessful"],
                    "properties": {"executionSuccessful": {"type": "boolean"},
                                   "exitCode": {"type": "integer"},
                                   "startTimeUtc": {"type": "string"}, "endTimeUtc": {"type": "string"}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"}, "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": _LEVEL,
                        "message": _MESSAGE,
                        "partialFingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
                        "properties": {"type": "object"},
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {"type": "object", "anyOf": [
                                {"required": ["address"]}, {"required": ["artifactLocation"]}],
                                "properties": {"artifactLocation": _ARTIFACT_LOCATION}},
                            "logicalLocations": {"type": "array", "items": {"type": "object", "properties": {
                                "name": {"type": "string"}, "fullyQualifiedName": {"type": "string"},
                                "kind": {"type": "string"}}}}}}},
                        "suppressions": {"type": "array", "uniqueItems": True, "items": {
                            "type": "object", "required": ["kind"],
                            "properties": {"kind": {"enum": ["inSource", "external"]},
                                           "status": {"enum": ["accepted", "underReview", "rejected"]},
                                           "justification": {"type": "string"}}}}}}}}}}},
}


def test_sarif_is_valid_and_carries_levels_rules_and_suppressions(run: AuditRun) -> None:
    doc = sarif.to_sarif(run)
    json.dumps(doc)
    jsonschema.validate(doc, SARIF_SUBSET)  # what we promise beyond the standard
    valid_sarif(doc)  # the standard's own schema, stored in tests/
    assert doc["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json" and doc["version"] == "2.1.0"
    [sarif_run] = doc["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "schemaguard" and driver["version"]
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids)) and all(r["shortDescription"]["text"] for r in driver["rules"])
    results = sarif_run["results"]
    assert len(results) == len(run.all_findings)
    assert {r["ruleId"] for r in results} == set(rule_ids)
    assert all(rule_ids[r["ruleIndex"]] == r["ruleId"] for r in results)
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels["SPARK_MERGE_CONFLICT"] == "error" and levels["LOGICAL_TYPE_DRIFT"] == "warning"
    assert levels["COLUMN_MISSING_IN_OLD_FILES"] == "note"
    by_key = {r["partialFingerprints"]["schemaguardKey/v1"]: r for r in results}
    suppressed = [k for k, r in by_key.items() if "suppressions" in r]
    assert suppressed == [ACTIVE]  # the expired waiver suppresses nothing
    assert by_key[ACTIVE]["suppressions"][0]["kind"] == "external"
    assert by_key[ACTIVE]["suppressions"][0]["justification"].startswith("INT96 to timestamp_us_utc")
    base = sarif_run["originalUriBaseIds"]["orders"]["uri"]
    assert base.startswith("file:///") and base.endswith("/orders/")
    merge = by_key["orders:SPARK_MERGE_CONFLICT:quantity"]["locations"][0]
    artifact = merge["physicalLocation"]["artifactLocation"]
    assert artifact["uriBaseId"] == "orders"
    assert artifact["uri"].startswith("dt=2024-01-01/part-") and not urlsplit(artifact["uri"]).scheme
    assert merge["logicalLocations"][0]["fullyQualifiedName"] == "orders.quantity"
    expired = next(r for r in results if r["ruleId"] == "WAIVER_EXPIRED")
    # a finding without files points at its table
    assert expired["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == base


def test_sarif_file_uris_are_percent_encoded(odd_run: AuditRun) -> None:
    doc = sarif.to_sarif(odd_run)
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"] for loc in r.get("locations", [])]
    assert uris and all(" " not in u and "|" not in u for u in uris)
    assert doc["runs"][0]["originalUriBaseIds"]["<i>t</i>&co"]["uri"].endswith("/lake%20%26%20co/")


# ---------------------------------------------------------------------------------------------
# the report folder


def test_write_reports_writes_every_format_at_once_and_a_rerun_replaces(run: AuditRun,
                                                                         tmp_path: Path) -> None:
    formats = ["terminal", "json", "markdown", "html", "junit", "sarif"]
    paths = report_folder.write_reports(run, tmp_path, formats)
    folder = tmp_path / run.run_id
    assert set(paths) == {"json", "markdown", "html", "junit", "sarif"}
    assert {p.name for p in paths.values()} == {"report.json", "report.md", "report.html", "junit.xml",
                                                "report.sarif"}
    assert all(p.parent == folder and p.stat().st_size > 0 for p in paths.values())
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["run_id"] == run.run_id
    assert json.loads(paths["sarif"].read_text(encoding="utf-8"))["version"] == "2.1.0"
    ET.parse(paths["junit"])
    assert sorted(os.listdir(tmp_path)) == [run.run_id]  # no temporary folder left

    (folder / "stale.txt").write_text("from an earlier attempt")
    again = report_folder.write_reports(run, tmp_path, ["json"])
    assert sorted(os.listdir(folder)) == ["report.json"] and again == {"json": folder / "report.json"}
    assert sorted(os.listdir(tmp_path)) == [run.run_id]


def test_write_reports_leaves_nothing_half_written(run: AuditRun, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    report_folder.write_reports(run, tmp_path, ["json", "markdown"])
    before = {p.name: p.read_bytes() for p in (tmp_path / run.run_id).iterdir()}

    def crash(staging: Path, target: Path) -> None:
        assert (staging / "report.html").exists()  # everything was written, only the rename is left
        raise OSError("disk gone")

    monkeypatch.setattr(report_folder, "_swap_into_place", crash)
    with pytest.raises(OSError, match="disk gone"):
        report_folder.write_reports(run, tmp_path, ["json", "html"])
    assert sorted(os.listdir(tmp_path)) == [run.run_id]  # the temporary folder is gone
    assert {p.name: p.read_bytes() for p in (tmp_path / run.run_id).iterdir()} == before

    with pytest.raises(ValueError, match="unknown report format"):
        report_folder.write_reports(run, tmp_path / "other", ["json", "pdf"])
    assert not (tmp_path / "other").exists()  # nothing written before the formats were all known
    with pytest.raises(ValueError, match="cannot name a folder"):
        report_folder.write_reports(replace(run, run_id="../escape"), tmp_path, ["json"])


# ---------------------------------------------------------------------------------------------
# HTML


class _Page(HTMLParser):
    """Every element's tag, attributes and the page's text, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text = StringIO()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.write(data)


def _parse(page: str) -> _Page:
    parsed = _Page()
    parsed.feed(page)
    parsed.close()
    return parsed


def test_html_is_one_self_contained_page_with_timeline_and_grid(run: AuditRun) -> None:
    page = html_page.to_html(run)
    parsed = _parse(page)
    tags = [t for t, _ in parsed.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert not [a for _, attrs in parsed.tags for a in ("src", "href") if a in attrs]
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {"http://www.w3.org/2000/svg"}
    ids = {attrs.get("id") for _, attrs in parsed.tags}
    assert {"timeline-orders", "grid-orders", "table-orders", "verdict"} <= ids
    lanes = [attrs for t, attrs in parsed.tags if t == "g" and "lane" in (attrs.get("class") or "").split()]
    assert [a["class"] for a in lanes] == ["lane lane-v1", "lane lane-v2", "lane lane-v3", "lane lane-v4",
                                           "lane lane-unreadable"]
    marks = [attrs for t, attrs in parsed.tags if t == "rect" and attrs.get("class") == "mark"]
    assert len(marks) == 60 + 1  # one block per dt partition of each version, one for the unreadable files
    drift = [attrs for t, attrs in parsed.tags if t == "td" and attrs.get("class") == "drift"]
    assert len(drift) == 3  # quantity in v4, amount and ts in v3
    assert any("timestamp_int96 [INT96]" in (a.get("title") or "") for a in drift)
    added = [1 for t, a in parsed.tags if t == "td" and a.get("class") == "added"]
    assert len(added) == 2  # channel in v2, amount_cents in v3
    text = " ".join(parsed.text.getvalue().split())
    assert "WAIVED · platform · until 2099-12-31" in text
    assert "waiver expired 2024-01-01 · alice" in text
    articles = [a["class"] for t, a in parsed.tags if t == "article"]
    assert sum("waived" in (c or "").split() for c in articles) == 1
    assert sum("fails" in (c or "").split() for c in articles) == len(run.failing)


def test_html_shows_each_proof_and_where_it_was_refuted_on_the_timeline(run: AuditRun) -> None:
    proofs = (ProofResult(Proof("not-null", "channel"), "refuted", "footer", count=7,
                          partitions=("dt=2024-01-02", "dt=2024-01-05"), partition_count=2,
                          days=(date(2024, 1, 2), date(2024, 1, 5))),
              ProofResult(Proof("fits", "quantity", "int32"), "proven", "footer"),
              ProofResult(Proof("unit-drift", "amount"), "unknown", "none", why="largest step `5.0x`"))
    page = html_page.to_html(replace(run, tables=(replace(run.tables[0], proofs=proofs),)))
    section = page[page.index("<h3>Proofs</h3>"):page.index("<h3>Findings</h3>")]
    rows = re.findall(r'<tr class="proof proof-(\w+)"><td><code>([^<]+)</code>', section)
    assert rows == [("refuted", "not-null channel"), ("proven", "fits quantity:int32"),
                    ("unknown", "unit-drift amount")]
    assert "dt=2024-01-02, dt=2024-01-05" in section and "<code>5.0x</code>" in section
    lane = page[page.index('<g class="lane lane-proof"'):]
    lane = lane[:lane.index("</g>")]
    assert ">not-null<" in lane and ">channel<" in lane and "refuted in 2 partition(s)" in lane
    assert lane.count('class="mark"') == 2 and "not-null: refuted in dt=2024-01-05" in lane


def test_html_escapes_every_name_the_lake_gives(odd_run: AuditRun) -> None:
    page = html_page.to_html(odd_run)
    for raw in ("<b>x</b>", "<i>t</i>", "p=1&2/", "lake & co"):
        assert raw not in page, raw
    for escaped in ("&lt;b&gt;x&lt;/b&gt;", "&lt;i&gt;t&lt;/i&gt;&amp;co", "p=1&amp;2/part-0.parquet",
                    "lake &amp; co"):
        assert escaped in page, escaped
    parsed = _parse(page)
    text = parsed.text.getvalue()
    assert "<b>x</b>" in text and "p=1&2/part-0.parquet" in text  # shown as text, not markup
    assert not [t for t, _ in parsed.tags if t == "i"]
    ids = [attrs.get("id") or "" for _, attrs in parsed.tags]
    assert [i for i in ids if i.startswith("timeline-")] == ["timeline-i-t-i-co"]
    marks = [a for t, a in parsed.tags if t == "rect" and a.get("class") == "mark"]
    assert len(marks) == 2  # by modification time: one tick per file's minute
    assert [a.get("class") for t, a in parsed.tags if t == "td" and a.get("class") in ("drift", "added")] == [
        "drift", "added"]


def test_a_table_without_one_readable_file_still_renders_everywhere(tmp_path: Path) -> None:
    (tmp_path / "lake" / "t").mkdir(parents=True)
    (tmp_path / "lake" / "t" / "part-0.parquet").write_bytes(b"")
    empty = run_audit(load_config(_config(tmp_path, '[[tables]]\nname = "t"\npath = "lake/t"\n')))
    assert empty.tables[0].summary.versions == ()
    page = html_page.to_html(empty)
    assert 'id="timeline-t"' in page and "lane-unreadable" in page and "No columns to show." in page
    assert json_report.to_json(empty)["tables"][0]["scan"]["versions"] == []
    assert "## Table `t`: FAIL" in markdown.to_markdown(empty)
    assert ET.fromstring(junit.to_junit(empty)).get("failures") == "2"  # the finding and the table's audit
    assert sarif.to_sarif(empty)["runs"][0]["results"][0]["ruleId"] == "UNREADABLE_FILE"


@pytest.mark.parametrize("span", [timedelta(minutes=7), timedelta(hours=5), timedelta(days=3),
                                  timedelta(days=60), timedelta(days=400), timedelta(days=3650)])
def test_time_axis_ticks_are_few_ordered_and_inside(span: timedelta) -> None:
    lo = datetime(2023, 12, 30, 17, 3, tzinfo=UTC)
    ticks = timeline._ticks(lo, lo + span)
    assert 2 <= len(ticks) <= 12, ticks
    moments = [m for m, _ in ticks]
    assert moments == sorted(moments) and lo <= moments[0] and moments[-1] <= lo + span
    assert len({label for _, label in ticks}) == len(ticks)


def test_a_long_history_draws_few_blocks() -> None:
    start = datetime(2015, 1, 1, tzinfo=UTC)
    days = [timeline._Mark(start + timedelta(days=i), start + timedelta(days=i + 1), 2, f"dt={i}")
            for i in range(3650)]
    scale = 1000 / (3650 * 86400)

    def x(moment: datetime) -> float:
        return (moment - start).total_seconds() * scale

    blocks = timeline._blocks(days, x)
    assert len(blocks) < 50 and blocks[0][2] == "dt=0 .. dt=3649: 7300 file(s)"
    ticks = [timeline._Mark(start + timedelta(seconds=i), None, 1, str(i)) for i in range(5000)]
    assert len(timeline._blocks(ticks, x)) == 1  # 5000 files within a second: one tick
    wide = timeline._blocks(days[:10], lambda m: (m - start).total_seconds() / 864)  # 100 px a day
    assert [round(w) for _, w, _ in wide] == [99] * 10  # a pixel of air between partitions


# ---------------------------------------------------------------------------------------------
# the page in a real browser


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit RGB or RGBA PNG (Pillow when installed, else by hand)."""
    try:
        from PIL import Image
    except ImportError:
        return _decode_png(data)
    from io import BytesIO

    image = Image.open(BytesIO(data)).convert("RGB")
    raw = image.tobytes()
    stride = image.width * 3
    return image.width, image.height, [raw[i:i + stride] for i in range(0, len(raw), stride)]


def _decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, bytearray(), b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(bytes(idat))
    rows, prior = [], bytes(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        _unfilter(kind, line, prior, bpp)
        prior = bytes(line)
        rows.append(prior if bpp == 3 else b"".join(prior[i:i + 3] for i in range(0, stride, 4)))
    return width, height, rows


def _unfilter(kind: int, line: bytearray, prior: bytes, bpp: int) -> None:
    """PNG filter types 0-4 undone in place (RFC 2083 §6)."""
    n = len(line)
    if kind == 0:
        return
    if kind == 1:
        for i in range(bpp, n):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:
        line[:] = bytes((a + b) & 0xFF for a, b in zip(line, prior, strict=True))
    elif kind == 3:
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prior[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(n):
            a = line[i - bpp] if i >= bpp else 0
            b = prior[i]
            c = prior[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    else:
        raise AssertionError(f"bad PNG filter type {kind}")


def _encode_png(rows: list[bytes], width: int, filters: list[int]) -> bytes:
    """An RGB PNG whose rows use the given filter types: a fixture for the decoder."""
    out, prior = bytearray(), bytes(width * 3)
    for row, kind in zip(rows, filters, strict=True):
        filtered = bytearray(row)
        for i in range(len(row)):
            a = row[i - 3] if i >= 3 else 0
            b, c = prior[i], (prior[i - 3] if i >= 3 else 0)
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            paeth = a if pa <= pb and pa <= pc else b if pb <= pc else c
            predictor = (0, a, b, (a + b) >> 1, paeth)[kind]
            filtered[i] = (row[i] - predictor) & 0xFF
        out += bytes([kind]) + filtered
        prior = row

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, len(rows), 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(out)))
            + chunk(b"IEND", b""))


def test_png_decoder_undoes_every_filter_type() -> None:
    width = 7
    rows = [bytes((x * 37 + y * 91 + x * y * 13) & 0xFF for x in range(width * 3)) for y in range(10)]
    filters = [0, 1, 2, 3, 4, 4, 3, 2, 1, 0]
    assert _decode_png(_encode_png(rows, width, filters)) == (width, 10, rows)


def _colour(hex_colour: str) -> tuple[int, int, int]:
    value = int(hex_colour.lstrip("#"), 16)
    return value >> 16, (value >> 8) & 0xFF, value & 0xFF


def _histogram(rows: list[bytes]) -> Counter[bytes]:
    return Counter(row[i:i + 3] for row in rows for i in range(0, len(row), 3))


def _pixels_near(histogram: Counter[bytes], colour: tuple[int, int, int], tolerance: int = 3) -> int:
    """Pixels within `tolerance` of `colour` in every channel (anti-aliasing and colour profiles)."""
    return sum(n for pixel, n in histogram.items()
               if all(abs(p - c) <= tolerance for p, c in zip(pixel, colour, strict=True)))


@pytest.mark.chromium
def test_html_renders_in_a_real_browser(run: AuditRun, tmp_path: Path) -> None:
    need_chromium()
    page = tmp_path / "report.html"
    page.write_text(html_page.to_html(run), encoding="utf-8")
    shot = tmp_path / "report.png"
    done = chromium("--window-size=1400,1800", f"--screenshot={shot}", page.as_uri(),
                     profile=tmp_path / "profile")
    print(f"screenshot: {shot}")
    assert shot.exists(), done.stderr[-2000:]
    width, height, rows = decode_png(shot.read_bytes())
    assert (width, height) == (1400, 1800)
    whole = _histogram(rows[::4])
    assert len(whole) > 20 and max(whole.values()) < 0.97 * sum(whole.values()), "a flat picture"
    top = _histogram(rows[: height // 2])
    for i, colour in enumerate(timeline.LANE_COLOURS[:4]):
        assert _pixels_near(top, _colour(colour)) > 500, f"lane v{i + 1} ({colour}) is not in the top half"
    assert _pixels_near(top, _colour(timeline.UNREADABLE_COLOUR)) > 50

    dom = chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile").stdout
    assert 'id="timeline-orders"' in dom and "<svg" in dom
    assert dom.count('class="drift"') == 3 and dom.count('class="mark"') == 61


@pytest.mark.chromium
def test_dom_dump_finds_the_drift_of_the_odd_lake(odd_run: AuditRun, tmp_path: Path) -> None:
    need_chromium()
    page = tmp_path / "odd.html"
    page.write_text(html_page.to_html(odd_run), encoding="utf-8")
    dom = chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile").stdout
    assert "&lt;b&gt;x&lt;/b&gt;" in dom and "<b>x</b>" not in dom
    assert dom.count('class="drift"') == 1


# ---------------------------------------------------------------------------------------------
# The plan as a page


@pytest.mark.chromium
def test_the_plan_page_draws_its_steps_as_weeks_coloured_by_their_checks(tmp_path: Path) -> None:
    """`plan --format html` of the demo's rename: one bar a step over its weeks, in order; the
    contract waits on a refuted no-reads check, moving readers on checks not yet run. Self-contained,
    and a real browser lays it out."""
    from schemaguard.demo import build_plan_inputs
    from tests.helpers import run as schemaguard

    lake = tmp_path / "lake"
    build_demo_lake(lake)
    inputs = build_plan_inputs(lake)
    orders = str(lake / "orders")
    done = schemaguard("plan", orders, str(inputs / "orders_next.json"), "--table", orders,
                       "--rename", "customer=customer_id", "--identity", "name",
                       "--query-table", "sales.orders", "--query-log", str(inputs / "queries.jsonl"),
                       "--format", "html")
    assert done.returncode == 1, done.stderr
    parsed = _parse(done.stdout)
    tags = [t for t, _ in parsed.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert set(re.findall(r"https?://[^\s\"'<>)]+", done.stdout)) <= {"http://www.w3.org/2000/svg"}
    steps = [(attrs.get("class") or "").split() for t, attrs in parsed.tags
             if t == "g" and "step" in (attrs.get("class") or "").split()]
    assert [c[1] for c in steps] == ["step-expand", "step-dual-write", "step-backfill", "step-move-readers",
                                     "step-verify-no-reads", "step-contract"]
    assert {c[1]: c[2] for c in steps}["step-contract"] == "state-refuted"
    assert {c[1]: c[2] for c in steps}["step-move-readers"] == "state-not-run"
    bars = [attrs for t, attrs in parsed.tags if t == "rect" and attrs.get("class") == "bar"]
    x = [float(a["x"] or 0) for a in bars]
    assert x[0] == x[1] < x[2] < x[3] == x[4] < x[5]  # weeks 1, 1, 2, 3-6, 3-7, 8
    text = " ".join(parsed.text.getvalue().split())
    assert "rename customer -> customer_id" in text and "week 8" in text
    need_chromium()
    page = tmp_path / "plan.html"
    page.write_text(done.stdout, encoding="utf-8")
    dom = chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile").stdout
    assert dom.count('class="bar"') == 6 and 'id="steps"' in dom


@pytest.mark.chromium
def test_the_plan_page_wraps_long_sql_at_1400_px(tmp_path: Path) -> None:
    """A plan whose steps carry long statements (a Delta table at a deep path) stays within a
    1400 px window: the SQL wraps, the entry checks stay in view."""
    import pyarrow as pa
    from deltalake import write_deltalake

    from tests.helpers import run as schemaguard

    table = tmp_path / ("a_rather_long_folder_name_" * 6) / "shipments"
    write_deltalake(str(table), pa.table({"id": pa.array([1, 2], pa.int64()), "weight": [1.5, None]}))
    done = schemaguard("plan", "--table", str(table), "--ddl",
                       "ALTER TABLE shipments RENAME COLUMN weight TO weight_kg", "--format", "html")
    assert done.returncode == 1, done.stderr
    assert done.stdout.count('<pre class="sql">') >= 4
    need_chromium()
    page = tmp_path / "plan.html"
    probe = ("<script>document.body.setAttribute('data-overflow', "
             "String(document.documentElement.scrollWidth > window.innerWidth));</script>")
    page.write_text(done.stdout.replace("</body>", probe + "</body>"), encoding="utf-8")
    dom = chromium("--window-size=1400,900", "--dump-dom", page.as_uri(),
                    profile=tmp_path / "profile").stdout
    assert 'data-overflow="false"' in dom, "the page is wider than the window"


HOST_PAGE = """<!doctype html><html><head><style>h1 {{ color: rgb(1, 2, 3); }}</style></head><body>
<h1 id="host-h1">the notebook's own heading</h1><p><code id="host-code">x = 1</code></p>
<div id="cell">{cell}</div>
<script>
const styles = ["host-h1", "host-code"].map(id => {{ const s = getComputedStyle(document.getElementById(id));
  return [s.color, s.fontSize, s.fontFamily, s.margin, s.background, s.display, s.boxSizing].join("|"); }});
const b = getComputedStyle(document.body);
styles.push([b.margin, b.background, b.color, b.font].join("|"));
document.body.setAttribute("data-styles", styles.join("##"));
</script></body></html>"""


@pytest.mark.chromium
def test_a_results_notebook_html_styles_nothing_outside_its_own_element(run: AuditRun,
                                                                         tmp_path: Path) -> None:
    """Every result's `_repr_html_` as a notebook shows it, inside a page of its own styles: the
    page's headings, code and body compute the same styles with and without our output."""
    from schemaguard.config import parse_config
    from schemaguard.results import AuditResult

    audit = AuditResult(run, parse_config({"tables": [{"name": "t", "path": "t"}]}, tmp_path / "c.toml"), {})
    cells = [audit._repr_html_(),
             html_page.result_view("schemaguard scan", [("rows", [{"path": "x"}], ())])]
    for i, cell in enumerate(cells):
        sheet = cell.split("<style>", 1)[1].split("</style>", 1)[0]
        selectors = [x.strip() for rule in re.findall(r"([^{}]+)\{[^{}]*\}", sheet) for x in rule.split(",")]
        assert selectors and all(x.startswith(".sg-report") for x in selectors), selectors
        need_chromium()
        styles: list[str] = []
        for inserted in ("", cell):
            page = tmp_path / f"host{i}-{len(styles)}.html"
            page.write_text(HOST_PAGE.format(cell=inserted), encoding="utf-8")
            dom = chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile").stdout
            found = re.search(r'data-styles="([^"]*)"', dom)
            assert found is not None, dom[-500:]
            styles.append(found.group(1))
        assert styles[0] == styles[1]
