"""Noticing that a log changed: watchdog on its parent directory, or polling.

Watching the directory (not the file) keeps events across atomic replaces and
editors' renames. The handler runs in watchdog's thread and only calls the
given ``notify`` function, which must be thread-safe (the TUI posts a message;
``ctxtop watch`` sets an event). Reading the file is the follower's job.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver


class _LogEvents(FileSystemEventHandler):
    """Passes on events for the log itself and for its sub-agent transcripts (Claude Code)."""

    def __init__(self, target: Path, notify: Callable[[], None]) -> None:
        self.target = str(target)
        self.companions = str(target.with_suffix("")) + os.sep  # <session>/subagents/...
        self.parent = target.parent
        self.notify = notify

    def on_any_event(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, getattr(event, "dest_path", "") or ""):
            if not raw:
                continue
            path = str(Path(os.fsdecode(raw)).resolve())
            name = os.path.basename(path)
            if path == self.target or path.startswith(self.companions) or (
                name.startswith("agent-") and os.path.dirname(path) == str(self.parent)
            ):
                self.notify()
                return


def watch_log(path: str | Path, notify: Callable[[], None], *, poll_seconds: float | None = None) -> BaseObserver:
    """Start watching ``path``; ``notify()`` is called (from another thread) on every change. Stop it when done."""
    target = Path(path).resolve()
    observer: BaseObserver = PollingObserver(timeout=poll_seconds) if poll_seconds else Observer()
    # Recursive, so sub-agent transcripts in <session>/subagents/ are seen too.
    observer.schedule(_LogEvents(target, notify), str(target.parent), recursive=True)
    observer.daemon = True
    observer.start()
    return observer


class _NewSessions(FileSystemEventHandler):
    def __init__(self, suffixes: tuple[str, ...], notify: Callable[[Path], None]) -> None:
        self.suffixes = suffixes
        self.notify = notify

    def on_created(self, event: FileSystemEvent) -> None:
        self._maybe(event.src_path, event.is_directory)

    def on_moved(self, event: FileSystemEvent) -> None:
        self._maybe(getattr(event, "dest_path", "") or "", event.is_directory)

    def _maybe(self, path: str | bytes, is_directory: bool) -> None:
        path = Path(path.decode() if isinstance(path, bytes) else path)
        if not is_directory and path.suffix in self.suffixes:
            self.notify(path)


def watch_new_sessions(directories: list[Path], notify: Callable[[Path], None], suffixes: tuple[str, ...],
                       *, poll_seconds: float | None = None) -> BaseObserver:
    """Call ``notify(path)`` (from another thread) when a session file appears under any of ``directories``."""
    observer: BaseObserver = PollingObserver(timeout=poll_seconds) if poll_seconds else Observer()
    handler = _NewSessions(suffixes, notify)
    for directory in directories:
        observer.schedule(handler, str(directory), recursive=True)
    observer.daemon = True
    observer.start()
    return observer
