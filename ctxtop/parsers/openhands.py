"""OpenHands trajectories: a JSON array of events — V0 (the `save_trajectory_path` export), or V1
(the SDK's `kind` events, `events/event-*.json` concatenated as viewers and exports write them).

Each event is an action or an observation. Actions with tool-call metadata are
tool calls (their `thought` is what the agent said), observations are tool
results, `message` actions are user or agent text. A `condensation` action
hides events from the model — by id list or by range — and may carry a summary:
it becomes a compaction whose kept events are everything not forgotten so far,
with the summary at `summary_offset` among them. V1 events are read in the V0 shape (``from_v1``).
Usage comes from the model response attached to tool calls, else `llm_metrics`.
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.base import DocumentParser
from ctxtop.parsers.content import mapping
from ctxtop.parsers.jsonl import json_text
from ctxtop.parsers.model import (
    ASSISTANT,
    REASONING,
    SUMMARY,
    SYSTEM,
    TOOL_CALL,
    TOOL_RESULT,
    TOOLS,
    USER,
    Block,
    Compaction,
    Usage,
)
from ctxtop.parsers.numbers import number
from ctxtop.parsers.tree import Tree, TreeParser

# Bookkeeping events that never reach the model.
SKIPPED = {"agent_state_changed", "change_agent_state", "null", "recall", "condensation_request", "delegate", "reject"}


def looks_like(document: Any) -> bool:
    if not isinstance(document, list) or not document:
        return False
    head = [e for e in document[:10] if isinstance(e, dict)]
    return bool(head) and (all(isinstance(e.get("id"), int) and ("action" in e or "observation" in e) and "source" in e for e in head)
                           or all(_is_v1_event(e) for e in head))


def _is_v1_event(event: dict) -> bool:
    return isinstance(event.get("kind"), str) and isinstance(event.get("id"), str) and "source" in event


class OpenHandsParser(DocumentParser):
    name = "openhands"
    description = "OpenHands trajectory: a JSON array of V0 action/observation events or V1 (SDK) `kind` events"
    locations: tuple[str, ...] = ("the file given to save_trajectory_path",)  # (typed: the events parser below names two)

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        if not isinstance(document, list):
            self.malformed(1, "an OpenHands trajectory is a JSON array of events")
            return
        forgotten: set[str] = set()
        for position, event in enumerate(document):
            line = 0  # a JSON document has no lines per event
            offset = offsets[position] if offsets and position < len(offsets) else 0
            if isinstance(event, dict) and _is_v1_event(event):
                event = from_v1(event)
            if not isinstance(event, dict) or not isinstance(event.get("id"), (int, str)):
                self.malformed(line, f"event {position + 1} is not an object with an id")
                continue
            if event.get("action") == "condensation":
                self._condensation(event, forgotten, offset)
                continue
            blocks = self._blocks(event)
            if blocks is None:
                self.diagnostics.skipped_records += 1
                continue
            usage, model = _usage(event)
            role = "user" if event.get("source") == "user" else ("tool" if "observation" in event else "assistant")
            self.add_entry(role, blocks, offset, 0, timestamp=event.get("timestamp"), model=model, usage=usage, uid=str(event["id"]))
            if model and not self.meta.model:
                self.meta.model = model

    def _blocks(self, event: dict) -> list[Block] | None:
        kind = event.get("action") or event.get("observation")
        if not isinstance(kind, str) or kind in SKIPPED:
            return None
        args = mapping(event.get("args"))
        metadata = mapping(event.get("tool_call_metadata"))
        tool_id = metadata.get("tool_call_id") if isinstance(metadata.get("tool_call_id"), str) else None
        # The function the model called, when the event names it: a call and its result are counted under one tool
        # (the action and the observation kinds differ: str_replace_editor is answered by an "edit" observation).
        name = metadata.get("function_name") if isinstance(metadata.get("function_name"), str) else kind
        if "observation" in event:
            if kind == "agent_condensation":
                return [Block(SUMMARY, _text(event.get("content") or event.get("message")))]
            text = _text(event.get("content")) or _text(event.get("message"))
            return [Block(TOOL_RESULT, text, tool_name=name, tool_id=tool_id or _cause(event))]
        if kind == "message":
            text = _text(args.get("content")) or _text(event.get("message"))
            return [Block(USER if event.get("source") == "user" else ASSISTANT, text)] if text else None
        if kind == "system":
            blocks = [Block(SYSTEM, _text(args.get("content")) or _text(event.get("message")))]
            if args.get("tools"):  # the tool schemas sent with every request
                blocks.append(Block(TOOLS, json_text(args["tools"])))
            return blocks
        if kind == "think":
            return [Block(REASONING, _text(args.get("thought")))]
        if kind == "finish":
            return [Block(ASSISTANT, _text(args.get("final_thought")) or _text(args.get("outputs")) or _text(event.get("message")))]
        blocks = []
        thought = _text(args.get("thought"))
        if thought:
            blocks.append(Block(ASSISTANT, thought))
        call = {k: v for k, v in args.items() if k not in ("thought", "translated_ipython_code", "impl_source")}
        blocks.append(Block(TOOL_CALL, json_text(call), tool_name=name, tool_id=tool_id or str(event["id"])))
        return blocks

    def _condensation(self, event: dict, forgotten: set[str], offset: int) -> None:
        args = mapping(event.get("args"))
        ids = args.get("forgotten_event_ids")
        if isinstance(ids, list):
            forgotten.update(str(i) for i in ids if isinstance(i, (int, str)))
        start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
        if isinstance(start, int) and isinstance(end, int):
            forgotten.update(e.uid for e in self.entries if e.uid and e.uid.isdigit() and start <= int(e.uid) <= end)
        kept = tuple(e.uid for e in self.entries if e.uid and e.uid not in forgotten and e.compaction is None)
        summary = _text(args.get("summary"))
        offset_in_kept = args.get("summary_offset")
        before_summary = offset_in_kept if isinstance(offset_in_kept, int) and summary and 0 < offset_in_kept <= len(kept) else 0
        compaction = Compaction("condensation", trigger=None, preserved_ids=kept, summary_after=before_summary)
        blocks = [Block(SUMMARY, summary)] if summary else []
        self.add_entry("system", blocks, offset, 0, timestamp=event.get("timestamp"), uid=str(event["id"]), compaction=compaction)


class OpenHandsEventsParser(OpenHandsParser, TreeParser):
    """An OpenHands event directory: V0 `events/<id>.json`, or V1 (SDK) `events/event-<n>-<id>.json` with `kind`."""

    name = "openhands-events"
    description = "OpenHands event directory (V0 events/<id>.json, V1 events/event-*.json)"
    locations = ("~/.openhands/sessions/<sid>/", "~/.openhands/conversations/<id>/ (V1)")

    def parse_tree(self, files: Tree) -> None:
        events = []
        for name in sorted(files, key=_event_order):
            if not _is_event_file(name):
                continue
            event = self.load(files, name)
            if isinstance(event, dict):
                events.append(event)
        self.parse(events)


def looks_like_tree(files: Tree) -> bool:
    return any(_is_event_file(name) for name in files)


def _is_event_file(name: str) -> bool:
    """``events/<id>.json`` or ``events/event-….json`` right below the folder given: an ``events/`` further down
    (a conversation inside a folder of sessions) or a folder whose name only ends in "events" is not this session's."""
    folder, _, base = name.rpartition("/")
    return folder == "events" and base.endswith(".json") and (base[:-5].isdigit() or base.startswith("event-"))


