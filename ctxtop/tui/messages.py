"""Messages workers post to the app: results of slow work, applied on the main thread."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message

from ctxtop.context.audit.run import Audit
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.strategies import Preview
from ctxtop.context.tracker import Change, Tracker
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.timeline import TimelineView
from ctxtop.tui.widgets.window_list import Row


@dataclass
class SessionLoaded(Message):
    """A session was parsed and counted, and its timeline computed (its audit follows: AuditReady)."""

    path: str  # the log asked for (a result for a log since left is dropped)
    tracker: Tracker
    session: Session
    constraints: list[Constraint]
    audit: Audit
    timeline: TimelineView


@dataclass
class AuditReady(Message):
    """The session was audited: first after loading, then again when the constraints changed (a pin made or removed)."""

    tracker: Tracker  # whose audit (a result for a session since left is dropped)
    constraints: list[Constraint]
    audit: Audit


@dataclass
class HistoryRefined(Message):
    """The history's estimated counts were made exact (when idle): the timeline and the view are exact too."""

    tracker: Tracker  # whose history (a result for a session since left is dropped)


@dataclass
class ViewReady(Message):
    """Everything shown for one message: the breakdown, the window's blocks and every strategy's preview."""

    at: int
    snapshot: dict[str, Any]
    window: Window
    previews: list[Preview]
    marked_blocks: set[int]  # blocks where a tracked constraint occurs verbatim
    rows: list[Row]  # the window list's rows, made in the worker (they read the blocks' texts)


@dataclass
class LogChanged(Message):
    """The watcher saw the log change (posted from its thread; the app decides when to read)."""

    path: Path | None = None  # what changed: the log, or a sub-agent transcript beside it


@dataclass
class NewSessionFile(Message):
    """A session file appeared in the directory being followed."""

    path: Path


@dataclass
class LogAppended(Message):
    """New messages were read from the growing log."""

    tracker: Tracker  # who read them (a result for a session since left is dropped)
    change: Change | None  # None: nothing new was read
    timeline: TimelineView
    audit: Audit
    rules: list[Constraint]
    waiting: bool = False  # the log is gone and a new file of its name is waited for: look again later


@dataclass
class Exported(Message):
    """Snapshot files were written."""

    paths: list[Path]


@dataclass
class FirstPaint(Message):
    """The window after the last compaction of a big log, shown while its history is indexed."""

    snapshot: dict[str, Any]


@dataclass
class LoadProgress(Message):
    """How far the initial load is: ``phase`` "read" (JSON Lines: parsed and counted together), "parse" or "count", ``fraction`` 0..1."""

    phase: str
    fraction: float


@dataclass
class LoadFailed(Message):
    """The session could not be loaded; ``error`` is one line for the user."""

    error: str


@dataclass
class CompactionReady(Message):
    """Posted by the compaction-view worker: what one compaction did (Tracker.compaction_view)."""

    view: dict[str, Any]


@dataclass
class SearchDone(Message):
    """Posted by the search worker: where ``query`` occurs in the session, as (message, block) in order."""

    query: str
    matches: list[tuple[int, int]]
