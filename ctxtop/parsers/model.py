"""Normalized session entries: what every format parser produces.

Parsers turn the bytes of a log into these records and nothing else; everything
computed from them (token counts, windows, audits) lives in ``context``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from sys import intern
from typing import Protocol

# The role of an entry that holds the whole system prompt and tool list as sent from then on
# (Claude Code's prompt_snapshot): in the window it replaces the one before it.
SYSTEM_SNAPSHOT = "system-snapshot"

# How long a model call's reasoning stays in the prompts that follow it (the window replay's rule, per format).
REASONING_RESENT = "resent"  # with every later call (Anthropic thinking blocks)
REASONING_UNTIL_NEXT_TURN = "until the next user turn"  # the Responses API drops it before the last user message
REASONING_NEVER_RESENT = "never resent"  # Gemini CLI leaves thought parts out of the history it sends

# Block categories, in the order they are reported everywhere.
SYSTEM = "system"
TOOLS = "tools"
INJECTED = "injected"
USER = "user"
ASSISTANT = "assistant"
REASONING = "reasoning"
TOOL_CALL = "tool_call"
TOOL_RESULT = "tool_result"
SUMMARY = "summary"
IMAGE = "image"
UNATTRIBUTED = "unattributed"

CATEGORIES: tuple[str, ...] = (
    SYSTEM,
    TOOLS,
    INJECTED,
    USER,
    ASSISTANT,
    REASONING,
    TOOL_CALL,
    TOOL_RESULT,
    SUMMARY,
    IMAGE,
    UNATTRIBUTED,
)


class Block:
    """One piece of content the model sees: a text, a tool call, a result, an image.

    A big text may be *released* once it is counted (``context.lazy_text``):
    the block then keeps only where it came from, and reading ``text`` reads it
    back from the log. Parsers never see the difference.
    """

    __slots__ = ("_lazy", "_text", "category", "image_size", "is_error", "opaque", "source", "tool_id", "tool_name")

    def __init__(self, category: str, text: str = "", tool_name: str | None = None, tool_id: str | None = None,
                 is_error: bool = False, opaque: bool = False, image_size: tuple[int, int] | None = None) -> None:
        self.category = category
        self._text: str | None = text
        # Interned: a session repeats a few tool names thousands of times, and each id twice (call, result).
        # A log that names a tool or an id with a number (or anything else) gets it as text: every reader expects one.
        # (No call for the usual str or None: a block is made for every piece of every message.)
        self.tool_name = intern(tool_name) if type(tool_name) is str else None if tool_name is None else intern(str(tool_name))
        self.tool_id = intern(tool_id) if type(tool_id) is str else None if tool_id is None else intern(str(tool_id))
        self.is_error = is_error
        # Reasoning that the log keeps only encrypted (or empty): its size must come
        # from the usage the log reports, not from the text.
        self.opaque = opaque
        # Images: pixel size when the log lets us know it.
        self.image_size = image_size
        # Byte offset of the log line this block was read from, when one line holds all of it.
        self.source: int | None = None
        self._lazy: LazyText | None = None  # set while the text is released

    @property
    def text(self) -> str:
        if self._text is None:
            return self._lazy.read(self)  # type: ignore[union-attr]
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._text, self._lazy = value, None

    @property
    def length(self) -> int:
        """Characters of text, known without reading a released text back."""
        return self._lazy.length if self._text is None else len(self._text)  # type: ignore[union-attr]

    @property
    def released(self) -> bool:
        return self._text is None

    def release(self, lazy: LazyText) -> None:
        """Drop the text; ``lazy`` reads it back when asked."""
        self._text, self._lazy = None, lazy

    def _key(self) -> tuple:
        return (self.category, self.tool_name, self.tool_id, self.is_error, self.opaque, self.image_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Block):
            return NotImplemented
        # The text last, and its length before it: comparing must not read a released text back needlessly.
        return self._key() == other._key() and self.length == other.length and self.text == other.text

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        text = f"<released, {self.length} chars>" if self.released else repr(self._text)
        return f"Block({self.category!r}, {text}, tool_name={self.tool_name!r}, tool_id={self.tool_id!r})"


class LazyText(Protocol):
    """What reads a released block's text back (``context.lazy_text`` provides it)."""

    length: int

    def read(self, block: Block) -> str: ...


