"""Agent frameworks' condensers: Google ADK and OpenHands.

ADK counts invocations (a user turn and everything it causes) and events;
OpenHands counts events, where an action and its observation are two. Both
summarize spans; OpenHands can also mask old observations in place.
"""

from __future__ import annotations

from typing import Any

from ctxtop.context.strategies.base import Strategy, summary_size
from ctxtop.context.strategies.clearing import apply_clearing, with_images
from ctxtop.context.strategies.frame import Frame
from ctxtop.context.strategies.params import INT, TEXT, Param
from ctxtop.context.strategies.preview import DROPPED, SUMMARIZED, Plan, Trigger
from ctxtop.context.strategies.summarizing import SUMMARY_TOKENS, _summarize_span
from ctxtop.parsers.model import SUMMARY, TOOL_CALL, TOOL_RESULT, USER

ADK_SUMMARY_TOKENS = 500
OPENHANDS_MASK = "<MASKED>"


def invocations(frame: Frame) -> list[int]:
    """Message numbers where an ADK invocation starts: each real user message (and the first message)."""
    starts = [n for n, m in enumerate(frame.messages) if m.first_category == USER]
    if frame.messages and (not starts or starts[0] != 0):
        starts.insert(0, 0)
    return starts


def adk_sliding_ranges(count: int, interval: int, overlap: int) -> list[tuple[int, int]]:
    """The invocation ranges (0-based, inclusive) ADK compacts after each of ``count`` invocations.

    After every ``interval`` new invocations it summarizes them plus ``overlap``
    already-compacted ones: with 3 and 1, invocations 1–3, then 3–6, then 6–9.
    """
    ranges: list[tuple[int, int]] = []
    compacted_until = -1
    for done in range(count):
        new = done - compacted_until
        if new >= interval:
            ranges.append((max(0, compacted_until + 1 - overlap), done))
            compacted_until = done
    # A range inside another one is ignored when the request is built. Ends only grow and starts
    # never shrink, so a range can only be inside the next one, when both start at the same place.
    return [r for r, after in zip(ranges, ranges[1:] + [None]) if after is None or after[0] != r[0]]


def adk(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    if params["token_threshold"] is not None:
        return _adk_tokens(frame, params, plan)
    interval, overlap = params["compaction_interval"], params["overlap_size"]
    starts = invocations(frame)
    ranges = adk_sliding_ranges(len(starts), interval, overlap)
    if ranges:
        shown = [f"{a + 1}-{b + 1}" for a, b in ranges]
        plan.notes.append(f"{len(ranges)} summaries, of invocations {', '.join(shown[:3])}{', …' if len(ranges) > 3 else ''}"
                          f"{' ' + shown[-1] if len(ranges) > 3 else ''} (of {len(starts)})")
    fires = bool(ranges) and ranges[-1][1] == len(starts) - 1
    trigger = Trigger(f"every {interval} new invocations (overlap {overlap})", fires)
    if not ranges:
        plan.skip(f"{len(starts)} invocation(s): fewer than compaction_interval {interval}")
        return trigger
    end_of = lambda invocation: frame.message_start(starts[invocation + 1]) if invocation + 1 < len(starts) else len(frame.blocks)  # noqa: E731
    first, last = frame.message_start(starts[ranges[0][0]]), end_of(ranges[-1][1])
    _adk_span(frame, plan, first, last)
    # Overlapping windows are not merged: each keeps its own summary.
    for a, b in ranges:
        start = frame.message_start(starts[a])
        plan.add(SUMMARY, summary_size(frame, params["summary_tokens"], start, end_of(b)), f"summary of invocations {a + 1}-{b + 1}", start)
    return trigger


def _adk_tokens(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    threshold, retention = params["token_threshold"], params["event_retention_size"]
    trigger = Trigger(f"last prompt tokens ≥ {threshold:,}", frame.prompt_tokens >= threshold)
    if retention is None:
        plan.skip("token_threshold needs event_retention_size too (ADK validates them as a pair)")
        return trigger
    events = frame.messages
    if len(events) <= retention:
        plan.skip(f"{len(events)} event(s): all within event_retention_size {retention}")
        return trigger
    split = frame.safe_cut(frame.message_start(len(events) - retention))
    if split == 0:
        plan.skip("no event before the retained ones once function calls are kept with their responses")
        return trigger
    _adk_span(frame, plan, 0, split)
    plan.add(SUMMARY, summary_size(frame, params["summary_tokens"], 0, split), "rolling summary", 0)
    return trigger


def _adk_span(frame: Frame, plan: Plan, start: int, end: int) -> None:
    """ADK's summarizer reads only text parts: function calls and responses in the span just go."""
    plan.span(start, end, SUMMARIZED)
    for i in range(start, end):
        if frame.categories[i] in (TOOL_CALL, TOOL_RESULT):
            plan.point(i, DROPPED, 0)


def openhands(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    max_size, keep_first = params["max_size"], params["keep_first"]
    events = frame.history_blocks
    trigger = Trigger(f"events > {max_size}", len(events) > max_size)
    tail = max_size // 2 - keep_first - 1  # one event is the summary itself
    if len(events) <= keep_first + max(tail, 0):
        plan.skip(f"{len(events)} event(s): the condenser keeps {keep_first} first and {max(tail, 0)} last")
        return trigger
    start, end = events[keep_first], events[len(events) - tail] if tail > 0 else len(frame.blocks)
    _summarize_span(frame, plan, start, end, params["summary_tokens"], "condensation summary")
    plan.notes.append("OpenHands V0 condensers do not keep actions and observations together")
    return trigger


def openhands_masking(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    window = params["attention_window"]
    events = frame.history_blocks
    trigger = Trigger("every request", True)
    masked = [i for position, i in enumerate(events) if position < len(events) - window and frame.categories[i] == TOOL_RESULT]
    if not masked:
        plan.skip(f"no observation older than the newest {window} events")
        return trigger
    placeholder = frame.counter.count(params["placeholder"])
    # A masked observation's images (a browser screenshot) are masked with it.
    apply_clearing(plan, [cleared for result in masked for cleared in with_images(frame, result, placeholder)])
    return trigger


STRATEGIES = (
    Strategy(
        "adk",
        "Google ADK EventsCompactionConfig: summarize every compaction_interval invocations, or at token_threshold",
        (
            Param("compaction_interval", INT, 3, "new invocations that trigger a sliding compaction", 1),
            Param("overlap_size", INT, 1, "compacted invocations pulled back into the next window"),
            Param("token_threshold", INT, None, "prompt tokens that trigger token compaction (instead of sliding)", 1),
            Param("event_retention_size", INT, None, "newest events kept raw by token compaction"),
            Param("summary_tokens", INT, ADK_SUMMARY_TOKENS, "tokens each summary is assumed to take"),
        ),
        adk,
        pair_safe=True,
    ),
    Strategy(
        "openhands",
        "OpenHands LLMSummarizingCondenser: first keep_first and last max_size/2 events kept, the middle summarized",
        (
            Param("max_size", INT, 120, "events that trigger condensation", 2),
            Param("keep_first", INT, 4, "first events always kept"),
            Param("summary_tokens", INT, SUMMARY_TOKENS, "tokens the summary is assumed to take"),
        ),
        openhands,
        pair_safe=False,
    ),
    Strategy(
        "openhands_masking",
        "OpenHands ObservationMaskingCondenser: observations older than attention_window events masked",
        (
            Param("attention_window", INT, 100, "newest events whose observations stay"),
            Param("placeholder", TEXT, OPENHANDS_MASK, "text a masked observation becomes"),
        ),
        openhands_masking,
        pair_safe=True,
    ),
)
