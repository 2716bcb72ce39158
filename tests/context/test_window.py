"""The window as the model saw it, before and after each kind of compaction."""

import json

import pytest

from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.window.replay import CLEARED_PLACEHOLDER
from ctxtop.context.window.session import Session

from ..conftest import DATA, exact_tokens


def texts(window):
    return [item.text for item in window.blocks]


def test_window_before_compaction(open_data):
    session = open_data("claude_compact.jsonl")
    window = session.window_at(5)
    assert texts(window) == [
        "Never push to main. The budget is 500 USD.",
        "Listing files.",
        '{"command":"ls"}',
        "file1\nfile2",
        "Done.",
        "continue with the report",
    ]
    count = session.counter.count
    expected = sum(count(t) for t in texts(window)) + count("Bash")
    assert window.estimated_tokens == expected
    assert session.reported_at(5) == 165  # the last call before: 5 + 150 + 10


def test_window_after_compaction_holds_summary_then_preserved(open_data):
    session = open_data("claude_compact.jsonl")
    assert session.window_at(6).blocks == []
    assert session.reported_at(6) == 60  # postTokens until the next model call
    after = texts(session.window_at(9))
    assert after[0].startswith("This session is being continued")
    assert after[1:] == ["continue with the report", "next step", "ok"]
    assert session.reported_at(9) == 75


def test_microcompact_swaps_results_for_placeholder(open_data):
    session = open_data("claude_microcompact.jsonl")
    before, after = session.window_at(5), session.window_at(6)
    assert not any(item.cleared for item in before.blocks)
    cleared = [item for item in after.blocks if item.cleared]
    assert [item.block.tool_id for item in cleared] == ["toolu_A"]
    assert cleared[0].text == CLEARED_PLACEHOLDER
    saved = before.categories()["tool_result"].tokens - after.categories()["tool_result"].tokens
    assert saved == session.counter.count("A" * 400) - session.counter.count(CLEARED_PLACEHOLDER)


def test_microcompact_clears_the_image_inside_a_result_too(tmp_path):
    # Claude Code swaps a cleared result's whole content for the placeholder: a screenshot a Read
    # returned goes with its text (it stayed in the window after, at its 1,600 tokens).
    lines = (DATA / "claude_microcompact.jsonl").read_text().splitlines()
    record = json.loads(lines[2])
    record["message"]["content"][0]["content"] = [{"type": "text", "text": "A" * 400},
                                                   {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}]
    lines[2] = json.dumps(record)
    log = tmp_path / "s.jsonl"
    log.write_text("\n".join(lines) + "\n")
    session = Session.open(log)
    before, after = session.window_at(5), session.window_at(6)
    assert before.categories()["image"].tokens > 0
    assert after.categories()["image"].tokens == 0
    assert [item.cleared for item in after.blocks if item.block.tool_id == "toolu_A" and item.category != "tool_call"] == [True, True]


def test_opaque_thinking_takes_reported_thinking_tokens(open_data):
    session = open_data("claude_microcompact.jsonl")
    thinking = next(item for item in session.window_at().blocks if item.category == "reasoning")
    assert thinking.tokens == 33 and thinking.estimated


def test_codex_local_compaction_window(open_data):
    session = open_data("codex_local_compaction.jsonl")
    window = session.window_at(9)
    assert [item.category for item in window.blocks] == ["system", "injected", "user", "summary"]
    assert session.reported_at(9) is None  # no post size recorded, no call yet
    assert session.reported_at() == 400
    assert session.limit() == (258400, "log")


def test_codex_reasoning_estimated_from_reported_reasoning_tokens(open_data):
    session = open_data("codex_local_compaction.jsonl")
    reasoning = next(item for item in session.window_at(8).blocks if item.category == "reasoning")
    assert reasoning.tokens == 40 and reasoning.estimated


def test_codex_remote_compaction_window(open_data):
    session = open_data("codex_remote_compaction.jsonl")
    marker = next(c for c in session.compactions())
    window = session.window_at(marker.message)
    assert [item.category for item in window.blocks] == ["system", "user", "summary"]
    assert marker.opaque


@pytest.mark.parametrize("name", ["claude_compact.jsonl", "codex_local_compaction.jsonl", "anthropic_request.json"])
def test_snapshot_totals_add_up(open_data, name):
    session = open_data(name)
    for at in range(0, session.message_count + 1):
        snapshot = build_snapshot(session, at)
        window = snapshot["window"]
        derived = ("inferred_system_tools", "unattributed")
        parts = sum(v["tokens"] for k, v in window["categories"].items() if k not in derived)
        assert window["estimated_tokens"] == parts
        assert all(v["tokens"] >= 0 for v in window["categories"].values())
        beyond = sum(window["categories"][k]["tokens"] for k in derived)
        assert window["used_tokens"] == window["estimated_tokens"] + beyond
        if window["reported_tokens"] is not None:
            assert window["used_tokens"] >= max(window["reported_tokens"], window["estimated_tokens"])


def test_window_override_and_model_limits(open_data):
    assert open_data("claude_compact.jsonl").limit() == (200_000, "model")
    assert open_data("claude_compact.jsonl", window=32_000).limit() == (32_000, "--window")


