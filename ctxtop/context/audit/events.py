"""Where a session compacted: explicit markers, and implicit ones (the reported prompt falling sharply)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxtop.context.window.session import CompactionEvent, Session
from ctxtop.parsers.model import Entry

IMPLICIT_DROP = 0.30  # a fall of the reported prompt by more than this share, unmarked, is a compaction


def compaction_events(session: Session) -> list[CompactionEvent]:
    """Explicit markers plus implicit compactions, in message order; pre/post filled from usage where missing."""
    events = EventScan()
    for entry in session.entries:
        events.see(entry)
    return events.events


class EventScan:
    """``compaction_events``, fed one entry at a time (so that one pass can serve several scans)."""

    def __init__(self) -> None:
        self.events: list[CompactionEvent] = []
        self._last_usage: tuple[int, int] | None = None  # (message, prompt tokens)
        self._marked_since_last_call = False

    def copy(self) -> EventScan:
        twin = EventScan()
        twin.events, twin._last_usage, twin._marked_since_last_call = list(self.events), self._last_usage, self._marked_since_last_call
        return twin

    def see(self, entry: Entry) -> None:
        events, last_usage = self.events, self._last_usage
        if entry.compaction is not None:
            c = entry.compaction
            pre = c.pre_tokens if c.pre_tokens is not None else (last_usage[1] if last_usage else None)
            events.append(CompactionEvent(entry.index, c.kind, c.trigger, pre, c.post_tokens, entry.timestamp, c.opaque))
            self._marked_since_last_call = True
        if entry.usage is not None:
            prompt = entry.usage.prompt_tokens
            marked = self._marked_since_last_call
            if last_usage and not marked and prompt < last_usage[1] * (1 - IMPLICIT_DROP):
                events.append(CompactionEvent(entry.index, "implicit", None, last_usage[1], prompt, entry.timestamp))
            if events and events[-1].post_tokens is None and events[-1].message < entry.index and marked:
                e = events[-1]
                events[-1] = CompactionEvent(e.message, e.kind, e.trigger, e.pre_tokens, prompt, e.timestamp, e.opaque)
            self._last_usage = (entry.index, prompt)
            self._marked_since_last_call = False


def after_message(entries: Sequence[Entry], compaction_message: int) -> int:
    """The window the model sees at its first call after the compaction (summary and preserved included)."""
    for position in range(compaction_message, len(entries)):  # by position: a store unpacks only what is read
        entry = entries[position]
        if entry.role == "assistant" or entry.compaction is not None:
            return entry.index - 1
    return len(entries)
