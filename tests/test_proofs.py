"""Proofs about the data: what statistics decide without reading a data page (no Spark is ever
started for them: the factory given fails if called), what they leave unknown, and what the data
decides with Spark and Great Expectations, against values the tests wrote themselves."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.lake.table import read
from schemaguard.proofs import Proof, ProofResult
from schemaguard.proofs.run import Scope, run_proofs
from tests.helpers import run_here

CLI = [str(Path(sys.executable).parent / "schemaguard")]


def no_spark() -> Any:
    raise AssertionError("statistics decide this proof: no data may be read")


def prove(path: Path, *proofs: Proof, scope: Scope | None = None, spark: Any = no_spark,
          **kw: Any) -> list[ProofResult]:
    return run_proofs(read(str(path), workers=1), proofs, scope or Scope(), spark, **kw)


def write(path: Path, table: pa.Table, **kw: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, **kw)


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# Statistics alone


def test_not_null_proven_from_statistics_reads_no_data(tmp_path: Path) -> None:
    write(tmp_path / "t" / "a.parquet", pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
    write(tmp_path / "t" / "b.parquet", pa.table({"id": pa.array([4], pa.int64()), "v": ["d"]}))
    [r] = prove(tmp_path / "t", Proof("not-null", "V"))  # names match as Spark's: case-insensitively
    assert (r.verdict, r.decided_by, r.count, r.rows_read, r.bytes_read) == ("proven", "footer", 0, 0, 0)


def test_thousands_of_refuted_partitions_are_counted_and_the_first_listed(tmp_path: Path) -> None:
    from schemaguard.proofs import PARTITIONS

    for day in range(PARTITIONS + 200):
        write(tmp_path / "t" / f"n={day:05d}" / "p.parquet", pa.table({"v": pa.array([None, 1], pa.int64())}))
    [r] = prove(tmp_path / "t", Proof("not-null", "v"))
    assert (r.verdict, r.count, r.partition_count, len(r.partitions)) == (
        "refuted", PARTITIONS + 200, PARTITIONS + 200, PARTITIONS)
    assert r.partitions[0] == "n=00000" and r.where().endswith(" ...")


def test_a_null_only_in_the_second_row_group_refutes(tmp_path: Path) -> None:
    values = ["x"] * 10 + [None] + ["y"] * 9
    write(tmp_path / "t" / "dt=2024-01-02" / "a.parquet", pa.table({"v": values}), row_group_size=10)
    write(tmp_path / "t" / "dt=2024-01-01" / "a.parquet", pa.table({"v": ["z"] * 5}))
    assert pq.ParquetFile(tmp_path / "t" / "dt=2024-01-02" / "a.parquet").metadata.num_row_groups == 2
    [r] = prove(tmp_path / "t", Proof("not-null", "v"))
    assert (r.verdict, r.decided_by, r.count) == ("refuted", "footer", 1)
    assert r.partitions == ("dt=2024-01-02",) and r.files == ("dt=2024-01-02/a.parquet",)


def test_a_refuted_proof_is_placed_on_the_days_of_the_date_partition(tmp_path: Path) -> None:
    """Days as the table's date column spells them (`20240105` too), for the report's timeline."""
    for day, values in (("20240103", [None, 1]), ("20240101", [1, 2]), ("20240105", [None, None])):
        write(tmp_path / "t" / f"day={day}" / "a.parquet", pa.table({"v": pa.array(values, pa.int64())}))
    [r] = prove(tmp_path / "t", Proof("not-null", "v"))
    assert r.partitions == ("day=20240103", "day=20240105")
    assert r.days == (date(2024, 1, 3), date(2024, 1, 5))
    [none] = prove(tmp_path / "t", Proof("not-null", "v"), scope=Scope(partitions=(("day", "20240101"),)))
    assert none.verdict == "proven" and none.days == ()


def test_a_required_column_needs_no_statistics(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    write(tmp_path / "t" / "a.parquet", pa.table({"id": [1, 2]}, schema=schema), write_statistics=False)
    [r] = prove(tmp_path / "t", Proof("not-null", "id"))
    assert (r.verdict, r.decided_by) == ("proven", "footer")


def test_files_without_statistics_stay_unknown_and_say_which(tmp_path: Path) -> None:
    write(tmp_path / "t" / "with.parquet", pa.table({"v": [1, 2]}))
    write(tmp_path / "t" / "without.parquet", pa.table({"v": [3, None]}), write_statistics=False)
    stamps = pa.array([0, 1], pa.timestamp("ns"))
    write(tmp_path / "t" / "int96.parquet", pa.table({"v": [5, 6], "ts": stamps}),
          use_deprecated_int96_timestamps=True)
    [nulls, ts] = prove(tmp_path / "t", Proof("not-null", "v"), Proof("not-null", "ts"), footer_only=True)
    assert (nulls.verdict, nulls.files_unknown) == ("unknown", ("without.parquet",))
    assert "--footer-only" in nulls.why
    assert ts.verdict == "refuted" and ts.files_absent == ("with.parquet", "without.parquet")
    [no_spark_given] = prove(tmp_path / "t", Proof("not-null", "v"), spark=None)
    assert no_spark_given.verdict == "unknown" and "no Spark" in no_spark_given.why


def test_a_partition_that_missed_the_backfill(tmp_path: Path) -> None:
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        cols: dict[str, Any] = {"id": [1, 2]}
        if day != "2024-01-02":
            cols["region"] = ["eu", "us"]
        write(tmp_path / "t" / f"dt={day}" / "p.parquet", pa.table(cols))
    [r] = prove(tmp_path / "t", Proof("backfilled", "region"))
    assert (r.verdict, r.count, r.partitions, r.files_absent) == (
        "refuted", 2, ("dt=2024-01-02",), ("dt=2024-01-02/p.parquet",))
    [scoped] = prove(tmp_path / "t", Proof("backfilled", "region"), scope=Scope(since="2024-01-03"))
    assert scoped.verdict == "proven"
    [one] = prove(tmp_path / "t", Proof("backfilled", "region"), scope=Scope((("DT", "2024-01-01"),)))
    assert one.verdict == "proven"


def test_backfilled_from_its_source_by_statistics_alone(tmp_path: Path) -> None:
    """Null counts prove a file whose new column has no null, or whose old one has no value; a
    null in the new column beside values in the old one is for the data to pair."""
    write(tmp_path / "t" / "a.parquet", pa.table({"customer": ["a", "b"], "customer_id": ["a", "b"]}))
    write(tmp_path / "t" / "b.parquet", pa.table({"customer": pa.array([None, None], pa.string()),
                                                   "customer_id": pa.array([None, None], pa.string())}))
    [proven] = prove(tmp_path / "t", Proof("backfilled", "customer_id", source="customer"), footer_only=True)
    assert (proven.verdict, proven.decided_by) == ("proven", "footer")
    write(tmp_path / "t" / "c.parquet", pa.table({"customer": ["c", "d"], "customer_id": ["c", None]}))
    [open_] = prove(tmp_path / "t", Proof("backfilled", "customer_id", source="customer"), footer_only=True)
    assert open_.verdict == "unknown" and open_.files_unknown == ("c.parquet",)


@pytest.mark.parametrize(("values", "target", "verdict"), [
    ([-(2**31), 2**31 - 1], "int32", "proven"),
    ([0, 2**31], "int32", "refuted"),
    ([-(2**31) - 1, 0], "int32", "refuted"),
    ([-(2**63), 2**63 - 1], "int64", "proven"),
    ([0, 2**53 + 1], "int64", "proven"),
    ([None, 2**31, None], "int32", "refuted"),  # nulls beside a value: the value is still checked
    ([None, None], "int32", "proven"),  # nulls only: nothing to fit
])
def test_fits_is_exact_at_integer_edges(tmp_path: Path, values: list[int | None], target: str,
                                        verdict: str) -> None:
    write(tmp_path / "t" / "a.parquet", pa.table({"n": pa.array(values, pa.int64())}))
    [r] = prove(tmp_path / "t", Proof("fits", "n", target=target))
    assert (r.verdict, r.decided_by) == (verdict, "footer")


@pytest.mark.parametrize(("top", "target", "verdict"), [
    (10**38 - 1, "decimal(38,2)", "proven"),  # 38 nines: the largest decimal(38,2)
    (10**38 - 1, "decimal(37,2)", "refuted"),
    (10**37 - 1, "decimal(37,2)", "proven"),  # 37 nines: the largest decimal(37,2)
    (10**37, "decimal(37,2)", "refuted"),  # one more
    (1234, "decimal(10,1)", "unknown"),  # 12.34 to a smaller scale: the bounds cannot tell
])
def test_fits_is_exact_at_decimal_38_edges(tmp_path: Path, top: int, target: str, verdict: str) -> None:
    # Built from strings: Decimal arithmetic (even unary minus) rounds to 28 digits.
    values = [Decimal(f"-{top}E-2"), Decimal(f"{top}E-2")]
    write(tmp_path / "t" / "a.parquet", pa.table({"d": pa.array(values, pa.decimal128(38, 2))}))
    [r] = prove(tmp_path / "t", Proof("fits", "d", target=target), footer_only=True)
    assert r.verdict == verdict


def test_unit_drift_from_statistics(tmp_path: Path) -> None:
    days = [(1, 1200), (2, 1500), (3, 1300), (4, 14), (5, 16)]  # cents, then dollars from day 4
    for day, top in days:
        write(tmp_path / "t" / f"dt=2024-01-0{day}" / "p.parquet",
              pa.table({"amount": pa.array([top // 2, top], pa.int64())}))
    write(tmp_path / "steady" / "a.parquet", pa.table({"amount": pa.array([100, 200], pa.int64())}))
    write(tmp_path / "steady" / "b.parquet", pa.table({"amount": pa.array([150, 260], pa.int64())}))
    [drift] = prove(tmp_path / "t", Proof("unit-drift", "amount"))
    assert (drift.verdict, drift.decided_by, drift.partitions, drift.count) == (
        "refuted", "footer", ("dt=2024-01-04",), 2)
    assert "drops" in drift.why
    [steady] = prove(tmp_path / "steady", Proof("unit-drift", "amount"))
    assert steady.verdict == "proven"


# ---------------------------------------------------------------------------------------------
# The data, with Spark and Great Expectations


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Day partitions; `v` written without statistics on day 2 (one null); a dual-write with two
    disagreeing rows; a cents-to-dollars pair; `status` gains a value on day 3; `amount` turns
    from cents to dollars on day 3."""
    root = tmp_path_factory.mktemp("proofs") / "t"
    for day, (nulls, status) in enumerate([(0, "new"), (1, "paid"), (0, "refunded")], start=1):
        rows = 5
        table = pa.table({
            "id": pa.array([day * 10 + i for i in range(rows)], pa.int64()),
            "v": pa.array([None if i < nulls else i for i in range(rows)], pa.int64()),
            "old_amount": pa.array([i * 100 for i in range(rows)], pa.int64()),
            "new_amount": pa.array([i * 100 + (1 if day == 2 and i >= 3 else 0) for i in range(rows)],
                                   pa.int64()),
            "cents": pa.array([i * 100 for i in range(rows)], pa.int64()),
            "dollars": pa.array([i for i in range(rows)], pa.int64()),
            "big": pa.array([2**40 if day == 3 and i == 0 else i for i in range(rows)], pa.int64()),
            "status": [status] * rows,
            "amount": pa.array([(500 + i * 100) if day < 3 else (5 + i) for i in range(rows)], pa.int64()),
        })
        write(root / f"dt=2024-01-0{day}" / "p.parquet", table, write_statistics=day != 2)
    return root


