"""Token estimates for every block of a session.

Text is counted with the tokenizer. Two kinds of block have no countable text:
images (estimated from their pixel size) and reasoning the log keeps only
encrypted or empty (estimated from the output usage of the call that made it).
"""

from __future__ import annotations

import math
import threading
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence

from ctxtop.context.store.digest import new_digest
from ctxtop.context.window.estimate import SAMPLED_TEXT_CHARS, Calibration, calibrated_kind, sample_pieces, sampled_estimate
from ctxtop.context.window.tokens import DIGEST_BYTES, TokenCounter
from ctxtop.parsers.model import ASSISTANT, IMAGE, REASONING, TOOL_CALL, Block, Entry

NO_DIGEST = bytes(DIGEST_BYTES)

# Anthropic: tokens ≈ width × height / 750, after scaling the long edge down to 1568 px.
IMAGE_PIXELS_PER_TOKEN = 750
IMAGE_MAX_EDGE = 1568
# An image whose size the log does not tell: the cost of a full-size image.
IMAGE_UNKNOWN_TOKENS = 1600
OUTPUT_CATEGORIES = (ASSISTANT, TOOL_CALL, REASONING)
# The categories whose tokens are not their text's count alone (see ``_block_tokens``).
NOT_TEXT_ONLY = (IMAGE, TOOL_CALL)


def image_tokens(size: tuple[int, int] | None) -> int:
    if not size or size[0] <= 0 or size[1] <= 0:
        return IMAGE_UNKNOWN_TOKENS
    width, height = size
    scale = min(1.0, IMAGE_MAX_EDGE / max(width, height))
    return max(1, math.ceil(width * scale * height * scale / IMAGE_PIXELS_PER_TOKEN))


def text_tokens(counter: TokenCounter, block: Block) -> int:
    return _block_tokens(counter, block, counter.count(block.text) if block.category != IMAGE else 0)


