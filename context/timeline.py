"""The window's size after every message, per category: what the TUI's timeline draws."""

from __future__ import annotations

from dataclasses import dataclass

from parsers.model import CATEGORIES

from .session import Session
from .window import Replay


@dataclass(slots=True)
class TimelinePoint:
    message: int
    tokens: tuple[int, ...]  # per category, in CATEGORIES order
    compaction: bool  # a compaction marker is this message

    @property
    def total(self) -> int:
        return sum(self.tokens)


def timeline(session: Session) -> list[TimelinePoint]:
    """One point per message, from a single replay of the session."""
    points = []
    for window in Replay(session.entries, session.accounting).run():
        entry = session.entries[window.at - 1]
        points.append(
            TimelinePoint(
                window.at,
                tuple(window.totals[name].tokens for name in CATEGORIES),
                entry.compaction is not None,
            )
        )
    return points
