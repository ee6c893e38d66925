"""What `migrate status` and a resumed step make of the `migrations` records, without Spark: a
step killed after its `started` record keeps the version from before its first statement when a
rerun finishes it, and an applied rollback clears the steps before it; which steps start a brief JVM."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from schemaguard.migrate import Migration, brief_jvm, step_states, touches_rows
from schemaguard.planning.statements import log_only

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def record(step: str, status: str, before: int | None, after: int | None, minute: int) -> dict[str, Any]:
    return {"step": step, "status": status, "version_before": before, "version_after": after,
            "started_at": T0 + timedelta(minutes=minute), "checks_json": json.dumps(
                [{"kind": "not-null", "subject": "c", "verdict": "proven", "evidence": ""}])}


def test_a_resumed_step_keeps_the_version_before_its_first_statement() -> None:
    rows = [record("expand", "started", 3, None, 0),  # killed after its first commit (version 4)
            record("expand", "applied", 4, 5, 9)]  # the rerun finds version 4 and finishes
    state = step_states(rows)["expand"]
    assert (state.status, state.version_before, state.version_after) == ("applied", 3, 5)
    assert state.started_at == T0  # when the step really began
    assert state.checks == (("not-null", "c", "proven", ""),)


def test_a_step_run_again_from_scratch_is_its_own_record() -> None:
    rows = [record("backfill", "applied", 5, 6, 0), record("backfill", "started", 6, None, 5)]
    state = step_states(rows)["backfill"]
    assert (state.status, state.version_before, state.version_after) == ("started", 6, None)


def test_an_applied_rollback_clears_the_steps_before_it() -> None:
    rows = [record("expand", "applied", 1, 2, 0), record("rollback", "started", 2, None, 1),
            record("rollback", "applied", 2, 3, 2), record("dual-write", "applied", 3, 3, 3)]
    assert set(step_states(rows)) == {"dual-write"}
    killed = rows[:2]  # a rollback killed before it finished clears nothing
    assert set(step_states(killed)) == {"expand", "rollback"}


def test_only_steps_that_read_or_write_rows_need_the_full_jit() -> None:
    steps = [{"kind": "expand", "entry_checks": [], "sql": [
                 "ALTER TABLE t ADD COLUMNS (`b` STRING)", "CREATE OR REPLACE VIEW `v1` AS SELECT a FROM t"]},
             {"kind": "backfill", "entry_checks": [], "sql": ["UPDATE t SET `b` = `a` WHERE `b` IS NULL"]},
             {"kind": "move-readers", "entry_checks": [{"kind": "backfilled", "subject": "b from a"}],
              "sql": []},
             {"kind": "contract", "entry_checks": [{"kind": "no-reads", "subject": "a"}],
              "sql": ["DROP VIEW IF EXISTS `v1`", "ALTER TABLE t DROP COLUMNS (`a`)"]}]
    m = Migration({"steps": steps}, "id", "t", "t", "delta", ("v1",))
    assert not touches_rows(m, ["expand"]) and not touches_rows(m, ["contract"]) and not touches_rows(m, [])
    assert touches_rows(m, ["backfill"])  # an UPDATE rewrites the rows
    assert touches_rows(m, ["move-readers"])  # its proof reads them
    assert touches_rows(m, ["expand", "backfill"])


def test_a_step_that_rewrites_rows_of_a_small_delta_table_starts_brief(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    write_deltalake(str(tmp_path), pa.table({"a": ["x", None], "b": [None, None]}, pa.schema(
        [("a", pa.string()), ("b", pa.string())])))
    steps = [{"kind": "expand", "entry_checks": [], "sql": ["ALTER TABLE t ADD COLUMNS (`b` STRING)"]},
             {"kind": "backfill", "entry_checks": [], "sql": ["UPDATE t SET `b` = `a` WHERE `b` IS NULL"]}]
    m = Migration({"steps": steps}, "id", "t", "t", "delta", (), location=str(tmp_path))
    assert brief_jvm(m, ["expand"]) and brief_jvm(m, ["backfill"])  # a few bytes of files
    assert brief_jvm(replace(m, location=None), ["expand"])  # metadata work needs no size
    assert not brief_jvm(replace(m, location=None), ["backfill"])  # a size not known: the full JIT
    assert not brief_jvm(replace(m, location=str(tmp_path / "none")), ["backfill"])  # no log
    assert not brief_jvm(replace(m, table_format="iceberg"), ["backfill"])
    monkeypatch.setattr("schemaguard.spark.BRIEF_BYTES", 100)  # the table's files hold more
    assert not brief_jvm(m, ["backfill"]) and brief_jvm(m, ["expand"])


def test_only_statements_delta_answers_from_its_log_count_as_metadata_work() -> None:
    assert all(log_only(x) for x in (
        "ALTER TABLE db.t ADD COLUMNS (`b` STRING AFTER `a`)", "ALTER TABLE db.t DROP COLUMNS (`a`, `c`)",
        "ALTER TABLE db.t RENAME COLUMN `a` TO `b`",
        "ALTER TABLE db.t SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",
        "CREATE OR REPLACE VIEW `db`.`t__v1` AS SELECT `a` FROM db.t", "DROP VIEW IF EXISTS `db`.`t__v1`",
        "RESTORE TABLE db.t TO VERSION AS OF 3"))
    assert not any(log_only(x) for x in (
        "ALTER TABLE db.t ADD CONSTRAINT c_not_null CHECK (`c` IS NOT NULL)",  # Delta checks every row
        "ALTER TABLE db.t ALTER COLUMN `c` SET NOT NULL",
        "UPDATE db.t SET `b` = `a` WHERE `b` IS NULL",
        "CREATE TABLE `db`.`t__v2` USING delta AS SELECT CAST(`a` AS INT) AS `a` FROM db.t"))
