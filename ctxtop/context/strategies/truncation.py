"""Cutting by position: the seed's two 0/3 cases.

Both cut blindly, as the seed's experiment script does (and as naive agent
loops do): the oldest messages go first, tool pairs or not. That is the point
they make — the rules stated first are the first to go.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from ctxtop.context.strategies.base import Strategy
from ctxtop.context.strategies.frame import Frame
from ctxtop.context.strategies.params import INT, Param
from ctxtop.context.strategies.preview import DROPPED, Plan, Trigger


def sliding_window(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    keep = params["keep_tokens"]
    if keep is None:
        keep = frame.budget
        plan.resolved["keep_tokens"] = keep
    trigger = Trigger(f"history > {keep:,} tokens", frame.history_total > keep)
    if frame.history_total <= keep:
        plan.skip(f"the history ({frame.history_total:,} tokens) already fits in {keep:,}")
        return trigger
    block, kept = frame.history_cut(keep)
    plan.span(0, block, DROPPED)
    plan.truncate(block, kept, "tail")
    return trigger


def drop_oldest(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    n = params["n"]
    messages = frame.messages
    if n is None:
        # The fewest oldest messages whose removal brings the history within the budget.
        ends = [frame.history_prefix[m.end] for m in messages]
        n = min(len(messages), bisect_left(ends, frame.history_total - frame.budget) + 1) if frame.history_total > frame.budget else 0
        plan.resolved["n"] = n
    trigger = Trigger("every request", True)
    if n == 0 or not messages:
        plan.skip("no message to drop")
        return trigger
    n = min(n, len(messages))
    plan.span(0, messages[n - 1].end, DROPPED)
    return trigger


STRATEGIES = (
    Strategy(
        "sliding_window",
        "keep the newest keep_tokens of the history, cut on a token boundary (the seed's strategy A)",
        (Param("keep_tokens", INT, None, "history tokens to keep (default: the budget)", 1),),
        sliding_window,
        pair_safe=False,
    ),
    Strategy(
        "drop_oldest",
        "drop the n oldest messages (the seed's strategy C)",
        (Param("n", INT, None, "messages to drop (default: as few as bring the window within the budget)", 0),),
        drop_oldest,
        pair_safe=False,
    ),
)
