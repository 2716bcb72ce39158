"""One session's fleet audit: a pure function from a log to its table rows.

It opens the log through the facade (``Tracker``) with the rules ``check --auto`` would track
(plus the pins of ``--pins``), so its numbers are those of ``check`` and the compaction
forensics, summed up: one row for the session, one per compaction. Anything that keeps a log
from being audited comes back as a reason, never as an exception: one bad file never stops a run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import timezone
from typing import Any

from ctxtop.context.audit.alerts import AlertKind
from ctxtop.context.audit.drift import call_of, input_data
from ctxtop.context.audit.events import instant
from ctxtop.context.fleet.columns import FAILURE_MODES
from ctxtop.context.output.snapshot import model_shown
from ctxtop.context.rules.constraints import KEPT, LOST, PARAPHRASED, UNVERIFIABLE, WindowText
from ctxtop.context.rules.pins import PinsError
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.sanitize import clean_json, one_line, shown_name
from ctxtop.context.store.source import SourceError
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.replay import RUN_STEP
from ctxtop.context.window.tokens import DEFAULT_ENCODING, EncodingUnavailable
from ctxtop.parsers.model import TOOL_CALL, TOOL_RESULT
from ctxtop.parsers.registry import UnknownFormat
from ctxtop.version import version

# The agent behind each log format (None: a bare API dump says nothing about the agent).
AGENTS = {
    "claude-code": "claude-code", "codex": "codex", "gemini-cli": "gemini-cli", "gemini-cli-json": "gemini-cli",
    "openhands": "openhands", "openhands-events": "openhands", "swe-agent": "swe-agent", "adk": "adk",
    "inspect-ai": "inspect-ai", "cline": "cline", "opencode": "opencode",
}
MAX_LOST_FACTS = 50  # per compaction, in its row: a sample, as the audit's own list is
UNREADABLE = (SourceError, UnknownFormat, EncodingUnavailable, PinsError, OSError, UnicodeError)


# The start of a skipped session's reason when the audit itself failed (a bug of ctxtop's, not the log's).
INTERNAL_ERROR = "internal error"
# A session's reason when this machine ran out of memory auditing it: a run with fewer jobs beside it may read it.
OUT_OF_MEMORY = "out of memory while auditing it"
# Reasons that say nothing of the log's bytes: no result of theirs is kept for the next run to reuse.
NOT_OF_THE_LOG = (INTERNAL_ERROR, OUT_OF_MEMORY)
REASON_CHARS = 300


def skip_reason(text: str) -> str:
    """Why a file is skipped, as `skipped` holds it: one line, cut as every preview is (marked "…", never inside an
    address's local part), so that --redact knows what the cut left of an address, a phone number or a key."""
    return one_line(text, REASON_CHARS)


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """What every session of a run is audited with (part of what decides whether a result can be reused)."""

    pins_file: str | None = None
    encoding: str = DEFAULT_ENCODING
    window: int | None = None
    log_format: str | None = None


@dataclass(slots=True)
class SessionAudit:
    """A session's rows, or why it has none (``skipped``)."""

    path: str  # as given: what the run knows the session by (its rows and reports show ``shown_name`` of it)
    row: dict[str, Any] | None = None
    compactions: list[dict[str, Any]] = field(default_factory=list)
    skipped: str | None = None

    def shown_as(self, path: str) -> SessionAudit:
        """The same result under another name (a copy fetched from an object store, a reused result)."""
        shown = shown_name(path)
        row = dict(self.row, path=shown) if self.row is not None else None
        return SessionAudit(path, row, [dict(c, path=shown) for c in self.compactions], self.skipped)


def audit_session(path: str, settings: AuditSettings = AuditSettings(), *, shown_path: str | None = None,
                  content_digest: str | None = None) -> SessionAudit:
    """Audit the log at ``path`` as ``check --auto`` (and ``--pins``) would; ``shown_path``: the name
    its rows carry (a URL it was fetched from), ``content_digest``: the digest its row records."""
    shown = shown_path or path
    try:
        return _audit(path, shown, settings, content_digest)
    except UNREADABLE as exc:
        reason = str(exc).removeprefix(f"{path}: ")  # the reason, without the name the table gives beside it
        return SessionAudit(shown, skipped=skip_reason(reason or type(exc).__name__))
    except RecursionError:
        return SessionAudit(shown, skipped="nested too deeply to read")
    except MemoryError:
        return SessionAudit(shown, skipped=OUT_OF_MEMORY)
    except Exception as exc:  # noqa: BLE001 - a bug on one log must not stop the other thousand
        return SessionAudit(shown, skipped=skip_reason(f"{INTERNAL_ERROR}: {type(exc).__name__}: {exc}"))
    except SystemExit as exc:
        # Something the audit called exited instead of raising. Let through, it ended the run here (jobs 1), came back
        # from a pool's worker to end it all the same, and took down a Dask worker: the sessions it held were lost too
        # (KilledWorker) and this one retried until the cluster gave up. (Not KeyboardInterrupt: Ctrl-C stops the run.)
        return SessionAudit(shown, skipped=skip_reason(f"{INTERNAL_ERROR}: SystemExit: it asked to exit ({exc.code!r})"))


def _audit(path: str, shown: str, settings: AuditSettings, content_digest: str | None) -> SessionAudit:
    request = RuleRequest((), settings.pins_file, auto=True)
    tracker = Tracker.open(path, request, format=settings.log_format, encoding=settings.encoding, window=settings.window)
    session = tracker.session
    if session.message_count == 0:
        diagnostics = session.parser.diagnostics
        return SessionAudit(shown, skipped=f"no message could be read as {session.format} ({diagnostics.malformed_lines} malformed "
                                           f"line(s), {diagnostics.unknown_records} unknown record(s))")
    counts = _scan(tracker)
    rules, audits, alerts = tracker.rules, tracker.audit.compactions, tracker.alerts()
    final = WindowText(tracker.window_at(None)) if rules else None
    kept_at_end = sum(1 for rule in rules if final is not None and rule.first_stated is not None and final.status(rule).status == KEPT)
    forensics = [c.forensics for c in audits]
    costs = [f.get("cost") or {} for f in forensics]
    usd = [c["usd"] for c in costs if c.get("usd") is not None]
    verdicts = Counter((f.get("recovery") or {}).get("verdict") for f in forensics)
    modes = Counter(mode["mode"] for f in forensics for mode in f.get("failure_modes", []))
    findings = [a.message for a in alerts if a.fails and a.message > 0]
    limit, _source = session.limit()
    peak, estimated = counts["peak_reported"], False
    if peak is None:
        peak, estimated = max((point.total for point in tracker.timeline()), default=0), True
    row: dict[str, Any] = {
        "path": shown_name(shown),
        "format": session.format,
        "agent": AGENTS.get(session.format),
        "model": model_shown(session.model),
        "started": counts["started"],
        "messages": session.message_count,
        "compactions": len(audits),
        "rules": len(rules),
        "rules_kept_at_end": kept_at_end,
        "retention": round(kept_at_end / len(rules), 6) if rules else None,
        "violations": sum(1 for a in alerts if a.kind is AlertKind.VIOLATION),
        "tool_calls": counts["tool_calls"],
        "tool_errors": counts["tool_errors"],
        "tool_success_rate": round(1 - counts["tool_errors"] / counts["tool_calls"], 6) if counts["tool_calls"] else None,
        "retries": counts["retries"],
        "rereads_after_compaction": sum(c.drift.get("rereads", 0) for c in audits),
        "repeated_edits": sum(c.drift.get("repeated_edits", 0) for c in audits),
        "unsupported_claims": sum(len(f.get("unsupported_claims", [])) for f in forensics),
        "recovery_verified": verdicts["verified"],
        "recovery_partial": verdicts["partial"],
        "recovery_none": verdicts["none"],
        **{mode: modes[mode] for mode in FAILURE_MODES},
        "cache_rewrite_tokens": sum(c.get("cache_write_tokens") or 0 for c in costs),
        "cache_rewrite_usd": round(sum(usd), 6) if usd else None,
        "cost_estimated": any(c.get("estimated") for c in costs if c.get("usd") is not None),
        "peak_window_percent": round(100 * peak / limit, 1) if limit else None,
        "peak_window_estimated": estimated,
        "first_finding_at": min(findings, default=None),
        "content_digest": content_digest,
        "ctxtop_version": version(),
    }
    return SessionAudit(shown, _clean(row), [_clean(_compaction_row(shown_name(shown), number, audit, tracker.rules))
                                            for number, audit in enumerate(audits, 1)])


def _scan(tracker: Tracker) -> dict[str, Any]:
    """One pass over the entries: tool calls and errors, identical calls repeated, the fullest
    reported prompt and when the session started."""
    entries = tracker.session.entries
    calls: Counter = Counter()
    errors = 0
    peak: int | None = None
    started: str | None = None
    for start in range(0, len(entries), RUN_STEP):  # a slice at a time: a packed store unpacks what is sliced
        for entry in entries[start : start + RUN_STEP]:
            if started is None and entry.timestamp:
                started = _in_utc(entry.timestamp)
            if entry.usage is not None and (peak is None or entry.usage.prompt_tokens > peak):
                peak = entry.usage.prompt_tokens
            for block in entry.blocks:
                if block.category == TOOL_CALL:
                    text = block.text  # (read once: a released input comes back from the log)
                    calls[call_of(entry.index, block.tool_name, text, input_data(text)).key] += 1
                elif block.category == TOOL_RESULT and block.is_error:
                    errors += 1
    return {"tool_calls": sum(calls.values()), "tool_errors": errors, "retries": sum(n - 1 for n in calls.values()),
            "peak_reported": peak, "started": started}


def _in_utc(timestamp: str) -> str:
    """``timestamp`` in UTC, to the millisecond ("2025-05-13T00:27:37.000Z"), as most agents write theirs: one
    table then sorts and compares sessions by when they started (Inspect writes the local time and its offset).
    As written when it gives no offset (its zone is unknown) or is no ISO 8601 time."""
    moment = instant(timestamp)
    if moment is None or moment.tzinfo is None:
        return timestamp
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _compaction_row(path: str, number: int, audit: Any, rules: list) -> dict[str, Any]:
    event, forensics = audit.event, audit.forensics
    cost = forensics.get("cost") or {}
    after = {cid: statuses[1].status for cid, statuses in audit.constraints.items()}
    dropped = [cid for cid, (before, later) in audit.constraints.items() if before.status == KEPT and later.status != KEPT]
    lost = [f"{kind}: {one_line(item, 200)}" for kind, items in audit.lost_items.items() for item in items]
    return {
        "path": path,
        "compaction": number,
        "message": event.message,
        "kind": event.kind,
        "trigger": event.trigger,
        "pre_tokens": event.pre_tokens,
        "post_tokens": event.post_tokens,
        "generation": forensics.get("generation"),
        "rules_kept": [cid for cid, status in after.items() if status == KEPT],
        "rules_paraphrased": [cid for cid, status in after.items() if status == PARAPHRASED],
        "rules_lost": [cid for cid, status in after.items() if status == LOST],
        "rules_unverifiable": [cid for cid, status in after.items() if status == UNVERIFIABLE],
        "rules_dropped": dropped,
        "facts_lost": len(lost),
        "lost_facts": lost[:MAX_LOST_FACTS],
        "failure_modes": [mode["mode"] for mode in forensics.get("failure_modes", [])],
        "recovery": (forensics.get("recovery") or {}).get("verdict"),
        "unsupported_claims": len(forensics.get("unsupported_claims", [])),
        "rereads": audit.drift.get("rereads", 0),
        "repeated_edits": audit.drift.get("repeated_edits", 0),
        "cache_write_tokens": cost.get("cache_write_tokens"),
        "cache_read_tokens": cost.get("cache_read_tokens"),
        "summarization_tokens": cost.get("summarization_tokens"),
        "cost_usd": cost.get("usd"),
        "cost_estimated": bool(cost.get("estimated")),  # of summarization_tokens, and so of cost_usd
        "payback_turns": cost.get("payback_turns"),
    }


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """Log text (paths, ids, models, facts) without control sequences: the tables reach terminals too."""
    cleaned = clean_json(row)
    assert isinstance(cleaned, dict)
    return cleaned
