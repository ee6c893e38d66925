"""Reading a schema source's bytes through pyarrow's filesystem layer, with one-line errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemaguard.errors import UsageError, first_line, require_regular

if TYPE_CHECKING:  # loaded where a filesystem is met: a caller that has one has loaded pyarrow
    from pyarrow import fs as pafs


class SchemaLoadError(UsageError):
    """A source that cannot be loaded; the message is one line naming the file and the problem."""


def inside(source: str, rel: str) -> str:
    """How a file inside a source is named in messages."""
    return f"{source.rstrip('/')}/{rel}"


def file_info(filesystem: pafs.FileSystem, path: str, shown: str) -> pafs.FileInfo:
    import pyarrow as pa

    try:
        return filesystem.get_file_info(path)
    except (OSError, pa.ArrowException) as e:
        raise SchemaLoadError(f"{shown}: cannot be read: {first_line(e)}") from None


def read_bytes(filesystem: pafs.FileSystem, path: str, shown: str, limit: int | None = None) -> bytes:
    """The file's bytes; only the first `limit` of them when a limit is given."""
    import pyarrow as pa
    from pyarrow import fs as pafs

    if isinstance(filesystem, pafs.LocalFileSystem):
        require_regular(path, shown)
    try:
        with filesystem.open_input_file(path) as f:
            return bytes(f.read_at(min(limit, f.size()), 0) if limit is not None else f.read())
    except (OSError, pa.ArrowException) as e:
        raise SchemaLoadError(f"{shown}: cannot be read: {first_line(e)}") from None
