"""Big texts let go once counted, and read back from the log when something shows or searches them.

A 1 GB session holds most of its bytes in tool outputs that, once their tokens
are counted, are only looked at when they are on screen or in a window being
audited. Keeping them all would cost more memory than the file's size; a block
instead keeps the byte offset of the line it came from and, when asked for its
text, that one line is read and parsed again (the parsed lines most recently
used are kept, up to LINE_CACHE_BYTES). ctxtop only ever reads the log.

Only JSON Lines logs release texts, only blocks whose whole text came from
one line, and only what tools wrote: what people and the model wrote (a few
per cent of a log's text) is read by every pass over the session — rule
detection, the audit's windows, the notes after a compaction — and reading it
back each time costs more than holding it. A text read back is checked
against the length it had: if the log was rewritten in between, the block
reads as MISSING rather than as someone else's text.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import cast

from ctxtop.context.store.source import open_regular
from ctxtop.parsers.base import LineParser
from ctxtop.parsers.model import ASSISTANT, INJECTED, REASONING, SUMMARY, SYSTEM, USER, Block, Entry

# Shorter texts cost about as much to find again as to keep.
MIN_RELEASE_CHARS = 128
# Never released: on generated sessions 2–7 % of the text, and 40–45 % of the texts read back otherwise.
HELD_CATEGORIES = frozenset({SYSTEM, INJECTED, USER, ASSISTANT, REASONING, SUMMARY})
# Parsed lines kept for reading back: the window on screen and its neighbours, not the whole log
# (a 200k-token window's texts are under 1 MB). Each process of a whole read keeps its own: at 16 MB
# a 1 GB rollout's cold export went over 400 MB, for no time saved.
LINE_CACHE_BYTES = 4 << 20
READ_STEP = 1 << 16
# Lines read back together (``read_texts``) come in one read when they lie within this many bytes.
RUN_BYTES = 1 << 20
MISSING = "[ctxtop: this text is no longer in the log as it was read: the file changed since]"


class _Released:
    """Where a released text is: the ``nth`` block with its tool id that its line yields."""

    __slots__ = ("length", "log", "nth")

    def __init__(self, log: LogTexts, length: int, nth: int) -> None:
        self.log, self.length, self.nth = log, length, nth

    def read(self, block: Block) -> str:
        return self.log.read(block, self)


def released_as(block: Block) -> tuple[int, int] | None:
    """(length, nth) of a released block, for saving it; None when its text is held."""
    lazy = block._lazy  # noqa: SLF001 - this module made it
    return (lazy.length, lazy.nth) if block.released and isinstance(lazy, _Released) else None


class LogTexts:
    """Releases the big texts of one log's entries and reads them back on demand (thread-safe)."""

    def __init__(self, path: str | os.PathLike, parser_type: type[LineParser]) -> None:
        self.path = os.fspath(path)
        self.parser_type = parser_type
        self._lines: OrderedDict[int, tuple[list[Block], int]] = OrderedDict()  # line offset → its blocks, its size
        self._cached_bytes = 0
        self._lock = threading.Lock()
        self.lines_read = 0  # lines read back from the log so far

    def release(self, entries: Sequence[Entry], start: int, stop: int) -> None:
        """Release the big texts of ``entries[start:stop]``, whose tokens are counted."""
        for entry in entries[start:stop]:
            blocks = entry.blocks
            for j, block in enumerate(blocks):
                if (block.source is None or block.opaque or block.released or block.category in HELD_CATEGORIES
                        or len(block.text) < MIN_RELEASE_CHARS):
                    continue
                # Which of its line's blocks with the same tool id it is: what a re-parse of the line finds it by.
                nth = sum(1 for other in blocks[:j] if other.source == block.source and other.tool_id == block.tool_id)
                block.release(_Released(self, len(block.text), nth))

    def restore(self, block: Block, length: int, nth: int) -> None:
        """Mark ``block`` released as a saved index recorded it (``released_as`` gave the numbers)."""
        block.release(_Released(self, length, nth))

    def read(self, block: Block, released: _Released) -> str:
        with self._lock:
            source = cast(int, block.source)
            blocks = self._lines_blocks([source])[source]
        return _pick(blocks, block, released)

    def read_many(self, blocks: Sequence[Block]) -> list[str]:
        """The texts of ``blocks`` (released by this log), their lines read in file order with the file
        opened once and nearby lines in one read: what a window's texts cost, read one at a time, was
        mostly opening the file and calling into the kernel."""
        sources = [cast(int, block.source) for block in blocks]  # a released block always has its line
        with self._lock:
            lines = self._lines_blocks(sorted(set(sources)))
        return [_pick(lines[source], block, cast(_Released, block._lazy)) for source, block in zip(sources, blocks, strict=True)]  # noqa: SLF001

    def _lines_blocks(self, offsets: list[int]) -> dict[int, list[Block]]:
        """The blocks of the lines at ``offsets`` (sorted), from the cache or read back and parsed."""
        found: dict[int, list[Block]] = {}
        missing = []
        for offset in offsets:
            cached = self._lines.get(offset)
            if cached is not None:
                self._lines.move_to_end(offset)
                found[offset] = cached[0]
            else:
                missing.append(offset)
        if missing:
            for offset, raw in self._read_lines(missing):
                found[offset] = self._parsed(offset, raw)
        return found

    def _parsed(self, offset: int, raw: bytes) -> list[Block]:
        # (Made from the record alone where the format can tell, not by a new parser: a tool's output or
        # call, most of what is read back, took twice as long through its dispatch, handlers and entry.)
        blocks = self.parser_type.blocks_of_line(raw, offset)
        self.lines_read += 1
        self._lines[offset] = (blocks, len(raw))
        self._cached_bytes += len(raw)
        while self._cached_bytes > LINE_CACHE_BYTES and len(self._lines) > 1:
            _, (_, size) = self._lines.popitem(last=False)
            self._cached_bytes -= size
        return blocks

    def _read_lines(self, offsets: list[int]) -> Iterator[tuple[int, bytes]]:
        """Each line starting at one of ``offsets`` (sorted), without its newline; empty when the file is gone."""
        try:
            fd = open_regular(self.path)
        except OSError:
            yield from ((offset, b"") for offset in offsets)
            return
        try:
            run_start, run = 0, b""
            for position, offset in enumerate(offsets):
                if not run_start <= offset < run_start + len(run):
                    # A new run: from this line to the last one wanted within RUN_BYTES, in one read.
                    last = offsets[bisect_left(offsets, offset + RUN_BYTES, lo=position) - 1]
                    run_start, run = offset, _pread(fd, last - offset + READ_STEP, offset)
                newline = run.find(b"\n", offset - run_start)
                yield offset, run[offset - run_start : newline] if newline != -1 else _read_line(fd, offset)
        finally:
            os.close(fd)


