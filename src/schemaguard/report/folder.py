"""The report folder: every file format of one run written into `<directory>/<run_id>/` at once.
The only part of `report/` that writes files; the formats themselves are pure functions of the run."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from schemaguard.jsontext import json_text
from schemaguard.proofs.audit_run import AuditRun
from schemaguard.report.html.page import to_html
from schemaguard.report.json import to_json
from schemaguard.report.junit import to_junit
from schemaguard.report.markdown import to_markdown
from schemaguard.report.sarif import to_sarif

FILE_NAMES = {"json": "report.json", "markdown": "report.md", "html": "report.html",
              "junit": "junit.xml", "sarif": "report.sarif"}
# It names the report's folder (and its staging folder beside it, within a file name's 255 bytes).
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
STALE_SECONDS = 24 * 3600  # a staging folder of another host is taken as abandoned after this


def render_file(run: AuditRun, fmt: str) -> str:
    """One file format as the text written to disk."""
    if fmt == "json":
        return json_text(to_json(run), indent=True)
    if fmt == "markdown":
        return to_markdown(run)
    if fmt == "html":
        return to_html(run)
    if fmt == "junit":
        return to_junit(run)
    if fmt == "sarif":
        return json_text(to_sarif(run), indent=True)
    raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(['terminal', *FILE_NAMES])})")


def write_reports(run: AuditRun, directory: Path, formats: Sequence[str]) -> dict[str, Path]:
    """Every file format in `formats` into `directory/<run_id>/`, all or nothing: the files are written
    into a temporary sibling folder that is renamed into place at the end, so a crash leaves no
    half-written report, and a rerun with the same run id replaces the folder whole. `terminal` is
    printed, not written, and is skipped here."""
    if not RUN_ID.fullmatch(run.run_id):
        raise ValueError(f"run id {run.run_id!r} cannot name a folder (letters, digits, . _ -)")
    wanted = [f for f in dict.fromkeys(formats) if f != "terminal"]
    texts = {f: render_file(run, f) for f in wanted}  # every renderer runs before anything touches the disk
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale(directory)
    target = directory / run.run_id
    staging = Path(tempfile.mkdtemp(prefix=f".{run.run_id}.", suffix=".tmp", dir=directory))
    (staging / OWNER).write_text(f"{socket.gethostname()} {os.getpid()}\n", encoding="utf-8")
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # mkdtemp makes it private; a report is for CI artifacts and people
    try:
        for fmt, text in texts.items():
            with open(staging / FILE_NAMES[fmt], "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
        (staging / OWNER).unlink()
        _swap_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {fmt: target / FILE_NAMES[fmt] for fmt in texts}


OWNER = ".owner"  # in a staging folder while it is written: "<host> <pid>"


def latest(directory: Path) -> Path | None:
    """The report folder written last under `directory` (staging folders and the cache aside)."""
    if not directory.is_dir():
        return None
    folders = [p for p in directory.iterdir() if RUN_ID.fullmatch(p.name) and p.is_dir()
               and any((p / name).exists() for name in FILE_NAMES.values())]
    return max(folders, key=lambda p: p.stat().st_mtime, default=None)


def _remove_stale(directory: Path) -> None:
    """Staging folders a killed run left (`.<run>.*.tmp`, `.*.old`): removed when their writer is
    gone (a process of this host that no longer runs, else a day old); a live run's are kept."""
    host, now = socket.gethostname(), time.time()
    for entry in directory.glob(".*.*"):
        if not entry.name.endswith((".tmp", ".old")) or not entry.is_dir():
            continue
        try:
            owner_host, _, pid = (entry / OWNER).read_text(encoding="utf-8").strip().rpartition(" ")
            alive = owner_host != host or _running(int(pid))
        except (OSError, ValueError):  # no owner: finished writing, or killed before it was written
            alive = False
        if not alive or now - entry.stat().st_mtime > STALE_SECONDS:
            shutil.rmtree(entry, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _swap_into_place(staging: Path, target: Path) -> None:
    """Put `staging` where `target` is. An existing `target` (a rerun) is exchanged with it in one
    step (Linux renameat2 RENAME_EXCHANGE), so the folder is always the old report or the new one,
    and the old one is then removed; where the exchange is not supported, the old folder is moved
    aside first."""
    if target.is_dir() and _exchange(staging, target):
        shutil.rmtree(staging, ignore_errors=True)
        return
    for _ in range(5):  # a concurrent writer may put its folder in place between our two renames
        try:
            os.rename(staging, target)
            return
        except OSError:
            if not target.exists():
                raise
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        try:
            os.rename(target, old / "report")
        except FileNotFoundError:
            pass  # another writer moved it first
        finally:
            shutil.rmtree(old, ignore_errors=True)
    raise OSError(f"could not put the report folder {target} in place: other writers keep replacing it")


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False where the system or the filesystem cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)
