"""The incremental parser interface every format implements.

A parser is fed a log's lines (or its whole document) and keeps the entries it
has built so far. Live tailing feeds only the appended lines to the same parser
object, so its state (message-id merges, pending compactions) carries over.
"""

from __future__ import annotations

from sys import intern
from typing import Any

from ctxtop.parsers.jsonl import Buffer, DecodeError, Log, iter_lines, loads
from ctxtop.parsers.model import (
    REASONING_RESENT,
    Block,
    Compaction,
    Diagnostics,
    Entries,
    Entry,
    ParseResult,
    SessionMeta,
    SidechainTotals,
    Usage,
)
from ctxtop.parsers.numbers import count, is_invalid_count

# An ISO 8601 time with nanoseconds and an offset has 35 characters: a longer "timestamp" is no time, and
# would reach the outputs (the snapshot's, a fleet row's `started`) at any length the log gives it.
MAX_TIMESTAMP_CHARS = 64
# What a record of unexpected field types raises while it is handled: the record is counted malformed, the rest kept.
PARSE_ERRORS = (TypeError, AttributeError, KeyError, ValueError)


class UnknownFormat(ValueError):
    """The content matches no known log format (or not the part of it that was asked for)."""


class Parser:
    """Base of every format parser: holds the entries and the diagnostics."""

    name: str = ""
    description: str = ""
    locations: tuple[str, ...] = ()  # where the agent keeps its logs, for `ctxtop formats`
    # What a format knows of its files beyond their records, so that no other layer names a format:
    # the bytes a compaction boundary's record holds (a big log is first read from its last one;
    # None: not supported), sub-agent transcripts kept beside the log and read by this same parser,
    # and the first bytes of the database file the format is kept in.
    boundary_marker: bytes | None = None
    subagents_beside: bool = False
    database_magic: bytes | None = None
    # How long reasoning is part of later prompts (the window replay's rule): model.REASONING_*.
    reasoning_kept: str = REASONING_RESENT
    # Whether the first model call of a user turn may report a larger prompt than the calls after it in the turn,
    # which go on from the call before it (Gemini CLI): that call is then no baseline for an implicit compaction.
    opening_call_reports_more: bool = False

    @staticmethod
    def is_boundary(record: dict) -> bool:
        """Whether a record holding ``boundary_marker`` is the compaction boundary (and not text quoting it)."""
        return False

    def __init__(self) -> None:
        self.entries: Entries = []
        self.diagnostics = Diagnostics()
        self.meta = SessionMeta()
        self.sidechain = SidechainTotals()
        self.resume_offset = 0  # byte offset where parsing stopped (a torn last line starts there)
        self.resume_line = 1  # the line number found there
        # The first entry position changed (or removed) after it was built, since ``take_touched``
        # was last called: what was counted from there on must be counted again.
        self._touched: int | None = None

    def result(self) -> ParseResult:
        return ParseResult(self.name, self.entries, self.diagnostics, self.meta, self.sidechain)

    # --- building entries -------------------------------------------------
    def add_entry(
        self,
        role: str,
        blocks: list[Block],
        offset: int,
        line: int,
        *,
        timestamp: Any = None,
        model: str | None = None,
        usage: Usage | None = None,
        uid: str | None = None,
        compaction: Compaction | None = None,
    ) -> Entry:
        usage = self.checked_usage(usage)
        if compaction is not None:
            compaction.pre_tokens = self.tokens(compaction.pre_tokens)
            compaction.post_tokens = self.tokens(compaction.post_tokens)
        entry = Entry(
            index=len(self.entries) + 1,
            role=intern(role) if type(role) is str else role,  # a few roles, repeated on every entry
            blocks=blocks,
            offset=offset,
            line=line,
            timestamp=timestamp if isinstance(timestamp, str) and len(timestamp) <= MAX_TIMESTAMP_CHARS else None,
            model=intern(model) if type(model) is str else model,  # one copy of the model's name, not one an entry
            usage=usage,
            uid=uid,
            compaction=compaction,
        )
        self.entries.append(entry)
        return entry

    # --- numbers: a log's counts are checked once, here, before anything computes with them ---------
    def tokens(self, value: Any) -> int | None:
        """``value`` as a token count, or None; a number that is no count (negative, boolean, beyond
        2^53, fractional) is counted in ``diagnostics.invalid_numbers`` and ignored."""
        if value is None:
            return None  # (a field the log left out: most of them, on every usage read)
        checked = count(value)
        if checked is None and is_invalid_count(value):
            self.diagnostics.invalid_numbers += 1
            self.diagnostics.note(f"not a token count, ignored: {str(value)[:40]}")
        return checked

    def checked_usage(self, usage: Usage | None) -> Usage | None:
        """``usage`` with each field a valid count (or None); None when its prompt size is no count.

        Every usage a parser builds goes through here (``add_entry``, or by hand when it is set later)."""
        if usage is None:
            return None
        prompt = self.tokens(usage.prompt_tokens)
        if prompt is None:
            return None
        tokens = self.tokens
        usage.prompt_tokens = prompt
        usage.output_tokens = tokens(usage.output_tokens) or 0
        # Field by field rather than by name (getattr, setattr): this runs for every model call a log reports.
        usage.reasoning_tokens = tokens(usage.reasoning_tokens)
        usage.context_window = tokens(usage.context_window)
        usage.cache_write_tokens = tokens(usage.cache_write_tokens)
        usage.cache_write_5m_tokens = tokens(usage.cache_write_5m_tokens)
        usage.cache_write_1h_tokens = tokens(usage.cache_write_1h_tokens)
        usage.cache_read_tokens = tokens(usage.cache_read_tokens)
        if usage.context_window == 0:
            usage.context_window = None
        return usage

    def editable(self, position: int) -> Entry:
        """The entry at ``position`` (0-based), to change in place; it is marked as changed (``touch``).

        ``entries`` may be a store that keeps settled entries packed (``context.entry_store``),
        where reading one gives a copy: it is made an object again first, so the change is kept."""
        thaw = getattr(self.entries, "thaw", None)
        if thaw is not None:
            thaw(position)
        self.touch(position)
        return self.entries[position]

    def touch(self, position: int) -> None:
        """Note that the entry at ``position`` (0-based) and those after it changed after they were built."""
        self._touched = position if self._touched is None else min(self._touched, position)

    def take_touched(self) -> int | None:
        position, self._touched = self._touched, None
        return position

    def malformed(self, line: int, why: str) -> None:
        self.diagnostics.malformed_lines += 1
        self.diagnostics.note(f"line {line}: {why}")

    def unknown(self, line: int, what: str, kind: str | None = None) -> None:
        """A record ctxtop does not know; ``kind`` names it, to be counted by name."""
        self.diagnostics.unknown_records += 1
        if kind is not None:
            kinds = self.diagnostics.unknown_kinds
            kinds[kind] = kinds.get(kind, 0) + 1
            if kinds[kind] > 1:
                return  # one example per kind is enough
        self.diagnostics.note(f"line {line}: unknown {what}")


