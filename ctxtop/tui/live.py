"""Live updates: the log growing (watched and read in a worker), a newer session appearing, the demo replay.

Mixed into CtxtopApp; the watcher threads only post messages, everything here
runs on the main thread except ``read_appended``, a worker. What arrives changes the
app's state; the panes follow it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import work

from ctxtop.context.sanitize import one_line
from ctxtop.context.tracker import Tracker
from ctxtop.tui.discover import may_be_session
from ctxtop.tui.errors import USER_ERRORS
from ctxtop.tui.messages import LogAppended, LogChanged, NewSessionFile
from ctxtop.tui.parts import AppParts
from ctxtop.tui.state import ReturnTo
from ctxtop.tui.waiting import not_written_yet
from ctxtop.tui.widgets.subagents import SubagentsTable

# Live tailing reads at most this often during a burst of writes.
COALESCE_SECONDS = 0.1
# While the log is gone and a new file of its name is waited for, it is looked for this often.
RECHECK_SECONDS = 1.0


class LiveUpdates(AppParts):
    """What happens when new messages arrive."""

    def on_new_session_file(self, message: NewSessionFile) -> None:
        return_to = self.state.return_to
        main_path = return_to.path if return_to is not None else self.path
        if message.path.resolve() == Path(main_path).resolve():
            return
        # A file that is no session, read whole (a settings .json, an `e` export), is not one to switch to, as
        # `watch` has it; one still to be written is looked at again until its first line tells.
        if not_written_yet(message.path):
            if message.path.exists():
                self.set_timer(RECHECK_SECONDS, lambda: self.post_message(NewSessionFile(message.path)))
            return
        if not may_be_session(message.path):
            return
        name = one_line(message.path.name, 60)
        if self.stay or return_to is not None:
            why = "as --stay asks" if self.stay else "a sub-agent is open"
            self.notify(f"a newer session appeared: {name} (staying, {why})", timeout=6)
            return
        self.notify(f"switched to the newer session {name}", title="new session", timeout=6)
        self._switch_to(str(message.path))

    def _switch_to(self, path: str, cursor: int | None = None, follow: bool = True,
                   subagent: dict[str, Any] | None = None, return_to: ReturnTo | None = None) -> None:
        """Show another log in the same screen: the newer session, a sub-agent, or back. Its state replaces this one's."""
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        self.sub_title = one_line(Path(path).name, 60)
        self.state = self.state.switched(path, cursor=cursor, follow=follow, subagent=subagent, return_to=return_to)
        self.load_session()

    # --- sub-agents -------------------------------------------------------------------------------
    def on_subagents_table_open(self, message: SubagentsTable.Open) -> None:
        agent = message.agent
        return_to = self.state.return_to or ReturnTo(self.path, self.cursor, self.follow)
        self.notify(f"sub-agent {self._shown(one_line(agent['id'], 40))} — ⌫ goes back to the session", timeout=4)
        self._switch_to(agent["path"], subagent=agent, return_to=return_to)

    def action_back_to_session(self) -> None:
        back = self.state.return_to
        if back is None:
            return
        self._switch_to(back.path, None if back.follow else back.cursor, back.follow)

    # --- live tailing ---------------------------------------------------------------------------
    def idle_check(self) -> None:
        """Look at the log without an event now and then, as ``ctxtop watch`` does: its folder may have been made
        again (the watch is renewed: the old one reports nothing written in the new folder), or the filesystem
        may drop events. Costs a stat of the log and of its folder when nothing changed."""
        if self._observer is None:
            return  # not following: loading, stopped, or a log read whole
        self._observer.renew_if_replaced()
        self.post_message(LogChanged())

    def on_log_changed(self, message: LogChanged) -> None:
        if self._observer is None:
            # Not following (it stopped, or another log is loading): a change still on its way (the look again
            # while the log was waited for, a watcher's event) is of no log followed; read, it said the error again.
            return
        if message.path is not None:
            self._changed_paths.add(message.path)
        # Bursts coalesce: one read at a time, and one more after it if the log changed meanwhile.
        if self._polling:
            self._poll_again = True
        else:
            self._polling = True
            self._read_changes()

    def _read_changes(self) -> None:
        """Read what changed since the last read (only the paths the watcher reported), in the log followed now:
        taken here, not in the worker, which may start after the user opened another log (a sub-agent, or back)."""
        changed, self._changed_paths = self._changed_paths, set()
        tracker = self.tracker
        if self._observer is None or tracker is None or not tracker.live:
            self._polling = False  # no log followed now: another is loading, or following stopped
            return
        self._polled = tracker
        self.read_appended(tracker, changed)

    @work(thread=True, exit_on_error=False, group="poll")
    def read_appended(self, tracker: Tracker, changed: set[Path]) -> None:
        try:
            change = tracker.poll(changed)
        except USER_ERRORS as exc:
            self.call_from_thread(self._log_gone, str(exc), tracker)
            return
        with tracker.lock:
            # A view: the follower makes a new timeline each poll, the tracker a new audit each time it audits.
            points, audit, rules = tracker.timeline(), tracker.audit, tracker.rules
            waiting = tracker.follower is not None and tracker.follower.waiting_for_file
        self.post_message(LogAppended(tracker, change, points, audit, rules, waiting))

    def _log_gone(self, error: str, tracker: Tracker | None) -> None:
        """Following ``tracker``'s log failed: it stops, and the header says so, if that log is still the one shown (a
        read of the log shown before the user opened another says nothing of this one)."""
        self._polling = False
        if tracker is not self.tracker:
            return
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        self.notify(f"stopped following: {one_line(error, 160)}", severity="error", timeout=10)
        self._change(watching=False, stopped=True)  # no longer LIVE

    def on_log_appended(self, message: LogAppended) -> None:
        change = message.change
        if message.waiting and self._observer is not None:
            # Gone, maybe rotated: no event may come if nothing is written; look again until a
            # new file appears or the follower gives up on it.
            self.set_timer(RECHECK_SECONDS, lambda: self.post_message(LogChanged()))
        if change is not None and message.tracker is self.tracker:
            update = change.update
            if update.reset:
                self.notify(one_line(update.reset, 160), title="log re-read", severity="warning")
            state = self.state
            session = message.tracker.session  # (a new object when the log was read again)
            grew = update.messages - state.available
            state = replace(state, session=session, timeline=message.timeline, constraints=message.rules, audit=message.audit,
                            available=update.messages)
            if update.reset:  # the matches were the log's as read before: / searches this one
                state = replace(state, search=None, search_index=-1)
            if state.follow or update.reset or update.subagents:
                # What is under the cursor changed: the view there is asked for again.
                state = replace(state, cursor=session.clamp(None if state.follow else state.cursor), revision=state.revision + 1)
            if update.reset:  # what is new is counted from the cursor again: the log before is gone
                state = replace(state, unseen=0 if state.follow or state.cursor is None else max(0, update.messages - state.cursor))
            elif not state.follow:  # (a sub-agent's change in the same update included)
                state = replace(state, unseen=state.unseen + max(0, grew))
            self.state = state
            if state.compaction is not None and state.cursor is not None and (update.reset or state.follow):
                # An open compaction view shows the compaction at or before the cursor: in a log read again (the
                # view was of the one before), or one that arrived while following.
                number = message.tracker.compaction_at(state.cursor)
                if number is None or update.reset:
                    self._change(compaction=None)
                if number is not None and (update.reset or number != state.compaction["number"]):
                    self.open_compaction(state.cursor)
            self._announce_alerts(change.alerts)
        if self._poll_again:
            self._poll_again = False
            self.set_timer(COALESCE_SECONDS, self._read_changes)
        else:
            self._polling = False


    def arrive(self, count: int) -> None:
        """``count`` more messages have arrived (the demo replay)."""
        session = self.session
        if session is None:
            return
        available = min(session.message_count, self.available + count)
        if available >= session.message_count and self._replay_timer is not None:
            self._replay_timer.stop()
            self._replay_timer = None
        cursor = available if self.follow or self.cursor is None else self.cursor
        self._change(available=available, cursor=cursor)
        self._announce_alerts()
