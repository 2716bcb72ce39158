"""OpenHands V0 trajectories: a JSON array of events (the `save_trajectory_path` export).

Each event is an action or an observation. Actions with tool-call metadata are
tool calls (their `thought` is what the agent said), observations are tool
results, `message` actions are user or agent text. A `condensation` action
hides events from the model — by id list or by range — and may carry a summary:
it becomes a compaction whose kept events are everything not forgotten so far.
Usage comes from the model response attached to tool calls, else `llm_metrics`.
"""

from __future__ import annotations

from typing import Any

from .base import DocumentParser
from .jsonl import json_text
from .model import ASSISTANT, REASONING, SUMMARY, SYSTEM, TOOL_CALL, TOOL_RESULT, USER, Block, Compaction, Usage

# Bookkeeping events that never reach the model.
SKIPPED = {"agent_state_changed", "change_agent_state", "null", "recall", "condensation_request", "delegate", "reject"}


def looks_like(document: Any) -> bool:
    if not isinstance(document, list) or not document:
        return False
    head = [e for e in document[:10] if isinstance(e, dict)]
    return bool(head) and all(isinstance(e.get("id"), int) and ("action" in e or "observation" in e) and "source" in e for e in head)


class OpenHandsParser(DocumentParser):
    name = "openhands"
    description = "OpenHands V0 trajectory (JSON array of action/observation events)"
    locations = ("the file given to save_trajectory_path", "~/.openhands/sessions/<sid>/events/ (one event per file; not read yet)")

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        if not isinstance(document, list):
            self.malformed(1, "an OpenHands trajectory is a JSON array of events")
            return
        forgotten: set[str] = set()
        for position, event in enumerate(document):
            line = 0  # a JSON document has no lines per event
            offset = offsets[position] if offsets and position < len(offsets) else 0
            if not isinstance(event, dict) or not isinstance(event.get("id"), int):
                self.malformed(line, f"event {position + 1} is not an object with an integer id")
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
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        metadata = event.get("tool_call_metadata") if isinstance(event.get("tool_call_metadata"), dict) else {}
        tool_id = metadata.get("tool_call_id") if isinstance(metadata.get("tool_call_id"), str) else None
        if "observation" in event:
            if kind == "agent_condensation":
                return [Block(SUMMARY, _text(event.get("content") or event.get("message")))]
            text = _text(event.get("content")) or _text(event.get("message"))
            return [Block(TOOL_RESULT, text, tool_name=kind, tool_id=tool_id or _cause(event))]
        if kind == "message":
            text = _text(args.get("content")) or _text(event.get("message"))
            return [Block(USER if event.get("source") == "user" else ASSISTANT, text)] if text else None
        if kind == "system":
            return [Block(SYSTEM, _text(args.get("content")) or _text(event.get("message")))]
        if kind == "think":
            return [Block(REASONING, _text(args.get("thought")))]
        if kind == "finish":
            return [Block(ASSISTANT, _text(args.get("final_thought")) or _text(args.get("outputs")) or _text(event.get("message")))]
        blocks = []
        thought = _text(args.get("thought"))
        if thought:
            blocks.append(Block(ASSISTANT, thought))
        call = {k: v for k, v in args.items() if k not in ("thought", "translated_ipython_code", "impl_source")}
        name = metadata.get("function_name") if isinstance(metadata.get("function_name"), str) else kind
        blocks.append(Block(TOOL_CALL, json_text(call), tool_name=name, tool_id=tool_id or str(event["id"])))
        return blocks

    def _condensation(self, event: dict, forgotten: set[str], offset: int) -> None:
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        ids = args.get("forgotten_event_ids")
        if isinstance(ids, list):
            forgotten.update(str(i) for i in ids if isinstance(i, int))
        start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
        if isinstance(start, int) and isinstance(end, int):
            forgotten.update(e.uid for e in self.entries if e.uid and e.uid.isdigit() and start <= int(e.uid) <= end)
        kept = tuple(e.uid for e in self.entries if e.uid and e.uid not in forgotten and e.compaction is None)
        summary = _text(args.get("summary"))
        compaction = Compaction("condensation", trigger=None, preserved_ids=kept)
        blocks = [Block(SUMMARY, summary)] if summary else []
        self.add_entry("system", blocks, offset, 0, timestamp=event.get("timestamp"), uid=str(event["id"]), compaction=compaction)


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
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            return Usage(usage["prompt_tokens"], usage.get("completion_tokens") or 0), model
        return None, model
    metrics = event.get("llm_metrics")
    if isinstance(metrics, dict) and isinstance(metrics.get("token_usages"), list) and metrics["token_usages"]:
        last = metrics["token_usages"][-1]
        if isinstance(last, dict) and isinstance(last.get("prompt_tokens"), int):
            return Usage(last["prompt_tokens"], last.get("completion_tokens") or 0), last.get("model")
    return None, None
