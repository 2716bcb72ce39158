"""A parsed session with its token accounting: the window at any message."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import parsers
import parsers.registry
from parsers.base import Parser
from parsers.claude_code import ClaudeCodeParser
from parsers.model import Entry

from .accounting import Accounting
from .limits import window_limit
from .source import (
    SourceError,
    is_sqlite,
    read_log,
    read_opencode_db,
    read_tree,
    tree_names,
)
from .subagents import SubagentScan
from .token_cache import TokenCache
from .tokens import DEFAULT_ENCODING, TokenCounter
from .window import Replay, Window


@dataclass(slots=True, frozen=True)
class CompactionEvent:
    message: int
    kind: str
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    timestamp: str | None
    opaque: bool = False


def split_sample(path: str | os.PathLike) -> tuple[str | os.PathLike, int]:
    """``log.eval#3`` → (``log.eval``, 3): one sample of a log that holds several. A file that
    really is named with a ``#`` is taken as it is."""
    text = str(path)
    base, hash_mark, number = text.rpartition("#")
    if hash_mark and number.isdigit() and not Path(text).exists() and Path(base).exists():
        return base, int(number)
    return path, 1


# Entries counted between two progress reports, at least.
COUNT_STEP = 2000


class Session:
    """Entries of one log plus what ``context`` computes from them."""

    def __init__(
        self,
        parser: Parser,
        *,
        path: str | None = None,
        counter: TokenCounter | None = None,
        window: int | None = None,
        progress: Callable[[float], None] | None = None,
    ) -> None:
        self.parser = parser
        self.path = path
        self.counter = counter or TokenCounter(DEFAULT_ENCODING)
        self.window_override = window
        self.accounting = Accounting(self.counter)
        self.subagents: SubagentScan | None = None  # sub-agent transcripts kept beside the log (Claude Code)
        entries = parser.entries
        step = max(COUNT_STEP, len(entries) // 50) if progress else len(entries)
        for stop in range(step, len(entries) + step, step or 1):
            self.accounting.update(entries, len(self.accounting.tokens), stop)
            if progress:
                progress(min(1.0, stop / len(entries)))

    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        *,
        format: str | None = None,
        encoding: str = DEFAULT_ENCODING,
        window: int | None = None,
        live: bool = False,
        progress: Callable[[str, float], None] | None = None,
    ) -> "Session":
        """Read, detect, parse and count a log. Raises SourceError / UnknownFormat / EncodingUnavailable.

        ``live``: the log is still being written, so a last line without its
        newline is left for later rather than counted as torn. ``progress(phase,
        fraction)`` is called while parsing ("parse") and counting ("count").
        """
        counter = TokenCounter(encoding, store=TokenCache.default(encoding))
        path, sample = split_sample(path)
        if Path(path).is_dir():
            return cls._open_folder(path, format, counter, window)
        if is_sqlite(path):
            parser = parsers.registry.parse_tree(read_opencode_db(path), format or "opencode")
            return cls(parser, path=str(Path(path)), counter=counter, window=window)
        data = read_log(path)
        try:
            parser = parsers.parse(data, format, final=not live, sample=sample,
                                   progress=(lambda f: progress("parse", f)) if progress else None)
        except parsers.UnknownFormat as exc:
            raise parsers.UnknownFormat(f"{path}: {exc}") from None
        finally:
            if hasattr(data, "close"):
                data.close()
        session = cls(parser, path=str(Path(path)), counter=counter, window=window,
                      progress=(lambda f: progress("count", f)) if progress else None)
        if counter.store is not None:
            counter.store.maybe_prune()
        if parser.name == ClaudeCodeParser.name:
            session.subagents = SubagentScan(path, parser.meta.session_id, counter)
        return session

    @classmethod
    def _open_folder(cls, path: str | os.PathLike, format: str | None, counter: TokenCounter, window: int | None) -> "Session":
        """A session kept as a folder of files (Cline tasks, OpenHands event directories)."""
        if format is None and parsers.registry.detect_tree(tree_names(path)) is None:
            raise SourceError(f"{path}: a folder, and not one ctxtop knows as a session (pass a session file, or see `ctxtop formats`)")
        try:
            parser = parsers.registry.parse_tree(read_tree(path), format)
        except parsers.UnknownFormat as exc:
            raise parsers.UnknownFormat(f"{path}: {exc}") from None
        return cls(parser, path=str(Path(path)), counter=counter, window=window)

    # --- basic facts -----------------------------------------------------------
    @property
    def entries(self) -> list[Entry]:
        return self.parser.entries

    @property
    def format(self) -> str:
        return self.parser.name

    @property
    def message_count(self) -> int:
        return len(self.parser.entries)

    @property
    def model(self) -> str | None:
        return self.parser.meta.model

    def limit(self) -> tuple[int, str]:
        """The window size in tokens and where that number came from."""
        if self.window_override:
            return self.window_override, "--window"
        if self.parser.meta.context_window:
            return self.parser.meta.context_window, "log"
        return window_limit(self.model)

    def clamp(self, message: int | None) -> int:
        """A message index within the session (the latest when None)."""
        if message is None or message > self.message_count:
            return self.message_count
        if message < 0:
            return max(0, self.message_count + 1 + message)
        return message

    # --- the window --------------------------------------------------------------
    def window_at(self, message: int | None = None) -> Window:
        return Replay(self.entries, self.accounting).window_at(self.clamp(message))

    def reported_at(self, message: int | None = None) -> int | None:
        """The prompt size the log reports for the latest model call at or before ``message``.

        Right after a compaction with no model call since, the compaction's own
        post-compaction size (or None when it does not record one).
        """
        for entry in reversed(self.entries[: self.clamp(message)]):
            if entry.compaction is not None and entry.compaction.kind != "microcompact":
                return entry.compaction.post_tokens
            if entry.usage is not None:
                return entry.usage.prompt_tokens
        return None

    def compactions(self) -> list[CompactionEvent]:
        return [
            CompactionEvent(
                e.index,
                e.compaction.kind,
                e.compaction.trigger,
                e.compaction.pre_tokens,
                e.compaction.post_tokens,
                e.timestamp,
                e.compaction.opaque,
            )
            for e in self.entries
            if e.compaction is not None
        ]
