"""A process of its own that writes or reads the catalog report (tests/test_catalog.py).

    SCHEMAGUARD_HOME=<home> python tests/catalog_writer_child.py CONF DATABASE ACTION...

ACTION is `write:RUN_ID` (audit the tables of CONF as run RUN_ID and write the run) or
`count:RUN_ID` (the rows of RUN_ID in each report table, and in the printed findings query).
Each action prints one line `CHILD {json}` and flushes, so a test can follow (and kill) the
process. Embedded Derby allows one process per SCHEMAGUARD_HOME: run these one at a time.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from schemaguard.auditing import run_audit
from schemaguard.config import CatalogConfig, load_config
from schemaguard.report import catalog as report
from schemaguard.spark import get_spark


def main(conf: str, database: str, actions: list[str]) -> None:
    # Small snapshot-state shuffles: the report tables are tiny, Delta's default is 50 partitions.
    spark = get_spark("catalog-child")
    catalog = CatalogConfig(database=database)
    for action in actions:
        verb, run_id = action.split(":", 1)
        if verb == "write":
            run = run_audit(load_config(conf), run_id=run_id)
            expected = {
                "findings": len(run.all_findings),
                "schema_versions": sum(len(t.summary.table.versions) for t in run.tables),
                "file_footers": sum(len(t.summary.table.scan.footers) + len(t.summary.table.scan.unreadable)
                                    for t in run.tables),
            }
            say({"writing": run_id, "expected": expected})
            report.write_run(spark, run, catalog, conf)
            say({"done": run_id})
        elif verb == "count":
            say({"count": run_id, **counts(spark, catalog, run_id)})
        else:
            raise SystemExit(f"unknown action {action!r}")
    spark.stop()


def counts(spark: Any, catalog: CatalogConfig, run_id: str) -> dict[str, int]:
    from pyspark.sql import functions as F

    mine = F.col("run_id") == F.lit(run_id)
    found = {name: spark.table(quoted).where(mine).count()
             for name, quoted in report.table_names(catalog).items()}
    found["query"] = spark.sql(report.findings_query(catalog)).where(mine).count()
    return found


def say(doc: dict[str, Any]) -> None:
    print("CHILD " + json.dumps(doc), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
