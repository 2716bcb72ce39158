"""What the agent did after a compaction before its first change: did it recover its state?

Re-reading its state: a file it wrote before the compaction, or one named like a handoff,
notes, trace, plan, progress or TODO file. Verifying: ``git status``/``git diff`` (the
workspace) or the tests, run before any change. ``verified``: both before the first change;
``partial``: one of them; ``none``: neither (it changed things first, or did nothing to recover).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ctxtop.context.audit.forensics.actions import CHANGE, READ, STATE, VERIFY, Action
from ctxtop.context.audit.forensics.history import History, subject_key

STATE_WORDS = r"handoff|hand-off|notes?|traces?|plans?|progress|todos?|memory|status|journal|scratchpad"
# A whole word of the file's name (session_notes.md, implementationPlan.md), not a part of one: planner.py,
# stacktrace.py and ProgressBar.tsx are the project's code. Chinese names have no word boundaries.
STATE_FILE = re.compile(rf"(?:(?<![A-Za-z])|(?<=[a-z])(?=[A-Z]))(?i:{STATE_WORDS})(?![A-Za-z])|交接|笔记|计划|进度")


def recovery_of(after: list[Action], history: History) -> dict[str, Any]:
    actions: list[dict[str, Any]] = []
    reread = verified = False
    for action in after:
        if action.kind == CHANGE:
            actions.append({"message": action.message, "action": f"changed first: {action.label}"})
            break
        if action.kind == READ and is_state_file(action.subject, history):
            reread = True
            actions.append({"message": action.message, "action": f"re-read its state: {action.subject}"})
        elif action.kind == STATE:
            verified = True
            actions.append({"message": action.message, "action": f"checked the workspace: {action.subject}"})
        elif action.kind == VERIFY:
            verified = True
            actions.append({"message": action.message, "action": f"ran the tests before changing anything: {action.subject}"})
    verdict = "verified" if reread and verified else "partial" if reread or verified else "none"
    return {"verdict": verdict, "actions": actions}


def is_state_file(path: str, history: History) -> bool:
    return subject_key(path) in history.written or bool(STATE_FILE.search(posixpath.basename(path.rstrip("/"))))
