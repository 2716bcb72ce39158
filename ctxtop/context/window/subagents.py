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
import stat
from collections.abc import Iterable
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


def subagent_candidates(log: Path) -> list[Path]:
    """Files that may be the session's sub-agent transcripts: those in its ``subagents/`` folder, and
    the ``agent-*.jsonl`` beside it (which belong to it only if their records carry its id)."""
    if log.name.startswith("agent-"):
        return []  # a sub-agent's own transcript: its siblings are the session's sub-agents, not its own
    folder = log.with_suffix("").joinpath("subagents")
    found = sorted(folder.rglob("agent-*.jsonl")) if folder.is_dir() else []
    return found + [candidate for candidate in sorted(log.parent.glob("agent-*.jsonl")) if candidate != log]


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
    """Totals over a session's sub-agent files, refreshed file by file as they change.

    A refresh told which paths changed (what a file watcher reports) costs those paths: a folder
    with thousands of other agents' transcripts beside the session is not listed again, and no
    file's first line is read twice (whose it is does not change while its inode does not).
    """

    def __init__(self, log: str | os.PathLike, session_id: str | None, counter: TokenCounter,
                 parser_type: type[LineParser]) -> None:
        self.log = Path(log).resolve()
        self.parser_type = parser_type  # the log's own format: its sub-agents write the same records
        self.nested = self.log.with_suffix("").joinpath("subagents")
        self.session_id = session_id
        self.counter = counter
        self._files: dict[Path, tuple[tuple[int, int], SubagentTotals]] = {}
        self._owners: dict[Path, tuple[int, bool]] = {}  # beside the log: (inode, whether it is this session's)
        self.refresh()

    def refresh(self, changed: Iterable[str | os.PathLike] | None = None) -> bool:
        """Re-read the files that appeared or changed; True when the totals changed.

        ``changed``: only these paths may have changed (None: look at every candidate)."""
        if changed is None:
            present = subagent_candidates(self.log)
            changed_any = False
            for gone in set(self._files) - set(present):
                del self._files[gone]
                changed_any = True
            return any([self._update(path) for path in present]) or changed_any
        paths = [Path(path) for path in changed]
        if any(self._may_hold_transcripts(path) for path in paths):
            return self.refresh(None)  # a folder appeared or moved: what it holds was not reported file by file
        return any([self._update(path) for path in paths if self._is_candidate(path)])

    def _is_candidate(self, path: Path) -> bool:
        if self.log.name.startswith("agent-") or not (path.name.startswith("agent-") and path.name.endswith(".jsonl")) or path == self.log:
            return False
        return path.parent == self.log.parent or self.nested in path.parents

    def _may_hold_transcripts(self, path: Path) -> bool:
        folder = self.log.with_suffix("")
        return (path == folder or path == self.nested or self.nested in path.parents) and path.is_dir()

    def _update(self, path: Path) -> bool:
        """Take in one candidate's current state; True when the totals changed."""
        try:
            info = path.stat()
        except OSError:
            self._owners.pop(path, None)
            return self._files.pop(path, None) is not None
        if not stat.S_ISREG(info.st_mode) or not self._belongs(path, info.st_ino):
            return self._files.pop(path, None) is not None
        stamp = (info.st_size, info.st_mtime_ns)
        if path in self._files and self._files[path][0] == stamp:
            return False
        self._files[path] = (stamp, self._count(path))
        return True

    def _belongs(self, path: Path, inode: int) -> bool:
        if path.parent != self.log.parent:
            return True  # in the session's own subagents/ folder
        if not self.session_id:
            return False
        known = self._owners.get(path)
        if known is None or known[0] != inode:
            known = (inode, _session_id_of(path) == self.session_id)
            self._owners[path] = known
        return known[1]

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
