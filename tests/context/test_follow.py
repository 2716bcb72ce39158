"""Following a growing log with real files: appends, torn lines, truncation, replacement, live compactions."""

from __future__ import annotations

import os
import threading

import pytest

from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.store.source import SourceError
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.follow import LogFollower
from ctxtop.context.window.session import Session
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from ..conftest import DATA, SHARED_FIXTURES, exact_tokens

DEMO_LINES = demo_path().read_bytes().splitlines(keepends=True)


def first_compaction_line() -> int:
    return next(i for i, line in enumerate(DEMO_LINES) if b"compact_boundary" in line)


def write(path, lines) -> None:
    with open(path, "ab") as handle:
        handle.writelines(lines)


def test_appends_are_parsed_incrementally_and_match_a_fresh_read(tmp_path):
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:50])
    follower = LogFollower(log, window=DEMO_WINDOW)
    start = len(follower.session.entries)
    assert follower.poll() is None
    for chunk in range(50, len(DEMO_LINES), 37):
        write(log, DEMO_LINES[chunk : chunk + 37])
        update = follower.poll()
        assert update is not None and update.messages == len(follower.session.entries)
    fresh = Session.open(log, window=DEMO_WINDOW)
    assert len(follower.session.entries) == fresh.message_count > start
    assert [p.tokens for p in follower.points] == [p.tokens for p in fresh.timeline()]
    latest = follower.window_at(fresh.message_count)
    assert latest.estimated_tokens == fresh.window_at(None).estimated_tokens
    assert exact_tokens(follower.session) == exact_tokens(fresh)
    # Entries know where they are in the file, as a fresh read finds them.
    assert [(e.offset, e.line) for e in follower.session.entries] == [(e.offset, e.line) for e in fresh.entries]


def test_a_gemini_rewind_read_once_does_not_make_every_later_append_read_the_log_again(tmp_path):
    # After a {"$rewindTo"} anywhere in the log, each poll that found new lines read the whole file again and
    # said "the agent rewrote its history" (every message new): the flag stayed set from the first read.
    log = tmp_path / "session.jsonl"
    lines = (DATA / "gemini_chat.jsonl").read_text().splitlines()[:7]
    log.write_text("\n".join(lines + ['{"$rewindTo":"m4"}']) + "\n")
    follower = LogFollower(log)
    write(log, [b'{"id":"n1","timestamp":"t","type":"user","content":"go on"}\n'])
    assert follower.poll().reset is None
    write(log, [b'{"$rewindTo":"n1"}\n'])
    assert follower.poll().reset == "the agent rewrote its history; read again from the start"  # a new rewind still is one
    write(log, [b'{"id":"n2","timestamp":"t","type":"user","content":"again"}\n'])
    update = follower.poll()
    assert update.reset is None and update.new == 1
    assert [e.uid for e in follower.session.entries] == [e.uid for e in Session.open(log).entries]


def test_a_line_written_in_two_halves_waits_for_its_newline(tmp_path):
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:10])
    follower = LogFollower(log, window=DEMO_WINDOW)
    count = len(follower.session.entries)
    line = DEMO_LINES[10]
    write(log, [line[:40]])
    update = follower.poll()
    assert update is not None and update.new == 0
    assert follower.session.parser.diagnostics.malformed_lines == 0
    assert not follower.session.parser.diagnostics.torn_last_line
    write(log, [line[40:]])
    update = follower.poll()
    assert update.new == 1 and len(follower.session.entries) == count + 1


