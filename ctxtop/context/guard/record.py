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
from ctxtop.context.rules.constraints import KEPT, Constraint, WindowText, make_constraint

RECORD_VERSION = 1
RECORD_FRESH_SECONDS = 600  # a compaction's summary takes a minute or so: a record this recent is this compaction's
FROM_RECORD = "precompact"  # the source of a rule known only from the record
RECORDED_FACT_KINDS = ("paths", "identifiers", "numbers")
MAX_RECORDED_FACTS = 500  # of each kind: enough to name what was lost, bounded on a huge window


def record_window(known: Known, session_id: str, rules: list[Constraint], window: WindowText) -> dict[str, Any] | None:
    """Record the window's rules and facts for ``known``'s transcript; returns the record, or None when it could
    not be written (ctxtop's cache directory is not writable)."""
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
    return record if write_json(known_path(known.path, "precompact"), record) else None


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
    facts, compactions, rules, recorded_at = record.get("facts"), record.get("compactions"), record.get("rules"), record.get("recorded_at")
    if not (isinstance(facts, dict) and isinstance(compactions, int) and isinstance(rules, list) and isinstance(recorded_at, (int, float))):
        return None
    # This compaction's record: taken before the last compaction record the transcript holds, or — when the
    # transcript was rewritten, and counts no longer line up — taken moments ago.
    if compactions >= known.compactions and not 0 <= time.time() - recorded_at <= RECORD_FRESH_SECONDS:
        return None
    record["facts"] = {kind: [str(f) for f in facts.get(kind, []) if isinstance(f, str)] for kind in RECORDED_FACT_KINDS}
    record["rules"] = [r for r in rules if isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("text"), str)
                       and isinstance(r.get("status"), str)]
    return record


def recorded_rules(record: dict[str, Any], rules: list[Constraint]) -> list[Constraint]:
    """The rules the window held before the compaction that are no longer among ``rules`` (the transcript was
    rewritten, a pins file changed): still to be compared with the window after."""
    known = {rule.normalized for rule in rules}
    kept = [make_constraint(r["text"], FROM_RECORD, id=r["id"]) for r in record["rules"] if r["status"] == KEPT]
    return [rule for rule in kept if rule.normalized not in known]
