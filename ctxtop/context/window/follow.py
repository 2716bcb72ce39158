"""Following a log that is still being written: only the appended bytes are parsed and counted.

``LogFollower.poll`` reads from the last offset to the last complete newline
(a torn last line waits for its newline), re-reads the file from the start when
it was truncated, replaced or rewritten in place, waits for a file emptied or
renamed away (log rotation) to be written again, and keeps the window at the latest message and
the per-message timeline current by replaying only the new entries. It touches
no UI: the TUI and ``ctxtop watch`` call it from their own threads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ctxtop.context.store.source import SourceError, read_appended, split_sample, tree_signature
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.timeline import TimelineView
from ctxtop.parsers.base import LineParser, UnknownFormat


@dataclass(slots=True)
class Update:
    messages: int  # messages in the session now
    new: int  # messages added since the last poll (all of them after a reset)
    reset: str | None = None  # why the log was read again from the start
    compaction: bool = False  # a compaction marker arrived with the new messages
    subagents: bool = False  # a sub-agent transcript beside the log appeared or grew
    reread: bool = False  # the session was read again whole: whatever was known of its entries is stale


# A log renamed away (rotation) is usually followed at once by a new file of the same name:
# it is waited for this long before the log counts as gone.
ROTATION_GRACE_SECONDS = 5.0
# What was read is recognized by this many bytes at its start and at its end: a rewrite in place
# that keeps the size changes them (a change confined to the middle is not seen).
FINGERPRINT_BYTES = 4096


class LogFollower:
    """A session kept current with its growing log; every method is safe to call from any one thread at a time.

    ``lock`` must be held by anyone reading the session while a poll may run.
    """

    def __init__(self, path: str | os.PathLike, *, format: str | None = None, encoding: str = "cl100k_base",
                 window: int | None = None, progress: Callable[[str, float], None] | None = None) -> None:
        self.path = Path(path)
        self.file = Path(split_sample(path)[0])  # LOG#N names one sample of LOG: the file is LOG
        self.format, self.encoding, self.window_override = format, encoding, window
        self.lock = threading.RLock()
        self.grace_seconds = ROTATION_GRACE_SECONDS
        self.missing_since: float | None = None  # when the file was first found gone (waiting for a new one)
        self.session: Session  # set by _open (which, on a reopen, reads the one it replaces)
        self._open(progress)

    @property
    def waiting_for_file(self) -> bool:
        """The file is gone and a new one of the same name is waited for: poll again in a while."""
        return self.missing_since is not None

    def _open(self, progress: Callable[[str, float], None] | None = None) -> None:
        info = os.stat(self.file)
        if info.st_size == 0 and hasattr(self, "session") and not self.file.is_dir():
            # Emptied (truncated, or rotated to a new empty file) after it was followed: the session
            # starts again, empty, in the format it had, and is read afresh once it is written again.
            self.session = Session.empty(self.session, self.path)
            self.emptied = True
        else:
            self.session = Session.open(self.path, format=self.format, encoding=self.encoding, window=self.window_override,
                                        live=True, progress=progress)
            self.emptied = False
            info = os.stat(self.file)
        self.identity = (info.st_dev, info.st_ino)
        self.modified = info.st_mtime_ns
        # Formats that are rewritten whole (folders, JSON documents, databases) are re-read when they change.
        self.signature = None if isinstance(self.session.parser, LineParser) else self._signature()
        self.offset = self.session.parser.resume_offset
        self.line = getattr(self.session.parser, "resume_line", 1)
        self.fingerprint = self._fingerprint()
        self.points: TimelineView
        self._latest: Window
        self._advance()

    # --- polling ---------------------------------------------------------------------------------
    def poll(self, changed: Iterable[str | os.PathLike] | None = None) -> Update | None:
        """Take in what was appended since the last poll; None when nothing was.

        ``changed``: the paths a file watcher saw change since the last poll, so that only those of
        the sub-agent transcripts beside the log are looked at (None: all of them are).
        Raises SourceError when the file is gone (past the grace period) or cannot be read any more.
        """
        with self.lock:
            try:
                info = os.stat(self.file)
            except FileNotFoundError:
                return self._missing()
            except OSError as exc:
                raise SourceError(f"{self.path}: {exc.strerror or exc}") from None
            self.missing_since = None
            parser = self.session.parser
            if not isinstance(parser, LineParser):  # rewritten whole: its signature is what tells a change
                return self._poll_whole()
            if (info.st_dev, info.st_ino) != self.identity:
                return self._reset("the file was replaced; read again from the start")
            if info.st_size < self.offset:
                return self._reset("the file was truncated; read again from the start")
            if self.emptied:
                # Written again after it was emptied: read it as any log is opened (not line by line).
                return self._reset("the file was written again; read from the start") if info.st_size else None
            if info.st_mtime_ns != self.modified:
                self.modified = info.st_mtime_ns
                if self._fingerprint() != self.fingerprint:
                    return self._reset("the file was rewritten in place; read again from the start")
            subagents = self.session.subagents is not None and self.session.subagents.refresh(changed)
            if info.st_size == self.offset:
                return Update(len(self.session.entries), 0, subagents=True) if subagents else None
            # Read the appended bytes with plain reads, not a mapping: a file truncated under a
            # mapping kills the process (SIGBUS); under a read it only comes back short.
            data = read_appended(self.file, self.offset, info.st_size)
            before = len(self.session.entries)
            self.offset = parser.feed(data, 0, self.line, final=False, base=self.offset)
            self.line = parser.resume_line
            self.fingerprint = self._fingerprint()
            if getattr(parser, "history_rewritten", False):
                return self._reset("the agent rewrote its history; read again from the start")
            entries = self.session.entries
            # Entries the new lines changed (a response spread over lines, usage reported later) are
            # marked by the parser itself, and counted again from there.
            self.session.count_new()
            self._advance()
            if self.session.subagents is not None and self.session.subagents.type_from_new_tasks():
                subagents = True  # (a Task call among the new entries names a sub-agent read before it)
            new_entries = entries[before:]
            return Update(len(entries), len(new_entries), compaction=any(e.compaction for e in new_entries),
                          subagents=subagents)

    def _missing(self) -> Update | None:
        """The file is gone: wait ``grace_seconds`` for a new one of the same name (rename rotation)."""
        now = time.monotonic()
        if self.missing_since is None:
            self.missing_since = now
        if now - self.missing_since >= self.grace_seconds:
            raise SourceError(f"{self.path}: the file disappeared")
        return None

    def _fingerprint(self) -> tuple[bytes, bytes]:
        """The first and the last bytes of what was read (up to ``offset``), to notice a rewrite in place."""
        if self.signature is not None or not self.offset:
            return b"", b""
        try:
            head = read_appended(self.file, 0, min(self.offset, FINGERPRINT_BYTES))
            tail = read_appended(self.file, max(0, self.offset - FINGERPRINT_BYTES), self.offset)
        except SourceError:
            return b"", b""  # gone meanwhile: the next poll says so
        return head, tail

    def _signature(self) -> tuple:
        if self.file.is_dir():
            return tree_signature(self.file)
        stamps: list[tuple[int, int, int] | None] = []
        for companion in (self.file, Path(f"{self.file}-wal")):  # SQLite writes go to the WAL first
            try:
                info = os.stat(companion)
                stamps.append((info.st_size, info.st_mtime_ns, info.st_ino))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def _poll_whole(self) -> Update | None:
        """A session stored whole changed (a file added or rewritten): read it again; such sessions are small."""
        signature = self._signature()
        if signature == self.signature:
            return None
        if self._emptied_document():
            # Rewritten in place (truncated, then written) and caught in between: nothing is half a document
            # too, and the session read before stands until the document is whole again.
            self.signature = signature
            return None
        before = len(self.session.entries)
        try:
            self._open()
        except UnknownFormat:
            if self.file.is_dir():
                raise
            # A JSON document caught half rewritten (written in place: truncated, then written): the session
            # read before stands until the document is whole again, as a JSON Lines log waits for a line's end.
            self.signature = signature
            return None
        entries = len(self.session.entries)
        return Update(entries, max(0, entries - before), compaction=any(e.compaction for e in self.session.entries[before:]),
                      reread=True)

    def _emptied_document(self) -> bool:
        """The followed file (not a folder) is found empty."""
        if self.file.is_dir():
            return False
        try:
            return os.stat(self.file).st_size == 0
        except OSError:
            return False  # gone meanwhile: the open says so

    def _reset(self, reason: str) -> Update:
        self._open()
        return Update(len(self.session.entries), len(self.session.entries), reset=reason, reread=True)

    def _advance(self) -> None:
        """The timeline and the latest window: the session replays what can no longer change as it
        counts it; only the entries after that are replayed here, on a copy."""
        self.points = self.session.timeline()
        self._latest = self.session.window_at(None)

    def replay_again(self) -> None:
        """The session's counts changed (its history refined): replay it again, and take its timeline and
        latest window anew."""
        with self.lock:
            self.session.replay_again()
            self._advance()

    # --- reading -----------------------------------------------------------------------------------
    def window_at(self, message: int) -> Window:
        """The window after ``message``; the latest one was made at the last poll."""
        with self.lock:
            if message >= len(self.session.entries):
                return self._latest
            return self.session.window_at(message)
