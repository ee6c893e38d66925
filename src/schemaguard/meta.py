"""What the installed package says of itself.

May import: nothing of the package.
"""

from __future__ import annotations


def version() -> str:
    """The installed distribution's version (reports and catalog rows carry it)."""
    from importlib import metadata  # here, not at import: it costs a twentieth of a second at start-up

    try:
        return metadata.version("schemaguard")
    except metadata.PackageNotFoundError:
        return "unknown"
