"""A validation step inside a table migration.

With `--plan PLAN.json --step KIND` (a plan written by `schemaguard plan --table T --format json`):
run that step's entry checks on the real data now, so a migration pipeline gates each step.
Data proofs run as `schemaguard check` runs them; checks that are not about the data (no reads
of the old column, enum consumers, sign-off) count as the plan recorded them.

    python jobs/migration_check.py --plan plan.json --step contract

Add `--apply` to run the step itself when every entry check is proven (`schemaguard migrate step`,
the same code): its Spark SQL on the plan's one table, its exit checks, its row in the catalog's
`migrations` table. A rerun of an applied step does nothing.

    spark-submit jobs/migration_check.py --plan plan.json --step backfill --apply

Without `--plan`: can every file on disk be read with the schema the migration is about to
install, and do the table's configured proofs hold? (`schemaguard.audit` with `schema=NEW`,
printed and exiting as `schemaguard audit --table T --schema NEW --proofs-exit`.) The plan's own
checks and steps run as the plan records them: its `schemaguard check` and `migrate step` lines.

    spark-submit jobs/migration_check.py --conf conf/schemaguard.toml --table orders \
        --schema migrations/orders_v5.json --run-id "$MIGRATION_ID"

Exit 0 every check (or version and proof) passes, 1 one is refuted, 3 some stays unknown (as
`check`), 2 bad input.
"""

import argparse
import sys
from pathlib import Path

import schemaguard as sg
from schemaguard.cli import main
from schemaguard.cli_input import job_arguments
from schemaguard.cli_output import audit_exit, bars, fail, run_job, show_audit, status


def gate_step(args: list[str]) -> int:
    """The step's recorded checks, then its data proofs through `check`: the worse verdict wins."""
    from schemaguard.errors import UsageError
    from schemaguard.planning.gate import step_gate
    from schemaguard.proofs import EXIT_CODES, overall

    options = dict(zip(args[::2], args[1::2], strict=False))
    if "--step" not in options or len(args) != 4:
        fail("migration_check --plan PLAN.json --step KIND: both, and nothing else")
    try:
        gate = step_gate(Path(options["--plan"]), options["--step"])
    except UsageError as e:
        fail(str(e))
    for kind, subject, verdict, evidence in gate.recorded_checks:
        print(f"{kind} {subject}: {verdict}" + (f" ({evidence})" if evidence else ""), file=sys.stderr)
    verdicts = [gate.recorded]
    if gate.check_argv:
        sys.argv = [sys.argv[0], *gate.check_argv]
        try:
            main()
        except SystemExit as done:
            by_exit = {code: verdict for verdict, code in EXIT_CODES.items()}
            if done.code not in by_exit:
                return 2  # bad input: check said so in one line
            verdicts.append(by_exit[done.code])
    return EXIT_CODES[overall(verdicts)]

def audit_arguments() -> argparse.ArgumentParser:
    parser = job_arguments("migration_check.py", "Can every file on disk be read with the schema the "
                           "migration installs, and do the table's proofs hold? (audit --proofs-exit)")
    parser.add_argument("--conf", type=Path, default=Path("conf/schemaguard.toml"), help="configuration file")
    parser.add_argument("--table", action="append", default=[], help="the configured table migrated")
    parser.add_argument("--schema", required=True, help="the schema the migration installs")
    parser.add_argument("--run-id", help="this run's id")
    parser.add_argument("--no-catalog", dest="catalog", action="store_false",
                        help="do not write the report into the catalog")
    return parser


def audit(argv: list[str]) -> int:
    """The lake against the migration's schema, with the table's proofs: `schemaguard.audit`."""
    args = audit_arguments().parse_args(argv)
    result = sg.audit(args.conf, run_id=args.run_id, tables=args.table, schema=args.schema,
                      catalog=args.catalog, progress=bars(args.format), announce=status)
    show_audit(result, args.format, args.conf)
    return audit_exit(result, proofs_exit=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--plan" in args and "--apply" in args:
        sys.argv = [sys.argv[0], "migrate", "step", *args]
        main()
    if "--plan" in args:
        sys.exit(gate_step(args))
    if "--schema" not in args:
        fail("migration_check needs --plan PLAN.json --step KIND, or --schema NEW (the schema the "
             "migration installs) and --table T")
    run_job(audit)
