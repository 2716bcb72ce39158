"""ctxtop's own hooks at work, as the transcript records them: a re-injection after a compaction, a denied call.

Claude Code writes a hook's added context into the log (a ``hook_success`` or
``hook_additional_context`` attachment: an injected block) and gives the model
a denied call's reason as the call's error result. ctxtop's hooks mark both
(``guard.reinject``, ``guard.judge`` use the marks here), so the audit can show
the loop closing: "re-injected by ctxtop", "blocked by ctxtop".
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


def guard_alerts(entries: Iterable[Entry]) -> list[Alert]:
    return [alert for entry in entries for block in entry.blocks if (alert := guard_alert(entry.index, block)) is not None]
