"""Claude Code transcripts: ``~/.claude/projects/<slug>/<sessionId>.jsonl``.

One line per record; an assistant response is split over one line per content
block, all sharing ``message.id`` (the last line carries the final usage).
Compaction appends a ``system/compact_boundary`` record followed by a user
record with ``isCompactSummary``; microcompaction a ``microcompact_boundary``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ctxtop.parsers.base import LineParser, stamp_source
from ctxtop.parsers.claude_attachments import read_attachment
from ctxtop.parsers.claude_queue import PromptQueue
from ctxtop.parsers.content import blocks_from_anthropic, mapping
from ctxtop.parsers.model import IMAGE, SYSTEM_SNAPSHOT, USER, Block, Compaction, Usage
from ctxtop.parsers.numbers import number, summed

# Records that are never sent to the model: titles, UI state, snapshots, progress.
METADATA_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "progress",
        "custom-title",
        "ai-title",
        "agent-name",
        "last-prompt",
        "mode",
        "atis-latch",
        "pr-link",
        "saved_hook_context",
    }
)
# System subtypes that are UI events, not context.
SYSTEM_EVENT_SUBTYPES = frozenset(
    {
        "local_command",
        "api_error",
        "informational",
        "turn_duration",
        "stop_hook_summary",
        "bridge_status",
        "away_summary",
        "memory_saved",
        "agents_killed",
        "api_metrics",
        "permission_retry",
        "scheduled_task_fire",
    }
)
SYNTHETIC_MODEL = "<synthetic>"


def looks_like(record: dict) -> bool:
    kind = record.get("type")
    if kind in ("user", "assistant", "system", "attachment"):
        return "sessionId" in record or "uuid" in record or "parentUuid" in record
    return kind in METADATA_TYPES and any(k in record for k in ("sessionId", "messageId", "leafUuid", "uuid", "snapshot"))


# A response's lines are written together; remembering the last few hundred ids (not all of a
# session's) is enough to join them, and keeps a huge session's memory to its entries.
RECENT_RESPONSES = 256
# ...but they land within this many entries of its first line (tool results in between).
MERGE_HORIZON = 64
# A hook's context written twice (hook_success stdout, hook_additional_context) comes in neighbouring records.
HOOK_ECHO_LINES = 8
# The agent id of a compaction's summarization call, run as a sub-agent (agent-acompact-*.jsonl, Claude Code 2.1+).
SUMMARIZER_AGENT_PREFIX = "acompact-"


class ClaudeCodeParser(LineParser):
    name = "claude-code"
    description = "Claude Code session transcript (JSONL)"
    locations = ("~/.claude/projects/<project>/<session-id>.jsonl",)
    boundary_marker = b"compact_boundary"
    subagents_beside = True  # <session>/subagents/agent-*.jsonl (2.1.x), agent-*.jsonl beside it (2.0.x)

    @staticmethod
    def is_boundary(record: dict) -> bool:
        return record.get("type") == "system" and record.get("subtype") == "compact_boundary"

    def __init__(self) -> None:
        super().__init__()
        # Recent responses: message id → the index of the entry their first line made.
        self._by_message_id: dict[str, int] = {}
        self._sidechain_ids: set[str] = set()
        # Whose chain this file is: None until the first conversation record says; then "" for a
        # session's main chain, or the sub-agent id of a transcript that holds one side chain
        # (``agent-*.jsonl``, every record ``isSidechain: true``), which is then the conversation.
        self._own_chain: str | None = None
        self._snapshot_key: str | None = None  # digest of the last prompt_snapshot's content
        self._snapshot_at: int | None = None  # the position of its entry
        # The last hook context read: (attachment kind, (call or event, text), line).
        self._last_hook: tuple[str, tuple[str, str], int] | None = None
        # What was typed (or notified) while the agent worked, queued and not delivered yet, oldest first.
        self._queued = PromptQueue()
        # Typed messages a queued_command attachment delivered before their "remove" record came (a
        # harness writing both): that many removes add nothing. And the last one a remove added.
        self._delivered_early = 0
        self._last_from_queue: str | None = None
        # The entry of the prompt the user wrote under each record (by its uuid): a second prompt under the same
        # record is a rewind (``_prompt_under``).
        self._prompt_at: dict[str, int] = {}

    def settled_before(self) -> int:
        # A later line of a response merges into the entry its first line made, a few entries back at most
        # (one further back is still joined: ``editable`` unpacks it again).
        return len(self.entries) - MERGE_HORIZON

    def carry_state(self) -> Any:
        return {"responses": [[mid, index] for mid, index in self._by_message_id.items()], "sidechain_ids": sorted(self._sidechain_ids),
                "own_chain": self._own_chain, "snapshot_key": self._snapshot_key, "snapshot_at": self._snapshot_at, "last_hook": self._last_hook,
                "queued": self._queued.saved(), "delivered_early": self._delivered_early, "last_from_queue": self._last_from_queue,
                "prompt_at": self._prompt_at}

    def restore_state(self, state: Any) -> None:
        self._by_message_id = {mid: index for mid, index in state["responses"]}
        self._sidechain_ids = set(state["sidechain_ids"])
        self._own_chain = state.get("own_chain")
        self._snapshot_key = state.get("snapshot_key")
        self._snapshot_at = state.get("snapshot_at")
        self._queued = PromptQueue.restored(state.get("queued"))
        self._delivered_early = state.get("delivered_early", 0)
        self._last_from_queue = state.get("last_from_queue")
        self._prompt_at = dict(state.get("prompt_at", {}))
        last_hook = state.get("last_hook")
        self._last_hook = (last_hook[0], tuple(last_hook[1]), last_hook[2]) if last_hook else None

    @classmethod
    def blocks_alone(cls, record: dict) -> list[Block] | None:
        # A user or assistant record (tool results and calls: the texts released) is its message's content, which
        # ``_user`` and ``_assistant`` make into one entry unless it is put aside (or, a user's, empty); a new parser
        # puts aside only a side chain's record (``_aside``), and has no earlier line of a response to merge into.
        kind, message = record.get("type"), record.get("message")
        if not isinstance(message, dict) or record.get("isSidechain") is True:
            return None
        if kind == "user":
            return _user_blocks(record, message)[0]
        if kind == "assistant":
            return _response(message)[0]
        return None

    def handle(self, record: dict, offset: int, line: int) -> None:
        kind = record.get("type")
        if not isinstance(kind, str):
            self.unknown(line, "record without a type")
            return
        if self.meta.session_id is None and isinstance(record.get("sessionId"), str):
            self.meta.session_id = record["sessionId"]
            self.meta.cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else None
        if kind in METADATA_TYPES:
            if kind == "summary" and isinstance(record.get("summary"), str):
                self.meta.title = record["summary"]
            elif kind in ("ai-title", "custom-title"):
                title = record.get("title") or record.get("aiTitle") or record.get("customTitle")
                if isinstance(title, str):
                    self.meta.title = title
            self.diagnostics.skipped_records += 1
            return
        handler = _HANDLERS.get(kind)
        if handler is None:
            self.unknown(line, f"record type {kind!r}", kind=f"record:{kind}")
            return
        handler(self, record, offset, line)

    def _aside(self, record: dict) -> bool:
        """Whether a record belongs to a side chain kept out of this file's window."""
        sidechain = record.get("isSidechain") is True
        agent_id = record.get("agentId")
        agent = agent_id if isinstance(agent_id, str) else ""
        if self._own_chain is None:
            if not isinstance(record.get("isSidechain", False), bool) or (sidechain and "agentId" in record and not agent):
                # An isSidechain that is no boolean, or a side chain's agentId that names no agent (null, a number, an
                # object), cannot tell whose chain the file is: taken for the main chain, it put every later record
                # of a sub-agent's file aside. The record is read by its own fields, and the next one decides.
                return sidechain
            # The first conversation record decides: a session's transcript starts on its main chain
            # (inlined sub-agents come after the call that made them), a sub-agent's own file on its chain.
            self._own_chain = agent if sidechain else ""
            self.meta.summarizer = sidechain and agent.startswith(SUMMARIZER_AGENT_PREFIX)
        if self._own_chain == "":
            return sidechain
        return not sidechain or agent not in ("", self._own_chain)

    # --- record kinds ---------------------------------------------------------
    def _queue_operation(self, record: dict, offset: int, line: int) -> None:
        """A message typed (or a task notified) while the agent works is queued. ``dequeue`` hands it to the
        next turn, which logs it as a user record; ``remove`` sends a typed one to the model in the middle
        of the turn (2.1.x), and nothing else logs it: it becomes the user's message here."""
        operation, content = record.get("operation"), record.get("content")
        if operation == "enqueue" and isinstance(content, str) and content.strip():
            self._queued.put(content)
        elif operation == "dequeue":
            self._queued.pop_oldest()
        elif operation == "popAll":
            self._queued.clear()
        elif operation == "remove" and self._delivered_early:
            self._delivered_early -= 1  # its message came as an attachment already
        elif operation == "remove":
            typed = self._queued.pop_typed()
            if typed is not None:
                self._last_from_queue = typed
                self.add_entry("user", [Block(USER, typed)], offset, line, from_line=False, timestamp=record.get("timestamp"))
                return
        self.diagnostics.skipped_records += 1  # nothing the model is sent

    def _user(self, record: dict, offset: int, line: int) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            self.malformed(line, "user record without a message object")
            return
        blocks, unknown = _user_blocks(record, message)
        self._count_unknown_blocks(unknown, line)
        if self._aside(record):
            self._sidechain(blocks)
            return
        if blocks:
            if self._queued and isinstance(message.get("content"), str):
                self._queued.discard(message["content"])  # a queued message, delivered as the next turn
            parent = record.get("parentUuid")
            if isinstance(parent, str) and all(block.category in (USER, IMAGE) for block in blocks):
                self._prompt_under(parent)
            self.add_entry("user", blocks, offset, line, timestamp=record.get("timestamp"), uid=_str(record.get("uuid")))

    def _prompt_under(self, parent: str) -> None:
        """A prompt the user wrote under record ``parent``, to be added next. Under a record that has one already,
        it is a rewind (Esc Esc, or an edited prompt): the user took the conversation back to before that prompt,
        and what followed it is never sent again. It stays in the file, a branch the chain no longer follows;
        kept in the window, it made the next call's smaller prompt look like a compaction. Not across a
        compaction: the history before it is its summary."""
        earlier = self._prompt_at.get(parent)
        if earlier is not None and earlier < len(self.entries) and not self._compacted_from(earlier):
            self._abandon_from(earlier)
        self._prompt_at[parent] = len(self.entries)

    def _abandon_from(self, position: int) -> None:
        """The entries from ``position`` on are a branch the chain no longer follows: out of the window, and
        out of what later records are read against."""
        self.rewind(position)
        self._by_message_id = {mid: index for mid, index in self._by_message_id.items() if index <= position}
        self._prompt_at = {uuid: at for uuid, at in self._prompt_at.items() if at < position}
        if self._snapshot_at is not None and self._snapshot_at >= position:
            # The system prompt last read was the branch's (a tool added there): the next one is news, even the same.
            self._snapshot_key = self._snapshot_at = None

    def _compacted_from(self, position: int) -> bool:
        return any(entry.compaction is not None for entry in self.entries[position:])

    def _assistant(self, record: dict, offset: int, line: int) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            self.malformed(line, "assistant record without a message object")
            return
        blocks, unknown, model, usage = _response(message)
        self._count_unknown_blocks(unknown, line)
        message_id = _str(message.get("id"))
        if self._aside(record):
            first_line_of_response = message_id is None or message_id not in self._sidechain_ids
            if message_id:
                self._sidechain_ids.add(message_id)
            self._sidechain(blocks, new_message=first_line_of_response)
            return
        if model and model != SYNTHETIC_MODEL:
            self.meta.model = model
        existing_index = self._by_message_id.get(message_id) if message_id else None
        if existing_index is not None:
            existing = self.editable(existing_index - 1)
            stamp_source(blocks, offset)
            _merge_blocks(existing.blocks, blocks)
            if usage is not None:
                existing.usage = self.checked_usage(usage)  # the last line of a response carries the final counts
            return
        entry = self.add_entry(
            "assistant",
            blocks,
            offset,
            line,
            timestamp=record.get("timestamp"),
            model=model,
            usage=usage,
            uid=_str(record.get("uuid")),
        )
        if message_id:
            self._by_message_id[message_id] = entry.index
            if len(self._by_message_id) > RECENT_RESPONSES:
                del self._by_message_id[next(iter(self._by_message_id))]

    def _system(self, record: dict, offset: int, line: int) -> None:
        subtype = record.get("subtype")
        if subtype == "compact_boundary":
            meta = record.get("compactMetadata") or record.get("compact_metadata") or {}
            preserved = (meta.get("preservedMessages") or {}).get("uuids") or []
            segment = meta.get("preservedSegment") or {}
            head, tail = segment.get("headUuid"), segment.get("tailUuid")
            compaction = Compaction(
                kind="compact_boundary",
                trigger=_str(meta.get("trigger")),
                pre_tokens=_int(meta.get("preTokens", meta.get("pre_tokens"))),
                post_tokens=_int(meta.get("postTokens", meta.get("post_tokens"))),
                preserved_ids=tuple(u for u in preserved if isinstance(u, str)),
                preserved_segment=(head, tail) if isinstance(head, str) and isinstance(tail, str) else None,
                summary_follows=True,
            )
        elif subtype == "microcompact_boundary":
            meta = record.get("microcompactMetadata") or {}
            pre = _int(meta.get("preTokens"))
            saved = _int(meta.get("tokensSaved"))
            compaction = Compaction(
                kind="microcompact",
                trigger=_str(meta.get("trigger")),
                pre_tokens=pre,
                post_tokens=pre - saved if pre is not None and saved is not None else None,
                cleared_tool_ids=tuple(t for t in meta.get("compactedToolIds") or [] if isinstance(t, str)),
            )
        elif subtype in SYSTEM_EVENT_SUBTYPES:
            self.diagnostics.skipped_records += 1
            return
        else:
            self.unknown(line, f"system subtype {subtype!r}", kind=f"system:{subtype}")
            return
        if self._aside(record):
            self.diagnostics.skipped_records += 1
            return
        self.add_entry(
            "system", [], offset, line, timestamp=record.get("timestamp"), uid=_str(record.get("uuid")), compaction=compaction
        )

    def _attachment(self, record: dict, offset: int, line: int) -> None:
        reading = read_attachment(record)
        if not reading.known:
            self.unknown(line, f"attachment type {reading.kind!r}", kind=f"attachment:{reading.kind or '(no type)'}")
        if not reading.blocks:
            if reading.known:
                self.diagnostics.skipped_records += 1
            return
        if self._aside(record):
            self._sidechain(reading.blocks)
            return
        if reading.hook_context is not None:
            last, self._last_hook = self._last_hook, (reading.kind, reading.hook_context, line)
            if last is not None and last[1] == reading.hook_context and last[0] != reading.kind and line - last[2] <= HOOK_ECHO_LINES:
                # The same hook's context written twice, as a hook_success stdout and as a
                # hook_additional_context (a hook firing again later is counted again).
                self._last_hook = None
                self.diagnostics.skipped_records += 1
                return
        if reading.kind == "queued_command" and self._delivered_from_queue(reading.blocks):
            self.diagnostics.skipped_records += 1  # the queue's remove added it already
            return
        role = "user"
        if reading.snapshot:
            key = _digest(reading.blocks)
            if key == self._snapshot_key:
                self.diagnostics.skipped_records += 1  # the same prompt and tools again: nothing changed
                return
            self._snapshot_key, self._snapshot_at, role = key, len(self.entries), SYSTEM_SNAPSHOT
        self.add_entry(role, reading.blocks, offset, line, timestamp=record.get("timestamp"), uid=_str(record.get("uuid")))

    def _delivered_from_queue(self, blocks: list[Block]) -> bool:
        """Whether a queued_command attachment's message was added by its queue's remove already; if it is
        still queued, it is delivered now (and the remove that may follow adds nothing)."""
        text = "".join(block.text for block in blocks if block.category == USER)
        if text and text == self._last_from_queue:
            self._last_from_queue = None
            return True
        if self._queued.discard(text):
            self._delivered_early += 1
        return False

    # --- helpers ----------------------------------------------------------------
    def _sidechain(self, blocks: list[Block], new_message: bool = True) -> None:
        if new_message:
            self.sidechain.messages += 1
        self.sidechain.blocks.extend(blocks)

    def _count_unknown_blocks(self, count: int, line: int) -> None:
        if count:
            self.unknown(line, f"content block type ({count})")


