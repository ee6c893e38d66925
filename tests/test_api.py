"""The Python API (`import schemaguard as sg`): every public function, the same results as its
command, typed errors, results usable in place, and the caller's own SparkSession used as it is."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import schemaguard as sg
from tests.helpers import run, run_here

ROOT = Path(__file__).resolve().parents[1]



def test_the_public_names_are_exactly_those_the_docs_document() -> None:
    page = (ROOT / "docs" / "python.md").read_text()
    section = page[page.index("<!-- api-names -->"):page.index("<!-- /api-names -->")]
    documented = set(re.findall(r"`sg\.(\w+)", section))
    assert documented == set(sg.__all__)
    for name in sg.__all__:
        assert getattr(sg, name) is not None
    with pytest.raises(AttributeError):
        sg.not_a_name  # noqa: B018


def test_reader_options_are_one_options_object_or_the_keywords_never_both(tmp_path: Path) -> None:
    """`options=` gives what the keywords give, each field checked the same way, and the two
    together are refused: a call never half-ignores what it was told."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"fields": [{"name": "a", "type": "int32"}]}))
    new.write_text(json.dumps({"fields": [{"name": "a", "type": "int64"}]}))
    by_keywords = sg.compare(str(old), str(new), profile="delta-read", type_widening=True)
    by_options = sg.compare(str(old), str(new), profile="delta-read", options=sg.Options(type_widening=True))
    assert by_options.to_dict() == by_keywords.to_dict() and by_options.ok
    assert not sg.compare(str(old), str(new), profile="delta-read", options=sg.Options()).ok
    assert sg.evolve(str(old), str(new), mode="BACKWARD", profile="delta-read",
                     options=sg.Options(type_widening=True)).ok
    assert sg.merge(str(old), str(new), profile="delta-merge", options=sg.Options(type_widening=True)).ok
    with pytest.raises(sg.InvalidInput, match=r"compare: give the reader options as options= or as "
                                              r"keywords \(type_widening\), not both"):
        sg.compare(str(old), str(new), profile="delta-read", type_widening=True, options=sg.Options())
    with pytest.raises(sg.InvalidInput, match="column_mapping 'both' is not one of none, name, id"):
        sg.compare(str(old), str(new), profile="delta-read",
                   options=sg.Options(column_mapping="both"))  # type: ignore[arg-type]
    with pytest.raises(sg.InvalidInput, match=r"plan: options is a schemaguard\.Options, not dict"):
        sg.plan(str(old), str(new), options={"type_widening": True})  # type: ignore[arg-type]


def test_scan_imports_neither_spark_nor_great_expectations(lake: Path) -> None:
    probe = ("import sys, schemaguard as sg; r = sg.scan(sys.argv[1]); print(r.ok, len(r.versions)); "
             "print(sorted({m.split('.')[0] for m in sys.modules}\n"
             "             & {'pyspark', 'py4j', 'great_expectations'}))")
    done = subprocess.run([sys.executable, "-c", probe, str(lake / "orders")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True 4", "[]"]


def test_scan_is_the_command_and_its_result_is_usable_in_place(lake: Path) -> None:
    result = sg.scan(str(lake / "orders"))
    command = json.loads(run("scan", str(lake / "orders"), "--format", "json").stdout)
    assert result.to_dict() == command
    files = command["counts"]["files"]
    assert (result.ok, result.exit_code, len(result.versions), len(result.files)) == (True, 0, 4, files)
    assert [f.code for f in result.findings] == [f["code"] for f in command["findings"]]
    assert repr(result).startswith("<ScanResult ok: ") and "\n" not in repr(result)
    frame = result.to_pandas()
    assert list(frame["code"]) == [f["code"] for f in command["findings"]]
    assert "<h3>schemaguard scan: " in result._repr_html_()
    result.raise_for_status()  # a scan reports; it does not fail


def test_schemas_given_as_objects(tmp_path: Path) -> None:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    old = StructType([StructField("id", LongType(), False), StructField("name", StringType())])
    new = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                     pa.field("extra", pa.int32())])
    assert sg.compare(old, new, profile="spark-read").ok
    moved = sg.compare(new, pa.schema([pa.field("id", pa.int32())]), profile="spark-read")
    assert not moved.ok and moved.exit_code == 1
    assert [p["path"] for p in moved.rows()] == ["id"]
    said = moved.to_dict()  # two schema objects: each side named for its role
    assert (said["writer_versions"], said["reader"]) == (["writer #1"], "reader #1")
    with pytest.raises(sg.ChecksFailed, match=r"schemaguard compare failed \(exit 1\): id: "):
        moved.raise_for_status()
    merged = sg.merge(old, new, profile="spark-merge")
    assert merged.ok and [f["name"] for f in merged.to_dict()["merged"]["fields"]] == ["id", "name", "extra"]
    assert sg.evolve(old, new, mode="BACKWARD", profile="spark-read").ok


