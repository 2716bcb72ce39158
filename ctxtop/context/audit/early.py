"""Compactions audited in forks while the log is still being read, and while the audit here gets ready.

A cold read of a whole log (``export``, ``check``) parses and counts on one core, and the audit
after it reads the text of every compaction's windows. Forks use the machine's second core meanwhile:

- As soon as a compaction's two windows are final (``Session.final_before``), a fork audits the
  compactions final by then, with the rules in force as far as the read has come, while the read
  goes on here; when it is done and the read is not, another takes those final since (each more
  than the last, as the forks' work grows with what was read meanwhile).
- Once the read is over, as soon as the last is done, a fork audits every compaction not audited
  yet, the last one first, while this process picks the rules and makes the audit's pass over the
  entries.

``join`` stops the fork at work after the pair it is auditing, when the audit here reaches the windows'
text, so that each core has about as much left. One fork at a time: a fork waiting beside one at work
would hold a second copy of every page this process changes meanwhile (about 75 MB more at 200 MB).

Each fork posts the rules the entries final at its start state (``second_core.Posted``) as soon as it
has them: the next fork, and the rule detection here after the read, go on from there, reading only the
entries since.

What they found joins the audit cache under each pair's key (what both windows hold, the rules
judged, the compaction), so the audit after the read takes exactly the pairs that are the same and
audits the rest itself: a rule first stated later, say, changes a pair's key, never its result. A
fork that is not made, or dies, costs the time it would have saved, nothing else.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from dataclasses import dataclass

from ctxtop.context import second_core
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.audit.events import after_message
from ctxtop.context.audit.pairs import CollectingCache, SeenPair, audit_one_by_one, audited_at, remember_sent
from ctxtop.context.rules.constraints import Constraint, Detected, detected_to
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.session import Session

# A log whose first part read reaches this far (a small log read in one part, a warm open that reads only
# what was appended) is left to the audit after the read: it is short, or recalled whole.
START_BEFORE = 0.8

Pair = tuple[int, int]  # (compaction message, the message whose window counts as "after")
Sent = tuple[list[SeenPair], list]  # the pairs a fork audited, and what its audit cache was given
# The rules in force over the entries read (``Session``), given what the first of them state (``Detected``, or None).
RulesOf = Callable[[Session, Detected | None], list[Constraint]]


@dataclass(slots=True)
class _Running:
    forked: second_core.Forked[Sent]
    pairs: list[Pair]
    stop: mmap.mmap  # shared with the fork: non-zero once it should stop
    detected: second_core.Posted[Detected]  # what the entries final at its start state, once it has read them
    resets: int  # the session's replay resets when it was made

    def close(self) -> None:
        """Unmap what it shares with the fork (the fork is done, or killed)."""
        self.stop.close()
        self.detected.close()


class EarlyAudit:
    """Told of the read by ``Session.open`` (``on_read``) and of its end (``after_read``); ``join`` before the
    audit takes what the forks found.

    ``rules_of(session, known)``: the rules in force over the entries read so far, as the audit after the read
    picks them, detected from ``known`` on (run in the forks: it must not write anything, nor use the
    persistent cache). ``detected`` tells the detection after the read where to go on from."""

    def __init__(self, rules_of: RulesOf) -> None:
        self._rules_of = rules_of
        # Whether forks are made: for a log read from (near) its start (known at the first part read), until one dies.
        self._forking: bool | None = None
        self._running: _Running | None = None  # one fork at a time: on the second core, and in memory
        self._given: set[int] = set()  # the compactions given to a fork, less those a fork taken did not audit
        self._sent: list[tuple[Sent, int]] = []  # what the forks taken sent, with the replay resets when each was made
        self._detected: tuple[Detected, int] | None = None  # the latest posted, with the replay resets when its fork was made

    def on_read(self, session: Session, fraction: float) -> None:
        """``Session.open``'s ``on_read``: a fork for the pairs final so far, when none is at work."""
        if self._forking is None:
            self._forking = fraction < START_BEFORE
        if self._forking:
            self._next_fork(session, latest_first=False)

    def after_read(self, session: Session) -> None:
        """Called once the log is read whole, and again now and then until ``join``: unless a fork is still at
        work, one for every pair not given to a fork yet, the latest first."""
        self._next_fork(session, latest_first=True)

    def _next_fork(self, session: Session, *, latest_first: bool) -> None:
        """A fork for the pairs not given yet, once the last one is done (and did not die)."""
        if self.at_work():
            return
        self._take(stop=False)
        if self._forking:
            self._start(session, latest_first=latest_first)

    def detected(self, session: Session) -> Detected | None:
        """The rules the most entries final so far state, as the last fork posted them, if it did and they
        are still final (no replay went back before their end since)."""
        if self._running is not None:
            self._keep_posted(self._running)
        if self._detected is None:
            return None
        known, resets = self._detected
        return known if session.unchanged_before(known.entries, resets) else None

    def _keep_posted(self, running: _Running) -> None:
        """What ``running`` posted, if it has, as the latest to go on from."""
        if (posted := running.detected.read()) is not None:
            self._detected = posted, running.resets

    def at_work(self) -> bool:
        """Whether a fork is still auditing (the second core is taken)."""
        return self._running is not None and not self._running.forked.has_sent()

    def _start(self, session: Session, *, latest_first: bool) -> None:
        pairs = self._pairs_to_give(session)
        if not pairs:
            return
        if latest_first:
            pairs.reverse()
        rules_of, stop, known, detected = self._rules_of, mmap.mmap(-1, 1), self.detected(session), second_core.Posted[Detected]()
        forked = second_core.start_in_fork(lambda: _audit_in_fork(session, pairs, rules_of, stop, known, detected))
        if forked is None:
            self._forking = False  # (none can be made here)
            stop.close()
            detected.close()
        else:
            self._given.update(message for message, _ in pairs)
            self._running = _Running(forked, pairs, stop, detected, len(session.replay_resets))

    def _pairs_to_give(self, session: Session) -> list[Pair]:
        """The pairs not given to a fork yet whose two windows are final, in order."""
        final, entries = session.final_before(), session.entries
        pairs = []
        for position in session.history.compaction_markers():
            message = position + 1
            if message in self._given:
                continue
            if position >= final:
                break
            after = after_message(entries, message)
            if after >= final:
                break
            pairs.append((message, after))
        return pairs

    def join(self, session: Session, store: TokenCache | None) -> list[SeenPair]:
        """Stop the fork at work after its pair, wait for it and remember what the forks audited (in ``store``
        too, when there is one); the pairs they audited whose windows are still final (no replay went back
        before their end since), with their windows' keys."""
        self._take(stop=True)
        sent, self._sent = self._sent, []
        cache = AuditCache(store)
        seen = []
        for (audited, collected), resets in sent:
            remember_sent(cache, collected)
            seen += [pair for pair in audited if session.unchanged_before(pair[1], resets)]
        return seen

    def cancel(self) -> None:
        """Stop the fork, if one is at work (the read failed: nothing will be audited)."""
        running, self._running, self._sent = self._running, None, []
        if running is not None:
            running.forked.cancel()
            running.close()

    def _take(self, *, stop: bool) -> None:
        """Wait for the fork at work, if any (``stop``: told to stop after its pair first), and keep what it
        sent; the pairs it did not audit may be given again. A fork that died sent nothing, and no other is
        made (what kills one would kill the next: the audit here does their pairs)."""
        running, self._running = self._running, None
        if running is None:
            return
        if stop:
            running.stop[0] = 1
        sent = running.forked.result()
        self._keep_posted(running)
        running.close()
        if sent is None:
            self._forking = False
            return
        self._given -= {message for message, _ in running.pairs} - {message for message, *_ in sent[0][0]}
        self._sent.append((sent[0], running.resets))


def _audit_in_fork(session: Session, pairs: list[Pair], rules_of: RulesOf, stop: mmap.mmap, known: Detected | None,
                   detected: second_core.Posted[Detected]) -> Sent:
    """In a fork: what the entries final now state posted to ``detected`` (from ``known`` on), then ``pairs``
    audited in their order, until ``stop`` is set."""
    if stop[0]:
        return [], []  # stopped as soon as made: the rules are not worth picking
    final = detected_to(session.entries, session.final_before(), session.format, known)
    detected.post(final)
    rules = rules_of(session, final)
    collecting = CollectingCache()
    jobs = [(message, after, audited_at(rules, message)) for message, after in pairs]
    audited = audit_one_by_one(session, jobs, collecting, should_stop=lambda: bool(stop[0]))
    return audited, collecting.collected
