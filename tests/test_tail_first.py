"""The first paint of a big log: the window after the last compaction equals what the full read finds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ctxtop.context.window.session import Session
from ctxtop.context.window.tail_first import tail_session
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from .conftest import SHARED_FIXTURES as SHARED

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from generate import generate  # noqa: E402


def categories(window):
    return {name: (t.tokens, t.blocks) for name, t in window.categories().items()}


def test_the_demo_tail_window_equals_the_full_window():
    tail = tail_session(demo_path(), window=DEMO_WINDOW, min_bytes=0)
    full = Session.open(demo_path(), window=DEMO_WINDOW)
    assert tail is not None and tail.message_count < full.message_count
    assert categories(tail.window_at(None)) == categories(full.window_at(None))
    assert tail.reported_at(None) == full.reported_at(None)


def test_generated_sessions_in_both_formats(tmp_path):
    for format in ("claude-code", "codex"):
        path = tmp_path / f"{format}.jsonl"
        generate(path, format, 3, seed=5)
        tail = tail_session(path, min_bytes=0)
        full = Session.open(path)
        assert tail is not None, format
        assert categories(tail.window_at(None)) == categories(full.window_at(None)), format


def test_small_logs_and_logs_without_compaction_take_the_full_open(tmp_path):
    assert tail_session(demo_path(), window=DEMO_WINDOW) is None  # small: not worth it
    no_compaction = tmp_path / "plain.jsonl"
    no_compaction.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:150]))
    assert tail_session(no_compaction, min_bytes=0) is None


def test_the_first_paint_infers_the_system_and_tools_as_the_full_open_does_and_reads_only_the_head(monkeypatch):
    from ctxtop.context.output.snapshot import INFERRED, build_snapshot
    from ctxtop.context.window import tail_first
    from ctxtop.context.window.session import Session

    log = SHARED / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    if not log.is_file():
        pytest.skip(f"shared fixtures not found at {SHARED}")
    full = build_snapshot(Session.open(log))["window"]["categories"][INFERRED]
    quick = tail_first.tail_session(log, min_bytes=0)
    assert quick is not None and quick.message_count < 345  # only the part after the last compaction
    assert build_snapshot(quick)["window"]["categories"][INFERRED]["inferred_from"]["tokens"] == full["inferred_from"]["tokens"] == 25_877
    # With a head limit that stops inside a line, nothing from the head (and no endless read): the
    # first paint infers from the first call it has, the one after the compaction.
    monkeypatch.setattr(tail_first, "HEAD_LIMIT_BYTES", 1000)
    tail = tail_first.tail_session(log, min_bytes=0)
    fallback = tail.window_at(None).harness
    first_call = next(e for e in tail.entries if e.usage is not None)
    assert fallback.message == first_call.index
    assert fallback.tokens == first_call.usage.prompt_tokens - tail.window_at(first_call.index - 1).estimated_tokens != 25_877
