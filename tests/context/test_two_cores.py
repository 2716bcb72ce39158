"""Rule detection and the audit's windows on two cores: the same findings as on one (second_core's own
tests cover a failing fork)."""

from __future__ import annotations

import dataclasses
import os

import pytest

from ctxtop.context.audit import pairs as audit_pairs
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.audit.run import run_audit
from ctxtop.context.rules.constraints import MIN_SPLIT_ENTRIES, detect_constraints, detected_to
from ctxtop.context.rules.selection import RuleRequest, select_rules
from ctxtop.context.window.session import Session
from ctxtop.parsers.model import USER, Block

from ..conftest import ResetsOnly
from .test_follow import audit_state, generated_lines

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform: audits stay on one process")


@pytest.fixture(scope="module", params=["claude-code", "codex"])
def session_with_compactions(request, tmp_path_factory):
    path = tmp_path_factory.mktemp(request.param) / "session.jsonl"
    path.write_bytes(b"".join(generated_lines(path.parent, request.param)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CTXTOP_NO_CACHE", "1")  # no persistent cache: every audit is made, none recalled whole
        session = Session.open(str(path))
    constraints = select_rules(session.entries, RuleRequest(auto=True))
    return session, constraints


def serial_state(session, constraints):
    AuditCache.forget()
    state = audit_state(run_audit(session, constraints))
    AuditCache.forget()
    return state


def test_two_processes_find_what_one_finds(session_with_compactions, forks):
    session, constraints = session_with_compactions
    expected = serial_state(session, constraints)
    marked = [c for c in run_audit(session, constraints).compactions if c.event.kind != "implicit"]
    assert len(marked) >= audit_pairs.MIN_FORKED_PAIRS, "too few compactions: nothing would be forked"
    assert any(status.status != "kept" for c in marked for pair in c.constraints.values() for status in pair), \
        "every rule kept everywhere: the comparison would prove little"
    AuditCache.forget()
    assert audit_state(run_audit(session, constraints, processes=2)) == expected
    assert len(forks) == 1


def test_what_the_fork_audited_is_remembered_by_the_parent(session_with_compactions, forks, monkeypatch):
    session, constraints = session_with_compactions
    remembered = []
    AuditCache.forget()  # (a result the process remembers is not put again)
    real_put = AuditCache.put
    monkeypatch.setattr(AuditCache, "put", lambda self, key, *result: remembered.append(key) or real_put(self, key, *result))
    audit = run_audit(session, constraints, processes=2)
    assert len(forks) == 1
    audited = [c for c in audit.compactions if c.event.kind != "implicit"]
    assert len(set(remembered)) == len(audited), "each pair's result is kept for the next audit, the fork's too"


def test_rules_detected_in_two_halves_are_those_found_in_one(session_with_compactions, forks):
    # The session told twice, its rules restated in the second telling, and a rule new to it: the merge
    # keeps each rule where it was first stated and adds the new one after the others, as one pass would.
    session, _ = session_with_compactions
    told = list(session.entries)
    again = [dataclasses.replace(entry, index=entry.index + len(told)) for entry in told]
    new_rule = Block(USER, "Never deploy on a Friday: wait for Monday.")
    again[len(again) // 2] = dataclasses.replace(again[len(again) // 2], blocks=[new_rule])
    entries = told + again
    assert len(entries) >= MIN_SPLIT_ENTRIES, "too few entries: nothing would be forked"
    one = detect_constraints(entries, session.format)
    assert any(c.first_stated <= len(told) for c in one) and one[-1].text == new_rule.text
    assert detect_constraints(entries, session.format, processes=2) == one
    assert len(forks) == 1
    # Gone on from what the first entries state, wherever they end (twice from the same: it is not changed).
    starts = (0, 1, len(told) // 3, len(told), len(told) + len(again) // 2 + 1, len(entries))
    for known_to in starts:
        known = detected_to(entries, known_to, session.format)
        assert detect_constraints(entries, session.format, known=known) == one
        assert detect_constraints(entries, session.format, known=known, processes=2) == one
    # (split only where MIN_SPLIT_ENTRIES at least were left to read)
    assert len(forks) == 1 + sum(len(entries) - known_to >= MIN_SPLIT_ENTRIES for known_to in starts) >= 4
    too_far = detected_to(entries, len(entries), session.format)
    assert detect_constraints(told, session.format, known=too_far) == detect_constraints(told, session.format)


@pytest.mark.parametrize("format", ["claude-code", "codex"])
def test_a_replay_from_a_kept_one_has_the_counts_a_replay_from_the_start_has(tmp_path, monkeypatch, format):
    # The audit's second process starts at the kept replay nearest its first window: one kept after a
    # compaction, or the one kept up with the read. Kept replays hold the counts of when they were kept;
    # once the history is made exact, the windows must count what a replay from the first entry counts
    # (a summary's tokens are reported), block for block.
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(generated_lines(tmp_path, format)))
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    session = Session.open(str(path))
    markers = [e.index for e in session.entries if e.compaction is not None]
    assert len(markers) >= 2 and session.accounting.rough_blocks, "no compaction to start from, or nothing estimated"
    while not session.refine_step():
        pass
    latest = len(session.entries)
    assert session.final_before() > markers[-1] + 1, "the replay kept up with the read is not past the last compaction"
    for message in [*markers[1:], latest]:
        near, fresh = session.replay_near(message), session.new_replay()
        assert 0 < near.position <= message
        fresh.window_at(near.position)
        assert [(i.entry.index, i.position, i.tokens) for i in near.window.blocks] == \
            [(i.entry.index, i.position, i.tokens) for i in fresh.window.blocks]
        assert near.window.estimated_tokens == fresh.window.estimated_tokens


def test_pairs_a_fork_audited_are_taken_without_replaying_to_their_windows(session_with_compactions, monkeypatch):
    from ctxtop.context.audit.pairs import CollectingCache, audit_one_by_one, audited_at, remember_sent
    from ctxtop.context.window.replay import Replay

    session, constraints = session_with_compactions
    AuditCache.forget()
    marked = [c for c in run_audit(session, constraints).compactions if c.event.kind != "implicit"]
    jobs = [(c.event.message, c.after_message, audited_at(constraints, c.event.message)) for c in marked]
    AuditCache.forget()
    expected = audit_pairs.audit_pairs(session, jobs, AuditCache(None))
    # The first half audited as an early fork does, its results sent back and remembered here.
    AuditCache.forget()
    collecting, half = CollectingCache(), len(jobs) // 2
    seen = audit_one_by_one(session, jobs[:half], collecting, should_stop=lambda: False)
    assert [pair[:2] for pair in seen] == [job[:2] for job in jobs[:half]]
    AuditCache.forget()
    cache = AuditCache(None)
    remember_sent(cache, collected=collecting.collected)
    stepped: list[int] = []
    real_step = Replay._step
    monkeypatch.setattr(Replay, "_step", lambda self, entry, position: stepped.append(position) or real_step(self, entry, position))
    assert audit_pairs.audit_pairs(session, jobs, cache, seen=seen) == expected
    first_left = jobs[half][0]
    # (the replay starts at the one kept after the last compaction seen, or later)
    assert stepped and min(stepped) == session.kept_replay_before(first_left - 1) >= jobs[half - 1][0]
    # Told nothing of what the fork saw, the audit replays from the first pair on to know their keys.
    stepped.clear()
    assert audit_pairs.audit_pairs(session, jobs, cache) == expected
    assert min(stepped) < jobs[0][0]


def test_what_a_fork_audited_before_a_replay_went_back_is_audited_again():
    from ctxtop.context.audit.early import EarlyAudit

    early = EarlyAudit(lambda session, known: [])
    seen = [(10, 12, b"b" * 16, b"a" * 16), (40, 43, b"c" * 16, b"d" * 16)]
    early._sent = [((seen, []), 1)]  # sent by a fork made after the session's first replay reset
    assert early.join(ResetsOnly([5]), None) == seen
    early._sent = [((seen, []), 1)]
    assert early.join(ResetsOnly([5, 60, 20]), None) == seen[:1]  # the second's windows may have changed
