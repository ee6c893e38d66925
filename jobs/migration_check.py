"""A validation step inside a table migration: can every file on disk be read with the schema the
migration is about to install, and do the table's configured proofs hold (no nulls before a
column is made required, the backfill complete, ...)? (`schemaguard audit --table T --schema NEW
--proofs-exit`, the same code.)

    spark-submit jobs/migration_check.py --conf conf/schemaguard.toml --table orders \
        --schema migrations/orders_v5.json --run-id "$MIGRATION_ID"
    python jobs/migration_check.py --conf conf/schemaguard.toml --table orders --schema new.json

Exit 0 every version on disk passes under the configured readers and mode and every proof is
proven, 1 a version fails or a proof is refuted, 3 some proof stays unknown (as `check`), 2 bad
input (a missing --schema among them).
"""

import sys

from schemaguard.cli import fail, main

if __name__ == "__main__":
    if "--schema" not in sys.argv[1:]:
        fail("migration_check needs --schema NEW (the schema the migration installs) and --table T")
    sys.argv = [sys.argv[0], "audit", "--proofs-exit", *sys.argv[1:]]
    main()
