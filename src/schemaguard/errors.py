"""The one error class the command line turns into a one-line message and exit code 2.

Every stage raises a subclass of `UsageError` for bad input (a missing table, an invalid schema
file, a bad configuration key), so `cli.main` catches one class without importing the stages.

May import: nothing of the package (every stage imports it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterator

TOO_DEEP = "nests deeper than any schema or log does (beyond Python's recursion limit)"


class SchemaGuardError(Exception):
    """What schemaguard raises: bad input, or (from `raise_for_status`) a result that fails."""


class UsageError(SchemaGuardError):
    """Bad input or usage: the message is one line naming the place and the problem (the command
    prints it and exits 2). Public as `schemaguard.InvalidInput`."""


InvalidInput = UsageError  # the name the Python API documents


class ChecksFailed(SchemaGuardError):
    """A result that does not pass (`raise_for_status`): the message names what fails; `.result`
    is the result itself."""

    def __init__(self, message: str, result: object) -> None:
        super().__init__(message)
        self.result = result


def first_line(e: BaseException) -> str:
    """An error as one printable line: its first line, at most 300 characters, control characters
    (corrupt footers put raw bytes into messages) shown as \\xNN; a KeyError names the key."""
    text = f"missing key {e}" if isinstance(e, KeyError) else str(e).strip() or type(e).__name__
    return one_line(text.splitlines()[0][:300])


def one_line(text: str) -> str:
    """`text` as one printable line: line breaks and other control characters (a name may hold
    any) shown as escapes, so an error never spans lines or acts on the terminal."""
    return escaped(text)


def escaped(text: str, keep: str = "") -> str:
    """`text` with each character that is not printable (controls, line and paragraph separators,
    bidirectional overrides and other format characters), except those in `keep`, spelled as
    `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN`."""
    if text.isprintable():  # nearly always: one pass in C
        return text
    return "".join(c if c.isprintable() or c in keep else _escape(ord(c)) for c in text)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


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


@contextlib.contextmanager
def quiet_logger(name: str) -> Iterator[None]:
    """The logger `name` and its children at ERROR for a while, then as they
    were: stderr is for our own lines, and libraries log there once anything has given the root
    logger a handler (py4j's `logging.info` calls `basicConfig`). GX sets some of its loggers to
    INFO; sqlglot warns when it falls back to an unparsed command."""
    known = logging.root.manager.loggerDict.items()
    loggers = [logging.getLogger(name), *(
        logger for key, logger in known if key.startswith(f"{name}.") and isinstance(logger, logging.Logger))]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(max(logger.level, logging.ERROR))
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
