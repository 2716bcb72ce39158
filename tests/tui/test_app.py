"""The TUI on real data: every key on the demo and small fixtures, checked against the pure layers."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace

import pytest
from rich.text import Text
from textual import events
from textual.widgets import DataTable, Footer, Input, Static, TabbedContent

from ctxtop import parsers
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.pin_store import SavedPins, load_session_pins
from ctxtop.context.rules.selection import RuleRequest, select_rules
from ctxtop.context.strategies import STRATEGIES, preview
from ctxtop.context.strategies.report import session_frame
from ctxtop.context.window.session import Session
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.demo import DEMO_WINDOW, demo_path
from ctxtop.tui.keymap import COMMANDS
from ctxtop.tui.screens import KEYS, HelpScreen
from ctxtop.tui.widgets.breakdown import Breakdown
from ctxtop.tui.widgets.detail import Detail
from ctxtop.tui.widgets.empty_note import EmptyNote
from ctxtop.tui.widgets.timeline import Timeline
from ctxtop.tui.widgets.window_list import WindowList

from ..conftest import DATA, app_holding, exact_tokens, workers_done

SIZE = (120, 40)
# Waits poll every 20 ms and end as soon as their condition holds; the ceiling is generous
# (30 s) because test machines are shared and a loaded one must not fail a correct build.
WAIT_STEPS = 1500


def demo_app(**kwargs) -> CtxtopApp:
    return CtxtopApp(str(demo_path()), window=DEMO_WINDOW, **kwargs)


async def settle(pilot, app, message=None, tries=None):
    """Wait until the view for ``message`` (or any view) is on screen and no worker is running."""
    for _ in range(tries or WAIT_STEPS):
        await pilot.pause(0.02)
        if app.view is not None and (message is None or app.shown_message == message):
            await workers_done(app)
            await pilot.pause()
            if message is None or app.shown_message == message:
                return
    raise AssertionError(f"the view never showed message {message} (showing {app.shown_message})")


async def until(pilot, predicate) -> bool:
    """Let the app run until ``predicate()`` holds (True) or the wait runs out (False)."""
    for _ in range(WAIT_STEPS):
        if predicate():
            return True
        await pilot.pause(0.02)
    return predicate()


def cell(app, table_id, row, column) -> str:
    return str(app.query_one(table_id, DataTable).get_cell(row, column))


def plain(widget: Static) -> str:
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


def rendered_text(app, widget: Static) -> str:
    """What a Static shows, as the terminal would print it."""
    return "".join(seg.text for seg in app.console.render(widget.content))


@pytest.fixture(scope="module")
def demo_session():
    return Session.open(demo_path(), window=DEMO_WINDOW)


async def test_arrows_home_end_move_and_the_breakdown_shows_known_numbers(demo_session):
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        expected = build_snapshot(demo_session, 203)["window"]["categories"]
        assert cell(app, "#categories", "tool_result", "tokens") == f"{expected['tool_result']['tokens']:,}"
        await pilot.press("right")
        await settle(pilot, app, 204)
        assert cell(app, "#categories", "tool_result", "tokens") == "0"  # the compaction emptied the window
        await pilot.press("left", "left")
        await settle(pilot, app, 202)
        await pilot.press("home")
        await settle(pilot, app, 1)
        await pilot.press("end")
        await settle(pilot, app, 390)


@pytest.mark.parametrize("at", [9999, -9999])
async def test_an_at_past_the_session_is_said_and_the_latest_shown(at):
    app = demo_app(at=at)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 390)
        said = [n.message for n in app._notifications]
        assert f"no message {at:,}: the session has 1 to 390 (negative counts from the end); showing the latest" in said
        assert app.follow


async def test_a_category_of_blocks_without_tokens_has_its_row():
    # A remote compaction's summary is opaque: 1 block, 0 tokens counted. Its row keeps the blocks column whole.
    app = CtxtopApp(str(DATA / "codex_remote_compaction.jsonl"), at=9)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 9)
        categories = app.view.snapshot["window"]["categories"]
        assert (categories["summary"]["tokens"], categories["summary"]["blocks"]) == (0, 1)
        assert cell(app, "#categories", "summary", "blocks") == "1"
        shown = sum(int(cell(app, "#categories", name, "blocks").replace(",", "")) for name in app.query_one("#categories").rows)
        assert shown == len(app.view.window.blocks)


async def test_brackets_jump_between_compactions():
    app = demo_app(at=100)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 100)
        for expected in (204, 306, 383):
            await pilot.press("right_square_bracket")
            await settle(pilot, app, expected)
        await pilot.press("left_square_bracket")
        await settle(pilot, app, 306)


async def test_follow_toggles_and_returns_to_the_latest():
    app = demo_app(at=50)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 50)
        assert not app.follow and "PAUSED" in plain(app.query_one("#header", Static))
        await pilot.press("f")
        await settle(pilot, app, 390)
        assert app.follow and "LIVE" in plain(app.query_one("#header", Static))
        await pilot.press("left")
        await settle(pilot, app, 389)
        assert not app.follow


async def test_selecting_a_block_shows_it_in_full_in_the_detail_pane(demo_session):
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        window_list = app.query_one(WindowList)
        assert window_list.selected == 202  # the newest block
        window_list.focus()
        await pilot.press("up", "up")
        block = demo_session.window_at(203).blocks[200]

        def detail_shows_block() -> bool:
            rendered = rendered_text(app, app.query_one("#detail-body", Static))
            return f"message {block.entry.index}" in rendered and block.text[:10] in rendered

        # The detail pane follows the selection through a message: give it time on a loaded machine.
        assert await until(pilot, detail_shows_block)
        assert window_list.selected == 200


async def test_strategy_cycle_marks_the_blocks_it_would_touch(demo_session):
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        names = list(STRATEGIES)
        constraints = select_rules(demo_session.entries, RuleRequest())
        frame = session_frame(demo_session, 203, constraints)
        for name in names[:3]:
            await pilot.press("s")
            await pilot.pause()
            assert app.strategy == name
            assert app.query_one(WindowList).fates == preview(frame, name).fates
        assert "clear_tool_results" in plain(app.query_one("#window-title", Static))
        # The strategies table shows the same numbers as `ctxtop preview`.
        expected = preview(frame, "clear_tool_results")
        assert cell(app, "#strategies", "clear_tool_results", "after").startswith(f"{expected.tokens_after:,}")
        assert cell(app, "#strategies", "sliding_window", "outcome") == "0/0/3"


async def test_pin_and_unpin_persist_outside_the_log(tmp_path):
    log = tmp_path / "session.jsonl"
    log.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    os.utime(log, (1_000_000, 1_000_000))
    before = log.read_bytes(), log.stat().st_mtime_ns, sorted(p.name for p in tmp_path.iterdir())
    app = CtxtopApp(str(log), at=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 1)
        block_text = app.view.window.blocks[app.query_one(WindowList).selected].text.strip()
        await pilot.press("p")
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if any(c.source == "saved" for c in app.constraints):
                break
        await settle(pilot, app, 1)
        pinned = [c for c in app.constraints if c.source == "saved"]
        assert [c.text for c in pinned] == [block_text]
        assert any(c.source == "auto" for c in app.constraints), "a pin made in the TUI adds to the auto-detected rules"
        assert cell(app, "#constraints", pinned[0].id, "status") == "✔ kept"
        assert load_session_pins(log)[0].texts == [block_text]
        await pilot.press("u")
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if not any(c.source == "saved" for c in app.constraints):
                break
        assert load_session_pins(log) == (SavedPins([], []), None)
    # ctxtop never writes to the log it reads, nor beside it: the pins went to the state directory.
    assert (log.read_bytes(), log.stat().st_mtime_ns, sorted(p.name for p in tmp_path.iterdir())) == before


async def test_pins_saved_by_the_ui_are_used_next_time(tmp_path):
    from ctxtop.context.rules.pin_store import save_session_pins

    log = tmp_path / "session.jsonl"
    log.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    save_session_pins(log, SavedPins(["a rule nobody wrote down"]))
    app = CtxtopApp(str(log))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert [c.text for c in app.constraints if c.source == "saved"] == ["a rule nobody wrote down"]
        assert cell(app, "#constraints", app.constraints[0].id, "status") == "✘ lost"


async def test_export_writes_json_markdown_and_svg(tmp_path):
    app = demo_app(at=203, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        await pilot.press("e")
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if app.last_export:
                break
    paths = sorted(p.name for p in app.last_export)
    assert paths == ["ctxtop-demo_session-m203.html", "ctxtop-demo_session-m203.json", "ctxtop-demo_session-m203.md",
                     "ctxtop-demo_session-m203.svg"]
    snapshot = json.loads((tmp_path / "ctxtop-demo_session-m203.json").read_text())
    assert snapshot["at"]["message"] == 203 and snapshot["window"]["estimated_tokens"] == 4825
    assert [p["strategy"] for p in snapshot["strategies"]] == list(STRATEGIES)
    assert "## ctxtop snapshot" in (tmp_path / "ctxtop-demo_session-m203.md").read_text()
    svg = (tmp_path / "ctxtop-demo_session-m203.svg").read_text()
    assert svg.startswith("<svg") and "6,399" in svg


async def test_export_never_writes_beside_the_log_read(tmp_path, monkeypatch):
    """`e` writes into the current directory, but not when that is the log's folder: ctxtop never writes beside a
    log (in directory mode the export was even taken for a newer session)."""
    log = tmp_path / "logs" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    before = sorted(p.name for p in log.parent.iterdir())
    app = CtxtopApp(str(log), export_dir=log.parent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("e")
        assert await until(pilot, lambda: bool(app.last_export))
    assert sorted(p.name for p in log.parent.iterdir()) == before
    assert all(p.is_file() and log.parent not in p.parents for p in app.last_export)


@pytest.mark.parametrize("size, counts", [((80, 24), 1), ((200, 50), 4)])
async def test_the_tools_pane_shows_each_count_whole_or_not_at_all(size, counts):
    from textual.widgets import DataTable

    app = demo_app(at=203)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, 203)
        await pilot.press("5")
        await pilot.pause(0.2)
        table = app.query_one("#tools", DataTable)
        shown = list(table.columns.values())
        # Every column in the pane whole (a number cut at its edge reads as another number), and the first count there.
        assert sum(column.get_render_width(table) for column in shown) <= table.size.width
        assert [str(column.label) for column in shown][:2] == ["tool", "tokens"]
        assert len(shown) >= 1 + counts  # the tokens always; more where there is room
        assert str(table.get_cell_at((0, 1))).replace(",", "").isdigit()


async def test_4_then_enter_jumps_to_the_highlighted_alert():
    app = demo_app(at=100)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 100)
        await pilot.press("4")
        first = app.query_one("#alerts").cursor_row
        assert app.focused is app.query_one("#alerts") and first == 0
        await pilot.press("enter")  # the first alert, at the first compaction
        await settle(pilot, app, 204)
        await pilot.press("right")  # ← / → still step through messages
        await settle(pilot, app, 205)


async def test_search_finds_every_match_in_the_session_and_steps_with_n():
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        await pilot.press("slash")
        await pilot.press(*"PO-0103")
        await pilot.press("enter")
        assert not app.query_one("#prompt").has_class("-visible")
        assert await until(pilot, lambda: app.search is not None and app.search_index == 0)
        # Said in the title while it runs, not in a notice that would outlive the matches.
        assert app.searching is None and not any(n.message.startswith("searching") for n in app._notifications)
        expected = app.tracker.search("po-0103")
        assert app.search.matches == expected and len(expected) >= 2
        first = expected[0]
        await settle(pilot, app, first[0])  # past the last match: wrapped round to the first
        assert await until(pilot, lambda: app.view.window.blocks[app.query_one(WindowList).selected].entry.index == first[0])
        assert "PO-0103" in app.view.window.blocks[app.query_one(WindowList).selected].text
        assert f"1 / {len(expected)}" in plain(app.query_one("#window-title", Static))
        await pilot.press("n")
        second = expected[1]
        await settle(pilot, app, second[0])
        assert await until(pilot, lambda: (app.view.window.blocks[app.query_one(WindowList).selected].entry.index,
                                           app.view.window.blocks[app.query_one(WindowList).selected].position) == second)
        await pilot.press("N")
        await settle(pilot, app, first[0])
        await pilot.press("slash", *"zzqq-nowhere", "enter")  # a search that finds nothing: n says so, not "no search yet"
        assert await until(pilot, lambda: app.search is not None and app.search.query == "zzqq-nowhere")
        await pilot.press("n")
        await pilot.pause()
        assert app._notifications and list(app._notifications)[-1].message == "no match for 'zzqq-nowhere': / searches again"


async def test_a_search_is_named_as_it_was_typed():
    """The title and the notices showed the query's repr: a backslash doubled, a quote turning the
    quotes round ("it's")."""
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        for query in ("C:\\x", "it's"):
            await pilot.press("slash", *query, "enter")
            assert await until(pilot, lambda: app.search is not None and app.search.query == query)
            await pilot.pause()
            assert f"'{query}': 0 matches" in plain(app.query_one("#window-title", Static))
            assert list(app._notifications)[-1].message == f"no match for '{query}' in {app.available:,} messages"


async def test_g_goes_to_a_message_and_1_to_4_switch_panes():
    app = demo_app(at=10)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 10)
        await pilot.press("g", *"250", "enter")
        await settle(pilot, app, 250)
        await pilot.press("g", "minus", "1", "enter")
        await settle(pilot, app, 390)
        for key, pane in (("2", "tab-constraints"), ("3", "tab-strategies"), ("4", "tab-alerts"), ("1", "tab-detail")):
            await pilot.press(key)
            await pilot.pause()
            assert app.query_one(TabbedContent).active == pane


async def test_keys_typed_right_after_g_go_to_the_prompt_not_to_the_bindings():
    # A fast typist's "g205⏎" arrives at once, before the prompt has the focus: "2" and "5" used to
    # switch panes and the prompt stayed open and empty.
    app = demo_app(at=10)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 10)
        for key, character in (("g", "g"), ("2", "2"), ("0", "0"), ("5", "5"), ("enter", "\r")):
            app.post_message(events.Key(key, character))
        await settle(pilot, app, 205)
        assert app.query_one(TabbedContent).active == "tab-detail"
        assert not app.query_one("#prompt").has_class("-visible")
        for key, character in (("slash", "/"), ("g", "g"), ("o", "o"), ("g", "g")):  # g is text in the search prompt
            app.post_message(events.Key(key, character))
        assert await until(pilot, lambda: app.query_one("#prompt", Input).value == "gog")


async def test_g_to_a_message_the_session_does_not_have_says_so_and_stays():
    app = demo_app(at=10)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 10)
        for number in ("0", "9999", "-400"):
            await pilot.press("g", *number, "enter")
            await pilot.pause(0.1)
            assert app.cursor == 10
            assert list(app._notifications)[-1].message.startswith(f"no message {int(number):,}")
        await pilot.press("g", "-", "1", "enter")  # negative counts from the end
        await settle(pilot, app, 390)


async def test_help_lists_the_keys():
    app = demo_app(at=10)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 10)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        # Every action in full, a long one wrapped onto more lines rather than cut at the edge.
        keys = app.screen.query_one("#help-keys", Static)
        shown = " ".join(" ".join(keys.render_line(y).text for y in range(keys.size.height)).split())
        assert keys.content_size.width < max(len(action) for _key, action in KEYS) + 12  # some do wrap
        for _key, action in KEYS:
            assert " ".join(action.split()) in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        # Its footer says what q does there (closes the help), over the main screen's "q Quit".
        await pilot.press("question_mark")
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert footer.screen is app.screen and "Close" in {binding.description for _, binding, *_ in app.screen.active_bindings.values()}
        await pilot.press("q")
        assert not isinstance(app.screen, HelpScreen) and app.is_running


async def test_the_header_says_the_cursor_stopped_during_the_replay():
    """Stepping back during the demo's replay stopped the cursor while the header still said only "▶ REPLAY"."""
    app = demo_app(replay_speed=0.5)
    async with app.run_test(size=SIZE) as pilot:
        assert await until(pilot, lambda: app.view is not None and app.available > 3)
        await pilot.press("left")
        assert await until(pilot, lambda: not app.follow)
        await pilot.pause()
        header = plain(app.query_one("#header", Static))
        assert "REPLAY" in header and "PAUSED (f: follow)" in header
        await pilot.press("f")
        await pilot.pause()
        assert app.follow and "PAUSED" not in plain(app.query_one("#header", Static))


