"""opencode storage: sessions, messages and parts as JSON (the `storage/` tree, or rows of `opencode.db`).

The newest session is shown. User messages hold `text` and `file` parts; an
assistant message holds `text`, `reasoning` and `tool` parts (input, and the
output in `state`), with `tokens` as the ground truth (input + cache reads and
writes is the prompt). A user message with a `compaction` part starts a
compaction; the assistant message after it (`summary: true`) is the summary,
and the history before it is no longer sent. A tool part whose
`state.time.compacted` is set was pruned: the model sees a placeholder.
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.content import data_url_image_size, listed, mapping
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
    Compaction,
    Usage,
)
from ctxtop.parsers.numbers import number, summed
from ctxtop.parsers.tree import Tree, TreeParser

PRUNED = "[Old tool result content cleared]"
# File parts opencode does not send: their text came as synthetic text parts when the message was written.
FILES_SENT_AS_TEXT = frozenset({"text/plain", "application/x-directory"})


def looks_like(files: Tree) -> bool:
    return any(name.startswith("session/") for name in files) and any(name.startswith("message/") for name in files)


class OpencodeParser(TreeParser):
    name = "opencode"
    description = "opencode storage (storage/ JSON tree, or opencode.db), newest session"
    locations = ("~/.local/share/opencode/storage/", "~/.local/share/opencode/opencode.db (read-only)")
    database_magic = b"SQLite format 3\x00"

    def parse_tree(self, files: Tree) -> None:
        sessions = [s for name in files if name.startswith("session/") and isinstance(s := self.load(files, name), dict)]
        if not sessions:
            self.malformed(0, "no opencode session")
            return
        session = max(sessions, key=lambda s: (_time(s, "updated"), str(s.get("id"))))
        sid = session.get("id")
        self.meta.session_id = sid if isinstance(sid, str) else None
        self.meta.title = session.get("title") if isinstance(session.get("title"), str) else None
        messages = [m for name in files if name.startswith(f"message/{sid}/") and isinstance(m := self.load(files, name), dict)]
        messages.sort(key=lambda m: (_time(m, "created"), str(m.get("id"))))
        parts_of: dict[str, list[dict]] = {}
        for name in files:
            if name.startswith("part/"):
                part = self.load(files, name)
                if isinstance(part, dict) and isinstance(part.get("messageID"), str):
                    parts_of.setdefault(part["messageID"], []).append(part)
        pending: Compaction | None = None
        for message in messages:
            parts = sorted(parts_of.get(str(message.get("id")), []), key=lambda p: str(p.get("id")))
            role = message.get("role")
            uid = message.get("id") if isinstance(message.get("id"), str) else None  # (an entry's uid is a string or none)
            if role == "user" and any(p.get("type") == "compaction" for p in parts):
                auto = next((p.get("auto") for p in parts if p.get("type") == "compaction"), None)
                pending = Compaction("opencode_compaction", trigger="auto" if auto else "manual", summary_follows=True)
                self.add_entry("system", [], 0, 0, uid=uid, compaction=pending)
                continue
            blocks = _blocks(parts, role)
            if role == "assistant" and message.get("summary") is True:
                blocks = [Block(SUMMARY, b.text) if b.category == ASSISTANT else b for b in blocks]
            # A summary's usage is the summarizer's call over the old history, not the window's size.
            # Checked here, not only by add_entry: the prompt size may become the pending compaction's post_tokens.
            usage = self.checked_usage(_usage(message)) if role == "assistant" and message.get("summary") is not True else None
            if pending is not None and usage is not None and pending.post_tokens is None and not message.get("summary"):
                pending.post_tokens = usage.prompt_tokens
            model = message.get("modelID") if isinstance(message.get("modelID"), str) else None
            if model:
                self.meta.model = model
            if blocks:
                self.add_entry(role if role in ("user", "assistant") else "assistant", blocks, 0, 0, uid=uid,
                               usage=usage, model=model)


def _time(record: dict, name: str) -> int | float:
    """A session's or message's ``time.<name>`` (milliseconds), what they are ordered by; 0 when it is missing or no number."""
    value = mapping(record.get("time")).get(name)
    return value if isinstance(value, (int, float)) else 0


def _blocks(parts: list[dict], role: Any) -> list[Block]:
    blocks = []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str) and part.get("ignored") is not True:  # ignored: shown, not sent
            category = (INJECTED if part.get("synthetic") else USER) if role == "user" else ASSISTANT
            blocks.append(Block(category, part["text"]))
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            blocks.append(Block(REASONING, part["text"]))
        elif kind == "file":
            blocks.extend(_file_blocks(part))
        elif kind == "tool":
            state = mapping(part.get("state"))
            name, call = part.get("tool"), part.get("callID")
            blocks.append(Block(TOOL_CALL, json_text(state.get("input", {})), tool_name=name, tool_id=call))
            if state.get("status") in ("completed", "error"):
                pruned = isinstance(state.get("time"), dict) and state["time"].get("compacted")
                output = PRUNED if pruned else str(state.get("output") or state.get("error") or "")
                blocks.append(Block(TOOL_RESULT, output, tool_name=name, tool_id=call, is_error=state.get("status") == "error"))
                if not pruned:  # files a tool read (an image): sent with its result
                    for attachment in listed(state.get("attachments")):
                        blocks.extend(_file_blocks(mapping(attachment), tool_name=name, tool_id=call))
    return blocks


def _file_blocks(part: dict, tool_name: Any = None, tool_id: Any = None) -> list[Block]:
    """What the model is sent for a file part: an image is an image; a text file or a folder is not sent
    (opencode reads it into synthetic text parts of the same message, counted as those); another file by its name."""
    mime = part.get("mime")
    mime = mime if isinstance(mime, str) else ""
    if mime in FILES_SENT_AS_TEXT:
        return []
    url = part.get("url")
    if mime.startswith("image/"):
        return [Block(IMAGE, "", tool_name=tool_name, tool_id=tool_id, image_size=data_url_image_size(url))]
    return [Block(INJECTED, str(part.get("filename") or url or ""), tool_name=tool_name, tool_id=tool_id)]


def _usage(message: dict) -> Usage | None:
    tokens = message.get("tokens")
    # Numbers are handed on as read (Parser.checked_usage keeps the counts and counts the rest).
    if not isinstance(tokens, dict) or number(tokens.get("input")) is None:
        return None
    cache = mapping(tokens.get("cache"))
    prompt = summed(tokens["input"], cache.get("read"), cache.get("write"))
    return Usage(prompt, number(tokens.get("output")) or 0, reasoning_tokens=number(tokens.get("reasoning")))
