"""The terminal every text renderer prints to."""

from __future__ import annotations

import sys

from rich.console import Console

PIPED_WIDTH = 130


def console() -> Console:
    """Piped output (CI logs, files) gets a fixed width instead of rich's 80-column fallback."""
    return Console() if sys.stdout.isatty() else Console(width=PIPED_WIDTH)