@pytest.mark.parametrize("name", ["openhands_condensation.json", "inspect_compaction.json"])
def test_a_json_document_caught_half_rewritten_is_waited_for(tmp_path, name):
    """A log kept as one JSON document is rewritten whole (Gemini CLI's session-*.json, an OpenHands trajectory):
    a poll that caught it half written raised "not a session log ctxtop knows", and the TUI stopped following it
    for good. The session read before stands until the document is whole again."""
    whole = (DATA / name).read_bytes()
    log = tmp_path / name
    log.write_bytes(whole)
    follower = LogFollower(log)
    count = len(follower.session.entries)
    log.write_bytes(whole[: len(whole) // 2])  # in place, as writeFile does: truncated, then written
    assert follower.poll() is None and len(follower.session.entries) == count
    log.write_bytes(whole)
    update = follower.poll()
    assert update is not None and len(follower.session.entries) == count


def test_a_json_document_caught_emptied_by_its_rewrite_keeps_the_session_read_before(tmp_path):
    """Gemini CLI rewrites its chat in place (truncated, then written): a poll between the two found an empty
    file and showed an empty session (`watch` printed "msg 0", then the next rewrite counted every message
    as new). Nothing is half a document too: the session read before stands until the document is whole."""
    whole = (DATA / "gemini_chat_document.json").read_bytes()
    log = tmp_path / "session-1.json"
    log.write_bytes(whole)
    follower = LogFollower(log)
    count = len(follower.session.entries)
    log.write_bytes(b"")
    assert follower.poll() is None and len(follower.session.entries) == count
    log.write_bytes(whole)
    update = follower.poll()
    assert update is not None and update.new == 0 and len(follower.session.entries) == count


def test_truncation_and_replacement_read_the_file_again(tmp_path):
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:100])
    follower = LogFollower(log, window=DEMO_WINDOW)
    log.write_bytes(b"".join(DEMO_LINES[:20]))
    update = follower.poll()
    assert "truncated" in update.reset and update.messages == len(Session.open(log).entries)
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(b"".join(DEMO_LINES[:30]))
    os.replace(replacement, log)
    update = follower.poll()
    assert "replaced" in update.reset and update.messages == len(Session.open(log).entries)


def test_a_compaction_appended_live_raises_its_alert_in_the_same_update(tmp_path):
    log = tmp_path / "live.jsonl"
    cut = first_compaction_line()
    write(log, DEMO_LINES[:cut])
    tracker = Tracker.open(str(log), window=DEMO_WINDOW, live=True)
    assert len(tracker.rules) == 3 and not [a for a in tracker.new_alerts() if a.kind.rule_lost]
    write(log, DEMO_LINES[cut : cut + 4])  # the boundary, the summary and the next call
    change = tracker.poll()
    assert change.update.compaction
    kinds = {a.kind.key for a in change.alerts}
    assert {"constraint_paraphrased", "constraint_lost"} <= kinds
    assert all(a.message == 204 for a in change.alerts if a.kind.rule_lost)


CODEX_ROLLOUT = next((SHARED_FIXTURES / "codex").glob("localpush_rollout-2026-02-23T12-54-34-*.jsonl"), None) \
    if (SHARED_FIXTURES / "codex").is_dir() else None


@pytest.mark.skipif(CODEX_ROLLOUT is None, reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_drift_made_by_calls_after_the_compaction_is_raised_while_following(tmp_path):
    # The compaction is the rollout's line 1788; the calls that repeat one made before it come later,
    # each in an append with no compaction: the drift used to be judged only when a compaction came.
    lines = CODEX_ROLLOUT.read_bytes().splitlines(keepends=True)
    log = tmp_path / "rollout.jsonl"
    write(log, lines[:1793])
    tracker = Tracker.open(str(log), live=True)
    assert not [a for a in tracker.new_alerts() if a.kind.key == "drift"]
    raised = []
    for start in range(1793, len(lines), 40):
        write(log, lines[start : start + 40])
        change = tracker.poll()
        raised += change.alerts if change is not None else []
    fresh = Tracker.open(str(log))
    assert [a.kind.key for a in fresh.alerts() if a.kind.key == "drift"] == ["drift"]
    assert [(a.kind, a.message, a.detail) for a in raised] == [(a.kind, a.message, a.detail) for a in fresh.alerts()]


def test_no_append_is_lost_in_a_burst_from_another_thread(tmp_path):
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:3])
    follower = LogFollower(log, window=DEMO_WINDOW)
    user_line = DEMO_LINES[0]

    def burst():
        for _ in range(1000):
            write(log, [user_line])

    writer = threading.Thread(target=burst)
    writer.start()
    while writer.is_alive():
        follower.poll()
    writer.join()
    follower.poll()
    assert len(follower.session.entries) == 1003
    assert follower.session.parser.diagnostics.malformed_lines == 0


