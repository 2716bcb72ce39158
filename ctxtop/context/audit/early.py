"""Compactions audited in forks while the log is still being read, and while the audit here gets ready.

A cold read of a whole log (``export``, ``check``) parses and counts on one core, and the audit
after it reads the text of every compaction's windows. Forks use the machine's second core meanwhile,
one at a time:

- From START_AT of the read on, a fork audits the compactions whose two windows are final by then
  (``Session.final_before``), with the rules in force as far as the read has come, while the read
  goes on here; when it is done and the read is not, another takes those final since.
- Once the read is over, a last fork audits the latest compactions, the last one first, while this
  process picks the rules and makes the audit's pass over the entries.

``join`` stops them after the pair each is auditing, when the audit here reaches the windows' text,
so that each core has about as much left. What they found joins the audit cache under each pair's key
(what both windows hold, the rules judged, the compaction), so the audit after the read takes exactly
the pairs that are the same and audits the rest itself: a rule first stated later, say, changes a
pair's key, never its result. A fork that is not made, or dies, costs the time it would have saved,
nothing else.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable

from ctxtop.context import second_core
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.audit.events import after_message
from ctxtop.context.audit.pairs import CollectingCache, audit_one_by_one, audited_at, remember_sent
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.session import Session

# Of the log's bytes, found by measurement (generated 50 and 200 MB sessions of both formats): before, too
# few compactions are final for a fork to be worth making.
START_AT = 0.3
# A log whose first part read reaches this far (a small log read in one part, a warm open that reads only
# what was appended) is left to the audit after the read: it is short, or recalled whole.
START_BEFORE = 0.8

Pair = tuple[int, int]  # (compaction message, the message whose window counts as "after")
Sent = tuple[list[int], list]  # the compactions a fork audited, and what its audit cache was given


class EarlyAudit:
    """Told of the read by ``Session.open`` (``on_read``) and of its end (``after_read``); ``join`` before the
    audit takes what the forks found.

    ``rules_of(session)``: the rules in force over the entries read so far, as the audit after the read
    picks them (run in the forks: it must not write anything, nor use the persistent cache)."""

    def __init__(self, rules_of: Callable[[Session], list[Constraint]]) -> None:
        self._rules_of = rules_of
        self._cold: bool | None = None  # read from (near) its start: known at the first part read
        self._forks: list[second_core.Forked[Sent]] = []  # started, their results not taken yet (the last may wait for the one before)
        self._given: set[int] = set()  # the compactions given to a fork
        self._sent: list[Sent] = []  # what the forks that are done sent
        self._stop = mmap.mmap(-1, 1)  # shared with the forks: non-zero once they should stop

    def on_read(self, session: Session, fraction: float) -> None:
        """``Session.open``'s ``on_read``: a fork for the pairs final so far, when none is running."""
        if self._cold is None:
            self._cold = fraction < START_BEFORE
        if not self._cold or fraction < START_AT:
            return
        if self._forks:
            if not self._forks[-1].has_sent():
                return
            self._take_all()
        self._start(session, latest_first=False)

    def after_read(self, session: Session) -> None:
        """Called once the log is read whole: a fork for the pairs still not given, the latest first."""
        if self._cold:
            self._start(session, latest_first=True)

    def _start(self, session: Session, *, latest_first: bool) -> None:
        pairs = self._pairs_to_give(session)
        if not pairs:
            return
        self._given.update(message for message, _ in pairs)
        if latest_first:
            pairs.reverse()
        waits_for, rules_of, stop = self._forks[-1] if self._forks else None, self._rules_of, self._stop
        forked = second_core.start_in_fork(lambda: _audit_in_fork(session, pairs, rules_of, stop, waits_for))
        if forked is not None:
            self._forks.append(forked)

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

    def join(self, store: TokenCache | None) -> frozenset[int]:
        """Stop the forks after the pair each is auditing, wait for them and remember what they audited
        (in ``store`` too, when there is one); the compactions they audited (their pairs are in the cache
        now, unless a fork judged other rules)."""
        self._stop[0] = 1
        self._take_all()
        sent, self._sent = self._sent, []
        cache = AuditCache(store)
        for _, collected in sent:
            remember_sent(cache, collected)
        return frozenset(message for compactions, _ in sent for message in compactions)

    def cancel(self) -> None:
        """Stop the forks, if any runs (the read failed: nothing will be audited)."""
        forks, self._forks, self._sent = self._forks, [], []
        for forked in forks:
            forked.cancel()

    def _take_all(self) -> None:
        """Wait for the forks and keep what they sent (a fork that died sent nothing)."""
        forks, self._forks = self._forks, []
        self._sent += [sent[0] for sent in (forked.result() for forked in forks) if sent is not None]


def _audit_in_fork(session: Session, pairs: list[Pair], rules_of: Callable[[Session], list[Constraint]], stop: mmap.mmap,
                   waits_for: second_core.Forked | None) -> Sent:
    """In a fork: ``pairs`` audited in their order, until ``stop`` is set, once ``waits_for`` (the fork before,
    if still running) is done: one fork at a time on the second core, and in memory."""
    if waits_for is not None:
        waits_for.wait_until_sent()
    if stop[0]:
        return [], []  # stopped while waiting: the rules are not worth picking
    rules = rules_of(session)
    collecting = CollectingCache()
    jobs = [(message, after, audited_at(rules, message)) for message, after in pairs]
    audited = audit_one_by_one(session, jobs, collecting, should_stop=lambda: bool(stop[0]))
    return audited, collecting.collected
