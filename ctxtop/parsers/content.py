"""Content-block conversion shared by the Anthropic-shaped formats.

Claude Code transcripts, Anthropic request dumps (and later Cline/Roo) all use
the Messages API block schema; this module turns those blocks into ``Block``s.
"""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any

from ctxtop.parsers.jsonl import json_text
from ctxtop.parsers.model import (
    ASSISTANT,
    IMAGE,
    INJECTED,
    REASONING,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Block,
)

# Text the harness writes into user turns: it reaches the model, but the user never typed it.
HARNESS_PREFIXES = (
    "<system-reminder>",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<local-command-caveat>",
    "Caveat: The messages below were generated",
    "<task-notification>",
    "<user-prompt-submit-hook>",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
)


def user_text_category(text: str) -> str:
    """``injected`` for harness-written text, ``user`` for what a person typed."""
    return INJECTED if text.lstrip().startswith(HARNESS_PREFIXES) else USER


def listed(value: Any) -> list:
    """``value`` when it is a list, else an empty one: a field a log gives of another type has nothing to list."""
    return value if isinstance(value, list) else []


def mapping(value: Any) -> dict:
    """``value`` when it is an object, else an empty one: a field a log gives of another type has no fields."""
    return value if isinstance(value, dict) else {}


def as_text(value: Any) -> str:
    """Best-effort text of a tool result or similar field of unknown shape."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict) and item.get("type") in ("image", "input_image", "image_url"):
                continue
            else:
                parts.append(json_text(item))
        return "\n".join(parts)
    return json_text(value)


def blocks_from_anthropic(content: Any, role: str, *, meta: bool = False, summary: bool = False) -> tuple[list[Block], int]:
    """Convert a Messages API ``content`` (string or block list) to blocks.

    Returns the blocks and the number of block types that were not recognised.
    ``meta`` marks harness-injected records; ``summary`` a compaction summary.
    """
    if isinstance(content, str):
        return [Block(_text_category(content, role, meta, summary), content)], 0
    if not isinstance(content, list):
        return [], 1
    blocks: list[Block] = []
    unknown = 0
    for raw in content:
        if isinstance(raw, str):
            blocks.append(Block(_text_category(raw, role, meta, summary), raw))
            continue
        if not isinstance(raw, dict):
            unknown += 1
            continue
        kind = raw.get("type")
        if kind == "text":
            text = raw.get("text")
            blocks.append(Block(_text_category(text if isinstance(text, str) else "", role, meta, summary), as_text(text)))
        elif kind == "thinking":
            text = raw.get("thinking")
            text = text if isinstance(text, str) else ""
            blocks.append(Block(REASONING, text, opaque=not text.strip()))
        elif kind == "redacted_thinking":
            blocks.append(Block(REASONING, "", opaque=True))
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            blocks.append(
                Block(TOOL_CALL, json_text(raw.get("input", {})), tool_name=_str(raw.get("name")), tool_id=_str(raw.get("id")))
            )
        elif kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_tool_result")):
            blocks.extend(_tool_result(raw))
        elif kind == "image":
            blocks.append(Block(IMAGE, "", image_size=image_size(raw.get("source"))))
        elif kind == "document":
            blocks.append(Block(_text_category("", role, meta, summary), _document_text(raw)))
        elif kind == "compaction":
            text = raw.get("content")
            blocks.append(Block(SUMMARY, text if isinstance(text, str) else "", opaque=not isinstance(text, str)))
        else:
            unknown += 1
    return blocks, unknown


def _text_category(text: str, role: str, meta: bool, summary: bool) -> str:
    if summary:
        return SUMMARY
    if meta:
        return INJECTED
    if role == "assistant":
        return ASSISTANT
    return user_text_category(text)


def _tool_result(raw: dict) -> list[Block]:
    tool_id = _str(raw.get("tool_use_id"))
    content = raw.get("content")
    blocks = [Block(TOOL_RESULT, as_text(content), tool_id=tool_id, is_error=raw.get("is_error") is True)]
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and item.get("type") == "image":
                blocks.append(Block(IMAGE, "", tool_id=tool_id, image_size=image_size(item.get("source"))))
    return blocks


def _document_text(raw: dict) -> str:
    source = raw.get("source")
    if isinstance(source, dict) and source.get("type") == "text" and isinstance(source.get("data"), str):
        return source["data"]
    title = raw.get("title")
    return f"[document{': ' + title if isinstance(title, str) else ''}]"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def image_size(source: Any) -> tuple[int, int] | None:
    """Pixel size of a base64 PNG, GIF or JPEG image source, when its header says."""
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    data = source.get("data")
    if not isinstance(data, str):
        return None
    try:
        # The headers we need sit in the first few KB; decode only that much.
        head = base64.b64decode(data[:8192 - 8192 % 4], validate=False)
    except (binascii.Error, ValueError):
        return None
    return _header_size(head)


def genai_image(part: Any, tool_name: str | None = None, tool_id: str | None = None) -> Block | None:
    """The image a google.genai ``Part`` holds (Gemini CLI's messages and ADK's events are made of them): its
    ``inline_data`` (base64 bytes) or ``file_data`` (a URI) of an ``image/`` type, in either spelling (Pydantic dumps
    ``inlineData``); None when it holds none. An image has no text: only its pixel size, when its bytes are inline."""
    data = _genai_field(part, "inline_data", "inlineData") or _genai_field(part, "file_data", "fileData")
    mime = _genai_field(data, "mime_type", "mimeType")
    if not (isinstance(mime, str) and mime.startswith("image/")):
        return None
    return Block(IMAGE, "", tool_name=tool_name, tool_id=tool_id,
                 image_size=image_size({"type": "base64", "data": mapping(data).get("data")}))


def _genai_field(value: Any, snake: str, camel: str) -> Any:
    field = mapping(value)
    return field[snake] if snake in field else field.get(camel)


def data_url_image_size(url: Any) -> tuple[int, int] | None:
    """Pixel size of an image inlined as a base64 ``data:`` URL (OpenAI, Codex, opencode), when its header says."""
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        return image_size({"type": "base64", "data": url.split(";base64,", 1)[1]})
    return None


def _header_size(head: bytes) -> tuple[int, int] | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 9 < len(head):
        if head[pos] != 0xFF:
            return None
        marker = head[pos + 1]
        length = struct.unpack(">H", head[pos + 2 : pos + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    return None
