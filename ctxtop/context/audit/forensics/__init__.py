"""Compaction forensics: what kind of failure, did the agent recover, what did the summary make up,
which generation of summary it is, and what it cost.

Built for each compaction as part of its audit (``audit/run.py``), from what the audit's one
pass over the entries collected (the followed actions, the agent's words after each
compaction) and from the two windows it reads anyway (``pair``). One module per part.
"""

from __future__ import annotations

from typing import Any

from ctxtop.context.audit.forensics.actions import Action
from ctxtop.context.audit.forensics.cost import NO_MODEL_CALL, compaction_cost
from ctxtop.context.audit.forensics.generation import generation_of
from ctxtop.context.audit.forensics.history import History
from ctxtop.context.audit.forensics.modes import failure_modes
from ctxtop.context.audit.forensics.recovery import recovery_of
from ctxtop.context.rules.constraints import Constraint, Status
from ctxtop.parsers.model import Usage

# The agent's actions and words looked at after each compaction (until the next one): enough
# to see how it resumed, bounded on a session that runs for thousands of messages after.
AFTERMATH_MESSAGES = 80


def build_forensics(*, constraints: list[Constraint], statuses: dict[str, tuple[Status, Status]], compaction: int,
                    next_compaction: int, generation: int, lost_items: dict[str, list[str]], facts: dict[str, Any],
                    history: History, notes: list[tuple[int, str]], first_call: Usage | None, model: str | None,
                    pre_tokens: int | None, summarizing_call: tuple[str, Usage] | None = None,
                    kind: str | None = None) -> dict[str, Any]:
    """The ``forensics`` object of one compaction (the README's snapshot schema). ``summarizing_call``:
    where the log holds the call that wrote the summary, and its usage; ``kind``: the compaction's."""
    history.advance_to(compaction)
    after: list[Action] = history.between(compaction, min(next_compaction, compaction + AFTERMATH_MESSAGES + 1))
    return {
        "failure_modes": failure_modes(constraints=constraints, statuses=statuses, compaction=compaction, generation=generation,
                                       lost_items=lost_items, facts=facts, after=after, notes=notes, history=history),
        "recovery": recovery_of(after, history),
        "unsupported_claims": list(facts.get("claims", [])),
        "generation": generation,
        "cost": compaction_cost(first_call, model, pre_tokens, facts.get("summary_tokens"), summarizing_call,
                                calls_model=kind not in NO_MODEL_CALL),
    }


__all__ = ["AFTERMATH_MESSAGES", "build_forensics", "generation_of"]
