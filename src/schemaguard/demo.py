"""A demo lake: `orders`, partitioned by `dt`, whose files hold four years' worth of habits
compressed into 60 days: the changes real tables go through, and some junk files.

  v1  dt 2024-01-01..15  id, customer, quantity int32, amount decimal(10,2), ts INT96 (Spark's default)
  v2  dt 2024-01-16..30  + channel string (a column added later)
  v3  dt 2024-01-31..02-14  ts INT64 timestamp_us_utc; amount decimal(12,2) (precision change);
                            + amount_cents int64, to be dual-written with amount
  v4  dt 2024-02-15..29  quantity int64 (a type widened)
Junk (in dt=2024-01-04): a zero-byte file, a truncated file, a text file; `_SUCCESS`,
`_temporary/`, a `.crc` sidecar.

What the data holds, for the proofs `conf/schemaguard.toml` declares from 2024-01-31 on:
`channel` is never null there; `amount_cents` was first written empty and then backfilled, except
dt=2024-02-03, which the backfill missed; it agrees with `amount * 100` except on dt=2024-02-25,
whose writer dropped the cents; `channel` gains a fourth value, `kiosk`, from dt=2024-02-20.

Beside it, `orders_delta`, a Delta table written by delta-spark with the history Delta tables
go through (`build_delta_demo`):

  v0  created: id, customer, qty int, amount decimal(10,2)
  v1  appended
  v2  overwritten with overwriteSchema, + channel (the old files stay on disk, unreferenced)
  v3  column mapping (name) and type widening switched on
  v4  customer renamed to customer_name (a rename under column mapping: no file rewritten)
  v5  qty widened to bigint (type widening: no file rewritten)
  v6  appended

Beside them, `plan/` holds what `schemaguard plan` needs for a realistic change (`build_plan_inputs`):
renaming `customer` to `customer_id` on `orders`, read by several teams: the schema after the
change, a query log of the last weeks (queries name the table `sales.orders`) and consumers' SQL.

With `--catalog-table sales.orders`, the newest days of `orders` are also copied into a managed
Delta table of that name in the session's catalog (`register_orders`): the table the query log
names, so a plan of the rename on it shows each step's Spark SQL and views.

And `orders_iceberg`, an Iceberg table written by pyiceberg (`build_iceberg_demo`), its schemas:

  0  created: id, customer, qty int, amount decimal(10,2), region; partitioned by region; appended
  1  customer renamed to customer_name, qty promoted to long, + channel; appended
  -  a file from another tool (no field ids) added, joined through the name mapping
  2  channel made required with allow_incompatible_changes (files written before it lack it)
"""

from __future__ import annotations

import json
import shutil
import uuid
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEMO_TABLES = ("orders", "orders_delta", "orders_iceberg", "plan")
DAYS = 60
FILES_PER_DAY = 2
ROWS_PER_FILE = 50
START = date(2024, 1, 1)
MISSED_BY_BACKFILL = 33  # dt=2024-02-03: amount_cents still null
CENTS_DROPPED = 55  # dt=2024-02-25: amount_cents = whole units * 100
KIOSK_FROM = 50  # dt=2024-02-20: the first `kiosk` channel
JUNK_DAY = 3  # dt=2024-01-04


def _schema(day: int) -> pa.Schema:
    fields = [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("customer", pa.string()),
        pa.field("quantity", pa.int64() if day >= 45 else pa.int32()),
        pa.field("amount", pa.decimal128(12, 2) if day >= 30 else pa.decimal128(10, 2)),
        pa.field("ts", pa.timestamp("us", tz="UTC") if day >= 30 else pa.timestamp("ns")),
    ]
    if day >= 15:
        fields.append(pa.field("channel", pa.string()))
    if day >= 30:
        fields.append(pa.field("amount_cents", pa.int64()))
    return pa.schema(fields)


