"""The compaction audit: what each compaction did to the constraints and the facts.

For every compaction (explicit markers, and implicit ones: the reported prompt
falling by more than 30% between two model calls with no marker), compare the
window just before with the window the model sees at its first call after:
constraint status before → after, facts that vanished, and the drift that
follows (the agent re-running calls and re-reading files it already had).
Tool calls are also checked against what each constraint forbids. One pass over
the entries serves all of it; the parts live beside this module (events, lost,
drift, violations).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.audit.drift import Call, DriftScan, call_of, input_data
from ctxtop.context.audit.events import EventScan, after_message
from ctxtop.context.audit.forensics import AFTERMATH_MESSAGES, build_forensics, generation_of
from ctxtop.context.audit.forensics.actions import Action, action_of
from ctxtop.context.audit.forensics.history import History
from ctxtop.context.audit.guard_marks import guard_alert, hook_blocked, hook_denied
from ctxtop.context.audit.pairs import SeenPair, audit_pairs, audited_at
from ctxtop.context.audit.remembered import RememberedAudit
from ctxtop.context.audit.violations import checks_of, violations_of
from ctxtop.context.rules.constraints import KEPT, LOST, PARAPHRASED, Constraint, Status
from ctxtop.context.sanitize import quoted
from ctxtop.context.window.replay import RUN_STEP
from ctxtop.context.window.session import CompactionEvent, Session
from ctxtop.parsers.model import ASSISTANT, INJECTED, REASONING, TOOL_CALL, TOOL_RESULT, Entry, Usage

NOTE_CHARS = 600  # of each thing the agent says after a compaction, for the forensics
FIRST_CALL_SEARCH = 200  # entries past the "after" window in which the first call's usage is looked for (a turn's items)


@dataclass(slots=True)
class CompactionAudit:
    event: CompactionEvent
    after_message: int  # the message whose window counts as "after"
    constraints: dict[str, tuple[Status, Status]] = field(default_factory=dict)
    lost_items: dict[str, list[str]] = field(default_factory=dict)
    drift: dict[str, Any] = field(default_factory=dict)
    forensics: dict[str, Any] = field(default_factory=dict)  # the README's snapshot schema (audit/forensics)


@dataclass(slots=True)
class Audit:
    constraints: list[Constraint]
    compactions: list[CompactionAudit]
    alerts: list[Alert]
    progress: AuditProgress | None = field(default=None, compare=False, repr=False)  # to go on from (run_audit's ``resume``)


class _Reading:
    """What one pass over the entries found (compactions, tool calls, violations), resumable.

    A followed log's audit goes on from the reading of the previous one instead
    of reading the whole history again at every compaction that arrives.
    """

    def __init__(self, checks: list, opening_call_reports_more: bool = False) -> None:
        self.position = 0  # entries read
        self.events = EventScan(opening_call_reports_more)
        self.calls: list[Call] = []
        self.violated: list[Alert] = []
        self.checks = checks
        # For the forensics: the reads, searches, changes and checks the agent made (with whether
        # they failed), and what it said in the first messages after each compaction.
        self.actions: list[Action] = []
        self.waiting: dict[str, Action] = {}  # tool call id → its action, until its result comes
        self.notes: list[tuple[int, str]] = []
        # A call ctxtop's PreToolUse hook (or any hook) denied never ran: its result (an error carrying the
        # denial) takes back the violations the call raised, and a guard_blocked (hook_blocked) note stands in their place.
        self.call_violations: dict[str, list[Alert]] = {}  # tool call id → the violations it raised

    def copy(self) -> _Reading:
        twin = _Reading(self.checks, self.events.opening_call_reports_more)
        twin.position, twin.calls, twin.violated, twin.events = self.position, list(self.calls), list(self.violated), self.events.copy()
        twin.actions, twin.waiting, twin.notes = list(self.actions), dict(self.waiting), list(self.notes)
        twin.call_violations = dict(self.call_violations)
        return twin

    def read(self, entries: Sequence[Entry], stop: int, between: Callable[[], None] | None = None) -> None:
        """Go on reading up to position ``stop`` (``between``: called after each slice of entries)."""
        checks = self.checks
        while self.position < stop:
            if between is not None and self.position:
                between()
            # A slice at a time: a packed store unpacks what is sliced, all of it at once.
            for entry in entries[self.position : min(stop, self.position + RUN_STEP)]:
                self.events.see(entry)
                events = self.events.events
                aftermath = bool(events) and 0 < entry.index - events[-1].message <= AFTERMATH_MESSAGES
                for block in entry.blocks:
                    category = block.category
                    if category == TOOL_CALL:
                        text = block.text  # read once: a released input comes back from the log
                        data = input_data(text)  # (decoded once, for the drift scan and the forensics)
                        call = call_of(entry.index, block.tool_name, text, data)
                        self.calls.append(call)
                        action = action_of(entry.index, block.tool_name, text, call.key, data)
                        if action is not None:
                            self.actions.append(action)
                            if block.tool_id:
                                self.waiting[block.tool_id] = action
                        if checks:
                            broken = violations_of(entry.index, block, text, checks)
                            self.violated += broken
                            if broken and block.tool_id:
                                self.call_violations[block.tool_id] = broken
                    elif category == TOOL_RESULT:
                        waited = self.waiting.pop(block.tool_id, None) if block.tool_id else None
                        if block.is_error:
                            if waited is not None:
                                waited.failed = True
                            mark = guard_alert(entry.index, block)
                            if mark is None and block.tool_id in self.call_violations and hook_denied(block):
                                mark = hook_blocked(entry.index, self.call_violations[block.tool_id])
                            if mark is not None:
                                if mark.kind in (AlertKind.GUARD_BLOCKED, AlertKind.HOOK_BLOCKED) and block.tool_id:
                                    stopped = self.call_violations.pop(block.tool_id, [])
                                    self.violated = [a for a in self.violated if not any(a is s for s in stopped)]
                                self.violated.append(mark)
                    elif category == INJECTED:
                        if (mark := guard_alert(entry.index, block)) is not None:
                            self.violated.append(mark)
                    elif aftermath and category in (ASSISTANT, REASONING):
                        self.notes.append((entry.index, block.text[:NOTE_CHARS]))
                self.position += 1


@dataclass(slots=True)
class AuditProgress:
    """Where an audit of a session may go on from: its reading of the entries that were final then
    (``Session.final_before``), and the compactions audited wholly within them."""

    session: Session
    constraints: list[Constraint]
    reading: _Reading
    resets: int  # Session.replay_resets seen
    pairs: dict[tuple[int, int], tuple[dict[str, tuple[Status, Status]], dict[str, list[str]], dict[str, Any]]]
    afters: dict[int, int]  # compaction message → its "after" message, where that is final
    drifts: dict[tuple[int, int], dict[str, Any]]  # (compaction, next compaction) → drift, where both are final
    drift_state: tuple[Counter, set[str], int] | None = None  # the running count of calls before the first drift not final
    forensics: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)  # (compaction, next) → forensics, where final
    history: History | None = None  # the actions counted before the first compaction whose forensics are not final
    generations: list[tuple[int, int]] = field(default_factory=list)  # (compaction, generation), where final

    def valid_for(self, session: Session, constraints: list[Constraint]) -> bool:
        return (session is self.session and constraints == self.constraints
                and session.unchanged_before(self.reading.position, self.resets))


def run_audit(session: Session, constraints: list[Constraint], resume: AuditProgress | None = None, *,
              processes: int = 1, before_pairs: Callable[[], Collection[SeenPair]] | None = None,
              while_reading: Callable[[], None] | None = None) -> Audit:
    """Audit every compaction of ``session``. ``resume``: the progress of an earlier audit of the same
    session (``Audit.progress``), so that only what came since is read. ``processes=2``: the windows'
    text read on two cores (``pairs.audit_pairs``: only from a process with no other thread).
    ``before_pairs``: called before the windows' text is read; results it puts in the audit cache are used,
    and it returns the pairs it put there, with their windows' keys (``pairs.audit_pairs``'s ``seen``).
    ``while_reading``: called now and then during the pass over the entries before it (a caller keeps its
    second core busy meanwhile)."""
    remembered = RememberedAudit(session, constraints) if resume is None else None
    if remembered is not None and (recalled := remembered.recall()) is not None:
        rows, recalled_alerts = recalled
        return Audit(constraints, [CompactionAudit(*row) for row in rows], recalled_alerts)
    entries = session.entries
    final = session.final_before()
    if resume is not None and resume.valid_for(session, constraints):
        reading, pairs, afters, drift_done = resume.reading.copy(), dict(resume.pairs), dict(resume.afters), dict(resume.drifts)
        drift_state = resume.drift_state
        forensics_done, history_state = dict(resume.forensics), resume.history
    else:
        reading, pairs, afters, drift_done, drift_state = _Reading(checks_of(constraints), session.parser.opening_call_reports_more), {}, {}, {}, None
        forensics_done, history_state = {}, None
    # One pass over the entries for the compactions, the tool calls (drift) and the violations:
    # a packed session unpacks its entries again for every pass.
    reading.read(entries, final, while_reading)
    progress = AuditProgress(session, list(constraints), reading.copy(), len(session.replay_resets), pairs, afters, drift_done,
                             forensics=forensics_done)
    reading.read(entries, len(entries), while_reading)  # the rest, which may still change: not kept for next time
    scan, drifts, violated = reading.events, DriftScan(reading.calls), reading.violated
    if drift_state is not None:
        drifts.restore(drift_state)  # the calls before the first drift still to work out, counted
    history = history_state.copy(reading.actions) if history_state is not None else History(reading.actions)
    generations: list[tuple[int, int]] = []
    summarizing_calls = session.subagents.summarizing_calls() if session.subagents is not None else []
    plans = [(e, afters.get(e.message) or after_message(entries, e.message)) for e in scan.events]
    afters.update((e.message, after) for e, after in plans if after < final)  # (read by position: unpacks)
    # The windows' text first, every pair still to audit at once (results are small; the windows are not
    # held past their pair); then the rest, compaction by compaction, from the results.
    jobs = [(e.message, after, audited_at(constraints, e.message)) for e, after in plans
            if e.kind != "implicit" and (e.message, after) not in pairs]
    seen = before_pairs() if before_pairs is not None else ()
    audited_pairs = audit_pairs(session, jobs, AuditCache(session.counter.store), from_checkpoints=resume is not None,
                                processes=processes, seen=seen)
    alerts: list[Alert] = []
    audits = []
    seen_statuses: dict[tuple, Status] = {}

    def shared(status: Status) -> Status:
        return seen_statuses.setdefault((status.status, tuple(status.found_in), tuple(status.missing_facts)), status)

    for index, (event, after) in enumerate(plans):
        audit = CompactionAudit(event, after)
        statuses: dict[str, tuple[Status, Status]] = {}
        facts: dict[str, Any] = {}
        pair = (event.message, after)
        if event.kind == "implicit":
            alerts.append(Alert(AlertKind.IMPLICIT_COMPACTION, event.message, event.message, None,
                                f"reported context fell from {event.pre_tokens:,} to {event.post_tokens:,} tokens with no compaction marker"))
        elif pair in pairs or pair in audited_pairs:
            audited = audited_at(constraints, event.message)
            if pair in pairs:
                statuses, audit.lost_items, facts = pairs[pair]
            else:
                statuses, audit.lost_items, facts = audited_pairs[pair]
                if after < final:  # both windows final: never to be audited again while following
                    progress.pairs[pair] = (statuses, audit.lost_items, facts)
            # The same status recurs at most compactions (a rule lost long ago stays lost): hold it once.
            audit.constraints = {cid: (shared(before), shared(after)) for cid, (before, after) in statuses.items()}
            for constraint in audited:
                before, after_status = audit.constraints[constraint.id]
                if _worse(before.status, after_status.status):
                    missing = f"; missing {', '.join(after_status.missing_facts)}" if after_status.missing_facts else ""
                    alerts.append(Alert(AlertKind.for_status(after_status.status), event.message, event.message, constraint.id,
                                        f"{quoted(constraint.text)}: {before.status} → {after_status.status}{missing}"))
        next_message = plans[index + 1][0].message if index + 1 < len(plans) else len(entries) + 1
        generation = generation_of(facts.get("summaries_before", []), generations)
        generations.append((event.message, generation))
        known_forensics = forensics_done.get((event.message, next_message))
        if known_forensics is not None:
            audit.forensics = known_forensics
        else:
            if progress.history is None:
                # The first forensics that may still change: the next audit goes on from the actions before it.
                history.advance_to(event.message)
                progress.history = history.copy(history.actions)
            audit.forensics = build_forensics(
                constraints=audited if event.kind != "implicit" else [], statuses=statuses, compaction=event.message,
                next_compaction=next_message, generation=generation, lost_items=audit.lost_items, facts=facts, history=history,
                notes=_notes_between(reading.notes, event.message, next_message), first_call=_first_call(entries, event, after),
                model=_model_after(entries, event, after) or session.model, pre_tokens=event.pre_tokens,
                summarizing_call=_summarizing_call(summarizing_calls, entries, plans, index), kind=event.kind)
            if next_message <= final and after < final:
                forensics_done[(event.message, next_message)] = audit.forensics
        known_drift = drift_done.get((event.message, next_message))
        if known_drift is not None:
            audit.drift = dict(known_drift)
        else:
            drift_final = next_message <= final
            if not drift_final and progress.drift_state is None:
                # The first drift that may still change: the next audit goes on from here.
                drifts.advance_to(event.message)
                progress.drift_state = drifts.state()
            audit.drift = drifts.between(event.message, next_message)
            if drift_final:
                drift_done[(event.message, next_message)] = dict(audit.drift)
        for (name, _key), count in audit.drift.pop("_repeats").items():
            alerts.append(Alert(AlertKind.DRIFT, event.message, event.message, None, f"{name} called {count} times after the compaction with the same input"))
        audits.append(audit)
    alerts += violated
    alerts += [Alert(drop.kind, drop.message, None, None, drop.detail) for drop in scan.drops]
    alerts.sort(key=lambda a: (a.message, a.kind.key))
    if remembered is not None:
        remembered.keep(audits, alerts)
    return Audit(constraints, audits, alerts, progress)


def _worse(before: str, after: str) -> bool:
    """Whether a compaction made a rule's hold on the window worse: a rule kept verbatim that is no longer, or one
    held only paraphrased that is now gone (a rule weakened at one compaction and dropped at a later one is told at
    each)."""
    return (before == KEPT and after != KEPT) or (before == PARAPHRASED and after == LOST)


def _first_call(entries: Sequence[Entry], event: CompactionEvent, after: int) -> Usage | None:
    """The usage of the model's first call after the compaction (an implicit one is that call).

    Claude Code logs a call's usage on its reply; Codex on whatever item came last when the call
    ended (its last tool call, or the user's message when it answered nothing): the first usage
    logged after the compaction's marker, before any later compaction."""
    if event.kind == "implicit":
        position = event.message - 1
        return entries[position].usage if position < len(entries) else None  # (by position: a store unpacks only what is read)
    for position in range(event.message, min(len(entries), max(after, event.message) + FIRST_CALL_SEARCH)):
        entry = entries[position]
        if entry.usage is not None:
            return entry.usage
        if entry.compaction is not None:
            return None
    return None


def _summarizing_call(calls: list[tuple[str, str, Usage]], entries: Sequence[Entry],
                      plans: list[tuple[CompactionEvent, int]], index: int) -> tuple[str, Usage] | None:
    """The logged call that wrote compaction ``index``'s summary: the last compaction sub-agent's call
    made after the compaction before it was recorded and no later than this one."""
    event = plans[index][0]
    if not calls or event.kind == "implicit":
        return None
    recorded = entries[event.message - 1].timestamp
    previous = entries[plans[index - 1][0].message - 1].timestamp if index > 0 else None
    if not recorded:
        return None
    found = [(f"agent-{agent}", usage) for at, agent, usage in calls if at <= recorded and (previous is None or at > previous)]
    return found[-1] if found else None


def _model_after(entries: Sequence[Entry], event: CompactionEvent, after: int) -> str | None:
    position = event.message - 1 if event.kind == "implicit" else after
    return entries[position].model if position < len(entries) else None


def _notes_between(notes: list[tuple[int, str]], start: int, stop: int) -> list[tuple[int, str]]:
    first = bisect_right(notes, start, key=lambda note: note[0])
    return [note for note in notes[first:first + 4 * AFTERMATH_MESSAGES] if note[0] < stop]
