"""The one place that builds a SparkSession.

Embedded default: `local[*]`, a Hive metastore on embedded Derby and a warehouse under one
project-local folder (`.warehouse/`, or `$SCHEMAGUARD_HOME`), Delta's SQL extension and catalog,
the Delta jars fetched by `make setup` as `spark.jars`, UI off, quiet logs.

When Spark is already configured (running under spark-submit, a session already active, or
`spark.master` given in `conf`), it uses what is there and only adds Delta settings that are
missing, never overriding the cluster's.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from schemaguard.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
LOG4J = PROJECT_ROOT / "conf" / "log4j2.properties"


class SparkSetupError(UsageError):
    """The embedded Spark cannot start (for example the Delta jars were never fetched)."""


# Run from a checkout (`make setup`), the embedded session keeps its catalog and finds its jars
# in the checkout; installed as a package, in ~/.schemaguard and through Spark's own package
# resolution (Ivy fetches the jars from Maven Central on the first start, then from ~/.ivy2).
SOURCE_TREE = (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "src" / "schemaguard").is_dir()
DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"  # what `make setup` fetches, with delta-storage


def home_dir() -> Path:
    default = PROJECT_ROOT / ".warehouse" if SOURCE_TREE else Path.home() / ".schemaguard"
    return Path(os.environ.get("SCHEMAGUARD_HOME", default)).absolute()


def jars_dir() -> Path:
    return Path(os.environ.get("SCHEMAGUARD_JARS", PROJECT_ROOT / ".jars"))


def delta_jars() -> list[Path]:
    """The Delta jars `make setup` fetched (or those in $SCHEMAGUARD_JARS)."""
    jars = sorted(jars_dir().glob("delta-*.jar"))
    if not jars:
        raise SparkSetupError(f"no Delta jars in {jars_dir()}: run `make setup` first")
    return jars


def delta_classpath() -> dict[str, str]:
    """How the embedded session gets Delta: the fetched jars in a checkout (or $SCHEMAGUARD_JARS),
    else, installed as a package, `spark.jars.packages`."""
    if SOURCE_TREE or "SCHEMAGUARD_JARS" in os.environ:
        return {"spark.jars": ",".join(str(j) for j in delta_jars())}
    return {"spark.jars.packages": DELTA_PACKAGE}


# Delta rebuilds a table's state in this many tasks on every read; 50 (Delta's default) costs
# 40-90 s per report write on 2 cores, 2 about 13 s (measured; the report tables are tiny).
REPORT_SNAPSHOT_PARTITIONS = {"spark.databricks.delta.snapshotPartitions": "2"}


def class_archive() -> Path:
    """The driver JVM's class-data archive (CDS) `make setup` writes: the classes a cold embedded
    session loads, parsed and verified once instead of on every start."""
    return jars_dir() / "embedded-spark.jsa"


# The JVM checks the archive against its own build and class path and silently runs without it
# when they differ (a new JDK, moved jars): the logging off keeps that silence.
QUIET_CDS = "-Xlog:cds=off -Xlog:cds+dynamic=off"

# JVM options of the user's own for the embedded driver, after ours (so theirs win).
JAVA_OPTIONS_ENV = "SCHEMAGUARD_JAVA_OPTIONS"
# The JIT's first tier only (C1): it halves the CPU of a short command and cuts a quarter to a
# third of its wall time on 2 cores, but makes a long scan 2.7x slower (measured: docs/catalog.md).
# So the embedded JVM starts with it for metadata work (a migration's DDL, RESTORE, its records)
# and for work on few data (`brief_for`: proofs' reads, a backfill's rewrite); work on many does not.
BRIEF_JIT = "-XX:TieredStopAtLevel=1"
# Where Spark reads data (proofs), the first tier pays back below about 150 MiB of files. Measured
# on 2 cores, one pass of aggregates as the proofs run them, whole processes: 16 MiB (1M rows)
# 4.2-4.5 s brief against 6.1 s, 78 MiB (5M rows) 5.4-5.5 s against 6.5-6.7 s, but 314 MiB (20M
# rows) 10.2 s against 8.3 s. The bound keeps a margin.
BRIEF_BYTES = 64 * 2**20


def brief_for(data_bytes: int) -> bool:
    """Whether Spark work that reads at most `data_bytes` of files is brief (`BRIEF_JIT`)."""
    return data_bytes <= BRIEF_BYTES


def embedded_conf(home: Path, brief: bool = False) -> dict[str, str]:
    """Settings of the embedded default session, every path under `home`; `brief`: its work is
    seconds long (`BRIEF_JIT`)."""
    java_opts = f"-Dderby.system.home={home}"
    if LOG4J.exists():
        java_opts += f" -Dlog4j2.configurationFile={LOG4J}"
    archive = class_archive()
    if "SCHEMAGUARD_WRITE_CLASS_ARCHIVE" in os.environ:  # `make setup`'s training run writes it
        java_opts += f" -XX:ArchiveClassesAtExit={os.environ['SCHEMAGUARD_WRITE_CLASS_ARCHIVE']}"
    elif archive.is_file():
        java_opts += f" -XX:SharedArchiveFile={archive} {QUIET_CDS}"
    if brief:
        java_opts += f" {BRIEF_JIT}"
    if extra := os.environ.get(JAVA_OPTIONS_ENV, "").strip():
        java_opts += f" {extra}"
    return {
        "spark.master": "local[*]",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(home / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
        # Hive's session makes `/tmp/<session id>_resources` and deletes it only when closed, which
        # Spark never does: one a process, left in /tmp for good. One folder here instead.
        "spark.hadoop.hive.downloaded.resources.dir": str(home / "hive-resources"),
        "spark.driver.extraJavaOptions": java_opts,
        **delta_classpath(),
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        **REPORT_SNAPSHOT_PARTITIONS,
    }


def embedded_table_location(catalog: str | None, database: str, table: str) -> Path | None:
    """Where the embedded session keeps a managed table of its metastore (its warehouse under
    SCHEMAGUARD_HOME); None when another catalog or session holds it (only Spark knows where)."""
    if catalog is not None or spark_already_configured({}):
        return None
    return home_dir() / "warehouse" / f"{database.lower()}.db" / table.lower()


def require_delta(spark: SparkSession, what: str) -> None:
    """Refuse at once (before anything is read or written) a session that cannot run Delta SQL:
    its settings name Delta's extension and catalog, and its JVM has Delta's classes."""
    missing = []
    if DELTA_EXTENSION not in (spark.conf.get("spark.sql.extensions", "") or ""):
        missing.append(f"spark.sql.extensions={DELTA_EXTENSION}")
    if (spark.conf.get("spark.sql.catalog.spark_catalog", "") or "") != DELTA_CATALOG:
        missing.append(f"spark.sql.catalog.spark_catalog={DELTA_CATALOG}")
    jvm = getattr(getattr(spark, "sparkContext", None), "_jvm", None)
    if jvm is not None:
        from py4j.java_gateway import JavaClass

        # py4j answers a name the JVM has no class for with a JavaPackage (delta-spark's own
        # Python API then fails with "'JavaPackage' object is not callable")
        if not isinstance(jvm.io.delta.tables.DeltaTable, JavaClass):
            missing.append(f"the delta-spark jars (spark.jars.packages={DELTA_PACKAGE}, or on the classpath)")
    if missing:
        raise UsageError(f"{what} needs Delta in the Spark session; this one lacks {'; '.join(missing)} "
                         "(set them when the session is built; `--no-catalog`/`catalog=False` skips the "
                         "catalog write)")


def tune_report_writes(spark: SparkSession) -> None:
    """Settings for writing the small report tables fast; the caller restores the session's own
    (`kept_conf`) once the write is done."""
    for key, value in REPORT_SNAPSHOT_PARTITIONS.items():
        with contextlib.suppress(Exception):  # a session that refuses a runtime setting keeps its own
            spark.conf.set(key, value)


def spark_already_configured(conf: dict[str, str]) -> bool:
    """True under spark-submit (it hands Python a gateway), Spark Connect, or an explicit master."""
    return (
        "PYSPARK_GATEWAY_PORT" in os.environ
        or "SPARK_REMOTE" in os.environ
        or "spark.master" in conf
        or "spark.remote" in conf
    )


def get_spark(app_name: str = "schemaguard", conf: dict[str, str] | None = None, *,
              brief: bool = False) -> SparkSession:
    """The active session, else one for the settings Spark already has (`spark_already_configured`),
    else the embedded default; `brief` (short work: `BRIEF_JIT`) applies to the embedded
    default alone: an active session or a cluster keeps its own JVM."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    extra = dict(conf or {})
    builder = SparkSession.builder.appName(app_name)
    if spark_already_configured(extra):
        present = _submitted_conf()
        for key, value in {"spark.sql.extensions": DELTA_EXTENSION,
                           "spark.sql.catalog.spark_catalog": DELTA_CATALOG}.items():
            if key not in present and key not in extra:
                builder = builder.config(key, value)
    else:
        home = home_dir()
        home.mkdir(parents=True, exist_ok=True)
        # Python workers run this interpreter (the venv), so they can import schemaguard.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        for key, value in embedded_conf(home, brief).items():
            builder = builder.config(key, value)
        builder = builder.enableHiveSupport()
    for key, value in extra.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _submitted_conf() -> set[str]:
    """Keys spark-submit already set (its gateway JVM holds them as system properties)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return set()
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return {k for k, _ in SparkConf().getAll()}


@contextlib.contextmanager
def kept_conf(spark: SparkSession | None) -> Iterator[None]:
    """Leave a caller's session configured as it was: what the block's work set in its runtime
    configuration (Delta records `spark.databricks.delta.lastCommitVersionInSession` on every
    commit) is set back, or unset, afterwards. A static key Spark itself settled cannot be set
    and is left as Spark left it."""
    if spark is None:
        yield
        return
    _build_analyzer(spark)
    before = dict(spark.conf.getAll)
    try:
        yield
    finally:
        after = dict(spark.conf.getAll)
        for key in after.keys() - before.keys():
            with contextlib.suppress(Exception):
                spark.conf.unset(key)
        for key, value in before.items():
            if after.get(key) != value:
                with contextlib.suppress(Exception):
                    spark.conf.set(key, value)


def _build_analyzer(spark: SparkSession) -> None:
    """Build the session's analyzer (lazy until its first query) before a snapshot of its
    settings: Delta's extension sets `spark.sql.parquet.fieldId.read.enabled` and `...write.enabled`
    as the analyzer is built, once, and unsetting them afterwards as "set by our work" would fail
    every later read of a Delta table under id column mapping in the caller's session. A Spark
    Connect session builds it on the server: nothing to do here."""
    session = getattr(spark, "_jsparkSession", None)
    if session is not None:
        session.sessionState().analyzer()


def exercise(spark: SparkSession, folder: Path) -> None:
    """What an embedded session does cold, once: the metastore, a Delta table written, altered,
    viewed, updated, merged into and restored, Parquet read with merged schemas. `make setup`
    runs it with SCHEMAGUARD_WRITE_CLASS_ARCHIVE set, so the JVM archives the classes it loaded."""
    from delta.tables import DeltaTable

    spark.sql("CREATE DATABASE IF NOT EXISTS warmup")
    rows = spark.range(400).selectExpr("id", "CAST(id % 7 AS STRING) AS s", "id * 0.5 AS d",
                                       "CAST(id % 4 AS INT) AS p")
    rows.write.format("delta").partitionBy("p").saveAsTable("warmup.t")
    spark.sql("DESCRIBE TABLE EXTENDED warmup.t").collect()
    spark.sql("ALTER TABLE warmup.t ADD COLUMNS (s2 STRING AFTER id)")
    spark.sql("CREATE OR REPLACE VIEW warmup.v AS SELECT id, COALESCE(s, s2) AS s FROM warmup.t")
    spark.sql("UPDATE warmup.t SET s2 = s WHERE s2 IS NULL AND s IS NOT NULL")
    spark.sql("SELECT count(*) FROM warmup.v WHERE s IS NULL").collect()
    source = spark.table("warmup.t").limit(10)
    DeltaTable.forName(spark, "warmup.t").alias("t").merge(source.alias("n"), "t.id = n.id") \
        .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute()
    spark.createDataFrame([(1, "a")], "id long, s string").writeTo("warmup.u").using("delta").create()
    spark.sql("RESTORE TABLE warmup.t TO VERSION AS OF 0")
    rows.write.parquet(str(folder / "p" / "day=1"))
    rows.selectExpr("id", "d").write.parquet(str(folder / "p" / "day=2"))
    spark.read.option("mergeSchema", "true").parquet(str(folder / "p")).groupBy("day").count().collect()
    spark.sql("DROP VIEW warmup.v")


if __name__ == "__main__":  # `make setup`: the class archive's training run, in a home of its own
    import tempfile

    with tempfile.TemporaryDirectory(prefix="schemaguard-warmup-") as scratch:
        os.environ["SCHEMAGUARD_HOME"] = scratch
        session = get_spark("schemaguard-warmup")
        exercise(session, Path(scratch))
        jvm = session.sparkContext._gateway.proc  # type: ignore[union-attr]
        session.stop()
        jvm.stdin.close()  # Spark's gateway exits at the end of its input, writing the archive
        jvm.wait()
