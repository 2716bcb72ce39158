"""Google ADK sessions: the `Session` JSON (`adk api_server`), camelCase or snake_case.

Events carry `content.parts` — text, `function_call`, `function_response`,
`thought` text — and the model's `usage_metadata` (ground truth:
`prompt_token_count`). A compaction is an *appended* event whose
`actions.compaction` names a time range (`start_timestamp`..`end_timestamp`)
and holds the summary (`compacted_content`); when the next request is built,
the events in that range are replaced by the summary. Ranges inside a later
one are ignored; overlapping sliding windows keep both summaries.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ctxtop.parsers.base import DocumentParser
from ctxtop.parsers.content import genai_image
from ctxtop.parsers.jsonl import json_text
from ctxtop.parsers.model import (
    ASSISTANT,
    REASONING,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    Block,
    Compaction,
    Usage,
)
from ctxtop.parsers.numbers import number


def _get(mapping: Any, snake: str) -> Any:
    """A field by its snake_case name, or the camelCase alias Pydantic dumps by."""
    if not isinstance(mapping, dict):
        return None
    if snake in mapping:
        return mapping[snake]
    head, *rest = snake.split("_")
    return mapping.get(head + "".join(word.capitalize() for word in rest))


def looks_like(document: Any) -> bool:
    if not isinstance(document, dict) or not isinstance(document.get("events"), list):
        return False
    events = [e for e in document["events"][:5] if isinstance(e, dict)]
    return bool(_get(document, "app_name")) or any(_get(e, "invocation_id") and "author" in e for e in events)


class AdkSessionParser(DocumentParser):
    name = "adk"
    description = "Google ADK session JSON (events with content parts and compaction actions)"
    locations = ("GET /apps/<app>/users/<user>/sessions/<id> from `adk api_server` / `adk web`",)

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        if not looks_like(document):
            self.malformed(1, "not an ADK session (no events)")
            return
        self.meta.session_id = document.get("id") if isinstance(document.get("id"), str) else None
        ranges: list[tuple[float, float, str]] = []  # compactions so far: (start, end, uid)
        times: dict[str, float] = {}
        for position, event in enumerate(document["events"]):
            if not isinstance(event, dict):
                self.malformed(0, f"event {position + 1} is not an object")
                continue
            uid = str(event.get("id") or f"event-{position}")
            timestamp = event.get("timestamp")
            stamp = timestamp if isinstance(timestamp, (int, float)) else float(position)
            compaction = _get(_get(event, "actions"), "compaction")
            if isinstance(compaction, dict):
                self._compaction(compaction, uid, stamp, ranges, times, _iso(timestamp))
                continue
            blocks = self._blocks(event)
            if not blocks:
                self.diagnostics.skipped_records += 1
                continue
            times[uid] = stamp
            role = "user" if event.get("author") == "user" else "assistant"
            usage = _usage(event)
            model = _get(event, "model_version")
            self.add_entry(role, blocks, 0, 0, timestamp=_iso(timestamp), model=model if isinstance(model, str) else None,
                           usage=usage, uid=uid)

    def _blocks(self, event: dict) -> list[Block]:
        content = event.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        user = event.get("author") == "user"
        blocks = []
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            call, response = _get(part, "function_call"), _get(part, "function_response")
            if isinstance(call, dict):
                blocks.append(Block(TOOL_CALL, json_text(call.get("args", {})), tool_name=call.get("name"), tool_id=call.get("id") or call.get("name")))
            elif isinstance(response, dict):
                blocks.append(Block(TOOL_RESULT, json_text(response.get("response")), tool_name=response.get("name"),
                                    tool_id=response.get("id") or response.get("name")))
            elif isinstance(part.get("text"), str):
                category = REASONING if part.get("thought") else (USER if user else ASSISTANT)
                blocks.append(Block(category, part["text"]))
            elif (image := genai_image(part)) is not None:
                blocks.append(image)
        return blocks

    def _compaction(self, compaction: dict, uid: str, stamp: float, ranges: list, times: dict[str, float], shown: str | None) -> None:
        start, end = _get(compaction, "start_timestamp"), _get(compaction, "end_timestamp")
        if not isinstance(start, (int, float)) or not isinstance(end, (int, float)):
            self.malformed(0, "a compaction without its time range")
            return
        summary = _get(compaction, "compacted_content")
        parts = summary.get("parts") if isinstance(summary, dict) else None
        text = "\n".join(p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str))
        ranges.append((float(start), float(end), uid))
        # What the next request holds: earlier summaries not inside another range, and the raw events
        # outside every range, in time order (a summary sits at its range's end).
        kept_ranges = [r for r in ranges if not any(o is not r and o[0] <= r[0] and r[1] <= o[1] for o in ranges)]
        covered = lambda t: any(a <= t <= b for a, b, _ in kept_ranges)  # noqa: E731
        order = [(t, u) for u, t in times.items() if not covered(t)]
        order += [(b, u) for a, b, u in kept_ranges if u != uid]
        preserved = tuple(u for _, u in sorted(order))
        times[uid] = float(end)
        self.add_entry("assistant", [Block(SUMMARY, text)], 0, 0, timestamp=shown, uid=uid,
                       compaction=Compaction("adk_compaction", trigger=None, preserved_ids=preserved))


def _iso(timestamp: Any) -> str | None:
    """An event's time (epoch seconds, as ADK writes it) as the other formats give theirs: ISO 8601 in UTC. None for an
    event without one (its position orders it, but is no time) or one no date holds."""
    if not isinstance(timestamp, (int, float)) or isinstance(timestamp, bool):
        return None
    try:
        moment = datetime.fromtimestamp(timestamp, timezone.utc)
    except (OverflowError, OSError, ValueError):  # NaN, or past year 9999
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _usage(event: dict) -> Usage | None:
    usage = _get(event, "usage_metadata")
    prompt = number(_get(usage, "prompt_token_count"))  # checked by Parser.checked_usage, as every usage
    if prompt is not None:
        return Usage(prompt, number(_get(usage, "candidates_token_count")) or 0,
                     reasoning_tokens=number(_get(usage, "thoughts_token_count")))
    return None
