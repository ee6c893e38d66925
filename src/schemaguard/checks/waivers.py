"""Waivers: a finding acknowledged in the configuration stays reported but does not fail a run
until its waiver expires; an expired waiver, or one that matches nothing, is a finding itself."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from schemaguard.checks.finding import CODES, Finding, FindingCode, Waiver, cited


def waive(findings: list[Finding], waivers: tuple[Waiver, ...]) -> list[Finding]:
    """Each finding with the waiver that names its key, if any."""
    by_key = {w.key: w for w in waivers}
    return [replace(f, waiver=by_key.get(f.key)) for f in findings]


def waiver_findings(waivers: tuple[Waiver, ...], findings: list[Finding], today: date) -> list[Finding]:
    """An expired waiver is a finding of its own (it no longer hides anything); so is one whose
    finding is gone (the problem was fixed: remove the waiver)."""
    keys = {f.key for f in findings}
    out = []
    for w in waivers:
        if not w.active(today):
            out.append(_about(w, FindingCode.WAIVER_EXPIRED, f"the waiver of {w.key} by {w.owner} expired on "
                              f"{w.expires}: the finding counts again; fix it or renew the waiver"))
        elif w.key not in keys:
            out.append(_about(w, FindingCode.WAIVER_UNMATCHED, f"the waiver of {w.key} by {w.owner} matches "
                              "no finding of this run: the problem is gone or the key is misspelt; "
                              "remove it"))
    return out


def _about(w: Waiver, code: FindingCode, message: str) -> Finding:
    evidence = (("owner", w.owner), ("reason", w.reason), ("expires", w.expires.isoformat()))
    return Finding(code, CODES[code].severity, message, 0, (), subject=w.key, evidence=evidence,
                   table=w.key.split(":", 1)[0], rule=cited(code))