async def test_replayed_demo_raises_the_alert_at_the_compaction():
    app = demo_app(replay_speed=60)
    notified = []
    original = app.notify
    app.notify = lambda message, **kw: (notified.append((message, kw)), original(message, **kw))[1]
    async with app.run_test(size=SIZE) as pilot:
        banner = app.query_one("#banner", Static)
        assert app.available < 204
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if app.session is not None and app.available >= app.session.message_count:
                break
        await workers_done(app)
        await pilot.pause()
        assert banner.has_class("-visible") and "lost or weakened" in plain(banner)
        assert any(kw.get("severity") == "error" and "204" in msg for msg, kw in notified)
        alerts = app.query_one("#alerts", DataTable)
        assert alerts.row_count >= 4
        # Enter on the first alert jumps to its compaction.
        app.query_one(TabbedContent).active = "tab-alerts"
        alerts.focus()
        await pilot.pause()
        alerts.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot, app, 204)


async def test_log_text_is_never_markup(tmp_path):
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(
        '{"type":"user","sessionId":"s","uuid":"1","message":{"role":"user","content":"[bold]x[/] \\u001b]52;c;SGVsbG8=\\u0007 <|endoftext|>"},'
        '"cwd":"/[red]evil[/]"}\n'
        '{"type":"assistant","sessionId":"s","uuid":"2","message":{"id":"m","role":"assistant","model":"[/]\\u001b[2J",'
        '"content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":9,"output_tokens":1}}}\n'
    )
    app = CtxtopApp(str(hostile))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 2)
        header = plain(app.query_one("#header", Static))
        assert "[/]" in header and "\x1b" not in header
        window_list = app.query_one(WindowList)
        line = "".join(seg.text for seg in window_list.render_line(0))
        assert "[bold]x[/]" in line and "<|endoftext|>" in line and "\x1b" not in line and "\x07" not in line
        window_list.select(0)
        await pilot.pause()
        rendered = rendered_text(app, app.query_one(Detail).query_one("#detail-body", Static))
        assert "[bold]x[/]" in rendered and "<|endoftext|>" in rendered and "\x1b" not in rendered


