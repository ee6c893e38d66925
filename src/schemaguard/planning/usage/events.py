"""Spark event logs' SQL executions and OpenLineage run events: each read into a `LoggedQuery`
(`spark_execution`, `lineage_event`), and what it reads of the table (`scan_reads`,
`lineage_reads`). Spark 4.1 writes no SQL text for `spark.sql`, but each execution's physical
plan names, per file scan, its `Location` and `ReadSchema`: the data columns Spark really read
there (partition columns count where the plan uses them; a data source V2 scan, which names
neither, is unresolved). An OpenLineage event's outputs' `columnLineage` facets name the input
fields each output derives from: those of the table are read, and an event that reads the table
while an output has no such facet is unresolved. Between logs.py, which calls the parsers on each
event it meets, and tally.py, which calls the readers on each record: it imports records.py only,
reads no file and no SQL text, and its reasons carry no value of the log.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from schemaguard.paths import top_name
from schemaguard.planning.usage.records import (
    Dataset,
    LoggedQuery,
    Outcome,
    Scan,
    as_text,
    instant,
    names_table,
)

# Nodes of a Spark physical plan that print the columns they keep: a scan's column none of them
# names is dropped there. Any other node passes its child's columns on, or counts as if it did.
PROJECTING = frozenset({"Project", "HashAggregate", "SortAggregate", "ObjectHashAggregate",
                        "TakeOrderedAndProject", "Expand", "Generate"})
TRUNCATED = " more fields"  # how Spark ends a list cut at spark.sql.debug.maxToStringFields


def spark_execution(record: dict[str, Any], number: int, source: str, user: str | None,
                    application: str | None) -> Iterator[LoggedQuery]:
    """A Spark SQL execution that scans files (a command without scans reads no table)."""
    scans = tuple(_scans(record.get("sparkPlanInfo")))
    if scans:
        yield LoggedQuery(number, source, instant(record.get("time")), user, "", scans, application)


def _scans(plan: Any) -> Iterator[Scan]:
    """Every file scan of a plan tree: `nodeName` "Scan ..." with metadata `Location` and
    `ReadSchema` (a V1 file source), or "BatchScan ..." (a V2 source: Spark logs no metadata).
    Each carries its own text, whether a node above it projects, and every text that may use a
    partition column of it: the other nodes' and the scans' `PartitionFilters`."""
    nodes: list[tuple[dict[str, Any], bool]] = []  # each node, and whether a node above projects
    stack: list[tuple[Any, bool]] = [(plan, False)]
    while stack:
        node, projected = stack.pop()
        if isinstance(node, dict):
            nodes.append((node, projected))
            below = projected or node.get("nodeName") in PROJECTING
            stack.extend((child, below) for child in node.get("children") or ())
    uses = "\n".join(_uses(n) for n, _ in nodes)
    for node, projected in nodes:
        meta, text = _metadata(node), str(node.get("simpleString", ""))
        if _is_scan(node):
            yield Scan(str(meta.get("Location", "")), str(meta["ReadSchema"]),
                       None if TRUNCATED in text else text, not projected, uses)
        elif str(node.get("nodeName", "")).startswith("BatchScan"):
            yield Scan(None, None)


def _uses(node: dict[str, Any]) -> str:
    """Where a node may use a partition column: a scan's `PartitionFilters`, another node's text."""
    text = _metadata(node).get("PartitionFilters") if _is_scan(node) else node.get("simpleString")
    return str(text or "")


def _metadata(node: dict[str, Any]) -> dict[str, Any]:
    meta = node.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _is_scan(node: dict[str, Any]) -> bool:
    return str(node.get("nodeName", "")).startswith("Scan") and "ReadSchema" in _metadata(node)


def lineage_event(record: dict[str, Any], number: int, source: str) -> Iterator[LoggedQuery | None]:
    """An OpenLineage RunEvent: its input datasets (and their symlinks' names) and, from its
    outputs' `columnLineage` facets, the fields read of each dataset, direct and indirect alike
    (a filter's or a join's field is read too). Its reader is its job, `namespace/name`. An
    event that names no dataset read is no query; one whose job or run is no object, malformed."""
    job, run = record["job"], record["run"]
    if not isinstance(job, dict) or not isinstance(run, dict):
        yield None
        return
    inputs = {key: _symlinks(d) for d in _objects(record.get("inputs")) if (key := _dataset_key(d))}
    facets = [_facet(o, "columnLineage") for o in _objects(record.get("outputs"))]
    told = bool(facets) and all(isinstance(f, dict) for f in facets)
    fields: dict[tuple[str, str], set[str]] = defaultdict(set)
    for facet in facets:
        for entry in _input_fields(facet):
            if (key := _dataset_key(entry)) and isinstance(entry.get("field"), str):
                fields[key].add(entry["field"])
    datasets = tuple(Dataset(*key, inputs.get(key, ()), frozenset(fields[key]) if told else None)
                     for key in dict.fromkeys([*inputs, *fields]))
    if datasets:
        name, namespace = as_text(job.get("name")), as_text(job.get("namespace"))
        user = name if namespace is None or name is None else f"{namespace}/{name}"
        yield LoggedQuery(number, source, instant(record.get("eventTime")), user, "",
                          datasets=datasets, run=as_text(run.get("runId")))


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON array (nothing from a value that is no array)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dataset_key(dataset: dict[str, Any]) -> tuple[str, str] | None:
    namespace, name = dataset.get("namespace"), dataset.get("name")
    return (namespace, name) if isinstance(namespace, str) and isinstance(name, str) else None


def _facet(dataset: dict[str, Any], name: str) -> Any:
    facets = dataset.get("facets")
    return facets.get(name) if isinstance(facets, dict) else None


def _symlinks(dataset: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A dataset's other names, from its symlinks facet (a table's name for its location; a
    name without its namespace, as some producers write it, still names the table)."""
    symlinks = _facet(dataset, "symlinks")
    found = _objects(symlinks.get("identifiers")) if isinstance(symlinks, dict) else []
    return tuple((as_text(i.get("namespace")) or "", i["name"]) for i in found if as_text(i.get("name")))


def _input_fields(facet: Any) -> Iterator[dict[str, Any]]:
    """The input fields a columnLineage facet names: each output field's, and the dataset-wide
    ones (filters, joins, grouping, sorting: `dataset`, facet version 1-2-0)."""
    if not isinstance(facet, dict):
        return
    outputs = facet.get("fields")
    for output in outputs.values() if isinstance(outputs, dict) else ():
        if isinstance(output, dict):
            yield from _objects(output.get("inputFields"))
    yield from _objects(facet.get("dataset"))


def scan_reads(scans: tuple[Scan, ...], location: str | None, names: dict[str, str]) -> Outcome:
    """The table's columns one Spark execution's scans read at its location."""
    if location is None:
        return "a Spark scan, but the table's location is not given"
    if any(s.location is None or s.read_schema is None for s in scans):
        return "a Spark data source V2 scan names no location"
    root = _path(location)
    ours = [s for s in scans if s.location and any(_under(p, root) for p in _locations(s.location))]
    return frozenset().union(*(_scan_columns(s, names) for s in ours)) if ours else None


def _scan_columns(scan: Scan, names: dict[str, str]) -> frozenset[str]:
    """The table's columns one scan reads: its `ReadSchema`'s, and the columns of it that Spark
    reads from directory names (partition columns: in its output, never in `ReadSchema`) when
    the plan uses them: all when no node above projects, else those a node above or a
    `PartitionFilters` names (`day#12`; by name, so another source's `day` counts too). A text
    Spark cut short (spark.sql.debug.maxToStringFields) may hide any: then all count."""
    read = _scanned(scan.read_schema or "", names)
    output = scan.output
    rest = [n for n in names.values() if n not in read and (output is None or _attribute(n, output))]
    if scan.flows or TRUNCATED in scan.uses:
        return read | frozenset(rest)
    return read | frozenset(n for n in rest if _attribute(n, scan.uses))


def _attribute(name: str, plan: str) -> bool:
    """Does a plan's text name a column of this name, as Spark prints an attribute (`day#12`)?"""
    return _attribute_pattern(name).search(plan) is not None


@lru_cache(maxsize=1024)
def _attribute_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|[\s\[(,]){re.escape(name)}#\d", re.IGNORECASE | re.MULTILINE)


def lineage_reads(datasets: tuple[Dataset, ...], parts: tuple[str, ...], location: str | None,
                  names: dict[str, str]) -> Outcome:
    """The table's columns one OpenLineage event reads: the fields its column lineage names of
    the table's datasets, a nested field (`addr.city`) as its top-level column."""
    root = None if location is None else _path(location)
    ours = [d for d in datasets if _is_table(d, parts, root)]
    if not ours:
        return None
    if any(d.fields is None for d in ours):
        return "an OpenLineage event without column lineage"
    return frozenset(c for d in ours for f in d.fields or () if (c := _field_column(f, names)) is not None)


def _is_table(dataset: Dataset, parts: tuple[str, ...], root: str | None) -> bool:
    """Is a dataset the table: at its location (or below), or named as it is (`db.t`), under its
    own name or a symlink's?"""
    for namespace, name in ((dataset.namespace, dataset.name), *dataset.aliases):
        if root is not None and _under(_path(_dataset_path(namespace, name)), root):
            return True
        if "/" not in name and names_table(tuple(name.lower().split(".")), parts):
            return True
    return False


def _dataset_path(namespace: str, name: str) -> str:
    """A file dataset's location from its OpenLineage name (spec, Naming): a local path under the
    namespace `file` (or `file://host`), else the path or key under a scheme and authority
    (`s3://bucket`, `hdfs://host:port`)."""
    if namespace == "file" or namespace.startswith("file:") or "://" not in namespace:
        return name
    return f"{namespace.rstrip('/')}/{name.lstrip('/')}"


def _field_column(field: str, names: dict[str, str]) -> str | None:
    """The table's top-level column an OpenLineage field is (or is a nested field of): a column's
    own name (Spark names an attribute so, a dot and all), else the top of a path as model.py
    writes one (`addr.city` is in `addr`, `` `a.b` `` is the column `a.b`, never in `a`)."""
    try:
        return names.get(field.lower()) or names.get(top_name(field).lower())
    except ValueError:  # no path (`[0]`, a backtick left open): no column of the table
        return None


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def _path(location: str) -> str:
    """A location without its `file:` scheme, as Spark's scans print local paths."""
    return location.strip().rstrip("/").removeprefix("file:").removeprefix("//")


def _locations(text: str) -> list[str]:
    """The root paths of a scan's `Location` (`InMemoryFileIndex(1 paths)[file:/a/t, ...]`);
    Spark lists them in its plan metadata only in this form."""
    inside = text[text.find("[") + 1:text.rfind("]")] if "[" in text else text
    return [_path(p) for p in inside.split(", ") if p.strip() and p.strip() != "..."]


def _scanned(read_schema: str, names: dict[str, str]) -> frozenset[str]:
    """The table's columns in a `ReadSchema` (`struct<a:bigint,s:struct<x:int>>`, Spark's catalog
    string: names unquoted, so a name may hold any character). Each of the table's names is read
    when a top-level field starts with it and a colon; a comma inside a name only adds starts,
    so a read is never missed (at worst a read is counted twice as conservatively)."""
    text = read_schema.strip()
    body = text[len("struct<"):-1] if text.startswith("struct<") and text.endswith(">") else ""
    starts, depth = [0], 0
    for i, ch in enumerate(body):
        depth += (ch in "<(") - (ch in ">)")
        if ch == "," and depth == 0:
            starts.append(i + 1)
    lowered = body.lower()
    return frozenset(name for low, name in names.items()
                     if body and any(lowered.startswith(f"{low}:", s) for s in starts))