def test_sub_agent_transcripts_beside_the_session_count_as_its_sub_agents(tmp_path):
    import json

    from ctxtop.context.output.snapshot import build_snapshot

    log = tmp_path / "d3m0c0de-8000-4e00-9000-5eed00000000.jsonl"
    write(log, DEMO_LINES[:20])
    follower = LogFollower(log, window=DEMO_WINDOW)
    assert build_snapshot(follower.session)["subagents"] == {"messages": 0, "blocks": 0, "tokens": 0, "files": 0, "agents": []}
    assert follower.poll() is None
    record = {"parentUuid": None, "isSidechain": True, "sessionId": "d3m0c0de-8000-4e00-9000-5eed00000000",
              "agentId": "a1", "type": "user", "uuid": "s1", "timestamp": "2026-10-11T09:00:00.000Z",
              "message": {"role": "user", "content": "look up every order over budget"}}
    nested = log.with_suffix("") / "subagents" / "agent-a1.jsonl"
    nested.parent.mkdir(parents=True)
    nested.write_text(json.dumps(record) + "\n")
    update = follower.poll()
    assert update is not None and update.subagents and update.new == 0
    totals = build_snapshot(follower.session)["subagents"]
    assert totals["files"] == 1 and totals["messages"] == 1 and totals["tokens"] == follower.session.counter.count(
        "look up every order over budget")
    # The 2.0.x layout: agent-<id>.jsonl beside the session, tied to it by sessionId.
    (tmp_path / "agent-b2.jsonl").write_text(json.dumps({**record, "agentId": "b2", "uuid": "s2"}) + "\n")
    (tmp_path / "agent-other.jsonl").write_text(json.dumps({**record, "sessionId": "another", "uuid": "s3"}) + "\n")
    assert follower.poll().subagents
    listed = build_snapshot(follower.session)["subagents"]
    assert listed["files"] == 2 and sorted(a["id"] for a in listed["agents"]) == ["a1", "b2"]
    assert follower.poll() is None  # nothing changed: nothing re-read


