"""The one headless facade every front end uses: the TUI, ``check``, ``export`` and ``watch``.

A ``Tracker`` owns a session (read once, or followed while it grows) and decides
for all of them: which rules are in force and where each came from, the audit of
every compaction against them, which alerts are settled and which of those are
new since the last call, and the view at a cursor. Front ends only show what it
decided, so they cannot disagree.

A compaction is judged once its "after" window is complete: when the model has
been called after it, or when its summary is there (a finished log, or a live one
still waiting for the next call) — never on the bare boundary, so a live alert is
never contradicted by the next write.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.blame import Blame, GivenAgain
from ctxtop.context.audit.early import EarlyAudit
from ctxtop.context.audit.events import IMPLICIT_DROP
from ctxtop.context.audit.guard_marks import guard_alerts, hook_denied
from ctxtop.context.audit.pairs import SeenPair
from ctxtop.context.audit.run import Audit, CompactionAudit, run_audit
from ctxtop.context.audit.violations import violations
from ctxtop.context.output.compaction import compaction_view
from ctxtop.context.output.html import chart_columns, render_html
from ctxtop.context.output.redact import redact
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.constraints import KEPT, Constraint, WindowText, detect_constraints
from ctxtop.context.rules.pin_store import SavedPins, load_session_pins, save_session_pins
from ctxtop.context.rules.remembered import detected_constraints
from ctxtop.context.rules.selection import FROM_AUTO, RuleRequest, newly_stated, select_rules
from ctxtop.context.sanitize import quoted
from ctxtop.context.strategies import Preview, preview_all
from ctxtop.context.strategies.report import session_frame
from ctxtop.context.window.follow import LogFollower, Update
from ctxtop.context.window.replay import RUN_STEP, Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.timeline import TimelineView
from ctxtop.context.window.tokens import DEFAULT_ENCODING
from ctxtop.parsers.model import SUMMARY, TOOL_CALL

AlertKey = tuple[AlertKind, int, str | None]
MAX_SEARCH_MATCHES = 10_000


@dataclass(slots=True)
class View:
    """Everything shown for one message: the snapshot (breakdown, rules, alerts), the window and the previews."""

    at: int
    snapshot: dict[str, Any]
    window: Window
    previews: list[Preview]
    marked_blocks: set[int]  # blocks where a rule in force occurs verbatim


@dataclass(slots=True)
class CursorAlerts:
    """The failing alerts seen from a cursor: those raised at or before it, those still to come."""

    at: int
    here: list[Alert]
    later: list[Alert]
    story: Alert | None  # when the last of ``here`` is a violation: the loss it follows (``audit.blame``), put last if one does


@dataclass(slots=True)
class Change:
    """What one poll of a followed log brought: the log's update and the alerts it settled."""

    update: Update
    alerts: list[Alert] = field(default_factory=list)
    rules_changed: bool = False


def _rules_over(session: Session, request: RuleRequest, saved: SavedPins | None, detect: Callable[[], list[Constraint]]
                ) -> list[Constraint]:
    """The rules in force over the session's entries; ``detect``: its auto-detected rules (remembered or not)."""
    saved = saved or SavedPins()
    return select_rules(session.entries, request, saved.texts, frozenset(saved.hidden), session.format, detect=detect)


