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

import orjson

from ctxtop.context.store.source import SourceError, open_file
from ctxtop.context.window.accounting import text_tokens
from ctxtop.context.window.subagent_files import SUBAGENT_FOLDER, in_session_folder, nested_transcripts
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.parsers.base import LineParser
from ctxtop.parsers.claude_code import SUMMARIZER_AGENT_PREFIX as COMPACTION_PREFIX  # agent-acompact-*.jsonl
from ctxtop.parsers.jsonl import DecodeError, iter_lines, loads
from ctxtop.parsers.model import TOOL_CALL, USER, Usage


@dataclass(slots=True)
class SubagentTotals:
    files: int = 0
    messages: int = 0
    blocks: int = 0
    tokens: int = 0


# The tool that starts a sub-agent: its input names the agent type and the task.
TASK_TOOLS = frozenset({"Task", "Agent"})


@dataclass(slots=True)
class Subagent:
    """One sub-agent transcript: who it is, and its own window now."""

    id: str  # the file's agent id: agent-<id>.jsonl
    path: Path
    kind: str  # the agent type (.meta.json, else the Task call's subagent_type), "compaction", or "agent"
    description: str | None  # its task (.meta.json, else the Task call's description, else its prompt)
    totals: SubagentTotals
    model: str | None = None
    reported_tokens: int | None = None  # the prompt of its last model call
    estimated_tokens: int = 0  # what its window's text counts
    limit: int = 0
    last_call: Usage | None = None  # the usage of its last model call, as logged
    last_call_at: str | None = None  # and that call's timestamp
    untyped_prompt: str | None = None  # its first prompt, while no Task call that gave it is known (followed live)

    @property
    def window_tokens(self) -> int:
        return self.reported_tokens if self.reported_tokens is not None else self.estimated_tokens


def subagent_candidates(log: Path) -> tuple[list[Path], str | None]:
    """Files that may be the session's sub-agent transcripts: those in its ``subagents/`` folder (``nested_transcripts``),
    and the ``agent-*.jsonl`` beside it (which belong to it only if their records carry its id); and what of its
    folder was not looked at, and why (None: nothing)."""
    if log.name.startswith("agent-"):
        return [], None  # a sub-agent's own transcript: its siblings are the session's sub-agents, not its own
    found, skipped = nested_transcripts(log)
    return found + [candidate for candidate in sorted(log.parent.glob("agent-*.jsonl")) if candidate != log], skipped


def owner_session_id(path: Path) -> str | None:
    """The session a sub-agent transcript says it belongs to: the ``sessionId`` string of its first record (a 2.0
    sub-agent's names its session's), or None. Its first line only, one read per transcript of a folder of thousands;
    not the rule by which a log's parser takes its own id (``fleet.reuse._parsed_session_id``), a question asked of one log.
    (An id that is no string names no session: an object one, kept, was a dict key that failed the fleet's digest.)"""
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
        owner = record.get("sessionId") if isinstance(record, dict) else None
        return owner if isinstance(owner, str) else None
    return None


