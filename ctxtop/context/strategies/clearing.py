"""Clearing by type: Anthropic's context editing, and seed 000's fix built on it.

``clear_tool_uses_20250919`` swaps old tool results for a placeholder and keeps
the newest ``keep`` pairs; ``clear_thinking_20251015`` drops the thinking of
older assistant turns. Neither touches what the user or the system said — which
is why clearing keeps 3/3 constraints in the seed where cutting keeps 0/3.
"""

from __future__ import annotations

import re
from typing import Any

from ctxtop.context.strategies.base import Strategy
from ctxtop.context.strategies.frame import Frame
from ctxtop.context.strategies.params import (
    BOOL_OR_NAMES,
    INT,
    INT_OR_ALL,
    NAMES,
    TEXT,
    TRIGGER,
    Param,
    describe_trigger,
)
from ctxtop.context.strategies.preview import DROPPED, PLACEHOLDER, Plan, Trigger
from ctxtop.parsers.model import IMAGE, REASONING, SYSTEM

# clear_thinking_20251015's default ``keep`` depends on the model (strategies.md §1b): every earlier turn's thinking
# on Opus 4.5 and later and Sonnet 4.6 and later; the last turn's on the models before them, and on any other.
KEEPS_ALL_THINKING_FROM = {"opus": (4, 5), "sonnet": (4, 6)}
# claude-opus-4-6, claude-sonnet-4-5-20250929, claude-opus-4-20250514 (4.0: a date is no minor version).
CLAUDE_MODEL = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)")

# The API does not document its placeholder; LangChain's mirror of this strategy uses this one.
DEFAULT_PLACEHOLDER = "[cleared]"
EMPTY_INPUT = "{}"
CLEAR_TOOL_PARAMS = (
    Param("trigger", TRIGGER, ("input_tokens", 100_000), "input_tokens:N, tool_uses:N, or now to force it"),
    Param("keep", INT, 3, "newest tool use/result pairs kept verbatim"),
    Param("clear_at_least", INT, None, "tokens that must be freed, or nothing is cleared"),
    Param("exclude_tools", NAMES, [], "tool names never cleared (| separated)"),
    Param("clear_tool_inputs", BOOL_OR_NAMES, False, "also empty the tool calls' inputs: true, or tool names"),
    Param("placeholder", TEXT, DEFAULT_PLACEHOLDER, "text a cleared result becomes"),
)


