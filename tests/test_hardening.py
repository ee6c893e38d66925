"""Hostile configuration and input: nothing written where it must not be, never a hang or a
traceback, lake text printed as written (issue 14, "Nothing written where it must not be").
Each test failed before its fix. No JVM: these run in `make test-fast`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemaguard.config import ConfigError, load_config
from schemaguard.report.console import visible
from schemaguard.report.folder import _remove_stale, _swap_into_place
from tests.helpers import SCHEMAGUARD, assert_usage_error, run


def _lake(folder: Path) -> Path:
    (folder / "dt=2024-01-01").mkdir(parents=True)
    pq.write_table(pa.table({"a": [1]}), folder / "dt=2024-01-01" / "p.parquet")
    return folder


def _conf(folder: Path, text: str) -> Path:
    conf = folder / "schemaguard.toml"
    conf.write_text(text, encoding="utf-8")
    return conf


@pytest.mark.parametrize(("table", "report_dir"), [
    ("file://{t}", "{t}/reports"),  # the table as a file URI skipped the check
    ("file://{t}", "file://{t}/reports"),
    ("{t}", "file://localhost{t}/./reports"),
    ("file:{t}", "t/../t/reports"),
])
def test_reports_inside_an_audited_table_are_refused_however_either_is_spelled(
        tmp_path: Path, table: str, report_dir: str) -> None:
    t = _lake(tmp_path / "t")
    conf = _conf(tmp_path, f'[audit]\nreport_dir = "{report_dir.format(t=t)}"\n'
                           f'[[tables]]\npath = "{table.format(t=t)}"\n')
    with pytest.raises(ConfigError, match="lies inside the audited table"):
        load_config(conf)
    done = run("audit", "--conf", str(conf), "--no-catalog", cwd=tmp_path)
    assert_usage_error(done, "the guard never writes into a table it audits")
    assert sorted(p.name for p in t.iterdir()) == ["dt=2024-01-01"]


def test_the_catalog_warehouse_inside_an_audited_table_is_refused(tmp_path: Path) -> None:
    t = _lake(tmp_path / "t")
    conf = _conf(tmp_path, f'[spark]\n"spark.sql.warehouse.dir" = "{t}/warehouse"\n'
                           f'[[tables]]\npath = "{t}"\n')
    with pytest.raises(ConfigError, match=r"spark\.sql\.warehouse\.dir.*inside the audited table"):
        load_config(conf)


WAIVER = '[[waivers]]\nkey = "t:SPARK_MERGE_CONFLICT:a"\nowner = "o"\nreason = "r"\n'


@pytest.mark.parametrize(("entry", "message"), [
    ('[audit]\nreport_dir = "s3://bucket/reports"', "is not a local folder"),
    ('[audit]\nreport_dir = "{tmp}/a-file"', "exists and is not a folder"),
    ('[audit]\nreport_dir = ""', "must not be empty"),
    ('[[tables]]\npath = ""', "path must not be empty"),
    (f"{WAIVER}expires = 20240101", "is not a date"),
    (f'{WAIVER}expires = "soon"', "is not a date"),
])
def test_configuration_that_cannot_work_is_refused_before_any_work(
        tmp_path: Path, entry: str, message: str) -> None:
    (tmp_path / "a-file").write_text("x")
    t = _lake(tmp_path / "t")
    tables = "" if "[[tables]]" in entry else f'[[tables]]\npath = "{t}"\n'
    conf = _conf(tmp_path, entry.format(tmp=tmp_path) + "\n" + tables)
    with pytest.raises(ConfigError, match=message):
        load_config(conf)


def test_a_waiver_date_written_as_text_is_read(tmp_path: Path) -> None:
    t = _lake(tmp_path / "t")
    conf = _conf(tmp_path, f'[[tables]]\npath = "{t}"\n'
                           f'{WAIVER}expires = "2030-01-31"\n')
    assert str(load_config(conf).waivers[0].expires) == "2030-01-31"


def test_an_over_long_run_id_is_refused_before_any_work(tmp_path: Path) -> None:
    conf = _conf(tmp_path, f'[[tables]]\npath = "{_lake(tmp_path / "t")}"\n')
    done = run("audit", "--conf", str(conf), "--no-catalog", "--run-id", "r" * 200, cwd=tmp_path)
    assert_usage_error(done, "run_id ")
    assert not (tmp_path / ".schemaguard").exists()


def _quick(*args: str) -> subprocess.CompletedProcess[str]:
    """The command, given far less time than a hang would take."""
    return subprocess.run([str(SCHEMAGUARD), *args], capture_output=True, text=True, timeout=60, check=False)


def _compare(schema: Path) -> subprocess.CompletedProcess[str]:
    return _quick("compare", "--writer", str(schema), "--reader", str(schema), "--profile", "spark-read")


def test_a_fifo_given_as_configuration_or_schema_is_one_line_never_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    assert_usage_error(_quick("audit", "--conf", str(fifo)), "not a regular file")
    assert_usage_error(_compare(fifo), "not a regular file")
    conf = _conf(tmp_path, f'[[tables]]\npath = "{_lake(tmp_path / "t")}"\n')
    assert_usage_error(_quick("audit", "--conf", str(conf), "--no-catalog", "--schema", str(fifo)),
                       "not a regular file")


def test_schema_files_nested_ten_thousand_deep_are_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    depth = 10_000
    deep.write_text('{"fields": [{"name": "a", "type": ' + '{"list": ' * depth + '"int32"' + "}" * depth
                    + "}]}")
    assert_usage_error(_compare(deep), "deep.json: nests deeper")
    spark = tmp_path / "deep-spark.json"
    nested = '{"type": "array", "elementType": ' * depth + '"integer"' + ', "containsNull": true}' * depth
    spark.write_text('{"type": "struct", "fields": [{"name": "a", "type": ' + nested
                     + ', "nullable": true, "metadata": {}}]}')
    assert_usage_error(_compare(spark), "nests deeper")


def test_a_spark_field_id_that_is_no_integer_is_one_line(tmp_path: Path) -> None:
    schema = tmp_path / "spark.json"
    field = {"name": "a", "type": "integer", "nullable": True, "metadata": {"parquet.field.id": 1}}
    schema.write_text(json.dumps({"type": "struct", "fields": [field]}).replace(": 1}", ": 1e999}"))
    assert_usage_error(_compare(schema), "parquet.field.id must be a whole number")


def _delta(folder: Path, *versions: int) -> Path:
    (folder / "_delta_log").mkdir(parents=True)
    pq.write_table(pa.table({"a": [1]}), folder / "p.parquet")
    schema = json.dumps({"type": "struct", "fields": [{"name": "a", "type": "long", "nullable": True,
                                                          "metadata": {}}]})
    actions = [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
               {"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}},
                             "schemaString": schema, "partitionColumns": [], "configuration": {}}},
               {"add": {"path": "p.parquet", "partitionValues": {}, "size": 1, "modificationTime": 1,
                        "dataChange": True}}]
    for v in versions:
        (folder / "_delta_log" / f"{v:020d}.json").write_text("\n".join(map(json.dumps, actions)) + "\n")
    return folder


@pytest.mark.parametrize(("versions", "message"), [
    ((0, 10**20), "is beyond what Delta numbers"),
    ((0, 10**18), "commit 1 is missing"),  # a jump within a Long: the gap, found without walking to it
])
def test_a_delta_log_whose_commit_numbers_jump_is_one_line(
        tmp_path: Path, versions: tuple[int, ...], message: str) -> None:
    assert_usage_error(_quick("scan", str(_delta(tmp_path / "d", *versions))), message)


def test_names_print_as_written_and_control_characters_never_reach_the_terminal(tmp_path: Path) -> None:
    t = tmp_path / "t"
    t.mkdir()
    names = ["price[usd]", "[bold]b[/bold]", "esc\x1b[31mred", "cr\rreturn"]
    for i, kind in enumerate((pa.int64(), pa.float64())):
        pq.write_table(pa.table({n: pa.array([1], kind) for n in names}), t / f"p{i}.parquet")
    done = run("scan", str(t))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    for shown in ("price[usd]", "[bold]b[/bold]", "esc\\x1b[31mred", "cr\\x0dreturn"):
        assert shown in done.stdout
    assert visible("a\u202eb\nc\x7f") == "a\\u202eb\nc\\x7f"


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run_and_a_live_ones_kept(tmp_path: Path) -> None:
    gone = tmp_path / ".r1.abc.tmp"
    gone.mkdir()
    (gone / ".owner").write_text(f"{socket.gethostname()} 999999999\n")  # beyond pid_max: no process
    live = tmp_path / ".r2.abc.tmp"
    live.mkdir()
    (live / ".owner").write_text(f"{socket.gethostname()} {os.getpid()}\n")
    unowned = tmp_path / ".r3.abc.old"
    unowned.mkdir()
    report = tmp_path / "r4"
    report.mkdir()
    _remove_stale(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".r2.abc.tmp", "r4"]


def test_a_rerun_exchanges_the_folder_whole(tmp_path: Path) -> None:
    target = tmp_path / "run"
    target.mkdir()
    (target / "report.json").write_text("old")
    (target / "junit.xml").write_text("old")
    staging = tmp_path / ".run.x.tmp"
    staging.mkdir()
    (staging / "report.json").write_text("new")
    _swap_into_place(staging, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert [(p.name, p.read_text()) for p in target.iterdir()] == [("report.json", "new")]


def test_an_error_naming_a_path_with_a_line_break_or_escape_is_still_one_line(tmp_path: Path) -> None:
    done = run("scan", str(tmp_path / "no\nsuch\x1b[2Jtable"))
    assert_usage_error(done, "no\\x0asuch\\x1b[2Jtable")
    assert done.stderr.count("\n") == 1 and "\x1b" not in done.stderr
