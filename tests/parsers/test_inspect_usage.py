"""Inspect AI's two usage conventions (issue 16, item 4).

Inspect <= 0.3.x counted cache reads inside ``input_tokens`` (``total_tokens ==
input_tokens + output_tokens``); newer logs keep them apart. Adding the reads
again gave 9,755 instead of 5,915 on the real 0.3.95 log.
"""

from __future__ import annotations

import json

import pytest

from ctxtop import parsers
from ctxtop.context.window.session import Session
from ctxtop.parsers.inspect_ai import prompt_tokens
from ctxtop.tui.cli import main

from ..conftest import DATA, SHARED_FIXTURES

BROWSER = SHARED_FIXTURES / "inspect-ai" / "UKGovernmentBEIS_2025-05-12T20-27-36-04-00_browser.json"


@pytest.mark.skipif(not BROWSER.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_0_3_95_log_reports_its_last_prompt(capsys):
    assert main(["export", str(BROWSER)]) == 0
    assert json.loads(capsys.readouterr().out)["window"]["reported_tokens"] == 5_915


@pytest.mark.skipif(not BROWSER.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_every_call_of_the_0_3_95_log_reads_input_tokens_as_the_whole_prompt():
    sample = json.loads(BROWSER.read_text())["samples"][0]
    usages = [e["output"]["usage"] for e in sample["events"] if e["event"] == "model"]
    assert [prompt_tokens(u) for u in usages] == [1124, 1568, 2732, 3896, 5915]
    assert any(u["input_tokens_cache_read"] for u in usages)


@pytest.mark.skipif(not BROWSER.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_each_call_is_reported_on_the_reply_it_wrote():
    # The five model events' outputs are the five assistant messages (by id): each window between
    # them has its own reported size, not only the last one.
    session = Session.open(BROWSER)
    reported = {e.index: e.usage.prompt_tokens for e in session.entries if e.usage is not None}
    assert reported == {2: 1124, 4: 1568, 6: 2732, 8: 3896, 10: 5915}
    assert [session.reported_at(m) for m in (1, 2, 3, 9, 10)] == [None, 1124, 1124, 3896, 5915]


@pytest.mark.parametrize(("usage", "prompt"), [
    # newer convention: cache reads and writes come on top of input_tokens, and total counts them
    ({"input_tokens": 2077, "output_tokens": 207, "input_tokens_cache_read": 3840, "total_tokens": 6124}, 5917),
    ({"input_tokens": 10, "output_tokens": 5, "input_tokens_cache_write": 900, "input_tokens_cache_read": 100, "total_tokens": 1015}, 1010),
    # no total given: the cache is not counted twice only when the log says so
    ({"input_tokens": 650, "output_tokens": 30, "input_tokens_cache_read": 100}, 750),
    # no cache: both conventions agree
    ({"input_tokens": 64, "output_tokens": 2, "total_tokens": 66}, 64),
])
def test_the_convention_comes_from_the_usage_itself(usage, prompt):
    assert prompt_tokens(usage) == prompt


def test_the_hand_written_compaction_log_keeps_the_newer_reading():
    assert Session.open(DATA / "inspect_compaction.json").reported_at() == 750


def test_a_usage_that_is_no_count_is_counted_once():
    # A call whose reply is in the messages and whose usage is no count: it was counted once on the reply,
    # then read again as the last call's usage (no reply having taken one) and counted a second time.
    document = json.loads((DATA / "inspect_compaction.json").read_text())
    sample = document["samples"][0]
    reply = next(m["id"] for m in sample["messages"] if m["role"] == "assistant")
    sample["events"] = [e for e in sample["events"] if e.get("event") != "model"]
    sample["events"].append({"event": "model", "output": {"usage": {"input_tokens": -5, "output_tokens": 3},
                                                          "choices": [{"message": {"id": reply, "role": "assistant"}}]}})
    assert parsers.parse(json.dumps(document).encode()).diagnostics.invalid_numbers == 1


def test_an_edit_or_trim_compaction_is_not_paired_with_a_summary_it_did_not_write():
    # Compaction events were paired with summary messages in order, whatever their type: a trim before the summary
    # took the summary's place, and its sizes (30,000 → 20,000) were shown for the summary's (10,000 → 700).
    document = json.loads((DATA / "inspect_compaction.json").read_text())
    sample = document["samples"][0]
    trim = {"event": "compaction", "type": "trim", "tokens_before": 30_000, "tokens_after": 20_000, "source": "inspect",
            "metadata": {"strategy": "CompactionTrim", "trigger": "threshold"}}
    sample["events"].insert(0, trim)
    parsed = parsers.parse(json.dumps(document).encode())
    [marker] = [e.compaction for e in parsed.entries if e.compaction is not None]
    assert (marker.pre_tokens, marker.post_tokens) == (10_000, 700)
    assert any("1 compaction(s) by edit or trim" in note for note in parsed.diagnostics.examples)


@pytest.mark.parametrize(("started_at", "first_time"), [
    ("2025-05-12T20:27:36.900000-04:00", "2025-05-12T20:27:36.900000-04:00"),
    (None, "2025-05-12T20:27:37.000000-04:00"),  # (Inspect 0.3.95 leaves started_at null: the first event's time)
])
def test_a_sample_s_messages_have_the_times_its_events_give(started_at, first_time):
    # Inspect's messages carry no time, so every entry had none, and a fleet audit's `started` was null for every
    # Inspect sample. The first message has the sample's start; a reply, when its model call completed.
    document = json.loads((DATA / "inspect_compaction.json").read_text())
    sample = document["samples"][0]
    sample["started_at"] = started_at
    first_call, _compaction, last_call = sample["events"]
    first_call["timestamp"] = "2025-05-12T20:27:37.000000-04:00"
    last_call.update(timestamp="2025-05-12T20:27:40.000000-04:00", completed="2025-05-12T20:27:41.500000-04:00")
    last_call["output"]["choices"] = [{"message": {"id": "d", "role": "assistant"}}]
    parsed = parsers.parse(json.dumps(document).encode())
    assert [(e.role, e.timestamp) for e in parsed.entries] == [
        ("system", first_time), ("user", None), ("user", None), ("assistant", "2025-05-12T20:27:41.500000-04:00"), ("tool", None)]


@pytest.mark.skipif(not BROWSER.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_0_3_95_log_starts_at_its_first_event():
    session = Session.open(BROWSER)
    assert session.entries[0].timestamp == "2025-05-12T20:27:36.997226-04:00"
    assert session.entries[1].timestamp == "2025-05-12T20:27:39.697159-04:00"  # the first reply, when its call completed
