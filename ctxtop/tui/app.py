"""The ctxtop Textual app: one calm, dense screen over a session's context window.

State flows down from the app (session, cursor, selected strategy) to the
widgets; intent flows up as messages. Everything slow — parsing, counting,
auditing, replaying the window, previewing strategies, writing exports — runs
in thread workers that post their results back; widgets are only touched here,
on the main thread.
"""

from __future__ import annotations

import math
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, ProgressBar, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.run import Audit
from ctxtop.context.output.redact import redact
from ctxtop.context.output.sanitize import one_line
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.store.source import split_sample
from ctxtop.context.strategies import STRATEGIES, Preview
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.tail_first import tail_session
from ctxtop.context.window.timeline import TimelineView
from ctxtop.tui.actions import UserActions
from ctxtop.tui.discover import SESSION_SUFFIXES
from ctxtop.tui.errors import USER_ERRORS
from ctxtop.tui.keymap import PRIORITY_ACTIONS, bindings
from ctxtop.tui.live import LiveUpdates
from ctxtop.tui.messages import (
    AuditReady,
    CompactionReady,
    FirstPaint,
    LoadFailed,
    LoadProgress,
    LogChanged,
    NewSessionFile,
    SearchDone,
    SessionLoaded,
    ViewReady,
)
from ctxtop.tui.tail import watch_log, watch_new_sessions
from ctxtop.tui.waiting import not_written_yet, wait_for_log
from ctxtop.tui.widgets.breakdown import Breakdown
from ctxtop.tui.widgets.compaction import CompactionView
from ctxtop.tui.widgets.detail import Detail
from ctxtop.tui.widgets.header import header_text
from ctxtop.tui.widgets.panels import AlertsTable, ConstraintsTable, StrategiesTable
from ctxtop.tui.widgets.subagents import SubagentsTable
from ctxtop.tui.widgets.timeline import Timeline
from ctxtop.tui.widgets.tools import ToolsTable
from ctxtop.tui.widgets.window_list import WindowList, redacted, rows_of

# The demo replay shows the whole session in about this long at speed 1.
REPLAY_SECONDS = 30.0
REPLAY_TICK = 0.1


