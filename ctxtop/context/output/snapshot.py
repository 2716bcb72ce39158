"""Breakdown snapshots: the stable JSON schema of `ctxtop export`, and its Markdown."""

from __future__ import annotations

from typing import Any

from ctxtop.context.audit.alerts import Alert
from ctxtop.context.audit.run import Audit, run_audit
from ctxtop.context.rules.constraints import Constraint, WindowText
from ctxtop.context.sanitize import clean_json, one_line
from ctxtop.context.strategies import preview_all
from ctxtop.context.strategies.report import preview_dict, session_frame
from ctxtop.context.window.accounting import text_tokens
from ctxtop.context.window.harness import INFERRED
from ctxtop.context.window.harness import split_unexplained as harness_split
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.subagents import Subagent
from ctxtop.context.window.tool_totals import as_rows, window_tool_totals
from ctxtop.parsers.model import CATEGORIES, UNATTRIBUTED

SCHEMA = "ctxtop.snapshot/1"
# The breakdown's rows, in order: the counted categories, then the two parts of what the log
# reports beyond them (inferred, and the rest).
BREAKDOWN_ROWS: tuple[str, ...] = (*CATEGORIES[:-1], INFERRED, UNATTRIBUTED)


def build_snapshot(
    session: Session,
    at: int | None = None,
    constraints: list[Constraint] | None = None,
    audit: Audit | None = None,
    *,
    strategies: list[str] | None = None,
    budget: int | None = None,
    window: Window | None = None,
    window_text: WindowText | None = None,
    alerts: list[Alert] | None = None,
    session_tools: bool = False,
) -> dict[str, Any]:
    """The snapshot of ``session`` after message ``at`` (the latest when None).

    ``constraints`` are checked in the window at ``at`` and across every
    compaction; pass a ready ``audit`` of the same constraints to reuse it.
    With ``strategies`` (specs; an empty list means all of them at their
    defaults), the snapshot also holds what each would do to this window.
    Pass the ``window`` at ``at`` (and its ``window_text``) when they are already built, and the
    ``alerts`` to show when a Tracker has settled them (else every alert of the audit up to ``at``).
    ``session_tools``: also the per-tool totals of everything logged up to ``at`` (a pass over the
    history, so not for every cursor move).
    """
    constraints = constraints or []
    audit = audit or run_audit(session, constraints)
    message = session.clamp(at)
    window = window if window is not None else session.window_at(message)
    reported = session.reported_at(message)
    estimated = window.estimated_tokens
    # False for every window an export or a view shows; True for a first paint of a big tail
    # (window.tail_first), whose counts are estimates until the history is read.
    counts_estimated = session.window_rough(window)
    limit, limit_source = session.limit()
    diagnostics = session.parser.diagnostics
    entry = session.entries[message - 1] if message else None
    snapshot: dict[str, Any] = {
        "schema": SCHEMA,
        "source": {
            "path": session.path,
            "format": session.format,
            "session_id": session.parser.meta.session_id,
            "model": model_shown(session.model),
            "messages": session.message_count,
            "diagnostics": {
                "malformed_lines": diagnostics.malformed_lines,
                "unknown_records": diagnostics.unknown_records,
                "skipped_records": diagnostics.skipped_records,
                "torn_last_line": diagnostics.torn_last_line,
                "invalid_numbers": diagnostics.invalid_numbers,
                "unknown_kinds": dict(diagnostics.unknown_kinds),
            },
        },
        "at": {"message": message, "messages": session.message_count, "timestamp": entry.timestamp if entry else None},
        # The window's counts are exact; those of the history up to here (the session's per-tool totals, the
        # timeline) may be estimates from characters per token, calibrated on this session.
        "history_estimated": session.rough_before(message),
        "window": {
            "estimated_tokens": estimated,
            "reported_tokens": reported,
            # What the front ends show as the window's size: reported_tokens, else estimated_tokens and the inferred
            # system prompt and tools (categories' inferred_system_tools).
            "used_tokens": window_use(window, reported),
            "limit": limit,
            "limit_source": limit_source,
            "encoding": session.counter.encoding_name,
            "counts_estimated": counts_estimated,
            "categories": _categories(window, reported, counts_estimated, session.parser.meta.summarizer),
        },
        "tool_usage": {"window": as_rows(window_tool_totals(window))},
        "subagents": _subagents(session),
        # Normalizing every block's text is not free: only when there are constraints to look for.
        "constraints": _constraints(constraints, window_text or WindowText(window)) if constraints else [],
        "compactions": [_compaction(c) for c in audit.compactions],
        "alerts": [a.as_dict() for a in (alerts if alerts is not None else audit.alerts) if a.message <= message],
    }
    if session_tools:
        snapshot["tool_usage"]["session"] = as_rows(session.tools.totals(session.accounting, message))
    if strategies is not None:
        frame = session_frame(session, message, constraints, budget, window, window_text)
        snapshot["budget"] = frame.budget
        snapshot["strategies"] = [preview_dict(frame, p) for p in preview_all(frame, strategies)]
    return snapshot