def test_usage_reported_after_its_response_updates_the_estimates_when_followed_line_by_line(tmp_path):
    # Codex reports a call's usage in a later token_count line, after the opaque reasoning it sizes
    # was counted: followed a line at a time, the estimates must still end as a fresh read's.
    source = (DATA / "codex_local_compaction.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "rollout.jsonl"
    write(log, source[:1])
    follower = LogFollower(log)
    for line in source[1:]:
        write(log, [line])
        follower.poll()
    fresh = Session.open(log)
    assert exact_tokens(follower.session) == exact_tokens(fresh)
    assert [[follower.session.accounting.estimated(i, j) for j in range(len(e.blocks))] for i, e in enumerate(fresh.entries)] == \
           [[fresh.accounting.estimated(i, j) for j in range(len(e.blocks))] for i, e in enumerate(fresh.entries)]
    assert any(fresh.accounting.estimated(i, j) for i, e in enumerate(fresh.entries) for j in range(len(e.blocks)))


def audit_state(audit) -> tuple:
    return ([(c.event, c.after_message, c.constraints, c.lost_items, c.drift) for c in audit.compactions],
            [a.as_dict() for a in audit.alerts])


def generated_lines(tmp_path, format: str) -> list[bytes]:
    from .test_lazy_text import generate

    source = tmp_path / f"source-{format}.jsonl"
    generate(source, format, {"claude-code": 12.0, "codex": 9.0}[format])  # a few compactions each
    return source.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("format", ["demo", "claude-code", "codex", "claude_compact.jsonl", "codex_local_compaction.jsonl",
                                    "codex_remote_compaction.jsonl"])
def test_a_followed_log_is_audited_from_where_the_last_audit_stopped_and_equals_a_fresh_audit(tmp_path, format, small_batches, monkeypatch):
    # Each compaction that arrives is audited going on from the audit before: the reading of the
    # history and the compactions audited before are kept. It must find what a whole new audit finds.
    from ctxtop.context.audit import pairs as audit_pairs
    from ctxtop.context.audit.run import run_audit

    if format.endswith(".jsonl"):  # small: line by line, so that every line can be the last one read
        lines = (DATA / format).read_bytes().splitlines(keepends=True)
    else:
        lines = DEMO_LINES if format == "demo" else generated_lines(tmp_path, format)
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(lines))
    resumed = []
    monkeypatch.setattr(audit_pairs, "_windows_at", lambda *a, _real=audit_pairs._windows_at: resumed.append(1) or _real(*a))
    log = tmp_path / "live.jsonl"
    first, step = (1, 1) if format.endswith(".jsonl") else (30, max(11, len(lines) // 60))
    write(log, lines[:first])
    tracker = Tracker.open(str(log), RuleRequest(auto=True), live=True)
    for start in range(first, len(lines), step):
        write(log, lines[start : start + step])
        tracker.poll()
        assert audit_state(tracker.audit) == audit_state(run_audit(tracker.session, tracker.rules)), start
    assert tracker.rules == Tracker.open(str(whole)).rules, "rules stated while following are tracked as afterwards"
    assert len(tracker.audit.compactions) >= (1 if format.endswith(".jsonl") else 2) and resumed, \
        "no audit went on from another: the test would prove nothing"


def test_a_late_change_to_the_history_makes_the_next_audit_read_it_again(tmp_path, small_batches):
    # A response's last line arriving long after its first joins an entry the last audit had read as
    # final (here, with a tool call over the budget cap): the next audit must not go on from it.
    from ctxtop.context.audit.run import run_audit
    from ctxtop.context.rules.constraints import make_constraint

    from .test_entry_store import claude_line

    cap = make_constraint("Budget cap 8000, stop and ask.", "pin")
    lines = [claude_line("user", "u0", "Budget cap 8000, stop and ask."),
             claude_line("assistant", "a0", [{"type": "text", "text": "first part"}], "msg_A")]
    lines += [claude_line("user" if i % 2 else "assistant", f"m{i}", f"message {i}", None if i % 2 else f"msg_{i}") for i in range(1, 30)]
    late = claude_line("assistant", "a0b", [{"type": "tool_use", "id": "toolu_9", "name": "pay", "input": {"amount": 9000}}], "msg_A")
    boundary = (DATA / "claude_compact.jsonl").read_bytes().splitlines(keepends=True)[7:9]  # a compaction and its summary
    log = tmp_path / "live.jsonl"
    write(log, lines + boundary)
    tracker = Tracker.open(str(log), RuleRequest(pins=(cap.text,)), live=True)
    assert tracker.audit.progress is not None and tracker.audit.progress.reading.position > 2
    assert not [a for a in tracker.audit.alerts if a.kind.key == "violation"]
    write(log, [late] + boundary)
    tracker.poll()
    assert [a.message for a in tracker.audit.alerts if a.kind.key == "violation"] == [2]
    assert audit_state(tracker.audit) == audit_state(run_audit(tracker.session, [cap]))


# --- rotation and rewrites (issue 18, items 19–22) ------------------------------------------------
def test_a_log_truncated_to_empty_is_waited_for_then_read_again_when_written(tmp_path):
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:100])
    follower = LogFollower(log, window=DEMO_WINDOW)
    log.write_bytes(b"")
    update = follower.poll()
    assert "truncated" in update.reset and update.messages == 0 and len(follower.session.entries) == 0
    assert follower.window_at(0).estimated_tokens == 0 and follower.session.format == "claude-code"
    assert follower.poll() is None  # still empty: nothing to say
    write(log, DEMO_LINES[:7])
    update = follower.poll()
    assert update.reset and update.messages == len(Session.open(log).entries) > 0
    write(log, DEMO_LINES[7:9])
    update = follower.poll()
    assert not update.reset and update.messages == len(Session.open(log).entries)


def test_copy_and_truncate_rotation_followed_by_more_writes_than_were_read(tmp_path):
    # logrotate's copytruncate: the log is copied away, truncated, and the agent goes on writing to
    # it. Before the next poll it may hold more than was read: only its changed bytes tell.
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:20])
    follower = LogFollower(log, window=DEMO_WINDOW)
    (tmp_path / "live.jsonl.1").write_bytes(log.read_bytes())
    with open(log, "r+b") as handle:
        handle.truncate(0)
    write(log, DEMO_LINES[100:140])
    update = follower.poll()
    assert update.reset
    fresh = Session.open(log, window=DEMO_WINDOW)
    assert update.messages == fresh.message_count
    assert exact_tokens(follower.session) == exact_tokens(fresh)


