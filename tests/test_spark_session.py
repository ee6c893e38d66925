"""The SparkSession factory: the embedded catalog persists across sessions, and an existing
Spark configuration (spark-submit) is used rather than overridden. Each case runs real Spark in
its own process, as a user's jobs would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemaguard.spark import PROJECT_ROOT, class_archive, delta_jars

pytestmark = pytest.mark.spark

WRITE = """
from schemaguard.spark import get_spark
spark = get_spark("write")
spark.sql("CREATE DATABASE IF NOT EXISTS audit_db")
spark.sql("CREATE TABLE audit_db.kept (id BIGINT, note STRING) USING DELTA")
spark.sql("INSERT INTO audit_db.kept VALUES (1, 'one'), (2, 'two')")
print(spark.conf.get("spark.sql.catalogImplementation"), spark.sparkContext.master)
spark.stop()
"""

READ = """
from schemaguard.spark import get_spark
spark = get_spark("read")
rows = spark.sql("SELECT id, note FROM audit_db.kept ORDER BY id").collect()
fmt = spark.sql("DESCRIBE DETAIL audit_db.kept").first()["format"]
kind = [r for r in spark.sql("DESCRIBE TABLE EXTENDED audit_db.kept").collect() if r[0] == "Type"]
jvm = spark.sparkContext._jvm
bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
    jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
print(bean.getVMOption("TieredStopAtLevel").getValue())
print(fmt, kind[0][1], [(r.id, r.note) for r in rows])
spark.stop()
"""


def run_python(code: str, home: Path, **env: str) -> list[str]:
    env = {**os.environ, "SCHEMAGUARD_HOME": str(home), **env}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()


def test_managed_delta_table_survives_a_new_session(tmp_path: Path) -> None:
    """...and `$SCHEMAGUARD_JAVA_OPTIONS` reaches the embedded JVM."""
    assert run_python(WRITE, tmp_path, SCHEMAGUARD_JAVA_OPTIONS="")[-1] == "hive local[*]"
    jvm_tmp = tmp_path / "jvm-tmp"  # the JVM's temporary folder: what a session leaves there
    jvm_tmp.mkdir()
    options = f"-XX:TieredStopAtLevel=1 -Djava.io.tmpdir={jvm_tmp}"
    tier, said = run_python(READ, tmp_path, SCHEMAGUARD_JAVA_OPTIONS=options)[-2:]
    assert (tier, said) == ("1", "delta MANAGED [(1, 'one'), (2, 'two')]")
    assert (tmp_path / "metastore_db").is_dir()  # everything lives under the one home folder
    assert (tmp_path / "warehouse" / "audit_db.db" / "kept" / "_delta_log").is_dir()
    assert (tmp_path / "hive-resources").is_dir()  # Hive's per-session `<id>_resources` folder ...
    assert sorted(p.name for p in jvm_tmp.iterdir()) == []  # ... never left in the temporary folder


SUBMITTED = """
from schemaguard.spark import get_spark
spark = get_spark("submitted")
print(spark.sparkContext.master, spark.conf.get("spark.sql.extensions"),
      spark.conf.get("spark.sql.catalogImplementation"))
spark.stop()
"""


def test_spark_submit_master_is_not_overridden(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(SUBMITTED)
    submit = Path(sys.executable).parent / "spark-submit"
    jars = ",".join(str(j) for j in delta_jars())
    venv_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "SCHEMAGUARD_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(PROJECT_ROOT / "src"), "PYSPARK_PYTHON": sys.executable,
           "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run([str(submit), "--master", "local[2]", "--jars", jars, str(script)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    master, extensions, catalog = done.stdout.strip().splitlines()[-1].split()
    assert master == "local[2]"  # spark-submit's master, not the embedded local[*]
    assert extensions == "io.delta.sql.DeltaSparkSessionExtension"  # Delta added where missing
    assert catalog == "in-memory"  # and no embedded Hive metastore forced on the cluster


def test_the_embedded_session_starts_its_jvm_with_the_archive_setup_wrote(spark: Any) -> None:
    archive = class_archive()
    assert archive.is_file(), "make setup writes the class archive"
    jvm = spark.sparkContext._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    assert bean.getVMOption("SharedArchiveFile").getValue() == str(archive)
    assert "sharing" in jvm.java.lang.System.getProperty("java.vm.info")


def test_the_users_java_options_come_after_the_embedded_drivers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from schemaguard.spark import embedded_conf

    monkeypatch.setenv("SCHEMAGUARD_JAVA_OPTIONS", " -Xss4m  -XX:TieredStopAtLevel=1 ")
    options = embedded_conf(Path("/h"))["spark.driver.extraJavaOptions"]
    assert options.startswith("-Dderby.system.home=/h ")
    assert options.endswith(" -Xss4m  -XX:TieredStopAtLevel=1")
    monkeypatch.setenv("SCHEMAGUARD_JAVA_OPTIONS", "")
    assert "Tiered" not in embedded_conf(Path("/h"))["spark.driver.extraJavaOptions"]


def test_a_brief_session_compiles_with_the_first_tier_unless_the_user_says_otherwise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from schemaguard.spark import embedded_conf

    monkeypatch.setenv("SCHEMAGUARD_JAVA_OPTIONS", "")
    assert embedded_conf(Path("/h"), brief=True)["spark.driver.extraJavaOptions"].endswith(
        " -XX:TieredStopAtLevel=1")
    monkeypatch.setenv("SCHEMAGUARD_JAVA_OPTIONS", "-XX:TieredStopAtLevel=4")  # the JVM takes the last one
    assert embedded_conf(Path("/h"), brief=True)["spark.driver.extraJavaOptions"].endswith(
        " -XX:TieredStopAtLevel=1 -XX:TieredStopAtLevel=4")
