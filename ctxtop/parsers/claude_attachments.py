"""Claude Code ``attachment`` records: the text each kind puts in front of the model.

2.1.x writes ``{"type": "attachment", "attachment": {"type": KIND, ...}}``. Some
versions add ``rendered: [{"content": ...}]``, the text as sent; 2.1.8x–2.1.11x
do not, and the text sits in typed fields, read here kind by kind. Listings of
tools, skills and agents count as ``tools``; a queued prompt is the user's; the
rest is ``injected``. Kinds whose reminder is Claude Code's own template (plan
mode, token budgets…) carry no text in the log and are known but not read;
other kinds are unknown and counted by name.

``prompt_snapshot`` (2.1.2xx) is the system prompt and tool schemas as sent: it
becomes an entry of its own (``SYSTEM_SNAPSHOT``) that replaces the earlier one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxtop.parsers.content import blocks_from_anthropic, listed, mapping
from ctxtop.parsers.jsonl import DecodeError, json_text, loads
from ctxtop.parsers.model import IMAGE, INJECTED, SYSTEM, TOOLS, USER, Block

# Kinds that list what the model may call: their text is part of the tool definitions.
LISTINGS = frozenset({"skill_listing", "deferred_tools_delta", "agent_listing_delta"})
# Kinds whose text the log does not hold (Claude Code fills in its own template), or that the
# model never sees: known, so not counted as unknown, but nothing to read.
TEXTLESS = frozenset({
    "plan_mode", "plan_mode_reentry", "plan_mode_exit", "auto_mode", "auto_mode_exit", "plan_file_reference",
    "compact_file_reference", "opened_file_in_ide", "already_read_file", "directory", "command_permissions",
    "hook_cancelled", "hook_non_blocking_error", "hook_error_during_execution", "hook_stopped_continuation",
    "hook_system_message", "hook_permission_decision", "async_hook_response", "total_tokens_reminder",
    "token_usage", "output_token_usage", "budget_usd", "max_turns_reached", "structured_output", "task_status",
    "agent_mention", "ultra_effort_enter", "ultra_effort_exit", "goal_status", "read_truncation_notice",
})
# Hook events whose plain stdout Claude Code adds to the context (the others only show it to the user).
CONTEXT_HOOK_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})


class Reading:
    """What one attachment record holds: its blocks, and whether its kind is known.

    ``hook_context``: for a hook's additional context, (the call or event it answers, the text), so
    that the same context written twice (as a ``hook_success`` stdout and as a
    ``hook_additional_context``, as some versions do) is counted once.
    """

    __slots__ = ("blocks", "hook_context", "kind", "known", "snapshot")

    def __init__(self, kind: str, blocks: list[Block], known: bool = True, snapshot: bool = False) -> None:
        self.kind, self.blocks, self.known, self.snapshot = kind, blocks, known, snapshot
        self.hook_context: tuple[str, str] | None = None


def read_attachment(record: dict) -> Reading:
    attachment = mapping(record.get("attachment"))
    kind = _str(attachment.get("type"))
    if kind == "prompt_snapshot":
        return Reading(kind, _prompt_snapshot(attachment), snapshot=True)
    category = TOOLS if kind in LISTINGS else USER if kind == "queued_command" else INJECTED
    rendered = [_str(r.get("content")) for r in listed(record.get("rendered")) if isinstance(r, dict)]
    if any(rendered):
        return Reading(kind, [Block(category, text) for text in rendered if text])
    if kind in ("hook_success", "hook_additional_context"):
        reading = Reading(kind, _hook_success(attachment) if kind == "hook_success" else _hook_additional_context(attachment))
        context = _hook_context_text(attachment) if kind == "hook_success" else _join(attachment.get("content"))
        if reading.blocks and context:
            reading.hook_context = (_str(attachment.get("toolUseID")) or _str(attachment.get("hookEvent")), context)
        return reading
    reader = READERS.get(kind)
    if reader is not None:
        return Reading(kind, reader(attachment))
    if kind in TEXTLESS:
        return Reading(kind, [])
    # An unknown kind: its string content (older records) is still what the model was sent.
    content = _str(attachment.get("content"))
    return Reading(kind, [Block(category, content)] if content else [], known=False)


# --- kinds -------------------------------------------------------------------------
# How Claude Code frames a hook's context for the model: "SessionStart:compact hook additional context: …".
HOOK_CONTEXT_FRAME = " hook additional context: "


def _hook_additional_context(a: dict) -> list[Block]:
    text = _join(a.get("content"))
    if not text:
        return []
    name = _str(a.get("hookName"))
    return [Block(INJECTED, f"{name}{HOOK_CONTEXT_FRAME}{text}" if name else text)]


def _hook_output(a: dict) -> dict | None:
    """A hook's stdout when it is a JSON object (its structured output), else None."""
    stdout = _str(a.get("stdout"))
    try:
        output = loads(stdout.encode("utf-8", "surrogatepass")) if stdout.lstrip().startswith("{") else None
    except DecodeError:
        return None
    return output if isinstance(output, dict) else None