class SubagentScan:
    """Totals over a session's sub-agent files, refreshed file by file as they change.

    A refresh told which paths changed (what a file watcher reports) costs those paths: a folder
    with thousands of other agents' transcripts beside the session is not listed again, and no
    file's first line is read twice (whose it is does not change while its inode does not).
    """

    def __init__(self, log: str | os.PathLike, session_id: str | None, counter: TokenCounter,
                 parser_type: type[LineParser], entries=None) -> None:
        """``entries``: the session's, where the Task calls that started the sub-agents name them."""
        self.log = Path(log).resolve()
        self.parser_type = parser_type  # the log's own format: its sub-agents write the same records
        self.nested = self.log.with_suffix("").joinpath(SUBAGENT_FOLDER)
        self.skipped: str | None = None  # what of the subagents folder was not looked at, and why
        self.session_id = session_id
        self.counter = counter
        self.entries = entries if entries is not None else []
        self._tasks: dict[str, tuple[str | None, str | None]] = {}  # a Task call's prompt → (agent type, description)
        self._tasks_read = 0  # entries looked at for Task calls so far
        self._files: dict[Path, tuple[tuple[int, int, tuple[int, int] | None], Subagent]] = {}
        self._owners: dict[Path, tuple[int, bool]] = {}  # beside the log: (inode, whether it is this session's)
        self.refresh()

    def refresh(self, changed: Iterable[str | os.PathLike] | None = None) -> bool:
        """Re-read the files that appeared or changed; True when the totals changed.

        ``changed``: only these paths may have changed (None: look at every candidate)."""
        if changed is None:
            present, self.skipped = subagent_candidates(self.log)
            changed_any = False
            for gone in set(self._files) - set(present):
                del self._files[gone]
                changed_any = True
            return any([self._update(path) for path in present]) or changed_any
        paths = [_transcript_of(Path(path)) for path in changed]  # (a meta file changes what its transcript shows)
        if any(self._may_hold_transcripts(path) for path in paths):
            return self.refresh(None)  # a folder appeared or moved: what it holds was not reported file by file
        return any([self._update(path) for path in paths if self._is_candidate(path)])

    def _is_candidate(self, path: Path) -> bool:
        if self.log.name.startswith("agent-") or not (path.name.startswith("agent-") and path.name.endswith(".jsonl")) or path == self.log:
            return False
        if path.parent == self.log.parent:
            return True
        # (The folder and the ones directly in it, as nested_transcripts looks: a change deeper is no transcript;
        # and only while the folder is the session's own, not a link out of it.)
        return (path.parent == self.nested or path.parent.parent == self.nested) and in_session_folder(self.log)

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
        # (with its meta file's: written after the transcript, it types the agent the transcript did not)
        stamp = (info.st_size, info.st_mtime_ns, _meta_stamp(path))
        if path in self._files and self._files[path][0] == stamp:
            return False
        self._files[path] = (stamp, self._read(path))
        return True

    def _belongs(self, path: Path, inode: int) -> bool:
        if path.parent != self.log.parent:
            return True  # in the session's own subagents/ folder
        if not self.session_id:
            return False
        known = self._owners.get(path)
        if known is None or known[0] != inode:
            known = (inode, owner_session_id(path) == self.session_id)
            self._owners[path] = known
        return known[1]

    def _read(self, path: Path) -> Subagent:
        """The transcript opened as a session of its own (its main chain, when the parser gives it
        one; its side chain records counted either way)."""
        from ctxtop.context.window.session import Session  # (session.py imports this module)

        agent_id = path.name.removeprefix("agent-").removesuffix(".jsonl")
        kind, description = _meta(path)
        if agent_id.startswith(COMPACTION_PREFIX):
            kind = kind or "compaction"
        try:
            session = Session.open(path, format=self.parser_type.name, encoding=self.counter.encoding_name)
        except ValueError:  # unreadable, not a transcript (SourceError, UnknownFormat are ValueErrors)
            return Subagent(agent_id, path, kind or "agent", description, SubagentTotals(1))
        entries, sidechain = session.entries, session.parser.sidechain
        accounting = session.accounting
        tokens = sum(accounting.entry_tokens(i) for i in range(accounting.counted))
        tokens += sum(text_tokens(self.counter, b) for b in sidechain.blocks)
        blocks = sum(len(e.blocks) for e in entries) + len(sidechain.blocks)
        totals = SubagentTotals(1, len(entries) + sidechain.messages, blocks, tokens)
        prompt = _first_prompt(entries) or _first_prompt_of(sidechain.blocks)
        found = self._task_for(prompt) if kind is None and prompt is not None else None
        if found is not None:
            kind, description = found
        description = description or prompt
        last = next((e for e in reversed(entries) if e.usage is not None), None) if entries else None
        return Subagent(agent_id, path, kind or "agent", description, totals, session.model, session.reported_at(None),
                        session.window_at(None).estimated_tokens, session.limit()[0],
                        last.usage if last is not None else None, last.timestamp if last is not None else None,
                        untyped_prompt=prompt if kind is None and found is None else None)

    def type_from_new_tasks(self) -> bool:
        """Give the sub-agents read before the Task call that started them (a log followed live) the call's type and
        description, once the session's entries hold it; True when one got them."""
        typed = False
        for _stamp, agent in self._files.values():
            found = self._task_for(agent.untyped_prompt) if agent.untyped_prompt is not None else None
            if found is not None:
                kind, description = found
                agent.kind, agent.description, agent.untyped_prompt = kind or agent.kind, description or agent.description, None
                typed = True
        return typed

    def _task_for(self, prompt: str) -> tuple[str | None, str | None] | None:
        """The agent type and description of the Task call that gave this prompt (read on demand:
        only the entries not looked at yet)."""
        entries = self.entries
        if self._tasks_read < len(entries):
            for entry in entries[self._tasks_read :]:
                for block in entry.blocks:
                    if block.category == TOOL_CALL and block.tool_name in TASK_TOOLS:
                        self._remember_task(block.text)
            self._tasks_read = len(entries)
        return self._tasks.get(prompt.strip())

    def _remember_task(self, text: str) -> None:
        try:
            call = orjson.loads(text)
        except orjson.JSONDecodeError:
            return
        if isinstance(call, dict) and isinstance(call.get("prompt"), str):
            kind, description = call.get("subagent_type"), call.get("description")
            self._tasks[call["prompt"].strip()] = (kind if isinstance(kind, str) else None,
                                                    description if isinstance(description, str) else None)

    @property
    def agents(self) -> list[Subagent]:
        """Every sub-agent transcript, in file order."""
        return [agent for _stamp, agent in self._files.values()]

    def summarizing_calls(self) -> list[tuple[str, str, Usage]]:
        """The compaction sub-agents' calls (``agent-acompact-*``: the summarization of a compaction),
        as (timestamp, agent id, usage), oldest first."""
        calls = [(a.last_call_at, a.id, a.last_call) for a in self.agents
                 if a.id.startswith(COMPACTION_PREFIX) and a.last_call is not None and a.last_call_at]
        return sorted(calls)

    def find(self, agent_id: str) -> Subagent | None:
        """By id; ``agent-<id>`` and the file name are taken too."""
        wanted = agent_id.removesuffix(".jsonl").removeprefix("agent-")
        return next((a for a in self.agents if a.id == wanted), None)

    @property
    def totals(self) -> SubagentTotals:
        total = SubagentTotals()
        for _stamp, agent in self._files.values():
            part = agent.totals
            total.files += part.files
            total.messages += part.messages
            total.blocks += part.blocks
            total.tokens += part.tokens
        return total


