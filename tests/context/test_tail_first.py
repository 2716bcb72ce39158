"""The first paint of a big log: the window after the last compaction equals what the full read finds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ctxtop.context.window.session import Session
from ctxtop.context.window.tail_first import tail_session
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from ..conftest import SHARED_FIXTURES as SHARED

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

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


def _with_a_big_tool_output(path: Path, chars: int) -> None:
    """Append a tool call whose result is ``chars`` characters of a server log (unlike the generated tool output)."""
    import json

    common = {"sessionId": "bench", "isSidechain": False, "userType": "external", "cwd": "/srv", "version": "2.0.42",
              "timestamp": "2026-12-03T12:00:00.000Z"}
    line = "2026-12-03T10:00:{:02d}.{:03d}Z worker-{} GET /api/v2/orders/{} 200 {}ms trace=0x{:08x}\n"
    text = "".join(line.format(n % 60, n % 1000, n % 17, 4000 + n, n % 97, n * 2654435761 % 2**32) for n in range(chars // 80))
    call = {**common, "type": "assistant", "uuid": "big-a", "parentUuid": None,
            "message": {"id": "msg_big", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "tool_use", "id": "toolu_big", "name": "Bash", "input": {"command": "cat server.log"}}],
                        "usage": {"input_tokens": 10, "cache_read_input_tokens": 150_000, "output_tokens": 20}}}
    result = {**common, "type": "user", "uuid": "big-r", "parentUuid": "big-a",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_big", "content": text}]}}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(call) + "\n" + json.dumps(result) + "\n")


def test_a_big_tail_is_painted_by_estimates_that_say_so_and_the_exact_window_follows(tmp_path, monkeypatch):
    from ctxtop.context.output.snapshot import build_snapshot
    from ctxtop.context.window import tail_first

    path = tmp_path / "session.jsonl"
    generate(path, "claude-code", 3, seed=5)
    _with_a_big_tool_output(path, 600_000)
    monkeypatch.setattr(tail_first, "EXACT_TAIL_BYTES", 0)  # (8 MB in use: this tail is smaller)
    quick = tail_first.tail_session(path, min_bytes=0)
    assert quick is not None
    painted = quick.window_at(None, exact=False)
    snapshot = build_snapshot(quick, None, window=painted)["window"]
    monkeypatch.undo()
    exact = tail_first.tail_session(path, min_bytes=0)  # (after: the counts it makes are cached for the next)
    assert exact is not None
    assert snapshot["counts_estimated"] and all(row.get("estimated") for row in snapshot["categories"].values())
    truth = exact.window_at(None)
    assert not exact.window_rough(truth)
    # The big output is estimated from pieces of itself: within 2 % of its count (its category's ratio, learnt
    # on the generated tool output, would be far off), and the window with it.
    assert abs(painted.estimated_tokens - truth.estimated_tokens) <= 0.02 * truth.estimated_tokens
    assert painted.totals["tool_result"].tokens != truth.totals["tool_result"].tokens  # (an estimate indeed)
    shown = build_snapshot(quick, None)["window"]  # the window as a view or an export asks for it: exact
    assert not shown["counts_estimated"] and shown["estimated_tokens"] == truth.estimated_tokens
    assert not any(row.get("estimated") for name, row in shown["categories"].items() if name in ("tool_result", "user"))


def test_watch_and_the_header_mark_an_estimated_first_paint(tmp_path, monkeypatch):
    from ctxtop.context.output.snapshot import build_snapshot
    from ctxtop.context.window import tail_first
    from ctxtop.tui.watch import _text, status_of
    from ctxtop.tui.widgets.header import header_text

    path = tmp_path / "session.jsonl"
    generate(path, "claude-code", 3, seed=5)
    _with_a_big_tool_output(path, 600_000)
    monkeypatch.setattr(tail_first, "EXACT_TAIL_BYTES", 0)
    quick = tail_first.tail_session(path, min_bytes=0)
    assert quick is not None
    record = status_of(quick, quick.window_at(None, exact=False), None, from_tail=True)
    assert record["counts_estimated"] is True and " tool_result ≈" in _text(record) and "estimated ≈" in _text(record)
    header = header_text(build_snapshot(quick, None, window=quick.window_at(None, exact=False)), available=1, mode="")
    assert "est. ≈" in header.plain
    assert "est. ≈" not in header_text(build_snapshot(quick, None), available=1, mode="").plain
