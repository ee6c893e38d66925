"""Every schema version on disk against the table's current schema, under the configured readers
and mode: the audit's VERSION_INCOMPATIBLE (a loud break), VERSION_QUIET_BREAK and, with quiet
breaks allowed, VERSION_READ_CHANGES_MEANING findings."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

from schemaguard.base import Options, Problem, ProblemCode, worse
from schemaguard.checks.finding import Finding, FindingCode, involved
from schemaguard.lake.history import SchemaVersion
from schemaguard.lake.table import TableRead
from schemaguard.model import Schema
from schemaguard.rules.modes import Mode, pairs
from schemaguard.rules.profiles import can_read


@dataclass(frozen=True)
class CheckOptions:
    """What the checks need beyond the table: the schema today's readers use, and who reads it."""

    current: Schema | None = None  # None: no compatibility check (a scan)
    profiles: tuple[str, ...] = ()
    mode: Mode = Mode.FULL_TRANSITIVE
    options: Options = field(default_factory=Options)


TYPE_WIDENING_FEATURES = ("typeWidening", "typeWidening-preview")  # Delta PROTOCOL.md "Type Widening"


def table_options(table: TableRead, options: Options) -> Options:
    """The reader options as the table's own log sets them, over the configured ones: a Delta
    table's column mapping mode and type widening (on while its reader feature is in the
    protocol: files widened before it was switched off are still read widened), an Iceberg
    table's format version. A Parquet directory has no log: the configured options stand."""
    if table.delta is not None:
        features = table.delta.protocol.get("readerFeatures") or ()
        widening = (any(f in features for f in TYPE_WIDENING_FEATURES)
                    or table.delta.configuration.get("delta.enableTypeWidening", "").lower() == "true")
        # Under `name` or `id` mapping Delta binds a file's columns by physical name or field id,
        # and the footers here carry the mapping id of each physical name (lake/delta.py, files
        # written before mapping was switched on too): the profiles bind by id, so a column
        # dropped and added back under its old name is another column (binding by name made it
        # the old one: a false type change, found by the read oracle).
        return replace(options, type_widening=widening, column_mapping=table.delta.mapping_mode)
    if table.iceberg is not None:
        return replace(options, iceberg_version=3 if table.iceberg.format_version >= 3 else 2)
    return options


def compatibility(table: TableRead, opts: CheckOptions) -> list[Finding]:
    """Each version on disk against the current schema, as the mode pairs them, per profile.

    A pair (writer, reader) whose reader is the current schema is BACKWARD: today's readers on old
    files. One whose writer is the current schema is FORWARD: readers still on an old version
    reading what is written now. Problems are grouped by (profile, direction, column, code), so a
    problem shared by many versions is one finding naming them all. O(profiles x versions x
    nodes): a TRANSITIVE mode reads each version against the current schema once, never pairs of
    old versions.
    """
    current, versions = opts.current, table.versions
    if current is None:
        return []
    current_n = len(versions) + 1
    schemas = [v.footer.schema for v in versions]
    groups: dict[tuple[str, str, str, ProblemCode], list[tuple[SchemaVersion, Problem]]] = defaultdict(list)
    for profile in opts.profiles:
        for w, r in pairs(len(versions), opts.mode):
            old = versions[(r if w == current_n else w) - 1]
            direction = "forward" if w == current_n else "backward"
            writer = current if w == current_n else schemas[w - 1]
            reader = current if r == current_n else schemas[r - 1]
            for p in can_read(writer, reader, profile, opts.options):
                if p.severity == "info":
                    continue  # a promotion the reader makes: LOGICAL_TYPE_DRIFT shows the change itself
                groups[(profile, direction, p.path, p.code)].append((old, p))
    return [_compat_finding(key, hits, versions, current) for key, hits in groups.items()]


def _code(p: Problem) -> FindingCode:
    """A loud break, a quiet one, or (quiet breaks allowed) a read that changes meaning."""
    if p.severity != "error":
        return FindingCode.VERSION_READ_CHANGES_MEANING
    return FindingCode.VERSION_QUIET_BREAK if p.quiet else FindingCode.VERSION_INCOMPATIBLE


def _compat_finding(key: tuple[str, str, str, ProblemCode], hits: list[tuple[SchemaVersion, Problem]],
                    versions: tuple[SchemaVersion, ...], current: Schema) -> Finding:
    """Backward: the files at stake are the old versions'. Forward: they are the files written with
    the current schema (if any are on disk yet), and the old versions are the readers."""
    profile, direction, path, code = key
    olds = sorted({v.number: v for v, _ in hits}.values(), key=lambda v: v.number)
    worst = hits[0][1]
    for _, p in hits[1:]:
        if worse(p.severity, worst.severity):
            worst = p
    named = ", ".join(f"v{v.number}" for v in olds)
    if direction == "backward":
        at_stake, readers = olds, "the current schema"
        what = f"{profile}: a reader with the current schema reading {named} files"
    else:
        at_stake, readers = [v for v in versions if v.footer.schema == current], named
        what = f"{profile}: a reader still on the schema of {named} reading data written now"
    files = involved(at_stake)
    written = ", ".join(f"v{v.number}" for v in at_stake) or "the current schema (none on disk yet)"
    return Finding(
        _code(worst),
        worst.severity, f"{what}: {worst.message} [{code}]", files.count, files.files, path,
        tuple(v.number for v in at_stake), f"{worst.rule.id} ({worst.rule.source})",
        subject=f"{profile}:{direction}:{path}:{code}", partitions=files.partitions,
        partition_count=files.partition_count,
        evidence=(("reader profile", profile), ("direction", direction), ("reader schema", readers),
                  ("files written with", written)))
