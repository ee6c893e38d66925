"""Stage 1 and the history (sources -> lake -> formats -> history -> rules -> checks -> proofs ->
plan -> report): a table read as its readers read it. A Parquet folder through its listing, Delta
and Iceberg tables through their logs; footers read (in worker processes, or as a Spark job) and
grouped into schema versions in the order their files were committed.

May import: errors, acyclic, names, paths, model, base, formats.
Must not: judge compatibility (`rules/`) or raise findings (`checks/`), or write anywhere but its
own cache.
"""
