"""What the forensics read from the two windows of a compaction, kept with the rest of its audit.

Only the windows' text is read here (the actions come from the audit's pass over the
entries), so the result is remembered with the compaction's audit under the same key:
the rejected options before, the summary's "still to do" sentences, its unsupported claims,
which summaries the summarizer was given (the generation), and the summary's size.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ctxtop.context.audit.forensics.claims import unsupported_claims
from ctxtop.context.audit.sentences import sentences
from ctxtop.context.rules.constraints import WindowText
from ctxtop.context.rules.patterns import KeywordGate, any_of
from ctxtop.context.sanitize import cut
from ctxtop.context.window.replay import Window
from ctxtop.parsers.model import ASSISTANT, INJECTED, REASONING, SUMMARY, SYSTEM, USER

MAX_ITEMS = 30
SCAN_CHARS = 4000  # of each block: a multi-MB output is not where decisions are written
_WRITERS = frozenset({SYSTEM, INJECTED, USER, ASSISTANT, REASONING, SUMMARY})
_END = r"(?P<option>[^.;,:!?\n。；，！？]{3,60})"
_DECIDED = ("decided", "decide", "chose", "choose", "agreed")  # … not to / against
_DROPPED = ("rejected", "ruled out", "gave up on", "abandoned", "dropped the idea of", "vetoed")
_WONT = ("won't", "will not", "shouldn't", "should not", "do not", "don't")  # … use / add / adopt
_DROPPED_ZH = ("不用", "放弃", "否决了", "否决", "不再使用", "不引入", "不采用", "弃用")
REJECTION = re.compile(
    rf"\b{any_of(_DECIDED)}\s+(?:not\s+to|against)\s+" + _END
    + rf"|\b{any_of(_DROPPED)}\s+"
    + r"(?:the\s+(?:idea|option|approach)\s+(?:of|to)\s+)?" + _END.replace("option", "option2")
    + rf"|\b{any_of(_WONT)}\s+(?:use|add|introduce|adopt|pull in|depend on)\s+" + _END.replace("option", "option3")
    + rf"|{any_of(_DROPPED_ZH)}(?P<option4>[^，。；！？,.;!?\n]{{2,30}})",
    re.IGNORECASE,
)
# Every match of REJECTION holds one of the words it starts with as it is (spaces included).
REJECTION_WORDS = KeywordGate(*_DECIDED, *_DROPPED, *_WONT, *_DROPPED_ZH)
PENDING = re.compile(
    r"\b(?:pending|todo|to-do|next steps?|still (?:need|needs|has|have) to|not yet|remaining|remains? to|yet to|need to|needs to)\b"
    r"|待办|未完成|下一步|还需|尚未|待处理|接下来",
    re.IGNORECASE,
)


def option_of(match: re.Match) -> str:
    return next(group for group in match.groups() if group).strip()


def pair_facts(before: WindowText, after: WindowText, after_window: Window, compaction: int,
               count: Callable[[str], int] | None = None) -> dict[str, Any]:
    """The window-only part of a compaction's forensics (JSON-ready: it is cached). ``count``: the exact count of a
    text, for the summary's tokens (else the window's counts, which a read of the whole log may have estimated: the
    figure would then depend on what the token cache held)."""
    rejections: list[list[Any]] = []
    # (Only the blocks people and the agent write, and only while there is room: most of a window is tool output.)
    for (message, text, _), category in zip(before.blocks, before.categories):
        if category in _WRITERS and REJECTION_WORDS.may_match(head := text[:SCAN_CHARS]):
            for match in REJECTION.finditer(head):
                rejections.append([message, _sentence_around(text, match), option_of(match)])
            if len(rejections) >= MAX_ITEMS:
                break
    summary_blocks = [(message, text, item_tokens) for (message, text, _), category, item_tokens
                      in zip(after.blocks, after.categories, _tokens(after, after_window)) if category == SUMMARY and message >= compaction]
    pending: list[list[Any]] = []
    for message, text, _ in summary_blocks:
        for sentence in sentences(text):
            if len(pending) < MAX_ITEMS and PENDING.search(sentence):
                pending.append([message, cut(sentence, 300)])
    summaries = [text for _, text, _ in summary_blocks]
    return {
        "rejections": rejections[:MAX_ITEMS],
        "pending": pending,
        "claims": unsupported_claims(_sources(before), summaries, before.joined()) if summaries else [],
        "summaries_before": sorted({message for (message, _, _), category in zip(before.blocks, before.categories) if category == SUMMARY}),
        "summary_tokens": (sum(count(text) if count is not None else tokens for _, text, tokens in summary_blocks)
                           if summary_blocks else None),
    }


def _sources(text: WindowText) -> list[tuple[str, str, str]]:
    """Each block as ``unsupported_claims`` reads it: (category, text, normalized text)."""
    return [(category, block, normalized) for (_, block, normalized), category in zip(text.blocks, text.categories)]


def _tokens(text: WindowText, window: Window) -> list[int]:
    blocks = window.blocks
    return [blocks[index].tokens for index in text.window_index]


def _sentence_around(text: str, match: re.Match) -> str:
    start = max(text.rfind(mark, 0, match.start()) for mark in ("\n", "。", ". ", "；", ";")) + 1
    ends = [e for e in (text.find(mark, match.end()) for mark in ("\n", "。", ". ", "；", ";")) if e >= 0]
    return cut(text[start:min(ends) if ends else len(text)].strip(), 300)