@dataclass(slots=True)
class Usage:
    """Token usage of one model call, as the log reports it."""

    prompt_tokens: int  # everything the model read for this call (input + cached)
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    context_window: int | None = None  # when the log itself states the limit
    # Prompt-cache figures, when the log reports them (Anthropic: cache_creation_input_tokens, its
    # 5-minute / 1-hour split, cache_read_input_tokens); None when it does not.
    cache_write_tokens: int | None = None
    cache_write_5m_tokens: int | None = None
    cache_write_1h_tokens: int | None = None
    cache_read_tokens: int | None = None


@dataclass(slots=True)
class Compaction:
    """A point where the harness rewrote the window."""

    kind: str  # compact_boundary | microcompact | codex_local | codex_remote | implicit ...
    trigger: str | None = None  # auto | manual | None when the log does not say
    pre_tokens: int | None = None
    post_tokens: int | None = None
    # Claude Code partial compaction: ids of records re-attached after the summary.
    preserved_ids: tuple[str, ...] = ()
    # ...or, in versions that record only a segment, its first and last record ids.
    preserved_segment: tuple[str, str] | None = None
    # Microcompaction: tool call ids whose results the model now sees as a placeholder.
    cleared_tool_ids: tuple[str, ...] = ()
    # Codex: the history that replaces everything before (None: not recorded).
    replacement: list[Block] | None = None
    # True when the window after it holds a summary we cannot read (encrypted).
    opaque: bool = False
    # Claude Code: the summary comes in the next record, and the preserved messages go after it.
    # Elsewhere the preserved messages are back in the window at once (after the marker's own summary, if any).
    summary_follows: bool = False
    # OpenHands ``summary_offset``: how many of the preserved messages come before the summary.
    summary_after: int = 0


@dataclass(slots=True)
class Entry:
    """One message of the main chain (or one compaction marker), in file order."""

    index: int  # 1-based position in the main chain
    role: str
    blocks: list[Block]
    offset: int  # byte offset of the source line (or record) in the log
    line: int  # 1-based line number of that source line, 0 for whole-document formats
    timestamp: str | None = None
    model: str | None = None
    usage: Usage | None = None
    uid: str | None = None  # the log's own id for the record (uuid, message id)
    compaction: Compaction | None = None

    @property
    def category(self) -> str:
        """The category of the entry's first block (its dominant kind of content)."""
        if self.compaction is not None:
            return SUMMARY
        return self.blocks[0].category if self.blocks else self.role


@dataclass(slots=True)
class Diagnostics:
    """What a parser could not use, counted rather than fatal."""

    malformed_lines: int = 0
    unknown_records: int = 0
    skipped_records: int = 0  # known records that never reach the model (titles, progress...)
    torn_last_line: bool = False
    invalid_numbers: int = 0  # usage or limit fields that are no count: negative, true/false, beyond 2^53 (ignored)
    examples: list[str] = field(default_factory=list)
    unknown_kinds: dict[str, int] = field(default_factory=dict)  # unknown record kinds by name, with their counts

    MAX_EXAMPLES = 20

    def note(self, message: str) -> None:
        if len(self.examples) < self.MAX_EXAMPLES:
            self.examples.append(message)


class EntryList(Sequence[Entry]):
    """Entries kept in something other than a list, to which a parser still adds: the store that keeps
    the settled ones packed (``context.store.entry_store.EntryStore``)."""

    @abstractmethod
    def append(self, entry: Entry) -> None: ...

    @abstractmethod
    def __delitem__(self, position: slice) -> None: ...


# A parser's entries: a list, or an EntryList.
Entries = list[Entry] | EntryList


@dataclass(slots=True)
class SessionMeta:
    session_id: str | None = None
    model: str | None = None
    context_window: int | None = None
    title: str | None = None
    cwd: str | None = None
    # The transcript of a compaction's summarization call (Claude Code's agent-acompact-*): the
    # conversation it summarized is sent with the call, and not written in this log.
    summarizer: bool = False


@dataclass(slots=True)
class SidechainTotals:
    """Sub-agent records kept out of the main window and reported on their own."""

    messages: int = 0
    blocks: list[Block] = field(default_factory=list)


@dataclass(slots=True)
class ParseResult:
    format: str
    entries: Entries
    diagnostics: Diagnostics
    meta: SessionMeta
    sidechain: SidechainTotals = field(default_factory=SidechainTotals)
