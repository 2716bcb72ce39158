"""The saved index of a JSON Lines session: a re-open parses only what was appended, and equals a fresh read."""

from __future__ import annotations

import json
import os

import pytest

from ctxtop import parsers
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.store import lazy_text, session_index
from ctxtop.context.window.follow import LogFollower
from ctxtop.context.window.session import Session
from ctxtop.tui.demo import demo_path

from ..conftest import DATA, exact_tokens
from .test_lazy_text import eager, generate, jsonl_logs


@pytest.fixture(autouse=True)
def index_everything(monkeypatch, small_batches):  # packed batches too: the index saves them as they are
    monkeypatch.setattr(session_index, "INDEX_MIN_BYTES", 0)
    monkeypatch.setattr(lazy_text, "MIN_RELEASE_CHARS", 0)
    monkeypatch.setattr(lazy_text, "HELD_CATEGORIES", frozenset())


def same_as_fresh(session: Session, log) -> None:
    whole = eager(log)
    assert [[(b.category, b.tool_id, b.tool_name, b.text) for b in e.blocks] for e in session.entries] == \
           [[(b.category, b.tool_id, b.tool_name, b.text) for b in e.blocks] for e in whole.entries]
    assert [(e.index, e.role, e.offset, e.line, e.timestamp, e.model, e.usage, e.uid, e.compaction) for e in session.entries] == \
           [(e.index, e.role, e.offset, e.line, e.timestamp, e.model, e.usage, e.uid, e.compaction) for e in whole.entries]
    assert exact_tokens(session) == exact_tokens(whole)
    assert session.parser.diagnostics == whole.parser.diagnostics and session.parser.meta == whole.parser.meta
    assert build_snapshot(session) == build_snapshot(whole)


def window_facts(window) -> tuple:
    return (window.at, window.last_compaction, window.harness, {name: (t.tokens, t.blocks) for name, t in window.totals.items()},
            [(b.entry.index, b.position, b.block.category, b.block.tool_id, b.tokens, b.estimated, b.cleared) for b in window.blocks])