def test_data_decides_what_statistics_cannot(spark: Any, lake: Path) -> None:
    before = digest(lake)
    results = prove(lake, Proof("not-null", "v"), Proof("agree", "old_amount=new_amount"),
                    Proof("agree", "cents = dollars * 100"),
                    Proof("values", "status", allowed=("new", "paid")),
                    Proof("fits", "big", target="int32"), Proof("unit-drift", "amount"),
                    spark=lambda: spark, keys=("id",))
    by = {(r.proof.kind, r.proof.column): r for r in results}
    nulls = by[("not-null", "v")]
    assert (nulls.verdict, nulls.decided_by, nulls.count, nulls.partitions) == (
        "refuted", "data", 1, ("dt=2024-01-02",))
    assert nulls.rows_read == 5 and [s["id"] for s in nulls.sample] == [20]
    pair = by[("agree", "old_amount=new_amount")]
    assert (pair.verdict, pair.count, pair.partitions) == ("refuted", 2, ("dt=2024-01-02",))
    assert sorted(s["id"] for s in pair.sample) == [23, 24] and pair.rows_read == 15
    assert by[("agree", "cents = dollars * 100")].verdict == "proven"
    status = by[("values", "status")]
    assert (status.verdict, status.count, status.partitions) == ("refuted", 5, ("dt=2024-01-03",))
    assert status.sample == (  # the observed set, values outside the allowed set first
        {"value": "refunded", "rows": 5, "first_partition": "dt=2024-01-03", "allowed": False},
        {"value": "new", "rows": 5, "first_partition": "dt=2024-01-01", "allowed": True},
        {"value": "paid", "rows": 5, "first_partition": "dt=2024-01-02", "allowed": True})
    [seen] = prove(lake, Proof("values", "status"), spark=lambda: spark)  # no allowed set: observed only
    assert seen.verdict == "proven" and [v["value"] for v in seen.sample] == ["new", "paid", "refunded"]
    big = by[("fits", "big")]  # statistics refute day 3; day 2 has none, and its data fits
    assert (big.verdict, big.partitions) == ("refuted", ("dt=2024-01-03",))
    drift = by[("unit-drift", "amount")]  # day 2 has no statistics: its magnitude comes from the data
    assert (drift.verdict, drift.decided_by, drift.partitions) == ("refuted", "data", ("dt=2024-01-03",))
    assert drift.sample[0]["ratio"] == pytest.approx(100)  # largest 900 cents, then 9 dollars
    assert digest(lake) == before  # the audited table is unchanged, byte for byte


