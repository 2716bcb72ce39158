"""The packed entry store must read exactly like the list of entries it stands for."""

from __future__ import annotations

import json
import threading
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop import parsers
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.store import entry_store, lazy_text
from ctxtop.context.store.entry_codec import encode_entry
from ctxtop.context.store.entry_store import EntryStore
from ctxtop.context.window.follow import LogFollower
from ctxtop.context.window.session import Session
from ctxtop.parsers.gemini import REPEAT_LOOKBACK
from ctxtop.parsers.model import Block, Compaction, Entry, Usage
from ctxtop.tui.demo import demo_path

from ..conftest import exact_tokens
from .test_lazy_text import eager, follow_in_pieces, generate, jsonl_logs


def make_entry(index: int) -> Entry:
    """A varied entry: plain text, a tool call with its result, usage, a compaction now and then."""
    blocks = [Block("user" if index % 2 else "assistant", f"message {index} [bold]x[/]")]
    if index % 3 == 0:
        blocks += [Block("tool_call", '{"cmd": "ls"}', tool_name="bash", tool_id=f"call_{index}"),
                   Block("tool_result", "a\nb", tool_id=f"call_{index}", is_error=index % 2 == 0)]
    if index % 5 == 0:
        blocks.append(Block("image", image_size=(640, 480)))
    compaction = Compaction("compact_boundary", "auto", 900, 100, preserved_ids=("u1",)) if index % 7 == 0 else None
    return Entry(index, "assistant" if index % 2 == 0 else "user", blocks, offset=index * 100, line=index,
                 timestamp=f"2026-12-03T12:{index % 60:02d}:00Z", model="gpt-5" if index % 2 == 0 else None,
                 usage=Usage(1000 + index, 10, None, 200_000) if index % 4 == 0 else None, uid=f"u{index}", compaction=compaction)


@pytest.mark.parametrize(("frozen_up_to", "expected_frozen"), [(0, 0), (3, 0), (4, 4), (9, 8), (20, 8), (10, 8)])
def test_only_whole_batches_of_settled_entries_are_frozen(small_batches, frozen_up_to, expected_frozen):
    entries = [make_entry(i) for i in range(1, 11)]
    store = EntryStore(entries)
    store.freeze(frozen_up_to)
    # 10 entries: two whole batches of 4 at most, whatever is asked.
    assert store.frozen == expected_frozen
    assert len(store) == 10 and list(store) == entries


def test_reads_like_a_list(small_batches):
    entries = [make_entry(i) for i in range(1, 23)]
    store = EntryStore(entries)
    store.freeze(len(entries))
    assert store.frozen == 20
    cases = [0, 3, 4, 5, 19, 20, 21, -1, -5, -22]
    assert [store[i] for i in cases] == [entries[i] for i in cases]
    for cut in (slice(None), slice(2, 9), slice(-3, None), slice(5, 2), slice(0, 22, 5), slice(18, 40)):
        assert store[cut] == entries[cut]
    for start in range(-24, 25):  # within a batch, across batches, into the held entries, past either end
        for stop in [*range(-24, 25), None]:
            assert store[start:stop] == entries[start:stop]
    assert list(reversed(store)) == entries[::-1]
    assert store == entries and store != entries[:-1]
    for bad in (22, -23):
        with pytest.raises(IndexError):
            store[bad]


def test_an_entry_read_from_a_frozen_batch_is_a_copy_and_changing_it_changes_nothing(small_batches):
    store = EntryStore([make_entry(i) for i in range(1, 13)])
    store.freeze(12)
    store[0].usage = Usage(1)
    for number in range(3):  # push the first batch out of the cache of unpacked ones
        store[number * 4]
    assert store[0].usage is None  # what was packed, not the change to a copy
    store.thaw(0)  # ...unless it is thawed first: then it is held as an object again
    store[0].usage = Usage(1)
    assert store.frozen == 0 and store[0].usage == Usage(1)


def test_the_tail_can_be_dropped_from_inside_a_frozen_batch(small_batches):
    entries = [make_entry(i) for i in range(1, 14)]
    store = EntryStore(entries)
    store.freeze(13)
    del store[6:]
    assert store == entries[:6] and store.frozen == 4
    store.append(make_entry(7))
    assert store[-1] == make_entry(7) and len(store) == 7
    with pytest.raises(TypeError):
        del store[2]


operations = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(1, 3)),
    st.tuples(st.just("freeze"), st.integers(0, 40)),
    st.tuples(st.just("thaw"), st.integers(0, 40)),
    st.tuples(st.just("rewind"), st.integers(0, 40)),
    st.tuples(st.just("read"), st.integers(-40, 40)),
), max_size=40)


