"""Claude Code sub-agent transcripts kept beside a session, counted as its sub-agent totals.

Claude Code 2.1.x writes each sub-agent to ``<session>/subagents/agent-<id>.jsonl``
(workflows one level deeper); 2.0.x wrote ``agent-<id>.jsonl`` beside the
session, with the session's id in every record. Their records are sidechain
records: they never enter the main window, but they cost tokens and time, so
their totals are shown apart. Files are re-read only when their size or mtime
changes, which keeps live tailing cheap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctxtop.context.store.source import SourceError, open_file, read_log
from ctxtop.context.window.accounting import text_tokens
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.parsers.base import LineParser
from ctxtop.parsers.jsonl import DecodeError, iter_lines, loads

@dataclass(slots=True)
class SubagentTotals:
    files: int = 0
    messages: int = 0
    blocks: int = 0
    tokens: int = 0


def subagent_files(log: Path, session_id: str | None) -> list[Path]:
    """The sub-agent transcripts that belong to the session in ``log``."""
    if log.name.startswith("agent-"):
        return []  # a sub-agent's own transcript: its siblings are the session's sub-agents, not its own
    found = sorted(log.with_suffix("").joinpath("subagents").rglob("agent-*.jsonl")) if log.with_suffix("").is_dir() else []
    if session_id:
        for candidate in sorted(log.parent.glob("agent-*.jsonl")):
            if candidate != log and _session_id_of(candidate) == session_id:
                found.append(candidate)
    return found


def _session_id_of(path: Path) -> str | None:
    try:
        with open_file(path) as handle:  # a FIFO named agent-x.jsonl must not block the scan
            first = handle.readline(1 << 20)
    except OSError:
        return None
    for _offset, _line, raw, _complete in iter_lines(first):
        try:
            record = loads(raw)
        except DecodeError:
            return None
        return record.get("sessionId") if isinstance(record, dict) else None
    return None


class SubagentScan:
    """Totals over a session's sub-agent files, refreshed file by file as they change."""

    def __init__(self, log: str | os.PathLike, session_id: str | None, counter: TokenCounter, parser_type: type[LineParser]) -> None:
        self.log = Path(log)
        self.parser_type = parser_type  # the log's own format: its sub-agents write the same records
        self.session_id = session_id
        self.counter = counter
        self._files: dict[Path, tuple[tuple[int, int], SubagentTotals]] = {}
        self.refresh()

    def refresh(self) -> bool:
        """Re-read the files that appeared or changed; True when the totals changed."""
        changed = False
        present = subagent_files(self.log, self.session_id)
        for gone in set(self._files) - set(present):
            del self._files[gone]
            changed = True
        for path in present:
            try:
                info = path.stat()
            except OSError:
                continue
            stamp = (info.st_size, info.st_mtime_ns)
            if path in self._files and self._files[path][0] == stamp:
                continue
            self._files[path] = (stamp, self._count(path))
            changed = True
        return changed

    def _count(self, path: Path) -> SubagentTotals:
        try:
            data = read_log(path)
        except SourceError:
            return SubagentTotals()
        try:
            parser = self.parser_type()
            parser.feed(data, final=False)
        finally:
            if hasattr(data, "close"):
                data.close()
        blocks = parser.sidechain.blocks + [b for e in parser.entries for b in e.blocks]
        messages = parser.sidechain.messages + len(parser.entries)
        return SubagentTotals(1, messages, len(blocks), sum(text_tokens(self.counter, b) for b in blocks))

    @property
    def totals(self) -> SubagentTotals:
        total = SubagentTotals()
        for _stamp, part in self._files.values():
            total.files += part.files
            total.messages += part.messages
            total.blocks += part.blocks
            total.tokens += part.tokens
        return total
