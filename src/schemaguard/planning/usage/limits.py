"""The time limit on resolving one query text, and its outcome kept per distinct text: `within`
runs work in a resolver thread of the caller's own and stops it with `QueryTimeout` at its limit,
from any thread (signals reach only the main thread); `bounded` makes a timeout, or a nesting too
deep for Python's stack, an `UnresolvedQuery`; `TextCache` keeps the RESOLVED_CACHE most recent
outcomes, a long text keyed by its digest (`text_key`). Used by tally.py and planning/consumers.py
around resolve.py's work: it imports records.py and the standard library only, knows nothing of
what the work does, and never raises into the caller's thread from outside.
"""

from __future__ import annotations

import ctypes
import hashlib
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import Any, Generic, TypeVar

from schemaguard.planning.usage.records import UnresolvedQuery

RESOLVED_CACHE = 10_000  # distinct query texts whose outcome is kept
SHORT_TEXT = 1_000  # a text this long or shorter is its own cache key, a longer one its digest
RETRY_SECONDS = 0.01
IDLE_SECONDS = 1.0  # how often an idle resolver thread looks whether its caller has ended

R = TypeVar("R")


class QueryTimeout(BaseException):
    """A query's resolution ran past its time limit (a BaseException, so that no `except
    Exception` on the way, sqlglot's or ours, takes it for a failure of the query)."""


class _Job(Generic[R]):
    """One piece of work handed to a resolver thread, and what came of it."""

    def __init__(self, work: Callable[[], R]) -> None:
        self.work = work
        self.started = False
        self.result: R | None = None
        self.error: BaseException | None = None
        self.done = threading.Lock()  # a C lock, held until the work has ended: no Python code
        self.done.acquire()           # runs in the caller's thread while it waits


class _Resolver(threading.Thread):
    """A thread of our own that runs the work `within` is given. The timeout is raised into this
    thread (CPython's PyThreadState_SetAsyncExc), never into the caller's, and only while the work
    runs here; one that lands just after the work has ended ends this thread quietly, and
    `within` starts another."""

    def __init__(self, caller: threading.Thread) -> None:
        super().__init__(name="schemaguard-resolver", daemon=True)
        self.caller = caller
        self.jobs: SimpleQueue[_Job[Any]] = SimpleQueue()
        self.current: _Job[Any] | None = None
        self.start()

    def run(self) -> None:
        try:
            self._serve()
        except QueryTimeout:
            return

    def _serve(self) -> None:
        while self.caller.is_alive():  # an idle resolver ends with its caller
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except Empty:
                continue
            job.started, self.current = True, job
            try:
                job.result = job.work()
            except BaseException as e:  # every outcome goes back to the caller, a timeout too
                job.error = e
            finally:
                self.current = None
                job.done.release()


_RESOLVERS = threading.local()


def _resolver() -> _Resolver:
    """The calling thread's resolver, started when it has none (or its last one ended)."""
    resolver: _Resolver | None = getattr(_RESOLVERS, "resolver", None)
    if resolver is None or not resolver.is_alive():
        resolver = _RESOLVERS.resolver = _Resolver(threading.current_thread())
    return resolver


def within(seconds: float, work: Callable[[], R]) -> R:
    """`work()` stopped after `seconds` by QueryTimeout, from any thread (signals reach only the
    main thread). The work runs in the calling thread's resolver; the caller only waits, so no
    timeout is ever raised into it from outside."""
    job = _Job(work)
    resolver = _resolver()
    resolver.jobs.put(job)
    deadline = time.monotonic() + seconds
    while not job.done.acquire(timeout=min(IDLE_SECONDS, max(deadline - time.monotonic(), RETRY_SECONDS))):
        if not resolver.is_alive():  # ended by a late timeout of an earlier piece of work
            if job.started:
                raise QueryTimeout
            resolver = _resolver()
            resolver.jobs.put(job)  # it never ran: hand it to the new one
        elif resolver.current is job and time.monotonic() >= deadline and _in_work(resolver):
            _raise_in(resolver.ident or 0, QueryTimeout)  # again a moment later: it may be swallowed
    if job.error is not None:
        raise job.error
    return job.result  # type: ignore[return-value]  # set when no error was


_WORK = frozenset({"sqlglot", "schemaguard"})  # the packages whose code the work runs


def _in_work(thread: threading.Thread) -> bool:
    """Whether the thread runs the work's own code now: its innermost frame belongs to a module of
    sqlglot's or ours (the module the frame's globals are, not the file its code came from). Any
    other frame may be a finalizer or a garbage collector's callback of another library, run in
    the middle of the work (neither package has one), and a timeout raised into it would be
    swallowed, printed as an unraisable exception; the work's own code gets it a moment later."""
    frame = sys._current_frames().get(thread.ident or 0)
    return frame is not None and str(frame.f_globals.get("__name__", "")).partition(".")[0] in _WORK


def _raise_in(thread: int, exception: type[BaseException]) -> None:
    """Raise `exception` in another thread at its next bytecode."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(exception))


def text_key(text: str) -> str | bytes:
    """What caches and de-duplication keep of a query text: the text itself when short (cheaper
    than a digest), else its digest, so that memory stays bounded by the number of texts."""
    if len(text) <= SHORT_TEXT:
        return text
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).digest()


class TextCache(Generic[R]):
    """`compute(text)` per distinct query text, the RESOLVED_CACHE most recent kept: logs repeat
    a few texts a million times, and each is resolved once."""

    def __init__(self, compute: Callable[[str], R]) -> None:
        self._compute = compute
        self._outcomes: OrderedDict[str | bytes, R] = OrderedDict()

    def get(self, text: str) -> R:
        key = text_key(text)
        if key in self._outcomes:
            self._outcomes.move_to_end(key)
            return self._outcomes[key]
        outcome = self._outcomes[key] = self._compute(text)
        if len(self._outcomes) > RESOLVED_CACHE:
            self._outcomes.popitem(last=False)
        return outcome


def bounded(seconds: float, work: Callable[[], R]) -> R:
    """`work()` within its time limit; a resolution that runs over it, or nests too deeply for
    Python's stack, is unresolved."""
    try:
        return within(seconds, work)
    except QueryTimeout:
        raise UnresolvedQuery(f"not resolved within {seconds:g} s") from None
    except RecursionError:
        raise UnresolvedQuery("nested too deeply to resolve") from None
