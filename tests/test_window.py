"""The window as the model saw it, before and after each kind of compaction."""

import pytest

from context.snapshot import build_snapshot
from context.window import CLEARED_PLACEHOLDER

from .conftest import DATA


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
        parts = sum(v["tokens"] for k, v in window["categories"].items() if k != "unattributed")
        assert window["estimated_tokens"] == parts
        assert all(v["tokens"] >= 0 for v in window["categories"].values())
        if window["reported_tokens"] is not None:
            unattributed = window["categories"]["unattributed"]["tokens"]
            assert unattributed == max(0, window["reported_tokens"] - window["estimated_tokens"])


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
    from context.session import Session

    after = texts(Session.open(path).window_at(9))
    assert after[1:] == ["Done.", "continue with the report", "next step", "ok"]