def test_the_proofs_of_a_table_read_its_data_in_one_pass(spark: Any, lake: Path) -> None:
    """Four proofs the statistics cannot decide cost the Spark jobs one costs: one aggregation
    over the files answers them all, and Great Expectations validates its result."""
    tracker = spark.sparkContext.statusTracker()

    def jobs(*proofs: Proof) -> tuple[int, list[str]]:
        before = set(tracker.getJobIdsForGroup(None))
        results = prove(lake, *proofs, spark=lambda: spark, with_values=False)
        return len(set(tracker.getJobIdsForGroup(None)) - before), [r.verdict for r in results]

    one = jobs(Proof("agree", "cents = dollars * 100"))
    four = jobs(Proof("agree", "cents = dollars * 100"), Proof("fits", "v", target="int32"),
                Proof("values", "status", allowed=("new", "paid", "refunded")), Proof("not-null", "cents"))
    assert one[1] == ["proven"] and four[1] == ["proven"] * 4
    assert four[0] == one[0], (one, four)


def test_no_values_keeps_data_out_of_the_sample(spark: Any, lake: Path) -> None:
    [r] = prove(lake, Proof("not-null", "v"), spark=lambda: spark, keys=("id",), with_values=False)
    assert r.sample and all(set(s) == {"id", "file"} for s in r.sample)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600)


