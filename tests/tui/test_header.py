"""The header's two lines at any width: what does not fit gives way whole."""

from __future__ import annotations

import re

import pytest

from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.window.session import Session
from ctxtop.tui.demo import DEMO_WINDOW, demo_path
from ctxtop.tui.widgets.header import header_text


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
