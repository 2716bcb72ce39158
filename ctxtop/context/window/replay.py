"""The context window as the model saw it after any message.

Replaying the entries in file order: a compaction empties the window (the
system prompt and tool definitions stay: they are re-sent with every request),
then the summary, the preserved messages or the replacement history take its
place. A microcompaction swaps the cleared tool results for a placeholder.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from ctxtop.context.store.lazy_text import read_texts
from ctxtop.context.window.accounting import OUTPUT_CATEGORIES, Accounting, text_tokens
from ctxtop.context.window.harness import HarnessPrefix, HarnessTracker
from ctxtop.parsers.model import (
    CATEGORIES,
    IMAGE,
    REASONING,
    REASONING_NEVER_RESENT,
    REASONING_RESENT,
    REASONING_UNTIL_NEXT_TURN,
    SUMMARY,
    SYSTEM,
    SYSTEM_SNAPSHOT,
    TOOL_RESULT,
    TOOLS,
    Block,
    Compaction,
    Entry,
)

# What Claude Code sends in place of a microcompacted tool result.
CLEARED_PLACEHOLDER = "[Old tool result content cleared]"
# The blocks of a microcompacted result: its text becomes the placeholder, an image inside it goes with it
# (Claude Code swaps the result's whole content).
CLEARED_WITH_RESULT = (TOOL_RESULT, IMAGE)
# Entries read at a time by a replay.
RUN_STEP = 512
# Categories the harness re-sends on every request, untouched by compaction.
RESIDENT = (SYSTEM, TOOLS)


def is_resident(category: str, role: str) -> bool:
    """Re-sent with every request (the system prompt, the tool definitions), so untouched by compaction.
    Not the listings a harness injects into the conversation (Claude Code's skill, tool and agent
    listings are `tools` in a user message): a compaction drops those, and they are injected again."""
    return category in RESIDENT and role != "user"


@dataclass(slots=True)
class WindowBlock:
    """One block in the window, with where it came from and what it costs."""

    entry: Entry
    position: int  # index of the block within its entry (-1: from a compaction's replacement)
    block: Block
    tokens: int
    estimated: bool = False  # tokens come from reported usage, not from text
    cleared: bool = False  # shown to the model as a placeholder

    @property
    def category(self) -> str:
        return self.block.category

    @property
    def text(self) -> str:
        return CLEARED_PLACEHOLDER if self.cleared else self.block.text


@dataclass(slots=True)
class CategoryTotal:
    tokens: int = 0
    blocks: int = 0


# Blocks after the last call's message looked at, at most (every column of the timeline looks): past this many, a log
# that stopped reporting usage, the window is read as at that call.
MAX_BLOCKS_SINCE_CALL = 4096


@dataclass(slots=True)
class Window:
    """The blocks in the window, with running per-category totals."""

    at: int  # message index (1-based); 0 before the first message
    blocks: list[WindowBlock] = field(default_factory=list)
    last_compaction: Compaction | None = None
    totals: dict[str, CategoryTotal] = field(default_factory=lambda: {name: CategoryTotal() for name in CATEGORIES})
    # The system prompt and tools the harness sends unlogged, as inferred from a model call (harness.py).
    harness: HarnessPrefix | None = None
    # The first blocks whose counts are known exact (Session.window_at): the list is only appended
    # to, or a block replaced by its placeholder, until it is rebuilt, which sets this back to 0.
    exact_to: int = 0
    # No block before this index is reasoning (the last drop_reasoning took them all); 0 when unknown.
    reasoning_from: int = 0
    # The prompt size the log reports for the latest model call (Session.reported_at's rule): after a
    # compaction, the size it records (or None) until the next call.
    reported: int | None = None
    # The message whose model call reported ``reported`` (None: a compaction's recorded size, or nothing reported):
    # once later messages add to the window (a tool's result, the next question), the window is they, the call's
    # answer and what the call reported.
    reported_at: int | None = None
    # The first message of that call's answer: a log may write one answer over several messages (Codex: its
    # reasoning, its text and each tool call apart), the last of which carries the usage.
    reported_from: int | None = None

    def added_since_call(self) -> int | None:
        """What the window holds that the model call which reported ``reported`` was not sent: the call's own answer
        (its output blocks still in the window: reasoning leaves at the next question where the format drops it) and
        the blocks of every message after it (appended in order: the last blocks), counted as they are now.

        None at the call itself, when no call reported since the last compaction, or past MAX_BLOCKS_SINCE_CALL such
        blocks (a log that stopped reporting: as if at the call)."""
        reported_at = self.reported_at
        if reported_at is None:
            return None
        call_from = reported_at if self.reported_from is None else self.reported_from
        added = walked = 0
        for item in reversed(self.blocks):  # (at every message of the log: no property read in the loop)
            index = item.entry.index
            if index <= reported_at:
                if not walked or index < call_from:
                    break
                if item.block.category not in OUTPUT_CATEGORIES:
                    continue  # written before the call was sent (a system note between the answer's parts): in its prompt
            walked += 1
            if walked > MAX_BLOCKS_SINCE_CALL:
                return None
            added += item.tokens
        return added if walked else None

    def append(self, item: WindowBlock) -> None:
        self.blocks.append(item)
        total = self.totals[item.block.category]  # (not the property: this runs for every block of the log)
        total.tokens += item.tokens
        total.blocks += 1

    def clear(self, index: int, placeholder_tokens: int) -> None:
        """Show block ``index`` as a placeholder. The block is replaced, not changed: a forked
        window shares its blocks with the one it came from."""
        item = self.blocks[index]
        self.totals[item.category].tokens += placeholder_tokens - item.tokens
        self.blocks[index] = replace(item, cleared=True, tokens=placeholder_tokens)

    def drop_reasoning(self) -> None:
        """Take the reasoning out of the window. Only the blocks after the last drop are looked at:
        one done at every user turn would otherwise walk the whole window each time."""
        start = self.reasoning_from
        self.blocks[start:] = [item for item in self.blocks[start:] if item.block.category != REASONING]
        self.totals[REASONING] = CategoryTotal()
        self.exact_to = min(self.exact_to, start)
        self.reasoning_from = len(self.blocks)

    def keep_resident(self) -> None:
        """Empty the window but for what is re-sent with every request."""
        self.blocks = [item for item in self.blocks if is_resident(item.category, item.entry.role)]
        self.totals = {name: CategoryTotal() for name in CATEGORIES}
        self.exact_to = self.reasoning_from = 0
        for item in self.blocks:
            total = self.totals[item.category]
            total.tokens += item.tokens
            total.blocks += 1

    def texts(self) -> list[str]:
        """Each block's text as ``WindowBlock.text`` gives it, the released ones read back from the log
        together (for whatever reads the whole window: the audit)."""
        read = iter(read_texts([item.block for item in self.blocks if not item.cleared]))
        return [CLEARED_PLACEHOLDER if item.cleared else next(read) for item in self.blocks]

    def categories(self) -> dict[str, CategoryTotal]:
        """A copy of the per-category totals (every category present, zero when empty)."""
        return {name: CategoryTotal(t.tokens, t.blocks) for name, t in self.totals.items()}

    @property
    def estimated_tokens(self) -> int:
        return sum([t.tokens for t in self.totals.values()])  # (a list: quicker to sum than a generator)


class Replay:
    """Walks a session's entries and keeps the window current after each one.

    The walk is resumable: live tailing calls ``run`` again as entries are
    appended and only the new ones are replayed; ``fork`` copies the state to
    look one entry ahead without committing to it (the last entry of a growing
    log may still gain blocks).
    """

    def __init__(self, entries: Sequence[Entry], accounting: Accounting, harness: HarnessPrefix | None = None, *,
                 reasoning_kept: str = REASONING_RESENT, first_call_prefix: HarnessPrefix | None = None) -> None:
        """``harness``: the prefix already inferred from an earlier call these entries do not hold.
        ``first_call_prefix`` (without ``harness``): the prefix the first call of these entries infers, in the
        windows before it too (see the function ``first_call_prefix``)."""
        self.entries = entries
        self.accounting = accounting
        # The format's rule (parsers.model.REASONING_*): until when reasoning stays in the window.
        self.reasoning_kept = reasoning_kept
        self._by_uid: dict[str, int] | None = None  # uid → index, built when a partial compaction first needs it
        self._by_uid_of = 0  # how many entries it was built from
        self.window = Window(at=0, harness=harness or first_call_prefix)
        self.position = 0  # entries replayed so far
        self.last_entry: Entry | None = None  # the entry replayed last
        self.compacted = False  # ...and whether it was a compaction that emptied the window
        self.last_compaction_at = -1  # the position of the entry window.last_compaction is of
        self._cleared: set[str] = set()
        self._preserved: list[Entry] = []
        if harness is None and first_call_prefix is not None:
            self._harness = HarnessTracker(first_call_prefix, before_first_call=True)
        else:
            self._harness = HarnessTracker(harness, {harness.model: harness} if harness is not None else None)

    def fork(self) -> Replay:
        twin = Replay.__new__(Replay)
        twin.entries, twin.accounting, twin.reasoning_kept = self.entries, self.accounting, self.reasoning_kept
        twin._by_uid, twin._by_uid_of = self._by_uid, self._by_uid_of
        twin.compacted, twin.last_entry, twin.last_compaction_at = self.compacted, self.last_entry, self.last_compaction_at
        twin.position, twin._cleared, twin._preserved = self.position, set(self._cleared), list(self._preserved)
        twin._harness = self._harness.fork()
        # Blocks are never changed in place (see Window.clear), so sharing them is safe: O(1) per block.
        totals = {name: CategoryTotal(t.tokens, t.blocks) for name, t in self.window.totals.items()}
        twin.window = Window(self.window.at, list(self.window.blocks), self.window.last_compaction, totals, self.window.harness,
                             self.window.exact_to, reported=self.window.reported, reported_at=self.window.reported_at,
                             reported_from=self.window.reported_from)
        return twin

    def run(self, until: int | None = None) -> Iterator[Window]:
        """Yield the window after each further entry, up to message ``until`` (inclusive).

        The same ``Window`` object is updated in place; copy what you keep.
        """
        for window, _entry in self.run_with_entries(until):
            yield window

    def run_with_entries(self, until: int | None = None) -> Iterator[tuple[Window, Entry]]:
        """``run``, each window with the entry it is after."""
        entries = self.entries
        stop = len(entries) if until is None else min(until, len(entries))
        while self.position < stop:
            # A slice at a time: one read of a packed store per RUN_STEP entries, not one per entry.
            for entry in entries[self.position : min(stop, self.position + RUN_STEP)]:
                self._step(entry, self.position)
                self.position += 1
                self.last_entry = entry
                yield self.window, entry

    def _step(self, entry: Entry, position: int) -> None:
        window, cleared = self.window, self._cleared
        window.at = entry.index
        compaction = entry.compaction
        self.compacted = compaction is not None and compaction.kind != "microcompact"
        if compaction is not None:
            window.last_compaction, self.last_compaction_at = compaction, position
            if compaction.kind == "microcompact":
                cleared.update(compaction.cleared_tool_ids)
                self._apply_clearing(window, cleared)
            else:
                window.keep_resident()
                window.reported, window.reported_at, window.reported_from = compaction.post_tokens, None, None
                self._preserved = self._preserved_by(compaction, entry.index)
                for block in compaction.replacement or ():
                    window.append(WindowBlock(entry, -1, block, text_tokens(self.accounting.counter, block)))
                if self._preserved and compaction.summary_after and not compaction.summary_follows:
                    # OpenHands puts its summary at ``summary_offset`` among the kept events.
                    head, self._preserved = self._preserved[: compaction.summary_after], self._preserved[compaction.summary_after :]
                    self._flush(window, head, cleared)
                self._add_entry(window, entry, position, cleared)
                if self._preserved and not compaction.summary_follows:
                    # What the compaction keeps is back at once, after the marker's own summary if it has one.
                    self._flush(window, self._preserved, cleared)
        elif entry.role == SYSTEM_SNAPSHOT:
            self._replace_snapshot(window, entry, position, cleared)
        else:
            if window.totals[REASONING].blocks and self._reasoning_leaves_before(entry):
                window.drop_reasoning()
            preserved = self._preserved
            is_summary = bool(entry.blocks) and entry.blocks[0].category == SUMMARY
            if preserved and not is_summary:
                self._flush(window, preserved, cleared)
            self._add_entry(window, entry, position, cleared)
            if preserved and is_summary:
                self._flush(window, preserved, cleared)
        self._follow_calls(entry)

    def _reasoning_leaves_before(self, entry: Entry) -> bool:
        """Whether the reasoning in the window is no longer sent once ``entry`` comes: never sent back (Gemini CLI),
        or (Responses API) ``entry`` starts a user turn."""
        rule = self.reasoning_kept
        return rule == REASONING_NEVER_RESENT or (rule == REASONING_UNTIL_NEXT_TURN and entry.role == "user")

    def _follow_calls(self, entry: Entry) -> None:
        """Keep the inferred harness prefix current at each model call (its output was added up by _add_entry)."""
        harness = self._harness
        if self.compacted:
            harness.compacted()
        usage = entry.usage
        if usage is not None:
            window = self.window
            window.reported_from = entry.index if harness.call_from is None else harness.call_from
            harness.call(entry.index, entry.model, usage.prompt_tokens, window.estimated_tokens, window.totals)
            window.harness = harness.prefix
            window.reported, window.reported_at = usage.prompt_tokens, entry.index

    def _preserved_by(self, compaction: Compaction, at: int) -> list[Entry]:
        """The messages a partial compaction (the entry at index ``at``) keeps verbatim, in file order.

        Only those written before it: one written after it is counted where it comes (re-attached ahead
        of itself, it was counted twice, or before its tokens were)."""
        if not compaction.preserved_ids and not compaction.preserved_segment:
            return []
        entries = self.entries
        if self._by_uid is None or self._by_uid_of != len(entries):
            # Built once, and again only when entries were appended since.
            self._by_uid = {e.uid: e.index for e in entries if e.uid}
            self._by_uid_of = len(entries)
        if compaction.preserved_ids:
            indexes = (self._by_uid.get(u) for u in compaction.preserved_ids)
            return [entries[index - 1] for index in indexes if index is not None and index < at]
        if compaction.preserved_segment:
            head, tail = (self._by_uid.get(u) for u in compaction.preserved_segment)
            if head is not None and tail is not None and head <= tail:
                return list(entries[head - 1 : min(tail, at - 1)])  # a list: _flush empties it (a Sequence's slice need not be one)
        return []

    def window_at(self, message: int | None = None) -> Window:
        for _ in self.run(message):
            pass
        return self.window

    def _flush(self, window: Window, preserved: list[Entry], cleared: set[str]) -> None:
        """Re-attach a partial compaction's preserved messages after its summary."""
        for entry in preserved:
            # A system prompt or tool list never left the window: re-attaching it would count it twice.
            if entry.blocks and all(is_resident(b.category, entry.role) for b in entry.blocks):
                continue
            self._add_entry(window, entry, entry.index - 1, cleared, re_attached=True)
        preserved.clear()

    def _add_entry(self, window: Window, entry: Entry, position: int, cleared: set[str], re_attached: bool = False) -> None:
        """``re_attached``: a message a compaction kept, back in the window (not written by the call now open)."""
        accounting = self.accounting
        tokens = accounting.of(position)
        output, answers = 0, False
        for j, block in enumerate(entry.blocks):
            window.append(WindowBlock(entry, j, block, tokens[j], accounting.estimated(position, j)))
            category = block.category
            if category in OUTPUT_CATEGORIES:
                output += tokens[j]
                answers = True
            elif category == TOOLS and not re_attached:
                self._harness.tools_listed()
            elif category in CLEARED_WITH_RESULT and block.tool_id in cleared:
                window.clear(len(window.blocks) - 1, self._cleared_tokens(block))
        if not re_attached:
            self._harness.call_output += output
            if answers and self._harness.call_from is None:
                self._harness.call_from = entry.index

    def _replace_snapshot(self, window: Window, entry: Entry, position: int, cleared: set[str]) -> None:
        """A snapshot of the system prompt and tool list as sent: it stands in for what the snapshots
        before it said (the system prompt if it has one, the tools if it has them), at the front of the
        window, where the request has them."""
        replaced = {block.category for block in entry.blocks}

        def superseded(item: WindowBlock) -> bool:
            return item.entry.role == SYSTEM_SNAPSHOT and item.category in replaced

        kept = [item for item in window.blocks if not superseded(item)]
        for item in window.blocks:
            if superseded(item):
                window.totals[item.category].tokens -= item.tokens
                window.totals[item.category].blocks -= 1
        window.blocks = []
        window.exact_to = window.reasoning_from = 0  # the snapshot goes in front: every index moves
        self._add_entry(window, entry, position, cleared)
        window.blocks.extend(kept)

    def _cleared_tokens(self, block: Block) -> int:
        """What a block of a cleared result costs: the placeholder for its text, nothing for an image in it."""
        # Counted when a result is first cleared, not for every replay (counts are remembered).
        return self.accounting.counter.count(CLEARED_PLACEHOLDER) if block.category == TOOL_RESULT else 0

    def _apply_clearing(self, window: Window, cleared: set[str]) -> None:
        for index, item in enumerate(window.blocks):
            if item.category in CLEARED_WITH_RESULT and not item.cleared and item.block.tool_id in cleared:
                window.clear(index, self._cleared_tokens(item.block))


def first_call_prefix(entries: Sequence[Entry], accounting: Accounting, first_call: int, *, reasoning_kept: str) -> HarnessPrefix | None:
    """The harness prefix the log's first model call (the entry at position ``first_call``) infers (None: none,
    as when the log holds the system prompt and tools). What it stands for was sent with that call, so it was
    in the window before it: a replay given it (``Replay(first_call_prefix=…)``) shows it in the windows before
    the first call too, an estimate as it is from the first call on, rather than no prefix at all."""
    return Replay(entries, accounting, reasoning_kept=reasoning_kept).window_at(first_call + 1).harness
