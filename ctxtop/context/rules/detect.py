"""Find the hard rules in a text a person or an instruction file wrote.

A text is cut into units (``segment``) and each unit is kept when a cue says
it is a rule (``cues``); the cue travels with the rule so a user can see why
it was taken. Linear in the text: one pass to cut, one regex pass per unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxtop.context.rules.cues import INSTRUCTIONS, rule_cue
from ctxtop.context.rules.segment import units

MIN_RULE_CHARS, MAX_RULE_CHARS = 4, 800


@dataclass(frozen=True, slots=True)
class FoundRule:
    text: str
    cue: str


def detect_rules(text: str, origin: str = INSTRUCTIONS) -> list[FoundRule]:
    """The rules stated in ``text``, in order, each with the cue that made it one."""
    found: list[FoundRule] = []
    cut = units(text)
    if origin != INSTRUCTIONS and any(unit.headings for unit in cut):
        origin = INSTRUCTIONS  # a message laid out with headings is an instructions document pasted in
    for unit in cut:
        if not MIN_RULE_CHARS <= len(unit.text) <= MAX_RULE_CHARS:
            continue
        cue = rule_cue(unit.text, is_item=unit.is_item, headings=unit.headings, lead_in=unit.lead_in, origin=origin)
        if cue:
            found.append(FoundRule(unit.text, cue))
    return found
