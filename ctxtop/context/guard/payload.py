"""A hook's JSON payload (Claude Code and Codex send one object on stdin), checked field by field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# A payload is a few kilobytes (a Write's content can be big): anything past this is not one.
MAX_PAYLOAD_BYTES = 64 << 20


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
    extra: dict[str, Any] = field(default_factory=dict)


def parse_payload(data: bytes, *, event_required: bool = True) -> Payload:
    """The payload in ``data``. Raises PayloadError for anything but a JSON object of the documented shape."""
    if len(data) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"payload of {len(data):,} bytes: too big to be a hook's")
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise PayloadError(f"payload is not JSON ({type(exc).__name__})") from None
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
        extra=raw,
    )


def _text(raw: dict, key: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PayloadError(f"payload field {key!r} is not a string")
    return value


def _workspace(raw: dict) -> str:
    """The status line sends its directory as ``workspace.current_dir``."""
    workspace = raw.get("workspace")
    current = workspace.get("current_dir") if isinstance(workspace, dict) else None
    return current if isinstance(current, str) and "\x00" not in current else ""