def _event_order(name: str) -> tuple[int, str]:
    base = name.rpartition("/")[2][:-5]
    number = base if base.isdigit() else base.split("-")[1] if base.startswith("event-") and "-" in base else ""
    return (int(number) if number.isdigit() else 1 << 60, name)


def from_v1(event: dict) -> dict:
    """A V1 (SDK) event in the V0 shape the trajectory parser reads."""
    kind, uid = event.get("kind"), event.get("id")
    base = {"id": uid, "timestamp": event.get("timestamp"), "source": event.get("source") or "agent"}
    if kind == "SystemPromptEvent":
        prompt = event.get("system_prompt")
        return {**base, "action": "system", "args": {"content": _text(prompt), "tools": event.get("tools")}}
    if kind == "MessageEvent":
        message = mapping(event.get("llm_message"))
        return {**base, "action": "message", "args": {"content": _text(message.get("content"))}}
    if kind == "ActionEvent":
        action = mapping(event.get("action"))
        args = {k: v for k, v in action.items() if k != "kind"}
        args["thought"] = _text(event.get("thought"))
        # Every V1 action is a tool call, `finish` and `think` included (they get observations too):
        # not the V0 actions of those names.
        return {**base, "action": "v1_tool_call", "args": args,
                "tool_call_metadata": {"function_name": event.get("tool_name") or action.get("kind"), "tool_call_id": event.get("tool_call_id")}}
    if kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
        observation = mapping(event.get("observation"))
        content = _text(observation.get("content")) or _text(event.get("error")) or _text(event.get("rejection_reason"))
        return {**base, "observation": event.get("tool_name") or "observation", "content": content,
                "tool_call_metadata": {"function_name": event.get("tool_name"), "tool_call_id": event.get("tool_call_id")}}
    if kind == "Condensation":
        return {**base, "action": "condensation", "args": {"forgotten_event_ids": event.get("forgotten_event_ids"),
                                                           "summary": event.get("summary"), "summary_offset": event.get("summary_offset")}}
    return {**base, "action": "null"}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value if v)
    if isinstance(value, dict):
        return _text(value.get("text") or value.get("content"))
    return ""


def _cause(event: dict) -> str | None:
    return str(event["cause"]) if isinstance(event.get("cause"), int) else None


def _usage(event: dict) -> tuple[Usage | None, str | None]:
    metadata = event.get("tool_call_metadata")
    response = metadata.get("model_response") if isinstance(metadata, dict) else None
    if isinstance(response, dict) and "observation" not in event:
        usage = response.get("usage")
        model = response.get("model") if isinstance(response.get("model"), str) else None
        if isinstance(usage, dict) and number(usage.get("prompt_tokens")) is not None:  # checked by checked_usage
            return Usage(usage["prompt_tokens"], number(usage.get("completion_tokens")) or 0), model
        return None, model
    metrics = event.get("llm_metrics")
    if isinstance(metrics, dict) and isinstance(metrics.get("token_usages"), list) and metrics["token_usages"]:
        last = metrics["token_usages"][-1]
        if isinstance(last, dict) and number(last.get("prompt_tokens")) is not None:
            model = last.get("model")
            return Usage(last["prompt_tokens"], number(last.get("completion_tokens")) or 0), model if isinstance(model, str) else None
    return None, None
