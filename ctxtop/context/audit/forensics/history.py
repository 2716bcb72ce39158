"""What the agent had done before each compaction, counted once as the audit goes on.

The audit asks for compactions in message order; ``advance_to`` takes in the actions before
each one, so all compactions cost one pass over the actions (not over the entries).
"""

from __future__ import annotations

import posixpath
from bisect import bisect_right

from ctxtop.context.audit.forensics.actions import CHANGE, READ, SEARCH, Action


def subject_key(subject: str) -> str:
    return " ".join(subject.split()).casefold()


class History:
    def __init__(self, actions: list[Action]) -> None:
        self.actions = actions  # every followed action, in message order
        self.located: dict[str, int] = {}  # a file or pattern read, searched or changed → its first message
        self.done: dict[int, Action] = {}  # a change that succeeded, by call key → its first such call
        self.written: dict[str, int] = {}  # a file the agent changed → the first message
        self._counted = 0

    def copy(self, actions: list[Action]) -> History:
        """This history, going on over ``actions`` (the same actions, perhaps with more after them)."""
        twin = History(actions)
        twin.located, twin.done, twin.written, twin._counted = dict(self.located), dict(self.done), dict(self.written), self._counted
        return twin

    def advance_to(self, message: int) -> None:
        actions = self.actions
        while self._counted < len(actions) and actions[self._counted].message < message:
            action = actions[self._counted]
            key = subject_key(action.subject)
            if action.kind in (READ, SEARCH, CHANGE):
                self.located.setdefault(key, action.message)
            if action.kind == CHANGE and not action.failed:
                self.done.setdefault(action.key, action)
                if "/" in action.subject or "." in posixpath.basename(action.subject):
                    self.written.setdefault(key, action.message)
            self._counted += 1

    def between(self, start: int, stop: int) -> list[Action]:
        """The actions in messages ``start`` < m < ``stop``."""
        actions = self.actions
        first = bisect_right(actions, start, key=lambda a: a.message)
        found = []
        for position in range(first, len(actions)):
            if actions[position].message >= stop:
                break
            found.append(actions[position])
        return found
