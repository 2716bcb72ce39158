"""Texts released once counted and read back from the log: the lazy text must equal the eager one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ctxtop import parsers
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.constraints import WindowText
from ctxtop.context.rules.facts import normalize
from ctxtop.context.store import lazy_text
from ctxtop.context.window import session as session_module
from ctxtop.context.window.session import Session
from ctxtop.parsers.jsonl import DecodeError, loads
from ctxtop.parsers.model import ASSISTANT, REASONING, USER
from ctxtop.tui.demo import demo_path

from ..conftest import SHARED_FIXTURES, exact_tokens

DATA = Path(__file__).parents[1] / "data"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from generate import generate  # noqa: E402 (bench/ is put on the path just above)

LINE_FORMATS = ("claude-code", "codex", "gemini-cli")


def jsonl_logs() -> list[Path]:
    """Every JSON Lines log we have: our own fixtures, the demo, and the shared real ones."""
    logs = [DATA / "claude_compact.jsonl", DATA / "claude_microcompact.jsonl", DATA / "codex_local_compaction.jsonl",
            DATA / "codex_remote_compaction.jsonl", DATA / "gemini_chat.jsonl", demo_path()]
    if SHARED_FIXTURES.is_dir():
        logs += sorted(p for p in SHARED_FIXTURES.glob("*/*.jsonl"))
    return logs


def eager(path: Path) -> Session:
    """The log parsed whole from its bytes, with the sub-agent files beside it, as ``Session.open`` finds them."""
    session = Session(parsers.parse(path.read_bytes()), path=str(path))
    session.look_for_subagents()
    return session


@pytest.fixture
def release_everything(monkeypatch):
    monkeypatch.setattr(lazy_text, "MIN_RELEASE_CHARS", 0)
    monkeypatch.setattr(lazy_text, "HELD_CATEGORIES", frozenset())


@pytest.mark.parametrize("path", jsonl_logs(), ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_every_released_text_reads_back_equal_to_the_eager_text(path, release_everything, monkeypatch):
    # Small chunks, so responses spread over lines are also split across chunks.
    monkeypatch.setattr(session_module, "STREAM_CHUNK_BYTES", 4096)
    whole = eager(path)
    if whole.format not in LINE_FORMATS:
        pytest.skip(f"{whole.format} is not JSON Lines: read whole, nothing released")
    lazy = Session.open(path)
    assert lazy.texts is not None
    settled = [b for e in lazy.entries[:-1] for b in e.blocks]
    if settled:  # (a log of sub-agent records only has no entries of its own)
        assert any(b.released for b in settled), "nothing was released: the test would prove nothing"
    assert [[(b.category, b.tool_id, b.text) for b in e.blocks] for e in lazy.entries] == \
           [[(b.category, b.tool_id, b.text) for b in e.blocks] for e in whole.entries]
    assert exact_tokens(lazy) == exact_tokens(whole)
    assert lazy.window_at(None).categories() == whole.window_at(None).categories()


def test_a_snapshot_is_the_same_with_texts_released(release_everything):
    lazy, whole = Session.open(demo_path()), eager(demo_path())
    assert build_snapshot(lazy) == build_snapshot(whole)


def test_big_texts_are_released_and_small_ones_kept(tmp_path):
    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 1.0)
    session = Session.open(log)
    settled = [b for e in session.entries[:-1] for b in e.blocks]
    assert all(b.released == (b.length >= lazy_text.MIN_RELEASE_CHARS and not b.opaque and b.category not in lazy_text.HELD_CATEGORIES)
               for b in settled)
    assert sum(b.released for b in settled) > 100
    # What people and the model wrote stays: a pass over the rules' sources reads nothing back from the log.
    assert any(b.category == USER and b.length >= lazy_text.MIN_RELEASE_CHARS for b in settled)
    before = session.texts.lines_read
    assert [b.text for b in settled if b.category in (USER, ASSISTANT, REASONING)]
    assert session.texts.lines_read == before


def test_a_log_rewritten_under_a_released_text_reads_as_missing_not_as_other_text(tmp_path, release_everything):
    log = tmp_path / "session.jsonl"
    log.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    session = Session.open(log)
    block = next(b for e in session.entries for b in e.blocks if b.released and b.length > 5)
    original = eager(DATA / "claude_compact.jsonl")
    log.write_text("\n".join(json.dumps({"type": "user", "uuid": f"x{i}", "message": {"role": "user", "content": "other " * i}})
                             for i in range(200)) + "\n")
    session.texts._lines.clear()  # a fresh read, as after the line cache let it go
    assert block.text == lazy_text.MISSING
    os.remove(log)
    session.texts._lines.clear()
    assert block.text == lazy_text.MISSING  # the file gone: still no exception
    assert original.entries  # the eager session is unaffected


def test_the_line_cache_stays_within_its_bound(tmp_path, monkeypatch, release_everything):
    monkeypatch.setattr(lazy_text, "LINE_CACHE_BYTES", 10_000)
    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 0.5)
    session = Session.open(log)
    texts = [b.text for e in session.entries for b in e.blocks]
    assert texts == [b.text for e in eager(log).entries for b in e.blocks]
    longest = max(size for _, size in session.texts._lines.values())
    assert session.texts._cached_bytes <= max(10_000, longest) + longest
    assert session.texts.lines_read > len(session.texts._lines)


@pytest.mark.parametrize("run_bytes", [1 << 20, 300])  # 300: most lines longer than a run, read on their own
def test_texts_read_back_together_equal_the_eager_ones_with_the_file_opened_once(tmp_path, monkeypatch, release_everything, run_bytes):
    monkeypatch.setattr(lazy_text, "RUN_BYTES", run_bytes)
    monkeypatch.setattr(lazy_text, "READ_STEP", 64)
    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 0.3)
    session = Session.open(log)
    blocks = [b for e in session.entries for b in e.blocks]
    released = {b.source for b in blocks if b.released}
    assert len(released) > 50
    session.texts._lines.clear()
    opened = []
    open_regular = lazy_text.open_regular
    monkeypatch.setattr(lazy_text, "open_regular", lambda path: opened.append(path) or open_regular(path))
    before = session.texts.lines_read
    assert lazy_text.read_texts(blocks) == [b.text for e in eager(log).entries for b in e.blocks]
    assert len(opened) == 1 and session.texts.lines_read - before == len(released)  # each line once
    os.remove(log)
    session.texts._lines.clear()
    assert set(lazy_text.read_texts([b for b in blocks if b.released])) == {lazy_text.MISSING}  # gone: no exception


def test_the_audit_reads_a_window_back_in_runs_of_lines(tmp_path, monkeypatch, release_everything):
    log = tmp_path / "session.jsonl"
    generate(log, "claude-code", 0.3)
    session = Session.open(log)
    window = session.window_at(None)
    session.texts._lines.clear()
    reads = []
    pread = os.pread
    monkeypatch.setattr(lazy_text.os, "pread", lambda fd, size, offset: reads.append(size) or pread(fd, size, offset))
    assert WindowText(window).blocks == [(item.entry.index, text, normalize(text)) for item, text in
                                         ((item, item.text) for item in window.blocks) if text]
    lines = len({item.block.source for item in window.blocks if item.block.released})
    assert lines > 20 and len(reads) < lines / 4


def test_documents_are_read_whole_and_release_nothing():
    session = Session.open(DATA / "openai_messages.json")
    assert session.texts is None
    assert not any(b.released for e in session.entries for b in e.blocks)


def follow_in_pieces(log: Path, lines: list[bytes], first: int, step: int):
    """A follower of ``log`` written with ``lines[:first]``, then polled after each ``step`` more lines."""
    from ctxtop.context.window.follow import LogFollower

    log.write_bytes(b"".join(lines[:first]))
    follower = LogFollower(log)
    for start in range(first, len(lines), step):
        with open(log, "ab") as handle:
            handle.write(b"".join(lines[start : start + step]))
        follower.poll()
    return follower


def test_a_followed_log_releases_and_reads_back_what_is_appended(tmp_path, release_everything):
    follower = follow_in_pieces(tmp_path / "session.jsonl", demo_path().read_bytes().splitlines(keepends=True), 50, 37)
    lazy, whole = follower.session, eager(demo_path())
    assert sum(b.released for e in lazy.entries for b in e.blocks) > 100
    assert [[b.text for b in e.blocks] for e in lazy.entries] == [[b.text for b in e.blocks] for e in whole.entries]
    assert exact_tokens(lazy) == exact_tokens(whole)


def _described(blocks: list) -> list[tuple]:
    return [(b.category, b.tool_id, b.tool_name, b.is_error, b.opaque, b.image_size, b.text) for b in blocks]


def _fresh_parse(parser_type, line: bytes) -> list:
    """The blocks a new parser fed only ``line`` gives: what a released text was read back from before."""
    parser = parser_type()
    parser.feed(line)
    return [b for entry in parser.entries for b in entry.blocks]


EDGE_RECORDS = {
    "claude-code": [
        {"type": "user", "uuid": "a", "isSidechain": True, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}},
        {"type": "user", "uuid": "b", "isSidechain": True, "agentId": "a1", "message": {"role": "user", "content": "side"}},
        {"type": "user", "uuid": "c", "isSidechain": "yes", "message": {"role": "user", "content": "typed"}},
        {"type": "user", "uuid": "d", "isMeta": True, "message": {"role": "user", "content": [{"type": "text", "text": "meta"}]}},
        {"type": "user", "uuid": "e", "isCompactSummary": True, "message": {"role": "user", "content": "summary"}},
        {"type": "user", "uuid": "f", "message": {"role": "user", "content": []}},
        {"type": "user", "uuid": "g", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "one"}, {"type": "image", "source": {}},
                                                                    {"type": "text", "text": "two"}]},
            {"type": "tool_result", "tool_use_id": "t", "is_error": True, "content": {"odd": 1}}, "bare"]}},
        {"type": "user", "uuid": "h", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7, "content": None}]}},
        {"type": "user", "uuid": "i", "message": "not an object"},
        {"type": "assistant", "uuid": "j", "message": {"id": "m", "model": "claude", "usage": {"input_tokens": 5, "output_tokens": -1},
                                                       "content": [{"type": "thinking", "thinking": ""}, {"type": "text", "text": "hi"},
                                                                   {"type": "tool_use", "id": "t", "name": "Edit", "input": {"a": [1]}}]}},
        {"type": "assistant", "uuid": "k", "message": {"model": "<synthetic>", "usage": "odd", "content": "said"}},
        {"type": "assistant", "uuid": "l", "message": {"model": 4, "usage": {"cache_creation": 7, "output_tokens_details": []}, "content": []}},
        {"type": "assistant", "uuid": "m", "isSidechain": True, "message": {"content": [{"type": "tool_use", "id": "t", "input": "x"}]}},
        {"type": "attachment", "uuid": "n", "message": {"content": "not a message record"}},
    ],
    "codex": [
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c", "output": "plain"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c", "output": {"content": "inner", "success": True}}},
        {"type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": 3, "output": [
            {"type": "input_text", "text": "seen"}, {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}},
        {"type": "response_item", "payload": {"type": "local_shell_call_output", "output": None}},
        {"type": "event_msg", "payload": {"type": "function_call_output", "output": "not an item"}},
    ],
}


@pytest.mark.parametrize("path", jsonl_logs(), ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_blocks_made_from_a_record_alone_are_those_a_parse_of_its_line_makes(path):
    parser_type = Session.open(path).texts
    if parser_type is None:
        pytest.skip("not JSON Lines")
    parser_type = parser_type.parser_type
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    lines += [json.dumps(record).encode() for record in EDGE_RECORDS.get(parser_type.name, [])]
    made = 0
    for line in lines:
        assert _described(parser_type.blocks_of_line(line, 0)) == _described(_fresh_parse(parser_type, line)), line[:200]
        try:
            record = loads(line)
        except DecodeError:
            continue
        made += isinstance(record, dict) and parser_type.blocks_alone(record) is not None
    if parser_type.name in EDGE_RECORDS and any(b'"tool_result"' in line or b"_output" in line for line in lines):
        assert made, "no record's blocks were made alone: the test would prove nothing"
