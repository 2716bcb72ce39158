"""The system prompt and tools a log does not show, inferred from its first model call (issue 16, item 7)."""

from __future__ import annotations

import json

import pytest

from ctxtop.context.output.markdown import render_markdown
from ctxtop.context.output.snapshot import INFERRED, build_snapshot
from ctxtop.context.window.accounting import OUTPUT_CATEGORIES
from ctxtop.context.window.harness import AFTER_COMPACTION, FIRST_CALL, MODEL_SWITCH, TOOLS_CHANGED, HarnessTracker
from ctxtop.context.window.replay import Replay, Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.timeline import ROWS as TIMELINE_ROWS
from ctxtop.parsers.model import SYSTEM, TOOLS
from ctxtop.tui.widgets.header import header_text

from ..conftest import DATA, SHARED_FIXTURES

CLAUDE_CODE = SHARED_FIXTURES / "claude-code"
# The real Claude Code sessions whose main chain has model calls (the sub-agent files have none of their own).
SESSIONS = sorted(p for p in CLAUDE_CODE.glob("*.jsonl") if "sidechain" not in p.name) if CLAUDE_CODE.is_dir() else []


def _first_prompt(path) -> int:
    """The first main-chain model call's prompt, read from the raw log (not through ctxtop's parser)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        usage = (record.get("message") or {}).get("usage") if record.get("type") == "assistant" else None
        if usage and not record.get("isSidechain"):
            prompt = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
            if prompt:
                return prompt
    raise AssertionError(f"{path.name}: no model call")


@pytest.mark.skipif(not SESSIONS, reason=f"shared fixtures not found at {SHARED_FIXTURES}")
@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:40])
def test_real_claude_code_sessions_leave_at_most_a_quarter_unattributed(path):
    session = Session.open(path)
    snapshot = build_snapshot(session)
    window = snapshot["window"]
    rows = window["categories"]
    inferred, unattributed = rows[INFERRED], rows["unattributed"]
    reported = window["reported_tokens"]
    assert reported
    assert unattributed["tokens"] <= 0.25 * reported, f"{unattributed['tokens']:,} of {reported:,} still unattributed"
    assert inferred["tokens"] > 0.5 * (reported - window["estimated_tokens"])
    # Both say they are estimates, and where the inference comes from.
    assert inferred["estimated"] and unattributed["estimated"]
    assert inferred["label"] == "system + tools (inferred from the first call)"
    source = inferred["inferred_from"]
    assert source["reason"] == FIRST_CALL
    # The first call's prompt minus what the log shows before it, the prompt read independently.
    before = session.window_at(source["message"] - 1).estimated_tokens
    assert source["tokens"] == _first_prompt(path) - before
    # What the last call reported beyond its text, still there with what came after it.
    assert window["used_tokens"] >= reported
    assert inferred["tokens"] + unattributed["tokens"] == window["used_tokens"] - window["estimated_tokens"]


@pytest.mark.skipif(not SESSIONS, reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_inference_holds_across_a_compaction_and_reads_the_same_in_markdown():
    path = CLAUDE_CODE / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    session = Session.open(path)
    compaction = session.compactions()[0].message
    before, after = build_snapshot(session, compaction - 1), build_snapshot(session, None)
    assert before["window"]["categories"][INFERRED]["inferred_from"] == after["window"]["categories"][INFERRED]["inferred_from"]
    assert after["window"]["categories"][INFERRED]["tokens"] == 25_877  # 25,882 reported at message 2, 5 of it logged
    markdown = render_markdown(after)
    assert "| system + tools (inferred from the first call) | ≈ 25,877 |" in markdown
    assert "inferred from the model call at message 2" in markdown


def test_the_note_says_when_the_window_leaves_less_than_the_inferred_figure():
    # At 205 the demo reports 1,298 tokens for 160 counted: the row holds the 1,138 left, not the 1,175 inferred.
    from ctxtop.tui.demo import DEMO_WINDOW, demo_path

    markdown = render_markdown(build_snapshot(Session.open(demo_path(), window=DEMO_WINDOW), 205))
    assert "| system + tools (inferred from the first call) | ≈ 1,138 |" in markdown
    assert "(1,175 tokens, first call; here 1,138, all the reported size leaves)" in markdown


def test_after_a_compaction_that_records_no_size_the_window_still_holds_the_inferred_system_and_tools():
    # Gemini CLI's compression records no size after it: until the next model call reports one, the window is
    # its counted text and the prefix every request carries, not the counted text alone (5,173 tokens fewer).
    session = Session.open(DATA / "gemini_chat.jsonl")
    compaction = session.compactions()[0].message
    snapshot = build_snapshot(session, compaction + 1)
    window = snapshot["window"]
    prefix = window["categories"][INFERRED]
    assert window["reported_tokens"] is None and prefix["tokens"] == prefix["inferred_from"]["tokens"] == 5_173
    assert window["used_tokens"] == window["estimated_tokens"] + 5_173 == sum(row["tokens"] for row in window["categories"].values())
    assert f"≈{window['used_tokens']:,} / " in header_text(snapshot, available=session.message_count, mode="").plain
    assert f"**Window:** ≈{window['used_tokens']:,} / " in render_markdown(snapshot)  # an estimate, as the header says
    reported = build_snapshot(session, compaction + 2)["window"]  # the next call reports its size: that is the window's
    assert reported["used_tokens"] == reported["reported_tokens"] == 900


def _claude_log(tmp_path, calls):
    """A Claude Code log of user turns each answered by a model call: (model, prompt tokens) per call."""
    lines = []
    for n, (model, prompt) in enumerate(calls):
        lines.append({"type": "user", "sessionId": "s", "uuid": f"u{n}", "message": {"role": "user", "content": f"question {n}"}})
        lines.append({"type": "assistant", "sessionId": "s", "uuid": f"a{n}", "message": {
            "id": f"m{n}", "role": "assistant", "model": model, "content": [{"type": "text", "text": f"answer {n}"}],
            "usage": {"input_tokens": prompt, "output_tokens": 3}}})
    log = tmp_path / "switch.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


def test_a_model_switch_infers_again_from_the_step_and_a_known_model_takes_its_figure_back(tmp_path):
    log = _claude_log(tmp_path, [("claude-a", 1000), ("claude-a", 1010), ("claude-b", 1600), ("claude-b", 1620), ("claude-a", 1050)])
    session = Session.open(log)

    def inferred(at):
        return build_snapshot(session, at)["window"]["categories"][INFERRED]

    first = inferred(2)
    unexplained_first = 1000 - session.window_at(1).estimated_tokens
    assert first["inferred_from"] == {"message": 2, "model": "claude-a", "reason": FIRST_CALL, "tokens": unexplained_first}
    switch = inferred(6)["inferred_from"]
    step = (1600 - session.window_at(5).estimated_tokens) - (1010 - session.window_at(3).estimated_tokens)
    assert switch == {"message": 6, "model": "claude-b", "reason": MODEL_SWITCH, "tokens": unexplained_first + step}
    assert inferred(6)["label"] == "system + tools (inferred from the first call of claude-b)"
    assert inferred(8)["inferred_from"] == switch  # same model: unchanged
    assert inferred(10)["inferred_from"] == first["inferred_from"]  # back to claude-a


def test_tools_listed_mid_session_infer_the_prefix_again_for_the_same_model(tmp_path):
    """An MCP server joins: Claude Code 2.1.8x+ logs its tools as a deferred_tools_delta attachment
    (the names are counted as logged); the schemas the harness now sends are the step at the next call."""
    log = _claude_log(tmp_path, [("claude-a", 1000), ("claude-a", 1010), ("claude-a", 4000), ("claude-a", 4010)])
    lines = log.read_text().splitlines()
    joined = {"type": "attachment", "sessionId": "s", "uuid": "t1", "attachment": {
        "type": "deferred_tools_delta", "addedNames": ["mcp__github__create_issue"], "addedLines": ["mcp__github__create_issue"],
        "removedNames": []}}
    log.write_text("\n".join([*lines[:4], json.dumps(joined), *lines[4:]]) + "\n")
    session = Session.open(log)

    def inferred(at):
        return build_snapshot(session, at)["window"]["categories"][INFERRED]

    first = inferred(4)["inferred_from"]
    assert first["reason"] == FIRST_CALL
    # Message 5 is the tool listing; the next call (7) has 2,990 more tokens no logged text explains.
    step = (4000 - session.window_at(6).estimated_tokens) - (1010 - session.window_at(3).estimated_tokens)
    assert step > 2_900
    again = inferred(7)
    assert again["inferred_from"] == {"message": 7, "model": "claude-a", "reason": TOOLS_CHANGED, "tokens": first["tokens"] + step}
    assert again["label"] == "system + tools (inferred again after the tools changed)"
    assert inferred(9)["inferred_from"] == again["inferred_from"]  # no change since: kept
    assert inferred(4)["inferred_from"] == first  # the window before the change keeps the first figure


def test_tools_listed_before_the_first_call_change_nothing():
    tracker = HarnessTracker()
    tracker.tools_listed()
    tracker.call(2, "a", 20_000, 100, _totals(TOOLS))
    assert (tracker.prefix.tokens, tracker.prefix.reason) == (19_900, FIRST_CALL)


def test_the_windows_before_the_first_call_hold_the_prefix_it_infers_as_an_estimate(tmp_path):
    # The system prompt and tools went with the first request: they were in the window before it. A saved log shows
    # them from its first message, as an estimate; they showed as 0 until the first call. A tool listing logged before
    # that call is part of what it explains (not "the tools changed").
    log = _claude_log(tmp_path, [("claude-a", 1000), ("claude-a", 1010)])
    listing = {"type": "attachment", "sessionId": "s", "uuid": "t0", "attachment": {
        "type": "deferred_tools_delta", "addedNames": ["Read"], "addedLines": ["Read"], "removedNames": []}}
    log.write_text(json.dumps(listing) + "\n" + log.read_text())
    session = Session.open(log)
    first_call = build_snapshot(session, 3)["window"]["categories"][INFERRED]["inferred_from"]
    assert first_call == {"message": 3, "model": "claude-a", "reason": FIRST_CALL, "tokens": 1000 - session.window_at(2).estimated_tokens}
    for message in (1, 2):
        snapshot = build_snapshot(session, message)
        window = snapshot["window"]
        prefix = window["categories"][INFERRED]
        assert window["reported_tokens"] is None
        assert prefix["tokens"] == first_call["tokens"] and prefix["estimated"] and prefix["inferred_from"] == first_call
        assert prefix["label"] == "system + tools (inferred from the first call)"
        assert window["used_tokens"] == window["estimated_tokens"] + first_call["tokens"]
        assert f"≈{window['used_tokens']:,} / " in header_text(snapshot, available=session.message_count, mode="").plain
    timeline = session.timeline()
    assert [timeline[n].tokens[TIMELINE_ROWS.index(INFERRED)] for n in (0, 1)] == [first_call["tokens"]] * 2
    # From the first call on, each window is as it was without the prefix known ahead.
    unseeded = Replay(session.entries, session.accounting)
    for window in unseeded.run():
        if window.at >= 3:
            assert session.window_at(window.at).harness == window.harness


def test_a_followed_log_shows_the_first_calls_prefix_before_it_once_that_call_is_written(tmp_path):
    from ctxtop.context.window.follow import LogFollower
    from ctxtop.tui.demo import DEMO_WINDOW, demo_path

    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines[:4]))  # four user messages: no model call yet, nothing to infer from
    follower = LogFollower(log, window=DEMO_WINDOW)
    assert follower.window_at(4).harness is None
    with open(log, "ab") as handle:
        handle.writelines(lines[4:40])
    assert follower.poll() is not None
    fresh = Session.open(log, window=DEMO_WINDOW)
    assert follower.window_at(1).harness == fresh.window_at(1).harness is not None
    assert [p.tokens for p in follower.points] == [p.tokens for p in fresh.timeline()]


def _totals(*categories):
    window = Window(at=0)
    for name in categories:
        window.totals[name].blocks = 1
    return window.totals


def test_a_log_that_carries_system_and_tools_needs_no_inference_and_one_with_system_only_infers_tools():
    both = HarnessTracker()
    both.call(2, "m", 5000, 4000, _totals(SYSTEM, TOOLS))
    assert both.prefix is None
    system_only = HarnessTracker()
    system_only.call(2, "m", 5000, 4000, _totals(SYSTEM))
    assert system_only.prefix.tokens == 1000 and system_only.prefix.label == "tools (inferred from the first call)"


def test_a_model_switch_right_after_a_compaction_infers_from_that_call_alone():
    tracker = HarnessTracker()
    tracker.call(2, "a", 20_000, 100, _totals())
    tracker.call(4, "a", 90_000, 50_000, _totals())
    tracker.compacted()
    tracker.call_output = 300
    tracker.call(7, "b", 24_000, 3_300, _totals())  # 3,000 of it logged before the call
    assert (tracker.prefix.tokens, tracker.prefix.reason, tracker.prefix.message) == (21_000, AFTER_COMPACTION, 7)


def test_a_log_without_usage_has_nothing_inferred():
    snapshot = build_snapshot(Session.open(DATA / "anthropic_request.json"))
    assert snapshot["window"]["reported_tokens"] is None
    assert snapshot["window"]["categories"][INFERRED] == {
        "tokens": 0, "blocks": 0, "estimated": True, "label": "system + tools (inferred)", "inferred_from": None,
        "summarized_conversation": False}


def test_the_html_report_labels_the_inferred_row_and_marks_both_estimates():
    from ctxtop.context.tracker import Tracker
    from ctxtop.tui.demo import DEMO_WINDOW, demo_path

    page = Tracker.open(str(demo_path()), window=DEMO_WINDOW).report_html(203)
    assert "system + tools (inferred from the first call)" in page
    assert '<td class="n">≈ 1,175</td>' in page and '<td class="n">≈ 399</td>' in page


def test_text_added_since_the_last_call_beyond_what_it_reported_is_the_window_shown(tmp_path):
    """A tool's result after the last call: the window holds what the call reported, the call's own answer (its tool
    call, which the next call is sent) and the result. The header, the Markdown and the JSON say that, as an estimate,
    as the timeline's column does."""
    records = [
        {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": "Read the log."}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "message": {
            "id": "m1", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "usage": {"input_tokens": 40, "output_tokens": 10},
            "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/tmp/app.log"}}]}},
        {"type": "user", "uuid": "u2", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "error: disk full on /var\n" * 200}]}},
    ]
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    session = Session.open(log)
    snapshot = build_snapshot(session, 3)
    window = snapshot["window"]
    assert window["reported_tokens"] == 40 and window["estimated_tokens"] > 1000
    result, answer = window["categories"]["tool_result"]["tokens"], window["categories"]["tool_call"]["tokens"]
    assert answer > 0 and window["used_tokens"] == 40 + answer + result == sum(row["tokens"] for row in window["categories"].values())
    assert build_snapshot(session, 2)["window"]["used_tokens"] == 40  # at the call itself: what it reported, exactly
    assert f"≈{window['used_tokens']:,} / " in header_text(snapshot, available=3, mode="").plain
    assert f"**Window:** ≈{window['used_tokens']:,} / " in render_markdown(snapshot)
    assert session.timeline()[-1].total == window["used_tokens"]  # the timeline's column is as tall


