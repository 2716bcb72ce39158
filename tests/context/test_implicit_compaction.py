"""Implicit compactions only between calls of one model; a resume or a model switch is named (issue 16, item 9)."""

from __future__ import annotations

import json

import pytest

from ctxtop.context.audit.alerts import AlertKind
from ctxtop.context.audit.events import compaction_events
from ctxtop.context.window.session import Session
from ctxtop.tui.cli import main

from ..conftest import DATA, SHARED_FIXTURES


def _export(capsys, name):
    assert main(["export", str(DATA / name)]) == 0
    return json.loads(capsys.readouterr().out)


def test_alternating_models_are_model_switches_not_compactions(capsys):
    snapshot = _export(capsys, "gemini_model_switch.jsonl")
    notes = [(a["kind"], a["message"]) for a in snapshot["alerts"]]
    # pro 12,000 → flash 8,100 and pro 12,600 → flash 8,500: other models; flash 8,500 → flash 5,200: a compaction.
    assert notes == [("model_switch", 4), ("model_switch", 8), ("implicit_compaction", 10)]
    assert [(c["kind"], c["message"], c["pre_tokens"], c["post_tokens"]) for c in snapshot["compactions"]] == [("implicit", 10, 8500, 5200)]


def test_a_resume_days_later_is_labelled_a_resume(capsys):
    snapshot = _export(capsys, "codex_resumed_reasoning.jsonl")
    assert snapshot["compactions"] == []
    [alert] = snapshot["alerts"]
    assert alert["kind"] == "resumed" and alert["message"] == 17 and "2.2 days" in alert["detail"]


def test_the_notes_never_fail_check(capsys):
    assert not AlertKind.MODEL_SWITCH.fails and not AlertKind.RESUMED.fails
    assert main(["check", str(DATA / "gemini_model_switch.jsonl")]) == 0
    capsys.readouterr()


def _pro_flash_pro(tmp_path):
    """A chat log, pro 12,000 → flash 8,000 → pro 7,000 (pro's context fell by 42% against pro's last call)."""
    lines = [{"sessionId": "g", "projectHash": "h", "startTime": "2026-02-10T09:00:00.000Z", "kind": "main"}]
    for number, (model, prompt) in enumerate([("gemini-2.5-pro", 12000), ("gemini-2.5-flash", 8000), ("gemini-2.5-pro", 7000)]):
        lines.append({"id": f"u{number}", "timestamp": f"2026-02-10T09:0{number}:00.000Z", "type": "user", "content": "go on"})
        lines.append({"id": f"g{number}", "timestamp": f"2026-02-10T09:0{number}:30.000Z", "type": "gemini", "content": "done",
                      "model": model, "tokens": {"input": prompt, "output": 5, "cached": 0, "total": prompt + 5}})
    return tmp_path / "chat.jsonl", [json.dumps(line) + "\n" for line in lines]


def test_a_fall_within_one_model_counts_across_a_call_of_another(tmp_path):
    log, lines = _pro_flash_pro(tmp_path)
    log.write_text("".join(lines))
    events = compaction_events(Session.open(log))
    assert [(e.kind, e.message, e.pre_tokens, e.post_tokens) for e in events] == [("implicit", 6, 12000, 7000)]


def _turns(tmp_path, turns):
    """A Gemini CLI chat log: each turn a user message, then calls reporting the prompts given."""
    lines = [{"sessionId": "g", "projectHash": "h", "startTime": "2026-02-10T09:00:00.000Z", "kind": "main"}]
    for turn, prompts in enumerate(turns):
        lines.append({"id": f"u{turn}", "timestamp": f"2026-02-10T09:{turn:02}:00.000Z", "type": "user", "content": "go on"})
        for call, prompt in enumerate(prompts):
            lines.append({"id": f"g{turn}-{call}", "timestamp": f"2026-02-10T09:{turn:02}:{10 + call:02}.000Z", "type": "gemini",
                          "content": "done", "model": "gemini-2.5-pro", "tokens": {"input": prompt, "output": 5, "cached": 0}})
    log = tmp_path / "chat.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


