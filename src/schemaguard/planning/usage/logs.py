"""A query log read, streamed, into `LoggedQuery` records: JSON lines or CSV (a timestamp, a user
and the query text, under any of the usual names), a Spark event log (JSON lines of listener
events; a directory of them, rolling or not; compressed with any codec Spark writes,
`spark.eventLog.compression.codec`: lz4, lzf, snappy, zstd, as the file's suffix names it, and
decoded as it is read) or OpenLineage run events (JSON lines with `eventType`, `run` and `job`),
told apart by content; a malformed line is None. The first stage of planning/usage/: it may import
records.py, events.py (whose parsers read the events it meets), errors and formats.spark_codecs;
it resolves no SQL and counts no read (resolve.py and tally.py do), and keeps no line it has read.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any, TextIO

from schemaguard.errors import UsageError, require_regular
from schemaguard.formats.spark_codecs import codec_of, decoded
from schemaguard.planning.usage.events import lineage_event, spark_execution
from schemaguard.planning.usage.records import LoggedQuery, as_text, instant

TIME_KEYS = ("timestamp", "ts", "time", "event_time", "start_time")
USER_KEYS = ("user", "user_name", "username", "principal", "executed_by")
QUERY_KEYS = ("query", "query_text", "statement", "sql", "text")
SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
APP_START = "SparkListenerApplicationStart"
LINEAGE_KEYS = frozenset({"eventType", "run", "job"})  # an OpenLineage RunEvent's (spec 2-0-2)


def read_log(path: Path) -> Iterator[LoggedQuery]:
    """Every query of one log, streamed; the kind (JSON lines, Spark event log, CSV) is told from
    its first line that is not blank. Malformed lines are skipped (`read_usage` counts them)."""
    for item in log_records(path):
        if item is not None:
            yield item


def log_records(path: Path, live: bool = False) -> Iterator[LoggedQuery | None]:
    """Each query of the log, and None for each malformed line. A directory is a Spark event log
    directory (one file per application, or rolling `eventlog_v2_*` directories). A `live` log
    is one Spark is still writing."""
    if path.is_dir():
        yield from _event_log_dir(path)
        return
    with open_log(path, live) as handle:
        lines = enumerate(handle, start=1)
        first = next(((n, line) for n, line in lines if line.strip()), None)
        if first is None:
            return
        numbered = chain([first], lines)
        if first[1].lstrip().startswith("{"):
            yield from _json_lines(numbered, str(path))
        elif set(QUERY_KEYS) & _header(first[1]):
            yield from _csv(numbered, str(path))
        else:
            raise UsageError(f"query log {path}: neither JSON lines, a Spark event log nor CSV with a "
                             f"query column ({', '.join(QUERY_KEYS)})")


def _event_log_dir(path: Path) -> Iterator[LoggedQuery | None]:
    """A directory of Spark event logs (`spark.eventLog.dir`: one file per application, or one
    `eventlog_v2_*` directory of rolling `events_N_*` parts), or one rolling log's directory."""
    parts = sorted(path.glob("events_*"), key=lambda p: _part_number(p.name))
    logs = parts or sorted(p for p in path.iterdir()
                           if not p.name.startswith(".") and not p.name.endswith(".crc")
                           and (p.is_file() or p.name.startswith("eventlog_v2_")))
    if not logs:
        raise UsageError(f"query log {path}: a directory without Spark event logs")
    live = any(path.glob("appstatus_*.inprogress"))  # the application runs: its last part grows
    for n, log in enumerate(logs, start=1):
        yield from log_records(log, live and n == len(logs))


def _part_number(name: str) -> int:
    number = name.split("_")[1] if name.count("_") >= 2 else ""
    return int(number) if number.isdigit() else 0


def open_log(path: Path, live: bool = False) -> TextIO:
    """A log as text; a compressed Spark event log is decoded block by block as it is read. A log
    Spark still writes is `live`, or named so (`.inprogress`)."""
    require_regular(path, f"query log {path}")
    codec, live = codec_of(path), live or path.name.endswith(".inprogress")
    try:
        if codec is None:
            return path.open(encoding="utf-8-sig", errors="replace", newline="")
        raw = path.open("rb")
    except OSError as e:
        raise UsageError(f"query log {path}: {e.strerror or e}") from None
    stream = io.BufferedReader(decoded(raw, codec, f"query log {path}", live))
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")


def _header(line: str) -> set[str]:
    return {c.strip().lower() for c in next(csv.reader([line]), [])}


def _json_lines(lines: Iterable[tuple[int, str]], source: str) -> Iterator[LoggedQuery | None]:
    user = application = None  # a Spark event log's application and its user, from its start event
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            yield None
            continue
        if not isinstance(record, dict):
            yield None
        elif record.keys() >= LINEAGE_KEYS:
            yield from lineage_event(record, number, source)
        elif "Event" not in record:
            yield _query(record, number, source)
        elif record["Event"] == APP_START:
            user = as_text(record.get("User"))
            application = as_text(record.get("App Name") or record.get("App ID"))
        elif record["Event"] == SQL_START:
            yield from spark_execution(record, number, source, user, application)


def _csv(lines: Iterable[tuple[int, str]], source: str) -> Iterator[LoggedQuery | None]:
    """Rows of a CSV log, each at the line it starts on (a quoted query may span lines)."""
    numbered = iter(lines)
    first, header_line = next(numbered)
    reader = csv.reader(chain([header_line], (line for _, line in numbered)))
    header = [c.strip().lower() for c in next(reader)]
    while True:
        start = first + reader.line_num  # the reader has read `line_num` lines from the header on
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error:  # e.g. a field over csv's size limit: this record only
            yield None
            continue
        if row:
            yield _query(dict(zip(header, row, strict=False)), start, source)


def _query(record: dict[str, Any], number: int, source: str) -> LoggedQuery | None:
    times, users, texts = _roles(tuple(record))
    text = _pick(record, texts)
    if not isinstance(text, str):
        return None
    user = _pick(record, users)
    when = instant(_pick(record, times))
    return LoggedQuery(number, source, when, None if user is None else str(user), text)


@lru_cache(maxsize=256)
def _roles(keys: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """A record's keys that may hold its time, user and query, most likely first, in any case
    (once per set of keys: a log's records share a few)."""
    spelled: dict[str, str] = {}
    for key in keys:
        spelled.setdefault(str(key).lower(), key)
    return tuple(tuple(spelled[n] for n in names if n in spelled)
                 for names in (TIME_KEYS, USER_KEYS, QUERY_KEYS))


def _pick(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of `keys` that holds a value."""
    for key in keys:
        if record[key] not in (None, ""):
            return record[key]
    return None
