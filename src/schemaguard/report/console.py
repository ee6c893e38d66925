"""The terminal every text renderer prints to.

Lake text (column names, paths, messages quoting them) is printed as written, never read as rich
markup (`price[usd]` stays `price[usd]`), and never reaches the terminal as control characters: an
ESC sequence or a carriage return in a name is shown as `\\x1b` or `\\x0d`. Renderers style their
own words with `Text`, not markup."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from schemaguard.errors import escaped

PIPED_WIDTH = 130


def visible(text: str) -> str:
    """`text` with every character that would act on the terminal spelled as an escape; the
    newlines rich breaks lines with stay."""
    return escaped(text, keep="\n")


class SafeConsole(Console):
    """A rich Console without markup whose printed text shows control characters as escapes."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Before rich builds its Text, which drops some control characters (CR, BEL, BS, VT, FF)
        # without a trace: they are shown instead.
        return super().render_str(visible(text), **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Rich emits its own styles and control sequences from the segments' style and control
        # fields; only the text of plain segments is the renderers' (and the lake's).
        return super()._render_buffer(
            segment if segment.control else Segment(visible(segment.text), segment.style)
            for segment in buffer)


def console(stderr: bool = False) -> Console:
    """Piped output (CI logs, files) gets a fixed width instead of rich's 80-column fallback."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else PIPED_WIDTH
    return SafeConsole(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)
