"""schemaguard: a schema-change guard for Spark/Parquet data lakes."""

from importlib import metadata


def version() -> str:
    """The installed distribution's version (reports and catalog rows carry it)."""
    try:
        return metadata.version("schemaguard")
    except metadata.PackageNotFoundError:
        return "unknown"
