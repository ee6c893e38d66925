"""Helpers shared by several test files: running the console script, checking a usage error,
Spark settings for one block, the one file a Spark write leaves. Fixtures live in conftest.py;
hypothesis strategies in strategies.py; the differential tests' pieces in oracles.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMAGUARD = Path(sys.executable).parent / "schemaguard"
# `make test` and `make test-fast` run the console script's `main` in the test's process: a
# process start costs more than most of its commands. A Spark test's commands stay processes of
# their own (conftest.py), each with its own JVM, and the tests of the process itself (exit codes,
# what a command imports, the wheel) start one on purpose.
IN_PROCESS = os.environ.get("SCHEMAGUARD_TEST_IN_PROCESS") == "1"
TERMINAL = ("COLUMNS", "LINES", "FORCE_COLOR")  # what the commands see of a terminal: none of it


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The console script on `args`: its own process, or with IN_PROCESS (and no `cwd`) its
    `main` here; either way no terminal settings, and the exit code, stdout and stderr."""
    if IN_PROCESS and cwd is None:
        return run_here(*args)
    env = {k: v for k, v in os.environ.items() if k not in TERMINAL}
    return subprocess.run([str(SCHEMAGUARD), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300, check=False)


def assert_usage_error(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


@contextmanager
def spark_conf(spark: Any, **settings: str) -> Iterator[None]:
    keys = {k.replace("__", "."): v for k, v in settings.items()}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k in keys:
            spark.conf.unset(k)


def spark_parquet_file(directory: Path) -> Path:
    """The one data file Spark wrote into `directory` (written with coalesce(1))."""
    files = sorted(directory.glob("part-*.parquet"))
    assert len(files) == 1, files
    return files[0]


@contextmanager
def sql_catalog(folder: Path) -> Iterator[Any]:
    """A pyiceberg SQL catalog `test` on sqlite in `folder`, with the namespace `db`; its engine is
    closed afterwards (pyiceberg imported here: only the Iceberg tests pay for it)."""
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("test", uri=f"sqlite:///{folder}/catalog.db", warehouse=f"file://{folder}/wh")
    cat.create_namespace("db")
    try:
        yield cat
    finally:
        cat.engine.dispose()


def many_folders(root: Path, folders: int = 40) -> Path:
    """A table of more top directories than a listing is split at, with what a listing must get
    right in them: nested partitions, a skipped and a hidden directory with files, an empty one, a
    checksum sidecar, a FIFO, a name that is not UTF-8 and a link back to the root (a cycle)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": pa.array([1, 2], pa.int64())})
    for i in range(folders):
        folder = root / f"dt=2024-01-{i:02d}" / f"h={i % 3}"
        folder.mkdir(parents=True)
        pq.write_table(table, folder / "part-0.parquet")
    for name in ("_tmp", ".hidden", "_delta_log"):
        (root / name).mkdir()
        pq.write_table(table, root / name / "part-0.parquet")
    (root / "empty").mkdir()
    (root / "dt=2024-01-01" / "h=1" / ".part-0.parquet.crc").write_bytes(b"crc\0" + bytes(8))
    os.mkfifo(root / "dt=2024-01-02" / "a-fifo")
    with open(bytes(root / "dt=2024-01-00") + b"/caf\xe9.parquet", "wb") as latin1:
        pq.write_table(table, latin1)
    (root / "dt=2024-01-01" / "loop").symlink_to(root, target_is_directory=True)
    pq.write_table(table, root / "top.parquet")
    return root


def run_here(*args: str) -> subprocess.CompletedProcess[str]:
    """The console script's `main` in this process (so Spark is the tests' session), its exit
    code, stdout and stderr captured as `run` gives them."""
    import contextlib
    import io

    from schemaguard.cli import main

    out, err, code = io.StringIO(), io.StringIO(), 0
    saved, terminal = sys.argv, {k: os.environ.pop(k) for k in TERMINAL if k in os.environ}
    sys.argv = ["schemaguard", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    finally:
        sys.argv = saved
        os.environ.update(terminal)
    return subprocess.CompletedProcess(["schemaguard", *args], code, out.getvalue(), err.getvalue())


CHROMIUM = Path("/usr/bin/chromium")  # `make test` installs it (Debian's package)


def need_chromium() -> None:
    """A `chromium` test fails without the browser: `make test` installs it, `make test-fast`
    leaves these tests out by their marker; neither skips one."""
    if not CHROMIUM.exists():
        import pytest

        pytest.fail(f"{CHROMIUM} is not installed: `make test` installs it (Debian's chromium)")


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on a page (--dump-dom, --screenshot=...), with a profile of its own."""
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--hide-scrollbars", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180, check=False)


# SARIF 2.1.0's JSON schema as schemastore publishes it (the `$schema` our reports name), copied
# from npm's @microsoft/jest-sarif 1.0.0-beta.0 (MIT), lib/schemas/sarif-2.1.0-rtm.5.json.
SARIF_SCHEMA = Path(__file__).resolve().parent / "sarif-2.1.0.json"


def valid_sarif(doc: dict[str, Any]) -> None:
    """Raise unless `doc` is valid SARIF 2.1.0 by the standard's own schema (draft-04)."""
    import jsonschema

    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(doc)

