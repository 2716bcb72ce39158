"""Strategy previews against hand-computed results on a small window, and seed 000's table on the demo."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.context.rules.constraints import make_constraint
from ctxtop.context.strategies import STRATEGIES, Frame, StrategyError, preview, preview_all
from ctxtop.context.strategies.agents import adk_sliding_ranges
from ctxtop.context.strategies.clearing import default_thinking_keep
from ctxtop.context.strategies.preview import DROPPED, KEPT, PLACEHOLDER, SUMMARIZED, TRUNCATED
from ctxtop.context.window.replay import Window, WindowBlock
from ctxtop.parsers.model import (
    ASSISTANT,
    IMAGE,
    REASONING,
    SYSTEM,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Block,
    Entry,
)
from ctxtop.tui.cli import main

RULE = "Never email the customer."
PLACEHOLDER_TOKENS = 4  # "[cleared]" and "<MASKED>" in cl100k_base

# (message, category, text, tokens, tool id, tool name): a window whose every size is chosen by hand.
BLOCKS = [
    (1, SYSTEM, "You are an agent.", 10, None, None),
    (2, USER, RULE, 6, None, None),
    (3, TOOL_CALL, '{"file_path": "a.py"}', 8, "t1", "Read"),
    (4, TOOL_RESULT, "contents of a.py", 100, "t1", None),
    (5, TOOL_CALL, '{"command": "ls"}', 8, "t2", "Bash"),
    (6, TOOL_RESULT, "listing", 200, "t2", None),
    (7, USER, "check again", 4, None, None),
    (8, REASONING, "thinking it over", 30, None, None),
    (8, ASSISTANT, "looks fine", 5, None, None),
    (9, TOOL_CALL, '{"command": "make"}', 8, "t3", "Bash"),
    (10, TOOL_RESULT, "built", 50, "t3", None),
    (11, REASONING, "all good", 20, None, None),
    (11, ASSISTANT, "done", 2, None, None),
]
TOTAL = 451
BLOCK_OF = {}  # message -> first block index


def small_window() -> Window:
    window = Window(at=11)
    entries: dict[int, Entry] = {}
    for i, (message, category, text, tokens, tool_id, tool_name) in enumerate(BLOCKS):
        role = {SYSTEM: "system", USER: "user", TOOL_RESULT: "user"}.get(category, "assistant")
        entry = entries.setdefault(message, Entry(message, role, [], 0, message))
        block = Block(category, text, tool_name=tool_name, tool_id=tool_id)
        entry.blocks.append(block)
        window.append(WindowBlock(entry, len(entry.blocks) - 1, block, tokens))
        BLOCK_OF.setdefault(message, i)
    return window


@pytest.fixture
def frame(counter) -> Frame:
    return Frame(small_window(), counter, [make_constraint(RULE, "pin")], limit=200_000)


def fates_by_message(p) -> dict[int, str]:
    return {BLOCKS[i][0]: fate for i, fate in enumerate(p.fates) if fate != KEPT}


def test_small_window_adds_up(frame):
    assert frame.total == TOTAL
    assert frame.history_total == TOTAL - 10
    assert len(frame.messages) == 10


# --- clearing ------------------------------------------------------------------------------------
def test_clear_tool_results_keeps_the_newest_pairs(frame):
    p = preview(frame, "clear_tool_results:keep=1,trigger=now")
    assert fates_by_message(p) == {4: PLACEHOLDER, 6: PLACEHOLDER}
    assert p.tokens_after == TOTAL - 300 + 2 * PLACEHOLDER_TOKENS
    assert p.categories_after[TOOL_RESULT] == 50 + 2 * PLACEHOLDER_TOKENS
    assert p.trigger.fires is True
    # The cache holds until the first cleared result: system, the rule and the first call.
    assert p.cache_prefix_tokens == 24
    assert p.cache_rewrite_tokens == p.tokens_after - 24
    assert p.constraints["no-email-customer"].outcome == "kept"


def test_clear_tool_results_default_trigger_is_100k_input_tokens(frame):
    p = preview(frame, "clear_tool_results")
    assert p.trigger.fires is False and "100,000" in p.trigger.rule
    assert p.params["keep"] == 3 and p.params["placeholder"] == "[cleared]"
    assert not p.applies and "none older than the newest 3" in p.reason


def test_clear_tool_results_tool_uses_trigger(frame):
    assert preview(frame, "clear_tool_results:trigger=tool_uses:2,keep=1").trigger.fires is True
    assert preview(frame, "clear_tool_results:trigger=tool_uses:3,keep=1").trigger.fires is False


def test_clear_at_least_is_all_or_nothing(frame):
    freed = 300 - 2 * PLACEHOLDER_TOKENS
    p = preview(frame, f"clear_tool_results:keep=1,clear_at_least={freed + 1}")
    assert not p.applies and "clear_at_least" in p.reason
    assert p.tokens_after == TOTAL and set(p.fates) == {KEPT}
    assert preview(frame, f"clear_tool_results:keep=1,clear_at_least={freed}").applies


def test_exclude_tools_are_never_cleared_and_do_not_count_toward_keep(frame):
    p = preview(frame, "clear_tool_results:keep=0,exclude_tools=Bash")
    assert fates_by_message(p) == {4: PLACEHOLDER}
    p = preview(frame, "clear_tool_results:keep=1,exclude_tools=Read")
    assert fates_by_message(p) == {6: PLACEHOLDER}


def test_clear_tool_inputs_empties_the_calls_too(frame, counter):
    emptied = counter.count("Read") + counter.count("{}")
    p = preview(frame, "clear_tool_results:keep=2,clear_tool_inputs=true")
    assert fates_by_message(p) == {3: PLACEHOLDER, 4: PLACEHOLDER}
    assert p.tokens_after == TOTAL - 100 - 8 + PLACEHOLDER_TOKENS + emptied
    only_bash = preview(frame, "clear_tool_results:keep=1,clear_tool_inputs=Bash")
    assert fates_by_message(only_bash) == {4: PLACEHOLDER, 5: PLACEHOLDER, 6: PLACEHOLDER}


def test_custom_placeholder_is_counted(frame, counter):
    p = preview(frame, "clear_tool_results:keep=2,placeholder=gone")
    assert p.tokens_after == TOTAL - 100 + counter.count("gone")


def test_clear_thinking_drops_all_but_the_newest_turns(frame):
    p = preview(frame, "clear_thinking")
    assert fates_by_message(p) == {8: DROPPED}
    assert p.tokens_after == TOTAL - 30
    assert p.categories_after[REASONING] == 20
    assert preview(frame, "clear_thinking:keep=all").applies is False
    assert preview(frame, "clear_thinking:keep=2").applies is False


@pytest.mark.parametrize(("model", "keep"), [
    ("claude-opus-4-6", "all"), ("claude-opus-4-5-20251101", "all"), ("claude-sonnet-4-6", "all"), ("claude-opus-5", "all"),
    ("claude-sonnet-4-5-20250929", 1), ("claude-opus-4-1-20250805", 1), ("claude-opus-4-20250514", 1), ("claude-haiku-4-5", 1),
    ("claude-3-7-sonnet-20250219", 1), ("gpt-5-codex", 1), (None, 1),
])
def test_clear_thinking_keeps_by_default_what_the_api_keeps_for_the_model(model, keep):
    # strategies.md §1b: the default varies by model class. On the Opus 4.6 session, the preview said 98% of its
    # thinking would go, where the API's default drops none.
    assert default_thinking_keep(model) == keep


def test_clear_thinking_without_keep_takes_the_default_of_the_windows_model(counter):
    window = small_window()
    for item in window.blocks:
        item.entry.model = "claude-opus-4-6" if item.entry.role == "assistant" else None
    p = preview(Frame(window, counter, limit=200_000), "clear_thinking")
    assert p.applies is False and p.params["keep"] == "all" and "claude-opus-4-6" in p.reason
    for item in window.blocks:
        item.entry.model = "claude-sonnet-4-5-20250929" if item.entry.role == "assistant" else None
    p = preview(Frame(window, counter, limit=200_000), "clear_thinking")
    assert fates_by_message(p) == {8: DROPPED} and p.params["keep"] == 1


def test_pinned_slot_keeps_every_pin_and_clears_tool_results(frame, counter):
    p = preview(frame, "pinned_slot:keep=1")
    assert fates_by_message(p) == {4: PLACEHOLDER, 6: PLACEHOLDER}
    assert p.tokens_after == TOTAL - 300 + 2 * PLACEHOLDER_TOKENS + counter.count(RULE)
    assert p.constraints["no-email-customer"].outcome == "kept"
    # The slot goes in right after the system prompt: the cache is re-written from there, once.
    assert p.cache_prefix_tokens == 10


def test_pinned_slot_does_not_pin_again_a_rule_the_system_prompt_holds(counter):
    # A rule already in the system prompt is sent with every request: the slot added it a second time (a window of
    # a system prompt and its rule grew to 200%).
    window = small_window()
    system = window.blocks[0]
    system.block.text = f"You are an agent. {RULE}"
    p = preview(Frame(window, counter, [make_constraint(RULE, "pin")], limit=200_000), "pinned_slot:keep=1")
    assert not p.added and p.tokens_after == TOTAL - 300 + 2 * PLACEHOLDER_TOKENS
    assert p.constraints["no-email-customer"].outcome == "kept"
    assert "1 constraint(s) already in the system prompt: not pinned again" in p.notes
    nothing_to_clear = preview(Frame(window, counter, [make_constraint(RULE, "pin")], limit=200_000), "pinned_slot:keep=9")
    assert not nothing_to_clear.applies and nothing_to_clear.tokens_after == TOTAL


# --- cutting by position -----------------------------------------------------------------------------
def test_sliding_window_cuts_on_a_token_boundary(frame):
    p = preview(frame, "sliding_window:keep_tokens=60")
    # Message 11 (22 tokens) stays whole, message 10 keeps its last 38 of 50 tokens; the system prompt stays.
    assert p.fates[BLOCK_OF[10]] == TRUNCATED and p.tokens_after_by_block[BLOCK_OF[10]] == 38
    assert all(p.fates[i] == DROPPED for i in range(1, BLOCK_OF[10]))
    assert p.fates[0] == KEPT
    assert p.tokens_after == 10 + 60
    assert p.constraints["no-email-customer"].outcome == "lost"
    assert p.cache_prefix_tokens == 10


def test_sliding_window_uses_the_budget_by_default(counter):
    frame = Frame(small_window(), counter, [], budget=100)
    p = preview(frame, "sliding_window")
    assert p.params["keep_tokens"] == 100 and p.tokens_after == 110


def test_drop_oldest_drops_whole_messages_even_mid_pair(frame):
    p = preview(frame, "drop_oldest:n=2")
    assert fates_by_message(p) == {2: DROPPED, 3: DROPPED}
    assert p.tokens_after == TOTAL - 14
    assert p.constraints["no-email-customer"].outcome == "lost"
    assert not p.pair_safe


def test_drop_oldest_picks_n_from_the_budget(counter):
    frame = Frame(small_window(), counter, [], budget=150)
    p = preview(frame, "drop_oldest")
    # Dropping messages 2-6 leaves 441 - 322 = 119 history tokens; 2-5 would leave 319.
    assert p.params["n"] == 5 and p.tokens_after == 10 + 119


# --- summaries -------------------------------------------------------------------------------------------
def test_summarize_keeps_the_tail_and_moves_the_cut_to_keep_pairs(frame):
    p = preview(frame, "summarize:keep_messages=2")
    # Keeping messages 10-11 would orphan result t3: the cut moves back to its call (message 9).
    assert {m for m, f in fates_by_message(p).items()} == {2, 3, 4, 5, 6, 7, 8}
    assert set(fates_by_message(p).values()) == {SUMMARIZED}
    span = 6 + 8 + 100 + 8 + 200 + 4 + 35
    assert p.added[0].tokens == span // 2  # a summary never costs more than half of what it replaces
    assert p.tokens_after == 10 + span // 2 + 8 + 50 + 22
    assert p.constraints["no-email-customer"].outcome == "at_risk"
    assert p.trigger.fires is None  # on demand
    assert "cut moved earlier" in p.notes[0]


def test_anthropic_compaction_summarizes_everything_but_the_system_prompt(frame):
    p = preview(frame, "anthropic_compaction")
    assert p.fates[0] == KEPT and set(p.fates[1:]) == {SUMMARIZED}
    assert p.tokens_after == 10 + min(2000, 441 // 2)
    assert p.trigger.fires is False and "150,000" in p.trigger.rule
    with pytest.raises(StrategyError, match="at least 50,000"):
        preview(frame, "anthropic_compaction:trigger=1000")


def test_claude_code_reattaches_recently_read_files(frame):
    p = preview(frame, "claude_code")
    assert p.fates[BLOCK_OF[4]] == KEPT  # the Read result comes back
    # The summary (2,000 wanted) at most half of what it replaces: the history less the file sent again.
    history = TOTAL - 10
    assert p.tokens_after == 10 + (history - 100) // 2 + 100
    assert "200,000" not in p.trigger.rule and "167,000" in p.trigger.rule
    capped = preview(frame, "claude_code:file_tokens=40")
    assert capped.fates[BLOCK_OF[4]] == TRUNCATED and capped.tokens_after == 10 + (history - 40) // 2 + 40


def test_codex_keeps_user_messages_within_its_budget(frame):
    p = preview(frame, "codex")
    kept = {BLOCKS[i][0] for i, f in enumerate(p.fates) if f == KEPT}
    assert kept == {1, 2, 7}
    assert p.tokens_after == 10 + 6 + 4 + (TOTAL - 10 - 6 - 4) // 2  # the summary: half of what it replaces, at most
    assert p.constraints["no-email-customer"].outcome == "kept"
    tight = preview(frame, "codex:user_message_tokens=5")
    assert tight.fates[BLOCK_OF[2]] == TRUNCATED and tight.tokens_after_by_block[BLOCK_OF[2]] == 1


def test_a_summary_never_grows_the_window_past_what_it_replaces(counter):
    # One 10,000-token user message: Codex keeps it (up to 20,000 tokens of user messages) and the summary was
    # sized on the whole history, 5,000 more: the window grew to 120% (12,012 tokens on a real-sized one).
    window = Window(at=2)
    for message, category, tokens in ((1, SYSTEM, 10), (2, USER, 10_000)):
        block = Block(category, "x")
        window.append(WindowBlock(Entry(message, "user", [block], 0, message), 0, block, tokens))
    for spec in ("codex", "claude_code"):
        p = preview(Frame(window, counter, limit=200_000), spec)
        assert p.tokens_after <= p.tokens_before, (spec, p.tokens_after)


# --- agent frameworks -----------------------------------------------------------------------------------
def test_adk_sliding_windows_overlap_as_in_seed_002():
    assert adk_sliding_ranges(9, 3, 1) == [(0, 2), (2, 5), (5, 8)]
    assert adk_sliding_ranges(10, 3, 0) == [(0, 2), (3, 5), (6, 8)]
    assert adk_sliding_ranges(2, 3, 1) == []


def test_adk_sliding_on_the_small_window(frame):
    # Two invocations (user messages 2 and 7): too few for the default interval of 3.
    assert not preview(frame, "adk").applies
    p = preview(frame, "adk:compaction_interval=1,overlap_size=0")
    assert len(p.added) == 2
    # ADK's summarizer reads only text: function calls and responses in the span just go.
    assert p.fates[BLOCK_OF[4]] == DROPPED and p.fates[BLOCK_OF[2]] == SUMMARIZED


def test_adk_token_threshold_keeps_retained_events_with_their_calls(frame):
    p = preview(frame, "adk:token_threshold=100,event_retention_size=2")
    assert p.trigger.fires is True
    # Retaining messages 10-11 would orphan t3's response: the split moves back to message 9.
    assert p.fates[BLOCK_OF[9]] == KEPT and p.fates[BLOCK_OF[8]] == SUMMARIZED
    assert not preview(frame, "adk:token_threshold=100").applies


def test_openhands_llm_summarizing_keeps_head_and_tail_events(frame):
    p = preview(frame, "openhands:max_size=6,keep_first=1")
    assert p.trigger.fires is True
    # 12 events: keep the first one and 6//2 - 1 - 1 = 1 last one.
    assert p.fates[BLOCK_OF[2]] == KEPT and p.fates[-1] == KEPT
    assert set(p.fates[BLOCK_OF[3]:-1]) == {SUMMARIZED}
    assert p.constraints["no-email-customer"].outcome == "kept"


def test_openhands_masking_masks_old_observations_only(frame):
    p = preview(frame, "openhands_masking:attention_window=3")
    assert fates_by_message(p) == {4: PLACEHOLDER, 6: PLACEHOLDER}
    assert p.tokens_after == TOTAL - 300 + 2 * PLACEHOLDER_TOKENS


def screenshot_window() -> Window:
    """Two screenshot tool calls whose results hold an image each, as computer-use and browser tools return them."""
    window = Window(at=5)
    user = Entry(1, "user", [Block(USER, RULE)], 0, 1)
    window.append(WindowBlock(user, 0, user.blocks[0], 6))
    for message, tool_id in ((2, "s1"), (4, "s2")):
        call = Entry(message, "assistant", [Block(TOOL_CALL, "{}", tool_name="screenshot", tool_id=tool_id)], 0, message)
        window.append(WindowBlock(call, 0, call.blocks[0], 3))
        result = Entry(message + 1, "user", [Block(TOOL_RESULT, "shot", tool_id=tool_id), Block(IMAGE, "", tool_id=tool_id)], 0, message + 1)
        window.append(WindowBlock(result, 0, result.blocks[0], 1))
        window.append(WindowBlock(result, 1, result.blocks[1], 1600))
    return window


@pytest.mark.parametrize("spec", ["clear_tool_results:keep=1,trigger=now", "pinned_slot:keep=1", "openhands_masking:attention_window=3"])
def test_a_cleared_tool_result_takes_its_images_with_it(counter, spec):
    # The placeholder stands for the whole result: a screenshot inside it is not re-sent either.
    frame = Frame(screenshot_window(), counter, [])
    p = preview(frame, spec)
    assert [fate for fate, block in zip(p.fates, frame.blocks) if block.category == IMAGE] == [DROPPED, KEPT]
    assert p.categories_after[IMAGE] == 1600
    assert p.tokens_after < p.tokens_before - 1500


def test_a_token_boundary_cut_never_falls_inside_an_image(counter):
    # An image has no tokens to keep a part of: the cut that falls inside it takes it whole.
    frame = Frame(screenshot_window(), counter, [])
    p = preview(frame, "sliding_window:keep_tokens=2000")
    assert [fate for fate, block in zip(p.fates, frame.blocks) if block.category == IMAGE] == [DROPPED, KEPT]
    assert p.tokens_after == 3 + 1 + 1600 and TRUNCATED not in p.fates


# --- every strategy ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(STRATEGIES))
def test_totals_add_up_and_nothing_is_changed(frame, name):
    before = [(b.tokens, b.cleared) for b in frame.blocks]
    p = preview(frame, name)
    assert sum(p.categories_after.values()) == p.tokens_after
    assert p.tokens_after == p.tokens_before - p.freed
    assert len(p.fates) == len(frame.blocks)
    assert p.cache_prefix_tokens + p.cache_rewrite_tokens == (p.tokens_after if p.applies else p.tokens_before)
    assert [(b.tokens, b.cleared) for b in frame.blocks] == before


@settings(max_examples=60, deadline=None)
@given(keep=st.integers(0, 12), name=st.sampled_from(["summarize", "adk"]))
def test_pair_safe_cuts_never_orphan_a_result(counter, keep, name):
    frame = Frame(small_window(), counter, [])
    spec = f"summarize:keep_messages={keep}" if name == "summarize" else f"adk:token_threshold=1,event_retention_size={keep}"
    p = preview(frame, spec)
    for result in frame.results:
        call = frame.calls[frame.blocks[result].block.tool_id]
        if p.fates[result] == KEPT:
            assert p.fates[call] == KEPT


def test_unknown_strategy_and_parameter_are_one_line_errors(frame):
    with pytest.raises(StrategyError, match="unknown strategy 'nope'"):
        preview(frame, "nope")
    with pytest.raises(StrategyError, match="no parameter 'kep'"):
        preview(frame, "clear_tool_results:kep=3")
    with pytest.raises(StrategyError, match="not a whole number"):
        preview(frame, "clear_tool_results:keep=three")
    with pytest.raises(StrategyError, match="'keep_tokens' given twice"):
        preview(frame, "sliding_window:keep_tokens=1,keep_tokens=2")
    assert len(preview_all(frame)) == len(STRATEGIES)


def test_a_placeholder_is_counted_as_it_is_shown(frame):
    # An escape sequence in a placeholder is dropped from what is shown: it is not counted either.
    escaped = preview(frame, "clear_tool_results:trigger=now,placeholder=\x1b[31mX")
    plain = preview(frame, "clear_tool_results:trigger=now,placeholder=X")
    assert escaped.params["placeholder"] == "X" and escaped.tokens_after == plain.tokens_after


# --- seed 000's table, on the demo --------------------------------------------------------------------
SEED_CLEAR = {8: 2142, 4: 2015, 2: 1956}


def test_demo_reproduces_seed_000s_table(capsys):
    specs = [f"sliding_window:keep_tokens={k}" for k in (2000, 1000, 500, 300)]
    specs += [f"clear_tool_results:keep={k},trigger=now" for k in SEED_CLEAR]
    specs += [f"drop_oldest:n={n}" for n in (3, 6, 12)]
    specs += ["pinned_slot"]
    args = ["preview", "--demo", "--at", "203", "--json"] + [a for s in specs for a in ("--strategy", s)]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    # 203 messages and about 4.7k tokens, like the seed's 203 turns and 4,756 tokens.
    assert report["at"] == 203 and abs(report["window_tokens"] - 4756) / 4756 < 0.05
    rows = {(p["strategy"], json.dumps(p["params"], sort_keys=True)): p for p in report["strategies"]}
    by_spec = dict(zip(specs, report["strategies"]))
    assert len(rows) == len(specs)
    for spec, p in by_spec.items():
        counts = p["constraint_counts"]
        assert counts["total"] == 3, spec
        if spec.startswith(("sliding_window", "drop_oldest")):
            assert counts["kept"] == 0 and counts["lost"] == 3, spec
        else:
            assert counts["kept"] == 3, spec
    for keep, seed_tokens in SEED_CLEAR.items():
        after = by_spec[f"clear_tool_results:keep={keep},trigger=now"]["tokens"]["after"]
        assert abs(after - seed_tokens) / seed_tokens <= 0.15, (keep, after, seed_tokens)
        assert by_spec[f"clear_tool_results:keep={keep},trigger=now"]["trigger"]["fires"] is True
    assert by_spec["sliding_window:keep_tokens=2000"]["tokens"]["after"] == 2000


def test_demo_first_compaction_is_right_after_message_203(demo_session):
    first = min(c.message for c in demo_session.compactions())
    assert first == 204


@pytest.fixture(scope="module")
def demo_session():
    from ctxtop.context.window.session import Session
    from ctxtop.tui.demo import DEMO_WINDOW, demo_path

    return Session.open(demo_path(), window=DEMO_WINDOW)


def test_preview_table_lists_every_strategy(capsys):
    assert main(["preview", "--demo", "--at", "203"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("at message 203 / 390: 4,825 visible tokens, budget 2,412; 3 rule(s) in force (auto-detected unless pinned)")
    for name in STRATEGIES:
        assert f"\n{name} " in out
    assert "0/0/3 of 3" in out and "3/0/0 of 3" in out and "0/3/0 of 3" in out


@pytest.mark.parametrize("spec, error", [
    ("clear_tool_results:trigger=-5", "trigger: must be at least 0, got -5"),
    ("clear_tool_results:trigger=input_tokens:-5", "trigger: must be at least 0, got -5"),
    ("pinned_slot:trigger=tool_uses:-1", "trigger: must be at least 0, got -1"),
])
def test_a_negative_trigger_is_refused(frame, spec, error):
    # "input tokens > -5" fires on every window: a sign typed by mistake, not a threshold.
    with pytest.raises(StrategyError, match=error):
        preview(frame, spec)


def test_preview_errors_are_one_line(capsys):
    assert main(["preview", "--demo", "--strategy", "clear_tool_results:keep"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected key=value" in err


def test_export_includes_strategies_on_request(capsys):
    assert main(["export", "--demo", "--at", "203", "--strategies", "--budget", "1000"]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert snapshot["budget"] == 1000
    assert [p["strategy"] for p in snapshot["strategies"]] == list(STRATEGIES)
    sliding = snapshot["strategies"][0]
    assert sliding["params"]["keep_tokens"] == 1000 and sliding["tokens"]["after"] == 1000
    assert sliding["blocks"][0] == {"message": 1, "block": 0, "category": "user", "fate": "dropped",
                                    "tokens_before": sliding["blocks"][0]["tokens_before"], "tokens_after": 0}
    assert main(["export", "--demo", "--at", "203", "--format", "md", "--strategy", "pinned_slot"]) == 0
    markdown = capsys.readouterr().out
    assert "### Strategy previews (budget 2,412 tokens)" in markdown and "| pinned\\_slot |" in markdown
    assert main(["export", "--demo"]) == 0
    assert "strategies" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("after", "shown"), [(2_000, "2,000 (41%)"), (3_210, "3,210 (67%)"), (4_562, "4,562 (95%)"), (1_880, "1,880 (39%)")])
def test_the_preview_tables_percent_is_rounded_once_from_the_counts(after, shown):
    # 2,000 of 4,825 is 41.45%: rounded to percent_of_before's 41.5 first, it showed as 42%, where the TUI said 41%.
    from ctxtop.context.strategies.report import strategy_rows

    preview_row = {"strategy": "sliding_window", "params": {}, "trigger": {"rule": "", "fires": None}, "reason": "", "notes": [],
                   "tokens": {"before": 4_825, "after": after, "percent_of_before": round(100 * after / 4_825, 1)},
                   "constraint_counts": {"kept": 0, "at_risk": 0, "lost": 0, "total": 0}, "cache": {"rewrite_tokens": 0}}
    assert strategy_rows([preview_row])[0][3] == shown
