"""Issue 18 in the TUI (Pilot): log text is never markup, and nothing leaves the screen on "loading…"."""

from __future__ import annotations

import json
import os
import stat

from rich.text import Text
from textual.widgets import Static

from ctxtop.context.tracker import Tracker
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.widgets.window_list import WindowList

from ..conftest import DATA
from .test_app import SIZE, plain, settle, until

CLAUDE = (DATA / "claude_compact.jsonl").read_text()
# Markup that crashed the app ([/] closes nothing, [x="] is a broken attribute), made a link, or ran an action.
MARKUP = 'Never push to main [/] or [x="] [link=https://evil.example/x]here[/link] [@click=app.quit]now[/].'
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\u202e")


def notifications(app) -> list:
    return list(app._notifications)


def with_user_text(text: str) -> str:
    return CLAUDE.replace("Never push to main.", json.dumps(text)[1:-1])


async def test_an_alert_about_a_rule_written_with_markup_is_notified_as_its_text(tmp_path):
    """Items 1 and 4: the alert's detail is log text: shown literally, no link, no action."""
    lines = with_user_text(MARKUP).splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if "compact_boundary" in line)
    log = tmp_path / "live.jsonl"
    log.write_text("".join(lines[:boundary]))
    app = CtxtopApp(str(log), pins=[MARKUP])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        with open(log, "a") as handle:
            handle.writelines(lines[boundary:])
        assert await until(pilot, lambda: any("constraint_lost" in n.message for n in notifications(app)))
        await pilot.pause(0.2)  # the toast is rendered: markup would raise here
        alert = next(n for n in notifications(app) if "constraint_lost" in n.message)
        assert not alert.markup
        assert "[/]" in alert.message and '[x="]' in alert.message and "[@click=app.quit]" in alert.message
        assert app.is_running and app.return_code is None  # [@click=app.quit] quit nothing


async def test_a_session_file_named_with_markup_and_escape_codes_in_directory_mode(tmp_path):
    """Items 2 and 5: the "newer session" notice names the file: as text, without its escape codes."""
    first = tmp_path / "first.jsonl"
    first.write_text(CLAUDE)
    app = CtxtopApp(str(first), session_dirs=[tmp_path], notice='newest session in x: [x="]\x1b]0;pwned\x07.jsonl')
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        newer = tmp_path / 'n[x="][bold]\x1b]0;pwned\x07\x1b[2J.jsonl'
        newer.write_text(CLAUDE)
        assert await until(pilot, lambda: any("newer session" in n.message for n in notifications(app)))
        await settle(pilot, app)
        await pilot.pause(0.2)
        messages = [n.message for n in notifications(app)]
        switched = next(m for m in messages if "newer session" in m)
        assert '[x="][bold]' in switched and not any(c in m for m in messages for c in TERMINAL_CONTROLS)
        assert not any(n.markup for n in notifications(app))
        assert app.path == str(newer) and app.is_running


async def test_pinning_a_block_that_holds_markup(tmp_path):
    """Item 3: p on a block with [x="] pins it and says so, as text."""
    log = tmp_path / "s.jsonl"
    log.write_text(with_user_text(MARKUP))
    app = CtxtopApp(str(log), at=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 2)
        window_list = app.query_one(WindowList)
        index = next(i for i, b in enumerate(app.view.window.blocks) if '[x="]' in b.text)
        window_list.select(index)
        await pilot.pause()
        await pilot.press("p")
        assert await until(pilot, lambda: any(c.source == "saved" for c in app.constraints))
        assert await until(pilot, lambda: any(n.message.startswith("pinned:") for n in notifications(app)))
        await pilot.pause(0.2)
        pinned = next(n.message for n in notifications(app) if n.message.startswith("pinned:"))
        assert '[x="]' in pinned and app.is_running
        assert not any(n.markup for n in notifications(app))


