"""The gate before enabling mergeSchema on a table: `schemaguard.gate`, printed as `schemaguard
gate` prints it.

    spark-submit jobs/merge_gate.py s3://bucket/warehouse/orders --format json
    python jobs/merge_gate.py .demo/lake/orders

Exit 0 the merge is safe, 1 it is not, 2 bad input.
"""

from __future__ import annotations

import argparse

import schemaguard as sg
from schemaguard.cli_input import job_arguments
from schemaguard.cli_output import bars, run_job, show_gate


def arguments() -> argparse.ArgumentParser:
    parser = job_arguments("merge_gate.py", "Will spark.read with mergeSchema succeed? (schemaguard gate)")
    parser.add_argument("path", help="table directory or URI")
    parser.add_argument("--allow-quiet", action="store_true", help="quiet breaks do not fail the gate")
    return parser


def main(argv: list[str]) -> int:
    args = arguments().parse_args(argv)
    result = sg.gate(args.path, allow_quiet=args.allow_quiet, progress=bars(args.format))
    show_gate(result, args.format)
    return result.exit_code


if __name__ == "__main__":
    run_job(main)
