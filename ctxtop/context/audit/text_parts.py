"""The parts of a long text that a bounded search reads: its start and its end."""

from __future__ import annotations


def text_parts(length: int, part: int | None) -> list[tuple[int, int]]:
    """The spans of a text of ``length`` characters that are read: all of it, or with ``part``, when it is longer
    than twice that, its first and last ``part`` characters. (The guard reads so a tool input of megabytes: its
    patterns, tried at each character, take a second per 10 MB, and a hook that takes seconds holds the agent up.)"""
    if part is None or length <= 2 * part:
        return [(0, length)]
    return [(0, part), (length - part, length)]
