"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``. ``response_item`` lines are
what the model sees; ``event_msg/token_count`` carries the true usage;
``compacted`` replaces the whole history with its ``replacement_history``.
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.base import LineParser
from ctxtop.parsers.content import as_text, data_url_image_size, user_text_category
from ctxtop.parsers.jsonl import json_text
from ctxtop.parsers.model import (
    ASSISTANT,
    IMAGE,
    INJECTED,
    REASONING,
    REASONING_UNTIL_NEXT_TURN,
    SUMMARY,
    SYSTEM,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Block,
    Compaction,
    Usage,
)
from ctxtop.parsers.numbers import number

# Codex's local compaction puts the summary in a user message that starts like this
# (templates/compact/summary_prefix.md).
SUMMARY_PREFIX = "Another language model started to solve this problem"
# response_item types that never reach the model (snapshots kept for undo).
IGNORED_ITEMS = frozenset({"ghost_snapshot"})
# response_item types that hold a tool's output.
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def looks_like(record: dict) -> bool:
    return record.get("type") in ("session_meta", "response_item", "event_msg", "turn_context", "compacted") and isinstance(
        record.get("payload"), dict
    )


class CodexParser(LineParser):
    name = "codex"
    description = "Codex CLI rollout (JSONL)"
    locations = ("~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl", "~/.codex/archived_sessions/")
    # The Responses API drops reasoning items that come before the last user message: only the
    # current turn's reasoning is part of the prompt (OpenAI cookbook, "Better performance from
    # reasoning models using the Responses API", https://cookbook.openai.com/examples/responses_api/reasoning_items#caching;
    # Codex itself stopped sending them in openai/codex#5857, `remove_reasoning_before_last_turn`).
    reasoning_kept = REASONING_UNTIL_NEXT_TURN
    boundary_marker = b"compacted"

    @staticmethod
    def is_boundary(record: dict) -> bool:
        return record.get("type") == "compacted"

    def __init__(self) -> None:
        super().__init__()
        self._last_total: Any = None
        self._pending_usage: Usage | None = None

    def carry_state(self) -> Any:
        pending = self._pending_usage
        return {"last_total": self._last_total,
                "pending_usage": None if pending is None else [pending.prompt_tokens, pending.output_tokens, pending.reasoning_tokens,
                                                               pending.context_window, pending.cache_write_tokens,
                                                               pending.cache_write_5m_tokens, pending.cache_write_1h_tokens,
                                                               pending.cache_read_tokens]}

    def restore_state(self, state: Any) -> None:
        self._last_total = state["last_total"]
        self._pending_usage = None if state["pending_usage"] is None else Usage(*state["pending_usage"])

    @classmethod
    def blocks_alone(cls, record: dict) -> list[Block] | None:
        # A tool's output (the texts released): ``handle`` makes its entry of ``_output_blocks`` and nothing else.
        payload = record.get("payload")
        if record.get("type") == "response_item" and isinstance(payload, dict) and payload.get("type") in TOOL_OUTPUTS:
            return _output_blocks(payload)
        return None

    def handle(self, record: dict, offset: int, line: int) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        if not isinstance(payload, dict):
            self.malformed(line, "record without a payload object")
            return
        timestamp = record.get("timestamp")
        # Nearly every line is one of the first two.
        if kind == "response_item":
            blocks = self._item_blocks(payload, line)
            if blocks:
                self.add_entry(_role_of(payload), blocks, offset, line, timestamp=timestamp, model=self.meta.model)
        elif kind == "event_msg":
            self._event(payload, offset, line, timestamp)
        elif kind == "session_meta":
            self._session_meta(payload, offset, line, timestamp)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.meta.model = payload["model"]
            self.diagnostics.skipped_records += 1
        elif kind == "compacted":
            self._compacted(payload, offset, line, timestamp)
        else:
            self.unknown(line, f"record type {kind!r}")

    def _session_meta(self, payload: dict, offset: int, line: int, timestamp: Any) -> None:
        if isinstance(payload.get("id"), str):
            self.meta.session_id = payload["id"]
        if isinstance(payload.get("cwd"), str):
            self.meta.cwd = payload["cwd"]
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            self.add_entry("system", [Block(SYSTEM, text)], offset, line, timestamp=timestamp)
        else:
            # `instructions` (AGENTS.md) is also written as a <user_instructions> message item;
            # counting it here too would count it twice.
            self.diagnostics.skipped_records += 1

    def _event(self, payload: dict, offset: int, line: int, timestamp: Any) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            self._token_count(payload.get("info"))
        elif kind == "task_started":
            window = self.tokens(number(payload.get("model_context_window")))
            if window:
                self.meta.context_window = window
            self.diagnostics.skipped_records += 1
        elif kind == "thread_rolled_back":
            self._roll_back(payload.get("num_turns"), line)
        elif kind == "context_compacted":
            last = self.entries[-1] if self.entries else None
            if last is None or last.compaction is None:
                # Older rollouts mark the compaction only with this event.
                self.add_entry("system", [], offset, line, timestamp=timestamp, compaction=Compaction(kind="codex_local"))
            else:
                self.diagnostics.skipped_records += 1
        else:
            # user_message, agent_message, agent_reasoning... mirror response items for the UI.
            self.diagnostics.skipped_records += 1

    def _roll_back(self, turns: Any, line: int) -> None:
        """Codex's backtrack: the last ``turns`` user turns, each from its user message on, leave the history
        (they are never sent again). A compaction ends the search: before it, the history is its replacement."""
        if type(turns) is not int or turns <= 0:
            self.malformed(line, "a rollback of no number of turns")
            return
        start = None
        for position in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[position]
            if entry.compaction is not None:
                break
            if entry.role == "user" and any(block.category in (USER, IMAGE) for block in entry.blocks):
                start, turns = position, turns - 1
                if turns == 0:
                    break
        if start is not None:
            self.rewind(start)

    def _token_count(self, info: Any) -> None:
        self.diagnostics.skipped_records += 1
        if not isinstance(info, dict):
            return  # the first event of a turn carries only rate limits
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        window = self.tokens(number(info.get("model_context_window")))
        if window:
            self.meta.context_window = window
        if total == self._last_total or not isinstance(last, dict):
            return  # Codex emits each usage twice in a row
        self._last_total = total
        prompt = number(last.get("input_tokens"))
        if prompt is None or prompt == 0:
            return  # zeroed snapshots around remote compaction say nothing about the window
        # Numbers are handed on as read: checked_usage keeps the counts and counts the rest.
        usage = self.checked_usage(Usage(
            prompt_tokens=prompt,
            output_tokens=number(last.get("output_tokens")) or 0,
            reasoning_tokens=number(last.get("reasoning_output_tokens")),
            context_window=window,
            # OpenAI caches without a write charge: only the tokens read from the cache are reported.
            cache_read_tokens=number(last.get("cached_input_tokens")),
        ))
        if usage is None:
            return
        last = len(self.entries) - 1  # (once: the entries may be a store, whose length is a call)
        if last >= 0:
            self.touch(last)  # counted already, perhaps: its call's estimates change
            self.entries[last].usage = usage

    def _compacted(self, payload: dict, offset: int, line: int, timestamp: Any) -> None:
        history = payload.get("replacement_history")
        summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
        replacement: list[Block] | None = None
        opaque = False
        if isinstance(history, list):
            replacement = []
            for item in history:
                if isinstance(item, dict):
                    replacement.extend(self._item_blocks(item, line))
            opaque = any(b.category == SUMMARY and b.opaque for b in replacement)
        kind = "codex_remote" if opaque else "codex_local"
        # A rollout does not say whether the user asked (/compact) or the limit did: unknown, not taken for "auto".
        compaction = Compaction(kind=kind, trigger=None, replacement=replacement, opaque=opaque)
        # Early rollouts record only the summary text: it follows the resident context.
        blocks = [Block(SUMMARY, summary)] if summary and replacement is None else []
        self.add_entry("system", blocks, offset, line, timestamp=timestamp, compaction=compaction)

    # --- response items -------------------------------------------------------------
    def _item_blocks(self, item: dict, line: int) -> list[Block]:
        kind = item.get("type")
        if kind == "message":
            return _message_blocks(item)
        if kind == "reasoning":
            summary = "\n".join([s["text"] for s in item.get("summary") or [] if isinstance(s, dict) and isinstance(s.get("text"), str)])
            content = item.get("content")
            content = as_text(content) if content else ""
            text = f"{summary}\n{content}" if summary and content else summary or content
            # The model also re-reads the encrypted reasoning, whose size only usage can tell.
            return [Block(REASONING, text, opaque=bool(item.get("encrypted_content")) or not text)]
        if kind == "function_call":
            return [Block(TOOL_CALL, as_text(item.get("arguments")), tool_name=_str(item.get("name")), tool_id=_str(item.get("call_id")))]
        if kind in TOOL_OUTPUTS:
            return _output_blocks(item)
        if kind == "custom_tool_call":
            return [Block(TOOL_CALL, as_text(item.get("input")), tool_name=_str(item.get("name")), tool_id=_str(item.get("call_id")))]
        if kind == "local_shell_call":
            return [Block(TOOL_CALL, json_text(item.get("action")), tool_name="local_shell", tool_id=_str(item.get("call_id")))]
        if kind == "web_search_call":
            return [Block(TOOL_CALL, json_text(item.get("action")), tool_name="web_search", tool_id=_str(item.get("id")))]
        if kind == "compaction":
            return [Block(SUMMARY, "", opaque=True)]
        if kind in IGNORED_ITEMS:
            self.diagnostics.skipped_records += 1
            return []
        self.unknown(line, f"response item type {kind!r}")
        return []