@pytest.mark.spark  # the command starts Spark in its own process for the day without statistics
def test_the_check_command_json_and_exit_codes(lake: Path) -> None:
    proven = run_cli("check", str(lake), "--fits", "dollars:int32", "--format", "json")
    assert proven.returncode == 0, proven.stderr
    doc = json.loads(proven.stdout)
    assert (doc["verdict"], doc["exit_code"], doc["format"]) == ("proven", 0, "parquet")
    assert set(doc["proofs"][0]) == {
        "proof", "column", "verdict", "decided_by", "count", "partitions", "partition_count", "files",
        "files_unknown", "files_absent", "rows_read", "bytes_read", "sample", "why"}
    unknown = run_cli("check", str(lake), "--not-null", "v", "--footer-only", "--format", "json")
    assert unknown.returncode == 3 and json.loads(unknown.stdout)["proofs"][0]["files_unknown"] == [
        "dt=2024-01-02/p.parquet"]
    refuted = run_cli("check", str(lake), "--fits", "big:int32", "--footer-only")  # 2**40 on day 3
    assert refuted.returncode == 1 and "refuted" in refuted.stdout
    for bad in (["--fits", "big"], ["--fits", "big:string"], [], ["--not-null", "v", "--since", "nodate"],
                ["--not-null", "v", "--partition", "dt=2099-01-01"],
                ["--backfilled", "nope"]):  # a column no file has: bad input, never "refuted"
        done = run_cli("check", str(lake), *bad)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (bad, done.stderr)


