"""Who still reads which column of a table: query logs (JSON lines, CSV) resolved with sqlglot,
Spark event logs' scans and OpenLineage events' column lineage. A query that names the table but
whose reads cannot be told is unresolved, and the no-reads check is then unknown, never proven.
In pipeline order: logs.py reads a log into records (events.py parses Spark's and OpenLineage's
events among them), resolve.py tells what a SQL text reads within limits.py's time limit, and
tally.py counts the reads per column; records.py holds what they share. Part of plan/ (used by
evidence.py and consumers.py, which import its modules by name: this file exports nothing), it
may import errors, formats and model from the package, never pyspark, and no output of it holds a
literal or the text of a query.
"""