def _hook_context_text(a: dict) -> str:
    output = _hook_output(a)
    return _str(mapping(output.get("hookSpecificOutput")).get("additionalContext")) if output is not None else ""


def _hook_success(a: dict) -> list[Block]:
    stdout = _str(a.get("stdout"))
    if _hook_output(a) is not None:
        context = _hook_context_text(a)
        return [Block(INJECTED, context)] if context else []
    if a.get("hookEvent") in CONTEXT_HOOK_EVENTS:
        text = _str(a.get("content")) or stdout
        return [Block(INJECTED, text)] if text.strip() else []
    return []


def _hook_blocking_error(a: dict) -> list[Block]:
    error = mapping(a.get("blockingError"))
    text = _str(error.get("blockingError"))
    name = _str(a.get("hookName")) or "hook"
    return [Block(INJECTED, f"{name} blocking error from command {_str(error.get('command'))}: {text}")] if text else []


def _file(a: dict) -> list[Block]:
    content = mapping(a.get("content"))
    file = mapping(content.get("file"))
    if content.get("type") == "image":
        return [Block(IMAGE, "")]
    text = _str(file.get("content"))
    if text:
        return [Block(INJECTED, text)]
    if "cells" in file:  # a notebook: its cells as the model gets them
        return [Block(INJECTED, json_text(file["cells"]))]
    return []


def _nested_memory(a: dict) -> list[Block]:
    content = a.get("content")
    text = _str(content.get("content")) if isinstance(content, dict) else _str(content)
    return [Block(INJECTED, text)] if text else []


def _instructions(a: dict) -> list[Block]:
    texts = [_str(f.get("content")) for f in listed(a.get("files")) if isinstance(f, dict)]
    return [Block(INJECTED, text) for text in texts if text]


def _list_items(a: dict) -> list[Block]:
    # todo_reminder / task_reminder: the list itself, which the reminder quotes as JSON.
    items = listed(a.get("content"))
    return [Block(INJECTED, json_text(items))] if items else []


def _lines(field: str, category: str) -> Callable[[dict], list[Block]]:
    def read(a: dict) -> list[Block]:
        text = _join(a.get(field), "\n\n" if field == "addedBlocks" else "\n")
        return [Block(category, text)] if text else []

    return read


def _text_field(*fields: str, category: str = INJECTED) -> Callable[[dict], list[Block]]:
    def read(a: dict) -> list[Block]:
        for field in fields:
            text = _str(a.get(field))
            if text:
                return [Block(category, text)]
        return []

    return read


def _queued_command(a: dict) -> list[Block]:
    prompt = a.get("prompt", a.get("content"))
    if isinstance(prompt, list):
        blocks, _unknown = blocks_from_anthropic(prompt, "user")
        return blocks
    text = _str(prompt)
    return [Block(USER, text)] if text else []


def _invoked_skills(a: dict) -> list[Block]:
    texts = [_str(s.get("content")) for s in listed(a.get("skills")) if isinstance(s, dict)]
    return [Block(INJECTED, text) for text in texts if text]


def _diagnostics(a: dict) -> list[Block]:
    files = listed(a.get("files"))
    return [Block(INJECTED, json_text(files))] if files else []


def _prompt_snapshot(a: dict) -> list[Block]:
    blocks = []
    prefix = _str(a.get("cliPrefix"))
    if prefix:
        blocks.append(Block(SYSTEM, prefix))
    prompt = a.get("systemPrompt")
    for part in prompt if isinstance(prompt, list) else [prompt]:
        text = _str(part.get("text")) if isinstance(part, dict) else _str(part)
        if text:
            blocks.append(Block(SYSTEM, text))
    for tool in listed(a.get("tools")):
        if isinstance(tool, dict):
            blocks.append(Block(TOOLS, json_text(tool), tool_name=_str(tool.get("name")) or None))
    return blocks


def _join(value: Any, separator: str = "\n") -> str:
    if isinstance(value, str):
        return value
    return separator.join(v for v in listed(value) if isinstance(v, str) and v)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


READERS: dict[str, Callable[[dict], list[Block]]] = {
    "hook_blocking_error": _hook_blocking_error,
    "file": _file,
    "nested_memory": _nested_memory,
    "instructions": _instructions,
    "todo_reminder": _list_items,
    "task_reminder": _list_items,
    "mcp_instructions_delta": _lines("addedBlocks", INJECTED),
    "deferred_tools_delta": _lines("addedLines", TOOLS),
    "agent_listing_delta": _lines("addedLines", TOOLS),
    "skill_listing": _text_field("content", category=TOOLS),
    "queued_command": _queued_command,
    "invoked_skills": _invoked_skills,
    "edited_text_file": _text_field("snippet", "content"),
    "selected_lines_in_ide": _text_field("content"),
    "critical_system_reminder": _text_field("content"),
    "diagnostics": _diagnostics,
    "date_change": _text_field("newDate"),
}
