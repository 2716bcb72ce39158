"""Token estimates for the history of a whole log read: characters per token, calibrated per session.

Reading a whole log, tokenizing every text of its history is most of the cost,
and only the windows a user looks at need exact counts (the window on screen,
``export --at``, the previews): the history (timeline, per-tool totals, the
windows the audit reads) can go by an estimate. This one is each category's
own characters per token (its short texts apart), learnt on the blocks of that
category counted exactly (every count found in the caches, the first
CALIBRATION_CHARS of each). Estimates are marked as such wherever they are
shown; a test bounds their error on the fixtures.
"""

from __future__ import annotations

from ctxtop.parsers.model import CATEGORIES

# A category is counted exactly until this many of its characters were: then its ratio is known.
CALIBRATION_CHARS = 64_000
# Texts shorter than this are calibrated apart from the longer ones of their category: a few words,
# a tool call's arguments, tokenize unlike prose or code at length.
SHORT_CHARS = 400
# The ratio used before a category has any exact count (cl100k_base on English prose and code).
DEFAULT_CHARS_PER_TOKEN = 3.8
# A text this long is estimated from pieces of itself (its start, middle and end, SAMPLE_CHARS each)
# rather than from its category's ratio: one log dumped by a tool is unlike the tool output calibrated
# on (a 600,000-character server log in tests/context/test_tail_first.py: 33 % off by the ratio, within 2 % by
# its pieces), and such a text weighs the most.
SAMPLED_TEXT_CHARS = 128_000
SAMPLE_CHARS = 8_192


# What a short text of each known category is calibrated as (made once: asked for every text a whole log's read counts).
_SHORT_KINDS = {category: f"{category} (short)" for category in CATEGORIES}


def calibrated_kind(category: str, chars: int) -> str:
    """What a text of ``chars`` characters in ``category`` is calibrated with: its category's texts of its length."""
    if chars >= SHORT_CHARS:
        return category
    return _SHORT_KINDS.get(category) or f"{category} (short)"


class Calibration:
    """Characters and tokens counted exactly so far, per category."""

    def __init__(self) -> None:
        self._chars: dict[str, int] = {}
        self._tokens: dict[str, int] = {}

    def learn(self, category: str, chars: int, tokens: int) -> None:
        self._chars[category] = self._chars.get(category, 0) + chars
        self._tokens[category] = self._tokens.get(category, 0) + tokens

    def ready(self, category: str) -> bool:
        return self._chars.get(category, 0) >= CALIBRATION_CHARS

    def chars_per_token(self, category: str) -> float:
        tokens = self._tokens.get(category, 0)
        if tokens:
            return self._chars[category] / tokens
        # A category with no count yet borrows the session's overall ratio.
        chars, tokens = sum(self._chars.values()), sum(self._tokens.values())
        return chars / tokens if tokens else DEFAULT_CHARS_PER_TOKEN

    def estimate(self, category: str, chars: int) -> int:
        return max(1, round(chars / self.chars_per_token(category)))

    def saved(self) -> list:
        return [sorted(self._chars.items()), sorted(self._tokens.items())]

    def restore(self, saved: list) -> None:
        chars, tokens = saved
        self._chars, self._tokens = dict(chars), dict(tokens)


def sample_pieces(text: str) -> list[str]:
    """The start, middle and end of a long text (SAMPLE_CHARS each), to estimate it by."""
    middle = (len(text) - SAMPLE_CHARS) // 2
    return [text[:SAMPLE_CHARS], text[middle : middle + SAMPLE_CHARS], text[-SAMPLE_CHARS:]]


def sampled_estimate(text_chars: int, piece_chars: int, piece_tokens: int) -> int:
    """Tokens in a text of ``text_chars`` characters whose pieces of ``piece_chars`` hold ``piece_tokens``."""
    return max(1, round(piece_tokens * text_chars / piece_chars))
