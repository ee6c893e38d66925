"""Differential test: schemaguard's Delta log loader against delta-spark 4.4.0 itself.

delta-spark writes every table here, in a fixed set of scenarios, each its own order of
operations: appends, a column added by `mergeSchema`, type widening (`delta.enableTypeWidening`),
column mapping `name` with a rename (top-level and nested) and a drop, partitioned tables, an
overwrite that changes only the partitioning, `replaceWhere`, a delete with deletion vectors,
table properties, in-commit timestamps; and checkpoints of every kind, each followed by later
commits: classic single-file (`delta.checkpointInterval`), multi-part
(`spark.databricks.delta.checkpoint.partSize`), and V2 with sidecars, its top-level file JSON and
Parquet (`spark.databricks.delta.checkpointV2.topLevelFileFormat`).

At every version, the loader (`read_log`, `log_snapshot`) and Delta must agree exactly on the
version, the table schema (Delta's own parse of the log's `schemaString`, metadata included, and
the schema a `versionAsOf` read returns), the schema history, the partition columns, the table
properties, the protocol and the commit time; at sampled versions (a checkpoint's, the latest)
also on the live data files (the `versionAsOf` DataFrame's `inputFiles()`, as paths relative to
the table) and each file's partition values (physical and logical names), size, modification
time, statistics and deletion vector; and on the commit a timestamp selects. Each table is then
read again as Delta's log cleanup leaves it (everything before a checkpoint gone), so the snapshot
must come from that checkpoint; a version neither side can rebuild must be refused by both, Delta
with the error condition expected, schemaguard with a `SchemaLoadError`. Any other failure fails
the test.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow.parquet as pq
import pytest

from schemaguard.formats.delta import MAPPING_ID_KEY, MAPPING_PHYSICAL_KEY, DeltaLog
from schemaguard.formats.io import SchemaLoadError
from schemaguard.lake.delta import log_snapshot, read_log
from schemaguard.lake.discover import discover
from schemaguard.model import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    Field,
    FloatType,
    IntType,
    ListType,
    MapType,
    Schema,
    StringType,
    StructType,
    TimestampType,
    canonical_json,
)
from tests.oracles import conditions

# ---------------------------------------------------------------------------------------------
# What Delta says


def condition(e: BaseException) -> str:
    """The first error condition of a Delta failure (`tests/oracles.py` `conditions`: the Python
    exception's, then the JVM's cause chain), else its class name, which no expectation lists."""
    return next(iter(conditions(e)), type(e).__name__)


def local(path: str, root: str) -> str:
    """A decoded log path or file URI as the table sees it: relative below the table root,
    else an absolute local path."""
    bare = path.removeprefix("file://") if path.startswith("file://") else path.removeprefix("file:")
    return bare.removeprefix(f"{root}/")


def spark_json_type(t: DataType) -> Any:
    """A model type as Spark's type JSON: the loader's schema is the log's schemaString read into
    the model, so it must say exactly what Delta's own parse of that string says."""
    atomic: dict[DataType, str] = {
        BooleanType(): "boolean", IntType(8): "byte", IntType(16): "short", IntType(32): "integer",
        IntType(64): "long", FloatType(32): "float", FloatType(64): "double", StringType(): "string",
        BinaryType(): "binary", DateType(): "date", TimestampType("us", True): "timestamp",
        TimestampType("us", False): "timestamp_ntz"}
    if t in atomic:
        return atomic[t]
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [spark_json_field(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {"type": "array", "elementType": spark_json_type(t.element),
                "containsNull": t.element_nullable}
    if isinstance(t, MapType):
        return {"type": "map", "keyType": spark_json_type(t.key), "valueType": spark_json_type(t.value),
                "valueContainsNull": t.value_nullable}
    raise AssertionError(f"a Delta table here has no {t!r} column")


def spark_json_field(f: Field) -> dict[str, Any]:
    meta = dict(f.metadata)
    if f.id is not None:  # the loader moves the column-mapping id into the field id
        meta[MAPPING_ID_KEY] = str(f.id)
    return {"name": f.name, "type": spark_json_type(f.type), "nullable": f.nullable, "metadata": meta}


def ours_schema(schema: Schema) -> list[dict[str, Any]]:
    return [spark_json_field(f) for f in schema.fields]


def engine_schema(doc: dict[str, Any], keep_metadata: bool = True) -> list[dict[str, Any]]:
    """Spark schema JSON (from the JVM's StructType, not printed text) as `ours_schema` spells it:
    the model keeps metadata values as text, non-strings as canonical JSON."""
    def t(x: Any) -> Any:
        if not isinstance(x, dict):
            return x
        if x["type"] == "struct":
            return {"type": "struct", "fields": [field(f) for f in x["fields"]]}
        if x["type"] == "array":
            return {"type": "array", "elementType": t(x["elementType"]), "containsNull": x["containsNull"]}
        return {"type": "map", "keyType": t(x["keyType"]), "valueType": t(x["valueType"]),
                "valueContainsNull": x["valueContainsNull"]}

    def field(f: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v if isinstance(v, str) else canonical_json(v) for k, v in f["metadata"].items()}
        return {"name": f["name"], "type": t(f["type"]), "nullable": f["nullable"],
                "metadata": meta if keep_metadata else {}}

    return [field(f) for f in doc["fields"]]


def without_metadata(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return engine_schema({"fields": fields}, keep_metadata=False)


@dataclass(frozen=True)
class State:
    """One table version as a reader sees it, from its metadata (every version), and its files
    (`files`, `partitions`: None where only the metadata is compared)."""

    schema: list[dict[str, Any]]  # with metadata (column mapping ids, type changes, ...)
    read_schema: list[dict[str, Any]]  # names, types, nullability of a versionAsOf read
    partition_columns: tuple[str, ...]
    configuration: dict[str, str]
    protocol: dict[str, Any]
    files: dict[str, tuple[Any, ...]] | None  # rel path -> (raw partition values, size, mtime, stats, dv)
    partitions: dict[str, tuple[tuple[str, str | None], ...]] | None  # rel path -> logical values


def protocol_of(doc: dict[str, Any]) -> dict[str, Any]:
    """A protocol action: an absent feature list and a null one mean the same; features are sets."""
    return {k: sorted(v) if isinstance(v, list) else v for k, v in doc.items() if v is not None}


class Delta:
    """delta-spark on the shared session: its reads and its own snapshot of a table's log."""

    def __init__(self, spark: Any, path: Path) -> None:
        self.spark, self.path = spark, path
        jvm = spark._jvm
        self.none = jvm.scala.Option.empty()
        self.scala = jvm.scala.jdk.javaapi.CollectionConverters
        self.log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(path))

    def state(self, version: int, with_files: bool) -> State:
        """The version as a `versionAsOf` read sees it (raises as that read does)."""
        df = self.spark.read.format("delta").option("versionAsOf", version).load(str(self.path))
        read_schema = without_metadata(engine_schema(json.loads(df.schema.json())))
        files = partitions = None
        if not with_files:
            snap = self.log.getSnapshotAt(version, self.none, self.none, False)
        else:
            root = str(self.path)
            read_files = {local(u, root) for u in df.inputFiles()}  # Hadoop paths: not URI-encoded
            # The snapshot that very read scanned, and its files with every attribute.
            leaf = self.scala.asJava(df._jdf.queryExecution().optimizedPlan().collectLeaves())[0]
            snap = leaf.relation().location().preparedScan().scannedSnapshot()
            from pyspark.sql import DataFrame

            rows = DataFrame(snap.allFiles().toDF(), self.spark).select(
                "path", "partitionValues", "size", "modificationTime", "stats", "deletionVector").collect()
            files = {local(unquote(r.path), root): (  # the log's paths are URIs
                tuple(sorted((r.partitionValues or {}).items())), r.size, r.modificationTime / 1000,
                r.stats, r.deletionVector is not None) for r in rows}
            assert set(files) == read_files, "Delta's snapshot and its read disagree: the oracle is confused"
        assert snap.version() == version
        meta = snap.metadata()
        schema_doc = json.loads(meta.schema().json())
        if files is not None:
            logical = {f["metadata"].get(MAPPING_PHYSICAL_KEY, f["name"]): f["name"]
                       for f in schema_doc["fields"]}
            partitions = {p: tuple((logical[k], v) for k, v in f[0]) for p, f in files.items()}
        return State(
            schema=engine_schema(schema_doc),
            read_schema=read_schema,
            partition_columns=tuple(self.scala.asJava(meta.partitionColumns())),
            configuration=dict(self.scala.asJava(meta.configuration())),
            protocol=protocol_of(json.loads(snap.protocol().json())["protocol"]),
            files=files,
            partitions=partitions)

    def history(self) -> dict[int, int]:
        """Each version's commit time in milliseconds, as DESCRIBE HISTORY shows it."""
        rows = self.spark.sql(f"DESCRIBE HISTORY delta.`{self.path}`").selectExpr(
            "version", "unix_millis(timestamp) AS ms").collect()
        return {r.version: r.ms for r in rows}

    def commit_at(self, ms: int) -> int:
        """The version a `timestampAsOf` read at this time reads (Delta's own resolution:
        not after the last commit, and only a version it can rebuild)."""
        jvm = self.spark._jvm
        commit = self.log.history().getActiveCommitAtTime(
            jvm.java.sql.Timestamp(ms), self.none, False, True, False)
        return int(commit.version())


def ours_state(log: DeltaLog, path: Path, with_files: bool) -> State:
    files = partitions = None
    snapshot = log_snapshot(discover(str(path)), log)
    if with_files:
        root = str(path)
        files = {local(f.path, root): (f.partition_values, f.size, f.modification_time, f.stats_json,
                                       f.deletion_vector) for f in log.files}
        assert len(files) == len(log.files), "a file twice in the snapshot"
        partitions = {d.rel: d.partition for d in snapshot.listing.files}
    return State(
        schema=ours_schema(log.current.schema),
        read_schema=without_metadata(ours_schema(log.current.schema)),
        partition_columns=snapshot.listing.partition_columns,
        configuration=log.configuration,
        protocol=protocol_of(log.protocol),
        files=files,
        partitions=partitions)


# ---------------------------------------------------------------------------------------------
# The comparison


def assert_same_state(ours: State, engine: State, where: str) -> None:
    assert ours.schema == engine.schema, f"{where}: table schema"
    assert ours.read_schema == engine.read_schema, f"{where}: the schema a read returns"
    assert ours.partition_columns == engine.partition_columns, f"{where}: partition columns"
    assert ours.configuration == engine.configuration, f"{where}: table properties"
    assert ours.protocol == engine.protocol, f"{where}: protocol"
    if engine.files is None or ours.files is None:
        assert engine.files is None and ours.files is None
        return
    assert sorted(ours.files) == sorted(engine.files), f"{where}: live data files"
    for path, attributes in engine.files.items():
        assert ours.files[path] == attributes, f"{where}: {path}: partition values, size, mtime, stats, dv"
    assert ours.partitions == engine.partitions, f"{where}: logical partition values"


# Delta's refusals that the loader must share: a version log cleanup removed; a checkpoint with a
# part missing; a time before the oldest commit it can rebuild. And one it must not share: a time
# after the last commit, where schemaguard reads the latest snapshot (README, "time travel").
GONE = "DELTA_VERSION_NOT_FOUND"
MISSING_PART = "DELTA_MISSING_PART_FILES"
TOO_EARLY = "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"
TOO_LATE = "DELTA_TIMESTAMP_GREATER_THAN_COMMIT"


def assert_like_delta(spark: Any, path: Path, latest: int, with_files: set[int]) -> list[int]:
    """Every version 0..latest (files too at the versions in `with_files`), then the latest read
    without a version: the same state as Delta, or refused by both. Then the schema history.
    Returns the versions both read."""
    delta = Delta(spark, path)
    listing = discover(str(path))
    read: list[int] = []
    states: dict[int, State] = {}
    for v in range(latest + 1):
        try:
            engine = delta.state(v, v in with_files)
        except Exception as e:
            assert condition(e) == GONE, f"{path.name} v{v}: Delta failed unexpectedly: {e}"
            with pytest.raises(SchemaLoadError):
                read_log(listing, version=v)
            continue
        log = read_log(listing, version=v)
        assert log.version == v
        assert_same_state(ours_state(log, path, v in with_files), engine, f"{path.name} v{v}")
        read.append(v)
        states[v] = engine
    assert read and read[-1] == latest, f"{path.name}: Delta cannot read its latest version"
    newest = read_log(listing)
    assert newest.version == latest
    assert_same_state(ours_state(newest, path, latest in with_files), states[latest], f"{path.name} latest")
    # The schema history: a version wherever the schema (metadata included) or the partitioning
    # changed, and at each version the schema and partitioning Delta had then.
    shape = {v: (states[v].schema, states[v].partition_columns) for v in read}
    changed = [v for i, v in enumerate(read) if i == 0 or shape[v] != shape[read[i - 1]]]
    assert [s.version for s in newest.schemas] == changed, f"{path.name}: schema history versions"
    for v in read:
        at = newest.schema_at(v)
        assert (ours_schema(at.schema), at.partition_columns) == shape[v], f"{path.name}: schema_at({v})"
    return read


def assert_times_like_delta(spark: Any, path: Path) -> None:
    """Each commit's time is DESCRIBE HISTORY's, and a timestamp selects the commit Delta's
    `timestampAsOf` selects: at each commit's time, a millisecond before and after it."""
    delta = Delta(spark, path)
    listing = discover(str(path))
    history = delta.history()
    newest = read_log(listing)
    for v, ms in history.items():
        if v >= newest.schemas[0].version:  # a version the log can rebuild
            assert read_log(listing, version=v).timestamp == ms / 1000, f"{path.name}: time of v{v}"
    for s in newest.schemas:
        assert s.timestamp == history[s.version] / 1000, f"{path.name}: time of schema v{s.version}"
    for ms in sorted({t + d for t in history.values() for d in (-1, 0, 1)}):
        try:
            expected: int | str = delta.commit_at(ms)
        except Exception as e:
            expected = condition(e)
        if expected == TOO_LATE:
            assert read_log(listing, timestamp=ms / 1000).version == max(history)
        elif expected == TOO_EARLY:
            with pytest.raises(SchemaLoadError):
                read_log(listing, timestamp=ms / 1000)
        else:
            assert isinstance(expected, int), f"{path.name}: Delta failed unexpectedly at {ms}: {expected}"
            assert read_log(listing, timestamp=ms / 1000).version == expected, f"{path.name}: time {ms}"


# ---------------------------------------------------------------------------------------------
# Tables delta-spark writes


@dataclass
class Table:
    spark: Any
    path: Path
    rows: int = 0
    added: int = 0
    by_r: bool = False  # partitioned by `r` since `repartition`: appends must carry it

    def sql(self, text: str) -> None:
        self.spark.sql(text.replace("{t}", f"delta.`{self.path}`"))

    def batch(self, extra: str | None = None, n: str = "SMALLINT") -> Any:
        """Six rows in one file per partition; partition values with a space, URI and path
        characters, non-ASCII, and null."""
        start, self.rows = self.rows, self.rows + 6
        cols = ["id", "CASE id % 3 WHEN 0 THEN 'a b' WHEN 1 THEN 'q:%/é=1' END AS part",
                f"CAST(id AS {n}) AS n"]
        cols += [f"concat('x', id) AS {extra}"] if extra else []
        cols += ["CAST(NULL AS STRING) AS r"] if self.by_r else []
        return self.spark.range(start, start + 6, numPartitions=1).selectExpr(*cols)


def append(t: Table) -> None:
    t.batch().write.format("delta").mode("append").save(str(t.path))


def add_column(t: Table) -> None:
    t.added += 1
    t.batch(extra=f"e{t.added}").write.format("delta").mode("append").option("mergeSchema", "true") \
        .save(str(t.path))


def widen(t: Table) -> None:
    """n from SMALLINT to INT by an append with `mergeSchema` (type widening on)."""
    t.batch(n="INT").write.format("delta").mode("append").option("mergeSchema", "true").save(str(t.path))


def rename(t: Table) -> None:
    t.sql("ALTER TABLE {t} RENAME COLUMN r TO `r 2`")


def rename_nested(t: Table) -> None:
    t.sql("ALTER TABLE {t} RENAME COLUMN s.x TO `x 2`")


def drop(t: Table) -> None:
    t.sql("ALTER TABLE {t} DROP COLUMN d")


def delete(t: Table) -> None:
    t.sql("DELETE FROM {t} WHERE id % 4 = 1")


def replace_where(t: Table) -> None:
    """The rows of one `part` value replaced (files removed and added)."""
    t.batch().where("part = 'a b'").write.format("delta").mode("overwrite") \
        .option("replaceWhere", "part = 'a b'").save(str(t.path))


def set_property(t: Table) -> None:
    t.sql(f"ALTER TABLE {{t}} SET TBLPROPERTIES ('schemaguard.oracle' = 'v{t.rows}')")


def repartition(t: Table) -> None:
    """The same schema, partitioned by another column: a metaData action that changes only the
    partitioning."""
    current = t.spark.read.format("delta").load(str(t.path))
    current.write.format("delta").mode("overwrite").option("overwriteSchema", "true") \
        .partitionBy("r").save(str(t.path))
    t.by_r = True


# Fewer tasks for tiny tables on 2 cores (no effect on what is written or read).
SPEED = {"spark.sql.shuffle.partitions": "1", "spark.databricks.delta.snapshotPartitions": "1"}


@contextmanager
def session_conf(spark: Any, conf: dict[str, str]) -> Iterator[None]:
    before = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, old in before.items():
            if old is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, old)


Op = Callable[[Table], None]


def under(conf: dict[str, str], op: Op) -> Op:
    """The op with these session settings (for the checkpoint it writes)."""
    def run(t: Table) -> None:
        with session_conf(t.spark, conf):
            op(t)
    run.__name__ = f"{op.__name__}{conf}"
    return run


MULTIPART = {"spark.databricks.delta.checkpoint.partSize": "3"}  # at most 3 actions a part
V2_JSON = {"spark.databricks.delta.checkpointV2.topLevelFileFormat": "json"}
V2_PARQUET = {"spark.databricks.delta.checkpointV2.topLevelFileFormat": "parquet"}


@dataclass(frozen=True)
class Scenario:
    name: str
    properties: dict[str, str]
    partitioned: bool
    ops: tuple[Op, ...]  # each one commit
    checkpoints: dict[int, str]  # version -> a glob its checkpoint files match
    cuts: tuple[int, ...]  # checkpoints log cleanup is made to keep (every commit before goes)


SCENARIOS = [
    # Partitioned, no column mapping: a repartitioning that keeps the schema and a classic
    # checkpoint at 3 (interval), widening, a replaceWhere, a property and a multi-part checkpoint
    # at 6, then one more commit.
    Scenario(
        "classic_then_multipart", {"delta.checkpointInterval": "3", "delta.enableTypeWidening": "true",
                                   "delta.enableDeletionVectors": "false"}, True,
        (append, add_column, repartition, widen, replace_where, under(MULTIPART, set_property), append),
        {3: "*.checkpoint.parquet", 6: "*.checkpoint.0000000003.*.parquet"}, (3, 6)),
    # Column mapping by name, in-commit timestamps, partitioned: a rename, deletion vectors, a V2
    # checkpoint with sidecars at 3 (top-level JSON), widening, a drop, a nested rename and a V2
    # checkpoint at 6 (top-level Parquet), then a column added.
    Scenario(
        "v2", {"delta.checkpointPolicy": "v2", "delta.checkpointInterval": "3",
               "delta.columnMapping.mode": "name", "delta.enableTypeWidening": "true",
               "delta.enableDeletionVectors": "true", "delta.enableInCommitTimestamps": "true"}, True,
        (append, rename, under(V2_JSON, delete), widen, drop, under(V2_PARQUET, rename_nested), add_column),
        {3: "*.checkpoint.*-*.json", 6: "*.checkpoint.*-*.parquet"}, (3, 6)),
]


def write(spark: Any, scenario: Scenario, path: Path) -> int:
    """The scenario's table; its latest version."""
    t = Table(spark, path)
    props = ", ".join(f"'{k}' = '{v}'" for k, v in scenario.properties.items())
    with session_conf(spark, SPEED):
        t.sql("CREATE TABLE {t} (id BIGINT, part STRING, n SMALLINT, r STRING, d DOUBLE, "
              "s STRUCT<x: INT, y: ARRAY<STRING>>, m MAP<STRING, DECIMAL(10,2)>) USING delta "
              f"{'PARTITIONED BY (part) ' if scenario.partitioned else ''}TBLPROPERTIES ({props})")
        for op in scenario.ops:
            op(t)
    return max(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json") if p.name[:20].isdigit())


def cleaned(source: Path, target: Path, keep: int) -> Path:
    """A copy of the table (file times kept) as Delta's log cleanup leaves it: every commit,
    checkpoint and checksum before the checkpoint at `keep` removed."""
    shutil.copytree(source, target)
    for f in (target / "_delta_log").iterdir():
        stem = f.name.lstrip(".").split(".")[0]
        if stem.isdigit() and int(stem) < keep:
            f.unlink()
    return target


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    """Every scenario's table, written once for the tests of this module."""
    root = tmp_path_factory.mktemp("delta-oracle")
    return {s.name: (root / s.name, write(spark, s, root / s.name)) for s in SCENARIOS}


# ---------------------------------------------------------------------------------------------
# The tests


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_the_log_reads_like_delta_at_every_version(
        spark: Any, tables: dict[str, tuple[Path, int]], scenario: Scenario, tmp_path: Path) -> None:
    path, latest = tables[scenario.name]
    log_dir = path / "_delta_log"
    # The scenario wrote what it is for: each checkpoint of its kind, then later commits.
    for version, pattern in scenario.checkpoints.items():
        assert [p for p in log_dir.glob(pattern) if p.name.startswith(f"{version:020d}.")], pattern
        assert version < latest
    for top in [*log_dir.glob("*.checkpoint.*-*.json"), *log_dir.glob("*.checkpoint.*-*.parquet")]:
        if top.suffix == ".json":
            named = ["sidecar" in json.loads(line) for line in top.read_text().splitlines()]
        else:
            named = pq.read_table(top, columns=["sidecar"])["sidecar"].is_valid().to_pylist()
        assert any(named), f"{top.name}: a V2 checkpoint without sidecars"
    # The whole state at the first checkpoint's version and the latest; all but the files (whose
    # every add and remove the latest has replayed) at every version.
    sampled = {min(scenario.checkpoints), latest}
    assert assert_like_delta(spark, path, latest, sampled) == list(range(latest + 1))
    if scenario.properties["delta.enableDeletionVectors"] == "true":  # the delete left one
        assert any(f.deletion_vector for f in read_log(discover(str(path))).files)
    assert_times_like_delta(spark, path)

    # Log cleanup: the loader must now rebuild from the checkpoint, as Delta does.
    # The files at the latest version: the checkpoint's, and the later commits' replayed on them.
    for keep in scenario.cuts:
        cut = cleaned(path, tmp_path / f"cut_{keep}", keep)
        versions = assert_like_delta(spark, cut, latest, {latest})
        assert versions == list(range(keep, latest + 1))
        log = read_log(discover(str(cut)))
        assert log.schemas[0].version == keep and log.notes
        if keep == scenario.cuts[0]:
            assert_times_like_delta(spark, cut)


def test_a_multipart_checkpoint_with_a_part_missing_is_refused(
        spark: Any, tables: dict[str, tuple[Path, int]], tmp_path: Path) -> None:
    """A writer that dies while writing a multi-part checkpoint leaves some of its parts. With the
    commits before it cleaned up, Delta refuses to read the table; so must the loader, rather than
    take the parts that are there for the whole table."""
    path, latest = tables["classic_then_multipart"]
    cut = cleaned(path, tmp_path / "partial", 6)
    parts = sorted(cut.glob("_delta_log/00000000000000000006.checkpoint.*.parquet"))
    assert len(parts) >= 3

    def files_only(part: Path) -> bool:  # what is left still has the table's metadata
        actions = pq.read_table(part, columns=["add", "metaData", "protocol"])
        rows = len(actions)
        return bool(actions["add"].null_count < rows and actions["metaData"].null_count == rows
                    and actions["protocol"].null_count == rows)

    lost = next(p for p in parts if files_only(p))
    lost.unlink()
    (lost.parent / f".{lost.name}.crc").unlink(missing_ok=True)
    listing = discover(str(cut))
    for v in [None, *range(6, latest + 1)]:
        with pytest.raises(Exception) as refused:
            if v is None:
                spark.read.format("delta").load(str(cut)).inputFiles()
            else:
                Delta(spark, cut).state(v, with_files=True)
        assert condition(refused.value) == MISSING_PART, refused.value
        with pytest.raises(SchemaLoadError, match="lacks parts"):
            read_log(listing, version=v)


def test_commit_times_are_delta_s_when_file_times_collide_or_go_back(
        spark: Any, tables: dict[str, tuple[Path, int]], tmp_path: Path) -> None:
    """Commit files copied (or on a store with one-second times) share a time, or an older one
    follows a newer one, and some have sub-millisecond parts: Delta makes each commit's time at
    least a millisecond after the one before, in whole milliseconds, and selects by those
    times; so must the loader."""
    path, latest = tables["classic_then_multipart"]
    copy = tmp_path / "copied"
    shutil.copytree(path, copy)
    base = int(time.time()) - 3600  # within the time travel retention
    seconds = [base, base, base + 2, base + 1, base + 1, base + 5]
    for v in range(latest + 1):
        when = seconds[min(v, len(seconds) - 1)] + (0.0004 if v % 2 else 0.0)
        os.utime(copy / "_delta_log" / f"{v:020d}.json", (when, when))
    assert_times_like_delta(spark, copy)
