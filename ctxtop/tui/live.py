"""Live updates: the log growing (watched and read in a worker), a newer session appearing, the demo replay.

Mixed into CtxtopApp; the watcher threads only post messages, everything here
runs on the main thread except ``read_appended``, a worker.
"""

from __future__ import annotations

from pathlib import Path

from textual import work

from ctxtop.context.output.sanitize import one_line
from ctxtop.tui.errors import USER_ERRORS
from ctxtop.tui.messages import LogAppended, LogChanged, NewSessionFile
from ctxtop.tui.widgets.subagents import SubagentsTable
from ctxtop.tui.widgets.timeline import Timeline

# Live tailing reads at most this often during a burst of writes.
COALESCE_SECONDS = 0.1
# While the log is gone and a new file of its name is waited for, it is looked for this often.
RECHECK_SECONDS = 1.0


class LiveUpdates:
    """What happens when new messages arrive."""

    def on_new_session_file(self, message: NewSessionFile) -> None:
        main_path = self.parent_session[0] if self.parent_session is not None else self.path
        if message.path.resolve() == Path(main_path).resolve():
            return
        name = one_line(message.path.name, 60)
        if self.stay or self.parent_session is not None:
            why = "as --stay asks" if self.stay else "a sub-agent is open"
            self.notify(f"a newer session appeared: {name} (staying, {why})", timeout=6)
            return
        self.notify(f"switched to the newer session {name}", title="new session", timeout=6)
        self._switch_to(str(message.path))

    def _switch_to(self, path: str, cursor: int | None = None, follow: bool = True) -> None:
        """Show another log in the same screen: the newer session, a sub-agent, or back."""
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        self.path = path
        self.sub_title = one_line(Path(path).name, 60)
        self.session, self.tracker, self.view, self.audit = None, None, None, None
        self.cursor, self.available, self.follow, self.unseen = cursor, 0, follow, 0
        self._audited_once = False
        self.load_session()

    # --- sub-agents -------------------------------------------------------------------------------
    def on_subagents_table_open(self, message: SubagentsTable.Open) -> None:
        agent = message.agent
        if self.parent_session is None:
            self.parent_session = (self.path, self.cursor, self.follow)
        self.subagent = agent
        self.notify(f"sub-agent {one_line(agent['id'], 40)} — ⌫ goes back to the session", timeout=4)
        self._switch_to(agent["path"])

    def action_back_to_session(self) -> None:
        if self.parent_session is None:
            return
        path, cursor, follow = self.parent_session
        self.parent_session, self.subagent = None, None
        self._switch_to(path, None if follow else cursor, follow)

    # --- live tailing ---------------------------------------------------------------------------
    def on_log_changed(self, message: LogChanged) -> None:
        if message.path is not None:
            self._changed_paths.add(message.path)
        # Bursts coalesce: one read at a time, and one more after it if the log changed meanwhile.
        if self._polling:
            self._poll_again = True
        else:
            self._polling = True
            self._read_changes()

    def _read_changes(self) -> None:
        """Read what changed since the last read (only the paths the watcher reported)."""
        changed, self._changed_paths = self._changed_paths, set()
        self.read_appended(changed)

    @work(thread=True, exit_on_error=False, group="poll")
    def read_appended(self, changed: set[Path]) -> None:
        tracker = self.tracker
        assert tracker is not None and tracker.live
        try:
            change = tracker.poll(changed)
        except USER_ERRORS as exc:
            self.call_from_thread(self._log_gone, str(exc))
            return
        with tracker.lock:
            # A view: the follower makes a new timeline each poll, the tracker a new audit each time it audits.
            points, audit, rules = tracker.timeline(), tracker.audit, tracker.rules
            waiting = tracker.follower is not None and tracker.follower.waiting_for_file
        self.post_message(LogAppended(change, points, audit, rules, waiting))

    def _log_gone(self, error: str) -> None:
        self._polling = False
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        self.notify(f"stopped following: {one_line(error, 160)}", severity="error", timeout=10)
        self._update_header()  # no longer LIVE

    def on_log_appended(self, message: LogAppended) -> None:
        change = message.change
        if message.waiting and self._observer is not None:
            # Gone, maybe rotated: no event may come if nothing is written; look again until a
            # new file appears or the follower gives up on it.
            self.set_timer(RECHECK_SECONDS, lambda: self.post_message(LogChanged()))
        if change is not None:
            update = change.update
            if update.reset:
                self.notify(one_line(update.reset, 160), title="log re-read", severity="warning")
            if self.tracker is not None:
                self.session = self.tracker.session  # (a new object when the log was read again)
            self.points = message.timeline
            self.query_one(Timeline).set_data(self.points, self.session.limit()[0] if self.session else 1,
                                              estimated=self.session.rough_before(None) if self.session else False)
            self._apply_audit(message.rules, message.audit)
            grew = update.messages - self.available
            self.available = update.messages
            if self.follow or update.reset or update.subagents:
                self.cursor = self.session.clamp(self.cursor if not self.follow else None) if self.session else None
                self.compute_view(self.cursor or 0)
            else:
                self.unseen += max(0, grew)
            self._after_arrival(change.alerts)
        if self._poll_again:
            self._poll_again = False
            self.set_timer(COALESCE_SECONDS, self._read_changes)
        else:
            self._polling = False


    def arrive(self, count: int) -> None:
        """``count`` more messages have arrived (demo replay now; live tailing later)."""
        if self.session is None:
            return
        self.available = min(self.session.message_count, self.available + count)
        if self.available >= self.session.message_count and getattr(self, "_replay_timer", None):
            self._replay_timer.stop()
            self._replay_timer = None
        if self.follow or self.cursor is None:
            self.cursor = self.available
            self.compute_view(self.cursor)
        self._after_arrival()
