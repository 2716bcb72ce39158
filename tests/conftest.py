from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ctxtop.context.window.session import Session
from ctxtop.context.window.tokens import TokenCounter

DATA = Path(__file__).parent / "data"
# The real public logs (with their provenance in SOURCES.md): beside the clone, or where the variable says.
SHARED_FIXTURES = Path(os.environ.get("CTXTOP_SHARED_FIXTURES") or Path(__file__).resolve().parents[2] / "shared" / "fixtures").resolve()
BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_module(name: str) -> ModuleType:
    """The script ``bench/<name>.py`` imported as a module (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return TokenCounter()


@pytest.fixture
def open_data(counter):
    """Open a session from tests/data by file name."""

    def opener(name: str, **kwargs) -> Session:
        session = Session.open(DATA / name, **kwargs)
        return session

    return opener


@pytest.fixture(scope="session", autouse=True)
def private_state_for_shared_fixtures(tmp_path_factory):
    """The same for the fixtures made once per module or session, which are made before any test's
    ``private_state_dir``: the demo snapshot of the forensics tests was audited in the user's cache, and a later
    run of other code took that audit back (a test passed without the fix it tests)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CTXTOP_STATE_DIR", str(tmp_path_factory.mktemp("shared-state")))
        patch.setenv("CTXTOP_CACHE_DIR", str(tmp_path_factory.mktemp("shared-cache")))
        patch.delenv("CTXTOP_NO_CACHE", raising=False)
        yield


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory, monkeypatch):
    """Pins and token counts made in tests go to temporary directories (never the user's, nor a test's tmp_path),
    and the caches on, whatever the shell running the tests says (a test that needs them off says so itself: with
    CTXTOP_NO_CACHE=1 left in the environment, the tests of reuse failed)."""
    state, cache = tmp_path_factory.mktemp("state"), tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("CTXTOP_STATE_DIR", str(state))
    monkeypatch.setenv("CTXTOP_CACHE_DIR", str(cache))
    monkeypatch.delenv("CTXTOP_NO_CACHE", raising=False)
    return state


@pytest.fixture
def small_batches(monkeypatch):
    """Entries packed a few at a time, so that even a small log is mostly frozen (and unpacked often)."""
    from ctxtop.context.store import entry_store
    from ctxtop.parsers import claude_code

    monkeypatch.setattr(entry_store, "BATCH", 4)
    monkeypatch.setattr(entry_store, "CACHED_BATCHES", 2)
    monkeypatch.setattr(entry_store, "UNPACKED_ALL_BATCHES", 0)
    # Responses' later lines then often reach back into packed entries, which must be unpacked to join them.
    monkeypatch.setattr(claude_code, "MERGE_HORIZON", 2)


@pytest.fixture
def forks(monkeypatch):
    """The pids of the forks ``second_core`` makes (by the real fork). Earlier tests leave idle threads
    behind (a tokenizer pool, Textual's), which would keep it from forking at all: here it forks anyway
    (what the forks run touches none of them); ``can_fork`` itself is tried on its own."""
    import os

    from ctxtop.context import second_core

    made = []
    real = os.fork

    def counted():
        pid = real()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    monkeypatch.setattr(second_core, "can_fork", lambda: True)
    return made


def reaped(pid: int) -> bool:
    """Whether the child ``pid`` has exited and been waited for (no longer a child of this process)."""
    import os

    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def exact_tokens(session) -> list[list[int]]:
    """Every entry's block tokens, with the history's estimates (``window.estimate``) first made exact:
    what comparing two readings of a log compares."""
    accounting, entries = session.accounting, session.entries
    accounting.make_exact([(i, j, block) for i, entry in enumerate(entries[: accounting.counted]) for j, block in enumerate(entry.blocks)])
    return accounting.tokens


async def workers_done(app) -> None:
    """Wait until the app's workers are done. An exclusive worker that a newer one replaced ends
    cancelled, and Textual's wait raises for it: that is the app working as meant, so wait again."""
    import asyncio

    from textual.worker import WorkerCancelled

    for _ in range(1500):  # (30 s at the most, as the other waits)
        try:
            await app.workers.wait_for_complete()
            return
        except WorkerCancelled:
            await asyncio.sleep(0.02)  # let the cancelled worker leave the manager
    raise AssertionError("the app's workers kept being cancelled")


def app_holding(widget_type):
    """A bare Textual app whose screen holds one ``widget_type()``: a widget tried alone, on real data."""
    from textual.app import App, ComposeResult

    class Holder(App):
        def compose(self) -> ComposeResult:
            yield widget_type()

    return Holder()


class ResetsOnly:
    """A session as far as its replay resets go (what was final when, ``Session.unchanged_before``)."""

    unchanged_before = Session.unchanged_before

    def __init__(self, replay_resets: list[int]) -> None:
        self.replay_resets = replay_resets
