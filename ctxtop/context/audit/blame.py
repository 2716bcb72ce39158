"""The compaction a broken rule is told as following ("lost at 306 → broken at 386").

A rule broken after a compaction lost or weakened it is told with that loss: the window no longer held it
when the agent broke it. Not when the rule was back by then, because a later compaction's summary kept it
again or a person, an instruction file or a hook stated it again word for word. The agent then broke a
rule it had been given anew, and no compaction is to blame. The banner and each compaction's view of the
violations that followed it tell the same story from here.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.run import CompactionAudit
from ctxtop.context.rules.constraints import KEPT, Constraint
from ctxtop.context.rules.facts import normalize
from ctxtop.context.window.replay import RUN_STEP
from ctxtop.parsers.model import INJECTED, SYSTEM, USER, Entry

# Where a rule is given again: the blocks rules are detected in (a tool's output quotes a rule, an agent's
# text may repeat one it then breaks).
GIVING = frozenset({SYSTEM, INJECTED, USER})


class Blame:
    """The loss behind each violation of one audit's alerts. ``given``: where each rule was given again
    (``GivenAgain.given``), asked only when a violation follows a loss no later summary took back."""

    def __init__(self, alerts: Sequence[Alert], compactions: Sequence[CompactionAudit],
                 given: Callable[[], dict[str, list[int]]]) -> None:
        self._compactions, self._given_again = compactions, given
        self._losses: dict[str, list[Alert]] = {}  # rule id → the alerts of compactions that lost or weakened it, in order
        for alert in alerts:
            if alert.kind.rule_lost and alert.constraint is not None:
                self._losses.setdefault(alert.constraint, []).append(alert)
        # Worked out at once, for all: a front end's question (the banner's, at every move of the cursor) is a look-up.
        self._behind: dict[tuple[int, str], Alert] = {}
        for alert in alerts:
            if alert.kind is AlertKind.VIOLATION and alert.constraint is not None:
                if (loss := self._work_out(alert.message, alert.constraint)) is not None:
                    self._behind[(alert.message, alert.constraint)] = loss

    def loss_behind(self, violation: Alert) -> Alert | None:
        """The alert of the compaction that last lost or weakened the rule ``violation`` broke, when the rule
        was not back in the window at the violation; else None (as for a rule never lost, or another alert)."""
        if violation.kind is not AlertKind.VIOLATION or violation.constraint is None:
            return None
        return self._behind.get((violation.message, violation.constraint))

    def _work_out(self, broken_at: int, rule_id: str) -> Alert | None:
        earlier = [loss for loss in self._losses.get(rule_id, ()) if loss.message < broken_at]
        if not earlier:
            return None
        loss = earlier[-1]
        if any(loss.message < c.event.message < broken_at and rule_id in c.constraints and c.constraints[rule_id][1].status == KEPT
               for c in self._compactions):
            return None  # a later summary kept it again
        given = self._given_again().get(rule_id, [])
        if bisect_right(given, loss.message) < bisect_right(given, broken_at - 1):
            return None  # given again between the loss and the breach
        return loss


class GivenAgain:
    """The messages in which a person, an instruction file or a hook states each rule word for word (case, width
    and whitespace aside, as a window is said to keep it), by rule id, in order. Read once over the entries, each
    text normalized once for all the rules, then only over what a followed log appends (and its last entries,
    which may still change)."""

    def __init__(self, rules: Sequence[Constraint]) -> None:
        self.rules = rules
        self._needles = [(rule.id, rule.normalized) for rule in rules if rule.normalized]
        self.given: dict[str, list[int]] = {}
        self._final = 0  # entries before this position were read and will not change

    def extend(self, entries: Sequence[Entry], final: int) -> None:
        """Read the entries from the first not final when last read; ``final``: the session's ``final_before()``."""
        for rule_id, messages in self.given.items():  # (what was read of entries that may have changed since)
            while messages and messages[-1] > self._final:
                messages.pop()
        for first in range(self._final, len(entries), RUN_STEP):  # (a slice at a time: a packed store unpacks what is sliced)
            for entry in entries[first : first + RUN_STEP]:
                for block in entry.blocks:
                    if block.category in GIVING and block.text:
                        self._read(entry.index, normalize(block.text))
        self._final = min(final, len(entries))

    def _read(self, message: int, text: str) -> None:
        for rule_id, needle in self._needles:
            if needle in text:
                messages = self.given.setdefault(rule_id, [])
                if not messages or messages[-1] != message:
                    messages.append(message)