async def test_unreadable_session_exits_with_code_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nothing here\n")
    app = CtxtopApp(str(bad))
    async with app.run_test() as pilot:
        await pilot.pause(0.3)
    assert app.return_code == 2


async def test_a_named_format_that_reads_no_message_is_refused_when_the_demo_replays_too():
    # `ctxtop demo --log-format codex`: the replay reads the log whole, not followed; it opened an empty session.
    app = CtxtopApp(str(demo_path()), window=DEMO_WINDOW, log_format="codex", replay_speed=1.0)
    async with app.run_test() as pilot:
        await pilot.pause(0.5)
    assert app.return_code == 2 and "no message could be read as codex" in (app.load_error or "")


def footer_entries(app) -> list[tuple[str, str, int]]:
    """The footer's entries on screen: key, description and the column after the entry's last."""
    footer = app.screen.query_one(Footer)
    return [(key.key_display, key.description, key.region.right) for key in footer.query("FooterKey") if key.display]


@pytest.mark.parametrize("width", [60, 80, 110, 120])
async def test_the_footer_ends_with_help_and_quit_whatever_the_width_and_the_focus(width):
    # At 80 columns the footer used to end at "e Export": how to get help and how to quit were off-screen.
    app = demo_app(at=203)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot, app, 203)
        for _ in range(6):  # the window list, the detail pane (its own key), the tabs...
            await pilot.pause()
            entries = footer_entries(app)
            assert [(key, description) for key, description, _ in entries[-2:]] == [("?", "Help"), ("q", "Quit")]
            assert all(right <= width for *_, right in entries), f"an entry cut with the focus on {app.focused}: {entries}"
            await pilot.press("tab")


