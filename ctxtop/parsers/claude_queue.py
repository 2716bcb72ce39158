"""Claude Code's queue of what was typed (or notified) while the agent worked, as its log records it.

Typed messages and harness notifications are kept apart, each in order, so that taking the oldest
typed one costs the same however many notifications wait; a text's place is found only when a
record names it. A hostile log cannot grow it past MAX_QUEUED: the oldest are let go.
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Any

from ctxtop.parsers.content import user_text_category
from ctxtop.parsers.model import USER

# Far more than anyone types during one turn; a log enqueueing more only loses its oldest.
MAX_QUEUED = 1_000


class PromptQueue:
    def __init__(self) -> None:
        self._typed: deque[tuple[int, str]] = deque()  # (order, text), oldest first
        self._other: deque[tuple[int, str]] = deque()  # notifications and commands, oldest first
        self._count: Counter[str] = Counter()  # how often each text waits
        self._order = 0

    def __len__(self) -> int:
        return len(self._typed) + len(self._other)

    def __contains__(self, text: object) -> bool:
        return self._count.get(text, 0) > 0  # type: ignore[call-overload]

    def put(self, text: str) -> None:
        self._order += 1
        (self._typed if user_text_category(text) == USER else self._other).append((self._order, text))
        self._count[text] += 1
        if len(self) > MAX_QUEUED:
            self.pop_oldest()

    def pop_oldest(self) -> str | None:
        """The oldest waiting text, of either kind (``dequeue``: handed to the next turn)."""
        if not self._typed and not self._other:
            return None
        if not self._other or (self._typed and self._typed[0][0] < self._other[0][0]):
            return self._taken(self._typed.popleft()[1])
        return self._taken(self._other.popleft()[1])

    def pop_typed(self) -> str | None:
        """The oldest waiting typed message (``remove``: sent within the turn), if any."""
        return self._taken(self._typed.popleft()[1]) if self._typed else None

    def discard(self, text: str) -> bool:
        """Take ``text`` out (delivered another way); whether it was waiting."""
        if text not in self:
            return False
        for waiting in (self._typed, self._other):
            for item in waiting:
                if item[1] == text:
                    waiting.remove(item)
                    self._taken(text)
                    return True
        return False

    def clear(self) -> None:
        self._typed.clear()
        self._other.clear()
        self._count.clear()

    def _taken(self, text: str) -> str:
        self._count[text] -= 1
        if not self._count[text]:
            del self._count[text]
        return text

    def saved(self) -> list[Any]:
        return [self._order, [list(item) for item in self._typed], [list(item) for item in self._other]]

    @classmethod
    def restored(cls, saved: list[Any] | None) -> PromptQueue:
        queue = cls()
        if saved:
            queue._order = saved[0]
            queue._typed = deque((order, text) for order, text in saved[1])
            queue._other = deque((order, text) for order, text in saved[2])
            queue._count = Counter(text for _, text in (*queue._typed, *queue._other))
        return queue
