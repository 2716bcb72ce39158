"""Summary compactions: a span of the history becomes one model-written summary.

A preview cannot know what the summary will say. It shows which span goes in,
what stays verbatim around it, and what the summary is assumed to cost; a
constraint that lives only in the summarized span is ``at_risk``: it survives
only if the summarizer copies it (seed 000: summaries keep "a budget" and drop
"8000").
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxtop.context.strategies.base import Strategy, summary_size
from ctxtop.context.strategies.frame import Frame
from ctxtop.context.strategies.params import INT, Param
from ctxtop.context.strategies.preview import KEPT, SUMMARIZED, Plan, Trigger
from ctxtop.parsers.model import INJECTED, SUMMARY, TOOL_CALL, USER

SUMMARY_TOKENS = 2000
# Claude Code (leaked autoCompact.ts, v2.1.88): room kept for the summary's own output, and a buffer.
CLAUDE_CODE_SUMMARY_OUTPUT = 20_000
CLAUDE_CODE_BUFFER = 13_000
CLAUDE_MD = re.compile(r"CLAUDE\.md|CLAUDE\.local\.md")
READ_TOOLS = re.compile(r"^(?:Read|read_file|view|str_replace_based_edit_tool)$")
# Codex: auto-compaction at 90% of the window unless configured lower.
CODEX_AUTO_COMPACT_SHARE = 0.9
ANTHROPIC_MIN_TRIGGER = 50_000


def _summarize_span(frame: Frame, plan: Plan, start: int, end: int, wanted: int, label: str) -> None:
    plan.span(start, end, SUMMARIZED)
    _add_summary(frame, plan, start, end, wanted, label)


def _add_summary(frame: Frame, plan: Plan, start: int, end: int, wanted: int, label: str) -> None:
    """The summary of [start, end), once the plan knows what of the span it sends again verbatim."""
    plan.add(SUMMARY, summary_size(frame, wanted, start, end, plan.history_tokens_sent(start, end)), label, start)


def _tokens_trigger(frame: Frame, threshold: int, rule: str) -> Trigger:
    return Trigger(f"{rule} ≥ {threshold:,}", frame.prompt_tokens >= threshold)


def summarize(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    threshold = params["trigger"]
    trigger = _tokens_trigger(frame, threshold, "input tokens") if threshold else Trigger("on demand", None)
    keep = params["keep_messages"]
    if len(frame.messages) <= keep:
        plan.skip(f"{len(frame.messages)} message(s): all within the newest {keep} kept verbatim")
        return trigger
    wanted = frame.message_start(len(frame.messages) - keep)
    cut = frame.safe_cut(wanted)
    if cut != wanted:
        plan.notes.append("cut moved earlier to keep a tool call with its result")
    if cut == 0:
        plan.skip("no message before the kept ones once tool pairs are kept together")
        return trigger
    _summarize_span(frame, plan, 0, cut, params["summary_tokens"], "summary")
    return trigger


def claude_code(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    effective = frame.limit - min(params["max_output_tokens"], CLAUDE_CODE_SUMMARY_OUTPUT)
    threshold = effective - CLAUDE_CODE_BUFFER
    if threshold <= 0:
        plan.notes.append(f"a {frame.limit:,}-token window is smaller than Claude Code's reserve: it would compact every turn")
    trigger = _tokens_trigger(frame, max(0, threshold), "context tokens")
    if not frame.messages:
        plan.skip("no history to compact")
        return trigger
    # Full compaction: everything is summarized, nothing kept verbatim...
    plan.span(0, len(frame.blocks), SUMMARIZED)
    # ...then CLAUDE.md is re-injected from disk and recently read files are re-attached.
    for i, block in enumerate(frame.blocks):
        if block.category == INJECTED and CLAUDE_MD.search(block.text):
            plan.point(i, KEPT)
    budget = params["files_total_tokens"]
    restored: set[str] = set()
    for i in range(len(frame.blocks) - 1, -1, -1):
        if len(restored) >= params["files"] or budget <= 0:
            break
        path = _read_path(frame, i)
        if path is None or path in restored or CLAUDE_MD.search(path):
            continue
        result = frame.result_for.get(frame.blocks[i].block.tool_id or "")
        if result is None or result < i:
            continue
        restored.add(path)
        tokens = min(frame.tokens[result], params["file_tokens"], budget)
        budget -= tokens
        plan.point(result, KEPT)
        plan.truncate(result, tokens, "head")
    if restored:
        plan.notes.append(f"re-attaches {len(restored)} recently read file(s) as last read (Claude Code re-reads them from disk)")
    _add_summary(frame, plan, 0, len(frame.blocks), params["summary_tokens"], "compact summary")
    return trigger


def _read_path(frame: Frame, i: int) -> str | None:
    block = frame.blocks[i].block
    if block.category != TOOL_CALL or not READ_TOOLS.match(block.tool_name or ""):
        return None
    try:
        data = json.loads(block.text)
    except (ValueError, RecursionError):
        return None
    path = data.get("file_path") or data.get("path") if isinstance(data, dict) else None
    return path if isinstance(path, str) else None


def codex(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    configured = params["auto_compact_token_limit"]
    limit = int(frame.limit * CODEX_AUTO_COMPACT_SHARE)
    trigger = _tokens_trigger(frame, min(configured, limit) if configured else limit, "total usage tokens")
    if not frame.messages:
        plan.skip("no history to compact")
        return trigger
    plan.span(0, len(frame.blocks), SUMMARIZED)
    # The initial context (instructions, AGENTS.md, environment) is rebuilt as it was.
    first_user = next((m.start for m in frame.messages if m.first_category == USER), len(frame.blocks))
    for i in range(first_user):
        if frame.categories[i] == INJECTED:
            plan.point(i, KEPT)
    # Then the newest real user messages, up to the budget; the oldest kept one may be truncated.
    budget = params["user_message_tokens"]
    for i in range(len(frame.blocks) - 1, first_user - 1, -1):
        if budget <= 0:
            break
        if frame.categories[i] != USER:
            continue
        tokens = min(frame.tokens[i], budget)
        budget -= tokens
        plan.point(i, KEPT)
        plan.truncate(i, tokens, "head")
    _add_summary(frame, plan, 0, len(frame.blocks), params["summary_tokens"], "handoff summary")
    return trigger


def anthropic_compaction(frame: Frame, params: dict[str, Any], plan: Plan) -> Trigger:
    threshold = params["trigger"]
    trigger = _tokens_trigger(frame, threshold, "input tokens")
    if not frame.messages:
        plan.skip("no messages to compact")
        return trigger
    # Everything before the compaction block is dropped from the next request; system and tools stay.
    _summarize_span(frame, plan, 0, len(frame.blocks), params["summary_tokens"], "compaction block")
    return trigger


_SUMMARY_PARAM = Param("summary_tokens", INT, SUMMARY_TOKENS, "tokens the summary is assumed to take")

STRATEGIES = (
    Strategy(
        "summarize",
        "generic summary compaction: the newest keep_messages verbatim, the rest summarized",
        (
            Param("keep_messages", INT, 6, "newest messages kept verbatim"),
            _SUMMARY_PARAM,
            Param("trigger", INT, None, "input tokens that trigger it (default: on demand)", 1),
        ),
        summarize,
        pair_safe=True,
    ),
    Strategy(
        "claude_code",
        "Claude Code auto-compact: all summarized; CLAUDE.md and up to 5 recently read files re-attached",
        (
            Param("max_output_tokens", INT, 32_000, "the model's max output tokens (the trigger reserves up to 20,000)"),
            _SUMMARY_PARAM,
            Param("files", INT, 5, "recently read files re-attached"),
            Param("file_tokens", INT, 5000, "tokens per re-attached file"),
            Param("files_total_tokens", INT, 50_000, "tokens for all re-attached files"),
        ),
        claude_code,
        pair_safe=True,
    ),
    Strategy(
        "codex",
        "Codex local compaction: initial context, newest user messages up to 20k tokens, a handoff summary",
        (
            Param("user_message_tokens", INT, 20_000, "tokens of recent user messages kept"),
            _SUMMARY_PARAM,
            Param("auto_compact_token_limit", INT, None, "model_auto_compact_token_limit (default: 90% of the window)", 1),
        ),
        codex,
        pair_safe=True,
    ),
    Strategy(
        "anthropic_compaction",
        "Anthropic compact_20260112: everything before the compaction block summarized; system kept",
        (Param("trigger", INT, 150_000, "input tokens that trigger it (at least 50,000)", ANTHROPIC_MIN_TRIGGER), _SUMMARY_PARAM),
        anthropic_compaction,
        pair_safe=True,
    ),
)
