"""A compaction's forensics as short plain lines, for ``check`` and the TUI's alerts."""

from __future__ import annotations

from typing import Any

from ctxtop.context.output.markdown import cost_line
from ctxtop.context.sanitize import one_line


def forensics_headline(forensics: dict[str, Any]) -> str:
    """Generation, failure modes, recovery and claims in one line."""
    modes = ", ".join(m["mode"] for m in forensics["failure_modes"]) or "no failure mode found"
    claims = len(forensics["unsupported_claims"])
    return (f"generation {forensics['generation']}; {modes}; recovery {forensics['recovery']['verdict']}"
            + (f"; {claims} unsupported claim(s) in the summary" if claims else ""))


def forensics_summary(message: int, forensics: dict[str, Any]) -> list[str]:
    if not forensics:
        return []
    lines = [f"forensics compaction at message {message}: {forensics_headline(forensics)}",
             f"  cost: {one_line(cost_line(forensics['cost']), 200)}"]
    for mode in forensics["failure_modes"]:
        for evidence in mode["evidence"]:
            lines.append(f"  {mode['mode']} message {evidence['message']}: {one_line(evidence['text'], 160)}")
    for claim in forensics["unsupported_claims"]:
        lines.append(f"  unsupported claim: {one_line(claim['text'], 120)!r} — {one_line(claim['why'], 80)}")
    return lines