def _table(day: int, part: int) -> pa.Table:
    schema = _schema(day)
    base = (day * FILES_PER_DAY + part) * ROWS_PER_FILE
    when = datetime.combine(START + timedelta(days=day), datetime.min.time(), UTC)
    amounts = [Decimal(f"{(base + i) % 5000}.{i % 100:02d}") for i in range(ROWS_PER_FILE)]
    channels = ("web", "app", "store", "kiosk") if day >= KIOSK_FROM else ("web", "app", "store")
    columns: dict[str, list[object]] = {
        "id": [base + i for i in range(ROWS_PER_FILE)],
        "customer": [f"c{(base + i) % 97:03d}" for i in range(ROWS_PER_FILE)],
        "quantity": [1 + (base + i) % 9 for i in range(ROWS_PER_FILE)],
        "amount": list(amounts),
        "ts": [when + timedelta(minutes=7 * i) for i in range(ROWS_PER_FILE)],
        "channel": [channels[i % len(channels)] for i in range(ROWS_PER_FILE)],
        "amount_cents": [None if day == MISSED_BY_BACKFILL else
                         int(a) * 100 if day == CENTS_DROPPED else int(a * 100) for a in amounts],
    }
    if schema.field("ts").type.tz is None:  # INT96 files hold naive wall time, as Spark wrote them
        columns["ts"] = [t.replace(tzinfo=None) for t in columns["ts"]]  # type: ignore[attr-defined]
    return pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema}, schema=schema)


def build_demo_lake(directory: Path) -> Path:
    """Write the lake under `directory` and return the table path. Refuses to overwrite."""
    table_dir = directory / "orders"
    if table_dir.exists():
        raise FileExistsError(f"{table_dir} already exists; pick another directory or remove it")
    rng = uuid.UUID(int=2024)
    for day in range(DAYS):
        part_dir = table_dir / f"dt={START + timedelta(days=day)}"
        part_dir.mkdir(parents=True)
        for part in range(FILES_PER_DAY):
            name = f"part-{part:05d}-{uuid.uuid5(rng, f'{day}-{part}')}.c000.snappy.parquet"
            pq.write_table(_table(day, part), part_dir / name,
                           use_deprecated_int96_timestamps=day < 30)
    _add_junk(table_dir)
    return table_dir