@pytest.mark.skipif(not SESSIONS, reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_a_big_tool_result_after_a_call_does_not_take_the_system_prompt_out_of_the_window():
    # A sub-agent's 17,000-token page fetched after a call that reported 22,047: the window was shown as the counted
    # text alone (26,113), the inferred system prompt and tools gone from it; the next call reports 42,182.
    agent = CLAUDE_CODE / "marot_258c7280-ae70-4798-800f-63464d01a85d" / "subagents" / "agent-a881341.jsonl"
    session = Session.open(agent)
    snapshots = {m: build_snapshot(session, m) for m in (4, 5, 6)}
    after_call, page, next_call = (snapshots[m]["window"] for m in (4, 5, 6))
    assert after_call["used_tokens"] == after_call["reported_tokens"] == page["reported_tokens"] == 22_047
    assert next_call["used_tokens"] == next_call["reported_tokens"] == 42_182
    answer = sum(item.tokens for item in session.window_at(4).blocks if item.entry.index == 4 and item.category in OUTPUT_CATEGORIES)
    added = page["estimated_tokens"] - after_call["estimated_tokens"]
    assert answer > 0 and page["used_tokens"] == 22_047 + answer + added and abs(page["used_tokens"] - 42_182) < 0.08 * 42_182
    assert page["categories"][INFERRED]["tokens"] == after_call["categories"][INFERRED]["tokens"] > 12_000
    assert f"≈{page['used_tokens']:,} / " in header_text(snapshots[5], available=6, mode="").plain  # an estimate, said so


def test_an_answer_written_over_several_messages_is_all_in_the_window_after_its_call(tmp_path):
    """Codex writes one answer as its reasoning, its text and each tool call apart, and the usage after them. At the
    tool's output the window is what the call was sent (as it reported), the whole answer and the output; before,
    the answer's first messages were taken for part of what the call was sent, and left out."""
    def item(payload, kind="response_item"):
        return {"timestamp": "2026-03-01T09:00:00.000Z", "type": kind, "payload": payload}

    records = [
        item({"id": "s", "timestamp": "2026-03-01T09:00:00.000Z", "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.57.0"},
             "session_meta"),
        item({"cwd": "/w", "model": "gpt-5-codex"}, "turn_context"),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Why does the total test fail?"}]}),
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Reading the failing test first. " * 20}],
              "content": None}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me read the test. " * 30}]}),
        item({"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["cat", "tests/test_total.py"]}),
              "call_id": "c1"}),
        item({"type": "token_count", "info": {"total_token_usage": {"input_tokens": 5000, "cached_input_tokens": 0,
              "output_tokens": 400, "reasoning_output_tokens": 100, "total_tokens": 5400},
              "last_token_usage": {"input_tokens": 5000, "cached_input_tokens": 0,
              "output_tokens": 400, "reasoning_output_tokens": 100, "total_tokens": 5400}, "model_context_window": 272000}},
             "event_msg"),
        item({"type": "function_call_output", "call_id": "c1", "output": "def test_total():\n    assert total([1, 2]) == 3\n" * 10}),
    ]
    log = tmp_path / "rollout-2026-03-01T09-00-00-s.jsonl"
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    session = Session.open(log)
    calls = [e.index for e in session.entries if e.usage is not None]
    assert len(calls) == 1 and session.entries[-1].usage is None
    question = next(e.index for e in session.entries if e.role == "user" and e.blocks and "total test" in e.blocks[0].text)
    sent = session.window_at(question).estimated_tokens  # what the call was sent, as counted: its answer comes after
    output = build_snapshot(session, len(session.entries))["window"]
    assert output["reported_tokens"] == 5000
    assert output["used_tokens"] == 5000 + output["estimated_tokens"] - sent
    assert session.timeline()[-1].total == output["used_tokens"]
