"""Numbers in fixed-width table cells: whole when they fit, rounded with a unit otherwise, never cut."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.session import Session
from ctxtop.tui.demo import demo_path
from ctxtop.tui.widgets.cells import CELL_PADDING, fitted_count, percent_text, texts_that_fit
from ctxtop.tui.widgets.timeline import short_tokens

from ..conftest import app_holding

SCALES = {"k": 10**3, "M": 10**6, "B": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


@pytest.mark.parametrize(("value", "width", "mark", "shown"), [
    (11_172_775, 12, "≈", "≈11,172,775"),  # fits: every digit
    (11_172_775, 9, "", "11.2M"),  # "11,172,77" would be another number
    (11_172_775, 4, "", "11M"),
    (9_999_999, 9, "", "9,999,999"),
    (10_000, 5, "", "10.0k"),  # a sub-agent's message count in a 5-wide column
    (1_234_567, 9, "≈", "≈1.2M"),
    (999_960, 6, "", "1.0M"),  # not "1000.0k": the next unit says it in fewer characters
    (0, 1, "", "0"),
    (10**16, 5, "", "10.0P"),  # (a log reporting 10^16 tokens: absurd, and still read right)
    (10**21, 5, "", "#####"),  # no form fits: a filled cell, not a wrong number
])
def test_a_count_is_whole_or_rounded_with_its_unit(value, width, mark, shown):
    assert fitted_count(value, width, mark) == shown


@pytest.mark.parametrize(("room", "widths"), [
    (0, []),  # no room after the counts: no text column, rather than one cut at the pane's edge
    (7, []),  # the type's least (6) and its padding do not fit
    (11, [9]),  # the type only, in what there is
    (18, [6, 8]),  # the task keeps its least: the type gives way
    (31, [17, 10]),  # the type whole (17 is its longest), the task in the rest
    (60, [17, 39]),
])
def test_text_columns_take_the_room_the_counts_leave_each_whole_or_left_out(room, widths):
    bounds = [(6, 17), (8, None)]  # the Agents pane's type (as wide as its longest) and task
    assert texts_that_fit(room, bounds) == widths
    assert sum(width + CELL_PADDING for width in widths) <= room


@given(value=st.integers(min_value=0, max_value=10**19), width=st.integers(min_value=1, max_value=16),
       mark=st.sampled_from(["", "≈"]))
def test_a_count_never_overflows_and_never_reads_as_another_number(value, width, mark):
    shown = fitted_count(value, width, mark)
    assert len(shown) <= width
    whole = f"{mark}{value:,}"
    if len(whole) <= width:
        assert shown == whole
        return
    if set(shown) == {"#"}:
        return
    match = re.fullmatch(re.escape(mark) + r"(\d{1,3}(?:\.\d)?)([kMBTPE])", shown)
    assert match, shown
    mantissa, unit = match.groups()
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    # Rounded to its last digit shown: within half of that digit of the true value.
    assert abs(float(mantissa) * SCALES[unit] - value) <= SCALES[unit] * 10**-decimals / 2 + 1e-6 * value


@pytest.fixture(scope="module")
def demo_snapshot():
    session = Session.open(str(demo_path()), window=200_000)
    return build_snapshot(session, 203)


async def test_the_tools_pane_rounds_a_count_too_wide_for_its_column(demo_snapshot):
    from ctxtop.tui.widgets.tools import ToolsTable

    usage = demo_snapshot["tool_usage"]["window"]
    assert usage["tools"], "the demo's window holds tool calls"
    usage["tools"][0].update(tokens=12_345_678, result_tokens=123_456_789, calls=1_000_000)
    app = app_holding(ToolsTable)
    async with app.run_test(size=(120, 20)) as pilot:
        app.query_one(ToolsTable).show(usage)
        await pilot.pause()
        screen = app.export_screenshot()
    assert "12.3M" in screen and "123.5M" in screen and "1.0M" in screen
    assert "12,345,67" not in screen and "123,456,7" not in screen


async def test_an_alert_at_a_six_digit_message_keeps_every_digit():
    """A message number is where Enter jumps: its column grows to hold it rather than round or cut it."""
    from textual.widgets.data_table import ColumnKey

    from ctxtop.tui.widgets.panels import AlertsTable

    demo_alerts = Tracker.open(str(demo_path())).alerts()
    assert demo_alerts, "the demo loses rules at its compaction"
    far = dataclasses.replace(demo_alerts[0], message=123_456)
    app = app_holding(AlertsTable)
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(AlertsTable)
        table.set_alerts([far, *demo_alerts])
        await pilot.pause()
        assert "123456" in app.export_screenshot()
        table.set_alerts(demo_alerts)
        await pilot.pause()
        assert table.columns[ColumnKey("message")].width == 5
        assert str(table.get_row_at(0)[0]) == str(demo_alerts[0].message)


@pytest.mark.parametrize(("tokens", "label"), [
    (8000, "8.0k"), (200_000, "200k"), (1_048_576, "1.0M"), (5 * 10**8, "500M"), (10**9, "1.0B"), (10**15, "1.0P"),
    (2**53 - 1, "9.0P"),  # the largest count a log may report: once "9007199254.7M", past the chart's edge
])
def test_the_timeline_scale_says_any_size_in_a_few_characters(tokens, label):
    assert short_tokens(tokens) == label


def test_an_absurd_share_of_the_window_is_said_as_such():
    assert (percent_text(38.71), percent_text(999.94), percent_text(499_999_999_999.3)) == ("38.7%", "999.9%", "≥1000%")



@pytest.mark.parametrize("width", [60, 80, 120])
async def test_an_mcp_servers_row_is_cut_with_an_ellipsis_to_the_tool_column(width):
    # At 80 columns the Codex fixture's server row read "MCP cloud-associa": cut at the column's edge without a mark.
    from rich.cells import cell_len

    from ctxtop.tui.widgets.tools import ToolsTable

    usage = {"tools": [{"tool": "mcp__cloud-associates__execute_workflow", "mcp_server": "cloud-associates", "calls": 3,
                        "call_tokens": 81, "results": 3, "result_tokens": 51, "tokens": 132}],
             "mcp_servers": [{"server": "cloud-associates", "tools": 2, "calls": 4, "call_tokens": 111, "results": 4,
                              "result_tokens": 70, "tokens": 181}]}
    app = app_holding(ToolsTable)
    async with app.run_test(size=(width // 2, 20)) as pilot:  # the pane takes about half the screen
        table = app.query_one(ToolsTable)
        table.show(usage)
        await pilot.pause()
        label = str(table.get_row_at(1)[0])
        assert cell_len(label) <= table.name_width, label
        assert label.startswith("MCP clou") and (label.endswith("…") or label.endswith("(2 tools)")), label


async def test_no_tool_calls_is_said_whole_in_a_narrow_pane():
    # At 60 columns the Tools pane of a window without tool calls read "no tool calls i", cut at the column's edge.
    from rich.cells import cell_len

    from ctxtop.tui.widgets.tools import ToolsTable

    app = app_holding(ToolsTable)
    async with app.run_test(size=(30, 20)) as pilot:
        table = app.query_one(ToolsTable)
        table.show({"tools": [], "mcp_servers": []})
        await pilot.pause()
        label = str(table.get_row_at(0)[0])
        assert cell_len(label) <= table.name_width and label in {"no tool calls in the window", "no tool calls"}, label
