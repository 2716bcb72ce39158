"""A hook's JSON payload (Claude Code and Codex send one object on stdin), checked field by field."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# A payload is a few kilobytes (a Write's content can be big): anything past this is not one.
MAX_PAYLOAD_BYTES = 64 << 20
MIN_WINDOW = 1024  # a window size given smaller than any model's is no window size


class PayloadError(ValueError):
    """A payload that cannot be used; the message is one line."""


@dataclass(slots=True)
class Payload:
    event: str  # hook_event_name: PreToolUse, SessionStart, PreCompact, PostCompact…
    transcript_path: str | None
    session_id: str = ""
    cwd: str | None = None
    source: str = ""  # SessionStart: startup | resume | clear | compact
    trigger: str = ""  # PreCompact / PostCompact: manual | auto
    tool_name: str = ""
    tool_input: Any = None
    model: str | None = None  # the status line's model.id, a Codex hook's model
    context_window: int | None = None  # the status line's context_window.context_window_size (Claude Code 2.0.7x+)
    extra: dict[str, Any] = field(default_factory=dict)


def parse_payload(data: bytes, *, event_required: bool = True) -> Payload:
    """The payload in ``data``. Raises PayloadError for anything but a JSON object of the documented shape."""
    if len(data) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"payload of {len(data):,} bytes: too big to be a hook's")
    try:
        raw = json.loads(data)
    except RecursionError:
        raw = _shallow_object(data)
    except ValueError as exc:
        raise PayloadError(f"payload is not JSON ({type(exc).__name__})") from None
    else:
        if _deeper_than(raw, DEEP_VALUE):  # decoded, but too deep to encode again for the judge
            raw = _shallow_object(data)
    if not isinstance(raw, dict):
        raise PayloadError("payload is not a JSON object")
    event = _text(raw, "hook_event_name")
    if event_required and not event:
        raise PayloadError("payload has no hook_event_name")
    for key in ("transcript_path", "cwd"):
        if "\x00" in _text(raw, key):
            raise PayloadError(f"payload field {key!r} is not a path (a NUL byte)")
    model = raw.get("model")
    if isinstance(model, dict):
        model = model.get("id") or model.get("display_name")
    return Payload(
        event=event,
        transcript_path=_text(raw, "transcript_path") or None,
        session_id=_text(raw, "session_id"),
        cwd=_text(raw, "cwd") or _workspace(raw) or None,
        source=_text(raw, "source"),
        trigger=_text(raw, "trigger"),
        tool_name=_text(raw, "tool_name"),
        tool_input=raw.get("tool_input"),
        model=model if isinstance(model, str) and model else None,
        context_window=_window_size(raw),
        extra=raw,
    )


def _text(raw: dict, key: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str) or isinstance(value, DeepValue):
        raise PayloadError(f"payload field {key!r} is not a string")
    return value


def _window_size(raw: dict) -> int | None:
    """The window's size in tokens as the agent gives it (``context_window.context_window_size``), if it is a count."""
    window = raw.get("context_window")
    size = window.get("context_window_size") if isinstance(window, dict) else None
    return size if isinstance(size, int) and not isinstance(size, bool) and MIN_WINDOW <= size < 1 << 40 else None


def _workspace(raw: dict) -> str:
    """The status line sends its directory as ``workspace.current_dir``."""
    workspace = raw.get("workspace")
    current = workspace.get("current_dir") if isinstance(workspace, dict) else None
    return current if isinstance(current, str) and "\x00" not in current else ""


# Deeper than this, a payload's value is kept as its JSON text: json.dumps recurses further than json.loads does.
DEEP_VALUE = 400


class DeepValue(str):
    """A payload's value nested too deep to decode or encode again, as its JSON text: what the guard judges a tool's
    input by, never a path or a name."""
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _shallow_object(data: bytes) -> dict[str, Any]:
    """A payload nested too deeply to decode whole (a tool's input can be): its fields decoded, and a value too deep
    to decode kept as its JSON text, which is what the guard judges a call's input by anyway. Nesting must not
    turn the guard off."""
    try:
        text = data.decode(json.detect_encoding(data)).removeprefix("\ufeff")  # (as json.loads reads bytes: a BOM, UTF-16…)
    except UnicodeDecodeError:
        raise PayloadError("payload is not JSON (UnicodeDecodeError)") from None
    decoder, fields = json.JSONDecoder(), {}
    at = _after_space(text, 0)
    if not text.startswith("{", at):
        raise PayloadError("payload is not a JSON object")
    at = _after_space(text, at + 1)
    try:
        while not text.startswith("}", at):
            key, at = decoder.raw_decode(text, at)
            at = _after_space(text, at)
            if not isinstance(key, str) or not text.startswith(":", at):
                raise ValueError("not a key")
            at = _after_space(text, at + 1)
            try:
                value, end = decoder.raw_decode(text, at)
                deep = _deeper_than(value, DEEP_VALUE)
            except RecursionError:
                end, deep = _value_end(text, at), True
            fields[key] = DeepValue(_decoded_strings(text[at:end])) if deep else value
            at = _after_space(text, end)
            if text.startswith(",", at):
                at = _after_space(text, at + 1)
            elif not text.startswith("}", at):
                raise ValueError("not an object")
    except ValueError:
        raise PayloadError("payload is not JSON (JSONDecodeError)") from None
    if text[_after_space(text, at + 1):]:
        raise PayloadError("payload is not JSON (JSONDecodeError)")
    return fields


def _after_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _value_end(text: str, at: int) -> int:
    """Where the array or object starting at ``at`` ends (its brackets matched, strings skipped)."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text, at):
        token = match.group()
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise ValueError("unclosed")


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` arrays and objects deep (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _decoded_strings(text: str) -> str:
    """JSON text with each string's escapes decoded ("git \\u0070ush" reads "git push", as the tool is given it)."""
    return _STRING.sub(lambda m: json.dumps(json.loads(m.group()), ensure_ascii=False), text)