META_BYTES = 1 << 20  # an agent's type and its task's description: a .meta.json bigger is cut, so no JSON
META_SUFFIX = ".meta.json"  # agent-<id>.meta.json, beside agent-<id>.jsonl


def _transcript_of(path: Path) -> Path:
    """The transcript a sub-agent's meta file is of; any other path as it is."""
    return path.with_name(path.name.removesuffix(META_SUFFIX) + ".jsonl") if path.name.endswith(META_SUFFIX) else path


def _meta_stamp(path: Path) -> tuple[int, int] | None:
    """The size and time of the meta file of transcript ``path``, or None without one."""
    try:
        info = os.stat(path.with_suffix(META_SUFFIX))
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _meta(path: Path) -> tuple[str | None, str | None]:
    """``agent-<id>.meta.json`` (Claude Code 2.1.x): the agent type and its task's description."""
    try:
        # A regular file only, and a few kilobytes of it: a FIFO named agent-x.meta.json blocked the audit for ever,
        # and a link to /dev/zero read without end.
        with open_file(path.with_suffix(META_SUFFIX)) as handle:
            meta = orjson.loads(handle.read(META_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return None, None
    if not isinstance(meta, dict):
        return None, None
    kind, description = meta.get("agentType"), meta.get("description")
    return (kind if isinstance(kind, str) and kind else None), (description if isinstance(description, str) and description else None)


def _first_prompt(entries) -> str | None:
    for entry in entries[:4]:
        if entry.role == "user":
            return _first_prompt_of(entry.blocks)
    return None


def _first_prompt_of(blocks) -> str | None:
    return next((b.text for b in blocks if b.category == USER and b.text.strip()), None)


def find_subagent(session, agent_id: str) -> Subagent:
    """``session``'s sub-agent ``agent_id``. Raises SourceError naming the sub-agents there are when
    there is no such one."""
    scan = session.subagents
    agent = scan.find(agent_id) if scan is not None else None
    if agent is None:
        known = ", ".join(a.id for a in scan.agents) if scan is not None and scan.agents else "none"
        raise SourceError(f"{session.path}: no sub-agent {agent_id!r} (sub-agents: {known})")
    return agent
