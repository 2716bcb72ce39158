"""The header's two lines at any width: what does not fit gives way whole."""

from __future__ import annotations

import re

import pytest

from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.window.session import Session
from ctxtop.tui.demo import DEMO_WINDOW, demo_path
from ctxtop.tui.widgets.header import MIN_MODEL_CHARS, MIN_NAME_CHARS, header_text


@pytest.fixture(scope="module")
def snapshot_at_203():
    session = Session.open(demo_path(), window=DEMO_WINDOW)
    return build_snapshot(session, 203), session.message_count


@pytest.mark.parametrize("width", range(24, 130, 3))
def test_the_header_never_cuts_a_figure_short(snapshot_at_203, width):
    # A number cut short ("est. 33,…") reads as another number: a figure that does not fit is left out whole.
    snapshot, messages = snapshot_at_203
    second = header_text(snapshot, available=messages, mode="❚❚ PAUSED", width=width).plain.split("\n")[1]
    assert len(second) <= width
    for label in ("reported", "est."):
        if label in second:
            assert re.search(rf"{re.escape(label)} [≈]?[\d,]+(?:\s|$)", second), second
    if "message" in second:
        assert re.search(r"message \d+ / \d+(?:\s|$)", second), second
    assert "…" not in second or width < len("6,399 / 8,000 tokens")  # only the use itself is ever cut, in a tiny pane


@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("follow", [True, False])
async def test_a_sub_agents_mode_and_the_way_back_stay_whole(width, follow):
    # At 80 columns the header read "● LIVE  sub-agent a881341 (claud…" and at 60 "❚❚ PAUSED (l…": the minimum widths
    # kept for the file name and the model cut the mode, the one part that says what state the user is in and how back.
    from ctxtop.tui.app import CtxtopApp

    from .test_app import settle, until
    from .test_subagents import SESSION, _agents_pane

    if not SESSION.is_file():
        pytest.skip("shared fixtures not found")
    app = CtxtopApp(str(SESSION))
    async with app.run_test(size=(width, 24)) as pilot:
        table = await _agents_pane(pilot, app, SESSION)
        row = next(key.value for key in table.rows if key.value.endswith("agent-a881341.jsonl"))
        table.move_cursor(row=table.get_row_index(row))
        await pilot.press("enter")
        assert await until(pilot, lambda: app.path == row and app.view is not None)
        await settle(pilot, app)
        if not follow:
            await pilot.press("f")
            await settle(pilot, app)
        first = str(app.query_one("#header").render()).split("\n")[0]
        assert ("● LIVE" if follow else "❚❚ PAUSED (live)") in first, first
        assert "sub-agent a881341" in first and first.endswith("· ⌫ back"), first


@pytest.mark.parametrize("width", range(30, 130, 2))
def test_the_name_then_the_model_give_way_to_the_mode(snapshot_at_203, width):
    snapshot, messages = snapshot_at_203
    modes = ["❚❚ PAUSED (live)  sub-agent a881341 (claude-code-guide) · ⌫ back", "❚❚ PAUSED (live)  sub-agent a881341 · ⌫ back"]
    first = header_text(snapshot, available=messages, mode=modes, width=width).plain.split("\n")[0]
    assert len(first) <= width
    if width >= len(modes[1]) + 10:  # room for the shorter mode and a few characters of the name: the mode is whole
        assert first.endswith(modes[0]) or first.endswith(modes[1]), first
    name, *rest = first.split("  ")
    models = [part for part in rest if part.startswith("claude-sonnet")]
    if models and models[0] != "claude-sonnet-4-5-20250929":  # the model is cut only once the name is down to a few characters
        assert len(name) <= MIN_NAME_CHARS and len(models[0]) >= MIN_MODEL_CHARS, first
    if "demo_session.jsonl" not in first and models:  # the name cut while the model shows: the model is whole
        assert models[0] == "claude-sonnet-4-5-20250929" or len(name) <= MIN_NAME_CHARS, first