async def test_the_footer_leaves_out_only_what_does_not_fit_and_refits_on_a_resize():
    every_entry = [command.footer for command in COMMANDS if command.footer]
    app = demo_app(at=203)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app, 203)
        await pilot.pause()
        assert [description for _, description, _ in footer_entries(app)] == every_entry
        await pilot.resize_terminal(80, 40)
        await pilot.pause(0.1)
        # Strategy goes first, then Compaction ("[ / ]" opens the same view); the rest keep their order.
        shown = [description for _, description, _ in footer_entries(app)]
        assert shown == [entry for entry in every_entry if entry not in ("Strategy", "Compaction")]
        assert all(right <= 80 for *_, right in footer_entries(app))
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.1)
        assert [description for _, description, _ in footer_entries(app)] == every_entry


async def test_every_tab_name_is_in_sight_at_120_columns():
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        panes = app.query_one("#panes")
        tabs = [tab for tab in panes.query("Tab") if tab.display]
        assert len(tabs) == 6
        assert all(panes.region.x <= tab.region.x and tab.region.right <= panes.region.right for tab in tabs)


async def test_an_empty_pane_says_why_it_is_empty():
    # No rule stated, no sub-agent: each pane says so rather than showing a bare header.
    app = CtxtopApp(str(DATA / "openai_messages.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        notes = {note.parent.id: str(note.render()) for note in app.query(EmptyNote) if note.display}
        assert notes.keys() == {"tab-constraints", "tab-alerts", "tab-agents"}
        assert notes["tab-constraints"].startswith("No rules tracked")
    app = CtxtopApp(str(DATA / "claude_compact.jsonl"))  # sub-agent records in the log itself, no transcript files
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        [note] = [note for note in app.query(EmptyNote) if note.parent.id == "tab-agents"]
        assert note.display and "holds 2 sub-agent messages of its own" in str(note.render())
    app = demo_app(at=390)  # rules, and alerts after the compaction: their notes stay hidden
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 390)
        shown = {note.parent.id for note in app.query(EmptyNote) if note.display}
        assert shown == {"tab-agents"}


async def test_an_empty_table_draws_no_scrollbar_between_its_header_and_its_note():
    # At 100 columns the Alerts and Agents headers are wider than their pane: with no row, a horizontal scrollbar
    # was drawn under the header, a stray row above "No alerts…" that scrolled nothing.
    app = CtxtopApp(str(DATA / "openai_messages.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        for key, pane in (("4", "tab-alerts"), ("6", "tab-agents")):
            await pilot.press(key)
            await pilot.pause()
            table = app.query_one(f"#{pane} DataTable")
            assert table.row_count == 0 and table.virtual_size.width > table.size.width, pane
            assert not table.show_horizontal_scrollbar, pane
    app = demo_app(at=390)  # alerts: the table scrolls again
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app, 390)
        await pilot.press("4")
        await pilot.pause()
        table = app.query_one("#tab-alerts DataTable")
        assert table.row_count and table.styles.overflow_x == "auto"


async def test_a_breakdown_too_short_for_its_rows_shows_the_biggest_first():
    # At 80x24 the rows after the sixth were scrolled out of sight: on real sessions, the inferred
    # system prompt and tools and the unattributed rest, the biggest of all.
    app = demo_app(at=390)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app, 390)
        table = app.query_one(Breakdown).query_one(DataTable)
        assert table.row_count >= table.size.height  # (the header takes a row: not all of them fit)
        def tokens() -> list[int]:
            return [int(str(table.get_row_at(i)[1]).lstrip("≈").replace(",", "")) for i in range(table.row_count)]

        assert tokens() == sorted(tokens(), reverse=True)
        await pilot.press("g", "1", "0", "enter")  # another message: sorted again for its own sizes
        await settle(pilot, app, 10)
        assert tokens() == sorted(tokens(), reverse=True)
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.2)
        names = [str(table.get_row_at(i)[0])[2:] for i in range(table.row_count)]
        assert names[-2:] == ["inferred sys+tools", "unattributed"]  # room for all: the breakdown's own order


async def test_a_preview_too_long_for_the_list_ends_in_an_ellipsis_beside_the_scrollbar():
    # The rows were cut to the widget's width, scrollbar included: the "…" fell under the scrollbar.
    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        listing = app.query_one(WindowList)
        width = listing.scrollable_content_region.width
        assert width < listing.size.width  # (a scrollbar: the demo's window has more blocks than rows)
        lines = [listing.render_line(y) for y in range(listing.scrollable_content_region.height)]
        assert all(line.cell_length == width for line in lines)
        assert any(line.text.rstrip().endswith("…") for line in lines)


