"""Auto-detected rules are remembered by what the session's texts are: a session opened again finds the same
rules without reading its texts for them, and a changed text is detected afresh."""

from __future__ import annotations

import pytest

from ctxtop.context.rules import remembered
from ctxtop.context.rules.constraints import detect_constraints
from ctxtop.context.tracker import Tracker
from ctxtop.tui.demo import demo_path

from .test_lazy_text import generate


def rules_of(tracker: Tracker) -> list[tuple]:
    return [(r.id, r.text, r.source, r.facts, r.first_stated, r.cue, r.origin) for r in tracker.rules]


@pytest.mark.parametrize("source", ["demo", "claude-code", "codex"])
def test_a_second_open_finds_the_same_rules_without_detecting_them_again(source, tmp_path, monkeypatch):
    monkeypatch.setenv("CTXTOP_CACHE_DIR", str(tmp_path / "cache"))
    path = demo_path()
    if source != "demo":
        path = tmp_path / "session.jsonl"
        generate(path, source, 0.5)
    first = Tracker.open(str(path), audit=False)
    assert first.rules, "no rule found: the test would prove nothing"
    assert [r.text for r in first.rules] == [c.text for c in detect_constraints(first.session.entries, first.session.format)]

    def not_again(*args, **kwargs):
        raise AssertionError("rules detected again")

    monkeypatch.setattr(remembered, "detect_constraints", not_again)
    second = Tracker.open(str(path), audit=False)
    assert rules_of(second) == rules_of(first)


def test_a_changed_text_is_detected_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXTOP_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "session.jsonl"
    generate(log, "codex", 0.2)
    first = Tracker.open(str(log), audit=False)
    log.write_text(log.read_text(encoding="utf-8").replace("Never push to main.", "Never push to the release branch."), encoding="utf-8")
    second = Tracker.open(str(log), audit=False)
    texts = [r.text for r in second.rules]
    assert "Never push to the release branch." in texts and "Never push to main." not in texts
    assert "Never push to main." in [r.text for r in first.rules]