def same_replays(warm: Session, cold: Session) -> None:
    """The replays a warm open took from the index are those a cold read made: the timeline, the
    checkpoints, and the window at every compaction, next to it, and between (as replayed, before any is made exact)."""
    assert warm.history.columns() == cold.history.columns() and warm.final_before() == cold.final_before()
    assert [r.position for r in warm._checkpoints] == [r.position for r in cold._checkpoints]
    assert list(warm.timeline()) == list(cold.timeline())
    n = cold.message_count
    marks = {c.message for c in cold.compactions()}
    for at in sorted({0, 1, n // 3, n // 2, n, *marks, *(m - 1 for m in marks), *(m + 1 for m in marks)} & set(range(n + 1))):
        assert window_facts(warm.window_at(at, exact=False)) == window_facts(cold.window_at(at, exact=False)), at
    assert window_facts(warm.window_at()) == window_facts(cold.window_at())


@pytest.mark.parametrize("log", jsonl_logs(), ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_a_reopened_log_comes_from_its_index_and_equals_a_fresh_read(log, tmp_path):
    copy = tmp_path / log.name
    copy.write_bytes(log.read_bytes())
    first = Session.open(copy)
    if first.texts is None:
        pytest.skip(f"{first.format} is not JSON Lines: no index")
    again = Session.open(copy)
    assert again.from_index == copy.read_bytes().rfind(b"\n") + 1  # to its last complete line
    same_replays(again, first)
    same_as_fresh(again, copy)


@pytest.mark.parametrize("format", ["claude-code", "codex"])
def test_a_warm_open_replays_only_what_was_appended(tmp_path, monkeypatch, format):
    from ctxtop.context.window.replay import Replay

    generated = tmp_path / "generated.jsonl"
    generate(generated, format, 2.2)
    lines = generated.read_bytes().splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(lines[:-40]))
    cold = Session.open(log)
    assert cold.compactions() and cold._checkpoints
    stepped = []
    original = Replay._step
    monkeypatch.setattr(Replay, "_step", lambda self, entry, position: stepped.append(position) or original(self, entry, position))
    warm = Session.open(log)
    assert warm.from_index and not stepped  # nothing replayed: the timeline and the replays come from the index
    same_replays(warm, cold)
    log.write_bytes(b"".join(lines))
    stepped.clear()
    grown = Session.open(log)
    assert stepped and min(stepped) >= cold.final_before() - 1  # from where the saved replay stopped (a response may join)
    monkeypatch.setenv("CTXTOP_CACHE_DIR", str(tmp_path / "another cache"))  # a cold read, the reference
    fresh = Session.open(log)
    assert not fresh.from_index
    same_replays(grown, fresh)


def test_only_the_appended_lines_are_parsed_and_a_response_split_by_the_index_joins(tmp_path, monkeypatch):
    generated = tmp_path / "generated.jsonl"
    generate(generated, "claude-code", 0.3)
    lines = generated.read_bytes().splitlines(keepends=True)
    # Cut inside a response written over two lines (same message id), so the parser's carried state matters.
    ids = [json.loads(line).get("message", {}).get("id") if b'"assistant"' in line else None for line in lines]
    cut = next(i for i in range(1, len(ids)) if ids[i] and ids[i] == ids[i - 1])
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(lines[:cut]))
    Session.open(log)
    log.write_bytes(b"".join(lines))
    fed = []
    original = parsers.base.LineParser.feed
    monkeypatch.setattr(parsers.base.LineParser, "feed", lambda self, data, *a, **k: fed.append(len(data)) or original(self, data, *a, **k))
    again = Session.open(log)
    assert again.from_index == len(b"".join(lines[:cut]))
    assert sum(fed) == len(b"".join(lines[cut:]))
    same_as_fresh(again, log)


@pytest.mark.parametrize("change", ["same-size edit", "truncated", "replaced"])
def test_a_log_changed_before_the_indexed_end_is_read_afresh(tmp_path, change):
    log = tmp_path / "session.jsonl"
    data = demo_path().read_bytes()
    log.write_bytes(data)
    Session.open(log)
    if change == "same-size edit":
        position = data.index(b"budget") if b"budget" in data else data.index(b"user")
        log.write_bytes(data[:position] + bytes([data[position] ^ 0x20]) + data[position + 1 :])
    elif change == "truncated":
        log.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    else:
        replacement = tmp_path / "other.jsonl"
        replacement.write_bytes(data[: len(data) // 3].rsplit(b"\n", 1)[0] + b"\n")
        os.replace(replacement, log)
    again = Session.open(log)
    assert again.from_index == 0
    same_as_fresh(again, log)


@pytest.mark.parametrize("damage", [b"", b"garbage", b"ctxtop-index\n\xff\xff\xff\xff\xff\xff\xff\x7f", "cut"])
def test_a_damaged_index_is_ignored(tmp_path, damage):
    log = tmp_path / "session.jsonl"
    log.write_bytes(demo_path().read_bytes())
    Session.open(log)
    index = session_index.index_path(log, "claude-code", "cl100k_base")
    index.write_bytes(index.read_bytes()[: index.stat().st_size // 2] if damage == "cut" else damage)
    again = Session.open(log)
    assert again.from_index == 0
    same_as_fresh(again, log)


def test_no_index_without_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    log = tmp_path / "session.jsonl"
    log.write_bytes(demo_path().read_bytes())
    Session.open(log)
    assert not session_index.index_path(log, "claude-code", "cl100k_base").exists()
    assert Session.open(log).from_index == 0


def test_following_a_log_opened_from_its_index(tmp_path):
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(lines[:120]))
    Session.open(log)  # leaves the index
    follower = LogFollower(log)
    assert follower.session.from_index
    for start in range(120, len(lines), 50):
        with open(log, "ab") as handle:
            handle.write(b"".join(lines[start : start + 50]))
        follower.poll()
    same_as_fresh(follower.session, log)


def test_only_the_most_recent_indexes_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(session_index, "MAX_INDEXES", 2)
    for n in range(4):
        log = tmp_path / f"s{n}.jsonl"
        log.write_bytes(demo_path().read_bytes())
        Session.open(log)
        os.utime(session_index.index_path(log, "claude-code", "cl100k_base"), (n, n))
    assert len(list(session_index.index_path(log, "claude-code", "cl100k_base").parent.glob("*.idx"))) == 2


def test_a_half_written_last_line_is_never_indexed(tmp_path):
    # Issue 18, item 23: indexed while its last line was half-written, a log lost that message on
    # every later run (and gained a phantom malformed line), in `check` too.
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(lines[:-1]) + lines[-1][:30])
    torn = Session.open(log)  # not live: the torn line is reported as torn, this once
    assert torn.parser.diagnostics.torn_last_line
    log.write_bytes(b"".join(lines))  # the writer finishes the line
    again = Session.open(log)
    assert again.from_index == len(b"".join(lines[:-1]))
    assert again.message_count == eager(log).message_count
    assert again.parser.diagnostics.malformed_lines == 0 and not again.parser.diagnostics.torn_last_line
    same_as_fresh(again, log)


def flip(index, position: int) -> None:
    data = bytearray(index.read_bytes())
    data[position] ^= 0xFF
    index.write_bytes(bytes(data))


def test_every_flipped_byte_of_an_index_is_caught_ignored_rebuilt_and_told(tmp_path, capsys):
    # Issue 18, item 24: random byte flips gave internal errors, or silently wrong totals.
    from ctxtop.tui.cli import main

    log = tmp_path / "session.jsonl"
    log.write_bytes(demo_path().read_bytes())
    Session.open(log)
    index = session_index.index_path(log, "claude-code", "cl100k_base")
    pristine = index.read_bytes()
    size = len(pristine)
    # Spread over the whole file: the header, the packed entries, the counts and carried state, the checksum.
    for position in sorted({len(session_index.MAGIC), *range(len(session_index.MAGIC) + 1, size, max(1, size // 29)), size - 1}):
        index.write_bytes(pristine)
        flip(index, position)
        again = Session.open(log)
        assert again.from_index == 0 and any("damaged" in n for n in again.notices), position
        same_as_fresh(again, log)
        assert Session.open(log).from_index == len(demo_path().read_bytes())  # and usable again
    index.write_bytes(pristine)
    flip(index, size // 2)
    assert main(["export", str(log)]) == 0
    assert capsys.readouterr().err.startswith("ctxtop: note: the saved index of this log was damaged")


def test_what_the_session_derived_is_derived_afresh_when_its_saved_form_does_not_fit(tmp_path, monkeypatch):
    log = tmp_path / "session.jsonl"
    log.write_bytes(demo_path().read_bytes())
    cold = Session.open(log)
    n = cold.message_count
    monkeypatch.setattr(Session, "saved_derived", lambda self: {"timeline": (b"", b"\0" * 8, []), "tools": (), "ahead": None})
    index = session_index.index_path(log, "claude-code", "cl100k_base")
    index.unlink()
    Session.open(log)  # saves an index whose derived part cannot be taken up
    warm = Session.open(log)
    assert warm.from_index
    assert warm.tools.totals(warm.accounting, n) == cold.tools.totals(cold.accounting, n) and len(warm.tools) > 20
    same_replays(warm, cold)


def test_a_rewind_appended_after_the_index_was_saved_is_read_from_it(tmp_path):
    # The parser's memory of each prompt's record is part of what the index carries: without it, a rewind
    # written after the index was saved was not seen.
    lines = (DATA / "claude_rewind.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "rewound.jsonl"
    log.write_bytes(b"".join(lines[:6]))
    Session.open(log)  # leaves the index
    with open(log, "ab") as handle:
        handle.write(b"".join(lines[6:]))
    again = Session.open(log)
    assert again.from_index
    assert [e.uid for e in again.entries] == ["u1", "a1", "b2u", "b2a"]