async def test_small_terminal_collapses_the_timeline():
    app = demo_app(at=203)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app, 203)
        assert not app.query_one("#timeline").display
        assert app.query_one(WindowList).size.height >= 5


async def test_the_header_keeps_its_two_lines_in_a_narrow_terminal(tmp_path):
    # A long file name (as Claude Code's uuids are) and every switch on: the first line used to wrap
    # and push the window's use out of the header.
    log = tmp_path / "258c7280-ae70-4798-800f-63464d01a85d-a-long-session-name.jsonl"
    log.write_bytes(demo_path().read_bytes())
    app = CtxtopApp(str(log), window=DEMO_WINDOW, at=203)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app, 203)
        await pilot.press("b", "r")
        await pilot.pause(0.1)
        header = app.query_one("#header", Static)
        for width in (80, 60):
            await pilot.resize_terminal(width, 24)
            await pilot.pause(0.1)
            first, second = plain(header).split("\n")
            assert len(first) <= width - 2 and len(second) <= width - 2
            assert second.startswith(" ") is False and "tokens" in second and "message 203" in second
        first, second = plain(header).split("\n")
        # The model, the name and then the format give way to the mode, which stays whole.
        assert first == "258c7280-ae70-4…  ❚❚ PAUSED (live)  (bell off)  [redacted]", first
        assert second.endswith("message 203 / 390")  # the counts that do not fit give way whole, not cut short
        await pilot.resize_terminal(200, 24)  # where there is room, the name is whole (it was cut at 48 characters)
        await pilot.pause(0.1)
        assert plain(header).startswith(f"{log.name}  claude-code  claude-sonnet-4-5-20250929  ❚❚ PAUSED")


async def test_a_click_on_a_compactions_marker_opens_it_and_the_cursor_label_hides_no_marker():
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 390)
        timeline = app.query_one(Timeline)
        markers = plain(timeline).split("\n")[-1]
        # The demo's three compactions (204, 306, 383): the label of the cursor at 390 covers none of them.
        assert markers.count("▲") == 3
        first = markers.index("▲")  # its column's last message is past 204: the click still opens the compaction
        # Where the ▲ is on screen: the chart starts inside the widget's padding (a click beside it landed on it).
        await pilot.click(Timeline, offset=(first + timeline.styles.padding.left, timeline.size.height - 1))
        assert await until(pilot, lambda: app.state.compaction is not None and app.cursor == 204)
        await pilot.press("escape")
        await pilot.click(Timeline, offset=(first + timeline.styles.padding.left - 1, timeline.size.height - 1))
        assert await until(pilot, lambda: app.state.compaction is None and app.cursor < 204)


def test_readme_lists_every_key_and_every_binding_is_in_the_help():
    from pathlib import Path

    from ctxtop.tui.screens import KEYS

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for key, action in KEYS:
        assert f"| {key.replace('|', chr(92) + '|')} | {action} |" in readme
    shown = " ".join(key for key, _ in KEYS)
    for binding in CtxtopApp.BINDINGS:
        display = binding.key_display or binding.key
        assert any(part in shown for part in (display, display.capitalize())) or binding.key in ("left", "right", "home", "end"), binding


async def test_every_action_is_in_the_command_palette():
    app = demo_app(at=10)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 10)
        titles = {command.title for command in app.get_system_commands(app.screen)}
    for title in ("Previous message", "Next message", "Previous compaction", "Next compaction", "Follow on/off", "Pin",
                  "Unpin", "Cycle strategy", "Export snapshot", "Search", "Help: every key", "Bell on/off",
                  "Go to message", "Show constraints", "Show alerts", "Compaction view"):
        assert title in titles
    assert "Keys" not in titles  # one entry for the keys: ours, which lists every one
    assert "Back to the session" not in titles  # offered only from a sub-agent


async def test_live_log_moves_the_window_and_flags_a_compaction_in_the_same_update(tmp_path):
    lines = demo_path().read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b"compact_boundary" in line)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines[: cut - 40]))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        start = app.available
        assert app.follow and "LIVE" in plain(app.query_one("#header", Static))
        with open(log, "ab") as handle:  # a second writer, as the agent would
            handle.writelines(lines[cut - 40 : cut - 20])
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if app.available > start and app.shown_message == app.available:
                break
        assert app.available > start and app.cursor == app.available
        # Scrolled back: new messages do not move the cursor; "+N new" says they came.
        await pilot.press("left")
        await settle(pilot, app, app.available - 1)
        parked = app.cursor
        with open(log, "ab") as handle:
            handle.writelines(lines[cut - 20 : cut + 4])
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if app.available >= 205:
                break
        await workers_done(app)
        await pilot.pause()
        assert app.cursor == parked and f"+{app.unseen} new" in plain(app.query_one("#header", Static))
        banner = app.query_one("#banner", Static)
        assert banner.has_class("-visible") and "lost or weakened" in plain(banner)
        await pilot.press("end")
        await settle(pilot, app, app.available)
        assert app.follow and app.unseen == 0


def notes_of(app) -> list[str]:
    """The messages ``app`` notifies from now on, in order (each still shown)."""
    notes: list[str] = []
    shown = app.notify
    app.notify = lambda message, **kw: (notes.append(message), shown(message, **kw))[1]
    return notes


async def test_a_log_truncated_to_empty_then_written_again_is_shown_afresh_and_stays_live(tmp_path):
    # Issue 18, items 19 and 20: no stale data, no "stopped following", still LIVE.
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines[:120]))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    notes = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 120)
        with open(log, "r+b") as handle:
            handle.truncate(0)
        assert await until(pilot, lambda: app.shown_message == 0 and app.session.message_count == 0)
        with open(log, "ab") as handle:
            handle.writelines(lines[:9])
        expected = Session.open(log, window=DEMO_WINDOW).message_count
        assert await until(pilot, lambda: app.session.message_count == expected and app.shown_message == expected)
        await workers_done(app)
        await pilot.pause()
        header = plain(app.query_one("#header", Static))
        assert "LIVE" in header and f"{expected} / {expected}" in header
        assert app.view.snapshot["window"]["estimated_tokens"] == Session.open(log, window=DEMO_WINDOW).window_at(None).estimated_tokens
        assert not any("stopped following" in n for n in notes)


