"""The ctxtop Textual app: one calm, dense screen over a session's context window.

State flows down from the app to the widgets: one immutable value (tui/state.py) in one reactive, each
pane updated from what changed (``watch_state``); intent flows up as messages. Everything slow — parsing, counting,
auditing, replaying the window, previewing strategies, writing exports — runs
in thread workers that post their results back; widgets are only touched here,
on the main thread.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.widgets import Input, ProgressBar, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.run import Audit
from ctxtop.context.output.redact import redact, redact_text_if
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.sanitize import clean_text, one_line
from ctxtop.context.store.source import split_sample
from ctxtop.context.strategies import STRATEGIES, Preview
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import resolved_message
from ctxtop.context.window.tail_first import tail_session
from ctxtop.tui.actions import UserActions, no_such_message
from ctxtop.tui.discover import SESSION_SUFFIXES, is_session_folder
from ctxtop.tui.errors import USER_ERRORS, os_error_line
from ctxtop.tui.keymap import PRIORITY_ACTIONS, TYPED_ACTIONS, bindings, footer_rank
from ctxtop.tui.live import LiveUpdates
from ctxtop.tui.messages import (
    AuditReady,
    CompactionReady,
    FirstPaint,
    HistoryRefined,
    LoadFailed,
    LoadProgress,
    LogChanged,
    NewSessionFile,
    SessionLoaded,
    ViewReady,
)
from ctxtop.tui.parts import AppParts
from ctxtop.tui.state import SessionState
from ctxtop.tui.tail import IDLE_CHECK_SECONDS, LogWatch, watch_new_sessions
from ctxtop.tui.waiting import not_written_yet, wait_for_session
from ctxtop.tui.widgets.breakdown import Breakdown
from ctxtop.tui.widgets.compaction import CompactionView
from ctxtop.tui.widgets.detail import Detail
from ctxtop.tui.widgets.empty_note import EmptyNote
from ctxtop.tui.widgets.fitted import Fitted, Part, cut, fitted_parts
from ctxtop.tui.widgets.footer import FittedFooter
from ctxtop.tui.widgets.header import header_text
from ctxtop.tui.widgets.panels import AlertsTable, ConstraintsTable, StrategiesTable
from ctxtop.tui.widgets.subagents import EMPTY as NO_SUBAGENTS
from ctxtop.tui.widgets.subagents import SubagentsTable
from ctxtop.tui.widgets.timeline import Timeline
from ctxtop.tui.widgets.tools import ToolsTable
from ctxtop.tui.widgets.window_list import WindowList, redacted, rows_of

# The footer's keys spaced as Textual spaces them from this width; closer below it.
FOOTER_ROOMY_WIDTH = 120
# The demo replay shows the whole session in about this long at speed 1 (a whole number of messages a tick:
# the demo's 390 take 19.5 s), as the README says.
REPLAY_SECONDS = 20.0
REPLAY_TICK = 0.1


class CtxtopApp(LiveUpdates, UserActions, AppParts):
    TITLE = "ctxtop"
    CSS_PATH = "app.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall"), (50, "-roomy")]
    BINDINGS = bindings()  # every action, its keys, footer, help and palette entry: tui/keymap.py
    # --debug: internal errors of workers are kept with their tracebacks (printed on exit by the CLI).
    show_tracebacks: bool = False

    def __init__(
        self,
        path: str,
        *,
        log_format: str | None = None,
        encoding: str = "cl100k_base",
        window: int | None = None,
        at: int | None = None,
        title: str | None = None,
        pins: list[str] | None = None,
        pins_file: str | None = None,
        auto: bool = False,
        replay_speed: float | None = None,
        export_dir: Path | None = None,
        notice: str | None = None,
        live: bool = True,
        poll_seconds: float | None = None,
        session_dirs: list[Path] | None = None,
        stay: bool = False,
        redacting: bool = False,
    ) -> None:
        super().__init__()
        # What is shown: no session yet; the cursor where asked (None: the latest message, followed); masked from the
        # first frame with ``redacting`` (--redact: a screen shared must not show the log's secrets before r is pressed).
        self.set_reactive(CtxtopApp.state, SessionState(path, cursor=at, follow=at is None, redacting=redacting))
        self.log_format = log_format
        self.encoding = encoding
        self.window_override = window
        self.rule_request = RuleRequest(tuple(pins or ()), pins_file, auto)
        self.replay_speed = replay_speed
        self.export_dir = export_dir or Path.cwd()
        self.notice = notice
        # Follow the log as it grows (not while replaying the demo, which brings its own arrivals).
        self.live = live and not replay_speed
        self.poll_seconds = poll_seconds
        # Directory mode: a newer session file appearing there is followed instead (unless --stay).
        self.session_dirs = list(session_dirs or [])
        self.stay = stay
        self._dir_observer = None
        self._observer = None
        self._replay_timer = None
        self._undrawn: SessionState | None = None  # what the screen shows, while changes come before it is up
        self._polling = self._poll_again = False
        self._polled = None
        self._changed_paths = set()
        self.prompt_mode = "search"
        self.select_after_view = None
        self.last_export = []
        self.sub_title = one_line(title or Path(path).name, 60)
        self.worker_errors: list[BaseException] = []  # internal errors of workers, shown as they come
        self.load_error: str | None = None  # why the log could not be read (the CLI prints it after the screen)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification is plain text, never markup: alert details, file names, pinned text and
        search queries come from the log or the user (``[/]`` crashed the app, ``[@click=app.quit]``
        ran an action), and control sequences are stripped. ``markup`` is accepted and ignored."""
        super().notify(clean_text(message), title=clean_text(title), severity=severity, timeout=timeout, markup=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed on an internal error says so on screen, in one line, instead of leaving
        "loading…" up forever (workers run with exit_on_error=False); --debug keeps the traceback."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if error is None:
            return
        self.worker_errors.append(error)
        line = one_line(f"internal error ({event.worker.group}): {type(error).__name__}: {error}", 200)
        hint = "" if self.show_tracebacks else " (run with --debug for details)"
        self.notify(line + hint, severity="error", timeout=15)
        if event.worker.group == "load":
            self._change(failed=line, progress=None)
        elif event.worker.group == "poll":
            self._log_gone(line, self._polled)  # no longer following, and the header says so

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self.type_ahead(event):
            return
        await super().on_event(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The keys that step through the session are bound before any widget (priority); over a modal
        screen (the help, the command palette) they belong to it, not to the session behind."""
        if action in PRIORITY_ACTIONS and isinstance(self.screen, ModalScreen):
            return False
        if action in TYPED_ACTIONS and isinstance(self.focused, Input):
            return False
        return not self.prompt_opening()

    # --- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Fitted(partial(self._header, self.state), id="header")
        yield ProgressBar(total=100, show_eta=False, id="loading")
        yield Fitted(id="banner")
        with Horizontal(id="top"):
            yield Breakdown()
            yield Timeline(id="timeline")
        with Horizontal(id="main"):
            with Vertical(id="window-pane"):
                yield Fitted(id="window-title")
                yield WindowList(id="window-list")
            with TabbedContent(id="panes"):
                with TabPane("Detail", id="tab-detail"):
                    yield Detail(id="detail")
                with TabPane("Constraints", id="tab-constraints"):
                    yield ConstraintsTable(id="constraints")
                    yield EmptyNote("No rules tracked: none found so far (p pins one).")
                with TabPane("Strategies", id="tab-strategies"):
                    yield StrategiesTable(id="strategies")
                with TabPane("Alerts", id="tab-alerts"):
                    yield AlertsTable(id="alerts")
                    yield EmptyNote("No alerts: no rule lost, weakened or broken so far.")
                with TabPane("Tools", id="tab-tools"):
                    yield ToolsTable(id="tools")
                with TabPane("Agents", id="tab-agents"):
                    yield SubagentsTable(id="agents")
                    yield EmptyNote(NO_SUBAGENTS)
        yield CompactionView(id="compaction")
        yield Input(id="prompt")  # search and go-to type here
        yield FittedFooter(footer_rank, roomy_width=FOOTER_ROOMY_WIDTH, show_command_palette=False)

    def on_mount(self) -> None:
        self.call_after_refresh(self._draw_undrawn)
        self.query_one(WindowList).focus()
        self.query_one(StrategiesTable).set_strategies(list(STRATEGIES))
        if self.notice:
            self.notify(one_line(self.notice, 200), title="ctxtop")
        self.load_session()
        self.set_interval(IDLE_CHECK_SECONDS, self.idle_check)

    def _draw_undrawn(self) -> None:
        """Draw the changes that came before the screen was up (else nothing may change again for a while: a log
        waited for)."""
        if self._undrawn is not None and self.screen_stack and self.screen.is_mounted:
            self.watch_state(self._undrawn, self.state)

    # --- loading --------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_session(self) -> None:
        reported = [-1.0]

        def progress(phase: str, fraction: float) -> None:
            # JSON Lines are read, parsed and counted together; elsewhere parsing is about a third
            # of the work and counting the rest. Report each whole percent once.
            overall = fraction if phase == "read" else fraction / 3 if phase == "parse" else 1 / 3 + 2 * fraction / 3
            if overall - reported[0] >= 0.01:
                reported[0] = overall
                self.post_message(LoadProgress(phase, overall))

        path = self.path
        log = split_sample(path)[0]
        if not_written_yet(log) or (Path(log).is_dir() and not is_session_folder(Path(log))):
            self.call_from_thread(self._change, waiting=True)
            found = wait_for_session(log, every=self.poll_seconds, cancelled=lambda: get_current_worker().is_cancelled)
            if found is None:
                return
            if found != Path(log):  # a folder (given with no session yet, or appeared since): its newest session
                if not self.session_dirs:
                    self.session_dirs = [Path(log)]  # followed into each newer one, as a folder given is
                path = str(found)
                self.call_from_thread(self._change, path=path)
        try:
            self._first_paint(path)
            tracker = Tracker.open(path, self.rule_request, format=self.log_format, encoding=self.encoding,
                                   window=self.window_override, live=self.live, saved_pins=True, progress=progress, audit=False)
        except USER_ERRORS as exc:
            self.post_message(LoadFailed(str(exc)))
            return
        except OSError as exc:  # what the system refused (a folder that cannot be entered): the user's to fix
            self.post_message(LoadFailed(os_error_line(exc)))
            return
        for warning in tracker.warnings:
            self.call_from_thread(self.notify, one_line(warning, 200), severity="warning", timeout=8)
        # Paint the window first; the audit (every compaction compared before and after) follows.
        self.post_message(SessionLoaded(path, tracker, tracker.session, tracker.rules, Audit(tracker.rules, [], []), tracker.timeline()))
        audit = tracker.run_audit()
        self.post_message(AuditReady(tracker, tracker.rules, audit))

    def _first_paint(self, path: str) -> None:
        """On a big log, show the window after its last compaction before the whole history is read."""
        if self.replay_speed:
            return
        try:
            quick = tail_session(split_sample(path)[0], encoding=self.encoding, window=self.window_override)
        except (OSError, *USER_ERRORS):
            return  # the full load says what is wrong
        if quick is not None:
            # As counted so far: a big tail is estimated (said on screen), its exact counts come with the full load.
            window = quick.window_at(None, exact=False)
            self.post_message(FirstPaint(build_snapshot(quick, None, [], Audit([], [], []), window=window)))

    def on_first_paint(self, message: FirstPaint) -> None:
        if self.view is None:  # (else the full load was quicker)
            self._change(first_paint=message.snapshot)

    def on_load_progress(self, message: LoadProgress) -> None:
        self._change(progress=(message.phase, message.fraction))

    def on_session_loaded(self, message: SessionLoaded) -> None:
        if message.path != self.path or self.tracker is not None:
            return  # loaded for a log since left
        session, tracker = message.session, message.tracker
        loaded = replace(self.state, tracker=tracker, session=session, timeline=message.timeline,
                         constraints=message.constraints, audit=message.audit)
        total = session.message_count
        if self.replay_speed:
            self.state = replace(loaded, available=0, follow=True)
            step = max(1, math.ceil(total * REPLAY_TICK * self.replay_speed / REPLAY_SECONDS))
            self._replay_timer = self.set_interval(REPLAY_TICK, lambda: self.arrive(step))
            self.arrive(step)
        else:
            cursor, follow = self.cursor, self.state.follow
            if cursor is not None and total and resolved_message(cursor, total) is None:
                # (--at past either end: said, as `g` says it, not the nearest message without a word)
                self.notify(f"{no_such_message(cursor, total)}; showing the latest", severity="warning", timeout=6, markup=False)
                cursor, follow = None, True
            self.state = replace(loaded, available=total, cursor=session.clamp(cursor), follow=follow)
            self._announce_alerts()
        if tracker.follower is not None:
            self._observer = LogWatch(tracker.follower.file, lambda path: self.post_message(LogChanged(path)),
                                      poll_seconds=self.poll_seconds)
            self._change(watching=True)
        if self.session_dirs and self._dir_observer is None:
            self._dir_observer = watch_new_sessions(self.session_dirs, lambda path: self.post_message(NewSessionFile(path)),
                                                    SESSION_SUFFIXES, poll_seconds=self.poll_seconds)

    def on_unmount(self) -> None:
        for observer in (self._observer, self._dir_observer):
            if observer is not None:
                observer.stop()

    def on_load_failed(self, message: LoadFailed) -> None:
        # Printed by the CLI once the screen is gone, through ``say`` (one line: Textual's exit
        # message is a Rich renderable, wrapped at the terminal's width).
        self.load_error = one_line(message.error)
        self.exit(return_code=2)

    # --- the view at the cursor -----------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="view")
    def compute_view(self, at: int) -> None:
        tracker = self.tracker
        assert tracker is not None
        view = tracker.view(at)
        rows = rows_of(view.window, view.marked_blocks)
        self.post_message(ViewReady(at, view.snapshot, view.window, view.previews, view.marked_blocks, rows))

    def on_view_ready(self, message: ViewReady) -> None:
        if message.at != self.cursor or not self.screen_stack or not self.screen.is_mounted:
            return  # a stale result (the cursor has moved on), or the app is closing (its screens maybe gone already)
        self._change(view=message)

    # --- the panes follow the state -------------------------------------------------------------
    def watch_state(self, old: SessionState, new: SessionState) -> None:
        """Bring the screen in line with ``new``: each pane is updated when what it shows changed since ``old``."""
        if not self.screen_stack or not self.screen.is_mounted:
            # The app is closing, or not up yet (a quick loader's first change): drawn once the screen is.
            if self._undrawn is None:
                self._undrawn = old
            return
        if self._undrawn is not None:
            old, self._undrawn = self._undrawn, None
        tracker = new.tracker
        if tracker is not None and new.cursor is not None and (
                new.tracker is not old.tracker or new.cursor != old.cursor or new.revision != old.revision):
            self.compute_view(new.cursor)  # the view at the cursor is asked for again; it comes back as ViewReady
        redacting = new.redacting != old.redacting
        rules = new.constraints is not old.constraints or redacting
        view = new.view is not old.view
        with self.batch_update():
            if new.progress != old.progress or new.tracker is not old.tracker:
                self._show_progress(new)
            if new.first_paint is not old.first_paint and new.first_paint is not None and new.view is None:
                self.query_one(Breakdown).show(new.first_paint)
                following = Text("the window after the last compaction; the rest follows", style="dim")
                self.query_one("#window-title", Fitted).show(partial(cut, following))
            if new.timeline is not None and new.session is not None and (
                    new.timeline is not old.timeline or new.session is not old.session):
                self.query_one(Timeline).set_data(new.timeline, new.session.limit()[0], estimated=new.session.rough_before(None))
            if rules:
                self.query_one(ConstraintsTable).set_constraints(list(new.constraints), new.redacting)
            if new.view is not None:
                self._show_view(old, new, view, rules, redacting)
            if (new.available, new.cursor) != (old.available, old.cursor):
                self.query_one(Timeline).set_position(new.available, new.cursor or 0)
            known = (new.tracker is not old.tracker or new.audit is not old.audit or new.available != old.available
                     or new.constraints is not old.constraints or redacting)
            if tracker is not None and known:
                alerts = tracker.alerts(new.available)
                self.query_one(AlertsTable).set_alerts(alerts, new.redacting)
                self.query_one(Timeline).set_guard_marks([a.message for a in alerts if a.kind.by_guard])
            if known or new.cursor != old.cursor:
                self._update_banner(new)
            if (view or new.available != old.available or self._header_mode(new) != self._header_mode(old)
                    or new.waiting != old.waiting or new.progress != old.progress or new.first_paint is not old.first_paint
                    or new.failed != old.failed):
                self.query_one("#header", Fitted).show(partial(self._header, new))
            if new.compaction is not old.compaction or (redacting and new.compaction is not None):
                self._show_compaction(new)

    def _show_view(self, old: SessionState, new: SessionState, view: bool, rules: bool, redacting: bool) -> None:
        """The panes that show the view at the cursor: those whose view, rules or redaction changed."""
        shown = new.view
        assert shown is not None
        if view:
            self.query_one(Breakdown).show(shown.snapshot)
            self.query_one(StrategiesTable).show(shown.previews)
            self.query_one(ToolsTable).show(shown.snapshot["tool_usage"]["window"])
        if view or rules:
            self.query_one(ConstraintsTable).show(shown.snapshot["constraints"])
        if view or redacting:
            self.query_one(SubagentsTable).show(shown.snapshot["subagents"], new.redacting)
            same_message = not view or (old.view is not None and old.view.at == shown.at)
            self.query_one(WindowList).set_rows(redacted(shown.rows) if new.redacting else shown.rows, keep_selection=same_message)
            if self.select_after_view is not None and self.select_after_view[0] == shown.at:
                self._select_block(*self.select_after_view)
        if (view or redacting or new.strategy != old.strategy or new.search is not old.search
                or new.search_index != old.search_index or new.searching != old.searching):
            self._mark_strategy(new)

    def _header_mode(self, state: SessionState) -> list[str]:
        """The header's mode: replaying, following, live or paused, and the switches that are on; in a sub-agent,
        which one and how to go back. Its forms from the fullest to the shortest (without the sub-agent's type)."""
        if self.replay_speed and state.session and state.available < state.session.message_count:
            mode = f"▶ REPLAY ×{self.replay_speed:g}"
            if not state.follow:  # the replay goes on; the cursor stays where it was put
                mode += "  ❚❚ PAUSED (f: follow)"
        else:
            mode = "● FOLLOW" if state.follow else "❚❚ PAUSED"
            if state.tracker is not None and state.tracker.live and state.watching:
                mode = ("● LIVE" if state.follow else "❚❚ PAUSED (live)")
            elif state.stopped:
                mode = "■ STOPPED: the log is no longer followed"
            if state.unseen and not state.follow:
                mode += f"  +{state.unseen} new (f: follow)"
        if not state.bell_on:
            mode += "  (bell off)"
        if state.redacting:
            mode += "  [redacted]"
        if state.subagent is not None:
            agent, kind = (redact_text_if(state.subagent[key], state.redacting) for key in ("id", "kind"))
            return [f"{mode}  sub-agent {one_line(agent, 24)} ({one_line(kind, 24)}) · ⌫ back",
                    f"{mode}  sub-agent {one_line(agent, 24)} · ⌫ back"]
        return [mode]

    def _header(self, state: SessionState, width: int | None = None) -> Text:
        """The header for ``width`` columns: the view's (session, window use, position, mode); until there is
        one, how loading goes."""
        if state.view is not None:
            return header_text(_path_shown(state.view.snapshot, state), available=state.available, mode=self._header_mode(state),
                               width=width)
        if state.first_paint is not None:
            return header_text(_path_shown(state.first_paint, state), available=None, mode="indexing the history…", width=width)
        name = one_line(redact_text_if(Path(state.path).name, state.redacting), 60)
        if state.failed is not None:
            return Text(f"ctxtop: {redact_text_if(state.failed, state.redacting)} — q quits", style="bold red")
        if state.progress is not None:
            phase, fraction = state.progress
            verb = {"read": "reading", "parse": "parsing"}.get(phase, "counting tokens in")
            return Text(f"{verb} {name}… {100 * fraction:.0f}%", style="bold")
        if state.waiting:
            what = f"a session in {name}" if Path(state.path).is_dir() else f"{name} to be written"
            return Text(f"waiting for {what}… (q quits)", style="bold yellow")
        return Text(f"loading {name}…", style="bold")

    def _show_progress(self, state: SessionState) -> None:
        """The progress bar, while the log is read (it goes once the session is loaded)."""
        bar = self.query_one("#loading", ProgressBar)
        bar.set_class(state.progress is not None and state.tracker is None, "-visible")
        if state.progress is not None:
            bar.update(progress=round(100 * state.progress[1]))

    def _preview(self, state: SessionState) -> Preview | None:
        if state.view is None or state.strategy is None:
            return None
        return next((p for p in state.view.previews if p.strategy == state.strategy), None)

    def _mark_strategy(self, state: SessionState) -> None:
        """The window list's marks and title: the strategy's effect, the search and where it stands."""
        preview = self._preview(state)
        self.query_one(WindowList).set_fates(preview.fates if preview else None)
        # Where the user stands first, the legend last: a narrow pane cuts the least useful. Each part: its forms,
        # fullest first, its style, and whether it may be cut with "…" (words) or shows whole or not at all (figures:
        # "1 / 7…" reads as 1 of 75).
        parts: list[Part] = []
        if state.view is not None:
            blocks = len(state.view.window.blocks)
            parts.append(([f"message {state.view.at} · {blocks:,} block{'' if blocks == 1 else 's'}", f"message {state.view.at}"],
                          "bold", True))
        if state.searching is not None:
            parts.append(([f" · searching {state.available:,} messages for '{one_line(state.searching, 30)}'…"], "yellow", True))
        elif state.search is not None:
            found = len(state.search.matches)
            at = f"{state.search_index + 1} / {found:,}" if found and state.search_index >= 0 else f"{found} matches"
            parts.append(([f" · '{one_line(state.search.query, chars)}': {at}" for chars in (30, 10, 2)],
                          "bold" if found else "yellow", False))
        if preview is not None:
            counts = preview.outcome_counts()
            parts.append(([f" · {preview.strategy}"], "bold", True))
            parts.append(([f" → {preview.tokens_after:,} tokens, rules kept/risk/lost {counts['kept']}/{counts['at_risk']}/{counts['lost']}",
                           f" → {preview.tokens_after:,} tokens"], "", False))
            parts.append((["  (✘ dropped ⌀ placeholder Σ summarized … cut)"], "dim", True))
        elif state.view is not None:
            parts.append((["  (s: mark a strategy's effect)"], "dim", True))
        self.query_one("#window-title", Fitted).show(partial(fitted_parts, parts))

    def _selected_block(self) -> tuple[Window, int] | None:
        if self.view is None or not self.view.window.blocks:
            return None
        return self.view.window, self.query_one(WindowList).selected

    @on(WindowList.Selected)
    def show_selected_block(self, message: WindowList.Selected) -> None:
        if self.return_code is not None or not self.is_running or not self.screen.is_mounted:
            return  # exiting: the list may be gone already (NoMatches, seen once as the app closed after a live update)
        selected = self._selected_block()
        detail = self.query_one(Detail)
        if selected is None:
            detail.show(None)
        else:
            window, index = selected
            detail.show(window.blocks[index] if index < len(window.blocks) else None, redacting=self.redacting)

    @on(StrategiesTable.Chosen)
    def choose_strategy(self, message: StrategiesTable.Chosen) -> None:
        self._change(strategy=message.strategy)

    @on(Timeline.Picked)
    def pick_from_timeline(self, message: Timeline.Picked) -> None:
        self._go(message.message)
        self._open_compaction_if_at(message.message)

    @on(AlertsTable.Jump)
    def jump_to_alert(self, message: AlertsTable.Jump) -> None:
        self._go(message.message)
        self._open_compaction_if_at(message.message)

    # --- the compaction view --------------------------------------------------------------------
    def _open_compaction_if_at(self, message: int) -> None:
        """Open the compaction view when ``message`` is a compaction (a jump to an alert, a click on ▲); an open
        view followed the cursor there already (_go)."""
        if self.state.compaction is None and self.audit is not None and any(c.event.message == message for c in self.audit.compactions):
            self.open_compaction(message)

    @work(thread=True, exclusive=True, exit_on_error=False, group="compaction")
    def open_compaction(self, message: int) -> None:
        tracker = self.tracker
        number = tracker.compaction_at(message) if tracker is not None else None
        if tracker is not None and number is not None:
            self.post_message(CompactionReady(tracker.compaction_view(number)))

    def on_compaction_ready(self, message: CompactionReady) -> None:
        self._change(compaction=message.view)

    def _show_compaction(self, state: SessionState) -> None:
        pane, view = self.query_one(CompactionView), state.compaction
        if view is None:
            if pane.is_open and pane.has_focus:
                self.query_one(WindowList).focus()
            pane.close()
            self.screen.remove_class("-compaction")
        else:
            opening = not pane.is_open
            pane.show(redact(view) if state.redacting else view)
            self.screen.add_class("-compaction")
            if opening:
                pane.focus()  # ↓ / PgDn scroll it: the list and the panes behind it are hidden

    def action_toggle_compaction(self) -> None:
        """Open the view of the compaction at or before the cursor, or close it."""
        if self.state.compaction is not None:
            self.action_close_compaction()
        elif self.cursor is not None and self.tracker is not None and self.tracker.compaction_at(self.cursor) is not None:
            self.open_compaction(self.cursor)
        else:
            self.notify("no compaction at or before this message", timeout=2)

    def action_close_compaction(self) -> None:
        self._change(compaction=None)

    # --- constraints and alerts -----------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="audit")
    def change_rules(self, how: str, target: str | None) -> None:
        """Pin a text, unpin a rule (by id; an auto-detected one is hidden for the session) or bring back the
        hidden ones: the tracker saves the session's pins and audits again."""
        tracker = self.tracker
        assert tracker is not None
        try:
            if how == "pin":
                done = tracker.pin(target or "")
                note = f"pinned: {one_line(target or '', 80)}" if done else "already tracked"
            elif how == "unpin":
                text = tracker.unpin(target or "")
                note = f"unpinned: {one_line(text, 80)}" if text else "that rule was given on the command line or in a pins file: it stays"
            else:
                back = tracker.unhide()
                note = f"{len(back)} hidden rule(s) back" if back else "no rule is hidden"
        except OSError as exc:
            note = f"pins not saved: {one_line(str(exc), 160)}"
        except USER_ERRORS as exc:
            note = one_line(str(exc), 200)
        self.call_from_thread(self.notify, note, timeout=3, markup=False)
        self.post_message(AuditReady(tracker, tracker.rules, tracker.audit))

    def on_audit_ready(self, message: AuditReady) -> None:
        if message.tracker is not self.tracker:
            return  # the audit of a session since left
        # The view at the cursor is asked for again (its rules' status changed).
        # ...and the timeline: it marks the implicit compactions the audit found.
        self._change(constraints=message.constraints, audit=message.audit, timeline=message.tracker.timeline(),
                     revision=self.state.revision + 1)
        self._announce_alerts()
        self._change(audited=True)
        if message.tracker.session.accounting.rough_blocks:
            self.refine_history(message.tracker)

    @work(thread=True, exclusive=True, exit_on_error=False, group="refine")
    def refine_history(self, tracker: Tracker) -> None:
        """Idle, after the audit: count the estimated history exactly, a step at a time (a view asked for
        meanwhile waits for no more than a step)."""
        worker = get_current_worker()
        if tracker.refine_history(lambda: worker.is_cancelled or self.tracker is not tracker):
            self.post_message(HistoryRefined(tracker))

    def on_history_refined(self, message: HistoryRefined) -> None:
        if message.tracker is self.tracker:
            self._change(timeline=message.tracker.timeline(), revision=self.state.revision + 1)

    def _announce_alerts(self, fresh: list[Alert] | None = None) -> None:
        """New losses and violations: a notification and the bell (the banner and the Alerts pane follow the state).

        ``fresh``: the alerts a poll of the live log settled; else the tracker says which are new.
        """
        tracker = self.tracker
        if tracker is None:
            return
        fresh = [a for a in (tracker.new_alerts(self.available) if fresh is None else fresh) if a.fails]
        if not self.state.audited and not self.replay_speed:
            # A session opened as it is: its alerts are in the banner and the Alerts pane, not news to
            # toast about. Those that arrive from now on (the log growing, a new pin) are.
            fresh = []
        if fresh:
            latest = fresh[-1]
            more = f" (+{len(fresh) - 1} more)" if len(fresh) > 1 else ""
            self.notify(self._shown(one_line(f"{latest.kind.key} at message {latest.message}: {latest.detail}{more}", 200)),
                        title="constraint alert", severity="error", timeout=8)
            if self.bell_on:
                self.bell()

    def _update_banner(self, state: SessionState) -> None:
        """The banner speaks of the cursor: what is lost or broken at the message shown; what happens
        later in the session only as a count (calmer, when nothing is lost yet here)."""
        tracker, at = state.tracker, state.cursor
        banner = self.query_one("#banner", Fitted)
        seen = tracker.cursor_alerts(at, state.available) if tracker is not None and at is not None else None
        banner.set_class(bool(seen and (seen.here or seen.later)), "-visible")
        banner.set_class(bool(seen and not seen.here and seen.later), "-ahead")
        if seen is None or not (seen.here or seen.later):
            return
        # Most telling first, the latest alert's detail last: one row cuts the longest and least needed part.
        # Here: the counts, and a rule lost (or weakened) then broken, the story to tell; then what comes later;
        # then the rules' names (with no story) and the detail.
        # Words may be cut with "…"; a figure ("broken at 388", "from message 386") shows whole or not at all.
        parts: list[Part] = []
        lost: list[str] = []
        latest = seen.here[-1] if seen.here else None
        lost_at = seen.story
        if seen.here:
            lost = sorted({a.constraint or "" for a in seen.here if a.kind.rule_lost})
            broken = [a for a in seen.here if a.kind is AlertKind.VIOLATION]
            parts.append(([Text.assemble((f" ⚠ at message {at}: ", "bold"),
                                         f"{len(lost)} rule(s) lost or weakened, {len(broken)} broken")], "", True))
        if latest is not None and lost_at is not None:
            story = f"  ·  {lost_at.kind.rule_became} at {lost_at.message}"
            parts.append(([f"{story} → broken at {latest.message}", story], "bold", False))
        if seen.later:
            # Rules, not alerts: one weakened and later lost is one rule lost or weakened.
            lost_later = len({a.constraint for a in seen.later if a.kind.rule_lost})
            broken_later = sum(not a.kind.rule_lost for a in seen.later)
            counts = ", ".join(f"{n} {what}" for n, what in ((lost_later, "lost or weakened"), (broken_later, "broken")) if n)
            lead = ("  ·  later: ", "dim") if seen.here else (" ▸ later in the session: ", "bold")
            parts.append(([Text.assemble(lead, f"{counts} (from message {seen.later[0].message})"), Text.assemble(lead, counts)],
                          "", False))
        if latest is not None:
            if lost and lost_at is None:
                parts.append(([f"  ·  {one_line(', '.join(lost[:count]), 60)}" for count in (3, 2, 1)], "", False))  # ("budget-8…")
            if lost_at is None:
                parts.append(([f"  ·  latest at {latest.message}:"], "", False))
            parts.append(([("  ·  " if lost_at is not None else " ") + self._shown(one_line(latest.detail, 100))], "", True))
        banner.show(partial(fitted_parts, parts))  # one row: cut with an ellipsis, not wrapped out of sight


def _path_shown(snapshot: dict[str, Any], state: SessionState) -> dict[str, Any]:
    """``snapshot`` with its log's path as the header shows it (``redact_text_if``), as --redact masks it in an export."""
    if not state.redacting:
        return snapshot
    return {**snapshot, "source": {**snapshot["source"], "path": redact_text_if(snapshot["source"]["path"] or "", True)}}
