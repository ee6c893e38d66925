"""Scan a table's footers as a Spark job (the same code as `schemaguard scan --engine spark`).

    spark-submit --jars <delta jars> jobs/scan_table.py s3://bucket/warehouse/orders --format json
    python jobs/scan_table.py .demo/lake/orders
"""

import sys

from schemaguard.cli import main

if __name__ == "__main__":
    sys.argv = [sys.argv[0], "scan", "--engine", "spark", *sys.argv[1:]]
    main()
