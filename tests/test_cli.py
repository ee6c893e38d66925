"""The console script as a user runs it: `schemaguard demo`, `scan`, exit codes, errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemaguard.formats.notation import schema_from_notation, type_name
from schemaguard.model import Schema
from tests.helpers import assert_usage_error, run

FINGERPRINT = re.compile(r"[0-9a-f]{16}")


def types_of(schema: Schema) -> dict[str, str]:
    return {f.name: type_name(f.type) for f in schema.fields}  # type: ignore[arg-type]



def test_the_demo_command_writes_the_three_tables_and_the_plan_inputs(spark: Any, tmp_path: Path) -> None:
    done = run("demo", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for name in ("orders", "orders_iceberg", "orders_delta"):
        assert f"demo lake written: {tmp_path / name}" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["orders", "orders_delta", "orders_iceberg", "plan"]
    assert f"a change to plan: {tmp_path / 'plan'}" in done.stdout
    assert (tmp_path / "plan" / "orders_next.json").is_file()


@pytest.fixture(scope="module")
def scan_json(lake: Path) -> dict[str, Any]:
    done = run("scan", str(lake / "orders"), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)  # stdout is the JSON document and nothing else
    return doc


# ---------------------------------------------------------------------------------------------
# scan --format json on the demo lake


def test_scan_json_has_the_documented_keys(scan_json: dict[str, Any], lake: Path) -> None:
    assert {"table", "versions", "unreadable", "ignored", "findings"} <= set(scan_json)
    assert scan_json["table"] == str(lake / "orders")
    for v in scan_json["versions"]:
        assert {"fingerprint", "schema", "files", "partitions", "rows", "first_seen",
                "last_seen"} <= set(v)
    for u in scan_json["unreadable"]:
        assert set(u) >= {"path", "reason"}
    for i in scan_json["ignored"]:
        assert set(i) >= {"path", "why"}
    assert isinstance(scan_json["findings"], list)


def test_scan_finds_the_four_demo_versions_oldest_first(scan_json: dict[str, Any]) -> None:
    versions = scan_json["versions"]
    assert len(versions) == 4
    fingerprints = [v["fingerprint"] for v in versions]
    assert all(FINGERPRINT.fullmatch(fp) for fp in fingerprints)
    assert len(set(fingerprints)) == 4
    schemas = [schema_from_notation(v["schema"]) for v in versions]  # valid notation
    v1, v2, v3, v4 = map(types_of, schemas)

    assert v1 == {"id": "int64", "customer": "string", "quantity": "int32",
                  "amount": "decimal(10,2)", "ts": "timestamp_int96"}
    assert v2 == {**v1, "channel": "string"}  # a column added
    assert v3 == {**v2, "amount": "decimal(12,2)", "ts": "timestamp_us_utc", "amount_cents": "int64"}
    assert v4 == {**v3, "quantity": "int64"}  # a type widened
    assert schemas[1].field_names()[-1] == "channel"
    assert not schemas[0].fields[0].nullable  # id is required

    assert [v["first_seen"] for v in versions] == [
        "2024-01-01", "2024-01-16", "2024-01-31", "2024-02-15"]
    assert [v["last_seen"] for v in versions] == [
        "2024-01-15", "2024-01-30", "2024-02-14", "2024-02-29"]
    assert [v["rows"] for v in versions] == [1500, 1500, 1500, 1500]
    assert [len(v["files"]) for v in versions] == [30, 30, 30, 30]
    assert [len(v["partitions"]) for v in versions] == [15, 15, 15, 15]
    assert versions[0]["partitions"][0] == "dt=2024-01-01"
    assert versions[3]["partitions"][-1] == "dt=2024-02-29"


def test_scan_paths_are_table_relative(scan_json: dict[str, Any], lake: Path) -> None:
    table = lake / "orders"
    files = [f for v in scan_json["versions"] for f in v["files"]]
    paths = files + [u["path"] for u in scan_json["unreadable"]]
    for path in paths:
        assert not Path(path).is_absolute(), path
        assert (table / path).is_file(), path
    assert len(set(paths)) == len(paths)  # no file both read and unreadable
    for v in scan_json["versions"]:
        assert v["files"] == sorted(v["files"])
        assert {f.split("/")[0] for f in v["files"]} == set(v["partitions"])


def test_scan_reports_the_three_unreadable_demo_files(scan_json: dict[str, Any]) -> None:
    reasons = {Path(u["path"]).name: u["reason"] for u in scan_json["unreadable"]}
    assert len(reasons) == 3
    assert "zero-byte" in reasons["part-00099-zero.c000.snappy.parquet"]
    assert "truncated" in reasons["part-00098-truncated.c000.snappy.parquet"]
    assert "not a Parquet file" in reasons["README.txt"]
    codes = [f["code"] for f in scan_json["findings"]]
    assert codes.count("UNREADABLE_FILE") == 3  # one finding per reason
    assert "STALE_CHECKSUM" in codes


def test_scan_reports_what_spark_skips(scan_json: dict[str, Any]) -> None:
    ignored = {i["path"]: i["why"] for i in scan_json["ignored"]}
    assert "_SUCCESS" in ignored
    assert "_temporary/" in ignored
    assert not any(p.startswith("_temporary/") and p != "_temporary/" for p in ignored)
    files = [f for v in scan_json["versions"] for f in v["files"]]
    assert not any(f.startswith("_") or "/." in f or f.startswith(".") for f in files)


# ---------------------------------------------------------------------------------------------
# scan, text output


def test_scan_text_shows_a_sample_of_many_column_changes_and_says_how_many_more(tmp_path: Path) -> None:
    """500 columns turned from int32 to int64: the text's table shows SHOWN_CHANGES of the changes
    and says how many it left out; every finding is still its own line, and the JSON has all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemaguard.report.scan import SHOWN_CHANGES

    table = tmp_path / "t"
    table.mkdir()
    for i, t in enumerate((pa.int32(), pa.int64())):
        pq.write_table(pa.table({f"c{j}": pa.array([1], t) for j in range(500)}), table / f"p{i}.parquet")
    out = run("scan", str(table)).stdout
    assert f"... and {500 - SHOWN_CHANGES:,} more column change(s) between versions" in out
    assert sum(1 for line in out.splitlines() if "v1->v2" in line) == SHOWN_CHANGES
    assert sum(1 for line in out.splitlines() if line.startswith("WARNING LOGICAL_TYPE_DRIFT")) == 500
    doc = json.loads(run("scan", str(table), "--format", "json").stdout)
    assert len(doc["versions"][1]["changes_from_previous"]) == 500