async def test_a_search_of_the_log_before_it_was_replaced_is_not_kept(tmp_path):
    """The matches were the old log's: the title said "'PO-0103': 1 / 4" over a log that holds none, and n went to
    messages that match nothing."""
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("slash", *"PO-0103", "enter")
        assert await until(pilot, lambda: app.search is not None and app.search.matches)
        (tmp_path / "new.jsonl").write_bytes(b"".join(lines[:9]))  # no PO-0103 in it
        os.replace(tmp_path / "new.jsonl", log)
        assert await until(pilot, lambda: app.available == Session.open(log, window=DEMO_WINDOW).message_count)
        await settle(pilot, app)
        assert "PO-0103" not in plain(app.query_one("#window-title", Static))
        assert app.search is None or not app.search.matches


async def test_the_new_messages_counted_while_paused_go_with_the_log_read_again(tmp_path):
    """Paused, 50 messages arrived; then the log was replaced by a shorter one: the header went on saying
    "+50 new (f: follow)" at its last message."""
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines[:100]))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("left")
        assert await until(pilot, lambda: not app.follow)
        with open(log, "ab") as handle:
            handle.writelines(lines[100:150])
        assert await until(pilot, lambda: app.unseen > 0)
        (tmp_path / "new.jsonl").write_bytes(b"".join(lines[:20]))
        os.replace(tmp_path / "new.jsonl", log)
        expected = Session.open(log, window=DEMO_WINDOW).message_count
        assert await until(pilot, lambda: app.available == expected)
        await settle(pilot, app)
        assert app.unseen == 0 and "new (f: follow)" not in plain(app.query_one("#header", Static))


async def test_a_log_whose_folder_is_moved_away_and_made_again_is_still_followed(tmp_path):
    """An agent's session folder made anew (moved aside, a fresh one written): the watch was on the old folder, no
    event came about the new log, and the screen said ● LIVE over the old session for good."""
    lines = demo_path().read_bytes().splitlines(keepends=True)
    folder = tmp_path / "project"
    folder.mkdir()
    log = folder / "live.jsonl"
    log.write_bytes(b"".join(lines[:60]))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 60)
        folder.rename(tmp_path / "project.old")
        folder.mkdir()
        log.write_bytes(b"".join(lines[:15]))
        expected = Session.open(log, window=DEMO_WINDOW).message_count
        assert await until(pilot, lambda: app.session.message_count == expected and app.shown_message == expected)
        with open(log, "ab") as handle:  # the agent goes on writing in the new folder
            handle.writelines(lines[15:40])
        expected = Session.open(log, window=DEMO_WINDOW).message_count
        assert await until(pilot, lambda: app.session.message_count == expected and app.shown_message == expected)
        assert "LIVE" in plain(app.query_one("#header", Static))


async def test_a_log_replaced_by_a_folder_says_it_stopped_following_once(tmp_path):
    """The log deleted and a folder made in its name: the change already on its way (the look again while the
    log was waited for) read it again after following had stopped, and the same error came up twice."""
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines[:60]))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    notes = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 60)
        log.unlink()
        assert await until(pilot, lambda: app.tracker.follower.waiting_for_file)
        log.mkdir()
        assert await until(pilot, lambda: any("stopped following" in n for n in notes))
        await pilot.pause(2.5)  # longer than the look again, and the idle check
        assert [n for n in notes if "stopped following" in n] == [notes[-1]] and "a folder" in notes[-1]
        assert "STOPPED" in plain(app.query_one("#header", Static))


async def test_rename_rotation_is_followed_into_the_new_file_and_a_log_gone_for_good_stops_being_live(tmp_path):
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(lines[:60]))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    notes = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 60)
        os.rename(log, tmp_path / "live.jsonl.1")
        assert await until(pilot, lambda: app.tracker.follower.waiting_for_file)
        log.write_bytes(b"".join(lines[:15]))
        expected = Session.open(log, window=DEMO_WINDOW).message_count
        assert await until(pilot, lambda: app.session.message_count == expected and app.shown_message == expected)
        assert not any("stopped following" in n for n in notes)
        # Now gone for good: once the grace period is over the header stops saying LIVE.
        app.tracker.follower.grace_seconds = 0
        log.unlink()
        assert await until(pilot, lambda: any("stopped following" in n for n in notes))
        await pilot.pause()
        header = plain(app.query_one("#header", Static))
        assert "LIVE" not in header and "FOLLOW" not in header and "■ STOPPED: the log is no longer followed" in header


@pytest.mark.parametrize("stay", [False, True])
async def test_directory_mode_follows_a_newer_session_unless_told_to_stay(tmp_path, stay):
    first = tmp_path / "project" / "first.jsonl"
    first.parent.mkdir()
    first.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    app = CtxtopApp(str(first), session_dirs=[tmp_path], stay=stay)
    notes = []
    original = app.notify
    app.notify = lambda message, **kw: (notes.append(message) if "session" in message else None, original(message, **kw))[1]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        newer = tmp_path / "project" / "second.jsonl"
        newer.write_bytes(demo_path().read_bytes()[:20_000].rsplit(b"\n", 1)[0] + b"\n")
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if notes:
                break
        if stay:
            assert app.path == str(first) and "staying" in notes[0]
        else:
            assert app.path == str(newer) and "switched" in notes[0]
            await settle(pilot, app)
            assert app.session.path == str(newer)


@pytest.mark.parametrize("atomically", [True, False])
async def test_directory_mode_does_not_switch_to_a_file_that_is_no_session(tmp_path, atomically):
    """A .json that is no log (a settings file, an `e` export) appearing in the folder followed is not a newer
    session (ctxtop switched to it and exited with "not a session log ctxtop knows")."""
    first = tmp_path / "first.jsonl"
    first.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    app = CtxtopApp(str(first), session_dirs=[tmp_path])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        other = tmp_path / "settings.json"
        if atomically:  # written elsewhere and renamed in, as exports and editors do
            (tmp_path / ".settings.json.tmp").write_text('{"theme": "dark", "model": "opus"}')
            os.rename(tmp_path / ".settings.json.tmp", other)
        else:  # created empty, then written
            other.touch()
            await pilot.pause(0.3)
            other.write_text('{"theme": "dark", "model": "opus"}')
        await pilot.pause(1.5)
        assert app.is_running and app.return_code is None
        await settle(pilot, app)
        assert app.path == str(first) and app.session.path == str(first)


