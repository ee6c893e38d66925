"""The scheduled lake audit: `schemaguard.audit` over a configuration, printed as `schemaguard
audit` prints it.

    spark-submit --jars .jars/delta-spark_4.1_2.13-4.4.0.jar,.jars/delta-storage-4.4.0.jar \
        jobs/lake_audit.py --conf conf/schemaguard.toml --run-id "$SCHEDULER_RUN_ID"
    python jobs/lake_audit.py --conf conf/schemaguard.toml

Under spark-submit the session is the job's (its master and configuration kept). Exit 0 clean, 1 a
finding at or above the fail level is not waived, 2 bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import schemaguard as sg
from schemaguard.cli_input import job_arguments
from schemaguard.cli_output import audit_exit, bars, run_job, show_audit, status


def arguments() -> argparse.ArgumentParser:
    parser = job_arguments("lake_audit.py", "Audit every configured table (schemaguard audit).")
    parser.add_argument("--conf", type=Path, default=Path("conf/schemaguard.toml"), help="configuration file")
    parser.add_argument("--run-id", help="this run's id (a scheduler's id makes retries idempotent)")
    parser.add_argument("--table", action="append", default=[], help="audit only this configured table")
    parser.add_argument("--no-catalog", dest="catalog", action="store_false",
                        help="do not write the report into the catalog")
    parser.add_argument("--full", action="store_true", help="read every footer, not only changed files")
    parser.add_argument("--proofs-exit", action="store_true",
                        help="exit 3 when a configured proof stays unknown and nothing fails")
    return parser


def main(argv: list[str]) -> int:
    args = arguments().parse_args(argv)
    result = sg.audit(args.conf, run_id=args.run_id, tables=args.table, catalog=args.catalog, full=args.full,
                      progress=bars(args.format), announce=status)
    show_audit(result, args.format, args.conf)
    return audit_exit(result, args.proofs_exit)


if __name__ == "__main__":
    run_job(main)
