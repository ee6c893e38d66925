"""The audit of the demo lake, as a user configures it: versions against the current schema under
the configured readers and mode, findings with their waivers, and the verdict's exit code."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.auditing import AuditError, run_audit
from schemaguard.checks.finding import Finding
from schemaguard.config import AuditConfig, load_config
from schemaguard.demo import build_demo_lake
from schemaguard.proofs.audit_run import AuditRun

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("audit")
    build_demo_lake(directory / "lake")
    return directory


def configure(lake: Path, extra: str = "", audit: str = "") -> AuditConfig:
    conf = lake / "schemaguard.toml"
    conf.write_text(f"""
[audit]
{audit}
[catalog]
enabled = false
[[tables]]
name = "orders"
path = "lake/orders"
{extra}
""")
    return load_config(conf)


def waiver(key: str, expires: str) -> str:
    return f'[[waivers]]\nkey = "{key}"\nowner = "platform"\nreason = "planned"\nexpires = {expires}\n'


def by_key(run: AuditRun) -> dict[str, Finding]:
    found = {f.key: f for f in run.all_findings}
    assert len(found) == len(run.all_findings), "finding keys must be unique"
    return found


@pytest.fixture(scope="module")
def demo_run(lake: Path) -> AuditRun:
    return run_audit(configure(lake), now=NOW)


def test_every_version_on_disk_is_checked_against_the_newest(demo_run: AuditRun) -> None:
    (orders,) = demo_run.tables
    assert [v.number for v in orders.summary.table.versions] == [1, 2, 3, 4]
    assert orders.current_source == "newest version (v4)"
    found = by_key(demo_run)
    # Old readers (v1-v3 declare quantity int32) cannot read files written now (int64): FORWARD fails.
    forward = found["orders:VERSION_INCOMPATIBLE:spark-read:forward:quantity:TYPE_MISMATCH"]
    assert forward.severity == "error" and forward.path == "quantity"
    assert forward.versions == (4,) and forward.count == 30  # the files written now: v4, 15 days x 2
    assert ("reader schema", "v1, v2, v3") in forward.evidence
    # Today's reader reads the old int32 files as bigint (Spark's vectorized reader widens): no finding.
    assert not any(k.startswith("orders:VERSION_INCOMPATIBLE:spark-read:backward:quantity") for k in found)


def test_the_findings_of_the_scan_are_in_the_audit(demo_run: AuditRun) -> None:
    codes = {f.code for f in demo_run.all_findings}
    assert {"UNREADABLE_FILE", "STALE_CHECKSUM", "SPARK_MERGE_CONFLICT", "LOGICAL_TYPE_DRIFT",
            "COLUMN_MISSING_IN_OLD_FILES"} <= codes
    assert all(f.table == "orders" for f in demo_run.all_findings)
    assert demo_run.exit_code == 1 and demo_run.failing


def test_findings_are_most_severe_first(demo_run: AuditRun) -> None:
    order = {"error": 0, "warning": 1, "info": 2}
    ranks = [order[f.severity] for f in demo_run.tables[0].findings]
    assert ranks == sorted(ranks)


def test_backward_mode_checks_only_todays_reader(lake: Path) -> None:
    run = run_audit(configure(lake, audit='mode = "BACKWARD_TRANSITIVE"'), now=NOW)
    assert not [k for k in by_key(run) if ":forward:" in k]


def test_a_given_current_schema_is_checked_against_every_version(lake: Path) -> None:
    """The migration check: about to declare `quantity` int16. Spark's vectorized reader reads INT32
    as short (docs/reference/parquet-and-spark.md §2.5), so only the int64 files of v4 fail."""
    target = lake / "target.json"
    target.write_text('{"fields": [{"name": "id", "type": "int64", "nullable": false},'
                      ' {"name": "quantity", "type": "int16", "nullable": true}]}')
    config = configure(lake, extra=f'schema = "{target}"', audit='mode = "BACKWARD_TRANSITIVE"')
    run = run_audit(config, now=NOW)
    assert run.tables[0].current_source == str(target)
    narrow = by_key(run)["orders:VERSION_INCOMPATIBLE:spark-read:backward:quantity:TYPE_MISMATCH"]
    assert narrow.versions == (4,) and narrow.count == 30


def test_an_active_waiver_keeps_the_finding_but_not_the_failure(lake: Path) -> None:
    key = "orders:SPARK_MERGE_CONFLICT:quantity"
    plain = run_audit(configure(lake), now=NOW)
    waived = run_audit(configure(lake, waiver(key, "2027-01-31")), now=NOW)
    finding = by_key(waived)[key]
    assert finding.waiver is not None and finding.waiver.owner == "platform"
    assert finding.waived(NOW.date()) and not waived.fails(finding)
    assert len(waived.failing) == len(plain.failing) - 1
    assert waived.counts()["waived"] == 1


def test_an_expired_waiver_fails_again_and_is_a_finding(lake: Path) -> None:
    key = "orders:SPARK_MERGE_CONFLICT:quantity"
    run = run_audit(configure(lake, waiver(key, "2026-12-01")), now=NOW)
    found = by_key(run)
    assert run.fails(found[key])
    expired = found[f"orders:WAIVER_EXPIRED:{key}"]
    assert expired.severity == "warning" and "expired on 2026-12-01" in expired.message


def test_a_waiver_on_its_last_day_still_holds(lake: Path) -> None:
    key = "orders:SPARK_MERGE_CONFLICT:quantity"
    run = run_audit(configure(lake, waiver(key, NOW.date().isoformat())), now=NOW)
    assert not run.fails(by_key(run)[key])


def test_a_waiver_that_matches_nothing_says_so(lake: Path) -> None:
    unmatched = waiver("orders:LOGICAL_TYPE_DRIFT:no_such_column", "2027-01-31")
    run = run_audit(configure(lake, unmatched), now=NOW)
    assert "orders:WAIVER_UNMATCHED:orders:LOGICAL_TYPE_DRIFT:no_such_column" in by_key(run)


@pytest.mark.parametrize(("level", "fails"), [("never", False), ("error", True), ("info", True)])
def test_the_fail_level_decides_the_exit_code(demo_run: AuditRun, level: str, fails: bool) -> None:
    run = replace(demo_run, fail_level=level)  # type: ignore[arg-type]
    assert run.exit_code == (1 if fails else 0)
    if level == "info":
        assert len(run.failing) == len(run.all_findings)


def test_a_clean_table_passes(tmp_path: Path) -> None:
    table = tmp_path / "clean"
    table.mkdir()
    for day in (1, 2):
        pq.write_table(pa.table({"id": pa.array([day], pa.int64())}), table / f"part-{day}.parquet")
    conf = tmp_path / "c.toml"
    conf.write_text('[catalog]\nenabled = false\n[[tables]]\npath = "clean"\n')
    run = run_audit(load_config(conf), now=NOW)
    assert run.exit_code == 0 and run.all_findings == () and run.run_id.startswith("20261202T120000Z-")


def test_a_given_run_id_is_kept(lake: Path) -> None:
    assert run_audit(configure(lake), run_id="airflow-42", now=NOW).run_id == "airflow-42"



def test_a_catalog_table_is_audited_at_its_location_against_the_catalogs_schema(
        spark: Any, tmp_path: Path) -> None:
    """`catalog_table = "db.t"`: the location and the current schema come from the catalog. The
    table's files hold `n` as int64 and a later one as int32 (written outside Spark's catalog), while
    the catalog still says bigint."""
    spark.sql("CREATE DATABASE IF NOT EXISTS audit_catalog")
    spark.range(3).selectExpr("id", "id AS n").write.format("parquet").saveAsTable("audit_catalog.t")
    location = spark.sql("DESCRIBE TABLE EXTENDED audit_catalog.t").where("col_name = 'Location'").first()
    assert location is not None
    folder = Path(str(location["data_type"]).removeprefix("file:"))
    pq.write_table(pa.table({"id": pa.array([9], pa.int64()), "n": pa.array([9], pa.int32())}),
                   folder / "part-99999-late.parquet")
    conf = tmp_path / "c.toml"
    conf.write_text('[catalog]\nenabled = false\n[[tables]]\ncatalog_table = "audit_catalog.t"\n')
    run = run_audit(load_config(conf), spark=spark, now=NOW)
    (table,) = run.tables
    assert table.name == "audit_catalog.t" and table.current_source == "catalog"
    assert Path(table.location) == folder
    assert [f.name for f in table.current_schema.fields] == ["id", "n"]
    assert len(table.summary.table.versions) == 2
    # Spark reads the INT32 file as bigint: no backward problem with the catalog's schema.
    assert not [k for k in by_key(run) if ":backward:n:" in k]
    assert "audit_catalog.t:LOGICAL_TYPE_DRIFT:n" in by_key(run)


def test_an_unknown_catalog_table_is_a_one_line_error(spark: Any, tmp_path: Path) -> None:
    conf = tmp_path / "c.toml"
    conf.write_text('[catalog]\nenabled = false\n[[tables]]\ncatalog_table = "nowhere.nothing"\n')
    with pytest.raises(AuditError, match=r"catalog table nowhere\.nothing: ") as e:
        run_audit(load_config(conf), spark=spark, now=NOW)
    assert "\n" not in str(e.value)


def test_a_table_without_data_files_is_an_error_not_a_pass_in_silence(tmp_path: Path) -> None:
    (tmp_path / "empty" / "_delta_log").mkdir(parents=True)
    conf = tmp_path / "c.toml"
    conf.write_text('[catalog]\nenabled = false\n[[tables]]\npath = "empty"\n')
    run = run_audit(load_config(conf), now=NOW)
    (finding,) = run.all_findings
    assert finding.key == "empty:TABLE_HAS_NO_DATA:" and finding.severity == "error"
    assert run.tables[0].current_source == "none (no readable file)"
    assert run.exit_code == 1  # an audit of nothing fails: a wrong path, or a table not written yet


def test_a_folder_of_csv_files_is_an_audit_error_and_bad_input_for_the_table_commands(tmp_path: Path) -> None:
    from tests.helpers import assert_usage_error, run

    csvs = tmp_path / "exports"
    csvs.mkdir()
    (csvs / "day1.csv").write_text("id,amount\n1,2.50\n" * 20)
    (csvs / "day2.csv").write_text("id,amount\n3,4.00\n" * 20)
    conf = tmp_path / "c.toml"
    conf.write_text('[catalog]\nenabled = false\n[[tables]]\npath = "exports"\n')
    audited = run_audit(load_config(conf), now=NOW)
    assert [(f.code, f.severity) for f in audited.all_findings] == [
        ("TABLE_HAS_NO_DATA", "error"), ("UNREADABLE_FILE", "error")]
    assert audited.exit_code == 1
    for command in (["scan", str(csvs)], ["scan", str(csvs / "day1.csv")], ["gate", str(csvs)],
                    ["check", str(csvs), "--not-null", "id"], ["scan", str(csvs), "--format", "json"]):
        assert_usage_error(run(*command), "none of them Parquet", "not a Parquet file")
    empty = tmp_path / "nothing"
    empty.mkdir()
    for command in (["scan", str(empty)], ["gate", str(empty)], ["scan", str(empty), "--format", "json"]):
        assert_usage_error(run(*command), f"no data file under {empty}: an empty folder")


def test_a_lake_root_holding_tables_is_not_read_as_one_table_unless_asked(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import write_deltalake

    from schemaguard.demo import build_iceberg_demo
    from tests.helpers import assert_usage_error, run

    lake = tmp_path / "lake"
    (lake / "events").mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), lake / "events" / "part-0.parquet")
    write_deltalake(str(lake / "payments"), pa.table({"id": pa.array([1], pa.int64())}))
    build_iceberg_demo(lake)
    for command in (["scan", str(lake)], ["gate", str(lake)], ["check", str(lake), "--not-null", "id"]):
        assert_usage_error(run(*command), f"{lake} is not one table: it holds 2 table(s) below it "
                           "(orders_iceberg (Iceberg), payments (Delta))", "--format-hint parquet")
    parquet = ["--not-null", "id", "--format-hint", "parquet", "--footer-only"]
    asked = run("check", str(lake / "events"), *parquet)
    assert asked.returncode == 0, asked.stderr
    # a stray _delta_log beside Parquet files: the proofs can be pointed at the files themselves
    write_deltalake(str(lake / "events"), pa.table({"other": pa.array(["x"])}), mode="append",
                    schema_mode="merge")
    stray = run("check", str(lake / "events"), *parquet)
    assert stray.returncode == 1, stray.stderr  # now a file lacks `id`: its rows read as null


def test_the_audits_own_jvm_is_brief_only_while_its_proofs_read_little(lake: Path) -> None:
    from schemaguard.auditing import brief_work
    from schemaguard.lake.file_records import DataFiles
    from schemaguard.proofs import Proof
    from schemaguard.spark import BRIEF_BYTES

    (table,) = configure(lake).tables
    proved = replace(table, proofs=(Proof("not-null", "channel"),))

    def files(*sizes: int) -> DataFiles:
        listed = DataFiles()
        for i, size in enumerate(sizes):
            listed.add(f"/t/f{i}.parquet", f"f{i}.parquet", size, None, ())
        return listed

    half = BRIEF_BYTES // 2
    assert brief_work([(proved, files(half, half))])  # at the bound: still brief
    assert not brief_work([(proved, files(half, half, 1))])
    assert brief_work([(table, files(BRIEF_BYTES * 100))])  # no proof reads a table without proofs
    assert not brief_work([(table, files(1)), (proved, files(half)), (proved, files(half + 1))])


def test_proofs_on_a_small_table_start_a_brief_jvm(lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` and `plan` give their proofs' session the table they read: a small one starts
    brief (the decision only: which JVM a session really gets is test_spark_session's)."""
    from schemaguard import inputs
    from schemaguard.lake.table import read

    asked: list[bool] = []
    monkeypatch.setattr(inputs, "_embedded", lambda name, brief=False: asked.append(brief))
    inputs.spark_factory("check", read=read(str(lake / "lake" / "orders")))()
    inputs.spark_factory("check")()  # no table known: the full JIT
    assert asked == [True, False]