@settings(max_examples=150, deadline=None)
@given(operations)
def test_any_sequence_of_operations_keeps_it_equal_to_a_list(ops):
    entry_store.BATCH, entry_store.CACHED_BATCHES, entry_store.UNPACKED_ALL_BATCHES = 3, 2, 0  # (restored below: hypothesis runs without fixtures per example)
    try:
        model: list[Entry] = []
        store = EntryStore()
        for op, n in ops:
            if op == "append":
                for _ in range(n):
                    entry = make_entry(len(model) + 1)
                    model.append(entry)
                    store.append(entry)
            elif op == "freeze":
                store.freeze(n)
            elif op == "thaw":
                store.thaw(n)
            elif op == "rewind":
                del model[n:]
                del store[n:]
            elif -len(model) <= n < len(model):
                assert store[n] == model[n]
            assert len(store) == len(model) and store.frozen <= len(model)
        assert list(store) == model and store[:] == model
    finally:
        entry_store.BATCH, entry_store.CACHED_BATCHES, entry_store.UNPACKED_ALL_BATCHES = 256, 32, 256


def test_readers_in_threads_see_the_entries_while_they_are_frozen(small_batches):
    entries = [make_entry(i) for i in range(1, 401)]
    store = EntryStore(entries)
    wrong: list[int] = []

    def reader() -> None:
        for _ in range(3):
            for position in range(0, 400, 7):
                if store[position].index != position + 1:
                    wrong.append(position)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    for stop in range(0, 401, 8):
        store.freeze(stop)
    for thread in threads:
        thread.join()
    assert not wrong and store.frozen == 400 and list(store) == entries


def test_released_texts_read_back_from_unpacked_entries(small_batches, monkeypatch):
    monkeypatch.setattr(lazy_text, "MIN_RELEASE_CHARS", 0)
    monkeypatch.setattr(lazy_text, "HELD_CATEGORIES", frozenset())
    session = Session.open(demo_path())
    store = session.entries
    assert isinstance(store, EntryStore) and store.frozen > len(store) // 2
    whole = eager(demo_path())
    assert any(b.released for e in store for b in e.blocks)
    assert [[b.text for b in e.blocks] for e in store] == [[b.text for b in e.blocks] for e in whole.entries]


def test_a_batch_packed_by_either_deflate_unpacks_with_the_other(monkeypatch):
    # ISA-L's deflate where it has wheels, zlib's elsewhere: a saved index must read back with either.
    isal_zlib = pytest.importorskip("isal.isal_zlib")
    entries = list(Session.open(demo_path()).entries)
    assert entry_store.deflate is isal_zlib  # installed here: the packing under test is ISA-L's
    by_isal = entry_store.packed(entries)
    monkeypatch.setattr(entry_store, "deflate", zlib)
    by_zlib = entry_store.packed(entries)
    assert entry_store.unpacked(by_isal) == entry_store.unpacked(by_zlib)
    monkeypatch.setattr(entry_store, "deflate", isal_zlib)
    assert entry_store.unpacked(by_zlib) == entry_store.unpacked(by_isal) == [encode_entry(e) for e in entries]
    assert len(by_isal) <= len(by_zlib) * 1.05