def model_shown(name: str | None) -> str | None:
    """A model's name as the outputs give it: from the log, so without control characters, and of any length there."""
    return one_line(name, 120) if name is not None else None


def split_unexplained(window: Window, reported: int | None) -> tuple[int, int]:
    """What the log reports beyond ``window``'s counted text: (inferred system + tools, unattributed rest)."""
    added = window.added_since_call() if reported is not None and reported == window.reported else None
    return harness_split(window.estimated_tokens, window.harness, reported, added)


def window_use(window: Window, reported: int | None) -> int:
    """The window's size as shown: the prompt size the log reports, else the counted text and the
    inferred system prompt and tools (an estimate, then). Messages since the last call (a tool's result, the next
    question) are added to what it reported: an estimate too, the rows of the breakdown adding up to it."""
    return window.estimated_tokens + sum(split_unexplained(window, reported))


def _categories(window: Window, reported: int | None, counts_estimated: bool = False, summarizer: bool = False) -> dict[str, dict[str, Any]]:
    """Tokens and blocks of each category; what the log reports beyond the counted text is split
    into the harness prefix inferred from a model call and the rest, both marked as estimates (and
    every row, when the window's counts are: ``counts_estimated``). In a summarization call's log
    (``summarizer``) the inferred part holds the conversation it summarized, sent and not logged."""
    rows: dict[str, dict[str, Any]] = {name: {"tokens": t.tokens, "blocks": t.blocks} for name, t in window.totals.items()}
    if counts_estimated:
        for row in rows.values():
            row["estimated"] = True
    inferred, rest = split_unexplained(window, reported)
    prefix = window.harness
    rows[UNATTRIBUTED] = {"tokens": rest, "blocks": 0, "estimated": True}
    label = prefix.label if prefix is not None else "system + tools (inferred)"
    if summarizer:
        label = f"the conversation summarized + {label}"
    rows[INFERRED] = {"tokens": inferred, "blocks": 0, "estimated": True, "label": one_line(label, 160), "summarized_conversation": summarizer,
                      "inferred_from": {"message": prefix.message, "model": model_shown(prefix.model), "reason": prefix.reason,
                                        "tokens": prefix.tokens} if prefix is not None else None}
    return {name: rows[name] for name in BREAKDOWN_ROWS}


def _subagents(session: Session) -> dict[str, Any]:
    """Sidechain records in the log itself plus the sub-agent transcripts kept beside it, and each
    of those with its own window."""
    sidechain = session.parser.sidechain
    scan = session.subagents
    files = scan.totals if scan is not None else None
    listed = {
        "messages": sidechain.messages + (files.messages if files else 0),
        "blocks": len(sidechain.blocks) + (files.blocks if files else 0),
        "tokens": sum(text_tokens(session.counter, b) for b in sidechain.blocks) + (files.tokens if files else 0),
        "files": files.files if files else 0,
        "agents": [subagent_row(agent) for agent in scan.agents] if scan is not None else [],
    }
    if scan is not None and scan.skipped:  # (a subagents folder linked out of the session's, or of too many entries)
        listed["skipped"] = one_line(scan.skipped)
    return listed


def subagent_row(agent: Subagent) -> dict[str, Any]:
    """One sub-agent as the snapshot lists it (log text cleaned: it reaches terminals)."""
    return {
        "id": one_line(agent.id, 80),
        "kind": one_line(agent.kind, 60),
        "description": one_line(agent.description, 200) if agent.description else None,
        "path": str(agent.path),
        "model": model_shown(agent.model),
        "messages": agent.totals.messages,
        "tokens": agent.totals.tokens,
        "window": {"reported_tokens": agent.reported_tokens, "estimated_tokens": agent.estimated_tokens,
                   "limit": agent.limit, "percent": round(100 * agent.window_tokens / agent.limit, 1) if agent.limit else None},
    }


def _constraints(constraints: list[Constraint], text: WindowText) -> list[dict[str, Any]]:
    rows = []
    for constraint in constraints:
        status = text.status(constraint)
        rows.append(
            {
                "id": constraint.id,
                "text": constraint.text,
                "source": constraint.source,
                "cue": constraint.cue,
                "origin": constraint.origin,
                "status": status.status,
                "first_stated": constraint.first_stated,
                "found_in": status.found_in,
                "missing_facts": status.missing_facts,
            }
        )
    return rows


def _compaction(audit) -> dict[str, Any]:
    event = audit.event
    return {
        "message": event.message,
        "kind": event.kind,
        "trigger": event.trigger,
        "pre_tokens": event.pre_tokens,
        "post_tokens": event.post_tokens,
        "constraints": {cid: {"before": b.status, "after": a.status} for cid, (b, a) in audit.constraints.items()},
        "lost_items": audit.lost_items,
        "drift": audit.drift,
        # Evidence and claims quote the log: no control sequence reaches a terminal through the JSON either.
        "forensics": clean_json(audit.forensics),
    }

