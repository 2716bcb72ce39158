"""The TUI's state as data: one immutable value in one reactive; the panes follow it, a session switch replaces it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.widgets import Static

from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.demo import DEMO_WINDOW, demo_path
from ctxtop.tui.messages import AuditReady
from ctxtop.tui.state import SessionState
from ctxtop.tui.widgets.compaction import CompactionView
from ctxtop.tui.widgets.window_list import WindowList

from ..conftest import DATA, workers_done
from .test_app import SIZE, demo_app, plain, settle, until


def header(app: CtxtopApp) -> str:
    return plain(app.query_one("#header", Static))


def banner(app: CtxtopApp) -> str:
    return plain(app.query_one("#banner", Static))


async def test_setting_the_cursor_in_the_state_alone_brings_the_view_header_and_banner_there():
    app = demo_app(at=150)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 150)
        assert await until(pilot, lambda: "later in the session" in banner(app))
        assert "message 150 / 390" in header(app)
        # No handler, no key: only the state changes; the view is asked for and every pane follows.
        app.state = replace(app.state, cursor=205)
        assert "at message 205: 3 rule(s) lost or weakened" in banner(app)  # the banner follows at once
        await settle(pilot, app, 205)
        assert "message 205 / 390" in header(app)
        assert app.query_one("#window-title", Static).render().plain.startswith("message 205 ·")
        assert app.view is not None and app.view.snapshot["at"]["message"] == 205


async def test_follow_toggles_through_the_state_and_the_header_follows():
    app = demo_app(at=100)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 100)
        paused = app.state
        assert not paused.follow and "PAUSED" in header(app)
        await pilot.press("f")
        await settle(pilot, app, 390)
        assert app.state.follow and app.state.cursor == 390 and "LIVE" in header(app)
        assert not paused.follow and paused.cursor == 100, "a state is replaced, never changed in place"
        await pilot.press("f")
        await pilot.pause()
        assert not app.state.follow and app.state.cursor == 390 and "PAUSED" in header(app)


async def test_a_change_that_leaves_the_cursor_asks_for_no_new_view(monkeypatch):
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        asked: list[int] = []
        original = app.compute_view
        monkeypatch.setattr(app, "compute_view", lambda at: (asked.append(at), original(at))[1])
        app.query_one(WindowList).select(3)
        await pilot.press("b", "r")  # the bell off, redaction on: the header says so; the view stays
        await pilot.pause()
        assert asked == [] and "(bell off)" in header(app) and "[redacted]" in header(app)
        assert app.query_one(WindowList).selected == 3, "the rows were masked in place, the selection kept"
        await pilot.press("left")
        await settle(pilot, app, 202)
        assert asked == [202]


async def test_the_state_is_read_only_from_outside():
    app = demo_app(at=10)
    with pytest.raises(AttributeError, match="_change"):
        app.cursor = 20
    assert app.cursor == 10 and isinstance(app.state, SessionState)


async def test_switching_sessions_replaces_the_state_and_drops_what_the_old_session_sends_late():
    other = DATA / "claude_compact.jsonl"
    app = CtxtopApp(str(demo_path()), window=DEMO_WINDOW, at=205)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 205)
        app._change(redacting=True)
        await pilot.press("slash")
        await pilot.press(*"wecom", "enter")
        assert await until(pilot, lambda: app.search is not None)
        before = app.state
        old_tracker = before.tracker
        assert old_tracker is not None and before.constraints and before.audit is not None
        app._switch_to(str(other))
        fresh = app.state
        # Nothing of the demo is left in the state: no tracker, rules, audit, view, search or cursor.
        assert (fresh.path, fresh.tracker, fresh.session, fresh.view, fresh.search, fresh.cursor, fresh.audit) == (
            str(other), None, None, None, None, None, None)
        assert tuple(fresh.constraints) == () and fresh.available == 0 and fresh.follow
        assert fresh.redacting, "the user's display choices carry over"
        await settle(pilot, app)
        loaded = app.state
        assert loaded.tracker is not old_tracker and loaded.session is not None and loaded.session.path == str(other)
        assert app.view is not None and app.view.snapshot["source"]["path"] == str(other)
        assert "demo_session" not in header(app) and "[redacted]" in header(app)
        # A late result from the demo's tracker (an audit still running when it was left) is dropped.
        app.post_message(AuditReady(old_tracker, list(before.constraints), before.audit))
        await pilot.pause()
        await workers_done(app)
        assert app.state.constraints is loaded.constraints and app.state.audit is loaded.audit


async def test_a_compaction_view_open_when_the_session_is_left_closes_with_its_state():
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        pane = app.query_one(CompactionView)
        await pilot.press("right_square_bracket")
        assert await until(pilot, lambda: pane.is_open and app.state.compaction is not None)
        app._switch_to(str(DATA / "claude_compact.jsonl"))
        assert not pane.is_open and not app.screen.has_class("-compaction")
        await settle(pilot, app)
        assert not pane.is_open and app.query_one("#main").display
