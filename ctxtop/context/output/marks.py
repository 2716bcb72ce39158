"""The marks on a figure shown as an estimate or a guess: the same in the TUI, Markdown, HTML and ``watch``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxtop.context.audit.lost import MAX_LOST_ITEMS


def limit_mark(window: Mapping[str, Any]) -> str:
    """"≈" when the window's limit is one ctxtop fell back on (no --window, none in the log, a model it does not know):
    a guess."""
    return "≈" if window.get("limit_source") == "default" else ""


def use_mark(counts: Mapping[str, Any]) -> str:
    """"≈" when the size shown (``used_tokens`` of a snapshot's window or a ``watch`` record) is an estimate: the log
    reports none (ctxtop's count of the text it holds, in its encoding, not the model's: no call yet, a log that
    reports no usage, right after a compaction), or messages came after the last call (what it reported, and they)."""
    reported = counts["reported_tokens"]
    return "≈" if reported is None or counts["used_tokens"] != reported else ""


def lost_count(lost_items: Mapping[str, list[str]]) -> str:
    """How many facts a compaction lost, as far as its lists tell: "≥103" when a kind's list stopped at MAX_LOST_ITEMS
    (the audit lists a sample, not every fact), else the exact number."""
    count = sum(len(items) for items in lost_items.values())
    return f"≥{count}" if any(len(items) >= MAX_LOST_ITEMS for items in lost_items.values()) else str(count)


def more_facts(items: Sequence[str], shown: int) -> str:
    """What follows the first ``shown`` of a kind's lost facts: " (+N more)", and "and maybe others" when the list
    stopped at MAX_LOST_ITEMS (a sample: N is then only what the audit listed); "" when all are shown."""
    if len(items) <= shown:
        return ""
    return f" (+{len(items) - shown} more{', and maybe others' if len(items) >= MAX_LOST_ITEMS else ''})"
