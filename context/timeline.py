"""The window's size after every message, per category: what the TUI's timeline draws."""

from __future__ import annotations

from dataclasses import dataclass

from parsers.model import CATEGORIES, Entry

from .session import Session
from .window import Replay, Window


@dataclass(slots=True)
class TimelinePoint:
    message: int
    tokens: tuple[int, ...]  # per category, in CATEGORIES order
    compaction: bool  # a compaction marker is this message

    @property
    def total(self) -> int:
        return sum(self.tokens)


def point_of(window: Window, entry: Entry) -> TimelinePoint:
    return TimelinePoint(window.at, tuple(window.totals[name].tokens for name in CATEGORIES), entry.compaction is not None)


def timeline(session: Session) -> list[TimelinePoint]:
    """One point per message, from a single replay of the session."""
    return [point_of(window, session.entries[window.at - 1]) for window in Replay(session.entries, session.accounting).run()]