def test_preserved_segment_is_reattached_when_no_uuid_list(tmp_path, open_data):
    source = (DATA / "claude_compact.jsonl").read_text()
    segment = source.replace(
        '"preservedMessages": {"anchorUuid": "s1", "uuids": ["u3"]}',
        '"preservedSegment": {"headUuid": "a2", "anchorUuid": "s1", "tailUuid": "u3"}',
    )
    assert segment != source
    path = tmp_path / "segment.jsonl"
    path.write_text(segment)
    from ctxtop.context.window.session import Session

    after = texts(Session.open(path).window_at(9))
    assert after[1:] == ["Done.", "continue with the report", "next step", "ok"]


def test_a_preserved_message_written_after_its_boundary_is_not_re_attached_ahead_of_itself(tmp_path):
    # Claude Code writes a partial compaction's preserved messages before its boundary. A log that names one
    # written after it (here the first call's own record) crashed every command: "IndexError: array index out of
    # range" (the message was re-attached before it was counted). It is counted once, where it is written.
    boundary = {"type": "system", "subtype": "compact_boundary", "sessionId": "s", "uuid": "b1", "parentUuid": None,
                "compactMetadata": {"trigger": "auto", "preTokens": 170, "postTokens": 60, "preservedMessages": {"uuids": ["a1"]}}}
    answer = {"type": "assistant", "sessionId": "s", "uuid": "a1", "message": {
        "id": "m1", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": "Listing files."}],
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 50, "output_tokens": 5}}}
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in (boundary, answer)))
    window = Session.open(path).window_at(None)
    assert [item.entry.uid for item in window.blocks] == ["a1"]


def window_state(window) -> tuple:
    return (window.at, [(item.entry.index, item.position, item.category, item.tokens, item.estimated, item.cleared) for item in window.blocks],
            window.categories(), window.last_compaction)


def all_logs_with_compactions() -> list:
    from .test_lazy_text import jsonl_logs

    logs = jsonl_logs() + [DATA / "openhands_condensation.json", DATA / "inspect_compaction.json"]
    return [log for log in logs if any(e.compaction for e in Session.open(log).entries)]


@pytest.mark.parametrize("log", all_logs_with_compactions(), ids=lambda p: p.name[:40])
def test_windows_replayed_from_a_checkpoint_equal_a_replay_from_the_start(log):
    session = Session.open(log)
    counted = Session.open(log)
    exact_tokens(counted)  # the history's estimates made exact: each window as shown, from the start
    fresh = [window_state(w) for w in counted.new_replay().run()]
    # In an order that jumps back and forth, so windows come from checkpoints left by other replays.
    order = sorted(range(1, len(fresh) + 1), key=lambda m: (m * 7919) % len(fresh))
    for message in order + [len(fresh)] + order[::-1]:
        assert window_state(session.window_at(message)) == fresh[message - 1], message
    if any(e.compaction and e.compaction.kind != "microcompact" for e in session.entries):
        assert session._checkpoints, "no checkpoint was kept: the test would prove nothing"


def test_a_change_to_an_entry_before_a_checkpoint_is_not_hidden_by_it():
    # The system prompt stays through a compaction, so a checkpoint after it holds its count:
    # when a parser changes it (as live merges and late usage change entries), that must go.
    session = Session.open(DATA / "codex_local_compaction.jsonl")
    before = window_state(session.window_at(10))
    assert session._checkpoints
    session.parser.editable(0).blocks[0].text += " Never use the network." * 20
    session.parser.touch(0)
    session.count_new()
    after = window_state(session.window_at(10))
    assert after == window_state(session.new_replay().window_at(10))
    assert after[1][0][3] > before[1][0][3]  # the system prompt's tokens grew


@pytest.mark.parametrize("name", ["codex_local_compaction.jsonl", "codex_remote_compaction.jsonl", "claude_compact.jsonl"])
def test_the_latest_window_continues_the_replay_kept_while_reading(name, monkeypatch, small_batches):
    from ctxtop.context.window import session as session_module

    # Small pieces and batches: the replay must keep up across many reads, with entries packed behind it.
    monkeypatch.setattr(session_module, "STREAM_CHUNK_BYTES", 512)
    session = Session.open(DATA / name)
    assert session._ahead is not None and session._ahead.position > 0
    fresh = session.new_replay()
    for message in range(1, session.message_count + 1):
        assert window_state(session.window_at(message)) == window_state(fresh.window_at(message)), message


@pytest.mark.parametrize(("summary", "reasoning_tokens", "expected"), [
    ("鬱" * 10, 20, 30),  # 10 characters, 30 bytes, 30 tokens: more than the share, so its own count
    ("鬱" * 10, 30, 30),  # as many bytes as the share: the share
    ("Looking at the repo", 40, 40),  # fewer bytes than the share: the share, not tokenized
])
def test_reasoning_is_the_larger_of_its_share_and_its_visible_summary(tmp_path, summary, reasoning_tokens, expected):
    source = (DATA / "codex_local_compaction.jsonl").read_text(encoding="utf-8")
    changed = source.replace('"Looking at the repo"', f'"{summary}"').replace('"reasoning_output_tokens": 40', f'"reasoning_output_tokens": {reasoning_tokens}')
    path = tmp_path / "rollout.jsonl"
    path.write_text(changed, encoding="utf-8")
    session = Session.open(path)
    reasoning = next(item for item in session.window_at(8).blocks if item.category == "reasoning")
    assert reasoning.block.text == summary and reasoning.estimated
    assert reasoning.tokens == expected == max(session.counter.count(summary), reasoning_tokens)
