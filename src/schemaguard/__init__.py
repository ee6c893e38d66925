"""schemaguard: a schema-change guard for Spark/Parquet data lakes.

    import schemaguard as sg
    result = sg.scan("lake/orders")          # or check, plan, gate, compare, merge, evolve, audit
    result.ok, result.exit_code, result.to_dict(), result.findings
    result.raise_for_status()                # ChecksFailed when it does not pass

The public names are those in `__all__`; everything else may change. Importing the package loads
none of them (nor pyspark): each loads on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers only: at run time each name loads on first use
    from schemaguard.api import audit, check, compare, evolve, gate, merge, plan, scan
    from schemaguard.base import Options
    from schemaguard.errors import ChecksFailed, InvalidInput, SchemaGuardError
    from schemaguard.meta import version
    from schemaguard.results import (
        AuditResult,
        CheckResult,
        CompareResult,
        EvolveResult,
        GateResult,
        MergeResult,
        PlanResult,
        Result,
        ScanResult,
    )

_FUNCTIONS = ("scan", "compare", "merge", "evolve", "gate", "check", "plan", "audit")
_WHERE = {
    **dict.fromkeys(_FUNCTIONS, "schemaguard.api"),
    **dict.fromkeys(("SchemaGuardError", "InvalidInput", "ChecksFailed"), "schemaguard.errors"),
    "version": "schemaguard.meta",
    "Options": "schemaguard.base",
    **dict.fromkeys(("Result", "ScanResult", "CompareResult", "MergeResult", "EvolveResult", "GateResult",
                     "CheckResult", "PlanResult", "AuditResult"), "schemaguard.results"),
}
__all__ = [  # noqa: RUF022 (the functions, the errors, the results)
    "scan", "compare", "merge", "evolve", "gate", "check", "plan", "audit",
    "SchemaGuardError", "InvalidInput", "ChecksFailed",
    "Result", "ScanResult", "CompareResult", "MergeResult", "EvolveResult", "GateResult", "CheckResult",
    "PlanResult", "AuditResult", "version", "Options",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'schemaguard' has no attribute {name!r}")
