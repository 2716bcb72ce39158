"""Compactions audited in forks while the rest of a cold read goes on, and while the audit after it gets
ready (``audit.early``): the audit takes what the forks found for the pairs that are the same, and its
result is the one a single process finds, whatever the forks did or failed to do."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from ctxtop.context import second_core
from ctxtop.context.audit import early
from ctxtop.context.audit import pairs as pairs_module
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.tracker import Tracker
from ctxtop.context.window import session as session_module

from ..conftest import ResetsOnly, reaped

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import generate  # noqa: E402 (bench/ is put on the path just above)


@pytest.fixture
def log(tmp_path, monkeypatch):
    """A generated Claude Code session of 3 MB that compacts about every 300 KB, read in parts of 256 KB
    (a big log's parts are 4 MB: the forks start as the parts are read)."""
    monkeypatch.setattr(generate, "CLAUDE_COMPACT_AT", 60_000)
    monkeypatch.setattr(session_module, "STREAM_CHUNK_BYTES", 256 << 10)
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    path = tmp_path / "session.jsonl"
    generate.generate(path, "claude-code", 3)
    return path


@pytest.fixture
def taken(monkeypatch):
    """The compactions each early fork's results were taken for (one set per join)."""
    joined: list[frozenset[int]] = []
    real = early.EarlyAudit.join

    def join(self, session, store):
        found = real(self, session, store)
        joined.append(frozenset(message for message, *_ in found))
        return found

    monkeypatch.setattr(early.EarlyAudit, "join", join)
    return joined


def audited(path, forks, request=RuleRequest(), processes=2):
    """The snapshot of ``path`` opened anew; every fork made so far (``forks``) was reaped. (Only those: an
    earlier test may leave children of its own, a fleet audit's fork server.)"""
    AuditCache.forget()  # each open as a new process: nothing remembered from the last
    tracker = Tracker.open(str(path), request, processes=processes)
    assert all(reaped(pid) for pid in forks)
    return tracker.snapshot()


def explicit_compactions(snapshot) -> set[int]:
    return {c["message"] for c in snapshot["compactions"] if c["kind"] != "implicit"}


@pytest.fixture
def made(monkeypatch):
    """The forks the early audit made, in order (each as its record of the pairs given to it)."""
    forks_made = []
    real_start = early.EarlyAudit._start

    def start(self, session, **how):
        before = self._running
        real_start(self, session, **how)
        if self._running is not before:
            forks_made.append(self._running)

    monkeypatch.setattr(early.EarlyAudit, "_start", start)
    return forks_made


def the_read_ends_before_the_first_fork(monkeypatch):
    """The first fork still at work until the read is over, and done then: none chained during the read."""
    read = []
    real_after_read, real_has_sent = early.EarlyAudit.after_read, second_core.Forked.has_sent
    monkeypatch.setattr(early.EarlyAudit, "after_read", lambda self, session: read.append(True) or real_after_read(self, session))

    def has_sent(self):
        while read and not real_has_sent(self):
            time.sleep(0.01)
        return bool(read) and real_has_sent(self)

    monkeypatch.setattr(second_core.Forked, "has_sent", has_sent)


def test_given_time_the_forks_audit_every_compaction_and_the_result_is_a_single_process_one(log, forks, taken, made, monkeypatch):
    alone = audited(log, forks, processes=1)
    assert not taken and not forks
    the_read_ends_before_the_first_fork(monkeypatch)
    real_join = early.EarlyAudit.join

    def join_when_the_forks_are_done(self, session, store):
        if self._running is not None:
            self._running.forked.has_sent()  # (waits for it, once the read is over)
        return real_join(self, session, store)

    monkeypatch.setattr(early.EarlyAudit, "join", join_when_the_forks_are_done)
    assert audited(log, forks) == alone
    [compactions] = taken
    assert compactions == explicit_compactions(alone)
    first, last = made  # the pairs final early in the read; the rest, given once the read is over, the latest first
    assert max(first.pairs) < min(last.pairs) and last.pairs == sorted(last.pairs, reverse=True)


def test_the_audit_here_stops_the_forks_and_audits_what_they_did_not(log, forks, taken, made, monkeypatch):
    alone = audited(log, forks, processes=1)
    real_audit_pair = pairs_module._audit_pair
    monkeypatch.setattr(pairs_module, "_audit_pair", lambda *args: time.sleep(0.3) or real_audit_pair(*args))
    assert audited(log, forks) == alone
    [compactions] = taken
    assert compactions < explicit_compactions(alone)  # stopped: the forks would have taken seconds more
    assert len(made) == 1  # still at work when the read ended: no other was made


def test_a_rule_stated_after_the_fork_changes_keys_not_results(log, forks, taken):
    # A pin the log states only at its end: judged at no compaction by the audit after the read, while
    # the fork (which read only the start, where the pin is never stated) judged it at every one.
    pin = "Never touch the ledger of the northern warehouse."
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(generate.dumps({"type": "user", "sessionId": "s", "uuid": "late-pin", "parentUuid": None,
                                     "timestamp": "2026-12-04T00:00:00.000Z", "message": {"role": "user", "content": pin}}) + "\n")
    request = RuleRequest(pins=(pin,), auto=True)
    alone = audited(log, forks, request, processes=1)
    assert audited(log, forks, request) == alone
    assert taken and taken[0]


def test_a_fork_that_dies_costs_time_not_results(log, forks, taken, made, monkeypatch):
    alone = audited(log, forks, processes=1)

    def dies(*args):
        raise RuntimeError("the fork fails")

    monkeypatch.setattr(early, "_audit_in_fork", dies)
    assert audited(log, forks) == alone
    assert taken == [frozenset()]
    assert len(made) == 1  # what kills one would kill the next: none is made after it


def test_no_fork_for_a_log_read_in_one_part(tmp_path, forks, taken, monkeypatch):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    monkeypatch.setattr(generate, "CLAUDE_COMPACT_AT", 60_000)
    small = tmp_path / "small.jsonl"
    generate.generate(small, "claude-code", 3)  # one part of 4 MB: read whole before the fork would start
    snapshot = audited(small, forks)
    assert len(snapshot["compactions"]) >= 4 and taken == [frozenset()]


def test_no_fork_before_a_compaction_is_final(tmp_path, forks, taken, monkeypatch):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    monkeypatch.setattr(session_module, "STREAM_CHUNK_BYTES", 256 << 10)
    log = tmp_path / "session.jsonl"
    generate.generate(log, "claude-code", 3)  # its first compaction at about 2 MB
    given: list[tuple[int, list[tuple[int, int]]]] = []  # (entries final then, the pairs given) for each fork
    real_pairs_to_give = early.EarlyAudit._pairs_to_give

    def recorded(self, session):
        pairs = real_pairs_to_give(self, session)
        if pairs:
            given.append((session.final_before(), pairs))
        return pairs

    monkeypatch.setattr(early.EarlyAudit, "_pairs_to_give", recorded)
    snapshot = audited(log, forks)
    first = min(explicit_compactions(snapshot))
    assert first > snapshot["source"]["messages"] // 3  # (parts of the log read before it: no fork then)
    assert given and len(forks) == len(given)
    assert given[0][0] > first and all(after < final for final, pairs in given for _, after in pairs)


def test_the_rules_are_not_detected_in_two_processes_while_a_fork_audits(log, forks, taken, made, monkeypatch):
    # (three processes on two cores: each slower, and a third copy of the pages the main process changes)
    # (Each pair the fork audits made slow enough that it is still at work when the read ends, on a machine loaded by
    # other work too: at 0.3 s a pair, a full run on a busy machine once saw the fork done and a second one made.)
    from ctxtop.context import tracker as tracker_module

    asked = []
    real_detected = tracker_module.detected_constraints
    monkeypatch.setattr(tracker_module, "detected_constraints",
                        lambda *args, processes, known: asked.append(processes) or real_detected(*args, processes=processes, known=known))
    real_audit_pair = pairs_module._audit_pair
    monkeypatch.setattr(pairs_module, "_audit_pair", lambda *args: time.sleep(0.6) or real_audit_pair(*args))
    audited(log, forks, RuleRequest(auto=True))
    assert len(made) == 1 and asked == [1]  # still at work when the read ended: the rules found here alone


def test_the_rules_here_are_detected_from_where_the_last_fork_read_them(log, forks, made, monkeypatch):
    from ctxtop.context import tracker as tracker_module
    from ctxtop.context.rules.constraints import detected_to

    request = RuleRequest(auto=True)
    alone = audited(log, forks, request, processes=1)
    given = []
    real_detected = tracker_module.detected_constraints

    def detected(entries, log_format, *args, processes, known):
        given.append((entries, log_format, known))
        return real_detected(entries, log_format, *args, processes=processes, known=known)

    monkeypatch.setattr(tracker_module, "detected_constraints", detected)
    assert audited(log, forks, request) == alone
    [(entries, log_format, known)] = given
    assert made and 0 < known.entries < len(entries)  # posted by a fork: only what was read since is read here
    assert list(known.found.values()) == list(detected_to(entries, known.entries, log_format).found.values())


def test_what_a_fork_posted_is_not_gone_on_from_once_a_replay_went_back_before_its_end():
    from ctxtop.context.rules.constraints import Detected

    audit = early.EarlyAudit(lambda session, known: [])
    known = Detected(100, {})
    audit._detected = known, 1  # posted by a fork made after the session's first replay reset
    assert audit.detected(ResetsOnly([40])) is known  # (the reset before the fork)
    assert audit.detected(ResetsOnly([40, 100, 250])) is known
    assert audit.detected(ResetsOnly([40, 100, 99])) is None


def test_a_fork_done_after_the_read_is_followed_while_the_audit_reads_the_entries(log, forks, taken, made, monkeypatch):
    alone = audited(log, forks, processes=1)
    the_read_ends_before_the_first_fork(monkeypatch)
    real_after_read, real_at_work = early.EarlyAudit.after_read, early.EarlyAudit.at_work
    calls: list[int] = []  # for each call of after_read, the forks made by it

    def after_read(self, session):
        before = len(made)
        if not calls:  # the read's end: the first fork is still at work
            monkeypatch.setattr(early.EarlyAudit, "at_work", lambda self: True)
            real_after_read(self, session)
            monkeypatch.setattr(early.EarlyAudit, "at_work", real_at_work)
        else:  # the audit's pass over the entries: by now it is done
            real_after_read(self, session)
        calls.append(len(made) - before)

    monkeypatch.setattr(early.EarlyAudit, "after_read", after_read)
    assert audited(log, forks) == alone
    assert len(calls) >= 2 and calls[0] == 0 and sum(calls[1:]) == 1 and len(made) == 2
    first, last = made
    assert max(first.pairs) < min(last.pairs) and last.pairs == sorted(last.pairs, reverse=True)