def _add_junk(table_dir: Path) -> None:
    day = table_dir / f"dt={START + timedelta(days=JUNK_DAY)}"
    (day / "part-00099-zero.c000.snappy.parquet").write_bytes(b"")
    good = next(day.glob("part-00000-*.parquet")).read_bytes()
    (day / "part-00098-truncated.c000.snappy.parquet").write_bytes(good[: len(good) // 2])
    (day / "README.txt").write_text("exported by hand, do not delete\n")
    (table_dir / "_SUCCESS").write_bytes(b"")
    temp = table_dir / "_temporary" / "0"
    temp.mkdir(parents=True)
    (temp / "part-00000-attempt.parquet").write_bytes(good)
    first = next(day.glob("part-00001-*.parquet"))
    (day / f".{first.name}.crc").write_bytes(b"crc\x00\x00\x00\x02\x00" + b"\x00" * 4)  # stale


# Who reads `orders` (as `sales.orders`), and how long ago: a query log spans the last weeks.
QUERIES = (
    (19, "finance", "SELECT customer, sum(amount) AS revenue FROM sales.orders WHERE dt >= '2024-02-01' "
                    "GROUP BY customer"),
    (12, "marketing", "SELECT o.customer, o.channel, count(*) AS orders FROM sales.orders o "
                      "GROUP BY o.customer, o.channel"),
    (9, "bi", "SELECT * FROM sales.orders WHERE dt = '2024-02-29'"),
    (6, "ops", "SELECT id, quantity, CASE channel WHEN 'web' THEN 'online' WHEN 'app' THEN 'online' "
               "WHEN 'store' THEN 'retail' END AS kind FROM sales.orders"),
    (4, "data-science", "SELECT id, amount_cents, ts FROM sales.orders WHERE amount_cents IS NOT NULL"),
    (2, "finance", "SELECT customer, max(ts) AS last_order FROM sales.orders GROUP BY customer"),
    (1, "support", "SELECT id, customer, channel FROM sales.orders WHERE id = 4242"),
)
CONSUMERS = {
    "customer_ltv.sql": "-- lifetime value per customer, nightly\n"
                        "SELECT customer, sum(amount) AS ltv, count(*) AS orders\n"
                        "FROM sales.orders\nGROUP BY customer\n",
    "channel_mix.sql": "-- the weekly channel mix\n"
                       "SELECT date_trunc('week', ts) AS week,\n"
                       "       sum(CASE WHEN channel = 'web' THEN 1 ELSE 0 END) AS web,\n"
                       "       sum(CASE WHEN channel IN ('app', 'store') THEN 1 ELSE 0 END) AS other\n"
                       "FROM sales.orders\nGROUP BY 1\n",
}


def build_plan_inputs(directory: Path, now: datetime | None = None) -> Path:
    """Write `plan/` under `directory` (the lake's `orders` must be there): `orders_next.json`, the
    newest schema with `customer` renamed `customer_id`; `queries.jsonl`, reads of the last weeks
    up to `now`; `consumers/`, SQL files consumers run. Returns the folder."""
    from schemaguard.formats.notation import dumps
    from schemaguard.formats.parquet import read_footer
    from schemaguard.model import Schema

    folder = directory / "plan"
    if folder.exists():
        raise FileExistsError(f"{folder} already exists; pick another directory or remove it")
    newest = sorted((directory / "orders").glob(f"dt={START + timedelta(days=DAYS - 1)}/part-*.parquet"))[0]
    schema = read_footer(str(newest)).schema
    renamed = Schema(tuple(replace(f, name="customer_id") if f.name == "customer" else f
                           for f in schema.fields))
    (folder / "consumers").mkdir(parents=True)
    (folder / "orders_next.json").write_text(dumps(renamed, indent=2) + "\n", encoding="utf-8")
    at = now or datetime.now(UTC)
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"ts": (at - timedelta(days=days)).isoformat(timespec="seconds"), "user": user,
                    "query": query}) + "\n" for days, user, query in QUERIES), encoding="utf-8")
    for name, text in CONSUMERS.items():
        (folder / "consumers" / name).write_text(text, encoding="utf-8")
    return folder


def build_delta_demo(directory: Path, spark: SparkSession) -> Path:
    """Write `orders_delta` under `directory` with delta-spark and return its path. It is written
    under a hidden name and renamed when complete: a failed run leaves no half table behind."""
    final = directory.absolute() / "orders_delta"
    if final.exists():
        raise FileExistsError(f"{final} already exists; pick another directory or remove it")
    path = final.with_name(".orders_delta.partial")
    shutil.rmtree(path, ignore_errors=True)
    where = f"delta.`{path}`"

    def rows(first: int, extra: str = "") -> None:
        spark.sql(f"SELECT id, concat('c', id % 97) AS customer, CAST(1 + id % 9 AS INT) AS qty, "
                  f"CAST(id % 5000 AS DECIMAL(10,2)) AS amount{extra} FROM range({first}, {first + 50})") \
            .write.format("delta").mode("append").save(str(path))

    rows(0)
    rows(50)
    spark.sql("SELECT id, concat('c', id % 97) AS customer, CAST(1 + id % 9 AS INT) AS qty, "
              "CAST(id % 5000 AS DECIMAL(10,2)) AS amount, 'web' AS channel FROM range(0, 100)") \
        .write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(str(path))
    spark.sql(f"ALTER TABLE {where} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
              "'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5', "
              "'delta.enableTypeWidening' = 'true')")
    spark.sql(f"ALTER TABLE {where} RENAME COLUMN customer TO customer_name")
    spark.sql(f"ALTER TABLE {where} ALTER COLUMN qty TYPE BIGINT")
    spark.sql("SELECT id, concat('c', id % 97) AS customer_name, CAST(1 + id % 9 AS BIGINT) AS qty, "
              "CAST(id % 5000 AS DECIMAL(10,2)) AS amount, 'app' AS channel FROM range(100, 150)") \
        .write.format("delta").mode("append").save(str(path))
    path.rename(final)
    return final


