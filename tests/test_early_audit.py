"""Compactions audited in a fork while the rest of a cold read goes on (``audit.early``): the audit
after the read takes what the fork found for the pairs that are the same, and its result is the
one a single process finds, whatever the fork did or failed to do."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ctxtop.context.audit import early
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.tracker import Tracker
from ctxtop.context.window import session as session_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import generate  # noqa: E402 (bench/ is put on the path just above)


@pytest.fixture
def log(tmp_path, monkeypatch):
    """A generated Claude Code session of 3 MB that compacts about every 300 KB, read in parts of 256 KB
    (a big log's parts are 4 MB: the fork starts when the read is START_AT through)."""
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

    def join(self, store):
        found = real(self, store)
        joined.append(found)
        return found

    monkeypatch.setattr(early.EarlyAudit, "join", join)
    return joined


def audited(path, request=RuleRequest(), processes=2):
    AuditCache.forget()  # each open as a new process: nothing remembered from the last
    tracker = Tracker.open(str(path), request, processes=processes)
    assert_no_fork_left()
    return tracker.snapshot()


def assert_no_fork_left():
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every fork was reaped


def test_the_fork_audits_the_first_compactions_and_the_result_is_a_single_process_one(log, forks, taken):
    alone = audited(log, processes=1)
    assert not taken and not forks
    together = audited(log)
    assert together == alone
    [compactions] = taken
    audited_after = [c["message"] for c in alone["compactions"]]
    assert len(compactions) >= 2 and compactions < set(audited_after)  # the first ones, not all
    assert max(compactions) < min(set(audited_after) - compactions)


def test_a_rule_stated_after_the_fork_changes_keys_not_results(log, forks, taken):
    # A pin the log states only at its end: judged at no compaction by the audit after the read, while
    # the fork (which read only the start, where the pin is never stated) judged it at every one.
    pin = "Never touch the ledger of the northern warehouse."
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(generate.dumps({"type": "user", "sessionId": "s", "uuid": "late-pin", "parentUuid": None,
                                     "timestamp": "2026-12-04T00:00:00.000Z", "message": {"role": "user", "content": pin}}) + "\n")
    request = RuleRequest(pins=(pin,), auto=True)
    alone = audited(log, request, processes=1)
    assert audited(log, request) == alone
    assert taken and taken[0]


def test_a_fork_that_dies_costs_time_not_results(log, forks, taken, monkeypatch):
    alone = audited(log, processes=1)

    def dies(*args):
        raise RuntimeError("the fork fails")

    monkeypatch.setattr(early, "_audit_final_pairs", dies)
    assert audited(log) == alone
    assert taken == [frozenset()]


def test_no_fork_for_a_log_read_in_one_part(tmp_path, forks, taken, monkeypatch):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    monkeypatch.setattr(generate, "CLAUDE_COMPACT_AT", 60_000)
    small = tmp_path / "small.jsonl"
    generate.generate(small, "claude-code", 3)  # one part of 4 MB: read whole before the fork would start
    snapshot = audited(small)
    assert len(snapshot["compactions"]) >= 4 and taken == [frozenset()]


def test_no_fork_before_a_compaction_is_read(tmp_path, forks, taken, monkeypatch):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    monkeypatch.setattr(session_module, "STREAM_CHUNK_BYTES", 256 << 10)
    log = tmp_path / "session.jsonl"
    generate.generate(log, "claude-code", 3)  # its first compaction at about 2 MB
    snapshot = audited(log)
    assert snapshot["compactions"] and snapshot["compactions"][0]["message"] > snapshot["source"]["messages"] * early.START_AT
    assert taken == [frozenset()]
