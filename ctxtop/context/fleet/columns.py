"""The columns of the fleet audit's two tables, with their SQL types (DuckDB writes them to Parquet).

The README's "Audit many sessions" lists them with their meaning; a column added here is
written by ``tui/commands/fleet/tables.py`` without further change.
"""

from __future__ import annotations

# The four failure modes of seed 001's study, in the order the study reports them.
FAILURE_MODES = ("constraint_evaporation", "coordinate_loss", "decision_backtracking", "tool_chain_break")
RECOVERY_VERDICTS = ("verified", "partial", "none")

SESSION_COLUMNS: dict[str, str] = {
    "path": "VARCHAR",
    "format": "VARCHAR",
    "agent": "VARCHAR",
    "model": "VARCHAR",
    "started": "VARCHAR",
    "messages": "BIGINT",
    "compactions": "BIGINT",
    "rules": "BIGINT",
    "rules_kept_at_end": "BIGINT",
    "retention": "DOUBLE",
    "violations": "BIGINT",
    "tool_calls": "BIGINT",
    "tool_errors": "BIGINT",
    "tool_success_rate": "DOUBLE",
    "retries": "BIGINT",
    "rereads_after_compaction": "BIGINT",
    "repeated_edits": "BIGINT",
    "unsupported_claims": "BIGINT",
    "recovery_verified": "BIGINT",
    "recovery_partial": "BIGINT",
    "recovery_none": "BIGINT",
    **{mode: "BIGINT" for mode in FAILURE_MODES},
    "cache_rewrite_tokens": "BIGINT",
    "cache_rewrite_usd": "DOUBLE",
    "cost_estimated": "BOOLEAN",
    "peak_window_percent": "DOUBLE",
    "peak_window_estimated": "BOOLEAN",
    "first_finding_at": "BIGINT",
    "content_digest": "VARCHAR",
    "ctxtop_version": "VARCHAR",
}

# What ctxtop writes of its own, never a log's text: --redact leaves them whole (a digest's run of digits, "+0021530…",
# is no phone number, and a digest masked matches no other run's).
NOT_LOG_TEXT = ("content_digest", "ctxtop_version")

COMPACTION_COLUMNS: dict[str, str] = {
    "path": "VARCHAR",
    "compaction": "BIGINT",
    "message": "BIGINT",
    "kind": "VARCHAR",
    "trigger": "VARCHAR",
    "pre_tokens": "BIGINT",
    "post_tokens": "BIGINT",
    "generation": "BIGINT",
    "rules_kept": "VARCHAR[]",
    "rules_paraphrased": "VARCHAR[]",
    "rules_lost": "VARCHAR[]",
    "rules_unverifiable": "VARCHAR[]",
    "rules_dropped": "VARCHAR[]",
    "facts_lost": "BIGINT",
    "lost_facts": "VARCHAR[]",
    "failure_modes": "VARCHAR[]",
    "recovery": "VARCHAR",
    "unsupported_claims": "BIGINT",
    "rereads": "BIGINT",
    "repeated_edits": "BIGINT",
    "cache_write_tokens": "BIGINT",
    "cache_read_tokens": "BIGINT",
    "summarization_tokens": "BIGINT",
    "cost_usd": "DOUBLE",
    "cost_estimated": "BOOLEAN",
    "payback_turns": "DOUBLE",
}
