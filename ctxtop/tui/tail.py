"""Noticing that a log changed: watchdog on its folder, or polling.

Watching the folder (not the file) keeps events across atomic replaces, editors'
renames and log rotation. Only what a session can change is watched: the log's
folder itself, not what is below it (a folder with thousands of subfolders
would overflow inotify's queue, and cost a watch each), and, recursively, the
session's own ``<session>/`` folder of sub-agent transcripts (Claude Code),
from when it appears. The handler runs in watchdog's thread and only calls the
given ``notify(path)`` with the path that changed, which must be thread-safe
(the TUI posts a message; ``ctxtop watch`` collects paths and sets an event).
Reading the file is the follower's job.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import EVENT_TYPE_CLOSED_NO_WRITE, EVENT_TYPE_OPENED, FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserverVFS

from ctxtop.tui.discover import is_subagent_transcript

# watchdog logs its own trouble ("Inotify queue overflowed", under a burst of files) as warnings, which
# Python prints on stderr when no handler is set: a hundred lines amid watch's output. Following does not
# depend on them (the idle check looks again), so they go nowhere.
logging.getLogger("watchdog").addHandler(logging.NullHandler())
logging.getLogger("watchdog").propagate = False

# The front ends also look without an event now and then: a deleted file, a folder made again, or a filesystem
# that drops events.
IDLE_CHECK_SECONDS = 1.0

# Events that change nothing: reading a file sends them (inotify), ctxtop reading the log included.
_READS = frozenset({EVENT_TYPE_OPENED, EVENT_TYPE_CLOSED_NO_WRITE})


class _LogEvents(FileSystemEventHandler):
    """Passes on events for the log itself and for its sub-agent transcripts (Claude Code); starts
    watching the session's own folder when it appears."""

    def __init__(self, target: Path, notify: Callable[[Path], object], observer: BaseObserver) -> None:
        self.target = target
        self.companions = target.with_suffix("")  # <session>/subagents/...
        self.notify = notify
        self.observer = observer
        self._companions_watched = False
        self._lock = threading.Lock()

    def watch_companions(self) -> None:
        """Watch ``<session>/`` recursively, once, if it exists (it may appear after the log)."""
        with self._lock:
            if self._companions_watched or not self.companions.is_dir():
                return
            self._companions_watched = True
        self.observer.schedule(self, str(self.companions), recursive=True)

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _READS:
            return  # a file opened or closed unchanged (ctxtop's own reads of the log among them)
        for raw in (event.src_path, getattr(event, "dest_path", "") or ""):
            if not raw:
                continue
            path = Path(os.fsdecode(raw))
            if path == self.companions:
                self.watch_companions()
            if path == self.target or self.companions in path.parents or path == self.companions or (
                path.name.startswith("agent-") and path.parent == self.target.parent
            ):
                self.notify(path)


def polling_observer(seconds: float) -> BaseObserver:
    """An observer that polls every ``seconds``, and walks no link to a folder (inotify's follows none either):
    watchdog's own polling follows them, and a session's ``subagents`` linked to / had it walk the whole disk at
    every poll (a link to .. inside, without end)."""
    return PollingObserverVFS(stat_without_folder_links, os.scandir, polling_interval=seconds)


def stat_without_folder_links(path: str) -> os.stat_result:
    """``os.stat`` of ``path``, but a link to a folder as the link itself (``os.lstat``): not a folder to walk into."""
    info = os.lstat(path)
    if not stat.S_ISLNK(info.st_mode):
        return info
    followed = os.stat(path)
    return info if stat.S_ISDIR(followed.st_mode) else followed


def watch_log(path: str | Path, notify: Callable[[Path], object], *, poll_seconds: float | None = None) -> BaseObserver:
    """Start watching ``path``; ``notify(changed path)`` is called (from another thread) on every change.
    Stop it when done."""
    target = Path(path).resolve()
    observer: BaseObserver = polling_observer(poll_seconds) if poll_seconds else Observer()
    handler = _LogEvents(target, notify, observer)
    observer.schedule(handler, str(target.parent), recursive=False)
    handler.watch_companions()  # after the folder's watch: a <session>/ made in between is seen by it
    observer.daemon = True
    observer.start()
    return observer


class LogWatch:
    """``watch_log``'s watch, renewed when the log's folder is no longer the folder watched: moved aside or removed,
    and made again (an agent's session folder made anew). inotify watches a folder, not its name: the old watch
    would report nothing the agent writes in the new one. The front ends call ``renew_if_replaced`` at their idle
    check (a stat of the folder)."""

    def __init__(self, path: str | Path, notify: Callable[[Path], object], *, poll_seconds: float | None = None) -> None:
        self.path = Path(path).resolve()
        self._notify = notify
        self._poll_seconds = poll_seconds
        self._folder = _identity(self.path.parent)  # (taken first: a folder replaced meanwhile is renewed at the next check)
        self.observer = watch_log(self.path, notify, poll_seconds=poll_seconds)

    def renew_if_replaced(self) -> bool:
        """Watch the log's folder again if it is another folder now; whether it was."""
        folder = _identity(self.path.parent)
        if folder is None or folder == self._folder:
            return False  # (gone: the follower waits for it, and the next check finds the new one)
        self.observer.stop()
        self._folder = folder
        self.observer = watch_log(self.path, self._notify, poll_seconds=self._poll_seconds)
        return True

    def stop(self) -> None:
        self.observer.stop()


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(folder)
    except OSError:
        return None
    return info.st_dev, info.st_ino


class _NewSessions(FileSystemEventHandler):
    def __init__(self, suffixes: tuple[str, ...], notify: Callable[[Path], object]) -> None:
        self.suffixes = suffixes
        self.notify = notify

    def on_created(self, event: FileSystemEvent) -> None:
        self._maybe(event.src_path, event.is_directory)

    def on_moved(self, event: FileSystemEvent) -> None:
        self._maybe(getattr(event, "dest_path", "") or "", event.is_directory)

    def _maybe(self, path: str | bytes, is_directory: bool) -> None:
        created = Path(path.decode() if isinstance(path, bytes) else path)
        if not is_directory and created.suffix in self.suffixes and not is_subagent_transcript(created):
            self.notify(created)


def watch_new_sessions(directories: list[Path], notify: Callable[[Path], object], suffixes: tuple[str, ...],
                       *, poll_seconds: float | None = None) -> BaseObserver:
    """Call ``notify(path)`` (from another thread) when a session file appears under any of ``directories``."""
    observer: BaseObserver = polling_observer(poll_seconds) if poll_seconds else Observer()
    handler = _NewSessions(suffixes, notify)
    for directory in directories:
        observer.schedule(handler, str(directory), recursive=True)
    observer.daemon = True
    observer.start()
    return observer
