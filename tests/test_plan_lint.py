"""DDL linted for CI (`plan --ddl-file F --format sarif|junit`): each statement at its line, in
Atlas's categories judged as the planner judges; the engine's refusals checked against
delta-spark itself: the lint says ENGINE_REFUSES exactly for the statements delta-spark rejects."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from schemaguard.demo import build_demo_lake
from schemaguard.planning.lint import LINT_CODES, LintCode
from tests.helpers import assert_usage_error, run, run_here, valid_sarif

MIGRATION = """-- orders: rename and tidy up
ALTER TABLE orders RENAME COLUMN customer TO customer_id;
ALTER TABLE orders ALTER COLUMN channel SET NOT NULL;

ALTER TABLE orders ADD COLUMNS (note STRING);
ALTER TABLE orders DROP COLUMN amount_cents
"""


@pytest.fixture(scope="module")
def orders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_lake(tmp_path_factory.mktemp("lint"))


def test_every_lint_code_says_what_it_means() -> None:
    """`LINT_CODES` is keyed by the enum, in its order (the SARIF rules' order): no member without
    its meaning, no meaning without a member."""
    assert list(LINT_CODES) == list(LintCode) and all(LINT_CODES.values())


def test_sarif_names_each_statement_at_its_line(orders: Path, tmp_path: Path) -> None:
    ddl = tmp_path / "migration.sql"
    ddl.write_text(MIGRATION)
    done = run("plan", "--table", str(orders), "--ddl-file", str(ddl), "--format", "sarif", "--footer-only")
    assert done.returncode == 1, done.stderr
    valid_sarif(json.loads(done.stdout))
    results = json.loads(done.stdout)["runs"][0]["results"]
    where = [r["locations"][0]["physicalLocation"] for r in results]
    seen = {(w["region"]["startLine"], r["ruleId"], r["level"]) for w, r in zip(where, results, strict=True)}
    assert seen == {
        (2, "BACKWARD_INCOMPATIBLE", "warning"), (2, "DATA_DEPENDENT", "warning"),  # a rename: quiet, staged
        (3, "BACKWARD_INCOMPATIBLE", "error"), (3, "DATA_DEPENDENT", "error"),  # channel holds nulls
        (5, "SAFE", "note"),
        (6, "DESTRUCTIVE", "error"), (6, "BACKWARD_INCOMPATIBLE", "warning")}
    assert all(w["artifactLocation"]["uri"] == ddl.as_posix() for w in where)
    refuted = next(r for r in results if r["ruleId"] == "DATA_DEPENDENT" and r["level"] == "error")
    assert refuted["message"]["text"].startswith("depends on the proof not-null channel: refuted")


def test_junit_fails_the_unsafe_statements_and_exit_0_only_when_safe(orders: Path, tmp_path: Path) -> None:
    ddl = tmp_path / "migration.sql"
    ddl.write_text(MIGRATION)
    done = run("plan", "--table", str(orders), "--ddl-file", str(ddl), "--format", "junit", "--footer-only")
    assert done.returncode == 1
    cases = ET.fromstring(done.stdout).findall(".//testcase")
    assert [(c.get("name", "").split(":")[0], c.find("failure") is not None) for c in cases] == [
        ("line 2", True), ("line 3", True), ("line 5", False), ("line 6", True)]
    safe = run("plan", "--table", str(orders), "--ddl", "ALTER TABLE orders ADD COLUMNS (note STRING)",
               "--format", "sarif")
    assert safe.returncode == 0, safe.stderr
    assert [r["ruleId"] for r in json.loads(safe.stdout)["runs"][0]["results"]] == ["SAFE"]
    assert_usage_error(run("plan", "--table", str(orders), "--format", "sarif"), "lints DDL")


REFUSALS = {  # statement -> whether delta-spark (no column mapping, no type widening) rejects it
    "ALTER TABLE {t} ALTER COLUMN weight SET NOT NULL": True,
    "ALTER TABLE {t} ALTER COLUMN weight TYPE BIGINT": True,
    "ALTER TABLE {t} DROP COLUMN note": True,
    "ALTER TABLE {t} RENAME COLUMN note TO remark": True,
    "ALTER TABLE {t} ADD COLUMNS (origin STRING)": False,
    "ALTER TABLE {t} ALTER COLUMN id DROP NOT NULL": False,
    "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')": False,
}


@pytest.mark.parametrize("statement", list(REFUSALS))
def test_engine_refusals_are_what_delta_spark_refuses(spark: Any, tmp_path: Path, statement: str) -> None:
    path = tmp_path / "t"
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT NOT NULL, weight INT, note STRING) USING delta")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 10, 'a')")
    done = run_here("plan", "--table", str(path), "--ddl", statement.format(t="t"), "--format", "sarif")
    assert done.returncode in (0, 1), done.stderr
    said = any(r["ruleId"] == "ENGINE_REFUSES" for r in json.loads(done.stdout)["runs"][0]["results"])
    try:
        spark.sql(statement.format(t=f"delta.`{path}`"))
        refused = False
    except Exception as e:  # the engine's own error for a change it does not make
        assert type(e).__name__ in ("AnalysisException", "DeltaAnalysisException",
                                    "UnsupportedOperationException", "DeltaUnsupportedOperationException"), e
        refused = True
    assert (said, refused) == (REFUSALS[statement], REFUSALS[statement])
    if refused:
        assert done.returncode == 1  # a statement the engine refuses never passes the lint
