"""Following a log that is still being written: only the appended bytes are parsed and counted.

``LogFollower.poll`` reads from the last offset to the last complete newline
(a torn last line waits for its newline), re-reads the file from the start when
it was truncated or replaced, and keeps the window at the latest message and
the per-message timeline current by replaying only the new entries. It touches
no UI: the TUI and ``ctxtop watch`` call it from their own threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ctxtop.parsers.base import LineParser

from ctxtop.context.audit.alerts import Alert
from ctxtop.context.audit.events import IMPLICIT_DROP
from ctxtop.context.audit.run import Audit, run_audit
from ctxtop.context.audit.violations import violations
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.window.session import Session, split_sample
from ctxtop.context.store.source import SourceError, read_appended, tree_signature
from ctxtop.context.window.timeline import TimelineView
from ctxtop.context.window.replay import Window


@dataclass(slots=True)
class Update:
    messages: int  # messages in the session now
    new: int  # messages added since the last poll (all of them after a reset)
    reset: str | None = None  # why the log was read again from the start
    compaction: bool = False  # a compaction arrived with the new messages
    subagents: bool = False  # a sub-agent transcript beside the log appeared or grew
    alerts: list[Alert] = field(default_factory=list)  # alerts that are new with this update


class LogFollower:
    """A session kept current with its growing log; every method is safe to call from any one thread at a time.

    ``lock`` must be held by anyone reading the session while a poll may run.
    """

    def __init__(self, path: str | os.PathLike, *, format: str | None = None, encoding: str = "cl100k_base",
                 window: int | None = None, constraints: list[Constraint] | None = None,
                 progress: Callable[[str, float], None] | None = None, audit: bool = True) -> None:
        """``audit=False`` defers the compaction audit to ``set_constraints`` (the TUI paints first)."""
        self.path = Path(path)
        self.file = Path(split_sample(path)[0])  # LOG#N names one sample of LOG: the file is LOG
        self.format, self.encoding, self.window_override = format, encoding, window
        self.constraints = list(constraints or [])
        self.lock = threading.RLock()
        self._open(progress, audit=audit)

    def _open(self, progress: Callable[[str, float], None] | None = None, *, audit: bool = True) -> None:
        self.session = Session.open(self.path, format=self.format, encoding=self.encoding, window=self.window_override,
                                    live=True, progress=progress)
        info = os.stat(self.file)
        self.identity = (info.st_dev, info.st_ino)
        # Formats that are rewritten whole (folders, JSON documents, databases) are re-read when they change.
        self.signature = None if isinstance(self.session.parser, LineParser) else self._signature()
        self.offset = self.session.parser.resume_offset
        self.line = getattr(self.session.parser, "resume_line", 1)
        self.points: TimelineView
        self._latest: Window
        self._advance()
        self.audit: Audit = run_audit(self.session, self.constraints) if audit else Audit(self.constraints, [], [])
        self._last_prompt = self.session.reported_at(None) or 0

    def set_constraints(self, constraints: list[Constraint]) -> Audit:
        with self.lock:
            self.constraints = list(constraints)
            self.audit = run_audit(self.session, self.constraints)
            return self.audit

    # --- polling ---------------------------------------------------------------------------------
    def poll(self) -> Update | None:
        """Take in what was appended since the last poll; None when nothing was.

        Raises SourceError when the file is gone or cannot be read any more.
        """
        with self.lock:
            try:
                info = os.stat(self.file)
            except FileNotFoundError:
                raise SourceError(f"{self.path}: the file disappeared") from None
            except OSError as exc:
                raise SourceError(f"{self.path}: {exc.strerror or exc}") from None
            if self.signature is not None:
                return self._poll_whole()
            if (info.st_dev, info.st_ino) != self.identity:
                return self._reset("the file was replaced; read again from the start")
            if info.st_size < self.offset:
                return self._reset("the file was truncated; read again from the start")
            subagents = self.session.subagents is not None and self.session.subagents.refresh()
            if info.st_size == self.offset:
                return Update(len(self.session.entries), 0, subagents=True) if subagents else None
            parser = self.session.parser
            # Read the appended bytes with plain reads, not a mapping: a file truncated under a
            # mapping kills the process (SIGBUS); under a read it only comes back short.
            data = read_appended(self.file, self.offset, info.st_size)
            before = len(self.session.entries)
            self.offset = parser.feed(data, 0, self.line, final=False, base=self.offset)
            self.line = parser.resume_line
            if getattr(parser, "history_rewritten", False):
                return self._reset("the agent rewrote its history; read again from the start")
            entries = self.session.entries
            # Entries the new lines changed (a response spread over lines, usage reported later) are
            # marked by the parser itself, and counted again from there.
            self.session.count_new()
            self._advance()
            new_entries = entries[before:]
            return Update(len(entries), len(new_entries), compaction=any(e.compaction for e in new_entries),
                          subagents=subagents, alerts=self._new_alerts(before))

    def _signature(self) -> tuple:
        if self.file.is_dir():
            return tree_signature(self.file)
        stamps = []
        for companion in (self.file, Path(f"{self.file}-wal")):  # SQLite writes go to the WAL first
            try:
                info = os.stat(companion)
                stamps.append((info.st_size, info.st_mtime_ns, info.st_ino))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def _poll_whole(self) -> Update | None:
        """A session stored whole changed (a file added or rewritten): read it again; such sessions are small."""
        if self._signature() == self.signature:
            return None
        known = {(a.kind, a.message, a.constraint) for a in self.audit.alerts}
        before = len(self.session.entries)
        self._open()
        fresh = [a for a in self.audit.alerts if (a.kind, a.message, a.constraint) not in known]
        after = len(self.session.entries)
        return Update(after, max(0, after - before), compaction=any(e.compaction for e in self.session.entries[before:]), alerts=fresh)

    def _reset(self, reason: str) -> Update:
        self._open()
        return Update(len(self.session.entries), len(self.session.entries), reset=reason, alerts=list(self.audit.alerts))

    def _advance(self) -> None:
        """The timeline and the latest window: the session replays what can no longer change as it
        counts it; only the entries after that are replayed here, on a copy."""
        self.points = self.session.timeline()
        self._latest = self.session.window_at(None)

    def _new_alerts(self, before: int) -> list[Alert]:
        """Alerts raised by the entries from position ``before`` on, added to the audit."""
        if self._compacts(before) or self._after_window_open(before):
            # A compaction (marked, or a drop in reported usage): audit it now, in this same update.
            # Again while the model has not yet been called after the last one: its summary and the
            # messages it kept may still be arriving, and that call's window is what is audited.
            known = {(a.kind, a.message, a.constraint) for a in self.audit.alerts}
            self.audit = run_audit(self.session, self.constraints, resume=self.audit.progress)
            return [a for a in self.audit.alerts if (a.kind, a.message, a.constraint) not in known]
        fresh = violations(self.session.entries[before:], self.constraints)
        self.audit.alerts.extend(fresh)
        return fresh

    def _after_window_open(self, before: int) -> bool:
        """Whether the last audit took a compaction's "after" window at the end of the log (no model
        call after it yet): ``before`` is how many entries there were then."""
        return any(c.after_message >= before and c.event.kind != "implicit" for c in self.audit.compactions[-1:])

    def _compacts(self, before: int) -> bool:
        """Whether the new entries hold a compaction marker or a drop in reported usage (looked at once each)."""
        found = False
        for entry in self.session.entries[max(0, before - 1):]:
            if entry.compaction is not None:
                found = True
            if entry.usage is not None:
                last = self._last_prompt
                if last and entry.usage.prompt_tokens < last * (1 - IMPLICIT_DROP):
                    found = True
                self._last_prompt = entry.usage.prompt_tokens
        return found

    # --- reading -----------------------------------------------------------------------------------
    def window_at(self, message: int) -> Window:
        """The window after ``message``; the latest one was made at the last poll."""
        with self.lock:
            if message >= len(self.session.entries):
                return self._latest
            return self.session.window_at(message)
