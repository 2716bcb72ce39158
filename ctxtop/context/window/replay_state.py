"""A session's replays and timeline as plain data, for its saved index: so that a warm open replays nothing.

A replay's window is a list of blocks of the session's entries: each is saved as
where it is (the entry's position and the block's index in it, or which block of
a compaction's replacement it is), what it counts, and whether that count is an
estimate from usage or the block is shown cleared; never as what it says. The
entries themselves are the index's. ``SavedReplay`` stands for a checkpoint (a
replay stopped after a compaction) until a window before the replay ahead is
asked for: restoring it unpacks the entries its window holds, which a warm open
that only shows the latest window need never do.

This module reads and sets a Replay's private state: it is that state's saved
form, kept apart so that ``replay`` stays about replaying.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

from ctxtop.context.window.accounting import Accounting
from ctxtop.context.window.harness import HarnessPrefix, HarnessTracker
from ctxtop.context.window.replay import CategoryTotal, Replay, Window, WindowBlock
from ctxtop.parsers.model import CATEGORIES, Entry

ESTIMATED, CLEARED = 1, 2  # a saved block's flags
FIELDS = 4  # a saved block: entry position, where in it (see _where), tokens, flags


def saved_replay(replay: Replay | SavedReplay) -> tuple:
    """``replay``'s state as plain data (a SavedReplay not yet restored: as it was saved)."""
    if isinstance(replay, SavedReplay):
        return replay.saved
    window, harness = replay.window, replay._harness
    blocks = array("q")
    for item in window.blocks:
        blocks.extend((item.entry.index - 1, _where(item), item.tokens, (item.estimated and ESTIMATED) | (item.cleared and CLEARED)))
    return (replay.position, replay.compacted, replay.last_compaction_at, sorted(replay._cleared),
            [entry.index - 1 for entry in replay._preserved],
            window.at, blocks.tobytes(), [(window.totals[name].tokens, window.totals[name].blocks) for name in CATEGORIES],
            _saved_prefix(window.harness), window.exact_to, window.reported, window.reported_at, window.reported_from,
            (_saved_prefix(harness.prefix), [_saved_prefix(p) for p in harness.by_model.values()] if harness.by_model is not None else None,
             harness.last_unexplained, harness.call_output, harness.tools_changed, harness.before_first_call, harness.call_from))


def _where(item: WindowBlock) -> int:
    """The block's index in its entry, or ``-1 - k`` for the k-th block of its compaction's replacement."""
    if item.position >= 0:
        return item.position
    replacement = item.entry.compaction.replacement if item.entry.compaction is not None else None
    for k, block in enumerate(replacement or ()):
        if block is item.block:
            return -1 - k
    raise ValueError("a replayed block that is neither in its entry nor in its compaction's replacement")


def restored_replay(saved: tuple, entries: Sequence[Entry], accounting: Accounting, *, reasoning_kept: str) -> Replay:
    """The replay ``saved_replay`` saved, over the same ``entries`` (read back as they are needed)."""
    (position, compacted, last_compaction_at, cleared, preserved, at, blocks, totals, window_harness, exact_to, reported, reported_at,
     reported_from, (prefix, by_model, last_unexplained, call_output, tools_changed, before_first_call, call_from)) = saved
    replay = Replay(entries, accounting, reasoning_kept=reasoning_kept)
    read: dict[int, Entry] = {}  # each entry read once: the blocks of one entry share it, as in the replay saved

    def entry_at(index: int) -> Entry:
        entry = read.get(index)
        if entry is None:
            entry = read[index] = entries[index]
        return entry

    flat = array("q")
    flat.frombytes(blocks)
    window_blocks = []
    for n in range(0, len(flat), FIELDS):
        index, where, tokens, flags = flat[n : n + FIELDS]
        entry = entry_at(index)
        if where >= 0:
            block, block_position = entry.blocks[where], where
        else:
            block, block_position = entry.compaction.replacement[-1 - where], -1  # type: ignore[union-attr,index]
        window_blocks.append(WindowBlock(entry, block_position, block, tokens, bool(flags & ESTIMATED), bool(flags & CLEARED)))
    last_compaction = entry_at(last_compaction_at).compaction if last_compaction_at >= 0 else None
    replay.window = Window(at, window_blocks, last_compaction, {name: CategoryTotal(*total) for name, total in zip(CATEGORIES, totals)},
                           _restored_prefix(window_harness), exact_to, reported=reported,
                           reported_at=reported_at, reported_from=reported_from)
    replay.position, replay.compacted, replay.last_compaction_at = position, compacted, last_compaction_at
    replay.last_entry = entry_at(position - 1) if position else None
    replay._cleared, replay._preserved = set(cleared), [entry_at(i) for i in preserved]
    known = [_restored_prefix(p) for p in by_model] if by_model is not None else None
    replay._harness = HarnessTracker(_restored_prefix(prefix), {p.model: p for p in known if p} if known is not None else None,
                                     last_unexplained, call_output, tools_changed, before_first_call, call_from)
    return replay


def _saved_prefix(prefix: HarnessPrefix | None) -> tuple | None:
    return None if prefix is None else (prefix.tokens, prefix.message, prefix.model, prefix.reason, prefix.logged_system)


def _restored_prefix(saved: tuple | None) -> HarnessPrefix | None:
    return None if saved is None else HarnessPrefix(*saved)


class SavedReplay:
    """A kept replay as saved, restored the first time it is continued from (``fork``, as a Replay is)."""

    __slots__ = ("position", "saved", "_restore", "_replay")

    def __init__(self, saved: tuple, restore: Callable[[tuple], Replay]) -> None:
        self.position = saved[0]
        self.saved = saved
        self._restore = restore
        self._replay: Replay | None = None

    def fork(self) -> Replay:
        if self._replay is None:
            self._replay = self._restore(self.saved)
        return self._replay.fork()


