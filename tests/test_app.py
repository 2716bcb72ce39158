"""The TUI on real data: it loads in a worker, shows the breakdown, moves between messages."""

from rich.text import Text
from textual.widgets import DataTable, Static

from context.session import Session
from context.snapshot import build_snapshot
from tui.app import CtxtopApp
from tui.demo import DEMO_WINDOW, demo_path

from .conftest import DATA


async def wait_for_snapshot(pilot, app, message):
    for _ in range(100):
        await pilot.pause(0.02)
        if app.shown_message == message:
            return
    raise AssertionError(f"the breakdown never showed message {message} (showing {app.shown_message})")


def cell(app, row, column):
    return str(app.query_one(DataTable).get_cell(row, column))


async def test_breakdown_shows_known_numbers_and_moves():
    app = CtxtopApp(str(demo_path()), window=DEMO_WINDOW, at=203)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_snapshot(pilot, app, 203)
        expected = build_snapshot(Session.open(demo_path(), window=DEMO_WINDOW), 203)["window"]["categories"]
        assert cell(app, "tool_result", "tokens") == f"{expected['tool_result']['tokens']:,}"
        await pilot.press("right")
        await wait_for_snapshot(pilot, app, 204)
        assert cell(app, "tool_result", "tokens") == "0"  # the compaction emptied the window
        await pilot.press("left", "left")
        await wait_for_snapshot(pilot, app, 202)
        await pilot.press("end")
        await wait_for_snapshot(pilot, app, 390)


async def test_log_text_is_never_markup(tmp_path):
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(
        '{"type":"user","sessionId":"s","uuid":"1","message":{"role":"user","content":"[bold]x[/] \\u001b]52;c;SGVsbG8=\\u0007 <|endoftext|>"},'
        '"cwd":"/[red]evil[/]"}\n'
        '{"type":"assistant","sessionId":"s","uuid":"2","message":{"id":"m","role":"assistant","model":"[/]\\u001b[2J",'
        '"content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":9,"output_tokens":1}}}\n'
    )
    app = CtxtopApp(str(hostile))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_snapshot(pilot, app, 2)
        header = app.query_one("#header", Static).render()
        plain = header.plain if isinstance(header, Text) else str(header)
        assert "[/]" in plain and "\x1b" not in plain


async def test_unreadable_session_exits_with_code_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nothing here\n")
    app = CtxtopApp(str(bad))
    async with app.run_test() as pilot:
        await pilot.pause(0.3)
    assert app.return_code == 2
