"""What a strategy is: a named function of (frame, parameters) that fills a plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxtop.context.strategies.frame import Frame
from ctxtop.context.strategies.params import Param, coerce
from ctxtop.context.strategies.preview import Plan, Preview, Trigger

# A summary is assumed to take at most 1/this of the span it replaces.
SUMMARY_MAX_SHARE_DIVISOR = 2

Run = Callable[[Frame, dict[str, Any], Plan], Trigger]


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    summary: str  # one line: what it is and whose it is
    params: tuple[Param, ...]
    run: Run
    pair_safe: bool  # whether it keeps tool calls and their results together, as the real system does

    def preview(self, frame: Frame, raw: dict[str, str] | None = None) -> Preview:
        params = coerce(self.name, self.params, raw or {})
        plan = Plan(frame)
        trigger = self.run(frame, params, plan)
        return plan.finish(self.name, params, trigger, pair_safe=self.pair_safe)


def summary_size(frame: Frame, wanted: int, start: int, end: int, sent_again: int = 0) -> int:
    """Tokens a summary of blocks [start, end) is assumed to take.

    What the model will write is unknowable here: assume ``wanted``, but never
    more than half of what it replaces (nobody summarizes to grow the prompt):
    the history of the span, less ``sent_again``, what the strategy keeps of it
    verbatim besides the summary (Codex's recent user messages, Claude Code's
    re-read files).
    """
    replaced = frame.history_prefix[end] - frame.history_prefix[start] - sent_again
    return min(wanted, max(0, replaced) // SUMMARY_MAX_SHARE_DIVISOR)