@pytest.mark.parametrize("path", jsonl_logs(), ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_every_jsonl_log_reads_the_same_with_its_entries_packed(path, small_batches):
    whole = eager(path)
    packed = Session.open(path)
    if packed.texts is None:
        pytest.skip(f"{packed.format} is not JSON Lines: its entries stay a list")
    if len(whole.entries) > 12 + (REPEAT_LOOKBACK if whole.format == "gemini-cli" else 0):
        assert packed.entries.frozen > 0, "nothing was frozen: the test would prove nothing"
    assert packed.entries == whole.entries
    assert exact_tokens(packed) == exact_tokens(whole)
    assert build_snapshot(packed) == build_snapshot(whole)


def test_a_followed_claude_log_merges_responses_into_held_entries_only(tmp_path, small_batches):
    # Claude Code writes one response over several lines; the parser joins them into the entry
    # the first line made, so that entry must still be held, not packed, when the next line comes.
    source = tmp_path / "generated.jsonl"
    generate(source, "claude-code", 0.3)
    follower = follow_in_pieces(tmp_path / "session.jsonl", source.read_bytes().splitlines(keepends=True), 20, 3)
    whole = Session(parsers.parse(source.read_bytes()), path=str(source))
    assert follower.session.entries.frozen > len(whole.entries) // 2
    assert follower.session.entries == whole.entries
    assert exact_tokens(follower.session) == exact_tokens(whole)


def claude_line(kind: str, uuid: str, content: object, message_id: str | None = None) -> bytes:
    message = {"role": kind, "content": content}
    if message_id:
        message.update(id=message_id, model="claude-sonnet-4-5-20250929",
                       usage={"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5})
    record = {"sessionId": "s", "isSidechain": False, "type": kind, "uuid": uuid, "timestamp": "2026-12-03T12:00:00Z", "message": message}
    return json.dumps(record).encode() + b"\n"


def test_a_response_line_that_comes_long_after_its_first_joins_it_even_when_it_was_packed(tmp_path, small_batches):
    # The first line of response msg_A, then many messages, then its last line: the parser joins that
    # into an entry already packed, so it must unpack it for good rather than change a copy.
    lines = [claude_line("user", "u0", "start"),
             claude_line("assistant", "a0", [{"type": "text", "text": "first part"}], "msg_A")]
    lines += [claude_line("user" if i % 2 else "assistant", f"m{i}", f"message {i}", None if i % 2 else f"msg_{i}") for i in range(1, 30)]
    lines.append(claude_line("assistant", "a0b", [{"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "ls"}}], "msg_A"))
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(lines[:-1]))
    follower = LogFollower(log)
    assert follower.session.entries.frozen >= 2 * entry_store.BATCH
    with open(log, "ab") as handle:
        handle.write(lines[-1])
    follower.poll()
    joined = follower.session.entries[1]
    assert [b.category for b in joined.blocks] == ["assistant", "tool_call"]
    whole = Session(parsers.parse(log.read_bytes()), path=str(log))
    assert follower.session.entries == whole.entries
    assert exact_tokens(follower.session) == exact_tokens(whole)


def _counting_decodes(monkeypatch) -> list[int]:
    decoded = [0]
    decode = entry_store.decode_entry

    def counted(item, texts):
        decoded[0] += 1
        return decode(item, texts)

    monkeypatch.setattr(entry_store, "decode_entry", counted)
    return decoded


def test_a_small_session_unpacks_each_batch_once_and_a_big_one_keeps_only_the_recent(monkeypatch):
    monkeypatch.setattr(entry_store, "BATCH", 4)
    monkeypatch.setattr(entry_store, "CACHED_BATCHES", 2)
    monkeypatch.setattr(entry_store, "UNPACKED_ALL_BATCHES", 8)
    decoded = _counting_decodes(monkeypatch)
    entries = [make_entry(i) for i in range(1, 25)]  # six batches: all stay unpacked
    store = EntryStore(entries)
    store.freeze(24)
    assert list(store) == entries and decoded[0] == 0  # frozen, and held as they were: never packed so far
    # A saved index's whole batches are adopted packed, and decoded only when first read, each batch once.
    reloaded = EntryStore()
    for blob in store.packed_batches():
        reloaded.adopt(blob, 4)
    assert decoded[0] == 0 and reloaded.frozen == 24
    assert list(reloaded) == entries and list(reloaded) == entries and reloaded[:] == entries
    assert decoded[0] == 24  # each entry unpacked once, not once per walk
    # Past UNPACKED_ALL_BATCHES, memory wins: only the last CACHED_BATCHES stay unpacked.
    big = EntryStore([make_entry(i) for i in range(1, 41)])
    big.freeze(40)
    assert list(big) and len(big._unpacked) == 2
    # ...and from the start in a store told it will get that big: not all of them until it does.
    bound = EntryStore([make_entry(i) for i in range(1, 25)])
    bound.expect(40)
    bound.freeze(24)
    assert len(bound._unpacked) == 2 and list(bound) == entries


def test_a_log_read_in_parts_tells_its_store_how_many_entries_it_will_hold(tmp_path, monkeypatch):
    from ctxtop.context.window import session as session_module

    path = tmp_path / "rollout.jsonl"
    generate(path, "codex", 2.0)
    monkeypatch.setattr(session_module, "STREAM_CHUNK_BYTES", 1 << 18)
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    told: list[int] = []
    monkeypatch.setattr(EntryStore, "expect", lambda self, entries: told.append(entries))
    session = Session.open(str(path))
    assert len(told) >= 4, "read in one part: nothing to project"
    assert all(0.5 * len(session.entries) <= expected <= 2 * len(session.entries) for expected in told), told
