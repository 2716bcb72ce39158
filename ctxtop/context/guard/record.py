"""PreCompact: a record of what the window holds just before a compaction (the rules' status, the facts),
so the SessionStart that follows compares against it even if the transcript is rewritten meanwhile.
Kept in ctxtop's cache directory, never beside the transcript."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from ctxtop.context.audit.lost import fact_candidates
from ctxtop.context.guard.transcript import Known, known_path, write_json
from ctxtop.context.rules.constraints import Constraint, WindowText

RECORD_VERSION = 1
RECORDED_FACT_KINDS = ("paths", "identifiers", "numbers")
MAX_RECORDED_FACTS = 500  # of each kind: enough to name what was lost, bounded on a huge window


def record_window(known: Known, session_id: str, rules: list[Constraint], window: WindowText) -> dict[str, Any]:
    """Record the window's rules and facts for ``known``'s transcript; returns the record."""
    facts = fact_candidates(window)
    record = {
        "version": RECORD_VERSION,
        "transcript": known.path,
        "session_id": session_id,
        "recorded_at": time.time(),
        "compactions": known.compactions,  # compaction records before this one
        "rules": [{"id": r.id, "text": r.text, "status": window.status(r).status} for r in rules],
        "facts": {kind: facts[kind][:MAX_RECORDED_FACTS] for kind in RECORDED_FACT_KINDS},
    }
    write_json(known_path(known.path, "precompact"), record)
    return record


def load_record(known: Known, session_id: str) -> dict[str, Any] | None:
    """The record taken before the transcript's last compaction, if there is one (and it is usable)."""
    try:
        record = json.loads(known_path(known.path, "precompact").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION or record.get("transcript") != os.path.realpath(known.path):
        return None
    if session_id and record.get("session_id") not in ("", session_id):
        return None
    facts = record.get("facts")
    compactions = record.get("compactions")
    if not isinstance(facts, dict) or not isinstance(compactions, int) or compactions >= known.compactions:
        return None  # taken after the last compaction (or before no compaction at all): not this one's
    record["facts"] = {kind: [str(f) for f in facts.get(kind, []) if isinstance(f, str)] for kind in RECORDED_FACT_KINDS}
    return record
