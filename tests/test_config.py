"""The audit configuration: the shipped file parses, and every kind of mistake is one line naming
the key, exit 2, before anything is read or written."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from schemaguard.config import FORMATS, ConfigError, load_config
from schemaguard.rules.modes import Mode
from tests.helpers import assert_usage_error, run

PROJECT = Path(__file__).resolve().parents[1]

MINIMAL = """
[[tables]]
path = "lake/orders"
"""


def write(tmp_path: Path, text: str) -> Path:
    conf = tmp_path / "schemaguard.toml"
    conf.write_text(text)
    return conf


def test_the_shipped_configuration_parses() -> None:
    config = load_config(PROJECT / "conf" / "schemaguard.toml")
    assert [t.name for t in config.tables] == ["orders", "orders_delta", "orders_iceberg"]
    assert config.tables[2].profiles == ("iceberg",)
    assert config.tables[1].path == str(PROJECT / ".demo" / "lake" / "orders_delta")
    assert config.tables[1].profiles == ("delta-read",)
    orders = config.tables[0]
    assert orders.path == str(PROJECT / ".demo" / "lake" / "orders")  # relative to the file
    assert orders.profiles == ("spark-read",) and orders.mode == Mode.FULL_TRANSITIVE
    assert config.catalog.database == "schemaguard" and config.catalog.enabled
    assert config.report_dir.resolve() == PROJECT / ".schemaguard" / "reports"
    assert config.formats == FORMATS
    assert config.spark == {"spark.sql.shuffle.partitions": "4"}
    assert config.waivers[0].key == "orders:LOGICAL_TYPE_DRIFT:ts"
    assert config.waivers[0].expires == date(2027, 3, 31)
    assert [p.label for p in orders.proofs] == [
        "not-null channel", "backfilled amount_cents", "agree amount_cents = amount * 100",
        "unit-drift amount", "fits quantity:int32", "values channel"]
    assert (orders.proofs_since, orders.proofs_until) == (date(2024, 1, 31), None)


def test_defaults_of_a_minimal_configuration(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    table = config.tables[0]
    assert table.name == "orders"  # the directory's name
    assert table.path == str(tmp_path / "lake" / "orders")
    assert table.mode == Mode.FULL_TRANSITIVE and table.profiles == ("spark-read",)
    assert config.fail_level == "error" and config.engine == "auto" and config.waivers == ()
    assert config.incremental


def test_table_settings_override_the_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, """
[audit]
profiles = ["spark-read"]
identity = "name-ci"
[options]
type_widening = true
[[tables]]
name = "events"
path = "s3://bucket/events"
profiles = ["Delta-Read", "iceberg"]
mode = "backward_transitive"
options = { column_mapping = "id" }
"""))
    t = config.tables[0]
    assert t.path == "s3://bucket/events"  # a URI stays as it is
    assert t.profiles == ("delta-read", "iceberg") and t.mode == Mode.BACKWARD_TRANSITIVE
    assert t.options.column_mapping == "id" and t.options.type_widening and t.options.identity == "name-ci"


@pytest.mark.parametrize(("text", "message"), [
    ("[audit]\nmdoe = 'FULL'\n" + MINIMAL, "[audit]: unknown key 'mdoe'"),
    ("[audit]\nmode = 'SIDEWAYS'\n" + MINIMAL, "[audit] mode: 'SIDEWAYS' is not one of"),
    ("[audit]\nprofiles = ['spark-raed']\n" + MINIMAL, "profiles: 'spark-raed' is not one of"),
    ("[audit]\nprofiles = 'spark-read'\n" + MINIMAL, "profiles must be a list"),
    ("[audit]\nfail_level = 'fatal'\n" + MINIMAL, "fail_level: 'fatal' is not one of"),
    ("[audit]\nformats = ['pdf']\n" + MINIMAL, "formats: 'pdf' is not one of"),
    ("[options]\ncolumn_mapping = 'position'\n" + MINIMAL, "column_mapping: 'position' is not one of"),
    ("[options]\ntype_widening = 'yes'\n" + MINIMAL, "type_widening must be a boolean"),
    ("[catalog]\ndatabase = 'x; DROP TABLE y'\n" + MINIMAL, "'x; DROP TABLE y' is not a valid name"),
    ("[catalog]\ndatabse = 'x'\n" + MINIMAL, "[catalog]: unknown key 'databse'"),
    ("[spark]\nshuffle = 4\n" + MINIMAL, "'shuffle' is not a Spark setting"),
    ("[tables]\npath = 'x'\n", "tables must be a list"),
    ("[audit]\nmode = 'FULL'\n", "[[tables]]: at least one is needed"),
    ("[[tables]]\nname = 'x'\n", "give exactly one of path or catalog_table"),
    ("[[tables]]\npath = 'a'\ncatalog_table = 'db.t'\n", "give exactly one of path or catalog_table"),
    ("[[tables]]\ncatalog_table = 'db.t`; x'\n", "is not a valid name"),
    ("[[tables]]\ncatalog_table = 'justone'\n", "is not db.table or catalog.db.table"),
    ("[[tables]]\npath = 'a'\nname = 'o'\n[[tables]]\npath = 'b'\nname = 'o'\n", "two tables are named 'o'"),
    ("[[tables]]\npath = 'a'\nname = 'a:b'\n", "may not contain ':'"),
    (MINIMAL + "[[waivers]]\nkey = 'orders:X:y'\nowner = 'me'\nreason = 'r'\n", "missing expires"),
    (MINIMAL + "[[waivers]]\nkey = 'orders'\nowner = 'me'\nreason = 'r'\nexpires = 2027-01-01\n",
     "is not a finding key"),
    (MINIMAL + "[[waivers]]\nkey = 'a:B:c'\nowner = 'me'\nreason = 'r'\nexpires = 'soon'\n", "is not a date"),
    ("[[tables]\n", "not valid TOML"),
    ("[[tables]]\npath = 'a'\nproofs_since = 20240131\n", "proofs_since: 20240131 is not a date"),
    ("[audit]\nreport_dir = 'lake/orders/_reports'\n" + MINIMAL, "lies inside the audited table orders"),
])
def test_a_mistake_names_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, text))
    assert message in str(e.value)
    assert str(tmp_path / "schemaguard.toml") in str(e.value)
    assert "\n" not in str(e.value)


def test_a_quoted_waiver_date_is_a_date(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL + """
[[waivers]]
key = "orders:LOGICAL_TYPE_DRIFT:ts"
owner = "me"
reason = "r"
expires = "2027-01-31"
"""))
    assert config.waivers[0].expires == date(2027, 1, 31)


def test_the_days_proofs_cover_are_dates_quoted_or_not(tmp_path: Path) -> None:
    text = MINIMAL + 'proofs_since = 2024-01-31\nproofs_until = "2024-02-29"\n'
    config = load_config(write(tmp_path, text))
    table = config.tables[0]
    assert (table.proofs_since, table.proofs_until) == (date(2024, 1, 31), date(2024, 2, 29))


@pytest.mark.parametrize(("text", "fragment"), [
    ("[audit]\nmdoe = 'FULL'\n" + MINIMAL, "unknown key 'mdoe'"),
    (MINIMAL, "table orders: no such table path"),  # missing: nothing is read or written
])
def test_audit_with_a_bad_configuration_is_exit_2_and_writes_nothing(
        tmp_path: Path, text: str, fragment: str) -> None:
    conf = write(tmp_path, text + "\n[catalog]\nenabled = false\n" if "[catalog]" not in text else text)
    done = run("audit", "--conf", str(conf))
    assert_usage_error(done, fragment)
    assert len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schemaguard.toml"]


def test_audit_of_a_missing_configuration_file_is_exit_2(tmp_path: Path) -> None:
    assert_usage_error(run("audit", "--conf", str(tmp_path / "nope.toml")), "no such configuration file")


def test_a_run_id_that_cannot_name_a_folder_is_exit_2(tmp_path: Path) -> None:
    conf = write(tmp_path, MINIMAL + "[catalog]\nenabled = false\n")
    assert_usage_error(run("audit", "--conf", str(conf), "--run-id", "../x"), "run_id '../x' cannot name")
