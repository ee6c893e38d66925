"""The one HTML escape of the report stage: every HTML writer (the audit page, its timeline and
grid, the plan's page) puts text the lake, a configuration or a user names through it, attribute
values included. It imports nothing from the package and must not mark anything up."""

from __future__ import annotations

import html


def escape(value: object) -> str:
    """`value` as text safe in HTML content and in a quoted attribute."""
    return html.escape(str(value), quote=True)