class CtxtopApp(LiveUpdates, UserActions, App[int]):
    TITLE = "ctxtop"
    CSS_PATH = "app.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall"), (50, "-roomy")]
    BINDINGS = bindings()  # every action, its keys, footer, help and palette entry: tui/keymap.py

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
    ) -> None:
        super().__init__()
        self.path = path
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
        self.tracker: Tracker | None = None  # decides the rules in force, the audit, the alerts and the view
        self._observer = None
        self._polling = self._poll_again = False
        self._changed_paths: set[Path] = set()  # reported by the watcher since the last read
        self.unseen = 0  # messages that arrived while the cursor was elsewhere
        self.session: Session | None = None
        self.constraints: list[Constraint] = []
        self.audit: Audit | None = None  # the tracker's latest audit, as shown
        self.points: TimelineView | None = None
        self.cursor = at
        self.available = 0  # messages that have arrived (all of them, unless replaying)
        self.follow = at is None
        self.bell_on = True
        self.redacting = False  # mask secrets and personal data on screen and in exports
        self.strategy: str | None = None
        self._audited_once = False
        self.prompt_mode = "search"  # what the prompt's text is: a search, or a message number to go to
        self.search: SearchDone | None = None  # the last search and its matches, stepped with n / N
        self.search_index = -1
        self.select_after_view: tuple[int, int] | None = None  # (message, block) to select once its view is shown
        self.view: ViewReady | None = None
        self.shown_message: int | None = None  # the message whose breakdown is on screen (for tests)
        self.last_export: list[Path] = []
        # While a sub-agent is open in the view: the session it belongs to, and where its cursor was.
        self.parent_session: tuple[str, int | None, bool] | None = None
        self.subagent: dict | None = None  # the sub-agent open (its snapshot row)
        self.sub_title = one_line(title or Path(path).name, 60)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The keys that step through the session are bound before any widget (priority); over a modal
        screen (the help, the command palette) they belong to it, not to the session behind."""
        if action in PRIORITY_ACTIONS and isinstance(self.screen, ModalScreen):
            return False
        return True

    # --- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(Text(f"loading {one_line(Path(self.path).name, 60)}…", style="bold"), id="header")
        yield ProgressBar(total=100, show_eta=False, id="loading")
        yield Static(id="banner")
        with Horizontal(id="top"):
            yield Breakdown()
            yield Timeline(id="timeline")
        with Horizontal(id="main"):
            with Vertical(id="window-pane"):
                yield Static(id="window-title")
                yield WindowList(id="window-list")
            with TabbedContent(id="panes"):
                with TabPane("Detail", id="tab-detail"):
                    yield Detail(id="detail")
                with TabPane("Constraints", id="tab-constraints"):
                    yield ConstraintsTable(id="constraints")
                with TabPane("Strategies", id="tab-strategies"):
                    yield StrategiesTable(id="strategies")
                with TabPane("Alerts", id="tab-alerts"):
                    yield AlertsTable(id="alerts")
                with TabPane("Tools", id="tab-tools"):
                    yield ToolsTable(id="tools")
                with TabPane("Agents", id="tab-agents"):
                    yield SubagentsTable(id="agents")
        yield CompactionView(id="compaction")
        yield Input(id="prompt")  # search and go-to type here
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(WindowList).focus()
        self.query_one(StrategiesTable).set_strategies(list(STRATEGIES))
        if self.notice:
            self.notify(one_line(self.notice, 200), title="ctxtop")
        self.load_session()

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

        log = split_sample(self.path)[0]
        if not_written_yet(log):
            self.call_from_thread(self._show_waiting)
            if not wait_for_log(log, every=self.poll_seconds, cancelled=lambda: get_current_worker().is_cancelled):
                return
        try:
            self._first_paint()
            tracker = Tracker.open(self.path, self.rule_request, format=self.log_format, encoding=self.encoding,
                                   window=self.window_override, live=self.live, saved_pins=True, progress=progress, audit=False)
        except USER_ERRORS as exc:
            self.post_message(LoadFailed(str(exc)))
            return
        for warning in tracker.warnings:
            self.call_from_thread(self.notify, one_line(warning, 200), severity="warning", timeout=8)
        self.tracker = tracker
        # Paint the window first; the audit (every compaction compared before and after) follows.
        self.post_message(SessionLoaded(tracker.session, tracker.rules, Audit(tracker.rules, [], []), tracker.timeline()))
        audit = tracker.run_audit()
        self.post_message(AuditReady(tracker.rules, audit))

    def _show_waiting(self) -> None:
        name = one_line(Path(self.path).name, 60)
        self.query_one("#header", Static).update(Text(f"waiting for {name} to be written… (q quits)", style="bold yellow"))

    def _first_paint(self) -> None:
        """On a big log, show the window after its last compaction before the whole history is read."""
        if self.replay_speed:
            return
        try:
            quick = tail_session(split_sample(self.path)[0], encoding=self.encoding, window=self.window_override)
        except (OSError, *USER_ERRORS):
            return  # the full load says what is wrong
        if quick is not None:
            self.post_message(FirstPaint(build_snapshot(quick, None, [], Audit([], [], []))))

    def on_first_paint(self, message: FirstPaint) -> None:
        if self.view is not None:
            return  # the full load was quicker
        self.query_one(Breakdown).show(message.snapshot)
        text = header_text(message.snapshot, available=message.snapshot["at"]["messages"], mode="indexing the history…")
        self.query_one("#header", Static).update(text)
        self.query_one("#window-title", Static).update(Text("the window after the last compaction; the rest follows", style="dim"))

    def on_load_progress(self, message: LoadProgress) -> None:
        bar = self.query_one("#loading", ProgressBar)
        bar.add_class("-visible")
        bar.update(progress=round(100 * message.fraction))
        verb = {"read": "reading", "parse": "parsing"}.get(message.phase, "counting tokens in")
        if self.view is None and not self.query_one(Breakdown).has_snapshot:
            self.query_one("#header", Static).update(Text(f"{verb} {one_line(Path(self.path).name, 60)}… {100 * message.fraction:.0f}%", style="bold"))

    def on_session_loaded(self, message: SessionLoaded) -> None:
        self.query_one("#loading", ProgressBar).remove_class("-visible")
        self.session = message.session
        self.points = message.timeline
        self.query_one(Timeline).set_data(self.points, self.session.limit()[0], estimated=self.session.rough_before(None))
        self._apply_audit(message.constraints, message.audit)
        total = self.session.message_count
        if self.replay_speed:
            self.available = 0
            self.follow = True
            step = max(1, math.ceil(total * REPLAY_TICK * self.replay_speed / REPLAY_SECONDS))
            self._replay_timer = self.set_interval(REPLAY_TICK, lambda: self.arrive(step))
            self.arrive(step)
        else:
            self.available = total
            self.cursor = self.session.clamp(self.cursor)
            self._after_arrival()
            self.compute_view(self.cursor)
        if self.tracker is not None and self.tracker.follower is not None:
            self._observer = watch_log(self.tracker.follower.file, lambda path: self.post_message(LogChanged(path)),
                                       poll_seconds=self.poll_seconds)
        if self.session_dirs and self._dir_observer is None:
            self._dir_observer = watch_new_sessions(self.session_dirs, lambda path: self.post_message(NewSessionFile(path)),
                                                    SESSION_SUFFIXES, poll_seconds=self.poll_seconds)

    def on_unmount(self) -> None:
        for observer in (self._observer, self._dir_observer):
            if observer is not None:
                observer.stop()

    def on_load_failed(self, message: LoadFailed) -> None:
        self.exit(return_code=2, message=Text(f"ctxtop: error: {one_line(message.error)}"))

    def _after_arrival(self, fresh: list[Alert] | None = None) -> None:
        self.query_one(Timeline).set_position(self.available, self.cursor or 0)
        self._announce_alerts(fresh)
        self._update_header()

    # --- the view at the cursor -----------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="view")
    def compute_view(self, at: int) -> None:
        tracker = self.tracker
        assert tracker is not None
        view = tracker.view(at)
        rows = rows_of(view.window, view.marked_blocks)
        self.post_message(ViewReady(at, view.snapshot, view.window, view.previews, view.marked_blocks, rows))

    def on_view_ready(self, message: ViewReady) -> None:
        if message.at != self.cursor or not self.screen.is_mounted:
            return  # a stale result (the cursor has moved on), or the app is closing
        same_message = self.view is not None and self.view.at == message.at
        self.view = message
        self.shown_message = message.at
        with self.batch_update():
            self.query_one(Breakdown).show(message.snapshot)
            self.query_one(ConstraintsTable).show(message.snapshot["constraints"])
            self.query_one(StrategiesTable).show(message.previews)
            self.query_one(ToolsTable).show(message.snapshot["tool_usage"]["window"])
            self.query_one(SubagentsTable).show(message.snapshot["subagents"]["agents"], self.redacting)
            window_list = self.query_one(WindowList)
            window_list.set_rows(redacted(message.rows) if self.redacting else message.rows, keep_selection=same_message)
            if self.select_after_view is not None and self.select_after_view[0] == message.at:
                self._select_block(*self.select_after_view)
            self._mark_strategy()
            self._update_header()
            self._update_banner()
            self.query_one(Timeline).set_position(self.available, message.at)

    def _update_header(self) -> None:
        if self.view is None:
            return
        if self.replay_speed and self.session and self.available < self.session.message_count:
            mode = f"▶ REPLAY ×{self.replay_speed:g}"
        else:
            mode = "● FOLLOW" if self.follow else "❚❚ PAUSED"
            if self.tracker is not None and self.tracker.live and self._observer is not None:
                mode = ("● LIVE" if self.follow else "❚❚ PAUSED (live)")
            if self.unseen and not self.follow:
                mode += f"  +{self.unseen} new (f: follow)"
        if not self.bell_on:
            mode += "  (bell off)"
        if self.redacting:
            mode += "  [redacted]"
        if self.subagent is not None:
            mode += f"  sub-agent {one_line(self.subagent['id'], 24)} ({one_line(self.subagent['kind'], 24)}) · ⌫ back"
        self.query_one("#header", Static).update(header_text(self.view.snapshot, available=self.available, mode=mode))

    def _preview(self, name: str | None) -> Preview | None:
        if self.view is None or name is None:
            return None
        return next((p for p in self.view.previews if p.strategy == name), None)

    def _mark_strategy(self) -> None:
        preview = self._preview(self.strategy)
        self.query_one(WindowList).set_fates(preview.fates if preview else None)
        title = Text()
        if self.view is not None:
            title.append(f"message {self.view.at} · {len(self.view.window.blocks):,} blocks", style="bold")
        if preview is not None:
            counts = preview.outcome_counts()
            title.append(f" · {preview.strategy}", style="bold")
            title.append(f" → {preview.tokens_after:,} tokens, rules kept/risk/lost {counts['kept']}/{counts['at_risk']}/{counts['lost']}")
            title.append("  (✘ dropped ⌀ placeholder Σ summarized … cut)", style="dim")
        elif self.view is not None:
            title.append("  (s: mark a strategy's effect)", style="dim")
        if self.search is not None:
            found = len(self.search.matches)
            at = f"{self.search_index + 1} / {found:,}" if found and self.search_index >= 0 else f"{found} matches"
            title.append(f"  · {one_line(self.search.query, 30)!r}: {at}", style="bold" if found else "yellow")
        self.query_one("#window-title", Static).update(title)

    def _selected_block(self) -> tuple[Window, int] | None:
        if self.view is None or not self.view.window.blocks:
            return None
        return self.view.window, self.query_one(WindowList).selected

    @on(WindowList.Selected)
    def show_selected_block(self, message: WindowList.Selected) -> None:
        selected = self._selected_block()
        detail = self.query_one(Detail)
        if selected is None:
            detail.show(None)
        else:
            window, index = selected
            detail.show(window.blocks[index] if index < len(window.blocks) else None, redacting=self.redacting)

    @on(StrategiesTable.Chosen)
    def choose_strategy(self, message: StrategiesTable.Chosen) -> None:
        self.strategy = message.strategy
        self._mark_strategy()

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
        """Open the compaction view when ``message`` is a compaction (a jump to an alert, a click on ▲)."""
        if self.audit is not None and any(c.event.message == message for c in self.audit.compactions):
            self.open_compaction(message)

    @work(thread=True, exclusive=True, exit_on_error=False, group="compaction")
    def open_compaction(self, message: int) -> None:
        tracker = self.tracker
        number = tracker.compaction_at(message) if tracker is not None else None
        if number is not None:
            self.post_message(CompactionReady(tracker.compaction_view(number)))

    def on_compaction_ready(self, message: CompactionReady) -> None:
        view = message.view
        self.query_one(CompactionView).show(redact(view) if self.redacting else view)
        self.screen.add_class("-compaction")

    def action_toggle_compaction(self) -> None:
        """Open the view of the compaction at or before the cursor, or close it."""
        if self.query_one(CompactionView).is_open:
            self.action_close_compaction()
        elif self.cursor is not None and self.tracker is not None and self.tracker.compaction_at(self.cursor) is not None:
            self.open_compaction(self.cursor)
        else:
            self.notify("no compaction at or before this message", timeout=2)

    def action_close_compaction(self) -> None:
        self.query_one(CompactionView).close()
        self.screen.remove_class("-compaction")

    # --- constraints and alerts -----------------------------------------------------------------
    def _apply_audit(self, constraints: list[Constraint], audit: Audit) -> None:
        self.constraints, self.audit = constraints, audit
        self.query_one(ConstraintsTable).set_constraints(constraints, self.redacting)

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
        self.post_message(AuditReady(tracker.rules, tracker.audit))

    def on_audit_ready(self, message: AuditReady) -> None:
        self._apply_audit(message.constraints, message.audit)
        self._announce_alerts()
        self._audited_once = True
        if self.cursor:
            self.compute_view(self.cursor)

    def _announce_alerts(self, fresh: list[Alert] | None = None) -> None:
        """New losses and violations: a notification, the bell, and the persistent banner.

        ``fresh``: the alerts a poll of the live log settled; else the tracker says which are new.
        """
        tracker = self.tracker
        if tracker is None:
            return
        known = tracker.alerts(self.available)
        self.query_one(AlertsTable).set_alerts(known, self.redacting)
        fresh = [a for a in (tracker.new_alerts(self.available) if fresh is None else fresh) if a.fails]
        if not self._audited_once and not self.replay_speed:
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
        self._update_banner()

    def _update_banner(self) -> None:
        """The banner speaks of the cursor: what is lost or broken at the message shown; what happens
        later in the session only as a count (calmer, when nothing is lost yet here)."""
        tracker, at = self.tracker, self.cursor
        banner = self.query_one("#banner", Static)
        seen = tracker.cursor_alerts(at, self.available) if tracker is not None and at is not None else None
        banner.set_class(bool(seen and (seen.here or seen.later)), "-visible")
        banner.set_class(bool(seen and not seen.here and seen.later), "-ahead")
        if seen is None or not (seen.here or seen.later):
            return
        text = Text()
        if seen.here:
            lost = sorted({a.constraint or "" for a in seen.here if a.kind.rule_lost})
            broken = [a for a in seen.here if a.kind is AlertKind.VIOLATION]
            text.append(f" ⚠ at message {at}: ", style="bold")
            text.append(f"{len(lost)} rule(s) lost or weakened" + (f" ({one_line(', '.join(lost[:3]), 60)})" if lost else ""))
            text.append(f", {len(broken)} broken")
            latest = seen.here[-1]
            text.append(f" — latest at {latest.message}: ")
            if latest.kind is AlertKind.VIOLATION and latest.constraint in seen.lost_at:
                text.append(f"lost at {seen.lost_at[latest.constraint]} → broken at {latest.message}: ", style="bold")
            text.append(self._shown(one_line(latest.detail, 100)))
        if seen.later:
            lost_later = sum(a.kind.rule_lost for a in seen.later)
            text.append(("  ·  later: " if seen.here else " ▸ later in the session: "),
                        style="dim" if seen.here else "bold")
            text.append(f"{lost_later} lost or weakened, {len(seen.later) - lost_later} broken (from message {seen.later[0].message})")
        banner.update(text)
