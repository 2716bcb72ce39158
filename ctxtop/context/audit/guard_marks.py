"""ctxtop's own hooks at work, as the transcript records them: a re-injection after a compaction, a denied call.

Claude Code writes a hook's added context into the log (a ``hook_success`` or
``hook_additional_context`` attachment: an injected block) and gives the model
a denied call's reason as the call's error result. ctxtop's hooks mark both
(``guard.reinject``, ``guard.judge`` use the marks here), so the audit can show
the loop closing: "re-injected by ctxtop", "blocked by ctxtop".

Some Claude Code versions drop a denial's reason before the model (and the
log) get it, keeping only "Hook PreToolUse:Bash denied this tool" (2.1.143,
2.1.220: anthropics/claude-code#59643, #82642); others write "PreToolUse:Bash
hook error: …" with it (#88292). Such a result after a call that broke a rule
is a call a hook stopped, whoever's hook it was: ``hook_blocked``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.parsers.model import INJECTED, TOOL_RESULT, Block, Entry

REINJECTED_MARK = "re-injected by ctxtop"
BLOCKED_MARK = "blocked by ctxtop"
# A mark is near the start of the block (after a "hook additional context:" or a denial prefix at most).
MARK_WITHIN_CHARS = 400
_RULE_ID = re.compile(r"rule \[([^\]\n]{1,80})\]")
_RULE_LINE = re.compile(r"^- (.+)$", re.MULTILINE)
_HOOK_DENIAL = re.compile(r"Hook PreToolUse:\S+ denied this tool|PreToolUse:\S+ hook error")


def guard_alert(message: int, block: Block) -> Alert | None:
    """The alert for a block that records one of ctxtop's hooks acting, else None.

    Only injected blocks and failed tool results are read (a denied call's result is an error):
    other tool output is never read back for this.
    """
    if block.category == INJECTED:
        text = block.text
        head = text[:MARK_WITHIN_CHARS]
        if REINJECTED_MARK in head:
            rules = _RULE_LINE.findall(text.split("Facts from before", 1)[0])  # (the lines guard.reinject writes)
            return Alert(AlertKind.GUARD_REINJECTED, message, None, None,
                         f"{REINJECTED_MARK}: {len(rules)} rule(s) the compaction lost, put back by its SessionStart hook")
    elif block.category == TOOL_RESULT and block.is_error:
        text = block.text
        if BLOCKED_MARK in text[:MARK_WITHIN_CHARS]:
            ids = list(dict.fromkeys(_RULE_ID.findall(text)))
            return Alert(AlertKind.GUARD_BLOCKED, message, None, ids[0] if ids else None,
                         f"{BLOCKED_MARK}: its PreToolUse hook denied a call that broke {', '.join(ids) or 'a rule'}")
    return None


def hook_denied(block: Block) -> bool:
    """Whether a failed tool result is Claude Code's record of a PreToolUse hook denying the call."""
    return block.category == TOOL_RESULT and block.is_error and _HOOK_DENIAL.search(block.text[:MARK_WITHIN_CHARS]) is not None


def hook_blocked(message: int, broken: list[Alert]) -> Alert:
    """The alert for a call that broke ``broken``'s rules and that a PreToolUse hook denied (``hook_denied``)."""
    ids = list(dict.fromkeys(alert.constraint for alert in broken if alert.constraint))
    return Alert(AlertKind.HOOK_BLOCKED, message, None, ids[0] if ids else None,
                 f"a PreToolUse hook denied a call that broke {', '.join(ids) or 'a rule'} (the log does not show "
                 f"whose hook: no ctxtop mark)")


def guard_alerts(entries: Iterable[Entry]) -> list[Alert]:
    return [alert for entry in entries for block in entry.blocks if (alert := guard_alert(entry.index, block)) is not None]