# The method that reads each kind of record: looked up once, not made into bound methods again at every line.
_HANDLERS = {
    "user": ClaudeCodeParser._user,
    "assistant": ClaudeCodeParser._assistant,
    "system": ClaudeCodeParser._system,
    "attachment": ClaudeCodeParser._attachment,
    "queue-operation": ClaudeCodeParser._queue_operation,
}


def _user_blocks(record: dict, message: dict) -> tuple[list[Block], int]:
    """A user record's blocks, and how many of its content's were not recognised."""
    return blocks_from_anthropic(message.get("content"), "user", meta=record.get("isMeta") is True,
                                 summary=record.get("isCompactSummary") is True)


def _response(message: dict) -> tuple[list[Block], int, str | None, Usage | None]:
    """An assistant record's blocks, how many of its content's were not recognised, its model and its usage."""
    blocks, unknown = blocks_from_anthropic(message.get("content"), "assistant")
    model = _str(message.get("model"))
    return blocks, unknown, model, None if model == SYNTHETIC_MODEL else _usage(message.get("usage"))


def _merge_blocks(existing: list[Block], new: list[Block]) -> None:
    """Add a later line's blocks to its response, replacing a re-sent tool call."""
    ids = {b.tool_id: i for i, b in enumerate(existing) if b.tool_id}
    for block in new:
        if block.tool_id and block.tool_id in ids:
            existing[ids[block.tool_id]] = block
        elif block not in existing:
            existing.append(block)


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    cache_read, cache_write = raw.get("cache_read_input_tokens"), raw.get("cache_creation_input_tokens")
    prompt = summed(raw.get("input_tokens"), cache_read, cache_write)
    output = _int(raw.get("output_tokens")) or 0
    details = raw.get("output_tokens_details")
    thinking = _int(details.get("thinking_tokens")) if isinstance(details, dict) else None
    if prompt == 0 and output == 0:
        return None  # synthetic or error responses report zeros; they are not a model call
    split = mapping(raw.get("cache_creation"))
    return Usage(prompt_tokens=prompt, output_tokens=output, reasoning_tokens=thinking,
                 cache_write_tokens=_int(cache_write),
                 cache_write_5m_tokens=_int(split.get("ephemeral_5m_input_tokens")),
                 cache_write_1h_tokens=_int(split.get("ephemeral_1h_input_tokens")),
                 cache_read_tokens=_int(cache_read))


def _digest(blocks: list[Block]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for block in blocks:
        digest.update(f"{block.category}\0{len(block.text)}\0".encode())
        digest.update(block.text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


# Any number, good or bad: Parser.checked_usage and add_entry keep the counts and count the rest.
# (The function itself, not a call to it: five fields of every usage a log reports are read with it.)
_int = number


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