def test_the_opening_call_of_a_turn_that_reports_more_is_no_baseline(tmp_path):
    # As the real session below: each turn's first call reports more than the calls around it, which go on growing.
    log = _turns(tmp_path, [[13629, 6219, 6286, 6402], [21501, 6550, 6686]])
    assert compaction_events(Session.open(log)) == []
    # A real fall within a turn is still one, measured from the call before the opening one.
    log = _turns(tmp_path, [[100_000, 101_000], [130_000, 60_000]])
    assert [(e.kind, e.message, e.pre_tokens, e.post_tokens) for e in compaction_events(Session.open(log))] == [
        ("implicit", 6, 101_000, 60_000)]


@pytest.mark.parametrize("opening_call_reports_more, found", [(False, [(3, 150_000, 44_000), (6, 150_000, 60_000)]), (True, [])])
def test_only_a_harness_known_to_report_more_for_a_turns_opening_call_is_spared(opening_call_reports_more, found):
    """Elsewhere (Codex, Claude Code, an API dump…) a fall after a turn's first call is a compaction like any
    other, the session's very first call included."""
    from ctxtop.context.audit.events import EventScan
    from ctxtop.parsers.model import ASSISTANT, USER, Block, Entry, Usage

    scan = EventScan(opening_call_reports_more)
    script = [("user", None), ("call", 150_000), ("call", 44_000), ("user", None), ("call", 150_000), ("call", 60_000)]
    for index, (kind, prompt) in enumerate(script, 1):
        if kind == "user":
            scan.see(Entry(index, "user", [Block(USER, "go on")], 0, index))
        else:
            scan.see(Entry(index, "assistant", [Block(ASSISTANT, "done")], 0, index, model="m", usage=Usage(prompt)))
    assert [(e.message, e.pre_tokens, e.post_tokens) for e in scan.events] == found


GEMINI_REAL = SHARED_FIXTURES / "gemini-cli" / "agtrace_gemini_session.json"


@pytest.mark.skipif(not GEMINI_REAL.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_real_gemini_session_has_no_compaction_and_its_cache_reads(capsys):
    """Checked against the file: no compression record; the first call of each turn reports 13,629 and 21,501 where
    the calls after it go on from 6,219 to 6,686. ``input`` is the prompt with the cached part in it."""
    session = Session.open(GEMINI_REAL)
    assert compaction_events(session) == []
    usage = session.entries[2].usage
    assert (usage.prompt_tokens, usage.cache_read_tokens) == (6219, 5864)
    assert main(["check", str(GEMINI_REAL)]) == 0 and "implicit" not in capsys.readouterr().out


def _follow(log, lines, start):
    from ctxtop.context.tracker import Tracker

    log.write_text("".join(lines[:start]))
    tracker = Tracker.open(str(log), live=True)
    seen = [(a.kind.key, a.message) for a in tracker.new_alerts()]
    for line in lines[start:]:
        with log.open("a") as handle:
            handle.write(line)
        change = tracker.poll()
        if change is not None:
            seen += [(a.kind.key, a.message) for a in change.alerts]
    return seen


def test_a_followed_log_finds_a_fall_within_one_model_as_it_arrives(tmp_path):
    log, lines = _pro_flash_pro(tmp_path)
    assert _follow(log, lines, 3) == [("model_switch", 4), ("implicit_compaction", 6)]


def test_a_followed_log_notes_the_switches_and_the_compaction_as_they_arrive(tmp_path):
    lines = (DATA / "gemini_model_switch.jsonl").read_text().splitlines(keepends=True)
    seen = _follow(tmp_path / "chat.jsonl", lines, 3)  # from the header and the first pro call on
    assert seen == [("model_switch", 4), ("model_switch", 8), ("implicit_compaction", 10)]