def test_bad_input_raises_the_commands_one_line(lake: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere")
    with pytest.raises(sg.InvalidInput) as caught:
        sg.scan(missing)
    said = run("scan", missing)
    assert said.returncode == 2 and said.stderr.strip() == f"schemaguard: error: {caught.value}"
    with pytest.raises(sg.InvalidInput, match=r"^profile 'nope' is not one of"):
        sg.compare(str(lake / "orders"), str(lake / "orders"), profile="nope")
    with pytest.raises(sg.InvalidInput, match="check: name at least one proof"):
        sg.check(str(lake / "orders"))
    assert issubclass(sg.InvalidInput, sg.SchemaGuardError)
    assert issubclass(sg.ChecksFailed, sg.SchemaGuardError)


# ---------------------------------------------------------------------------------------------
# On the caller's SparkSession (the tests' session: its own warehouse, catalog and app name)


def settings(spark: Any) -> tuple[dict[str, str], dict[str, str]]:
    return dict(spark.sparkContext.getConf().getAll()), dict(spark.conf.getAll)


def test_check_plan_and_audit_on_the_callers_session(spark: Any, lake: Path, tmp_path: Path) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS api")
    spark.sql("DROP TABLE IF EXISTS api.parcels")
    spark.sql("CREATE TABLE api.parcels (id BIGINT, weight DOUBLE) USING delta")
    spark.sql("INSERT INTO api.parcels VALUES (1, 1.5)")
    # The test's own writes first (a Delta commit records its version in the session's conf), and
    # Spark's own first catalog use (it qualifies spark.sql.warehouse.dir): then the snapshot.
    before = settings(spark)
    assert spark.sparkContext.appName == "schemaguard-tests"
    orders = str(lake / "orders")

    checked = sg.check(orders, not_null=["id"], agree=["amount_cents = amount * 100"], spark=spark,
                       since="2024-01-31")
    command = json.loads(run_here("check", orders, "--not-null", "id", "--agree",
                                  "amount_cents = amount * 100", "--since", "2024-01-31", "--format",
                                  "json").stdout)
    assert checked.to_dict() == command
    assert checked.exit_code == command["exit_code"] == 1  # the cents were dropped on one day
    assert [r.proof.kind for r in checked.proofs] == ["not-null", "agree"]
    frame = checked.to_spark(spark)
    assert sorted(r["verdict"] for r in frame.collect()) == ["proven", "refuted"]
    with pytest.raises(sg.ChecksFailed, match="agree amount_cents = amount \\* 100: refuted"):
        checked.raise_for_status()

    rename = "ALTER TABLE api.parcels RENAME COLUMN weight TO weight_kg"
    planned = sg.plan(table="api.parcels", spark_catalog=True, ddl=rename, spark=spark)
    same = json.loads(run_here("plan", "--table", "api.parcels", "--spark-catalog", "--ddl", rename,
                               "--format", "json").stdout)
    assert planned.to_dict() == same
    assert planned.exit_code == 1 and planned.steps[0].kind == "expand"
    assert planned._repr_html_().startswith('<div class="sg-report">')  # a fragment: no page of its own

    conf = tmp_path / "audit.toml"
    conf.write_text(f'[audit]\nreport_dir = "{tmp_path / "reports"}"\n[catalog]\ndatabase = "api_reports"\n'
                    f'[[tables]]\nname = "orders"\npath = "{orders}"\n')
    audited = sg.audit(conf, spark=spark, run_id="api-run-1")
    assert not audited.ok and audited.exit_code == 1  # the demo lake fails its audit
    with pytest.raises(sg.ChecksFailed, match=r"schemaguard audit failed \(exit 1\): orders: "):
        audited.raise_for_status()
    written = spark.sql("SELECT run_id, exit_code FROM api_reports.runs").collect()
    assert [(r["run_id"], r["exit_code"]) for r in written] == [("api-run-1", 1)]  # in this session's catalog
    findings, proofs = audited.to_spark(spark), audited.to_pandas("proofs")
    assert findings.count() == len(audited.findings) and proofs.empty  # the configuration declares no proof
    assert set(findings.columns) == set(spark.table("api_reports.findings").columns)  # one findings shape
    with pytest.raises(sg.InvalidInput, match="'nope' is not one of this result's tables: findings, proofs"):
        audited.to_pandas("nope")
    by_name = sg.scan("api.parcels", spark=spark)  # a name of this session's catalog
    assert by_name.table.table_format == "delta"
    clean = tmp_path / "clean"
    pa_table = pa.table({"id": pa.array([1, 2], pa.int64())})
    clean.mkdir()
    import pyarrow.parquet as pq

    pq.write_table(pa_table, clean / "part-0.parquet")
    sg.audit([str(clean)], spark=spark, catalog=False, reports=False).raise_for_status()  # passes: no raise

    after = settings(spark)
    for kind, was, now in zip(("SparkConf", "session conf"), before, after, strict=True):
        changed = {k: (was.get(k), now.get(k)) for k in was.keys() | now.keys() if was.get(k) != now.get(k)}
        assert not changed, (kind, changed)  # the session's configuration as it was
    assert not spark.sparkContext._jsc.sc().isStopped()  # and still running


def _run_python_examples(page: str, start: str, end: str, lake: Path, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> int:
    """Run the ```python blocks of `page` between the headings `start` and `end` as one doctest,
    from a folder holding the demo lake as `.demo/lake`; return how many examples ran."""
    import doctest

    text = (ROOT / page).read_text()
    section = text[text.index(start):text.index(end)]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, flags=re.S))
    if not (tmp_path / ".demo").exists():
        (tmp_path / ".demo").mkdir()
        (tmp_path / ".demo" / "lake").symlink_to(lake)
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(code, {}, f"{page} Python", page, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    return len(test.examples)


def test_the_python_page_examples_run_as_written(lake: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    examples = _run_python_examples("docs/python.md", "## Examples", "## API reference", lake, tmp_path,
                                    monkeypatch)
    assert examples >= 15


def test_the_readme_python_examples_run_as_written(lake: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    examples = _run_python_examples("README.md", "## Python", "## Tests", lake, tmp_path, monkeypatch)
    assert examples >= 5
