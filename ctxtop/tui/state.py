"""What the app shows, as one immutable value: the session, where the cursor is, the view at it, the user's choices.

The app holds it in one reactive (``AppParts.state``) and replaces it on every change; ``watch_state`` brings
each pane in line with what changed between the old value and the new, so no handler feeds a pane by hand.
Switching to another log (a newer session, a sub-agent, back) replaces it with a fresh one: nothing of the
session left behind can show in the next; only the user's display choices carry over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxtop.context.audit.run import Audit
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.session import Session
from ctxtop.context.window.timeline import TimelineView
from ctxtop.tui.messages import SearchDone, ViewReady


@dataclass(frozen=True, slots=True)
class ReturnTo:
    """The session a sub-agent belongs to, and where its cursor was: where ⌫ goes back to."""

    path: str
    cursor: int | None
    follow: bool


# eq=False: states compare by identity, so each replacement is a change (comparing their sessions and views
# field by field would be slow and say nothing the watcher does not work out itself).
@dataclass(frozen=True, slots=True, eq=False)
class SessionState:
    path: str  # the log shown
    # Until it is loaded: waiting for the log to be written, how far reading it is (phase, 0..1), and the
    # window after its last compaction, shown while a big log's history is indexed.
    waiting: bool = False
    progress: tuple[str, float] | None = None
    first_paint: dict[str, Any] | None = None
    failed: str | None = None  # the load stopped on an internal error (one line): said in the header, not "loading…"
    # The loaded session (None while loading): the tracker decides its rules, audit and alerts.
    tracker: Tracker | None = None
    session: Session | None = None
    constraints: Sequence[Constraint] = ()  # the rules in force, as last audited
    audit: Audit | None = None  # the tracker's latest audit, as shown
    timeline: TimelineView | None = None
    revision: int = 0  # the data under the cursor changed (a new audit, a poll that touched it): ask for the view again
    audited: bool = False  # the first full audit is in: alerts from now on are news
    # Where the user is.
    cursor: int | None = None
    available: int = 0  # messages that have arrived (all of them, unless replaying)
    follow: bool = True
    unseen: int = 0  # messages that arrived while the cursor was elsewhere
    watching: bool = False  # the log is watched as it grows (the header says LIVE)
    stopped: bool = False  # following the log stopped (it disappeared…; a notification said why): the header says so
    view: ViewReady | None = None  # everything shown for the cursor's message, once computed
    search: SearchDone | None = None  # the last search and its matches, stepped with n / N
    search_index: int = -1
    searching: str | None = None  # a search under way (its query), said in the window list's title until it is done
    compaction: dict[str, Any] | None = None  # the compaction view open over the panes (Tracker.compaction_view)
    subagent: dict[str, Any] | None = None  # the sub-agent open (its snapshot row)
    return_to: ReturnTo | None = None  # while a sub-agent is open: its session
    # The user's display choices: they carry over to the next session.
    redacting: bool = False  # mask secrets and personal data on screen and in exports
    bell_on: bool = True
    strategy: str | None = None  # the strategy whose effect the window list marks

    def switched(self, path: str, *, cursor: int | None = None, follow: bool = True,
                 subagent: dict[str, Any] | None = None, return_to: ReturnTo | None = None) -> SessionState:
        """A fresh state for another log: nothing of this session, the display choices kept."""
        return SessionState(path, cursor=cursor, follow=follow, subagent=subagent, return_to=return_to,
                            redacting=self.redacting, bell_on=self.bell_on, strategy=self.strategy)
