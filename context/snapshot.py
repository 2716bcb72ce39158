"""Breakdown snapshots: the stable JSON schema of `ctxtop export`, and its Markdown."""

from __future__ import annotations

from typing import Any

from parsers.model import UNATTRIBUTED

from .accounting import text_tokens
from .session import Session

SCHEMA = "ctxtop.snapshot/1"


def build_snapshot(session: Session, at: int | None = None) -> dict[str, Any]:
    """The snapshot of ``session`` after message ``at`` (the latest when None)."""
    message = session.clamp(at)
    window = session.window_at(message)
    reported = session.reported_at(message)
    categories = window.categories()
    estimated = window.estimated_tokens
    # What the log reports beyond what we can see: system prompt and tool schemas it does not record.
    categories[UNATTRIBUTED].tokens = max(0, reported - estimated) if reported is not None else 0
    limit, limit_source = session.limit()
    diagnostics = session.parser.diagnostics
    entry = session.entries[message - 1] if message else None
    return {
        "schema": SCHEMA,
        "source": {
            "path": session.path,
            "format": session.format,
            "session_id": session.parser.meta.session_id,
            "model": session.model,
            "messages": session.message_count,
            "diagnostics": {
                "malformed_lines": diagnostics.malformed_lines,
                "unknown_records": diagnostics.unknown_records,
                "skipped_records": diagnostics.skipped_records,
                "torn_last_line": diagnostics.torn_last_line,
            },
        },
        "at": {"message": message, "messages": session.message_count, "timestamp": entry.timestamp if entry else None},
        "window": {
            "estimated_tokens": estimated,
            "reported_tokens": reported,
            "limit": limit,
            "limit_source": limit_source,
            "encoding": session.counter.encoding_name,
            "categories": {name: {"tokens": t.tokens, "blocks": t.blocks} for name, t in categories.items()},
        },
        "subagents": {
            "messages": session.parser.sidechain.messages,
            "blocks": len(session.parser.sidechain.blocks),
            "tokens": sum(text_tokens(session.counter, b) for b in session.parser.sidechain.blocks),
        },
        "compactions": [
            {
                "message": c.message,
                "kind": c.kind,
                "trigger": c.trigger,
                "pre_tokens": c.pre_tokens,
                "post_tokens": c.post_tokens,
            }
            for c in session.compactions()
        ],
    }
