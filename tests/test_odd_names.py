"""Column names that break hand-split paths and hand-built SQL, through scan, check, plan and the
reports, with no JVM: a top-level `a.b` beside a struct `a` with a field `b`, a backtick, a space
and non-ASCII letters. Each place a column is named must name that column and no other: the
drift of `a.b` is never reported on `a`.`b`, a proof of `sp ace` counts that column's nulls, and
the plan's SQL quotes every name (a backtick doubled). (Migrations on such names, applied on real
Delta tables: tests/test_migrate_names.py.)"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import schemaguard as sg
from schemaguard.auditing import run_audit
from schemaguard.config import load_config
from schemaguard.model import Field, Schema, fields_along
from schemaguard.paths import parts
from schemaguard.proofs.audit_run import AuditRun
from schemaguard.report import json as json_report
from schemaguard.report import junit, markdown, sarif
from schemaguard.report.html import page as html_page

INNER = pa.struct([pa.field("b", pa.string())])


def _write(path: Path, dotted: pa.DataType, spaced: list[int | None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = len(spaced)
    pq.write_table(pa.table({
        "id": pa.array(range(n), pa.int64()),
        "a.b": pa.array(range(n), dotted),
        "a": pa.array([{"b": f"nested{i}"} for i in range(n)], INNER),
        "we`ird": pa.array([f"w{i}" for i in range(n)]),
        "sp ace": pa.array(spaced, pa.int32()),
        "ünïcödé": pa.array([f"ü{i}" for i in range(n)]),
    }), path)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two versions: `a.b` int32 then int64 (a drift of that column only); `sp ace` holds one null
    in the first file."""
    table = tmp_path_factory.mktemp("odd") / "odd table"
    _write(table / "dt=2024-01-01" / "part-0.parquet", pa.int32(), [1, None, 3])
    _write(table / "dt=2024-01-02" / "part-0.parquet", pa.int64(), [4, 5])
    return table


def field_at(schema: Schema, path: str) -> list[Field] | None:
    return fields_along(schema, path, lambda fields, name: next((f for f in fields if f.name == name), None))


def test_a_scan_reports_the_drift_on_the_dotted_column_and_not_on_the_struct(lake: Path) -> None:
    result = sg.scan(str(lake))
    doc = result.to_dict()
    versions = result.table.versions
    assert len(versions) == 2
    drifted = {f["path"] for f in doc["findings"] if f["code"] == "LOGICAL_TYPE_DRIFT"}
    assert drifted == {"`a.b`"}, doc["findings"]  # int32 -> int64 of that column only
    schema = versions[-1].footer.schema
    along = field_at(schema, "`a.b`")
    assert along is not None and [f.name for f in along] == ["a.b"]
    assert parts("`a.b`") == ("a.b",) and parts("a.b") == ("a", "b")
    # every column's path reads back to that column's own name
    assert {p for p in (f["path"] for f in doc["findings"]) if p} <= {"`a.b`"}
    names = [f.name for f in schema.fields]
    assert names[:6] == ["id", "a.b", "a", "we`ird", "sp ace", "ünïcödé"]


@pytest.mark.parametrize(("column", "verdict"), [
    ("`sp ace`", "refuted"),  # one null, in the first file
    ("`we``ird`", "proven"), ("ünïcödé", "proven"), ("`a.b`", "proven"), ("a.b", "proven"),
])
def test_a_not_null_proof_counts_the_nulls_of_the_column_named(lake: Path, column: str, verdict: str) -> None:
    result = sg.check(str(lake), not_null=[column], footer_only=True)
    # a name quoted where it needs no quotes is the same column: shown as paths spell it
    [proof] = result.to_dict()["proofs"]
    assert proof["verdict"] == verdict, proof


@pytest.fixture(scope="module")
def delta_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same columns as a Delta table, written by delta-rs (read through its log, no JVM)."""
    from deltalake import write_deltalake

    where = tmp_path_factory.mktemp("odd-delta") / "odd table"
    _write(where.parent / "staged" / "part-0.parquet", pa.int64(), [1, None, 3])
    write_deltalake(str(where), pq.read_table(where.parent / "staged" / "part-0.parquet"))
    return where


def test_a_plan_quotes_every_name_it_writes(delta_table: Path) -> None:
    ddl = ("ALTER TABLE `odd table` RENAME COLUMN `a.b` TO a_b;\n"
           "ALTER TABLE `odd table` RENAME COLUMN `we``ird` TO `we``ird2`;\n"
           "ALTER TABLE `odd table` RENAME COLUMN `ünïcödé` TO `x.y`")
    doc = sg.plan(table=str(delta_table), ddl=ddl, footer_only=True).to_dict()
    sql = {s["kind"]: s["sql"] for s in doc["steps"]}
    expand = " ".join(sql["expand"])
    assert "`a_b` BIGINT" in expand and "`we``ird2` STRING" in expand and "`x.y` STRING" in expand, expand
    assert "`a`.`a_b`" not in expand  # the struct `a` is not the column `a.b`
    backfill = " ".join(sql["backfill"])
    assert "SET `a_b` = `a.b`" in backfill and "SET `we``ird2` = `we``ird`" in backfill, backfill
    contract = " ".join(sql["contract"])
    assert "`a.b`" in contract and "`we``ird`" in contract and "`ünïcödé`" in contract, contract
    assert "`a`.`b`" not in contract  # the struct's own field is never dropped
    old_view = next(v for v in doc["views"] if v["shape"] == "old")
    assert "COALESCE(`a.b`, `a_b`) AS `a.b`" in old_view["sql"], old_view["sql"]
    assert "`a`," in old_view["sql"]  # the struct passes through untouched


def test_the_check_commands_a_plan_suggests_run_as_written_in_a_shell(delta_table: Path) -> None:
    """The suggested `schemaguard check` lines give the shell back the table and the subject as
    one word each: a subject spelt with backticks is never run as a command substitution."""
    ddl = "ALTER TABLE `odd table` RENAME COLUMN `a.b` TO a_b"
    doc = sg.plan(table=str(delta_table), ddl=ddl, footer_only=True).to_dict()
    commands = [(c["kind"], c["subject"], c["command"]) for c in doc["checks"] if c["command"]]
    assert {kind for kind, _, _ in commands} >= {"backfilled", "agree"}
    for kind, subject, command in commands:
        words = subprocess.run(["bash", "-c", 'printf "%s\\n" ' + command.removeprefix("schemaguard ")],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        assert words == ["check", str(delta_table), f"--{kind}", subject], command


@pytest.fixture(scope="module")
def audited(lake: Path) -> AuditRun:
    conf = lake.parent / "schemaguard.toml"
    conf.write_text('[catalog]\nenabled = false\n[[tables]]\nname = "odd"\npath = "odd table"\n',
                    encoding="utf-8")
    return run_audit(load_config(conf))


def test_every_report_names_the_dotted_column_as_one_name(audited: AuditRun) -> None:
    findings = json_report.to_json(audited)["tables"][0]["findings"]
    paths = {f["path"] for f in findings if f.get("path")}
    assert "`a.b`" in paths and "a.b" not in paths, paths
    assert "`a.b`" in markdown.to_markdown(audited)
    assert "`a.b`" in html_page.to_html(audited)
    doc: dict[str, Any] = sarif.to_sarif(audited)
    messages = " ".join(r["message"]["text"] for r in doc["runs"][0]["results"])
    assert "`a.b`" in messages, messages
    assert "`a.b`" in junit.to_junit(audited)
