"""Normalized session entries: what every format parser produces.

Parsers turn the bytes of a log into these records and nothing else; everything
computed from them (token counts, windows, audits) lives in ``context``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(slots=True)
class Block:
    """One piece of content the model sees: a text, a tool call, a result, an image."""

    category: str
    text: str = ""
    tool_name: str | None = None
    tool_id: str | None = None
    is_error: bool = False
    # Reasoning that the log keeps only encrypted (or empty): its size must come
    # from the usage the log reports, not from the text.
    opaque: bool = False
    # Images: pixel size when the log lets us know it.
    image_size: tuple[int, int] | None = None


@dataclass(slots=True)
class Usage:
    """Token usage of one model call, as the log reports it."""

    prompt_tokens: int  # everything the model read for this call (input + cached)
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    context_window: int | None = None  # when the log itself states the limit


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
    examples: list[str] = field(default_factory=list)

    MAX_EXAMPLES = 20

    def note(self, message: str) -> None:
        if len(self.examples) < self.MAX_EXAMPLES:
            self.examples.append(message)


@dataclass(slots=True)
class SessionMeta:
    session_id: str | None = None
    model: str | None = None
    context_window: int | None = None
    title: str | None = None
    cwd: str | None = None


@dataclass(slots=True)
class SidechainTotals:
    """Sub-agent records kept out of the main window and reported on their own."""

    messages: int = 0
    blocks: list[Block] = field(default_factory=list)


@dataclass(slots=True)
class ParseResult:
    format: str
    entries: list[Entry]
    diagnostics: Diagnostics
    meta: SessionMeta
    sidechain: SidechainTotals = field(default_factory=SidechainTotals)
