"""OpenHands V1 conversations as one JSON array of events (issue 16, item 3).

Viewers and exports concatenate ``events/event-*.json`` into one array; it is
read like the events folder. The real fixture (kimi-k2.5, 103 events) has no
condensation; ``tests/data/openhands_v1_events.json`` (hand-written in the
real events' shapes) has one, with ``summary_offset``.
"""

from __future__ import annotations

import json

import pytest

from ctxtop.context.window.session import Session
from ctxtop.parsers import registry
from ctxtop.tui.cli import main

from ..conftest import DATA, SHARED_FIXTURES

REAL = SHARED_FIXTURES / "openhands-v1" / "atineoSE_7510150b294841dda032a87239ebdf25_events.json"


@pytest.mark.skipif(not REAL.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_real_array_is_detected_and_every_event_read():
    events = json.loads(REAL.read_text())
    assert registry.detect(REAL.read_bytes()) == "openhands"
    session = Session.open(REAL)
    assert session.message_count == len(events) == 103
    window = session.window_at()
    categories = window.categories()
    # 49 tool calls and their 49 results; the system prompt and its tool schemas stay resident.
    assert categories["tool_call"].blocks == categories["tool_result"].blocks == 49
    assert categories["system"].blocks == 1 and categories["tools"].blocks == 1
    assert categories["user"].blocks == 4
    assert session.reported_at() is None  # V1 events carry no token usage


def test_a_condensation_hides_the_forgotten_events_and_puts_the_summary_at_its_offset():
    session = Session.open(DATA / "openhands_v1_events.json")
    [compaction] = session.compactions()
    assert compaction.kind == "condensation" and compaction.message == 7
    uids = [(item.entry.uid, item.category) for item in session.window_at().blocks]
    # kept: e1 (system + tools), e2, then the summary (summary_offset 2), e5 and e6; e3/e4 forgotten.
    assert uids == [("e1", "system"), ("e1", "tools"), ("e2", "user"), ("e7", "summary"),
                    ("e5", "assistant"), ("e5", "tool_call"), ("e6", "tool_result"), ("e8", "assistant")]
    before = [item.entry.uid for item in session.window_at(6).blocks]
    assert "e3" in before and "e4" in before


def test_export_shows_the_condensation(capsys):
    assert main(["export", str(DATA / "openhands_v1_events.json")]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert snapshot["source"]["format"] == "openhands"
    assert [c["kind"] for c in snapshot["compactions"]] == ["condensation"]
    assert snapshot["window"]["categories"]["summary"]["blocks"] == 1


def test_the_events_folder_and_the_array_read_alike(tmp_path):
    events = json.loads((DATA / "openhands_v1_events.json").read_text())
    folder = tmp_path / "conversation" / "events"
    folder.mkdir(parents=True)
    for number, event in enumerate(events):
        (folder / f"event-{number:05d}-{event['id']}.json").write_text(json.dumps(event))
    from_folder, from_array = Session.open(folder.parent), Session.open(DATA / "openhands_v1_events.json")
    assert [(e.uid, [b.category for b in e.blocks]) for e in from_folder.entries] == \
        [(e.uid, [b.category for b in e.blocks]) for e in from_array.entries]


@pytest.mark.parametrize(("fixture", "forced"), [
    ("openhands_v1_events.json", "swe-agent"),
    ("claude_compact.jsonl", "codex"),
    ("codex_local_compaction.jsonl", "openhands"),
])
def test_a_forced_format_that_reads_nothing_is_exit_2_with_the_reason(fixture, forced, capsys):
    assert main(["export", "--log-format", forced, str(DATA / fixture)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no message could be read as {forced}" in err and "Traceback" not in err


def test_watch_refuses_a_forced_format_that_rejects_the_log(capsys):
    assert main(["watch", "--log-format", "codex", str(DATA / "claude_compact.jsonl")]) == 2
    assert "no message could be read as codex (17 malformed line(s)" in capsys.readouterr().err
