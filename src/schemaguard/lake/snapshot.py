"""What a table format's snapshot makes of a directory: the files it references, as a listing,
and footers relabelled with the logical names (and ids) its readers bind columns by.

Delta (lake/delta.py) and Iceberg (lake/iceberg.py) both read a snapshot's files from their logs
rather than from the directory, and both join a footer's physical columns to logical ones
(Delta's column mapping by physical name or id, Iceberg by field id or name mapping): the two
share these helpers and differ only in what they pass.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from schemaguard.formats.parquet import FooterSchema
from schemaguard.lake.discover import Listing, spark_order_key
from schemaguard.lake.file_records import DataFile, DataFiles, Footers
from schemaguard.model import DataType, Field, SchemaTransform, canonical_json, transform, walk


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a snapshot read covers, as a listing, and the listed data files it leaves out."""

    listing: Listing  # the snapshot's files (plus the unreferenced ones when they are included)
    unreferenced: tuple[DataFile, ...]  # on disk, referenced by no live entry of the snapshot


def snapshot_listing(listing: Listing, referenced: Iterable[DataFile], partition_columns: tuple[str, ...],
                     include_unreferenced: bool, metadata_dir: str,
                     other_live: Iterable[str] = ()) -> Snapshot:
    """The listing narrowed to the snapshot's files (each given with the log's path as `rel`, made
    relative to the table root here), in Spark's order; files below `metadata_dir/` are the
    format's own, and `other_live` (log paths: Iceberg's delete files) the snapshot's too, so
    neither is ever unreferenced data."""
    root = listing.root.rstrip("/")
    files = []
    for f in referenced:
        rel = relative(f.rel, root)
        path = rel if "://" in rel or rel.startswith("/") else f"{root}/{rel}"
        files.append(replace(f, path=path, rel=rel))
    known = {f.rel for f in files} | {relative(p, root) for p in other_live}
    unreferenced = tuple(d for d in listing.files
                         if d.rel not in known and not d.rel.startswith(f"{metadata_dir}/"))
    if include_unreferenced:
        files += unreferenced
    files.sort(key=lambda d: spark_order_key(d.rel))
    narrowed = replace(listing, files=DataFiles(files), partition_columns=partition_columns)
    return Snapshot(narrowed, unreferenced)


def relative(path: str, root: str) -> str:
    """A log's path relative to the table root when it lies below it (Delta allows absolute paths
    for shallow clones; Iceberg's are always absolute), as a local path when it is a file URI."""
    bare = root.removeprefix("file://").removeprefix("file:")
    for prefix in (f"{root}/", f"file:{bare}/", f"file://{bare}/", f"{bare}/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    if path.startswith("file://"):
        return path[len("file://"):]
    return path[len("file:"):] if path.startswith("file:/") else path


# ---------------------------------------------------------------------------------------------
# Footers relabelled: physical columns joined to logical ones

Label = Callable[[Field, str], tuple[str, "int | None"]]  # (field, physical path) -> (name, id)
NotNull = Callable[[str], frozenset[str]]  # a file's path -> physical paths the format holds to a value


def relabel(footers: Footers, label: Label, not_null: NotNull | None = None) -> Footers:
    """Footers with each field named (and numbered) as `label` says, and not nullable where
    `not_null` says the table format guarantees a value whatever the footer says. Worked out once
    per distinct footer schema (and set of NOT NULL paths), not per file."""
    schemas = footers.schemas()
    done: dict[tuple[int, frozenset[str]], FooterSchema] = {}

    def relabelled(i: int, code: int) -> FooterSchema:
        key = (code, not_null(footers.rel(i)) if not_null is not None else frozenset())
        footer = done.get(key)
        if footer is None:
            footer = done[key] = _relabelled(schemas[code], label, key[1])
        return footer

    return footers.with_footers(relabelled(i, code) for i, code in enumerate(footers.footer_codes()))


def _relabelled(footer: FooterSchema, label: Label, not_null: frozenset[str] = frozenset()) -> FooterSchema:
    relabel = _Relabel(label, not_null)
    schema = transform(footer.schema, relabel)
    if not relabel.applied:
        return footer
    paths = {old: new for (old, _, _), (new, _, _) in zip(walk(footer.schema), walk(schema), strict=True)}
    spark = transform(footer.spark_schema, relabel) if footer.spark_schema is not None else None
    applied = canonical_json(sorted(relabel.applied.items()))
    return replace(
        footer, schema=schema, spark_schema=spark,
        columns=tuple(c._replace(path=paths.get(c.path, c.path)) for c in footer.columns),
        # a name of its own: the leaf texts and versions are cached and grouped by fingerprint
        fingerprint=hashlib.sha256(f"{footer.fingerprint}{applied}".encode()).hexdigest()[:16])


class _Relabel(SchemaTransform):
    """Each field of a footer given its logical name and id, by its physical path."""

    def __init__(self, label: Label, not_null: frozenset[str] = frozenset()) -> None:
        self.label, self.not_null = label, not_null
        self.applied: dict[str, list[object]] = {}

    def field(self, f: Field, path: str, type_result: DataType) -> Field:
        name, fid = self.label(f, path)
        nullable = f.nullable and path not in self.not_null
        if name != f.name or fid != f.id or nullable != f.nullable:
            self.applied[path] = [name, fid] if nullable == f.nullable else [name, fid, "not null"]
        return replace(f, name=name, id=fid, nullable=nullable, type=type_result)
