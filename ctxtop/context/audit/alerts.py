"""Alert kinds, in one place: what each is called, whether it fails `ctxtop check`, how it is shown.

A new kind of alert is one line here (and the code that raises it); `check`,
`watch`, exports and the TUI read everything else from this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class AlertKind(Enum):
    """``(key, fails, label, style)``: ``key`` is the name in JSON and text output; ``fails`` makes
    `check` exit 1 and raises the TUI's banner; ``style`` is a Rich style name for front ends."""

    CONSTRAINT_LOST = ("constraint_lost", True, "rule lost", "bold red")
    CONSTRAINT_PARAPHRASED = ("constraint_paraphrased", True, "rule paraphrased", "yellow")
    CONSTRAINT_UNVERIFIABLE = ("constraint_unverifiable", True, "rule unverifiable", "yellow")
    VIOLATION = ("violation", True, "rule broken", "bold red")
    NEVER_STATED = ("never_stated", True, "pin never stated", "bold red")
    IMPLICIT_COMPACTION = ("implicit_compaction", False, "implicit compaction", "dim")
    MODEL_SWITCH = ("model_switch", False, "model switch", "dim")  # the prompt fell between calls of two models
    RESUMED = ("resumed", False, "session resumed", "dim")  # ...or across a long gap: the harness rebuilt it
    DRIFT = ("drift", False, "drift", "dim")
    FORBID_SKIPPED = ("forbid_skipped", False, "forbid pattern skipped", "yellow")
    # A call pays in another currency than a rule's cap is in: with no exchange rates, neither kept nor broken (to ask about).
    AMOUNT_NOT_COMPARED = ("amount_not_compared", False, "amount in another currency", "yellow")
    GUARD_REINJECTED = ("guard_reinjected", False, "re-injected by ctxtop", "green")  # ctxtop's SessionStart hook put rules back
    GUARD_BLOCKED = ("guard_blocked", False, "blocked by ctxtop", "green")  # ctxtop's PreToolUse hook denied a call
    # A PreToolUse hook denied a call that broke a rule, and the log keeps no reason to tell whose hook it was.
    HOOK_BLOCKED = ("hook_blocked", False, "blocked by a hook", "green")

    @property
    def by_guard(self) -> bool:
        """ctxtop's own hooks acting (the timeline marks them ✚)."""
        return self in (AlertKind.GUARD_REINJECTED, AlertKind.GUARD_BLOCKED)

    def __init__(self, key: str, fails: bool, label: str, style: str) -> None:
        self.key = key
        self.fails = fails
        self.label = label
        self.style = style

    def __str__(self) -> str:
        return self.key

    @property
    def rule_lost(self) -> bool:
        """A rule the window no longer holds as it was (as opposed to a call that broke one)."""
        return self in _RULE_LOST

    @staticmethod
    def became(status: str) -> str:
        """What a compaction did to a rule whose status after it is ``status``, in the words the views use."""
        return "weakened" if status == "paraphrased" else status  # (lost, unverifiable)

    @property
    def rule_became(self) -> str:
        """What the compaction of a ``rule_lost`` alert did to its rule, as ``became`` words it."""
        return AlertKind.became(self.key.removeprefix("constraint_"))

    @classmethod
    def for_status(cls, status: str) -> AlertKind:
        """The alert for a rule whose status after a compaction is ``status`` (lost, paraphrased…)."""
        return cls[f"CONSTRAINT_{status.upper()}"]


_RULE_LOST = frozenset({AlertKind.CONSTRAINT_LOST, AlertKind.CONSTRAINT_PARAPHRASED, AlertKind.CONSTRAINT_UNVERIFIABLE})


@dataclass(slots=True, frozen=True)
class Alert:
    kind: AlertKind
    message: int
    compaction: int | None
    constraint: str | None
    detail: str

    @property
    def fails(self) -> bool:
        return self.kind.fails

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.key, "message": self.message, "compaction": self.compaction, "constraint": self.constraint,
                "detail": self.detail}
