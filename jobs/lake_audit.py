"""The scheduled lake audit (the same code as `schemaguard audit`).

    spark-submit --jars .jars/delta-spark_4.1_2.13-4.4.0.jar,.jars/delta-storage-4.4.0.jar \
        jobs/lake_audit.py --conf conf/schemaguard.toml --run-id "$SCHEDULER_RUN_ID"
    python jobs/lake_audit.py --conf conf/schemaguard.toml

Exit 0 clean, 1 a finding at or above the fail level is not waived, 2 bad configuration.
"""

import sys

from schemaguard.cli import main

if __name__ == "__main__":
    sys.argv = [sys.argv[0], "audit", *sys.argv[1:]]
    main()
