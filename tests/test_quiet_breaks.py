"""Loud, quiet, fine as a user meets them (issue 13): every quiet break the issue names fails
`compare`, `evolve`, `gate`, `plan` and the audit by default under its own code, and passes as a
warning with `--allow-quiet` (or `allow_quiet = true` in the configuration)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers import run


def schema_file(tmp_path: Path, name: str, *fields: tuple[str, Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"fields": [{"name": n, "type": t} for n, t in fields]}))
    return str(path)


def compare(writer: str, reader: str, *options: str) -> tuple[int, list[dict[str, Any]]]:
    done = run("compare", "--writer", writer, "--reader", reader, *options, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)["problems"]


A, B, C = ("a", "int32"), ("b", "int32"), ("c", "int32")
XY = [{"name": "x", "type": "int64"}, {"name": "y", "type": "int64"}]

# (what the issue names, writer fields, reader fields, profile options, the quiet code)
QUIET: list[tuple[str, list[tuple[str, Any]], list[tuple[str, Any]], list[str], str]] = [
    ("two int32 columns swapped", [("a", "int32"), ("b", "int32")], [("b", "int32"), ("a", "int32")],
     ["--profile", "positional", "--identity", "position"], "POSITION_NAME_MISMATCH"),
    ("a drop in the middle", [A, B, C], [A, C], ["--profile", "positional"], "POSITION_NAME_MISMATCH"),
    ("an insert in the middle", [A, C], [A, B, C], ["--profile", "positional"], "POSITION_NAME_MISMATCH"),
    ("a nested swap of same-typed fields", [("s", {"struct": XY})], [("s", {"struct": XY[::-1]})],
     ["--profile", "positional"], "POSITION_NAME_MISMATCH"),
    ("a string read as binary", [("s", "string")], [("s", "binary")], ["--profile", "spark-read"],
     "VALUES_CHANGE_MEANING"),
    ("a UTC instant read as local time", [("t", "timestamp_us_utc")], [("t", "timestamp_us_local")],
     ["--profile", "spark-read"], "VALUES_CHANGE_MEANING"),
    ("an Avro decimal read with another scale", [("d", "decimal(9,2)")], [("d", "decimal(9,3)")],
     ["--profile", "avro"], "VALUES_CHANGE_MEANING"),
]


@pytest.mark.parametrize(("case", "writer", "reader", "options", "code"), QUIET, ids=[q[0] for q in QUIET])
def test_a_quiet_break_fails_unless_allowed(tmp_path: Path, case: str, writer: list[tuple[str, Any]],
                                            reader: list[tuple[str, Any]], options: list[str],
                                            code: str) -> None:
    w, r = schema_file(tmp_path, "w", *writer), schema_file(tmp_path, "r", *reader)
    status, problems = compare(w, r, *options)
    quiet = [p for p in problems if p["code"] == code]
    assert status == 1 and quiet and all(p["break"] == "quiet" and p["severity"] == "error" for p in quiet)
    status, problems = compare(w, r, *options, "--allow-quiet")
    assert status == 0 and all(p["severity"] == "warning" for p in problems if p["code"] == code)


def test_a_positional_reader_on_columns_of_another_type_is_loud(tmp_path: Path) -> None:
    w = schema_file(tmp_path, "w", ("a", "int32"), ("b", "string"))
    r = schema_file(tmp_path, "r", ("b", "string"), ("a", "int32"))
    status, problems = compare(w, r, "--profile", "positional", "--allow-quiet")
    assert status == 1 and {p["break"] for p in problems if p["severity"] == "error"} == {"loud"}


def test_a_required_column_past_the_data_is_loud(tmp_path: Path) -> None:
    w = schema_file(tmp_path, "w", ("a", "int32"))
    r = tmp_path / "r.json"
    r.write_text(json.dumps({"fields": [{"name": "a", "type": "int32"},
                                        {"name": "b", "type": "int32", "nullable": False}]}))
    status, problems = compare(w, str(r), "--profile", "positional")
    assert status == 1 and [(p["code"], p["break"]) for p in problems] == [("READER_FIELD_MISSING", "loud")]


def test_evolve_fails_on_a_quiet_break_and_passes_with_allow_quiet(tmp_path: Path) -> None:
    v1 = schema_file(tmp_path, "v1", ("t", "timestamp_us_utc"))
    v2 = schema_file(tmp_path, "v2", ("t", "timestamp_us_local"))
    assert run("evolve", v1, v2, "--mode", "BACKWARD", "--profile", "spark-read").returncode == 1
    allowed = run("evolve", v1, v2, "--mode", "BACKWARD", "--profile", "spark-read", "--allow-quiet")
    assert allowed.returncode == 0


def relabelled_table(root: Path) -> Path:
    """Two days of one table: an instant, then a local wall time under the same name."""
    t = root / "events"
    for day, tz in (("2024-01-01", "UTC"), ("2024-01-02", None)):
        (t / f"dt={day}").mkdir(parents=True)
        ts = pa.table({"ts": pa.array([0], pa.timestamp("us", tz))})
        pq.write_table(ts, t / f"dt={day}" / "part-0.parquet")
    return t


def test_the_audit_names_a_quiet_break_with_its_own_code(tmp_path: Path) -> None:
    table = relabelled_table(tmp_path)
    conf = tmp_path / "sg.toml"
    base = f'[audit]\nreport_dir = "{tmp_path / "reports"}"\nformats = ["json"]\n[catalog]\nenabled = false\n'
    conf.write_text(base + f'[[tables]]\nname = "events"\npath = "{table}"\n')
    done = run("audit", "--conf", str(conf), "--format", "json")
    codes = {f["code"]: f["severity"] for t in json.loads(done.stdout)["tables"] for f in t["findings"]}
    assert done.returncode == 1 and codes.get("VERSION_QUIET_BREAK") == "error", codes
    for allowed in (["--allow-quiet"], []):
        if not allowed:  # the configuration key does the same
            conf.write_text(base + f'[options]\nallow_quiet = true\n[[tables]]\nname = "events"\n'
                                   f'path = "{table}"\n')
        done = run("audit", "--conf", str(conf), "--format", "json", *allowed)
        codes = {f["code"]: f["severity"] for t in json.loads(done.stdout)["tables"] for f in t["findings"]}
        assert "VERSION_QUIET_BREAK" not in codes, codes
        assert codes.get("VERSION_READ_CHANGES_MEANING") == "warning", codes
