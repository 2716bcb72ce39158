"""Whole audits remembered for a log read again unchanged: recalled only when nothing that matters changed."""

from __future__ import annotations

import pytest

from ctxtop.context.audit import run as audit_module
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.audit.run import run_audit
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.constraints import make_constraint
from ctxtop.context.rules.selection import RuleRequest, select_rules
from ctxtop.context.window.follow import LogFollower
from ctxtop.context.window.session import Session
from ctxtop.context.window.subagents import SubagentScan
from ctxtop.tui.demo import demo_path

from ..conftest import exact_tokens
from .test_lazy_text import generate, jsonl_logs


class Walked(AssertionError):
    pass


def no_walk(*_args) -> None:
    raise Walked("the audit walked the entries: it was not recalled")


def findings(audit) -> tuple:
    return ([a.as_dict() for a in audit.alerts],
            [(c.event, c.after_message, c.constraints, c.lost_items, c.drift, c.forensics) for c in audit.compactions])


def opened(log) -> tuple[Session, list]:
    AuditCache.forget()  # as a new process would start: only the persistent cache remembers
    session = Session.open(log)
    return session, select_rules(session.entries, RuleRequest())


@pytest.mark.parametrize("log", jsonl_logs(), ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_a_log_read_again_unchanged_recalls_its_whole_audit(log, monkeypatch):
    session, constraints = opened(log)
    if session.read_digest is None:
        pytest.skip(f"{session.format} is not read as JSON Lines: its audit is not remembered whole")
    first = run_audit(session, constraints)
    again, _ = opened(log)
    monkeypatch.setattr(audit_module._Reading, "read", no_walk)
    second = run_audit(again, constraints)
    assert second.progress is None and findings(second) == findings(first)
    assert build_snapshot(again, constraints=constraints, audit=second) == build_snapshot(session, constraints=constraints, audit=first)


def test_the_demo_recalls_real_findings(monkeypatch):
    session, constraints = opened(demo_path())
    first = run_audit(session, constraints)
    assert any(a.kind.key == "constraint_lost" for a in first.alerts) and first.compactions
    monkeypatch.setattr(audit_module._Reading, "read", no_walk)
    assert findings(run_audit(opened(demo_path())[0], constraints)) == findings(first)


def test_other_constraints_are_audited_afresh(monkeypatch):
    session, constraints = opened(demo_path())
    run_audit(session, constraints)
    monkeypatch.setattr(audit_module._Reading, "read", no_walk)
    with pytest.raises(Walked):
        run_audit(opened(demo_path())[0], [*constraints, make_constraint("Refunds above 500 need a second approver", "pin")])
    moved = [make_constraint(c.text, c.source, id=c.id, facts=c.facts) for c in constraints]
    moved[0].first_stated = (constraints[0].first_stated or 0) + 1  # audited at other compactions
    with pytest.raises(Walked):
        run_audit(opened(demo_path())[0], moved)


def test_a_log_with_a_line_more_is_audited_afresh(tmp_path, monkeypatch):
    log = tmp_path / "session.jsonl"
    log.write_bytes(demo_path().read_bytes())
    session, constraints = opened(log)
    run_audit(session, constraints)
    with open(log, "ab") as handle:
        handle.write(b'{"type":"user","uuid":"extra","message":{"role":"user","content":"one more"}}\n')
    monkeypatch.setattr(audit_module._Reading, "read", no_walk)
    with pytest.raises(Walked):
        run_audit(opened(log)[0], constraints)


def test_counts_made_exact_are_audited_afresh(tmp_path, monkeypatch):
    log = tmp_path / "generated.jsonl"
    generate(log, "claude-code", 1.0)
    session, constraints = opened(log)
    run_audit(session, constraints)
    again = opened(log)[0]
    assert again.accounting.rough_blocks, "nothing estimated: the test would prove nothing"
    exact_tokens(again)  # the history's estimates made exact: the forensics' token figures may change
    monkeypatch.setattr(audit_module._Reading, "read", no_walk)
    with pytest.raises(Walked):
        run_audit(again, constraints)


def test_other_compaction_calls_of_the_subagents_are_audited_afresh(monkeypatch):
    session, constraints = opened(demo_path())
    assert session.subagents is not None
    run_audit(session, constraints)
    again = opened(demo_path())[0]
    monkeypatch.setattr(SubagentScan, "summarizing_calls", lambda self: [("2026-01-01T00:00:00Z", "acompact-1", None)])
    monkeypatch.setattr(audit_module._Reading, "read", no_walk)
    with pytest.raises(Walked):
        run_audit(again, constraints)


def test_a_followed_log_is_never_recalled_whole(tmp_path, monkeypatch):
    log = tmp_path / "session.jsonl"
    log.write_bytes(demo_path().read_bytes())
    session, constraints = opened(log)
    run_audit(session, constraints)
    follower = LogFollower(log)
    assert follower.session.read_digest is None  # its later lines may change what its entries report
    audit = run_audit(follower.session, constraints)
    assert audit.progress is not None  # audited by walking, so that a poll can go on from it


def test_an_unreadable_remembered_audit_is_audited_again(monkeypatch):
    session, constraints = opened(demo_path())
    first = run_audit(session, constraints)
    store = session.counter.store
    for (key,) in store._connection.execute("select key from audits").fetchall():
        store.put_audit(key, b"\x00damaged")
    assert findings(run_audit(opened(demo_path())[0], constraints)) == findings(first)


def test_without_the_persistent_cache_nothing_is_remembered(monkeypatch):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    session, constraints = opened(demo_path())
    run_audit(session, constraints)
    monkeypatch.setattr(audit_module._Reading, "read", no_walk)
    with pytest.raises(Walked):
        run_audit(opened(demo_path())[0], constraints)
