"""SessionStart after a compaction: the rules the window no longer holds, verbatim, and the key facts it lost.

The text is short and says it comes from ctxtop, so the model (and a reader of
the transcript, and ctxtop itself: ``audit.guard_marks``) can tell it from the
session's own text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxtop.context.audit.guard_marks import REINJECTED_MARK  # how the transcript shows it afterwards
from ctxtop.context.audit.lost import MAX_LOST_ITEMS, missing_facts
from ctxtop.context.rules.constraints import KEPT, Constraint, WindowText
from ctxtop.context.sanitize import clean_text, one_line

FACT_KINDS = ("paths", "identifiers", "numbers")
MAX_FACTS_PER_KIND = 6
MAX_FACT_CHARS = 120
MAX_FACT_LINE_CHARS = 400  # each kind's line: the text stays short beside the rules


@dataclass(slots=True)
class Reinjection:
    rules: list[tuple[Constraint, str]]  # each rule the window lost or weakened, with its status there
    facts: dict[str, list[str]] = field(default_factory=dict)  # key facts lost, by kind: the few put back
    lost_counts: dict[str, int] = field(default_factory=dict)  # how many of each kind were lost (MAX_LOST_ITEMS: or more)

    @property
    def empty(self) -> bool:
        return not self.rules and not any(self.facts.values())

    def text(self) -> str:
        lines = [f"[{REINJECTED_MARK} after the compaction] The compaction summary lost or weakened what follows."]
        if self.rules:
            lines.append("Rules in force for this session, word for word (they still apply):")
            lines += [f"- {clean_text(rule.text)}" for rule, _status in self.rules]
        facts = [_fact_line(kind, found, self.lost_counts.get(kind, len(found))) for kind, found in self.facts.items() if found]
        if facts:
            lines.append("Facts from before the compaction that the summary dropped (for reference):")
            lines += [f"- {line}" for line in facts]
        return "\n".join(lines)


def _fact_line(kind: str, found: list[str], lost: int) -> str:
    """``kind: a, b, c (+47 more)``: whole facts, as many as MAX_FACT_LINE_CHARS holds (a path cut in the middle names
    no file), each cut to MAX_FACT_CHARS, and how many more the compaction lost (``lost`` in all; at the audit's
    cap, "at least")."""
    shown: list[str] = []
    for fact in found:
        item = one_line(fact, MAX_FACT_CHARS)
        if shown and len(kind) + 2 + sum(len(s) + 2 for s in shown) + len(item) > MAX_FACT_LINE_CHARS:
            break
        shown.append(item)
    rest = max(0, lost - len(shown))
    more = (f" (at least {rest} more)" if lost >= MAX_LOST_ITEMS else f" (+{rest} more)") if rest else ""
    return f"{kind}: " + ", ".join(shown) + more


def reinjection(rules: list[Constraint], after: WindowText, facts_before: dict[str, list[str]] | None) -> Reinjection:
    """What to put back: every rule in force the window after the compaction does not hold verbatim (lost,
    paraphrased, unverifiable), and of ``facts_before`` (what the window held before) those it lost."""
    lost = [(rule, status.status) for rule in rules if (status := after.status(rule)).status != KEPT]
    facts: dict[str, list[str]] = {}
    if facts_before:
        missing = missing_facts({kind: facts_before.get(kind, []) for kind in FACT_KINDS}, after)
        facts = {kind: _short(missing[kind]) for kind in FACT_KINDS if missing.get(kind)}
        return Reinjection(lost, facts, {kind: len(missing[kind]) for kind in facts})
    return Reinjection(lost, facts)


def _short(items: list[str]) -> list[str]:
    """The first few, leaving out one that holds, or is held in, one already chosen."""
    chosen: list[str] = []
    for item in items:
        if not any(item in other or other in item for other in chosen):
            chosen.append(item)
        if len(chosen) == MAX_FACTS_PER_KIND:
            break
    return chosen