def test_the_audit_proves_what_the_configuration_asks(tmp_path: Path) -> None:
    from schemaguard.auditing import run_audit
    from schemaguard.config import ConfigError, load_config

    for day in ("2024-01-01", "2024-01-02"):
        cols: dict[str, Any] = {"id": pa.array([1, 2], pa.int64()), "qty": pa.array([1, 2**40], pa.int64())}
        if day == "2024-01-02":
            cols["region"] = ["eu", None]
        write(tmp_path / "t" / f"dt={day}" / "p.parquet", pa.table(cols))
    conf = tmp_path / "schemaguard.toml"
    conf.write_text('[catalog]\nenabled = false\n[[tables]]\nname = "t"\npath = "t"\n'
                    'not_null = ["id", "region"]\nbackfilled = ["region"]\n'
                    'fits = ["qty:int32", "id:int32"]\n')
    run = run_audit(load_config(conf))
    [table] = run.tables
    assert [(p.proof.kind, p.proof.column, p.verdict) for p in table.proofs] == [
        ("not-null", "id", "proven"), ("not-null", "region", "refuted"), ("backfilled", "region", "refuted"),
        ("fits", "qty", "refuted"), ("fits", "id", "proven")]
    codes = sorted(f.code for f in table.findings if f.code in (
        "NULLS_BLOCK_TIGHTENING", "BACKFILL_INCOMPLETE", "VALUE_OUT_OF_RANGE"))
    assert codes == ["BACKFILL_INCOMPLETE", "NULLS_BLOCK_TIGHTENING", "VALUE_OUT_OF_RANGE"]
    conf.write_text(conf.read_text().replace('"qty:int32"', '"qty"'))
    with pytest.raises(ConfigError, match="COL:TYPE"):
        load_config(conf)