def test_scan_text_shows_the_versions(lake: Path, scan_json: dict[str, Any]) -> None:
    done = run("scan", str(lake / "orders"))  # piped, as in a CI log: not a terminal
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "4 schema version(s)" in out
    assert "partition dt" in out
    for number, v in enumerate(scan_json["versions"], start=1):
        assert re.search(rf"\bv{number}\b", out), number
        assert v["fingerprint"] in out  # not cut off by the table width
        assert v["first_seen"] in out and v["last_seen"] in out
    assert "1,500" in out
    assert "channel" in out and "decimal(12,2)" in out and "timestamp_us_utc" in out
    for u in scan_json["unreadable"]:
        assert Path(u["path"]).name[:20] in out
    assert "Traceback" not in done.stderr


def test_scan_of_a_single_file(lake: Path, scan_json: dict[str, Any]) -> None:
    first = lake / "orders" / scan_json["versions"][3]["files"][0]
    done = run("scan", str(first), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [v["fingerprint"] for v in doc["versions"]] == [scan_json["versions"][3]["fingerprint"]]
    assert doc["versions"][0]["rows"] == 50
    assert doc["unreadable"] == []


# ---------------------------------------------------------------------------------------------
# Exit code 2: bad input or usage, one line, no traceback


def test_a_missing_path_is_exit_2_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-table"
    for fmt in ("text", "json"):
        done = run("scan", str(missing), "--format", fmt)
        assert_usage_error(done, str(missing))
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("schemaguard: error:")
        assert done.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ("scan", "{lake}", "--format", "xml"),
        ("scan", "{lake}", "--no-such-option"),
        ("scan",),
        ("no-such-command",),
        ("scan", "{lake}", "--max-files", "many"),
    ],
    ids=["bad-format", "unknown-option", "missing-argument", "unknown-command", "bad-int"],
)
def test_bad_usage_is_exit_2(lake: Path, args: tuple[str, ...]) -> None:
    done = run(*(a.format(lake=lake / "orders") for a in args))
    assert_usage_error(done)
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()  # one line, naming the command and where help is
    assert line.startswith(f"schemaguard: error: schemaguard{' ' + args[0] if args[0] == 'scan' else ''}: ")
    assert line.endswith("--help')")


