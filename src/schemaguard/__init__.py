"""schemaguard: a schema-change guard for Spark/Parquet data lakes."""


def version() -> str:
    """The installed distribution's version (reports and catalog rows carry it)."""
    from importlib import metadata  # here, not at import: it costs a twentieth of a second at start-up

    try:
        return metadata.version("schemaguard")
    except metadata.PackageNotFoundError:
        return "unknown"