def clear_tool_results(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    trigger = _tool_trigger(frame, params["trigger"])
    cleared, reason = plan_clearing(frame, params)
    if reason:
        plan.skip(reason)
    apply_clearing(plan, cleared)
    return trigger


def _tool_trigger(frame: Frame, trigger: tuple[str, int]) -> Trigger:
    kind, value = trigger
    if kind == "tool_uses":
        fires = len(frame.calls) > value
    else:
        fires = kind == "now" or frame.prompt_tokens > value
    return Trigger(describe_trigger(trigger), fires)


def plan_clearing(frame: Frame, params: dict[str, Any]) -> tuple[list[tuple[int, int]], str | None]:
    """The blocks clear_tool_uses would swap for a placeholder (with their new size), or why it would not."""
    excluded = set(params["exclude_tools"])
    # The pair is the unit: a result and the call it answers, oldest first.
    pairs = [r for r in frame.results if frame.tool_name(r) not in excluded]
    keep = params["keep"]
    candidates = pairs[:-keep] if keep else pairs
    if not candidates:
        return [], f"{len(pairs)} tool result(s) in the window, none older than the newest {keep}"
    placeholder = frame.counter.count(params["placeholder"])
    inputs = params["clear_tool_inputs"]
    cleared: list[tuple[int, int]] = []
    for result in candidates:
        if not frame.blocks[result].cleared:  # a placeholder already: clearing again frees nothing
            cleared.extend(with_images(frame, result, placeholder))
        name = frame.tool_name(result)
        call = frame.calls.get(frame.blocks[result].block.tool_id or "")
        if call is not None and (inputs is True or (isinstance(inputs, list) and name in inputs)):
            emptied = frame.counter.count(name or "") + frame.counter.count(EMPTY_INPUT)
            if emptied < frame.tokens[call]:
                cleared.append((call, emptied))
    freed = sum(frame.tokens[block] - tokens for block, tokens in cleared)
    at_least = params["clear_at_least"]
    if at_least is not None and freed < at_least:
        return [], f"would free {freed:,} tokens, less than clear_at_least {at_least:,}: the API then clears nothing"
    return cleared, None


def with_images(frame: Frame, result: int, placeholder: int) -> list[tuple[int, int]]:
    """Result block ``result`` cleared to ``placeholder`` tokens, and the images inside it gone with it."""
    return [(result, placeholder), *((image, 0) for image in frame.images_of.get(result, ()))]


def apply_clearing(plan: Plan, cleared: list[tuple[int, int]]) -> None:
    """Swap each cleared block for its placeholder; an image inside a cleared result has none of its own: it goes."""
    for block, tokens in cleared:
        plan.point(block, DROPPED if plan.frame.categories[block] == IMAGE else PLACEHOLDER, tokens)


def default_thinking_keep(model: str | None) -> int | str:
    """The ``keep`` clear_thinking_20251015 takes when none is given, for ``model``: "all" or 1."""
    match = CLAUDE_MODEL.search(model or "")
    if match is None:
        return 1
    since = KEEPS_ALL_THINKING_FROM.get(match[1])
    return "all" if since is not None and (int(match[2]), int(match[3] or 0)) >= since else 1


def _newest_model(frame: Frame) -> str | None:
    """The model of the window's latest message that names one: the model the next request goes to."""
    return next((item.entry.model for item in reversed(frame.blocks) if item.entry.model), None)


def clear_thinking(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    keep, why = params["keep"], ""
    if keep is None:
        model = _newest_model(frame)
        keep = plan.resolved["keep"] = default_thinking_keep(model)
        why = f" (the API's default for {model or 'a model the log does not name'})"
    trigger = Trigger("every request", True)
    if keep == "all":
        plan.skip(f"keep=all{why} keeps every thinking block")
        return trigger
    # The unit is the assistant turn: all thinking blocks of one message go or stay together.
    turns: list[list[int]] = []
    for message in frame.messages:
        blocks = [i for i in range(message.start, message.end) if frame.categories[i] == REASONING]
        if blocks:
            turns.append(blocks)
    older = turns[:-keep] if keep else turns
    if not older:
        plan.skip(f"{len(turns)} assistant turn(s) with thinking, none older than the newest {keep}{why}")
    elif why:
        plan.notes.append(f"keep={keep}{why}")
    for blocks in older:
        for i in blocks:
            plan.point(i, DROPPED, 0)
    return trigger


def pinned_slot(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    """Pins re-sent every turn in a resident slot beside the system prompt, plus tool-result clearing."""
    trigger = _tool_trigger(frame, params["trigger"])
    cleared, reason = plan_clearing(frame, params)
    apply_clearing(plan, cleared)
    if reason:
        plan.notes.append(f"no tool results cleared: {reason}")
    if not frame.constraints:
        plan.notes.append("no constraints to pin: pass --pin or --pins")
        if reason:
            plan.skip(reason)
        return trigger
    # A rule the system prompt already holds is sent with every request: a slot would send it twice.
    resident = {c.id for c in frame.constraints if any(frame.resident[i] for i in frame.occurrences[c.id].verbatim)}
    pinned = [c for c in frame.constraints if c.id not in resident]
    if resident:
        plan.notes.append(f"{len(resident)} constraint(s) already in the system prompt: not pinned again")
    if not pinned:
        if reason:
            plan.skip(reason)
        return trigger
    text = "\n".join(c.text for c in pinned)
    # The slot sits after the resident prefix: adding it re-writes the cache from there, once.
    start = next((i for i, is_resident in enumerate(frame.resident) if not is_resident), len(frame.blocks))
    plan.add(SYSTEM, frame.counter.count(text), f"pinned slot ({len(pinned)} constraint(s))", start)
    plan.pinned.update(c.id for c in pinned)
    return trigger


STRATEGIES = (
    Strategy(
        "clear_tool_results",
        "Anthropic clear_tool_uses_20250919: old tool results become a placeholder, the newest keep pairs stay",
        CLEAR_TOOL_PARAMS,
        clear_tool_results,
        pair_safe=True,
    ),
    Strategy(
        "clear_thinking",
        "Anthropic clear_thinking_20251015: thinking of all but the newest keep assistant turns is dropped",
        (Param("keep", INT_OR_ALL, None, "assistant turns whose thinking stays, or all (default: the model's)", 1,
               "the model's (all on Opus 4.5+ and Sonnet 4.6+, else 1)"),),
        clear_thinking,
        pair_safe=True,
    ),
    Strategy(
        "pinned_slot",
        "seed 000's fix: constraints in a resident slot re-sent every turn, plus clear_tool_results",
        CLEAR_TOOL_PARAMS,
        pinned_slot,
        pair_safe=True,
    ),
)