def _utf8_length(text: str) -> int:
    """The length of ``text`` in UTF-8, without encoding it when it is ASCII (one byte a character)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _block_tokens(counter: TokenCounter, block: Block, text_count: int) -> int:
    """A block's tokens given the count of its text: an image by its size, a call with its tool's name."""
    if block.category == IMAGE:
        return image_tokens(block.image_size)
    if block.category == TOOL_CALL and block.tool_name:
        return text_count + counter.count(block.tool_name)
    return text_count


def _digest_of_parts(*parts: array | bytearray) -> bytes:
    """The digest (``store.digest``) of the parts one after the other, read in place (no joined copy)."""
    digest = new_digest()
    for part in parts:
        digest.update(part)
    return digest.digest()


class Accounting:
    """Per-block token counts of a session's entries, kept parallel to them.

    ``of(i)[j]`` is the estimate for ``entries[i].blocks[j]``; ``estimated(i, j)``
    is True where it came from usage rather than text. The counts of all blocks
    sit in one flat array (8 bytes a block, not a list and an int object each).
    """

    def __init__(self, counter: TokenCounter, *, estimate_history: bool = False) -> None:
        """``estimate_history``: texts the caches do not know are estimated (``estimate``) rather than
        tokenized, but for each category's calibration (short texts apart) and what the reasoning
        estimates need; the windows shown are made exact by ``make_exact``."""
        self.counter = counter
        self.estimate_history = estimate_history
        self.calibration = Calibration()
        self._rough = bytearray()  # parallel to _flat: 1 where the count is an estimate from characters
        self.rough_blocks = 0  # how many are (0: every count is exact)
        self._exact_lock = threading.Lock()
        self._seen_call = False  # a model call was counted: the harness inference has what it needs
        self._flat = array("q")  # every block's tokens, entry after entry
        self._starts = array("q", [0])  # entry i's blocks are _flat[_starts[i]:_starts[i + 1]]
        # Each block's content digest (DIGEST_BYTES, zeros for an image or an empty text), parallel to
        # _flat: what a block holds is known without reading a released text back.
        self._digests = bytearray()
        # Parallel to _flat: 1 where the tokens come from the reported usage (opaque reasoning). A flag a
        # block rather than a set of (entry, block) pairs: a 1 GB rollout has 190,000 such blocks.
        self._from_usage = bytearray()
        self._calls_done = 0  # position just after the last entry with usage counted so far: where the open call begins

    @property
    def calls_done(self) -> int:
        """Entries before this position have final counts: the model call they belong to has reported usage."""
        return self._calls_done

    @property
    def counted(self) -> int:
        """How many entries are counted."""
        return len(self._starts) - 1

    def of(self, position: int) -> array:
        """The tokens of each block of the entry at ``position``."""
        return self._flat[self._starts[position] : self._starts[position + 1]]

    def tokens_of_blocks(self, positions: Iterable[int], blocks: Iterable[int]) -> list[int]:
        """The tokens of ``entries[p].blocks[b]`` for each (p, b) of ``zip(positions, blocks)``."""
        flat, starts = self._flat, self._starts
        return [flat[starts[position] + block] for position, block in zip(positions, blocks)]

    def digest(self, position: int, block: int) -> bytes:
        """The content digest of ``entries[position].blocks[block]``'s text."""
        at = (self._starts[position] + block) * DIGEST_BYTES
        return bytes(self._digests[at : at + DIGEST_BYTES])

    def estimated(self, position: int, block: int) -> bool:
        return bool(self._from_usage[self._starts[position] + block])

    def rough(self, position: int, block: int) -> bool:
        """Whether the count of that block is an estimate from its characters (see ``estimate``)."""
        return bool(self._rough[self._starts[position] + block])

    def content_digest(self) -> bytes:
        """A digest of how the counted entries are cut into blocks and of every block's content digest."""
        return _digest_of_parts(self._starts, self._digests)

    def counts_digest(self) -> bytes:
        """A digest of every block's count and of which are estimates."""
        return _digest_of_parts(self._flat, self._rough)

    def rough_through(self, position: int) -> bool:
        """Whether any count of the entries before ``position`` is an estimate from characters."""
        return self._rough.find(1, 0, self._starts[min(position, self.counted)]) >= 0

    def rough_positions(self, limit: int) -> list[tuple[int, int]]:
        """The first ``limit`` blocks (entry position, block index) whose counts are estimates, in log order."""
        found: list[tuple[int, int]] = []
        rough, starts = self._rough, self._starts
        at = rough.find(1)
        while at >= 0 and len(found) < limit:
            position = bisect_right(starts, at) - 1
            found.append((position, at - starts[position]))
            at = rough.find(1, at + 1)
        return found

    def make_exact(self, blocks: list[tuple[int, int, Block]]) -> None:
        """Tokenize the blocks (position, block index, block) whose counts are estimates, in place."""
        if self._count_exactly(blocks):
            self.counter.persist()

    def _count_exactly(self, blocks: list[tuple[int, int, Block]]) -> bool:
        """Tokenize those of the blocks whose counts are estimates and put their counts in their place;
        whether there were any (the token cache then has counts to persist)."""
        todo = [(position, j, block) for position, j, block in blocks if self._rough[self._starts[position] + j]]
        if not todo:
            return False
        counts = self.counter.count_all([block.text for _, _, block in todo])
        with self._exact_lock:  # a view and the history's refinement (two threads) may make the same block exact
            for (position, j, block), count in zip(todo, counts):
                at = self._starts[position] + j
                if self._rough[at]:  # (a block listed twice, or made exact meanwhile)
                    self._flat[at] = _block_tokens(self.counter, block, count)
                    self._settle(at)
        return True

    def _settle(self, at: int) -> None:
        """The count at ``at`` (in ``_flat``) is exact now."""
        if self._rough[at]:
            self._rough[at] = 0
            self.rough_blocks -= 1

    @property
    def tokens(self) -> list[list[int]]:
        """Every entry's block tokens as lists (for comparing two accountings)."""
        return [list(self.of(i)) for i in range(self.counted)]

    def update(self, entries: Sequence[Entry], start: int = 0, stop: int | None = None) -> int:
        """Count entries from position ``start`` (live tailing passes the first changed one) to ``stop``.

        Only those entries' texts are read; the reasoning estimates of the model
        call they belong to are redone from the counts already made. Returns the
        first position whose counts may have changed (that call's first entry).
        """
        start = min(start, self.counted)
        stop = len(entries) if stop is None else min(stop, len(entries))
        del self._flat[self._starts[start] :]
        self.rough_blocks -= self._rough.count(1, self._starts[start])
        del self._rough[self._starts[start] :]
        del self._digests[self._starts[start] * DIGEST_BYTES :]
        del self._from_usage[self._starts[start] :]
        del self._starts[start + 1 :]
        call_start = self._calls_done if self._calls_done <= start else self._call_start(entries, start)
        span = entries[call_start:stop]  # read once (a store of packed entries takes a lock for each read)
        counted = span[start - call_start :]
        blocks = [block for entry in counted for block in entry.blocks]
        keys: list[bytes] = []
        texts = [b.text if b.category != IMAGE else "" for b in blocks]
        if self.estimate_history:
            counts = self._count_or_estimate(counted, texts, keys)
        else:
            counts = self.counter.count_all(texts, keys)
            self._rough.extend(bytes(len(texts)))
        self._digests += b"".join([key or NO_DIGEST for key in keys])
        self._from_usage += bytes(len(texts))
        # Only an image or a tool call costs other than its text's count: the rest are taken as they are,
        # without a call a block.
        counter = self.counter
        self._flat.extend([_block_tokens(counter, b, n) if b.category in NOT_TEXT_ONLY else n for b, n in zip(blocks, counts)])
        end = self._starts[-1]
        for entry in counted:
            end += len(entry.blocks)
            self._starts.append(end)
        self._calls_done = self._estimate_opaque_reasoning(span, call_start)
        self.counter.persist()
        return call_start

    def _count_or_estimate(self, counted: Sequence[Entry], texts: list[str], keys: list[bytes]) -> list[int]:
        """Each text's count, from the caches or tokenized, or else estimated (marked in ``_rough``)."""
        known = self.counter.known(texts, keys)
        calibration, counter = self.calibration, self.counter
        counts: list[int] = []
        rough = bytearray()  # this span's flags, added to ``_rough`` once, at the end
        seen_call = self._seen_call
        n = 0
        for entry in counted:
            for block in entry.blocks:
                text, count = texts[n], known[n]
                estimated = 0
                if count is None:
                    category, length = block.category, len(text)
                    kind = calibrated_kind(category, length)
                    if length >= SAMPLED_TEXT_CHARS and category not in OUTPUT_CATEGORIES and seen_call:
                        pieces = sample_pieces(text)
                        piece_chars, piece_tokens = sum(map(len, pieces)), sum(map(counter.tokens_uncached, pieces))
                        calibration.learn(kind, piece_chars, piece_tokens)
                        count, estimated = sampled_estimate(length, piece_chars, piece_tokens), 1
                    elif not seen_call or not calibration.ready(kind):
                        count = counter.count_keyed(text, keys[n])
                        calibration.learn(kind, length, count)
                    else:
                        count, estimated = calibration.estimate(kind, length), 1
                elif text:
                    calibration.learn(calibrated_kind(block.category, len(text)), len(text), count)
                n += 1
                counts.append(count)
                rough.append(estimated)
            if entry.usage is not None:
                seen_call = True
        self._seen_call = seen_call
        self._rough += rough
        self.rough_blocks += rough.count(1)
        return counts

    def saved(self) -> dict:
        """The counts as plain data, for a saved session index."""
        return {"flat": self._flat.tobytes(), "starts": self._starts.tobytes(), "digests": bytes(self._digests),
                "estimated": bytes(self._from_usage), "calls_done": self._calls_done, "rough": bytes(self._rough),
                "calibration": self.calibration.saved(), "seen_call": self._seen_call}

    def restore(self, saved: dict) -> None:
        self._flat, self._starts = array("q"), array("q")
        self._flat.frombytes(saved["flat"])
        self._starts.frombytes(saved["starts"])
        self._digests = bytearray(saved["digests"])
        self._rough = bytearray(saved["rough"])
        self.rough_blocks = self._rough.count(1)
        self.calibration.restore(saved["calibration"])
        self._seen_call = saved["seen_call"]
        self._from_usage = bytearray(saved["estimated"])
        self._calls_done = saved["calls_done"]

    def entry_tokens(self, position: int) -> int:
        return sum(self.of(position))

    @staticmethod
    def _call_start(entries: Sequence[Entry], start: int) -> int:
        # Reasoning estimates depend on the whole model call, so restart at its first entry.
        while start > 0 and entries[start - 1].usage is None:
            start -= 1
        return start

    def _estimate_opaque_reasoning(self, span: Sequence[Entry], start: int) -> int:
        """Give encrypted/empty reasoning the output tokens its model call reports.

        A call is the run of entries up to one that carries usage. The reasoning
        share is the reported reasoning tokens, or else the output tokens minus
        the visible output of the call; it is split evenly over the opaque blocks.
        ``span`` holds the entries from position ``start`` on. Returns where the
        last call that ended in it ends.
        """
        call: list[tuple[int, Entry]] = []
        calls_done = start
        for position, entry in enumerate(span, start):
            call.append((position, entry))
            usage = entry.usage
            if usage is None:
                continue
            calls_done = position + 1
            opaque = [(i, j, b) for i, e in call for j, b in enumerate(e.blocks) if b.category == REASONING and b.opaque]
            if opaque:
                if usage.reasoning_tokens is not None:
                    share = usage.reasoning_tokens
                else:
                    # The share is what the call wrote less what it shows: that must be counted, not estimated.
                    shown = [(i, j, b) for i, e in call for j, b in enumerate(e.blocks)
                             if b.category in OUTPUT_CATEGORIES and not (b.category == REASONING and b.opaque)]
                    self._count_exactly(shown)
                    share = max(0, usage.output_tokens - sum(self._flat[self._starts[i] + j] for i, j, _ in shown))
                for n, (i, j, block) in enumerate(opaque):
                    at = self._starts[i] + j
                    part = share // len(opaque) + (1 if n < share % len(opaque) else 0)
                    # Visible summary text (Codex) is part of the reasoning: keep the larger figure. Each token
                    # holds a byte at least, so a text of no more bytes than the share is not tokenized to know
                    # that. (Counted again rather than taken from _flat, which may hold an estimate.)
                    fits = _utf8_length(block.text) <= part
                    self._flat[at] = part if fits else max(text_tokens(self.counter, block), part)
                    self._from_usage[at] = 1
                    self._settle(at)  # (nothing for make_exact to redo)
            call = []
        return calls_done
