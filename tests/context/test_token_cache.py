"""The persistent token-count cache: same counts, fewer encodes, survives corruption and concurrent writers."""

from __future__ import annotations

import sqlite3
import threading

from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.session import Session
from ctxtop.context.window.tokens import TokenCounter, content_key
from ctxtop.tui.demo import DEMO_WINDOW, demo_path


def test_a_second_open_counts_the_same_without_tokenizing(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXTOP_CACHE_DIR", str(tmp_path))
    first = Session.open(demo_path(), window=DEMO_WINDOW)
    second = Session.open(demo_path(), window=DEMO_WINDOW)
    assert first.accounting.tokens == second.accounting.tokens
    long_texts = {b.text for e in first.entries for b in e.blocks if len(b.text) > 64}
    assert first.counter.encoded >= len(long_texts) > 0
    # Only short texts (cheaper to count than to look up) are tokenized again.
    assert second.counter.encoded <= first.counter.encoded - len(long_texts)


def test_the_cache_keeps_counts_per_encoding(tmp_path):
    store = TokenCache("cl100k_base", tmp_path / "tokens.sqlite")
    store.put_many({b"k" * 16: 7})
    assert store.get_many([b"k" * 16]) == {b"k" * 16: 7}
    assert TokenCache("o200k_base", tmp_path / "tokens.sqlite").get_many([b"k" * 16]) == {}


def test_a_corrupt_cache_is_moved_aside_and_rebuilt(tmp_path):
    path = tmp_path / "tokens.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    store = TokenCache("cl100k_base", path)
    assert store.warning and "rebuilt" in store.warning
    assert any(p.name.startswith("tokens.sqlite.corrupt-") for p in tmp_path.iterdir())
    counter = TokenCounter(store=store)
    text = "a long enough text to be keyed by its digest, " * 3
    assert counter.count_all([text, "short"]) == [counter.count(text), counter.count("short")]
    assert counter.count(text) > 0
    counter.persist()
    assert store.get_many([content_key(text)]) == {content_key(text): counter.count(text)}


def test_concurrent_writers_do_not_lose_or_mix_counts(tmp_path):
    path = tmp_path / "tokens.sqlite"
    errors = []

    def writer(offset: int) -> None:
        try:
            store = TokenCache("cl100k_base", path)
            for n in range(50):
                store.put_many({f"{offset}-{n}".encode().ljust(16, b"."): offset + n})
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(1000 * i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    store = TokenCache("cl100k_base", path)
    keys = [f"{1000 * i}-{n}".encode().ljust(16, b".") for i in range(4) for n in range(50)]
    found = store.get_many(keys)
    assert len(found) == 200 and all(found[k] == int(k.split(b"-")[0]) + int(k.split(b"-")[1].rstrip(b".")) for k in keys)


def test_pruning_bounds_the_cache(tmp_path):
    store = TokenCache("cl100k_base", tmp_path / "tokens.sqlite")
    store.put_many({bytes([n]) * 16: n for n in range(100)})
    store.prune(max_rows=40)
    assert len(store.get_many([bytes([n]) * 16 for n in range(100)])) == 40


def test_a_cache_locked_by_another_process_is_waited_for_not_moved_aside(tmp_path):
    # Two ctxtops opening a new cache at once: the second finds it locked, which is not damage.
    path = tmp_path / "tokens.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("create table t (x)")
    holder.execute("begin immediate")  # SQLite answers "locked" at once to a switch to WAL, without waiting
    release = threading.Timer(0.3, holder.rollback)
    release.start()
    try:
        store = TokenCache("cl100k_base", path)
    finally:
        release.join()
        holder.close()
    store.put_many({b"k".ljust(16, b"."): 7})
    assert store.warning is None
    assert sorted(p.name for p in tmp_path.iterdir() if "corrupt" in p.name) == []
    assert TokenCache("cl100k_base", path).get_many([b"k".ljust(16, b".")]) == {b"k".ljust(16, b"."): 7}


def test_counts_keyed_by_another_scheme_are_dropped_once(tmp_path):
    # The keys changed from BLAKE2b to XXH3-128 digests: the old counts could never be found again, and stayed,
    # up to the cache's bound, before any new one was kept.
    path = tmp_path / "tokens.sqlite"
    TokenCache("cl100k_base", path).put_many({b"o" * 16: 7})
    with sqlite3.connect(path) as old:
        old.execute("pragma user_version = 1")
    store = TokenCache("cl100k_base", path)
    assert store.get_many([b"o" * 16]) == {}
    store.put_many({b"n" * 16: 9})
    assert TokenCache("cl100k_base", path).get_many([b"n" * 16]) == {b"n" * 16: 9}  # (dropped once, not at each open)


def test_a_relative_xdg_base_is_ignored_as_the_xdg_spec_says(tmp_path, monkeypatch):
    """XDG_CACHE_HOME=cache (or XDG_STATE_HOME=state) would put ctxtop's caches and pins in the current folder, which
    is often the log's: the spec calls a relative value invalid, to be ignored, so the defaults under $HOME apply."""
    from ctxtop.context.rules.pin_store import state_dir
    from ctxtop.context.store.token_cache import cache_dir

    monkeypatch.delenv("CTXTOP_CACHE_DIR")
    monkeypatch.delenv("CTXTOP_STATE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    for relative in ("cache", "./cache", ""):
        monkeypatch.setenv("XDG_CACHE_HOME", relative)
        monkeypatch.setenv("XDG_STATE_HOME", relative)
        assert cache_dir() == tmp_path / ".cache" / "ctxtop"
        assert state_dir() == tmp_path / ".local" / "state" / "ctxtop" / "pins"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    assert cache_dir() == tmp_path / "xdg-cache" / "ctxtop"
    assert state_dir() == tmp_path / "xdg-state" / "ctxtop" / "pins"
