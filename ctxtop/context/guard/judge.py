"""PreToolUse: does the call about to be made break a rule in force? Judged exactly as the audit judges
a call in the log (``audit.violations``): ``forbid`` patterns, a forbidden channel, protected data, an
amount over a cap."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctxtop.context.audit.alerts import AlertKind
from ctxtop.context.audit.guard_marks import BLOCKED_MARK  # how the transcript shows the denial afterwards
from ctxtop.context.audit.violations import checks_of, violations_of
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.sanitize import one_line
from ctxtop.parsers.model import TOOL_CALL, Block

# The start of the reason when the call is put to the user (``--ask``, or a rule it could not be judged against).
ASKING_MARK = "ctxtop asks"
# The call is judged as a message after every one in the log, so every rule in force applies to it.
AFTER_THE_LOG = 1 << 62
# An input longer than twice this is searched for phone numbers and a command's amounts in its first and last
# this many characters: searched whole, 10 MB took two seconds, a hook Claude Code waits for on every call. (Its
# JSON is still decoded whole: amounts under their keys are found anywhere.) The rules so checked are put to the
# user when the parts read break none of them: a call made long enough must not get through unseen.
READ_PART = 256 * 1024


@dataclass(slots=True)
class Breach:
    rule: Constraint
    detail: str  # what the audit says of the call: "send_email: uses a forbidden channel"


@dataclass(slots=True)
class Verdict:
    breaches: list[Breach] = field(default_factory=list)  # the rules the call breaks (empty: none it was judged to)
    # The rules it could not be judged against: a forbid pattern ran out of time on its input, its input was read only
    # in part (READ_PART), or it pays in another currency than a cap's (the detail says so). An input made long enough
    # to time a pattern out must not get the call through unseen; nor may a payment ctxtop cannot weigh against a cap,
    # which it cannot call broken either.
    unchecked: list[Breach] = field(default_factory=list)


def judge_call(tool_name: str, tool_input: Any, rules: list[Constraint]) -> Verdict:
    """The rules the call breaks, each with why, and those it could not be judged against."""
    checks = checks_of(rules)
    if not checks:
        return Verdict()
    # The log holds a tool call's input as its JSON text; the hook is given the object.
    text = tool_input if isinstance(tool_input, str) else json.dumps(tool_input, ensure_ascii=False)
    block = Block(TOOL_CALL, text, tool_name=tool_name or None)
    by_id = {rule.id: rule for rule in rules}
    verdict = Verdict()
    for alert in violations_of(AFTER_THE_LOG, block, text, checks, READ_PART):
        if alert.constraint in by_id:
            if alert.kind is AlertKind.VIOLATION:
                verdict.breaches.append(Breach(by_id[alert.constraint], alert.detail))
            elif alert.kind in (AlertKind.FORBID_SKIPPED, AlertKind.AMOUNT_NOT_COMPARED):
                verdict.unchecked.append(Breach(by_id[alert.constraint], alert.detail))
    return verdict


def denial_reason(breaches: list[Breach], *, asking: bool = False) -> str:
    """The reason shown to the model when the call is denied (and recognized later in the transcript): each rule,
    verbatim, and why. ``asking``: shown to the user, who decides."""
    lines = [f"{ASKING_MARK if asking else BLOCKED_MARK}: this call breaks a rule in force for this session."]
    lines += [_rule_line(breach) for breach in breaches]
    lines.append("Allow it only if the rule no longer applies." if asking else "Do not retry it another way; ask the user.")
    return "\n".join(lines)


def unchecked_reason(unchecked: list[Breach]) -> str:
    """The reason shown to the user when the call could not be judged against some rule in time."""
    lines = [f"{ASKING_MARK}: this call could not be checked against a rule in force for this session."]
    lines += [_rule_line(breach) for breach in unchecked]
    lines.append("Allow it only if it does not break the rule.")
    return "\n".join(lines)


def _rule_line(breach: Breach) -> str:
    return f"- rule [{one_line(breach.rule.id, 60)}] {one_line(breach.rule.text)} — {one_line(breach.detail, 300)}"
