"""SVG snapshots of the main screen (pytest-textual-snapshot); update with `pytest --snapshot-update`."""

from __future__ import annotations

from textual.widgets import TabbedContent

from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from ..conftest import workers_done
from .test_app import settle


def demo_at(message: int) -> CtxtopApp:
    return CtxtopApp(str(demo_path()), window=DEMO_WINDOW, at=message, title="demo")


def show(message: int, *keys: str, tab: str | None = None):
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, message)
        if tab:
            pilot.app.query_one(TabbedContent).active = tab
        for key in keys:
            await pilot.press(key)
        await workers_done(pilot.app)
        await pilot.pause()

    return run_before


class TestMainScreen:
    """The demo just before its first compaction: 203 messages, ≈4.8k tokens, three rules in the window."""

    def test_wide(self, snap_compare):
        assert snap_compare(demo_at(203), terminal_size=(120, 40), run_before=show(203))

    def test_small_terminal(self, snap_compare):
        # 80×24: the timeline gives way, the window list and panes share the width.
        assert snap_compare(demo_at(203), terminal_size=(80, 24), run_before=show(203))

    def test_big_terminal(self, snap_compare):
        # 200×60: a taller chart with its scale, the whole breakdown, a long window list.
        assert snap_compare(demo_at(203), terminal_size=(200, 60), run_before=show(203))

    def test_with_a_strategy_marked(self, snap_compare):
        # s, s, s: sliding_window, drop_oldest, then clear_tool_results marks the old tool results ⌀.
        assert snap_compare(demo_at(203), terminal_size=(120, 40), run_before=show(203, "s", "s", "s", tab="tab-strategies"))


class TestLossAlert:
    """Right after the first compaction: the budget rule is paraphrased, the other two are lost."""

    def test_alerts_after_the_compaction(self, snap_compare):
        assert snap_compare(demo_at(205), terminal_size=(120, 40), run_before=show(205, tab="tab-constraints"))

    def test_the_compaction_view(self, snap_compare):
        # ] from 203: the first compaction, before and after, its rules, the violations it led to.
        assert snap_compare(demo_at(203), terminal_size=(120, 40), run_before=show(203, "right_square_bracket"))

    def test_the_compaction_view_at_80x24(self, snap_compare):
        assert snap_compare(demo_at(203), terminal_size=(80, 24), run_before=show(203, "right_square_bracket"))