def test_demo_into_an_existing_lake_is_exit_2_and_writes_nothing(lake: Path) -> None:
    before = sorted((p, p.stat().st_size, p.stat().st_mtime_ns) for p in lake.rglob("*"))
    done = run("demo", str(lake))
    assert_usage_error(done, "already exists")
    assert len(done.stderr.strip().splitlines()) == 1
    after = sorted((p, p.stat().st_size, p.stat().st_mtime_ns) for p in lake.rglob("*"))
    assert after == before


def test_help_is_exit_0() -> None:
    done = run("--help")
    assert done.returncode == 0
    assert "scan" in done.stdout and "demo" in done.stdout


# ---------------------------------------------------------------------------------------------
# scan starts fast: no Spark, no Great Expectations


IMPORTS_PROBE = """
import contextlib, io, json, sys
sys.argv = ["schemaguard", "scan", sys.argv[1], "--format", "json"]
from schemaguard.cli import main
out = io.StringIO()
code = 0
try:
    with contextlib.redirect_stdout(out):
        main()
except SystemExit as e:
    code = e.code or 0
heavy = sorted({m.split(".")[0] for m in sys.modules}
               & {"pyspark", "py4j", "great_expectations", "delta", "pyarrow", "numpy"})
versions = len(json.loads(out.getvalue())["versions"])
print(json.dumps({"code": code, "heavy": heavy, "versions": versions, "rich": "rich" in sys.modules}))
"""


def test_scan_does_not_import_spark_or_great_expectations(lake: Path) -> None:
    done = subprocess.run([sys.executable, "-c", IMPORTS_PROBE, str(lake / "orders")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    # nor pyarrow on local disk (the footers are decoded here: 0.1 s of a process's start), nor,
    # for a program's JSON, the terminal's renderer (about 30 ms)
    assert json.loads(done.stdout) == {"code": 0, "heavy": [], "versions": 4, "rich": False}


def test_scan_import_time_names_no_spark_module(lake: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c",
         "import sys; from schemaguard.cli import main; "
         "sys.argv = ['schemaguard', 'scan', sys.argv[1], '--format', 'json']; main()",
         str(lake / "orders")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "schemaguard.lake.scan" in imported  # the probe really ran the scan
    assert not {m for m in imported if m.split(".")[0] in ("pyspark", "great_expectations")}


def test_help_and_a_bad_option_load_no_rule_or_model_module() -> None:
    """Start-up counts: the command line's names come from schemaguard.names."""
    probe = ("import sys; from schemaguard.cli import main; sys.argv = ['schemaguard', '--help']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith(('schemaguard.rules', 'schemaguard.base', "
             "'schemaguard.model', 'schemaguard.formats', 'pyarrow'))), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert "compare" in done.stdout


def test_the_names_the_command_line_offers_are_the_registrys() -> None:
    from schemaguard.names import MERGE_PROFILE_NAMES, PROFILE_NAMES
    from schemaguard.rules.profiles import MERGE_PROFILES, PROFILES

    assert (tuple(PROFILES), tuple(MERGE_PROFILES)) == (PROFILE_NAMES, MERGE_PROFILE_NAMES)
