"""Compactions audited while the rest of a log is still being read, on the machine's second core.

A cold read of a whole log (``export``, ``check``) parses and counts on one core, and the audit
after it reads the text of every compaction's windows. Once the read is START_AT of the way
through, a fork audits the compactions whose two windows are already final
(``Session.final_before``), with the rules in force as far as the read has come, while the read
goes on here. What it finds joins the audit cache under each pair's key (what both windows hold,
the rules judged, the compaction), so the audit after the read takes exactly the pairs that are
the same and audits the rest itself: a rule first stated later, say, changes a pair's key, never
its result. A fork that is not made, or dies, costs the time it would have saved, nothing else.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxtop.context import second_core
from ctxtop.context.audit.cache import AuditCache
from ctxtop.context.audit.events import after_message
from ctxtop.context.audit.pairs import CollectingCache, PairJob, audit_pairs, audited_at, remember_sent
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.session import Session

# Of the log's bytes, found by measurement (generated 50 and 200 MB sessions of both formats): the fork's
# share is then done about when the read, the rules and the audit's pass over the entries are here, and
# the pairs left are split between two processes again. Later, the audit waits for the fork; earlier,
# the fork takes too few.
START_AT = 0.3
# ...and not past this: with little left to read (a small log read in one part, a warm open that reads only
# what was appended), the fork would only be waited for.
START_BEFORE = 0.8


class EarlyAudit:
    """Started by ``Session.open`` through ``on_read``; ``join`` before the audit takes what the fork found.

    ``rules_of(session)``: the rules in force over the entries read so far, as the audit after the read
    picks them (run in the fork: it must not write anything, nor use the persistent cache)."""

    def __init__(self, rules_of: Callable[[Session], list[Constraint]]) -> None:
        self._rules_of = rules_of
        self._considered = False
        self._forked: second_core.Forked[tuple[list[int], list]] | None = None

    def on_read(self, session: Session, fraction: float) -> None:
        """``Session.open``'s ``on_read``: the fork is started, once, when the read first reaches START_AT."""
        if self._considered or fraction < START_AT:
            return
        self._considered = True
        final = session.final_before()
        markers = [position for position in session.history.compaction_markers() if position < final]
        if fraction < START_BEFORE and markers:
            self._forked = second_core.start_in_fork(lambda: _audit_final_pairs(session, final, markers, self._rules_of))

    def join(self, store: TokenCache | None) -> frozenset[int]:
        """Wait for the fork and remember what it audited (in ``store`` too, when there is one); the
        compactions it audited (their pairs are in the cache now, unless it judged other rules)."""
        forked, self._forked = self._forked, None
        sent = forked.result() if forked is not None else None
        if sent is None:
            return frozenset()
        compactions, collected = sent[0]
        remember_sent(AuditCache(store), collected)
        return frozenset(compactions)

    def cancel(self) -> None:
        """Stop the fork, if one runs (the read failed: nothing will be audited)."""
        forked, self._forked = self._forked, None
        if forked is not None:
            forked.cancel()


def _audit_final_pairs(session: Session, final: int, markers: list[int], rules_of: Callable[[Session], list[Constraint]]
                       ) -> tuple[list[int], list]:
    """In the fork: the pairs of the compaction markers at ``markers`` whose window after is before ``final``;
    the compactions audited, and what the audit cache was given."""
    rules = rules_of(session)
    entries = session.entries
    jobs: list[PairJob] = []
    for position in markers:
        message = position + 1
        after = after_message(entries, message)
        if after < final:
            jobs.append((message, after, audited_at(rules, message)))
    collecting = CollectingCache()
    audit_pairs(session, jobs, collecting)
    return [message for message, _, _ in jobs], collecting.collected
