"""The gate before enabling mergeSchema on a table (the same code as `schemaguard gate`).

    spark-submit jobs/merge_gate.py s3://bucket/warehouse/orders --format json
    python jobs/merge_gate.py .demo/lake/orders

Exit 0 the merge is safe, 1 it is not, 2 bad input.
"""

import sys

from schemaguard.cli import main

if __name__ == "__main__":
    sys.argv = [sys.argv[0], "gate", *sys.argv[1:]]
    main()
