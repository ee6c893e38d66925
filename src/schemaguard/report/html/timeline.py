"""A table's schema history as SVG, drawn for the audit page (report.html.page) from what the checks
summarised and the proofs decided: one lane per schema version (then the unreadable files, then each
refuted proof), a block per day of the date partition or a tick per modification minute, round
moments on the axis. It may import checks/summary, proofs/audit_run and report.html.escape, nothing
else of report.html; it reads no file and decides nothing. Its lane colours are the grid's column
colours too."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from schemaguard.checks.summary import VersionSummary
from schemaguard.proofs.audit_run import TableAudit
from schemaguard.report.html.escape import escape

# One colour per schema version lane in the HTML timeline (and its column in the grid); no red, which
# means "unreadable" and "error" on the page.
LANE_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7",
                "#86bcb6", "#d4a6c8")
UNREADABLE_COLOUR = "#c0392b"
REFUTED_COLOUR = "#8e2c6a"  # a refuted proof's lane: where the data breaks the claim
GUTTER_CHARACTERS = 22  # a lane's name and detail fit the timeline's gutter up to this many characters


@dataclass(frozen=True)
class _Mark:
    start: datetime
    end: datetime | None  # None: an instant (a file's modification time)
    files: int
    label: str  # the partition or the moment


@dataclass(frozen=True)
class _Lane:
    label: str
    detail: str
    colour: str
    marks: tuple[_Mark, ...]
    cls: str
    note: str = ""  # what changed from the lane before, written beside the lane's blocks


def _moment(value: str | None) -> datetime | None:
    """first_seen/last_seen as history writes them: an ISO date (from a date partition) or an ISO
    timestamp (from a modification time); naive ones are UTC."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _marks(days: Sequence[tuple[date, int]], date_col: str | None, files: Sequence[Any],
           first: str | None = None, last: str | None = None) -> tuple[_Mark, ...]:
    """Where files lie in time: one block per day of the date partition, else a tick per
    modification minute, else the first..last span. `files` are footers or listed files (mtime)."""
    if days:
        return tuple(_Mark(_midnight(d), _midnight(d) + timedelta(days=1), n, f"{date_col}={d}")
                     for d, n in days)
    minutes = Counter(datetime.fromtimestamp(f.mtime, UTC).replace(second=0, microsecond=0)
                      for f in files if f.mtime is not None)
    if minutes:
        return tuple(_Mark(m, None, n, f"written {m:%Y-%m-%d %H:%M} UTC") for m, n in sorted(minutes.items()))
    lo, hi = _moment(first), _moment(last)
    if lo is None:
        return ()
    return (_Mark(lo, hi if hi and hi > lo else None, 0, f"first seen {first}, last seen {last}"),)


def _lanes(table: TableAudit) -> list[_Lane]:
    summary = table.summary
    date_col = summary.date_column
    lanes = []
    for i, vs in enumerate(summary.versions):
        v = vs.version
        detail = f"{len(v.files)} file(s) · {v.rows:,} rows"
        lanes.append(_Lane(f"v{v.number}", detail, LANE_COLOURS[i % len(LANE_COLOURS)],
                           _marks(vs.days, date_col, v.files, v.first_seen, v.last_seen),
                           f"lane lane-v{v.number}",
                           _change_note(vs, first=i == 0)))
    if summary.counts.unreadable:
        lanes.append(_Lane("unreadable", f"{summary.counts.unreadable} file(s)", UNREADABLE_COLOUR,
                           _marks(summary.unreadable_days, date_col, summary.unreadable_files),
                           "lane lane-unreadable"))
    for proof in table.proofs:
        if proof.verdict == "refuted":
            # the kind as the lane's name, the column beside it: the gutter holds ~22 characters, so a
            # longer column (an `agree` expression) is cut there and written whole beside the blocks
            kind, spelled = proof.proof.kind, proof.proof.spelled
            room = GUTTER_CHARACTERS - len(kind)
            cut = spelled if len(spelled) <= room else spelled[:room - 1] + "…"
            note = f"refuted in {proof.partition_count} partition(s)"
            lanes.append(_Lane(kind, cut, REFUTED_COLOUR, _refuted_marks(proof.days, date_col),
                               "lane lane-proof", note if cut == spelled else f"{spelled}: {note}"))
    return lanes