def test_rename_rotation_waits_for_a_new_file_of_the_same_name(tmp_path):
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:50])
    follower = LogFollower(log, window=DEMO_WINDOW)
    os.rename(log, tmp_path / "live.jsonl.1")
    assert follower.poll() is None and follower.waiting_for_file  # gone, for now
    write(log, DEMO_LINES[:12])
    update = follower.poll()
    assert "replaced" in update.reset and update.messages == len(Session.open(log).entries)
    assert not follower.waiting_for_file


def test_a_file_that_stays_gone_past_the_grace_period_is_a_one_line_error(tmp_path):
    log = tmp_path / "live.jsonl"
    write(log, DEMO_LINES[:5])
    follower = LogFollower(log)
    log.unlink()
    assert follower.poll() is None
    follower.missing_since -= follower.grace_seconds  # as if the grace period had passed
    with pytest.raises(SourceError, match="disappeared"):
        follower.poll()


def test_a_rewrite_in_place_that_keeps_the_size_is_noticed(tmp_path):
    log = tmp_path / "live.jsonl"
    original = b"".join(DEMO_LINES[:60])
    log.write_bytes(original)
    follower = LogFollower(log, window=DEMO_WINDOW)
    before = follower.session.accounting.tokens
    # The same bytes but one user message changed, letter for letter: the size stays.
    changed = original.replace("预算上限 8000 元".encode(), "预算上限 9000 元".encode(), 1)
    assert changed != original and len(changed) == len(original)
    with open(log, "r+b") as handle:
        handle.write(changed)
    os.utime(log, ns=(follower.modified + 1_000_000, follower.modified + 1_000_000))  # a coarse clock may not tick
    update = follower.poll()
    assert update is not None and "rewritten" in update.reset
    assert "9000" in follower.session.entries[0].blocks[0].text and follower.session.accounting.tokens == before
    assert follower.poll() is None  # and read once


# --- watching and discovery that cost what changed (issue 18, items 26, 27) --------------------------
def sub_agent_record(session_id: str, agent: str) -> str:
    import json

    return json.dumps({"parentUuid": None, "isSidechain": True, "sessionId": session_id, "agentId": agent, "type": "user",
                       "uuid": f"s-{agent}", "timestamp": "2026-10-11T09:00:00.000Z",
                       "message": {"role": "user", "content": f"task for {agent}"}}) + "\n"


def test_an_update_costs_the_paths_that_changed_not_the_folder_of_other_agents(tmp_path, monkeypatch):
    from ctxtop.context.window import subagents

    session_id = "d3m0c0de-8000-4e00-9000-5eed00000000"
    log = tmp_path / f"{session_id}.jsonl"
    write(log, DEMO_LINES[:20])
    for n in range(2000):  # other sessions' sub-agents, 2.0.x layout: all beside the log
        (tmp_path / f"agent-other{n}.jsonl").write_text(sub_agent_record("another-session", f"o{n}"))
    follower = LogFollower(log, window=DEMO_WINDOW)
    read_ids, listings = [], []
    original_id, original_list = subagents.owner_session_id, subagents.subagent_candidates
    monkeypatch.setattr(subagents, "owner_session_id", lambda path: read_ids.append(path.name) or original_id(path))
    monkeypatch.setattr(subagents, "subagent_candidates", lambda log: listings.append(1) or original_list(log))

    write(log, DEMO_LINES[20:25])
    assert follower.poll({log.resolve()}).new > 0
    assert follower.poll(set()) is None  # an idle check: a stat of the log
    assert read_ids == [] and listings == []

    mine = (tmp_path / "agent-mine.jsonl").resolve()
    mine.write_text(sub_agent_record(session_id, "m1"))
    update = follower.poll({mine})
    assert update.subagents and follower.session.subagents.totals.files == 1
    with open(mine, "a") as handle:  # it grows: counted again, but whose it is is not read again
        handle.write(sub_agent_record(session_id, "m2"))
    assert follower.poll({mine}).subagents and follower.session.subagents.totals.messages == 2
    other = (tmp_path / "agent-other7.jsonl").resolve()
    with open(other, "a") as handle:
        handle.write(sub_agent_record("another-session", "o7b"))
    assert follower.poll({other}) is None
    assert read_ids == ["agent-mine.jsonl"] and listings == []
    mine.unlink()
    assert follower.poll({mine}).subagents and follower.session.subagents.totals.files == 0
    # Told nothing (None), everything is looked at again, as at open, and agrees.
    assert follower.poll(None) is None and listings == [1]