def test_delta_log_statistics_decide_where_the_footer_has_none(spark: Any, tmp_path: Path) -> None:
    """Another engine's Delta table: data files written without Parquet statistics, their null
    counts only in the log's `stats` (as the protocol allows). The proof reads them from the log,
    reads no data, and agrees with what delta-spark reads."""
    path = tmp_path / "d"
    (path / "_delta_log").mkdir(parents=True)
    files: dict[str, list[int | None]] = {"a.parquet": [1, 2, None], "b.parquet": [4, 5, 6]}
    schema = {"type": "struct", "fields": [{"name": "v", "type": "long", "nullable": True, "metadata": {}}]}
    actions: list[dict[str, Any]] = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps(schema), "partitionColumns": [], "configuration": {},
                      "createdTime": 1}}]
    for name, values in files.items():
        pq.write_table(pa.table({"v": pa.array(values, pa.int64())}), path / name, write_statistics=False)
        stats = {"numRecords": len(values), "nullCount": {"v": values.count(None)}}
        actions.append({"add": {"path": name, "partitionValues": {}, "size": (path / name).stat().st_size,
                                "modificationTime": 1, "dataChange": True, "stats": json.dumps(stats)}})
    (path / "_delta_log" / f"{0:020d}.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    engine_nulls = spark.read.format("delta").load(str(path)).where("v IS NULL").count()
    [r] = prove(path, Proof("not-null", "v"))
    assert (r.verdict, r.decided_by, r.count, r.files, r.rows_read) == (
        "refuted", "log", engine_nulls, ("a.parquet",), 0)
    [footer] = run_proofs(read(str(path), workers=1), [Proof("not-null", "v")], footer_only=True)
    assert footer.decided_by == "log"  # the log is statistics too: --footer-only uses it


def _ints(values: list[int]) -> pa.Array:
    return pa.array(values, pa.int64())


def _decimals(unscaled: list[int], scale: int) -> pa.Array:
    # From strings: Decimal arithmetic (even unary minus) rounds to 28 digits.
    return pa.array([Decimal(f"{u}E-{scale}") for u in unscaled], pa.decimal128(38, scale))


@pytest.mark.parametrize(("column", "target", "verdict", "count"), [
    (_ints([2**31 - 1, -(2**31)]), "int32", "proven", 0),
    (_ints([2**31, 0, -(2**31) - 1]), "int32", "refuted", 2),
    (_ints([10**18 - 1, -(10**18 - 1)]), "decimal(18,0)", "proven", 0),  # equal to 10**18 as doubles
    (_ints([10**18, 1]), "decimal(18,0)", "refuted", 1),
    (_ints([2**63 - 1, -(2**63)]), "float", "proven", 0),  # every int64 is within float's range
    (_ints([2**63 - 1, -(2**63)]), "decimal(38,0)", "proven", 0),
    (_decimals([10**37 - 1, -(10**37 - 1)], 2), "decimal(37,2)", "proven", 0),
    (_decimals([10**37, 5], 2), "decimal(37,2)", "refuted", 1),
    (_decimals([12300, 12345], 4), "decimal(38,2)", "refuted", 1),  # 1.2345 loses digits, 1.2300 not
    (pa.array([3.4028234663852886e38, -1.0], pa.float64()), "float", "proven", 0),  # FLT_MAX itself
    (pa.array([3.5e38, 1.0], pa.float64()), "float", "refuted", 1),
    (pa.array([1.5, 2.0], pa.float64()), "int32", "refuted", 1),  # 1.5 is no integer
])
def test_fits_on_the_data_is_exact_at_the_edges(spark: Any, tmp_path: Path, column: pa.Array, target: str,
                                               verdict: str, count: int) -> None:
    """Files without statistics: Spark reads the values and the SQL compares them exactly."""
    write(tmp_path / "t" / "a.parquet", pa.table({"x": column}), write_statistics=False)
    [r] = prove(tmp_path / "t", Proof("fits", "x", target=target), spark=lambda: spark)
    assert (r.verdict, r.decided_by, r.count) == (verdict, "data", count)


def test_tables_of_the_spark_catalog(spark: Any, lake: Path) -> None:
    """--allowed-table: a reference table of codes in the catalog; --spark-catalog: the table to
    prove is a catalog table. The commands run in this process, on the tests' session and its
    catalog (a catalog read by a process of its own: test_spark_session.py, test_make_run.py)."""
    spark.sql("CREATE DATABASE IF NOT EXISTS proofs_ref")
    spark.createDataFrame([("new",), ("paid",), ("refunded",)], "code string") \
        .write.mode("overwrite").saveAsTable("proofs_ref.status")
    spark.sql("SELECT 1L AS id, CAST(NULL AS STRING) AS note").write.format("delta") \
        .mode("overwrite").saveAsTable("proofs_ref.notes")
    done = run_here("check", str(lake), "--values", "status", "--allowed-table", "proofs_ref.status",
                    "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["proofs"][0]["verdict"] == "proven"
    # --spark-catalog: a table of the session's catalog (a managed Delta table), read at its location
    done = run_here("check", "proofs_ref.notes", "--spark-catalog", "--not-null", "note", "--format", "json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["format"], doc["proofs"][0]["verdict"], doc["proofs"][0]["count"]) == ("delta", "refuted", 1)


def test_the_data_path_reads_only_the_columns_it_needs(spark: Any, tmp_path: Path) -> None:
    """A file with a column Spark cannot read at all (FLOAT16): a read of the whole file fails,
    the proof's read of its one column does not."""
    table = pa.table({"v": pa.array([1, None, 3], pa.int64()),
                      "half": pa.array([1.0, 2.0, 3.0], pa.float16())})
    write(tmp_path / "t" / "a.parquet", table, write_statistics=False)
    with pytest.raises(Exception, match=r"FLOAT16|Illegal Parquet type|PARQUET_TYPE_ILLEGAL"):
        spark.read.parquet(str(tmp_path / "t")).collect()
    [r] = prove(tmp_path / "t", Proof("not-null", "v"), spark=lambda: spark)
    assert (r.verdict, r.decided_by, r.count) == ("refuted", "data", 1)


def test_offending_files_with_awkward_names_are_named_as_listed(spark: Any, tmp_path: Path) -> None:
    """Spark names a file by a percent-encoded URI (a space is %20): the proof names it as the
    table lists it."""
    nulls = pa.table({"v": pa.array([None], pa.int64())})
    write(tmp_path / "t" / "region=north east" / "part 1.parquet", nulls, write_statistics=False)
    [r] = prove(tmp_path / "t", Proof("not-null", "v"), spark=lambda: spark)
    assert (r.verdict, r.files, r.partitions) == ("refuted", ("region=north east/part 1.parquet",),
                                                  ("region=north east",))
    assert r.sample[0]["file"] == "region=north east/part 1.parquet"