def _refuted_marks(days: Sequence[date], date_col: str | None) -> tuple[_Mark, ...]:
    """Where a proof is refuted, a block a day of the date partition (others have no place in time)."""
    return tuple(_Mark(_midnight(d), _midnight(d) + timedelta(days=1), 0, f"refuted in {date_col}={d}")
                 for d in days)


def _change_note(vs: VersionSummary, first: bool) -> str:
    """`+added -dropped ~changed` columns against the version before, shortened to fit a lane."""
    if first:
        return f"{len(vs.version.footer.columns)} columns"
    marks = []
    for c in vs.changes:
        sign = "+" if c.before is None else "-" if c.after is None else "~"
        marks.append(f"{sign}{c.path}")
    note = "  ".join(marks) or "same columns"
    return note if len(note) <= 60 else note[:59] + "…"


def _ticks(lo: datetime, hi: datetime) -> list[tuple[datetime, str]]:
    """Round moments between lo and hi, at most about ten, labelled for their spacing (the year on the
    first and wherever it changes)."""
    span = (hi - lo).total_seconds()
    hour, day = 3600, 86400
    for step in (60, 300, 900, hour, 3 * hour, 6 * hour, 12 * hour, day, 2 * day, 7 * day, 14 * day):
        if span / step <= 10:
            if step >= 7 * day:  # weeks start on Mondays
                start = _midnight(lo.date() - timedelta(days=lo.weekday()))
            else:
                start = _midnight(lo.date())
            moment = start + timedelta(seconds=step * -(-(lo - start).total_seconds() // step))
            out, year = [], None
            while moment <= hi:
                label = f"{moment:%b} {moment.day}" + ("" if moment.year == year else f" {moment.year}")
                out.append((moment, label + ("" if step >= day else f" {moment:%H:%M}")))
                year = moment.year
                moment += timedelta(seconds=step)
            return out
    months = 1
    while span / (months * 30.4 * day) > 8:
        months = {1: 2, 2: 3, 3: 6, 6: 12}.get(months, months + 12)
    year, month = lo.year, lo.month
    out = []
    while True:
        moment = datetime(year, month, 1, tzinfo=UTC)
        if moment > hi:
            break
        step_ok = month == 1 and year % (months // 12) == 0 if months >= 12 else (month - 1) % months == 0
        if moment >= lo and step_ok:
            out.append((moment, moment.strftime("%b %Y" if months < 12 else "%Y")))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def timeline_svg(table: TableAudit) -> str:
    """The table's lanes on one time axis, as an inline SVG (a note instead when nothing was read)."""
    lanes = _lanes(table)
    width, gutter, right, top, lane_h, gap, axis_h = 1200, 200, 24, 14, 26, 12, 34
    height = top + len(lanes) * (lane_h + gap) + axis_h
    moments = [m.start for lane in lanes for m in lane.marks]
    moments += [m.end for lane in lanes for m in lane.marks if m.end is not None]
    if not lanes:
        return '<p class="empty">No readable data file: no schema version to place in time.</p>'
    parts = [f'<svg class="timeline-svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-label="schema versions of {escape(table.name)} over time" xmlns="http://www.w3.org/2000/svg">']
    if not moments:
        parts.append(f'<text x="{gutter}" y="{top + 16}" class="nodata">no dates: neither a date '
                     'partition nor file modification times</text>')
        lo = hi = datetime(1970, 1, 1, tzinfo=UTC)
    else:
        lo, hi = min(moments), max(moments)
        if hi - lo < timedelta(hours=1):
            lo, hi = lo - timedelta(minutes=30), hi + timedelta(minutes=30)
        pad = (hi - lo) * 0.01
        lo, hi = lo - pad, hi + pad
    scale = (width - gutter - right) / max((hi - lo).total_seconds(), 1.0)

    def x(moment: datetime) -> float:
        return gutter + (moment - lo).total_seconds() * scale

    plot_bottom = top + len(lanes) * (lane_h + gap) - gap / 2
    if moments:
        parts.append('<g class="axis">')
        for moment, label in _ticks(lo, hi):
            px = x(moment)
            parts.append(f'<line x1="{px:.1f}" y1="{top - 6}" x2="{px:.1f}" y2="{plot_bottom:.1f}" '
                         'class="gridline"/>')
            if px + 3.5 * len(label) <= width:  # a label that would run off the right edge is left out
                parts.append(f'<text x="{px:.1f}" y="{plot_bottom + 18:.1f}" class="tick">'
                             f'{escape(label)}</text>')
        parts.append('</g>')
    for i, lane in enumerate(lanes):
        y = top + i * (lane_h + gap)
        parts.append(f'<g class="{lane.cls}" data-colour="{lane.colour}">')
        parts.append(f'<rect x="4" y="{y}" width="{gutter - 16}" height="{lane_h}" rx="5" '
                     f'fill="{lane.colour}" class="lane-key"/>')
        parts.append(f'<text x="14" y="{y + lane_h / 2 + 5:.1f}" class="lane-label">'
                     f'{escape(lane.label)}</text>')
        parts.append(f'<text x="{gutter - 20}" y="{y + lane_h / 2 + 4:.1f}" class="lane-detail">'
                     f'{escape(lane.detail)}</text>')
        if not lane.marks:
            parts.append(f'<text x="{gutter + 8}" y="{y + lane_h / 2 + 4:.1f}" class="nodata">'
                         'no time known</text></g>')
            continue
        first = min(m.start for m in lane.marks)
        last = max(m.end or m.start for m in lane.marks)
        parts.append(f'<rect x="{x(first) - 3:.1f}" y="{y - 3}" width="{x(last) - x(first) + 6:.1f}" '
                     f'height="{lane_h + 6}" rx="6" fill="{lane.colour}" fill-opacity="0.14" '
                     'class="extent"/>')
        for x0, w, tip in _blocks(lane.marks, x):
            parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="{lane_h}" fill="{lane.colour}" '
                         f'class="mark"><title>{escape(lane.label)}: {escape(tip)}</title></rect>')
        if lane.note:
            parts.append(_note_svg(lane.note, x(first) - 3, x(last) + 3, y + lane_h / 2 + 4, gutter,
                                   width - right))
        parts.append('</g>')
    parts.append('</svg>')
    return "".join(parts)


def _blocks(marks: Sequence[_Mark], x: Callable[[datetime], float]) -> list[tuple[float, float, str]]:
    """Marks as drawn rectangles (x, width, tooltip): a partition a block with a pixel of air after
    it; an instant a 4 px tick; marks that would be drawn on top of each other (ticks within a pixel,
    touching partitions narrower than 3 px) merged into one, so a page stays small on long histories."""
    runs: list[list[Any]] = []  # [x0, x1, files, first label, last label, instant]
    for m in marks:
        x0 = x(m.start)
        x1 = x(m.end) if m.end is not None else x0
        if runs:
            last = runs[-1]
            touching = x0 - last[1] < 0.5 if m.end is not None else x0 - last[1] < 1
            if touching and (x1 - x0 < 3 or m.end is None) and last[5] == (m.end is None):
                last[1], last[2], last[4] = max(x1, last[1]), last[2] + m.files, m.label
                continue
        runs.append([x0, x1, m.files, m.label, m.label, m.end is None])
    out = []
    for x0, x1, files, first, last, instant in runs:
        label = first if first == last else f"{first} .. {last}"
        tip = f"{label}: {files} file(s)" if files else label
        if instant:
            out.append((x0 - 2, max(x1 - x0, 0.0) + 4, tip))
        else:
            w = x1 - x0
            out.append((x0, w - 1 if w > 4 else max(w, 2.0), tip))
    return out


def _note_svg(note: str, left: float, right: float, y: float, lo: float, hi: float) -> str:
    """The lane's note on whichever side of its blocks has room for it (about 7 px a character)."""
    need = 7.0 * len(note) + 10
    if hi - right >= need or hi - right >= left - lo:
        return f'<text x="{right + 8:.1f}" y="{y:.1f}" class="note">{escape(note)}</text>'
    return f'<text x="{left - 8:.1f}" y="{y:.1f}" class="note" text-anchor="end">{escape(note)}</text>'
