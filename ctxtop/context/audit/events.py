"""Where a session compacted: explicit markers, and implicit ones (the reported prompt falling sharply)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ctxtop.context.audit.alerts import AlertKind
from ctxtop.context.window.session import CompactionEvent, Session
from ctxtop.parsers.model import USER, Entry

IMPLICIT_DROP = 0.30  # a fall of the reported prompt by more than this share, unmarked, is a compaction
# A call this long after the one before is a resumed session (`codex resume`, `claude --resume`):
# the harness rebuilt the prompt from its log, so a fall there is not a compaction. Longer than
# any model call or tool run; a human pause of an hour is a new sitting.
RESUME_GAP_SECONDS = 3600


@dataclass(slots=True, frozen=True)
class Drop:
    """A fall of the reported prompt that is not a compaction: a model switch or a resume."""

    kind: AlertKind
    message: int
    pre_tokens: int
    post_tokens: int
    detail: str


def compaction_events(session: Session) -> list[CompactionEvent]:
    """Explicit markers plus implicit compactions, in message order; pre/post filled from usage where missing."""
    events = EventScan(session.parser.opening_call_reports_more)
    for entry in session.entries:
        events.see(entry)
    return events.events


class EventScan:
    """``compaction_events``, fed one entry at a time (so that one pass can serve several scans).

    An unmarked fall of the reported prompt by more than ``IMPLICIT_DROP`` is an implicit compaction
    only against the last call of the same model, with no long gap before it; a fall after a call of
    another model, or after a long gap, is kept in ``drops`` as what it is.
    """

    def __init__(self, opening_call_reports_more: bool = False) -> None:
        """``opening_call_reports_more``: the log's harness reports more for a turn's first call (``Parser``'s flag)."""
        self.opening_call_reports_more = opening_call_reports_more
        self.events: list[CompactionEvent] = []
        self.drops: list[Drop] = []
        self._last_usage: tuple[int, int, str | None, str | None] | None = None  # (message, prompt tokens, model, timestamp)
        # The last call of each model: (prompt tokens, whether a compaction was marked since).
        self._last_by_model: dict[str | None, tuple[int, bool]] = {}
        self._marked_since_last_call = False
        # Where the opening call of a user turn may report more (Gemini CLI), a call that continues the turn is
        # measured against the call before that opening one.
        self._user_since_last_call = False
        self._before_opening: dict[str | None, tuple[int, bool] | None] = {}

    def copy(self) -> EventScan:
        twin = EventScan(self.opening_call_reports_more)
        twin.events, twin.drops, twin._last_by_model = list(self.events), list(self.drops), dict(self._last_by_model)
        twin._last_usage, twin._marked_since_last_call = self._last_usage, self._marked_since_last_call
        twin._user_since_last_call, twin._before_opening = self._user_since_last_call, dict(self._before_opening)
        return twin

    def see(self, entry: Entry) -> None:
        events, last_usage = self.events, self._last_usage
        if entry.compaction is not None:
            c = entry.compaction
            pre = c.pre_tokens if c.pre_tokens is not None else (last_usage[1] if last_usage else None)
            events.append(CompactionEvent(entry.index, c.kind, c.trigger, pre, c.post_tokens, entry.timestamp, c.opaque))
            self._marked_since_last_call = True
            self._last_by_model = {model: (prompt, True) for model, (prompt, _marked) in self._last_by_model.items()}
        if entry.usage is None and entry.role == "user" and entry.category == USER:
            self._user_since_last_call = True
        if entry.usage is not None:
            prompt = entry.usage.prompt_tokens
            marked = self._marked_since_last_call
            if last_usage is not None:
                self._check_fall(last_usage, entry, prompt)
            if events and events[-1].post_tokens is None and events[-1].message < entry.index and marked:
                e = events[-1]
                events[-1] = CompactionEvent(e.message, e.kind, e.trigger, e.pre_tokens, prompt, e.timestamp, e.opaque)
            self._last_usage = (entry.index, prompt, entry.model, entry.timestamp)
            earlier = self._last_by_model.get(entry.model)
            if self.opening_call_reports_more and self._user_since_last_call and (earlier is None or prompt > earlier[0]):
                self._before_opening[entry.model] = earlier  # an opening call that rose: maybe only its own report
            else:
                self._before_opening.pop(entry.model, None)
            self._last_by_model[entry.model] = (prompt, False)
            self._marked_since_last_call = False
            self._user_since_last_call = False

    def _check_fall(self, last_usage: tuple[int, int, str | None, str | None], entry: Entry, prompt: int) -> None:
        _message, before, model, timestamp = last_usage
        same_model = self._last_by_model.get(entry.model)
        if not self._user_since_last_call and not self._marked_since_last_call and entry.model in self._before_opening:
            # The turn goes on after its opening call: that call's prompt is no baseline; the one before it is.
            earlier = self._before_opening[entry.model]
            if earlier is None or earlier[1] or prompt >= earlier[0] * (1 - IMPLICIT_DROP):
                return
            same_model, before = earlier, earlier[0]
        fell_within_model = same_model is not None and not same_model[1] and prompt < same_model[0] * (1 - IMPLICIT_DROP)
        fell_since_last_call = not self._marked_since_last_call and prompt < before * (1 - IMPLICIT_DROP)
        if not fell_within_model and not fell_since_last_call:
            return
        gap = _seconds_between(timestamp, entry.timestamp)
        if gap is not None and gap >= RESUME_GAP_SECONDS:
            self.drops.append(Drop(AlertKind.RESUMED, entry.index, before, prompt,
                                   f"reported context went from {before:,} to {prompt:,} tokens after {_duration(gap)} without a call: "
                                   "a resumed session, not a compaction"))
        elif fell_within_model:
            pre = same_model[0]  # type: ignore[index]
            self.events.append(CompactionEvent(entry.index, "implicit", None, pre, prompt, entry.timestamp))
        elif model and entry.model and model != entry.model:
            # Models count the same prompt differently, and harnesses send a side model a shorter one.
            self.drops.append(Drop(AlertKind.MODEL_SWITCH, entry.index, before, prompt,
                                   f"reported context went from {before:,} tokens ({model}) to {prompt:,} ({entry.model}): "
                                   "another model, not a compaction"))
        else:
            self.events.append(CompactionEvent(entry.index, "implicit", None, before, prompt, entry.timestamp))


def _seconds_between(earlier: str | None, later: str | None) -> float | None:
    start, end = instant(earlier), instant(later)
    if start is None or end is None or (start.tzinfo is None) != (end.tzinfo is None):
        return None
    return (end - start).total_seconds()


def instant(timestamp: str | None) -> datetime | None:
    """The moment an ISO 8601 ``timestamp`` names (naive when it gives no offset); None when it names none."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp[:-1] + "+00:00" if timestamp.endswith("Z") else timestamp)
    except ValueError:
        return None


def _duration(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} hours"


def after_message(entries: Sequence[Entry], compaction_message: int) -> int:
    """The window the model sees at its first call after the compaction (summary and preserved included)."""
    for position in range(compaction_message, len(entries)):  # by position: a store unpacks only what is read
        entry = entries[position]
        if entry.role == "assistant" or entry.compaction is not None:
            return entry.index - 1
    return len(entries)
