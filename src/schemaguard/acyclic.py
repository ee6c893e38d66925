"""Cyclic garbage collection paused while a stage builds only acyclic objects.

A footer scan, the checks, the history, the summary and a report's document build hundreds of
thousands of small objects (nodes, paths, texts, findings, dicts) that hold no cycles, so
reference counting frees them all; the cyclic collector, left on, walks them again and again as
they pile up: even at the command line's raised threshold, a fifth of the analysis of 2 files x
20,000 changed columns and of 200 versions x 500 columns (docs/benchmarks.md). Paused, not
switched off: a caller's setting (a notebook's, a job's) is back as it was when the stage ends,
and whatever cycles a library made meanwhile are collected then. The command line's `scan` and
`gate` (one table read and reported in a process of their own, no data proofs, whose Great
Expectations cycles a freeze would keep) also have each stage's objects frozen out of the
collector's sight as the stage ends (`freezing_stages`): a tenth of those two scans again
(docs/benchmarks.md).

May import: nothing of the package.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_freezing = False  # inside `freezing_stages`


@contextmanager
def freezing_stages() -> Iterator[None]:
    """For a command that owns its process's collector (the command line's, never a caller's):
    inside, as each stage ends, every object then alive is moved out of the collector's sight
    (`gc.freeze`), so that the footers, versions and findings are never walked again; refcounting
    still frees them. A cycle already garbage then stays until the process ends. As it was after
    (a test running the command line in its own process goes on unfrozen)."""
    global _freezing
    was, _freezing = _freezing, True
    try:
        yield
    finally:
        _freezing = was


@contextmanager
def acyclic() -> Iterator[None]:
    """No cyclic collection inside (a context or, as `@acyclic()`, a function); the collector as
    it was afterwards."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _freezing:
            gc.freeze()
        if collecting:
            gc.enable()
