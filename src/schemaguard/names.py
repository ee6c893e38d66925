"""The names the command line offers and checks its arguments against: reader profiles, modes,
identity rules and reader options. They live apart from the modules that implement them, so that
`schemaguard --help` and a mistyped option load no rule module (start-up counts). Each
implementing module takes its names from here: `rules/profiles.py` builds one profile per name
(and a test holds the two equal), `rules/modes.py`, `model.py` and `base.py` use these types.

May import: nothing of the package (everything else is built on these names).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal, get_args

# A catalog, database, table or view name part: what Spark accepts unquoted. Names are validated
# with it and still quoted wherever they reach SQL.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_table_name(text: str) -> bool:
    """Whether `text` names a catalog table: db.table or catalog.db.table, each part a NAME."""
    parts = text.split(".")
    return len(parts) in (2, 3) and all(NAME.fullmatch(p) for p in parts)


Identity = Literal["name", "name-ci", "id", "position"]
ColumnMapping = Literal["none", "name", "id"]  # Delta's delta.columnMapping.mode
IcebergVersion = Literal[2, 3]  # Iceberg's format-version
IDENTITIES: tuple[Identity, ...] = get_args(Identity)
COLUMN_MAPPINGS: tuple[ColumnMapping, ...] = get_args(ColumnMapping)
ICEBERG_VERSIONS: tuple[IcebergVersion, ...] = get_args(IcebergVersion)

# rules/profiles.py's registry, in its order; the merge profiles are those that merge many schemas.
PROFILE_NAMES = ("avro", "spark-read", "spark-merge", "delta-merge", "delta-write", "delta-merge-into",
                 "delta-read", "delta-stream", "iceberg", "positional")
MERGE_PROFILE_NAMES = ("spark-merge", "delta-merge")


class Mode(StrEnum):
    BACKWARD = "BACKWARD"
    FORWARD = "FORWARD"
    FULL = "FULL"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"
    NONE = "NONE"
