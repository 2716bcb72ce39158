"""A window limit ctxtop falls back on (no --window, none in the log, a model it does not know) is a
guess, and every front end says so; a limit known from the model name or the log is shown as is."""

from __future__ import annotations

import pytest

from ctxtop.context.tracker import Tracker
from ctxtop.tui.watch import _text, status
from ctxtop.tui.widgets.header import header_text

from ..conftest import SHARED_FIXTURES

GEMMA = SHARED_FIXTURES / "inspect-ai" / "log_read_sample.eval"  # gemma3: no limit in the log, none known
CLAUDE = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def shown(path, window=None) -> tuple[str, str, dict]:
    tracker = Tracker.open(str(path), window=window)
    snapshot = tracker.snapshot()
    header = header_text(snapshot, available=snapshot["at"]["messages"], mode="PAUSED").plain
    record = status(tracker, None)
    return header, _text(record), record


@pytest.mark.skipif(not GEMMA.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_a_fallen_back_limit_is_shown_as_a_guess():
    header, line, record = shown(GEMMA)
    assert record["limit"] == 200_000 and record["limit_source"] == "default"
    assert "/ ≈200,000 tokens" in header
    assert "/ ≈200,000 " in line


@pytest.mark.skipif(not GEMMA.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_a_limit_given_with_window_is_not_a_guess():
    header, line, record = shown(GEMMA, window=8192)
    assert record["limit_source"] == "--window"
    assert "/ 8,192 tokens" in header and "≈8,192" not in header + line


@pytest.mark.skipif(not CLAUDE.exists(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_a_limit_known_from_the_model_is_not_a_guess():
    header, line, record = shown(CLAUDE)
    assert record["limit_source"] == "model"
    assert "/ 200,000 tokens" in header and "≈200,000" not in header + line
