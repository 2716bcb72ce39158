"""The four failure modes of a compaction (seed 001's 430-session study), each with its evidence.

- constraint_evaporation: a rule kept before is paraphrased or lost after, or one paraphrased before is lost after
  (a weakened rule that a later summary drops: the alert and ``check`` tell that loss too);
- coordinate_loss: a file or pattern located before is gone from the window after, and the
  agent reads or searches it again;
- decision_backtracking: an option rejected before ("decided not to…", "rejected…", "不用…",
  "放弃…") is proposed or done again after;
- tool_chain_break: a change completed before (an edit applied, a file written, a command that
  succeeded) is redone after, or the summary reports it as still to do.
Evidence names the messages on both sides.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from ctxtop.context.audit.forensics.actions import CHANGE, READ, SEARCH, Action
from ctxtop.context.audit.forensics.history import History, subject_key
from ctxtop.context.audit.forensics.pair import REJECTION
from ctxtop.context.audit.forensics.recovery import is_state_file
from ctxtop.context.rules.constraints import KEPT, LOST, PARAPHRASED, Constraint, Status
from ctxtop.context.rules.facts import key_terms
from ctxtop.context.sanitize import cut

MAX_EVIDENCE = 20
OPTION_TERM_SHARE = 0.6
_DISTINCTIVE = re.compile(r"[\d_.\-/]|^[a-z]{8,}$")

Evidence = dict[str, Any]


def failure_modes(*, constraints: list[Constraint], statuses: dict[str, tuple[Status, Status]], compaction: int,
                  generation: int, lost_items: dict[str, list[str]], facts: dict[str, Any], after: list[Action],
                  notes: list[tuple[int, str]], history: History) -> list[dict[str, Any]]:
    found = {
        "constraint_evaporation": _evaporation(constraints, statuses, compaction, generation),
        "coordinate_loss": _coordinate_loss(lost_items, after, history),
        "decision_backtracking": _backtracking(facts.get("rejections", []), after, notes),
        "tool_chain_break": _chain_break(facts.get("pending", []), after, history),
    }
    return [{"mode": mode, "evidence": evidence[:MAX_EVIDENCE]} for mode, evidence in found.items() if evidence]


def _evaporation(constraints: list[Constraint], statuses: dict[str, tuple[Status, Status]], compaction: int,
                 generation: int) -> list[Evidence]:
    evidence: list[Evidence] = []
    for constraint in constraints:
        pair = statuses.get(constraint.id)
        if pair is None or not _evaporated(*pair):
            continue
        before, after = pair
        stated = before.found_in[0] if before.found_in else constraint.first_stated or compaction
        missing = f"; missing {', '.join(after.missing_facts)}" if after.missing_facts else ""
        evidence.append({"message": stated, "text": f"{before.status} before: {constraint.text}"})
        evidence.append({"message": after.found_in[0] if after.found_in else compaction,
                         "text": f"{after.status} after, dropped by the generation-{generation} summary{missing}"})
    return evidence


def _evaporated(before: Status, after: Status) -> bool:
    """Whether the summary dropped the rule: kept and then no longer, or weakened and then lost."""
    return (before.status == KEPT and after.status != KEPT) or (before.status == PARAPHRASED and after.status == LOST)


def _coordinate_loss(lost_items: dict[str, list[str]], after: list[Action], history: History) -> list[Evidence]:
    lost = [subject_key(item) for item in lost_items.get("paths", []) + lost_items.get("identifiers", [])]
    if not lost:
        return []
    evidence: list[Evidence] = []
    seen: set[str] = set()
    for action in after:
        if action.kind not in (READ, SEARCH):
            continue
        key = subject_key(action.subject)
        first = history.located.get(key)
        if first is None or key in seen or not _among(key, lost) or (action.kind == READ and is_state_file(action.subject, history)):
            continue  # (re-reading its own notes is how an agent recovers, not a loss)
        seen.add(key)
        verb = "read" if action.kind == READ else "searched"
        evidence.append({"message": first, "text": f"located before: {action.subject}"})
        evidence.append({"message": action.message, "text": f"{verb} again after the compaction ({action.tool}): {action.subject}"})
    return evidence


def _among(key: str, lost: list[str]) -> bool:
    """Whether a read or searched subject is one of the coordinates the window lost."""
    name = posixpath.basename(key.rstrip("/")) or key
    return any(key in item or item in key or (len(name) >= 3 and name in item) for item in lost)


def _backtracking(rejections: list[list[Any]], after: list[Action], notes: list[tuple[int, str]]) -> list[Evidence]:
    evidence: list[Evidence] = []
    if not rejections:
        return evidence
    said_after = [(message, text) for message, text in notes if not REJECTION.search(text)]
    said_after += [(a.message, f"{a.tool} {a.subject}") for a in after]
    said_terms: list[set[str]] | None = None  # each one's terms, found once for all the rejections
    for message, sentence, option in rejections:
        terms = key_terms(option)
        if not terms:
            continue
        if said_terms is None:
            said_terms = [key_terms(text) for _, text in said_after]
        distinctive = {t for t in terms if _DISTINCTIVE.search(t)}
        for (later, text), their_terms in zip(said_after, said_terms, strict=True):
            shared = terms & their_terms
            if len(shared) >= OPTION_TERM_SHARE * len(terms) or shared & distinctive:
                evidence.append({"message": message, "text": f"rejected before: {sentence}"})
                evidence.append({"message": later, "text": f"proposed or done again after: {cut(text, 300)}"})
                break
    return evidence


def _chain_break(pending: list[list[Any]], after: list[Action], history: History) -> list[Evidence]:
    evidence: list[Evidence] = []
    for action in after:
        done = history.done.get(action.key) if action.kind == CHANGE else None
        if done is not None:
            evidence.append({"message": done.message, "text": f"completed before: {done.label}"})
            evidence.append({"message": action.message, "text": f"redone after the compaction: {action.label}"})
    for message, sentence in pending:
        lowered = sentence.casefold()
        for done in history.done.values():
            name = posixpath.basename(done.subject.rstrip("/")).casefold()
            if len(name) >= 3 and name in lowered:
                evidence.append({"message": done.message, "text": f"completed before: {done.label}"})
                evidence.append({"message": message, "text": f"reported as still to do: {sentence}"})
                break
    return evidence
