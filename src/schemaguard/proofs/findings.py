"""Proof results as audit findings: a refuted proof is the finding its kind names, an unknown one
is `PROOF_UNKNOWN` (the audit could not prove what the configuration asks it to), a proven one
is no finding (its row in the catalog's `proofs` table says it held)."""

from __future__ import annotations

from schemaguard.checks.finding import CODES, Finding, FindingCode, cited
from schemaguard.proofs import ProofKind, ProofResult

REFUTED: dict[ProofKind, FindingCode] = {
    "not-null": FindingCode.NULLS_BLOCK_TIGHTENING,
    "backfilled": FindingCode.BACKFILL_INCOMPLETE,
    "agree": FindingCode.DUAL_WRITE_DISAGREES,
    "fits": FindingCode.VALUE_OUT_OF_RANGE,
    "values": FindingCode.ENUM_VALUE_UNEXPECTED,
    "unit-drift": FindingCode.UNIT_DRIFT_SUSPECTED,
}


def proof_finding(r: ProofResult) -> Finding | None:
    """The finding a proof's result makes (None: proven)."""
    if r.verdict == "proven":
        return None
    code = REFUTED[r.proof.kind] if r.verdict == "refuted" else FindingCode.PROOF_UNKNOWN
    message = (f"{r.proof.label}: {r.verdict}" + (f" ({r.count:,} offending)" if r.count else "")
               + (f": {r.why}" if r.why else ""))
    files = tuple(dict.fromkeys((*r.files, *r.files_absent, *r.files_unknown)))
    evidence = [("decided by", r.decided_by), ("rows read", f"{r.rows_read:,}"),
                *((k, str(v)) for row in r.sample[:3] for k, v in row.items())]
    return Finding(code, CODES[code].severity, message, len(files), files, r.proof.column,
                   rule=cited(code), subject=f"{r.proof.kind}:{r.proof.spelled}", partitions=r.partitions,
                   partition_count=r.partition_count, evidence=tuple(evidence))