def _pick(blocks: list[Block], block: Block, released: _Released) -> str:
    """``block``'s text among its line's blocks read back, if it is still the text it was."""
    alike = [b for b in blocks if b.tool_id == block.tool_id]
    if released.nth < len(alike):
        text = alike[released.nth].text
        if len(text) == released.length:
            return text
    return MISSING


def read_texts(blocks: Sequence[Block]) -> list[str]:
    """The texts of ``blocks``, those released read back together, log by log (``LogTexts.read_many``)."""
    texts: list[str | None] = [None if block.released and isinstance(block._lazy, _Released) else block.text  # noqa: SLF001
                               for block in blocks]
    by_log: dict[LogTexts, list[int]] = {}
    for position, text in enumerate(texts):
        if text is None:
            by_log.setdefault(blocks[position]._lazy.log, []).append(position)  # type: ignore[union-attr]  # noqa: SLF001
    for log, positions in by_log.items():
        for position, text in zip(positions, log.read_many([blocks[p] for p in positions]), strict=True):
            texts[position] = text
    return texts  # type: ignore[return-value]


def _pread(fd: int, size: int, offset: int) -> bytes:
    try:
        return os.pread(fd, size, offset)
    except OSError:
        return b""


def _read_line(fd: int, offset: int) -> bytes:
    """The whole line starting at ``offset`` (without its newline), however long; empty on a read error."""
    parts: list[bytes] = []
    position = offset
    while True:
        chunk = _pread(fd, READ_STEP if not parts else min(len(parts[-1]) * 2, 64 << 20), position)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline != -1:
            parts.append(chunk[:newline])
            break
        parts.append(chunk)
        position += len(chunk)
    return b"".join(parts)
