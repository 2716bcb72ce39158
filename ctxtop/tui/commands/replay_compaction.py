"""``ctxtop replay-compaction``: test a compaction prompt on a real trajectory.

The user's summarizer is run on the window compaction K replaced (the transcript as JSON on
stdin, see ``context/audit/forensics/candidate.py`` and the README), and its summary is
audited exactly like the real one: each rule's status, the facts lost, the unsupported
claims and the tokens, side by side. ``check --summarizer`` runs it on every compaction.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import orjson

from ctxtop.context.audit.forensics.candidate import compare, transcript
from ctxtop.context.audit.forensics.cost import NO_MODEL_CALL
from ctxtop.context.audit.run import CompactionAudit
from ctxtop.context.output.json_document import json_document
from ctxtop.context.output.marks import lost_count
from ctxtop.context.output.redact import redact
from ctxtop.context.sanitize import clean_json, one_line
from ctxtop.context.tracker import Tracker
from ctxtop.tui.arguments import command, positive_float, positive_int, whole_number
from ctxtop.tui.commands.summarizer import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, run_summarizer
from ctxtop.tui.errors import UsageError
from ctxtop.tui.output import write_output


def summarizer_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument("--summarizer", type=command, required=required, metavar="CMD",
                        help="command that reads the transcript (JSON) on stdin and prints a summary; run without a shell")
    parser.add_argument("--shell", action="store_true", help="run the summarizer command through /bin/sh")
    parser.add_argument("--summarizer-timeout", type=positive_float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit of one summarizer run (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--summarizer-max-bytes", type=positive_int, default=DEFAULT_MAX_BYTES, metavar="BYTES",
                        help=f"largest summary accepted on stdout (default {DEFAULT_MAX_BYTES:,})")


def build(parser_type: type[argparse.ArgumentParser], session_options: Callable[[argparse.ArgumentParser], None]) -> argparse.ArgumentParser:
    parser = parser_type(prog="ctxtop replay-compaction",
                         description="Run your summarizer on the window a compaction replaced and audit its summary like the real one.")
    session_options(parser)
    parser.add_argument("--compaction", type=whole_number, required=True, metavar="K", help="which compaction: 1 for the first")
    summarizer_options(parser, required=True)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    return parser


def replay(tracker: Tracker, audit: CompactionAudit, number: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run the summarizer on one compaction and compare its summary with the real one."""
    message = audit.event.message
    before, after = tracker.window_at(message - 1), tracker.window_at(audit.after_message)
    payload = orjson.dumps(transcript(before, message, number, tracker.session.model))
    summary = run_summarizer(args.summarizer, payload, shell=args.shell, timeout=args.summarizer_timeout,
                             max_bytes=args.summarizer_max_bytes)
    rules = [r for r in tracker.rules if r.first_stated is None or r.first_stated < message]
    result = compare(before, after, message, rules, summary, tracker.session.counter)
    result["candidate"]["summary"] = summary
    return {"compaction": number, "message": message, "summarizer": args.summarizer, **result}


def marked(tracker: Tracker) -> list[tuple[int, CompactionAudit]]:
    """The compactions a summarizer can be tried on, numbered from 1: not an implicit one, nor one that cut or
    cleared the history without a summary (``_no_summary``)."""
    return [(n, c) for n, c in enumerate(tracker.audit.compactions, 1) if _no_summary(c) is None]


def _no_summary(audit: CompactionAudit) -> str | None:
    """Why a summarizer has nothing to be compared with at this compaction (None: it has)."""
    kind = audit.event.kind
    if kind == "implicit":
        return "is implicit (a drop in reported usage): there is no window it replaced to replay"
    if kind in NO_MODEL_CALL:
        return f"is a {kind}: it cut or cleared the history with no summary, so there is none to replay"
    return None


def run(args: argparse.Namespace) -> int:
    from ctxtop.tui.cli import _open_tracker  # (the CLI imports this module)

    if args.summarizer_timeout <= 0 or args.summarizer_max_bytes <= 0:
        raise UsageError("--summarizer-timeout and --summarizer-max-bytes must be positive")
    tracker = _open_tracker(args)
    compactions = tracker.audit.compactions
    if not 1 <= args.compaction <= len(compactions):
        raise UsageError(f"--compaction must be between 1 and {len(compactions)} (the session has {len(compactions)} compaction(s))"
                         if compactions else "the session has no compaction to replay")
    audit = compactions[args.compaction - 1]
    why = _no_summary(audit)
    if why is not None:
        raise UsageError(f"compaction {args.compaction} {why}")
    result = _cleaned_dict(replay(tracker, audit, args.compaction, args))
    if args.redact:
        result = redact(result)
    if args.json:
        write_output(json_document(result), None)
    else:
        write_output("\n".join(side_by_side(result)) + "\n", None)
    return 0


def side_by_side(result: dict[str, Any]) -> list[str]:
    real, candidate = result["real"], result["candidate"]
    lines = [f"compaction {result['compaction']} at message {result['message']}: the real summary and "
             f"the one from {one_line(result['summarizer'], 80)!r}, audited alike", ""]
    rows = [["rule", "before", "real", "candidate"]]
    rows += [[one_line(cid, 40), status, real["constraints"][cid], candidate["constraints"][cid]] for cid, status in result["before"].items()]
    # (each kind's list stops at the audit's 50: "≥N" then, as the Markdown says it)
    rows.append(["facts lost", "", lost_count(real["lost_items"]), lost_count(candidate["lost_items"])])
    rows.append(["unsupported claims", "", str(len(real["unsupported_claims"])), str(len(candidate["unsupported_claims"]))])
    rows.append(["summary tokens", "", _tokens(real["tokens"]), _tokens(candidate["tokens"])])
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines += ["  ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[3]]).rstrip() for row in rows]
    for claim in candidate["unsupported_claims"]:
        lines.append(f"candidate claim: {one_line(claim['text'], 120)!r} — {claim['why']}")
    loses = result["candidate_loses"]
    lines += ["", f"the candidate loses {len(loses)} rule(s) the window held: {', '.join(one_line(c, 40) for c in loses)}"
              if loses else "the candidate keeps every rule the window held"]
    return lines


def _tokens(value: int | None) -> str:
    return f"{value:,}" if value is not None else "—"


def check_lines(tracker: Tracker, args: argparse.Namespace) -> tuple[list[str], list[dict[str, Any]]]:
    """``check --summarizer``: the summarizer on every compaction; a FAIL line for each that loses a rule."""
    lines, results = [], []
    for number, audit in marked(tracker):
        result = _cleaned_dict(replay(tracker, audit, number, args))
        results.append({"compaction": number, "message": result["message"], "candidate_loses": result["candidate_loses"],
                        "constraints": result["candidate"]["constraints"]})
        for cid in result["candidate_loses"]:
            lines.append(f"FAIL compaction at message {result['message']}: the candidate summary "
                         f"{result['candidate']['constraints'][cid]} [{one_line(cid, 40)}]")
    return lines, results


def _cleaned_dict(value: dict[str, Any]) -> dict[str, Any]:
    """Log text and the summarizer's output, without control sequences, even in JSON."""
    cleaned = clean_json(value)
    assert isinstance(cleaned, dict)
    return cleaned