async def test_loading_reports_progress_and_hides_the_bar_when_done(monkeypatch):
    from textual.widgets import ProgressBar

    from ctxtop.tui.messages import LoadProgress

    monkeypatch.setattr("ctxtop.context.window.session.STREAM_CHUNK_BYTES", 8192)
    seen = []
    app = demo_app(at=100)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot, app, 100)
        fractions = [m.fraction for m in seen if isinstance(m, LoadProgress)]
        assert len(fractions) > 10 and fractions == sorted(fractions) and fractions[-1] > 0.95
        assert {m.phase for m in seen if isinstance(m, LoadProgress)} == {"read"}
        assert not app.query_one("#loading", ProgressBar).display
    # Reading in chunks gives the same session as parsing all the bytes at once.
    whole = Session(parsers.parse(demo_path().read_bytes()), window=DEMO_WINDOW)
    assert exact_tokens(app.session) == exact_tokens(whole)


async def test_pin_the_text_selected_in_the_detail_pane(demo_session):
    from textual.geometry import Offset
    from textual.selection import Selection

    app = demo_app(at=203)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 203)
        app.query_one(WindowList).select(5)  # message 6: a tool result about PO-0101
        await pilot.pause()
        body = app.query_one("#detail-body", Static)
        # Selections count lines of the text itself (not as wrapped): header, blank line, the block.
        line = body.content.plain.split("\n").index(next(t for t in body.content.plain.split("\n") if t.startswith("工具返回")))
        app.screen.selections = {body: Selection(Offset(0, line), Offset(40, line))}
        await pilot.pause()
        selected = app.screen.get_selected_text()
        assert selected and selected.startswith("工具返回")
        await pilot.press("p")
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if any(c.source == "saved" for c in app.constraints):
                break
        assert [c.text for c in app.constraints if c.source == "saved"] == [selected.strip()]


async def test_redaction_masks_log_text_on_screen_and_in_exports(tmp_path):
    app = demo_app(at=389, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 389)
        window_list = app.query_one(WindowList)
        email = next(i for i, b in enumerate(app.view.window.blocks) if b.block.tool_name == "send_email")
        window_list.select(email)
        await pilot.pause()
        detail = app.query_one("#detail-body", Static)
        assert "13800138000" in detail.content.plain
        await pilot.press("r")
        await pilot.pause()
        assert "13800138000" not in detail.content.plain and "[REDACTED:phone]" in detail.content.plain
        assert "13800138000" not in "".join(row.preview for row in window_list.rows)
        assert "[redacted]" in plain(app.query_one("#header", Static))
        await pilot.press("e")
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if app.last_export:
                break
    for path in app.last_export:
        assert "13800138000" not in path.read_text()


async def test_a_corrupt_pins_file_is_ignored_with_a_notice_and_rewritten(tmp_path):
    from ctxtop.context.rules.pin_store import pins_path

    log = tmp_path / "session.jsonl"
    log.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    store = pins_path(log)
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(b"[[pin]\ntext = \xff broken")
    app = CtxtopApp(str(log), at=1)
    notes = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 1)
        assert any("saved pins ignored" in n for n in notes)
        await pilot.press("p")
        for _ in range(WAIT_STEPS):
            await pilot.pause(0.02)
            if any(c.source == "saved" for c in app.constraints):
                break
    assert len(load_session_pins(log)[0].texts) == 1


async def test_a_huge_block_is_shown_capped_until_show_all(tmp_path):
    from ctxtop.tui.widgets.detail import MAX_CHARS

    huge = "x" * (MAX_CHARS * 3)
    log = tmp_path / "huge.jsonl"
    log.write_text(json.dumps({"type": "user", "sessionId": "s", "uuid": "1", "message": {"role": "user", "content": huge}}) + "\n")
    app = CtxtopApp(str(log))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 1)
        detail = app.query_one(Detail)
        body = app.query_one("#detail-body", Static)
        assert body.content.plain.count("x") == MAX_CHARS and "a: show all" in body.content.plain
        detail.focus()
        await pilot.press("a")
        await pilot.pause()
        assert body.content.plain.count("x") == MAX_CHARS * 3


async def test_a_big_log_paints_the_window_after_its_last_compaction_first(monkeypatch):
    from ctxtop.tui.messages import FirstPaint

    monkeypatch.setattr("ctxtop.context.window.tail_first.TAIL_FIRST_BYTES", 0)
    seen = []
    app = demo_app()
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await settle(pilot, app, 390)
        first = [m for m in seen if isinstance(m, FirstPaint)]
        assert len(first) == 1
        assert first[0].snapshot["window"]["categories"] == app.view.snapshot["window"]["categories"]
        # Its messages are numbered from the last compaction: the header names no number the rest of the screen
        # (the alerts' banner, once the history is indexed) would contradict.
        painted = first[0].snapshot["at"]["message"]
        assert painted < app.view.at
        header = app._header(replace(app.state, view=None, first_paint=first[0].snapshot)).plain
        assert "latest message" in header and f"message {painted}" not in header


def test_an_unreadable_log_is_one_line_after_the_screen_closes(tmp_path):
    """In a real 80-column terminal: Textual's exit message was wrapped at the terminal's width."""
    import fcntl
    import pty
    import re
    import struct
    import subprocess
    import sys
    import termios

    bad = tmp_path / "nul.jsonl"
    bad.write_bytes(b"\0" * 200)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "ctxtop", str(bad)], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        output += chunk
    assert proc.wait(timeout=60) == 2
    os.close(master)
    text = re.sub(r"\x1b(\[[0-9;?<>=$]*[A-Za-z~]|\][^\x07]*\x07|[=>])", "", output.decode("utf-8", "replace"))
    [line] = [line for line in text.replace("\r", "").split("\n") if "ctxtop: error:" in line]
    assert line.strip().endswith("or name one with --log-format)") and len(line.strip()) > 80


