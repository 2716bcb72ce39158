"""The parts of a long text that a bounded search reads: its start and its end."""

from __future__ import annotations

import re
from collections.abc import Iterator


def text_parts(length: int, part: int | None) -> list[tuple[int, int]]:
    """The spans of a text of ``length`` characters that are read: all of it, or with ``part``, when it is longer
    than twice that, its first and last ``part`` characters. (The guard reads so a tool input of megabytes: its
    patterns, tried at each character, take a second per 10 MB, and a hook that takes seconds holds the agent up.)"""
    if part is None or length <= 2 * part:
        return [(0, length)]
    return [(0, part), (length - part, length)]


def read_in_part(length: int, part: int | None) -> bool:
    """Whether a text of ``length`` characters is read only in part (``text_parts``)."""
    return part is not None and length > 2 * part


def matches_in_parts(pattern: re.Pattern[str], text: str, part: int | None) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` in the parts of ``text`` read, in order, but none that ends where a part does
    before the text's end: what follows may belong to it ("amount=12600" is no "amount=126", "api.stripe.com" may
    go on as "api.stripe.com.evil.net")."""
    for start, end in text_parts(len(text), part):
        for match in pattern.finditer(text, start, end):
            if not match.end() == end < len(text):
                yield match
