"""PreToolUse: does the call about to be made break a rule in force? Judged exactly as the audit judges
a call in the log (``audit.violations``): ``forbid`` patterns, a forbidden channel, protected data, an
amount over a cap."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ctxtop.context.audit.alerts import AlertKind
from ctxtop.context.audit.guard_marks import BLOCKED_MARK  # how the transcript shows the denial afterwards
from ctxtop.context.audit.violations import checks_of, violations_of
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.sanitize import one_line
from ctxtop.parsers.model import TOOL_CALL, Block

# The call is judged as a message after every one in the log, so every rule in force applies to it.
AFTER_THE_LOG = 1 << 62


@dataclass(slots=True)
class Breach:
    rule: Constraint
    detail: str  # what the audit says of the call: "send_email: uses a forbidden channel"


def judge_call(tool_name: str, tool_input: Any, rules: list[Constraint]) -> list[Breach]:
    """The rules the call breaks, each with why (empty: the call may go on)."""
    checks = checks_of(rules)
    if not checks:
        return []
    # The log holds a tool call's input as its JSON text; the hook is given the object.
    text = tool_input if isinstance(tool_input, str) else json.dumps(tool_input, ensure_ascii=False)
    block = Block(TOOL_CALL, text, tool_name=tool_name or None)
    by_id = {rule.id: rule for rule in rules}
    return [Breach(by_id[alert.constraint], alert.detail) for alert in violations_of(AFTER_THE_LOG, block, text, checks)
            if alert.kind is AlertKind.VIOLATION and alert.constraint in by_id]


def denial_reason(breaches: list[Breach]) -> str:
    """The reason shown to the model (and recognized later in the transcript): each rule, verbatim, and why."""
    lines = [f"{BLOCKED_MARK}: this call breaks a rule in force for this session."]
    for breach in breaches:
        lines.append(f"- rule [{one_line(breach.rule.id, 60)}] {one_line(breach.rule.text)} — {one_line(breach.detail, 300)}")
    lines.append("Do not retry it another way; ask the user.")
    return "\n".join(lines)