async def test_the_breakdown_shows_an_eight_digit_estimate_whole(demo_session):
    """A window estimated past ten million tokens (a huge tool result) keeps every digit on screen."""
    from ctxtop.tui.widgets.breakdown import Breakdown

    snapshot = build_snapshot(demo_session, 203)
    snapshot["window"]["categories"]["tool_result"].update(tokens=11_172_775, estimated=True)
    app = app_holding(Breakdown)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(Breakdown).show(snapshot)
        await pilot.pause()
        screen = app.export_screenshot()
        assert "≈11,172,775" in screen


async def test_the_breakdown_names_a_summarization_calls_unlogged_part_for_what_it_mostly_is(demo_session):
    """In a compaction sub-agent's log, the inferred part is mostly the conversation sent to be summarized."""
    from ctxtop.tui.widgets.breakdown import Breakdown

    snapshot = build_snapshot(demo_session, 203)
    app = app_holding(Breakdown)
    async with app.run_test(size=SIZE) as pilot:
        breakdown = app.query_one(Breakdown)
        snapshot["window"]["categories"]["inferred_system_tools"]["summarized_conversation"] = True
        breakdown.show(snapshot)  # (its rows added, then put in order: by the names shown)
        await pilot.pause()
        table = breakdown.query_one(DataTable)
        assert table.get_cell("inferred_system_tools", "category").plain == "■ summarized conv.+sys"
        snapshot["window"]["categories"]["inferred_system_tools"]["summarized_conversation"] = False
        breakdown.show(snapshot)  # (the same rows, another session's snapshot: the name follows)
        await pilot.pause()
        assert table.get_cell("inferred_system_tools", "category").plain == "■ inferred sys+tools"


async def test_g_before_the_log_holds_a_message_says_so(tmp_path):
    """`g 5` on a log still to be written said "the session has 1 to 0"."""
    log = tmp_path / "empty.jsonl"
    log.touch()
    app = CtxtopApp(str(log))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        await pilot.press("g", "5", "enter")
        assert await until(pilot, lambda: bool(app._notifications))
        message = list(app._notifications)[-1].message
        assert message == "no message 5: the session holds none yet" and "1 to 0" not in message


async def test_a_change_that_comes_before_the_screen_is_up_is_drawn_once_it_is(tmp_path):
    """The loader's first change ("waiting for … to be written") could come before the screen was mounted: it
    was dropped, and the header said "loading live.jsonl…" for as long as the log stayed unwritten."""
    from pathlib import Path

    import ctxtop.tui.app as ctxtop_app
    from ctxtop.tui.widgets.fitted import Fitted

    class EarlyLoader(CtxtopApp):
        CSS_PATH = str(Path(ctxtop_app.__file__).with_name("app.tcss"))

        def on_mount(self) -> None:
            self._change(waiting=True)  # as a quick loader thread's first change came: before the screen was up
            super().on_mount()

    log = tmp_path / "live.jsonl"
    app = EarlyLoader(str(log))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        assert app.state.waiting
        assert "waiting for live.jsonl to be written" in plain(app.query_one("#header", Fitted))


def test_the_exports_of_two_samples_of_one_log_have_names_of_their_own(tmp_path):
    from ctxtop.tui.export import export_stem

    log = tmp_path / "two.json"
    log.write_text("{}")
    named = tmp_path / "odd#2.json"
    named.write_text("{}")
    assert export_stem(str(log)) == "two"
    assert export_stem(f"{log}#2") == "two-sample2" != export_stem(f"{log}#1") == "two-sample1"
    assert export_stem(str(named)) == "odd_2"  # a file named with a "#" is taken as it is
    assert export_stem(None) == "session"


async def test_the_timeline_marks_an_implicit_compaction_as_the_audit_lists_it():
    app = CtxtopApp(str(DATA / "gemini_model_switch.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 10)
        assert await until(pilot, lambda: app.state.audited)
        points = app.query_one(Timeline).points
        assert [c.event.message for c in app.audit.compactions] == [10]
        assert [p.message for p in points if p.compaction] == [10]


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)])
async def test_the_window_title_never_cuts_a_figure_short(size):
    # At 80 columns the title read "message 103 · 163 blocks · 'git push': 1 / 7…": the match count cut, which reads
    # as 1 of 7, 75 or 700; a strategy's "→ 5,2…" as another number of tokens.
    app = demo_app(at=203)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, 203)
        await pilot.press("slash", *"PO-0103", "enter")
        assert await until(pilot, lambda: app.search is not None and app.search_index == 0)
        await pilot.pause()
        found = len(app.search.matches)
        for strategies in range(4):
            title = plain(app.query_one("#window-title", Static))
            assert not re.search(r"\d…", title), title
            assert not re.search(r"[·(]\s*…$", title), title  # a part cut to its separator and "…" says nothing
            assert f"1 / {found}" in title, title  # where the user stands in the search: kept over the query's words
            await pilot.press("s")
            await pilot.pause(0.1)


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)])
async def test_the_prompts_say_whole_how_to_close_them(size):
    # The search prompt's placeholder ("…; Esc: close)") was cropped at the input's edge at 80 columns, and the
    # go-to one at 60: how to get out of the prompt was the part lost, and the footer shows no Esc.
    from rich.cells import cell_len
    from textual.widgets import Input

    app = demo_app(at=203)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, 203)
        for key in ("slash", "g"):
            await pilot.press(key)
            await pilot.pause()
            prompt = app.query_one("#prompt", Input)
            assert "Esc" in prompt.placeholder and cell_len(prompt.placeholder) < prompt.content_region.width, (
                prompt.placeholder, prompt.content_region.width)
            await pilot.press("escape")
            await pilot.pause()


@pytest.mark.parametrize("at", [205, 390])
async def test_the_banner_never_cuts_a_figure_short(at):
    # The banner was one line cut at the terminal's edge: "lost at 204 → broken at 3…" reads as broken at 3, "(from
    # message 3…" as another message; at 60 columns it ended on a bare "  · …".
    app = demo_app(at=at)
    async with app.run_test(size=(120, 24)) as pilot:
        await settle(pilot, app, at)
        banner = app.query_one("#banner", Static)
        for width in range(50, 121, 3):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            line = plain(banner)
            assert "lost or weakened" in line, line
            assert not re.search(r"\d…", line), (width, line)
            assert not re.search(r"[·(]\s*…$", line), (width, line)
