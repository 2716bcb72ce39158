"""The window flattened once for every strategy preview.

Previews must be cheap enough to run all of them on every cursor move, so
everything they share is computed here once: block tokens and their prefix
sums (per category too), message boundaries, tool call/result pairs, and where
each constraint occurs. A strategy then works on indices and sums only; it
never re-reads or re-tokenizes text.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate

from ctxtop.context.rules.constraints import Constraint, Status, WindowText
from ctxtop.context.window.replay import RESIDENT, Window, WindowBlock
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.parsers.model import IMAGE, TOOL_CALL, TOOL_RESULT


@dataclass(slots=True)
class Occurrence:
    """Where a constraint is in the window: verbatim copies, or else its best restatement."""

    verbatim: list[int]
    restated: int | None
    before: Status


@dataclass(slots=True)
class Message:
    """A run of window blocks from one log message (resident blocks excluded)."""

    start: int
    end: int  # exclusive
    first_category: str


@dataclass(init=False)  # (its __init__ takes None for prompt_tokens and budget, which it resolves)
class Frame:
    window: Window
    counter: TokenCounter
    constraints: list[Constraint]
    # What triggers compare against: the prompt size the log reports, or our estimate.
    prompt_tokens: int
    limit: int
    budget: int  # target of size-driven strategies; half the window by default
    text: WindowText | None  # the window's readable text, when the caller already built it

    def __init__(self, window: Window, counter: TokenCounter, constraints: list[Constraint] | None = None,
                 prompt_tokens: int | None = None, limit: int = 200_000, budget: int | None = None,
                 text: WindowText | None = None) -> None:
        self.window, self.counter, self.limit, self.text = window, counter, limit, text
        self.constraints = [] if constraints is None else constraints
        blocks = self.window.blocks
        self.blocks: list[WindowBlock] = blocks
        self.tokens: list[int] = [b.tokens for b in blocks]
        self.categories: list[str] = [b.category for b in blocks]
        self.resident: list[bool] = [c in RESIDENT for c in self.categories]
        self._present = set(self.categories)
        self.prefix: list[int] = [0, *accumulate(self.tokens)]
        # Tokens of the history alone (resident blocks count zero), for token-boundary cuts.
        self.history_prefix: list[int] = [0, *accumulate(0 if r else t for r, t in zip(self.resident, self.tokens))]
        self._category_prefix: dict[str, list[int]] = {}
        self.total = self.prefix[-1]
        self.history_blocks: list[int] = [i for i, resident in enumerate(self.resident) if not resident]
        self.resident_blocks: list[int] = [i for i, resident in enumerate(self.resident) if resident]
        self.history_total = self.history_prefix[-1]
        self.prompt_tokens = self.total if prompt_tokens is None else prompt_tokens
        self.budget = self.total // 2 if budget is None else budget
        self.messages = self._messages()
        self.message_of: list[int] = [-1] * len(blocks)
        for number, message in enumerate(self.messages):
            for i in range(message.start, message.end):
                self.message_of[i] = number
        self.calls: dict[str, int] = {}
        self.results: list[int] = []  # tool result blocks, oldest first
        self.result_for: dict[str, int] = {}  # tool id -> its (first) result block
        # A result block -> the image blocks inside that result (a screenshot tool's), which go where it goes.
        self.images_of: dict[int, list[int]] = {}
        for i, block in enumerate(blocks):
            if block.category == TOOL_CALL and block.block.tool_id:
                self.calls.setdefault(block.block.tool_id, i)
            elif block.category == TOOL_RESULT:
                self.results.append(i)
                if block.block.tool_id:
                    self.result_for.setdefault(block.block.tool_id, i)
            elif block.category == IMAGE and self.results and self._inside_result(self.results[-1], i):
                self.images_of.setdefault(self.results[-1], []).append(i)
        self._earliest_call = self._earliest_call_from()
        self.occurrences = self._occurrences()

    # --- sums ----------------------------------------------------------------------------
    def category_tokens_between(self, category: str, start: int, end: int) -> int:
        prefix = self._category_prefix.get(category)
        if prefix is None:
            prefix = [0, *accumulate(t if c == category else 0 for c, t in zip(self.categories, self.tokens))]
            self._category_prefix[category] = prefix
        return prefix[end] - prefix[start]

    def present_categories(self) -> set[str]:
        return self._present

    def resident_blocks_between(self, start: int, end: int) -> list[int]:
        """Resident blocks (system prompt, tool schemas) in [start, end)."""
        return self.resident_blocks[bisect_left(self.resident_blocks, start) : bisect_left(self.resident_blocks, end)]

    def history_blocks_between(self, start: int, end: int) -> list[int]:
        """The other blocks (the conversation, which strategies cut) in [start, end)."""
        return self.history_blocks[bisect_left(self.history_blocks, start) : bisect_left(self.history_blocks, end)]

    def first_history_block(self, start: int) -> int:
        """The first non-resident block at or after ``start`` (len when none)."""
        position = bisect_left(self.history_blocks, start)
        return self.history_blocks[position] if position < len(self.history_blocks) else len(self.blocks)

    def history_cut(self, keep_tokens: int) -> tuple[int, int]:
        """Where to cut so the newest ``keep_tokens`` history tokens remain: (block, its kept tokens).

        Blocks before the returned one go entirely; the returned block keeps only
        its last ``kept`` tokens (all of them when the cut falls on its start).
        """
        remove = self.history_total - keep_tokens
        if remove <= 0:
            return 0, self.tokens[0] if self.tokens else 0
        # The first block whose end reaches the tokens to remove is the one the cut falls in.
        end = bisect_left(self.history_prefix, remove)
        block = end - 1
        return block, self.history_prefix[end] - remove

    # --- structure -----------------------------------------------------------------------
    def _inside_result(self, result: int, image: int) -> bool:
        """Whether image block ``image`` is part of the content of result block ``result`` (parsers split it out)."""
        first, second = self.blocks[result], self.blocks[image]
        return (second.entry is first.entry and second.block.tool_id is not None
                and second.block.tool_id == first.block.tool_id)

    def tool_name(self, result_index: int) -> str | None:
        block = self.blocks[result_index].block
        if block.tool_name:
            return block.tool_name
        call = self.calls.get(block.tool_id or "")
        return self.blocks[call].block.tool_name if call is not None else None

    def safe_cut(self, cut: int) -> int:
        """Move a cut earlier until no block kept after it is a result whose call is before it.

        The cut lands on a message start, as the real systems cut (Claude Code's
        adjustIndexToPreserveAPIInvariants, ADK's safe split, LangChain's safe cutoff).
        """
        while 0 < cut < len(self.blocks) and self._earliest_call[cut] < cut:
            cut = self.messages[self.message_of[self._earliest_call[cut]]].start
        return cut

    def message_start(self, number: int) -> int:
        return self.messages[number].start if number < len(self.messages) else len(self.blocks)

    def _messages(self) -> list[Message]:
        messages: list[Message] = []
        previous_entry = None
        for i, block in enumerate(self.blocks):
            if self.resident[i]:
                previous_entry = None
                continue
            key = (id(block.entry), block.position < 0)
            if key != previous_entry or not messages:
                messages.append(Message(i, i + 1, block.category))
            else:
                messages[-1].end = i + 1
            previous_entry = key
        return messages

    def _earliest_call_from(self) -> list[int]:
        """For each block i, the earliest call position among results at or after i (len when none)."""
        n = len(self.blocks)
        earliest = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            earliest[i] = earliest[i + 1]
            block = self.blocks[i].block
            if self.categories[i] == TOOL_RESULT and block.tool_id in self.calls:
                earliest[i] = min(earliest[i], self.calls[block.tool_id])
        return earliest

    def _occurrences(self) -> dict[str, Occurrence]:
        if not self.constraints:
            return {}
        text = self.text if self.text is not None else WindowText(self.window)
        found = {}
        for constraint in self.constraints:
            verbatim, restated = text.occurrences(constraint)
            found[constraint.id] = Occurrence(
                [text.window_index[p] for p in verbatim],
                text.window_index[restated] if restated is not None else None,
                text.status(constraint),
            )
        return found
