"""`schemaguard compare`, `merge` and `evolve` as a user runs them: verdicts, exit codes, JSON keys,
one-line errors, and no Spark on the way.

The evolve cases are the Confluent facts of docs/reference/compat-rules.md §2
(AvroCompatibilityTest): s1={f1}, s2={f1, f2 default "foo"}, s3={f1, f2 no default}.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers import assert_usage_error, run

F1 = {"name": "f1", "type": "string"}
F2_DEFAULT = {"name": "f2", "type": "string", "default": "foo"}
F2 = {"name": "f2", "type": "string"}
CONFLUENT = {"s1": [F1], "s2": [F1, F2_DEFAULT], "s3": [F1, F2]}

PROBLEM_KEYS = {"path", "code", "message", "rule", "rule_text", "rule_source", "severity", "writer"}


def write_json(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def notation(*fields: tuple[str, Any]) -> dict[str, Any]:
    return {"fields": [{"name": n, "type": t, "nullable": True} for n, t in fields]}


def write_confluent(directory: Path, kind: str) -> dict[str, str]:
    """s1, s2, s3 as Avro .avsc files, or as notation files (non-null strings, as Avro's are)."""
    paths = {}
    for label, fields in CONFLUENT.items():
        if kind == "avsc":
            doc: dict[str, Any] = {"type": "record", "name": "myrecord", "fields": fields}
        else:
            doc = {"fields": [{**f, "nullable": False} for f in fields]}
        paths[label] = write_json(directory / f"{label}.{'avsc' if kind == 'avsc' else 'json'}", doc)
    return paths


@pytest.fixture(params=["avsc", "notation"])
def confluent(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The verdicts must not depend on how the schemas are written down."""
    return write_confluent(tmp_path, request.param)


@pytest.fixture
def avsc(tmp_path: Path) -> dict[str, str]:
    return write_confluent(tmp_path, "avsc")


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    done = run(*args, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)  # stdout is the document and nothing else


# ---------------------------------------------------------------------------------------------
# evolve: the registry's modes (docs/reference/compat-rules.md §2)


@pytest.mark.parametrize(
    ("mode", "code", "pairs"),
    [
        ("BACKWARD", 0, []),  # only s2 is checked: s3 reads s2 (f2 is in the data)
        ("BACKWARD_TRANSITIVE", 1, [(1, 3)]),  # s3 cannot read s1: f2 has no default
        ("FULL", 0, []),
        ("FULL_TRANSITIVE", 1, [(1, 3)]),
        ("backward_transitive", 1, [(1, 3)]),  # modes in any case
        ("NONE", 0, []),
    ],
)
def test_evolve_s3_after_s1_s2(confluent: dict[str, str], mode: str, code: int,
                               pairs: list[tuple[int, int]]) -> None:
    returncode, doc = run_json("evolve", confluent["s1"], confluent["s2"], confluent["s3"],
                               "--mode", mode, "--profile", "avro")
    assert returncode == code
    assert doc["compatible"] is (code == 0)
    assert {"compatible", "failed", "mode", "profile", "versions"} <= set(doc)
    assert doc["mode"] == mode.upper() and doc["profile"] == "avro"
    assert doc["versions"] == [confluent["s1"], confluent["s2"], confluent["s3"]]
    assert [(f["writer_version"], f["reader_version"]) for f in doc["failed"]] == pairs
    for failed in doc["failed"]:
        [problem] = failed["problems"]
        assert set(problem) >= PROBLEM_KEYS
        assert (problem["path"], problem["rule"]) == ("f2", "avro.missing-default")
        assert problem["severity"] == "error"
        assert problem["writer"] == confluent["s1"]


def test_evolve_forward_transitive_rejects_s1_after_s3_s2(confluent: dict[str, str]) -> None:
    returncode, doc = run_json("evolve", confluent["s3"], confluent["s2"], confluent["s1"],
                               "--mode", "FORWARD_TRANSITIVE", "--profile", "avro")
    assert returncode == 1
    assert [(f["writer_version"], f["reader_version"]) for f in doc["failed"]] == [(3, 1)]


def test_evolve_text_names_the_failing_pair(avsc: dict[str, str]) -> None:
    done = run("evolve", avsc["s1"], avsc["s2"], avsc["s3"],
               "--mode", "BACKWARD_TRANSITIVE", "--profile", "avro")
    assert done.returncode == 1, done.stderr
    assert "v1 -> v3 (R=v3 reads W=v1)" in done.stdout
    [line] = [line for line in done.stdout.splitlines() if line.strip().startswith("ERROR")]
    assert "f2" in line and "avro.missing-default" in line and "docs/reference/compat-rules.md §1" in line
    assert done.stdout.splitlines()[-1].startswith("NOT compatible")


# ---------------------------------------------------------------------------------------------
# compare


@pytest.mark.parametrize(("reader", "code"), [("s2", 0), ("s3", 1)])
def test_compare_exit_codes_and_json_keys(confluent: dict[str, str], reader: str, code: int) -> None:
    returncode, doc = run_json("compare", "--writer", confluent["s1"], "--reader", confluent[reader],
                               "--profile", "avro")
    assert returncode == code
    assert doc["compatible"] is (code == 0)
    assert {"compatible", "problems", "profile", "options", "writer_versions", "reader"} <= set(doc)
    assert doc["writer_versions"] == [confluent["s1"]] and doc["reader"] == confluent[reader]
    assert all(set(p) >= PROBLEM_KEYS for p in doc["problems"])
    assert [(p["path"], p["rule"]) for p in doc["problems"]] == ([] if code == 0 else
                                                                  [("f2", "avro.missing-default")])


def test_compare_text_is_one_line_per_problem_and_a_verdict(avsc: dict[str, str]) -> None:
    done = run("compare", "--writer", avsc["s1"], "--reader", avsc["s3"], "--profile", "avro")
    assert done.returncode == 1
    problem, verdict = done.stdout.strip().splitlines()
    assert problem.startswith("ERROR") and "f2" in problem and "[rule avro.missing-default" in problem
    assert verdict.startswith("NOT compatible")


@pytest.mark.parametrize(("flags", "code", "rule"), [
    ((), 1, "type-mismatch"),  # the vectorized reader refuses the narrower decimal
    (("--no-vectorized-reader",), 1, "spark-read.rows.decimal-overflow"),  # the row reader reads NULLs
    (("--no-vectorized-reader", "--allow-quiet"), 0, "spark-read.rows.decimal-overflow"),
])
def test_compare_with_the_row_reader(tmp_path: Path, flags: tuple[str, ...], code: int, rule: str) -> None:
    writer = write_json(tmp_path / "w.json", notation(("amount", "decimal(12,2)")))
    reader = write_json(tmp_path / "r.json", notation(("amount", "decimal(10,2)")))
    returncode, doc = run_json("compare", "--writer", writer, "--reader", reader, "--profile", "spark-read",
                               *flags)
    assert returncode == code
    assert doc["options"]["vectorized_reader"] is ("--no-vectorized-reader" not in flags)
    assert [(p["path"], p["rule"]) for p in doc["problems"]] == [("amount", rule)]


@pytest.mark.parametrize(("table", "source", "flags", "code", "rules"), [
    ("int32", "int64", (), 1, ["delta-merge-into.overflow"]),  # int32 stays: a value that does not fit fails
    ("int32", "int64", ("--type-widening",), 0, []),  # the table widens to int64
    ("int32", "int16", (), 0, ["delta-merge-into.exact"]),
    ("string", "int32", (), 1, ["delta-merge-into.as-text"]),  # a quiet break: the numbers' text
    ("string", "int32", ("--allow-quiet",), 0, ["delta-merge-into.as-text"]),
    ("boolean", "int32", (), 1, ["delta-merge-into.no-cast"]),
])
def test_compare_with_merge_into(tmp_path: Path, table: str, source: str, flags: tuple[str, ...], code: int,
                                 rules: list[str]) -> None:
    writer = write_json(tmp_path / "source.json", notation(("qty", source)))
    reader = write_json(tmp_path / "table.json", notation(("qty", table)))
    returncode, doc = run_json("compare", "--writer", writer, "--reader", reader,
                               "--profile", "delta-merge-into", *flags)
    assert returncode == code and doc["profile"] == "delta-merge-into"
    assert [p["rule"] for p in doc["problems"]] == rules


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A Parquet table whose `amount` widens from decimal(10,2) to decimal(12,2) on its second day."""
    root = tmp_path / "orders"
    for day, precision in (("2024-01-01", 10), ("2024-01-02", 12)):
        (root / f"dt={day}").mkdir(parents=True)
        data = pa.table({"id": pa.array([1], pa.int64()),
                         "amount": pa.array([None], pa.decimal128(precision, 2))})
        pq.write_table(data, root / f"dt={day}" / "part-0.parquet")
    return root


def test_compare_checks_every_writer_version_against_the_newest_reader(table: Path, tmp_path: Path) -> None:
    returncode, doc = run_json("compare", "--writer", str(table), "--reader", str(table),
                               "--profile", "spark-read")
    assert returncode == 0, doc
    assert doc["writer_versions"] == [f"{table}@v1", f"{table}@v2"]
    assert doc["reader"] == f"{table}@v2"
    assert any("newest of 2 versions" in note for note in doc["notes"])
    assert all(p["severity"] != "error" for p in doc["problems"])  # a widening is at most info
    text = run("compare", "--writer", str(table), "--reader", str(table), "--profile", "spark-read")
    assert text.returncode == 0 and text.stdout.splitlines()[-1].startswith("compatible")

    old_reader = write_json(tmp_path / "old.json", notation(("id", "int64"), ("amount", "decimal(10,2)")))
    returncode, doc = run_json("compare", "--writer", str(table), "--reader", old_reader,
                               "--profile", "spark-read")
    assert returncode == 1
    assert [(p["writer"], p["path"], p["severity"]) for p in doc["problems"]] == [
        (f"{table}@v2", "amount", "error")]


def test_evolve_expands_a_single_table_into_its_versions(table: Path) -> None:
    returncode, doc = run_json("evolve", str(table), "--mode", "FORWARD", "--profile", "spark-read")
    assert returncode == 1  # the old reader (decimal(10,2)) cannot read the new data (12,2)
    assert doc["versions"] == [f"{table}@v1", f"{table}@v2"]
    assert [(f["writer_version"], f["reader_version"]) for f in doc["failed"]] == [(2, 1)]
    returncode, _ = run_json("evolve", str(table), "--mode", "BACKWARD", "--profile", "spark-read")
    assert returncode == 0


# ---------------------------------------------------------------------------------------------
# merge


def test_merge_int32_with_int64_is_a_conflict_at_the_column(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", notation(("id", "int64"), ("qty", "int32")))
    b = write_json(tmp_path / "b.json", notation(("id", "int64"), ("qty", "int64")))
    returncode, doc = run_json("merge", a, b, "--profile", "spark-merge")
    assert returncode == 1
    assert doc["ok"] is False and doc["merged"] is None
    [conflict] = doc["conflicts"]
    assert {"path", "left", "right", "message", "rule"} <= set(conflict)
    assert (conflict["path"], conflict["left"], conflict["right"]) == ("qty", "int32", "int64")
    assert conflict["rule"] == "spark-merge.equal" and conflict["input"] == b
    text = run("merge", a, b, "--profile", "spark-merge")
    assert text.returncode == 1
    assert text.stdout.startswith("CONFLICT qty") and "merge fails" in text.stdout
    # Of three inputs, the conflict names the one that brought it.
    c = write_json(tmp_path / "c.json", notation(("id", "int64"), ("note", "string")))
    returncode, doc = run_json("merge", a, c, b, "--profile", "spark-merge")
    assert returncode == 1 and [x["input"] for x in doc["conflicts"]] == [b]


def test_merge_decimals_of_one_scale_take_the_larger_precision(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", notation(("amount", "decimal(10,2)")))
    b = write_json(tmp_path / "b.json", notation(("amount", "decimal(12,2)"), ("note", "string")))
    returncode, doc = run_json("merge", a, b, "--profile", "spark-merge")
    assert returncode == 0
    assert doc["ok"] is True and doc["conflicts"] == []
    assert [(f["name"], f["type"]) for f in doc["merged"]["fields"]] == [
        ("amount", "decimal(12,2)"), ("note", "string")]
    text = run("merge", a, b, "--profile", "spark-merge")
    assert text.returncode == 0
    assert "decimal(12,2)" in text.stdout and "merge succeeds" in text.stdout


# ---------------------------------------------------------------------------------------------
# Exit code 2: bad input, one line naming the file, no traceback


BAD_FILES = {
    "truncated.json": ('{"fields": [', "not JSON"),
    "badtype.json": ('{"fields": [{"name": "x", "type": "int33"}]}', "int33"),
    "other.json": ('{"hello": 1}', "no schema"),
    "missing.avsc": (None, "no such file"),
}


@pytest.mark.parametrize(
    ("command", "name"),
    [("compare", name) for name in BAD_FILES] + [("merge", "truncated.json"), ("evolve", "badtype.json")],
)
def test_a_bad_schema_file_is_exit_2_naming_it(tmp_path: Path, command: str, name: str) -> None:
    content, problem = BAD_FILES[name]
    bad = tmp_path / name
    if content is not None:
        bad.write_text(content)
    good = write_json(tmp_path / "good.json", notation(("x", "int32")))
    args = {
        "compare": ("compare", "--writer", good, "--reader", str(bad), "--profile", "spark-read"),
        "merge": ("merge", good, str(bad), "--profile", "spark-merge"),
        "evolve": ("evolve", str(bad), good, "--mode", "BACKWARD", "--profile", "avro"),
    }[command]
    done = run(*args)
    assert_usage_error(done, name, problem)
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("compare", "--writer", "{s1}", "--reader", "{s2}", "--profile", "no-such"), "profile 'no-such'"),
        (("evolve", "{s1}", "{s2}", "--mode", "BACKWARD", "--profile", "no-such"), "profile 'no-such'"),
        (("merge", "{s1}", "{s2}", "--profile", "avro"), "spark-merge, delta-merge"),
        (("evolve", "{s1}", "{s2}", "--mode", "SIDEWAYS", "--profile", "avro"), "mode 'SIDEWAYS'"),
        (("compare", "--writer", "{s1}", "--reader", "{s2}", "--profile", "avro", "--identity", "guess"),
         "identity 'guess'"),
        (("compare", "--writer", "{s1}", "--reader", "{s2}", "--profile", "iceberg",
          "--iceberg-version", "4"), "iceberg_version '4'"),
        (("evolve", "{s1}", "--mode", "BACKWARD", "--profile", "avro"), "at least 2 schemas"),
    ],
    ids=["compare-profile", "evolve-profile", "merge-read-profile", "mode", "identity", "iceberg",
         "one-version"],
)
def test_bad_choices_are_exit_2_in_one_line(avsc: dict[str, str], args: tuple[str, ...],
                                            fragment: str) -> None:
    done = run(*(a.format(**avsc) for a in args))
    assert_usage_error(done, fragment)
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""


def test_compare_with_a_merge_profile_asks_whether_the_merge_succeeds(avsc: dict[str, str]) -> None:
    done = run("compare", "--writer", avsc["s1"], "--reader", avsc["s3"], "--profile", "spark-merge")
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------------------------------------
# No Spark on these commands: they start fast and run where no JVM is


IMPORTS_PROBE = """
import contextlib, io, json, sys
sys.argv = ["schemaguard", *sys.argv[1:], "--format", "json"]
from schemaguard.cli import main
out = io.StringIO()
code = 0
try:
    with contextlib.redirect_stdout(out):
        main()
except SystemExit as e:
    code = e.code or 0
heavy = sorted({m.split(".")[0] for m in sys.modules}
               & {"pyspark", "py4j", "great_expectations", "delta"})
print(json.dumps({"code": code, "heavy": heavy, "keys": sorted(json.loads(out.getvalue()))}))
"""


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (("compare", "--writer", "{s1}", "--reader", "{s3}", "--profile", "avro"), "problems"),
        (("merge", "{s1}", "{s2}", "--profile", "delta-merge"), "merged"),
        (("evolve", "{s1}", "{s2}", "{s3}", "--mode", "FULL", "--profile", "avro"), "failed"),
    ],
    ids=["compare", "merge", "evolve"],
)
def test_rule_commands_do_not_import_spark(avsc: dict[str, str], args: tuple[str, ...], key: str) -> None:
    done = subprocess.run([sys.executable, "-c", IMPORTS_PROBE, *(a.format(**avsc) for a in args)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["heavy"] == [] and key in result["keys"], result
