"""Compaction audits remembered by what the windows held: reused only when nothing that matters changed."""

from __future__ import annotations

import pytest

from ctxtop.context.audit import pairs as audit_pairs
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.audit.run import run_audit
from ctxtop.context.rules.constraints import make_constraint
from ctxtop.context.rules.selection import RuleRequest, select_rules
from ctxtop.context.window.session import Session
from ctxtop.tui.demo import demo_path


class WindowTextRead(AssertionError):
    pass


def no_window_text(window, earlier=None):
    raise WindowTextRead("the audit read a window's text: it was not taken from the cache")


def findings(audit) -> tuple:
    return ([a.as_dict() for a in audit.alerts],
            [(c.event.message, c.constraints, c.lost_items, c.drift) for c in audit.compactions])


@pytest.fixture
def demo(tmp_path):
    AuditCache.forget()  # as a new process would start
    session = Session.open(demo_path())
    constraints = select_rules(session.entries, RuleRequest())
    return session, constraints


def test_a_second_audit_reads_no_text_and_finds_the_same(demo, monkeypatch):
    session, constraints = demo
    first = run_audit(session, constraints)
    assert any(a.kind.key == "constraint_lost" for a in first.alerts)  # the demo loses rules: the cache holds real findings
    monkeypatch.setattr(audit_pairs, "WindowText", no_window_text)
    assert findings(run_audit(session, constraints)) == findings(first)


def test_a_new_process_finds_the_audit_in_the_persistent_cache(demo, monkeypatch):
    session, constraints = demo
    first = run_audit(session, constraints)
    AuditCache.forget()
    reopened = Session.open(demo_path())
    monkeypatch.setattr(audit_pairs, "WindowText", no_window_text)
    assert findings(run_audit(reopened, constraints)) == findings(first)


def test_without_the_persistent_cache_only_the_process_remembers(demo, monkeypatch):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    session = Session.open(demo_path())
    constraints = select_rules(session.entries, RuleRequest())
    first = run_audit(session, constraints)
    AuditCache.forget()
    second = run_audit(Session.open(demo_path()), constraints)  # audited again, from the text
    assert findings(second) == findings(first)


def test_other_constraints_are_audited_afresh(demo, monkeypatch):
    session, constraints = demo
    run_audit(session, constraints)
    monkeypatch.setattr(audit_pairs, "WindowText", no_window_text)
    pinned = make_constraint("Refunds above 500 need a second approver", "pin")
    with pytest.raises(WindowTextRead):
        run_audit(session, [*constraints, pinned])


def test_a_changed_summary_is_audited_afresh(demo, tmp_path, monkeypatch):
    session, constraints = demo
    run_audit(session, constraints)
    lines = demo_path().read_text(encoding="utf-8").splitlines(keepends=True)
    summary = next(i for i, line in enumerate(lines) if '"isCompactSummary": true' in line or '"isCompactSummary":true' in line)
    lines[summary] = lines[summary].replace("Summary", "Résumé", 1)
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr(audit_pairs, "WindowText", no_window_text)
    with pytest.raises(WindowTextRead):
        run_audit(Session.open(changed), constraints)


def test_an_unreadable_cached_result_is_audited_again(demo):
    session, constraints = demo
    first = run_audit(session, constraints)
    store = session.counter.store
    keys = [row[0] for row in store._connection.execute("select key from audits")]
    assert keys
    for key in keys:
        store.put_audit(key, b"{not json")
    AuditCache.forget()
    assert findings(run_audit(Session.open(demo_path()), constraints)) == findings(first)