class LineParser(Parser):
    """A parser for JSON Lines logs: one record per line, decoded independently."""

    def __init__(self) -> None:
        super().__init__()
        # Set when a record the last feed read changed the past (a rewind, an update of an earlier
        # message): live tailing then reads the file again instead of patching.
        self.history_rewritten = False

    def rewind(self, position: int) -> None:
        """The agent took its history back: the entries from ``position`` (0-based) on were never sent."""
        del self.entries[position:]
        self.touch(position)
        self.history_rewritten = True

    def add_entry(self, role: str, blocks: list[Block], offset: int, line: int, *, from_line: bool = True, **fields: Any) -> Entry:
        """``from_line``: the line at ``offset`` holds the blocks' text (a released text is read back from
        it); False for text an earlier line gave (it is then never released)."""
        if from_line:
            stamp_source(blocks, offset)
        return super().add_entry(role, blocks, offset, line, **fields)

    def settled_before(self) -> int:
        """Entries before this position are never changed by the lines still to come (so they may be
        stored packed). By default only the last entry may still change (a late usage record)."""
        return len(self.entries) - 1

    @classmethod
    def blocks_alone(cls, record: dict) -> list[Block] | None:
        """The blocks a new parser fed only this record's line would give, for records whose blocks the record
        alone says (no state of the parser, no other line, no diagnostics); None for the others (the default).
        What a released text is read back from (``context.store.lazy_text``): the line decoded, then only its
        blocks made, not a parser, its dispatch and its entry for the one text wanted. It must give exactly
        the blocks such a parse gives, and may raise what ``_dispatch`` catches where a parse would too."""
        return None

    @classmethod
    def blocks_of_line(cls, raw: Buffer, offset: int) -> list[Block]:
        """The blocks a new parser fed only this line (found at file offset ``offset``) makes: from its record alone
        where the format can tell (``blocks_alone``), else through a parser handed the record decoded once."""
        try:
            record = loads(raw)
        except DecodeError:
            return []  # ``feed`` keeps nothing of a line that does not decode (nor of a blank one)
        if isinstance(record, dict):
            try:
                alone = cls.blocks_alone(record)
            except PARSE_ERRORS:
                alone = None  # the parse below counts it malformed, and keeps what it made before failing
            if alone is not None:
                return alone
        parser = cls()
        parser._dispatch(record, offset, 1)
        return [block for entry in parser.entries for block in entry.blocks]

    def carry_state(self) -> Any:
        """What this parser remembers between lines beyond its entries, as plain data (JSON-like),
        so that a saved index can be fed the lines appended since. Entries are named by index."""
        return None

    def restore_state(self, state: Any) -> None:
        """Take back what ``carry_state`` gave, once ``entries`` are restored."""

    def feed(self, data: Log, start: int = 0, first_line: int = 1, *, final: bool = True, stop: int | None = None,
             base: int = 0) -> int:
        """Parse the lines of ``data`` from byte ``start`` (up to ``stop``, just after a newline); return where to resume.

        ``data`` may be a slice of the log that starts at file offset ``base``:
        entries then carry file offsets, and so does the returned position.

        A last line with no newline may still be being written: unless ``final``
        it is left for the next feed. When ``final`` it is parsed if it decodes,
        and otherwise reported as a torn last line (not as malformed).
        """
        self.resume_line = first_line
        self.history_rewritten = False  # a rewind an earlier feed read is in the entries already
        for offset, number, raw, complete in iter_lines(data, start, first_line, stop, base):
            self.resume_line = number + 1
            if complete:
                try:
                    record = loads(raw)
                except DecodeError as exc:
                    self.malformed(number, f"not JSON ({exc})")
                else:
                    self._dispatch(record, offset, number)
                continue
            if not final:
                self.resume_line = number
                return offset  # already a file offset
            try:
                record = loads(raw)
            except DecodeError:
                self.diagnostics.torn_last_line = True
                self.diagnostics.note(f"line {number}: torn last line (no newline, not valid JSON)")
            else:
                self._dispatch(record, offset, number)
        return base + (len(data) if stop is None else min(stop, len(data)))

    def _dispatch(self, record: Any, offset: int, line: int) -> None:
        if not isinstance(record, dict):
            self.malformed(line, "record is not a JSON object")
            return
        try:
            self.handle(record, offset, line)
        except PARSE_ERRORS as exc:
            # A record whose fields have the wrong types: count it, keep the rest.
            self.malformed(line, f"unexpected field types ({type(exc).__name__})")

    def handle(self, record: dict, offset: int, line: int) -> None:
        raise NotImplementedError


def stamp_source(blocks: list[Block], offset: int) -> None:
    """Record that the line at ``offset`` holds these blocks whole, so their text can be read again from it."""
    for block in blocks:
        if block.source is None:
            block.source = offset


class DocumentParser(Parser):
    """A parser for formats stored as one JSON document (request dumps, arrays)."""

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        """Build entries from the decoded document; ``offsets`` are the byte offsets
        of its messages when it came as JSON Lines (None for a single document)."""
        raise NotImplementedError
