"""Gemini CLI chats: the JSONL recorder (2026) and the legacy single-JSON conversation.

Message records are `user` (what the user typed, sometimes a `<session_context>`
preamble), `gemini` (text, `thoughts`, `toolCalls` with their results, and
`tokens` — the ground truth: `tokens.input` is the prompt), and `info`/`error`/
`warning` notices that never reach the model. In the JSONL recorder the same id
may come again (the last one wins), `{"$rewindTo": id}` drops that message and
all after it, and `{"$set": {"messages": …}}` rewrites the history — which is
what chat compression (`<state_snapshot>`) does: it becomes a compaction.
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.base import DocumentParser, LineParser, Parser, stamp_source
from ctxtop.parsers.content import genai_image, listed
from ctxtop.parsers.jsonl import json_text
from ctxtop.parsers.model import (
    ASSISTANT,
    INJECTED,
    REASONING,
    REASONING_NEVER_RESENT,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Block,
    Compaction,
    Usage,
)
from ctxtop.parsers.numbers import number

MODEL_TYPES = ("user", "gemini")
NOTICE_TYPES = ("info", "error", "warning")
SNAPSHOT_TAG = "<state_snapshot>"


def looks_like_record(record: dict) -> bool:
    if "$set" in record or "$rewindTo" in record:
        return True
    if "projectHash" in record and "sessionId" in record:
        return True
    return record.get("type") in MODEL_TYPES + NOTICE_TYPES and "id" in record and "uuid" not in record and "content" in record


def looks_like_header(record: dict) -> bool:
    """The JSONL recorder's first line, the session's header: alone in a chat until the user's first message.
    (A legacy chat on one line has the same keys, and its messages.)"""
    return "projectHash" in record and "sessionId" in record and "messages" not in record and "type" not in record


def looks_like_document(document: Any) -> bool:
    return (isinstance(document, dict) and isinstance(document.get("messages"), list) and "projectHash" in document
            and all(isinstance(m, dict) and "type" in m for m in document["messages"][:5]))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(filter(None, (_text(part) for part in content)))
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
        if isinstance(content.get("functionResponse"), dict):
            response = content["functionResponse"].get("response")
            if isinstance(response, dict) and isinstance(response.get("output"), str):
                return response["output"]
            return json_text(response)
    return ""


def message_blocks(record: dict) -> list[Block]:
    """The blocks one message record shows the model."""
    kind = record.get("type")
    text = _text(record.get("content"))
    if kind == "user":
        stripped = text.lstrip()
        category = SUMMARY if stripped.startswith(SNAPSHOT_TAG) else INJECTED if stripped.startswith("<session_context>") else USER
        return ([Block(category, text)] if text else []) + _images(record.get("content"))
    blocks: list[Block] = []
    thoughts = record.get("thoughts")
    if isinstance(thoughts, list):
        for thought in thoughts:
            if isinstance(thought, dict):
                blocks.append(Block(REASONING, "\n".join(str(thought.get(k) or "") for k in ("subject", "description")).strip()))
    if text:
        blocks.append(Block(ASSISTANT, text))
    for call in listed(record.get("toolCalls")):
        if not isinstance(call, dict):
            continue
        name = call.get("name") if isinstance(call.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        blocks.append(Block(TOOL_CALL, json_text(call.get("args", {})), tool_name=name, tool_id=call_id))
        if "result" in call:
            blocks.append(Block(TOOL_RESULT, _text(call.get("result")), tool_name=name, tool_id=call_id,
                                is_error=call.get("status") == "error"))
            blocks.extend(_images(call.get("result"), tool_name=name, tool_id=call_id))
    return blocks


def _images(content: Any, tool_name: str | None = None, tool_id: str | None = None) -> list[Block]:
    """The images among a message's or a tool result's parts: an @-attached image, or what read_file answers for one
    beside its functionResponse."""
    parts = content if isinstance(content, list) else [content]
    return [image for part in parts if (image := genai_image(part, tool_name, tool_id)) is not None]


def _usage(record: dict) -> Usage | None:
    tokens = record.get("tokens")
    # Numbers are handed on as read (Parser.checked_usage keeps the counts and counts the rest).
    if isinstance(tokens, dict) and number(tokens.get("input")) is not None:
        # `input` is promptTokenCount, which already includes `cached` (cachedContentTokenCount): don't add it.
        return Usage(tokens["input"], number(tokens.get("output")) or 0, reasoning_tokens=number(tokens.get("thoughts")),
                     cache_read_tokens=number(tokens.get("cached")))
    return None


class _GeminiMessages:
    """What both Gemini parsers share: one record becomes one entry."""

    # A real session: each turn's first call reports 13,629 and 21,501 tokens where the calls after it go on
    # growing from 6,219 to 6,686 (what that call carries more, the log does not say).
    opening_call_reports_more = True
    # Gemini CLI leaves the thought parts out of the history it sends (geminiChat recordHistory, "filtering out thoughts").
    reasoning_kept = REASONING_NEVER_RESENT

    def add_message(self: Parser, record: dict, offset: int, line: int) -> None:  # type: ignore[misc]
        kind = record.get("type")
        if kind in NOTICE_TYPES:
            self.diagnostics.skipped_records += 1
            return
        if kind not in MODEL_TYPES:
            self.unknown(line, f"message type {kind!r}")
            return
        blocks = message_blocks(record)
        model = record.get("model") if isinstance(record.get("model"), str) else None
        if model:
            self.meta.model = model
        compaction = None
        if kind == "user" and blocks and blocks[0].category == SUMMARY:
            compaction = Compaction("gemini_compression", trigger=None)
        self.add_entry("assistant" if kind == "gemini" else "user", blocks, offset, line, timestamp=record.get("timestamp"),
                       model=model, usage=_usage(record), uid=record.get("id") if isinstance(record.get("id"), str) else None,
                       compaction=compaction)


class GeminiChatParser(_GeminiMessages, DocumentParser):
    name = "gemini-cli-json"
    description = "Gemini CLI conversation (legacy single JSON)"
    locations = ("~/.gemini/tmp/<project-hash>/chats/session-*.json",)

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        if not looks_like_document(document):
            self.malformed(1, "not a Gemini CLI conversation object")
            return
        self.meta.session_id = document.get("sessionId") if isinstance(document.get("sessionId"), str) else None
        for record in document["messages"]:
            if isinstance(record, dict):
                self.add_message(record, 0, 0)
            else:
                self.malformed(0, "a message that is not an object")


# How far back a message written again is looked for.
REPEAT_LOOKBACK = 50


class GeminiJsonlParser(_GeminiMessages, LineParser):
    name = "gemini-cli"
    description = "Gemini CLI chat recording (JSONL)"
    locations = ("~/.gemini/tmp/<project-hash>/chats/session-*.jsonl",)

    def settled_before(self) -> int:
        # A message written again replaces its earlier version among the last few (a rewind drops whole tails).
        return max(0, len(self.entries) - REPEAT_LOOKBACK)

    def handle(self, record: dict, offset: int, line: int) -> None:
        if "$rewindTo" in record:
            target = record["$rewindTo"]
            if not isinstance(target, str):
                # Names no message: a null would match every entry without an id (a compression's), and drop it and all after.
                self.malformed(line, "a rewind to no message id")
                return
            for position, entry in enumerate(self.entries):
                if entry.uid == target:
                    self.rewind(position)
                    return
            return
        if "$set" in record:
            patch = record["$set"]
            if isinstance(patch, dict) and isinstance(patch.get("messages"), list):
                self._rewrite(patch["messages"], offset, line, record)
            return
        if "projectHash" in record and "type" not in record:
            if isinstance(record.get("sessionId"), str):
                self.meta.session_id = record["sessionId"]
            return
        uid = record.get("id")
        for entry in reversed(self.entries[-REPEAT_LOOKBACK:]):
            if entry.uid is not None and entry.uid == uid:
                # The same message again, with more of it: the last version wins.
                entry = self.editable(entry.index - 1)
                entry.blocks = message_blocks(record)
                stamp_source(entry.blocks, offset)
                entry.usage = self.checked_usage(_usage(record)) or entry.usage
                if entry is not self.entries[-1]:
                    self.history_rewritten = True
                return
        self.add_message(record, offset, line)

    def _rewrite(self, messages: list, offset: int, line: int, record: dict) -> None:
        """The history replaced as a whole (compression, masking): a compaction holding the new history."""
        replacement = [block for m in messages if isinstance(m, dict) for block in message_blocks(m)]
        compressed = any(b.category == SUMMARY for b in replacement)
        compaction = Compaction("gemini_compression" if compressed else "history_rewrite", replacement=replacement)
        self.add_entry("system", [], offset, line, timestamp=None, compaction=compaction)
