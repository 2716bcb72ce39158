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
# Claude Code keeps a hook's added context in the window up to 10,000 characters (as JavaScript counts them: UTF-16
# units); past that the model is given a 2 KB preview and a file path instead (anthropics/claude-code#91614, #94358),
# and the rules past the preview are not put back at all. The answer stays under it, with a margin.
MAX_CONTEXT_CHARS = 9_500
MAX_LEFT_OUT_LINE_CHARS = 400  # the line naming the rules that did not fit
HEADER = f"[{REINJECTED_MARK} after the compaction] The compaction summary lost or weakened what follows."
RULES_INTRO = "Rules in force for this session, word for word (they still apply):"
FACTS_INTRO = "Facts from before the compaction that the summary dropped (for reference):"


@dataclass(slots=True)
class Reinjection:
    rules: list[tuple[Constraint, str]]  # each rule the window lost or weakened, with its status there
    facts: dict[str, list[str]] = field(default_factory=dict)  # key facts lost, by kind: the few put back
    lost_counts: dict[str, int] = field(default_factory=dict)  # how many of each kind were lost (MAX_LOST_ITEMS: or more)

    @property
    def empty(self) -> bool:
        return not self.rules and not any(self.facts.values())

    def text(self) -> str:
        """The text put back: the rules word for word (as many as the agent keeps; the rest named by id), then the
        facts that still fit (they are for reference)."""
        lines = [HEADER]
        shown = self.rules_shown()
        if self.rules:
            lines.append(RULES_INTRO)
            lines += [_rule_line(rule) for rule, _status in self.rules[:shown]]
        if shown < len(self.rules):
            lines.append(_left_out_line([rule for rule, _status in self.rules[shown:]]))
        facts = [f"- {_fact_line(kind, found, self.lost_counts.get(kind, len(found)))}" for kind, found in self.facts.items() if found]
        while facts and _length([*lines, FACTS_INTRO, *facts]) > MAX_CONTEXT_CHARS:
            facts.pop()
        if facts:
            lines += [FACTS_INTRO, *facts]
        return "\n".join(lines)

    def rules_shown(self) -> int:
        """How many of the rules the text holds word for word: all of them when they fit in MAX_CONTEXT_CHARS, else as
        many as leave room for the line naming the rest."""
        lines = [_rule_line(rule) for rule, _status in self.rules]
        if _length([HEADER, RULES_INTRO, *lines]) <= MAX_CONTEXT_CHARS:
            return len(lines)
        room = MAX_CONTEXT_CHARS - MAX_LEFT_OUT_LINE_CHARS - _length([HEADER, RULES_INTRO])
        for count, line in enumerate(lines):
            room -= _length([line]) + 1
            if room < 0:
                return count
        return len(lines)


def _rule_line(rule: Constraint) -> str:
    return f"- {clean_text(rule.text)}"


def _left_out_line(rules: list[Constraint]) -> str:
    """Not a "- " line: ``audit.guard_marks`` counts those as the rules put back."""
    ids = ", ".join(one_line(rule.id, 60) for rule in rules)
    return one_line(f"({len(rules)} more rule(s) the compaction lost are not repeated here, to keep this under the "
                    f"agent's limit for added context; their ids: {ids})", MAX_LEFT_OUT_LINE_CHARS)


def _length(lines: list[str]) -> int:
    """The length of the lines joined, as the agent counts it (UTF-16 units: a character past U+FFFF counts two)."""
    return len("\n".join(lines).encode("utf-16-le")) // 2


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