def register_orders(directory: Path, spark: SparkSession, name: str) -> str:
    """Copy the newest version of `orders` (its last days: one schema, every file readable) into a
    managed Delta table `name` (db.table) of the session's catalog; returns its location. The demo
    owns that name: a table already there is replaced."""
    from schemaguard.formats.spark_ddl import qualified

    days = [START + timedelta(days=day) for day in range(DAYS - 3, DAYS)]
    files = [str(f) for day in days for f in sorted((directory / "orders").glob(f"dt={day}/part-*.parquet"))]
    parts = name.split(".")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {qualified(parts[:-1])}")
    spark.read.parquet(*files).write.format("delta").mode("overwrite") \
        .option("overwriteSchema", "true").saveAsTable(qualified(parts))
    described = spark.sql(f"DESCRIBE DETAIL {qualified(parts)}").collect()
    return str(described[0]["location"])


def build_iceberg_demo(directory: Path) -> Path:
    """Write `orders_iceberg` under `directory` with pyiceberg and return its path. The catalog is
    an in-memory SQL catalog: the table is then read from its own `metadata/` directory. Iceberg
    records absolute paths, so it is written in place, and removed again if writing fails."""
    final = directory.absolute() / "orders_iceberg"
    if final.exists():
        raise FileExistsError(f"{final} already exists; pick another directory or remove it")
    try:
        _write_iceberg_demo(final)
    except BaseException:
        shutil.rmtree(final, ignore_errors=True)
        raise
    return final


def _write_iceberg_demo(final: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DecimalType, IntegerType, LongType, NestedField, StringType

    catalog = SqlCatalog("demo", uri="sqlite:///:memory:", warehouse=f"file://{final.parent}")
    catalog.create_namespace("demo")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "customer", StringType()),
        NestedField(3, "qty", IntegerType()), NestedField(4, "amount", DecimalType(10, 2)),
        NestedField(5, "region", StringType()))
    by_region = PartitionSpec(PartitionField(source_id=5, field_id=1000, transform=IdentityTransform(),
                                             name="region"))
    table = catalog.create_table("demo.orders", schema, location=f"file://{final}", partition_spec=by_region)

    def rows(first: int, n: int, **extra: list[object]) -> pa.Table:
        ids = range(first, first + n)
        names = table.schema().column_names
        columns: dict[str, list[object]] = {
            "id": list(ids), names[1]: [f"c{i % 97}" for i in ids], "qty": [1 + i % 9 for i in ids],
            "amount": [Decimal(i % 5000).scaleb(-2) for i in ids],
            "region": [("eu", "us")[i % 2] for i in ids], **extra}
        return pa.Table.from_pydict(columns, schema=table.schema().as_arrow())

    table.append(rows(0, 50))
    with table.update_schema() as update:
        update.rename_column("customer", "customer_name")
        update.update_column("qty", field_type=LongType())
        update.add_column("channel", StringType())
    table.append(rows(50, 50, channel=["web"] * 50))
    # A file another tool wrote (no field ids; one region, as add_files needs), imported as is.
    imported = final / "imported" / "export-from-another-tool.parquet"
    imported.parent.mkdir(parents=True)
    plain = rows(100, 20, channel=["app"] * 20, region=["eu"] * 20)
    pq.write_table(plain.cast(pa.schema([f.remove_metadata() for f in plain.schema])), imported)
    table.add_files([str(imported)])
    with table.update_schema(allow_incompatible_changes=True) as update:
        update.update_column("channel", required=True)
    catalog.engine.dispose()
