"""The window's size after every message, per category: what the TUI's timeline draws.

Kept as columns, 4 bytes a category a message (8 once a count needs it: only
a log reporting absurd usage gets there): a point object per message (a
dataclass, a tuple, an int per category) costs some 800 bytes, more than a
packed message itself, and a 1 GB log has half a million of them.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ctxtop.context.window.harness import INFERRED, split_unexplained
from ctxtop.context.window.replay import Window
from ctxtop.parsers.model import CATEGORIES, UNATTRIBUTED, Entry

# A point's rows: the counted categories, then what the log reports beyond them (the inferred system
# prompt and tools, and the rest), so that a column is as tall as the window the header shows.
COUNTED_ROWS = CATEGORIES[:-1]
ROWS: tuple[str, ...] = (*COUNTED_ROWS, INFERRED, UNATTRIBUTED)
WIDTH = len(ROWS)


@dataclass(slots=True)
class TimelinePoint:
    message: int
    tokens: tuple[int, ...]  # per row, in ROWS order
    compaction: bool  # a compaction marker is this message

    @property
    def total(self) -> int:
        return sum(self.tokens)


def point_of(window: Window, entry: Entry) -> TimelinePoint:
    return TimelinePoint(window.at, tuple(_rows(window)), entry.compaction is not None)


def _rows(window: Window) -> list[int]:
    totals = window.totals
    rows = [totals[name].tokens for name in COUNTED_ROWS]
    rows += split_unexplained(sum(rows), window.harness, window.reported, window.added_since_call())
    return rows


class Timeline:
    """Points of messages 1, 2, ... in order, appended by one writer (the session's replay)."""

    def __init__(self) -> None:
        self._tokens = array("i")  # WIDTH per message (widened to "q" by the first count past 2^31 - 1)
        self._totals = array("q")
        self._compactions: list[int] = []  # positions (0-based) of the messages that are compaction markers

    def __len__(self) -> int:
        return len(self._totals)

    def add(self, window: Window, entry: Entry) -> None:
        tokens = _rows(window)
        if entry.compaction is not None:
            self._compactions.append(len(self._totals))
        filled = len(self._tokens)
        try:
            self._tokens.fromlist(tokens)  # (twice as quick as extend from a list, at every message)
        except OverflowError:
            del self._tokens[filled:]  # (fromlist leaves the array as it was; this makes sure)
            self._tokens = array("q", self._tokens)
            self._tokens.fromlist(tokens)
        self._totals.append(sum(tokens))

    def compaction_markers(self) -> list[int]:
        """The positions (0-based) of the messages that are compaction markers, in order."""
        return list(self._compactions)

    def truncate(self, length: int) -> None:
        """Drop the points from ``length`` on (the messages they stand for changed)."""
        del self._tokens[length * WIDTH :]
        del self._totals[length:]
        del self._compactions[bisect_left(self._compactions, length) :]

    def columns(self) -> tuple[str, bytes, bytes, list[int]]:
        """The points as plain data (for a saved index); ``from_columns`` reads them back."""
        return self._tokens.typecode, self._tokens.tobytes(), self._totals.tobytes(), list(self._compactions)

    @classmethod
    def from_columns(cls, columns: tuple[str, bytes, bytes, list[int]]) -> Timeline:
        typecode, tokens, totals, compactions = columns
        timeline = cls()
        timeline._tokens = array("q" if typecode == "q" else "i")
        timeline._tokens.frombytes(tokens)
        timeline._totals.frombytes(totals)
        if len(timeline._tokens) != WIDTH * len(timeline._totals):
            raise ValueError("a saved timeline whose columns disagree")
        timeline._compactions = list(compactions)
        return timeline

    def view(self, length: int, ahead: Sequence[TimelinePoint] = ()) -> TimelineView:
        """The first ``length`` points, then ``ahead`` (points of messages that may still change)."""
        return TimelineView(self, min(length, len(self)), tuple(ahead))


class TimelineView(Sequence[TimelinePoint]):
    """A fixed set of points to draw: reading it while the session's replay goes on is safe
    (the replay only appends past ``length``)."""

    def __init__(self, settled: Timeline, length: int, ahead: tuple[TimelinePoint, ...], marks: Sequence[int] = ()) -> None:
        self._settled, self._length, self._ahead = settled, length, ahead
        self._marks = sorted(set(marks))  # more compactions (0-based positions): those no marker records (implicit)

    def with_marks(self, positions: Iterable[int]) -> TimelineView:
        """This view, with the messages at ``positions`` (0-based) marked as compactions too: the implicit ones
        the audit finds where the reported prompt falls, which no entry marks."""
        return TimelineView(self._settled, self._length, self._ahead, [*self._marks, *positions])

    def __len__(self) -> int:
        return self._length + len(self._ahead)

    def __getitem__(self, position: int) -> TimelinePoint:  # type: ignore[override]
        if position < 0:
            position += len(self)
        if position >= self._length:
            point = self._ahead[position - self._length]
            if not point.compaction and self._marked_in(position, position + 1) is not None:
                point = TimelinePoint(point.message, point.tokens, True)
            return point
        settled = self._settled
        tokens = tuple(settled._tokens[position * WIDTH : (position + 1) * WIDTH])  # noqa: SLF001 - its own view
        if len(tokens) < WIDTH:  # truncated under us (a change to the session): read as empty until redrawn
            tokens = (0,) * WIDTH
        compacted = self._settled_compaction_in(position, position + 1) is not None or self._marked_in(position, position + 1) is not None
        return TimelinePoint(position + 1, tokens, compacted)

    def __iter__(self) -> Iterator[TimelinePoint]:
        for position in range(len(self)):
            yield self[position]

    def total(self, position: int) -> int:
        if position >= self._length:
            return self._ahead[position - self._length].total
        totals = self._settled._totals  # noqa: SLF001
        return totals[position] if position < len(totals) else 0

    def tallest(self, start: int, stop: int) -> int:
        """The position of the message with the most tokens in [start, stop) (the first of equals)."""
        best, best_total = start, -1
        settled_stop = min(stop, self._length)
        if start < settled_stop:
            part = self._settled._totals[start:settled_stop]  # noqa: SLF001 - one C-level scan, not a Python loop
            if part:
                best_total = max(part)
                best = start + part.index(best_total)
        for position in range(max(start, self._length), stop):
            if self.total(position) > best_total:
                best, best_total = position, self.total(position)
        return best

    def compaction_in(self, start: int, stop: int) -> bool:
        """Whether a message in [start, stop) is a compaction marker."""
        return self.first_compaction_in(start, stop) is not None

    def first_compaction_in(self, start: int, stop: int) -> int | None:
        """The position of the first compaction marker in [start, stop), if any."""
        settled = self._settled_compaction_in(start, stop)
        ahead = self._ahead[max(0, start - self._length) : max(0, stop - self._length)]
        found = [settled, self._marked_in(start, stop),
                 next((max(start, self._length) + n for n, point in enumerate(ahead) if point.compaction), None)]
        return min((position for position in found if position is not None), default=None)

    def _marked_in(self, start: int, stop: int) -> int | None:
        """The first of the view's own compaction marks in [start, stop)."""
        found = bisect_left(self._marks, start)
        return self._marks[found] if found < len(self._marks) and self._marks[found] < min(stop, len(self)) else None

    def _settled_compaction_in(self, start: int, stop: int) -> int | None:
        """The first compaction marker in [start, stop) among the settled points."""
        marks = self._settled._compactions  # noqa: SLF001
        found = bisect_left(marks, start)
        return marks[found] if found < len(marks) and marks[found] < min(stop, self._length) else None
