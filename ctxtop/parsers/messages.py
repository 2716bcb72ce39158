"""Bare message dumps: an Anthropic Messages request, or OpenAI chat messages.

Anthropic: ``{"model", "system", "tools", "messages": [{role, content: blocks}]}``.
OpenAI: a bare array of messages, ``{"messages": [...]}``, or JSON Lines with
one message per line; ``tool_calls`` on assistant messages, role ``tool``.
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.base import DocumentParser
from ctxtop.parsers.content import as_text, blocks_from_anthropic, data_url_image_size, listed, mapping, user_text_category
from ctxtop.parsers.jsonl import json_text
from ctxtop.parsers.model import ASSISTANT, IMAGE, SYSTEM, TOOL_CALL, TOOL_RESULT, TOOLS, Block, Usage
from ctxtop.parsers.numbers import number, summed


def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("role"), str)


def message_list(document: Any) -> list | None:
    """The messages of a dump, whichever of the accepted shapes it has."""
    if isinstance(document, list) and document and all(_is_message(m) for m in document):
        return document
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        listed = document["messages"]
        if listed and all(_is_message(m) for m in listed):
            return listed
    return None


def _has_anthropic_blocks(messages: list) -> bool:
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result", "thinking", "image"):
                    return block.get("type") != "image" or "source" in block
    return False


def looks_like_anthropic(document: Any) -> bool:
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        if "max_tokens" in document or "system" in document and not any(
            isinstance(m, dict) and m.get("role") == "system" for m in document["messages"]
        ):
            return True
    messages = message_list(document)
    return messages is not None and _has_anthropic_blocks(messages)


def looks_like_openai(document: Any) -> bool:
    return message_list(document) is not None and not looks_like_anthropic(document)


class AnthropicRequestParser(DocumentParser):
    name = "anthropic-request"
    description = "Anthropic Messages API request body (system, tools, messages)"
    locations = ("any JSON file you saved from an API call",)

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        if isinstance(document, dict):
            self._system(document.get("system"))  # the system prompt comes before the tools
        _read_header(self, document)
        messages = message_list(document) or []
        for position, message in enumerate(messages):
            offset, line = _where(offsets, position)
            if not _is_message(message):
                self.malformed(line, f"message {position + 1} is not an object with a role")
                continue
            role = message["role"]
            blocks, unknown = blocks_from_anthropic(message.get("content"), role)
            if unknown:
                self.unknown(line, f"content block type ({unknown}) in message {position + 1}")
            if blocks:
                self.add_entry(role, blocks, offset, line)
        if isinstance(document, dict):
            usage = document.get("usage")
            if isinstance(usage, dict) and self.entries:
                parts = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
                prompt = summed(*(usage.get(k) for k in parts))  # checked_usage counts one that is no count
                if prompt:
                    self.entries[-1].usage = self.checked_usage(Usage(prompt_tokens=prompt, output_tokens=number(usage.get("output_tokens")) or 0))

    def _system(self, system: Any) -> None:
        if isinstance(system, str) and system:
            self.add_entry("system", [Block(SYSTEM, system)], 0, 0)
        elif isinstance(system, list):
            blocks = [Block(SYSTEM, as_text(b.get("text"))) for b in system if isinstance(b, dict)]
            if blocks:
                self.add_entry("system", blocks, 0, 0)


class OpenAIMessagesParser(DocumentParser):
    name = "openai-messages"
    description = "OpenAI chat messages: an array, {\"messages\": [...]}, or one message per line"
    locations = ("any JSON/JSONL dump of chat messages (mini-swe-agent .traj.json, API logs)",)

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        _read_header(self, document)
        for position, message in enumerate(message_list(document) or []):
            offset, line = _where(offsets, position)
            if not _is_message(message):
                self.malformed(line, f"message {position + 1} is not an object with a role")
                continue
            role = message["role"]
            blocks = self._blocks(role, message)
            if blocks:
                self.add_entry(role, blocks, offset, line)

    def _blocks(self, role: str, message: dict) -> list[Block]:
        content = message.get("content")
        blocks: list[Block] = []
        if role == "tool":
            blocks.append(Block(TOOL_RESULT, as_text(content), tool_id=_str(message.get("tool_call_id")), tool_name=_str(message.get("name"))))
            return blocks
        for text, is_image, size in _parts(content):
            if is_image:
                blocks.append(Block(IMAGE, "", image_size=size))
            elif role in ("system", "developer"):
                blocks.append(Block(SYSTEM, text))
            elif role == "assistant":
                blocks.append(Block(ASSISTANT, text))
            else:
                blocks.append(Block(user_text_category(text), text))
        for call in listed(message.get("tool_calls")):
            if not isinstance(call, dict):
                continue
            function = mapping(call.get("function"))
            blocks.append(
                Block(TOOL_CALL, as_text(function.get("arguments")), tool_name=_str(function.get("name")), tool_id=_str(call.get("id")))
            )
        return blocks


def _parts(content: Any) -> list[tuple[str, bool, tuple[int, int] | None]]:
    """``(text, is_image, image_size)`` for each part of an OpenAI content value."""
    if content is None:
        return []
    if not isinstance(content, list):
        return [(as_text(content), False, None)]
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in ("image_url", "input_image"):
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            parts.append(("", True, data_url_image_size(url)))
        else:
            parts.append((as_text([part]), False, None))
    return parts


def _read_header(parser: DocumentParser, document: Any) -> None:
    """The model name and tool definitions a request-shaped document carries."""
    if not isinstance(document, dict):
        return
    if isinstance(document.get("model"), str):
        parser.meta.model = document["model"]
    blocks = _tool_definitions(document.get("tools"))
    if blocks:
        parser.add_entry("system", blocks, 0, 0)


def _tool_definitions(tools: Any) -> list[Block]:
    if not isinstance(tools, list):
        return []
    blocks = []
    for tool in tools:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = tool.get("name") or (function.get("name") if isinstance(function, dict) else None)
            blocks.append(Block(TOOLS, json_text(tool), tool_name=name if isinstance(name, str) else None))
    return blocks


def _where(offsets: list[int] | None, position: int) -> tuple[int, int]:
    if offsets is None:
        return 0, 0
    return offsets[position], position + 1


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
