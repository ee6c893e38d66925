"""Stage 2 of the pipeline (sources -> lake -> formats -> history -> rules -> checks -> proofs ->
plan -> report): bytes and documents into the neutral model and back. Parquet footers decoded as
written (every logical type, field ids, statistics), Delta and Iceberg logs, Avro, Spark JSON and
DDL, our notation; each converter is a pure function of what it is given.

May import: errors, names, paths, model, base.
Must not: list folders or open tables (that is `lake/`), judge compatibility (`rules/`), or
start Spark.
"""