_ROLE_OF_ITEM = {
    "reasoning": "assistant",
    "function_call": "assistant",
    "custom_tool_call": "assistant",
    "local_shell_call": "assistant",
    "web_search_call": "assistant",
    "function_call_output": "tool",
    "custom_tool_call_output": "tool",
    "local_shell_call_output": "tool",
    "compaction": "system",
}


def _output_blocks(item: dict) -> list[Block]:
    """A tool output item's blocks: its text, then its images."""
    output = item.get("output")
    if isinstance(output, dict) and "content" in output:
        output = output.get("content")
    call_id = _str(item.get("call_id"))
    result = Block(TOOL_RESULT, as_text(output), tool_id=call_id)
    if not isinstance(output, list):
        return [result]
    # Newer outputs are content items: an image one (view_image, an MCP screenshot) is no text, but the model sees it.
    return [result, *[_image_block(part, call_id) for part in output if _is_image(part)]]


def _role_of(item: dict) -> str:
    """The role a response item is counted under: its own, else the one its type implies."""
    role, kind = item.get("role"), item.get("type")
    if isinstance(role, str):
        return role
    return _ROLE_OF_ITEM.get(kind, "assistant") if isinstance(kind, str) else "assistant"


def _message_blocks(item: dict) -> list[Block]:
    role = item.get("role")
    blocks: list[Block] = []
    content = item.get("content")
    parts = content if isinstance(content, list) else [{"type": "input_text", "text": content}]
    for part in parts:
        if not isinstance(part, dict):
            continue
        if _is_image(part):
            blocks.append(_image_block(part))
            continue
        text = part.get("text")
        if not isinstance(text, str):
            continue
        if role == "assistant":
            category = ASSISTANT
        elif role in ("developer", "system"):
            category = INJECTED
        elif text.startswith(SUMMARY_PREFIX):
            category = SUMMARY
        else:
            category = user_text_category(text)
        blocks.append(Block(category, text))
    return blocks


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "input_image"


def _image_block(part: dict, tool_id: str | None = None) -> Block:
    """An ``input_image`` content item; its pixel size when it is inlined as a data URL."""
    return Block(IMAGE, "", tool_id=tool_id, image_size=data_url_image_size(part.get("image_url")))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