class Tracker:
    """A session, the rules in force over it, their audit and the alerts handed out so far."""

    def __init__(self, session: Session, request: RuleRequest = RuleRequest(), *, follower: LogFollower | None = None,
                 saved: SavedPins | None = None, audit: bool = True, processes: int = 1, early: EarlyAudit | None = None) -> None:
        """``saved``: the pins the user made in the TUI (None: no saved pins are used, as in ``check``).
        ``audit=False`` leaves the audit for ``run_audit`` (the TUI paints the window first).
        ``processes=2``: rule detection and audits fork a second process for half their work
        (``second_core``): for a caller with no other thread, such as a command that reads a log once.
        ``early``: the compactions forks audited while the log was read (``open``), taken by the first audit."""
        self.session = session
        self.processes = processes
        self.follower = follower
        self.request = request
        self.saved = saved
        self.lock: AbstractContextManager = follower.lock if follower is not None else nullcontext()
        self.warnings: list[str] = []  # one-line notes for the user (saved pins that could not be read…)
        self._audit_lock = threading.RLock()
        self.rules: list[Constraint] = []
        self.audit = Audit([], [], [])
        self._announced: set[AlertKey] = set()
        self._blame: Blame | None = None  # the losses behind the violations of ``audit``
        self._given: tuple[Session, GivenAgain] | None = None  # where the rules were given again, as far as read
        self._early = early
        self._last_prompt = session.reported_at(None) or 0  # for implicit compactions in a followed log
        self._last_prompt_of: dict[str | None, int] = {}  # ...measured against the same model's last call
        self._summaries_audited: list[tuple] = []  # the summarizing calls the audit priced its compactions by
        self._select_rules()
        if audit:
            self.run_audit()
        if self._early is not None:  # not taken (an audit recalled whole): not waited for either
            self._early.cancel()
            self._early = None

    @classmethod
    def open(cls, path: str, request: RuleRequest = RuleRequest(), *, format: str | None = None,
             encoding: str = DEFAULT_ENCODING, window: int | None = None, live: bool = False, saved_pins: bool = False,
             progress: Callable[[str, float], None] | None = None, audit: bool = True, processes: int = 1) -> Tracker:
        """Read (``live``: and follow) the log at ``path``. ``saved_pins``: also the pins made in the TUI for it.

        Raises what ``Session.open`` raises, and PinsError for an unusable pins file.
        """
        follower = None
        saved, warning = load_session_pins(path) if saved_pins else (None, None)
        # A whole log read with its audit right after, on two cores: audited in part while the read goes on,
        # and while the rules are picked after it.
        early = EarlyAudit(lambda read, known: _rules_over(read, request, saved,
                                                          lambda: detect_constraints(read.entries, read.format, known=known))
                           ) if audit and processes > 1 and not live else None
        try:
            if live:
                follower = LogFollower(path, format=format, encoding=encoding, window=window, progress=progress)
                session = follower.session
            else:
                session = Session.open(path, format=format, encoding=encoding, window=window, progress=progress,
                                       on_read=early.on_read if early is not None else None)
                if early is not None:
                    early.after_read(session)
            if progress is not None and audit:
                progress("audit", 0.0)  # (the rules and the audit come next: no fraction of them is known)
            tracker = cls(session, request, follower=follower, saved=saved, audit=audit, processes=processes, early=early)
        except BaseException:
            if early is not None:
                early.cancel()  # the read or the audit failed: no fork left running
            raise
        store = session.counter.store
        tracker.warnings += [w for w in (warning, store.warning if store is not None else None) if w]
        tracker.warnings += session.notices  # how the log was read (a damaged index rebuilt)
        return tracker

    @property
    def live(self) -> bool:
        return self.follower is not None

    def refine_history(self, should_stop: Callable[[], bool]) -> bool:
        """Make the history's estimated counts exact, a step at a time, then its timeline (the TUI does it
        when idle). True when the history changed; False when nothing was estimated, or when ``should_stop``
        said so first. Each step holds the lock a followed log's polls take, for about a tenth of a second."""
        session = self.session
        if not session.accounting.rough_blocks:
            return False
        while True:
            with self.lock:
                done = session.refine_step()
            if done:
                break
            if should_stop():
                return False
        if self.follower is not None:
            self.follower.replay_again()
        else:
            session.replay_again()
        return True

    # --- rules in force ---------------------------------------------------------------------------
    def _select_rules(self) -> None:
        with self.lock:
            session = self.session
            # While a fork still audits compactions from the read, the second core is taken.
            processes = 1 if self._early is not None and self._early.at_work() else self.processes
            # What the entries read before the last fork began state, as it found them: read from there on.
            known = self._early.detected(session) if self._early is not None else None
            self.rules = _rules_over(session, self.request, self.saved,
                                     lambda: detected_constraints(session.entries, session.format, session.accounting,
                                                                  session.counter.store, processes=processes, known=known))
            self._detected_to = len(self.session.entries)

    @property
    def auto_detects(self) -> bool:
        return self.request.auto_detects

    def pin(self, text: str) -> bool:
        """Add a rule pinned in the TUI (saved for the session); False when it is already in force."""
        text = text.strip()
        saved = self._saved()
        if not text or text in saved.texts or any(r.text == text for r in self.rules):
            return False
        saved.texts.append(text)
        self._rules_changed()
        return True

    def unpin(self, rule_id: str) -> str | None:
        """Remove a rule pinned in the TUI, or hide an auto-detected one for this session (undone by
        ``unhide``). Returns the rule's text, or None when the rule cannot be unpinned here."""
        saved = self._saved()
        rule = next((r for r in self.rules if r.id == rule_id), None)
        if rule is None:
            return None
        if rule.text in saved.texts:
            saved.texts.remove(rule.text)
        elif rule.source == FROM_AUTO:
            saved.hidden.append(rule.id)
        else:
            return None  # given on the command line or in a pins file: stays
        self._rules_changed()
        return rule.text

    def unhide(self) -> list[str]:
        """Bring back every auto-detected rule hidden for this session; returns their ids."""
        saved = self._saved()
        back, saved.hidden = saved.hidden, []
        if back:
            self._rules_changed()
        return back

    def _saved(self) -> SavedPins:
        if self.saved is None:
            self.saved = SavedPins()
        return self.saved

    def _rules_changed(self) -> None:
        """Save the session's pins (OSError goes to the caller, after the rules changed) and audit again."""
        self._select_rules()
        self.run_audit()
        if self.session.path is not None and self.saved is not None:
            save_session_pins(self.session.path, self.saved)

    # --- the audit ----------------------------------------------------------------------------------
    def run_audit(self, resume: bool = False) -> Audit:
        """Audit every compaction against the rules in force (``resume``: go on from the last audit)."""
        with self.lock, self._audit_lock:
            progress = self.audit.progress if resume else None
            self.audit = run_audit(self.session, self.rules, resume=progress, processes=self.processes,
                                   before_pairs=self._take_early_audit, while_reading=self._keep_early_audit_going)
            self._summaries_audited = self._summarizing_calls_made()
            # The loss behind each violation, worked out here (a worker, in the TUI), not when the banner asks.
            self._blame = Blame(self.audit.alerts, self.audit.compactions, self._given_again)
            return self.audit

    def _keep_early_audit_going(self) -> None:
        """While the audit reads the entries: once the fork auditing compactions from the read is done, another
        for those left (the second core would idle until the audit reaches the windows' text)."""
        if self._early is not None:
            self._early.after_read(self.session)

    def _take_early_audit(self) -> list[SeenPair]:
        """Stop the fork still auditing compactions from the read, if one is, and remember what the forks
        found: taken at the last moment, so that the rules and the audit's pass over the entries are done
        meanwhile. The pairs they audited, with their windows' keys."""
        early, self._early = self._early, None
        return early.join(self.session, self.session.counter.store) if early is not None else []

    def alerts(self, until: int | None = None) -> list[Alert]:
        """The settled alerts raised by messages up to ``until`` (all when None), in message order.

        A pin that the session never states is a finding of its own in a finished log (in a
        live one it may still be stated).
        """
        with self._audit_lock:
            audit, rules = self.audit, self.rules
        upto = len(self.session.entries) if until is None else until
        judged = {c.event.message for c in audit.compactions if self._judged(c, upto)}
        settled = [a for a in audit.alerts if a.message <= upto and (a.compaction is None or a.compaction in judged)]
        if not self.live:
            settled = [Alert(AlertKind.NEVER_STATED, 0, None, r.id, f"{quoted(r.text)} is never stated in the session")
                       for r in rules if r.source != FROM_AUTO and r.first_stated is None] + settled
        return settled

    def cursor_alerts(self, at: int, until: int | None = None) -> CursorAlerts:
        """What is lost or broken at message ``at`` (the banner), apart from what happens later up to ``until``."""
        failing = [a for a in self.alerts(until) if a.fails]
        # A rule a later compaction at or before ``at`` kept again (its summary states it, a re-injection) is no
        # longer lost here, as the window at ``at`` (the Constraints pane) says: its loss is history.
        kept_again: set[str] = set()
        for compaction in self.audit.compactions:
            if compaction.event.message <= at:
                for cid, (_, now) in compaction.constraints.items():
                    (kept_again.add if now.status == KEPT else kept_again.discard)(cid)
        here = [a for a in failing if a.message <= at and not (a.kind.rule_lost and a.constraint in kept_again)]
        story = self._told_last(here)
        return CursorAlerts(at, here, [a for a in failing if a.message > at], story)

    def _told_last(self, here: list[Alert]) -> Alert | None:
        """The loss the banner tells: the one behind the last alert of the latest message in ``here`` that follows
        a loss, which is moved last (the banner shows its detail). One message's alerts come in no telling order:
        one call may break a rule a compaction lost and another given since, and either may have come last."""
        if not here:
            return None
        latest = here[-1].message
        for position in range(len(here) - 1, -1, -1):
            if here[position].message != latest:
                break
            if (loss := self.loss_behind(here[position])) is not None:
                here.append(here.pop(position))
                return loss
        return None

    def loss_behind(self, violation: Alert) -> Alert | None:
        """The alert of the compaction that lost or weakened the rule ``violation`` broke, when the rule was not
        back in the window by then (``audit.blame``); None for any other alert."""
        with self._audit_lock:
            return self._blame.loss_behind(violation) if self._blame is not None else None

    def _given_again(self) -> dict[str, list[int]]:
        """Where each rule in force was given again word for word (``audit.blame``): read once, then as the log grows.
        (Asked by ``run_audit``, which holds the lock.)"""
        with self.lock:
            session = self.session
            if self._given is None or self._given[0] is not session or self._given[1].rules is not self.rules:
                self._given = (session, GivenAgain(self.rules))
            scan = self._given[1]
            scan.extend(session.entries, session.final_before())
            return scan.given

    def findings(self) -> list[Alert]:
        """The settled alerts that fail ``check``."""
        return [a for a in self.alerts() if a.fails]

    def new_alerts(self, until: int | None = None) -> list[Alert]:
        """Settled alerts not handed out by an earlier call (each front end keeps its own tracker)."""
        fresh = []
        for alert in self.alerts(until):
            key = (alert.kind, alert.message, alert.constraint)
            if key not in self._announced:
                self._announced.add(key)
                fresh.append(alert)
        return fresh

    def _judged(self, compaction: CompactionAudit, upto: int) -> bool:
        """Whether the window after ``compaction`` is complete among the first ``upto`` messages."""
        if compaction.event.kind == "implicit" or compaction.after_message < upto:
            return True  # (an implicit one is seen at the call after it; or the model was called since)
        if not self.live and upto >= len(self.session.entries):
            return True  # a finished log: what follows the boundary is all there will be
        entries = self.session.entries
        if compaction.event.message > min(upto, len(entries)):
            return False
        # A marker that brings its summary with it (Gemini CLI's compression, a Codex local compaction's history):
        # the window after it holds the summary at once, with no record to wait for.
        marker = entries[compaction.event.message - 1].compaction
        if marker is not None and any(block.category == SUMMARY for block in marker.replacement or ()):
            return True
        # (from the marker itself: an ADK compaction event is its summary)
        return any(block.category == SUMMARY for position in range(compaction.event.message - 1, min(upto, len(entries)))
                   for block in entries[position].blocks)

    # --- following a live log -------------------------------------------------------------------------
    def poll(self, changed: Iterable[str | os.PathLike] | None = None) -> Change | None:
        """Take in what the followed log appended: new rules, the audit of new entries, the alerts they settle.

        ``changed``: the paths a file watcher reported (see ``LogFollower.poll``; None: look at all).

        Raises SourceError when the file is gone or cannot be read any more.
        """
        assert self.follower is not None, "poll needs a tracker opened live"
        with self.lock:
            before = len(self.session.entries)
            update = self.follower.poll(changed)
            if update is None:
                return None
            self.session = self.follower.session
            if update.reread:
                self._select_rules()
                self.run_audit()
                self._last_prompt = self.session.reported_at(None) or 0
                self._last_prompt_of = {}
                if update.reset:
                    self._announced.clear()  # a log read again from its start: its alerts are news again
                return Change(update, self.new_alerts(), rules_changed=True)
            fresh_rules = newly_stated(self.session.entries, self._detected_to, self.rules,
                                       frozenset(self._saved().hidden), self.session.format) if self.auto_detects else []
            self._detected_to = len(self.session.entries)
            if fresh_rules:
                self.rules = self.rules + fresh_rules
                self.run_audit()
            elif update.subagents and self._summarizing_calls_made() != self._summaries_audited:
                self.run_audit()  # from the start: a resumed audit keeps the cost of a compaction it audited
            elif self._compacts(before) or self._after_window_open(before):
                # A compaction (marked, or a drop in reported usage), or one whose "after" window was
                # still arriving: audit it now, going on from the last audit.
                self.run_audit(resume=True)
            else:
                appended = self.session.entries[before:]
                marks = guard_alerts(appended)
                if any(mark.kind is AlertKind.GUARD_BLOCKED for mark in marks) or any(hook_denied(b) for e in appended for b in e.blocks):
                    self.run_audit(resume=True)  # a call a hook denied: its violations are taken back (audit.run)
                elif self.audit.compactions and any(b.category == TOOL_CALL for e in appended for b in e.blocks):
                    # A call after the last compaction may be the one that makes its drift (the same call
                    # repeated): that drift is not final until the next compaction, so audit on from there.
                    self.run_audit(resume=True)
                else:
                    with self._audit_lock:
                        self.audit.alerts.extend(violations(appended, self.rules) + marks)
            return Change(update, self.new_alerts(), rules_changed=bool(fresh_rules))

    def _summarizing_calls_made(self) -> list[tuple]:
        """The compaction sub-agents' calls (their summarizing calls) made up to the last compaction in the audit.

        One that comes later than its compaction (the sub-agent's transcript copied or synced after the log) changes
        that compaction's cost. The usual one, written just before its compaction's record, belongs to no audited
        compaction yet and is left out: it costs no audit of its own."""
        subagents, compactions = self.session.subagents, self.audit.compactions
        if subagents is None or not compactions:
            return []
        position = compactions[-1].event.message - 1
        recorded = self.session.entries[position].timestamp if position < len(self.session.entries) else None
        return [call for call in subagents.summarizing_calls() if recorded and call[0] <= recorded]

    def _after_window_open(self, before: int) -> bool:
        """Whether the last audit took a compaction's "after" window at the end of the log (no model
        call after it yet): ``before`` is how many entries there were then."""
        return any(c.after_message >= before and c.event.kind != "implicit" for c in self.audit.compactions[-1:])

    def _compacts(self, before: int) -> bool:
        """Whether the entries from ``before`` on hold a compaction marker or a drop in reported usage
        (each entry looked at once: the last prompt size seen is kept from poll to poll)."""
        found = False
        for entry in self.session.entries[max(0, before - 1):]:
            if entry.compaction is not None:
                found = True
            if entry.usage is not None:
                prompt = entry.usage.prompt_tokens
                for last in (self._last_prompt, self._last_prompt_of.get(entry.model, 0)):
                    if last and prompt < last * (1 - IMPLICIT_DROP):
                        found = True  # a compaction, or a model switch or resume to note: the audit tells
                self._last_prompt = self._last_prompt_of[entry.model] = prompt
        return found

    def timeline(self) -> TimelineView:
        """Window tokens per message, with every compaction the audit lists marked: the implicit ones too."""
        with self.lock:
            points = self.follower.points if self.follower is not None else self.session.timeline()
        implicit = [c.event.message - 1 for c in self.audit.compactions if c.event.kind == "implicit"]
        return points.with_marks(implicit) if implicit else points

    # --- the view at a cursor -----------------------------------------------------------------------
    def window_at(self, at: int | None) -> Window:
        with self.lock:
            if self.follower is not None:
                return self.follower.window_at(self.session.clamp(at))
            return self.session.window_at(at)

    def snapshot(self, at: int | None = None, *, strategies: Sequence[str] | None = None, budget: int | None = None) -> dict[str, Any]:
        """The ``export`` snapshot at ``at`` (the latest when None), with the rules in force and their audit."""
        with self.lock:
            message = self.session.clamp(at)
            return build_snapshot(self.session, message, self.rules, self.audit, alerts=self.alerts(message),
                                  strategies=list(strategies) if strategies is not None else None, budget=budget,
                                  window=self.window_at(message), session_tools=True)

    def compaction_view(self, number: int) -> dict[str, Any]:
        """What compaction ``number`` (1-based, in message order) did: see ``output.compaction``.

        Raises IndexError when the session has no such compaction.
        """
        with self.lock:
            compactions = self.audit.compactions
            if not 1 <= number <= len(compactions):
                has = f"{len(compactions)} compaction(s), 1 to {len(compactions)}" if compactions else "no compaction"
                raise IndexError(f"compaction {number}: the session has {has}")
            audit = compactions[number - 1]
            before, after = self.window_at(audit.event.message - 1), self.window_at(audit.after_message)
            followed = [a for a in self.alerts() if (loss := self.loss_behind(a)) is not None and loss.compaction == audit.event.message]
            return compaction_view(number, audit, before, after, self.rules, followed)

    def report_html(self, at: int | None = None, *, redacted: bool = False) -> str:
        """The shareable HTML report (``export --format html``): the snapshot at ``at``, the timeline and every
        compaction; ``redacted``: secrets and personal data masked, as ``--redact`` does elsewhere."""
        with self.lock:
            snapshot = self.snapshot(at)
            views = [self.compaction_view(number) for number in range(1, len(self.audit.compactions) + 1)]
            columns = chart_columns(self.timeline())
        if redacted:
            snapshot, views = redact(snapshot), redact(views)
        return render_html(snapshot, columns, views)

    def search(self, query: str, until: int | None = None, most: int = MAX_SEARCH_MATCHES) -> list[tuple[int, int]]:
        """Where ``query`` occurs (case aside) in the messages up to ``until``: (message, block) pairs in order,
        ``most`` at the most. Texts released after counting are read back from the log."""
        needle = query.casefold()
        matches: list[tuple[int, int]] = []
        if not needle:
            return matches
        with self.lock:
            entries = self.session.entries
            stop = len(entries) if until is None else min(until, len(entries))
            for start in range(0, stop, RUN_STEP):  # a slice at a time: a packed store unpacks what is sliced
                for entry in entries[start : min(stop, start + RUN_STEP)]:
                    matches += [(entry.index, position) for position, block in enumerate(entry.blocks) if needle in block.text.casefold()]
                if len(matches) >= most:
                    return matches[:most]
        return matches

    def compaction_at(self, message: int) -> int | None:
        """The number of the compaction at ``message`` (or the last one before it), or None."""
        marks = [c.event.message for c in self.audit.compactions]
        return max((n for n, m in enumerate(marks, 1) if m <= message), default=None)

    def view(self, at: int) -> View:
        """The view at message ``at``: one pass over the window's text serves the rules and the previews."""
        with self.lock:
            rules, audit = self.rules, self.audit
            window = self.window_at(at)
            text = WindowText(window) if rules else None
            snapshot = build_snapshot(self.session, at, rules, audit, alerts=self.alerts(at), window=window, window_text=text)
            frame = session_frame(self.session, at, rules, window=window, text=text)
            previews = preview_all(frame)
            marked = {i for found in frame.occurrences.values() for i in found.verbatim}
        return View(at, snapshot, window, previews, marked)