async def test_a_lone_surrogate_in_the_log_is_exported_by_e(tmp_path):
    """Item 10: `e` used to write nothing, silently."""
    log = tmp_path / "s.jsonl"
    log.write_text(CLAUDE.replace("Never push to main.", "Never push \\ud800 to main."))
    out = tmp_path / "exports"
    out.mkdir()
    app = CtxtopApp(str(log), export_dir=out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("e")
        assert await until(pilot, lambda: bool(app.last_export))
    written = {p.suffix: p for p in app.last_export}
    assert set(written) == {".json", ".md", ".svg", ".html"}
    umask = os.umask(0o022)
    os.umask(umask)
    assert {stat.S_IMODE(p.stat().st_mode) for p in written.values()} == {0o666 & ~umask}  # issue 20: not mkstemp's 0600
    assert "\ufffd" in json.loads(written[".json"].read_text())["constraints"][0]["text"]


async def test_deep_nesting_inside_a_record_loads_instead_of_hanging(tmp_path):
    """Item 11: the screen used to stay on "loading…"."""
    log = tmp_path / "deep.jsonl"
    log.write_text(CLAUDE.replace('"input": {"command": "ls"}', '"input": {"command": "ls", "x": %s}' % ("[" * 1000 + "]" * 1000)))
    app = CtxtopApp(str(log))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.session.parser.diagnostics.malformed_lines >= 3
        assert "loading" not in plain(app.query_one("#header", Static))


async def test_an_internal_error_in_a_worker_is_shown_not_left_loading(tmp_path, monkeypatch):
    """Item 32: a bug in the load worker says so on screen (header and notice), with the --debug hint."""
    def broken(*args, **kwargs):
        raise RuntimeError("a bug [/] \x1b[2J")

    monkeypatch.setattr(Tracker, "open", classmethod(lambda cls, *a, **k: broken()))
    app = CtxtopApp(str(DATA / "claude_compact.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: bool(app.worker_errors))
        await pilot.pause(0.2)
        header = plain(app.query_one("#header", Static))
        assert "internal error" in header and "RuntimeError" in header and "loading" not in header
        notice = next(n.message for n in notifications(app) if "internal error" in n.message)
        assert "--debug" in notice and "[/]" in notice and "\x1b" not in notice
        await pilot.press("b")  # a change of what is shown (the bell) repaints the header: the error stays
        await pilot.pause(0.1)
        assert "internal error" in plain(app.query_one("#header", Static))


async def test_an_internal_error_while_moving_is_shown_and_the_app_goes_on(tmp_path, monkeypatch):
    app = CtxtopApp(str(DATA / "claude_compact.jsonl"), at=3)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 3)
        monkeypatch.setattr(Tracker, "view", lambda self, at: (_ for _ in ()).throw(ValueError("view bug")))
        await pilot.press("left")
        assert await until(pilot, lambda: any("view bug" in n.message for n in notifications(app)))
        monkeypatch.undo()
        await pilot.press("left")
        await settle(pilot, app, 1)
        assert app.is_running


def test_debug_prints_the_workers_traceback_after_the_screen_closes(monkeypatch, capsys):
    from ctxtop.tui import cli

    def run(self):
        self.worker_errors.append(RuntimeError("kept for --debug"))

    monkeypatch.setattr(CtxtopApp, "run", run)
    assert cli.main([str(DATA / "claude_compact.jsonl"), "--debug"]) == 2
    assert "RuntimeError: kept for --debug" in capsys.readouterr().err


async def test_a_pin_id_from_a_pins_file_reaches_the_constraints_pane_as_text(tmp_path):
    """A pins file's ``id`` is taken as written (a project's .ctxtop/pins.toml is anyone's to write): the
    Constraints pane showed it raw, ESC, C1 CSI and bidi override included, written to the terminal as they were."""
    pins = tmp_path / "pins.toml"
    pins.write_text('[[pin]]\nid = "x\\u001b]0;pwned\\u0007\\u009b2J\\u0085\\u202e[bold]y[/bold]"\ntext = "Never push to main."\n')
    app = CtxtopApp(str(DATA / "claude_compact.jsonl"), pins_file=str(pins))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("2")
        assert await until(pilot, lambda: bool(app.constraints) and app.constraints[0].id in app.query_one("#constraints").rows)
        await pilot.pause(0.2)
        shown = app.query_one("#constraints").get_cell(app.constraints[0].id, "rule")
        assert isinstance(shown, Text) and "Never push to main." in shown.plain
        assert not any(c in shown.plain for c in TERMINAL_CONTROLS + ("\x85",)), repr(shown.plain)
        assert "x]0;pwned" not in shown.plain and "[bold]y[/bold]" in shown.plain  # the OSC gone whole; markup as text
