"""A whole log's history goes by calibrated estimates; every window shown is exact, and equal to today's.

``eager`` counts every text with the tokenizer (how every window was counted before
estimates): the windows a whole-log open shows must equal its windows, block by
block, and its timeline must stay within the bound README states.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxtop.context.output.html import render_html
from ctxtop.context.output.markdown import render_markdown
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.window import estimate
from ctxtop.context.window.follow import LogFollower
from ctxtop.context.window.session import Session

from ..conftest import SHARED_FIXTURES, app_holding
from .test_lazy_text import eager, generate, jsonl_logs

# README, "How tokens are counted": the bound on a timeline point of 1,000 tokens or more.
DEFAULT_BOUND = 0.05  # with the calibration as shipped, on the real sessions
STRESSED_BOUND = 0.15  # calibrated on 4,000 characters a category (and its short texts apart)
POINT_MIN_TOKENS = 1000
REAL_LOGS = [p for p in jsonl_logs() if SHARED_FIXTURES in p.parents]


@pytest.fixture
def no_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")


@pytest.fixture
def stressed(monkeypatch):
    """Estimates everywhere they are allowed, so that the comparison has something to compare."""
    monkeypatch.setattr(estimate, "CALIBRATION_CHARS", 4000)


def window_counts(window) -> tuple:
    return ({name: (t.tokens, t.blocks) for name, t in window.totals.items()},
            [(item.entry.index, item.position, item.tokens, item.estimated, item.cleared) for item in window.blocks],
            window.harness)


def worst_error(estimated: Session, exact: Session) -> float:
    errors = [abs(a.total - b.total) / b.total for a, b in zip(estimated.timeline(), exact.timeline(), strict=True)
              if b.total >= POINT_MIN_TOKENS]
    return max(errors, default=0.0)


def assert_windows_equal(estimated: Session, exact: Session, messages) -> None:
    for message in messages:
        assert window_counts(estimated.window_at(message)) == window_counts(exact.window_at(message)), f"message {message}"


@pytest.mark.skipif(not REAL_LOGS, reason=f"shared fixtures not found at {SHARED_FIXTURES}")
@pytest.mark.parametrize("path", REAL_LOGS, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_every_window_shown_is_exact_and_the_history_within_the_bound(path, no_cache, stressed):
    exact = eager(path)
    estimated = Session.open(path)
    assert worst_error(estimated, exact) <= STRESSED_BOUND
    # Every message's window, in an order that also goes back to windows a kept replay holds.
    messages = list(range(estimated.message_count, -1, -1)) + list(range(0, estimated.message_count + 1, 7))
    assert_windows_equal(estimated, exact, messages)
    assert estimated.accounting.rough_blocks == 0 or estimated.rough_before(None)


@pytest.mark.skipif(not REAL_LOGS, reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_real_session_with_a_compaction_is_estimated_within_the_bound_as_shipped(no_cache):
    path = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    exact, estimated = eager(path), Session.open(path)
    assert estimated.accounting.rough_blocks > 0, "nothing was estimated: the test would prove nothing"
    assert worst_error(estimated, exact) <= DEFAULT_BOUND
    assert_windows_equal(estimated, exact, [None, 1, estimated.message_count // 2])


def test_a_generated_session_shows_exact_windows_labels_its_history_and_keeps_both_in_its_index(tmp_path, monkeypatch, stressed):
    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 9.0, seed=3)  # past the size from which an index is saved, with compactions
    monkeypatch.setenv("CTXTOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CTXTOP_NO_CACHE", raising=False)
    exact = eager(log)
    first = Session.open(log)
    assert first.accounting.rough_blocks > 0
    assert worst_error(first, exact) <= STRESSED_BOUND
    middle = first.message_count // 2
    snapshot = build_snapshot(first, middle, window=first.window_at(middle), session_tools=True)
    assert snapshot["history_estimated"] is True
    # Said where it is shown: the session's tool table in Markdown, the timeline in HTML.
    assert "over the session up to message" in render_markdown(snapshot) and ", ≈ estimated" in render_markdown(snapshot)
    assert "≈ Estimated: the history" in render_html(snapshot, [], [])
    assert window_counts(first.window_at(middle)) == window_counts(exact.window_at(middle))
    # Opened again from its saved index: the estimates are still known as such, and made exact when shown.
    again = Session.open(log)
    assert again.from_index > 0
    assert again.accounting.rough_blocks > 0
    assert_windows_equal(again, exact, [None, middle, middle // 3])
    assert [p.total for p in again.timeline()][: middle // 3] == [p.total for p in first.timeline()][: middle // 3]


def test_the_forensics_give_the_same_figures_whatever_the_token_cache_held(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys

    import generate as generator  # (bench/, put on the path by test_lazy_text)

    monkeypatch.setattr(generator, "CLAUDE_COMPACT_AT", 30_000)  # a compaction every few dozen messages
    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 1.0, seed=20)
    env = {**os.environ, "CTXTOP_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CTXTOP_NO_CACHE", None)

    def ctxtop(*argv: str) -> bytes:  # (each its own process, as a user runs them: nothing kept in memory between)
        return subprocess.run([sys.executable, "-m", "ctxtop", *argv], env=env, capture_output=True, timeout=300).stdout

    def summarizing() -> list[int]:
        return [f["cost"]["summarization_tokens"] for f in orjson.loads(ctxtop("check", "--json", str(log)))["forensics"]]

    cold = summarizing()
    ctxtop("export", str(log), "-o", str(tmp_path / "snapshot.json"))  # counts the latest window exactly, into the cache
    assert summarizing() == cold and len(cold) >= 5


def test_a_short_log_is_counted_exactly_throughout(no_cache):
    path = jsonl_logs()[0]
    session = Session.open(path)
    assert session.accounting.rough_blocks == 0 and not session.rough_before(None)
    assert build_snapshot(session, None)["history_estimated"] is False


async def test_the_tuis_timeline_marks_estimated_counts_on_its_scale():
    from ctxtop.tui.widgets.timeline import Timeline

    session = eager(jsonl_logs()[0])
    async with app_holding(Timeline).run_test(size=(80, 12)) as pilot:
        chart = pilot.app.query_one(Timeline)
        chart.set_position(session.message_count, session.message_count)
        chart.set_data(session.timeline(), 8000)
        assert "≈" not in chart.render().plain
        chart.set_data(session.timeline(), 8000, estimated=True)
        assert chart.render().plain.lstrip().startswith("≈")


def test_a_followed_log_shows_exact_windows_after_every_poll(tmp_path, no_cache, stressed):
    """A poll makes exact only what it appended (the rest was made exact before, and handed back to
    the replay kept ahead): the window shown after every poll is still the eager count's, block by block."""
    source = tmp_path / "source.jsonl"
    generate(source, "claude-code", 3.0, seed=5)  # with a compaction in the first half: its history stays estimated
    lines = source.read_bytes().splitlines(keepends=True)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines[: len(lines) // 2]))
    follower = LogFollower(str(log))
    assert follower.session.accounting.rough_blocks > 0, "nothing was estimated: the test would prove nothing"
    rest = lines[len(lines) // 2 :]
    step = max(1, len(rest) // 8)
    for start in range(0, len(rest), step):
        with open(log, "ab") as handle:
            handle.writelines(rest[start : start + step])
        assert follower.poll() is not None
        exact = eager(log)
        latest = len(follower.session.entries)
        assert latest == exact.message_count
        for message in (latest, latest - 1, latest // 2):
            assert window_counts(follower.window_at(message)) == window_counts(exact.window_at(message)), f"message {message}"


def test_refining_the_history_step_by_step_makes_it_the_exact_history(tmp_path, no_cache, stressed):
    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 3.0, seed=3)
    exact = eager(log)
    session = Session.open(log)
    assert session.accounting.rough_blocks > 0 and session.rough_before(None)
    estimated = [p.total for p in session.timeline()]
    steps = 1
    while not session.refine_step(max_tokens=12_000):
        steps += 1
    assert steps > 2 and session.accounting.rough_blocks == 0 and not session.rough_before(None)
    session.replay_again()
    assert [p.total for p in session.timeline()] == [p.total for p in exact.timeline()] != estimated
    assert_windows_equal(session, exact, [None, session.message_count // 2, session.message_count // 5])


def test_the_tracker_refines_a_read_log_until_told_to_stop(tmp_path, monkeypatch, no_cache, stressed):
    from ctxtop.context.tracker import Tracker
    from ctxtop.context.window import session as session_module

    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 3.0, seed=3)
    monkeypatch.setattr(session_module, "REFINE_STEP_TOKENS", 5_000)
    tracker = Tracker.open(str(log))
    assert tracker.refine_history(lambda: True) is False  # stopped after its first step
    assert tracker.session.accounting.rough_blocks > 0
    assert tracker.refine_history(lambda: False) is True
    assert not tracker.session.rough_before(None) and tracker.snapshot()["history_estimated"] is False
    assert [p.total for p in tracker.timeline()] == [p.total for p in eager(log).timeline()]
    assert tracker.refine_history(lambda: False) is False  # nothing left to refine


async def test_the_tui_refines_the_history_when_idle_and_drops_the_estimate_mark(tmp_path, no_cache, stressed):
    from ctxtop.tui.app import CtxtopApp
    from ctxtop.tui.widgets.timeline import Timeline

    from ..conftest import workers_done

    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 3.0, seed=3)
    app = CtxtopApp(str(log))
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = app.query_one(Timeline)
        for _ in range(1500):
            await pilot.pause(0.02)
            if app.tracker is not None and app.state.audited:
                break
        await workers_done(app)
        await pilot.pause()
        assert app.tracker is not None and not app.tracker.session.rough_before(None)
        assert timeline.estimated is False and timeline.points is app.state.timeline
        assert [p.total for p in timeline.points] == [p.total for p in eager(log).timeline()]


def test_a_followed_log_refined_stays_exact_as_it_grows(tmp_path, no_cache, stressed):
    import sys

    from ctxtop.context.tracker import Tracker

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from generate import GENERATORS

    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 3.0, seed=3)
    tracker = Tracker.open(str(log), live=True)
    assert tracker.refine_history(lambda: False) is True
    lines = GENERATORS["claude-code"](seed=8)
    with open(log, "a", encoding="utf-8") as handle:
        for _ in range(40):  # long enough texts to be estimated, were the history still estimated
            handle.write(next(lines))
    assert tracker.poll() is not None
    assert tracker.session.accounting.rough_blocks == 0 and not tracker.session.rough_before(None)
    assert [p.total for p in tracker.timeline()] == [p.total for p in eager(log).timeline()]


def _redacted_thinking_log(path: Path, turns: int) -> None:
    """A Claude Code log whose every reply thinks in redacted form and reports no thinking tokens: its
    reasoning is estimated as the reply's output tokens less the text it shows."""
    lines = []
    for turn in range(turns):
        parent = f"a{turn - 1}" if turn else None
        lines.append({"type": "user", "uuid": f"u{turn}", "parentUuid": parent, "sessionId": "s", "timestamp": f"2026-12-03T10:{turn % 60:02d}:00Z",
                      "message": {"role": "user", "content": f"Step {turn}: look at module {turn} again, then say what changed."}})
        shown = " ".join(f"module{turn}_item{k} changed its return type to Optional[int]," for k in range(4 + turn % 5))
        lines.append({"type": "assistant", "uuid": f"a{turn}", "parentUuid": f"u{turn}", "sessionId": "s",
                      "timestamp": f"2026-12-03T10:{turn % 60:02d}:30Z",
                      "message": {"id": f"m{turn}", "role": "assistant", "model": "claude-sonnet-4-5",
                                  "content": [{"type": "redacted_thinking", "data": "c2VjcmV0"}, {"type": "text", "text": shown}],
                                  "usage": {"input_tokens": 2000 + 150 * turn, "output_tokens": 400 + turn % 7 * 30}}})
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def test_reasoning_worked_out_from_what_a_call_shows_is_exact_in_an_estimated_history(tmp_path, no_cache, stressed):
    # The call's visible text is estimated like any other once calibrated; what the redacted reasoning
    # is given (the output tokens less that text) must still come from its exact count.
    log = tmp_path / "redacted.jsonl"
    _redacted_thinking_log(log, 120)
    estimated, exact = Session.open(log), eager(log)
    assert estimated.accounting.rough_blocks > 0, "nothing was estimated: the test would prove nothing"
    reasoning = [(p, j) for p, entry in enumerate(exact.entries) for j, b in enumerate(entry.blocks) if b.category == "reasoning"]
    assert len(reasoning) == 120 and all(exact.accounting.estimated(p, j) for p, j in reasoning)
    assert [estimated.accounting.of(p)[j] for p, j in reasoning] == [exact.accounting.of(p)[j] for p, j in reasoning]
    assert_windows_equal(estimated, exact, [None, 60, 200])
