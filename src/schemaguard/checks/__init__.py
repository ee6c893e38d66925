"""Every detector as a pure function of a table read (and the options of the audit), in one
ordered tuple: the findings of `scan`, `gate` and `audit` all come from here, so they can never
disagree. The order is the order findings are listed in.

Stage `checks` (sources -> lake -> formats -> history -> rules -> checks -> proofs -> plan ->
report).
May import: errors, acyclic, names, paths, model, base, formats, lake, rules.
Must not: read data (that is `proofs/`), or format output (`report/`).
"""

from __future__ import annotations

from collections.abc import Callable

from schemaguard.acyclic import acyclic
from schemaguard.checks.compat import CheckOptions, compatibility
from schemaguard.checks.delta import delta_unknown_columns
from schemaguard.checks.field_ids import field_id_changes, field_id_reuse
from schemaguard.checks.files import (
    encrypted_columns,
    no_data,
    stale_checksums,
    undecodable_names,
    unreadable_files,
)
from schemaguard.checks.finding import Finding
from schemaguard.checks.gate import merge_conflicts
from schemaguard.checks.iceberg import iceberg_field_ids, iceberg_schema_changes
from schemaguard.checks.spark_footer import spark_footer_disagreements, spark_refusals
from schemaguard.checks.versions import case_only, duplicates, layout_drift, missing_in_old, nullability
from schemaguard.lake.table import TableRead

__all__ = ["CHECKS", "Check", "CheckOptions", "run_checks"]

Check = Callable[[TableRead, CheckOptions], list[Finding]]

CHECKS: tuple[Check, ...] = (
    unreadable_files,
    undecodable_names,
    stale_checksums,
    no_data,
    encrypted_columns,
    spark_refusals,
    duplicates,
    merge_conflicts,
    delta_unknown_columns,
    iceberg_field_ids,
    iceberg_schema_changes,
    layout_drift,
    nullability,
    field_id_changes,
    case_only,
    missing_in_old,
    field_id_reuse,
    spark_footer_disagreements,
    compatibility,
)


@acyclic()
def run_checks(table: TableRead, options: CheckOptions | None = None) -> list[Finding]:
    """Every check's findings about one table, in `CHECKS` order."""
    opts = options or CheckOptions()
    return [f for check in CHECKS for f in check(table, opts)]
