"""What a strategy would do to the window: block fates, tokens, constraints, cache.

A strategy fills a ``Plan`` — spans of blocks dropped or summarized first, then
single blocks placeholdered, truncated or kept — and ``Plan.finish`` turns it
into a ``Preview``. Sums come from the frame's prefix sums, so a span of ten
thousand blocks costs a handful of additions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ctxtop.context.rules.facts import normalize
from ctxtop.context.strategies.frame import Frame
from ctxtop.context.window.replay import RESIDENT
from ctxtop.parsers.model import CATEGORIES, IMAGE

KEPT, PLACEHOLDER, SUMMARIZED, DROPPED, TRUNCATED = "kept", "placeholder", "summarized", "dropped", "truncated"
FATES = (KEPT, PLACEHOLDER, SUMMARIZED, DROPPED, TRUNCATED)
# Constraint outcomes: verbatim in what remains, only inside a summary (or a restatement), or gone.
OUTCOME_KEPT, AT_RISK, OUTCOME_LOST = "kept", "at_risk", "lost"


@dataclass(slots=True)
class Trigger:
    rule: str  # the trigger in words, e.g. "input tokens > 100,000"
    fires: bool | None  # None: the strategy runs only when asked


@dataclass(slots=True)
class Added:
    """Content a strategy puts into the window: a summary, a pinned slot."""

    category: str
    tokens: int
    label: str
    before_block: int  # where it goes (for the cache: everything after is re-written)


@dataclass(slots=True)
class Outcome:
    outcome: str
    before: str  # the constraint's status in the window now
    where: list[int]  # messages that keep it (or hold it in a span to be summarized)


@dataclass
class Preview:
    strategy: str
    params: dict[str, Any]
    trigger: Trigger
    applies: bool
    reason: str | None
    tokens_before: int
    tokens_after: int
    categories_after: dict[str, int]
    fates: list[str]
    tokens_after_by_block: dict[int, int]  # blocks whose size changes but are not removed
    added: list[Added]
    constraints: dict[str, Outcome]
    cache_prefix_tokens: int
    cache_rewrite_tokens: int
    pair_safe: bool
    notes: list[str] = field(default_factory=list)

    @property
    def freed(self) -> int:
        return self.tokens_before - self.tokens_after

    def fate_counts(self) -> dict[str, int]:
        counts = Counter(self.fates)
        return {fate: counts.get(fate, 0) for fate in FATES}

    def outcome_counts(self) -> dict[str, int]:
        counts = Counter(o.outcome for o in self.constraints.values())
        return {name: counts.get(name, 0) for name in (OUTCOME_KEPT, AT_RISK, OUTCOME_LOST)}


class Plan:
    """The changes a strategy makes, accumulated; spans first, then single blocks."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame
        self.fates = [KEPT] * len(frame.blocks)
        self.after: dict[int, int] = {}
        self.truncated: dict[int, tuple[int, str]] = {}  # block -> (tokens kept, "head" | "tail")
        self.removed: Counter[str] = Counter()
        self.added: list[Added] = []
        self.pinned: set[str] = set()
        self.first_change = len(frame.blocks)
        self.reason: str | None = None
        self.notes: list[str] = []
        self.resolved: dict[str, Any] = {}

    def span(self, start: int, end: int, fate: str) -> None:
        """Drop or summarize blocks [start, end); resident blocks in between stay."""
        frame = self.frame
        first = frame.first_history_block(start)
        if first >= end:
            return
        self.fates[start:end] = [fate] * (end - start)
        for i in frame.resident_blocks_between(start, end):
            self.fates[i] = KEPT
        for category in frame.present_categories() - set(RESIDENT):
            self.removed[category] += frame.category_tokens_between(category, start, end)
        self.first_change = min(self.first_change, first)

    def point(self, i: int, fate: str, tokens_after: int | None = None) -> None:
        """Give block ``i`` a fate; ``tokens_after`` is what it still costs (all of it when kept)."""
        frame = self.frame
        tokens_after = frame.tokens[i] if tokens_after is None else tokens_after
        current = self.after.get(i, 0 if self.fates[i] in (DROPPED, SUMMARIZED) else frame.tokens[i])
        self.removed[frame.categories[i]] += current - tokens_after
        self.fates[i] = fate
        if fate in (PLACEHOLDER, TRUNCATED) or (fate == KEPT and tokens_after != frame.tokens[i]):
            self.after[i] = tokens_after
        else:
            self.after.pop(i, None)
        if fate != KEPT or tokens_after != frame.tokens[i]:
            self.first_change = min(self.first_change, i)

    def truncate(self, i: int, tokens_kept: int, end: str) -> None:
        """Keep only the first (``end="head"``) or last (``"tail"``) ``tokens_kept`` tokens of block ``i``.

        An image has no part to keep: cut anywhere, it goes whole."""
        if tokens_kept <= 0 or (self.frame.categories[i] == IMAGE and tokens_kept < self.frame.tokens[i]):
            self.point(i, DROPPED, 0)
        elif tokens_kept < self.frame.tokens[i]:
            self.point(i, TRUNCATED, tokens_kept)
            self.truncated[i] = (tokens_kept, end)

    def history_tokens_sent(self, start: int, end: int) -> int:
        """Tokens of the history blocks in [start, end) the plan still sends, whole or in part."""
        frame = self.frame
        return sum(self.after.get(i, frame.tokens[i]) for i in frame.history_blocks_between(start, end)
                   if self.fates[i] not in (DROPPED, SUMMARIZED))

    def add(self, category: str, tokens: int, label: str, before_block: int) -> None:
        self.added.append(Added(category, tokens, label, before_block))
        self.first_change = min(self.first_change, before_block)

    def skip(self, reason: str) -> None:
        """The strategy would not apply at all; ``finish`` reports the window unchanged."""
        self.reason = reason

    def finish(self, strategy: str, params: dict[str, Any], trigger: Trigger, *, pair_safe: bool) -> Preview:
        frame = self.frame
        if self.reason is not None:
            return _unchanged(frame, strategy, {**params, **self.resolved}, trigger, self.reason, pair_safe, self.notes)
        categories = {name: 0 for name in CATEGORIES}
        for category in frame.present_categories():
            categories[category] = frame.category_tokens_between(category, 0, len(frame.blocks)) - self.removed[category]
        for item in self.added:
            categories[item.category] += item.tokens
        after = sum(categories.values())
        changed = self.first_change < len(frame.blocks) or bool(self.added)
        prefix = frame.prefix[self.first_change] if changed else frame.total
        return Preview(
            strategy=strategy,
            params={**params, **self.resolved},
            trigger=trigger,
            applies=True,
            reason=None,
            tokens_before=frame.total,
            tokens_after=after,
            categories_after=categories,
            fates=self.fates,
            tokens_after_by_block=self.after,
            added=self.added,
            constraints=self._outcomes(),
            cache_prefix_tokens=prefix,
            cache_rewrite_tokens=after - prefix if changed else 0,
            pair_safe=pair_safe,
            notes=self.notes,
        )

    def _outcomes(self) -> dict[str, Outcome]:
        frame = self.frame
        outcomes = {}
        for constraint in frame.constraints:
            found = frame.occurrences[constraint.id]
            before = found.before.status
            if constraint.id in self.pinned:
                outcomes[constraint.id] = Outcome(OUTCOME_KEPT, before, [])
                continue
            kept = [i for i in found.verbatim if self._keeps(i, constraint.normalized)]
            if kept:
                outcomes[constraint.id] = Outcome(OUTCOME_KEPT, before, _messages(frame, kept))
                continue
            candidates = found.verbatim + ([found.restated] if found.restated is not None else [])
            risky = [i for i in candidates if self.fates[i] == SUMMARIZED or (i == found.restated and self.fates[i] == KEPT)]
            if risky:
                outcomes[constraint.id] = Outcome(AT_RISK, before, _messages(frame, risky))
            else:
                outcomes[constraint.id] = Outcome(OUTCOME_LOST, before, [])
        return outcomes

    def _keeps(self, i: int, normalized: str) -> bool:
        fate = self.fates[i]
        if fate == KEPT:
            return True
        if fate != TRUNCATED:
            return False
        tokens, end = self.truncated[i]
        text = self.frame.blocks[i].text
        counter = self.frame.counter
        kept = counter.tail(text, tokens) if end == "tail" else counter.head(text, tokens)
        return normalized in normalize(kept)


def _messages(frame: Frame, blocks: list[int]) -> list[int]:
    return list(dict.fromkeys(frame.blocks[i].entry.index for i in blocks))


def _unchanged(frame: Frame, strategy: str, params: dict[str, Any], trigger: Trigger, reason: str,
               pair_safe: bool, notes: list[str]) -> Preview:
    categories = {name: 0 for name in CATEGORIES}
    for category in frame.present_categories():
        categories[category] = frame.category_tokens_between(category, 0, len(frame.blocks))
    constraints = {
        c.id: Outcome(
            OUTCOME_KEPT if frame.occurrences[c.id].verbatim else (AT_RISK if frame.occurrences[c.id].restated is not None else OUTCOME_LOST),
            frame.occurrences[c.id].before.status,
            frame.occurrences[c.id].before.found_in,
        )
        for c in frame.constraints
    }
    return Preview(strategy, params, trigger, False, reason, frame.total, frame.total, categories, [KEPT] * len(frame.blocks),
                   {}, [], constraints, frame.total, 0, pair_safe, notes)
