"""schemaguard: a schema-change guard for Spark/Parquet data lakes."""
