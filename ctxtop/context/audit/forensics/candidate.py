"""Audit a candidate summary of a compaction exactly like the real one (``ctxtop replay-compaction``).

The candidate replaces the compaction's own summary in the window the model saw after it
(what the compaction kept besides its summary stays), and both windows are audited against
the window before: each rule's status, the facts lost, the unsupported claims, the tokens.
Also here: the transcript handed to a summarizer, as JSON-ready messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxtop.context.audit.forensics.pair import pair_facts
from ctxtop.context.audit.lost import lost_items
from ctxtop.context.rules.constraints import KEPT, Constraint, WindowText
from ctxtop.context.window.replay import Window, WindowBlock
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.parsers.model import ASSISTANT, REASONING, SUMMARY, SYSTEM, TOOL_CALL, TOOL_RESULT, USER, Block, Entry

TRANSCRIPT_SCHEMA = "ctxtop.replay-transcript/1"
_ROLES = {SYSTEM: "system", USER: "user", ASSISTANT: "assistant", REASONING: "assistant", TOOL_CALL: "assistant",
          TOOL_RESULT: "tool", SUMMARY: "user"}


def transcript(window: Window, compaction: int, number: int, model: str | None) -> dict[str, Any]:
    """What a summarizer reads on stdin: the window the compaction replaced, one item per block."""
    return {
        "schema": TRANSCRIPT_SCHEMA,
        "compaction": {"number": number, "message": compaction, "model": model},
        "messages": [
            {"message": item.entry.index, "role": _ROLES.get(item.category, "user"), "category": item.category,
             "tool_name": item.block.tool_name, "content": item.text}
            for item in window.blocks
        ],
    }


def with_summary(after: Window, compaction: int, summary: str, tokens: int) -> Window:
    """The window after the compaction with ``summary`` in place of the compaction's own summary."""
    entry = Entry(compaction, "user", [Block(SUMMARY, summary)], offset=0, line=0)
    candidate = WindowBlock(entry, 0, entry.blocks[0], tokens)
    blocks: list[WindowBlock] = []
    placed = False
    for item in after.blocks:
        if item.category == SUMMARY and item.entry.index >= compaction:
            if not placed:
                blocks.append(candidate)
                placed = True
            continue
        blocks.append(item)
    if not placed:  # the compaction left no summary we can read: the candidate goes first after what stays resident
        resident = sum(1 for item in blocks if item.entry.index < compaction)
        blocks.insert(resident, candidate)
    return Window(after.at, blocks, after.last_compaction)


def compare(before: Window, after: Window, compaction: int, constraints: list[Constraint], summary: str,
            counter: TokenCounter) -> dict[str, Any]:
    """The real compaction and the candidate summary side by side, audited the same way."""
    before_text = WindowText(before)
    candidate = with_summary(after, compaction, summary, counter.count(summary))
    real_side, candidate_side = (_side(before_text, after, compaction, constraints, counter.count),
                                 _side(before_text, candidate, compaction, constraints, counter.count))
    kept_before = [c.id for c in constraints if before_text.status(c).status == KEPT]
    return {
        "before": {c.id: before_text.status(c).status for c in constraints},
        "real": real_side,
        "candidate": candidate_side,
        # A rule the window held before and the candidate does not keep verbatim: what fails ``check --summarizer``.
        "candidate_loses": [cid for cid in kept_before if candidate_side["constraints"][cid] != KEPT],
    }


def _side(before: WindowText, after: Window, compaction: int, constraints: list[Constraint], count: Callable[[str], int]
          ) -> dict[str, Any]:
    after_text = WindowText(after)
    statuses = {c.id: after_text.status(c) for c in constraints}
    facts = pair_facts(before, after_text, after, compaction, count)
    return {
        "constraints": {cid: status.status for cid, status in statuses.items()},
        "missing_facts": {cid: status.missing_facts for cid, status in statuses.items() if status.missing_facts},
        "lost_items": lost_items(before, after_text),
        "unsupported_claims": facts["claims"],
        "tokens": facts["summary_tokens"],
    }
