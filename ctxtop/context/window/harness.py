"""What the harness sends and the log does not show: inferred from the first model call.

Most agents log the conversation but not the system prompt and tool schemas
(MCP tools included) they send before it with every request. The first model
call tells how big that prefix is: its reported prompt, minus everything the
log shows before that call, is text the log never recorded. That figure is an
inference, not a count: it also holds the difference between our tokenizer and
the model's on the little text of the first turn, and anything else the harness
adds unlogged (a CLAUDE.md sent as a reminder, for one).

The prefix changes when the model does (another system prompt, other tools):
at the first call of a model not seen before, it is inferred again from the
step in unexplained tokens since the previous call (what changed with the
switch), or from that call alone when a compaction came in between (the window
is then small, so the call is almost all prefix). Switching back to a model
seen before takes its earlier figure again. It changes with the tools too (an MCP
server connected mid-session): where the log says so — a tool listing logged after
the first call, as Claude Code 2.1.8x+ logs ``deferred_tools_delta`` — the next call
infers it again from the step, for that model. A log that records its system
prompt and tools (an Anthropic request body, a Claude Code ``prompt_snapshot``)
needs no inference.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxtop.parsers.model import SYSTEM, TOOLS

# The breakdown's row for the prefix, beside the counted categories.
INFERRED = "inferred_system_tools"

FIRST_CALL = "first call"
MODEL_SWITCH = "model switch"
AFTER_COMPACTION = "first call of the model, after a compaction"
TOOLS_CHANGED = "first call after the tools changed"


@dataclass(slots=True, frozen=True)
class HarnessPrefix:
    """The unlogged prefix the harness sends with every request, as inferred at one call."""

    tokens: int
    message: int  # the call it was inferred from
    model: str | None
    reason: str  # FIRST_CALL, MODEL_SWITCH, AFTER_COMPACTION or TOOLS_CHANGED
    logged_system: bool  # the log shows a system prompt: only the tools (and the rest) are inferred

    @property
    def label(self) -> str:
        what = "tools" if self.logged_system else "system + tools"
        if self.reason == FIRST_CALL:
            return f"{what} (inferred from the first call)"
        if self.reason == TOOLS_CHANGED:
            return f"{what} (inferred again after the tools changed)"
        return f"{what} (inferred from the first call of {self.model or 'the model'})"


def split_unexplained(counted: int, prefix: HarnessPrefix | None, reported: int | None,
                      added_since_call: int | None = None) -> tuple[int, int]:
    """What the log reports beyond the ``counted`` text, as (inferred system + tools, unattributed rest).
    The inferred prefix never takes more than there is to explain. With no reported size (after a
    compaction that records none, until the next model call), the prefix is there all the same: every
    request carries it. ``added_since_call`` (``Window.added_since_call``): what messages after the call that
    reported hold, which its size did not; what it reported beyond its text is still there."""
    if reported is None:
        return (prefix.tokens if prefix is not None else 0), 0
    unexplained = max(0, reported - (counted - (added_since_call or 0)))
    inferred = min(prefix.tokens, unexplained) if prefix is not None else 0
    return inferred, unexplained - inferred


@dataclass(slots=True)
class HarnessTracker:
    """Follows the model calls of a replay and keeps the prefix in force (copied when a replay forks)."""

    prefix: HarnessPrefix | None = None
    by_model: dict[str | None, HarnessPrefix] | None = None  # the prefix inferred for each model seen
    last_unexplained: int | None = None  # at the previous call, since the last compaction
    call_output: int = 0  # output tokens of the call still open (its entries so far)
    tools_changed: bool = False  # the log listed tools since the last call: infer again at the next
    # ``prefix`` is the one the first call infers, known before that call (from a log read on past it): the
    # prefix was there from the start, as that call was sent with it. The first call infers it again, as
    # with nothing known before it, so that what follows is as if it had not been known ahead.
    before_first_call: bool = False
    call_from: int | None = None  # the first message of the call still open's answer (None: it has written nothing yet)

    def fork(self) -> HarnessTracker:
        return HarnessTracker(self.prefix, dict(self.by_model) if self.by_model else None, self.last_unexplained, self.call_output,
                              self.tools_changed, self.before_first_call, self.call_from)

    def tools_listed(self) -> None:
        """The log listed tools (a tool listing after the first call: the harness's tools changed)."""
        if self.prefix is not None and not self.before_first_call:
            self.tools_changed = True

    def compacted(self) -> None:
        self.last_unexplained = None

    def call(self, message: int, model: str | None, prompt_tokens: int, window_tokens: int, totals) -> None:
        """A model call at ``message`` reported ``prompt_tokens``; the window after it counts
        ``window_tokens``, of which ``call_output`` was written by the call itself."""
        before_call = window_tokens - self.call_output
        self.call_output, self.call_from = 0, None
        if prompt_tokens <= 0:
            return
        if self.before_first_call:
            self.prefix, self.by_model, self.before_first_call = None, None, False
        unexplained = prompt_tokens - before_call
        previous, last = self.prefix, self.last_unexplained
        self.last_unexplained = unexplained
        tools_changed, self.tools_changed = self.tools_changed, False
        if previous is not None and (model is None or model == previous.model) and not tools_changed:
            return
        known = None if tools_changed else (self.by_model or {}).get(model)
        if known is not None:
            self.prefix = known
            return
        logged_system, logged_tools = totals[SYSTEM].blocks > 0, totals[TOOLS].blocks > 0
        if logged_system and logged_tools:
            return  # the log carries both: what it does not explain is a counting difference
        if previous is None:
            tokens, reason = unexplained, FIRST_CALL
        elif last is not None:
            tokens, reason = previous.tokens + unexplained - last, TOOLS_CHANGED if tools_changed else MODEL_SWITCH
        else:
            tokens, reason = unexplained, TOOLS_CHANGED if tools_changed else AFTER_COMPACTION
        if tokens <= 0:
            return
        self.prefix = HarnessPrefix(tokens, message, model or (previous.model if previous else None), reason, logged_system)
        self.by_model = {**(self.by_model or {}), self.prefix.model: self.prefix}
