"""The rules (sources -> lake -> formats -> history -> rules -> checks -> proofs -> plan -> report):
what each real reader does with a (writer, reader) pair of schemas, as pure functions over the
model. Profiles (Spark, Delta, Iceberg, Avro, positional), identity rules, modes, merges; every
rule cites its source in docs/reference/.

May import: errors, names, paths, model, base, formats.
Must not: read tables or files (they get schemas), or start Spark.
"""
