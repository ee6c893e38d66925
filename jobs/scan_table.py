"""Scan a table's footers as a Spark job: `schemaguard.scan` with the Spark engine, printed as
`schemaguard scan` prints it.

    spark-submit --jars <delta jars> jobs/scan_table.py s3://bucket/warehouse/orders --format json
    python jobs/scan_table.py .demo/lake/orders

Exit 0, 2 bad input.
"""

from __future__ import annotations

import argparse

import schemaguard as sg
from schemaguard.cli_input import job_arguments
from schemaguard.cli_output import bars, run_job, show_scan


def arguments() -> argparse.ArgumentParser:
    parser = job_arguments("scan_table.py", "Read every footer of a table with Spark (schemaguard scan).")
    parser.add_argument("path", help="table directory or URI")
    return parser


def main(argv: list[str]) -> int:
    args = arguments().parse_args(argv)
    show_scan(sg.scan(args.path, engine="spark", progress=bars(args.format)), args.format)
    return 0


if __name__ == "__main__":
    run_job(main)
