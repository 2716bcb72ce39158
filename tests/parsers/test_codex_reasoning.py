"""Codex: the reasoning of earlier turns is not part of the next prompt (issue 16, item 8).

The Responses API drops reasoning items before the last user message (OpenAI
cookbook, "Better performance from reasoning models using the Responses API",
#caching; Codex stopped sending them in openai/codex#5857). Within a turn the
reasoning stays (the model reads it back across its tool calls).
"""

from __future__ import annotations

import json

import pytest

from ctxtop.context.window.session import Session
from ctxtop.parsers.model import REASONING_RESENT

from ..conftest import DATA, SHARED_FIXTURES

ROLLOUT = DATA / "codex_resumed_reasoning.jsonl"


def _reasoning_entries(window):
    return sorted({item.entry.index for item in window.blocks if item.category == "reasoning"})


def test_a_new_user_turn_drops_the_earlier_reasoning():
    session = Session.open(ROLLOUT)
    # Turn 1: entries 3 (user) to 8; its two reasoning items are both in the window at its end.
    assert _reasoning_entries(session.window_at(8)) == [4, 7]
    # Turn 2 starts at entry 9: the first turn's reasoning is gone, the rest of the turn is not.
    after = session.window_at(9)
    assert _reasoning_entries(after) == [] and after.categories()["reasoning"].tokens == 0
    assert [item.entry.index for item in after.blocks if item.category == "tool_call"] == [5]
    # ...and turn 2's own reasoning is kept across its function call.
    assert _reasoning_entries(session.window_at(14)) == [10, 13]
    assert _reasoning_entries(session.window_at()) == [16]


def test_the_window_total_still_adds_up_after_the_drop():
    session = Session.open(ROLLOUT)
    for message in range(1, session.message_count + 1):
        window = session.window_at(message)
        assert window.estimated_tokens == sum(item.tokens for item in window.blocks)


def test_claude_code_keeps_its_reasoning_rule():
    """Claude Code sends its thinking back with every later call."""
    session = Session.open(DATA / "claude_compact.jsonl")
    assert session.parser.reasoning_kept == session.new_replay().reasoning_kept == REASONING_RESENT


AGTRACE = SHARED_FIXTURES / "codex" / "agtrace_codex_session.jsonl"


@pytest.mark.skipif(not AGTRACE.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_real_0_66_rollout_keeps_only_the_last_turns_reasoning():
    items = [json.loads(line) for line in AGTRACE.read_text().splitlines()]
    responses = [i["payload"] for i in items if i["type"] == "response_item" and i["payload"]["type"] != "ghost_snapshot"]
    last_user = max(n for n, p in enumerate(responses) if p["type"] == "message" and p["role"] == "user")
    since_last_user = sum(1 for p in responses[last_user:] if p["type"] == "reasoning")
    assert sum(1 for p in responses if p["type"] == "reasoning") > since_last_user  # earlier turns reasoned too
    window = Session.open(AGTRACE).window_at()
    assert window.categories()["reasoning"].blocks == since_last_user


LOCALPUSH = sorted((SHARED_FIXTURES / "codex").glob("localpush_rollout-*.jsonl"))


@pytest.mark.parametrize("path", [ROLLOUT, *LOCALPUSH], ids=lambda p: p.name[:40])
def test_each_drop_takes_every_earlier_turns_reasoning(path):
    """A drop looks only past the previous one: at every message of a walk (compactions and snapshots
    included) the window still holds exactly the reasoning written since the last user message."""
    session = Session.open(path)
    last_user, dropped = 0, 0
    for window in session.new_replay().run():
        if session.entries[window.at - 1].role == "user":
            last_user = window.at
        reasoning = _reasoning_entries(window)
        assert all(index >= last_user for index in reasoning), (window.at, last_user, reasoning)
        assert all(item.category != "reasoning" for item in window.blocks[: window.reasoning_from])
        assert window.categories()["reasoning"].blocks == sum(1 for i in window.blocks if i.category == "reasoning")
        dropped += bool(last_user == window.at and reasoning == [])
    assert dropped > 0