def test_the_watcher_watches_the_log_folder_alone_and_the_session_folder_once_it_appears(tmp_path):
    from ctxtop.tui.tail import watch_log

    log = (tmp_path / "d3m0c0de.jsonl").resolve()
    write(log, DEMO_LINES[:5])
    for n in range(300):
        (tmp_path / f"project-{n}").mkdir()
    seen, arrived = [], threading.Event()

    def notify(path):
        seen.append(path)
        arrived.set()

    observer = watch_log(log, notify)
    try:
        assert {(w.path, w.is_recursive) for w in (e.watch for e in observer.emitters)} == {(str(tmp_path.resolve()), False)}
        (tmp_path / "project-3" / "agent-x.jsonl").write_text("{}\n")  # below the folder: not watched
        (log.with_suffix("") / "subagents").mkdir(parents=True)  # the session's own folder appears
        nested = log.with_suffix("") / "subagents" / "agent-a1.jsonl"
        for _ in range(1500):  # until the new folder is watched (its creation is handled in the watcher's thread)
            if (str(log.with_suffix("")), True) in {(w.path, w.is_recursive) for w in (e.watch for e in observer.emitters)}:
                break
            arrived.wait(0.02)
        nested.write_text("{}\n")
        write(log, DEMO_LINES[5:6])
        for _ in range(1500):
            if log in seen and nested in seen:
                break
            arrived.wait(0.02)
            arrived.clear()
        assert log in seen and nested in seen
        assert not [p for p in seen if "project-" in str(p)]  # events come in order: none came from below
    finally:
        observer.stop()


def test_the_watch_is_renewed_when_the_log_folder_is_made_again(tmp_path):
    # inotify watches a folder, not its name: after the folder was moved aside and made again, what the agent
    # wrote to the new one was never reported (`ctxtop watch` saw it only at its idle check, once a second).
    from ctxtop.tui.tail import LogWatch

    folder = tmp_path / "project"
    folder.mkdir()
    log = (folder / "live.jsonl").resolve()
    write(log, DEMO_LINES[:5])
    seen, arrived = [], threading.Event()
    watch = LogWatch(log, lambda path: (seen.append(path), arrived.set()))
    try:
        assert not watch.renew_if_replaced()  # the same folder: the watch stays
        folder.rename(tmp_path / "project.old")
        folder.mkdir()
        assert watch.renew_if_replaced()
        write(log, DEMO_LINES[:6])
        for _ in range(1500):
            if log in seen:
                break
            arrived.wait(0.02)
            arrived.clear()
        assert log in seen
    finally:
        watch.stop()


def test_reading_the_log_is_not_reported_as_a_change(tmp_path):
    # ctxtop's own reads (texts read back, the fingerprint of what was read) open and close the log:
    # inotify reports that, and each report would cost a poll.
    from ctxtop.tui.tail import watch_log

    log = (tmp_path / "live.jsonl").resolve()
    write(log, DEMO_LINES[:5])
    sentinel = tmp_path.resolve() / "agent-sentinel.jsonl"
    seen, arrived = [], threading.Event()
    observer = watch_log(log, lambda path: (seen.append(path), arrived.set()))
    try:
        for _ in range(20):
            log.read_bytes()
        sentinel.write_text("{}\n")  # reported after whatever the reads caused: events come in order
        for _ in range(1500):
            if sentinel in seen:
                break
            arrived.wait(0.02)
            arrived.clear()
        assert sentinel in seen and log not in seen[: seen.index(sentinel)]
    finally:
        observer.stop()


def test_a_rewind_written_while_following_leaves_the_window_as_a_fresh_read_gives_it(tmp_path):
    lines = (DATA / "claude_rewind.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "rewound.jsonl"
    log.write_bytes(b"".join(lines[:6]))  # the first branch, whole
    follower = LogFollower(log)
    assert len(follower.session.entries) == 6
    with open(log, "ab") as handle:
        handle.write(b"".join(lines[6:]))  # the user rewinds and asks again
    follower.poll()
    fresh = Session.open(log)
    assert [e.uid for e in follower.session.entries] == [e.uid for e in fresh.entries] == ["u1", "a1", "b2u", "b2a"]
    assert follower.session.window_at(None).estimated_tokens == fresh.window_at(None).estimated_tokens
