"""What the parts of the app share, declared once: CtxtopApp and its mixins (LiveUpdates, UserActions) all
build on AppParts, so each sees the others' attributes and methods with their types (mypy checks them).

The state of what is shown is one value, ``state`` (tui/state.py): parts read it through the read-only
attributes below and change it with ``_change``; the panes follow it (``CtxtopApp.watch_state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from textual.app import App
from textual.reactive import var
from textual.timer import Timer
from watchdog.observers.api import BaseObserver

from ctxtop.context.audit.alerts import Alert
from ctxtop.context.audit.run import Audit
from ctxtop.context.output.redact import redact_text_if
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session
from ctxtop.tui.messages import SearchDone, ViewReady
from ctxtop.tui.state import SessionState
from ctxtop.tui.tail import LogWatch

T = TypeVar("T")


class StateField(Generic[T]):
    """A read-only attribute of the app that is a field of its state (``app.cursor`` is ``app.state.cursor``).

    Setting it raises: a change goes through ``_change``, so that the panes see it.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, app: AppParts, owner: type | None = None) -> T:
        return getattr(app.state, self.name)

    def __set__(self, app: AppParts, value: T) -> None:
        raise AttributeError(f"{self.name} is part of the app's state: change it with _change({self.name}=…)")


class AppParts(App[int]):
    # The one state of what is shown; replaced, never changed in place.
    state: var[SessionState] = var(SessionState(""), init=False)

    path: StateField[str] = StateField()
    tracker: StateField[Tracker | None] = StateField()
    session: StateField[Session | None] = StateField()
    constraints: StateField[Sequence[Constraint]] = StateField()
    audit: StateField[Audit | None] = StateField()
    cursor: StateField[int | None] = StateField()
    available: StateField[int] = StateField()
    follow: StateField[bool] = StateField()
    unseen: StateField[int] = StateField()
    view: StateField[ViewReady | None] = StateField()
    search: StateField[SearchDone | None] = StateField()
    search_index: StateField[int] = StateField()
    searching: StateField[str | None] = StateField()
    subagent: StateField[dict[str, Any] | None] = StateField()
    redacting: StateField[bool] = StateField()
    bell_on: StateField[bool] = StateField()
    strategy: StateField[str | None] = StateField()

    # How the app was started (the command line), set once.
    log_format: str | None
    encoding: str
    window_override: int | None
    rule_request: RuleRequest
    replay_speed: float | None
    export_dir: Path
    notice: str | None
    live: bool  # follow the log as it grows
    poll_seconds: float | None
    session_dirs: list[Path]  # directory mode: a newer session file appearing there is followed instead
    stay: bool  # ... unless --stay

    # Machinery, not shown: watchers, timers, the coalescing of live reads, the prompt, the last export.
    _observer: LogWatch | None
    _dir_observer: BaseObserver | None
    _replay_timer: Timer | None
    _polling: bool
    _poll_again: bool
    _polled: Tracker | None  # the tracker the read under way (or the last) polls
    _changed_paths: set[Path]  # reported by the watcher since the last read
    prompt_mode: str  # what the prompt's text is: "search", or "goto" a message number
    select_after_view: tuple[int, int] | None  # (message, block) to select once its view is shown
    last_export: list[Path]

    @property
    def shown_message(self) -> int | None:
        """The message whose view is on screen."""
        view = self.state.view
        return view.at if view is not None else None

    def _shown(self, text: str) -> str:
        """Log-derived text as it may appear on screen (masked while redacting)."""
        return redact_text_if(text, self.redacting)

    def _change(self, **fields: Any) -> None:
        """Change what is shown: a new state with ``fields`` replaced (the panes follow in ``watch_state``).
        Nothing once the app is exiting: its widgets are being taken down, and a view a worker finished
        just then would be drawn into panes no longer there."""
        if self.return_code is not None or not self.is_running:
            return
        self.state = replace(self.state, **fields)

    # Done by one part, asked for by another (CtxtopApp defines them; the workers return their Worker).
    def load_session(self) -> object:
        raise NotImplementedError

    def open_compaction(self, message: int) -> object:
        raise NotImplementedError

    def change_rules(self, how: str, target: str | None) -> object:
        raise NotImplementedError

    def _announce_alerts(self, fresh: list[Alert] | None = None) -> None:
        raise NotImplementedError

    def _selected_block(self) -> tuple[Window, int] | None:
        raise NotImplementedError
