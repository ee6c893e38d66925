"""The one error class the command line turns into a one-line message and exit code 2.

Every stage raises a subclass of `UsageError` for bad input (a missing table, an invalid schema
file, a bad configuration key), so `cli.main` catches one class without importing the stages.
"""

from __future__ import annotations

import os
import stat

TOO_DEEP = "nests deeper than any schema or log does (beyond Python's recursion limit)"


class UsageError(Exception):
    """Bad input or usage: the message is one line naming the place and the problem."""


def first_line(e: BaseException) -> str:
    """An error as one printable line: its first line, at most 300 characters, control characters
    (corrupt footers put raw bytes into messages) shown as \\xNN; a KeyError names the key."""
    text = f"missing key {e}" if isinstance(e, KeyError) else str(e).strip() or type(e).__name__
    return one_line(text.splitlines()[0][:300])


def one_line(text: str) -> str:
    """`text` as one printable line: line breaks and other control characters (a name may hold
    any) shown as \\xNN, so an error never spans lines or acts on the terminal."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def require_regular(path: str | os.PathLike[str], shown: str) -> None:
    """Refuse a FIFO, socket or device given where a file is read: opening a FIFO blocks until a
    writer comes, and a device may never end. A path that does not exist is left to the caller's
    own open, which names it."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UsageError(f"{shown}: not a regular file (a FIFO, socket or device); give a file")
