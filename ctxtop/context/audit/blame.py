"""The compaction a broken rule is told as following ("lost at 306 → broken at 386").

A rule broken after a compaction lost or weakened it is told with that loss: the window no longer held it
when the agent broke it. Not when the rule was back by then, because a later compaction's summary kept it
again or a person, an instruction file or a hook stated it again word for word. The agent then broke a
rule it had been given anew, and no compaction is to blame. The banner and each compaction's view of the
violations that followed it tell the same story from here.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    """The loss behind each violation of one audit's alerts, worked out when first asked for."""

    def __init__(self, alerts: Sequence[Alert], compactions: Sequence[CompactionAudit], entries: Sequence[Entry],
                 rules: Sequence[Constraint]) -> None:
        self._compactions, self._entries = compactions, entries
        self._rules = {rule.id: rule for rule in rules}
        self._losses: dict[str, list[Alert]] = {}  # rule id → the alerts of compactions that lost or weakened it, in order
        for alert in alerts:
            if alert.kind.rule_lost and alert.constraint is not None:
                self._losses.setdefault(alert.constraint, []).append(alert)
        self._found: dict[tuple[int, str], Alert | None] = {}

    def loss_behind(self, violation: Alert) -> Alert | None:
        """The alert of the compaction that last lost or weakened the rule ``violation`` broke, when the rule
        was not back in the window at the violation; else None (as for a rule never lost)."""
        if violation.kind is not AlertKind.VIOLATION or violation.constraint is None:
            return None
        key = (violation.message, violation.constraint)
        if key not in self._found:
            self._found[key] = self._work_out(violation.message, violation.constraint)
        return self._found[key]

    def _work_out(self, broken_at: int, rule_id: str) -> Alert | None:
        earlier = [loss for loss in self._losses.get(rule_id, ()) if loss.message < broken_at]
        if not earlier:
            return None
        loss = earlier[-1]
        if any(loss.message < c.event.message < broken_at and rule_id in c.constraints and c.constraints[rule_id][1].status == KEPT
               for c in self._compactions):
            return None  # a later summary kept it again
        rule = self._rules.get(rule_id)
        if rule is not None and given_between(self._entries, rule, loss.message, broken_at) is not None:
            return None
        return loss


def given_between(entries: Sequence[Entry], rule: Constraint, start: int, stop: int) -> int | None:
    """The first message after ``start`` and before ``stop`` in which a person, an instruction file or a hook
    states ``rule`` word for word (case, width and whitespace aside, as a window is said to keep it)."""
    needle = rule.normalized
    if not needle:
        return None
    # Messages start + 1 … stop - 1 sit at positions start … stop - 2; a slice at a time (a packed store
    # unpacks what is sliced).
    for first in range(start, stop - 1, RUN_STEP):
        for entry in entries[first : min(stop - 1, first + RUN_STEP)]:
            if any(block.category in GIVING and needle in normalize(block.text) for block in entry.blocks):
                return entry.index
    return None
